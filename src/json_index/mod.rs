//! A flat index over a JSON body: what the inspector's tree, the browser's table and
//! `opsdeck call -o table` all read a response through, so no view holds a DOM of it.
//!
//! Responses can be tens of megabytes, and a DOM of `serde_json::Value` costs about 14 times the
//! body. Instead one iterative pass validates the body (RFC 8259) and records a 16-byte [`Node`]
//! per value in document order. The body bytes stay the only copy of the text: keys and values
//! are decoded only when they are read. The index is immutable once built, so one `Arc` of it
//! is shared by every view of a response, and building it can run on any thread ([`Watch`]
//! reports its progress and cancels it).
//!
//! No terminal code lives here.

use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use bytes::Bytes;

mod item;
mod parse;
#[cfg(test)]
mod tests;

pub use item::Item;
use parse::Parser;

/// Deepest nesting accepted. The parser is iterative, but consumers that recurse (pretty
/// printing, serde) should never meet a pathological document.
pub const MAX_DEPTH: usize = 512;

/// Largest body the index can address: offsets are `u32` so that a node stays at 16 bytes.
pub const MAX_BODY_LEN: usize = u32::MAX as usize;

/// The members that hold a list response's records, by convention, tried first: by
/// [`JsonDoc::records_at`] and by the client's pagination (`client::pagination::records`), so a
/// page is read the same way wherever it is read.
pub const RECORD_KEYS: [&str; 4] = ["value", "items", "data", "results"];

const NO_PARENT: u32 = u32::MAX;

/// Identifies a value of a [`JsonDoc`] by its position in document order, so ids compare in
/// the order lines are drawn; the root is [`NodeId::ROOT`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NodeId(pub(crate) u32);

impl NodeId {
    /// The document's top-level value.
    pub const ROOT: NodeId = NodeId(0);

    /// The position in document order, for callers that keep per-node data in a `Vec`.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// One value of the document. Only offsets and indices: the text stays in the body.
#[derive(Clone, Copy, Debug)]
struct Node {
    /// First byte of the node: the key's opening quote for object members, else the value's
    /// first byte. Including the key makes a search hit in a key map to its member.
    start: u32,
    /// One past the last node of this subtree, i.e. the next sibling when there is one.
    next: u32,
    /// The enclosing container, `NO_PARENT` for the root.
    parent: u32,
    /// Members or items of a container (0 for scalars), and [`MEMBER`] when the node is an
    /// object's member: read through [`Node::children`] and [`Node::is_member`].
    count: u32,
}

/// The bit of [`Node::count`] that marks an object's member (a node with a key). A count never
/// reaches it: every value takes at least one byte of a body of at most 4 GiB, and a container
/// two, so there are fewer than 2^31 of them.
pub(crate) const MEMBER: u32 = 1 << 31;

impl Node {
    fn children(self) -> u32 {
        self.count & !MEMBER
    }

    fn is_member(self) -> bool {
        self.count & MEMBER != 0
    }
}

const _: () = assert!(std::mem::size_of::<Node>() == 16);

/// What a value is, read from its first byte.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Object,
    Array,
    String,
    Number,
    Bool,
    Null,
}

impl Kind {
    /// Containers can be folded; scalars cannot.
    pub fn is_container(self) -> bool {
        matches!(self, Kind::Object | Kind::Array)
    }
}

