//! Reading AvaTax request bodies the way the service does: property names in any letter case
//! (SDK samples send `SingleLocation`, a blog request `exemptionno`), enums by name or number,
//! booleans also as `"true"` / `"false"`, numbers also as numeric strings. Every value of the
//! wrong shape is refused with the field it came from.

use std::str::FromStr;

use rust_decimal::Decimal;
use serde_json::{Map, Value};
use time::Date;

use super::errors::AvaError;
use super::models::{
    Address, Addresses, CertificateInput, CompanyInput, Customer, DocType, LineInput, NexusInput, RefundInput,
    RefundType, TaxOverride, TransactionInput, ADDRESS_ROLES,
};

/// Parses a JSON body; empty bodies and non-JSON are the service's model errors.
pub fn parse_body(bytes: &[u8]) -> Result<Value, AvaError> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(AvaError::model_required("The request has no body."));
    }
    serde_json::from_slice(bytes).map_err(|e| AvaError::json_format(format!("The body is not valid JSON: {e}.")))
}

/// One JSON object, read by field name regardless of case; `at` is where it sits, for errors.
#[derive(Clone, Copy)]
pub struct Fields<'a> {
    map: &'a Map<String, Value>,
    at: &'a str,
}

fn join(at: &str, name: &str) -> String {
    if at.is_empty() {
        name.to_owned()
    } else {
        format!("{at}.{name}")
    }
}

impl<'a> Fields<'a> {
    pub fn of(value: &'a Value, at: &'a str) -> Result<Fields<'a>, AvaError> {
        match value {
            Value::Object(map) => Ok(Fields { map, at }),
            _ => Err(AvaError::model_required(format!(
                "{} must be a JSON object.",
                if at.is_empty() { "The body" } else { at }
            ))),
        }
    }

    pub fn get(&self, name: &str) -> Option<&'a Value> {
        self.map.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v).filter(|v| !v.is_null())
    }

    pub fn path(&self, name: &str) -> String {
        join(self.at, name)
    }

    pub fn text(&self, name: &str) -> Result<String, AvaError> {
        match self.get(name) {
            None => Ok(String::new()),
            Some(Value::String(s)) => Ok(s.clone()),
            Some(Value::Number(n)) => Ok(n.to_string()),
            Some(Value::Bool(b)) => Ok(b.to_string()),
            Some(_) => Err(AvaError::invalid_value(&self.path(name), "Expected text.")),
        }
    }

    pub fn required_text(&self, name: &str) -> Result<String, AvaError> {
        let text = self.text(name)?;
        if text.trim().is_empty() {
            Err(AvaError::required(&self.path(name)))
        } else {
            Ok(text)
        }
    }

    pub fn flag(&self, name: &str) -> Result<Option<bool>, AvaError> {
        match self.get(name) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(Value::String(s)) if s.eq_ignore_ascii_case("true") => Ok(Some(true)),
            Some(Value::String(s)) if s.eq_ignore_ascii_case("false") => Ok(Some(false)),
            Some(_) => Err(AvaError::invalid_value(&self.path(name), "Expected true or false.")),
        }
    }

    pub fn bool(&self, name: &str) -> Result<bool, AvaError> {
        Ok(self.flag(name)?.unwrap_or(false))
    }

    pub fn decimal(&self, name: &str) -> Result<Option<Decimal>, AvaError> {
        let text = match self.get(name) {
            None => return Ok(None),
            Some(Value::Number(n)) => n.to_string(),
            Some(Value::String(s)) if s.trim().is_empty() => return Ok(None),
            Some(Value::String(s)) => s.trim().to_owned(),
            Some(_) => return Err(AvaError::invalid_value(&self.path(name), "Expected a number.")),
        };
        Decimal::from_str(&text)
            .or_else(|_| Decimal::from_scientific(&text))
            .map(Some)
            .map_err(|_| AvaError::invalid_value(&self.path(name), format!("'{text}' is not a number.")))
    }

    pub fn date(&self, name: &str) -> Result<Option<Date>, AvaError> {
        match self.get(name) {
            None => Ok(None),
            Some(Value::String(s)) if s.trim().is_empty() => Ok(None),
            Some(Value::String(s)) => parse_date(s).map(Some).ok_or_else(|| AvaError::date_format(&self.path(name), s)),
            Some(other) => Err(AvaError::date_format(&self.path(name), &other.to_string())),
        }
    }

    pub fn required_date(&self, name: &str) -> Result<Date, AvaError> {
        self.date(name)?.ok_or_else(|| AvaError::required(&self.path(name)))
    }

    pub fn array(&self, name: &str) -> Result<&'a [Value], AvaError> {
        match self.get(name) {
            None => Ok(&[]),
            Some(Value::Array(items)) => Ok(items),
            Some(_) => Err(AvaError::invalid_value(&self.path(name), "Expected a list.")),
        }
    }
}

