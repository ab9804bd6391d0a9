//! Carrier accounts: the sandbox user's three (USPS, UPS and FedEx, the carriers the simulator
//! rates) and those the user adds (`POST /v2/carrier_accounts`, `POST
//! /v2/carrier_accounts/register_oauth`), each a record that is read, updated (`PATCH` or
//! `PUT`) and deleted. Shapes as recorded by EasyPost's SDK tests: `credentials` and
//! `test_credentials` are write-only (answered `{}`), `billing_type` is `carrier` for an added
//! account, `fields` empty.
//!
//! A deleted account of the three no longer rates shipments or pickups. An added account cannot
//! rate (the sandbox has no prices of other carriers, nor the carrier's word on credentials): a
//! shipment it takes part in carries its `rate_error` message, as EasyPost's recorded shipments
//! carry one for each added test account ("Invalid credentials").

use serde_json::{json, Map, Value};

use super::errors::EpError;
use super::rates::{Carrier, CARRIERS};
use super::state::{text, time, State};
use super::store::{parse_datetime, Record};

/// When the sandbox user's carrier accounts were made (they come with the account).
const ACCOUNTS_CREATED: &str = "2025-01-06T17:00:00Z";

/// Longest carrier account type taken (`AmazonShippingAccount` and the like are far shorter).
const MAX_TYPE_LEN: usize = 64;
/// Longest description or reference taken.
const MAX_TEXT_LEN: usize = 1_000;

/// Account types and how EasyPost names them (`readable`), as recorded or listed; a type not
/// here is taken too (uncertain which types EasyPost refuses), named after its type.
const READABLE: &[(&str, &str)] = &[
    ("UspsAccount", "USPS"),
    ("UpsAccount", "UPS"),
    ("FedexAccount", "FedEx"),
    ("DhlEcsAccount", "DHL eCommerce"),
    ("DhlExpressAccount", "DHL Express"),
    ("AmazonShippingAccount", "Amazon Shipping"),
    ("CanadaPostAccount", "Canada Post"),
    ("CanparAccount", "Canpar"),
    ("OntracAccount", "OnTrac"),
    ("PurolatorAccount", "Purolator"),
    ("LasershipAccount", "LaserShip"),
    ("UspsShipAccount", "USPS Ship"),
];

fn readable(kind: &str) -> String {
    READABLE
        .iter()
        .find(|(k, _)| *k == kind)
        .map_or_else(|| kind.strip_suffix("Account").unwrap_or(kind).to_owned(), |(_, name)| (*name).to_owned())
}

/// The carrier an added account's rate messages name: its type without `Account` (recorded:
/// `DhlEcs` for a `DhlEcsAccount`).
fn carrier_name(kind: &str) -> &str {
    kind.strip_suffix("Account").unwrap_or(kind)
}

/// The record of one of the sandbox user's three accounts. Uncertain: `billing_type` of a
/// test-mode UPS or FedEx account (recorded ones the user brought are `carrier`; USPS is
/// `easypost`).
fn seeded_account(carrier: &Carrier) -> Record {
    let (kind, billing) = match carrier.name {
        "USPS" => ("UspsAccount", "easypost"),
        "UPS" => ("UpsAccount", "carrier"),
        _ => ("FedexAccount", "carrier"),
    };
    let name = carrier.name;
    let value = json!({"id": carrier.account_id, "object": "CarrierAccount", "type": kind, "clone": false,
           "created_at": ACCOUNTS_CREATED, "updated_at": ACCOUNTS_CREATED,
           "description": format!("{name} Account"), "reference": null, "billing_type": billing,
           "readable": name, "logo": null, "fields": [], "credentials": {}, "test_credentials": {}});
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

/// An optional text field: absent or null is `None`; anything but a bounded string is refused.
fn optional_text(input: &Map<String, Value>, name: &str, field: &str) -> Result<Option<Value>, EpError> {
    match input.get(name) {
        None => Ok(None),
        Some(Value::Null) => Ok(Some(Value::Null)),
        Some(Value::String(s)) if s.len() <= MAX_TEXT_LEN => Ok(Some(json!(s))),
        Some(Value::String(_)) => {
            Err(EpError::invalid(&format!("{field}.{name}"), format!("must be at most {MAX_TEXT_LEN} characters")))
        }
        Some(_) => Err(EpError::invalid(&format!("{field}.{name}"), "must be a string")),
    }
}

/// Write-only objects (`credentials`, `test_credentials`, `registration_data`): checked to be
/// objects when given, never kept nor echoed.
fn check_objects(input: &Map<String, Value>, field: &str) -> Result<(), EpError> {
    for name in ["credentials", "test_credentials", "registration_data"] {
        match input.get(name) {
            None | Some(Value::Null | Value::Object(_)) => {}
            Some(_) => return Err(EpError::invalid(&format!("{field}.{name}"), "must be an object")),
        }
    }
    Ok(())
}

/// The wrapped object of a create or update: under one of `wrappers`, else the body itself.
fn unwrap<'a>(body: &'a Value, wrappers: &[&str]) -> Result<&'a Map<String, Value>, EpError> {
    let inner = wrappers.iter().find_map(|w| body.get(*w).filter(|v| !v.is_null()));
    match inner.unwrap_or(body) {
        Value::Object(map) => Ok(map),
        _ => Err(EpError::invalid(wrappers.first().copied().unwrap_or("carrier_account"), "must be an object")),
    }
}

impl State {
    /// Stores the sandbox user's three accounts (a new or reset state).
    pub fn seed_carrier_accounts(&mut self) {
        let created_ms = parse_datetime(ACCOUNTS_CREATED).unwrap_or(0);
        for carrier in &CARRIERS {
            let record = seeded_account(carrier);
            self.keep(|s| &mut s.carrier_accounts, carrier.account_id.to_owned(), created_ms, &record);
        }
    }

