//! Push admin handlers: device registrations, channel subscriptions and direct publishes.

use std::ops::Bound;

use axum::http::StatusCode;

use super::capability::Caller;
use super::capability::ANY;
use super::paging;
use super::routes::check_channel_name;
use super::state::{Device, PushDelivery, State, Target};
use super::stats::m;
use super::wire::{passes, AblyError, Val};
use super::{Call, Reply, Shared};

const PLATFORMS: &[&str] = &["ios", "android", "browser"];
const FORM_FACTORS: &[&str] = &["phone", "tablet", "desktop", "tv", "watch", "car", "embedded", "other"];

/// DeviceDetails (§6.3) with only the keys ably-python accepts.
pub(super) fn device_val(device: &Device) -> Val {
    let mut v = Val::map([("id", Val::str(device.id.clone()))]);
    if let Some(client) = &device.client_id {
        v.push("clientId", Val::str(client.clone()));
    }
    v.push("platform", Val::str(device.platform.clone()));
    v.push("formFactor", Val::str(device.form_factor.clone()));
    v.push("metadata", device.metadata.clone());
    v.push("push", Val::map([("recipient", device.recipient.clone()), ("state", Val::str("ACTIVE"))]));
    v.push("updateToken", Val::str(device.update_token.clone()));
    v
}

fn opt_str<'a>(body: &'a Val, key: &str, what: &str) -> Result<Option<&'a str>, AblyError> {
    match body.field(key) {
        None => Ok(None),
        Some(Val::Str(s)) if s.is_empty() => Ok(None),
        Some(Val::Str(s)) => Ok(Some(s)),
        Some(_) => Err(AblyError::bad_param(format!("Invalid {what}: {key} must be a string"))),
    }
}

fn need_str<'a>(body: &'a Val, key: &str, what: &str) -> Result<&'a str, AblyError> {
    opt_str(body, key, what)?.ok_or_else(|| AblyError::bad_param(format!("Invalid {what}: {key} is required")))
}

/// A push recipient of a device (`transportType` plus its address fields).
fn check_device_recipient(recipient: &Val) -> Result<(), AblyError> {
    let what = "push recipient";
    if !recipient.is_map() {
        return Err(AblyError::bad_param("Invalid device: push.recipient must be an object"));
    }
    match need_str(recipient, "transportType", what)? {
        "apns" => need_str(recipient, "deviceToken", what).map(drop),
        "fcm" | "gcm" => need_str(recipient, "registrationToken", what).map(drop),
        "web" => {
            need_str(recipient, "targetUrl", what)?;
            match recipient.field("encryptionKey") {
                Some(key) if key.is_map() => Ok(()),
                _ => Err(AblyError::bad_param(
                    "Invalid push recipient: web recipients need encryptionKey {p256dh, auth}",
                )),
            }
        }
        other => Err(AblyError::bad_param(format!(
            "Invalid push recipient: transportType {other:?}; expected apns, fcm, gcm or web"
        ))),
    }
}

fn one_of(value: &str, allowed: &[&str], field: &str) -> Result<(), AblyError> {
    if allowed.contains(&value) {
        Ok(())
    } else {
        Err(AblyError::bad_param(format!("Invalid device: {field} {value:?}; expected one of {}", allowed.join(", "))))
    }
}

fn metadata_of(body: &Val) -> Result<Option<Val>, AblyError> {
    match body.field("metadata") {
        None => Ok(None),
        Some(v) if v.is_map() => Ok(Some(v.clone())),
        Some(_) => Err(AblyError::bad_param("Invalid device: metadata must be an object")),
    }
}

fn client_of(body: &Val) -> Result<Option<String>, AblyError> {
    let client = opt_str(body, "clientId", "device")?;
    if client == Some("*") {
        return Err(AblyError::new(400, 40012, "Invalid device: clientId cannot be the wildcard *"));
    }
    Ok(client.map(str::to_owned))
}

