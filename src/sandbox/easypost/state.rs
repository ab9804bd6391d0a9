//! The state of the EasyPost simulator and the rules every record kind shares: ids, times, the
//! timeline of things that happen later (trackers move, batches buy, refunds settle), events and
//! the webhooks they are posted to. Addresses and parcels live here; shipments, batches and
//! trackers have files of their own (`impl State` blocks).

use std::collections::{BTreeMap, HashMap};

use hmac::{Hmac, Mac};
use serde_json::{json, Map, Value};
use sha2::Sha256;
use unicode_normalization::UnicodeNormalization;

use super::addresses::{self, Verification};
use super::errors::EpError;
use super::labels::Format;
use super::rates;
use super::store::{envelope, Evicted, Record, Store, Stored};
use crate::sandbox::clock::{rfc3339_ms, rfc3339_seconds};
use crate::sandbox::ids::Ids;
use crate::sandbox::outbox::{self, Outbox, RetryPolicy};
use crate::sandbox::request::Query;

/// Records kept per kind (addresses, parcels, shipments, batches, scan forms, trackers,
/// insurances, refunds, customs infos and items, orders, pickups); the oldest go first.
pub const CAP: usize = 50_000;
/// Events kept.
pub const EVENTS_KEPT: usize = 10_000;
/// The sandbox user's id (events name it as their `user_id`; `GET /v2/users` answers it).
pub const USER_ID: &str = "user_0sandbox0000000000000000000000";
/// Webhooks kept.
pub const WEBHOOKS_KEPT: usize = 1_000;

/// How webhook POSTs are retried (sandbox time): 30 s, 1 min, 5 min, 15 min, 1 h; a webhook whose
/// POST is given up on is disabled (`disabled_at`) until it is updated, as EasyPost disables an
/// endpoint that keeps failing.
pub const RETRY: RetryPolicy =
    RetryPolicy { schedule_ms: &[30_000, 60_000, 300_000, 900_000, 3_600_000], refused: None };

/// A webhook to post an event to: its id, URL and custom headers.
type Hook = (String, String, Vec<(String, String)>);

/// Something due later on the sandbox clock.
#[derive(Clone, Debug)]
pub enum Step {
    /// The tracker's next planned scan.
    Tracker(String),
    /// The batch's next state.
    Batch(String),
    /// A submitted refund is answered by the carrier.
    Refund(String),
    /// Standalone insurance goes from pending to purchased.
    Insurance(String),
    /// A scan form's PDF is ready.
    ScanForm(String),
}

/// A file the simulator serves under `/files/`.
#[derive(Clone, Debug)]
pub enum FileRef {
    Label { shipment: String, format: Format },
    BatchLabel { batch: String, format: Format },
    ScanForm(String),
}

/// One scan of a package, planned or made.
#[derive(Clone, Debug, PartialEq)]
pub struct Scan {
    pub at_ms: i64,
    pub status: &'static str,
    pub status_detail: &'static str,
    pub message: String,
    pub place: Place,
}

/// Where a scan happened.
#[derive(Clone, Debug, PartialEq)]
pub struct Place {
    pub city: String,
    pub state: String,
    pub zip: String,
}

pub struct State {
    pub seed: u64,
    pub ids: Ids,
    pub addresses: Store,
    pub parcels: Store,
    pub shipments: Store,
    /// Rate id → its shipment, both as the 128 bits of their hex (see [`hex_id`]); a shipment's
    /// rates go with it.
    rates: HashMap<u128, u128>,
    pub batches: Store,
    pub scan_forms: Store,
    pub trackers: Store,
    /// Scans still to come, per tracker (see `trackers.rs`).
    pub plans: HashMap<String, Vec<Scan>>,
    pub insurances: Store,
    pub refunds: Store,
    pub customs_infos: Store,
    pub customs_items: Store,
    pub orders: Store,
    pub pickups: Store,
    /// The user's carrier accounts: the three seeded ones and those added.
    pub carrier_accounts: Store,
    pub end_shippers: Store,
    /// The sandbox user (`GET /v2/users`) and its child users (none: making one is not
    /// simulated).
    pub user: Record,
    pub children: Store,
    pub webhooks: Store,
    /// Webhook secrets are write-only: kept here, never in the record.
    pub secrets: HashMap<String, String>,
    pub events: Store,
    /// `postage_label/20261126/<hex>.png` → what it is; a file goes with its record.
    pub files: HashMap<String, FileRef>,
    pending: BTreeMap<(i64, u64), Step>,
    step_seq: u64,
    pub outbox: Outbox,
    /// `http://host:port` as clients reach the simulator, for file URLs.
    pub base_url: String,
}