    /// The rating carriers whose account the user still has.
    pub fn active_carriers(&self) -> Vec<&'static Carrier> {
        CARRIERS.iter().filter(|c| self.carrier_accounts.get(c.account_id).is_some()).collect()
    }

    /// A `rate_error` message of an added account (one that cannot rate), if `id` is one.
    pub fn added_account_message(&self, id: &str) -> Option<Value> {
        if CARRIERS.iter().any(|c| c.account_id == id) {
            return None;
        }
        let account = self.carrier_accounts.get(id)?;
        Some(json!({"carrier": carrier_name(text(&account, "type")), "carrier_account_id": id,
                    "message": "Invalid credentials", "type": "rate_error"}))
    }

    /// The ids of the accounts the user added, oldest first.
    pub fn added_accounts(&self) -> Vec<String> {
        self.carrier_accounts
            .iter()
            .map(|a| a.id().to_owned())
            .filter(|id| !CARRIERS.iter().any(|c| c.account_id == id))
            .collect()
    }

    /// `GET /v2/carrier_accounts`: a bare JSON array, oldest first, as EasyPost answers (no
    /// envelope, no paging).
    pub fn list_carrier_accounts(&self) -> Value {
        Value::Array(self.carrier_accounts.iter().map(|a| Value::Object(a.record())).collect())
    }

    pub fn carrier_account_json(&self, id: &str) -> Result<Value, EpError> {
        self.carrier_accounts
            .get(id)
            .map(Value::Object)
            .ok_or_else(|| EpError::not_found(format!("CarrierAccount {id} not found")))
    }

    /// `POST /v2/carrier_accounts` (`{"carrier_account": {type, description, reference,
    /// credentials, test_credentials}}`) and `POST /v2/carrier_accounts/register_oauth`
    /// (`{"carrier_account_oauth_registrations": {type, account_number}}`): 201, the account.
    /// An OAuth-registered account has no description until one is given, as recorded.
    pub fn create_carrier_account(&mut self, body: &Value, oauth: bool, now_ms: i64) -> Result<Value, EpError> {
        let (wrapper, wrappers): (&str, &[&str]) = if oauth {
            ("carrier_account_oauth_registrations", &["carrier_account_oauth_registrations", "carrier_account"])
        } else {
            ("carrier_account", &["carrier_account"])
        };
        let input = unwrap(body, wrappers)?;
        let kind = match input.get("type") {
            Some(Value::String(s)) if !s.trim().is_empty() => s.trim(),
            _ => return Err(EpError::required(&format!("{wrapper}.type"))),
        };
        if kind.len() > MAX_TYPE_LEN || !kind.chars().all(|c| c.is_ascii_alphanumeric()) {
            return Err(EpError::invalid(
                &format!("{wrapper}.type"),
                "must be a carrier account type, e.g. UpsAccount",
            ));
        }
        check_objects(input, wrapper)?;
        let name = readable(kind);
        let description = optional_text(input, "description", wrapper)?.unwrap_or_else(|| {
            if oauth {
                Value::Null
            } else {
                json!(format!("{name} Account"))
            }
        });
        let reference = optional_text(input, "reference", wrapper)?.unwrap_or(Value::Null);
        let mut record = Record::new();
        let id = self.id("ca");
        let kind = kind.to_owned();
        for (k, v) in [
            ("id", json!(id)),
            ("object", json!("CarrierAccount")),
            ("type", json!(kind)),
            ("clone", json!(false)),
            ("created_at", json!(time(now_ms))),
            ("updated_at", json!(time(now_ms))),
            ("description", description),
            ("reference", reference),
            ("billing_type", json!("carrier")),
            ("readable", json!(name)),
            ("logo", Value::Null),
            ("fields", json!([])),
            ("credentials", json!({})),
            ("test_credentials", json!({})),
        ] {
            record.insert(k.to_owned(), v);
        }
        self.keep(|s| &mut s.carrier_accounts, id, now_ms, &record);
        Ok(Value::Object(record))
    }

    /// `PATCH` / `PUT /v2/carrier_accounts/{id}`: description and reference change; credentials
    /// and an OAuth account number are taken and not shown. The type stays (uncertain whether
    /// EasyPost refuses a change of type; the simulator keeps the one the account was made with).
    pub fn update_carrier_account(&mut self, id: &str, body: &Value, now_ms: i64) -> Result<Value, EpError> {
        let wrapper = "carrier_account";
        let input = unwrap(body, &["carrier_account", "carrier_account_oauth_registrations"])?;
        if self.carrier_accounts.get(id).is_none() {
            return Err(EpError::not_found(format!("CarrierAccount {id} not found")));
        }
        check_objects(input, wrapper)?;
        let description = optional_text(input, "description", wrapper)?;
        let reference = optional_text(input, "reference", wrapper)?;
        let updated = self.carrier_accounts.update(id, |account| {
            if let Some(description) = description {
                account.insert("description".into(), description);
            }
            if let Some(reference) = reference {
                account.insert("reference".into(), reference);
            }
            account.insert("updated_at".into(), json!(time(now_ms)));
            account.clone()
        });
        updated.map(Value::Object).ok_or_else(|| EpError::not_found(format!("CarrierAccount {id} not found")))
    }

    /// `DELETE /v2/carrier_accounts/{id}`: 200 `{}`, as recorded.
    pub fn delete_carrier_account(&mut self, id: &str) -> Result<Value, EpError> {
        self.carrier_accounts.remove(id).ok_or_else(|| EpError::not_found(format!("CarrierAccount {id} not found")))?;
        Ok(json!({}))
    }
}