/// 401/40160 for a push route the capability does not cover.
fn push_denied(what: &str) -> AblyError {
    AblyError::new(401, 40160, format!("operation not permitted with provided capability: {what}"))
}

/// Saving a device needs push-admin on `*`, or push-subscribe (on any resource: a device is no
/// channel) for a device of the credentials' own clientId (§3). Both the device as it was (so
/// another client's device cannot be taken over) and as it will be must be the caller's.
fn may_save_device(caller: &Caller, new_client: Option<&str>, existing: Option<Option<&str>>) -> Result<(), AblyError> {
    if caller.capability.allows(ANY, "push-admin") {
        return Ok(());
    }
    let own = match existing {
        None => caller.owns_client(new_client),
        Some(old) => caller.owns_client(old) && (new_client.is_none() || caller.owns_client(new_client)),
    };
    if own && caller.capability.allows_anywhere("push-subscribe") {
        Ok(())
    } else {
        Err(push_denied(
            "saving a device registration needs 'push-admin' on '*', or 'push-subscribe' for a device with the \
             credentials' own clientId",
        ))
    }
}

/// Subscribing (or unsubscribing) needs push-admin on `*`, or push-subscribe on the channel
/// (`*` for all channels) for the credentials' own clientId or one of its devices: push-admin
/// is what acts on other clients' behalf.
fn may_subscribe(caller: &Caller, state: &State, channel: &str, target: &Target) -> Result<(), AblyError> {
    if caller.capability.allows(ANY, "push-admin") {
        return Ok(());
    }
    if !caller.capability.allows(channel, "push-subscribe") {
        return Err(push_denied(&format!(
            "push subscriptions on '{channel}' need 'push-subscribe' on it, or 'push-admin' on '*'"
        )));
    }
    let own = match target {
        Target::Client(id) => caller.owns_client(Some(id)),
        Target::Device(id) => state.devices.get(id).is_some_and(|d| caller.owns_client(d.client_id.as_deref())),
    };
    if own {
        Ok(())
    } else {
        Err(push_denied(
            "with 'push-subscribe' only the credentials' own clientId or its devices can be (un)subscribed; others \
             need 'push-admin' on '*'",
        ))
    }
}

/// `POST /push/deviceRegistrations` and `PUT /push/deviceRegistrations/{id}`: upsert. On an
/// existing device only the mutable fields (clientId, metadata, push.recipient) change.
pub(super) fn device_save(shared: &Shared, call: &Call, caller: &Caller, by_path: bool) -> Result<Reply, AblyError> {
    let body = call.body()?;
    if !body.is_map() {
        return Err(AblyError::new(400, 40001, "Invalid request body: expected a DeviceDetails object"));
    }
    let path_id = if by_path { call.segment(2) } else { None };
    let body_id = opt_str(&body, "id", "device")?;
    let id = match (path_id.as_deref(), body_id) {
        (Some(p), Some(b)) if p != b => {
            return Err(AblyError::new(
                400,
                40015,
                format!("Invalid device id: body id {b:?} does not match the path ({p:?})"),
            ))
        }
        (Some(p), _) => p.to_owned(),
        (None, Some(b)) => b.to_owned(),
        (None, None) => return Err(AblyError::new(400, 40015, "Invalid device: id is required")),
    };
    if id.is_empty() || id.len() > 128 {
        return Err(AblyError::new(400, 40015, "Invalid device id: 1 to 128 characters"));
    }
    let platform = need_str(&body, "platform", "device")?;
    one_of(platform, PLATFORMS, "platform")?;
    let form_factor = need_str(&body, "formFactor", "device")?;
    one_of(form_factor, FORM_FACTORS, "formFactor")?;
    let recipient = body
        .field("push")
        .and_then(|p| p.field("recipient"))
        .ok_or_else(|| AblyError::bad_param("Invalid device: push.recipient is required"))?;
    check_device_recipient(recipient)?;
    let client_id = client_of(&body)?;
    let metadata = metadata_of(&body)?;
    let device_secret = opt_str(&body, "deviceSecret", "device")?.map(str::to_owned);

    let mut state = shared.lock();
    let existing = state.devices.get(&id).map(|d| d.client_id.as_deref());
    may_save_device(caller, client_id.as_deref(), existing)?;
    let created = !state.devices.contains_key(&id);
    let device = if created {
        let update_token = state.next_update_token();
        let device = Device {
            id: id.clone(),
            client_id,
            platform: platform.to_owned(),
            form_factor: form_factor.to_owned(),
            metadata: metadata.unwrap_or(Val::Map(Vec::new())),
            recipient: recipient.clone(),
            update_token,
            device_secret,
        };
        state.add_device(device.clone());
        device
    } else {
        let Some(device) = state.devices.get_mut(&id) else {
            return Err(AblyError::not_found(format!("No device registered with id {id}")));
        };
        if client_id.is_some() {
            device.client_id = client_id;
        }
        if let Some(metadata) = metadata {
            device.metadata = metadata;
        }
        device.recipient = recipient.clone();
        if device_secret.is_some() {
            device.device_secret = device_secret;
        }
        device.clone()
    };
    drop(state);
    let status = if by_path { StatusCode::OK } else { StatusCode::CREATED };
    Ok(Reply::with_status(status, device_val(&device)))
}

