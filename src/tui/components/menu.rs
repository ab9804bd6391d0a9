//! A filterable list of operations: `o` (the tab's, the selected resource first) and `:` (the
//! command palette: every operation of every service, by fuzzy name).
//!
//! The two take keys as their models do: the operations menu is a list, as in lazygit (`j`/`k`
//! move, `/` starts a filter, Enter picks); the palette is a prompt, as in editors (every
//! character filters, arrows and `Ctrl-n`/`Ctrl-p` move).

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, List, ListItem, ListState};
use ratatui::Frame;

use unicode_width::UnicodeWidthStr;

use crate::catalog::Operation;
use crate::inert::inert;
use crate::tui::components::line_input::LineInput;
use crate::tui::keymap::Action;
use crate::tui::theme::Theme;

/// What a key did in the menu.
#[derive(Debug)]
pub enum MenuAction {
    None,
    Chosen(&'static Operation),
    Command(Command),
    Cancel,
}

/// Console actions the palette offers beside the operations.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
    /// An app action (sandbox view, zoom, read-only on/off, ...), as its key would run it.
    Action(Action),
    /// Switch to this profile without restarting.
    Profile(String),
    /// Draw with this theme from now on.
    Theme(String),
}

/// One console action in the palette: what it is called there, what it does, what it runs.
#[derive(Clone, Debug)]
pub struct PaletteItem {
    pub label: String,
    pub summary: String,
    pub command: Command,
}

/// One line of the menu: an operation, a console action, or the heading of a group.
#[derive(Clone, Debug)]
enum Entry {
    Op(&'static Operation),
    Item(PaletteItem),
    /// Not selectable; shown only while nothing is typed.
    Heading(String),
}

impl Entry {
    /// How well `query` matches (lower is better). An operation matches by its name alone or
    /// after its service's, so a short service name gives no head start: equal names rank in
    /// menu order (the current tab's first in the palette).
    fn score(&self, query: &str) -> Option<usize> {
        match self {
            Entry::Op(op) => {
                let by_name = fuzzy_score(query, op.name);
                let by_service = fuzzy_score(query, &format!("{} {}", op.service.name(), op.name));
                by_name.into_iter().chain(by_service).min()
            }
            Entry::Item(item) => fuzzy_score(query, &format!("opsdeck {}", item.label)),
            Entry::Heading(_) => None,
        }
    }
}

pub struct Menu {
    title: String,
    ops: Vec<Entry>,
    /// Indices into `ops` matching the query, best first.
    shown: Vec<usize>,
    query: LineInput,
    /// Whether keys are text for the query: always in the palette, after `/` in a list menu.
    typing: bool,
    /// The palette: the query is always being typed.
    prompt: bool,
    /// Index into `shown`; never a heading.
    selected: usize,
    /// Whether to show the service name (the palette spans services).
    show_service: bool,
}

impl Menu {
    pub fn new(title: impl Into<String>, ops: Vec<&'static Operation>, show_service: bool) -> Menu {
        Menu::from_entries(title.into(), ops.into_iter().map(Entry::Op).collect(), show_service, false)
    }

    fn from_entries(title: String, ops: Vec<Entry>, show_service: bool, prompt: bool) -> Menu {
        let mut menu = Menu {
            title,
            ops,
            shown: Vec::new(),
            query: LineInput::default(),
            typing: prompt,
            prompt,
            selected: 0,
            show_service,
        };
        menu.refilter();
        menu
    }

    /// The filter typed so far.
    pub fn query(&self) -> &str {
        self.query.text()
    }

    /// Whether keys go to the filter.
    pub fn is_typing(&self) -> bool {
        self.typing
    }

    /// A service's operations in two groups under headings: those of `resource` first, then
    /// the rest. Typing searches both.
    pub fn grouped(
        title: impl Into<String>,
        resource: &str,
        first: Vec<&'static Operation>,
        rest: Vec<&'static Operation>,
    ) -> Menu {
        let mut entries = Vec::new();
        if !first.is_empty() && !rest.is_empty() {
            entries.push(Entry::Heading(inert(resource).into_owned()));
        }
        entries.extend(first.into_iter().map(Entry::Op));
        if !rest.is_empty() && !entries.is_empty() {
            entries.push(Entry::Heading("other operations".into()));
        }
        entries.extend(rest.into_iter().map(Entry::Op));
        Menu::from_entries(title.into(), entries, false, false)
    }

