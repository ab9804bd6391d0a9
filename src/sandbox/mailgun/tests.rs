//! The Mailgun simulator's rules without a network: requests through the router with `oneshot`,
//! time moved with `clock.advance`.

use axum::body::{to_bytes, Body};
use axum::http::Request;
use base64::Engine;
use serde_json::{json, Value};
use tower::ServiceExt;

use super::*;
use crate::sandbox::SandboxClock;

const START_MS: i64 = 1_767_225_600_000; // Thu, 01 Jan 2026 00:00:00 UTC

fn simulator(seed: u64) -> (MailgunSimulator, SandboxClock) {
    let clock = SandboxClock::starting_at(START_MS, 1.0).unwrap();
    let platform = Platform { dns_delay_ms: 60_000, ..Platform::new(seed, clock.clone()) };
    (MailgunSimulator::new(&platform), clock)
}

fn auth(key: &str) -> String {
    format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(format!("api:{key}")))
}

struct Sent {
    status: u16,
    body: Value,
    text: String,
}

async fn send(router: &Router, method: &str, path: &str, content_type: Option<&str>, body: Vec<u8>, key: &str) -> Sent {
    let mut request =
        Request::builder().method(method).uri(path).header("authorization", auth(key)).header("host", "127.0.0.1:7706");
    if let Some(ct) = content_type {
        request = request.header("content-type", ct);
    }
    let response = router.clone().oneshot(request.body(Body::from(body)).unwrap()).await.unwrap();
    let status = response.status().as_u16();
    let bytes = to_bytes(response.into_body(), usize::MAX).await.unwrap();
    let text = String::from_utf8_lossy(&bytes).into_owned();
    Sent { status, body: serde_json::from_slice(&bytes).unwrap_or(Value::Null), text }
}

async fn get(router: &Router, path: &str) -> Sent {
    send(router, "GET", path, None, Vec::new(), credentials::MAILGUN_KEY).await
}

async fn form(router: &Router, method: &str, path: &str, fields: &[(&str, &str)]) -> Sent {
    let body =
        crate::sandbox::paging::encode_form(&fields.iter().map(|(k, v)| (*k, (*v).to_owned())).collect::<Vec<_>>());
    send(router, method, path, Some("application/x-www-form-urlencoded"), body.into_bytes(), credentials::MAILGUN_KEY)
        .await
}

/// Events of `domain` for `recipient`, oldest first.
async fn events_for(router: &Router, domain: &str, recipient: &str) -> Vec<Value> {
    let answer = get(
        router,
        &format!("/v3/{domain}/events?recipient={}&ascending=yes&limit=300", recipient.replace('@', "%40")),
    )
    .await;
    assert_eq!(answer.status, 200, "{}", answer.text);
    answer.body["items"].as_array().unwrap().clone()
}

fn kinds(events: &[Value]) -> Vec<String> {
    events.iter().map(|e| e["event"].as_str().unwrap().to_owned()).collect()
}

#[test]
fn webhook_signature_matches_the_documented_vector() {
    assert_eq!(
        webhooks::sign("key-test-signing", "1529006854", "a8ce0edb2dd8301dee6c2405235584e45aa91d1e9f979f3de0"),
        "ea80a3596ce790aa20ccea2a5ba5f2f725e02026d71bc488e9308afc89b5907b"
    );
    assert_eq!(webhooks::name_for("failed", Some("temporary")), Some("temporary_fail"));
    assert_eq!(webhooks::name_for("failed", Some("permanent")), Some("permanent_fail"));
    assert_eq!(webhooks::name_for("stored", None), None);
    let outbox = crate::sandbox::outbox::Outbox::new(webhooks::RETRY);
    assert_eq!(outbox.after_answer(200, 1, 0), ("delivered", None));
    assert_eq!(outbox.after_answer(406, 1, 0), ("rejected", None));
    assert_eq!(outbox.after_answer(500, 1, 0), ("retrying", Some(600_000)));
    assert_eq!(outbox.after_answer(500, 8, 0), ("failed", None));
}

#[tokio::test]
async fn wrong_key_is_forbidden_text_on_sending_and_json_elsewhere() {
    let (sim, _) = simulator(1);
    let router = sim.router();
    let sent = send(
        &router,
        "POST",
        "/v3/mg.example.com/messages",
        Some("application/x-www-form-urlencoded"),
        b"to=a@b.com".to_vec(),
        "nope",
    )
    .await;
    assert_eq!((sent.status, sent.text.as_str()), (401, "Forbidden"));
    let listed = send(&router, "GET", "/v3/domains", None, Vec::new(), "nope").await;
    assert_eq!((listed.status, listed.body.clone()), (401, json!({"message": "Invalid private key"})));
}

#[tokio::test]
async fn timeline_delivers_fails_suppressed_bounces_unknown_mx_and_retries_tempfail() {
    let (sim, clock) = simulator(3);
    let router = sim.router();
    let to = "alice@example.com, bounced@example.net, nobody@nowhere.invalid, tempfail-a@example.com";
    let sent = form(
        &router,
        "POST",
        "/v3/mg.example.com/messages",
        &[
            ("from", "Ops <ops@mg.example.com>"),
            ("to", to),
            ("to", "quit@example.com"),
            ("subject", "Hi"),
            ("text", "Hello"),
            ("o:tag", "t1"),
            ("v:order", "42"),
        ],
    )
    .await;
    assert_eq!(sent.status, 200, "{}", sent.text);
    assert_eq!(sent.body["message"], "Queued. Thank you.");
    assert_eq!(kinds(&events_for(&router, "mg.example.com", "alice@example.com").await), ["accepted"]);
    clock.advance(5_000);
    let alice = events_for(&router, "mg.example.com", "alice@example.com").await;
    assert_eq!(kinds(&alice)[..2], ["accepted", "delivered"]);
    assert_eq!(alice[1]["delivery-status"]["code"], 250);
    assert_eq!(alice[0]["user-variables"]["order"], "42");
    assert_eq!(alice[0]["tags"], json!(["t1"]));
    let bounced = events_for(&router, "mg.example.com", "bounced@example.net").await;
    let failed = bounced.iter().rev().find(|e| e["event"] == "failed").unwrap();
    assert_eq!((failed["severity"].as_str(), failed["reason"].as_str()), (Some("permanent"), Some("suppress-bounce")));
    assert_eq!(failed["delivery-status"]["code"], 605);
    let quit = events_for(&router, "mg.example.com", "quit@example.com").await;
    assert_eq!(quit.iter().rev().find(|e| e["event"] == "failed").unwrap()["reason"], "suppress-unsubscribe");
    let nowhere = events_for(&router, "mg.example.com", "nobody@nowhere.invalid").await;
    assert_eq!(nowhere.last().unwrap()["reason"], "bounce");
    assert_eq!(get(&router, "/v3/mg.example.com/bounces/nobody@nowhere.invalid").await.body["code"], "550");
    let temp = events_for(&router, "mg.example.com", "tempfail-a@example.com").await;
    assert_eq!(kinds(&temp), ["accepted", "failed"]);
    assert_eq!(temp[1]["severity"], "temporary");
    clock.advance(webhooks::RETRY.schedule_ms[0]);
    let temp = events_for(&router, "mg.example.com", "tempfail-a@example.com").await;
    assert_eq!(kinds(&temp)[..3], ["accepted", "failed", "delivered"]);
    assert_eq!(temp[2]["delivery-status"]["attempt-no"], 2);
}

