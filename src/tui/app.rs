//! The console's state and what keys and call results do to it. Nothing here waits: calls go to
//! the task pool and come back as [`CallEvent`]s.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers, MouseButton, MouseEvent, MouseEventKind};
use ratatui::layout::{Position, Rect};
use serde_json::{json, Value};
use tokio::sync::mpsc;

use crate::catalog::{all_operations, Operation, Service};
use crate::client::pagination;
use crate::client::{self, CallError, CallEvent, CallId, Executor, Values};
use crate::config::Mode;
use crate::history::{Entry, Record};
use crate::json_index::JsonError;
use crate::table::RowSpec;
use crate::tui::components::browser::{BrowserAction, Layout};
use crate::tui::components::chart::{self, ChartView};
use crate::tui::components::confirm::{Confirm, ConfirmAction};
use crate::tui::components::copy_menu::{CopyFormat, CopyMenu, CopyMenuAction};
use crate::tui::components::detail::{Detail, DetailAction, DetailCommand, TransactionAction};
use crate::tui::components::form::{EditRequest, Form, FormAction};
use crate::tui::components::history_view::{HistoryAction, HistoryView};
use crate::tui::components::inspector::{self, ResponseView};
use crate::tui::components::menu::{Command, Menu, MenuAction, PaletteItem};
use crate::tui::components::sandbox_view::{self, SandboxAction, SandboxReport, SandboxView};
use crate::tui::components::save_file::{self, SaveAction, SavePrompt, SaveReport};
use crate::tui::draw::Areas;
use crate::tui::indexer::{self, Answer, Indexed, Job, Page, Then};
use crate::tui::keymap::{Action, Keymap, ACTIONS};
use crate::tui::setup::Setup;
use crate::tui::tab::{PageState, Tab, TailState};
use crate::tui::theme::Theme;
use crate::tui::{mail, shipping, tax};

/// The pane that receives keys.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Focus {
    Resources,
    Browser,
    Inspector,
}

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
    Saved(SaveReport),
    /// A body indexed off the UI thread (see [`indexer`]), by its job's ticket.
    Indexed(u64, Result<Indexed, JsonError>),
}

