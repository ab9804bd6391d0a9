//! The control port over real loopback: the request log, resets and fault injection, as a user
//! rehearsing an outage with their own client sees them.

#![allow(clippy::unwrap_used, reason = "a test panics on failure")]

use std::time::{Duration, Instant};

use opsdeck::catalog::Service;
use opsdeck::client::{self, HttpSettings, Values};
use opsdeck::config::sandbox_target;
use opsdeck::sandbox::{self, credentials, Sandbox};
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

struct Rig {
    sandbox: Sandbox,
    http: reqwest::Client,
}

impl Rig {
    async fn start() -> Rig {
        let sandbox = sandbox::start(0, 5).await.expect("sandbox starts");
        // No pooling: a dropped connection must not be mistaken for a stale pooled one.
        let http = reqwest::Client::builder().pool_max_idle_per_host(0).build().unwrap();
        Rig { sandbox, http }
    }

    fn ably(&self, path: &str) -> String {
        format!("{}{path}", self.sandbox.base_url(Service::Ably))
    }

    fn control(&self, path: &str) -> String {
        format!("{}{path}", self.sandbox.control_url())
    }

    async fn control_json(&self, method: reqwest::Method, path: &str, body: Option<Value>) -> (u16, Value) {
        let mut request = self.http.request(method, self.control(path));
        if let Some(body) = body {
            request = request.header("content-type", "application/json").body(body.to_string());
        }
        let response = request.send().await.unwrap();
        let status = response.status().as_u16();
        (status, json_of(response).await)
    }

    async fn add_fault(&self, fault: Value) -> Value {
        let (status, body) = self.control_json(reqwest::Method::POST, "/faults", Some(fault)).await;
        assert_eq!(status, 201, "{body}");
        body
    }

    async fn publish(&self, channel: &str, name: &str) -> reqwest::Response {
        self.http
            .post(self.ably(&format!("/channels/{channel}/messages")))
            .basic_auth(credentials::ABLY_KEY_NAME, Some(credentials::ABLY_KEY_SECRET))
            .header("content-type", "application/json")
            .body(json!({"name": name, "data": "x"}).to_string())
            .send()
            .await
            .unwrap()
    }

    async fn history_names(&self, channel: &str) -> Vec<String> {
        let response = self
            .http
            .get(self.ably(&format!("/channels/{channel}/messages")))
            .basic_auth(credentials::ABLY_KEY_NAME, Some(credentials::ABLY_KEY_SECRET))
            .send()
            .await
            .unwrap();
        let body = json_of(response).await;
        body.as_array().unwrap().iter().map(|m| m["name"].as_str().unwrap_or("").to_owned()).collect()
    }
}

async fn json_of(response: reqwest::Response) -> Value {
    serde_json::from_slice(&response.bytes().await.unwrap()).expect("a JSON body")
}

#[tokio::test]
async fn request_log_lists_newest_first_with_secrets_redacted() {
    let rig = Rig::start().await;
    rig.publish("log-test", "one").await;
    let with_key =
        rig.http.get(rig.ably(&format!("/channels/log-test/messages?key={}&limit=5", credentials::ABLY_KEY)));
    with_key.send().await.unwrap();
    let (status, body) = rig.control_json(reqwest::Method::GET, "/requests?service=ably&limit=10", None).await;
    assert_eq!(status, 200);
    let requests = body["requests"].as_array().unwrap();
    assert_eq!(requests.len(), 2);
    let newest = &requests[0];
    assert_eq!(newest["service"], "ably");
    assert_eq!(newest["method"], "GET");
    assert_eq!(newest["path"], "/channels/log-test/messages?key=[redacted]&limit=5");
    assert_eq!(newest["status"], 200);
    assert!(newest["latency_ms"].is_u64());
    assert!(time::OffsetDateTime::parse(
        newest["at"].as_str().unwrap(),
        &time::format_description::well_known::Rfc3339
    )
    .is_ok());
    assert_eq!((requests[1]["method"].as_str(), requests[1]["status"].as_u64()), (Some("POST"), Some(201)));
    let text = body.to_string();
    assert!(!text.contains(credentials::ABLY_KEY_SECRET), "no secret in the log: {text}");

    let (status, body) = rig.control_json(reqwest::Method::GET, "/requests?limit=1", None).await;
    assert_eq!((status, body["requests"].as_array().unwrap().len()), (200, 1));
    let (status, body) = rig.control_json(reqwest::Method::GET, "/requests?service=nope", None).await;
    assert_eq!((status, body["error"].as_str()), (404, Some("unknown_service")));
    let (status, _) = rig.control_json(reqwest::Method::GET, "/requests?limit=0", None).await;
    assert_eq!(status, 400);
}

