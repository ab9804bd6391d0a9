//! Batches: shipments bought, labelled and scanned together, moving through EasyPost's states on
//! the sandbox clock — creating → created (or creation_failed), purchasing → purchased (or
//! purchase_failed), label_generating → label_generated — with each shipment's own outcome
//! (`batch_status`, `batch_message`). Scan forms cover purchased shipments that share one
//! from-address.
//!
//! EasyPost does not make a caller wait for a state (recorded by its SDKs' own tests): a batch
//! still `creating` is bought (200, answered `created` with its shipments
//! `queued_for_purchase`), and one still buying is labelled or given a scan form (200, its
//! shipments answered `postage_purchased`). The simulator does the same by finishing the work
//! still due on a batch (creating it, buying what is queued) before it acts on it. A shipment
//! already bought joins a batch as `postage_purchased`, and a batch whose shipments are all bought
//! becomes `purchased` (recorded: a batch given two bought shipments reads `purchased` next).

use serde_json::{json, Map, Value};

use super::errors::EpError;
use super::labels::Format;
use super::state::{given_id, text, time, FileRef, State, Step};
use super::store::Record;
use crate::sandbox::request::Query;

/// A batch's next state this long after the last (sandbox time).
const STEP_MS: i64 = 1_500;
/// Time to buy one shipment of a batch.
const BUY_EACH_MS: i64 = 300;

/// Bounds the steps a batch is moved through at once (a few per shipment).
const SETTLE_STEPS_PER_SHIPMENT: usize = 2;

impl State {
    /// A batch as the API returns it: shipment summaries and status counts from its shipments.
    pub fn render_batch(&self, batch: &Record) -> Value {
        let mut out = batch.clone();
        let ids: Vec<String> = members(batch);
        // While it is creating, EasyPost lists none of its shipments yet (`shipments: []`, every
        // count 0, `num_shipments` already counting them), as recorded.
        let listed: &[String] = if text(batch, "state") == "creating" { &[] } else { &ids };
        let mut counts = json!({"created": 0, "queued_for_purchase": 0, "creation_failed": 0, "postage_purchased": 0, "postage_purchase_failed": 0});
        let mut summaries = Vec::new();
        for id in listed {
            let (status, summary) = match self.shipments.get(id) {
                Some(s) => {
                    let status = s["batch_status"].as_str().unwrap_or("created").to_owned();
                    // No `object` key in a batch's shipment summaries, as recorded.
                    let summary = json!({"id": id, "reference": s["reference"],
                        "tracking_code": s["tracking_code"], "batch_status": status, "batch_message": s["batch_message"]});
                    (status, summary)
                }
                None => {
                    let message = "Shipment not found";
                    let summary = json!({"id": id, "reference": null, "tracking_code": null,
                        "batch_status": "creation_failed", "batch_message": message});
                    ("creation_failed".to_owned(), summary)
                }
            };
            if let Some(n) = counts.get_mut(&status) {
                *n = json!(n.as_u64().unwrap_or(0) + 1);
            }
            summaries.push(summary);
        }
        out.insert("num_shipments".into(), json!(ids.len()));
        out.insert("shipments".into(), Value::Array(summaries));
        out.insert("status".into(), counts);
        for hidden in ["members", "chosen_rates", "label_format", "due_ms"] {
            out.remove(hidden);
        }
        if let Some(form) = out.get("scan_form").and_then(|f| f["id"].as_str()).and_then(|id| self.scan_forms.get(id)) {
            out.insert("scan_form".into(), Value::Object(form));
        }
        Value::Object(out)
    }

    pub fn batch_json(&self, id: &str) -> Result<Value, EpError> {
        self.batches
            .get(id)
            .map(|b| self.render_batch(&b))
            .ok_or_else(|| EpError::not_found(format!("Batch {id} not found")))
    }

    pub fn list_batches(&self, query: &Query) -> Result<Value, EpError> {
        self.list(|s| &s.batches, "batches", query, |_| true, State::render_batch)
    }

