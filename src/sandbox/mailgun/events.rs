//! The event log of one region: every event in time order, filtered and paged as
//! `GET /v3/{domain}/events` does — filter fields with `OR`/`NOT`, `begin`/`end`/`ascending`,
//! `limit` up to 300, and absolute `paging` URLs whose last segment is a token that keeps the
//! filters and the position, so following `next` past the end gives an empty page.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::Arc;

use serde_json::{json, Map, Value};

use super::dates::{epoch_seconds, parse_time};
use super::errors::MailgunError;
use super::messages::{MessageCore, Recipient};
use crate::sandbox::request::Query;

/// Mailgun's maximum page size; also the default here (the documented default is unconfirmed).
pub const MAX_LIMIT: u64 = 300;
const DEFAULT_LIMIT: u64 = 100;

/// One event, stored as its own fields beside the message's shared ones ([`MessageCore`]) and
/// rendered as Mailgun's JSON on read: a JSON tree per event cost ten times its text.
#[derive(Clone, Debug)]
pub struct Event {
    pub seq: u64,
    pub ts_ms: i64,
    pub message: Arc<MessageCore>,
    /// Index of the recipient in the message's recipients.
    pub recipient: usize,
    pub kind: &'static str,
    pub id: Box<str>,
    /// `permanent` or `temporary`, for failures.
    pub severity: Option<&'static str>,
    /// The fields this event adds to (or replaces in) what every event of the message shows, in
    /// order: a compact JSON object's text.
    pub extra: Option<Box<str>>,
    /// An `accepted` event of a send, whose `message.recipients` names its recipient.
    pub lists_recipient: bool,
    pub eu: bool,
}

impl Event {
    pub fn key(&self) -> (i64, u64) {
        (self.ts_ms, self.seq)
    }

    pub fn kind(&self) -> &str {
        self.kind
    }

    pub fn domain(&self) -> &str {
        &self.message.domain
    }

    fn recipient(&self) -> Option<&Recipient> {
        self.message.recipients.get(self.recipient)
    }

    /// The fields this event adds, parsed.
    pub fn extra(&self) -> Map<String, Value> {
        match self.extra.as_deref().map(serde_json::from_str::<Value>) {
            Some(Ok(Value::Object(map))) => map,
            _ => Map::new(),
        }
    }

    /// Sets the fields this event adds (a JSON object; anything else is ignored).
    pub fn set_extra(&mut self, extra: &Value) {
        if let Some(severity) = extra.get("severity").and_then(Value::as_str) {
            self.severity = match severity {
                "permanent" => Some("permanent"),
                "temporary" => Some("temporary"),
                _ => None,
            };
        }
        if extra.as_object().is_some_and(|m| !m.is_empty()) {
            self.extra = Some(extra.to_string().into_boxed_str());
        }
    }

    /// The event as `GET /v3/{domain}/events` and webhooks give it.
    pub fn body(&self) -> Value {
        let message = &*self.message;
        let (address, list, vars) = match self.recipient() {
            Some(r) => (r.address.as_str(), r.list.as_deref(), Some(&r.vars)),
            None => ("", None, None),
        };
        let recipient_domain = address.rsplit_once('@').map_or("", |(_, d)| d).to_ascii_lowercase();
        let level = match self.kind {
            "failed" => "error",
            _ => "info",
        };
        let mut body = json!({
            "id": self.id,
            "event": self.kind,
            "timestamp": epoch_seconds(self.ts_ms),
            "log-level": level,
            "recipient": address,
            "recipient-domain": recipient_domain,
            "recipient-provider": provider(&recipient_domain),
            "envelope": {"sender": message.sender(), "transport": "smtp", "targets": address, "sending-ip": "127.0.0.1"},
            "flags": {"is-authenticated": message.method == "http", "is-routed": message.method == "smtp", "is-test-mode": message.testmode,
                      "is-system-test": false, "is-amp": false, "is-encrypted": false},
            "message": {
                "headers": {"to": message.to_header, "message-id": message.message_id, "from": message.from, "subject": message.subject},
                "attachments": message.attachments.iter().map(|(name, content_type, size)| json!({"filename": name, "content-type": content_type, "size": size})).collect::<Vec<_>>(),
                "size": message.size,
            },
            "tags": message.tags,
            "user-variables": message.user_variables,
            "campaigns": [],
        });
        if let Some(map) = body.as_object_mut() {
            if matches!(self.kind, "accepted" | "delivered" | "failed" | "stored") {
                let region = if self.eu { "europe-west1" } else { "us-east4" };
                map.insert(
                    "storage".into(),
                    json!({"key": message.key, "url": message.storage_url, "region": region, "env": "production"}),
                );
            }
            if let Some(list) = list {
                map.insert("mailing-list".into(), json!({"address": list, "list-id": list, "sid": ""}));
            }
            if let Some(vars) = vars.filter(|v| !v.is_empty()) {
                map.insert("recipient-variables".into(), Value::Object(vars.clone()));
            }
            map.extend(self.extra());
            if self.lists_recipient {
                if let Some(m) = map.get_mut("message").and_then(Value::as_object_mut) {
                    m.insert("recipients".into(), json!([address]));
                }
            }
        }
        body
    }
}

