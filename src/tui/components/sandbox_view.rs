//! The sandbox view: the recent requests of the current tab's simulator and the faults injected
//! into the sandbox, read from its control port (`GET /requests`, `GET /faults`), and the faults
//! changed from it: `a` adds one to the tab's service through a small form (`POST /faults`), `x`
//! or `d` clears the selected one (`DELETE /faults/{id}`), `X` clears them all (`DELETE
//! /faults`). The view holds the change; the app's refresh sends it, then reads the view again,
//! on a spawned task that comes back as a [`SandboxReport`]: the view never waits, and what the
//! control port says (a refusal included) is shown in the view.

use std::time::Duration;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};
use ratatui::Frame;
use serde_json::{json, Map, Value};

use crate::catalog::Service;
use crate::format::{plural, timestamp_text};
use crate::inert::inert;
use crate::tui::components::detail::{Align, Detail, DetailAction, Table, Tone};
use crate::tui::components::line_input::LineInput;
use crate::tui::theme::Theme;
use unicode_width::UnicodeWidthStr;

/// Requests asked for per refresh.
pub const REQUEST_LIMIT: usize = 50;
/// A control port that does not answer within this is reported, not waited for.
const CONTROL_TIMEOUT: Duration = Duration::from_secs(3);
/// More than this from the control port is refused: it is a list of at most `REQUEST_LIMIT` rows.
const MAX_CONTROL_BODY: usize = 1024 * 1024;

/// What one refresh of the view brought back.
#[derive(Debug)]
pub struct SandboxReport {
    /// Which refresh this answers; an older one is dropped.
    pub generation: u64,
    pub requests: Result<Value, String>,
    pub faults: Result<Value, String>,
    /// What the control port said to the change sent before the reads, if one was: what was
    /// done, or why not.
    pub change: Option<Result<String, String>>,
}

/// What a key did in the view.
#[derive(Debug, PartialEq, Eq)]
pub enum SandboxAction {
    None,
    /// Read the control port again, first sending the change the view holds (a fault added or
    /// cleared, taken with [`SandboxView::take_change`]), if any.
    Refresh,
    Close,
}

/// A change of the faults, sent to the control port before the view reads it again.
#[derive(Clone, Debug, PartialEq)]
pub enum FaultChange {
    /// `POST /faults` with this fault.
    Add(Value),
    /// `DELETE /faults/{id}`.
    Clear(String),
    /// `DELETE /faults`: every fault of every service.
    ClearAll,
}

/// What a fault does to the requests it matches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FaultKind {
    /// Fail with an error status, in the vendor's error shape.
    Status,
    /// Answer late.
    Latency,
    /// Close the connection without an answer.
    Drop,
    /// 429 with `Retry-After`.
    RateLimit,
}

impl FaultKind {
    const ALL: [FaultKind; 4] = [FaultKind::Status, FaultKind::Latency, FaultKind::Drop, FaultKind::RateLimit];

    fn label(self) -> &'static str {
        match self {
            FaultKind::Status => "error status",
            FaultKind::Latency => "latency",
            FaultKind::Drop => "drop connection",
            FaultKind::RateLimit => "429 Retry-After",
        }
    }

    /// The fields the form asks for with this kind, in order.
    fn fields(self) -> &'static [Field] {
        use Field::{Count, Latency, Method, Path, Probability, RetryAfter, Status};
        match self {
            FaultKind::Status => &[Path, Method, Status, Latency, Count, Probability],
            FaultKind::Latency => &[Path, Method, Latency, Count, Probability],
            FaultKind::Drop => &[Path, Method, Latency, Count, Probability],
            FaultKind::RateLimit => &[Path, Method, RetryAfter, Count, Probability],
        }
    }
}

/// A text field of the fault form.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Field {
    Path,
    Method,
    Status,
    Latency,
    RetryAfter,
    Count,
    Probability,
}

impl Field {
    fn index(self) -> usize {
        self as usize
    }

