//! Coinbase's console rules without a terminal: the order form's checks and estimate, the
//! cancel-all count, the 24-hour change, the market parts read from the wire.

use serde_json::{json, Value};

use super::*;

fn btc() -> Value {
    json!({"id": "BTC-USD", "base_currency": "BTC", "quote_currency": "USD", "quote_increment": "0.01000000",
        "base_increment": "0.00000001", "display_name": "BTC/USD", "min_market_funds": "10", "status": "online"})
}

fn values(pairs: &[(&str, &str)]) -> Values {
    pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
}

fn knows_all(id: &str) -> Option<Value> {
    match id {
        "BTC-USD" => Some(btc()),
        "fees" => Some(json!({"maker_fee_rate": "0.0040", "taker_fee_rate": "0.0060", "usd_volume": "0"})),
        _ => None,
    }
}

#[test]
fn a_price_finer_than_the_quote_increment_is_refused_beside_its_field() {
    let order =
        values(&[("product_id", "BTC-USD"), ("side", "buy"), ("type", "limit"), ("price", "100.005"), ("size", "1")]);
    let problems = order_problems(&order, &knows_all);
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert_eq!(problems[0].0, "price");
    assert!(problems[0].1.contains("price step 0.01 USD"), "{problems:?}");
    let fine = values(&[("product_id", "BTC-USD"), ("side", "buy"), ("price", "100.01"), ("size", "0.5")]);
    assert!(order_problems(&fine, &knows_all).is_empty());
    let tiny = values(&[("product_id", "BTC-USD"), ("side", "buy"), ("price", "100.00"), ("size", "0.000000001")]);
    assert!(order_problems(&tiny, &knows_all).iter().any(|(f, p)| *f == "size" && p.contains("size step")));
    let small = values(&[("product_id", "BTC-USD"), ("side", "buy"), ("price", "5.00"), ("size", "1")]);
    assert!(order_problems(&small, &knows_all).iter().any(|(f, p)| *f == "size" && p.contains("minimum of 10 USD")));
    let both =
        values(&[("product_id", "BTC-USD"), ("side", "buy"), ("type", "market"), ("size", "1"), ("funds", "20")]);
    assert!(order_problems(&both, &knows_all).iter().any(|(f, _)| *f == "funds"));
    // An unknown product is not checked against increments nobody knows.
    let unknown = values(&[("product_id", "XYZ-USD"), ("side", "buy"), ("price", "1.23456"), ("size", "1")]);
    assert!(order_problems(&unknown, &knows_all).is_empty());
}

#[test]
fn the_estimate_says_the_cost_and_the_hold_and_what_is_unknown() {
    let buy =
        values(&[("product_id", "BTC-USD"), ("side", "buy"), ("type", "limit"), ("price", "100.00"), ("size", "0.5")]);
    let lines = order_estimate(&buy, &knows_all).lines;
    assert_eq!(lines[0], "estimated cost: 0.5 BTC × 100.00 = 50.00 USD");
    assert_eq!(lines[1], "hold: 50.30 USD (price × size × (1 + 0.6 % taker fee))");
    let no_fee = |id: &str| (id == "BTC-USD").then(btc);
    let lines = order_estimate(&buy, &no_fee).lines;
    assert!(lines[1].contains("plus the taker fee (fee rate unknown yet"), "{lines:?}");
    let sell = values(&[("product_id", "BTC-USD"), ("side", "sell"), ("price", "100.00"), ("size", "0.5")]);
    assert!(order_estimate(&sell, &knows_all).lines.contains(&"hold: 0.5 BTC (the size sold)".to_owned()));
    let market = values(&[("product_id", "BTC-USD"), ("side", "buy"), ("type", "market"), ("funds", "25")]);
    assert_eq!(order_estimate(&market, &knows_all).lines, ["hold: 25.00 USD (the funds given)"]);
    let notes = order_notes(&values(&[("product_id", "ETH-USD"), ("side", "buy")]), &knows_all);
    assert_eq!(notes[0], "ETH-USD: increments unknown yet (asking the exchange)");
    let lookups = order_lookups(&values(&[("product_id", "ETH-USD"), ("side", "buy")]), &|_| None);
    assert_eq!(lookups.iter().map(|l| l.op).collect::<Vec<_>>(), ["products_get", "fees_get"]);
}

