//! The Coinbase Exchange WebSocket feed against the in-process simulator over a real socket:
//! subscribing and its refusals in the exchange's words, the signed channels, each channel's
//! first messages, the `full` channel's sequence without gaps, a level-2 book rebuilt from the
//! feed equal to the REST book at the same sequence, the tape equal to REST's trades, the user
//! channel following an order placed over REST, and heartbeats.

#![allow(clippy::unwrap_used, reason = "a test panics on failure")]

use std::collections::BTreeMap;
use std::time::Duration;

use futures_util::SinkExt;
use opsdeck::catalog::Service;
use opsdeck::sandbox::credentials;
use rust_decimal::Decimal;
use serde_json::{json, Value};
use tokio_tungstenite::tungstenite::Message;

mod common;

use common::Ws;

struct Feed {
    ws: Ws,
}

impl Feed {
    /// A socket to the feed, at the URL the control port lists for it.
    async fn open(cb: &common::Simulated) -> Feed {
        let index = cb.http.get(cb.sandbox.control_url()).send().await.unwrap().bytes().await.unwrap();
        let index: Value = serde_json::from_slice(&index).unwrap();
        let services = index["services"].as_array().unwrap();
        let entry = services.iter().find(|s| s["service"] == "coinbase").unwrap();
        let url = entry["websocket_url"].as_str().unwrap();
        assert_eq!(url, cb.sandbox.base_url(Service::Coinbase).replace("http://", "ws://"));
        let (ws, response) = tokio_tungstenite::connect_async(url).await.unwrap();
        assert_eq!(response.status(), 101);
        Feed { ws }
    }

    async fn send(&mut self, message: Value) {
        common::send_json(&mut self.ws, &message).await;
    }

    /// The next message; `None` once the socket closes.
    async fn next(&mut self) -> Option<Value> {
        common::next_json(&mut self.ws).await
    }

    /// The next answer to what the client sent (`subscriptions` or `error`), skipping the
    /// channels' own messages.
    async fn next_reply(&mut self) -> Value {
        loop {
            let message = self.next().await.expect("the socket is open");
            if matches!(message["type"].as_str(), Some("subscriptions" | "error")) {
                return message;
            }
        }
    }

    /// The next message of `kind`, skipping others.
    async fn next_of(&mut self, kind: &str) -> Value {
        loop {
            let message = self.next().await.expect("the socket is open");
            if message["type"] == kind {
                return message;
            }
        }
    }
}

/// The signed fields of a subscribe, as the exchange documents them.
fn signature(key: &str) -> Value {
    let timestamp = format!("{:.3}", now_s());
    let signature =
        opsdeck::sandbox::coinbase::sign(credentials::COINBASE_SECRET, &timestamp, "GET", "/users/self/verify", b"")
            .unwrap();
    json!({"key": key, "signature": signature, "passphrase": credentials::COINBASE_PASSPHRASE, "timestamp": timestamp})
}

fn signed(mut message: Value) -> Value {
    let fields = signature(credentials::COINBASE_KEY);
    for (name, value) in fields.as_object().unwrap() {
        message[name] = value.clone();
    }
    message
}

fn now_s() -> f64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs_f64()
}

fn dec(value: &Value) -> Decimal {
    value.as_str().unwrap_or_else(|| panic!("a decimal string: {value}")).parse().unwrap()
}

async fn market(cb: &common::Simulated, body: Value) {
    let answer = cb.http.post(format!("{}/coinbase/market", cb.sandbox.control_url())).body(body.to_string());
    assert!(answer.send().await.unwrap().status().is_success());
}

async fn rest(cb: &common::Simulated, op: &str, params: &[(&str, &str)], body: Option<Value>) -> Value {
    let response = cb.send(&cb.target, op, params, body).await.unwrap_or_else(|e| panic!("{op}: {e}"));
    serde_json::from_slice(&response.body).unwrap()
}

