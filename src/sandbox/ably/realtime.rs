//! Ably's realtime protocol over WebSocket, as the service serves it at its realtime host's
//! root (`wss://main.realtime.ably.net/?key=…&format=json&v=…`): protocol messages in JSON text
//! frames or MessagePack binary frames (`format=msgpack`), on the sandbox's socket layer
//! (`sandbox/ws.rs`). A connection authenticates as a REST request does (key or token, with
//! the same capabilities), attaches to channels and publishes into the same channels the REST
//! routes read and write: a message published over REST reaches realtime subscribers, and one
//! published over a connection is in the REST history.
//!
//! Protocol messages (`action` numbers from Ably's client library specification): HEARTBEAT 0,
//! ACK 1, NACK 2, CONNECT 3, CONNECTED 4, DISCONNECT 5, DISCONNECTED 6, CLOSE 7, CLOSED 8, ERROR
//! 9, ATTACH 10, ATTACHED 11, DETACH 12, DETACHED 13, PRESENCE 14, MESSAGE 15, SYNC 16, AUTH 17.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::Request;
use axum::http::StatusCode;
use axum::response::Response;

use super::auth::authenticate;
use super::capability::Caller;
use super::hub::message_frame;
use super::hub::{
    presence_frame, send_bytes, Kind, Subscriber, ACK, ATTACH, ATTACHED, AUTH, CLOSE, CLOSED, CONNECTED, DETACH,
    DETACHED, DISCONNECTED, ERROR, HEARTBEAT, MESSAGE, NACK, PRESENCE,
};
use super::routes::{message_val, parse_message, parse_messages, presence_val, publish_locked, Origin};
use super::state::{action, Message, Presence};
use super::wire::{from_msgpack, parse_query, AblyError, Format, Val};
use super::{path_segments, render, Call, Shared};
use crate::sandbox::retention::Retained;
use crate::sandbox::ws::{Incoming, Outbox, Refused, Socket, WsLimits};

/// The most messages a resumed channel is sent from its history; a client further behind
/// attaches without continuity.
const MAX_BACKLOG: usize = 1_000;

/// The most members one channel's presence set holds (Ably's limit, the same on every package).
const MAX_MEMBERS: usize = 200;
/// The most channels one connection has attached (Ably's default account limit).
const MAX_CHANNELS: usize = 200;
/// The most protocol messages a connection sends in a second before Ably ends it for abuse.
const MAX_INBOUND_PER_SECOND: u32 = 2_000;

/// ATTACHED's flags: a SYNC of the presence set follows; the channel continues from before.
pub(super) const HAS_PRESENCE: i64 = 1;
pub(super) const RESUMED: i64 = 1 << 2;
/// The channel modes of ATTACH and ATTACHED `flags`.
pub(super) const MODE_PRESENCE: i64 = 1 << 16;
pub(super) const MODE_PUBLISH: i64 = 1 << 17;
pub(super) const MODE_SUBSCRIBE: i64 = 1 << 18;
pub(super) const MODE_PRESENCE_SUBSCRIBE: i64 = 1 << 19;
const MODES: [(i64, &str); 4] = [
    (MODE_PRESENCE, "presence"),
    (MODE_PUBLISH, "publish"),
    (MODE_SUBSCRIBE, "subscribe"),
    (MODE_PRESENCE_SUBSCRIBE, "subscribe"),
];

/// What CONNECTED's `connectionDetails` announce, and what the connection holds to.
pub(super) const MAX_MESSAGE_SIZE: i64 = 65_536;
const MAX_FRAME_SIZE: usize = 262_144;
const CONNECTION_STATE_TTL_MS: i64 = 120_000;
/// How long the server may stay silent: it sends a HEARTBEAT this often.
pub(super) const MAX_IDLE_INTERVAL: Duration = Duration::from_secs(15);

/// The socket limits of the Ably simulator.
pub(super) const LIMITS: WsLimits = WsLimits {
    max_message: MAX_FRAME_SIZE,
    queue_bytes: 4 << 20,
    max_sockets: 2048,
    write_stall: Duration::from_secs(30),
};

