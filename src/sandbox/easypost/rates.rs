//! Parcels and what carrying them costs. Three carriers with their usual services; a price from
//! the billable weight (the greater of the actual and the dimensional weight, by each carrier's
//! divisor) and the zone (the great-circle distance between the two ZIPs, in USPS's bands);
//! carrier limits turn into rating messages on the shipment, as EasyPost reports them.

use rust_decimal::prelude::FromPrimitive;
use rust_decimal::Decimal;
use serde_json::{json, Map, Value};

use super::errors::EpError;

/// A carrier account of the sandbox user, one per carrier.
#[derive(Clone, Copy, Debug)]
pub struct Carrier {
    pub name: &'static str,
    pub account_id: &'static str,
    /// Cubic inches per pound of dimensional weight.
    dim_divisor: f64,
    /// Dimensional weight applies above this volume (cubic inches).
    dim_threshold: f64,
    max_weight_oz: f64,
    max_length_in: f64,
    /// Length plus girth.
    max_size_in: f64,
}

pub const CARRIERS: [Carrier; 3] = [
    Carrier {
        name: "USPS",
        account_id: "ca_0f9a2c4e6b8d4f10a1c3e5f7b9d0e2a4",
        dim_divisor: 166.0,
        dim_threshold: 1728.0,
        max_weight_oz: 1120.0,
        max_length_in: 108.0,
        max_size_in: 130.0,
    },
    Carrier {
        name: "UPS",
        account_id: "ca_1e8b3d5f7a9c4e21b2d4f6a8c0e1b3d5",
        dim_divisor: 139.0,
        dim_threshold: 0.0,
        max_weight_oz: 2400.0,
        max_length_in: 108.0,
        max_size_in: 165.0,
    },
    Carrier {
        name: "FedEx",
        account_id: "ca_2d7c4e6a8b0d4f32c3e5a7b9d1f2c4e6",
        dim_divisor: 139.0,
        dim_threshold: 0.0,
        max_weight_oz: 2400.0,
        max_length_in: 108.0,
        max_size_in: 165.0,
    },
];

/// One service: its price model and how long it takes.
#[derive(Clone, Copy, Debug)]
struct Service {
    carrier: &'static str,
    name: &'static str,
    /// Price of one pound to zone 1.
    base: f64,
    /// Added per zone beyond the first.
    per_zone: f64,
    /// Added per pound beyond the first, at zone 1 (grows 15 % a zone).
    per_pound: f64,
    /// Days by zone 1–8 (index 0 = zone 1); international uses the last.
    days: [u8; 9],
    international: bool,
}

const fn svc(
    carrier: &'static str,
    name: &'static str,
    base: f64,
    per_zone: f64,
    per_pound: f64,
    days: [u8; 9],
) -> Service {
    Service { carrier, name, base, per_zone, per_pound, days, international: false }
}

const fn intl(carrier: &'static str, name: &'static str, base: f64, per_pound: f64, days: u8) -> Service {
    Service { carrier, name, base, per_zone: 0.0, per_pound, days: [days; 9], international: true }
}

const SERVICES: [Service; 14] = [
    svc("USPS", "GroundAdvantage", 5.25, 0.28, 0.85, [2, 2, 3, 3, 4, 4, 5, 5, 5]),
    svc("USPS", "Priority", 7.10, 0.32, 1.35, [1, 2, 2, 2, 3, 3, 3, 3, 3]),
    svc("USPS", "Express", 28.75, 1.35, 3.10, [1, 1, 1, 1, 2, 2, 2, 2, 2]),
    svc("UPS", "Ground", 9.10, 0.55, 1.10, [1, 2, 2, 3, 3, 4, 5, 5, 5]),
    svc("UPS", "3DaySelect", 16.40, 0.90, 1.80, [3; 9]),
    svc("UPS", "2ndDayAir", 21.30, 1.25, 2.40, [2; 9]),
    svc("UPS", "NextDayAir", 38.90, 2.10, 4.20, [1; 9]),
    svc("FedEx", "FEDEX_GROUND", 8.95, 0.50, 1.05, [1, 2, 2, 3, 3, 4, 4, 5, 5]),
    svc("FedEx", "FEDEX_2_DAY", 22.10, 1.30, 2.50, [2; 9]),
    svc("FedEx", "STANDARD_OVERNIGHT", 41.75, 2.20, 4.40, [1; 9]),
    intl("USPS", "PriorityMailInternational", 48.50, 4.10, 8),
    intl("USPS", "ExpressMailInternational", 62.75, 5.20, 5),
    intl("UPS", "ExpressSaver", 89.40, 7.80, 3),
    intl("FedEx", "INTERNATIONAL_PRIORITY", 94.10, 8.10, 3),
];

