//! The models as the service writes them: TransactionModel, CompanyModel, CustomerModel,
//! CertificateModel, NexusModel, TaxCodeModel (api/avatax.md §3.6, §3.11). Enums as strings,
//! money as JSON numbers from decimals, dates `yyyy-MM-dd`, timestamps without a zone.

use std::str::FromStr;

use rust_decimal::Decimal;
use serde_json::{json, Map, Number, Value};
use time::{Date, OffsetDateTime};

use super::calc::{DetailTax, InvoiceMessage};
use super::models::{Certificate, Company, Customer, DocStatus, Line, Nexus, Transaction};
use super::reference::TaxCode;

/// A decimal amount as a JSON number (the wire's type), without binary rounding on our side:
/// the number its decimal text reads as.
pub fn money(amount: Decimal) -> Value {
    let amount = amount.normalize();
    let (mantissa, scale) = (amount.mantissa(), amount.scale());
    // Most amounts take no text: a whole one is that integer, and a fraction whose digits and
    // power of ten are both exact as doubles is one division, correctly rounded, so the same
    // double the text reads as. A sort over 100,000 documents' totals reads each one.
    if scale == 0 {
        if let Ok(whole) = i64::try_from(mantissa) {
            return Value::from(whole);
        }
    } else if mantissa.unsigned_abs() < 1 << f64::MANTISSA_DIGITS && scale <= 22 {
        #[allow(clippy::cast_precision_loss, reason = "below 2^53: exact")]
        let digits = mantissa as f64;
        if let Some(number) = Number::from_f64(digits / EXACT_POWERS_OF_TEN[scale as usize]) {
            return Value::Number(number);
        }
    }
    Number::from_str(&amount.to_string()).map(Value::Number).unwrap_or(Value::Null)
}

/// 10^0 to 10^22: every power of ten a double holds exactly.
const EXACT_POWERS_OF_TEN: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20,
    1e21, 1e22,
];

pub fn date(day: Date) -> String {
    let year = day.year();
    if !(0..=9999).contains(&year) {
        return format!("{year:04}-{:02}-{:02}", u8::from(day.month()), day.day());
    }
    // Digit by digit, without the formatter: a sort by date writes 100,000 of them.
    let digit = |n: i32| char::from(b'0' + u8::try_from(n % 10).unwrap_or(0));
    let (month, day) = (i32::from(u8::from(day.month())), i32::from(day.day()));
    let mut out = String::with_capacity(10);
    out.extend([digit(year / 1000), digit(year / 100), digit(year / 10), digit(year), '-']);
    out.extend([digit(month / 10), digit(month), '-', digit(day / 10), digit(day)]);
    out
}

pub fn timestamp(at: OffsetDateTime) -> String {
    let at = at.to_offset(time::UtcOffset::UTC);
    format!("{}T{:02}:{:02}:{:02}.{:03}", date(at.date()), at.hour(), at.minute(), at.second(), at.millisecond())
}

/// A transaction's `modifiedDate` as current servers write it: UTC, seven fractional digits and
/// `Z` (`2022-07-22T17:31:59.9283971Z`, recorded traffic).
pub fn transaction_timestamp(at: OffsetDateTime) -> String {
    let at = at.to_offset(time::UtcOffset::UTC);
    format!("{}T{:02}:{:02}:{:02}.{:07}Z", date(at.date()), at.hour(), at.minute(), at.second(), at.nanosecond() / 100)
}

/// Keeps only these keys (in their order of the map).
fn keep_only(value: &mut Value, keys: &[&str]) {
    if let Some(map) = value.as_object_mut() {
        map.retain(|k, _| keys.contains(&k.as_str()));
    }
}

