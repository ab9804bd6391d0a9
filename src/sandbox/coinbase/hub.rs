//! The WebSocket feed's hub: one thread of its own (so fan-out never runs on the workers that
//! answer requests) that takes the engine's events (`journal.rs`) in the order the engine did
//! them and sends each socket the messages of the channels it subscribed to. It keeps each
//! product's level-2 book, last trade and ticker as of the last event it took, so a new
//! subscriber's snapshot and the updates after it meet at exactly one event, whatever the
//! engine has done since.
//!
//! The hub listens to the engine only while it has sockets: the first subscriber makes it read
//! the books from the state (under its lock, so no event falls between), and when the last
//! socket goes it stops. Timers: heartbeats every second, `level2_batch` every 50 ms,
//! `ticker_batch` and `status` every 5 s.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use axum::extract::ws::Utf8Bytes;
use rust_decimal::Decimal;

use super::book::Side;
use super::catalog::PRODUCTS;
use super::events::{bit, Channel, Event, EventKind, Inbox, Request, Tap};
use super::feed_wire::{self as fw, Owner, Tape, Ticker};
use super::Shared;
use crate::sandbox::ws::Outbox;

const HEARTBEAT_EVERY: Duration = Duration::from_secs(1);
const LEVEL2_BATCH_EVERY: Duration = Duration::from_millis(50);
const TICKER_BATCH_EVERY: Duration = Duration::from_secs(5);
const STATUS_EVERY: Duration = Duration::from_secs(5);
/// Messages taken from the inbox between two looks at the timers.
const BURST: usize = 4096;
/// The least time between two hand-overs to the sockets. Under load a socket is then woken, and
/// writes, once for a few milliseconds of events rather than for each one or two (the wakes and
/// system calls, not the messages, were most of the fan-out's cost); the first event after a
/// quiet spell still goes at once.
const HAND_OVER_EVERY: Duration = Duration::from_millis(2);

struct Conn {
    id: u64,
    outbox: Outbox,
    subs: [u32; Channel::COUNT],
    user: Option<usize>,
    /// The socket went (too slow, closed): dropped at the end of the pass.
    gone: bool,
    /// What this pass sends it: handed to its socket at once at the pass's end, so a socket
    /// is woken, and writes, once for a pass's messages rather than once each.
    pending: Vec<Utf8Bytes>,
}

impl Conn {
    fn has(&self, channel: Channel, product: usize) -> bool {
        self.subs[channel as usize] & bit(product) != 0
    }

    fn send(&mut self, text: &Utf8Bytes) {
        if !self.gone {
            self.pending.push(text.clone());
        }
    }

    /// Hands the pass's messages to the socket.
    fn flush(&mut self) {
        // The next pass likely brings as many: room for them made once, not grown.
        let room = self.pending.len();
        let pending = std::mem::replace(&mut self.pending, Vec::with_capacity(room));
        if !pending.is_empty() && !self.gone && self.outbox.shared_texts(pending).is_err() {
            self.gone = true;
        }
    }
}

/// One product as of the last event the hub took.
struct Product {
    sequence: u64,
    bids: BTreeMap<Decimal, Decimal>,
    asks: BTreeMap<Decimal, Decimal>,
    last_trade_id: u64,
    /// The last trade: a `matches` subscriber's first message.
    last_match: Option<Tape>,
    ticker: Option<Ticker>,
    /// Levels changed since `level2_batch` last went out, and the time of the last change.
    batch: Vec<(Side, Decimal)>,
    batch_ms: i64,
    /// A trade since `ticker_batch` last went out.
    ticker_changed: bool,
}

impl Product {
    fn side(&mut self, side: Side) -> &mut BTreeMap<Decimal, Decimal> {
        match side {
            Side::Buy => &mut self.bids,
            Side::Sell => &mut self.asks,
        }
    }

    /// Adds `delta` to a level's size; the level's new size.
    fn adjust(&mut self, side: Side, price: Decimal, delta: Decimal) -> Decimal {
        let levels = self.side(side);
        let size = levels.get(&price).copied().unwrap_or(Decimal::ZERO).saturating_add(delta);
        if size > Decimal::ZERO {
            levels.insert(price, size);
            size
        } else {
            levels.remove(&price);
            Decimal::ZERO
        }
    }

