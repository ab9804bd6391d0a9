//! The history view (`H`): past calls, newest first, from the local history file. `/` filters
//! them by text; Enter shows the stored response in the inspector, `e` opens the operation's form
//! with the stored values, `s` (or `r`) sends it again (destructive operations still ask first).

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, List, ListItem, ListState, Paragraph, Wrap};
use ratatui::Frame;

use crate::format::{human_bytes, plural};
use crate::history::{short_time, Filter, History, Record};
use crate::inert::inert;
use crate::tui::components::line_input::LineInput;
use crate::tui::theme::Theme;

/// Calls read into the view at most (the newest).
pub const LOADED: usize = 2000;

/// What a key did in the view.
#[derive(Debug)]
pub enum HistoryAction {
    None,
    Close,
    /// Show this call's stored response in the inspector.
    Inspect(Box<Record>),
    /// Open the operation's form with these values.
    Edit(Box<Record>),
    /// Send it again.
    Send(Box<Record>),
}

pub struct HistoryView {
    /// The history read from (its own connection), or why there is none.
    store: Result<History, String>,
    records: Vec<Record>,
    /// Indices into `records` that match the filter.
    shown: Vec<usize>,
    selected: usize,
    filter: LineInput,
    typing: bool,
    /// A problem to show above the list (a read that failed).
    note: Option<String>,
    /// Rows of the list at the last draw, for page moves.
    page: usize,
}

impl HistoryView {
    /// Reads the newest calls from `store`.
    pub fn new(store: Result<History, String>) -> HistoryView {
        let mut view = HistoryView {
            store,
            records: Vec::new(),
            shown: Vec::new(),
            selected: 0,
            filter: LineInput::default(),
            typing: false,
            note: None,
            page: 10,
        };
        view.reload();
        view
    }

    /// Reads the list again (calls recorded since the view opened appear).
    pub fn reload(&mut self) {
        match &self.store {
            Ok(store) => match store.list(&Filter { service: None, limit: LOADED }) {
                Ok(records) => {
                    self.records = records;
                    self.note = None;
                }
                Err(e) => self.note = Some(e),
            },
            Err(reason) => self.note = Some(reason.clone()),
        }
        self.refilter();
    }

    /// The calls in view, newest first.
    pub fn shown(&self) -> impl Iterator<Item = &Record> {
        self.shown.iter().map(|i| &self.records[*i])
    }

    pub fn is_typing(&self) -> bool {
        self.typing
    }

    /// The filter as typed.
    pub fn filter_text(&self) -> &str {
        self.filter.text()
    }

    fn refilter(&mut self) {
        let words: Vec<String> = self.filter.text().split_whitespace().map(str::to_lowercase).collect();
        self.shown = (0..self.records.len())
            .filter(|i| {
                let text = search_text(&self.records[*i]);
                words.iter().all(|w| text.contains(w.as_str()))
            })
            .collect();
        self.selected = self.selected.min(self.shown.len().saturating_sub(1));
    }

    /// The selected call read in full (with its stored body).
    fn selected_full(&mut self) -> Option<Record> {
        let id = self.records.get(*self.shown.get(self.selected)?)?.id;
        let store = self.store.as_ref().ok()?;
        match store.get(id) {
            Ok(Some(record)) => Some(record),
            Ok(None) => {
                self.note = Some(format!("call {id} is no longer in the history (retention or clear)"));
                None
            }
            Err(e) => {
                self.note = Some(e);
                None
            }
        }
    }

    pub fn handle_key(&mut self, key: KeyEvent) -> HistoryAction {
        if self.typing {
            match key.code {
                KeyCode::Enter => self.typing = false,
                KeyCode::Esc => {
                    self.typing = false;
                    self.filter.clear();
                    self.refilter();
                }
                KeyCode::Down => self.move_by(1),
                KeyCode::Up => self.move_by(-1),
                _ if self.filter.handle_key(&key) => self.refilter(),
                _ => {}
            }
            return HistoryAction::None;
        }
        let page = isize::try_from(self.page.max(1)).unwrap_or(10);
        match key.code {
            KeyCode::Esc | KeyCode::Char('q' | 'H') => return HistoryAction::Close,
            KeyCode::Char('/') => self.typing = true,
            KeyCode::Down | KeyCode::Char('j') => self.move_by(1),
            KeyCode::Up | KeyCode::Char('k') => self.move_by(-1),
            KeyCode::PageDown => self.move_by(page),
            KeyCode::PageUp => self.move_by(-page),
            KeyCode::Home | KeyCode::Char('g') => self.selected = 0,
            KeyCode::End | KeyCode::Char('G') => self.selected = self.shown.len().saturating_sub(1),
            KeyCode::Char('u') => self.reload(),
            KeyCode::Enter => {
                return self.selected_full().map_or(HistoryAction::None, |r| HistoryAction::Inspect(r.into()))
            }
            KeyCode::Char('e') => {
                return self.selected_full().map_or(HistoryAction::None, |r| HistoryAction::Edit(r.into()))
            }
            KeyCode::Char('s' | 'r') => {
                return self.selected_full().map_or(HistoryAction::None, |r| HistoryAction::Send(r.into()))
            }
            _ => {}
        }
        HistoryAction::None
    }

    fn move_by(&mut self, delta: isize) {
        let last = self.shown.len().saturating_sub(1);
        self.selected = self.selected.saturating_add_signed(delta).min(last);
    }

    /// Pasted text joins the filter.
    pub fn paste(&mut self, text: &str) {
        self.typing = true;
        self.filter.insert_str(text);
        self.refilter();
    }

