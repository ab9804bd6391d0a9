//! The Ably REST simulator: every operation of the catalog plus the routes the official SDKs call
//! for them, over seeded, resettable state (wire facts: `shared/api/ably.md`).
//!
//! One entry point per request parses the request once (query, negotiated format, body bytes),
//! authenticates, checks the credentials' capability for the route, runs a synchronous handler
//! under the state lock, counts the request in the stats and renders the reply in JSON or
//! MessagePack, so every route behaves alike on errors, envelopes and content types.

mod auth;
mod capability;
mod hub;
mod paging;
mod push;
mod realtime;
mod routes;
mod seed;
mod state;
mod stats;
mod wire;

#[cfg(test)]
mod tests;

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use axum::body::{to_bytes, Bytes};
use axum::extract::{Request, State as AxumState};
use axum::http::header::{self, HeaderMap, HeaderName, HeaderValue};
use axum::http::{Method, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;

use self::auth::NonceBook;
use self::hub::Hub;
pub use self::state::PushDelivery;
use self::state::State;
use self::stats::m;
use self::wire::{body_response, parse_query, AblyError, Format, Val};
use super::{errors, Platform, SandboxClock, Simulator};
use crate::catalog::Service;
use crate::sandbox::request::{decode_component, Query};
use crate::sandbox::ws::Sockets;

/// Request bodies above this are refused (Ably's batch limit is 2 MiB).
const MAX_BODY: usize = 4 * 1024 * 1024;

/// The Ably simulator. Cheap to clone handles share one state.
pub struct AblySimulator {
    shared: Arc<Shared>,
}

impl AblySimulator {
    /// Seeds the demo data; the same seed gives the same channels, messages, members and
    /// devices. Timestamps are anchored to the moment of construction (on the sandbox clock) so
    /// the history is recent.
    pub fn new(platform: &Platform) -> AblySimulator {
        let seed = platform.seed;
        let clock = platform.clock.clone();
        let anchor = clock.now_ms();
        AblySimulator {
            shared: Arc::new(Shared {
                seed,
                anchor,
                clock,
                state: Mutex::new(seed::seeded_state(seed, anchor)),
                nonces: Mutex::new(NonceBook::default()),
                sockets: Sockets::new(realtime::LIMITS, platform.stop.clone()),
                hub: Mutex::new(Hub::default()),
                resumable: Mutex::new(std::collections::HashMap::new()),
                live: Mutex::new(std::collections::HashMap::new()),
                kept: tokio::sync::Notify::new(),
            }),
        }
    }
}

impl AblySimulator {
    /// Push notifications delivered so far (direct and via channels), oldest first; the
    /// simulator cannot reach real devices, so this is where a push can be checked.
    pub fn push_deliveries(&self) -> Vec<PushDelivery> {
        self.shared.lock().push_log.iter().cloned().collect()
    }
}

impl Simulator for AblySimulator {
    fn service(&self) -> Service {
        Service::Ably
    }

    fn router(&self) -> Router {
        router(Arc::clone(&self.shared))
    }

    /// `POST /ably/realtime/drop` on the control port: every realtime socket is dropped without
    /// a CLOSE, as a network blip would, so clients show how they resume.
    fn control_router(&self) -> Option<Router> {
        let shared = Arc::clone(&self.shared);
        Some(Router::new().route(
            "/realtime/drop",
            post(move || {
                let dropped = realtime::drop_sockets(&shared);
                async move { axum::Json(serde_json::json!({"dropped": dropped})) }
            }),
        ))
    }

    /// Restores the seeded state at the original anchor, so a reset gives back exactly what
    /// start-up showed. Issued tokens stay valid (they are self-contained), as do used nonces.
    fn reset(&self) {
        let mut fresh = seed::seeded_state(self.shared.seed, self.shared.anchor);
        let mut state = self.shared.lock();
        // Live realtime connections stay (their subscriptions are the hub's), with ids that
        // stay distinct from theirs.
        fresh.connection_counter = state.connection_counter;
        *state = fresh;
    }

    fn error_response(&self, status: StatusCode, message: &str) -> Response {
        let mut response = errors::render_status::<AblyError>(status, message);
        common_headers(response.headers_mut());
        response
    }
}

/// State shared by every request of one simulator.
struct Shared {
    seed: u64,
    anchor: i64,
    clock: SandboxClock,
    state: Mutex<State>,
    nonces: Mutex<NonceBook>,
    /// The realtime connections' sockets.
    sockets: Sockets,
    /// Their subscriptions: taken after `state` when both are held.
    hub: Mutex<Hub>,
    /// Connections whose socket dropped, by connection key, while they may be resumed.
    resumable: Mutex<std::collections::HashMap<String, realtime::Resumable>>,
    /// Connections with a socket, by connection key: a resume of one of these takes it over.
    live: Mutex<std::collections::HashMap<String, crate::sandbox::ws::Outbox>>,
    /// Told whenever a connection is kept in `resumable`.
    kept: tokio::sync::Notify,
}

impl Shared {
    /// The state lock; a panic elsewhere must not take the simulator down with it.
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn resumable(&self) -> MutexGuard<'_, std::collections::HashMap<String, realtime::Resumable>> {
        self.resumable.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn live(&self) -> MutexGuard<'_, std::collections::HashMap<String, crate::sandbox::ws::Outbox>> {
        self.live.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The realtime subscriptions; with the state's lock, taken after it.
    fn hub(&self) -> MutexGuard<'_, Hub> {
        self.hub.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The operations, plus the SDK-only routes and the two error routes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Time,
    ChannelsList,
    ChannelsGet,
    MessagesPublish,
    MessagesList,
    BatchPublish,
    PresenceGet,
    PresenceHistory,
    DeviceRegister,
    DeviceSave,
    DevicePatch,
    DeviceGet,
    DeviceList,
    DeviceDelete,
    DeviceDeleteWhere,
    DeviceResetToken,
    PushPublish,
    SubscriptionCreate,
    SubscriptionList,
    SubscriptionDelete,
    PushChannels,
    Stats,
    RequestToken,
    NotFound,
    MethodNotAllowed,
}

impl Op {
    /// The `apiRequests.<kind>` family the request is counted in: (succeeded, failed, refused).
    fn counters(self) -> (usize, usize, usize) {
        match self {
            Op::RequestToken => (m::API_TOKEN_OK, m::API_TOKEN_FAILED, m::API_TOKEN_REFUSED),
            Op::DeviceRegister
            | Op::DeviceSave
            | Op::DevicePatch
            | Op::DeviceGet
            | Op::DeviceList
            | Op::DeviceDelete
            | Op::DeviceDeleteWhere
            | Op::DeviceResetToken
            | Op::PushPublish
            | Op::SubscriptionCreate
            | Op::SubscriptionList
            | Op::SubscriptionDelete
            | Op::PushChannels => (m::API_PUSH_OK, m::API_PUSH_FAILED, m::API_PUSH_REFUSED),
            _ => (m::API_OTHER_OK, m::API_OTHER_FAILED, m::API_OTHER_REFUSED),
        }
    }
}

/// One parsed request, handed to the handlers.
struct Call {
    method: Method,
    /// The raw (still percent-encoded) path.
    path: String,
    /// The path's segments after the leading `/`, percent-decoded; empty ones kept, so
    /// `/channels//messages` names the empty channel instead of one called `messages`.
    segments: Vec<String>,
    query: Query,
    headers: HeaderMap,
    body: Bytes,
    format: Format,
    /// Server time of the request, ms.
    now: i64,
}

impl Call {
    /// Path segment `index` (0 = first after `/`), percent-decoded: SDKs encode channel names
    /// (`demo%3Achan`).
    fn segment(&self, index: usize) -> Option<String> {
        self.segments.get(index).cloned()
    }

    /// Last path segment as sent, the name ably-js keeps when it follows a `Link`.
    fn last_segment(&self) -> &str {
        self.path.rsplit('/').next().unwrap_or("")
    }

    fn body(&self) -> Result<Val, AblyError> {
        wire::decode_body(&self.headers, &self.body)
    }

    /// Protocol version from `X-Ably-Version` or `?v=`; `None` when the client sent none.
    fn version(&self) -> Option<f64> {
        self.headers
            .get("x-ably-version")
            .and_then(|v| v.to_str().ok())
            .or_else(|| self.query.get("v"))
            .and_then(|v| v.trim().parse().ok())
    }

    /// The `Links` builder for this request's paginated answer.
    fn links(&self, base: Vec<(&'static str, String)>) -> paging::Links<'_> {
        paging::Links { segment: self.last_segment(), base, format: self.query.get("format").map(str::to_owned) }
    }
}

/// A successful answer before encoding.
struct Reply {
    status: StatusCode,
    body: Option<Val>,
    link: Option<String>,
}

impl Reply {
    fn ok(body: Val) -> Reply {
        Reply::with_status(StatusCode::OK, body)
    }

    fn created(body: Val) -> Reply {
        Reply::with_status(StatusCode::CREATED, body)
    }

    fn with_status(status: StatusCode, body: Val) -> Reply {
        Reply { status, body: Some(body), link: None }
    }

    fn no_content() -> Reply {
        Reply { status: StatusCode::NO_CONTENT, body: None, link: None }
    }

    /// A page of a paginated result with its `Link` header.
    fn page(items: Vec<Val>, link: String) -> Reply {
        Reply { status: StatusCode::OK, body: Some(Val::Arr(items)), link: Some(link) }
    }
}

/// Registers every route on one handler shape: `entry(shared, op, request)`.
macro_rules! to {
    ($op:expr) => {
        |AxumState(shared): AxumState<Arc<Shared>>, request: Request| entry(shared, $op, request)
    };
}

fn router(shared: Arc<Shared>) -> Router {
    Router::new()
        // The realtime host's root: a WebSocket connection (`realtime.rs`).
        .route(
            "/",
            get(|AxumState(shared): AxumState<Arc<Shared>>, request: Request| realtime::connect(shared, request)),
        )
        .route("/time", get(to!(Op::Time)))
        .route("/stats", get(to!(Op::Stats)))
        .route("/channels", get(to!(Op::ChannelsList)))
        .route("/channels/{channel}", get(to!(Op::ChannelsGet)))
        .route("/channels/{channel}/messages", get(to!(Op::MessagesList)).post(to!(Op::MessagesPublish)))
        .route("/channels/{channel}/presence", get(to!(Op::PresenceGet)))
        .route("/channels/{channel}/presence/history", get(to!(Op::PresenceHistory)))
        .route("/messages", post(to!(Op::BatchPublish)))
        .route(
            "/push/deviceRegistrations",
            get(to!(Op::DeviceList)).post(to!(Op::DeviceRegister)).delete(to!(Op::DeviceDeleteWhere)),
        )
        .route(
            "/push/deviceRegistrations/{device}",
            get(to!(Op::DeviceGet)).put(to!(Op::DeviceSave)).patch(to!(Op::DevicePatch)).delete(to!(Op::DeviceDelete)),
        )
        .route("/push/deviceRegistrations/{device}/resetUpdateToken", post(to!(Op::DeviceResetToken)))
        .route("/push/publish", post(to!(Op::PushPublish)))
        .route(
            "/push/channelSubscriptions",
            get(to!(Op::SubscriptionList)).post(to!(Op::SubscriptionCreate)).delete(to!(Op::SubscriptionDelete)),
        )
        .route("/push/channels", get(to!(Op::PushChannels)))
        .route("/keys/{key}/requestToken", post(to!(Op::RequestToken)))
        .fallback(to!(Op::NotFound))
        .method_not_allowed_fallback(to!(Op::MethodNotAllowed))
        .with_state(shared)
}

async fn entry(shared: Arc<Shared>, op: Op, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    if parts.method == Method::OPTIONS {
        return preflight();
    }
    let now = shared.clock.now_ms();
    let query = parse_query(parts.uri.query().unwrap_or(""));
    // A query that cannot be read still leaves `Accept` to choose the error's format.
    let format = Format::negotiate(&parts.headers, query.as_ref().unwrap_or(&Query::default()));
    let envelope = query.as_ref().is_ok_and(|q| q.get("envelope").is_some());
    let result = match read_call(parts, body, query, format, now).await {
        Ok(call) => shared.handle(op, &call),
        Err(e) => Err(e),
    };
    let status = match &result {
        Ok(reply) => reply.status.as_u16(),
        Err(e) => e.status,
    };
    shared.count_request(op, status, now);
    render(format, envelope, result)
}

/// The request as handlers see it, or why it cannot be read.
async fn read_call(
    parts: axum::http::request::Parts,
    body: axum::body::Body,
    query: Result<Query, AblyError>,
    format: Format,
    now: i64,
) -> Result<Call, AblyError> {
    let query = query?;
    let path = parts.uri.path().to_owned();
    let segments = path_segments(&path)?;
    // The platform already bounds bodies; this is Ably's own, lower limit.
    let body = to_bytes(body, MAX_BODY)
        .await
        .map_err(|_| AblyError::new(400, 40009, format!("Request body too large: the limit is {MAX_BODY} bytes")))?;
    Ok(Call { method: parts.method, path, segments, query, headers: parts.headers, body, format, now })
}

/// The decoded segments of a path. A segment that is not UTF-8 once decoded is refused, not
/// patched with replacement characters into the name of some other channel or device: 40010
/// for a channel name, else 40003 (Ably's invalid parameter value; the doc names nothing closer).
fn path_segments(path: &str) -> Result<Vec<String>, AblyError> {
    let raw: Vec<&str> = path.strip_prefix('/').unwrap_or(path).split('/').collect();
    raw.iter()
        .enumerate()
        .map(|(index, segment)| {
            decode_component(segment, false).map_err(|_| {
                if index == 1 && raw.first() == Some(&"channels") {
                    AblyError::new(
                        400,
                        40010,
                        format!("Invalid channel name {segment:?}: not UTF-8 once percent-decoded"),
                    )
                } else {
                    AblyError::bad_param(format!("Invalid path segment {segment:?}: not UTF-8 once percent-decoded"))
                }
            })
        })
        .collect()
}

impl Shared {
    fn handle(&self, op: Op, call: &Call) -> Result<Reply, AblyError> {
        match op {
            Op::Time => return Ok(Reply::ok(Val::Arr(vec![Val::Int(call.now)]))),
            Op::NotFound => return Err(AblyError::not_found(format!("Not found: {} {}", call.method, call.path))),
            Op::MethodNotAllowed => {
                return Err(AblyError::new(405, 40500, format!("Method not allowed: {} {}", call.method, call.path)))
            }
            Op::RequestToken => return auth::request_token(&self.nonces, call),
            _ => {}
        }
        let caller = auth::authenticate(call)?;
        if let Some((resource, needed)) = capability::required(op, call) {
            caller.require(&resource, needed)?;
        }
        match op {
            Op::ChannelsList => routes::channels_list(self, call),
            Op::ChannelsGet => routes::channels_get(self, call),
            Op::MessagesPublish => routes::publish(self, call, &caller),
            Op::MessagesList => routes::history(self, call),
            Op::BatchPublish => routes::batch_publish(self, call, &caller),
            Op::PresenceGet => routes::presence_get(self, call),
            Op::PresenceHistory => routes::presence_history(self, call),
            Op::Stats => routes::stats(self, call),
            Op::DeviceRegister => push::device_save(self, call, &caller, false),
            Op::DeviceSave => push::device_save(self, call, &caller, true),
            Op::DevicePatch => push::device_patch(self, call),
            Op::DeviceGet => push::device_get(self, call),
            Op::DeviceList => push::device_list(self, call),
            Op::DeviceDelete => push::device_delete(self, call),
            Op::DeviceDeleteWhere => push::device_delete_where(self, call),
            Op::DeviceResetToken => push::device_reset_token(self, call),
            Op::PushPublish => push::publish(self, call),
            Op::SubscriptionCreate => push::subscription_create(self, call, &caller),
            Op::SubscriptionList => push::subscription_list(self, call),
            Op::SubscriptionDelete => push::subscription_delete(self, call, &caller),
            Op::PushChannels => push::push_channels(self, call),
            Op::Time | Op::NotFound | Op::MethodNotAllowed | Op::RequestToken => {
                Err(AblyError::new(500, 50000, "Internal error: unrouted operation"))
            }
        }
    }

    /// Counts the request in `apiRequests.*` of the current minute: 401/403/429 are refused,
    /// other errors failed.
    fn count_request(&self, op: Op, status: u16, now: i64) {
        let (ok, failed, refused) = op.counters();
        let mut state = self.lock();
        let minute = state.stats.minute(now);
        let (all, kind) = match status {
            0..=399 => (m::API_ALL_OK, ok),
            401 | 403 | 429 => (m::API_ALL_REFUSED, refused),
            _ => (m::API_ALL_FAILED, failed),
        };
        minute.add(all, 1);
        minute.add(kind, 1);
    }
}

/// Encodes a result; with `?envelope=` the real status travels in the body and HTTP says 200.
fn render(format: Format, envelope: bool, result: Result<Reply, AblyError>) -> Response {
    let (status, body, link, error) = match result {
        Ok(reply) => (reply.status, reply.body, reply.link, None),
        Err(e) => {
            (StatusCode::from_u16(e.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR), Some(e.body()), None, Some(e))
        }
    };
    let mut response = if envelope {
        let mut wrapped =
            Val::map([("statusCode", Val::Int(i64::from(status.as_u16()))), ("response", body.unwrap_or(Val::Null))]);
        if let Some(link) = &link {
            wrapped.push("headers", Val::map([("link", Val::str(link.clone()))]));
        }
        body_response(StatusCode::OK, format, &wrapped)
    } else {
        let mut response = match &body {
            Some(body) => body_response(status, format, body),
            None => status.into_response(),
        };
        if let Some(link) = link.and_then(|l| HeaderValue::from_str(&l).ok()) {
            response.headers_mut().insert(header::LINK, link);
        }
        response
    };
    let headers = response.headers_mut();
    if let Some(e) = error {
        e.add_headers(headers);
    }
    common_headers(headers);
    response
}

fn common_headers(headers: &mut HeaderMap) {
    headers.insert(HeaderName::from_static("x-ably-serverid"), HeaderValue::from_static("opsdeck-sandbox"));
    headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, HeaderValue::from_static("*"));
    headers.insert(
        header::ACCESS_CONTROL_EXPOSE_HEADERS,
        HeaderValue::from_static("Link, X-Ably-ErrorCode, X-Ably-ErrorMessage, X-Ably-ServerId"),
    );
}

/// Browsers running ably-js against the sandbox ask first.
fn preflight() -> Response {
    let mut response = StatusCode::NO_CONTENT.into_response();
    let headers = response.headers_mut();
    common_headers(headers);
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_METHODS,
        HeaderValue::from_static("GET, POST, PUT, PATCH, DELETE, OPTIONS"),
    );
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_HEADERS,
        HeaderValue::from_static("Authorization, Content-Type, Accept, X-Ably-Version, Ably-Agent, X-Ably-ClientId"),
    );
    headers.insert(header::ACCESS_CONTROL_MAX_AGE, HeaderValue::from_static("86400"));
    response
}
