//! Orders (several shipments between the same addresses, rated together and bought with one
//! carrier and service) and pickups.

use serde_json::{json, Map, Value};

use super::errors::EpError;
use super::state::{given_id, text, time, State};
use super::store::{parse_datetime, Record};
use crate::sandbox::request::Query;

/// The carrier and service a buy names: `{"carrier", "service"}` or a rate `{"rate": {...}}`
/// (its carrier and service, or its id looked up by `lookup`).
fn wanted(body: &Value, lookup: impl Fn(&str) -> Option<(String, String)>) -> Result<(String, String), EpError> {
    let field = |v: &Value, name: &str| v.get(name).and_then(Value::as_str).map(str::to_owned);
    if let (Some(carrier), Some(service)) = (field(body, "carrier"), field(body, "service")) {
        return Ok((carrier, service));
    }
    if let Some(rate) = body.get("rate").filter(|r| !r.is_null()) {
        if let (Some(carrier), Some(service)) = (field(rate, "carrier"), field(rate, "service")) {
            return Ok((carrier, service));
        }
        if let Some(found) = given_id(rate).and_then(&lookup) {
            return Ok(found);
        }
    }
    let mut error = EpError::new(422, "PARAMETER.REQUIRED", "Missing required parameter.");
    for name in ["carrier", "service"] {
        if field(body, name).is_none() {
            error = error.field(name, "cannot be blank");
        }
    }
    Err(error)
}

fn money(value: &Value) -> f64 {
    value.as_str().and_then(|s| s.parse().ok()).unwrap_or(0.0)
}

impl State {
    // ---- orders ----------------------------------------------------------------------------

