//! The exchange's JSON: decimals as strings (prices and sizes with 8 places, quote amounts and
//! balances with 16, as the exchange writes them), times in RFC 3339 with microseconds, candles
//! as arrays of numbers.

use rust_decimal::Decimal;
use serde_json::{json, Map, Value};

use super::catalog::{CurrencySpec, ProductSpec, CURRENCIES, PRODUCTS};
pub use super::fixed::fixed;
use super::market::{from_ticks, Stats};
use super::state::{
    Account, Candle, Conversion, Details, Fill, LedgerEntry, Order, State, Status, Trade, Transfer, TransferKind, Via,
};
use crate::sandbox::clock;

pub fn time(ms: i64) -> String {
    // The exchange writes microseconds: `2020-03-11T20:48:46.622052Z`.
    let text = clock::rfc3339_ms(ms);
    format!("{}000Z", &text[..text.len() - 1])
}

pub fn d8(value: Decimal) -> String {
    fixed(value, 8)
}

pub fn d16(value: Decimal) -> String {
    fixed(value, 16)
}

/// A price as the book and the tape write it: the product's own places.
pub fn price(value: Decimal, spec: &ProductSpec) -> String {
    fixed(value, spec.quote_increment.normalize().scale())
}

pub fn product(spec: &ProductSpec) -> Value {
    json!({
        "id": spec.id,
        "base_currency": CURRENCIES[spec.base].id,
        "quote_currency": CURRENCIES[spec.quote].id,
        "quote_increment": d8(spec.quote_increment),
        "base_increment": d8(spec.base_increment),
        "display_name": spec.id.replace('-', "/"),
        "min_market_funds": spec.min_market_funds.normalize().to_string(),
        "margin_enabled": false,
        "fx_stablecoin": false,
        "max_slippage_percentage": "0.03000000",
        "post_only": false,
        "limit_only": false,
        "cancel_only": false,
        "trading_disabled": false,
        "status": "online",
        "status_message": "",
        "auction_mode": false,
    })
}

pub fn currency(spec: &CurrencySpec, index: usize) -> Value {
    let kind = if spec.fiat { "fiat" } else { "crypto" };
    let networks: Vec<Value> = if spec.fiat {
        Vec::new()
    } else {
        vec![json!({
            "id": spec.network,
            "name": spec.network,
            "status": "online",
            "contract_address": "",
            "crypto_address_link": "",
            "crypto_transaction_link": "",
            "min_withdrawal_amount": spec.min_size.normalize().to_string().parse::<f64>().unwrap_or(0.0),
            "max_withdrawal_amount": 1_000_000,
            "network_confirmations": spec.confirm_minutes,
            "processing_time_seconds": spec.confirm_minutes * 60,
        })]
    };
    let convertible: Vec<&str> = match spec.id {
        "USD" => vec!["USDC"],
        "USDC" => vec!["USD"],
        _ => Vec::new(),
    };
    json!({
        "id": spec.id,
        "name": spec.name,
        "min_size": d8(spec.min_size),
        "status": "online",
        "message": "",
        "max_precision": spec.max_precision.normalize().to_string(),
        "convertible_to": convertible,
        "details": {
            "type": kind,
            "symbol": spec.symbol,
            "network_confirmations": spec.confirm_minutes,
            "sort_order": index,
            "crypto_address_link": "",
            "crypto_transaction_link": "",
            "push_payment_methods": if spec.fiat { json!(["bank_wire", "fedwire", "swift_bank_account"]) } else { json!(["crypto"]) },
            "group_types": if spec.fiat { json!(["fiat", spec.id.to_ascii_lowercase()]) } else { json!(["crypto"]) },
            "display_name": spec.name,
            "processing_time_seconds": spec.confirm_minutes * 60,
            "min_withdrawal_amount": spec.min_size.normalize().to_string().parse::<f64>().unwrap_or(0.0),
            "max_withdrawal_amount": 1_000_000,
        },
        "default_network": spec.network,
        "supported_networks": networks,
    })
}

pub fn account(state: &State, account: &Account) -> Value {
    json!({
        "id": account.id,
        "currency": CURRENCIES[account.currency].id,
        "balance": d16(account.balance),
        "hold": d16(account.hold),
        "available": d16(account.available()),
        "profile_id": state.profiles[account.profile].id,
        "trading_enabled": true,
        "pending_deposit": d16(Decimal::ZERO),
    })
}