/// `PATCH /push/deviceRegistrations/{id}`: change clientId, metadata or push.recipient.
pub(super) fn device_patch(shared: &Shared, call: &Call) -> Result<Reply, AblyError> {
    let id = call.segment(2).unwrap_or_default();
    let body = call.body()?;
    if !body.is_map() {
        return Err(AblyError::new(400, 40001, "Invalid request body: expected an object"));
    }
    let client_id = client_of(&body)?;
    let metadata = metadata_of(&body)?;
    let recipient = body.field("push").and_then(|p| p.field("recipient"));
    if let Some(r) = recipient {
        check_device_recipient(r)?;
    }
    let mut state = shared.lock();
    let device =
        state.devices.get_mut(&id).ok_or_else(|| AblyError::not_found(format!("No device registered with id {id}")))?;
    if client_id.is_some() {
        device.client_id = client_id;
    }
    if let Some(metadata) = metadata {
        device.metadata = metadata;
    }
    if let Some(r) = recipient {
        device.recipient = r.clone();
    }
    Ok(Reply::ok(device_val(device)))
}

/// `GET /push/deviceRegistrations/{id}`.
pub(super) fn device_get(shared: &Shared, call: &Call) -> Result<Reply, AblyError> {
    let id = call.segment(2).unwrap_or_default();
    let state = shared.lock();
    state
        .devices
        .get(&id)
        .map(|d| Reply::ok(device_val(d)))
        .ok_or_else(|| AblyError::not_found(format!("No device registered with id {id}")))
}

/// `POST /push/deviceRegistrations/{id}/resetUpdateToken`.
pub(super) fn device_reset_token(shared: &Shared, call: &Call) -> Result<Reply, AblyError> {
    let id = call.segment(2).unwrap_or_default();
    let mut state = shared.lock();
    if !state.devices.contains_key(&id) {
        return Err(AblyError::not_found(format!("No device registered with id {id}")));
    }
    let token = state.next_update_token();
    let device =
        state.devices.get_mut(&id).ok_or_else(|| AblyError::not_found(format!("No device registered with id {id}")))?;
    device.update_token = token;
    Ok(Reply::ok(device_val(device)))
}

