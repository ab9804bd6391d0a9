//! Ably realtime against the simulator over a real WebSocket: connecting with a key or a token,
//! heartbeats, attaching, publishing and receiving across connections and to and from REST, a
//! capability refusal, MessagePack, and closing.

#![allow(clippy::unwrap_used, reason = "a test panics on failure")]

use base64::Engine as _;
use futures_util::{SinkExt, StreamExt};
use opsdeck::catalog::Service;
use opsdeck::sandbox::{self, credentials, Sandbox};
use serde_json::{json, Value};
use tokio_tungstenite::tungstenite::Message;

type Ws = tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

fn basic() -> String {
    format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(credentials::ABLY_KEY))
}

/// A REST call to the Ably simulator with the key: its status and its JSON answer.
async fn rest(sandbox: &Sandbox, method: reqwest::Method, path: &str, body: Option<Value>) -> (u16, Value) {
    let url = format!("{}{path}", sandbox.base_url(Service::Ably));
    let mut request = reqwest::Client::new().request(method, url).header("authorization", basic());
    if let Some(body) = body {
        request = request.header("content-type", "application/json").body(body.to_string());
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    (status, serde_json::from_slice(&response.bytes().await.unwrap()).unwrap_or(Value::Null))
}

/// Publishes `message` on `channel` over REST; checks it was taken.
async fn publish(sandbox: &Sandbox, channel: &str, message: Value) {
    let (status, answer) =
        rest(sandbox, reqwest::Method::POST, &format!("/channels/{channel}/messages"), Some(message)).await;
    assert_eq!(status, 201, "publishing never waits on a realtime subscriber: {answer}");
}

/// A token the key grants with `params` (a capability, a ttl).
async fn token(sandbox: &Sandbox, mut params: Value) -> String {
    params["keyName"] = json!(credentials::ABLY_KEY_NAME);
    let path = format!("/keys/{}/requestToken", credentials::ABLY_KEY_NAME);
    let (_, details) = rest(sandbox, reqwest::Method::POST, &path, Some(params)).await;
    details["token"].as_str().unwrap().to_owned()
}

async fn open(sandbox: &Sandbox, query: &str) -> Ws {
    let base = sandbox.base_url(Service::Ably).replace("http://", "ws://");
    let (ws, response) = tokio_tungstenite::connect_async(format!("{base}/?{query}")).await.unwrap();
    assert_eq!(response.status(), 101);
    ws
}

/// The next protocol message, JSON or MessagePack; `None` once the socket closes.
async fn next(ws: &mut Ws) -> Option<Value> {
    loop {
        let frame =
            tokio::time::timeout(std::time::Duration::from_secs(10), ws.next()).await.expect("a frame within 10 s");
        match frame? {
            Ok(Message::Text(text)) => return Some(serde_json::from_str(&text).unwrap()),
            Ok(Message::Binary(bytes)) => return Some(rmp_serde::from_slice(&bytes).unwrap()),
            Ok(Message::Close(_)) | Err(_) => return None,
            Ok(_) => {}
        }
    }
}

/// The next protocol message with `action`, skipping heartbeats.
async fn next_action(ws: &mut Ws, action: i64) -> Value {
    loop {
        let message = next(ws).await.expect("the socket is open");
        if message["action"] == action {
            return message;
        }
        assert_eq!(message["action"], 0, "expected action {action}, got {message}");
    }
}

async fn send(ws: &mut Ws, message: Value) {
    ws.send(Message::Text(message.to_string().into())).await.unwrap();
}

async fn connected(sandbox: &Sandbox, query: &str) -> (Ws, Value) {
    let mut ws = open(sandbox, query).await;
    let hello = next_action(&mut ws, 4).await;
    (ws, hello)
}

fn key_query() -> String {
    format!("key={}&format=json&v=3", credentials::ABLY_KEY)
}

#[tokio::test]
async fn a_key_connects_and_heartbeats_answer_with_their_id() {
    let sandbox = sandbox::start(0, 42).await.unwrap();
    let (mut ws, hello) = connected(&sandbox, &format!("{}&clientId=ada", key_query())).await;
    let details = &hello["connectionDetails"];
    assert!(hello["connectionId"].as_str().is_some_and(|id| !id.is_empty()), "{hello}");
    assert!(details["connectionKey"].as_str().unwrap().ends_with(hello["connectionId"].as_str().unwrap()));
    assert_eq!(details["maxMessageSize"], 65536);
    assert_eq!(details["clientId"], "ada");
    assert!(details["connectionStateTtl"].as_i64().unwrap() > 0 && details["maxIdleInterval"].as_i64().unwrap() > 0);
    send(&mut ws, json!({"action": 0, "id": "ping-1"})).await;
    assert_eq!(next_action(&mut ws, 0).await["id"], "ping-1");
    send(&mut ws, json!({"action": 7})).await;
    assert_eq!(next_action(&mut ws, 8).await["action"], 8);
    assert!(next(&mut ws).await.is_none(), "CLOSED ends the socket");
}

#[tokio::test]
async fn a_wrong_key_is_told_why_then_the_socket_closes() {
    let sandbox = sandbox::start(0, 42).await.unwrap();
    let mut ws = open(&sandbox, &format!("key={}:wrong&format=json", credentials::ABLY_KEY_NAME)).await;
    let error = next(&mut ws).await.unwrap();
    assert_eq!((error["action"].as_i64(), error["error"]["code"].as_i64()), (Some(9), Some(40101)), "{error}");
    assert!(next(&mut ws).await.is_none());
}

#[tokio::test]
async fn messages_reach_other_connections_and_rest_both_ways() {
    let sandbox = sandbox::start(0, 42).await.unwrap();
    let (mut reader, _) = connected(&sandbox, &key_query()).await;
    let (mut writer, hello) = connected(&sandbox, &key_query()).await;
    send(&mut reader, json!({"action": 10, "channel": "rt-room"})).await;
    let attached = next_action(&mut reader, 11).await;
    assert_eq!(attached["channel"], "rt-room");
    assert_ne!(attached["flags"].as_i64().unwrap() & (1 << 18), 0, "subscribe granted: {attached}");

    send(&mut writer, json!({"action": 15, "channel": "rt-room", "msgSerial": 0, "messages": [{"name": "greeting", "data": "hello"}]})).await;
    let ack = next_action(&mut writer, 1).await;
    assert_eq!((ack["msgSerial"].as_i64(), ack["count"].as_i64()), (Some(0), Some(1)));
    let delivered = next_action(&mut reader, 15).await;
    let message = &delivered["messages"][0];
    let writer_id = hello["connectionId"].as_str().unwrap();
    assert_eq!((message["name"].as_str(), message["data"].as_str()), (Some("greeting"), Some("hello")));
    assert_eq!(message["connectionId"], writer_id);
    assert_eq!(message["id"], format!("{writer_id}:0:0"));

    // What a connection published is in the REST history.
    let (_, history) = rest(&sandbox, reqwest::Method::GET, "/channels/rt-room/messages", None).await;
    assert_eq!(history[0]["id"], message["id"], "{history}");
    // And a REST publish reaches the subscriber.
    publish(&sandbox, "rt-room", json!({"name": "from-rest", "data": {"n": 1}})).await;
    let delivered = next_action(&mut reader, 15).await;
    assert_eq!(delivered["messages"][0]["name"], "from-rest");

    // Detached, the connection no longer receives the channel.
    send(&mut reader, json!({"action": 12, "channel": "rt-room"})).await;
    assert_eq!(next_action(&mut reader, 13).await["channel"], "rt-room");
    send(&mut writer, json!({"action": 15, "channel": "rt-room", "msgSerial": 1, "messages": [{"data": "unseen"}]}))
        .await;
    next_action(&mut writer, 1).await;
    send(&mut reader, json!({"action": 0, "id": "after"})).await;
    assert_eq!(next_action(&mut reader, 0).await["id"], "after", "no MESSAGE came before the heartbeat");
}

#[tokio::test]
async fn a_subscribe_only_token_is_refused_a_publish_with_nack_40160() {
    let sandbox = sandbox::start(0, 42).await.unwrap();
    let capability = json!({"watch": ["subscribe"]}).to_string();
    let token = token(&sandbox, json!({"capability": capability})).await;
    let (mut ws, _) = connected(&sandbox, &format!("access_token={token}&format=json")).await;
    send(&mut ws, json!({"action": 10, "channel": "watch"})).await;
    let attached = next_action(&mut ws, 11).await;
    assert_eq!(attached["flags"].as_i64().unwrap() & (1 << 17), 0, "no publish mode: {attached}");
    send(&mut ws, json!({"action": 15, "channel": "watch", "msgSerial": 0, "messages": [{"data": "x"}]})).await;
    let nack = next_action(&mut ws, 2).await;
    assert_eq!((nack["msgSerial"].as_i64(), nack["error"]["code"].as_i64()), (Some(0), Some(40160)), "{nack}");
    // A channel outside the capability cannot be attached at all.
    send(&mut ws, json!({"action": 10, "channel": "elsewhere"})).await;
    let error = next_action(&mut ws, 9).await;
    assert_eq!((error["channel"].as_str(), error["error"]["code"].as_i64()), (Some("elsewhere"), Some(40160)));
}

#[tokio::test]
async fn msgpack_connections_get_binary_frames() {
    let sandbox = sandbox::start(0, 42).await.unwrap();
    let mut ws = open(&sandbox, &format!("key={}&format=msgpack", credentials::ABLY_KEY)).await;
    let frame = tokio::time::timeout(std::time::Duration::from_secs(10), ws.next()).await.unwrap().unwrap().unwrap();
    let Message::Binary(bytes) = frame else { panic!("a binary frame, not {frame:?}") };
    let hello: Value = rmp_serde::from_slice(&bytes).unwrap();
    assert_eq!(hello["action"], 4);
    let attach = rmp_serde::to_vec_named(&json!({"action": 10, "channel": "packed"})).unwrap();
    ws.send(Message::Binary(attach.into())).await.unwrap();
    assert_eq!(next_action(&mut ws, 11).await["channel"], "packed");
}

#[tokio::test]
async fn a_plain_get_of_the_realtime_root_is_refused_in_ablys_shape() {
    let sandbox = sandbox::start(0, 42).await.unwrap();
    let response =
        reqwest::get(format!("{}/?key={}", sandbox.base_url(Service::Ably), credentials::ABLY_KEY)).await.unwrap();
    assert_eq!(response.status(), 400);
    let body: Value = serde_json::from_slice(&response.bytes().await.unwrap()).unwrap();
    assert_eq!(body["error"]["code"], 40000, "{body}");
}

/// A web page's socket (a browser sends its `Origin`) is refused before it opens, as a page's
/// HTTP request is: no site can drive the simulator through a visitor's browser.
#[tokio::test]
async fn a_web_pages_socket_is_refused_before_it_opens() {
    use tokio_tungstenite::tungstenite::client::IntoClientRequest as _;
    let sandbox = sandbox::start(0, 42).await.unwrap();
    let base = sandbox.base_url(Service::Ably).replace("http://", "ws://");
    let mut request = format!("{base}/?{}", key_query()).into_client_request().unwrap();
    request.headers_mut().insert("origin", "https://evil.example".parse().unwrap());
    let error = tokio_tungstenite::connect_async(request).await.unwrap_err();
    let tokio_tungstenite::tungstenite::Error::Http(response) = error else { panic!("refused over HTTP: {error}") };
    assert_eq!(response.status(), 403);
}

/// A subscriber that stops reading is disconnected once what waits for it passes its budget
/// (4 MiB in the simulator, whatever the kernel's buffers hold besides), instead of the sandbox
/// holding every message published meanwhile.
#[tokio::test]
async fn a_subscriber_that_stops_reading_is_disconnected_not_buffered() {
    let sandbox = sandbox::start(0, 42).await.unwrap();
    let (mut stalled, _) = connected(&sandbox, &key_query()).await;
    send(&mut stalled, json!({"action": 10, "channel": "firehose"})).await;
    next_action(&mut stalled, 11).await;
    // 40 MB published while the subscriber reads nothing: far past its budget and any buffers.
    let data = "x".repeat(60_000);
    const PUBLISHES: usize = 680;
    for _ in 0..PUBLISHES {
        publish(&sandbox, "firehose", json!({"data": data})).await;
    }
    // Reading again: what was already on its way arrives, then the socket ends.
    let mut received = 0;
    while let Some(message) = next(&mut stalled).await {
        if message["action"] == 15 {
            received += 1;
        }
    }
    assert!(received < PUBLISHES, "the socket ended after {received} of {PUBLISHES} messages");
}

/// Presence over realtime: a member entered on one connection is in the SYNC another gets when
/// it attaches and in the REST presence set; updates and leaves reach presence subscribers, and
/// a connection that ends takes its members with it.
#[tokio::test]
async fn presence_enters_syncs_updates_and_leaves_with_its_connection() {
    let sandbox = sandbox::start(0, 42).await.unwrap();
    let (mut ada, _) = connected(&sandbox, &format!("{}&clientId=ada", key_query())).await;
    send(&mut ada, json!({"action": 10, "channel": "lobby"})).await;
    next_action(&mut ada, 11).await;
    send(
        &mut ada,
        json!({"action": 14, "channel": "lobby", "msgSerial": 0, "presence": [{"action": 2, "data": "here"}]}),
    )
    .await;
    // Attached to the channel's presence, Ada sees her own entry, then its ACK.
    assert_eq!(next_action(&mut ada, 14).await["presence"][0]["action"], 2);
    assert_eq!(next_action(&mut ada, 1).await["msgSerial"], 0);

    let (mut bob, _) = connected(&sandbox, &format!("{}&clientId=bob", key_query())).await;
    send(&mut bob, json!({"action": 10, "channel": "lobby"})).await;
    let attached = next_action(&mut bob, 11).await;
    assert_eq!(attached["flags"].as_i64().unwrap() & 1, 1, "HAS_PRESENCE: {attached}");
    let sync = next_action(&mut bob, 16).await;
    assert_eq!(sync["channelSerial"].as_str().and_then(|s| s.split_once(':')).map(|(_, cursor)| cursor), Some(""));
    let members: Vec<(&str, &str, i64)> = sync["presence"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m["clientId"].as_str().unwrap(), m["data"].as_str().unwrap(), m["action"].as_i64().unwrap()))
        .collect();
    assert_eq!(members, [("ada", "here", 1)]);
    let (_, listed) = rest(&sandbox, reqwest::Method::GET, "/channels/lobby/presence", None).await;
    assert_eq!(listed.as_array().map(|m| m.len()), Some(1), "{listed}");
    assert_eq!(listed[0]["clientId"], "ada");

    send(
        &mut ada,
        json!({"action": 14, "channel": "lobby", "msgSerial": 1, "presence": [{"action": 4, "data": "busy"}]}),
    )
    .await;
    let update = next_action(&mut bob, 14).await;
    assert_eq!(
        (update["presence"][0]["action"].as_i64(), update["presence"][0]["data"].as_str()),
        (Some(4), Some("busy"))
    );
    // Ada's connection ends: Bob is told she left.
    send(&mut ada, json!({"action": 7})).await;
    let left = next_action(&mut bob, 14).await;
    assert_eq!(
        (left["presence"][0]["action"].as_i64(), left["presence"][0]["clientId"].as_str()),
        (Some(3), Some("ada"))
    );
}

