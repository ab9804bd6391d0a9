//! Calls: sending an operation (read-only and confirmations first), what each answer does, bodies indexed off the UI thread, and the history record of each call.

use super::*;

impl App {
    /// A form was submitted: ask first if the operation is destructive, saying what it will
    /// spend or do when the records seen tell (the price of the rate being bought).
    pub(super) fn request_operation(&mut self, op: &'static Operation, values: Values) {
        let spending = op.spending(&|name| values.get(name).cloned());
        if op.destructive || spending.is_some() {
            let live = self.tab().target.live;
            let console = services::console(op.service);
            // What the question counts is asked anew (the open orders a cancel-all cancels):
            // a list seen earlier may no longer be true.
            let lookups = console.confirm_lookups(op, &values);
            for lookup in &lookups {
                self.tab_mut().looked_up.remove(&lookup.key);
            }
            self.ask_lookups(lookups);
            let mut confirm = Confirm::new(op, values, live, self.profile.clone());
            confirm.headline = console.confirm_headline(op);
            confirm.badge = self.tab().target_line();
            confirm.effects = self.confirm_effects(op, &confirm.values);
            self.popup = Some(Popup::Confirm(confirm));
        } else {
            self.send_operation(op, values);
        }
    }

    /// What a confirmation says `op` will do, from the records seen and the answers asked for it.
    fn confirm_effects(&self, op: &'static Operation, values: &Values) -> Vec<String> {
        let console = services::console(op.service);
        let mut effects = console.effects(op, values, &|id| self.known_record(id));
        effects.extend(console.effects_seen(op, values, &|name| self.seen_list(name)));
        let tab = self.tab();
        let looked_up = |key: &str| {
            if tab.looking_up.contains(key) {
                None
            } else {
                tab.looked_up.get(key).cloned()
            }
        };
        effects.extend(console.effects_looked_up(op, values, &looked_up));
        effects.extend(op.spending(&|name| values.get(name).cloned()));
        effects
    }

    /// A record of the active tab seen by id: the one a view was made from, or a row of the
    /// browser.
    pub(super) fn known_record(&self, id: &str) -> Option<Value> {
        let tab = self.tab();
        let has_id = |record: &&Value| record.get("id").and_then(Value::as_str) == Some(id);
        let open = match &self.popup {
            Some(Popup::Detail(detail)) => detail.record.as_ref(),
            _ => None,
        };
        let viewed = tab.detail.as_ref().and_then(|d| d.record.as_ref());
        open.into_iter()
            .chain(viewed)
            .find(has_id)
            .cloned()
            .or_else(|| tab.browser.find_record("id", id))
            .or_else(|| tab.looked_up.get(id).cloned())
    }

    /// The records of `list_op` as the active tab has them in view, with what the list was
    /// asked with and whether more pages follow; `None` when another list is in view.
    pub(super) fn seen_list(&self, list_op: &str) -> Option<services::Seen> {
        let tab = self.tab();
        let Some(page) = tab.page.as_ref().filter(|p| p.op.name == list_op) else {
            // A list seen earlier in this tab (a project's keys before its deletion).
            let (values, records, more) = tab.seen_lists.get(list_op)?;
            return Some(services::Seen { records: records.clone(), values: values.clone(), more: *more });
        };
        let more = matches!(pagination::next_page(page.op.paging, &page.request, &page.response), Ok(Some(_)));
        Some(services::Seen { records: tab.browser.records(), values: page.values.clone(), more })
    }

    /// What the open form's service says of its values (an order's cost and hold), kept
    /// current as the user types.
    pub(super) fn refresh_form_notes(&mut self) {
        let Some(Popup::Form(form)) = &self.popup else { return };
        let (op, values) = (form.op, form.values());
        let notes = services::console(op.service).form_notes(op, &values, &|id| self.known_record(id));
        if let Some(Popup::Form(form)) = self.popup.as_mut() {
            form.notes = notes;
        }
    }

    /// Asks quietly for what the open form needs to know and the tab does not yet (a product's
    /// increments, the fee rates), each once; says how many of them are still unanswered. Asked
    /// when the form opens and when it is sent, never while a value is half typed.
    pub(super) fn form_lookups(&mut self) -> usize {
        let Some(Popup::Form(form)) = &self.popup else { return 0 };
        let (op, values) = (form.op, form.values());
        let lookups = services::console(op.service).lookups(op, &values, &|id| self.known_record(id));
        self.ask_lookups(lookups)
    }

