//! The realtime protocol's vocabulary and who listens: the action numbers of Ably's protocol
//! messages (from its client library specification) and the subscriptions of every realtime
//! connection, which any publish, REST or realtime, delivers to.

use std::collections::HashMap;
use std::sync::Arc;

use super::wire::{Format, Val};
use crate::sandbox::ws::{Gone, Outbox};

pub(super) const HEARTBEAT: i64 = 0;
pub(super) const ACK: i64 = 1;
pub(super) const NACK: i64 = 2;
pub(super) const CONNECTED: i64 = 4;
pub(super) const DISCONNECTED: i64 = 6;
pub(super) const CLOSE: i64 = 7;
pub(super) const CLOSED: i64 = 8;
pub(super) const ERROR: i64 = 9;
pub(super) const ATTACH: i64 = 10;
pub(super) const ATTACHED: i64 = 11;
pub(super) const DETACH: i64 = 12;
pub(super) const DETACHED: i64 = 13;
pub(super) const PRESENCE: i64 = 14;
pub(super) const MESSAGE: i64 = 15;
pub(super) const SYNC: i64 = 16;
pub(super) const AUTH: i64 = 17;

/// A MESSAGE protocol message carrying `messages` (already rendered for its format), the last
/// of them with `serial` at `timestamp`.
pub(super) fn message_frame(
    channel: &str,
    serial: String,
    timestamp: i64,
    messages: Vec<Val>,
    format: Format,
) -> Vec<u8> {
    let mut v = Val::map([
        ("action", Val::Int(MESSAGE)),
        ("channel", Val::str(channel)),
        ("channelSerial", Val::Str(serial)),
        ("timestamp", Val::Int(timestamp)),
    ]);
    v.push("messages", Val::Arr(messages));
    format.encode(&v)
}

/// A PRESENCE protocol message carrying `events` (already rendered for its format), or with
/// `sync` a SYNC of the whole presence set (its cursor empty: the set is complete).
pub(super) fn presence_frame(channel: &str, events: Vec<Val>, sync: bool, format: Format) -> Vec<u8> {
    let mut v = Val::map([("action", Val::Int(if sync { SYNC } else { PRESENCE })), ("channel", Val::str(channel))]);
    if sync {
        v.push("channelSerial", Val::str("sync:"));
    }
    v.push("presence", Val::Arr(events));
    format.encode(&v)
}

/// Who is subscribed to which channel, across connections. Beside the state, not in it (a reset
/// leaves live connections subscribed); a publish delivers while it still holds the state lock,
/// so deliveries keep the channel's order (the lock order is the state's, then the hub's).
#[derive(Default)]
pub(super) struct Hub {
    subscribers: HashMap<String, Vec<Subscriber>>,
}

impl std::fmt::Debug for Hub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map().entries(self.subscribers.iter().map(|(name, subs)| (name, subs.len()))).finish()
    }
}

#[derive(Clone)]
pub(super) struct Subscriber {
    pub(super) connection_id: Arc<str>,
    pub(super) outbox: Outbox,
    pub(super) format: Format,
    /// Whether the connection receives its own messages (`echo=false` says not; presence
    /// events come whatever it says).
    pub(super) echo: bool,
    /// What it asked for and may have: messages, presence events.
    pub(super) messages: bool,
    pub(super) presence: bool,
}

/// What a delivery carries, and so who gets it.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Messages,
    Presence,
}

impl Hub {
    pub(super) fn subscribe(&mut self, channel: &str, subscriber: Subscriber) {
        let list = self.subscribers.entry(channel.to_owned()).or_default();
        list.retain(|s| s.connection_id != subscriber.connection_id);
        list.push(subscriber);
    }

    pub(super) fn unsubscribe(&mut self, channel: &str, connection_id: &str) {
        if let Some(list) = self.subscribers.get_mut(channel) {
            list.retain(|s| &*s.connection_id != connection_id);
            if list.is_empty() {
                self.subscribers.remove(channel);
            }
        }
    }

    pub(super) fn forget(&mut self, connection_id: &str) {
        self.subscribers.retain(|_, list| {
            list.retain(|s| &*s.connection_id != connection_id);
            !list.is_empty()
        });
    }

    /// Sends a MESSAGE or PRESENCE just made on `channel` to its subscribers of that kind;
    /// `frame` writes it in a format (each written once). A subscriber whose socket is gone (or
    /// too slow to keep) is dropped; the connection messages came from gets them only if it
    /// asked for echoes.
    pub(super) fn deliver(&mut self, channel: &str, kind: Kind, from: Option<&str>, frame: impl Fn(Format) -> Vec<u8>) {
        let Some(list) = self.subscribers.get_mut(channel) else { return };
        let mut encoded: [Option<Vec<u8>>; 2] = [None, None];
        list.retain(|subscriber| {
            let wanted = match kind {
                Kind::Messages => subscriber.messages && (subscriber.echo || from != Some(&*subscriber.connection_id)),
                Kind::Presence => subscriber.presence,
            };
            if !wanted {
                return true;
            }
            let slot = usize::from(subscriber.format == Format::Msgpack);
            let bytes = encoded[slot].get_or_insert_with(|| frame(subscriber.format));
            send_bytes(&subscriber.outbox, subscriber.format, bytes.clone()).is_ok()
        });
        if list.is_empty() {
            self.subscribers.remove(channel);
        }
    }
}

pub(super) fn send_bytes(outbox: &Outbox, format: Format, bytes: Vec<u8>) -> Result<(), Gone> {
    match format {
        Format::Json => outbox.text(String::from_utf8(bytes).unwrap_or_default()),
        Format::Msgpack => outbox.binary(bytes),
    }
}
