//! TaxJar: `{"error": "<reason phrase>", "detail": "<explanation>", "status": <http status>}`
//! (api/taxjar.md §5). `error` is the closest thing to a code; `detail` says what went wrong.

use crate::client::error::{json_str, ApiError};

pub(super) fn parse_error(status: u16, body: &[u8]) -> Option<ApiError> {
    let value: serde_json::Value = serde_json::from_slice(body).ok()?;
    let error = json_str(&value, "error")?.trim();
    let detail = json_str(&value, "detail").map(str::trim).unwrap_or("");
    // The Node SDK's mocks also carry `message` ("Unauthorized - ..."): a fallback only.
    let message = if !detail.is_empty() {
        detail
    } else {
        json_str(&value, "message").map(str::trim).filter(|m| !m.is_empty()).unwrap_or(error)
    };
    if message.is_empty() {
        return None;
    }
    Some(ApiError {
        status,
        code: (!error.is_empty()).then(|| error.to_owned()),
        message: message.to_owned(),
        ..ApiError::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_error_and_detail() {
        let body = br#"{"error":"Not Acceptable","detail":"transaction_id is missing","status":406}"#;
        let e = parse_error(406, body).expect("parsed");
        assert_eq!(e.status, 406);
        assert_eq!(e.code.as_deref(), Some("Not Acceptable"));
        assert_eq!(e.message, "transaction_id is missing");

        let body =
            br#"{"error":"Unauthorized","detail":"Not authorized for route 'GET /v2/categories'","status":"401"}"#;
        let e = parse_error(401, body).expect("parsed");
        assert_eq!(e.code.as_deref(), Some("Unauthorized"));
        assert_eq!(e.message, "Not authorized for route 'GET /v2/categories'");
    }

    #[test]
    fn without_detail_uses_the_reason() {
        let e = parse_error(429, br#"{"error":"Too Many Requests","status":429}"#).expect("parsed");
        assert_eq!(e.message, "Too Many Requests");
    }

    #[test]
    fn rejects_other_shapes() {
        assert!(parse_error(502, b"<html>Bad Gateway</html>").is_none());
        assert!(parse_error(401, br#"{"error":{"code":"x","message":"y"}}"#).is_none());
        assert!(parse_error(500, br#"{"message":"boom"}"#).is_none());
    }
}
