//! The Coinbase Exchange WebSocket feed (`wss://ws-feed.exchange.coinbase.com`), served at the
//! root of the simulator's port (`ws://127.0.0.1:7705`) on the sandbox's socket layer
//! (`sandbox/ws.rs`): a socket's subscribe and unsubscribe messages read and checked here, in
//! the exchange's words; the channels' messages come from the hub (`hub.rs`), fed by the
//! matching engine (`journal.rs`).
//!
//! Rules, as the exchange has them: subscribe within 5 seconds or the socket closes; channels
//! as names or `{name, product_ids}`, with the top-level `product_ids` added to each; a product
//! that does not exist is one `Failed to subscribe` per channel and the rest subscribes;
//! `level2`, `full` and `user` need the signed fields (`key`, `signature` over
//! `timestamp + GET + /users/self/verify`, `passphrase`, `timestamp`); at most 10 messages a
//! second from a client, 1,000 at once, past which it is disconnected (`ErrSlowRead`). No
//! mistake of a client's closes the socket but those.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::extract::Request;
use axum::response::{IntoResponse, Response};
use serde_json::{Map, Value};

use super::auth::Signed;
use super::catalog;
use super::errors::CbError;
use super::events::{self, Channel, Inbox};
use super::feed_wire as fw;
use super::Shared;
use crate::sandbox::clock;
use crate::sandbox::ws::{Incoming, Outbox, Refused, Socket, WsLimits};

/// The socket limits of the feed. A subscribe is a few hundred bytes; what waits to be sent
/// to one client is bounded, past which it is too slow and loses its socket.
pub(super) const LIMITS: WsLimits =
    WsLimits { max_message: 64 * 1024, queue_bytes: 8 << 20, max_sockets: 1024, write_stall: Duration::from_secs(30) };

/// How long a socket may stay without a subscription.
const SUBSCRIBE_WITHIN: Duration = Duration::from_secs(5);
/// Messages from one client: a bucket of 1,000 refilled at 10 a second.
const BURST: f64 = 1000.0;
const PER_SECOND: f64 = 10.0;

const AUTH_REQUIRED: &str = "level2, level3, and full channels now require authentication. \
    https://docs.cloud.coinbase.com/exchange/docs/websocket-auth";

/// Whether a request is the feed's: a WebSocket handshake at the root.
pub(super) fn is_feed(request: &Request) -> bool {
    request.uri().path() == "/"
        && request
            .headers()
            .get(axum::http::header::UPGRADE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.eq_ignore_ascii_case("websocket"))
}

/// `GET /` with a WebSocket handshake: a feed connection.
pub(super) async fn connect(shared: Arc<Shared>, request: Request) -> Response {
    let conn = shared.feed.next_conn.fetch_add(1, Ordering::Relaxed);
    let session_shared = Arc::clone(&shared);
    let accepted = shared
        .feed
        .sockets
        .accept(request, move |socket| async move { session(&session_shared, socket, conn).await })
        .await;
    match accepted {
        Ok(response) => response,
        Err(Refused::NotWebSocket(reason)) => {
            CbError::bad_request(format!("Expected a WebSocket handshake: {reason}")).into_response()
        }
        Err(Refused::TooMany) => CbError::new(
            axum::http::StatusCode::TOO_MANY_REQUESTS,
            format!("too many feed connections: {} are open", LIMITS.max_sockets),
        )
        .into_response(),
    }
}

async fn session(shared: &Shared, mut socket: Socket, conn: u64) {
    let outbox = socket.outbox();
    let hub = shared.feed.hub.clone();
    let deadline = tokio::time::sleep(SUBSCRIBE_WITHIN);
    tokio::pin!(deadline);
    let mut subscribed = false;
    let mut bucket = (BURST, Instant::now());
    loop {
        let incoming = tokio::select! {
            incoming = socket.next() => incoming,
            () = &mut deadline, if !subscribed => {
                outbox.close(1008, "subscribe within 5 seconds");
                break;
            }
        };
        let text = match incoming {
            None => break,
            Some(Incoming::Text(text)) => text,
            // The exchange reads text frames; a binary one is read as its UTF-8.
            Some(Incoming::Binary(bytes)) => String::from_utf8_lossy(&bytes).into_owned(),
        };
        let (tokens, last) = &mut bucket;
        *tokens = (*tokens + last.elapsed().as_secs_f64() * PER_SECOND).min(BURST);
        *last = Instant::now();
        if *tokens < 1.0 {
            let _ = outbox.shared_text(&fw::error("ErrSlowRead", "more than 10 messages a second (1,000 at once)"));
            outbox.close(1008, "ErrSlowRead");
            break;
        }
        *tokens -= 1.0;
        match read(shared, &text, conn, &outbox) {
            Ok(request) => {
                subscribed |= !request.unsubscribe;
                if hub.send(Inbox::Subscribe(request)).is_err() {
                    break;
                }
            }
            Err(error) => {
                if outbox.shared_text(&error).is_err() {
                    break;
                }
            }
        }
    }
    let _ = hub.send(Inbox::Closed(conn));
}

