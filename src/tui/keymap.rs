//! The console's app-level actions and the keys that run them: every action once, with its name
//! in `[keys]`, what it does and its default keys; the user's `[keys]` over the defaults; and the
//! problems found in them, worded for the status line. Keys that only mean something inside a
//! pane (moving in a list, folding a node) stay with their component.

use std::collections::{BTreeMap, HashMap};
use std::fmt;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use crate::config::KeyList;
use crate::inert::inert;

/// The pane that receives keys: what a key's scope is decided by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Focus {
    Resources,
    Browser,
    Inspector,
}

/// Something the user asks of the console by key, or from the palette.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Action {
    Quit,
    Help,
    /// Go to tab N (0-based: `Tab(0)` is `1`, Ably).
    Tab(usize),
    NextTab,
    PrevTab,
    Operations,
    Palette,
    SandboxView,
    TableView,
    Refresh,
    AutoRefresh,
    Cancel,
    NextPage,
    PrevPage,
    ClearFilters,
    Zoom,
    ReadOnly,
    History,
    CopyRequest,
    Chart,
    NextSeries,
    PrevSeries,
    /// Follow the list in view: poll its first page, new rows on top.
    Tail,
    /// Mailgun's send form, from the domain in view.
    ComposeEmail,
    /// Mailgun's MIME send form (a ready-made message from a file).
    ComposeMime,
    /// Deepgram's live transcription form: a file streamed at its real speed.
    TranscribeLive,
}

/// Where an action's keys work: everywhere, only while the browser has the focus (the
/// inspector uses `n` and `c` for its own search and folding), or everywhere but the inspector
/// (whose `H` is its headers view).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    Global,
    Browser,
    OutsideInspector,
}

/// An action as the user meets it: its `[keys]` name, what it does, its default keys.
pub struct ActionInfo {
    pub action: Action,
    pub name: &'static str,
    pub description: &'static str,
    pub defaults: &'static [&'static str],
    pub scope: Scope,
    /// Offered in the command palette (`:`) beside the operations.
    pub in_palette: bool,
}

const fn global(
    action: Action,
    name: &'static str,
    description: &'static str,
    defaults: &'static [&'static str],
) -> ActionInfo {
    ActionInfo { action, name, description, defaults, scope: Scope::Global, in_palette: false }
}

impl ActionInfo {
    const fn in_browser(self) -> ActionInfo {
        ActionInfo { scope: Scope::Browser, ..self }
    }

    const fn outside_inspector(self) -> ActionInfo {
        ActionInfo { scope: Scope::OutsideInspector, ..self }
    }

    const fn in_palette(self) -> ActionInfo {
        ActionInfo { in_palette: true, ..self }
    }
}

