//! A list whose service pushes what happens to its records (Coinbase's `user` channel for the
//! orders list) follows it while it is shown: each push asks for the list's first page again,
//! and its rows take the place of the ones shown with the same id (an order's status changes
//! in place when it fills; one placed elsewhere goes on top, marked). The page asked for is the
//! truth shown: nothing on screen is made up from a push. At most one ask is out at a time;
//! pushes while it is out ask once more after it.

use std::sync::Arc;
use std::time::Instant;

use super::{App, Purpose};
use crate::catalog::Operation;
use crate::client::{self, CallError};
use crate::tui::indexer::{self, Indexed, Then};
use crate::tui::services;
use crate::tui::tab::LiveRowsState;

impl App {
    /// Keeps the active tab's list socket on the list shown (one opens for a list whose
    /// service pushes its changes, and goes when another list is shown), and asks for the page
    /// again when a push said something changed.
    pub(super) fn follow_rows(&mut self) {
        let index = self.active;
        let tab = &self.tabs[index];
        let shown = tab.page.as_ref().map(|p| (p.op, p.values.clone()));
        let still = match (&tab.live_rows, &shown) {
            (Some(live), Some((op, values))) => live.op.name == op.name && live.values == *values,
            (Some(_), None) => false,
            (None, _) => true,
        };
        if !still {
            self.stop_rows(index);
        }
        let Some((op, values)) = shown else { return };
        if self.tabs[index].rows_feed_refused.is_some_and(|refused| refused != op.name) {
            self.tabs[index].rows_feed_refused = None;
        }
        if self.rows_to_open() {
            self.open_rows(index, op, values);
        }
        let tab = &self.tabs[index];
        let Some(live) = tab.live_rows.as_ref().filter(|l| l.dirty && l.in_flight.is_none()) else { return };
        let request = match client::build(live.op, &live.values, None, &tab.target) {
            Ok(request) => request,
            Err(e) => {
                self.stop_rows(index);
                return self.error_on(index, format!("the list stopped following its feed: {e}"));
            }
        };
        let slot = format!("{}/rows", tab.service);
        let credentials = tab.target.credentials.clone();
        let id = self.executor.submit(op.full_name(), request, credentials, Some(slot));
        if let Some(live) = self.tabs[index].live_rows.as_mut() {
            live.dirty = false;
            live.in_flight = Some(id);
            // What was done before this ask is what its page may no longer have; what is done
            // while it is out waits for the next.
            live.asked_done = std::mem::take(&mut live.done);
        }
        self.purposes.insert(id, (Purpose::Rows { tab: index, op }, Instant::now()));
    }

    /// Whether the active tab's list may have a socket to open: one whose service pushes its
    /// changes, with none open, not refused, and not tried already with the rows it has.
    fn rows_to_open(&self) -> bool {
        let tab = self.tab();
        let Some(page) = tab.page.as_ref() else { return false };
        self.live_tails
            && self.background.is_some()
            && tab.live_rows.is_none()
            && tab.rows_feed_refused != Some(page.op.name)
            && tab.rows_tried != Some((page.op.name, tab.browser.row_count()))
            && services::console(tab.service).pushes_rows(page.op)
    }

    /// Whether a tick has something to do for the active tab's sockets: a list's to open, to
    /// close or to ask again after a push; a market's to close (its view went).
    pub(super) fn sockets_due(&self) -> bool {
        let tab = self.tab();
        let rows = match (&tab.live_rows, &tab.page) {
            (Some(live), Some(page)) => {
                live.op.name != page.op.name || live.values != page.values || (live.dirty && live.in_flight.is_none())
            }
            (Some(_), None) => true,
            (None, _) => self.rows_to_open(),
        };
        let market = tab.live_market.as_ref().is_some_and(|live| {
            !matches!(&self.popup, Some(super::Popup::Detail(d)) if d.subject.as_deref() == Some(live.subject.as_str()))
        });
        rows || market || self.stream_view_closed()
    }

