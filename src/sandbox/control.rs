//! The control port, and the layer that puts every simulator under it: each request to a
//! simulator is checked against the active faults, then recorded in the request log, by the
//! platform rather than by each simulator.
//!
//! Control endpoints (JSON in, JSON out):
//! - `GET /` the services and their base URLs;
//! - `GET /requests?service=NAME&limit=N` recent requests, newest first;
//! - `POST /reset[?service=NAME]` restores seeded state;
//! - `POST /faults`, `GET /faults`, `DELETE /faults[?service=NAME]`, `DELETE /faults/{id}`;
//! - a simulator's own routes under `/{service}/...` ([`Simulator::control_router`]): Mailgun's
//!   `POST /mailgun/incoming` (incoming mail matched against routes) and `GET /mailgun/webhooks`
//!   (webhook POST attempts and recorded forwards).

use std::sync::Arc;
use std::time::Instant;

use axum::body::Bytes;
use axum::extract::{Path, Request, State};
use axum::http::{StatusCode, Uri};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get, post};
use axum::{Json, Router};
use serde_json::json;

use super::errors::{reason, sandbox_error, with_retry_after};
use super::faults::{DropConnection, FaultBook, FaultSpec, Outcome};
use super::request::Query;
use super::request_log::{RequestLog, LOG_PER_SERVICE};
use super::{clock, Endpoint, SandboxClock, Simulator};
use crate::catalog::Service;

/// What the layer in front of one service's router needs.
pub struct Observer {
    pub service: Service,
    /// `None` for a service without a simulator: faults still apply, in the sandbox's shape.
    pub simulator: Option<Arc<dyn Simulator>>,
    pub log: Arc<RequestLog>,
    pub faults: Arc<FaultBook>,
    pub clock: SandboxClock,
}

/// `router` with fault injection and request logging in front of it.
pub fn observed(router: Router, observer: Arc<Observer>) -> Router {
    router.layer(axum::middleware::from_fn_with_state(observer, observe))
}

async fn observe(State(observer): State<Arc<Observer>>, request: Request, next: Next) -> Response {
    let started = Instant::now();
    let method = request.method().clone();
    let path_and_query = request.uri().path_and_query().map_or_else(|| "/".to_owned(), |p| p.as_str().to_owned());
    let action = observer.faults.take(observer.service, &method, request.uri().path());
    let response = match action {
        None => next.run(request).await,
        Some(action) => {
            if let Some(latency) = action.latency {
                tokio::time::sleep(latency).await;
            }
            match action.outcome {
                Outcome::PassThrough => next.run(request).await,
                Outcome::Fail { status, retry_after } => {
                    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
                    let message =
                        format!("{} (fault {} injected by the opsdeck sandbox)", reason(status), action.fault_id);
                    let response = match &observer.simulator {
                        Some(simulator) => simulator.error_response(status, &message),
                        None => sandbox_error(status, "fault", message),
                    };
                    match retry_after {
                        Some(secs) => with_retry_after(response, secs),
                        None => response,
                    }
                }
                Outcome::Drop => {
                    let mut response = StatusCode::BAD_GATEWAY.into_response();
                    response.extensions_mut().insert(DropConnection);
                    response
                }
            }
        }
    };
    let status = if response.extensions().get::<DropConnection>().is_some() { 0 } else { response.status().as_u16() };
    let latency_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    let at = clock::rfc3339_ms(observer.clock.now_ms());
    observer.log.record(observer.service, method.as_str(), &path_and_query, status, latency_ms, at);
    response
}

/// Everything the control port reads and changes.
pub struct ControlState {
    pub endpoints: Vec<Endpoint>,
    pub simulators: Vec<Arc<dyn Simulator>>,
    pub log: Arc<RequestLog>,
    pub faults: Arc<FaultBook>,
    pub clock: SandboxClock,
}

impl ControlState {
    fn simulator(&self, service: Service) -> Option<&Arc<dyn Simulator>> {
        self.simulators.iter().find(|s| s.service() == service)
    }
}

pub fn router(state: Arc<ControlState>) -> Router {
    // Each simulator's own control routes live under its service name (`/mailgun/incoming`).
    let extra: Vec<(String, Router)> = state
        .simulators
        .iter()
        .filter_map(|s| s.control_router().map(|r| (format!("/{}", s.service().name()), r)))
        .collect();
    let mut router = Router::new()
        .route("/", get(index))
        .route("/requests", get(requests))
        .route("/reset", post(reset))
        .route("/faults", get(list_faults).post(add_fault).delete(delete_faults))
        .route("/faults/{id}", delete(delete_fault))
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .with_state(state);
    for (prefix, routes) in extra {
        router = router.nest(&prefix, routes);
    }
    router
}

async fn not_found(uri: Uri) -> Response {
    sandbox_error(
        StatusCode::NOT_FOUND,
        "not_found",
        format!("the control port has no {}; try GET /, /requests, /faults or POST /reset", uri.path()),
    )
}

async fn method_not_allowed(uri: Uri) -> Response {
    sandbox_error(
        StatusCode::METHOD_NOT_ALLOWED,
        "method_not_allowed",
        format!("{} does not take this method", uri.path()),
    )
}

