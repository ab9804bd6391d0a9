//! The Mailgun simulator (wire facts: `shared/api/mailgun.md`): every operation of the catalog
//! and the other path forms the SDKs use (`/v4/domains`, `/v3/lists/pages`, event page URLs,
//! single webhooks, account stats, POST validation), in two regions with separate state (the US
//! and the EU listener), over seeded, resettable data.
//!
//! Layout: `region` (one region's state and the event pipeline), `domains` + `dns` (sending
//! domains and the simulated DNS), `messages` + `mime` (sending and stored messages), `events`
//! (the log, filters and page tokens), `suppressions`, `webhooks` (config, signing, POSTs),
//! `stats`, `seed`, `errors`; `lists`, `routes` and `validation` answer their own paths. This file
//! reads each request once (auth, query, form or multipart or JSON body), routes it, and runs the
//! background task that makes due events happen and delivers webhooks.

mod dates;
mod dns;
mod domains;
mod errors;
mod events;
mod lists;
mod messages;
mod mime;
mod refusal;
mod region;
mod routes;
mod seed;
mod stats;
mod suppressions;
mod validation;
mod webhooks;

#[cfg(test)]
mod tests;

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use axum::body::{to_bytes, Bytes};
use axum::extract::Request;
use axum::http::{header, HeaderMap, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{json, Value};

pub use self::errors::MailgunError;
use self::mime::FilePart;
use self::region::Region;
use self::suppressions::{CreateBody, Table};
pub use self::webhooks::sign as sign_webhook;
use super::outbox::Delivery;
use super::request::{self, Body, Credentials, Query};
use super::timeline::{self, Due, Engine, Timeline};
use super::{credentials, Platform, Simulator, DEFAULT_PORT_BASE};
use crate::catalog::Service;

/// Mailgun refuses requests over 52.4 MiB with 413.
const MAX_BODY: usize = 52_428_800;

/// The Mailgun simulator: both regions.
pub struct MailgunSimulator {
    shared: Arc<Shared>,
}

struct Shared {
    seed: u64,
    /// Seeded times are relative to this moment, so a reset gives back what start-up showed.
    anchor_ms: i64,
    dns_delay_ms: i64,
    state: Mutex<State>,
    /// The clock, the background task's bell, its POST client and its stop token.
    engine: Engine,
}

struct State {
    us: Region,
    eu: Region,
}

impl State {
    fn region(&mut self, eu: bool) -> &mut Region {
        if eu {
            &mut self.eu
        } else {
            &mut self.us
        }
    }
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn seeded(&self, us_base: String, eu_base: String) -> State {
        let (us, eu) = seed::regions(self.seed, self.anchor_ms, self.dns_delay_ms, us_base, eu_base);
        State { us, eu }
    }
}

/// `yes`/`no`, `true`/`false` (any case, as the Python SDK sends `True`), `1`/`0`.
pub(crate) fn parse_bool(value: &str) -> Option<bool> {
    match value.trim().to_ascii_lowercase().as_str() {
        "yes" | "true" | "1" => Some(true),
        "no" | "false" | "0" => Some(false),
        _ => None,
    }
}

fn default_base(eu: bool) -> String {
    let offset = super::port_offset(Service::Mailgun, if eu { Some("eu") } else { None });
    format!("http://127.0.0.1:{}", DEFAULT_PORT_BASE + offset)
}

impl MailgunSimulator {
    pub fn new(platform: &Platform) -> MailgunSimulator {
        let anchor_ms = platform.clock.now_ms();
        let (us, eu) =
            seed::regions(platform.seed, anchor_ms, platform.dns_delay_ms, default_base(false), default_base(true));
        let shared = Arc::new(Shared {
            seed: platform.seed,
            anchor_ms,
            dns_delay_ms: platform.dns_delay_ms,
            state: Mutex::new(State { us, eu }),
            engine: Engine::new(platform),
        });
        timeline::spawn(&shared);
        MailgunSimulator { shared }
    }

    /// Makes due events happen now: for tests that moved the clock.
    pub fn run_due(&self) {
        let now = self.shared.engine.clock.now_ms();
        let mut state = self.shared.lock();
        state.us.run_due(now);
        state.eu.run_due(now);
    }
}

impl Drop for MailgunSimulator {
    fn drop(&mut self) {
        self.shared.engine.stop.cancel();
    }
}

impl Simulator for MailgunSimulator {
    fn service(&self) -> Service {
        Service::Mailgun
    }

    fn router(&self) -> Router {
        self.region_router(None)
    }

    fn region_router(&self, region: Option<&'static str>) -> Router {
        let shared = Arc::clone(&self.shared);
        let eu = region == Some("eu");
        Router::new().fallback(move |request: Request| {
            let shared = Arc::clone(&shared);
            async move { entry(&shared, eu, request).await }
        })
    }

    fn control_router(&self) -> Option<Router> {
        let incoming_shared = Arc::clone(&self.shared);
        let attempts_shared = Arc::clone(&self.shared);
        Some(
            Router::new()
                .route(
                    "/incoming",
                    post(move |body: Bytes| {
                        let shared = Arc::clone(&incoming_shared);
                        async move { incoming(&shared, &body).await }
                    }),
                )
                .route(
                    "/webhooks",
                    get(move || {
                        let shared = Arc::clone(&attempts_shared);
                        async move { deliveries(&shared) }
                    }),
                ),
        )
    }

    fn reset(&self) {
        let mut state = self.shared.lock();
        let (us_base, eu_base) = (state.us.base_url.clone(), state.eu.base_url.clone());
        *state = self.shared.seeded(us_base, eu_base);
        drop(state);
        // The seed may hold work to come (engagement of its latest messages).
        self.shared.engine.ring();
    }

    fn error_response(&self, status: StatusCode, message: &str) -> Response {
        super::errors::render_status::<MailgunError>(status, message)
    }
}

impl Timeline for Shared {
    /// Whether the POST is the EU region's.
    type Origin = bool;

    fn engine(&self) -> &Engine {
        &self.engine
    }

    fn due(&self, now_ms: i64) -> Due<bool> {
        let mut state = self.lock();
        let mut posts = Vec::new();
        for eu in [false, true] {
            let region = state.region(eu);
            region.run_due(now_ms);
            posts.extend(region.due_deliveries(now_ms).into_iter().map(|d| (eu, d)));
        }
        let next_ms = [state.us.next_due(), state.eu.next_due()].into_iter().flatten().min();
        Due { posts, next_ms }
    }

    fn answered(&self, answers: Vec<(bool, Delivery, u16)>, at_ms: i64) {
        let mut state = self.lock();
        for (eu, delivery, status) in answers {
            state.region(eu).delivered(delivery, status, at_ms);
        }
    }
}

/// One request as the handlers see it.
struct Call {
    method: Method,
    segments: Vec<String>,
    query: Query,
    form: Query,
    files: Vec<request::Part>,
    json: Option<Value>,
    base_url: String,
    accept_mime: bool,
    now_ms: i64,
}

async fn entry(shared: &Shared, eu: bool, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let segments: Vec<String> = match parts
        .uri
        .path()
        .trim_matches('/')
        .split('/')
        .filter(|s| !s.is_empty())
        .map(|s| request::decode_component(s, false))
        .collect::<Result<_, _>>()
    {
        Ok(s) => s,
        Err(_) => return MailgunError::bad_request("the path is not UTF-8 once percent-decoded").into_response(),
    };
    let sending = parts.method == Method::POST
        && segments.len() == 3
        && matches!(segments[0].as_str(), "v2" | "v3")
        && matches!(segments[2].as_str(), "messages" | "messages.mime");
    if !authorized(&parts.headers) {
        return if sending { MailgunError::Forbidden } else { MailgunError::invalid_key() }.into_response();
    }
    let call = match read_call(
        &parts.headers,
        parts.method,
        segments,
        parts.uri.query(),
        body,
        shared.engine.clock.now_ms(),
        eu,
    )
    .await
    {
        Ok(call) => call,
        Err(e) => return e.into_response(),
    };
    let result = {
        let mut state = shared.lock();
        let region = state.region(eu);
        region.base_url.clone_from(&call.base_url);
        region.run_due(call.now_ms);
        handle(&mut state, eu, &call, shared.dns_delay_ms)
    };
    // Whatever the request queued (a send's delivery, a webhook), the background task looks.
    shared.engine.ring();
    match result {
        Ok(value) => Json(value).into_response(),
        Err(e) => e.into_response(),
    }
}

/// Basic `api:<key>` with the sandbox key.
fn authorized(headers: &HeaderMap) -> bool {
    matches!(request::credentials(headers), Ok(Some(Credentials::Basic { user, password }))
        if user == "api" && password == credentials::MAILGUN_KEY)
}

async fn read_call(
    headers: &HeaderMap,
    method: Method,
    segments: Vec<String>,
    query: Option<&str>,
    body: axum::body::Body,
    now_ms: i64,
    eu: bool,
) -> Result<Call, MailgunError> {
    let query = Query::parse(query.unwrap_or("")).map_err(|e| MailgunError::bad_request(e.to_string()))?;
    let bytes = to_bytes(body, MAX_BODY).await.map_err(|_| MailgunError::new(413, "Request entity too large"))?;
    let (form, files, json) = match request::read_body(headers, &bytes, MAX_BODY) {
        Ok(Body::Empty) => (Query::default(), Vec::new(), None),
        Ok(Body::Form(form)) => (form, Vec::new(), None),
        Ok(Body::Json(value)) => (Query::default(), Vec::new(), Some(value)),
        Ok(Body::Multipart(parts)) => {
            let mut form = Query::default();
            let mut files = Vec::new();
            for part in parts {
                match (&part.filename, part.text()) {
                    (None, Some(text)) => form.pairs.push((part.name.clone(), text.to_owned())),
                    _ => files.push(part),
                }
            }
            (form, files, None)
        }
        Err(e) => return Err(MailgunError::new(e.status(), e.to_string())),
    };
    let mut form = form;
    for (name, _) in &mut form.pairs {
        let plain = plain_field_name(name);
        if plain.len() != name.len() {
            *name = plain.to_owned();
        }
    }
    let host =
        headers.get(header::HOST).and_then(|h| h.to_str().ok()).filter(|h| !h.is_empty() && !h.contains(['/', ' ']));
    let base_url = host.map_or_else(|| default_base(eu), |h| format!("http://{h}"));
    let accept_mime = headers
        .get(header::ACCEPT)
        .and_then(|h| h.to_str().ok())
        .is_some_and(|a| a.to_ascii_lowercase().contains("message/rfc2822"));
    Ok(Call { method, segments, query, form, files, json, base_url, accept_mime, now_ms })
}

/// A method or path the simulator does not serve: Mailgun's 404 shape (`{"message": ...}`),
/// saying so, never a 405.
fn not_simulated(method: &Method, segments: &[&str]) -> MailgunError {
    MailgunError::not_found(format!(
        "Not Found: {method} /{} is not simulated by the opsdeck sandbox",
        segments.join("/")
    ))
}

/// A form field name without PHP's array suffix: `to[]` and `to[0]` are `to`. Mailgun answers
/// `from[]=`/`to[]=` sends with 200 "Queued. Thank you." (recorded); that `name[N]` is taken the
/// same way, and that every field (not only `from` and `to`) is, is not confirmed: accepted.
fn plain_field_name(name: &str) -> &str {
    match name.strip_suffix(']').and_then(|n| n.rsplit_once('[')) {
        Some((base, index)) if !base.is_empty() && index.bytes().all(|b| b.is_ascii_digit()) => base,
        _ => name,
    }
}

/// The file parts of a send, `attachment` and `inline`, with names and content types.
fn file_parts(parts: &[request::Part]) -> Vec<FilePart> {
    parts
        .iter()
        .filter(|p| p.name == "attachment" || p.name == "inline")
        .map(|p| {
            let name = p.filename.clone().filter(|n| !n.is_empty()).unwrap_or_else(|| "noname".into());
            let content_type = p
                .content_type
                .clone()
                .filter(|c| !c.is_empty() && c != "application/octet-stream")
                .unwrap_or_else(|| mime_guess::from_path(&name).first_or_octet_stream().essence_str().to_owned());
            FilePart { name, content_type, data: p.data.clone(), inline: p.name == "inline" }
        })
        .collect()
}

fn handle(state: &mut State, eu: bool, call: &Call, dns_delay_ms: i64) -> Result<Value, MailgunError> {
    let segments: Vec<&str> = call.segments.iter().map(String::as_str).collect();
    let method = &call.method;
    let now = call.now_ms;
    let base = call.base_url.as_str();
    match segments.as_slice() {
        [version @ ("v3" | "v4"), "domains"] => match *method {
            Method::GET => domains::list(&state.region(eu).domains, &call.query),
            Method::POST => {
                let other = state.region(!eu);
                let taken =
                    call.form.get("name").is_some_and(|n| other.domains.contains_key(&n.trim().to_ascii_lowercase()));
                if taken {
                    let name = call.form.get("name").unwrap_or("").trim();
                    return Err(MailgunError::bad_request(format!("This domain name is already taken: {name}")));
                }
                let region = state.region(eu);
                let domain = domains::create(&region.domains, &mut region.ids, &call.form, now)?;
                region.dns.publish(&domain.name, now + dns_delay_ms);
                let mut answer = domain.with_records(eu);
                region.domains.insert(domain.name.clone(), domain);
                let message =
                    if *version == "v4" { "Domain DNS records have been created" } else { "Domain has been created" };
                if let Some(map) = answer.as_object_mut() {
                    map.insert("message".into(), json!(message));
                }
                Ok(answer)
            }
            _ => Err(not_simulated(method, &segments)),
        },
        ["v3" | "v4", "domains", name] => {
            let region = state.region(eu);
            match *method {
                Method::GET => region.managed_domain(name).map(|d| d.with_records(eu)),
                Method::DELETE => {
                    region.delete_domain(name)?;
                    Ok(json!({"message": "Domain has been deleted"}))
                }
                _ => Err(not_simulated(method, &segments)),
            }
        }
        ["v3" | "v4", "domains", name, "verify"] => {
            if *method != Method::PUT {
                return Err(not_simulated(method, &segments));
            }
            let region = state.region(eu);
            let dns = region.dns.clone();
            let domain = region.managed_domain_mut(name)?;
            domain.verify(&dns, now, eu);
            let mut answer = domain.with_records(eu);
            if let Some(map) = answer.as_object_mut() {
                map.insert("message".into(), json!("Domain DNS records have been updated"));
            }
            Ok(answer)
        }
        ["v3", "domains", name, "messages", key] => {
            if *method != Method::GET {
                return Err(not_simulated(method, &segments));
            }
            let region = state.region(eu);
            let domain = region.managed_domain(name)?;
            let message =
                region.stored_message(&domain.name, key).ok_or_else(|| MailgunError::not_found("Message not found"))?;
            Ok(if call.accept_mime { message.to_rfc2822_json() } else { message.to_json(base) })
        }
        ["v3", "domains", name, "webhooks"] => {
            let domain = state.region(eu).managed_domain_mut(name)?;
            match *method {
                Method::GET => Ok(domain.webhooks.list()),
                Method::POST => domain.webhooks.create(call.form.get("id"), &urls(&call.form)),
                _ => Err(not_simulated(method, &segments)),
            }
        }
        ["v3", "domains", name, "webhooks", hook] => {
            let domain = state.region(eu).managed_domain_mut(name)?;
            match *method {
                Method::GET => domain.webhooks.get(hook),
                Method::PUT => domain.webhooks.update(hook, &urls(&call.form)),
                Method::DELETE => domain.webhooks.delete(hook),
                _ => Err(not_simulated(method, &segments)),
            }
        }
        ["v3", "lists", ..] => {
            let rest = &call.segments[2..];
            Ok(state.region(eu).lists.handle(method, rest, &call.query, &call.form, base, now)?)
        }
        ["v3", "routes", ..] => {
            let rest = &call.segments[2..];
            Ok(state.region(eu).routes.handle(method, rest, &call.query, &call.form, now)?)
        }
        ["v4" | "v3", "address", "validate"] | ["v3", "address", "private", "validate"] => {
            let fields = match *method {
                Method::GET => &call.query,
                Method::POST => &call.form,
                _ => return Err(not_simulated(method, &segments)),
            };
            let address = fields
                .get("address")
                .or_else(|| call.query.get("address"))
                .ok_or_else(|| MailgunError::bad_request("address parameter is missing"))?;
            if address.chars().count() > 512 {
                return Err(MailgunError::bad_request("address parameter must be at most 512 characters"));
            }
            let provider_lookup = match fields.get("provider_lookup").or_else(|| call.query.get("provider_lookup")) {
                None => true,
                Some(v) => parse_bool(v)
                    .ok_or_else(|| MailgunError::bad_request(format!("Invalid provider_lookup value: {v}")))?,
            };
            let region = state.region(eu);
            let dns = &region.dns;
            Ok(validation::validate(address, provider_lookup, &|domain: &str| dns.has_mx(domain, now)))
        }
        ["v3", "stats", "total"] => {
            if *method != Method::GET {
                return Err(not_simulated(method, &segments));
            }
            stats::total(&state.region(eu).events, None, &call.query, now)
        }
        // Mailgun still answers sends on the old `/v2` paths as on `/v3` (recorded in 2022: 200
        // "Queued. Thank you."); its other `/v2` paths are not simulated.
        ["v2" | "v3", domain, "messages"] => {
            if *method != Method::POST {
                return Err(not_simulated(method, &segments));
            }
            let region = state.region(eu);
            region.domain(domain)?;
            let draft = messages::read_send(&call.form, file_parts(&call.files), now)?;
            region.send(domain, draft, now)
        }
        ["v2" | "v3", domain, "messages.mime"] => {
            if *method != Method::POST {
                return Err(not_simulated(method, &segments));
            }
            let region = state.region(eu);
            region.domain(domain)?;
            let file = call.files.iter().find(|p| p.name == "message");
            let as_text = call.form.get("message");
            let (raw, is_text) = match (file, as_text) {
                (Some(part), _) => (Some(part.data.as_slice()), false),
                (None, Some(text)) => (Some(text.as_bytes()), true),
                (None, None) => (None, false),
            };
            let draft = messages::read_mime(&call.form, raw, is_text, now)?;
            region.send(domain, draft, now)
        }
        ["v3", domain, "events"] | ["v3", domain, "events", _] => {
            if *method != Method::GET {
                return Err(not_simulated(method, &segments));
            }
            let region = state.region(eu);
            let name = region.domain(domain)?.name.clone();
            let token = segments.get(3).copied();
            region.events.page(&name, &call.query, token, &format!("{base}/v3/{name}/events"), now)
        }
        ["v3", domain, "stats", "total"] => {
            if *method != Method::GET {
                return Err(not_simulated(method, &segments));
            }
            let region = state.region(eu);
            let name = region.domain(domain)?.name.clone();
            stats::total(&region.events, Some(&name), &call.query, now)
        }
        ["v3", domain, table] if Table::parse(table).is_some() => {
            let table = Table::parse(table).ok_or_else(|| MailgunError::not_found("Not Found"))?;
            let domain = state.region(eu).domain_mut(domain)?;
            let url = format!("{base}/v3/{}/{}", domain.name, table.name());
            match *method {
                Method::GET => domain.suppressions.list(table, &call.query, &url),
                Method::POST => match &call.json {
                    Some(Value::Array(items)) => domain.suppressions.create(table, CreateBody::Json(items), now),
                    Some(_) => Err(MailgunError::bad_request("The JSON body must be an array of records")),
                    None => domain.suppressions.create(table, CreateBody::Form(&call.form), now),
                },
                Method::DELETE => Ok(domain.suppressions.clear(table)),
                _ => Err(not_simulated(method, &segments)),
            }
        }
        ["v3", domain, table, address] if Table::parse(table).is_some() => {
            let table = Table::parse(table).ok_or_else(|| MailgunError::not_found("Not Found"))?;
            let domain = state.region(eu).domain_mut(domain)?;
            match *method {
                Method::GET => domain.suppressions.get(table, address),
                Method::DELETE => domain.suppressions.delete(table, address, call.query.get("tag")),
                _ => Err(not_simulated(method, &segments)),
            }
        }
        _ => Err(not_simulated(method, &segments)),
    }
}

/// The `url` fields of a webhook form (repeated, or comma-separated).
fn urls(form: &Query) -> Vec<String> {
    form.all("url").map(str::to_owned).collect()
}

/// `POST /mailgun/incoming` on the control port.
async fn incoming(shared: &Shared, body: &[u8]) -> Response {
    let mail: Value = match serde_json::from_slice(body) {
        Ok(Value::Object(map)) => Value::Object(map),
        _ => {
            return super::errors::sandbox_error(
                StatusCode::BAD_REQUEST,
                "bad_request",
                "the body must be a JSON object: {\"region\":\"us\"|\"eu\",\"recipient\",\"from\",\"subject\",\"headers\":{..},\"body-plain\"}",
            )
        }
    };
    let eu = match mail.get("region").and_then(Value::as_str).unwrap_or("us") {
        "us" => false,
        "eu" => true,
        other => {
            return super::errors::sandbox_error(
                StatusCode::BAD_REQUEST,
                "bad_request",
                format!("region must be \"us\" or \"eu\", not {other:?}"),
            )
        }
    };
    let now = shared.engine.clock.now_ms();
    let result = {
        let mut state = shared.lock();
        let region = state.region(eu);
        region.run_due(now);
        region.incoming(&mail, now)
    };
    shared.engine.ring();
    let (mut answer, posts) = match result {
        Ok(done) => done,
        Err(e) => {
            let message = match &e {
                MailgunError::Refused(r) => r.body["message"].as_str().unwrap_or("refused").to_owned(),
                MailgunError::Forbidden => "Forbidden".to_owned(),
            };
            return super::errors::sandbox_error(StatusCode::BAD_REQUEST, "bad_request", message);
        }
    };
    let mut results = Vec::new();
    for (url, fields) in posts {
        let status = super::outbox::post_form(&shared.engine.http, &url, &fields).await;
        results.push(json!({"url": url, "status": status}));
    }
    if let Some(map) = answer.as_object_mut() {
        map.insert("posts".into(), Value::Array(results));
    }
    Json(answer).into_response()
}

/// `GET /mailgun/webhooks` on the control port: recent webhook POST attempts of both regions.
fn deliveries(shared: &Shared) -> Response {
    let state = shared.lock();
    let attempts =
        |r: &Region| r.outbox.attempts().rev().map(|a| a.to_json(|ms| dates::rfc2822(ms, "UTC"))).collect::<Vec<_>>();
    let forwards = |r: &Region| {
        r.forwards
            .iter()
            .map(|f| json!({"route": f.route, "destination": f.destination, "recipient": f.recipient, "at": dates::rfc2822(f.at_ms, "UTC")}))
            .collect::<Vec<_>>()
    };
    Json(json!({
        "us": {"attempts": attempts(&state.us), "forwards": forwards(&state.us)},
        "eu": {"attempts": attempts(&state.eu), "forwards": forwards(&state.eu)},
    }))
    .into_response()
}