/// Predefined packages: the carrier they belong to, the services that take them, and a flat
/// price where there is one.
const PACKAGES: [(&str, &str, &[&str], Option<f64>); 10] = [
    ("FlatRateEnvelope", "USPS", &["Priority"], Some(9.85)),
    ("FlatRateLegalEnvelope", "USPS", &["Priority"], Some(10.15)),
    ("SmallFlatRateBox", "USPS", &["Priority"], Some(10.40)),
    ("MediumFlatRateBox", "USPS", &["Priority"], Some(17.05)),
    ("LargeFlatRateBox", "USPS", &["Priority"], Some(22.45)),
    ("Parcel", "USPS", &["GroundAdvantage", "Priority", "Express"], None),
    ("UPSLetter", "UPS", &["NextDayAir", "2ndDayAir"], None),
    ("UPSExpressBox", "UPS", &["NextDayAir", "2ndDayAir", "3DaySelect"], None),
    ("FedExEnvelope", "FedEx", &["STANDARD_OVERNIGHT", "FEDEX_2_DAY"], None),
    ("FedExBox", "FedEx", &["STANDARD_OVERNIGHT", "FEDEX_2_DAY"], None),
];

/// The names of the predefined packages, for error messages.
pub fn package_names() -> Vec<&'static str> {
    PACKAGES.iter().map(|p| p.0).collect()
}

/// A parcel's measures, checked.
#[derive(Clone, Debug, PartialEq)]
pub struct Parcel {
    pub length: Option<f64>,
    pub width: Option<f64>,
    pub height: Option<f64>,
    pub weight: f64,
    pub predefined_package: Option<String>,
}

fn number(object: &Map<String, Value>, name: &str, field: &str) -> Result<Option<f64>, EpError> {
    match object.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => n.as_f64().map(Some).ok_or_else(|| EpError::invalid(field, "must be a number")),
        Some(Value::String(s)) if s.trim().is_empty() => Ok(None),
        Some(Value::String(s)) => s
            .trim()
            .parse::<f64>()
            .map(Some)
            .map_err(|_| EpError::invalid(field, format!("must be a number, not {s:?}"))),
        Some(_) => Err(EpError::invalid(field, "must be a number")),
    }
}

/// Reads and checks a parcel (`field` names it in errors: `parcel`, `shipment.parcel`).
pub fn read_parcel(value: &Value, field: &str) -> Result<Parcel, EpError> {
    let object = value.as_object().ok_or_else(|| EpError::invalid(field, "must be an object"))?;
    let at = |name: &str| format!("{field}.{name}");
    let weight = number(object, "weight", &at("weight"))?.ok_or_else(|| EpError::required(&at("weight")))?;
    if weight <= 0.0 || !weight.is_finite() {
        return Err(EpError::invalid(&at("weight"), "must be greater than 0 (ounces)"));
    }
    let mut dims = [None; 3];
    for (slot, name) in dims.iter_mut().zip(["length", "width", "height"]) {
        let value = number(object, name, &at(name))?;
        if let Some(v) = value {
            if v <= 0.0 || !v.is_finite() {
                return Err(EpError::invalid(&at(name), "must be greater than 0 (inches)"));
            }
        }
        *slot = value;
    }
    let given = dims.iter().filter(|d| d.is_some()).count();
    let predefined = match object.get("predefined_package") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) if s.trim().is_empty() => None,
        Some(Value::String(s)) => {
            let Some(known) = PACKAGES.iter().find(|p| p.0.eq_ignore_ascii_case(s.trim())) else {
                return Err(EpError::invalid(
                    &at("predefined_package"),
                    format!("unknown package {s:?}; one of {}", package_names().join(", ")),
                ));
            };
            Some(known.0.to_owned())
        }
        Some(_) => return Err(EpError::invalid(&at("predefined_package"), "must be a string")),
    };
    if predefined.is_none() && given != 0 && given != 3 {
        return Err(EpError::unprocessable("PARCEL.DIMENSIONS.INCOMPLETE", "Parcel dimensions are incomplete.")
            .field(field, "length, width and height go together: give all three or none"));
    }
    if weight > 2400.0 {
        return Err(EpError::unprocessable("PARCEL.WEIGHT.TOO_HEAVY", "Parcel weight exceeds the maximum.")
            .field(&at("weight"), "at most 2400 oz (150 lb), the most any carrier takes"));
    }
    if dims.iter().flatten().any(|d| *d > 108.0) {
        return Err(EpError::unprocessable("PARCEL.DIMENSIONS.TOO_LARGE", "Parcel dimensions exceed the maximum.")
            .field(field, "no side may exceed 108 inches"));
    }
    Ok(Parcel { length: dims[0], width: dims[1], height: dims[2], weight, predefined_package: predefined })
}