    fn label(self) -> &'static str {
        match self {
            Field::Path => "path",
            Field::Method => "method",
            Field::Status => "status",
            Field::Latency => "latency ms",
            Field::RetryAfter => "retry after s",
            Field::Count => "count",
            Field::Probability => "probability",
        }
    }

    fn hint(self, kind: FaultKind) -> &'static str {
        match (self, kind) {
            (Field::Path, _) => "/… or *; * matches any characters",
            (Field::Method, _) => "GET, POST…; empty: any",
            (Field::Status, _) => "400 to 599",
            (Field::Latency, FaultKind::Latency) => "added before the answer",
            (Field::Latency, _) => "empty: none added",
            (Field::RetryAfter, _) => "seconds, in Retry-After",
            (Field::Count, _) => "requests; empty: until cleared",
            (Field::Probability, _) => "0 to 1; empty: every time",
        }
    }

    /// The JSON field the control port takes it as.
    fn key(self) -> &'static str {
        match self {
            Field::Path => "path",
            Field::Method => "method",
            Field::Status => "status",
            Field::Latency => "latency_ms",
            Field::RetryAfter => "retry_after",
            Field::Count => "count",
            Field::Probability => "probability",
        }
    }
}

/// The form `a` opens: a fault for the view's service, row 0 its kind, then its fields.
#[derive(Clone, Debug)]
struct FaultForm {
    kind: FaultKind,
    /// Each field's text, by [`Field::index`]; kept when the kind changes.
    values: [LineInput; 7],
    /// The row with the cursor: 0 is the kind, then the kind's fields.
    row: usize,
    /// Why the last Enter did not add it (a value that is no number, the control port's
    /// refusal).
    message: Option<String>,
    /// Sent, waiting for the control port's answer.
    sending: bool,
}

impl FaultForm {
    fn new() -> FaultForm {
        let mut values: [LineInput; 7] = Default::default();
        values[Field::Path.index()].set("*");
        values[Field::Status.index()].set("503");
        values[Field::RetryAfter.index()].set("30");
        FaultForm { kind: FaultKind::Status, values, row: 0, message: None, sending: false }
    }

    fn rows(&self) -> usize {
        1 + self.kind.fields().len()
    }

    fn field(&self) -> Option<Field> {
        self.row.checked_sub(1).and_then(|i| self.kind.fields().get(i).copied())
    }

    fn cycle_kind(&mut self, forward: bool) {
        let all = FaultKind::ALL;
        let at = all.iter().position(|k| *k == self.kind).unwrap_or(0);
        let next = if forward { (at + 1) % all.len() } else { (at + all.len() - 1) % all.len() };
        self.kind = all[next];
        // A latency fault needs one: start from a delay that is felt.
        if self.kind == FaultKind::Latency && self.values[Field::Latency.index()].text().trim().is_empty() {
            self.values[Field::Latency.index()].set("2000");
        }
    }

    /// The fault as `POST /faults` takes it, or which value is wrong. Numbers are only read
    /// here; the control port checks the rest (ranges, the path) and says what is wrong.
    fn body(&self, service: Service) -> Result<Value, String> {
        let mut fault = Map::new();
        fault.insert("service".into(), json!(service.name()));
        for field in self.kind.fields() {
            let text = self.values[field.index()].text().trim();
            if text.is_empty() {
                continue;
            }
            let value = match field {
                Field::Path | Field::Method => json!(text),
                Field::Probability => {
                    json!(text.parse::<f64>().map_err(|_| format!("probability: {text} is not a number"))?)
                }
                _ => json!(text
                    .parse::<u64>()
                    .map_err(|_| format!("{}: {text} is not a whole number", field.label()))?),
            };
            fault.insert(field.key().into(), value);
        }
        if !fault.contains_key("path") {
            fault.insert("path".into(), json!("*"));
        }
        match self.kind {
            FaultKind::Drop => {
                fault.insert("drop".into(), json!(true));
            }
            FaultKind::RateLimit => {
                fault.insert("status".into(), json!(429));
            }
            FaultKind::Status | FaultKind::Latency => {}
        }
        Ok(Value::Object(fault))
    }

    /// Edits the focused row; Enter gives the fault to add.
    fn handle_key(&mut self, key: KeyEvent, service: Service) -> FormKey {
        let field = self.field();
        match key.code {
            KeyCode::Esc => return FormKey::Cancel,
            _ if self.sending => {}
            KeyCode::Enter => match self.body(service) {
                Ok(body) => return FormKey::Add(body),
                Err(e) => self.message = Some(e),
            },
            KeyCode::Tab | KeyCode::Down => self.row = (self.row + 1) % self.rows(),
            KeyCode::BackTab | KeyCode::Up => self.row = (self.row + self.rows() - 1) % self.rows(),
            KeyCode::Left if field.is_none() => self.cycle_kind(false),
            KeyCode::Right | KeyCode::Char(' ') if field.is_none() => self.cycle_kind(true),
            // A field edits as every text input does.
            _ => {
                if let Some(field) = field {
                    self.values[field.index()].handle_key(&key);
                }
            }
        }
        FormKey::None
    }

