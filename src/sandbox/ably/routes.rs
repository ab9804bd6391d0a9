//! Channels, messages, presence and stats handlers.

use std::collections::BTreeSet;
use std::ops::Bound;
use std::sync::Arc;

use axum::http::header;
use axum::http::StatusCode;
use base64::engine::general_purpose::STANDARD;
use base64::Engine;

use super::capability::Caller;
use super::hub::{self, Hub};
use super::paging::{self, Direction};
use super::state::{Channel, Message, MessageBody, Presence, PushDelivery, State};
use super::stats::{self, m, Unit};
use super::wire::{passes, AblyError, Format, Val, LENIENT_B64};
use super::{Call, Reply, Shared};
use crate::sandbox::retention::Retained;

/// Ably's default maximum message size.
const MAX_MESSAGE_SIZE: usize = 65_536;
/// Batch publish bounds (§3).
const MAX_BATCH_CHANNELS: usize = 100;
const MAX_BATCH_MESSAGES: usize = 1000;

/// Checks a channel name the way Ably refuses the obviously invalid ones (40010).
pub(super) fn check_channel_name(name: &str) -> Result<(), AblyError> {
    let bad = |why: &str| AblyError::new(400, 40010, format!("Invalid channel name {name:?}: {why}"));
    if name.is_empty() {
        return Err(bad("it is empty"));
    }
    if name.starts_with('[') {
        return Err(bad("channel qualifiers are not supported by the simulator"));
    }
    if name.chars().any(char::is_control) {
        return Err(bad("it contains control characters"));
    }
    if name.len() > 1024 {
        return Err(bad("it is longer than 1024 bytes"));
    }
    Ok(())
}

/// The channel named by path segment 1, decoded and checked.
fn channel_name(call: &Call) -> Result<String, AblyError> {
    let name = call.segment(1).unwrap_or_default();
    check_channel_name(&name)?;
    Ok(name)
}

fn opt_cursor_index(call: &Call) -> Result<Option<u64>, AblyError> {
    call.query
        .get("cursor")
        .map(|c| {
            c.parse::<u64>().map_err(|_| AblyError::bad_param(format!("Invalid value for parameter 'cursor': {c:?}")))
        })
        .transpose()
}

/// ChannelDetails (§6.4); `status.occupancy.metrics` is always present (ably-python needs it).
fn channel_details(name: &str, channel: &Channel) -> Val {
    let occupancy = channel.occupancy;
    let members = i64::try_from(channel.members.len()).unwrap_or(i64::MAX);
    let presence_connections =
        channel.members.values().map(|p| p.connection_id.as_str()).collect::<BTreeSet<_>>().len();
    let presence_connections = i64::try_from(presence_connections).unwrap_or(i64::MAX);
    Val::map([
        ("channelId", Val::str(name)),
        (
            "status",
            Val::map([
                ("isActive", Val::Bool(true)),
                (
                    "occupancy",
                    Val::map([(
                        "metrics",
                        Val::map([
                            ("connections", Val::Int(occupancy.connections.max(presence_connections))),
                            ("publishers", Val::Int(occupancy.publishers)),
                            ("subscribers", Val::Int(occupancy.subscribers)),
                            ("presenceConnections", Val::Int(presence_connections)),
                            ("presenceMembers", Val::Int(members)),
                            ("presenceSubscribers", Val::Int(occupancy.presence_subscribers)),
                            ("objectPublishers", Val::Int(0)),
                            ("objectSubscribers", Val::Int(0)),
                        ]),
                    )]),
                ),
            ]),
        ),
    ])
}