/// A refusal of the control port, in the sandbox's error shape (small, unlike a `Response`).
struct Refusal(StatusCode, &'static str, String);

impl IntoResponse for Refusal {
    fn into_response(self) -> Response {
        sandbox_error(self.0, self.1, self.2)
    }
}

fn query_of(uri: &Uri) -> Result<Query, Refusal> {
    Query::parse(uri.query().unwrap_or("")).map_err(|e| Refusal(StatusCode::BAD_REQUEST, "bad_request", e.to_string()))
}

/// The `service` parameter: absent, or a known service name (else 404).
fn service_param(query: &Query) -> Result<Option<Service>, Refusal> {
    match query.get("service") {
        None => Ok(None),
        Some(name) => Service::parse(name).map(Some).ok_or_else(|| {
            let names: Vec<&str> = Service::ALL.iter().map(|s| s.name()).collect();
            Refusal(
                StatusCode::NOT_FOUND,
                "unknown_service",
                format!("no service {name:?}; the services are {}", names.join(", ")),
            )
        }),
    }
}

async fn index(State(state): State<Arc<ControlState>>) -> Json<serde_json::Value> {
    let services: Vec<_> = state
        .endpoints
        .iter()
        .map(|e| {
            let name = match e.region {
                Some(region) => format!("{}-{region}", e.service),
                None => e.service.name().to_owned(),
            };
            json!({"service": name, "base_url": e.sdk_base_url(), "simulated": e.simulated})
        })
        .collect();
    Json(json!({
        "services": services,
        "speed": state.clock.speed(),
        "now": clock::rfc3339_ms(state.clock.now_ms()),
        "endpoints": ["GET /requests?service=NAME&limit=N", "POST /reset?service=NAME", "GET|POST|DELETE /faults",
            "POST /mailgun/incoming", "GET /mailgun/webhooks"],
    }))
}

async fn requests(State(state): State<Arc<ControlState>>, uri: Uri) -> Response {
    let answer = || -> Result<Response, Refusal> {
        let query = query_of(&uri)?;
        let service = service_param(&query)?;
        let most = (LOG_PER_SERVICE * Service::ALL.len()) as u64;
        let limit = super::paging::bounded(&query, "limit", 50, 1, most)
            .map_err(|e| Refusal(StatusCode::BAD_REQUEST, "bad_request", e.to_string()))?;
        let recent = state.log.recent(service, usize::try_from(limit).unwrap_or(usize::MAX));
        Ok(Json(json!({ "requests": recent })).into_response())
    };
    answer().unwrap_or_else(IntoResponse::into_response)
}

async fn reset(State(state): State<Arc<ControlState>>, uri: Uri) -> Response {
    let answer = || -> Result<Response, Refusal> {
        let query = query_of(&uri)?;
        let names: Vec<&str> = match service_param(&query)? {
            Some(service) => {
                let simulator = state.simulator(service).ok_or_else(|| {
                    Refusal(
                        StatusCode::NOT_FOUND,
                        "not_simulated",
                        format!("{} is not simulated yet, so there is nothing to reset", service.name()),
                    )
                })?;
                simulator.reset();
                vec![service.name()]
            }
            None => state
                .simulators
                .iter()
                .map(|s| {
                    s.reset();
                    s.service().name()
                })
                .collect(),
        };
        Ok(Json(json!({ "reset": names })).into_response())
    };
    answer().unwrap_or_else(IntoResponse::into_response)
}

async fn list_faults(State(state): State<Arc<ControlState>>) -> Json<serde_json::Value> {
    let faults: Vec<_> = state.faults.list().iter().map(super::faults::Fault::to_json).collect();
    Json(json!({ "faults": faults }))
}

async fn add_fault(State(state): State<Arc<ControlState>>, body: Bytes) -> Response {
    let spec: FaultSpec = match serde_json::from_slice(&body) {
        Ok(spec) => spec,
        Err(e) => {
            return sandbox_error(
                StatusCode::BAD_REQUEST,
                "invalid_fault",
                format!(
                    "the body must be a JSON fault (service, path, and status, latency_ms, drop or retry_after): {e}"
                ),
            )
        }
    };
    match state.faults.add(spec, |service| state.simulator(service).is_some()) {
        Ok(fault) => (StatusCode::CREATED, Json(fault.to_json())).into_response(),
        Err(message) => sandbox_error(StatusCode::BAD_REQUEST, "invalid_fault", message),
    }
}

async fn delete_faults(State(state): State<Arc<ControlState>>, uri: Uri) -> Response {
    let answer = || -> Result<Response, Refusal> {
        let query = query_of(&uri)?;
        let service = service_param(&query)?;
        Ok(Json(json!({ "deleted": state.faults.delete_all(service) })).into_response())
    };
    answer().unwrap_or_else(IntoResponse::into_response)
}

async fn delete_fault(State(state): State<Arc<ControlState>>, Path(id): Path<String>) -> Response {
    let Ok(number) = id.parse::<u64>() else {
        return sandbox_error(StatusCode::BAD_REQUEST, "bad_request", format!("fault id {id:?} is not a number"));
    };
    match state.faults.delete(number) {
        0 => (
            StatusCode::NOT_FOUND,
            Json(json!({"deleted": 0, "error": "unknown_fault", "message": format!("there is no active fault {number}")})),
        )
            .into_response(),
        deleted => Json(json!({ "deleted": deleted })).into_response(),
    }
}
