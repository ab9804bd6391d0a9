//! The TaxJar tab: rate lookups, tax calculations, orders and refunds as tables (amounts, which
//! TaxJar answers as strings, in money format; the tax of each jurisdiction level). Pure
//! functions over JSON, so the rules are tested without a terminal.

use serde_json::{Map, Value};

use crate::catalog::Operation;
use crate::client::Values;
use crate::format::time_text;
use crate::tui::components::detail::{columns, fact, money_cell, percent_cell, text, Align, Detail, Table, Tone};
use crate::tui::services::ServiceConsole;

pub struct Taxjar;

impl ServiceConsole for Taxjar {
    /// Rate lookups, tax calculations, orders and refunds as tables.
    fn detail(&self, op: &Operation, body: &Value) -> Option<Detail> {
        match op.name {
            "rates_get" => body.get("rate").map(taxjar_rate),
            "taxes_calculate" => body.get("tax").map(taxjar_tax),
            "orders_get" | "orders_create" | "orders_update" => {
                body.get("order").map(|order| taxjar_transaction("order", order))
            }
            "refunds_get" | "refunds_create" | "refunds_update" => {
                body.get("refund").map(|refund| taxjar_transaction("refund", refund))
            }
            _ => None,
        }
    }

    /// `t` on an order or a refund: a tax calculation of the same sale.
    fn record_action(
        &self,
        key: char,
        record: &Value,
        _scope: &dyn Fn(&str) -> Option<String>,
    ) -> Option<(&'static str, Values)> {
        (key == 't').then(|| ("taxes_calculate", calculation_of(record)))
    }
}

/// What a tax calculation of the sale `transaction` (an order or a refund) is asked with: its
/// addresses, amounts, customer and exemption, and its line items with the fields a
/// calculation takes.
fn calculation_of(transaction: &Value) -> Values {
    let mut values = Values::new();
    let Some(fields) = transaction.as_object() else { return values };
    let addresses = ["country", "zip", "state", "city", "street"]
        .iter()
        .flat_map(|part| ["from", "to"].into_iter().map(move |side| format!("{side}_{part}")));
    let scalars = addresses.chain(["amount", "shipping", "customer_id", "exemption_type"].map(str::to_owned));
    for name in scalars {
        let text = match fields.get(&name) {
            Some(Value::String(s)) if !s.is_empty() => s.clone(),
            Some(Value::Number(n)) => n.to_string(),
            _ => continue,
        };
        values.insert(name, text);
    }
    let items: Vec<Value> = fields
        .get("line_items")
        .and_then(Value::as_array)
        .map(|items| {
            items
                .iter()
                .map(|item| {
                    // Orders say amounts as strings ("15.0"); a calculation takes numbers.
                    let number = |value: Value| match value {
                        Value::String(text) => match text.parse::<serde_json::Number>() {
                            Ok(n) => Value::Number(n),
                            Err(_) => Value::String(text),
                        },
                        other => other,
                    };
                    let kept = ["id", "quantity", "product_tax_code", "unit_price", "discount"]
                        .iter()
                        .filter_map(|k| {
                            let value = item.get(*k)?.clone();
                            let value = if matches!(*k, "quantity" | "unit_price" | "discount") {
                                number(value)
                            } else {
                                value
                            };
                            Some(((*k).to_owned(), value))
                        })
                        .filter(|(_, v)| !v.is_null());
                    Value::Object(kept.collect())
                })
                .collect()
        })
        .unwrap_or_default();
    if !items.is_empty() {
        values.insert("line_items".into(), Value::Array(items).to_string());
    }
    values
}

/// The record key of order and refund views.
const SALE_KEYS: &[(char, &str)] = &[('t', "tax calculation of this sale")];

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
            "no breakdown: TaxJar gives one only for line items; send line_items to see it".into()
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
        fact("date", time_text(&text(field("transaction_date")))),
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
        record: Some(record.clone()),
        record_keys: SALE_KEYS,
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