/// `GET /channels`: names (`by=id`) or ChannelDetails (`by=value`), prefix-filtered, paged by
/// name.
pub(super) fn channels_list(shared: &Shared, call: &Call) -> Result<Reply, AblyError> {
    let limit = paging::limit(&call.query)?;
    let prefix = call.query.get("prefix").unwrap_or("");
    let by_id = match call.query.get("by") {
        Some("id") => true,
        Some("value") => false,
        Some(other) => {
            return Err(AblyError::bad_param(format!(
                "Invalid value for parameter 'by': {other:?}; expected id or value"
            )))
        }
        // Enumeration by id became the default with protocol version 3.
        None => call.version().is_some_and(|v| v >= 3.0),
    };
    let cursor = call.query.get("cursor");
    let lower = match cursor {
        Some(c) if c >= prefix => Bound::Excluded(c),
        _ => Bound::Included(prefix),
    };
    let state = shared.lock();
    let mut items = Vec::new();
    let mut last = None;
    let mut more = false;
    for (name, channel) in
        state.channels.range::<str, _>((lower, Bound::Unbounded)).take_while(|(name, _)| name.starts_with(prefix))
    {
        if items.len() == limit {
            more = true;
            break;
        }
        items.push(if by_id { Val::str(name.clone()) } else { channel_details(name, channel) });
        last = Some(name.as_str());
    }
    let next = last.filter(|_| more).map(str::to_owned);
    drop(state);
    let mut base = vec![("limit", limit.to_string())];
    if !prefix.is_empty() {
        base.push(("prefix", prefix.to_owned()));
    }
    base.push(("by", if by_id { "id" } else { "value" }.to_owned()));
    let link = call.links(base).header(cursor, next.as_deref());
    Ok(Reply::page(items, link))
}

/// `GET /channels/{id}`: the channel's details; like the real service, asking activates it.
pub(super) fn channels_get(shared: &Shared, call: &Call) -> Result<Reply, AblyError> {
    let name = channel_name(call)?;
    let mut state = shared.lock();
    let channel = state.channel(&name, call.now);
    Ok(Reply::ok(channel_details(&name, channel)))
}

/// Message data and encoding as sent to this client: binary goes out as msgpack `bin`, or in
/// JSON as base64 with `base64` appended to the encoding.
fn wire_data(data: Option<&Val>, encoding: Option<&str>, format: Format) -> (Option<Val>, Option<String>) {
    match data {
        Some(Val::Bin(bytes)) if format == Format::Json => (
            Some(Val::Str(STANDARD.encode(bytes))),
            Some(match encoding {
                Some(e) => format!("{e}/base64"),
                None => "base64".to_owned(),
            }),
        ),
        _ => (data.cloned(), encoding.map(str::to_owned)),
    }
}

/// A Message record (§6.1); absent fields are left out, never `null`.
pub(super) fn message_val(msg: &Message, format: Format) -> Val {
    let body = msg.body();
    let mut v = Val::map([("id", Val::str(&*msg.id))]);
    if let Some(name) = body.name {
        v.push("name", Val::Str(name));
    }
    let (data, encoding) = wire_data(body.data.as_ref(), body.encoding.as_deref(), format);
    if let Some(data) = data {
        v.push("data", data);
    }
    if let Some(encoding) = encoding {
        v.push("encoding", Val::Str(encoding));
    }
    if let Some(client) = body.client_id {
        v.push("clientId", Val::Str(client));
    }
    if let Some(connection) = body.connection_id {
        v.push("connectionId", Val::Str(connection));
    }
    v.push("timestamp", Val::Int(msg.timestamp));
    if let Some(extras) = body.extras {
        v.push("extras", extras);
    }
    v.push("serial", Val::str(msg.serial.to_string()));
    v.push("action", Val::Int(0));
    v
}

/// A PresenceMessage record (§6.2), action as a number.
pub(super) fn presence_val(p: &Presence, format: Format) -> Val {
    let mut v = Val::map([
        ("id", Val::str(p.id.clone())),
        ("action", Val::Int(p.action)),
        ("clientId", Val::str(p.client_id.clone())),
        ("connectionId", Val::str(p.connection_id.clone())),
    ]);
    let (data, encoding) = wire_data(p.data.as_ref(), p.encoding.as_deref(), format);
    if let Some(data) = data {
        v.push("data", data);
    }
    if let Some(encoding) = encoding {
        v.push("encoding", Val::Str(encoding));
    }
    v.push("timestamp", Val::Int(p.timestamp));
    v
}