    fn render(&self, frame: &mut Frame, area: Rect, service: Service, theme: &Theme) {
        let width = area.width.min(78);
        // The message wraps: the box grows to show all of it (the control port's reason).
        let message_lines = self.message.as_ref().map_or(0, |m| {
            let inner = usize::from(width.saturating_sub(2)).max(1);
            inert(m).width().div_ceil(inner).max(1)
        });
        let lines = self.rows() + message_lines;
        let height = u16::try_from(lines + 2).unwrap_or(u16::MAX).min(area.height);
        let popup = Rect {
            x: area.x + (area.width - width) / 2,
            y: area.bottom().saturating_sub(height + 1).max(area.y),
            width,
            height,
        };
        frame.render_widget(Clear, popup);
        let keys =
            if self.sending { " adding… " } else { " Tab ↑ ↓ field · ← → kind · Enter add · Esc back " };
        let block = Block::default()
            .borders(Borders::ALL)
            .border_style(theme.border_focused)
            .title(Span::styled(format!(" add a fault to {} ", service.title()), theme.title))
            .title_bottom(Line::from(Span::styled(keys, theme.muted)));
        let inner = block.inner(popup);
        frame.render_widget(block, popup);
        let label = |text: &str, focused: bool| {
            Span::styled(format!("{:<14}", text), if focused { theme.accent } else { theme.muted })
        };
        let mut lines = vec![Line::from(vec![
            label("kind", self.row == 0),
            Span::styled(
                format!("‹ {} ›", self.kind.label()),
                if self.row == 0 { theme.selection } else { theme.text },
            ),
            Span::styled("  ← → to change", theme.muted),
        ])];
        for (i, field) in self.kind.fields().iter().enumerate() {
            let focused = self.row == i + 1;
            let input = &self.values[field.index()];
            let shown: Vec<Span> = match focused {
                true => input.spans(30, theme.selection, theme.accent),
                false => vec![Span::styled(input.text().to_owned(), theme.text)],
            };
            let pad = 20_usize.saturating_sub(shown.iter().map(|s| s.content.width()).sum());
            let mut line = vec![label(field.label(), focused)];
            line.extend(shown);
            line.push(Span::raw(" ".repeat(pad)));
            line.push(Span::styled(format!(" {}", field.hint(self.kind)), theme.muted));
            lines.push(Line::from(line));
        }
        if let Some(message) = &self.message {
            lines.push(Line::from(Span::styled(inert(message).into_owned(), theme.error)));
        }
        frame.render_widget(Paragraph::new(lines).wrap(ratatui::widgets::Wrap { trim: false }), inner);
    }
}

/// What a key did in the fault form.
enum FormKey {
    None,
    Cancel,
    Add(Value),
}

pub struct SandboxView {
    pub service: Service,
    /// The control port's base URL, or why there is none to read (a LIVE tab).
    pub control: Result<String, String>,
    pub generation: u64,
    pub loading: bool,
    detail: Detail,
    /// The ids of the faults listed, in the order shown (the selectable table's rows).
    fault_ids: Vec<String>,
    /// The change to send with the next refresh (boxed, as the form: the view is one of the
    /// app's popups, which are kept small).
    change: Option<Box<FaultChange>>,
    /// The fault form, while open (boxed: most of the time there is none).
    form: Option<Box<FaultForm>>,
    /// The view's keys are listed (`?`).
    show_keys: bool,
    /// What the last change did, or why it was refused.
    outcome: Option<Result<String, String>>,
    /// Why the last read showed nothing new.
    problems: Vec<String>,
}

impl SandboxView {
    pub fn new(service: Service, control: Result<String, String>) -> SandboxView {
        let mut view = SandboxView {
            service,
            control,
            generation: 0,
            loading: false,
            detail: Detail::default(),
            fault_ids: Vec::new(),
            change: None,
            form: None,
            show_keys: false,
            outcome: None,
            problems: Vec::new(),
        };
        view.detail.title = view.title();
        if let Err(reason) = &view.control {
            view.detail.note = Some(reason.clone());
        }
        view
    }

