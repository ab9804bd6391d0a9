//! Coinbase Exchange: `{"message": "..."}` with the HTTP status (api/coinbase-exchange.md §6).
//! The exchange has no separate error code; texts such as `NotFound` are the whole message.

use crate::client::error::{json_str, ApiError};

pub(super) fn parse_error(status: u16, body: &[u8]) -> Option<ApiError> {
    let value: serde_json::Value = serde_json::from_slice(body).ok()?;
    let message = json_str(&value, "message")?.trim();
    if message.is_empty() {
        return None;
    }
    Some(ApiError { status, code: None, message: message.to_owned(), ..ApiError::default() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_message() {
        let e = parse_error(401, br#"{"message":"request timestamp expired"}"#).expect("parsed");
        assert_eq!(e.status, 401);
        assert_eq!(e.code, None);
        assert_eq!(e.message, "request timestamp expired");

        let e = parse_error(400, br#"{"message":"Insufficient funds"}"#).expect("parsed");
        assert_eq!(e.message, "Insufficient funds");
    }

    #[test]
    fn other_shapes_are_left_to_the_fallback() {
        assert!(parse_error(502, b"<html>Bad Gateway</html>").is_none());
        assert!(parse_error(400, br#"{"error":"x"}"#).is_none());
        assert!(parse_error(400, br#"{"message":""}"#).is_none());
        assert!(parse_error(400, br#"["a"]"#).is_none());
    }
}
