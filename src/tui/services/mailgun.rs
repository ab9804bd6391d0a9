//! What the console shows of Mailgun beyond raw JSON: a domain's DNS records with valid / missing
//! marks, a stored message (headers, text, attachments), webhooks by name, stats by bucket, event
//! rows a person can read (type by tone, failures with their severity and reason), and the values
//! Mailgun forms start with (the domain's postmaster as sender, a list's address for its members,
//! an event's storage key for its message). Pure functions over JSON, so the rules are tested
//! without a terminal.

use serde_json::{Map, Value};

use crate::catalog::{Operation, Service};
use crate::client::{Target, Values};
use crate::format::{epoch_seconds_text, human_bytes, time_text};
use crate::json_index::Item;
use crate::table::{Column, Layout};
use crate::tui::components::detail::{
    array, columns, fact, text, Align, Detail, DetailCommand, DetailKey, Table, Tone,
};
use crate::tui::services::{Compose, RowAction, ServiceConsole};

pub struct Mailgun;

impl ServiceConsole for Mailgun {
    fn confirm_headline(&self, op: &Operation) -> Option<&'static str> {
        matches!(op.name, "messages_send" | "messages_send_mime").then_some("This sends mail: once sent, it is sent")
    }

    fn layout(&self, op: &Operation) -> Option<Layout> {
        (op.service == Service::Mailgun && op.name == "events_list")
            .then(|| Layout { columns: event_columns(), cell: event_cell })
    }

    fn cell_tone(&self, header: &str, text: &str) -> Option<Tone> {
        match header {
            "event" => event_tone(text),
            "severity" => severity_tone(text),
            "state" => domain_state_tone(text),
            _ => None,
        }
    }

    fn detail(&self, op: &Operation, body: &Value) -> Option<Detail> {
        detail_for(op, body)
    }

    /// A domain is asked for with its DNS records, which its answer shows as the DNS view (`v`
    /// there verifies them again); a mailing list opens its members.
    fn open_row(&self, list_op: &str, record: &Value, _scope: &dyn Fn(&str) -> Option<String>) -> Option<RowAction> {
        match list_op {
            "domains_list" => {
                let name = record.get("name")?.as_str()?;
                Some(RowAction::Fetch("domains_get", [("domain".to_owned(), name.to_owned())].into_iter().collect()))
            }
            "mailing_lists_list" => Some(RowAction::Drill("list members")),
            _ => None,
        }
    }

    fn remembered(&self, list_op: &str, record: &Map<String, Value>) -> Vec<(&'static str, String)> {
        remembered(list_op, record)
    }

    fn suggest(&self, op: &Operation, record: &Map<String, Value>, _target: &Target, values: &mut Values) {
        suggest(op, record, values);
    }

    /// A message sent cannot be called back: its confirmation says what goes to whom.
    fn effects(&self, op: &Operation, values: &Values, _known: &dyn Fn(&str) -> Option<Value>) -> Vec<String> {
        if !op.name.starts_with("messages_send") {
            return Vec::new();
        }
        send_effect(op, values)
    }

    fn compose(&self, kind: Compose) -> Option<&'static str> {
        Some(match kind {
            Compose::Fields => "messages_send",
            Compose::Mime => "messages_send_mime",
        })
    }
}

/// What sending a message does, in the words of its confirmation: `sends "Invoice" from a@x to
/// b@y, c@y (testmode: accepted, not delivered)`.
fn send_effect(op: &Operation, values: &Values) -> Vec<String> {
    let value = |name: &str| values.get(name).map(|v| v.trim()).filter(|v| !v.is_empty());
    let recipients: Vec<&str> = op
        .params
        .iter()
        .filter(|p| matches!(p.name, "to" | "cc" | "bcc"))
        .filter_map(|p| Some(crate::catalog::items(p, value(p.name)?)))
        .flatten()
        .collect();
    let what = match (value("subject"), value("template"), value("message")) {
        (Some(subject), _, _) => format!("\"{subject}\""),
        (None, Some(template), _) => format!("template {template}"),
        (None, None, Some(_)) => "the MIME message".to_owned(),
        _ => "a message".to_owned(),
    };
    let from = value("from").map(|from| format!(" from {from}")).unwrap_or_default();
    let mut line = format!("sends {what}{from} to {}", recipients.join(", "));
    if value("o:testmode").is_some_and(|v| matches!(v, "yes" | "true")) {
        line.push_str(" (test mode: accepted, not delivered)");
    }
    vec![line]
}