/// `GET /push/deviceRegistrations`, filtered by deviceId and clientId, paged by id.
pub(super) fn device_list(shared: &Shared, call: &Call) -> Result<Reply, AblyError> {
    let limit = paging::limit(&call.query)?;
    let device_id = call.query.get("deviceId");
    let client_id = call.query.get("clientId");
    let cursor = call.query.get("cursor");
    let lower = cursor.map_or(Bound::Unbounded, Bound::Excluded);
    let mut items = Vec::new();
    let mut last = None;
    let mut more = false;
    {
        let state = shared.lock();
        let matching = state
            .devices
            .range::<str, _>((lower, Bound::Unbounded))
            .map(|(_, d)| d)
            .filter(|d| passes(device_id, Some(&d.id)))
            .filter(|d| passes(client_id, d.client_id.as_deref()));
        for device in matching {
            if items.len() == limit {
                more = true;
                break;
            }
            items.push(device_val(device));
            last = Some(device.id.clone());
        }
    }
    let next = last.filter(|_| more);
    let mut base = vec![("limit", limit.to_string())];
    if let Some(d) = device_id {
        base.push(("deviceId", d.to_owned()));
    }
    if let Some(c) = client_id {
        base.push(("clientId", c.to_owned()));
    }
    let link = call.links(base).header(cursor, next.as_deref());
    Ok(Reply::page(items, link))
}

/// Removes devices and their channel subscriptions.
fn remove_devices(state: &mut State, ids: &[String]) {
    state.remove_push(ids, |_| false);
}

/// `DELETE /push/deviceRegistrations/{id}`: 204 whether or not the device existed, as the real
/// deletion is asynchronous.
pub(super) fn device_delete(shared: &Shared, call: &Call) -> Result<Reply, AblyError> {
    let id = call.segment(2).unwrap_or_default();
    remove_devices(&mut shared.lock(), &[id]);
    Ok(Reply::no_content())
}

/// `DELETE /push/deviceRegistrations?deviceId=|clientId=` (the SDKs' `removeWhere`).
pub(super) fn device_delete_where(shared: &Shared, call: &Call) -> Result<Reply, AblyError> {
    let device_id = call.query.get("deviceId");
    let client_id = call.query.get("clientId");
    if device_id.is_none() && client_id.is_none() {
        return Err(AblyError::bad_param("Invalid parameters: deviceId or clientId is required to delete devices"));
    }
    let mut state = shared.lock();
    let ids: Vec<String> = state
        .devices
        .values()
        .filter(|d| passes(device_id, Some(&d.id)))
        .filter(|d| passes(client_id, d.client_id.as_deref()))
        .map(|d| d.id.clone())
        .collect();
    remove_devices(&mut state, &ids);
    Ok(Reply::no_content())
}

/// A channel subscription record (§6.5): channel plus exactly one of deviceId/clientId.
fn subscription_val(channel: &str, target: &Target) -> Val {
    let (key, id) = match target {
        Target::Device(id) => ("deviceId", id),
        Target::Client(id) => ("clientId", id),
    };
    Val::map([("channel", Val::str(channel)), (key, Val::str(id.clone()))])
}

/// `POST /push/channelSubscriptions`: returns the saved subscription (both SDKs parse it).
pub(super) fn subscription_create(shared: &Shared, call: &Call, caller: &Caller) -> Result<Reply, AblyError> {
    let body = call.body()?;
    if !body.is_map() {
        return Err(AblyError::new(
            400,
            40001,
            "Invalid request body: expected {channel, deviceId} or {channel, clientId}",
        ));
    }
    let channel = need_str(&body, "channel", "subscription")?;
    check_channel_name(channel)?;
    let device_id = opt_str(&body, "deviceId", "subscription")?;
    let client_id = opt_str(&body, "clientId", "subscription")?;
    let target = match (device_id, client_id) {
        (Some(d), None) => Target::Device(d.to_owned()),
        (None, Some(c)) => Target::Client(c.to_owned()),
        _ => return Err(AblyError::bad_param("Invalid subscription: give exactly one of deviceId and clientId")),
    };
    let mut state = shared.lock();
    may_subscribe(caller, &state, channel, &target)?;
    if let Target::Device(id) = &target {
        if !state.devices.contains_key(id) {
            return Err(AblyError::bad_param(format!(
                "Invalid subscription: deviceId {id:?} is not a registered device"
            )));
        }
    }
    let record = subscription_val(channel, &target);
    state.add_subscription((channel.to_owned(), target));
    Ok(Reply::created(record))
}

