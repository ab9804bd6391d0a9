//! A flat index over a JSON body, and the fold and scroll state of the tree drawn from it.
//!
//! Responses can be tens of megabytes, and a DOM of `serde_json::Value` costs about 14 times the
//! body. Instead one iterative pass validates the body (RFC 8259) and records a 16-byte [`Node`]
//! per value in document order. The body bytes stay the only copy of the text: keys and values
//! are decoded only when a line is drawn. Everything a key press does (paging, folding, expand
//! or collapse all) costs time in proportion to the screen height and the nesting depth, never
//! to the size of the document.
//!
//! No terminal code lives here, so the benchmarks and tests drive it directly.

use std::borrow::Cow;
use std::collections::HashSet;
use std::fmt;

use bytes::Bytes;
use memchr::memmem;

/// Deepest nesting accepted. The parser is iterative, but consumers that recurse (pretty
/// printing, serde) should never meet a pathological document.
pub const MAX_DEPTH: usize = 512;

/// Largest body the index can address: offsets are `u32` so that a node stays at 16 bytes.
pub const MAX_BODY_LEN: usize = u32::MAX as usize;

/// Documents with fewer nodes than this open fully expanded; bigger ones show two levels, so
/// that the first frame of a huge array is a readable list of records.
pub const EXPAND_ALL_BELOW: usize = 2_000;

/// Width cap for a drawn key or value: no terminal is wider, and a 1 MB string must not be
/// decoded to draw one line.
pub const PREVIEW_CHARS: usize = 512;

const NO_PARENT: u32 = u32::MAX;

/// Identifies a value of a [`JsonDoc`] by its position in document order, so ids compare in
/// the order lines are drawn; the root is [`NodeId::ROOT`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NodeId(u32);

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
    /// Members or items of a container; 0 for scalars.
    count: u32,
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
    #[error("nesting deeper than {MAX_DEPTH} levels")]
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
            JsonErrorKind::TooLarge(_) | JsonErrorKind::Empty => write!(f, "{}", self.kind),
            _ => write!(f, "{} at line {}, column {} (byte {})", self.kind, self.line, self.column, self.offset),
        }
    }
}

impl std::error::Error for JsonError {}

/// A validated JSON body and its flat index: the structure a huge response can be opened with
/// in a fraction of a second, without a DOM.
#[derive(Clone, Debug)]
pub struct JsonDoc {
    body: Bytes,
    nodes: Vec<Node>,
}

