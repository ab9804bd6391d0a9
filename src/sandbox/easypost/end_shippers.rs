//! End shippers: the party a shipment is bought for (`end_shipper_id` on a buy), an address of
//! its own kind. Shapes as recorded by EasyPost's SDK tests: `{"address": {...}}` creates (201)
//! and replaces (`PUT`, 200) one; its fields come back verified and normalized (upper case,
//! ZIP+4, `street2` merged into `street1`), without the verification report and without an
//! address's `residential`, `carrier_facility` and tax ids; times as addresses write them.

use serde_json::{json, Map, Value};

use super::addresses;
use super::errors::EpError;
use super::state::{address_time, State};
use super::store::Record;
use crate::sandbox::request::Query;

/// The address fields an end shipper has.
const KEPT: [&str; 10] = ["name", "company", "street1", "street2", "city", "state", "zip", "country", "phone", "email"];

/// The address of a create or replace: under `address` (as the SDKs send it), or `end_shipper`.
fn read_address(body: &Value) -> Result<Map<String, Value>, EpError> {
    let input = ["address", "end_shipper"].iter().find_map(|k| body.get(*k).filter(|v| !v.is_null()));
    let input = input.ok_or_else(|| EpError::required("address"))?;
    let fields = addresses::read_fields(input, "address")?;
    // Normalized when it verifies; uncertain what EasyPost answers for an end shipper whose
    // address does not, so it is taken as given.
    let verification = addresses::verify(&fields);
    let source = if verification.delivery_ok { verification.normalized } else { fields };
    Ok(KEPT.iter().map(|k| ((*k).to_owned(), source.get(*k).cloned().unwrap_or(Value::Null))).collect())
}

impl State {
    /// `POST /v2/end_shippers`: 201, the end shipper.
    pub fn create_end_shipper(&mut self, body: &Value, now_ms: i64) -> Result<Value, EpError> {
        let fields = read_address(body)?;
        let mut record = Record::new();
        let id = self.id("es");
        record.insert("id".into(), json!(id));
        record.insert("object".into(), json!("EndShipper"));
        record.insert("mode".into(), json!("test"));
        record.insert("created_at".into(), json!(address_time(now_ms)));
        record.insert("updated_at".into(), json!(address_time(now_ms)));
        record.extend(fields);
        self.keep(|s| &mut s.end_shippers, id, now_ms, &record);
        Ok(Value::Object(record))
    }

    pub fn end_shipper_json(&self, id: &str) -> Result<Value, EpError> {
        self.end_shippers
            .get(id)
            .map(Value::Object)
            .ok_or_else(|| EpError::not_found(format!("EndShipper {id} not found")))
    }

    /// `GET /v2/end_shippers`: newest first, paged like every list.
    pub fn list_end_shippers(&self, query: &Query) -> Result<Value, EpError> {
        self.list(|s| &s.end_shippers, "end_shippers", query, |_| true, |_, r| Value::Object(r.clone()))
    }

    /// `PUT /v2/end_shippers/{id}`: the address replaced (every field, as given and verified).
    pub fn update_end_shipper(&mut self, id: &str, body: &Value, now_ms: i64) -> Result<Value, EpError> {
        if self.end_shippers.get(id).is_none() {
            return Err(EpError::not_found(format!("EndShipper {id} not found")));
        }
        let fields = read_address(body)?;
        let updated = self.end_shippers.update(id, |record| {
            record.extend(fields);
            record.insert("updated_at".into(), json!(address_time(now_ms)));
            record.clone()
        });
        updated.map(Value::Object).ok_or_else(|| EpError::not_found(format!("EndShipper {id} not found")))
    }
}