/// Drops every realtime socket without a CLOSE (the control port's network blip); their
/// connections are kept for resuming. How many there were.
pub(super) fn drop_sockets(shared: &Shared) -> usize {
    let live: Vec<Outbox> = shared.live().values().cloned().collect();
    live.iter().for_each(Outbox::end);
    live.len()
}

/// `GET /` with a WebSocket handshake: a realtime connection.
pub(super) async fn connect(shared: Arc<Shared>, request: Request) -> Response {
    let now = shared.clock.now_ms();
    let query = match parse_query(request.uri().query().unwrap_or("")) {
        Ok(query) => query,
        Err(e) => return render(Format::Json, false, Err(e)),
    };
    let format = if query.get("format") == Some("msgpack") { Format::Msgpack } else { Format::Json };
    let echo = query.get("echo") != Some("false");
    let resume = query.get("resume").map(str::to_owned);
    let call = Call {
        method: request.method().clone(),
        path: request.uri().path().to_owned(),
        segments: path_segments(request.uri().path()).unwrap_or_default(),
        query,
        headers: request.headers().clone(),
        body: axum::body::Bytes::new(),
        format,
        now,
    };
    // Credentials are checked once the socket is open: Ably answers the handshake and then
    // says why in an ERROR, which is what the SDKs read.
    let caller = authenticate(&call).and_then(|caller| bind_client_id(caller, call.query.get("clientId")));
    let sockets = shared.sockets.clone();
    let session_shared = Arc::clone(&shared);
    let accepted = sockets
        .accept(request, move |socket| async move {
            let mut connection = Connection::new(session_shared, socket.outbox(), format, echo);
            connection.run(socket, caller, resume).await;
        })
        .await;
    match accepted {
        Ok(response) => response,
        Err(Refused::NotWebSocket(reason)) => render(
            Format::Json,
            false,
            Err(AblyError::new(
                400,
                40000,
                format!("Expected a WebSocket handshake at the realtime endpoint: {reason}"),
            )),
        ),
        // Ably's account connection limit: 40111, 403.
        Err(Refused::TooMany) => render(
            Format::Json,
            false,
            Err(AblyError::new(
                StatusCode::FORBIDDEN.as_u16(),
                40111,
                format!("Account restricted (connection limits exceeded: {} open)", LIMITS.max_sockets),
            )),
        ),
    }
}

/// A `clientId` asked for in the query must be the credentials' (or the credentials any).
fn bind_client_id(mut caller: Caller, asked: Option<&str>) -> Result<Caller, AblyError> {
    let Some(asked) = asked.filter(|a| !a.is_empty()) else { return Ok(caller) };
    match caller.client_id.as_deref() {
        None => {
            caller.client_id = Some(asked.to_owned());
            Ok(caller)
        }
        Some(bound) if bound == asked => Ok(caller),
        Some("*") => {
            caller.client_id = Some(asked.to_owned());
            Ok(caller)
        }
        Some(bound) => Err(AblyError::new(
            400,
            40102,
            format!("Mismatched clientId: the connection asked for {asked:?}, the credentials are bound to {bound:?}"),
        )),
    }
}

/// One realtime connection.
struct Connection {
    shared: Arc<Shared>,
    id: Arc<str>,
    key: String,
    outbox: Outbox,
    format: Format,
    echo: bool,
    caller: Option<Caller>,
    /// The channels where this connection entered a member, who leave when it ends.
    entered: BTreeSet<String>,
    /// The channels it has attached.
    attached: BTreeSet<String>,
    /// Its inbound protocol messages in the current second.
    inbound: RateWindow,
}

/// Counts what arrives per second of `now`: past the limit in one second, it is refused.
#[derive(Default)]
pub(super) struct RateWindow {
    second: i64,
    count: u32,
}

impl RateWindow {
    /// Whether one more at `now_ms` stays within `limit` a second.
    pub(super) fn admit(&mut self, now_ms: i64, limit: u32) -> bool {
        let second = now_ms.div_euclid(1000);
        if second != self.second {
            (self.second, self.count) = (second, 0);
        }
        self.count = self.count.saturating_add(1);
        self.count <= limit
    }
}

