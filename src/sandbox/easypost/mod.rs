//! The EasyPost simulator (wire facts: `shared/api/easypost.md`): every operation of the catalog
//! and the related paths the SDKs use (shipment refund and insure, events, scan forms, tracker
//! delete, carrier accounts, end shippers, the sandbox user), over seeded, resettable state that
//! moves on the sandbox clock.
//!
//! Layout: `state` (the records, ids, the timeline, events and webhooks; addresses and parcels),
//! `addresses` (fields and US verification against the ZIP table), `rates` (parcels, carriers,
//! prices), `shipments` (rating, buying, labels, refunds, insurance), `batches` (the batch
//! state machine and scan forms, standalone ones too), `trackers` (planned scans), `customs`
//! (customs infos and items), `carrier_accounts` (the user's accounts), `end_shippers`,
//! `users` (the sandbox user), `orders` (orders, pickups), `labels` (PNG, PDF, ZPL, EPL2
//! files), `store` (newest-first paging), `seed`, `errors`. A path it does not serve is
//! EasyPost's 404, saying it is not simulated. This file reads each request once
//! (auth, query, JSON body), routes it, serves label files, and is the background timeline.

mod addresses;
mod batches;
mod carrier_accounts;
mod customs;
mod end_shippers;
mod errors;
mod labels;
mod orders;
mod rates;
mod seed;
mod shipments;
mod state;
mod store;
mod trackers;
mod users;

#[cfg(test)]
mod tests;

use std::sync::{Arc, Mutex, PoisonError};

use axum::body::to_bytes;
use axum::extract::Request;
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde_json::{json, Value};

pub use self::errors::EpError;
use self::labels::Format;
pub use self::state::signature as sign_webhook;
use self::state::{FileRef, State};
use super::outbox::Delivery;
use super::request::{self, Body, Credentials, Query};
use super::timeline::{self, Due, Engine, Timeline};
use super::{credentials, Platform, Simulator, DEFAULT_PORT_BASE};
use crate::catalog::Service;

/// Bodies larger than this are refused with 413.
const MAX_BODY: usize = 5 * 1024 * 1024;

/// The EasyPost simulator.
pub struct EasypostSimulator {
    shared: Arc<Shared>,
}

struct Shared {
    seed: u64,
    /// Seeded times are relative to this moment, so a reset gives back what start-up showed.
    anchor_ms: i64,
    /// Seeded on first use: verifying the demo addresses loads the ZIP table, which a sandbox
    /// that is never asked about EasyPost should not pay for.
    state: Mutex<Option<State>>,
    /// The clock, the background task's bell, its POST client and its stop token.
    engine: Engine,
}

fn default_base() -> String {
    format!("http://127.0.0.1:{}", DEFAULT_PORT_BASE + super::port_offset(Service::Easypost, None))
}

impl Shared {
    /// Runs `f` on the state, seeded if this is its first use, with every due step made to
    /// happen. `base_url` is how the caller reached the simulator (`http://host:port`): the
    /// URLs of label files are made from it, the seeded ones included.
    fn with<T>(&self, base_url: Option<String>, f: impl FnOnce(&mut State) -> T) -> T {
        let mut guard = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let state = guard.get_or_insert_with(|| {
            seed::seeded(self.seed, self.anchor_ms, base_url.clone().unwrap_or_else(default_base))
        });
        if let Some(base_url) = base_url {
            state.base_url = base_url;
        }
        state.run_due(self.engine.clock.now_ms());
        f(state)
    }
}

impl EasypostSimulator {
    pub fn new(platform: &Platform) -> EasypostSimulator {
        let shared = Arc::new(Shared {
            seed: platform.seed,
            anchor_ms: platform.clock.now_ms(),
            state: Mutex::new(None),
            engine: Engine::new(platform),
        });
        timeline::spawn(&shared);
        EasypostSimulator { shared }
    }
}

impl Drop for EasypostSimulator {
    fn drop(&mut self) {
        self.shared.engine.stop.cancel();
    }
}

impl Timeline for Shared {
    /// The webhook a POST is for.
    type Origin = String;

    fn engine(&self) -> &Engine {
        &self.engine
    }

    fn due(&self, now_ms: i64) -> Due<String> {
        let mut guard = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        // Not seeded yet: nothing can be due.
        let Some(state) = guard.as_mut() else { return Due { posts: Vec::new(), next_ms: None } };
        state.run_due(now_ms);
        let posts = state.outbox.due(now_ms).into_iter().map(|d| (webhook_of(&d), d)).collect();
        Due { posts, next_ms: state.next_due() }
    }