pub fn order(state: &State, order: &Order) -> Value {
    let spec = &PRODUCTS[order.product];
    let mut out = Map::new();
    out.insert("id".into(), json!(order.id));
    if let Some(price) = order.price {
        out.insert("price".into(), json!(d8(price)));
    }
    if let Some(size) = order.size {
        out.insert("size".into(), json!(d8(size)));
    }
    out.insert("product_id".into(), json!(spec.id));
    out.insert("profile_id".into(), json!(state.profiles[order.profile].id));
    out.insert("side".into(), json!(order.side.as_str()));
    if let Some(funds) = order.funds {
        out.insert("funds".into(), json!(d16(funds)));
    }
    if let Some(funds) = order.specified_funds {
        out.insert("specified_funds".into(), json!(d16(funds)));
    }
    out.insert("type".into(), json!(order.order_type));
    out.insert("time_in_force".into(), json!(order.tif.as_str()));
    if let Some(expire) = order.expire_ms {
        out.insert("expire_time".into(), json!(time(expire)));
    }
    out.insert("post_only".into(), json!(order.post_only));
    out.insert("created_at".into(), json!(time(order.created_ms)));
    if let Some(done) = order.done_ms {
        out.insert("done_at".into(), json!(time(done)));
    }
    if let Some(reason) = order.done_reason {
        out.insert("done_reason".into(), json!(reason));
    }
    if let Some(reason) = order.reject_reason {
        out.insert("reject_reason".into(), json!(reason));
    }
    out.insert("fill_fees".into(), json!(d16(order.fill_fees)));
    out.insert("filled_size".into(), json!(d8(order.filled_size)));
    out.insert("executed_value".into(), json!(d16(order.executed_value)));
    out.insert("market_type".into(), json!("spot"));
    out.insert("status".into(), json!(order.status.as_str()));
    out.insert("settled".into(), json!(matches!(order.status, Status::Done | Status::Rejected)));
    out.insert("stp".into(), json!(order.stp.as_str()));
    if let Some((kind, at)) = order.stop {
        out.insert("stop".into(), json!(kind.as_str()));
        out.insert("stop_price".into(), json!(d8(at)));
    }
    if let Some(oid) = &order.client_oid {
        out.insert("client_oid".into(), json!(oid));
    }
    Value::Object(out)
}

/// An order as `POST /orders` answers it: accepted, not yet matched (the exchange answers before
/// its engine has seen the order), unless it was rejected outright.
pub fn order_received(state: &State, o: &Order) -> Value {
    let mut value = order(state, o);
    if o.status != Status::Rejected {
        if let Some(map) = value.as_object_mut() {
            map.insert("status".into(), json!("pending"));
            map.insert("settled".into(), json!(false));
            map.insert("fill_fees".into(), json!(d16(Decimal::ZERO)));
            map.insert("filled_size".into(), json!(d8(Decimal::ZERO)));
            map.insert("executed_value".into(), json!(d16(Decimal::ZERO)));
            for key in ["done_at", "done_reason"] {
                map.remove(key);
            }
        }
    }
    value
}

pub fn fill(state: &State, profile: usize, fill: &Fill) -> Value {
    let spec = &PRODUCTS[fill.product];
    json!({
        "created_at": time(fill.at_ms),
        "trade_id": fill.trade_id,
        "product_id": spec.id,
        "order_id": fill.order_id,
        "user_id": state.users[state.profiles[profile].user].id,
        "profile_id": state.profiles[profile].id,
        "liquidity": fill.liquidity.to_string(),
        "price": d8(fill.price),
        "size": d8(fill.size),
        "fee": d16(fill.fee),
        "side": fill.side.as_str(),
        "settled": true,
        "usd_volume": d16(fill.usd_volume),
        "funding_currency": CURRENCIES[spec.quote].id,
        "market_type": "spot",
    })
}

pub fn ledger(state: &State, entry: &LedgerEntry) -> Value {
    let details = match &entry.details {
        Details::Match { order_id, trade_id, product } => {
            json!({"order_id": order_id, "trade_id": trade_id.to_string(), "product_id": PRODUCTS[*product].id})
        }
        Details::Transfer { transfer_id, transfer_type } => {
            json!({"transfer_id": transfer_id, "transfer_type": transfer_type})
        }
        Details::Conversion { conversion_id } => json!({"conversion_id": conversion_id}),
    };
    let _ = state;
    json!({
        "id": entry.id.to_string(),
        "created_at": time(entry.at_ms),
        "amount": d16(entry.amount),
        "balance": d16(entry.balance),
        "type": entry.kind,
        "details": details,
    })
}

