//! Router-level tests: requests go through the real axum router with `oneshot`, the way an SDK's
//! would arrive.

use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, Request, StatusCode};
use axum::Router;
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use http_body_util::BodyExt;
use serde_json::{json, Value};
use tower::ServiceExt;

use super::auth::sign_request;
use super::wire::Val;
use super::AblySimulator;
use crate::sandbox::credentials::{ABLY_KEY, ABLY_KEY_NAME};
use crate::sandbox::Simulator;

fn basic() -> String {
    format!("Basic {}", STANDARD.encode(ABLY_KEY))
}

struct Resp {
    status: StatusCode,
    headers: HeaderMap,
    body: Bytes,
}

impl Resp {
    fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&self.body)))
    }

    fn msgpack(&self) -> Val {
        rmp_serde::from_slice(&self.body).expect("msgpack body")
    }

    fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// The query of the `rel="next"` link, resolved the way ably-js does: same path, new query.
    fn next_uri(&self, path: &str) -> Option<String> {
        let link = self.header("link")?;
        link.split(", ").find_map(|part| {
            let (url, rel) = part.split_once(">; rel=\"")?;
            if rel.trim_end_matches('"') != "next" {
                return None;
            }
            let (_, query) = url.trim_start_matches('<').split_once('?')?;
            Some(format!("{path}?{query}"))
        })
    }
}

/// One request builder so tests read like the calls they make.
struct Req<'a> {
    method: &'a str,
    uri: String,
    headers: Vec<(&'static str, String)>,
    body: Vec<u8>,
}

fn req(method: &str, uri: impl Into<String>) -> Req<'_> {
    Req { method, uri: uri.into(), headers: vec![("authorization", basic())], body: Vec::new() }
}

impl Req<'_> {
    fn json(mut self, body: &Value) -> Self {
        self.body = serde_json::to_vec(body).expect("json");
        self.headers.push(("content-type", "application/json".into()));
        self
    }

    fn msgpack(mut self, body: &Val) -> Self {
        self.body = rmp_serde::to_vec(body).expect("msgpack");
        self.headers.push(("content-type", "application/x-msgpack".into()));
        self.headers.push(("accept", "application/x-msgpack".into()));
        self
    }

    fn header(mut self, name: &'static str, value: impl Into<String>) -> Self {
        self.headers.retain(|(n, _)| *n != name);
        self.headers.push((name, value.into()));
        self
    }

    fn no_auth(mut self) -> Self {
        self.headers.retain(|(n, _)| *n != "authorization");
        self
    }

    async fn send(self, router: &Router) -> Resp {
        let mut builder = Request::builder().method(self.method).uri(&self.uri);
        for (name, value) in &self.headers {
            builder = builder.header(*name, value);
        }
        let request = builder.body(Body::from(self.body)).expect("request");
        let response = router.clone().oneshot(request).await.expect("infallible");
        let status = response.status();
        let headers = response.headers().clone();
        let body = response.into_body().collect().await.expect("body").to_bytes();
        Resp { status, headers, body }
    }
}

fn setup() -> (AblySimulator, Router) {
    let sim = AblySimulator::new(&crate::sandbox::Platform::real_time(7));
    let router = sim.router();
    (sim, router)
}

/// Every page of a paginated GET, following `Link` next.
async fn all_pages(router: &Router, path: &str, query: &str) -> Vec<Value> {
    let mut uri = format!("{path}?{query}");
    let mut items = Vec::new();
    for _ in 0..500 {
        let resp = req("GET", uri.clone()).send(router).await;
        assert_eq!(resp.status, StatusCode::OK, "{}", String::from_utf8_lossy(&resp.body));
        items.extend(resp.json().as_array().expect("array").iter().cloned());
        match resp.next_uri(path) {
            Some(next) => uri = next,
            None => return items,
        }
    }
    panic!("paging never ended");
}

#[tokio::test]
async fn wrong_key_gets_ablys_401_body_and_headers() {
    let (_, router) = setup();
    let wrong = format!("Basic {}", STANDARD.encode("opsdeck.sandbox:nope"));
    let resp = req("GET", "/channels").header("authorization", wrong).send(&router).await;
    assert_eq!(resp.status, StatusCode::UNAUTHORIZED);
    assert_eq!(
        resp.json(),
        json!({"error": {"message": "Invalid credentials", "code": 40101, "statusCode": 401,
                         "href": "https://help.ably.io/error/40101"}})
    );
    assert_eq!(resp.header("x-ably-errorcode"), Some("40101"));
    assert_eq!(resp.header("x-ably-errormessage"), Some("Invalid credentials"));
    assert_eq!(resp.header("content-type"), Some("application/json"));

    // Unparseable credentials are a 400/40005; none at all a 401.
    let garbled = req("GET", "/stats").header("authorization", "Basic %%%").send(&router).await;
    assert_eq!(garbled.status, StatusCode::BAD_REQUEST);
    assert_eq!(garbled.json()["error"]["code"], 40005);
    let none = req("GET", "/stats").no_auth().send(&router).await;
    assert_eq!(none.status, StatusCode::UNAUTHORIZED);
    assert_eq!(none.json()["error"]["code"], 40101);

    // In MessagePack when the client asked for it.
    let packed = req("GET", "/channels")
        .header("authorization", "Bearer bm90LWEtdG9rZW4=")
        .header("accept", "application/x-msgpack")
        .send(&router)
        .await;
    assert_eq!(packed.status, StatusCode::UNAUTHORIZED);
    assert_eq!(packed.header("content-type"), Some("application/x-msgpack"));
    let body = packed.msgpack();
    let error = body.field("error").expect("error");
    assert_eq!(error.field("code"), Some(&Val::Int(40101)));
    assert_eq!(error.field("statusCode"), Some(&Val::Int(401)));
}

#[tokio::test]
async fn bad_parameters_are_40003_naming_the_parameter() {
    let (_, router) = setup();
    for (uri, param) in [
        ("/channels/chat:lobby/messages?limit=1001", "limit"),
        ("/channels/chat:lobby/messages?limit=0", "limit"),
        ("/channels/chat:lobby/messages?direction=sideways", "direction"),
        ("/channels/chat:lobby/messages?start=soon", "start"),
        ("/channels/chat:lobby/messages?start=20&end=10", "start"),
        ("/channels?limit=5000", "limit"),
        ("/stats?unit=week", "unit"),
        ("/push/deviceRegistrations?limit=1001", "limit"),
    ] {
        let resp = req("GET", uri).send(&router).await;
        assert_eq!(resp.status, StatusCode::BAD_REQUEST, "{uri}");
        let body = resp.json();
        assert_eq!(body["error"]["code"], 40003, "{uri}");
        assert_eq!(body["error"]["statusCode"], 400, "{uri}");
        let message = body["error"]["message"].as_str().expect("message");
        assert!(message.contains(&format!("'{param}'")), "{uri}: {message}");
    }
}

