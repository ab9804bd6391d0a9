//! Reading values out of the index: a member by key, a record's field by path, a scalar as
//! text or number, and where a list response keeps its records. What the table's cells and
//! the views built from a page read, without a `serde_json::Value` of the page.

use std::borrow::Cow;

use serde_json::Value;

use super::{decode_string_into, JsonDoc, Kind, NodeId};

/// One value of a document: a cheap handle to read it by.
#[derive(Clone, Copy, Debug)]
pub struct Item<'d> {
    pub doc: &'d JsonDoc,
    pub id: NodeId,
}

impl<'d> Item<'d> {
    pub fn new(doc: &'d JsonDoc, id: NodeId) -> Item<'d> {
        Item { doc, id }
    }

    pub fn kind(self) -> Kind {
        self.doc.kind(self.id)
    }

    /// The member `key` of an object; `None` for anything else or when it is missing. Keys
    /// are compared as written where they hold no escape, which is nearly always.
    pub fn get(self, key: &str) -> Option<Item<'d>> {
        if !self.has_members() {
            return None;
        }
        let doc = self.doc;
        doc.children(self.id).find(|&child| is_member(doc, child, key)).map(|id| Item { doc, id })
    }

    /// [`Item::get`], looking first at the member in position `*hint`, and leaving there the
    /// position it was found at: the records of a page mostly write their keys in one order, so
    /// a column's value is found with one key compared, not one for each member before it (each
    /// a read from elsewhere in the body). An object that writes one key twice (which JSON
    /// leaves undefined) may give its later value here where `get` gives the first.
    pub fn get_hinted(self, key: &str, hint: &mut usize) -> Option<Item<'d>> {
        if !self.has_members() {
            return None;
        }
        let doc = self.doc;
        // Stepping to a member reads only the index, not the body.
        if let Some(child) = doc.children(self.id).nth(*hint).filter(|&child| is_member(doc, child, key)) {
            return Some(Item { doc, id: child });
        }
        let (at, id) = doc.children(self.id).enumerate().find(|&(_, child)| is_member(doc, child, key))?;
        *hint = at;
        Some(Item { doc, id })
    }

    /// Whether this is an object with a member, read from the index alone (its first child has
    /// a key): a lookup then never reads the body to learn what a value is.
    fn has_members(self) -> bool {
        self.doc.children(self.id).next().is_some_and(|child| self.doc.has_key(child))
    }

    /// The value at a path of member keys (`["message", "headers", "subject"]`).
    pub fn path<S: AsRef<str>>(self, path: &[S]) -> Option<Item<'d>> {
        path.iter().try_fold(self, |item, key| item.get(key.as_ref()))
    }

    /// [`Item::path`] with a hint per key ([`Item::get_hinted`]); `hints` is as long as `path`
    /// (a missing hint is position 0).
    pub fn path_hinted<S: AsRef<str>>(self, path: &[S], hints: &mut Vec<usize>) -> Option<Item<'d>> {
        if hints.len() < path.len() {
            hints.resize(path.len(), 0);
        }
        path.iter().zip(hints.iter_mut()).try_fold(self, |item, (key, hint)| item.get_hinted(key.as_ref(), hint))
    }

    /// The items of an array, or the values of an object's members, in order.
    pub fn children(self) -> impl Iterator<Item = Item<'d>> + 'd {
        let doc = self.doc;
        doc.children(self.id).map(move |id| Item { doc, id })
    }

    /// Members of an object or items of an array.
    pub fn len(self) -> usize {
        self.doc.child_count(self.id)
    }

    pub fn is_empty(self) -> bool {
        self.len() == 0
    }

    /// A string's text, unescaped; `None` for other kinds.
    pub fn as_str(self) -> Option<String> {
        self.str_prefix(usize::MAX).map(|(text, _)| text)
    }

    /// At most `max_chars` of a string's text, and whether it was cut: a cell needs only what
    /// fits, and a string can be megabytes long.
    pub fn str_prefix(self, max_chars: usize) -> Option<(String, bool)> {
        let mut text = String::new();
        let cut = self.push_str_prefix(&mut text, max_chars)?;
        Some((text, cut))
    }

    /// [`Item::str_prefix`] appended to `out` (no allocation of its own); whether it was cut.
    pub fn push_str_prefix(self, out: &mut String, max_chars: usize) -> Option<bool> {
        let start = self.doc.value_start(self.id);
        (self.kind() == Kind::String).then(|| decode_string_into(out, self.doc.body(), start + 1, max_chars, false))
    }

    /// A number, a boolean or `null` exactly as written; `None` for strings and containers.
    pub fn literal(self) -> Option<Cow<'d, str>> {
        match self.kind() {
            Kind::Number | Kind::Bool | Kind::Null => Some(String::from_utf8_lossy(self.doc.text(self.id))),
            _ => None,
        }
    }

    pub fn as_f64(self) -> Option<f64> {
        (self.kind() == Kind::Number).then(|| self.literal()?.parse().ok()).flatten()
    }

    pub fn as_i64(self) -> Option<i64> {
        (self.kind() == Kind::Number).then(|| self.literal()?.parse().ok()).flatten()
    }

    /// The value as a `serde_json::Value`, for code that works on one record (a form's
    /// values, a view of one shipment); never for a whole page.
    pub fn to_value(self) -> Value {
        serde_json::from_slice(self.doc.text(self.id)).unwrap_or(Value::Null)
    }
}