pub fn trade(spec: &ProductSpec, trade: &Trade) -> Value {
    json!({
        "time": time(trade.at_ms),
        "trade_id": trade.id,
        "price": price(trade.price, spec),
        "size": d8(trade.size),
        "side": trade.side.as_str(),
    })
}

pub fn candle(spec: &ProductSpec, candle: &Candle) -> Value {
    let number = |d: Decimal| d.normalize().to_string().parse::<f64>().unwrap_or(0.0);
    let p = |ticks| number(from_ticks(ticks, spec.quote_increment));
    json!([
        candle.start_s,
        p(candle.low),
        p(candle.high),
        p(candle.open),
        p(candle.close),
        number(Decimal::from(candle.volume).checked_mul(spec.base_increment).unwrap_or(Decimal::MAX))
    ])
}

pub fn stats(spec: &ProductSpec, stats: &Stats) -> Value {
    let p = |v: Option<Decimal>| v.map_or_else(|| "0".to_owned(), |v| price(v, spec));
    json!({
        "open": p(stats.open),
        "high": p(stats.high),
        "low": p(stats.low),
        "last": p(stats.last),
        "volume": d8(stats.volume),
        "volume_30day": d8(stats.volume_30day),
        "rfq_volume_24hour": d8(Decimal::ZERO),
        "rfq_volume_30day": d8(Decimal::ZERO),
        "conversions_volume_24hour": d8(Decimal::ZERO),
        "conversions_volume_30day": d8(Decimal::ZERO),
    })
}

pub fn transfer(state: &State, t: &Transfer) -> Value {
    let spec = &CURRENCIES[t.currency];
    let mut details = Map::new();
    match &t.via {
        Via::CoinbaseAccount(id) => {
            details.insert("coinbase_account_id".into(), json!(id));
            details.insert("coinbase_transaction_id".into(), json!(format!("{:024x}", t.key)));
        }
        Via::PaymentMethod(id) => {
            details.insert("coinbase_payment_method_id".into(), json!(id));
            details.insert("coinbase_payment_method_type".into(), json!("ach_bank_account"));
        }
        Via::Crypto { address, destination_tag, network, hash } => {
            details.insert("crypto_address".into(), json!(address));
            if let Some(tag) = destination_tag {
                details.insert("destination_tag".into(), json!(tag));
            }
            details.insert("network".into(), json!(network));
            details.insert("fee".into(), json!(d8(t.fee)));
            details.insert("subtotal".into(), json!(d8(t.amount.saturating_sub(t.fee))));
            if t.completed {
                details.insert("crypto_transaction_hash".into(), json!(hash));
            }
        }
    }
    let done = t.completed.then(|| time(t.payout_ms));
    json!({
        "id": t.id,
        "type": match t.kind { TransferKind::Deposit => "deposit", TransferKind::Withdraw => "withdraw" },
        "created_at": time(t.created_ms),
        "completed_at": done,
        "canceled_at": null,
        "processed_at": done,
        "account_id": state.account(t.profile, t.currency).id,
        "user_id": state.users[state.profiles[t.profile].user].id,
        "user_nonce": t.nonce,
        "amount": if spec.fiat { fixed(t.amount, 2) } else { d8(t.amount) },
        "details": details,
        "currency": spec.id,
        "idem": null,
    })
}

/// What a deposit or withdrawal POST answers.
pub fn transfer_receipt(t: &Transfer) -> Value {
    let spec = &CURRENCIES[t.currency];
    let amount = |d: Decimal| if spec.fiat { fixed(d, 2) } else { d8(d) };
    let mut out = json!({"id": t.id, "amount": amount(t.amount), "currency": spec.id, "payout_at": time(t.payout_ms)});
    if let (Some(map), true) = (out.as_object_mut(), matches!(t.via, Via::Crypto { .. } | Via::PaymentMethod(_))) {
        map.insert("fee".into(), json!(amount(t.fee)));
        map.insert("subtotal".into(), json!(amount(t.amount.saturating_sub(t.fee))));
    }
    out
}

pub fn conversion(state: &State, c: &Conversion) -> Value {
    json!({
        "id": c.id,
        "amount": d8(c.amount),
        "from_account_id": state.account(c.profile, c.from).id,
        "to_account_id": state.account(c.profile, c.to).id,
        "from": CURRENCIES[c.from].id,
        "to": CURRENCIES[c.to].id,
        "fee_amount": d16(Decimal::ZERO),
        "created_at": time(c.at_ms),
    })
}
