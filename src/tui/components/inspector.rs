//! The right-hand pane of every tab: the last response (or the selected record) as a foldable
//! JSON tree, as raw text, or as its headers, with status, timing and size above.
//!
//! Bodies can be tens of megabytes, so the pane keeps the bytes once, indexes JSON with
//! [`JsonTree`] and formats only the lines that fit on screen.
//!
//! Over 800 lines for a reason: the pane's three modes (tree, raw, headers), its search, its jq
//! filter and its copy all act on one body and one scroll state, and read best together.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Block;
use ratatui::Frame;

use unicode_width::UnicodeWidthStr;

use crate::format::human_bytes;
use crate::inert::inert;
use crate::json_index::{JsonDoc, JsonError, Kind};
use crate::tui::components::line_input::LineInput;
use crate::tui::json_tree::{visible_text, JsonTree, LineIndex, Searcher, TreeLine};
use crate::tui::theme::Theme;

/// Bodies up to this size are parsed into a `serde_json::Value` for [`Inspector::selected_json`];
/// forms only need a record, and a DOM of a huge body would cost 14 times its size.
const SELECTED_JSON_LIMIT: usize = 1024 * 1024;

/// The most `y` copies: terminals cap OSC 52 clipboard writes, and a bigger paste is no use.
const COPY_LIMIT: usize = 1024 * 1024;

/// The largest body a `|` filter runs on: jq holds the whole document as values (several times
/// its size) and a filter may walk all of it, so beyond this the pane says so instead of freezing.
pub const FILTER_LIMIT: usize = 64 * 1024 * 1024;

/// Columns moved per horizontal scroll step in the raw view.
const HSCROLL_STEP: usize = 8;

/// One response as the inspector shows it; built by the app from a call's result or from the
/// selected record.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ResponseView {
    /// The pane's title: the operation's name, or what the record is.
    pub title: String,
    /// `None` when there was no HTTP exchange (a record from a list, a network error).
    pub status: Option<u16>,
    /// Time to the last byte; zero hides it (nothing was timed).
    pub duration: Duration,
    /// Already redacted, e.g. `GET http://127.0.0.1:7701/channels?limit=100`.
    pub request_line: String,
    /// Response headers in received order, for the headers view.
    pub headers: Vec<(String, String)>,
    /// The body as received; the inspector indexes it in place and never copies it.
    pub body: Bytes,
    /// Decides JSON versus text versus binary, before sniffing the first byte.
    pub content_type: Option<String>,
}

/// What the body area shows; switched with `t`, `w` and `H`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InspectorMode {
    Tree,
    Raw,
    Headers,
}

/// How the body was understood when it arrived, decided once in [`Inspector::show`].
#[derive(Debug)]
enum Body {
    Nothing,
    Empty,
    Json(Box<JsonTree>),
    /// UTF-8 text; `note` says why JSON-looking text is shown raw.
    Text {
        note: Option<String>,
    },
    Binary,
}

/// Raw view scroll: the line index is built on first use, since the tree view never needs it.
#[derive(Debug, Default)]
struct RawScroll {
    index: Option<LineIndex>,
    top: usize,
    /// Horizontal scroll in bytes, so a 50 MB one-line body scrolls without counting characters.
    left: usize,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum SearchNote {
    Match { ordinal: usize, total: usize, forward: bool, wrapped: bool },
    NoMatch(String),
}

#[derive(Debug, Default)]
struct Search {
    /// The `/` box's text while it is open.
    input: Option<LineInput>,
    needle: String,
    /// Offset of the last match, where `n` and `N` continue from.
    last: Option<usize>,
    ordinal: usize,
    total: usize,
    note: Option<SearchNote>,
}

/// The `|` filter: typed on its own line, applied on Enter (never per keystroke: a body may be
/// tens of megabytes), remembered per view so a refreshed list is filtered the same way.
#[derive(Debug, Default)]
struct JqFilter {
    /// The `|` line's text while it is open.
    input: Option<LineInput>,
    /// The filter of each view, by its title (`messages_list`, `channels record`).
    by_view: HashMap<String, String>,
    /// The filter whose result is shown, and how many results it gave.
    applied: Option<(String, usize)>,
    /// Why the filter of this view gave nothing to show (compile or runtime error, too large).
    error: Option<String>,
    /// The filter running off the UI thread, within its budget, until its result comes back.
    running: Option<JqJob>,
    /// Called from the filter's thread when its result is ready, so the console shows it at
    /// once rather than at its next tick.
    waker: Option<Waker>,
}

/// Wakes whoever shows the inspector: a finished filter's result is waiting.
#[derive(Clone)]
pub struct Waker(pub Arc<dyn Fn() + Send + Sync>);

impl std::fmt::Debug for Waker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Waker")
    }
}

/// A jq filter at work on a worker ([`crate::jq::run_budgeted`]): `Esc` cancels it.
#[derive(Debug)]
struct JqJob {
    code: String,
    started: std::time::Instant,
    cancel: Arc<AtomicBool>,
    result: std::sync::mpsc::Receiver<Result<(JsonTree, usize), String>>,
}

/// The inspector pane: owns the shown response and all of its view state.
#[derive(Debug)]
pub struct Inspector {
    view: Option<ResponseView>,
    /// What is shown: the response's body, or the result of the `|` filter.
    body: Body,
    /// The response's own body while a filter's result is shown instead.
    unfiltered: Option<Body>,
    jq: JqFilter,
    mode: InspectorMode,
    raw: RawScroll,
    headers_top: usize,
    search: Search,
    /// Body rows at the last draw: the size of a page.
    page: usize,
    /// `p` in the raw view: the JSON body as received rather than pretty-printed.
    as_received: bool,
    /// The pretty-printed JSON body, made once per body when the raw view first shows it: the
    /// body it was made from, and its text (`None` when too large to re-indent).
    pretty: Option<(Bytes, Option<Bytes>)>,
}

