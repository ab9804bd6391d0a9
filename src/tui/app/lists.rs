//! Lists: the resource in view, its pages, filters, auto-refresh, tail mode, and the open view asking again.

use super::*;

impl App {
    /// Loads the selected resource into the browser; asks for missing parameters with a form.
    pub(super) fn open_resource(&mut self) {
        let o = self.key_hint(Action::Operations);
        let r = self.key_hint(Action::Refresh);
        let tab = self.tab_mut();
        if tab.stop_tail() {
            self.info("tail stopped: another list is in view");
        }
        let tab = self.tab_mut();
        tab.browser.title = tab.resource_name().to_owned();
        tab.page = None;
        // A resource opened anew leads back nowhere (a drill adds where it came from after).
        tab.came_from.clear();
        let Some(op) = tab.list_op() else {
            let resource = tab.resource_name();
            // The resource's read of the whole (not of one record by its own id, which nothing
            // lists): Coinbase's fees, Ably's time, a Deepgram project's usage.
            let read = tab.service.operations().iter().find(|op| {
                op.resource == resource
                    && op.method == crate::catalog::Method::Get
                    && !op.mutates
                    && !op.path.ends_with('}')
                    && op.at_least_one.is_empty()
                    && !op.exclusive.iter().any(|group| group.required)
            });
            tab.browser.clear();
            let Some(read) = read else {
                // An empty browser, where every key moves as in a full one; its operations are
                // one key away, and nothing opens by itself to catch the next keys typed.
                tab.browser.notice = Some((format!("{resource} has no list; press {o} for its operations"), false));
                return;
            };
            let values = tab.browse_values(read);
            let missing: Vec<&crate::catalog::Param> =
                read.params.iter().filter(|p| p.required && !values.contains_key(p.name)).collect();
            // Only an id in the path is picked from a list; anything else is asked by the form.
            let picked_elsewhere = match missing.as_slice() {
                [param] if param.location == crate::catalog::Location::Path => {
                    tab.source_of(param.name).map(|source| (param.name, source))
                }
                _ => None,
            };
            let notice = match (missing.is_empty(), picked_elsewhere) {
                // Nothing to ask: sent as a list would be.
                (true, _) => format!("{resource} has no list: {} was sent ({r} sends it again)", read.name),
                // An id the user has not picked yet: say where to pick it, never guess one.
                (false, Some((name, source))) => format!(
                    "{} reads by {name}: pick one in {source} first; nothing was sent (or press {o} for the form)",
                    read.name
                ),
                (false, None) => format!("{resource} has no list; press {o} for its operations"),
            };
            tab.browser.notice = Some((notice, false));
            if missing.is_empty() {
                self.send_operation(read, values);
            }
            return;
        };
        let values = tab.browse_values(op);
        // Whose list it is, from the values it is really called with.
        if tab.scope_label(op, &values).is_some() {
            tab.browser.title = tab.list_title(op, &values);
        }
        // A list that needs one of several ids (Coinbase's fills: of an order or of a product).
        if !op.at_least_one.is_empty() && !op.at_least_one.iter().any(|name| values.contains_key(*name)) {
            let places: Vec<String> = op
                .at_least_one
                .iter()
                .map(|name| match tab.source_of(name) {
                    Some(source) => format!("{name} (pick one in {source})"),
                    None => (*name).to_owned(),
                })
                .collect();
            tab.browser.clear();
            tab.browser.notice = Some((
                format!(
                    "{} lists by {}: nothing was sent (or press {o} for the form)",
                    op.resource,
                    places.join(" or ")
                ),
                false,
            ));
            return;
        }
        let missing = op.params.iter().find(|p| p.required && !values.contains_key(p.name));
        // An id the user has not picked yet: say where to pick it, never guess one.
        if let Some((param, source)) = missing.and_then(|p| Some((p, tab.source_of(p.name)?))) {
            tab.browser.clear();
            tab.browser.notice = Some((
                format!(
                    "{} lists by {}: pick one in {source} first (or press {o} for the form)",
                    op.resource, param.name
                ),
                false,
            ));
            return;
        }
        if missing.is_some() {
            tab.browser.clear();
            tab.browser.notice = Some((format!("{} needs parameters: fill the form and press Ctrl-s", op.name), false));
            self.open_form(op);
            return;
        }
        self.load_list(op, values);
    }

