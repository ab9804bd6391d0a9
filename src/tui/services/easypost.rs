//! What the console shows of EasyPost beyond raw JSON: a shipment with its rates cheapest first
//! (the cheapest and the fastest marked) and, once bought, its label files, tracking code and
//! rate; a tracker's timeline, newest first; a batch with its shipments and state; an address
//! with its verification results; list columns a person reads (status toned, the bought rate's
//! carrier and service, where a parcel goes); what a purchase will spend, for its confirmation;
//! and the ids forms start with. Pure functions over JSON, so the rules are tested without a
//! terminal. Every text here is server text: the views make it inert when they draw it.
//!
//! Over 800 lines for a reason: EasyPost's four record views (shipment, tracker, batch,
//! address) share their helpers (places, parcels, rates ranked, label files), and this file is
//! the one place a newcomer finds everything the console does with EasyPost.

use std::cmp::Ordering;
use std::str::FromStr as _;

use rust_decimal::Decimal;
use serde_json::{json, Map, Value};

use crate::catalog::{Operation, Service};
use crate::client::{Target, Values};
use crate::format::{money, time_text};
use crate::json_index::Item;
use crate::table::{Column, Layout};
use crate::tui::components::detail::{
    array, columns, fact, text, Align, Detail, DetailCommand, DetailKey, Table, Tone,
};
use crate::tui::services::{RowAction, ServiceConsole};

pub struct Easypost;

impl ServiceConsole for Easypost {
    fn layout(&self, op: &Operation) -> Option<Layout> {
        layout(op)
    }

    fn cell_tone(&self, header: &str, text: &str) -> Option<Tone> {
        match header {
            "status" => status_tone(text),
            "state" => batch_state_tone(text),
            "batch_status" => batch_status_tone(text),
            _ => None,
        }
    }

    fn detail(&self, op: &Operation, body: &Value) -> Option<Detail> {
        detail_for(op, body)
    }

    /// A shipment's rates, a tracker's timeline, a batch, an address's verification: the view
    /// opens from the row at once (the row is the whole record).
    fn open_row(&self, list_op: &str, record: &Value, _scope: &dyn Fn(&str) -> Option<String>) -> Option<RowAction> {
        record_detail(list_op, record).map(|detail| RowAction::View(Box::new(detail), None))
    }

    fn suggest(&self, op: &Operation, record: &Map<String, Value>, _target: &Target, values: &mut Values) {
        suggest(op, record, values);
    }

    fn effects(&self, op: &Operation, values: &Values, known: &dyn Fn(&str) -> Option<Value>) -> Vec<String> {
        effects(op, values, known)
    }
}

/// The structured view of an EasyPost response, for the operations that answer one record.
pub fn detail_for(op: &Operation, body: &Value) -> Option<Detail> {
    if op.service != Service::Easypost {
        return None;
    }
    // Verifying answers `{"address": {...}}`; creating answers the address itself.
    let body = match body.get("address") {
        Some(address) if address.is_object() && op.resource == "addresses" => address,
        _ => body,
    };
    let detail = match (op.resource, kind(body)?) {
        ("shipments", "Shipment") => shipment_detail(body),
        ("trackers", "Tracker") => tracker_detail(body),
        ("batches", "Batch") => batch_detail(body),
        ("addresses", "Address") => address_detail(body),
        _ => return None,
    };
    Some(detail)
}

/// The view of a row of `list_op` opened with Enter (the row is the whole record).
pub fn record_detail(list_op: &str, record: &Value) -> Option<Detail> {
    match (list_op, kind(record)?) {
        ("shipments_list", "Shipment") => Some(shipment_detail(record)),
        ("trackers_list", "Tracker") => Some(tracker_detail(record)),
        ("batches_list", "Batch") => Some(batch_detail(record)),
        ("addresses_list", "Address") => Some(address_detail(record)),
        _ => None,
    }
}

/// Each record type with the prefix of its ids.
const KINDS: &[(&str, &str)] = &[
    ("Shipment", "shp_"),
    ("Tracker", "trk_"),
    ("Batch", "batch_"),
    ("Address", "adr_"),
    ("Parcel", "prcl_"),
    ("Insurance", "ins_"),
    ("Refund", "rfnd_"),
    ("Webhook", "hook_"),
    ("Rate", "rate_"),
    ("ScanForm", "sf_"),
];

/// What kind of EasyPost record `value` is: its `object`, or lacking one, its id's prefix.
pub fn kind(value: &Value) -> Option<&'static str> {
    let object = value.get("object").and_then(Value::as_str);
    let id = value.get("id").and_then(Value::as_str).unwrap_or_default();
    KINDS
        .iter()
        .find(|(name, prefix)| match object {
            Some(object) => object == *name,
            None => id.starts_with(prefix),
        })
        .map(|(name, _)| *name)
}

/// The singular name and id prefix of a resource of the catalog.
fn resource_names(resource: &str) -> Option<(&'static str, &'static str)> {
    Some(match resource {
        "shipments" => ("shipment", "shp_"),
        "trackers" => ("tracker", "trk_"),
        "batches" => ("batch", "batch_"),
        "addresses" => ("address", "adr_"),
        "parcels" => ("parcel", "prcl_"),
        "insurances" => ("insurance", "ins_"),
        "refunds" => ("refund", "rfnd_"),
        "webhooks" => ("webhook", "hook_"),
        _ => return None,
    })
}

fn field(value: &Value, name: &str) -> String {
    text(value.get(name))
}

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter().map(|(name, value)| ((*name).to_owned(), (*value).to_owned())).collect()
}

