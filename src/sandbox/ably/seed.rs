//! Seeded demo data: channels with history and occupancy, presence members and their history,
//! push devices and subscriptions, and stats history. Everything but timestamps comes from the
//! seed; timestamps count back from the anchor (the simulator's start).

use std::sync::Arc;

use super::state::{action, Channel, Device, Message, MessageBody, Occupancy, PendingHistory, Presence, State, Target};
use super::stats::{m, Counters, Unit, HOUR_MS};
use super::wire::Val;
use crate::sandbox::rng::Rng;

/// What a channel carries, which decides its message names and payloads.
#[derive(Clone, Copy)]
enum Kind {
    Orders(&'static str),
    Chat,
    Support,
    Telemetry(f64, f64),
    Ticker,
    Alerts,
    Game,
    Deploys,
    Iot,
    Docs,
}

/// Channel name, kind, hours of history, presence members.
const CHANNELS: [(&str, Kind, i64, usize); 12] = [
    ("orders:eu", Kind::Orders("EUR"), 48, 0),
    ("orders:us", Kind::Orders("USD"), 48, 0),
    ("chat:lobby", Kind::Chat, 30, 6),
    ("chat:support", Kind::Support, 24, 3),
    ("telemetry:truck-17", Kind::Telemetry(52.37, 4.89), 6, 1),
    ("telemetry:truck-42", Kind::Telemetry(48.14, 11.58), 6, 1),
    ("prices:btc-usd", Kind::Ticker, 2, 0),
    ("alerts:ops", Kind::Alerts, 72, 2),
    ("game:room-7", Kind::Game, 3, 4),
    ("deploys:prod", Kind::Deploys, 72, 0),
    ("iot:thermostat-3", Kind::Iot, 24, 0),
    ("docs:design-review", Kind::Docs, 8, 4),
];

const PEOPLE: [(&str, &str); 14] = [
    ("ana.silva", "Ana Silva"),
    ("ben.okafor", "Ben Okafor"),
    ("chen.wei", "Chen Wei"),
    ("dara.kim", "Dara Kim"),
    ("eli.novak", "Eli Novak"),
    ("fatima.haddad", "Fatima Haddad"),
    ("gus.moreau", "Gus Moreau"),
    ("hana.sato", "Hana Sato"),
    ("ivan.petrov", "Ivan Petrov"),
    ("jo.mensah", "Jo Mensah"),
    ("kai.larsen", "Kai Larsen"),
    ("lena.fischer", "Lena Fischer"),
    ("mo.rahman", "Mo Rahman"),
    ("nina.rossi", "Nina Rossi"),
];

const CHAT_LINES: [&str; 16] = [
    "morning all",
    "anyone seen the new dashboard?",
    "standup in 5",
    "deploy looks green from here",
    "can someone review my PR?",
    "lunch? the ramen place is open",
    "the EU latency graph is spiky again",
    "thanks, that fixed it",
    "I'll take the on-call swap on Friday",
    "brb",
    "does anyone know who owns the billing service?",
    "ship it",
    "the demo went well",
    "coffee machine on 3 is broken again",
    "who broke the build?",
    "great work on the release notes",
];

const SUPPORT_LINES: [&str; 10] = [
    "Hi, my order hasn't arrived yet",
    "Let me check that for you",
    "Could you share the order number?",
    "It's EU-10482",
    "I can see it left the warehouse yesterday",
    "Thanks for waiting, I've escalated it",
    "Is there anything else I can help with?",
    "The app logs me out every few minutes",
    "Could you try updating to 4.2.1?",
    "That worked, thank you!",
];

const COMMENTS: [&str; 8] = [
    "Should this section mention rate limits?",
    "Nice diagram",
    "Let's move the API table to the appendix",
    "Typo in the second paragraph",
    "+1 to splitting the migration into two steps",
    "Who signs off on the security review?",
    "This contradicts the ADR from March",
    "Resolved",
];

const SERVICES: [&str; 8] =
    ["checkout", "payments", "search", "auth", "notifications", "inventory", "gateway", "billing"];

/// Crockford base32, for ULID-looking device ids.
const ULID_CHARS: &[u8] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";

fn ulid(rng: &mut Rng) -> String {
    let mut id = String::with_capacity(26);
    id.push_str("01J");
    for _ in 0..23 {
        id.push(char::from(*rng.pick(ULID_CHARS)));
    }
    id
}

/// A float rounded to `decimals`, so payloads look like real readings.
fn round(x: f64, decimals: i32) -> Val {
    let f = 10f64.powi(decimals);
    Val::Float((x * f).round() / f)
}

fn int(n: i64) -> Val {
    Val::Int(n)
}

/// Distinct generator streams per channel, so a channel's data does not depend on which other
/// channels were generated first.
fn channel_rng(seed: u64, index: usize, stream: u64) -> Rng {
    let index = u64::try_from(index).unwrap_or(0);
    Rng::new(seed ^ (index + 1).wrapping_mul(0xA076_1D64_78BD_642F) ^ stream.rotate_left(32))
}

/// The seeded state for `seed`, with timestamps before `anchor`. Message histories are only
/// described here and generated when first used ([`fill_history`]): they are most of the data,
/// and start-up must stay in the low milliseconds.
pub(super) fn seeded_state(seed: u64, anchor: i64) -> State {
    let mut rng = Rng::new(seed);
    let mut state = State { seed, rest_connection: rng.alphanumeric(10), ..State::default() };
    for (index, (name, kind, hours, members)) in CHANNELS.into_iter().enumerate() {
        let mut rng = channel_rng(seed, index, 2);
        let mut channel = Channel {
            pending: Some(PendingHistory { seed, index, anchor, generate: fill_history }),
            ..Channel::default()
        };
        let (connections, subscribers) = match kind {
            Kind::Ticker => (rng.range(80, 240), rng.range(75, 230)),
            Kind::Chat => (rng.range(12, 40), rng.range(10, 38)),
            Kind::Telemetry(..) | Kind::Iot => (rng.range(2, 5), rng.range(1, 4)),
            _ => (rng.range(3, 20), rng.range(2, 18)),
        };
        channel.occupancy = Occupancy {
            connections,
            publishers: i64::try_from(publisher_names(kind).len()).unwrap_or(1),
            subscribers,
            presence_subscribers: if members > 0 { subscribers } else { 0 },
        };
        seed_presence(&mut channel, &mut rng, kind, members, hours * HOUR_MS, anchor);
        state.channels.insert(name.to_owned(), channel);
    }
    seed_devices(&mut state, &mut rng);
    seed_stats(&mut state, &mut rng, anchor);
    state
}

/// One publisher of a channel: a realtime connection with its own message serial.
struct Publisher {
    client_id: String,
    connection_id: String,
    serial: u64,
}

/// Client ids publishing on a channel of `kind`.
fn publisher_names(kind: Kind) -> &'static [&'static str] {
    match kind {
        Kind::Orders(_) => &["checkout-service", "fulfilment-worker", "payments-service"],
        Kind::Telemetry(..) => &["fleet-gateway"],
        Kind::Ticker => &["price-feed"],
        Kind::Alerts => &["alertmanager"],
        Kind::Deploys => &["ci-bot"],
        Kind::Iot => &["thermostat-3"],
        Kind::Support => &["agent.maria", "agent.tom", "customer-8812", "customer-9340"],
        Kind::Chat => &["ana.silva", "ben.okafor", "chen.wei", "hana.sato", "jo.mensah", "kai.larsen", "nina.rossi"],
        Kind::Game => &["dara.kim", "gus.moreau", "ivan.petrov", "mo.rahman"],
        Kind::Docs => &["eli.novak", "fatima.haddad", "lena.fischer", "chen.wei"],
    }
}