    /// The command palette: every operation, and the console's own actions after them.
    pub fn palette(ops: Vec<&'static Operation>, items: Vec<PaletteItem>) -> Menu {
        let entries = ops.into_iter().map(Entry::Op).chain(items.into_iter().map(Entry::Item)).collect();
        Menu::from_entries("all operations".into(), entries, true, true)
    }

    fn refilter(&mut self) {
        let query = self.query.text().to_lowercase();
        if query.is_empty() {
            // Everything in order, headings included.
            self.shown = (0..self.ops.len()).collect();
        } else {
            let mut scored: Vec<(usize, usize)> =
                self.ops.iter().enumerate().filter_map(|(i, entry)| entry.score(&query).map(|s| (s, i))).collect();
            scored.sort_by_key(|(score, i)| (*score, *i));
            self.shown = scored.into_iter().map(|(_, i)| i).collect();
        }
        self.selected = 0;
        self.step(0, true);
    }

    fn is_heading(&self, shown: usize) -> bool {
        self.shown.get(shown).is_some_and(|i| matches!(self.ops[*i], Entry::Heading(_)))
    }

    /// Moves the selection `by` lines (0: stay), down or up, past headings.
    fn step(&mut self, by: usize, down: bool) {
        let last = self.shown.len().saturating_sub(1);
        let mut at = if down { (self.selected + by).min(last) } else { self.selected.saturating_sub(by) };
        while self.is_heading(at) {
            match (down, at) {
                (true, a) if a < last => at += 1,
                (false, a) if a > 0 => at -= 1,
                // Nothing selectable that way: back to where it was, or onwards the other way.
                _ => {
                    at = self.selected;
                    while self.is_heading(at) && at < last {
                        at += 1;
                    }
                    break;
                }
            }
        }
        self.selected = at;
    }

    pub fn handle_key(&mut self, key: KeyEvent) -> MenuAction {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let page = 10;
        match key.code {
            KeyCode::Esc if self.typing && !self.prompt => {
                // Out of the filter, back to the whole list.
                self.typing = false;
                self.query.clear();
                self.refilter();
            }
            KeyCode::Esc => return MenuAction::Cancel,
            KeyCode::Enter => {
                return match self.shown.get(self.selected).map(|i| &self.ops[*i]) {
                    Some(Entry::Op(op)) => MenuAction::Chosen(op),
                    Some(Entry::Item(item)) => MenuAction::Command(item.command.clone()),
                    Some(Entry::Heading(_)) | None => MenuAction::None,
                };
            }
            KeyCode::Down => self.step(1, true),
            KeyCode::Up => self.step(1, false),
            KeyCode::PageDown => self.step(page, true),
            KeyCode::PageUp => self.step(page, false),
            KeyCode::Char('n') if ctrl => self.step(1, true),
            KeyCode::Char('p') if ctrl => self.step(1, false),
            _ if self.typing && self.query.handle_key(&key) => self.refilter(),
            _ if self.typing => {}
            KeyCode::Char('j') => self.step(1, true),
            KeyCode::Char('k') => self.step(1, false),
            KeyCode::Char('g') | KeyCode::Home => {
                self.selected = 0;
                self.step(0, true);
            }
            KeyCode::Char('G') | KeyCode::End => {
                self.selected = self.shown.len().saturating_sub(1);
                self.step(0, false);
            }
            KeyCode::Char('/') => self.typing = true,
            _ => {}
        }
        MenuAction::None
    }

    /// Pasted text joins the query (and starts the filter of a list menu).
    pub fn paste(&mut self, text: &str) {
        self.typing = true;
        self.query.insert_str(text);
        self.refilter();
    }

    /// The keys of the operations menu (`o`).
    pub fn help() -> &'static [(&'static str, &'static str)] {
        &[
            ("j k ↑ ↓ g G", "move"),
            ("/", "filter by name (Esc: the whole list again)"),
            ("Enter", "open the operation's form"),
            ("Esc", "close"),
        ]
    }