/// How a tracker's, shipment's, insurance's, refund's or scan form's status reads.
pub fn status_tone(status: &str) -> Option<Tone> {
    Some(match status {
        "delivered" | "purchased" | "refunded" | "created" => Tone::Good,
        "pre_transit" | "in_transit" | "pending" | "submitted" | "new" | "creating" => Tone::Pending,
        "out_for_delivery" | "available_for_pickup" => Tone::Info,
        "return_to_sender" | "failure" | "error" | "failed" | "rejected" | "cancelled" => Tone::Bad,
        "unknown" | "not_applicable" => Tone::Quiet,
        _ => return None,
    })
}

/// How a batch's state reads: done, on its way, or failed.
pub fn batch_state_tone(state: &str) -> Option<Tone> {
    Some(match state {
        "purchased" | "label_generated" => Tone::Good,
        "creating" | "created" | "purchasing" | "label_generating" => Tone::Pending,
        "creation_failed" | "purchase_failed" => Tone::Bad,
        _ => return None,
    })
}

/// How a shipment's place in its batch reads.
pub fn batch_status_tone(status: &str) -> Option<Tone> {
    Some(match status {
        "postage_purchased" => Tone::Good,
        "created" | "queued_for_purchase" => Tone::Pending,
        "creation_failed" | "postage_purchase_failed" => Tone::Bad,
        _ => return None,
    })
}

/// An address's verification as a mark: ✓ every check passed, ✗ one failed, — none was run.
pub fn verified_mark(address: &Value) -> &'static str {
    checks_mark(address.get("verifications"))
}

/// [`verified_mark`] of an address's `verifications`.
fn checks_mark(verifications: Option<&Value>) -> &'static str {
    match verification(verifications) {
        Some(true) => "✓",
        Some(false) => "✗",
        None => "—",
    }
}

/// Whether the checks run on an address passed (`None`: none was run).
fn verification(verifications: Option<&Value>) -> Option<bool> {
    let checks = verifications?.as_object()?;
    let results: Vec<bool> =
        checks.values().filter_map(|check| check.get("success").and_then(Value::as_bool)).collect();
    (!results.is_empty()).then(|| results.iter().all(|ok| *ok))
}

/// `SAN FRANCISCO, CA 94107`: where an address is, as a line.
fn place(address: Option<&Value>) -> String {
    let Some(address) = address else { return String::new() };
    let city = field(address, "city");
    let region = [field(address, "state"), field(address, "zip")]
        .into_iter()
        .filter(|part| !part.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    let country = field(address, "country");
    let mut parts: Vec<String> = [city, region].into_iter().filter(|part| !part.is_empty()).collect();
    if !country.is_empty() && country != "US" {
        parts.push(country);
    }
    parts.join(", ")
}

/// Who and where: `JACK SPARROW · SAN FRANCISCO, CA 94107` (the street is in the inspector).
fn who_where(address: Option<&Value>) -> String {
    let Some(address) = address.filter(|a| a.is_object()) else { return String::new() };
    let who = [field(address, "name"), field(address, "company")].into_iter().find(|s| !s.is_empty());
    [who.unwrap_or_default(), place(Some(address))]
        .into_iter()
        .filter(|part| !part.is_empty())
        .collect::<Vec<_>>()
        .join(" · ")
}

/// A number of ounces or inches without a needless `.0`.
fn measure(value: Option<&Value>) -> String {
    match value.and_then(Value::as_f64) {
        Some(n) if n.fract() == 0.0 && n.abs() < 1e9 => format!("{}", n as i64),
        Some(n) => format!("{n}"),
        None => text(value),
    }
}

/// A parcel as `15.4 oz · 10 × 8 × 4 in`, or its predefined package.
fn parcel_text(parcel: Option<&Value>) -> String {
    let Some(parcel) = parcel.filter(|p| p.is_object()) else { return String::new() };
    let weight = measure(parcel.get("weight"));
    let mut parts = Vec::new();
    if !weight.is_empty() {
        parts.push(format!("{weight} oz"));
    }
    let package = field(parcel, "predefined_package");
    if package.is_empty() {
        let sides: Vec<String> = ["length", "width", "height"].iter().map(|side| measure(parcel.get(*side))).collect();
        if sides.iter().all(|side| !side.is_empty()) {
            parts.push(format!("{} in", sides.join(" × ")));
        }
    } else {
        parts.push(package);
    }
    parts.join(" · ")
}

/// A rate's price: its `rate`, a decimal string (or number).
fn price(rate: &Value) -> Option<Decimal> {
    match rate.get("rate")? {
        Value::String(s) => Decimal::from_str(s.trim()).ok(),
        Value::Number(n) => Decimal::from_str(&n.to_string()).ok(),
        _ => None,
    }
}

/// A rate's days in transit: the carrier's `delivery_days`, else EasyPost's estimate.
fn days(rate: &Value) -> Option<u64> {
    ["delivery_days", "est_delivery_days"].iter().find_map(|name| {
        let value = rate.get(*name)?;
        value.as_u64().or_else(|| value.as_f64().filter(|d| d.is_finite() && *d >= 0.0).map(|d| d.ceil() as u64))
    })
}

/// `7.42 USD`.
fn price_text(rate: &Value) -> String {
    let amount = rate.get("rate").and_then(money).unwrap_or_else(|| field(rate, "rate"));
    let currency = field(rate, "currency");
    if currency.is_empty() || amount.is_empty() {
        amount
    } else {
        format!("{amount} {currency}")
    }
}

/// A rate with what sets it apart from the others of its shipment.
#[derive(Debug)]
pub struct RankedRate<'a> {
    pub rate: &'a Value,
    /// The lowest price (every rate sharing it is marked).
    pub cheapest: bool,
    /// The fewest days in transit (every rate sharing them is marked).
    pub fastest: bool,
}

fn by_option<T: Ord>(a: Option<T>, b: Option<T>) -> Ordering {
    match (a, b) {
        (Some(a), Some(b)) => a.cmp(&b),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => Ordering::Equal,
    }
}

