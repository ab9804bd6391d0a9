//! The engine's rules and its invariants. The property tests run random sequences of orders,
//! cancels, transfers and market steps (many seeds) and check after every step: no crossed
//! book, every hold exactly what its open orders and pending withdrawals need, balance =
//! available + hold and nothing negative, funds conserved per currency, and fills matching the
//! trades and the orders.
#![allow(clippy::unwrap_used, reason = "tests")]

use rust_decimal::Decimal;
use rust_decimal_macros::dec;

use super::book::Side;
use super::catalog::{self, PRODUCTS};
use super::orders::{needed_hold, NewOrder, MAX_FUNDS, MAX_PRICE, MAX_SIZE};
use super::seed::{self, BOT_PROFILE, DEFAULT_PROFILE};
use super::state::{caps, MarketSettings, State, Status, StopKind, Stp, Tif};
use super::transfers::{Endpoint, MAX_DEPOSIT};
use crate::sandbox::rng::Rng;

const T0: i64 = 1_790_000_000_000;
const BTC_USD: usize = 0;
const ETH_USD: usize = 1;

fn fresh(seed: u64) -> State {
    seed::seeded(seed, T0, MarketSettings { paused: false, rate: 1.0 })
}

/// Every invariant the exchange keeps; the first broken one, said.
fn check(state: &State) -> Result<(), String> {
    for (i, market) in state.markets.iter().enumerate() {
        if market.book.is_crossed() {
            return Err(format!("{} book crossed", PRODUCTS[i].id));
        }
        for side in [Side::Buy, Side::Sell] {
            for (price, queue) in market.book.levels(side) {
                for key in queue {
                    let order = state.orders.get(key).ok_or(format!("book holds unknown order {key}"))?;
                    if order.status != Status::Open || order.price != Some(price) || order.remaining().is_zero() {
                        return Err(format!("book holds order {} in status {:?}", order.id, order.status));
                    }
                }
            }
        }
    }
    let mut holds = vec![Decimal::ZERO; state.accounts.len()];
    for key in &state.open {
        let order = &state.orders[key];
        if order.hold != needed_hold(order) {
            return Err(format!("order {} holds {} but needs {}", order.id, order.hold, needed_hold(order)));
        }
        holds[state.hold_account(order)] += order.hold;
    }
    for key in &state.pending_transfers {
        let t = state.transfer(*key).ok_or("pending transfer gone")?;
        if t.hold_id.is_some() {
            holds[state.account_of(t.profile, t.currency)] += t.amount;
        }
    }
    for (i, account) in state.accounts.iter().enumerate() {
        if account.hold != holds[i] {
            return Err(format!("account {i} holds {} but its orders need {}", account.hold, holds[i]));
        }
        if account.balance < Decimal::ZERO || account.hold < Decimal::ZERO || account.available() < Decimal::ZERO {
            return Err(format!("account {i}: balance {} hold {}", account.balance, account.hold));
        }
        if account.balance.checked_add(state.incoming(i)).is_none_or(|b| b > caps::BALANCE) {
            return Err(format!(
                "account {i}: balance {} (and {} on its way) past the cap",
                account.balance,
                state.incoming(i)
            ));
        }
        if let Some(last) = account.ledger.back() {
            if last.balance != account.balance {
                return Err(format!("account {i}: ledger says {} but balance is {}", last.balance, account.balance));
            }
        }
        // Every movement is an entry: a real user's ledger adds up to the balance, entry by
        // entry (the simulated traders keep none).
        if state.keeps_records(account.profile) && account.ledger.len() < caps::LEDGER {
            let mut running = Decimal::ZERO;
            for entry in &account.ledger {
                running += entry.amount;
                if entry.balance != running {
                    return Err(format!(
                        "account {i}: ledger entry {} ({}) says balance {} but its entries add to {running}",
                        entry.id, entry.kind, entry.balance
                    ));
                }
            }
            if running != account.balance {
                return Err(format!("account {i}: ledger adds to {running} but balance is {}", account.balance));
            }
        }
    }
    for (i, profile) in state.profiles.iter().enumerate() {
        let window: Decimal = profile.fills.iter().skip(profile.window_start).map(|f| f.usd_volume).sum();
        if window != profile.volume_30d {
            return Err(format!("profile {i}: 30-day volume {} but its fills say {window}", profile.volume_30d));
        }
    }
    let totals = state.totals();
    for (c, total) in totals.iter().enumerate() {
        let expected = state.net_deposits[c] + state.net_conversions[c] - state.fees_collected[c];
        if *total != expected {
            return Err(format!(
                "{}: accounts hold {total} but deposits, conversions and fees say {expected}",
                catalog::CURRENCIES[c].id
            ));
        }
    }
    let trades: std::collections::HashMap<u64, &super::state::Trade> =
        state.markets.iter().flat_map(|m| m.trades.iter()).map(|t| (t.id, t)).collect();
    for profile in &state.profiles {
        for fill in &profile.fills {
            if let Some(trade) = trades.get(&fill.trade_id) {
                if trade.price != fill.price || trade.size != fill.size {
                    return Err(format!("fill {} differs from its trade", fill.trade_id));
                }
            }
        }
    }
    let mut filled: std::collections::HashMap<&str, Decimal> = std::collections::HashMap::new();
    for fill in state.profiles.iter().flat_map(|p| p.fills.iter()) {
        *filled.entry(fill.order_id.as_str()).or_default() += fill.size;
    }
    for order in state.orders.values().filter(|o| state.keeps_records(o.profile)) {
        let fills = filled.get(order.id.as_str()).copied().unwrap_or_default();
        if fills != order.filled_size {
            return Err(format!("order {} filled {} but its fills add to {fills}", order.id, order.filled_size));
        }
    }
    Ok(())
}

#[test]
fn the_seeded_exchange_keeps_every_invariant() {
    let state = fresh(42);
    check(&state).unwrap();
    assert!(state.markets.iter().all(|m| m.book.len() > 10 && m.trades.len() > 50), "books and tapes are full");
    let open_user_orders = state.open.iter().filter(|k| state.orders[k].profile == DEFAULT_PROFILE).count();
    assert!(open_user_orders >= 3, "{open_user_orders}");
    assert!(!state.profiles[DEFAULT_PROFILE].fills.is_empty(), "the seeded market buy filled");
    assert_eq!(state.pending_transfers.len(), 1, "one withdrawal waits for the network");
}

#[test]
fn the_same_seed_gives_the_same_market() {
    let (mut a, mut b) = (fresh(7), fresh(7));
    a.run_due(T0 + 60_000);
    b.run_due(T0 + 60_000);
    let tape = |s: &State| s.markets[BTC_USD].trades.iter().map(|t| (t.id, t.price, t.size)).collect::<Vec<_>>();
    assert_eq!(tape(&a), tape(&b));
    let c = fresh(8);
    assert_ne!(tape(&fresh(7)), tape(&c));
}

