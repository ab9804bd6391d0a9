//! Every Ably operation through opsdeck's client against the in-process simulator, errors and
//! paging included.

#![allow(clippy::unwrap_used, reason = "a test panics on failure")]

use opsdeck::catalog::Service;
use opsdeck::client::{self, pagination, CallError, Credentials, HttpSettings, Response, Secret, Target, Values};
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

mod common;

/// The Ably simulator and a client for it; `Deref` gives its sandbox, http and target.
struct Ably(common::Simulated);

impl std::ops::Deref for Ably {
    type Target = common::Simulated;
    fn deref(&self) -> &common::Simulated {
        &self.0
    }
}

impl Ably {
    async fn start() -> Ably {
        Ably(common::Simulated::start(Service::Ably).await)
    }

    async fn call_as(
        &self,
        target: &Target,
        op: &str,
        params: &[(&str, &str)],
        body: Option<Value>,
    ) -> Result<Response, CallError> {
        self.0.send(target, op, params, body).await
    }

    async fn call(&self, op: &str, params: &[(&str, &str)]) -> Result<Response, CallError> {
        self.call_as(&self.target, op, params, None).await
    }

    async fn json(&self, op: &str, params: &[(&str, &str)]) -> Value {
        let response = self.call(op, params).await.unwrap_or_else(|e| panic!("{op}: {e}"));
        serde_json::from_slice(&response.body).expect("JSON body")
    }
}

fn api_error(result: Result<Response, CallError>) -> client::ApiError {
    match result {
        Err(CallError::Api(e)) => e,
        other => panic!("expected an API error, got {other:?}"),
    }
}

#[tokio::test]
async fn wrong_key_gets_ablys_401() {
    let ably = Ably::start().await;
    let mut wrong = ably.target.clone();
    wrong.credentials = Credentials::AblyKey(Secret::new("opsdeck.sandbox:not-the-secret"));
    let error = api_error(ably.call_as(&wrong, "channels_list", &[], None).await);
    assert_eq!(error.status, 401);
    assert_eq!(error.code.as_deref(), Some("40101"));
    // Server time needs no key at all.
    let time = ably.call_as(&wrong, "time_get", &[], None).await.unwrap();
    let now: Value = serde_json::from_slice(&time.body).unwrap();
    assert!(now[0].as_u64().unwrap() > 1_700_000_000_000);
}

#[tokio::test]
async fn channels_list_and_get() {
    let ably = Ably::start().await;
    let names = ably.json("channels_list", &[("by", "id")]).await;
    let names: Vec<&str> = names.as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
    assert!(names.len() >= 5, "seeded channels: {names:?}");
    let prefix: String = names[0].chars().take_while(|c| *c != ':').collect();
    let filtered = ably.json("channels_list", &[("prefix", &prefix), ("by", "value")]).await;
    for channel in filtered.as_array().unwrap() {
        assert!(channel["channelId"].as_str().unwrap().starts_with(&prefix));
        assert!(channel["status"]["occupancy"]["metrics"].is_object());
    }
    let one = ably.json("channels_get", &[("channelId", names[0])]).await;
    assert_eq!(one["channelId"], names[0]);
    let limited = ably.json("channels_list", &[("limit", "2")]).await;
    assert_eq!(limited.as_array().unwrap().len(), 2);
}

#[tokio::test]
async fn publish_then_history_shows_it_and_batch_publish_reaches_every_channel() {
    let ably = Ably::start().await;
    let published = ably
        .call(
            "messages_publish",
            &[("channelId", "test:publish"), ("name", "greeting"), ("data", "hello from opsdeck")],
        )
        .await
        .unwrap();
    assert_eq!(published.status, 201);
    let result: Value = serde_json::from_slice(&published.body).unwrap();
    assert_eq!(result["serials"].as_array().unwrap().len(), 1);
    let history = ably.json("messages_list", &[("channelId", "test:publish"), ("limit", "5")]).await;
    assert_eq!(history[0]["name"], "greeting");
    assert_eq!(history[0]["data"], "hello from opsdeck");
    assert!(history[0]["timestamp"].as_u64().is_some());
    let batch = json!([{"channels": ["test:b1", "test:b2"], "messages": [{"name": "n", "data": "d"}]}]);
    let response =
        ably.call_as(&ably.target, "messages_batch_publish", &[("batch", &batch.to_string())], None).await.unwrap();
    let results: Value = serde_json::from_slice(&response.body).unwrap();
    assert_eq!(results[0]["successCount"], 2);
    for channel in ["test:b1", "test:b2"] {
        let history = ably.json("messages_list", &[("channelId", channel)]).await;
        assert_eq!(history.as_array().unwrap().len(), 1, "{channel}");
    }
    // The new channels are now active.
    let names = ably.json("channels_list", &[("prefix", "test:"), ("by", "id")]).await;
    assert_eq!(names.as_array().unwrap().len(), 3);
}