/// Cursor text of a subscription: channel, kind and id joined by unit separators.
fn subscription_cursor(channel: &str, target: &Target) -> String {
    match target {
        Target::Client(id) => format!("{channel}\u{1f}c\u{1f}{id}"),
        Target::Device(id) => format!("{channel}\u{1f}d\u{1f}{id}"),
    }
}

fn parse_subscription_cursor(raw: &str) -> Option<(String, Target)> {
    let mut parts = raw.splitn(3, '\u{1f}');
    let channel = parts.next()?.to_owned();
    let kind = parts.next()?;
    let id = parts.next()?.to_owned();
    match kind {
        "c" => Some((channel, Target::Client(id))),
        "d" => Some((channel, Target::Device(id))),
        _ => None,
    }
}

/// `GET /push/channelSubscriptions`: filters channel, deviceId, clientId; deviceId and
/// clientId together only with `concatFilters=true` (then either matches).
pub(super) fn subscription_list(shared: &Shared, call: &Call) -> Result<Reply, AblyError> {
    let limit = paging::limit(&call.query)?;
    let channel = call.query.get("channel");
    let device_id = call.query.get("deviceId");
    let client_id = call.query.get("clientId");
    let concat = match call.query.get("concatFilters") {
        None | Some("false") => false,
        Some("true") => true,
        Some(other) => {
            return Err(AblyError::bad_param(format!(
                "Invalid value for parameter 'concatFilters': {other:?}; expected true or false"
            )))
        }
    };
    if device_id.is_some() && client_id.is_some() && !concat {
        return Err(AblyError::bad_param(
            "Invalid parameters: deviceId and clientId cannot be combined unless concatFilters=true",
        ));
    }
    let cursor = call.query.get("cursor");
    let lower = match cursor {
        Some(raw) => Bound::Excluded(
            parse_subscription_cursor(raw)
                .ok_or_else(|| AblyError::bad_param(format!("Invalid value for parameter 'cursor': {raw:?}")))?,
        ),
        None => Bound::Unbounded,
    };
    let target_matches = |target: &Target| match (device_id, client_id, target) {
        (None, None, _) => true,
        (Some(d), _, Target::Device(id)) if d == id => true,
        (_, Some(c), Target::Client(id)) if c == id => true,
        _ => false,
    };
    let mut items = Vec::new();
    let mut last = None;
    let mut more = false;
    {
        let state = shared.lock();
        let matching = state
            .subscriptions
            .range((lower, Bound::Unbounded))
            .filter(|(ch, _)| passes(channel, Some(ch)))
            .filter(|(_, target)| target_matches(target));
        for (ch, target) in matching {
            if items.len() == limit {
                more = true;
                break;
            }
            items.push(subscription_val(ch, target));
            last = Some(subscription_cursor(ch, target));
        }
    }
    let next = last.filter(|_| more);
    let mut base = vec![("limit", limit.to_string())];
    for (key, value) in [("channel", channel), ("deviceId", device_id), ("clientId", client_id)] {
        if let Some(v) = value {
            base.push((key, v.to_owned()));
        }
    }
    if concat {
        base.push(("concatFilters", "true".to_owned()));
    }
    let link = call.links(base).header(cursor, next.as_deref());
    Ok(Reply::page(items, link))
}

/// `DELETE /push/channelSubscriptions`: by deviceId or clientId, on one channel or (no
/// `channel`) on all of them.
pub(super) fn subscription_delete(shared: &Shared, call: &Call, caller: &Caller) -> Result<Reply, AblyError> {
    let channel = call.query.get("channel");
    let target = match (call.query.get("deviceId"), call.query.get("clientId")) {
        (Some(d), None) => Target::Device(d.to_owned()),
        (None, Some(c)) => Target::Client(c.to_owned()),
        _ => return Err(AblyError::bad_param("Invalid parameters: give exactly one of deviceId and clientId")),
    };
    let mut state = shared.lock();
    may_subscribe(caller, &state, channel.unwrap_or(ANY), &target)?;
    state.remove_push(&[], |(ch, t)| *t == target && passes(channel, Some(ch)));
    Ok(Reply::no_content())
}