#[tokio::test]
async fn testmode_flags_events_and_deliverytime_defers() {
    let (sim, clock) = simulator(4);
    let router = sim.router();
    let later = dates::rfc2822(START_MS + 3_600_000, "GMT");
    form(
        &router,
        "POST",
        "/v3/mg.example.com/messages",
        &[
            ("from", "ops@mg.example.com"),
            ("to", "t@example.com"),
            ("subject", "s"),
            ("text", "x"),
            ("o:testmode", "True"),
        ],
    )
    .await;
    form(
        &router,
        "POST",
        "/v3/mg.example.com/messages",
        &[
            ("from", "ops@mg.example.com"),
            ("to", "later@example.com"),
            ("subject", "s"),
            ("html", "<p>x</p>"),
            ("o:deliverytime", &later),
        ],
    )
    .await;
    clock.advance(60_000);
    let test = events_for(&router, "mg.example.com", "t@example.com").await;
    assert!(test.iter().all(|e| e["flags"]["is-test-mode"] == true));
    assert_eq!(kinds(&test), ["accepted", "delivered"]);
    assert_eq!(kinds(&events_for(&router, "mg.example.com", "later@example.com").await), ["accepted"]);
    clock.advance(3_600_000);
    assert_eq!(
        kinds(&events_for(&router, "mg.example.com", "later@example.com").await)[..2],
        ["accepted", "delivered"]
    );
}

#[tokio::test]
async fn send_rules_use_mailguns_texts_and_change_nothing() {
    let (sim, _) = simulator(5);
    let router = sim.router();
    let before = sim.shared.lock().us.events.len();
    type Case<'a> = (&'a [(&'a str, &'a str)], u16, &'a str);
    let cases: &[Case] = &[
        (&[("to", "a@example.com"), ("subject", "s"), ("text", "t")], 400, "'from' parameter is missing"),
        (&[("from", "o@mg.example.com"), ("subject", "s"), ("text", "t")], 400, "'to' parameter is missing"),
        (
            &[("from", "o@mg.example.com"), ("to", "not-an-address"), ("subject", "s"), ("text", "t")],
            400,
            "'to' parameter is not a valid address. please check documentation",
        ),
        (
            &[("from", "o@mg.example.com"), ("to", "a@example.com"), ("subject", "s")],
            400,
            "Need at least one of 'text', 'html', 'amp-html' or 'template' parameters specified",
        ),
        (
            &[
                ("from", "o@mg.example.com"),
                ("to", "a@example.com"),
                ("subject", "s"),
                ("text", "t"),
                ("o:deliverytime", "soon"),
            ],
            400,
            "invalid delivery time format",
        ),
        (
            &[
                ("from", "o@mg.example.com"),
                ("to", "a@example.com"),
                ("subject", "s"),
                ("text", "t"),
                ("o:tag", "a"),
                ("o:tag", "b"),
                ("o:tag", "c"),
                ("o:tag", "d"),
            ],
            400,
            "Too many tags: a message may carry at most 3, not 4",
        ),
    ];
    for (fields, status, message) in cases {
        let sent = form(&router, "POST", "/v3/mg.example.com/messages", fields).await;
        assert_eq!((sent.status, sent.body["message"].as_str()), (*status, Some(*message)));
    }
    let many: String = (0..1001).map(|i| format!("r{i}@example.com")).collect::<Vec<_>>().join(",");
    let sent = form(
        &router,
        "POST",
        "/v3/mg.example.com/messages",
        &[("from", "o@mg.example.com"), ("to", &many), ("subject", "s"), ("text", "t")],
    )
    .await;
    assert_eq!(sent.body["message"], "Too many recipients, max is 1000");
    let unknown = form(
        &router,
        "POST",
        "/v3/nope.example.com/messages",
        &[("from", "o@x.com"), ("to", "a@example.com"), ("subject", "s"), ("text", "t")],
    )
    .await;
    // A domain not on the account: Mailgun's 401 with the text `Forbidden`, not a JSON 404.
    assert_eq!((unknown.status, unknown.text.as_str()), (401, "Forbidden"));
    let sandbox = form(
        &router,
        "POST",
        "/v3/sandbox5f1e8a2b.mailgun.org/messages",
        &[("from", "o@x.com"), ("to", "stranger@example.com"), ("subject", "s"), ("text", "t")],
    )
    .await;
    assert_eq!(sandbox.status, 403);
    assert!(sandbox.body["message"]
        .as_str()
        .unwrap()
        .starts_with("Domain sandbox5f1e8a2b.mailgun.org is not allowed to send: Sandbox subdomains"));
    let allowed = form(
        &router,
        "POST",
        "/v3/sandbox5f1e8a2b.mailgun.org/messages",
        &[("from", "o@x.com"), ("to", "ops@example.com"), ("subject", "s"), ("text", "t")],
    )
    .await;
    assert_eq!(allowed.status, 200);
    assert_eq!(sim.shared.lock().us.events.len(), before + 1);
}