fn publishers(rng: &mut Rng, kind: Kind) -> Vec<Publisher> {
    publisher_names(kind)
        .iter()
        .map(|client_id| Publisher {
            client_id: (*client_id).to_owned(),
            connection_id: rng.alphanumeric(10),
            serial: rng.below(40),
        })
        .collect()
}

/// Name, payload and extras of the next message of a channel. `walk` carries running values
/// (positions, prices, order numbers) from one message to the next.
fn message_body(rng: &mut Rng, kind: Kind, walk: &mut [f64; 3]) -> (String, Val, Option<Val>) {
    match kind {
        Kind::Orders(currency) => {
            walk[0] += 1.0 + rng.below(3) as f64;
            let prefix = if currency == "EUR" { "EU" } else { "US" };
            let event = *rng.pick(&[
                "order.created",
                "order.created",
                "order.paid",
                "order.paid",
                "order.shipped",
                "order.cancelled",
            ]);
            let cents = rng.range(1_500, 48_000);
            let data = Val::map([
                ("orderId", Val::Str(format!("{prefix}-{}", 10_000 + walk[0] as i64))),
                ("status", Val::str(event.trim_start_matches("order."))),
                ("total", round(cents as f64 / 100.0, 2)),
                ("currency", Val::str(currency)),
                ("items", int(rng.range(1, 6))),
                ("customerId", Val::Str(format!("cus_{}", rng.alphanumeric(8)))),
            ]);
            (event.to_owned(), data, None)
        }
        Kind::Chat => ("message".to_owned(), Val::str(*rng.pick(&CHAT_LINES)), None),
        Kind::Support => {
            if rng.chance(12) {
                let data = Val::map([
                    ("ticket", Val::Str(format!("SUP-{}", rng.range(4_000, 4_999)))),
                    ("assignee", Val::str(*rng.pick(&["agent.maria", "agent.tom"]))),
                    ("priority", Val::str(*rng.pick(&["low", "normal", "high"]))),
                ]);
                ("ticket.assigned".to_owned(), data, None)
            } else {
                ("message".to_owned(), Val::str(*rng.pick(&SUPPORT_LINES)), None)
            }
        }
        Kind::Telemetry(..) => {
            walk[0] += (rng.below(200) as f64 - 100.0) / 20_000.0;
            walk[1] += (rng.below(200) as f64 - 80.0) / 20_000.0;
            walk[2] = (walk[2] - rng.below(3) as f64 * 0.1).max(8.0);
            let data = Val::map([
                ("lat", round(walk[0], 5)),
                ("lon", round(walk[1], 5)),
                ("speedKph", int(rng.range(0, 92))),
                ("heading", int(rng.range(0, 359))),
                ("fuelPct", round(walk[2], 1)),
            ]);
            ("position".to_owned(), data, None)
        }
        Kind::Ticker => {
            walk[0] *= 1.0 + (rng.below(2001) as f64 - 1000.0) / 1_000_000.0;
            let spread = 0.5 + rng.below(300) as f64 / 100.0;
            let data = Val::map([
                ("bid", round(walk[0] - spread / 2.0, 2)),
                ("ask", round(walk[0] + spread / 2.0, 2)),
                ("last", round(walk[0], 2)),
                ("volume", round(rng.below(50_000) as f64 / 10_000.0, 4)),
            ]);
            ("tick".to_owned(), data, None)
        }
        Kind::Alerts => {
            let service = *rng.pick(&SERVICES);
            let severity = *rng.pick(&["info", "warning", "warning", "critical"]);
            let firing = rng.chance(60);
            let summary = *rng.pick(&[
                "p99 latency above 800 ms",
                "error rate above 2%",
                "disk usage above 85%",
                "pod restart loop",
                "certificate expires in 7 days",
                "queue depth above 10k",
            ]);
            let data = Val::map([
                ("service", Val::str(service)),
                ("severity", Val::str(severity)),
                ("summary", Val::str(summary)),
                ("runbook", Val::Str(format!("https://runbooks.example.com/{service}"))),
            ]);
            let extras = (firing && severity == "critical").then(|| {
                Val::map([(
                    "push",
                    Val::map([(
                        "notification",
                        Val::map([("title", Val::Str(format!("CRITICAL: {service}"))), ("body", Val::str(summary))]),
                    )]),
                )])
            });
            let name = if firing { "alert.firing" } else { "alert.resolved" };
            (name.to_owned(), data, extras)
        }
        Kind::Game => {
            if rng.chance(80) {
                let data = Val::map([
                    ("x", int(rng.range(0, 7))),
                    ("y", int(rng.range(0, 7))),
                    ("piece", Val::str(*rng.pick(&["knight", "bishop", "rook", "pawn", "queen"]))),
                ]);
                ("move".to_owned(), data, None)
            } else {
                walk[0] += rng.below(40) as f64;
                let data = Val::map([("score", int(walk[0] as i64)), ("round", int(rng.range(1, 9)))]);
                ("score".to_owned(), data, None)
            }
        }
        Kind::Deploys => {
            let service = *rng.pick(&SERVICES);
            let name =
                *rng.pick(&["deploy.started", "deploy.succeeded", "deploy.succeeded", "deploy.failed", "rollback"]);
            let data = Val::map([
                ("service", Val::str(service)),
                ("version", Val::Str(format!("v2.{}.{}", rng.range(10, 19), rng.range(0, 9)))),
                ("commit", Val::Str(rng.hex(7))),
                ("by", Val::str(rng.pick(&PEOPLE).0)),
                ("environment", Val::str("production")),
            ]);
            (name.to_owned(), data, None)
        }
        Kind::Iot => {
            if rng.chance(15) {
                // Raw sensor frame: binary data, as a device publishing over MessagePack sends.
                let frame: Vec<u8> = (0..12).map(|_| (rng.next_u64() & 0xff) as u8).collect();
                ("frame".to_owned(), Val::Bin(frame), None)
            } else {
                walk[0] = (walk[0] + (rng.below(11) as f64 - 5.0) / 20.0).clamp(16.0, 26.0);
                let data = Val::map([
                    ("tempC", round(walk[0], 1)),
                    ("humidity", int(rng.range(35, 60))),
                    ("setpointC", round(21.5, 1)),
                    ("mode", Val::str(*rng.pick(&["heat", "heat", "eco"]))),
                ]);
                ("reading".to_owned(), data, None)
            }
        }
        Kind::Docs => {
            if rng.chance(55) {
                let data = Val::map([("line", int(rng.range(1, 420))), ("column", int(rng.range(1, 80)))]);
                ("cursor".to_owned(), data, None)
            } else {
                ("comment".to_owned(), Val::str(*rng.pick(&COMMENTS)), None)
            }
        }
    }
}

