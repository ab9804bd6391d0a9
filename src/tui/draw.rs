//! Draws the whole screen from the app's state: header, the three panes, status bar, popups.

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, List, ListItem, ListState, Paragraph, Wrap};
use ratatui::Frame;

use crate::config::Mode;
use crate::inert::inert;
use crate::tui::app::{App, Focus, Popup, Severity};
use crate::tui::areas::Areas;
use crate::tui::components::browser::Browser;
use crate::tui::components::detail::Detail;
use crate::tui::components::form::Form;
use crate::tui::components::history_view::HistoryView;
use crate::tui::components::inspector::Inspector;
use crate::tui::components::line_input;
use crate::tui::components::menu::Menu;
use crate::tui::components::sandbox_view::SandboxView;
use crate::tui::keymap::Scope;
use crate::tui::keymap::{Action, ACTIONS};
use unicode_width::UnicodeWidthStr;

/// Below this the layout cannot show the three panes; a message says so instead.
pub const MIN_WIDTH: u16 = 60;
pub const MIN_HEIGHT: u16 = 15;

pub fn draw(frame: &mut Frame, app: &mut App) {
    let area = frame.area();
    let theme = &app.theme;
    frame.render_widget(Block::default().style(theme.text), area);
    app.areas = Areas::default();
    if area.width < MIN_WIDTH || area.height < MIN_HEIGHT {
        let text = format!(
            "Terminal too small: {}x{}.\nopsdeck needs at least {MIN_WIDTH}x{MIN_HEIGHT}; enlarge the window (q quits).",
            area.width, area.height
        );
        frame.render_widget(Paragraph::new(text).style(theme.warning).wrap(Wrap { trim: true }), area);
        return;
    }
    let [header, body, status] =
        Layout::vertical([Constraint::Length(1), Constraint::Min(1), Constraint::Length(1)]).areas(area);
    app.areas.tabs = draw_header(frame, header, app);
    draw_status(frame, status, app);
    let focus = app.focus;
    let (resources, browser, inspector) = if app.zoomed {
        // The focused pane takes the whole body; the others are not drawn.
        let mut panes = (Rect::default(), Rect::default(), Rect::default());
        match focus {
            Focus::Resources => panes.0 = body,
            Focus::Browser => panes.1 = body,
            Focus::Inspector => panes.2 = body,
        }
        panes
    } else {
        let resources_width = (body.width / 6).clamp(14, 24);
        let [resources, browser, inspector] =
            Layout::horizontal([Constraint::Length(resources_width), Constraint::Percentage(45), Constraint::Min(10)])
                .areas(body);
        (resources, browser, inspector)
    };
    app.areas.resources = resources;
    app.areas.browser = browser;
    app.areas.inspector = inspector;
    let popup_open = app.popup.is_some();
    if !resources.is_empty() {
        app.areas.resources_offset = draw_resources(frame, resources, app, focus == Focus::Resources && !popup_open);
    }
    let chart_shown = app.chart().is_some();
    {
        // Borrowed field by field, so the panes can take the theme without a copy per frame.
        let App { tabs, active, popup, theme, .. } = &mut *app;
        let tab = &mut tabs[*active];
        if !browser.is_empty() {
            // A time series gets a chart under the browser, beside the JSON, when there is room.
            let chart = tab.chart.as_ref().filter(|_| chart_shown && browser.height >= 16);
            let browser = match chart {
                Some(chart) => {
                    let [rows, chart_area] =
                        Layout::vertical([Constraint::Percentage(45), Constraint::Min(8)]).areas(browser);
                    chart.render(frame, chart_area, theme);
                    rows
                }
                None => browser,
            };
            tab.browser.render(frame, browser, theme, focus == Focus::Browser && !popup_open);
        }
        if !inspector.is_empty() {
            tab.inspector.render(frame, inspector, theme, focus == Focus::Inspector && !popup_open);
        }
        match popup {
            Some(Popup::Form(form)) => form.render(frame, body, theme),
            Some(Popup::Menu(menu)) => menu.render(frame, body, theme),
            Some(Popup::Confirm(confirm)) => confirm.render(frame, body, theme),
            Some(Popup::Detail(detail)) => detail.render(frame, body, theme),
            Some(Popup::Sandbox(view)) => view.render(frame, body, theme),
            Some(Popup::History(view)) => view.render(frame, body, theme),
            Some(Popup::Save(prompt, back)) => {
                if let Some(detail) = back {
                    detail.render(frame, body, theme);
                }
                prompt.render(frame, body, theme);
            }
            Some(Popup::Copy(menu, form)) => {
                if let Some(form) = form {
                    form.render(frame, body, theme);
                }
                menu.render(frame, body, theme);
            }
            Some(Popup::Help) | None => {}
        }
    }
    if matches!(app.popup, Some(Popup::Help)) {
        let most = draw_help(frame, body, app);
        app.help_scroll = app.help_scroll.min(most);
    }
}