/// `yyyy-MM-dd`, or a timestamp starting with one (`2017-04-12T00:00:00`).
pub fn parse_date(text: &str) -> Option<Date> {
    let text = text.trim();
    let day = text.get(..10)?;
    let rest = &text[10..];
    if !(rest.is_empty() || rest.starts_with('T') || rest.starts_with(' ')) {
        return None;
    }
    Date::parse(day, time::macros::format_description!("[year]-[month]-[day]")).ok()
}

fn address(value: &Value, at: &str) -> Result<Address, AvaError> {
    let f = Fields::of(value, at)?;
    let coordinate = |name: &str| -> Result<Option<f64>, AvaError> {
        // Coordinates are positions, not money: f64 is their natural type.
        Ok(f.decimal(name)?.and_then(|d| d.to_string().parse::<f64>().ok()))
    };
    let postal_code = f.text("postalCode")?;
    if postal_code.chars().count() > POSTAL_CODE_MAX {
        return Err(AvaError::string_length("postalCode", POSTAL_CODE_MAX));
    }
    Ok(Address {
        location_code: f.text("locationCode")?,
        line1: f.text("line1")?,
        line2: f.text("line2")?,
        line3: f.text("line3")?,
        city: f.text("city")?,
        region: f.text("region")?,
        country: f.text("country")?,
        postal_code,
        latitude: coordinate("latitude")?,
        longitude: coordinate("longitude")?,
    })
}

fn addresses(f: &Fields<'_>) -> Result<Addresses, AvaError> {
    let Some(value) = f.get("addresses") else { return Ok(Addresses::default()) };
    let at = f.path("addresses");
    let map = Fields::of(value, &at)?;
    let mut out = Vec::new();
    for (key, value) in map.map {
        if value.is_null() {
            continue;
        }
        let Some(role) = ADDRESS_ROLES.iter().find(|r| r.eq_ignore_ascii_case(key)) else {
            return Err(AvaError::invalid_enum(&join(&at, key), key, &ADDRESS_ROLES));
        };
        out.push((*role, address(value, &join(&at, key))?));
    }
    Ok(Addresses(out))
}

/// The longest tax code the line model takes (AvaTax refuses a longer one, as recorded).
const TAX_CODE_MAX: usize = 25;
/// The longest postal code an address takes (recorded: "must be between 0 and 11 characters").
const POSTAL_CODE_MAX: usize = 11;

fn line(value: &Value, at: &str) -> Result<LineInput, AvaError> {
    let f = Fields::of(value, at)?;
    let quantity = f.decimal("quantity")?.filter(|q| !q.is_zero()).unwrap_or(Decimal::ONE);
    let tax_code = f.text("taxCode")?;
    if tax_code.chars().count() > TAX_CODE_MAX {
        return Err(AvaError::string_length("taxCode", TAX_CODE_MAX));
    }
    Ok(LineInput {
        number: f.text("number")?,
        quantity,
        amount: f.decimal("amount")?.ok_or_else(|| AvaError::required(&f.path("amount")))?,
        tax_code,
        item_code: f.text("itemCode")?,
        description: f.text("description")?,
        discounted: f.bool("discounted")?,
        tax_included: f.bool("taxIncluded")?,
        entity_use_code: f.text("entityUseCode")?,
        exemption_code: f.text("exemptionCode")?,
        ref1: f.text("ref1")?,
        ref2: f.text("ref2")?,
        addresses: addresses(&f)?,
    })
}