/// `2026-11-26T10:00:00Z`, as most EasyPost records write times.
pub fn time(ms: i64) -> String {
    rfc3339_seconds(ms)
}

/// `2026-11-26T10:00:00+00:00`, as addresses write them.
pub fn address_time(ms: i64) -> String {
    let mut text = rfc3339_seconds(ms);
    text.pop();
    text.push_str("+00:00");
    text
}

/// A string field of a record ("" when absent or not a string).
pub fn text<'a>(record: &'a Record, name: &str) -> &'a str {
    record.get(name).and_then(Value::as_str).unwrap_or("")
}

/// The 128 bits of an id made by [`State::id`] (`prefix_` and 32 hex digits).
fn hex_id(id: &str) -> Option<u128> {
    let (_, hex) = id.split_once('_')?;
    (hex.len() == 32).then(|| u128::from_str_radix(hex, 16).ok()).flatten()
}

/// The shipment tag: its tracking code once bought (lists of bought shipments and refunds by
/// tracking code read it without parsing the shipment).
fn bought_tag(shipment: &Record) -> Option<String> {
    if shipment.get("selected_rate").is_none_or(Value::is_null) {
        return None;
    }
    Some(text(shipment, "tracking_code").to_owned())
}

/// The tracker tag: its tracking code.
fn code_tag(tracker: &Record) -> Option<String> {
    Some(text(tracker, "tracking_code").to_owned())
}

/// The id a request gives for a nested record: `{"id": "adr_…"}` or the bare id string.
pub fn given_id(value: &Value) -> Option<&str> {
    match value {
        Value::String(s) => Some(s.as_str()),
        Value::Object(map) => map.get("id").and_then(Value::as_str),
        _ => None,
    }
}

impl State {
    pub fn new(seed: u64, base_url: String) -> State {
        State::capped(seed, base_url, CAP, EVENTS_KEPT, WEBHOOKS_KEPT)
    }

    /// A state keeping `cap` records of each kind, `events` events and `webhooks` webhooks (the
    /// caps are lowered in tests).
    pub fn capped(seed: u64, base_url: String, cap: usize, events: usize, webhooks: usize) -> State {
        let mut state = State {
            seed,
            ids: Ids::new(seed, 0x4550),
            addresses: Store::new(cap),
            parcels: Store::new(cap),
            shipments: Store::tagged(cap, bought_tag),
            rates: HashMap::new(),
            batches: Store::new(cap),
            scan_forms: Store::new(cap),
            trackers: Store::tagged(cap, code_tag),
            plans: HashMap::new(),
            insurances: Store::new(cap),
            refunds: Store::new(cap),
            customs_infos: Store::new(cap),
            customs_items: Store::new(cap),
            orders: Store::new(cap),
            pickups: Store::new(cap),
            carrier_accounts: Store::new(cap),
            end_shippers: Store::new(cap),
            user: Record::new(),
            children: Store::new(cap),
            webhooks: Store::new(webhooks),
            secrets: HashMap::new(),
            events: Store::new(events),
            files: HashMap::new(),
            pending: BTreeMap::new(),
            step_seq: 0,
            outbox: Outbox::new(RETRY),
            base_url,
        };
        state.seed_carrier_accounts();
        state.seed_user();
        state
    }

    /// A new id: `prefix_` and 32 hex digits.
    pub fn id(&mut self, prefix: &str) -> String {
        self.ids.prefixed(prefix, 32)
    }

    /// The fields every record starts with.
    pub fn base(&mut self, prefix: &str, object: &str, now_ms: i64) -> Record {
        let mut record = Record::new();
        record.insert("id".into(), json!(self.id(prefix)));
        record.insert("object".into(), json!(object));
        record.insert("mode".into(), json!("test"));
        record.insert("created_at".into(), json!(time(now_ms)));
        record.insert("updated_at".into(), json!(time(now_ms)));
        record
    }

    pub fn schedule(&mut self, at_ms: i64, step: Step) {
        self.step_seq += 1;
        self.pending.insert((at_ms, self.step_seq), step);
    }

