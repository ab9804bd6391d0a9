//! What the console shows of Coinbase Exchange beyond raw JSON: a product's market, live while
//! its view is open (the last price and 24-hour change, the book as a ladder with depth bars and
//! the spread, one-minute candles, the trade tape); an order form that checks the product's
//! increments and minimum before anything is sent and says what the order will cost and hold;
//! a cancel-all confirmation naming the product and how many open orders the tab has seen;
//! accounts with their holds and ledger; and list columns a person reads (sides and statuses
//! toned, amounts in money format). Pure functions over JSON, tested without a terminal
//! (`coinbase_tests.rs`). Every text here is server text: the views make it inert when they
//! draw it. Nothing here guesses a value: a product or a fee rate the tab does not know is
//! asked for, and said to be unknown until it is.

use rust_decimal::Decimal;
use serde_json::{Map, Value};

use crate::catalog::{Operation, Service};
use crate::client::{Target, Values};
use crate::format::{decimal, money_text, time_text};
use crate::json_index::Item;
use crate::table::{Column, Layout};
use crate::tui::components::detail::{fact, text, Detail, DetailCommand, DetailKey, Tone};
use crate::tui::components::market::{BoardRow, BookSide, Candle, Level, Market, Move, Print, Push};
use crate::tui::services::{LiveColumns, LiveFeed, Lookup, MarketFrame, RowAction, RowsFrame, ServiceConsole};

pub struct Coinbase;

/// How many levels of each side of a book a market view keeps.
const BOOK_DEPTH: usize = 50;
/// How many trades the tape asks for.
const TAPE: &str = "30";
/// Where an account's whole ledger starts: before the exchange opened (January 2015), so no
/// account has an entry older.
const LEDGER_SINCE: &str = "2015-01-01T00:00:00Z";
/// Where the fee rates are known once asked for.
const FEES: &str = "fees";

