//! `Y`: copy the request as a command line. A small popup picks the tool (curl or HTTPie); the
//! command holds `$VARIABLE`s where secrets go, so it is safe to paste anywhere.

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};
use ratatui::Frame;

use crate::inert::inert;
use crate::tui::theme::Theme;

/// The command-line tool a request is copied for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CopyFormat {
    Curl,
    Httpie,
}

impl CopyFormat {
    pub const ALL: [CopyFormat; 2] = [CopyFormat::Curl, CopyFormat::Httpie];

    /// The name users know the tool by.
    pub fn label(self) -> &'static str {
        match self {
            CopyFormat::Curl => "curl",
            CopyFormat::Httpie => "HTTPie",
        }
    }

    fn key(self) -> char {
        match self {
            CopyFormat::Curl => 'c',
            CopyFormat::Httpie => 'h',
        }
    }
}

/// What a key did in the popup.
#[derive(Debug, PartialEq, Eq)]
pub enum CopyMenuAction {
    None,
    Chosen(CopyFormat),
    Cancel,
}

/// The open popup: which request it copies (shown so there is no doubt) and the highlighted tool.
pub struct CopyMenu {
    /// `METHOD url` of the request, or what it is (`the form being filled`).
    pub subject: String,
    selected: usize,
}

impl CopyMenu {
    pub fn new(subject: String) -> CopyMenu {
        CopyMenu { subject, selected: 0 }
    }

    pub fn handle_key(&mut self, key: KeyEvent) -> CopyMenuAction {
        match key.code {
            KeyCode::Esc | KeyCode::Char('q') => CopyMenuAction::Cancel,
            KeyCode::Down | KeyCode::Char('j') | KeyCode::Tab => {
                self.selected = (self.selected + 1) % CopyFormat::ALL.len();
                CopyMenuAction::None
            }
            KeyCode::Up | KeyCode::Char('k') | KeyCode::BackTab => {
                self.selected = (self.selected + CopyFormat::ALL.len() - 1) % CopyFormat::ALL.len();
                CopyMenuAction::None
            }
            KeyCode::Enter => CopyMenuAction::Chosen(CopyFormat::ALL[self.selected]),
            KeyCode::Char(c) => match CopyFormat::ALL.iter().find(|f| f.key() == c.to_ascii_lowercase()) {
                Some(format) => CopyMenuAction::Chosen(*format),
                None => CopyMenuAction::None,
            },
            _ => CopyMenuAction::None,
        }
    }

    pub fn render(&self, frame: &mut Frame, area: Rect, theme: &Theme) {
        let width = area.width.min(72);
        let height = area.height.min(7);
        let popup = super::centered(area, width, height);
        frame.render_widget(Clear, popup);
        let block = Block::default()
            .borders(Borders::ALL)
            .border_style(theme.border_focused)
            .title(Span::styled(" copy request as ", theme.title))
            .title_bottom(Span::styled(" Enter copies · Esc closes ", theme.muted));
        let mut lines = vec![Line::styled(inert(&self.subject).into_owned(), theme.muted)];
        for (index, format) in CopyFormat::ALL.iter().enumerate() {
            let style = if index == self.selected { theme.selected(true) } else { theme.text };
            lines.push(Line::from(vec![
                Span::styled(format!(" {} ", format.key()), theme.accent),
                Span::styled(format!(" {:<8}", format.label()), style),
            ]));
        }
        lines.push(Line::styled("secrets appear as $VARIABLES, never as values", theme.muted));
        let inner = block.inner(popup);
        frame.render_widget(block, popup);
        frame.render_widget(Paragraph::new(lines), inner);
    }
}
