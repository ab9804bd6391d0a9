//! `GET /v3/{domain}/stats/total` (and account-wide `/v3/stats/total`): counts of the requested
//! event kinds per hour, day or month, computed from the event log, every bucket of the range
//! listed even when empty.

use std::collections::{BTreeMap, HashSet};

use serde_json::{json, Map, Value};

use super::dates::{floor, next_bucket, parse_duration, parse_time, rfc2822, Resolution};
use super::errors::MailgunError;
use super::events::{Event, EventLog};
use crate::sandbox::request::Query;

const KINDS: [&str; 8] =
    ["accepted", "delivered", "failed", "opened", "clicked", "unsubscribed", "complained", "stored"];
/// Buckets one answer may hold, so a month of hours or decades of days cannot be asked for.
const MAX_BUCKETS: usize = 5000;

/// The totals answer for `domain` (every domain of the region with `None`).
pub fn total(log: &EventLog, domain: Option<&str>, query: &Query, now_ms: i64) -> Result<Value, MailgunError> {
    let mut kinds: Vec<&str> = Vec::new();
    for value in query.all("event") {
        for kind in value.split(',').map(str::trim).filter(|k| !k.is_empty()) {
            let known = KINDS.iter().find(|k| **k == kind).ok_or_else(|| {
                MailgunError::bad_request(format!("Invalid event type '{kind}'; use one of: {}", KINDS.join(", ")))
            })?;
            if !kinds.contains(known) {
                kinds.push(known);
            }
        }
    }
    if kinds.is_empty() {
        return Err(MailgunError::bad_request("Missing parameter 'event'"));
    }
    let resolution = match query.get("resolution") {
        None => Resolution::Day,
        Some(r) => Resolution::parse(r).ok_or_else(|| MailgunError::bad_request(format!("Invalid resolution: {r}")))?,
    };
    let time = |name: &str| {
        query
            .get(name)
            .map(|v| parse_time(v).ok_or_else(|| MailgunError::bad_request(format!("Invalid {name}: {v}"))))
            .transpose()
    };
    let end = time("end")?.unwrap_or(now_ms);
    let start = match query.get("duration") {
        Some(d) => {
            end - parse_duration(d).ok_or_else(|| MailgunError::bad_request(format!("Invalid duration: {d}")))?
        }
        None => time("start")?.unwrap_or(end - 7 * 86_400_000),
    };
    if start > end {
        return Err(MailgunError::bad_request("start must be before end"));
    }
    let first = floor(start, resolution);
    let mut buckets: BTreeMap<i64, Counts> = BTreeMap::new();
    let mut at = first;
    while at <= end {
        buckets.insert(at, Counts::default());
        if buckets.len() > MAX_BUCKETS {
            return Err(MailgunError::bad_request(format!(
                "The range holds more than {MAX_BUCKETS} {} buckets",
                resolution.name()
            )));
        }
        at = next_bucket(at, resolution);
    }
    let mut unique: HashSet<(i64, &str, String)> = HashSet::new();
    for event in log.between(domain, first, end) {
        let bucket = floor(event.ts_ms, resolution);
        if let Some(counts) = buckets.get_mut(&bucket) {
            counts.add(event, bucket, &mut unique);
        }
    }
    let stats: Vec<Value> = buckets
        .iter()
        .map(|(at, counts)| {
            let mut row = Map::new();
            row.insert("time".into(), json!(rfc2822(*at, "UTC")));
            for kind in &kinds {
                row.insert((*kind).to_owned(), counts.render(kind));
            }
            Value::Object(row)
        })
        .collect();
    Ok(json!({
        "start": rfc2822(first, "UTC"),
        "end": rfc2822(end, "UTC"),
        "resolution": resolution.name(),
        "stats": stats,
    }))
}

#[derive(Default)]
struct Counts {
    accepted_incoming: u64,
    accepted_outgoing: u64,
    delivered_smtp: u64,
    delivered_http: u64,
    temporary: BTreeMap<String, u64>,
    permanent: BTreeMap<String, u64>,
    stored: u64,
    opened: u64,
    opened_unique: u64,
    clicked: u64,
    clicked_unique: u64,
    unsubscribed: u64,
    complained: u64,
}

impl Counts {
    fn add<'a>(&mut self, event: &'a Event, bucket: i64, unique: &mut HashSet<(i64, &'a str, String)>) {
        let per_recipient = || {
            let recipient = event.message.recipients.get(event.recipient).map_or("", |r| r.address.as_str());
            format!("{}|{recipient}", event.message.message_id)
        };
        match event.kind() {
            "accepted" if event.extra().get("method").is_some_and(|m| m == "smtp") => self.accepted_incoming += 1,
            "accepted" => self.accepted_outgoing += 1,
            "delivered" if event.extra().get("delivery-status").is_none_or(|d| d["mx-host"].is_null()) => {
                self.delivered_http += 1
            }
            "delivered" => self.delivered_smtp += 1,
            "failed" => {
                let extra = event.extra();
                let reason = extra.get("reason").and_then(Value::as_str).unwrap_or("generic").to_owned();
                let table = if event.severity == Some("temporary") { &mut self.temporary } else { &mut self.permanent };
                *table.entry(reason).or_default() += 1;
            }
            "stored" => self.stored += 1,
            "opened" => {
                self.opened += 1;
                if unique.insert((bucket, "opened", per_recipient())) {
                    self.opened_unique += 1;
                }
            }
            "clicked" => {
                self.clicked += 1;
                if unique.insert((bucket, "clicked", per_recipient())) {
                    self.clicked_unique += 1;
                }
            }
            "unsubscribed" => self.unsubscribed += 1,
            "complained" => self.complained += 1,
            _ => {}
        }
    }

    fn render(&self, kind: &str) -> Value {
        match kind {
            "accepted" => json!({"incoming": self.accepted_incoming, "outgoing": self.accepted_outgoing,
                                 "total": self.accepted_incoming + self.accepted_outgoing}),
            "delivered" => json!({"smtp": self.delivered_smtp, "http": self.delivered_http, "optimized": 0,
                                  "total": self.delivered_smtp + self.delivered_http}),
            "failed" => {
                let table = |counts: &BTreeMap<String, u64>, names: &[&str]| {
                    let mut map: Map<String, Value> = names.iter().map(|n| ((*n).to_owned(), json!(0))).collect();
                    for (reason, n) in counts {
                        map.insert(reason.clone(), json!(n));
                    }
                    map.insert("total".into(), json!(counts.values().sum::<u64>()));
                    Value::Object(map)
                };
                json!({
                    "temporary": table(&self.temporary, &["espblock"]),
                    "permanent": table(&self.permanent, &["suppress-bounce", "suppress-unsubscribe", "suppress-complaint", "bounce", "delayed-bounce", "webhook", "optimized"]),
                })
            }
            "stored" => json!({"total": self.stored}),
            "opened" => json!({"total": self.opened, "unique": self.opened_unique}),
            "clicked" => json!({"total": self.clicked, "unique": self.clicked_unique}),
            "unsubscribed" => json!({"total": self.unsubscribed}),
            "complained" => json!({"total": self.complained}),
            _ => Value::Null,
        }
    }
}
