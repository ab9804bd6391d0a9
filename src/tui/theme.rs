//! Semantic styles: components ask for roles (`theme.selection`), never for colours.
//! The colours live in `themes/*.toml`; loading them is `config::theme_file`.

use ratatui::style::{Color, Modifier, Style};

/// Every role a component may draw with.
#[derive(Clone, Debug, PartialEq)]
pub struct Theme {
    pub name: String,
    /// Ordinary text on the background.
    pub text: Style,
    /// Secondary text: hints, help, disabled items, counters.
    pub muted: Style,
    /// Pane borders.
    pub border: Style,
    /// The focused pane's border.
    pub border_focused: Style,
    /// Pane titles and table headers.
    pub title: Style,
    /// The selected row or item.
    pub selection: Style,
    /// Highlights: the active tab, keys in help, search matches.
    pub accent: Style,
    pub error: Style,
    pub warning: Style,
    pub success: Style,
    pub live_badge: Style,
    pub sandbox_badge: Style,
    pub json_key: Style,
    pub json_string: Style,
    pub json_number: Style,
    pub json_literal: Style,
    pub json_punctuation: Style,
}

impl Theme {
    /// The built-in dark theme (`themes/dark.toml`); also what a broken theme falls back to.
    pub fn dark() -> Theme {
        crate::config::theme_file::built_in("dark").unwrap_or_else(Theme::plain)
    }

    /// Terminal defaults with reverse video for the selection: the base every theme file is
    /// applied over, and what remains if even the built-in file could not be read.
    pub fn plain() -> Theme {
        let text = Style::new();
        Theme {
            name: "plain".into(),
            text,
            muted: text.add_modifier(Modifier::DIM),
            border: text,
            border_focused: text.add_modifier(Modifier::BOLD),
            title: text.add_modifier(Modifier::BOLD),
            selection: text.add_modifier(Modifier::REVERSED),
            accent: text.add_modifier(Modifier::BOLD),
            error: text.fg(Color::Red),
            warning: text.fg(Color::Yellow),
            success: text.fg(Color::Green),
            live_badge: text.add_modifier(Modifier::REVERSED | Modifier::BOLD),
            sandbox_badge: text.add_modifier(Modifier::REVERSED),
            json_key: text.fg(Color::Blue),
            json_string: text.fg(Color::Green),
            json_number: text.fg(Color::Yellow),
            json_literal: text.fg(Color::Magenta),
            json_punctuation: text.add_modifier(Modifier::DIM),
        }
    }

    /// The selection style, dimmed when the pane is not focused.
    pub fn selected(&self, focused: bool) -> Style {
        if focused {
            self.selection
        } else {
            self.selection.add_modifier(Modifier::DIM)
        }
    }

    pub fn border(&self, focused: bool) -> Style {
        if focused {
            self.border_focused
        } else {
            self.border
        }
    }
}

impl Default for Theme {
    fn default() -> Theme {
        Theme::dark()
    }
}
