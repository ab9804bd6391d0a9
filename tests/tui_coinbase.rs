//! The console's Coinbase tab driven by keys, against a fake Coinbase Exchange whose bodies are
//! shaped as shared/api/coinbase-exchange.md records them and whose market moves between polls:
//! a product's live market (price and 24-hour change, the book ladder, candles, the tape) moving
//! while its view is open and keys still answering; the order form refusing a price finer than
//! the product's increment before anything is sent, and saying what the order costs and holds;
//! the cancel-all confirmation naming the product and how many open orders it cancels, sending
//! nothing before the user says yes.
#![allow(clippy::unwrap_used, reason = "tests")]

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::{Path, Query, State};
use axum::routing::get;
use axum::{Json, Router};
use serde_json::{json, Value};

use opsdeck::cli::GlobalArgs;
use opsdeck::tui::app::{Focus, Popup};
use opsdeck::tui::harness::Harness;

/// What the fake exchange holds and what it saw.
#[derive(Default)]
struct Exchange {
    /// How many times each product's book was asked for: the book moves with every ask.
    book_asks: usize,
    trade_asks: usize,
    stats_asks: usize,
    /// Bodies of `POST /orders`.
    placed: Vec<Value>,
    /// The query of every `DELETE /orders`.
    cancel_alls: Vec<HashMap<String, String>>,
    /// Paths of every request, in order.
    paths: Vec<String>,
}

type Shared = Arc<Mutex<Exchange>>;

fn product(id: &str, quote_increment: &str, base_increment: &str, min_funds: &str) -> Value {
    let (base, quote) = id.split_once('-').unwrap();
    json!({"id": id, "base_currency": base, "quote_currency": quote, "quote_increment": quote_increment,
        "base_increment": base_increment, "display_name": id.replace('-', "/"), "min_market_funds": min_funds,
        "margin_enabled": false, "post_only": false, "limit_only": false, "cancel_only": false, "status": "online",
        "status_message": "", "auction_mode": false})
}

fn products() -> Vec<Value> {
    vec![product("BTC-USD", "0.01000000", "0.00000001", "10"), product("ETH-USD", "0.01000000", "0.00000001", "10")]
}

fn order(id: &str, product: &str, side: &str, price: &str, size: &str, status: &str) -> Value {
    json!({"id": id, "price": price, "size": size, "product_id": product,
        "profile_id": "8058d771-2d88-4f0f-ab6e-299c153d4308", "side": side, "type": "limit", "time_in_force": "GTC",
        "post_only": false, "created_at": "2020-03-11T20:48:46.622052Z", "fill_fees": "0.0000000000000000",
        "filled_size": "0.00000000", "executed_value": "0.0000000000000000", "status": status, "settled": false,
        "stp": "dc"})
}

/// The book after `n` asks: the best bid climbs a cent per ask, so a ladder that moves shows it.
fn book(n: usize) -> Value {
    let bid = 10_000 + n;
    let price = |cents: usize| format!("{}.{:02}", cents / 100, cents % 100);
    json!({"sequence": 1000 + n, "time": "2026-11-26T12:00:00.000000Z", "auction_mode": false,
        "bids": [[price(bid), "1.50000000", 3], [price(bid - 50), "4.00000000", 5], [price(bid - 100), "2.25000000", 1]],
        "asks": [[price(10_150), "0.75000000", 2], [price(10_200), "3.00000000", 4], [price(10_300), "6.00000000", 2]]})
}

fn trades(n: usize) -> Value {
    let trade = |id: usize, price: &str, side: &str| {
        json!({"time": format!("2026-11-26T12:00:{:02}.123456Z", id % 60), "trade_id": id, "price": price,
            "size": "0.01000000", "side": side})
    };
    json!([trade(500 + n, &format!("101.{:02}", n % 100), "sell"), trade(499 + n, "100.90", "buy")])
}

