//! Records: what Enter on a row and a record's keys do, as the tab's service says (tui/services), and the compose keys.

use super::*;

impl App {
    /// A list of bare ids (TaxJar's orders, refunds and customers) says nothing about a record
    /// but its id: Enter fetches the record with its resource's GET. False when the row is a
    /// whole record already, or its resource has no such GET.
    pub(super) fn fetch_selected_record(&mut self) -> bool {
        let tab = self.tab();
        let Some(page) = tab.page.as_ref() else { return false };
        if tab.browser.selected_kind().is_none_or(|kind| kind == crate::json_index::Kind::Object) {
            return false;
        }
        let resource = page.op.resource;
        let get = tab.service.operations().iter().find(|op| {
            op.resource == resource
                && op.method == crate::catalog::Method::Get
                && !op.is_list()
                && !op.path_params().is_empty()
        });
        let Some(op) = get else { return false };
        let values: Values = tab
            .suggested_values(op, None)
            .into_iter()
            .filter(|(name, _)| op.path_params().contains(&name.as_str()))
            .collect();
        if op.path_params().iter().any(|name| !values.contains_key(*name)) {
            return false;
        }
        self.send_operation(op, values);
        true
    }

    /// Lists `resource` for the record selected in the browser (a company's transactions).
    pub(super) fn drill_into(&mut self, resource: &str) {
        let tab = self.tab_mut();
        let Some(index) = tab.resources.iter().position(|r| *r == resource) else { return };
        let came_from = tab.page.as_ref().map(|page| (page.op, page.values.clone()));
        tab.resource = index;
        self.focus = Focus::Browser;
        self.open_resource();
        self.tab_mut().remember_where_from(came_from);
    }

    /// Esc in the browser of a list a record led to: the list it came from, listed again (with
    /// the values it had), and its resource selected. False when no record led here.
    pub(super) fn back_to_previous_list(&mut self) -> bool {
        let tab = self.tab_mut();
        let Some((op, values)) = tab.came_from.pop() else { return false };
        if let Some(index) = tab.resources.iter().position(|r| *r == op.resource) {
            tab.resource = index;
        }
        tab.browser.title = op.resource.to_owned();
        self.load_list(op, values);
        self.info(format!("back to {}", op.resource));
        true
    }

    /// Enter on a row, as the tab's service says: list what belongs to it (a company's
    /// transactions), show a view of it at once (asking for the whole record where the row lacks
    /// parts), or fetch it. False when its service says nothing of this list.
    pub(super) fn open_row_as_service_says(&mut self) -> bool {
        let tab = self.tab();
        let Some(list) = tab.page.as_ref().map(|p| p.op.name) else { return false };
        let Some(record) = tab.selected_record().map(Value::Object) else { return false };
        let scope = |name: &str| tab.scope(name);
        let Some(action) = services::console(tab.service).open_row(list, &record, &scope) else { return false };
        match action {
            RowAction::Drill(resource) => self.drill_into(resource),
            RowAction::Fetch(name, values) => {
                if let Some(op) = self.operation_of_tab(name) {
                    self.send_operation(op, values);
                }
            }
            RowAction::View(detail, fetch) => {
                self.tab_mut().detail = Some((*detail).clone());
                self.popup = Some(Popup::Detail(*detail));
                let Some((name, values)) = fetch else { return true };
                if let Some(op) = self.operation_of_tab(name) {
                    // The view stays open; the answer replaces it only while nothing else is.
                    let popup = self.popup.take();
                    self.send_operation(op, values);
                    if self.popup.is_none() {
                        self.popup = popup;
                    }
                }
            }
        }
        true
    }

    /// The operation `name` of the active tab's service (a view's or a service's command names
    /// one); an error in the status line if it has none.
    pub(super) fn operation_of_tab(&mut self, name: &str) -> Option<&'static Operation> {
        let service = self.tab().service;
        let op = service.operation(name);
        if op.is_none() {
            self.error(format!("{name} is no operation of {}", service.title()));
        }
        op
    }

    /// A record action key of a view (an AvaTax transaction's `c` commit): opens the form its
    /// service fills from the record; nothing is sent before the user reads it and presses Ctrl-s.
    pub(super) fn open_record_action(&mut self, key: char, record: &Value) {
        if let Some((op, values)) = self.record_action(key, record) {
            self.open_form_with(op, &values);
        }
    }

    fn record_action(&mut self, key: char, record: &Value) -> Option<(&'static Operation, Values)> {
        let tab = self.tab();
        let scope = |name: &str| tab.scope(name);
        let (name, values) = services::console(tab.service).record_action(key, record, &scope)?;
        Some((self.operation_of_tab(name)?, values))
    }

    /// A key of the selected row where it is (see [`services::ServiceConsole::row_keys`]); false
    /// when the list in view gives that key no meaning, so it does what it does elsewhere.
    pub(super) fn row_key(&mut self, key: &KeyEvent) -> bool {
        let KeyCode::Char(c) = key.code else { return false };
        if !key.modifiers.is_empty() && key.modifiers != KeyModifiers::SHIFT {
            return false;
        }
        let tab = self.tab();
        let Some(list) = tab.page.as_ref().map(|p| p.op.name) else { return false };
        let Some(&(_, label)) = services::console(tab.service).row_keys(list).iter().find(|(k, _)| *k == c) else {
            return false;
        };
        let Some(record) = tab.selected_record().map(Value::Object) else {
            self.info("select a row first");
            return true;
        };
        let Some((op, values)) = self.record_action(c, &record) else {
            self.info(format!("{c} ({label}) does not apply to this row; nothing was sent"));
            return true;
        };
        // A delete or a cancel of the row, whose every value is the row's own id, asks its
        // question at once: a form would only repeat them.
        let complete = op.params.iter().all(|p| !p.required || values.contains_key(p.name));
        if complete && op.asks_first(&|name| values.get(name).cloned()) {
            self.request_operation(op, values);
        } else {
            self.open_form_with(op, &values);
        }
        true
    }

    /// The compose forms of Mailgun (send, MIME send), from any tab: the domain in view and its
    /// postmaster as sender filled in, or what was typed last time.
    pub(super) fn compose(&mut self, kind: Compose) {
        let Some((service, name)) = services::composer(kind) else {
            return self.error("no service of this console composes messages");
        };
        let Some(index) = self.tabs.iter().position(|t| t.service == service) else {
            return self.error(format!("this console has no {} tab", service.title()));
        };
        let Some(op) = service.operation(name) else { return };
        self.switch_tab(index);
        let tab = self.tab();
        let mut values = tab.prefill(op, None);
        if !values.contains_key("domain") {
            // The domain of the list in view (events of mg.example.com), when no row gave one.
            if let Some(domain) = tab.page.as_ref().and_then(|p| p.values.get("domain")).cloned() {
                values.insert("domain".into(), domain);
                services::console(service).suggest(op, &serde_json::Map::new(), &tab.target, &mut values);
            }
        }
        self.open_form_with(op, &values);
    }

    pub(super) fn show_selected_record(&mut self) {
        let tab = self.tab();
        let Some(body) = tab.browser.selected_json() else { return };
        let title = format!("{} record", tab.resource_name());
        let request_line = tab.page.as_ref().map(|p| p.response.request_line.clone()).unwrap_or_default();
        self.inspect(
            self.active,
            ResponseView {
                title,
                status: None,
                duration: Duration::ZERO,
                request_line,
                headers: Vec::new(),
                body,
                content_type: Some("application/json".into()),
            },
        );
    }
}