fn provider(domain: &str) -> &'static str {
    match domain {
        "gmail.com" | "googlemail.com" => "Gmail",
        "yahoo.com" => "Yahoo",
        "outlook.com" | "hotmail.com" | "live.com" => "Microsoft",
        _ => "Other",
    }
}

type Key = (i64, u64);

/// Every event of a region, by time then arrival. Page tokens hold an event's key, so they stay
/// valid while older events go.
#[derive(Clone, Debug, Default)]
pub struct EventLog {
    events: BTreeMap<Key, Event>,
    next_seq: u64,
}

impl EventLog {
    /// Records an event at its own time (events processed late still land there); returns its
    /// key.
    pub fn push(&mut self, mut event: Event) -> Key {
        self.next_seq += 1;
        event.seq = self.next_seq;
        let key = event.key();
        self.events.insert(key, event);
        key
    }

    pub fn len(&self) -> usize {
        self.events.len()
    }

    pub fn remove(&mut self, key: Key) -> Option<Event> {
        self.events.remove(&key)
    }

    /// Drops the events stamped before `horizon_ms`.
    pub fn expire(&mut self, horizon_ms: i64) {
        while self.events.first_key_value().is_some_and(|(k, _)| k.0 < horizon_ms) {
            self.events.pop_first();
        }
    }

    /// The events with keys between `start` and `end`, oldest first.
    fn range(&self, start: Bound<Key>, end: Bound<Key>) -> impl DoubleEndedIterator<Item = &Event> {
        let valid = match (start, end) {
            (Bound::Included(s), Bound::Included(e)) => s <= e,
            (Bound::Included(s) | Bound::Excluded(s), Bound::Included(e) | Bound::Excluded(e)) => s < e,
            _ => true,
        };
        valid.then(|| self.events.range((start, end)).map(|(_, e)| e)).into_iter().flatten()
    }

    /// Events of `domain` (all with `None`) from `from_ms` to `to_ms`.
    pub fn between<'a>(
        &'a self,
        domain: Option<&'a str>,
        from_ms: i64,
        to_ms: i64,
    ) -> impl Iterator<Item = &'a Event> + 'a {
        self.range(Bound::Included((from_ms, 0)), Bound::Included((to_ms, u64::MAX)))
            .filter(move |e| domain.is_none_or(|d| e.domain() == d))
    }

    pub fn remove_domain(&mut self, domain: &str) {
        self.events.retain(|_, e| e.domain() != domain);
    }

    /// One page of `GET /v3/{domain}/events` or of a page URL (`token`). `base` is the absolute
    /// URL of the domain's events.
    pub fn page(
        &self,
        domain: &str,
        query: &Query,
        token: Option<&str>,
        base: &str,
        now_ms: i64,
    ) -> Result<Value, MailgunError> {
        let (query, position) = match token {
            None => (query.clone(), Position::Start),
            Some(token) => decode_token(token)?,
        };
        let spec = Spec::parse(&query, now_ms)?;
        let limit = usize::try_from(spec.limit).unwrap_or(usize::MAX);
        // The events in range, walked from the page's starting point without collecting the
        // rest: a query holds the region's lock, and the first page should cost one page.
        let (lo, hi) = ((spec.from_ms, 0), (spec.to_ms, u64::MAX));
        let wanted = |e: &&Event| e.domain() == domain && spec.filters.iter().all(|f| f.matches(e));
        // Forward in time from `p` (exclusive), or backward from it (exclusive).
        let forward_from = |p: Key| {
            let start = if p < lo { Bound::Included(lo) } else { Bound::Excluded(p) };
            self.range(start, Bound::Included(hi)).filter(wanted).take(limit)
        };
        let backward_from = |p: Key| {
            let end = if p > hi { Bound::Included(hi) } else { Bound::Excluded(p) };
            self.range(Bound::Included(lo), end).rev().filter(wanted).take(limit)
        };
        let all = || self.range(Bound::Included(lo), Bound::Included(hi));
        let page: Vec<&Event> = match (position, spec.ascending) {
            (Position::Nothing, _) => Vec::new(),
            (Position::Start, true) => all().filter(wanted).take(limit).collect(),
            (Position::Start, false) => all().rev().filter(wanted).take(limit).collect(),
            (Position::After(p), true) => forward_from(p).collect(),
            (Position::After(p), false) => backward_from(p).collect(),
            (Position::Before(p), true) => {
                let mut page: Vec<&Event> = backward_from(p).collect();
                page.reverse();
                page
            }
            (Position::Before(p), false) => {
                let mut page: Vec<&Event> = forward_from(p).collect();
                page.reverse();
                page
            }
        };
        // An empty page keeps the position it was asked from, so `next` stays past the end.
        let (first, last) = match (page.first(), page.last(), position) {
            (Some(f), Some(l), _) => (Some(f.key()), Some(l.key())),
            (_, _, Position::After(p) | Position::Before(p)) => (Some(p), Some(p)),
            _ => (None, None),
        };
        let next = encode_token(&query, last.map_or(Position::Nothing, Position::After));
        let previous = encode_token(&query, first.map_or(Position::Nothing, Position::Before));
        // Before a point past the end of the walk: the last `limit` events.
        let end = if spec.ascending { (i64::MAX, u64::MAX) } else { (i64::MIN, 0) };
        Ok(json!({
            "items": page.iter().map(|e| e.body()).collect::<Vec<_>>(),
            "paging": {
                "first": format!("{base}/{}", encode_token(&query, Position::Start)),
                "next": format!("{base}/{next}"),
                "previous": format!("{base}/{previous}"),
                "last": format!("{base}/{}", encode_token(&query, Position::Before(end))),
            }
        }))
    }
}