#[tokio::test]
async fn new_domain_verifies_once_the_dns_delay_has_passed() {
    let (sim, clock) = simulator(6);
    let router = sim.router();
    let created = form(&router, "POST", "/v4/domains", &[("name", "fresh.example.com")]).await;
    assert_eq!(created.status, 200, "{}", created.text);
    assert_eq!(created.body["message"], "Domain DNS records have been created");
    assert_eq!(created.body["domain"]["state"], "unverified");
    assert_eq!(created.body["sending_dns_records"][0]["valid"], "unknown");
    assert_eq!(created.body["receiving_dns_records"][0]["value"], "mxa.mailgun.org");
    let blocked = form(
        &router,
        "POST",
        "/v3/fresh.example.com/messages",
        &[("from", "a@fresh.example.com"), ("to", "b@example.com"), ("subject", "s"), ("text", "t")],
    )
    .await;
    assert_eq!(blocked.status, 403);
    let early = form(&router, "PUT", "/v3/domains/fresh.example.com/verify", &[]).await;
    assert_eq!(early.body["domain"]["state"], "unverified");
    assert_eq!(early.body["sending_dns_records"][0]["valid"], "invalid");
    clock.advance(60_000);
    let late = form(&router, "PUT", "/v3/domains/fresh.example.com/verify", &[]).await;
    assert_eq!(
        (late.body["domain"]["state"].as_str(), late.body["sending_dns_records"][1]["valid"].as_str()),
        (Some("active"), Some("valid"))
    );
    let short = form(&router, "POST", "/v3/domains", &[("name", "other.example.com"), ("smtp_password", "abc")]).await;
    assert_eq!(short.body["message"], "Password is too short. It must be between 5 and 32 characters.");
    let listed = get(&router, "/v3/domains?limit=2&skip=1").await;
    assert_eq!(
        (listed.body["total_count"].as_u64(), listed.body["items"].as_array().map(Vec::len)),
        (Some(4), Some(2))
    );
    // Seeded news.example.com follows the same delay from start.
    let news = form(&router, "PUT", "/v3/domains/news.example.com/verify", &[]).await;
    assert_eq!(news.body["domain"]["state"], "active");
    let deleted =
        send(&router, "DELETE", "/v3/domains/fresh.example.com", None, Vec::new(), credentials::MAILGUN_KEY).await;
    assert_eq!(deleted.body["message"], "Domain has been deleted");
    assert_eq!(get(&router, "/v3/domains/fresh.example.com").await.status, 404);
    let sandbox =
        send(&router, "DELETE", "/v3/domains/sandbox5f1e8a2b.mailgun.org", None, Vec::new(), credentials::MAILGUN_KEY)
            .await;
    assert_eq!(sandbox.status, 400);
}

#[tokio::test]
async fn regions_keep_their_own_domains() {
    let (sim, _) = simulator(7);
    let eu = sim.region_router(Some("eu"));
    let us = sim.router();
    let elsewhere = get(&eu, "/v3/mg.example.com/events").await;
    assert_eq!((elsewhere.status, elsewhere.text.as_str()), (401, "Forbidden"));
    assert_eq!(get(&us, "/v3/domains/mg.example.eu").await.status, 404);
    let domain = get(&eu, "/v4/domains/mg.example.eu").await;
    assert_eq!(domain.body["receiving_dns_records"][0]["value"], "mxa.eu.mailgun.org");
    assert!(!get(&eu, "/v3/mg.example.eu/events?limit=5").await.body["items"].as_array().unwrap().is_empty());
    assert_eq!(form(&eu, "POST", "/v3/domains", &[("name", "mg.example.com")]).await.status, 400);
}

fn multipart(fields: &[(&str, &str)], files: &[(&str, &str, &str, &[u8])]) -> Vec<u8> {
    let mut body = Vec::new();
    for (name, value) in fields {
        body.extend_from_slice(
            format!("--B0UND\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n").as_bytes(),
        );
    }
    for (name, filename, content_type, data) in files {
        body.extend_from_slice(
            format!("--B0UND\r\nContent-Disposition: form-data; name=\"{name}\"; filename=\"{filename}\"\r\nContent-Type: {content_type}\r\n\r\n").as_bytes(),
        );
        body.extend_from_slice(data);
        body.extend_from_slice(b"\r\n");
    }
    body.extend_from_slice(b"--B0UND--\r\n");
    body
}

#[tokio::test]
async fn multipart_attachments_are_stored_and_read_back() {
    let (sim, _) = simulator(8);
    let router = sim.router();
    let body = multipart(
        &[
            ("from", "Ops <ops@mg.example.com>"),
            ("to", "a@example.com"),
            ("cc", "b@example.com"),
            ("subject", "Invoice"),
            ("text", "see attached"),
            ("h:X-Ticket", "42"),
        ],
        &[
            ("attachment", "invoice.pdf", "application/pdf", b"%PDF-1.4 data"),
            ("inline", "logo.png", "image/png", &[137, 80, 78, 71]),
        ],
    );
    let sent = send(
        &router,
        "POST",
        "/v3/mg.example.com/messages",
        Some("multipart/form-data; boundary=B0UND"),
        body,
        credentials::MAILGUN_KEY,
    )
    .await;
    assert_eq!(sent.status, 200, "{}", sent.text);
    let events = events_for(&router, "mg.example.com", "b@example.com").await;
    assert_eq!(
        events[0]["message"]["attachments"],
        json!([{"filename": "invoice.pdf", "content-type": "application/pdf", "size": 13}])
    );
    let storage = &events[0]["storage"];
    let url = storage["url"].as_str().unwrap();
    assert!(url.starts_with("http://127.0.0.1:7706/v3/domains/mg.example.com/messages/"), "{url}");
    let path = url.trim_start_matches("http://127.0.0.1:7706");
    let stored = get(&router, path).await;
    assert_eq!(stored.body["subject"], "Invoice");
    assert_eq!(stored.body["X-Ticket"], "42");
    assert_eq!(stored.body["attachments"][0]["name"], "invoice.pdf");
    assert_eq!(stored.body["content-id-map"]["<logo.png>"]["size"], 4);
    let raw = send_accept(&router, path).await;
    let mime_text = raw["body-mime"].as_str().unwrap();
    let parsed = mime::parse(mime_text.as_bytes()).unwrap();
    assert_eq!(parsed.files.len(), 2);
    assert_eq!(parsed.files[0].data, b"%PDF-1.4 data");
    assert_eq!(
        get(&router, "/v3/domains/mg.example.com/messages/nope").await.body,
        json!({"message": "Message not found"})
    );
}

async fn send_accept(router: &Router, path: &str) -> Value {
    let request = Request::builder()
        .uri(path)
        .header("authorization", auth(credentials::MAILGUN_KEY))
        .header("accept", "message/rfc2822")
        .body(Body::empty())
        .unwrap();
    let response = router.clone().oneshot(request).await.unwrap();
    serde_json::from_slice(&to_bytes(response.into_body(), usize::MAX).await.unwrap()).unwrap()
}