#[tokio::test]
async fn reset_all_or_one_service() {
    let rig = Rig::start().await;
    rig.publish("reset-test", "gone-after-reset").await;
    assert_eq!(rig.history_names("reset-test").await, ["gone-after-reset"]);
    let (status, body) = rig.control_json(reqwest::Method::POST, "/reset?service=ably", None).await;
    assert_eq!((status, body), (200, json!({"reset": ["ably"]})));
    assert!(rig.history_names("reset-test").await.is_empty());
    let (status, body) = rig.control_json(reqwest::Method::POST, "/reset", None).await;
    assert_eq!(status, 200);
    assert!(body["reset"].as_array().unwrap().contains(&json!("ably")));
    let (status, body) = rig.control_json(reqwest::Method::POST, "/reset?service=nope", None).await;
    assert_eq!((status, body["error"].as_str()), (404, Some("unknown_service")));
    let (status, body) = rig.control_json(reqwest::Method::POST, "/reset?service=deepgram", None).await;
    assert_eq!((status, body), (200, json!({"reset": ["deepgram"]})));
}

/// A sandbox started for some services (as `opsdeck call` starts one for its service) refuses
/// to reset or fail the others: nothing to act on is an error, not a silent no-op.
#[tokio::test]
async fn a_sandbox_serving_one_service_refuses_resets_and_faults_for_the_others() {
    let options = sandbox::SandboxOptions { services: vec![Service::Ably], ..sandbox::SandboxOptions::new(0, 5) };
    let sandbox = sandbox::start_options(options).await.expect("sandbox starts");
    let rig = Rig { sandbox, http: reqwest::Client::new() };
    let (status, body) = rig.control_json(reqwest::Method::POST, "/reset?service=deepgram", None).await;
    assert_eq!((status, body["error"].as_str()), (404, Some("not_served")), "{body}");
    assert!(body["message"].as_str().unwrap().contains("deepgram is not served by this sandbox"), "{body}");
    let fault = json!({"service": "deepgram", "path": "*", "status": 500});
    let (status, body) = rig.control_json(reqwest::Method::POST, "/faults", Some(fault)).await;
    assert_eq!((status, body["error"].as_str()), (400, Some("invalid_fault")), "{body}");
    assert!(body["message"].as_str().unwrap().contains("not served by this sandbox"), "{body}");
    let (status, body) = rig.control_json(reqwest::Method::POST, "/reset?service=ably", None).await;
    assert_eq!((status, body), (200, json!({"reset": ["ably"]})));
    rig.sandbox.shutdown();
}

#[tokio::test]
async fn a_failing_fault_answers_in_ablys_shape_for_its_count_and_changes_nothing() {
    let rig = Rig::start().await;
    let fault = rig
        .add_fault(
            json!({"service": "ably", "path": "/channels/*/messages", "method": "POST", "status": 503, "count": 1}),
        )
        .await;
    assert_eq!(fault["remaining"], 1);
    assert_eq!(fault["drop"], false);
    let response = rig.publish("fault-test", "lost").await;
    assert_eq!(response.status().as_u16(), 503);
    assert_eq!(response.headers()["x-ably-errorcode"], "50300");
    let body = json_of(response).await;
    assert_eq!(body["error"]["code"], 50300);
    assert_eq!(body["error"]["statusCode"], 503);
    assert!(rig.history_names("fault-test").await.is_empty(), "the failed publish stored nothing");
    // The count is used up: the fault is gone and the next publish goes through.
    let (_, listed) = rig.control_json(reqwest::Method::GET, "/faults", None).await;
    assert_eq!(listed, json!({"faults": []}));
    assert_eq!(rig.publish("fault-test", "kept").await.status().as_u16(), 201);
    assert_eq!(rig.history_names("fault-test").await, ["kept"]);
    let (_, log) = rig.control_json(reqwest::Method::GET, "/requests?service=ably", None).await;
    let statuses: Vec<u64> =
        log["requests"].as_array().unwrap().iter().map(|r| r["status"].as_u64().unwrap()).collect();
    assert_eq!(statuses, [200, 201, 200, 503]);
}