/// A shipment's rates cheapest first (then fastest, then by carrier and service), each marked
/// when it is the cheapest or the fastest; ties are all marked. Prices in different currencies
/// are not compared, so none is then the cheapest. A rate without a price or days goes last
/// and is neither.
pub fn rank_rates(rates: &[Value]) -> Vec<RankedRate<'_>> {
    let rates: Vec<&Value> = rates.iter().filter(|r| r.is_object()).collect();
    let mut currencies: Vec<&str> = rates.iter().filter_map(|r| r.get("currency")?.as_str()).collect();
    currencies.sort_unstable();
    currencies.dedup();
    let comparable = currencies.len() <= 1;
    let cheapest = rates.iter().filter_map(|r| price(r)).min().filter(|_| comparable);
    let fastest = rates.iter().filter_map(|r| days(r)).min();
    let mut ranked: Vec<RankedRate> = rates
        .into_iter()
        .map(|rate| RankedRate {
            rate,
            cheapest: cheapest.is_some() && price(rate) == cheapest,
            fastest: fastest.is_some() && days(rate) == fastest,
        })
        .collect();
    ranked.sort_by(|a, b| {
        by_option(price(a.rate), price(b.rate))
            .then_with(|| by_option(days(a.rate), days(b.rate)))
            .then_with(|| field(a.rate, "carrier").cmp(&field(b.rate, "carrier")))
            .then_with(|| field(a.rate, "service").cmp(&field(b.rate, "service")))
    });
    ranked
}

/// The label formats a bought label converts to: key, name, the field of its URL, extension.
const LABEL_FORMATS: &[(char, &str, &str, &str)] = &[
    ('p', "PDF", "label_pdf_url", "pdf"),
    ('z', "ZPL", "label_zpl_url", "zpl"),
    ('e', "EPL2", "label_epl2_url", "epl2"),
    ('n', "PNG", "label_url", "png"),
];

/// A name for a saved file: `stem` (server text) with only letters, digits, `-` and `_` kept,
/// so a hostile tracking code cannot reach another folder, then `.ext`.
pub fn file_name(stem: &str, ext: &str) -> String {
    let clean = |s: &str, most: usize| -> String {
        s.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' }).take(most).collect()
    };
    let stem = clean(stem, 80);
    let stem = if stem.trim_matches('_').is_empty() { "label".to_owned() } else { stem };
    let ext = clean(ext, 8);
    if ext.is_empty() {
        stem
    } else {
        format!("{stem}.{ext}")
    }
}

/// The extension of a label of this MIME type, else of its URL's file name.
fn label_extension(file_type: &str, url: &str) -> String {
    let by_type = match file_type {
        "image/png" => "png",
        "application/pdf" => "pdf",
        "application/zpl" => "zpl",
        "application/epl2" => "epl2",
        _ => "",
    };
    if !by_type.is_empty() {
        return by_type.to_owned();
    }
    let path = url.split(['?', '#']).next().unwrap_or_default();
    let name = path.rsplit('/').next().unwrap_or_default();
    match name.rsplit_once('.') {
        Some((_, ext)) if !ext.is_empty() && ext.len() <= 5 && ext.chars().all(|c| c.is_ascii_alphanumeric()) => {
            ext.to_ascii_lowercase()
        }
        _ => "label".to_owned(),
    }
}