/// The largest JSON body the raw view pretty-prints; a larger one is shown as received.
const PRETTY_LIMIT: usize = 8 * 1024 * 1024;

impl Default for Inspector {
    fn default() -> Inspector {
        Inspector::new()
    }
}

impl Inspector {
    /// An empty pane, until the first response arrives.
    pub fn new() -> Inspector {
        Inspector {
            view: None,
            body: Body::Nothing,
            unfiltered: None,
            jq: JqFilter::default(),
            mode: InspectorMode::Tree,
            raw: RawScroll::default(),
            headers_top: 0,
            search: Search::default(),
            page: 10,
            as_received: false,
            pretty: None,
        }
    }

    /// Shows a response, replacing the previous one. JSON (by content type or first byte) is
    /// indexed here, once; anything else is shown as text or summarised when binary. Big
    /// bodies are indexed off the UI thread and shown with [`Inspector::show_indexed`].
    pub fn show(&mut self, view: ResponseView) {
        let body = classify(&view, None);
        self.show_as(view, body);
    }

    /// Shows a response whose body was indexed already (or failed to be): the index is shared
    /// with the browser's rows, not built again.
    pub fn show_indexed(&mut self, view: ResponseView, indexed: Result<Arc<JsonDoc>, JsonError>) {
        let body = classify(&view, Some(indexed));
        self.show_as(view, body);
    }

    fn show_as(&mut self, view: ResponseView, body: Body) {
        self.body = body;
        self.unfiltered = None;
        self.cancel_filter();
        self.jq.input = None;
        self.jq.applied = None;
        self.jq.error = None;
        self.raw = RawScroll::default();
        self.headers_top = 0;
        self.search.input = None;
        self.search.last = None;
        self.search.note = None;
        self.mode = match (&self.body, self.mode) {
            (_, InspectorMode::Headers) => InspectorMode::Headers,
            (Body::Json(_), _) => InspectorMode::Tree,
            _ => InspectorMode::Raw,
        };
        let filter = self.jq.by_view.get(&view.title).cloned();
        self.view = Some(view);
        if let Some(code) = filter {
            self.apply_filter(&code);
        }
    }

    /// Runs `code` over the response and shows its result as the tree; an empty filter shows
    /// the whole response again. Remembered for this view either way.
    fn apply_filter(&mut self, code: &str) {
        self.cancel_filter();
        let Some(view) = self.view.as_ref() else { return };
        let title = view.title.clone();
        if let Some(original) = self.unfiltered.take() {
            self.body = original;
        }
        self.jq.applied = None;
        self.jq.error = None;
        let code = code.trim();
        if code.is_empty() {
            self.jq.by_view.remove(&title);
            if self.mode != InspectorMode::Headers {
                self.mode = self.body_mode();
            }
            return;
        }
        self.jq.by_view.insert(title, code.to_owned());
        if let Err(error) = filter_input(code, &self.body, &view.body, FILTER_LIMIT) {
            self.jq.error = Some(error);
            return;
        }
        // Off the UI thread, within its budget: the keys keep working, and Esc stops it.
        let (send, result) = std::sync::mpsc::channel();
        let cancel = Arc::new(AtomicBool::new(false));
        let job = JqJob { code: code.to_owned(), started: std::time::Instant::now(), cancel: cancel.clone(), result };
        let (code, body, waker) = (code.to_owned(), view.body.clone(), self.jq.waker.clone());
        std::thread::spawn(move || {
            let outputs =
                crate::jq::run_budgeted(crate::jq::Runner::shared(), &code, &body, crate::jq::Budget::DEFAULT, &cancel);
            // Nobody waits for a cancelled filter.
            let _ = send.send(outputs.and_then(result_tree));
            if let Some(Waker(wake)) = waker {
                wake();
            }
        });
        self.jq.running = Some(job);
    }

    /// Whom a finished filter wakes (see [`Waker`]).
    pub fn set_waker(&mut self, waker: Waker) {
        self.jq.waker = Some(waker);
    }

    /// Whether a filter is running.
    pub fn is_filtering(&self) -> bool {
        self.jq.running.is_some()
    }

    /// Shows the running filter's result when it has come back; true when something changed.
    pub fn poll_filter(&mut self) -> bool {
        let Some(job) = self.jq.running.as_ref() else { return false };
        let outcome = match job.result.try_recv() {
            Ok(outcome) => outcome,
            Err(std::sync::mpsc::TryRecvError::Empty) => return false,
            Err(std::sync::mpsc::TryRecvError::Disconnected) => Err("jq: its worker stopped with no answer".into()),
        };
        let code = job.code.clone();
        self.jq.running = None;
        match outcome {
            Ok((tree, count)) => {
                self.unfiltered = Some(std::mem::replace(&mut self.body, Body::Json(Box::new(tree))));
                self.jq.applied = Some((code, count));
                self.raw = RawScroll::default();
                self.search.last = None;
                self.search.note = None;
                if self.mode != InspectorMode::Headers {
                    self.mode = InspectorMode::Tree;
                }
            }
            Err(error) => self.jq.error = Some(error),
        }
        true
    }

    /// Says under the filter line that its filter was stopped.
    pub fn note_cancelled_filter(&mut self) {
        self.jq.error = Some("jq: cancelled (| runs it again)".into());
    }

    /// Waits for the running filter (tests and screenshots, which look at its result).
    pub fn wait_filter(&mut self, at_most: Duration) {
        let until = std::time::Instant::now() + at_most;
        while self.is_filtering() && std::time::Instant::now() < until {
            if !self.poll_filter() {
                std::thread::sleep(Duration::from_millis(2));
            }
        }
    }