    pub(super) fn load_list(&mut self, op: &'static Operation, values: Values) {
        match client::build(op, &values, None, &self.tab().target) {
            Ok(request) => self.fetch_page(op, values, request, Vec::new()),
            Err(e) => {
                // Show what is wrong where it can be fixed: the form, with the values used.
                let tab = self.tab_mut();
                tab.browser.clear();
                tab.browser.notice = Some((format!("{}: {e}", op.name), true));
                tab.drafts.insert(op.name, values);
                self.error(format!("{}: {e}", op.full_name()));
                self.open_form(op);
                if let Some(Popup::Form(form)) = self.popup.as_mut() {
                    form.validate();
                }
            }
        }
    }

    pub(super) fn fetch_page(
        &mut self,
        op: &'static Operation,
        values: Values,
        request: client::PreparedRequest,
        previous: Vec<client::PreparedRequest>,
    ) {
        let tab_index = self.active;
        let tab = &mut self.tabs[tab_index];
        let credentials = tab.target.credentials.clone();
        let id = self.executor.submit(op.full_name(), request.clone(), credentials, Some(tab.browser_slot()));
        tab.sent = Some(request.clone());
        tab.loading = Some(id);
        tab.last_refresh = Some(Instant::now());
        if tab.page.is_none() {
            tab.browser.page_label.clear();
            tab.browser.filter_note = None;
            tab.browser.notice = Some((format!("loading {}…  (Esc cancels)", op.name), false));
        }
        let recorded = !self.auto_refreshing;
        self.purposes
            .insert(id, (Purpose::List { tab: tab_index, op, values, request, previous, recorded }, Instant::now()));
    }

    /// Reloads the page in view (or loads the selected resource when nothing is in view yet).
    pub(super) fn refresh(&mut self) {
        let Some(page) = self.tab().page.as_ref() else {
            self.open_resource();
            return;
        };
        let (op, values, request, previous) =
            (page.op, page.values.clone(), page.request.clone(), page.previous.clone());
        self.fetch_page(op, values, request, previous);
    }

    /// Loads the first page of the list in view again without its filters.
    pub(super) fn clear_filters(&mut self) {
        let Some(page) = self.tab().page.as_ref() else { return };
        if page.filters.is_empty() {
            return self.info("no filters to clear");
        }
        let op = page.op;
        let mut values = page.values.clone();
        let cleared: Vec<String> = page.filters.iter().map(|(name, value)| format!("{name}={value}")).collect();
        for (name, _) in &page.filters {
            values.remove(name);
        }
        self.info(format!("filter {} cleared", cleared.join(" ")));
        self.load_list(op, values);
    }

    pub(super) fn next_page(&mut self) {
        let Some(page) = self.tab().page.as_ref() else { return };
        let next = pagination::next_page(page.op.paging, &page.request, &page.response).and_then(|next| {
            // The pages behind this one: a next link back to one of them would loop forever.
            let mut trail = pagination::PageTrail::resume(page.previous.iter().chain([&page.request]), usize::MAX);
            next.map(|next| trail.advance(&next).map(|()| next)).transpose()
        });
        match next {
            Ok(Some(next)) => {
                let mut previous = page.previous.clone();
                previous.push(page.request.clone());
                let (op, values) = (page.op, page.values.clone());
                self.fetch_page(op, values, next, previous);
            }
            Ok(None) => self.info("this is the last page"),
            Err(e) => {
                let message = format!("{}: {e}", page.op.full_name());
                self.error(message);
            }
        }
    }