#[tokio::test]
async fn entering_presence_needs_a_client_id() {
    let sandbox = sandbox::start(0, 42).await.unwrap();
    let (mut anonymous, _) = connected(&sandbox, &key_query()).await;
    send(&mut anonymous, json!({"action": 14, "channel": "lobby", "msgSerial": 0, "presence": [{"action": 2}]})).await;
    let nack = next_action(&mut anonymous, 2).await;
    assert_eq!(nack["error"]["code"], 91000, "{nack}");
    // Named in the event, a client id the key may take is enough.
    send(
        &mut anonymous,
        json!({"action": 14, "channel": "lobby", "msgSerial": 1, "presence": [{"action": 2, "clientId": "cy"}]}),
    )
    .await;
    assert_eq!(next_action(&mut anonymous, 1).await["msgSerial"], 1);
}

/// A connection whose socket drops is resumed with its key: the same connection id, and its
/// channel, attached again with the last `channelSerial` it saw, continues with what was
/// published meanwhile, once and in order.
#[tokio::test]
async fn a_resumed_connection_gets_what_was_published_while_it_was_away_once_in_order() {
    let sandbox = sandbox::start(0, 42).await.unwrap();
    let publish = |name: &'static str| publish(&sandbox, "away", json!({"name": name, "data": name}));
    let (mut ws, hello) = connected(&sandbox, &key_query()).await;
    let (id, key) =
        (hello["connectionId"].clone(), hello["connectionDetails"]["connectionKey"].as_str().unwrap().to_owned());
    send(&mut ws, json!({"action": 10, "channel": "away"})).await;
    next_action(&mut ws, 11).await;
    publish("one").await;
    let seen = next_action(&mut ws, 15).await["channelSerial"].as_str().unwrap().to_owned();
    // The socket drops without a CLOSE; two messages are published while it is gone.
    drop(ws);
    publish("two").await;
    publish("three").await;

    let (mut ws, hello) = connected(&sandbox, &format!("{}&resume={key}", key_query())).await;
    assert_eq!(hello["connectionId"], id, "the same connection: {hello}");
    assert!(hello.get("error").is_none(), "{hello}");
    send(&mut ws, json!({"action": 10, "channel": "away", "channelSerial": seen, "flags": 1 << 5})).await;
    let attached = next_action(&mut ws, 11).await;
    assert_ne!(attached["flags"].as_i64().unwrap() & (1 << 2), 0, "RESUMED: {attached}");
    let missed = next_action(&mut ws, 15).await;
    let names: Vec<&str> = missed["messages"].as_array().unwrap().iter().map(|m| m["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["two", "three"]);
    publish("four").await;
    let live = next_action(&mut ws, 15).await;
    assert_eq!(live["messages"][0]["name"], "four", "then live, nothing twice: {live}");
}

#[tokio::test]
async fn an_unknown_resume_key_starts_a_new_connection_and_says_so() {
    let sandbox = sandbox::start(0, 42).await.unwrap();
    let (_, hello) = connected(&sandbox, &format!("{}&resume=nothing!here", key_query())).await;
    assert_eq!(hello["error"]["code"], 80008, "{hello}");
    assert!(hello["connectionId"].as_str().is_some_and(|id| !id.is_empty()));
}

#[tokio::test]
async fn rewind_sends_the_last_messages_after_attached() {
    let sandbox = sandbox::start(0, 42).await.unwrap();
    for n in 1..=3 {
        publish(&sandbox, "rewound", json!({"name": format!("m{n}")})).await;
    }
    let (mut ws, _) = connected(&sandbox, &key_query()).await;
    send(&mut ws, json!({"action": 10, "channel": "rewound", "params": {"rewind": "2"}})).await;
    next_action(&mut ws, 11).await;
    let backlog = next_action(&mut ws, 15).await;
    let names: Vec<&str> =
        backlog["messages"].as_array().unwrap().iter().map(|m| m["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["m2", "m3"]);
}

/// The control port drops every realtime socket as a network blip would: clients see their
/// socket end without a CLOSE, and resume.
#[tokio::test]
async fn the_control_port_drops_sockets_and_their_connections_resume() {
    let sandbox = sandbox::start(0, 42).await.unwrap();
    let (mut ws, hello) = connected(&sandbox, &key_query()).await;
    let key = hello["connectionDetails"]["connectionKey"].as_str().unwrap().to_owned();
    let answer =
        reqwest::Client::new().post(format!("{}/ably/realtime/drop", sandbox.control_url())).send().await.unwrap();
    let body: Value = serde_json::from_slice(&answer.bytes().await.unwrap()).unwrap();
    assert_eq!(body["dropped"], 1, "{body}");
    assert!(next(&mut ws).await.is_none(), "the socket ended without a CLOSED");
    let (_, resumed) = connected(&sandbox, &format!("{}&resume={key}", key_query())).await;
    assert_eq!(resumed["connectionId"], hello["connectionId"], "{resumed}");
}

/// Ably's limits: 200 channels attached on one connection (90010 for the next), 200 members in
/// one channel's presence set (91003).
#[tokio::test]
async fn the_channel_and_presence_limits_are_ablys() {
    let sandbox = sandbox::start(0, 42).await.unwrap();
    let (mut ws, _) = connected(&sandbox, &key_query()).await;
    for n in 0..200 {
        send(&mut ws, json!({"action": 10, "channel": format!("many-{n}")})).await;
        next_action(&mut ws, 11).await;
    }
    send(&mut ws, json!({"action": 10, "channel": "one-too-many"})).await;
    let refused = next_action(&mut ws, 9).await;
    assert_eq!((refused["channel"].as_str(), refused["error"]["code"].as_i64()), (Some("one-too-many"), Some(90010)));
    // Detaching one makes room.
    send(&mut ws, json!({"action": 12, "channel": "many-0"})).await;
    next_action(&mut ws, 13).await;
    send(&mut ws, json!({"action": 10, "channel": "one-too-many"})).await;
    next_action(&mut ws, 11).await;

    let (mut crowd, _) = connected(&sandbox, &key_query()).await;
    let members: Vec<Value> = (0..200).map(|n| json!({"action": 2, "clientId": format!("m{n}")})).collect();
    send(&mut crowd, json!({"action": 14, "channel": "crowded", "msgSerial": 0, "presence": members})).await;
    assert_eq!(next_action(&mut crowd, 1).await["msgSerial"], 0);
    send(
        &mut crowd,
        json!({"action": 14, "channel": "crowded", "msgSerial": 1, "presence": [{"action": 2, "clientId": "late"}]}),
    )
    .await;
    let nack = next_action(&mut crowd, 2).await;
    assert_eq!(nack["error"]["code"], 91003, "{nack}");
}

/// A token renewed in place (AUTH) keeps the connection; a token that expires ends it with
/// DISCONNECTED 40142, which the client answers by resuming with a new one.
#[tokio::test]
async fn tokens_are_renewed_in_place_and_an_expired_one_disconnects() {
    let sandbox = sandbox::start(0, 42).await.unwrap();
    let token = |ttl: i64| token(&sandbox, json!({"ttl": ttl}));
    let (mut ws, hello) = connected(&sandbox, &format!("access_token={}&format=json", token(3_600_000).await)).await;
    send(&mut ws, json!({"action": 17, "auth": {"accessToken": token(3_600_000).await}})).await;
    let again = next_action(&mut ws, 4).await;
    assert_eq!(again["connectionId"], hello["connectionId"], "the same connection: {again}");
    send(&mut ws, json!({"action": 17, "auth": {"accessToken": "not-a-token"}})).await;
    assert_eq!(next_action(&mut ws, 9).await["error"]["statusCode"], 401);
    assert!(next(&mut ws).await.is_none());

    let (mut short, _) = connected(&sandbox, &format!("access_token={}&format=json", token(1_000).await)).await;
    let disconnected = next_action(&mut short, 6).await;
    assert_eq!(disconnected["error"]["code"], 40142, "{disconnected}");
}

/// A client that sends nothing, not even a pong to the server's pings, for two heartbeat
/// intervals (30 s) is told DISCONNECTED (80003) and its socket ends; its connection is kept for
/// resuming. The client here reads raw bytes, so nothing answers the pings for it.
#[tokio::test]
async fn a_client_that_answers_nothing_is_disconnected_after_two_heartbeat_intervals() {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let sandbox = sandbox::start(0, 42).await.unwrap();
    let address = sandbox.base_url(Service::Ably).replace("http://", "");
    let mut stream = tokio::net::TcpStream::connect(&address).await.unwrap();
    let handshake = format!(
        "GET /?key={}&format=json HTTP/1.1\r\nHost: {address}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
        credentials::ABLY_KEY
    );
    stream.write_all(handshake.as_bytes()).await.unwrap();
    let mut seen = Vec::new();
    let mut buffer = [0u8; 4096];
    let text = loop {
        let read = tokio::time::timeout(std::time::Duration::from_secs(60), stream.read(&mut buffer))
            .await
            .expect("DISCONNECTED within 60 s")
            .unwrap();
        seen.extend_from_slice(&buffer[..read]);
        let text = String::from_utf8_lossy(&seen).into_owned();
        if read == 0 || text.contains("\"action\":6") {
            break text;
        }
    };
    assert!(text.contains("\"action\":4"), "CONNECTED came first: {text}");
    assert!(text.contains("\"action\":6") && text.contains("80003"), "{text}");
}