    /// Asks for each lookup the tab has no answer to and is not asking for yet; says how many
    /// are unanswered.
    pub(super) fn ask_lookups(&mut self, lookups: Vec<services::Lookup>) -> usize {
        let mut waiting = 0;
        for lookup in lookups {
            let tab = self.tab();
            if tab.looking_up.contains(&lookup.key) {
                waiting += 1;
                continue;
            }
            if tab.looked_up.contains_key(&lookup.key) {
                continue;
            }
            let Some(lookup_op) = tab.service.operation(lookup.op) else { continue };
            let Ok(request) = client::build(lookup_op, &lookup.values, None, &tab.target) else { continue };
            let credentials = tab.target.credentials.clone();
            let id = self.executor.submit(lookup_op.full_name(), request, credentials, None);
            let index = self.active;
            self.tabs[index].looking_up.insert(lookup.key.clone());
            self.purposes.insert(id, (Purpose::Lookup { tab: index, key: lookup.key }, Instant::now()));
            waiting += 1;
        }
        waiting
    }

    /// The problems of the open form its service sees (a price finer than the product's
    /// increment), by field.
    pub(super) fn form_problems(&self, op: &'static Operation, values: &Values) -> Vec<(&'static str, String)> {
        services::console(op.service).form_problems(op, values, &|id| self.known_record(id))
    }

    /// A form's ask came back: its answer is known under `key` (a failure as `null`, so it is
    /// not asked again and the form says it is unknown).
    fn on_lookup(&mut self, tab: usize, key: String, result: Result<client::Response, Arc<CallError>>) {
        let body = result.ok().and_then(|r| serde_json::from_slice::<Value>(&r.body).ok()).unwrap_or(Value::Null);
        let tab_state = &mut self.tabs[tab];
        tab_state.looking_up.remove(&key);
        tab_state.looked_up.insert(key, body);
        if tab == self.active {
            self.refresh_form_notes();
            self.resume_waiting_send();
            if let Some(Popup::Confirm(confirm)) = &self.popup {
                let effects = self.confirm_effects(confirm.op, &confirm.values);
                if let Some(Popup::Confirm(confirm)) = self.popup.as_mut() {
                    confirm.effects = effects;
                }
            }
        }
    }

    /// Sends `op` from the active tab; returns its call, or `None` when nothing was sent (the
    /// status line says why).
    pub(super) fn send_operation(&mut self, op: &'static Operation, values: Values) -> Option<CallId> {
        if self.read_only && op.mutates {
            let reason = self.read_only_reason();
            let fix = if self.started_read_only() {
                "restart without --read-only to send it"
            } else {
                "`read only` in the palette (:) turns it off"
            };
            self.error(format!("{} changes state and {reason}; {fix}", op.full_name()));
            return None;
        }
        let tab_index = self.active;
        let tab = self.tab();
        match client::build(op, &values, None, &tab.target) {
            Ok(request) => {
                let credentials = tab.target.credentials.clone();
                // A list's answer becomes the browser's page (a drill to an account's holds):
                // it supersedes the list still loading there.
                let slot = op.is_list().then(|| tab.browser_slot());
                if slot.is_some() {
                    self.tabs[tab_index].loading = None;
                }
                let id = self.executor.submit(op.full_name(), request.clone(), credentials, slot);
                self.tabs[tab_index].sent = Some(request.clone());
                self.purposes.insert(id, (Purpose::Operation { tab: tab_index, op, values, request }, Instant::now()));
                self.info(format!("sending {} ({id})", op.full_name()));
                Some(id)
            }
            Err(e) => {
                self.error(format!("{}: {e}", op.full_name()));
                self.open_form(op);
                None
            }
        }
    }

    /// `--read-only` was given: it holds for the whole session, whatever the profile.
    pub(super) fn started_read_only(&self) -> bool {
        self.setup.as_ref().is_some_and(|s| s.read_only_flag)
    }

    /// The key that runs `action`, for hints in messages (`press o`), or its palette name.
    pub(super) fn key_hint(&self, action: Action) -> String {
        self.keymap.hint(action).unwrap_or_else(|| format!(": {}", action.name().replace('_', " ")))
    }