/// A connection whose socket dropped, kept under its key for resuming: its id and its presence.
/// Its channels continue when the client attaches them again with the `channelSerial` it last
/// saw (what was published since comes from the channel's history, once and in order).
pub(super) struct Resumable {
    id: Arc<str>,
    entered: BTreeSet<String>,
    /// When its socket dropped: the timer that ends it ends only this keeping of it (a
    /// connection resumed and dropped again is kept anew).
    dropped_at: std::time::Instant,
}

/// What a protocol message leaves the connection to do.
enum Next {
    Continue,
    End,
}

impl Connection {
    fn new(shared: Arc<Shared>, outbox: Outbox, format: Format, echo: bool) -> Connection {
        let (id, key) = {
            let mut state = shared.lock();
            let id = state.next_connection_id();
            let key = format!("{}!{id}", state.next_connection_id());
            (id, key)
        };
        Connection {
            shared,
            id: Arc::from(id),
            key,
            outbox,
            format,
            echo,
            caller: None,
            entered: BTreeSet::new(),
            attached: BTreeSet::new(),
            inbound: RateWindow::default(),
        }
    }

    async fn run(&mut self, mut socket: Socket, caller: Result<Caller, AblyError>, resume: Option<String>) {
        match caller {
            Ok(caller) => {
                match resume {
                    Some(key) => self.resume(&key, &caller).await,
                    None => self.connected(&caller, None),
                }
                self.shared.live().insert(self.key.clone(), self.outbox.clone());
                self.caller = Some(caller);
            }
            Err(error) => {
                self.send(&error_message(&error, None));
                self.outbox.close(1000, "");
                return;
            }
        }
        let mut heartbeat = tokio::time::interval(MAX_IDLE_INTERVAL);
        heartbeat.reset();
        let mut closed = false;
        loop {
            // A token's credentials end with it: the client is told (40142) and may resume
            // with a new one.
            let expires_in = self.caller.as_ref().and_then(|c| c.expires).map(|at| {
                Duration::from_millis(u64::try_from(at.saturating_sub(self.shared.clock.now_ms())).unwrap_or(0))
            });
            let expiry = async {
                match expires_in {
                    Some(wait) => tokio::time::sleep(wait).await,
                    None => std::future::pending().await,
                }
            };
            let frame = tokio::select! {
                frame = socket.next() => frame,
                _ = heartbeat.tick() => {
                    // A client that has sent nothing, not even a pong, for two intervals is
                    // gone: its connection is disconnected (and kept for resuming).
                    if socket.silent_for() > 2 * MAX_IDLE_INTERVAL {
                        let error = AblyError::new(
                            400,
                            80003,
                            format!("Connection disconnected: nothing heard from the client for {} s", socket.silent_for().as_secs()),
                        );
                        let mut message = Val::map([("action", Val::Int(DISCONNECTED))]);
                        message.push("error", error_val(&error));
                        self.send(&message);
                        self.outbox.close(1000, "");
                        break;
                    }
                    self.send(&Val::map([("action", Val::Int(HEARTBEAT))]));
                    let _ = self.outbox.ping();
                    continue;
                }
                () = expiry => {
                    let error = AblyError::new(401, 40142, "Key/token expired: the connection's token expired; renew it");
                    let mut message = Val::map([("action", Val::Int(DISCONNECTED))]);
                    message.push("error", error_val(&error));
                    self.send(&message);
                    self.outbox.close(1000, "");
                    break;
                }
            };
            let Some(frame) = frame else { break };
            heartbeat.reset();
            if !self.inbound.admit(crate::sandbox::clock::wall_ms(), MAX_INBOUND_PER_SECOND) {
                let error = AblyError::new(
                    429,
                    42924,
                    format!("Connection terminated for abuse (inbound protocol message rate exceeded {MAX_INBOUND_PER_SECOND}/s)"),
                );
                self.send(&error_message(&error, None));
                self.outbox.close(1000, "");
                closed = true;
                break;
            }
            let message = match frame {
                Incoming::Text(text) => serde_json::from_str::<Val>(&text).ok(),
                Incoming::Binary(bytes) => from_msgpack(&bytes).ok(),
            };
            let Some(message) = message.filter(Val::is_map) else {
                let error = AblyError::new(400, 40000, "Invalid protocol message: not a JSON or MessagePack object");
                self.send(&error_message(&error, None));
                break;
            };
            if matches!(self.handle(&message), Next::End) {
                closed = true;
                break;
            }
        }
        self.shared.live().remove(&self.key);
        if closed || !self.retain() {
            self.shared.hub().forget(&self.id);
            leave_everywhere(&self.shared, &self.id, std::mem::take(&mut self.entered));
        }
    }

