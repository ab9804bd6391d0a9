//! The Deepgram simulator (wire facts: `shared/api/deepgram.md`): projects, keys, members,
//! balances, models and usage, over seeded, resettable state.
//!
//! Layout: `state` (the account and its rules, no HTTP), `models` (the model catalogue), `seed`,
//! `errors` (Deepgram's three error shapes). This file reads each request once (the `Token`,
//! the query, the JSON body), routes it, and answers with a `dg-request-id`.

pub mod audio;
mod callbacks;
mod errors;
mod listen;
mod live;
mod models;
pub mod read;
mod seed;
mod state;
mod stream;

#[cfg(test)]
pub(crate) mod test_wav;
#[cfg(test)]
mod tests;

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use axum::body::to_bytes;
use axum::extract::Request;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::{Json, Router};
use serde_json::{json, Map, Value};

pub use self::errors::DgError;
use self::state::{Caller, Endpoint, Key, State};
use super::outbox::Delivery;
use super::request::{self, Credentials, Query};
use super::timeline::{self, Due, Engine, Timeline};
use super::ws::Sockets;
use super::{clock, Platform, SandboxClock, Simulator};
use crate::catalog::Service;

/// Speak and read bodies: Deepgram refuses more than 2 MB (`PAYLOAD_TOO_LARGE`).
const MAX_JSON_BODY: usize = 2 * 1024 * 1024;
/// Audio uploads: as much as the sandbox's listeners take.
const MAX_AUDIO: usize = 16 * 1024 * 1024;
/// `/v1/read` input, in tokens (Deepgram's `TOKEN_LIMIT_EXCEEDED`).
const MAX_READ_TOKENS: u64 = 150_000;
/// Text to speak, in characters (Deepgram's 413 past it).
const MAX_SPEAK_CHARS: usize = 2_400;

pub struct DeepgramSimulator {
    shared: Arc<Shared>,
}

struct Shared {
    seed: u64,
    anchor_ms: i64,
    clock: SandboxClock,
    state: Mutex<State>,
    /// The background task that sends callbacks: its clock, bell, client and stop token.
    engine: Engine,
    /// Live transcription's sockets.
    live: Sockets,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl DeepgramSimulator {
    pub fn new(platform: &Platform) -> DeepgramSimulator {
        let anchor_ms = platform.clock.now_ms();
        let shared = Arc::new(Shared {
            seed: platform.seed,
            anchor_ms,
            clock: platform.clock.clone(),
            state: Mutex::new(seed::seeded(platform.seed, anchor_ms)),
            engine: Engine::new(platform),
            live: Sockets::new(live::LIMITS, platform.stop.clone()).with_protocols(live::PROTOCOLS),
        });
        timeline::spawn(&shared);
        DeepgramSimulator { shared }
    }
}

impl Drop for DeepgramSimulator {
    fn drop(&mut self) {
        self.shared.engine.stop.cancel();
    }
}

impl Timeline for Shared {
    type Origin = ();

    fn engine(&self) -> &Engine {
        &self.engine
    }

    fn due(&self, now_ms: i64) -> Due<()> {
        let mut state = self.lock();
        let posts = state.outbox.due(now_ms).into_iter().map(|d| ((), d)).collect();
        Due { posts, next_ms: state.outbox.next_due() }
    }

    fn answered(&self, answers: Vec<((), Delivery, u16)>, at_ms: i64) {
        let mut state = self.lock();
        for ((), delivery, status) in answers {
            state.outbox.answered(delivery, status, at_ms);
        }
    }
}

/// `GET /deepgram/callbacks` on the control port: the callbacks sent (or not, and why), newest first.
fn callback_attempts(shared: &Shared) -> Json<Value> {
    let state = shared.lock();
    let attempts: Vec<Value> = state.outbox.attempts().rev().map(|a| a.to_json(clock::rfc3339_ms)).collect();
    Json(json!({"callbacks": attempts, "pending": state.outbox.pending()}))
}

impl Simulator for DeepgramSimulator {
    fn service(&self) -> Service {
        Service::Deepgram
    }

    fn router(&self) -> Router {
        let shared = Arc::clone(&self.shared);
        Router::new().fallback(move |request: Request| {
            let shared = Arc::clone(&shared);
            async move {
                if live::is_live(&request) {
                    return live::connect(shared, request).await;
                }
                entry(&shared, request).await
            }
        })
    }

    fn control_router(&self) -> Option<Router> {
        let shared = Arc::clone(&self.shared);
        Some(Router::new().route(
            "/callbacks",
            axum::routing::get(move || {
                let shared = Arc::clone(&shared);
                async move { callback_attempts(&shared) }
            }),
        ))
    }

    fn reset(&self) {
        *self.shared.lock() = seed::seeded(self.shared.seed, self.shared.anchor_ms);
    }

