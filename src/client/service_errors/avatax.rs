//! AvaTax: `{"error": {"code", "message", "target", "details": [{"code", "number", "message",
//! "description", "refersTo", ...}]}}` (api/avatax.md §5).

use crate::client::error::{json_str, ApiError};

/// At most this many details are folded into the message, to keep it one readable line.
const MAX_DETAILS: usize = 3;

pub(super) fn parse_error(status: u16, body: &[u8]) -> Option<ApiError> {
    let value: serde_json::Value = serde_json::from_slice(body).ok()?;
    let error = value.get("error").filter(|e| e.is_object())?;
    let details = error.get("details").and_then(serde_json::Value::as_array).map(Vec::as_slice).unwrap_or_default();

    // The summary first, then what each detail adds: its description (the explanation) or, when
    // the summary is missing or generic, its own message.
    let mut parts: Vec<String> = Vec::new();
    let mut push = |text: &str| {
        let text = text.trim();
        if !text.is_empty() && !parts.iter().any(|p| p.contains(text)) {
            parts.push(text.to_owned());
        }
    };
    if let Some(message) = json_str(error, "message") {
        push(message);
    }
    for detail in details.iter().take(MAX_DETAILS) {
        if let Some(message) = json_str(detail, "message") {
            push(message);
        }
        if let Some(description) = json_str(detail, "description") {
            push(description);
        }
    }
    if parts.is_empty() {
        return None;
    }

    let code = json_str(error, "code").or_else(|| details.first().and_then(|d| json_str(d, "code"))).map(str::to_owned);
    Some(ApiError { status, code, message: join(&parts), ..ApiError::default() })
}

fn join(parts: &[String]) -> String {
    let mut out = String::new();
    for part in parts {
        if !out.is_empty() {
            out.push_str(if out.ends_with(['.', '!', '?']) { " " } else { "; " });
        }
        out.push_str(part);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_code_message_and_description() {
        let body = br#"{"error":{"code":"AuthenticationException","message":"Authentication failed.","target":"HttpRequestHeaders","details":[{"code":"AuthenticationException","number":30,"message":"Authentication failed.","description":"Unable to authenticate the user or the account.","faultCode":"Client","helpLink":"http://developer.avalara.com/avatax/errors/AuthenticationException","severity":"Exception"}]}}"#;
        let e = parse_error(401, body).expect("parsed");
        assert_eq!(e.status, 401);
        assert_eq!(e.code.as_deref(), Some("AuthenticationException"));
        assert_eq!(e.message, "Authentication failed. Unable to authenticate the user or the account.");
    }

    #[test]
    fn folds_several_details_without_repeating() {
        let body = br#"{"error":{"code":"EntityNotFoundError","message":"Document not found.","target":"HttpRequest","details":[{"code":"EntityNotFoundError","number":4,"message":"Document not found.","description":"The Document with code 'INV-1001' was not found.","faultCode":"Client","severity":"Error"}]}}"#;
        let e = parse_error(404, body).expect("parsed");
        assert_eq!(e.message, "Document not found. The Document with code 'INV-1001' was not found.");

        let body = br#"{"error":{"code":"ValueRequiredError","message":"Field date is required.","target":"IncorrectData","details":[{"code":"ValueRequiredError","number":5,"message":"Field date is required.","faultCode":"Client","refersTo":"date","severity":"Error"},{"code":"ValueRequiredError","number":5,"message":"Field customerCode is required.","faultCode":"Client","refersTo":"customerCode","severity":"Error"}]}}"#;
        let e = parse_error(400, body).expect("parsed");
        assert_eq!(e.message, "Field date is required. Field customerCode is required.");
    }

    #[test]
    fn falls_back_to_the_first_detail() {
        let body = br#"{"error":{"details":[{"code":"MissingLine","number":311,"message":"Transactions must have at least one line.","severity":"Error"}]}}"#;
        let e = parse_error(400, body).expect("parsed");
        assert_eq!(e.code.as_deref(), Some("MissingLine"));
        assert_eq!(e.message, "Transactions must have at least one line.");
    }

    #[test]
    fn rejects_other_shapes() {
        assert!(parse_error(500, b"<html>").is_none());
        assert!(parse_error(406, br#"{"error":"Not Acceptable","detail":"x","status":406}"#).is_none());
        assert!(parse_error(500, br#"{"error":{}}"#).is_none());
    }
}