#[test]
fn cancel_all_names_the_product_and_counts_the_open_orders_the_exchange_answers() {
    let order = |product: &str, status: &str| json!({"id": "x", "product_id": product, "status": status});
    let answer = json!([
        order("BTC-USD", "open"),
        order("BTC-USD", "pending"),
        order("ETH-USD", "open"),
        order("BTC-USD", "done"),
    ]);
    let btc_only = values(&[("product_id", "BTC-USD")]);
    assert_eq!(
        cancel_all_effect(&btc_only, Some(&answer), 1000),
        "cancels every open order of BTC-USD: 2 open orders, as the exchange counts them now"
    );
    assert!(cancel_all_effect(&Values::new(), Some(&answer), 1000)
        .starts_with("cancels every open order of every product: 3 open"));
    assert_eq!(cancel_all_effect(&btc_only, None, 1000), "cancels every open order of BTC-USD: counting them…");
    assert!(cancel_all_effect(&btc_only, Some(&Value::Null), 1000).contains("how many is unknown"));
    assert!(cancel_all_effect(&btc_only, Some(&answer), 4).contains("at least 2 open orders (the first 4"));
    // The question asks for the named product's open orders, the most one answer holds.
    let lookup = open_orders_lookup(&btc_only);
    assert_eq!((lookup.op, lookup.values.get("product_id").map(String::as_str)), ("orders_list", Some("BTC-USD")));
}

#[test]
fn the_market_parts_read_the_wire() {
    let book =
        json!({"sequence": 3, "bids": [["99.50", "1.5", 2]], "asks": [["100.50", "0.25", 1], ["101.00", "2", 3]]});
    let part = market_part("products_get_order_book", &Values::new(), &book).unwrap();
    assert_eq!(part.asks.as_ref().unwrap().len(), 2);
    assert_eq!(part.bids.as_ref().unwrap()[0].price_text, "99.50");
    let candles = json!([
        [1584316800, 5236.01, 5346.05, 5346.03, 5245.17, 3728.6],
        [1584313200, 5346.03, 5388.43, 5356.47, 5346.03, 3242.8]
    ]);
    let part = market_part("products_get_candles", &Values::new(), &candles).unwrap();
    let first = part.candles.unwrap()[0];
    assert!((first.open - 5346.03).abs() < 1e-9 && (first.low - 5236.01).abs() < 1e-9);
    let trades = json!([{"time": "2020-03-20T00:22:57.833897Z", "trade_id": 1, "price": "6268.48", "size": "0.1", "side": "buy"}]);
    let tape = market_part("products_get_trades", &Values::new(), &trades).unwrap().tape.unwrap();
    assert_eq!(
        (tape[0].time.as_str(), tape[0].mark.as_str()),
        ("00:22:57", "▼ sell"),
        "a maker's buy was a sell taking"
    );
    let (change, tone) =
        change_24h(&json!({"open": "100", "last": "102.5", "high": "103", "low": "99", "volume": "1"}));
    assert_eq!((change.as_str(), tone), ("+2.50 % (+2.50)", Some(Move::Up)));
    let (change, tone) = change_24h(&json!({"open": "200", "last": "150"}));
    assert_eq!((change.as_str(), tone), ("-25.00 % (-50.00)", Some(Move::Down)));
    assert_eq!(change_24h(&json!({"open": "0", "last": "1"})).0, "unknown");
}

#[test]
fn a_products_row_opens_its_live_market_with_order_keys() {
    let view = market_view(&btc());
    assert_eq!(view.subject.as_deref(), Some("market BTC-USD"));
    assert!(view.market.is_some());
    let asked: Vec<&str> = view.watch.iter().chain(&view.watch_also).map(|(op, _)| *op).collect();
    assert_eq!(
        asked,
        [
            "products_get_order_book",
            "products_get_ticker",
            "products_get_stats",
            "products_get_candles",
            "products_get_trades"
        ]
    );
    assert_eq!(view.commands.iter().map(|k| k.key).collect::<String>(), "bs");
    let done = order_detail(&json!({"id": "o1", "product_id": "BTC-USD", "side": "buy", "status": "done"}));
    assert_eq!(done.commands.iter().map(|k| k.key).collect::<String>(), "rx", "a done order cannot be cancelled");
    assert!(done.watch.is_none(), "a done order moves no more");
    let open = order_detail(&json!({"id": "o1", "product_id": "BTC-USD", "side": "buy", "status": "open"}));
    assert_eq!(open.watch, Some(("orders_get", vec![("order_id".to_owned(), "o1".to_owned())])), "followed");
    assert_eq!(tone("side", "sell"), Some(Tone::Bad));
}

