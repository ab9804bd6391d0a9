//! The AvaTax REST v2 simulator: the 22 operations of the catalog plus the routes the official
//! SDKs call around them (transactions by id and by type, uncommit, verify, POST address
//! resolution), over seeded, resettable state (wire facts: `shared/api/avatax.md`).
//!
//! Laid out as moto lays out a service: `models.rs` holds the state and its rules (no HTTP),
//! `routes.rs` the thin handlers, `errors.rs` AvaTax's error shape, `input.rs` / `render.rs` the
//! wire formats, `odata.rs` the list parameters, `calc.rs` the tax arithmetic, `seed.rs` the
//! demo data. This file only reads requests, authenticates and writes responses.

mod calc;
mod documents;
mod errors;
mod input;
mod models;
mod odata;
mod reference;
mod render;
mod routes;
mod seed;

#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use axum::body::{to_bytes, Bytes};
use axum::extract::{Request, State as AxumState};
use axum::http::header::{HeaderMap, HeaderName, HeaderValue};
use axum::http::{Method, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use percent_encoding::percent_decode_str;
use serde_json::Value;
use subtle::ConstantTimeEq;
use time::OffsetDateTime;

pub use self::errors::AvaError;
use self::models::State;
use super::credentials::{AVATAX_ACCOUNT_ID, AVATAX_LICENSE_KEY};
use super::request::{self, Credentials, Query};
use super::{errors as platform_errors, Platform, SandboxClock, Simulator};
use crate::catalog::Service;

/// Request bodies above this are refused (`RequestTooLarge`).
const MAX_BODY: usize = 4 * 1024 * 1024;

/// The AvaTax simulator.
pub struct AvataxSimulator {
    shared: Arc<Shared>,
}

impl AvataxSimulator {
    /// Seeds companies, nexus, customers, certificates and a transaction history; the same seed
    /// gives the same data. Dates are anchored to the moment of construction so the history is
    /// recent (transaction lists search the last 30 days by default).
    pub fn new(platform: &Platform) -> AvataxSimulator {
        let clock = platform.clock.clone();
        let anchor = clock.now();
        let seed = platform.seed;
        let tax = platform.tax_table();
        AvataxSimulator {
            shared: Arc::new(Shared {
                seed,
                anchor,
                clock,
                state: Mutex::new(seed::seeded_state(seed, anchor, Arc::clone(&tax))),
                tax,
                correlation: AtomicU64::new(seed),
            }),
        }
    }
}

impl Simulator for AvataxSimulator {
    fn service(&self) -> Service {
        Service::Avatax
    }

    fn router(&self) -> Router {
        router(Arc::clone(&self.shared))
    }

    fn reset(&self) {
        let shared = &self.shared;
        let fresh = seed::seeded_state(shared.seed, shared.anchor, Arc::clone(&shared.tax));
        *self.shared.lock() = fresh;
    }

    fn error_response(&self, status: StatusCode, message: &str) -> Response {
        let mut response = platform_errors::render_status::<AvaError>(status, message);
        let correlation = self.shared.correlation.fetch_add(1, Ordering::Relaxed);
        common_headers(response.headers_mut(), correlation);
        response
    }
}

struct Shared {
    seed: u64,
    anchor: OffsetDateTime,
    clock: SandboxClock,
    /// The rate tables the sandbox was started with, kept for a reset.
    tax: Arc<super::tax::Table>,
    state: Mutex<State>,
    /// Numbers the `x-correlation-id` of each response.
    correlation: AtomicU64,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Every route, one variant each.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Ping,
    SubscriptionsList,
    CompaniesList,
    CompaniesCreate,
    CompaniesGet,
    CustomersList,
    CustomersCreate,
    CertificatesList,
    CertificatesCreate,
    NexusList,
    NexusCreate,
    TransactionsCreate,
    TransactionsCreateOrAdjust,
    TransactionsList,
    TransactionsGet,
    TransactionsGetByType,
    TransactionsGetById,
    TransactionsAdjust,
    TransactionsCommit,
    TransactionsUncommit,
    TransactionsVerify,
    TransactionsVoid,
    TransactionsRefund,
    TransactionsAudit,
    TransactionsAuditByType,
    AddressesResolve,
    TaxRatesByAddress,
    TaxRatesByPostalCode,
    TaxCodesList,
    NotFound,
}

/// One parsed request.
struct Call {
    method: Method,
    path: String,
    /// Decoded path segments after `/api/v2/`, with AvaTax's `_-ava2f-_` escapes reversed.
    segments: Vec<String>,
    /// Query parameters by lower-case name (AvaTax matches names in any case); a repeated
    /// key's values joined with commas, which is how opsdeck sends `$include=Lines&$include=Details`.
    query: HashMap<String, String>,
    /// The query as sent, for `@nextLink`.
    raw_query: Query,
    body: Bytes,
    authenticated: bool,
    now: OffsetDateTime,
}

impl Call {
    fn segment(&self, index: usize) -> &str {
        self.segments.get(index).map_or("", String::as_str)
    }

    fn query(&self, name: &str) -> Option<&str> {
        self.query.get(&name.to_ascii_lowercase()).map(String::as_str)
    }

    fn json(&self) -> Result<Value, AvaError> {
        input::parse_body(&self.body)
    }
}

/// A successful answer.
struct Reply {
    status: StatusCode,
    body: Value,
}

impl Reply {
    fn ok(body: Value) -> Result<Reply, AvaError> {
        Ok(Reply { status: StatusCode::OK, body })
    }

    fn created(body: Value) -> Result<Reply, AvaError> {
        Ok(Reply { status: StatusCode::CREATED, body })
    }
}

macro_rules! to {
    ($op:expr) => {
        |AxumState(shared): AxumState<Arc<Shared>>, request: Request| entry(shared, $op, request)
    };
}

fn router(shared: Arc<Shared>) -> Router {
    let tx = "/api/v2/companies/{company}/transactions/{code}";
    Router::new()
        .route("/api/v2/utilities/ping", get(to!(Op::Ping)))
        .route("/api/v2/utilities/subscriptions", get(to!(Op::SubscriptionsList)))
        .route("/api/v2/companies", get(to!(Op::CompaniesList)).post(to!(Op::CompaniesCreate)))
        .route("/api/v2/companies/{company}", get(to!(Op::CompaniesGet)))
        .route("/api/v2/companies/{company}/customers", get(to!(Op::CustomersList)).post(to!(Op::CustomersCreate)))
        .route(
            "/api/v2/companies/{company}/certificates",
            get(to!(Op::CertificatesList)).post(to!(Op::CertificatesCreate)),
        )
        .route("/api/v2/companies/{company}/nexus", get(to!(Op::NexusList)).post(to!(Op::NexusCreate)))
        .route("/api/v2/companies/{company}/transactions", get(to!(Op::TransactionsList)))
        .route(tx, get(to!(Op::TransactionsGet)))
        .route(&format!("{tx}/types/{{doctype}}"), get(to!(Op::TransactionsGetByType)))
        .route(&format!("{tx}/types/{{doctype}}/audit"), get(to!(Op::TransactionsAuditByType)))
        .route(&format!("{tx}/adjust"), post(to!(Op::TransactionsAdjust)))
        .route(&format!("{tx}/commit"), post(to!(Op::TransactionsCommit)))
        .route(&format!("{tx}/uncommit"), post(to!(Op::TransactionsUncommit)))
        .route(&format!("{tx}/verify"), post(to!(Op::TransactionsVerify)))
        .route(&format!("{tx}/void"), post(to!(Op::TransactionsVoid)))
        .route(&format!("{tx}/refund"), post(to!(Op::TransactionsRefund)))
        .route(&format!("{tx}/audit"), get(to!(Op::TransactionsAudit)))
        .route("/api/v2/transactions/create", post(to!(Op::TransactionsCreate)))
        .route("/api/v2/transactions/createoradjust", post(to!(Op::TransactionsCreateOrAdjust)))
        .route("/api/v2/transactions/{id}", get(to!(Op::TransactionsGetById)))
        .route("/api/v2/addresses/resolve", get(to!(Op::AddressesResolve)).post(to!(Op::AddressesResolve)))
        .route("/api/v2/taxrates/byaddress", get(to!(Op::TaxRatesByAddress)))
        .route("/api/v2/taxrates/bypostalcode", get(to!(Op::TaxRatesByPostalCode)))
        .route("/api/v2/definitions/taxcodes", get(to!(Op::TaxCodesList)))
        .fallback(to!(Op::NotFound))
        .method_not_allowed_fallback(to!(Op::NotFound))
        .with_state(shared)
}

/// What `$include=ForceTimeout` fails with once its wait is over: a 400, as recorded traffic
/// shows (not 408).
pub(crate) fn force_timeout_error() -> AvaError {
    AvaError::new(400, "TimeoutRequested", 316, "A timeout was requested with $include=ForceTimeout.")
        .target("AvaTaxApiServer")
}

async fn entry(shared: Arc<Shared>, op: Op, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let result = match read_call(&parts, body, shared.clock.now()).await {
        Ok(call) => {
            // ForceTimeout makes the service wait 30 s and fail, so clients can test timeouts;
            // the wait happens before the state lock is taken. The failure is a 400, as recorded
            // traffic shows (not 408).
            let force_timeout = matches!(op, Op::TransactionsCreate | Op::TransactionsCreateOrAdjust)
                && call
                    .query("$include")
                    .is_some_and(|i| i.split(',').any(|w| w.trim().eq_ignore_ascii_case("ForceTimeout")));
            if force_timeout && call.authenticated {
                tokio::time::sleep(std::time::Duration::from_secs(30)).await;
                Err(force_timeout_error())
            } else {
                routes::handle(&shared, op, &call)
            }
        }
        Err(e) => Err(e),
    };
    let correlation = shared.correlation.fetch_add(1, Ordering::Relaxed);
    render(result, correlation)
}

async fn read_call(
    parts: &axum::http::request::Parts,
    body: axum::body::Body,
    now: OffsetDateTime,
) -> Result<Call, AvaError> {
    let path = parts.uri.path().to_owned();
    let query = Query::parse(parts.uri.query().unwrap_or("")).map_err(|e| {
        AvaError::new(
            400,
            "InvalidParameterValue",
            306,
            format!("The query parameter {} is not UTF-8 once percent-decoded.", e.field),
        )
        .target("HttpRequest")
    })?;
    let raw_query = query;
    let query = by_lower_case_name(&raw_query);
    let segments = path
        .strip_prefix("/api/v2/")
        .unwrap_or("")
        .split('/')
        .map(|s| {
            percent_decode_str(s).decode_utf8().map(|d| unescape_code(&d)).map_err(|_| {
                AvaError::new(400, "InvalidParameterValue", 306, "A path segment is not UTF-8 once percent-decoded.")
                    .target("HttpRequest")
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let body = to_bytes(body, MAX_BODY).await.map_err(|_| {
        AvaError::new(413, "RequestTooLarge", 187, format!("The request body is larger than {MAX_BODY} bytes."))
            .target("HttpRequest")
    })?;
    let authenticated = authenticate(&parts.headers);
    // Ping answers whoever asks, saying whether the credentials authenticate.
    if let Err(e) = &authenticated {
        if path != "/api/v2/utilities/ping" {
            return Err(e.clone());
        }
    }
    Ok(Call {
        method: parts.method.clone(),
        path,
        segments,
        query,
        raw_query,
        body,
        authenticated: authenticated.is_ok(),
        now,
    })
}

fn by_lower_case_name(query: &Query) -> HashMap<String, String> {
    let mut out: HashMap<String, String> = HashMap::new();
    for (key, value) in &query.pairs {
        out.entry(key.to_ascii_lowercase())
            .and_modify(|v| {
                v.push(',');
                v.push_str(value);
            })
            .or_insert_with(|| value.clone());
    }
    out
}

/// Codes with `/`, `+`, `?`, `%`, `#` travel escaped in paths (api/avatax.md §3).
fn unescape_code(segment: &str) -> String {
    segment
        .replace("_-ava2f-_", "/")
        .replace("_-ava2b-_", "+")
        .replace("_-ava3f-_", "?")
        .replace("_-ava25-_", "%")
        .replace("_-ava23-_", "#")
}

/// Basic `accountId:licenseKey` with the sandbox credentials; anything else is refused the way
/// the service refuses it.
fn authenticate(headers: &HeaderMap) -> Result<(), AvaError> {
    match request::credentials(headers) {
        Ok(None) => Err(AvaError::authentication_incomplete()),
        Ok(Some(Credentials::Basic { user, password })) if user.is_empty() && password.is_empty() => {
            Err(AvaError::empty_credentials())
        }
        Ok(Some(Credentials::Basic { user, password })) => {
            let user_ok = user.as_bytes().ct_eq(AVATAX_ACCOUNT_ID.as_bytes());
            let key_ok = password.as_bytes().ct_eq(AVATAX_LICENSE_KEY.as_bytes());
            if bool::from(user_ok & key_ok) {
                Ok(())
            } else {
                Err(AvaError::authentication_failed())
            }
        }
        Ok(Some(Credentials::Bearer(_) | Credentials::Token(_))) | Err(_) => Err(AvaError::authentication_failed()),
    }
}

impl platform_errors::VendorError for AvaError {
    fn status(&self) -> StatusCode {
        StatusCode::from_u16(self.status).unwrap_or(StatusCode::BAD_REQUEST)
    }

    fn body(&self) -> Value {
        AvaError::body(self)
    }

    /// What AvaTax answers for a bare status, for injected faults.
    fn for_status(status: StatusCode, message: &str) -> AvaError {
        let server = |code, number| AvaError {
            server_fault: true,
            ..AvaError::new(status.as_u16(), code, number, message).target("AvaTaxApiServer")
        };
        match status.as_u16() {
            401 => AvaError { status: 401, ..AvaError::authentication_failed() },
            403 => AvaError::new(403, "AuthorizationException", 31, "Authorization failed.")
                .describe(message)
                .target("HttpRequestHeaders"),
            404 => AvaError::new(404, "EntityNotFoundError", 4, message).target("HttpRequest"),
            429 => AvaError::new(429, "RateLimitExceeded", 4011, message).target("HttpRequest"),
            503 => server("ServiceNotReady", 1718),
            500..=599 => server("InternalServerError", 209),
            _ => AvaError::new(status.as_u16(), "InvalidParameterValue", 306, message).target("HttpRequest"),
        }
    }
}

impl IntoResponse for AvaError {
    fn into_response(self) -> Response {
        platform_errors::render(&self)
    }
}

/// `x-correlation-id` on every answer, errors and injected faults included: the Python SDK
/// reads it on every response and fails without it.
fn common_headers(headers: &mut HeaderMap, correlation: u64) {
    let id = format!("{:08x}-0000-4000-a000-{:012x}", correlation >> 32, correlation & 0xFFFF_FFFF_FFFF);
    if let Ok(value) = HeaderValue::from_str(&id) {
        headers.insert(HeaderName::from_static("x-correlation-id"), value);
    }
    headers.insert(HeaderName::from_static("serverduration"), HeaderValue::from_static("00:00:00.0010000"));
}

fn render(result: Result<Reply, AvaError>, correlation: u64) -> Response {
    let mut response = match result {
        Ok(reply) => (reply.status, axum::Json(reply.body)).into_response(),
        Err(e) => e.into_response(),
    };
    common_headers(response.headers_mut(), correlation);
    response
}
