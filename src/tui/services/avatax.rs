//! The AvaTax tab: money in money format, document statuses by tone, a transaction as tables
//! (its lines and per-jurisdiction tax) with keys to commit, void, adjust or refund it, rate
//! breakdowns, and a company's transactions one Enter away. Pure functions over JSON, so the
//! rules are tested without a terminal.

use serde_json::{Map, Value};

use crate::catalog::{Operation, Service};
use crate::client::Values;
use crate::format::today;
use crate::tui::components::detail::{
    array, columns, fact, money_cell, percent_cell, text, Align, Detail, Table, Tone,
};
use crate::tui::services::{RowAction, ServiceConsole};

pub struct Avatax;

impl ServiceConsole for Avatax {
    /// A company by its code, as AvaTax's own console names it.
    fn label(&self, record: &Map<String, Value>) -> Option<String> {
        ["companyCode", "code", "name"].iter().find_map(|key| record.get(*key)?.as_str().map(str::to_owned))
    }

    fn cell_tone(&self, header: &str, text: &str) -> Option<Tone> {
        (header == "status").then(|| status_tone(text)).flatten()
    }

    fn detail(&self, op: &Operation, body: &Value) -> Option<Detail> {
        detail_for(op, body)
    }

    fn open_row(&self, list_op: &str, record: &Value, scope: &dyn Fn(&str) -> Option<String>) -> Option<RowAction> {
        match list_op {
            "companies_list" => Some(RowAction::Drill("transactions")),
            "transactions_list" => {
                // A list row may lack the lines' jurisdiction details and the addresses: the
                // view opens from the row at once, and the whole document is asked for.
                let has_details = record["lines"]
                    .as_array()
                    .is_some_and(|lines| !lines.is_empty() && lines.iter().all(|l| l.get("details").is_some()));
                let mut values = transaction_values(record, scope);
                values.insert("$include".into(), "Summary,Addresses".into());
                let addressed = values.contains_key("companyCode") && values.contains_key("transactionCode");
                let fetch = (!has_details && addressed).then_some(("transactions_get", values));
                Some(RowAction::View(Box::new(transaction_detail(record)), fetch))
            }
            _ => None,
        }
    }

    fn record_action(
        &self,
        key: char,
        transaction: &Value,
        scope: &dyn Fn(&str) -> Option<String>,
    ) -> Option<(&'static str, Values)> {
        let mut values = transaction_values(transaction, scope);
        // The answer then carries the lines and jurisdictions, so the view can show it again.
        values.insert("$include".into(), "Summary,Addresses".into());
        let op = match key {
            'c' => {
                values.insert("commit".into(), "true".into());
                "transactions_commit"
            }
            'v' => {
                values.insert("code".into(), "DocVoided".into());
                "transactions_void"
            }
            'a' => {
                let draft = adjustment_draft(transaction);
                values.insert("newTransaction".into(), serde_json::to_string_pretty(&draft).unwrap_or_default());
                "transactions_adjust"
            }
            'f' => {
                values.insert("refundDate".into(), today());
                values.insert("refundType".into(), "Full".into());
                if let Some(code) = transaction.get("code").and_then(Value::as_str) {
                    values.insert("refundTransactionCode".into(), format!("{code}-refund"));
                }
                "transactions_refund"
            }
            _ => return None,
        };
        Some((op, values))
    }
}

/// The keys a transaction's view offers, each opening its form (see `record_action`).
const TRANSACTION_KEYS: &[(char, &str)] = &[('c', "commit"), ('v', "void"), ('a', "adjust"), ('f', "refund")];

/// The company code, transaction code and document type that address `transaction`: its own,
/// else the company the list was asked for.
fn transaction_values(transaction: &Value, scope: &dyn Fn(&str) -> Option<String>) -> Values {
    let mut values = Values::new();
    let company =
        transaction.get("companyCode").and_then(Value::as_str).map(str::to_owned).or_else(|| scope("companyCode"));
    if let Some(company) = company {
        values.insert("companyCode".into(), company);
    }
    if let Some(code) = transaction.get("code").and_then(Value::as_str) {
        values.insert("transactionCode".into(), code.to_owned());
    }
    if let Some(kind) = transaction.get("type").and_then(Value::as_str) {
        values.insert("documentType".into(), kind.to_owned());
    }
    values
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

/// The structured view of an AvaTax response, for the operations that have one: transactions
/// and rate lookups.
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
        _ => None,
    }
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
        record: Some(tx.clone()),
        record_keys: TRANSACTION_KEYS,
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