/// Generates a channel's seeded messages (20-300 over its span of hours), ahead of any
/// published since.
fn fill_history(channel: &mut Channel, pending: PendingHistory) {
    let Some(&(_, kind, hours, _)) = CHANNELS.get(pending.index) else {
        return;
    };
    let mut rng = channel_rng(pending.seed, pending.index, 1);
    let mut pubs = publishers(&mut rng, kind);
    let count = usize::try_from(rng.range(20, 300)).unwrap_or(20);
    let span = hours * HOUR_MS;
    let mut offsets: Vec<i64> = (0..count).map(|_| rng.range(30_000, span)).collect();
    offsets.sort_unstable_by(|a, b| b.cmp(a));
    let mut walk = match kind {
        Kind::Telemetry(lat, lon) => [lat, lon, 92.0],
        Kind::Ticker => [67_250.0, 0.0, 0.0],
        Kind::Iot => [20.5, 0.0, 0.0],
        Kind::Orders(_) => [rng.range(0, 400) as f64, 0.0, 0.0],
        _ => [0.0; 3],
    };
    // Anything published before the history was generated goes after it, as it came later.
    let published: Vec<Arc<Message>> = channel.messages.iter().map(|(_, _, m)| Arc::clone(m)).collect();
    channel.messages.clear();
    channel.ids.clear();
    for offset in offsets {
        let timestamp = pending.anchor - offset;
        let index = usize::try_from(rng.below(pubs.len() as u64)).unwrap_or(0);
        let (name, data, extras) = message_body(&mut rng, kind, &mut walk);
        let Some(publisher) = pubs.get_mut(index) else {
            continue;
        };
        let id = format!("{}:{}:0", publisher.connection_id, publisher.serial);
        publisher.serial += 1;
        // `ready()` fills the history before anything is published, so the channel's own
        // generator numbers the seeded messages first and every later publish after them.
        let serial = channel.serials.next(timestamp, 0);
        let body = MessageBody {
            name: Some(name),
            client_id: Some(publisher.client_id.clone()),
            connection_id: Some(publisher.connection_id.clone()),
            data: Some(data),
            encoding: None,
            extras,
        };
        channel.append(Arc::new(Message::new(id, body, timestamp, serial)));
    }
    for message in published {
        channel.append(message);
    }
}