/// The query of a time-ordered history: range, direction, limit and index cursor.
struct HistoryQuery {
    start: i64,
    end: i64,
    direction: Direction,
    limit: usize,
    /// A sequence number in the history ([`Retained`]).
    cursor: Option<u64>,
}

impl HistoryQuery {
    fn parse(call: &Call) -> Result<HistoryQuery, AblyError> {
        let (start, end) = paging::time_range(&call.query, call.now)?;
        Ok(HistoryQuery {
            start,
            end,
            direction: paging::direction(&call.query)?,
            limit: paging::limit(&call.query)?,
            cursor: opt_cursor_index(call)?,
        })
    }

    /// One page of `items` (ordered by time) by binary search; the cursor is a sequence
    /// number, which stays valid while older records age out (a cursor to a record that has
    /// gone simply starts at the oldest one kept).
    fn page<T>(&self, items: &Retained<Arc<T>>) -> (Vec<Arc<T>>, Option<u64>) {
        let lo = items.partition_seq(|at, _| at < self.start);
        let hi = items.partition_seq(|at, _| at <= self.end).max(lo);
        let limit = self.limit as u64;
        match self.direction {
            Direction::Backwards => {
                let top = self.cursor.map_or(hi, |c| c.saturating_add(1).min(hi));
                if top <= lo {
                    return (Vec::new(), None);
                }
                let from = top.saturating_sub(limit).max(lo);
                let page = items.range(from, top).rev().cloned().collect();
                (page, (from > lo).then(|| from - 1))
            }
            Direction::Forwards => {
                let from = self.cursor.map_or(lo, |c| c.max(lo));
                if from >= hi {
                    return (Vec::new(), None);
                }
                let to = from.saturating_add(limit).min(hi);
                (items.range(from, to).cloned().collect(), (to < hi).then_some(to))
            }
        }
    }

    fn link(&self, call: &Call, next: Option<u64>) -> String {
        let base = vec![
            ("start", self.start.to_string()),
            ("end", self.end.to_string()),
            ("limit", self.limit.to_string()),
            ("direction", self.direction.name().to_owned()),
        ];
        let current = self.cursor.map(|c| c.to_string());
        call.links(base).header(current.as_deref(), next.map(|n| n.to_string()).as_deref())
    }
}

/// `GET /channels/{id}/messages`.
pub(super) fn history(shared: &Shared, call: &Call) -> Result<Reply, AblyError> {
    let name = channel_name(call)?;
    let query = HistoryQuery::parse(call)?;
    let (page, next) = {
        let mut state = shared.lock();
        match state.channels.get_mut(&name) {
            Some(channel) => query.page(&channel.ready(call.now).messages),
            None => (Vec::new(), None),
        }
    };
    let items = page.iter().map(|m| message_val(m, call.format)).collect();
    Ok(Reply::page(items, query.link(call, next)))
}

/// `GET /channels/{id}/presence/history`.
pub(super) fn presence_history(shared: &Shared, call: &Call) -> Result<Reply, AblyError> {
    let name = channel_name(call)?;
    let query = HistoryQuery::parse(call)?;
    let (page, next) = {
        let mut state = shared.lock();
        match state.channels.get_mut(&name) {
            Some(channel) => query.page(&channel.ready(call.now).presence_history),
            None => (Vec::new(), None),
        }
    };
    let items = page.iter().map(|p| presence_val(p, call.format)).collect();
    Ok(Reply::page(items, query.link(call, next)))
}