/// How much of the tab bar fits, from the most to the least: every tab named with its badge,
/// then shorter badges, then only the active tab named (the others by number, with their badge
/// and then without), so the active tab, its badge and the profile always show.
#[derive(Clone, Copy, PartialEq, Eq)]
struct TabBar {
    all_named: bool,
    short_badges: bool,
    other_badges: bool,
    title: bool,
}

impl TabBar {
    const WIDEST_FIRST: [TabBar; 6] = [
        TabBar { all_named: true, short_badges: false, other_badges: true, title: true },
        TabBar { all_named: true, short_badges: true, other_badges: true, title: true },
        TabBar { all_named: false, short_badges: true, other_badges: true, title: true },
        TabBar { all_named: false, short_badges: true, other_badges: true, title: false },
        TabBar { all_named: false, short_badges: true, other_badges: false, title: true },
        TabBar { all_named: false, short_badges: true, other_badges: false, title: false },
    ];
}

/// Draws the tab bar and the profile; returns where each tab's label is, for clicks.
fn draw_header(frame: &mut Frame, area: Rect, app: &App) -> Vec<(Rect, usize)> {
    let theme = &app.theme;
    let mut right = format!(" profile {} ", inert(&app.profile));
    if app.read_only {
        right.push_str("· read-only ");
    }
    // Each piece with the tab it belongs to, if any.
    let pieces = |bar: TabBar| {
        let mut pieces: Vec<(Span, Option<usize>)> = Vec::new();
        if bar.title {
            pieces.push((Span::styled(" opsdeck ", theme.title), None));
        }
        for (index, tab) in app.tabs.iter().enumerate() {
            let active = index == app.active;
            let live = tab.mode == Mode::Live;
            let full = tab.target_badge();
            let (badge, badge_style) = match (&tab.mode, bar.short_badges) {
                (Mode::Live, _) => ("LIVE".to_owned(), theme.live_badge),
                (Mode::External, true) => ("URL".to_owned(), theme.accent),
                (Mode::External, false) => (full, theme.accent),
                (Mode::Embedded, false) => (full, theme.sandbox_badge),
                (Mode::Embedded, true) => ("SBX".to_owned(), theme.sandbox_badge),
            };
            if !active && !bar.all_named {
                pieces.push((Span::styled(format!(" {}", index + 1), theme.muted), Some(index)));
                if bar.other_badges {
                    pieces.push((Span::raw(" "), Some(index)));
                    pieces.push((Span::styled(badge, badge_style), Some(index)));
                } else if live {
                    // A LIVE tab stays marked even as a bare number.
                    pieces.push((Span::styled("!", theme.live_badge), Some(index)));
                }
                continue;
            }
            let name_style =
                if active { theme.accent.add_modifier(ratatui::style::Modifier::UNDERLINED) } else { theme.muted };
            pieces.push((Span::styled(format!(" {} {} ", index + 1, tab.service.title()), name_style), Some(index)));
            pieces.push((Span::styled(badge, badge_style), Some(index)));
        }
        pieces
    };
    let width = |pieces: &[(Span, Option<usize>)]| pieces.iter().map(|(s, _)| s.content.width()).sum::<usize>();
    let room = usize::from(area.width);
    let mut chosen = pieces(TabBar::WIDEST_FIRST[5]);
    for bar in TabBar::WIDEST_FIRST {
        let candidate = pieces(bar);
        if width(&candidate) + right.width() <= room {
            chosen = candidate;
            break;
        }
    }
    let used = width(&chosen);
    if used + right.width() > room {
        // Only a very long profile name gets here: it is cut, the tab stays whole.
        let keep = room.saturating_sub(used + 1);
        right = crate::tui::components::browser::truncate_to_width(&right, keep);
    }
    let mut targets: Vec<(Rect, usize)> = Vec::new();
    let mut x = area.x;
    for (span, tab) in &chosen {
        let w = u16::try_from(span.content.width()).unwrap_or(u16::MAX);
        if let Some(index) = tab {
            match targets.last_mut() {
                Some((rect, last)) if last == index => rect.width += w,
                _ => targets.push((Rect::new(x, area.y, w, 1), *index)),
            }
        }
        x = x.saturating_add(w);
    }
    let mut spans: Vec<Span> = chosen.into_iter().map(|(span, _)| span).collect();
    spans.push(Span::raw(" ".repeat(room.saturating_sub(used + right.width()))));
    spans.push(Span::styled(right, theme.muted));
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
    targets
}