    fn answered(&self, answers: Vec<(String, Delivery, u16)>, at_ms: i64) {
        let mut guard = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(state) = guard.as_mut() {
            for (hook, delivery, status) in answers {
                state.webhook_answered(&hook, delivery, status, at_ms);
            }
        }
    }
}

/// The webhook id a delivery carries in its `X-Easypost-Webhook-Id` header.
fn webhook_of(delivery: &Delivery) -> String {
    delivery.headers.iter().find(|(k, _)| k == "X-Easypost-Webhook-Id").map(|(_, v)| v.clone()).unwrap_or_default()
}

impl Simulator for EasypostSimulator {
    fn service(&self) -> Service {
        Service::Easypost
    }

    fn router(&self) -> Router {
        let shared = Arc::clone(&self.shared);
        Router::new().fallback(move |request: Request| {
            let shared = Arc::clone(&shared);
            async move { entry(&shared, request).await }
        })
    }

    fn control_router(&self) -> Option<Router> {
        let shared = Arc::clone(&self.shared);
        Some(Router::new().route(
            "/webhooks",
            get(move || {
                let shared = Arc::clone(&shared);
                async move { attempts(&shared) }
            }),
        ))
    }

    fn reset(&self) {
        // Seeded again by the next request, with the URL it comes in on.
        *self.shared.state.lock().unwrap_or_else(PoisonError::into_inner) = None;
    }

    fn error_response(&self, status: StatusCode, message: &str) -> Response {
        super::errors::render_status::<EpError>(status, message)
    }
}

/// `GET /easypost/webhooks` on the control port: recent webhook POST attempts, newest first.
fn attempts(shared: &Shared) -> Response {
    let guard = shared.state.lock().unwrap_or_else(PoisonError::into_inner);
    let list: Vec<Value> = guard
        .as_ref()
        .map(|state| state.outbox.attempts().rev().map(|a| a.to_json(state::time)).collect())
        .unwrap_or_default();
    Json(json!({"attempts": list})).into_response()
}

/// The answer to a key EasyPost does not take: 403 `APIKEY.INACTIVE`, as recorded three times
/// (easypost-go and easypost-ruby cassettes made with a key no longer active).
fn inactive_key() -> EpError {
    EpError::new(
        403,
        "APIKEY.INACTIVE",
        "This api key is no longer active. Please use a different api key or reactivate this key.",
    )
}

/// The sandbox key, as Basic `key:` (the Node SDK, curl) or Bearer (the Python SDK). No key at
/// all is a 401 `APIKEY.REQUIRED` (uncertain: no recording shows EasyPost's answer to that).
fn authorize(headers: &HeaderMap) -> Result<(), EpError> {
    let key = match request::credentials(headers) {
        Ok(Some(Credentials::Basic { user, .. })) => user,
        Ok(Some(Credentials::Bearer(token))) => token,
        Ok(None) => return Err(EpError::new(
            401,
            "APIKEY.REQUIRED",
            "This resource requires an API key. Send it as HTTP Basic auth (key as the username) or a Bearer token.",
        )),
        Ok(Some(Credentials::Token(_))) | Err(_) => return Err(inactive_key()),
    };
    if key == credentials::EASYPOST_KEY {
        Ok(())
    } else {
        Err(inactive_key())
    }
}