    /// Shipment ids of a request's `shipments` list: `{"id": …}` items, or (on create) full
    /// shipments, created first; with the rates that created shipments' `carrier` and `service`
    /// chose, which the batch buys (EasyPost buys them with the batch, not on creation).
    fn shipment_ids(
        &mut self,
        items: &Value,
        field: &str,
        create: bool,
        now_ms: i64,
    ) -> Result<(Vec<String>, Map<String, Value>), EpError> {
        let Some(items) = items.as_array() else {
            return Err(EpError::invalid(field, "must be a list of shipments, e.g. [{\"id\": \"shp_...\"}]"));
        };
        let mut ids = Vec::new();
        let mut chosen = Map::new();
        for item in items {
            match given_id(item) {
                Some(id) => ids.push(id.to_owned()),
                None if create && item.is_object() => {
                    let (id, rate) = self.new_shipment(&json!({"shipment": item}), now_ms)?;
                    if let Some(rate) = rate {
                        chosen.insert(id.clone(), json!(rate));
                    }
                    ids.push(id);
                }
                None => return Err(EpError::invalid(field, "each shipment must be {\"id\": \"shp_...\"}")),
            }
        }
        let mut seen = std::collections::HashSet::new();
        if let Some(twice) = ids.iter().find(|id| !seen.insert(id.as_str())) {
            return Err(EpError::invalid(field, format!("{twice} is listed twice")));
        }
        Ok((ids, chosen))
    }

    /// `POST /v2/batches`: `creating` while its shipments are checked, `created` when empty.
    pub fn create_batch(&mut self, body: &Value, now_ms: i64) -> Result<Value, EpError> {
        // No `batch` at all is an empty batch (easypost-php's `[]` body was answered 200).
        let empty = json!({});
        let input = body.get("batch").unwrap_or(&empty);
        if !input.is_object() {
            return Err(EpError::invalid("batch", "must be an object"));
        }
        let (ids, chosen) = match input.get("shipments") {
            None | Some(Value::Null) => (Vec::new(), Map::new()),
            Some(items) => self.shipment_ids(items, "batch.shipments", true, now_ms)?,
        };
        let mut batch = self.base("batch", "Batch", now_ms);
        let id = text(&batch, "id").to_owned();
        let state = if ids.is_empty() { "created" } else { "creating" };
        for (k, v) in [
            ("state", json!(state)),
            ("reference", input.get("reference").cloned().unwrap_or(Value::Null)),
            ("scan_form", Value::Null),
            ("pickup", Value::Null),
            ("label_url", Value::Null),
            ("members", json!(ids)),
            ("chosen_rates", Value::Object(chosen)),
        ] {
            batch.insert(k.to_owned(), v);
        }
        self.keep(|s| &mut s.batches, id.clone(), now_ms, &batch);
        if !ids.is_empty() {
            self.schedule_batch(&id, now_ms + STEP_MS);
        }
        let rendered = self.batch_json(&id)?;
        self.emit("batch.created", rendered.clone(), json!({}), now_ms);
        Ok(rendered)
    }

    /// Plans the batch's next step at `at_ms`; a step planned before it is dropped when due (the
    /// work may have been done meanwhile, see [`State::settle_batch`]).
    fn schedule_batch(&mut self, id: &str, at_ms: i64) {
        self.batches.update(id, |batch| batch.insert("due_ms".into(), json!(at_ms)));
        self.schedule(at_ms, Step::Batch(id.to_owned()));
    }

    fn set_state(&mut self, id: &str, state: &str, at_ms: i64) {
        let previous = self.batches.update(id, |batch| {
            let previous = text(batch, "state").to_owned();
            batch.insert("state".into(), json!(state));
            batch.insert("updated_at".into(), json!(time(at_ms)));
            previous
        });
        let Some(previous) = previous else { return };
        if previous != state {
            let rendered = self.batch_json(id).unwrap_or_default();
            self.emit("batch.updated", rendered, json!({"state": previous}), at_ms);
        }
    }

    /// The batch's next step on the timeline, if it is the one planned last.
    pub fn advance_batch(&mut self, id: &str, at_ms: i64) {
        let Some(batch) = self.batches.get(id) else { return };
        if batch.get("due_ms").and_then(Value::as_i64) != Some(at_ms) {
            return;
        }
        if let Some(next_ms) = self.step_batch(id, at_ms) {
            self.schedule_batch(id, next_ms);
        }
    }