impl Parcel {
    pub fn to_json(&self) -> Map<String, Value> {
        let mut map = Map::new();
        map.insert("length".into(), json!(self.length));
        map.insert("width".into(), json!(self.width));
        map.insert("height".into(), json!(self.height));
        map.insert("predefined_package".into(), json!(self.predefined_package));
        map.insert("weight".into(), json!(self.weight));
        map
    }

    pub fn from_json(map: &Map<String, Value>) -> Option<Parcel> {
        read_parcel(&Value::Object(map.clone()), "parcel").ok()
    }

    fn sides(&self) -> Option<[f64; 3]> {
        let mut sides = [self.length?, self.width?, self.height?];
        sides.sort_by(|a, b| b.total_cmp(a));
        Some(sides)
    }
}

/// USPS's zone for a distance in miles (1–8).
pub fn zone(miles: f64) -> u8 {
    match miles {
        m if m <= 50.0 => 1,
        m if m <= 150.0 => 2,
        m if m <= 300.0 => 3,
        m if m <= 600.0 => 4,
        m if m <= 1000.0 => 5,
        m if m <= 1400.0 => 6,
        m if m <= 1800.0 => 7,
        _ => 8,
    }
}

/// Where a shipment goes, as rating sees it.
#[derive(Clone, Copy, Debug)]
pub enum Route {
    /// Within the US, with the zone between the two ZIPs.
    Domestic(u8),
    International,
}

/// A rate before it has an id.
#[derive(Clone, Debug, PartialEq)]
pub struct Quote {
    pub carrier: &'static str,
    pub carrier_account_id: &'static str,
    pub service: &'static str,
    pub rate: Decimal,
    pub retail_rate: Decimal,
    pub list_rate: Decimal,
    pub delivery_days: u8,
}

/// A carrier's refusal to rate, for the shipment's `messages`.
#[derive(Clone, Debug)]
pub struct RatingMessage {
    pub carrier: &'static str,
    pub carrier_account_id: &'static str,
    pub message: String,
}

impl RatingMessage {
    pub fn to_json(&self) -> Value {
        json!({"carrier": self.carrier, "carrier_account_id": self.carrier_account_id, "type": "rate_error", "message": self.message})
    }
}

fn money(value: f64) -> Decimal {
    Decimal::from_f64(value).unwrap_or_default().round_dp(2)
}

