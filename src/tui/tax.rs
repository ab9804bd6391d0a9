//! What the console shows of AvaTax and TaxJar beyond raw JSON: money in money format, document
//! statuses by tone, and the structured views (a transaction with its lines and per-jurisdiction
//! tax, rate and calculation breakdowns) built from response bodies. Pure functions over JSON,
//! so the rules are tested without a terminal.

use std::str::FromStr as _;

use rust_decimal::Decimal;
use serde_json::{Map, Value};

use crate::catalog::{Operation, Service};
use crate::tui::components::detail::{array, columns, fact, text, Align, Detail, Table, Tone};

/// Fields that hold money in AvaTax and TaxJar bodies; besides these, any field named like an
/// amount (`exemptAmount`, `state_amount`, `tax_collectable`) is money too.
const MONEY_FIELDS: &[&str] = &[
    "amount",
    "sales_tax",
    "shipping",
    "order_total_amount",
    "amount_to_collect",
    "unit_price",
    "discount",
    "tax",
    "taxable",
    "nonTaxable",
    "exemption",
    "taxCalculated",
    "totalTax",
    "totalTaxable",
    "totalExempt",
    "totalDiscount",
    "totalTaxCalculated",
];

/// Whether a column or field of this name holds money, so it is shown as `1,234.50` and
/// right-aligned.
pub fn is_money_field(name: &str) -> bool {
    MONEY_FIELDS.contains(&name)
        || name.ends_with("Amount")
        || name.ends_with("_amount")
        || name.ends_with("_collectable")
        || (name.starts_with("total") && name.len() > 5 && !name.ends_with("Rate"))
}

/// A number (JSON number or numeric string) in money format: thousands grouped, at least two
/// decimals, and never fewer digits than it has (`0.955` stays `0.955`, not a rounded `0.96`).
/// `None` when it is no number: the text is then shown as it is.
pub fn money(value: &Value) -> Option<String> {
    match value {
        Value::Number(n) => money_text(&n.to_string()),
        Value::String(s) => money_text(s),
        _ => None,
    }
}

/// [`money`] of a text.
pub fn money_text(text: &str) -> Option<String> {
    let amount = decimal(text)?;
    Some(grouped(amount, 2))
}

/// A rate (`0.0775`) as a percentage (`7.75 %`), exact.
pub fn percent(value: &Value) -> Option<String> {
    let rate = match value {
        Value::Number(n) => decimal(&n.to_string())?,
        Value::String(s) => decimal(s)?,
        _ => return None,
    };
    let hundred = Decimal::ONE_HUNDRED;
    Some(format!("{} %", grouped(rate.checked_mul(hundred)?, 2)))
}

fn decimal(text: &str) -> Option<Decimal> {
    let text = text.trim();
    if text.is_empty() {
        return None;
    }
    Decimal::from_str(text).or_else(|_| Decimal::from_scientific(text)).ok()
}

/// `amount` with at least `min_places` decimals and its integer part grouped by thousands.
fn grouped(amount: Decimal, min_places: u32) -> String {
    let normal = amount.normalize();
    let places = normal.scale().max(min_places) as usize;
    let text = format!("{normal:.places$}");
    let (sign, digits) = match text.strip_prefix('-') {
        Some(rest) => ("-", rest),
        None => ("", text.as_str()),
    };
    let (whole, fraction) = digits.split_once('.').unwrap_or((digits, ""));
    let mut out = String::with_capacity(text.len() + whole.len() / 3);
    for (index, digit) in whole.chars().enumerate() {
        if index > 0 && (whole.len() - index) % 3 == 0 {
            out.push(',');
        }
        out.push(digit);
    }
    let fraction = if fraction.is_empty() { String::new() } else { format!(".{fraction}") };
    format!("{sign}{out}{fraction}")
}

/// How a document status reads at a glance: final, open, gone, superseded.
pub fn status_tone(status: &str) -> Option<Tone> {
    Some(match status.to_ascii_lowercase().as_str() {
        "committed" => Tone::Good,
        "saved" | "posted" | "queued" | "pendingapproval" | "uncommitted" => Tone::Pending,
        "cancelled" | "voided" | "deleted" => Tone::Bad,
        "adjusted" => Tone::Changed,
        "temporary" => Tone::Quiet,
        _ => return None,
    })
}