    /// The change a key asked for, taken to be sent with the refresh that follows.
    pub fn take_change(&mut self) -> Option<FaultChange> {
        self.change.take().map(|change| *change)
    }

    /// Whether the fault form is open (its keys are text).
    pub fn is_typing(&self) -> bool {
        self.form.is_some()
    }

    /// Pasted text goes into the fault form's field with the cursor, on one line; `false` when
    /// no form or field takes it (the kind row, or no form open).
    pub fn paste(&mut self, text: &str) -> bool {
        let Some(form) = self.form.as_mut().filter(|f| !f.sending) else { return false };
        let Some(field) = form.field() else { return false };
        form.values[field.index()].insert_str(text);
        true
    }

    fn title(&self) -> String {
        match &self.control {
            Ok(url) => format!("sandbox · {} · control {url}", self.service.title()),
            Err(_) => format!("sandbox · {}", self.service.title()),
        }
    }

    /// Says why the view shows nothing new (the read could not start): a change waiting to be
    /// sent is dropped, and the form that asked for it says so.
    pub fn detail_note(&mut self, note: &str) {
        self.detail.note = Some(note.to_owned());
        self.change = None;
        if let Some(form) = self.form.as_mut().filter(|f| f.sending) {
            form.sending = false;
            form.message = Some(note.to_owned());
        }
    }

    /// Marks a refresh as sent; returns its generation.
    pub fn start_refresh(&mut self) -> u64 {
        self.generation += 1;
        self.loading = true;
        self.detail.note = Some("loading…".into());
        self.generation
    }

    /// Takes a report, if it answers the newest refresh.
    pub fn apply(&mut self, report: SandboxReport) {
        if report.generation != self.generation {
            return;
        }
        self.loading = false;
        if let Some(change) = report.change {
            match (&change, self.form.as_mut()) {
                // Refused: the form stays, with the reason, to be put right.
                (Err(reason), Some(form)) if form.sending => {
                    form.sending = false;
                    form.message = Some(reason.clone());
                }
                (Ok(_), Some(form)) if form.sending => self.form = None,
                _ => {}
            }
            self.outcome = Some(change);
        }
        self.problems.clear();
        let mut tables = Vec::new();
        self.detail.selectable = None;
        match report.faults {
            Ok(body) => {
                self.fault_ids = rows_of(&body, "faults").iter().map(|f| text(f.get("id"))).collect();
                self.detail.selectable = Some(tables.len());
                tables.push(faults_table(&body));
            }
            Err(e) => {
                self.fault_ids.clear();
                self.problems.push(format!("faults: {e}"));
            }
        }
        match report.requests {
            Ok(body) => tables.push(requests_table(self.service, &body)),
            Err(e) => self.problems.push(format!("requests: {e}")),
        }
        self.detail.tables = tables;
        self.detail.selected = self.detail.selected.min(self.fault_ids.len().saturating_sub(1));
        self.show_outcome();
    }

    /// Says in the view what the last change did (a fact at the top) and what went wrong (the
    /// note, which wraps).
    fn show_outcome(&mut self) {
        self.detail.facts.clear();
        let mut problems = Vec::new();
        match &self.outcome {
            Some(Ok(done)) => self.detail.facts.push(("✓".into(), done.clone(), Some(Tone::Good))),
            // A refusal the form shows is not said twice.
            Some(Err(reason)) if self.form.as_ref().is_none_or(|f| f.message.as_ref() != Some(reason)) => {
                problems.push(format!("not done: {reason}"));
            }
            _ => {}
        }
        problems.extend(self.problems.iter().cloned());
        self.detail.note = (!problems.is_empty()).then(|| problems.join("\n"));
        self.detail.texts = if self.show_keys {
            let keys: Vec<String> =
                SandboxView::help().iter().skip(1).map(|(k, v)| format!("{:<10} {v}", k.trim())).collect();
            vec![("keys".into(), keys.join("\n"))]
        } else {
            Vec::new()
        };
    }