fn tax_override(f: &Fields<'_>) -> Result<Option<TaxOverride>, AvaError> {
    let Some(value) = f.get("taxOverride") else { return Ok(None) };
    let at = f.path("taxOverride");
    let o = Fields::of(value, &at)?;
    let kind = o.text("type")?;
    let reason = o.text("reason")?;
    const KINDS: [&str; 4] = ["None", "TaxAmount", "Exemption", "TaxDate"];
    match kind.to_ascii_lowercase().as_str() {
        "" | "none" | "0" => Ok(None),
        "taxdate" | "3" => Ok(Some(TaxOverride::TaxDate { date: o.required_date("taxDate")?, reason })),
        "taxamount" | "1" => Ok(Some(TaxOverride::TaxAmount {
            amount: o.decimal("taxAmount")?.ok_or_else(|| AvaError::required(&o.path("taxAmount")))?,
            reason,
        })),
        "exemption" | "2" => Ok(Some(TaxOverride::Exemption { reason })),
        _ => Err(AvaError::invalid_enum(&o.path("type"), &kind, &KINDS)),
    }
}

/// CreateTransactionModel.
pub fn transaction(value: &Value, at: &str) -> Result<TransactionInput, AvaError> {
    let f = Fields::of(value, at)?;
    let type_text = f.text("type")?;
    let doc_type = if type_text.trim().is_empty() {
        DocType::SALES_ORDER
    } else {
        DocType::parse(&type_text).ok_or_else(|| AvaError::invalid_enum(&f.path("type"), &type_text, DocType::NAMES))?
    };
    let lines_at = f.path("lines");
    let lines = f
        .array("lines")?
        .iter()
        .enumerate()
        .map(|(i, l)| line(l, &format!("{lines_at}[{i}]")))
        .collect::<Result<Vec<_>, _>>()?;
    let date = f.required_date("date")?;
    let customer_code = f.required_text("customerCode")?;
    let entity_use_code = match f.text("entityUseCode")? {
        code if code.trim().is_empty() => f.text("customerUsageType")?,
        code => code,
    };
    Ok(TransactionInput {
        code: f.text("code")?,
        doc_type,
        company_code: f.text("companyCode")?,
        date,
        customer_code,
        entity_use_code,
        exemption_no: f.text("exemptionNo")?,
        discount: f.decimal("discount")?.unwrap_or(Decimal::ZERO),
        purchase_order_no: f.text("purchaseOrderNo")?,
        reference_code: f.text("referenceCode")?,
        reporting_location_code: f.text("reportingLocationCode")?,
        salesperson_code: f.text("salespersonCode")?,
        description: f.text("description")?,
        email: f.text("email")?,
        business_identification_no: f.text("businessIdentificationNo")?,
        currency_code: match f.text("currencyCode")? {
            c if c.trim().is_empty() => "USD".to_owned(),
            c => c.trim().to_ascii_uppercase(),
        },
        batch_code: f.text("batchCode")?,
        commit: f.bool("commit")?,
        addresses: addresses(&f)?,
        lines,
        tax_override: tax_override(&f)?,
    })
}

/// The array bodies of the create calls.
pub fn array_body(value: &Value, what: &str) -> Result<Vec<Value>, AvaError> {
    match value {
        Value::Array(items) => Ok(items.clone()),
        _ => Err(AvaError::model_required(format!("The body must be a JSON array of {what}."))),
    }
}

pub fn company(value: &Value, at: &str) -> Result<CompanyInput, AvaError> {
    let f = Fields::of(value, at)?;
    Ok(CompanyInput {
        code: f.text("companyCode")?,
        name: f.text("name")?,
        default_country: f.text("defaultCountry")?,
        taxpayer_id_number: f.text("taxpayerIdNumber")?,
        base_currency_code: f.text("baseCurrencyCode")?,
        is_default: f.bool("isDefault")?,
        is_test: f.flag("isTest")?.unwrap_or(true),
    })
}