impl JsonDoc {
    /// Validates `body` as strict JSON and indexes it in one pass; the bytes are kept, not copied.
    pub fn parse(body: Bytes) -> Result<JsonDoc, JsonError> {
        let fail = |b: &[u8], offset: usize, kind: JsonErrorKind| {
            let (line, column) = locate(b, offset);
            JsonError { kind, offset, line, column }
        };
        if body.len() > MAX_BODY_LEN {
            return Err(JsonError { kind: JsonErrorKind::TooLarge(body.len()), offset: 0, line: 0, column: 0 });
        }
        // Outside strings the grammar admits only ASCII, so one fast whole-body check plus
        // the parser's byte checks together validate every string's UTF-8. The error reported
        // is whichever comes first in the text.
        let utf8_error = std::str::from_utf8(&body).err().map(|e| e.valid_up_to());
        let mut parser = Parser {
            b: &body,
            pos: 0,
            // A guess that avoids most regrowth on typical API bodies; untouched capacity is
            // not resident, and the vector is shrunk to fit at the end.
            nodes: Vec::with_capacity(body.len() / 16 + 1),
            open: Vec::new(),
        };
        let result = parser.run();
        let mut nodes = parser.nodes;
        match (result, utf8_error) {
            (Err((offset, _)), Some(bad)) if bad <= offset => Err(fail(&body, bad, JsonErrorKind::InvalidUtf8)),
            (Err((offset, kind)), _) => Err(fail(&body, offset, kind)),
            (Ok(()), Some(bad)) => Err(fail(&body, bad, JsonErrorKind::InvalidUtf8)),
            (Ok(()), None) => {
                nodes.shrink_to_fit();
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
        self.node(id).count as usize
    }

    /// The node after this one's subtree in document order (its next sibling when there is
    /// one), or `None` at the end of the document.
    pub fn next_after_subtree(&self, id: NodeId) -> Option<NodeId> {
        let next = self.node(id).next;
        ((next as usize) < self.nodes.len()).then_some(NodeId(next))
    }

    /// The direct children in order, hopping over each child's subtree.
    pub fn children(&self, id: NodeId) -> impl Iterator<Item = NodeId> + '_ {
        let mut next = (self.node(id).count > 0).then_some(NodeId(id.0 + 1));
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

    /// Whether a container is an object, from the first byte of its value (skipping the
    /// container's own key when it has one).
    fn is_object(&self, id: NodeId) -> bool {
        let start = self.start_offset(id);
        match self.body.get(start) {
            Some(b'{') => true,
            Some(b'"') => self.body.get(skip_member_key(&self.body, start)) == Some(&b'{'),
            _ => false,
        }
    }

    fn has_key(&self, id: NodeId) -> bool {
        self.parent(id).is_some_and(|p| self.is_object(p))
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
    let mut room = max_chars;
    let mut pos = from;
    loop {
        let rest = b.get(pos..).unwrap_or_default();
        let run_len = memchr::memchr2(b'"', b'\\', rest).unwrap_or(rest.len());
        // Only as much of a long run as can still be shown: at most 4 bytes per character,
        // plus one character's worth so a cut never lands inside the last shown one.
        let budget = room.saturating_mul(4).saturating_add(4);
        let run = rest.get(..run_len.min(budget)).unwrap_or_default();
        for c in String::from_utf8_lossy(run).chars() {
            if room == 0 {
                return (out, true);
            }
            room -= 1;
            push_char(&mut out, c, display);
        }
        if run.len() < run_len {
            return (out, true);
        }
        pos += run_len;
        if b.get(pos) != Some(&b'\\') {
            return (out, false);
        }
        let (c, len) = decode_escape(b, pos);
        if room == 0 {
            return (out, true);
        }
        room -= 1;
        push_char(&mut out, c, display);
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

/// Re-indents already validated JSON text; strings are copied byte for byte.
fn pretty_print(text: &[u8]) -> String {
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

type Failure = (usize, JsonErrorKind);

/// An open container while parsing: children are counted here rather than in the node so the
/// hot loop writes only to the end of the node vector.
struct Open {
    id: u32,
    object: bool,
    count: u32,
}

struct Parser<'a> {
    b: &'a [u8],
    pos: usize,
    nodes: Vec<Node>,
    open: Vec<Open>,
}

impl Parser<'_> {
    fn skip_ws(&mut self) {
        self.pos = skip_ws(self.b, self.pos);
    }

    fn unexpected(&self, expected: &'static str) -> Failure {
        match self.b.get(self.pos) {
            None => (self.pos, JsonErrorKind::UnexpectedEnd(expected)),
            Some(_) => (self.pos, JsonErrorKind::Unexpected { found: char_at(self.b, self.pos), expected }),
        }
    }

    fn push(&mut self, start: usize) -> u32 {
        let id = self.nodes.len() as u32;
        let parent = match self.open.last_mut() {
            Some(open) => {
                open.count += 1;
                open.id
            }
            None => NO_PARENT,
        };
        self.nodes.push(Node { start: start as u32, next: id + 1, parent, count: 0 });
        id
    }

    /// Parses the whole body with an explicit stack of open containers, so depth costs heap,
    /// never call stack.
    fn run(&mut self) -> Result<(), Failure> {
        self.skip_ws();
        if self.pos >= self.b.len() {
            return Err((self.pos, JsonErrorKind::Empty));
        }
        let mut key_start: Option<usize> = None;
        'value: loop {
            let start = key_start.take().unwrap_or(self.pos);
            match self.b.get(self.pos) {
                Some(&c @ (b'{' | b'[')) => {
                    if self.open.len() >= MAX_DEPTH {
                        return Err((self.pos, JsonErrorKind::TooDeep));
                    }
                    let id = self.push(start);
                    let object = c == b'{';
                    self.pos += 1;
                    self.skip_ws();
                    let close = if object { b'}' } else { b']' };
                    if self.b.get(self.pos) == Some(&close) {
                        self.pos += 1;
                    } else {
                        self.open.push(Open { id, object, count: 0 });
                        if object {
                            key_start = Some(self.member_key()?);
                        }
                        continue 'value;
                    }
                }
                Some(b'"') => {
                    self.push(start);
                    self.string()?;
                }
                Some(b'-' | b'0'..=b'9') => {
                    self.push(start);
                    self.number()?;
                }
                Some(b't') => {
                    self.push(start);
                    self.literal(b"true")?;
                }
                Some(b'f') => {
                    self.push(start);
                    self.literal(b"false")?;
                }
                Some(b'n') => {
                    self.push(start);
                    self.literal(b"null")?;
                }
                _ => return Err(self.unexpected("a value")),
            }
            // A value just ended: close containers until one continues with a comma.
            loop {
                self.skip_ws();
                let Some(open) = self.open.last() else {
                    return match self.b.get(self.pos) {
                        None => Ok(()),
                        Some(_) => Err((self.pos, JsonErrorKind::TrailingData(char_at(self.b, self.pos)))),
                    };
                };
                let object = open.object;
                match self.b.get(self.pos) {
                    Some(b',') => {
                        self.pos += 1;
                        self.skip_ws();
                        if object {
                            key_start = Some(self.member_key()?);
                        }
                        continue 'value;
                    }
                    Some(b'}') if object => {}
                    Some(b']') if !object => {}
                    _ if object => return Err(self.unexpected("',' or '}'")),
                    _ => return Err(self.unexpected("',' or ']'")),
                }
                self.pos += 1;
                let end = self.nodes.len() as u32;
                if let Some(open) = self.open.pop() {
                    if let Some(node) = self.nodes.get_mut(open.id as usize) {
                        node.next = end;
                        node.count = open.count;
                    }
                }
            }
        }
    }

    /// Parses `"key" :` and the whitespace after it; returns where the key starts.
    fn member_key(&mut self) -> Result<usize, Failure> {
        if self.b.get(self.pos) != Some(&b'"') {
            return Err(self.unexpected("a string key"));
        }
        let start = self.pos;
        self.string()?;
        self.skip_ws();
        if self.b.get(self.pos) != Some(&b':') {
            return Err(self.unexpected("':'"));
        }
        self.pos += 1;
        self.skip_ws();
        Ok(start)
    }

    /// Validates a string starting at its opening quote. Eight bytes at a time are checked
    /// for a quote, a backslash or a control character, since most strings have none of them.
    fn string(&mut self) -> Result<(), Failure> {
        let b = self.b;
        let mut pos = self.pos + 1;
        loop {
            while let Some(chunk) = b.get(pos..).and_then(|rest| rest.first_chunk::<8>()) {
                let hits = special_bytes(u64::from_le_bytes(*chunk));
                if hits != 0 {
                    pos += (hits.trailing_zeros() / 8) as usize;
                    break;
                }
                pos += 8;
            }
            match b.get(pos) {
                None => return Err((pos, JsonErrorKind::UnexpectedEnd("'\"'"))),
                Some(b'"') => {
                    self.pos = pos + 1;
                    return Ok(());
                }
                Some(b'\\') => match b.get(pos + 1) {
                    Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => pos += 2,
                    Some(b'u') => {
                        let digits = b.get(pos + 2..pos + 6).unwrap_or_default();
                        if digits.len() < 4 || !digits.iter().all(u8::is_ascii_hexdigit) {
                            return Err((pos, JsonErrorKind::InvalidEscape));
                        }
                        pos += 6;
                    }
                    _ => return Err((pos, JsonErrorKind::InvalidEscape)),
                },
                Some(&c) if c < 0x20 => return Err((pos, JsonErrorKind::ControlCharacter)),
                Some(_) => pos += 1,
            }
        }
    }

    fn number(&mut self) -> Result<(), Failure> {
        let b = self.b;
        let digits = |mut pos: usize| {
            while let Some(b'0'..=b'9') = b.get(pos) {
                pos += 1;
            }
            pos
        };
        let mut pos = self.pos;
        if b.get(pos) == Some(&b'-') {
            pos += 1;
        }
        match b.get(pos) {
            Some(b'0') => {
                pos += 1;
                if let Some(b'0'..=b'9') = b.get(pos) {
                    return Err((pos, JsonErrorKind::InvalidNumber));
                }
            }
            Some(b'1'..=b'9') => pos = digits(pos + 1),
            _ => return Err((pos, JsonErrorKind::InvalidNumber)),
        }
        if b.get(pos) == Some(&b'.') {
            let after = digits(pos + 1);
            if after == pos + 1 {
                return Err((after, JsonErrorKind::InvalidNumber));
            }
            pos = after;
        }
        if let Some(b'e' | b'E') = b.get(pos) {
            pos += 1;
            if let Some(b'+' | b'-') = b.get(pos) {
                pos += 1;
            }
            let after = digits(pos);
            if after == pos {
                return Err((after, JsonErrorKind::InvalidNumber));
            }
            pos = after;
        }
        self.pos = pos;
        Ok(())
    }

    fn literal(&mut self, word: &'static [u8]) -> Result<(), Failure> {
        for (i, &expected) in word.iter().enumerate() {
            if self.b.get(self.pos + i) != Some(&expected) {
                self.pos += i;
                return Err(self.unexpected(match word {
                    b"true" => "'true'",
                    b"false" => "'false'",
                    _ => "'null'",
                }));
            }
        }
        self.pos += word.len();
        Ok(())
    }
}

/// Marks bytes of a little-endian word that are a quote, a backslash or below 0x20. Borrows
/// only propagate towards later bytes, so the lowest mark is always exact.
fn special_bytes(word: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let zero_byte = |x: u64| x.wrapping_sub(ONES) & !x & HIGH;
    let quote = zero_byte(word ^ (ONES * u64::from(b'"')));
    let backslash = zero_byte(word ^ (ONES * u64::from(b'\\')));
    let control = word.wrapping_sub(ONES * 0x20) & !word & HIGH;
    quote | backslash | control
}

/// Case-insensitive (ASCII) search that lowers the haystack a chunk at a time, so `memmem`
/// does the scanning and no second copy of a big body is ever made.
pub struct Searcher {
    needle: Vec<u8>,
    fold_case: bool,
    buf: Vec<u8>,
}

const SEARCH_CHUNK: usize = 64 * 1024;

impl Searcher {
    /// Prepares a search for `needle`; an empty needle matches nothing.
    pub fn new(needle: &str) -> Searcher {
        let fold_case = needle.bytes().any(|c| c.is_ascii_alphabetic());
        Searcher { needle: needle.as_bytes().to_ascii_lowercase(), fold_case, buf: Vec::new() }
    }

    /// The lowered window of `hay` for match starts in `[from, to)`.
    fn window<'s>(&'s mut self, hay: &'s [u8], from: usize, to: usize) -> &'s [u8] {
        let end = (to + self.needle.len() - 1).min(hay.len());
        let slice = hay.get(from..end).unwrap_or_default();
        if !self.fold_case {
            return slice;
        }
        self.buf.clear();
        self.buf.extend(slice.iter().map(u8::to_ascii_lowercase));
        &self.buf
    }

    /// First match starting at or after `from`.
    pub fn find(&mut self, hay: &[u8], from: usize) -> Option<usize> {
        if self.needle.is_empty() {
            return None;
        }
        let finder = memmem::Finder::new(&self.needle).into_owned();
        let mut start = from;
        while start < hay.len() {
            let to = (start + SEARCH_CHUNK).min(hay.len());
            if let Some(hit) = finder.find(self.window(hay, start, to)) {
                return Some(start + hit);
            }
            start = to;
        }
        None
    }

    /// Last match starting before `before`.
    pub fn rfind(&mut self, hay: &[u8], before: usize) -> Option<usize> {
        if self.needle.is_empty() {
            return None;
        }
        let finder = memmem::FinderRev::new(&self.needle).into_owned();
        let mut to = before.min(hay.len());
        while to > 0 {
            let start = to.saturating_sub(SEARCH_CHUNK);
            if let Some(hit) = finder.rfind(self.window(hay, start, to)) {
                return Some(start + hit);
            }
            to = start;
        }
        None
    }

    /// How many matches start before `at`, and how many there are in all: the "3/17" of a
    /// match note, in one pass.
    pub fn count(&mut self, hay: &[u8], at: usize) -> (usize, usize) {
        if self.needle.is_empty() {
            return (0, 0);
        }
        let finder = memmem::Finder::new(&self.needle).into_owned();
        let (mut before, mut total) = (0, 0);
        let mut start = 0;
        while start < hay.len() {
            let to = (start + SEARCH_CHUNK).min(hay.len());
            let window = self.window(hay, start, to);
            let mut pos = 0;
            while let Some(hit) = window.get(pos..).and_then(|w| finder.find(w)) {
                let abs = start + pos + hit;
                if abs >= to {
                    break;
                }
                total += 1;
                if abs < at {
                    before += 1;
                }
                pos += hit + 1;
            }
            start = to;
        }
        (before, total)
    }
}

/// Which containers are expanded when nobody has toggled them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fold {
    All,
    /// Containers shallower than this depth are expanded.
    Depth(usize),
}

/// One drawn line of the tree: what the widget needs to style it, and nothing it would have
/// to decode again.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TreeLine {
    /// The node drawn, so the widget can tell the cursor's line.
    pub node: NodeId,
    /// Nesting level, for indentation; 0 for the root.
    pub depth: usize,
    /// The member's key, unescaped and made single-line; `None` for array items and the root.
    pub key: Option<String>,
    /// Scalars: their text (strings quoted). Containers: `{` / `[` when expanded, `{…} 12 keys`
    /// / `[…] 3 items` when collapsed, `{}` / `[]` when empty.
    pub preview: String,
    /// Picks the value's colour.
    pub kind: Kind,
    /// A container with at least one child.
    pub expandable: bool,
    /// Whether its children are drawn below it (false for scalars).
    pub expanded: bool,
}

/// A document with its fold state, cursor and scroll position: the state of the tree view.
///
/// Folding is a default mode plus the set of nodes toggled away from it, and the scroll
/// position is a node rather than a line number, so no operation walks the whole document.
#[derive(Clone, Debug)]
pub struct JsonTree {
    doc: JsonDoc,
    cursor: NodeId,
    top: NodeId,
    fold: Fold,
    flipped: HashSet<NodeId>,
    height: usize,
}

impl JsonTree {
    /// Opens a document with the cursor on the root, fully expanded when small.
    pub fn new(doc: JsonDoc) -> JsonTree {
        let fold = if doc.node_count() < EXPAND_ALL_BELOW { Fold::All } else { Fold::Depth(2) };
        JsonTree { doc, cursor: NodeId::ROOT, top: NodeId::ROOT, fold, flipped: HashSet::new(), height: 20 }
    }

