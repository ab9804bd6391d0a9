//! Batches: shipments bought, labelled and scanned together, moving through EasyPost's states on
//! the sandbox clock — creating → created (or creation_failed), purchasing → purchased (or
//! purchase_failed), label_generating → label_generated — with each shipment's own outcome
//! (`batch_status`, `batch_message`). Scan forms cover purchased shipments that share one
//! from-address.

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

/// The states in which shipments may be added or removed.
const OPEN: [&str; 3] = ["created", "creation_failed", "purchase_failed"];

impl State {
    /// A batch as the API returns it: shipment summaries and status counts from its shipments.
    pub fn render_batch(&self, batch: &Record) -> Value {
        let mut out = batch.clone();
        let ids: Vec<String> = members(batch);
        let mut counts = json!({"created": 0, "queued_for_purchase": 0, "creation_failed": 0, "postage_purchased": 0, "postage_purchase_failed": 0});
        let mut summaries = Vec::new();
        for id in &ids {
            let (status, summary) = match self.shipments.get(id) {
                Some(s) => {
                    let status = s["batch_status"].as_str().unwrap_or("created").to_owned();
                    let summary = json!({"id": id, "reference": s["reference"], "object": "BatchShipment",
                        "tracking_code": s["tracking_code"], "batch_status": status, "batch_message": s["batch_message"]});
                    (status, summary)
                }
                None => {
                    let message = "Shipment not found";
                    let summary = json!({"id": id, "reference": null, "object": "BatchShipment", "tracking_code": null,
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
        out.remove("members");
        out.remove("chosen_rates");
        out.remove("label_format");
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
        let input = body.get("batch").ok_or_else(|| EpError::required("batch"))?;
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
            self.schedule(now_ms + STEP_MS, Step::Batch(id.clone()));
        }
        let rendered = self.batch_json(&id)?;
        self.emit("batch.created", rendered.clone(), json!({}), now_ms);
        Ok(rendered)
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

    /// The batch's next step on the timeline.
    pub fn advance_batch(&mut self, id: &str, at_ms: i64) {
        let Some(batch) = self.batches.get(id) else { return };
        let ids = members(&batch);
        match text(&batch, "state") {
            "creating" => {
                let mut ok = 0;
                for shipment_id in &ids {
                    self.shipments.update(shipment_id, |shipment| {
                        let taken = shipment["batch_id"].as_str().is_some_and(|b| b != id);
                        let (status, message) = if taken {
                            ("creation_failed", json!("Shipment already belongs to another batch"))
                        } else {
                            ok += 1;
                            shipment.insert("batch_id".into(), json!(id));
                            ("created", Value::Null)
                        };
                        shipment.insert("batch_status".into(), json!(status));
                        shipment.insert("batch_message".into(), message);
                    });
                }
                self.set_state(id, if ok == 0 { "creation_failed" } else { "created" }, at_ms);
            }
            "created" | "purchasing" => {
                // Buy the next queued shipment; when none is left, the batch is purchased (or
                // failed, when no shipment could be bought).
                if text(&batch, "state") == "created" {
                    self.set_state(id, "purchasing", at_ms);
                }
                let next = ids
                    .iter()
                    .find(|s| self.shipments.get(s).is_some_and(|s| s["batch_status"] == "queued_for_purchase"))
                    .cloned();
                match next {
                    Some(shipment_id) => {
                        let chosen = self
                            .batches
                            .get(id)
                            .and_then(|b| b.get("chosen_rates")?.get(&shipment_id)?.as_str().map(str::to_owned));
                        self.buy_in_batch(&shipment_id, chosen, at_ms);
                        self.schedule(at_ms + BUY_EACH_MS, Step::Batch(id.to_owned()));
                    }
                    None => {
                        let bought = ids
                            .iter()
                            .any(|s| self.shipments.get(s).is_some_and(|s| s["batch_status"] == "postage_purchased"));
                        self.set_state(id, if bought { "purchased" } else { "purchase_failed" }, at_ms);
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
            }
            _ => {}
        }
    }

    /// Buys one shipment of a batch with its chosen rate (the `carrier` and `service` it was
    /// created with in the batch), else the lowest; a failure is the shipment's own
    /// `postage_purchase_failed` with the reason.
    fn buy_in_batch(&mut self, shipment_id: &str, chosen: Option<String>, at_ms: i64) {
        let Some(shipment) = self.shipments.get(shipment_id) else { return };
        let outcome = if !shipment["selected_rate"].is_null() {
            Err("A postage label has already been purchased for this shipment.".to_owned())
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

    fn open_batch(&self, id: &str, action: &str) -> Result<Record, EpError> {
        let batch = self.batches.get(id).ok_or_else(|| EpError::not_found(format!("Batch {id} not found")))?;
        let state = text(&batch, "state");
        if !OPEN.contains(&state) {
            return Err(EpError::unprocessable(
                "BATCH.STATE.INVALID",
                format!("Shipments can't be {action} a batch that is {state}."),
            ));
        }
        Ok(batch)
    }

    /// `POST /v2/batches/{id}/add_shipments`.
    pub fn add_to_batch(&mut self, id: &str, body: &Value, now_ms: i64) -> Result<Value, EpError> {
        self.open_batch(id, "added to")?;
        let (ids, _) = self.shipment_ids(body.get("shipments").unwrap_or(&Value::Null), "shipments", false, now_ms)?;
        if ids.is_empty() {
            return Err(EpError::required("shipments"));
        }
        let current = self.batches.get(id).map(|b| members(&b)).unwrap_or_default();
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
                shipment.insert("batch_id".into(), json!(id));
                shipment.insert("batch_status".into(), json!("created"));
                shipment.insert("batch_message".into(), Value::Null);
            });
        }
        self.batches.update(id, |batch| {
            let mut all = members(batch);
            all.extend(ids);
            batch.insert("members".into(), json!(all));
            if text(batch, "state") == "creation_failed" {
                batch.insert("state".into(), json!("created"));
            }
            batch.insert("updated_at".into(), json!(time(now_ms)));
        });
        self.batch_json(id)
    }

    /// `POST /v2/batches/{id}/remove_shipments`.
    pub fn remove_from_batch(&mut self, id: &str, body: &Value, now_ms: i64) -> Result<Value, EpError> {
        let batch = self.open_batch(id, "removed from")?;
        let current = members(&batch);
        let (ids, _) = self.shipment_ids(body.get("shipments").unwrap_or(&Value::Null), "shipments", false, now_ms)?;
        if ids.is_empty() {
            return Err(EpError::required("shipments"));
        }
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

    /// `POST /v2/batches/{id}/buy`: every shipment queued; bought one by one on the timeline.
    pub fn buy_batch(&mut self, id: &str, now_ms: i64) -> Result<Value, EpError> {
        let batch = self.batches.get(id).ok_or_else(|| EpError::not_found(format!("Batch {id} not found")))?;
        let state = text(&batch, "state");
        if state != "created" && state != "purchase_failed" {
            return Err(EpError::unprocessable(
                "BATCH.STATE.INVALID",
                format!("A batch that is {state} can't be bought."),
            ));
        }
        let ids = members(&batch);
        let buyable: Vec<&String> = ids
            .iter()
            .filter(|s| self.shipments.get(s).is_some_and(|s| s["batch_status"] != "postage_purchased"))
            .collect();
        if buyable.is_empty() {
            return Err(EpError::unprocessable("BATCH.EMPTY", "The batch has no shipments to buy."));
        }
        let buyable: Vec<String> = buyable.into_iter().cloned().collect();
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
        self.schedule(now_ms + STEP_MS, Step::Batch(id.to_owned()));
        self.batch_json(id)
    }

    /// `POST /v2/batches/{id}/label`: one file of every bought label, generated on the timeline.
    pub fn label_batch(&mut self, id: &str, body: &Value, now_ms: i64) -> Result<Value, EpError> {
        let raw = body.get("file_format").and_then(Value::as_str).map(str::trim).filter(|s| !s.is_empty());
        let raw = raw.ok_or_else(|| EpError::required("file_format"))?;
        let format = Format::parse(raw)
            .filter(|f| *f != Format::Png)
            .ok_or_else(|| EpError::invalid("file_format", format!("{raw:?} is not PDF, ZPL or EPL2")))?;
        let batch = self.batches.get(id).ok_or_else(|| EpError::not_found(format!("Batch {id} not found")))?;
        let state = text(&batch, "state");
        if state != "purchased" && state != "label_generated" {
            return Err(EpError::unprocessable(
                "BATCH.STATE.INVALID",
                format!("Labels can be generated once the batch is purchased; it is {state}."),
            ));
        }
        self.batches.update(id, |batch| {
            batch.insert("label_format".into(), json!(format!("{format:?}").to_uppercase()));
            batch.insert("label_url".into(), Value::Null);
        });
        self.set_state(id, "label_generating", now_ms);
        self.schedule(now_ms + STEP_MS, Step::Batch(id.to_owned()));
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
    /// a from-address.
    pub fn scan_form_batch(&mut self, id: &str, now_ms: i64) -> Result<Value, EpError> {
        let batch = self.batches.get(id).ok_or_else(|| EpError::not_found(format!("Batch {id} not found")))?;
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