    /// The socket dropped without a CLOSE: the connection is kept for its state's lifetime
    /// (`connectionStateTtl`), its members still present, so a client can resume it with its
    /// key. Past the lifetime its members leave. False when no more connections can be kept.
    fn retain(&mut self) -> bool {
        self.shared.hub().forget(&self.id);
        let mut kept = self.shared.resumable();
        if kept.len() >= LIMITS.max_sockets {
            return false;
        }
        let entered = std::mem::take(&mut self.entered);
        let dropped_at = std::time::Instant::now();
        kept.insert(self.key.clone(), Resumable { id: Arc::clone(&self.id), entered, dropped_at });
        drop(kept);
        self.shared.kept.notify_waiters();
        let (shared, key) = (Arc::clone(&self.shared), self.key.clone());
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(CONNECTION_STATE_TTL_MS.unsigned_abs())).await;
            let expired = {
                let mut kept = shared.resumable();
                let ours = kept.get(&key).is_some_and(|k| k.dropped_at == dropped_at);
                if ours {
                    kept.remove(&key)
                } else {
                    None
                }
            };
            if let Some(expired) = expired {
                leave_everywhere(&shared, &expired.id, expired.entered);
            }
        });
        true
    }

    /// The connection kept under `key`; one whose socket the sandbox still holds (the client saw
    /// its socket drop first) is ended and then taken, as Ably moves a connection to the newer
    /// transport.
    async fn take_over(&self, key: &str) -> Option<Resumable> {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
        loop {
            // Listening before looking, so a connection kept in between is not missed.
            let kept = self.shared.kept.notified();
            tokio::pin!(kept);
            kept.as_mut().enable();
            if let Some(kept) = self.shared.resumable().remove(key) {
                return Some(kept);
            }
            let old = self.shared.live().get(key).cloned();
            let old = old?;
            old.end();
            if tokio::time::timeout_at(deadline, kept).await.is_err() {
                return None;
            }
        }
    }

    /// `resume=<connectionKey>`: the connection kept under that key continues on this socket
    /// with its id and its members; when there is none (unknown or expired) a new connection
    /// starts and CONNECTED says why (80008), as Ably does.
    async fn resume(&mut self, key: &str, caller: &Caller) {
        let kept = self.take_over(key).await;
        match kept {
            Some(kept) => {
                self.id = kept.id;
                self.key = key.to_owned();
                self.entered = kept.entered;
                self.connected(caller, None);
            }
            None => {
                let error =
                    AblyError::new(400, 80008, "Unable to recover connection: no connection is kept under this key");
                self.connected(caller, Some(&error));
            }
        }
    }

    fn connected(&self, caller: &Caller, error: Option<&AblyError>) {
        let mut details = Val::map([
            ("connectionKey", Val::str(&self.key)),
            ("maxMessageSize", Val::Int(MAX_MESSAGE_SIZE)),
            ("maxFrameSize", Val::Int(MAX_FRAME_SIZE as i64)),
            ("maxInboundRate", Val::Int(50)),
            ("maxOutboundRate", Val::Int(100)),
            ("connectionStateTtl", Val::Int(CONNECTION_STATE_TTL_MS)),
            ("maxIdleInterval", Val::Int(MAX_IDLE_INTERVAL.as_millis() as i64)),
            ("serverId", Val::str("opsdeck-sandbox")),
        ]);
        if let Some(client) = &caller.client_id {
            details.push("clientId", Val::str(client));
        }
        let mut message = Val::map([
            ("action", Val::Int(CONNECTED)),
            ("connectionId", Val::str(&*self.id)),
            ("connectionKey", Val::str(&self.key)),
        ]);
        message.push("connectionDetails", details);
        if let Some(error) = error {
            message.push("error", error_val(error));
        }
        self.send(&message);
    }

    fn send(&self, message: &Val) {
        // A socket gone or too slow ends itself; the read loop sees it next.
        let _ = send_bytes(&self.outbox, self.format, self.format.encode(message));
    }

    fn handle(&mut self, message: &Val) -> Next {
        let action = message.field("action").and_then(Val::as_i64);
        let channel = message.field("channel").and_then(Val::as_str).map(str::to_owned);
        match (action, channel) {
            (Some(HEARTBEAT), _) => {
                let mut reply = Val::map([("action", Val::Int(HEARTBEAT))]);
                if let Some(id) = message.field("id") {
                    reply.push("id", id.clone());
                }
                self.send(&reply);
                Next::Continue
            }
            (Some(AUTH), _) => self.reauthorize(message),
            (Some(CLOSE), _) => {
                self.send(&Val::map([("action", Val::Int(CLOSED))]));
                self.outbox.close(1000, "");
                Next::End
            }
            (Some(ATTACH), Some(channel)) => {
                self.attach(&channel, message);
                Next::Continue
            }
            (Some(DETACH), Some(channel)) => {
                self.shared.hub().unsubscribe(&channel, &self.id);
                self.attached.remove(&channel);
                self.send(&Val::map([("action", Val::Int(DETACHED)), ("channel", Val::Str(channel))]));
                Next::Continue
            }
            (Some(MESSAGE), Some(channel)) => {
                self.publish(&channel, message);
                Next::Continue
            }
            (Some(PRESENCE), Some(channel)) => {
                self.presence(&channel, message);
                Next::Continue
            }
            (Some(action @ (ATTACH | DETACH | MESSAGE | PRESENCE)), None) => {
                let error =
                    AblyError::new(400, 40000, format!("Invalid protocol message: action {action} needs a channel"));
                self.send(&error_message(&error, None));
                Next::End
            }
            (action, _) => {
                let what = action.map_or_else(|| "no action".to_owned(), |a| format!("action {a}"));
                let error = AblyError::new(400, 40000, format!("Invalid protocol message: {what} is not handled"));
                self.send(&error_message(&error, None));
                Next::End
            }
        }
    }

    /// AUTH with a new token: the connection continues with its credentials (CONNECTED again,
    /// same connection); a token for another client id, or none valid, ends it.
    fn reauthorize(&mut self, message: &Val) -> Next {
        let token = message.field("auth").and_then(|a| a.field("accessToken")).and_then(Val::as_str);
        let now = self.shared.clock.now_ms();
        let renewed = token
            .ok_or_else(|| AblyError::new(400, 40000, "Invalid AUTH: auth.accessToken is required"))
            .and_then(|token| super::auth::verify_token(token, now))
            .and_then(|caller| {
                let before = self.caller.as_ref().and_then(|c| c.client_id.clone());
                if before.is_some() && caller.client_id != before {
                    return Err(AblyError::new(
                        401,
                        40102,
                        "Incompatible credentials: the new token is for another client id than the connection's",
                    ));
                }
                Ok(caller)
            });
        match renewed {
            Ok(caller) => {
                self.connected(&caller, None);
                self.caller = Some(caller);
                Next::Continue
            }
            Err(error) => {
                self.send(&error_message(&error, None));
                self.outbox.close(1000, "");
                Next::End
            }
        }
    }

    fn attach(&mut self, channel: &str, message: &Val) {
        let Some(caller) = &self.caller else { return };
        if let Err(error) = super::routes::check_channel_name(channel) {
            self.send(&error_message(&error, Some(channel)));
            return;
        }
        if !self.attached.contains(channel) && self.attached.len() >= MAX_CHANNELS {
            let error = AblyError::new(
                400,
                90010,
                format!("Maximum number of channels per connection ({MAX_CHANNELS}) exceeded"),
            );
            self.send(&error_message(&error, Some(channel)));
            return;
        }
        let asked = message.field("flags").and_then(Val::as_i64).unwrap_or(0) & modes_mask();
        let granted = MODES
            .iter()
            .filter(|(mode, op)| (asked == 0 || asked & mode != 0) && caller.capability.allows(channel, op))
            .fold(0, |flags, (mode, _)| flags | mode);
        if granted == 0 {
            let error = super::capability::denied("subscribe", channel);
            self.send(&error_message(&error, Some(channel)));
            return;
        }
        self.attached.insert(channel.to_owned());
        let now = self.shared.clock.now_ms();
        let mut state = self.shared.lock();
        let record = state.channel(channel, now);
        let serial = record.messages.last().map(|m| m.serial.to_string());
        let presence = granted & MODE_PRESENCE_SUBSCRIBE != 0;
        // The presence set comes in a SYNC after ATTACHED, when there is one to see.
        let members: Vec<Arc<Presence>> =
            if presence { record.members.values().cloned().collect() } else { Vec::new() };
        // What the client missed, sent after ATTACHED: the messages after the last one it saw
        // (`channelSerial`, when the channel's history still has it: the channel then continues,
        // RESUMED), or those `params.rewind` asks for.
        let (backlog, resumed) = match (message.field("channelSerial").and_then(Val::as_str), granted & MODE_SUBSCRIBE)
        {
            (Some(seen), MODE_SUBSCRIBE) => match since_serial(&record.messages, seen) {
                Some(missed) => (missed, RESUMED),
                None => (Vec::new(), 0),
            },
            (None, MODE_SUBSCRIBE) => (rewind(&record.messages, message.field("params"), now), 0),
            _ => (Vec::new(), 0),
        };
        let flags = granted | resumed | if members.is_empty() { 0 } else { HAS_PRESENCE };
        if granted & (MODE_SUBSCRIBE | MODE_PRESENCE_SUBSCRIBE) != 0 {
            let subscriber = Subscriber {
                connection_id: Arc::clone(&self.id),
                outbox: self.outbox.clone(),
                format: self.format,
                echo: self.echo,
                messages: granted & MODE_SUBSCRIBE != 0,
                presence,
            };
            self.shared.hub().subscribe(channel, subscriber);
        }
        let mut reply =
            Val::map([("action", Val::Int(ATTACHED)), ("channel", Val::str(channel)), ("flags", Val::Int(flags))]);
        if let Some(serial) = serial {
            reply.push("channelSerial", Val::Str(serial));
        }
        self.send(&reply);
        if let Some(last) = backlog.last() {
            let messages = backlog.iter().map(|m| message_val(m, self.format)).collect();
            let frame = message_frame(channel, last.serial.to_string(), last.timestamp, messages, self.format);
            let _ = send_bytes(&self.outbox, self.format, frame);
        }
        if !members.is_empty() {
            let events = members.iter().map(|m| presence_val(m, self.format)).collect();
            let _ = send_bytes(&self.outbox, self.format, presence_frame(channel, events, true, self.format));
        }
        // ATTACHED (and the SYNC) go out before any message or presence event made after the
        // subscription: all are sent under the state lock.
        drop(state);
    }

    /// PRESENCE: members of this connection enter, update or leave.
    fn presence(&mut self, channel: &str, message: &Val) {
        let Some(caller) = self.caller.clone() else { return };
        let serial = message.field("msgSerial").and_then(Val::as_i64).unwrap_or(0);
        let items = match message.field("presence") {
            Some(Val::Arr(items)) if !items.is_empty() => items.as_slice(),
            _ => &[],
        };
        let outcome = super::routes::check_channel_name(channel)
            .and_then(|()| caller.require(channel, "presence"))
            .and_then(|()| self.presence_events(channel, items, serial, &caller));
        match outcome {
            Ok(()) => self.send(&Val::map([
                ("action", Val::Int(ACK)),
                ("msgSerial", Val::Int(serial)),
                ("count", Val::Int(1)),
            ])),
            Err(error) => {
                let mut reply =
                    Val::map([("action", Val::Int(NACK)), ("msgSerial", Val::Int(serial)), ("count", Val::Int(1))]);
                reply.push("error", error_val(&error));
                self.send(&reply);
            }
        }
    }

    /// Applies a PRESENCE's events to the channel's set and history and tells its presence
    /// subscribers; all or nothing.
    fn presence_events(&mut self, channel: &str, items: &[Val], serial: i64, caller: &Caller) -> Result<(), AblyError> {
        if items.is_empty() {
            return Err(AblyError::new(400, 40000, "Invalid presence message: no presence events"));
        }
        let mut parsed = Vec::with_capacity(items.len());
        for item in items {
            let act = item.field("action").and_then(Val::as_i64).unwrap_or(-1);
            if ![action::ENTER, action::LEAVE, action::UPDATE].contains(&act) {
                return Err(AblyError::new(
                    400,
                    40000,
                    format!("Invalid presence action {act}: expected 2 (enter), 3 (leave) or 4 (update)"),
                ));
            }
            let fields = parse_message(item)?;
            let client_id = match (caller.client_id.as_deref(), fields.client_id.as_deref()) {
                (Some(bound), Some(given)) if bound != "*" && bound != given => {
                    return Err(AblyError::new(
                        400,
                        40012,
                        format!("Invalid clientId {given:?}: the connection is bound to {bound:?}"),
                    ))
                }
                (_, Some(given)) => given.to_owned(),
                (Some(bound), None) if bound != "*" => bound.to_owned(),
                _ => {
                    return Err(AblyError::new(400, 91000, "Unable to enter presence channel (no clientId)"));
                }
            };
            parsed.push((act, client_id, fields));
        }
        let now = self.shared.clock.now_ms();
        let mut state = self.shared.lock();
        let record = state.channel(channel, now);
        let entering = parsed.iter().filter(|(act, ..)| *act != action::LEAVE).count();
        if record.members.len().saturating_add(entering) > MAX_MEMBERS {
            return Err(AblyError::new(
                400,
                91003,
                format!("Unable to enter member to presence channel; maximum number of {MAX_MEMBERS} members exceeded"),
            ));
        }
        let mut events = Vec::with_capacity(parsed.len());
        for (index, (act, client_id, fields)) in parsed.into_iter().enumerate() {
            let event = Arc::new(Presence {
                id: format!("{}:{serial}:{index}", self.id),
                action: act,
                client_id,
                connection_id: self.id.to_string(),
                data: fields.data,
                encoding: fields.encoding,
                timestamp: now,
            });
            let key = event.member_key();
            if act == action::LEAVE {
                record.members.remove(&key);
            } else {
                let member = Presence {
                    action: action::PRESENT,
                    id: event.id.clone(),
                    client_id: event.client_id.clone(),
                    connection_id: event.connection_id.clone(),
                    data: event.data.clone(),
                    encoding: event.encoding.clone(),
                    timestamp: now,
                };
                record.members.insert(key, Arc::new(member));
            }
            record.presence_history.push(now, Arc::clone(&event));
            events.push(event);
        }
        self.entered.insert(channel.to_owned());
        self.shared.hub().deliver(channel, Kind::Presence, Some(&self.id), |format| {
            presence_frame(channel, events.iter().map(|e| presence_val(e, format)).collect(), false, format)
        });
        drop(state);
        Ok(())
    }

    fn publish(&mut self, channel: &str, message: &Val) {
        let Some(caller) = &self.caller else { return };
        let serial = message.field("msgSerial").and_then(Val::as_i64).unwrap_or(0);
        let nack = |error: &AblyError| {
            let mut reply =
                Val::map([("action", Val::Int(NACK)), ("msgSerial", Val::Int(serial)), ("count", Val::Int(1))]);
            reply.push("error", error_val(error));
            reply
        };
        let outcome = super::routes::check_channel_name(channel)
            .and_then(|()| caller.require(channel, "publish"))
            .and_then(|()| parse_messages(message.field("messages").unwrap_or(&Val::Null)))
            .and_then(|messages| {
                let origin = Origin { connection_id: self.id.to_string(), msg_serial: serial.max(0) as u64 };
                let now = self.shared.clock.now_ms();
                let mut state = self.shared.lock();
                publish_locked(&mut state, &mut self.shared.hub(), channel, &messages, caller, now, Some(&origin))
            });
        match outcome {
            Ok(_) => self.send(&Val::map([
                ("action", Val::Int(ACK)),
                ("msgSerial", Val::Int(serial)),
                ("count", Val::Int(1)),
            ])),
            Err(error) => self.send(&nack(&error)),
        }
    }
}