    /// Stops the running filter, if any; true when one was running.
    pub fn cancel_filter(&mut self) -> bool {
        match self.jq.running.take() {
            Some(job) => {
                job.cancel.store(true, Ordering::Relaxed);
                true
            }
            None => false,
        }
    }

    /// The filter of the shown view, if any (applied or failing).
    pub fn filter(&self) -> Option<&str> {
        self.jq.by_view.get(&self.view.as_ref()?.title).map(String::as_str)
    }

    /// The text the search and the raw view read: the filter's result or the response's body.
    /// The text the raw view shows and `/` searches there: a JSON body pretty-printed (unless
    /// `p` asked for it as received, or it is too large), any other as received.
    fn shown_bytes(&mut self) -> Bytes {
        let received = match &self.body {
            Body::Json(tree) => tree.doc().body().clone(),
            _ => return self.view.as_ref().map(|v| v.body.clone()).unwrap_or_default(),
        };
        // The tree's search and selection address the body as received.
        if self.as_received || self.mode != InspectorMode::Raw {
            return received;
        }
        let stale = self
            .pretty
            .as_ref()
            .is_none_or(|(from, _)| from.as_ptr() != received.as_ptr() || from.len() != received.len());
        if stale {
            let pretty =
                (received.len() <= PRETTY_LIMIT).then(|| Bytes::from(crate::json_index::pretty_print(&received)));
            self.pretty = Some((received.clone(), pretty));
        }
        self.pretty.as_ref().and_then(|(_, pretty)| pretty.clone()).unwrap_or(received)
    }

    /// Forgets the shown response (e.g. when the tab's target changes).
    pub fn clear(&mut self) {
        *self = Inspector { mode: self.mode, ..Inspector::new() };
    }

    /// The shown response, for the app to copy or resend from.
    pub fn view(&self) -> Option<&ResponseView> {
        self.view.as_ref()
    }

    /// The current body mode.
    pub fn mode(&self) -> InspectorMode {
        self.mode
    }

    /// True while the `/` box is open, so the app sends letters here instead of treating them
    /// as global keys.
    /// The text of the `/` or `|` prompt being typed.
    pub fn typed(&self) -> Option<&str> {
        self.search.input.as_ref().or(self.jq.input.as_ref()).map(LineInput::text)
    }

    pub fn is_typing(&self) -> bool {
        self.search.input.is_some() || self.jq.input.is_some()
    }

    /// Pasted text goes into the `/` box when it is open; false when nothing here takes it.
    pub fn paste(&mut self, text: &str) -> bool {
        match self.search.input.as_mut().or(self.jq.input.as_mut()) {
            Some(input) => {
                input.insert_str(text);
                true
            }
            None => false,
        }
    }

    /// The selected node as a value, for pre-filling forms from the selected record; `None`
    /// when nothing is selected or it is too big to be worth a DOM.
    pub fn selected_json(&self) -> Option<serde_json::Value> {
        let Body::Json(tree) = &self.body else { return None };
        let text = tree.doc().text(tree.cursor());
        if text.len() > SELECTED_JSON_LIMIT {
            return None;
        }
        serde_json::from_slice(text).ok()
    }

    /// What `y` copies: a selected string's value (an id, a URL) without quotes, any other
    /// node pretty-printed, or the whole text body; `None` when there is nothing to copy or it
    /// is too big for a terminal clipboard.
    pub fn copy_text(&self) -> Option<String> {
        match &self.body {
            Body::Json(tree) => {
                let text = tree.doc().text(tree.cursor());
                if text.first() == Some(&b'"') {
                    return serde_json::from_slice::<String>(text).ok();
                }
                tree.doc().pretty(tree.cursor(), COPY_LIMIT)
            }
            Body::Text { .. } => {
                let body = &self.view.as_ref()?.body;
                (body.len() <= COPY_LIMIT).then(|| String::from_utf8_lossy(body).into_owned())
            }
            Body::Nothing | Body::Empty | Body::Binary => None,
        }
    }

