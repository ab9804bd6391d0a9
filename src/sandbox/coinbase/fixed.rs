//! Decimals written with a fixed number of places, as the exchange writes amounts.

use rust_decimal::Decimal;

/// `value` with exactly `places` decimals, written as text: a decimal cannot hold 29 digits
/// and 16 places at once (`format!("{:.16}")` of 1.1e15 panics), and text can.
pub fn fixed(value: Decimal, places: u32) -> String {
    let rounded = value.round_dp(places);
    let text = rounded.to_string();
    let (whole, fraction) = text.split_once('.').unwrap_or((&text, ""));
    let width = places as usize;
    if width == 0 {
        return whole.to_owned();
    }
    format!("{whole}.{fraction:0<width$}")
}