/// What a SalesOrder (a `Temporary` document, never stored) carries at each level: recorded
/// traffic shows it without the ids of stored records, address ids, sourcing, overrides and the
/// other keys a stored document has, rather than with them empty.
const TEMPORARY_KEYS: &[&str] = &[
    "id",
    "code",
    "companyId",
    "date",
    "paymentDate",
    "status",
    "type",
    "batchCode",
    "currencyCode",
    "exchangeRateCurrencyCode",
    "customerUsageType",
    "entityUseCode",
    "customerVendorCode",
    "customerCode",
    "exemptNo",
    "reconciled",
    "locationCode",
    "reportingLocationCode",
    "purchaseOrderNo",
    "referenceCode",
    "salespersonCode",
    "totalAmount",
    "totalExempt",
    "totalDiscount",
    "totalTax",
    "totalTaxable",
    "totalTaxCalculated",
    "adjustmentReason",
    "locked",
    "version",
    "exchangeRateEffectiveDate",
    "exchangeRate",
    "modifiedDate",
    "modifiedUserId",
    "taxDate",
    "lines",
    "addresses",
    "summary",
    "messages",
    "invoiceMessages",
];
const TEMPORARY_LINE_KEYS: &[&str] = &[
    "id",
    "transactionId",
    "lineNumber",
    "customerUsageType",
    "entityUseCode",
    "description",
    "discountAmount",
    "exemptAmount",
    "exemptCertId",
    "exemptNo",
    "isItemTaxable",
    "itemCode",
    "lineAmount",
    "quantity",
    "ref1",
    "ref2",
    "reportingDate",
    "tax",
    "taxableAmount",
    "taxCalculated",
    "taxCode",
    "taxCodeId",
    "taxDate",
    "taxIncluded",
    "details",
    "nonPassthroughDetails",
    "hsCode",
    "costInsuranceFreight",
    "vatCode",
    "vatNumberTypeId",
];
const TEMPORARY_DETAIL_KEYS: &[&str] = &[
    "id",
    "transactionLineId",
    "transactionId",
    "country",
    "region",
    "exemptAmount",
    "jurisCode",
    "jurisName",
    "stateAssignedNo",
    "jurisType",
    "jurisdictionType",
    "nonTaxableAmount",
    "rate",
    "tax",
    "taxableAmount",
    "taxType",
    "taxSubTypeId",
    "taxName",
    "taxAuthorityTypeId",
    "taxCalculated",
    "rateType",
    "rateTypeCode",
    "unitOfBasis",
    "isNonPassThru",
    "isFee",
    "reportingTaxableUnits",
    "reportingNonTaxableUnits",
    "reportingExemptUnits",
    "reportingTax",
    "reportingTaxCalculated",
    "liabilityType",
];

/// Sets `key` of a JSON object (anything else is left as it is).
pub fn insert(value: &mut Value, key: &str, item: Value) {
    if let Some(map) = value.as_object_mut() {
        map.insert(key.to_owned(), item);
    }
}

pub fn company(c: &Company) -> Value {
    json!({
        "id": c.id,
        "accountId": c.account_id,
        "sstPid": "",
        "companyCode": c.code,
        "name": c.name,
        "isDefault": c.is_default,
        "defaultLocationId": 0,
        "isActive": c.is_active,
        "taxpayerIdNumber": c.taxpayer_id_number,
        "isFein": false,
        "hasProfile": true,
        "isReportingEntity": true,
        "defaultCountry": c.default_country,
        "baseCurrencyCode": c.base_currency_code,
        "roundingLevelId": "Line",
        "warningsEnabled": false,
        "isTest": c.is_test,
        "taxDependencyLevelId": "Document",
        "inProgress": false,
        "businessIdentificationNo": "",
        "createdDate": timestamp(c.created),
        "createdUserId": 54057,
        "modifiedDate": timestamp(c.modified),
        "modifiedUserId": 54057,
    })
}

pub fn company_with_nexus(c: &Company, nexus: Vec<Value>) -> Value {
    let mut value = company(c);
    insert(&mut value, "nexus", Value::Array(nexus));
    value
}

pub fn customer(c: &Customer, certificates: Option<Vec<Value>>) -> Value {
    let mut value = json!({
        "id": c.id,
        "companyId": c.company_id,
        "customerCode": c.customer_code,
        "alternateId": c.alternate_id,
        "name": c.name,
        "attnName": c.attn_name,
        "line1": c.line1,
        "line2": c.line2,
        "city": c.city,
        "postalCode": c.postal_code,
        "phoneNumber": c.phone_number,
        "emailAddress": c.email_address,
        "createdDate": c.created.map(timestamp),
        "modifiedDate": c.created.map(timestamp),
        "country": c.country,
        "region": c.region,
        "isBill": c.is_bill,
        "isShip": c.is_ship,
    });
    if let Some(certificates) = certificates {
        insert(&mut value, "certificates", Value::Array(certificates));
    }
    value
}