/// What is wrong with a body that is not JSON; the position is in [`JsonError`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum JsonErrorKind {
    #[error("empty document")]
    Empty,
    #[error("body of {0} bytes is too large to index (the limit is 4 GiB)")]
    TooLarge(usize),
    #[error("valid so far but nested deeper than {MAX_DEPTH} levels")]
    TooDeep,
    #[error("invalid UTF-8")]
    InvalidUtf8,
    #[error("unexpected end of input, expected {0}")]
    UnexpectedEnd(&'static str),
    #[error("unexpected {found:?}, expected {expected}")]
    Unexpected { found: char, expected: &'static str },
    #[error("invalid escape in string")]
    InvalidEscape,
    #[error("unescaped control character in string")]
    ControlCharacter,
    #[error("invalid number")]
    InvalidNumber,
    #[error("unexpected {0:?} after the end of the document")]
    TrailingData(char),
    /// More values than the index may spend memory on for a body of this size (a body of tiny
    /// values such as `[0,0,0,…]` would need 8 times its size).
    #[error("more than {values} values: their index would need over {} MB, more than it may take for a body this size", .budget / MB)]
    TooManyValues { values: usize, budget: usize },
    /// [`Watch::cancel`] was called.
    #[error("cancelled")]
    Cancelled,
}

const MB: usize = 1024 * 1024;

/// The index may use this many times the body's size in nodes, plus [`BUDGET_SLACK`]: records
/// as APIs send them take about 1x; only bodies of tiny values need more.
pub const BUDGET_TIMES_BODY: usize = 2;
/// What the index may use on top of [`BUDGET_TIMES_BODY`], so small dense bodies always open.
pub const BUDGET_SLACK: usize = 64 * MB;

/// Nodes between two progress reports and cancel checks (about a megabyte of typical JSON).
const CHECK_EVERY: usize = 1 << 16;

/// Watches an index being built on another thread: how far it got, and a way to stop it.
#[derive(Debug, Default)]
pub struct Watch {
    done: AtomicUsize,
    cancelled: AtomicBool,
}

impl Watch {
    /// Bytes of the body indexed so far.
    pub fn done(&self) -> usize {
        self.done.load(Ordering::Relaxed)
    }

    /// Asks the build to stop; it returns [`JsonErrorKind::Cancelled`] within about a megabyte.
    pub fn cancel(&self) {
        self.cancelled.store(true, Ordering::Relaxed);
    }

    pub fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::Relaxed)
    }

    fn report(&self, done: usize) -> bool {
        self.done.store(done, Ordering::Relaxed);
        !self.is_cancelled()
    }
}

/// Why a body could not be indexed, and where, so the raw view can say which line to look at.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JsonError {
    pub kind: JsonErrorKind,
    /// Byte offset of the offending byte (the body length for an unexpected end).
    pub offset: usize,
    /// 1-based line of `offset`.
    pub line: usize,
    /// 1-based column of `offset`, in characters.
    pub column: usize,
}

impl fmt::Display for JsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            JsonErrorKind::TooLarge(_)
            | JsonErrorKind::Empty
            | JsonErrorKind::Cancelled
            | JsonErrorKind::TooManyValues { .. } => write!(f, "{}", self.kind),
            _ => write!(f, "{} at line {}, column {} (byte {})", self.kind, self.line, self.column, self.offset),
        }
    }
}

impl std::error::Error for JsonError {}

/// A validated JSON body and its flat index: the structure a huge response can be opened with
/// in a fraction of a second, without a DOM.
#[derive(Debug)]
pub struct JsonDoc {
    body: Bytes,
    nodes: Vec<Node>,
}

impl JsonDoc {
    /// Validates `body` as strict JSON and indexes it in one pass; the bytes are kept, not copied.
    pub fn parse(body: Bytes) -> Result<JsonDoc, JsonError> {
        JsonDoc::parse_watched(body, &Watch::default())
    }

    /// [`JsonDoc::parse`], reporting progress to `watch` and stopping when it is cancelled.
    pub fn parse_watched(body: Bytes, watch: &Watch) -> Result<JsonDoc, JsonError> {
        let budget = body.len().saturating_mul(BUDGET_TIMES_BODY).saturating_add(BUDGET_SLACK);
        JsonDoc::parse_within(body, watch, budget)
    }

