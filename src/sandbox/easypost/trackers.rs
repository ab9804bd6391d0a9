//! Trackers: a package's scans, planned when its tracker is created and made to happen on the
//! sandbox clock — pre_transit at once, in_transit within 30 s, out_for_delivery and then delivered
//! (or an exception: returned to sender, a delivery failure, held for pickup) a few minutes later
//! at the default speed. Which packages end in an exception is decided by the seed and the code.
//! EasyPost's test codes (`EZ1000000001` … `EZ7000000007`) stand still in their documented status.

use serde_json::{json, Value};

use super::addresses::{self, zip_place};
use super::errors::EpError;
use super::state::{text, time, Place, Scan, State, Step};
use super::store::Record;
use crate::sandbox::request::Query;

/// Seconds after creation of each planned scan of a moving package.
const SCHEDULE_S: [i64; 6] = [0, 20, 60, 100, 150, 200];

impl Place {
    fn to_json(&self) -> Value {
        json!({"object": "TrackingLocation", "city": self.city, "state": self.state, "country": "US", "zip": self.zip})
    }

    fn of_zip(zip: &str) -> Option<Place> {
        zip_place(zip).map(|p| Place { city: p.city.to_uppercase(), state: p.state.to_owned(), zip: p.zip.to_owned() })
    }

    /// The place of an address record (its ZIP's place when known, else as written).
    pub fn of_address(address: &Record) -> Place {
        Place::of_zip(text(address, "zip")).unwrap_or_else(|| Place {
            city: text(address, "city").to_uppercase(),
            state: text(address, "state").to_uppercase(),
            zip: text(address, "zip").chars().take(5).collect(),
        })
    }

    fn coordinates(&self) -> Option<(f64, f64)> {
        zip_place(&self.zip).map(|p| (p.latitude, p.longitude))
    }
}

/// Sorting and hub facilities a package passes through: the one nearest the middle of its trip.
const HUBS: [&str; 12] =
    ["38118", "40209", "46241", "75261", "60666", "30320", "94621", "07114", "80249", "84116", "85034", "98158"];

fn hub_between(a: &Place, b: &Place) -> Place {
    let middle = match (a.coordinates(), b.coordinates()) {
        (Some(x), Some(y)) => ((x.0 + y.0) / 2.0, (x.1 + y.1) / 2.0),
        (Some(x), None) | (None, Some(x)) => x,
        (None, None) => (39.0, -95.0),
    };
    HUBS.iter()
        .filter_map(|zip| Place::of_zip(zip))
        .min_by(|p, q| {
            let d = |place: &Place| place.coordinates().map_or(f64::MAX, |c| addresses::miles(c, middle));
            d(p).total_cmp(&d(q))
        })
        .unwrap_or_else(|| b.clone())
}

/// FNV-1a of a tracking code with the seed: which ending a package gets.
fn fate(seed: u64, code: &str) -> u64 {
    code.bytes().fold(0xcbf2_9ce4_8422_2325 ^ seed, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)) % 100
}

/// The carrier a code's shape belongs to, when none is given.
pub fn detect_carrier(code: &str) -> Option<&'static str> {
    let digits = code.chars().all(|c| c.is_ascii_digit());
    if code.starts_with("EZ") {
        Some("USPS")
    } else if code.to_ascii_uppercase().starts_with("1Z") && code.len() == 18 {
        Some("UPS")
    } else if digits && (20..=22).contains(&code.len()) && code.starts_with('9') {
        Some("USPS")
    } else if digits && matches!(code.len(), 12 | 15) {
        Some("FedEx")
    } else {
        None
    }
}