/// Where a page starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Position {
    Start,
    /// Strictly after this event in display order.
    After((i64, u64)),
    /// Strictly before it.
    Before((i64, u64)),
    /// Beyond an empty result: nothing.
    Nothing,
}

fn encode_token(query: &Query, position: Position) -> String {
    let pairs: Vec<[&str; 2]> = query.pairs.iter().map(|(k, v)| [k.as_str(), v.as_str()]).collect();
    let position = match position {
        Position::Start => json!(["s"]),
        Position::After((t, s)) => json!(["a", t, s]),
        Position::Before((t, s)) => json!(["b", t, s]),
        Position::Nothing => json!(["n"]),
    };
    URL_SAFE_NO_PAD.encode(json!({"q": pairs, "p": position}).to_string())
}

fn decode_token(token: &str) -> Result<(Query, Position), MailgunError> {
    let bad = || MailgunError::bad_request(format!("Invalid page token: {token}"));
    let bytes = URL_SAFE_NO_PAD.decode(token.trim()).map_err(|_| bad())?;
    let value: Value = serde_json::from_slice(&bytes).map_err(|_| bad())?;
    let pairs = value["q"]
        .as_array()
        .ok_or_else(bad)?
        .iter()
        .map(|p| match (p[0].as_str(), p[1].as_str()) {
            (Some(k), Some(v)) => Ok((k.to_owned(), v.to_owned())),
            _ => Err(bad()),
        })
        .collect::<Result<Vec<_>, _>>()?;
    let p = &value["p"];
    let at =
        || -> Result<(i64, u64), MailgunError> { Ok((p[1].as_i64().ok_or_else(bad)?, p[2].as_u64().ok_or_else(bad)?)) };
    let position = match p[0].as_str() {
        Some("s") => Position::Start,
        Some("n") => Position::Nothing,
        Some("a") => Position::After(at()?),
        Some("b") => Position::Before(at()?),
        _ => return Err(bad()),
    };
    Ok((Query { pairs }, position))
}

/// What a query asks for.
struct Spec {
    from_ms: i64,
    to_ms: i64,
    ascending: bool,
    limit: u64,
    filters: Vec<Filter>,
}

impl Spec {
    fn parse(query: &Query, now_ms: i64) -> Result<Spec, MailgunError> {
        let time = |name: &str| {
            query
                .get(name)
                .map(|v| parse_time(v).ok_or_else(|| MailgunError::bad_request(format!("Invalid {name} value: {v}"))))
                .transpose()
        };
        let (begin, end) = (time("begin")?, time("end")?);
        let ascending = match query.get("ascending") {
            Some(v) => super::parse_bool(v)
                .ok_or_else(|| MailgunError::bad_request(format!("Invalid ascending value: {v}")))?,
            None => matches!((begin, end), (Some(b), Some(e)) if b < e),
        };
        // `begin` is where the walk starts: with both ends the range is between them; with only
        // `begin`, everything from it in the walk's direction.
        let (from_ms, to_ms) = match (begin, end) {
            (Some(b), Some(e)) => (b.min(e), b.max(e)),
            (Some(b), None) if ascending => (b, i64::MAX),
            (Some(b), None) => (i64::MIN, b),
            (None, Some(e)) => (i64::MIN, e),
            (None, None) => (i64::MIN, i64::MAX),
        };
        let _ = now_ms;
        let limit = match query.get("limit") {
            None => DEFAULT_LIMIT,
            Some(v) => match v.trim().parse::<u64>() {
                Ok(n) if n > MAX_LIMIT => {
                    return Err(MailgunError::bad_request(format!(
                        "The 'limit' parameter can't be larger than {MAX_LIMIT}"
                    )))
                }
                Ok(n) if n >= 1 => n,
                _ => return Err(MailgunError::bad_request(format!("Invalid limit value: {v}"))),
            },
        };
        let mut filters = Vec::new();
        for field in FIELDS {
            let values: Vec<&str> = query.all(field).filter(|v| !v.trim().is_empty()).collect();
            if !values.is_empty() {
                filters.push(Filter::parse(field, &values)?);
            }
        }
        Ok(Spec { from_ms, to_ms, ascending, limit, filters })
    }
}