fn seed_presence(channel: &mut Channel, rng: &mut Rng, kind: Kind, members: usize, span: i64, anchor: i64) {
    if members == 0 {
        return;
    }
    let mut history: Vec<Presence> = Vec::new();
    let offset = usize::try_from(rng.below(PEOPLE.len() as u64)).unwrap_or(0);
    // Current members first, then 1-4 who have since left.
    let departed = usize::try_from(rng.range(1, 4)).unwrap_or(1);
    for i in 0..members + departed {
        let (client_id, display) = match kind {
            Kind::Telemetry(..) if i == 0 => ("fleet-gateway", "Fleet gateway"),
            Kind::Support if i == 0 => ("agent.maria", "Maria (support)"),
            _ => PEOPLE[(offset + i * 5) % PEOPLE.len()],
        };
        let connection_id = rng.alphanumeric(10);
        let status = *rng.pick(&["online", "online", "away", "busy"]);
        let data = Val::map([("name", Val::str(display)), ("status", Val::str(status))]);
        let entered = anchor - rng.range(span / 4, span);
        let mut events = vec![(action::ENTER, entered, data.clone())];
        if rng.chance(50) {
            let later = entered + rng.range(60_000, (anchor - entered).max(60_001) - 1);
            let moved = Val::map([
                ("name", Val::str(display)),
                ("status", Val::str(*rng.pick(&["online", "away", "busy", "in a meeting"]))),
            ]);
            events.push((action::UPDATE, later.min(anchor - 1_000), moved));
        }
        let gone = i >= members;
        if gone {
            let last = events.last().map_or(entered, |e| e.1);
            let left = (last + rng.range(60_000, 3 * HOUR_MS)).min(anchor - 1_000);
            events.push((action::LEAVE, left.max(last), data));
        }
        for (serial, (act, timestamp, data)) in events.into_iter().enumerate() {
            history.push(Presence {
                id: format!("{connection_id}:{serial}:0"),
                action: act,
                client_id: client_id.to_owned(),
                connection_id: connection_id.clone(),
                data: Some(data),
                encoding: None,
                timestamp,
            });
        }
        if !gone {
            if let Some(latest) = history.last() {
                let member = Presence {
                    id: latest.id.clone(),
                    action: action::PRESENT,
                    client_id: latest.client_id.clone(),
                    connection_id: latest.connection_id.clone(),
                    data: latest.data.clone(),
                    encoding: None,
                    timestamp: latest.timestamp,
                };
                channel.members.insert(member.member_key(), Arc::new(member));
            }
        }
    }
    history.sort_by_key(|p| p.timestamp);
    for event in history {
        channel.presence_history.push(event.timestamp, Arc::new(event));
    }
}

