//! The client's trust boundaries against loopback fake upstreams: credentials never leave the
//! configured origin (redirects, next links), dry runs print nothing usable, every failure ends
//! within its time budget and says what happened, and a success that is not JSON is an error.

#![allow(clippy::unwrap_used, reason = "a test panics on failure")]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::routing::any;
use axum::Router;
use base64::Engine as _;
use opsdeck::catalog::Service;
use opsdeck::client::{self, auth, pagination, CallError, Credentials, HttpSettings, Secret, Target, Values};
use tokio_util::sync::CancellationToken;

async fn serve(router: Router) -> String {
    opsdeck::sandbox::serve_loopback(router).await.unwrap()
}

/// A loopback listener that only counts the connections made to it (a request needs one).
async fn bystander() -> (String, Arc<AtomicUsize>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let connections = Arc::new(AtomicUsize::new(0));
    let counter = connections.clone();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            counter.fetch_add(1, Ordering::SeqCst);
            drop(stream);
        }
    });
    (format!("http://{addr}"), connections)
}

fn coinbase(base_url: String) -> Target {
    Target {
        service: Service::Coinbase,
        base_url,
        credentials: Credentials::Coinbase {
            key: "cb-key".into(),
            secret: Secret::new("c2VjcmV0"),
            passphrase: Secret::new("cb-pass"),
        },
        live: true,
    }
}

fn ably(base_url: String) -> Target {
    Target {
        service: Service::Ably,
        base_url,
        credentials: Credentials::AblyKey(Secret::new("app.key:s3cr3t")),
        live: true,
    }
}

fn prepare(target: &Target, op: &str, params: &[(&str, &str)]) -> client::PreparedRequest {
    let op = target.service.operation(op).unwrap();
    let values: Values = params.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
    client::build(op, &values, None, target).unwrap()
}

async fn send(
    target: &Target,
    request: &client::PreparedRequest,
    settings: HttpSettings,
) -> Result<client::Response, CallError> {
    let http = client::http_client(&settings).unwrap();
    client::request::execute(&http, request, &target.credentials, &settings, &CancellationToken::new()).await
}

async fn call(
    target: &Target,
    op: &str,
    params: &[(&str, &str)],
    settings: HttpSettings,
) -> Result<client::Response, CallError> {
    send(target, &prepare(target, op, params), settings).await
}

#[tokio::test]
async fn a_redirect_to_another_origin_is_refused_and_never_reached() {
    let (elsewhere, connections) = bystander().await;
    let location = format!("{elsewhere}/steal");
    let router = Router::new()
        .route("/accounts", any(move || async move { (StatusCode::FOUND, [("location", location)]).into_response() }))
        .route("/here", any(|| async { (StatusCode::TEMPORARY_REDIRECT, [("location", "/there")]) }))
        .route("/there", any(|| async { "[]" }));
    let url = serve(router).await;
    let target = coinbase(url.clone());

    let error = call(&target, "accounts_list", &[], HttpSettings::default()).await.unwrap_err();
    let CallError::OffOrigin { url: refused, origin } = &error else { panic!("{error:?}") };
    assert_eq!(refused, &format!("{elsewhere}/steal"));
    assert_eq!(origin, &pagination::origin(&url).unwrap());
    assert!(error.to_string().contains(&format!("refused to follow {elsewhere}/steal")), "{error}");
    assert_eq!(connections.load(Ordering::SeqCst), 0, "the other origin got a connection");

    // Within the origin a redirect is followed.
    let mut request = prepare(&target, "accounts_list", &[]);
    request.url = format!("{url}/here");
    let response = send(&target, &request, HttpSettings::default()).await.unwrap();
    assert_eq!((response.status, &response.body[..]), (200, &b"[]"[..]));
}

