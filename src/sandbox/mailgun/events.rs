//! The event log of one region: every event in time order, filtered and paged as
//! `GET /v3/{domain}/events` does — filter fields with `OR`/`NOT`, `begin`/`end`/`ascending`,
//! `limit` up to 300, and absolute `paging` URLs whose last segment is a token that keeps the
//! filters and the position, so following `next` past the end gives an empty page.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use serde_json::{json, Value};

use super::dates::parse_time;
use super::errors::MailgunError;
use crate::sandbox::request::Query;

/// Mailgun's maximum page size; also the default here (the documented default is unconfirmed).
pub const MAX_LIMIT: u64 = 300;
const DEFAULT_LIMIT: u64 = 100;

/// One event: its position (`ts_ms`, then `seq`) and its JSON.
#[derive(Clone, Debug)]
pub struct Event {
    pub seq: u64,
    pub ts_ms: i64,
    pub domain: String,
    pub body: Value,
}

impl Event {
    fn key(&self) -> (i64, u64) {
        (self.ts_ms, self.seq)
    }

    pub fn kind(&self) -> &str {
        self.body["event"].as_str().unwrap_or("")
    }
}

/// Every event of a region, sorted by time then arrival.
#[derive(Clone, Debug, Default)]
pub struct EventLog {
    events: Vec<Event>,
    next_seq: u64,
}

impl EventLog {
    /// Records an event (events processed late still land at their own time).
    pub fn push(&mut self, ts_ms: i64, domain: &str, body: Value) {
        self.next_seq += 1;
        let event = Event { seq: self.next_seq, ts_ms, domain: domain.to_owned(), body };
        let at = self.events.partition_point(|e| e.key() <= event.key());
        self.events.insert(at, event);
    }

    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.events.len()
    }

    /// Events of `domain` (all with `None`) from `from_ms` to `to_ms`.
    pub fn between<'a>(
        &'a self,
        domain: Option<&'a str>,
        from_ms: i64,
        to_ms: i64,
    ) -> impl Iterator<Item = &'a Event> + 'a {
        let start = self.events.partition_point(|e| e.ts_ms < from_ms);
        self.events[start..]
            .iter()
            .take_while(move |e| e.ts_ms <= to_ms)
            .filter(move |e| domain.is_none_or(|d| e.domain == d))
    }

    pub fn remove_domain(&mut self, domain: &str) {
        self.events.retain(|e| e.domain != domain);
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
        let lo = self.events.partition_point(|e| e.ts_ms < spec.from_ms);
        let hi = self.events.partition_point(|e| e.ts_ms <= spec.to_ms).max(lo);
        let range = &self.events[lo..hi];
        let wanted = |e: &&Event| e.domain == domain && spec.filters.iter().all(|f| f.matches(&e.body));
        // Forward in time from `from` (exclusive), or backward from `to` (exclusive).
        let forward_from =
            |p: (i64, u64)| range[range.partition_point(|e| e.key() <= p)..].iter().filter(wanted).take(limit);
        let backward_from =
            |p: (i64, u64)| range[..range.partition_point(|e| e.key() < p)].iter().rev().filter(wanted).take(limit);
        let page: Vec<&Event> = match (position, spec.ascending) {
            (Position::Nothing, _) => Vec::new(),
            (Position::Start, true) => range.iter().filter(wanted).take(limit).collect(),
            (Position::Start, false) => range.iter().rev().filter(wanted).take(limit).collect(),
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
            "items": page.iter().map(|e| e.body.clone()).collect::<Vec<_>>(),
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

    /// Whether `event` passes; compares without allocating, since a query runs this over the
    /// whole log while holding the region's lock.
    fn matches(&self, event: &Value) -> bool {
        fn text(v: &Value) -> &str {
            v.as_str().unwrap_or("")
        }
        fn strings(v: &Value) -> Vec<&str> {
            v.as_array().map_or_else(Vec::new, |a| a.iter().map(text).collect())
        }
        let candidates: Vec<&str> = match self.field {
            "event" => vec![text(&event["event"])],
            "recipient" => vec![text(&event["recipient"])],
            "recipients" => match event["message"]["recipients"].as_array() {
                Some(_) => strings(&event["message"]["recipients"]),
                None => vec![text(&event["recipient"])],
            },
            "from" => vec![text(&event["message"]["headers"]["from"])],
            "to" => vec![text(&event["message"]["headers"]["to"])],
            "subject" => vec![text(&event["message"]["headers"]["subject"])],
            "message-id" => vec![text(&event["message"]["headers"]["message-id"])],
            "tags" => strings(&event["tags"]),
            "severity" => vec![text(&event["severity"])],
            "list" => vec![text(&event["mailing-list"]["address"])],
            "attachment" => event["message"]["attachments"]
                .as_array()
                .map_or_else(Vec::new, |a| a.iter().map(|x| text(&x["filename"])).collect()),
            "size" => {
                return self
                    .any_of
                    .iter()
                    .any(|(neg, want)| size_matches(event["message"]["size"].as_u64(), want) != *neg)
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
