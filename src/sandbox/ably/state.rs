//! The simulator's state: channels with their history and presence, push devices and
//! subscriptions, the push log and the stats counters. One `Mutex` guards all of it.

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::sync::Arc;

use super::stats::StatsBook;
use super::wire::Val;
use crate::sandbox::retention::{Retained, RetentionPolicy};

/// Tag used in message serials where Ably puts the id of the server that accepted the message.
const SERVER_TAG: &str = "opsdecksim";

/// A value kept as its MessagePack bytes, which give it back exactly (binary included): a `Val`
/// tree costs several times its encoding, and a stored message is read far less than it is kept.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Packed(Box<[u8]>);

impl Packed {
    pub(super) fn pack(value: &Val) -> Packed {
        Packed(rmp_serde::to_vec(value).unwrap_or_default().into_boxed_slice())
    }

    pub(super) fn unpack(&self) -> Val {
        rmp_serde::from_slice(&self.0).unwrap_or(Val::Null)
    }
}

/// A message serial, kept as its parts and written out as Ably's `<ms>-<counter>@<server>:<index>`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Serial {
    ms: i64,
    count: u16,
    index: u16,
}

impl std::fmt::Display for Serial {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:014}-{:03}@{SERVER_TAG}:{:03}", self.ms, self.count, self.index)
    }
}

/// One stored message. Held behind `Arc` so a history page is collected under the lock without
/// copying payloads and rendered after the lock is released. Kept compact (the fields a read
/// needs are packed into one allocation, the serial kept as its parts): history is most of what
/// the simulator holds.
#[derive(Debug)]
pub(super) struct Message {
    pub(super) id: Box<str>,
    /// The [`MessageBody`], packed.
    body: Packed,
    pub(super) timestamp: i64,
    pub(super) serial: Serial,
}

/// A stored message's fields besides its id, time and serial.
#[derive(Clone, Debug, Default, PartialEq)]
pub(super) struct MessageBody {
    pub(super) name: Option<String>,
    pub(super) client_id: Option<String>,
    pub(super) connection_id: Option<String>,
    /// Payload as published; binary stays `Val::Bin` (base64 transport encoding removed).
    pub(super) data: Option<Val>,
    /// Encoding steps still to be applied by the reader, without any transport `base64`.
    pub(super) encoding: Option<String>,
    pub(super) extras: Option<Val>,
}

impl Message {
    pub(super) fn new(id: String, body: MessageBody, timestamp: i64, serial: Serial) -> Message {
        let text = |k: &'static str, v: Option<String>| v.map(|v| (std::borrow::Cow::Borrowed(k), Val::Str(v)));
        let value = |k: &'static str, v: Option<Val>| v.map(|v| (std::borrow::Cow::Borrowed(k), v));
        let fields: Vec<_> = [
            text("n", body.name),
            text("c", body.client_id),
            text("k", body.connection_id),
            value("d", body.data),
            text("e", body.encoding),
            value("x", body.extras),
        ]
        .into_iter()
        .flatten()
        .collect();
        Message { id: id.into_boxed_str(), body: Packed::pack(&Val::Map(fields)), timestamp, serial }
    }

    /// The fields besides id, time and serial, unpacked.
    pub(super) fn body(&self) -> MessageBody {
        let mut body = MessageBody::default();
        if let Val::Map(fields) = self.body.unpack() {
            for (key, value) in fields {
                let text = || match &value {
                    Val::Str(s) => Some(s.clone()),
                    _ => None,
                };
                match key.as_ref() {
                    "n" => body.name = text(),
                    "c" => body.client_id = text(),
                    "k" => body.connection_id = text(),
                    "e" => body.encoding = text(),
                    "d" => body.data = Some(value),
                    "x" => body.extras = Some(value),
                    _ => {}
                }
            }
        }
        body
    }
}

/// The key of a message id in a channel's id index: a hash, since the index only has to find
/// the message, whose own id is then compared.
fn id_key(id: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    id.hash(&mut hasher);
    hasher.finish()
}

/// Presence actions as numbered on the wire.
pub(super) mod action {
    pub(in super::super) const PRESENT: i64 = 1;
    pub(in super::super) const ENTER: i64 = 2;
    pub(in super::super) const LEAVE: i64 = 3;
    pub(in super::super) const UPDATE: i64 = 4;
}

/// A presence event, or (with action `PRESENT`) a member of the current presence set.
#[derive(Debug)]
pub(super) struct Presence {
    pub(super) id: String,
    pub(super) action: i64,
    pub(super) client_id: String,
    pub(super) connection_id: String,
    pub(super) data: Option<Val>,
    pub(super) encoding: Option<String>,
    pub(super) timestamp: i64,
}