    /// Does the batch's next piece of work at `at_ms`; when another follows, when it is due.
    fn step_batch(&mut self, id: &str, at_ms: i64) -> Option<i64> {
        let batch = self.batches.get(id)?;
        let ids = members(&batch);
        let state = text(&batch, "state").to_owned();
        let status_of = |s: &State, shipment: &str| {
            s.shipments.get(shipment).and_then(|r| r["batch_status"].as_str().map(str::to_owned))
        };
        match state.as_str() {
            "creating" => {
                let mut ok = 0;
                let mut all_bought = true;
                for shipment_id in &ids {
                    self.shipments.update(shipment_id, |shipment| {
                        let taken = shipment["batch_id"].as_str().is_some_and(|b| b != id);
                        let bought = !shipment["selected_rate"].is_null();
                        let (status, message) = if taken {
                            ("creation_failed", json!("Shipment already belongs to another batch"))
                        } else {
                            ok += 1;
                            shipment.insert("batch_id".into(), json!(id));
                            (if bought { "postage_purchased" } else { "created" }, Value::Null)
                        };
                        all_bought &= bought && !taken;
                        shipment.insert("batch_status".into(), json!(status));
                        shipment.insert("batch_message".into(), message);
                    });
                }
                self.set_state(id, if ok == 0 { "creation_failed" } else { "created" }, at_ms);
                // A batch of bought shipments only is purchased next.
                (ok > 0 && all_bought).then_some(at_ms + STEP_MS)
            }
            "created" | "purchasing" => {
                let queued = ids.iter().find(|s| status_of(self, s).as_deref() == Some("queued_for_purchase")).cloned();
                match queued {
                    Some(shipment_id) => {
                        if state == "created" {
                            self.set_state(id, "purchasing", at_ms);
                        }
                        let chosen =
                            batch.get("chosen_rates").and_then(|c| c.get(&shipment_id)?.as_str().map(str::to_owned));
                        self.buy_in_batch(&shipment_id, chosen, at_ms);
                        Some(at_ms + BUY_EACH_MS)
                    }
                    None => {
                        let statuses: Vec<Option<String>> = ids.iter().map(|s| status_of(self, s)).collect();
                        let bought = |s: &Option<String>| s.as_deref() == Some("postage_purchased");
                        if state == "purchasing" {
                            let any = statuses.iter().any(bought);
                            self.set_state(id, if any { "purchased" } else { "purchase_failed" }, at_ms);
                        } else if !statuses.is_empty() && statuses.iter().all(bought) {
                            self.set_state(id, "purchased", at_ms);
                        }
                        None
                    }
                }
            }
            "label_generating" => {
                let format =
                    batch.get("label_format").and_then(Value::as_str).and_then(Format::parse).unwrap_or(Format::Pdf);
                let url =
                    self.file_url("batch_label", at_ms, format, FileRef::BatchLabel { batch: id.to_owned(), format });
                self.batches.update(id, |batch| batch.insert("label_url".into(), json!(url)));
                self.set_state(id, "label_generated", at_ms);
                None
            }
            _ => None,
        }
    }

    /// Finishes, at `now_ms`, the work still due on a batch before a request acts on it: its
    /// creation and the purchase of its queued shipments (EasyPost takes a buy, a label or a scan
    /// form request without waiting, as recorded). The batch as it is then.
    fn settle_batch(&mut self, id: &str, now_ms: i64) -> Result<Record, EpError> {
        let batch = self.batches.get(id).ok_or_else(|| EpError::not_found(format!("Batch {id} not found")))?;
        let bound = members(&batch).len().saturating_mul(SETTLE_STEPS_PER_SHIPMENT).saturating_add(4);
        for _ in 0..bound {
            let Some(batch) = self.batches.get(id) else { break };
            let busy = match text(&batch, "state") {
                "creating" | "purchasing" => true,
                "created" => members(&batch)
                    .iter()
                    .any(|s| self.shipments.get(s).is_some_and(|s| s["batch_status"] == "queued_for_purchase")),
                _ => false,
            };
            if !busy {
                break;
            }
            if let Some(next_ms) = self.step_batch(id, now_ms) {
                self.schedule_batch(id, next_ms);
            }
        }
        self.batches.get(id).ok_or_else(|| EpError::not_found(format!("Batch {id} not found")))
    }

