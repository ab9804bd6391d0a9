//! `opsdeck call` against a loopback server that answers with random text: record contents,
//! error messages, raw error bodies and next links full of control characters, C1 controls and
//! bidi overrides. Nothing the server says may reach stderr as a character the terminal would
//! act on, and JSON on stdout stays valid JSON with those characters escaped.

#![allow(clippy::unwrap_used, reason = "a test panics on failure")]

use std::process::{Command, Output};
use std::sync::Arc;

use axum::http::{StatusCode, Uri};
use axum::response::IntoResponse;
use opsdeck::inert::is_unsafe;
use opsdeck::sandbox::rng::Rng;
use serde_json::{json, Value};

/// Characters a hostile server would pick, with ordinary text between them.
fn hostile_text(rng: &mut Rng, len: u64) -> String {
    const NASTY: &[char] = &[
        '\u{1b}', '\u{7}', '\u{8}', '\r', '\n', '\t', '\u{0}', '\u{7f}', '\u{9b}', '\u{9d}', '\u{85}', '\u{202e}',
        '\u{202a}', '\u{2066}', '\u{2069}', '\u{200f}', '\u{61c}', '\u{2028}', '\u{feff}', '[', ']', ';', '注', '🎉',
    ];
    (0..rng.below(len) + 1)
        .map(|_| match rng.below(4) {
            0 => *rng.pick(NASTY),
            1 => char::from_u32(u32::try_from(rng.below(0x3000)).unwrap()).unwrap_or('?'),
            _ => char::from(u8::try_from(rng.range(0x20, 0x7e)).unwrap()),
        })
        .collect()
}

fn random_bytes(rng: &mut Rng, len: u64) -> Vec<u8> {
    (0..rng.below(len) + 1).map(|_| u8::try_from(rng.below(256)).unwrap()).collect()
}

/// What the server answers for one seed, by path.
struct Answers {
    records: String,
    next_link: Vec<u8>,
    json_error: String,
    raw_error: Vec<u8>,
    raw_ok: Vec<u8>,
}

impl Answers {
    fn new(seed: u64) -> Answers {
        let mut rng = Rng::new(seed);
        let records: Vec<Value> = (0..5)
            .map(|i| {
                json!({
                    "id": hostile_text(&mut rng, 12), "name": hostile_text(&mut rng, 40),
                    "clientId": hostile_text(&mut rng, 20), "data": hostile_text(&mut rng, 200), "n": i,
                })
            })
            .collect();
        // Header values may hold any byte but controls; the link's own delimiters are left out so
        // that it always points off the origin, however garbled.
        let mut next_link = b"<http://127.0.0.2:9/".to_vec();
        next_link.extend(
            random_bytes(&mut rng, 60).into_iter().filter(|b| *b > 0x20 && *b != 0x7f && !b"<>,;\"".contains(b)),
        );
        next_link.extend_from_slice(b">; rel=\"next\"");
        let json_error = json!({"error": {
            "message": hostile_text(&mut rng, 120), "code": 40000 + rng.below(1000), "statusCode": 400,
            "href": hostile_text(&mut rng, 30),
        }})
        .to_string();
        Answers {
            records: serde_json::to_string(&records).unwrap(),
            next_link,
            json_error,
            raw_error: random_bytes(&mut rng, 300),
            raw_ok: random_bytes(&mut rng, 300),
        }
    }

    fn answer(&self, path: &str) -> axum::response::Response {
        let json = [("content-type", "application/json")];
        if path.starts_with("/channels/records/") {
            let link = axum::http::HeaderValue::from_bytes(&self.next_link).unwrap();
            (json, [("link", link)], self.records.clone()).into_response()
        } else if path.starts_with("/push/deviceRegistrations/json") {
            (StatusCode::BAD_REQUEST, json, self.json_error.clone()).into_response()
        } else if path.starts_with("/push/deviceRegistrations/raw") {
            (StatusCode::UNAUTHORIZED, [("content-type", "text/plain")], self.raw_error.clone()).into_response()
        } else {
            ([("content-type", "application/json")], self.raw_ok.clone()).into_response()
        }
    }
}