/// A connection ended: its members leave every channel they were present on, and the
/// channels' presence subscribers are told.
fn leave_everywhere(shared: &Shared, connection_id: &str, entered: BTreeSet<String>) {
    let now = shared.clock.now_ms();
    let mut state = shared.lock();
    let mut hub = shared.hub();
    for name in entered {
        let Some(channel) = state.channels.get_mut(&name) else { continue };
        let mine: Vec<String> =
            channel.members.values().filter(|m| m.connection_id == connection_id).map(|m| m.member_key()).collect();
        let mut events = Vec::new();
        for key in mine {
            if let Some(member) = channel.members.remove(&key) {
                let event = Presence {
                    id: format!("{connection_id}:leave:{}", member.client_id),
                    action: action::LEAVE,
                    client_id: member.client_id.clone(),
                    connection_id: member.connection_id.clone(),
                    data: member.data.clone(),
                    encoding: member.encoding.clone(),
                    timestamp: now,
                };
                let event = Arc::new(event);
                channel.presence_history.push(now, Arc::clone(&event));
                events.push(event);
            }
        }
        if !events.is_empty() {
            hub.deliver(&name, Kind::Presence, None, |format| {
                presence_frame(&name, events.iter().map(|e| presence_val(e, format)).collect(), false, format)
            });
        }
    }
}

