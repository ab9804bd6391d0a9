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

/// Currencies whose amounts are written to the cent (ISO 4217 minor unit 2).
const CENT_CURRENCIES: &[&str] = &["USD", "EUR", "GBP", "CAD", "AUD", "CHF", "SGD"];

/// An amount of `currency` as people read it: a fiat amount at its minor unit (`99,077.86`,
/// half away from zero), anything else as [`money_text`] gives it. `None` when it is no number.
pub fn amount_text(text: &str, currency: &str) -> Option<String> {
    let amount = decimal(text)?;
    if CENT_CURRENCIES.iter().any(|c| c.eq_ignore_ascii_case(currency.trim())) {
        return Some(grouped(
            amount.round_dp_with_strategy(2, rust_decimal::RoundingStrategy::MidpointAwayFromZero),
            2,
        ));
    }
    Some(grouped(amount, 2))
}

/// A price written at its product's step (a quote increment): exactly as many decimals as the
/// step has, so the prices of a ladder line up (`97,598.40` at `0.01`, `0.40240` at
/// `0.00001`), rounded half away from zero should the server write more. `None` when it is no
/// number.
pub fn price_at_step(text: &str, step: Decimal) -> Option<String> {
    let places = step.normalize().scale();
    let amount = decimal(text)?.round_dp_with_strategy(places, rust_decimal::RoundingStrategy::MidpointAwayFromZero);
    Some(grouped(amount, places))
}

/// A quantity (an order's size, a trade's, a book level's): every digit it has and no more,
/// grouped like money (`0.036`, `1,250.5`), since a size's trailing zeros say nothing.
pub fn quantity_text(text: &str) -> Option<String> {
    Some(grouped(decimal(text)?, 0))
}

/// What an order does, as its confirmation and its cancel restate it: `buy 0.001 BTC at
/// 90,000.12 USD`. The currencies come from the product id (`BTC-USD`); a size or price that
/// is no number is written as given.
pub fn order_text(side: &str, product: &str, size: Option<&str>, price: Option<&str>, funds: Option<&str>) -> String {
    let (base, quote) = product.split_once('-').unwrap_or((product, ""));
    let unit = |currency: &str| if currency.is_empty() { String::new() } else { format!(" {currency}") };
    let size = size.map(|s| format!("{}{}", quantity_text(s).unwrap_or_else(|| s.to_owned()), unit(base)));
    let money = |m: &str| format!("{}{}", money_text(m).unwrap_or_else(|| m.to_owned()), unit(quote));
    let what = match (size, price, funds) {
        (Some(size), Some(price), _) => format!("{size} at {}", money(price)),
        (Some(size), None, _) => format!("{size} at market"),
        (None, _, Some(funds)) => format!("{base} for {} at market", money(funds)),
        _ => product.to_owned(),
    };
    format!("{side} {what}")
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

/// Columns whose values are times: millisecond or second epochs (Ably's `timestamp`, `issued`,
/// `expires`), RFC 3339 (`created_at`) and RFC 2822 (Mailgun's `created_at`) text, and the
/// start of a stats interval (`intervalId`).
pub fn is_time_column(name: &str) -> bool {
    // Asked for every cell of a page: compared in place, not lowered into a new string.
    let name = name.as_bytes();
    ["time", "issued", "expires", "created", "updated", "modified", "interval"]
        .iter()
        .any(|word| name.windows(word.len()).any(|part| part.eq_ignore_ascii_case(word.as_bytes())))
}

/// The one way the console and `opsdeck call -o table` write a moment: `2026-11-26 13:19:15`,
/// in UTC, as every simulator and most vendors keep their times. Tables, the history and the
/// sandbox view all use it, so two times on one screen always read alike.
pub fn datetime_text(at: time::OffsetDateTime) -> String {
    let format = time::macros::format_description!("[year]-[month]-[day] [hour]:[minute]:[second]");
    at.to_offset(time::UtcOffset::UTC).format(&format).unwrap_or_default()
}

/// A millisecond epoch as `2026-11-22 05:12:40` UTC; `None` outside 2001..2286, where a number is
/// unlikely to be one.
pub fn epoch_ms_text(ms: i64) -> Option<String> {
    if !(1_000_000_000_000..10_000_000_000_000).contains(&ms) {
        return None;
    }
    Some(datetime_text(time::OffsetDateTime::from_unix_timestamp(ms / 1000).ok()?))
}

/// Epoch seconds (with a fraction) as `2018-06-22 18:29:59` UTC.
pub fn epoch_seconds_text(seconds: f64) -> Option<String> {
    if !seconds.is_finite() || !(0.0..1e11).contains(&seconds) {
        return None;
    }
    Some(datetime_text(time::OffsetDateTime::from_unix_timestamp(seconds.floor() as i64).ok()?))
}

/// A number in a time column as a moment: milliseconds from 2001 to 2286, or seconds from 1973
/// to 5138 (Mailgun's float `timestamp`); any other number is a count, not a time.
pub fn epoch_text(number: f64) -> Option<String> {
    if !number.is_finite() {
        return None;
    }
    if (1e12..1e13).contains(&number) {
        return epoch_ms_text(number as i64);
    }
    (1e8..1e11).contains(&number).then(|| epoch_seconds_text(number)).flatten()
}

/// A time written as text, in any shape the seven services write one: RFC 3339 / ISO 8601 with
/// an offset (`2026-11-26T13:19:15.120Z`), ISO 8601 without one (AvaTax's `2026-11-26T13:19:15`,
/// taken as UTC), RFC 2822 (Mailgun's `Thu, 26 Nov 2026 13:19:15 UTC`, `GMT` or `+0000`), or
/// epoch seconds or milliseconds written as digits. `None` for anything else, a bare date
/// included (`2026-11-26` is a day, not a moment, and reads fine as it is).
pub fn parse_timestamp(text: &str) -> Option<time::OffsetDateTime> {
    use time::format_description::well_known::{Iso8601, Rfc2822, Rfc3339};
    use time::{OffsetDateTime, PrimitiveDateTime};
    let text = text.trim();
    // Cheap refusals first: a table asks this of every cell of a time column.
    if text.len() < 8 || text.len() > 64 {
        return None;
    }
    if text.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        let number: f64 = text.parse().ok()?;
        let seconds = if (1e12..1e13).contains(&number) {
            number / 1000.0
        } else if (1e8..1e11).contains(&number) {
            number
        } else {
            return None;
        };
        return OffsetDateTime::from_unix_timestamp(seconds.floor() as i64).ok();
    }
    if text.as_bytes().get(4) == Some(&b'-') {
        if let Some(at) = interval_start(text) {
            return Some(at);
        }
        if !text.contains(['T', 't', ' ']) {
            return None;
        }
        if let Ok(at) = OffsetDateTime::parse(text, &Rfc3339) {
            return Some(at);
        }
        // `2026-11-26 13:19:15` and `2026-11-26T13:19:15+01:00` that RFC 3339 refuses.
        let iso = text.replacen(' ', "T", 1);
        if let Ok(at) = OffsetDateTime::parse(&iso, &Iso8601::DEFAULT) {
            return Some(at);
        }
        return PrimitiveDateTime::parse(&iso, &Iso8601::DEFAULT).ok().map(PrimitiveDateTime::assume_utc);
    }
    if !text.contains(':') || !text.starts_with(|c: char| c.is_ascii_alphanumeric()) {
        return None;
    }
    // The `time` crate reads numeric zones and `GMT`/`UT`; `UTC`, which Mailgun writes too, is
    // read as `+0000`.
    match text.rsplit_once(' ') {
        Some((rest, "UTC" | "GMT" | "UT" | "Z")) => OffsetDateTime::parse(&format!("{rest} +0000"), &Rfc2822).ok(),
        _ => OffsetDateTime::parse(text, &Rfc2822).ok(),
    }
}