async fn entry(shared: &Shared, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let segments: Vec<String> = match parts
        .uri
        .path()
        .split('/')
        .filter(|s| !s.is_empty())
        .map(|s| request::decode_component(s, false))
        .collect::<Result<_, _>>()
    {
        Ok(s) => s,
        Err(_) => {
            return EpError::new(400, "BAD_REQUEST", "The path is not UTF-8 once percent-decoded.").into_response()
        }
    };
    let host = parts
        .headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .filter(|h| !h.is_empty() && !h.contains(['/', ' ']));
    let base_url = host.map_or_else(default_base, |h| format!("http://{h}"));
    // Label and form files are public, as EasyPost's (on its file host) are.
    if segments.first().map(String::as_str) == Some("files") {
        return serve_file(shared, &segments[1..].join("/"), &parts.method);
    }
    if let Err(e) = authorize(&parts.headers) {
        return e.into_response();
    }
    // A path outside the v2 API (a `/v1/tokens` card token, a `/beta/...` call) is not simulated
    // whatever its body: the same 404 as any unserved path, before the body is read (a form body
    // there must not turn it into a 415).
    if segments.first().map(String::as_str) != Some("v2") {
        return EpError::not_simulated(parts.method.as_str(), &format!("/{}", segments.join("/"))).into_response();
    }
    let query = match Query::parse(parts.uri.query().unwrap_or("")) {
        Ok(q) => q,
        Err(e) => return EpError::new(400, "BAD_REQUEST", e.to_string()).into_response(),
    };
    let Ok(bytes) = to_bytes(body, MAX_BODY).await else {
        return EpError::new(413, "REQUEST.TOO_LARGE", "The request body is too large.").into_response();
    };
    let body = match request::read_body(&parts.headers, &bytes, MAX_BODY) {
        // easypost-go sends `null` as the body of an action with no fields, easypost-php `[]` (PHP's
        // empty array); EasyPost answers 200 to both.
        Ok(Body::Empty | Body::Json(Value::Null)) => json!({}),
        Ok(Body::Json(Value::Array(items))) if items.is_empty() => json!({}),
        Ok(Body::Json(value @ Value::Object(_))) => value,
        Ok(Body::Json(_)) => {
            return EpError::new(400, "BAD_REQUEST", "The JSON body must be an object.").into_response()
        }
        Ok(Body::Form(_) | Body::Multipart(_)) => {
            return EpError::new(415, "BAD_REQUEST", "Send the request body as JSON (Content-Type: application/json).")
                .into_response()
        }
        Err(e) => return EpError::new(e.status(), "BAD_REQUEST", e.to_string()).into_response(),
    };
    let now = shared.engine.clock.now_ms();
    let result = shared.with(Some(base_url), |state| {
        let segments: Vec<&str> = segments.iter().map(String::as_str).collect();
        route(state, &parts.method, &segments, &query, &body, now)
    });
    // Whatever the request queued (a tracker's scans, a webhook POST), the timeline looks.
    shared.engine.ring();
    match result {
        Ok((status, value)) => {
            let mut response = (status, Json(&value)).into_response();
            if status == StatusCode::CREATED {
                if let Some(location) = value["id"].as_str().and_then(|id| location(&segments, id)) {
                    response.headers_mut().insert(header::LOCATION, location);
                }
            }
            response
        }
        Err(e) => e.into_response(),
    }
}

/// `Location: /api/v2/<plural>/<id>` on a create, as EasyPost sends it.
fn location(segments: &[String], id: &str) -> Option<HeaderValue> {
    let plural = segments.get(1)?;
    HeaderValue::from_str(&format!("/api/v2/{plural}/{id}")).ok()
}

type Answer = Result<(StatusCode, Value), EpError>;

fn ok(value: Value) -> Answer {
    Ok((StatusCode::OK, value))
}

fn created(value: Value) -> Answer {
    Ok((StatusCode::CREATED, value))
}

fn found(record: Option<store::Record>, what: &str, id: &str) -> Answer {
    record
        .map(|r| (StatusCode::OK, Value::Object(r)))
        .ok_or_else(|| EpError::not_found(format!("{what} {id} not found")))
}