/// Every rate for `parcel` on `route` from `carriers` (all when empty), with the messages of the
/// carriers that cannot carry it.
pub fn quote(parcel: &Parcel, route: Route, carriers: &[&str]) -> (Vec<Quote>, Vec<RatingMessage>) {
    let mut quotes = Vec::new();
    let mut messages = Vec::new();
    let package = parcel.predefined_package.as_deref().and_then(|name| PACKAGES.iter().find(|p| p.0 == name));
    for carrier in CARRIERS {
        if !carriers.is_empty() && !carriers.iter().any(|c| c.eq_ignore_ascii_case(carrier.name)) {
            continue;
        }
        if package.is_some_and(|p| p.1 != carrier.name) {
            continue;
        }
        let refuse = |text: String| RatingMessage {
            carrier: carrier.name,
            carrier_account_id: carrier.account_id,
            message: text,
        };
        if parcel.weight > carrier.max_weight_oz {
            let pounds = carrier.max_weight_oz / 16.0;
            messages.push(refuse(format!("{}: package exceeds the maximum weight of {pounds} lb", carrier.name)));
            continue;
        }
        let sides = parcel.sides();
        if let Some([length, a, b]) = sides {
            if length > carrier.max_length_in || length + 2.0 * (a + b) > carrier.max_size_in {
                messages.push(refuse(format!(
                    "{}: package exceeds the maximum size (length {} in, length plus girth {} in)",
                    carrier.name, carrier.max_length_in, carrier.max_size_in
                )));
                continue;
            }
        }
        let volume = sides.map_or(0.0, |[l, w, h]| l * w * h);
        let dim_pounds = if volume > carrier.dim_threshold { (volume / carrier.dim_divisor).ceil() } else { 0.0 };
        let pounds = (parcel.weight / 16.0).ceil().max(dim_pounds).max(1.0);
        for service in SERVICES.iter().filter(|s| s.carrier == carrier.name) {
            let (zone_index, international) = match route {
                Route::Domestic(z) => (usize::from(z.clamp(1, 8)) - 1, false),
                Route::International => (8, true),
            };
            if service.international != international {
                continue;
            }
            if let Some(p) = package {
                if !p.2.contains(&service.name) {
                    continue;
                }
            }
            #[expect(clippy::cast_precision_loss, reason = "a zone index is at most 8")]
            let zone_steps = zone_index as f64;
            let flat = package.and_then(|p| p.3);
            let price = flat.unwrap_or(
                service.base
                    + service.per_zone * zone_steps
                    + service.per_pound * (pounds - 1.0) * (1.0 + 0.15 * zone_steps),
            );
            let rate = money(price);
            quotes.push(Quote {
                carrier: carrier.name,
                carrier_account_id: carrier.account_id,
                service: service.name,
                rate,
                retail_rate: money(price * 1.18),
                list_rate: money(price * 1.08),
                delivery_days: service.days[zone_index],
            });
        }
    }
    (quotes, messages)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parcel(value: Value) -> Parcel {
        read_parcel(&value, "parcel").expect("parcel")
    }

    #[test]
    fn three_carriers_priced_by_weight_and_distance() {
        let small = parcel(json!({"length": 10, "width": 8, "height": 4, "weight": 15.4}));
        let (near, messages) = quote(&small, Route::Domestic(1), &[]);
        assert!(messages.is_empty());
        let carriers: std::collections::BTreeSet<_> = near.iter().map(|q| q.carrier).collect();
        assert_eq!(carriers.len(), 3);
        assert_eq!(near.len(), 10);
        let (far, _) = quote(&small, Route::Domestic(8), &[]);
        for (a, b) in near.iter().zip(&far) {
            assert!(b.rate > a.rate, "{} {}: {} vs {}", a.carrier, a.service, a.rate, b.rate);
        }
        let heavy = parcel(json!({"length": 10, "width": 8, "height": 4, "weight": 160}));
        let (heavier, _) = quote(&heavy, Route::Domestic(1), &[]);
        assert!(heavier[0].rate > near[0].rate);
    }

    #[test]
    fn dimensional_weight_prices_a_light_big_box() {
        let light_small = parcel(json!({"length": 6, "width": 6, "height": 6, "weight": 8}));
        let light_big = parcel(json!({"length": 24, "width": 20, "height": 18, "weight": 8}));
        let (a, _) = quote(&light_small, Route::Domestic(4), &["UPS"]);
        let (b, _) = quote(&light_big, Route::Domestic(4), &["UPS"]);
        assert!(b[0].rate > a[0].rate + Decimal::from(10));
    }

    #[test]
    fn limits_become_messages_and_packages_pick_a_carrier() {
        let heavy = parcel(json!({"weight": 1500}));
        let (quotes, messages) = quote(&heavy, Route::Domestic(3), &[]);
        assert!(quotes.iter().all(|q| q.carrier != "USPS"));
        assert_eq!(messages.len(), 1);
        assert!(messages[0].message.contains("maximum weight"));
        let flat = parcel(json!({"predefined_package": "mediumflatratebox", "weight": 30}));
        let (quotes, _) = quote(&flat, Route::Domestic(8), &[]);
        assert_eq!(quotes.len(), 1);
        assert_eq!((quotes[0].service, quotes[0].rate.to_string().as_str()), ("Priority", "17.05"));
    }

    #[test]
    fn impossible_parcels_are_refused() {
        for (value, code) in [
            (json!({}), "PARAMETER.REQUIRED"),
            (json!({"weight": 0}), "PARAMETER.INVALID"),
            (json!({"weight": -3}), "PARAMETER.INVALID"),
            (json!({"weight": "heavy"}), "PARAMETER.INVALID"),
            (json!({"weight": 10, "length": 5}), "PARCEL.DIMENSIONS.INCOMPLETE"),
            (json!({"weight": 3000}), "PARCEL.WEIGHT.TOO_HEAVY"),
            (json!({"weight": 10, "length": 200, "width": 1, "height": 1}), "PARCEL.DIMENSIONS.TOO_LARGE"),
            (json!({"weight": 10, "predefined_package": "Crate"}), "PARAMETER.INVALID"),
        ] {
            let error = read_parcel(&value, "parcel").expect_err(&value.to_string());
            assert_eq!(error.code, code, "{value}");
            assert_eq!(error.status, 422);
        }
    }

    #[test]
    fn zones_follow_distance() {
        assert_eq!(zone(10.0), 1);
        assert_eq!(zone(700.0), 5);
        assert_eq!(zone(2600.0), 8);
    }
}