    pub(super) fn previous_page(&mut self) {
        let Some(page) = self.tab().page.as_ref() else { return };
        let mut previous = page.previous.clone();
        match previous.pop() {
            Some(request) => {
                let (op, values) = (page.op, page.values.clone());
                self.fetch_page(op, values, request, previous);
            }
            None => self.info("this is the first page"),
        }
    }

    pub(super) fn toggle_auto_refresh(&mut self) {
        let every = self.auto_refresh_every.as_secs();
        let tab = self.tab_mut();
        tab.auto_refresh = !tab.auto_refresh;
        let message = match (tab.auto_refresh, tab.can_auto_refresh()) {
            (false, _) => "auto-refresh off".to_owned(),
            (true, true) => format!("auto-refresh every {every} s"),
            (true, false) => {
                format!("auto-refresh every {every} s, once a list is in view (nothing to reload here yet)")
            }
        };
        self.info(message);
    }

    /// `T`: follows the list in view (its first page, every [`App::tail_every`]), putting new
    /// rows on top; again stops it. A later page in view goes back to the first, where new
    /// records arrive.
    pub(super) fn toggle_tail(&mut self) {
        let t = self.key_hint(Action::Tail);
        if self.tab_mut().stop_tail() {
            return self.info(format!("tail stopped ({t} starts it again)"));
        }
        let Some(page) = self.tab().page.as_ref() else {
            return self.info("tail follows a list: open one first (events, messages)");
        };
        let (op, values, on_later_page) = (page.op, page.values.clone(), !page.previous.is_empty());
        if !op.is_list() {
            return self.info(format!("{} is no list: nothing to tail", op.name));
        }
        let every = self.tail_every.as_secs();
        let note = tail_note(self.tail_every, 0);
        let tab = self.tab_mut();
        tab.tail = Some(TailState { op: op.name, last_poll: Some(Instant::now()), in_flight: None, arrived: 0 });
        tab.browser.tail_note = Some(note);
        if on_later_page {
            self.load_list(op, values.clone());
        }
        let o = self.key_hint(Action::Operations);
        if let Some(shown) = self.open_live_tail(self.active, op, &values) {
            return self.info(format!(
                "tail: {} live over {shown}, new rows on top marked ●; {o} changes its filters; {t} stops",
                op.name
            ));
        }
        self.info(format!(
            "tail: {} every {every} s, new rows on top marked ●; {o} changes its filters; {t} stops",
            op.name
        ));
    }

    /// Follows tab `index`'s list over its service's push socket, when it has one and the
    /// console runs its event loop; says where. Until the socket serves, nothing is polled; if
    /// it fails, the tail polls as before (`on_live_tail`).
    fn open_live_tail(&mut self, index: usize, op: &'static Operation, values: &Values) -> Option<String> {
        let tab = &self.tabs[index];
        let live = services::console(tab.service).live_tail(op, values, &tab.target)?;
        let (handle, generation) = self.open_socket(index, &live)?;
        let tab = &mut self.tabs[index];
        tab.browser.tail_note = Some(format!("● live · connecting to {}", live.shown));
        tab.live_tail = Some(crate::tui::tab::LiveTailState {
            handle,
            generation,
            shown: live.shown.clone(),
            attached: false,
            present: std::collections::BTreeSet::new(),
        });
        Some(live.shown)
    }

    /// Opens a push socket for tab `index` (when the console runs its event loop, which takes
    /// what it reports) and sends what it is to send once open; its handle and generation, by
    /// which its reports are told from an earlier socket's.
    pub(super) fn open_socket(
        &mut self,
        index: usize,
        feed: &services::LiveFeed,
    ) -> Option<(crate::client::live::LiveHandle, u64)> {
        if !self.live_tails {
            return None;
        }
        let reports = self.background.clone()?;
        self.next_live = self.next_live.wrapping_add(1);
        let generation = self.next_live;
        let handle = crate::client::live::open(feed.url.clone(), feed.shown.clone(), move |event| {
            let _ = reports.send(Background::Live(index, generation, event));
        });
        for frame in &feed.send {
            handle.send(frame.clone());
        }
        Some((handle, generation))
    }

