//! Mailgun: `{"message": "..."}` on most endpoints, `{"Reason": "..."}` on a few 400s,
//! `{"retry-seconds": N}` from the rate-limited management APIs, and the bare text `Forbidden`
//! (or `Domain not found: ...`) from the sending endpoints (api/mailgun.md §2, §4.1, §6).

use crate::client::error::{json_str, ApiError};

/// Longest plain-text body taken as a message; anything longer is a page, not an error text.
const MAX_TEXT: usize = 300;

pub(super) fn parse_error(status: u16, body: &[u8]) -> Option<ApiError> {
    let message = match serde_json::from_slice::<serde_json::Value>(body) {
        Ok(value) => json_message(&value)?,
        Err(_) => plain_text(body)?,
    };
    Some(ApiError { status, code: None, message, ..ApiError::default() })
}

fn json_message(value: &serde_json::Value) -> Option<String> {
    if let Some(text) = json_str(value, "message").or_else(|| json_str(value, "Reason")) {
        let text = text.trim();
        return (!text.is_empty()).then(|| text.to_owned());
    }
    let seconds = value.get("retry-seconds")?.as_f64()?;
    Some(format!("rate limited; retry in {seconds} s"))
}

/// A short one-line text body such as `Forbidden`; HTML and other documents are not errors.
fn plain_text(body: &[u8]) -> Option<String> {
    let text = std::str::from_utf8(body).ok()?.trim();
    if text.is_empty() || text.len() > MAX_TEXT || text.contains('\n') || text.starts_with('<') {
        return None;
    }
    Some(text.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_json_messages() {
        let e = parse_error(404, br#"{"message":"Domain not found"}"#).expect("parsed");
        assert_eq!(e.status, 404);
        assert_eq!(e.code, None);
        assert_eq!(e.message, "Domain not found");

        let body = br#"{"message":"Address already exists 'alice@example.com'"}"#;
        let e = parse_error(400, body).expect("parsed");
        assert_eq!(e.message, "Address already exists 'alice@example.com'");
    }

    #[test]
    fn reads_reason_and_retry_seconds() {
        let body = br#"{"Reason":"example is not a valid url"}"#;
        let e = parse_error(400, body).expect("parsed");
        assert_eq!(e.message, "example is not a valid url");

        let e = parse_error(429, br#"{"retry-seconds": 60}"#).expect("parsed");
        assert_eq!(e.message, "rate limited; retry in 60 s");
    }

    #[test]
    fn reads_plain_text_bodies() {
        let e = parse_error(401, b"Forbidden").expect("parsed");
        assert_eq!(e.message, "Forbidden");
        let e = parse_error(404, b"Domain not found: example.com\n").expect("parsed");
        assert_eq!(e.message, "Domain not found: example.com");
    }

    #[test]
    fn other_shapes_are_left_to_the_fallback() {
        assert!(parse_error(502, b"<html><body>Bad Gateway</body></html>").is_none());
        assert!(parse_error(500, b"").is_none());
        assert!(parse_error(500, b"line one\nline two").is_none());
        assert!(parse_error(400, br#"{"items":[]}"#).is_none());
    }
}