    fn size_at(&self, side: Side, price: Decimal) -> Decimal {
        let levels = match side {
            Side::Buy => &self.bids,
            Side::Sell => &self.asks,
        };
        levels.get(&price).copied().unwrap_or(Decimal::ZERO)
    }

    fn top(&self) -> (Option<fw::Level>, Option<fw::Level>) {
        let bid = self.bids.iter().next_back().map(|(p, s)| (*p, *s));
        let ask = self.asks.iter().next().map(|(p, s)| (*p, *s));
        (bid, ask)
    }

    fn ticker_text(&self, product: usize) -> Option<Utf8Bytes> {
        let (bid, ask) = self.top();
        self.ticker.as_ref().map(|t| fw::ticker(product, t, bid, ask))
    }
}

/// Who owns each profile, read once when the hub starts listening (profiles are fixed).
struct Profile {
    user: usize,
    user_id: String,
    profile_id: String,
}

/// What the hub knows of the engine while it listens.
struct Mirror {
    products: Vec<Product>,
    profiles: Vec<Profile>,
}

pub struct Hub {
    shared: Weak<Shared>,
    inbox_sender: Sender<Inbox>,
    backlog: Arc<AtomicUsize>,
    conns: Vec<Conn>,
    mirror: Option<Mirror>,
}

/// Starts the hub's thread; what the sockets and the engine send it goes to the returned
/// sender. The thread ends with the simulator.
pub fn spawn(shared: Weak<Shared>) -> Sender<Inbox> {
    let (send, inbox) = std::sync::mpsc::channel();
    let hub = Hub {
        shared,
        inbox_sender: send.clone(),
        backlog: Arc::new(AtomicUsize::new(0)),
        conns: Vec::new(),
        mirror: None,
    };
    let started = std::thread::Builder::new().name("coinbase-feed".into()).spawn(move || {
        // The same priority whichever thread built the simulator (a request's thread is
        // lowered, a worker's is not): the fan-out yields to the runtime's workers as the
        // simulators' heavy work does.
        crate::sandbox::control::lower_priority();
        hub.run(&inbox)
    });
    if let Err(e) = started {
        eprintln!("opsdeck: the Coinbase feed could not start its thread: {e}");
    }
    send
}