    /// What tab `index`'s live tail socket said: records go on top like a poll's, presence is
    /// counted, and an end falls back to polling (the status line says why).
    pub(super) fn on_live_tail(&mut self, index: usize, generation: u64, event: crate::client::live::LiveEvent) {
        let Some(tab) = self.tabs.get(index) else { return };
        if tab.live_tail.as_ref().is_none_or(|live| live.generation != generation) {
            return;
        }
        let Some(page) = tab.page.as_ref().filter(|p| tab.tail.as_ref().is_some_and(|t| t.op == p.op.name)) else {
            self.tabs[index].live_tail = None;
            return;
        };
        let (op, values) = (page.op, page.values.clone());
        let frame = match event {
            crate::client::live::LiveEvent::Frame(text) => {
                if let Some(live) = tab.live_tail.as_ref() {
                    live.handle.taken();
                }
                services::console(tab.service).live_frame(op, &values, &text)
            }
            // These sockets upload nothing.
            crate::client::live::LiveEvent::Sent(_) => return,
            crate::client::live::LiveEvent::Ended(why) => {
                services::LiveFrame { ended: Some(why), ..Default::default() }
            }
        };
        if let Some(why) = frame.ended {
            let every = self.tail_every;
            let tab = &mut self.tabs[index];
            tab.live_tail = None;
            if let Some(tail) = tab.tail.as_mut() {
                tail.last_poll = None;
                tab.browser.tail_note = Some(tail_note(every, tail.arrived));
            }
            let why = crate::inert::inert(&why);
            return self
                .error_on(index, format!("tail polls every {} s: the live connection ended: {why}", every.as_secs()));
        }
        let tab = &mut self.tabs[index];
        let arrived = tab.tail.as_ref().map_or(0, |t| t.arrived);
        let Some(live) = tab.live_tail.as_mut() else { return };
        for text in frame.send {
            live.handle.send(text);
        }
        live.attached |= frame.attached;
        if let Some(present) = frame.present {
            live.present = present.into_iter().collect();
        }
        live.present.extend(frame.entered);
        for gone in &frame.left {
            live.present.remove(gone);
        }
        tab.browser.tail_note = Some(live_note(live, arrived));
        if !frame.records.is_empty() {
            let body = bytes::Bytes::from(serde_json::to_vec(&frame.records).unwrap_or_default());
            let rows = indexer::Rows {
                spec: tab.browser.spec_for_more(op.id_field),
                keyed: op.keyed,
                arrays: services::console(op.service).record_arrays(op),
            };
            self.start_indexing(index, body, Some(rows), Then::Tail { op });
        }
    }

    /// Asks for the first page of the list tab `index` follows, off the browser's slot, so a
    /// refresh or a new page the user asks for is never cancelled by a poll.
    pub(super) fn poll_tail(&mut self, index: usize, now: Instant) {
        let tab = &self.tabs[index];
        let Some(page) = tab.page.as_ref() else { return };
        let op = page.op;
        let request = match client::build(op, &page.values, None, &tab.target) {
            Ok(request) => request,
            Err(e) => {
                self.tabs[index].stop_tail();
                return self.error(format!("tail stopped: {}: {e}", op.full_name()));
            }
        };
        let slot = format!("{}/tail", tab.service);
        let credentials = tab.target.credentials.clone();
        let id = self.executor.submit(op.full_name(), request, credentials, Some(slot));
        if let Some(tail) = self.tabs[index].tail.as_mut() {
            tail.in_flight = Some(id);
            tail.last_poll = Some(now);
        }
        self.purposes.insert(id, (Purpose::Tail { tab: index, op }, Instant::now()));
    }