fn fake(state: Shared) -> Router {
    Router::new()
        .route(
            "/accounts",
            get(|| async {
                Json(json!([{"id": "7fd0abc0-e5ad-4cbb-8d54-f2b3f43364da", "currency": "USD",
                    "balance": "1000.0000000000000000", "hold": "50.3000000000000000", "available": "949.70",
                    "profile_id": "8058d771-2d88-4f0f-ab6e-299c153d4308", "trading_enabled": true}]))
            }),
        )
        .route(
            "/accounts/{id}/holds",
            get(|| async {
                Json(json!([{"id": "82dcd140-c3c7-4507-8de4-2c529cd1a28f", "account_id": "7fd0abc0-e5ad-4cbb-8d54-f2b3f43364da",
                    "created_at": "2026-11-26T12:00:00.000Z", "updated_at": "2026-11-26T12:00:00.000Z",
                    "amount": "50.3000000000000000", "type": "order", "ref": "e9625b04-fc66-4999-a876-543c3684d702"}]))
            }),
        )
        .route(
            "/accounts/{id}/ledger",
            get(|| async {
                let entry = |id: &str, amount: &str, balance: &str, kind: &str| {
                    json!({"id": id, "created_at": "2026-11-26T12:00:01.000Z", "amount": amount, "balance": balance,
                        "type": kind, "details": {"order_id": "e9625b04-fc66-4999-a876-543c3684d702",
                        "trade_id": "74", "product_id": "BTC-USD"}})
                };
                Json(json!([entry("101", "-50.0000000000000000", "950.0000000000000000", "match"),
                    entry("100", "-0.3000000000000000", "949.7000000000000000", "fee")]))
            }),
        )
        .route("/products", get(|| async { Json(Value::Array(products())) }))
        .route(
            "/products/{id}",
            get(|Path(id): Path<String>| async move {
                Json(products().into_iter().find(|p| p["id"] == id.as_str()).unwrap_or(Value::Null))
            }),
        )
        .route(
            "/products/{id}/book",
            get(|State(state): State<Shared>| async move {
                let mut s = state.lock().unwrap();
                s.book_asks += 1;
                s.paths.push("book".into());
                Json(book(s.book_asks))
            }),
        )
        .route(
            "/products/{id}/trades",
            get(|State(state): State<Shared>| async move {
                let mut s = state.lock().unwrap();
                s.trade_asks += 1;
                Json(trades(s.trade_asks))
            }),
        )
        .route(
            "/products/{id}/candles",
            get(|| async {
                Json(json!([[1_795_000_120, 100.5, 102.0, 101.0, 101.8, 12.5],
                    [1_795_000_060, 99.0, 101.5, 100.0, 101.0, 8.25],
                    [1_795_000_000, 98.0, 100.5, 100.0, 99.0, 3.5]]))
            }),
        )
        .route(
            "/products/{id}/ticker",
            get(|| async {
                Json(json!({"trade_id": 86326522, "price": "101.50", "size": "0.00698254",
                    "time": "2026-11-26T12:00:57.833897Z", "bid": "100.10", "ask": "101.50", "volume": "53602.03940154"}))
            }),
        )
        .route(
            "/products/{id}/stats",
            get(|State(state): State<Shared>, Path(id): Path<String>| async move {
                state.lock().unwrap().stats_asks += 1;
                let (open, last) = if id == "ETH-USD" { ("20.00", "19.80") } else { ("99.00", "101.50") };
                Json(json!({"open": open, "high": "102.00", "low": "98.00", "last": last,
                    "volume": "5000.1", "volume_30day": "100000"}))
            }),
        )
        .route(
            "/fees",
            get(|| async { Json(json!({"maker_fee_rate": "0.0040", "taker_fee_rate": "0.0060", "usd_volume": "43806.92"})) }),
        )
        .route(
            "/orders",
            get(|| async {
                Json(json!([
                    order("a9625b04-fc66-4999-a876-543c3684d702", "BTC-USD", "buy", "95.00", "1.00000000", "open"),
                    order("b9625b04-fc66-4999-a876-543c3684d702", "BTC-USD", "sell", "110.00", "0.50000000", "open"),
                    order("c9625b04-fc66-4999-a876-543c3684d702", "BTC-USD", "buy", "90.00", "2.00000000", "pending"),
                    order("d9625b04-fc66-4999-a876-543c3684d702", "ETH-USD", "buy", "20.00", "1.00000000", "open"),
                ]))
            })
            .post(|State(state): State<Shared>, Json(body): Json<Value>| async move {
                state.lock().unwrap().placed.push(body.clone());
                let mut placed = order("e9625b04-fc66-4999-a876-543c3684d702", "BTC-USD", "buy", "100.00", "0.5", "pending");
                placed["price"] = body["price"].clone();
                Json(placed)
            })
            .delete(|State(state): State<Shared>, Query(query): Query<HashMap<String, String>>| async move {
                state.lock().unwrap().cancel_alls.push(query);
                Json(json!(["a9625b04-fc66-4999-a876-543c3684d702", "b9625b04-fc66-4999-a876-543c3684d702"]))
            }),
        )
        .with_state(state)
}