/// The start of a stats interval written as an interval id to the minute or the hour
/// (`2026-11-28:15:15`, `2026-11-28:15`, UTC): a moment, though no standard layout. A day or a
/// month id is a date and reads fine as it is.
fn interval_start(text: &str) -> Option<time::OffsetDateTime> {
    let (day, clock) = (text.get(..10)?, text.get(10..)?.strip_prefix(':')?);
    let (hour, minute) = clock.split_once(':').unwrap_or((clock, "00"));
    let number = |part: &str| {
        (part.len() == 2 && part.bytes().all(|b| b.is_ascii_digit())).then(|| part.parse::<u8>().ok()).flatten()
    };
    let date = time::Date::parse(day, time::macros::format_description!("[year]-[month]-[day]")).ok()?;
    let at = time::Time::from_hms(number(hour)?, number(minute)?, 0).ok()?;
    Some(time::PrimitiveDateTime::new(date, at).assume_utc())
}

/// A time written as text ([`parse_timestamp`]) in the console's one format
/// ([`datetime_text`]); `None` when it is no time, so the text is shown as it is.
pub fn timestamp_text(text: &str) -> Option<String> {
    parse_timestamp(text).map(datetime_text)
}

/// `1 row`, `2 rows`, `40,000 rows`: a count and its noun, made plural the regular way (`s`).
/// Use [`plural_with`] for a noun that is not (`1 entry`, `2 entries`).
pub fn plural(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{} {noun}s", thousands(n))
    }
}

/// [`plural`] with the plural given: `plural_with(n, "entry", "entries")`.
pub fn plural_with(n: usize, one: &str, many: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{} {many}", thousands(n))
    }
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

