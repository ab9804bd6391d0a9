//! The request log of the control port: the last requests of each service (method, path,
//! status, latency, time), with secrets redacted, so a user pointing their own app at the
//! sandbox can see what it sent and what it got.

use std::collections::{HashMap, VecDeque};
use std::sync::{Mutex, PoisonError};

use serde::Serialize;

use crate::catalog::Service;

/// Requests kept per service; older ones are dropped.
pub const LOG_PER_SERVICE: usize = 200;

/// One request as the control port lists it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LoggedRequest {
    pub service: &'static str,
    pub method: String,
    /// Path and query as sent, secrets in the query replaced by `[redacted]`.
    pub path: String,
    /// The status the client saw; 0 when the connection was dropped by a fault.
    pub status: u16,
    pub latency_ms: u64,
    /// RFC 3339 on the sandbox clock.
    pub at: String,
    /// Ordering key across services: later requests have larger numbers.
    #[serde(skip)]
    pub sequence: u64,
}

/// Every service's recent requests. Shared by the layer that records and the control port.
#[derive(Debug, Default)]
pub struct RequestLog {
    inner: Mutex<LogInner>,
}

#[derive(Debug, Default)]
struct LogInner {
    next_sequence: u64,
    by_service: HashMap<Service, VecDeque<LoggedRequest>>,
}

impl RequestLog {
    /// Records a finished request (the path is redacted here, so nothing else has to).
    pub fn record(
        &self,
        service: Service,
        method: &str,
        path_and_query: &str,
        status: u16,
        latency_ms: u64,
        at: String,
    ) {
        let mut inner = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        let sequence = inner.next_sequence;
        inner.next_sequence += 1;
        let entries = inner.by_service.entry(service).or_default();
        if entries.len() >= LOG_PER_SERVICE {
            entries.pop_front();
        }
        entries.push_back(LoggedRequest {
            service: service.name(),
            method: method.to_owned(),
            path: redact(path_and_query),
            status,
            latency_ms,
            at,
            sequence,
        });
    }

    /// The newest `limit` requests, newest first, of one service or of all.
    pub fn recent(&self, service: Option<Service>, limit: usize) -> Vec<LoggedRequest> {
        let inner = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        let mut all: Vec<LoggedRequest> = inner
            .by_service
            .iter()
            .filter(|(s, _)| service.is_none_or(|wanted| **s == wanted))
            .flat_map(|(_, entries)| entries.iter().rev().take(limit).cloned())
            .collect();
        all.sort_by_key(|r| std::cmp::Reverse(r.sequence));
        all.truncate(limit);
        all
    }
}

/// Query parameter names whose values are secrets (compared case-insensitively, `-`/`_`
/// ignored): API keys, tokens, signatures and passwords that SDKs may put in a URL.
fn is_secret_name(name: &str) -> bool {
    let name: String = name.chars().filter(|c| *c != '_' && *c != '-').collect::<String>().to_ascii_lowercase();
    // Suffixes, not substrings: `keyword` or `design` are not secrets; over-redacting `monkey`
    // is the safe side of the trade.
    const SECRET_ENDINGS: [&str; 6] = ["key", "secret", "token", "password", "passphrase", "signature"];
    SECRET_ENDINGS.iter().any(|word| name.ends_with(word)) || matches!(name.as_str(), "sig" | "auth" | "authorization")
}

/// The path with every secret query value replaced by `[redacted]`; the rest as sent.
pub fn redact(path_and_query: &str) -> String {
    let Some((path, query)) = path_and_query.split_once('?') else {
        return path_and_query.to_owned();
    };
    let pairs: Vec<String> = query
        .split('&')
        .map(|pair| match pair.split_once('=') {
            Some((name, _))
                if is_secret_name(&crate::sandbox::request::decode_component(name, true).unwrap_or_default()) =>
            {
                format!("{name}=[redacted]")
            }
            _ => pair.to_owned(),
        })
        .collect();
    format!("{path}?{}", pairs.join("&"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_in_queries_are_redacted() {
        assert_eq!(redact("/time"), "/time");
        assert_eq!(
            redact("/channels/a/messages?key=app.key:secret&limit=5&access_token=t&X-Api-Key=k&%24top=2"),
            "/channels/a/messages?key=[redacted]&limit=5&access_token=[redacted]&X-Api-Key=[redacted]&%24top=2"
        );
        assert_eq!(redact("/x?api%5Fkey=abc"), "/x?api%5Fkey=[redacted]");
    }

    #[test]
    fn keeps_the_last_per_service_newest_first() {
        let log = RequestLog::default();
        for i in 0..(LOG_PER_SERVICE + 50) {
            log.record(Service::Ably, "GET", &format!("/n/{i}"), 200, 1, String::new());
        }
        log.record(Service::Taxjar, "POST", "/v2/taxes", 201, 3, String::new());
        let ably = log.recent(Some(Service::Ably), 1000);
        assert_eq!(ably.len(), LOG_PER_SERVICE);
        assert_eq!(ably[0].path, format!("/n/{}", LOG_PER_SERVICE + 49));
        let all = log.recent(None, 2);
        assert_eq!(all.iter().map(|r| r.service).collect::<Vec<_>>(), ["taxjar", "ably"]);
    }
}