pub fn certificate(c: &Certificate, customers: Option<Vec<Value>>) -> Value {
    let mut value = json!({
        "id": c.id,
        "companyId": c.company_id,
        "signedDate": date(c.signed_date),
        "expirationDate": date(c.expiration_date),
        "filename": "",
        "documentExists": false,
        "valid": c.valid,
        "verified": true,
        "exemptPercentage": money(c.exempt_percentage),
        "isSingleCertificate": true,
        "exemptionNumber": c.exemption_number,
        "exemptionReason": {"name": c.exemption_reason},
        "status": c.status,
        "createdDate": timestamp(c.created),
        "modifiedDate": timestamp(c.created),
        "pageCount": 0,
        "exposureZone": {"name": c.zone_name, "region": c.region, "country": "US"},
        "exposureZoneName": c.zone_name,
        "region": c.region,
    });
    if let Some(customers) = customers {
        insert(&mut value, "customers", Value::Array(customers));
    }
    value
}

pub fn nexus(n: &Nexus) -> Value {
    json!({
        "id": n.id,
        "companyId": n.company_id,
        "country": n.country,
        "region": n.region,
        "jurisTypeId": "STA",
        "jurisdictionTypeId": "State",
        "jurisCode": n.juris_code,
        "jurisName": n.juris_name,
        "effectiveDate": date(n.effective_date),
        "endDate": n.end_date.map(date),
        "shortName": n.region,
        "signatureCode": "",
        "stateAssignedNo": "",
        "nexusTypeId": n.nexus_type_id,
        "sourcing": "Destination",
        "hasLocalNexus": n.has_local_nexus,
        "localNexusTypeId": if n.has_local_nexus { "All" } else { "Selected" },
        "hasPermanentEstablishment": true,
        "streamlinedSalesTax": false,
        "isSSTActive": false,
        "createdDate": timestamp(n.created),
        "modifiedDate": timestamp(n.created),
        "taxTypeGroup": "SalesAndUse",
        "taxName": format!("{} STATE TAX", n.region),
    })
}

pub fn tax_code(t: &TaxCode) -> Value {
    json!({
        "id": t.id,
        "companyId": 0,
        "taxCode": t.code,
        "taxCodeTypeId": t.type_id,
        "description": t.description,
        "parentTaxCode": t.parent,
        "isPhysical": t.physical,
        "goodsServiceCode": 0,
        "entityUseCode": "",
        "isActive": true,
        "isSSTCertified": true,
    })
}

/// Which parts of a TransactionModel to write (`$include`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Include {
    pub lines: bool,
    pub details: bool,
    pub summary: bool,
    pub addresses: bool,
}

impl Include {
    /// What create, get and refund return when `$include` is absent: everything.
    pub const FULL: Include = Include { lines: true, details: true, summary: true, addresses: true };
    /// What lists return when `$include` is absent: the document headers.
    pub const HEADER: Include = Include { lines: false, details: false, summary: false, addresses: false };

    /// Reads `$include`; unknown words are ignored as the service does with expansions it
    /// does not offer.
    pub fn parse(text: Option<&str>, default: Include) -> Include {
        let Some(text) = text.filter(|t| !t.trim().is_empty()) else { return default };
        let words: Vec<String> = text.split(',').map(|w| w.trim().to_ascii_lowercase()).collect();
        let has = |w: &str| words.iter().any(|x| x == w);
        if has("summaryonly") {
            return Include { lines: false, details: false, summary: true, addresses: has("addresses") };
        }
        let summary = has("summary");
        let details = (has("details") || summary) && !has("linesonly");
        Include { lines: has("lines") || details || has("linesonly"), details, summary, addresses: has("addresses") }
    }
}