fn seed_devices(state: &mut State, rng: &mut Rng) {
    // (clientId, platform, formFactor, model, os)
    const DEVICES: [(Option<&str>, &str, &str, &str, &str); 8] = [
        (Some("ana.silva"), "ios", "phone", "iPhone 15", "iOS 17.5"),
        (Some("ben.okafor"), "android", "phone", "Pixel 8", "Android 14"),
        (Some("chen.wei"), "browser", "desktop", "Chrome 126", "macOS 14"),
        (Some("dara.kim"), "ios", "tablet", "iPad Air", "iPadOS 17.4"),
        (Some("eli.novak"), "android", "phone", "Galaxy S23", "Android 14"),
        (None, "android", "tablet", "Lenovo Tab M10", "Android 13"),
        (Some("eli.novak"), "ios", "watch", "Apple Watch S9", "watchOS 10.4"),
        (Some("gus.moreau"), "browser", "desktop", "Firefox 127", "Windows 11"),
    ];
    let mut ids = Vec::with_capacity(DEVICES.len());
    for (client, platform, form_factor, model, os) in DEVICES {
        let id = ulid(rng);
        let recipient = match platform {
            "ios" => Val::map([("transportType", Val::str("apns")), ("deviceToken", Val::Str(rng.hex(64)))]),
            "android" => Val::map([
                ("transportType", Val::str("fcm")),
                ("registrationToken", Val::Str(format!("{}:APA91b{}", rng.alphanumeric(11), rng.alphanumeric(134)))),
            ]),
            _ => Val::map([
                ("transportType", Val::str("web")),
                ("targetUrl", Val::Str(format!("https://fcm.googleapis.com/fcm/send/{}", rng.alphanumeric(22)))),
                ("publicVapidKey", Val::Str(rng.alphanumeric(87))),
                (
                    "encryptionKey",
                    Val::map([("p256dh", Val::Str(rng.alphanumeric(87))), ("auth", Val::Str(rng.alphanumeric(22)))]),
                ),
            ]),
        };
        let metadata = Val::map([
            ("model", Val::str(model)),
            ("os", Val::str(os)),
            ("appVersion", Val::Str(format!("4.{}.{}", rng.range(0, 3), rng.range(0, 9)))),
        ]);
        let device = Device {
            id: id.clone(),
            client_id: client.map(str::to_owned),
            platform: platform.to_owned(),
            form_factor: form_factor.to_owned(),
            metadata,
            recipient,
            update_token: rng.alphanumeric(32),
            device_secret: None,
        };
        state.add_device(device);
        ids.push(id);
    }
    let device = |i: usize| Target::Device(ids.get(i).cloned().unwrap_or_default());
    for (channel, target) in [
        ("alerts:ops", device(0)),
        ("alerts:ops", Target::Client("eli.novak".to_owned())),
        ("deploys:prod", Target::Client("ben.okafor".to_owned())),
        ("orders:eu", device(5)),
        ("chat:support", Target::Client("dara.kim".to_owned())),
        ("deploys:prod", device(2)),
    ] {
        state.add_subscription((channel.to_owned(), target));
    }
}

