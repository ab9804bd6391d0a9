//! Keys: every key, paste and click, routed to the open popup, the typing pane, a global action or the focused pane.

use super::*;

impl App {
    /// Handles one key; returns nothing: state changes are drawn on the next frame.
    pub fn handle_key(&mut self, key: KeyEvent) {
        if key.code == KeyCode::Char('c') && key.modifiers.contains(KeyModifiers::CONTROL) {
            self.quit = true;
            return;
        }
        if self.popup.is_some() {
            self.handle_popup_key(key);
            return;
        }
        let typing = match self.focus {
            Focus::Browser => self.tab().browser.is_typing(),
            Focus::Inspector => self.tab().inspector.is_typing(),
            Focus::Resources => false,
        };
        if typing {
            self.handle_pane_key(key);
            return;
        }
        if self.focus == Focus::Browser && self.row_key(&key) {
            return;
        }
        match self.keymap.action_for(&key, self.focus) {
            Some(action) => self.run_action(action),
            None => self.handle_pane_key(key),
        }
    }

    /// Does what an app-level key or palette entry asks.
    pub fn run_action(&mut self, action: Action) {
        match action {
            Action::Quit => self.quit = true,
            Action::Help => {
                self.help_scroll = 0;
                self.popup = Some(Popup::Help);
            }
            Action::Tab(index) => self.switch_tab(index),
            Action::NextTab => self.switch_tab((self.active + 1) % self.tabs.len()),
            Action::PrevTab => self.switch_tab((self.active + self.tabs.len() - 1) % self.tabs.len()),
            Action::Operations => self.open_operations_menu(),
            Action::Palette => self.open_palette(),
            Action::SandboxView => self.open_sandbox_view(),
            Action::History => self.open_history(),
            Action::CopyRequest => self.open_copy_menu(None),
            Action::Chart => self.toggle_chart(),
            Action::NextSeries => self.cycle_chart(true),
            Action::PrevSeries => self.cycle_chart(false),
            Action::TableView => match self.tab().detail.clone() {
                Some(detail) => self.popup = Some(Popup::Detail(detail)),
                None => self.info(
                    "no table view yet: open a transaction, look up a rate or a calculation, a Mailgun domain, or an EasyPost shipment, tracker, batch or address",
                ),
            },
            Action::Tail => self.toggle_tail(),
            Action::ComposeEmail => self.compose(Compose::Fields),
            Action::ComposeMime => self.compose(Compose::Mime),
            Action::TranscribeLive => self.transcribe_live(),
            Action::Refresh => self.refresh(),
            Action::AutoRefresh => self.toggle_auto_refresh(),
            Action::Cancel => {
                let n = self.executor.cancel_all();
                self.tabs.iter_mut().for_each(Tab::stop_loading);
                self.purposes.clear();
                let indexing: usize = (0..self.tabs.len()).map(|tab| self.cancel_indexing(tab)).sum();
                // jq filters at work stop too: the inspector says so under its filter line.
                for tab in &mut self.tabs {
                    if tab.inspector.cancel_filter() {
                        tab.inspector.note_cancelled_filter();
                    }
                }
                match indexing {
                    0 => self.info(format!("cancelled {}", crate::format::plural(n, "call"))),
                    _ => self.info(format!(
                        "cancelled {} and the indexing of {}",
                        crate::format::plural(n, "call"),
                        crate::format::plural(indexing, "response")
                    )),
                }
            }
            Action::NextPage => self.next_page(),
            Action::PrevPage => self.previous_page(),
            Action::ClearFilters => self.clear_filters(),
            Action::Zoom => self.zoomed = !self.zoomed,
            Action::ReadOnly => self.toggle_read_only(),
        }
    }

    /// `o`: the tab's operations, those of the selected resource first.
    pub(super) fn open_operations_menu(&mut self) {
        let tab = self.tab();
        let title = format!("{} operations", tab.service.title());
        let (first, rest) = tab.operations_for_menu();
        self.popup = Some(Popup::Menu(Menu::grouped(title, tab.resource_name(), first, rest)));
    }

