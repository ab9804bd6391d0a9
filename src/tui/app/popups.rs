//! Popups: forms, the sandbox view, saving a file, charts, the editor hand-off, copying a request, table views' keys and the call history.

use super::*;

impl App {
    /// Opens `op`'s form, pre-filled from the selection, the context and the last draft.
    pub fn open_form(&mut self, op: &'static Operation) {
        let tab = self.tab();
        // In the inspector, the selected object (a device inside a response, say) is the record.
        let inspected = match (self.focus, tab.inspector.selected_json()) {
            (Focus::Inspector, Some(Value::Object(map))) => Some(map),
            _ => None,
        };
        let values = tab.prefill(op, inspected.as_ref());
        self.open_form_with(op, &values);
    }

    /// Opens `op`'s form with exactly these values.
    pub(super) fn open_form_with(&mut self, op: &'static Operation, values: &Values) {
        let tab = self.tab();
        let lines = services::console(op.service).text_lines(op);
        let mut form = Form::with_text_lines(op, values, tab.target_line(), lines);
        if self.read_only && op.mutates {
            form.message =
                Some(format!("{}: this operation changes state and will not be sent", self.read_only_reason()));
        }
        self.popup = Some(Popup::Form(form));
        self.form_lookups();
        self.refresh_form_notes();
    }

    /// Where the sandbox view of the active tab reads from, or why it has nothing to read.
    pub(super) fn sandbox_control(&self) -> Result<String, String> {
        let tab = self.tab();
        match tab.mode {
            Mode::Live => Err(format!(
                "{} is LIVE: its calls go to the real service, so there is no sandbox to show.",
                tab.service.title()
            )),
            Mode::Embedded => {
                self.embedded_control.clone().ok_or_else(|| "the embedded sandbox has no control port".into())
            }
            Mode::External if self.profile == crate::config::LOCAL_PROFILE => Ok(self.setup.as_ref().map_or_else(
                || format!("http://127.0.0.1:{}", crate::sandbox::DEFAULT_PORT_BASE),
                Setup::local_control,
            )),
            Mode::External => external_control(&tab.target.base_url, tab.service).ok_or_else(|| {
                format!(
                    "{} points at {}, which is not an opsdeck sandbox on this machine: no control port to read.",
                    tab.service.title(),
                    tab.target.base_url
                )
            }),
        }
    }

    pub(super) fn open_sandbox_view(&mut self) {
        let view = SandboxView::new(self.tab().service, self.sandbox_control());
        self.popup = Some(Popup::Sandbox(view));
        self.refresh_sandbox_view();
    }

    /// Asks where to save the file at `url`, starting from `file_name`; the view open (if any)
    /// comes back when the prompt closes.
    pub(super) fn open_save_prompt(&mut self, url: String, file_name: &str) {
        let prompt = SavePrompt::new(url, file_name);
        match self.popup.take() {
            None => self.popup = Some(Popup::Save(prompt, None)),
            Some(Popup::Detail(detail)) => self.popup = Some(Popup::Save(prompt, Some(Box::new(detail)))),
            // The user moved on to something else (a form) while the file was being made: it
            // stays, and the view's key saves the file later.
            Some(other) => {
                self.popup = Some(other);
                let b = self.key_hint(Action::TableView);
                self.info(format!("{file_name} is ready: its view saves it ({b} brings the view back)"));
            }
        }
    }

    pub(super) fn close_save_prompt(&mut self) {
        if let Some(Popup::Save(_, back)) = self.popup.take() {
            self.popup = back.map(|detail| Popup::Detail(*detail));
        }
    }

    /// Downloads `url` to `path` on a spawned task (no credential goes with it: the link is
    /// the server's and may point anywhere); the status line says how it went.
    pub(super) fn start_save(&mut self, url: String, path: std::path::PathBuf) {
        if let Err(e) = save_file::check_url(&url) {
            return self.error(format!("not saved: {e}"));
        }
        let Some(sender) = self.background.clone() else {
            return self.error("this console cannot run background downloads");
        };
        let client = match self.download_client.clone().map_or_else(save_file::download_client, Ok) {
            Ok(client) => client,
            Err(e) => return self.error(e),
        };
        self.download_client = Some(client.clone());
        self.background_pending += 1;
        self.info(format!("saving {}…", path.display()));
        let tab = self.active;
        tokio::spawn(async move {
            let report = save_file::download_to(client, url, path, save_file::MAX_FILE_BYTES).await;
            let _ = sender.send(Background::Saved(tab, report));
        });
    }

