//! Draws the whole screen from the app's state: header, the three panes, status bar, popups.

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, List, ListItem, ListState, Paragraph, Wrap};
use ratatui::Frame;

use crate::inert::inert;
use crate::tui::app::{mode_label, App, Focus, Popup, Severity};
use crate::tui::components::browser::Browser;
use crate::tui::components::detail::Detail;
use crate::tui::components::form::Form;
use crate::tui::components::inspector::Inspector;
use crate::tui::components::menu::Menu;

/// Below this the layout cannot show the three panes; a message says so instead.
pub const MIN_WIDTH: u16 = 60;
pub const MIN_HEIGHT: u16 = 15;

pub fn draw(frame: &mut Frame, app: &mut App) {
    let area = frame.area();
    let theme = &app.theme;
    frame.render_widget(Block::default().style(theme.text), area);
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
    draw_header(frame, header, app);
    draw_status(frame, status, app);
    let resources_width = (body.width / 6).clamp(14, 24);
    let [resources, browser, inspector] =
        Layout::horizontal([Constraint::Length(resources_width), Constraint::Percentage(45), Constraint::Min(10)])
            .areas(body);
    let focus = app.focus;
    let popup_open = app.popup.is_some();
    draw_resources(frame, resources, app, focus == Focus::Resources && !popup_open);
    {
        // Borrowed field by field, so the panes can take the theme without a copy per frame.
        let App { tabs, active, popup, theme, charts, chart_hidden, .. } = &mut *app;
        let tab = &mut tabs[*active];
        // A time series gets a chart under the browser, beside the JSON, when there is room.
        let chart = charts.get(active).filter(|_| !*chart_hidden && browser.height >= 16);
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
        tab.inspector.render(frame, inspector, theme, focus == Focus::Inspector && !popup_open);
        match popup {
            Some(Popup::Form(form)) => form.render(frame, body, theme),
            Some(Popup::Menu(menu)) => menu.render(frame, body, theme),
            Some(Popup::Confirm(confirm)) => confirm.render(frame, body, theme),
            Some(Popup::Detail(detail)) => detail.render(frame, body, theme),
            Some(Popup::Sandbox(view)) => view.render(frame, body, theme),
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
        draw_help(frame, body, app);
    }
}

fn draw_header(frame: &mut Frame, area: Rect, app: &App) {
    let theme = &app.theme;
    let mut right = format!(" profile {} ", inert(&app.profile));
    if app.read_only {
        right.push_str("· read-only ");
    }
    // Full badges when they fit, short ones on narrower terminals.
    let badges = |short: bool| {
        let mut spans = vec![Span::styled(" opsdeck ", theme.title)];
        for (index, tab) in app.tabs.iter().enumerate() {
            let active = index == app.active;
            let name_style =
                if active { theme.accent.add_modifier(ratatui::style::Modifier::UNDERLINED) } else { theme.muted };
            spans.push(Span::styled(format!(" {} {} ", index + 1, tab.service.title()), name_style));
            let (badge, style) = match (mode_label(tab), short) {
                ("LIVE", _) => ("LIVE", theme.live_badge),
                _ if !tab.available => (if short { "—" } else { "no sim" }, theme.muted),
                (_, false) => ("SANDBOX", theme.sandbox_badge),
                (_, true) => ("SBX", theme.sandbox_badge),
            };
            spans.push(Span::styled(badge, style));
        }
        spans
    };
    let width = |spans: &[Span]| spans.iter().map(|s| s.content.chars().count()).sum::<usize>();
    let mut spans = badges(false);
    if width(&spans) + right.chars().count() > usize::from(area.width) {
        spans = badges(true);
    }
    let used: usize = spans.iter().map(|s| s.content.chars().count()).sum();
    let room = usize::from(area.width).saturating_sub(used + right.chars().count());
    spans.push(Span::raw(" ".repeat(room)));
    spans.push(Span::styled(right, theme.muted));
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
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
    let tab = app.tab();
    if tab.auto_refresh {
        spans.push(Span::styled(format!(" auto {}s ", app.auto_refresh_every.as_secs()), theme.success));
    }
    let (badge, style) =
        if tab.target.live { (" LIVE ", theme.live_badge) } else { (" SANDBOX ", theme.sandbox_badge) };
    spans.push(Span::styled(badge, style));
    spans.push(Span::styled(format!(" {} ", inert(&tab.target.base_url)), theme.muted));
    // Every status message passes here, and many quote a server (errors, ids): one line, inert.
    match &app.status {
        Some((message, Severity::Error)) => spans.push(Span::styled(format!(" ✗ {}", inert(message)), theme.error)),
        Some((message, Severity::Info)) => spans.push(Span::styled(format!(" {}", inert(message)), theme.text)),
        None => spans.push(Span::styled(" ? help · o operations · : all operations · q quit", theme.muted)),
    }
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}

fn draw_resources(frame: &mut Frame, area: Rect, app: &App, focused: bool) {
    let theme = &app.theme;
    let tab = app.tab();
    let items: Vec<ListItem> = tab.resources.iter().map(|r| ListItem::new(*r)).collect();
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(theme.border(focused))
        .title(Span::styled(format!(" {} ", tab.service.title()), theme.title));
    let list = List::new(items).block(block).style(theme.text).highlight_style(theme.selected(focused));
    let mut state = ListState::default().with_selected(Some(tab.resource));
    frame.render_stateful_widget(list, area, &mut state);
}

fn draw_help(frame: &mut Frame, area: Rect, app: &App) {
    let theme = &app.theme;
    let global: &[(&str, &str)] = &[
        ("1-7 Tab S-Tab", "switch service tab"),
        ("h l ← →", "move between panes"),
        ("o", "operations of the selected resource"),
        (":", "any operation of any service"),
        ("r", "refresh the view"),
        ("a", "auto-refresh on/off"),
        ("b", "last table view (transaction, rates, tax)"),
        ("S", "sandbox view: requests and faults"),
        ("Y", "copy the last request as curl / HTTPie"),
        ("C  [ ]", "chart of a time series: hide/show, series"),
        ("Ctrl-x", "cancel every call in flight"),
        ("?", "this help"),
        ("q Ctrl-c", "quit"),
    ];
    let (title, pane): (&str, &[(&str, &str)]) = match app.focus {
        Focus::Resources => ("resources", &[("j k ↑ ↓", "move"), ("Enter l →", "browse the resource")]),
        Focus::Browser => ("browser", Browser::help()),
        Focus::Inspector => ("inspector", Inspector::help()),
    };
    let mut left = vec![Line::from(Span::styled(format!("Keys of the {title}"), theme.title))];
    left.extend(pane.iter().map(|(k, v)| help_line(k, v, app)));
    let mut right = vec![Line::from(Span::styled("Everywhere", theme.title))];
    right.extend(global.iter().map(|(k, v)| help_line(k, v, app)));
    right.push(Line::default());
    right.push(Line::from(Span::styled("In forms and menus", theme.title)));
    right.extend(Form::help().iter().chain(Menu::help()).map(|(k, v)| help_line(k, v, app)));
    right.push(Line::default());
    right.push(Line::from(Span::styled("In table views (transaction, rates, sandbox)", theme.title)));
    right.extend(Detail::help().iter().map(|(k, v)| help_line(k, v, app)));
    // Two columns when the terminal is wide enough, so everything fits on 30 rows.
    const COLUMN: u16 = 62;
    let two_columns = area.width >= 2 * COLUMN + 2;
    let rows = if two_columns { left.len().max(right.len()) } else { left.len() + 1 + right.len() };
    let width =
        if two_columns { 2 * COLUMN + 2 } else { area.width.saturating_sub(4).clamp(10, COLUMN + 2).min(area.width) };
    let height = u16::try_from(rows + 2).unwrap_or(u16::MAX).min(area.height);
    let popup = Rect { x: area.x + (area.width - width) / 2, y: area.y + (area.height - height) / 2, width, height };
    frame.render_widget(Clear, popup);
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(theme.border_focused)
        .title(Span::styled(" help · Esc closes ", theme.title));
    let inner = block.inner(popup);
    frame.render_widget(block, popup);
    if two_columns {
        let [first, second] = Layout::horizontal([Constraint::Length(COLUMN), Constraint::Min(1)]).areas(inner);
        frame.render_widget(Paragraph::new(left), first);
        frame.render_widget(Paragraph::new(right), second);
    } else {
        left.push(Line::default());
        left.extend(right);
        frame.render_widget(Paragraph::new(left), inner);
    }
}

fn help_line<'a>(key: &'a str, what: &'a str, app: &App) -> Line<'a> {
    Line::from(vec![Span::styled(format!("  {key:<18}"), app.theme.accent), Span::styled(what, app.theme.text)])
}
