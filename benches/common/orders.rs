//! Order-like records as APIs send them (nested objects and arrays, strings with escapes,
//! numbers), minified: the documents the inspector and table benchmarks open. Deterministic.

#![allow(dead_code, reason = "each benchmark uses a part")]

use bytes::Bytes;
use opsdeck::sandbox::rng::Rng;

/// Only in the last record, so a search scans the whole body.
pub const NEEDLE: &str = "Needle-In-The-Haystack";

pub fn record(rng: &mut Rng, n: usize, out: &mut String, last: bool) {
    use std::fmt::Write as _;
    let status = rng.pick(&["paid", "pending", "refunded", "shipped"]);
    let city = rng.pick(&["London", "Z\\u00fcrich", "S\u{e3}o Paulo", "New York", "Tokyo"]);
    let name = rng.pick(&["Ada \\\"The Countess\\\" Lovelace", "Grace Hopper", "Alan Turing", "Edsger W. Dijkstra"]);
    let note = if last {
        format!("\"{NEEDLE}\"")
    } else {
        (*rng.pick(&["null", "\"Leave at the back door\\nThanks!\"", "\"gift \\u2603 wrap\"", "\"\""])).to_owned()
    };
    let cents = rng.next_u64() % 100_000;
    let _ = write!(
        out,
        r#"{{"id":"ord_{n:08}","number":{n},"status":"{status}","currency":"USD","total":{}.{:02},"tax_rate":0.0825,"paid":{},"note":{note},"customer":{{"id":"cus_{:06}","name":"{name}","email":"user{}@example.com","address":{{"line1":"{} Main St\tUnit 4","city":"{city}","postal_code":"{:05}","country":"US"}}}},"items":["#,
        cents / 100,
        cents % 100,
        cents % 2 == 0,
        rng.next_u64() % 1_000_000,
        rng.next_u64() % 10_000,
        rng.next_u64() % 900 + 1,
        rng.next_u64() % 100_000,
    );
    let items = 1 + rng.next_u64() % 4;
    for i in 0..items {
        if i > 0 {
            out.push(',');
        }
        let _ = write!(
            out,
            r#"{{"sku":"SKU-{:05}","name":"{}","quantity":{},"unit_price":{}.{:02},"tags":["{}","{}"]}}"#,
            rng.next_u64() % 100_000,
            rng.pick(&["Widget", "Gadget \\u00e9lite", "Sprocket (large)", "Cable 2m"]),
            1 + rng.next_u64() % 5,
            rng.next_u64() % 500,
            rng.next_u64() % 100,
            rng.pick(&["red", "blue", "green"]),
            rng.pick(&["small", "large", "sale"]),
        );
    }
    let _ = write!(
        out,
        r#"],"created_at":"2024-{:02}-{:02}T12:{:02}:00Z","metadata":{{"source":"api","attempt":{},"flags":[true,false,null]}}}}"#,
        1 + rng.next_u64() % 12,
        1 + rng.next_u64() % 28,
        rng.next_u64() % 60,
        rng.next_u64() % 3,
    );
}

pub fn generate(size: usize) -> Bytes {
    let mut rng = Rng::new(0x5EED_0F0D_5EED_0F0D);
    let mut out = String::with_capacity(size + 4096);
    out.push('[');
    let mut n = 0;
    // Records average well under 2 KB; stop one short of the target, then add the last one.
    while out.len() + 2048 < size {
        if n > 0 {
            out.push(',');
        }
        record(&mut rng, n, &mut out, false);
        n += 1;
    }
    out.push(',');
    record(&mut rng, n, &mut out, true);
    out.push(']');
    Bytes::from(out)
}

/// A list page of `count` records of about `size / count` bytes each (a `description` pads the
/// generated record to that size), `size` bytes in all give or take a record.
pub fn page(count: usize, size: usize) -> Bytes {
    let mut rng = Rng::new(0x00DD_BA11_5EED);
    let per_record = size / count.max(1);
    let mut out = String::with_capacity(size + 4096);
    out.push('[');
    let mut one = String::new();
    for n in 0..count {
        if n > 0 {
            out.push(',');
        }
        one.clear();
        record(&mut rng, n, &mut one, n + 1 == count);
        // Padding goes inside the record, before its closing brace.
        let pad = per_record.saturating_sub(one.len() + 20);
        one.pop();
        one.push_str(",\"description\":\"");
        one.extend(std::iter::repeat_n('x', pad));
        one.push_str("\"}");
        out.push_str(&one);
    }
    out.push(']');
    Bytes::from(out)
}
