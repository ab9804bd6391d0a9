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
use super::orders::{needed_hold, NewOrder};
use super::seed::{self, BOT_PROFILE, DEFAULT_PROFILE};
use super::state::{caps, MarketSettings, State, Status, StopKind, Stp, Tif};
use super::transfers::Endpoint;
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
            let action = rng.below(12);
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
                    state.convert(profile, from, to, Decimal::from(rng.range(1, 400)), None, now).map(|_| ())
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

/// Amounts past what the exchange's arithmetic can carry are refused where they enter, as the
/// exchange refuses them, and nothing is stored; whatever is stored can always be written.
#[test]
fn prices_and_amounts_past_every_bound_are_refused_and_store_nothing() {
    let body = |text: String| serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(&text).unwrap();
    let huge = ["79228162514264337593543950335", "9999999999999999999999999999.9999999999999999999999999999"];
    let mut state = fresh(21);
    for value in huge {
        for (field, order) in [
            ("price", format!(r#"{{"product_id":"BTC-USD","side":"buy","price":"{value}","size":"0.001"}}"#)),
            (
                "stop_price",
                format!(
                    r#"{{"product_id":"BTC-USD","side":"sell","price":"100.00","size":"0.001","stop":"loss","stop_price":"{value}"}}"#
                ),
            ),
            ("size", format!(r#"{{"product_id":"BTC-USD","side":"sell","price":"100.00","size":"{value}"}}"#)),
            ("funds", format!(r#"{{"product_id":"BTC-USD","side":"buy","type":"market","funds":"{value}"}}"#)),
        ] {
            let orders = state.orders.len();
            let refused = super::orders::parse(&body(order.clone()))
                .and_then(|new| state.place(DEFAULT_PROFILE, new, T0))
                .expect_err(&order);
            assert_eq!(refused.status.as_u16(), 400, "{order}");
            assert!(refused.message.starts_with(&format!("{field} is too large")), "{order}: {}", refused.message);
            assert_eq!(state.orders.len(), orders, "nothing stored: {order}");
        }
    }
    // At the bound itself an order is judged as any other (here: not enough funds).
    let at_bound = super::orders::MAX_ORDER_AMOUNT.to_string();
    let new = super::orders::parse(&body(format!(
        r#"{{"product_id":"BTC-USD","side":"buy","price":"{at_bound}","size":"0.001"}}"#
    )))
    .unwrap();
    assert_eq!(state.place(DEFAULT_PROFILE, new, T0).unwrap_err().message, "Insufficient funds");
    // The wire writes any decimal, however many digits it has.
    assert_eq!(super::wire::d16(dec!(1100000000000000)), "1100000000000000.0000000000000000");
    assert_eq!(super::wire::d8(Decimal::MAX), "79228162514264337593543950335.00000000");
    assert_eq!(super::wire::d8(dec!(-0.123456789)), "-0.12345679");
    check(&state).unwrap();
}

/// Deposits stop at the balance limit: the one that would pass it is refused and changes
/// nothing, and every account can still be written (`GET /accounts` answered 500 for good once
/// USD passed 1e12).
#[test]
fn deposits_stop_at_the_balance_limit_and_accounts_stay_writable() {
    let mut state = fresh(22);
    let bank = state.payment_method_id.clone();
    let per_deposit = dec!(1000000000000);
    let mut made = 0;
    let refused = loop {
        match state.deposit(DEFAULT_PROFILE, per_deposit, catalog::USD, &Endpoint::Bank(&bank), T0) {
            Ok(_) => made += 1,
            Err(e) => break e,
        }
        assert!(made <= 1_100, "no limit was reached");
        // Deposits complete as they go, so the pending ones never run out.
        state.run_due(T0 + 10 * 60_000);
    };
    assert!(refused.message.contains("limit"), "{}", refused.message);
    let before = (state.totals(), state.transfers.len());
    assert!(state.deposit(DEFAULT_PROFILE, per_deposit, catalog::USD, &Endpoint::Bank(&bank), T0).is_err());
    assert_eq!((state.totals(), state.transfers.len()), before, "a refused deposit changes nothing");
    let usd = state.account(DEFAULT_PROFILE, catalog::USD);
    assert!(usd.balance <= super::transfers::MAX_BALANCE && usd.balance > dec!(999000000000000));
    for account in &state.accounts {
        let written = super::wire::account(&state, account);
        assert!(written["balance"].as_str().unwrap().parse::<Decimal>().is_ok(), "{written}");
    }
    check(&state).unwrap();
}
