//! Deepgram: three error body shapes, all accepted (api/deepgram.md §5.1):
//! legacy `{"err_code", "err_msg", "request_id"}`, modern
//! `{"category", "message", "details", "request_id"}`, and plain text.

use crate::client::error::{json_str, ApiError};

pub(super) fn parse_error(status: u16, body: &[u8]) -> Option<ApiError> {
    match serde_json::from_slice::<serde_json::Value>(body) {
        Ok(value) => parse_json(status, &value),
        Err(_) => parse_text(status, body),
    }
}

fn parse_json(status: u16, value: &serde_json::Value) -> Option<ApiError> {
    if let Some(message) = json_str(value, "err_msg") {
        return Some(ApiError {
            status,
            code: json_str(value, "err_code").map(str::to_owned),
            message: message.to_owned(),
            ..ApiError::default()
        });
    }
    let category = json_str(value, "category");
    let message = json_str(value, "message");
    if category.is_none() && message.is_none() {
        return None;
    }
    let details = json_str(value, "details").map(str::trim).unwrap_or("");
    let message = match message.map(str::trim) {
        Some(m) if !m.is_empty() && !details.is_empty() && !m.contains(details) => join(m, details),
        Some(m) if !m.is_empty() => m.to_owned(),
        _ if !details.is_empty() => details.to_owned(),
        _ => category.unwrap_or_default().to_owned(),
    };
    Some(ApiError { status, code: category.map(str::to_owned), message, ..ApiError::default() })
}

/// Some routes answer `text/plain` ("UUID parsing failed: ..."); take a short line of text as
/// the message, but not an HTML page or anything long.
fn parse_text(status: u16, body: &[u8]) -> Option<ApiError> {
    let text = std::str::from_utf8(body).ok()?.trim();
    if text.is_empty() || text.len() > 300 || text.starts_with('<') {
        return None;
    }
    Some(ApiError { status, code: None, message: text.to_owned(), ..ApiError::default() })
}

/// "Authentication failed." + "Check ..." reads as two sentences; otherwise a colon joins them.
fn join(message: &str, detail: &str) -> String {
    if message.ends_with(['.', '!', '?']) {
        format!("{message} {detail}")
    } else {
        format!("{message}: {detail}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_legacy_shape() {
        let body = br#"{"err_code":"INVALID_AUTH","err_msg":"Invalid credentials.","request_id":"6b295a11-89de-4151-8557-15cad81e8a80"}"#;
        let e = parse_error(401, body).expect("parsed");
        assert_eq!(e.status, 401);
        assert_eq!(e.code.as_deref(), Some("INVALID_AUTH"));
        assert_eq!(e.message, "Invalid credentials.");
    }

    #[test]
    fn reads_the_modern_shape_with_its_details() {
        let body = br#"{"category":"UNAUTHORIZED","message":"Authentication failed.","details":"Check that you are using the correct credentials.","request_id":"0c9b2f0e-4a7e-4f1e-9d55-2f4c1c3a8e10"}"#;
        let e = parse_error(401, body).expect("parsed");
        assert_eq!(e.code.as_deref(), Some("UNAUTHORIZED"));
        assert_eq!(e.message, "Authentication failed. Check that you are using the correct credentials.");

        let body = br#"{"category":"NOT_FOUND","message":"A project with the submitted ID cannot be found","details":"Check the project ID","request_id":"x"}"#;
        let e = parse_error(404, body).expect("parsed");
        assert_eq!(e.message, "A project with the submitted ID cannot be found: Check the project ID");
    }

    #[test]
    fn reads_plain_text() {
        let body = b"UUID parsing failed: invalid character: expected an optional prefix of `urn:uuid:` followed by [0-9a-fA-F-], found `x` at 1\n";
        let e = parse_error(404, body).expect("parsed");
        assert_eq!(e.code, None);
        assert!(e.message.starts_with("UUID parsing failed: invalid character"));
        assert!(!e.message.ends_with('\n'));
    }

    #[test]
    fn rejects_other_shapes() {
        assert!(parse_error(502, b"<html><body>Bad Gateway</body></html>").is_none());
        assert!(parse_error(500, br#"{"error":"boom"}"#).is_none());
        assert!(parse_error(500, b"").is_none());
    }
}