/// The structured view of a response, for the operations that have one: AvaTax transactions,
/// AvaTax and TaxJar rate lookups, and TaxJar's tax calculation.
pub fn detail_for(op: &Operation, body: &Value) -> Option<Detail> {
    match (op.service, op.name) {
        (
            Service::Avatax,
            "transactions_create"
            | "transactions_get"
            | "transactions_adjust"
            | "transactions_commit"
            | "transactions_void"
            | "transactions_refund",
        ) => body.get("lines").is_some().then(|| transaction_detail(body)),
        (Service::Avatax, "tax_rates_by_address" | "tax_rates_by_postal_code") => Some(avatax_rates(op.name, body)),
        (Service::Taxjar, "rates_get") => body.get("rate").map(taxjar_rate),
        (Service::Taxjar, "taxes_calculate") => body.get("tax").map(taxjar_tax),
        (Service::Taxjar, "orders_get" | "orders_create" | "orders_update") => {
            body.get("order").map(|order| taxjar_transaction("order", order))
        }
        (Service::Taxjar, "refunds_get" | "refunds_create" | "refunds_update") => {
            body.get("refund").map(|refund| taxjar_transaction("refund", refund))
        }
        _ => None,
    }
}

fn money_cell(value: Option<&Value>) -> String {
    value.and_then(money).unwrap_or_else(|| text(value))
}

fn percent_cell(value: Option<&Value>) -> String {
    value.and_then(percent).unwrap_or_else(|| text(value))
}

/// An AvaTax transaction: its totals, its lines, the tax of the selected line by jurisdiction,
/// and the document's summary by jurisdiction.
pub fn transaction_detail(tx: &Value) -> Detail {
    let field = |name: &str| tx.get(name);
    let status = text(field("status"));
    let mut facts = vec![
        fact("code", text(field("code"))),
        fact("type", text(field("type"))),
        (String::from("status"), status.clone(), status_tone(&status)),
        fact("date", text(field("date"))),
        fact("customer", text(field("customerCode").or_else(|| field("customerVendorCode")))),
        fact("company", text(field("companyId"))),
        fact("version", text(field("version"))),
        fact("amount", money_cell(field("totalAmount"))),
        fact("taxable", money_cell(field("totalTaxable"))),
        fact("exempt", money_cell(field("totalExempt"))),
        fact("tax", money_cell(field("totalTax"))),
    ];
    let reason = text(field("adjustmentReason"));
    if !reason.is_empty() && reason != "NotAdjusted" {
        facts.push(fact("adjusted", reason));
    }
    if field("locked").and_then(Value::as_bool) == Some(true) {
        facts.push((String::from("locked"), String::from("yes: reported, cannot change"), Some(Tone::Bad)));
    }
    facts.retain(|(_, value, _)| !value.is_empty());
    let lines = array(field("lines"));
    let lines_table = Table {
        title: format!("lines ({})", lines.len()),
        columns: columns(&[
            ("#", Align::Left),
            ("item", Align::Left),
            ("description", Align::Left),
            ("qty", Align::Right),
            ("amount", Align::Right),
            ("taxable", Align::Right),
            ("exempt", Align::Right),
            ("tax", Align::Right),
            ("tax code", Align::Left),
        ]),
        rows: lines
            .iter()
            .map(|line| {
                vec![
                    text(line.get("lineNumber")),
                    text(line.get("itemCode")),
                    text(line.get("description")),
                    text(line.get("quantity")),
                    money_cell(line.get("lineAmount")),
                    money_cell(line.get("taxableAmount")),
                    money_cell(line.get("exemptAmount")),
                    money_cell(line.get("tax")),
                    text(line.get("taxCode")),
                ]
            })
            .collect(),
        tones: Vec::new(),
    };
    let per_row = lines
        .iter()
        .map(|line| {
            let details: &[Value] = line.get("details").and_then(Value::as_array).map_or(&[], Vec::as_slice);
            jurisdiction_table(
                format!("tax of line {} by jurisdiction", text(line.get("lineNumber"))),
                details,
                "taxableAmount",
            )
        })
        .collect();
    let summary: &[Value] = field("summary").and_then(Value::as_array).map_or(&[], Vec::as_slice);
    let mut tables = vec![lines_table];
    if !summary.is_empty() {
        tables.push(jurisdiction_table("document tax by jurisdiction".into(), summary, "taxable"));
    }
    let note = lines
        .iter()
        .all(|l| l.get("details").is_none())
        .then(|| "no per-jurisdiction details in this response".to_owned())
        .filter(|_| !lines.is_empty());
    Detail {
        title: format!("transaction {}", text(field("code"))),
        facts,
        tables,
        selectable: Some(0),
        per_row,
        selected: 0,
        scroll: 0,
        note,
        transaction: Some(tx.clone()),
        keys: None,
        ..Detail::default()
    }
}

