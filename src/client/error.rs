//! One error type for every way a call can fail, with each vendor's error body parsed into it.

use std::fmt;
use std::time::Duration;

/// What the service said when it refused a request.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ApiError {
    /// HTTP status.
    pub status: u16,
    /// The vendor's own error code, when its body has one (`40101`, `ProductNotFound`, ...).
    pub code: Option<String>,
    /// The vendor's message, or the status text when the body says nothing useful.
    pub message: String,
    /// The error body as the service sent it (untrusted: make it inert before showing it), which
    /// `opsdeck call` prints on stdout as `gh api` does.
    pub body: bytes::Bytes,
}

impl ApiError {
    /// An error whose body could not be read as the vendor's error shape.
    /// The message is the body's text made inert, since a server chose it.
    pub fn from_status(status: u16, body: &[u8]) -> ApiError {
        let text = String::from_utf8_lossy(body);
        let text = text.trim();
        let message = if text.is_empty() || text.len() > 300 {
            reason_phrase(status).to_owned()
        } else {
            crate::inert::inert(text).into_owned()
        };
        ApiError { status, code: None, message, body: bytes::Bytes::copy_from_slice(body) }
    }
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "HTTP {}", self.status)?;
        if let Some(code) = &self.code {
            write!(f, " ({code})")?;
        }
        write!(f, ": {}", self.message)
    }
}

/// Why a call produced no successful response.
#[derive(Clone, Debug, thiserror::Error)]
pub enum CallError {
    /// The service answered with an error status.
    #[error("{0}")]
    Api(ApiError),
    /// A value the user gave cannot make a valid request (caught before anything is sent).
    #[error("invalid input: {0}")]
    Invalid(String),
    /// `--read-only` or a read-only profile is in force and the operation changes something;
    /// `why` names which, so the user knows what to change.
    #[error("{operation} changes state and {why}; nothing was sent")]
    ReadOnly { operation: String, why: String },
    /// Credentials are missing or unusable for this service.
    #[error("credentials: {0}")]
    Credentials(String),
    /// Connecting failed: wrong host, nothing listening, DNS, TLS.
    #[error("cannot reach {url}: {reason}")]
    Connect { url: String, reason: String },
    /// No answer in time, after every attempt the call's time budget allowed.
    #[error(
        "{url}: no answer in {}, {attempts} {}, {} in all; try again later, or raise \
         request_timeout_secs in config.toml",
        seconds(*.per_attempt), if *.attempts == 1 { "attempt" } else { "attempts" }, seconds(*.total)
    )]
    Timeout { url: String, per_attempt: Duration, attempts: u32, total: Duration },
    /// The service asked to be retried later than the call's time budget allows.
    #[error(
        "{error}; the service asks to retry in {}, more than the {} left of this call's time budget: \
         gave up at once; try again later",
        seconds(*.wait), seconds(*.left)
    )]
    RetryAfter { error: ApiError, wait: Duration, left: Duration },
    /// A success status whose body is not the JSON the operation answers with: a proxy's page, a
    /// captive portal, a misconfigured URL. Not a success, since nothing usable came back.
    #[error("HTTP {status} from {url} is not JSON ({content_type}); it starts: {preview}")]
    NotJson { url: String, status: u16, content_type: String, preview: String },
    /// The connection broke, or the response could not be read.
    #[error("network error talking to {url}: {reason}")]
    Network { url: String, reason: String },
    /// The response is bigger than opsdeck will hold in memory.
    #[error(
        "the response is larger than {limit_mb} MB; narrow the request (limit, filters), or raise \
         max_response_mb in config.toml"
    )]
    TooLarge { limit_mb: u64 },
    /// A next-page link or a redirect pointed at another scheme, host or port: refused, so the
    /// credentials go only to the origin they were configured for.
    #[error("refused to follow {url}: it leaves {origin}, the only origin opsdeck sends these credentials to")]
    OffOrigin { url: String, origin: String },
    /// A list could not be walked to its end: the server repeated a cursor, or the page cap was reached.
    #[error("{0}")]
    Paging(String),
    /// Cancelled by the user.
    #[error("cancelled")]
    Cancelled,
}

impl CallError {
    /// The exit code `opsdeck call` uses: 2 for what the user must fix in the command, 1 otherwise.
    pub fn exit_code(&self) -> i32 {
        match self {
            CallError::Invalid(_) | CallError::ReadOnly { .. } | CallError::Credentials(_) => 2,
            _ => 1,
        }
    }
}

impl CallError {
    /// The service's error, for an error status (also when it asked to be retried too late).
    pub fn api_error(&self) -> Option<&ApiError> {
        match self {
            CallError::Api(error) | CallError::RetryAfter { error, .. } => Some(error),
            _ => None,
        }
    }
}

/// `30 s`, or `0.2 s` under ten seconds, for messages.
pub fn seconds(duration: Duration) -> String {
    if duration >= Duration::from_secs(10) {
        format!("{} s", duration.as_secs())
    } else {
        format!("{:.1} s", duration.as_secs_f64())
    }
}

/// The standard reason phrase of a status, for messages.
pub fn reason_phrase(status: u16) -> &'static str {
    axum::http::StatusCode::from_u16(status).ok().and_then(|s| s.canonical_reason()).unwrap_or("error")
}

/// The JSON string at `path` (dotted keys) of a JSON value, for vendor parsers.
pub fn json_str<'a>(value: &'a serde_json::Value, path: &str) -> Option<&'a str> {
    path.split('.').try_fold(value, |v, key| v.get(key))?.as_str()
}