impl ServiceConsole for Coinbase {
    fn confirm_headline(&self, op: &Operation) -> Option<&'static str> {
        (op.name == "orders_create").then_some("This places an order: an open one can be cancelled, a fill cannot")
    }

    fn layout(&self, op: &Operation) -> Option<Layout> {
        layout(op)
    }

    fn cell_tone(&self, header: &str, text: &str) -> Option<Tone> {
        tone(header, text)
    }

    fn detail(&self, op: &Operation, body: &Value) -> Option<Detail> {
        detail_for(op, body)
    }

    fn open_row(&self, list_op: &str, record: &Value, _scope: &dyn Fn(&str) -> Option<String>) -> Option<RowAction> {
        let detail = match list_op {
            "products_list" => market_view(record),
            "accounts_list" => account_detail(record),
            "orders_list" => order_detail(record),
            _ => return None,
        };
        Some(RowAction::View(Box::new(detail), None))
    }

    /// An account's holds and ledger are in its currency, which is what it is called.
    fn amount_unit(
        &self,
        op: &Operation,
        values: &Values,
        name: &dyn Fn(&str, &str) -> Option<String>,
    ) -> Option<String> {
        match op.name {
            "accounts_get_ledger" | "accounts_get_holds" => name("account_id", values.get("account_id")?),
            _ => None,
        }
    }

    /// An account is called by its currency (`holds of USD`); a profile by its name.
    fn label(&self, record: &Map<String, Value>) -> Option<String> {
        let named = |key: &str| record.get(key)?.as_str().filter(|s| !s.is_empty()).map(str::to_owned);
        match record.get("balance") {
            Some(_) => named("currency"),
            None => named("name"),
        }
    }

    /// An order form opened on a product (or beside an order) starts with its product.
    fn suggest(&self, op: &Operation, record: &Map<String, Value>, _target: &Target, values: &mut Values) {
        if op.name != "orders_create" || values.contains_key("product_id") {
            return;
        }
        let product = match record.get("base_currency") {
            Some(_) => record.get("id"),
            None => record.get("product_id"),
        };
        if let Some(id) = product.and_then(Value::as_str).filter(|id| !id.is_empty()) {
            values.insert("product_id".to_owned(), id.to_owned());
        }
    }

    fn effects(&self, op: &Operation, values: &Values, known: &dyn Fn(&str) -> Option<Value>) -> Vec<String> {
        match op.name {
            "orders_create" => order_estimate(values, known).lines,
            "orders_cancel" => cancel_effect(values, known),
            _ => Vec::new(),
        }
    }

    /// A cancel-all counts the open orders it cancels from an answer asked as it opens.
    fn confirm_lookups(&self, op: &Operation, values: &Values) -> Vec<Lookup> {
        match op.name {
            "orders_cancel_all" => vec![open_orders_lookup(values)],
            _ => Vec::new(),
        }
    }

    fn effects_looked_up(
        &self,
        op: &Operation,
        values: &Values,
        looked_up: &dyn Fn(&str) -> Option<Value>,
    ) -> Vec<String> {
        match op.name {
            "orders_cancel_all" => {
                let lookup = open_orders_lookup(values);
                vec![cancel_all_effect(values, looked_up(&lookup.key).as_ref(), OPEN_ORDERS_PAGE)]
            }
            _ => Vec::new(),
        }
    }

    /// `c` cancels the selected order where it is listed (the list's own `c`, clearing its
    /// filters, stays in the palette).
    fn row_keys(&self, list_op: &str) -> &'static [(char, &'static str)] {
        match list_op {
            "orders_list" => &[('c', "cancel")],
            _ => &[],
        }
    }

    fn record_action(
        &self,
        key: char,
        order: &Value,
        _scope: &dyn Fn(&str) -> Option<String>,
    ) -> Option<(&'static str, Values)> {
        let id = order.get("id").and_then(Value::as_str).filter(|id| !id.is_empty())?;
        match key {
            'c' if is_open(&text(order.get("status"))) => {
                let mut values = Values::from([("order_id".to_owned(), id.to_owned())]);
                if let Some(product) = order.get("product_id").and_then(Value::as_str) {
                    values.insert("product_id".to_owned(), product.to_owned());
                }
                Some(("orders_cancel", values))
            }
            _ => None,
        }
    }

    /// The products list has no price: each product in view is asked for its 24-hour stats
    /// (its last price and its open a day ago) while the list is shown.
    fn live_columns(&self, list_op: &str) -> Option<LiveColumns> {
        (list_op == "products_list").then_some(LiveColumns {
            op: "products_get_stats",
            param: "product_id",
            id_field: "id",
            headers: &["price", "24h"],
            cells: stats_cells,
        })
    }

    /// The product's book (`level2_batch`), trades (`matches`) and ticker, from the exchange's
    /// feed: public channels, so nothing is signed and no credential is sent.
    fn market_feed(&self, focus: &str, target: &Target) -> Option<LiveFeed> {
        let url = feed_url(&target.base_url)?;
        let subscribe = serde_json::json!({
            "type": "subscribe",
            "product_ids": [focus],
            "channels": ["level2_batch", "matches", "ticker"],
        });
        Some(LiveFeed { shown: url.clone(), url, send: vec![subscribe.to_string()] })
    }

    fn pushes_rows(&self, op: &Operation) -> bool {
        op.service == Service::Coinbase && op.name == "orders_list"
    }

    /// The orders list follows the user channel: the subscription is signed with the tab's key
    /// (over `timestamp + GET + /users/self/verify`, as the exchange asks) and names the products
    /// of the orders and products the tab has seen.
    fn rows_feed(&self, op: &Operation, values: &Values, target: &Target, known: &[Value]) -> Option<LiveFeed> {
        if !self.pushes_rows(op) {
            return None;
        }
        let crate::client::Credentials::Coinbase { key, secret, passphrase } = &target.credentials else { return None };
        let mut products: Vec<String> =
            values.get("product_id").filter(|p| !p.is_empty()).cloned().into_iter().collect();
        for record in known {
            let id = match (record.get("product_id"), record.get("base_currency")) {
                (Some(Value::String(product)), _) => product,
                (None, Some(_)) => match record.get("id") {
                    Some(Value::String(id)) => id,
                    _ => continue,
                },
                _ => continue,
            };
            if !products.contains(id) && products.len() < 100 {
                products.push(id.clone());
            }
        }
        if products.is_empty() {
            return None;
        }
        products.sort();
        let url = feed_url(&target.base_url)?;
        let timestamp = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).ok()?.as_secs().to_string();
        let signature =
            crate::client::auth::coinbase_signature(secret.expose(), &timestamp, "GET", "/users/self/verify", b"")
                .ok()?;
        let subscribe = serde_json::json!({
            "type": "subscribe",
            "product_ids": products,
            "channels": ["user"],
            "key": key,
            "passphrase": passphrase.expose(),
            "timestamp": timestamp,
            "signature": signature,
        });
        Some(LiveFeed { shown: format!("{url} (user channel)"), url, send: vec![subscribe.to_string()] })
    }

    fn rows_frame(&self, _op: &Operation, frame: &str) -> RowsFrame {
        let mut out = RowsFrame::default();
        let Ok(message) = serde_json::from_str::<Value>(frame) else {
            out.ended = Some("the feed sent a frame that is not JSON".to_owned());
            return out;
        };
        match message.get("type").and_then(Value::as_str).unwrap_or_default() {
            "subscriptions" => out.serving = true,
            "received" | "open" | "match" | "change" | "activate" => out.changed = true,
            "done" => {
                out.changed = true;
                out.done.extend(message.get("order_id").and_then(Value::as_str).map(str::to_owned));
            }
            "error" => {
                let said = |key: &str| text(message.get(key));
                out.ended = Some(format!("the feed refused: {}: {}", said("message"), said("reason")));
            }
            _ => {}
        }
        out
    }

    fn market_frame(&self, focus: &str, frame: &str) -> MarketFrame {
        let mut out = MarketFrame::default();
        let Ok(message) = serde_json::from_str::<Value>(frame) else {
            out.ended = Some("the feed sent a frame that is not JSON".to_owned());
            return out;
        };
        let kind = message.get("type").and_then(Value::as_str).unwrap_or_default();
        if kind == "error" {
            let said = |key: &str| text(message.get(key));
            out.ended = Some(format!("the feed refused: {}: {}", said("message"), said("reason")));
            return out;
        }
        if kind == "subscriptions" {
            out.serving = true;
            return out;
        }
        if message.get("product_id").and_then(Value::as_str) != Some(focus) {
            return out;
        }
        match kind {
            "snapshot" => {
                let side = |key: &str| -> Vec<(String, String)> {
                    let rows = message.get(key).and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
                    rows.iter().map(|row| (text(row.get(0)), text(row.get(1)))).collect()
                };
                out.pushes.push(Push::Book { bids: side("bids"), asks: side("asks") });
            }
            "l2update" => {
                let rows = message.get("changes").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
                let changes = rows
                    .iter()
                    .filter_map(|row| {
                        let side = match row.get(0).and_then(Value::as_str)? {
                            "buy" => BookSide::Bid,
                            "sell" => BookSide::Ask,
                            _ => return None,
                        };
                        Some((side, text(row.get(1)), text(row.get(2))))
                    })
                    .collect();
                out.pushes.push(Push::Changes(changes));
            }
            // A match reads as a REST trade (the maker's side); `last_match` is already on the
            // tape the view asked for.
            "match" => {
                let number = |key: &str| message.get(key).and_then(Value::as_str).and_then(|v| v.parse::<f64>().ok());
                let minute = message
                    .get("time")
                    .and_then(Value::as_str)
                    .and_then(crate::sandbox::clock::parse_rfc3339)
                    .map(|ms| ms.div_euclid(60_000) * 60);
                let bucket = minute.zip(number("price")).zip(number("size")).map(|((m, p), s)| (m, p, s));
                out.pushes.push(Push::Trade(print(&message), bucket));
            }
            "ticker" => {
                let field = |key: &str| message.get(key).cloned().unwrap_or(Value::Null);
                let ticker = serde_json::json!({
                    "price": field("price"), "bid": field("best_bid"), "ask": field("best_ask"), "volume": field("volume_24h"),
                });
                let stats = serde_json::json!({
                    "open": field("open_24h"), "last": field("price"), "high": field("high_24h"), "low": field("low_24h"),
                });
                let values: Values = [("product_id".to_owned(), focus.to_owned())].into_iter().collect();
                out.pushes
                    .extend(market_part("products_get_ticker", &values, &ticker).map(|m| Push::Part(Box::new(m))));
                out.pushes.extend(market_part("products_get_stats", &values, &stats).map(|m| Push::Part(Box::new(m))));
            }
            _ => {}
        }
        out
    }

    fn market(&self, op: &Operation, values: &Values, body: &Value) -> Option<Market> {
        (op.service == Service::Coinbase).then(|| market_part(op.name, values, body)).flatten()
    }

    fn form_problems(
        &self,
        op: &Operation,
        values: &Values,
        known: &dyn Fn(&str) -> Option<Value>,
    ) -> Vec<(&'static str, String)> {
        match op.name {
            "orders_create" => order_problems(values, known),
            _ => Vec::new(),
        }
    }

    fn form_notes(&self, op: &Operation, values: &Values, known: &dyn Fn(&str) -> Option<Value>) -> Vec<String> {
        match op.name {
            "orders_create" => order_notes(values, known),
            _ => Vec::new(),
        }
    }

    fn lookups(&self, op: &Operation, values: &Values, known: &dyn Fn(&str) -> Option<Value>) -> Vec<Lookup> {
        match op.name {
            "orders_create" => order_lookups(values, known),
            _ => Vec::new(),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Lists

/// The columns of Coinbase's lists, most telling first.
pub fn layout(op: &Operation) -> Option<Layout> {
    if op.service != Service::Coinbase {
        return None;
    }
    let paths: &[&str] = match op.name {
        // Available and hold first: they add up to the balance, which a narrow screen drops.
        "accounts_list" => &["currency", "available", "hold", "balance", "trading_enabled", "profile_id", "id"],
        "accounts_get_holds" => &["type", "amount", "ref", "created_at", "updated_at", "id"],
        "accounts_get_ledger" => &["created_at", "type", "amount", "balance", "details", "id"],
        "orders_list" => &[
            "product_id",
            "side",
            "type",
            "status",
            "price",
            "size",
            "filled_size",
            "funds",
            "executed_value",
            "fill_fees",
            "time_in_force",
            "created_at",
            "id",
        ],
        "fills_list" => &[
            "created_at",
            "product_id",
            "side",
            "price",
            "size",
            "fee",
            "liquidity",
            "settled",
            "order_id",
            "trade_id",
        ],
        "products_list" => &[
            "id",
            "status",
            "quote_increment",
            "base_increment",
            "min_market_funds",
            "trading_disabled",
            "cancel_only",
            "limit_only",
            "post_only",
        ],
        "products_get_trades" => &["time", "side", "price", "size", "trade_id"],
        "transfers_list" => &["type", "state", "amount", "currency", "created_at", "completed_at", "details", "id"],
        "profiles_list" => &["name", "active", "is_default", "has_margin", "created_at", "id"],
        "currencies_list" => &["id", "name", "status", "min_size", "max_precision", "details"],
        _ => return None,
    };
    let columns = paths
        .iter()
        .map(|name| {
            let mut column = Column::new(vec![(*name).to_owned()]);
            column.money = matches!(
                *name,
                "balance"
                    | "available"
                    | "hold"
                    | "amount"
                    | "price"
                    | "size"
                    | "filled_size"
                    | "funds"
                    | "executed_value"
                    | "fill_fees"
                    | "fee"
                    | "min_market_funds"
            );
            column
        })
        .collect();
    Some(Layout { columns, cell })
}

/// A cell where the generic text would not do: a transfer's state (derived from its times), a
/// ledger entry's or a transfer's details, a currency's kind, times in one short format.
pub fn cell(record: Item<'_>, column: &Column) -> Option<String> {
    let [name] = column.path.as_slice() else { return None };
    let member = |key: &str| record.get(key).map(Item::to_value);
    match name.as_str() {
        "state" => Some(transfer_state(&member("completed_at"), &member("canceled_at")).to_owned()),
        "details" => {
            let details = member("details")?;
            Some(details_text(&details))
        }
        "created_at" | "updated_at" | "completed_at" | "time" => {
            record.get(name.as_str())?.as_str().map(|t| time_text(&t))
        }
        // An account's money in its currency's unit: dollars to the cent, not to 1e-16.
        "balance" | "available" | "hold" => {
            let currency = record.get("currency")?.as_str()?;
            crate::format::amount_text(&record.get(name.as_str())?.as_str()?, &currency)
        }
        // What an order spent, and a fill's fee, in the product's quote currency.
        "funds" | "executed_value" | "fill_fees" | "fee" => {
            let product = record.get("product_id")?.as_str()?;
            let quote = product.split_once('-')?.1;
            crate::format::amount_text(&record.get(name.as_str())?.as_str()?, quote)
        }
        // A size's trailing zeros say nothing: `20.00000000` is `20`.
        "size" | "filled_size" => crate::format::quantity_text(&record.get(name.as_str())?.as_str()?),
        _ => None,
    }
}

/// A transfer is pending until it has a completed or cancelled time.
fn transfer_state(completed: &Option<Value>, canceled: &Option<Value>) -> &'static str {
    let set = |v: &Option<Value>| v.as_ref().is_some_and(|v| !v.is_null() && v.as_str() != Some(""));
    match (set(completed), set(canceled)) {
        (_, true) => "canceled",
        (true, false) => "completed",
        (false, false) => "pending",
    }
}

/// The telling parts of a `details` map: the product and order of a match or fee, the kind of a
/// transfer, a currency's kind; else its pairs.
fn details_text(details: &Value) -> String {
    let Some(map) = details.as_object() else { return text(Some(details)) };
    let get = |key: &str| map.get(key).and_then(Value::as_str).filter(|s| !s.is_empty());
    if let Some(product) = get("product_id") {
        let order = get("order_id").map(|o| format!(" order {}", o.get(..8).unwrap_or(o))).unwrap_or_default();
        return format!("{product}{order}");
    }
    if let Some(kind) = get("transfer_type") {
        return kind.to_owned();
    }
    if let Some(kind) = get("type") {
        return kind.to_owned();
    }
    if let Some(address) = get("crypto_address") {
        return format!("to {address}");
    }
    map.iter()
        .filter(|(_, v)| v.as_str().is_some_and(|s| !s.is_empty()))
        .map(|(k, v)| format!("{k}={}", text(Some(v))))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The tone of a list cell: buys and sells, an order's or a product's status, a transfer's state.
pub fn tone(header: &str, text: &str) -> Option<Tone> {
    match (header, text) {
        ("side", "buy") => Some(Tone::Good),
        ("side", "sell") => Some(Tone::Bad),
        ("status", "open" | "active" | "pending" | "received") => Some(Tone::Pending),
        ("status", "done") => Some(Tone::Quiet),
        ("status", "rejected" | "offline" | "delisted") | ("state", "canceled") => Some(Tone::Bad),
        ("status", "online") | ("state", "completed") => Some(Tone::Good),
        ("state", "pending") => Some(Tone::Pending),
        ("trading_enabled", "false") | ("cancel_only" | "trading_disabled", "true") => Some(Tone::Changed),
        ("type", "fee") => Some(Tone::Changed),
        ("24h", change) if change.starts_with('+') && change != "+0.00 %" => Some(Tone::Good),
        ("24h", change) if change.starts_with('-') => Some(Tone::Bad),
        _ => None,
    }
}

// ---------------------------------------------------------------------------------------------
// Views

/// The structured view of a Coinbase answer of one record.
pub fn detail_for(op: &Operation, body: &Value) -> Option<Detail> {
    if op.service != Service::Coinbase || !body.is_object() {
        return None;
    }
    match op.name {
        "orders_get" | "orders_create" => Some(order_detail(body)),
        "accounts_get" => Some(account_detail(body)),
        "fees_get" => Some(Detail {
            title: "fee rates".into(),
            facts: vec![
                fact("maker", percent_text(body.get("maker_fee_rate"))),
                fact("taker", percent_text(body.get("taker_fee_rate"))),
                fact("30-day USD volume", money_or_text(body.get("usd_volume"))),
            ],
            ..Detail::default()
        }),
        "conversions_create" => Some(Detail {
            title: format!("conversion {}", text(body.get("id"))),
            facts: vec![
                fact("from", text(body.get("from"))),
                fact("to", text(body.get("to"))),
                fact("amount", money_or_text(body.get("amount"))),
                fact("fee", money_or_text(body.get("fee_amount"))),
                fact("created", time_text(&text(body.get("created_at")))),
            ],
            record: Some(body.clone()),
            ..Detail::default()
        }),
        "products_get_order_book" => {
            let market = market_part(op.name, &Values::new(), body)?;
            Some(Detail {
                title: "order book".into(),
                facts: vec![fact("sequence", text(body.get("sequence")))],
                market: Some(Box::new(market)),
                ..Detail::default()
            })
        }
        _ => None,
    }
}

/// A product's market, filled by its own asks while open: the book (level 2), one-minute
/// candles, the latest trades, the ticker and the 24-hour stats. `b` and `s` open the order
/// form for it.
pub fn market_view(product: &Value) -> Detail {
    let id = text(product.get("id"));
    let with_id = || vec![("product_id".to_owned(), id.clone())];
    let order = |side: &str| DetailCommand::Form {
        op: "orders_create",
        values: vec![
            ("product_id".to_owned(), id.clone()),
            ("side".to_owned(), side.to_owned()),
            ("type".to_owned(), "limit".to_owned()),
        ],
    };
    let mut facts = vec![fact("product", id.clone())];
    let currency = |key: &str| text(product.get(key));
    let (base, quote) = (currency("base_currency"), currency("quote_currency"));
    let number = |key: &str| product.get(key).and_then(Value::as_str).and_then(decimal);
    let price_step = number("quote_increment");
    for (label, key, unit) in [
        ("price step", "quote_increment", &quote),
        ("size step", "base_increment", &base),
        ("min funds", "min_market_funds", &quote),
    ] {
        if let Some(value) = product.get(key).filter(|v| !v.is_null()) {
            let raw = text(Some(value));
            let shown = match key {
                "min_market_funds" => crate::format::amount_text(&raw, unit),
                _ => crate::format::quantity_text(&raw),
            };
            facts.push(fact(label, format!("{} {unit}", shown.unwrap_or(raw)).trim_end().to_owned()));
        }
    }
    if let Some(status) = product.get("status").and_then(Value::as_str) {
        facts.push((String::from("status"), status.to_owned(), tone("status", status)));
    }
    Detail {
        title: format!("{id} · market"),
        subject: Some(format!("market {id}")),
        facts,
        market: Some(Box::new(Market {
            // In a steady order, whichever answer comes first: each fills its place.
            facts: ["last", "24h", "bid", "ask", "24h high", "24h low", "volume"]
                .iter()
                .map(|label| live(label, "…".to_owned()))
                .collect(),
            candle_span: "1 min".into(),
            focus: id.clone(),
            board: vec![BoardRow { id: id.clone(), ..BoardRow::default() }],
            board_ask: Some(("products_get_stats", "product_id")),
            board_list: Some("products_list"),
            price_step,
            ..Market::default()
        })),
        watch: Some(("products_get_order_book", vec![("product_id".into(), id.clone()), ("level".into(), "2".into())])),
        watch_also: vec![
            ("products_get_ticker", with_id()),
            ("products_get_stats", with_id()),
            ("products_get_candles", vec![("product_id".into(), id.clone()), ("granularity".into(), "60".into())]),
            ("products_get_trades", vec![("product_id".into(), id.clone()), ("limit".into(), TAPE.into())]),
        ],
        commands: vec![
            DetailKey { key: 'b', label: "buy", command: order("buy") },
            DetailKey { key: 's', label: "sell", command: order("sell") },
        ],
        record: Some(product.clone()),
        ..Detail::default()
    }
}

/// The part of a market an answer fills.
pub fn market_part(op: &str, values: &Values, body: &Value) -> Option<Market> {
    let mut market = Market::default();
    match op {
        "products_list" => {
            let online = |p: &&Value| p.get("status").and_then(Value::as_str).is_none_or(|s| s == "online");
            market.board = body
                .as_array()?
                .iter()
                .filter(online)
                .filter_map(|p| p.get("id").and_then(Value::as_str))
                .map(|id| BoardRow { id: id.to_owned(), ..BoardRow::default() })
                .collect();
        }
        "products_get_order_book" => {
            market.bids = Some(levels(body.get("bids")));
            market.asks = Some(levels(body.get("asks")));
        }
        "products_get_candles" => {
            let candles = body.as_array()?.iter().filter_map(candle).collect();
            market.candles = Some(candles);
            market.candle_span = "1 min".into();
        }
        "products_get_trades" => {
            market.tape = Some(body.as_array()?.iter().map(print).collect());
        }
        "products_get_ticker" => {
            market.facts = vec![
                live("last", money_or_text(body.get("price"))),
                live("bid", money_or_text(body.get("bid"))),
                live("ask", money_or_text(body.get("ask"))),
                live("volume", quantity_or_text(body.get("volume"))),
            ];
        }
        "products_get_stats" => {
            let (change, tone) = change_24h(body);
            if let Some(id) = values.get("product_id") {
                let percent = change.split(" (").next().unwrap_or_default().to_owned();
                let last = money_or_text(body.get("last"));
                market.about = Some(BoardRow { id: id.clone(), last, change: percent, tone });
            }
            market.facts = vec![
                ("24h".to_owned(), change, tone),
                live("24h high", money_or_text(body.get("high"))),
                live("24h low", money_or_text(body.get("low"))),
            ];
        }
        _ => return None,
    }
    Some(market)
}

/// Where the exchange's WebSocket feed is for a REST base URL: the vendor's own feed hosts for
/// its production and sandbox APIs, else the same host and port (opsdeck's simulator serves
/// the feed at its root). `None` for a URL that is neither http nor https.
pub fn feed_url(base_url: &str) -> Option<String> {
    let base = base_url.trim_end_matches('/');
    let (scheme, rest) = base.split_once("://")?;
    let host = rest.split('/').next().unwrap_or(rest);
    match (scheme, host) {
        ("https", "api.exchange.coinbase.com") => Some("wss://ws-feed.exchange.coinbase.com".to_owned()),
        ("https", "api-public.sandbox.exchange.coinbase.com") => {
            Some("wss://ws-feed-public.sandbox.exchange.coinbase.com".to_owned())
        }
        ("https", _) => Some(format!("wss://{host}")),
        ("http", _) => Some(format!("ws://{host}")),
        _ => None,
    }
}

/// A product's price and 24-hour change, from its stats, as the products list shows them.
pub fn stats_cells(stats: &Value) -> Vec<String> {
    let (change, _) = change_24h(stats);
    let percent = change.split(" (").next().unwrap_or_default().to_owned();
    vec![money_or_text(stats.get("last")), percent]
}

/// The 24-hour change from the stats' open and last: `+1.23 % (+12.34)`, toned by its sign;
/// `unknown` when either is missing or the open is zero.
pub fn change_24h(stats: &Value) -> (String, Option<Move>) {
    let number = |key: &str| stats.get(key).and_then(Value::as_str).and_then(decimal);
    let (Some(open), Some(last)) = (number("open"), number("last")) else { return ("unknown".into(), None) };
    if open.is_zero() {
        return ("unknown".into(), None);
    }
    let change = last - open;
    let percent = (change / open * Decimal::ONE_HUNDRED).round_dp(2);
    let sign = if change.is_sign_negative() && !change.is_zero() { "" } else { "+" };
    let tone = match change.cmp(&Decimal::ZERO) {
        std::cmp::Ordering::Greater => Some(Move::Up),
        std::cmp::Ordering::Less => Some(Move::Down),
        std::cmp::Ordering::Equal => None,
    };
    let amount = money_text(&change.normalize().to_string()).unwrap_or_else(|| change.to_string());
    (format!("{sign}{percent:.2} % ({sign}{amount})"), tone)
}

/// The levels of one side of a book: `[price, size, num_orders]` (level 3's order id in the
/// third place counts as one order).
fn levels(side: Option<&Value>) -> Vec<Level> {
    let Some(side) = side.and_then(Value::as_array) else { return Vec::new() };
    side.iter()
        .take(BOOK_DEPTH)
        .filter_map(|entry| {
            let entry = entry.as_array()?;
            let price_text = text(entry.first());
            let size_text = text(entry.get(1));
            let price = price_text.parse().ok()?;
            let size = size_text.parse().ok()?;
            Some(Level { price, size, orders: entry.get(2).and_then(Value::as_u64), price_text, size_text })
        })
        .collect()
}

/// A candle from `[time, low, high, open, close, volume]`.
fn candle(entry: &Value) -> Option<Candle> {
    let entry = entry.as_array()?;
    let n = |i: usize| entry.get(i).and_then(Value::as_f64);
    Some(Candle {
        time: entry.first().and_then(Value::as_i64)?,
        low: n(1)?,
        high: n(2)?,
        open: n(3)?,
        close: n(4)?,
        volume: n(5).unwrap_or_default(),
    })
}

/// A trade of the tape. The wire's `side` is the maker's: a maker's buy was hit by a seller (a
/// down-tick), a maker's sell lifted by a buyer (an up-tick); the tape says who took.
fn print(trade: &Value) -> Print {
    let time = text(trade.get("time"));
    let clock = time.get(11..19).filter(|_| time.get(10..11) == Some("T")).map_or(time.clone(), str::to_owned);
    let (mark, tone) = match trade.get("side").and_then(Value::as_str) {
        Some("buy") => ("▼ sell".to_owned(), Some(Move::Down)),
        Some("sell") => ("▲ buy".to_owned(), Some(Move::Up)),
        other => (other.unwrap_or_default().to_owned(), None),
    };
    Print { time: clock, price: text(trade.get("price")), size: text(trade.get("size")), mark, tone }
}

/// An account: its balance, what is available and on hold; `h` lists its holds, `l` its ledger.
pub fn account_detail(account: &Value) -> Detail {
    let id = text(account.get("id"));
    let currency = text(account.get("currency"));
    let with_id = || vec![("account_id".to_owned(), id.clone())];
    // Asked with no dates the exchange gives the last day only; every movement since the
    // account opened is what adds up to its balance.
    let ledger_values = || {
        let mut values = with_id();
        values.push(("start_date".to_owned(), LEDGER_SINCE.to_owned()));
        values
    };
    Detail {
        title: format!("{currency} account"),
        facts: vec![
            fact("balance", amount_of(account.get("balance"), &currency)),
            fact("available", amount_of(account.get("available"), &currency)),
            fact("hold", amount_of(account.get("hold"), &currency)),
            fact("trading", text(account.get("trading_enabled"))),
            fact("profile", text(account.get("profile_id"))),
            fact("id", id.clone()),
        ],
        commands: vec![
            DetailKey {
                key: 'h',
                label: "holds",
                command: DetailCommand::Open { op: "accounts_get_holds", values: with_id() },
            },
            DetailKey {
                key: 'l',
                label: "ledger",
                command: DetailCommand::Open { op: "accounts_get_ledger", values: ledger_values() },
            },
        ],
        record: Some(account.clone()),
        ..Detail::default()
    }
}

/// Whether an order still rests (or waits to) and can be cancelled.
fn is_open(status: &str) -> bool {
    matches!(status, "open" | "pending" | "active" | "received")
}

/// An order: what it is, how far it filled; `c` cancels it while open, `x` cancels every open
/// order of its product (both ask first).
pub fn order_detail(order: &Value) -> Detail {
    let id = text(order.get("id"));
    let product = text(order.get("product_id"));
    let quote = product.split_once('-').map_or("", |(_, quote)| quote).to_owned();
    let status = text(order.get("status"));
    let side = text(order.get("side"));
    let mut facts = vec![
        fact("product", product.clone()),
        (String::from("side"), side.clone(), tone("side", &side)),
        fact("type", text(order.get("type"))),
        (String::from("status"), status.clone(), tone("status", &status)),
    ];
    for (label, key) in [
        ("price", "price"),
        ("size", "size"),
        ("funds", "funds"),
        ("filled", "filled_size"),
        ("executed value", "executed_value"),
        ("fees", "fill_fees"),
        ("time in force", "time_in_force"),
        ("stop", "stop"),
        ("stop price", "stop_price"),
        ("done", "done_reason"),
        ("rejected", "reject_reason"),
    ] {
        if let Some(value) = order.get(key).filter(|v| !v.is_null() && v.as_str() != Some("")) {
            let shown = match key {
                "price" | "stop_price" => money_or_text(Some(value)),
                // What it spent or holds is money of the quote currency: dollars to the cent.
                "funds" | "executed_value" | "fill_fees" => amount_of(Some(value), &quote),
                // A size's trailing zeros say nothing: `20.00000000` is `20`.
                "size" | "filled_size" => quantity_or_text(Some(value)),
                _ => text(Some(value)),
            };
            facts.push(fact(label, shown));
        }
    }
    facts.push(fact("created", time_text(&text(order.get("created_at")))));
    facts.push(fact("id", id.clone()));
    let asks_again = || vec![("order_id".to_owned(), id.clone())];
    let mut commands = Vec::new();
    if !id.is_empty() {
        commands.push(DetailKey {
            key: 'r',
            label: "refresh",
            command: DetailCommand::Send { op: "orders_get", values: asks_again() },
        });
    }
    if is_open(&status) {
        let mut values = vec![("order_id".to_owned(), id.clone())];
        if !product.is_empty() {
            values.push(("product_id".to_owned(), product.clone()));
        }
        commands.push(DetailKey {
            key: 'c',
            label: "cancel",
            command: DetailCommand::Send { op: "orders_cancel", values },
        });
    }
    if !product.is_empty() {
        let values = vec![("product_id".to_owned(), product.clone())];
        commands.push(DetailKey {
            key: 'x',
            label: "cancel all of this product",
            command: DetailCommand::Send { op: "orders_cancel_all", values },
        });
    }
    Detail {
        title: format!("order {product} {side} · {status}"),
        subject: Some(format!("order {id}")),
        facts,
        commands,
        record: Some(order.clone()),
        // An order moves by itself (accepted, resting, filled): its view follows it until it
        // is done, as the orders list would show it.
        watch: (is_open(&status) && !id.is_empty()).then(|| ("orders_get", asks_again())),
        ..Detail::default()
    }
}

// ---------------------------------------------------------------------------------------------
// Confirmations

/// What cancelling one order cancels, when the tab has seen the order.
fn cancel_effect(values: &Values, known: &dyn Fn(&str) -> Option<Value>) -> Vec<String> {
    let Some(id) = values.get("order_id") else { return Vec::new() };
    let Some(order) = known(id).filter(Value::is_object) else { return Vec::new() };
    let field = |key: &str| order.get(key).and_then(Value::as_str).filter(|v| !v.is_empty());
    let price = field("price").filter(|_| field("type") != Some("market"));
    let what = crate::format::order_text(
        &text(order.get("side")),
        &text(order.get("product_id")),
        field("size"),
        price,
        field("funds"),
    );
    vec![format!("cancels the {} order {what} ({})", text(order.get("type")), text(order.get("status")))]
}

/// The most open orders one answer counts (the exchange's largest page).
const OPEN_ORDERS_PAGE: usize = 1000;

/// The open orders of the product a cancel-all names (of every product without one).
fn open_orders_lookup(values: &Values) -> Lookup {
    let product = values.get("product_id").filter(|p| !p.trim().is_empty());
    let mut asked = Values::from([("limit".to_owned(), OPEN_ORDERS_PAGE.to_string())]);
    if let Some(product) = product {
        asked.insert("product_id".to_owned(), product.clone());
    }
    Lookup {
        key: format!("open orders of {}", product.map_or("every product", String::as_str)),
        op: "orders_list",
        values: asked,
    }
}

/// What a cancel-all cancels: the product (or every product) and how many open orders, counted
/// from the exchange's answer asked as the question opened (`None`: still being asked; not a
/// list: the answer failed), at most `page` of them.
pub fn cancel_all_effect(values: &Values, answer: Option<&Value>, page: usize) -> String {
    let product = values.get("product_id").filter(|p| !p.trim().is_empty());
    let scope = product.map_or_else(|| "every product".to_owned(), |p| p.clone());
    let head = format!("cancels every open order of {scope}");
    let Some(answer) = answer else {
        return format!("{head}: counting them…");
    };
    let Some(records) = answer.as_array() else {
        return format!("{head}: how many is unknown (the exchange did not say)");
    };
    let count = records
        .iter()
        .filter(|o| o.get("status").and_then(Value::as_str).is_some_and(is_open))
        .filter(|o| {
            product.is_none_or(|p| {
                o.get("product_id").and_then(Value::as_str).is_some_and(|id| id.eq_ignore_ascii_case(p))
            })
        })
        .count();
    let orders = crate::format::plural_with(count, "open order", "open orders");
    if records.len() >= page {
        format!("{head}: at least {orders} (the first {page} the exchange lists)")
    } else {
        format!("{head}: {orders}, as the exchange counts them now")
    }
}

// ---------------------------------------------------------------------------------------------
// The order form

/// A product as the form reads it: its increments and minimum, and the currencies of its price
/// and size.
struct Product {
    id: String,
    base: String,
    quote: String,
    quote_increment: Option<Decimal>,
    base_increment: Option<Decimal>,
    min_market_funds: Option<Decimal>,
}

/// What the form knows of the product it names: `Ok` with its record, `Err` saying why not.
fn product_of(values: &Values, known: &dyn Fn(&str) -> Option<Value>) -> Result<Product, String> {
    let Some(id) = values.get("product_id").filter(|p| !p.trim().is_empty()) else {
        return Err("no product yet".into());
    };
    match known(id) {
        Some(record) if record.is_object() => {
            let number = |key: &str| record.get(key).and_then(Value::as_str).and_then(decimal);
            let currency = |key: &str| record.get(key).and_then(Value::as_str).map(str::to_owned);
            let (id_base, id_quote) = id.split_once('-').unwrap_or((id.as_str(), ""));
            Ok(Product {
                id: id.clone(),
                base: currency("base_currency").unwrap_or_else(|| id_base.to_owned()),
                quote: currency("quote_currency").unwrap_or_else(|| id_quote.to_owned()),
                quote_increment: number("quote_increment").filter(|d| !d.is_zero()),
                base_increment: number("base_increment").filter(|d| !d.is_zero()),
                min_market_funds: number("min_market_funds"),
            })
        }
        Some(_) => Err(format!("{id}: unknown (the exchange did not describe it); increments not checked")),
        None => Err(format!("{id}: increments unknown yet (asking the exchange)")),
    }
}

/// The taker fee rate, if the tab knows it: `Err` says why not.
fn taker_fee(known: &dyn Fn(&str) -> Option<Value>) -> Result<Decimal, &'static str> {
    match known(FEES) {
        Some(fees) if fees.is_object() => {
            fees.get("taker_fee_rate").and_then(Value::as_str).and_then(decimal).ok_or("the fee rates say no taker fee")
        }
        Some(_) => Err("fee rate unknown (the exchange did not tell it)"),
        None => Err("fee rate unknown yet (asking the exchange)"),
    }
}

fn value_of(values: &Values, name: &str) -> Option<Decimal> {
    values.get(name).and_then(|v| decimal(v))
}

fn kind_of(values: &Values) -> &str {
    values.get("type").map_or("limit", String::as_str)
}

/// Whether `amount` is a whole number of `step`s.
fn on_step(amount: Decimal, step: Decimal) -> bool {
    step.is_zero() || (amount % step).is_zero()
}

/// What is wrong with an order before it is sent, by field: prices and sizes off the product's
/// increments, under its minimum, or fields that do not go together.
pub fn order_problems(values: &Values, known: &dyn Fn(&str) -> Option<Value>) -> Vec<(&'static str, String)> {
    let mut problems = Vec::new();
    let kind = kind_of(values);
    let (price, size, funds) = (value_of(values, "price"), value_of(values, "size"), value_of(values, "funds"));
    let given = |name: &str| values.get(name).is_some_and(|v| !v.trim().is_empty());
    for (name, amount) in [("price", price), ("size", size), ("funds", funds)] {
        if given(name) && amount.is_none_or(|a| a <= Decimal::ZERO) {
            problems.push((field_name(name), format!("{} is no positive amount", values[name])));
        }
    }
    match kind {
        "limit" if !given("price") => problems.push(("price", format!("a {kind} order needs a price"))),
        "limit" if !given("size") => problems.push(("size", "a limit order needs a size".to_owned())),
        "market" if given("size") == given("funds") => {
            problems.push(("funds", "a market order takes a size or funds (one of them)".to_owned()));
        }
        _ => {}
    }
    // A stop order is a limit order with both `stop` and `stop_price`; the exchange refuses one
    // without the other, and a market order with either.
    if given("stop") != given("stop_price") {
        problems.push(("stop_price", "a stop order needs stop (loss or entry) and a stop price".to_owned()));
    }
    if kind == "market" && (given("stop") || given("stop_price")) {
        problems.push(("stop", "a stop order is a limit order (type limit, with a price)".to_owned()));
    }
    let tif = values.get("time_in_force").map_or("GTC", String::as_str);
    if given("cancel_after") && tif != "GTT" {
        problems.push(("cancel_after", "cancel_after goes only with time_in_force GTT".to_owned()));
    }
    if values.get("post_only").is_some_and(|v| v == "true") && matches!(tif, "IOC" | "FOK") {
        problems.push(("post_only", format!("post_only cannot go with {tif}")));
    }
    let Ok(product) = product_of(values, known) else { return problems };
    let quote = &product.quote;
    if let (Some(price), Some(step), true) = (price, product.quote_increment, kind != "market") {
        if price > Decimal::ZERO && !on_step(price, step) {
            problems.push((
                "price",
                format!("{price} is finer than {}'s price step {} {quote}", product.id, step.normalize()),
            ));
        }
    }
    if let (Some(size), Some(step)) = (size, product.base_increment) {
        if size > Decimal::ZERO && !on_step(size, step) {
            problems.push((
                "size",
                format!("{size} is finer than {}'s size step {} {}", product.id, step.normalize(), product.base),
            ));
        }
    }
    if let (Some(funds), Some(step)) = (funds, product.quote_increment) {
        if funds > Decimal::ZERO && !on_step(funds, step) {
            problems.push(("funds", format!("{funds} is finer than the {quote} step {}", step.normalize())));
        }
    }
    if let Some(minimum) = product.min_market_funds.filter(|m| !m.is_zero()) {
        let notional = match (kind, price, size, funds) {
            ("limit", Some(price), Some(size), _) => Some(("size", price * size)),
            ("market", _, _, Some(funds)) => Some(("funds", funds)),
            _ => None,
        };
        if let Some((field, amount)) = notional.filter(|(_, amount)| *amount > Decimal::ZERO && *amount < minimum) {
            problems.push((
                field,
                format!(
                    "{} {quote} is under {}'s minimum of {} {quote}",
                    amount.normalize(),
                    product.id,
                    minimum.normalize()
                ),
            ));
        }
    }
    problems
}

fn field_name(name: &str) -> &'static str {
    match name {
        "price" => "price",
        "size" => "size",
        _ => "funds",
    }
}