fn draw_status(frame: &mut Frame, area: Rect, app: &App) {
    let theme = &app.theme;
    let mut spans = Vec::new();
    let active = app.executor.active_count();
    if active > 0 {
        let in_flight = app.executor.in_flight_count();
        let elapsed = app.oldest_call_age(std::time::Instant::now()).unwrap_or_default();
        spans.push(Span::styled(
            format!(" ⟳ {in_flight} in flight, {} queued · {} s ", active - in_flight, elapsed.as_secs()),
            theme.accent,
        ));
    }
    if let Some(note) = app.indexing_note() {
        spans.push(Span::styled(format!(" ⟳ {note} (Esc cancels) "), theme.accent));
    }
    let tab = app.tab();
    if tab.auto_refresh {
        spans.push(Span::styled(format!(" auto {}s ", app.auto_refresh_every.as_secs()), theme.success));
    }
    if let Some(tail) = &tab.tail {
        let how = if tab.live_tail.is_some() { "live".to_owned() } else { format!("{}s", app.tail_every.as_secs()) };
        spans.push(Span::styled(format!(" tail {how} · {} new ", tail.arrived), theme.success));
    }
    if app.zoomed {
        let restore = app.keymap.hint(Action::Zoom).map(|key| format!(" ({key} restores)")).unwrap_or_default();
        spans.push(Span::styled(format!(" zoomed{restore} "), theme.accent));
    }
    let style = match &tab.mode {
        Mode::Live => theme.live_badge,
        Mode::External => theme.accent,
        Mode::Embedded => theme.sandbox_badge,
    };
    spans.push(Span::styled(format!(" {} ", inert(&tab.target_badge())), style));
    spans.push(Span::styled(format!(" {} ", inert(&tab.target.base_url)), theme.muted));
    // Every status message passes here, and many quote a server (errors, ids): one line, inert.
    match app.status() {
        Some((message, Severity::Error)) => spans.push(Span::styled(format!(" ✗ {}", inert(message)), theme.error)),
        Some((message, Severity::Info)) => spans.push(Span::styled(format!(" {}", inert(message)), theme.text)),
        None => {
            let hints = [
                (Action::Help, "help"),
                (Action::Operations, "operations"),
                (Action::Palette, "all operations"),
                (Action::Quit, "quit"),
            ];
            let shown: Vec<String> = hints
                .iter()
                .filter_map(|(action, what)| Some(format!("{} {what}", app.keymap.hint(*action)?)))
                .collect();
            spans.push(Span::styled(format!(" {}", shown.join(" · ")), theme.muted));
        }
    }
    let room = usize::from(area.width);
    let message_at = spans.len() - 1;
    if spans.iter().map(Span::width).sum::<usize>() > room {
        // The message is what the line is read for: the base URL (also in the header's badge
        // and the inspector) gives its room up first.
        spans.remove(message_at - 1);
    }
    let spans: Vec<Span<'static>> = spans.into_iter().map(|s| Span::styled(s.content.into_owned(), s.style)).collect();
    frame.render_widget(Paragraph::new(crate::tui::components::fit_line(Line::from(spans), room)), area);
}