    /// Buys one shipment of a batch with its chosen rate (the `carrier` and `service` it was
    /// created with in the batch), else the lowest; a failure is the shipment's own
    /// `postage_purchase_failed` with the reason.
    fn buy_in_batch(&mut self, shipment_id: &str, chosen: Option<String>, at_ms: i64) {
        let Some(shipment) = self.shipments.get(shipment_id) else { return };
        let outcome = if !shipment["selected_rate"].is_null() {
            // Bought since it was queued (on its own): the batch has its postage.
            Ok(())
        } else if let Some(rate) = chosen {
            self.purchase(shipment_id, &rate, None, at_ms).map_err(|e| e.message)
        } else {
            let carrier = shipment["options"]["carrier"].as_str().map(str::to_owned);
            let mut rates: Vec<&Value> = shipment["rates"].as_array().map(|r| r.iter().collect()).unwrap_or_default();
            rates.retain(|r| {
                carrier.as_deref().is_none_or(|c| r["carrier"].as_str().is_some_and(|rc| rc.eq_ignore_ascii_case(c)))
            });
            rates.sort_by(|a, b| {
                let price = |r: &Value| r["rate"].as_str().and_then(|p| p.parse::<f64>().ok()).unwrap_or(f64::MAX);
                price(a).total_cmp(&price(b))
            });
            match rates.first().and_then(|r| r["id"].as_str()) {
                Some(rate) => {
                    let rate = rate.to_owned();
                    self.purchase(shipment_id, &rate, None, at_ms).map_err(|e| e.message)
                }
                None => Err("No rates are available for this shipment.".to_owned()),
            }
        };
        let (status, message) = match outcome {
            Ok(()) => ("postage_purchased", Value::Null),
            Err(reason) => ("postage_purchase_failed", json!(reason)),
        };
        self.shipments.update(shipment_id, |shipment| {
            shipment.insert("batch_status".into(), json!(status));
            shipment.insert("batch_message".into(), message);
        });
    }

    /// The shipments an add or remove request lists: under `shipments`, or under `shipment` as
    /// easypost-ruby sends them (`{"shipment": [{"id": …}]}`, answered 200 as recorded).
    fn listed_shipments(&mut self, body: &Value, now_ms: i64) -> Result<Vec<String>, EpError> {
        let items = ["shipments", "shipment"].iter().find_map(|k| body.get(*k).filter(|v| !v.is_null()));
        let items = items.ok_or_else(|| EpError::required("shipments"))?;
        let (ids, _) = self.shipment_ids(items, "shipments", false, now_ms)?;
        if ids.is_empty() {
            return Err(EpError::required("shipments"));
        }
        Ok(ids)
    }

    /// `POST /v2/batches/{id}/add_shipments`: in any state (uncertain which states EasyPost
    /// refuses; recorded adds were to `created` batches). A bought shipment joins as
    /// `postage_purchased`.
    pub fn add_to_batch(&mut self, id: &str, body: &Value, now_ms: i64) -> Result<Value, EpError> {
        let batch = self.settle_batch(id, now_ms)?;
        let ids = self.listed_shipments(body, now_ms)?;
        let current = members(&batch);
        for shipment_id in &ids {
            let shipment = self
                .shipments
                .get(shipment_id)
                .ok_or_else(|| EpError::not_found(format!("Shipment {shipment_id} not found")))?;
            if current.contains(shipment_id) {
                return Err(EpError::invalid("shipments", format!("{shipment_id} is already in this batch")));
            }
            if let Some(other) = shipment["batch_id"].as_str() {
                return Err(EpError::invalid("shipments", format!("{shipment_id} already belongs to batch {other}")));
            }
        }
        for shipment_id in &ids {
            self.shipments.update(shipment_id, |shipment| {
                let status = if shipment["selected_rate"].is_null() { "created" } else { "postage_purchased" };
                shipment.insert("batch_id".into(), json!(id));
                shipment.insert("batch_status".into(), json!(status));
                shipment.insert("batch_message".into(), Value::Null);
            });
        }
        let state = self.batches.update(id, |batch| {
            let mut all = members(batch);
            all.extend(ids);
            batch.insert("members".into(), json!(all));
            if text(batch, "state") == "creation_failed" {
                batch.insert("state".into(), json!("created"));
            }
            batch.insert("updated_at".into(), json!(time(now_ms)));
            text(batch, "state").to_owned()
        });
        if state.as_deref() == Some("created") {
            // Purchased next when every shipment is bought.
            self.schedule_batch(id, now_ms + STEP_MS);
        }
        self.batch_json(id)
    }

