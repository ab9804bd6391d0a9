//! The console's state and what keys and call results do to it. Nothing here waits: calls go to
//! the task pool and come back as [`CallEvent`]s.

mod calls;
mod keys;
mod lists;
mod live_rows;
mod live_stream;
mod popups;
mod records;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers, MouseButton, MouseEvent, MouseEventKind};
use ratatui::layout::{Position, Rect};
use serde_json::{json, Value};
use tokio::sync::mpsc;

use self::lists::{list_filters, tail_note};
use crate::catalog::{all_operations, Operation, Service};
use crate::client::pagination;
use crate::client::{self, CallError, CallEvent, CallId, Executor, Values};
use crate::config::Mode;
use crate::format::human_bytes;
use crate::history::{Entry, Record};
use crate::json_index::JsonError;
use crate::tui::areas::Areas;
use crate::tui::components::browser::BrowserAction;
use crate::tui::components::chart::{self, ChartView};
use crate::tui::components::confirm::{Confirm, ConfirmAction};
use crate::tui::components::copy_menu::{CopyFormat, CopyMenu, CopyMenuAction};
use crate::tui::components::detail::{Detail, DetailAction, DetailCommand};
use crate::tui::components::form::{EditRequest, Form, FormAction};
use crate::tui::components::history_view::{HistoryAction, HistoryView};
use crate::tui::components::inspector::{self, ResponseView};
use crate::tui::components::menu::{Command, Menu, MenuAction, PaletteItem};
use crate::tui::components::sandbox_view::{self, SandboxAction, SandboxReport, SandboxView};
use crate::tui::components::save_file::{self, SaveAction, SavePrompt, SaveReport};
use crate::tui::indexer::{self, Answer, Indexed, Job, Page, Then};
pub use crate::tui::keymap::Focus;
use crate::tui::keymap::{Action, Keymap, ACTIONS};
use crate::tui::services::{self, Compose, RowAction};
use crate::tui::setup::Setup;
pub use crate::tui::tab::Severity;
use crate::tui::tab::{PageState, Tab, TailState, WatchState};
use crate::tui::theme::Theme;

/// What covers the tab, taking every key.
pub enum Popup {
    Help,
    Menu(Menu),
    Form(Form),
    Confirm(Confirm),
    /// A response as tables: a transaction with its lines and jurisdictions, a rate breakdown.
    Detail(Detail),
    Sandbox(SandboxView),
    /// Past calls (`H`).
    History(HistoryView),
    /// `Y`: copy a request as curl or HTTPie; holds the form it was opened from, if any, which
    /// comes back when it closes.
    Copy(CopyMenu, Option<Box<Form>>),
    /// Where to save a file a view links to (a label); holds the view it was asked from, which
    /// comes back when it closes.
    Save(SavePrompt, Option<Box<Detail>>),
}

/// What a background task that is no API call reports: a read of the sandbox view, a file saved.
#[derive(Debug)]
pub enum Background {
    Sandbox(SandboxReport),
    /// A file saved for tab `.0`, or why not.
    Saved(usize, SaveReport),
    /// A body indexed off the UI thread (see [`indexer`]), by its job's ticket.
    Indexed(u64, Result<Indexed, JsonError>),
    /// An embedded simulator built and seeded, or why it could not be.
    SimulatorStarted(Service, Result<(), String>),
    /// A jq filter of an inspector has its result (shown at once, not at the next tick).
    Filtered,
    /// A live tail's socket of tab `.0` (its opening `.1`) said something.
    Live(usize, u64, crate::client::live::LiveEvent),
}

/// A copy waiting for the event loop: what it is, for the status line, and whether the text is
/// shown in the inspector if no clipboard takes it (a command the user can still select).
struct CopyJob {
    what: String,
    show_on_failure: bool,
}

/// What `C`, `[` and `]` say when the page in view has no time series.
const NO_CHART: &str = "no chart here: a page of records with a time and numbers (Ably stats, candles) gets one";

/// Responses up to this size are indexed for the inspector on the UI thread (well under a
/// millisecond); larger ones go to the blocking pool ([`indexer`]). List pages always do.
const INDEX_INLINE_LIMIT: usize = 256 * 1024;