    /// [`JsonDoc::parse_watched`] with the index allowed `budget` bytes of nodes.
    pub fn parse_within(body: Bytes, watch: &Watch, budget: usize) -> Result<JsonDoc, JsonError> {
        let fail = |b: &[u8], offset: usize, kind: JsonErrorKind| {
            let (line, column) = locate(b, offset);
            JsonError { kind, offset, line, column }
        };
        if body.len() > MAX_BODY_LEN {
            return Err(JsonError { kind: JsonErrorKind::TooLarge(body.len()), offset: 0, line: 0, column: 0 });
        }
        // Outside strings the grammar admits only ASCII, so a fast check of the whole body's
        // UTF-8 (made a stretch at a time as the parse goes, so it can be cancelled) plus the
        // parser's byte checks together validate every string. The error reported is whichever
        // comes first in the text.
        let mut parser = Parser {
            b: &body,
            pos: 0,
            // API records run about one value per 20 to 30 bytes; when that guess is short the
            // vector grows to what the rest of the body holds at the rate read so far (see
            // `Parser::more_nodes`), and is shrunk at the end only when much is left unused.
            nodes: Vec::with_capacity(body.len() / 32 + 16),
            open: Vec::new(),
            max_nodes: budget / std::mem::size_of::<Node>(),
            next_check: CHECK_EVERY,
            watch,
            utf8_checked: 0,
            utf8_error: None,
        };
        let result = parser.run();
        parser.check_utf8(body.len());
        let utf8_error = parser.utf8_error;
        let mut nodes = parser.nodes;
        match (result, utf8_error) {
            (Err((_, kind @ (JsonErrorKind::Cancelled | JsonErrorKind::TooManyValues { .. }))), _) => {
                Err(JsonError { kind, offset: 0, line: 0, column: 0 })
            }
            (Err((offset, _)), Some(bad)) if bad <= offset => Err(fail(&body, bad, JsonErrorKind::InvalidUtf8)),
            (Err((offset, kind)), _) => Err(fail(&body, offset, kind)),
            (Ok(()), Some(bad)) => Err(fail(&body, bad, JsonErrorKind::InvalidUtf8)),
            (Ok(()), None) => {
                watch.report(body.len());
                // Shrinking copies the nodes (a 50 MB page's are 27 MB): worth it only for
                // room that would sit unused beside them for as long as the page is shown.
                if nodes.capacity() - nodes.len() > nodes.len() / 16 {
                    nodes.shrink_to_fit();
                }
                Ok(JsonDoc { body, nodes })
            }
        }
    }

    /// The body the index points into, for the raw view and for copying.
    pub fn body(&self) -> &Bytes {
        &self.body
    }

    /// How many values the document holds (containers and scalars).
    pub fn node_count(&self) -> usize {
        self.nodes.len()
    }

    /// Memory owned by the index itself, not counting the body, for the benchmark report.
    pub fn heap_bytes(&self) -> usize {
        self.nodes.capacity() * std::mem::size_of::<Node>()
    }

    fn node(&self, id: NodeId) -> Node {
        self.nodes.get(id.index()).copied().unwrap_or(Node { start: 0, next: 0, parent: NO_PARENT, count: 0 })
    }

    /// The last node in document order; every document has at least the root.
    pub fn last(&self) -> NodeId {
        NodeId(self.nodes.len().saturating_sub(1) as u32)
    }

    /// The enclosing container, `None` for the root.
    pub fn parent(&self, id: NodeId) -> Option<NodeId> {
        let parent = self.node(id).parent;
        (parent != NO_PARENT).then_some(NodeId(parent))
    }

    /// Members of an object or items of an array; 0 for scalars.
    pub fn child_count(&self, id: NodeId) -> usize {
        self.node(id).children() as usize
    }

    /// The node after this one's subtree in document order (its next sibling when there is
    /// one), or `None` at the end of the document.
    pub fn next_after_subtree(&self, id: NodeId) -> Option<NodeId> {
        let next = self.node(id).next;
        ((next as usize) < self.nodes.len()).then_some(NodeId(next))
    }