/// One row per jurisdiction: its name, type, tax name, rate, taxable amount and tax.
fn jurisdiction_table(title: String, rows: &[Value], taxable_field: &str) -> Table {
    Table {
        title,
        columns: columns(&[
            ("jurisdiction", Align::Left),
            ("type", Align::Left),
            ("tax name", Align::Left),
            ("rate", Align::Right),
            ("taxable", Align::Right),
            ("tax", Align::Right),
        ]),
        rows: rows
            .iter()
            .map(|d| {
                vec![
                    text(d.get("jurisName")),
                    text(d.get("jurisType")),
                    text(d.get("taxName")),
                    percent_cell(d.get("rate")),
                    money_cell(d.get(taxable_field)),
                    money_cell(d.get("tax")),
                ]
            })
            .collect(),
        tones: Vec::new(),
    }
}

/// AvaTax's TaxRateModel: one row per rate, then the total.
fn avatax_rates(name: &str, body: &Value) -> Detail {
    let rates: &[Value] = body.get("rates").and_then(Value::as_array).map_or(&[], Vec::as_slice);
    let mut rows: Vec<Vec<String>> =
        rates.iter().map(|r| vec![text(r.get("type")), text(r.get("name")), percent_cell(r.get("rate"))]).collect();
    rows.push(vec!["total".into(), String::new(), percent_cell(body.get("totalRate"))]);
    let mut tones = vec![None; rows.len()];
    if let Some(last) = tones.last_mut() {
        *last = Some(Tone::Total);
    }
    Detail {
        title: name.replace('_', " "),
        facts: vec![fact("total rate", percent_cell(body.get("totalRate")))],
        tables: vec![Table {
            title: "rates by jurisdiction".into(),
            columns: columns(&[("type", Align::Left), ("name", Align::Left), ("rate", Align::Right)]),
            rows,
            tones,
        }],
        ..Detail::default()
    }
}

/// TaxJar's rate of a location: each `*_rate` field as a row, named by the jurisdiction beside it.
fn taxjar_rate(rate: &Value) -> Detail {
    let Some(map) = rate.as_object() else { return Detail::default() };
    let mut rows = Vec::new();
    let mut tones = Vec::new();
    for (key, value) in map {
        let Some(level) = key.strip_suffix("_rate") else { continue };
        let (label, place) = match level {
            "combined_district" => ("special districts".to_owned(), String::new()),
            "combined" => ("combined".to_owned(), String::new()),
            other => (other.replace('_', " "), text(map.get(other))),
        };
        tones.push((level == "combined").then_some(Tone::Total));
        rows.push(vec![label, place, percent_cell(Some(value))]);
    }
    let mut facts = Vec::new();
    for key in ["zip", "country", "state", "name"] {
        if let Some(value) = map.get(key).filter(|v| !v.is_null()) {
            facts.push(fact(key, text(Some(value))));
        }
    }
    if let Some(freight) = map.get("freight_taxable") {
        facts.push(fact("freight taxable", text(Some(freight))));
    }
    Detail {
        title: "rate of the location".into(),
        facts,
        tables: vec![Table {
            title: "rates by jurisdiction".into(),
            columns: columns(&[("level", Align::Left), ("where", Align::Left), ("rate", Align::Right)]),
            rows,
            tones,
        }],
        ..Detail::default()
    }
}

/// The jurisdiction levels of a TaxJar breakdown, by the prefixes of its fields: the US
/// (state, county, city, special district), Canada (GST, PST, QST) and elsewhere (country).
const TAXJAR_LEVELS: &[(&str, &str, &str, &str)] = &[
    ("state", "state_taxable_amount", "state_tax_rate", "state_tax_collectable"),
    ("county", "county_taxable_amount", "county_tax_rate", "county_tax_collectable"),
    ("city", "city_taxable_amount", "city_tax_rate", "city_tax_collectable"),
    ("special district", "special_district_taxable_amount", "special_tax_rate", "special_district_tax_collectable"),
    ("GST", "gst_taxable_amount", "gst_tax_rate", "gst"),
    ("PST", "pst_taxable_amount", "pst_tax_rate", "pst"),
    ("QST", "qst_taxable_amount", "qst_tax_rate", "qst"),
    ("country", "country_taxable_amount", "country_tax_rate", "country_tax_collectable"),
];