    pub fn handle_key(&mut self, key: KeyEvent) -> SandboxAction {
        if let Some(form) = self.form.as_mut() {
            match form.handle_key(key, self.service) {
                FormKey::None => {}
                FormKey::Cancel => self.form = None,
                FormKey::Add(body) => {
                    form.sending = true;
                    form.message = None;
                    self.change = Some(Box::new(FaultChange::Add(body)));
                    return SandboxAction::Refresh;
                }
            }
            return SandboxAction::None;
        }
        let plain = !key.modifiers.intersects(KeyModifiers::CONTROL | KeyModifiers::ALT);
        match key.code {
            KeyCode::Char('r') if plain && self.control.is_ok() => SandboxAction::Refresh,
            KeyCode::Char('a') if plain && self.control.is_ok() => {
                self.form = Some(Box::new(FaultForm::new()));
                SandboxAction::None
            }
            KeyCode::Char('x' | 'd') if plain && self.control.is_ok() => {
                match self.fault_ids.get(self.detail.selected) {
                    Some(id) => {
                        self.change = Some(Box::new(FaultChange::Clear(id.clone())));
                        SandboxAction::Refresh
                    }
                    None => {
                        self.outcome = Some(Err("no fault to clear: a adds one".into()));
                        self.show_outcome();
                        SandboxAction::None
                    }
                }
            }
            KeyCode::Char('X') if self.control.is_ok() => {
                self.change = Some(Box::new(FaultChange::ClearAll));
                SandboxAction::Refresh
            }
            KeyCode::Char('?') => {
                self.show_keys = !self.show_keys;
                self.show_outcome();
                SandboxAction::None
            }
            _ => match self.detail.handle_key(key) {
                DetailAction::Close => SandboxAction::Close,
                _ => SandboxAction::None,
            },
        }
    }

    pub fn render(&mut self, frame: &mut Frame, area: Rect, theme: &Theme) {
        self.detail.keys = Some(if self.control.is_ok() {
            " a add · j k select · x clear · X clear all · r refresh · ? keys · Esc close "
        } else {
            " Esc close "
        });
        self.detail.render(frame, area, theme);
        if let Some(form) = &self.form {
            form.render(frame, area, self.service, theme);
        }
    }

    pub fn help() -> &'static [(&'static str, &'static str)] {
        &[
            ("S", "sandbox view: recent requests and active faults"),
            ("  a", "add a fault to the tab's service: kind, path, method, status or delay, count, probability"),
            ("  j k", "select a fault"),
            ("  x d", "clear the selected fault"),
            ("  X", "clear every fault, of every service"),
            ("  r", "read the requests and faults again"),
            ("  ?", "list these keys in the view"),
        ]
    }
}

fn rows_of<'a>(body: &'a Value, key: &str) -> &'a [Value] {
    body.get(key).and_then(Value::as_array).map_or(&[], Vec::as_slice)
}

fn text(value: Option<&Value>) -> String {
    match value {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    }
}

fn status_tone(status: Option<&Value>) -> Option<Tone> {
    match status.and_then(Value::as_u64)? {
        // The log's status of a connection the sandbox dropped on purpose.
        0 => Some(Tone::Bad),
        200..=299 => Some(Tone::Good),
        400..=499 => Some(Tone::Changed),
        500..=599 => Some(Tone::Bad),
        _ => None,
    }
}

fn requests_table(service: Service, body: &Value) -> Table {
    let rows = rows_of(body, "requests");
    Table {
        title: format!("recent requests to {} ({}, newest first)", service.title(), rows.len()),
        columns: vec![
            ("at".into(), Align::Left),
            ("method".into(), Align::Left),
            ("path".into(), Align::Left),
            ("status".into(), Align::Right),
            ("ms".into(), Align::Right),
        ],
        rows: rows
            .iter()
            .map(|r| {
                vec![
                    timestamp_text(&text(r.get("at"))).unwrap_or_else(|| text(r.get("at"))),
                    text(r.get("method")),
                    text(r.get("path")),
                    match r.get("status").and_then(Value::as_u64) {
                        Some(0) => "dropped".into(),
                        _ => text(r.get("status")),
                    },
                    text(r.get("latency_ms")),
                ]
            })
            .collect(),
        tones: rows.iter().map(|r| status_tone(r.get("status"))).collect(),
    }
}

