//! TaxJar's JSON: transactions with money as strings, calculations and summary rates with
//! numbers, rates with strings (api/taxjar.md §3). The tax itself comes from the shared engine.

use std::collections::HashMap;

use rust_decimal::Decimal;
use serde_json::{json, Map, Value};

use super::errors::TaxjarError;
use super::models::{Customer, Fields, Kind, Place, State, Transaction};
use crate::sandbox::tax::{self, Calculation, Level, LineTax, Rates, TaxKind};

/// A JSON number from a decimal (TaxJar's calculations and summary rates).
pub fn number(d: Decimal) -> Value {
    serde_json::from_str(&d.normalize().to_string()).unwrap_or(Value::Null)
}

/// A decimal as TaxJar writes money in transactions and rates in `/rates`: `"15.0"`, `"0.0625"`.
pub fn text(d: Decimal) -> String {
    let s = d.normalize().to_string();
    if s.contains('.') {
        s
    } else {
        format!("{s}.0")
    }
}

fn opt(value: Option<&String>) -> Value {
    value.map_or(Value::Null, |v| Value::String(v.clone()))
}

fn signed(kind: Kind, d: Decimal) -> Value {
    Value::String(text(if kind == Kind::Refund { -d } else { d }))
}

fn upper(value: Option<&String>) -> Value {
    value.map_or(Value::Null, |v| Value::String(v.to_uppercase()))
}

fn place(out: &mut Map<String, Value>, prefix: &str, p: &Place) {
    out.insert(format!("{prefix}country"), opt(p.country.as_ref()));
    out.insert(format!("{prefix}zip"), opt(p.zip.as_ref()));
    out.insert(format!("{prefix}state"), opt(p.state.as_ref()));
    out.insert(format!("{prefix}city"), upper(p.city.as_ref()));
    out.insert(format!("{prefix}street"), opt(p.street.as_ref()));
}

/// An order or refund object.
pub fn transaction(t: &Transaction) -> Value {
    let mut out = Map::new();
    out.insert("transaction_id".into(), json!(t.transaction_id));
    out.insert("user_id".into(), json!(super::models::USER_ID));
    out.insert(
        "transaction_date".into(),
        json!(crate::sandbox::clock::rfc3339_ms(
            i64::try_from(t.date.unix_timestamp_nanos() / 1_000_000).unwrap_or_default()
        )),
    );
    out.insert("transaction_reference_id".into(), opt(t.reference_id.as_ref()));
    out.insert("provider".into(), json!(t.provider));
    out.insert("exemption_type".into(), opt(t.exemption_type.as_ref()));
    out.insert("customer_id".into(), opt(t.customer_id.as_ref()));
    place(&mut out, "from_", t.origin());
    // TaxJar answers from_country "US" for an order sent without an origin (recorded traffic).
    if out.get("from_country").is_none_or(Value::is_null) {
        out.insert("from_country".into(), json!("US"));
    }
    place(&mut out, "to_", &t.to);
    out.insert("amount".into(), signed(t.kind, t.amount));
    out.insert("shipping".into(), signed(t.kind, t.shipping));
    out.insert("sales_tax".into(), signed(t.kind, t.sales_tax));
    let lines: Vec<Value> = t
        .lines
        .iter()
        .map(|l| {
            json!({
                "id": line_id(l), "quantity": l.quantity, "product_identifier": l.product_identifier,
                "description": l.description, "product_tax_code": l.product_tax_code,
                "unit_price": signed(t.kind, l.unit_price), "discount": signed(t.kind, l.discount),
                "sales_tax": signed(t.kind, l.sales_tax),
            })
        })
        .collect();
    out.insert("line_items".into(), Value::Array(lines));
    Value::Object(out)
}

/// A line's id as it was sent: a number stays a number.
fn line_id(l: &super::models::TransactionLine) -> Value {
    match &l.id {
        Some(id) if l.id_is_number => {
            serde_json::from_str::<serde_json::Number>(id).map_or_else(|_| json!(id), Value::Number)
        }
        Some(id) => json!(id),
        None => Value::Null,
    }
}