/// The structured view of a Mailgun response, for the operations that have one.
pub fn detail_for(op: &Operation, body: &Value) -> Option<Detail> {
    if op.service != Service::Mailgun {
        return None;
    }
    match op.name {
        "domains_get" | "domains_verify" | "domains_create" => body.get("domain").map(|_| dns_detail(body)),
        "messages_get" => body.is_object().then(|| stored_message(body)),
        "webhooks_list" => body.get("webhooks").map(webhooks_detail),
        "stats_total" => body.get("stats").map(|_| stats_detail(body)),
        _ => None,
    }
}

/// How a domain's state reads: in use, waiting for its DNS, switched off.
pub fn domain_state_tone(state: &str) -> Option<Tone> {
    Some(match state {
        "active" => Tone::Good,
        "unverified" => Tone::Pending,
        "disabled" => Tone::Bad,
        _ => return None,
    })
}

/// How an event type reads: delivered is the good end, failed and complaints are bad, opens and
/// clicks are information, an unsubscribe is a change of mind, accepted is still on its way.
pub fn event_tone(event: &str) -> Option<Tone> {
    Some(match event {
        "delivered" => Tone::Good,
        "failed" | "rejected" | "complained" | "list_member_upload_error" => Tone::Bad,
        "opened" | "clicked" => Tone::Info,
        "unsubscribed" => Tone::Changed,
        "accepted" => Tone::Pending,
        "stored" => Tone::Quiet,
        _ => return None,
    })
}

/// A failure's severity: permanent gives up on the address, temporary will be retried.
pub fn severity_tone(severity: &str) -> Option<Tone> {
    Some(match severity {
        "permanent" => Tone::Bad,
        "temporary" => Tone::Changed,
        _ => return None,
    })
}

/// A DNS record's `valid` as a mark a person reads at a glance, and its tone.
pub fn dns_mark(valid: &str) -> (&'static str, Tone) {
    match valid {
        "valid" => ("✓ valid", Tone::Good),
        "invalid" => ("✗ missing", Tone::Bad),
        _ => ("? unknown", Tone::Changed),
    }
}

/// A domain with the records to publish: its state in the title, a sending and a receiving
/// table with a mark per record, what to do about records not valid yet, and `v` to verify.
fn dns_detail(body: &Value) -> Detail {
    let domain = body.get("domain").unwrap_or(&Value::Null);
    let field = |name: &str| text(domain.get(name));
    let name = field("name");
    let state = field("state");
    let mut facts = vec![
        (String::from("state"), state.clone(), domain_state_tone(&state)),
        fact("type", field("type")),
        fact("created", time_text(&field("created_at"))),
        fact("smtp login", field("smtp_login")),
        fact("spam action", field("spam_action")),
        fact("wildcard", field("wildcard")),
        fact("tracking", format!("{}://{}.{name}", field("web_scheme"), field("web_prefix"))),
    ];
    if domain.get("web_scheme").is_none() && domain.get("web_prefix").is_none() {
        facts.pop();
    }
    facts.retain(|(_, value, _)| !value.is_empty());
    let mut counts = (0, 0, 0);
    let mut table = |title: &str, records: &[Value], with_priority: bool| {
        let mut spec = vec![("", Align::Left), ("type", Align::Left), ("name", Align::Left), ("value", Align::Left)];
        if with_priority {
            spec.push(("priority", Align::Right));
        }
        let mut rows = Vec::new();
        let mut tones = Vec::new();
        for record in records {
            let valid = text(record.get("valid"));
            let (mark, tone) = dns_mark(&valid);
            match valid.as_str() {
                "valid" => counts.0 += 1,
                "invalid" => counts.1 += 1,
                _ => counts.2 += 1,
            }
            let mut row = vec![
                mark.to_owned(),
                text(record.get("record_type")),
                text(record.get("name")),
                text(record.get("value")),
            ];
            if with_priority {
                row.push(text(record.get("priority")));
            }
            rows.push(row);
            tones.push(Some(tone));
        }
        Table { title: format!("{title} ({})", records.len()), columns: columns(&spec), rows, tones }
    };
    let sending = table("sending DNS records", array(body.get("sending_dns_records")), false);
    let receiving = table("receiving DNS records", array(body.get("receiving_dns_records")), true);
    let (valid, missing, unknown) = counts;
    let mut notes = Vec::new();
    if let Some(message) = body.get("message").and_then(Value::as_str) {
        notes.push(message.to_owned());
    }
    if missing > 0 {
        notes.push(format!(
            "{} missing from DNS: publish them at your DNS host as shown; v verifies again",
            crate::format::plural(missing, "record")
        ));
    }
    if unknown > 0 {
        notes.push(format!("{} not checked yet: v verifies them now", crate::format::plural(unknown, "record")));
    }
    if missing == 0 && unknown == 0 && valid > 0 && state != "active" {
        notes.push("every record is valid: v verifies again to activate the domain".to_owned());
    }
    Detail {
        title: format!("domain {name} · {}", if state.is_empty() { "state unknown" } else { &state }),
        subject: Some(format!("domain {name}")),
        facts,
        tables: vec![sending, receiving],
        note: (!notes.is_empty()).then(|| notes.join("\n")),
        commands: vec![DetailKey {
            key: 'v',
            label: "verify (re-check DNS)",
            command: DetailCommand::Send { op: "domains_verify", values: vec![("domain".into(), name.clone())] },
        }],
        ..Detail::default()
    }
}