/// The Coinbase tab pointed at the fake, with `resource` listed and the browser focused.
async fn coinbase(resource: &str) -> (Harness, Shared) {
    started(resource, false).await
}

/// [`coinbase`], as a LIVE tab (credentials set) when `live`.
async fn started(resource: &str, live: bool) -> (Harness, Shared) {
    let state: Shared = Arc::default();
    let url = opsdeck::sandbox::serve_loopback(fake(state.clone())).await.unwrap();
    let mut h = Harness::with_env(GlobalArgs::default(), &move |name| match name {
        "OPSDECK_COINBASE_URL" => Some(url.clone()),
        "COLORTERM" => Some("truecolor".into()),
        "COINBASE_API_KEY" if live => Some("live-key".into()),
        "COINBASE_API_SECRET" if live => Some("c2VjcmV0".into()),
        "COINBASE_API_PASSPHRASE" if live => Some("live-passphrase".into()),
        _ => None,
    })
    .await;
    h.keys("5");
    h.settle().await;
    h.browse(resource).await;
    h.console.app.focus = Focus::Browser;
    (h, state)
}

fn popup_title(h: &Harness) -> String {
    match &h.console.app.popup {
        Some(Popup::Detail(detail)) => detail.title.clone(),
        Some(Popup::Form(form)) => format!("form {}", form.op.name),
        Some(Popup::Confirm(confirm)) => format!("confirm {}", confirm.op.name),
        Some(_) => "another popup".into(),
        None => "no popup".into(),
    }
}

/// Lets the open view ask again: a tick an interval later sends its asks; then they are applied.
async fn time_passes(h: &mut Harness, at: &mut Instant) {
    *at += Duration::from_secs(3);
    h.console.app.on_tick(*at);
    h.settle().await;
}

/// The line of the screen holding `needle`.
fn line_of(screen: &str, needle: &str) -> String {
    screen.lines().find(|l| l.contains(needle)).unwrap_or_default().to_owned()
}