    /// When the next step or webhook POST is due.
    pub fn next_due(&self) -> Option<i64> {
        let step = self.pending.keys().next().map(|k| k.0);
        match (step, self.outbox.next_due()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Makes every step due by `now_ms` happen, in time order, each at its own time.
    pub fn run_due(&mut self, now_ms: i64) {
        while let Some(entry) = self.pending.first_entry() {
            let (at, _) = *entry.key();
            if at > now_ms {
                break;
            }
            let step = entry.remove();
            match step {
                Step::Tracker(id) => self.advance_tracker(&id, at),
                Step::Batch(id) => self.advance_batch(&id, at),
                Step::Refund(id) => self.settle_refund(&id, at),
                Step::Insurance(id) => self.purchase_insurance(&id, at),
                Step::ScanForm(id) => self.finish_scan_form(&id, at),
            }
        }
    }

    /// Notes a rate of a shipment.
    pub fn add_rate(&mut self, rate_id: &str, shipment_id: &str) {
        if let (Some(rate), Some(shipment)) = (hex_id(rate_id), hex_id(shipment_id)) {
            self.rates.insert(rate, shipment);
        }
    }

    /// The shipment a rate belongs to, if the rate is known.
    pub fn rate_owner(&self, rate_id: &str) -> Option<String> {
        let owner = self.rates.get(&hex_id(rate_id)?)?;
        Some(format!("shp_{owner:032x}"))
    }

    /// Forgets what only an evicted record of `kind` pointed at: a shipment's rates and label
    /// files, a tracker's planned scans, a webhook's secret, a batch's or scan form's file.
    pub fn forget(&mut self, evicted: Vec<Evicted>) {
        for gone in evicted {
            // The id's prefix names the kind: only those that own something are read again.
            match gone.id.split_once('_').map(|(prefix, _)| prefix) {
                Some("shp") => {
                    let record = gone.record();
                    for rate in record.get("rates").and_then(Value::as_array).into_iter().flatten() {
                        if let Some(rate) = rate.get("id").and_then(Value::as_str).and_then(hex_id) {
                            self.rates.remove(&rate);
                        }
                    }
                    if let Some(Value::Object(label)) = record.get("postage_label") {
                        for field in ["label_url", "label_pdf_url", "label_zpl_url", "label_epl2_url"] {
                            self.forget_file(label.get(field));
                        }
                    }
                }
                Some("batch") => self.forget_file(gone.record().get("label_url")),
                Some("sf") => self.forget_file(gone.record().get("form_url")),
                Some("trk") => {
                    self.plans.remove(&gone.id);
                }
                Some("hook") => {
                    self.secrets.remove(&gone.id);
                }
                _ => {}
            }
        }
    }

    fn forget_file(&mut self, url: Option<&Value>) {
        if let Some((_, path)) = url.and_then(Value::as_str).and_then(|u| u.split_once("/files/")) {
            self.files.remove(path);
        }
    }

    /// Stores a record of one of the kinds in `which`, forgetting what the records its cap
    /// pushed out pointed at.
    pub fn keep(&mut self, which: fn(&mut State) -> &mut Store, id: String, created_ms: i64, record: &Record) {
        let evicted = which(self).insert(id, created_ms, record);
        self.forget(evicted);
    }

    /// A URL of a file this simulator serves.
    pub fn file_url(&mut self, kind: &str, at_ms: i64, format: Format, file: FileRef) -> String {
        let date: String = time(at_ms)[..10].chars().filter(char::is_ascii_digit).collect();
        let path = format!("{kind}/{date}/{}.{}", self.ids.hex(32), format.extension());
        self.files.insert(path.clone(), file);
        format!("{}/files/{path}", self.base_url)
    }

    // ---- addresses -------------------------------------------------------------------------

    /// Stores an address from checked fields; `verification` when it was verified (its
    /// normalized fields are stored then, when it passed).
    pub fn store_address(
        &mut self,
        fields: &Map<String, Value>,
        verification: Option<(&Verification, &[&str])>,
        now_ms: i64,
    ) -> Record {
        let mut record = Record::new();
        record.insert("id".into(), json!(self.id("adr")));
        record.insert("object".into(), json!("Address"));
        record.insert("created_at".into(), json!(address_time(now_ms)));
        record.insert("updated_at".into(), json!(address_time(now_ms)));
        let source = match verification {
            Some((v, _)) if v.delivery_ok => &v.normalized,
            _ => fields,
        };
        for name in addresses::FIELDS {
            record.insert(name.to_owned(), source.get(name).cloned().unwrap_or(Value::Null));
        }
        record.insert("mode".into(), json!("test"));
        let verifications = verification.map_or_else(|| json!({}), |(v, checks)| v.only(checks));
        record.insert("verifications".into(), verifications);
        let id = text(&record, "id").to_owned();
        self.keep(|s| &mut s.addresses, id, now_ms, &record);
        record
    }

    /// Stores an address verified through a carrier (`verify_carrier`), whatever the outcome.
    fn store_carrier_verified(&mut self, fields: &Map<String, Value>, carrier: &str, now_ms: i64) -> Record {
        let (normalized, verifications) = addresses::verify(fields).through_carrier(carrier);
        let mut record = self.store_address(&normalized, None, now_ms);
        record.insert("verifications".into(), verifications.clone());
        let id = text(&record, "id").to_owned();
        self.addresses.update(&id, |r| r.insert("verifications".into(), verifications));
        record
    }

    /// `POST /v2/addresses`: `verify` reports failures in `verifications`; `verify_strict`
    /// refuses them with 422. Both may also come inside the address object, as older SDKs send.
    /// The address may be wrapped (`{"address": {...}}`) or its fields at the top level, as the
    /// Ruby SDK sends them (EasyPost answers 201 to both).
    pub fn create_address(&mut self, body: &Value, now_ms: i64) -> Result<Record, EpError> {
        let input = body.get("address").filter(|v| v.is_object()).unwrap_or(body);
        let fields = addresses::read_fields(input, "address")?;
        let pick = |name: &str| body.get(name).or_else(|| input.get(name));
        let strict = addresses::checks(pick("verify_strict"), "verify_strict")?;
        let loose = addresses::checks(pick("verify"), "verify")?;
        let carrier = pick("verify_carrier").and_then(Value::as_str).filter(|c| !c.trim().is_empty());
        if let (Some(carrier), None) = (carrier, &strict) {
            if loose.is_some() {
                return Ok(self.store_carrier_verified(&fields, carrier, now_ms));
            }
        }
        if let Some(checks) = &strict {
            let verification = addresses::verify(&fields);
            if !verification.passed(checks) {
                return Err(verification.failure(checks));
            }
            let mut all = checks.clone();
            all.extend(loose.unwrap_or_default().into_iter().filter(|c| !checks.contains(c)));
            return Ok(self.store_address(&fields, Some((&verification, &all)), now_ms));
        }
        if let Some(checks) = &loose {
            let verification = addresses::verify(&fields);
            return Ok(self.store_address(&fields, Some((&verification, checks)), now_ms));
        }
        Ok(self.store_address(&fields, None, now_ms))
    }

    /// `POST /v2/addresses/create_and_verify`: a failure is a 422 and nothing is stored; with
    /// `verify_carrier` EasyPost answers 200 with the errors in `verifications` (as recorded).
    pub fn create_and_verify_address(&mut self, body: &Value, now_ms: i64) -> Result<Value, EpError> {
        let input = body.get("address").filter(|v| v.is_object()).unwrap_or(body);
        let fields = addresses::read_fields(input, "address")?;
        let carrier = body.get("verify_carrier").or_else(|| input.get("verify_carrier"));
        if let Some(carrier) = carrier.and_then(Value::as_str).filter(|c| !c.trim().is_empty()) {
            return Ok(json!({"address": self.store_carrier_verified(&fields, carrier, now_ms)}));
        }
        let verification = addresses::verify(&fields);
        let checks = ["delivery", "zip4"];
        if !verification.delivery_ok {
            return Err(verification.failure(&["delivery"]));
        }
        Ok(json!({"address": self.store_address(&fields, Some((&verification, &checks)), now_ms)}))
    }

    /// `GET /v2/addresses/{id}/verify`: a new, normalized address; the original stays as it was.
    pub fn verify_address(&mut self, id: &str, now_ms: i64) -> Result<Value, EpError> {
        let original = self.addresses.get(id).ok_or_else(|| EpError::not_found(format!("Address {id} not found")))?;
        let fields = addresses::read_fields(&Value::Object(original), "address")?;
        let verification = addresses::verify(&fields);
        if !verification.delivery_ok {
            return Err(verification.failure(&["delivery"]));
        }
        let checks = ["delivery", "zip4"];
        Ok(json!({"address": self.store_address(&fields, Some((&verification, &checks)), now_ms)}))
    }

    // ---- parcels ---------------------------------------------------------------------------

    pub fn create_parcel(&mut self, input: &Value, field: &str, now_ms: i64) -> Result<Record, EpError> {
        let parcel = rates::read_parcel(input, field)?;
        let mut record = self.base("prcl", "Parcel", now_ms);
        record.extend(parcel.to_json());
        let id = text(&record, "id").to_owned();
        self.keep(|s| &mut s.parcels, id, now_ms, &record);
        Ok(record)
    }

    // ---- lists -----------------------------------------------------------------------------

    /// A page of `store` as `{plural: [...], has_more}`, each record rendered by `render`.
    pub fn list(
        &self,
        which: fn(&State) -> &Store,
        plural: &str,
        query: &Query,
        keep: impl Fn(Stored<'_>) -> bool,
        render: impl Fn(&State, &Record) -> Value,
    ) -> Result<Value, EpError> {
        let store = which(self);
        let (ids, has_more) = store.page(query, keep)?;
        let records = ids.iter().filter_map(|id| store.get(id)).map(|r| render(self, &r)).collect();
        Ok(envelope(plural, records, has_more))
    }

    // ---- events and webhooks ---------------------------------------------------------------

    /// Records an event about `result` and queues its POST to every enabled webhook.
    pub fn emit(&mut self, description: &str, result: Value, previous: Value, at_ms: i64) {
        let id = self.id("evt");
        let hooks: Vec<Hook> = self
            .webhooks
            .iter()
            .map(|stored| (stored.id().to_owned(), stored.record()))
            .filter(|(_, h)| h.get("disabled_at").is_none_or(Value::is_null))
            .map(|(id, h)| {
                let headers = h["custom_headers"]
                    .as_array()
                    .map(|items| {
                        items
                            .iter()
                            .filter_map(|i| Some((i["name"].as_str()?.to_owned(), i["value"].as_str()?.to_owned())))
                            .collect()
                    })
                    .unwrap_or_default();
                let url = text(&h, "url").to_owned();
                (id, url, headers)
            })
            .collect();
        let urls: Vec<&str> = hooks.iter().map(|(_, url, _)| url.as_str()).collect();
        let event = json!({
            "id": id, "object": "Event", "mode": "test", "description": description,
            "status": if hooks.is_empty() { "completed" } else { "pending" },
            "user_id": USER_ID, "previous_attributes": previous,
            "pending_urls": urls, "completed_urls": [],
            "created_at": rfc3339_ms(at_ms), "updated_at": rfc3339_ms(at_ms),
            "result": result,
        });
        let body = event.to_string().into_bytes();
        for (hook, url, custom) in hooks {
            let mut headers = custom;
            if let Some(secret) = self.secrets.get(&hook) {
                headers.push(("X-Hmac-Signature".into(), signature(secret, &body)));
            }
            headers.push(("X-Easypost-Webhook-Id".into(), hook));
            self.outbox.queue(url, headers, body.clone(), description.to_owned(), at_ms);
        }
        if let Value::Object(record) = event {
            self.keep(|s| &mut s.events, id, at_ms, &record);
        }
    }

    /// Files a POST's answer; a webhook whose POST was given up on is disabled.
    pub fn webhook_answered(&mut self, hook: &str, delivery: outbox::Delivery, status: u16, at_ms: i64) {
        if self.outbox.answered(delivery, status, at_ms) == "failed" {
            self.webhooks.update(hook, |record| record.insert("disabled_at".into(), json!(time(at_ms))));
        }
    }

    fn webhook_fields(&mut self, input: &Value, record: &mut Record, creating: bool) -> Result<(), EpError> {
        let object = input.as_object().ok_or_else(|| EpError::invalid("webhook", "must be an object"))?;
        match object.get("url") {
            Some(Value::String(url)) if !url.trim().is_empty() => {
                // Any URL is taken, as EasyPost takes it (201); the outbox never sends off
                // loopback: such a POST is logged `not sent`, with why, in the webhook log.
                record.insert("url".into(), json!(url.trim()));
            }
            None | Some(Value::Null) if !creating => {}
            _ => return Err(EpError::required("url")),
        }
        match object.get("custom_headers") {
            None | Some(Value::Null) => {
                if creating {
                    record.insert("custom_headers".into(), json!([]));
                }
            }
            Some(Value::Array(items)) => {
                let mut headers = Vec::new();
                for item in items {
                    let name = item.get("name").and_then(Value::as_str).unwrap_or("");
                    let value = item.get("value").and_then(Value::as_str);
                    let valid_name =
                        !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_".contains(&b));
                    let Some(value) = value.filter(|v| valid_name && !v.chars().any(char::is_control)) else {
                        return Err(EpError::invalid(
                            "custom_headers",
                            "each header must be {\"name\": a header name, \"value\": text without control characters}",
                        ));
                    };
                    headers.push(json!({"name": name, "value": value}));
                }
                record.insert("custom_headers".into(), Value::Array(headers));
            }
            Some(_) => return Err(EpError::invalid("custom_headers", "must be a list of {name, value}")),
        }
        Ok(())
    }

    pub fn create_webhook(&mut self, body: &Value, now_ms: i64) -> Result<Record, EpError> {
        let input = body.get("webhook").ok_or_else(|| EpError::required("webhook"))?;
        let mut record = self.base("hook", "Webhook", now_ms);
        record.remove("updated_at");
        self.webhook_fields(input, &mut record, true)?;
        record.insert("disabled_at".into(), Value::Null);
        let id = text(&record, "id").to_owned();
        match input.get("webhook_secret") {
            Some(Value::String(secret)) if !secret.is_empty() => {
                self.secrets.insert(id.clone(), secret.clone());
            }
            None | Some(Value::Null) => {}
            Some(Value::String(_)) => {}
            Some(_) => return Err(EpError::invalid("webhook_secret", "must be a string")),
        }
        self.keep(|s| &mut s.webhooks, id, now_ms, &record);
        Ok(record)
    }

    /// `PATCH /v2/webhooks/{id}`: URL, secret or headers; re-enables a disabled webhook.
    pub fn update_webhook(&mut self, id: &str, body: &Value) -> Result<Record, EpError> {
        let input = body.get("webhook").filter(|w| w.is_object()).unwrap_or(body);
        let mut record = self.webhooks.get(id).ok_or_else(|| EpError::not_found(format!("Webhook {id} not found")))?;
        self.webhook_fields(input, &mut record, false)?;
        match input.get("webhook_secret") {
            Some(Value::String(secret)) if secret.is_empty() => {
                self.secrets.remove(id);
            }
            Some(Value::String(secret)) => {
                self.secrets.insert(id.to_owned(), secret.clone());
            }
            None | Some(Value::Null) => {}
            Some(_) => return Err(EpError::invalid("webhook_secret", "must be a string")),
        }
        record.insert("disabled_at".into(), Value::Null);
        self.webhooks.update(id, |slot| slot.clone_from(&record));
        Ok(record)
    }

    pub fn delete_webhook(&mut self, id: &str) -> Result<Value, EpError> {
        self.webhooks.remove(id).ok_or_else(|| EpError::not_found(format!("Webhook {id} not found")))?;
        self.secrets.remove(id);
        Ok(json!({}))
    }

    /// An event as `GET /v2/events/{id}` answers it: without its `result` (that is what webhooks
    /// carry).
    pub fn event_summary(record: &Record) -> Value {
        let mut event = record.clone();
        event.remove("result");
        Value::Object(event)
    }

    /// An event as `GET /v2/events` lists it: its id, kind, status and time only (recorded: no
    /// `pending_urls`, `completed_urls`, `previous_attributes` nor `updated_at` in a list).
    pub fn event_listed(record: &Record) -> Value {
        let mut event = record.clone();
        for key in ["result", "pending_urls", "completed_urls", "previous_attributes", "updated_at"] {
            event.remove(key);
        }
        Value::Object(event)
    }
}

/// `hmac-sha256-hex=<hex>` of the body with the NFKD form of the secret, as EasyPost signs.
pub fn signature(secret: &str, body: &[u8]) -> String {
    let key: String = secret.nfkd().collect();
    let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(key.as_bytes()) else {
        // HMAC takes keys of any length; this arm cannot run.
        return String::new();
    };
    mac.update(body);
    let hex: String = mac.finalize().into_bytes().iter().map(|b| format!("{b:02x}")).collect();
    format!("hmac-sha256-hex={hex}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signature_matches_the_documented_vector() {
        assert_eq!(
            signature("s3cret", br#"{"description":"tracker.updated","id":"evt_1","object":"Event"}"#),
            "hmac-sha256-hex=c3dd5bcf29789e2d4da15eef1a44530ed1887b39ef0b543882b60f227ba9207f"
        );
        // NFKD: a composed and a decomposed secret sign alike.
        assert_eq!(signature("caf\u{e9}", b"x"), signature("cafe\u{301}", b"x"));
    }

    #[test]
    fn address_times_use_an_offset() {
        assert_eq!(address_time(0), "1970-01-01T00:00:00+00:00");
        assert_eq!(time(0), "1970-01-01T00:00:00Z");
    }
}
