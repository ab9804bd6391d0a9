//! A structured view over the tab: a record's key facts and its tables (a transaction's lines
//! and the tax of the selected line by jurisdiction, a rate breakdown). The JSON stays in the
//! inspector; this is what a person reads first.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};
use ratatui::Frame;
use serde_json::Value;
use unicode_width::UnicodeWidthStr;

use crate::inert::inert;
use crate::table::truncate_to_width;
use crate::tui::components::fit_line;
use crate::tui::theme::Theme;

/// How a value reads at a glance; the theme decides the colour.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tone {
    /// Final and in force (Committed).
    Good,
    /// Open, may still change (Saved, Posted).
    Pending,
    /// Gone (Cancelled).
    Bad,
    /// Replaced by a newer version (Adjusted).
    Changed,
    /// Not kept (Temporary).
    Quiet,
    /// A total row.
    Total,
    /// Something happened, neither good nor bad (an email opened, a link clicked).
    Info,
}

impl Tone {
    pub fn style(self, theme: &Theme) -> Style {
        match self {
            Tone::Good => theme.success,
            Tone::Pending => theme.accent,
            Tone::Bad => theme.error,
            Tone::Changed => theme.warning,
            Tone::Quiet => theme.muted,
            Tone::Total => theme.text.add_modifier(Modifier::BOLD),
            Tone::Info => theme.accent.add_modifier(Modifier::ITALIC),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Align {
    Left,
    Right,
}

/// One table of the view.
#[derive(Clone, Debug, Default)]
pub struct Table {
    pub title: String,
    pub columns: Vec<(String, Align)>,
    pub rows: Vec<Vec<String>>,
    /// A tone per row (may be shorter than `rows`).
    pub tones: Vec<Option<Tone>>,
}

/// The view's state.
#[derive(Clone, Debug, Default)]
pub struct Detail {
    pub title: String,
    /// Label, value and tone of the key facts shown at the top.
    pub facts: Vec<(String, String, Option<Tone>)>,
    pub tables: Vec<Table>,
    /// The table whose rows can be selected (a transaction's lines).
    pub selectable: Option<usize>,
    /// A table per row of the selectable one, shown right after it (the line's jurisdictions).
    pub per_row: Vec<Table>,
    pub selected: usize,
    pub scroll: u16,
    /// Said under the facts when something expected is missing.
    pub note: Option<String>,
    /// The keys of actions on the record shown (an AvaTax transaction's commit, void, adjust,
    /// refund), with their labels: each opens a form its service fills from [`Detail::record`].
    pub record_keys: &'static [(char, &'static str)],
    /// The keys named in the bottom border, when the owner of the view has its own.
    pub keys: Option<&'static str>,
    /// What the view is of (`domain news.example.com`), when its title changes with what it
    /// shows (the domain's state): a newer answer about the same thing replaces the view open.
    pub subject: Option<String>,
    /// Text sections after the tables, each a title and its text (a message's body).
    pub texts: Vec<(String, String)>,
    /// The view's own keys (verify a domain, chart the stats), named in its bottom border.
    pub commands: Vec<DetailKey>,
    /// Values each row of the selectable table adds to a command run while it is selected (the
    /// rate a row of rates stands for), so one key acts on whichever row is chosen.
    pub row_values: Vec<Vec<(String, String)>>,
    /// The JSON the view was made from, for what acts on it beyond its keys (a confirmation
    /// restating the price of the rate being bought).
    pub record: Option<Value>,
    /// The operation and values that fetch what this view shows again: asked every few seconds
    /// while the view is open, for things that move by themselves (a tracker, a batch being
    /// bought). `None` once nothing will change without the user.
    pub watch: Option<(&'static str, Vec<(String, String)>)>,
    /// More operations asked again with [`Detail::watch`], each on its own (a market's book,
    /// candles, trades and ticker): every answer fills its part of the view.
    pub watch_also: Vec<(&'static str, Vec<(String, String)>)>,
    /// A market drawn under the facts (a book ladder, candles, the tape), filled part by part.
    pub market: Option<Box<crate::tui::components::market::Market>>,
    /// A question asked by a key before its command runs (`convert the label to`), with its
    /// answers; the next key picks one, Esc goes back to the view.
    pub choosing: Option<(&'static str, Vec<DetailKey>)>,
}

/// A key of a view and what it runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DetailKey {
    pub key: char,
    /// Said in the bottom border after the key (`verify`).
    pub label: &'static str,
    pub command: DetailCommand,
}

/// What a view's key asks the app for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DetailCommand {
    /// Send this operation of the tab's service with these values (destructive ones confirm).
    Send { op: &'static str, values: Vec<(String, String)> },
    /// Open this operation's form with these values.
    Form { op: &'static str, values: Vec<(String, String)> },
    /// Show the chart of the response (its time series), closing the view.
    Chart,
    /// Close the view and send this operation: its answer is something else, with a view of
    /// its own (a shipment's tracker, the new address a verification makes).
    Open { op: &'static str, values: Vec<(String, String)> },
    /// Download this file (no credentials go with it) and save it under a name the user checks
    /// first, starting from `file_name`.
    Save { url: String, file_name: String },
    /// Send this operation, then save the file its answer links to at `pointer` (a JSON
    /// pointer, `/postage_label/label_pdf_url`), as [`DetailCommand::Save`] does.
    SendThenSave { op: &'static str, values: Vec<(String, String)>, pointer: String, file_name: String },
    /// Ask which of `choices` to run (a label's format), each under its own key.
    Choose { prompt: &'static str, choices: Vec<DetailKey> },
    /// Copy `text` to the clipboard (a secret shown once), saying it copied `what`; the text is
    /// never shown anywhere else when no clipboard takes it.
    Copy { text: String, what: String },
}

impl DetailCommand {
    /// The command with `extra` values added to the operation it sends or opens (a selected
    /// row's rate); commands that send nothing are left as they are.
    fn with_values(mut self, extra: &[(String, String)]) -> DetailCommand {
        match &mut self {
            DetailCommand::Send { values, .. }
            | DetailCommand::Form { values, .. }
            | DetailCommand::Open { values, .. }
            | DetailCommand::SendThenSave { values, .. } => {
                for (name, value) in extra {
                    values.retain(|(n, _)| n != name);
                    values.push((name.clone(), value.clone()));
                }
            }
            DetailCommand::Chart
            | DetailCommand::Save { .. }
            | DetailCommand::Choose { .. }
            | DetailCommand::Copy { .. } => {}
        }
        self
    }
}

/// What a key did in the view.
#[derive(Debug, PartialEq, Eq)]
pub enum DetailAction {
    None,
    Close,
    /// A record action key (see [`Detail::record_keys`]) on the record shown.
    RecordKey(char),
    /// One of the view's own keys.
    Run(DetailCommand),
}

/// A fact with no tone: its label and value.
pub fn fact(label: &str, value: String) -> (String, String, Option<Tone>) {
    (label.to_owned(), value, None)
}

/// Table columns from names and alignments.
pub fn columns(spec: &[(&str, Align)]) -> Vec<(String, Align)> {
    spec.iter().map(|(name, align)| ((*name).to_owned(), *align)).collect()
}

/// The items of a JSON array; none when the value is absent or not an array.
pub fn array(value: Option<&Value>) -> &[Value] {
    value.and_then(Value::as_array).map_or(&[], Vec::as_slice)
}

/// A JSON value as a cell or fact shows it: a string without quotes, nothing for null or absent.
pub fn text(value: Option<&Value>) -> String {
    match value {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    }
}

/// An amount in money format, or the value as text when it is no number.
pub fn money_cell(value: Option<&Value>) -> String {
    value.and_then(crate::format::money).unwrap_or_else(|| text(value))
}

/// A rate as a percentage, or the value as text when it is no number.
pub fn percent_cell(value: Option<&Value>) -> String {
    value.and_then(crate::format::percent).unwrap_or_else(|| text(value))
}

/// Widest a column gets; the inspector has the whole value.
const MAX_COLUMN: usize = 40;
/// Widest the last column gets: nothing follows it, so it may take what the pane has.
const MAX_LAST_COLUMN: usize = 512;
/// Widest a fact at the top gets.
const MAX_FACT: usize = 60;

impl Detail {
    pub fn handle_key(&mut self, key: KeyEvent) -> DetailAction {
        if let Some((_, choices)) = self.choosing.take() {
            // Any key answers the question: one of its keys runs that choice, another goes back.
            return match key.code {
                KeyCode::Char(c) if key.modifiers.is_empty() => {
                    choices.iter().find(|k| k.key == c).map_or(DetailAction::None, |k| self.run(&k.command))
                }
                _ => DetailAction::None,
            };
        }
        let rows = self.selectable.and_then(|i| self.tables.get(i)).map_or(0, |t| t.rows.len());
        match key.code {
            KeyCode::Esc | KeyCode::Char('q') => return DetailAction::Close,
            KeyCode::Down | KeyCode::Char('j') => self.selected = (self.selected + 1).min(rows.saturating_sub(1)),
            KeyCode::Up | KeyCode::Char('k') => self.selected = self.selected.saturating_sub(1),
            KeyCode::PageDown => self.scroll = self.scroll.saturating_add(10),
            KeyCode::PageUp => self.scroll = self.scroll.saturating_sub(10),
            KeyCode::Char('d') if key.modifiers.contains(KeyModifiers::CONTROL) => {
                self.scroll = self.scroll.saturating_add(5);
            }
            KeyCode::Char('u') if key.modifiers.contains(KeyModifiers::CONTROL) => {
                self.scroll = self.scroll.saturating_sub(5);
            }
            KeyCode::Char(c) if key.modifiers.is_empty() && self.record_keys.iter().any(|(k, _)| *k == c) => {
                return DetailAction::RecordKey(c);
            }
            KeyCode::Char(c) if key.modifiers.is_empty() => {
                if let Some(found) = self.commands.iter().find(|k| k.key == c) {
                    let command = found.command.clone();
                    return self.run(&command);
                }
            }
            _ => {}
        }
        DetailAction::None
    }

    /// A command of the view, run with the selected row's values; a question is asked first.
    fn run(&mut self, command: &DetailCommand) -> DetailAction {
        match command {
            DetailCommand::Choose { prompt, choices } => {
                self.choosing = Some((prompt, choices.clone()));
                DetailAction::None
            }
            other => {
                let extra = self.row_values.get(self.selected).map_or(&[][..], Vec::as_slice);
                DetailAction::Run(other.clone().with_values(extra))
            }
        }
    }

    /// What the view asks again for, each time it does: [`Detail::watch`], the others, and a
    /// market's board rows.
    pub fn asks(&self) -> Vec<(&'static str, Vec<(String, String)>)> {
        let mut asks: Vec<_> = self.watch.iter().chain(&self.watch_also).cloned().collect();
        if let Some(market) = &self.market {
            asks.extend(market.board_asks());
        }
        asks
    }

    /// Takes `newer` (a fresher answer about the same thing) in place, keeping where the user
    /// was: the selected row, the scroll and a question being answered.
    pub fn refresh_from(&mut self, newer: Detail) {
        // A market view takes each answer as one part of its picture; the rest stays.
        if let (Some(mine), Some(theirs)) = (self.market.as_mut(), newer.market.as_ref()) {
            mine.merge((**theirs).clone());
            return;
        }
        let (selected, scroll, choosing) = (self.selected, self.scroll, self.choosing.take());
        let rows = newer.selectable.and_then(|i| newer.tables.get(i)).map_or(0, |t| t.rows.len());
        *self = Detail { selected: selected.min(rows.saturating_sub(1)), scroll, choosing, ..newer };
    }

    /// Whether `other` is a newer answer about what this view shows, so it may replace it.
    pub fn same_subject(&self, other: &Detail) -> bool {
        match (&self.subject, &other.subject) {
            (Some(mine), Some(theirs)) => mine == theirs,
            _ => self.title == other.title,
        }
    }

    /// The keys of this view, for `?` and its footer.
    pub fn help() -> &'static [(&'static str, &'static str)] {
        &[
            ("j k ↑ ↓", "select a line: its tax by jurisdiction"),
            ("PgUp PgDn ^u ^d", "scroll"),
            ("c v a f", "commit / void / adjust / refund it"),
            ("v", "Mailgun domain: verify its DNS records again"),
            ("c", "Mailgun stats: chart them"),
            ("j k  b", "EasyPost rates: choose one, buy it (asks first, restating its price)"),
            ("s c t", "EasyPost bought shipment: save its label, convert it, its tracker"),
            ("b l f", "EasyPost batch: buy, label (asks the format), scan form"),
            ("s d", "EasyPost batch: save its label / scan form file"),
            ("v", "EasyPost address: verify it (a new, normalised address)"),
            ("●", "live: asked again every 2 s while open (trackers, batches, markets)"),
            ("b s", "Coinbase market: an order form to buy / sell this product"),
            ("b", "reopen the last table view"),
            ("Esc q", "close (the JSON is in the inspector)"),
        ]
    }

    /// Every line of the view, before scrolling.
    fn lines(&self, theme: &Theme, width: usize) -> Vec<Line<'static>> {
        let mut out = Vec::new();
        // Facts flow left to right, as many per line as fit.
        let mut line: Vec<Span<'static>> = Vec::new();
        let mut used = 0;
        for (label, value, tone) in &self.facts {
            let value = truncate_to_width(&inert(value), MAX_FACT);
            let cost = label.width() + value.width() + 4;
            if used > 0 && used + cost > width {
                out.push(Line::from(std::mem::take(&mut line)));
                used = 0;
            }
            line.push(Span::styled(format!("{label} "), theme.muted));
            line.push(Span::styled(value, tone.map_or(theme.text, |t| t.style(theme))));
            line.push(Span::raw("   "));
            used += cost;
        }
        if !line.is_empty() {
            out.push(Line::from(line));
        }
        if let Some(note) = &self.note {
            for part in note.lines() {
                for piece in wrap(&inert(part), width.max(1)) {
                    out.push(Line::from(Span::styled(piece, theme.warning)));
                }
            }
        }
        // Sections of text (a message's body) come before the tables when there are few of
        // them, so what a person reads first is at the top.
        let texts_first = self.tables.iter().all(|t| t.rows.len() <= 3);
        if texts_first {
            self.text_lines(theme, width, &mut out);
        }
        for (index, table) in self.tables.iter().enumerate() {
            out.push(Line::default());
            let selected = (self.selectable == Some(index)).then_some(self.selected);
            table_lines(table, theme, selected, &mut out);
            if self.selectable == Some(index) {
                if let Some(sub) = self.per_row.get(self.selected) {
                    out.push(Line::default());
                    if sub.rows.is_empty() {
                        out.push(Line::from(Span::styled(format!("{} ", inert(&sub.title)), theme.title)));
                        out.push(Line::from(Span::styled("  no jurisdiction details", theme.muted)));
                    } else {
                        table_lines(sub, theme, None, &mut out);
                    }
                }
            }
        }
        if !texts_first {
            self.text_lines(theme, width, &mut out);
        }
        out
    }

    /// The text sections, each under its title, wrapped to the width, every line inert.
    fn text_lines(&self, theme: &Theme, width: usize, out: &mut Vec<Line<'static>>) {
        for (title, text) in &self.texts {
            out.push(Line::default());
            out.push(Line::from(Span::styled(inert(title).into_owned(), theme.title)));
            for part in text.replace("\r\n", "\n").lines() {
                let pieces = wrap(&inert(&part.replace('\t', "    ")), width.saturating_sub(2).max(1));
                if pieces.is_empty() {
                    out.push(Line::default());
                }
                for piece in pieces {
                    out.push(Line::from(Span::styled(format!("  {piece}"), theme.text)));
                }
            }
        }
    }

    /// The bottom border's keys: the owner's, a transaction's, or the view's own commands.
    fn footer(&self) -> String {
        if let Some((prompt, choices)) = &self.choosing {
            let keys: String = choices.iter().map(|k| format!("{} {} · ", k.key, k.label)).collect();
            return format!(" {prompt}: {keys}Esc back ");
        }
        if let Some(keys) = self.keys {
            return keys.to_owned();
        }
        if !self.record_keys.is_empty() {
            let keys: String = self.record_keys.iter().map(|(key, label)| format!("{key} {label} · ")).collect();
            return format!(" j k line · {keys}Esc close ");
        }
        let own: String = self.commands.iter().map(|k| format!("{} {} · ", k.key, k.label)).collect();
        let live = if self.watch.is_some() { "● live · " } else { "" };
        let rows = if self.selectable.is_some() && !self.row_values.is_empty() { "j k choose · " } else { "" };
        format!(" {live}{rows}{own}PgUp PgDn scroll · Esc close ")
    }

    pub fn render(&mut self, frame: &mut Frame, area: Rect, theme: &Theme) {
        frame.render_widget(Clear, area);
        let keys = self.footer();
        let border_room = usize::from(area.width.saturating_sub(2));
        let block = Block::default()
            .borders(Borders::ALL)
            .border_style(theme.border_focused)
            .title(Span::styled(
                format!(" {} ", truncate_to_width(&inert(&self.title), border_room.saturating_sub(2))),
                theme.title,
            ))
            .title_bottom(fit_line(Line::from(Span::styled(keys, theme.muted)), border_room));
        let inner = block.inner(area);
        frame.render_widget(block, area);
        if inner.width == 0 || inner.height == 0 {
            return;
        }
        let width = usize::from(inner.width);
        let lines: Vec<Line<'static>> =
            self.lines(theme, width).into_iter().map(|line| fit_line(line, width)).collect();
        if let Some(market) = &self.market {
            // The record's facts on top, the market under them taking the rest.
            let head = u16::try_from(lines.len()).unwrap_or(u16::MAX).min(inner.height / 3);
            frame.render_widget(Paragraph::new(lines), Rect { height: head, ..inner });
            let rest = Rect { y: inner.y + head, height: inner.height - head, ..inner };
            market.render(frame, rest, theme);
            return;
        }
        let most = u16::try_from(lines.len()).unwrap_or(u16::MAX).saturating_sub(inner.height);
        self.scroll = self.scroll.min(most);
        frame.render_widget(Paragraph::new(lines).scroll((self.scroll, 0)), inner);
    }
}

/// `text` cut into pieces of at most `width` columns, at spaces where it can be.
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut pieces = Vec::new();
    let mut line = String::new();
    for word in text.split(' ') {
        let mut word = word.to_owned();
        if !line.is_empty() && line.width() + 1 + word.width() > width {
            pieces.push(std::mem::take(&mut line));
        }
        // A word longer than the line is cut wherever it must be.
        while word.width() > width {
            let mut head = String::new();
            let mut rest = word.chars();
            for c in rest.by_ref() {
                if !head.is_empty() && head.width() + unicode_width::UnicodeWidthChar::width(c).unwrap_or(0) > width {
                    pieces.push(std::mem::take(&mut head));
                    head.push(c);
                    break;
                }
                head.push(c);
            }
            let rest = rest.as_str();
            if rest.is_empty() && head.width() > width {
                // One character wider than the whole line: it goes on a line of its own.
                pieces.push(std::mem::take(&mut head));
            }
            word = format!("{head}{rest}");
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(&word);
    }
    if !line.is_empty() {
        pieces.push(line);
    }
    pieces
}

/// A table as text lines: its title, a header, and rows padded to column widths.
fn table_lines(table: &Table, theme: &Theme, selected: Option<usize>, out: &mut Vec<Line<'static>>) {
    out.push(Line::from(Span::styled(inert(&table.title).into_owned(), theme.title)));
    let cells: Vec<Vec<String>> = table
        .rows
        .iter()
        .map(|row| {
            let last = row.len().saturating_sub(1);
            row.iter()
                .enumerate()
                .map(|(i, c)| {
                    // The last column has the rest of the line (a DKIM key to publish is long).
                    let most = if i == last { MAX_LAST_COLUMN } else { MAX_COLUMN };
                    truncate_to_width(&inert(&c.replace(['\n', '\r', '\t'], " ")), most)
                })
                .collect()
        })
        .collect();
    let widths: Vec<usize> = table
        .columns
        .iter()
        .enumerate()
        .map(|(i, (name, _))| {
            cells.iter().filter_map(|r| r.get(i)).map(|c| c.width()).chain([name.width()]).max().unwrap_or(0)
        })
        .collect();
    let pad = |text: &str, width: usize, align: Align| {
        let room = width.saturating_sub(text.width());
        match align {
            Align::Left => format!("{text}{}", " ".repeat(room)),
            Align::Right => format!("{}{text}", " ".repeat(room)),
        }
    };
    let header: Vec<String> =
        table.columns.iter().zip(&widths).map(|((name, align), w)| pad(name, *w, *align)).collect();
    out.push(Line::from(Span::styled(format!("  {}", header.join("  ")), theme.muted.add_modifier(Modifier::BOLD))));
    if cells.is_empty() {
        out.push(Line::from(Span::styled("  (none)", theme.muted)));
    }
    for (index, row) in cells.iter().enumerate() {
        let text: Vec<String> = table
            .columns
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(i, ((_, align), w))| pad(row.get(i).map_or("", String::as_str), *w, *align))
            .collect();
        let tone = table.tones.get(index).copied().flatten();
        let mut style = tone.map_or(theme.text, |t| t.style(theme));
        let marker = if selected == Some(index) {
            style = theme.selection;
            "› "
        } else {
            "  "
        };
        out.push(Line::from(Span::styled(format!("{marker}{}", text.join("  ")), style)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::backend::TestBackend;
    use ratatui::Terminal;

    #[test]
    fn notes_wrap_at_spaces_and_long_words_are_cut() {
        assert_eq!(wrap("one two three", 7), vec!["one two", "three"]);
        assert_eq!(wrap("abcdefghij", 4), vec!["abcd", "efgh", "ij"]);
        assert_eq!(wrap("注注", 1), vec!["注", "注"]);
        assert_eq!(wrap("", 5), Vec::<String>::new());
    }

    #[test]
    fn a_views_own_keys_run_its_commands_and_texts_are_shown_inert() {
        let verify = DetailCommand::Send { op: "domains_verify", values: vec![("domain".into(), "x.com".into())] };
        let mut detail = Detail {
            title: "domain x.com · unverified".into(),
            commands: vec![DetailKey { key: 'v', label: "verify", command: verify.clone() }],
            texts: vec![("text".into(), "Hello\x1b[2J,\n\nbye".into())],
            ..Detail::default()
        };
        let key = |c| KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE);
        assert_eq!(detail.handle_key(key('v')), DetailAction::Run(verify));
        assert_eq!(detail.handle_key(key('x')), DetailAction::None);
        assert_eq!(detail.handle_key(key('q')), DetailAction::Close);
        let mut terminal = Terminal::new(TestBackend::new(60, 10)).unwrap();
        terminal.draw(|f| detail.render(f, f.area(), &Theme::dark())).unwrap();
        let buffer = terminal.backend().buffer();
        let text: String =
            (0..10).map(|y| (0..60).map(|x| buffer[(x, y)].symbol()).collect::<String>() + "\n").collect();
        assert!(text.contains("v verify · PgUp PgDn scroll · Esc close"), "{text}");
        assert!(text.contains("Hello␛[2J,") && text.contains("bye"), "{text}");
        let newer = Detail { title: "domain x.com · active".into(), subject: Some("d".into()), ..Detail::default() };
        assert!(!detail.same_subject(&newer), "a title alone is no subject");
        detail.subject = Some("d".into());
        assert!(detail.same_subject(&newer));
    }

    #[test]
    fn tables_align_and_never_draw_control_characters() {
        let mut detail = Detail {
            title: "t\x1b[2J".into(),
            facts: vec![("status".into(), "Committed".into(), Some(Tone::Good))],
            tables: vec![Table {
                title: "rates".into(),
                columns: vec![("name".into(), Align::Left), ("rate".into(), Align::Right)],
                rows: vec![vec!["CA\x07 STATE".into(), "6.00 %".into()], vec!["X".into(), "10.25 %".into()]],
                tones: vec![],
            }],
            ..Detail::default()
        };
        let mut terminal = Terminal::new(TestBackend::new(60, 12)).unwrap();
        terminal.draw(|f| detail.render(f, f.area(), &Theme::dark())).unwrap();
        let buffer = terminal.backend().buffer();
        let text: Vec<String> = (0..12).map(|y| (0..60).map(|x| buffer[(x, y)].symbol()).collect::<String>()).collect();
        let all = text.join("\n");
        assert!(!all.contains('\x1b') && !all.contains('\x07'), "{all}");
        let first = text.iter().find(|l| l.contains("STATE")).unwrap();
        let second = text.iter().find(|l| l.contains("10.25")).unwrap();
        let column = |line: &str| line.find(" %").map(|byte| line[..byte].chars().count());
        assert_eq!(column(first), column(second), "numbers right-aligned:\n{all}");
        for (w, h) in [(1, 1), (5, 3), (20, 4)] {
            let mut terminal = Terminal::new(TestBackend::new(w, h)).unwrap();
            terminal.draw(|f| detail.render(f, f.area(), &Theme::dark())).unwrap();
        }
    }
}