#[tokio::test]
async fn an_sdk_like_client_waits_out_retry_after() {
    let rig = Rig::start().await;
    rig.add_fault(json!({"service": "ably", "path": "/time", "retry_after": 1, "count": 1})).await;
    let raw = rig.http.get(rig.ably("/time")).send().await.unwrap();
    assert_eq!(raw.status().as_u16(), 429);
    assert_eq!(raw.headers()["retry-after"], "1");
    let body = json_of(raw).await;
    assert_eq!(body["error"]["code"], 42910);

    // opsdeck's own client, like the SDKs, honours Retry-After on an idempotent call.
    rig.add_fault(json!({"service": "ably", "path": "/time", "retry_after": 1, "count": 1})).await;
    let target = sandbox_target(Service::Ably, rig.sandbox.base_url(Service::Ably));
    let op = Service::Ably.operation("time_get").expect("time operation");
    let request = client::build(op, &Values::new(), None, &target).unwrap();
    let http = client::http_client(&HttpSettings::default()).unwrap();
    let started = Instant::now();
    let response = client::request::execute(
        &http,
        &request,
        &target.credentials,
        &HttpSettings::default(),
        &CancellationToken::new(),
    )
    .await
    .expect("the retry after Retry-After succeeds");
    assert_eq!(response.status, 200);
    assert!(started.elapsed() >= Duration::from_millis(900), "waited {:?}", started.elapsed());
}

#[tokio::test]
async fn a_dropped_connection_and_added_latency() {
    let rig = Rig::start().await;
    rig.add_fault(json!({"service": "ably", "path": "/time", "drop": true, "count": 1})).await;
    let dropped = rig.http.get(rig.ably("/time")).send().await;
    assert!(dropped.is_err(), "the connection closed without an answer: {dropped:?}");
    assert_eq!(rig.http.get(rig.ably("/time")).send().await.unwrap().status().as_u16(), 200);

    let fault = rig.add_fault(json!({"service": "ably", "path": "/time", "latency_ms": 300})).await;
    let started = Instant::now();
    let slow = rig.http.get(rig.ably("/time")).send().await.unwrap();
    assert_eq!(slow.status().as_u16(), 200, "latency alone lets the request through");
    assert!(started.elapsed() >= Duration::from_millis(300));
    let id = fault["id"].as_u64().unwrap();
    let (status, body) = rig.control_json(reqwest::Method::DELETE, &format!("/faults/{id}"), None).await;
    assert_eq!((status, body), (200, json!({"deleted": 1})));
    let (status, body) = rig.control_json(reqwest::Method::DELETE, &format!("/faults/{id}"), None).await;
    assert_eq!((status, body["deleted"].as_u64()), (404, Some(0)));

    let (_, log) = rig.control_json(reqwest::Method::GET, "/requests?service=ably", None).await;
    let statuses: Vec<u64> =
        log["requests"].as_array().unwrap().iter().map(|r| r["status"].as_u64().unwrap()).collect();
    assert_eq!(statuses, [200, 200, 0], "a dropped request is logged with status 0");
}

#[tokio::test]
async fn faults_are_listed_validated_and_deleted_by_service() {
    let rig = Rig::start().await;
    let added = rig
        .add_fault(json!({"service": "ably", "path": "*", "status": 500, "probability": 0.5, "latency_ms": 10}))
        .await;
    assert_eq!(
        added,
        json!({"id": 1, "service": "ably", "path": "*", "method": null, "status": 500, "latency_ms": 10,
               "drop": false, "retry_after": null, "remaining": null, "probability": 0.5})
    );
    let (_, listed) = rig.control_json(reqwest::Method::GET, "/faults", None).await;
    assert_eq!(listed["faults"], json!([added]));
    for bad in [
        json!({"service": "ably", "path": "*"}),
        json!({"service": "ably", "path": "*", "status": 500, "probability": 2}),
        json!({"service": "ably", "path": "*", "status": 500, "colour": "red"}),
        json!({"path": "*", "status": 500}),
    ] {
        let (status, body) = rig.control_json(reqwest::Method::POST, "/faults", Some(bad.clone())).await;
        assert_eq!((status, body["error"].as_str()), (400, Some("invalid_fault")), "{bad}");
    }
    let (status, body) = rig.control_json(reqwest::Method::DELETE, "/faults?service=nope", None).await;
    assert_eq!((status, body["error"].as_str()), (404, Some("unknown_service")));
    let (status, body) = rig.control_json(reqwest::Method::DELETE, "/faults?service=ably", None).await;
    assert_eq!((status, body), (200, json!({"deleted": 1})));
    let (status, body) = rig.control_json(reqwest::Method::DELETE, "/faults", None).await;
    assert_eq!((status, body), (200, json!({"deleted": 0})));
}