/// A MIME send to mg.example.com of a multipart body built by [`multipart`].
async fn send_mime(router: &Router, body: Vec<u8>) -> Sent {
    let kind = Some("multipart/form-data; boundary=B0UND");
    send(router, "POST", "/v3/mg.example.com/messages.mime", kind, body, credentials::MAILGUN_KEY).await
}

#[tokio::test]
async fn mime_sends_read_the_message_part() {
    let (sim, _) = simulator(9);
    let router = sim.router();
    let message = b"From: Ops <ops@mg.example.com>\r\nTo: m@example.com\r\nSubject: =?utf-8?q?Caf=C3=A9?=\r\nContent-Type: text/plain\r\n\r\nhello\r\n";
    let body = multipart(&[("to", "m@example.com")], &[("message", "message.mime", "message/rfc822", message)]);
    let sent = send_mime(&router, body).await;
    assert_eq!(sent.status, 200, "{}", sent.text);
    let events = events_for(&router, "mg.example.com", "m@example.com").await;
    assert_eq!(events[0]["message"]["headers"]["subject"], "Café");
    let text_part = multipart(&[("to", "m@example.com"), ("message", "not a file")], &[]);
    let refused = send_mime(&router, text_part).await;
    assert_eq!(refused.body["message"], "'message' parameter is not a file");
}

#[tokio::test]
async fn events_page_with_tokens_that_keep_filters_and_end_empty() {
    let (sim, _) = simulator(10);
    let router = sim.router();
    let mut url = "/v3/mg.example.com/events?event=delivered%20OR%20failed&limit=50".to_owned();
    let mut seen = std::collections::HashSet::new();
    let mut pages = 0;
    loop {
        let page = get(&router, &url).await;
        assert_eq!(page.status, 200, "{}", page.text);
        let items = page.body["items"].as_array().unwrap();
        if items.is_empty() {
            break;
        }
        pages += 1;
        let mut last = f64::MAX;
        for item in items {
            assert!(item["event"] == "delivered" || item["event"] == "failed");
            assert!(seen.insert(item["id"].as_str().unwrap().to_owned()), "duplicate event");
            let ts = item["timestamp"].as_f64().unwrap();
            assert!(ts <= last, "newest first");
            last = ts;
        }
        let next = page.body["paging"]["next"].as_str().unwrap();
        assert!(next.starts_with("http://127.0.0.1:7706/v3/mg.example.com/events/"));
        url = next.trim_start_matches("http://127.0.0.1:7706").to_owned();
    }
    assert!(pages > 2, "the seeded week spans several pages");
    let total = sim
        .shared
        .lock()
        .us
        .events
        .between(Some("mg.example.com"), i64::MIN, i64::MAX)
        .filter(|e| matches!(e.kind(), "delivered" | "failed"))
        .count();
    assert_eq!(seen.len(), total);
    assert_eq!(
        get(&router, "/v3/mg.example.com/events?limit=301").await.body["message"],
        "The 'limit' parameter can't be larger than 300"
    );
    assert_eq!(get(&router, "/v3/mg.example.com/events/garbage").await.status, 400);
    let permanent = get(&router, "/v3/mg.example.com/events?event=failed&severity=permanent&limit=300").await;
    assert!(permanent.body["items"].as_array().unwrap().iter().all(|e| e["severity"] == "permanent"));
}

#[tokio::test]
async fn suppressions_page_by_address_and_bulk_create() {
    let (sim, _) = simulator(11);
    let router = sim.router();
    let records: Vec<Value> =
        (0..25).map(|i| json!({"address": format!("bulk{i:02}@example.com"), "code": 550, "error": "x"})).collect();
    let created = send(
        &router,
        "POST",
        "/v3/mg.example.com/bounces",
        Some("application/json"),
        serde_json::to_vec(&records).unwrap(),
        credentials::MAILGUN_KEY,
    )
    .await;
    assert_eq!(created.body["message"], "25 addresses have been added to the bounces table");
    let mut url = "/v3/mg.example.com/bounces?limit=10".to_owned();
    let mut addresses = Vec::new();
    loop {
        let page = get(&router, &url).await;
        let items = page.body["items"].as_array().unwrap().clone();
        if items.is_empty() {
            break;
        }
        addresses.extend(items.iter().map(|i| i["address"].as_str().unwrap().to_owned()));
        url = page.body["paging"]["next"].as_str().unwrap().trim_start_matches("http://127.0.0.1:7706").to_owned();
    }
    let mut sorted = addresses.clone();
    sorted.sort();
    assert_eq!(addresses, sorted);
    assert_eq!(addresses.len(), 28);
    let single =
        form(&router, "POST", "/v3/mg.example.com/unsubscribes", &[("address", "u@example.com"), ("tag", "weekly")])
            .await;
    assert_eq!(
        single.body,
        json!({"message": "Address has been added to the unsubscribes table", "address": "u@example.com"})
    );
    let bad = form(&router, "POST", "/v3/mg.example.com/bounces", &[("address", "nope")]).await;
    assert_eq!(bad.status, 400);
    assert_eq!(get(&router, "/v3/mg.example.com/complaints").await.body["items"][0]["address"], "angry@example.com");
    let removed = send(
        &router,
        "DELETE",
        "/v3/mg.example.com/bounces/gone@example.org",
        None,
        Vec::new(),
        credentials::MAILGUN_KEY,
    )
    .await;
    assert_eq!(removed.body["message"], "Bounced address has been removed");
    assert_eq!(
        get(&router, "/v3/mg.example.com/bounces/gone@example.org").await.body["message"],
        "Address not found in bounces table"
    );
    let cleared =
        send(&router, "DELETE", "/v3/mg.example.com/bounces", None, Vec::new(), credentials::MAILGUN_KEY).await;
    assert_eq!(cleared.body["message"], "Bounced addresses for this domain have been removed");
    sim.reset();
    assert_eq!(get(&router, "/v3/mg.example.com/bounces").await.body["items"].as_array().unwrap().len(), 3);
}