    /// `:`: every operation of every service, the current tab's first (and first among equal
    /// matches of what is typed), then the console's own actions.
    pub(super) fn open_palette(&mut self) {
        let items = self.palette_items();
        let service = self.tab().service;
        let (mut ops, others): (Vec<_>, Vec<_>) = all_operations().partition(|op| op.service == service);
        ops.extend(others);
        self.popup = Some(Popup::Menu(Menu::palette(ops, items)));
    }

    /// The console actions of the palette: every action marked for it in [`ACTIONS`], then a
    /// line per profile and per theme.
    pub(super) fn palette_items(&self) -> Vec<PaletteItem> {
        let mut items: Vec<PaletteItem> = ACTIONS
            .iter()
            .filter(|info| info.in_palette)
            .map(|info| PaletteItem {
                label: info.name.replace('_', " "),
                summary: match self.keymap.hint(info.action) {
                    Some(_) => format!("{} ({})", info.description, self.keymap.label(info.action)),
                    None => info.description.to_owned(),
                },
                command: Command::Action(info.action),
            })
            .collect();
        if let Some(setup) = &self.setup {
            items.extend(setup.profiles().into_iter().map(|name| PaletteItem {
                label: format!("profile {name}"),
                summary: if name == self.profile {
                    "the profile in use".into()
                } else {
                    "switch to this profile".into()
                },
                command: Command::Profile(name),
            }));
            items.extend(setup.themes().into_iter().map(|name| PaletteItem {
                label: format!("theme {name}"),
                summary: "draw with this theme".into(),
                command: Command::Theme(name),
            }));
        }
        items
    }

    /// Makes `name` the profile in use: every tab is built again for its targets (lists and
    /// calls of the old ones are dropped); nothing changes when it cannot be resolved.
    pub(super) fn switch_profile(&mut self, name: &str) {
        let Some(setup) = self.setup.as_ref() else {
            return self.error("this console was started without a config: no profile to switch to");
        };
        match setup.tabs(name) {
            Ok((tabs, warnings)) => {
                let read_only = setup.read_only(name);
                self.executor.cancel_all();
                self.purposes.clear();
                self.tabs = tabs;
                self.arm_filter_wakers();
                self.profile = name.to_owned();
                self.read_only = read_only;
                self.focus = Focus::Browser;
                self.start_tab();
                let live = self.tabs.iter().filter(|t| t.target.live).count();
                let mut message = format!("profile {name}: {live} LIVE, {} SANDBOX", self.tabs.len() - live);
                if read_only {
                    message.push_str(", read-only");
                }
                match warnings.is_empty() {
                    true => self.info(message),
                    false => self.error(format!("{message}; {}", warnings.join("; "))),
                }
            }
            Err(e) => self.error(format!("profile {name} not switched to: {e}")),
        }
    }

    pub(super) fn switch_theme(&mut self, name: &str) {
        let Some(setup) = self.setup.as_ref() else { return };
        let (theme, warning) = setup.theme(name);
        self.theme = theme;
        match warning {
            Some(warning) => self.error(warning),
            None => self.info(format!("theme {name}")),
        }
    }

    pub(super) fn toggle_read_only(&mut self) {
        if self.started_read_only() {
            return self.error("started with --read-only, which holds until you quit");
        }
        self.read_only = !self.read_only;
        if self.read_only {
            self.info("read-only: operations that change state will not be sent");
        } else {
            self.info("read-only off: operations that change state can be sent");
        }
    }

