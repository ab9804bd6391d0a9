//! Addresses: reading the caller's fields, and verifying US addresses against the USPS ZIP table
//! (the `zipcodes` crate: every US ZIP with its city, state, coordinates and time zone).
//!
//! Verification follows EasyPost's result shape: `verifications.zip4` and `.delivery`, each
//! `{success, errors, details}`. A verified address comes back normalized: upper case, street2
//! merged into street1, ZIP+4, city and state as the ZIP says, `residential` decided.

use std::collections::HashMap;
use std::sync::LazyLock;

use serde_json::{json, Map, Value};

use super::errors::EpError;

/// The fields an address takes.
pub const FIELDS: [&str; 14] = [
    "name",
    "company",
    "street1",
    "street2",
    "city",
    "state",
    "zip",
    "country",
    "phone",
    "email",
    "residential",
    "carrier_facility",
    "federal_tax_id",
    "state_tax_id",
];

/// One US ZIP: where it is.
#[derive(Clone, Debug, PartialEq)]
pub struct ZipPlace {
    pub zip: &'static str,
    pub city: &'static str,
    pub state: &'static str,
    pub latitude: f64,
    pub longitude: f64,
    pub time_zone: &'static str,
    /// Other city names the Postal Service accepts for this ZIP, `|`-separated.
    acceptable: &'static str,
}

impl ZipPlace {
    fn accepts(&self, city: &str) -> bool {
        self.city.eq_ignore_ascii_case(city)
            || self.acceptable.split('|').any(|c| !c.is_empty() && c.eq_ignore_ascii_case(city))
    }
}

/// The table build.rs writes from the `zipcodes` crate: zip, city, state, latitude, longitude,
/// time zone, other accepted names.
static TABLE: &str = include_str!(concat!(env!("OUT_DIR"), "/us_zips.tsv"));

/// ZIP → place, read from the table on first use (a simulator that never verifies never pays).
static ZIPS: LazyLock<HashMap<&'static str, ZipPlace>> = LazyLock::new(|| {
    TABLE
        .lines()
        .filter_map(|line| {
            let mut f = line.split('\t');
            let zip = f.next()?;
            let place = ZipPlace {
                zip,
                city: f.next()?,
                state: f.next()?,
                latitude: f.next()?.parse().ok()?,
                longitude: f.next()?.parse().ok()?,
                time_zone: f.next()?,
                acceptable: f.next().unwrap_or(""),
            };
            Some((zip, place))
        })
        .collect()
});

/// The place of a US ZIP (`94107`, `94107-1670`).
pub fn zip_place(zip: &str) -> Option<&'static ZipPlace> {
    let five: String = zip.trim().chars().take(5).collect();
    if five.len() != 5 || !five.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    ZIPS.get(five.as_str())
}

/// The first standard ZIP of a city (for an address given without one).
fn zip_of_city(city: &str, state: &str) -> Option<&'static ZipPlace> {
    let mut found: Vec<&ZipPlace> =
        ZIPS.values().filter(|p| p.state.eq_ignore_ascii_case(state) && p.city.eq_ignore_ascii_case(city)).collect();
    found.sort_by_key(|p| p.zip);
    found.first().copied()
}

/// Distance in miles between two places (great circle).
pub fn miles(a: (f64, f64), b: (f64, f64)) -> f64 {
    let (lat1, lon1) = (a.0.to_radians(), a.1.to_radians());
    let (lat2, lon2) = (b.0.to_radians(), b.1.to_radians());
    let h = ((lat2 - lat1) / 2.0).sin().powi(2) + lat1.cos() * lat2.cos() * ((lon2 - lon1) / 2.0).sin().powi(2);
    2.0 * 3958.8 * h.sqrt().asin()
}

/// The address fields of a request object, checked for type: strings (numbers are taken as
/// text, as a ZIP often is), `residential` a boolean.
pub fn read_fields(input: &Value, field: &str) -> Result<Map<String, Value>, EpError> {
    let Some(object) = input.as_object() else {
        return Err(EpError::invalid(field, "must be an object of address fields"));
    };
    let mut fields = Map::new();
    for name in FIELDS {
        let value = match object.get(name) {
            None | Some(Value::Null) => Value::Null,
            Some(Value::Bool(b)) if name == "residential" => Value::Bool(*b),
            Some(Value::String(s)) if name == "residential" => match s.trim().to_ascii_lowercase().as_str() {
                "true" => Value::Bool(true),
                "false" => Value::Bool(false),
                "" => Value::Null,
                _ => return Err(EpError::invalid(&format!("{field}.residential"), "must be true or false")),
            },
            Some(Value::String(s)) => Value::String(s.trim().to_owned()),
            Some(Value::Number(n)) if name != "residential" => Value::String(n.to_string()),
            Some(_) => return Err(EpError::invalid(&format!("{field}.{name}"), "must be a string")),
        };
        fields.insert(name.to_owned(), value);
    }
    if text(&fields, "country").is_empty() {
        fields.insert("country".into(), json!("US"));
    }
    if let Some(Value::String(country)) = fields.get_mut("country") {
        *country = country.to_ascii_uppercase();
        if country.len() != 2 || !country.chars().all(|c| c.is_ascii_alphabetic()) {
            return Err(EpError::invalid(&format!("{field}.country"), "must be a two-letter ISO country code"));
        }
    }
    Ok(fields)
}