    fn open_rows(&mut self, index: usize, op: &'static Operation, values: client::Values) {
        let tab = &self.tabs[index];
        let console = services::console(tab.service);
        if !console.pushes_rows(op) {
            return;
        }
        let known = tab.seen_lists.values().flat_map(|(_, records, _)| records.iter()).cloned();
        let records: Vec<serde_json::Value> = tab.browser.records().into_iter().chain(known).collect();
        let tried = (op.name, tab.browser.row_count());
        let Some(feed) = console.rows_feed(op, &values, &tab.target, &records) else {
            // Not again until the list has other rows (whose products it may name).
            self.tabs[index].rows_tried = Some(tried);
            return;
        };
        let Some((handle, generation)) = self.open_socket(index, &feed) else { return };
        self.tabs[index].live_rows = Some(LiveRowsState {
            handle,
            generation,
            op,
            values,
            shown: feed.shown,
            serving: false,
            dirty: false,
            in_flight: None,
            done: std::collections::BTreeSet::new(),
            asked_done: std::collections::BTreeSet::new(),
        });
    }

    fn stop_rows(&mut self, index: usize) {
        let tab = &mut self.tabs[index];
        if tab.live_rows.take().is_some() && tab.tail.is_none() {
            tab.browser.tail_note = None;
        }
    }

    /// What the list socket of tab `index` said: a change asks for the page again; an end
    /// leaves the list as it is (it is asked again with `r`, or followed with `T`), and the
    /// status line says why.
    pub(super) fn on_live_rows(&mut self, index: usize, event: crate::client::live::LiveEvent) {
        let Some(live) = self.tabs.get(index).and_then(|t| t.live_rows.as_ref()) else { return };
        let (service, op) = (self.tabs[index].service, live.op);
        let frame = match event {
            crate::client::live::LiveEvent::Frame(text) => {
                live.handle.taken();
                services::console(service).rows_frame(op, &text)
            }
            // These sockets upload nothing.
            crate::client::live::LiveEvent::Sent(_) => return,
            crate::client::live::LiveEvent::Ended(why) => {
                services::RowsFrame { ended: Some(why), ..Default::default() }
            }
        };
        if let Some(why) = frame.ended {
            self.stop_rows(index);
            self.tabs[index].rows_feed_refused = Some(op.name);
            let why = crate::inert::inert(&why);
            return self.error_on(index, format!("{} no longer follows its feed: {why}", op.name));
        }
        let tab = &mut self.tabs[index];
        let Some(live) = tab.live_rows.as_mut() else { return };
        live.dirty |= frame.changed;
        live.done.extend(frame.done);
        if frame.serving && !live.serving {
            live.serving = true;
            if tab.tail.is_none() {
                tab.browser.tail_note = Some(format!("● live · {}", live.shown));
            }
        }
    }

    /// The page asked for after a push came back: indexed off the UI thread, then its rows
    /// take their places.
    pub(super) fn on_rows_page(
        &mut self,
        tab: usize,
        op: &'static Operation,
        result: Result<client::Response, Arc<CallError>>,
    ) {
        let Some(live) = self.tabs[tab].live_rows.as_mut() else { return };
        live.in_flight = None;
        let done = std::mem::take(&mut live.asked_done);
        match result {
            Ok(response) => {
                let tab_state = &self.tabs[tab];
                let rows = indexer::Rows {
                    spec: tab_state.browser.spec_for_more(op.id_field),
                    keyed: op.keyed,
                    arrays: services::console(op.service).record_arrays(op),
                };
                self.start_indexing(tab, response.body, Some(rows), Then::Rows { op, done });
            }
            Err(error) => self.error_on(tab, format!("{}: {error} (it asks again at the next change)", op.full_name())),
        }
    }

    /// The page asked for after a push, indexed: rows with a known id are replaced in place,
    /// new ones go on top.
    pub(super) fn rows_indexed(
        &mut self,
        tab: usize,
        (op, done): (&'static Operation, std::collections::BTreeSet<String>),
        result: Result<Indexed, crate::json_index::JsonError>,
    ) {
        let tab_state = &mut self.tabs[tab];
        let following = tab_state.live_rows.as_ref().is_some_and(|l| l.op.name == op.name);
        if !following || tab_state.page.as_ref().is_none_or(|p| p.op.name != op.name) {
            return;
        }
        let Ok(Indexed { records_doc: doc, table: Some(table), .. }) = result else { return };
        let before = tab_state.browser.row_count();
        tab_state.browser.replace_rows(doc, table, op.id_field, super::TAIL_CAP, &done);
        let rows = tab_state.browser.row_count();
        if rows != before {
            tab_state.browser.page_label = crate::format::plural(rows, "row");
        }
        tab_state.remember_selection();
    }
}