    /// The direct children in order, hopping over each child's subtree.
    pub fn children(&self, id: NodeId) -> impl Iterator<Item = NodeId> + '_ {
        let mut next = (self.node(id).children() > 0).then_some(NodeId(id.0 + 1));
        let end = self.node(id).next;
        std::iter::from_fn(move || {
            let current = next?;
            let after = self.node(current).next;
            next = (after < end).then_some(NodeId(after));
            Some(current)
        })
    }

    /// Nesting level: 0 for the root.
    pub fn depth(&self, id: NodeId) -> usize {
        let mut depth = 0;
        let mut at = id;
        while let Some(parent) = self.parent(at) {
            depth += 1;
            at = parent;
        }
        depth
    }

    /// Offset of the node's first byte (its key for object members): what search hits and the
    /// scroll percentage are measured against.
    pub fn start_offset(&self, id: NodeId) -> usize {
        self.node(id).start as usize
    }

    /// Whether the node is an object member (has a key).
    pub fn has_key(&self, id: NodeId) -> bool {
        self.node(id).is_member()
    }

    /// Offset of the value's first byte, after any key.
    pub fn value_start(&self, id: NodeId) -> usize {
        let start = self.start_offset(id);
        if self.has_key(id) {
            skip_member_key(&self.body, start)
        } else {
            start
        }
    }

    /// The kind of value, from its first byte.
    pub fn kind(&self, id: NodeId) -> Kind {
        match self.body.get(self.value_start(id)) {
            Some(b'{') => Kind::Object,
            Some(b'[') => Kind::Array,
            Some(b'"') => Kind::String,
            Some(b't' | b'f') => Kind::Bool,
            Some(b'n') => Kind::Null,
            _ => Kind::Number,
        }
    }

    /// The member's key exactly as written between the quotes (escapes intact), `None` for
    /// array items and the root.
    pub fn raw_key(&self, id: NodeId) -> Option<&[u8]> {
        if !self.has_key(id) {
            return None;
        }
        let start = self.start_offset(id) + 1;
        let end = string_end(&self.body, start)?;
        self.body.get(start..end)
    }

    /// The member's key, unescaped (invalid surrogates become U+FFFD).
    pub fn key(&self, id: NodeId) -> Option<String> {
        if !self.has_key(id) {
            return None;
        }
        Some(decode_string(&self.body, self.start_offset(id) + 1, usize::MAX, false).0)
    }

    /// The member's key made single-line (control characters as escapes), cut at `max_chars`
    /// with a `…`; `None` for array items and the root.
    pub fn key_preview(&self, id: NodeId, max_chars: usize) -> Option<String> {
        if !self.has_key(id) {
            return None;
        }
        let (mut key, cut) = decode_string(&self.body, self.start_offset(id) + 1, max_chars, true);
        if cut {
            key.push('…');
        }
        Some(key)
    }

    /// One past the value's last byte. Containers do not store their end: the last node of a
    /// subtree is a leaf whose end is found by a short scan, and only closing brackets and
    /// whitespace separate it from the container's own end.
    pub fn value_end(&self, id: NodeId) -> usize {
        let last = NodeId(self.node(id).next.saturating_sub(1));
        let mut pos = self.leaf_end(last);
        let mut at = last;
        while at != id {
            let Some(parent) = self.parent(at) else { break };
            pos = skip_ws(&self.body, pos) + 1;
            at = parent;
        }
        pos.min(self.body.len())
    }

    /// End of a scalar or of an empty container.
    fn leaf_end(&self, id: NodeId) -> usize {
        let start = self.value_start(id);
        let b = &self.body;
        match b.get(start) {
            Some(b'"') => string_end(b, start + 1).map_or(b.len(), |end| end + 1),
            Some(b'{' | b'[') => skip_ws(b, start + 1) + 1,
            Some(b't' | b'n') => start + 4,
            Some(b'f') => start + 5,
            _ => {
                let len = b
                    .get(start..)
                    .unwrap_or_default()
                    .iter()
                    .take_while(|c| matches!(c, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E'))
                    .count();
                start + len
            }
        }
    }

    /// The value's JSON text, for copying the selection or showing it raw.
    pub fn text(&self, id: NodeId) -> &[u8] {
        let start = self.value_start(id);
        self.body.get(start..self.value_end(id)).unwrap_or_default()
    }

    /// A one-line rendering of a scalar: strings quoted, unescaped and with control characters
    /// shown as escapes; numbers and literals as written. Capped at `max_chars` with a `…`.
    pub fn scalar_preview(&self, id: NodeId, max_chars: usize) -> String {
        let start = self.value_start(id);
        if self.body.get(start) == Some(&b'"') {
            let (text, cut) = decode_string(&self.body, start + 1, max_chars, true);
            let mut out = String::with_capacity(text.len() + 3);
            out.push('"');
            out.push_str(&text);
            out.push(if cut { '…' } else { '"' });
            out
        } else {
            let end = self.leaf_end(id);
            let text = self.body.get(start..end).unwrap_or_default();
            truncate_ascii(text, max_chars)
        }
    }

    /// The value re-indented with two spaces, keeping key order, when its text is at most
    /// `max_bytes` long; big values are not worth a copy the user cannot read anyway.
    pub fn pretty(&self, id: NodeId, max_bytes: usize) -> Option<String> {
        let text = self.text(id);
        (text.len() <= max_bytes).then(|| pretty_print(text))
    }

    /// The node whose text contains `offset`: the last node starting at or before it. A hit
    /// in punctuation between values maps to the value before it, which is close enough.
    pub fn node_at(&self, offset: usize) -> NodeId {
        let offset = offset.min(MAX_BODY_LEN) as u32;
        let after = self.nodes.partition_point(|n| n.start <= offset);
        NodeId(after.saturating_sub(1) as u32)
    }
}

/// Skips a member's key string, the colon and the whitespace around it.
fn skip_member_key(b: &[u8], key_start: usize) -> usize {
    let after_key = string_end(b, key_start + 1).map_or(b.len(), |end| end + 1);
    let colon = skip_ws(b, after_key);
    skip_ws(b, colon + 1)
}

fn skip_ws(b: &[u8], mut pos: usize) -> usize {
    while let Some(b' ' | b'\n' | b'\r' | b'\t') = b.get(pos) {
        pos += 1;
    }
    pos
}

/// Offset of the closing quote of a string whose contents start at `from`.
fn string_end(b: &[u8], from: usize) -> Option<usize> {
    let mut pos = from;
    loop {
        let hit = pos + memchr::memchr2(b'"', b'\\', b.get(pos..)?)?;
        if b[hit] == b'"' {
            return Some(hit);
        }
        pos = hit + 2;
    }
}

fn truncate_ascii(text: &[u8], max_chars: usize) -> String {
    let shown = text.get(..max_chars).unwrap_or(text);
    let mut out = String::from_utf8_lossy(shown).into_owned();
    if shown.len() < text.len() {
        out.push('…');
    }
    out
}

/// Decodes a JSON string from its contents' first byte up to the closing quote, stopping
/// after `max_chars` characters (second result: whether it stopped early). With `display`,
/// control characters come out as escapes so the result stays on one line.
fn decode_string(b: &[u8], from: usize, max_chars: usize, display: bool) -> (String, bool) {
    let mut out = String::new();
    let cut = decode_string_into(&mut out, b, from, max_chars, display);
    (out, cut)
}

/// [`decode_string`] appending to `out`; returns whether it stopped early.
fn decode_string_into(out: &mut String, b: &[u8], from: usize, max_chars: usize, display: bool) -> bool {
    let mut room = max_chars;
    let mut pos = from;
    loop {
        let rest = b.get(pos..).unwrap_or_default();
        let run_len = memchr::memchr2(b'"', b'\\', rest).unwrap_or(rest.len());
        // Only as much of a long run as can still be shown: at most 4 bytes per character,
        // plus one character's worth so a cut never lands inside the last shown one.
        let budget = room.saturating_mul(4).saturating_add(4);
        let run = rest.get(..run_len.min(budget)).unwrap_or_default();
        match std::str::from_utf8(run) {
            // The common case: plain text that fits, copied at once.
            Ok(text) if !display && text.len() <= room => {
                out.push_str(text);
                room -= text.chars().count();
            }
            _ => {
                for c in String::from_utf8_lossy(run).chars() {
                    if room == 0 {
                        return true;
                    }
                    room -= 1;
                    push_char(out, c, display);
                }
            }
        }
        if run.len() < run_len {
            return true;
        }
        pos += run_len;
        if b.get(pos) != Some(&b'\\') {
            return false;
        }
        let (c, len) = decode_escape(b, pos);
        if room == 0 {
            return true;
        }
        room -= 1;
        push_char(out, c, display);
        pos += len;
    }
}

fn push_char(out: &mut String, c: char, display: bool) {
    if display && c.is_control() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            _ => out.push_str(&format!("\\u{:04x}", u32::from(c))),
        }
    } else {
        out.push(c);
    }
}

