//! How numbers, amounts, sizes and times read on screen, shared by the console's views, its
//! tables and `opsdeck call -o table`. Pure functions over text and JSON values.

use std::str::FromStr as _;

use rust_decimal::Decimal;
use serde_json::Value;

/// Fields that hold money in AvaTax and TaxJar bodies; besides these, any field named like an
/// amount (`exemptAmount`, `state_amount`, `tax_collectable`) is money too.
const MONEY_FIELDS: &[&str] = &[
    "amount",
    "sales_tax",
    "shipping",
    "order_total_amount",
    "amount_to_collect",
    "unit_price",
    "discount",
    "tax",
    "taxable",
    "nonTaxable",
    "exemption",
    "taxCalculated",
    "totalTax",
    "totalTaxable",
    "totalExempt",
    "totalDiscount",
    "totalTaxCalculated",
];

/// Whether a column or field of this name holds money, so it is shown as `1,234.50` and
/// right-aligned.
pub fn is_money_field(name: &str) -> bool {
    MONEY_FIELDS.contains(&name)
        || name.ends_with("Amount")
        || name.ends_with("_amount")
        || name.ends_with("_collectable")
        || (name.starts_with("total") && name.len() > 5 && !name.ends_with("Rate"))
}

/// A number (JSON number or numeric string) in money format: thousands grouped, at least two
/// decimals, and never fewer digits than it has (`0.955` stays `0.955`, not a rounded `0.96`).
/// `None` when it is no number: the text is then shown as it is.
pub fn money(value: &Value) -> Option<String> {
    match value {
        Value::Number(n) => money_text(&n.to_string()),
        Value::String(s) => money_text(s),
        _ => None,
    }
}

/// [`money`] of a text.
pub fn money_text(text: &str) -> Option<String> {
    let amount = decimal(text)?;
    Some(grouped(amount, 2))
}

/// A rate (`0.0775`) as a percentage (`7.75 %`), exact.
pub fn percent(value: &Value) -> Option<String> {
    let rate = match value {
        Value::Number(n) => decimal(&n.to_string())?,
        Value::String(s) => decimal(s)?,
        _ => return None,
    };
    let hundred = Decimal::ONE_HUNDRED;
    Some(format!("{} %", grouped(rate.checked_mul(hundred)?, 2)))
}

pub fn decimal(text: &str) -> Option<Decimal> {
    let text = text.trim();
    if text.is_empty() {
        return None;
    }
    Decimal::from_str(text).or_else(|_| Decimal::from_scientific(text)).ok()
}

/// `amount` with at least `min_places` decimals and its integer part grouped by thousands.
fn grouped(amount: Decimal, min_places: u32) -> String {
    let normal = amount.normalize();
    let places = normal.scale().max(min_places) as usize;
    let text = format!("{normal:.places$}");
    let (sign, digits) = match text.strip_prefix('-') {
        Some(rest) => ("-", rest),
        None => ("", text.as_str()),
    };
    let (whole, fraction) = digits.split_once('.').unwrap_or((digits, ""));
    let mut out = String::with_capacity(text.len() + whole.len() / 3);
    for (index, digit) in whole.chars().enumerate() {
        if index > 0 && (whole.len() - index) % 3 == 0 {
            out.push(',');
        }
        out.push(digit);
    }
    let fraction = if fraction.is_empty() { String::new() } else { format!(".{fraction}") };
    format!("{sign}{out}{fraction}")
}

/// Today's date, `YYYY-MM-DD` (UTC), for the refund date a form starts with.
pub fn today() -> String {
    let now = time::OffsetDateTime::now_utc();
    format!("{:04}-{:02}-{:02}", now.year(), u8::from(now.month()), now.day())
}

/// `40,000`: a count as people read it.
pub fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Columns whose numbers are millisecond timestamps (Ably's `timestamp`, `issued`, `expires`).
pub fn is_time_column(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    ["time", "issued", "expires", "created", "updated", "modified"].iter().any(|w| name.contains(w))
}

/// A millisecond epoch as `2026-11-22 05:12:40` UTC; `None` outside 2001..2286, where a number is
/// unlikely to be one.
pub fn epoch_ms_text(ms: i64) -> Option<String> {
    if !(1_000_000_000_000..10_000_000_000_000).contains(&ms) {
        return None;
    }
    let at = time::OffsetDateTime::from_unix_timestamp(ms / 1000).ok()?;
    let format = time::macros::format_description!("[year]-[month]-[day] [hour]:[minute]:[second]");
    at.format(&format).ok()
}

/// A size in bytes as people say it.
pub fn human_bytes(bytes: u64) -> String {
    const KB: f64 = 1024.0;
    let b = bytes as f64;
    match bytes {
        0..1024 => format!("{bytes} B"),
        1024..1_048_576 => format!("{:.1} KB", b / KB),
        1_048_576..1_073_741_824 => format!("{:.1} MB", b / (KB * KB)),
        _ => format!("{:.1} GB", b / (KB * KB * KB)),
    }
}

/// Epoch seconds (with a fraction) as `2018-06-22 18:29:59` UTC.
pub fn epoch_seconds_text(seconds: f64) -> Option<String> {
    if !seconds.is_finite() || !(0.0..1e11).contains(&seconds) {
        return None;
    }
    let at = time::OffsetDateTime::from_unix_timestamp(seconds.floor() as i64).ok()?;
    let format = time::macros::format_description!("[year]-[month]-[day] [hour]:[minute]:[second]");
    at.format(&format).ok()
}

/// An ISO 8601 time as `2025-03-07 16:46` (EasyPost's times are UTC); other text as it is.
pub fn short_time(time: &str) -> String {
    match (time.get(..10), time.get(10..11), time.get(11..16)) {
        (Some(day), Some("T"), Some(clock)) => format!("{day} {clock}"),
        _ => time.to_owned(),
    }
}

/// An ISO 8601 time to the second, `2025-03-07 16:46:17`: a tracker's scans can be seconds apart.
pub fn time_to_second(time: &str) -> String {
    match (time.get(..10), time.get(10..11), time.get(11..19)) {
        (Some(day), Some("T"), Some(clock)) => format!("{day} {clock}"),
        _ => time.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn money_is_grouped_with_two_decimals_and_keeps_every_digit() {
        assert_eq!(money(&json!(1234.5)).as_deref(), Some("1,234.50"));
        assert_eq!(money(&json!("17.45")).as_deref(), Some("17.45"));
        assert_eq!(money(&json!(0)).as_deref(), Some("0.00"));
        assert_eq!(money(&json!(-16.5)).as_deref(), Some("-16.50"));
        assert_eq!(money(&json!(1_234_567)).as_deref(), Some("1,234,567.00"));
        assert_eq!(money(&json!("0.955")).as_deref(), Some("0.955"), "never rounded away");
        assert_eq!(money(&json!("-1000.0")).as_deref(), Some("-1,000.00"));
        assert_eq!(money(&json!("abc")), None);
        assert_eq!(money(&json!(true)), None);
        assert_eq!(percent(&json!(0.0775)).as_deref(), Some("7.75 %"));
        assert_eq!(percent(&json!("0.0625")).as_deref(), Some("6.25 %"));
        assert_eq!(percent(&json!(0.00375)).as_deref(), Some("0.375 %"));
    }

    #[test]
    fn money_fields_by_name() {
        for name in ["totalAmount", "totalTax", "amount", "sales_tax", "order_total_amount", "state_amount"] {
            assert!(is_money_field(name), "{name}");
        }
        for name in ["code", "status", "rate", "quantity", "id", "totalRate"] {
            assert!(!is_money_field(name), "{name}");
        }
    }
}