    /// A tail poll came back: its rows not shown yet go on top, marked; the selection, the row
    /// filter and the list's own filters stay as they were.
    pub(super) fn on_tail_page(
        &mut self,
        tab: usize,
        op: &'static Operation,
        result: Result<client::Response, Arc<CallError>>,
    ) {
        let tab_state = &mut self.tabs[tab];
        let Some(tail) = tab_state.tail.as_mut() else { return };
        tail.in_flight = None;
        // The user moved on to another list while the poll was out.
        if tail.op != op.name || tab_state.page.as_ref().is_none_or(|p| p.op.name != op.name) {
            return;
        }
        match result {
            Ok(response) => {
                let rows = tab_state.browser.spec_for_more(op.id_field);
                self.start_indexing(
                    tab,
                    response.body,
                    Some(indexer::Rows {
                        spec: rows,
                        keyed: op.keyed,
                        arrays: services::console(op.service).record_arrays(op),
                    }),
                    Then::Tail { op },
                );
            }
            Err(error) => {
                let message = format!("tail: {}: {error} (it keeps polling)", op.full_name());
                self.error_on(tab, message);
            }
        }
    }

    /// A tail poll's page came back indexed: its rows not shown yet go on top.
    pub(super) fn tail_indexed(&mut self, tab: usize, op: &'static Operation, result: Result<Indexed, JsonError>) {
        let every = self.tail_every;
        let tab_state = &mut self.tabs[tab];
        // Tail stopped, or the user moved on to another list while the page was indexed.
        let following = tab_state.tail.as_ref().is_some_and(|t| t.op == op.name);
        if !following || tab_state.page.as_ref().is_none_or(|p| p.op.name != op.name) {
            return;
        }
        let Ok(Indexed { records_doc: doc, table: Some(table), .. }) = result else { return };
        let arrived = tab_state.browser.merge_rows(doc, table, op.id_field, TAIL_CAP);
        let total = {
            let Some(tail) = tab_state.tail.as_mut() else { return };
            tail.arrived += arrived;
            tail.arrived
        };
        tab_state.browser.tail_note = Some(match tab_state.live_tail.as_ref() {
            Some(live) => live_note(live, total),
            None => tail_note(every, total),
        });
        if arrived > 0 {
            let rows = tab_state.browser.row_count();
            tab_state.browser.page_label = crate::format::plural(rows, "row");
            tab_state.remember_selection();
        }
    }

    /// The subject of the open view when it asks again by itself and nothing of it is in
    /// flight: closing the view (or its answers saying nothing moves) stops the asking.
    pub(super) fn watched(&self) -> Option<String> {
        let Some(Popup::Detail(detail)) = &self.popup else { return None };
        detail.watch.as_ref()?;
        // An ask cancelled (Ctrl-x, a profile switch) never reports: it counts as done.
        let asking = self
            .tab()
            .watch
            .in_flight
            .iter()
            .any(|id| self.executor.state(*id).is_some_and(client::CallState::is_active));
        (!asking).then(|| detail.subject.clone().unwrap_or_default())
    }

    /// Whether the open view is a market filled by its own asks: nothing fetched it before it
    /// opened, so its first ask goes at once.
    fn watch_fills_view(&self) -> bool {
        matches!(&self.popup, Some(Popup::Detail(detail)) if detail.market.is_some())
    }

