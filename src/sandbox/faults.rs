//! Fault injection: for a service and a path pattern, fail with a status (in the vendor's own
//! error shape), add latency, drop the connection, or answer 429 with `Retry-After`, for a
//! count or with a probability. Faults are checked by the platform layer before a simulator
//! sees the request, so a failed request never changes simulator state.

use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use axum::http::Method;
use serde::Deserialize;
use serde_json::{json, Value};

use super::rng::Rng;
use crate::catalog::Service;

/// Faults that can be active at once: enough for any rehearsal, bounded for memory.
pub const MAX_FAULTS: usize = 1000;
/// The longest injected latency: long enough to trip any client timeout, short enough that a
/// forgotten fault does not hold connections for hours.
pub const MAX_LATENCY_MS: u64 = 120_000;

/// A fault as posted to `POST /faults`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FaultSpec {
    pub service: String,
    pub path: String,
    #[serde(default)]
    pub method: Option<String>,
    #[serde(default)]
    pub status: Option<u16>,
    #[serde(default)]
    pub latency_ms: Option<u64>,
    #[serde(default)]
    pub drop: Option<bool>,
    #[serde(default)]
    pub retry_after: Option<u64>,
    #[serde(default)]
    pub count: Option<u64>,
    #[serde(default)]
    pub probability: Option<f64>,
}

/// An active fault.
#[derive(Clone, Debug, PartialEq)]
pub struct Fault {
    pub id: u64,
    pub service: Service,
    /// Glob over the path without query; `*` matches any run of characters, `/` included.
    pub path: String,
    /// `None`: every method.
    pub method: Option<Method>,
    pub status: Option<u16>,
    pub latency_ms: Option<u64>,
    pub drop: bool,
    pub retry_after: Option<u64>,
    /// Requests it still applies to; `None`: until deleted.
    pub remaining: Option<u64>,
    pub probability: Option<f64>,
}

impl Fault {
    /// The JSON the control port answers with.
    pub fn to_json(&self) -> Value {
        json!({
            "id": self.id,
            "service": self.service.name(),
            "path": self.path,
            "method": self.method.as_ref().map(Method::as_str),
            "status": self.status,
            "latency_ms": self.latency_ms,
            "drop": self.drop,
            "retry_after": self.retry_after,
            "remaining": self.remaining,
            "probability": self.probability,
        })
    }

    /// What a matching request gets.
    fn action(&self) -> FaultAction {
        let outcome = if self.drop {
            Outcome::Drop
        } else if let Some(secs) = self.retry_after {
            Outcome::Fail { status: self.status.unwrap_or(429), retry_after: Some(secs) }
        } else if let Some(status) = self.status {
            Outcome::Fail { status, retry_after: None }
        } else {
            Outcome::PassThrough
        };
        FaultAction { fault_id: self.id, latency: self.latency_ms.map(Duration::from_millis), outcome }
    }
}

/// What the layer does with a request a fault matched.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FaultAction {
    pub fault_id: u64,
    /// Wall-clock delay before the outcome (latency is felt by the client, not simulated).
    pub latency: Option<Duration>,
    pub outcome: Outcome,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Only the latency: the simulator then answers as usual.
    PassThrough,
    /// The vendor's error for `status`, with `Retry-After` when set.
    Fail { status: u16, retry_after: Option<u64> },
    /// The connection is closed without an answer.
    Drop,
}

/// Marks a response whose connection the listener must drop instead of answering.
#[derive(Clone, Copy, Debug)]
pub struct DropConnection;

/// The active faults, in the order they were added (the first match applies).
#[derive(Debug)]
pub struct FaultBook {
    inner: Mutex<BookInner>,
}

#[derive(Debug)]
struct BookInner {
    next_id: u64,
    faults: Vec<Fault>,
    /// Rolls the probabilities; seeded, so a rehearsal with a seed repeats.
    rng: Rng,
}

