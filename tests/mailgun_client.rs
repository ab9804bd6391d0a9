//! Every Mailgun operation through opsdeck's client against the in-process simulator, in both
//! regions; the event pipeline and suppression effects; signed webhook POSTs checked by a
//! receiver here; list expansion; routes matched through the control port; paging; error shapes.

#![allow(clippy::unwrap_used, reason = "a test panics on failure")]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::http::StatusCode;
use hmac::{Hmac, Mac};
use opsdeck::catalog::Service;
use opsdeck::client::{CallError, Credentials, Response, Secret, Target};
use opsdeck::config::sandbox_target;
use opsdeck::sandbox::{credentials, serve_loopback};
use serde_json::{json, Value};
use sha2::Sha256;

mod common;

struct Mailgun {
    sim: common::Simulated,
    eu: Target,
}

impl Mailgun {
    async fn start() -> Mailgun {
        let sim = common::Simulated::start(Service::Mailgun).await;
        let eu_endpoint =
            sim.sandbox.endpoints.iter().find(|e| e.service == Service::Mailgun && e.region == Some("eu")).unwrap();
        let eu = sandbox_target(Service::Mailgun, eu_endpoint.base_url());
        Mailgun { sim, eu }
    }

    fn us(&self) -> &Target {
        &self.sim.target
    }

    async fn call(&self, target: &Target, op: &str, params: &[(&str, &str)]) -> Result<Response, CallError> {
        self.sim.send(target, op, params, None).await
    }

    async fn json(&self, target: &Target, op: &str, params: &[(&str, &str)]) -> Value {
        let response = self.call(target, op, params).await.unwrap_or_else(|e| panic!("{op}: {e}"));
        serde_json::from_slice(&response.body).unwrap_or_else(|e| panic!("{op}: {e}"))
    }

    /// An absolute URL (a `paging` link) fetched with the sandbox key.
    async fn get_url(&self, url: &str) -> Value {
        let response = self.sim.http.get(url).basic_auth("api", Some(credentials::MAILGUN_KEY)).send().await.unwrap();
        assert_eq!(response.status(), StatusCode::OK, "{url}");
        serde_json::from_slice(&response.bytes().await.unwrap()).unwrap()
    }

    /// Moves the sandbox clock and lets the background task catch up.
    async fn advance(&self, ms: i64) {
        self.sim.sandbox.clock().advance(ms);
        tokio::time::timeout(Duration::from_secs(60), self.sim.sandbox.caught_up())
            .await
            .expect("the background task caught up with the clock");
    }

    async fn control(&self, path: &str, body: Value) -> Value {
        let url = format!("{}{path}", self.sim.sandbox.control_url());
        let response = self
            .sim
            .http
            .post(url)
            .header("content-type", "application/json")
            .body(body.to_string())
            .send()
            .await
            .unwrap();
        serde_json::from_slice(&response.bytes().await.unwrap()).unwrap()
    }

    async fn events(&self, target: &Target, domain: &str, params: &[(&str, &str)]) -> Vec<Value> {
        let mut all = vec![("domain", domain), ("ascending", "yes"), ("limit", "300")];
        all.extend_from_slice(params);
        self.json(target, "events_list", &all).await["items"].as_array().unwrap().clone()
    }
}

fn api_error(result: Result<Response, CallError>) -> opsdeck::client::ApiError {
    match result {
        Err(CallError::Api(e)) => e,
        other => panic!("expected an API error, got {other:?}"),
    }
}