    /// Why nothing that changes state is sent: the flag, the profile, or the palette's toggle.
    pub(super) fn read_only_reason(&self) -> String {
        let setup = self.setup.as_ref();
        if self.started_read_only() {
            "--read-only is on".to_owned()
        } else if setup.is_some_and(|s| s.config.profile_read_only(Some(&self.profile))) {
            format!("profile {} is read-only", self.profile)
        } else {
            "read-only is on".to_owned()
        }
    }

    /// A call reported back.
    pub fn on_call_event(&mut self, event: CallEvent) {
        let Some(delivered) = self.executor.accept(event) else { return };
        let Some((purpose, sent)) = self.purposes.remove(&delivered.id) else { return };
        self.record_call(&purpose, &delivered.result, sent.elapsed());
        match purpose {
            Purpose::List { tab, op, values, request, previous, .. } => {
                let tab_state = &mut self.tabs[tab];
                if tab_state.loading == Some(delivered.id) {
                    tab_state.loading = None;
                }
                match delivered.result {
                    Ok(response) => {
                        self.show_page(tab, Page { op, values, request, previous, response });
                        self.tabs[tab].clear_view_error();
                    }
                    Err(error) => {
                        let tab_state = &mut self.tabs[tab];
                        let hint = crate::config::sandbox_unreachable_hint(&tab_state.target, &error)
                            .map(|hint| format!("; {hint}"))
                            .unwrap_or_default();
                        tab_state.browser.notice = Some((format!("{}: {error}{hint}", op.name), true));
                        tab_state.inspector.show(error_view(op, &error));
                        self.tabs[tab].say_view_error(format!("{}: {error}{hint}", op.full_name()));
                    }
                }
            }
            Purpose::Tail { tab, op } => self.on_tail_page(tab, op, delivered.result),
            Purpose::Rows { tab, op } => self.on_rows_page(tab, op, delivered.result),
            Purpose::Watch { tab, op, subject, values } => {
                self.on_watch_answer(tab, op, (&subject, &values), delivered.result);
            }
            Purpose::Lookup { tab, key } => self.on_lookup(tab, key, delivered.result),
            Purpose::Live { tab, list, id } => self.on_live_answer(tab, list, id, delivered.result),
            Purpose::Operation { tab, op, values, request } => match delivered.result {
                Ok(response) => {
                    let save = self.save_after.take_if(|(id, ..)| *id == delivered.id);
                    let small = response.body.len() <= INDEX_INLINE_LIMIT;
                    if small || op.is_list() {
                        // A small answer is read here at once; a list's page is indexed with its
                        // rows (below), and only a small one is also read for a view.
                        let body = small.then(|| serde_json::from_slice(&response.body).ok()).flatten();
                        if !op.is_list() {
                            self.inspect(tab, response_view(op.name, &response));
                        }
                        self.answered(tab, Answer { op, values, request, response, save }, body);
                    } else {
                        let body = response.body.clone();
                        let then = Then::Answer(Answer { op, values, request, response, save });
                        self.start_indexing(tab, body, None, then);
                    }
                }
                Err(error) => {
                    self.save_after.take_if(|(id, ..)| *id == delivered.id);
                    self.tabs[tab].inspector.show(error_view(op, &error));
                    let o = self.key_hint(Action::Operations);
                    let hint = crate::config::sandbox_unreachable_hint(&self.tabs[tab].target, &error)
                        .map(|hint| format!("; {hint}"))
                        .unwrap_or_default();
                    self.error_on(
                        tab,
                        format!("{}: {error}{hint} ({o} reopens the form with your values)", op.full_name()),
                    );
                }
            },
        }
        if let Some(failure) = self.history.as_ref().and_then(crate::history::Recorder::take_failure) {
            self.error(format!("{failure}; calls are not recorded in the history"));
        }
    }