/// What a fault does, in a few words: `status 503, +200 ms`.
fn what(f: &Value) -> String {
    let mut parts = Vec::new();
    if let Some(status) = f.get("status").filter(|v| !v.is_null()) {
        parts.push(format!("status {}", text(Some(status))));
    }
    if f.get("drop").and_then(Value::as_bool) == Some(true) {
        parts.push("drop".into());
    }
    if let Some(ms) = f.get("latency_ms").filter(|v| !v.is_null() && v.as_u64() != Some(0)) {
        parts.push(format!("+{} ms", text(Some(ms))));
    }
    if let Some(after) = f.get("retry_after").filter(|v| !v.is_null()) {
        parts.push(format!("Retry-After {}", text(Some(after))));
    }
    parts.join(", ")
}

fn faults_table(body: &Value) -> Table {
    let rows = rows_of(body, "faults");
    let how_often = |f: &Value| match (f.get("remaining").filter(|v| !v.is_null()), f.get("probability")) {
        (Some(remaining), _) => format!("{} left", text(Some(remaining))),
        (None, Some(p)) if !p.is_null() => format!("p={}", text(Some(p))),
        _ => "always".into(),
    };
    Table {
        title: format!("active faults ({})", rows.len()),
        columns: vec![
            ("id".into(), Align::Left),
            ("service".into(), Align::Left),
            ("method".into(), Align::Left),
            ("path".into(), Align::Left),
            ("fault".into(), Align::Left),
            ("how often".into(), Align::Left),
        ],
        rows: rows
            .iter()
            .map(|f| {
                vec![
                    text(f.get("id")),
                    text(f.get("service")),
                    Some(text(f.get("method"))).filter(|m| !m.is_empty()).unwrap_or_else(|| "any".into()),
                    text(f.get("path")),
                    what(f),
                    how_often(f),
                ]
            })
            .collect(),
        tones: vec![Some(Tone::Bad); rows.len()],
    }
}

/// Reads the requests of `service` and the faults from the control port at `control`.
pub async fn fetch(client: reqwest::Client, control: String, service: Service, generation: u64) -> SandboxReport {
    let requests_url = format!("{control}/requests?service={}&limit={REQUEST_LIMIT}", service.name());
    let faults_url = format!("{control}/faults");
    let (requests, faults) = tokio::join!(get_json(&client, &requests_url), get_json(&client, &faults_url));
    SandboxReport { generation, requests, faults, change: None }
}

/// Sends `change` to the control port at `control`, then reads the view again: the report says
/// what the change did (or why not) beside what the reads found.
pub async fn change_then_fetch(
    client: reqwest::Client,
    control: String,
    service: Service,
    generation: u64,
    change: Option<FaultChange>,
) -> SandboxReport {
    let outcome = match change {
        Some(change) => Some(send_change(&client, &control, change).await),
        None => None,
    };
    SandboxReport { change: outcome, ..fetch(client, control, service, generation).await }
}

/// Sends one change; says what it did, or what the control port answered instead.
async fn send_change(client: &reqwest::Client, control: &str, change: FaultChange) -> Result<String, String> {
    match change {
        FaultChange::Add(fault) => {
            let url = format!("{control}/faults");
            let request = client.post(&url).header("content-type", "application/json").body(fault.to_string());
            let added = send_json(request, &url).await?;
            Ok(format!(
                "added fault {}: {} on {} {}",
                text(added.get("id")),
                what(&added),
                text(added.get("service")),
                text(added.get("path"))
            ))
        }
        FaultChange::Clear(id) => {
            let url = format!("{control}/faults/{id}");
            send_json(client.delete(&url), &url).await?;
            Ok(format!("cleared fault {id}"))
        }
        FaultChange::ClearAll => {
            let url = format!("{control}/faults");
            let answer = send_json(client.delete(&url), &url).await?;
            let deleted = answer.get("deleted").and_then(Value::as_u64).unwrap_or(0);
            Ok(format!("cleared {}", plural(usize::try_from(deleted).unwrap_or(usize::MAX), "fault")))
        }
    }
}

/// The client the view reads with: short timeouts, and no proxy, since the control port is on
/// this machine.
pub fn control_client() -> Result<reqwest::Client, String> {
    reqwest::Client::builder()
        .timeout(CONTROL_TIMEOUT)
        .connect_timeout(CONTROL_TIMEOUT)
        .no_proxy()
        .build()
        .map_err(|e| format!("cannot build an HTTP client: {e}"))
}

async fn get_json(client: &reqwest::Client, url: &str) -> Result<Value, String> {
    send_json(client.get(url), url).await
}