/// A client's message as the hub's request, after sending it an error for each part refused
/// (an unknown product on one channel refuses that much); or the error that refuses all of it.
fn read(
    shared: &Shared,
    text: &str,
    conn: u64,
    outbox: &Outbox,
) -> Result<events::Request, axum::extract::ws::Utf8Bytes> {
    let message = match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(message)) => message,
        Ok(_) => return Err(fw::error("Failed to subscribe", "the message must be a JSON object")),
        Err(e) => return Err(fw::error("Malformed JSON", &e.to_string())),
    };
    let unsubscribe = match message.get("type").and_then(Value::as_str) {
        Some("subscribe") => false,
        Some("unsubscribe") => true,
        _ => {
            return Err(fw::error("Failed to subscribe", "type must be subscribe or unsubscribe"));
        }
    };
    let failed = if unsubscribe { "Failed to unsubscribe" } else { "Failed to subscribe" };
    let user = match signed(shared, &message) {
        Ok(user) => user,
        Err(reason) => return Err(fw::error("Authentication Failed", reason)),
    };
    let top = match product_list(message.get("product_ids")) {
        Ok(list) => list.unwrap_or_default(),
        Err(reason) => return Err(fw::error(failed, reason)),
    };
    let channels = match message.get("channels") {
        Some(Value::Array(list)) if !list.is_empty() => list,
        _ => return Err(fw::error(failed, "No channels provided")),
    };
    let mut masks = [0u32; Channel::COUNT];
    for entry in channels {
        let (name, own) = match entry {
            Value::String(name) => (name.as_str(), None),
            Value::Object(fields) => {
                let name = fields.get("name").and_then(Value::as_str).unwrap_or("");
                match product_list(fields.get("product_ids")) {
                    Ok(own) => (name, own),
                    Err(reason) => return Err(fw::error(failed, reason)),
                }
            }
            _ => return Err(fw::error(failed, "a channel is a name or {\"name\", \"product_ids\"}")),
        };
        let Some(channel) = Channel::parse(name) else {
            refuse(outbox, failed, &format!("{name} is not a valid channel"));
            continue;
        };
        if !unsubscribe && channel.needs_auth() && user.is_none() {
            let reason = if channel == Channel::User { "user channel requires authentication" } else { AUTH_REQUIRED };
            refuse(outbox, failed, reason);
            continue;
        }
        if channel.productless() {
            masks[channel as usize] = events::STATUS_BIT;
            continue;
        }
        // A channel's own list, with the top-level one added; an empty list of its own names
        // no product (the exchange refuses it as the product "").
        let mut names: Vec<&str> = top.clone();
        match &own {
            Some(list) if list.is_empty() => names.push(""),
            Some(list) => names.extend(list.iter().copied()),
            None => {}
        }
        if names.is_empty() {
            if unsubscribe {
                masks[channel as usize] = u32::MAX;
            } else {
                refuse(outbox, failed, &format!("You need to specify at least one product ID for channel {name}"));
            }
            continue;
        }
        for id in names {
            match catalog::product_index(id) {
                Some(product) => masks[channel as usize] |= events::bit(product),
                None => refuse(outbox, failed, &format!("{id} is not a valid product")),
            }
        }
    }
    Ok(events::Request { conn, outbox: outbox.clone(), unsubscribe, channels: masks, user })
}

fn refuse(outbox: &Outbox, message: &str, reason: &str) {
    let _ = outbox.shared_text(&fw::error(message, reason));
}

/// A list of product ids; `None` when absent.
fn product_list(value: Option<&Value>) -> Result<Option<Vec<&str>>, &'static str> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Array(items)) => items
            .iter()
            .map(|item| item.as_str().ok_or("product_ids must be a list of product ids"))
            .collect::<Result<Vec<&str>, _>>()
            .map(Some),
        Some(_) => Err("product_ids must be a list of product ids"),
    }
}

/// The user a signed subscribe is from; `None` when it is not signed; the reason when its
/// signature does not hold.
fn signed(shared: &Shared, message: &Map<String, Value>) -> Result<Option<usize>, &'static str> {
    let field = |name: &str| match message.get(name) {
        Some(Value::String(text)) => Some(text.clone()),
        // ccxt sends the timestamp as a number.
        Some(Value::Number(n)) => Some(n.to_string()),
        _ => None,
    };
    let (key, signature) = (field("key"), field("signature"));
    if key.is_none() && signature.is_none() {
        return Ok(None);
    }
    let (passphrase, timestamp) = (field("passphrase").unwrap_or_default(), field("timestamp").unwrap_or_default());
    let parts = Signed {
        key: key.as_deref().unwrap_or(""),
        passphrase: &passphrase,
        timestamp: &timestamp,
        signature: signature.as_deref().unwrap_or(""),
    };
    #[expect(clippy::cast_precision_loss, reason = "ms since the epoch fit an f64 exactly until the year 287,396")]
    let now_s = clock::wall_ms() as f64 / 1000.0;
    let caller = parts.check("GET", "/users/self/verify", b"", now_s)?;
    Ok(Some(shared.lock().user_of(caller.profile)))
}