    /// Keys and what they do, for the `?` overlay.
    pub fn help() -> &'static [(&'static str, &'static str)] {
        &[
            ("↑↓ / j k", "move"),
            ("PgUp PgDn / Ctrl-u Ctrl-d", "page"),
            ("g / G", "first / last line"),
            ("Enter / Space", "fold or unfold the node"),
            ("→ / l", "unfold, or step into the node"),
            ("← / h", "fold, or go to the parent"),
            ("e / c", "expand all / collapse all"),
            ("t / w / H", "tree / raw / headers"),
            ("p", "raw: JSON pretty-printed or as received"),
            ("/", "search the body"),
            ("|", "jq filter: Enter shows its result, empty clears"),
            ("y", "copy the selected value (or the text) to the clipboard"),
            ("n / N", "next / previous match"),
            ("Esc", "back to the browser, from any depth"),
        ]
    }

    /// A click `row` lines below the pane's top edge: selects the tree node drawn there.
    /// False when that row holds none (a border, the summary, raw text).
    pub fn select_at(&mut self, row: u16) -> bool {
        let heading = 1 + self.view.as_ref().map_or(0, |v| 1 + usize::from(!v.request_line.is_empty()));
        let Some(line) = usize::from(row).checked_sub(heading) else { return false };
        let Body::Json(tree) = &mut self.body else { return false };
        if self.mode != InspectorMode::Tree || line >= self.page {
            return false;
        }
        // The lines of the last draw (same height, so nothing scrolls).
        let Some(node) = tree.lines(self.page).get(line).map(|l| l.node) else { return false };
        tree.select(node);
        true
    }

    fn has_text(&self) -> bool {
        matches!(self.body, Body::Json(_) | Body::Text { .. })
    }

    /// Handles a key; false when it means nothing here, so the app can use it (e.g. `h` at
    /// the root moves focus back to the browser).
    pub fn handle_key(&mut self, key: KeyEvent) -> bool {
        if key.kind == KeyEventKind::Release {
            return false;
        }
        if self.search.input.is_some() {
            self.search_key(key);
            return true;
        }
        if self.jq.input.is_some() {
            self.filter_key(key);
            return true;
        }
        if key.code == KeyCode::Esc && self.cancel_filter() {
            self.note_cancelled_filter();
            return true;
        }
        if key.modifiers.intersects(KeyModifiers::ALT) {
            return false;
        }
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match key.code {
            KeyCode::Char('t') if !ctrl && matches!(self.body, Body::Json(_)) => {
                self.mode = InspectorMode::Tree;
                true
            }
            KeyCode::Char('w') if !ctrl && self.view.is_some() => {
                self.mode = InspectorMode::Raw;
                true
            }
            KeyCode::Char('H') if !ctrl && self.view.is_some() => {
                self.mode = InspectorMode::Headers;
                true
            }
            // The raw view's JSON: pretty-printed, or the bytes as received.
            KeyCode::Char('p') if !ctrl && self.mode == InspectorMode::Raw && matches!(self.body, Body::Json(_)) => {
                self.as_received = !self.as_received;
                self.raw = RawScroll::default();
                self.search.last = None;
                true
            }
            KeyCode::Char('/') if !ctrl && self.has_text() => {
                if self.mode == InspectorMode::Headers {
                    self.mode = self.body_mode();
                }
                self.search.input = Some(LineInput::default());
                true
            }
            KeyCode::Char('|') if !ctrl && self.view.is_some() => {
                self.jq.input = Some(LineInput::new(self.filter().unwrap_or_default()));
                true
            }
            // The browser pages with `n`; here they step through matches, and are always ours.
            KeyCode::Char('n') if !ctrl => {
                self.search_step(true);
                true
            }
            KeyCode::Char('N') if !ctrl => {
                self.search_step(false);
                true
            }
            _ => match self.mode {
                InspectorMode::Tree => self.tree_key(key.code, ctrl),
                InspectorMode::Raw => self.raw_key(key.code, ctrl),
                InspectorMode::Headers => self.headers_key(key.code, ctrl),
            },
        }
    }

    fn body_mode(&self) -> InspectorMode {
        match self.body {
            Body::Json(_) => InspectorMode::Tree,
            _ => InspectorMode::Raw,
        }
    }

    fn tree_key(&mut self, code: KeyCode, ctrl: bool) -> bool {
        let page = self.page.max(1);
        let Body::Json(tree) = &mut self.body else { return false };
        match (code, ctrl) {
            (KeyCode::Up | KeyCode::Char('k'), false) => tree.up(),
            (KeyCode::Down | KeyCode::Char('j'), false) => tree.down(),
            (KeyCode::PageUp, _) | (KeyCode::Char('u'), true) => tree.page_up(page),
            (KeyCode::PageDown, _) | (KeyCode::Char('d'), true) => tree.page_down(page),
            (KeyCode::Home | KeyCode::Char('g'), false) => tree.home(),
            (KeyCode::End | KeyCode::Char('G'), false) => tree.end(),
            (KeyCode::Enter | KeyCode::Char(' '), false) => tree.toggle(),
            (KeyCode::Right | KeyCode::Char('l'), false) => {
                if tree.is_expanded(tree.cursor()) {
                    tree.down();
                } else {
                    tree.expand();
                }
            }
            (KeyCode::Left | KeyCode::Char('h'), false) => {
                if tree.is_expanded(tree.cursor()) {
                    tree.collapse();
                } else if tree.doc().parent(tree.cursor()).is_some() {
                    tree.to_parent();
                } else {
                    return false;
                }
            }
            (KeyCode::Char('e'), false) => tree.expand_all(),
            (KeyCode::Char('c'), false) => tree.collapse_all(),
            _ => return false,
        }
        true
    }

    fn raw_key(&mut self, code: KeyCode, ctrl: bool) -> bool {
        if !self.has_text() {
            return false;
        }
        let page = self.page.max(1);
        let raw = &mut self.raw;
        match (code, ctrl) {
            (KeyCode::Up | KeyCode::Char('k'), false) => raw.top = raw.top.saturating_sub(1),
            (KeyCode::Down | KeyCode::Char('j'), false) => raw.top = raw.top.saturating_add(1),
            (KeyCode::PageUp, _) | (KeyCode::Char('u'), true) => raw.top = raw.top.saturating_sub(page),
            (KeyCode::PageDown, _) | (KeyCode::Char('d'), true) => raw.top = raw.top.saturating_add(page),
            (KeyCode::Home | KeyCode::Char('g'), false) => {
                raw.top = 0;
                raw.left = 0;
            }
            // Clamped to the last page when drawn.
            (KeyCode::End | KeyCode::Char('G'), false) => raw.top = usize::MAX,
            (KeyCode::Right | KeyCode::Char('l'), false) => raw.left = raw.left.saturating_add(HSCROLL_STEP),
            (KeyCode::Left | KeyCode::Char('h'), false) if raw.left > 0 => {
                raw.left = raw.left.saturating_sub(HSCROLL_STEP);
            }
            (KeyCode::Char('0'), false) => raw.left = 0,
            _ => return false,
        }
        true
    }

    fn headers_key(&mut self, code: KeyCode, ctrl: bool) -> bool {
        let count = self.view.as_ref().map_or(0, |v| v.headers.len());
        let last = count.saturating_sub(1);
        let page = self.page.max(1);
        let top = &mut self.headers_top;
        match (code, ctrl) {
            (KeyCode::Up | KeyCode::Char('k'), false) => *top = top.saturating_sub(1),
            (KeyCode::Down | KeyCode::Char('j'), false) => *top = (*top + 1).min(last),
            (KeyCode::PageUp, _) | (KeyCode::Char('u'), true) => *top = top.saturating_sub(page),
            (KeyCode::PageDown, _) | (KeyCode::Char('d'), true) => *top = (*top + page).min(last),
            (KeyCode::Home | KeyCode::Char('g'), false) => *top = 0,
            (KeyCode::End | KeyCode::Char('G'), false) => *top = last,
            _ => return false,
        }
        true
    }

    fn search_key(&mut self, key: KeyEvent) {
        let Some(input) = self.search.input.as_mut() else { return };
        match key.code {
            KeyCode::Esc => self.search.input = None,
            KeyCode::Enter => {
                let needle = input.take();
                self.search.input = None;
                if !needle.is_empty() {
                    self.search.needle = needle;
                    self.search.last = None;
                    self.search_step(true);
                }
            }
            _ => {
                input.handle_key(&key);
            }
        }
    }

    fn filter_key(&mut self, key: KeyEvent) {
        let Some(input) = self.jq.input.as_mut() else { return };
        match key.code {
            KeyCode::Esc => self.jq.input = None,
            KeyCode::Enter => {
                let code = input.take();
                self.jq.input = None;
                self.apply_filter(&code);
            }
            _ => {
                input.handle_key(&key);
            }
        }
    }

    /// Where a new search starts: just after the selection (or the top raw line), like `/`
    /// in an editor.
    fn search_origin(&mut self) -> usize {
        match (&self.body, self.mode) {
            (Body::Json(tree), InspectorMode::Tree) => tree.doc().start_offset(tree.cursor()) + 1,
            _ => {
                let body = self.shown_bytes();
                let index = self.raw.index.get_or_insert_with(|| LineIndex::new(&body));
                index.start(self.raw.top.min(index.len().saturating_sub(1)))
            }
        }
    }

    /// Runs the search forwards or backwards from the last match, wrapping around once, and
    /// moves the view to the hit.
    fn search_step(&mut self, forward: bool) {
        if self.search.needle.is_empty() || !self.has_text() {
            return;
        }
        if self.view.is_none() {
            return;
        }
        let body = self.shown_bytes();
        let fresh = self.search.last.is_none();
        let origin = match self.search.last {
            Some(last) if forward => last + 1,
            Some(last) => last,
            None if forward => self.search_origin(),
            None => self.search_origin().saturating_sub(1),
        };
        let mut searcher = Searcher::new(&self.search.needle);
        let mut wrapped = false;
        let mut hit = if forward { searcher.find(&body, origin) } else { searcher.rfind(&body, origin) };
        if hit.is_none() {
            wrapped = true;
            hit = if forward { searcher.find(&body, 0) } else { searcher.rfind(&body, body.len()) };
        }
        let Some(hit) = hit else {
            self.search.last = None;
            self.search.note = Some(SearchNote::NoMatch(self.search.needle.clone()));
            return;
        };
        if fresh {
            let (before, total) = searcher.count(&body, hit);
            self.search.ordinal = before + 1;
            self.search.total = total;
        } else if wrapped {
            self.search.ordinal = if forward { 1 } else { self.search.total };
        } else if forward {
            self.search.ordinal += 1;
        } else {
            self.search.ordinal = self.search.ordinal.saturating_sub(1).max(1);
        }
        self.search.last = Some(hit);
        self.search.note =
            Some(SearchNote::Match { ordinal: self.search.ordinal, total: self.search.total, forward, wrapped });
        self.reveal_offset(&body, hit);
    }

    fn reveal_offset(&mut self, body: &[u8], offset: usize) {
        match (&mut self.body, self.mode) {
            (Body::Json(tree), InspectorMode::Tree) => {
                let node = tree.doc().node_at(offset);
                tree.reveal(node);
            }
            _ => {
                let index = self.raw.index.get_or_insert_with(|| LineIndex::new(body));
                let line = index.line_of(offset);
                // A third of a page of context above the hit.
                self.raw.top = line.saturating_sub(self.page / 3);
                let column = offset - index.start(line);
                self.raw.left = column.saturating_sub(HSCROLL_STEP * 2);
                if column < self.raw.left + HSCROLL_STEP * 4 && column < 40 {
                    self.raw.left = 0;
                }
            }
        }
    }

    /// Draws the pane. Formats only what fits, and draws nothing it cannot fit, down to 1x1.
    pub fn render(&mut self, frame: &mut Frame, area: Rect, theme: &Theme, focused: bool) {
        let area = area.intersection(frame.area());
        if area.is_empty() {
            return;
        }
        let inner = Block::bordered().inner(area);
        let buf = frame.buffer_mut();
        let mut rows = inner;
        if !inner.is_empty() {
            if let Some(view) = &self.view {
                draw_row(buf, &mut rows, summary_line(view, &self.body, theme));
                if !view.request_line.is_empty() {
                    draw_row(buf, &mut rows, Line::styled(inert(&view.request_line).into_owned(), theme.muted));
                }
            }
        }
        if let Some(input) = &self.search.input {
            // What is being typed matters more than one more body row.
            if rows.height >= 1 {
                let y = rows.bottom() - 1;
                rows.height -= 1;
                let mut spans = vec![Span::styled("/", theme.accent)];
                spans.extend(input.spans(usize::from(rows.width.saturating_sub(1)), theme.text, theme.selection));
                let line = Line::from(spans);
                buf.set_line(rows.x, y, &line, rows.width);
            }
        }
        self.draw_filter_bar(buf, &mut rows, theme);
        self.page = usize::from(rows.height).max(1);
        let percent = if rows.is_empty() { None } else { self.draw_body(buf, rows, theme, focused) };

        let title = self.view.as_ref().map_or("inspector", |v| v.title.as_str());
        let mut title = vec![Span::styled(format!(" {} ", inert(title)), theme.title)];
        if let Some((code, count)) = &self.jq.applied {
            let results = match count {
                1 => String::new(),
                n => format!(" · {n} results"),
            };
            title.push(Span::styled(format!("| {}{results} ", inert(code)), theme.accent));
        }
        // The modes on the right, whole: the title on the left gives way, from its middle, and
        // when even the modes do not fit beside a short title only the mode in use is named.
        let mut tabs = self.mode_tabs(theme);
        let room = usize::from(area.width.saturating_sub(2));
        if tabs.width() + 12 > room {
            let current = match self.mode {
                InspectorMode::Tree => "tree",
                InspectorMode::Raw => "raw",
                InspectorMode::Headers => "headers",
            };
            tabs = Line::from(Span::styled(format!(" {current} "), theme.accent));
        }
        let left_room = room.saturating_sub(if self.view.is_some() { tabs.width() + 1 } else { 0 });
        let mut left = Line::from(title);
        if left.width() > left_room {
            let text: String = left.spans.iter().map(|s| s.content.as_ref()).collect();
            left = Line::from(Span::styled(super::cut_middle(&text, left_room), theme.title));
        }
        let mut block = Block::bordered().border_style(theme.border(focused)).title(left);
        if self.view.is_some() {
            block = block.title(tabs.right_aligned());
        }
        if let Some(note) = self.note_line(theme) {
            block = block.title_bottom(note);
        }
        if let Some(percent) = percent {
            block = block.title_bottom(Line::styled(format!(" {percent}% "), theme.muted).right_aligned());
        }
        frame.render_widget(block, area);
    }

    /// The `|` line at the bottom while it is typed, and the filter's error under it: both take
    /// body rows, as what is being typed matters more than one more line of JSON.
    fn draw_filter_bar(&self, buf: &mut Buffer, rows: &mut Rect, theme: &Theme) {
        let mut lines = Vec::new();
        if let Some(input) = &self.jq.input {
            let mut spans = vec![Span::styled("| ", theme.accent)];
            spans.extend(input.spans(usize::from(rows.width.saturating_sub(2)), theme.text, theme.selection));
            lines.push(Line::from(spans));
        } else if let Some(job) = &self.jq.running {
            lines.push(Line::from(vec![
                Span::styled("| ", theme.accent),
                Span::styled(inert(&job.code).into_owned(), theme.text),
                Span::styled(
                    format!("  running… {:.1} s · Esc cancels", job.started.elapsed().as_secs_f64()),
                    theme.muted,
                ),
            ]));
        } else if let (Some(code), Some(_)) = (self.filter(), &self.jq.error) {
            lines.push(Line::from(vec![
                Span::styled("| ", theme.accent),
                Span::styled(inert(code).into_owned(), theme.text),
                Span::styled("  (| edits)", theme.muted),
            ]));
        }
        if let Some(error) = &self.jq.error {
            lines.push(Line::styled(format!("✗ {}", inert(error)), theme.error));
        }
        for line in lines.iter().rev() {
            if rows.height == 0 {
                return;
            }
            rows.height -= 1;
            buf.set_line(rows.x, rows.bottom(), line, rows.width);
        }
    }

    fn mode_tabs(&self, theme: &Theme) -> Line<'static> {
        let mut spans = vec![Span::raw(" ")];
        let modes = [(InspectorMode::Tree, "tree"), (InspectorMode::Raw, "raw"), (InspectorMode::Headers, "headers")];
        for (i, (mode, label)) in modes.into_iter().enumerate() {
            if mode == InspectorMode::Tree && !matches!(self.body, Body::Json(_)) {
                continue;
            }
            if i > 0 && spans.len() > 1 {
                spans.push(Span::styled("·", theme.muted));
            }
            let style = if mode == self.mode { theme.accent } else { theme.muted };
            spans.push(Span::styled(label, style));
        }
        spans.push(Span::raw(" "));
        Line::from(spans)
    }

    fn note_line(&self, theme: &Theme) -> Option<Line<'static>> {
        let text = match self.search.note.as_ref()? {
            SearchNote::Match { ordinal, total, forward, wrapped } => {
                let arrow = if *forward { '↓' } else { '↑' };
                let wrapped = if *wrapped { " (wrapped)" } else { "" };
                Span::styled(format!(" match {ordinal}/{total} {arrow}{wrapped} "), theme.accent)
            }
            SearchNote::NoMatch(needle) => Span::styled(format!(" no match for {} ", inert(needle)), theme.warning),
        };
        Some(Line::from(text))
    }

    /// Draws the body in the current mode; returns the scroll percentage to show, if any.
    fn draw_body(&mut self, buf: &mut Buffer, area: Rect, theme: &Theme, focused: bool) -> Option<u8> {
        let Some(view) = &self.view else {
            buf.set_stringn(area.x, area.y, "no response yet", usize::from(area.width), theme.muted);
            return None;
        };
        if self.mode == InspectorMode::Headers {
            draw_headers(buf, area, &view.headers, &mut self.headers_top, theme);
            return None;
        }
        match &mut self.body {
            Body::Nothing | Body::Empty => {
                buf.set_stringn(area.x, area.y, "empty body", usize::from(area.width), theme.muted);
                None
            }
            Body::Binary => {
                let kind = view.content_type.as_deref().unwrap_or("binary data");
                let text = format!("{} bytes of {}", view.body.len(), inert(kind));
                buf.set_stringn(area.x, area.y, text, usize::from(area.width), theme.muted);
                None
            }
            Body::Json(tree) if self.mode == InspectorMode::Tree => {
                let lines = tree.lines(usize::from(area.height));
                let cursor = tree.cursor();
                for (row, line) in (area.y..area.bottom()).zip(&lines) {
                    let selected = line.node == cursor;
                    let row_area = Rect::new(area.x, row, area.width, 1);
                    if selected {
                        buf.set_style(row_area, theme.selected(focused));
                    }
                    let styled = tree_line(line, theme, selected.then(|| theme.selected(focused)), area.width);
                    // A value wider than the pane ends in `…`; `y` still copies all of it.
                    let styled = crate::tui::components::fit_line(styled, usize::from(area.width));
                    buf.set_line(area.x, row, &styled, area.width);
                }
                Some(tree.percent())
            }
            Body::Json(_) => {
                let text = self.shown_bytes();
                let note = match (self.as_received, text.len() > PRETTY_LIMIT) {
                    (true, _) => Some("as received (p: pretty-printed)"),
                    (false, true) => Some("as received: too large to pretty-print"),
                    (false, false) => None,
                };
                Some(draw_raw(buf, area, &text, note, &mut self.raw, theme))
            }
            Body::Text { note } => Some(draw_raw(buf, area, &view.body, note.as_deref(), &mut self.raw, theme)),
        }
    }
}