#[tokio::test]
async fn history_limits_directions_and_paging_across_pages() {
    let ably = Ably::start().await;
    for i in 0..7 {
        ably.call("messages_publish", &[("channelId", "test:paging"), ("name", &format!("m{i}"))]).await.unwrap();
    }
    // The client refuses a limit over 1000 before sending (the simulator's own 400 is tested below).
    match ably.call("messages_list", &[("channelId", "test:paging"), ("limit", "1001")]).await {
        Err(CallError::Invalid(message)) => assert!(message.contains("limit: must be at most 1000"), "{message}"),
        other => panic!("expected a local validation error, got {other:?}"),
    }

    let forwards = ably.json("messages_list", &[("channelId", "test:paging"), ("direction", "forwards")]).await;
    assert_eq!(forwards[0]["name"], "m0");
    let backwards = ably.json("messages_list", &[("channelId", "test:paging")]).await;
    assert_eq!(backwards[0]["name"], "m6");

    let op = Service::Ably.operation("messages_list").unwrap();
    let values: Values = [("channelId".into(), "test:paging".into()), ("limit".into(), "3".into())].into();
    let mut request = client::build(op, &values, None, &ably.target).unwrap();
    let mut names = Vec::new();
    let mut pages = 0;
    loop {
        let response = client::request::execute(
            &ably.http,
            &request,
            &ably.target.credentials,
            &HttpSettings::default(),
            &CancellationToken::new(),
        )
        .await
        .unwrap();
        pages += 1;
        let page: Value = serde_json::from_slice(&response.body).unwrap();
        names.extend(page.as_array().unwrap().iter().map(|m| m["name"].as_str().unwrap().to_owned()));
        match pagination::next_page(op.paging, &request, &response).unwrap() {
            Some(next) => request = next,
            None => break,
        }
    }
    assert_eq!(pages, 3);
    assert_eq!(names, ["m6", "m5", "m4", "m3", "m2", "m1", "m0"]);
}

#[tokio::test]
async fn simulator_rejects_limit_over_1000_itself() {
    let ably = Ably::start().await;
    let url = format!("{}/channels/x/messages?limit=1001", ably.target.base_url);
    let response = ably.http.get(url).basic_auth("opsdeck.sandbox", Some("sandbox-secret")).send().await.unwrap();
    assert_eq!(response.status(), 400);
    let body: Value = serde_json::from_slice(&response.bytes().await.unwrap()).unwrap();
    assert_eq!(body["error"]["code"], 40003);
}

#[tokio::test]
async fn start_and_end_accept_ms_and_iso_8601() {
    let ably = Ably::start().await;
    ably.call("messages_publish", &[("channelId", "test:time"), ("name", "now")]).await.unwrap();
    let all = ably.json("messages_list", &[("channelId", "test:time"), ("start", "2000-01-01T00:00:00Z")]).await;
    assert_eq!(all.as_array().unwrap().len(), 1);
    let none = ably.json("messages_list", &[("channelId", "test:time"), ("end", "946684800000")]).await;
    assert!(none.as_array().unwrap().is_empty());
}

#[tokio::test]
async fn presence_set_and_history() {
    let ably = Ably::start().await;
    let channels = ably.json("channels_list", &[("by", "value")]).await;
    let with_members = channels
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["status"]["occupancy"]["metrics"]["presenceMembers"].as_u64().unwrap_or(0) > 0)
        .expect("a seeded channel has presence members");
    let id = with_members["channelId"].as_str().unwrap();
    let present = ably.json("presence_get", &[("channelId", id)]).await;
    assert!(!present.as_array().unwrap().is_empty());
    assert!(present.as_array().unwrap().iter().all(|m| m["action"] == 1));
    let history = ably.json("presence_history", &[("channelId", id)]).await;
    assert!(history.as_array().unwrap().iter().any(|m| m["action"] == 2), "history has enter events");
}