    /// The indexed document, for text slices and search.
    pub fn doc(&self) -> &JsonDoc {
        &self.doc
    }

    /// The selected node.
    pub fn cursor(&self) -> NodeId {
        self.cursor
    }

    /// The node on the first drawn line.
    pub fn top(&self) -> NodeId {
        self.top
    }

    fn expandable(&self, id: NodeId) -> bool {
        self.doc.child_count(id) > 0
    }

    fn expanded_at(&self, id: NodeId, depth: usize) -> bool {
        let default = match self.fold {
            Fold::All => true,
            Fold::Depth(limit) => depth < limit,
        };
        default != self.flipped.contains(&id)
    }

    /// Whether a container shows its children (false for scalars and empty containers).
    pub fn is_expanded(&self, id: NodeId) -> bool {
        self.expandable(id) && self.expanded_at(id, self.doc.depth(id))
    }

    fn set_expanded(&mut self, id: NodeId, expanded: bool) {
        if !self.expandable(id) {
            return;
        }
        let default = match self.fold {
            Fold::All => true,
            Fold::Depth(limit) => self.doc.depth(id) < limit,
        };
        if expanded == default {
            self.flipped.remove(&id);
        } else {
            self.flipped.insert(id);
        }
    }

    /// The line after `id` (at `depth`), skipping folded subtrees.
    fn next_line(&self, id: NodeId, depth: usize) -> Option<(NodeId, usize)> {
        if self.expandable(id) && self.expanded_at(id, depth) {
            return Some((NodeId(id.0 + 1), depth + 1));
        }
        let next = self.doc.next_after_subtree(id)?;
        let target = self.doc.parent(next);
        let mut depth = depth;
        let mut at = self.doc.parent(id);
        while at != target {
            at = at.and_then(|a| self.doc.parent(a));
            depth = depth.saturating_sub(1);
        }
        Some((next, depth))
    }

