//! EasyPost: `{"error": {"code", "message", "errors": [...]}}` (api/easypost.md §6). The
//! `errors` entries are field errors `{field, message, code?, suggestion?}` or plain strings;
//! they are appended to the message because they say what to fix.

use crate::client::error::{json_str, ApiError};

pub(super) fn parse_error(status: u16, body: &[u8]) -> Option<ApiError> {
    let value: serde_json::Value = serde_json::from_slice(body).ok()?;
    let error = value.get("error")?;
    let code = json_str(error, "code").map(str::trim).filter(|c| !c.is_empty());
    let message = json_str(error, "message").map(str::trim).filter(|m| !m.is_empty());
    let details: Vec<String> = error
        .get("errors")
        .and_then(serde_json::Value::as_array)
        .map(|errors| errors.iter().filter_map(detail).collect())
        .unwrap_or_default();
    let head = message.or(code)?;
    let message = if details.is_empty() { head.to_owned() } else { format!("{head} ({})", details.join("; ")) };
    Some(ApiError { status, code: code.map(str::to_owned), message, ..ApiError::default() })
}

/// One entry of `errors`: `field: message`, the message alone, or a plain string.
fn detail(entry: &serde_json::Value) -> Option<String> {
    if let Some(text) = entry.as_str() {
        let text = text.trim();
        return (!text.is_empty()).then(|| text.to_owned());
    }
    let message = json_str(entry, "message").map(str::trim).filter(|m| !m.is_empty())?;
    Some(match json_str(entry, "field").filter(|f| !f.is_empty()) {
        Some(field) => format!("{field}: {message}"),
        None => message.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_code_message_and_field_errors() {
        let body = br#"{"error":{"code":"ADDRESS.VERIFY.FAILURE","message":"Unable to verify address.","errors":[{"code":"E.ADDRESS.NOT_FOUND","field":"address","message":"Address not found","suggestion":null},{"code":"E.HOUSE_NUMBER.MISSING","field":"street1","message":"House number is missing","suggestion":null}]}}"#;
        let e = parse_error(422, body).expect("parsed");
        assert_eq!(e.status, 422);
        assert_eq!(e.code.as_deref(), Some("ADDRESS.VERIFY.FAILURE"));
        assert_eq!(
            e.message,
            "Unable to verify address. (address: Address not found; street1: House number is missing)"
        );
    }

    #[test]
    fn reads_string_errors_and_empty_lists() {
        let body = br#"{"error":{"code":"NOT_FOUND","errors":["No eligible insurance found with provided tracking code."],"message":"The requested resource could not be found."}}"#;
        let e = parse_error(404, body).expect("parsed");
        assert_eq!(e.code.as_deref(), Some("NOT_FOUND"));
        assert_eq!(
            e.message,
            "The requested resource could not be found. (No eligible insurance found with provided tracking code.)"
        );

        let body = br#"{"error":{"code":"APIKEY.INACTIVE","message":"This api key is no longer active. Please use a different api key or reactivate this key.","errors":[]}}"#;
        let e = parse_error(401, body).expect("parsed");
        assert_eq!(e.code.as_deref(), Some("APIKEY.INACTIVE"));
        assert!(e.message.starts_with("This api key is no longer active."));
        assert!(!e.message.contains('('));
    }

    #[test]
    fn a_code_alone_is_the_message() {
        let e = parse_error(403, br#"{"error":{"code":"FORBIDDEN"}}"#).expect("parsed");
        assert_eq!(e.code.as_deref(), Some("FORBIDDEN"));
        assert_eq!(e.message, "FORBIDDEN");
    }

    #[test]
    fn other_shapes_are_left_to_the_fallback() {
        assert!(parse_error(502, b"<html>").is_none());
        assert!(parse_error(400, br#"{"message":"x"}"#).is_none());
        assert!(parse_error(400, br#"{"error":{}}"#).is_none());
        assert!(parse_error(400, br#"{"error":"text"}"#).is_none());
    }
}
