//! Theme files: TOML tables of semantic roles (see `themes/dark.toml`). A user theme in
//! `<config dir>/themes/NAME.toml` sets only the roles it wants; the rest come from dark.
//! A bad file never blocks start: the default is used and a warning is shown.

use std::path::Path;

use ratatui::style::{Color, Modifier, Style};
use serde::Deserialize;

use super::Theme;

/// The themes shipped inside the binary (`plain` is built in code: it has no colours to list).
pub const BUILT_IN: &[(&str, &str)] =
    &[("dark", include_str!("../../../themes/dark.toml")), ("light", include_str!("../../../themes/light.toml"))];

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ThemeFile {
    text: Option<RoleSpec>,
    muted: Option<RoleSpec>,
    border: Option<RoleSpec>,
    border_focused: Option<RoleSpec>,
    title: Option<RoleSpec>,
    selection: Option<RoleSpec>,
    accent: Option<RoleSpec>,
    error: Option<RoleSpec>,
    warning: Option<RoleSpec>,
    success: Option<RoleSpec>,
    live_badge: Option<RoleSpec>,
    sandbox_badge: Option<RoleSpec>,
    json_key: Option<RoleSpec>,
    json_string: Option<RoleSpec>,
    json_number: Option<RoleSpec>,
    json_literal: Option<RoleSpec>,
    json_punctuation: Option<RoleSpec>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RoleSpec {
    fg: Option<String>,
    bg: Option<String>,
    #[serde(default)]
    bold: bool,
    #[serde(default)]
    italic: bool,
    #[serde(default)]
    underline: bool,
    #[serde(default)]
    dim: bool,
}

impl RoleSpec {
    fn style(&self, role: &str) -> Result<Style, String> {
        let colour = |c: &Option<String>| -> Result<Option<Color>, String> {
            c.as_deref()
                .map(|c| {
                    c.parse::<Color>().map_err(|_| format!("{role}: '{c}' is not a colour (use #rrggbb or a name)"))
                })
                .transpose()
        };
        let mut style = Style::new();
        if let Some(fg) = colour(&self.fg)? {
            style = style.fg(fg);
        }
        if let Some(bg) = colour(&self.bg)? {
            style = style.bg(bg);
        }
        for (on, modifier) in [
            (self.bold, Modifier::BOLD),
            (self.italic, Modifier::ITALIC),
            (self.underline, Modifier::UNDERLINED),
            (self.dim, Modifier::DIM),
        ] {
            if on {
                style = style.add_modifier(modifier);
            }
        }
        Ok(style)
    }
}

/// Applies a theme file's roles over `base`.
pub fn parse_over(base: Theme, name: &str, text: &str) -> Result<Theme, String> {
    let file: ThemeFile = toml::from_str(text).map_err(|e| e.message().to_owned())?;
    let mut theme = base;
    theme.name = name.to_owned();
    let roles: [(&str, &Option<RoleSpec>, &mut Style); 17] = [
        ("text", &file.text, &mut theme.text),
        ("muted", &file.muted, &mut theme.muted),
        ("border", &file.border, &mut theme.border),
        ("border_focused", &file.border_focused, &mut theme.border_focused),
        ("title", &file.title, &mut theme.title),
        ("selection", &file.selection, &mut theme.selection),
        ("accent", &file.accent, &mut theme.accent),
        ("error", &file.error, &mut theme.error),
        ("warning", &file.warning, &mut theme.warning),
        ("success", &file.success, &mut theme.success),
        ("live_badge", &file.live_badge, &mut theme.live_badge),
        ("sandbox_badge", &file.sandbox_badge, &mut theme.sandbox_badge),
        ("json_key", &file.json_key, &mut theme.json_key),
        ("json_string", &file.json_string, &mut theme.json_string),
        ("json_number", &file.json_number, &mut theme.json_number),
        ("json_literal", &file.json_literal, &mut theme.json_literal),
        ("json_punctuation", &file.json_punctuation, &mut theme.json_punctuation),
    ];
    for (role, spec, slot) in roles {
        if let Some(spec) = spec {
            *slot = spec.style(role)?;
        }
    }
    Ok(theme)
}

/// A built-in theme by name.
pub fn built_in(name: &str) -> Option<Theme> {
    if name == "plain" {
        return Some(Theme::plain());
    }
    let (_, text) = BUILT_IN.iter().find(|(n, _)| *n == name)?;
    parse_over(Theme::plain(), name, text).ok()
}

/// The theme called `name`: a file in `user_dir` first, then a built-in. On any problem, the
/// default theme and a warning saying what is wrong.
pub fn load(name: &str, user_dir: Option<&Path>) -> (Theme, Option<String>) {
    let user_file = user_dir.map(|d| d.join(format!("{name}.toml"))).filter(|p| p.exists());
    if let Some(path) = user_file {
        let result = std::fs::read_to_string(&path)
            .map_err(|e| e.to_string())
            .and_then(|text| parse_over(Theme::dark(), name, &text));
        return match result {
            Ok(theme) => (theme, None),
            Err(e) => (Theme::dark(), Some(format!("theme {} is invalid ({e}); using the default", path.display()))),
        };
    }
    match built_in(name) {
        Some(theme) => (theme, None),
        None => {
            let names: Vec<&str> = BUILT_IN.iter().map(|(n, _)| *n).chain(["plain"]).collect();
            (
                Theme::dark(),
                Some(format!("no theme named '{name}' (built in: {}); using the default", names.join(", "))),
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shipped_theme_parses_and_sets_every_role() {
        for (name, text) in BUILT_IN {
            let theme = parse_over(Theme::plain(), name, text).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_ne!(theme.selection, Theme::plain().selection, "{name} sets selection");
            assert_ne!(theme.json_key, Theme::plain().json_key, "{name} sets json_key");
        }
        assert_ne!(Theme::dark(), built_in("light").unwrap());
    }

    #[test]
    fn user_theme_overrides_only_what_it_sets_and_bad_ones_fall_back() {
        let dir = std::env::temp_dir().join(format!("opsdeck-theme-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("mine.toml"), "[error]\nfg = \"#ff0000\"\nbold = true\n").unwrap();
        std::fs::write(dir.join("typo.toml"), "[eror]\nfg = \"red\"\n").unwrap();
        std::fs::write(dir.join("colour.toml"), "[text]\nfg = \"blurple\"\n").unwrap();
        let (mine, warning) = load("mine", Some(&dir));
        assert!(warning.is_none());
        assert_eq!(mine.error, Style::new().fg(Color::Rgb(255, 0, 0)).add_modifier(Modifier::BOLD));
        assert_eq!(mine.text, Theme::dark().text);
        let (typo, warning) = load("typo", Some(&dir));
        assert_eq!(typo, Theme::dark());
        assert!(warning.unwrap().contains("unknown field `eror`"));
        let (_, warning) = load("colour", Some(&dir));
        assert!(warning.unwrap().contains("'blurple' is not a colour"));
        let (_, warning) = load("nosuch", Some(&dir));
        assert!(warning.unwrap().contains("built in: dark, light, plain"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