impl Presence {
    /// Ably's member key, unique per member of a presence set.
    pub(super) fn member_key(&self) -> String {
        format!("{}:{}", self.connection_id, self.client_id)
    }
}

/// Occupancy counters that come from realtime connections the simulator does not have; seeded,
/// and zero for channels created over REST.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Occupancy {
    pub(super) connections: i64,
    pub(super) publishers: i64,
    pub(super) subscribers: i64,
    pub(super) presence_subscribers: i64,
}

/// How long history lives: Ably keeps persisted history 24 to 72 hours by plan; the sandbox
/// account is on the longer one, so every seeded history is still there at start.
pub(super) const HISTORY_HOURS: i64 = 72;
/// Messages (and presence events) kept per channel, so a sandbox under load stays bounded; far
/// above what a page or a demo needs.
pub(super) const MAX_HISTORY_PER_CHANNEL: usize = 10_000;
/// Channels kept; beyond it the channel idle longest (without present members) goes.
pub(super) const MAX_CHANNELS: usize = 2_000;

pub(super) const HISTORY_RETENTION: RetentionPolicy =
    RetentionPolicy::new(Some(HISTORY_HOURS * RetentionPolicy::HOUR_MS), MAX_HISTORY_PER_CHANNEL);

/// Where a channel's seeded history comes from, until it is generated: what the seed's
/// generator (`seed::fill_history`) needs, and that generator, so this module does not depend
/// on the seed data.
#[derive(Clone, Copy, Debug)]
pub(super) struct PendingHistory {
    pub(super) seed: u64,
    /// The channel's place in the seed's channel list.
    pub(super) index: usize,
    /// The seeded messages' timestamps are before this.
    pub(super) anchor: i64,
    /// Appends the seeded messages to the channel, ahead of any published since.
    pub(super) generate: fn(&mut Channel, PendingHistory),
}

#[derive(Debug)]
pub(super) struct Channel {
    /// Ordered by timestamp (non-decreasing), so time ranges are found by binary search; history
    /// cursors are its sequence numbers, which survive older messages ageing out.
    pub(super) messages: Retained<Arc<Message>>,
    /// Message id (hashed, [`id_key`]) → sequence number in `messages`, for idempotent
    /// publishing.
    pub(super) ids: HashMap<u64, u64>,
    /// Current presence set by member key.
    pub(super) members: BTreeMap<String, Arc<Presence>>,
    /// Ordered by timestamp like `messages`.
    pub(super) presence_history: Retained<Arc<Presence>>,
    pub(super) occupancy: Occupancy,
    /// Seeded history not generated yet; see [`Channel::ready`].
    pub(super) pending: Option<PendingHistory>,
    /// Per channel, because serials order one channel's messages: a generator shared by all
    /// channels restarted its counter whenever two channels' clocks differed and repeated serials.
    pub(super) serials: SerialGen,
}

impl Default for Channel {
    fn default() -> Channel {
        Channel {
            messages: Retained::new(HISTORY_RETENTION),
            ids: HashMap::new(),
            members: BTreeMap::new(),
            presence_history: Retained::new(HISTORY_RETENTION),
            occupancy: Occupancy::default(),
            pending: None,
            serials: SerialGen::default(),
        }
    }
}

impl Channel {
    /// The channel with its seeded history in place and what is older than retention at `now`
    /// gone: call before reading or appending messages.
    pub(super) fn ready(&mut self, now: i64) -> &mut Channel {
        if let Some(pending) = self.pending.take() {
            (pending.generate)(self, pending);
        }
        let expired = self.messages.expire(now);
        self.forget_ids(expired);
        self.presence_history.expire(now);
        self
    }

    /// Appends a message; drops the ids of messages the count cap pushed out.
    pub(super) fn append(&mut self, message: Arc<Message>) {
        let id = id_key(&message.id);
        let (seq, evicted) = self.messages.push(message.timestamp, message);
        self.ids.insert(id, seq);
        self.forget_ids(evicted);
    }

    fn forget_ids(&mut self, gone: Vec<(u64, Arc<Message>)>) {
        for (seq, message) in gone {
            let id = id_key(&message.id);
            if self.ids.get(&id) == Some(&seq) {
                self.ids.remove(&id);
            }
        }
    }

    /// The stored message with this id, if it is still kept.
    pub(super) fn by_id(&self, id: &str) -> Option<&Arc<Message>> {
        self.ids.get(&id_key(id)).and_then(|&seq| self.messages.get(seq)).filter(|m| &*m.id == id)
    }

