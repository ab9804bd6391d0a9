//! The call history as a user meets it: `opsdeck call` records, `opsdeck history` lists and
//! shows, the console's `H` view reopens and resends; and no secret ever reaches the file.

#![allow(clippy::unwrap_used, reason = "a test panics on failure")]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use base64::Engine as _;
use opsdeck::catalog::Service;
use opsdeck::client::Redactor;
use opsdeck::config::HistorySettings;
use opsdeck::history::{Entry, Filter, History, Outcome, Source};
use opsdeck::sandbox::{self, credentials as c};
use opsdeck::tui::harness::Harness;
use serde_json::Value;

/// A folder of its own for one test, empty.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("opsdeck-history-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs the binary with a clean environment whose data folder is `data`.
fn opsdeck(data: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_opsdeck"));
    command.args(args).env_clear().env("OPSDECK_DATA_DIR", data).env("OPSDECK_STATE_DIR", data);
    for (k, v) in env {
        command.env(k, v);
    }
    command.output().unwrap()
}

/// The same, off the runtime, so a simulator on this runtime can answer it.
async fn opsdeck_async(data: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let data = data.to_owned();
    let args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
    let env: Vec<(String, String)> = env.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
    tokio::task::spawn_blocking(move || {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        opsdeck(&data, &args, &env)
    })
    .await
    .unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn history_json(data: &Path, args: &[&str]) -> Value {
    let mut all = vec!["history", "--json"];
    all.extend(args);
    let out = opsdeck(data, &all, &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Every byte SQLite wrote for the history: the file, its WAL and its shared memory.
fn raw_bytes(data: &Path) -> Vec<u8> {
    let mut bytes = Vec::new();
    for suffix in ["", "-wal", "-shm", "-journal"] {
        if let Ok(content) = std::fs::read(data.join(format!("history.sqlite{suffix}"))) {
            bytes.extend(content);
        }
    }
    assert!(!bytes.is_empty(), "a history file was written");
    bytes
}

fn assert_absent(bytes: &[u8], secret: &str) {
    assert!(memchr::memmem::find(bytes, secret.as_bytes()).is_none(), "{secret:?} is in the history file");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_are_recorded_and_no_secret_reaches_the_file() {
    let data = scratch("secrets");
    let sandbox = sandbox::start(0, 7).await.unwrap();
    let ably = sandbox.base_url(Service::Ably);
    let live_key = "live-app.live-key:LIVE-SECRET-0123456789";

    // The sandbox key given as a parameter value, where it does not belong.
    let out =
        opsdeck_async(&data, &["call", "ably", "messages_list", &format!("channelId={}", c::ABLY_KEY)], &[]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    // A token request: signed with the key (a mac), answered with a token.
    let out =
        opsdeck_async(&data, &["call", "ably", "tokens_request", &format!("keyName={}", c::ABLY_KEY_NAME)], &[]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let token = serde_json::from_slice::<Value>(&out.stdout).unwrap()["token"].as_str().unwrap().to_owned();
    // TaxJar and AvaTax with their sandbox credentials.
    let out = opsdeck_async(&data, &["call", "taxjar", "categories_list"], &[]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let filter = format!("$filter=name eq '{}'", c::AVATAX_LICENSE_KEY);
    let out = opsdeck_async(&data, &["call", "avatax", "companies_list", &filter], &[]).await;
    assert!(out.status.code().is_some(), "{}", stderr(&out));
    // A live-style key (the simulator refuses it: 401), echoed in a value too.
    let env = [("ABLY_API_KEY", live_key), ("OPSDECK_ABLY_URL", ably.as_str())];
    let out = opsdeck_async(&data, &["call", "ably", "channels_get", "channelId=LIVE-SECRET-0123456789"], &env).await;
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));

    let list = history_json(&data, &[]);
    let list = list.as_array().unwrap();
    assert_eq!(list.len(), 5, "{list:?}");
    // Newest first.
    assert_eq!(list[0]["operation"], "channels_get");
    assert_eq!(list[0]["target"], "LIVE");
    assert_eq!(list[0]["status"], 401);
    assert_eq!(list[0]["params"]["channelId"], "[redacted]");
    assert_eq!(list[0]["base_url"], ably.as_str());
    assert_eq!(list[1]["operation"], "companies_list");
    assert_eq!(list[1]["params"]["$filter"], "name eq '[redacted]'");
    assert_eq!(list[2]["service"], "taxjar");
    assert_eq!(list[2]["status"], 200);
    assert_eq!(list[3]["operation"], "tokens_request");
    assert_eq!(list[3]["params"]["keyName"], c::ABLY_KEY_NAME);
    assert_eq!(list[4]["params"]["channelId"], "[redacted]");
    assert!(list.iter().all(|r| r["profile"] == "default" && r["duration_ms"].is_u64()));
    assert!(list[1..].iter().all(|r| r["target"] == "SANDBOX"), "{list:?}");

    let shown = history_json(&data, &["show", &list[3]["id"].to_string()]);
    assert_eq!(shown["response"]["token"], "[redacted]", "a token is a credential: {shown}");
    assert_eq!(shown["response"]["keyName"], c::ABLY_KEY_NAME);

    let bytes = raw_bytes(&data);
    let base64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
    for secret in [
        c::ABLY_KEY.to_owned(),
        c::ABLY_KEY_SECRET.to_owned(),
        base64(c::ABLY_KEY),
        c::AVATAX_LICENSE_KEY.to_owned(),
        base64(&format!("{}:{}", c::AVATAX_ACCOUNT_ID, c::AVATAX_LICENSE_KEY)),
        c::TAXJAR_TOKEN.to_owned(),
        live_key.to_owned(),
        "LIVE-SECRET-0123456789".to_owned(),
        base64(live_key),
        token,
    ] {
        assert_absent(&bytes, &secret);
    }
    sandbox.shutdown();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn history_lists_filters_and_shows_a_call_as_people_read_it() {
    let data = scratch("list");
    for args in [
        &["call", "ably", "time_get"][..],
        &["call", "ably", "channels_list", "limit=2"],
        &["call", "taxjar", "nexus_list"],
    ] {
        let out = opsdeck_async(&data, args, &[]).await;
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    }
    let out = opsdeck(&data, &["history"], &[]);
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 4, "{text}");
    assert!(lines[0].starts_with("ID") && lines[0].contains("OPERATION") && lines[0].contains("DURATION"), "{text}");
    let words: Vec<&str> = lines[1].split_whitespace().collect();
    assert_eq!(&words[..2], ["3", words[1]]);
    assert_eq!(&words[3..8], ["default", "SANDBOX", "taxjar", "nexus_list", "200"], "{text}");
    assert!(lines[3].contains("time_get"), "{text}");

    let only_ably = history_json(&data, &["ably", "--limit", "1"]);
    assert_eq!(only_ably.as_array().unwrap().len(), 1);
    assert_eq!(only_ably[0]["operation"], "channels_list");

    let out = opsdeck(&data, &["history", "show", "2"], &[]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.starts_with("#2 ably channels_list — 200 in "), "{text}");
    assert!(text.contains("params    limit=2\n"), "{text}");
    assert!(text.contains("target    SANDBOX http://127.0.0.1:"), "{text}");
    assert!(text.contains("response  ") && text.contains("application/json"), "{text}");
    assert!(text.ends_with("\n[\n  \"alerts:ops\",\n  \"chat:lobby\"\n]\n"), "the stored body follows: {text}");

    let out = opsdeck(&data, &["history", "show", "99"], &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("no recorded call 99"), "{}", stderr(&out));
    let out = opsdeck(&data, &["history", "slack"], &[]);
    assert_eq!(out.status.code(), Some(2));

    let out = opsdeck(&data, &["history", "clear"], &[]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("deleted 3 recorded calls"));
    assert_eq!(history_json(&data, &[]), serde_json::json!([]));
}

#[test]
fn an_unwritable_data_folder_only_warns_and_the_call_works() {
    let data = scratch("unwritable");
    // A file where the folder should be: no folder can be made there, whoever runs the test.
    let blocked = data.join("not-a-folder");
    std::fs::write(&blocked, "x").unwrap();
    let out = opsdeck(&blocked, &["call", "ably", "time_get"], &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let warning = stderr(&out);
    assert!(warning.contains("opsdeck: warning: cannot create the history"), "{warning}");
    assert!(warning.contains("this call is not recorded in the history"), "{warning}");
    assert!(serde_json::from_slice::<Value>(&out.stdout).is_ok());
}

#[test]
fn recording_can_be_turned_off() {
    let data = scratch("off");
    let config = data.join("config.toml");
    std::fs::write(&config, "[history]\nenabled = false\n").unwrap();
    let out = opsdeck(&data, &["--config", config.to_str().unwrap(), "call", "ably", "time_get"], &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!data.join("history.sqlite").exists());
}

#[test]
fn several_processes_record_at_once() {
    let data = scratch("concurrent");
    let children: Vec<_> = (0..6)
        .map(|_| {
            Command::new(env!("CARGO_BIN_EXE_opsdeck"))
                .args(["call", "ably", "time_get"])
                .env_clear()
                .env("OPSDECK_DATA_DIR", &data)
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success());
        assert!(out.stderr.is_empty(), "no warning: {}", String::from_utf8_lossy(&out.stderr));
    }
    assert_eq!(history_json(&data, &[]).as_array().unwrap().len(), 6);
}

fn entry(at: std::time::SystemTime, body: &[u8]) -> Entry {
    Entry {
        at,
        source: Source::Cli,
        profile: "default".into(),
        service: Service::Taxjar,
        operation: "categories_list".into(),
        values: Default::default(),
        body: None,
        target: "SANDBOX",
        base_url: "http://127.0.0.1:1".into(),
        outcome: Outcome::Response {
            status: 200,
            content_type: Some("application/json".into()),
            body: bytes::Bytes::copy_from_slice(body),
        },
        duration: Duration::from_millis(3),
        redactor: Redactor::default(),
    }
}

#[test]
fn old_calls_are_pruned_and_long_bodies_cut() {
    let data = scratch("retention");
    let path = data.join("history.sqlite");
    let settings = HistorySettings { enabled: None, retention_days: Some(30), max_body_bytes: Some(16) };
    let history = History::open(&path, &settings).unwrap();
    let old = std::time::SystemTime::now() - Duration::from_secs(31 * 24 * 3600);
    history.record(&entry(old, b"[]")).unwrap();
    let id = history.record(&entry(std::time::SystemTime::now(), b"[\"abcdefghijklmnopqrstuvwxyz\"]")).unwrap();
    drop(history);
    let history = History::open(&path, &settings).unwrap();
    let all = history.list(&Filter::default()).unwrap();
    assert_eq!(all.iter().map(|r| r.id).collect::<Vec<_>>(), [id], "the 31-day-old call is gone");
    let record = history.get(id).unwrap().unwrap();
    assert!(record.truncated);
    assert_eq!(record.size, 30);
    assert_eq!(record.response.unwrap(), b"[\"abcdefghijklmn");
}

/// The console records its calls; `H` lists them, Enter inspects one, `e` reopens its form, `s`
/// sends it again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_console_history_view_inspects_edits_and_resends() {
    let data = scratch("console");
    let mut h = Harness::new().await;
    let recorder = opsdeck::history::Recorder::start(Some(&data.join("history.sqlite")), &HistorySettings::default());
    h.console.app.history = recorder.unwrap();
    // Tab 4 is TaxJar: its first resource loads, then a rate lookup from a form.
    h.keys("4");
    h.settle().await;
    h.keys(":taxjar rates_get<Enter>");
    let screen = h.screen();
    assert!(screen.contains("rates_get"), "{screen}");
    h.paste("90002");
    h.keys("<C-s>");
    h.settle().await;
    // The rate opens as a table; Esc closes it.
    h.keys("<Esc>1");
    h.settle().await;
    assert!(h.console.app.history.as_ref().unwrap().flush(Duration::from_secs(5)));

    h.keys("H");
    let screen = h.screen();
    // TaxJar's first list and the rate (Ably's list loaded before the recorder was set).
    assert!(screen.contains("history · 2 of 2 calls"), "{screen}");
    let rows: Vec<&str> = screen.lines().filter(|l| l.contains("SANDBOX  taxjar")).collect();
    assert!(rows[0].contains("rates_get") && rows[0].contains("200") && rows[0].contains("zip=90002"), "{screen}");
    assert!(rows[1].contains("orders_list"), "{screen}");

    h.keys("/rates");
    let screen = h.screen();
    assert!(screen.contains("history · 1 of 2 calls") && screen.contains("/ rates"), "{screen}");
    h.keys("<Enter><Enter>");
    let screen = h.screen();
    assert!(screen.contains("history #2 rates_get"), "the stored response is in the inspector: {screen}");
    assert_eq!(h.console.app.tab().service, Service::Taxjar);
    assert!(screen.contains("90002"), "{screen}");

    // In the inspector H is its headers view: Esc goes back to the browser first.
    h.keys("H");
    assert!(!h.screen().contains("history ·"), "H in the inspector is its headers view");
    h.keys("<Esc>H/rates<Enter>e");
    let screen = h.screen();
    assert!(screen.contains("taxjar rates_get GET /v2/rates/{zip}"), "the form is open: {screen}");
    assert!(screen.contains("› 90002"), "the form holds the stored zip: {screen}");
    h.keys("<Esc>");

    h.keys("H/rates<Enter>s");
    h.settle().await;
    assert!(h.console.app.history.as_ref().unwrap().flush(Duration::from_secs(5)));
    let screen = h.screen();
    assert!(screen.contains("rate of the location") && screen.contains("9.00 %"), "the answer as tables: {screen}");
    h.keys("<Esc>H");
    let screen = h.screen();
    assert!(screen.contains("history · 3 of 3 calls"), "sent again and recorded: {screen}");
    h.keys("<Esc>");
}

/// Secrets a call carries in its own content: a JSON value's secret fields at any depth, a
/// header-like `{"name":"Authorization","value":…}` pair, and a URL's user info are kept out of
/// every column of the history (params, body, response, error).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn secrets_inside_json_values_and_urls_never_reach_the_file() {
    let data = scratch("json-secrets");
    let webhook = r#"{"url":"http://127.0.0.1:9/hook","webhook_secret":"WHSEC-first-0123","custom_headers":[{"name":"Authorization","value":"Bearer HDR-first-4567"}]}"#;
    let out = opsdeck_async(&data, &["call", "easypost", "webhooks_create", &format!("webhook={webhook}")], &[]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let body = r#"{"webhook":{"url":"http://127.0.0.1:9/hook2","webhook_secret":"WHSEC-second-89","custom_headers":[{"name":"X-Api-Key","value":"HDR-second-0123"}]}}"#;
    let out = opsdeck_async(&data, &["call", "easypost", "webhooks_create", "--body", body], &[]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let out = opsdeck_async(
        &data,
        &[
            "call",
            "mailgun",
            "webhooks_create",
            "domain=mg.example.com",
            "id=delivered",
            "url=https://hookuser:HOOKPASS-77@hooks.example.com/x",
        ],
        &[],
    )
    .await;
    assert!(out.status.code().is_some(), "{}", stderr(&out));

    let list = history_json(&data, &[]);
    assert_eq!(list.as_array().unwrap().len(), 3, "{list}");
    let mut everything = list.to_string();
    for record in list.as_array().unwrap() {
        everything.push_str(&history_json(&data, &["show", &record["id"].to_string()]).to_string());
    }
    for secret in ["WHSEC-first-0123", "HDR-first-4567", "WHSEC-second-89", "HDR-second-0123", "HOOKPASS-77"] {
        assert!(!everything.contains(secret), "{secret} is in the history: {everything}");
    }
    assert!(everything.contains("127.0.0.1:9/hook"), "what is not a secret stays: {everything}");
    let bytes = raw_bytes(&data);
    for secret in ["WHSEC-first-0123", "HDR-first-4567", "WHSEC-second-89", "HDR-second-0123", "HOOKPASS-77"] {
        assert_absent(&bytes, secret);
    }
}
