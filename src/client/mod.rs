//! Turns (operation, values, credentials) into a real HTTP request, runs it, pages it, and reads
//! each service's errors (`service_errors`). No terminal code here.

pub mod auth;
pub mod credentials;
pub mod error;
pub mod executor;
pub mod live;
pub mod pagination;
pub mod redact;
pub mod request;
pub mod service_errors;

use std::collections::BTreeMap;
use std::time::Duration;

use bytes::Bytes;

pub use credentials::{credential_variables, url_variable, Credentials, Secret};
pub use error::{ApiError, CallError};
pub use executor::{CallEvent, CallId, CallState, Executor};
pub use redact::{Redactor, REDACTED};
pub use request::{build, PreparedRequest};

use crate::catalog::Service;

/// The values a user gave for an operation's parameters, by parameter name.
pub type Values = BTreeMap<String, String>;

/// Where one service's calls go, and as whom.
#[derive(Clone, Debug)]
pub struct Target {
    pub service: Service,
    /// Scheme, host and port, without a trailing slash; paths from the catalog are appended.
    pub base_url: String,
    pub credentials: Credentials,
    /// Whether this is the real service (as opposed to a simulator).
    pub live: bool,
}

/// A response the service gave, whatever its status.
#[derive(Clone, Debug)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Bytes,
    pub duration: Duration,
    /// `METHOD url`, with no secret in it.
    pub request_line: String,
}

impl Response {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    pub fn content_type(&self) -> Option<&str> {
        self.header("content-type")
    }

    pub fn is_success(&self) -> bool {
        (200..300).contains(&self.status)
    }
}

/// Timeouts and limits of the shared HTTP client.
#[derive(Clone, Copy, Debug)]
pub struct HttpSettings {
    pub connect_timeout: Duration,
    /// How long one attempt may wait for the response.
    pub request_timeout: Duration,
    /// How many times an idempotent request is tried in all (connection failures, timeouts, 429
    /// and 502-504 are retried); a request that changes state is tried once.
    pub attempts: u32,
    /// The time budget of a whole call: every attempt and every wait between them ends within it,
    /// so a call never runs longer than this, and a `Retry-After` that asks for more than what is
    /// left fails at once instead of waiting.
    pub total_timeout: Duration,
    /// Responses bigger than this are refused rather than held in memory.
    pub max_body_bytes: u64,
}

impl Default for HttpSettings {
    fn default() -> HttpSettings {
        HttpSettings {
            connect_timeout: Duration::from_secs(5),
            request_timeout: Duration::from_secs(30),
            attempts: 3,
            total_timeout: Duration::from_secs(120),
            max_body_bytes: 512 * 1024 * 1024,
        }
    }
}

/// Redirects a chain follows at most before it is an error.
const MAX_REDIRECTS: usize = 10;

/// The one HTTP client every call shares (connection pool, TLS config, timeouts).
///
/// A redirect is followed only within the origin (scheme, host, port) of the request that started
/// the chain, which `build` made from the configured base URL: a redirect elsewhere would carry
/// the credentials, including headers such as Coinbase's `CB-ACCESS-*` that no client strips,
/// so it is refused and the call fails saying where it pointed. No `Referer` is sent.
pub fn http_client(settings: &HttpSettings) -> Result<reqwest::Client, CallError> {
    let policy = reqwest::redirect::Policy::custom(|attempt| {
        let first = attempt.previous().first().map(reqwest::Url::as_str).unwrap_or_default();
        let (here, there) = (pagination::origin(first), pagination::origin(attempt.url().as_str()));
        if here.is_none() || here != there {
            let url = pagination::without_userinfo(attempt.url().as_str());
            let refused = RefusedRedirect { url, origin: here.unwrap_or_default() };
            attempt.error(refused)
        } else if attempt.previous().len() > MAX_REDIRECTS {
            attempt.error(format!("more than {MAX_REDIRECTS} redirects"))
        } else {
            attempt.follow()
        }
    });
    reqwest::Client::builder()
        .connect_timeout(settings.connect_timeout)
        .timeout(settings.request_timeout)
        .redirect(policy)
        .referer(false)
        .user_agent(concat!("opsdeck/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| CallError::Network { url: String::new(), reason: e.to_string() })
}

/// A redirect the policy refused; `request` turns it into [`CallError::OffOrigin`].
#[derive(Debug, thiserror::Error)]
#[error("redirect to {url} leaves {origin}")]
pub(crate) struct RefusedRedirect {
    pub url: String,
    pub origin: String,
}