#[tokio::test]
async fn unknown_routes_time_and_methods() {
    let (_, router) = setup();
    let resp = req("GET", "/nope").send(&router).await;
    assert_eq!(resp.status, StatusCode::NOT_FOUND);
    assert_eq!(resp.json()["error"]["code"], 40400);
    let resp = req("DELETE", "/time").send(&router).await;
    assert_eq!(resp.status, StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(resp.json()["error"]["code"], 40500);
    let time = req("GET", "/time").no_auth().send(&router).await;
    assert_eq!(time.status, StatusCode::OK);
    let now = time.json()[0].as_i64().expect("ms");
    assert!(now > 1_700_000_000_000);
    let packed = req("GET", "/time?format=msgpack").no_auth().send(&router).await;
    assert!(matches!(packed.msgpack(), Val::Arr(ref v) if v.len() == 1));
}

#[tokio::test]
async fn publish_then_history_both_directions_and_time_ranges() {
    let (_, router) = setup();
    let path = "/channels/demo%3Achan/messages";
    let first = req("POST", path).json(&json!({"name": "greeting", "data": "hello"})).send(&router).await;
    assert_eq!(first.status, StatusCode::CREATED);
    let result = first.json();
    assert_eq!(result["channel"], "demo:chan");
    assert_eq!(result["serials"].as_array().map(Vec::len), Some(1));
    assert!(result["messageId"].as_str().is_some());

    let batch = req("POST", path)
        .json(&json!([
            {"name": "n1", "data": {"a": 1}},
            {"name": "n2", "data": "two", "clientId": "ana"},
            {"name": "n3", "data": "three", "extras": {"headers": {"k": "v"}}}
        ]))
        .send(&router)
        .await;
    assert_eq!(batch.status, StatusCode::CREATED);
    assert_eq!(batch.json()["serials"].as_array().map(Vec::len), Some(3));

    let newest = req("GET", path).send(&router).await.json();
    let names: Vec<&str> = newest.as_array().expect("array").iter().map(|m| m["name"].as_str().unwrap_or("")).collect();
    assert_eq!(names, ["n3", "n2", "n1", "greeting"]);
    let n2 = &newest[1];
    assert_eq!(n2["clientId"], "ana");
    assert!(n2.get("encoding").is_none(), "no encoding key when empty");
    assert_eq!(newest[2]["data"], json!({"a": 1}));
    assert_eq!(newest[0]["extras"]["headers"]["k"], "v");
    let id = newest[3]["id"].as_str().expect("id");
    assert_eq!(id.split(':').count(), 3, "server ids are conn:serial:index, got {id}");

    let oldest = req("GET", format!("{path}?direction=forwards&limit=2")).send(&router).await;
    let body = oldest.json();
    assert_eq!(body[0]["name"], "greeting");
    assert_eq!(body[1]["name"], "n1");
    assert!(oldest.next_uri(path).is_some());

    // start/end are inclusive; ms and ISO 8601 both work.
    let ts = newest[3]["timestamp"].as_i64().expect("timestamp");
    let in_range = req("GET", format!("{path}?start={ts}&end={ts}")).send(&router).await.json();
    assert!(!in_range.as_array().expect("array").is_empty());
    let before = req("GET", format!("{path}?end={}", ts - 1)).send(&router).await.json();
    assert_eq!(before, json!([]));
    let iso = |ms: i64| {
        time::OffsetDateTime::from_unix_timestamp_nanos(i128::from(ms) * 1_000_000)
            .expect("time")
            .format(&time::format_description::well_known::Rfc3339)
            .expect("format")
    };
    let iso_all = req(
        "GET",
        format!("{path}?start={}&end={}", iso(ts - 60_000).replace('+', "%2B"), iso(ts + 600_000).replace('+', "%2B")),
    )
    .send(&router)
    .await;
    assert_eq!(iso_all.status, StatusCode::OK);
    assert_eq!(iso_all.json().as_array().map(Vec::len), Some(4));
    let iso_none = req("GET", format!("{path}?end={}", iso(ts - 60_000))).send(&router).await.json();
    assert_eq!(iso_none, json!([]));

    // The new channel is now listed.
    let channels = req("GET", "/channels?by=id&prefix=demo").send(&router).await.json();
    assert_eq!(channels, json!(["demo:chan"]));
}

#[tokio::test]
async fn idempotent_publish_by_client_id() {
    let (_, router) = setup();
    let path = "/channels/idem/messages";
    let msg = json!([{"id": "Abc123Def456:0", "name": "x", "data": "once"}]);
    let a = req("POST", path).json(&msg).send(&router).await.json();
    let b = req("POST", path).json(&msg).send(&router).await.json();
    assert_eq!(a["serials"], b["serials"]);
    assert_eq!(a["messageId"], "Abc123Def456");
    let history = req("GET", path).send(&router).await.json();
    assert_eq!(history.as_array().map(Vec::len), Some(1));
    assert_eq!(history[0]["id"], "Abc123Def456:0");
}

#[tokio::test]
async fn paging_follows_link_next_in_both_directions() {
    let (_, router) = setup();
    let path = "/channels/orders%3Aeu/messages";
    let everything = req("GET", format!("{path}?limit=1000")).send(&router).await.json();
    let total = everything.as_array().expect("array").len();
    assert!(total >= 20);
    let ids =
        |items: &[Value]| -> Vec<String> { items.iter().map(|m| m["id"].as_str().unwrap_or("").to_owned()).collect() };
    let backwards = all_pages(&router, path, "limit=7").await;
    assert_eq!(ids(&backwards), ids(everything.as_array().expect("array")));
    let forwards = all_pages(&router, path, "limit=9&direction=forwards").await;
    let mut reversed = ids(&forwards);
    reversed.reverse();
    assert_eq!(reversed, ids(&backwards));
    let timestamps: Vec<i64> = forwards.iter().map(|m| m["timestamp"].as_i64().unwrap_or(0)).collect();
    assert!(timestamps.windows(2).all(|w| w[0] <= w[1]));

    // Link header form: one header, ./<segment>?query, first and current always present.
    let page = req("GET", format!("{path}?limit=3")).send(&router).await;
    let link = page.header("link").expect("link");
    assert!(link.starts_with("<./messages?"), "{link}");
    assert!(link.contains("rel=\"first\"") && link.contains("rel=\"current\""));
    assert!(link.contains("rel=\"next\""));

    // Channel enumeration, devices and stats page too.
    let channels = all_pages(&router, "/channels", "limit=5&by=id").await;
    assert_eq!(channels.len(), 12);
    let devices = all_pages(&router, "/push/deviceRegistrations", "limit=3").await;
    assert_eq!(devices.len(), 8);
    let presence = all_pages(&router, "/channels/chat%3Alobby/presence/history", "limit=2").await;
    assert!(presence.len() >= 7);
    let stats = all_pages(&router, "/stats", "limit=50&unit=hour").await;
    assert!(stats.len() > 24 * 30);
    let single = req("GET", "/channels/chat%3Alobby/presence/history?limit=2").send(&router).await;
    assert!(single.header("link").expect("link").starts_with("<./history?"));
}

#[tokio::test]
async fn msgpack_requests_and_binary_data() {
    let (_, router) = setup();
    let path = "/channels/bin/messages";
    let frame = vec![0u8, 1, 2, 254, 255];
    let body = Val::Arr(vec![Val::map([("name", Val::str("frame")), ("data", Val::Bin(frame.clone()))])]);
    let resp = req("POST", path).msgpack(&body).send(&router).await;
    assert_eq!(resp.status, StatusCode::CREATED);
    assert_eq!(resp.header("content-type"), Some("application/x-msgpack"));
    assert!(matches!(resp.msgpack().field("serials"), Some(Val::Arr(s)) if s.len() == 1));

    // Base64 over JSON is stored as bytes too.
    let via_json = req("POST", path)
        .json(&json!({"name": "b64", "data": STANDARD.encode([9u8, 8, 7]), "encoding": "base64"}))
        .send(&router)
        .await;
    assert_eq!(via_json.status, StatusCode::CREATED);

    let packed = req("GET", path).header("accept", "application/x-msgpack").send(&router).await;
    assert_eq!(packed.header("content-type"), Some("application/x-msgpack"));
    let Val::Arr(items) = packed.msgpack() else {
        panic!("array expected");
    };
    assert_eq!(items[0].field("data"), Some(&Val::Bin(vec![9, 8, 7])));
    assert_eq!(items[0].field("encoding"), None);
    assert_eq!(items[1].field("data"), Some(&Val::Bin(frame.clone())));

    let as_json = req("GET", path).send(&router).await.json();
    assert_eq!(as_json[1]["data"], STANDARD.encode(&frame));
    assert_eq!(as_json[1]["encoding"], "base64");

    // format=msgpack works when Accept does not say otherwise.
    let by_query = req("GET", "/channels?format=msgpack&by=id").send(&router).await;
    assert_eq!(by_query.header("content-type"), Some("application/x-msgpack"));
    // Form-encoded publish.
    let mut form = req("POST", path);
    form.body = b"name=form&data=hello+there".to_vec();
    form.headers.push(("content-type", "application/x-www-form-urlencoded".into()));
    assert_eq!(form.send(&router).await.status, StatusCode::CREATED);
    let latest = req("GET", format!("{path}?limit=1")).send(&router).await.json();
    assert_eq!(latest[0]["data"], "hello there");
}

fn token_request(timestamp: i64, nonce: &str, client: Option<&str>) -> Value {
    let ttl = 60_000;
    let mac = sign_request(Some(ttl), Some(r#"{"*":["*"]}"#), client, timestamp, nonce);
    json!({
        "keyName": ABLY_KEY_NAME,
        "ttl": ttl,
        "capability": r#"{"*":["*"]}"#,
        "clientId": client,
        "timestamp": timestamp,
        "nonce": nonce,
        "mac": mac,
    })
}

#[tokio::test]
async fn signed_token_requests_are_verified_and_tokens_accepted() {
    let (_, router) = setup();
    let now = crate::sandbox::clock::wall_ms();
    let path = format!("/keys/{ABLY_KEY_NAME}/requestToken");
    let resp = req("POST", path.clone())
        .no_auth()
        .json(&token_request(now, "0123456789abcdefXYZ", Some("bob")))
        .send(&router)
        .await;
    assert_eq!(resp.status, StatusCode::OK, "{}", String::from_utf8_lossy(&resp.body));
    let details = resp.json();
    assert_eq!(details["keyName"], ABLY_KEY_NAME);
    assert_eq!(details["clientId"], "bob");
    assert_eq!(details["capability"], r#"{"*":["*"]}"#);
    assert_eq!(details["expires"].as_i64().unwrap_or(0) - details["issued"].as_i64().unwrap_or(0), 60_000);
    let token = details["token"].as_str().expect("token");

    let bearer = format!("Bearer {}", STANDARD.encode(token));
    let listed = req("GET", "/channels?by=id").header("authorization", bearer.clone()).send(&router).await;
    assert_eq!(listed.status, StatusCode::OK);
    // Messages published with the token carry its client id.
    let published = req("POST", "/channels/tok/messages")
        .header("authorization", bearer.clone())
        .json(&json!({"data": "x"}))
        .send(&router)
        .await;
    assert_eq!(published.status, StatusCode::CREATED);
    let history = req("GET", "/channels/tok/messages").send(&router).await.json();
    assert_eq!(history[0]["clientId"], "bob");
    let mismatch = req("POST", "/channels/tok/messages")
        .header("authorization", bearer)
        .json(&json!({"data": "x", "clientId": "eve"}))
        .send(&router)
        .await;
    assert_eq!(mismatch.status, StatusCode::BAD_REQUEST);

    // Replayed nonce, bad mac, stale timestamp.
    let replay = req("POST", path.clone())
        .no_auth()
        .json(&token_request(now, "0123456789abcdefXYZ", Some("bob")))
        .send(&router)
        .await;
    assert_eq!(replay.status, StatusCode::UNAUTHORIZED);
    assert_eq!(replay.json()["error"]["code"], 40105);
    let mut forged = token_request(now, "fedcba9876543210abc", None);
    forged["mac"] = json!(STANDARD.encode([0u8; 32]));
    let bad = req("POST", path.clone()).no_auth().json(&forged).send(&router).await;
    assert_eq!(bad.status, StatusCode::UNAUTHORIZED);
    assert_eq!(bad.json()["error"]["code"], 40101);
    let stale = req("POST", path.clone())
        .no_auth()
        .json(&token_request(now - 600_000, "stalestalestale123", None))
        .send(&router)
        .await;
    assert_eq!(stale.json()["error"]["code"], 40104);

    // Unsigned requests need Basic; with it they work (ably-python sends nulls).
    let unsigned = json!({"keyName": ABLY_KEY_NAME, "ttl": null, "capability": null,
                          "clientId": null, "timestamp": now});
    let refused = req("POST", path.clone()).no_auth().json(&unsigned).send(&router).await;
    assert_eq!(refused.status, StatusCode::UNAUTHORIZED);
    let granted = req("POST", path).json(&unsigned).send(&router).await;
    assert_eq!(granted.status, StatusCode::OK);
    assert!(granted.json().get("clientId").is_none());

    // A made-up token is refused.
    let fake = req("GET", "/stats")
        .header("authorization", format!("Bearer {}", STANDARD.encode("opsdeck.abc.def")))
        .send(&router)
        .await;
    assert_eq!(fake.status, StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn signed_token_request_in_msgpack() {
    let (_, router) = setup();
    let now = crate::sandbox::clock::wall_ms();
    let mac = sign_request(None, None, None, now, "msgpacknonce-000001");
    // ably-js omits absent keys.
    let body = Val::map([
        ("keyName", Val::str(ABLY_KEY_NAME)),
        ("timestamp", Val::Int(now)),
        ("nonce", Val::str("msgpacknonce-000001")),
        ("mac", Val::Str(mac)),
    ]);
    let resp = req("POST", format!("/keys/{ABLY_KEY_NAME}/requestToken")).no_auth().msgpack(&body).send(&router).await;
    assert_eq!(resp.status, StatusCode::OK);
    let details = resp.msgpack();
    assert_eq!(details.field("capability"), Some(&Val::str(r#"{"*":["*"]}"#)));
}

fn device(id: &str, client: &str) -> Value {
    json!({
        "id": id,
        "clientId": client,
        "platform": "android",
        "formFactor": "phone",
        "metadata": {"model": "Pixel"},
        "push": {"recipient": {"transportType": "fcm", "registrationToken": "tok-1"}}
    })
}

#[tokio::test]
async fn device_registrations_register_get_list_delete() {
    let (_, router) = setup();
    let created = req("POST", "/push/deviceRegistrations").json(&device("dev-test-1", "zoe")).send(&router).await;
    assert_eq!(created.status, StatusCode::CREATED);
    let body = created.json();
    assert_eq!(body["push"]["state"], "ACTIVE");
    assert!(body["updateToken"].as_str().is_some_and(|t| !t.is_empty()));
    let allowed = ["id", "clientId", "formFactor", "metadata", "platform", "push", "updateToken"];
    for key in body.as_object().expect("object").keys() {
        assert!(allowed.contains(&key.as_str()), "unexpected key {key}");
    }

    // PUT upserts (what the SDKs send).
    let mut second = device("dev-test-2", "zoe");
    second["platform"] = json!("ios");
    second["push"] = json!({"recipient": {"transportType": "apns", "deviceToken": "abc"}});
    let saved = req("PUT", "/push/deviceRegistrations/dev-test-2").json(&second).send(&router).await;
    assert_eq!(saved.status, StatusCode::OK);
    let mut moved = device("dev-test-2", "yann");
    moved["platform"] = json!("ios");
    moved["push"] = second["push"].clone();
    let updated = req("PUT", "/push/deviceRegistrations/dev-test-2").json(&moved).send(&router).await.json();
    assert_eq!(updated["clientId"], "yann");

    let got = req("GET", "/push/deviceRegistrations/dev-test-1").send(&router).await;
    assert_eq!(got.status, StatusCode::OK);
    assert_eq!(got.json()["metadata"]["model"], "Pixel");

    let by_client = req("GET", "/push/deviceRegistrations?clientId=zoe").send(&router).await.json();
    assert_eq!(by_client.as_array().map(Vec::len), Some(1));
    let by_id = req("GET", "/push/deviceRegistrations?deviceId=dev-test-2").send(&router).await.json();
    assert_eq!(by_id[0]["clientId"], "yann");
    let limited = req("GET", "/push/deviceRegistrations?limit=2").send(&router).await.json();
    assert_eq!(limited.as_array().map(Vec::len), Some(2));

    let gone = req("DELETE", "/push/deviceRegistrations/dev-test-1").send(&router).await;
    assert_eq!(gone.status, StatusCode::NO_CONTENT);
    assert!(gone.body.is_empty());
    let missing = req("GET", "/push/deviceRegistrations/dev-test-1").send(&router).await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND);
    assert_eq!(missing.json()["error"]["code"], 40400);

    let mut bad = device("dev-bad", "zoe");
    bad["platform"] = json!("symbian");
    let refused = req("POST", "/push/deviceRegistrations").json(&bad).send(&router).await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST);
    let mut bad = device("dev-bad", "zoe");
    bad["push"]["recipient"]["transportType"] = json!("pigeon");
    let refused = req("POST", "/push/deviceRegistrations").json(&bad).send(&router).await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn channel_subscriptions_create_list_delete() {
    let (_, router) = setup();
    req("PUT", "/push/deviceRegistrations/dev-sub").json(&device("dev-sub", "zoe")).send(&router).await;
    let path = "/push/channelSubscriptions";
    let by_device = req("POST", path).json(&json!({"channel": "news:eu", "deviceId": "dev-sub"})).send(&router).await;
    assert_eq!(by_device.status, StatusCode::CREATED);
    assert_eq!(by_device.json(), json!({"channel": "news:eu", "deviceId": "dev-sub"}));
    let by_client = req("POST", path).json(&json!({"channel": "news:eu", "clientId": "zoe"})).send(&router).await;
    assert_eq!(by_client.json(), json!({"channel": "news:eu", "clientId": "zoe"}));

    for body in [
        json!({"channel": "news:eu", "deviceId": "dev-sub", "clientId": "zoe"}),
        json!({"channel": "news:eu"}),
        json!({"channel": "news:eu", "deviceId": "no-such-device"}),
    ] {
        let resp = req("POST", path).json(&body).send(&router).await;
        assert_eq!(resp.status, StatusCode::BAD_REQUEST, "{body}");
    }

    let listed = req("GET", format!("{path}?channel=news:eu")).send(&router).await.json();
    assert_eq!(
        listed,
        json!([{"channel": "news:eu", "clientId": "zoe"}, {"channel": "news:eu", "deviceId": "dev-sub"}])
    );
    let both = req("GET", format!("{path}?deviceId=dev-sub&clientId=zoe")).send(&router).await;
    assert_eq!(both.status, StatusCode::BAD_REQUEST);
    let concat =
        req("GET", format!("{path}?deviceId=dev-sub&clientId=zoe&concatFilters=true")).send(&router).await.json();
    assert_eq!(concat.as_array().map(Vec::len), Some(2));
    let channels = req("GET", "/push/channels").send(&router).await.json();
    assert!(channels.as_array().expect("array").contains(&json!("news:eu")));

    let removed = req("DELETE", format!("{path}?channel=news:eu&clientId=zoe")).send(&router).await;
    assert_eq!(removed.status, StatusCode::NO_CONTENT);
    let listed = req("GET", format!("{path}?channel=news:eu")).send(&router).await.json();
    assert_eq!(listed, json!([{"channel": "news:eu", "deviceId": "dev-sub"}]));

    // Deleting the device takes its subscriptions with it.
    req("DELETE", "/push/deviceRegistrations/dev-sub").send(&router).await;
    let listed = req("GET", format!("{path}?channel=news:eu")).send(&router).await.json();
    assert_eq!(listed, json!([]));
}

fn current_minute_entry(stats: &Value, key: &str) -> i64 {
    stats[0]["entries"][key].as_i64().unwrap_or(0)
}

#[tokio::test]
async fn push_publish_is_recorded_and_counted_in_stats() {
    let (sim, router) = setup();
    req("PUT", "/push/deviceRegistrations/dev-push").json(&device("dev-push", "zoe")).send(&router).await;
    let before = req("GET", "/stats?limit=1").send(&router).await.json();
    let direct_before = current_minute_entry(&before, "push.directPublishes");

    let resp = req("POST", "/push/publish")
        .json(&json!({"recipient": {"clientId": "zoe"},
                      "notification": {"title": "Hi", "body": "there"}}))
        .send(&router)
        .await;
    assert_eq!(resp.status, StatusCode::CREATED);
    let bad = req("POST", "/push/publish")
        .json(&json!({"recipient": {"transportType": "apns"}, "notification": {"title": "x"}}))
        .send(&router)
        .await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST);
    let no_recipient = req("POST", "/push/publish").json(&json!({"notification": {"title": "x"}})).send(&router).await;
    assert_eq!(no_recipient.status, StatusCode::BAD_REQUEST);

    let after = req("GET", "/stats?limit=1").send(&router).await.json();
    assert_eq!(current_minute_entry(&after, "push.directPublishes"), direct_before + 1);
    assert!(current_minute_entry(&after, "push.notifications.delivered") >= 1);
    assert!(current_minute_entry(&after, "apiRequests.push.succeeded") >= 2);
    assert!(current_minute_entry(&after, "apiRequests.push.failed") >= 2);
    assert!(after[0]["inProgress"].as_str().is_some());

    // A message with extras.push reaches the devices subscribed to its channel.
    req("POST", "/push/channelSubscriptions")
        .json(&json!({"channel": "pushy", "deviceId": "dev-push"}))
        .send(&router)
        .await;
    req("POST", "/channels/pushy/messages")
        .json(&json!({"name": "n", "data": "d",
                      "extras": {"push": {"notification": {"title": "Via channel"}}}}))
        .send(&router)
        .await;
    let log = sim.push_deliveries();
    assert_eq!(log.len(), 2);
    assert_eq!(log[0].device_ids, ["dev-push"]);
    assert_eq!(log[1].channel.as_deref(), Some("pushy"));
    assert_eq!(log[1].title.as_deref(), Some("Via channel"));
    let stats = req("GET", "/stats?limit=1").send(&router).await.json();
    assert!(current_minute_entry(&stats, "push.channelMessages") >= 1);
    assert!(current_minute_entry(&stats, "messages.inbound.rest.messages.count") >= 1);
}

#[tokio::test]
async fn stats_units_and_interval_ids() {
    let (_, router) = setup();
    for (unit, len) in [("minute", 16), ("hour", 13), ("day", 13), ("month", 13)] {
        let resp = req("GET", format!("/stats?unit={unit}&limit=3")).send(&router).await;
        assert_eq!(resp.status, StatusCode::OK);
        let records = resp.json();
        let records = records.as_array().expect("array");
        assert!(!records.is_empty(), "{unit}");
        for r in records {
            assert_eq!(r["unit"], unit);
            assert_eq!(r["intervalId"].as_str().map(str::len), Some(len), "{r}");
            assert!(r["entries"].as_object().is_some_and(|e| !e.is_empty()));
        }
    }
    for unit in ["minute", "hour", "day"] {
        let ids = |items: Vec<Value>| -> Vec<String> {
            items.iter().map(|r| r["intervalId"].as_str().unwrap_or("").to_owned()).collect()
        };
        let backwards = ids(all_pages(&router, "/stats", &format!("unit={unit}&limit=7")).await);
        let mut forwards = ids(all_pages(&router, "/stats", &format!("unit={unit}&limit=11&direction=forwards")).await);
        forwards.reverse();
        assert_eq!(backwards, forwards, "{unit}");
        let mut sorted = backwards.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), backwards.len(), "{unit}: no interval twice");
    }
    let forwards = req("GET", "/stats?unit=day&direction=forwards&limit=2").send(&router).await.json();
    assert!(forwards[0]["intervalId"].as_str() < forwards[1]["intervalId"].as_str());
}

#[tokio::test]
async fn batch_publish_returns_batch_results() {
    let (_, router) = setup();
    let resp = req("POST", "/messages")
        .header("x-ably-version", "6")
        .json(&json!([
            {"channels": ["batch:a", "batch:b"], "messages": [{"name": "m", "data": "1"}, {"data": "2"}]},
            {"channels": "", "messages": {"data": "x"}}
        ]))
        .send(&router)
        .await;
    assert!(resp.status.is_success());
    let results = resp.json();
    assert_eq!(results[0]["successCount"], 2);
    assert_eq!(results[0]["failureCount"], 0);
    assert_eq!(results[0]["results"][1]["channel"], "batch:b");
    assert_eq!(results[0]["results"][1]["serials"].as_array().map(Vec::len), Some(2));
    assert_eq!(results[1]["failureCount"], 1);
    assert_eq!(results[1]["results"][0]["error"]["code"], 40010);
    let history = req("GET", "/channels/batch:a/messages").send(&router).await.json();
    assert_eq!(history.as_array().map(Vec::len), Some(2));

    // One spec alone is accepted too; old protocol versions get the flat array.
    let single = req("POST", "/messages")
        .header("x-ably-version", "1.2")
        .json(&json!({"channels": "batch:c", "messages": {"data": "solo"}}))
        .send(&router)
        .await
        .json();
    assert_eq!(single[0]["channel"], "batch:c");
    assert!(single[0]["messageId"].as_str().is_some());
    let malformed = req("POST", "/messages").json(&json!({"messages": {"data": "no channels"}})).send(&router).await;
    assert_eq!(malformed.status, StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn channels_list_and_details() {
    let (_, router) = setup();
    let by_value = req("GET", "/channels?prefix=chat:").send(&router).await.json();
    let details = by_value.as_array().expect("array");
    assert_eq!(details.len(), 2);
    let metrics = &details[0]["status"]["occupancy"]["metrics"];
    assert!(metrics["connections"].as_i64().is_some_and(|c| c > 0));
    assert!(metrics["presenceMembers"].as_i64().is_some_and(|c| c > 0));
    let by_id = req("GET", "/channels?prefix=chat:").header("x-ably-version", "3").send(&router).await.json();
    assert_eq!(by_id, json!(["chat:lobby", "chat:support"]));

    let one = req("GET", "/channels/telemetry%3Atruck-17").send(&router).await.json();
    assert_eq!(one["channelId"], "telemetry:truck-17");
    assert_eq!(one["status"]["isActive"], true);
    let enveloped = req("GET", "/channels/telemetry%3Atruck-17?envelope=json").send(&router).await.json();
    assert_eq!(enveloped["statusCode"], 200);
    assert_eq!(enveloped["response"]["channelId"], "telemetry:truck-17");
}

#[tokio::test]
async fn presence_members_filters_and_history_actions() {
    let (_, router) = setup();
    let members = req("GET", "/channels/chat%3Alobby/presence").send(&router).await.json();
    let members = members.as_array().expect("array");
    assert_eq!(members.len(), 6);
    assert!(members.iter().all(|m| m["action"] == 1));
    let client = members[2]["clientId"].as_str().expect("clientId");
    let connection = members[2]["connectionId"].as_str().expect("connectionId");
    let one = req("GET", format!("/channels/chat%3Alobby/presence?clientId={client}")).send(&router).await.json();
    assert_eq!(one.as_array().map(Vec::len), Some(1));
    let by_conn =
        req("GET", format!("/channels/chat%3Alobby/presence?connectionId={connection}")).send(&router).await.json();
    assert_eq!(by_conn[0]["clientId"], client);
    let history = req("GET", "/channels/chat%3Alobby/presence/history?limit=1000").send(&router).await.json();
    let actions: Vec<i64> =
        history.as_array().expect("array").iter().map(|p| p["action"].as_i64().unwrap_or(0)).collect();
    assert!(actions.contains(&2) && actions.contains(&3));
    assert!(actions.iter().all(|a| [2, 3, 4].contains(a)));
    let empty = req("GET", "/channels/orders%3Aeu/presence").send(&router).await.json();
    assert_eq!(empty, json!([]));
}

/// The seeded data minus timestamps and serials, which follow the anchor.
async fn fingerprint(router: &Router) -> Vec<Value> {
    let mut out = Vec::new();
    let channels = req("GET", "/channels?by=id&limit=1000").send(router).await.json();
    out.push(channels.clone());
    for name in channels.as_array().expect("array") {
        let name = name.as_str().expect("name").replace(':', "%3A");
        let mut history = req("GET", format!("/channels/{name}/messages?limit=1000")).send(router).await.json();
        for m in history.as_array_mut().expect("array") {
            let m = m.as_object_mut().expect("object");
            m.remove("timestamp");
            m.remove("serial");
        }
        out.push(history);
        let mut members = req("GET", format!("/channels/{name}/presence")).send(router).await.json();
        for m in members.as_array_mut().expect("array") {
            m.as_object_mut().expect("object").remove("timestamp");
        }
        out.push(members);
    }
    out.push(req("GET", "/push/deviceRegistrations").send(router).await.json());
    out.push(req("GET", "/push/channelSubscriptions").send(router).await.json());
    out
}

#[tokio::test]
async fn same_seed_same_data_and_reset_restores_it() {
    let a = AblySimulator::new(&crate::sandbox::Platform::real_time(11));
    let b = AblySimulator::new(&crate::sandbox::Platform::real_time(11));
    let c = AblySimulator::new(&crate::sandbox::Platform::real_time(12));
    let (ra, rb, rc) = (a.router(), b.router(), c.router());
    let seeded = fingerprint(&ra).await;
    assert_eq!(seeded, fingerprint(&rb).await);
    assert_ne!(seeded, fingerprint(&rc).await);
    let total: usize = seeded.iter().skip(1).step_by(2).take(12).map(|h| h.as_array().map_or(0, Vec::len)).sum();
    assert!(total >= 12 * 20, "{total} messages");

    let full_history = req("GET", "/channels/orders%3Aus/messages?limit=1000").send(&ra).await.json();
    req("POST", "/channels/orders%3Aus/messages").json(&json!({"name": "order.created", "data": {}})).send(&ra).await;
    req("POST", "/channels/scratch/messages").json(&json!({"data": "x"})).send(&ra).await;
    req("PUT", "/push/deviceRegistrations/dev-reset").json(&device("dev-reset", "zoe")).send(&ra).await;
    assert_ne!(seeded, fingerprint(&ra).await);
    a.reset();
    assert_eq!(seeded, fingerprint(&ra).await);
    let after = req("GET", "/channels/orders%3Aus/messages?limit=1000").send(&ra).await.json();
    assert_eq!(after, full_history, "timestamps are restored too");
}

#[test]
fn seeding_is_fast_and_histories_fill_on_demand() {
    let start = std::time::Instant::now();
    let mut state = super::seed::seeded_state(42, crate::sandbox::clock::wall_ms());
    let elapsed = start.elapsed();
    assert_eq!(state.channels.len(), 12);
    assert_eq!(state.devices.len(), 8);
    // The release budget is 5 ms; debug builds are several times slower.
    assert!(elapsed.as_millis() < 40, "seeding took {elapsed:?}");
    let mut total = 0;
    for channel in state.channels.values_mut() {
        let count = channel.ready(crate::sandbox::clock::wall_ms()).messages.len();
        assert!((20..=300).contains(&count), "{count}");
        total += count;
    }
    eprintln!("seeding {elapsed:?}, then {total} messages in {:?}", start.elapsed() - elapsed);
}

#[tokio::test]
async fn hostile_bodies_are_rejected_not_crashed_on() {
    let (_, router) = setup();
    let mut deep = vec![0x91u8; 200_000];
    deep.push(0xc0);
    let mut r = req("POST", "/channels/x/messages");
    r.body = deep;
    r.headers.push(("content-type", "application/x-msgpack".into()));
    assert_eq!(r.send(&router).await.status, StatusCode::BAD_REQUEST);
    let deep_json = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let mut r = req("POST", "/channels/x/messages");
    r.body = deep_json.into_bytes();
    r.headers.push(("content-type", "application/json".into()));
    assert_eq!(r.send(&router).await.status, StatusCode::BAD_REQUEST);
    for body in [json!(42), json!([1, 2]), json!({"data": 5}), json!({"name": {"a": 1}})] {
        let resp = req("POST", "/channels/x/messages").json(&body).send(&router).await;
        assert_eq!(resp.status, StatusCode::BAD_REQUEST, "{body}");
    }
    let big = json!({"data": "x".repeat(70_000)});
    let resp = req("POST", "/channels/x/messages").json(&big).send(&router).await;
    assert_eq!(resp.json()["error"]["code"], 40009);
    let resp = req("POST", "/channels/%5Bweird/messages").json(&json!({"data": "x"})).send(&router).await;
    assert_eq!(resp.json()["error"]["code"], 40010);
}

// --- capabilities --------------------------------------------------------------------------------

/// Requests a token (unsigned, with Basic auth) and returns its TokenDetails.
async fn token_details(router: &Router, body: Value) -> Value {
    let resp = req("POST", format!("/keys/{ABLY_KEY_NAME}/requestToken")).json(&body).send(router).await;
    assert_eq!(resp.status, StatusCode::OK, "{}", String::from_utf8_lossy(&resp.body));
    resp.json()
}

/// The `Authorization` value of a fresh token with `capability`, as the SDKs send it.
async fn bearer_with(router: &Router, capability: &str) -> String {
    let details = token_details(router, json!({"capability": capability})).await;
    format!("Bearer {}", STANDARD.encode(details["token"].as_str().expect("token")))
}

/// Sends `method uri` with a token and returns (status, error code or 0).
async fn with_token(router: &Router, bearer: &str, method: &str, uri: &str, body: Option<Value>) -> (u16, i64) {
    let mut r = req(method, uri).header("authorization", bearer);
    if let Some(body) = body {
        r = r.json(&body);
    }
    let resp = r.send(router).await;
    let code = if resp.body.is_empty() { 0 } else { resp.json()["error"]["code"].as_i64().unwrap_or(0) };
    (resp.status.as_u16(), code)
}

const DENIED: (u16, i64) = (401, 40160);

#[tokio::test]
async fn restricted_token_publish_and_history_allowed_and_denied() {
    let (_, router) = setup();
    // The reported bug: a subscribe-only token could publish and read other channels.
    let details = token_details(&router, json!({"capability": r#"{"cap-demo":["subscribe"]}"#})).await;
    assert_eq!(details["capability"], r#"{"cap-demo":["subscribe"]}"#);
    let sub_only = format!("Bearer {}", STANDARD.encode(details["token"].as_str().expect("token")));
    let resp = req("POST", "/channels/cap-demo/messages")
        .header("authorization", sub_only.clone())
        .json(&json!({"data": "x"}))
        .send(&router)
        .await;
    assert_eq!(resp.status, StatusCode::UNAUTHORIZED);
    let error = &resp.json()["error"];
    assert_eq!(error["code"], 40160);
    assert_eq!(error["statusCode"], 401);
    assert_eq!(error["message"], "Unauthorized to publish to channel 'cap-demo'");
    assert_eq!(error["href"], "https://help.ably.io/error/40160");
    assert_eq!(resp.header("x-ably-errorcode"), Some("40160"));
    assert_eq!(resp.header("x-ably-errormessage"), Some("Unauthorized to publish to channel 'cap-demo'"));
    assert_eq!(with_token(&router, &sub_only, "GET", "/channels/other/messages", None).await, DENIED);
    // subscribe is not history; presence get is [subscribe] (§3).
    assert_eq!(with_token(&router, &sub_only, "GET", "/channels/cap-demo/messages", None).await, DENIED);
    assert_eq!(with_token(&router, &sub_only, "GET", "/channels/cap-demo/presence", None).await, (200, 0));
    assert_eq!(with_token(&router, &sub_only, "GET", "/channels/cap-demo/presence/history", None).await, DENIED);
    assert_eq!(with_token(&router, &sub_only, "GET", "/channels/cap-demo", None).await, DENIED);
    // Nothing was published by the refused call.
    let history = req("GET", "/channels/cap-demo/messages").send(&router).await.json();
    assert_eq!(history, json!([]));

    let rw = bearer_with(&router, r#"{"cap-demo":["history","publish","channel-metadata"]}"#).await;
    let msg = Some(json!({"data": "ok"}));
    assert_eq!(with_token(&router, &rw, "POST", "/channels/cap-demo/messages", msg.clone()).await, (201, 0));
    assert_eq!(with_token(&router, &rw, "GET", "/channels/cap-demo/messages", None).await, (200, 0));
    assert_eq!(with_token(&router, &rw, "GET", "/channels/cap-demo/presence/history", None).await, (200, 0));
    assert_eq!(with_token(&router, &rw, "GET", "/channels/cap-demo", None).await, (200, 0));
    assert_eq!(with_token(&router, &rw, "POST", "/channels/other/messages", msg).await, DENIED);
    // Listing needs channel-metadata on `*`, not on one channel.
    assert_eq!(with_token(&router, &rw, "GET", "/channels", None).await, DENIED);
    // Errors keep the envelope ably-js asks for.
    let enveloped = req("GET", "/channels/other?envelope=json").header("authorization", rw.clone()).send(&router).await;
    assert_eq!(enveloped.status, StatusCode::OK);
    assert_eq!(enveloped.json()["statusCode"], 401);
    assert_eq!(enveloped.json()["response"]["error"]["code"], 40160);
}

#[tokio::test]
async fn namespace_wildcard_and_any_operation() {
    let (_, router) = setup();
    let bearer = bearer_with(&router, r#"{"chat:*":["publish"],"ops":["*"]}"#).await;
    let msg = || Some(json!({"data": "x"}));
    for allowed in ["chat:room", "chat:room:deep", "chat%3Aencoded"] {
        let uri = format!("/channels/{allowed}/messages");
        assert_eq!(with_token(&router, &bearer, "POST", &uri, msg()).await, (201, 0), "{allowed}");
    }
    for denied in ["chat", "chatter:room", "other:chat"] {
        let uri = format!("/channels/{denied}/messages");
        assert_eq!(with_token(&router, &bearer, "POST", &uri, msg()).await, DENIED, "{denied}");
    }
    assert_eq!(with_token(&router, &bearer, "GET", "/channels/chat:room/messages", None).await, DENIED);
    // `*` as the operation: everything on that one channel, nothing elsewhere or app-wide.
    for (method, uri) in [
        ("POST", "/channels/ops/messages"),
        ("GET", "/channels/ops/messages"),
        ("GET", "/channels/ops/presence"),
        ("GET", "/channels/ops/presence/history"),
        ("GET", "/channels/ops"),
    ] {
        let body = (method == "POST").then(|| json!({"data": "x"}));
        let (status, _) = with_token(&router, &bearer, method, uri, body).await;
        assert!(status < 300, "{method} {uri}: {status}");
    }
    assert_eq!(with_token(&router, &bearer, "GET", "/channels/ops:sub/messages", None).await, DENIED);
    assert_eq!(with_token(&router, &bearer, "GET", "/stats", None).await, DENIED);
}

#[tokio::test]
async fn app_wide_operations_need_them_on_star() {
    let (_, router) = setup();
    let channels_only = bearer_with(&router, r#"{"*":["history","publish","subscribe"],"stats":["stats"]}"#).await;
    assert_eq!(with_token(&router, &channels_only, "GET", "/channels/any/messages", None).await, (200, 0));
    // `stats` on a channel called "stats" is not `stats` on `*`.
    assert_eq!(with_token(&router, &channels_only, "GET", "/stats", None).await, DENIED);
    assert_eq!(with_token(&router, &channels_only, "GET", "/channels", None).await, DENIED);
    let resp = req("GET", "/channels").header("authorization", channels_only.clone()).send(&router).await;
    assert_eq!(resp.json()["error"]["message"], "Listing channels requires the channel-metadata capability");
    for (method, uri, body) in [
        ("GET", "/push/deviceRegistrations", None),
        ("GET", "/push/deviceRegistrations/dev-x", None),
        ("DELETE", "/push/deviceRegistrations/dev-x", None),
        ("DELETE", "/push/deviceRegistrations?clientId=zoe", None),
        ("GET", "/push/channelSubscriptions", None),
        ("GET", "/push/channels", None),
        ("POST", "/push/publish", Some(json!({"recipient": {"clientId": "zoe"}, "notification": {"title": "t"}}))),
        ("PUT", "/push/deviceRegistrations/dev-x", Some(device("dev-x", "zoe"))),
        ("POST", "/push/channelSubscriptions", Some(json!({"channel": "news", "clientId": "zoe"}))),
        ("DELETE", "/push/channelSubscriptions?clientId=zoe", None),
    ] {
        assert_eq!(with_token(&router, &channels_only, method, uri, body).await, DENIED, "{method} {uri}");
    }

    let app = bearer_with(&router, r#"{"*":["channel-metadata","push-admin","stats"]}"#).await;
    assert_eq!(with_token(&router, &app, "GET", "/stats", None).await, (200, 0));
    assert_eq!(with_token(&router, &app, "GET", "/channels", None).await, (200, 0));
    assert_eq!(with_token(&router, &app, "GET", "/push/deviceRegistrations", None).await, (200, 0));
    let saved = with_token(&router, &app, "PUT", "/push/deviceRegistrations/dev-x", Some(device("dev-x", "zoe"))).await;
    assert_eq!(saved, (200, 0));
    let sub = json!({"channel": "news", "deviceId": "dev-x"});
    assert_eq!(with_token(&router, &app, "POST", "/push/channelSubscriptions", Some(sub)).await, (201, 0));
    let publish = json!({"recipient": {"deviceId": "dev-x"}, "notification": {"title": "t"}});
    assert_eq!(with_token(&router, &app, "POST", "/push/publish", Some(publish)).await, (201, 0));
    // push-admin is not a channel capability.
    assert_eq!(with_token(&router, &app, "GET", "/channels/news/messages", None).await, DENIED);
}

#[tokio::test]
async fn push_subscribe_covers_only_the_callers_own_client_and_devices() {
    let (_, router) = setup();
    req("PUT", "/push/deviceRegistrations/dev-eve").json(&device("dev-eve", "eve")).send(&router).await;
    let details =
        token_details(&router, json!({"capability": r#"{"news:*":["push-subscribe"]}"#, "clientId": "bob"})).await;
    let bob = format!("Bearer {}", STANDARD.encode(details["token"].as_str().expect("token")));
    let own = Some(device("dev-bob", "bob"));
    assert_eq!(with_token(&router, &bob, "PUT", "/push/deviceRegistrations/dev-bob", own).await, (200, 0));
    let other = Some(device("dev-bob2", "eve"));
    assert_eq!(with_token(&router, &bob, "PUT", "/push/deviceRegistrations/dev-bob2", other).await, DENIED);
    // Taking over another client's device is refused even when the body names bob.
    let takeover = Some(device("dev-eve", "bob"));
    assert_eq!(with_token(&router, &bob, "PUT", "/push/deviceRegistrations/dev-eve", takeover).await, DENIED);
    assert_eq!(with_token(&router, &bob, "GET", "/push/deviceRegistrations/dev-bob", None).await, DENIED);

    let path = "/push/channelSubscriptions";
    for (body, want) in [
        (json!({"channel": "news:eu", "clientId": "bob"}), (201, 0)),
        (json!({"channel": "news:eu", "deviceId": "dev-bob"}), (201, 0)),
        (json!({"channel": "news:eu", "clientId": "eve"}), DENIED),
        (json!({"channel": "news:eu", "deviceId": "dev-eve"}), DENIED),
        (json!({"channel": "sport", "clientId": "bob"}), DENIED),
    ] {
        assert_eq!(with_token(&router, &bob, "POST", path, Some(body.clone())).await, want, "{body}");
    }
    let del = |q: &str| format!("{path}?{q}");
    assert_eq!(with_token(&router, &bob, "DELETE", &del("channel=news:eu&clientId=bob"), None).await, (204, 0));
    assert_eq!(with_token(&router, &bob, "DELETE", &del("channel=news:eu&clientId=eve"), None).await, DENIED);
    // No channel means every channel: push-subscribe on `news:*` does not reach that far.
    assert_eq!(with_token(&router, &bob, "DELETE", &del("deviceId=dev-bob"), None).await, DENIED);
    let listed = req("GET", format!("{path}?channel=news:eu")).send(&router).await.json();
    assert_eq!(listed, json!([{"channel": "news:eu", "deviceId": "dev-bob"}]));
}

#[tokio::test]
async fn batch_publish_reports_denied_channels_per_channel() {
    let (_, router) = setup();
    let bearer = bearer_with(&router, r#"{"batch:ok":["publish"]}"#).await;
    let resp = req("POST", "/messages")
        .header("authorization", bearer.clone())
        .header("x-ably-version", "6")
        .json(&json!([{"channels": ["batch:ok", "batch:no"], "messages": {"data": "x"}}]))
        .send(&router)
        .await;
    assert!(resp.status.is_success(), "{}", String::from_utf8_lossy(&resp.body));
    let result = &resp.json()[0];
    assert_eq!(result["successCount"], 1);
    assert_eq!(result["failureCount"], 1);
    assert_eq!(result["results"][0]["channel"], "batch:ok");
    assert!(result["results"][0]["messageId"].is_string());
    assert_eq!(result["results"][1]["channel"], "batch:no");
    assert_eq!(result["results"][1]["error"]["code"], 40160);
    assert_eq!(result["results"][1]["error"]["statusCode"], 401);
    let no = req("GET", "/channels/batch:no/messages").send(&router).await.json();
    assert_eq!(no, json!([]));
    let ok = req("GET", "/channels/batch:ok/messages").send(&router).await.json();
    assert_eq!(ok.as_array().map(Vec::len), Some(1));

    // The v1 format reports the refusal as a partial failure.
    let legacy = req("POST", "/messages")
        .header("authorization", bearer)
        .header("x-ably-version", "1.2")
        .json(&json!({"channels": ["batch:ok", "batch:no"], "messages": {"data": "y"}}))
        .send(&router)
        .await;
    assert_eq!(legacy.status, StatusCode::BAD_REQUEST);
    assert_eq!(legacy.json()["error"]["code"], 40020);
    assert_eq!(legacy.json()["batchResponse"][1]["error"]["code"], 40160);
}

#[tokio::test]
async fn basic_auth_has_the_keys_full_capability() {
    let (_, router) = setup();
    for (method, uri) in [
        ("GET", "/stats"),
        ("GET", "/channels"),
        ("GET", "/channels/cap-demo/messages"),
        ("GET", "/channels/cap-demo/presence"),
        ("GET", "/push/deviceRegistrations"),
        ("GET", "/push/channelSubscriptions"),
    ] {
        assert_eq!(req(method, uri).send(&router).await.status, StatusCode::OK, "{uri}");
    }
    let published = req("POST", "/channels/cap-demo/messages").json(&json!({"data": "x"})).send(&router).await;
    assert_eq!(published.status, StatusCode::CREATED);
    let anonymous = req("GET", "/stats").no_auth().send(&router).await;
    assert_eq!(anonymous.status, StatusCode::UNAUTHORIZED, "no credentials are no rights");
    let by_query = req("GET", format!("/stats?key={}", crate::sandbox::credentials::ABLY_KEY)).no_auth();
    assert_eq!(by_query.send(&router).await.status, StatusCode::OK);
    // The default token (no capability asked for) has the key's capability.
    let details = token_details(&router, json!({})).await;
    assert_eq!(details["capability"], r#"{"*":["*"]}"#);
    let bearer = format!("Bearer {}", STANDARD.encode(details["token"].as_str().expect("token")));
    assert_eq!(with_token(&router, &bearer, "GET", "/stats", None).await, (200, 0));
    assert_eq!(with_token(&router, &bearer, "GET", "/push/deviceRegistrations", None).await, (200, 0));
}

#[tokio::test]
async fn token_capability_is_signed_canonical_and_validated() {
    let (sim, router) = setup();
    let details =
        token_details(&router, json!({"capability": "{ \"b\": [\"subscribe\", \"publish\"], \"a\": [\"*\"] }"})).await;
    assert_eq!(details["capability"], r#"{"a":["*"],"b":["publish","subscribe"]}"#);
    for bad in ["[1]", "{}", "not json", r#"{"a":"publish"}"#, r#"{"a":[1]}"#] {
        let resp = req("POST", format!("/keys/{ABLY_KEY_NAME}/requestToken"))
            .json(&json!({"capability": bad}))
            .send(&router)
            .await;
        assert_eq!(resp.status, StatusCode::BAD_REQUEST, "{bad}");
        assert_eq!(resp.json()["error"]["code"], 40000, "{bad}");
    }

    // A signed request carries the capability into the token too.
    let now = crate::sandbox::clock::wall_ms();
    let cap = r#"{"cap-demo":["subscribe"]}"#;
    let nonce = "capabilitynonce-0001";
    let body = json!({"keyName": ABLY_KEY_NAME, "capability": cap, "timestamp": now, "nonce": nonce,
                      "mac": sign_request(None, Some(cap), None, now, nonce)});
    let signed = req("POST", format!("/keys/{ABLY_KEY_NAME}/requestToken")).no_auth().json(&body).send(&router).await;
    assert_eq!(signed.status, StatusCode::OK);
    let token = signed.json()["token"].as_str().expect("token").to_owned();
    let bearer = format!("Bearer {}", STANDARD.encode(&token));
    let msg = || Some(json!({"data": "x"}));
    assert_eq!(with_token(&router, &bearer, "POST", "/channels/cap-demo/messages", msg()).await, DENIED);

    // Tokens are self-contained, so the restriction survives a reset.
    sim.reset();
    assert_eq!(with_token(&router, &bearer, "POST", "/channels/cap-demo/messages", msg()).await, DENIED);
    assert_eq!(with_token(&router, &bearer, "GET", "/channels/cap-demo/presence", None).await, (200, 0));

    // Editing the capability inside the token breaks its mac: 40101, not full rights.
    use base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let (payload, tag) = token.trim_start_matches("opsdeck.").split_once('.').expect("payload.mac");
    let text = String::from_utf8(URL_SAFE_NO_PAD.decode(payload).expect("base64url")).expect("utf-8");
    let widened = text.replace(r#"{\"cap-demo\":[\"subscribe\"]}"#, r#"{\"*\":[\"*\"]}"#);
    assert_ne!(widened, text, "the capability is in the payload: {text}");
    let forged = format!("opsdeck.{}.{tag}", URL_SAFE_NO_PAD.encode(widened));
    let forged = format!("Bearer {}", STANDARD.encode(forged));
    assert_eq!(with_token(&router, &forged, "POST", "/channels/cap-demo/messages", msg()).await, (401, 40101));

    // A token can only hand on what it holds.
    let path = format!("/keys/{ABLY_KEY_NAME}/requestToken");
    let wider = req("POST", path.clone())
        .header("authorization", bearer.clone())
        .json(&json!({"capability": r#"{"*":["*"]}"#}));
    let wider = wider.send(&router).await;
    assert_eq!((wider.status, wider.json()["error"]["code"].clone()), (StatusCode::UNAUTHORIZED, json!(40160)));
    let inherited = req("POST", path).header("authorization", bearer).json(&json!({})).send(&router).await;
    assert_eq!(inherited.json()["capability"], cap);
}

#[tokio::test]
async fn a_token_cannot_mint_an_unbound_or_longer_lived_token() {
    let (_, router) = setup();
    let parent = token_details(&router, json!({"clientId": "bob", "ttl": 60_000})).await;
    let bearer = format!("Bearer {}", STANDARD.encode(parent["token"].as_str().expect("token")));
    let path = format!("/keys/{ABLY_KEY_NAME}/requestToken");

    let other = req("POST", path.clone()).header("authorization", bearer.clone()).json(&json!({"clientId": "eve"}));
    let other = other.send(&router).await;
    assert_eq!((other.status, other.json()["error"]["code"].clone()), (StatusCode::UNAUTHORIZED, json!(40102)));

    let child = req("POST", path).header("authorization", bearer).json(&json!({"ttl": 86_400_000}));
    let child = child.send(&router).await.json();
    assert_eq!(child["clientId"], "bob", "the child stays bound to the parent's client id");
    assert!(child["expires"].as_i64() <= parent["expires"].as_i64(), "and does not outlive it: {child}");
}

// --- issue 5: serials, names, UTF-8, token windows and capability operations ----------------------

/// The serials of a channel's whole history, oldest first.
async fn serials_forwards(router: &Router, channel: &str) -> Vec<String> {
    all_pages(router, &format!("/channels/{channel}/messages"), "direction=forwards&limit=1000")
        .await
        .iter()
        .map(|m| m["serial"].as_str().expect("serial").to_owned())
        .collect()
}

fn assert_strictly_increasing(serials: &[String]) {
    for pair in serials.windows(2) {
        assert!(pair[0] < pair[1], "serials out of order or repeated: {} then {}", pair[0], pair[1]);
    }
}

#[tokio::test]
async fn a_publish_of_over_a_thousand_messages_gets_ordered_unique_serials() {
    let (_, router) = setup();
    let messages: Vec<Value> = (0..1500).map(|i| json!({"name": "n", "data": i.to_string()})).collect();
    let resp = req("POST", "/channels/bulk/messages").json(&json!(messages)).send(&router).await;
    assert_eq!(resp.status, StatusCode::CREATED, "{}", String::from_utf8_lossy(&resp.body));
    let returned: Vec<String> = resp.json()["serials"]
        .as_array()
        .expect("serials")
        .iter()
        .map(|s| s.as_str().expect("str").to_owned())
        .collect();
    assert_eq!(returned.len(), 1500);
    assert_strictly_increasing(&returned);
    let stored = serials_forwards(&router, "bulk").await;
    assert_eq!(stored, returned);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_publishes_on_several_channels_get_ordered_unique_serials() {
    let (_, router) = setup();
    let mut tasks = Vec::new();
    for task in 0..8 {
        let router = router.clone();
        tasks.push(tokio::spawn(async move {
            for i in 0..60 {
                let channel = format!("race-{}", (task + i) % 3);
                let body = json!([{"data": format!("{task}-{i}")}, {"data": "second"}]);
                let resp = req("POST", format!("/channels/{channel}/messages")).json(&body).send(&router).await;
                assert_eq!(resp.status, StatusCode::CREATED);
            }
        }));
    }
    for task in tasks {
        task.await.expect("publisher task");
    }
    for channel in ["race-0", "race-1", "race-2"] {
        let serials = serials_forwards(&router, channel).await;
        assert_eq!(serials.len(), 8 * 60 * 2 / 3, "{channel}");
        assert_strictly_increasing(&serials);
    }
}

/// The race behind duplicate serials, made deterministic: requests read the clock before they
/// take the state lock, so they can reach it out of clock order, on different channels.
#[test]
fn serials_stay_unique_when_publishes_reach_the_lock_out_of_clock_order() {
    let sim = AblySimulator::new(&crate::sandbox::Platform::real_time(7));
    let key =
        super::capability::Caller { client_id: None, capability: super::capability::Capability::all(), expires: None };
    let one = super::routes::parse_messages(&Val::map([("data", Val::str("x"))])).expect("message");
    let mut state = sim.shared.lock();
    let mut serials = Vec::new();
    for (channel, now) in [("late", 2_000_000_000_200), ("early", 2_000_000_000_100), ("late", 2_000_000_000_100)] {
        let result = super::routes::publish_locked(&mut state, &mut sim.shared.hub(), channel, &one, &key, now, None)
            .expect("published");
        if channel == "late" {
            serials.push(result.field("serials").expect("serials").clone());
        }
    }
    assert_ne!(serials[0], serials[1], "two messages of channel 'late' share a serial");
    let texts: Vec<String> = serials
        .iter()
        .map(|s| match s {
            Val::Arr(items) => items[0].as_str().expect("str").to_owned(),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_strictly_increasing(&texts);
}

#[tokio::test]
async fn an_empty_channel_name_is_40010_and_not_another_channel() {
    let (_, router) = setup();
    for (method, uri) in [
        ("POST", "/channels//messages"),
        ("GET", "/channels//messages"),
        ("GET", "/channels//presence"),
        ("GET", "/channels//presence/history"),
    ] {
        let mut r = req(method, uri);
        if method == "POST" {
            r = r.json(&json!({"data": "x"}));
        }
        let resp = r.send(&router).await;
        assert_eq!(resp.status, StatusCode::BAD_REQUEST, "{method} {uri}: {}", String::from_utf8_lossy(&resp.body));
        assert_eq!(resp.json()["error"]["code"], 40010, "{method} {uri}");
    }
    let channels = req("GET", "/channels?by=id&limit=1000").send(&router).await.json();
    let names: Vec<&str> = channels.as_array().expect("array").iter().filter_map(Value::as_str).collect();
    assert!(!names.contains(&"messages") && !names.contains(&""), "{names:?}");
}

#[tokio::test]
async fn invalid_utf8_in_a_name_or_form_field_is_400_not_replaced() {
    let (_, router) = setup();
    let resp = req("POST", "/channels/bad%FFname/messages").json(&json!({"data": "x"})).send(&router).await;
    assert_eq!(resp.status, StatusCode::BAD_REQUEST, "{}", String::from_utf8_lossy(&resp.body));
    assert_eq!(resp.json()["error"]["code"], 40010);

    let mut form = req("POST", "/channels/form/messages");
    form.body = b"name=caf%E9&data=x".to_vec();
    form.headers.push(("content-type", "application/x-www-form-urlencoded".into()));
    let resp = form.send(&router).await;
    assert_eq!(resp.status, StatusCode::BAD_REQUEST, "{}", String::from_utf8_lossy(&resp.body));
    assert_eq!(resp.json()["error"]["code"], 40001);
    assert!(resp.json()["error"]["message"].as_str().unwrap_or("").contains("UTF-8"));

    let resp = req("GET", "/channels?by=id&prefix=%C3").send(&router).await;
    assert_eq!(resp.status, StatusCode::BAD_REQUEST);
    assert_eq!(resp.json()["error"]["code"], 40003);
    assert!(resp.json()["error"]["message"].as_str().unwrap_or("").contains("'prefix'"));

    // Nothing was stored under a replacement character.
    let channels = req("GET", "/channels?by=id&limit=1000").send(&router).await.json();
    assert!(!channels.to_string().contains('\u{fffd}'), "{channels}");
    let history = req("GET", "/channels/form/messages").send(&router).await.json();
    assert_eq!(history, json!([]));
}

#[tokio::test]
async fn token_request_timestamps_outside_the_window_are_40104() {
    let (_, router) = setup();
    let path = format!("/keys/{ABLY_KEY_NAME}/requestToken");
    let now = crate::sandbox::clock::wall_ms();
    // Signed, at the extremes of an i64 (the arithmetic must not overflow).
    for (timestamp, nonce) in [(i64::MIN, "minimumminimum12345"), (i64::MAX, "maximummaximum12345")] {
        let resp = req("POST", path.clone()).no_auth().json(&token_request(timestamp, nonce, None)).send(&router).await;
        assert_eq!(resp.status, StatusCode::UNAUTHORIZED, "{timestamp}");
        assert_eq!(resp.json()["error"]["code"], 40104, "{timestamp}");
    }
    // Unsigned (with Basic auth) too: a timestamp that is given must be current.
    for stale in [now - 600_000, now + 600_000] {
        let body = json!({"keyName": ABLY_KEY_NAME, "timestamp": stale});
        let resp = req("POST", path.clone()).json(&body).send(&router).await;
        assert_eq!(resp.status, StatusCode::UNAUTHORIZED, "{stale}");
        assert_eq!(resp.json()["error"]["code"], 40104, "{stale}");
    }
    let current = json!({"keyName": ABLY_KEY_NAME, "timestamp": now});
    assert_eq!(req("POST", path).json(&current).send(&router).await.status, StatusCode::OK);
}

#[tokio::test]
async fn unknown_capability_operations_are_refused() {
    let (_, router) = setup();
    let path = format!("/keys/{ABLY_KEY_NAME}/requestToken");
    for capability in [r#"{"*":["fly"]}"#, r#"{"chat:*":["publish","Subscribe"]}"#, r#"{"a":[""]}"#] {
        let resp = req("POST", path.clone()).json(&json!({"capability": capability})).send(&router).await;
        assert_eq!(resp.status, StatusCode::BAD_REQUEST, "{capability}");
        let body = resp.json();
        assert_eq!(body["error"]["code"], 40000, "{capability}");
        assert!(body["error"]["message"].as_str().unwrap_or("").contains("operation"), "{body}");
    }
    let every_known = r#"{"x":["annotation-publish","annotation-subscribe","channel-metadata","history",
        "message-delete-any","message-delete-own","message-update-any","message-update-own","object-publish",
        "object-subscribe","presence","privileged-headers","publish","push-admin","push-subscribe","stats",
        "subscribe"],"y":["*"]}"#;
    let resp = req("POST", path).json(&json!({"capability": every_known})).send(&router).await;
    assert_eq!(resp.status, StatusCode::OK, "{}", String::from_utf8_lossy(&resp.body));
}

#[tokio::test]
async fn history_stays_at_the_cap_under_load_and_ages_out_on_the_sandbox_clock() {
    use super::state::{HISTORY_HOURS, MAX_HISTORY_PER_CHANNEL};
    let platform = crate::sandbox::Platform::real_time(7);
    let sim = AblySimulator::new(&platform);
    let router = sim.router();
    let batch = 1000;
    let rounds = MAX_HISTORY_PER_CHANNEL / batch + 3;
    for round in 0..rounds {
        let messages: Vec<Value> =
            (0..batch).map(|i| json!({"id": format!("m{round}-{i}"), "name": "load", "data": "x"})).collect();
        let resp = req("POST", "/channels/load/messages").json(&Value::Array(messages)).send(&router).await;
        assert_eq!(resp.status, StatusCode::CREATED);
    }
    let stored = |sim: &AblySimulator| {
        let state = sim.shared.lock();
        let channel = state.channels.get("load").expect("channel exists");
        (channel.messages.len(), channel.ids.len())
    };
    assert_eq!(stored(&sim), (MAX_HISTORY_PER_CHANNEL, MAX_HISTORY_PER_CHANNEL), "memory stays bounded");
    // The newest message is still there; the first ones went, so their ids publish afresh.
    let newest = req("GET", "/channels/load/messages?limit=1").send(&router).await.json();
    assert_eq!(newest[0]["id"], format!("m{}-{}", rounds - 1, batch - 1));
    let again =
        req("POST", "/channels/load/messages").json(&json!({"id": "m0-0", "name": "again"})).send(&router).await;
    assert_eq!(again.status, StatusCode::CREATED);
    assert_eq!(req("GET", "/channels/load/messages?limit=1").send(&router).await.json()[0]["name"], "again");

    // Seeded history is there until the sandbox clock passes the retention.
    assert!(!all_pages(&router, "/channels/chat%3Alobby/messages", "limit=1000").await.is_empty());
    platform.clock.advance((HISTORY_HOURS + 1) * 3_600_000);
    assert!(all_pages(&router, "/channels/load/messages", "limit=1000").await.is_empty());
    assert!(all_pages(&router, "/channels/chat%3Alobby/messages", "limit=1000").await.is_empty());
    assert!(all_pages(&router, "/channels/chat%3Alobby/presence/history", "limit=1000").await.is_empty());
    assert_eq!(stored(&sim), (0, 0), "expired records are dropped, not only hidden");
    // What is published now is kept again.
    req("POST", "/channels/load/messages").json(&json!({"name": "fresh"})).send(&router).await;
    assert_eq!(all_pages(&router, "/channels/load/messages", "limit=1000").await.len(), 1);
}

#[test]
fn channel_count_is_capped_by_dropping_the_idlest() {
    use super::state::MAX_CHANNELS;
    let now = crate::sandbox::clock::wall_ms();
    let mut state = super::seed::seeded_state(3, now);
    for i in 0..(MAX_CHANNELS + 50) {
        state.channel(&format!("c{i}"), now);
    }
    assert_eq!(state.channels.len(), MAX_CHANNELS);
    // Seeded channels with members present are kept.
    assert!(state.channels.contains_key("chat:lobby"));
    assert!(state.channels.contains_key(&format!("c{}", MAX_CHANNELS + 49)));
}

#[tokio::test]
async fn push_registry_caps_drop_the_earliest_devices_and_subscriptions() {
    let (sim, router) = setup();
    let seeded = all_pages(&router, "/push/deviceRegistrations", "limit=100").await;
    let subscriptions = all_pages(&router, "/push/channelSubscriptions", "limit=100").await;
    assert_eq!((seeded.len(), subscriptions.len()), (8, 6));
    let first = sim.shared.lock().device_order.front().cloned().expect("seeded devices");
    let first_subscribed = subscriptions.iter().any(|s| s["deviceId"] == first.as_str());
    assert!(first_subscribed, "the first seeded device has a subscription");
    sim.shared.lock().push_caps = super::state::PushCaps { devices: 9, subscriptions: 7 };
    for id in ["cap-dev-1", "cap-dev-2"] {
        let created = req("POST", "/push/deviceRegistrations").json(&device(id, "zoe")).send(&router).await;
        assert_eq!(created.status, StatusCode::CREATED);
    }
    let devices = all_pages(&router, "/push/deviceRegistrations", "limit=2").await;
    let ids: Vec<&str> = devices.iter().map(|d| d["id"].as_str().expect("id")).collect();
    assert_eq!(ids.len(), 9);
    assert!(!ids.contains(&first.as_str()) && ids.contains(&"cap-dev-1") && ids.contains(&"cap-dev-2"));
    let missing = req("GET", format!("/push/deviceRegistrations/{first}")).send(&router).await;
    assert_eq!((missing.status, missing.json()["error"]["code"].as_i64()), (StatusCode::NOT_FOUND, Some(40400)));
    // The evicted device's subscription went with it.
    let left = all_pages(&router, "/push/channelSubscriptions", "limit=2").await;
    assert_eq!(left.len(), 5);
    assert!(left.iter().all(|s| s["deviceId"] != first.as_str()));
    // Past the subscription cap the earliest made go.
    let path = "/push/channelSubscriptions";
    for channel in ["cap:a", "cap:b", "cap:c"] {
        let made = req("POST", path).json(&json!({"channel": channel, "clientId": "zoe"})).send(&router).await;
        assert_eq!(made.status, StatusCode::CREATED);
    }
    let after = all_pages(&router, path, "limit=3").await;
    assert_eq!(after.len(), 7);
    let channels: Vec<&str> = after.iter().map(|s| s["channel"].as_str().expect("channel")).collect();
    assert!(["cap:a", "cap:b", "cap:c"].iter().all(|c| channels.contains(c)));
    let earliest = &left[..1];
    let kept_of_earlier = left.iter().filter(|s| after.contains(s)).count();
    assert_eq!(kept_of_earlier, 4, "one earlier subscription went: {earliest:?}");
}

#[test]
fn a_connections_inbound_rate_is_counted_per_second() {
    let mut window = super::realtime::RateWindow::default();
    let second = 1_800_000_000_000;
    assert!((0..2_000).all(|i| window.admit(second + i % 1000, 2_000)), "2,000 in one second pass");
    assert!(!window.admit(second + 999, 2_000), "the 2,001st in that second does not");
    assert!(window.admit(second + 1_000, 2_000), "the next second starts afresh");
}