fn route(state: &mut State, method: &Method, segments: &[&str], query: &Query, body: &Value, now: i64) -> Answer {
    let Some((&"v2", rest)) = segments.split_first() else {
        return Err(EpError::not_simulated(method.as_str(), &format!("/{}", segments.join("/"))));
    };
    match (rest, method.as_str()) {
        (["addresses"], "GET") => {
            ok(state.list(|s| &s.addresses, "addresses", query, |_| true, |_, r| Value::Object(r.clone()))?)
        }
        (["addresses"], "POST") => created(Value::Object(state.create_address(body, now)?)),
        (["addresses", "create_and_verify"], "POST") => ok(state.create_and_verify_address(body, now)?),
        (["addresses", id], "GET") => found(state.addresses.get(id), "Address", id),
        (["addresses", id, "verify"], "GET") => ok(state.verify_address(id, now)?),
        (["parcels"], "POST") => {
            let input = body.get("parcel").ok_or_else(|| EpError::required("parcel"))?;
            created(Value::Object(state.create_parcel(input, "parcel", now)?))
        }
        (["parcels", id], "GET") => found(state.parcels.get(id), "Parcel", id),
        (["shipments"], "GET") => ok(state.list_shipments(query)?),
        (["shipments"], "POST") => created(state.create_shipment(body, now)?),
        (["shipments", id], "GET") => ok(state.shipment_json(id)?),
        (["shipments", id, "buy"], "POST") => ok(state.buy_shipment(id, body, now)?),
        (["shipments", id, "label"], "GET") => ok(state.convert_label(id, query, now)?),
        (["shipments", id, "refund"], "POST") => ok(state.refund_shipment(id, now)?),
        (["shipments", id, "insure"], "POST") => ok(state.insure_shipment(id, body, now)?),
        (["shipments", id, "rates"], "GET") => {
            let shipment = state.shipment_json(id)?;
            ok(json!({"id": id, "object": "Shipment", "rates": shipment["rates"]}))
        }
        (["shipments", id, "smartrate"], "GET") => ok(state.smartrates(id)?),
        (["rates", id], "GET") => ok(state.rate_json(id)?),
        (["customs_infos"], "POST") => created(Value::Object(state.create_customs_info(body, now)?)),
        (["customs_infos", id], "GET") => found(state.customs_infos.get(id), "CustomsInfo", id),
        (["customs_items"], "POST") => created(Value::Object(state.create_customs_item(body, now)?)),
        (["customs_items", id], "GET") => found(state.customs_items.get(id), "CustomsItem", id),
        (["carrier_accounts"], "GET") => ok(state.list_carrier_accounts()),
        (["carrier_accounts"], "POST") => created(state.create_carrier_account(body, false, now)?),
        (["carrier_accounts", "register_oauth"], "POST") => created(state.create_carrier_account(body, true, now)?),
        (["carrier_accounts", id], "GET") => ok(state.carrier_account_json(id)?),
        (["carrier_accounts", id], "PATCH" | "PUT") => ok(state.update_carrier_account(id, body, now)?),
        (["carrier_accounts", id], "DELETE") => ok(state.delete_carrier_account(id)?),
        (["end_shippers"], "GET") => ok(state.list_end_shippers(query)?),
        (["end_shippers"], "POST") => created(state.create_end_shipper(body, now)?),
        (["end_shippers", id], "GET") => ok(state.end_shipper_json(id)?),
        (["end_shippers", id], "PUT") => ok(state.update_end_shipper(id, body, now)?),
        (["orders"], "POST") => created(state.create_order(body, now)?),
        (["orders", id], "GET") => ok(state.order_json(id)?),
        (["orders", id, "rates"], "GET") => ok(state.order_json(id)?),
        (["orders", id, "buy"], "POST") => ok(state.buy_order(id, body, now)?),
        (["pickups"], "GET") => ok(state.list_pickups(query)?),
        (["pickups"], "POST") => ok(state.create_pickup(body, now)?),
        (["pickups", id], "GET") => ok(state.pickup_json(id)?),
        (["pickups", id, "buy"], "POST") => ok(state.buy_pickup(id, body, now)?),
        (["pickups", id, "cancel"], "POST") => ok(state.cancel_pickup(id, now)?),
        (["batches"], "GET") => ok(state.list_batches(query)?),
        (["batches"], "POST") => ok(state.create_batch(body, now)?),
        (["batches", id], "GET") => ok(state.batch_json(id)?),
        (["batches", id, "add_shipments"], "POST") => ok(state.add_to_batch(id, body, now)?),
        (["batches", id, "remove_shipments"], "POST") => ok(state.remove_from_batch(id, body, now)?),
        (["batches", id, "buy"], "POST") => ok(state.buy_batch(id, now)?),
        (["batches", id, "label"], "POST") => ok(state.label_batch(id, body, now)?),
        (["batches", id, "scan_form"], "POST") => ok(state.scan_form_batch(id, now)?),
        (["scan_forms"], "GET") => {
            ok(state.list(|s| &s.scan_forms, "scan_forms", query, |_| true, |_, r| Value::Object(r.clone()))?)
        }
        (["scan_forms"], "POST") => ok(state.create_scan_form(body, now)?),
        (["scan_forms", id], "GET") => found(state.scan_forms.get(id), "ScanForm", id),
        (["trackers"], "GET") => ok(state.list_trackers(query)?),
        (["trackers"], "POST") => match state.create_tracker(body, now)? {
            (tracker, true) => created(Value::Object(tracker)),
            (tracker, false) => ok(Value::Object(tracker)),
        },
        (["trackers", id], "GET") => found(state.trackers.get(id), "Tracker", id),
        (["trackers", id], "DELETE") => {
            state.trackers.remove(id).ok_or_else(|| EpError::not_found(format!("Tracker {id} not found")))?;
            state.halt_tracker(id);
            ok(json!({"success": true}))
        }
        (["insurances"], "GET") => ok(state.list(
            |s| &s.insurances,
            "insurances",
            query,
            |_| true,
            |s, r| Value::Object(s.render_insurance(r)),
        )?),
        (["insurances"], "POST") => created(Value::Object(state.create_insurance(body, now)?)),
        (["insurances", id], "GET") => {
            let record = state.insurances.get(id).map(|r| state.render_insurance(&r));
            found(record, "Insurance", id)
        }
        (["insurances", id, "refund"], "POST") => ok(Value::Object(state.refund_insurance(id, now)?)),
        (["refunds"], "GET") => {
            ok(state.list(|s| &s.refunds, "refunds", query, |_| true, |_, r| Value::Object(r.clone()))?)
        }
        (["refunds"], "POST") => created(state.create_refunds(body, now)?),
        (["refunds", id], "GET") => found(state.refunds.get(id), "Refund", id),
        (["users"], "GET") => ok(state.user_json(None)?),
        (["users", "children"], "GET") => ok(state.list_children(query)?),
        (["users", id], "GET") => ok(state.user_json(Some(id))?),
        (["users", id], "PUT" | "PATCH") => ok(state.update_user(id, body)?),
        (["webhooks"], "GET") => {
            let list = state.list(|s| &s.webhooks, "webhooks", query, |_| true, |_, r| Value::Object(r.clone()))?;
            // EasyPost lists webhooks without `has_more`.
            ok(json!({"webhooks": list["webhooks"]}))
        }
        (["webhooks"], "POST") => created(Value::Object(state.create_webhook(body, now)?)),
        (["webhooks", id], "GET") => found(state.webhooks.get(id), "Webhook", id),
        (["webhooks", id], "PATCH" | "PUT") => {
            // Recorded updates (easypost-go, easypost-ruby) are answered 201, not 200.
            created(Value::Object(state.update_webhook(id, body)?))
        }
        (["webhooks", id], "DELETE") => ok(state.delete_webhook(id)?),
        (["events"], "GET") => {
            ok(state.list(|s| &s.events, "events", query, |_| true, |_, r| State::event_listed(r))?)
        }
        (["events", id], "GET") => {
            let event = state
                .events
                .get(id)
                .map(|e| State::event_summary(&e))
                .ok_or_else(|| EpError::not_found(format!("Event {id} not found")))?;
            ok(event)
        }
        _ => Err(EpError::not_simulated(method.as_str(), &format!("/v2/{}", rest.join("/")))),
    }
}