#[tokio::test]
async fn a_products_market_shows_price_and_24h_change_and_its_ladder_moves_while_keys_still_work() {
    let (mut h, state) = coinbase("products").await;
    // The list has no price: each product in view is asked for its stats while it is shown.
    let mut at = Instant::now();
    h.console.app.on_tick(at);
    h.settle().await;
    let screen = h.screen();
    let header = line_of(&screen, "quote_increment");
    assert!(header.contains("id       price     24h status"), "the live columns next to the id:\n{screen}");
    assert!(line_of(&screen, "BTC-USD").contains("BTC-USD 101.50 +2.53 %"), "{screen}");
    assert!(line_of(&screen, "ETH-USD").contains("ETH-USD  19.80 -1.00 %"), "{screen}");
    let stats_asks = state.lock().unwrap().stats_asks;
    assert_eq!(stats_asks, 2, "one ask per product in view");
    // They refresh while the list is shown.
    time_passes(&mut h, &mut at).await;
    assert_eq!(state.lock().unwrap().stats_asks, 4);
    h.keys("<Enter>");
    assert_eq!(popup_title(&h), "BTC-USD · market", "{}", h.screen());
    // A market nothing fetched yet asks at once, for every part.
    at += Duration::from_secs(1);
    h.console.app.on_tick(at);
    h.settle().await;
    let screen = h.screen();
    assert!(line_of(&screen, "last").contains("101.50"), "the price:\n{screen}");
    assert!(screen.contains("24h +2.53 % (+2.50)"), "the 24-hour change from open 99.00 to last 101.50:\n{screen}");
    assert!(screen.contains("order book") && screen.contains("100.01") && screen.contains("101.50"), "{screen}");
    assert!(screen.contains("spread 1.49"), "the best ask less the best bid:\n{screen}");
    assert!(screen.contains('▇'), "depth bars:\n{screen}");
    assert!(screen.contains('█') && screen.contains('│'), "candles drawn with bodies and wicks:\n{screen}");
    assert!(screen.contains("▲ buy") && screen.contains("▼ sell"), "the tape says who took:\n{screen}");
    assert!(screen.contains("● live"), "{screen}");
    let asks_before = state.lock().unwrap().book_asks;

    // Time passes: the view asks again and the ladder moves (the best bid climbed a cent); the
    // board of markets has the other products' prices and changes too.
    time_passes(&mut h, &mut at).await;
    let screen = h.screen();
    let board = line_of(&screen, "markets ");
    assert!(board.contains("BTC-USD 101.50 +2.53 %") && board.contains("ETH-USD 19.80 -1.00 %"), "{screen}");
    assert!(state.lock().unwrap().book_asks > asks_before, "the book was asked again");
    assert!(screen.contains("100.02") && !screen.contains("100.01"), "the ladder moved:\n{screen}");
    assert!(screen.contains("spread 1.48"), "{screen}");

    // While the asks are out, keys still answer at once: the order form opens over the view.
    at += Duration::from_secs(3);
    h.console.app.on_tick(at);
    assert!(h.console.app.executor.active_count() > 0, "polls in flight");
    h.keys("b");
    assert_eq!(popup_title(&h), "form orders_create", "a key while polling:\n{}", h.screen());
    h.settle().await;
    assert_eq!(popup_title(&h), "form orders_create", "an answer never takes the form away");
    h.keys("<Esc>");
    // `b` brings the market back, and it keeps asking.
    h.keys("b");
    assert_eq!(popup_title(&h), "BTC-USD · market");
    let asked = state.lock().unwrap().book_asks;
    h.console.app.on_tick(at + Duration::from_secs(1));
    time_passes(&mut h, &mut at).await;
    assert!(state.lock().unwrap().book_asks > asked, "{}", h.screen());
    h.keys("<Esc>");
    assert_eq!(popup_title(&h), "no popup");
    let polled = state.lock().unwrap().book_asks;
    time_passes(&mut h, &mut at).await;
    assert_eq!(state.lock().unwrap().book_asks, polled, "a closed view asks no more");
}

#[tokio::test]
async fn the_order_form_refuses_a_price_off_the_increment_and_says_the_cost_and_hold() {
    let (mut h, state) = coinbase("products").await;
    h.keys("<Enter>");
    h.keys("b");
    h.settle().await;
    let Some(Popup::Form(form)) = h.console.app.popup.as_ref() else { panic!("form:\n{}", h.screen()) };
    let values = form.values();
    assert_eq!(values.get("product_id").map(String::as_str), Some("BTC-USD"));
    assert_eq!(values.get("side").map(String::as_str), Some("buy"));
    // product_id, side, type, then price and size.
    h.keys("<Tab><Tab><Tab>");
    h.type_text("100.005");
    h.keys("<Tab>");
    h.type_text("0.5");
    h.settle().await;
    let screen = h.screen();
    assert!(screen.contains("BTC-USD: price in steps of 0.01 USD, size in steps of 0.00000001 BTC"), "{screen}");
    h.keys("<C-s>");
    assert_eq!(popup_title(&h), "form orders_create", "nothing sent:\n{}", h.screen());
    let screen = h.screen();
    let price_line = line_of(&screen, "✗");
    assert!(
        price_line.contains("price") && price_line.contains("finer than BTC-USD's price step 0.01 USD"),
        "{screen}"
    );
    assert!(screen.contains("fix the marked fields; nothing was sent"), "{screen}");
    assert!(state.lock().unwrap().placed.is_empty(), "nothing reached the exchange");

    // A price on the step: the estimate and the hold (with the taker fee the form asked for).
    h.keys("<S-Tab>");
    h.keys("<BS>");
    h.settle().await;
    let screen = h.screen();
    assert!(screen.contains("estimated cost: 0.5 BTC × 100.00 = 50.00 USD"), "{screen}");
    assert!(screen.contains("hold: 50.30 USD (price × size × (1 + 0.6 % taker fee))"), "{screen}");
    h.keys("<C-s>");
    assert_eq!(popup_title(&h), "confirm orders_create", "{}", h.screen());
    let screen = h.screen();
    assert!(screen.contains("places an order: buy 0.5 BTC at 100.00 USD"), "{screen}");
    assert!(screen.contains("hold: 50.30 USD"), "the confirmation restates the hold:\n{screen}");
    h.keys("y");
    h.settle().await;
    let placed = state.lock().unwrap().placed.clone();
    assert_eq!(placed.len(), 1);
    assert_eq!(placed[0]["price"], "100.00");
    assert_eq!(placed[0]["size"], "0.5");
    assert_eq!(placed[0]["product_id"], "BTC-USD");
}

