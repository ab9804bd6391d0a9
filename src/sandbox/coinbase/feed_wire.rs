//! The WebSocket feed's messages as the exchange writes them: decimals as strings (prices at the
//! product's places, sizes at eight), `sequence` and `trade_id` as bare integers, times with
//! microseconds. Written field by field into one string, since the busiest channel sends tens
//! of thousands a second; every text value is escaped.

use std::fmt::Write as _;

use axum::extract::ws::Utf8Bytes;
use rust_decimal::Decimal;
use serde_json::{json, Value};

use super::book::Side;
use super::catalog::{ProductSpec, CURRENCIES, PRODUCTS};
use super::events::{Event, EventKind, OrderRef, Stats};
use super::wire;

/// A JSON object written as it goes.
pub struct Obj(String);

impl Obj {
    pub fn new(kind: &str) -> Obj {
        let mut obj = Obj(String::with_capacity(320));
        obj.0.push('{');
        obj.str("type", kind)
    }

    fn key(&mut self, key: &str) {
        if self.0.len() > 1 {
            self.0.push(',');
        }
        escaped(&mut self.0, key);
        self.0.push(':');
    }

    pub fn str(mut self, key: &str, value: &str) -> Obj {
        self.key(key);
        escaped(&mut self.0, value);
        self
    }

    pub fn opt_str(self, key: &str, value: Option<&str>) -> Obj {
        match value {
            Some(value) => self.str(key, value),
            None => self,
        }
    }

    pub fn int(mut self, key: &str, value: u64) -> Obj {
        self.key(key);
        let _ = write!(self.0, "{value}");
        self
    }

    /// A value already written as JSON.
    pub fn raw(mut self, key: &str, json: &str) -> Obj {
        self.key(key);
        self.0.push_str(json);
        self
    }

    pub fn done(mut self) -> Utf8Bytes {
        self.0.push('}');
        Utf8Bytes::from(self.0)
    }
}

/// `text` as a JSON string.
fn escaped(out: &mut String, text: &str) {
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if u32::from(c) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

fn price(value: Decimal, product: usize) -> String {
    wire::price(value, &PRODUCTS[product])
}

/// The identity an authenticated subscriber sees on its own orders.
pub struct Owner<'a> {
    pub user_id: &'a str,
    pub profile_id: &'a str,
    /// The fee rate of the owner's order in a match, and whether it was the maker's.
    pub fee: Option<(bool, Decimal)>,
}

/// The `full` channel's message for an event (the `matches` channel's too, for a match); with
/// `owner`, the `user` channel's, which adds who it is and what only the owner may see
/// (`client_oid`, the fee rate). `None` for an event only its owner hears, asked without one.
pub fn event(event: &Event, owner: Option<&Owner<'_>>) -> Option<Utf8Bytes> {
    let p = event.product;
    let spec = &PRODUCTS[p];
    let head = |kind: &str| {
        Obj::new(kind).str("time", &wire::time(event.at_ms)).str("product_id", spec.id).int("sequence", event.sequence)
    };
    let order_fields = |obj: Obj, order: &OrderRef| {
        obj.str("order_id", &order.id)
            .str("side", order.side.as_str())
            .opt_str("price", order.price.map(|v| price(v, p)).as_deref())
    };
    let obj = match &event.kind {
        EventKind::Received { order, order_type, size, funds, client_oid } => {
            let obj = order_fields(head("received"), order)
                .str("order_type", order_type)
                .opt_str("size", size.map(wire::d8).as_deref())
                .opt_str("funds", funds.map(wire::d8).as_deref());
            match owner {
                Some(_) => obj.opt_str("client_oid", client_oid.as_deref()),
                None => obj,
            }
        }
        EventKind::Open { order, remaining } => {
            order_fields(head("open"), order).str("remaining_size", &wire::d8(*remaining))
        }
        EventKind::Done { order, reason, remaining, .. } => {
            let obj = order_fields(head("done"), order).str("reason", reason);
            // A market order's done says neither price nor what is left.
            match (order.price, remaining) {
                (Some(_), Some(left)) => obj.str("remaining_size", &wire::d8(*left)),
                _ => obj,
            }
        }
        EventKind::Change { order, old_size, new_size, .. } => order_fields(head("change"), order)
            .str("reason", "STP")
            .str("old_size", &wire::d8(*old_size))
            .str("new_size", &wire::d8(*new_size)),
        EventKind::Match { .. } => return Tape::of(event).map(|tape| trade(&tape, "match", owner)),
        EventKind::Activate { order, stop_type, stop_price, size, funds } => {
            let owner = owner?;
            #[expect(clippy::cast_precision_loss, reason = "ms since the epoch fit an f64 exactly")]
            let seconds = event.at_ms as f64 / 1000.0;
            return Some(
                Obj::new("activate")
                    .str("product_id", spec.id)
                    .str("timestamp", &format!("{seconds:.6}"))
                    .str("user_id", owner.user_id)
                    .str("profile_id", owner.profile_id)
                    .str("order_id", &order.id)
                    .str("stop_type", stop_type)
                    .str("side", order.side.as_str())
                    .str("stop_price", &price(*stop_price, p))
                    .opt_str("price", order.price.map(|v| price(v, p)).as_deref())
                    .opt_str("size", size.map(wire::d8).as_deref())
                    .opt_str("funds", funds.map(wire::d8).as_deref())
                    .raw("private", "true")
                    .done(),
            );
        }
    };
    Some(match owner {
        Some(owner) => obj.str("user_id", owner.user_id).str("profile_id", owner.profile_id).done(),
        None => obj.done(),
    })
}

