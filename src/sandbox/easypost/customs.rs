//! Customs infos and their items: records of their own (`cstinfo_`, `cstitem_`), made by
//! `POST /v2/customs_infos` and `/v2/customs_items` or by a shipment that gives its customs info
//! as fields, and rendered as EasyPost renders them (an item's `value` is a string, `"23.25"`).

use rust_decimal::Decimal;
use serde_json::{json, Map, Value};

use super::errors::EpError;
use super::state::{given_id, text, State};
use super::store::Record;

/// A customs info's fields besides its items, as EasyPost returns them (null when not given).
const INFO_FIELDS: [&str; 9] = [
    "contents_explanation",
    "contents_type",
    "customs_certify",
    "customs_signer",
    "eel_pfc",
    "non_delivery_option",
    "restriction_comments",
    "restriction_type",
    "declaration",
];

/// A customs item's text fields (null when not given).
const ITEM_TEXT: [&str; 7] =
    ["description", "hs_tariff_number", "origin_country", "code", "manufacturer", "currency", "eccn"];

/// A declared value as EasyPost writes it: `23.25` → `"23.25"`. Uncertain: how a whole or
/// longer amount is written (`"10.00"` is assumed, and up to the given decimals beyond two).
fn value_text(value: &Value, field: &str) -> Result<Value, EpError> {
    let raw = match value {
        Value::Null => return Ok(Value::Null),
        Value::String(s) if s.trim().is_empty() => return Ok(Value::Null),
        Value::String(s) => s.trim().to_owned(),
        Value::Number(n) => n.to_string(),
        _ => return Err(EpError::invalid(field, "must be an amount, e.g. 23.25")),
    };
    let amount: Decimal =
        raw.parse().map_err(|_| EpError::invalid(field, format!("must be an amount, not {raw:?}")))?;
    let amount = amount.normalize();
    Ok(json!(if amount.scale() <= 2 { format!("{amount:.2}") } else { amount.to_string() }))
}

/// A number field (`weight`, ounces): numbers or numeric text, rendered as a float.
fn float(value: &Value, field: &str) -> Result<Value, EpError> {
    match value {
        Value::Null => Ok(Value::Null),
        Value::Number(n) => Ok(json!(n.as_f64().unwrap_or(0.0))),
        Value::String(s) if s.trim().is_empty() => Ok(Value::Null),
        Value::String(s) => s
            .trim()
            .parse::<f64>()
            .map(|n| json!(n))
            .map_err(|_| EpError::invalid(field, format!("must be a number, not {s:?}"))),
        _ => Err(EpError::invalid(field, "must be a number")),
    }
}

/// `quantity`: a whole number (numbers or numeric text).
fn whole(value: &Value, field: &str) -> Result<Value, EpError> {
    match value {
        Value::Null => Ok(Value::Null),
        Value::Number(n) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => Ok(json!(i)),
            (None, Some(f)) if f.fract() == 0.0 => Ok(json!(f as i64)),
            _ => Err(EpError::invalid(field, "must be a whole number")),
        },
        Value::String(s) => {
            s.trim().parse::<i64>().map(|n| json!(n)).map_err(|_| EpError::invalid(field, "must be a whole number"))
        }
        _ => Err(EpError::invalid(field, "must be a whole number")),
    }
}

/// Any scalar as text (EasyPost keeps tariff numbers and descriptions as strings).
fn text_of(value: Option<&Value>, field: &str) -> Result<Value, EpError> {
    match value {
        None | Some(Value::Null) => Ok(Value::Null),
        Some(Value::String(s)) => Ok(json!(s)),
        Some(Value::Number(n)) => Ok(json!(n.to_string())),
        Some(Value::Bool(b)) => Ok(json!(b.to_string())),
        Some(_) => Err(EpError::invalid(field, "must be a string")),
    }
}

/// A customs item's fields, checked, without id and times. Uncertain: which fields EasyPost
/// requires (its docs list description, quantity, value, weight); the simulator requires none,
/// so it never refuses what the real service may take.
fn item_fields(input: &Value, field: &str) -> Result<Map<String, Value>, EpError> {
    let object = input.as_object().ok_or_else(|| EpError::invalid(field, "must be an object"))?;
    let mut out = Map::new();
    for name in ITEM_TEXT {
        out.insert(name.to_owned(), text_of(object.get(name), &format!("{field}.{name}"))?);
    }
    out.insert("quantity".into(), whole(object.get("quantity").unwrap_or(&Value::Null), &format!("{field}.quantity"))?);
    out.insert("value".into(), value_text(object.get("value").unwrap_or(&Value::Null), &format!("{field}.value"))?);
    out.insert("weight".into(), float(object.get("weight").unwrap_or(&Value::Null), &format!("{field}.weight"))?);
    out.insert(
        "printed_commodity_identifier".into(),
        text_of(object.get("printed_commodity_identifier"), &format!("{field}.printed_commodity_identifier"))?,
    );
    Ok(out)
}