#[tokio::test]
async fn cancel_all_names_the_product_and_the_open_orders_and_sends_only_when_confirmed() {
    let (mut h, state) = coinbase("orders").await;
    let screen = h.screen();
    assert!(screen.contains("a9625b04") && screen.contains("ETH-USD"), "{screen}");
    h.keys("<Enter>");
    assert_eq!(popup_title(&h), "order BTC-USD buy · open", "{}", h.screen());
    assert!(h.screen().contains("x cancel all of this product"));
    h.keys("x");
    assert_eq!(popup_title(&h), "confirm orders_cancel_all", "{}", h.screen());
    // Counted from the exchange's answer, asked as the question opens (not from a list seen
    // earlier, which said 2 when 3 were cancelled).
    assert!(h.screen().contains("cancels every open order of BTC-USD: counting them…"), "{}", h.screen());
    h.settle().await;
    let screen = h.screen();
    assert!(
        screen.contains("cancels every open order of BTC-USD: 3 open orders, as the exchange counts them now"),
        "{screen}"
    );
    assert!(screen.contains("product_id=BTC-USD"), "{screen}");
    h.keys("n");
    h.settle().await;
    assert!(state.lock().unwrap().cancel_alls.is_empty(), "no sends nothing");

    h.keys("b");
    h.keys("x");
    h.keys("y");
    h.settle().await;
    let cancels = state.lock().unwrap().cancel_alls.clone();
    assert_eq!(cancels.len(), 1, "{}", h.screen());
    assert_eq!(cancels[0].get("product_id").map(String::as_str), Some("BTC-USD"));
}

#[tokio::test]
async fn an_account_drills_to_its_holds_and_its_ledger() {
    let (mut h, _state) = coinbase("accounts").await;
    let screen = h.screen();
    let row = line_of(&screen, "USD ");
    assert!(row.contains("1,000.00") && row.contains("949.70") && row.contains("50.30"), "{screen}");
    h.keys("<Enter>");
    assert_eq!(popup_title(&h), "USD account", "{}", h.screen());
    assert!(h.screen().contains("h holds · l ledger"), "{}", h.screen());
    h.keys("h");
    h.settle().await;
    let screen = h.screen();
    assert!(screen.contains("e9625b04-fc66-4999-a876-543c3684d702") && screen.contains("50.30"), "{screen}");
    h.keys("b");
    h.keys("l");
    h.settle().await;
    let screen = h.screen();
    let fee = line_of(&screen, "fee ");
    assert!(fee.contains("-0.30") && fee.contains("949.70") && fee.contains("BTC-USD order e9625b04"), "{screen}");
}

#[tokio::test]
async fn a_drill_sent_while_the_list_before_still_loads_is_the_page_whichever_answers_last() {
    let (mut h, _state) = coinbase("accounts").await;
    h.keys("<Enter>h");
    h.settle().await;
    // Esc goes back to the accounts (asked again); `b` reopens the account's view and `h` asks
    // for its holds, all before the accounts answer.
    h.keys("<Esc>");
    let accounts = h.console.app.tab().loading.expect("the accounts are asked for again");
    h.keys("bh");
    h.settle().await;
    assert_eq!(
        h.console.app.executor.state(accounts),
        Some(opsdeck::client::CallState::Cancelled),
        "the older list's answer can no longer replace the newer one"
    );
    let screen = h.screen();
    assert!(screen.contains("holds of USD"), "{screen}");
    let records = h.console.app.tab().browser.records();
    assert!(!records.is_empty() && records.iter().all(|r| r["type"] == "order"), "the holds are the rows:\n{screen}");
    assert!(!screen.contains("loading"), "{screen}");
}

