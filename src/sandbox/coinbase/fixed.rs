//! Decimals written with a fixed number of places, as the exchange writes amounts.

use rust_decimal::{Decimal, RoundingStrategy};

/// `value` with exactly `places` decimals, cut past them as `format!("{:.places$}")` cuts, for
/// any decimal: `format!` with a precision writes into 32 bytes and panics past them (a
/// 16-place balance from 1e15 on, an 8-place price from 1e23 on).
pub fn fixed(value: Decimal, places: u32) -> String {
    let cut = value.round_dp_with_strategy(places, RoundingStrategy::ToZero);
    // Without a precision, `Display` writes the decimal's own digits, which always fit.
    let mut text = cut.to_string();
    // `format!` keeps the sign of a negative figure cut to zero (`-0.00`); so does this.
    if value.is_sign_negative() && !text.starts_with('-') {
        text.insert(0, '-');
    }
    let scale = cut.scale();
    if scale < places {
        if scale == 0 {
            text.push('.');
        }
        text.extend(std::iter::repeat_n('0', (places - scale) as usize));
    }
    text
}