/// A shipment: where it goes, its parcel, its rates (choose one and buy it) or, once bought, the
/// rate bought, its tracking code, its label files (save one, convert it) and its fees.
fn shipment_detail(shipment: &Value) -> Detail {
    let id = field(shipment, "id");
    let label = shipment.get("postage_label").filter(|l| l.is_object());
    let selected = shipment.get("selected_rate").filter(|r| r.is_object());
    let bought = label.is_some() || selected.is_some();
    let status = field(shipment, "status");
    let tracking = field(shipment, "tracking_code");
    let selected_id = selected.map(|r| field(r, "id")).unwrap_or_default();
    let mut facts = Vec::new();
    if bought {
        facts.push(("status".to_owned(), status.clone(), status_tone(&status)));
        facts.push(fact("tracking", tracking.clone()));
        if let Some(rate) = selected {
            let what = format!("{} {} · {}", field(rate, "carrier"), field(rate, "service"), price_text(rate));
            facts.push(fact("bought", what));
        }
    }
    facts.push(fact("to", who_where(shipment.get("to_address"))));
    facts.push(fact("from", who_where(shipment.get("from_address"))));
    facts.push(fact("parcel", parcel_text(shipment.get("parcel"))));
    facts.push(fact("reference", field(shipment, "reference")));
    facts.push(fact("insured", field(shipment, "insurance")));
    let batch = [field(shipment, "batch_id"), field(shipment, "batch_status")].join(" ");
    facts.push(fact("batch", batch.trim().to_owned()));
    let refund = field(shipment, "refund_status");
    facts.push((String::from("refund"), refund.clone(), status_tone(&refund)));
    facts.push(fact("created", time_text(&field(shipment, "created_at"))));
    facts.retain(|(_, value, _)| !value.is_empty());

    let ranked = rank_rates(array(shipment.get("rates")));
    let mut rows = Vec::new();
    let mut tones = Vec::new();
    let mut row_values = Vec::new();
    for ranked in &ranked {
        let rate = ranked.rate;
        let rate_id = field(rate, "id");
        let mut tags = Vec::new();
        if !selected_id.is_empty() && rate_id == selected_id {
            tags.push("bought");
        }
        if ranked.cheapest {
            tags.push("cheapest");
        }
        if ranked.fastest {
            tags.push("fastest");
        }
        rows.push(vec![
            tags.join(", "),
            field(rate, "carrier"),
            field(rate, "service"),
            price_text(rate),
            text(rate.get("delivery_days")),
            text(rate.get("est_delivery_days")),
        ]);
        tones.push(match (tags.first(), ranked.fastest) {
            (Some(&"bought" | &"cheapest"), _) => Some(Tone::Good),
            (_, true) => Some(Tone::Info),
            _ => None,
        });
        row_values.push(vec![("rate".to_owned(), json!({ "id": rate_id }).to_string())]);
    }
    let mut tables = vec![Table {
        title: format!("rates ({}), cheapest first", rows.len()),
        columns: columns(&[
            ("", Align::Left),
            ("carrier", Align::Left),
            ("service", Align::Left),
            ("rate", Align::Right),
            ("days", Align::Right),
            ("est. days", Align::Right),
        ]),
        rows,
        tones,
    }];
    let mut notes: Vec<String> = array(shipment.get("messages"))
        .iter()
        .map(|m| {
            let carrier = field(m, "carrier");
            let message = field(m, "message");
            if carrier.is_empty() {
                message
            } else {
                format!("{carrier}: {message}")
            }
        })
        .filter(|m| !m.is_empty())
        .collect();
    let mut commands = Vec::new();
    if let Some(label) = label {
        // Once bought, the label is what the view is for: before the rates that were offered.
        tables.insert(0, label_files(label));
        let fees: Vec<Vec<String>> = array(shipment.get("fees"))
            .iter()
            .map(|fee| {
                let amount = fee.get("amount").and_then(money).unwrap_or_else(|| field(fee, "amount"));
                let refunded = if fee.get("refunded").and_then(Value::as_bool) == Some(true) { "refunded" } else { "" };
                vec![field(fee, "type"), amount, refunded.to_owned()]
            })
            .collect();
        if !fees.is_empty() {
            tables.insert(
                1,
                Table {
                    title: "fees".to_owned(),
                    columns: columns(&[("fee", Align::Left), ("amount", Align::Right), ("", Align::Left)]),
                    rows: fees,
                    tones: Vec::new(),
                },
            );
        }
        commands.extend(label_commands(&id, &tracking, label));
    }
    if let Some(tracker) = shipment.get("tracker").map(|t| field(t, "id")).filter(|t| t.starts_with("trk_")) {
        commands.push(DetailKey {
            key: 't',
            label: "tracker",
            command: DetailCommand::Open { op: "trackers_get", values: vec![("id".into(), tracker)] },
        });
    }
    let buyable = !bought && !row_values.is_empty();
    if buyable {
        notes.push("j k choose a rate, b buys it: the form shows it, and nothing is bought before you confirm".into());
        commands.push(DetailKey {
            key: 'b',
            label: "buy this rate",
            command: DetailCommand::Form { op: "shipments_buy", values: vec![("id".into(), id.clone())] },
        });
    }
    let state = if bought {
        format!("bought · {}", if status.is_empty() { "unknown" } else { &status })
    } else {
        "not bought".into()
    };
    Detail {
        title: format!("shipment {id} · {state}"),
        subject: Some(format!("shipment {id}")),
        facts,
        tables,
        selectable: buyable.then_some(0),
        row_values: if buyable { row_values } else { Vec::new() },
        note: (!notes.is_empty()).then(|| notes.join("\n")),
        commands,
        record: Some(shipment.clone()),
        ..Detail::default()
    }
}

/// A bought label's files: the original and every conversion made so far.
fn label_files(label: &Value) -> Table {
    let file_type = field(label, "label_file_type");
    let original = field(label, "label_url");
    let mut rows = Vec::new();
    if !original.is_empty() {
        let ext = label_extension(&file_type, &original);
        let size = [field(label, "label_size"), field(label, "label_resolution")]
            .into_iter()
            .filter(|s| !s.is_empty())
            .collect::<Vec<_>>()
            .join(" · ");
        rows.push(vec![ext.to_ascii_uppercase(), size, original]);
    }
    for (_, name, url_field, _) in LABEL_FORMATS.iter().filter(|(_, _, f, _)| *f != "label_url") {
        let url = field(label, url_field);
        if !url.is_empty() {
            rows.push(vec![(*name).to_owned(), "converted".to_owned(), url]);
        }
    }
    Table {
        title: "label files".to_owned(),
        columns: columns(&[("format", Align::Left), ("", Align::Left), ("url", Align::Left)]),
        rows,
        tones: Vec::new(),
    }
}

/// `s` saves the label as bought, `c` asks for a format and saves that one (converting first
/// when it has not been yet).
fn label_commands(id: &str, tracking: &str, label: &Value) -> Vec<DetailKey> {
    let stem = if tracking.is_empty() { id } else { tracking };
    let original = field(label, "label_url");
    let file_type = field(label, "label_file_type");
    let mut commands = Vec::new();
    if !original.is_empty() {
        let name = file_name(stem, &label_extension(&file_type, &original));
        commands.push(DetailKey {
            key: 's',
            label: "save label",
            command: DetailCommand::Save { url: original.clone(), file_name: name },
        });
    }
    let choices = LABEL_FORMATS
        .iter()
        .map(|(key, name, url_field, ext)| {
            let ready = match *url_field {
                // The label as bought is the PNG only when it was bought as one.
                "label_url" => (file_type == "image/png").then(|| original.clone()),
                other => Some(field(label, other)),
            }
            .filter(|url| !url.is_empty());
            let file = file_name(stem, ext);
            let command = match ready {
                Some(url) => DetailCommand::Save { url, file_name: file },
                None => DetailCommand::SendThenSave {
                    op: "shipments_label",
                    values: pairs(&[("id", id), ("file_format", *name)]),
                    pointer: format!("/postage_label/{url_field}"),
                    file_name: file,
                },
            };
            DetailKey { key: *key, label: name, command }
        })
        .collect();
    commands.push(DetailKey {
        key: 'c',
        label: "convert",
        command: DetailCommand::Choose { prompt: "save the label as", choices },
    });
    commands
}