    fn error_response(&self, status: StatusCode, message: &str) -> Response {
        super::errors::render_status::<DgError>(status, message)
    }
}

/// One request as the handlers see it.
struct Call {
    method: Method,
    segments: Vec<String>,
    query: Query,
    headers: HeaderMap,
    body: bytes::Bytes,
    caller: Caller,
    request_id: String,
    now_ms: i64,
    /// The body came from the `url` of a JSON body (listen, read), fetched from loopback.
    fetched: bool,
}

impl Call {
    /// The body as a JSON object (`{}` when empty).
    fn json(&self) -> Result<Map<String, Value>, DgError> {
        if self.body.iter().all(u8::is_ascii_whitespace) {
            return Ok(Map::new());
        }
        match serde_json::from_slice::<Value>(&self.body) {
            Ok(Value::Object(map)) => Ok(map),
            Ok(_) => {
                Err(DgError::legacy(StatusCode::BAD_REQUEST, "INVALID_JSON", "The request body must be a JSON object."))
            }
            Err(e) => Err(DgError::legacy(StatusCode::BAD_REQUEST, "INVALID_JSON", format!("Invalid JSON: {e}"))),
        }
    }
}

async fn entry(shared: &Shared, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let request_id = shared.lock().ids.uuid();
    let limit = if parts.uri.path().trim_end_matches('/') == "/v1/listen" { MAX_AUDIO } else { MAX_JSON_BODY };
    let result = match to_bytes(body, limit).await {
        Ok(bytes) => match remote_source(parts.uri.path(), &parts.headers, bytes).await {
            Ok((bytes, fetched)) => {
                read_call(shared, parts.method, parts.uri.path(), parts.uri.query(), parts.headers, bytes, &request_id)
                    .and_then(|mut call| {
                        call.fetched = fetched;
                        let callback = callback_of(&call)?;
                        handle(shared, &call).map(|response| (response, callback, call.now_ms))
                    })
            }
            Err(e) => Err(e),
        },
        Err(_) => Err(DgError::legacy(StatusCode::PAYLOAD_TOO_LARGE, "PAYLOAD_TOO_LARGE", "Payload too large.")),
    };
    let mut response = match result {
        Ok((response, None, _)) => response,
        Ok((response, Some((callback, event)), now_ms)) => {
            defer(shared, response, callback, event, now_ms, &request_id).await
        }
        Err(e) => e.with_request_id(&request_id).into_response(),
    };
    if let Ok(value) = HeaderValue::from_str(&request_id) {
        response.headers_mut().insert("dg-request-id", value);
    }
    response
}

/// The usage features a request's callback parameters count as (`callback=true` filters).
fn callback_features(query: &Query) -> state::Features {
    let given = |name: &str| query.get(name).is_some_and(|v| !v.trim().is_empty());
    state::Features::of(["callback", "callback_method"].into_iter().filter(|name| given(name)))
}

/// The callback an asynchronous request (listen, speak, read) asks for, with what it is for.
fn callback_of(call: &Call) -> Result<Option<(callbacks::Callback, &'static str)>, DgError> {
    let event = match (call.method.as_str(), call.segments.iter().map(String::as_str).collect::<Vec<_>>().as_slice()) {
        ("POST", ["v1", "listen"]) => "listen",
        ("POST", ["v1", "speak"]) => "speak",
        ("POST", ["v1", "read"]) => "read",
        _ => return Ok(None),
    };
    Ok(callbacks::asked(&call.query)?.map(|callback| (callback, event)))
}

/// Sends `result` to its callback later and answers `{"request_id"}` now, as Deepgram does.
async fn defer(
    shared: &Shared,
    result: Response,
    callback: callbacks::Callback,
    event: &str,
    now_ms: i64,
    request_id: &str,
) -> Response {
    let content_type =
        result.headers().get("content-type").and_then(|v| v.to_str().ok()).unwrap_or("application/json").to_owned();
    // The result was made here, in memory: its size is bounded by what the handler makes.
    let body = to_bytes(result.into_body(), usize::MAX).await.map(|b| b.to_vec()).unwrap_or_default();
    shared.lock().outbox.queue_request(callback.delivery(body, content_type, event, now_ms));
    shared.engine.ring();
    Json(json!({"request_id": request_id})).into_response()
}

fn read_call(
    shared: &Shared,
    method: Method,
    path: &str,
    query: Option<&str>,
    headers: HeaderMap,
    body: bytes::Bytes,
    request_id: &str,
) -> Result<Call, DgError> {
    let now_ms = shared.clock.now_ms();
    let secret = match request::credentials(&headers) {
        Ok(Some(Credentials::Token(token))) => token,
        _ => return Err(DgError::invalid_auth()),
    };
    let caller = shared.lock().authenticate(&secret, now_ms)?;
    let segments = path.split('/').filter(|s| !s.is_empty()).map(str::to_owned).collect();
    let query = Query::parse(query.unwrap_or(""))
        .map_err(|_| DgError::invalid_query("Failed to deserialize query parameters: invalid UTF-8"))?;
    Ok(Call {
        method,
        segments,
        query,
        headers,
        body,
        caller,
        request_id: request_id.to_owned(),
        now_ms,
        fetched: false,
    })
}

/// For `/v1/listen` and `/v1/read` with a JSON `{"url": ...}` body: the content at that URL,
/// fetched only from loopback (anything else is Deepgram's remote-content error, as an
/// unreachable URL is). Other requests pass through.
async fn remote_source(path: &str, headers: &HeaderMap, body: bytes::Bytes) -> Result<(bytes::Bytes, bool), DgError> {
    let path = path.trim_end_matches('/');
    let is_json = request::content_type(headers).starts_with("application/json");
    if !is_json || !matches!(path, "/v1/listen" | "/v1/read") {
        return Ok((body, false));
    }
    let Ok(Value::Object(fields)) = serde_json::from_slice::<Value>(&body) else { return Ok((body, false)) };
    let Some(url) = fields.get("url").and_then(Value::as_str) else { return Ok((body, false)) };
    if path == "/v1/read" && fields.get("text").is_some() {
        return Ok((body, false));
    }
    let remote = |why: String| {
        DgError::legacy(
            StatusCode::BAD_REQUEST,
            "REMOTE_CONTENT_ERROR",
            format!("Could not fetch content from {url}: {why}"),
        )
    };
    if !super::outbox::is_loopback_url(url) {
        return Err(remote(
            "the opsdeck sandbox fetches only loopback URLs (http://127.0.0.1:PORT/...) of your own servers".to_owned(),
        ));
    }
    let response = super::outbox::client().get(url).send().await.map_err(|e| remote(e.to_string()))?;
    if !response.status().is_success() {
        return Err(remote(format!("the server answered {}", response.status())));
    }
    if response.content_length().is_some_and(|n| n > MAX_AUDIO as u64) {
        return Err(remote(format!("the content is over {MAX_AUDIO} bytes")));
    }
    let bytes = response.bytes().await.map_err(|e| remote(e.to_string()))?;
    if bytes.len() > MAX_AUDIO {
        return Err(remote(format!("the content is over {MAX_AUDIO} bytes")));
    }
    Ok((bytes, true))
}

/// The project a voice request bills: the key's, or the sandbox key's first project.
fn billed_project(state: &State, caller: &Caller) -> Result<usize, DgError> {
    state.visible(caller).first().copied().ok_or_else(DgError::project_not_found)
}

fn accessor(caller: &Caller) -> String {
    match caller {
        Caller::Sandbox => String::new(),
        Caller::Key { key_id, .. } => key_id.clone(),
    }
}

fn message(text: &str) -> Result<Response, DgError> {
    Ok(Json(json!({"message": text})).into_response())
}

fn handle(shared: &Shared, call: &Call) -> Result<Response, DgError> {
    let segs: Vec<&str> = call.segments.iter().map(String::as_str).collect();
    // Audio and text work (decoding, speaking, analysing) runs without the state's lock, so
    // one long upload holds up no other request.
    match (call.method.as_str(), segs.as_slice()) {
        ("POST", ["v1", "listen"]) => return transcribe(shared, call),
        ("POST", ["v1", "speak"]) => return speak(shared, call),
        ("POST", ["v1", "read"]) => return analyze(shared, call),
        _ => {}
    }
    let mut guard = shared.lock();
    let state = &mut *guard;
    let ok = |value: Value| Ok(Json(value).into_response());
    match (call.method.as_str(), segs.as_slice()) {
        ("GET", ["v1", "projects"]) => {
            let list: Vec<Value> = state
                .visible(&call.caller)
                .into_iter()
                .map(|i| json!({"project_id": state.projects[i].id, "name": state.projects[i].name}))
                .collect();
            ok(json!({"projects": list}))
        }
        ("GET", ["v1", "projects", id]) => {
            let p = &state.projects[state.project(&call.caller, id, "project:read")?];
            ok(json!({"project_id": p.id, "name": p.name, "company": p.company, "mip_opt_out": p.mip_opt_out}))
        }
        ("PATCH", ["v1", "projects", id]) => {
            let index = state.project(&call.caller, id, "project:write")?;
            let body = call.json()?;
            let text = |field: &str| -> Result<Option<String>, DgError> {
                match body.get(field) {
                    None | Some(Value::Null) => Ok(None),
                    Some(Value::String(s)) if !s.trim().is_empty() => Ok(Some(s.trim().to_owned())),
                    Some(_) => Err(DgError::bad_request(format!("{field} must be a non-empty string"))),
                }
            };
            let (name, company) = (text("name")?, text("company")?);
            if name.is_none() && company.is_none() {
                return Err(DgError::bad_request("Nothing to update: give a name (or a company)."));
            }
            let project = &mut state.projects[index];
            if let Some(name) = name {
                project.name = name;
            }
            if let Some(company) = company {
                project.company = company;
            }
            message("Successfully updated project info.")
        }
        ("DELETE", ["v1", "projects", id]) => {
            let index = state.project(&call.caller, id, "project:write:destroy")?;
            state.delete_project(index);
            message("Project deleted.")
        }
        ("GET", ["v1", "projects", id, "keys"]) => {
            let index = state.project(&call.caller, id, "keys:read")?;
            let wanted = call.query.get("status");
            if wanted.is_some_and(|s| !matches!(s, "active" | "expired")) {
                return Err(DgError::invalid_query(
                    "Failed to deserialize query parameters: status must be active or expired",
                ));
            }
            let p = &state.projects[index];
            let list: Vec<Value> = p
                .keys
                .iter()
                .filter(|k| match wanted {
                    Some("active") => k.expires_ms.is_none_or(|at| at > call.now_ms),
                    Some("expired") => k.expires_ms.is_some_and(|at| at <= call.now_ms),
                    _ => true,
                })
                .filter(|k| state.may_touch_key(&call.caller, index, k, false))
                .map(|k| key_item(p, k))
                .collect();
            ok(json!({"api_keys": list}))
        }
        ("GET", ["v1", "projects", id, "keys", key_id]) => {
            let index = state.project(&call.caller, id, "keys:read")?;
            let p = &state.projects[index];
            let key = p.keys.iter().find(|k| k.id == *key_id).ok_or_else(|| DgError::not_found("key"))?;
            if !state.may_touch_key(&call.caller, index, key, false) {
                return Err(DgError::insufficient_permissions());
            }
            ok(json!({"item": key_item(p, key)}))
        }
        ("POST", ["v1", "projects", id, "keys"]) => {
            let index = state.project(&call.caller, id, "keys:write")?;
            let body = call.json()?;
            let created = create_key(state, index, &call.caller, &body, call.now_ms)?;
            ok(created)
        }
        ("DELETE", ["v1", "projects", id, "keys", key_id]) => {
            let index = state.project(&call.caller, id, "keys:write")?;
            let at = state.projects[index]
                .keys
                .iter()
                .position(|k| k.id == *key_id)
                .ok_or_else(|| DgError::not_found("key"))?;
            if !state.may_touch_key(&call.caller, index, &state.projects[index].keys[at], true) {
                return Err(DgError::insufficient_permissions());
            }
            state.projects[index].keys.remove(at);
            message("API key deleted.")
        }
        ("GET", ["v1", "projects", id, "members"]) => {
            let p = &state.projects[state.project(&call.caller, id, "members:read")?];
            let list: Vec<Value> = p
                .members
                .iter()
                .map(|m| {
                    json!({"member_id": m.id, "email": m.email, "first_name": m.first_name, "last_name": m.last_name, "scopes": m.scopes})
                })
                .collect();
            ok(json!({"members": list}))
        }
        ("DELETE", ["v1", "projects", id, "members", member_id]) => {
            let index = state.project(&call.caller, id, "members:write:kick")?;
            state.remove_member(index, member_id)?;
            message("Member removed.")
        }
        ("GET", ["v1", "projects", id, "balances"]) => {
            let p = &state.projects[state.project(&call.caller, id, "billing:read")?];
            let list: Vec<Value> = p
                .balances
                .iter()
                .map(|b| json!({"balance_id": b.id, "amount": b.amount, "units": b.units, "purchase_order_id": b.purchase_order_id}))
                .collect();
            ok(json!({"balances": list}))
        }
        ("GET", ["v1", "projects", id, "balances", balance_id]) => {
            let p = &state.projects[state.project(&call.caller, id, "billing:read")?];
            let b = p.balances.iter().find(|b| b.id == *balance_id).ok_or_else(|| DgError::not_found("balance"))?;
            ok(
                json!({"balance_id": b.id, "amount": b.amount, "units": b.units, "purchase_order_id": b.purchase_order_id}),
            )
        }
        ("GET", ["v1", "projects", id, "usage"]) => {
            let index = state.project(&call.caller, id, "usage:read")?;
            ok(usage_summary(state, index, &call.query, call.now_ms)?)
        }
        ("GET", ["v1", "models"]) | ("GET", ["v1", "projects", _, "models"]) => {
            if let [_, _, id, _] = segs.as_slice() {
                state.project(&call.caller, id, "project:read")?;
            }
            ok(models::catalogue())
        }
        ("GET", ["v1", "models", model_id]) | ("GET", ["v1", "projects", _, "models", model_id]) => {
            if let [_, _, id, _, _] = segs.as_slice() {
                state.project(&call.caller, id, "project:read")?;
            }
            models::by_uuid(model_id).map_or_else(|| Err(DgError::not_found("model")), ok)
        }
        _ => Err(DgError::modern(
            StatusCode::NOT_FOUND,
            "NOT_FOUND",
            format!("{} {} is not a route the opsdeck sandbox simulates.", call.method, call.segments.join("/")),
            "See shared/api/deepgram.md for the routes it serves.",
        )),
    }
}

fn key_item(project: &state::Project, key: &Key) -> Value {
    let member = project.members.iter().find(|m| m.id == key.member_id);
    let mut api_key = json!({
        "api_key_id": key.id,
        "comment": key.comment,
        "scopes": key.scopes,
        "tags": key.tags,
        "created": clock::rfc3339_ms(key.created_ms),
    });
    if let (Some(at), Some(map)) = (key.expires_ms, api_key.as_object_mut()) {
        map.insert("expiration_date".into(), json!(clock::rfc3339_ms(at)));
    }
    json!({
        "member": member.map_or_else(
            || json!({"member_id": key.member_id, "email": ""}),
            |m| json!({"member_id": m.id, "email": m.email, "first_name": m.first_name, "last_name": m.last_name}),
        ),
        "api_key": api_key,
    })
}

/// `POST /v1/projects/{id}/keys`: a comment and scopes are required; at most one of an
/// expiration date and a time to live; no scope above the caller's own role.
fn create_key(
    state: &mut State,
    index: usize,
    caller: &Caller,
    body: &Map<String, Value>,
    now_ms: i64,
) -> Result<Value, DgError> {
    let comment = match body.get("comment") {
        Some(Value::String(s)) if !s.trim().is_empty() => s.trim().to_owned(),
        _ => return Err(DgError::bad_request("comment is required: a string describing the key")),
    };
    let strings = |field: &str| -> Result<Vec<String>, DgError> {
        match body.get(field) {
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(Value::Array(items)) => items
                .iter()
                .map(|v| {
                    v.as_str()
                        .map(str::to_owned)
                        .ok_or_else(|| DgError::bad_request(format!("{field} must be a list of strings")))
                })
                .collect(),
            Some(_) => Err(DgError::bad_request(format!("{field} must be a list of strings"))),
        }
    };
    let scopes = strings("scopes")?;
    if scopes.is_empty() {
        return Err(DgError::bad_request("scopes is required: a list such as [\"member\"]"));
    }
    if let Some(unknown) = scopes.iter().find(|s| !crate::catalog::deepgram_known_scope(s)) {
        return Err(DgError::bad_request(format!("Invalid scope: {unknown:?}")));
    }
    if state::level(&scopes) > state::level(&state.scopes(caller, index)) {
        return Err(DgError::insufficient_permissions());
    }
    let tags = strings("tags")?;
    let expires_ms = match (body.get("expiration_date"), body.get("time_to_live_in_seconds")) {
        (Some(d), Some(t)) if !d.is_null() && !t.is_null() => {
            return Err(DgError::bad_request("Give expiration_date or time_to_live_in_seconds, not both."))
        }
        (Some(Value::String(date)), _) => {
            let at = clock::parse_rfc3339(date).ok_or_else(|| {
                DgError::bad_request(format!("expiration_date {date:?} is not an RFC 3339 date-time"))
            })?;
            if at <= now_ms {
                return Err(DgError::bad_request("expiration_date must be in the future"));
            }
            Some(at)
        }
        (_, Some(ttl)) if !ttl.is_null() => {
            let seconds = ttl
                .as_i64()
                .filter(|s| *s > 0)
                .ok_or_else(|| DgError::bad_request("time_to_live_in_seconds must be a positive whole number"))?;
            Some(now_ms.saturating_add(seconds.saturating_mul(1000)))
        }
        (Some(other), _) if !other.is_null() => return Err(DgError::bad_request("expiration_date must be a string")),
        _ => None,
    };
    if state.projects[index].keys.len() >= state::caps::KEYS {
        return Err(DgError::bad_request(format!(
            "This project holds {} keys, the opsdeck sandbox's limit; delete one first.",
            state::caps::KEYS
        )));
    }
    let member_id = match caller {
        Caller::Key { key_id, .. } => {
            state.projects[index].keys.iter().find(|k| &k.id == key_id).map(|k| k.member_id.clone()).unwrap_or_default()
        }
        Caller::Sandbox => state.projects[index]
            .members
            .iter()
            .find(|m| m.scopes.iter().any(|s| s == "owner"))
            .map(|m| m.id.clone())
            .unwrap_or_default(),
    };
    let key = Key {
        id: state.ids.uuid(),
        secret: state.ids.hex(40),
        comment,
        scopes,
        tags,
        created_ms: now_ms,
        expires_ms,
        member_id,
        created_by: match caller {
            Caller::Key { key_id, .. } => Some(key_id.clone()),
            Caller::Sandbox => None,
        },
    };
    let mut answer = json!({
        "api_key_id": key.id,
        "key": key.secret,
        "comment": key.comment,
        "scopes": key.scopes,
        "tags": key.tags,
        "created": clock::rfc3339_ms(now_ms),
    });
    if let (Some(at), Some(map)) = (expires_ms, answer.as_object_mut()) {
        map.insert("expiration_date".into(), json!(clock::rfc3339_ms(at)));
    }
    state.projects[index].keys.push(key);
    Ok(answer)
}

/// A `YYYY-MM-DD` date as the day's first ms. A full RFC 3339 date-time counts as its day: older
/// API versions took those, and whether the current one refuses them is not known.
fn day_start(text: &str, field: &str) -> Result<i64, DgError> {
    let text = text.trim();
    let date = match clock::parse_rfc3339(text) {
        Some(ms) => clock::date(ms),
        None => text.to_owned(),
    };
    clock::parse_rfc3339(&format!("{date}T00:00:00Z")).ok_or_else(|| {
        DgError::invalid_query(format!(
            "Failed to deserialize query parameters: {field} must be a date YYYY-MM-DD, got {text:?}"
        ))
    })
}

/// `GET .../usage`: per day with usage in `[start, end]` (both inclusive; default the last 7
/// days), filtered, summed from the project's records.
fn usage_summary(state: &State, index: usize, query: &Query, now_ms: i64) -> Result<Value, DgError> {
    const DAY: i64 = 86_400_000;
    let today = now_ms - now_ms.rem_euclid(DAY);
    let end = query.get("end").filter(|s| !s.is_empty()).map(|s| day_start(s, "end")).transpose()?.unwrap_or(today);
    let start = query
        .get("start")
        .filter(|s| !s.is_empty())
        .map(|s| day_start(s, "start"))
        .transpose()?
        .unwrap_or(end - 6 * DAY);
    if start > end {
        return Err(DgError::invalid_query("start must not be after end"));
    }
    let text = |name: &str| query.get(name).filter(|s| !s.is_empty());
    let endpoint = text("endpoint");
    if endpoint.is_some_and(|e| !matches!(e, "listen" | "read" | "speak" | "agent")) {
        return Err(DgError::invalid_query(
            "Failed to deserialize query parameters: endpoint must be listen, read, speak or agent",
        ));
    }
    let deployment = text("deployment");
    if deployment.is_some_and(|d| !matches!(d, "hosted" | "beta" | "self-hosted")) {
        return Err(DgError::invalid_query(
            "Failed to deserialize query parameters: deployment must be hosted, beta or self-hosted",
        ));
    }
    let method = text("method");
    if method.is_some_and(|m| !matches!(m, "sync" | "async" | "streaming")) {
        return Err(DgError::invalid_query(
            "Failed to deserialize query parameters: method must be sync, async or streaming",
        ));
    }
    let mut features = Vec::new();
    for name in state::FEATURES {
        match text(name) {
            None | Some("false") => {}
            Some("true") => features.push(*name),
            Some(other) => {
                return Err(DgError::invalid_query(format!(
                    "Failed to deserialize query parameters: {name} must be true or false, got {other:?}"
                )))
            }
        }
    }
    let wanted = state::Features::of(features.iter().copied());
    let (accessor, tag, model) = (text("accessor"), text("tag"), text("model"));
    let mut days: std::collections::BTreeMap<i64, (f64, u64, u64, u64, u64, u64)> = std::collections::BTreeMap::new();
    for u in &state.projects[index].usage {
        let day = u.at_ms - u.at_ms.rem_euclid(DAY);
        let keep = day >= start
            && day <= end
            && endpoint.is_none_or(|e| e == u.endpoint.as_str())
            // Every simulated request is hosted; a request is synchronous, a stream streaming.
            && deployment.is_none_or(|d| d == "hosted")
            && method.is_none_or(|m| m == if u.streaming { "streaming" } else { "sync" })
            && accessor.is_none_or(|a| a == u.accessor)
            && tag.is_none_or(|t| u.tags.iter().any(|x| &**x == t))
            && model.is_none_or(|m| m == u.model)
            && u.features.contains_all(wanted);
        if !keep {
            continue;
        }
        let entry = days.entry(day).or_default();
        entry.0 += u.audio_seconds;
        entry.1 += u.requests;
        entry.2 += u.tokens_in;
        entry.3 += u.tokens_out;
        if u.endpoint == Endpoint::Speak {
            entry.4 += u.characters;
            entry.5 += u.requests;
        }
    }
    let results: Vec<Value> = days
        .into_iter()
        .map(|(day, (seconds, requests, tokens_in, tokens_out, characters, tts_requests))| {
            let date = clock::date(day);
            let hours = (seconds / 3600.0 * 10_000.0).round() / 10_000.0;
            json!({
                "start": date,
                "end": date,
                "hours": hours,
                "total_hours": hours,
                "requests": requests,
                "tokens": {"in": tokens_in, "out": tokens_out},
                "tts": {"characters": characters, "requests": tts_requests},
            })
        })
        .collect();
    Ok(json!({
        "start": clock::date(start),
        "end": clock::date(end),
        "resolution": {"units": "day", "amount": 1},
        "results": results,
    }))
}

/// The id of the project a listen, speak or read is billed to, if the caller may make one.
fn require_usage_write(shared: &Shared, caller: &Caller) -> Result<String, DgError> {
    let state = shared.lock();
    let project = billed_project(&state, caller)?;
    if !state::grants(&state.scopes(caller, project), "usage:write") {
        return Err(DgError::insufficient_permissions());
    }
    Ok(state.projects[project].id.clone())
}

/// `POST /v1/listen`: raw audio bytes, or `{"url"}` fetched from loopback.
fn transcribe(shared: &Shared, call: &Call) -> Result<Response, DgError> {
    let project = require_usage_write(shared, &call.caller)?;
    let options = listen::options(&call.query)?;
    let is_json = request::content_type(&call.headers).starts_with("application/json");
    if is_json && !call.fetched {
        return Err(DgError::bad_request(
            "Invalid JSON: a JSON body must be {\"url\": \"https://...\"}; send audio as raw bytes",
        ));
    }
    if call.body.is_empty() {
        return Err(DgError::bad_request("failed to process audio: corrupt or unsupported data"));
    }
    let number = |name: &str| -> Result<Option<u32>, DgError> {
        call.query
            .get(name)
            .filter(|v| !v.is_empty())
            .map(|v| {
                v.trim().parse::<u32>().map_err(|_| {
                    DgError::invalid_query(format!(
                        "Failed to deserialize query parameters: {name}: invalid digit, got {v:?}"
                    ))
                })
            })
            .transpose()
    };
    let sample_rate = number("sample_rate")?;
    let channels = number("channels")?.map(|c| u16::try_from(c).unwrap_or(u16::MAX));
    let info = audio::inspect(&call.body, call.query.get("encoding"), sample_rate, channels).map_err(
        |audio::Undecodable(why)| {
            DgError::bad_request(format!("failed to process audio: corrupt or unsupported data ({why})"))
        },
    )?;
    let created = clock::rfc3339_ms(call.now_ms);
    let answer = listen::response(&info, &call.body, &options, &call.request_id, &created);
    shared.lock().record(
        &project,
        state::Usage {
            at_ms: call.now_ms,
            endpoint: Endpoint::Listen,
            streaming: false,
            model: options.model.canonical_name,
            accessor: accessor(&call.caller),
            tags: options.tags.iter().map(|t| t.as_str().into()).collect(),
            features: state::Features::of(options.features.iter().map(String::as_str))
                .with(callback_features(&call.query)),
            requests: 1,
            audio_seconds: info.duration_s,
            characters: 0,
            tokens_in: 0,
            tokens_out: 0,
        },
    );
    Ok(Json(answer).into_response())
}

/// `POST /v1/speak`: real audio of the text, in the asked encoding and container.
fn speak(shared: &Shared, call: &Call) -> Result<Response, DgError> {
    let project = require_usage_write(shared, &call.caller)?;
    let body = call.json()?;
    let text = match body.get("text") {
        Some(Value::String(text)) => text.clone(),
        Some(_) => return Err(DgError::bad_request("text must be a string")),
        None => return Err(DgError::bad_request("Input text contains no characters.")),
    };
    if text.trim().is_empty() {
        return Err(DgError::bad_request("Input text contains no characters."));
    }
    let characters = text.chars().count();
    if characters > MAX_SPEAK_CHARS {
        return Err(DgError::legacy(
            StatusCode::PAYLOAD_TOO_LARGE,
            "Payload Too Large",
            format!("Input text exceeds maximum character limit of {MAX_SPEAK_CHARS}."),
        ));
    }
    let model_name = call.query.get("model").unwrap_or("aura-asteria-en").trim();
    let model =
        models::tts(model_name).ok_or_else(|| DgError::invalid_query(format!("Unsupported model: {model_name}")))?;
    let sample_rate = match call.query.get("sample_rate").filter(|v| !v.is_empty()) {
        Some(v) => Some(v.trim().parse::<u32>().map_err(|_| {
            DgError::invalid_query(format!(
                "Failed to deserialize query parameters: sample_rate: invalid digit, got {v:?}"
            ))
        })?),
        None => None,
    };
    let speed = match call.query.get("speed").filter(|v| !v.is_empty()) {
        Some(v) => v
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|s| s.is_finite() && (0.5..=2.0).contains(s))
            .ok_or_else(|| DgError::invalid_query(format!("speed must be a number from 0.5 to 2.0, got {v:?}")))?,
        None => 1.0,
    };
    let encoding = call.query.get("encoding").filter(|v| !v.is_empty()).unwrap_or(audio::DEFAULT_ENCODING);
    let spoken =
        audio::speak(&text, encoding, call.query.get("container").filter(|v| !v.is_empty()), sample_rate, speed)
            .map_err(|audio::UnsupportedFormat(why)| DgError::invalid_query(why))?;
    shared.lock().record(
        &project,
        state::Usage {
            at_ms: call.now_ms,
            endpoint: Endpoint::Speak,
            streaming: false,
            model: model.canonical_name,
            accessor: accessor(&call.caller),
            tags: call.query.all("tag").map(Into::into).collect(),
            features: callback_features(&call.query),
            requests: 1,
            audio_seconds: 0.0,
            characters: characters as u64,
            tokens_in: 0,
            tokens_out: 0,
        },
    );
    let mut response = spoken.bytes.into_response();
    let headers = response.headers_mut();
    for (name, value) in [
        ("content-type", spoken.content_type.clone()),
        ("dg-model-name", model.canonical_name.to_owned()),
        ("dg-model-uuid", models::uuid_of(model.canonical_name)),
        ("dg-char-count", characters.to_string()),
    ] {
        if let Ok(value) = HeaderValue::from_str(&value) {
            headers.insert(name, value);
        }
    }
    Ok(response)
}