    /// `POST /v2/batches/{id}/remove_shipments`: in any state (recorded: from a `purchased`
    /// batch, 200).
    pub fn remove_from_batch(&mut self, id: &str, body: &Value, now_ms: i64) -> Result<Value, EpError> {
        let batch = self.settle_batch(id, now_ms)?;
        let current = members(&batch);
        let ids = self.listed_shipments(body, now_ms)?;
        if let Some(missing) = ids.iter().find(|s| !current.contains(s)) {
            return Err(EpError::invalid("shipments", format!("{missing} is not in this batch")));
        }
        for shipment_id in &ids {
            self.shipments.update(shipment_id, |shipment| {
                for field in ["batch_id", "batch_status", "batch_message"] {
                    shipment.insert(field.into(), Value::Null);
                }
            });
        }
        self.batches.update(id, |batch| {
            let kept: Vec<String> = current.into_iter().filter(|s| !ids.contains(s)).collect();
            batch.insert("members".into(), json!(kept));
            batch.insert("updated_at".into(), json!(time(now_ms)));
        });
        self.batch_json(id)
    }

    /// `POST /v2/batches/{id}/buy`: every shipment not bought yet is queued, then bought one by
    /// one on the timeline; a batch still creating is created first (EasyPost answers such a buy
    /// 200, `created` with its shipments queued, as recorded).
    pub fn buy_batch(&mut self, id: &str, now_ms: i64) -> Result<Value, EpError> {
        let batch = self.settle_batch(id, now_ms)?;
        let ids = members(&batch);
        // Uncertain: what EasyPost answers for a batch without shipments; the simulator refuses.
        if ids.is_empty() {
            return Err(EpError::unprocessable("BATCH.EMPTY", "The batch has no shipments to buy."));
        }
        let buyable: Vec<String> = ids
            .iter()
            .filter(|s| {
                self.shipments.get(s).is_some_and(|s| {
                    matches!(s["batch_status"].as_str(), Some("created" | "postage_purchase_failed"))
                        && s["selected_rate"].is_null()
                })
            })
            .cloned()
            .collect();
        // Uncertain: a batch whose shipments are all bought (or failed creation) is answered as
        // it is, nothing queued.
        if buyable.is_empty() {
            return self.batch_json(id);
        }
        for shipment_id in &buyable {
            self.shipments.update(shipment_id, |shipment| {
                shipment.insert("batch_status".into(), json!("queued_for_purchase"));
                shipment.insert("batch_message".into(), Value::Null);
            });
        }
        self.batches.update(id, |batch| {
            batch.insert("state".into(), json!("created"));
            batch.insert("updated_at".into(), json!(time(now_ms)));
        });
        self.schedule_batch(id, now_ms + STEP_MS);
        self.batch_json(id)
    }