#[tokio::test]
async fn on_live_an_order_restates_its_amount_and_hold_and_waits_for_the_product_typed() {
    let (mut h, state) = started("products", true).await;
    h.keys("<Enter>");
    h.keys("s");
    h.settle().await;
    h.keys("<Tab><Tab><Tab>");
    h.type_text("101.00");
    h.keys("<Tab>");
    h.type_text("0.25");
    h.keys("<C-s>");
    assert_eq!(popup_title(&h), "confirm orders_create", "{}", h.screen());
    let screen = h.screen();
    assert!(screen.contains("LIVE"), "{screen}");
    assert!(screen.contains("places an order: sell 0.25 BTC at 101.00 USD"), "{screen}");
    assert!(screen.contains("hold: 0.25 BTC (the size sold)"), "{screen}");
    assert!(screen.contains("estimated proceeds: 0.25 BTC × 101.00 = 25.25 USD before fees"), "{screen}");
    h.keys("y<Enter>");
    h.settle().await;
    assert!(state.lock().unwrap().placed.is_empty(), "a reflexive key sends nothing on LIVE");
    assert_eq!(popup_title(&h), "confirm orders_create");
    h.keys("<C-u>");
    h.type_text("BTC-USD");
    h.keys("<Enter>");
    h.settle().await;
    let placed = state.lock().unwrap().placed.clone();
    assert_eq!(placed.len(), 1, "{}", h.screen());
    assert_eq!((placed[0]["side"].as_str(), placed[0]["size"].as_str()), (Some("sell"), Some("0.25")));
}

#[tokio::test]
async fn a_product_typed_into_the_form_is_asked_for_before_anything_is_sent() {
    let (mut h, state) = coinbase("orders").await;
    let op = opsdeck::catalog::Service::Coinbase.operation("orders_create").unwrap();
    h.console.app.open_form(op);
    let Some(Popup::Form(form)) = h.console.app.popup.as_ref() else { panic!("form:\n{}", h.screen()) };
    assert_eq!(form.values().get("product_id").map(String::as_str), Some("BTC-USD"), "the selected order's product");
    h.settle().await;
    // Another product, typed: the tab has not seen it.
    h.keys("<C-u>");
    h.type_text("ETH-USD");
    h.keys("<Tab>");
    h.type_text("buy");
    h.keys("<Tab><Tab>");
    h.type_text("3.001");
    h.keys("<Tab>");
    h.type_text("10");
    assert!(h.screen().contains("ETH-USD: increments unknown yet (asking the exchange)"), "{}", h.screen());
    h.keys("<C-s>");
    assert_eq!(popup_title(&h), "form orders_create");
    assert!(
        h.screen().contains("asking the service what this form checks against; it sends when answered"),
        "{}",
        h.screen()
    );
    // The Ctrl-s is not dropped: when the answer is in, the form is checked against it at once.
    h.settle().await;
    let screen = h.screen();
    assert_eq!(popup_title(&h), "form orders_create", "{screen}");
    assert!(line_of(&screen, "✗").contains("3.001 is finer than ETH-USD's price step 0.01 USD"), "{screen}");
    assert!(state.lock().unwrap().placed.is_empty(), "nothing was sent");
}

#[tokio::test]
async fn ctrl_s_while_the_increments_are_asked_for_asks_to_send_when_they_come() {
    let (mut h, state) = coinbase("orders").await;
    let op = opsdeck::catalog::Service::Coinbase.operation("orders_create").unwrap();
    h.console.app.open_form(op);
    h.settle().await;
    h.keys("<C-u>");
    h.type_text("ETH-USD");
    h.keys("<Tab>");
    h.type_text("buy");
    h.keys("<Tab><Tab>");
    h.type_text("3.01");
    h.keys("<Tab>");
    h.type_text("10");
    h.keys("<C-s>");
    assert_eq!(popup_title(&h), "form orders_create", "it waits for the increments");
    h.settle().await;
    assert_eq!(popup_title(&h), "confirm orders_create", "then asks, with no second Ctrl-s:\n{}", h.screen());
    assert!(state.lock().unwrap().placed.is_empty(), "nothing is sent before the answer");
}