/// Every action, in the order help shows them. Adding one is a line here, a variant of
/// [`Action`] and its arm in `App::run_action`; it then has a `[keys]` name, a help line and,
/// with `.in_palette()`, a palette entry.
pub const ACTIONS: &[ActionInfo] = &[
    global(Action::Tab(0), "tab_1", "go to tab 1 (Ably)", &["1"]),
    global(Action::Tab(1), "tab_2", "go to tab 2 (Deepgram)", &["2"]),
    global(Action::Tab(2), "tab_3", "go to tab 3 (AvaTax)", &["3"]),
    global(Action::Tab(3), "tab_4", "go to tab 4 (TaxJar)", &["4"]),
    global(Action::Tab(4), "tab_5", "go to tab 5 (Coinbase)", &["5"]),
    global(Action::Tab(5), "tab_6", "go to tab 6 (Mailgun)", &["6"]),
    global(Action::Tab(6), "tab_7", "go to tab 7 (EasyPost)", &["7"]),
    global(Action::NextTab, "next_tab", "next service tab", &["tab"]),
    global(Action::PrevTab, "prev_tab", "previous service tab", &["shift-tab"]),
    global(Action::Operations, "operations", "operations, the selected resource's first", &["o"]),
    global(Action::Palette, "palette", "command palette: any operation, profiles, themes, actions", &[":"]),
    global(Action::Refresh, "refresh", "refresh the view", &["r"]).in_palette(),
    global(Action::AutoRefresh, "auto_refresh", "auto-refresh on/off", &["a"]).in_palette(),
    global(
        Action::Tail,
        "tail",
        "tail the list: new rows on top every 2 s, an Ably channel's as they are published; again stops",
        &["T"],
    )
    .in_palette(),
    global(Action::NextPage, "next_page", "next page from the API", &["n"]).in_browser(),
    global(Action::PrevPage, "prev_page", "previous page", &["p"]).in_browser(),
    global(Action::ClearFilters, "clear_filters", "list again without the filters in the title", &["c"]).in_browser(),
    global(Action::Zoom, "zoom", "maximise the focused pane, or restore it", &["z"]).in_palette(),
    global(Action::TableView, "table_view", "last table view (transaction, rates, tax)", &["b"]).in_palette(),
    global(Action::SandboxView, "sandbox_view", "sandbox view: requests and faults", &["S"]).in_palette(),
    global(Action::History, "history", "history of calls: inspect, edit, send again", &["H"])
        .outside_inspector()
        .in_palette(),
    global(Action::CopyRequest, "copy_request", "copy the last request as curl / HTTPie", &["Y"]).in_palette(),
    global(Action::Chart, "chart", "chart of a time series: hide / show", &["C"]).in_palette(),
    global(Action::NextSeries, "next_series", "chart: next series", &["]"]),
    global(Action::PrevSeries, "prev_series", "chart: previous series", &["["]),
    global(Action::ComposeEmail, "compose_email", "Mailgun: compose an email (send form, domain filled in)", &[])
        .in_palette(),
    global(Action::ComposeMime, "compose_mime", "Mailgun: send a ready-made MIME message from a file", &[])
        .in_palette(),
    global(
        Action::TranscribeLive,
        "transcribe_live",
        "Deepgram: stream an audio file at its real speed and watch its words arrive",
        &[],
    )
    .in_palette(),
    global(Action::ReadOnly, "read_only", "read-only on/off: refuse operations that change state", &[]).in_palette(),
    global(Action::Cancel, "cancel", "cancel every call in flight and every response being indexed", &["ctrl-x"])
        .in_palette(),
    global(Action::Help, "help", "this help", &["?"]).in_palette(),
    global(Action::Quit, "quit", "quit (Ctrl-c always quits)", &["q"]),
];

impl Action {
    pub fn info(self) -> &'static ActionInfo {
        // Every variant has its line in ACTIONS (a unit test checks); Quit's is the fallback.
        ACTIONS.iter().find(|info| info.action == self).unwrap_or(&ACTIONS[ACTIONS.len() - 1])
    }

    pub fn name(self) -> &'static str {
        self.info().name
    }
}

/// One key as `[keys]` writes it and as the terminal reports it, with Shift folded into the
/// character (`Q`, not Shift-q) so both compare equal.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Key {
    code: KeyCode,
    modifiers: KeyModifiers,
}

impl Key {
    fn new(code: KeyCode, modifiers: KeyModifiers) -> Key {
        let modifiers = match code {
            KeyCode::Char(_) | KeyCode::BackTab => modifiers - KeyModifiers::SHIFT,
            _ => modifiers,
        };
        Key { code, modifiers: modifiers & (KeyModifiers::CONTROL | KeyModifiers::ALT | KeyModifiers::SHIFT) }
    }

    pub fn from_event(event: &KeyEvent) -> Key {
        Key::new(event.code, event.modifiers)
    }