    /// `POST /v2/batches/{id}/label`: one file of every bought label, generated on the timeline;
    /// a purchase still under way is finished first (recorded: a label asked for right after the
    /// buy is answered 200, `label_generating`).
    pub fn label_batch(&mut self, id: &str, body: &Value, now_ms: i64) -> Result<Value, EpError> {
        let raw = body.get("file_format").and_then(Value::as_str).map(str::trim).filter(|s| !s.is_empty());
        let raw = raw.ok_or_else(|| EpError::required("file_format"))?;
        let format = Format::parse(raw)
            .filter(|f| *f != Format::Png)
            .ok_or_else(|| EpError::invalid("file_format", format!("{raw:?} is not PDF, ZPL or EPL2")))?;
        let batch = self.settle_batch(id, now_ms)?;
        // A label needs postage: a batch none of whose shipments is bought has none to print
        // (uncertain how EasyPost words this refusal).
        let bought = members(&batch)
            .iter()
            .any(|s| self.shipments.get(s).is_some_and(|s| s["batch_status"] == "postage_purchased"));
        if !bought {
            let state = text(&batch, "state");
            return Err(EpError::unprocessable(
                "BATCH.STATE.INVALID",
                format!("Labels can be generated once the batch's shipments are purchased; it is {state}."),
            ));
        }
        self.batches.update(id, |batch| {
            batch.insert("label_format".into(), json!(format!("{format:?}").to_uppercase()));
            batch.insert("label_url".into(), Value::Null);
        });
        self.set_state(id, "label_generating", now_ms);
        self.schedule_batch(id, now_ms + STEP_MS);
        self.batch_json(id)
    }

    /// The labels of the shipments the batch bought, in order.
    pub fn batch_labels(&self, id: &str) -> Vec<super::labels::Label> {
        let members = self.batches.get(id).map(|b| members(&b)).unwrap_or_default();
        members
            .iter()
            .filter(|s| self.shipments.get(s).is_some_and(|s| s["batch_status"] == "postage_purchased"))
            .filter_map(|s| self.label_of(s))
            .collect()
    }

    /// `POST /v2/batches/{id}/scan_form`: one form for the purchased shipments, which must share
    /// a from-address; a purchase still under way is finished first (recorded: asked for right
    /// after the buy, 200 with the batch `purchased`).
    pub fn scan_form_batch(&mut self, id: &str, now_ms: i64) -> Result<Value, EpError> {
        let batch = self.settle_batch(id, now_ms)?;
        if batch["scan_form"].get("id").is_some() {
            return Err(EpError::unprocessable("SCAN_FORM.EXISTS", "This batch already has a scan form."));
        }
        let bought: Vec<Record> = members(&batch)
            .iter()
            .filter_map(|s| self.shipments.get(s))
            .filter(|s| {
                s["batch_status"] == "postage_purchased"
                    && !matches!(s["refund_status"].as_str(), Some("submitted" | "refunded"))
            })
            .collect();
        if bought.is_empty() {
            return Err(EpError::unprocessable(
                "SCAN_FORM.NO_SHIPMENTS",
                "A scan form needs purchased shipments; this batch has none.",
            ));
        }
        let form = self.make_scan_form(id, &bought, false, now_ms)?;
        self.batches.update(id, |batch| {
            batch.insert("scan_form".into(), Value::Object(form));
            batch.insert("updated_at".into(), json!(time(now_ms)));
        });
        self.batch_json(id)
    }

    /// A scan form for `bought` (purchased shipments that must share a from-address), of batch
    /// `batch_id`; `ready` makes its PDF at once (a standalone form), else a step later.
    fn make_scan_form(
        &mut self,
        batch_id: &str,
        bought: &[Record],
        ready: bool,
        now_ms: i64,
    ) -> Result<Record, EpError> {
        let origin = |s: &Record| {
            let a = &s["from_address"];
            format!(
                "{}|{}",
                a["street1"].as_str().unwrap_or("").to_uppercase(),
                a["zip"].as_str().unwrap_or("").chars().take(5).collect::<String>()
            )
        };
        let first = origin(&bought[0]);
        if let Some(other) = bought.iter().find(|s| origin(s) != first) {
            return Err(EpError::unprocessable(
                "SCAN_FORM.ADDRESS.MISMATCH",
                "All shipments of a scan form must share one from-address.",
            )
            .field(
                "shipments",
                format!("{} ships from another address than {}", text(other, "id"), text(&bought[0], "id")),
            ));
        }
        let codes: Vec<String> = bought.iter().map(|s| text(s, "tracking_code").to_owned()).collect();
        let address = bought[0]["from_address"].clone();
        let mut form = self.base("sf", "ScanForm", now_ms);
        form.remove("mode");
        let form_id = text(&form, "id").to_owned();
        for (k, v) in [
            ("tracking_codes", json!(codes)),
            ("address", address),
            ("status", json!("creating")),
            ("message", Value::Null),
            ("form_url", Value::Null),
            ("form_file_type", Value::Null),
            ("batch_id", json!(batch_id)),
            ("confirmation", Value::Null),
        ] {
            form.insert(k.to_owned(), v);
        }
        self.keep(|s| &mut s.scan_forms, form_id.clone(), now_ms, &form);
        self.emit("scan_form.created", Value::Object(form.clone()), json!({}), now_ms);
        if ready {
            self.finish_scan_form(&form_id, now_ms);
        } else {
            self.schedule(now_ms + STEP_MS, Step::ScanForm(form_id.clone()));
        }
        Ok(self.scan_forms.get(&form_id).unwrap_or(form))
    }