    pub fn help() -> &'static [(&'static str, &'static str)] {
        &[
            ("H", "history of calls, newest first (not in the inspector, where H is headers)"),
            ("  / (in it)", "filter by text: service, operation, status, values"),
            ("  Enter", "the stored response in the inspector"),
            ("  e", "the operation's form with the stored values"),
            ("  s r", "send it again (destructive ones ask first)"),
        ]
    }

    pub fn render(&mut self, frame: &mut Frame, area: Rect, theme: &Theme) {
        let width = area.width.saturating_sub(4).max(10).min(area.width);
        let height = area.height.saturating_sub(2).max(5).min(area.height);
        let popup = super::centered(area, width, height);
        frame.render_widget(Clear, popup);
        let mut title = vec![Span::styled(
            format!(" history · {} of {} ", self.shown.len(), plural(self.records.len(), "call")),
            theme.title,
        )];
        if self.typing || !self.filter.is_empty() {
            title.push(Span::styled("/ ", theme.accent));
            match self.typing {
                true => title.extend(self.filter.spans(usize::from(width / 2).max(8), theme.accent, theme.selection)),
                false => title.push(Span::styled(self.filter.text().to_owned(), theme.accent)),
            }
            title.push(Span::raw(" "));
        }
        let keys = if self.typing {
            " Enter keep filter · Esc clear "
        } else {
            " Enter inspect · e edit · s send again · / filter · u reload · Esc close "
        };
        let block = Block::default()
            .borders(Borders::ALL)
            .border_style(theme.border_focused)
            .title(Line::from(title))
            .title_bottom(Line::from(Span::styled(keys, theme.muted)));
        let inner = block.inner(popup);
        frame.render_widget(block, popup);
        let note_height = u16::from(self.note.is_some() || self.records.is_empty()) * 2;
        let [note_area, header_area, list_area] =
            Layout::vertical([Constraint::Length(note_height), Constraint::Length(1), Constraint::Min(1)]).areas(inner);
        if let Some(note) = &self.note {
            frame.render_widget(
                Paragraph::new(inert(note).into_owned()).style(theme.error).wrap(Wrap { trim: true }),
                note_area,
            );
        } else if self.records.is_empty() {
            frame.render_widget(
                Paragraph::new("No call recorded yet: every call sent from here or with `opsdeck call` appears here.")
                    .style(theme.muted),
                note_area,
            );
        }
        let widths = Widths::of(&self.records);
        let Widths { id, operation, status } = widths;
        frame.render_widget(
            Paragraph::new(format!(
                "  {:<id$} {:<19}  {:<8} {:<8} {:<operation$} {:<status$} {:>9} {:>9}  {}",
                "ID", "WHEN (UTC)", "TARGET", "SERVICE", "OPERATION", "STATUS", "TOOK", "SIZE", "VALUES"
            ))
            .style(theme.title),
            header_area,
        );
        self.page = usize::from(list_area.height);
        let items: Vec<ListItem> = self.shown().map(|r| ListItem::new(row(r, widths, theme))).collect();
        let list = List::new(items).highlight_style(theme.selection).highlight_symbol("▶ ");
        let mut state = ListState::default().with_selected((!self.shown.is_empty()).then_some(self.selected));
        frame.render_stateful_widget(list, list_area, &mut state);
    }
}

/// Column widths that fit every loaded call, so they stay put while the filter changes.
#[derive(Clone, Copy)]
struct Widths {
    id: usize,
    operation: usize,
    status: usize,
}

impl Widths {
    fn of(records: &[Record]) -> Widths {
        let max = |f: &dyn Fn(&Record) -> usize, title: &str| records.iter().map(f).max().unwrap_or(0).max(title.len());
        Widths {
            id: max(&|r| r.id.to_string().len(), "ID"),
            operation: max(&|r| r.operation.chars().count(), "OPERATION"),
            status: max(&|r| r.status_label().len(), "STATUS"),
        }
    }
}

fn row<'a>(record: &Record, widths: Widths, theme: &Theme) -> Line<'a> {
    let Widths { id, operation, status } = widths;
    let status_style = if record.is_success() { theme.success } else { theme.error };
    let target_style = if record.target == "LIVE" { theme.live_badge } else { theme.muted };
    Line::from(vec![
        Span::styled(format!("{:<id$} ", record.id), theme.muted),
        Span::styled(format!("{:<19}  ", short_time(record.at_ms)), theme.muted),
        Span::styled(format!("{:<8}", inert(&record.target)), target_style),
        Span::raw(" "),
        Span::styled(format!("{:<8} ", inert(&record.service)), theme.text),
        Span::styled(format!("{:<operation$} ", inert(&record.operation)), theme.text),
        Span::styled(format!("{:<status$} ", record.status_label()), status_style),
        Span::styled(format!("{:>6} ms ", record.duration_ms), theme.muted),
        Span::styled(format!("{:>9}  ", human_bytes(record.size)), theme.muted),
        Span::styled(inert(&record.params_line()).into_owned(), theme.muted),
    ])
}

/// What the filter looks in, lower-cased.
fn search_text(record: &Record) -> String {
    format!(
        "#{} {} {} {} {} {} {} {} {}",
        record.id,
        short_time(record.at_ms),
        record.target,
        record.service,
        record.operation,
        record.status_label(),
        record.profile,
        record.params_line(),
        record.error.as_deref().unwrap_or_default()
    )
    .to_lowercase()
}
