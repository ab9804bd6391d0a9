//! Records of one kind, newest first, paged as EasyPost pages every list: `page_size` (default
//! 20, at most 100), `before_id` (older than that record), `after_id` (newer),
//! `start_datetime` / `end_datetime`, and `has_more`. Each store keeps at most a cap of records,
//! the oldest going first, so a sandbox under load stays bounded.
//!
//! A record is kept as its compact JSON text (a `serde_json::Map` with `preserve_order` costs
//! about ten times its text) and parsed when read: a page of records is cheap to parse. Changes
//! go through [`Store::update`]. Each record may carry a short tag (a shipment's or tracker's
//! tracking code) that lists and look-ups filter on without parsing the record.

use std::collections::{BTreeMap, HashMap};
use std::ops::Bound;

use serde_json::{json, Map, Value};

use super::errors::EpError;
use crate::sandbox::clock::parse_rfc3339;
use crate::sandbox::request::Query;

pub type Record = Map<String, Value>;

/// What a store tags each record with (see [`Store::tagged`]).
type Tagger = fn(&Record) -> Option<String>;

#[derive(Clone, Debug)]
pub struct Store {
    records: HashMap<Box<str>, Entry>,
    order: BTreeMap<Key, Box<str>>,
    seq: u64,
    cap: usize,
    tagger: Option<Tagger>,
}

#[derive(Clone, Debug)]
struct Entry {
    key: Key,
    text: Box<str>,
    tag: Option<Box<str>>,
}

/// Creation time, then arrival: the order records were created in.
type Key = (i64, u64);

/// A stored record as lists and look-ups see it: its id, its tag, and the record on demand.
#[derive(Clone, Copy)]
pub struct Stored<'a> {
    id: &'a str,
    entry: &'a Entry,
}

impl<'a> Stored<'a> {
    pub fn id(&self) -> &'a str {
        self.id
    }

    /// The tag the store's tagger gave the record (`None` without one).
    pub fn tag(&self) -> Option<&'a str> {
        self.entry.tag.as_deref()
    }

    /// The record, parsed.
    pub fn record(&self) -> Record {
        parse(&self.entry.text)
    }
}

/// A record from its stored text (which the store wrote itself, so it always parses).
/// A record the cap pushed out, still as its text: most kinds own nothing else, so most are
/// never parsed again.
pub struct Evicted {
    pub id: String,
    text: Box<str>,
}

impl Evicted {
    pub fn record(&self) -> Record {
        parse(&self.text)
    }
}

fn parse(text: &str) -> Record {
    serde_json::from_str(text).unwrap_or_default()
}

fn compact(record: &Record) -> Box<str> {
    serde_json::to_string(record).unwrap_or_default().into_boxed_str()
}

impl Store {
    pub fn new(cap: usize) -> Store {
        Store { records: HashMap::new(), order: BTreeMap::new(), seq: 0, cap: cap.max(1), tagger: None }
    }

    /// A store whose records carry the tag `tagger` gives them, kept up to date on each change.
    pub fn tagged(cap: usize, tagger: Tagger) -> Store {
        Store { tagger: Some(tagger), ..Store::new(cap) }
    }

    fn entry_parts(&self, record: &Record) -> (Box<str>, Option<Box<str>>) {
        (compact(record), self.tagger.and_then(|t| t(record)).map(String::into_boxed_str))
    }

    /// Adds a record created at `created_ms` (or replaces the record of that id, which keeps its
    /// place); returns the records the cap pushed out, oldest first.
    pub fn insert(&mut self, id: String, created_ms: i64, record: &Record) -> Vec<Evicted> {
        let (text, tag) = self.entry_parts(record);
        if let Some(entry) = self.records.get_mut(id.as_str()) {
            entry.text = text;
            entry.tag = tag;
            return Vec::new();
        }
        self.seq += 1;
        let key = (created_ms, self.seq);
        let id: Box<str> = id.into_boxed_str();
        self.order.insert(key, id.clone());
        self.records.insert(id, Entry { key, text, tag });
        let mut evicted = Vec::new();
        while self.records.len() > self.cap {
            let Some((_, old)) = self.order.pop_first() else { break };
            if let Some(entry) = self.records.remove(&old) {
                evicted.push(Evicted { id: old.into_string(), text: entry.text });
            }
        }
        evicted
    }