    /// `POST /v2/scan_forms`: a form for purchased shipments given by id (`{"scan_form":
    /// {"shipments": [...]}}`, or the list at the top level as the Ruby SDK sends it). EasyPost
    /// makes a batch behind it (the recorded answer names one) and answers 200 with the form
    /// already `created`, its PDF ready.
    pub fn create_scan_form(&mut self, body: &Value, now_ms: i64) -> Result<Value, EpError> {
        let input = body.get("scan_form").filter(|v| v.is_object()).unwrap_or(body);
        let items =
            input.get("shipments").filter(|v| !v.is_null()).ok_or_else(|| EpError::required("scan_form.shipments"))?;
        let (ids, _) = self.shipment_ids(items, "scan_form.shipments", false, now_ms)?;
        if ids.is_empty() {
            return Err(EpError::required("scan_form.shipments"));
        }
        let mut bought = Vec::new();
        for id in &ids {
            let shipment =
                self.shipments.get(id).ok_or_else(|| EpError::not_found(format!("Shipment {id} not found")))?;
            if shipment["selected_rate"].is_null() {
                return Err(EpError::unprocessable(
                    "SCAN_FORM.SHIPMENT.NOT_PURCHASED",
                    "A scan form needs purchased shipments.",
                )
                .field("shipments", format!("{id} has no postage")));
            }
            bought.push(shipment);
        }
        let mut batch = self.base("batch", "Batch", now_ms);
        let batch_id = text(&batch, "id").to_owned();
        for (k, v) in [
            ("state", json!("purchased")),
            ("reference", Value::Null),
            ("scan_form", Value::Null),
            ("pickup", Value::Null),
            ("label_url", Value::Null),
            ("members", json!(ids)),
            ("chosen_rates", json!({})),
        ] {
            batch.insert(k.to_owned(), v);
        }
        let form = self.make_scan_form(&batch_id, &bought, true, now_ms)?;
        batch.insert("scan_form".into(), json!({"id": form["id"]}));
        self.keep(|s| &mut s.batches, batch_id.clone(), now_ms, &batch);
        // Uncertain: whether EasyPost marks the shipments as members of the batch it makes; the
        // simulator does, so the batch reads as purchased.
        for id in &ids {
            self.shipments.update(id, |shipment| {
                shipment.insert("batch_id".into(), json!(batch_id));
                shipment.insert("batch_status".into(), json!("postage_purchased"));
            });
        }
        Ok(Value::Object(form))
    }

    pub fn finish_scan_form(&mut self, id: &str, at_ms: i64) {
        let url = self.file_url("scan_form", at_ms, Format::Pdf, FileRef::ScanForm(id.to_owned()));
        let snapshot = self.scan_forms.update(id, |form| {
            form.insert("status".into(), json!("created"));
            form.insert("form_url".into(), json!(url));
            form.insert("form_file_type".into(), json!("application/pdf"));
            form.insert("updated_at".into(), json!(time(at_ms)));
            Value::Object(form.clone())
        });
        let Some(snapshot) = snapshot else { return };
        self.emit("scan_form.updated", snapshot, json!({"status": "creating"}), at_ms);
    }
}

/// The shipment ids of a batch record.
fn members(batch: &Record) -> Vec<String> {
    batch
        .get("members")
        .and_then(Value::as_array)
        .map(|items| items.iter().filter_map(Value::as_str).map(str::to_owned).collect())
        .unwrap_or_default()
}