/// Tracker statuses after which nothing more happens to a package.
const FINAL_STATUSES: &[&str] = &["delivered", "return_to_sender", "failure", "cancelled", "error"];

/// `HOUSTON, TX 77063` of a tracking detail's location.
fn location(detail: &Value) -> String {
    place(detail.get("tracking_location").filter(|l| l.is_object()))
}

/// A tracker: its status and what is known of the package, and its timeline newest first.
/// While the package still moves the view asks again by itself.
fn tracker_detail(tracker: &Value) -> Detail {
    let id = field(tracker, "id");
    let status = field(tracker, "status");
    let tracking = field(tracker, "tracking_code");
    let carrier_detail = tracker.get("carrier_detail").filter(|d| d.is_object());
    let from_carrier = |name: &str| carrier_detail.map(|d| field(d, name)).unwrap_or_default();
    let mut facts = vec![
        (String::from("status"), status.clone(), status_tone(&status)),
        fact("detail", field(tracker, "status_detail")),
        fact("carrier", field(tracker, "carrier")),
        fact("service", from_carrier("service")),
        fact("tracking", tracking.clone()),
        fact("est. delivery", time_text(&field(tracker, "est_delivery_date"))),
        fact("signed by", field(tracker, "signed_by")),
        fact("weight", measure(tracker.get("weight"))),
        fact("from", from_carrier("origin_location")),
        fact("to", from_carrier("destination_location")),
        fact("shipment", field(tracker, "shipment_id")),
        fact("updated", time_text(&field(tracker, "updated_at"))),
    ];
    if let Some(weight) = facts.iter_mut().find(|(label, value, _)| label == "weight" && !value.is_empty()) {
        weight.1.push_str(" oz");
    }
    facts.retain(|(_, value, _)| !value.is_empty());
    let mut events: Vec<&Value> = array(tracker.get("tracking_details")).iter().collect();
    // Newest on top; EasyPost lists them oldest first, with times of one format.
    events.sort_by_key(|event| std::cmp::Reverse(field(event, "datetime")));
    let tones = events.iter().map(|e| status_tone(&field(e, "status"))).collect();
    let rows: Vec<Vec<String>> = events
        .iter()
        .map(|e| vec![time_text(&field(e, "datetime")), field(e, "status"), field(e, "message"), location(e)])
        .collect();
    let timeline = Table {
        title: format!("timeline ({} events, newest first)", rows.len()),
        columns: columns(&[
            ("when", Align::Left),
            ("status", Align::Left),
            ("message", Align::Left),
            ("where", Align::Left),
        ]),
        rows,
        tones,
    };
    let done = FINAL_STATUSES.contains(&status.as_str());
    let public = field(tracker, "public_url");
    Detail {
        title: format!("tracker {tracking} · {}", if status.is_empty() { "unknown" } else { &status }),
        subject: Some(format!("tracker {id}")),
        facts,
        tables: vec![timeline],
        texts: if public.is_empty() { Vec::new() } else { vec![("public tracking page".to_owned(), public)] },
        note: done.then(|| format!("{status}: the view no longer asks again")),
        watch: (!done && id.starts_with("trk_")).then(|| ("trackers_get", vec![("id".to_owned(), id.clone())])),
        record: Some(tracker.clone()),
        ..Detail::default()
    }
}

/// The batch statuses of its shipments, in the order a shipment goes through them.
const BATCH_STATUSES: &[&str] =
    &["created", "queued_for_purchase", "postage_purchased", "creation_failed", "postage_purchase_failed"];

/// `2 postage_purchased · 1 created`: a batch's `status` counts that are not zero.
fn batch_counts(status: Option<&Value>) -> String {
    let Some(map) = status.and_then(Value::as_object) else { return String::new() };
    let count = |name: &str| map.get(name).and_then(Value::as_u64).unwrap_or(0);
    let known = BATCH_STATUSES.iter().map(|name| (*name, count(name)));
    let others = map.keys().filter(|k| !BATCH_STATUSES.contains(&k.as_str())).map(|k| (k.as_str(), count(k)));
    known.chain(others).filter(|(_, n)| *n > 0).map(|(name, n)| format!("{n} {name}")).collect::<Vec<_>>().join(" · ")
}

/// Batch states that change by themselves, and shipment statuses that do.
const MOVING_STATES: &[&str] = &["creating", "purchasing", "label_generating"];

