//! Shipments (rated on creation, bought with one of their rates, labels converted, refunded),
//! refunds, and standalone insurance.

use rust_decimal::Decimal;
use serde_json::{json, Map, Value};

use super::addresses::{self, coordinates};
use super::errors::EpError;
use super::labels::{Format, Label};
use super::rates::{self, Parcel, Route, CARRIERS};
use super::state::{given_id, text, time, FileRef, Place, State, Step};
use super::store::Record;
use super::trackers::{read_code_and_carrier, TrackerSpec};
use crate::sandbox::request::Query;

/// The most a shipment or package can be insured for, in USD.
const MAX_INSURANCE: i64 = 5_000;
/// How long a carrier takes to answer a refund request (sandbox time; USPS takes about 15 days,
/// which a demo cannot wait for).
const REFUND_SETTLES_MS: i64 = 5 * 60_000;
/// Standalone insurance is purchased this long after it is requested.
const INSURANCE_PURCHASED_MS: i64 = 3_000;

/// An address or parcel given by id (already stored) or by fields (stored once the whole request
/// has been checked, so a refused request stores nothing).
enum Given<T> {
    Stored(Record),
    New(T),
}

/// Money as EasyPost writes fees and amounts (`"1.00000"`).
fn amount5(value: Decimal) -> String {
    format!("{:.5}", value.round_dp(5))
}

/// The insurance fee: 1 % of the value, at least $0.50.
fn insurance_fee(value: Decimal) -> Decimal {
    (value / Decimal::from(100)).max(Decimal::new(50, 2)).round_dp(2)
}

/// An insured value: a positive decimal up to the maximum.
fn read_amount(value: &Value, field: &str) -> Result<Decimal, EpError> {
    let text = match value {
        Value::String(s) => s.trim().to_owned(),
        Value::Number(n) => n.to_string(),
        _ => return Err(EpError::invalid(field, "must be an amount in USD, e.g. \"100.00\"")),
    };
    let amount: Decimal =
        text.parse().map_err(|_| EpError::invalid(field, format!("must be an amount in USD, not {text:?}")))?;
    if amount <= Decimal::ZERO {
        return Err(EpError::invalid(field, "must be greater than 0"));
    }
    if amount > Decimal::from(MAX_INSURANCE) {
        return Err(EpError::unprocessable("INSURANCE.AMOUNT.TOO_HIGH", "Insurance amount exceeds the maximum.")
            .field(field, format!("at most {MAX_INSURANCE}.00 USD")));
    }
    Ok(amount)
}

fn fee(kind: &str, amount: Decimal) -> Value {
    json!({"object": "Fee", "type": kind, "amount": amount5(amount), "charged": true, "refunded": false})
}

/// The lines an address prints as on a label.
fn label_lines(address: &Value) -> Vec<String> {
    let field = |name: &str| address.get(name).and_then(Value::as_str).unwrap_or("").to_owned();
    let mut lines: Vec<String> = ["name", "company", "street1", "street2"].iter().map(|n| field(n)).collect();
    lines.push(format!("{} {} {}", field("city"), field("state"), field("zip")));
    lines.retain(|l| !l.trim().is_empty());
    lines
}

/// Digits from the id generator (tracking codes are numbers).
fn digits(state: &mut State, count: usize) -> String {
    state.ids.hex(count).bytes().map(|b| char::from(b'0' + b % 10)).collect()
}

impl State {
    fn given_address(&self, value: Option<&Value>, field: &str) -> Result<Option<Given<Map<String, Value>>>, EpError> {
        let Some(value) = value.filter(|v| !v.is_null()) else { return Ok(None) };
        if let Some(id) = given_id(value).filter(|_| value.get("street1").is_none() && value.get("zip").is_none()) {
            let record = self.addresses.get(id).ok_or_else(|| EpError::not_found(format!("Address {id} not found")))?;
            return Ok(Some(Given::Stored(record)));
        }
        Ok(Some(Given::New(addresses::read_fields(value, field)?)))
    }

    fn keep_address(&mut self, given: Given<Map<String, Value>>, now_ms: i64) -> Record {
        match given {
            Given::Stored(record) => record,
            Given::New(fields) => self.store_address(&fields, None, now_ms),
        }
    }

    /// `POST /v2/shipments`: the shipment with its rates (and bought at once when `carrier` and
    /// `service` name one of them).
    pub fn create_shipment(&mut self, body: &Value, now_ms: i64) -> Result<Value, EpError> {
        let (id, chosen) = self.new_shipment(body, now_ms)?;
        if let Some(rate) = chosen {
            self.purchase(&id, &rate, None, now_ms)?;
        }
        self.shipment_json(&id)
    }