#[tokio::test]
async fn stats_count_events_and_require_event() {
    let (sim, _) = simulator(12);
    let router = sim.router();
    assert_eq!(
        get(&router, "/v3/mg.example.com/stats/total").await.body,
        json!({"message": "Missing parameter 'event'"})
    );
    let stats =
        get(&router, "/v3/mg.example.com/stats/total?event=accepted&event=delivered&event=failed&duration=7d").await;
    assert_eq!(stats.body["resolution"], "day");
    let rows = stats.body["stats"].as_array().unwrap();
    assert!(rows.len() >= 7);
    let accepted: u64 = rows.iter().map(|r| r["accepted"]["total"].as_u64().unwrap()).sum();
    let logged = sim
        .shared
        .lock()
        .us
        .events
        .between(Some("mg.example.com"), START_MS - 7 * 86_400_000, i64::MAX)
        .filter(|e| e.kind() == "accepted")
        .count();
    assert_eq!(accepted, logged as u64);
    assert!(rows.iter().all(|r| r.get("opened").is_none()));
    let hourly = get(&router, "/v3/stats/total?event=opened&resolution=hour&duration=24h").await;
    assert_eq!(hourly.body["stats"].as_array().unwrap().len(), 25);
}

#[tokio::test]
async fn sending_to_a_list_reaches_its_subscribed_members() {
    let (sim, clock) = simulator(13);
    let router = sim.router();
    let sent = form(
        &router,
        "POST",
        "/v3/mg.example.com/messages",
        &[("from", "ops@mg.example.com"), ("to", "developers@mg.example.com"), ("subject", "s"), ("text", "t")],
    )
    .await;
    assert_eq!(sent.status, 200);
    clock.advance(5_000);
    let listed = get(&router, "/v3/mg.example.com/events?list=developers%40mg.example.com&event=accepted").await;
    let mut recipients: Vec<&str> =
        listed.body["items"].as_array().unwrap().iter().map(|e| e["recipient"].as_str().unwrap()).collect();
    recipients.sort_unstable();
    assert_eq!(recipients, ["alice@example.com", "bob@example.com"]);
}

#[test]
fn the_same_seed_gives_the_same_history() {
    let ids = |seed: u64| {
        let (sim, _) = simulator(seed);
        let state = sim.shared.lock();
        state
            .us
            .events
            .between(None, i64::MIN, START_MS - 86_400_000)
            .map(|e| (e.body()["id"].clone(), e.body()["event"].clone()))
            .collect::<Vec<_>>()
    };
    let a = ids(21);
    assert!(a.len() > 500, "a week of history: {}", a.len());
    assert_eq!(a, ids(21));
    assert_ne!(a, ids(22));
    let (sim, _) = simulator(21);
    let state = sim.shared.lock();
    assert!(state.us.pending_steps() > 0, "late engagement of the seeded week still to come");
}

async fn send_to(router: &Router, recipient: &str) {
    let fields = [("from", "ops@mg.example.com"), ("to", recipient), ("subject", "cap"), ("text", "t")];
    let sent = form(router, "POST", "/v3/mg.example.com/messages", &fields).await;
    assert_eq!(sent.status, 200, "{}", sent.text);
}

/// Every event of the domain, paged `limit` at a time through the page URLs.
async fn all_events(router: &Router, mut path: String) -> Vec<Value> {
    let mut all = Vec::new();
    loop {
        let page = get(router, &path).await;
        assert_eq!(page.status, 200, "{}", page.text);
        let items = page.body["items"].as_array().unwrap().clone();
        if items.is_empty() {
            return all;
        }
        all.extend(items);
        path = page.body["paging"]["next"].as_str().unwrap().trim_start_matches("http://127.0.0.1:7706").to_owned();
    }
}

#[tokio::test]
async fn past_the_message_cap_the_oldest_go_with_their_events() {
    let (sim, clock) = simulator(5);
    let router = sim.router();
    sim.shared.lock().us.set_limits(region::Limits { messages: 4, ..region::Limits::default() });
    for i in 0..3 {
        send_to(&router, &format!("cap-{i}@example.com")).await;
    }
    clock.advance(5_000);
    sim.run_due();
    let first = events_for(&router, "mg.example.com", "cap-0@example.com").await;
    assert_eq!(kinds(&first), ["accepted", "delivered"]);
    let gone_url = first[0]["storage"]["url"].as_str().unwrap().trim_start_matches("http://127.0.0.1:7706").to_owned();
    assert_eq!(get(&router, &gone_url).await.status, 200);
    // A page URL taken now stays valid after the records it passed are evicted.
    let page = get(&router, "/v3/mg.example.com/events?limit=1&ascending=yes").await;
    let next = page.body["paging"]["next"].as_str().unwrap().trim_start_matches("http://127.0.0.1:7706").to_owned();
    for i in 3..8 {
        send_to(&router, &format!("cap-{i}@example.com")).await;
    }
    clock.advance(5_000);
    sim.run_due();
    assert_eq!(sim.shared.lock().us.messages.len(), 4);
    for i in 0..4 {
        assert!(events_for(&router, "mg.example.com", &format!("cap-{i}@example.com")).await.is_empty(), "cap-{i}");
    }
    for i in 4..8 {
        let events = events_for(&router, "mg.example.com", &format!("cap-{i}@example.com")).await;
        assert_eq!(kinds(&events), ["accepted", "delivered"], "cap-{i}");
        let url = events[0]["storage"]["url"].as_str().unwrap().trim_start_matches("http://127.0.0.1:7706").to_owned();
        assert_eq!(get(&router, &url).await.status, 200);
    }
    let gone = get(&router, &gone_url).await;
    assert_eq!((gone.status, gone.body["message"].as_str()), (404, Some("Message not found")));
    // Every event listed is of a kept message, each once; the old page URL pages on.
    let listed = all_events(&router, "/v3/mg.example.com/events?limit=3".into()).await;
    let recipients: Vec<&str> = listed.iter().map(|e| e["recipient"].as_str().unwrap()).collect();
    assert_eq!(recipients.len(), 8);
    assert!(recipients.iter().all(|r| ["cap-4", "cap-5", "cap-6", "cap-7"].iter().any(|c| r.starts_with(c))));
    let after = all_events(&router, next).await;
    assert_eq!(after.len(), 8, "the old cursor walks what is kept");
    let stats = get(&router, "/v3/mg.example.com/stats/total?event=accepted&duration=1d").await;
    let accepted: u64 =
        stats.body["stats"].as_array().unwrap().iter().map(|r| r["accepted"]["total"].as_u64().unwrap()).sum();
    assert_eq!(accepted, 4);
}