/// What a delete answers: the identifiers, everything else null.
pub fn deleted_transaction(t: &Transaction) -> Value {
    let mut out = Map::new();
    out.insert("transaction_id".into(), json!(t.transaction_id));
    out.insert("user_id".into(), json!(super::models::USER_ID));
    out.insert("transaction_date".into(), Value::Null);
    out.insert("transaction_reference_id".into(), opt(t.reference_id.as_ref()));
    out.insert("provider".into(), json!(t.provider));
    for prefix in ["from_", "to_"] {
        for field in ["country", "zip", "state", "city", "street"] {
            out.insert(format!("{prefix}{field}"), Value::Null);
        }
    }
    for field in ["amount", "shipping", "sales_tax"] {
        out.insert(field.into(), Value::Null);
    }
    out.insert("line_items".into(), json!([]));
    Value::Object(out)
}

pub fn customer(c: &Customer) -> Value {
    let regions: Vec<Value> =
        c.exempt_regions.iter().map(|r| json!({"country": r.country, "state": r.region})).collect();
    json!({
        "customer_id": c.customer_id, "exemption_type": c.exemption_type, "exempt_regions": regions,
        "name": c.name, "country": c.place.country, "state": c.place.state, "zip": c.place.zip,
        "city": c.place.city, "street": c.place.street,
    })
}