/// The Coinbase tab on the embedded simulator, `resource` listed, the browser focused.
async fn simulator(resource: &str) -> Harness {
    let mut h = Harness::new().await;
    h.keys("5");
    h.settle().await;
    h.browse(resource).await;
    h.console.app.focus = Focus::Browser;
    h
}

/// Moves the browser down to the row whose `field` is `value`.
fn select_row(h: &mut Harness, field: &str, value: &str) -> serde_json::Map<String, Value> {
    for _ in 0..50 {
        if let Some(record) = h.console.app.tab().selected_record() {
            if record.get(field).and_then(Value::as_str) == Some(value) {
                return record;
            }
        }
        h.keys("j");
    }
    panic!("no row with {field} {value}:\n{}", h.screen());
}

fn decimal(value: Option<&Value>) -> rust_decimal::Decimal {
    value.and_then(Value::as_str).unwrap().parse().unwrap()
}

#[tokio::test]
async fn an_accounts_ledger_has_every_movement_and_adds_up_to_its_balance() {
    let mut h = simulator("accounts").await;
    // Room for the title beside the date filter's note (a narrow one ends in `…`).
    h.resize(220, 40);
    let account = select_row(&mut h, "currency", "BTC");
    let balance = decimal(account.get("balance"));
    h.keys("<Enter>");
    assert_eq!(popup_title(&h), "BTC account", "{}", h.screen());
    h.keys("l");
    h.settle().await;
    let screen = h.screen();
    assert!(screen.contains("ledger of BTC"), "the title names the account by its currency:\n{screen}");
    assert!(!screen.contains("accounts of"), "{screen}");
    let entries = h.console.app.tab().browser.records();
    let types: Vec<&str> = entries.iter().filter_map(|e| e["type"].as_str()).collect();
    // Newest first: the oldest entry is the seeded deposit the balance started from.
    let oldest = entries.last().unwrap();
    assert_eq!(
        (oldest["type"].as_str(), oldest["details"]["transfer_type"].as_str()),
        (Some("transfer"), Some("deposit"))
    );
    assert!(types.contains(&"match") && types.contains(&"fee"), "fills and the withdrawal's fee: {types:?}");
    let withdrawn = entries.iter().filter(|e| e["details"]["transfer_type"] == "withdraw").count();
    assert_eq!(withdrawn, 2, "the withdrawal sent and its network fee, each an entry: {entries:?}");
    let sum: rust_decimal::Decimal = entries.iter().map(|e| decimal(e.get("amount"))).sum();
    assert_eq!(sum, balance, "the ledger adds up to the balance:\n{screen}");
    assert_eq!(decimal(entries[0].get("balance")), balance, "the newest entry's balance after is the balance");
    assert!(line_of(&screen, "deposit").contains("transfer"), "{screen}");

    // The holds of the same account are called by it too.
    h.keys("<Esc>");
    h.keys("b");
    assert_eq!(popup_title(&h), "BTC account", "{}", h.screen());
    h.keys("h");
    h.settle().await;
    let screen = h.screen();
    assert!(screen.contains("holds of BTC"), "{screen}");
}

/// Places a limit buy of BTC-USD through the market view's form and confirms it; the view of
/// the placed order is open when this returns.
async fn place_buy(h: &mut Harness, price: &str, size: &str) {
    h.keys("<Enter>");
    assert_eq!(popup_title(h), "BTC-USD · market", "{}", h.screen());
    h.keys("b");
    h.settle().await;
    h.keys("<Tab><Tab><Tab>");
    h.type_text(price);
    h.keys("<Tab>");
    h.type_text(size);
    h.keys("<C-s>");
    assert_eq!(popup_title(h), "confirm orders_create", "{}", h.screen());
    h.keys("y");
    h.settle().await;
}