/// A trade as the feed tells it.
#[derive(Clone, Debug)]
pub struct Tape {
    pub product: usize,
    pub sequence: u64,
    pub trade_id: u64,
    pub maker_order_id: String,
    pub taker_order_id: String,
    pub maker_side: Side,
    pub price: Decimal,
    pub size: Decimal,
    pub at_ms: i64,
}

impl Tape {
    /// A match event's trade; `None` for any other event.
    pub fn of(event: &Event) -> Option<Tape> {
        let EventKind::Match { trade_id, maker, taker, price, size, .. } = &event.kind else { return None };
        Some(Tape {
            product: event.product,
            sequence: event.sequence,
            trade_id: *trade_id,
            maker_order_id: maker.id.clone(),
            taker_order_id: taker.id.clone(),
            maker_side: maker.side,
            price: *price,
            size: *size,
            at_ms: event.at_ms,
        })
    }
}

/// A trade as `match` (or `last_match`, the one a new `matches` subscriber is sent first).
pub fn trade(tape: &Tape, kind: &str, owner: Option<&Owner<'_>>) -> Utf8Bytes {
    let obj = Obj::new(kind)
        .int("trade_id", tape.trade_id)
        .str("maker_order_id", &tape.maker_order_id)
        .str("taker_order_id", &tape.taker_order_id)
        .str("side", tape.maker_side.as_str())
        .str("size", &wire::d8(tape.size))
        .str("price", &price(tape.price, tape.product))
        .str("product_id", PRODUCTS[tape.product].id)
        .int("sequence", tape.sequence)
        .str("time", &wire::time(tape.at_ms));
    let Some(owner) = owner else { return obj.done() };
    let obj = obj.str("user_id", owner.user_id).str("profile_id", owner.profile_id);
    match owner.fee {
        Some((true, rate)) => obj
            .str("maker_user_id", owner.user_id)
            .str("maker_profile_id", owner.profile_id)
            .str("maker_fee_rate", &wire::fixed(rate, 4))
            .done(),
        Some((false, rate)) => obj
            .str("taker_user_id", owner.user_id)
            .str("taker_profile_id", owner.profile_id)
            .str("taker_fee_rate", &wire::fixed(rate, 4))
            .done(),
        None => obj.done(),
    }
}

/// The last trade and the book's top, as the ticker tells them.
pub struct Ticker {
    pub sequence: u64,
    pub trade_id: u64,
    pub price: Decimal,
    pub size: Decimal,
    /// The taker's side (a match's `side` is the maker's).
    pub taker_side: Side,
    pub at_ms: i64,
    pub stats: Stats,
}

/// A book level: its price and size.
pub type Level = (Decimal, Decimal);