/// A stored message (`messages_get`, JSON form): who, what, its headers, text body and
/// attachments; the HTML body is only noted (the inspector has it). The raw MIME form
/// (`body-mime`) is shown as text.
fn stored_message(body: &Value) -> Detail {
    let field = |name: &str| text(body.get(name));
    let subject = field("subject");
    let mut facts = vec![
        fact("from", field("from")),
        fact("sender", field("sender")),
        fact("recipients", field("recipients")),
        fact("subject", subject.clone()),
        fact("date", time_text(&field("Date"))),
        fact("message-id", field("Message-Id")),
    ];
    if let Some(tag) = body.get("X-Mailgun-Tag") {
        facts.push(fact("tags", text(Some(tag))));
    }
    facts.retain(|(_, value, _)| !value.is_empty());
    let headers: Vec<Vec<String>> = array(body.get("message-headers"))
        .iter()
        .filter_map(|pair| match pair.as_array().map(Vec::as_slice) {
            Some([name, value]) => Some(vec![text(Some(name)), text(Some(value))]),
            _ => None,
        })
        .collect();
    let attachments = array(body.get("attachments"));
    let attachment_rows: Vec<Vec<String>> = attachments
        .iter()
        .map(|a| {
            let size = a.get("size").and_then(Value::as_u64).map_or_else(|| text(a.get("size")), human_bytes);
            vec![
                text(a.get("name").or_else(|| a.get("filename"))),
                text(a.get("content-type")),
                size,
                text(a.get("url")),
            ]
        })
        .collect();
    let mut tables = vec![Table {
        title: format!("attachments ({})", attachment_rows.len()),
        columns: columns(&[("name", Align::Left), ("type", Align::Left), ("size", Align::Right), ("url", Align::Left)]),
        rows: attachment_rows,
        tones: Vec::new(),
    }];
    tables.push(Table {
        title: format!("headers ({})", headers.len()),
        columns: columns(&[("header", Align::Left), ("value", Align::Left)]),
        rows: headers,
        tones: Vec::new(),
    });
    let mut texts = Vec::new();
    let plain = field("body-plain");
    let stripped = field("stripped-text");
    if !plain.is_empty() {
        texts.push(("text".to_owned(), plain));
    } else if !stripped.is_empty() {
        texts.push(("text (stripped)".to_owned(), stripped));
    }
    let mime = field("body-mime");
    if !mime.is_empty() {
        texts.push(("raw MIME".to_owned(), mime));
    }
    let html = field("body-html");
    let note = match (html.is_empty(), texts.is_empty()) {
        (false, _) => Some(format!("an HTML body of {} is in the inspector (l)", human_bytes(html.len() as u64))),
        (true, true) => Some("the message has no text body".to_owned()),
        (true, false) => None,
    };
    Detail {
        title: if subject.is_empty() { "stored message".to_owned() } else { format!("message: {subject}") },
        facts,
        tables,
        texts,
        note,
        ..Detail::default()
    }
}

