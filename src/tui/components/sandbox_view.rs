//! The sandbox view: the recent requests of the current tab's simulator and the faults injected
//! into the sandbox, read from its control port (`GET /requests`, `GET /faults`). The reads run
//! on a spawned task and come back as a [`SandboxReport`]; the view never waits for them.

use std::time::Duration;

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::layout::Rect;
use ratatui::Frame;
use serde_json::Value;

use crate::catalog::Service;
use crate::tui::components::detail::{Align, Detail, DetailAction, Table, Tone};
use crate::tui::theme::Theme;

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
}

/// What a key did in the view.
#[derive(Debug, PartialEq, Eq)]
pub enum SandboxAction {
    None,
    Refresh,
    Close,
}

pub struct SandboxView {
    pub service: Service,
    /// The control port's base URL, or why there is none to read (a LIVE tab).
    pub control: Result<String, String>,
    pub generation: u64,
    pub loading: bool,
    detail: Detail,
}

impl SandboxView {
    pub fn new(service: Service, control: Result<String, String>) -> SandboxView {
        let mut view = SandboxView { service, control, generation: 0, loading: false, detail: Detail::default() };
        view.detail.title = view.title();
        if let Err(reason) = &view.control {
            view.detail.note = Some(reason.clone());
        }
        view
    }

    fn title(&self) -> String {
        match &self.control {
            Ok(url) => format!("sandbox · {} · control {url}", self.service.title()),
            Err(_) => format!("sandbox · {}", self.service.title()),
        }
    }

    /// Says why the view shows nothing new.
    pub fn detail_note(&mut self, note: &str) {
        self.detail.note = Some(note.to_owned());
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
        let mut problems = Vec::new();
        let mut tables = Vec::new();
        match report.faults {
            Ok(body) => tables.push(faults_table(&body)),
            Err(e) => problems.push(format!("faults: {e}")),
        }
        match report.requests {
            Ok(body) => tables.push(requests_table(self.service, &body)),
            Err(e) => problems.push(format!("requests: {e}")),
        }
        self.detail.tables = tables;
        self.detail.note = (!problems.is_empty()).then(|| problems.join("\n"));
    }

    pub fn handle_key(&mut self, key: KeyEvent) -> SandboxAction {
        match key.code {
            KeyCode::Char('r') if self.control.is_ok() => SandboxAction::Refresh,
            _ => match self.detail.handle_key(key) {
                DetailAction::Close => SandboxAction::Close,
                _ => SandboxAction::None,
            },
        }
    }

    pub fn render(&mut self, frame: &mut Frame, area: Rect, theme: &Theme) {
        self.detail.keys =
            Some(if self.control.is_ok() { " r refresh · PgUp PgDn scroll · Esc close " } else { " Esc close " });
        self.detail.render(frame, area, theme);
    }

    pub fn help() -> &'static [(&'static str, &'static str)] {
        &[("S", "sandbox view: recent requests and active faults"), ("r (in it)", "read them again")]
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
                    text(r.get("at")),
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

fn faults_table(body: &Value) -> Table {
    let rows = rows_of(body, "faults");
    let what = |f: &Value| {
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
    };
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
    SandboxReport { generation, requests, faults }
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
    let mut response = client.get(url).send().await.map_err(|e| format!("cannot reach {url}: {e}"))?;
    let status = response.status();
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|e| format!("reading {url}: {e}"))? {
        if body.len() + chunk.len() > MAX_CONTROL_BODY {
            return Err(format!("{url} answered more than {} KB", MAX_CONTROL_BODY / 1024));
        }
        body.extend_from_slice(&chunk);
    }
    if !status.is_success() {
        let text = String::from_utf8_lossy(&body);
        let text: String = text.chars().take(200).collect();
        return Err(format!("{url} answered {status}: {text}"));
    }
    serde_json::from_slice(&body).map_err(|e| format!("{url} did not answer JSON: {e}"))
}