    /// An operation's answer, read (`body`: its JSON, when small enough for a view): its view,
    /// chart, list page, the file it links to, and what the status line says.
    pub(super) fn answered(&mut self, tab: usize, answer: Answer, body: Option<Value>) {
        let Answer { op, values, request, response, save } = answer;
        let file_answer = op.response == crate::catalog::ResponseFormat::Bytes
            && (200..300).contains(&response.status)
            && !response.body.is_empty();
        if file_answer {
            if tab == self.active {
                self.open_answer_save_prompt(op, &response);
            } else {
                self.error_on(
                    tab,
                    format!(
                        "{}: its answer came while another tab was in view; send it again to save it",
                        op.full_name()
                    ),
                );
            }
        }
        let summary = format!("{}: {} in {} ms", op.full_name(), response.status, response.duration.as_millis());
        self.tabs[tab].drafts.remove(op.name);
        // An answer that is a time series but no list (Mailgun's stats) is charted under the
        // browser as a list page of one would be.
        let series = body
            .as_ref()
            .filter(|_| op.method == crate::catalog::Method::Get && !op.is_list())
            .and_then(pagination::records)
            .and_then(|(_, rows)| chart::detect(rows));
        if let Some(series) = series {
            match self.tabs[tab].chart.as_mut() {
                Some(view) => view.replace(series),
                None => self.tabs[tab].chart = Some(ChartView::new(series)),
            }
        }
        let link = save.map(|(_, pointer, name)| {
            let url = body.as_ref().and_then(|b| b.pointer(&pointer)).and_then(Value::as_str);
            url.map(|url| (url.to_owned(), name)).ok_or(pointer)
        });
        let detail = body.and_then(|body| services::detail(op, &body));
        let tab_state = &mut self.tabs[tab];
        if let Some(detail) = detail {
            tab_state.detail = Some(detail.clone());
            // Shown at once unless the user has moved on to something else; the fuller answer
            // for a view already open replaces it, keeping its place.
            match self.popup.as_mut() {
                None if tab == self.active => self.popup = Some(Popup::Detail(detail)),
                Some(Popup::Detail(open)) if tab == self.active && open.same_subject(&detail) => {
                    open.refresh_from(detail);
                }
                _ => {}
            }
        }
        if op.is_list() {
            if let Some(index) = tab_state.resources.iter().position(|r| *r == op.resource) {
                tab_state.resource = index;
                // Whose list it is (a project's keys, an account's ledger since a date) stays
                // beside its filters: a list narrowed by date is still that account's.
                tab_state.browser.title = tab_state.list_title(op, &values);
            }
            self.show_page(tab, Page { op, values, request, previous: Vec::new(), response });
        } else if op.mutates && tab == self.active {
            // What changed is likely in view: show it.
            if self.tabs[tab].page.as_ref().is_some_and(|p| p.op.resource == op.resource) {
                self.refresh();
            }
        }
        // Under a table view, focus stays where the user was, for when it closes.
        if tab == self.active && !op.is_list() && !matches!(self.popup, Some(Popup::Detail(_))) {
            self.focus = Focus::Inspector;
        }
        self.info_on(tab, summary);
        match link {
            Some(Ok((url, name))) if tab == self.active => self.open_save_prompt(url, &name),
            Some(Ok(_)) => {}
            Some(Err(pointer)) => {
                self.error_on(tab, format!("{}: the answer links no file at {pointer}", op.full_name()));
            }
            None => {}
        }
    }

    pub(super) fn show_page(&mut self, tab: usize, page: Page) {
        let op = page.op;
        let unit = {
            let tab = &self.tabs[tab];
            let name = |param: &str, id: &str| tab.id_name(param, id);
            services::console(op.service).amount_unit(op, &page.values, &name)
        };
        let rows = indexer::Rows::of(op, unit);
        let size = page.response.body.len();
        let body = page.response.body.clone();
        if size > PROGRESS_NOTICE_ABOVE {
            self.tabs[tab].browser.notice = Some((format!("indexing {}…  (Esc cancels)", op.name), false));
        }
        self.start_indexing(tab, body, Some(rows), Then::Page(page));
    }