/// Draws `line` on the first row of `rows` and takes that row away.
fn draw_row(buf: &mut Buffer, rows: &mut Rect, line: Line<'_>) {
    if rows.height == 0 {
        return;
    }
    buf.set_line(rows.x, rows.y, &line, rows.width);
    rows.y += 1;
    rows.height -= 1;
}

fn summary_line(view: &ResponseView, body: &Body, theme: &Theme) -> Line<'static> {
    let mut spans = Vec::new();
    match view.status {
        Some(code) => {
            let reason = reqwest::StatusCode::from_u16(code).ok().and_then(|s| s.canonical_reason()).unwrap_or("");
            let style = if code < 400 { theme.success } else { theme.error };
            spans.push(Span::styled(format!("{code} {reason}").trim_end().to_owned(), style));
        }
        None => spans.push(Span::styled("—", theme.muted)),
    }
    let sep = || Span::styled(" · ", theme.muted);
    if !view.duration.is_zero() {
        spans.push(sep());
        let ms = view.duration.as_millis();
        let text = if ms == 0 { "<1 ms".to_owned() } else { format!("{ms} ms") };
        spans.push(Span::styled(text, theme.text));
    }
    spans.push(sep());
    spans.push(Span::styled(human_bytes(view.body.len() as u64), theme.text));
    if let Some(content_type) = &view.content_type {
        spans.push(sep());
        spans.push(Span::styled(inert(content_type).into_owned(), theme.muted));
    }
    if let Body::Json(tree) = body {
        spans.push(sep());
        spans.push(Span::styled(format!("{} nodes", tree.doc().node_count()), theme.muted));
    }
    Line::from(spans)
}