    /// A click or a turn of the wheel (only with `mouse = true`): a tab in the header switches
    /// to it; in a pane it focuses the pane and selects what is under the pointer (a second
    /// click on the selected row opens it); the wheel moves the pane under the pointer.
    pub fn handle_mouse(&mut self, event: MouseEvent) {
        if !self.mouse {
            return;
        }
        let at = Position::new(event.column, event.row);
        let wheel = match event.kind {
            MouseEventKind::ScrollDown => Some(KeyCode::Down),
            MouseEventKind::ScrollUp => Some(KeyCode::Up),
            MouseEventKind::Down(MouseButton::Left) => None,
            _ => return,
        };
        if self.popup.is_some() {
            // A popup takes the wheel as arrows; clicks outside it do nothing.
            if let Some(code) = wheel {
                self.handle_popup_key(KeyEvent::new(code, KeyModifiers::NONE));
            }
            return;
        }
        if let Some(code) = wheel {
            return self.scroll_pane_at(at, code);
        }
        if let Some(index) = self.areas.tabs.iter().find(|(area, _)| area.contains(at)).map(|(_, index)| *index) {
            return self.switch_tab(index);
        }
        let row_in = |area: Rect| area.contains(at).then(|| at.y - area.y);
        if let Some(row) = row_in(self.areas.resources) {
            let index = (usize::from(row) + self.areas.resources_offset).checked_sub(1);
            if let Some(index) = index.filter(|i| *i < self.tab().resources.len() && row > 0) {
                self.tab_mut().resource = index;
                self.focus = Focus::Browser;
                self.open_resource();
            } else {
                self.focus = Focus::Resources;
            }
        } else if let Some(row) = row_in(self.areas.browser) {
            self.focus = Focus::Browser;
            let action = self.tab_mut().browser.click(row);
            self.on_browser_action(action);
        } else if let Some(row) = row_in(self.areas.inspector) {
            self.focus = Focus::Inspector;
            self.tab_mut().inspector.select_at(row);
        }
    }

    /// The wheel over a pane: three lines down or up, without moving the focus.
    pub(super) fn scroll_pane_at(&mut self, at: Position, code: KeyCode) {
        let key = KeyEvent::new(code, KeyModifiers::NONE);
        for _ in 0..3 {
            if self.areas.browser.contains(at) {
                let action = self.tab_mut().browser.handle_key(key);
                if let BrowserAction::Selected(_) = action {
                    self.tab_mut().remember_selection();
                }
            } else if self.areas.inspector.contains(at) {
                self.tab_mut().inspector.handle_key(key);
            } else if self.areas.resources.contains(at) {
                let tab = self.tab_mut();
                tab.resource = match code {
                    KeyCode::Down => (tab.resource + 1).min(tab.resources.len().saturating_sub(1)),
                    _ => tab.resource.saturating_sub(1),
                };
            }
        }
    }

    /// A bracketed paste: the text goes, as text, into the box or field being typed in (the
    /// filter, the search, a form field, a menu's query, the id to confirm); in the browser it
    /// opens the row filter. It never runs as keys, so pasting `orders:eu` does not press `o`.
    pub fn handle_paste(&mut self, text: &str) {
        let multi_line = matches!(&self.popup, Some(Popup::Form(form)) if form.focused_takes_lines());
        let text = paste_text(text, multi_line);
        if text.is_empty() {
            return;
        }
        match self.popup.as_mut() {
            Some(Popup::Form(form)) => return form.paste(&text),
            Some(Popup::Menu(menu)) => return menu.paste(&text),
            Some(Popup::Confirm(confirm)) => return confirm.paste(&text),
            Some(Popup::History(view)) => return view.paste(&text),
            Some(Popup::Save(prompt, _)) => return prompt.paste(&text),
            Some(Popup::Sandbox(view)) => {
                if view.paste(&text) {
                    return;
                }
            }
            Some(Popup::Help | Popup::Detail(_) | Popup::Copy(..)) => {}
            None => {
                let focus = self.focus;
                let tab = self.tab_mut();
                match focus {
                    Focus::Browser => return tab.browser.paste(&text),
                    Focus::Inspector if tab.inspector.paste(&text) => return,
                    Focus::Inspector | Focus::Resources => {}
                }
            }
        }
        let o = self.key_hint(Action::Operations);
        self.info(format!("paste ignored: nothing here takes text (/ filters, {o} opens a form)"));
    }

