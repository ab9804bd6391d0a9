//! A live stream the console sends (Deepgram's live transcription of a file): its form, its
//! socket, and its view, kept up to date with each frame the service sends. The stream lives
//! as long as its view is open: closing the view stops it.

use super::*;

impl App {
    /// "transcribe live": the streaming service's tab, and its live form.
    pub(super) fn transcribe_live(&mut self) {
        let Some((service, op)) = services::live_streamer() else {
            return self.error("no service of this console streams audio live");
        };
        let Some(index) = self.tabs.iter().position(|t| t.service == service) else {
            return self.error(format!("this console has no {} tab", service.title()));
        };
        self.switch_tab(index);
        let values = self.tab().prefill(op, None);
        self.open_form_with(op, &values);
    }

    /// The live form's values sent: the socket opens with its upload, and its view shows.
    pub(super) fn start_stream(&mut self, op: &'static Operation, values: Values) {
        let index = self.active;
        let tab = &self.tabs[index];
        let stream = match services::console(tab.service).live_stream(op, &values, &tab.target) {
            Ok(stream) => stream,
            Err(why) => return self.error(format!("{} was not started: {why}", op.name)),
        };
        let Some(reports) = self.background.clone() else {
            return self.error(format!("{} was not started: this console runs no background tasks", op.name));
        };
        self.next_live = self.next_live.wrapping_add(1);
        let generation = self.next_live;
        let view = stream.view;
        let detail = view.detail();
        let subject = detail.subject.clone().unwrap_or_else(|| op.name.to_owned());
        let handle = crate::client::live::open_with(stream.opening, move |event| {
            let _ = reports.send(Background::Live(index, generation, event));
        });
        self.tabs[index].live_stream =
            Some(crate::tui::tab::LiveStreamState { handle: Some(handle), generation, subject, view });
        self.popup = Some(Popup::Detail(detail));
    }

    /// What tab `index`'s stream said: its view takes it, and shows it if open.
    pub(super) fn on_live_stream(&mut self, index: usize, event: crate::client::live::LiveEvent) {
        let Some(live) = self.tabs.get_mut(index).and_then(|t| t.live_stream.as_mut()) else { return };
        match event {
            crate::client::live::LiveEvent::Frame(text) => {
                if let Some(handle) = &live.handle {
                    handle.taken();
                }
                live.view.frame(&text);
            }
            crate::client::live::LiveEvent::Sent(bytes) => live.view.sent(bytes),
            crate::client::live::LiveEvent::Ended(why) => {
                live.handle = None;
                live.view.ended(&crate::inert::inert(&why));
            }
        }
        // The view took the frame; only the active tab's is on screen to be redrawn.
        if index != self.active {
            return;
        }
        let detail = live.view.detail();
        if let Some(Popup::Detail(open)) = self.popup.as_mut() {
            if open.subject == detail.subject {
                let scroll = open.scroll;
                *open = Detail { scroll, ..detail };
            }
        }
    }

    /// Whether the active tab has a stream whose view is no longer open.
    pub(super) fn stream_view_closed(&self) -> bool {
        self.tab().live_stream.as_ref().is_some_and(|live| {
            !matches!(&self.popup, Some(Popup::Detail(d)) if d.subject.as_deref() == Some(live.subject.as_str()))
        })
    }

    /// A stream whose view closed stops (and says so, unless it had ended by itself).
    pub(super) fn follow_stream(&mut self) {
        if !self.stream_view_closed() {
            return;
        }
        let Some(live) = self.tabs[self.active].live_stream.take() else { return };
        if live.handle.is_some() {
            self.info(format!("stopped the {}: its view closed", live.subject));
        }
    }
}