/// An order's estimate: the lines said in the form and restated in its confirmation.
pub struct Estimate {
    pub lines: Vec<String>,
}

/// What an order will cost and the hold it places, from what it says and what the tab knows:
/// a buy limit holds price × size × (1 + taker fee) in the quote currency, a sell its size in
/// the base, a market buy with funds those funds. What is not known is said so, never guessed.
pub fn order_estimate(values: &Values, known: &dyn Fn(&str) -> Option<Value>) -> Estimate {
    let kind = kind_of(values);
    let side = values.get("side").map_or("", String::as_str);
    let (price, size, funds) = (value_of(values, "price"), value_of(values, "size"), value_of(values, "funds"));
    let product = product_of(values, known);
    let id = values.get("product_id").cloned().unwrap_or_default();
    let (id_base, id_quote) = id.split_once('-').unwrap_or((id.as_str(), ""));
    let (base, quote) = match &product {
        Ok(p) => (p.base.clone(), p.quote.clone()),
        Err(_) => (id_base.to_owned(), id_quote.to_owned()),
    };
    let amount = |d: Decimal| money_text(&d.normalize().to_string()).unwrap_or_else(|| d.to_string());
    let mut lines = Vec::new();
    match (side, kind) {
        ("buy", "limit") => {
            let (Some(price), Some(size)) = (price, size) else { return Estimate { lines } };
            let cost = price * size;
            lines.push(format!(
                "estimated cost: {} {base} × {} = {} {quote}",
                size.normalize(),
                amount(price),
                amount(cost)
            ));
            match taker_fee(known) {
                Ok(rate) => {
                    let hold = cost * (Decimal::ONE + rate);
                    let percent = (rate * Decimal::ONE_HUNDRED).normalize();
                    lines.push(format!(
                        "hold: {} {quote} (price × size × (1 + {percent} % taker fee))",
                        amount(hold.round_dp(8))
                    ));
                }
                Err(why) => lines.push(format!("hold: {} {quote} plus the taker fee ({why})", amount(cost))),
            }
        }
        ("buy", "market") => match (funds, size) {
            (Some(funds), _) => lines.push(format!("hold: {} {quote} (the funds given)", amount(funds))),
            (None, Some(size)) => lines.push(format!(
                "cost and hold: unknown until it fills ({} {base} at market; give funds to cap it)",
                size.normalize()
            )),
            (None, None) => {}
        },
        ("sell", _) => {
            if let Some(size) = size {
                if let (Some(price), true) = (price, kind != "market") {
                    lines.push(format!(
                        "estimated proceeds: {} {base} × {} = {} {quote} before fees",
                        size.normalize(),
                        amount(price),
                        amount(size * price)
                    ));
                }
                lines.push(format!("hold: {} {base} (the size sold)", size.normalize()));
            } else if let Some(funds) = funds {
                lines.push(format!("sells {base} for {} {quote}; hold: unknown until it fills", amount(funds)));
            }
        }
        _ => {}
    }
    Estimate { lines }
}