/// The scans of a moving package from `from` to `to`, starting at `start_ms`.
pub fn plan(seed: u64, carrier: &str, code: &str, from: &Place, to: &Place, start_ms: i64) -> Vec<Scan> {
    let hub = hub_between(from, to);
    let at = |i: usize| start_ms + SCHEDULE_S[i] * 1000;
    let scan = |i: usize, status, detail, message: String, place: &Place| Scan {
        at_ms: at(i),
        status,
        status_detail: detail,
        message,
        place: place.clone(),
    };
    let mut scans = vec![
        scan(0, "pre_transit", "label_created", format!("Shipping Label Created, {carrier} Awaiting Item"), from),
        scan(0, "pre_transit", "status_update", format!("Pre-Shipment Info Sent to {carrier}"), from),
        scan(1, "in_transit", "received_at_origin_facility", format!("Accepted at {carrier} Origin Facility"), from),
        scan(2, "in_transit", "departed_facility", format!("Departed {carrier} Regional Facility"), &hub),
        scan(
            3,
            "in_transit",
            "received_at_destination_facility",
            format!("Arrived at {carrier} Destination Facility"),
            to,
        ),
        scan(4, "out_for_delivery", "out_for_delivery", "Out for Delivery".to_owned(), to),
    ];
    let last = match fate(seed, code) {
        0..=3 => scan(5, "return_to_sender", "return", "Return to Sender: Insufficient Address".to_owned(), to),
        4..=6 => scan(5, "failure", "delivery_exception", "Delivery Exception: Package Damaged".to_owned(), to),
        7..=8 => scan(
            5,
            "available_for_pickup",
            "arrived_at_pickup_location",
            "Available for Pickup at the Post Office".to_owned(),
            to,
        ),
        _ => scan(5, "delivered", "arrived_at_destination", "Delivered, In/At Mailbox".to_owned(), to),
    };
    scans.push(last);
    scans
}

/// The scans of an EasyPost test code, all at `at_ms`; `None` for other codes.
fn test_code_scans(code: &str, at_ms: i64) -> Option<Vec<Scan>> {
    let status = match code {
        "EZ1000000001" => "pre_transit",
        "EZ2000000002" => "in_transit",
        "EZ3000000003" => "out_for_delivery",
        "EZ4000000004" => "delivered",
        "EZ5000000005" => "return_to_sender",
        "EZ6000000006" => "failure",
        "EZ7000000007" => "unknown",
        _ => return None,
    };
    if status == "unknown" {
        return Some(Vec::new());
    }
    let from = Place { city: "HOUSTON".into(), state: "TX".into(), zip: "77063".into() };
    let to = Place { city: "CHARLESTON".into(), state: "SC".into(), zip: "29401".into() };
    let mut scans: Vec<Scan> = plan(0, "USPS", code, &from, &to, at_ms).into_iter().take(6).collect();
    let keep = match status {
        "pre_transit" => 2,
        "in_transit" => 4,
        _ => 6,
    };
    scans.truncate(keep);
    let ending = match status {
        "delivered" => Some(("delivered", "arrived_at_destination", "Delivered")),
        "return_to_sender" => Some(("return_to_sender", "return", "Return to Sender: Refused")),
        "failure" => Some(("failure", "delivery_exception", "Delivery Exception")),
        _ => None,
    };
    if let Some((status, detail, message)) = ending {
        scans.push(Scan { at_ms, status, status_detail: detail, message: message.to_owned(), place: to });
    }
    for scan in &mut scans {
        scan.at_ms = at_ms;
    }
    Some(scans)
}

/// What a new tracker is for.
pub struct TrackerSpec<'a> {
    pub code: &'a str,
    pub carrier: &'a str,
    pub shipment_id: Option<&'a str>,
    pub from: Option<Place>,
    pub to: Option<Place>,
    pub weight_oz: Option<f64>,
    pub delivery_days: i64,
}