#[tokio::test]
async fn past_the_event_cap_the_oldest_messages_go_whole() {
    let (sim, clock) = simulator(6);
    let router = sim.router();
    sim.shared.lock().us.set_limits(region::Limits { events: 5, ..region::Limits::default() });
    assert!(sim.shared.lock().us.events.len() <= 5);
    for i in 0..4 {
        send_to(&router, &format!("ev-{i}@example.com")).await;
        clock.advance(5_000);
        sim.run_due();
    }
    let listed = all_events(&router, "/v3/mg.example.com/events?limit=2".into()).await;
    assert!(listed.len() <= 5);
    // Whole messages went: what is listed is the newest two, accepted and delivered each.
    let mut recipients: Vec<&str> = listed.iter().map(|e| e["recipient"].as_str().unwrap()).collect();
    recipients.sort_unstable();
    assert_eq!(recipients, ["ev-2@example.com", "ev-2@example.com", "ev-3@example.com", "ev-3@example.com"]);
    assert_eq!(sim.shared.lock().us.messages.len(), 2);
}

#[tokio::test]
async fn events_and_stored_messages_age_out_on_the_sandbox_clock() {
    let (sim, clock) = simulator(7);
    let router = sim.router();
    send_to(&router, "old@example.com").await;
    clock.advance(5_000);
    sim.run_due();
    let events = events_for(&router, "mg.example.com", "old@example.com").await;
    let url = events[0]["storage"]["url"].as_str().unwrap().trim_start_matches("http://127.0.0.1:7706").to_owned();
    // Past three days the content is gone and the events stay.
    clock.advance(3 * 86_400_000 + 3_600_000);
    sim.run_due();
    assert_eq!(get(&router, &url).await.status, 404);
    assert_eq!(kinds(&events_for(&router, "mg.example.com", "old@example.com").await)[..2], ["accepted", "delivered"]);
    // Past the event retention nothing is left of the seeded week or of the send.
    clock.advance(region::EVENT_RETENTION_MS);
    sim.run_due();
    assert!(events_for(&router, "mg.example.com", "old@example.com").await.is_empty());
    assert!(all_events(&router, "/v3/mg.example.com/events?limit=300".into()).await.is_empty());
    let state = sim.shared.lock();
    assert_eq!((state.us.messages.len(), state.us.events.len()), (0, 0));
}

#[tokio::test]
async fn past_a_suppression_tables_cap_the_oldest_records_go() {
    let (sim, _) = simulator(12);
    let router = sim.router();
    sim.shared.lock().us.domain_mut("mg.example.com").unwrap().suppressions.cap = 4;
    for address in ["new1@example.com", "new2@example.com"] {
        let added = form(&router, "POST", "/v3/mg.example.com/bounces", &[("address", address)]).await;
        assert_eq!(added.status, 200, "{}", added.text);
    }
    let listed = all_suppressions(&router, "/v3/mg.example.com/bounces?limit=2").await;
    assert_eq!(listed, ["full@example.com", "gone@example.org", "new1@example.com", "new2@example.com"]);
    let gone = get(&router, "/v3/mg.example.com/bounces/bounced@example.net").await;
    assert_eq!((gone.status, gone.body["message"].as_str()), (404, Some("Address not found in bounces table")));
    assert_eq!(get(&router, "/v3/mg.example.com/bounces/new2@example.com").await.status, 200);
}

async fn all_suppressions(router: &Router, first: &str) -> Vec<String> {
    let mut url = first.to_owned();
    let mut addresses = Vec::new();
    loop {
        let page = get(router, &url).await;
        let items = page.body["items"].as_array().unwrap().clone();
        if items.is_empty() {
            return addresses;
        }
        addresses.extend(items.iter().map(|i| i["address"].as_str().unwrap().to_owned()));
        url = page.body["paging"]["next"].as_str().unwrap().trim_start_matches("http://127.0.0.1:7706").to_owned();
    }
}

