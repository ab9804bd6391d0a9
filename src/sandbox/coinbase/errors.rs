//! Coinbase Exchange's error shape: `{"message": "<text>"}` with the status
//! (api/coinbase-exchange.md §6). The texts the SDKs match on (`Insufficient funds`, `NotFound`,
//! `Invalid API Key`, `invalid signature`, `Invalid Passphrase`, `Order already done`) are
//! spelled exactly as the exchange sends them.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::json;

use crate::sandbox::errors::{self, VendorError};

/// A refused Coinbase request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CbError {
    pub status: StatusCode,
    pub message: String,
}

impl CbError {
    pub fn new(status: StatusCode, message: impl Into<String>) -> CbError {
        CbError { status, message: message.into() }
    }

    /// 400: a value is malformed, missing or breaks a rule.
    pub fn bad_request(message: impl Into<String>) -> CbError {
        CbError::new(StatusCode::BAD_REQUEST, message)
    }

    pub fn unauthorized(message: &str) -> CbError {
        CbError::new(StatusCode::UNAUTHORIZED, message)
    }

    /// 403: the key lacks the permission the route needs, or the profile is not the key's.
    pub fn forbidden() -> CbError {
        CbError::new(StatusCode::FORBIDDEN, "Forbidden")
    }

    /// 404 `NotFound`: an unknown id (the text ccxt matches exactly).
    pub fn not_found() -> CbError {
        CbError::new(StatusCode::NOT_FOUND, "NotFound")
    }

    pub fn insufficient_funds() -> CbError {
        CbError::bad_request("Insufficient funds")
    }
}

impl VendorError for CbError {
    fn status(&self) -> StatusCode {
        self.status
    }

    fn body(&self) -> serde_json::Value {
        json!({"message": self.message})
    }

    fn for_status(status: StatusCode, message: &str) -> CbError {
        CbError::new(status, message)
    }
}

impl IntoResponse for CbError {
    fn into_response(self) -> Response {
        errors::render(&self)
    }
}