/// What a customs info request gives for its items: stored items by id, or new items' fields.
enum ItemGiven {
    Stored(Record),
    New(Map<String, Value>),
}

impl State {
    fn store_item(&mut self, fields: Map<String, Value>, now_ms: i64) -> Record {
        let mut record = self.base("cstitem", "CustomsItem", now_ms);
        let mode = record.remove("mode").unwrap_or(Value::Null);
        record.extend(fields);
        record.insert("mode".into(), mode);
        let id = text(&record, "id").to_owned();
        self.keep(|s| &mut s.customs_items, id, now_ms, &record);
        record
    }

    /// `POST /v2/customs_items` (`{"customs_item": {...}}`, or the fields at the top level as the
    /// Ruby SDK sends them).
    pub fn create_customs_item(&mut self, body: &Value, now_ms: i64) -> Result<Record, EpError> {
        let input = body.get("customs_item").filter(|v| v.is_object()).unwrap_or(body);
        let fields = item_fields(input, "customs_item")?;
        Ok(self.store_item(fields, now_ms))
    }

    /// Reads a customs info object (checked whole before anything is stored) and stores it with
    /// its new items.
    pub fn customs_info_from(&mut self, input: &Value, field: &str, now_ms: i64) -> Result<Record, EpError> {
        let object = input.as_object().ok_or_else(|| EpError::invalid(field, "must be an object"))?;
        let mut fields = Map::new();
        for name in INFO_FIELDS {
            let value = match (name, object.get(name)) {
                (_, None | Some(Value::Null)) => Value::Null,
                ("customs_certify", Some(Value::Bool(b))) => json!(b),
                ("customs_certify", Some(Value::String(s))) => json!(s.eq_ignore_ascii_case("true")),
                (_, value) => text_of(value, &format!("{field}.{name}"))?,
            };
            fields.insert(name.to_owned(), value);
        }
        let mut items = Vec::new();
        match object.get("customs_items") {
            None | Some(Value::Null) => {}
            Some(Value::Array(list)) => {
                for (i, item) in list.iter().enumerate() {
                    let at = format!("{field}.customs_items[{i}]");
                    let by_id =
                        given_id(item).filter(|_| item.get("description").is_none() && item.get("value").is_none());
                    items.push(match by_id {
                        Some(id) => ItemGiven::Stored(
                            self.customs_items
                                .get(id)
                                .ok_or_else(|| EpError::not_found(format!("CustomsItem {id} not found")))?,
                        ),
                        None => ItemGiven::New(item_fields(item, &at)?),
                    });
                }
            }
            Some(_) => return Err(EpError::invalid(&format!("{field}.customs_items"), "must be a list")),
        }
        let mut record = self.base("cstinfo", "CustomsInfo", now_ms);
        let mode = record.remove("mode").unwrap_or(Value::Null);
        record.extend(fields);
        record.insert("mode".into(), mode);
        let items: Vec<Value> = items
            .into_iter()
            .map(|given| match given {
                ItemGiven::Stored(item) => Value::Object(item),
                ItemGiven::New(fields) => Value::Object(self.store_item(fields, now_ms)),
            })
            .collect();
        record.insert("customs_items".into(), Value::Array(items));
        let id = text(&record, "id").to_owned();
        self.keep(|s| &mut s.customs_infos, id, now_ms, &record);
        Ok(record)
    }

    /// `POST /v2/customs_infos` (`{"customs_info": {...}}`, or the fields at the top level).
    pub fn create_customs_info(&mut self, body: &Value, now_ms: i64) -> Result<Record, EpError> {
        let input = body.get("customs_info").filter(|v| v.is_object()).unwrap_or(body);
        self.customs_info_from(input, "customs_info", now_ms)
    }

    /// A shipment's `customs_info`: a stored one by id, or a new one from fields; null when none.
    pub fn shipment_customs(&mut self, value: Option<&Value>, now_ms: i64) -> Result<Value, EpError> {
        // No customs info: absent, null, or an empty object or list (recorded: `{}` from
        // easypost-go and `[]` from easypost-ruby are answered 201 with `customs_info: null`).
        let empty = |v: &&Value| match v {
            Value::Null => true,
            Value::Object(map) => map.is_empty(),
            Value::Array(items) => items.is_empty(),
            _ => false,
        };
        let Some(value) = value.filter(|v| !empty(v)) else { return Ok(Value::Null) };
        let by_id =
            given_id(value).filter(|_| value.get("customs_items").is_none() && value.get("contents_type").is_none());
        if let Some(id) = by_id {
            let record =
                self.customs_infos.get(id).ok_or_else(|| EpError::not_found(format!("CustomsInfo {id} not found")))?;
            return Ok(Value::Object(record));
        }
        Ok(Value::Object(self.customs_info_from(value, "shipment.customs_info", now_ms)?))
    }
}