pub fn ticker(product: usize, t: &Ticker, bid: Option<Level>, ask: Option<Level>) -> Utf8Bytes {
    let spec = &PRODUCTS[product];
    let p = |v: Option<Decimal>| v.map_or_else(|| "0".to_owned(), |v| price(v, product));
    Obj::new("ticker")
        .int("sequence", t.sequence)
        .str("product_id", spec.id)
        .str("price", &price(t.price, product))
        .str("open_24h", &p(t.stats.open))
        .str("volume_24h", &wire::d8(t.stats.volume))
        .str("low_24h", &p(t.stats.low))
        .str("high_24h", &p(t.stats.high))
        .str("volume_30d", &wire::d8(t.stats.volume_30day))
        .str("best_bid", &p(bid.map(|(price, _)| price)))
        .str("best_bid_size", &wire::d8(bid.map_or(Decimal::ZERO, |(_, size)| size)))
        .str("best_ask", &p(ask.map(|(price, _)| price)))
        .str("best_ask_size", &wire::d8(ask.map_or(Decimal::ZERO, |(_, size)| size)))
        .str("side", t.taker_side.as_str())
        .str("time", &wire::time(t.at_ms))
        .int("trade_id", t.trade_id)
        .str("last_size", &wire::d8(t.size))
        .done()
}

pub fn heartbeat(product: usize, sequence: u64, last_trade_id: u64, now_ms: i64) -> Utf8Bytes {
    Obj::new("heartbeat")
        .int("last_trade_id", last_trade_id)
        .str("product_id", PRODUCTS[product].id)
        .int("sequence", sequence)
        .str("time", &wire::time(now_ms))
        .done()
}

/// A level-2 book in full: bids best first, asks best first.
pub fn snapshot<'a>(
    product: usize,
    bids: impl Iterator<Item = (&'a Decimal, &'a Decimal)>,
    asks: impl Iterator<Item = (&'a Decimal, &'a Decimal)>,
    now_ms: i64,
) -> Utf8Bytes {
    let levels = |levels: &mut dyn Iterator<Item = (&'a Decimal, &'a Decimal)>| {
        let mut out = String::from("[");
        for (i, (at, size)) in levels.enumerate() {
            if i > 0 {
                out.push(',');
            }
            let _ = write!(out, "[\"{}\",\"{}\"]", price(*at, product), wire::d8(*size));
        }
        out.push(']');
        out
    };
    let (mut bids, mut asks) = (bids, asks);
    Obj::new("snapshot")
        .str("product_id", PRODUCTS[product].id)
        .raw("asks", &levels(&mut asks))
        .raw("bids", &levels(&mut bids))
        .str("time", &wire::time(now_ms))
        .done()
}

/// Levels that changed, each with its new total size (zero: gone).
pub fn l2update(product: usize, changes: &[(Side, Decimal, Decimal)], at_ms: i64) -> Utf8Bytes {
    let mut list = String::from("[");
    for (i, (side, at, size)) in changes.iter().enumerate() {
        if i > 0 {
            list.push(',');
        }
        let _ = write!(list, "[\"{}\",\"{}\",\"{}\"]", side.as_str(), price(*at, product), wire::d8(*size));
    }
    list.push(']');
    Obj::new("l2update")
        .str("product_id", PRODUCTS[product].id)
        .raw("changes", &list)
        .str("time", &wire::time(at_ms))
        .done()
}

/// Every product and currency, as the `status` channel sends them.
pub fn status() -> Utf8Bytes {
    let products: Vec<Value> = PRODUCTS.iter().map(status_product).collect();
    let currencies: Vec<Value> = CURRENCIES.iter().enumerate().map(|(i, c)| wire::currency(c, i)).collect();
    Obj::new("status")
        .raw("products", &Value::Array(products).to_string())
        .raw("currencies", &Value::Array(currencies).to_string())
        .done()
}

fn status_product(spec: &ProductSpec) -> Value {
    let mut product = wire::product(spec);
    if let Some(fields) = product.as_object_mut() {
        fields.insert("status_message".into(), Value::Null);
    }
    product
}

/// `{"type":"error","message":…,"reason":…}`.
pub fn error(message: &str, reason: &str) -> Utf8Bytes {
    Obj::new("error").str("message", message).str("reason", reason).done()
}

/// The `subscriptions` answer: every channel the socket has, with its products.
pub fn subscriptions(channels: &[(&str, Vec<&str>)]) -> Utf8Bytes {
    let list: Vec<Value> = channels
        .iter()
        .map(|(name, products)| json!({"name": name, "product_ids": products, "account_ids": null}))
        .collect();
    Obj::new("subscriptions").raw("channels", &Value::Array(list).to_string()).done()
}