const FIELDS: [&str; 12] = [
    "event",
    "recipient",
    "recipients",
    "from",
    "to",
    "subject",
    "message-id",
    "tags",
    "severity",
    "list",
    "attachment",
    "size",
];

/// One filter field: alternatives (`a OR b`, or the field repeated), each maybe negated.
struct Filter {
    field: &'static str,
    any_of: Vec<(bool, String)>,
}

impl Filter {
    fn parse(field: &'static str, values: &[&str]) -> Result<Filter, MailgunError> {
        let mut any_of = Vec::new();
        for value in values {
            for alternative in
                value.split(" OR ").flat_map(|v| if field == "event" { v.split(',').collect() } else { vec![v] })
            {
                let alternative = alternative.trim().trim_matches('"');
                let (negated, text) = match alternative.strip_prefix("NOT ") {
                    Some(rest) => (true, rest.trim().trim_matches('"')),
                    None => (false, alternative),
                };
                if text.is_empty() {
                    return Err(MailgunError::bad_request(format!("Invalid filter expression for {field}: {value}")));
                }
                any_of.push((negated, text.to_ascii_lowercase()));
            }
        }
        Ok(Filter { field, any_of })
    }

    /// Whether `event` passes; compares without rendering the event or allocating strings,
    /// since a query runs this over the whole log while holding the region's lock.
    fn matches(&self, event: &Event) -> bool {
        let message = &*event.message;
        let recipient = event.recipient().map_or("", |r| r.address.as_str());
        let candidates: Vec<&str> = match self.field {
            "event" => vec![event.kind],
            // `message.recipients` lists the recipient where it is given, else the recipient.
            "recipient" | "recipients" => vec![recipient],
            "from" => vec![message.from.as_str()],
            "to" => vec![message.to_header.as_str()],
            "subject" => vec![message.subject.as_str()],
            "message-id" => vec![message.message_id.as_str()],
            "tags" => message.tags.iter().map(String::as_str).collect(),
            "severity" => vec![event.severity.unwrap_or("")],
            "list" => vec![event.recipient().and_then(|r| r.list.as_deref()).unwrap_or("")],
            "attachment" => message.attachments.iter().map(|(name, _, _)| name.as_str()).collect(),
            "size" => {
                let size = u64::try_from(message.size).ok();
                return self.any_of.iter().any(|(neg, want)| size_matches(size, want) != *neg);
            }
            _ => Vec::new(),
        };
        // Headers match when they contain the text (a From holds a name and an address).
        let contains = matches!(self.field, "from" | "to" | "subject");
        let hit = |want: &str| {
            candidates.iter().any(|c| {
                if contains {
                    c.len() >= want.len()
                        && c.as_bytes().windows(want.len()).any(|w| w.eq_ignore_ascii_case(want.as_bytes()))
                } else {
                    c.eq_ignore_ascii_case(want)
                }
            })
        };
        let mut positives = self.any_of.iter().filter(|(n, _)| !n).peekable();
        let any_positive = positives.peek().is_some();
        (!any_positive || positives.any(|(_, w)| hit(w)))
            && self.any_of.iter().filter(|(n, _)| *n).all(|(_, w)| !hit(w))
    }
}

/// `size` filters: `>10000`, `<500` or an exact byte count.
fn size_matches(size: Option<u64>, want: &str) -> bool {
    let Some(size) = size else {
        return false;
    };
    let parse = |s: &str| s.trim().parse::<u64>().ok();
    match want.as_bytes().first() {
        Some(b'>') => parse(&want[1..]).is_some_and(|n| size > n),
        Some(b'<') => parse(&want[1..]).is_some_and(|n| size < n),
        _ => parse(want).is_some_and(|n| size == n),
    }
}