fn detail(d: &DetailTax, t: &Transaction, line: &Line, id: i64) -> Value {
    let j = &d.jurisdiction;
    let mut value = json!({
        "id": id,
        "transactionLineId": line.id,
        "transactionId": t.id,
        "addressId": t.destination_address_id,
        "country": j.country,
        "region": j.region,
        "countyFIPS": "",
        "stateFIPS": if j.level == super::calc::JurisLevel::State { j.code.clone() } else { String::new() },
        "exemptAmount": money(d.exempt),
        "exemptReasonId": if d.exempt.is_zero() { 4 } else { 19 },
        "inState": line.origin.region == line.destination.region,
        "jurisCode": j.code,
        "jurisName": j.name,
        "jurisdictionId": j.id,
        "signatureCode": j.signature,
        "stateAssignedNo": j.state_assigned_no,
        "jurisType": j.level.type_id(),
        "jurisdictionType": j.level.name(),
    });
    let amounts = json!({
        "nonTaxableAmount": money(d.non_taxable),
        "nonTaxableRuleId": 0,
        "nonTaxableType": if d.non_taxable_type.is_empty() { "RateRule" } else { d.non_taxable_type },
        "rate": money(j.rate),
        "rateRuleId": 0,
        "rateSourceId": 3,
        "serCode": " ",
        "sourcing": "Destination",
        "tax": money(d.tax),
        "taxableAmount": money(d.taxable),
        "taxType": j.tax_type,
        "taxSubTypeId": j.tax_type.get(..1).unwrap_or("S"),
        "taxTypeGroupId": if j.tax_type == "Output" { "InputAndOutput" } else { "SalesAndUse" },
        "taxName": j.tax_name,
        "taxAuthorityTypeId": 45,
        "taxRegionId": 0,
        "taxCalculated": money(d.tax),
        "taxOverride": 0,
        "rateType": rate_type(j).0,
        "rateTypeCode": rate_type(j).1,
        "taxableUnits": money(d.taxable),
        "nonTaxableUnits": money(d.non_taxable),
        "exemptUnits": money(d.exempt),
        "unitOfBasis": "PerCurrencyUnit",
    });
    let reporting = json!({
        "isNonPassThru": false,
        "isFee": false,
        "reportingTaxableUnits": money(d.taxable),
        "reportingNonTaxableUnits": money(d.non_taxable),
        "reportingExemptUnits": money(d.exempt),
        "reportingTax": money(d.tax),
        "reportingTaxCalculated": money(d.tax),
        "liabilityType": "Seller",
    });
    if let Some(map) = value.as_object_mut() {
        for part in [amounts, reporting] {
            if let Value::Object(rest) = part {
                map.extend(rest);
            }
        }
    }
    value
}