#[tokio::test]
async fn subscribing_answers_subscriptions_and_refuses_in_the_exchanges_words() {
    let cb = common::Simulated::start(Service::Coinbase).await;
    let mut feed = Feed::open(&cb).await;
    feed.send(json!({
        "type": "subscribe",
        "product_ids": ["BTC-USD"],
        "channels": ["heartbeat", "ticker_batch", {"name": "matches", "product_ids": ["ETH-USD"]}, "level2_batch"],
    }))
    .await;
    let answer = feed.next_of("subscriptions").await;
    assert_eq!(
        answer["channels"],
        json!([
            {"name": "heartbeat", "product_ids": ["BTC-USD"], "account_ids": null},
            {"name": "ticker_1000", "product_ids": ["BTC-USD"], "account_ids": null},
            {"name": "level2_50", "product_ids": ["BTC-USD"], "account_ids": null},
            {"name": "matches", "product_ids": ["BTC-USD", "ETH-USD"], "account_ids": null},
        ]),
        "the whole set, the batched channels by their older names, top-level products added to each"
    );

    // One error per channel for a product that does not exist; the rest subscribes.
    feed.send(
        json!({"type": "subscribe", "product_ids": ["BTC-USDX", "SOL-USD"], "channels": ["ticker", "heartbeat"]}),
    )
    .await;
    for _ in 0..2 {
        let error = feed.next_of("error").await;
        assert_eq!(
            error,
            json!({"type": "error", "message": "Failed to subscribe", "reason": "BTC-USDX is not a valid product"})
        );
    }
    let answer = feed.next_of("subscriptions").await;
    assert_eq!(
        answer["channels"][0],
        json!({"name": "heartbeat", "product_ids": ["BTC-USD", "SOL-USD"], "account_ids": null})
    );

    // A refusal of one channel still answers the set in force; one of the whole message does
    // not.
    let refusals = [
        (json!({"type": "subscribe", "product_ids": ["BTC-USD"]}), "Failed to subscribe", "No channels provided", false),
        (json!({"type": "unsubscribe", "channels": []}), "Failed to unsubscribe", "No channels provided", false),
        (
            json!({"type": "subscribe", "product_ids": ["BTC-USD"], "channels": ["ticket"]}),
            "Failed to subscribe",
            "ticket is not a valid channel",
            true,
        ),
        (
            json!({"type": "subscribe", "product_ids": ["BTC-USD"], "channels": ["full"]}),
            "Failed to subscribe",
            "level2, level3, and full channels now require authentication. https://docs.cloud.coinbase.com/exchange/docs/websocket-auth",
            true,
        ),
        (
            json!({"type": "subscribe", "product_ids": ["BTC-USD"], "channels": ["user"], "key": credentials::COINBASE_KEY, "signature": "bm9wZQ==", "passphrase": credentials::COINBASE_PASSPHRASE, "timestamp": format!("{}", now_s() as u64)}),
            "Authentication Failed",
            "invalid signature",
            false,
        ),
        (json!({"type": "hello"}), "Failed to subscribe", "type must be subscribe or unsubscribe", false),
    ];
    for (message, text, reason, answered) in refusals {
        feed.send(message.clone()).await;
        let error = feed.next_reply().await;
        assert_eq!((error["message"].as_str(), error["reason"].as_str()), (Some(text), Some(reason)), "{message}");
        if answered {
            assert_eq!(feed.next_reply().await["type"], "subscriptions", "{message}");
        }
    }
    feed.ws.send(Message::Text("{not json".into())).await.unwrap();
    assert_eq!(feed.next_of("error").await["message"], "Malformed JSON");

    // Still open after every refusal; unsubscribing answers the set that is left.
    feed.send(
        json!({"type": "unsubscribe", "channels": ["heartbeat", {"name": "matches", "product_ids": ["ETH-USD"]}]}),
    )
    .await;
    let answer = feed.next_of("subscriptions").await;
    let names: Vec<&str> = answer["channels"].as_array().unwrap().iter().map(|c| c["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["ticker", "ticker_1000", "level2_50", "matches"]);
    assert_eq!(answer["channels"][3]["product_ids"], json!(["BTC-USD"]));
}

#[tokio::test]
async fn a_socket_that_never_subscribes_is_closed_after_five_seconds() {
    let cb = common::Simulated::start(Service::Coinbase).await;
    let mut feed = Feed::open(&cb).await;
    let started = std::time::Instant::now();
    assert_eq!(feed.next().await, None, "closed, with nothing sent");
    assert!(started.elapsed() >= Duration::from_secs(4), "not before its time: {:?}", started.elapsed());
}

#[tokio::test]
async fn first_messages_ticker_last_match_snapshot_and_status() {
    let cb = common::Simulated::start(Service::Coinbase).await;
    market(&cb, json!({"paused": true})).await;
    let mut feed = Feed::open(&cb).await;
    feed.send(signed(json!({
        "type": "subscribe",
        "product_ids": ["BTC-USD"],
        "channels": ["ticker", "matches", "level2", {"name": "status"}],
    })))
    .await;
    feed.next_of("subscriptions").await;
    let mut seen = BTreeMap::new();
    while seen.len() < 4 {
        let message = feed.next().await.unwrap();
        seen.insert(message["type"].as_str().unwrap().to_owned(), message);
    }
    let rest_ticker = rest(&cb, "products_get_ticker", &[("product_id", "BTC-USD")], None).await;
    let ticker = &seen["ticker"];
    assert_eq!(ticker["price"], rest_ticker["price"]);
    assert_eq!(ticker["trade_id"], rest_ticker["trade_id"]);
    assert_eq!(ticker["best_bid"], rest_ticker["bid"]);
    assert_eq!(ticker["best_ask"], rest_ticker["ask"]);
    let stats = rest(&cb, "products_get_stats", &[("product_id", "BTC-USD")], None).await;
    assert_eq!((&ticker["open_24h"], &ticker["volume_24h"]), (&stats["open"], &stats["volume"]));
    let tape = rest(&cb, "products_get_trades", &[("product_id", "BTC-USD"), ("limit", "1")], None).await;
    let last = &seen["last_match"];
    assert_eq!(
        (&last["trade_id"], &last["price"], &last["side"]),
        (&tape[0]["trade_id"], &tape[0]["price"], &tape[0]["side"])
    );
    assert_ne!(ticker["side"], last["side"], "the ticker names the taker's side, a match the maker's");
    let book = rest(&cb, "products_get_order_book", &[("product_id", "BTC-USD"), ("level", "2")], None).await;
    let levels = |rows: &Value| -> Vec<(Value, Value)> {
        rows.as_array().unwrap().iter().map(|r| (r[0].clone(), r[1].clone())).collect()
    };
    assert_eq!(levels(&seen["snapshot"]["bids"]), levels(&book["bids"]));
    assert_eq!(levels(&seen["snapshot"]["asks"]), levels(&book["asks"]));
    assert_eq!(seen["status"]["products"].as_array().unwrap().len(), 7);
    assert!(seen["status"]["currencies"].as_array().unwrap().iter().any(|c| c["id"] == "USD"));
}

/// The level-2 book the feed's messages make, and the `full` channel's last sequence.
#[derive(Default)]
struct Rebuilt {
    bids: BTreeMap<Decimal, Decimal>,
    asks: BTreeMap<Decimal, Decimal>,
    sequence: u64,
    gaps: u64,
    trades: Vec<Value>,
}

impl Rebuilt {
    fn apply(&mut self, message: &Value) {
        match message["type"].as_str().unwrap() {
            "snapshot" => {
                for (side, rows) in [(&mut self.bids, &message["bids"]), (&mut self.asks, &message["asks"])] {
                    side.clear();
                    for row in rows.as_array().unwrap() {
                        side.insert(dec(&row[0]), dec(&row[1]));
                    }
                }
            }
            "l2update" => {
                for change in message["changes"].as_array().unwrap() {
                    let side = if change[0] == "buy" { &mut self.bids } else { &mut self.asks };
                    let (price, size) = (dec(&change[1]), dec(&change[2]));
                    if size.is_zero() {
                        side.remove(&price);
                    } else {
                        side.insert(price, size);
                    }
                }
            }
            "received" | "open" | "done" | "match" | "change" => {
                let sequence = message["sequence"].as_u64().unwrap();
                if self.sequence != 0 && sequence != self.sequence + 1 {
                    self.gaps += 1;
                }
                self.sequence = sequence;
                if message["type"] == "match" {
                    self.trades.push(message.clone());
                }
            }
            _ => {}
        }
    }
}

fn rest_levels(rows: &Value) -> BTreeMap<Decimal, Decimal> {
    rows.as_array().unwrap().iter().map(|r| (dec(&r[0]), dec(&r[1]))).collect()
}

#[tokio::test]
async fn the_feed_and_the_rest_book_agree_at_every_sequence_while_the_market_runs() {
    let cb = common::Simulated::start(Service::Coinbase).await;
    market(&cb, json!({"rate": 40})).await;
    let mut feed = Feed::open(&cb).await;
    feed.send(signed(json!({"type": "subscribe", "product_ids": ["BTC-USD"], "channels": ["full", "level2"]}))).await;
    feed.next_of("subscriptions").await;
    let mut book = Rebuilt::default();
    book.apply(&feed.next_of("snapshot").await);
    let mut compared = 0;
    for round in 0..6 {
        // Our own orders too: one resting, one that takes.
        let side = if round % 2 == 0 { "buy" } else { "sell" };
        rest(
            &cb,
            "orders_create",
            &[],
            Some(json!({"product_id": "BTC-USD", "side": side, "type": "market", "size": "0.001"})),
        )
        .await;
        let rest_book = rest(&cb, "products_get_order_book", &[("product_id", "BTC-USD"), ("level", "2")], None).await;
        let at = rest_book["sequence"].as_u64().unwrap();
        // Read the feed to the REST book's sequence, then every level-2 update that event made,
        // up to the next event's message.
        while book.sequence < at {
            let message = feed.next().await.unwrap();
            book.apply(&message);
        }
        assert_eq!(book.sequence, at, "the REST book's sequence is an event's");
        let pending = loop {
            let message = feed.next().await.unwrap();
            if message.get("sequence").is_some_and(|s| s.as_u64().is_some()) && message["type"] != "heartbeat" {
                break message;
            }
            book.apply(&message);
        };
        assert_eq!(book.bids, rest_levels(&rest_book["bids"]), "bids at sequence {at}");
        assert_eq!(book.asks, rest_levels(&rest_book["asks"]), "asks at sequence {at}");
        book.apply(&pending);
        compared += 1;
    }
    assert_eq!(compared, 6);
    assert_eq!(book.gaps, 0, "the full channel's sequence has no gap");
    assert!(!book.trades.is_empty(), "our market orders traded");
    // The tape the feed told is REST's.
    let tape = rest(&cb, "products_get_trades", &[("product_id", "BTC-USD"), ("limit", "1000")], None).await;
    let by_id: BTreeMap<u64, &Value> =
        tape.as_array().unwrap().iter().map(|t| (t["trade_id"].as_u64().unwrap(), t)).collect();
    for trade in &book.trades {
        let listed = by_id[&trade["trade_id"].as_u64().unwrap()];
        assert_eq!(
            (&trade["price"], dec(&trade["size"]), &trade["side"]),
            (&listed["price"], dec(&listed["size"]), &listed["side"])
        );
        assert_eq!(trade["time"], listed["time"]);
    }
}

#[tokio::test]
async fn the_user_channel_follows_an_order_placed_over_rest_and_no_one_elses() {
    let cb = common::Simulated::start(Service::Coinbase).await;
    market(&cb, json!({"paused": true})).await;
    let mut feed = Feed::open(&cb).await;
    feed.send(signed(json!({"type": "subscribe", "product_ids": ["BTC-USD"], "channels": ["user", "heartbeat"]})))
        .await;
    feed.next_of("subscriptions").await;
    let profile = &rest(&cb, "profiles_list", &[], None).await[0];
    let oid = "4c2b5f8e-6a1d-4e7b-9c3a-1f2e3d4c5b6a";
    let order = rest(
        &cb,
        "orders_create",
        &[],
        Some(json!({"product_id": "BTC-USD", "side": "buy", "type": "limit", "price": "1000.00", "size": "0.01", "client_oid": oid})),
    )
    .await;
    let received = feed.next_of("received").await;
    assert_eq!(received["order_id"], order["id"]);
    assert_eq!((received["client_oid"].as_str(), received["order_type"].as_str()), (Some(oid), Some("limit")));
    assert_eq!(received["profile_id"], profile["id"]);
    assert_eq!(received["user_id"], profile["user_id"]);
    let open = feed.next_of("open").await;
    assert_eq!((open["remaining_size"].as_str(), open["price"].as_str()), (Some("0.01000000"), Some("1000.00")));
    assert_eq!(open["sequence"].as_u64().unwrap(), received["sequence"].as_u64().unwrap() + 1);
    let heartbeat = feed.next_of("heartbeat").await;
    assert_eq!(heartbeat["sequence"], open["sequence"], "a heartbeat carries the last sequence, taking none");

    // A market buy takes from the simulated traders' asks: we are the taker.
    let taken = rest(
        &cb,
        "orders_create",
        &[],
        Some(json!({"product_id": "BTC-USD", "side": "buy", "type": "market", "size": "0.0001"})),
    )
    .await;
    let received = feed.next_of("received").await;
    assert_eq!(
        (received["order_id"].as_str(), received["order_type"].as_str()),
        (taken["id"].as_str(), Some("market"))
    );
    let matched = feed.next_of("match").await;
    assert_eq!(matched["taker_order_id"], taken["id"]);
    assert_eq!((&matched["taker_user_id"], &matched["taker_profile_id"]), (&profile["user_id"], &profile["id"]));
    assert!(matched["taker_fee_rate"].as_str().is_some(), "{matched}");
    assert_eq!(matched["side"], "sell", "the maker's side");
    let done = feed.next_of("done").await;
    assert_eq!((done["order_id"].as_str(), done["reason"].as_str()), (taken["id"].as_str(), Some("filled")));
    assert!(done.get("price").is_none() && done.get("remaining_size").is_none(), "a market order's done: {done}");
    rest(&cb, "orders_cancel", &[("order_id", order["id"].as_str().unwrap())], None).await;
    let done = feed.next_of("done").await;
    assert_eq!((done["order_id"].as_str(), done["reason"].as_str()), (order["id"].as_str(), Some("canceled")));
    assert_eq!(done["remaining_size"], "0.01000000");

    // The simulated traders' orders are not ours: with the market running, the channel stays
    // quiet but for heartbeats.
    market(&cb, json!({"paused": false, "rate": 50})).await;
    for _ in 0..2 {
        assert_eq!(feed.next().await.unwrap()["type"], "heartbeat");
    }
}

#[tokio::test]
async fn a_reset_ends_the_feeds_sockets_and_sequences_go_on() {
    let cb = common::Simulated::start(Service::Coinbase).await;
    market(&cb, json!({"paused": true})).await;
    let mut feed = Feed::open(&cb).await;
    feed.send(json!({"type": "subscribe", "product_ids": ["BTC-USD"], "channels": ["heartbeat"]})).await;
    feed.next_of("subscriptions").await;
    let before = feed.next_of("heartbeat").await["sequence"].as_u64().unwrap();
    let reset = cb.http.post(format!("{}/reset?service=coinbase", cb.sandbox.control_url())).send().await.unwrap();
    assert!(reset.status().is_success());
    while feed.next().await.is_some() {}
    let book = rest(&cb, "products_get_order_book", &[("product_id", "BTC-USD")], None).await;
    assert!(book["sequence"].as_u64().unwrap() >= before, "a sequence never goes back: {book}");
}