    /// The line before `id` (at `depth`): the parent, or the deepest visible last descendant
    /// of the previous sibling.
    fn prev_line(&self, id: NodeId, depth: usize) -> Option<(NodeId, usize)> {
        let parent = self.doc.parent(id)?;
        let before = NodeId(id.0 - 1);
        if before == parent {
            return Some((parent, depth - 1));
        }
        // `before` ends the previous sibling's subtree, so each of its ancestors below
        // `parent` is the last child of the next one up.
        let mut chain = vec![before];
        let mut at = before;
        while let Some(up) = self.doc.parent(at).filter(|&p| p != parent) {
            chain.push(up);
            at = up;
        }
        for (level, &node) in chain.iter().rev().enumerate() {
            let d = depth + level;
            if !(self.expandable(node) && self.expanded_at(node, d)) {
                return Some((node, d));
            }
        }
        Some((before, depth + chain.len() - 1))
    }

    fn step_down(&self, id: NodeId, n: usize) -> NodeId {
        let (mut at, mut depth) = (id, self.doc.depth(id));
        for _ in 0..n {
            match self.next_line(at, depth) {
                Some(next) => (at, depth) = next,
                None => break,
            }
        }
        at
    }

    fn step_up(&self, id: NodeId, n: usize) -> NodeId {
        let (mut at, mut depth) = (id, self.doc.depth(id));
        for _ in 0..n {
            match self.prev_line(at, depth) {
                Some(prev) => (at, depth) = prev,
                None => break,
            }
        }
        at
    }

    /// The node itself if every ancestor is expanded, else the outermost collapsed ancestor:
    /// where a cursor lands when the subtree it was in gets folded.
    fn nearest_visible(&self, id: NodeId) -> NodeId {
        let mut chain = vec![id];
        let mut at = id;
        while let Some(parent) = self.doc.parent(at) {
            chain.push(parent);
            at = parent;
        }
        for (depth, &node) in chain.iter().rev().enumerate() {
            if node != id && !self.expanded_at(node, depth) {
                return node;
            }
        }
        id
    }

    /// The last drawn line of the whole tree.
    pub fn last_line(&self) -> NodeId {
        self.nearest_visible(self.doc.last())
    }

    fn refit_hidden(&mut self) {
        self.cursor = self.nearest_visible(self.cursor);
        self.top = self.nearest_visible(self.top);
    }

    /// Moves `top` as little as possible so the cursor is on one of `height` lines.
    fn scroll_to_cursor(&mut self) {
        if self.cursor < self.top {
            self.top = self.cursor;
            return;
        }
        let (mut at, mut depth) = (self.top, self.doc.depth(self.top));
        for _ in 1..self.height {
            if at == self.cursor {
                return;
            }
            match self.next_line(at, depth) {
                Some(next) => (at, depth) = next,
                None => break,
            }
        }
        if at != self.cursor {
            self.top = self.step_up(self.cursor, self.height - 1);
        }
    }

    /// The lines to draw for a view `height` lines tall, scrolling first so the cursor shows.
    /// Only these lines are decoded.
    pub fn lines(&mut self, height: usize) -> Vec<TreeLine> {
        self.height = height.max(1);
        self.scroll_to_cursor();
        let mut lines = Vec::with_capacity(self.height.min(256));
        let mut next = Some((self.top, self.doc.depth(self.top)));
        while let Some((id, depth)) = next {
            if lines.len() == height {
                break;
            }
            lines.push(self.line(id, depth));
            next = self.next_line(id, depth);
        }
        lines
    }

    fn line(&self, id: NodeId, depth: usize) -> TreeLine {
        let doc = &self.doc;
        let kind = doc.kind(id);
        let count = doc.child_count(id);
        let expandable = count > 0;
        let expanded = expandable && self.expanded_at(id, depth);
        let preview = match kind {
            Kind::Object | Kind::Array => {
                let (open, close, unit) = if kind == Kind::Object { ('{', '}', "key") } else { ('[', ']', "item") };
                if !expandable {
                    format!("{open}{close}")
                } else if expanded {
                    open.to_string()
                } else {
                    let plural = if count == 1 { "" } else { "s" };
                    format!("{open}…{close} {count} {unit}{plural}")
                }
            }
            _ => doc.scalar_preview(id, PREVIEW_CHARS),
        };
        let key = doc.has_key(id).then(|| {
            let (mut key, cut) = decode_string(&doc.body, doc.start_offset(id) + 1, 128, true);
            if cut {
                key.push('…');
            }
            key
        });
        TreeLine { node: id, depth, key, preview, kind, expandable, expanded }
    }

    /// Moves the cursor one line up.
    pub fn up(&mut self) {
        self.cursor = self.step_up(self.cursor, 1);
    }

    /// Moves the cursor one line down.
    pub fn down(&mut self) {
        self.cursor = self.step_down(self.cursor, 1);
    }

    /// Scrolls and moves the cursor `n` lines down, like `less`; the last page stays full.
    pub fn page_down(&mut self, n: usize) {
        let last_top = self.step_up(self.last_line(), self.height.saturating_sub(1));
        let top = self.step_down(self.top, n);
        self.top = if top > last_top { last_top.max(self.top) } else { top };
        self.cursor = self.step_down(self.cursor, n);
    }

    /// Scrolls and moves the cursor `n` lines up.
    pub fn page_up(&mut self, n: usize) {
        self.top = self.step_up(self.top, n);
        self.cursor = self.step_up(self.cursor, n);
    }

    /// Jumps to the root.
    pub fn home(&mut self) {
        self.cursor = NodeId::ROOT;
        self.top = NodeId::ROOT;
    }

    /// Jumps to the last line.
    pub fn end(&mut self) {
        self.cursor = self.last_line();
    }

    /// Moves the cursor to the enclosing container.
    pub fn to_parent(&mut self) {
        if let Some(parent) = self.doc.parent(self.cursor) {
            self.cursor = parent;
        }
    }

    /// Selects `id` if it is drawn; hidden nodes are reached with [`JsonTree::reveal`].
    pub fn select(&mut self, id: NodeId) {
        if id.index() < self.doc.node_count() && self.nearest_visible(id) == id {
            self.cursor = id;
        }
    }

    /// Folds or unfolds the selected container.
    pub fn toggle(&mut self) {
        let expanded = self.is_expanded(self.cursor);
        self.set_expanded(self.cursor, !expanded);
    }

    /// Unfolds the selected container.
    pub fn expand(&mut self) {
        self.set_expanded(self.cursor, true);
    }

    /// Folds the selected container.
    pub fn collapse(&mut self) {
        self.set_expanded(self.cursor, false);
        self.refit_hidden();
    }

    /// Unfolds every container, in constant time.
    pub fn expand_all(&mut self) {
        self.fold = Fold::All;
        self.flipped.clear();
    }

    /// Folds everything below the root's children, in constant time (plus the depth of the
    /// cursor to pull it out of a folded subtree).
    pub fn collapse_all(&mut self) {
        self.fold = Fold::Depth(1);
        self.flipped.clear();
        self.refit_hidden();
    }

    /// Expands every ancestor of `id`, selects it and scrolls it into view a third of the way
    /// down when it was off screen.
    pub fn reveal(&mut self, id: NodeId) {
        if id.index() >= self.doc.node_count() {
            return;
        }
        let mut at = id;
        while let Some(parent) = self.doc.parent(at) {
            self.set_expanded(parent, true);
            at = parent;
        }
        self.cursor = id;
        let on_screen = id >= self.top && self.step_down(self.top, self.height - 1) >= id;
        if !on_screen {
            self.top = self.step_up(id, self.height / 3);
        }
    }