/// `GET /files/<kind>/<date>/<name>.<ext>`: a label, batch label or scan form, drawn now.
fn serve_file(shared: &Shared, path: &str, method: &Method) -> Response {
    if *method != Method::GET && *method != Method::HEAD {
        return EpError::method_not_allowed().into_response();
    }
    let file = shared.with(None, |state| {
        let reference = state.files.get(path).cloned()?;
        Some(match reference {
            FileRef::Label { shipment, format } => (format, labels::render(&state.label_of(&shipment)?, format)),
            FileRef::BatchLabel { batch, format } => (format, labels::render_many(&state.batch_labels(&batch), format)),
            FileRef::ScanForm(id) => {
                let form = state.scan_forms.get(&id)?;
                let codes: Vec<String> =
                    form["tracking_codes"].as_array()?.iter().filter_map(Value::as_str).map(str::to_owned).collect();
                let address = &form["address"];
                let from: Vec<String> = ["name", "street1", "city", "state", "zip"]
                    .iter()
                    .filter_map(|k| address[*k].as_str())
                    .filter(|s| !s.is_empty())
                    .map(str::to_owned)
                    .collect();
                let date = form["created_at"].as_str().unwrap_or("").chars().take(10).collect::<String>();
                (Format::Pdf, labels::scan_form_pdf(&id, &from, &codes, &date))
            }
        })
    });
    match file {
        Some((format, bytes)) => ([(header::CONTENT_TYPE, format.mime())], bytes).into_response(),
        None => (StatusCode::NOT_FOUND, "no such file").into_response(),
    }
}