/// Random sequences of everything a user and the market do, with the invariants checked after
/// each step.
#[test]
fn random_sequences_keep_books_holds_and_funds_consistent() {
    let iterations: u64 = std::env::var("ENGINE_SEEDS").ok().and_then(|s| s.parse().ok()).unwrap_or(8);
    for seed in 0..iterations {
        let mut state = fresh(seed);
        let mut rng = Rng::new(seed.wrapping_mul(31) + 5);
        let mut now = T0;
        for step in 0..200 {
            now += rng.range(0, 1500);
            let product = usize::try_from(rng.below(PRODUCTS.len() as u64)).unwrap();
            let spec = &PRODUCTS[product];
            let last = state.last_price(product).unwrap_or(spec.start_price);
            let offset = Decimal::from(rng.range(-40, 40)) / dec!(1000);
            let price = ((last * (Decimal::ONE + offset)) / spec.quote_increment).floor() * spec.quote_increment;
            let size = spec.lot * Decimal::from(rng.range(1, 30)) / dec!(10);
            let size = (size / spec.base_increment).floor() * spec.base_increment;
            let side = if rng.chance(50) { Side::Buy } else { Side::Sell };
            let profile = if rng.chance(80) { DEFAULT_PROFILE } else { BOT_PROFILE };
            let stp = *rng.pick(&[Stp::DecreaseCancel, Stp::CancelOldest, Stp::CancelNewest, Stp::CancelBoth]);
            let tif = *rng.pick(&[Tif::Gtc, Tif::Gtc, Tif::Ioc, Tif::Fok, Tif::Gtt]);
            let action = rng.below(15);
            let before = (state.totals(), state.open.len());
            let result = match action {
                0..=3 => {
                    let order = NewOrder {
                        stp,
                        tif,
                        cancel_after: (tif == Tif::Gtt).then_some("min"),
                        post_only: tif == Tif::Gtc && rng.chance(20),
                        ..NewOrder::limit(product, side, price, size)
                    };
                    state.place(profile, order, now).map(|_| ())
                }
                4 => {
                    let by_funds = rng.chance(50) && side == Side::Buy;
                    let order = if by_funds {
                        NewOrder::market(
                            product,
                            side,
                            None,
                            Some((price * size / spec.quote_increment).floor() * spec.quote_increment),
                        )
                    } else {
                        NewOrder::market(product, side, Some(size), None)
                    };
                    state.place(profile, NewOrder { stp, ..order }, now).map(|_| ())
                }
                5 => {
                    let kind = if rng.chance(50) { StopKind::Loss } else { StopKind::Entry };
                    let order = NewOrder { stop: Some((kind, price)), ..NewOrder::limit(product, side, price, size) };
                    state.place(profile, order, now).map(|_| ())
                }
                6 => {
                    let mine: Vec<u64> =
                        state.open.iter().copied().filter(|k| state.orders[k].profile == profile).collect();
                    match mine.get(usize::try_from(rng.below(mine.len().max(1) as u64)).unwrap()) {
                        Some(key) => {
                            let id = state.orders[key].id.clone();
                            state.cancel(profile, &id, None, now).map(|_| ())
                        }
                        None => Ok(()),
                    }
                }
                7 => {
                    let only = rng.chance(50).then_some(product);
                    state.cancel_all(profile, only, now);
                    Ok(())
                }
                8 => {
                    let to = Endpoint::Crypto {
                        address: "0x52908400098527886E0F7030069857D2E4169EE7",
                        destination_tag: None,
                        network: None,
                        add_fee_to_total: rng.chance(50),
                    };
                    state.withdraw(profile, dec!(0.5), catalog::ETH, &to, None, now).map(|_| ())
                }
                10 => {
                    let currency = *rng.pick(&[catalog::USD, catalog::BTC, catalog::ETH]);
                    let amount = *rng.pick(&[dec!(1), dec!(25), dec!(0.5)]);
                    let (wallet, bank) = (state.wallets[currency].id.clone(), state.payment_method_id.clone());
                    let from = if rng.chance(50) { Endpoint::Wallet(&wallet) } else { Endpoint::Bank(&bank) };
                    state.deposit(profile, amount, currency, &from, now).map(|_| ())
                }
                11 => {
                    let (from, to) =
                        if rng.chance(50) { (catalog::USD, catalog::USDC) } else { (catalog::USDC, catalog::USD) };
                    let small = Decimal::from(rng.range(1, 400));
                    let amount = if rng.chance(90) { small } else { *rng.pick(&[caps::BALANCE, Decimal::MAX]) };
                    state.convert(profile, from, to, amount, None, now).map(|_| ())
                }
                // An order with one figure at, just past, or far past its bound.
                12 => {
                    let tick = spec.quote_increment;
                    let unit = spec.base_increment;
                    let prices = [price, MAX_PRICE, MAX_PRICE + tick, Decimal::MAX, nines()];
                    let sizes = [size, MAX_SIZE, MAX_SIZE + unit, Decimal::MAX, nines()];
                    let funds = [dec!(10.00), MAX_FUNDS, MAX_FUNDS + dec!(0.01), Decimal::MAX];
                    let (p, z, f) = (*rng.pick(&prices), *rng.pick(&sizes), *rng.pick(&funds));
                    let (order, outlandish) = match rng.below(4) {
                        0 => (NewOrder { stp, ..NewOrder::limit(product, side, p, size) }, p > MAX_PRICE),
                        1 => (NewOrder { stp, ..NewOrder::limit(product, side, price, z) }, z > MAX_SIZE),
                        2 => (
                            NewOrder { stop: Some((StopKind::Loss, p)), ..NewOrder::limit(product, side, price, size) },
                            p > MAX_PRICE,
                        ),
                        _ => (NewOrder::market(product, side, None, Some(f)), f > MAX_FUNDS),
                    };
                    let result = state.place(profile, order, now).map(|_| ());
                    assert!(
                        !outlandish || result.is_err(),
                        "seed {seed}, step {step}: an order past a bound was taken"
                    );
                    result
                }
                // Deposits at or past the largest, up to the balance cap and past it.
                13 => {
                    let bank = state.payment_method_id.clone();
                    let amount = *rng.pick(&[MAX_DEPOSIT, MAX_DEPOSIT + dec!(0.01), Decimal::MAX]);
                    state.deposit(profile, amount, catalog::USD, &Endpoint::Bank(&bank), now).map(|_| ())
                }
                14 => {
                    // Fill USD to the cap: the deposit that would pass it is refused.
                    let bank = state.payment_method_id.clone();
                    let mut result = Ok(());
                    for _ in 0..1_100 {
                        result =
                            state.deposit(profile, MAX_DEPOSIT, catalog::USD, &Endpoint::Bank(&bank), now).map(|_| ());
                        if result.is_err() {
                            break;
                        }
                    }
                    assert!(result.is_err(), "seed {seed}, step {step}: the cap stops deposits");
                    Ok(())
                }
                _ => {
                    state.run_due(now + rng.range(0, 120_000));
                    now = state.next_step_ms.max(now);
                    Ok(())
                }
            };
            if result.is_err() {
                assert_eq!((state.totals(), state.open.len()), before, "a refused request changed nothing");
            }
            state.run_due(now);
            if let Err(broken) = check(&state) {
                panic!("seed {seed}, step {step} (action {action}): {broken}");
            }
            // Every answer still reads after a figure at or past a bound (and now and then).
            if action >= 12 || step % 25 == 0 {
                render_everything(&state);
            }
        }
    }
}