    /// Asks again for what the open view shows, when it is due: each of its operations at
    /// once, on a slot of its own, so a slow one never holds the others back.
    pub(super) fn poll_watch(&mut self, now: Instant) {
        self.follow_market();
        let Some(subject) = self.watched() else { return };
        if self.tab().watch.subject.as_ref() != Some(&subject) {
            let fresh = self.watch_fills_view();
            self.tabs[self.active].watch = WatchState {
                subject: Some(subject.clone()),
                last_poll: (!fresh).then_some(now),
                in_flight: Vec::new(),
            };
            if !fresh {
                return;
            }
        }
        if self.tab().watch.last_poll.is_some_and(|at| at + self.tail_every > now) {
            return;
        }
        let Some(Popup::Detail(detail)) = &self.popup else { return };
        // A market its socket serves asks only about the rest of its board, after the first
        // answers gave it the history the socket does not (candles, the tape so far).
        let pushed = self.tab().live_market.as_ref().is_some_and(|l| l.serving && l.subject == subject);
        let asks = match (&detail.market, pushed) {
            (Some(market), true) => market.board_asks(),
            _ => detail.asks(),
        };
        let tab_index = self.active;
        self.tabs[tab_index].watch.last_poll = Some(now);
        self.tabs[tab_index].watch.in_flight.clear();
        for (index, (name, values)) in asks.into_iter().enumerate() {
            let tab = self.tab();
            let Some(op) = tab.service.operation(name) else { continue };
            let values: Values = values.into_iter().collect();
            match client::build(op, &values, None, &tab.target) {
                Ok(request) => {
                    // The slot is the ask's own (a board row keeps its slot while rows stay).
                    let slot = format!("{}/watch/{index}", tab.service);
                    let credentials = tab.target.credentials.clone();
                    let id = self.executor.submit(op.full_name(), request, credentials, Some(slot));
                    self.tabs[tab_index].watch.in_flight.push(id);
                    let purpose = Purpose::Watch { tab: tab_index, op, subject: subject.clone(), values };
                    self.purposes.insert(id, (purpose, Instant::now()));
                }
                Err(e) => {
                    if let Some(Popup::Detail(detail)) = self.popup.as_mut() {
                        detail.watch = None;
                    }
                    return self.error(format!("the view stopped asking again: {}: {e}", op.full_name()));
                }
            }
        }
    }

    /// Keeps the active tab's market socket on the market view open: one opens with the view
    /// (when its service pushes), and goes when the view closes or shows something else.
    fn follow_market(&mut self) {
        let open = match &self.popup {
            Some(Popup::Detail(detail)) => {
                detail.market.as_ref().and_then(|m| Some((detail.subject.clone()?, m.focus.clone())))
            }
            _ => None,
        };
        let index = self.active;
        let shown_subject = open.as_ref().map(|(subject, _)| subject.as_str());
        if self.tabs[index].market_feed_refused.as_deref() != shown_subject {
            self.tabs[index].market_feed_refused = None;
        }
        let current = self.tabs[index].live_market.as_ref().map(|l| l.subject.clone());
        if current.is_some() && current.as_ref() != open.as_ref().map(|(subject, _)| subject) {
            self.tabs[index].live_market = None;
        }
        let Some((subject, focus)) = open else { return };
        if self.tabs[index].live_market.is_some() || self.tabs[index].market_feed_refused.as_deref() == Some(&subject) {
            return;
        }
        let tab = &self.tabs[index];
        let Some(feed) = services::console(tab.service).market_feed(&focus, &tab.target) else { return };
        let Some((handle, generation)) = self.open_socket(index, &feed) else { return };
        self.tabs[index].live_market = Some(crate::tui::tab::LiveMarketState {
            handle,
            generation,
            subject,
            focus,
            shown: feed.shown,
            serving: false,
        });
    }