    /// Offers to save an answer that is a file itself (the audio of text to speech): a prompt
    /// for the path, starting from a name no file has yet in the current folder.
    pub(super) fn open_answer_save_prompt(&mut self, op: &'static Operation, response: &client::Response) {
        let content_type = response.content_type().map(str::to_owned);
        let ext = save_file::extension(content_type.as_deref());
        let stem = op.name.split('_').next().unwrap_or(op.name);
        let name = save_file::free_name(std::path::Path::new("."), stem, ext);
        let from = format!(
            "the answer of {} ({}{})",
            op.full_name(),
            human_bytes(response.body.len() as u64),
            content_type.as_deref().map(|t| format!(", {t}")).unwrap_or_default()
        );
        let answer = save_file::SavedAnswer { op, content_type, body: response.body.clone() };
        self.popup = Some(Popup::Save(SavePrompt::for_answer(from, answer, &name), None));
    }

    /// Writes an answer to `path` (created new, never replacing a file) off the UI thread; once
    /// written, its service's view of it is shown (the audio's format and duration).
    pub(super) fn start_write(&mut self, answer: save_file::SavedAnswer, path: std::path::PathBuf) {
        let save_file::SavedAnswer { op, content_type, body } = answer;
        let view = services::console(op.service).saved_view(op, content_type.as_deref(), &body, &path).map(Box::new);
        let tab = self.active;
        let write = move || {
            let result = save_file::write_new(&path, &body);
            SaveReport { path, result, view }
        };
        self.info("saving…");
        match self.background.clone() {
            Some(sender) => {
                self.background_pending += 1;
                tokio::task::spawn_blocking(move || {
                    let _ = sender.send(Background::Saved(tab, write()));
                });
            }
            // A console without its event loop (some tests): written here.
            None => {
                self.background_pending += 1;
                self.on_background(Background::Saved(tab, write()));
            }
        }
    }

    /// Sends the change of faults the view holds (if any), then reads the requests and faults
    /// again, on a spawned task; the view shows "loading" meanwhile, and what the control port
    /// said when the report comes back.
    pub(super) fn refresh_sandbox_view(&mut self) {
        let Some(Popup::Sandbox(view)) = self.popup.as_mut() else { return };
        let Ok(control) = view.control.clone() else { return };
        let Some(sender) = self.background.clone() else {
            view.detail_note("this console cannot run background reads");
            return;
        };
        let client = match self.control_client.clone().map_or_else(sandbox_view::control_client, Ok) {
            Ok(client) => client,
            Err(e) => {
                view.detail_note(&e);
                return;
            }
        };
        self.control_client = Some(client.clone());
        let (service, generation, change) = (view.service, view.start_refresh(), view.take_change());
        self.background_pending += 1;
        tokio::spawn(async move {
            let report = sandbox_view::change_then_fetch(client, control, service, generation, change).await;
            let _ = sender.send(Background::Sandbox(report));
        });
    }

    /// The chart of the active tab, when charts are shown and its page is a time series whose
    /// point is time (stats, usage, candles) or one the user asked to see charted.
    pub fn chart(&self) -> Option<&ChartView> {
        let tab = self.tab();
        let asked = tab.chart_asked_for.is_some() && tab.chart_asked_for == tab.page.as_ref().map(|p| p.op.name);
        tab.chart.as_ref().filter(|chart| !self.chart_hidden && (chart.data.automatic || asked))
    }

    /// `C`: a page that could be charted but is not by itself (a list of transactions with their
    /// amounts) is charted on request; otherwise charts are hidden or shown again.
    pub(super) fn toggle_chart(&mut self) {
        let tab = self.tab();
        let chartable = tab.chart.as_ref().is_some_and(|c| !c.data.automatic);
        let page = tab.page.as_ref().map(|p| p.op.name);
        if chartable && self.chart().is_none() && page.is_some() {
            self.chart_hidden = false;
            self.tabs[self.active].chart_asked_for = page;
            return self.info("chart shown: [ and ] choose the series");
        }
        self.chart_hidden = !self.chart_hidden;
        match (self.chart_hidden, self.tab().chart.is_some()) {
            (true, _) => self.info("charts hidden (C shows them)"),
            (false, true) => self.info("chart shown: [ and ] choose the series"),
            (false, false) => self.info(NO_CHART),
        }
    }