    /// The record, parsed.
    pub fn get(&self, id: &str) -> Option<Record> {
        self.records.get(id).map(|e| parse(&e.text))
    }

    /// Changes a record in place: `change` gets it parsed, and what it leaves is stored.
    pub fn update<T>(&mut self, id: &str, change: impl FnOnce(&mut Record) -> T) -> Option<T> {
        let tagger = self.tagger;
        let entry = self.records.get_mut(id)?;
        let mut record = parse(&entry.text);
        let out = change(&mut record);
        entry.text = compact(&record);
        entry.tag = tagger.and_then(|t| t(&record)).map(String::into_boxed_str);
        Some(out)
    }

    pub fn remove(&mut self, id: &str) -> Option<Record> {
        let entry = self.records.remove(id)?;
        self.order.remove(&entry.key);
        Some(parse(&entry.text))
    }

    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.records.len()
    }

    /// Every record, oldest first.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = Stored<'_>> {
        self.order.values().filter_map(|id| self.records.get(id).map(|entry| Stored { id, entry }))
    }

    /// One page of ids, newest first, that `keep` accepts, and whether more follow.
    pub fn page(&self, query: &Query, keep: impl Fn(Stored<'_>) -> bool) -> Result<(Vec<String>, bool), EpError> {
        let paging = Paging::read(query)?;
        // Only the keys inside every bound are walked: a page deep in a long list costs a page.
        let mut upper = paging.end_ms.map(|e| (e, 0));
        // A cursor naming a record this account does not have is answered with an empty page:
        // recorded traffic shows EasyPost answering such pages 200, never 422.
        let key_of = |id: &str| self.records.get(id).map(|e| e.key);
        if let Some(id) = paging.before_id.as_deref() {
            let Some(key) = key_of(id) else { return Ok((Vec::new(), false)) };
            upper = Some(upper.map_or(key, |u| u.min(key)));
        }
        let mut lower = paging.start_ms.map_or(Bound::Unbounded, |s| Bound::Included((s, 0)));
        if let Some(id) = paging.after_id.as_deref() {
            let Some(key) = key_of(id) else { return Ok((Vec::new(), false)) };
            let above_start = match lower {
                Bound::Included(start) => key >= start,
                _ => true,
            };
            if above_start {
                lower = Bound::Excluded(key);
            }
        }
        let empty = match (lower, upper) {
            (Bound::Included(l), Some(u)) => l >= u,
            (Bound::Excluded(l), Some(u)) => l >= u,
            _ => false,
        };
        let mut ids = Vec::new();
        let mut has_more = false;
        if empty {
            return Ok((ids, has_more));
        }
        let candidates = self.order.range((lower, upper.map_or(Bound::Unbounded, Bound::Excluded))).rev();
        for (_, id) in candidates {
            let Some(entry) = self.records.get(id) else { continue };
            if !keep(Stored { id, entry }) {
                continue;
            }
            if ids.len() == paging.page_size {
                has_more = true;
                break;
            }
            ids.push(id.to_string());
        }
        Ok((ids, has_more))
    }
}

/// The paging parameters every list takes.
struct Paging {
    page_size: usize,
    before_id: Option<String>,
    after_id: Option<String>,
    start_ms: Option<i64>,
    end_ms: Option<i64>,
}

