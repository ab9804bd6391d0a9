//! TaxJar's error shape: `{"error": "<reason phrase>", "detail": "<explanation>", "status": N}`
//! (api/taxjar.md §5). The Python SDK indexes all three keys; the Node SDK needs `error` and
//! `detail`.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::json;

use crate::sandbox::errors::{self, VendorError};

/// A refused TaxJar request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaxjarError {
    pub status: StatusCode,
    pub detail: String,
}

impl TaxjarError {
    pub fn new(status: StatusCode, detail: impl Into<String>) -> TaxjarError {
        TaxjarError { status, detail: detail.into() }
    }

    /// 400: a value is malformed or inconsistent.
    pub fn bad_request(detail: impl Into<String>) -> TaxjarError {
        TaxjarError::new(StatusCode::BAD_REQUEST, detail)
    }

    /// 406: TaxJar's answer for a missing field or a body that is not JSON.
    pub fn not_acceptable(detail: impl Into<String>) -> TaxjarError {
        TaxjarError::new(StatusCode::NOT_ACCEPTABLE, detail)
    }

    /// 406 `<field> is missing`, as TaxJar words it.
    pub fn missing(field: &str) -> TaxjarError {
        TaxjarError::not_acceptable(format!("{field} is missing"))
    }

    pub fn not_found(detail: impl Into<String>) -> TaxjarError {
        TaxjarError::new(StatusCode::NOT_FOUND, detail)
    }

    /// 422: a create whose id already exists.
    pub fn unprocessable(detail: impl Into<String>) -> TaxjarError {
        TaxjarError::new(StatusCode::UNPROCESSABLE_ENTITY, detail)
    }

    /// 401 with the route, as TaxJar's mocks show it.
    pub fn unauthorized(method: &str, path: &str) -> TaxjarError {
        TaxjarError::new(StatusCode::UNAUTHORIZED, format!("Not authorized for route '{method} {path}'"))
    }
}

impl VendorError for TaxjarError {
    fn status(&self) -> StatusCode {
        self.status
    }

    fn body(&self) -> serde_json::Value {
        json!({"error": errors::reason(self.status), "detail": self.detail, "status": self.status.as_u16()})
    }

    fn for_status(status: StatusCode, message: &str) -> TaxjarError {
        TaxjarError::new(status, message)
    }
}

impl IntoResponse for TaxjarError {
    fn into_response(self) -> Response {
        errors::render(&self)
    }
}