    /// `q`, `Q`, `?`, `ctrl-x`, `alt-enter`, `tab`, `shift-tab`, `enter`, `esc`, `up`, `f5`,
    /// `space`, `pagedown`… Names and modifiers in any case; `+` works as well as `-`.
    pub fn parse(text: &str) -> Result<Key, String> {
        let mut rest = text.trim();
        let mut modifiers = KeyModifiers::NONE;
        loop {
            let lower = rest.to_ascii_lowercase();
            let prefix = [
                ("ctrl", KeyModifiers::CONTROL),
                ("control", KeyModifiers::CONTROL),
                ("c", KeyModifiers::CONTROL),
                ("alt", KeyModifiers::ALT),
                ("meta", KeyModifiers::ALT),
                ("m", KeyModifiers::ALT),
                ("shift", KeyModifiers::SHIFT),
                ("s", KeyModifiers::SHIFT),
            ]
            .into_iter()
            .find_map(|(name, modifier)| {
                let after = lower.strip_prefix(name)?;
                (after.len() > 1 && (after.starts_with('-') || after.starts_with('+')))
                    .then_some((name.len() + 1, modifier))
            });
            match prefix {
                Some((len, modifier)) => {
                    modifiers |= modifier;
                    rest = &rest[len..];
                }
                None => break,
            }
        }
        let mut chars = rest.chars();
        let code = match (chars.next(), chars.next()) {
            (Some(c), None) if modifiers.contains(KeyModifiers::SHIFT) && c.is_ascii_alphabetic() => {
                modifiers -= KeyModifiers::SHIFT;
                KeyCode::Char(c.to_ascii_uppercase())
            }
            (Some(c), None) if !c.is_control() => KeyCode::Char(c),
            _ => named_key(&rest.to_ascii_lowercase())
                .ok_or_else(|| format!("'{}' is not a key (try q, Q, ctrl-x, tab, f5, enter)", inert(text)))?,
        };
        let code = match code {
            KeyCode::Tab if modifiers.contains(KeyModifiers::SHIFT) => {
                modifiers -= KeyModifiers::SHIFT;
                KeyCode::BackTab
            }
            other => other,
        };
        Ok(Key::new(code, modifiers))
    }
}

fn named_key(name: &str) -> Option<KeyCode> {
    Some(match name {
        "enter" | "return" | "cr" => KeyCode::Enter,
        "esc" | "escape" => KeyCode::Esc,
        "tab" => KeyCode::Tab,
        "backtab" => KeyCode::BackTab,
        "space" => KeyCode::Char(' '),
        "backspace" | "bs" => KeyCode::Backspace,
        "delete" | "del" => KeyCode::Delete,
        "insert" | "ins" => KeyCode::Insert,
        "home" => KeyCode::Home,
        "end" => KeyCode::End,
        "pageup" | "pgup" => KeyCode::PageUp,
        "pagedown" | "pgdn" | "pgdown" => KeyCode::PageDown,
        "up" => KeyCode::Up,
        "down" => KeyCode::Down,
        "left" => KeyCode::Left,
        "right" => KeyCode::Right,
        "minus" => KeyCode::Char('-'),
        "plus" => KeyCode::Char('+'),
        f => match f.strip_prefix('f').and_then(|n| n.parse::<u8>().ok()) {
            Some(n @ 1..=24) => KeyCode::F(n),
            _ => return None,
        },
    })
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.modifiers.contains(KeyModifiers::CONTROL) {
            f.write_str("Ctrl-")?;
        }
        if self.modifiers.contains(KeyModifiers::ALT) {
            f.write_str("Alt-")?;
        }
        if self.modifiers.contains(KeyModifiers::SHIFT) {
            f.write_str("Shift-")?;
        }
        match self.code {
            KeyCode::Char(' ') => f.write_str("Space"),
            KeyCode::Char(c) => write!(f, "{c}"),
            KeyCode::F(n) => write!(f, "F{n}"),
            KeyCode::BackTab => f.write_str("Shift-Tab"),
            KeyCode::Enter => f.write_str("Enter"),
            KeyCode::Esc => f.write_str("Esc"),
            KeyCode::Tab => f.write_str("Tab"),
            KeyCode::Backspace => f.write_str("Backspace"),
            KeyCode::Delete => f.write_str("Delete"),
            KeyCode::Insert => f.write_str("Insert"),
            KeyCode::Home => f.write_str("Home"),
            KeyCode::End => f.write_str("End"),
            KeyCode::PageUp => f.write_str("PgUp"),
            KeyCode::PageDown => f.write_str("PgDn"),
            KeyCode::Up => f.write_str("↑"),
            KeyCode::Down => f.write_str("↓"),
            KeyCode::Left => f.write_str("←"),
            KeyCode::Right => f.write_str("→"),
            other => write!(f, "{other:?}"),
        }
    }
}