    /// A new shipment with its rates, not bought: its id, and the rate its `carrier` and
    /// `service` name, if they do (a shipment created inside a batch is bought with it when the
    /// batch is bought, not on creation).
    pub fn new_shipment(&mut self, body: &Value, now_ms: i64) -> Result<(String, Option<String>), EpError> {
        let input = body.get("shipment").and_then(Value::as_object).filter(|m| !m.is_empty());
        let Some(input) = input else { return Err(EpError::required("shipment")) };
        let to = self.given_address(input.get("to_address"), "shipment.to_address")?;
        let from = self.given_address(input.get("from_address"), "shipment.from_address")?;
        let (Some(to), Some(from)) = (to, from) else {
            let mut error = EpError::new(422, "PARAMETER.REQUIRED", "Missing required parameter.");
            for name in ["to_address", "from_address"] {
                if input.get(name).is_none_or(Value::is_null) {
                    error = error.field(&format!("shipment.{name}"), "cannot be blank");
                }
            }
            return Err(error);
        };
        let return_address = self.given_address(input.get("return_address"), "shipment.return_address")?;
        let buyer_address = self.given_address(input.get("buyer_address"), "shipment.buyer_address")?;
        let parcel = match input.get("parcel").filter(|v| !v.is_null()) {
            None => return Err(EpError::required("shipment.parcel")),
            Some(value) => match given_id(value).filter(|_| value.get("weight").is_none()) {
                Some(id) => Given::Stored(
                    self.parcels.get(id).ok_or_else(|| EpError::not_found(format!("Parcel {id} not found")))?,
                ),
                None => Given::New(rates::read_parcel(value, "shipment.parcel")?),
            },
        };
        let mut options = match input.get("options") {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(map)) => map.clone(),
            Some(_) => return Err(EpError::invalid("shipment.options", "must be an object")),
        };
        // A label format the caller names is echoed (normalized); none given, EasyPost's options
        // have no `label_format` (as recorded) and the label is a PNG.
        if let Some(text) = options.get("label_format").and_then(Value::as_str) {
            let format = Format::parse(text)
                .ok_or_else(|| EpError::invalid("shipment.options.label_format", "must be PNG, PDF, ZPL or EPL2"))?;
            options.insert("label_format".into(), json!(format!("{format:?}").to_uppercase()));
        }
        for (key, default) in
            [("currency", json!("USD")), ("payment", json!({"type": "SENDER"})), ("date_advance", json!(0))]
        {
            options.entry(key).or_insert(default);
        }
        // The carriers that rate it (the user's accounts still there, or those it names) and the
        // accounts the user added, which cannot rate and say so in `messages`.
        let active = self.active_carriers();
        let mut carriers: Vec<&str> = Vec::new();
        let mut added: Vec<String> = Vec::new();
        let named = input.get("carrier_accounts").filter(|v| !v.is_null());
        let named = match named {
            None => &[][..],
            Some(accounts) => accounts
                .as_array()
                .ok_or_else(|| EpError::invalid("shipment.carrier_accounts", "must be a list of ids"))?
                .as_slice(),
        };
        for item in named {
            let id = given_id(item).unwrap_or("");
            if let Some(carrier) = active.iter().find(|c| c.account_id == id) {
                carriers.push(carrier.name);
            } else if self.added_account_message(id).is_some() {
                added.push(id.to_owned());
            } else {
                return Err(EpError::invalid(
                    "shipment.carrier_accounts",
                    format!("no carrier account {id:?} on this account"),
                ));
            }
        }
        if named.is_empty() {
            carriers = active.iter().map(|c| c.name).collect();
            added = self.added_accounts();
        }
        let wanted_carrier = input.get("carrier").and_then(Value::as_str).map(str::to_owned);
        let wanted_service = input.get("service").and_then(Value::as_str).map(str::to_owned);
        if let Some(carrier) = &wanted_carrier {
            if !active.iter().any(|c| c.name.eq_ignore_ascii_case(carrier)) {
                return Err(EpError::invalid("shipment.carrier", format!("no carrier account for {carrier:?}")));
            }
        }
        let reference = match input.get("reference") {
            // An empty reference is none (recorded: `"reference": ""` is answered `null`).
            None | Some(Value::Null) => Value::Null,
            Some(Value::String(s)) if s.is_empty() => Value::Null,
            Some(Value::String(s)) => json!(s),
            Some(Value::Number(n)) => json!(n.to_string()),
            Some(_) => return Err(EpError::invalid("shipment.reference", "must be a string")),
        };
        let is_return = match input.get("is_return") {
            None | Some(Value::Null) => false,
            Some(Value::Bool(b)) => *b,
            Some(Value::String(s)) if s.eq_ignore_ascii_case("true") => true,
            Some(Value::String(s)) if s.eq_ignore_ascii_case("false") => false,
            Some(_) => return Err(EpError::invalid("shipment.is_return", "must be true or false")),
        };
        // The last check: a customs info given as fields is stored (with its items) only once
        // it reads whole; from here on the request is stored.
        let customs_info = self.shipment_customs(input.get("customs_info"), now_ms)?;
        let to = self.keep_address(to, now_ms);
        let from = self.keep_address(from, now_ms);
        let return_address = return_address.map_or_else(|| from.clone(), |g| self.keep_address(g, now_ms));
        let buyer_address = buyer_address.map_or_else(|| to.clone(), |g| self.keep_address(g, now_ms));
        let parcel = match parcel {
            Given::Stored(record) => record,
            Given::New(parcel) => {
                let mut record = self.base("prcl", "Parcel", now_ms);
                record.extend(parcel.to_json());
                self.keep(|s| &mut s.parcels, text(&record, "id").to_owned(), now_ms, &record);
                record
            }
        };
        let mut shipment = self.base("shp", "Shipment", now_ms);
        let shipment_id = text(&shipment, "id").to_owned();
        let measures = Parcel::from_json(&parcel);
        let (route, mut messages) = route_between(&from, &to);
        if let Some(carrier) = &wanted_carrier {
            carriers.retain(|c| c.eq_ignore_ascii_case(carrier));
            if carriers.is_empty() {
                carriers.extend(active.iter().filter(|c| c.name.eq_ignore_ascii_case(carrier)).map(|c| c.name));
            }
        }
        messages.extend(added.iter().filter_map(|id| self.added_account_message(id)));
        let mut rate_records = Vec::new();
        let mut usps_zone = Value::Null;
        // No carrier left to rate it (every account of the three deleted): no rates.
        if let (Some(route), Some(measures), false) = (route, measures, carriers.is_empty()) {
            if let Route::Domestic(zone) = route {
                usps_zone = json!(zone);
            }
            let (quotes, refusals) = rates::quote(&measures, route, &carriers);
            messages.extend(refusals.iter().map(rates::RatingMessage::to_json));
            for quote in quotes {
                let mut rate = self.base("rate", "Rate", now_ms);
                for (k, v) in [
                    ("service", json!(quote.service)),
                    ("carrier", json!(quote.carrier)),
                    ("rate", json!(quote.rate.to_string())),
                    ("currency", json!("USD")),
                    ("retail_rate", json!(quote.retail_rate.to_string())),
                    ("retail_currency", json!("USD")),
                    ("list_rate", json!(quote.list_rate.to_string())),
                    ("list_currency", json!("USD")),
                    ("billing_type", json!("easypost")),
                    ("delivery_days", json!(quote.delivery_days)),
                    ("delivery_date", Value::Null),
                    ("delivery_date_guaranteed", json!(false)),
                    ("est_delivery_days", json!(quote.delivery_days)),
                    ("shipment_id", json!(shipment_id)),
                    ("carrier_account_id", json!(quote.carrier_account_id)),
                ] {
                    rate.insert(k.to_owned(), v);
                }
                self.add_rate(text(&rate, "id"), &shipment_id);
                rate_records.push(Value::Object(rate));
            }
        }
        for (k, v) in [
            ("is_return", json!(is_return)),
            ("reference", reference),
            ("status", json!("unknown")),
            ("tracking_code", Value::Null),
            ("options", Value::Object(options)),
            ("messages", json!(messages)),
            ("batch_id", Value::Null),
            ("batch_status", Value::Null),
            ("batch_message", Value::Null),
            ("to_address", Value::Object(to)),
            ("from_address", Value::Object(from)),
            ("return_address", Value::Object(return_address)),
            ("buyer_address", Value::Object(buyer_address)),
            ("parcel", Value::Object(parcel)),
            ("customs_info", customs_info),
            ("insurance", Value::Null),
            ("rates", Value::Array(rate_records)),
            ("selected_rate", Value::Null),
            ("postage_label", Value::Null),
            ("tracker", Value::Null),
            ("refund_status", Value::Null),
            ("scan_form", Value::Null),
            ("forms", json!([])),
            ("fees", json!([])),
            ("order_id", Value::Null),
            ("usps_zone", usps_zone),
        ] {
            shipment.insert(k.to_owned(), v);
        }
        self.keep(|s| &mut s.shipments, shipment_id.clone(), now_ms, &shipment);
        let mut chosen = None;
        if let (Some(carrier), Some(service)) = (wanted_carrier, wanted_service) {
            let rate = self.rate_of(&shipment_id, |r| {
                text(r, "carrier").eq_ignore_ascii_case(&carrier) && text(r, "service").eq_ignore_ascii_case(&service)
            });
            match rate {
                Some(rate) => chosen = Some(rate),
                None => {
                    return Err(EpError::unprocessable(
                        "SHIPMENT.RATE.NOT_FOUND",
                        "No rate matches the carrier and service.",
                    )
                    .field("shipment.service", format!("{carrier} has no {service} rate for this shipment")))
                }
            }
        }
        Ok((shipment_id, chosen))
    }

    /// The id of the first rate of a shipment that `matches`.
    pub fn rate_of(&self, shipment_id: &str, matches: impl Fn(&Map<String, Value>) -> bool) -> Option<String> {
        let shipment = self.shipments.get(shipment_id)?;
        shipment["rates"]
            .as_array()?
            .iter()
            .filter_map(Value::as_object)
            .find(|r| matches(r))
            .map(|r| text(r, "id").to_owned())
    }

    /// The tracker a shipment or an insurance record embeds, as it is now (the record holds the
    /// copy made when it was bought).
    fn current_tracker(&self, record: &Record) -> Option<Record> {
        record.get("tracker").and_then(|t| t.get("id")).and_then(Value::as_str).and_then(|id| self.trackers.get(id))
    }

    /// A shipment as the API returns it: with its tracker as it is now.
    pub fn render_shipment(&self, shipment: &Record) -> Value {
        let mut out = shipment.clone();
        if let Some(tracker) = self.current_tracker(shipment) {
            out.insert("status".into(), tracker["status"].clone());
            out.insert("tracker".into(), Value::Object(tracker));
        }
        // A tracker inside a shipment has no `finalized` nor `is_return` (recorded, every time;
        // the Tracker object itself has both).
        if let Some(Value::Object(tracker)) = out.get_mut("tracker") {
            tracker.remove("finalized");
            tracker.remove("is_return");
        }
        Value::Object(out)
    }

    pub fn shipment_json(&self, id: &str) -> Result<Value, EpError> {
        self.shipments
            .get(id)
            .map(|s| self.render_shipment(&s))
            .ok_or_else(|| EpError::not_found(format!("Shipment {id} not found")))
    }

    pub fn list_shipments(&self, query: &Query) -> Result<Value, EpError> {
        let purchased = match query.get("purchased").map(str::to_ascii_lowercase).as_deref() {
            None | Some("") => None,
            Some("true") => Some(true),
            Some("false") => Some(false),
            Some(other) => return Err(EpError::invalid("purchased", format!("must be true or false, not {other:?}"))),
        };
        self.list(
            |s| &s.shipments,
            "shipments",
            query,
            // Bought shipments only, unless `purchased=false` asks for all.
            |s| purchased == Some(false) || s.tag().is_some(),
            State::render_shipment,
        )
    }

    /// `GET /v2/shipments/{id}/smartrate`: `{"result": [...]}`, each of the shipment's rates as
    /// SmartRate renders it (amounts as numbers, no `billing_type`) with `time_in_transit`: the
    /// days by which that share of the carrier's packages on this service arrived.
    pub fn smartrates(&self, id: &str) -> Result<Value, EpError> {
        let shipment = self.shipments.get(id).ok_or_else(|| EpError::not_found(format!("Shipment {id} not found")))?;
        let number = |v: &Value| v.as_str().and_then(|s| s.parse::<f64>().ok()).map_or(Value::Null, |n| json!(n));
        let result: Vec<Value> = shipment["rates"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_object)
            .map(|rate| {
                let mut out = rate.clone();
                out.remove("billing_type");
                for key in ["rate", "retail_rate", "list_rate"] {
                    let value = number(&rate[key]);
                    out.insert(key.to_owned(), value);
                }
                let days = rate.get("delivery_days").and_then(Value::as_i64).unwrap_or(3).max(1);
                out.insert(
                    "time_in_transit".into(),
                    json!({"percentile_50": days, "percentile_75": days, "percentile_85": days,
                           "percentile_90": days + 1, "percentile_95": days + 1, "percentile_97": days + 2,
                           "percentile_99": days + 3}),
                );
                Value::Object(out)
            })
            .collect();
        Ok(json!({"result": result}))
    }

    /// `GET /v2/rates/{id}`: a rate of any shipment, as the shipment holds it.
    pub fn rate_json(&self, rate_id: &str) -> Result<Value, EpError> {
        let missing = || EpError::not_found(format!("Rate {rate_id} not found"));
        let owner = self.rate_owner(rate_id).ok_or_else(missing)?;
        let shipment = self.shipments.get(&owner).ok_or_else(missing)?;
        shipment["rates"]
            .as_array()
            .and_then(|rates| rates.iter().find(|r| r["id"] == rate_id))
            .cloned()
            .ok_or_else(missing)
    }

    /// `POST /v2/shipments/{id}/buy`.
    pub fn buy_shipment(&mut self, id: &str, body: &Value, now_ms: i64) -> Result<Value, EpError> {
        let shipment = self.shipments.get(id).ok_or_else(|| EpError::not_found(format!("Shipment {id} not found")))?;
        if !shipment["selected_rate"].is_null() {
            return Err(EpError::unprocessable(
                "SHIPMENT.POSTAGE.EXISTS",
                "A postage label has already been purchased for this shipment.",
            ));
        }
        let rate_id = body.get("rate").and_then(given_id).ok_or_else(|| EpError::required("rate"))?;
        match self.rate_owner(rate_id) {
            None => return Err(EpError::not_found(format!("Rate {rate_id} not found"))),
            Some(owner) if owner != id => {
                return Err(EpError::unprocessable(
                    "SHIPMENT.RATE.INVALID",
                    "The rate does not belong to this shipment.",
                )
                .field("rate", format!("{rate_id} is a rate of {owner}")))
            }
            Some(_) => {}
        }
        let insurance = match body.get("insurance").filter(|v| !v.is_null() && v.as_str() != Some("")) {
            None => None,
            Some(value) => Some(read_amount(value, "insurance")?),
        };
        let rate_id = rate_id.to_owned();
        self.purchase(id, &rate_id, insurance, now_ms)?;
        self.shipment_json(id)
    }

    /// Buys a shipment's rate: label, tracking code, tracker, fees. The caller checked the rate
    /// is the shipment's and that it is not bought yet.
    pub fn purchase(
        &mut self,
        id: &str,
        rate_id: &str,
        insurance: Option<Decimal>,
        now_ms: i64,
    ) -> Result<(), EpError> {
        let shipment = self.shipments.get(id).ok_or_else(|| EpError::not_found(format!("Shipment {id} not found")))?;
        let rate = shipment["rates"]
            .as_array()
            .and_then(|rates| rates.iter().find(|r| r["id"] == rate_id))
            .cloned()
            .ok_or_else(|| EpError::not_found(format!("Rate {rate_id} not found")))?;
        let carrier = rate["carrier"].as_str().unwrap_or("USPS").to_owned();
        let code = match carrier.as_str() {
            "UPS" => format!("1Z{}03{}", self.ids.alphanumeric(6).to_uppercase(), digits(self, 8)),
            "FedEx" => digits(self, 12),
            _ => format!("9400{}", digits(self, 18)),
        };
        let format = shipment["options"]["label_format"].as_str().and_then(Format::parse).unwrap_or(Format::Png);
        let label_url =
            self.file_url("postage_label", now_ms, format, FileRef::Label { shipment: id.to_owned(), format });
        let mut label = self.base("pl", "PostageLabel", now_ms);
        for (k, v) in [
            ("date_advance", json!(0)),
            ("integrated_form", json!("none")),
            ("label_date", json!(time(now_ms))),
            ("label_resolution", json!(300)),
            ("label_size", json!("4x6")),
            ("label_type", json!("default")),
            ("label_file_type", json!(format.mime())),
            ("label_url", json!(label_url)),
            ("label_pdf_url", Value::Null),
            ("label_zpl_url", Value::Null),
            ("label_epl2_url", Value::Null),
            ("label_file", Value::Null),
        ] {
            label.insert(k.to_owned(), v);
        }
        label.remove("mode");
        let postage: Decimal = rate["rate"].as_str().and_then(|r| r.parse().ok()).unwrap_or_default();
        let mut fees = vec![fee("LabelFee", Decimal::ZERO), fee("PostageFee", postage)];
        if let Some(value) = insurance {
            fees.push(fee("InsuranceFee", insurance_fee(value)));
        }
        let days = rate["delivery_days"].as_i64().unwrap_or(3);
        let weight = shipment["parcel"]["weight"].as_f64();
        let from = shipment["from_address"].as_object().map(Place::of_address);
        let to = shipment["to_address"].as_object().map(Place::of_address);
        let spec = TrackerSpec {
            code: &code,
            carrier: &carrier,
            shipment_id: Some(id),
            from,
            to,
            weight_oz: weight,
            delivery_days: days,
        };
        let tracker = self.start_tracker(&spec, now_ms);
        let verified_to = shipment["to_address"].as_object().and_then(|to| self.verify_on_purchase(to, now_ms));
        let fields = [
            ("selected_rate", rate),
            ("tracking_code", json!(code)),
            ("postage_label", Value::Object(label)),
            ("tracker", Value::Object(tracker)),
            ("fees", Value::Array(fees)),
            ("insurance", insurance.map_or(Value::Null, |v| json!(format!("{:.2}", v)))),
            ("updated_at", json!(time(now_ms))),
        ];
        self.shipments
            .update(id, |record| {
                for (k, v) in fields {
                    record.insert(k.to_owned(), v);
                }
                if let Some(to) = verified_to {
                    for key in ["to_address", "buyer_address"] {
                        if record[key]["id"] == to["id"] {
                            record.insert(key.to_owned(), Value::Object(to.clone()));
                        }
                    }
                }
            })
            .ok_or_else(|| EpError::not_found(format!("Shipment {id} not found")))
    }

    /// Buying verifies the destination, as EasyPost does: the stored to-address (same id) becomes
    /// the Postal Service's form of it, with `verifications` (zip4, delivery with coordinates and
    /// time zone) and `residential` decided. An address that does not verify stays as given.
    fn verify_on_purchase(&mut self, to: &Record, now_ms: i64) -> Option<Record> {
        if to.get("verifications").and_then(|v| v.get("delivery")).is_some() {
            return None;
        }
        let fields = addresses::read_fields(&Value::Object(to.clone()), "to_address").ok()?;
        let verification = addresses::verify(&fields);
        if !verification.delivery_ok {
            return None;
        }
        let mut record = to.clone();
        for name in addresses::FIELDS {
            record.insert(name.to_owned(), verification.normalized.get(name).cloned().unwrap_or(Value::Null));
        }
        record.insert("verifications".into(), verification.only(&["zip4", "delivery"]));
        record.insert("updated_at".into(), json!(super::state::address_time(now_ms)));
        let id = text(&record, "id").to_owned();
        self.addresses.update(&id, |stored| stored.clone_from(&record));
        Some(record)
    }

    /// `GET /v2/shipments/{id}/label?file_format=`: the label in another format too.
    pub fn convert_label(&mut self, id: &str, query: &Query, now_ms: i64) -> Result<Value, EpError> {
        let raw = query
            .get("file_format")
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .ok_or_else(|| EpError::required("file_format"))?;
        let format = Format::parse(raw)
            .ok_or_else(|| EpError::invalid("file_format", format!("{raw:?} is not PDF, ZPL, EPL2 or PNG")))?;
        let shipment = self.shipments.get(id).ok_or_else(|| EpError::not_found(format!("Shipment {id} not found")))?;
        if shipment["postage_label"].is_null() {
            return Err(EpError::unprocessable(
                "SHIPMENT.POSTAGE.REQUIRED",
                "The shipment has no label: buy it first.",
            ));
        }
        let field = format.url_field();
        if shipment["postage_label"][field].is_null() {
            let url =
                self.file_url("postage_label", now_ms, format, FileRef::Label { shipment: id.to_owned(), format });
            self.shipments.update(id, |s| {
                if let Some(Value::Object(label)) = s.get_mut("postage_label") {
                    label.insert(field.to_owned(), json!(url));
                    label.insert("updated_at".into(), json!(time(now_ms)));
                }
            });
        }
        self.shipment_json(id)
    }

    /// What a shipment's label prints.
    pub fn label_of(&self, id: &str) -> Option<Label> {
        let shipment = self.shipments.get(id)?;
        let rate = shipment.get("selected_rate").filter(|r| !r.is_null())?;
        Some(Label {
            carrier: rate["carrier"].as_str().unwrap_or("").to_owned(),
            service: rate["service"].as_str().unwrap_or("").to_owned(),
            tracking_code: text(&shipment, "tracking_code").to_owned(),
            from: label_lines(&shipment["from_address"]),
            to: label_lines(&shipment["to_address"]),
            weight_oz: shipment["parcel"]["weight"].as_f64().unwrap_or(0.0),
            date: shipment["postage_label"]["label_date"].as_str().unwrap_or("").chars().take(10).collect(),
            reference: shipment.get("reference").and_then(Value::as_str).map(str::to_owned),
        })
    }

    /// `POST /v2/shipments/{id}/insure`: insures a bought shipment.
    pub fn insure_shipment(&mut self, id: &str, body: &Value, now_ms: i64) -> Result<Value, EpError> {
        let amount = read_amount(body.get("amount").ok_or_else(|| EpError::required("amount"))?, "amount")?;
        let shipment = self.shipments.get(id).ok_or_else(|| EpError::not_found(format!("Shipment {id} not found")))?;
        if shipment["selected_rate"].is_null() {
            return Err(EpError::unprocessable(
                "SHIPMENT.POSTAGE.REQUIRED",
                "Insure a shipment once its postage is bought.",
            ));
        }
        if !shipment["insurance"].is_null() {
            return Err(EpError::unprocessable("SHIPMENT.INSURANCE.EXISTS", "This shipment is already insured."));
        }
        self.shipments.update(id, |shipment| {
            shipment.insert("insurance".into(), json!(format!("{amount:.2}")));
            if let Some(Value::Array(fees)) = shipment.get_mut("fees") {
                fees.push(fee("InsuranceFee", insurance_fee(amount)));
            }
            shipment.insert("updated_at".into(), json!(time(now_ms)));
        });
        self.shipment_json(id)
    }

    // ---- refunds ---------------------------------------------------------------------------

    /// Checks a shipment can be refunded; the id of its tracker.
    fn refundable(&self, shipment_id: &str) -> Result<String, EpError> {
        let shipment = self
            .shipments
            .get(shipment_id)
            .ok_or_else(|| EpError::not_found(format!("Shipment {shipment_id} not found")))?;
        if shipment["selected_rate"].is_null() {
            return Err(EpError::unprocessable(
                "SHIPMENT.REFUND.UNAVAILABLE",
                "Postage has not been purchased for this shipment.",
            ));
        }
        if matches!(shipment["refund_status"].as_str(), Some("submitted" | "refunded")) {
            return Err(EpError::unprocessable(
                "SHIPMENT.REFUND.EXISTS",
                format!("A refund has already been requested for {}.", text(&shipment, "tracking_code")),
            ));
        }
        Ok(shipment["tracker"]["id"].as_str().unwrap_or("").to_owned())
    }

    /// Requests the refund of a bought shipment: submitted, or rejected at once when the carrier
    /// has already scanned the package.
    fn refund(&mut self, shipment_id: &str, tracker_id: &str, now_ms: i64) -> Record {
        let scanned =
            self.trackers.get(tracker_id).is_some_and(|t| !matches!(text(&t, "status"), "unknown" | "pre_transit"));
        let status = if scanned { "rejected" } else { "submitted" };
        let (code, carrier) = self
            .shipments
            .get(shipment_id)
            .map(|s| {
                (text(&s, "tracking_code").to_owned(), s["selected_rate"]["carrier"].as_str().unwrap_or("").to_owned())
            })
            .unwrap_or_default();
        let mut refund = self.base("rfnd", "Refund", now_ms);
        refund.remove("mode");
        for (k, v) in [
            ("tracking_code", json!(code)),
            ("confirmation_number", Value::Null),
            ("status", json!(status)),
            ("carrier", json!(carrier)),
            ("shipment_id", json!(shipment_id)),
        ] {
            refund.insert(k.to_owned(), v);
        }
        let refund_id = text(&refund, "id").to_owned();
        self.keep(|s| &mut s.refunds, refund_id.clone(), now_ms, &refund);
        self.shipments.update(shipment_id, |shipment| {
            shipment.insert("refund_status".into(), json!(status));
            shipment.insert("updated_at".into(), json!(time(now_ms)));
        });
        if !scanned {
            self.halt_tracker(tracker_id);
            self.schedule(now_ms + REFUND_SETTLES_MS, Step::Refund(refund_id));
        }
        refund
    }

    /// `POST /v2/refunds`: one refund per tracking code; a code already refunded refuses the
    /// whole request, and nothing changes. A code no bought shipment of the account has is a
    /// refund `rejected` at once, of no shipment: uncertain what EasyPost answers there, so the
    /// request is taken (201), not refused, and nothing is given back.
    pub fn create_refunds(&mut self, body: &Value, now_ms: i64) -> Result<Value, EpError> {
        let input = body.get("refund").and_then(Value::as_object).ok_or_else(|| EpError::required("refund"))?;
        let carrier = input.get("carrier").and_then(Value::as_str).map(str::trim).filter(|s| !s.is_empty());
        let carrier = carrier.ok_or_else(|| EpError::required("refund.carrier"))?;
        let codes: Vec<String> = match input.get("tracking_codes") {
            Some(Value::Array(items)) if !items.is_empty() => items
                .iter()
                .map(|i| i.as_str().map(str::trim).map(str::to_owned))
                .collect::<Option<_>>()
                .ok_or_else(|| EpError::invalid("refund.tracking_codes", "must be a list of tracking codes"))?,
            Some(Value::String(one)) if !one.trim().is_empty() => vec![one.trim().to_owned()],
            _ => return Err(EpError::required("refund.tracking_codes")),
        };
        let mut found = Vec::new();
        for code in &codes {
            let shipment = self
                .shipments
                .iter()
                .find(|s| {
                    s.tag() == Some(code.as_str())
                        && s.record()["selected_rate"]["carrier"]
                            .as_str()
                            .is_some_and(|c| c.eq_ignore_ascii_case(carrier))
                })
                .map(|s| s.id().to_owned());
            match shipment {
                Some(shipment) => {
                    let tracker = self.refundable(&shipment)?;
                    found.push(Ok((shipment, tracker)));
                }
                None if code.is_empty() || code.len() > 50 || !code.chars().all(|c| c.is_ascii_alphanumeric()) => {
                    return Err(EpError::invalid(
                        "refund.tracking_codes",
                        "each must be a tracking code: letters and digits, at most 50",
                    ));
                }
                None => found.push(Err(code.clone())),
            }
        }
        let refunds: Vec<Value> = found
            .iter()
            .map(|item| match item {
                Ok((shipment, tracker)) => Value::Object(self.refund(shipment, tracker, now_ms)),
                Err(code) => Value::Object(self.rejected_refund(code, carrier, now_ms)),
            })
            .collect();
        Ok(Value::Array(refunds))
    }

    /// A refund of a tracking code no bought shipment of the account has: rejected, of no shipment.
    fn rejected_refund(&mut self, code: &str, carrier: &str, now_ms: i64) -> Record {
        let mut refund = self.base("rfnd", "Refund", now_ms);
        refund.remove("mode");
        for (k, v) in [
            ("tracking_code", json!(code)),
            ("confirmation_number", Value::Null),
            ("status", json!("rejected")),
            ("carrier", json!(carrier)),
            ("shipment_id", Value::Null),
        ] {
            refund.insert(k.to_owned(), v);
        }
        let refund_id = text(&refund, "id").to_owned();
        self.keep(|s| &mut s.refunds, refund_id, now_ms, &refund);
        refund
    }

    /// `POST /v2/shipments/{id}/refund`.
    pub fn refund_shipment(&mut self, id: &str, now_ms: i64) -> Result<Value, EpError> {
        let tracker = self.refundable(id)?;
        self.refund(id, &tracker, now_ms);
        self.shipment_json(id)
    }

    /// The carrier answers a submitted refund: refunded, the postage fee given back.
    pub fn settle_refund(&mut self, id: &str, at_ms: i64) {
        let Some(refund) = self.refunds.get(id) else { return };
        if text(&refund, "status") != "submitted" {
            return;
        }
        let Some(refund) = self.refunds.update(id, |refund| {
            refund.insert("status".into(), json!("refunded"));
            refund.insert("updated_at".into(), json!(time(at_ms)));
            refund.clone()
        }) else {
            return;
        };
        let snapshot = Value::Object(refund.clone());
        let shipment_id = text(&refund, "shipment_id").to_owned();
        self.shipments.update(&shipment_id, |shipment| {
            shipment.insert("refund_status".into(), json!("refunded"));
            shipment.insert("updated_at".into(), json!(time(at_ms)));
            if let Some(Value::Array(fees)) = shipment.get_mut("fees") {
                for fee in fees.iter_mut().filter(|f| f["type"] == "PostageFee") {
                    fee["refunded"] = json!(true);
                }
            }
        });
        self.emit("refund.successful", snapshot, json!({"status": "submitted"}), at_ms);
    }

    // ---- insurance -------------------------------------------------------------------------

    /// `POST /v2/insurances`: insurance for a package shipped elsewhere, pending until purchased.
    pub fn create_insurance(&mut self, body: &Value, now_ms: i64) -> Result<Record, EpError> {
        let input = body.get("insurance").filter(|v| v.is_object()).ok_or_else(|| EpError::required("insurance"))?;
        let (code, carrier) = read_code_and_carrier(input, "insurance")?;
        let amount =
            read_amount(input.get("amount").ok_or_else(|| EpError::required("insurance.amount"))?, "insurance.amount")?;
        let to = self
            .given_address(input.get("to_address"), "insurance.to_address")?
            .ok_or_else(|| EpError::required("insurance.to_address"))?;
        let from = self
            .given_address(input.get("from_address"), "insurance.from_address")?
            .ok_or_else(|| EpError::required("insurance.from_address"))?;
        let reference = input.get("reference").and_then(Value::as_str).map(str::to_owned);
        let mut addresses = Vec::new();
        for given in [to, from] {
            // Insured addresses are stored as the Postal Service writes them when they verify.
            let address = match given {
                Given::Stored(record) => record,
                Given::New(fields) => {
                    let verification = addresses::verify(&fields);
                    let checks = ["delivery"];
                    let verified = verification.delivery_ok.then_some((&verification, &checks[..]));
                    self.store_address(&fields, verified, now_ms)
                }
            };
            addresses.push(Value::Object(address));
        }
        let tracker = self.tracker_for(&code, &carrier, now_ms);
        let mut record = self.base("ins", "Insurance", now_ms);
        let from = addresses.pop().unwrap_or(Value::Null);
        let to = addresses.pop().unwrap_or(Value::Null);
        for (k, v) in [
            ("reference", json!(reference)),
            ("status", json!("pending")),
            ("amount", json!(amount5(amount))),
            ("provider", json!("easypost")),
            ("provider_id", Value::Null),
            ("to_address", to),
            ("from_address", from),
            ("shipment_id", Value::Null),
            ("tracker", Value::Object(tracker)),
            ("tracking_code", json!(code)),
            ("fee", fee("InsuranceFee", insurance_fee(amount))),
            ("messages", json!([])),
        ] {
            record.insert(k.to_owned(), v);
        }
        let id = text(&record, "id").to_owned();
        self.keep(|s| &mut s.insurances, id.clone(), now_ms, &record);
        self.schedule(now_ms + INSURANCE_PURCHASED_MS, Step::Insurance(id.clone()));
        Ok(self.insurances.get(&id).map(|r| self.render_insurance(&r)).unwrap_or_default())
    }

    /// Insurance as the API returns it, with its tracker as it is now.
    pub fn render_insurance(&self, insurance: &Record) -> Record {
        let mut out = insurance.clone();
        if let Some(tracker) = self.current_tracker(insurance) {
            out.insert("tracker".into(), Value::Object(tracker));
        }
        out
    }

    pub fn purchase_insurance(&mut self, id: &str, at_ms: i64) {
        let Some(record) = self.insurances.get(id) else { return };
        if text(&record, "status") != "pending" {
            return;
        }
        self.insurances.update(id, |record| {
            record.insert("status".into(), json!("purchased"));
            record.insert("updated_at".into(), json!(time(at_ms)));
        });
        let snapshot = self.insurances.get(id).map(|r| Value::Object(self.render_insurance(&r))).unwrap_or_default();
        self.emit("insurance.purchased", snapshot, json!({"status": "pending"}), at_ms);
    }

    /// `POST /v2/insurances/{id}/refund`: only standalone insurance, and only while the package
    /// has not been scanned by the carrier.
    pub fn refund_insurance(&mut self, id: &str, now_ms: i64) -> Result<Record, EpError> {
        let record = self.insurances.get(id).ok_or_else(|| EpError::not_found(format!("Insurance {id} not found")))?;
        let tracker_status =
            self.current_tracker(&record).map_or_else(|| "unknown".to_owned(), |t| text(&t, "status").to_owned());
        let eligible = record["shipment_id"].is_null()
            && matches!(text(&record, "status"), "new" | "pending" | "purchased")
            && matches!(tracker_status.as_str(), "unknown" | "pre_transit");
        if !eligible {
            return Err(EpError::new(404, "NOT_FOUND", "The requested resource could not be found.")
                .note("No eligible insurance found with provided tracking code."));
        }
        let previous = text(&record, "status").to_owned();
        self.insurances
            .update(id, |record| {
                record.insert("status".into(), json!("cancelled"));
                record.insert("updated_at".into(), json!(time(now_ms)));
                if let Some(fee) = record.get_mut("fee") {
                    fee["refunded"] = json!(true);
                }
            })
            .ok_or_else(|| EpError::not_found("Insurance not found"))?;
        let rendered = self.insurances.get(id).map(|r| self.render_insurance(&r)).unwrap_or_default();
        self.emit("insurance.cancelled", Value::Object(rendered.clone()), json!({"status": previous}), now_ms);
        Ok(rendered)
    }
}

/// How to rate between two addresses: a zone within the US, international, or why neither.
fn route_between(from: &Record, to: &Record) -> (Option<Route>, Vec<Value>) {
    let country = |r: &Record| text(r, "country").to_owned();
    if country(from) != "US" || country(to) != "US" {
        return (Some(Route::International), Vec::new());
    }
    match (coordinates(from), coordinates(to)) {
        (Some(a), Some(b)) => (Some(Route::Domestic(rates::zone(addresses::miles(a, b)))), Vec::new()),
        (a, _) => {
            let (which, record) = if a.is_none() { ("from_address", from) } else { ("to_address", to) };
            let message = format!(
                "{which}: {:?} is not a US ZIP code, so no carrier can rate this shipment",
                text(record, "zip")
            );
            let messages = CARRIERS
                .iter()
                .map(|c| json!({"carrier": c.name, "carrier_account_id": c.account_id, "type": "rate_error", "message": message}))
                .collect();
            (None, messages)
        }
    }
}