/// `POST /v2/taxes`: reads the request, runs the engine, answers TaxJar's `tax` object.
pub fn calculate(state: &State, body: &Fields<'_>) -> Result<Value, TaxjarError> {
    let mut to = body.place("to_")?;
    // Recorded calls with a ZIP and a state but no `to_country` were answered 200 as US ones;
    // without a ZIP, what TaxJar does is not known, and it stays refused.
    if to.country.is_none() && to.zip.is_some() && to.state.is_some() {
        to.country = Some("US".to_owned());
    }
    let to_country = to.country.clone().ok_or_else(|| TaxjarError::missing("to_country"))?;
    if to_country == "US" && to.zip.is_none() {
        return Err(TaxjarError::missing("to_zip"));
    }
    if matches!(to_country.as_str(), "US" | "CA") && to.state.is_none() {
        return Err(TaxjarError::missing("to_state"));
    }
    let shipping = body.amount("shipping")?.ok_or_else(|| TaxjarError::missing("shipping"))?;
    let amount = body.amount("amount")?;
    let items = body.objects("line_items")?.unwrap_or_default();
    if amount.is_none() && items.is_empty() {
        return Err(TaxjarError::missing("amount or line_items"));
    }
    let mut lines = Vec::with_capacity(items.len());
    for (index, item) in items.iter().enumerate() {
        let quantity = item.quantity("quantity")?.unwrap_or(1);
        let unit_price = item.amount("unit_price")?.unwrap_or_default();
        let discount = item.amount("discount")?.unwrap_or_default();
        let amount = Decimal::from(quantity).checked_mul(unit_price).ok_or_else(|| {
            TaxjarError::bad_request(format!(
                "line_items[{index}]: quantity {quantity} times unit_price {unit_price} is too large"
            ))
        })?;
        if discount > amount {
            return Err(TaxjarError::bad_request(format!(
                "line_items[{index}].discount {discount} is more than the line's amount {amount}"
            )));
        }
        let id = item.text("id")?.unwrap_or_else(|| (index + 1).to_string());
        let code = item.text("product_tax_code")?;
        tax::Category::of(&id, code.as_deref()).map_err(|_| {
            TaxjarError::bad_request(format!(
                "line_items[{index}].product_tax_code {} is not a product tax code",
                code.clone().unwrap_or_default()
            ))
        })?;
        lines.push(tax::Line { discount, tax_code: code, ..tax::Line::new(&id, Decimal::from(quantity), amount) });
    }
    let line_items_sent = !lines.is_empty();
    if lines.is_empty() {
        lines.push(tax::Line::new("1", Decimal::ONE, amount.unwrap_or_default()));
    }
    // Every sum of the answer (order total, taxable amounts) is made of these, so within the
    // bound none overflows.
    let money = lines.iter().flat_map(|l| [l.amount, l.discount]).chain([shipping, amount.unwrap_or_default()]);
    if tax::document_money(money).is_none() {
        return Err(TaxjarError::bad_request(tax::TaxError::AmountTooLarge.to_string()));
    }
    // Origin: from_*, else the first nexus address, else the address on file.
    let nexus_addresses = body.objects("nexus_addresses")?;
    let mut nexus = Vec::new();
    let mut first_nexus_place = None;
    for address in nexus_addresses.iter().flatten() {
        let country = address.required_text("country")?.to_ascii_uppercase();
        let region = address.text("state")?.unwrap_or_default().to_ascii_uppercase();
        if country == "US" && region.is_empty() {
            return Err(TaxjarError::missing(&address.name("state")));
        }
        let place = address.place("")?;
        if first_nexus_place.is_none() {
            first_nexus_place = Some(place);
        }
        nexus.push(tax::Region::new(&country, &region));
    }
    if nexus_addresses.is_none() {
        nexus.clone_from(&state.nexus);
    }
    let from_sent = body.place("from_")?;
    let from = if from_sent.country.is_some() || from_sent.zip.is_some() {
        let mut from = from_sent;
        from.country.get_or_insert_with(|| "US".to_owned());
        Some(from)
    } else {
        first_nexus_place.or_else(|| Some(state.address_on_file.clone()))
    };
    // The exemption: the customer's, with `exemption_type` taking precedence when sent.
    // A customer_id TaxJar has no customer for is ignored, as it is on orders (where recorded
    // traffic shows 201); whether /v2/taxes refuses one is not known, so it is accepted.
    let customer = match body.text("customer_id")? {
        Some(id) => state.customer(&id).ok(),
        None => None,
    };
    let sent_type = body.text("exemption_type")?;
    let mut exemption = customer.map(Customer::exemption).unwrap_or_default();
    if let Some(kind) = &sent_type {
        exemption.kind = tax::ExemptionKind::from_taxjar(kind).ok_or_else(|| {
            TaxjarError::bad_request(format!(
                "exemption_type {kind} is not one of wholesale, government, marketplace, other, non_exempt"
            ))
        })?;
    }
    let exemption_name = (customer.is_some() || sent_type.is_some()).then(|| exemption.kind.taxjar_name());
    let request = tax::Request {
        from: from.as_ref().map(super::models::address),
        to: super::models::address(&to),
        lines,
        freight: shipping,
        nexus,
        exemption,
        rounding: tax::Rounding::Document,
        trust_region: false,
    };
    let calc = state.tax.calculate(&request).map_err(|e| match &e {
        tax::TaxError::NegativeQuantity { .. }
        | tax::TaxError::NegativeDiscount { .. }
        | tax::TaxError::DiscountExceedsAmount { .. }
        | tax::TaxError::UnknownTaxCode { .. }
        | tax::TaxError::NegativeFreight(_)
        | tax::TaxError::AmountTooLarge
        | tax::TaxError::UnitPriceTooLarge { .. } => TaxjarError::bad_request(e.to_string()),
        _ => {
            // Which address was wrong: check the destination first, as TaxJar does.
            let prefix = if state.tax.rates(&request.to).is_err() { "to_" } else { "from_" };
            super::models::address_error(prefix, &e)
        }
    })?;
    Ok(tax_object(&calc, shipping, amount, exemption_name.flatten(), line_items_sent))
}

fn tax_object(
    calc: &Calculation,
    shipping: Decimal,
    amount: Option<Decimal>,
    exemption: Option<&str>,
    line_items_sent: bool,
) -> Value {
    let lines_total: Decimal = calc.lines.iter().map(|l| l.amount).sum();
    let order_total =
        amount.filter(|_| calc.lines.len() == 1 && calc.lines[0].id == "1").unwrap_or(lines_total) + shipping;
    let mut out = Map::new();
    out.insert("order_total_amount".into(), number(order_total));
    out.insert("shipping".into(), number(shipping));
    out.insert("taxable_amount".into(), number(calc.total_taxable));
    out.insert("amount_to_collect".into(), number(calc.total_tax));
    out.insert("rate".into(), number(effective_rate(calc)));
    out.insert("has_nexus".into(), json!(calc.has_nexus));
    out.insert("freight_taxable".into(), json!(calc.freight_taxable));
    let source = match calc.sourcing {
        tax::Sourcing::Origin => "origin",
        tax::Sourcing::Destination => "destination",
    };
    out.insert("tax_source".into(), if calc.has_nexus { json!(source) } else { Value::Null });
    if let Some(kind) = exemption {
        out.insert("exemption_type".into(), json!(kind));
    }
    if calc.has_nexus {
        out.insert("jurisdictions".into(), jurisdictions(&calc.rates));
        // "If has_nexus is false or no line items are provided, no breakdown is returned"
        // (TaxJar's docs; recorded shipping-only answers have none).
        if line_items_sent {
            out.insert("breakdown".into(), breakdown(calc));
        }
    }
    Value::Object(out)
}