fn line(l: &Line, t: &Transaction, include: Include) -> Value {
    let mut value = json!({
        "id": l.id,
        "transactionId": t.id,
        "lineNumber": l.input.number,
        "boundaryOverrideId": 0,
        "customerUsageType": l.entity_use_code,
        "entityUseCode": l.entity_use_code,
        "description": l.input.description,
        "destinationAddressId": t.destination_address_id,
        "originAddressId": t.origin_address_id,
        "discountAmount": money(l.discount_amount),
        "discountTypeId": 0,
        "exemptAmount": money(l.tax.exempt),
        "exemptCertId": l.exempt_cert_id,
        "exemptNo": l.exempt_no,
        "isItemTaxable": !l.tax.taxable.is_zero(),
        "isSSTP": false,
        "itemCode": l.input.item_code,
        "lineAmount": money(l.line_amount),
        "quantity": money(l.input.quantity),
        "ref1": l.input.ref1,
        "ref2": l.input.ref2,
        "reportingDate": date(t.input.date),
        "revAccount": "",
        "sourcing": "Destination",
        "tax": money(l.tax.tax),
        "taxableAmount": money(l.tax.taxable),
        "taxCalculated": money(l.tax_calculated),
        "taxCode": line_code(l),
        "taxCodeId": l.tax_code.id,
        "taxDate": date(t.tax_date),
        "taxEngine": "",
        "taxOverrideType": t.input.tax_override.as_ref().map_or("None", |o| o.kind()),
        "businessIdentificationNo": t.input.business_identification_no,
        "taxOverrideAmount": 0,
        "taxOverrideReason": t.input.tax_override.as_ref().map_or("", |o| o.reason()),
        "taxIncluded": l.input.tax_included,
    });
    let temporary = t.status == DocStatus::Temporary;
    if include.details {
        let details: Vec<Value> = l
            .tax
            .details
            .iter()
            .enumerate()
            .map(|(i, d)| {
                let id = if temporary { 0 } else { l.id * 10 + i64::try_from(i).unwrap_or(0) };
                let mut value = detail(d, t, l, id);
                if temporary {
                    keep_only(&mut value, TEMPORARY_DETAIL_KEYS);
                }
                value
            })
            .collect();
        insert(&mut value, "details", Value::Array(details));
        insert(&mut value, "nonPassthroughDetails", json!([]));
        if !temporary {
            let mut kinds = vec![("ShipFrom", t.origin_address_id), ("ShipTo", t.destination_address_id)];
            kinds.dedup_by_key(|k| k.1 == 0);
            let types: Vec<Value> = kinds
                .iter()
                .enumerate()
                .map(|(i, (code, address))| {
                    json!({"documentLineLocationTypeId": l.id * 10 + 5 + i64::try_from(i).unwrap_or(0),
                        "documentLineId": l.id, "documentAddressId": address, "locationTypeCode": code})
                })
                .collect();
            insert(&mut value, "lineLocationTypes", Value::Array(types));
        }
    }
    // Not modelled: harmonised codes, VAT codes and cost-insurance-freight; a real answer always
    // carries them, empty for a US sale.
    insert(&mut value, "hsCode", json!(""));
    insert(&mut value, "costInsuranceFreight", json!(0));
    insert(&mut value, "vatCode", json!(""));
    insert(&mut value, "vatNumberTypeId", json!(0));
    if temporary {
        insert(&mut value, "id", json!(0));
        insert(&mut value, "transactionId", json!(0));
        keep_only(&mut value, TEMPORARY_LINE_KEYS);
    }
    value
}

/// A line's tax code as sent (upper case), or the code the simulator taxed it as when none was.
fn line_code(l: &Line) -> String {
    let sent = l.input.tax_code.trim();
    if sent.is_empty() {
        l.tax_code.code.to_owned()
    } else {
        sent.to_ascii_uppercase()
    }
}

fn address_value(t: &Transaction, id: i64, a: &super::models::Address) -> Value {
    let mut value = json!({
        "id": id,
        "transactionId": t.id,
        "boundaryLevel": if a.line1.is_empty() { "Zip5" } else { "Address" },
        "line1": a.line1,
        "line2": a.line2,
        "line3": a.line3,
        "city": a.city,
        "region": a.region,
        "postalCode": a.postal_code,
        "country": a.country,
        "taxRegionId": 0,
    });
    // Coordinates, as strings: those sent, else those of a ZIP the resolver can place, else ""
    // (as recorded for addresses AvaTax placed by postal code only, e.g. in Europe).
    let known = super::reference::postal_place(&a.postal_code).map(|p| (p.3, p.4));
    let coordinates = a.latitude.zip(a.longitude).or(known.filter(|_| a.country == "US"));
    let (latitude, longitude) = coordinates.map_or_else(Default::default, |(la, lo)| (la.to_string(), lo.to_string()));
    insert(&mut value, "latitude", json!(latitude));
    insert(&mut value, "longitude", json!(longitude));
    value
}

/// The per-jurisdiction summary: details of every line added up by jurisdiction.
/// AvaTax's `rateType` and its one-letter code.
fn rate_type(j: &super::calc::Jurisdiction) -> (&'static str, &'static str) {
    if j.zero_rated {
        ("Zero", "Z")
    } else if j.tax_type == "Output" {
        ("Standard", "S")
    } else {
        ("General", "G")
    }
}

