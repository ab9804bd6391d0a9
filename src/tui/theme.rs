//! Semantic styles: components ask for roles (`theme.selection`), never for colours.
//! Loading from `themes/*.toml` and the user's config dir lives in `config::theme_file`.

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
    /// The built-in dark theme; also what a broken theme file falls back to.
    pub fn dark() -> Theme {
        Theme {
            name: "dark".into(),
            text: Style::new().fg(Color::Rgb(220, 223, 228)),
            muted: Style::new().fg(Color::Rgb(128, 134, 145)),
            border: Style::new().fg(Color::Rgb(70, 76, 88)),
            border_focused: Style::new().fg(Color::Rgb(97, 175, 239)),
            title: Style::new().fg(Color::Rgb(229, 192, 123)).add_modifier(Modifier::BOLD),
            selection: Style::new().fg(Color::Rgb(24, 26, 31)).bg(Color::Rgb(97, 175, 239)),
            accent: Style::new().fg(Color::Rgb(97, 175, 239)).add_modifier(Modifier::BOLD),
            error: Style::new().fg(Color::Rgb(224, 108, 117)),
            warning: Style::new().fg(Color::Rgb(229, 192, 123)),
            success: Style::new().fg(Color::Rgb(152, 195, 121)),
            live_badge: Style::new().fg(Color::Rgb(24, 26, 31)).bg(Color::Rgb(224, 108, 117)).add_modifier(Modifier::BOLD),
            sandbox_badge: Style::new().fg(Color::Rgb(24, 26, 31)).bg(Color::Rgb(152, 195, 121)).add_modifier(Modifier::BOLD),
            json_key: Style::new().fg(Color::Rgb(97, 175, 239)),
            json_string: Style::new().fg(Color::Rgb(152, 195, 121)),
            json_number: Style::new().fg(Color::Rgb(209, 154, 102)),
            json_literal: Style::new().fg(Color::Rgb(198, 120, 221)),
            json_punctuation: Style::new().fg(Color::Rgb(128, 134, 145)),
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