/// The rate of the taxed amount, weighted by line.
fn effective_rate(calc: &Calculation) -> Decimal {
    let taxable: Decimal = calc.all_lines().map(|l| l.taxable).sum();
    if taxable.is_zero() {
        return Decimal::ZERO;
    }
    let weighted: Decimal = calc.all_lines().map(|l| l.rate * l.taxable).sum();
    (weighted / taxable).round_dp(5)
}

fn jurisdictions(rates: &Rates) -> Value {
    match rates.country.as_str() {
        "US" => json!({"country": "US", "state": rates.region, "county": rates.county, "city": rates.city}),
        "CA" => json!({"country": "CA", "state": rates.region, "city": rates.city}),
        "AU" => json!({"country": "AU"}),
        country => json!({"country": country, "city": rates.city}),
    }
}

/// Sums of one level (US) or kind (elsewhere) over some lines: taxable, rate, collectable.
fn part<'a>(
    lines: impl Iterator<Item = &'a LineTax>,
    pick: impl Fn(&tax::JurisdictionTax) -> bool,
) -> (Decimal, Decimal, Decimal) {
    let mut taxable = Decimal::ZERO;
    let mut rate = Decimal::ZERO;
    let mut raw = Decimal::ZERO;
    for line in lines {
        let details: Vec<_> = line.details.iter().filter(|d| pick(d)).collect();
        taxable += details.iter().map(|d| d.taxable).max().unwrap_or_default();
        for d in &details {
            raw += d.taxable * d.rate;
        }
        let line_rate: Decimal = details.iter().map(|d| d.rate).sum();
        rate = rate.max(line_rate);
    }
    (taxable, rate, tax::cents(raw))
}

fn level(l: Level) -> impl Fn(&tax::JurisdictionTax) -> bool {
    move |d| d.jurisdiction.level == l
}

fn kind(k: TaxKind) -> impl Fn(&tax::JurisdictionTax) -> bool {
    move |d| d.jurisdiction.kind == k
}