impl State {
    /// Creates a tracker and plans its scans; the first ones happen now.
    pub fn start_tracker(&mut self, spec: &TrackerSpec<'_>, now_ms: i64) -> Record {
        let mut record = self.base("trk", "Tracker", now_ms);
        let id = text(&record, "id").to_owned();
        let fixed = test_code_scans(spec.code, now_ms);
        let scans = fixed.clone().unwrap_or_else(|| {
            let pick = |salt: usize| {
                let hub = HUBS[(usize::try_from(fate(self.seed, spec.code)).unwrap_or(0) + salt) % HUBS.len()];
                Place::of_zip(hub).unwrap_or(Place { city: String::new(), state: String::new(), zip: hub.to_owned() })
            };
            let from = spec.from.clone().unwrap_or_else(|| pick(0));
            let to = spec.to.clone().unwrap_or_else(|| pick(5));
            plan(self.seed, spec.carrier, spec.code, &from, &to, now_ms)
        });
        // The sandbox moves a package in minutes: its estimate is when its last scan is planned.
        let est = match (&fixed, scans.last()) {
            (None, Some(last)) => last.at_ms,
            _ => now_ms + spec.delivery_days.max(1) * 86_400_000,
        };
        let public = format!("https://track.easypost.com/{}", self.ids.alphanumeric(40));
        for (k, v) in [
            ("tracking_code", json!(spec.code)),
            ("status", json!("unknown")),
            ("status_detail", json!("unknown")),
            ("signed_by", Value::Null),
            ("weight", json!(spec.weight_oz)),
            ("est_delivery_date", json!(time(est))),
            ("shipment_id", json!(spec.shipment_id)),
            ("carrier", json!(spec.carrier)),
            ("tracking_details", json!([])),
            // None until the first scan (recorded: a label's new tracker, `unknown` with no
            // details, has `carrier_detail: null`; one with scans has the object).
            ("carrier_detail", Value::Null),
            ("finalized", json!(fixed.is_some())),
            ("is_return", json!(false)),
            ("public_url", json!(public)),
            ("fees", json!([])),
        ] {
            record.insert(k.to_owned(), v);
        }
        self.keep(|s| &mut s.trackers, id.clone(), now_ms, &record);
        self.plans.insert(id.clone(), scans);
        if spec.shipment_id.is_some() {
            // A label's tracker is answered with its purchase before any scan (recorded: the
            // bought shipment's tracker is `unknown`, no details, no carrier detail); the first
            // scan follows on the timeline.
            if let Some(first) = self.plans.get(&id).and_then(|p| p.first()).map(|s| s.at_ms) {
                self.schedule(first, Step::Tracker(id.clone()));
            }
        } else {
            // The scans made by now are what the tracker starts with: its creation is the event.
            self.scan(&id, now_ms, false);
        }
        let created = self.trackers.get(&id).unwrap_or_default();
        self.emit("tracker.created", Value::Object(created.clone()), json!({}), now_ms);
        created
    }

    /// Makes the scans due by `at_ms` happen; each change of status is a `tracker.updated`.
    pub fn advance_tracker(&mut self, id: &str, at_ms: i64) {
        self.scan(id, at_ms, true);
    }

    fn scan(&mut self, id: &str, at_ms: i64, announce: bool) {
        let Some(plan) = self.plans.get_mut(id) else { return };
        // Where the package is bound: the place of its last planned scan.
        let destination = plan.last().map(|s| s.place.clone());
        let due: Vec<Scan> = plan.iter().take_while(|s| s.at_ms <= at_ms).cloned().collect();
        plan.drain(..due.len());
        let next = plan.first().map(|s| s.at_ms);
        if next.is_none() {
            self.plans.remove(id);
        }
        // Every due scan in one read and one write of the tracker; the announcements after.
        let announcements = self.trackers.update(id, |tracker| {
            let carrier = text(tracker, "carrier").to_owned();
            let mut announcements = Vec::new();
            for scan in due {
                let previous = text(tracker, "status").to_owned();
                let detail = json!({
                    "object": "TrackingDetail", "message": scan.message, "description": "", "status": scan.status,
                    "status_detail": scan.status_detail, "datetime": time(scan.at_ms), "source": carrier,
                    "carrier_code": "", "tracking_location": scan.place.to_json(),
                });
                let first = tracker.get("tracking_details").and_then(Value::as_array).is_some_and(Vec::is_empty);
                if let Some(Value::Array(details)) = tracker.get_mut("tracking_details") {
                    details.push(detail);
                }
                if first && tracker.get("carrier_detail").is_none_or(Value::is_null) {
                    let to = destination.as_ref().unwrap_or(&scan.place);
                    let detail =
                        carrier_detail(json!(location(&scan.place)), scan.place.to_json(), json!(location(to)));
                    tracker.insert("carrier_detail".into(), detail);
                }
                tracker.insert("status".into(), json!(scan.status));
                tracker.insert("status_detail".into(), json!(scan.status_detail));
                tracker.insert("updated_at".into(), json!(time(scan.at_ms)));
                if scan.status == "delivered" {
                    let signer = if carrier == "USPS" { Value::Null } else { json!("SIGNATURE ON FILE") };
                    tracker.insert("signed_by".into(), signer);
                    tracker.insert("est_delivery_date".into(), json!(time(scan.at_ms)));
                }
                if announce && previous != scan.status {
                    announcements.push((Value::Object(tracker.clone()), previous, scan.at_ms));
                }
            }
            if next.is_none() {
                tracker.insert("finalized".into(), json!(true));
            }
            announcements
        });
        let Some(announcements) = announcements else { return };
        for (snapshot, previous, at_ms) in announcements {
            self.emit("tracker.updated", snapshot, json!({"status": previous}), at_ms);
        }
        if let Some(at) = next {
            self.schedule(at, Step::Tracker(id.to_owned()));
        }
    }