fn opsdeck(args: &[&str], base_url: &str) -> Output {
    Command::new(env!("CARGO_BIN_EXE_opsdeck"))
        .args(args)
        .env_clear()
        .env("OPSDECK_DATA_DIR", std::env::temp_dir().join(format!("opsdeck-fuzz-tests-{}", std::process::id())))
        .env("OPSDECK_ABLY_URL", base_url)
        .output()
        .expect("opsdeck runs")
}

/// Stderr is UTF-8 text with no character a terminal would act on, bar the newline ending a line.
fn assert_inert_stderr(out: &Output, case: &str) {
    let text = std::str::from_utf8(&out.stderr).unwrap_or_else(|e| panic!("{case}: stderr is not UTF-8: {e}"));
    let bad: Vec<char> = text.chars().filter(|c| is_unsafe(*c) && *c != '\n').collect();
    assert!(bad.is_empty(), "{case}: {bad:?} reached stderr: {text:?}");
}

/// Stdout is valid JSON with every unsafe character escaped (pretty printing's newlines aside).
fn assert_inert_json_stdout(out: &Output, case: &str) -> Value {
    let text = std::str::from_utf8(&out.stdout).unwrap_or_else(|e| panic!("{case}: stdout is not UTF-8: {e}"));
    let bad: Vec<char> = text.chars().filter(|c| is_unsafe(*c) && *c != '\n').collect();
    assert!(bad.is_empty(), "{case}: {bad:?} raw on stdout");
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{case}: stdout is not JSON ({e}): {text:?}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_servers_reach_the_terminal_only_as_inert_text() {
    for seed in 1..=6 {
        let answers = Arc::new(Answers::new(seed));
        let shared = answers.clone();
        let router = axum::Router::new().fallback(move |uri: Uri| {
            let answers = shared.clone();
            async move { answers.answer(uri.path()) }
        });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base_url = format!("http://{}", listener.local_addr().unwrap());
        let server = tokio::spawn(async move { axum::serve(listener, router).await });

        let expected: Value = serde_json::from_str(&answers.records).unwrap();
        let outputs = tokio::task::spawn_blocking(move || {
            [
                &["call", "ably", "messages_list", "channelId=records"][..],
                &["call", "ably", "messages_list", "channelId=records", "--all-pages"],
                &["call", "ably", "push_device_get", "deviceId=json"],
                &["call", "ably", "push_device_get", "deviceId=raw"],
                &["call", "ably", "time_get"],
            ]
            .map(|args| (args.join(" "), opsdeck(args, &base_url)))
        })
        .await
        .unwrap();
        for (args, out) in &outputs {
            let case = format!("seed {seed}: {args}");
            assert_inert_stderr(out, &case);
            assert!(!out.stderr.is_empty() || out.status.success(), "{case}: a failure says why");
        }
        let [(_, list), (_, all_pages), (_, json_error), (_, raw_error), _] = &outputs;
        assert!(list.status.success(), "seed {seed}: {}", String::from_utf8_lossy(&list.stderr));
        assert_eq!(assert_inert_json_stdout(list, "list"), expected, "seed {seed}: the same records, escaped");
        assert_eq!(all_pages.status.code(), Some(1), "seed {seed}: a next link off the origin is refused");
        assert_eq!(assert_inert_json_stdout(all_pages, "all pages"), expected, "seed {seed}: the page read is kept");
        assert_eq!(json_error.status.code(), Some(1));
        let body = assert_inert_json_stdout(json_error, "json error");
        assert_eq!(body, serde_json::from_str::<Value>(&answers.json_error).unwrap());
        assert_eq!(String::from_utf8_lossy(&json_error.stderr).lines().count(), 1, "seed {seed}: one line");
        assert_eq!(raw_error.status.code(), Some(1));
        assert_eq!(raw_error.stdout, answers.raw_error, "seed {seed}: a file or pipe gets the body as sent");
        server.abort();
    }
}