impl Paging {
    fn read(query: &Query) -> Result<Paging, EpError> {
        let page_size = match query.get("page_size").map(str::trim).filter(|s| !s.is_empty()) {
            None => 20,
            Some(text) => match text.parse::<i64>() {
                // Larger pages are cut to the maximum, as EasyPost's lists do.
                Ok(n) if n >= 1 => usize::try_from(n.min(100)).unwrap_or(100),
                _ => {
                    return Err(EpError::invalid(
                        "page_size",
                        format!("must be a whole number from 1 to 100, not {text:?}"),
                    ))
                }
            },
        };
        let time = |name: &str| -> Result<Option<i64>, EpError> {
            match query.get(name).map(str::trim).filter(|s| !s.is_empty()) {
                None => Ok(None),
                Some(text) => parse_datetime(text).map(Some).ok_or_else(|| {
                    EpError::invalid(name, format!("must be an ISO 8601 date or date-time, not {text:?}"))
                }),
            }
        };
        let start_ms = time("start_datetime")?;
        let end_ms = time("end_datetime")?;
        if let (Some(s), Some(e)) = (start_ms, end_ms) {
            if s > e {
                return Err(EpError::invalid("start_datetime", "must not be after end_datetime"));
            }
        }
        let id = |name: &str| query.get(name).map(str::trim).filter(|s| !s.is_empty()).map(str::to_owned);
        Ok(Paging { page_size, before_id: id("before_id"), after_id: id("after_id"), start_ms, end_ms })
    }
}

/// An ISO 8601 date-time, or a bare date (its midnight, UTC).
pub fn parse_datetime(text: &str) -> Option<i64> {
    parse_rfc3339(text).or_else(|| parse_rfc3339(&format!("{text}T00:00:00Z")))
}

/// `{plural: [...], "has_more": bool}`.
pub fn envelope(plural: &str, records: Vec<Value>, has_more: bool) -> Value {
    json!({plural: records, "has_more": has_more})
}

#[cfg(test)]
mod tests {
    use super::*;

    fn query(text: &str) -> Query {
        Query::parse(text).expect("query")
    }

    fn store(n: i64) -> Store {
        let mut store = Store::new(1000);
        for i in 0..n {
            let mut record = Record::new();
            record.insert("n".into(), json!(i));
            store.insert(format!("id{i}"), 1_000 * i, &record);
        }
        store
    }

    #[test]
    fn pages_walk_back_with_before_id_until_has_more_is_false() {
        let store = store(7);
        let (first, more) = store.page(&query("page_size=3"), |_| true).unwrap();
        assert_eq!((first.as_slice(), more), (["id6", "id5", "id4"].map(String::from).as_slice(), true));
        let (second, more) = store.page(&query("page_size=3&before_id=id4"), |_| true).unwrap();
        assert_eq!((second.as_slice(), more), (["id3", "id2", "id1"].map(String::from).as_slice(), true));
        let (third, more) = store.page(&query("page_size=3&before_id=id1"), |_| true).unwrap();
        assert_eq!((third.as_slice(), more), (["id0".to_owned()].as_slice(), false));
        let (newer, _) = store.page(&query("after_id=id4"), |_| true).unwrap();
        assert_eq!(newer, ["id6", "id5"]);
    }

    #[test]
    fn dates_filters_and_bad_values() {
        let store = store(5);
        let (ids, _) = store
            .page(&query("start_datetime=1970-01-01T00:00:01Z&end_datetime=1970-01-01T00:00:03Z"), |_| true)
            .unwrap();
        assert_eq!(ids, ["id2", "id1"]);
        let (even, _) = store.page(&query(""), |r| r.record()["n"].as_i64().unwrap() % 2 == 0).unwrap();
        assert_eq!(even, ["id4", "id2", "id0"]);
        assert!(store.page(&query("page_size=0"), |_| true).is_err());
        assert!(store.page(&query("page_size=ten"), |_| true).is_err());
        assert!(store.page(&query("start_datetime=yesterday"), |_| true).is_err());
        // A cursor naming no record of this account is an empty page, as EasyPost answers it.
        assert_eq!(store.page(&query("before_id=nope"), |_| true).unwrap(), (Vec::<String>::new(), false));
        assert_eq!(store.page(&query("after_id=nope"), |_| true).unwrap(), (Vec::<String>::new(), false));
        let (capped, _) = store.page(&query("page_size=500"), |_| true).unwrap();
        assert_eq!(capped.len(), 5);
    }

    #[test]
    fn the_cap_drops_the_oldest() {
        let mut store = Store::new(3);
        for i in 0..5 {
            let evicted = store.insert(format!("id{i}"), i, &Record::new());
            assert_eq!(evicted.len(), usize::from(i >= 3));
        }
        assert_eq!(store.len(), 3);
        assert!(store.get("id1").is_none());
        assert!(store.get("id4").is_some());
    }
}