/// Draws the resource list; returns the first resource in view.
fn draw_resources(frame: &mut Frame, area: Rect, app: &App, focused: bool) -> usize {
    let theme = &app.theme;
    let tab = app.tab();
    // A name too long for the pane ends in `…` rather than read as another word.
    let room = usize::from(area.width.saturating_sub(2));
    let items: Vec<ListItem> =
        tab.resources.iter().map(|r| ListItem::new(crate::table::truncate_to_width(r, room))).collect();
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(theme.border(focused))
        .title(Span::styled(format!(" {} ", tab.service.title()), theme.title));
    let list = List::new(items).block(block).style(theme.text).highlight_style(theme.selected(focused));
    let mut state = ListState::default().with_selected(Some(tab.resource));
    frame.render_stateful_widget(list, area, &mut state);
    state.offset()
}

/// Draws the help popup scrolled by `app.help_scroll`; returns the most it can scroll.
fn draw_help(frame: &mut Frame, area: Rect, app: &App) -> u16 {
    let theme = &app.theme;
    let keymap = &app.keymap;
    // The seven tab keys on one line: `1-7` while they are the defaults.
    let tab_keys: Vec<String> = (0..7).map(|i| keymap.label(Action::Tab(i))).collect();
    let tab_label = if tab_keys.iter().enumerate().all(|(i, k)| *k == (i + 1).to_string()) {
        "1-7".to_owned()
    } else {
        tab_keys.join(" ")
    };
    let mut global: Vec<(String, String)> =
        vec![(tab_label, "go to tab 1-7".into()), ("h l ← →".into(), "move between panes".into())];
    for info in ACTIONS.iter().filter(|info| !matches!(info.action, Action::Tab(_))) {
        let description = match info.scope {
            Scope::Global => info.description.to_owned(),
            Scope::Browser => format!("{} (browser)", info.description),
            Scope::OutsideInspector => format!("{} (not in the inspector)", info.description),
        };
        let keys = match keymap.hint(info.action) {
            None if info.in_palette => format!(": {}", info.name.replace('_', " ")),
            _ => keymap.label(info.action),
        };
        global.push((keys, description));
    }
    let global: Vec<(&str, &str)> = global.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let (title, pane): (&str, &[(&str, &str)]) = match app.focus {
        Focus::Resources => ("resources", &[("j k ↑ ↓ g G", "move"), ("Enter l →", "browse the resource")]),
        Focus::Browser => ("browser", Browser::help()),
        Focus::Inspector => ("inspector", Inspector::help()),
    };
    // App-level keys the browser's own list names are listed under "Everywhere", as bound.
    let pane: Vec<(&str, &str)> = pane.iter().copied().filter(|(k, _)| !BROWSER_HELP_APP_KEYS.contains(k)).collect();
    let left: Vec<(String, &[(&str, &str)])> = vec![
        (format!("Keys of the {title}"), &pane),
        ("In every text input (filters, search, jq, forms)".into(), line_input::HELP),
    ];
    let right: Vec<(String, &[(&str, &str)])> = vec![
        ("Everywhere".into(), &global),
        ("In forms".into(), Form::help()),
        ("In the operations menu (o)".into(), Menu::help()),
        ("In the palette (:)".into(), Menu::palette_help()),
        (
            "In table views (transaction, rates, Mailgun domain, EasyPost shipment, tracker, batch)".into(),
            Detail::help(),
        ),
        ("In the history (H)".into(), &HistoryView::help()[1..]),
        ("In the sandbox view (S)".into(), &SandboxView::help()[1..]),
    ];
    // Each column as wide as its widest line; two columns when both fit, else one that wraps.
    let widest = |sections: &[(String, &[(&str, &str)])]| {
        sections
            .iter()
            .flat_map(|(heading, keys)| {
                let line = |(k, v): &(&str, &str)| 3 + k.trim().width().max(HELP_KEY_WIDTH) + v.width();
                std::iter::once(heading.width()).chain(keys.iter().map(line))
            })
            .max()
            .unwrap_or(0)
    };
    let (left_width, right_width) = (widest(&left), widest(&right));
    let most_width = usize::from(area.width.saturating_sub(2)).max(10);
    // Two columns side by side when each gets room enough to read (their descriptions wrap when
    // narrower than their widest line); one that wraps on a narrow screen.
    const NARROWEST_COLUMN: usize = 48;
    let two_columns = most_width >= 2 * NARROWEST_COLUMN + 2;
    let (first_width, second_width) = match two_columns {
        true if left_width + 2 + right_width <= most_width => (left_width + 2, right_width),
        true => {
            let first = (left_width + 2).min(most_width / 2).max(NARROWEST_COLUMN + 2);
            (first, most_width - first)
        }
        false => (left_width.max(right_width).min(most_width), 0),
    };
    let mut first = help_lines(&left, first_width.saturating_sub(if two_columns { 2 } else { 0 }), app);
    let mut second = help_lines(&right, second_width.max(1), app);
    if !two_columns {
        first.push(Line::default());
        first.extend(help_lines(&right, first_width, app));
        second.clear();
    }
    let rows = first.len().max(second.len());
    let width = u16::try_from(first_width + second_width + 2).unwrap_or(u16::MAX).min(area.width);
    let height = u16::try_from(rows + 2).unwrap_or(u16::MAX).min(area.height);
    let popup = crate::tui::components::centered(area, width, height);
    frame.render_widget(Clear, popup);
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(theme.border_focused)
        .title(Span::styled(" help · Esc closes ", theme.title));
    let inner = block.inner(popup);
    let most = u16::try_from(rows).unwrap_or(u16::MAX).saturating_sub(inner.height);
    let block = match most {
        0 => block,
        _ => block.title_bottom(Span::styled(" ↑ ↓ scroll ", theme.muted)),
    };
    let scroll = (app.help_scroll.min(most), 0);
    frame.render_widget(block, popup);
    if two_columns {
        let column = u16::try_from(first_width).unwrap_or(u16::MAX);
        let [left, right] = Layout::horizontal([Constraint::Length(column), Constraint::Min(1)]).areas(inner);
        frame.render_widget(Paragraph::new(first).scroll(scroll), left);
        frame.render_widget(Paragraph::new(second).scroll(scroll), right);
    } else {
        frame.render_widget(Paragraph::new(first).scroll(scroll), inner);
    }
    most
}