/// A field as text ("" when absent).
pub fn text<'a>(fields: &'a Map<String, Value>, name: &str) -> &'a str {
    fields.get(name).and_then(Value::as_str).unwrap_or("")
}

/// Which checks a `verify` / `verify_strict` value asks for: `true`, a list of `delivery` and
/// `zip4`, or one name; `None` for `false` or absent.
pub fn checks(value: Option<&Value>, field: &str) -> Result<Option<Vec<&'static str>>, EpError> {
    // `true` (also inside a list: `[true]`, as the Ruby SDK sends it and EasyPost answers 201 with
    // both checks) asks for every check.
    let named = |name: &str| -> Result<Vec<&'static str>, EpError> {
        match name.trim().to_ascii_lowercase().as_str() {
            "delivery" => Ok(vec!["delivery"]),
            "zip4" => Ok(vec!["zip4"]),
            "true" => Ok(vec!["delivery", "zip4"]),
            "false" | "" => Ok(Vec::new()),
            other => Err(EpError::invalid(field, format!("unknown verification {other:?}: use delivery or zip4"))),
        }
    };
    let listed = |names: Vec<Vec<&'static str>>| {
        let mut out: Vec<&'static str> = Vec::new();
        for name in names.into_iter().flatten() {
            if !out.contains(&name) {
                out.push(name);
            }
        }
        (!out.is_empty()).then_some(out)
    };
    Ok(match value {
        None | Some(Value::Null) | Some(Value::Bool(false)) => None,
        Some(Value::Bool(true)) => Some(vec!["delivery", "zip4"]),
        Some(Value::String(s)) => listed(s.split(',').map(named).collect::<Result<_, _>>()?),
        Some(Value::Array(items)) => listed(
            items
                .iter()
                .map(|i| match i {
                    Value::Bool(b) => named(if *b { "true" } else { "false" }),
                    Value::String(s) => named(s),
                    _ => Err(EpError::invalid(field, "must list delivery or zip4")),
                })
                .collect::<Result<_, _>>()?,
        ),
        Some(_) => return Err(EpError::invalid(field, "must be true or a list of delivery and zip4")),
    })
}

/// The result of checking an address.
#[derive(Clone, Debug)]
pub struct Verification {
    /// The address as the Postal Service writes it (only meaningful when `delivery_ok`).
    pub normalized: Map<String, Value>,
    pub delivery_ok: bool,
    pub zip4_ok: bool,
    /// `verifications` as EasyPost returns it.
    pub verifications: Value,
}

fn field_error(code: &str, field: &str, message: &str) -> Value {
    json!({"code": code, "field": field, "message": message, "suggestion": null})
}

/// A stable four digits for a street, so the same address always gets the same ZIP+4.
fn plus_four(street: &str) -> String {
    let hash = street.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3));
    format!("{:04}", hash % 10_000)
}

