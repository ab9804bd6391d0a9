//! What the matching engine tells the WebSocket feed: one event per message of the `full`
//! channel (received, open, match, change, done, and a stop order's activate), each with its
//! product's next `sequence`, in the order the engine did them. The sequence counts on whether
//! or not anyone listens, so the REST book's `sequence` is always the last event's; the events
//! themselves are sent only while the feed has sockets ([`State::tap`]).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use rust_decimal::Decimal;

use super::book::Side;
use super::market::Stats;
use super::state::State;

/// One thing the engine did to one order, as of the engine's clock.
#[derive(Clone, Debug)]
pub struct Event {
    pub product: usize,
    /// The product's sequence: this event's own, or for a private one the last public one's.
    pub sequence: u64,
    /// Whether every subscriber may hear of it (else only its order's owner).
    pub public: bool,
    pub at_ms: i64,
    pub kind: EventKind,
}

/// The order an event is about: its id and owner (the user channel's filter), its side and
/// limit price.
#[derive(Clone, Debug)]
pub struct OrderRef {
    pub id: String,
    pub profile: usize,
    pub side: Side,
    pub price: Option<Decimal>,
}

#[derive(Clone, Debug)]
pub enum EventKind {
    /// Accepted by the engine, before it matches (a stop order: when its trigger is reached).
    Received {
        order: OrderRef,
        order_type: &'static str,
        size: Option<Decimal>,
        funds: Option<Decimal>,
        client_oid: Option<String>,
    },
    /// On the book with what is left of it.
    Open { order: OrderRef, remaining: Decimal },
    /// A trade: the taker met the resting maker at the maker's price.
    Match {
        trade_id: u64,
        maker: OrderRef,
        taker: OrderRef,
        price: Decimal,
        size: Decimal,
        /// The fee rates the two orders pay (their owners see their own).
        maker_rate: Decimal,
        taker_rate: Decimal,
        /// The product's 24-hour figures with this trade, for the ticker.
        stats: Box<Stats>,
    },
    /// Self-trade prevention lowered an order's size (`on_book`: it rests at its price).
    Change { order: OrderRef, old_size: Decimal, new_size: Decimal, on_book: bool },
    /// Off the book and out of the engine: `filled` or `canceled`, with what was left.
    Done { order: OrderRef, reason: &'static str, remaining: Option<Decimal>, on_book: bool },
    /// A stop order placed, waiting for its trigger (only its owner hears of it).
    Activate {
        order: OrderRef,
        stop_type: &'static str,
        stop_price: Decimal,
        size: Option<Decimal>,
        funds: Option<Decimal>,
    },
}

impl EventKind {
    /// The order whose owner the user channel tells (a match tells both).
    pub fn order(&self) -> &OrderRef {
        match self {
            EventKind::Received { order, .. }
            | EventKind::Open { order, .. }
            | EventKind::Change { order, .. }
            | EventKind::Done { order, .. }
            | EventKind::Activate { order, .. } => order,
            EventKind::Match { taker, .. } => taker,
        }
    }
}

/// Where the events go while the feed listens: the feed's inbox, and how many of them it has
/// not yet taken (the feed stops listening when that passes its bound, rather than the engine
/// queueing without end for a feed that cannot keep up).
#[derive(Clone)]
pub struct Tap {
    pub send: std::sync::mpsc::Sender<super::hub::Inbox>,
    pub backlog: Arc<AtomicUsize>,
}

/// Events the feed may have waiting before it gives up on its sockets and starts over: a few
/// seconds of the busiest load (tens of thousands a second), some tens of megabytes.
pub const MAX_BACKLOG: usize = 1 << 17;

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
                let _ = tap.send.send(super::hub::Inbox::Overrun);
            }
            return;
        }
        let event = Event { product, sequence, public, at_ms, kind };
        if tap.send.send(super::hub::Inbox::Event(event)).is_err() {
            self.tap = None;
        }
    }

    /// The engine's view of order `key` for an event; `None` once it is forgotten.
    pub fn order_ref(&self, key: u64) -> Option<OrderRef> {
        let order = self.orders.get(&key)?;
        Some(OrderRef { id: order.id.clone(), profile: order.profile, side: order.side, price: order.price })
    }
}