/// The invoice messages of the lines that need one, each message once with its lines (by
/// message code, as recorded), and the engine's note carrying the same as JSON text.
fn invoice_messages(t: &Transaction) -> Option<(Value, Value)> {
    let marked: Vec<(&str, InvoiceMessage)> =
        t.lines.iter().filter_map(|l| l.tax.invoice_message.map(|m| (l.input.number.as_str(), m))).collect();
    if marked.is_empty() {
        return None;
    }
    let mut kinds: Vec<InvoiceMessage> = marked.iter().map(|(_, m)| *m).collect();
    kinds.sort_by_key(|m| m.code());
    kinds.dedup();
    let grouped: Vec<Value> = kinds
        .iter()
        .map(|kind| {
            let numbers: Vec<&str> = marked.iter().filter(|(_, m)| m == kind).map(|(n, _)| *n).collect();
            json!({"content": kind.text(), "lineNumbers": numbers})
        })
        .collect();
    let master: Vec<Value> =
        kinds.iter().map(|m| json!({"MessageCode": m.code(), "Message": m.text(), "CitationCode": ""})).collect();
    let list: Vec<Value> = marked.iter().map(|(n, m)| json!({"TaxLineNo": n, "MessageCode": m.code()})).collect();
    let details = json!({"InvoiceMessageMasterList": master, "InvoiceMessageList": list}).to_string();
    let note = json!({"summary": "Invoice  Messages for the transaction", "details": details, "refersTo": "",
                      "severity": "Success", "source": "Avalara.AvaTax.TaxEngine"});
    Some((Value::Array(grouped), note))
}