pub fn customer(value: &Value, at: &str) -> Result<Customer, AvaError> {
    let f = Fields::of(value, at)?;
    Ok(Customer {
        customer_code: f.text("customerCode")?,
        alternate_id: f.text("alternateId")?,
        name: f.text("name")?,
        attn_name: f.text("attnName")?,
        line1: f.text("line1")?,
        line2: f.text("line2")?,
        city: f.text("city")?,
        region: f.text("region")?,
        postal_code: f.text("postalCode")?,
        country: f.text("country")?,
        phone_number: f.text("phoneNumber")?,
        email_address: f.text("emailAddress")?,
        is_bill: f.bool("isBill")?,
        is_ship: f.bool("isShip")?,
        ..Customer::default()
    })
}

/// The name inside `{"name": ...}`, or a bare string.
fn named(f: &Fields<'_>, name: &str) -> Result<String, AvaError> {
    match f.get(name) {
        None => Ok(String::new()),
        Some(Value::String(s)) => Ok(s.clone()),
        Some(value @ Value::Object(_)) => {
            let at = f.path(name);
            Fields::of(value, &at)?.text("name")
        }
        Some(_) => Err(AvaError::invalid_value(&f.path(name), "Expected {\"name\": ...}.")),
    }
}

pub fn certificate(value: &Value, at: &str) -> Result<CertificateInput, AvaError> {
    let f = Fields::of(value, at)?;
    let zone = named(&f, "exposureZone")?;
    if zone.trim().is_empty() {
        return Err(AvaError::required(&f.path("exposureZone")));
    }
    let mut customer_codes = Vec::new();
    let customers_at = f.path("customers");
    for (i, c) in f.array("customers")?.iter().enumerate() {
        customer_codes.push(Fields::of(c, &format!("{customers_at}[{i}]"))?.required_text("customerCode")?);
    }
    Ok(CertificateInput {
        signed_date: f.required_date("signedDate")?,
        expiration_date: f.date("expirationDate")?,
        exemption_number: f.text("exemptionNumber")?,
        exemption_reason: named(&f, "exemptionReason")?,
        zone,
        customer_codes,
        exempt_percentage: f.decimal("exemptPercentage")?.unwrap_or(Decimal::ONE_HUNDRED),
    })
}

pub fn nexus(value: &Value, at: &str) -> Result<NexusInput, AvaError> {
    let f = Fields::of(value, at)?;
    Ok(NexusInput {
        country: f.text("country")?,
        region: f.text("region")?,
        effective_date: f.date("effectiveDate")?,
        end_date: f.date("endDate")?,
        nexus_type_id: f.text("nexusTypeId")?,
        has_local_nexus: f.bool("hasLocalNexus")?,
    })
}

pub fn refund(value: &Value, use_tax_date_override: bool) -> Result<RefundInput, AvaError> {
    let f = Fields::of(value, "")?;
    let kind_text = f.text("refundType")?;
    let kind = if kind_text.trim().is_empty() {
        RefundType::Full
    } else {
        RefundType::parse(&kind_text).ok_or_else(|| {
            AvaError::new(400, "InvalidRefundType", 705, format!("'{kind_text}' is not a refund type."))
                .describe(format!("Expected one of: {}.", RefundType::NAMES.join(", ")))
                .refers_to("refundType")
        })?
    };
    let mut lines = Vec::new();
    for item in f.array("refundLines")? {
        match item {
            Value::String(s) => lines.push(s.clone()),
            Value::Number(n) => lines.push(n.to_string()),
            _ => return Err(AvaError::invalid_value("refundLines", "Expected line numbers.")),
        }
    }
    Ok(RefundInput {
        code: f.text("refundTransactionCode")?,
        date: f.required_date("refundDate")?,
        kind,
        percentage: f.decimal("refundPercentage")?,
        lines,
        reference_code: f.text("referenceCode")?,
        use_tax_date_override,
    })
}
