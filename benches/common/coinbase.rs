//! The Coinbase load case's orders, which `sandbox_load` and `coinbase_feed` both send.

use serde_json::{json, Value};

/// Client `client`'s order number `index`: a limit buy resting under the market (cancelled
/// next), or every tenth a small market order that fills against the moving book (buys and sells
/// in turn, so the run never runs out of either currency).
pub fn load_case_order(client: usize, index: usize) -> Value {
    if index % 20 == 9 {
        json!({"product_id": "BTC-USD", "side": "buy", "type": "market", "funds": "10.00"})
    } else if index % 20 == 19 {
        json!({"product_id": "BTC-USD", "side": "sell", "type": "market", "size": "0.0001"})
    } else {
        let price = format!("{}.{:02}", 80_000 + (client * 97 + index) % 5_000, index % 100);
        json!({"product_id": "BTC-USD", "side": "buy", "type": "limit", "price": price, "size": "0.001"})
    }
}