/// Sends `request` (to `url`) and reads its JSON answer; an error status is reported with the
/// control port's own message (`{"error": …, "message": …}`) when it has one.
async fn send_json(request: reqwest::RequestBuilder, url: &str) -> Result<Value, String> {
    let mut response = request.send().await.map_err(|e| format!("cannot reach {url}: {e}"))?;
    let status = response.status();
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|e| format!("reading {url}: {e}"))? {
        if body.len() + chunk.len() > MAX_CONTROL_BODY {
            return Err(format!("{url} answered more than {} KB", MAX_CONTROL_BODY / 1024));
        }
        body.extend_from_slice(&chunk);
    }
    if !status.is_success() {
        let said = serde_json::from_slice::<Value>(&body)
            .ok()
            .and_then(|v| v.get("message").and_then(Value::as_str).map(str::to_owned));
        let text = said.unwrap_or_else(|| String::from_utf8_lossy(&body).chars().take(200).collect());
        return Err(format!("the control port answered {status}: {text}"));
    }
    serde_json::from_slice(&body).map_err(|e| format!("{url} did not answer JSON: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn press(form: &mut FaultForm, keys: &[KeyCode]) {
        for code in keys {
            form.handle_key(KeyEvent::new(*code, KeyModifiers::NONE), Service::Ably);
        }
    }

    fn typed(form: &mut FaultForm, text: &str) {
        press(form, &text.chars().map(KeyCode::Char).collect::<Vec<_>>());
    }

    #[test]
    fn each_kind_of_fault_is_the_body_the_control_port_takes() {
        let mut form = FaultForm::new();
        assert_eq!(form.body(Service::Ably).unwrap(), json!({"service": "ably", "path": "*", "status": 503}));
        // The path, a method, a count.
        press(&mut form, &[KeyCode::Down]);
        form.handle_key(KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL), Service::Ably);
        typed(&mut form, "/channels/*/messages");
        press(&mut form, &[KeyCode::Down]);
        typed(&mut form, "post");
        press(&mut form, &[KeyCode::Down, KeyCode::Down, KeyCode::Down]);
        typed(&mut form, "3");
        assert_eq!(
            form.body(Service::Ably).unwrap(),
            json!({"service": "ably", "path": "/channels/*/messages", "method": "post", "status": 503, "count": 3})
        );
        // The kind changes on its row; the values typed stay.
        press(&mut form, &[KeyCode::Up, KeyCode::Up, KeyCode::Up, KeyCode::Up, KeyCode::Up, KeyCode::Right]);
        assert_eq!(form.kind, FaultKind::Latency);
        assert_eq!(form.body(Service::Ably).unwrap()["latency_ms"], 2000, "a latency fault starts with a delay");
        press(&mut form, &[KeyCode::Right]);
        let drop = form.body(Service::Ably).unwrap();
        assert_eq!((drop.get("status"), &drop["drop"]), (None, &json!(true)), "{drop}");
        press(&mut form, &[KeyCode::Right]);
        let limited = form.body(Service::Ably).unwrap();
        assert_eq!((&limited["status"], &limited["retry_after"]), (&json!(429), &json!(30)), "{limited}");
        press(&mut form, &[KeyCode::Right, KeyCode::Left]);
        assert_eq!(form.kind, FaultKind::RateLimit, "round and back");
        // Words are not numbers; control characters are not typed.
        press(&mut form, &[KeyCode::Down, KeyCode::Down, KeyCode::Down]);
        typed(&mut form, "s\u{1b}");
        assert_eq!(form.body(Service::Ably).unwrap_err(), "retry after s: 30s is not a whole number");
    }

    #[test]
    fn a_paste_goes_into_the_field_with_the_cursor_on_one_line() {
        let mut view = SandboxView::new(Service::Ably, Ok("http://127.0.0.1:1".into()));
        assert!(!view.paste("/time"), "no form open");
        view.handle_key(KeyEvent::new(KeyCode::Char('a'), KeyModifiers::NONE));
        assert!(view.is_typing());
        assert!(!view.paste("x"), "the kind row takes no text");
        view.handle_key(KeyEvent::new(KeyCode::Down, KeyModifiers::NONE));
        assert!(view.paste("/channels/\u{1b}[2J\nx"));
        let form = view.form.as_ref().unwrap();
        assert_eq!(form.values[Field::Path.index()].text(), "*/channels/[2J x");
    }
}