/// `POST /v1/read`: exactly one of `text` or `url` (a `text/plain` body is the text).
fn analyze(shared: &Shared, call: &Call) -> Result<Response, DgError> {
    let project = require_usage_write(shared, &call.caller)?;
    let content_type = request::content_type(&call.headers);
    let text = if call.fetched || content_type.starts_with("text/plain") {
        String::from_utf8(call.body.to_vec()).map_err(|_| DgError::bad_request("The text is not valid UTF-8."))?
    } else if content_type.starts_with("application/json") {
        let body = call.json()?;
        match (body.get("text"), body.get("url")) {
            (Some(Value::String(text)), None) => text.clone(),
            (Some(_), Some(_)) | (None, None) => {
                return Err(DgError::legacy(
                    StatusCode::BAD_REQUEST,
                    "PAYLOAD_ERROR",
                    "Request body must contain exactly one of 'text' or 'url'.",
                ))
            }
            _ => return Err(DgError::legacy(StatusCode::BAD_REQUEST, "PAYLOAD_ERROR", "text must be a string.")),
        }
    } else {
        return Err(DgError::legacy(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "UNSUPPORTED_MEDIA_TYPE",
            "Content-Type must be application/json or text/plain.",
        ));
    };
    if text.trim().is_empty() {
        return Err(DgError::legacy(StatusCode::BAD_REQUEST, "PAYLOAD_ERROR", "The text is empty."));
    }
    let language = call.query.get("language").unwrap_or("en").trim();
    if !(language == "en" || language.starts_with("en-")) {
        return Err(DgError::invalid_query(format!("Request specified unsupported language: {language}")));
    }
    let tokens = read::tokens(&text);
    if tokens > MAX_READ_TOKENS {
        return Err(DgError::legacy(
            StatusCode::BAD_REQUEST,
            "TOKEN_LIMIT_EXCEEDED",
            format!("The input is {tokens} tokens; the limit is {MAX_READ_TOKENS}."),
        ));
    }
    let flag = |name: &str| call.query.get(name).is_some_and(|v| v == "true" || (name == "summarize" && v == "v2"));
    let strict = |name: &str| call.query.get(name) == Some("strict");
    let features = read::Features {
        sentiment: flag("sentiment"),
        summarize: flag("summarize"),
        topics: flag("topics"),
        intents: flag("intents"),
        custom_topics: call.query.all("custom_topic").map(str::to_owned).collect(),
        custom_topic_strict: strict("custom_topic_mode"),
        custom_intents: call.query.all("custom_intent").map(str::to_owned).collect(),
        custom_intent_strict: strict("custom_intent_mode"),
    };
    let analysis = read::analyze(&text, &features);
    let mut metadata =
        json!({"request_id": call.request_id, "created": clock::rfc3339_ms(call.now_ms), "language": "en"});
    let (mut tokens_in, mut tokens_out) = (0, 0);
    if let Some(map) = metadata.as_object_mut() {
        for (name, input, output) in &analysis.tokens {
            tokens_in += input;
            tokens_out += output;
            map.insert(
                (*name).into(),
                json!({"model_uuid": models::uuid_of(name), "input_tokens": input, "output_tokens": output}),
            );
        }
    }
    let used = state::Features::of(["sentiment", "summarize", "topics", "intents"].into_iter().filter(|f| flag(f)));
    shared.lock().record(
        &project,
        state::Usage {
            at_ms: call.now_ms,
            endpoint: Endpoint::Read,
            streaming: false,
            model: "read",
            accessor: accessor(&call.caller),
            tags: call.query.all("tag").map(Into::into).collect(),
            features: used.with(callback_features(&call.query)),
            requests: 1,
            audio_seconds: 0.0,
            characters: 0,
            tokens_in,
            tokens_out,
        },
    );
    Ok(Json(json!({"metadata": metadata, "results": analysis.results})).into_response())
}