fn fact_of(view: &Detail, label: &str) -> String {
    view.facts.iter().find(|(l, ..)| l == label).map(|(_, v, _)| v.clone()).unwrap_or_default()
}

#[test]
fn money_reads_as_money_in_the_account_and_order_views() {
    let usd = json!({"id": "a1", "currency": "USD", "balance": "99077.8606195125962000",
        "available": "89895.2435005125962000", "hold": "9182.6171190000000000"});
    let view = account_detail(&usd);
    assert_eq!(
        [fact_of(&view, "balance"), fact_of(&view, "available"), fact_of(&view, "hold")],
        ["99,077.86", "89,895.24", "9,182.62"],
        "a fiat account to the cent"
    );
    let btc_account =
        json!({"id": "a2", "currency": "BTC", "balance": "2.5011027700000000", "hold": "0.1100000000000000"});
    let view = account_detail(&btc_account);
    assert_eq!((fact_of(&view, "balance"), fact_of(&view, "hold")), ("2.50110277".into(), "0.11".into()));
    let order = json!({"id": "o1", "product_id": "BTC-USD", "side": "buy", "status": "done", "price": "90000.12000000",
        "size": "0.00100000", "filled_size": "0.00100000", "executed_value": "90.0001200000000000",
        "fill_fees": "0.5400007200000000"});
    let view = order_detail(&order);
    let shown: Vec<String> =
        ["price", "size", "filled", "executed value", "fees"].iter().map(|l| fact_of(&view, l)).collect();
    assert_eq!(shown, ["90,000.12", "0.001", "0.001", "90.00", "0.54"]);
    // Cancelling it restates it the same way.
    let known = |id: &str| {
        (id == "o1").then(|| {
            json!({"product_id": "BTC-USD", "side": "buy", "type": "limit",
        "status": "open", "price": "90000.12000000", "size": "0.00100000"})
        })
    };
    let effect = cancel_effect(&values(&[("order_id", "o1")]), &known);
    assert_eq!(effect, ["cancels the limit order buy 0.001 BTC at 90,000.12 USD (open)"]);
}

#[test]
fn a_market_writes_every_price_at_the_product_step_and_groups_them_alike() {
    let view = market_view(&btc());
    assert_eq!(fact_of(&view, "price step"), "0.01 USD");
    assert_eq!(fact_of(&view, "size step"), "0.00000001 BTC");
    assert_eq!(fact_of(&view, "min funds"), "10.00 USD");
    let mut market = *view.market.unwrap();
    let book = json!({"bids": [["97598.4", "0.03600000", 1]], "asks": [["97600.45000000", "1250.5", 2]]});
    market.merge(market_part("products_get_order_book", &Values::new(), &book).unwrap());
    let trades = json!([{"time": "2026-11-28T12:00:01.5Z", "price": "97599.1", "size": "0.00400000", "side": "sell"}]);
    market.merge(market_part("products_get_trades", &Values::new(), &trades).unwrap());
    let candles = json!([[1764331200, 97001.5, 101234.5, 97100, 101000, 3.5]]);
    market.merge(market_part("products_get_candles", &Values::new(), &candles).unwrap());
    let screen = |width: u16, height: u16| {
        let mut terminal = ratatui::Terminal::new(ratatui::backend::TestBackend::new(width, height)).unwrap();
        terminal.draw(|f| market.render(f, f.area(), &crate::tui::theme::Theme::dark())).unwrap();
        let buffer = terminal.backend().buffer().clone();
        (0..height).map(|y| (0..width).map(|x| buffer[(x, y)].symbol()).collect::<String>() + "\n").collect::<String>()
    };
    let wide = screen(160, 30);
    for written in ["97,598.40", "0.036", "97,600.45", "1,250.5", "97,599.10", "0.004", "101,234.50", "97,001.50"] {
        assert!(wide.contains(written), "{written} missing:\n{wide}");
    }
    assert!(
        !wide.contains("97598.4") && !wide.contains("0.00400000"),
        "no price or size as the wire wrote it:\n{wide}"
    );
    // At 80 columns the tape keeps the trade's time, price and size.
    let narrow = screen(80, 22);
    let tape_line = narrow.lines().find(|l| l.contains("12:00:01")).unwrap_or_default();
    assert!(tape_line.contains("97,599.10") && tape_line.contains("0.004"), "{narrow}");
}