/// `GET /push/channels`: channels with at least one push subscription.
pub(super) fn push_channels(shared: &Shared, call: &Call) -> Result<Reply, AblyError> {
    let limit = paging::limit(&call.query)?;
    let cursor = call.query.get("cursor");
    let mut items = Vec::new();
    let mut more = false;
    let mut last: Option<String> = None;
    {
        let state = shared.lock();
        for (channel, _) in &state.subscriptions {
            if cursor.is_some_and(|c| channel.as_str() <= c) || last.as_deref() == Some(channel) {
                continue;
            }
            if items.len() == limit {
                more = true;
                break;
            }
            items.push(Val::str(channel.clone()));
            last = Some(channel.clone());
        }
    }
    let next = last.filter(|_| more);
    let link = call.links(vec![("limit", limit.to_string())]).header(cursor, next.as_deref());
    Ok(Reply::page(items, link))
}

/// `POST /push/publish`: validates the recipient and payload, delivers to the matching
/// devices, and records the push (log and stats).
pub(super) fn publish(shared: &Shared, call: &Call) -> Result<Reply, AblyError> {
    let body = call.body()?;
    if !body.is_map() {
        return Err(AblyError::new(400, 40001, "Invalid request body: expected {recipient, notification, data}"));
    }
    let recipient = body
        .field("recipient")
        .filter(|r| r.is_map())
        .ok_or_else(|| AblyError::bad_param("Invalid push publish: recipient object is required"))?;
    for key in ["notification", "data", "apns", "fcm", "web"] {
        if body.field(key).is_some_and(|v| !v.is_map()) {
            return Err(AblyError::bad_param(format!("Invalid push publish: {key} must be an object")));
        }
    }
    if ["notification", "data", "apns", "fcm", "web"].iter().all(|k| body.field(k).is_none()) {
        return Err(AblyError::bad_param("Invalid push publish: a notification or data payload is required"));
    }
    enum To {
        Device(String),
        Client(String),
        Direct,
    }
    let to = if let Some(id) = opt_str(recipient, "deviceId", "recipient")? {
        To::Device(id.to_owned())
    } else if let Some(client) = opt_str(recipient, "clientId", "recipient")? {
        To::Client(client.to_owned())
    } else if recipient.field("transportType").is_some() {
        check_device_recipient(recipient)?;
        To::Direct
    } else {
        return Err(AblyError::bad_param("Invalid push publish: recipient needs deviceId, clientId or transportType"));
    };
    let title = body.field("notification").and_then(|n| n.field("title")).and_then(Val::as_str).map(str::to_owned);
    let mut state = shared.lock();
    let (device_ids, attempted, failed) = match to {
        To::Device(id) if state.devices.contains_key(&id) => (vec![id], 1, 0),
        // Unknown device: accepted (delivery is asynchronous at Ably) but it fails.
        To::Device(_) => (Vec::new(), 1, 1),
        To::Client(client) => {
            let ids: Vec<String> = state
                .devices
                .values()
                .filter(|d| d.client_id.as_deref() == Some(client.as_str()))
                .map(|d| d.id.clone())
                .collect();
            let n = ids.len() as u64;
            (ids, n, 0)
        }
        To::Direct => (Vec::new(), 1, 0),
    };
    let minute = state.stats.minute(call.now);
    minute.add(m::PUSH_DIRECT, 1);
    minute.add(m::PUSH_ALL, attempted);
    minute.add(m::PUSH_DELIVERED, attempted - failed);
    minute.add(m::PUSH_FAILED, failed);
    state.log_push(PushDelivery { timestamp: call.now, channel: None, device_ids, title });
    Ok(Reply::created(Val::Map(Vec::new())))
}