/// A time written as text in the console's one format (`2026-11-26 13:19:15`, seconds kept:
/// a tracker's scans and an order's fills can be seconds apart), whatever shape the service
/// wrote it in; other text (a bare date, `never`) as it is.
pub fn time_text(text: &str) -> String {
    timestamp_text(text).unwrap_or_else(|| text.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_amount_of_a_currency_written_to_the_cent_is_rounded_to_it() {
        assert_eq!(amount_text("99077.8606195125962", "USD").as_deref(), Some("99,077.86"));
        assert_eq!(amount_text("0.005", "usd").as_deref(), Some("0.01"), "half away from zero");
        assert_eq!(amount_text("-9182.6171190", "EUR").as_deref(), Some("-9,182.62"));
        assert_eq!(amount_text("2.50110277", "BTC").as_deref(), Some("2.50110277"), "crypto keeps its digits");
        assert_eq!(amount_text("x", "USD"), None);
    }

    #[test]
    fn a_price_reads_at_its_step_and_a_size_with_the_digits_it_has() {
        let cent = Decimal::new(1, 2);
        assert_eq!(price_at_step("97598.4", cent).as_deref(), Some("97,598.40"));
        assert_eq!(price_at_step("90000.12000000", cent).as_deref(), Some("90,000.12"));
        assert_eq!(price_at_step("0.4024", Decimal::new(1, 5)).as_deref(), Some("0.40240"));
        assert_eq!(price_at_step("1.005", cent).as_deref(), Some("1.01"));
        assert_eq!(price_at_step("12", Decimal::ONE).as_deref(), Some("12"));
        assert_eq!(quantity_text("0.03600000").as_deref(), Some("0.036"));
        assert_eq!(quantity_text("1250.50").as_deref(), Some("1,250.5"));
        assert_eq!(quantity_text("20.00000000").as_deref(), Some("20"));
        assert_eq!(price_at_step("ten", cent), None);
    }

    #[test]
    fn an_order_is_restated_in_its_currencies() {
        assert_eq!(
            order_text("buy", "BTC-USD", Some("0.00100000"), Some("90000.12000000"), None),
            "buy 0.001 BTC at 90,000.12 USD"
        );
        assert_eq!(order_text("sell", "ETH-USD", Some("2"), None, None), "sell 2 ETH at market");
        assert_eq!(order_text("buy", "BTC-USD", None, None, Some("250")), "buy BTC for 250.00 USD at market");
        assert_eq!(order_text("buy", "BTC-USD", Some("lots"), Some("9"), None), "buy lots BTC at 9.00 USD");
    }

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
    fn times_in_every_shape_read_in_one_format() {
        let one = Some("2024-01-01 10:05:00".to_owned());
        for text in [
            "2024-01-01T10:05:00Z",
            "2024-01-01T10:05:00.250Z",
            "2024-01-01T11:05:00+01:00",
            "2024-01-01T10:05:00",
            "2024-01-01 10:05:00",
            "Mon, 01 Jan 2024 10:05:00 UTC",
            "Mon, 01 Jan 2024 10:05:00 GMT",
            "Mon, 01 Jan 2024 10:05:00 -0000",
            "Mon, 01 Jan 2024 11:05:00 +0100",
            "1704103500",
            "1704103500.6",
            "1704103500000",
            "2024-01-01:10:05",
        ] {
            assert_eq!(timestamp_text(text), one, "{text}");
        }
        for not_time in
            ["", "2024-01-01", "orders:eu", "12", "2024-13-01T10:00:00Z", "Mon, 99 Jan", "1.5", "hello: world"]
        {
            assert_eq!(timestamp_text(not_time), None, "{not_time}");
        }
        assert_eq!(epoch_text(1_704_103_500.6), one);
        assert_eq!(epoch_text(1_704_103_500_000.0), one);
        assert_eq!(epoch_text(3600.0), None, "a duration is no time");
        assert_eq!(epoch_ms_text(1_704_103_500_000), one);
        assert_eq!(timestamp_text("2024-01-01:10").as_deref(), Some("2024-01-01 10:00:00"), "an hour's interval");
        for not_interval in ["2024-01-01:25:00", "2024-01-01:1", "2024-01-01:10:5x"] {
            assert_eq!(timestamp_text(not_interval), None, "{not_interval}");
        }
        assert_eq!(time_text("2025-03-07T16:46:17+00:00"), "2025-03-07 16:46:17", "seconds kept");
        assert_eq!(time_text("never"), "never");
    }

    #[test]
    fn counts_say_one_row_and_two_rows() {
        assert_eq!(plural(0, "row"), "0 rows");
        assert_eq!(plural(1, "row"), "1 row");
        assert_eq!(plural(40_000, "row"), "40,000 rows");
        assert_eq!(plural_with(1, "entry", "entries"), "1 entry");
        assert_eq!(plural_with(2, "entry", "entries"), "2 entries");
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