/// Checks `fields` (see [`read_fields`]).
pub fn verify(fields: &Map<String, Value>) -> Verification {
    let street1 = text(fields, "street1");
    let street2 = text(fields, "street2");
    let city = text(fields, "city");
    let state = text(fields, "state");
    let zip = text(fields, "zip");
    let country = text(fields, "country");
    let mut errors = Vec::new();
    if street1.is_empty() {
        errors.push(field_error("E.ADDRESS.NOT_FOUND", "address", "Address not found"));
        errors.push(field_error("E.STREET.MISSING", "street1", "Street is missing"));
    } else if !street1.chars().next().is_some_and(|c| c.is_ascii_digit())
        && !street1.to_ascii_uppercase().starts_with("PO BOX")
    {
        errors.push(field_error("E.ADDRESS.NOT_FOUND", "address", "Address not found"));
        errors.push(field_error("E.HOUSE_NUMBER.MISSING", "street1", "House number is missing"));
    }
    if country != "US" {
        // Outside the US the sandbox has no postal table: the address is taken as given when it
        // has a street, a city and a postal code; ZIP+4 does not apply.
        for (name, value) in [("city", city), ("zip", zip)] {
            if value.is_empty() {
                errors.push(field_error("E.ADDRESS.INCOMPLETE", name, &format!("{name} is missing")));
            }
        }
        let delivery_ok = errors.is_empty();
        let zip4_error = field_error("E.ZIP4.NOT_APPLICABLE", "zip", "ZIP+4 applies to US addresses only");
        let verifications = json!({
            "zip4": {"success": false, "errors": [zip4_error], "details": null},
            "delivery": {"success": delivery_ok, "errors": errors, "details": {}},
        });
        return Verification { normalized: fields.clone(), delivery_ok, zip4_ok: false, verifications };
    }
    let place =
        zip_place(zip).or_else(|| (!city.is_empty() && !state.is_empty()).then(|| zip_of_city(city, state)).flatten());
    let Some(place) = place else {
        errors.insert(0, field_error("E.ADDRESS.NOT_FOUND", "address", "Address not found"));
        let message = if zip.is_empty() { "ZIP code is missing" } else { "Invalid city/state/ZIP" };
        errors.push(field_error("E.ZIP.NOT_FOUND", "zip", message));
        errors.dedup();
        return failed(fields, errors);
    };
    if !errors.is_empty() {
        return failed(fields, errors);
    }
    let mut normalized = fields.clone();
    let street = if street2.is_empty() { street1.to_owned() } else { format!("{street1} {street2}") };
    let city_name = if place.accepts(city) { city } else { place.city };
    let set = |map: &mut Map<String, Value>, name: &str, value: String| {
        map.insert(name.to_owned(), Value::String(value));
    };
    set(&mut normalized, "street1", street.to_uppercase());
    set(&mut normalized, "street2", String::new());
    set(&mut normalized, "city", city_name.to_uppercase());
    set(&mut normalized, "state", place.state.to_owned());
    set(&mut normalized, "zip", format!("{}-{}", place.zip, plus_four(&street.to_uppercase())));
    for name in ["name", "company"] {
        if let Some(Value::String(s)) = normalized.get_mut(name) {
            *s = s.to_uppercase();
        }
    }
    if normalized.get("residential").is_none_or(Value::is_null) {
        normalized.insert("residential".into(), Value::Bool(text(fields, "company").is_empty()));
    }
    let details = json!({"latitude": place.latitude, "longitude": place.longitude, "time_zone": place.time_zone});
    let verifications = json!({
        "zip4": {"success": true, "errors": [], "details": null},
        "delivery": {"success": true, "errors": [], "details": details},
    });
    Verification { normalized, delivery_ok: true, zip4_ok: true, verifications }
}

fn failed(fields: &Map<String, Value>, errors: Vec<Value>) -> Verification {
    let verifications = json!({
        "zip4": {"success": false, "errors": errors, "details": null},
        "delivery": {"success": false, "errors": errors, "details": {}},
    });
    Verification { normalized: fields.clone(), delivery_ok: false, zip4_ok: false, verifications }
}

impl Verification {
    /// The answer of a verification through a carrier (`verify_carrier`): EasyPost answers 200
    /// whatever the outcome, both checks marked `success: true` with the errors found, fields
    /// upper-cased, details with null coordinates when the address was not found, and the carrier
    /// named in `verifications.verify_carrier` in lower case (as recorded for UPS).
    pub fn through_carrier(&self, carrier: &str) -> (Map<String, Value>, Value) {
        let mut fields = self.normalized.clone();
        if !self.delivery_ok {
            for name in ["name", "company", "street1", "city", "state"] {
                if let Some(Value::String(s)) = fields.get_mut(name) {
                    *s = s.to_uppercase();
                }
            }
            fields.insert("street2".into(), json!(""));
        }
        let mut verifications = self.verifications.clone();
        for check in ["zip4", "delivery"] {
            verifications[check]["success"] = json!(true);
        }
        if !self.delivery_ok {
            verifications["delivery"]["details"] = json!({"latitude": null, "longitude": null, "time_zone": null});
        }
        verifications["verify_carrier"] = json!(carrier.to_ascii_lowercase());
        (fields, verifications)
    }

    /// Whether the checks asked for passed.
    pub fn passed(&self, checks: &[&str]) -> bool {
        checks.iter().all(|c| if *c == "zip4" { self.zip4_ok } else { self.delivery_ok })
    }

    /// `verifications` with only the checks asked for.
    pub fn only(&self, checks: &[&str]) -> Value {
        let mut out = Map::new();
        for check in ["zip4", "delivery"] {
            if checks.contains(&check) {
                out.insert(check.to_owned(), self.verifications[check].clone());
            }
        }
        Value::Object(out)
    }