#[test]
fn price_time_priority_and_maker_taker_fees() {
    let mut state = fresh(1);
    state.settings.paused = true;
    empty_book(&mut state, BTC_USD);
    let p = dec!(50000.00);
    // Two resting sells at the same price from two traders of the bot, then one buy takes both:
    // the older first.
    let first = state.place(BOT_PROFILE, NewOrder::limit(BTC_USD, Side::Sell, p, dec!(0.01)), T0).unwrap();
    let second = state.place(BOT_PROFILE, NewOrder::limit(BTC_USD, Side::Sell, p, dec!(0.01)), T0 + 1).unwrap();
    assert_eq!(state.orders[&first].status, Status::Open);
    let _ = second;
    // The bot and the default profile are one user: a buy from default would self-trade. Use a
    // buy from a simulated trader instead, and check the bot's maker fill.
    let trader = (0..state.profiles.len()).find(|p| !state.keeps_records(*p)).unwrap();
    let usd_before = state.account(BOT_PROFILE, catalog::USD).balance;
    state.place(trader, NewOrder::limit(BTC_USD, Side::Buy, p, dec!(0.015)), T0 + 2).unwrap();
    assert_eq!(state.orders[&first].filled_size, dec!(0.01), "the older order fills first");
    assert_eq!(state.orders[&second].filled_size, dec!(0.005));
    let maker_rate = state.orders[&second].maker_rate;
    let value = p * dec!(0.015);
    assert_eq!(state.account(BOT_PROFILE, catalog::USD).balance - usd_before, value - value * maker_rate);
    assert!(state.profiles[BOT_PROFILE].fills.iter().all(|f| f.liquidity == 'M'));
    check(&state).unwrap();
}

#[test]
fn post_only_ioc_fok_and_gtt_behave_as_documented() {
    let mut state = fresh(2);
    state.settings.paused = true;
    let ask = state.markets[BTC_USD].book.best_ask().unwrap();
    let bid = state.markets[BTC_USD].book.best_bid().unwrap();
    let crossing = NewOrder { post_only: true, ..NewOrder::limit(BTC_USD, Side::Buy, ask, dec!(0.01)) };
    let key = state.place(DEFAULT_PROFILE, crossing, T0).unwrap();
    assert_eq!(state.orders[&key].status, Status::Rejected);
    assert_eq!(state.orders[&key].reject_reason, Some("post only"));
    assert_eq!(state.account(DEFAULT_PROFILE, catalog::USD).hold, needed_user_holds(&state, catalog::USD));

    // IOC below the ask: nothing fills, it is cancelled and purged (a GET answers 404).
    let ioc = NewOrder { tif: Tif::Ioc, ..NewOrder::limit(BTC_USD, Side::Buy, bid, dec!(0.01)) };
    let key = state.place(DEFAULT_PROFILE, ioc, T0).unwrap();
    assert!(!state.orders.contains_key(&key));

    // FOK: all or nothing against what others rest.
    empty_book(&mut state, BTC_USD);
    let trader = (0..state.profiles.len()).find(|p| !state.keeps_records(*p)).unwrap();
    state.place(trader, NewOrder::limit(BTC_USD, Side::Buy, dec!(90000.00), dec!(0.5)), T0).unwrap();
    let trades = state.markets[BTC_USD].trades.len();
    let too_big = NewOrder { tif: Tif::Fok, ..NewOrder::limit(BTC_USD, Side::Sell, dec!(90000.00), dec!(1.0)) };
    state.place(DEFAULT_PROFILE, too_big, T0).unwrap();
    assert_eq!(state.markets[BTC_USD].trades.len(), trades, "a FOK that cannot fill whole trades nothing");
    let fits = NewOrder { tif: Tif::Fok, ..NewOrder::limit(BTC_USD, Side::Sell, dec!(90000.00), dec!(0.5)) };
    let key = state.place(DEFAULT_PROFILE, fits, T0).unwrap();
    assert_eq!(state.orders[&key].filled_size, dec!(0.5));
    assert_eq!(state.orders[&key].done_reason, Some("filled"));

    // GTT with cancel_after=min: cancelled a minute later by the clock.
    let gtt = NewOrder {
        tif: Tif::Gtt,
        cancel_after: Some("min"),
        ..NewOrder::limit(BTC_USD, Side::Buy, bid - dec!(100), dec!(0.01))
    };
    let key = state.place(DEFAULT_PROFILE, gtt, T0).unwrap();
    assert_eq!(state.orders[&key].status, Status::Open);
    state.run_due(T0 + 59_000);
    assert_eq!(state.orders[&key].status, Status::Open);
    state.run_due(T0 + 61_000);
    assert!(!state.orders.contains_key(&key), "expired with no fills: purged");
    check(&state).unwrap();
}

/// Cancels every order on `product`, so a test sets the book up itself.
fn empty_book(state: &mut State, product: usize) {
    let keys: Vec<u64> = state.open.iter().copied().filter(|k| state.orders[k].product == product).collect();
    for key in keys {
        state.finish(key, "canceled", T0);
    }
}