/// `GET /channels/{id}/presence`: the present members, filtered by clientId/connectionId.
pub(super) fn presence_get(shared: &Shared, call: &Call) -> Result<Reply, AblyError> {
    let name = channel_name(call)?;
    let limit = paging::limit(&call.query)?;
    let client = call.query.get("clientId");
    let connection = call.query.get("connectionId");
    let cursor = call.query.get("cursor");
    let lower = cursor.map_or(Bound::Unbounded, Bound::Excluded);
    let mut page = Vec::new();
    let mut more = false;
    {
        let state = shared.lock();
        if let Some(channel) = state.channels.get(&name) {
            let matching = channel
                .members
                .range::<str, _>((lower, Bound::Unbounded))
                .map(|(_, p)| p)
                .filter(|p| passes(client, Some(&p.client_id)))
                .filter(|p| passes(connection, Some(&p.connection_id)));
            for p in matching {
                if page.len() == limit {
                    more = true;
                    break;
                }
                page.push(Arc::clone(p));
            }
        }
    }
    let next = page.last().filter(|_| more).map(|p| p.member_key());
    let mut base = vec![("limit", limit.to_string())];
    if let Some(c) = client {
        base.push(("clientId", c.to_owned()));
    }
    if let Some(c) = connection {
        base.push(("connectionId", c.to_owned()));
    }
    let link = call.links(base).header(cursor, next.as_deref());
    let items = page.iter().map(|p| presence_val(p, call.format)).collect();
    Ok(Reply::page(items, link))
}

/// A message as published, validated, before it gets an id, serial and timestamp.
#[derive(Clone, Debug)]
pub(super) struct NewMessage {
    id: Option<String>,
    name: Option<String>,
    pub(super) client_id: Option<String>,
    pub(super) data: Option<Val>,
    pub(super) encoding: Option<String>,
    extras: Option<Val>,
    size: usize,
}

fn opt_string(msg: &Val, key: &str, code: u32) -> Result<Option<String>, AblyError> {
    match msg.field(key) {
        None => Ok(None),
        Some(Val::Str(s)) if s.is_empty() => Ok(None),
        Some(Val::Str(s)) => Ok(Some(s.clone())),
        Some(_) => Err(AblyError::new(400, code, format!("Invalid message: {key} must be a string"))),
    }
}

/// Validates one published message. A trailing `base64` step is undone here, so binary data
/// is stored as bytes whatever format it arrived in.
pub(super) fn parse_message(msg: &Val) -> Result<NewMessage, AblyError> {
    if !msg.is_map() {
        return Err(AblyError::new(400, 40013, "Invalid message: expected an object with name and data"));
    }
    let id = opt_string(msg, "id", 40013)?;
    let name = opt_string(msg, "name", 40013)?;
    let client_id = opt_string(msg, "clientId", 40012)?;
    if client_id.as_deref() == Some("*") {
        return Err(AblyError::new(
            400,
            40012,
            "Invalid clientId: a message cannot be published with the wildcard clientId *",
        ));
    }
    let mut encoding = opt_string(msg, "encoding", 40013)?;
    let mut data = match msg.field("data") {
        None => None,
        Some(v @ (Val::Str(_) | Val::Bin(_) | Val::Map(_) | Val::Arr(_))) => Some(v.clone()),
        Some(_) => {
            return Err(AblyError::new(400, 40013, "Invalid message data: expected a string, binary, object or array"))
        }
    };
    if let (Some(enc), Some(Val::Str(text))) = (encoding.as_deref(), data.as_ref()) {
        let (rest, last) = enc.rsplit_once('/').unwrap_or(("", enc));
        if last == "base64" {
            let bytes = LENIENT_B64.decode(text.trim()).map_err(|_| {
                AblyError::new(400, 40013, "Invalid message data: encoding says base64 but data is not")
            })?;
            data = Some(Val::Bin(bytes));
            encoding = (!rest.is_empty()).then(|| rest.to_owned());
        }
    }
    let extras = match msg.field("extras") {
        None => None,
        Some(v @ Val::Map(_)) => Some(v.clone()),
        // Form-encoded publishes carry extras as JSON text.
        Some(Val::Str(text)) => match serde_json::from_str::<Val>(text) {
            Ok(v @ Val::Map(_)) => Some(v),
            _ => return Err(AblyError::new(400, 40013, "Invalid message: extras must be an object")),
        },
        Some(_) => return Err(AblyError::new(400, 40013, "Invalid message: extras must be an object")),
    };
    let size = name.as_ref().map_or(0, String::len)
        + data.as_ref().map_or(0, Val::approx_size)
        + client_id.as_ref().map_or(0, String::len)
        + extras.as_ref().map_or(0, Val::approx_size);
    if size > MAX_MESSAGE_SIZE {
        return Err(AblyError::new(
            400,
            40009,
            format!("Maximum message length exceeded: {size} bytes, the limit is {MAX_MESSAGE_SIZE}"),
        ));
    }
    Ok(NewMessage { id, name, client_id, data, encoding, extras, size })
}