    /// Stops a package's movement (its label was refunded before it was scanned).
    pub fn halt_tracker(&mut self, id: &str) {
        self.plans.remove(id);
    }

    /// The tracker of a code and carrier, if one exists.
    pub fn tracker_of(&self, code: &str, carrier: &str) -> Option<String> {
        self.trackers
            .iter()
            .rev()
            .find(|t| t.tag() == Some(code) && text(&t.record(), "carrier").eq_ignore_ascii_case(carrier))
            .map(|t| t.id().to_owned())
    }

    /// `POST /v2/trackers`: a new tracker (`true`: answered 201), or the existing tracker of the
    /// same code and carrier (`false`: answered 200). What the recordings show: of the eight
    /// recorded creates of `EZ1000000001`, the two answered 201 are the ones whose tracker no
    /// earlier call had returned, and a later create of the same code gets that tracker with 200.
    pub fn create_tracker(&mut self, body: &Value, now_ms: i64) -> Result<(Record, bool), EpError> {
        let input = body.get("tracker").ok_or_else(|| EpError::required("tracker"))?;
        let (code, carrier) = read_code_and_carrier(input, "tracker")?;
        if let Some(id) = self.tracker_of(&code, &carrier) {
            let existing = self.trackers.get(&id).ok_or_else(|| EpError::not_found("Tracker not found"))?;
            return Ok((existing, false));
        }
        let spec = TrackerSpec {
            code: &code,
            carrier: &carrier,
            shipment_id: None,
            from: None,
            to: None,
            weight_oz: None,
            delivery_days: 3,
        };
        Ok((self.start_tracker(&spec, now_ms), true))
    }

    /// Finds or starts the tracker of a code (standalone insurance insures a tracked package).
    pub fn tracker_for(&mut self, code: &str, carrier: &str, now_ms: i64) -> Record {
        if let Some(record) = self.tracker_of(code, carrier).and_then(|id| self.trackers.get(&id)) {
            return record;
        }
        let spec =
            TrackerSpec { code, carrier, shipment_id: None, from: None, to: None, weight_oz: None, delivery_days: 3 };
        self.start_tracker(&spec, now_ms)
    }

    pub fn list_trackers(&self, query: &Query) -> Result<Value, EpError> {
        let code = query.get("tracking_code").map(str::trim).filter(|s| !s.is_empty()).map(str::to_owned);
        let carrier = query.get("carrier").map(str::trim).filter(|s| !s.is_empty()).map(str::to_owned);
        self.list(
            |s| &s.trackers,
            "trackers",
            query,
            |t| {
                code.as_deref().is_none_or(|c| t.tag() == Some(c))
                    && carrier.as_deref().is_none_or(|c| text(&t.record(), "carrier").eq_ignore_ascii_case(c))
            },
            |_, t| Value::Object(t.clone()),
        )
    }
}

/// A tracking code and its carrier from a request object (`tracker`, `insurance`).
pub fn read_code_and_carrier(input: &Value, field: &str) -> Result<(String, String), EpError> {
    let code = match input.get("tracking_code") {
        Some(Value::String(s)) if !s.trim().is_empty() => s.trim().to_owned(),
        Some(Value::Number(n)) => n.to_string(),
        _ => return Err(EpError::required(&format!("{field}.tracking_code"))),
    };
    if code.len() > 50 || !code.chars().all(|c| c.is_ascii_alphanumeric()) {
        return Err(EpError::invalid(
            &format!("{field}.tracking_code"),
            "must be letters and digits only, at most 50 characters",
        ));
    }
    let carrier = match input.get("carrier") {
        Some(Value::String(s)) if !s.trim().is_empty() => {
            let given = s.trim();
            if !given.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                return Err(EpError::invalid(&format!("{field}.carrier"), format!("{given:?} is not a carrier name")));
            }
            super::rates::CARRIERS
                .iter()
                .find(|c| c.name.eq_ignore_ascii_case(given))
                .map_or_else(|| given.to_owned(), |c| c.name.to_owned())
        }
        None | Some(Value::Null) => detect_carrier(&code).map(str::to_owned).ok_or_else(|| {
            EpError::unprocessable("TRACKER.CARRIER.UNDETECTED", "Unable to detect the carrier of this tracking code.")
                .field(&format!("{field}.carrier"), format!("give the carrier of {code} (e.g. USPS, UPS, FedEx)"))
        })?,
        Some(_) => return Err(EpError::invalid(&format!("{field}.carrier"), "must be a string")),
    };
    Ok((code, carrier))
}