/// Decodes the escape at `pos` (a backslash) into a character and its length in bytes,
/// joining surrogate pairs; anything malformed becomes U+FFFD.
fn decode_escape(b: &[u8], pos: usize) -> (char, usize) {
    let simple = match b.get(pos + 1) {
        Some(b'"') => '"',
        Some(b'\\') => '\\',
        Some(b'/') => '/',
        Some(b'b') => '\u{8}',
        Some(b'f') => '\u{c}',
        Some(b'n') => '\n',
        Some(b'r') => '\r',
        Some(b't') => '\t',
        Some(b'u') => {
            let Some(high) = hex4(b, pos + 2) else {
                return ('\u{fffd}', 2);
            };
            if (0xD800..0xDC00).contains(&high) && b.get(pos + 6..pos + 8) == Some(b"\\u") {
                if let Some(low) = hex4(b, pos + 8).filter(|l| (0xDC00..0xE000).contains(l)) {
                    let c = 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00);
                    return (char::from_u32(c).unwrap_or('\u{fffd}'), 12);
                }
            }
            return (char::from_u32(high).unwrap_or('\u{fffd}'), 6);
        }
        _ => '\u{fffd}',
    };
    (simple, 2)
}

fn hex4(b: &[u8], pos: usize) -> Option<u32> {
    let digits = b.get(pos..pos + 4)?;
    let text = std::str::from_utf8(digits).ok()?;
    u32::from_str_radix(text, 16).ok()
}