/// The webhook names Mailgun knows, in the order its dashboard lists them.
const WEBHOOK_NAMES: &[&str] =
    &["accepted", "delivered", "opened", "clicked", "unsubscribed", "complained", "permanent_fail", "temporary_fail"];

/// A domain's webhooks: a row per URL under its event name, and the names with none.
fn webhooks_detail(webhooks: &Value) -> Detail {
    let Some(map) = webhooks.as_object() else { return Detail::default() };
    let mut rows = Vec::new();
    for (name, hook) in map {
        // The older API answered one `url`; the current one a list of `urls`.
        let urls: Vec<String> = match (hook.get("urls"), hook.get("url")) {
            (Some(Value::Array(urls)), _) => urls.iter().map(|u| text(Some(u))).collect(),
            (_, Some(url)) => vec![text(Some(url))],
            _ => Vec::new(),
        };
        if urls.is_empty() {
            rows.push(vec![name.clone(), "(no URL)".to_owned()]);
        }
        for (index, url) in urls.into_iter().enumerate() {
            rows.push(vec![if index == 0 { name.clone() } else { String::new() }, url]);
        }
    }
    let unset: Vec<&str> = WEBHOOK_NAMES.iter().copied().filter(|name| !map.contains_key(*name)).collect();
    Detail {
        title: format!("webhooks ({} set)", map.len()),
        facts: vec![fact("not set", if unset.is_empty() { "none".to_owned() } else { unset.join(", ") })],
        tables: vec![Table {
            title: "event → URLs Mailgun POSTs to".to_owned(),
            columns: columns(&[("webhook", Align::Left), ("url", Align::Left)]),
            rows,
            tones: Vec::new(),
        }],
        note: Some("o: create, update or delete one (the domain is filled in)".to_owned()),
        ..Detail::default()
    }
}

/// The stats kinds in the order a message goes through them.
const STAT_KINDS: &[&str] =
    &["accepted", "delivered", "failed", "opened", "clicked", "unsubscribed", "complained", "stored"];

/// One bucket's count of a kind: its `total`, or for `failed` (whose total is split into
/// temporary and permanent) the sum of its parts' totals.
pub fn stat_total(bucket: &Value, kind: &str) -> Option<f64> {
    let entry = bucket.get(kind)?;
    if let Some(total) = entry.get("total").and_then(Value::as_f64) {
        return Some(total);
    }
    let parts: Vec<f64> =
        entry.as_object()?.values().filter_map(|part| part.get("total").and_then(Value::as_f64)).collect();
    (!parts.is_empty()).then(|| parts.iter().sum())
}

fn count_text(value: f64) -> String {
    if value.fract() == 0.0 && value.abs() < 1e15 {
        format!("{}", value as i64)
    } else {
        format!("{value}")
    }
}

/// Stats by bucket: a row per time with the total of each kind asked for, then the totals;
/// `c` charts them.
fn stats_detail(body: &Value) -> Detail {
    let buckets = array(body.get("stats"));
    let kinds: Vec<&str> =
        STAT_KINDS.iter().copied().filter(|kind| buckets.iter().any(|b| b.get(*kind).is_some())).collect();
    let mut spec = vec![("time", Align::Left)];
    spec.extend(kinds.iter().map(|kind| (*kind, Align::Right)));
    let mut sums = vec![0.0; kinds.len()];
    let mut rows: Vec<Vec<String>> = buckets
        .iter()
        .map(|bucket| {
            let mut row = vec![text(bucket.get("time"))];
            for (index, kind) in kinds.iter().enumerate() {
                let count = stat_total(bucket, kind);
                sums[index] += count.unwrap_or(0.0);
                row.push(count.map(count_text).unwrap_or_default());
            }
            row
        })
        .collect();
    let mut tones = vec![None; rows.len()];
    let mut total = vec!["total".to_owned()];
    total.extend(sums.iter().map(|sum| count_text(*sum)));
    rows.push(total);
    tones.push(Some(Tone::Total));
    let resolution = text(body.get("resolution"));
    let facts = vec![
        fact("from", text(body.get("start"))),
        fact("to", text(body.get("end"))),
        fact("by", resolution.clone()),
        fact("buckets", buckets.len().to_string()),
    ];
    Detail {
        title: format!("stats by {}", if resolution.is_empty() { "bucket" } else { &resolution }),
        facts: facts.into_iter().filter(|(_, v, _)| !v.is_empty()).collect(),
        tables: vec![Table { title: "totals per bucket".to_owned(), columns: columns(&spec), rows, tones }],
        commands: vec![DetailKey { key: 'c', label: "chart", command: DetailCommand::Chart }],
        ..Detail::default()
    }
}