/// Relative traffic by UTC hour of day, so charts have a daily rhythm.
const DIURNAL: [f64; 24] = [
    0.25, 0.2, 0.18, 0.18, 0.22, 0.3, 0.45, 0.65, 0.85, 0.95, 1.0, 0.98, 0.92, 0.95, 1.0, 0.97, 0.9, 0.8, 0.7, 0.6,
    0.5, 0.42, 0.35, 0.3,
];

/// Fills one bucket; `scale` is 1 for an hour, 1/60 for a minute.
fn fill(counters: &mut Counters, rng: &mut Rng, hour_of_day: usize, scale: f64) {
    let load = DIURNAL.get(hour_of_day).copied().unwrap_or(0.5) * (0.8 + rng.below(400) as f64 / 1000.0);
    let n = |base: f64, rng: &mut Rng| -> u64 {
        let jitter = 0.9 + rng.below(200) as f64 / 1000.0;
        (base * load * scale * jitter).round().max(0.0) as u64
    };
    let inbound = n(2_400.0, rng);
    let rest = inbound * 3 / 10;
    let realtime = inbound - rest;
    let avg = 160 + rng.below(120);
    let outbound = inbound * 3;
    let presence = inbound / 25;
    let c = counters;
    c.add(m::IN_COUNT, inbound);
    c.add(m::IN_DATA, inbound * avg);
    c.add(m::IN_REST_COUNT, rest);
    c.add(m::IN_REST_DATA, rest * avg);
    c.add(m::IN_REALTIME_COUNT, realtime);
    c.add(m::IN_REALTIME_DATA, realtime * avg);
    c.add(m::OUT_COUNT, outbound);
    c.add(m::OUT_DATA, outbound * avg);
    c.add(m::OUT_REALTIME_COUNT, outbound);
    c.add(m::OUT_REALTIME_DATA, outbound * avg);
    c.add(m::ALL_COUNT, inbound + outbound + presence);
    c.add(m::ALL_DATA, (inbound + outbound) * avg + presence * 40);
    c.add(m::ALL_MSG_COUNT, inbound + outbound);
    c.add(m::ALL_MSG_DATA, (inbound + outbound) * avg);
    c.add(m::ALL_PRESENCE_COUNT, presence);
    c.add(m::ALL_PRESENCE_DATA, presence * 40);
    c.add(m::PERSISTED_COUNT, inbound * 6 / 10);
    c.add(m::PERSISTED_DATA, inbound * 6 / 10 * avg);
    let peak = (20.0 + 100.0 * load).round() as u64;
    c.raise(m::CONNECTIONS_PEAK, peak);
    c.add(m::CONNECTIONS_OPENED, n(150.0, rng));
    c.raise(m::CHANNELS_PEAK, 8 + rng.below(16));
    c.add(m::CHANNELS_OPENED, n(40.0, rng));
    let other = rest + n(120.0, rng);
    let other_failed = n(6.0, rng);
    let tokens = n(60.0, rng);
    let push_requests = n(12.0, rng);
    c.add(m::API_OTHER_OK, other);
    c.add(m::API_OTHER_FAILED, other_failed);
    c.add(m::API_TOKEN_OK, tokens);
    c.add(m::API_PUSH_OK, push_requests);
    c.add(m::API_ALL_OK, other + tokens + push_requests);
    c.add(m::API_ALL_FAILED, other_failed);
    let refused = n(1.5, rng);
    c.add(m::API_OTHER_REFUSED, refused);
    c.add(m::API_ALL_REFUSED, refused);
    let direct = push_requests / 2;
    let channel_pushes = n(8.0, rng);
    let notifications = direct + channel_pushes * 3;
    let failed = notifications / 40;
    c.add(m::PUSH_DIRECT, direct);
    c.add(m::PUSH_CHANNEL_MESSAGES, channel_pushes);
    c.add(m::PUSH_ALL, notifications);
    c.add(m::PUSH_DELIVERED, notifications - failed);
    c.add(m::PUSH_FAILED, failed);
}

/// Minute buckets from three hours before the anchor's hour up to the anchor's minute, and hour
/// buckets for the 35 days before that, so every unit of the stats view has history.
fn seed_stats(state: &mut State, rng: &mut Rng, anchor: i64) {
    let this_minute = Unit::Minute.floor(anchor);
    let minutes_from = Unit::Hour.floor(anchor) - 3 * HOUR_MS;
    let hour_of = |ms: i64| usize::try_from((ms / HOUR_MS).rem_euclid(24)).unwrap_or(0);
    let mut t = minutes_from;
    while t < this_minute {
        let mut c = Counters::default();
        fill(&mut c, rng, hour_of(t), 1.0 / 60.0);
        state.stats.minutes.insert(t, c);
        t += 60_000;
    }
    let mut h = minutes_from - 35 * 24 * HOUR_MS;
    while h < minutes_from {
        let mut c = Counters::default();
        fill(&mut c, rng, hour_of(h), 1.0);
        state.stats.hours.insert(h, c);
        h += HOUR_MS;
    }
}