/// A batch: its state, its shipments with where each stands, its label and scan form, and the
/// keys to buy it, make its label (in a format asked for) or its scan form. While something is
/// in progress the view asks again by itself, so the states go by as they happen.
fn batch_detail(batch: &Value) -> Detail {
    let id = field(batch, "id");
    let state = field(batch, "state");
    let scan_form = batch.get("scan_form").filter(|s| s.is_object());
    let form_status = scan_form.map(|s| field(s, "status")).unwrap_or_default();
    let mut facts = vec![
        (String::from("state"), state.clone(), batch_state_tone(&state)),
        fact("shipments", text(batch.get("num_shipments"))),
        fact("counts", batch_counts(batch.get("status"))),
        fact("reference", field(batch, "reference")),
        (String::from("scan form"), form_status.clone(), status_tone(&form_status)),
        fact("created", time_text(&field(batch, "created_at"))),
        fact("updated", time_text(&field(batch, "updated_at"))),
    ];
    facts.retain(|(_, value, _)| !value.is_empty());
    let shipments = array(batch.get("shipments"));
    let rows: Vec<Vec<String>> = shipments
        .iter()
        .map(|s| vec![field(s, "id"), field(s, "batch_status"), field(s, "tracking_code"), field(s, "batch_message")])
        .collect();
    let tones = shipments.iter().map(|s| batch_status_tone(&field(s, "batch_status"))).collect();
    let mut tables = vec![Table {
        title: format!("shipments ({})", rows.len()),
        columns: columns(&[
            ("id", Align::Left),
            ("batch_status", Align::Left),
            ("tracking_code", Align::Left),
            ("message", Align::Left),
        ]),
        rows,
        tones,
    }];
    let label_url = field(batch, "label_url");
    let form_url = scan_form.map(|s| field(s, "form_url")).unwrap_or_default();
    let mut files = Vec::new();
    if !label_url.is_empty() {
        files.push(vec!["label".to_owned(), label_url.clone()]);
    }
    if !form_url.is_empty() {
        files.push(vec!["scan form".to_owned(), form_url.clone()]);
    }
    if !files.is_empty() {
        tables.push(Table {
            title: "files".to_owned(),
            columns: columns(&[("file", Align::Left), ("url", Align::Left)]),
            rows: files,
            tones: Vec::new(),
        });
    }
    let with_id = || vec![("id".to_owned(), id.clone())];
    let formats = ["PDF", "ZPL", "EPL2"].into_iter().zip(['p', 'z', 'e']).map(|(name, key)| DetailKey {
        key,
        label: name,
        command: DetailCommand::Send {
            op: "batches_label",
            values: pairs(&[("id", id.as_str()), ("file_format", name)]),
        },
    });
    let mut commands = vec![
        DetailKey { key: 'b', label: "buy", command: DetailCommand::Send { op: "batches_buy", values: with_id() } },
        DetailKey {
            key: 'l',
            label: "label",
            command: DetailCommand::Choose { prompt: "one label file for the batch, as", choices: formats.collect() },
        },
        DetailKey {
            key: 'f',
            label: "scan form",
            command: DetailCommand::Send { op: "batches_scan_form", values: with_id() },
        },
    ];
    if !label_url.is_empty() {
        let name = file_name(&format!("{id}-label"), &label_extension("", &label_url));
        commands.push(DetailKey {
            key: 's',
            label: "save label",
            command: DetailCommand::Save { url: label_url, file_name: name },
        });
    }
    if !form_url.is_empty() {
        let name = file_name(&format!("{id}-scan-form"), &label_extension("", &form_url));
        commands.push(DetailKey {
            key: 'd',
            label: "save scan form",
            command: DetailCommand::Save { url: form_url, file_name: name },
        });
    }
    let moving = MOVING_STATES.contains(&state.as_str())
        || form_status == "creating"
        || shipments.iter().any(|s| field(s, "batch_status") == "queued_for_purchase");
    let failures: Vec<String> = shipments
        .iter()
        .filter(|s| batch_status_tone(&field(s, "batch_status")) == Some(Tone::Bad))
        .map(|s| {
            let message = field(s, "batch_message");
            format!(
                "{} {}{}",
                field(s, "id"),
                field(s, "batch_status"),
                if message.is_empty() { String::new() } else { format!(": {message}") }
            )
        })
        .collect();
    let scan_message = scan_form.map(|s| field(s, "message")).filter(|m| !m.is_empty());
    let notes: Vec<String> = failures.into_iter().chain(scan_message.map(|m| format!("scan form: {m}"))).collect();
    Detail {
        title: format!("batch {id} · {}", if state.is_empty() { "state unknown" } else { &state }),
        subject: Some(format!("batch {id}")),
        facts,
        tables,
        note: (!notes.is_empty()).then(|| notes.join("\n")),
        commands,
        watch: (moving && id.starts_with("batch_")).then(|| ("batches_get", with_id())),
        record: Some(batch.clone()),
        ..Detail::default()
    }
}

