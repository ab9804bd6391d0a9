//! The seeded exchange: the sandbox user's two profiles ("default" and "Trading bot") funded by
//! deposits a month ago, a conversion and a withdrawal since, 300 days of hourly and 7 days of
//! minute candles, five minutes of the background market run before start-up (so the books,
//! tape and ticker are full), then the user's own orders placed through the engine: a filled
//! market buy, resting limit orders, a stop order and a pending withdrawal.

use std::collections::VecDeque;

use rust_decimal::prelude::ToPrimitive;
use rust_decimal::Decimal;
use rust_decimal_macros::dec;

use super::book::{Book, Side};
use super::catalog::{self, CURRENCIES, PRODUCTS};
use super::market::from_ticks;
use super::orders::NewOrder;
use super::state::{caps, Candle, Market, MarketSettings, State, StopKind, Wallet};
use super::transfers::Endpoint;
use crate::sandbox::rng::Rng;

const DAY_MS: i64 = 86_400_000;
/// How long the market runs before start-up, in steps of one second.
const WARM_UP_STEPS: i64 = 300;

/// The profile indexes the seed gives (the keys name them).
pub const DEFAULT_PROFILE: usize = 0;
pub const BOT_PROFILE: usize = 1;

pub fn seeded(seed: u64, anchor_ms: i64, settings: MarketSettings) -> State {
    let mut state = State::new(seed, settings);
    let user = state.add_user(false);
    let default = state.add_profile(user, "default", true, anchor_ms - 400 * DAY_MS);
    let bot = state.add_profile(user, "Trading bot", false, anchor_ms - 90 * DAY_MS);
    debug_assert_eq!((default, bot), (DEFAULT_PROFILE, BOT_PROFILE));
    for (currency, spec) in CURRENCIES.iter().enumerate() {
        let id = state.ids.uuid();
        let balance = Decimal::from(1_000_000) * spec.min_size.max(dec!(0.01)) * Decimal::from(1000);
        state.wallets.push(Wallet { id, currency, balance });
    }
    state.payment_method_id = state.ids.uuid();
    let mut rng = Rng::new(seed ^ 0x5EED_C0DE);
    let history_end_ms = anchor_ms - WARM_UP_STEPS * 1000;
    for spec in &PRODUCTS {
        let (minutes, hours, fair_ticks) = history(&mut rng, spec, history_end_ms);
        state.markets.push(Market {
            book: Book::default(),
            trades: VecDeque::new(),
            minutes,
            hours,
            fair_ticks,
            stops: Vec::new(),
            makers: VecDeque::new(),
            sequence: 0,
        });
    }
    fund_traders(&mut state);
    let month_ago = anchor_ms - 30 * DAY_MS;
    let deposits: [(usize, usize, Decimal); 10] = [
        (default, catalog::USD, dec!(100000)),
        (default, catalog::USDC, dec!(25000)),
        (default, catalog::BTC, dec!(2.5)),
        (default, catalog::ETH, dec!(30)),
        (default, catalog::SOL, dec!(400)),
        (default, catalog::LTC, dec!(150)),
        (default, catalog::DOGE, dec!(50000)),
        (default, catalog::USDT, dec!(10000)),
        (bot, catalog::USD, dec!(5000)),
        (bot, catalog::BTC, dec!(0.1)),
    ];
    for (i, (profile, currency, amount)) in deposits.into_iter().enumerate() {
        let wallet = state.wallets[currency].id.clone();
        let at = month_ago + i64::try_from(i).unwrap_or(0) * 60_000;
        let _ = state.deposit(profile, amount, currency, &Endpoint::Wallet(&wallet), at);
    }
    let _ = state.convert(default, catalog::USD, catalog::USDC, dec!(1000), None, anchor_ms - 10 * DAY_MS);
    let sent = Endpoint::Crypto {
        address: "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq",
        destination_tag: None,
        network: None,
        add_fee_to_total: false,
    };
    let _ = state.withdraw(default, dec!(0.05), catalog::BTC, &sent, None, anchor_ms - 2 * DAY_MS);
    state.complete_transfers(anchor_ms - 2 * DAY_MS + DAY_MS / 2);
    state.next_step_ms = history_end_ms;
    state.step_market_until(anchor_ms);
    seed_orders(&mut state, anchor_ms);
    let _ = state.withdraw(default, dec!(0.01), catalog::BTC, &sent, None, anchor_ms);
    state
}

/// The simulated traders: four users of their own, each with a profile funded deep enough to
/// keep every book full for weeks.
fn fund_traders(state: &mut State) {
    let funds: [(usize, Decimal); 8] = [
        (catalog::USD, dec!(50000000)),
        (catalog::USDC, dec!(1000000)),
        (catalog::BTC, dec!(500)),
        (catalog::ETH, dec!(10000)),
        (catalog::SOL, dec!(200000)),
        (catalog::LTC, dec!(100000)),
        (catalog::DOGE, dec!(100000000)),
        (catalog::USDT, dec!(10000000)),
    ];
    for n in 0..4 {
        let user = state.add_user(true);
        let profile = state.add_profile(user, &format!("market maker {}", n + 1), true, 0);
        for (currency, amount) in funds {
            let account = state.account_of(profile, currency);
            state.accounts[account].balance += amount;
            state.net_deposits[currency] += amount;
        }
    }
}