#[tokio::test]
async fn the_view_of_a_placed_order_follows_it_until_done_and_r_asks_again() {
    let mut h = simulator("products").await;
    let mut at = Instant::now();
    // Far under the market: accepted, then resting on the book.
    place_buy(&mut h, "1000.00", "0.01").await;
    assert_eq!(popup_title(&h), "order BTC-USD buy · pending", "{}", h.screen());
    // The view newly open waits an interval before it asks again.
    h.console.app.on_tick(at);
    time_passes(&mut h, &mut at).await;
    assert_eq!(popup_title(&h), "order BTC-USD buy · open", "the view follows the order:\n{}", h.screen());
    assert!(h.screen().contains("r refresh"), "{}", h.screen());
    let id = match &h.console.app.popup {
        Some(Popup::Detail(detail)) => detail.record.as_ref().unwrap()["id"].as_str().unwrap().to_owned(),
        _ => unreachable!(),
    };
    // `r` asks for the order now, and the view takes the answer.
    h.keys("r");
    let sent = h.console.app.tab().sent.as_ref().map(|r| r.url.clone()).unwrap_or_default();
    assert!(sent.ends_with(&format!("/orders/{id}")), "{sent}");
    h.settle().await;
    assert_eq!(popup_title(&h), "order BTC-USD buy · open", "{}", h.screen());

    // Over the market: it takes the asks at once and the view says it is done.
    h.keys("<Esc>");
    h.console.app.focus = Focus::Browser;
    place_buy(&mut h, "1000000.00", "0.001").await;
    assert_eq!(popup_title(&h), "order BTC-USD buy · pending", "{}", h.screen());
    // The view newly open waits an interval before it asks again.
    h.console.app.on_tick(at);
    time_passes(&mut h, &mut at).await;
    assert_eq!(popup_title(&h), "order BTC-USD buy · done", "{}", h.screen());
    assert!(h.screen().contains("done filled"), "{}", h.screen());
    assert!(!h.screen().contains("● live"), "a done order is no longer asked for:\n{}", h.screen());
}

#[tokio::test]
async fn a_dollar_accounts_ledger_and_holds_read_to_the_cent() {
    let mut h = simulator("accounts").await;
    h.resize(220, 40);
    select_row(&mut h, "currency", "USD");
    h.keys("<Enter>l");
    h.settle().await;
    let screen = h.screen();
    assert!(screen.contains("ledger of USD"), "{screen}");
    let entries = h.console.app.tab().browser.records();
    let newest = entries.first().unwrap();
    let written = |field: &str| {
        let amount =
            decimal(newest.get(field)).round_dp_with_strategy(2, rust_decimal::RoundingStrategy::MidpointAwayFromZero);
        opsdeck::format::money_text(&amount.to_string()).unwrap()
    };
    let row = line_of(&screen, &time_of(newest));
    assert!(row.contains(&written("amount")) && row.contains(&written("balance")), "to the cent: {row}\n{screen}");
    // The list's own cells (the inspector beside it keeps the wire's text).
    let list: String = screen.lines().map(|l| l.split('│').nth(3).unwrap_or_default().to_owned() + "\n").collect();
    for entry in &entries {
        let raw = entry["balance"].as_str().unwrap();
        let (_, fraction) = raw.split_once('.').unwrap();
        let trimmed = fraction.trim_end_matches('0');
        if trimmed.len() > 2 {
            assert!(!list.contains(&format!(".{trimmed}")), "{raw} is written to the cent:\n{screen}");
        }
    }
    h.keys("<Esc>bh");
    h.settle().await;
    let screen = h.screen();
    assert!(screen.contains("holds of USD"), "{screen}");
    let holds = h.console.app.tab().browser.records();
    let hold = holds.first().expect("the seeded exchange holds dollars for an open buy");
    let cents =
        decimal(hold.get("amount")).round_dp_with_strategy(2, rust_decimal::RoundingStrategy::MidpointAwayFromZero);
    assert!(screen.contains(&opsdeck::format::money_text(&cents.to_string()).unwrap()), "{screen}");
}

/// A record's `created_at` as the console writes times.
fn time_of(record: &Value) -> String {
    opsdeck::format::time_text(record["created_at"].as_str().unwrap())
}