#[tokio::test]
async fn push_devices_subscriptions_and_publish() {
    let ably = Ably::start().await;
    let push = json!({"recipient": {"transportType": "fcm", "registrationToken": "tok-123"}}).to_string();
    let registered = ably
        .call(
            "push_device_register",
            &[
                ("id", "opsdeck-test-device"),
                ("platform", "android"),
                ("formFactor", "phone"),
                ("push", &push),
                ("clientId", "tester"),
            ],
        )
        .await
        .unwrap();
    let device: Value = serde_json::from_slice(&registered.body).unwrap();
    assert_eq!(device["id"], "opsdeck-test-device");
    assert!(device["updateToken"].is_string());
    let got = ably.json("push_device_get", &[("deviceId", "opsdeck-test-device")]).await;
    assert_eq!(got["clientId"], "tester");
    let listed = ably.json("push_device_list", &[("clientId", "tester")]).await;
    assert_eq!(listed.as_array().unwrap().len(), 1);

    ably.call("push_subscriptions_create", &[("channel", "alerts"), ("deviceId", "opsdeck-test-device")])
        .await
        .unwrap();
    let subs = ably.json("push_subscriptions_list", &[("deviceId", "opsdeck-test-device")]).await;
    assert_eq!(subs, json!([{"channel": "alerts", "deviceId": "opsdeck-test-device"}]));
    let bad = api_error(ably.call("push_subscriptions_create", &[("channel", "alerts")]).await);
    assert_eq!(bad.status, 400);

    let notification = json!({"title": "Deploy", "body": "done"}).to_string();
    let recipient = json!({"deviceId": "opsdeck-test-device"}).to_string();
    ably.call("push_publish", &[("recipient", &recipient), ("notification", &notification)]).await.unwrap();
    let stats = ably.json("stats_get", &[("unit", "minute"), ("limit", "1")]).await;
    let entries = &stats[0]["entries"];
    assert!(
        entries.as_object().unwrap().keys().any(|k| k.starts_with("push.")),
        "push publish is counted in stats: {entries}"
    );

    ably.call("push_subscriptions_delete", &[("channel", "alerts"), ("deviceId", "opsdeck-test-device")])
        .await
        .unwrap();
    let subs = ably.json("push_subscriptions_list", &[("deviceId", "opsdeck-test-device")]).await;
    assert_eq!(subs, json!([]));
    let deleted = ably.call("push_device_delete", &[("deviceId", "opsdeck-test-device")]).await.unwrap();
    assert_eq!(deleted.status, 204);
    let gone = api_error(ably.call("push_device_get", &[("deviceId", "opsdeck-test-device")]).await);
    assert_eq!((gone.status, gone.code.as_deref()), (404, Some("40400")));
}

#[tokio::test]
async fn signed_token_request_and_the_token_as_bearer() {
    let ably = Ably::start().await;
    let response = ably.call("tokens_request", &[("keyName", "opsdeck.sandbox"), ("ttl", "60000")]).await.unwrap();
    let details: Value = serde_json::from_slice(&response.body).unwrap();
    let token = details["token"].as_str().expect("a token");
    assert!(details["expires"].as_u64().unwrap() > details["issued"].as_u64().unwrap());
    let mut with_token = ably.target.clone();
    with_token.credentials = Credentials::AblyToken(Secret::new(token));
    let channels = ably.call_as(&with_token, "channels_list", &[], None).await.unwrap();
    assert_eq!(channels.status, 200);
    with_token.credentials = Credentials::AblyToken(Secret::new("opsdeck.not-a-token"));
    let error = api_error(ably.call_as(&with_token, "channels_list", &[], None).await);
    assert_eq!(error.status, 401);
    // A mac that does not match is refused.
    let forged = ably
        .call_as(
            &ably.target,
            "tokens_request",
            &[("keyName", "opsdeck.sandbox"), ("mac", "Zm9yZ2Vk"), ("nonce", "0123456789abcdef")],
            None,
        )
        .await;
    assert_eq!(api_error(forged).status, 401);
}

#[tokio::test]
async fn stats_and_time() {
    let ably = Ably::start().await;
    let stats = ably.json("stats_get", &[("unit", "hour"), ("limit", "24")]).await;
    let records = stats.as_array().unwrap();
    assert!(!records.is_empty(), "seeded history");
    assert!(records.iter().all(|r| r["unit"] == "hour" && r["intervalId"].is_string()));
    let time = ably.json("time_get", &[]).await;
    assert_eq!(time.as_array().unwrap().len(), 1);
    ably.sandbox.shutdown();
}

#[tokio::test]
async fn reset_restores_the_seeded_state() {
    let ably = Ably::start().await;
    let before = ably.json("channels_list", &[("by", "id")]).await;
    ably.call("messages_publish", &[("channelId", "test:reset"), ("name", "x")]).await.unwrap();
    let reset = ably.http.post(format!("http://{}/reset", ably.sandbox.control)).send().await.unwrap();
    assert_eq!(reset.status(), 200);
    let after = ably.json("channels_list", &[("by", "id")]).await;
    assert_eq!(before, after);
    let index = ably.http.get(format!("http://{}/", ably.sandbox.control)).send().await.unwrap();
    let index: Value = serde_json::from_slice(&index.bytes().await.unwrap()).unwrap();
    let services = index["services"].as_array().unwrap();
    assert_eq!(services.len(), 8, "seven services, Mailgun twice");
    assert_eq!(services[0]["service"], "ably");
    assert_eq!(services[1]["service"], "deepgram");
}
