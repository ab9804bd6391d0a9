//! Ably: `{"error": {"message", "code", "statusCode", "href"}}` (api/ably.md §5.1).

use crate::client::error::{json_str, ApiError};

pub(super) fn parse_error(status: u16, body: &[u8]) -> Option<ApiError> {
    let value: serde_json::Value = serde_json::from_slice(body).ok()?;
    let error = value.get("error")?;
    Some(ApiError {
        status,
        code: error.get("code").map(|c| c.to_string().trim_matches('"').to_owned()),
        message: json_str(error, "message")?.to_owned(),
        ..ApiError::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_code_and_message() {
        let body = br#"{"error":{"message":"Invalid credentials","code":40101,"statusCode":401,"href":"https://help.ably.io/error/40101"}}"#;
        let e = parse_error(401, body).expect("parsed");
        assert_eq!(e.code.as_deref(), Some("40101"));
        assert_eq!(e.message, "Invalid credentials");
        assert!(parse_error(500, b"<html>").is_none());
    }
}