/// The keys in effect: each action's keys, and the action of each key.
#[derive(Clone, Debug)]
pub struct Keymap {
    keys: BTreeMap<Action, Vec<Key>>,
    actions: HashMap<Key, Action>,
}

impl Default for Keymap {
    fn default() -> Keymap {
        Keymap::new(&BTreeMap::new()).0
    }
}

impl Keymap {
    /// The defaults with `[keys]` over them: a bound action loses its default keys. Returns
    /// what was wrong (an unknown action, a key that is no key, two actions on one key), one
    /// message each; nothing wrong stops the console.
    pub fn new(config: &BTreeMap<String, KeyList>) -> (Keymap, Vec<String>) {
        let mut problems = Vec::new();
        let mut user: BTreeMap<Action, Vec<Key>> = BTreeMap::new();
        for (name, list) in config {
            let Some(info) = ACTIONS.iter().find(|info| info.name == name.as_str()) else {
                problems.push(format!("[keys]: no action named '{}' (see ? for the names)", inert(name)));
                continue;
            };
            let mut keys = Vec::new();
            for text in list.keys() {
                match Key::parse(text) {
                    Ok(key) if key == Key::new(KeyCode::Char('c'), KeyModifiers::CONTROL) => {
                        problems.push(format!("[keys] {name}: Ctrl-c always quits, so it cannot be rebound"));
                    }
                    Ok(key) => keys.push(key),
                    Err(e) => problems.push(format!("[keys] {name}: {e}")),
                }
            }
            user.insert(info.action, keys);
        }
        let mut map = Keymap { keys: BTreeMap::new(), actions: HashMap::new() };
        // The user's keys first, so a default never takes a key the user gave away.
        for info in ACTIONS {
            let Some(keys) = user.get(&info.action) else { continue };
            for key in keys {
                match map.actions.get(key) {
                    Some(other) => problems.push(format!(
                        "[keys]: {key} is bound to both {} and {}; {} keeps it",
                        other.name(),
                        info.name,
                        other.name()
                    )),
                    None => map.bind(info.action, *key),
                }
            }
            map.keys.entry(info.action).or_default();
        }
        for info in ACTIONS.iter().filter(|info| !user.contains_key(&info.action)) {
            for text in info.defaults {
                let Ok(key) = Key::parse(text) else { continue };
                match map.actions.get(&key) {
                    Some(other) => problems.push(format!(
                        "[keys]: {} takes {key} from {}{}",
                        other.name(),
                        info.name,
                        if info.defaults.len() == 1 { ", which now has no key" } else { "" }
                    )),
                    None => map.bind(info.action, key),
                }
            }
            map.keys.entry(info.action).or_default();
        }
        (map, problems)
    }

    fn bind(&mut self, action: Action, key: Key) {
        self.actions.insert(key, action);
        self.keys.entry(action).or_default().push(key);
    }

    /// The action `event` runs where `focus` is, if any: global ones anywhere, the browser's
    /// only there, the rest outside the inspector.
    pub fn action_for(&self, event: &KeyEvent, focus: Focus) -> Option<Action> {
        let action = *self.actions.get(&Key::from_event(event))?;
        let acts = match action.info().scope {
            Scope::Global => true,
            Scope::Browser => focus == Focus::Browser,
            Scope::OutsideInspector => focus != Focus::Inspector,
        };
        acts.then_some(action)
    }