    pub(super) fn cycle_chart(&mut self, forward: bool) {
        let shown = self.chart().is_some();
        match self.tabs[self.active].chart.as_mut() {
            Some(chart) if shown => {
                chart.cycle(forward);
                let name = chart.series().map(|s| s.name.clone()).unwrap_or_default();
                self.info(format!("chart: {name}"));
            }
            Some(_) => self.info("no chart shown: C shows it"),
            None => self.info(NO_CHART),
        }
    }

    /// The editor run for `request` is done: its text goes back into the form's field (or the
    /// form says why it kept the old text).
    pub fn on_edited(&mut self, request: &EditRequest, result: Result<String, String>) {
        let edited = result.is_ok();
        match self.popup.as_mut() {
            Some(Popup::Form(form)) => form.apply_edit(request, result),
            _ => return self.error("the form closed while its field was being edited; nothing changed"),
        }
        if edited {
            self.info(format!("{} edited in the editor", request.field));
        } else {
            self.error(format!("{} kept its text: the editor did not finish", request.field));
        }
    }

    /// `Y`: asks how to copy the request: the form's (`form`, which comes back afterwards) or the
    /// last one sent from this tab.
    pub(super) fn open_copy_menu(&mut self, form: Option<Box<Form>>) {
        let subject = match &form {
            Some(form) => format!("the {} form as filled", form.op.full_name()),
            None => match self.tab().sent.as_ref() {
                Some(request) => format!("last sent: {}", request.request_line()),
                None => {
                    self.info("nothing sent from this tab yet: send something, or press Alt-y in a form");
                    return;
                }
            },
        };
        self.popup = Some(Popup::Copy(CopyMenu::new(subject), form));
    }

    pub(super) fn close_copy_menu(&mut self) {
        if let Some(Popup::Copy(_, form)) = self.popup.take() {
            self.popup = form.map(|form| Popup::Form(*form));
        }
    }

    /// Copies the request as a runnable command with `$VARIABLE`s for the secrets: the request
    /// of the form being filled when the copy menu was opened from one, else the last request
    /// sent from this tab. The event loop copies it and [`App::on_copied`] says how.
    pub fn copy_request(&mut self, format: CopyFormat) {
        let tab = self.tab();
        let form = match &self.popup {
            Some(Popup::Copy(_, Some(form))) => Some(&**form),
            Some(Popup::Form(form)) => Some(form),
            _ => None,
        };
        let request = match form {
            Some(form) => client::build(form.op, &form.values(), None, &tab.target)
                .map_err(|e| format!("the form cannot be copied as a request yet: {e}")),
            None => self.tab().sent.clone().ok_or_else(|| "nothing sent from this tab yet".to_owned()),
        };
        let command = request.and_then(|request| {
            let render = match format {
                CopyFormat::Curl => client::request::to_curl,
                CopyFormat::Httpie => client::request::to_httpie,
            };
            render(&request, &tab.target.credentials).map_err(|e| e.to_string())
        });
        match command {
            Ok(text) => {
                let what = format!("{} command", format.label());
                self.info(format!("{what} to be copied…"));
                self.copying = Some(CopyJob { what: format!("as {}", format.label()), show_on_failure: true });
                self.clipboard = Some(text);
            }
            Err(message) => self.error(message),
        }
    }

    /// The event loop tried to copy `text`: say how, or why not; a command that could not be
    /// copied is shown in the inspector, where it can be selected.
    pub fn on_copied(&mut self, text: String, result: Result<crate::clipboard::Copied, String>) {
        let job =
            self.copying.take().unwrap_or(CopyJob { what: human_bytes(text.len() as u64), show_on_failure: false });
        match result {
            Ok(how) => self.info_briefly(self.active, format!("copied {} {how}", job.what)),
            Err(why) if job.show_on_failure => {
                let tab = self.tab_mut();
                tab.inspector.show(ResponseView {
                    title: format!("command {}", job.what),
                    status: None,
                    duration: Duration::ZERO,
                    request_line: String::new(),
                    headers: Vec::new(),
                    body: wrap_command(&text, 44).into(),
                    content_type: Some("text/plain".into()),
                });
                self.focus = Focus::Inspector;
                self.error(format!("could not copy: {why}; the command is shown in the inspector"));
            }
            Err(why) => self.error(format!("could not copy: {why}")),
        }
    }