    /// What the market socket of tab `index` said: its pushes go into the open view; an end
    /// puts the view back on polling, and the status line says why.
    pub(super) fn on_live_market(&mut self, index: usize, event: crate::client::live::LiveEvent) {
        let Some(live) = self.tabs.get(index).and_then(|t| t.live_market.as_ref()) else { return };
        let (service, subject, focus, shown) =
            (self.tabs[index].service, live.subject.clone(), live.focus.clone(), live.shown.clone());
        let frame = match event {
            crate::client::live::LiveEvent::Frame(text) => {
                live.handle.taken();
                services::console(service).market_frame(&focus, &text)
            }
            // These sockets upload nothing.
            crate::client::live::LiveEvent::Sent(_) => return,
            crate::client::live::LiveEvent::Ended(why) => {
                services::MarketFrame { ended: Some(why), ..Default::default() }
            }
        };
        let open = match self.popup.as_mut() {
            Some(Popup::Detail(detail))
                if index == self.active && detail.subject.as_deref() == Some(subject.as_str()) =>
            {
                Some(detail)
            }
            _ => None,
        };
        if let Some(why) = frame.ended {
            if let Some(market) = open.and_then(|d| d.market.as_mut()) {
                market.live = None;
            }
            let tab = &mut self.tabs[index];
            tab.live_market = None;
            // Not again for this view: it polls until it is opened anew.
            tab.market_feed_refused = Some(subject);
            let every = self.tail_every.as_secs();
            let why = crate::inert::inert(&why);
            return self.error_on(index, format!("the market view asks every {every} s: its feed ended: {why}"));
        }
        let Some(detail) = open else { return };
        let Some(market) = detail.market.as_mut() else { return };
        if frame.serving {
            market.live = Some(shown);
        }
        for push in frame.pushes {
            market.apply(push);
        }
        let snapshot = detail.clone();
        let tab = &mut self.tabs[index];
        tab.detail = Some(snapshot);
        if let Some(live) = tab.live_market.as_mut() {
            live.serving |= frame.serving;
        }
    }

    /// An ask of the open view came back: the view shows the answer in place (the row chosen,
    /// the scroll and a question being answered stay), if it is still open on the same thing.
    /// A market takes each answer as a part of its picture: the view asked for it, by subject.
    pub(super) fn on_watch_answer(
        &mut self,
        tab: usize,
        op: &'static Operation,
        (subject, values): (&str, &Values),
        result: Result<client::Response, Arc<CallError>>,
    ) {
        match result {
            Ok(response) => {
                let Some(body) = serde_json::from_slice::<Value>(&response.body).ok() else { return };
                if tab != self.active {
                    return;
                }
                let Some(Popup::Detail(open)) = self.popup.as_mut() else { return };
                // A market takes each answer as a part of its picture, if still open on it.
                if open.market.is_some() {
                    let Some(part) = services::console(op.service).market(op, values, &body) else { return };
                    if let (Some(market), true) = (open.market.as_mut(), open.subject.as_deref() == Some(subject)) {
                        market.merge(part);
                        self.tabs[tab].detail = Some(open.clone());
                    }
                    return;
                }
                let Some(detail) = services::detail(op, &body) else { return };
                if open.same_subject(&detail) {
                    open.refresh_from(detail.clone());
                    self.tabs[tab].detail = Some(detail);
                }
            }
            Err(error) => self.error_on(tab, format!("{}: {error} (the view keeps asking)", op.full_name())),
        }
    }
}

impl App {
    /// The live columns of the list in view of the active tab while it is shown (nothing over
    /// it, nothing loading), when its service has any and nothing of them is in flight.
    pub(super) fn live_columns(&self) -> Option<services::LiveColumns> {
        let tab = self.tab();
        if self.popup.is_some() || tab.loading.is_some() {
            return None;
        }
        let page = tab.page.as_ref()?;
        let live = services::console(tab.service).live_columns(page.op.name)?;
        let asking =
            tab.live.in_flight.iter().any(|id| self.executor.state(*id).is_some_and(client::CallState::is_active));
        (!asking).then_some(live)
    }