/// The lines the order form shows while it is filled: the product's steps, then the estimate.
pub fn order_notes(values: &Values, known: &dyn Fn(&str) -> Option<Value>) -> Vec<String> {
    let mut notes = Vec::new();
    match product_of(values, known) {
        Ok(p) => {
            let step = |d: Option<Decimal>| d.map_or_else(|| "unknown".to_owned(), |d| d.normalize().to_string());
            let minimum =
                p.min_market_funds.map(|m| format!(", at least {} {}", m.normalize(), p.quote)).unwrap_or_default();
            notes.push(format!(
                "{}: price in steps of {} {}, size in steps of {} {}{minimum}",
                p.id,
                step(p.quote_increment),
                p.quote,
                step(p.base_increment),
                p.base
            ));
        }
        Err(why) => notes.push(why),
    }
    notes.extend(order_estimate(values, known).lines);
    notes
}

/// What the order form needs and the tab does not know: the product's record, the fee rates.
pub fn order_lookups(values: &Values, known: &dyn Fn(&str) -> Option<Value>) -> Vec<Lookup> {
    let mut lookups = Vec::new();
    if let Some(id) = values.get("product_id").filter(|p| !p.trim().is_empty()) {
        if known(id).is_none() {
            let values = [("product_id".to_owned(), id.clone())].into_iter().collect();
            lookups.push(Lookup { key: id.clone(), op: "products_get", values });
        }
    }
    // Asked as the form opens, whatever its side: a buy's hold needs it, and the side may change.
    if known(FEES).is_none() {
        lookups.push(Lookup { key: FEES.to_owned(), op: "fees_get", values: Values::new() });
    }
    lookups
}

// ---------------------------------------------------------------------------------------------
// Small helpers

/// A live fact of a market, with no direction.
fn live(label: &str, value: String) -> (String, String, Option<Move>) {
    (label.to_owned(), value, None)
}

/// An amount of `currency`: fiat to its minor unit, anything else with every digit it has.
fn amount_of(value: Option<&Value>, currency: &str) -> String {
    value.and_then(Value::as_str).and_then(|v| crate::format::amount_text(v, currency)).unwrap_or_else(|| text(value))
}

fn quantity_or_text(value: Option<&Value>) -> String {
    value.and_then(Value::as_str).and_then(crate::format::quantity_text).unwrap_or_else(|| text(value))
}

fn money_or_text(value: Option<&Value>) -> String {
    value.and_then(crate::format::money).unwrap_or_else(|| text(value))
}

fn percent_text(value: Option<&Value>) -> String {
    value.and_then(crate::format::percent).unwrap_or_else(|| text(value))
}

#[cfg(test)]
#[path = "coinbase_tests.rs"]
mod tests;