/// The columns of the event log: when, what, for whom, what message, why it failed. Without
/// them an event's forty nested fields would crowd out the ones a person reads.
pub fn event_columns() -> Vec<Column> {
    [
        &["timestamp"][..],
        &["event"],
        &["recipient"],
        // The subject before the failure columns: most rows are not failures, and a narrow
        // browser keeps the leading columns.
        &["message", "headers", "subject"],
        &["severity"],
        &["reason"],
        &["delivery-status", "code"],
        &["message", "headers", "from"],
    ]
    .iter()
    .map(|path| Column::new(path.iter().map(|s| (*s).to_owned()).collect()))
    .collect()
}

/// An event's cell where the generic one would say little: the float epoch `timestamp` as a
/// UTC time, and a failure's reason with the delivery status's description beside it.
pub fn event_cell(record: Item<'_>, column: &Column) -> Option<String> {
    match column.path.as_slice() {
        [only] if only == "timestamp" => {
            let seconds = record.get("timestamp")?.as_f64()?;
            epoch_seconds_text(seconds)
        }
        [only] if only == "reason" => {
            let reason = record.get("reason").and_then(Item::as_str).unwrap_or_default();
            let description = record
                .get("delivery-status")
                .and_then(|d| d.get("description").or_else(|| d.get("message")))
                .and_then(Item::as_str)
                .unwrap_or_default();
            Some(match (reason.is_empty(), description.is_empty()) {
                (_, true) => reason.to_owned(),
                (true, false) => description.to_owned(),
                (false, false) => format!("{reason}: {description}"),
            })
        }
        _ => None,
    }
}

/// Ids a selected Mailgun row gives to the forms and lists that need them, beyond what the
/// generic rules find: a mailing list's address is its members' `list_address`, a member's
/// address is `member_address`, an event's stored message is `storage_key` (and its domain).
pub fn remembered(list_op: &str, record: &Map<String, Value>) -> Vec<(&'static str, String)> {
    let address = || record.get("address").and_then(Value::as_str).map(str::to_owned);
    match list_op {
        "mailing_lists_list" => address().map(|a| ("list_address", a)).into_iter().collect(),
        "mailing_lists_members_list" => address().map(|a| ("member_address", a)).into_iter().collect(),
        "events_list" => {
            let storage = record.get("storage");
            let key = storage.and_then(|s| s.get("key")).and_then(Value::as_str);
            key.map(|k| ("storage_key", k.to_owned())).into_iter().collect()
        }
        _ => Vec::new(),
    }
}