/// The fields of one breakdown (order, shipping or line) in the naming of `style`.
fn breakdown_fields<'a>(
    lines: impl Iterator<Item = &'a LineTax> + Clone,
    country: &str,
    style: Style,
    out: &mut Map<String, Value>,
) {
    let all: Vec<&LineTax> = lines.clone().collect();
    let taxable: Decimal = all.iter().map(|l| l.taxable).sum();
    let raw: Decimal = all.iter().flat_map(|l| &l.details).map(|d| d.taxable * d.rate).sum();
    let rate: Decimal = all.iter().map(|l| l.rate).max().unwrap_or_default();
    out.insert("taxable_amount".into(), number(taxable));
    out.insert("tax_collectable".into(), number(tax::cents(raw)));
    out.insert("combined_tax_rate".into(), number(rate));
    let mut put = |key: String, value: Decimal| {
        out.insert(key, number(value));
    };
    match country {
        "US" => {
            let names: [(Level, &str, &str, &str); 4] = match style {
                Style::Order => [
                    (Level::State, "state_taxable_amount", "state_tax_rate", "state_tax_collectable"),
                    (Level::County, "county_taxable_amount", "county_tax_rate", "county_tax_collectable"),
                    (Level::City, "city_taxable_amount", "city_tax_rate", "city_tax_collectable"),
                    (
                        Level::Special,
                        "special_district_taxable_amount",
                        "special_tax_rate",
                        "special_district_tax_collectable",
                    ),
                ],
                Style::Shipping | Style::Line => [
                    (Level::State, "state_taxable_amount", "state_sales_tax_rate", "state_amount"),
                    (Level::County, "county_taxable_amount", "county_tax_rate", "county_amount"),
                    (Level::City, "city_taxable_amount", "city_tax_rate", "city_amount"),
                    (
                        Level::Special,
                        if style == Style::Shipping {
                            "special_taxable_amount"
                        } else {
                            "special_district_taxable_amount"
                        },
                        "special_tax_rate",
                        "special_district_amount",
                    ),
                ],
            };
            for (l, taxable_key, rate_key, tax_key) in names {
                let (t, r, c) = part(lines.clone(), level(l));
                put(taxable_key.into(), t);
                put(rate_key.into(), r);
                put(tax_key.into(), c);
            }
        }
        "CA" => {
            for (k, name) in [(TaxKind::Gst, "gst"), (TaxKind::Pst, "pst"), (TaxKind::Qst, "qst")] {
                let (t, r, c) = part(lines.clone(), kind(k));
                put(format!("{name}_taxable_amount"), t);
                put(format!("{name}_tax_rate"), r);
                put(name.into(), c);
            }
        }
        _ => {
            let (t, r, c) = part(lines, level(Level::Country));
            put("country_taxable_amount".into(), t);
            put("country_tax_rate".into(), r);
            put("country_tax_collectable".into(), c);
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Style {
    Order,
    Shipping,
    Line,
}

fn breakdown(calc: &Calculation) -> Value {
    let country = calc.rates.country.as_str();
    let mut out = Map::new();
    breakdown_fields(calc.all_lines(), country, Style::Order, &mut out);
    if let Some(freight) = calc.freight.as_ref().filter(|f| !f.taxable.is_zero()) {
        let mut shipping = Map::new();
        breakdown_fields(std::iter::once(freight), country, Style::Shipping, &mut shipping);
        out.insert("shipping".into(), Value::Object(shipping));
    }
    let lines: Vec<Value> = calc
        .lines
        .iter()
        .map(|line| {
            let mut item = Map::new();
            item.insert("id".into(), json!(line.id));
            breakdown_fields(std::iter::once(line), country, Style::Line, &mut item);
            Value::Object(item)
        })
        .collect();
    out.insert("line_items".into(), Value::Array(lines));
    Value::Object(out)
}

/// `GET /v2/rates/{zip}`: rates as strings; the sandbox adds `opsdeck_state_fallback` when the
/// ZIP is not in its table and only the state rate is known.
pub fn rates(
    table: &tax::Table,
    zip: &str,
    country: &str,
    state: Option<&str>,
    city: Option<&str>,
) -> Result<Value, TaxjarError> {
    let address = tax::Address {
        country: country.to_owned(),
        region: state.unwrap_or_default().to_owned(),
        postal_code: zip.to_owned(),
        city: city.unwrap_or_default().to_owned(),
        line1: String::new(),
    };
    let rates = table.rates(&address).map_err(|e| super::models::address_error("", &e))?;
    let s = |d: Decimal| Value::String(text(d));
    let mut out = Map::new();
    match rates.country.as_str() {
        "US" => {
            out.insert("zip".into(), json!(rates.postal_code));
            if rates.sst {
                out.insert("country".into(), json!("US"));
                out.insert("country_rate".into(), s(Decimal::ZERO));
            }
            out.insert("state".into(), json!(rates.region));
            out.insert("state_rate".into(), s(rates.rate_at(Level::State)));
            out.insert("county".into(), json!(rates.county));
            out.insert("county_rate".into(), s(rates.rate_at(Level::County)));
            let city_name =
                if rates.city.is_empty() { city.unwrap_or_default().to_uppercase() } else { rates.city.clone() };
            out.insert("city".into(), json!(city_name));
            out.insert("city_rate".into(), s(rates.rate_at(Level::City)));
            out.insert("combined_district_rate".into(), s(rates.rate_at(Level::Special)));
            out.insert("combined_rate".into(), s(rates.combined_rate));
            out.insert("freight_taxable".into(), json!(rates.freight_taxable));
            if rates.state_fallback {
                out.insert("opsdeck_state_fallback".into(), json!(true));
            }
        }
        "CA" => {
            out.insert("zip".into(), json!(rates.postal_code));
            out.insert("city".into(), json!(city.unwrap_or_default().to_uppercase()));
            out.insert("state".into(), json!(rates.region));
            out.insert("country".into(), json!("CA"));
            out.insert("combined_rate".into(), s(rates.combined_rate));
            out.insert("freight_taxable".into(), json!(rates.freight_taxable));
        }
        _ => match rates.vat {
            Some(vat) => {
                out.insert("country".into(), json!(rates.country));
                out.insert("name".into(), json!(rates.region_name));
                out.insert("standard_rate".into(), s(vat.standard));
                out.insert("reduced_rate".into(), s(vat.reduced));
                out.insert("super_reduced_rate".into(), s(vat.super_reduced));
                out.insert("parking_rate".into(), s(vat.parking));
                out.insert("distance_sale_threshold".into(), s(Decimal::ZERO));
                out.insert("freight_taxable".into(), json!(rates.freight_taxable));
            }
            None => {
                out.insert("zip".into(), json!(rates.postal_code));
                out.insert("country".into(), json!(rates.country));
                out.insert("country_rate".into(), s(rates.combined_rate));
                out.insert("combined_rate".into(), s(rates.combined_rate));
                out.insert("freight_taxable".into(), json!(rates.freight_taxable));
            }
        },
    }
    Ok(Value::Object(out))
}

/// `GET /v2/summary_rates`: every US state (minimum: the state rate; average: over the ZIPs the
/// table lists, else the state rate), the Canadian provinces, and the countries.
pub fn summary_rates(table: &tax::Table) -> Value {
    // One pass over the ZIPs (tens of thousands with Avalara's tables loaded), not one per state.
    let mut combined: HashMap<&str, (Decimal, u32)> = HashMap::new();
    for z in &table.zips {
        let rate = z.state_rate + z.county_rate + z.city_rate + z.specials.iter().map(|(_, r)| *r).sum::<Decimal>();
        let entry = combined.entry(z.state.as_str()).or_default();
        *entry = (entry.0 + rate, entry.1 + 1);
    }
    let mut out = Vec::new();
    for state in &table.states {
        let average = match combined.get(state.code.as_str()) {
            Some(&(sum, count)) if count > 0 => (sum / Decimal::from(count)).round_dp(4),
            _ => state.rate,
        };
        out.push(json!({
            "country_code": "US", "country": "United States", "region_code": state.code, "region": state.name,
            "minimum_rate": {"label": "State Tax", "rate": number(state.rate)},
            "average_rate": {"label": "Tax", "rate": number(average)},
        }));
    }
    for row in &table.international {
        let summary = if row.country == "CA" {
            json!({
                "country_code": "CA", "country": "Canada", "region_code": row.region, "region": row.name,
                "minimum_rate": {"label": "GST", "rate": number(row.country_rate)},
                "average_rate": {"label": if row.qst_rate.is_zero() { "PST" } else { "QST" },
                                 "rate": number(row.country_rate + row.provincial_rate + row.qst_rate)},
            })
        } else {
            let label = if row.country == "AU" { "GST" } else { "VAT" };
            let code = if row.country == "GB" { "UK" } else { row.country.as_str() };
            json!({
                "country_code": code, "country": row.name, "region_code": null, "region": null,
                "minimum_rate": {"label": label, "rate": number(row.country_rate)},
                "average_rate": {"label": label, "rate": number(row.country_rate)},
            })
        };
        out.push(summary);
    }
    Value::Array(out)
}

/// The nexus regions, with names from the table.
pub fn nexus_regions(state: &State) -> Value {
    let table = &state.tax;
    let regions: Vec<Value> = state
        .nexus
        .iter()
        .map(|r| {
            let (country, region) = match r.country.as_str() {
                "US" => ("United States", table.state(&r.region).map(|s| s.name.clone())),
                "CA" => ("Canada", table.international("CA", &r.region).map(|s| s.name.clone())),
                _ => ("", None),
            };
            json!({"country_code": r.country, "country": country, "region_code": r.region, "region": region})
        })
        .collect();
    Value::Array(regions)
}