/// The open view's live refresh: when it last asked, and the ask in flight. `subject` is the
/// view it is for, so a view newly opened waits its full interval before its first ask.
#[derive(Debug, Default)]
struct WatchState {
    subject: Option<String>,
    last_poll: Option<Instant>,
    in_flight: Option<CallId>,
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
    /// The open view asking again for what it shows (a tracker moving, a batch being bought).
    Watch { tab: usize, op: &'static Operation },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Severity {
    Info,
    Error,
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
    /// The last message for the status bar.
    pub status: Option<(String, Severity)>,
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
    /// The chart of each tab (by index) whose page in view is a time series.
    pub charts: HashMap<usize, ChartView>,
    /// `C` hides the charts (and shows them again).
    pub chart_hidden: bool,
    /// The last request sent from each tab (by index), for `Y`.
    sent: HashMap<usize, client::PreparedRequest>,
    pub auto_refresh_every: Duration,
    /// How often tail mode polls the list it follows.
    pub tail_every: Duration,
    /// What each call in flight is for, and when it was sent.
    purposes: HashMap<CallId, (Purpose, Instant)>,
    /// The tab whose browser view the error in the status line is about: a later successful
    /// load of that view clears it.
    status_view: Option<usize>,
    /// The embedded sandbox's control port, for the sandbox view of tabs that use it.
    pub embedded_control: Option<String>,
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
    /// The open view's asking again (a tracker, a batch on its way), every `tail_every`.
    watch: WatchState,
    /// A call whose answer links to a file to save next: its id, the JSON pointer to the link,
    /// and the file name to offer.
    save_after: Option<(CallId, String, String)>,
    /// The credential-free client of downloads, made on first use.
    download_client: Option<reqwest::Client>,
    /// Bodies being indexed off the UI thread, by ticket.
    pub indexing: HashMap<u64, Job>,
    next_ticket: u64,
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
            status: None,
            quit: false,
            clipboard: None,
            clipboard_cmd: None,
            copying: None,
            sent: HashMap::new(),
            charts: HashMap::new(),
            pending_editor: None,
            chart_hidden: false,
            auto_refresh_every: Duration::from_secs(2),
            tail_every: Duration::from_secs(2),
            purposes: HashMap::new(),
            status_view: None,
            embedded_control: None,
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
            watch: WatchState::default(),
            save_after: None,
            indexing: HashMap::new(),
            next_ticket: 1,
            download_client: None,
        }
    }

    pub fn tab(&self) -> &Tab {
        &self.tabs[self.active]
    }

    fn tab_mut(&mut self) -> &mut Tab {
        &mut self.tabs[self.active]
    }

    fn info(&mut self, message: impl Into<String>) {
        self.status = Some((message.into(), Severity::Info));
        self.status_view = None;
    }

    fn error(&mut self, message: impl Into<String>) {
        self.status = Some((message.into(), Severity::Error));
        self.status_view = None;
    }

    /// Adds a warning to the status line, after any already there (start-up problems).
    pub fn warn(&mut self, message: impl Into<String>) {
        let message = match self.status.take() {
            Some((earlier, Severity::Error)) => format!("{earlier}; {}", message.into()),
            _ => message.into(),
        };
        self.error(message);
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
        self.open_resource();
    }

    /// Why nothing can be sent from this tab, when the embedded sandbox has no simulator for it.
    fn unavailable_reason(&self) -> Option<String> {
        let tab = self.tab();
        (!tab.available).then(|| {
            format!(
                "The {} simulator is not built yet, so nothing can be sent offline. Set {} \
                 (or a profile in config.toml) to use the live service.",
                tab.service.title(),
                crate::client::credential_variables(tab.service).join(", ")
            )
        })
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

    /// Handles one key; returns nothing: state changes are drawn on the next frame.
    pub fn handle_key(&mut self, key: KeyEvent) {
        if key.code == KeyCode::Char('c') && key.modifiers.contains(KeyModifiers::CONTROL) {
            self.quit = true;
            return;
        }
        if self.popup.is_some() {
            self.handle_popup_key(key);
            return;
        }
        let typing = match self.focus {
            Focus::Browser => self.tab().browser.is_typing(),
            Focus::Inspector => self.tab().inspector.is_typing(),
            Focus::Resources => false,
        };
        if typing {
            self.handle_pane_key(key);
            return;
        }
        match self.keymap.action_for(&key, self.focus) {
            Some(action) => self.run_action(action),
            None => self.handle_pane_key(key),
        }
    }

    /// Does what an app-level key or palette entry asks.
    pub fn run_action(&mut self, action: Action) {
        match action {
            Action::Quit => self.quit = true,
            Action::Help => {
                self.help_scroll = 0;
                self.popup = Some(Popup::Help);
            }
            Action::Tab(index) => self.switch_tab(index),
            Action::NextTab => self.switch_tab((self.active + 1) % self.tabs.len()),
            Action::PrevTab => self.switch_tab((self.active + self.tabs.len() - 1) % self.tabs.len()),
            Action::Operations => self.open_operations_menu(),
            Action::Palette => self.open_palette(),
            Action::SandboxView => self.open_sandbox_view(),
            Action::History => self.open_history(),
            Action::CopyRequest => self.open_copy_menu(None),
            Action::Chart => self.toggle_chart(),
            Action::NextSeries => self.cycle_chart(true),
            Action::PrevSeries => self.cycle_chart(false),
            Action::TableView => match self.tab().detail.clone() {
                Some(detail) => self.popup = Some(Popup::Detail(detail)),
                None => self.info(
                    "no table view yet: open a transaction, look up a rate or a calculation, a Mailgun domain, or an EasyPost shipment, tracker, batch or address",
                ),
            },
            Action::Tail => self.toggle_tail(),
            Action::ComposeEmail => self.compose("messages_send"),
            Action::ComposeMime => self.compose("messages_send_mime"),
            Action::Refresh => self.refresh(),
            Action::AutoRefresh => self.toggle_auto_refresh(),
            Action::Cancel => {
                let n = self.executor.cancel_all();
                self.tabs.iter_mut().for_each(Tab::stop_loading);
                self.purposes.clear();
                let indexing: usize = (0..self.tabs.len()).map(|tab| self.cancel_indexing(tab)).sum();
                match indexing {
                    0 => self.info(format!("cancelled {n} call(s)")),
                    _ => self.info(format!("cancelled {n} call(s) and the indexing of {indexing} response(s)")),
                }
            }
            Action::NextPage => self.next_page(),
            Action::PrevPage => self.previous_page(),
            Action::ClearFilters => self.clear_filters(),
            Action::Zoom => self.zoomed = !self.zoomed,
            Action::ReadOnly => self.toggle_read_only(),
        }
    }

    /// `o`: the tab's operations, those of the selected resource first.
    fn open_operations_menu(&mut self) {
        let tab = self.tab();
        let title = format!("{} operations", tab.service.title());
        let (first, rest) = tab.operations_for_menu();
        self.popup = Some(Popup::Menu(Menu::grouped(title, tab.resource_name(), first, rest)));
    }

    /// `:`: every operation of every service, then the console's own actions.
    fn open_palette(&mut self) {
        let items = self.palette_items();
        self.popup = Some(Popup::Menu(Menu::palette(all_operations().collect(), items)));
    }

    /// The console actions of the palette: every action marked for it in [`ACTIONS`], then a
    /// line per profile and per theme.
    fn palette_items(&self) -> Vec<PaletteItem> {
        let mut items: Vec<PaletteItem> = ACTIONS
            .iter()
            .filter(|info| info.in_palette)
            .map(|info| PaletteItem {
                label: info.name.replace('_', " "),
                summary: match self.keymap.hint(info.action) {
                    Some(_) => format!("{} ({})", info.description, self.keymap.label(info.action)),
                    None => info.description.to_owned(),
                },
                command: Command::Action(info.action),
            })
            .collect();
        if let Some(setup) = &self.setup {
            items.extend(setup.profiles().into_iter().map(|name| PaletteItem {
                label: format!("profile {name}"),
                summary: if name == self.profile {
                    "the profile in use".into()
                } else {
                    "switch to this profile".into()
                },
                command: Command::Profile(name),
            }));
            items.extend(setup.themes().into_iter().map(|name| PaletteItem {
                label: format!("theme {name}"),
                summary: "draw with this theme".into(),
                command: Command::Theme(name),
            }));
        }
        items
    }

    /// Makes `name` the profile in use: every tab is built again for its targets (lists and
    /// calls of the old ones are dropped); nothing changes when it cannot be resolved.
    fn switch_profile(&mut self, name: &str) {
        let Some(setup) = self.setup.as_ref() else {
            return self.error("this console was started without a config: no profile to switch to");
        };
        match setup.tabs(name) {
            Ok((tabs, warnings)) => {
                let read_only = setup.read_only(name);
                self.executor.cancel_all();
                self.purposes.clear();
                self.tabs = tabs;
                self.profile = name.to_owned();
                self.read_only = read_only;
                self.focus = Focus::Browser;
                self.start_tab();
                let live = self.tabs.iter().filter(|t| t.target.live).count();
                let mut message = format!("profile {name}: {live} LIVE, {} SANDBOX", self.tabs.len() - live);
                if read_only {
                    message.push_str(", read-only");
                }
                match warnings.is_empty() {
                    true => self.info(message),
                    false => self.error(format!("{message}; {}", warnings.join("; "))),
                }
            }
            Err(e) => self.error(format!("profile {name} not switched to: {e}")),
        }
    }

    fn switch_theme(&mut self, name: &str) {
        let Some(setup) = self.setup.as_ref() else { return };
        let (theme, warning) = setup.theme(name);
        self.theme = theme;
        match warning {
            Some(warning) => self.error(warning),
            None => self.info(format!("theme {name}")),
        }
    }

    fn toggle_read_only(&mut self) {
        if self.started_read_only() {
            return self.error("started with --read-only, which holds until you quit");
        }
        self.read_only = !self.read_only;
        if self.read_only {
            self.info("read-only: operations that change state will not be sent");
        } else {
            self.info("read-only off: operations that change state can be sent");
        }
    }

    /// A click or a turn of the wheel (only with `mouse = true`): a tab in the header switches
    /// to it; in a pane it focuses the pane and selects what is under the pointer (a second
    /// click on the selected row opens it); the wheel moves the pane under the pointer.
    pub fn handle_mouse(&mut self, event: MouseEvent) {
        if !self.mouse {
            return;
        }
        let at = Position::new(event.column, event.row);
        let wheel = match event.kind {
            MouseEventKind::ScrollDown => Some(KeyCode::Down),
            MouseEventKind::ScrollUp => Some(KeyCode::Up),
            MouseEventKind::Down(MouseButton::Left) => None,
            _ => return,
        };
        if self.popup.is_some() {
            // A popup takes the wheel as arrows; clicks outside it do nothing.
            if let Some(code) = wheel {
                self.handle_popup_key(KeyEvent::new(code, KeyModifiers::NONE));
            }
            return;
        }
        if let Some(code) = wheel {
            return self.scroll_pane_at(at, code);
        }
        if let Some(index) = self.areas.tabs.iter().find(|(area, _)| area.contains(at)).map(|(_, index)| *index) {
            return self.switch_tab(index);
        }
        let row_in = |area: Rect| area.contains(at).then(|| at.y - area.y);
        if let Some(row) = row_in(self.areas.resources) {
            let index = (usize::from(row) + self.areas.resources_offset).checked_sub(1);
            if let Some(index) = index.filter(|i| *i < self.tab().resources.len() && row > 0) {
                self.tab_mut().resource = index;
                self.focus = Focus::Browser;
                self.open_resource();
            } else {
                self.focus = Focus::Resources;
            }
        } else if let Some(row) = row_in(self.areas.browser) {
            self.focus = Focus::Browser;
            let action = self.tab_mut().browser.click(row);
            self.on_browser_action(action);
        } else if let Some(row) = row_in(self.areas.inspector) {
            self.focus = Focus::Inspector;
            self.tab_mut().inspector.select_at(row);
        }
    }

    /// The wheel over a pane: three lines down or up, without moving the focus.
    fn scroll_pane_at(&mut self, at: Position, code: KeyCode) {
        let key = KeyEvent::new(code, KeyModifiers::NONE);
        for _ in 0..3 {
            if self.areas.browser.contains(at) {
                let action = self.tab_mut().browser.handle_key(key);
                if let BrowserAction::Selected(_) = action {
                    self.tab_mut().remember_selection();
                }
            } else if self.areas.inspector.contains(at) {
                self.tab_mut().inspector.handle_key(key);
            } else if self.areas.resources.contains(at) {
                let tab = self.tab_mut();
                tab.resource = match code {
                    KeyCode::Down => (tab.resource + 1).min(tab.resources.len().saturating_sub(1)),
                    _ => tab.resource.saturating_sub(1),
                };
            }
        }
    }

    /// A bracketed paste: the text goes, as text, into the box or field being typed in (the
    /// filter, the search, a form field, a menu's query, the id to confirm); in the browser it
    /// opens the row filter. It never runs as keys, so pasting `orders:eu` does not press `o`.
    pub fn handle_paste(&mut self, text: &str) {
        let multi_line = matches!(&self.popup, Some(Popup::Form(form)) if form.focused_takes_lines());
        let text = paste_text(text, multi_line);
        if text.is_empty() {
            return;
        }
        match self.popup.as_mut() {
            Some(Popup::Form(form)) => return form.paste(&text),
            Some(Popup::Menu(menu)) => return menu.paste(&text),
            Some(Popup::Confirm(confirm)) => return confirm.paste(&text),
            Some(Popup::History(view)) => return view.paste(&text),
            Some(Popup::Save(prompt, _)) => return prompt.paste(&text),
            Some(Popup::Help | Popup::Detail(_) | Popup::Sandbox(_) | Popup::Copy(..)) => {}
            None => {
                let focus = self.focus;
                let tab = self.tab_mut();
                match focus {
                    Focus::Browser => return tab.browser.paste(&text),
                    Focus::Inspector if tab.inspector.paste(&text) => return,
                    Focus::Inspector | Focus::Resources => {}
                }
            }
        }
        let o = self.key_hint(Action::Operations);
        self.info(format!("paste ignored: nothing here takes text (/ filters, {o} opens a form)"));
    }

    fn handle_pane_key(&mut self, key: KeyEvent) {
        match self.focus {
            Focus::Resources => match key.code {
                KeyCode::Down | KeyCode::Char('j') => {
                    let tab = self.tab_mut();
                    tab.resource = (tab.resource + 1).min(tab.resources.len().saturating_sub(1));
                }
                KeyCode::Up | KeyCode::Char('k') => {
                    let tab = self.tab_mut();
                    tab.resource = tab.resource.saturating_sub(1);
                }
                KeyCode::Enter | KeyCode::Right | KeyCode::Char('l') => {
                    self.focus = Focus::Browser;
                    self.open_resource();
                }
                _ => {}
            },
            // While the row filter is typed, every key is text (`h` and `l` too).
            Focus::Browser if self.tab().browser.is_typing() => {
                let action = self.tab_mut().browser.handle_key(key);
                self.on_browser_action(action);
            }
            Focus::Browser => match key.code {
                KeyCode::Esc => {
                    if let Some(id) = self.tab().loading {
                        self.executor.cancel(id);
                        self.purposes.remove(&id);
                        self.tab_mut().stop_loading();
                        self.info(format!("cancelled call {id}"));
                    } else if self.cancel_indexing(self.active) > 0 {
                        let tab = self.tab_mut();
                        // Rows of the page before stay; with none, say how to get them.
                        tab.browser.notice =
                            tab.page.is_none().then(|| ("cancelled; r loads it again".to_owned(), false));
                        self.info("cancelled indexing the response (r asks again)".to_owned());
                    } else {
                        self.focus = Focus::Resources;
                    }
                }
                KeyCode::Left | KeyCode::Char('h') => self.focus = Focus::Resources,
                KeyCode::Right | KeyCode::Char('l') => self.focus = Focus::Inspector,
                _ => {
                    let action = self.tab_mut().browser.handle_key(key);
                    self.on_browser_action(action);
                }
            },
            Focus::Inspector => {
                if key.code == KeyCode::Char('y') && key.modifiers.is_empty() {
                    match self.tab().inspector.copy_text() {
                        Some(text) => {
                            let what = human_size(text.len());
                            self.info(format!("{what} to be copied to the clipboard…"));
                            self.copying = Some(CopyJob { what, show_on_failure: false });
                            self.clipboard = Some(text);
                        }
                        None => self.error("nothing to copy here (binary, empty, or over 1 MB)"),
                    }
                    return;
                }
                if self.tab_mut().inspector.handle_key(key) {
                    return;
                }
                if matches!(key.code, KeyCode::Esc | KeyCode::Left | KeyCode::Char('h')) {
                    self.focus = Focus::Browser;
                }
            }
        }
    }

    /// What the browser said a key or a click did: open the record, or remember the selection.
    fn on_browser_action(&mut self, action: BrowserAction) {
        match action {
            BrowserAction::Open(_) => {
                self.tab_mut().remember_selection();
                self.show_selected_record();
                match self.tab().page.as_ref().map(|p| (p.op.service, p.op.name)) {
                    Some((Service::Avatax, "companies_list")) => self.drill_into("transactions"),
                    Some((Service::Avatax, "transactions_list")) => self.open_transaction(),
                    Some((Service::Mailgun, "domains_list")) => self.open_domain(),
                    Some((Service::Mailgun, "mailing_lists_list")) => self.drill_into("list members"),
                    Some((Service::Easypost, list)) if self.open_shipping_record(list) => {}
                    _ if self.fetch_selected_record() => {}
                    _ => self.focus = Focus::Inspector,
                }
            }
            BrowserAction::Selected(_) => self.tab_mut().remember_selection(),
            BrowserAction::None => {}
        }
    }

    fn handle_popup_key(&mut self, key: KeyEvent) {
        let Some(popup) = self.popup.as_mut() else { return };
        match popup {
            Popup::Help => {
                let closes = self.keymap.is(Action::Help, &key) || self.keymap.is(Action::Quit, &key);
                match key.code {
                    _ if closes => self.popup = None,
                    KeyCode::Esc | KeyCode::Char('?' | 'q') | KeyCode::Enter => self.popup = None,
                    KeyCode::Down | KeyCode::Char('j') => self.help_scroll = self.help_scroll.saturating_add(1),
                    KeyCode::Up | KeyCode::Char('k') => self.help_scroll = self.help_scroll.saturating_sub(1),
                    KeyCode::PageDown | KeyCode::Char(' ') => self.help_scroll = self.help_scroll.saturating_add(10),
                    KeyCode::PageUp => self.help_scroll = self.help_scroll.saturating_sub(10),
                    _ => {}
                }
            }
            Popup::Menu(menu) => match menu.handle_key(key) {
                MenuAction::Chosen(op) => {
                    self.popup = None;
                    if op.service != self.tab().service {
                        if let Some(index) = self.tabs.iter().position(|t| t.service == op.service) {
                            self.switch_tab(index);
                        }
                    }
                    self.open_form(op);
                }
                MenuAction::Command(command) => {
                    self.popup = None;
                    match command {
                        Command::Action(action) => self.run_action(action),
                        Command::Profile(name) => self.switch_profile(&name),
                        Command::Theme(name) => self.switch_theme(&name),
                    }
                }
                MenuAction::Cancel => self.popup = None,
                MenuAction::None => {}
            },
            Popup::Detail(detail) => match detail.handle_key(key) {
                DetailAction::Close => self.popup = None,
                DetailAction::Transaction(action) => {
                    let transaction = detail.transaction.clone();
                    if let Some(transaction) = transaction {
                        self.open_transaction_action(action, &transaction);
                    }
                }
                DetailAction::Run(command) => self.run_detail_command(command),
                DetailAction::None => {}
            },
            Popup::History(view) => match view.handle_key(key) {
                HistoryAction::Close => self.popup = None,
                HistoryAction::Inspect(record) => self.inspect_recorded(&record),
                HistoryAction::Edit(record) => self.reopen_recorded(&record, false),
                HistoryAction::Send(record) => self.reopen_recorded(&record, true),
                HistoryAction::None => {}
            },
            Popup::Sandbox(view) => match view.handle_key(key) {
                SandboxAction::Refresh => self.refresh_sandbox_view(),
                SandboxAction::Close => self.popup = None,
                SandboxAction::None => {}
            },
            Popup::Save(prompt, _) => match prompt.handle_key(key) {
                SaveAction::Save(path) => {
                    let url = prompt.url.clone();
                    self.close_save_prompt();
                    self.start_save(url, path);
                }
                SaveAction::Cancel => {
                    self.close_save_prompt();
                    self.info("nothing was saved");
                }
                SaveAction::None => {}
            },
            Popup::Copy(menu, _) => match menu.handle_key(key) {
                CopyMenuAction::Chosen(format) => {
                    self.copy_request(format);
                    self.close_copy_menu();
                }
                CopyMenuAction::Cancel => self.close_copy_menu(),
                CopyMenuAction::None => {}
            },
            Popup::Form(_) if key.code == KeyCode::Char('y') && key.modifiers == KeyModifiers::ALT => {
                if let Some(Popup::Form(form)) = self.popup.take() {
                    self.open_copy_menu(Some(Box::new(form)));
                }
            }
            Popup::Form(form) => match form.handle_key(key) {
                FormAction::Submit(values) => {
                    let op = form.op;
                    self.tab_mut().drafts.insert(op.name, values.clone());
                    self.popup = None;
                    self.request_operation(op, values);
                }
                FormAction::Cancel => {
                    let (op, values) = (form.op, form.values());
                    self.tab_mut().drafts.insert(op.name, values);
                    self.popup = None;
                }
                FormAction::Edit(request) => self.pending_editor = Some(request),
                FormAction::None => {}
            },
            Popup::Confirm(confirm) => match confirm.handle_key(key) {
                ConfirmAction::Confirmed => {
                    let (op, values) = (confirm.op, confirm.values.clone());
                    self.popup = None;
                    self.send_operation(op, values);
                }
                ConfirmAction::Cancel => {
                    self.popup = None;
                    self.info("nothing was sent");
                }
                ConfirmAction::None => {}
            },
        }
    }

    /// Opens `op`'s form, pre-filled from the selection, the context and the last draft.
    pub fn open_form(&mut self, op: &'static Operation) {
        let tab = self.tab();
        // In the inspector, the selected object (a device inside a response, say) is the record.
        let inspected = match (self.focus, tab.inspector.selected_json()) {
            (Focus::Inspector, Some(Value::Object(map))) => Some(map),
            _ => None,
        };
        let values = tab.prefill(op, inspected.as_ref());
        self.open_form_with(op, &values);
    }

    /// Opens `op`'s form with exactly these values.
    fn open_form_with(&mut self, op: &'static Operation, values: &Values) {
        let tab = self.tab();
        let label = format!("{} {}", mode_label(tab), tab.target.base_url);
        let mut form = Form::new(op, values, label);
        if self.read_only && op.mutates {
            form.message =
                Some(format!("{}: this operation changes state and will not be sent", self.read_only_reason()));
        }
        self.popup = Some(Popup::Form(form));
    }

    /// A list of bare ids (TaxJar's orders, refunds and customers) says nothing about a record
    /// but its id: Enter fetches the record with its resource's GET. False when the row is a
    /// whole record already, or its resource has no such GET.
    fn fetch_selected_record(&mut self) -> bool {
        let tab = self.tab();
        let Some(page) = tab.page.as_ref() else { return false };
        if tab.browser.selected_kind().is_none_or(|kind| kind == crate::json_index::Kind::Object) {
            return false;
        }
        let resource = page.op.resource;
        let get = tab.service.operations().iter().find(|op| {
            op.resource == resource
                && op.method == crate::catalog::Method::Get
                && !op.is_list()
                && !op.path_params().is_empty()
        });
        let Some(op) = get else { return false };
        let values: Values = tab
            .suggested_values(op, None)
            .into_iter()
            .filter(|(name, _)| op.path_params().contains(&name.as_str()))
            .collect();
        if op.path_params().iter().any(|name| !values.contains_key(*name)) {
            return false;
        }
        self.send_operation(op, values);
        true
    }

    /// Lists `resource` for the record selected in the browser (a company's transactions).
    fn drill_into(&mut self, resource: &str) {
        let tab = self.tab_mut();
        let Some(index) = tab.resources.iter().position(|r| *r == resource) else { return };
        tab.resource = index;
        self.focus = Focus::Browser;
        self.open_resource();
    }

    /// Opens the selected AvaTax transaction as tables at once, and asks for it again with its
    /// lines, jurisdiction details and addresses, which a list row may not carry.
    fn open_transaction(&mut self) {
        let Some(record) = self.tab().selected_record().map(Value::Object) else { return };
        let detail = tax::transaction_detail(&record);
        self.tab_mut().detail = Some(detail.clone());
        self.popup = Some(Popup::Detail(detail));
        let has_details = record["lines"]
            .as_array()
            .is_some_and(|lines| !lines.is_empty() && lines.iter().all(|l| l.get("details").is_some()));
        if has_details {
            return;
        }
        let Some(op) = Service::Avatax.operation("transactions_get") else { return };
        let mut values = self.transaction_values(&record);
        values.insert("$include".into(), "Summary,Addresses".into());
        if values.contains_key("companyCode") && values.contains_key("transactionCode") {
            // The detail popup stays open; the answer replaces it only while nothing else is.
            let popup = self.popup.take();
            self.send_operation(op, values);
            if self.popup.is_none() {
                self.popup = popup;
            }
        }
    }

    /// The company code, transaction code and document type that address `transaction`.
    fn transaction_values(&self, transaction: &Value) -> Values {
        let tab = self.tab();
        let mut values = Values::new();
        let company = transaction
            .get("companyCode")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .or_else(|| tab.page.as_ref().and_then(|p| p.values.get("companyCode").cloned()))
            .or_else(|| tab.context.get("companyCode").cloned());
        if let Some(company) = company {
            values.insert("companyCode".into(), company);
        }
        if let Some(code) = transaction.get("code").and_then(Value::as_str) {
            values.insert("transactionCode".into(), code.to_owned());
        }
        if let Some(kind) = transaction.get("type").and_then(Value::as_str) {
            values.insert("documentType".into(), kind.to_owned());
        }
        values
    }

    /// Opens the form of a commit, void, adjust or refund of `transaction`, with its codes and
    /// the usual values filled in: nothing is sent before the user reads it and presses Ctrl-s.
    fn open_transaction_action(&mut self, action: TransactionAction, transaction: &Value) {
        let Some(op) = Service::Avatax.operation(action.operation()) else { return };
        let mut values = self.transaction_values(transaction);
        // The answer then carries the lines and jurisdictions, so the view can show it again.
        values.insert("$include".into(), "Summary,Addresses".into());
        match action {
            TransactionAction::Commit => {
                values.insert("commit".into(), "true".into());
            }
            TransactionAction::Void => {
                values.insert("code".into(), "DocVoided".into());
            }
            TransactionAction::Adjust => {
                let draft = tax::adjustment_draft(transaction);
                values.insert("newTransaction".into(), serde_json::to_string_pretty(&draft).unwrap_or_default());
            }
            TransactionAction::Refund => {
                values.insert("refundDate".into(), tax::today());
                values.insert("refundType".into(), "Full".into());
                if let Some(code) = transaction.get("code").and_then(Value::as_str) {
                    values.insert("refundTransactionCode".into(), format!("{code}-refund"));
                }
            }
        }
        self.open_form_with(op, &values);
    }

    /// Where the sandbox view of the active tab reads from, or why it has nothing to read.
    fn sandbox_control(&self) -> Result<String, String> {
        let tab = self.tab();
        match tab.mode {
            Mode::Live => Err(format!(
                "{} is LIVE: its calls go to the real service, so there is no sandbox to show.",
                tab.service.title()
            )),
            Mode::Embedded => {
                self.embedded_control.clone().ok_or_else(|| "the embedded sandbox has no control port".into())
            }
            Mode::External if self.profile == "local" => {
                Ok(format!("http://127.0.0.1:{}", crate::sandbox::DEFAULT_PORT_BASE))
            }
            Mode::External => external_control(&tab.target.base_url, tab.service).ok_or_else(|| {
                format!(
                    "{} points at {}, which is not an opsdeck sandbox on this machine: no control port to read.",
                    tab.service.title(),
                    tab.target.base_url
                )
            }),
        }
    }

    fn open_sandbox_view(&mut self) {
        let view = SandboxView::new(self.tab().service, self.sandbox_control());
        self.popup = Some(Popup::Sandbox(view));
        self.refresh_sandbox_view();
    }

    /// Enter on a row of an EasyPost list with a view (a shipment's rates, a tracker's
    /// timeline, a batch, an address's verification): the view opens from the row at once,
    /// and is kept for `b`. False when the list has none.
    fn open_shipping_record(&mut self, list: &str) -> bool {
        let Some(record) = self.tab().selected_record().map(Value::Object) else { return false };
        let Some(detail) = shipping::record_detail(list, &record) else { return false };
        self.tab_mut().detail = Some(detail.clone());
        self.popup = Some(Popup::Detail(detail));
        true
    }

    /// Asks where to save the file at `url`, starting from `file_name`; the view open (if any)
    /// comes back when the prompt closes.
    fn open_save_prompt(&mut self, url: String, file_name: &str) {
        let prompt = SavePrompt::new(url, file_name);
        match self.popup.take() {
            None => self.popup = Some(Popup::Save(prompt, None)),
            Some(Popup::Detail(detail)) => self.popup = Some(Popup::Save(prompt, Some(Box::new(detail)))),
            // The user moved on to something else (a form) while the file was being made: it
            // stays, and the view's key saves the file later.
            Some(other) => {
                self.popup = Some(other);
                let b = self.key_hint(Action::TableView);
                self.info(format!("{file_name} is ready: its view saves it ({b} brings the view back)"));
            }
        }
    }

    fn close_save_prompt(&mut self) {
        if let Some(Popup::Save(_, back)) = self.popup.take() {
            self.popup = back.map(|detail| Popup::Detail(*detail));
        }
    }

    /// Downloads `url` to `path` on a spawned task (no credential goes with it: the link is
    /// the server's and may point anywhere); the status line says how it went.
    fn start_save(&mut self, url: String, path: std::path::PathBuf) {
        if let Err(e) = save_file::check_url(&url) {
            return self.error(format!("not saved: {e}"));
        }
        let Some(sender) = self.background.clone() else {
            return self.error("this console cannot run background downloads");
        };
        let client = match self.download_client.clone().map_or_else(save_file::download_client, Ok) {
            Ok(client) => client,
            Err(e) => return self.error(e),
        };
        self.download_client = Some(client.clone());
        self.background_pending += 1;
        self.info(format!("saving {}…", path.display()));
        tokio::spawn(async move {
            let report = save_file::download_to(client, url, path, save_file::MAX_FILE_BYTES).await;
            let _ = sender.send(Background::Saved(report));
        });
    }

    /// Reads the requests and faults again on a spawned task; the view shows "loading" meanwhile.
    fn refresh_sandbox_view(&mut self) {
        let Some(Popup::Sandbox(view)) = self.popup.as_mut() else { return };
        let Ok(control) = view.control.clone() else { return };
        let Some(sender) = self.background.clone() else {
            view.detail_note("this console cannot run background reads");
            return;
        };
        let client = match self.control_client.clone().map_or_else(sandbox_view::control_client, Ok) {
            Ok(client) => client,
            Err(e) => {
                view.detail_note(&e);
                return;
            }
        };
        self.control_client = Some(client.clone());
        let (service, generation) = (view.service, view.start_refresh());
        self.background_pending += 1;
        tokio::spawn(async move {
            let report = sandbox_view::fetch(client, control, service, generation).await;
            let _ = sender.send(Background::Sandbox(report));
        });
    }

    /// The chart of the active tab, when its page is a time series and charts are shown.
    pub fn chart(&self) -> Option<&ChartView> {
        self.charts.get(&self.active).filter(|_| !self.chart_hidden)
    }

    fn toggle_chart(&mut self) {
        self.chart_hidden = !self.chart_hidden;
        match (self.chart_hidden, self.charts.contains_key(&self.active)) {
            (true, _) => self.info("charts hidden (C shows them)"),
            (false, true) => self.info("chart shown: [ and ] choose the series"),
            (false, false) => self.info(NO_CHART),
        }
    }

    fn cycle_chart(&mut self, forward: bool) {
        let hidden = self.chart_hidden;
        match self.charts.get_mut(&self.active) {
            Some(chart) if !hidden => {
                chart.cycle(forward);
                let name = chart.series().map(|s| s.name.clone()).unwrap_or_default();
                self.info(format!("chart: {name}"));
            }
            Some(_) => self.info("charts are hidden: C shows them"),
            None => self.info(NO_CHART),
        }
    }

    /// The editor run for `request` is done: its text goes back into the form's field (or the
    /// form says why it kept the old text).
    pub fn on_edited(&mut self, request: &EditRequest, result: Result<String, String>) {
        let edited = result.is_ok();
        match self.popup.as_mut() {
            Some(Popup::Form(form)) => form.apply_edit(request, result),
            _ => return self.error("the form closed while its field was being edited; nothing changed"),
        }
        if edited {
            self.info(format!("{} edited in the editor", request.field));
        } else {
            self.error(format!("{} kept its text: the editor did not finish", request.field));
        }
    }

    /// `Y`: asks how to copy the request: the form's (`form`, which comes back afterwards) or the
    /// last one sent from this tab.
    fn open_copy_menu(&mut self, form: Option<Box<Form>>) {
        let subject = match &form {
            Some(form) => format!("the {} form as filled", form.op.full_name()),
            None => match self.sent.get(&self.active) {
                Some(request) => format!("last sent: {}", request.request_line()),
                None => {
                    self.info("nothing sent from this tab yet: send something, or press Alt-y in a form");
                    return;
                }
            },
        };
        self.popup = Some(Popup::Copy(CopyMenu::new(subject), form));
    }

    fn close_copy_menu(&mut self) {
        if let Some(Popup::Copy(_, form)) = self.popup.take() {
            self.popup = form.map(|form| Popup::Form(*form));
        }
    }

    /// Copies the request as a runnable command with `$VARIABLE`s for the secrets: the request
    /// of the form being filled when the copy menu was opened from one, else the last request
    /// sent from this tab. The event loop copies it and [`App::on_copied`] says how.
    pub fn copy_request(&mut self, format: CopyFormat) {
        let tab = self.tab();
        let form = match &self.popup {
            Some(Popup::Copy(_, Some(form))) => Some(&**form),
            Some(Popup::Form(form)) => Some(form),
            _ => None,
        };
        let request = match form {
            Some(form) => client::build(form.op, &form.values(), None, &tab.target)
                .map_err(|e| format!("the form cannot be copied as a request yet: {e}")),
            None => self.sent.get(&self.active).cloned().ok_or_else(|| "nothing sent from this tab yet".to_owned()),
        };
        let command = request.and_then(|request| {
            let render = match format {
                CopyFormat::Curl => client::request::to_curl,
                CopyFormat::Httpie => client::request::to_httpie,
            };
            render(&request, &tab.target.credentials).map_err(|e| e.to_string())
        });
        match command {
            Ok(text) => {
                let what = format!("{} command", format.label());
                self.info(format!("{what} to be copied…"));
                self.copying = Some(CopyJob { what: format!("as {}", format.label()), show_on_failure: true });
                self.clipboard = Some(text);
            }
            Err(message) => self.error(message),
        }
    }

    /// The event loop tried to copy `text`: say how, or why not; a command that could not be
    /// copied is shown in the inspector, where it can be selected.
    pub fn on_copied(&mut self, text: String, result: Result<crate::clipboard::Copied, String>) {
        let job = self.copying.take().unwrap_or(CopyJob { what: human_size(text.len()), show_on_failure: false });
        match result {
            Ok(how) => self.info(format!("copied {} {how}", job.what)),
            Err(why) if job.show_on_failure => {
                let tab = self.tab_mut();
                tab.inspector.show(ResponseView {
                    title: format!("command {}", job.what),
                    status: None,
                    duration: Duration::ZERO,
                    request_line: String::new(),
                    headers: Vec::new(),
                    body: wrap_command(&text, 44).into(),
                    content_type: Some("text/plain".into()),
                });
                self.focus = Focus::Inspector;
                self.error(format!("could not copy: {why}; the command is shown in the inspector"));
            }
            Err(why) => self.error(format!("could not copy: {why}")),
        }
    }

    /// A background task reported: a read of the sandbox view, or a file saved (or not).
    pub fn on_background(&mut self, report: Background) {
        self.background_pending = self.background_pending.saturating_sub(1);
        match report {
            Background::Sandbox(report) => {
                if let Some(Popup::Sandbox(view)) = self.popup.as_mut() {
                    view.apply(report);
                }
            }
            Background::Indexed(ticket, result) => self.on_indexed(ticket, result),
            Background::Saved(SaveReport { path, result }) => match result {
                Ok(bytes) => self.info(format!("saved {} to {}", human_size(bytes as usize), path.display())),
                Err(e) => self.error(format!("not saved: {e}")),
            },
        }
    }

    /// A form was submitted: ask first if the operation is destructive, saying what it will
    /// spend or do when the records seen tell (the price of the rate being bought).
    fn request_operation(&mut self, op: &'static Operation, values: Values) {
        if op.destructive {
            let live = self.tab().target.live;
            let effects = shipping::effects(op, &values, &|id| self.known_record(id));
            let mut confirm = Confirm::new(op, values, live, self.profile.clone());
            confirm.effects = effects;
            self.popup = Some(Popup::Confirm(confirm));
        } else {
            self.send_operation(op, values);
        }
    }

    /// A record of the active tab seen by id: the one a view was made from, or a row of the
    /// browser.
    fn known_record(&self, id: &str) -> Option<Value> {
        let tab = self.tab();
        let has_id = |record: &&Value| record.get("id").and_then(Value::as_str) == Some(id);
        let open = match &self.popup {
            Some(Popup::Detail(detail)) => detail.record.as_ref(),
            _ => None,
        };
        let viewed = tab.detail.as_ref().and_then(|d| d.record.as_ref());
        open.into_iter().chain(viewed).find(has_id).cloned().or_else(|| tab.browser.find_record("id", id))
    }

    /// Sends `op` from the active tab; returns its call, or `None` when nothing was sent (the
    /// status line says why).
    fn send_operation(&mut self, op: &'static Operation, values: Values) -> Option<CallId> {
        if let Some(reason) = self.unavailable_reason() {
            self.error(reason);
            return None;
        }
        if self.read_only && op.mutates {
            let reason = self.read_only_reason();
            let fix = if self.started_read_only() {
                "restart without --read-only to send it"
            } else {
                "`read only` in the palette (:) turns it off"
            };
            self.error(format!("{} changes state and {reason}; {fix}", op.full_name()));
            return None;
        }
        let tab_index = self.active;
        let tab = self.tab();
        match client::build(op, &values, None, &tab.target) {
            Ok(request) => {
                let credentials = tab.target.credentials.clone();
                let id = self.executor.submit(op.full_name(), request.clone(), credentials, None);
                self.sent.insert(tab_index, request.clone());
                self.purposes.insert(id, (Purpose::Operation { tab: tab_index, op, values, request }, Instant::now()));
                self.info(format!("sending {} ({id})", op.full_name()));
                Some(id)
            }
            Err(e) => {
                self.error(format!("{}: {e}", op.full_name()));
                self.open_form(op);
                None
            }
        }
    }

    /// `--read-only` was given: it holds for the whole session, whatever the profile.
    fn started_read_only(&self) -> bool {
        self.setup.as_ref().is_some_and(|s| s.read_only_flag)
    }

    /// The key that runs `action`, for hints in messages (`press o`), or its palette name.
    fn key_hint(&self, action: Action) -> String {
        self.keymap.hint(action).unwrap_or_else(|| format!(": {}", action.name().replace('_', " ")))
    }

    /// Why nothing that changes state is sent: the flag, the profile, or the palette's toggle.
    fn read_only_reason(&self) -> String {
        let setup = self.setup.as_ref();
        if self.started_read_only() {
            "--read-only is on".to_owned()
        } else if setup.is_some_and(|s| s.config.profile_read_only(Some(&self.profile))) {
            format!("profile {} is read-only", self.profile)
        } else {
            "read-only is on".to_owned()
        }
    }

    /// Loads the selected resource into the browser; asks for missing parameters with a form.
    fn open_resource(&mut self) {
        if let Some(reason) = self.unavailable_reason() {
            let count = self.tab().service.operations().len();
            let o = self.key_hint(Action::Operations);
            let tab = self.tab_mut();
            tab.browser.title = tab.resource_name().to_owned();
            tab.browser.clear();
            tab.browser.notice = Some((format!("{reason}\n\nPress {o} to see its {count} operations."), false));
            return;
        }
        let o = self.key_hint(Action::Operations);
        let tab = self.tab_mut();
        if tab.stop_tail() {
            self.info("tail stopped: another list is in view");
        }
        let tab = self.tab_mut();
        tab.browser.title = tab.resource_name().to_owned();
        tab.page = None;
        let Some(op) = tab.list_op() else {
            let resource = tab.resource_name();
            let ops: Vec<&'static Operation> =
                tab.service.operations().iter().filter(|op| op.resource == resource).collect();
            tab.browser.clear();
            tab.browser.notice = Some((format!("{resource} has no list; press {o} for its operations"), false));
            // A resource with one parameterless GET (server time) is simply fetched.
            if let [single] = ops.as_slice() {
                if single.method == crate::catalog::Method::Get && single.params.iter().all(|p| !p.required) {
                    self.send_operation(single, Values::new());
                    return;
                }
            }
            let title = format!("{resource} operations");
            self.popup = Some(Popup::Menu(Menu::new(title, ops, false)));
            return;
        };
        let values = tab.browse_values(op);
        // A company's records say whose they are (AvaTax scopes most lists by company).
        let company = values.get("companyCode").or_else(|| tab.context.get("companyCode")).cloned();
        if let Some(company) = company.filter(|_| op.params.iter().any(|p| p.name.starts_with("company"))) {
            tab.browser.title = format!("{} of {company}", op.resource);
        }
        let missing = op.params.iter().any(|p| p.required && !values.contains_key(p.name));
        if missing {
            tab.browser.clear();
            tab.browser.notice = Some((format!("{} needs parameters: fill the form and press Ctrl-s", op.name), false));
            self.open_form(op);
            return;
        }
        self.load_list(op, values);
    }

    fn load_list(&mut self, op: &'static Operation, values: Values) {
        match client::build(op, &values, None, &self.tab().target) {
            Ok(request) => self.fetch_page(op, values, request, Vec::new()),
            Err(e) => {
                // Show what is wrong where it can be fixed: the form, with the values used.
                let tab = self.tab_mut();
                tab.browser.clear();
                tab.browser.notice = Some((format!("{}: {e}", op.name), true));
                tab.drafts.insert(op.name, values);
                self.error(format!("{}: {e}", op.full_name()));
                self.open_form(op);
                if let Some(Popup::Form(form)) = self.popup.as_mut() {
                    form.validate();
                }
            }
        }
    }

    fn fetch_page(
        &mut self,
        op: &'static Operation,
        values: Values,
        request: client::PreparedRequest,
        previous: Vec<client::PreparedRequest>,
    ) {
        let tab_index = self.active;
        let tab = &mut self.tabs[tab_index];
        let slot = format!("{}/browser", tab.service);
        let credentials = tab.target.credentials.clone();
        let id = self.executor.submit(op.full_name(), request.clone(), credentials, Some(slot));
        self.sent.insert(tab_index, request.clone());
        tab.loading = Some(id);
        tab.last_refresh = Some(Instant::now());
        if tab.page.is_none() {
            tab.browser.page_label.clear();
            tab.browser.filter_note = None;
            tab.browser.notice = Some((format!("loading {}…  (Esc cancels)", op.name), false));
        }
        let recorded = !self.auto_refreshing;
        self.purposes
            .insert(id, (Purpose::List { tab: tab_index, op, values, request, previous, recorded }, Instant::now()));
    }

    /// Reloads the page in view (or loads the selected resource when nothing is in view yet).
    fn refresh(&mut self) {
        let Some(page) = self.tab().page.as_ref() else {
            self.open_resource();
            return;
        };
        let (op, values, request, previous) =
            (page.op, page.values.clone(), page.request.clone(), page.previous.clone());
        self.fetch_page(op, values, request, previous);
    }

    /// Loads the first page of the list in view again without its filters.
    fn clear_filters(&mut self) {
        let Some(page) = self.tab().page.as_ref() else { return };
        if page.filters.is_empty() {
            return self.info("no filters to clear");
        }
        let op = page.op;
        let mut values = page.values.clone();
        let cleared: Vec<String> = page.filters.iter().map(|(name, value)| format!("{name}={value}")).collect();
        for (name, _) in &page.filters {
            values.remove(name);
        }
        self.info(format!("filter {} cleared", cleared.join(" ")));
        self.load_list(op, values);
    }

    fn next_page(&mut self) {
        let Some(page) = self.tab().page.as_ref() else { return };
        let next = pagination::next_page(page.op.paging, &page.request, &page.response).and_then(|next| {
            // The pages behind this one: a next link back to one of them would loop forever.
            let mut trail = pagination::PageTrail::resume(page.previous.iter().chain([&page.request]), usize::MAX);
            next.map(|next| trail.advance(&next).map(|()| next)).transpose()
        });
        match next {
            Ok(Some(next)) => {
                let mut previous = page.previous.clone();
                previous.push(page.request.clone());
                let (op, values) = (page.op, page.values.clone());
                self.fetch_page(op, values, next, previous);
            }
            Ok(None) => self.info("this is the last page"),
            Err(e) => {
                let message = format!("{}: {e}", page.op.full_name());
                self.error(message);
            }
        }
    }

    fn previous_page(&mut self) {
        let Some(page) = self.tab().page.as_ref() else { return };
        let mut previous = page.previous.clone();
        match previous.pop() {
            Some(request) => {
                let (op, values) = (page.op, page.values.clone());
                self.fetch_page(op, values, request, previous);
            }
            None => self.info("this is the first page"),
        }
    }

    fn toggle_auto_refresh(&mut self) {
        let every = self.auto_refresh_every.as_secs();
        let tab = self.tab_mut();
        tab.auto_refresh = !tab.auto_refresh;
        let message = match (tab.auto_refresh, tab.can_auto_refresh()) {
            (false, _) => "auto-refresh off".to_owned(),
            (true, true) => format!("auto-refresh every {every} s"),
            (true, false) => {
                format!("auto-refresh every {every} s, once a list is in view (nothing to reload here yet)")
            }
        };
        self.info(message);
    }

    /// `T`: follows the list in view (its first page, every [`App::tail_every`]), putting new
    /// rows on top; again stops it. A later page in view goes back to the first, where new
    /// records arrive.
    fn toggle_tail(&mut self) {
        let t = self.key_hint(Action::Tail);
        if self.tab_mut().stop_tail() {
            return self.info(format!("tail stopped ({t} starts it again)"));
        }
        let Some(page) = self.tab().page.as_ref() else {
            return self.info("tail follows a list: open one first (events, messages)");
        };
        let (op, values, on_later_page) = (page.op, page.values.clone(), !page.previous.is_empty());
        if !op.is_list() {
            return self.info(format!("{} is no list: nothing to tail", op.name));
        }
        let every = self.tail_every.as_secs();
        let note = tail_note(self.tail_every, 0);
        let tab = self.tab_mut();
        tab.tail = Some(TailState { op: op.name, last_poll: Some(Instant::now()), in_flight: None, arrived: 0 });
        tab.browser.tail_note = Some(note);
        if on_later_page {
            self.load_list(op, values);
        }
        let o = self.key_hint(Action::Operations);
        self.info(format!(
            "tail: {} every {every} s, new rows on top marked ●; {o} changes its filters; {t} stops",
            op.name
        ));
    }

    /// Asks for the first page of the list tab `index` follows, off the browser's slot, so a
    /// refresh or a new page the user asks for is never cancelled by a poll.
    fn poll_tail(&mut self, index: usize, now: Instant) {
        let tab = &self.tabs[index];
        let Some(page) = tab.page.as_ref() else { return };
        let op = page.op;
        let request = match client::build(op, &page.values, None, &tab.target) {
            Ok(request) => request,
            Err(e) => {
                self.tabs[index].stop_tail();
                return self.error(format!("tail stopped: {}: {e}", op.full_name()));
            }
        };
        let slot = format!("{}/tail", tab.service);
        let credentials = tab.target.credentials.clone();
        let id = self.executor.submit(op.full_name(), request, credentials, Some(slot));
        if let Some(tail) = self.tabs[index].tail.as_mut() {
            tail.in_flight = Some(id);
            tail.last_poll = Some(now);
        }
        self.purposes.insert(id, (Purpose::Tail { tab: index, op }, Instant::now()));
    }

    /// A tail poll came back: its rows not shown yet go on top, marked; the selection, the row
    /// filter and the list's own filters stay as they were.
    fn on_tail_page(&mut self, tab: usize, op: &'static Operation, result: Result<client::Response, Arc<CallError>>) {
        let tab_state = &mut self.tabs[tab];
        let Some(tail) = tab_state.tail.as_mut() else { return };
        tail.in_flight = None;
        // The user moved on to another list while the poll was out.
        if tail.op != op.name || tab_state.page.as_ref().is_none_or(|p| p.op.name != op.name) {
            return;
        }
        match result {
            Ok(response) => {
                let rows = tab_state.browser.spec_for_more(op.id_field);
                self.start_indexing(tab, response.body, Some(rows), Then::Tail { op });
            }
            Err(error) => {
                let message = format!("tail: {}: {error} (it keeps polling)", op.full_name());
                self.error(message);
            }
        }
    }

    /// A tail poll's page came back indexed: its rows not shown yet go on top.
    fn tail_indexed(&mut self, tab: usize, op: &'static Operation, result: Result<Indexed, JsonError>) {
        let every = self.tail_every;
        let tab_state = &mut self.tabs[tab];
        // Tail stopped, or the user moved on to another list while the page was indexed.
        let following = tab_state.tail.as_ref().is_some_and(|t| t.op == op.name);
        if !following || tab_state.page.as_ref().is_none_or(|p| p.op.name != op.name) {
            return;
        }
        let Ok(Indexed { doc, table: Some(table), .. }) = result else { return };
        let arrived = tab_state.browser.merge_rows(doc, table, op.id_field, TAIL_CAP);
        let total = {
            let Some(tail) = tab_state.tail.as_mut() else { return };
            tail.arrived += arrived;
            tail.arrived
        };
        tab_state.browser.tail_note = Some(tail_note(every, total));
        if arrived > 0 {
            let rows = tab_state.browser.row_count();
            tab_state.browser.page_label = format!("{} rows", crate::table::thousands(rows));
            tab_state.remember_selection();
        }
    }

    /// The compose forms of Mailgun (send, MIME send), from any tab: the domain in view and its
    /// postmaster as sender filled in, or what was typed last time.
    fn compose(&mut self, name: &str) {
        let Some(index) = self.tabs.iter().position(|t| t.service == Service::Mailgun) else {
            return self.error("this console has no Mailgun tab");
        };
        let Some(op) = Service::Mailgun.operation(name) else { return };
        self.switch_tab(index);
        let tab = self.tab();
        let mut values = tab.prefill(op, None);
        if !values.contains_key("domain") {
            // The domain of the list in view (events of mg.example.com), when no row gave one.
            if let Some(domain) = tab.page.as_ref().and_then(|p| p.values.get("domain")).cloned() {
                values.insert("domain".into(), domain);
                mail::suggest(op, &serde_json::Map::new(), &mut values);
            }
        }
        self.open_form_with(op, &values);
    }

    /// Enter on a Mailgun domain: asks for it with its DNS records, which the answer shows as
    /// the DNS view (`v` there verifies them again).
    fn open_domain(&mut self) {
        let Some(name) = self.tab().selected_record().and_then(|r| r.get("name")?.as_str().map(str::to_owned)) else {
            return;
        };
        let Some(op) = Service::Mailgun.operation("domains_get") else { return };
        let mut values = Values::new();
        values.insert("domain".into(), name);
        self.send_operation(op, values);
    }

    /// A key of a table view: send an operation (asking first when destructive), open a form,
    /// or show the chart of the response.
    fn run_detail_command(&mut self, command: DetailCommand) {
        match command {
            DetailCommand::Send { op: name, values } => {
                let Some(op) = self.tab().service.operation(name) else {
                    return self.error(format!("{name} is no operation of {}", self.tab().service.title()));
                };
                let values: Values = values.into_iter().collect();
                if op.destructive {
                    self.request_operation(op, values);
                } else {
                    // The view stays open; the answer replaces it.
                    self.send_operation(op, values);
                }
            }
            DetailCommand::Form { op: name, values } => {
                let Some(op) = self.tab().service.operation(name) else {
                    return self.error(format!("{name} is no operation of {}", self.tab().service.title()));
                };
                let values: Values = values.into_iter().collect();
                self.open_form_with(op, &values);
            }
            DetailCommand::Open { op: name, values } => {
                let Some(op) = self.tab().service.operation(name) else {
                    return self.error(format!("{name} is no operation of {}", self.tab().service.title()));
                };
                self.popup = None;
                self.request_operation(op, values.into_iter().collect());
            }
            DetailCommand::Save { url, file_name } => self.open_save_prompt(url, &file_name),
            DetailCommand::SendThenSave { op: name, values, pointer, file_name } => {
                let Some(op) = self.tab().service.operation(name) else {
                    return self.error(format!("{name} is no operation of {}", self.tab().service.title()));
                };
                // The view stays open and takes the answer; the save prompt follows it.
                if let Some(id) = self.send_operation(op, values.into_iter().collect()) {
                    self.save_after = Some((id, pointer, file_name));
                }
            }
            // A view asks its own questions; one never reaches the app.
            DetailCommand::Choose { .. } => {}
            DetailCommand::Chart => {
                self.popup = None;
                self.chart_hidden = false;
                if self.charts.contains_key(&self.active) {
                    self.focus = Focus::Browser;
                    self.info("chart under the list: [ and ] choose the series, C hides it, b brings the table back");
                } else {
                    self.info(NO_CHART);
                }
            }
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
        let watch = self.watched().map(|subject| match self.watch.last_poll {
            // A view newly open: the tick notes it, and its first ask waits a whole interval.
            _ if self.watch.subject.as_ref() != Some(&subject) => now,
            Some(at) => (at + self.tail_every).max(now),
            None => now,
        });
        refresh.into_iter().chain(tail).chain(redraw).chain(watch).min()
    }

    /// The subject of the open view when it asks again by itself and nothing of it is in
    /// flight: closing the view (or its answers saying nothing moves) stops the asking.
    fn watched(&self) -> Option<String> {
        let Some(Popup::Detail(detail)) = &self.popup else { return None };
        detail.watch.as_ref()?;
        // An ask cancelled (Ctrl-x, a profile switch) never reports: it counts as done.
        let asking =
            self.watch.in_flight.and_then(|id| self.executor.state(id)).is_some_and(client::CallState::is_active);
        (!asking && self.tab().available).then(|| detail.subject.clone().unwrap_or_default())
    }

    /// Asks again for what the open view shows, when it is due.
    fn poll_watch(&mut self, now: Instant) {
        let Some(subject) = self.watched() else { return };
        if self.watch.subject.as_ref() != Some(&subject) {
            self.watch = WatchState { subject: Some(subject), last_poll: Some(now), in_flight: None };
            return;
        }
        if self.watch.last_poll.is_some_and(|at| at + self.tail_every > now) {
            return;
        }
        let Some(Popup::Detail(detail)) = &self.popup else { return };
        let Some((name, values)) = detail.watch.clone() else { return };
        let tab_index = self.active;
        let tab = self.tab();
        let Some(op) = tab.service.operation(name) else { return };
        let values: Values = values.into_iter().collect();
        match client::build(op, &values, None, &tab.target) {
            Ok(request) => {
                let slot = format!("{}/watch", tab.service);
                let credentials = tab.target.credentials.clone();
                let id = self.executor.submit(op.full_name(), request, credentials, Some(slot));
                self.watch.in_flight = Some(id);
                self.watch.last_poll = Some(now);
                self.purposes.insert(id, (Purpose::Watch { tab: tab_index, op }, Instant::now()));
            }
            Err(e) => {
                if let Some(Popup::Detail(detail)) = self.popup.as_mut() {
                    detail.watch = None;
                }
                self.error(format!("the view stopped asking again: {}: {e}", op.full_name()));
            }
        }
    }

    /// An ask of the open view came back: the view shows the answer in place (the row chosen,
    /// the scroll and a question being answered stay), if it is still open on the same thing.
    fn on_watch_answer(
        &mut self,
        tab: usize,
        op: &'static Operation,
        result: Result<client::Response, Arc<CallError>>,
    ) {
        self.watch.in_flight = None;
        match result {
            Ok(response) => {
                let body: Option<Value> = serde_json::from_slice(&response.body).ok();
                let Some(detail) = body.and_then(|body| detail_for(op, &body)) else { return };
                if tab != self.active {
                    return;
                }
                if let Some(Popup::Detail(open)) = self.popup.as_mut() {
                    if open.same_subject(&detail) {
                        open.refresh_from(detail.clone());
                        self.tabs[tab].detail = Some(detail);
                    }
                }
            }
            Err(error) => self.error(format!("{}: {error} (the view keeps asking)", op.full_name())),
        }
    }

    /// Time passed: reload the lists whose auto-refresh is due.
    pub fn on_tick(&mut self, now: Instant) {
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
    }

    fn show_selected_record(&mut self) {
        let tab = self.tab();
        let Some(body) = tab.browser.selected_json() else { return };
        let title = format!("{} record", tab.resource_name());
        let request_line = tab.page.as_ref().map(|p| p.response.request_line.clone()).unwrap_or_default();
        self.inspect(
            self.active,
            ResponseView {
                title,
                status: None,
                duration: Duration::ZERO,
                request_line,
                headers: Vec::new(),
                body,
                content_type: Some("application/json".into()),
            },
        );
    }

    /// A call reported back.
    pub fn on_call_event(&mut self, event: CallEvent) {
        let Some(delivered) = self.executor.accept(event) else { return };
        let Some((purpose, sent)) = self.purposes.remove(&delivered.id) else { return };
        self.record_call(&purpose, &delivered.result, sent.elapsed());
        match purpose {
            Purpose::List { tab, op, values, request, previous, .. } => {
                let tab_state = &mut self.tabs[tab];
                if tab_state.loading == Some(delivered.id) {
                    tab_state.loading = None;
                }
                match delivered.result {
                    Ok(response) => {
                        self.show_page(tab, Page { op, values, request, previous, response });
                        if self.status_view == Some(tab) {
                            self.status = None;
                            self.status_view = None;
                        }
                    }
                    Err(error) => {
                        let tab_state = &mut self.tabs[tab];
                        tab_state.browser.notice = Some((format!("{}: {error}", op.name), true));
                        tab_state.inspector.show(error_view(op, &error));
                        self.error(format!("{}: {error}", op.full_name()));
                        self.status_view = Some(tab);
                    }
                }
            }
            Purpose::Tail { tab, op } => self.on_tail_page(tab, op, delivered.result),
            Purpose::Watch { tab, op } => self.on_watch_answer(tab, op, delivered.result),
            Purpose::Operation { tab, op, values, request } => match delivered.result {
                Ok(response) => {
                    let save = self.save_after.take_if(|(id, ..)| *id == delivered.id);
                    let small = response.body.len() <= INDEX_INLINE_LIMIT;
                    if small || op.is_list() {
                        // A small answer is read here at once; a list's page is indexed with its
                        // rows (below), and only a small one is also read for a view.
                        let body = small.then(|| serde_json::from_slice(&response.body).ok()).flatten();
                        if !op.is_list() {
                            self.inspect(tab, response_view(op.name, &response));
                        }
                        self.answered(tab, Answer { op, values, request, response, save }, body);
                    } else {
                        let body = response.body.clone();
                        let then = Then::Answer(Answer { op, values, request, response, save });
                        self.start_indexing(tab, body, None, then);
                    }
                }
                Err(error) => {
                    self.save_after.take_if(|(id, ..)| *id == delivered.id);
                    self.tabs[tab].inspector.show(error_view(op, &error));
                    let o = self.key_hint(Action::Operations);
                    self.error(format!("{}: {error} ({o} reopens the form with your values)", op.full_name()));
                }
            },
        }
        if let Some(failure) = self.history.as_ref().and_then(crate::history::Recorder::take_failure) {
            self.error(format!("{failure}; calls are not recorded in the history"));
        }
    }

    /// An operation's answer, read (`body`: its JSON, when small enough for a view): its view,
    /// chart, list page, the file it links to, and what the status line says.
    fn answered(&mut self, tab: usize, answer: Answer, body: Option<Value>) {
        let Answer { op, values, request, response, save } = answer;
        let summary = format!("{}: {} in {} ms", op.full_name(), response.status, response.duration.as_millis());
        self.tabs[tab].drafts.remove(op.name);
        // An answer that is a time series but no list (Mailgun's stats) is charted under the
        // browser as a list page of one would be.
        let series = body
            .as_ref()
            .filter(|_| op.method == crate::catalog::Method::Get && !op.is_list())
            .and_then(pagination::records)
            .and_then(|(_, rows)| chart::detect(rows));
        if let Some(series) = series {
            match self.charts.get_mut(&tab) {
                Some(view) => view.replace(series),
                None => {
                    self.charts.insert(tab, ChartView::new(series));
                }
            }
        }
        let link = save.map(|(_, pointer, name)| {
            let url = body.as_ref().and_then(|b| b.pointer(&pointer)).and_then(Value::as_str);
            url.map(|url| (url.to_owned(), name)).ok_or(pointer)
        });
        let detail = body.and_then(|body| detail_for(op, &body));
        let tab_state = &mut self.tabs[tab];
        if let Some(detail) = detail {
            tab_state.detail = Some(detail.clone());
            // Shown at once unless the user has moved on to something else; the fuller answer
            // for a view already open replaces it, keeping its place.
            match self.popup.as_mut() {
                None if tab == self.active => self.popup = Some(Popup::Detail(detail)),
                Some(Popup::Detail(open)) if tab == self.active && open.same_subject(&detail) => {
                    open.refresh_from(detail);
                }
                _ => {}
            }
        }
        if op.is_list() {
            if let Some(index) = tab_state.resources.iter().position(|r| *r == op.resource) {
                tab_state.resource = index;
                tab_state.browser.title = op.resource.to_owned();
            }
            self.show_page(tab, Page { op, values, request, previous: Vec::new(), response });
        } else if op.mutates && tab == self.active {
            // What changed is likely in view: show it.
            if self.tabs[tab].page.as_ref().is_some_and(|p| p.op.resource == op.resource) {
                self.refresh();
            }
        }
        // Under a table view, focus stays where the user was, for when it closes.
        if tab == self.active && !op.is_list() && !matches!(self.popup, Some(Popup::Detail(_))) {
            self.focus = Focus::Inspector;
        }
        self.info(summary);
        match link {
            Some(Ok((url, name))) if tab == self.active => self.open_save_prompt(url, &name),
            Some(Ok(_)) => {}
            Some(Err(pointer)) => {
                self.error(format!("{}: the answer links no file at {pointer}", op.full_name()));
            }
            None => {}
        }
    }

    fn show_page(&mut self, tab: usize, page: Page) {
        let op = page.op;
        let rows = RowSpec::new(op.id_field, layout_for(op));
        let size = page.response.body.len();
        let body = page.response.body.clone();
        if size > PROGRESS_NOTICE_ABOVE {
            self.tabs[tab].browser.notice = Some((format!("indexing {}…  (Esc cancels)", op.name), false));
        }
        self.start_indexing(tab, body, Some(rows), Then::Page(page));
    }

    /// Starts indexing `body` off the UI thread for tab `tab`; a page or response still being
    /// indexed for that tab is dropped (the newest wins), a tail poll's is not.
    fn start_indexing(&mut self, tab: usize, body: bytes::Bytes, rows: Option<RowSpec>, then: Then) {
        if !matches!(then, Then::Tail { .. }) {
            self.cancel_indexing(tab);
        }
        let ticket = self.next_ticket;
        self.next_ticket += 1;
        let watch = Arc::new(crate::json_index::Watch::default());
        let size = body.len();
        let value = then.wants_value();
        self.indexing.insert(ticket, Job { tab, watch: watch.clone(), size, started: Instant::now(), then });
        self.background_pending += 1;
        match self.background.clone() {
            Some(reports) => indexer::spawn(reports, ticket, body, watch, rows, value),
            // A console without its event loop (some tests): index here.
            None => {
                let result = indexer::index(body, &watch, rows.as_ref(), value);
                self.on_background(Background::Indexed(ticket, result));
            }
        }
    }

    /// Drops tab `tab`'s page and response indexing (not its tail's); how many there were.
    fn cancel_indexing(&mut self, tab: usize) -> usize {
        let tickets: Vec<u64> = self
            .indexing
            .iter()
            .filter(|(_, job)| job.tab == tab && !matches!(job.then, Then::Tail { .. }))
            .map(|(ticket, _)| *ticket)
            .collect();
        for ticket in &tickets {
            if let Some(job) = self.indexing.remove(ticket) {
                job.watch.cancel();
            }
        }
        tickets.len()
    }

    /// What the status line says while bodies are being indexed.
    pub fn indexing_note(&self) -> Option<String> {
        let job = self.indexing.values().filter(|job| job.tab == self.active).max_by_key(|job| job.size)?;
        Some(format!("indexing {}", job.progress()))
    }

    /// A body came back indexed (or failed to): the browser, the inspector and the chart show it.
    fn on_indexed(&mut self, ticket: u64, result: Result<Indexed, JsonError>) {
        // Cancelled or replaced since: nobody wants it.
        let Some(job) = self.indexing.remove(&ticket) else { return };
        let tab = job.tab;
        tracing::debug!(ticket, size = job.size, ms = job.started.elapsed().as_millis() as u64, "indexed");
        match job.then {
            Then::Page(page) => self.page_indexed(tab, page, result),
            Then::Tail { op } => self.tail_indexed(tab, op, result),
            Then::Inspect { view } => self.tabs[tab].inspector.show_indexed(view, result.map(|i| i.doc)),
            Then::Answer(answer) => {
                let view = response_view(answer.op.name, &answer.response);
                let (doc, body) = match result {
                    Ok(indexed) => (Ok(indexed.doc), indexed.value),
                    Err(error) => (Err(error), None),
                };
                self.tabs[tab].inspector.show_indexed(view, doc);
                self.answered(tab, answer, body);
            }
        }
    }

    /// Shows `view` in tab `tab`'s inspector: indexed here when small, else off the UI thread.
    fn inspect(&mut self, tab: usize, view: ResponseView) {
        if view.body.len() <= INDEX_INLINE_LIMIT || !inspector::looks_like_json(&view) {
            self.tabs[tab].inspector.show(view);
            return;
        }
        let body = view.body.clone();
        self.start_indexing(tab, body, None, Then::Inspect { view });
    }

    fn page_indexed(&mut self, tab: usize, page: Page, result: Result<Indexed, JsonError>) {
        let Page { op, values, request, previous, response } = page;
        let (c, n) = (self.key_hint(Action::ClearFilters), self.key_hint(Action::NextPage));
        let tab_state = &mut self.tabs[tab];
        let page_number = previous.len() + 1;
        let filters = list_filters(op, &values);
        tab_state.browser.filter_note = (!filters.is_empty()).then(|| {
            let shown: Vec<String> = filters.iter().map(|(name, value)| format!("{name}={value}")).collect();
            format!("only {} ({c} clears)", shown.join(" "))
        });
        // Another list in view ends the tail of the one before; the same list (asked with other
        // filters from its form) keeps it.
        let tab_state = &mut self.tabs[tab];
        if tab_state.tail.as_ref().is_some_and(|t| t.op != op.name) {
            tab_state.stop_tail();
        }
        // A fresh page has no rows marked new, so the count starts again.
        if let Some(tail) = tab_state.tail.as_mut() {
            tail.arrived = 0;
            tab_state.browser.tail_note = Some(tail_note(self.tail_every, 0));
        }
        // A page that is no time series has no chart; one that is keeps the series chosen.
        let previous_chart = self.charts.remove(&tab);
        let view = response_view(op.name, &response);
        let (doc, table, series) = match result {
            Ok(Indexed { doc, table, series, .. }) => (Ok(doc), table, series),
            Err(error) => (Err(error), None, None),
        };
        if let Some(series) = series {
            let view = match previous_chart {
                Some(mut view) => {
                    view.replace(series);
                    view
                }
                None => ChartView::new(series),
            };
            self.charts.insert(tab, view);
        }
        let tab_state = &mut self.tabs[tab];
        match (&doc, table) {
            (Ok(doc), Some(table)) => {
                let count = table.rows.len();
                tab_state.browser.set_page(doc.clone(), table, op.id_field, layout_for(op));
                let more = if matches!(pagination::next_page(op.paging, &request, &response), Ok(Some(_))) {
                    format!(" · {n}: next")
                } else {
                    String::new()
                };
                tab_state.browser.page_label =
                    format!("page {page_number} · {} rows{more}", crate::table::thousands(count));
            }
            (Ok(_), None) => {
                tab_state.browser.clear();
                tab_state.browser.notice =
                    Some(("the response has no list of records; see the inspector".into(), false));
            }
            (Err(error), _) => {
                tab_state.browser.clear();
                tab_state.browser.notice = Some((format!("no table: the response {}", body_problem(error)), true));
            }
        }
        tab_state.inspector.show_indexed(view, doc);
        tab_state.page = Some(PageState { op, values, filters, request, response, previous });
        tab_state.remember_selection();
    }
}

/// Why a body has no table, as the browser says it.
fn body_problem(error: &JsonError) -> String {
    match error.kind {
        crate::json_index::JsonErrorKind::TooManyValues { .. } => {
            format!("holds {error}; it is shown as text in the inspector (ask for fewer records)")
        }
        _ => format!("is not JSON ({error}); see the inspector"),
    }
}

/// The history: recording calls, and the history view (`H`).
impl App {
    /// Queues a finished call for the history (off the UI thread: see [`crate::history::Recorder`]).
    fn record_call(&self, purpose: &Purpose, result: &Result<client::Response, Arc<CallError>>, elapsed: Duration) {
        let Some(recorder) = &self.history else { return };
        let (tab, op, values) = match purpose {
            // Polls repeat the list every few seconds: they would bury every call the user made.
            Purpose::List { recorded: false, .. } | Purpose::Tail { .. } | Purpose::Watch { .. } => return,
            Purpose::List { tab, op, values, .. } | Purpose::Operation { tab, op, values, .. } => (*tab, *op, values),
        };
        let tab = &self.tabs[tab];
        let result = result.as_ref().map_err(Arc::as_ref);
        let source = crate::history::Source::Console;
        let entry = Entry::new(source, &self.profile, op, values, None, &tab.target, &tab.mode, result, elapsed);
        recorder.record(entry);
    }

    /// Opens the history view: past calls, newest first.
    pub fn open_history(&mut self) {
        let store = match &self.history {
            Some(recorder) => recorder.reader(),
            None => Err("the history is off: `[history] enabled = false` in config.toml, or its file could not be \
                         opened (the status line said why at start)"
                .to_owned()),
        };
        self.popup = Some(Popup::History(HistoryView::new(store)));
    }

    /// Switches to the tab of a recorded call's service; `load`: loading its first list if it
    /// has not been shown yet (not when a stored response is about to fill its inspector, which
    /// that first list would replace).
    fn switch_to_service(&mut self, service: &str, load: bool) {
        let Some(index) = self.tabs.iter().position(|t| t.service.name() == service) else { return };
        if load {
            self.switch_tab(index);
            return;
        }
        self.active = index;
        let tab = self.tab_mut();
        if !tab.started && tab.page.is_none() {
            let resource = tab.resource_name().to_owned();
            tab.browser.notice = Some((format!("r loads {resource}"), false));
        }
    }

    /// Shows a recorded call's stored response in its service's inspector.
    fn inspect_recorded(&mut self, record: &Record) {
        self.popup = None;
        self.switch_to_service(&record.service, false);
        let body = match (&record.response, &record.error) {
            (Some(body), _) if !body.is_empty() => body.clone(),
            (_, Some(error)) => serde_json::to_vec_pretty(&json!({ "error": error })).unwrap_or_default(),
            _ => Vec::new(),
        };
        let cut = if record.truncated { ", cut at [history] max_body_bytes" } else { "" };
        self.inspect(
            self.active,
            ResponseView {
                title: format!("history #{} {}", record.id, record.operation),
                status: record.status,
                duration: Duration::from_millis(record.duration_ms),
                request_line: format!("{} {} · {}{cut}", record.target, record.base_url, record.time),
                headers: Vec::new(),
                body: body.into(),
                content_type: record.content_type.clone(),
            },
        );
        self.focus = Focus::Inspector;
        let when = crate::history::short_time(record.at_ms);
        self.info(format!("recorded call #{} of {} ({when} UTC), as stored", record.id, record.operation));
    }

    /// Opens a recorded call's form with its values (`send`: sends it at once when it can go as it
    /// was, with the usual confirmation of destructive operations).
    fn reopen_recorded(&mut self, record: &Record, send: bool) {
        let Some(op) = record.operation() else {
            self.error(format!("{} {} is not an operation of this opsdeck", record.service, record.operation));
            return;
        };
        self.popup = None;
        self.switch_to_service(&record.service, true);
        let values = record.values();
        // Anything that could send it somewhere else, or differently, than it went: the user
        // checks the form and presses Ctrl-s.
        let tab = self.tab();
        let here = crate::history::target_label(&tab.mode);
        let mut notes = Vec::new();
        if record.target != here || (here != "SANDBOX" && record.base_url != tab.target.base_url) {
            notes.push(format!(
                "recorded on {} {}; this tab sends to {here} {}",
                record.target, record.base_url, tab.target.base_url
            ));
        }
        if record.profile != self.profile {
            notes.push(format!("recorded with profile {}; this is {}", record.profile, self.profile));
        }
        if record.has_redacted_values() {
            notes.push("a secret value was not kept: fill in each [redacted] field".into());
        }
        if record.body.is_some() {
            notes.push("recorded with a whole --body document, which forms do not take".into());
        }
        if send && notes.is_empty() {
            self.request_operation(op, values);
            return;
        }
        self.open_form_with(op, &values);
        if let Some(Popup::Form(form)) = self.popup.as_mut() {
            if send {
                notes.push("check it and press Ctrl-s to send".into());
            }
            let mut message: Vec<String> = form.message.take().into_iter().collect();
            message.extend(notes);
            form.message = (!message.is_empty()).then(|| message.join("; "));
        }
    }
}

/// Pasted text as it may be typed: what a terminal would act on is left out, and line breaks
/// become spaces unless the field takes several lines (a final one is dropped either way).
fn paste_text(text: &str, multi_line: bool) -> String {
    let text = text.replace("\r\n", "\n").replace('\r', "\n");
    let text = text.strip_suffix('\n').unwrap_or(&text);
    text.chars()
        .filter_map(|c| match c {
            '\n' if multi_line => Some('\n'),
            '\n' | '\t' => Some(' '),
            c if crate::inert::is_unsafe(c) => None,
            c => Some(c),
        })
        .collect()
}

/// A shell command spread over lines of about `width` columns, broken only between words (never
/// inside quotes) with `\` continuations, so it reads well and still runs when pasted.
fn wrap_command(command: &str, width: usize) -> String {
    let mut words = Vec::new();
    let (mut word, mut quote, mut escaped) = (String::new(), None, false);
    for c in command.chars() {
        if std::mem::take(&mut escaped) {
            word.push(c);
            continue;
        }
        match (c, quote) {
            ('\\', None | Some('"')) => escaped = true,
            (' ', None) => {
                if !word.is_empty() {
                    words.push(std::mem::take(&mut word));
                }
                continue;
            }
            ('\'' | '"', None) => quote = Some(c),
            (c, Some(q)) if c == q => quote = None,
            _ => {}
        }
        word.push(c);
    }
    if !word.is_empty() {
        words.push(word);
    }
    let mut out = String::new();
    let mut line = 0;
    for word in words {
        if line > 0 && line + 1 + word.chars().count() > width {
            out.push_str(" \\\n  ");
            line = 2;
        } else if line > 0 {
            out.push(' ');
            line += 1;
        }
        line += word.chars().count();
        out.push_str(&word);
    }
    out.push('\n');
    out
}

/// The values that narrow a list to some of its records (a `deviceId` or `clientId` filter),
/// as opposed to those that only shape its pages (`limit`, `direction`, all with a default).
fn list_filters(op: &Operation, values: &Values) -> Vec<(String, String)> {
    op.params
        .iter()
        .filter(|p| !p.required && p.location == crate::catalog::Location::Query && p.default.is_none())
        .filter_map(|p| values.get(p.name).map(|v| (p.name.to_owned(), v.clone())))
        .collect()
}

/// The table view of an answer, for the operations that have one (of any service).
fn detail_for(op: &Operation, body: &Value) -> Option<Detail> {
    tax::detail_for(op, body).or_else(|| mail::detail_for(op, body)).or_else(|| shipping::detail_for(op, body))
}

/// The columns a list's records are shown with, when the generic ones would say little.
fn layout_for(op: &Operation) -> Option<Layout> {
    (op.service == Service::Mailgun && op.name == "events_list")
        .then(|| Layout { columns: mail::event_columns(), cell: mail::event_cell })
        .or_else(|| shipping::layout(op))
}

/// The browser title's note while tailing.
fn tail_note(every: Duration, arrived: usize) -> String {
    format!("● tail {} s · {arrived} new", every.as_secs())
}

/// The control port of an `opsdeck sandbox` serving `service` at `base_url`: every service
/// listens at the port base plus its offset, the control port at the base itself.
fn external_control(base_url: &str, service: Service) -> Option<String> {
    let url = reqwest::Url::parse(base_url).ok()?;
    let host = url.host_str()?;
    let loopback = host == "localhost" || host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback());
    let port = url.port()?.checked_sub(crate::sandbox::port_offset(service, None))?;
    loopback.then(|| format!("http://{host}:{port}"))
}

fn human_size(bytes: usize) -> String {
    match bytes {
        0..1024 => format!("{bytes} B"),
        1024..1_048_576 => format!("{:.1} KB", bytes as f64 / 1024.0),
        _ => format!("{:.1} MB", bytes as f64 / 1_048_576.0),
    }
}

pub fn mode_label(tab: &Tab) -> &'static str {
    match tab.mode {
        Mode::Live => "LIVE",
        Mode::Embedded | Mode::External => "SANDBOX",
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