    /// Starts indexing `body` off the UI thread for tab `tab`; a page or response still being
    /// indexed for that tab is dropped (the newest wins), a tail poll's is not.
    pub(super) fn start_indexing(&mut self, tab: usize, body: bytes::Bytes, rows: Option<indexer::Rows>, then: Then) {
        if !matches!(then, Then::Tail { .. } | Then::Rows { .. }) {
            self.cancel_indexing(tab);
        }
        let ticket = self.next_ticket;
        self.next_ticket += 1;
        let watch = Arc::new(crate::json_index::Watch::default());
        let size = body.len();
        let value = then.wants_value();
        self.indexing.insert(ticket, Job { tab, watch: watch.clone(), size, started: Instant::now(), then });
        self.background_pending += 1;
        match self.background.clone() {
            Some(reports) => indexer::spawn(
                // The console may be gone, or the job cancelled: nobody is waiting then.
                move |result| drop(reports.send(Background::Indexed(ticket, result))),
                body,
                watch,
                rows,
                value,
            ),
            // A console without its event loop (some tests): index here.
            None => {
                let result = indexer::index(body, &watch, rows.as_ref(), value);
                self.on_background(Background::Indexed(ticket, result));
            }
        }
    }

    /// Drops tab `tab`'s page and response indexing (not its tail's); how many there were.
    pub(super) fn cancel_indexing(&mut self, tab: usize) -> usize {
        let tickets: Vec<u64> = self
            .indexing
            .iter()
            .filter(|(_, job)| job.tab == tab && !matches!(job.then, Then::Tail { .. } | Then::Rows { .. }))
            .map(|(ticket, _)| *ticket)
            .collect();
        for ticket in &tickets {
            if let Some(job) = self.indexing.remove(ticket) {
                job.watch.cancel();
            }
        }
        tickets.len()
    }

    /// What the status line says while bodies are being indexed.
    pub fn indexing_note(&self) -> Option<String> {
        let job = self.indexing.values().filter(|job| job.tab == self.active).max_by_key(|job| job.size)?;
        Some(format!("indexing {}", job.progress()))
    }

    /// A body came back indexed (or failed to): the browser, the inspector and the chart show it.
    pub(super) fn on_indexed(&mut self, ticket: u64, result: Result<Indexed, JsonError>) {
        // Cancelled or replaced since: nobody wants it.
        let Some(job) = self.indexing.remove(&ticket) else { return };
        let tab = job.tab;
        tracing::debug!(ticket, size = job.size, ms = job.started.elapsed().as_millis() as u64, "indexed");
        match job.then {
            Then::Page(page) => self.page_indexed(tab, page, result),
            Then::Tail { op } => self.tail_indexed(tab, op, result),
            Then::Rows { op, done } => self.rows_indexed(tab, (op, done), result),
            Then::Inspect { view } => self.tabs[tab].inspector.show_indexed(view, result.map(|i| i.doc)),
            Then::Answer(answer) => {
                let view = response_view(answer.op.name, &answer.response);
                let (doc, body) = match result {
                    Ok(indexed) => (Ok(indexed.doc), indexed.value),
                    Err(error) => (Err(error), None),
                };
                self.tabs[tab].inspector.show_indexed(view, doc);
                self.answered(tab, answer, body);
            }
        }
    }

    /// Shows `view` in tab `tab`'s inspector: indexed here when small, else off the UI thread.
    pub(super) fn inspect(&mut self, tab: usize, view: ResponseView) {
        if view.body.len() <= INDEX_INLINE_LIMIT || !inspector::looks_like_json(&view) {
            self.tabs[tab].inspector.show(view);
            return;
        }
        let body = view.body.clone();
        self.start_indexing(tab, body, None, Then::Inspect { view });
    }