/// Line items and shipping name some fields differently from the order level.
const TAXJAR_ITEM_LEVELS: &[(&str, &str, &str, &str)] = &[
    ("state", "state_taxable_amount", "state_sales_tax_rate", "state_amount"),
    ("county", "county_taxable_amount", "county_tax_rate", "county_amount"),
    ("city", "city_taxable_amount", "city_tax_rate", "city_amount"),
    ("special district", "special_district_taxable_amount", "special_tax_rate", "special_district_amount"),
    ("GST", "gst_taxable_amount", "gst_tax_rate", "gst"),
    ("PST", "pst_taxable_amount", "pst_tax_rate", "pst"),
    ("QST", "qst_taxable_amount", "qst_tax_rate", "qst"),
    ("country", "country_taxable_amount", "country_tax_rate", "country_tax_collectable"),
];

/// TaxJar's `tax` of an order: totals, the breakdown by jurisdiction, and per line item.
fn taxjar_tax(tax: &Value) -> Detail {
    let field = |name: &str| tax.get(name);
    let mut facts = vec![
        fact("order total", money_cell(field("order_total_amount"))),
        fact("shipping", money_cell(field("shipping"))),
        fact("taxable", money_cell(field("taxable_amount"))),
        fact("to collect", money_cell(field("amount_to_collect"))),
        fact("rate", percent_cell(field("rate"))),
        fact("has nexus", text(field("has_nexus"))),
        fact("freight taxable", text(field("freight_taxable"))),
        fact("tax source", text(field("tax_source"))),
        fact("exemption", text(field("exemption_type"))),
    ];
    if let Some(Value::Object(places)) = field("jurisdictions") {
        let joined: Vec<String> = places.values().map(|v| text(Some(v))).filter(|s| !s.is_empty()).collect();
        facts.push(fact("jurisdictions", joined.join(" / ")));
    }
    facts.retain(|(_, value, _)| !value.is_empty());
    let mut detail = Detail { title: "tax calculation".into(), facts, ..Detail::default() };
    let Some(breakdown) = field("breakdown").and_then(Value::as_object) else {
        detail.note = Some(if field("has_nexus").and_then(Value::as_bool) == Some(false) {
            "no breakdown: no nexus in the destination, so no tax is collected".into()
        } else {
            "the response has no breakdown".into()
        });
        return detail;
    };
    let mut rows = level_rows(breakdown, TAXJAR_LEVELS);
    let mut tones = vec![None; rows.len()];
    rows.push(vec![
        "total".into(),
        money_cell(breakdown.get("taxable_amount")),
        percent_cell(breakdown.get("combined_tax_rate")),
        money_cell(breakdown.get("tax_collectable")),
    ]);
    tones.push(Some(Tone::Total));
    let level_columns = columns(&[
        ("jurisdiction", Align::Left),
        ("taxable", Align::Right),
        ("rate", Align::Right),
        ("tax", Align::Right),
    ]);
    detail.tables.push(Table {
        title: "breakdown by jurisdiction".into(),
        columns: level_columns.clone(),
        rows,
        tones,
    });
    if let Some(Value::Object(shipping)) = breakdown.get("shipping") {
        let mut rows = level_rows(shipping, TAXJAR_ITEM_LEVELS);
        let mut tones = vec![None; rows.len()];
        rows.push(vec![
            "total".into(),
            money_cell(shipping.get("taxable_amount")),
            percent_cell(shipping.get("combined_tax_rate")),
            money_cell(shipping.get("tax_collectable")),
        ]);
        tones.push(Some(Tone::Total));
        detail.tables.push(Table { title: "shipping".into(), columns: level_columns, rows, tones });
    }
    let items: &[Value] = breakdown.get("line_items").and_then(Value::as_array).map_or(&[], Vec::as_slice);
    if !items.is_empty() {
        detail.tables.push(Table {
            title: "line items".into(),
            columns: columns(&[
                ("id", Align::Left),
                ("taxable", Align::Right),
                ("rate", Align::Right),
                ("tax", Align::Right),
                ("state", Align::Right),
                ("county", Align::Right),
                ("city", Align::Right),
                ("special", Align::Right),
            ]),
            rows: items
                .iter()
                .map(|item| {
                    let mut row = vec![
                        text(item.get("id")),
                        money_cell(item.get("taxable_amount")),
                        percent_cell(item.get("combined_tax_rate")),
                        money_cell(item.get("tax_collectable")),
                    ];
                    for key in ["state_amount", "county_amount", "city_amount", "special_district_amount"] {
                        row.push(money_cell(item.get(key)));
                    }
                    row
                })
                .collect(),
            tones: Vec::new(),
        });
    }
    detail
}