    /// The keys of the palette (`:`).
    pub fn palette_help() -> &'static [(&'static str, &'static str)] {
        &[("type", "filter by name"), ("↑ ↓ ^p ^n", "move"), ("Enter", "run it"), ("Esc", "close")]
    }

    pub fn render(&self, frame: &mut Frame, area: Rect, theme: &Theme) {
        // As wide as its widest line (a long summary included) up to the screen.
        let widest = self
            .ops
            .iter()
            .map(|entry| match entry {
                Entry::Op(op) => usize::from(self.show_service) * 9 + 28 + 7 + op.summary.width(),
                Entry::Item(item) => 9 + 35 + item.summary.width(),
                Entry::Heading(text) => text.width() + 4,
            })
            .chain([self.title.width() + 30])
            .max()
            .unwrap_or(0);
        let most = area.width.saturating_sub(4).max(10).min(area.width);
        let width = u16::try_from(widest + 4).unwrap_or(most).clamp(10.min(most), most);
        let wanted = u16::try_from(self.shown.len()).unwrap_or(u16::MAX).saturating_add(2).max(4);
        let height = wanted.min(area.height.saturating_sub(2).max(3)).min(area.height);
        let popup =
            Rect { x: area.x + (area.width - width) / 2, y: area.y + (area.height - height) / 3, width, height };
        frame.render_widget(Clear, popup);
        let mut title = vec![Span::styled(format!(" {} ", inert(&self.title)), theme.title)];
        if self.typing {
            let room = usize::from(width.saturating_sub(4)).saturating_sub(self.title.len() + 4).max(8);
            title.push(Span::styled("> ", theme.accent));
            title.extend(self.query.spans(room, theme.accent, theme.selection));
            title.push(Span::raw(" "));
        } else {
            title.push(Span::styled("/ filter ", theme.muted));
        }
        let title = Line::from(title);
        let block = Block::default().borders(Borders::ALL).border_style(theme.border_focused).title(title);
        let items: Vec<ListItem> = self
            .shown
            .iter()
            .map(|i| {
                let op = match &self.ops[*i] {
                    Entry::Op(op) => op,
                    Entry::Item(item) => {
                        return ListItem::new(Line::from(vec![
                            Span::styled(format!("{:<9}", "opsdeck"), theme.muted),
                            Span::styled(format!("{:<35}", inert(&item.label)), theme.accent),
                            Span::styled(inert(&item.summary).into_owned(), theme.muted),
                        ]));
                    }
                    Entry::Heading(text) => {
                        return ListItem::new(Line::from(Span::styled(format!("── {text} "), theme.title)));
                    }
                };
                let mut spans = Vec::new();
                if self.show_service {
                    spans.push(Span::styled(format!("{:<9}", op.service.name()), theme.muted));
                }
                let name_style = if op.destructive { theme.warning } else { theme.text };
                spans.push(Span::styled(format!("{:<28}", op.name), name_style));
                spans.push(Span::styled(format!("{:<7}", op.method.as_str()), theme.muted));
                spans.push(Span::styled(op.summary, theme.muted));
                ListItem::new(Line::from(spans))
            })
            .collect();
        let list = List::new(items).block(block).highlight_style(theme.selection);
        let mut state = ListState::default().with_selected(Some(self.selected));
        frame.render_stateful_widget(list, popup, &mut state);
    }
}

/// Lower is better; `None` when `query`'s characters do not all appear in order in `text`.
/// Prefers matches that start early and stay together.
fn fuzzy_score(query: &str, text: &str) -> Option<usize> {
    if query.is_empty() {
        return Some(0);
    }
    let mut score = 0;
    let mut last = None;
    let mut chars = text.char_indices();
    for q in query.chars() {
        let (index, _) = chars.find(|(_, c)| *c == q)?;
        score += match last {
            Some(prev) => index - prev - 1,
            None => index,
        };
        last = Some(index);
    }
    Some(score)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::all_operations;

    #[test]
    fn fuzzy_matching_ranks_tight_matches_first() {
        assert!(fuzzy_score("msgl", "ably messages_list").is_some());
        assert!(fuzzy_score("xyz", "ably messages_list").is_none());
        let mut menu = Menu::palette(all_operations().collect(), Vec::new());
        for c in "ably time".chars() {
            menu.handle_key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
        }
        let MenuAction::Chosen(op) = menu.handle_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE)) else {
            panic!("nothing chosen")
        };
        assert_eq!(op.name, "time_get");
    }
}