    /// Asks about each row in view of the list shown again (a product's price and 24-hour
    /// change), when due: at once for a list newly shown, then every [`App::tail_every`].
    pub(super) fn poll_live(&mut self, now: Instant) {
        let Some(live) = self.live_columns() else { return };
        let index = self.active;
        let tab = &self.tabs[index];
        let Some(list) = tab.page.as_ref().map(|p| p.op) else { return };
        if tab.live.op != Some(list.name) {
            self.tabs[index].live = crate::tui::tab::LiveState { op: Some(list.name), ..Default::default() };
        } else if tab.live.last_poll.is_some_and(|at| at + self.tail_every > now) {
            return;
        }
        let tab = &self.tabs[index];
        let Some(op) = tab.service.operation(live.op) else { return };
        let ids = tab.browser.ids_in_view(live.id_field, LIVE_ROWS);
        let mut asked = Vec::new();
        for (slot, id) in ids.into_iter().enumerate() {
            let values: Values = [(live.param.to_owned(), id.clone())].into_iter().collect();
            let tab = &self.tabs[index];
            let Ok(request) = client::build(op, &values, None, &tab.target) else { continue };
            let slot = format!("{}/live/{slot}", tab.service);
            let call = self.executor.submit(op.full_name(), request, tab.target.credentials.clone(), Some(slot));
            self.purposes.insert(call, (Purpose::Live { tab: index, list: list.name, id }, Instant::now()));
            asked.push(call);
        }
        let state = &mut self.tabs[index].live;
        state.last_poll = Some(now);
        state.in_flight = asked;
    }

    /// A live column's answer about one row: its cells join the list, if it is still in view.
    pub(super) fn on_live_answer(
        &mut self,
        tab: usize,
        list: &'static str,
        id: String,
        result: Result<client::Response, Arc<CallError>>,
    ) {
        let tab_state = &mut self.tabs[tab];
        if tab_state.live.op != Some(list) {
            return;
        }
        let Some(live) = services::console(tab_state.service).live_columns(list) else { return };
        match result {
            Ok(response) => {
                let Ok(body) = serde_json::from_slice::<Value>(&response.body) else { return };
                tab_state.live.cells.insert(id, (live.cells)(&body));
                self.apply_live(tab);
            }
            Err(error) => {
                let message = format!("{}: {error} (the list keeps asking)", tab_state.service.title());
                self.error_on(tab, message);
            }
        }
    }

    /// Shows the live columns' cells known so far in the list in view, if they are its.
    pub(super) fn apply_live(&mut self, tab: usize) {
        let tab_state = &mut self.tabs[tab];
        let Some(page) = tab_state.page.as_ref() else { return };
        let Some(live) = services::console(tab_state.service).live_columns(page.op.name) else { return };
        if tab_state.browser.row_count() == 0 {
            return;
        }
        if tab_state.live.op != Some(page.op.name) {
            tab_state.live = crate::tui::tab::LiveState { op: Some(page.op.name), ..Default::default() };
        }
        let cells = &tab_state.live.cells;
        tab_state.browser.set_extra(live.id_field, live.headers, &|id| cells.get(id).cloned());
    }
}

/// How many rows in view a live column asks about each time (one request each).
const LIVE_ROWS: usize = 12;

/// The values that narrow a list to some of its records (a `deviceId` or `clientId` filter),
/// as opposed to those that only shape its pages (`limit`, `direction`, all with a default).
pub(super) fn list_filters(op: &Operation, values: &Values) -> Vec<(String, String)> {
    op.params
        .iter()
        .filter(|p| !p.required && p.location == crate::catalog::Location::Query && p.default.is_none())
        .filter_map(|p| values.get(p.name).map(|v| (p.name.to_owned(), v.clone())))
        .collect()
}

/// The browser title's note while tailing.
/// The browser's note while a tail is live: new rows, and who is present when anyone is.
pub(super) fn live_note(live: &crate::tui::tab::LiveTailState, arrived: usize) -> String {
    if !live.attached {
        return format!("● live · connecting to {}", live.shown);
    }
    let names: Vec<&str> = live.present.iter().map(String::as_str).take(3).collect();
    let present = match live.present.len() {
        0 => String::new(),
        n if n <= 3 => format!(" · {n} present ({})", crate::inert::inert(&names.join(", "))),
        n => format!(" · {n} present ({}, …)", crate::inert::inert(&names.join(", "))),
    };
    format!("● live · {arrived} new{present}")
}

pub(super) fn tail_note(every: Duration, arrived: usize) -> String {
    format!("● tail {} s · {arrived} new", every.as_secs())
}