    /// `POST /v2/orders`: `{"order": {to_address, from_address, shipments: [{parcel, options}],
    /// ...}}`; every shipment goes between the order's addresses (the same address records).
    pub fn create_order(&mut self, body: &Value, now_ms: i64) -> Result<Value, EpError> {
        let input = body.get("order").and_then(Value::as_object).filter(|m| !m.is_empty());
        let Some(input) = input else { return Err(EpError::required("order")) };
        let items = match input.get("shipments") {
            Some(Value::Array(items)) if !items.is_empty() => items.clone(),
            _ => return Err(EpError::required("order.shipments")),
        };
        if let Some(i) = items.iter().position(|i| !i.is_object()) {
            return Err(EpError::invalid(&format!("order.shipments[{i}]"), "must be a shipment object"));
        }
        // The addresses are checked by the first shipment, then shared by id with the others.
        let shared_keys = [
            "to_address",
            "from_address",
            "return_address",
            "buyer_address",
            "customs_info",
            "carrier_accounts",
            "is_return",
            "reference",
        ];
        let mut first = Map::new();
        for key in shared_keys {
            if let Some(v) = input.get(key) {
                first.insert(key.to_owned(), v.clone());
            }
        }
        let mut ids: Vec<String> = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let mut shipment = first.clone();
            if let Some(object) = item.as_object() {
                for (k, v) in object {
                    shipment.insert(k.clone(), v.clone());
                }
            }
            let made = self.new_shipment(&json!({"shipment": shipment}), now_ms);
            let (id, _) = match made {
                Ok(made) => made,
                Err(e) => {
                    // A refused shipment refuses the order: the ones made for it go.
                    for id in &ids {
                        self.shipments.remove(id);
                    }
                    return Err(e);
                }
            };
            if i == 0 {
                if let Some(made) = self.shipments.get(&id) {
                    for key in ["to_address", "from_address", "return_address", "buyer_address", "customs_info"] {
                        if let Some(address) = made[key]["id"].as_str() {
                            first.insert(key.to_owned(), json!({"id": address}));
                        }
                    }
                }
            }
            ids.push(id);
        }
        let mut order = self.base("order", "Order", now_ms);
        let order_id = text(&order, "id").to_owned();
        let mut options = match input.get("options") {
            Some(Value::Object(map)) => map.clone(),
            _ => Map::new(),
        };
        options.entry("currency").or_insert(json!("USD"));
        options.entry("payment").or_insert(json!({"type": "SENDER"}));
        // Recorded: an order made without a reference has `""`.
        let reference = match input.get("reference") {
            None | Some(Value::Null) => json!(""),
            Some(Value::Number(n)) => json!(n.to_string()),
            Some(v) => v.clone(),
        };
        for (k, v) in [
            ("reference", reference),
            ("is_return", json!(input.get("is_return").and_then(Value::as_bool).unwrap_or(false))),
            ("options", Value::Object(options)),
            ("members", json!(ids)),
        ] {
            order.insert(k.to_owned(), v);
        }
        for id in &ids {
            self.shipments.update(id, |s| s.insert("order_id".into(), json!(order_id)));
        }
        self.keep(|s| &mut s.orders, order_id.clone(), now_ms, &order);
        self.order_json(&order_id)
    }

    /// An order as the API returns it: its shipments as they are now, their addresses and
    /// messages, and the rates every one of them has, summed per carrier and service (the id
    /// and shipment of the first shipment's rate, no times, as recorded).
    pub fn order_json(&self, id: &str) -> Result<Value, EpError> {
        let order = self.orders.get(id).ok_or_else(|| EpError::not_found(format!("Order {id} not found")))?;
        let shipments: Vec<Value> =
            members(&order).iter().filter_map(|s| self.shipments.get(s)).map(|s| self.render_shipment(&s)).collect();
        let mut out = Map::new();
        for key in ["id", "object", "mode", "reference", "is_return", "options", "created_at", "updated_at"] {
            out.insert(key.to_owned(), order.get(key).cloned().unwrap_or(Value::Null));
        }
        let first = shipments.first().cloned().unwrap_or(Value::Null);
        for key in ["customs_info", "from_address", "to_address", "buyer_address", "return_address"] {
            out.insert(key.to_owned(), first[key].clone());
        }
        let mut messages = Vec::new();
        for shipment in &shipments {
            for message in shipment["messages"].as_array().into_iter().flatten() {
                if !messages.contains(message) {
                    messages.push(message.clone());
                }
            }
        }
        out.insert("messages".into(), Value::Array(messages));
        let mut rates = Vec::new();
        for rate in first["rates"].as_array().into_iter().flatten() {
            let same = |r: &&Value| r["carrier"] == rate["carrier"] && r["service"] == rate["service"];
            let matching: Vec<&Value> =
                shipments.iter().filter_map(|s| s["rates"].as_array().and_then(|rs| rs.iter().find(same))).collect();
            if matching.len() != shipments.len() {
                continue;
            }
            let mut total = rate.clone();
            for key in ["rate", "retail_rate", "list_rate"] {
                let sum: f64 = matching.iter().map(|r| money(&r[key])).sum();
                total[key] = json!(format!("{sum:.2}"));
            }
            let days = matching.iter().filter_map(|r| r["delivery_days"].as_i64()).max();
            total["delivery_days"] = json!(days);
            total["est_delivery_days"] = json!(days);
            total["created_at"] = Value::Null;
            total["updated_at"] = Value::Null;
            rates.push(total);
        }
        out.insert("shipments".into(), Value::Array(shipments));
        out.insert("rates".into(), Value::Array(rates));
        Ok(Value::Object(out))
    }

    /// `POST /v2/orders/{id}/buy`: every shipment bought with the carrier and service named.
    /// Uncertain: EasyPost's error codes for a bought order or an unknown service (the
    /// simulator's are its shipments').
    pub fn buy_order(&mut self, id: &str, body: &Value, now_ms: i64) -> Result<Value, EpError> {
        let order = self.orders.get(id).ok_or_else(|| EpError::not_found(format!("Order {id} not found")))?;
        let ids = members(&order);
        let (carrier, service) = wanted(body, |rate| {
            let owner = self.rate_owner(rate)?;
            let shipment = self.shipments.get(&owner)?;
            let found = shipment["rates"].as_array()?.iter().find(|r| r["id"] == rate)?.clone();
            Some((found["carrier"].as_str()?.to_owned(), found["service"].as_str()?.to_owned()))
        })?;
        let mut chosen = Vec::new();
        for shipment in &ids {
            let bought = self.shipments.get(shipment).is_some_and(|s| !s["selected_rate"].is_null());
            if bought {
                return Err(EpError::unprocessable(
                    "SHIPMENT.POSTAGE.EXISTS",
                    "A postage label has already been purchased for this shipment.",
                ));
            }
            let rate = self.rate_of(shipment, |r| {
                text(r, "carrier").eq_ignore_ascii_case(&carrier) && text(r, "service").eq_ignore_ascii_case(&service)
            });
            let Some(rate) = rate else {
                return Err(EpError::unprocessable(
                    "SHIPMENT.RATE.NOT_FOUND",
                    "No rate matches the carrier and service.",
                )
                .field("service", format!("{carrier} has no {service} rate for {shipment}")));
            };
            chosen.push((shipment.clone(), rate));
        }
        for (shipment, rate) in chosen {
            self.purchase(&shipment, &rate, None, now_ms)?;
        }
        self.orders.update(id, |o| o.insert("updated_at".into(), json!(time(now_ms))));
        self.order_json(id)
    }

    // ---- pickups ---------------------------------------------------------------------------

    /// `POST /v2/pickups`: a pickup at an address for a shipment or batch, answered 200 (as
    /// recorded) with `status: unknown` and the rates of the carriers that can come.
    pub fn create_pickup(&mut self, body: &Value, now_ms: i64) -> Result<Value, EpError> {
        let input = body.get("pickup").and_then(Value::as_object).filter(|m| !m.is_empty());
        let Some(input) = input else { return Err(EpError::required("pickup")) };
        let address = match input.get("address").filter(|v| !v.is_null()) {
            None => return Err(EpError::required("pickup.address")),
            Some(value) => match given_id(value).filter(|_| value.get("street1").is_none()) {
                Some(id) => {
                    self.addresses.get(id).ok_or_else(|| EpError::not_found(format!("Address {id} not found")))?;
                    None
                }
                None => Some(super::addresses::read_fields(value, "pickup.address")?),
            },
        };
        let when = |name: &str| -> Result<Value, EpError> {
            match input.get(name) {
                None | Some(Value::Null) => Err(EpError::required(&format!("pickup.{name}"))),
                Some(Value::String(s)) => parse_datetime(s.trim())
                    .map(|ms| json!(time(ms)))
                    .ok_or_else(|| EpError::invalid(&format!("pickup.{name}"), format!("{s:?} is not a date-time"))),
                Some(_) => Err(EpError::invalid(&format!("pickup.{name}"), "must be a date-time")),
            }
        };
        let (min, max) = (when("min_datetime")?, when("max_datetime")?);
        let mut carriers: Vec<&str> = Vec::new();
        if let Some(shipment) = input.get("shipment").filter(|v| !v.is_null()) {
            let id = given_id(shipment)
                .ok_or_else(|| EpError::invalid("pickup.shipment", "must be {\"id\": \"shp_...\"}"))?;
            let record =
                self.shipments.get(id).ok_or_else(|| EpError::not_found(format!("Shipment {id} not found")))?;
            if let Some(c) = record["selected_rate"]["carrier"].as_str() {
                carriers.extend(self.active_carriers().iter().map(|k| k.name).filter(|k| *k == c));
            }
        }
        if let Some(batch) = input.get("batch").filter(|v| !v.is_null()) {
            let id =
                given_id(batch).ok_or_else(|| EpError::invalid("pickup.batch", "must be {\"id\": \"batch_...\"}"))?;
            self.batches.get(id).ok_or_else(|| EpError::not_found(format!("Batch {id} not found")))?;
        }
        if carriers.is_empty() {
            carriers = self.active_carriers().iter().map(|c| c.name).collect();
        }
        let address = match address {
            Some(fields) => self.store_address(&fields, None, now_ms),
            None => given_id(&input["address"]).and_then(|id| self.addresses.get(id)).unwrap_or_default(),
        };
        let mut pickup = self.base("pickup", "Pickup", now_ms);
        let pickup_id = text(&pickup, "id").to_owned();
        let mut rates = Vec::new();
        // Uncertain: the services and prices of UPS and FedEx pickups (recorded: USPS `NextDay`
        // at 0.00).
        for carrier in carriers {
            let (service, price) = match carrier {
                "USPS" => ("NextDay", "0.00"),
                "UPS" => ("Future-day Pickup", "6.50"),
                _ => ("FedEx Express Pickup", "4.50"),
            };
            let mut rate = self.base("pickuprate", "PickupRate", now_ms);
            for (k, v) in [
                ("service", json!(service)),
                ("rate", json!(price)),
                ("currency", json!("USD")),
                ("carrier", json!(carrier)),
                ("pickup_id", json!(pickup_id)),
            ] {
                rate.insert(k.to_owned(), v);
            }
            rates.push(Value::Object(rate));
        }
        let text_field = |name: &str| input.get(name).filter(|v| !v.is_null()).cloned().unwrap_or(Value::Null);
        for (k, v) in [
            ("status", json!("unknown")),
            ("reference", text_field("reference")),
            ("min_datetime", min),
            ("max_datetime", max),
            ("is_account_address", json!(input.get("is_account_address").and_then(Value::as_bool).unwrap_or(false))),
            ("instructions", text_field("instructions")),
            ("messages", json!([])),
            ("confirmation", Value::Null),
            ("address", Value::Object(address)),
            ("carrier_accounts", json!([])),
            ("pickup_rates", Value::Array(rates)),
        ] {
            pickup.insert(k.to_owned(), v);
        }
        self.keep(|s| &mut s.pickups, pickup_id, now_ms, &pickup);
        Ok(Value::Object(pickup))
    }

    pub fn pickup_json(&self, id: &str) -> Result<Value, EpError> {
        self.pickups.get(id).map(Value::Object).ok_or_else(|| EpError::not_found(format!("Pickup {id} not found")))
    }

    pub fn list_pickups(&self, query: &Query) -> Result<Value, EpError> {
        self.list(|s| &s.pickups, "pickups", query, |_| true, |_, r| Value::Object(r.clone()))
    }

    /// `POST /v2/pickups/{id}/buy`: `{"carrier", "service"}` (or a pickup rate) of one of its
    /// rates → `scheduled` with a confirmation number.
    pub fn buy_pickup(&mut self, id: &str, body: &Value, now_ms: i64) -> Result<Value, EpError> {
        let pickup = self.pickups.get(id).ok_or_else(|| EpError::not_found(format!("Pickup {id} not found")))?;
        let rates: Vec<Value> = pickup["pickup_rates"].as_array().cloned().unwrap_or_default();
        let (carrier, service) = wanted(body, |rate| {
            let found = rates.iter().find(|r| r["id"] == rate)?;
            Some((found["carrier"].as_str()?.to_owned(), found["service"].as_str()?.to_owned()))
        })?;
        if text(&pickup, "status") != "unknown" {
            return Err(EpError::unprocessable("PICKUP.ALREADY_SCHEDULED", "This pickup has already been bought."));
        }
        let matches = rates.iter().any(|r| {
            r["carrier"].as_str().is_some_and(|c| c.eq_ignore_ascii_case(&carrier))
                && r["service"].as_str().is_some_and(|s| s.eq_ignore_ascii_case(&service))
        });
        if !matches {
            return Err(EpError::unprocessable(
                "PICKUP.RATE.NOT_FOUND",
                "No pickup rate matches the carrier and service.",
            )
            .field("service", format!("{carrier} has no {service} pickup here")));
        }
        let confirmation =
            format!("WTC{}", self.ids.hex(8).bytes().map(|b| char::from(b'0' + b % 10)).collect::<String>());
        self.pickups
            .update(id, |p| {
                p.insert("status".into(), json!("scheduled"));
                p.insert("confirmation".into(), json!(confirmation));
                p.insert("updated_at".into(), json!(time(now_ms)));
            })
            .ok_or_else(|| EpError::not_found(format!("Pickup {id} not found")))?;
        self.pickup_json(id)
    }

    /// `POST /v2/pickups/{id}/cancel` → `canceled` (EasyPost's spelling).
    pub fn cancel_pickup(&mut self, id: &str, now_ms: i64) -> Result<Value, EpError> {
        let pickup = self.pickups.get(id).ok_or_else(|| EpError::not_found(format!("Pickup {id} not found")))?;
        if text(&pickup, "status") == "canceled" {
            return Err(EpError::unprocessable("PICKUP.ALREADY_CANCELED", "This pickup has already been canceled."));
        }
        self.pickups.update(id, |p| {
            p.insert("status".into(), json!("canceled"));
            p.insert("updated_at".into(), json!(time(now_ms)));
        });
        self.pickup_json(id)
    }
}

/// The shipment ids of an order record.
fn members(order: &Record) -> Vec<String> {
    order
        .get("members")
        .and_then(Value::as_array)
        .map(|items| items.iter().filter_map(Value::as_str).map(str::to_owned).collect())
        .unwrap_or_default()
}