    /// Finds `needle` (ASCII case-insensitive) at or after byte `from`, reveals the node
    /// containing the match and returns the match's offset.
    pub fn find_next(&mut self, searcher: &mut Searcher, from: usize) -> Option<usize> {
        let hit = searcher.find(&self.doc.body, from)?;
        self.reveal(self.doc.node_at(hit));
        Some(hit)
    }

    /// Like [`JsonTree::find_next`], for the last match starting before byte `before`.
    pub fn find_prev(&mut self, searcher: &mut Searcher, before: usize) -> Option<usize> {
        let hit = searcher.rfind(&self.doc.body, before)?;
        self.reveal(self.doc.node_at(hit));
        Some(hit)
    }

    /// Scroll position as a percentage of the body's bytes before the cursor: exact enough,
    /// and free, unlike counting visible lines.
    pub fn percent(&self) -> u8 {
        if self.cursor == self.last_line() {
            return 100;
        }
        let len = self.doc.body.len().max(1);
        (self.doc.start_offset(self.cursor) * 100 / len).min(100) as u8
    }
}

/// Line starts of a text body, built once when the raw view first opens; drawing then slices
/// only the visible lines.
#[derive(Clone, Debug, Default)]
pub struct LineIndex {
    starts: Vec<u32>,
    len: usize,
}

impl LineIndex {
    /// Indexes the lines of `text` (bodies are capped far below [`MAX_BODY_LEN`]; anything
    /// past it is left out).
    pub fn new(text: &[u8]) -> LineIndex {
        let text = text.get(..MAX_BODY_LEN).unwrap_or(text);
        let mut starts = vec![0u32];
        starts.extend(memchr::memchr_iter(b'\n', text).map(|p| (p + 1) as u32));
        if starts.len() > 1 && starts.last().is_some_and(|&s| s as usize == text.len()) {
            // A final newline ends the last line rather than starting an empty one.
            starts.pop();
        }
        LineIndex { starts, len: text.len() }
    }

    /// How many lines there are (at least one, even for an empty body).
    pub fn len(&self) -> usize {
        self.starts.len()
    }

    /// Never true: an empty body still has one empty line.
    pub fn is_empty(&self) -> bool {
        self.starts.is_empty()
    }

    /// Byte offset where line `i` starts.
    pub fn start(&self, i: usize) -> usize {
        self.starts.get(i).map_or(self.len, |&s| s as usize)
    }

    /// Line `i` of `text` without its line break.
    pub fn line<'t>(&self, text: &'t [u8], i: usize) -> &'t [u8] {
        let start = self.start(i);
        let end = self.start(i + 1).min(text.len());
        let mut line = text.get(start..end).unwrap_or_default();
        if let Some(rest) = line.strip_suffix(b"\n") {
            line = rest;
        }
        line.strip_suffix(b"\r").unwrap_or(line)
    }

    /// The line holding byte `offset`.
    pub fn line_of(&self, offset: usize) -> usize {
        let offset = offset.min(MAX_BODY_LEN) as u32;
        self.starts.partition_point(|&s| s <= offset).saturating_sub(1)
    }
}