fn summary(t: &Transaction) -> Vec<Value> {
    struct Row {
        key: (String, &'static str, String),
        value: Value,
        taxable: Decimal,
        tax: Decimal,
        non_taxable: Decimal,
        exempt: Decimal,
    }
    let mut rows: Vec<Row> = Vec::new();
    for line in &t.lines {
        for d in &line.tax.details {
            let j = &d.jurisdiction;
            let key = (j.code.clone(), j.level.name(), j.tax_name.clone());
            let index = match rows.iter().position(|r| r.key == key) {
                Some(i) => i,
                None => {
                    rows.push(Row {
                        key,
                        value: json!({
                            "country": j.country,
                            "region": j.region,
                            "jurisType": j.level.name(),
                            "jurisCode": j.code,
                            "jurisName": j.name,
                            "taxAuthorityType": 45,
                            "stateAssignedNo": j.state_assigned_no,
                            "taxType": j.tax_type,
                            "taxSubType": j.tax_type.get(..1).unwrap_or("S"),
                            "taxName": j.tax_name,
                            "rateType": rate_type(j).0,
                            "rate": money(j.rate),
                        }),
                        taxable: Decimal::ZERO,
                        tax: Decimal::ZERO,
                        non_taxable: Decimal::ZERO,
                        exempt: Decimal::ZERO,
                    });
                    rows.len() - 1
                }
            };
            let row = &mut rows[index];
            row.taxable += d.taxable;
            row.tax += d.tax;
            row.non_taxable += d.non_taxable;
            row.exempt += d.exempt;
        }
    }
    rows.into_iter()
        .map(|mut r| {
            insert(&mut r.value, "taxable", money(r.taxable));
            insert(&mut r.value, "tax", money(r.tax));
            insert(&mut r.value, "taxCalculated", money(r.tax));
            insert(&mut r.value, "nonTaxable", money(r.non_taxable));
            insert(&mut r.value, "exemption", money(r.exempt));
            r.value
        })
        .collect()
}

/// A document's top-level fields, in the order the service writes them: one table that both
/// renders a document and reads one field of it for a list's `$filter` or `$orderBy`, so a
/// filter over 100,000 documents reads the fields it names and never renders the rest.
type HeaderField = (&'static str, fn(&Transaction) -> Value);

const HEADER: &[HeaderField] = &[
    ("id", |t| json!(t.id)),
    ("code", |t| json!(t.code)),
    ("companyId", |t| json!(t.company_id)),
    ("date", |t| json!(date(t.input.date))),
    // A SalesOrder answers its own date here (recorded traffic); a stored document 1900-01-01.
    ("paymentDate", |t| {
        json!(if t.status == DocStatus::Temporary { date(t.input.date) } else { "1900-01-01".to_owned() })
    }),
    ("status", |t| json!(t.status.name())),
    ("type", |t| json!(t.doc_type.name())),
    ("batchCode", |t| json!(t.input.batch_code)),
    ("currencyCode", |t| json!(t.input.currency_code)),
    ("exchangeRateCurrencyCode", |t| json!(t.input.currency_code)),
    ("customerUsageType", |t| json!(t.input.entity_use_code)),
    ("entityUseCode", |t| json!(t.input.entity_use_code)),
    ("customerVendorCode", |t| json!(t.input.customer_code)),
    ("customerCode", |t| json!(t.input.customer_code)),
    ("exemptNo", |t| json!(t.input.exemption_no)),
    ("reconciled", |_| json!(false)),
    ("locationCode", |_| json!("")),
    ("reportingLocationCode", |t| json!(t.input.reporting_location_code)),
    ("purchaseOrderNo", |t| json!(t.input.purchase_order_no)),
    ("referenceCode", |t| json!(t.input.reference_code)),
    ("salespersonCode", |t| json!(t.input.salesperson_code)),
    ("taxOverrideType", |t| json!(t.input.tax_override.as_ref().map_or("None", |o| o.kind()))),
    ("taxOverrideAmount", |_| json!(0)),
    ("taxOverrideReason", |t| json!(t.input.tax_override.as_ref().map_or("", |o| o.reason()))),
    ("totalAmount", |t| money(t.total_amount())),
    ("totalExempt", |t| money(t.total_exempt())),
    ("totalDiscount", |t| money(t.total_discount())),
    ("totalTax", |t| money(t.total_tax())),
    ("totalTaxable", |t| money(t.total_taxable())),
    ("totalTaxCalculated", |t| money(t.total_tax_calculated())),
    ("adjustmentReason", |t| json!(t.adjustment_reason)),
    ("adjustmentDescription", |t| json!(t.adjustment_description)),
    ("locked", |t| json!(t.locked)),
    ("region", |t| json!(t.destination().map(|a| a.region.as_str()).unwrap_or_default())),
    ("country", |t| json!(t.destination().map(|a| a.country.as_str()).unwrap_or_default())),
    ("version", |t| json!(t.version)),
    ("softwareVersion", |_| json!("opsdeck-sandbox")),
    ("originAddressId", |t| json!(t.origin_address_id)),
    ("destinationAddressId", |t| json!(t.destination_address_id)),
    ("exchangeRateEffectiveDate", |t| json!(date(t.input.date))),
    ("exchangeRate", |_| json!(1)),
    ("description", |t| json!(t.input.description)),
    ("email", |t| json!(t.input.email)),
    ("businessIdentificationNo", |t| json!(t.input.business_identification_no)),
    ("modifiedDate", |t| json!(transaction_timestamp(t.modified))),
    ("modifiedUserId", |_| json!(54057)),
    ("taxDate", |t| json!(format!("{}T00:00:00", date(t.tax_date)))),
];

/// The reader of one top-level field of a stored document as `transaction` writes it, found
/// regardless of letter case (as the service matches names); `None` for a field that is not
/// one of them (the lines, the addresses).
pub fn transaction_field(name: &str) -> Option<fn(&Transaction) -> Value> {
    HEADER.iter().find(|(field, _)| field.eq_ignore_ascii_case(name)).map(|(_, read)| *read)
}

pub fn transaction(t: &Transaction, include: Include) -> Value {
    let mut value = Value::Object(HEADER.iter().map(|(name, read)| ((*name).to_owned(), read(t))).collect());
    if include.lines {
        insert(&mut value, "lines", Value::Array(t.lines.iter().map(|l| line(l, t, include)).collect()));
    }
    if include.addresses {
        let mut addresses = Vec::new();
        if let Some(first) = t.lines.first() {
            addresses.push(address_value(t, t.destination_address_id, &first.destination));
            if first.origin != first.destination {
                addresses.push(address_value(t, t.origin_address_id, &first.origin));
            }
        }
        insert(&mut value, "addresses", Value::Array(addresses));
        // Recorded 2022 answers carry an empty document-level list beside the lines' own.
        insert(&mut value, "locationTypes", json!([]));
    }
    if include.summary {
        insert(&mut value, "summary", Value::Array(summary(t)));
    }
    let mut messages: Vec<Value> = t
        .messages
        .iter()
        .map(|m| json!({"summary": m, "details": m, "refersTo": "Addresses", "severity": "Warning", "source": "Avalara.AvaTax.Services.Tax"}))
        .collect();
    if let Some((grouped, note)) = invoice_messages(t) {
        insert(&mut value, "invoiceMessages", grouped);
        messages.push(note);
    }
    if !messages.is_empty() {
        insert(&mut value, "messages", Value::Array(messages));
    }
    if t.status == DocStatus::Temporary {
        // A quote keeps its override, when it has one (recorded ReturnOrders with a TaxDate one).
        // So does an email given with it (recorded 2024 quotes).
        let overridden = ["taxOverrideType", "taxOverrideAmount", "taxOverrideReason"];
        let keys: Vec<&str> = TEMPORARY_KEYS
            .iter()
            .copied()
            .chain(overridden.into_iter().filter(|_| t.input.tax_override.is_some()))
            .chain(["email"].into_iter().filter(|_| !t.input.email.trim().is_empty()))
            .collect();
        keep_only(&mut value, &keys);
        if let Some(addresses) = value.get_mut("addresses").and_then(Value::as_array_mut) {
            for address in addresses {
                insert(address, "id", json!(0));
                insert(address, "transactionId", json!(0));
            }
        }
    }
    value
}

/// What changed a stored document, for the answer of the call that changed it.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Change {
    Adjusted,
    Voided,
}

/// The answer of an adjust or a void: the document, with the keys recorded answers of these calls
/// carry beside a created document's (`isSellerImporterOfRecord`; a void's `messages`), and
/// without those an adjusted document no longer has (`email`, and on voiding it `description`).
pub fn changed_transaction(t: &Transaction, include: Include, change: Change) -> Value {
    let mut value = transaction(t, include);
    insert(&mut value, "isSellerImporterOfRecord", json!(false));
    if let Some(map) = value.as_object_mut() {
        if t.version > 1 {
            map.remove("email");
            if change == Change::Voided {
                map.remove("description");
            }
        }
        if change == Change::Voided {
            map.entry("messages").or_insert_with(|| json!([]));
        }
    }
    value
}

fn address_request(a: &super::models::Address) -> Value {
    let mut value = json!({
        "line1": a.line1, "line2": a.line2, "line3": a.line3, "city": a.city,
        "region": a.region, "country": a.country, "postalCode": a.postal_code,
    });
    if let (Some(lat), Some(long)) = (a.latitude, a.longitude) {
        insert(&mut value, "latitude", json!(lat));
        insert(&mut value, "longitude", json!(long));
    }
    value
}

/// The CreateTransactionModel that would recreate a stored document (audit's `reconstructed`).
pub fn reconstructed_request(t: &Transaction) -> Value {
    let input = &t.input;
    let mut addresses = Map::new();
    for (role, address) in &input.addresses.0 {
        let key = role.get(..1).map_or_else(String::new, str::to_lowercase) + role.get(1..).unwrap_or("");
        addresses.insert(key, address_request(address));
    }
    let lines: Vec<Value> = t
        .lines
        .iter()
        .map(|l| {
            json!({
                "number": l.input.number,
                "quantity": money(l.input.quantity),
                "amount": money(l.line_amount + l.discount_amount),
                "taxCode": line_code(l),
                "itemCode": l.input.item_code,
                "description": l.input.description,
                "discounted": l.input.discounted,
                "taxIncluded": l.input.tax_included,
            })
        })
        .collect();
    json!({
        "code": t.code,
        "type": t.doc_type.name(),
        "companyCode": input.company_code,
        "date": date(input.date),
        "customerCode": input.customer_code,
        "entityUseCode": input.entity_use_code,
        "exemptionNo": input.exemption_no,
        "discount": money(input.discount),
        "purchaseOrderNo": input.purchase_order_no,
        "referenceCode": input.reference_code,
        "description": input.description,
        "currencyCode": input.currency_code,
        "commit": t.status == super::models::DocStatus::Committed,
        "addresses": addresses,
        "lines": lines,
    })
}