    pub(super) fn handle_pane_key(&mut self, key: KeyEvent) {
        match self.focus {
            Focus::Resources => match key.code {
                KeyCode::Down | KeyCode::Char('j') => {
                    let tab = self.tab_mut();
                    tab.resource = (tab.resource + 1).min(tab.resources.len().saturating_sub(1));
                }
                KeyCode::Up | KeyCode::Char('k') => {
                    let tab = self.tab_mut();
                    tab.resource = tab.resource.saturating_sub(1);
                }
                KeyCode::Home | KeyCode::Char('g') => self.tab_mut().resource = 0,
                KeyCode::End | KeyCode::Char('G') => {
                    let tab = self.tab_mut();
                    tab.resource = tab.resources.len().saturating_sub(1);
                }
                KeyCode::Enter | KeyCode::Right | KeyCode::Char('l') => {
                    self.focus = Focus::Browser;
                    self.open_resource();
                }
                _ => {}
            },
            // While the row filter is typed, every key is text (`h` and `l` too).
            Focus::Browser if self.tab().browser.is_typing() => {
                let action = self.tab_mut().browser.handle_key(key);
                self.on_browser_action(action);
            }
            Focus::Browser => match key.code {
                KeyCode::Esc => {
                    if let Some(id) = self.tab().loading {
                        self.executor.cancel(id);
                        self.purposes.remove(&id);
                        self.tab_mut().stop_loading();
                        self.info(format!("cancelled call {id}"));
                    } else if self.cancel_indexing(self.active) > 0 {
                        let tab = self.tab_mut();
                        // Rows of the page before stay; with none, say how to get them.
                        tab.browser.notice =
                            tab.page.is_none().then(|| ("cancelled; r loads it again".to_owned(), false));
                        self.info("cancelled indexing the response (r asks again)".to_owned());
                    } else if !self.back_to_previous_list() {
                        self.focus = Focus::Resources;
                    }
                }
                KeyCode::Left | KeyCode::Char('h') => self.focus = Focus::Resources,
                KeyCode::Right | KeyCode::Char('l') => self.focus = Focus::Inspector,
                _ => {
                    let action = self.tab_mut().browser.handle_key(key);
                    self.on_browser_action(action);
                }
            },
            Focus::Inspector => {
                // While `/` or `|` is typed, `y` is text like every other character.
                let typing = self.tab().inspector.is_typing();
                if key.code == KeyCode::Char('y') && key.modifiers.is_empty() && !typing {
                    match self.tab().inspector.copy_text() {
                        Some(text) => {
                            let what = human_bytes(text.len() as u64);
                            self.info(format!("{what} to be copied to the clipboard…"));
                            self.copying = Some(CopyJob { what, show_on_failure: false });
                            self.clipboard = Some(text);
                        }
                        None => self.error("nothing to copy here (binary, empty, or over 1 MB)"),
                    }
                    return;
                }
                if self.tab_mut().inspector.handle_key(key) {
                    return;
                }
                if matches!(key.code, KeyCode::Esc | KeyCode::Left | KeyCode::Char('h')) {
                    self.focus = Focus::Browser;
                }
            }
        }
    }

    /// What the browser said a key or a click did: open the record, or remember the selection.
    pub(super) fn on_browser_action(&mut self, action: BrowserAction) {
        match action {
            BrowserAction::Open(_) => {
                self.tab_mut().remember_selection();
                self.show_selected_record();
                if !self.open_row_as_service_says() && !self.fetch_selected_record() {
                    self.focus = Focus::Inspector;
                }
            }
            BrowserAction::Selected(_) => self.tab_mut().remember_selection(),
            BrowserAction::None => {}
        }
    }

    pub(super) fn handle_popup_key(&mut self, key: KeyEvent) {
        let Some(popup) = self.popup.as_ref() else { return };
        // The quit key closes a view rather than the console: say so, so the next q is no
        // surprise (and keys typed after it do not land in a console believed gone).
        let closing_with_quit = self.keymap.is(Action::Quit, &key).then(|| popup_label(popup));
        self.route_popup_key(key);
        if let (Some(label), None) = (closing_with_quit, &self.popup) {
            let q = self.key_hint(Action::Quit);
            self.info(format!("closed {label} · {q} again quits"));
        }
    }

