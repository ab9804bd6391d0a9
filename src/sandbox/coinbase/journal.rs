//! The matching engine's side of the feed: each `full`-channel event counts its product's next
//! `sequence` whether or not anyone listens (so the REST book's `sequence` is always the last
//! event's), and goes to the feed's hub while it listens ([`State::tap`]).

use std::sync::atomic::Ordering;

use super::events::{Event, EventKind, Inbox, OrderRef, MAX_BACKLOG};
use super::state::State;

impl State {
    /// Counts the product's next sequence and, while the feed listens, sends it the event.
    pub fn emit(&mut self, product: usize, at_ms: i64, kind: impl FnOnce(&State) -> Option<EventKind>) {
        let market = &mut self.markets[product];
        market.sequence += 1;
        let sequence = market.sequence;
        self.send_event(product, sequence, true, at_ms, kind);
    }

    /// An event only the order's owner hears (a stop order waiting for its trigger): it takes
    /// no sequence of its own, so the public channels have no gap where it was.
    pub fn emit_private(&mut self, product: usize, at_ms: i64, kind: impl FnOnce(&State) -> Option<EventKind>) {
        let sequence = self.markets[product].sequence;
        self.send_event(product, sequence, false, at_ms, kind);
    }

    fn send_event(
        &mut self,
        product: usize,
        sequence: u64,
        public: bool,
        at_ms: i64,
        kind: impl FnOnce(&State) -> Option<EventKind>,
    ) {
        if self.tap.is_none() {
            return;
        }
        let Some(kind) = kind(self) else { return };
        let Some(tap) = &self.tap else { return };
        if tap.backlog.fetch_add(1, Ordering::AcqRel) >= MAX_BACKLOG {
            // The feed has fallen this far behind: it starts over rather than the engine
            // queueing for it without end.
            if let Some(tap) = self.tap.take() {
                tap.backlog.fetch_sub(1, Ordering::AcqRel);
                let _ = tap.send.send(Inbox::Overrun);
            }
            return;
        }
        let event = Event { product, sequence, public, at_ms, kind };
        if tap.send.send(Inbox::Event(event)).is_err() {
            self.tap = None;
        }
    }

    /// The engine's view of order `key` for an event; `None` once it is forgotten.
    pub fn order_ref(&self, key: u64) -> Option<OrderRef> {
        let order = self.orders.get(&key)?;
        Some(OrderRef { id: order.id.clone(), profile: order.profile, side: order.side, price: order.price })
    }
}
