//! The TaxJar Sales Tax API v2 simulator (wire facts: `shared/api/taxjar.md`): every operation
//! of the catalog, over seeded, resettable state, with the tax computed by the shared engine
//! ([`crate::sandbox::tax`]).
//!
//! Layout: `models` (state and rules, no HTTP), `wire` (TaxJar's JSON and the calculation),
//! `lookups` (categories, VAT and address validation), `seed`, `errors` (TaxJar's
//! `{"error","detail","status"}`); this file reads each request once (auth, query, JSON body),
//! routes it and renders the answer under its one top-level key.

mod errors;
mod lookups;
mod models;
mod seed;
mod wire;

#[cfg(test)]
mod tests;

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use axum::body::to_bytes;
use axum::extract::Request;
use axum::http::{HeaderMap, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::{Json, Router};
use serde_json::{json, Map, Value};
use time::OffsetDateTime;

pub use self::errors::TaxjarError;
use self::models::{ApiVersion, Fields, Kind, State};
use super::request::{self, Body, Credentials, Query};
use super::{clock, credentials, Platform, SandboxClock, Simulator};
use crate::catalog::Service;

/// TaxJar documents no body limit; orders with many lines stay far below this.
const MAX_BODY: usize = 1024 * 1024;

/// The TaxJar simulator.
pub struct TaxjarSimulator {
    shared: Arc<Shared>,
}

struct Shared {
    seed: u64,
    /// Seeded dates are relative to this moment, so a reset gives back what start-up showed.
    anchor: OffsetDateTime,
    clock: SandboxClock,
    /// The rate tables the sandbox was started with, kept for a reset.
    tax: Arc<super::tax::Table>,
    state: Mutex<State>,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl TaxjarSimulator {
    pub fn new(platform: &Platform) -> TaxjarSimulator {
        let anchor = platform.clock.now();
        let tax = platform.tax_table();
        TaxjarSimulator {
            shared: Arc::new(Shared {
                seed: platform.seed,
                anchor,
                clock: platform.clock.clone(),
                state: Mutex::new(seed::seeded_state(platform.seed, anchor, Arc::clone(&tax))),
                tax,
            }),
        }
    }
}

impl Simulator for TaxjarSimulator {
    fn service(&self) -> Service {
        Service::Taxjar
    }

    fn router(&self) -> Router {
        let shared = Arc::clone(&self.shared);
        Router::new().fallback(move |request: Request| {
            let shared = Arc::clone(&shared);
            async move { entry(&shared, request).await }
        })
    }

    fn reset(&self) {
        let shared = &self.shared;
        *shared.lock() = seed::seeded_state(shared.seed, shared.anchor, Arc::clone(&shared.tax));
    }

    fn error_response(&self, status: StatusCode, message: &str) -> Response {
        super::errors::render_status::<TaxjarError>(status, message)
    }
}

/// One request as the handlers see it.
struct Call {
    method: Method,
    path: String,
    segments: Vec<String>,
    query: Query,
    body: Map<String, Value>,
    version: ApiVersion,
}

async fn entry(shared: &Shared, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let path = parts.uri.path().to_owned();
    let result = match read_call(&parts.headers, parts.method, &path, parts.uri.query(), body).await {
        Ok(call) => handle(shared, &call),
        Err(e) => Err(e),
    };
    match result {
        Ok((status, value)) => (status, Json(value)).into_response(),
        Err(e) => e.into_response(),
    }
}

async fn read_call(
    headers: &HeaderMap,
    method: Method,
    path: &str,
    query: Option<&str>,
    body: axum::body::Body,
) -> Result<Call, TaxjarError> {
    match request::credentials(headers) {
        Ok(Some(Credentials::Bearer(token) | Credentials::Token(token))) if token == credentials::TAXJAR_TOKEN => {}
        _ => return Err(TaxjarError::unauthorized(method.as_str(), path)),
    }
    // TaxJar's sandbox answers with the status this header asks for (api/taxjar.md §1).
    if let Some(expected) = headers.get("x-tj-expected-response").and_then(|v| v.to_str().ok()) {
        if let Some(status) = expected.trim().parse::<u16>().ok().and_then(|s| StatusCode::from_u16(s).ok()) {
            if status.is_client_error() || status.is_server_error() {
                return Err(TaxjarError::new(status, format!("Expected response {} requested", status.as_u16())));
            }
        }
    }
    let version = match headers.get("x-api-version").and_then(|v| v.to_str().ok()).map(str::trim) {
        Some("2020-08-07") => ApiVersion::V2020,
        // An unknown version is ignored, as TaxJar documents.
        _ => ApiVersion::V2012,
    };
    let query = Query::parse(query.unwrap_or("")).map_err(|e| TaxjarError::bad_request(e.to_string()))?;
    let bytes = to_bytes(body, MAX_BODY)
        .await
        .map_err(|_| TaxjarError::new(StatusCode::PAYLOAD_TOO_LARGE, format!("the body is over {MAX_BODY} bytes")))?;
    let body = match request::read_body(headers, &bytes, MAX_BODY) {
        Ok(Body::Empty) => Map::new(),
        Ok(Body::Json(Value::Object(map))) => map,
        Ok(Body::Json(_)) => return Err(TaxjarError::bad_request("the body must be a JSON object")),
        // Form bodies cannot carry line_items[] or nexus_addresses[]: TaxJar answers 406.
        Ok(Body::Form(_) | Body::Multipart(_)) | Err(request::BodyError::UnsupportedType(_)) => {
            return Err(TaxjarError::not_acceptable("send the body as JSON (Content-Type: application/json)"))
        }
        Err(e) => {
            return Err(TaxjarError::new(
                StatusCode::from_u16(e.status()).unwrap_or(StatusCode::BAD_REQUEST),
                e.to_string(),
            ))
        }
    };
    let segments = path
        .trim_matches('/')
        .split('/')
        .map(|s| request::decode_component(s, false))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|_| TaxjarError::bad_request("the path is not UTF-8 once percent-decoded"))?;
    Ok(Call { method, path: path.to_owned(), segments, query, body, version })
}

fn one(key: &str, value: Value) -> Value {
    json!({ key: value })
}

fn handle(shared: &Shared, call: &Call) -> Result<(StatusCode, Value), TaxjarError> {
    // Creating an order or a refund answers 201 Created (recorded traffic); everything else 200.
    let created = call.method == Method::POST
        && matches!(call.segments.as_slice(), [v, t, noun] if v == "v2" && t == "transactions" && (noun == "orders" || noun == "refunds"));
    let status = if created { StatusCode::CREATED } else { StatusCode::OK };
    handle_ok(shared, call).map(|value| (status, value))
}

fn handle_ok(shared: &Shared, call: &Call) -> Result<Value, TaxjarError> {
    let segments: Vec<&str> = call.segments.iter().map(String::as_str).collect();
    let body = Fields::new(&call.body);
    let provider = call.query.get("provider").unwrap_or("api");
    let mut state = shared.lock();
    let known_path = |methods: &[Method]| -> Result<(), TaxjarError> {
        if methods.contains(&call.method) {
            Ok(())
        } else {
            Err(TaxjarError::new(
                StatusCode::METHOD_NOT_ALLOWED,
                format!("{} is not allowed on {}", call.method, call.path),
            ))
        }
    };
    let kind_of = |noun: &str| match noun {
        "orders" => Some(Kind::Order),
        "refunds" => Some(Kind::Refund),
        _ => None,
    };
    match segments.as_slice() {
        ["v2", "taxes"] => {
            known_path(&[Method::POST])?;
            Ok(one("tax", wire::calculate(&state, &body)?))
        }
        ["v2", "transactions", noun] if kind_of(noun).is_some() => {
            let kind = kind_of(noun).unwrap_or(Kind::Order);
            let key = if kind == Kind::Order { "order" } else { "refund" };
            match call.method {
                Method::GET => {
                    let (from, to) = list_range(&call.query)?;
                    Ok(one(noun, json!(state.list(kind, provider, from, to))))
                }
                Method::POST => Ok(one(key, wire::transaction(state.create(kind, &body, call.version)?))),
                _ => known_path(&[Method::GET, Method::POST]).map(|()| Value::Null),
            }
        }
        ["v2", "transactions", noun, id] if kind_of(noun).is_some() => {
            let kind = kind_of(noun).unwrap_or(Kind::Order);
            let key = if kind == Kind::Order { "order" } else { "refund" };
            match call.method {
                Method::GET => Ok(one(key, wire::transaction(state.transaction(kind, id, provider)?))),
                Method::PUT => Ok(one(key, wire::transaction(state.update(kind, id, &body, call.version)?))),
                Method::DELETE => Ok(one(key, wire::deleted_transaction(&state.delete(kind, id, provider)?))),
                _ => known_path(&[Method::GET, Method::PUT, Method::DELETE]).map(|()| Value::Null),
            }
        }
        ["v2", "customers"] => match call.method {
            Method::GET => Ok(one("customers", json!(state.customers.iter().map(|(id, _)| id).collect::<Vec<_>>()))),
            Method::POST => Ok(one("customer", wire::customer(state.create_customer(&body)?))),
            _ => known_path(&[Method::GET, Method::POST]).map(|()| Value::Null),
        },
        ["v2", "customers", id] => match call.method {
            Method::GET => Ok(one("customer", wire::customer(state.customer(id)?))),
            Method::PUT => Ok(one("customer", wire::customer(state.update_customer(id, &body)?))),
            Method::DELETE => Ok(one("customer", wire::customer(&state.delete_customer(id)?))),
            _ => known_path(&[Method::GET, Method::PUT, Method::DELETE]).map(|()| Value::Null),
        },
        ["v2", "nexus", "regions"] => {
            known_path(&[Method::GET])?;
            Ok(one("regions", wire::nexus_regions(&state)))
        }
        ["v2", "categories"] => {
            known_path(&[Method::GET])?;
            Ok(one("categories", lookups::categories()))
        }
        ["v2", "summary_rates"] => {
            known_path(&[Method::GET])?;
            Ok(one("summary_rates", wire::summary_rates(&state.tax)))
        }
        ["v2", "rates", zip] => {
            known_path(&[Method::GET])?;
            let country = call.query.get("country").unwrap_or("US");
            Ok(one("rate", wire::rates(&state.tax, zip, country, call.query.get("state"), call.query.get("city"))?))
        }
        ["v2", "addresses", "validate"] => {
            known_path(&[Method::POST])?;
            let text = |f: &str| body.text(f);
            let matches = lookups::validate_address(
                &state.tax,
                text("country")?.as_deref(),
                text("state")?.as_deref(),
                text("zip")?.as_deref(),
                text("city")?.as_deref(),
                text("street")?.as_deref(),
            )?;
            Ok(one("addresses", matches))
        }
        ["v2", "validation"] => {
            known_path(&[Method::GET])?;
            drop(state);
            let vat = call.query.get("vat").ok_or_else(|| TaxjarError::missing("vat"))?;
            let today = clock::date(shared.clock.now_ms());
            Ok(one("validation", lookups::validate_vat(vat, &today)?))
        }
        _ => Err(TaxjarError::not_found(format!("No route matches {} {}", call.method, call.path))),
    }
}

/// `transaction_date` (one day) or `from_transaction_date` with `to_transaction_date`; neither
/// lists everything.
fn list_range(query: &Query) -> Result<(Option<time::Date>, Option<time::Date>), TaxjarError> {
    let day = |field: &'static str| query.get(field).map(|v| models::parse_day(field, v)).transpose();
    let (on, from, to) = (day("transaction_date")?, day("from_transaction_date")?, day("to_transaction_date")?);
    match (on, from, to) {
        (Some(day), None, None) => Ok((Some(day), Some(day))),
        (Some(_), _, _) => Err(TaxjarError::bad_request(
            "give transaction_date or from_transaction_date and to_transaction_date, not both",
        )),
        (None, Some(from), Some(to)) if from > to => {
            Err(TaxjarError::bad_request("from_transaction_date is after to_transaction_date"))
        }
        (None, Some(_), None) => Err(TaxjarError::missing("to_transaction_date")),
        (None, None, Some(_)) => Err(TaxjarError::missing("from_transaction_date")),
        (None, from, to) => Ok((from, to)),
    }
}