    /// A key of a table view: send an operation (asking first when destructive), open a form,
    /// or show the chart of the response.
    pub(super) fn run_detail_command(&mut self, command: DetailCommand) {
        match command {
            DetailCommand::Send { op: name, values } => {
                let Some(op) = self.operation_of_tab(name) else { return };
                let values: Values = values.into_iter().collect();
                if op.asks_first(&|name| values.get(name).cloned()) {
                    self.request_operation(op, values);
                } else {
                    // The view stays open; the answer replaces it.
                    self.send_operation(op, values);
                }
            }
            DetailCommand::Form { op: name, values } => {
                let Some(op) = self.operation_of_tab(name) else { return };
                let values: Values = values.into_iter().collect();
                self.open_form_with(op, &values);
            }
            DetailCommand::Open { op: name, values } => {
                let Some(op) = self.operation_of_tab(name) else { return };
                let viewed = match self.popup.take() {
                    Some(Popup::Detail(detail)) => detail.record,
                    _ => None,
                };
                // The record of the view names what it leads to (`holds of BTC`), whatever row
                // is selected by then.
                if let Some(Value::Object(record)) = viewed {
                    self.tab_mut().name_ids_after(&record, &values);
                }
                // A list a record's view leads to (an account's holds) goes back to the list the
                // record was in.
                let tab = self.tab_mut();
                if let Some(page) = tab.page.as_ref().filter(|page| op.is_list() && page.op.name != op.name) {
                    let from = (page.op, page.values.clone());
                    tab.remember_where_from(Some(from));
                }
                self.request_operation(op, values.into_iter().collect());
            }
            DetailCommand::Save { url, file_name } => self.open_save_prompt(url, &file_name),
            DetailCommand::SendThenSave { op: name, values, pointer, file_name } => {
                let Some(op) = self.operation_of_tab(name) else { return };
                // The view stays open and takes the answer; the save prompt follows it.
                if let Some(id) = self.send_operation(op, values.into_iter().collect()) {
                    self.save_after = Some((id, pointer, file_name));
                }
            }
            // A view asks its own questions; one never reaches the app.
            DetailCommand::Choose { .. } => {}
            DetailCommand::Copy { text, what } => {
                // Never shown in the inspector when no clipboard takes it: it may be a secret.
                self.info(format!("copying {what}…"));
                self.copying = Some(CopyJob { what, show_on_failure: false });
                self.clipboard = Some(text);
            }
            DetailCommand::Chart => {
                self.popup = None;
                self.chart_hidden = false;
                if self.tab().chart.is_some() {
                    self.focus = Focus::Browser;
                    self.info("chart under the list: [ and ] choose the series, C hides it, b brings the table back");
                } else {
                    self.info(NO_CHART);
                }
            }
        }
    }

    /// Opens the history view: past calls, newest first.
    pub fn open_history(&mut self) {
        let store = match &self.history {
            Some(recorder) => recorder.reader(),
            None => Err("the history is off: `[history] enabled = false` in config.toml, or its file could not be \
                         opened (the status line said why at start)"
                .to_owned()),
        };
        self.popup = Some(Popup::History(HistoryView::new(store)));
    }

    /// Switches to the tab of a recorded call's service; `load`: loading its first list if it
    /// has not been shown yet (not when a stored response is about to fill its inspector, which
    /// that first list would replace).
    pub(super) fn switch_to_service(&mut self, service: &str, load: bool) {
        let Some(index) = self.tabs.iter().position(|t| t.service.name() == service) else { return };
        if load {
            self.switch_tab(index);
            return;
        }
        self.active = index;
        let tab = self.tab_mut();
        if !tab.started && tab.page.is_none() {
            let resource = tab.resource_name().to_owned();
            tab.browser.notice = Some((format!("r loads {resource}"), false));
        }
    }