/// The messages after the one with serial `seen`, oldest first; `None` when the history no
/// longer has it (or never did).
fn since_serial(history: &Retained<Arc<Message>>, seen: &str) -> Option<Vec<Arc<Message>>> {
    let mut after = Vec::new();
    for (_, _, message) in history.iter().rev() {
        if message.serial.to_string() == seen {
            after.reverse();
            return Some(after);
        }
        if after.len() >= MAX_BACKLOG {
            return None;
        }
        after.push(Arc::clone(message));
    }
    None
}

/// `params.rewind`: the last N messages (`"10"`), or those of the last period (`"30s"`, `"2m"`,
/// `"1h"`), at most 100 as on Ably; oldest first.
fn rewind(history: &Retained<Arc<Message>>, params: Option<&Val>, now: i64) -> Vec<Arc<Message>> {
    const MOST: usize = 100;
    let Some(asked) = params.and_then(|p| p.field("rewind")).and_then(Val::as_str).map(str::trim) else {
        return Vec::new();
    };
    let since = |ms: i64| -> Vec<Arc<Message>> {
        let mut recent: Vec<Arc<Message>> = history
            .iter()
            .rev()
            .map(|(_, _, m)| m)
            .take_while(|m| m.timestamp >= now - ms)
            .take(MOST)
            .cloned()
            .collect();
        recent.reverse();
        recent
    };
    if let Ok(count) = asked.parse::<usize>() {
        let mut recent: Vec<Arc<Message>> =
            history.iter().rev().take(count.min(MOST)).map(|(_, _, m)| Arc::clone(m)).collect();
        recent.reverse();
        return recent;
    }
    let (digits, unit) = asked.split_at(asked.len().saturating_sub(1));
    let scale = match unit {
        "s" => 1_000,
        "m" => 60_000,
        "h" => 3_600_000,
        _ => return Vec::new(),
    };
    digits.parse::<i64>().ok().and_then(|n| n.checked_mul(scale)).map(since).unwrap_or_default()
}

fn modes_mask() -> i64 {
    MODES.iter().fold(0, |flags, (mode, _)| flags | mode)
}

/// An ErrorInfo as protocol messages carry it.
fn error_val(error: &AblyError) -> Val {
    Val::map([
        ("code", Val::Int(i64::from(error.code))),
        ("statusCode", Val::Int(i64::from(error.status))),
        ("message", Val::str(&error.message)),
    ])
}

/// An ERROR protocol message: the connection's (it then closes) or one channel's.
fn error_message(error: &AblyError, channel: Option<&str>) -> Val {
    let mut message = Val::map([("action", Val::Int(ERROR))]);
    if let Some(channel) = channel {
        message.push("channel", Val::str(channel));
    }
    message.push("error", error_val(error));
    message
}