/// The column the descriptions of the help start at, after two spaces and the keys.
const HELP_KEY_WIDTH: usize = 18;

/// Sections of the help as lines at most `width` wide: a heading, then a line per key whose
/// description wraps under itself, so nothing is cut; a blank line between sections.
fn help_lines<'a>(sections: &[(String, &[(&'a str, &'a str)])], width: usize, app: &App) -> Vec<Line<'a>> {
    let mut lines = Vec::new();
    for (i, (heading, keys)) in sections.iter().enumerate() {
        if i > 0 {
            lines.push(Line::default());
        }
        for part in wrap_words(heading, width) {
            lines.push(Line::from(Span::styled(part, app.theme.title)));
        }
        for (key, what) in keys.iter() {
            let key = key.trim();
            let key_cell = format!("  {key:<HELP_KEY_WIDTH$} ");
            let indent = key_cell.width();
            let room = width.saturating_sub(indent).max(10);
            for (n, part) in wrap_words(what, room).into_iter().enumerate() {
                let lead = if n == 0 { key_cell.clone() } else { " ".repeat(indent) };
                lines.push(Line::from(vec![Span::styled(lead, app.theme.accent), Span::styled(part, app.theme.text)]));
            }
        }
    }
    lines
}

/// `text` cut into lines of at most `width` columns at spaces (a word longer than that is cut).
fn wrap_words(text: &str, width: usize) -> Vec<String> {
    let width = width.max(1);
    let mut lines = vec![String::new()];
    for word in text.split(' ') {
        let line = lines.last_mut().expect("never empty");
        let needed = if line.is_empty() { word.width() } else { line.width() + 1 + word.width() };
        if needed <= width {
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(word);
            continue;
        }
        let mut rest = word;
        let mut next = String::new();
        while rest.width() > width {
            let cut = rest
                .char_indices()
                .take_while(|(i, _)| rest[..*i].width() < width)
                .last()
                .map_or(rest.len(), |(i, c)| i + c.len_utf8());
            lines.push(rest[..cut].to_owned());
            rest = &rest[cut..];
        }
        next.push_str(rest);
        lines.push(next);
    }
    lines.retain(|l| !l.is_empty() || text.is_empty());
    lines
}

/// The lines of [`Browser::help`] that are app-level actions with keys of their own.
const BROWSER_HELP_APP_KEYS: &[&str] = &["c", "n p", "r", "a", "o"];
