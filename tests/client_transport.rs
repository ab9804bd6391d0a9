//! The client's transport rules against small loopback servers: retries only for idempotent
//! requests (honouring `Retry-After`), timeouts, non-JSON and oversized bodies, auth headers.

#![allow(clippy::unwrap_used, reason = "a test panics on failure")]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use axum::http::{HeaderMap, StatusCode};
use axum::routing::any;
use axum::Router;
use opsdeck::catalog::Service;
use opsdeck::client::{self, CallError, Credentials, HttpSettings, Secret, Target, Values};
use tokio_util::sync::CancellationToken;

async fn serve(router: Router) -> String {
    opsdeck::sandbox::serve_loopback(router).await.unwrap()
}

fn target(service: Service, base_url: String, credentials: Credentials) -> Target {
    Target { service, base_url, credentials, live: true }
}

async fn call(
    target: &Target,
    op: &str,
    params: &[(&str, &str)],
    settings: HttpSettings,
) -> Result<client::Response, CallError> {
    let op = target.service.operation(op).unwrap();
    let values: Values = params.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
    let request = client::build(op, &values, None, target)?;
    let http = client::http_client(&settings).unwrap();
    client::request::execute(&http, &request, &target.credentials, &settings, &CancellationToken::new()).await
}

/// A server that answers 503 (with `Retry-After: 0`) `failures` times, then 200; counts hits.
async fn flaky(failures: usize) -> (String, Arc<AtomicUsize>) {
    let hits = Arc::new(AtomicUsize::new(0));
    let counter = hits.clone();
    let router = Router::new().fallback(any(move || {
        let counter = counter.clone();
        async move {
            let n = counter.fetch_add(1, Ordering::SeqCst);
            if n < failures {
                (
                    StatusCode::SERVICE_UNAVAILABLE,
                    [("retry-after", "0")],
                    r#"{"error":{"message":"busy","code":50004,"statusCode":503}}"#,
                )
            } else {
                (StatusCode::OK, [("retry-after", "0")], "[1700000000000]")
            }
        }
    }));
    (serve(router).await, hits)
}

#[tokio::test]
async fn idempotent_requests_are_retried_and_posts_never() {
    let (url, hits) = flaky(2).await;
    let ably = target(Service::Ably, url, Credentials::AblyKey(Secret::new("a.b:c")));
    let response = call(&ably, "time_get", &[], HttpSettings::default()).await.unwrap();
    assert_eq!(response.status, 200);
    assert_eq!(hits.load(Ordering::SeqCst), 3, "two retries, then success");

    let (url, hits) = flaky(5).await;
    let ably = target(Service::Ably, url, Credentials::AblyKey(Secret::new("a.b:c")));
    let error = call(&ably, "time_get", &[], HttpSettings::default()).await.unwrap_err();
    assert!(matches!(&error, CallError::Api(e) if e.status == 503 && e.message == "busy"), "{error:?}");
    assert_eq!(hits.load(Ordering::SeqCst), 3, "gives up after three attempts");

    let (url, hits) = flaky(1).await;
    let ably = target(Service::Ably, url, Credentials::AblyKey(Secret::new("a.b:c")));
    let error = call(&ably, "messages_publish", &[("channelId", "x"), ("name", "n")], HttpSettings::default()).await;
    assert!(matches!(error, Err(CallError::Api(ref e)) if e.status == 503));
    assert_eq!(hits.load(Ordering::SeqCst), 1, "a POST is never retried");
}

#[tokio::test]
async fn timeouts_and_oversized_bodies_are_clear_errors() {
    let router = Router::new()
        .route(
            "/time",
            any(|| async {
                tokio::time::sleep(Duration::from_secs(5)).await;
                "[1]"
            }),
        )
        .route("/channels", any(|| async { "x".repeat(4096) }));
    let url = serve(router).await;
    let ably = target(Service::Ably, url, Credentials::AblyKey(Secret::new("a.b:c")));
    let quick = HttpSettings { request_timeout: Duration::from_millis(200), ..HttpSettings::default() };
    let error = call(&ably, "time_get", &[], quick).await.unwrap_err();
    assert!(matches!(error, CallError::Timeout { .. }), "{error:?}");
    assert!(error.to_string().contains("no answer in 0.2 s"), "{error}");
    let small = HttpSettings { max_body_bytes: 1024, ..HttpSettings::default() };
    let error = call(&ably, "channels_list", &[], small).await.unwrap_err();
    assert!(matches!(error, CallError::TooLarge { .. }), "{error:?}");
}