#[tokio::test]
async fn an_ably_next_link_to_another_origin_is_refused_and_never_reached() {
    let (elsewhere, connections) = bystander().await;
    let link = format!("<{elsewhere}/channels?cursor=2>; rel=\"next\"");
    let router = Router::new().fallback(any(move || {
        let link = link.clone();
        async move { ([("link", link), ("content-type", "application/json".to_owned())], "[\"a\"]") }
    }));
    let target = ably(serve(router).await);
    let request = prepare(&target, "channels_list", &[]);
    let response = send(&target, &request, HttpSettings::default()).await.unwrap();
    let op = Service::Ably.operation("channels_list").unwrap();
    let error = pagination::next_page(op.paging, &request, &response).unwrap_err();
    assert!(matches!(&error, CallError::OffOrigin { url, .. } if url.starts_with(&elsewhere)), "{error:?}");
    assert_eq!(connections.load(Ordering::SeqCst), 0);
}

/// A same-origin next link with user info (`http://evil:pw@host/...`) is followed without it:
/// the next page goes with the user's credential, not one the server chose.
#[tokio::test]
async fn a_next_link_with_user_info_is_followed_without_it() {
    let seen = Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let log = seen.clone();
    let router = Router::new().fallback(any(move |request: axum::extract::Request| {
        let log = log.clone();
        async move {
            let header =
                |name: &str| request.headers().get(name).and_then(|v| v.to_str().ok()).unwrap_or_default().to_owned();
            log.lock().unwrap().push(header("authorization"));
            let link = format!("<http://evil:pw@{}/channels?cursor=2>; rel=\"next\"", header("host"));
            ([("link", link), ("content-type", "application/json".to_owned())], "[\"a\"]")
        }
    }));
    let target = ably(serve(router).await);
    let request = prepare(&target, "channels_list", &[]);
    let response = send(&target, &request, HttpSettings::default()).await.unwrap();
    let op = Service::Ably.operation("channels_list").unwrap();
    let next = pagination::next_page(op.paging, &request, &response).unwrap().unwrap();
    assert!(!next.url.contains("evil") && !next.url.contains("pw@"), "{}", next.url);
    send(&target, &next, HttpSettings::default()).await.unwrap();
    let seen = seen.lock().unwrap().clone();
    let basic = |s: &str| format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(s));
    assert_eq!(seen, [basic("app.key:s3cr3t"), basic("app.key:s3cr3t")], "evil:pw is {:?}", basic("evil:pw"));
}

/// Every secret of `credentials` as it would travel: the raw values and the real auth headers.
fn secrets_of(request: &client::PreparedRequest, credentials: &Credentials) -> Vec<String> {
    let mut signed = request.clone();
    auth::authorize(&mut signed, credentials).unwrap();
    let mut secrets: Vec<String> = signed
        .headers
        .iter()
        .filter(|(name, _)| auth::is_secret_header(name) && !name.eq_ignore_ascii_case("cb-access-key"))
        .map(|(_, value)| value.clone())
        .collect();
    if let Ok(body) = serde_json::from_slice::<serde_json::Value>(signed.body.bytes()) {
        secrets.extend(["mac", "nonce"].iter().filter_map(|k| body[k].as_str().map(str::to_owned)));
    }
    secrets.extend(
        ["s3cr3t", "dg-secret", "LIC-secret", "tj-secret", "c2VjcmV0", "cb-pass", "mg-secret", "EZ-secret"]
            .map(String::from),
    );
    secrets
}

/// A target, an operation and its values, and what its dry run must show.
type DryRunCase = (Target, &'static str, Vec<(&'static str, &'static str)>, Vec<&'static str>);