    pub(super) fn page_indexed(&mut self, tab: usize, page: Page, result: Result<Indexed, JsonError>) {
        let Page { op, values, request, previous, response } = page;
        let (c, n) = (self.key_hint(Action::ClearFilters), self.key_hint(Action::NextPage));
        let tab_state = &mut self.tabs[tab];
        let page_number = previous.len() + 1;
        let filters = list_filters(op, &values);
        tab_state.browser.filter_note = (!filters.is_empty()).then(|| {
            let shown: Vec<String> = filters.iter().map(|(name, value)| format!("{name}={value}")).collect();
            format!("only {} ({c} clears)", shown.join(" "))
        });
        // Another list in view ends the tail of the one before; the same list (asked with other
        // filters from its form) keeps it.
        let tab_state = &mut self.tabs[tab];
        if tab_state.tail.as_ref().is_some_and(|t| t.op != op.name) {
            tab_state.stop_tail();
        }
        // A fresh page has no rows marked new, so the count starts again.
        if let Some(tail) = tab_state.tail.as_mut() {
            tail.arrived = 0;
            tab_state.browser.tail_note = Some(tail_note(self.tail_every, 0));
        }
        // A page that is no time series has no chart; one that is keeps the series chosen.
        let previous_chart = self.tabs[tab].chart.take();
        let view = response_view(op.name, &response);
        let (doc, records_doc, table, series) = match result {
            Ok(Indexed { doc, records_doc, table, series, .. }) => (Ok(doc), Some(records_doc), table, series),
            Err(error) => (Err(error), None, None, None),
        };
        if let Some(series) = series {
            let view = match previous_chart {
                Some(mut view) => {
                    view.replace(series);
                    view
                }
                None => ChartView::new(series),
            };
            self.tabs[tab].chart = Some(view);
        }
        let tab_state = &mut self.tabs[tab];
        match (&doc, table, records_doc) {
            (Ok(_), Some(table), Some(records_doc)) => {
                let count = table.rows.len();
                tab_state.browser.set_page(records_doc, table, op.id_field, services::layout(op));
                let follows = matches!(pagination::next_page(op.paging, &request, &response), Ok(Some(_)));
                if count <= SEEN_LIST_CAP {
                    tab_state.seen_lists.insert(op.name, (values.clone(), tab_state.browser.records(), follows));
                } else {
                    tab_state.seen_lists.remove(op.name);
                }
                let more = if follows { format!(" · {n}: next") } else { String::new() };
                tab_state.browser.page_label =
                    format!("page {page_number} · {}{more}", crate::format::plural(count, "row"));
            }
            (Ok(_), _, _) => {
                tab_state.browser.clear();
                tab_state.browser.notice =
                    Some(("the response has no list of records; see the inspector".into(), false));
            }
            (Err(error), _, _) => {
                tab_state.browser.clear();
                tab_state.browser.notice = Some((format!("no table: the response {}", body_problem(error)), true));
            }
        }
        tab_state.inspector.show_indexed(view, doc);
        tab_state.page = Some(PageState { op, values, filters, request, response, previous });
        tab_state.remember_selection();
        // Live columns (a product's price) keep what they knew across a reload.
        self.apply_live(tab);
    }

    /// Queues a finished call for the history (off the UI thread: see [`crate::history::Recorder`]).
    pub(super) fn record_call(
        &self,
        purpose: &Purpose,
        result: &Result<client::Response, Arc<CallError>>,
        elapsed: Duration,
    ) {
        let Some(recorder) = &self.history else { return };
        let (tab, op, values) = match purpose {
            // Polls repeat the list every few seconds: they would bury every call the user made.
            Purpose::List { recorded: false, .. }
            | Purpose::Tail { .. }
            | Purpose::Rows { .. }
            | Purpose::Watch { .. }
            | Purpose::Lookup { .. }
            | Purpose::Live { .. } => {
                return;
            }
            Purpose::List { tab, op, values, .. } | Purpose::Operation { tab, op, values, .. } => (*tab, *op, values),
        };
        let tab = &self.tabs[tab];
        let result = result.as_ref().map_err(Arc::as_ref);
        let source = crate::history::Source::Console;
        let entry = Entry::new(source, &self.profile, op, values, None, &tab.target, &tab.mode, result, elapsed);
        recorder.record(entry);
    }
}

/// Why a body has no table, as the browser says it.
pub(super) fn body_problem(error: &JsonError) -> String {
    match error.kind {
        crate::json_index::JsonErrorKind::TooManyValues { .. } => {
            format!("holds {error}; it is shown as text in the inspector (ask for fewer records)")
        }
        // Valid JSON, only deeper than the index goes: not "not JSON".
        crate::json_index::JsonErrorKind::TooDeep => {
            format!(
                "is JSON nested deeper than {} levels; it is shown as text in the inspector",
                crate::json_index::MAX_DEPTH
            )
        }
        _ => format!("is not JSON ({error}); see the inspector"),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn json_too_deep_to_index_is_not_called_not_json() {
        let deep = format!("{}{}", "[".repeat(600), "]".repeat(600));
        let error = crate::json_index::JsonDoc::parse(bytes::Bytes::from(deep)).expect_err("too deep");
        let said = super::body_problem(&error);
        assert!(said.contains("nested deeper than 512 levels") && !said.contains("not JSON"), "{said}");
    }
}