fn tree_line(line: &TreeLine, theme: &Theme, selected: Option<Style>, width: u16) -> Line<'static> {
    let style = |role: Style| selected.unwrap_or(role);
    // Deep nesting must not push every value off screen: indentation stops at half the width.
    let indent = (line.depth * 2).min(usize::from(width / 2));
    let marker = match (line.expandable, line.expanded) {
        (true, true) => "▾ ",
        (true, false) => "▸ ",
        (false, _) => "  ",
    };
    let mut spans = vec![Span::raw(" ".repeat(indent)), Span::styled(marker, style(theme.json_punctuation))];
    if let Some(key) = &line.key {
        spans.push(Span::styled(inert(key).into_owned(), style(theme.json_key)));
        spans.push(Span::styled(": ", style(theme.json_punctuation)));
    }
    let value_style = match line.kind {
        Kind::Object | Kind::Array => theme.json_punctuation,
        Kind::String => theme.json_string,
        Kind::Number => theme.json_number,
        Kind::Bool | Kind::Null => theme.json_literal,
    };
    if line.kind.is_container() && !line.expanded && line.expandable {
        // `{…} 12 keys`: the brackets as punctuation, the count as a quiet hint.
        let (brackets, count) = line.preview.split_once(' ').unwrap_or((line.preview.as_str(), ""));
        spans.push(Span::styled(brackets.to_owned(), style(value_style)));
        spans.push(Span::styled(format!(" {count}"), style(theme.muted)));
    } else {
        spans.push(Span::styled(inert(&line.preview).into_owned(), style(value_style)));
    }
    Line::from(spans)
}

