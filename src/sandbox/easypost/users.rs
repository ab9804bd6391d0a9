//! The sandbox user: `GET /v2/users` (the key's own user), `GET /v2/users/{id}`, its update
//! (`PUT` or `PATCH`), and `GET /v2/users/children`. Shapes as recorded by EasyPost's SDK tests.
//! The sandbox user has no child users: making one (`POST /v2/users`) is not simulated (a child
//! comes with API keys of its own, which the sandbox's single key cannot stand for), so the list
//! of children is empty and a user id other than the sandbox user's is not found.

use rust_decimal::Decimal;
use serde_json::{json, Map, Value};

use super::errors::EpError;
use super::state::{State, USER_ID};
use super::store::Record;
use crate::sandbox::request::Query;

/// When the sandbox user was made.
const USER_CREATED: &str = "2025-01-06T17:00:00Z";

/// Longest name, email or phone number taken.
const MAX_TEXT_LEN: usize = 200;

/// The sandbox user as `GET /v2/users` answers it. The insurance fee terms are the simulator's
/// own (1 %, at least $0.50); no billing method, a zero balance (postage is not charged).
fn sandbox_user() -> Record {
    let value = json!({
        "id": USER_ID, "object": "User", "parent_id": null, "name": "Opsdeck Demo",
        "email": "shipping@example.com", "phone_number": "4155550100", "verified": true,
        "created_at": USER_CREATED, "balance": "0.00000", "price_per_shipment": "0.00000",
        "recharge_amount": "100.00", "secondary_recharge_amount": "100.00", "recharge_threshold": "0.00",
        "has_billing_method": false, "cc_fee_rate": "0.03", "default_insurance_amount": null,
        "insurance_fee_rate": "0.01", "insurance_fee_minimum": "0.50", "default_carbon_offset": false,
        "has_elevate_access": false, "children": [],
    });
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

/// A text field of an update: a bounded string.
fn text_field(input: &Map<String, Value>, name: &str) -> Result<Option<Value>, EpError> {
    match input.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if s.len() <= MAX_TEXT_LEN => Ok(Some(json!(s.trim()))),
        Some(_) => Err(EpError::invalid(&format!("user.{name}"), format!("must be text of at most {MAX_TEXT_LEN}"))),
    }
}

/// A money field of an update (`"100.00"` or a number): zero or more, written with two decimals.
fn money_field(input: &Map<String, Value>, name: &str) -> Result<Option<Value>, EpError> {
    let text = match input.get(name) {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::String(s)) => s.trim().to_owned(),
        Some(Value::Number(n)) => n.to_string(),
        Some(_) => return Err(EpError::invalid(&format!("user.{name}"), "must be an amount in USD")),
    };
    match text.parse::<Decimal>() {
        Ok(amount) if amount >= Decimal::ZERO && amount <= Decimal::from(1_000_000) => {
            Ok(Some(json!(format!("{:.2}", amount.round_dp(2)))))
        }
        _ => Err(EpError::invalid(&format!("user.{name}"), format!("must be an amount in USD, not {text:?}"))),
    }
}

impl State {
    /// Sets the sandbox user as it is at start (a new or reset state).
    pub fn seed_user(&mut self) {
        self.user = sandbox_user();
    }

    fn user_of(&self, id: &str) -> Result<Record, EpError> {
        if id == USER_ID {
            Ok(self.user.clone())
        } else {
            Err(EpError::not_found(format!("User {id} not found")))
        }
    }

    /// `GET /v2/users` (no id) and `GET /v2/users/{id}`.
    pub fn user_json(&self, id: Option<&str>) -> Result<Value, EpError> {
        self.user_of(id.unwrap_or(USER_ID)).map(Value::Object)
    }

    /// `PUT` / `PATCH /v2/users/{id}`: `{"user": {...}}` or the fields at the top level (as
    /// easypost-ruby sends them). Name, email, phone number, the recharge amounts and threshold,
    /// and `default_carbon_offset` change; other fields are taken and left as they are (uncertain
    /// which EasyPost refuses).
    pub fn update_user(&mut self, id: &str, body: &Value) -> Result<Value, EpError> {
        self.user_of(id)?;
        let input = match body.get("user").filter(|v| !v.is_null()).unwrap_or(body) {
            Value::Object(map) => map,
            _ => return Err(EpError::invalid("user", "must be an object")),
        };
        let mut changes = Vec::new();
        for name in ["name", "email", "phone_number"] {
            if let Some(value) = text_field(input, name)? {
                changes.push((name, value));
            }
        }
        for name in ["recharge_amount", "secondary_recharge_amount", "recharge_threshold"] {
            if let Some(value) = money_field(input, name)? {
                changes.push((name, value));
            }
        }
        match input.get("default_carbon_offset") {
            None | Some(Value::Null) => {}
            Some(Value::Bool(b)) => changes.push(("default_carbon_offset", json!(b))),
            Some(_) => return Err(EpError::invalid("user.default_carbon_offset", "must be true or false")),
        }
        for (name, value) in changes {
            self.user.insert(name.to_owned(), value);
        }
        Ok(Value::Object(self.user.clone()))
    }

    /// `GET /v2/users/children`: the sandbox user's children, paged (none: see the module).
    pub fn list_children(&self, query: &Query) -> Result<Value, EpError> {
        self.list(|s| &s.children, "children", query, |_| true, |_, r| Value::Object(r.clone()))
    }
}
