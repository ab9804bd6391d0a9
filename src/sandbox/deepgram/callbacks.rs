//! Deepgram's asynchronous mode: `callback=URL` on listen, speak or read answers at once with
//! `{"request_id"}`, and the result (the JSON a synchronous call would have answered, or the
//! speech audio) goes to the URL later, by `POST` or by `callback_method=put` (api/deepgram.md
//! §3.1, §6.1). The sandbox sends it only to loopback receivers; any other URL is accepted, as
//! Deepgram accepts it, and the control port's `GET /deepgram/callbacks` says it was not sent and
//! why.

use axum::http::Method;

use super::errors::DgError;
use crate::sandbox::outbox::{Delivery, RetryPolicy};
use crate::sandbox::request::Query;

/// Deepgram's callback guide: a callback answered with anything but 2xx is tried again, up to
/// 10 times, 30 seconds apart (not in api/deepgram.md; taken from the guide).
pub const RETRY: RetryPolicy = RetryPolicy { schedule_ms: &[30_000; 10], refused: None };

/// Where and how a result goes.
pub struct Callback {
    pub url: String,
    pub method: Method,
}

impl Callback {
    /// The delivery of a result of `content_type` made at `now_ms`, for the endpoint `event`.
    pub fn delivery(self, body: Vec<u8>, content_type: String, event: &str, now_ms: i64) -> Delivery {
        Delivery {
            id: 0,
            url: self.url,
            method: self.method,
            content_type,
            headers: Vec::new(),
            body,
            attempt: 1,
            due_ms: now_ms,
            event: event.to_owned(),
        }
    }
}

/// The callback a request asks for, if any: an http(s) URL and `POST` (the default) or `PUT`.
pub fn asked(query: &Query) -> Result<Option<Callback>, DgError> {
    let Some(url) = query.get("callback").map(str::trim).filter(|u| !u.is_empty()) else {
        if query.get("callback_method").is_some_and(|m| !m.trim().is_empty()) {
            return Err(DgError::invalid_query("callback_method was given without a callback URL"));
        }
        return Ok(None);
    };
    let parsed = reqwest::Url::parse(url)
        .ok()
        .filter(|u| matches!(u.scheme(), "http" | "https") && u.host_str().is_some())
        .ok_or_else(|| DgError::invalid_query(format!("Invalid callback URL: {url:?}")))?;
    let method = match query.get("callback_method").map(str::trim) {
        None | Some("") => Method::POST,
        Some(m) if m.eq_ignore_ascii_case("post") => Method::POST,
        Some(m) if m.eq_ignore_ascii_case("put") => Method::PUT,
        Some(other) => {
            return Err(DgError::invalid_query(format!(
                "Failed to deserialize query parameters: callback_method must be POST or PUT, got {other:?}"
            )))
        }
    };
    Ok(Some(Callback { url: parsed.to_string(), method }))
}