/// 28 nines, a point and 28 nines, as the exchange's JSON parser reads it.
fn nines() -> Decimal {
    super::orders::decimal_field(
        &serde_json::from_str(r#"{"price": "9999999999999999999999999999.9999999999999999999999999999"}"#).unwrap(),
        "price",
    )
    .unwrap()
    .unwrap()
}

/// Every answer the state can give, rendered as the wire writes it: none may panic.
fn render_everything(state: &State) {
    for account in &state.accounts {
        super::wire::account(state, account);
        for entry in account.ledger.iter().rev().take(20) {
            super::wire::ledger(state, entry);
        }
    }
    // The simulated traders' orders are the book's; its level 3 reads them.
    for order in state.orders.values().filter(|o| state.keeps_records(o.profile)) {
        super::wire::order(state, order);
        super::wire::order_received(state, order);
    }
    for (p, profile) in state.profiles.iter().enumerate() {
        for fill in &profile.fills {
            super::wire::fill(state, p, fill);
        }
    }
    for (product, spec) in PRODUCTS.iter().enumerate() {
        for level in 1..=3 {
            super::book_json(state, product, level, T0);
        }
        super::wire::stats(spec, &state.stats(product, T0));
        let market = &state.markets[product];
        for candle in market.minutes.iter().rev().take(5) {
            super::wire::candle(spec, candle);
        }
        for trade in market.trades.iter().rev().take(5) {
            super::wire::trade(spec, trade);
        }
    }
    for transfer in &state.transfers {
        super::wire::transfer(state, transfer);
        super::wire::transfer_receipt(transfer);
    }
    super::market_settings(state);
}

fn needed_user_holds(state: &State, currency: usize) -> Decimal {
    let account = state.account_of(DEFAULT_PROFILE, currency);
    let orders: Decimal =
        state.open.iter().map(|k| &state.orders[k]).filter(|o| state.hold_account(o) == account).map(|o| o.hold).sum();
    let transfers: Decimal = state
        .pending_transfers
        .iter()
        .filter_map(|k| state.transfer(*k))
        .filter(|t| state.account_of(t.profile, t.currency) == account)
        .map(|t| t.amount)
        .sum();
    orders + transfers
}

#[test]
fn self_trade_prevention_modes() {
    for (stp, maker_left, taker_done) in [
        (Stp::DecreaseCancel, Some(dec!(0.02)), true),
        (Stp::CancelOldest, None, false),
        (Stp::CancelNewest, Some(dec!(0.03)), true),
        (Stp::CancelBoth, None, true),
    ] {
        let mut state = fresh(3);
        state.settings.paused = true;
        let ask = state.markets[ETH_USD].book.best_ask().unwrap();
        let p = ask - dec!(0.01);
        let maker = state.place(DEFAULT_PROFILE, NewOrder::limit(ETH_USD, Side::Sell, p, dec!(0.03)), T0).unwrap();
        let taker = NewOrder { stp, ..NewOrder::limit(ETH_USD, Side::Buy, p, dec!(0.01)) };
        let taker = state.place(BOT_PROFILE, taker, T0 + 1).unwrap();
        let maker_now = state.orders.get(&maker).filter(|o| o.is_open()).map(|o| o.remaining());
        assert_eq!(maker_now, maker_left, "{stp:?}: the resting order");
        let taker_open = state.orders.get(&taker).is_some_and(|o| o.is_open());
        assert_eq!(!taker_open, taker_done, "{stp:?}: the new order");
        assert!(
            state.profiles[DEFAULT_PROFILE]
                .fills
                .iter()
                .all(|f| f.order_id != state.orders.get(&maker).map_or(String::new(), |o| o.id.clone())),
            "{stp:?}: no self trade"
        );
        check(&state).unwrap();
    }
}

#[test]
fn stop_orders_wait_for_the_last_trade_then_trade() {
    let mut state = fresh(4);
    state.settings.paused = true;
    let last = state.last_price(ETH_USD).unwrap();
    let above = last + dec!(5.00);
    let stop = NewOrder {
        stop: Some((StopKind::Entry, above)),
        ..NewOrder::limit(ETH_USD, Side::Buy, above + dec!(50), dec!(0.1))
    };
    let key = state.place(DEFAULT_PROFILE, stop, T0).unwrap();
    assert_eq!(state.orders[&key].status, Status::Active);
    assert!(state.account(DEFAULT_PROFILE, catalog::USD).hold >= (above + dec!(50)) * dec!(0.1));
    // A trader buys up through the stop price: the stop triggers and buys.
    let trader = (0..state.profiles.len()).find(|p| !state.keeps_records(*p)).unwrap();
    let other = (0..state.profiles.len()).rfind(|p| !state.keeps_records(*p)).unwrap();
    state.place(other, NewOrder::limit(ETH_USD, Side::Sell, above, dec!(1)), T0 + 1).unwrap();
    state.place(other, NewOrder::limit(ETH_USD, Side::Sell, above + dec!(1), dec!(1)), T0 + 1).unwrap();
    let sweep = NewOrder { stp: Stp::CancelOldest, ..NewOrder::market(ETH_USD, Side::Buy, None, Some(dec!(1000000))) };
    state.place(trader, sweep, T0 + 2).unwrap();
    assert!(state.last_price(ETH_USD).unwrap() >= above, "the sweep traded through the stop price");
    let order = state.orders.get(&key).unwrap();
    assert!(order.filled_size > Decimal::ZERO || order.status == Status::Open, "{:?}", order.status);
    check(&state).unwrap();
}

#[test]
fn refused_orders_say_why_and_change_nothing() {
    let mut state = fresh(5);
    state.settings.paused = true;
    let before = (state.totals(), state.open.len(), state.account(DEFAULT_PROFILE, catalog::USD).hold);
    let cases = [
        (
            NewOrder::limit(BTC_USD, Side::Buy, dec!(100.001), dec!(0.1)),
            "price is too accurate. Smallest unit is 0.01000000",
        ),
        (
            NewOrder::limit(BTC_USD, Side::Buy, dec!(100.00), dec!(0.123456789)),
            "size is too accurate. Smallest unit is 0.00000001",
        ),
        (
            NewOrder::limit(BTC_USD, Side::Buy, dec!(100.00), dec!(0.001)),
            "size is too small. Minimum size is 0.01000000",
        ),
        (NewOrder::limit(BTC_USD, Side::Buy, dec!(90000.00), dec!(50)), "Insufficient funds"),
        (NewOrder::limit(BTC_USD, Side::Sell, dec!(90000.00), dec!(500)), "Insufficient funds"),
        (
            NewOrder::market(BTC_USD, Side::Buy, None, Some(dec!(0.5))),
            "funds is too small. Minimum funds is 1.00000000",
        ),
        (
            NewOrder { post_only: true, tif: Tif::Ioc, ..NewOrder::limit(BTC_USD, Side::Buy, dec!(100.00), dec!(0.1)) },
            "post_only is invalid with time_in_force IOC or FOK",
        ),
        (
            NewOrder { cancel_after: Some("min"), ..NewOrder::limit(BTC_USD, Side::Buy, dec!(100.00), dec!(0.1)) },
            "cancel_after requires time_in_force GTT",
        ),
    ];
    for (order, message) in cases {
        let err = state.place(DEFAULT_PROFILE, order, T0).unwrap_err();
        assert_eq!(err.message, message);
        assert_eq!(err.status.as_u16(), 400);
    }
    assert_eq!((state.totals(), state.open.len(), state.account(DEFAULT_PROFILE, catalog::USD).hold), before);
    // A done order cannot be cancelled; an unknown one is NotFound.
    let filled =
        state.orders.values().find(|o| o.profile == DEFAULT_PROFILE && o.status == Status::Done).unwrap().id.clone();
    assert_eq!(state.cancel(DEFAULT_PROFILE, &filled, None, T0).unwrap_err().message, "Order already done");
    assert_eq!(
        state.cancel(DEFAULT_PROFILE, "6f1ee6a4-8c3a-4d8c-9e51-4a3b7e0d2c11", None, T0).unwrap_err().message,
        "NotFound"
    );
    assert_eq!(state.cancel(DEFAULT_PROFILE, "nope", None, T0).unwrap_err().message, "Invalid order id");
}

#[test]
fn withdrawals_hold_then_complete_on_the_clock_and_addresses_are_checked() {
    let mut state = fresh(6);
    state.settings.paused = true;
    let bad = Endpoint::Crypto { address: "0x1234", destination_tag: None, network: None, add_fee_to_total: false };
    assert_eq!(
        state.withdraw(DEFAULT_PROFILE, dec!(1), catalog::ETH, &bad, None, T0).unwrap_err().message,
        "invalid crypto_address"
    );
    let good = Endpoint::Crypto {
        address: "0x52908400098527886E0F7030069857D2E4169EE7",
        destination_tag: None,
        network: None,
        add_fee_to_total: true,
    };
    let eth_before = state.account(DEFAULT_PROFILE, catalog::ETH).balance;
    let held_before = state.account(DEFAULT_PROFILE, catalog::ETH).hold;
    let key = state.withdraw(DEFAULT_PROFILE, dec!(1), catalog::ETH, &good, Some("n-1"), T0).unwrap();
    assert_eq!(
        state.withdraw(DEFAULT_PROFILE, dec!(1), catalog::ETH, &good, Some("n-1"), T0).unwrap(),
        key,
        "the nonce makes it idempotent"
    );
    let fee = catalog::CURRENCIES[catalog::ETH].network_fee;
    assert_eq!(state.account(DEFAULT_PROFILE, catalog::ETH).hold - held_before, dec!(1) + fee);
    assert!(!state.transfer(key).unwrap().completed);
    state.run_due(T0 + 5 * 60_000);
    assert!(state.transfer(key).unwrap().completed);
    assert_eq!(state.account(DEFAULT_PROFILE, catalog::ETH).balance, eth_before - dec!(1) - fee);
    assert_eq!(state.account(DEFAULT_PROFILE, catalog::ETH).hold, held_before);
    // USD cannot go to a crypto address; conversions are USD↔USDC only.
    let usd = Endpoint::Crypto {
        address: "0x52908400098527886E0F7030069857D2E4169EE7",
        destination_tag: None,
        network: None,
        add_fee_to_total: false,
    };
    assert!(state.withdraw(DEFAULT_PROFILE, dec!(1), catalog::USD, &usd, None, T0).is_err());
    assert!(state.convert(DEFAULT_PROFILE, catalog::USD, catalog::BTC, dec!(1), None, T0).is_err());
    state.convert(DEFAULT_PROFILE, catalog::USDC, catalog::USD, dec!(10.50), None, T0).unwrap();
    check(&state).unwrap();
}

#[test]
fn candles_sum_minutes_into_buckets_and_refuse_over_300() {
    let state = fresh(9);
    let now_s = T0 / 1000;
    let hourly = state.candles(BTC_USD, 3600, now_s - 3600 * 10, now_s).unwrap();
    assert!(hourly.len() >= 9 && hourly.windows(2).all(|w| w[0].start_s > w[1].start_s), "newest first");
    let from = now_s - now_s.rem_euclid(300) - 3600;
    let fives = state.candles(BTC_USD, 300, from, now_s).unwrap();
    let minutes = state.candles(BTC_USD, 60, from, now_s).unwrap();
    let volume = |c: &[super::state::Candle]| c.iter().map(|c| c.volume).sum::<i64>();
    assert_eq!(volume(&fives), volume(&minutes), "the same trades, bucketed differently");
    assert!(state.candles(BTC_USD, 86400, now_s - 86400 * 299, now_s).is_ok());
    let err = state.candles(BTC_USD, 60, now_s - 60 * 301, now_s).unwrap_err();
    assert!(err.message.contains("exceeds 300"), "{}", err.message);
    assert_eq!(state.candles(BTC_USD, 120, now_s - 600, now_s).unwrap_err().message, "Unsupported granularity");
}

#[test]
fn candles_answer_at_most_300_rows_when_the_span_is_exactly_300_granules() {
    let state = fresh(9);
    let now_s = T0 / 1000 + 30; // not on a minute boundary, as "now" seldom is
    let minutes = state.candles(BTC_USD, 60, now_s - 60 * 300, now_s).unwrap();
    assert_eq!(minutes.len(), 300, "301 buckets touched, 300 answered");
    assert!(minutes[0].start_s > now_s - 60, "the newest bucket is kept");
}

#[test]
fn the_market_moves_and_fills_a_resting_order_when_the_price_reaches_it() {
    let mut state = fresh(10);
    let bid = state.markets[BTC_USD].book.best_bid().unwrap();
    let key = state.place(DEFAULT_PROFILE, NewOrder::limit(BTC_USD, Side::Buy, bid, dec!(0.001)), T0).unwrap();
    let mut now = T0;
    while state.orders.get(&key).is_some_and(|o| o.filled_size.is_zero()) && now < T0 + 3_600_000 {
        now += 10_000;
        state.run_due(now);
    }
    assert!(
        state.orders.get(&key).is_some_and(|o| o.filled_size > Decimal::ZERO),
        "filled by the market within an hour"
    );
    check(&state).unwrap();
}

#[test]
fn deposit_addresses_have_the_form_withdrawals_accept() {
    let mut ids = crate::sandbox::ids::Ids::new(1, 2);
    for network in ["bitcoin", "ethereum", "solana", "litecoin", "dogecoin"] {
        let address = super::deposit_address(network, &mut ids);
        assert!(catalog::address_fits(network, &address), "{network}: {address}");
    }
}

#[test]
fn the_fee_tier_follows_the_last_thirty_days_of_volume() {
    let mut state = fresh(11);
    state.settings.paused = true;
    state.slide_volume_windows(T0);
    let seeded = state.usd_volume(DEFAULT_PROFILE);
    assert!(seeded > dec!(10000) && seeded < dec!(50000), "the seeded trades: {seeded}");
    assert_eq!(state.fee_rates(DEFAULT_PROFILE), (dec!(0.0025), dec!(0.0040)), "$10k to $50k: the second tier");
    state.place(DEFAULT_PROFILE, NewOrder::market(BTC_USD, Side::Buy, None, Some(dec!(45000.00))), T0).unwrap();
    state.slide_volume_windows(T0);
    assert!(state.usd_volume(BOT_PROFILE) > dec!(50000), "the volume is the user's, every profile");
    assert_eq!(state.fee_rates(DEFAULT_PROFILE), (dec!(0.0015), dec!(0.0025)));
    let key = state.place(DEFAULT_PROFILE, NewOrder::limit(BTC_USD, Side::Buy, dec!(1000.00), dec!(0.01)), T0).unwrap();
    assert_eq!(state.orders[&key].taker_rate, dec!(0.0025), "a new order takes the new tier");
    state.slide_volume_windows(T0 + 31 * 86_400_000);
    assert_eq!(state.fee_rates(DEFAULT_PROFILE), (dec!(0.0040), dec!(0.0060)), "31 days later the volume has aged out");
    check(&state).unwrap();
}

#[test]
fn a_stop_order_is_a_limit_order_with_a_stop_and_type_stop_is_refused() {
    let body = |text: &str| serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(text).unwrap();
    let refused = super::orders::parse(&body(
        r#"{"product_id":"BTC-USD","side":"sell","type":"stop","price":"100.00","size":"0.1","stop":"loss","stop_price":"100.00"}"#,
    ))
    .unwrap_err();
    assert_eq!((refused.status.as_u16(), refused.message.as_str()), (400, "Invalid order_type stop"));
    let market = super::orders::parse(&body(
        r#"{"product_id":"BTC-USD","side":"sell","type":"market","size":"0.1","stop":"loss","stop_price":"100.00"}"#,
    ))
    .unwrap_err();
    assert_eq!(market.message, "Invalid order_type market");
    let stop = super::orders::parse(&body(
        r#"{"product_id":"BTC-USD","side":"sell","type":"limit","price":"100.00","size":"0.1","stop":"loss","stop_price":"100.00"}"#,
    ))
    .unwrap();
    assert_eq!((stop.order_type, stop.stop), ("limit", Some((StopKind::Loss, dec!(100.00)))));
}

#[test]
fn a_deposit_past_what_a_decimal_holds_is_refused_and_changes_nothing() {
    let mut state = fresh(12);
    let bank = state.payment_method_id.clone();
    let before = (state.totals(), state.transfers.len());
    let huge = Decimal::MAX - dec!(1);
    let err = state.deposit(DEFAULT_PROFILE, huge, catalog::USD, &Endpoint::Bank(&bank), T0).unwrap_err();
    assert!(err.message.contains("deposit limit"), "{}", err.message);
    assert_eq!((state.totals(), state.transfers.len()), before);
    state.deposit(DEFAULT_PROFILE, dec!(1000000000000), catalog::USD, &Endpoint::Bank(&bank), T0).unwrap();
    state.run_due(T0 + 10 * 60_000);
    check(&state).unwrap();
}

/// The seeded balances come from seeded deposits, and a crypto withdrawal's network fee is an
/// entry of its own beside what left for the address: the ledger tells every movement.
#[test]
fn seeded_balances_start_with_deposits_and_a_withdrawal_fee_is_its_own_entry() {
    let state = fresh(3);
    for currency in 0..catalog::CURRENCIES.len() {
        let account = state.account(DEFAULT_PROFILE, currency);
        if account.balance.is_zero() {
            continue;
        }
        let first = account.ledger.front().unwrap();
        let deposit = matches!(&first.details, super::state::Details::Transfer { transfer_type: "deposit", .. });
        assert!(
            first.kind == "transfer" && deposit,
            "{}: first entry {}",
            catalog::CURRENCIES[currency].id,
            first.kind
        );
    }
    let btc = state.account(DEFAULT_PROFILE, catalog::BTC);
    let fee = catalog::CURRENCIES[catalog::BTC].network_fee;
    let withdrawal: Vec<(&str, Decimal)> = btc
        .ledger
        .iter()
        .filter(|e| matches!(&e.details, super::state::Details::Transfer { transfer_type: "withdraw", .. }))
        .map(|e| (e.kind, e.amount))
        .collect();
    assert_eq!(withdrawal, vec![("transfer", fee - dec!(0.05)), ("fee", -fee)], "the seeded 0.05 BTC withdrawal");
    check(&state).unwrap();
}

/// Requests through the real router, signed as an SDK signs them.
mod http {
    use axum::body::{to_bytes, Body};
    use axum::http::Request;
    use axum::Router;
    use serde_json::Value;
    use tower::ServiceExt;

    use super::super::{sign, CoinbaseSimulator};
    use crate::sandbox::credentials::{COINBASE_KEY, COINBASE_PASSPHRASE, COINBASE_SECRET};
    use crate::sandbox::{clock, Platform, SandboxClock, Simulator};

    /// A simulator with its background market paused, so what a test does is all that happens,
    /// and its clock, which the test moves.
    pub async fn simulator(seed: u64) -> (CoinbaseSimulator, Router, SandboxClock) {
        let sandbox_clock = SandboxClock::starting_at(super::T0, 1.0).unwrap();
        let sim = CoinbaseSimulator::new(&Platform::new(seed, sandbox_clock.clone()));
        let control = sim.control_router().unwrap();
        let pause = Request::post("/market").body(Body::from(r#"{"paused":true}"#)).unwrap();
        assert_eq!(control.oneshot(pause).await.unwrap().status(), 200);
        let router = sim.router();
        (sim, router, sandbox_clock)
    }

    /// The control port's `GET /market`: the settings and the funds audit.
    pub async fn market(sim: &CoinbaseSimulator) -> Value {
        let control = sim.control_router().unwrap();
        let response = control.oneshot(Request::get("/market").body(Body::empty()).unwrap()).await.unwrap();
        assert_eq!(response.status(), 200);
        serde_json::from_slice(&to_bytes(response.into_body(), usize::MAX).await.unwrap()).unwrap()
    }

    /// Sends a signed request; the status and the JSON answer.
    pub async fn send(router: &Router, method: &str, path_and_query: &str, body: Option<&Value>) -> (u16, Value) {
        let body = body.map(Value::to_string).unwrap_or_default();
        #[expect(clippy::cast_precision_loss, reason = "ms since the epoch fit an f64")]
        let timestamp = format!("{:.3}", clock::wall_ms() as f64 / 1000.0);
        let signature = sign(COINBASE_SECRET, &timestamp, method, path_and_query, body.as_bytes()).unwrap();
        let request = Request::builder()
            .method(method)
            .uri(path_and_query)
            .header("cb-access-key", COINBASE_KEY)
            .header("cb-access-passphrase", COINBASE_PASSPHRASE)
            .header("cb-access-timestamp", timestamp)
            .header("cb-access-sign", signature)
            .header("content-type", "application/json")
            .body(Body::from(body))
            .unwrap();
        let response = router.clone().oneshot(request).await.unwrap();
        let status = response.status().as_u16();
        let bytes = to_bytes(response.into_body(), usize::MAX).await.unwrap();
        (status, serde_json::from_slice(&bytes).unwrap_or(Value::Null))
    }
}

/// Prices and stop prices past any real one (`Decimal::MAX`; 28 nines, a point and 28 nines)
/// are refused with a 400 saying the largest allowed, store nothing, and every list still
/// answers.
#[tokio::test]
async fn prices_past_the_maximum_are_refused_and_store_nothing() {
    let (_sim, router, _) = http::simulator(21).await;
    let nines = "9999999999999999999999999999.9999999999999999999999999999";
    let max = "79228162514264337593543950335";
    let (status, before) = http::send(&router, "GET", "/orders?status=open", None).await;
    assert_eq!(status, 200, "{before}");
    for huge in [max, nines] {
        for side in ["buy", "sell"] {
            let order = serde_json::json!({"product_id": "BTC-USD", "side": side, "price": huge, "size": "0.01"});
            let (status, body) = http::send(&router, "POST", "/orders", Some(&order)).await;
            assert_eq!(status, 400, "{side} at {huge}: {body}");
            let message = body["message"].as_str().unwrap();
            assert!(message.starts_with("price is too large. Maximum price is "), "{message}");
            let stop = serde_json::json!({"product_id": "BTC-USD", "side": side, "price": "100.00", "size": "0.01",
                "stop": "loss", "stop_price": huge});
            let (status, body) = http::send(&router, "POST", "/orders", Some(&stop)).await;
            assert_eq!(status, 400, "{side} stop at {huge}: {body}");
            let message = body["message"].as_str().unwrap();
            assert!(message.starts_with("stop_price is too large. Maximum stop_price is "), "{message}");
        }
    }
    let (status, after) = http::send(&router, "GET", "/orders?status=open", None).await;
    assert_eq!(status, 200, "{after}");
    assert_eq!(after, before, "nothing was stored");
    for path in ["/accounts", "/fills?product_id=BTC-USD", "/products/BTC-USD/book?level=3"] {
        let (status, body) = http::send(&router, "GET", path, None).await;
        assert_eq!(status, 200, "{path}: {body}");
    }
}

/// Bank deposits of the largest amount until one would take USD past the balance cap: that
/// one is refused and changes nothing, the accounts still answer, and the funds audit balances.
#[tokio::test]
async fn deposits_stop_at_the_balance_cap_and_accounts_always_answer() {
    let (sim, router, clock) = http::simulator(22).await;
    let (_, methods) = http::send(&router, "GET", "/payment-methods", None).await;
    let bank = methods[0]["id"].as_str().unwrap().to_owned();
    let deposit = serde_json::json!({"amount": "1000000000000", "currency": "USD", "payment_method_id": bank});
    let mut refused = None;
    for n in 0..1_200 {
        let (status, body) = http::send(&router, "POST", "/deposits/payment-method", Some(&deposit)).await;
        if status != 200 {
            refused = Some((n, status, body));
            break;
        }
    }
    let (n, status, body) = refused.expect("a deposit past the cap is refused");
    assert!(n >= 99, "refused after {n} deposits");
    assert_eq!(status, 400, "{body}");
    assert_eq!(body["message"], "balance is too large. Maximum balance is 100000000000000 USD");
    let (status, transfers) = http::send(&router, "GET", "/transfers?type=deposit&limit=1000", None).await;
    assert_eq!(status, 200);
    assert_eq!(transfers.as_array().unwrap().iter().filter(|t| t["amount"] == "1000000000000.00").count(), n);
    // The bank deposits complete: USD stands at most at the cap, and every view answers.
    clock.advance(10 * 60_000);
    let (status, accounts) = http::send(&router, "GET", "/accounts", None).await;
    assert_eq!(status, 200, "{accounts}");
    let usd = accounts.as_array().unwrap().iter().find(|a| a["currency"] == "USD").unwrap();
    let balance: Decimal = usd["balance"].as_str().unwrap().parse().unwrap();
    assert!(balance + MAX_DEPOSIT > caps::BALANCE && balance <= caps::BALANCE, "{balance}");
    let id = usd["id"].as_str().unwrap();
    for path in [format!("/accounts/{id}"), format!("/accounts/{id}/ledger"), format!("/accounts/{id}/holds")] {
        let (status, body) = http::send(&router, "GET", &path, None).await;
        assert_eq!(status, 200, "{path}: {body}");
    }
    // Filled to ten dollars under the cap, then nothing more comes in: not by a deposit, not by
    // a conversion.
    let top_up = (caps::BALANCE - balance - dec!(10)).round_dp_with_strategy(2, rust_decimal::RoundingStrategy::ToZero);
    let topped = balance + top_up;
    let top_up = top_up.to_string();
    let deposit = serde_json::json!({"amount": top_up, "currency": "USD", "payment_method_id": bank});
    let (status, body) = http::send(&router, "POST", "/deposits/payment-method", Some(&deposit)).await;
    assert_eq!(status, 200, "{body}");
    clock.advance(10 * 60_000);
    let deposit = serde_json::json!({"amount": "10.01", "currency": "USD", "payment_method_id": bank});
    let (status, body) = http::send(&router, "POST", "/deposits/payment-method", Some(&deposit)).await;
    assert_eq!(status, 400, "{body}");
    let convert = serde_json::json!({"from": "USDC", "to": "USD", "amount": "25000"});
    let (status, body) = http::send(&router, "POST", "/conversions", Some(&convert)).await;
    assert_eq!(status, 400, "{body}");
    let (status, accounts) = http::send(&router, "GET", "/accounts", None).await;
    assert_eq!(status, 200, "{accounts}");
    let usd = accounts.as_array().unwrap().iter().find(|a| a["currency"] == "USD").unwrap();
    assert_eq!(usd["balance"].as_str().unwrap().parse::<Decimal>().unwrap(), topped);
    assert!(topped > caps::BALANCE - dec!(10.01) && topped <= caps::BALANCE - dec!(10), "{topped}");
    let market = http::market(&sim).await;
    assert!(market["funds"].as_array().unwrap().iter().all(|f| f["balanced"] == true), "{market}");
}

/// A `profile_id` in the query (the key's own) and a different one in the body is a conflict:
/// refused with 400, nothing stored.
#[tokio::test]
async fn a_profile_id_in_the_query_and_another_in_the_body_is_refused() {
    let (_sim, router, _) = http::simulator(23).await;
    let (_, profiles) = http::send(&router, "GET", "/profiles", None).await;
    let profiles = profiles.as_array().unwrap();
    let own = profiles.iter().find(|p| p["is_default"] == true).unwrap()["id"].as_str().unwrap().to_owned();
    let other = profiles.iter().find(|p| p["is_default"] == false).unwrap()["id"].as_str().unwrap().to_owned();
    let (_, before) = http::send(&router, "GET", "/orders?status=all&limit=1000", None).await;
    for body_profile in [other.as_str(), "6f1ee6a4-8c3a-4d8c-9e51-4a3b7e0d2c11"] {
        let order = serde_json::json!({"product_id": "BTC-USD", "side": "buy", "price": "100.00", "size": "0.01",
            "profile_id": body_profile});
        let (status, body) = http::send(&router, "POST", &format!("/orders?profile_id={own}"), Some(&order)).await;
        assert_eq!(status, 400, "{body}");
        assert!(body["message"].as_str().unwrap().contains("profile_id"), "{body}");
    }
    let (_, after) = http::send(&router, "GET", "/orders?status=all&limit=1000", None).await;
    assert_eq!(after, before, "nothing was stored");
    // The same profile named both ways (or `default` for it) is no conflict.
    let order = serde_json::json!({"product_id": "BTC-USD", "side": "buy", "price": "100.00", "size": "0.01",
        "profile_id": own.to_uppercase()});
    let (status, body) = http::send(&router, "POST", "/orders?profile_id=default", Some(&order)).await;
    assert_eq!(status, 200, "{body}");
}

/// The wire's fixed-place writer says what `format!("{:.N}")` says wherever that works, and
/// goes on past where it panics (32 bytes: a 16-place figure from 1e15 on, an 8-place one from
/// 1e23 on).
#[test]
fn fixed_places_match_format_and_never_panic() {
    use super::wire::{d16, d8, fixed};
    let mut rng = Rng::new(77);
    for _ in 0..20_000 {
        let mantissa =
            i128::from(rng.range(-1_000_000_000_000, 1_000_000_000_000)) * i128::from(rng.range(0, 1_000_000));
        let value = Decimal::from_i128_with_scale(mantissa, u32::try_from(rng.range(0, 28)).unwrap());
        let places = u32::try_from(rng.range(0, 16)).unwrap();
        let width = value.trunc().abs().to_string().len() + 1 + places as usize;
        if width <= 32 {
            assert_eq!(fixed(value, places), format!("{value:.p$}", p = places as usize), "{value} to {places}");
        }
    }
    assert_eq!(d16(dec!(1100000000000000)), "1100000000000000.0000000000000000");
    assert_eq!(d16(dec!(123.456)), "123.4560000000000000");
    assert_eq!(d8(Decimal::MAX), "79228162514264337593543950335.00000000");
    assert_eq!(d8(Decimal::MIN), "-79228162514264337593543950335.00000000");
    assert_eq!(d8(dec!(0.123456789)), "0.12345678", "cut, as format! cuts");
    assert_eq!(fixed(dec!(5), 0), "5");
    assert_eq!(fixed(dec!(-0.000000001), 8), format!("{:.8}", dec!(-0.000000001)));
    let tiny = Decimal::new(1, 28);
    assert_eq!(d16(tiny), "0.0000000000000000");
    assert_eq!(fixed(Decimal::MAX, 28).len(), 29 + 1 + 28);
    for spec in &PRODUCTS {
        super::wire::price(Decimal::MAX, spec);
    }
}

/// Every figure of an order at its bound is taken (or refused for funds), one step past it is
/// refused saying the bound, and a refusal changes nothing.
#[test]
fn order_figures_at_and_past_their_bounds() {
    let mut state = fresh(31);
    state.settings.paused = true;
    let tick = dec!(0.01);
    let before = (state.totals(), state.open.len(), state.orders.len());
    let refused = [
        (
            NewOrder::limit(BTC_USD, Side::Sell, MAX_PRICE + tick, dec!(0.01)),
            "price is too large. Maximum price is 1000000000000.00000000",
        ),
        (
            NewOrder::limit(BTC_USD, Side::Buy, Decimal::MAX, dec!(0.01)),
            "price is too large. Maximum price is 1000000000000.00000000",
        ),
        (
            NewOrder::limit(BTC_USD, Side::Sell, nines(), dec!(0.01)),
            "price is too large. Maximum price is 1000000000000.00000000",
        ),
        (
            NewOrder::limit(BTC_USD, Side::Buy, dec!(100.00), MAX_SIZE + dec!(0.00000001)),
            "size is too large. Maximum size is 100000000000000.00000000",
        ),
        (
            NewOrder {
                stop: Some((StopKind::Loss, MAX_PRICE + tick)),
                ..NewOrder::limit(BTC_USD, Side::Sell, dec!(100.00), dec!(0.01))
            },
            "stop_price is too large. Maximum stop_price is 1000000000000.00000000",
        ),
        (
            NewOrder {
                stop: Some((StopKind::Loss, Decimal::MAX)),
                ..NewOrder::limit(BTC_USD, Side::Sell, dec!(100.00), dec!(0.01))
            },
            "stop_price is too large. Maximum stop_price is 1000000000000.00000000",
        ),
        (
            NewOrder::market(BTC_USD, Side::Buy, None, Some(MAX_FUNDS + tick)),
            "funds is too large. Maximum funds is 100000000000000.00000000",
        ),
        (NewOrder::market(BTC_USD, Side::Buy, None, Some(MAX_FUNDS)), "Insufficient funds"),
        (NewOrder::limit(BTC_USD, Side::Buy, dec!(100.00), MAX_SIZE), "Insufficient funds"),
        (NewOrder::limit(BTC_USD, Side::Buy, MAX_PRICE, dec!(0.01)), "Insufficient funds"),
    ];
    for (order, message) in refused {
        let err = state.place(DEFAULT_PROFILE, order.clone(), T0).unwrap_err();
        assert_eq!((err.status.as_u16(), err.message.as_str()), (400, message), "{order:?}");
    }
    assert_eq!((state.totals(), state.open.len(), state.orders.len()), before, "refusals change nothing");
    // At the bound: a sell at the largest price and a stop at the largest stop price rest, and
    // every view of them reads.
    let satoshi = dec!(0.00000001);
    let ask = state.place(DEFAULT_PROFILE, NewOrder::limit(BTC_USD, Side::Sell, MAX_PRICE, satoshi), T0).unwrap();
    assert_eq!(state.orders[&ask].status, Status::Open);
    let stop = NewOrder {
        stop: Some((StopKind::Entry, MAX_PRICE)),
        ..NewOrder::limit(BTC_USD, Side::Sell, dec!(100.00), dec!(0.01))
    };
    let stop = state.place(DEFAULT_PROFILE, stop, T0).unwrap();
    assert_eq!(state.orders[&stop].status, Status::Active);
    let wire = super::wire::order(&state, &state.orders[&ask]);
    assert_eq!(wire["price"], "1000000000000.00000000");
    render_everything(&state);
    // A market buy takes the order at the largest price and pays it.
    let trader = (0..state.profiles.len()).find(|p| !state.keeps_records(*p)).unwrap();
    empty_book_except(&mut state, BTC_USD, &[ask, stop]);
    let usd = state.account(DEFAULT_PROFILE, catalog::USD).balance;
    state.place(trader, NewOrder::limit(BTC_USD, Side::Buy, MAX_PRICE, dec!(0.001)), T0).unwrap_err();
    let maker_rate = state.orders[&ask].maker_rate;
    let sweep = NewOrder { stp: Stp::CancelOldest, ..NewOrder::market(BTC_USD, Side::Buy, Some(satoshi), None) };
    state.place(trader, sweep, T0).unwrap();
    let paid = MAX_PRICE * satoshi;
    assert_eq!(state.account(DEFAULT_PROFILE, catalog::USD).balance - usd, paid - paid * maker_rate);
    render_everything(&state);
    check(&state).unwrap();
}

/// Cancels every order on `product` but `keep`.
fn empty_book_except(state: &mut State, product: usize, keep: &[u64]) {
    let keys: Vec<u64> =
        state.open.iter().copied().filter(|k| state.orders[k].product == product && !keep.contains(k)).collect();
    for key in keys {
        state.finish(key, "canceled", T0);
    }
}

/// Tops `profile`'s USD up by bank deposits to within `slack` of the balance cap, and lets them
/// complete.
fn fill_usd_to_the_cap(state: &mut State, profile: usize, slack: Decimal, now: i64) {
    let bank = state.payment_method_id.clone();
    let account = state.account_of(profile, catalog::USD);
    loop {
        let room = caps::BALANCE - state.accounts[account].balance - state.incoming(account) - slack;
        let amount = room.min(MAX_DEPOSIT).round_dp_with_strategy(2, rust_decimal::RoundingStrategy::ToZero);
        if amount <= Decimal::ZERO {
            break;
        }
        state.deposit(profile, amount, catalog::USD, &Endpoint::Bank(&bank), now).unwrap();
    }
    state.run_due(now + 10 * 60_000);
}

/// A fill that would take a balance past the cap does not happen: a new order that could is
/// refused, a resting maker that would be credited past it is cancelled as the book reaches it,
/// and a triggered stop that would be is cancelled as it takes. Balances stay at most the cap and
/// the funds audit balances.
#[test]
fn fills_that_would_pass_the_balance_cap_do_not_happen() {
    let mut state = fresh(32);
    state.settings.paused = true;
    empty_book(&mut state, BTC_USD);
    let traders: Vec<usize> = (0..state.profiles.len()).filter(|p| !state.keeps_records(*p)).collect();
    let (a, b) = (traders[0], traders[1]);
    // Placed while there is room: a resting sell worth $5,000, and a sell stop at $60,000.
    let maker =
        state.place(DEFAULT_PROFILE, NewOrder::limit(BTC_USD, Side::Sell, dec!(50000.00), dec!(0.1)), T0).unwrap();
    let stop = NewOrder {
        stop: Some((StopKind::Entry, dec!(60000.00))),
        ..NewOrder::limit(BTC_USD, Side::Sell, dec!(50000.00), dec!(0.1))
    };
    let stop = state.place(DEFAULT_PROFILE, stop, T0).unwrap();
    fill_usd_to_the_cap(&mut state, DEFAULT_PROFILE, dec!(1000), T0);
    let now = T0 + 10 * 60_000;
    let usd = state.account(DEFAULT_PROFILE, catalog::USD).balance;
    assert!(usd > caps::BALANCE - dec!(1000.01) && usd <= caps::BALANCE - dec!(1000), "{usd}");
    check(&state).unwrap();

    // A new sell that would bring in more than the room left is refused, changing nothing.
    let before = (state.totals(), state.open.len(), state.orders.len());
    let err =
        state.place(DEFAULT_PROFILE, NewOrder::limit(BTC_USD, Side::Sell, dec!(50000.00), dec!(0.1)), now).unwrap_err();
    assert_eq!(err.message, "balance is too large. Maximum balance is 100000000000000 USD");
    let err = state.convert(DEFAULT_PROFILE, catalog::USDC, catalog::USD, dec!(1000.01), None, now).unwrap_err();
    assert_eq!(err.message, "balance is too large. Maximum balance is 100000000000000 USD");
    let bank = state.payment_method_id.clone();
    let err = state.deposit(DEFAULT_PROFILE, dec!(1000.01), catalog::USD, &Endpoint::Bank(&bank), now).unwrap_err();
    assert_eq!(err.message, "balance is too large. Maximum balance is 100000000000000 USD");
    assert_eq!((state.totals(), state.open.len(), state.orders.len()), before);
    // One that fits is taken.
    state.convert(DEFAULT_PROFILE, catalog::USDC, catalog::USD, dec!(1.00), None, now).unwrap();

    // A trader buys at the resting sell's price: crediting it would pass the cap, so the sell
    // is cancelled (with nothing filled, forgotten) and the buy rests instead.
    let buy = state.place(a, NewOrder::limit(BTC_USD, Side::Buy, dec!(50000.00), dec!(0.1)), now).unwrap();
    assert!(!state.orders.contains_key(&maker), "the maker was cancelled and purged");
    assert_eq!(state.orders[&buy].status, Status::Open);
    assert_eq!(state.orders[&buy].filled_size, Decimal::ZERO);
    check(&state).unwrap();

    // Trades at $60,000 set the stop off; the bid at $50,000 is there for it to take, but the
    // proceeds would pass the cap: the stop is cancelled as it takes.
    state.place(a, NewOrder::limit(BTC_USD, Side::Sell, dec!(60000.00), dec!(0.01)), now).unwrap();
    state.place(b, NewOrder::limit(BTC_USD, Side::Buy, dec!(60000.00), dec!(0.01)), now).unwrap();
    assert_eq!(state.last_price(BTC_USD), Some(dec!(60000.00)));
    assert!(!state.orders.contains_key(&stop), "the stop was cancelled and purged");
    assert_eq!(state.orders[&buy].filled_size, Decimal::ZERO, "the bid was not taken");
    assert!(state.account(DEFAULT_PROFILE, catalog::USD).balance <= caps::BALANCE);
    assert!(state.profiles[DEFAULT_PROFILE].fills.iter().all(|f| f.product != BTC_USD || f.at_ms < now));
    render_everything(&state);
    check(&state).unwrap();
}
