//! The fold and scroll state of the inspector's tree over a [`JsonDoc`], the inspector's
//! search, and the raw view's line index.
//!
//! Everything a key press does (paging, folding, expand or collapse all) costs time in
//! proportion to the screen height and the nesting depth, never to the size of the document.
//! No terminal code lives here, so the benchmarks and tests drive it directly.

use std::borrow::Cow;
use std::collections::HashSet;
use std::sync::Arc;

use memchr::memmem;

use crate::json_index::{JsonDoc, Kind, NodeId, MAX_BODY_LEN};

/// Documents with fewer nodes than this open fully expanded; bigger ones show two levels, so
/// that the first frame of a huge array is a readable list of records.
pub const EXPAND_ALL_BELOW: usize = 2_000;

/// Width cap for a drawn key or value: no terminal is wider, and a 1 MB string must not be
/// decoded to draw one line.
pub const PREVIEW_CHARS: usize = 512;

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
    doc: Arc<JsonDoc>,
    cursor: NodeId,
    top: NodeId,
    fold: Fold,
    flipped: HashSet<NodeId>,
    height: usize,
}

impl JsonTree {
    /// Opens a document with the cursor on the root, fully expanded when small.
    pub fn new(doc: impl Into<Arc<JsonDoc>>) -> JsonTree {
        let doc = doc.into();
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
        let key = doc.key_preview(id, 128);
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
        let hit = searcher.find(self.doc.body(), from)?;
        self.reveal(self.doc.node_at(hit));
        Some(hit)
    }

    /// Like [`JsonTree::find_next`], for the last match starting before byte `before`.
    pub fn find_prev(&mut self, searcher: &mut Searcher, before: usize) -> Option<usize> {
        let hit = searcher.rfind(self.doc.body(), before)?;
        self.reveal(self.doc.node_at(hit));
        Some(hit)
    }

    /// Scroll position as a percentage of the body's bytes before the cursor: exact enough,
    /// and free, unlike counting visible lines.
    pub fn percent(&self) -> u8 {
        if self.cursor == self.last_line() {
            return 100;
        }
        let len = self.doc.body().len().max(1);
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
#[path = "json_tree_tests.rs"]
mod tests;