#[tokio::test]
async fn dry_runs_hold_no_credential_and_no_signature_but_the_variables() {
    let base = "https://api.example.test".to_owned();
    let cases: Vec<DryRunCase> = vec![
        (ably(base.clone()), "channels_list", vec![], vec![r#"-u "$ABLY_API_KEY""#]),
        (
            Target {
                service: Service::Deepgram,
                credentials: Credentials::Deepgram(Secret::new("dg-secret")),
                ..ably(base.clone())
            },
            "projects_list",
            vec![],
            vec![r#"-H "Authorization: Token $DEEPGRAM_API_KEY""#],
        ),
        (
            Target {
                service: Service::Avatax,
                credentials: Credentials::Avatax {
                    account_id: "1100000001".into(),
                    license_key: Secret::new("LIC-secret"),
                },
                ..ably(base.clone())
            },
            "companies_list",
            vec![],
            vec![r#"-u "$AVATAX_ACCOUNT_ID:$AVATAX_LICENSE_KEY""#],
        ),
        (
            Target {
                service: Service::Taxjar,
                credentials: Credentials::Taxjar(Secret::new("tj-secret")),
                ..ably(base.clone())
            },
            "categories_list",
            vec![],
            vec![r#"-H "Authorization: Bearer $TAXJAR_API_KEY""#],
        ),
        (
            coinbase(base.clone()),
            "orders_create",
            vec![("product_id", "BTC-USD"), ("side", "buy"), ("type", "market"), ("size", "0.1")],
            vec![
                r#""CB-ACCESS-KEY: $COINBASE_API_KEY""#,
                r#""CB-ACCESS-PASSPHRASE: $COINBASE_API_PASSPHRASE""#,
                "CB-ACCESS-SIGN: <base64 HMAC-SHA256",
            ],
        ),
        (
            Target {
                service: Service::Mailgun,
                credentials: Credentials::Mailgun(Secret::new("mg-secret")),
                ..ably(base.clone())
            },
            "domains_list",
            vec![],
            vec![r#"-u "api:$MAILGUN_API_KEY""#],
        ),
        (
            Target {
                service: Service::Easypost,
                credentials: Credentials::Easypost(Secret::new("EZ-secret")),
                ..ably(base.clone())
            },
            "addresses_list",
            vec![],
            vec![r#"-u "$EASYPOST_API_KEY:""#],
        ),
        (
            ably(base.clone()),
            "tokens_request",
            vec![("keyName", "app.key"), ("ttl", "60000")],
            vec![auth::NONCE_PLACEHOLDER, auth::MAC_PLACEHOLDER],
        ),
    ];
    for (target, op, params, placeholders) in cases {
        let request = prepare(&target, op, &params);
        let curl = client::request::to_curl(&request, &target.credentials).unwrap();
        for secret in secrets_of(&request, &target.credentials) {
            assert!(!curl.contains(&secret), "{op}: the dry run shows {secret}: {curl}");
        }
        for placeholder in placeholders {
            assert!(curl.contains(placeholder), "{op}: no {placeholder} in {curl}");
        }
        assert!(!curl.contains("[redacted]"), "{op}: {curl}");
    }
}

#[tokio::test]
async fn a_dry_run_token_request_cannot_be_replayed_against_the_simulator() {
    let sandbox = opsdeck::sandbox::start(0, 7).await.unwrap();
    let target = opsdeck::config::sandbox_target(Service::Ably, sandbox.base_url(Service::Ably));
    let Credentials::AblyKey(key) = &target.credentials else { panic!("the simulator takes a key") };
    let key_name = key.expose().split_once(':').unwrap().0.to_owned();
    let request = prepare(&target, "tokens_request", &[("keyName", &key_name)]);
    let curl = client::request::to_curl(&request, &target.credentials).unwrap();
    let body = curl.split("--data-raw '").nth(1).unwrap().trim_end_matches('\'');
    let replay = reqwest::Client::new()
        .post(format!("{}/keys/{key_name}/requestToken", target.base_url))
        .header("content-type", "application/json")
        .body(body.to_owned())
        .send()
        .await
        .unwrap();
    assert!(replay.status().is_client_error(), "the printed token request minted a token: {}", replay.status());
    // The same request sent for real is signed as it goes.
    let token = send(&target, &request, HttpSettings::default()).await.unwrap();
    assert_eq!(token.status, 200);
}

/// A GET that never answers in time.
async fn silent() -> String {
    serve(Router::new().fallback(any(|| async {
        tokio::time::sleep(Duration::from_secs(30)).await;
        "[]"
    })))
    .await
}

#[tokio::test]
async fn a_timeout_says_how_long_how_often_and_in_all() {
    let target = ably(silent().await);
    let settings = HttpSettings {
        request_timeout: Duration::from_millis(200),
        total_timeout: Duration::from_secs(5),
        ..HttpSettings::default()
    };
    let error = call(&target, "channels_list", &[], settings).await.unwrap_err();
    let CallError::Timeout { attempts, total, .. } = &error else { panic!("{error:?}") };
    assert_eq!(*attempts, 3);
    assert!(*total >= Duration::from_millis(600), "{total:?}");
    let text = error.to_string();
    assert!(text.contains("no answer in 0.2 s, 3 attempts,") && text.contains(" s in all"), "{text}");

    // The total budget bounds the whole call, retries included: an attempt may wait 10 s, the
    // call half a second.
    let tight = HttpSettings {
        request_timeout: Duration::from_secs(10),
        total_timeout: Duration::from_millis(500),
        ..settings
    };
    let started = Instant::now();
    let error = call(&target, "channels_list", &[], tight).await.unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(9), "{:?}", started.elapsed());
    assert!(matches!(error, CallError::Timeout { attempts: 1, .. }), "{error:?}");
}

/// A server that answers 503 with `retry_after` once, then 200; counts hits.
async fn busy_once(retry_after: String) -> (String, Arc<AtomicUsize>) {
    let hits = Arc::new(AtomicUsize::new(0));
    let counter = hits.clone();
    let router = Router::new().fallback(any(move || {
        let (counter, retry_after) = (counter.clone(), retry_after.clone());
        async move {
            if counter.fetch_add(1, Ordering::SeqCst) == 0 {
                (StatusCode::SERVICE_UNAVAILABLE, [("retry-after", retry_after)], r#"{"error":{"message":"busy"}}"#)
                    .into_response()
            } else {
                "[]".into_response()
            }
        }
    }));
    (serve(router).await, hits)
}

fn http_date(at: std::time::SystemTime) -> String {
    let date = time::OffsetDateTime::from(at);
    let format = time::macros::format_description!(
        "[weekday repr:short], [day] [month repr:short] [year] [hour]:[minute]:[second] GMT"
    );
    date.format(&format).unwrap()
}

#[tokio::test]
async fn retry_after_beyond_the_budget_fails_at_once_and_dates_are_understood() {
    let budget = HttpSettings { total_timeout: Duration::from_secs(5), ..HttpSettings::default() };
    let (url, hits) = busy_once("120".into()).await;
    let started = Instant::now();
    let error = call(&ably(url), "channels_list", &[], budget).await.unwrap_err();
    // At once: not after the 120 s asked for, nor the 5 s budget.
    assert!(started.elapsed() < Duration::from_secs(4), "{:?}", started.elapsed());
    assert_eq!(hits.load(Ordering::SeqCst), 1);
    assert!(matches!(&error, CallError::RetryAfter { wait, .. } if *wait == Duration::from_secs(120)), "{error:?}");
    assert!(error.to_string().contains("asks to retry in 120 s, more than the"), "{error}");

    let in_an_hour = http_date(std::time::SystemTime::now() + Duration::from_secs(3600));
    let (url, hits) = busy_once(in_an_hour).await;
    let error = call(&ably(url), "channels_list", &[], budget).await.unwrap_err();
    assert!(matches!(&error, CallError::RetryAfter { wait, .. } if *wait > Duration::from_secs(3500)), "{error:?}");
    assert_eq!(hits.load(Ordering::SeqCst), 1);

    let soon = http_date(std::time::SystemTime::now() + Duration::from_secs(2));
    let (url, hits) = busy_once(soon).await;
    let started = Instant::now();
    let response = call(&ably(url), "channels_list", &[], budget).await.unwrap();
    assert_eq!(response.status, 200);
    assert_eq!(hits.load(Ordering::SeqCst), 2);
    assert!(started.elapsed() >= Duration::from_millis(900), "waited only {:?}", started.elapsed());
}

#[tokio::test]
async fn a_success_that_is_not_json_is_an_error_unless_the_operation_says_so() {
    let router = Router::new()
        .route(
            "/channels",
            any(|| async { ([("content-type", "text/html")], "<html>\u{1b}[2JSign in to the Wi-Fi</html>") }),
        )
        .route("/push/deviceRegistrations", any(|| async { StatusCode::NO_CONTENT }))
        .route("/v1/speak", any(|| async { ([("content-type", "audio/mpeg")], vec![0xffu8, 0xfb, 0x90, 0x00]) }))
        .route(
            "/v3/domains/{domain}/messages/{key}",
            any(|| async { ([("content-type", "message/rfc2822")], "From: a@example.com\r\n\r\nhi") }),
        );
    let url = serve(router).await;
    let error = call(&ably(url.clone()), "channels_list", &[], HttpSettings::default()).await.unwrap_err();
    let CallError::NotJson { status, content_type, preview, .. } = &error else { panic!("{error:?}") };
    assert_eq!((*status, content_type.as_str()), (200, "text/html"));
    assert!(preview.starts_with("<html>␛[2JSign in"), "{preview}");
    assert!(!error.to_string().contains('\u{1b}'));
    assert_eq!(error.exit_code(), 1);

    let empty = call(&ably(url.clone()), "push_device_list", &[], HttpSettings::default()).await.unwrap();
    assert_eq!(empty.status, 204);

    let deepgram = Target {
        service: Service::Deepgram,
        credentials: Credentials::Deepgram(Secret::new("k")),
        ..ably(url.clone())
    };
    let audio = call(&deepgram, "speech_speak", &[("text", "hello")], HttpSettings::default()).await.unwrap();
    assert_eq!(&audio.body[..], &[0xff, 0xfb, 0x90, 0x00]);

    let mailgun =
        Target { service: Service::Mailgun, credentials: Credentials::Mailgun(Secret::new("k")), ..ably(url) };
    let mime = [("domain", "mg.example.com"), ("storage_key", "k1"), ("Accept", "message/rfc2822")];
    let raw = call(&mailgun, "messages_get", &mime, HttpSettings::default()).await.unwrap();
    assert!(raw.body.starts_with(b"From:"));
    let error = call(&mailgun, "messages_get", &mime[..2], HttpSettings::default()).await.unwrap_err();
    assert!(matches!(error, CallError::NotJson { .. }), "{error:?}");
}

#[test]
fn local_checks_stop_a_bad_request_before_it_is_built() {
    let target = coinbase("https://api.example.test".into());
    let op = Service::Coinbase.operation("orders_create").unwrap();
    let values: Values = [("side".to_owned(), "sell".to_owned())].into();
    let body = serde_json::json!({"product_id": "BTC-USD", "side": "buy", "type": "market", "size": "1"});
    let error = client::build(op, &values, Some(&body), &target).unwrap_err();
    assert!(error.to_string().contains("side: given both as side=VALUE and in --body"), "{error}");
    assert_eq!(error.exit_code(), 2);

    let ably = ably("https://rest.example.test".into());
    let op = Service::Ably.operation("messages_list").unwrap();
    let values: Values = [("channelId", "a\u{1b}]52;c;x\u{7}"), ("start", "2024-05-02"), ("end", "2024-05-01")]
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .into();
    let error = client::build(op, &values, None, &ably).unwrap_err().to_string();
    assert!(error.contains("channelId: 'a␛]52;c;x␇' holds a control"), "{error}");
    assert!(error.contains("start: start '2024-05-02' is after end '2024-05-01'"), "{error}");
}

#[test]
fn a_dry_run_shows_no_secret_typed_into_the_body() {
    let target = Target {
        service: Service::Easypost,
        base_url: "https://api.easypost.com".into(),
        credentials: Credentials::Easypost(Secret::new("EZ-secret")),
        live: true,
    };
    let webhook = r#"{"url":"https://user:pa55word@hooks.example.com/in","webhook_secret":"whsec-typed-in","custom_headers":[{"name":"Authorization","value":"Bearer typed-token-1"}]}"#;
    let request = prepare(&target, "webhooks_create", &[("webhook", webhook)]);
    for copy in [
        client::request::to_curl(&request, &target.credentials).unwrap(),
        client::request::to_httpie(&request, &target.credentials).unwrap(),
    ] {
        for secret in ["whsec-typed-in", "typed-token-1", "pa55word", "EZ-secret"] {
            assert!(!copy.contains(secret), "the copy shows {secret}: {copy}");
        }
        assert!(copy.contains("hooks.example.com/in"), "the rest of the body stays: {copy}");
        assert!(copy.ends_with("# secrets in the body are shown as [redacted]"), "{copy}");
    }
}