    fn route_popup_key(&mut self, key: KeyEvent) {
        let Some(popup) = self.popup.as_mut() else { return };
        match popup {
            Popup::Help => {
                let closes = self.keymap.is(Action::Help, &key) || self.keymap.is(Action::Quit, &key);
                match key.code {
                    _ if closes => self.popup = None,
                    KeyCode::Esc | KeyCode::Char('?' | 'q') | KeyCode::Enter => self.popup = None,
                    KeyCode::Down | KeyCode::Char('j') => self.help_scroll = self.help_scroll.saturating_add(1),
                    KeyCode::Up | KeyCode::Char('k') => self.help_scroll = self.help_scroll.saturating_sub(1),
                    KeyCode::PageDown | KeyCode::Char(' ') => self.help_scroll = self.help_scroll.saturating_add(10),
                    KeyCode::PageUp => self.help_scroll = self.help_scroll.saturating_sub(10),
                    _ => {}
                }
            }
            Popup::Menu(menu) => match menu.handle_key(key) {
                MenuAction::Chosen(op) => {
                    self.popup = None;
                    if op.service != self.tab().service {
                        if let Some(index) = self.tabs.iter().position(|t| t.service == op.service) {
                            self.switch_tab(index);
                        }
                    }
                    self.open_form(op);
                }
                MenuAction::Command(command) => {
                    self.popup = None;
                    match command {
                        Command::Action(action) => self.run_action(action),
                        Command::Profile(name) => self.switch_profile(&name),
                        Command::Theme(name) => self.switch_theme(&name),
                    }
                }
                MenuAction::Cancel => self.popup = None,
                MenuAction::None => {}
            },
            Popup::Detail(detail) => match detail.handle_key(key) {
                DetailAction::Close => self.popup = None,
                DetailAction::RecordKey(key) => {
                    if let Some(record) = detail.record.clone() {
                        self.open_record_action(key, &record);
                    }
                }
                DetailAction::Run(command) => self.run_detail_command(command),
                DetailAction::None => {}
            },
            Popup::History(view) => match view.handle_key(key) {
                HistoryAction::Close => self.popup = None,
                HistoryAction::Inspect(record) => self.inspect_recorded(&record),
                HistoryAction::Edit(record) => self.reopen_recorded(&record, false),
                HistoryAction::Send(record) => self.reopen_recorded(&record, true),
                HistoryAction::None => {}
            },
            Popup::Sandbox(view) => match view.handle_key(key) {
                SandboxAction::Refresh => self.refresh_sandbox_view(),
                SandboxAction::Close => self.popup = None,
                SandboxAction::None => {}
            },
            Popup::Save(prompt, _) => match prompt.handle_key(key) {
                SaveAction::Save(path) => {
                    let url = prompt.url.clone();
                    let answer = prompt.answer.take();
                    self.close_save_prompt();
                    match answer {
                        Some(answer) => self.start_write(answer, path),
                        None => self.start_save(url, path),
                    }
                }
                SaveAction::Cancel => {
                    self.close_save_prompt();
                    self.info("nothing was saved");
                }
                SaveAction::None => {}
            },
            Popup::Copy(menu, _) => match menu.handle_key(key) {
                CopyMenuAction::Chosen(format) => {
                    self.copy_request(format);
                    self.close_copy_menu();
                }
                CopyMenuAction::Cancel => self.close_copy_menu(),
                CopyMenuAction::None => {}
            },
            Popup::Form(_) if key.code == KeyCode::Char('y') && key.modifiers == KeyModifiers::ALT => {
                if let Some(Popup::Form(form)) = self.popup.take() {
                    self.open_copy_menu(Some(Box::new(form)));
                }
            }
            Popup::Form(form) => match form.handle_key(key) {
                FormAction::Submit(values) => {
                    let op = form.op;
                    self.submit_form(op, values);
                }
                FormAction::Cancel => {
                    self.send_when_looked_up = None;
                    let (op, values) = (form.op, form.values());
                    self.tab_mut().drafts.insert(op.name, values);
                    self.popup = None;
                }
                FormAction::Edit(request) => self.pending_editor = Some(request),
                FormAction::None => self.refresh_form_notes(),
            },
            Popup::Confirm(confirm) => match confirm.handle_key(key) {
                ConfirmAction::Confirmed => {
                    let (op, values) = (confirm.op, confirm.values.clone());
                    self.popup = None;
                    self.send_operation(op, values);
                }
                ConfirmAction::Cancel => {
                    self.popup = None;
                    self.info("nothing was sent");
                }
                ConfirmAction::None => {}
            },
        }
    }
}