impl Hub {
    fn run(mut self, inbox: &Receiver<Inbox>) {
        let start = Instant::now();
        let mut next_heartbeat = start + HEARTBEAT_EVERY;
        let mut next_level2 = start + LEVEL2_BATCH_EVERY;
        let mut next_ticker = start + TICKER_BATCH_EVERY;
        let mut next_status = start + STATUS_EVERY;
        let mut next_hand_over = start;
        loop {
            let due = next_heartbeat.min(next_level2).min(next_ticker).min(next_status);
            match inbox.recv_timeout(due.saturating_duration_since(Instant::now())) {
                Ok(message) => {
                    self.take(message);
                    // What else comes meanwhile goes in the same hand-over.
                    let early = next_hand_over.saturating_duration_since(Instant::now());
                    if !early.is_zero() {
                        std::thread::sleep(early);
                    }
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => return,
            }
            for _ in 0..BURST {
                match inbox.try_recv() {
                    Ok(message) => self.take(message),
                    Err(_) => break,
                }
            }
            let Some(shared) = self.shared.upgrade() else { return };
            if shared.engine.stop.is_cancelled() {
                return;
            }
            let now = Instant::now();
            let now_ms = shared.engine.clock.now_ms();
            drop(shared);
            if now >= next_level2 {
                self.flush_level2_batches();
                next_level2 = now + LEVEL2_BATCH_EVERY;
            }
            if now >= next_heartbeat {
                self.heartbeats(now_ms);
                next_heartbeat = now + HEARTBEAT_EVERY;
            }
            if now >= next_ticker {
                self.ticker_batches();
                next_ticker = now + TICKER_BATCH_EVERY;
            }
            if now >= next_status {
                self.broadcast_status();
                next_status = now + STATUS_EVERY;
            }
            self.sweep();
            next_hand_over = Instant::now() + HAND_OVER_EVERY;
        }
    }

    fn take(&mut self, message: Inbox) {
        match message {
            Inbox::Event(event) => {
                self.backlog.fetch_sub(1, Ordering::AcqRel);
                self.deliver(&event);
            }
            Inbox::Subscribe(request) => self.subscribe(request),
            Inbox::Closed(conn) => {
                if let Some(c) = self.conns.iter_mut().find(|c| c.id == conn) {
                    c.gone = true;
                }
                self.sweep();
            }
            Inbox::Overrun => {
                for conn in &mut self.conns {
                    conn.send(&fw::error("ErrSlowConsume", "the feed fell behind the matching engine"));
                    conn.flush();
                    conn.outbox.close(1011, "feed overrun");
                    conn.gone = true;
                }
                self.mirror = None;
                self.sweep();
            }
            Inbox::Reset => {
                for conn in &mut self.conns {
                    conn.flush();
                    conn.outbox.close(1012, "the sandbox was reset");
                    conn.gone = true;
                }
                self.mirror = None;
                self.sweep();
            }
        }
    }

    /// Drops the sockets that went; with none left, stops listening to the engine.
    fn sweep(&mut self) {
        for conn in &mut self.conns {
            conn.flush();
        }
        self.conns.retain(|c| !c.gone);
        if self.conns.is_empty() && self.mirror.is_some() {
            self.mirror = None;
            if let Some(shared) = self.shared.upgrade() {
                shared.lock().tap = None;
            }
        }
    }

    /// Starts listening: the books, last trades and tickers read from the state, and the tap
    /// set, under one lock, so the first event the hub takes is the one after what it read.
    fn listen(&mut self) -> bool {
        let Some(shared) = self.shared.upgrade() else { return false };
        let now_ms = shared.engine.clock.now_ms();
        let mut state = shared.current();
        self.backlog.store(0, Ordering::Release);
        state.tap = Some(Tap { send: self.inbox_sender.clone(), backlog: Arc::clone(&self.backlog) });
        let products = (0..PRODUCTS.len())
            .map(|p| {
                let market = &state.markets[p];
                let mut product = Product {
                    sequence: market.sequence,
                    bids: BTreeMap::new(),
                    asks: BTreeMap::new(),
                    last_trade_id: market.trades.back().map_or(0, |t| t.id),
                    last_match: market.trades.back().map(|t| Tape {
                        product: p,
                        sequence: t.sequence,
                        trade_id: t.id,
                        maker_order_id: t.maker_order_id.clone(),
                        taker_order_id: t.taker_order_id.clone(),
                        maker_side: t.side,
                        price: t.price,
                        size: t.size,
                        at_ms: t.at_ms,
                    }),
                    ticker: None,
                    batch: Vec::new(),
                    batch_ms: now_ms,
                    ticker_changed: false,
                };
                for side in [Side::Buy, Side::Sell] {
                    for (price, queue) in market.book.levels(side) {
                        let size = queue
                            .iter()
                            .filter_map(|k| state.orders.get(k))
                            .fold(Decimal::ZERO, |sum, o| sum.saturating_add(o.remaining()));
                        product.side(side).insert(price, size);
                    }
                }
                if let Some(trade) = market.trades.back() {
                    product.ticker = Some(Ticker {
                        sequence: trade.sequence,
                        trade_id: trade.id,
                        price: trade.price,
                        size: trade.size,
                        taker_side: trade.side.opposite(),
                        at_ms: trade.at_ms,
                        stats: state.stats(p, now_ms),
                    });
                }
                product
            })
            .collect();
        let profiles = state
            .profiles
            .iter()
            .map(|p| Profile { user: p.user, user_id: state.users[p.user].id.clone(), profile_id: p.id.clone() })
            .collect();
        self.mirror = Some(Mirror { products, profiles });
        true
    }

    fn subscribe(&mut self, request: Request) {
        if self.mirror.is_none() && !request.unsubscribe && !self.listen() {
            return;
        }
        let at = match self.conns.iter().position(|c| c.id == request.conn) {
            Some(at) => at,
            None => {
                self.conns.push(Conn {
                    id: request.conn,
                    outbox: request.outbox,
                    subs: [0; Channel::COUNT],
                    user: None,
                    gone: false,
                    pending: Vec::new(),
                });
                self.conns.len() - 1
            }
        };
        let conn = &mut self.conns[at];
        let mut added = [0u32; Channel::COUNT];
        for channel in Channel::ALL {
            let asked = request.channels[channel as usize];
            let subs = &mut conn.subs[channel as usize];
            if request.unsubscribe {
                *subs &= !asked;
            } else {
                added[channel as usize] = asked & !*subs;
                *subs |= asked;
            }
        }
        if request.user.is_some() {
            conn.user = request.user;
        }
        let listed: Vec<(&str, Vec<&str>)> = Channel::ALL
            .iter()
            .filter(|c| conn.subs[**c as usize] != 0)
            .map(|c| {
                let products = if c.productless() {
                    Vec::new()
                } else {
                    (0..PRODUCTS.len()).filter(|p| conn.has(*c, *p)).map(|p| PRODUCTS[p].id).collect()
                };
                (c.listed_as(), products)
            })
            .collect();
        conn.send(&fw::subscriptions(&listed));
        let Some(mirror) = &self.mirror else { return };
        let now_ms = self.shared.upgrade().map_or(0, |s| s.engine.clock.now_ms());
        if added[Channel::Status as usize] != 0 {
            conn.send(&fw::status());
        }
        for (p, product) in mirror.products.iter().enumerate() {
            let new = |channel: Channel| added[channel as usize] & bit(p) != 0;
            if new(Channel::Ticker) || new(Channel::TickerBatch) {
                if let Some(text) = product.ticker_text(p) {
                    conn.send(&text);
                }
            }
            if new(Channel::Matches) {
                if let Some(last) = &product.last_match {
                    conn.send(&fw::trade(last, "last_match", None));
                }
            }
            if new(Channel::Level2) || new(Channel::Level2Batch) {
                conn.send(&fw::snapshot(p, product.bids.iter().rev(), product.asks.iter(), now_ms));
            }
        }
    }

    fn deliver(&mut self, event: &Event) {
        let Some(mirror) = &mut self.mirror else { return };
        let p = event.product;
        let product = &mut mirror.products[p];
        let public = event.public;
        if public {
            product.sequence = event.sequence;
        }
        // The level this event changes, with its new size.
        let level = match &event.kind {
            EventKind::Open { order, remaining } => order.price.map(|at| (order.side, at, *remaining)),
            EventKind::Match { maker, price, size, .. } => Some((maker.side, *price, -*size)),
            EventKind::Done { order, remaining, on_book: true, .. } => {
                order.price.zip(*remaining).map(|(at, left)| (order.side, at, -left))
            }
            EventKind::Change { order, old_size, new_size, on_book: true } => {
                order.price.map(|at| (order.side, at, *new_size - *old_size))
            }
            _ => None,
        };
        let level = level
            .filter(|(_, _, delta)| !delta.is_zero())
            .map(|(side, at, delta)| (side, at, product.adjust(side, at, delta)));
        if let Some((side, at, _)) = level {
            product.batch.push((side, at));
            product.batch_ms = event.at_ms;
        }
        let is_match = matches!(event.kind, EventKind::Match { .. });
        if let EventKind::Match { trade_id, taker, price, size, stats, .. } = &event.kind {
            product.last_trade_id = *trade_id;
            product.last_match = Tape::of(event);
            product.ticker = Some(Ticker {
                sequence: event.sequence,
                trade_id: *trade_id,
                price: *price,
                size: *size,
                taker_side: taker.side,
                at_ms: event.at_ms,
                stats: (**stats).clone(),
            });
            product.ticker_changed = true;
        }
        let product = &mirror.products[p];
        // Each message is made once, when the first socket that wants it is met.
        let (mut full, mut update, mut ticker, mut told) = (None, None, None, None);
        for conn in &mut self.conns {
            // A match goes once for each of the two channels that carry it.
            let copies =
                usize::from(conn.has(Channel::Full, p)) + usize::from(is_match && conn.has(Channel::Matches, p));
            if public && copies > 0 {
                if let Some(text) = full.get_or_insert_with(|| fw::event(event, None)) {
                    for _ in 0..copies {
                        conn.send(text);
                    }
                }
            }
            if is_match && conn.has(Channel::Ticker, p) {
                if let Some(text) = ticker.get_or_insert_with(|| product.ticker_text(p)) {
                    conn.send(text);
                }
            }
            if let (Some((side, at, size)), true) = (level, conn.has(Channel::Level2, p)) {
                conn.send(update.get_or_insert_with(|| fw::l2update(p, &[(side, at, size)], event.at_ms)));
            }
            if conn.has(Channel::User, p) {
                let user = conn.user;
                let told = told.get_or_insert_with(|| owners(&mirror.profiles, event));
                for owner in told.iter().filter(|o| Some(o.user) == user) {
                    if let Some(text) = fw::event(event, Some(&owner.seen)) {
                        conn.send(&text);
                    }
                }
            }
        }
    }

    fn flush_level2_batches(&mut self) {
        let Some(mirror) = &mut self.mirror else { return };
        for (p, product) in mirror.products.iter_mut().enumerate() {
            if product.batch.is_empty() {
                continue;
            }
            let mut levels = std::mem::take(&mut product.batch);
            levels.sort_by_key(|(side, at)| (*side == Side::Sell, *at));
            levels.dedup();
            let changes: Vec<(Side, Decimal, Decimal)> =
                levels.into_iter().map(|(side, at)| (side, at, product.size_at(side, at))).collect();
            let mut text = None;
            for conn in self.conns.iter_mut().filter(|c| c.has(Channel::Level2Batch, p)) {
                conn.send(text.get_or_insert_with(|| fw::l2update(p, &changes, product.batch_ms)));
            }
        }
    }

    fn heartbeats(&mut self, now_ms: i64) {
        let Some(mirror) = &self.mirror else { return };
        for (p, product) in mirror.products.iter().enumerate() {
            let mut text = None;
            for conn in self.conns.iter_mut().filter(|c| c.has(Channel::Heartbeat, p)) {
                conn.send(
                    text.get_or_insert_with(|| fw::heartbeat(p, product.sequence, product.last_trade_id, now_ms)),
                );
            }
        }
    }

    fn ticker_batches(&mut self) {
        let Some(mirror) = &mut self.mirror else { return };
        for (p, product) in mirror.products.iter_mut().enumerate() {
            if !std::mem::take(&mut product.ticker_changed) {
                continue;
            }
            let mut text = None;
            for conn in self.conns.iter_mut().filter(|c| c.has(Channel::TickerBatch, p)) {
                if let Some(t) = text.get_or_insert_with(|| product.ticker_text(p)) {
                    conn.send(t);
                }
            }
        }
    }

    fn broadcast_status(&mut self) {
        let mut text = None;
        for conn in self.conns.iter_mut().filter(|c| c.subs[Channel::Status as usize] != 0) {
            conn.send(text.get_or_insert_with(fw::status));
        }
    }
}

/// An owner of an event's order, and how the user channel shows it to them.
struct Seen<'a> {
    user: usize,
    seen: Owner<'a>,
}

/// Who the user channel tells of an event: its order's owner, or a match's two.
fn owners<'a>(profiles: &'a [Profile], event: &Event) -> Vec<Seen<'a>> {
    let seen = |profile: usize, fee: Option<(bool, Decimal)>| {
        profiles
            .get(profile)
            .map(|p| Seen { user: p.user, seen: Owner { user_id: &p.user_id, profile_id: &p.profile_id, fee } })
    };
    match &event.kind {
        EventKind::Match { maker, taker, maker_rate, taker_rate, .. } => {
            [seen(maker.profile, Some((true, *maker_rate))), seen(taker.profile, Some((false, *taker_rate)))]
                .into_iter()
                .flatten()
                .collect()
        }
        kind => seen(kind.order().profile, None).into_iter().collect(),
    }
}