/// One message object or an array of them.
pub(super) fn parse_messages(body: &Val) -> Result<Vec<NewMessage>, AblyError> {
    let messages = match body {
        Val::Arr(items) => items.iter().map(parse_message).collect::<Result<Vec<_>, _>>()?,
        Val::Map(_) => vec![parse_message(body)?],
        _ => {
            return Err(AblyError::new(
                400,
                40001,
                "Invalid request body: expected a message object or an array of messages",
            ))
        }
    };
    if messages.is_empty() {
        return Err(AblyError::bad_param("Invalid request body: no messages to publish"));
    }
    Ok(messages)
}

/// `?enveloped=false`: the body is the payload; metadata comes from headers or query params.
fn unenveloped(call: &Call) -> Result<NewMessage, AblyError> {
    let meta = |header: &str, param: &str| {
        call.headers
            .get(header)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
            .or_else(|| call.query.get(param).map(str::to_owned))
    };
    let content_type = call.headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("");
    let mut encoding = meta("x-ably-encoding", "encoding");
    let data = match std::str::from_utf8(&call.body) {
        Ok(text) if content_type.contains("json") => {
            encoding.get_or_insert_with(|| "json".to_owned());
            Val::str(text)
        }
        Ok(text) if content_type.starts_with("text/") => Val::str(text),
        _ => Val::Bin(call.body.to_vec()),
    };
    let client_id = match call.headers.get("x-ably-clientid").and_then(|v| v.to_str().ok()) {
        Some(b64) => LENIENT_B64.decode(b64.trim()).ok().and_then(|b| String::from_utf8(b).ok()),
        None => call.query.get("clientId").map(str::to_owned),
    };
    let mut fields = Val::map([("data", data)]);
    for (key, value) in [
        ("id", meta("x-ably-messageid", "messageId")),
        ("name", meta("x-ably-name", "name")),
        ("encoding", encoding),
        ("clientId", client_id),
    ] {
        if let Some(v) = value {
            fields.push(key, Val::Str(v));
        }
    }
    parse_message(&fields)
}

/// `POST /channels/{id}/messages`.
pub(super) fn publish(shared: &Shared, call: &Call, caller: &Caller) -> Result<Reply, AblyError> {
    let name = channel_name(call)?;
    let messages = if call.query.get("enveloped") == Some("false") {
        vec![unenveloped(call)?]
    } else {
        parse_messages(&call.body()?)?
    };
    let mut state = shared.lock();
    let result = publish_locked(&mut state, &mut shared.hub(), &name, &messages, caller, call.now, None)?;
    Ok(Reply::created(result))
}

/// Applies the credentials' client id: fills it in, or refuses a different one.
fn effective_client(msg: &NewMessage, caller: &Caller) -> Result<Option<String>, AblyError> {
    match (caller.client_id.as_deref(), msg.client_id.as_deref()) {
        (Some(bound), Some(given)) if bound != "*" && bound != given => Err(AblyError::new(
            400,
            40012,
            format!("Invalid clientId {given:?}: the credentials are bound to {bound:?}"),
        )),
        (Some(bound), None) if bound != "*" => Ok(Some(bound.to_owned())),
        (_, given) => Ok(given.map(str::to_owned)),
    }
}

