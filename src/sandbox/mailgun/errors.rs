//! Mailgun's error shapes: `{"message": ...}` nearly everywhere, `{"Reason": ...}` for a few
//! webhook 400s (both carried by [`Refusal`]), and the bare text `Forbidden` that the sending
//! endpoints answer a bad key with.

use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::json;

use super::refusal::Refusal;
use crate::sandbox::errors::{self, VendorError};

/// Every refusal the Mailgun simulator answers with.
#[derive(Clone, Debug, PartialEq)]
pub enum MailgunError {
    /// A JSON error: status and body.
    Refused(Refusal),
    /// 401 on `/messages` and `/messages.mime`: the text `Forbidden`, not JSON.
    Forbidden,
}

impl MailgunError {
    pub fn new(status: u16, message: impl Into<String>) -> MailgunError {
        MailgunError::Refused(Refusal::new(status, message))
    }

    pub fn bad_request(message: impl Into<String>) -> MailgunError {
        MailgunError::Refused(Refusal::bad_request(message))
    }

    pub fn not_found(message: impl Into<String>) -> MailgunError {
        MailgunError::Refused(Refusal::not_found(message))
    }

    /// The capitalised `{"Reason": ...}` the webhook endpoints use for bad URLs.
    pub fn reason(message: impl Into<String>) -> MailgunError {
        MailgunError::Refused(Refusal { status: 400, body: json!({"Reason": message.into()}) })
    }

    /// 401 of every non-sending endpoint.
    pub fn invalid_key() -> MailgunError {
        MailgunError::new(401, "Invalid private key")
    }
}

impl From<Refusal> for MailgunError {
    fn from(refusal: Refusal) -> MailgunError {
        MailgunError::Refused(refusal)
    }
}

impl VendorError for MailgunError {
    fn status(&self) -> StatusCode {
        match self {
            MailgunError::Refused(r) => StatusCode::from_u16(r.status).unwrap_or(StatusCode::BAD_REQUEST),
            MailgunError::Forbidden => StatusCode::UNAUTHORIZED,
        }
    }

    fn body(&self) -> serde_json::Value {
        match self {
            MailgunError::Refused(r) => r.body.clone(),
            MailgunError::Forbidden => json!("Forbidden"),
        }
    }

    fn for_status(status: StatusCode, message: &str) -> MailgunError {
        MailgunError::new(status.as_u16(), message)
    }
}

impl IntoResponse for MailgunError {
    fn into_response(self) -> Response {
        match self {
            MailgunError::Forbidden => {
                (StatusCode::UNAUTHORIZED, [(header::CONTENT_TYPE, "text/plain; charset=utf-8")], "Forbidden")
                    .into_response()
            }
            other => errors::render(&other),
        }
    }
}
