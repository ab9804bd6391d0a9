//! The per-vendor error renderer. A simulator describes its vendor's error shape once, by
//! implementing [`VendorError`] for its error type; handlers return `Result<_, ThatError>`, and
//! the platform renders faults and refusals in the same shape, so a client's error parsing is
//! exercised by every failure the sandbox produces.

use axum::http::header::{self, HeaderMap, HeaderValue};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

/// A vendor's error: its status and body, and the error the vendor answers a bare status with.
///
/// Implement `IntoResponse` for the type with one line, `fn into_response(self) -> Response {
/// errors::render(&self) }` (the orphan rule keeps the platform from doing it for every type).
pub trait VendorError: Sized {
    /// The HTTP status.
    fn status(&self) -> StatusCode;

    /// The body as the vendor sends it.
    fn body(&self) -> serde_json::Value;

    /// Headers some vendors repeat the error in (Ably's `X-Ably-ErrorCode`); none by default.
    fn add_headers(&self, _headers: &mut HeaderMap) {}

    /// What the vendor answers with a bare `status` and nothing more specific known: used for
    /// injected faults, so a client sees a 503 exactly as the real service would send it.
    fn for_status(status: StatusCode, message: &str) -> Self;
}

/// The response for a vendor error: its status, JSON body and extra headers.
pub fn render<E: VendorError>(error: &E) -> Response {
    let mut response = (error.status(), axum::Json(error.body())).into_response();
    error.add_headers(response.headers_mut());
    response
}

/// The standard reason phrase, for messages of errors that only have a status.
pub fn reason(status: StatusCode) -> &'static str {
    status.canonical_reason().unwrap_or("Error")
}

/// The vendor's error for `status`, rendered: what [`crate::sandbox::Simulator::error_response`]
/// returns for most simulators.
pub fn render_status<E: VendorError>(status: StatusCode, message: &str) -> Response {
    render(&E::for_status(status, message))
}

/// The most bytes a header value built from a request may have: clients refuse long header
/// lines (Python's `LineTooLong` at 64 KB, Node's 16 KB for all headers together), so an echo of
/// a 100 KB input in a header would break the client rather than tell it what was wrong.
pub const HEADER_TEXT_LIMIT: usize = 1024;

/// `text` as a header value: printable ASCII (anything else a `?`), cut to
/// [`HEADER_TEXT_LIMIT`] bytes ending in `...` when longer. The body keeps the whole message.
pub fn header_text(text: &str) -> HeaderValue {
    let mut printable: String = text.chars().map(|c| if (' '..='~').contains(&c) { c } else { '?' }).collect();
    if printable.len() > HEADER_TEXT_LIMIT {
        printable.truncate(HEADER_TEXT_LIMIT - 3);
        printable.push_str("...");
    }
    HeaderValue::from_str(printable.trim()).unwrap_or_else(|_| HeaderValue::from_static("?"))
}

/// Adds `Retry-After: secs` (for 429 and 503 answers).
pub fn with_retry_after(mut response: Response, secs: u64) -> Response {
    response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(secs));
    response
}

/// The sandbox's own error shape, for listeners without a simulator and for the control port:
/// `{"error": code, "message": text}`.
pub fn sandbox_error(status: StatusCode, code: &str, message: impl Into<String>) -> Response {
    (status, axum::Json(serde_json::json!({"error": code, "message": message.into()}))).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A made-up vendor shape, to show the renderer does not care which.
    struct ShopError {
        status: StatusCode,
        message: String,
    }

    impl VendorError for ShopError {
        fn status(&self) -> StatusCode {
            self.status
        }
        fn body(&self) -> serde_json::Value {
            serde_json::json!({"errors": [{"detail": self.message}]})
        }
        fn add_headers(&self, headers: &mut HeaderMap) {
            headers.insert("x-shop-error", HeaderValue::from_static("1"));
        }
        fn for_status(status: StatusCode, message: &str) -> ShopError {
            ShopError { status, message: message.to_owned() }
        }
    }

    #[tokio::test]
    async fn renders_the_vendor_shape_and_headers() {
        let response = with_retry_after(render_status::<ShopError>(StatusCode::TOO_MANY_REQUESTS, "slow down"), 7);
        assert_eq!(response.status(), StatusCode::TOO_MANY_REQUESTS);
        assert_eq!(response.headers()["x-shop-error"], "1");
        assert_eq!(response.headers()[header::RETRY_AFTER], "7");
        let body = axum::body::to_bytes(response.into_body(), 1000).await.expect("body");
        assert_eq!(body.as_ref(), br#"{"errors":[{"detail":"slow down"}]}"#);
        assert_eq!(reason(StatusCode::SERVICE_UNAVAILABLE), "Service Unavailable");
    }
}