    /// The 422 a strict verification answers with.
    pub fn failure(&self, checks: &[&str]) -> EpError {
        let mut error = EpError::unprocessable("ADDRESS.VERIFY.FAILURE", "Unable to verify address.");
        for check in checks {
            if let Some(items) = self.verifications[*check]["errors"].as_array() {
                for item in items {
                    if !error.errors.contains(item) {
                        error.errors.push(item.clone());
                    }
                }
            }
        }
        error
    }
}

/// Where an address is: from its ZIP (US) — what rates and tracking locations are built from.
pub fn coordinates(fields: &Map<String, Value>) -> Option<(f64, f64)> {
    if text(fields, "country") != "US" {
        return None;
    }
    zip_place(text(fields, "zip")).map(|p| (p.latitude, p.longitude))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn address(value: Value) -> Map<String, Value> {
        read_fields(&value, "address").expect("fields")
    }

    #[test]
    fn a_real_address_is_normalized_with_coordinates() {
        let fields = address(json!({"name": "Jack Sparrow", "street1": "388 Townsend St", "street2": "Apt 20",
                                    "city": "San Francisco", "state": "ca", "zip": "94107"}));
        let v = verify(&fields);
        assert!(v.delivery_ok && v.zip4_ok);
        assert_eq!(v.normalized["street1"], "388 TOWNSEND ST APT 20");
        assert_eq!(v.normalized["city"], "SAN FRANCISCO");
        assert_eq!(v.normalized["state"], "CA");
        assert_eq!(v.normalized["name"], "JACK SPARROW");
        assert!(text(&v.normalized, "zip").starts_with("94107-"));
        assert_eq!(v.normalized["residential"], true);
        let details = &v.verifications["delivery"]["details"];
        assert!((details["latitude"].as_f64().unwrap() - 37.77).abs() < 0.1, "{details}");
        assert_eq!(details["time_zone"], "America/Los_Angeles");
    }

    #[test]
    fn the_zip_decides_city_and_state() {
        let v = verify(&address(json!({"street1": "1 Main St", "city": "Nowhere", "state": "TX", "zip": "10001"})));
        assert!(v.delivery_ok);
        assert_eq!(v.normalized["state"], "NY");
        assert_eq!(v.normalized["city"], "NEW YORK");
        let by_city = verify(&address(json!({"street1": "1 Main St", "city": "Austin", "state": "TX"})));
        assert!(by_city.delivery_ok);
        assert_eq!((text(&by_city.normalized, "city"), text(&by_city.normalized, "state")), ("AUSTIN", "TX"));
        assert!(zip_place(text(&by_city.normalized, "zip")).is_some_and(|p| p.city == "Austin"));
    }

    #[test]
    fn failures_name_their_reasons() {
        let no_number = verify(&address(json!({"street1": "Main St", "zip": "94107"})));
        assert!(!no_number.delivery_ok);
        let codes: Vec<_> = no_number.verifications["delivery"]["errors"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["code"].as_str().unwrap().to_owned())
            .collect();
        assert_eq!(codes, ["E.ADDRESS.NOT_FOUND", "E.HOUSE_NUMBER.MISSING"]);
        let bad_zip = verify(&address(json!({"street1": "1 Main St", "zip": "00000"})));
        assert!(!bad_zip.delivery_ok);
        let failure = bad_zip.failure(&["delivery"]);
        assert_eq!((failure.status, failure.code.as_str()), (422, "ADDRESS.VERIFY.FAILURE"));
        assert!(failure.errors.iter().any(|e| e["code"] == "E.ZIP.NOT_FOUND"));
    }

    #[test]
    fn fields_are_type_checked() {
        assert!(read_fields(&json!("x"), "address").is_err());
        assert!(read_fields(&json!({"street1": ["x"]}), "address").is_err());
        assert!(read_fields(&json!({"country": "USA"}), "address").is_err());
        assert_eq!(address(json!({"zip": 94107}))["zip"], "94107");
        assert_eq!(checks(Some(&json!(["delivery"])), "verify").unwrap(), Some(vec!["delivery"]));
        assert_eq!(checks(Some(&json!(true)), "verify").unwrap(), Some(vec!["delivery", "zip4"]));
        assert!(checks(Some(&json!(["nope"])), "verify").is_err());
        // `[true]` is what the Ruby SDK sends; EasyPost answers with both checks.
        assert_eq!(checks(Some(&json!([true])), "verify").unwrap(), Some(vec!["delivery", "zip4"]));
    }

    #[test]
    fn distance_between_zips() {
        let sf = zip_place("94107").map(|p| (p.latitude, p.longitude)).unwrap();
        let ny = zip_place("10001").map(|p| (p.latitude, p.longitude)).unwrap();
        let d = miles(sf, ny);
        assert!((2500.0..2650.0).contains(&d), "{d}");
    }
}
