//! Semantic styles: components ask for roles (`theme.selection`), never for colours.
//! The colours live in `themes/*.toml` (read by [`file`]); [`depth`] fits them to what the
//! terminal can show, and `NO_COLOR` picks [`Theme::plain`], which draws with attributes only.

pub mod depth;
pub mod file;

use std::path::Path;

use ratatui::style::{Modifier, Style};

pub use depth::ColorDepth;

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
        file::built_in("dark").unwrap_or_else(Theme::plain)
    }

    /// No colour at all, only attributes (reverse video for the selection, bold for focus), so
    /// it reads the same under `NO_COLOR` (where the terminal library drops every colour) as on
    /// a monochrome terminal. The base every theme file is applied over, and `--theme plain`.
    pub fn plain() -> Theme {
        let text = Style::new();
        let bold = text.add_modifier(Modifier::BOLD);
        Theme {
            name: "plain".into(),
            text,
            muted: text.add_modifier(Modifier::DIM),
            border: text.add_modifier(Modifier::DIM),
            border_focused: bold,
            title: bold,
            selection: text.add_modifier(Modifier::REVERSED),
            accent: bold,
            error: bold.add_modifier(Modifier::UNDERLINED),
            warning: bold,
            success: text,
            live_badge: text.add_modifier(Modifier::REVERSED | Modifier::BOLD),
            sandbox_badge: text.add_modifier(Modifier::REVERSED),
            json_key: bold,
            json_string: text,
            json_number: text,
            json_literal: text.add_modifier(Modifier::ITALIC),
            json_punctuation: text.add_modifier(Modifier::DIM),
        }
    }

    /// The theme the console draws with: `name` (a file in `user_dir`, else built in) fitted to
    /// the terminal that `env` describes. `NO_COLOR` (set and not empty) means [`Theme::plain`]
    /// whatever was asked for. The warning says what went wrong with the named theme, if anything.
    pub fn for_terminal(
        name: &str,
        user_dir: Option<&Path>,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> (Theme, Option<String>) {
        if env("NO_COLOR").is_some_and(|v| !v.is_empty()) {
            return (Theme::plain(), None);
        }
        let (theme, warning) = file::load(name, user_dir);
        (theme.with_depth(ColorDepth::detect(env)), warning)
    }

    /// Every colour of every role mapped to the nearest one `depth` can show.
    pub fn with_depth(mut self, depth: ColorDepth) -> Theme {
        for style in self.styles_mut() {
            style.fg = style.fg.map(|c| depth.fit(c));
            style.bg = style.bg.map(|c| depth.fit(c));
        }
        self
    }

    fn styles_mut(&mut self) -> [&mut Style; 17] {
        [
            &mut self.text,
            &mut self.muted,
            &mut self.border,
            &mut self.border_focused,
            &mut self.title,
            &mut self.selection,
            &mut self.accent,
            &mut self.error,
            &mut self.warning,
            &mut self.success,
            &mut self.live_badge,
            &mut self.sandbox_badge,
            &mut self.json_key,
            &mut self.json_string,
            &mut self.json_number,
            &mut self.json_literal,
            &mut self.json_punctuation,
        ]
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