    /// Last activity: the newest message or presence event, for choosing which channel to drop.
    fn last_active(&self) -> i64 {
        let message = self.messages.last().map_or(i64::MIN, |m| m.timestamp);
        let presence = self.presence_history.last().map_or(i64::MIN, |p| p.timestamp);
        message.max(presence)
    }
}

/// A registered push device; stored as its fields, rendered as DeviceDetails.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Device {
    pub(super) id: String,
    pub(super) client_id: Option<String>,
    pub(super) platform: String,
    pub(super) form_factor: String,
    pub(super) metadata: Val,
    pub(super) recipient: Val,
    pub(super) update_token: String,
    pub(super) device_secret: Option<String>,
}

/// Who a channel subscription delivers to. The derived order (clients before devices) is the
/// listing order after the channel name.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Target {
    Client(String),
    Device(String),
}

/// One push notification as delivered, kept so pushes can be checked after the fact.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PushDelivery {
    /// When it was sent, ms since the epoch.
    pub timestamp: i64,
    /// `None` for a direct publish, else the channel whose message carried `extras.push`.
    pub channel: Option<String>,
    /// Registered devices it reached (empty for a direct transport address or an unknown
    /// device).
    pub device_ids: Vec<String>,
    /// The notification title, if it had one.
    pub title: Option<String>,
}

/// How many push deliveries are remembered; older ones are dropped.
pub(super) const PUSH_LOG_LEN: usize = 500;

/// Push devices kept; registering one more drops the earliest registered (and its
/// subscriptions).
pub(super) const MAX_DEVICES: usize = 10_000;
/// Push channel subscriptions kept; one more drops the earliest made.
pub(super) const MAX_SUBSCRIPTIONS: usize = 10_000;

/// The push registry's caps: fields, so tests can lower them.
#[derive(Clone, Copy, Debug)]
pub(super) struct PushCaps {
    pub(super) devices: usize,
    pub(super) subscriptions: usize,
}

impl Default for PushCaps {
    fn default() -> PushCaps {
        PushCaps { devices: MAX_DEVICES, subscriptions: MAX_SUBSCRIPTIONS }
    }
}

/// Everything `reset()` restores.
#[derive(Debug, Default)]
pub(super) struct State {
    pub(super) channels: BTreeMap<String, Channel>,
    pub(super) devices: BTreeMap<String, Device>,
    pub(super) subscriptions: BTreeSet<(String, Target)>,
    /// Device ids and subscriptions in the order made, for the caps; kept in step with the sets
    /// by [`State::add_device`], [`State::add_subscription`] and [`State::remove_push`].
    pub(super) device_order: VecDeque<String>,
    pub(super) subscription_order: VecDeque<(String, Target)>,
    pub(super) push_caps: PushCaps,
    pub(super) push_log: VecDeque<PushDelivery>,
    pub(super) stats: StatsBook,
    /// Pseudo connection id of REST publishes, like the one Ably assigns to a REST request.
    pub(super) rest_connection: String,
    /// Counts REST publish requests: the `msgSerial` part of generated message ids.
    pub(super) publish_serial: u64,
    /// The seed, so update tokens handed out later are as reproducible as the seeded ones.
    pub(super) seed: u64,
    /// Counts update tokens handed out, so each is distinct.
    pub(super) token_counter: u64,
    /// Counts realtime connections opened, for their ids.
    pub(super) connection_counter: u64,
}

/// The largest counter of a serial: three digits, as in Ably's serials.
const MAX_SERIAL_COUNT: u32 = 999;

/// Hands out one channel's message serials.
#[derive(Debug, Default)]
pub(super) struct SerialGen {
    last_ms: i64,
    count: u32,
}

impl SerialGen {
    /// A serial that sorts after every earlier one as text, shaped like Ably's
    /// `<ms>-<counter>@<server>:<index>`. Both numbers keep a fixed width, so a thousandth message
    /// in one millisecond moves the serial's clock on by one instead of widening the counter (a
    /// wider counter would sort before a narrower one); and a timestamp earlier than the last
    /// one never moves it back.
    pub(super) fn next(&mut self, timestamp: i64, index: usize) -> Serial {
        if timestamp > self.last_ms {
            self.last_ms = timestamp;
            self.count = 0;
        } else if self.count >= MAX_SERIAL_COUNT {
            self.last_ms = self.last_ms.saturating_add(1);
            self.count = 0;
        } else {
            self.count += 1;
        }
        // The index is the message's place in its publish; it never decides the order, since the
        // part before it already differs, and only looks like Ably's.
        Serial {
            ms: self.last_ms,
            count: u16::try_from(self.count).unwrap_or(u16::MAX),
            index: u16::try_from(index % 1000).unwrap_or(0),
        }
    }
}