fn draw_headers(buf: &mut Buffer, area: Rect, headers: &[(String, String)], top: &mut usize, theme: &Theme) {
    if headers.is_empty() {
        buf.set_stringn(area.x, area.y, "no headers", usize::from(area.width), theme.muted);
        return;
    }
    *top = (*top).min(headers.len().saturating_sub(1));
    // A long value (a cookie, a link list) wraps under itself rather than running off the pane.
    let width = usize::from(area.width).max(4);
    let mut rows = area.y..area.bottom();
    'headers: for (name, value) in headers.iter().skip(*top) {
        let name = inert(name).into_owned();
        let value = inert(value).into_owned();
        let first_room = width.saturating_sub(name.width() + 2).max(1);
        let mut chars = value.chars().peekable();
        let mut first = true;
        loop {
            let Some(row) = rows.next() else { break 'headers };
            let room = if first { first_room } else { width - 2 };
            let mut piece = String::new();
            let mut used = 0;
            while let Some(c) = chars.peek() {
                let w = unicode_width::UnicodeWidthChar::width(*c).unwrap_or(0);
                if used + w > room {
                    break;
                }
                used += w;
                piece.push(*c);
                chars.next();
            }
            let line = match first {
                true => Line::from(vec![
                    Span::styled(name.clone(), theme.json_key),
                    Span::styled(": ", theme.json_punctuation),
                    Span::styled(piece, theme.text),
                ]),
                false => Line::from(vec![Span::raw("  "), Span::styled(piece, theme.text)]),
            };
            buf.set_line(area.x, row, &line, area.width);
            first = false;
            if chars.peek().is_none() {
                break;
            }
        }
    }
}