    /// Whether `event` is one of `action`'s keys.
    pub fn is(&self, action: Action, event: &KeyEvent) -> bool {
        self.keys(action).contains(&Key::from_event(event))
    }

    pub fn keys(&self, action: Action) -> &[Key] {
        self.keys.get(&action).map_or(&[], Vec::as_slice)
    }

    /// The action's keys for help (`Tab n`), or `—` when it has none.
    pub fn label(&self, action: Action) -> String {
        let keys: Vec<String> = self.keys(action).iter().map(Key::to_string).collect();
        if keys.is_empty() {
            "—".to_owned()
        } else {
            keys.join(" ")
        }
    }

    /// The first key of the action, for hints (`? help`), if it has one.
    pub fn hint(&self, action: Action) -> Option<String> {
        self.keys(action).first().map(Key::to_string)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The README's key table is the keys in effect: every action has its row, named by its
    /// `[keys]` name, with its default keys.
    #[test]
    fn the_readme_key_table_matches_the_default_keys() {
        let readme = include_str!("../../README.md");
        let start = readme.find("## Keys").expect("a Keys section");
        let table: Vec<&str> = readme[start..]
            .lines()
            .skip_while(|l| !l.starts_with("| key"))
            .take_while(|l| l.starts_with('|'))
            .collect();
        assert!(table.len() > 10, "{table:?}");
        let keymap = Keymap::default();
        for info in ACTIONS {
            // The seven tab actions share one row: `tab_1` … `tab_7`.
            let named = match info.action {
                Action::Tab(_) => "`tab_1`".to_owned(),
                _ => format!("`{}`", info.name),
            };
            let row = table
                .iter()
                .find(|row| row.contains(&named))
                .unwrap_or_else(|| panic!("no README row for {}", info.name));
            let key_cell = row.split('|').nth(1).unwrap_or_default();
            match (info.action, keymap.hint(info.action)) {
                (Action::Tab(_), _) => assert!(key_cell.contains("`1`–`7`"), "{row}"),
                (_, None) => assert!(key_cell.contains('—'), "{}: no default key, yet: {row}", info.name),
                (action, Some(_)) => {
                    for key in keymap.keys(action) {
                        assert!(key_cell.contains(&format!("`{key}`")), "{}: `{key}` missing in {row}", info.name);
                    }
                }
            }
        }
    }

    fn event(code: KeyCode, modifiers: KeyModifiers) -> KeyEvent {
        KeyEvent::new(code, modifiers)
    }

    fn config(pairs: &[(&str, &[&str])]) -> BTreeMap<String, KeyList> {
        pairs
            .iter()
            .map(|(name, keys)| ((*name).to_owned(), KeyList::Many(keys.iter().map(|k| (*k).to_owned()).collect())))
            .collect()
    }

    #[test]
    fn key_strings_parse_like_the_terminal_reports_them() {
        let cases = [
            ("q", event(KeyCode::Char('q'), KeyModifiers::NONE)),
            ("Q", event(KeyCode::Char('Q'), KeyModifiers::SHIFT)),
            ("shift-q", event(KeyCode::Char('Q'), KeyModifiers::SHIFT)),
            ("ctrl-x", event(KeyCode::Char('x'), KeyModifiers::CONTROL)),
            ("C-x", event(KeyCode::Char('x'), KeyModifiers::CONTROL)),
            ("Ctrl+X", event(KeyCode::Char('X'), KeyModifiers::CONTROL)),
            ("tab", event(KeyCode::Tab, KeyModifiers::NONE)),
            ("shift-tab", event(KeyCode::BackTab, KeyModifiers::SHIFT)),
            ("backtab", event(KeyCode::BackTab, KeyModifiers::SHIFT)),
            ("Enter", event(KeyCode::Enter, KeyModifiers::NONE)),
            ("esc", event(KeyCode::Esc, KeyModifiers::NONE)),
            ("up", event(KeyCode::Up, KeyModifiers::NONE)),
            ("f5", event(KeyCode::F(5), KeyModifiers::NONE)),
            ("?", event(KeyCode::Char('?'), KeyModifiers::SHIFT)),
            (":", event(KeyCode::Char(':'), KeyModifiers::NONE)),
            ("-", event(KeyCode::Char('-'), KeyModifiers::NONE)),
            ("space", event(KeyCode::Char(' '), KeyModifiers::NONE)),
            ("alt-enter", event(KeyCode::Enter, KeyModifiers::ALT)),
        ];
        for (text, reported) in cases {
            assert_eq!(Key::parse(text), Ok(Key::from_event(&reported)), "{text}");
        }
        for bad in ["", "ctrl-", "foo", "f99", "ctrl-foo"] {
            assert!(Key::parse(bad).is_err(), "{bad:?} is no key");
        }
        assert_eq!(Key::parse("ctrl-x").map(|k| k.to_string()), Ok("Ctrl-x".to_owned()));
        assert_eq!(Key::parse("shift-tab").map(|k| k.to_string()), Ok("Shift-Tab".to_owned()));
    }

    #[test]
    fn every_action_has_one_line_and_its_defaults_parse() {
        let mut names: Vec<&str> = ACTIONS.iter().map(|a| a.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), ACTIONS.len(), "names are unique");
        for info in ACTIONS {
            assert_eq!(info.action.info().name, info.name);
            for key in info.defaults {
                assert!(Key::parse(key).is_ok(), "{}: {key}", info.name);
            }
        }
        let (_, problems) = Keymap::new(&BTreeMap::new());
        assert!(problems.is_empty(), "defaults do not conflict: {problems:?}");
    }