#[tokio::test]
async fn non_json_error_bodies_fall_back_to_the_text() {
    let router = Router::new().fallback(any(|| async { (StatusCode::BAD_GATEWAY, "<html>upstream down</html>") }));
    let url = serve(router).await;
    let coinbase = target(
        Service::Coinbase,
        url,
        Credentials::Coinbase { key: "k".into(), secret: Secret::new("c2VjcmV0"), passphrase: Secret::new("p") },
    );
    let error = call(
        &coinbase,
        "orders_create",
        &[("product_id", "BTC-USD"), ("side", "buy"), ("type", "market"), ("size", "0.1")],
        HttpSettings::default(),
    )
    .await;
    match error {
        Err(CallError::Api(e)) => assert_eq!((e.status, e.message.as_str()), (502, "<html>upstream down</html>")),
        other => panic!("{other:?}"),
    }
}

/// Echoes the request's auth headers back as JSON.
async fn echo_headers() -> String {
    let router = Router::new().fallback(any(|headers: HeaderMap| async move {
        let pick = |name: &str| headers.get(name).map(|v| v.to_str().unwrap().to_owned());
        serde_json::json!({
            "authorization": pick("authorization"),
            "cb_key": pick("cb-access-key"),
            "cb_sign": pick("cb-access-sign"),
            "cb_timestamp": pick("cb-access-timestamp"),
            "cb_passphrase": pick("cb-access-passphrase"),
        })
        .to_string()
    }));
    serve(router).await
}

#[tokio::test]
async fn every_vendor_sends_its_own_auth() {
    let url = echo_headers().await;
    let cases = [
        (Service::Deepgram, Credentials::Deepgram(Secret::new("dg-key")), "Token dg-key"),
        (
            Service::Avatax,
            Credentials::Avatax { account_id: "1100000001".into(), license_key: Secret::new("LIC") },
            "Basic MTEwMDAwMDAwMTpMSUM=",
        ),
        (Service::Taxjar, Credentials::Taxjar(Secret::new("tj")), "Bearer tj"),
        (Service::Mailgun, Credentials::Mailgun(Secret::new("mg")), "Basic YXBpOm1n"),
        (Service::Easypost, Credentials::Easypost(Secret::new("EZ")), "Basic RVo6"),
        (Service::Ably, Credentials::AblyKey(Secret::new("app.key:secret")), "Basic YXBwLmtleTpzZWNyZXQ="),
        (Service::Ably, Credentials::AblyToken(Secret::new("tok")), "Bearer dG9r"),
    ];
    for (service, credentials, expected) in cases {
        let op = service
            .operations()
            .iter()
            .find(|op| {
                op.method == opsdeck::catalog::Method::Get
                    && op.params.iter().all(|p| !p.required)
                    && op.name != "time_get"
            })
            .unwrap();
        let response =
            call(&target(service, url.clone(), credentials), op.name, &[], HttpSettings::default()).await.unwrap();
        let seen: serde_json::Value = serde_json::from_slice(&response.body).unwrap();
        assert_eq!(seen["authorization"], expected, "{service} {}", op.name);
    }
    let coinbase = target(
        Service::Coinbase,
        url,
        Credentials::Coinbase {
            key: "cb-key".into(),
            secret: Secret::new("c2VjcmV0"),
            passphrase: Secret::new("pass"),
        },
    );
    let response = call(&coinbase, "accounts_list", &[], HttpSettings::default()).await.unwrap();
    let seen: serde_json::Value = serde_json::from_slice(&response.body).unwrap();
    assert_eq!(seen["cb_key"], "cb-key");
    assert_eq!(seen["cb_passphrase"], "pass");
    let timestamp = seen["cb_timestamp"].as_str().unwrap();
    let expected = client::auth::coinbase_signature("c2VjcmV0", timestamp, "GET", "/accounts", b"").unwrap();
    assert_eq!(seen["cb_sign"], expected.as_str());
}