/// At most `width` characters of `line` from byte `from` (moved forward to a character
/// boundary), with tabs as spaces and other control characters as `·`, so a drawn line is
/// bounded however long the source line is.
pub fn visible_text(line: &[u8], from: usize, width: usize) -> String {
    let mut start = from.min(line.len());
    while line.get(start).is_some_and(|&c| c & 0xC0 == 0x80) {
        start += 1;
    }
    let window_end = start.saturating_add(width.saturating_mul(4)).min(line.len());
    let window = line.get(start..window_end).unwrap_or_default();
    let text: Cow<'_, str> = String::from_utf8_lossy(window);
    text.chars()
        .take(width)
        .map(|c| match c {
            '\t' => ' ',
            c if c.is_control() => '·',
            c => c,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(text: &str) -> JsonDoc {
        JsonDoc::parse(Bytes::from(text.to_owned())).unwrap()
    }

    fn err(text: &[u8]) -> JsonError {
        JsonDoc::parse(Bytes::copy_from_slice(text)).unwrap_err()
    }

    fn tree(text: &str) -> JsonTree {
        JsonTree::new(doc(text))
    }

    /// The drawn lines as `depth key: preview` strings.
    fn shown(tree: &mut JsonTree, height: usize) -> Vec<String> {
        tree.lines(height)
            .into_iter()
            .map(|l| {
                let key = l.key.map(|k| format!("{k}: ")).unwrap_or_default();
                format!("{}{key}{}", "  ".repeat(l.depth), l.preview)
            })
            .collect()
    }

    fn find_key(doc: &JsonDoc, key: &str) -> NodeId {
        (0..doc.node_count() as u32).map(NodeId).find(|&id| doc.key(id).as_deref() == Some(key)).unwrap()
    }

    #[test]
    fn parses_valid_documents() {
        for text in [
            "0",
            "-0.5e+10",
            "1E-2",
            "true",
            " null ",
            "\"\"",
            "\"a\\u00e9\\ud83d\\ude00\\n\\\"\"",
            "{}",
            "[]",
            "[[],{}]",
            "{\"a\":{\"b\":[1,2,{\"c\":null}]},\"d\":\"x\"}",
            "\n\t{ \"a\" : [ 1 , 2 ] }\r\n",
            "\"é ☃ 😀\"",
        ] {
            assert!(JsonDoc::parse(Bytes::from(text)).is_ok(), "{text}");
        }
    }

    #[test]
    fn counts_and_links_nodes() {
        let d = doc(r#"{"a":{"b":[1,2,{"c":null}]},"d":"x"}"#);
        assert_eq!(d.node_count(), 8);
        assert_eq!(d.heap_bytes(), 8 * 16, "16 bytes per node, no slack after parsing");
        assert_eq!(d.child_count(NodeId::ROOT), 2);
        let kids: Vec<_> = d.children(NodeId::ROOT).collect();
        assert_eq!(kids, vec![NodeId(1), NodeId(7)]);
        assert_eq!(d.key(NodeId(7)).as_deref(), Some("d"));
        assert_eq!(d.kind(NodeId(3)), Kind::Number);
        assert_eq!(d.kind(NodeId(5)), Kind::Object);
        assert_eq!(d.kind(NodeId(6)), Kind::Null);
        assert_eq!(d.depth(NodeId(6)), 4);
        assert_eq!(d.text(NodeId(1)), br#"{"b":[1,2,{"c":null}]}"#);
        assert_eq!(d.text(NodeId(2)), br#"[1,2,{"c":null}]"#);
        assert_eq!(d.text(NodeId(7)), br#""x""#);
        assert_eq!(d.text(NodeId::ROOT), d.body().as_ref());
        assert_eq!(d.raw_key(NodeId(1)), Some(&b"a"[..]));
        assert_eq!(d.key(NodeId(3)), None);
    }

    #[test]
    fn text_of_containers_with_whitespace() {
        let d = doc("[ { \"a\" : [ 1 , [ ] ] } , 2 ]");
        assert_eq!(d.text(NodeId(1)), b"{ \"a\" : [ 1 , [ ] ] }");
        assert_eq!(d.text(NodeId(2)), b"[ 1 , [ ] ]");
        assert_eq!(d.text(NodeId(4)), b"[ ]");
        assert_eq!(d.text(NodeId(5)), b"2");
    }

    #[test]
    fn reports_error_positions() {
        let e = err(b"{\"a\":1,\n  \"b\" 2}");
        assert_eq!((e.offset, e.line, e.column), (14, 2, 7));
        assert_eq!(e.kind, JsonErrorKind::Unexpected { found: '2', expected: "':'" });
        assert!(e.to_string().contains("line 2, column 7"), "{e}");

        let cases: &[(&[u8], usize, JsonErrorKind)] = &[
            (b"", 0, JsonErrorKind::Empty),
            (b"  \n ", 4, JsonErrorKind::Empty),
            (b"[1,]", 3, JsonErrorKind::Unexpected { found: ']', expected: "a value" }),
            (b"{\"a\":1,}", 7, JsonErrorKind::Unexpected { found: '}', expected: "a string key" }),
            (b"[1 2]", 3, JsonErrorKind::Unexpected { found: '2', expected: "',' or ']'" }),
            (b"[1", 2, JsonErrorKind::UnexpectedEnd("',' or ']'")),
            (b"\"abc", 4, JsonErrorKind::UnexpectedEnd("'\"'")),
            (b"\"a\\x\"", 2, JsonErrorKind::InvalidEscape),
            (b"\"\\u12g4\"", 1, JsonErrorKind::InvalidEscape),
            (b"\"a\tb\"", 2, JsonErrorKind::ControlCharacter),
            (b"01", 1, JsonErrorKind::InvalidNumber),
            (b"-", 1, JsonErrorKind::InvalidNumber),
            (b"1.", 2, JsonErrorKind::InvalidNumber),
            (b"1e+", 3, JsonErrorKind::InvalidNumber),
            (b"[.5]", 1, JsonErrorKind::Unexpected { found: '.', expected: "a value" }),
            (b"tru", 3, JsonErrorKind::UnexpectedEnd("'true'")),
            (b"nul1", 3, JsonErrorKind::Unexpected { found: '1', expected: "'null'" }),
            (b"{} x", 3, JsonErrorKind::TrailingData('x')),
            (b"[1] [2]", 4, JsonErrorKind::TrailingData('[')),
            (b"\"\xff\"", 1, JsonErrorKind::InvalidUtf8),
            (b"[\"ok\", \"\xc3\"]", 8, JsonErrorKind::InvalidUtf8),
            (b"{'a':1}", 1, JsonErrorKind::Unexpected { found: '\'', expected: "a string key" }),
        ];
        for (text, offset, kind) in cases {
            let e = err(text);
            assert_eq!((e.offset, &e.kind), (*offset, kind), "{:?}", String::from_utf8_lossy(text));
        }
        // An earlier syntax error wins over later bad UTF-8, and the other way round.
        assert_eq!(err(b"[x, \"\xff\"]").kind, JsonErrorKind::Unexpected { found: 'x', expected: "a value" });
        assert_eq!(err(b"[\"\xff\", x]").kind, JsonErrorKind::InvalidUtf8);
        // Columns count characters, not bytes.
        assert_eq!(err("\"é\" x".as_bytes()).column, 5);
    }

    #[test]
    fn limits_depth_without_recursion() {
        let ok = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        assert!(JsonDoc::parse(Bytes::from(ok)).is_ok());
        let deep = format!("{}{}", "[".repeat(MAX_DEPTH + 1), "]".repeat(MAX_DEPTH + 1));
        let e = err(deep.as_bytes());
        assert_eq!((e.kind, e.offset), (JsonErrorKind::TooDeep, MAX_DEPTH));
        // Far deeper than any call stack would survive.
        let e = err("[".repeat(1_000_000).as_bytes());
        assert_eq!(e.kind, JsonErrorKind::TooDeep);
    }

    #[test]
    fn unescapes_keys_and_previews() {
        let d = doc(r#"{"a\"b\\c\u00e9\ud83d\ude00\n":"line\nnext\t\u0001","lone\ud800":1}"#);
        let first = NodeId(1);
        assert_eq!(d.key(first).as_deref(), Some("a\"b\\cé😀\n"));
        assert_eq!(d.scalar_preview(first, 100), "\"line\\nnext\\t\\u0001\"");
        assert_eq!(d.key(NodeId(2)).as_deref(), Some("lone\u{fffd}"));
        assert_eq!(d.scalar_preview(first, 4), "\"line…");
        let mut t = JsonTree::new(d);
        let lines = t.lines(10);
        assert_eq!(lines[1].key.as_deref(), Some("a\"b\\cé😀\\n"));
    }

    #[test]
    fn previews_long_strings_without_decoding_them_all() {
        let long = "x".repeat(1_000_000);
        let d = doc(&format!("[\"{long}\",\"ü{long}\"]"));
        let p = d.scalar_preview(NodeId(1), 10);
        assert_eq!(p, format!("\"{}…", "x".repeat(10)));
        let p = d.scalar_preview(NodeId(2), 3);
        assert_eq!(p, "\"üxx…");
        assert_eq!(d.text(NodeId(2)).len(), long.len() + 4);
    }

    #[test]
    fn pretty_prints_small_nodes_in_order() {
        let d = doc(r#"{"z":1,"a":{"s":"x,{y}:\"","e":[],"o":{}},"l":[true,null]}"#);
        let pretty = d.pretty(NodeId::ROOT, 1000).unwrap();
        let expected = "{\n  \"z\": 1,\n  \"a\": {\n    \"s\": \"x,{y}:\\\"\",\n    \"e\": [],\n    \"o\": {}\n  },\n  \"l\": [\n    true,\n    null\n  ]\n}";
        assert_eq!(pretty, expected);
        let reparsed: serde_json::Value = serde_json::from_str(&pretty).unwrap();
        let original: serde_json::Value = serde_json::from_slice(d.body()).unwrap();
        assert_eq!(reparsed, original);
        assert_eq!(d.pretty(NodeId::ROOT, 10), None);
    }

    const SAMPLE: &str = r#"{"id":"ord_1","customer":{"name":"Ada","address":{"city":"London","zip":"N1"}},"items":[{"sku":"A","qty":2},{"sku":"B","qty":1}],"paid":true}"#;

    #[test]
    fn small_documents_open_expanded() {
        let mut t = tree(SAMPLE);
        assert_eq!(
            shown(&mut t, 100),
            vec![
                "{",
                "  id: \"ord_1\"",
                "  customer: {",
                "    name: \"Ada\"",
                "    address: {",
                "      city: \"London\"",
                "      zip: \"N1\"",
                "  items: [",
                "    {",
                "      sku: \"A\"",
                "      qty: 2",
                "    {",
                "      sku: \"B\"",
                "      qty: 1",
                "  paid: true",
            ]
        );
    }

    #[test]
    fn collapse_expand_and_all() {
        let mut t = tree(SAMPLE);
        let customer = find_key(t.doc(), "customer");
        t.select(customer);
        t.toggle();
        assert!(!t.is_expanded(customer));
        let lines = shown(&mut t, 100);
        assert_eq!(lines[2], "  customer: {…} 2 keys");
        assert_eq!(lines[3], "  items: [");
        t.toggle();
        assert!(t.is_expanded(customer));

        t.collapse_all();
        assert_eq!(
            shown(&mut t, 100),
            vec!["{", "  id: \"ord_1\"", "  customer: {…} 2 keys", "  items: […] 2 items", "  paid: true"]
        );
        // The cursor was on a now-visible node and stays there.
        assert_eq!(t.cursor(), customer);

        t.expand_all();
        assert_eq!(shown(&mut t, 100).len(), 15);

        // Collapsing all while deep inside pulls the cursor out to a visible ancestor.
        let zip = find_key(t.doc(), "zip");
        t.select(zip);
        t.collapse_all();
        assert_eq!(t.cursor(), customer);

        // Expanding one node under collapse-all, then its child.
        t.expand();
        let lines = shown(&mut t, 100);
        assert_eq!(lines[3], "    name: \"Ada\"");
        assert_eq!(lines[4], "    address: {…} 2 keys");
        t.down();
        t.down();
        t.expand();
        assert_eq!(shown(&mut t, 100)[5], "      city: \"London\"");
        t.collapse();
        assert_eq!(shown(&mut t, 100).len(), 7);
        // Scalars and empty containers neither fold nor unfold.
        let mut t = tree("[1,[]]");
        t.down();
        t.toggle();
        t.down();
        t.toggle();
        assert_eq!(shown(&mut t, 10), vec!["[", "  1", "  []"]);
    }

    #[test]
    fn large_documents_open_two_levels_deep() {
        let records: Vec<String> = (0..500).map(|i| format!(r#"{{"id":{i},"tags":["a","b"]}}"#)).collect();
        let mut t = tree(&format!("[{}]", records.join(",")));
        assert!(t.doc().node_count() >= EXPAND_ALL_BELOW);
        assert_eq!(shown(&mut t, 4), vec!["[", "  {", "    id: 0", "    tags: […] 2 items"]);
        t.collapse_all();
        assert_eq!(shown(&mut t, 3), vec!["[", "  {…} 2 keys", "  {…} 2 keys"]);
    }

    #[test]
    fn moves_up_down_home_end_and_parent() {
        let mut t = tree(SAMPLE);
        t.up();
        assert_eq!(t.cursor(), NodeId::ROOT);
        t.down();
        t.down();
        t.down();
        assert_eq!(t.doc().key(t.cursor()).as_deref(), Some("name"));
        t.to_parent();
        assert_eq!(t.doc().key(t.cursor()).as_deref(), Some("customer"));
        t.collapse();
        t.down();
        assert_eq!(t.doc().key(t.cursor()).as_deref(), Some("items"));
        t.up();
        assert_eq!(t.doc().key(t.cursor()).as_deref(), Some("customer"));
        t.end();
        assert_eq!(t.doc().key(t.cursor()).as_deref(), Some("paid"));
        assert_eq!(t.percent(), 100);
        t.up();
        assert_eq!(t.doc().key(t.cursor()).as_deref(), Some("qty"));
        t.up();
        assert_eq!(t.doc().key(t.cursor()).as_deref(), Some("sku"));
        t.home();
        assert_eq!(t.cursor(), NodeId::ROOT);
        assert_eq!(t.percent(), 0);
    }

    #[test]
    fn up_lands_on_last_visible_descendant() {
        let mut t = tree(r#"[{"a":{"b":{"c":1}}},2]"#);
        t.end();
        t.up();
        assert_eq!(t.doc().key(t.cursor()).as_deref(), Some("c"));
        t.home();
        t.down();
        t.down();
        t.collapse(); // "a"
        t.end();
        t.up();
        assert_eq!(t.doc().key(t.cursor()).as_deref(), Some("a"));
    }

    #[test]
    fn pages_through_a_long_array() {
        let items: Vec<String> = (0..100).map(|i| i.to_string()).collect();
        let mut t = tree(&format!("[{}]", items.join(",")));
        let first = shown(&mut t, 10);
        assert_eq!(first[0], "[");
        assert_eq!(first[9], "  8");
        t.page_down(10);
        let page = shown(&mut t, 10);
        assert_eq!(page[0], "  9");
        assert_eq!(t.doc().scalar_preview(t.cursor(), 10), "9");
        for _ in 0..20 {
            t.page_down(10);
        }
        let last = shown(&mut t, 10);
        assert_eq!(last.len(), 10, "the last page stays full");
        assert_eq!(last[9], "  99");
        assert_eq!(t.percent(), 100);
        t.page_up(10);
        let page = shown(&mut t, 10);
        assert_eq!(page[0], "  80");
        assert_eq!(t.doc().scalar_preview(t.cursor(), 10), "89");
        for _ in 0..20 {
            t.page_up(10);
        }
        assert_eq!(t.cursor(), NodeId::ROOT);
        // Moving the cursor past the bottom scrolls by one line.
        t.home();
        for _ in 0..10 {
            t.down();
        }
        assert_eq!(shown(&mut t, 10)[0], "  0");
    }

    #[test]
    fn search_reveals_a_nested_value() {
        let mut t = tree(SAMPLE);
        t.collapse_all();
        let mut s = Searcher::new("LONDON");
        let hit = t.find_next(&mut s, 0).unwrap();
        assert_eq!(&t.doc().body()[hit..hit + 6], b"London");
        let city = find_key(t.doc(), "city");
        assert_eq!(t.cursor(), city);
        let lines = shown(&mut t, 100);
        assert!(lines.contains(&"      city: \"London\"".to_owned()), "{lines:?}");
        assert!(t.find_next(&mut s, hit + 1).is_none());
        // Searching backwards from the end, and hits in keys.
        let mut s = Searcher::new("sku");
        let last = t.find_prev(&mut s, t.doc().body().len()).unwrap();
        assert_eq!(t.doc().key(t.cursor()).as_deref(), Some("sku"));
        let first = t.find_prev(&mut s, last).unwrap();
        assert!(first < last);
        assert_eq!(s.count(t.doc().body(), last), (1, 2));
        assert!(t.find_prev(&mut s, first).is_none());
    }

    #[test]
    fn searcher_crosses_chunk_boundaries() {
        let mut hay = vec![b'.'; SEARCH_CHUNK * 3];
        let at = SEARCH_CHUNK - 2;
        hay[at..at + 5].copy_from_slice(b"NeEdL");
        hay[2 * SEARCH_CHUNK + 7..2 * SEARCH_CHUNK + 12].copy_from_slice(b"needl");
        let mut s = Searcher::new("needl");
        assert_eq!(s.find(&hay, 0), Some(at));
        assert_eq!(s.find(&hay, at + 1), Some(2 * SEARCH_CHUNK + 7));
        assert_eq!(s.rfind(&hay, hay.len()), Some(2 * SEARCH_CHUNK + 7));
        assert_eq!(s.rfind(&hay, 2 * SEARCH_CHUNK + 7), Some(at));
        assert_eq!(s.rfind(&hay, at + 4), Some(at));
        assert_eq!(s.rfind(&hay, at), None);
        assert_eq!(s.count(&hay, usize::MAX), (2, 2));
        assert_eq!(s.count(&hay, at + 1), (1, 2));
        let mut s = Searcher::new("..");
        assert_eq!(s.count(b"....", 4), (3, 3));
        assert_eq!(Searcher::new("").find(&hay, 0), None);
    }

    #[test]
    fn maps_offsets_to_nodes() {
        let d = doc(r#"{"a":[1,22],"bb":"x"}"#);
        assert_eq!(d.node_at(0), NodeId::ROOT);
        assert_eq!(d.node_at(1), NodeId(1)); // the key "a"
        assert_eq!(d.node_at(8), NodeId(3)); // inside 22
        assert_eq!(d.node_at(13), NodeId(4)); // the key "bb"
        assert_eq!(d.node_at(1000), NodeId(4));
    }

    #[test]
    fn raw_lines() {
        let text = b"one\r\ntwo\n\nfour\n";
        let idx = LineIndex::new(text);
        assert_eq!(idx.len(), 4);
        assert_eq!(idx.line(text, 0), b"one");
        assert_eq!(idx.line(text, 2), b"");
        assert_eq!(idx.line(text, 3), b"four");
        assert_eq!(idx.line(text, 9), b"");
        assert_eq!(idx.line_of(6), 1);
        assert_eq!(LineIndex::new(b"").len(), 1);
        assert_eq!(visible_text("aé\tb\u{1}c".as_bytes(), 0, 4), "aé b");
        assert_eq!(visible_text("aé\tb\u{1}c".as_bytes(), 2, 10), " b·c");
        assert_eq!(visible_text(&[b'x'; 100_000], 5, 3), "xxx");
    }

    use crate::sandbox::rng::Rng;

    fn gen_value(rng: &mut Rng, depth: usize, out: &mut String) {
        let ws = |rng: &mut Rng, out: &mut String| {
            if rng.below(4) == 0 {
                out.push_str([" ", "\n  ", "\t", "\r\n"][rng.below(4) as usize]);
            }
        };
        let pick = if depth > 6 { rng.below(4) } else { rng.below(6) };
        match pick {
            0 => out.push_str(["true", "false", "null"][rng.below(3) as usize]),
            1 => out.push_str(["0", "-1", "3.25", "1e5", "-0.5E-3", "123456789", "2E+2"][rng.below(7) as usize]),
            2 | 3 => {
                out.push('"');
                for _ in 0..rng.below(6) {
                    out.push_str(
                        ["a", "\\n", "\\\"", "é", "\\u00e9", "\\ud83d\\ude00", " ", "\\\\", "☃"][rng.below(9) as usize],
                    );
                }
                out.push('"');
            }
            4 => {
                out.push('[');
                for i in 0..rng.below(5) {
                    if i > 0 {
                        out.push(',');
                    }
                    ws(rng, out);
                    gen_value(rng, depth + 1, out);
                    ws(rng, out);
                }
                out.push(']');
            }
            _ => {
                out.push('{');
                for i in 0..rng.below(5) {
                    if i > 0 {
                        out.push(',');
                    }
                    ws(rng, out);
                    out.push_str(&format!("\"k{}\"", rng.below(100)));
                    ws(rng, out);
                    out.push(':');
                    ws(rng, out);
                    gen_value(rng, depth + 1, out);
                }
                out.push('}');
            }
        }
    }

    /// serde_json keeps one value per key, so count members from the text's point of view by
    /// generating unique keys: duplicates are counted by position here.
    fn serde_count(v: &serde_json::Value) -> usize {
        1 + match v {
            serde_json::Value::Array(items) => items.iter().map(serde_count).sum(),
            serde_json::Value::Object(map) => map.values().map(serde_count).sum(),
            _ => 0,
        }
    }

    #[test]
    fn node_counts_match_serde_json_on_generated_documents() {
        let mut rng = Rng::new(0x9E37_79B9_7F4A_7C15);
        let mut checked = 0;
        for _ in 0..400 {
            let mut text = String::new();
            gen_value(&mut rng, 0, &mut text);
            let value: serde_json::Value = serde_json::from_str(&text).unwrap();
            let d = doc(&text);
            let has_duplicate_keys = (0..d.node_count() as u32).any(|i| {
                let keys: Vec<_> = d.children(NodeId(i)).filter_map(|c| d.key(c)).collect();
                let unique: HashSet<_> = keys.iter().collect();
                unique.len() != keys.len()
            });
            if !has_duplicate_keys {
                assert_eq!(d.node_count(), serde_count(&value), "{text}");
                checked += 1;
            }
            // Every node's text is itself a JSON value equal to serde's view of it.
            let root_text: serde_json::Value = serde_json::from_slice(d.text(NodeId::ROOT)).unwrap();
            assert_eq!(root_text, value);
            for i in 0..d.node_count() as u32 {
                let id = NodeId(i);
                assert!(serde_json::from_slice::<serde_json::Value>(d.text(id)).is_ok(), "{text} node {i}");
                if let Some(key) = d.key(id) {
                    let raw = d.raw_key(id).unwrap();
                    let quoted = format!("\"{}\"", String::from_utf8_lossy(raw));
                    assert_eq!(serde_json::from_str::<String>(&quoted).unwrap(), key);
                }
            }
        }
        assert!(checked > 200);
    }

    #[test]
    fn accepts_and_rejects_like_serde_json_on_mutations() {
        let mut rng = Rng::new(42);
        let alphabet = b"{}[],:\"\\ 0-1.eEtrufalsn\x01xu";
        for _ in 0..3000 {
            let mut text = String::new();
            gen_value(&mut rng, 0, &mut text);
            let mut bytes = text.into_bytes();
            for _ in 0..=rng.below(2) {
                if bytes.is_empty() {
                    break;
                }
                let at = rng.below(bytes.len() as u64) as usize;
                match rng.below(3) {
                    0 => bytes[at] = alphabet[rng.below(alphabet.len() as u64) as usize],
                    1 => {
                        bytes.remove(at);
                    }
                    _ => bytes.insert(at, alphabet[rng.below(alphabet.len() as u64) as usize]),
                }
            }
            let ours = JsonDoc::parse(Bytes::from(bytes.clone()));
            let theirs = serde_json::from_slice::<serde_json::Value>(&bytes);
            if let (Ok(_), Err(e)) = (&ours, &theirs) {
                // serde_json also rejects lone surrogates (reported as a surrogate or as an
                // unfinished `\u` escape after one) and out-of-range numbers, which the grammar
                // allows; the index only validates the grammar.
                let msg = e.to_string();
                if ["surrogate", "hex escape", "out of range"].iter().any(|m| msg.contains(m)) {
                    continue;
                }
            }
            assert_eq!(ours.is_ok(), theirs.is_ok(), "{:?}: {ours:?} vs {theirs:?}", String::from_utf8_lossy(&bytes));
        }
    }
}