/// Seeded candles ending at `end_ms`: 7 days of minutes and 300 days of hours (the last 7 days
/// of hours summed from the minutes), walked back from the product's start price. Returns
/// them with the price they end at, in ticks.
fn history(rng: &mut Rng, spec: &catalog::ProductSpec, end_ms: i64) -> (VecDeque<Candle>, VecDeque<Candle>, i64) {
    let tick = spec.quote_increment;
    let start = (spec.start_price / tick).to_i64().unwrap_or(1).max(10);
    let lot_units = (spec.lot / spec.base_increment).to_i64().unwrap_or(1).max(1);
    let end_s = end_ms.div_euclid(1000);
    let last_minute = end_s - end_s.rem_euclid(60) - 60;
    let mut minutes = VecDeque::with_capacity(caps::MINUTE_CANDLES);
    let mut close = start;
    for i in 0..i64::try_from(caps::MINUTE_CANDLES).unwrap_or(0) {
        let candle = walk_back(rng, last_minute - i * 60, close, 12, lot_units * 20);
        close = candle.open;
        minutes.push_front(candle);
    }
    let mut hours: VecDeque<Candle> = VecDeque::with_capacity(caps::HOUR_CANDLES);
    for m in &minutes {
        let hour = m.start_s - m.start_s.rem_euclid(3600);
        match hours.back_mut() {
            Some(h) if h.start_s == hour => {
                h.high = h.high.max(m.high);
                h.low = h.low.min(m.low);
                h.close = m.close;
                h.volume = h.volume.saturating_add(m.volume);
            }
            _ => hours.push_back(Candle { start_s: hour, ..*m }),
        }
    }
    let mut close = minutes.front().map_or(start, |c| c.open);
    let first_hour = hours.front().map_or(end_s, |h| h.start_s);
    let older = caps::HOUR_CANDLES.saturating_sub(hours.len());
    for i in 1..=i64::try_from(older).unwrap_or(0) {
        let candle = walk_back(rng, first_hour - i * 3600, close, 90, lot_units * 1200);
        close = candle.open;
        hours.push_front(candle);
    }
    let _ = from_ticks;
    (minutes, hours, start)
}

/// One candle that closes at `close` (ticks), its open a random step before, with wicks and a
/// volume of up to `volume` base increments. `bp` is the largest step in basis points.
fn walk_back(rng: &mut Rng, start_s: i64, close: i64, bp: i64, volume: i64) -> Candle {
    let step = (close * rng.range(-bp, bp) / 10_000).clamp(-close / 2, close / 2);
    let open = (close - step).max(10);
    let wick = (close * rng.range(0, bp / 2 + 1) / 10_000).max(0);
    Candle {
        start_s,
        low: (open.min(close) - wick).max(1),
        high: open.max(close) + wick,
        open,
        close,
        volume: (volume * rng.range(1, 100) / 100).max(1),
    }
}

/// The user's orders at start-up, placed through the engine as a client would.
fn seed_orders(state: &mut State, now_ms: i64) {
    let btc = 0;
    let eth = 1;
    let sol = 2;
    let last = |state: &State, product: usize| state.last_price(product).unwrap_or(PRODUCTS[product].start_price);
    let around = |price: Decimal, percent: Decimal, product: usize| {
        let spec = &PRODUCTS[product];
        ((price * (Decimal::ONE + percent / dec!(100))) / spec.quote_increment).floor() * spec.quote_increment
    };
    let _ = state.place(DEFAULT_PROFILE, NewOrder::market(btc, Side::Buy, None, Some(dec!(5000))), now_ms);
    let btc_price = last(state, btc);
    let _ = state.place(
        DEFAULT_PROFILE,
        NewOrder::limit(btc, Side::Buy, around(btc_price, dec!(-3), btc), dec!(0.05)),
        now_ms,
    );
    let eth_price = last(state, eth);
    let _ = state.place(
        DEFAULT_PROFILE,
        NewOrder::limit(eth, Side::Sell, around(eth_price, dec!(4), eth), dec!(2)),
        now_ms,
    );
    let _ = state.place(
        DEFAULT_PROFILE,
        NewOrder::limit(eth, Side::Sell, around(eth_price, dec!(-1), eth), dec!(1.5)),
        now_ms,
    );
    let sol_price = last(state, sol);
    let post_only =
        NewOrder { post_only: true, ..NewOrder::limit(sol, Side::Buy, around(sol_price, dec!(-8), sol), dec!(20)) };
    let _ = state.place(DEFAULT_PROFILE, post_only, now_ms);
    let stop = NewOrder {
        stop: Some((StopKind::Loss, around(btc_price, dec!(-10), btc))),
        ..NewOrder::limit(btc, Side::Sell, around(btc_price, dec!(-10.5), btc), dec!(0.1))
    };
    let _ = state.place(DEFAULT_PROFILE, stop, now_ms);
    let _ =
        state.place(BOT_PROFILE, NewOrder::limit(btc, Side::Buy, around(btc_price, dec!(-5), btc), dec!(0.02)), now_ms);
}