/// Where a publish came from when it was a realtime connection's: its messages' ids are
/// `<connectionId>:<msgSerial>:<index>` and they carry the connection's id.
pub(super) struct Origin {
    pub(super) connection_id: String,
    pub(super) msg_serial: u64,
}

/// Stores messages on a channel (creating it), counts them in stats, delivers them to the
/// channel's realtime subscribers and `extras.push` to subscribed devices. Returns
/// `{channel, messageId, serials}`.
pub(super) fn publish_locked(
    state: &mut State,
    hub: &mut Hub,
    name: &str,
    messages: &[NewMessage],
    caller: &Caller,
    now: i64,
    origin: Option<&Origin>,
) -> Result<Val, AblyError> {
    let clients = messages.iter().map(|m| effective_client(m, caller)).collect::<Result<Vec<_>, _>>()?;
    let wants_push = messages.iter().any(|m| m.extras.as_ref().and_then(|x| x.field("push")).is_some());
    let push_targets = if wants_push { state.channel_push_targets(name) } else { Vec::new() };
    let base = match origin {
        Some(origin) => format!("{}:{}", origin.connection_id, origin.msg_serial),
        None => {
            let base = format!("{}:{}", state.rest_connection, state.publish_serial);
            state.publish_serial = state.publish_serial.wrapping_add(1);
            base
        }
    };
    let created = !state.channels.contains_key(name);
    state.channel(name, now);
    let State { channels, stats, .. } = state;
    let channel = channels
        .get_mut(name)
        .ok_or_else(|| AblyError::new(500, 50000, "Internal error: the channel vanished while publishing"))?;
    let timestamp = channel.messages.last().map_or(now, |m| m.timestamp.max(now));
    let fanout = u64::try_from(channel.occupancy.subscribers).unwrap_or(0);
    let minute = stats.minute(now);
    if created {
        minute.add(m::CHANNELS_OPENED, 1);
    }
    let mut serial_list = Vec::with_capacity(messages.len());
    let mut pushes = Vec::new();
    let mut published = Vec::with_capacity(messages.len());
    for (index, (msg, client_id)) in messages.iter().zip(clients).enumerate() {
        if let Some(id) = &msg.id {
            if let Some(existing) = channel.by_id(id) {
                // Idempotent publish: the first message with this id stands.
                serial_list.push(Val::str(existing.serial.to_string()));
                continue;
            }
        }
        let id = msg.id.clone().unwrap_or_else(|| format!("{base}:{index}"));
        let serial = channel.serials.next(timestamp, index);
        if let Some(push) = msg.extras.as_ref().and_then(|x| x.field("push")) {
            let title =
                push.field("notification").and_then(|n| n.field("title")).and_then(Val::as_str).map(str::to_owned);
            pushes.push(title);
        }
        let body = MessageBody {
            name: msg.name.clone(),
            client_id,
            connection_id: origin.map(|o| o.connection_id.clone()),
            data: msg.data.clone(),
            encoding: msg.encoding.clone(),
            extras: msg.extras.clone(),
        };
        let message = Arc::new(Message::new(id, body, timestamp, serial));
        published.push(Arc::clone(&message));
        channel.append(message);
        serial_list.push(Val::Str(serial.to_string()));
        let size = msg.size as u64;
        for (count, data) in [
            (m::ALL_COUNT, m::ALL_DATA),
            (m::ALL_MSG_COUNT, m::ALL_MSG_DATA),
            (m::IN_COUNT, m::IN_DATA),
            (m::IN_REST_COUNT, m::IN_REST_DATA),
            (m::PERSISTED_COUNT, m::PERSISTED_DATA),
        ] {
            minute.add(count, 1);
            minute.add(data, size);
        }
        if fanout > 0 {
            for (count, data) in [
                (m::ALL_COUNT, m::ALL_DATA),
                (m::ALL_MSG_COUNT, m::ALL_MSG_DATA),
                (m::OUT_COUNT, m::OUT_DATA),
                (m::OUT_REALTIME_COUNT, m::OUT_REALTIME_DATA),
            ] {
                minute.add(count, fanout);
                minute.add(data, fanout.saturating_mul(size));
            }
        }
    }
    if let Some(last) = published.last() {
        let (serial, timestamp) = (last.serial.to_string(), last.timestamp);
        hub.deliver(name, hub::Kind::Messages, origin.map(|o| o.connection_id.as_str()), |format| {
            let messages = published.iter().map(|m| message_val(m, format)).collect();
            hub::message_frame(name, serial.clone(), timestamp, messages, format)
        });
    }
    for title in pushes {
        let delivered = push_targets.len() as u64;
        let minute = state.stats.minute(now);
        minute.add(m::PUSH_CHANNEL_MESSAGES, 1);
        minute.add(m::PUSH_ALL, delivered);
        minute.add(m::PUSH_DELIVERED, delivered);
        state.log_push(PushDelivery {
            timestamp,
            channel: Some(name.to_owned()),
            device_ids: push_targets.clone(),
            title,
        });
    }
    let message_id = match messages.first().and_then(|m| m.id.as_deref()) {
        Some(id) => match id.rsplit_once(':') {
            Some((head, tail)) if tail.bytes().all(|b| b.is_ascii_digit()) => head.to_owned(),
            _ => id.to_owned(),
        },
        None => base,
    };
    Ok(Val::map([("channel", Val::str(name)), ("messageId", Val::Str(message_id)), ("serials", Val::Arr(serial_list))]))
}