/// An address with its verification: each check's result, each error with its field and
/// suggestion, and where it is (coordinates, time zone) when verified.
fn address_detail(address: &Value) -> Detail {
    let id = field(address, "id");
    let name = [field(address, "name"), field(address, "company"), field(address, "street1")]
        .into_iter()
        .find(|s| !s.is_empty())
        .unwrap_or_else(|| id.clone());
    let street = [field(address, "street1"), field(address, "street2")]
        .into_iter()
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join(", ");
    let residential = match address.get("residential").and_then(Value::as_bool) {
        Some(true) => "yes",
        Some(false) => "no",
        None => "",
    };
    let verified = verification(address.get("verifications"));
    let mark = match verified {
        Some(true) => Some(("verified ✓", Tone::Good)),
        Some(false) => Some(("verification failed ✗", Tone::Bad)),
        None => None,
    };
    let mut facts = vec![
        (
            String::from("address"),
            mark.map_or_else(|| "not verified".to_owned(), |(m, _)| m.to_owned()),
            mark.map(|(_, tone)| tone),
        ),
        fact("name", field(address, "name")),
        fact("company", field(address, "company")),
        fact("street", street),
        fact("place", place(Some(address))),
        fact("country", field(address, "country")),
        fact("residential", residential.to_owned()),
        fact("phone", field(address, "phone")),
        fact("email", field(address, "email")),
        fact("id", id.clone()),
    ];
    let checks: Vec<(String, &Value)> = address
        .get("verifications")
        .and_then(Value::as_object)
        .map(|map| map.iter().map(|(name, check)| (name.clone(), check)).collect())
        .unwrap_or_default();
    for (_, check) in &checks {
        if let Some(details) = check.get("details").filter(|d| d.as_object().is_some_and(|m| !m.is_empty())) {
            facts.push(fact("latitude", text(details.get("latitude"))));
            facts.push(fact("longitude", text(details.get("longitude"))));
            facts.push(fact("time zone", text(details.get("time_zone"))));
            break;
        }
    }
    facts.retain(|(_, value, _)| !value.is_empty());
    let mut check_rows = Vec::new();
    let mut check_tones = Vec::new();
    let mut error_rows = Vec::new();
    for (name, check) in &checks {
        let success = check.get("success").and_then(Value::as_bool);
        let errors = array(check.get("errors"));
        check_rows.push(vec![
            name.clone(),
            match success {
                Some(true) => "✓ success".to_owned(),
                Some(false) => "✗ failed".to_owned(),
                None => "?".to_owned(),
            },
            errors.len().to_string(),
        ]);
        check_tones.push(success.map(|ok| if ok { Tone::Good } else { Tone::Bad }));
        for error in errors {
            // An error may be a plain string (api/easypost.md §6).
            match error {
                Value::String(message) => {
                    error_rows.push(vec![name.clone(), String::new(), String::new(), message.clone(), String::new()])
                }
                other => error_rows.push(vec![
                    name.clone(),
                    field(other, "code"),
                    field(other, "field"),
                    field(other, "message"),
                    field(other, "suggestion"),
                ]),
            }
        }
    }
    let mut tables = Vec::new();
    if !checks.is_empty() {
        tables.push(Table {
            title: "verifications".to_owned(),
            columns: columns(&[("check", Align::Left), ("result", Align::Left), ("errors", Align::Right)]),
            rows: check_rows,
            tones: check_tones,
        });
        tables.push(Table {
            title: format!("errors ({})", error_rows.len()),
            columns: columns(&[
                ("check", Align::Left),
                ("code", Align::Left),
                ("field", Align::Left),
                ("message", Align::Left),
                ("suggestion", Align::Left),
            ]),
            tones: vec![Some(Tone::Bad); error_rows.len()],
            rows: error_rows,
        });
    }
    let mut commands = Vec::new();
    if id.starts_with("adr_") {
        commands.push(DetailKey {
            key: 'v',
            label: "verify",
            command: DetailCommand::Open { op: "addresses_verify", values: vec![("id".into(), id.clone())] },
        });
    }
    Detail {
        title: format!("address {name} · {}", mark.map_or("not verified", |(m, _)| m)),
        subject: Some(format!("address {id}")),
        facts,
        tables,
        note: verified
            .is_none()
            .then(|| "not verified: v verifies it (the verified address is a new record)".to_owned()),
        commands,
        record: Some(address.clone()),
        ..Detail::default()
    }
}

/// What an EasyPost call will spend or do, in words, for its confirmation: the carrier, service
/// and price of the rate being bought (found among the shipment's rates, by `known`, which looks
/// a record up by id among those seen), the insurance bought, the labels refunded.
pub fn effects(op: &Operation, values: &Values, known: &dyn Fn(&str) -> Option<Value>) -> Vec<String> {
    if op.service != Service::Easypost {
        return Vec::new();
    }
    let json = |name: &str| values.get(name).and_then(|v| serde_json::from_str::<Value>(v).ok());
    let id = values.get("id").cloned().unwrap_or_default();
    match op.name {
        "shipments_buy" => {
            let rate_id = match json("rate") {
                Some(Value::Object(rate)) => rate.get("id").map(|id| text(Some(id))),
                Some(Value::String(id)) => Some(id),
                _ => values.get("rate").cloned(),
            }
            .unwrap_or_default();
            let shipment = known(&id);
            let rate = shipment
                .as_ref()
                .and_then(|s| array(s.get("rates")).iter().find(|r| field(r, "id") == rate_id).cloned());
            let mut effects = vec![match rate {
                Some(rate) => {
                    let days = days(&rate).map_or_else(String::new, |d| {
                        format!(", {}", crate::format::plural(usize::try_from(d).unwrap_or(0), "day"))
                    });
                    format!(
                        "buys {} {} for {}{days}",
                        field(&rate, "carrier"),
                        field(&rate, "service"),
                        price_text(&rate)
                    )
                }
                None => format!(
                    "buys rate {rate_id}, whose price is not known here (not among the rates of {id} seen): \
                     the carrier's price is charged"
                ),
            }];
            if let Some(amount) = values.get("insurance").filter(|a| !a.trim().is_empty()) {
                effects.push(format!(
                    "and insures it for {} USD, for a fee",
                    money(&json!(amount)).unwrap_or_else(|| amount.clone())
                ));
            }
            effects
        }
        "batches_buy" => {
            let count = known(&id).and_then(|b| b.get("num_shipments").and_then(Value::as_u64));
            vec![match count {
                Some(n) => format!("buys postage for the batch's {n} shipment(s), each at its chosen rate"),
                None => "buys postage for every shipment of the batch, each at its chosen rate".to_owned(),
            }]
        }
        "insurance_create" => {
            let insurance = json("insurance").unwrap_or(Value::Null);
            let amount = insurance.get("amount").and_then(money).unwrap_or_else(|| field(&insurance, "amount"));
            vec![format!(
                "buys insurance of {} USD for {}, for a fee",
                if amount.is_empty() { "?" } else { &amount },
                field(&insurance, "tracking_code")
            )]
        }
        "refunds_create" => {
            let refund = json("refund").unwrap_or(Value::Null);
            let codes: Vec<String> = array(refund.get("tracking_codes")).iter().map(|c| text(Some(c))).collect();
            vec![format!("asks {} to refund {} label(s): {}", field(&refund, "carrier"), codes.len(), codes.join(", "))]
        }
        _ => Vec::new(),
    }
}

/// The id `record` gives an operation on `resource`: its own id when it is one of that
/// resource, else the one it links to (a shipment's `tracker.id`, a tracker's `shipment_id`,
/// a shipment's `batch_id`).
fn linked_id(record: &Map<String, Value>, resource: &str) -> Option<String> {
    let (singular, prefix) = resource_names(resource)?;
    let own = record.get("id").and_then(Value::as_str);
    let linked = record.get(&format!("{singular}_id")).and_then(Value::as_str);
    let nested = record.get(singular).and_then(|v| v.get("id")).and_then(Value::as_str);
    [own, linked, nested].into_iter().flatten().find(|id| id.starts_with(prefix)).map(str::to_owned)
}