/// Pages larger than this say how far their indexing got in the browser while it runs (smaller
/// ones are done before anyone could read it, and a refresh should not flash a notice).
const PROGRESS_NOTICE_ABOVE: usize = 2 * 1024 * 1024;

/// How often the screen is redrawn while a body is being indexed, so its progress moves.
const INDEXING_REDRAW: Duration = Duration::from_millis(100);

/// The largest page kept for what later confirmations say of it (a project's keys, counted
/// when the project is deleted); larger pages are not kept.
const SEEN_LIST_CAP: usize = 500;

/// How many rows a tailed list keeps: the oldest go, so a tail left on for hours stays light.
const TAIL_CAP: usize = 2000;

/// How often the screen is redrawn while calls are in flight, so their elapsed time moves.
pub const IN_FLIGHT_REDRAW: Duration = Duration::from_millis(500);

/// What a call in flight is for.
enum Purpose {
    /// A page of a list for the browser; `previous` is the page stack to keep on success, and
    /// `values` what the list was asked with (its filters).
    List {
        tab: usize,
        op: &'static Operation,
        values: Values,
        request: client::PreparedRequest,
        previous: Vec<client::PreparedRequest>,
        /// Whether it goes in the history: an auto-refresh repeating the same list every few
        /// seconds would bury every call the user made.
        recorded: bool,
    },
    /// An operation sent from a form; a list op's result also fills the browser.
    Operation { tab: usize, op: &'static Operation, values: Values, request: client::PreparedRequest },
    /// A tail poll of the first page of the list in view: its new rows go on top.
    Tail { tab: usize, op: &'static Operation },
    /// The first page of the list in view asked again after its feed said something changed.
    Rows { tab: usize, op: &'static Operation },
    /// The open view asking again for what it shows (a tracker moving, a batch being bought).
    Watch { tab: usize, op: &'static Operation, subject: String, values: Values },
    /// Something an open form needs to know (a product's increments), kept under `key`.
    Lookup { tab: usize, key: String },
    /// A live column's ask about the row `id` of the list `list` (a product's price).
    Live { tab: usize, list: &'static str, id: String },
}

pub struct App {
    pub tabs: Vec<Tab>,
    pub active: usize,
    pub focus: Focus,
    pub popup: Option<Popup>,
    pub executor: Executor,
    pub theme: Theme,
    pub profile: String,
    pub read_only: bool,
    /// A message about the console as a whole (start-up warnings, a profile switched), shown
    /// while the tab in view has none of its own.
    pub notice: Option<(String, Severity)>,
    pub quit: bool,
    /// Text for the clipboard, copied by the event loop before the next draw (see
    /// [`crate::clipboard`]), which then reports with [`App::on_copied`].
    pub clipboard: Option<String>,
    /// `clipboard_cmd` from config.toml: the last way to copy, after OSC 52 and the system's.
    pub clipboard_cmd: Option<String>,
    copying: Option<CopyJob>,
    /// A form field to edit in `$EDITOR`: the event loop suspends the screen, runs the editor and
    /// reports with [`App::on_edited`].
    pub pending_editor: Option<EditRequest>,
    /// Ctrl-s was pressed in the open form of this operation while what it checks against (a
    /// product's increments) was still being asked for: the send goes on when the answers are in.
    pub(super) send_when_looked_up: Option<&'static Operation>,
    /// `C` hides the charts (and shows them again).
    pub chart_hidden: bool,
    pub auto_refresh_every: Duration,
    /// How often tail mode polls the list it follows.
    pub tail_every: Duration,
    /// What each call in flight is for, and when it was sent.
    purposes: HashMap<CallId, (Purpose, Instant)>,
    /// The embedded sandbox's control port, for the sandbox view of tabs that use it.
    pub embedded_control: Option<String>,
    /// The embedded simulators, each built when its tab is first shown (or its first call).
    pub sandbox: Option<crate::sandbox::SandboxHandle>,
    /// Where the sandbox view's reads report back (the event loop owns the receiver).
    pub background: Option<mpsc::UnboundedSender<Background>>,
    /// Reads of the sandbox view still running.
    pub background_pending: usize,
    control_client: Option<reqwest::Client>,
    /// The keys of app-level actions: the defaults with `[keys]` over them.
    pub keymap: Keymap,
    /// Clicks and the wheel act (`mouse = true`); the event loop captures the mouse only then.
    pub mouse: bool,
    /// The focused pane fills the body (`z`).
    pub zoomed: bool,
    /// How far the help popup is scrolled (it is taller than a small terminal).
    pub help_scroll: u16,
    /// Where the last frame drew the tabs and panes, so a click finds what it is on.
    pub areas: Areas,
    /// The config and environment the console started with, for switching profile or theme.
    pub setup: Option<Setup>,
    /// Where calls are recorded (`None`: history off, or a console in a test).
    pub history: Option<crate::history::Recorder>,
    /// Set while `on_tick` reloads lists, so their calls are not recorded.
    auto_refreshing: bool,
    /// A call whose answer links to a file to save next: its id, the JSON pointer to the link,
    /// and the file name to offer.
    save_after: Option<(CallId, String, String)>,
    /// The credential-free client of downloads, made on first use.
    download_client: Option<reqwest::Client>,
    /// Bodies being indexed off the UI thread, by ticket.
    pub indexing: HashMap<u64, Job>,
    next_ticket: u64,
    /// Counts live tail sockets opened, so events of an older one are told apart.
    next_live: u64,
    /// Whether tail mode follows a service's push socket when it has one (else it polls).
    pub live_tails: bool,
}

impl App {
    pub fn new(tabs: Vec<Tab>, executor: Executor, theme: Theme, profile: String, read_only: bool) -> App {
        App {
            tabs,
            active: 0,
            focus: Focus::Browser,
            popup: None,
            executor,
            theme,
            profile,
            read_only,
            notice: None,
            quit: false,
            clipboard: None,
            clipboard_cmd: None,
            copying: None,
            pending_editor: None,
            send_when_looked_up: None,
            chart_hidden: false,
            auto_refresh_every: Duration::from_secs(2),
            tail_every: Duration::from_secs(2),
            purposes: HashMap::new(),
            embedded_control: None,
            sandbox: None,
            background: None,
            background_pending: 0,
            control_client: None,
            keymap: Keymap::default(),
            mouse: false,
            zoomed: false,
            help_scroll: 0,
            areas: Areas::default(),
            setup: None,
            history: None,
            auto_refreshing: false,
            save_after: None,
            indexing: HashMap::new(),
            next_ticket: 1,
            next_live: 0,
            live_tails: true,
            download_client: None,
        }
    }

    pub fn tab(&self) -> &Tab {
        &self.tabs[self.active]
    }

    fn tab_mut(&mut self) -> &mut Tab {
        &mut self.tabs[self.active]
    }

    /// What the status line says: the tab in view's message, else the console's.
    pub fn status(&self) -> Option<&(String, Severity)> {
        let tab = self.tab();
        let faded = tab.status_fades_at.is_some_and(|at| at <= Instant::now());
        tab.status.as_ref().filter(|_| !faded).or(self.notice.as_ref())
    }

    /// A message about what the user just did in the tab in view.
    fn info(&mut self, message: impl Into<String>) {
        self.info_on(self.active, message);
    }

    fn error(&mut self, message: impl Into<String>) {
        self.error_on(self.active, message);
    }

    /// A message about tab `tab`'s own action (a call it sent answered): it stays with that tab.
    fn info_on(&mut self, tab: usize, message: impl Into<String>) {
        self.tabs[tab].say(message.into(), Severity::Info);
    }

    /// A passing notice on tab `tab` (copied, saved): it fades after a few seconds.
    fn info_briefly(&mut self, tab: usize, message: impl Into<String>) {
        if let Some(tab) = self.tabs.get_mut(tab) {
            tab.say_briefly(message.into(), Instant::now());
        }
    }

    fn error_on(&mut self, tab: usize, message: impl Into<String>) {
        self.tabs[tab].say(message.into(), Severity::Error);
    }

    /// Adds a warning about the console as a whole, after any already there (start-up
    /// problems): shown on every tab until a tab has a message of its own.
    pub fn warn(&mut self, message: impl Into<String>) {
        let message = match self.notice.take() {
            Some((earlier, Severity::Error)) => format!("{earlier}; {}", message.into()),
            _ => message.into(),
        };
        self.notice = Some((message, Severity::Error));
    }

    /// How long the oldest call still queued or in flight has been going, if any.
    pub fn oldest_call_age(&self, now: Instant) -> Option<Duration> {
        self.executor
            .active()
            .filter_map(|(id, _)| self.purposes.get(&id).map(|(_, sent)| now.saturating_duration_since(*sent)))
            .max()
    }

    /// Loads the first resource of the active tab the first time it is shown.
    pub fn start_tab(&mut self) {
        let tab = self.tab_mut();
        if tab.started {
            return;
        }
        tab.started = true;
        self.start_simulator(self.active);
        self.open_resource();
        let tab = self.tab_mut();
        if tab.starting && tab.loading.is_some() {
            tab.browser.notice = Some((
                format!("starting the {} simulator (built and seeded on first use)…", tab.service.title()),
                false,
            ));
        }
    }

    /// Builds and seeds the embedded simulator of tab `index` off the UI thread, the first time
    /// the tab is shown; the tab says it is starting until [`Background::SimulatorStarted`].
    /// A console without its event loop (some tests) leaves it to the first request.
    fn start_simulator(&mut self, index: usize) {
        let tab = &self.tabs[index];
        if tab.mode != Mode::Embedded {
            return;
        }
        let (Some(handle), Some(reports)) = (self.sandbox.clone(), self.background.clone()) else { return };
        let service = tab.service;
        if handle.is_ready(service) {
            return;
        }
        self.tabs[index].starting = true;
        self.background_pending += 1;
        tokio::spawn(async move {
            let result = handle.ensure(service).await;
            // The console may be gone: nobody is waiting then.
            let _ = reports.send(Background::SimulatorStarted(service, result));
        });
    }

    fn switch_tab(&mut self, index: usize) {
        if index < self.tabs.len() {
            // Leaving a tailed list stops its tail: nobody watches it poll.
            if index != self.active && self.tab_mut().stop_tail() {
                self.info("tail stopped");
            }
            self.active = index;
            self.start_tab();
        }
    }

    /// Every tab's inspector wakes the event loop when a jq filter's result is ready.
    pub fn arm_filter_wakers(&mut self) {
        let Some(sender) = self.background.clone() else { return };
        let waker = crate::tui::components::inspector::Waker(std::sync::Arc::new(move || {
            let _ = sender.send(Background::Filtered);
        }));
        for tab in &mut self.tabs {
            tab.inspector.set_waker(waker.clone());
        }
    }

    /// A background task reported: a read of the sandbox view, or a file saved (or not).
    pub fn on_background(&mut self, report: Background) {
        // A filter's wake-up is no task anyone counted.
        if let Background::Filtered = report {
            for tab in &mut self.tabs {
                tab.inspector.poll_filter();
            }
            return;
        }
        // A socket's events are no task anyone counted either.
        if let Background::Live(tab, generation, event) = report {
            let stream =
                self.tabs.get(tab).and_then(|t| t.live_stream.as_ref()).is_some_and(|l| l.generation == generation);
            if stream {
                return self.on_live_stream(tab, event);
            }
            let market =
                self.tabs.get(tab).and_then(|t| t.live_market.as_ref()).is_some_and(|l| l.generation == generation);
            if market {
                return self.on_live_market(tab, event);
            }
            let rows =
                self.tabs.get(tab).and_then(|t| t.live_rows.as_ref()).is_some_and(|l| l.generation == generation);
            if rows {
                return self.on_live_rows(tab, event);
            }
            return self.on_live_tail(tab, generation, event);
        }
        self.background_pending = self.background_pending.saturating_sub(1);
        match report {
            Background::Sandbox(report) => {
                if let Some(Popup::Sandbox(view)) = self.popup.as_mut() {
                    view.apply(report);
                }
            }
            Background::Indexed(ticket, result) => self.on_indexed(ticket, result),
            Background::Filtered | Background::Live(..) => {}
            Background::SimulatorStarted(service, result) => {
                let Some(index) = self.tabs.iter().position(|t| t.service == service) else { return };
                self.tabs[index].starting = false;
                if let Err(e) = result {
                    self.error_on(index, format!("the {} simulator did not start: {e}", service.title()));
                }
            }
            Background::Saved(tab, SaveReport { path, result, view }) => match result {
                Ok(bytes) => {
                    self.info_briefly(tab, format!("saved {} to {}", human_bytes(bytes), path.display()));
                    if let Some(view) = view {
                        self.tabs[tab].detail = Some((*view).clone());
                        if tab == self.active && self.popup.is_none() {
                            self.popup = Some(Popup::Detail(*view));
                        }
                    }
                }
                Err(e) => self.error_on(tab, format!("not saved: {e}")),
            },
        }
    }

    /// When the event loop should next wake up by itself, if ever: the next auto-refresh of a
    /// list in view, or the next redraw of the elapsed time of calls in flight. `None` when
    /// idle, so an idle console sleeps.
    pub fn next_deadline(&self) -> Option<Instant> {
        let now = Instant::now();
        let refresh = self
            .tabs
            .iter()
            .filter(|t| t.auto_refresh && t.can_auto_refresh())
            .map(|t| t.last_refresh.map_or(now, |at| (at + self.auto_refresh_every).max(now)))
            .min();
        let tail = self
            .tabs
            .iter()
            .filter_map(|t| t.tail.as_ref().filter(|tail| tail.in_flight.is_none() && t.can_auto_refresh()))
            .map(|tail| tail.last_poll.map_or(now, |at| (at + self.tail_every).max(now)))
            .min();
        let redraw = match (self.indexing.is_empty(), self.executor.active_count()) {
            (false, _) => Some(now + INDEXING_REDRAW),
            (true, 0) => None,
            (true, _) => Some(now + IN_FLIGHT_REDRAW),
        };
        let watch = self.watched().map(|subject| match self.tab().watch.last_poll {
            // A view newly open: the tick notes it, and its first ask waits a whole interval
            // (a market, which nothing fetched yet, asks at once).
            _ if self.tab().watch.subject.as_ref() != Some(&subject) => now,
            Some(at) => (at + self.tail_every).max(now),
            None => now,
        });
        let live = self.live_columns().map(|_| {
            let tab = self.tab();
            match tab.live.last_poll {
                Some(at) if tab.live.op == tab.page.as_ref().map(|p| p.op.name) => (at + self.tail_every).max(now),
                _ => now,
            }
        });
        let fade = self.tab().status_fades_at;
        // A jq filter at work: its result is looked for, and its running time drawn.
        let filtering = self.tabs.iter().any(|t| t.inspector.is_filtering()).then(|| now + IN_FLIGHT_REDRAW);
        let sockets = self.sockets_due().then_some(now);
        refresh
            .into_iter()
            .chain(tail)
            .chain(redraw)
            .chain(watch)
            .chain(live)
            .chain(fade)
            .chain(filtering)
            .chain(sockets)
            .min()
    }

    /// Time passed: reload the lists whose auto-refresh is due.
    pub fn on_tick(&mut self, now: Instant) {
        for tab in &mut self.tabs {
            tab.fade_status(now);
            tab.inspector.poll_filter();
        }
        let active = self.active;
        for index in 0..self.tabs.len() {
            let tab = &self.tabs[index];
            let due = tab.auto_refresh
                && tab.can_auto_refresh()
                && tab.last_refresh.is_none_or(|at| at + self.auto_refresh_every <= now);
            if due {
                self.active = index;
                self.auto_refreshing = true;
                self.refresh();
                self.auto_refreshing = false;
            }
            if self.tabs[index].tail_due(now, self.tail_every) {
                self.poll_tail(index, now);
            }
        }
        self.active = active;
        self.poll_watch(now);
        self.poll_live(now);
        self.follow_rows();
        self.follow_stream();
    }
}

fn response_view(title: &str, response: &client::Response) -> ResponseView {
    ResponseView {
        title: title.to_owned(),
        status: Some(response.status),
        duration: response.duration,
        request_line: response.request_line.clone(),
        headers: response.headers.clone(),
        body: response.body.clone(),
        content_type: response.content_type().map(str::to_owned),
    }
}

fn error_view(op: &Operation, error: &CallError) -> ResponseView {
    let (status, body) = match error {
        CallError::Api(api) => {
            (Some(api.status), json!({"status": api.status, "code": api.code, "message": api.message}))
        }
        other => (None, json!({"error": other.to_string()})),
    };
    ResponseView {
        title: format!("{} failed", op.name),
        status,
        duration: Duration::ZERO,
        request_line: String::new(),
        headers: Vec::new(),
        body: serde_json::to_vec_pretty(&body).unwrap_or_default().into(),
        content_type: Some("application/json".into()),
    }
}