impl State {
    /// A fresh id for a realtime connection: as reproducible from the seed as the rest.
    pub(super) fn next_connection_id(&mut self) -> String {
        self.connection_counter = self.connection_counter.wrapping_add(1);
        let mut rng = crate::sandbox::rng::Rng::new(self.seed ^ self.connection_counter.rotate_left(29) ^ 0xC0_22EC);
        rng.alphanumeric(10)
    }

    /// The channel `name`, created (activated) when new, with history ready at `now`. Creating
    /// one beyond [`MAX_CHANNELS`] first drops the channel idle longest that has no members
    /// present (seeded or REST-created alike: the real service forgets idle channels too).
    pub(super) fn channel(&mut self, name: &str, now: i64) -> &mut Channel {
        if !self.channels.contains_key(name) && self.channels.len() >= MAX_CHANNELS {
            let idle = self
                .channels
                .iter()
                .filter(|(_, c)| c.members.is_empty() && c.pending.is_none())
                .min_by_key(|(_, c)| c.last_active())
                .map(|(n, _)| n.clone());
            if let Some(idle) = idle {
                self.channels.remove(&idle);
            }
        }
        self.channels.entry(name.to_owned()).or_default().ready(now)
    }

    /// Registers a new device or replaces one; past the cap the earliest registered goes, with
    /// its subscriptions.
    pub(super) fn add_device(&mut self, device: Device) {
        let id = device.id.clone();
        if self.devices.insert(id.clone(), device).is_some() {
            return;
        }
        self.device_order.push_back(id);
        let mut gone = Vec::new();
        while self.devices.len() > self.push_caps.devices.max(1) {
            let Some(old) = self.device_order.pop_front() else { break };
            self.devices.remove(&old);
            gone.push(old);
        }
        if !gone.is_empty() {
            self.remove_push(&gone, |_| false);
        }
    }

    /// Adds a subscription (no-op when it exists); past the cap the earliest made goes.
    pub(super) fn add_subscription(&mut self, subscription: (String, Target)) {
        if !self.subscriptions.insert(subscription.clone()) {
            return;
        }
        self.subscription_order.push_back(subscription);
        while self.subscriptions.len() > self.push_caps.subscriptions.max(1) {
            let Some(old) = self.subscription_order.pop_front() else { break };
            self.subscriptions.remove(&old);
        }
    }

    /// Removes the devices `ids` (with their subscriptions) and the subscriptions `drop` picks.
    pub(super) fn remove_push(&mut self, ids: &[String], drop: impl Fn(&(String, Target)) -> bool) {
        for id in ids {
            self.devices.remove(id);
        }
        self.subscriptions.retain(|s| {
            !drop(s)
                && match &s.1 {
                    Target::Device(d) => !ids.contains(d),
                    Target::Client(_) => true,
                }
        });
        let (devices, subscriptions) = (&self.devices, &self.subscriptions);
        self.device_order.retain(|d| devices.contains_key(d));
        self.subscription_order.retain(|s| subscriptions.contains(s));
    }

    /// A fresh device update token.
    pub(super) fn next_update_token(&mut self) -> String {
        self.token_counter = self.token_counter.wrapping_add(1);
        let mut rng = crate::sandbox::rng::Rng::new(self.seed ^ self.token_counter.rotate_left(17));
        rng.alphanumeric(32)
    }

    /// Appends a push delivery to the bounded log.
    pub(super) fn log_push(&mut self, delivery: PushDelivery) {
        if self.push_log.len() >= PUSH_LOG_LEN {
            self.push_log.pop_front();
        }
        self.push_log.push_back(delivery);
    }

    /// Device ids reached by a push on `channel`: subscribed devices, and every device of a
    /// subscribed client.
    pub(super) fn channel_push_targets(&self, channel: &str) -> Vec<String> {
        let mut ids = BTreeSet::new();
        let start = (channel.to_owned(), Target::Client(String::new()));
        for (name, target) in self.subscriptions.range(start..) {
            if name != channel {
                break;
            }
            match target {
                Target::Device(id) => {
                    if self.devices.contains_key(id) {
                        ids.insert(id.clone());
                    }
                }
                Target::Client(client) => {
                    for device in self.devices.values() {
                        if device.client_id.as_deref() == Some(client.as_str()) {
                            ids.insert(device.id.clone());
                        }
                    }
                }
            }
        }
        ids.into_iter().collect()
    }
}