/// `channels` of a BatchSpec: one name or an array of names.
fn spec_channels(spec: &Val) -> Result<Vec<String>, AblyError> {
    let bad = || AblyError::bad_param("Invalid batch spec: channels must be a channel name or an array of names");
    let channels = match spec.field("channels") {
        Some(Val::Str(s)) => vec![s.clone()],
        Some(Val::Arr(items)) => {
            items.iter().map(|c| c.as_str().map(str::to_owned).ok_or_else(bad)).collect::<Result<Vec<_>, _>>()?
        }
        _ => return Err(bad()),
    };
    if channels.is_empty() || channels.len() > MAX_BATCH_CHANNELS {
        return Err(AblyError::bad_param(format!(
            "Invalid batch spec: between 1 and {MAX_BATCH_CHANNELS} channels per spec"
        )));
    }
    Ok(channels)
}

/// `POST /messages`: BatchResult per spec (§6.8), or the v1 flat array for old protocol
/// versions.
pub(super) fn batch_publish(shared: &Shared, call: &Call, caller: &Caller) -> Result<Reply, AblyError> {
    let body = call.body()?;
    let specs: Vec<&Val> = match &body {
        Val::Arr(items) => items.iter().collect(),
        Val::Map(_) => vec![&body],
        _ => return Err(AblyError::new(400, 40001, "Invalid request body: expected a BatchSpec or an array of them")),
    };
    if specs.is_empty() {
        return Err(AblyError::bad_param("Invalid request body: no batch specs"));
    }
    let mut parsed = Vec::with_capacity(specs.len());
    for spec in specs {
        if !spec.is_map() {
            return Err(AblyError::bad_param("Invalid batch spec: expected an object"));
        }
        let channels = spec_channels(spec)?;
        let messages = match spec.field("messages") {
            Some(v @ (Val::Map(_) | Val::Arr(_))) => parse_messages(v)?,
            _ => {
                return Err(AblyError::bad_param(
                    "Invalid batch spec: messages must be a message or an array of messages",
                ))
            }
        };
        if messages.len() > MAX_BATCH_MESSAGES {
            return Err(AblyError::bad_param(format!(
                "Invalid batch spec: at most {MAX_BATCH_MESSAGES} messages per spec"
            )));
        }
        parsed.push((channels, messages));
    }
    // Old protocol versions (explicitly below 2) get the v1 flat array.
    let legacy = call.version().is_some_and(|v| v < 2.0);
    let mut state = shared.lock();
    let mut batch_results = Vec::with_capacity(parsed.len());
    let mut flat = Vec::new();
    let mut any_failed = false;
    for (channels, messages) in &parsed {
        let mut results = Vec::with_capacity(channels.len());
        let (mut ok, mut failed) = (0i64, 0i64);
        for name in channels {
            // A channel outside the capability fails alone, like the real service reports it.
            let outcome = check_channel_name(name)
                .and_then(|()| caller.require(name, "publish"))
                .and_then(|()| publish_locked(&mut state, &mut shared.hub(), name, messages, caller, call.now, None));
            match outcome {
                Ok(v) => {
                    ok += 1;
                    if legacy {
                        let mut item = Val::map([("channel", Val::str(name.clone()))]);
                        if let Some(id) = v.field("messageId") {
                            item.push("messageId", id.clone());
                        }
                        flat.push(item);
                    }
                    results.push(v);
                }
                Err(e) => {
                    failed += 1;
                    any_failed = true;
                    let error = e.body().field("error").cloned().unwrap_or(Val::Null);
                    let item = Val::map([("channel", Val::str(name.clone())), ("error", error)]);
                    if legacy {
                        flat.push(item.clone());
                    }
                    results.push(item);
                }
            }
        }
        batch_results.push(Val::map([
            ("successCount", Val::Int(ok)),
            ("failureCount", Val::Int(failed)),
            ("results", Val::Arr(results)),
        ]));
    }
    drop(state);
    if legacy {
        if any_failed {
            let mut body = AblyError::new(400, 40020, "Batched response includes errors").body();
            body.push("batchResponse", Val::Arr(flat));
            return Ok(Reply::with_status(StatusCode::BAD_REQUEST, body));
        }
        return Ok(Reply::created(Val::Arr(flat)));
    }
    Ok(Reply::created(Val::Arr(batch_results)))
}