#[test]
fn the_feeds_frames_read_as_the_market_views_pushes() {
    let feed = Coinbase;
    let read = |frame: Value| feed.market_frame("BTC-USD", &frame.to_string());
    assert!(read(json!({"type": "subscriptions", "channels": []})).serving);
    let book = read(
        json!({"type": "snapshot", "product_id": "BTC-USD", "bids": [["100.01", "0.5"]], "asks": [["100.50", "1.25"]]}),
    );
    assert_eq!(
        book.pushes,
        [Push::Book { bids: vec![("100.01".into(), "0.5".into())], asks: vec![("100.50".into(), "1.25".into())] }]
    );
    let update = read(
        json!({"type": "l2update", "product_id": "BTC-USD", "changes": [["buy", "100.01", "0"], ["sell", "100.40", "2"]], "time": "2026-11-29T04:00:00.000000Z"}),
    );
    assert_eq!(
        update.pushes,
        [Push::Changes(vec![
            (BookSide::Bid, "100.01".into(), "0".into()),
            (BookSide::Ask, "100.40".into(), "2".into())
        ])]
    );
    let trade = read(
        json!({"type": "match", "product_id": "BTC-USD", "trade_id": 9, "side": "sell", "price": "100.45", "size": "0.1", "time": "2026-11-29T04:00:42.123000Z", "sequence": 5}),
    );
    let [Push::Trade(print, Some((minute, price, size)))] = trade.pushes.as_slice() else { panic!("{trade:?}") };
    assert_eq!((print.mark.as_str(), print.time.as_str()), ("▲ buy", "04:00:42"), "a sell maker: a buyer took");
    assert_eq!((*minute % 60, *price, *size), (0, 100.45, 0.1));
    let ticker = read(
        json!({"type": "ticker", "product_id": "BTC-USD", "price": "101.50", "open_24h": "99.00", "high_24h": "102", "low_24h": "98", "volume_24h": "12.5", "best_bid": "101.49", "best_ask": "101.51"}),
    );
    let facts: Vec<(String, String)> = ticker
        .pushes
        .iter()
        .flat_map(|p| match p {
            Push::Part(part) => part.facts.iter().map(|(l, v, _)| (l.clone(), v.clone())).collect(),
            _ => Vec::new(),
        })
        .collect();
    assert!(facts.contains(&("last".into(), "101.50".into())), "{facts:?}");
    assert!(facts.iter().any(|(l, v)| l == "24h" && v.starts_with("+2.53 %")), "{facts:?}");
    assert!(
        read(json!({"type": "ticker", "product_id": "ETH-USD", "price": "1"})).pushes.is_empty(),
        "another product"
    );
    let refused = read(json!({"type": "error", "message": "Failed to subscribe", "reason": "BTC-USD is delisted"}));
    assert_eq!(refused.ended.as_deref(), Some("the feed refused: Failed to subscribe: BTC-USD is delisted"));
    assert!(read(json!("not an object")).pushes.is_empty());
    assert!(feed.market_frame("BTC-USD", "{nope").ended.is_some());
}

#[test]
fn the_feed_is_the_vendors_for_its_apis_and_the_same_host_for_any_other() {
    assert_eq!(feed_url("https://api.exchange.coinbase.com").as_deref(), Some("wss://ws-feed.exchange.coinbase.com"));
    assert_eq!(
        feed_url("https://api-public.sandbox.exchange.coinbase.com/").as_deref(),
        Some("wss://ws-feed-public.sandbox.exchange.coinbase.com")
    );
    assert_eq!(feed_url("http://127.0.0.1:7705").as_deref(), Some("ws://127.0.0.1:7705"));
    assert_eq!(feed_url("https://exchange.example.com/api").as_deref(), Some("wss://exchange.example.com"));
    assert_eq!(feed_url("ftp://x"), None);
}