    /// Shows a recorded call's stored response in its service's inspector.
    pub(super) fn inspect_recorded(&mut self, record: &Record) {
        self.popup = None;
        self.switch_to_service(&record.service, false);
        let body = match (&record.response, &record.error) {
            (Some(body), _) if !body.is_empty() => body.clone(),
            (_, Some(error)) => serde_json::to_vec_pretty(&json!({ "error": error })).unwrap_or_default(),
            _ => Vec::new(),
        };
        let cut = if record.truncated { ", cut at [history] max_body_bytes" } else { "" };
        self.inspect(
            self.active,
            ResponseView {
                title: format!("history #{} {}", record.id, record.operation),
                status: record.status,
                duration: Duration::from_millis(record.duration_ms),
                request_line: format!(
                    "{} {} · {} UTC{cut}",
                    record.target,
                    record.base_url,
                    crate::history::short_time(record.at_ms)
                ),
                headers: Vec::new(),
                body: body.into(),
                content_type: record.content_type.clone(),
            },
        );
        self.focus = Focus::Inspector;
        let when = crate::history::short_time(record.at_ms);
        self.info(format!("recorded call #{} of {} ({when} UTC), as stored", record.id, record.operation));
    }

    /// Opens a recorded call's form with its values (`send`: sends it at once when it can go as it
    /// was, with the usual confirmation of destructive operations).
    pub(super) fn reopen_recorded(&mut self, record: &Record, send: bool) {
        let Some(op) = record.operation() else {
            self.error(format!("{} {} is not an operation of this opsdeck", record.service, record.operation));
            return;
        };
        self.popup = None;
        self.switch_to_service(&record.service, true);
        let values = record.values();
        // Anything that could send it somewhere else, or differently, than it went: the user
        // checks the form and presses Ctrl-s.
        let tab = self.tab();
        let here = crate::history::target_label(&tab.mode);
        let mut notes = Vec::new();
        if record.target != here || (here != "SANDBOX" && record.base_url != tab.target.base_url) {
            notes.push(format!(
                "recorded on {} {}; this tab sends to {here} {}",
                record.target, record.base_url, tab.target.base_url
            ));
        }
        if record.profile != self.profile {
            notes.push(format!("recorded with profile {}; this is {}", record.profile, self.profile));
        }
        if record.has_redacted_values() {
            notes.push("a secret value was not kept: fill in each [redacted] field".into());
        }
        if record.body.is_some() {
            notes.push("recorded with a whole --body document, which forms do not take".into());
        }
        if send && notes.is_empty() {
            self.request_operation(op, values);
            return;
        }
        self.open_form_with(op, &values);
        if let Some(Popup::Form(form)) = self.popup.as_mut() {
            if send {
                notes.push("check it and press Ctrl-s to send".into());
            }
            let mut message: Vec<String> = form.message.take().into_iter().collect();
            message.extend(notes);
            form.message = (!message.is_empty()).then(|| message.join("; "));
        }
    }
}

/// A shell command spread over lines of about `width` columns, broken only between words (never
/// inside quotes) with `\` continuations, so it reads well and still runs when pasted.
pub(super) fn wrap_command(command: &str, width: usize) -> String {
    let mut words = Vec::new();
    let (mut word, mut quote, mut escaped) = (String::new(), None, false);
    for c in command.chars() {
        if std::mem::take(&mut escaped) {
            word.push(c);
            continue;
        }
        match (c, quote) {
            ('\\', None | Some('"')) => escaped = true,
            (' ', None) => {
                if !word.is_empty() {
                    words.push(std::mem::take(&mut word));
                }
                continue;
            }
            ('\'' | '"', None) => quote = Some(c),
            (c, Some(q)) if c == q => quote = None,
            _ => {}
        }
        word.push(c);
    }
    if !word.is_empty() {
        words.push(word);
    }
    let mut out = String::new();
    let mut line = 0;
    for word in words {
        if line > 0 && line + 1 + word.chars().count() > width {
            out.push_str(" \\\n  ");
            line = 2;
        } else if line > 0 {
            out.push(' ');
            line += 1;
        }
        line += word.chars().count();
        out.push_str(&word);
    }
    out.push('\n');
    out
}

/// The control port of an `opsdeck sandbox` serving `service` at `base_url`: every service
/// listens at the port base plus its offset, the control port at the base itself.
pub(super) fn external_control(base_url: &str, service: Service) -> Option<String> {
    let url = reqwest::Url::parse(base_url).ok()?;
    let host = url.host_str()?;
    let loopback = host == "localhost" || host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback());
    let port = url.port()?.checked_sub(crate::sandbox::port_offset(service, None))?;
    loopback.then(|| format!("http://{host}:{port}"))
}
