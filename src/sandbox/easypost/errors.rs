//! EasyPost's error shape: always JSON, always under `error`, with `code`, `message` and `errors`
//! (field errors `{field, message, suggestion?, code?}` or plain strings). The SDKs read all three
//! and break on anything that is not this envelope.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{json, Value};

use crate::sandbox::errors::{self, VendorError};

#[derive(Clone, Debug, PartialEq)]
pub struct EpError {
    pub status: u16,
    pub code: String,
    pub message: String,
    pub errors: Vec<Value>,
}

impl EpError {
    pub fn new(status: u16, code: &str, message: impl Into<String>) -> EpError {
        EpError { status, code: code.to_owned(), message: message.into(), errors: Vec::new() }
    }

    /// Adds a field error.
    pub fn field(mut self, field: &str, message: impl Into<String>) -> EpError {
        self.errors.push(json!({"field": field, "message": message.into()}));
        self
    }

    /// Adds a plain-string error, as EasyPost gives some 404s (an ineligible insurance refund).
    pub fn note(mut self, text: impl Into<String>) -> EpError {
        self.errors.push(Value::String(text.into()));
        self
    }

    /// 404 `NOT_FOUND` for a record that does not exist. EasyPost's body names nothing
    /// (`"errors": []`, as recorded), so `_what` only documents the call site.
    pub fn not_found(_what: impl Into<String>) -> EpError {
        EpError::new(404, "NOT_FOUND", "The requested resource could not be found.")
    }

    /// 404 for a path the simulator does not serve, in EasyPost's shape, saying so as a field
    /// error (`{field, message}`, the object form EasyPost's `errors` holds).
    pub fn not_simulated(method: &str, path: &str) -> EpError {
        EpError::new(404, "NOT_FOUND", "The requested resource could not be found.")
            .field("path", format!("{method} {path} is not simulated by the opsdeck sandbox"))
    }

    /// 422 `PARAMETER.REQUIRED` for a missing field.
    pub fn required(field: &str) -> EpError {
        EpError::new(422, "PARAMETER.REQUIRED", "Missing required parameter.").field(field, "cannot be blank")
    }

    /// 422 `PARAMETER.INVALID` for a field with a bad value.
    pub fn invalid(field: &str, message: impl Into<String>) -> EpError {
        EpError::new(422, "PARAMETER.INVALID", "Invalid parameter.").field(field, message)
    }

    /// 422 with a code of its own (`SHIPMENT.POSTAGE.EXISTS`).
    pub fn unprocessable(code: &str, message: impl Into<String>) -> EpError {
        EpError::new(422, code, message)
    }

    /// 405, for the file host only (API paths it does not serve answer [`EpError::not_simulated`]).
    pub fn method_not_allowed() -> EpError {
        EpError::new(405, "METHOD.NOT_ALLOWED", "The requested method is not allowed for this resource.")
    }
}

impl VendorError for EpError {
    fn status(&self) -> StatusCode {
        StatusCode::from_u16(self.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
    }

    fn body(&self) -> Value {
        json!({"error": {"code": self.code, "message": self.message, "errors": self.errors}})
    }

    fn for_status(status: StatusCode, message: &str) -> EpError {
        let code = match status.as_u16() {
            400 => "BAD_REQUEST",
            401 => "UNAUTHORIZED",
            402 => "PAYMENT_REQUIRED",
            403 => "FORBIDDEN",
            404 => "NOT_FOUND",
            408 | 504 => "TIMEOUT",
            413 => "REQUEST.TOO_LARGE",
            429 => "RATE_LIMITED",
            503 => "SERVICE.UNAVAILABLE",
            _ => "INTERNAL_SERVER_ERROR",
        };
        let message = if message.is_empty() { errors::reason(status) } else { message };
        EpError::new(status.as_u16(), code, message)
    }
}

impl IntoResponse for EpError {
    fn into_response(self) -> Response {
        errors::render(&self)
    }
}