#[tokio::test]
async fn past_the_route_and_list_caps_the_earliest_created_go() {
    let (sim, _) = simulator(13);
    let router = sim.router();
    let routes = get(&router, "/v3/routes").await.body;
    assert_eq!(routes["total_count"], 2);
    let earliest = routes["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["description"] == "Support mail to the ops inbox")
        .map(|r| r["id"].as_str().unwrap().to_owned())
        .unwrap();
    {
        let mut state = sim.shared.lock();
        state.us.routes.cap = 2;
        state.us.lists.cap = 2;
    }
    let fields = [("expression", "catch_all()"), ("action", "stop()"), ("description", "new")];
    let created = form(&router, "POST", "/v3/routes", &fields).await;
    assert_eq!(created.status, 200, "{}", created.text);
    let routes = get(&router, "/v3/routes").await.body;
    assert_eq!(routes["total_count"], 2);
    let ids: Vec<&str> = routes["items"].as_array().unwrap().iter().map(|r| r["id"].as_str().unwrap()).collect();
    assert!(!ids.contains(&earliest.as_str()));
    assert!(ids.contains(&created.body["route"]["id"].as_str().unwrap()));
    assert_eq!(get(&router, &format!("/v3/routes/{earliest}")).await.status, 404);

    let made = form(&router, "POST", "/v3/lists", &[("address", "new@mg.example.com")]).await;
    assert_eq!(made.status, 200, "{}", made.text);
    let lists = get(&router, "/v3/lists/pages").await.body;
    let addresses: Vec<&str> =
        lists["items"].as_array().unwrap().iter().map(|l| l["address"].as_str().unwrap()).collect();
    assert_eq!(addresses.len(), 2);
    assert!(addresses.contains(&"new@mg.example.com") && !addresses.contains(&"developers@mg.example.com"));
    assert_eq!(get(&router, "/v3/lists/developers@mg.example.com").await.status, 404);
}

#[test]
fn past_the_domain_cap_a_new_domain_is_refused() {
    let mut domains = std::collections::BTreeMap::new();
    let mut ids = crate::sandbox::ids::Ids::new(1, 2);
    for n in 0..domains::MAX_DOMAINS {
        let form = request::Query::parse(&format!("name=d{n}.example.com")).unwrap();
        let domain = domains::create(&domains, &mut ids, &form, 0).unwrap();
        domains.insert(domain.name.clone(), domain);
    }
    let form = request::Query::parse("name=one-more.example.com").unwrap();
    let refused = domains::create(&domains, &mut ids, &form, 0).unwrap_err();
    let MailgunError::Refused(refusal) = refused else { panic!("a JSON refusal: {refused:?}") };
    assert_eq!(refusal.status, 400);
    let message = refusal.body["message"].as_str().unwrap_or_default();
    assert!(message.contains("at most 1000 domains") && message.contains("not Mailgun's"), "{message}");
}

// Issue 22: the simulator is as lenient as Mailgun, never stricter.

#[tokio::test]
async fn php_array_field_names_send_like_plain_ones() {
    let (_sim, _) = simulator(21);
    let router = _sim.router();
    let sent = form(
        &router,
        "POST",
        "/v3/mg.example.com/messages",
        &[
            ("from[]", "Ops <ops@mg.example.com>"),
            ("to[]", "alice@example.com"),
            ("to[]", "bob@example.com"),
            ("cc[0]", "carol@example.com"),
            ("subject", "Hi"),
            ("text", "Hello"),
        ],
    )
    .await;
    assert_eq!((sent.status, sent.body["message"].as_str()), (200, Some("Queued. Thank you.")), "{}", sent.text);
    for recipient in ["alice@example.com", "bob@example.com", "carol@example.com"] {
        assert_eq!(kinds(&events_for(&router, "mg.example.com", recipient).await)[..1], ["accepted"]);
    }
    // A bracket that is no array index stays part of the name.
    assert_eq!(plain_field_name("v:a[b]"), "v:a[b]");
    assert_eq!(plain_field_name("[]"), "[]");
    assert_eq!(plain_field_name("o:tag[]"), "o:tag");
}

#[tokio::test]
async fn a_route_forwards_to_any_string_as_mailgun_keeps_it() {
    let (sim, _) = simulator(22);
    let router = sim.router();
    let created = form(
        &router,
        "POST",
        "/v3/routes",
        &[("expression", "catch_all()"), ("action", r#"forward(".*@mg.example.com")"#), ("action", "stop()")],
    )
    .await;
    assert_eq!((created.status, created.body["message"].as_str()), (200, Some("Route has been created")));
    assert_eq!(created.body["route"]["actions"], json!([r#"forward(".*@mg.example.com")"#, "stop()"]));
}

#[tokio::test]
async fn a_bounce_code_is_stored_as_given() {
    let (sim, _) = simulator(23);
    let router = sim.router();
    let created = form(
        &router,
        "POST",
        "/v3/mg.example.com/bounces",
        &[("address", "odd@example.com"), ("code", "777"), ("error", "odd")],
    )
    .await;
    assert_eq!(created.status, 200, "{}", created.text);
    assert_eq!(created.body["message"], "Address has been added to the bounces table");
    assert_eq!(get(&router, "/v3/mg.example.com/bounces/odd@example.com").await.body["code"], "777");
}

#[tokio::test]
async fn a_domain_not_on_the_account_is_forbidden_text_on_every_domain_route() {
    let (sim, _) = simulator(24);
    let router = sim.router();
    let send_fields = [("from", "o@x.com"), ("to", "a@example.com"), ("subject", "s"), ("text", "t")];
    let answers = [
        form(&router, "POST", "/v3/nope.example.com/messages", &send_fields).await,
        form(&router, "POST", "/v3/nope.example.com/messages.mime", &[("to", "a@example.com"), ("message", "x")]).await,
        get(&router, "/v3/nope.example.com/events").await,
        get(&router, "/v3/nope.example.com/stats/total?event=accepted").await,
        get(&router, "/v3/nope.example.com/bounces").await,
        get(&router, "/v3/nope.example.com/unsubscribes/a@example.com").await,
        form(&router, "POST", "/v3/nope.example.com/complaints", &[("address", "a@example.com")]).await,
    ];
    for answer in answers {
        assert_eq!((answer.status, answer.text.as_str()), (401, "Forbidden"));
    }
    // The domain management routes keep their documented JSON 404.
    let managed = get(&router, "/v3/domains/nope.example.com").await;
    assert_eq!((managed.status, managed.body.clone()), (404, json!({"message": "Domain not found"})));
}

#[tokio::test]
async fn a_webhook_off_this_machine_is_kept_and_logged_not_sent() {
    let (sim, _) = simulator(25);
    let router = sim.router();
    let url = "https://hooks.example.com/mailgun";
    let created =
        form(&router, "POST", "/v3/domains/mg.example.com/webhooks", &[("id", "accepted"), ("url", url)]).await;
    assert_eq!(
        (created.status, created.body.clone()),
        (200, json!({"message": "Webhook has been created", "webhook": {"urls": [url]}}))
    );
    assert_eq!(
        get(&router, "/v3/domains/mg.example.com/webhooks/accepted").await.body["webhook"]["urls"],
        json!([url])
    );
    let other = "http://10.0.0.1/hook";
    let updated = form(&router, "PUT", "/v3/domains/mg.example.com/webhooks/accepted", &[("url", other)]).await;
    assert_eq!((updated.status, updated.body["webhook"]["urls"].clone()), (200, json!([other])));
    let refused =
        form(&router, "POST", "/v3/domains/mg.example.com/webhooks", &[("id", "clicked"), ("url", "no url")]).await;
    assert_eq!((refused.status, refused.body.clone()), (400, json!({"Reason": "no url is not a valid url"})));
    let sent = form(
        &router,
        "POST",
        "/v3/mg.example.com/messages",
        &[("from", "ops@mg.example.com"), ("to", "alice@example.com"), ("subject", "s"), ("text", "t")],
    )
    .await;
    assert_eq!(sent.status, 200);
    let control = sim.control_router().unwrap();
    let request = Request::builder().uri("/webhooks").body(Body::empty()).unwrap();
    let response = control.oneshot(request).await.unwrap();
    let log: Value = serde_json::from_slice(&to_bytes(response.into_body(), usize::MAX).await.unwrap()).unwrap();
    let attempts = log["us"]["attempts"].as_array().unwrap();
    let attempt = attempts.iter().find(|a| a["url"] == other).expect("logged");
    assert_eq!((attempt["outcome"].as_str(), attempt["why"].as_str()), (Some("not sent"), Some("not a loopback URL")));
    assert_eq!(attempt["event"], "accepted");
    assert_eq!(sim.shared.lock().us.outbox.pending(), 0, "nothing is queued to be sent off this machine");
}

#[tokio::test]
async fn paths_and_methods_not_served_are_mailguns_404_saying_so() {
    let (sim, _) = simulator(26);
    let router = sim.router();
    let cases = [
        ("PATCH", "/v3/domains", "PATCH /v3/domains"),
        ("POST", "/v3/domains/mg.example.com", "POST /v3/domains/mg.example.com"),
        ("GET", "/v3/domains/mg.example.com/verify", "GET /v3/domains/mg.example.com/verify"),
        ("GET", "/v3/mg.example.com/messages", "GET /v3/mg.example.com/messages"),
        ("PUT", "/v3/mg.example.com/bounces", "PUT /v3/mg.example.com/bounces"),
        ("POST", "/v3/routes/abc", "POST /v3/routes/abc"),
        ("PATCH", "/v3/lists", "PATCH /v3/lists"),
        ("GET", "/v5/anything/here", "GET /v5/anything/here"),
        ("DELETE", "/v3/stats/total", "DELETE /v3/stats/total"),
    ];
    for (method, path, said) in cases {
        let answer = send(&router, method, path, None, Vec::new(), credentials::MAILGUN_KEY).await;
        assert_eq!(
            (answer.status, answer.body.clone()),
            (404, json!({"message": format!("Not Found: {said} is not simulated by the opsdeck sandbox")})),
            "{method} {path}"
        );
    }
}

#[tokio::test]
async fn a_route_may_have_no_action_and_php_style_action_keys() {
    let (sim, _) = simulator(27);
    let router = sim.router();
    let bare = form(&router, "POST", "/v3/routes", &[("expression", "match_recipient('test@mg.example.com')")]).await;
    assert_eq!((bare.status, bare.body["message"].as_str()), (200, Some("Route has been created")), "{}", bare.text);
    assert_eq!((bare.body["route"]["actions"].clone(), bare.body["route"]["priority"].clone()), (json!([]), json!(0)));
    assert_eq!(bare.body["route"]["description"], "");
    let bracketed = form(
        &router,
        "POST",
        "/v3/routes",
        &[
            ("priority", "1"),
            ("expression", "match_recipient('.*@gmail.com')"),
            ("action[]", "forward('gmail@example.com')"),
            ("action[]", "stop()"),
        ],
    )
    .await;
    assert_eq!(bracketed.body["route"]["actions"], json!(["forward('gmail@example.com')", "stop()"]));
}

#[tokio::test]
async fn sends_on_the_old_v2_paths_are_answered_as_on_v3() {
    let (sim, _) = simulator(28);
    let router = sim.router();
    let fields = [("from", "ops@mg.example.com"), ("to", "v2@example.com"), ("subject", "Test"), ("text", "t")];
    let sent = form(&router, "POST", "/v2/mg.example.com/messages", &fields).await;
    assert_eq!((sent.status, sent.body["message"].as_str()), (200, Some("Queued. Thank you.")), "{}", sent.text);
    let wrong_key = send(
        &router,
        "POST",
        "/v2/mg.example.com/messages",
        Some("application/x-www-form-urlencoded"),
        b"to=a@b.com".to_vec(),
        "nope",
    )
    .await;
    assert_eq!((wrong_key.status, wrong_key.text.as_str()), (401, "Forbidden"));
    // Its other paths stay not simulated.
    assert_eq!(get(&router, "/v2/mg.example.com/bounces").await.status, 404);
}

#[tokio::test]
async fn a_mime_send_is_answered_with_the_messages_own_id() {
    let (sim, _) = simulator(29);
    let router = sim.router();
    let message = b"From: ops@mg.example.com\r\nTo: m@example.com\r\nMessage-ID: <4fc84273c474_48dd@rouge.local.mail>\r\nSubject: Test\r\n\r\nhello\r\n";
    let body = multipart(&[("to", "m@example.com")], &[("message", "message.mime", "message/rfc822", message)]);
    let sent = send_mime(&router, body).await;
    assert_eq!(sent.body, json!({"id": "<4fc84273c474_48dd@rouge.local.mail>", "message": "Queued. Thank you."}));
    let events = events_for(&router, "mg.example.com", "m@example.com").await;
    assert_eq!(events[0]["message"]["headers"]["message-id"], "4fc84273c474_48dd@rouge.local.mail");
}

#[tokio::test]
async fn deleting_an_unknown_unsubscribe_is_the_documented_404() {
    let (sim, _) = simulator(21);
    let router = sim.router();
    let delete = |path: &'static str| {
        let router = router.clone();
        async move { send(&router, "DELETE", path, None, Vec::new(), credentials::MAILGUN_KEY).await }
    };
    // The v2 API deleted one tag's record by its id; v3 records have none, so it is no address.
    let by_id = delete("/v3/mg.example.com/unsubscribes/4fc9806d8393c1618264c360").await;
    assert_eq!((by_id.status, by_id.body), (404, json!({"message": "Unsubscribe event for this tag does not exist"})));
    form(&router, "POST", "/v3/mg.example.com/unsubscribes", &[("address", "u@example.com"), ("tag", "*")]).await;
    let removed = delete("/v3/mg.example.com/unsubscribes/u@example.com").await;
    assert_eq!(
        (removed.status, removed.body),
        (200, json!({"message": "Unsubscribe event has been removed", "address": "u@example.com"}))
    );
    // A lookup keeps its own wording; so do the other tables' deletes.
    assert_eq!(
        get(&router, "/v3/mg.example.com/unsubscribes/u@example.com").await.body["message"],
        "Address not found in unsubscribers table"
    );
    assert_eq!(
        delete("/v3/mg.example.com/bounces/nobody@example.com").await.body["message"],
        "Address not found in bounces table"
    );
}

#[tokio::test]
async fn a_multipart_part_without_a_name_is_ignored() {
    let (sim, _) = simulator(22);
    let router = sim.router();
    let body = "--b1\r\nContent-Disposition: form-data; name=\"from\"\r\n\r\nme@mg.example.com\r\n\
--b1\r\nContent-Disposition: form-data; name=\"to\"\r\n\r\nyou@example.com\r\n\
--b1\r\nContent-Disposition: form-data\r\n\r\nno name here\r\n\
--b1\r\nContent-Disposition: form-data; name=\"subject\"\r\n\r\nHi\r\n\
--b1\r\nContent-Disposition: form-data; name=\"text\"\r\n\r\nHello\r\n--b1--\r\n";
    let sent = send(
        &router,
        "POST",
        "/v3/mg.example.com/messages",
        Some("multipart/form-data; boundary=b1"),
        body.as_bytes().to_vec(),
        credentials::MAILGUN_KEY,
    )
    .await;
    assert_eq!((sent.status, &sent.body["message"]), (200, &json!("Queued. Thank you.")), "{}", sent.text);
}