/// Where a list response keeps its records: the member holding them (`None` when the body is
/// the array itself) and the array.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordsAt {
    pub key: Option<String>,
    pub array: NodeId,
}

impl JsonDoc {
    /// The document's top-level value.
    pub fn root(&self) -> Item<'_> {
        Item { doc: self, id: NodeId::ROOT }
    }

    pub fn item(&self, id: NodeId) -> Item<'_> {
        Item { doc: self, id }
    }

    /// The records of a list response: the array itself, or the array member that holds them
    /// (`value` for AvaTax, `items` for Mailgun, the plural resource name for EasyPost, ...): a
    /// conventional name first, then the first array of objects, then a lone array member (a
    /// list of bare ids, TaxJar's `{"orders": ["123", ...]}`).
    pub fn records_at(&self) -> Option<RecordsAt> {
        let root = self.root();
        match root.kind() {
            Kind::Array => return Some(RecordsAt { key: None, array: NodeId::ROOT }),
            Kind::Object => {}
            _ => return None,
        }
        let found = |item: Item<'_>| RecordsAt { key: self.key(item.id), array: item.id };
        for key in super::RECORD_KEYS {
            if let Some(array) = root.get(key).filter(|i| i.kind() == Kind::Array) {
                return Some(found(array));
            }
        }
        let all_objects = |array: Item<'_>| array.children().all(|item| item.kind() == Kind::Object);
        if let Some(array) = root.children().find(|m| m.kind() == Kind::Array && all_objects(*m)) {
            return Some(found(array));
        }
        match (root.len(), root.children().next()) {
            (1, Some(only)) if only.kind() == Kind::Array => Some(found(only)),
            _ => None,
        }
    }

    /// Records built in code as one indexed array, the way a page that arrived is read (a
    /// jq filter's results, tests).
    pub fn from_values(values: &[Value]) -> Result<(JsonDoc, Vec<NodeId>), super::JsonError> {
        let doc = JsonDoc::parse(serde_json::to_vec(values).unwrap_or_default().into())?;
        let records = doc.children(NodeId::ROOT).collect();
        Ok((doc, records))
    }

    /// The records of an answer that keys them by name (`{"webhooks": {"delivered": {...}}}`):
    /// each member of the object at `member` as an object with its key under `name_field` first
    /// (a member that is no object is under `value`). `None` when there is no such object.
    pub fn keyed_records(&self, member: &str, name_field: &str) -> Option<Vec<Value>> {
        let object = self.root().get(member).filter(|item| item.kind() == Kind::Object)?;
        let records = object
            .children()
            .map(|item| {
                let mut record = serde_json::Map::new();
                record.insert(name_field.to_owned(), Value::String(self.key(item.id).unwrap_or_default()));
                match item.to_value() {
                    Value::Object(fields) => record.extend(fields.into_iter().filter(|(k, _)| k != name_field)),
                    other => {
                        record.insert("value".to_owned(), other);
                    }
                }
                Value::Object(record)
            })
            .collect();
        Some(records)
    }

    /// The records of a list response, in order.
    pub fn records(&self) -> Option<Vec<NodeId>> {
        let at = self.records_at()?;
        Some(self.children(at.array).collect())
    }
}

/// Whether `child` is the object member `key`. A member starts at its key's opening quote. Most
/// keys are told apart by their first byte; a key written with escapes starts with one or is a
/// plain match.
fn is_member(doc: &JsonDoc, child: NodeId, key: &str) -> bool {
    let body = doc.body().as_ref();
    let wanted = key.as_bytes();
    let raw = doc.start_offset(child) + 1;
    match body.get(raw) {
        Some(b'\\') => doc.key(child).as_deref() == Some(key),
        Some(&first) if wanted.first() == Some(&first) => {
            let end = raw + wanted.len();
            if body.get(raw..end) == Some(wanted) && body.get(end) == Some(&b'"') {
                return true;
            }
            // The same start, but an escape further on may still spell the key.
            let written = body.get(raw..).unwrap_or_default();
            let stop = memchr::memchr2(b'"', b'\\', written);
            stop.is_some_and(|at| written[at] == b'\\') && doc.key(child).as_deref() == Some(key)
        }
        Some(b'"') => wanted.is_empty(),
        _ => false,
    }
}