/// Values for a Mailgun form on top of the generic ones: a message is sent from the domain's
/// postmaster when no sender is given; a stored message is asked for by the selected event's
/// storage key; a list's members by the selected list.
pub fn suggest(op: &Operation, record: &Map<String, Value>, values: &mut Values) {
    if op.service != Service::Mailgun {
        return;
    }
    match op.name {
        "messages_send" => {
            if let Some(domain) = values.get("domain").filter(|d| !d.is_empty()).cloned() {
                values.entry("from".to_owned()).or_insert_with(|| format!("postmaster@{domain}"));
            }
        }
        "messages_get" => {
            if let Some(key) = record.get("storage").and_then(|s| s.get("key")).and_then(Value::as_str) {
                values.insert("storage_key".to_owned(), key.to_owned());
            }
        }
        "mailing_lists_members_list" | "mailing_lists_members_add" | "mailing_lists_members_delete" => {
            // A list row's address is the list; a member row carries no list address of its own.
            let is_list = record.contains_key("members_count") || record.contains_key("access_level");
            if let Some(address) = record.get("address").and_then(Value::as_str).filter(|_| is_list) {
                values.insert("list_address".to_owned(), address.to_owned());
                if op.name != "mailing_lists_members_list" {
                    values.remove("address");
                    values.remove("member_address");
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn op(name: &str) -> &'static Operation {
        Service::Mailgun.operation(name).unwrap()
    }

    /// A new custom domain as `domains_verify` answers it before its records are published
    /// (shared/api/mailgun.md §7.1).
    fn unverified() -> Value {
        json!({
            "message": "Domain DNS records have been updated",
            "domain": {"id": "5f1e8a2b5f1e8a2b5f1e8a2b", "name": "news.example.com", "state": "unverified",
                "type": "custom", "created_at": "Tue, 14 Jul 2015 19:13:04 GMT", "smtp_login": "postmaster@news.example.com",
                "spam_action": "disabled", "wildcard": false, "web_prefix": "email", "web_scheme": "http"},
            "sending_dns_records": [
                {"record_type": "TXT", "name": "news.example.com", "value": "v=spf1 include:mailgun.org ~all", "valid": "invalid", "cached": []},
                {"record_type": "TXT", "name": "pdk1._domainkey.news.example.com", "value": "k=rsa; p=MIGfMA0GCSqGSIb3DQEBAQUAA4GNADCBiQKBgQ", "valid": "invalid", "cached": []},
                {"record_type": "CNAME", "name": "email.news.example.com", "value": "mailgun.org", "valid": "unknown", "cached": []}
            ],
            "receiving_dns_records": [
                {"record_type": "MX", "name": "news.example.com", "value": "mxa.mailgun.org", "priority": "10", "valid": "invalid", "cached": []},
                {"record_type": "MX", "name": "news.example.com", "value": "mxb.mailgun.org", "priority": "10", "valid": "invalid", "cached": []}
            ]
        })
    }

    #[test]
    fn a_domain_shows_its_records_marked_and_verify_is_one_key_away() {
        let detail = detail_for(op("domains_verify"), &unverified()).unwrap();
        assert_eq!(detail.title, "domain news.example.com · unverified");
        assert_eq!(detail.subject.as_deref(), Some("domain news.example.com"));
        assert_eq!(detail.facts[0], ("state".into(), "unverified".into(), Some(Tone::Pending)));
        let sending = &detail.tables[0];
        assert_eq!(sending.title, "sending DNS records (3)");
        assert_eq!(sending.rows[0][..3], ["✗ missing", "TXT", "news.example.com"]);
        assert_eq!(sending.rows[2][0], "? unknown");
        assert_eq!(sending.tones, [Some(Tone::Bad), Some(Tone::Bad), Some(Tone::Changed)]);
        let receiving = &detail.tables[1];
        assert_eq!(receiving.columns.last().unwrap().0, "priority");
        assert_eq!(receiving.rows[1], ["✗ missing", "MX", "news.example.com", "mxb.mailgun.org", "10"]);
        let note = detail.note.clone().unwrap();
        assert!(note.contains("4 records missing") && note.contains("v verifies"), "{note}");
        assert!(note.contains("1 record not checked yet"), "{note}");
        assert_eq!(
            detail.commands[0].command,
            DetailCommand::Send { op: "domains_verify", values: vec![("domain".into(), "news.example.com".into())] }
        );

        // Once published and verified: every mark valid, the domain active, the same subject.
        let mut active = unverified();
        active["domain"]["state"] = json!("active");
        for list in ["sending_dns_records", "receiving_dns_records"] {
            for record in active[list].as_array_mut().unwrap() {
                record["valid"] = json!("valid");
            }
        }
        let after = detail_for(op("domains_get"), &active).unwrap();
        assert_eq!(after.title, "domain news.example.com · active");
        assert!(after.same_subject(&detail));
        assert!(after.tables.iter().flat_map(|t| &t.rows).all(|r| r[0] == "✓ valid"));
        assert!(after.tables.iter().flat_map(|t| &t.tones).all(|t| *t == Some(Tone::Good)));
        assert_eq!(after.facts[0].2, Some(Tone::Good));
        assert!(!after.note.unwrap_or_default().contains("missing"));
        // Other services' and other operations' answers have no such view.
        assert!(detail_for(op("domains_list"), &active).is_none());
    }

    #[test]
    fn a_stored_message_shows_headers_text_and_attachments() {
        let body = json!({
            "recipients": "ops@example.com", "sender": "postmaster@mg.example.com", "from": "Ops <postmaster@mg.example.com>",
            "subject": "Invoice 42", "body-plain": "Hello,\nyour invoice is attached.\n", "stripped-text": "Hello,",
            "body-html": "<p>Hello,</p>", "stripped-signature": "",
            "attachments": [{"size": 20480, "url": "http://127.0.0.1:1/v3/domains/mg.example.com/messages/K/attachments/0",
                "name": "invoice.pdf", "content-type": "application/pdf"}],
            "message-headers": [["Mime-Version", "1.0"], ["Subject", "Invoice 42"], ["X-Ticket", "42"]],
            "Message-Id": "<20240101.1@mg.example.com>", "content-id-map": {}
        });
        let detail = detail_for(op("messages_get"), &body).unwrap();
        assert_eq!(detail.title, "message: Invoice 42");
        assert!(detail.facts.iter().any(|(l, v, _)| l == "from" && v == "Ops <postmaster@mg.example.com>"));
        assert_eq!(detail.tables[0].title, "attachments (1)");
        assert_eq!(detail.tables[0].rows[0][..3], ["invoice.pdf", "application/pdf", "20.0 KB"]);
        assert_eq!(detail.tables[1].rows[2], ["X-Ticket", "42"]);
        assert_eq!(detail.texts, [("text".to_owned(), "Hello,\nyour invoice is attached.\n".to_owned())]);
        assert!(detail.note.unwrap().contains("HTML body of 13 B"));
    }

    #[test]
    fn webhooks_by_name_with_every_url() {
        let body = json!({"webhooks": {
            "delivered": {"urls": ["http://127.0.0.1:9000/a", "http://127.0.0.1:9000/b"]},
            "permanent_fail": {"urls": ["http://127.0.0.1:9000/fail"]},
            "clicked": {"url": "http://127.0.0.1:9000/old"}
        }});
        let detail = detail_for(op("webhooks_list"), &body).unwrap();
        assert_eq!(detail.title, "webhooks (3 set)");
        let rows = &detail.tables[0].rows;
        assert_eq!(rows[0], ["delivered", "http://127.0.0.1:9000/a"]);
        assert_eq!(rows[1], ["", "http://127.0.0.1:9000/b"]);
        assert_eq!(rows[3], ["clicked", "http://127.0.0.1:9000/old"], "the older single-url shape");
        assert!(detail.facts[0].1.contains("accepted, opened"), "{:?}", detail.facts);
    }

    #[test]
    fn stats_by_bucket_with_failed_summed_and_a_chart_key() {
        let body = json!({"start": "Tue, 14 Feb 2012 00:00:00 UTC", "end": "Fri, 01 Apr 2012 00:00:00 UTC", "resolution": "month",
        "stats": [
            {"time": "Tue, 14 Feb 2012 00:00:00 UTC", "accepted": {"incoming": 5, "outgoing": 10, "total": 15},
             "delivered": {"smtp": 15, "http": 5, "optimized": 0, "total": 20},
             "failed": {"temporary": {"espblock": 1, "total": 1}, "permanent": {"suppress-bounce": 1, "bounce": 4, "total": 10}},
             "opened": {"total": 20, "unique": 1}},
            {"time": "Thu, 01 Mar 2012 00:00:00 UTC", "accepted": {"total": 3}, "delivered": {"total": 2},
             "failed": {"temporary": {"total": 0}, "permanent": {"total": 1}}, "opened": {"total": 0}}
        ]});
        let detail = detail_for(op("stats_total"), &body).unwrap();
        assert_eq!(detail.title, "stats by month");
        let table = &detail.tables[0];
        let header: Vec<&str> = table.columns.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(header, ["time", "accepted", "delivered", "failed", "opened"]);
        assert_eq!(table.rows[0][1..], ["15", "20", "11", "20"]);
        assert_eq!(table.rows[2], ["total", "18", "22", "12", "20"]);
        assert_eq!(table.tones.last(), Some(&Some(Tone::Total)));
        assert_eq!(detail.commands[0].command, DetailCommand::Chart);
    }

    #[test]
    fn event_rows_read_as_when_what_whom_and_why() {
        let failed = json!({"event": "failed", "id": "x", "timestamp": 1_529_692_199.626_182, "severity": "permanent",
            "reason": "suppress-bounce", "recipient": "bounced@example.net",
            "delivery-status": {"attempt-no": 1, "message": "", "code": 605, "description": "Not delivering to previously bounced address", "session-seconds": 0},
            "message": {"headers": {"to": "bounced@example.net", "message-id": "m@x", "from": "a@mg.example.com", "subject": "Hi"}}});
        let columns = event_columns();
        let spec = crate::table::RowSpec::new(
            Some("id"),
            Some(crate::table::Layout { columns: columns.clone(), cell: event_cell }),
        );
        let cells = crate::table::cells_of(&failed, &spec);
        let cell = |name: &str| cells[columns.iter().position(|c| c.header() == name).unwrap()].clone();
        assert_eq!(cell("timestamp"), "2018-06-22 18:29:59");
        assert_eq!(cell("reason"), "suppress-bounce: Not delivering to previously bounced addre…", "cut to a cell");
        assert_eq!(cell("code"), "605");
        assert_eq!(cell("subject"), "Hi");
        assert_eq!(event_tone("delivered"), Some(Tone::Good));
        assert_eq!(event_tone("failed"), Some(Tone::Bad));
        assert_eq!(event_tone("opened"), Some(Tone::Info));
        assert_eq!(event_tone("clicked"), Some(Tone::Info));
        assert_eq!(severity_tone("permanent"), Some(Tone::Bad));
        assert_eq!(severity_tone("temporary"), Some(Tone::Changed));
        assert_eq!(domain_state_tone("CA"), None, "a US state is no domain state");
        assert_eq!(epoch_seconds_text(f64::NAN), None);
        let send = Service::Mailgun.operation("messages_send").unwrap();
        let values: Values =
            [("to", "ada@example.com"), ("from", "ops@mg.example.com"), ("subject", "Invoice"), ("o:testmode", "yes")]
                .into_iter()
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
                .collect();
        assert_eq!(
            Mailgun.effects(send, &values, &|_| None),
            ["sends \"Invoice\" from ops@mg.example.com to ada@example.com (test mode: accepted, not delivered)"]
        );
    }

    #[test]
    fn forms_start_from_the_domain_the_list_and_the_event() {
        let mut values = Values::new();
        values.insert("domain".into(), "mg.example.com".into());
        suggest(op("messages_send"), &Map::new(), &mut values);
        assert_eq!(values.get("from").map(String::as_str), Some("postmaster@mg.example.com"));
        let mut typed = Values::new();
        typed.insert("domain".into(), "mg.example.com".into());
        typed.insert("from".into(), "me@mg.example.com".into());
        suggest(op("messages_send"), &Map::new(), &mut typed);
        assert_eq!(typed.get("from").map(String::as_str), Some("me@mg.example.com"), "a sender given is kept");

        let event = json!({"event": "accepted", "storage": {"key": "AwABB", "url": "http://127.0.0.1/v3/domains/mg.example.com/messages/AwABB"}});
        let event = event.as_object().unwrap();
        let mut values = Values::new();
        suggest(op("messages_get"), event, &mut values);
        assert_eq!(values.get("storage_key").map(String::as_str), Some("AwABB"));
        assert_eq!(remembered("events_list", event), [("storage_key", "AwABB".to_owned())]);

        let list = json!({"address": "developers@mg.example.com", "name": "Developers", "members_count": 3, "access_level": "readonly"});
        let list = list.as_object().unwrap();
        assert_eq!(remembered("mailing_lists_list", list), [("list_address", "developers@mg.example.com".to_owned())]);
        let mut values = Values::new();
        values.insert("address".into(), "developers@mg.example.com".into());
        suggest(op("mailing_lists_members_add"), list, &mut values);
        assert_eq!(values.get("list_address").map(String::as_str), Some("developers@mg.example.com"));
        assert!(!values.contains_key("address"), "the list's address is no member address");
        let member = json!({"address": "bob@example.com", "vars": {"team": "api"}, "subscribed": true});
        assert_eq!(
            remembered("mailing_lists_members_list", member.as_object().unwrap()),
            [("member_address", "bob@example.com".to_owned())]
        );
    }
}
