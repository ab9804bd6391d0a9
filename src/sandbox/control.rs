//! The control port, and the layer that puts every simulator under it: each request to a
//! simulator is checked against the active faults, then recorded in the request log, by the
//! platform rather than by each simulator.
//!
//! Control endpoints (JSON in, JSON out):
//! - `GET /` the services, their base URLs and whether their simulator is built yet;
//! - `GET /requests?service=NAME&limit=N` recent requests, newest first;
//! - `POST /reset[?service=NAME]` restores seeded state (a simulator not built yet is left so);
//! - `POST /faults`, `GET /faults`, `DELETE /faults[?service=NAME]`, `DELETE /faults/{id}`;
//! - a simulator's own routes under `/{service}/...` ([`Simulator::control_router`]): Mailgun's
//!   `POST /mailgun/incoming` (incoming mail matched against routes) and `GET /mailgun/webhooks`
//!   (webhook POST attempts and recorded forwards). These build their simulator if need be;
//!   nothing else here does.

use std::sync::Arc;
use std::time::Instant;

use axum::body::Bytes;
use axum::extract::{Path, Request, State};
use axum::http::{StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get, post};
use axum::{Json, Router};
use serde_json::json;

use super::errors::{reason, sandbox_error, with_retry_after};
use super::faults::{DropConnection, FaultBook, FaultSpec, Outcome};
use super::lazy::{dispatch_guarded, Built, Slot};
use super::request::Query;
use super::request_log::{RequestLog, LOG_PER_SERVICE};
use super::{clock, Endpoint, SandboxClock};
use crate::catalog::Service;

/// What stands in front of one listener's simulator.
pub(super) struct Observer {
    pub(super) service: Service,
    /// The listener's region (`Some("eu")`: Mailgun's EU listener).
    pub(super) region: Option<&'static str>,
    /// `None` for a service without a simulator: faults still apply, in the sandbox's shape.
    pub(super) slot: Arc<Slot>,
    pub(super) log: Arc<RequestLog>,
    pub(super) faults: Arc<FaultBook>,
    pub(super) clock: SandboxClock,
    /// The hosts and web origins the user allows besides this machine's own programs.
    pub(super) access: Arc<super::access::Access>,
    /// The requests of this service being worked on at once ([`WORK_PER_SERVICE`]), shared by
    /// its listeners.
    pub(super) work: Arc<tokio::sync::Semaphore>,
}

/// How many requests of one service are worked on at once. Each runs on a thread of its own
/// (tokio's blocking pool), never on the runtime's workers: a request that decodes two hours of
/// audio or sorts 40,000 documents then slows its own service, and every other service and
/// the control port keep their latency.
pub const WORK_PER_SERVICE: usize = 2;

/// Lowers the calling thread's scheduling priority, once per thread: a simulator's CPU-heavy
/// request then takes the cores only when the runtime's workers (every other service's
/// requests, the control port, the console) do not want them.
pub(crate) fn yield_to_answering_threads() {
    thread_local!(static LOWERED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) });
    if LOWERED.with(|lowered| lowered.replace(true)) {
        return;
    }
    lower_priority();
}

#[cfg(target_os = "linux")]
pub(crate) fn lower_priority() {
    // On Linux a thread is a task of its own: no pid names the calling thread, not the process.
    // A failure leaves the priority as it was.
    let _ = rustix::process::setpriority_process(None, 10);
}

#[cfg(not(target_os = "linux"))]
pub(crate) fn lower_priority() {}

/// How long a request waits for its service to have room before it gets the vendor's 429.
const WORK_QUEUE_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// A listener's router: every request goes through fault injection and the request log to the
/// simulator, which the first request builds.
pub(super) fn observed(observer: Arc<Observer>) -> Router {
    Router::new().fallback(move |request: Request| {
        let observer = Arc::clone(&observer);
        async move { observe(&observer, request).await }
    })
}