impl App {
    /// Ctrl-s in a form whose values are valid: checked against what the service says (a
    /// product's increments), then asked or sent. When that is still being asked for, the send
    /// waits for it (see [`App::resume_waiting_send`]): a Ctrl-s is never dropped.
    pub(super) fn submit_form(&mut self, op: &'static Operation, values: Values) {
        self.tab_mut().drafts.insert(op.name, values.clone());
        self.send_when_looked_up = None;
        if self.form_lookups() > 0 {
            self.refresh_form_notes();
            self.send_when_looked_up = Some(op);
            if let Some(Popup::Form(form)) = self.popup.as_mut() {
                form.message =
                    Some("asking the service what this form checks against; it sends when answered".to_owned());
            }
            return;
        }
        // What the service sees wrong (a price finer than the increment) is marked beside its
        // field, and nothing is sent.
        let problems = self.form_problems(op, &values);
        if let (false, Some(Popup::Form(form))) = (problems.is_empty(), self.popup.as_mut()) {
            for (name, problem) in problems {
                form.mark(name, problem);
            }
            form.message = Some("fix the marked fields; nothing was sent".to_owned());
            return;
        }
        self.popup = None;
        if services::console(op.service).live_form().is_some_and(|form| form.name == op.name) {
            return self.start_stream(op, values);
        }
        self.request_operation(op, values);
    }

    /// A lookup came back: a send that waited for it goes on, with the form's values as they
    /// are now, if the form is still open.
    pub(super) fn resume_waiting_send(&mut self) {
        let Some(op) = self.send_when_looked_up else { return };
        let Some(Popup::Form(form)) = self.popup.as_mut() else {
            self.send_when_looked_up = None;
            return;
        };
        if form.op.name != op.name {
            self.send_when_looked_up = None;
            return;
        }
        if !form.validate() {
            self.send_when_looked_up = None;
            return;
        }
        let values = form.values();
        self.submit_form(op, values);
    }
}

/// What a popup is called when it is closed: `the shipment view`, `the help`.
fn popup_label(popup: &Popup) -> String {
    match popup {
        Popup::Help => "the help".to_owned(),
        Popup::Menu(_) => "the menu".to_owned(),
        Popup::Form(form) => format!("the {} form", form.op.name),
        Popup::Confirm(confirm) => format!("the {} confirmation", confirm.op.name),
        Popup::Detail(detail) => {
            let kind = detail.title.split_whitespace().next().unwrap_or("record");
            format!("the {} view", kind.trim_end_matches(|c: char| !c.is_alphanumeric()))
        }
        Popup::Sandbox(_) => "the sandbox view".to_owned(),
        Popup::History(_) => "the history".to_owned(),
        Popup::Copy(..) => "the copy menu".to_owned(),
        Popup::Save(..) => "the save prompt".to_owned(),
    }
}

/// Pasted text as it may be typed: what a terminal would act on is left out, and line breaks
/// become spaces unless the field takes several lines (a final one is dropped either way).
pub(super) fn paste_text(text: &str, multi_line: bool) -> String {
    let text = text.replace("\r\n", "\n").replace('\r', "\n");
    let text = text.strip_suffix('\n').unwrap_or(&text);
    text.chars()
        .filter_map(|c| match c {
            '\n' if multi_line => Some('\n'),
            '\n' | '\t' => Some(' '),
            c if crate::inert::is_unsafe(c) => None,
            c => Some(c),
        })
        .collect()
}