    #[test]
    fn user_keys_replace_the_defaults_and_problems_are_reported() {
        let (map, problems) = Keymap::new(&config(&[("quit", &["Q", "f10"]), ("zoom", &["ctrl-z"])]));
        assert!(problems.is_empty(), "{problems:?}");
        let q = event(KeyCode::Char('q'), KeyModifiers::NONE);
        assert_eq!(map.action_for(&q, Focus::Browser), None, "q no longer quits");
        assert_eq!(
            map.action_for(&event(KeyCode::Char('Q'), KeyModifiers::SHIFT), Focus::Inspector),
            Some(Action::Quit)
        );
        assert_eq!(map.label(Action::Quit), "Q F10");
        assert_eq!(map.label(Action::Zoom), "Ctrl-z");

        let (map, problems) = Keymap::new(&config(&[
            ("qiut", &["x"]),
            ("help", &["ctrl-"]),
            ("refresh", &["x"]),
            ("auto_refresh", &["x"]),
            ("zoom", &["o"]),
            ("cancel", &["ctrl-c"]),
        ]));
        let all = problems.join("\n");
        assert!(all.contains("no action named 'qiut'"), "{all}");
        assert!(all.contains("[keys] help: 'ctrl-' is not a key"), "{all}");
        assert!(all.contains("x is bound to both refresh and auto_refresh; refresh keeps it"), "{all}");
        assert!(all.contains("zoom takes o from operations, which now has no key"), "{all}");
        assert!(all.contains("Ctrl-c always quits"), "{all}");
        assert_eq!(
            map.action_for(&event(KeyCode::Char('x'), KeyModifiers::NONE), Focus::Inspector),
            Some(Action::Refresh)
        );
        assert_eq!(map.label(Action::Operations), "—");
        assert_eq!(map.label(Action::Help), "—", "a bound action with only bad keys has none");
    }

    #[test]
    fn browser_actions_only_act_in_the_browser() {
        let map = Keymap::default();
        let n = event(KeyCode::Char('n'), KeyModifiers::NONE);
        assert_eq!(map.action_for(&n, Focus::Browser), Some(Action::NextPage));
        assert_eq!(map.action_for(&n, Focus::Inspector), None, "the inspector's n steps through matches");
    }
}