impl FaultBook {
    pub fn new(seed: u64) -> FaultBook {
        FaultBook { inner: Mutex::new(BookInner { next_id: 1, faults: Vec::new(), rng: Rng::new(seed ^ 0xFA17) }) }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BookInner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Validates and adds a fault; the error names the bad field. `served` says whether the
    /// sandbox serves the service (faults only make sense where there is a simulator to fail).
    pub fn add(&self, spec: FaultSpec, served: impl Fn(Service) -> bool) -> Result<Fault, String> {
        let service = Service::parse(&spec.service).ok_or_else(|| {
            let names: Vec<&str> = Service::ALL.iter().map(|s| s.name()).collect();
            format!("unknown service {:?}; expected one of {}", spec.service, names.join(", "))
        })?;
        if !served(service) {
            return Err(format!(
                "{} is not served by this sandbox; faults apply to the services it serves",
                service.name()
            ));
        }
        if !(spec.path == "*" || spec.path.starts_with('/')) || spec.path.contains('?') {
            return Err(format!(
                "path {:?} must start with / (or be *) and hold no query; * matches any characters",
                spec.path
            ));
        }
        let method = match spec.method.as_deref() {
            None => None,
            Some(m) => Some(
                Method::from_bytes(m.to_ascii_uppercase().as_bytes())
                    .map_err(|_| format!("method {m:?} is not an HTTP method"))?,
            ),
        };
        let drop = spec.drop.unwrap_or(false);
        if let Some(status) = spec.status {
            if !(400..=599).contains(&status) {
                return Err(format!("status {status} must be an error status, 400 to 599"));
            }
        }
        if drop && (spec.status.is_some() || spec.retry_after.is_some()) {
            return Err("drop closes the connection without an answer; it cannot also set status or retry_after".into());
        }
        if let Some(latency) = spec.latency_ms {
            if latency > MAX_LATENCY_MS {
                return Err(format!("latency_ms {latency} is above the maximum of {MAX_LATENCY_MS}"));
            }
        }
        if spec.count == Some(0) {
            return Err("count must be at least 1 (leave it out for a fault that lasts until deleted)".into());
        }
        if let Some(p) = spec.probability {
            if !(p > 0.0 && p <= 1.0) {
                return Err(format!("probability {p} must be greater than 0 and at most 1"));
            }
        }
        if !drop && spec.status.is_none() && spec.retry_after.is_none() && spec.latency_ms.unwrap_or(0) == 0 {
            return Err("the fault does nothing: set status, latency_ms, drop or retry_after".into());
        }
        let mut inner = self.lock();
        if inner.faults.len() >= MAX_FAULTS {
            return Err(format!("{MAX_FAULTS} faults are active already; delete some first"));
        }
        let fault = Fault {
            id: inner.next_id,
            service,
            path: spec.path,
            method,
            status: spec.status,
            latency_ms: spec.latency_ms,
            drop,
            retry_after: spec.retry_after,
            remaining: spec.count,
            probability: spec.probability,
        };
        inner.next_id += 1;
        inner.faults.push(fault.clone());
        Ok(fault)
    }

    pub fn list(&self) -> Vec<Fault> {
        self.lock().faults.clone()
    }

    /// Deletes every fault, or every fault of one service; returns how many.
    pub fn delete_all(&self, service: Option<Service>) -> usize {
        let mut inner = self.lock();
        let before = inner.faults.len();
        inner.faults.retain(|f| service.is_some_and(|s| s != f.service));
        before - inner.faults.len()
    }

    /// Deletes one fault; returns 1, or 0 when there is none with that id.
    pub fn delete(&self, id: u64) -> usize {
        let mut inner = self.lock();
        let before = inner.faults.len();
        inner.faults.retain(|f| f.id != id);
        before - inner.faults.len()
    }

    /// The action for a request, if a fault matches and its probability fires; a fault with a
    /// count is used up by it (and removed at zero).
    pub fn take(&self, service: Service, method: &Method, path: &str) -> Option<FaultAction> {
        let mut inner = self.lock();
        let BookInner { faults, rng, .. } = &mut *inner;
        let index = faults.iter().position(|f| {
            f.service == service
                && f.method.as_ref().is_none_or(|m| m == method)
                && glob_match(&f.path, path)
                && f.probability.is_none_or(|p| roll(rng) < p)
        })?;
        let fault = &mut faults[index];
        let action = fault.action();
        if let Some(remaining) = fault.remaining.as_mut() {
            *remaining = remaining.saturating_sub(1);
            if *remaining == 0 {
                faults.remove(index);
            }
        }
        Some(action)
    }
}

/// A number in `[0, 1)`.
fn roll(rng: &mut Rng) -> f64 {
    // 53 random bits are exactly representable in an f64.
    (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
}

/// Whether `text` matches `pattern`, where `*` matches any run of characters (none included).
pub fn glob_match(pattern: &str, text: &str) -> bool {
    let mut pieces = pattern.split('*');
    let Some(first) = pieces.next() else {
        return text.is_empty();
    };
    let Some(mut rest) = text.strip_prefix(first) else {
        return false;
    };
    let pieces: Vec<&str> = pieces.collect();
    let Some((last, middle)) = pieces.split_last() else {
        // No `*` at all: an exact match.
        return rest.is_empty();
    };
    for piece in middle {
        match rest.find(piece) {
            Some(at) => rest = &rest[at + piece.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(value: Value) -> FaultSpec {
        serde_json::from_value(value).expect("a fault spec")
    }

    #[test]
    fn globs() {
        assert!(glob_match("*", "/anything/at/all"));
        assert!(glob_match("/channels/*/messages", "/channels/a:b/messages"));
        assert!(glob_match("/channels/*/messages", "/channels/x/y/messages"));
        assert!(!glob_match("/channels/*/messages", "/channels/x/presence"));
        assert!(glob_match("/time", "/time"));
        assert!(!glob_match("/time", "/times"));
        assert!(glob_match("/v2/*", "/v2/"));
        assert!(glob_match("*abc*abc", "abcabc"));
        assert!(!glob_match("*abc*abc", "abc"));
    }

    #[test]
    fn validation_names_the_problem() {
        let book = FaultBook::new(1);
        let all = |_: Service| true;
        let err = |v: Value| book.add(spec(v), all).expect_err("refused");
        assert!(err(json!({"service": "nope", "path": "*", "status": 500})).contains("unknown service"));
        assert!(err(json!({"service": "ably", "path": "time", "status": 500})).contains("must start with /"));
        assert!(err(json!({"service": "ably", "path": "*", "status": 200})).contains("400 to 599"));
        assert!(err(json!({"service": "ably", "path": "*"})).contains("does nothing"));
        assert!(err(json!({"service": "ably", "path": "*", "drop": true, "status": 500})).contains("drop"));
        assert!(err(json!({"service": "ably", "path": "*", "status": 500, "probability": 1.5})).contains("probability"));
        assert!(err(json!({"service": "ably", "path": "*", "status": 500, "count": 0})).contains("count"));
        assert!(err(json!({"service": "ably", "path": "*", "method": "G T", "status": 500})).contains("method"));
        let served_none = book.add(spec(json!({"service": "ably", "path": "*", "status": 500})), |_| false);
        assert!(served_none.expect_err("refused").contains("not served by this sandbox"));
        assert!(book.list().is_empty(), "nothing refused was added");
    }

    #[test]
    fn count_is_used_up_and_first_match_wins() {
        let book = FaultBook::new(1);
        let all = |_: Service| true;
        let limited = book
            .add(spec(json!({"service": "ably", "path": "/time", "method": "get", "status": 503, "count": 2})), all)
            .expect("added");
        book.add(spec(json!({"service": "ably", "path": "*", "retry_after": 3})), all).expect("added");
        let take = || book.take(Service::Ably, &Method::GET, "/time").map(|a| (a.fault_id, a.outcome));
        assert_eq!(take(), Some((limited.id, Outcome::Fail { status: 503, retry_after: None })));
        assert_eq!(book.list()[0].remaining, Some(1));
        assert_eq!(take(), Some((limited.id, Outcome::Fail { status: 503, retry_after: None })));
        assert_eq!(take(), Some((limited.id + 1, Outcome::Fail { status: 429, retry_after: Some(3) })));
        assert_eq!(book.list().len(), 1);
        assert_eq!(book.take(Service::Taxjar, &Method::GET, "/time"), None);
        assert_eq!(book.delete(99), 0);
        assert_eq!(book.delete_all(Some(Service::Taxjar)), 0);
        assert_eq!(book.delete_all(None), 1);
    }

    #[test]
    fn probability_fires_about_that_often() {
        let book = FaultBook::new(7);
        book.add(spec(json!({"service": "ably", "path": "*", "status": 500, "probability": 0.25})), |_| true)
            .expect("added");
        let hits = (0..4000).filter(|_| book.take(Service::Ably, &Method::POST, "/messages").is_some()).count();
        assert!((800..1200).contains(&hits), "{hits} of 4000");
    }
}