/// `GET /stats`: records of `unit` built from the counters, newest first by default.
pub(super) fn stats(shared: &Shared, call: &Call) -> Result<Reply, AblyError> {
    let (start, end) = paging::time_range(&call.query, call.now)?;
    let direction = paging::direction(&call.query)?;
    let limit = paging::limit(&call.query)?;
    let unit = match call.query.get("unit") {
        None => Unit::Minute,
        Some(raw) => Unit::parse(raw).ok_or_else(|| {
            AblyError::bad_param(format!(
                "Invalid value for parameter 'unit': {raw:?}; expected minute, hour, day or month"
            ))
        })?,
    };
    let cursor = call
        .query
        .get("cursor")
        .map(|c| {
            c.parse::<i64>().map_err(|_| AblyError::bad_param(format!("Invalid value for parameter 'cursor': {c:?}")))
        })
        .transpose()?;
    let query = stats::StatsQuery { unit, start, end, forwards: direction == Direction::Forwards, cursor };
    let selected = shared.lock().stats.page(&query, limit + 1);
    let next = selected.get(limit).map(|(k, _)| k.to_string());
    let items = selected.iter().take(limit).map(|(k, c)| stats::record(unit, *k, c, call.now)).collect();
    let base = vec![
        ("start", start.to_string()),
        ("end", end.to_string()),
        ("limit", limit.to_string()),
        ("direction", direction.name().to_owned()),
        ("unit", unit.name().to_owned()),
    ];
    let current = cursor.map(|c| c.to_string());
    let link = call.links(base).header(current.as_deref(), next.as_deref());
    Ok(Reply::page(items, link))
}
