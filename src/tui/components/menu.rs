//! A filterable list of operations: `o` (the tab's, the selected resource first) and `:` (the
//! command palette: every operation of every service, by fuzzy name).

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, List, ListItem, ListState};
use ratatui::Frame;

use crate::catalog::Operation;
use crate::inert::inert;
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
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Command {
    /// The recent requests and active faults of the tab's simulator.
    SandboxView,
}

impl Command {
    const ALL: [Command; 1] = [Command::SandboxView];

    fn name(self) -> &'static str {
        match self {
            Command::SandboxView => "sandbox view",
        }
    }

    fn summary(self) -> &'static str {
        match self {
            Command::SandboxView => "recent requests and active faults of this tab's simulator (S)",
        }
    }
}

/// One line of the menu: an operation or a console action.
#[derive(Clone, Copy, Debug)]
enum Entry {
    Op(&'static Operation),
    Command(Command),
}

impl Entry {
    fn search_text(self) -> String {
        match self {
            Entry::Op(op) => format!("{} {}", op.service.name(), op.name),
            Entry::Command(command) => format!("opsdeck {}", command.name()),
        }
    }
}

pub struct Menu {
    title: String,
    ops: Vec<Entry>,
    /// Indices into `ops` matching the query, best first.
    shown: Vec<usize>,
    query: String,
    selected: usize,
    /// Whether to show the service name (the palette spans services).
    show_service: bool,
}

impl Menu {
    pub fn new(title: impl Into<String>, ops: Vec<&'static Operation>, show_service: bool) -> Menu {
        let ops: Vec<Entry> = ops.into_iter().map(Entry::Op).collect();
        let shown = (0..ops.len()).collect();
        Menu { title: title.into(), ops, shown, query: String::new(), selected: 0, show_service }
    }

    /// The command palette: every operation, and the console's own actions after them.
    pub fn palette(ops: Vec<&'static Operation>) -> Menu {
        let mut menu = Menu::new("all operations", ops, true);
        menu.ops.extend(Command::ALL.map(Entry::Command));
        menu.shown = (0..menu.ops.len()).collect();
        menu
    }

    fn refilter(&mut self) {
        let query = self.query.to_lowercase();
        let mut scored: Vec<(usize, usize)> = self
            .ops
            .iter()
            .enumerate()
            .filter_map(|(i, entry)| fuzzy_score(&query, &entry.search_text()).map(|s| (s, i)))
            .collect();
        scored.sort_by_key(|(score, i)| (*score, *i));
        self.shown = scored.into_iter().map(|(_, i)| i).collect();
        self.selected = 0;
    }

    pub fn handle_key(&mut self, key: KeyEvent) -> MenuAction {
        match key.code {
            KeyCode::Esc => return MenuAction::Cancel,
            KeyCode::Enter => {
                return match self.shown.get(self.selected).map(|i| self.ops[*i]) {
                    Some(Entry::Op(op)) => MenuAction::Chosen(op),
                    Some(Entry::Command(command)) => MenuAction::Command(command),
                    None => MenuAction::None,
                };
            }
            KeyCode::Down => self.selected = (self.selected + 1).min(self.shown.len().saturating_sub(1)),
            KeyCode::Up => self.selected = self.selected.saturating_sub(1),
            KeyCode::Char('n') if key.modifiers.contains(KeyModifiers::CONTROL) => {
                self.selected = (self.selected + 1).min(self.shown.len().saturating_sub(1));
            }
            KeyCode::Char('p') if key.modifiers.contains(KeyModifiers::CONTROL) => {
                self.selected = self.selected.saturating_sub(1);
            }
            KeyCode::Backspace => {
                self.query.pop();
                self.refilter();
            }
            KeyCode::Char(c) if !key.modifiers.contains(KeyModifiers::CONTROL) => {
                self.query.push(c);
                self.refilter();
            }
            _ => {}
        }
        MenuAction::None
    }

    /// Pasted text joins the query.
    pub fn paste(&mut self, text: &str) {
        self.query.push_str(text);
        self.refilter();
    }

    pub fn help() -> &'static [(&'static str, &'static str)] {
        &[("type", "filter by name"), ("↑ ↓ ^p ^n", "move"), ("Enter", "open the operation's form"), ("Esc", "close")]
    }

    pub fn render(&self, frame: &mut Frame, area: Rect, theme: &Theme) {
        let width = area.width.saturating_sub(4).clamp(10, 90).min(area.width);
        let wanted = u16::try_from(self.shown.len()).unwrap_or(u16::MAX).saturating_add(2).max(4);
        let height = wanted.min(area.height.saturating_sub(2).max(3)).min(area.height);
        let popup =
            Rect { x: area.x + (area.width - width) / 2, y: area.y + (area.height - height) / 3, width, height };
        frame.render_widget(Clear, popup);
        let title = Line::from(vec![
            Span::styled(format!(" {} ", inert(&self.title)), theme.title),
            Span::styled(format!("> {}▏ ", inert(&self.query)), theme.accent),
        ]);
        let block = Block::default().borders(Borders::ALL).border_style(theme.border_focused).title(title);
        let items: Vec<ListItem> = self
            .shown
            .iter()
            .map(|i| {
                let op = match self.ops[*i] {
                    Entry::Op(op) => op,
                    Entry::Command(command) => {
                        return ListItem::new(Line::from(vec![
                            Span::styled(format!("{:<9}", "opsdeck"), theme.muted),
                            Span::styled(format!("{:<35}", command.name()), theme.accent),
                            Span::styled(command.summary(), theme.muted),
                        ]));
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
        let mut menu = Menu::new("palette", all_operations().collect(), true);
        for c in "ably time".chars() {
            menu.handle_key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
        }
        let MenuAction::Chosen(op) = menu.handle_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE)) else {
            panic!("nothing chosen")
        };
        assert_eq!(op.name, "time_get");
    }
}