/// A place as `carrier_detail` names it (`HOUSTON TX, 77001`).
fn location(place: &Place) -> String {
    format!("{} {}, {}", place.city, place.state, place.zip)
}

/// A tracker's `carrier_detail` with every key a real one carries (recorded: test trackers have
/// `est_delivery_date_local` and `est_delivery_time_local` null, as here).
fn carrier_detail(origin: Value, origin_location: Value, destination: Value) -> Value {
    json!({"object": "CarrierDetail", "service": Value::Null, "container_type": Value::Null,
           "est_delivery_date_local": Value::Null, "est_delivery_time_local": Value::Null,
           "origin_location": origin, "origin_tracking_location": origin_location,
           "destination_location": destination, "destination_tracking_location": Value::Null,
           "guaranteed_delivery_date": Value::Null, "alternate_identifier": Value::Null,
           "initial_delivery_attempt": Value::Null})
}

#[cfg(test)]
mod tests {
    use super::*;

    fn place(zip: &str) -> Place {
        Place::of_zip(zip).expect("zip")
    }

    #[test]
    fn a_package_leaves_pre_transit_within_30_s_and_ends_within_minutes() {
        let scans = plan(42, "USPS", "9400100000000000000001", &place("94107"), &place("10001"), 0);
        assert_eq!(scans[0].status, "pre_transit");
        let first_move = scans.iter().find(|s| s.status != "pre_transit").unwrap();
        assert!(first_move.at_ms <= 30_000);
        assert!(scans.last().unwrap().at_ms <= 5 * 60_000);
        let hub = &scans[3].place;
        assert!(["IL", "IN", "KY", "TN", "CO", "TX"].contains(&hub.state.as_str()), "{hub:?}");
        assert_eq!(scans[0].place.city, "SAN FRANCISCO");
    }

    #[test]
    fn endings_depend_on_seed_and_code_and_some_are_exceptions() {
        let endings: Vec<&str> = (0..400)
            .map(|i| plan(7, "UPS", &format!("1Z{i:016}"), &place("94107"), &place("60601"), 0).last().unwrap().status)
            .collect();
        let delivered = endings.iter().filter(|s| **s == "delivered").count();
        assert!(delivered > 300 && delivered < 400, "{delivered}");
        for exception in ["return_to_sender", "failure", "available_for_pickup"] {
            assert!(endings.contains(&exception), "{exception}");
        }
    }

    #[test]
    fn test_codes_stand_in_their_status() {
        assert_eq!(test_code_scans("EZ1000000001", 5).unwrap().last().unwrap().status, "pre_transit");
        assert_eq!(test_code_scans("EZ4000000004", 5).unwrap().last().unwrap().status, "delivered");
        assert_eq!(test_code_scans("EZ6000000006", 5).unwrap().last().unwrap().status, "failure");
        assert!(test_code_scans("EZ7000000007", 5).unwrap().is_empty());
        assert!(test_code_scans("9400", 5).is_none());
    }

    #[test]
    fn carriers_are_detected_from_the_code() {
        assert_eq!(detect_carrier("9400100208303109505657"), Some("USPS"));
        assert_eq!(detect_carrier("1Z999AA10123456784"), Some("UPS"));
        assert_eq!(detect_carrier("123456789012"), Some("FedEx"));
        assert_eq!(detect_carrier("ABC"), None);
        let error = read_code_and_carrier(&json!({"tracking_code": "ABC"}), "tracker").unwrap_err();
        assert_eq!(error.code, "TRACKER.CARRIER.UNDETECTED");
        assert!(read_code_and_carrier(&json!({"tracking_code": "a b"}), "tracker").is_err());
        assert_eq!(read_code_and_carrier(&json!({"tracking_code": "X1", "carrier": "ups"}), "t").unwrap().1, "UPS");
    }
}