async fn observe(observer: &Observer, request: Request) -> Response {
    let started = Instant::now();
    let method = request.method().clone();
    let path_and_query = request.uri().path_and_query().map_or_else(|| "/".to_owned(), |p| p.as_str().to_owned());
    // The first request builds the simulator (later ones during the build wait for it), so its
    // build time is part of the latency logged.
    let built = observer.slot.get().await;
    let origin = request.headers().get(axum::http::header::ORIGIN).and_then(|o| o.to_str().ok()).map(str::to_owned);
    let refused = observer.access.refuse(&request);
    // Refused before a fault is taken: a page's request must not use up a fault meant for a test.
    let action =
        if refused.is_some() { None } else { observer.faults.take(observer.service, &method, request.uri().path()) };
    let mut response = match (refused, action) {
        (Some(refused), _) => match built {
            Ok(built) => built.simulator.error_response(refused.status, &refused.message),
            Err(_) => sandbox_error(refused.status, "forbidden", refused.message),
        },
        (None, action) => match action {
            None => forward(observer, built, request).await,
            Some(action) => {
                if let Some(latency) = action.latency {
                    tokio::time::sleep(latency).await;
                }
                match action.outcome {
                    Outcome::PassThrough => forward(observer, built, request).await,
                    Outcome::Fail { status, retry_after } => {
                        let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
                        let message =
                            format!("{} (fault {} injected by the opsdeck sandbox)", reason(status), action.fault_id);
                        let response = match built {
                            Ok(built) => built.simulator.error_response(status, &message),
                            Err(_) => sandbox_error(status, "fault", message),
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
        },
    };
    observer.access.cors(origin.as_deref(), &mut response);
    let status = if response.extensions().get::<DropConnection>().is_some() { 0 } else { response.status().as_u16() };
    let latency_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    let at = clock::rfc3339_ms(observer.clock.now_ms());
    observer.log.record(observer.service, method.as_str(), &path_and_query, status, latency_ms, at);
    response
}

/// The simulator's answer to `request`; 500 when it could not be built.
async fn forward(observer: &Observer, built: Result<&Built, String>, request: Request) -> Response {
    let built = match built {
        Ok(built) => built,
        Err(message) => return build_failed(message),
    };
    // Every service has at least one listener region, so a built simulator has a router.
    let Some(router) = built.router(observer.region) else {
        return build_failed(format!("the {} simulator serves no listener", observer.service.title()));
    };
    let Ok(Ok(permit)) = tokio::time::timeout(WORK_QUEUE_WAIT, Arc::clone(&observer.work).acquire_owned()).await else {
        let busy = format!(
            "Too Many Requests (the opsdeck sandbox is still working on {WORK_PER_SERVICE} requests of {}; retry)",
            observer.service.title()
        );
        return with_retry_after(built.simulator.error_response(StatusCode::TOO_MANY_REQUESTS, &busy), 1);
    };
    let (router, service) = (router.clone(), observer.service);
    let runtime = tokio::runtime::Handle::current();
    let worked = tokio::task::spawn_blocking(move || {
        let _permit = permit;
        yield_to_answering_threads();
        runtime.block_on(dispatch_guarded(&router, request, service))
    })
    .await;
    match worked {
        Ok(Ok(response)) => response,
        Ok(Err(_)) | Err(_) => built.simulator.error_response(StatusCode::INTERNAL_SERVER_ERROR, PANIC_MESSAGE),
    }
}

/// What a request the simulator panicked on is told (the panic itself goes to the log).
pub(super) const PANIC_MESSAGE: &str =
    "Internal Server Error (the opsdeck sandbox's simulator failed on this request; see its log)";

/// The answer of a simulator that could not be built.
fn build_failed(message: String) -> Response {
    sandbox_error(StatusCode::INTERNAL_SERVER_ERROR, "simulator_failed", message)
}

/// Everything the control port reads and changes.
pub(super) struct ControlState {
    /// The control port's own port: the one a `Host` it accepts names.
    pub(super) port: u16,
    pub(super) endpoints: Vec<Endpoint>,
    /// The simulators, built or not.
    pub(super) slots: Vec<Arc<Slot>>,
    pub(super) log: Arc<RequestLog>,
    pub(super) faults: Arc<FaultBook>,
    pub(super) clock: SandboxClock,
    /// The ZIP5 tables loaded into AvaTax's and TaxJar's rate tables, if any.
    pub(super) tax_zip5: Option<super::tax::Zip5Summary>,
}

impl ControlState {
    fn slot(&self, service: Service) -> Option<&Arc<Slot>> {
        self.slots.iter().find(|s| s.service() == service)
    }
}

pub(super) fn router(state: Arc<ControlState>) -> Router {
    // Each simulator's own control routes live under its service name (`/mailgun/incoming`),
    // reached through its slot so that only using them builds it.
    let extra: Vec<(String, Router)> = state
        .slots
        .iter()
        .filter(|s| s.has_control_routes())
        .map(|s| (format!("/{}", s.service().name()), simulator_routes(Arc::clone(s))))
        .collect();
    let port = state.port;
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
        router = router.nest_service(&prefix, routes);
    }
    router.layer(axum::middleware::from_fn(move |request: Request, next: axum::middleware::Next| async move {
        let mut response = match refuse_foreign(&request, port) {
            Some(refusal) => refusal.into_response(),
            None => next.run(request).await,
        };
        response.headers_mut().insert(super::outbox::CONTROL_MARKER, axum::http::HeaderValue::from_static("1"));
        response
    }))
}

/// The control port resets and breaks every simulator, so only this machine's own tools may
/// reach it: a `Host` other than a loopback name with this port (DNS rebinding), or any `Origin`
/// (a web page in the user's browser: the control port has no web UI, so it knows no origin),
/// gets 403.
fn refuse_foreign(request: &Request, port: u16) -> Option<Refusal> {
    let headers = request.headers();
    if headers.contains_key(super::outbox::DELIVERY_MARKER) {
        return Some(Refusal(
            StatusCode::FORBIDDEN,
            "forbidden_delivery",
            "the control port takes no webhook deliveries (of this or any other opsdeck sandbox)".into(),
        ));
    }
    if let Some(origin) = headers.get(axum::http::header::ORIGIN) {
        let origin = String::from_utf8_lossy(origin.as_bytes()).into_owned();
        return Some(Refusal(
            StatusCode::FORBIDDEN,
            "forbidden_origin",
            format!("the control port takes no requests from web pages (Origin {origin:?}); call it from a script or opsdeck"),
        ));
    }
    if headers.get_all(axum::http::header::HOST).iter().count() > 1 {
        return Some(Refusal(StatusCode::BAD_REQUEST, "bad_host", "a request has one Host header, not several".into()));
    }
    let host = headers.get(axum::http::header::HOST).map(|h| String::from_utf8_lossy(h.as_bytes()).into_owned());
    let loopback = host.as_deref().is_some_and(|host| {
        let host = host.trim().to_ascii_lowercase();
        ["127.0.0.1", "localhost", "[::1]"].iter().any(|name| host == format!("{name}:{port}"))
    });
    (!loopback).then(|| {
        Refusal(
            StatusCode::FORBIDDEN,
            "forbidden_host",
            format!(
                "the control port answers only requests addressed to 127.0.0.1:{port}, localhost:{port} or [::1]:{port}, not Host {:?}",
                host.unwrap_or_default()
            ),
        )
    })
}

/// A simulator's control routes ([`super::Simulator::control_router`]), its simulator built by
/// the first request to them.
fn simulator_routes(slot: Arc<Slot>) -> Router {
    Router::new().fallback(move |request: Request| {
        let slot = Arc::clone(&slot);
        async move {
            match slot.get().await {
                // A path the simulator does not have gets the control port's own 404.
                Ok(Built { control: Some(routes), .. }) => {
                    let routes = routes.clone().fallback(not_found);
                    dispatch_guarded(&routes, request, slot.service()).await.unwrap_or_else(|_| {
                        sandbox_error(StatusCode::INTERNAL_SERVER_ERROR, "simulator_failed", PANIC_MESSAGE.to_owned())
                    })
                }
                Ok(_) => not_found(request.uri().clone()).await,
                Err(message) => build_failed(message),
            }
        }
    })
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
            let ready = state.slot(e.service).is_some_and(|s| s.is_ready());
            let mut entry = json!({"service": name, "base_url": e.sdk_base_url(), "ready": ready});
            if let Some(url) = e.websocket_url() {
                entry["websocket_url"] = json!(url);
            }
            entry
        })
        .collect();
    let zip5 = state.tax_zip5.as_ref();
    let tax_tables = json!({
        "in_force": super::tax::tables_in_force(zip5),
        "zip5": zip5.map(|z| json!({
            "path": z.path.display().to_string(),
            "files": z.files.len(),
            "zips": z.zips,
            "months": z.months,
        })),
    });
    Json(json!({
        "services": services,
        "tax_tables": tax_tables,
        "speed": state.clock.speed(),
        "now": clock::rfc3339_ms(state.clock.now_ms()),
        "endpoints": ["GET /requests?service=NAME&limit=N", "POST /reset?service=NAME", "GET|POST|DELETE /faults",
            "POST /mailgun/incoming", "GET /mailgun/webhooks", "GET /easypost/webhooks", "GET|POST /coinbase/market",
            "GET /deepgram/callbacks"],
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
    // A simulator not built yet holds its seeded state already: nothing to do, and it stays unbuilt.
    let reset = |slot: &Slot| {
        if let Some(built) = slot.built() {
            built.simulator.reset();
        }
        slot.service().name()
    };
    let answer = || -> Result<Response, Refusal> {
        let query = query_of(&uri)?;
        let names: Vec<&str> = match service_param(&query)? {
            Some(service) => {
                let slot = state.slot(service).ok_or_else(|| {
                    let message =
                        format!("{} is not served by this sandbox, so there is nothing to reset", service.name());
                    Refusal(StatusCode::NOT_FOUND, "not_served", message)
                })?;
                vec![reset(slot)]
            }
            None => state.slots.iter().map(|slot| reset(slot)).collect(),
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
    match state.faults.add(spec, |service| state.slot(service).is_some()) {
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

#[cfg(test)]
mod tests {
    //! A panic in a simulator's handler, through the platform as every listener serves it.

    #![allow(clippy::unwrap_used, reason = "a test panics on failure")]

    use std::net::Ipv4Addr;

    use axum::routing::get;
    use tokio::net::TcpListener;
    use tokio_util::sync::CancellationToken;

    use super::*;
    use crate::sandbox::avatax::AvataxSimulator;
    use crate::sandbox::{serve, Platform, ServeLimits, Simulator};

    /// Test only: AvaTax's error shape over a router whose `/panic` panics, standing for a
    /// simulator bug.
    struct Panicking(AvataxSimulator);

    impl Simulator for Panicking {
        fn service(&self) -> Service {
            Service::Avatax
        }
        fn router(&self) -> Router {
            let bug = || async {
                let panics: fn() -> &'static str = || panic!("a bug in a handler");
                panics()
            };
            // What the thread working on a request is given: lower than the runtime's workers.
            let nice = || async {
                #[cfg(target_os = "linux")]
                let nice = rustix::process::getpriority_process(None).map_or(-1, |n| n);
                #[cfg(not(target_os = "linux"))]
                let nice = 10;
                nice.to_string()
            };
            Router::new().route("/panic", get(bug)).route("/ok", get(|| async { "ok" })).route("/nice", get(nice))
        }
        fn reset(&self) {}
        fn error_response(&self, status: StatusCode, message: &str) -> Response {
            self.0.error_response(status, message)
        }
    }

    #[tokio::test]
    async fn a_panicking_request_is_its_own_500_in_the_vendors_shape_and_the_rest_carry_on() {
        let platform = Platform::real_time(1);
        let build: super::super::lazy::Build = |p| Arc::new(Panicking(AvataxSimulator::new(p)));
        let slot = Arc::new(Slot::new(Service::Avatax, build, false, platform.clone(), None));
        let log = Arc::new(RequestLog::default());
        let observer = Arc::new(Observer {
            service: Service::Avatax,
            region: None,
            slot,
            log: Arc::clone(&log),
            faults: Arc::new(FaultBook::new(1)),
            clock: platform.clock.clone(),
            access: Arc::default(),
            work: Arc::new(tokio::sync::Semaphore::new(WORK_PER_SERVICE)),
        });
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let stop = CancellationToken::new();
        tokio::spawn(serve::serve(listener, observed(observer), ServeLimits::DEFAULT, stop.clone()));
        let http = reqwest::Client::new();
        for _ in 0..2 {
            let response = http.get(format!("{base}/panic")).send().await.unwrap();
            assert_eq!(response.status().as_u16(), 500);
            let body: serde_json::Value = serde_json::from_str(&response.text().await.unwrap()).unwrap();
            assert_eq!(body["error"]["code"], "InternalServerError", "AvaTax's shape: {body}");
            assert!(body["error"]["message"].as_str().unwrap().contains("failed on this request"), "{body}");
            let ok = http.get(format!("{base}/ok")).send().await.unwrap();
            assert_eq!((ok.status().as_u16(), ok.text().await.unwrap().as_str()), (200, "ok"));
        }
        let statuses: Vec<u16> = log.recent(None, 10).iter().map(|r| r.status).collect();
        assert_eq!(statuses, [200, 500, 200, 500]);
        // The work ran on a thread that yields to the ones answering everything else.
        let nice = http.get(format!("{base}/nice")).send().await.unwrap().text().await.unwrap();
        assert_eq!(nice, "10");
        stop.cancel();
    }

    /// Handlers that hold their thread (as a decode of hours of audio does) say they started,
    /// then wait for the test to let them go.
    static STARTED: std::sync::Mutex<Option<std::sync::mpsc::Sender<()>>> = std::sync::Mutex::new(None);
    static RELEASE: std::sync::Mutex<Option<std::sync::mpsc::Receiver<()>>> = std::sync::Mutex::new(None);

    struct Blocking(AvataxSimulator);

    impl Simulator for Blocking {
        fn service(&self) -> Service {
            Service::Avatax
        }
        fn router(&self) -> Router {
            let hold = || async {
                if let Some(started) = STARTED.lock().unwrap().as_ref() {
                    started.send(()).unwrap();
                }
                // Blocks the thread it runs on, as CPU-bound work does.
                let release = RELEASE.lock().unwrap();
                let _ = release.as_ref().unwrap().recv();
                "done"
            };
            Router::new().route("/hold", get(hold)).route("/ok", get(|| async { "ok" }))
        }
        fn reset(&self) {}
        fn error_response(&self, status: StatusCode, message: &str) -> Response {
            self.0.error_response(status, message)
        }
    }

    /// A listener of a [`Blocking`] simulator for `service`, with its own room for work.
    async fn blocking_listener(service: Service, stop: &CancellationToken) -> String {
        let platform = Platform::real_time(1);
        let build: super::super::lazy::Build = |p| Arc::new(Blocking(AvataxSimulator::new(p)));
        let observer = Arc::new(Observer {
            service,
            region: None,
            slot: Arc::new(Slot::new(service, build, false, platform.clone(), None)),
            log: Arc::new(RequestLog::default()),
            faults: Arc::new(FaultBook::new(1)),
            clock: platform.clock.clone(),
            access: Arc::default(),
            work: Arc::new(tokio::sync::Semaphore::new(WORK_PER_SERVICE)),
        });
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(serve::serve(listener, observed(observer), ServeLimits::DEFAULT, stop.clone()));
        base
    }

    /// On a runtime of one worker, a service's requests that hold their threads leave the
    /// worker free: another service answers while they work.
    #[tokio::test(flavor = "multi_thread", worker_threads = 1)]
    async fn requests_that_hold_their_thread_leave_other_services_answering() {
        let (started_tx, started) = std::sync::mpsc::channel();
        let (release, release_rx) = std::sync::mpsc::channel();
        *STARTED.lock().unwrap() = Some(started_tx);
        *RELEASE.lock().unwrap() = Some(release_rx);
        let stop = CancellationToken::new();
        let (heavy, other) =
            (blocking_listener(Service::Deepgram, &stop).await, blocking_listener(Service::Ably, &stop).await);
        let http = reqwest::Client::new();
        let held: Vec<_> =
            (0..WORK_PER_SERVICE).map(|_| tokio::spawn(http.get(format!("{heavy}/hold")).send())).collect();
        // Both hold a thread now (the first holds the receiver; the second waits for it).
        let started = tokio::task::spawn_blocking(move || started.recv().map(|()| started)).await.unwrap().unwrap();
        let ok = tokio::time::timeout(std::time::Duration::from_secs(60), http.get(format!("{other}/ok")).send())
            .await
            .expect("another service answers while one's requests hold their threads")
            .unwrap();
        assert_eq!(ok.text().await.unwrap(), "ok");
        for _ in 0..WORK_PER_SERVICE {
            release.send(()).unwrap();
        }
        for request in held {
            assert_eq!(request.await.unwrap().unwrap().text().await.unwrap(), "done");
        }
        drop(started);
        stop.cancel();
    }
}