/// A TaxJar order or refund: who, where, the amounts, and its line items with money in money
/// format (TaxJar answers amounts as strings, `"17.45"`).
fn taxjar_transaction(kind: &str, record: &Value) -> Detail {
    let field = |name: &str| record.get(name);
    let place = |prefix: &str| {
        ["street", "city", "state", "zip", "country"]
            .iter()
            .map(|part| text(field(&format!("{prefix}_{part}"))))
            .filter(|s| !s.is_empty())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut facts = vec![
        fact("id", text(field("transaction_id"))),
        fact("refunds order", text(field("transaction_reference_id"))),
        fact("date", text(field("transaction_date"))),
        fact("provider", text(field("provider"))),
        fact("customer", text(field("customer_id"))),
        fact("exemption", text(field("exemption_type"))),
        fact("from", place("from")),
        fact("to", place("to")),
        fact("amount", money_cell(field("amount"))),
        fact("shipping", money_cell(field("shipping"))),
        fact("sales tax", money_cell(field("sales_tax"))),
    ];
    facts.retain(|(_, value, _)| !value.is_empty());
    let items: &[Value] = field("line_items").and_then(Value::as_array).map_or(&[], Vec::as_slice);
    let table = Table {
        title: format!("line items ({})", items.len()),
        columns: columns(&[
            ("id", Align::Left),
            ("description", Align::Left),
            ("qty", Align::Right),
            ("unit price", Align::Right),
            ("discount", Align::Right),
            ("sales tax", Align::Right),
            ("tax code", Align::Left),
        ]),
        rows: items
            .iter()
            .map(|item| {
                vec![
                    text(item.get("id")),
                    text(item.get("description").or_else(|| item.get("product_identifier"))),
                    text(item.get("quantity")),
                    money_cell(item.get("unit_price")),
                    money_cell(item.get("discount")),
                    money_cell(item.get("sales_tax")),
                    text(item.get("product_tax_code")),
                ]
            })
            .collect(),
        tones: Vec::new(),
    };
    Detail {
        title: format!("{kind} {}", text(field("transaction_id"))),
        facts,
        tables: vec![table],
        ..Detail::default()
    }
}

/// One row per jurisdiction level present in `map`.
fn level_rows(map: &Map<String, Value>, levels: &[(&str, &str, &str, &str)]) -> Vec<Vec<String>> {
    levels
        .iter()
        .filter(|(_, taxable, rate, collectable)| {
            map.contains_key(*taxable) || map.contains_key(*rate) || map.contains_key(*collectable)
        })
        .map(|(label, taxable, rate, collectable)| {
            vec![
                (*label).to_owned(),
                money_cell(map.get(*taxable)),
                percent_cell(map.get(*rate)),
                money_cell(map.get(*collectable)),
            ]
        })
        .collect()
}

/// Today's date, `YYYY-MM-DD` (UTC), for the refund date a form starts with.
pub fn today() -> String {
    let now = time::OffsetDateTime::now_utc();
    format!("{:04}-{:02}-{:02}", now.year(), u8::from(now.month()), now.day())
}

/// The transaction as a `newTransaction` for an adjustment: what was sent to create it (type,
/// code, company, date, customer, addresses, lines), so an adjustment starts from the document
/// as it is and the user changes only what differs.
pub fn adjustment_draft(tx: &Value) -> Value {
    let mut draft = Map::new();
    for key in ["type", "code", "date", "customerCode", "purchaseOrderNo", "exemptionNo", "description"] {
        if let Some(value) = tx.get(key).filter(|v| !v.is_null() && *v != "") {
            draft.insert(key.into(), value.clone());
        }
    }
    if let Some(date) = draft.get("date").and_then(Value::as_str).map(|d| d.chars().take(10).collect::<String>()) {
        draft.insert("date".into(), Value::String(date));
    }
    let lines: Vec<Value> = tx
        .get("lines")
        .and_then(Value::as_array)
        .map(|lines| {
            lines
                .iter()
                .map(|line| {
                    let mut out = Map::new();
                    for (from, to) in [
                        ("lineNumber", "number"),
                        ("quantity", "quantity"),
                        ("lineAmount", "amount"),
                        ("taxCode", "taxCode"),
                        ("itemCode", "itemCode"),
                        ("description", "description"),
                    ] {
                        if let Some(value) = line.get(from).filter(|v| !v.is_null() && *v != "") {
                            out.insert(to.into(), value.clone());
                        }
                    }
                    Value::Object(out)
                })
                .collect()
        })
        .unwrap_or_default();
    draft.insert("lines".into(), Value::Array(lines));
    if let Some(Value::Array(addresses)) = tx.get("addresses") {
        // A transaction answers its addresses as a list; a request names them. With one address
        // (the usual single-location sale) it is the single location.
        if let [only] = addresses.as_slice() {
            let mut address = Map::new();
            for key in ["line1", "city", "region", "country", "postalCode"] {
                if let Some(value) = only.get(key).filter(|v| !v.is_null() && *v != "") {
                    address.insert(key.into(), value.clone());
                }
            }
            draft.insert("addresses".into(), serde_json::json!({ "singleLocation": address }));
        }
    }
    Value::Object(draft)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn money_is_grouped_with_two_decimals_and_keeps_every_digit() {
        assert_eq!(money(&json!(1234.5)).as_deref(), Some("1,234.50"));
        assert_eq!(money(&json!("17.45")).as_deref(), Some("17.45"));
        assert_eq!(money(&json!(0)).as_deref(), Some("0.00"));
        assert_eq!(money(&json!(-16.5)).as_deref(), Some("-16.50"));
        assert_eq!(money(&json!(1_234_567)).as_deref(), Some("1,234,567.00"));
        assert_eq!(money(&json!("0.955")).as_deref(), Some("0.955"), "never rounded away");
        assert_eq!(money(&json!("-1000.0")).as_deref(), Some("-1,000.00"));
        assert_eq!(money(&json!("abc")), None);
        assert_eq!(money(&json!(true)), None);
        assert_eq!(percent(&json!(0.0775)).as_deref(), Some("7.75 %"));
        assert_eq!(percent(&json!("0.0625")).as_deref(), Some("6.25 %"));
        assert_eq!(percent(&json!(0.00375)).as_deref(), Some("0.375 %"));
    }

    #[test]
    fn money_fields_by_name() {
        for name in ["totalAmount", "totalTax", "amount", "sales_tax", "order_total_amount", "state_amount"] {
            assert!(is_money_field(name), "{name}");
        }
        for name in ["code", "status", "rate", "quantity", "id", "totalRate"] {
            assert!(!is_money_field(name), "{name}");
        }
    }

    #[test]
    fn statuses_have_tones() {
        assert_eq!(status_tone("Committed"), Some(Tone::Good));
        assert_eq!(status_tone("Saved"), Some(Tone::Pending));
        assert_eq!(status_tone("Cancelled"), Some(Tone::Bad));
        assert_eq!(status_tone("Adjusted"), Some(Tone::Changed));
        assert_eq!(status_tone("whatever"), None);
    }

    #[test]
    fn an_adjustment_starts_from_the_document() {
        let tx = json!({"code": "INV-1", "type": "SalesInvoice", "date": "2024-03-01T00:00:00", "customerCode": "C1",
            "status": "Committed",
            "lines": [{"lineNumber": "1", "quantity": 2, "lineAmount": 100, "taxCode": "P0000000", "details": []}],
            "addresses": [{"line1": "123 Main Street", "city": "Irvine", "region": "CA", "country": "US", "postalCode": "92615"}]});
        let draft = adjustment_draft(&tx);
        assert_eq!(
            draft,
            json!({"type": "SalesInvoice", "code": "INV-1", "date": "2024-03-01", "customerCode": "C1",
                "lines": [{"number": "1", "quantity": 2, "amount": 100, "taxCode": "P0000000"}],
                "addresses": {"singleLocation": {"line1": "123 Main Street", "city": "Irvine", "region": "CA",
                    "country": "US", "postalCode": "92615"}}})
        );
    }
}