fn temp_file(name: &str, contents: &[u8]) -> String {
    let dir = std::env::temp_dir().join(format!("opsdeck-mailgun-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, contents).unwrap();
    path.to_string_lossy().into_owned()
}

#[tokio::test]
async fn domains_messages_events_suppressions_webhooks_stats_in_both_regions() {
    let mg = Mailgun::start().await;
    let receiver = serve_loopback(axum::Router::new().fallback(|| async { "ok" })).await.unwrap();
    for (target, region, domain) in [(mg.us().clone(), "us", "mg.example.com"), (mg.eu.clone(), "eu", "mg.example.eu")]
    {
        let fresh = format!("fresh-{region}.example.com");
        let created = mg.json(&target, "domains_create", &[("name", &fresh), ("smtp_password", "secret12")]).await;
        assert_eq!(created["domain"]["state"], "unverified", "{region}");
        let mx = if region == "eu" { "mxa.eu.mailgun.org" } else { "mxa.mailgun.org" };
        assert_eq!(created["receiving_dns_records"][0]["value"], mx);
        assert_eq!(mg.json(&target, "domains_get", &[("domain", &fresh)]).await["domain"]["name"], fresh.as_str());
        let listed = mg.json(&target, "domains_list", &[("limit", "100")]).await;
        assert!(listed["items"].as_array().unwrap().iter().any(|d| d["name"] == fresh.as_str()));
        let verified = mg.json(&target, "domains_verify", &[("domain", &fresh)]).await;
        assert_eq!(verified["sending_dns_records"][0]["valid"], "invalid");
        assert_eq!(
            mg.json(&target, "domains_delete", &[("domain", &fresh)]).await["message"],
            "Domain has been deleted"
        );

        let from = format!("Ops <ops@{domain}>");
        let sent = mg
            .json(
                &target,
                "messages_send",
                &[
                    ("domain", domain),
                    ("from", &from),
                    ("to", "alice@example.com,zed@example.org"),
                    ("subject", "Hello"),
                    ("text", "Hi there"),
                    ("o:tag", "welcome"),
                    ("h:Reply-To", "ops@example.com"),
                ],
            )
            .await;
        assert_eq!(sent["message"], "Queued. Thank you.");
        let mime = format!("From: ops@{domain}\r\nTo: mime@example.com\r\nSubject: Raw\r\n\r\nraw body\r\n");
        let path = temp_file(&format!("message-{region}.eml"), mime.as_bytes());
        let sent_mime = mg
            .json(&target, "messages_send_mime", &[("domain", domain), ("to", "mime@example.com"), ("message", &path)])
            .await;
        assert_eq!(sent_mime["message"], "Queued. Thank you.");
        let accepted = mg.events(&target, domain, &[("recipient", "alice@example.com"), ("event", "accepted")]).await;
        let key = accepted.last().unwrap()["storage"]["key"].as_str().unwrap().to_owned();
        let stored = mg.json(&target, "messages_get", &[("domain", domain), ("storage_key", &key)]).await;
        assert_eq!((stored["subject"].as_str(), stored["Reply-To"].as_str()), (Some("Hello"), Some("ops@example.com")));

        let bounce = mg
            .json(
                &target,
                "bounces_create",
                &[("domain", domain), ("address", "b1@example.com"), ("code", "550"), ("error", "gone")],
            )
            .await;
        assert_eq!(bounce["message"], "Address has been added to the bounces table");
        assert_eq!(
            mg.json(&target, "bounces_get", &[("domain", domain), ("address", "b1@example.com")]).await["error"],
            "gone"
        );
        assert!(!mg.json(&target, "bounces_list", &[("domain", domain)]).await["items"].as_array().unwrap().is_empty());
        assert_eq!(
            mg.json(&target, "bounces_delete", &[("domain", domain), ("address", "b1@example.com")]).await["message"],
            "Bounced address has been removed"
        );
        assert!(mg.json(&target, "complaints_list", &[("domain", domain)]).await["items"].is_array());
        mg.json(&target, "unsubscribes_create", &[("domain", domain), ("address", "u1@example.com"), ("tag", "*")])
            .await;
        assert!(mg.json(&target, "unsubscribes_list", &[("domain", domain)]).await["items"]
            .as_array()
            .unwrap()
            .iter()
            .any(|u| u["address"] == "u1@example.com"));
        assert_eq!(
            mg.json(&target, "unsubscribes_delete", &[("domain", domain), ("address", "u1@example.com")]).await
                ["message"],
            "Unsubscribe event has been removed"
        );
        assert_eq!(
            mg.json(&target, "bounces_clear", &[("domain", domain)]).await["message"],
            "Bounced addresses for this domain have been removed"
        );

        let hook = format!("{receiver}/hook-{region}");
        let created =
            mg.json(&target, "webhooks_create", &[("domain", domain), ("id", "clicked"), ("url", &hook)]).await;
        assert_eq!(created, json!({"message": "Webhook has been created", "webhook": {"urls": [hook]}}));
        assert_eq!(
            mg.json(&target, "webhooks_list", &[("domain", domain)]).await["webhooks"]["clicked"]["urls"][0],
            hook.as_str()
        );
        let other = format!("{receiver}/other-{region}");
        assert_eq!(
            mg.json(&target, "webhooks_update", &[("domain", domain), ("id", "clicked"), ("url", &other)]).await
                ["webhook"]["urls"][0],
            other.as_str()
        );
        assert_eq!(
            mg.json(&target, "webhooks_delete", &[("domain", domain), ("id", "clicked")]).await["message"],
            "Webhook has been deleted"
        );

        let stats = mg
            .json(&target, "stats_total", &[("domain", domain), ("event", "accepted,delivered"), ("duration", "2d")])
            .await;
        let accepted_total: u64 =
            stats["stats"].as_array().unwrap().iter().map(|r| r["accepted"]["total"].as_u64().unwrap()).sum();
        assert!(accepted_total >= 3, "{region}: {accepted_total}");
        let validated = mg.json(&target, "email_validate", &[("address", "someone@nowhere.invalid")]).await;
        assert_eq!(validated["address"], "someone@nowhere.invalid");
        assert_eq!(validated["result"], "undeliverable");
    }
    // A domain answers only in its region.
    let wrong = api_error(mg.call(&mg.eu, "events_list", &[("domain", "mg.example.com")]).await);
    assert_eq!((wrong.status, wrong.body.as_ref()), (401, b"Forbidden".as_ref()));
}

#[tokio::test]
async fn lists_and_routes_in_both_regions() {
    let mg = Mailgun::start().await;
    for (target, domain) in [(mg.us().clone(), "mg.example.com"), (mg.eu.clone(), "mg.example.eu")] {
        let list = format!("team@{domain}");
        let created = mg.json(&target, "mailing_lists_create", &[("address", &list), ("name", "Team")]).await;
        assert_eq!(created["message"], "Mailing list has been created");
        assert_eq!(
            mg.json(&target, "mailing_lists_get", &[("list_address", &list)]).await["list"]["address"],
            list.as_str()
        );
        assert!(mg.json(&target, "mailing_lists_list", &[]).await["items"]
            .as_array()
            .unwrap()
            .iter()
            .any(|l| l["address"] == list.as_str()));
        assert_eq!(
            mg.json(&target, "mailing_lists_update", &[("list_address", &list), ("name", "Team 2")]).await["list"]
                ["name"],
            "Team 2"
        );
        let member = mg
            .json(
                &target,
                "mailing_lists_members_add",
                &[("list_address", &list), ("address", "m1@example.com"), ("vars", "{\"a\":1}")],
            )
            .await;
        assert_eq!(member["member"]["address"], "m1@example.com");
        assert_eq!(
            mg.json(&target, "mailing_lists_members_list", &[("list_address", &list)]).await["items"][0]["vars"]["a"],
            1
        );
        mg.json(
            &target,
            "mailing_lists_members_delete",
            &[("list_address", &list), ("member_address", "m1@example.com")],
        )
        .await;
        mg.json(&target, "mailing_lists_delete", &[("list_address", &list)]).await;
        assert_eq!(api_error(mg.call(&target, "mailing_lists_get", &[("list_address", &list)]).await).status, 404);

        let route = mg
            .json(
                &target,
                "routes_create",
                &[("expression", "match_recipient(\"x@mg.example.com\")"), ("action", "store()"), ("priority", "5")],
            )
            .await;
        let id = route["route"]["id"].as_str().unwrap().to_owned();
        assert_eq!(mg.json(&target, "routes_get", &[("id", &id)]).await["route"]["priority"], 5);
        assert!(mg.json(&target, "routes_list", &[]).await["items"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["id"] == id.as_str()));
        mg.json(&target, "routes_update", &[("id", &id), ("priority", "6")]).await;
        mg.json(&target, "routes_delete", &[("id", &id)]).await;
        assert_eq!(api_error(mg.call(&target, "routes_get", &[("id", &id)]).await).status, 404);
    }
}

#[tokio::test]
async fn pipeline_and_suppressions_change_delivery() {
    let mg = Mailgun::start().await;
    let us = mg.us().clone();
    mg.json(
        &us,
        "unsubscribes_create",
        &[("domain", "mg.example.com"), ("address", "later@example.com"), ("tag", "promo")],
    )
    .await;
    let send = |to: &'static str, tag: &'static str| {
        let us = us.clone();
        let mg = &mg;
        async move {
            mg.json(
                &us,
                "messages_send",
                &[
                    ("domain", "mg.example.com"),
                    ("from", "ops@mg.example.com"),
                    ("to", to),
                    ("subject", "s"),
                    ("text", "t"),
                    ("o:tag", tag),
                ],
            )
            .await
        }
    };
    send("fine@example.com,bounced@example.net,angry@example.com,later@example.com,lost@nowhere.invalid", "promo")
        .await;
    mg.advance(5_000).await;
    let failed = mg.events(&us, "mg.example.com", &[("event", "failed"), ("subject", "s")]).await;
    let reason =
        |who: &str| failed.iter().find(|e| e["recipient"] == who).map(|e| e["reason"].as_str().unwrap().to_owned());
    assert_eq!(reason("bounced@example.net").as_deref(), Some("suppress-bounce"));
    assert_eq!(reason("angry@example.com").as_deref(), Some("suppress-complaint"));
    assert_eq!(reason("later@example.com").as_deref(), Some("suppress-unsubscribe"));
    assert_eq!(reason("lost@nowhere.invalid").as_deref(), Some("bounce"));
    assert_eq!(reason("fine@example.com"), None);
    let delivered =
        mg.events(&us, "mg.example.com", &[("event", "delivered"), ("recipient", "fine@example.com")]).await;
    assert_eq!(delivered.len(), 1);
    // The bounce was recorded, so the next message to it fails as suppressed.
    assert_eq!(
        mg.json(&us, "bounces_get", &[("domain", "mg.example.com"), ("address", "lost@nowhere.invalid")]).await["code"],
        "550"
    );
    // Removing the unsubscribe lets the next message through.
    mg.json(&us, "unsubscribes_delete", &[("domain", "mg.example.com"), ("address", "later@example.com")]).await;
    send("later@example.com", "promo").await;
    mg.advance(5_000).await;
    let later = mg.events(&us, "mg.example.com", &[("recipient", "later@example.com"), ("event", "delivered")]).await;
    assert_eq!(later.len(), 1);
}

#[tokio::test]
async fn webhooks_are_signed_and_retried() {
    let mg = Mailgun::start().await;
    let received: Arc<Mutex<Vec<Value>>> = Arc::default();
    let calls: Arc<Mutex<u32>> = Arc::default();
    let (got, count) = (Arc::clone(&received), Arc::clone(&calls));
    let receiver = axum::Router::new().fallback(move |body: axum::body::Bytes| {
        let (got, count) = (Arc::clone(&got), Arc::clone(&count));
        async move {
            let mut n = count.lock().unwrap();
            *n += 1;
            got.lock().unwrap().push(serde_json::from_slice(&body).unwrap_or(Value::Null));
            // The first POST fails, so Mailgun's retry shows.
            if *n == 1 {
                StatusCode::INTERNAL_SERVER_ERROR
            } else {
                StatusCode::OK
            }
        }
    });
    let url_of_receiver = format!("{}/mailgun", serve_loopback(receiver).await.unwrap());
    let us = mg.us().clone();
    mg.json(&us, "webhooks_create", &[("domain", "mg.example.com"), ("id", "delivered"), ("url", &url_of_receiver)])
        .await;
    // A URL off this machine is kept, as Mailgun keeps it; the sandbox never sends to it.
    let elsewhere = "https://example.com/x";
    let kept =
        mg.json(&us, "webhooks_create", &[("domain", "mg.example.com"), ("id", "accepted"), ("url", elsewhere)]).await;
    assert_eq!(kept, json!({"message": "Webhook has been created", "webhook": {"urls": [elsewhere]}}));
    mg.json(
        &us,
        "messages_send",
        &[
            ("domain", "mg.example.com"),
            ("from", "ops@mg.example.com"),
            ("to", "hook@example.com"),
            ("subject", "s"),
            ("text", "t"),
        ],
    )
    .await;
    mg.advance(5_000).await;
    let first = received.lock().unwrap().clone();
    assert_eq!(first.len(), 1, "one POST so far: {first:?}");
    mg.advance(600_000).await;
    let all = received.lock().unwrap().clone();
    assert_eq!(all.len(), 2, "retried once after 10 minutes");
    for payload in &all {
        let signature = &payload["signature"];
        let (timestamp, token) = (signature["timestamp"].as_str().unwrap(), signature["token"].as_str().unwrap());
        assert_eq!(token.len(), 50);
        let mut mac = Hmac::<Sha256>::new_from_slice(credentials::MAILGUN_WEBHOOK_SIGNING_KEY.as_bytes()).unwrap();
        mac.update(format!("{timestamp}{token}").as_bytes());
        let expected: String = mac.finalize().into_bytes().iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(signature["signature"].as_str(), Some(expected.as_str()));
        assert_eq!(payload["event-data"]["event"], "delivered");
        assert_eq!(payload["event-data"]["recipient"], "hook@example.com");
    }
    let url = format!("{}/mailgun/webhooks", mg.sim.sandbox.control_url());
    let log: Value =
        serde_json::from_slice(&mg.sim.http.get(url).send().await.unwrap().bytes().await.unwrap()).unwrap();
    let attempts = log["us"]["attempts"].as_array().unwrap();
    let outcomes = |to: &str| -> Vec<(&str, Option<&str>)> {
        attempts
            .iter()
            .filter(|a| a["url"] == to)
            .map(|a| (a["outcome"].as_str().unwrap(), a["why"].as_str()))
            .collect()
    };
    assert_eq!(outcomes(&url_of_receiver), [("delivered", None), ("retrying", None)]);
    assert_eq!(outcomes(elsewhere), [("not sent", Some("not a loopback URL"))]);
}

#[tokio::test]
async fn a_webhook_receiver_that_redirects_is_not_followed() {
    let mg = Mailgun::start().await;
    // Where a redirect would lead: it must never be asked.
    let followed: Arc<Mutex<u32>> = Arc::default();
    let hits = Arc::clone(&followed);
    let elsewhere = axum::Router::new().fallback(move || {
        let hits = Arc::clone(&hits);
        async move {
            *hits.lock().unwrap() += 1;
            StatusCode::OK
        }
    });
    let elsewhere = serve_loopback(elsewhere).await.unwrap();
    let redirecting = axum::Router::new().fallback(move || {
        let to = elsewhere.clone();
        async move { (StatusCode::TEMPORARY_REDIRECT, [(axum::http::header::LOCATION, to)]) }
    });
    let url = format!("{}/hook", serve_loopback(redirecting).await.unwrap());
    let us = mg.us().clone();
    mg.json(&us, "webhooks_create", &[("domain", "mg.example.com"), ("id", "accepted"), ("url", &url)]).await;
    mg.json(
        &us,
        "messages_send",
        &[
            ("domain", "mg.example.com"),
            ("from", "ops@mg.example.com"),
            ("to", "r@example.com"),
            ("subject", "s"),
            ("text", "t"),
        ],
    )
    .await;
    mg.advance(5_000).await;
    assert_eq!(*followed.lock().unwrap(), 0, "the redirect was followed");
    let url = format!("{}/mailgun/webhooks", mg.sim.sandbox.control_url());
    let log: Value =
        serde_json::from_slice(&mg.sim.http.get(url).send().await.unwrap().bytes().await.unwrap()).unwrap();
    let attempts = log["us"]["attempts"].as_array().unwrap();
    assert!(!attempts.is_empty(), "{log}");
    assert_eq!(attempts[0]["outcome"], "retrying", "a redirect is no delivery: {log}");
}

#[tokio::test]
async fn list_sends_reach_subscribed_members() {
    let mg = Mailgun::start().await;
    let us = mg.us().clone();
    mg.json(
        &us,
        "messages_send",
        &[
            ("domain", "mg.example.com"),
            ("from", "ops@mg.example.com"),
            ("to", "developers@mg.example.com"),
            ("subject", "To the list"),
            ("text", "t"),
        ],
    )
    .await;
    let accepted =
        mg.events(&us, "mg.example.com", &[("list", "developers@mg.example.com"), ("event", "accepted")]).await;
    let mut who: Vec<&str> = accepted.iter().map(|e| e["recipient"].as_str().unwrap()).collect();
    who.sort_unstable();
    assert_eq!(who, ["alice@example.com", "bob@example.com"]);
}

#[tokio::test]
async fn incoming_mail_is_matched_against_routes() {
    let mg = Mailgun::start().await;
    let support = mg
        .control(
            "/mailgun/incoming",
            json!({"region": "us", "recipient": "support@mg.example.com", "from": "x@example.org", "subject": "Help"}),
        )
        .await;
    assert_eq!(support["matched"].as_array().unwrap().len(), 1);
    assert_eq!(support["actions"][0]["destination"], "ops@example.com");
    assert_eq!(support["actions"][1]["action"], "stop");
    let other = mg.control("/mailgun/incoming", json!({"recipient": "anyone@mg.example.com", "from": "x@example.org", "subject": "Hi", "body-plain": "hello"})).await;
    assert_eq!(other["actions"][0]["action"], "store");
    let key = other["actions"][0]["storage"]["key"].as_str().unwrap().to_owned();
    let stored = mg.json(mg.us(), "messages_get", &[("domain", "mg.example.com"), ("storage_key", &key)]).await;
    assert_eq!(stored["body-plain"], "hello");
    let events = mg.events(mg.us(), "mg.example.com", &[("event", "stored")]).await;
    assert!(events.iter().any(|e| e["storage"]["key"] == key.as_str()));
    let bad = mg.control("/mailgun/incoming", json!({"recipient": "nope"})).await;
    assert_eq!(bad["error"], "bad_request");
    // A notify URL off this machine is kept, as Mailgun keeps it, and never POSTed to.
    let route = mg
        .json(
            mg.us(),
            "routes_create",
            &[
                ("expression", r#"match_recipient("notify@mg.example.com")"#),
                ("action", r#"store(notify="https://hooks.example.com/n")"#),
            ],
        )
        .await;
    assert_eq!(route["message"], "Route has been created");
    let notified = mg
        .control(
            "/mailgun/incoming",
            json!({"recipient": "notify@mg.example.com", "from": "x@example.org", "subject": "N"}),
        )
        .await;
    let store = &notified["actions"][0];
    assert_eq!((store["action"].as_str(), store["posted"].as_bool()), (Some("store"), Some(false)), "{notified}");
    assert!(notified["posts"].as_array().unwrap().is_empty(), "{notified}");
}

#[tokio::test]
async fn events_and_bounces_page_with_absolute_urls() {
    let mg = Mailgun::start().await;
    let us = mg.us().clone();
    let first =
        mg.json(&us, "events_list", &[("domain", "mg.example.com"), ("limit", "100"), ("event", "delivered")]).await;
    let mut seen: Vec<String> =
        first["items"].as_array().unwrap().iter().map(|e| e["id"].as_str().unwrap().to_owned()).collect();
    let mut next = first["paging"]["next"].as_str().unwrap().to_owned();
    loop {
        assert!(next.starts_with(&mg.sim.sandbox.base_url(Service::Mailgun)), "{next}");
        let page = mg.get_url(&next).await;
        let items = page["items"].as_array().unwrap();
        if items.is_empty() {
            break;
        }
        assert!(items.iter().all(|e| e["event"] == "delivered"));
        seen.extend(items.iter().map(|e| e["id"].as_str().unwrap().to_owned()));
        next = page["paging"]["next"].as_str().unwrap().to_owned();
    }
    let unique: std::collections::HashSet<&String> = seen.iter().collect();
    assert_eq!(unique.len(), seen.len());
    assert!(seen.len() > 100);
    let bounces = mg.json(&us, "bounces_list", &[("domain", "mg.example.com"), ("limit", "2")]).await;
    assert_eq!(bounces["items"].as_array().unwrap().len(), 2);
    let rest = mg.get_url(bounces["paging"]["next"].as_str().unwrap()).await;
    assert_eq!(rest["items"][0]["address"], "gone@example.org");
    let past = mg.get_url(rest["paging"]["next"].as_str().unwrap()).await;
    assert!(past["items"].as_array().unwrap().is_empty());
}

#[tokio::test]
async fn error_shapes() {
    let mg = Mailgun::start().await;
    let wrong = Target { credentials: Credentials::Mailgun(Secret::new("wrong")), ..mg.us().clone() };
    let sending = api_error(
        mg.call(
            &wrong,
            "messages_send",
            &[
                ("domain", "mg.example.com"),
                ("from", "a@mg.example.com"),
                ("to", "b@example.com"),
                ("subject", "s"),
                ("text", "t"),
            ],
        )
        .await,
    );
    assert_eq!((sending.status, sending.body.as_ref()), (401, b"Forbidden".as_ref()));
    let listing = api_error(mg.call(&wrong, "domains_list", &[]).await);
    assert_eq!((listing.status, listing.message.as_str()), (401, "Invalid private key"));
    let unknown = api_error(mg.call(mg.us(), "bounces_list", &[("domain", "nope.example.com")]).await);
    assert_eq!((unknown.status, unknown.body.as_ref()), (401, b"Forbidden".as_ref()));
    let bad = api_error(
        mg.call(
            mg.us(),
            "messages_send",
            &[
                ("domain", "mg.example.com"),
                ("from", "a@mg.example.com"),
                ("to", "not an address"),
                ("subject", "s"),
                ("text", "t"),
            ],
        )
        .await,
    );
    assert_eq!(
        (bad.status, bad.message.as_str()),
        (400, "'to' parameter is not a valid address. please check documentation")
    );
    // The client would refuse a stats call without `event`; the simulator answers it as Mailgun does.
    let url = format!("{}/v3/mg.example.com/stats/total", mg.sim.sandbox.base_url(Service::Mailgun));
    let response = mg.sim.http.get(url).basic_auth("api", Some(credentials::MAILGUN_KEY)).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    assert_eq!(
        serde_json::from_slice::<Value>(&response.bytes().await.unwrap()).unwrap(),
        json!({"message": "Missing parameter 'event'"})
    );
}
