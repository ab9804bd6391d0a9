//! Deepgram's three error shapes (api/deepgram.md §5.1): the legacy
//! `{"err_code","err_msg","request_id"}` most routes answer, the newer
//! `{"category","message","details","request_id"}` of the management routes, and plain text
//! (`UUID parsing failed: …`). Every answer carries a `dg-request-id` header.

use axum::http::header::{HeaderMap, HeaderValue, CONTENT_TYPE};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::json;

use crate::sandbox::errors::{self, VendorError};

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Shape {
    Legacy { err_code: String, err_msg: String },
    Modern { category: String, message: String, details: String },
    Plain(String),
}

/// A refused Deepgram request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DgError {
    pub status: StatusCode,
    pub shape: Shape,
    pub request_id: String,
}

impl DgError {
    pub fn legacy(status: StatusCode, err_code: &str, err_msg: impl Into<String>) -> DgError {
        DgError {
            status,
            shape: Shape::Legacy { err_code: err_code.to_owned(), err_msg: err_msg.into() },
            request_id: String::new(),
        }
    }

    pub fn modern(
        status: StatusCode,
        category: &str,
        message: impl Into<String>,
        details: impl Into<String>,
    ) -> DgError {
        DgError {
            status,
            shape: Shape::Modern { category: category.to_owned(), message: message.into(), details: details.into() },
            request_id: String::new(),
        }
    }

    pub fn plain(status: StatusCode, text: impl Into<String>) -> DgError {
        DgError { status, shape: Shape::Plain(text.into()), request_id: String::new() }
    }

    pub fn invalid_auth() -> DgError {
        DgError::legacy(StatusCode::UNAUTHORIZED, "INVALID_AUTH", "Invalid credentials.")
    }

    pub fn insufficient_permissions() -> DgError {
        DgError::legacy(
            StatusCode::UNAUTHORIZED,
            "INSUFFICIENT_PERMISSIONS",
            "User does not have sufficient permissions.",
        )
    }

    pub fn bad_request(message: impl Into<String>) -> DgError {
        DgError::legacy(StatusCode::BAD_REQUEST, "Bad Request", message)
    }

    pub fn invalid_query(message: impl Into<String>) -> DgError {
        DgError::legacy(StatusCode::BAD_REQUEST, "INVALID_QUERY_PARAMETER", message)
    }

    pub fn project_not_found() -> DgError {
        DgError::modern(
            StatusCode::NOT_FOUND,
            "NOT_FOUND",
            "A project with the submitted ID cannot be found.",
            "Check that you have submitted the intended project ID and that your key can access it.",
        )
    }

    pub fn not_found(what: &str) -> DgError {
        DgError::modern(
            StatusCode::NOT_FOUND,
            "NOT_FOUND",
            format!("A {what} with the submitted ID cannot be found."),
            format!("Check that you have submitted the intended {what} ID."),
        )
    }

    pub fn with_request_id(mut self, id: &str) -> DgError {
        id.clone_into(&mut self.request_id);
        self
    }
}

impl VendorError for DgError {
    fn status(&self) -> StatusCode {
        self.status
    }

    fn body(&self) -> serde_json::Value {
        match &self.shape {
            Shape::Legacy { err_code, err_msg } => {
                json!({"err_code": err_code, "err_msg": err_msg, "request_id": self.request_id})
            }
            Shape::Modern { category, message, details } => {
                json!({"category": category, "message": message, "details": details, "request_id": self.request_id})
            }
            Shape::Plain(text) => json!(text),
        }
    }

    fn add_headers(&self, headers: &mut HeaderMap) {
        if let Ok(value) = HeaderValue::from_str(&self.request_id) {
            headers.insert("dg-request-id", value);
        }
    }

    fn for_status(status: StatusCode, message: &str) -> DgError {
        DgError::legacy(status, errors::reason(status), message)
    }
}

impl IntoResponse for DgError {
    fn into_response(self) -> Response {
        if let Shape::Plain(text) = &self.shape {
            let mut response = (self.status, text.clone()).into_response();
            response.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static("text/plain; charset=utf-8"));
            self.add_headers(response.headers_mut());
            return response;
        }
        errors::render(&self)
    }
}