/// Values for an EasyPost form on top of the generic ones. Every EasyPost path parameter is
/// called `id`, so the generic rules would give a tracker's id to a shipment's form: the id
/// filled is the one of the operation's own resource (the selection's, or the one it links to),
/// and one of another kind is taken out. From a bought shipment, the forms that need its
/// tracking code and carrier (tracker, refund, insurance) and the batch forms start filled.
pub fn suggest(op: &Operation, record: &Map<String, Value>, values: &mut Values) {
    if op.service != Service::Easypost {
        return;
    }
    if op.path_params().contains(&"id") {
        match linked_id(record, op.resource) {
            Some(id) => {
                values.insert("id".to_owned(), id);
            }
            None => {
                let prefix = resource_names(op.resource).map_or("", |(_, p)| p);
                if values.get("id").is_some_and(|id| !id.starts_with(prefix)) {
                    values.remove("id");
                }
            }
        }
    }
    if kind(&Value::Object(record.clone())) != Some("Shipment") {
        return;
    }
    let shipment_id = text(record.get("id"));
    let tracking = text(record.get("tracking_code"));
    let carrier = record.get("selected_rate").map(|r| field(r, "carrier")).unwrap_or_default();
    let bought = !tracking.is_empty();
    let body = match op.name {
        "trackers_create" if bought => Some(("tracker", json!({"tracking_code": tracking, "carrier": carrier}))),
        "refunds_create" if bought => Some(("refund", json!({"carrier": carrier, "tracking_codes": [tracking]}))),
        "insurance_create" if bought => {
            let address = |name: &str| record.get(name).map(|a| json!({"id": field(a, "id")}));
            Some((
                "insurance",
                json!({"tracking_code": tracking, "carrier": carrier,
                    "to_address": address("to_address"), "from_address": address("from_address")}),
            ))
        }
        "batches_create" => Some(("batch", json!({"shipments": [{"id": shipment_id}]}))),
        "batches_add_shipments" | "batches_remove_shipments" => Some(("shipments", json!([{"id": shipment_id}]))),
        _ => None,
    };
    if let Some((name, value)) = body {
        values.insert(name.to_owned(), serde_json::to_string_pretty(&value).unwrap_or_default());
    }
}

/// The columns of EasyPost's lists: the ones a person reads each record by, instead of the
/// first fields of a shipment (which are its addresses' forty).
pub fn layout(op: &Operation) -> Option<Layout> {
    if op.service != Service::Easypost {
        return None;
    }
    let paths: &[&[&str]] = match op.name {
        // Carrier and tracking code first: together they name a parcel anywhere (and fit at
        // 80x24); the status follows where there is room.
        "shipments_list" => &[
            &["selected_rate", "carrier"],
            &["tracking_code"],
            &["status"],
            &["selected_rate", "service"],
            &["to"],
            &["created_at"],
            &["id"],
        ],
        "trackers_list" => &[
            &["status"],
            &["status_detail"],
            &["carrier"],
            &["tracking_code"],
            &["est_delivery_date"],
            &["updated_at"],
            &["id"],
        ],
        "batches_list" => &[
            &["state"],
            &["num_shipments"],
            &["counts"],
            &["label_url"],
            &["scan_form", "status"],
            &["scan_form", "form_url"],
            &["created_at"],
            &["id"],
        ],
        "addresses_list" => {
            // The mark before the street: a narrow browser keeps the leading columns.
            &[&["name"], &["verified"], &["city"], &["state"], &["zip"], &["street1"], &["country"], &["id"]]
        }
        "insurance_list" => &[&["status"], &["amount"], &["tracking_code"], &["fee"], &["created_at"], &["id"]],
        "refunds_list" => {
            &[&["status"], &["carrier"], &["tracking_code"], &["confirmation_number"], &["created_at"], &["id"]]
        }
        "webhooks_list" => &[&["url"], &["disabled_at"], &["headers"], &["created_at"], &["id"]],
        _ => return None,
    };
    let columns = paths
        .iter()
        .map(|path| {
            let mut column = Column::new(path.iter().map(|s| (*s).to_owned()).collect());
            // A scan form's status beside the batch's state reads as whose it is.
            column.qualified = path.first() == Some(&"scan_form");
            column.money |= matches!(*path, ["fee"]);
            column
        })
        .collect();
    Some(Layout { columns, cell })
}

/// A cell of EasyPost's lists where the generic text would not do: where a shipment goes, times
/// without seconds, an address's verification mark, a batch's counts, an insurance's fee, a
/// webhook's header names (their values may be secrets).
pub fn cell(record: Item<'_>, column: &Column) -> Option<String> {
    let [name] = column.path.as_slice() else { return None };
    // Only the member a cell reads is decoded, never the whole record.
    let member = |key: &str| record.get(key).map(Item::to_value);
    match name.as_str() {
        "to" => Some(place(member("to_address").as_ref())),
        "created_at" | "updated_at" | "disabled_at" | "est_delivery_date" => {
            record.get(name.as_str())?.as_str().map(|time| time_text(&time))
        }
        "verified" => Some(checks_mark(member("verifications").as_ref()).to_owned()),
        "counts" => Some(batch_counts(member("status").as_ref())),
        "fee" => money(&record.get("fee")?.get("amount")?.to_value()),
        "headers" => {
            let headers = member("custom_headers");
            Some(array(headers.as_ref()).iter().map(|h| field(h, "name")).collect::<Vec<_>>().join(", "))
        }
        _ => None,
    }
}

#[cfg(test)]
#[path = "easypost_tests.rs"]
mod tests;