/// Draws the visible slice of the body's lines; returns the percentage of the body above the
/// first drawn character.
fn draw_raw(buf: &mut Buffer, area: Rect, body: &Bytes, note: Option<&str>, raw: &mut RawScroll, theme: &Theme) -> u8 {
    let mut area = area;
    if let Some(note) = note {
        buf.set_stringn(area.x, area.y, inert(note), usize::from(area.width), theme.warning);
        area.y += 1;
        area.height -= 1;
        if area.height == 0 {
            return 0;
        }
    }
    let index = raw.index.get_or_insert_with(|| LineIndex::new(body));
    let height = usize::from(area.height);
    raw.top = raw.top.min(index.len().saturating_sub(height));
    let width = usize::from(area.width);
    let mut longest = 0;
    for (row, i) in (area.y..area.bottom()).zip(raw.top..index.len()) {
        let line = index.line(body, i);
        longest = longest.max(line.len());
        let text = visible_text(line, raw.left, width);
        buf.set_stringn(area.x, row, inert(&text), width, theme.text);
    }
    // Stop scrolling right once every visible line has scrolled out of view.
    raw.left = raw.left.min(longest.saturating_sub(1));
    let shown_end = raw.top + height >= index.len();
    if shown_end && raw.left + width >= longest {
        return 100;
    }
    let offset = index.start(raw.top) + raw.left;
    (offset * 100 / body.len().max(1)).min(100) as u8
}

/// The filter's outputs as a tree, and how many there were: one output as itself, any other
/// number as an array of them. Refuses what is not JSON or too big to filter here.
/// Why `code` cannot run over this body, if it cannot: it does not compile, the body is not
/// JSON, or it is larger than filters run on here.
fn filter_input(code: &str, shown: &Body, body: &Bytes, limit: usize) -> Result<(), String> {
    crate::jq::Filter::compile(code)?;
    if !matches!(shown, Body::Json(_)) {
        return Err("the body is not JSON, so jq cannot filter it".to_owned());
    }
    if body.len() > limit {
        return Err(format!(
            "the body is {}, over the {} a filter runs on here; ask for fewer records",
            human_bytes(body.len() as u64),
            human_bytes(limit as u64)
        ));
    }
    Ok(())
}

/// A filter's results as the tree shown: one result as itself, several as an array.
fn result_tree(mut outputs: Vec<serde_json::Value>) -> Result<(JsonTree, usize), String> {
    let count = outputs.len();
    let result = match outputs.pop() {
        Some(only) if count == 1 => only,
        last => serde_json::Value::Array(outputs.into_iter().chain(last).collect()),
    };
    let bytes = serde_json::to_vec(&result).map_err(|e| e.to_string())?;
    let doc = JsonDoc::parse(Bytes::from(bytes)).map_err(|e| format!("the result is too deep to show: {e}"))?;
    Ok((JsonTree::new(doc), count))
}

/// Whether a body is read as JSON: not empty, not a binary type, and JSON by its content type
/// or its first byte.
pub fn looks_like_json(view: &ResponseView) -> bool {
    let content_type = view.content_type.as_deref().unwrap_or("").to_ascii_lowercase();
    let binary_type = BINARY_TYPES.iter().any(|prefix| content_type.starts_with(prefix));
    let first = view.body.iter().find(|c| !c.is_ascii_whitespace());
    !view.body.is_empty() && !binary_type && (content_type.contains("json") || matches!(first, Some(b'{' | b'[')))
}

const BINARY_TYPES: &[&str] =
    &["audio/", "image/", "video/", "application/octet-stream", "application/pdf", "application/zip"];

/// Decides once how to show a body: JSON when [`looks_like_json`] (indexed here unless
/// `indexed` brings the index); text when it is UTF-8; a summary otherwise.
fn classify(view: &ResponseView, indexed: Option<Result<Arc<JsonDoc>, JsonError>>) -> Body {
    let body = &view.body;
    if body.is_empty() {
        return Body::Empty;
    }
    let content_type = view.content_type.as_deref().unwrap_or("").to_ascii_lowercase();
    if BINARY_TYPES.iter().any(|prefix| content_type.starts_with(prefix)) {
        return Body::Binary;
    }
    if looks_like_json(view) {
        match indexed.unwrap_or_else(|| JsonDoc::parse(body.clone()).map(Arc::new)) {
            Ok(doc) => return Body::Json(Box::new(JsonTree::new(doc))),
            Err(error) if is_text(body) => {
                return Body::Text { note: Some(format!("not valid JSON: {error}")) };
            }
            Err(_) => return Body::Binary,
        }
    }
    if is_text(body) {
        Body::Text { note: None }
    } else {
        Body::Binary
    }
}

/// UTF-8 without NUL bytes near the start: text worth showing as such.
fn is_text(body: &[u8]) -> bool {
    let head = body.get(..8192).unwrap_or(body);
    !head.contains(&0) && std::str::from_utf8(body).is_ok()
}

#[cfg(test)]
#[path = "inspector_tests.rs"]
mod tests;
