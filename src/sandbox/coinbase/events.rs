//! What the Coinbase feed's parts tell each other: the matching engine's events (one per
//! `full`-channel message, `journal.rs` sends them), a product's 24-hour figures (REST's stats
//! and the ticker's), and the hub's inbox, where the engine's events and the sockets' requests
//! arrive in one order. Data only: every module of the feed and the engine may import it, and it
//! imports none of them.

use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

use rust_decimal::Decimal;

use super::book::Side;
use super::catalog::PRODUCTS;
use crate::sandbox::ws::Outbox;

/// 24-hour statistics.
#[derive(Clone, Debug)]
pub struct Stats {
    pub open: Option<Decimal>,
    pub high: Option<Decimal>,
    pub low: Option<Decimal>,
    pub last: Option<Decimal>,
    pub volume: Decimal,
    pub volume_30day: Decimal,
}

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
    pub send: std::sync::mpsc::Sender<Inbox>,
    pub backlog: Arc<AtomicUsize>,
}

/// Events the feed may have waiting before it gives up on its sockets and starts over: a few
/// seconds of the busiest load (tens of thousands a second), some tens of megabytes.
pub const MAX_BACKLOG: usize = 1 << 17;

/// What the hub is told, in order: the engine's events and the sockets' requests.
pub enum Inbox {
    Event(Event),
    /// The engine stopped sending: the hub fell too far behind.
    Overrun,
    Subscribe(Request),
    Closed(u64),
    /// The simulator was reset: every socket ends (their books are gone).
    Reset,
}

/// A socket's subscribe or unsubscribe, already checked.
pub struct Request {
    pub conn: u64,
    pub outbox: Outbox,
    pub unsubscribe: bool,
    /// Per channel, the products asked (a bit per product).
    pub channels: [u32; Channel::COUNT],
    /// The authenticated caller: its user (the `user` channel's filter).
    pub user: Option<usize>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Channel {
    Heartbeat,
    Status,
    Ticker,
    TickerBatch,
    Level2,
    Level2Batch,
    Matches,
    Full,
    User,
}

impl Channel {
    pub const COUNT: usize = 9;
    pub const ALL: [Channel; Channel::COUNT] = [
        Channel::Heartbeat,
        Channel::Status,
        Channel::Ticker,
        Channel::TickerBatch,
        Channel::Level2,
        Channel::Level2Batch,
        Channel::Matches,
        Channel::Full,
        Channel::User,
    ];

    /// A channel by the names the exchange takes (the batched ones have two).
    pub fn parse(name: &str) -> Option<Channel> {
        Some(match name {
            "heartbeat" => Channel::Heartbeat,
            "status" => Channel::Status,
            "ticker" => Channel::Ticker,
            "ticker_batch" | "ticker_1000" => Channel::TickerBatch,
            "level2" => Channel::Level2,
            "level2_batch" | "level2_50" => Channel::Level2Batch,
            "matches" => Channel::Matches,
            "full" => Channel::Full,
            "user" => Channel::User,
            _ => return None,
        })
    }

    /// The name `subscriptions` lists it by: the batched channels by their older names.
    pub fn listed_as(self) -> &'static str {
        match self {
            Channel::Heartbeat => "heartbeat",
            Channel::Status => "status",
            Channel::Ticker => "ticker",
            Channel::TickerBatch => "ticker_1000",
            Channel::Level2 => "level2",
            Channel::Level2Batch => "level2_50",
            Channel::Matches => "matches",
            Channel::Full => "full",
            Channel::User => "user",
        }
    }

    /// Channels a socket must have signed its subscribe for.
    pub fn needs_auth(self) -> bool {
        matches!(self, Channel::Level2 | Channel::Full | Channel::User)
    }

    /// Channels that take no products.
    pub fn productless(self) -> bool {
        self == Channel::Status
    }
}

/// The bit of `product` in a channel's mask; every product has one.
pub const fn bit(product: usize) -> u32 {
    1 << product
}

const _: () = assert!(PRODUCTS.len() <= 32, "a product's subscribers are a bit in a u32");

/// The bit a status subscription is kept in (it has no products).
pub const STATUS_BIT: u32 = 1;