/// Re-indents already validated JSON text by two spaces, token by token: strings, numbers and key
/// order stay exactly as they came (nothing is parsed into values and written again).
pub fn pretty_print(text: &[u8]) -> String {
    let mut out: Vec<u8> = Vec::with_capacity(text.len() * 2);
    let mut indent = 0usize;
    let newline = |out: &mut Vec<u8>, indent: usize| {
        out.push(b'\n');
        out.extend(std::iter::repeat_n(b' ', indent * 2));
    };
    let mut i = 0;
    while let Some(&c) = text.get(i) {
        match c {
            b'"' => {
                let end = string_end(text, i + 1).map_or(text.len(), |e| e + 1);
                out.extend_from_slice(text.get(i..end).unwrap_or_default());
                i = end;
                continue;
            }
            b'{' | b'[' => {
                let after = skip_ws(text, i + 1);
                if matches!(text.get(after), Some(b'}' | b']')) {
                    out.push(c);
                    out.push(text[after]);
                    i = after + 1;
                    continue;
                }
                out.push(c);
                indent += 1;
                newline(&mut out, indent);
            }
            b'}' | b']' => {
                indent = indent.saturating_sub(1);
                newline(&mut out, indent);
                out.push(c);
            }
            b',' => {
                out.push(c);
                newline(&mut out, indent);
            }
            b':' => out.extend_from_slice(b": "),
            b' ' | b'\n' | b'\r' | b'\t' => {}
            _ => out.push(c),
        }
        i += 1;
    }
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// 1-based line and character column of `offset`, computed only when reporting an error.
fn locate(b: &[u8], offset: usize) -> (usize, usize) {
    let before = b.get(..offset).unwrap_or(b);
    let line = memchr::memchr_iter(b'\n', before).count() + 1;
    let line_start = memchr::memrchr(b'\n', before).map_or(0, |p| p + 1);
    let column = before.get(line_start..).unwrap_or_default().iter().filter(|&&c| c & 0xC0 != 0x80).count() + 1;
    (line, column)
}

fn char_at(b: &[u8], offset: usize) -> char {
    let end = (offset + 4).min(b.len());
    let bytes = b.get(offset..end).unwrap_or_default();
    String::from_utf8_lossy(bytes).chars().next().unwrap_or('\u{fffd}')
}
