//! The debug log (`--debug`, `OPSDECK_LOG`): what a request leaves in it, and that no secret does.

#![allow(clippy::unwrap_used, reason = "a test panics on failure")]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use base64::Engine as _;
use opsdeck::catalog::Service;
use opsdeck::sandbox::{self, credentials as c};
use serde_json::json;

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("opsdeck-log-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The binary off the runtime (so the simulator on it can answer), clean environment, state and
/// data in `dir`.
async fn opsdeck(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_opsdeck"));
    command.args(args).env_clear().env("OPSDECK_STATE_DIR", dir).env("OPSDECK_DATA_DIR", dir);
    for (k, v) in env {
        command.env(k, v);
    }
    tokio::task::spawn_blocking(move || command.output().unwrap()).await.unwrap()
}

async fn add_fault(sandbox: &sandbox::Sandbox, fault: serde_json::Value) {
    let response = reqwest::Client::new()
        .post(format!("{}/faults", sandbox.control_url()))
        .header("content-type", "application/json")
        .body(fault.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 201);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn debug_logs_each_attempt_and_retry_without_secrets() {
    let dir = scratch("debug");
    let sandbox = sandbox::start(0, 7).await.unwrap();
    let ably = sandbox.base_url(Service::Ably);
    // One 503 first: the list is retried, and the log says why and how long it waited.
    add_fault(&sandbox, json!({"service": "ably", "path": "/channels", "status": 503, "count": 1})).await;
    // A live-style key (the simulator's own key, given as a live one), and a secret in a value.
    let env = [("ABLY_API_KEY", c::ABLY_KEY), ("OPSDECK_ABLY_URL", ably.as_str())];
    let out = opsdeck(&dir, &["--debug", "call", "ably", "channels_list", "prefix=sandbox-secret"], &env).await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let out = opsdeck(&dir, &["--debug", "call", "ably", "time_get"], &env).await;
    assert!(out.status.success());

    let log = std::fs::read_to_string(dir.join("opsdeck.log")).unwrap();
    let url = format!("{ably}/channels?prefix=[redacted]");
    let lines: Vec<&str> = log.lines().filter(|l| l.contains(&url)).collect();
    assert!(lines.len() >= 4, "{log}");
    assert!(lines[0].contains("DEBUG") && lines[0].contains("sending") && lines[0].contains("method=GET"), "{log}");
    assert!(lines[0].contains("attempt=1") && lines[0].contains("of=3"), "{log}");
    assert!(lines[1].contains("response") && lines[1].contains("status=503"), "{log}");
    assert!(
        lines[2].contains("retrying") && lines[2].contains("reason=HTTP 503") && lines[2].contains("wait_ms="),
        "{log}"
    );
    assert!(lines[3].contains("sending") && lines[3].contains("attempt=2"), "{log}");
    assert!(lines[4].contains("status=200") && lines[4].contains("elapsed_ms="), "{log}");
    assert!(log.contains(&format!("{ably}/time")), "the second call appends: {log}");
    assert!(!log.contains('\u{1b}'), "no colours in a file");

    let basic = base64::engine::general_purpose::STANDARD.encode(c::ABLY_KEY);
    for secret in [c::ABLY_KEY, c::ABLY_KEY_SECRET, basic.as_str()] {
        assert!(!log.contains(secret), "{secret} is in the log:\n{log}");
    }
    sandbox.shutdown();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_log_is_off_unless_asked_and_takes_a_filter() {
    let dir = scratch("filter");
    let out = opsdeck(&dir, &["call", "ably", "time_get"], &[]).await;
    assert!(out.status.success());
    assert!(!dir.join("opsdeck.log").exists(), "no log unless asked");

    let out = opsdeck(&dir, &["call", "ably", "time_get"], &[("OPSDECK_LOG", "opsdeck=info")]).await;
    assert!(out.status.success());
    let log = std::fs::read_to_string(dir.join("opsdeck.log")).unwrap();
    assert!(log.contains("status=200") && !log.contains("sending"), "info only: {log}");

    let out = opsdeck(&dir, &["call", "ably", "time_get"], &[("OPSDECK_LOG", "opsdeck=loud")]).await;
    assert!(out.status.success(), "a bad filter only warns");
    let warning = String::from_utf8_lossy(&out.stderr);
    assert!(warning.contains("OPSDECK_LOG=opsdeck=loud is not a log filter"), "{warning}");
}

#[test]
fn paths_names_every_location() {
    let dir = scratch("paths");
    let out = Command::new(env!("CARGO_BIN_EXE_opsdeck"))
        .args(["paths", "--json"])
        .env_clear()
        .env("OPSDECK_DATA_DIR", dir.join("data"))
        .env("OPSDECK_STATE_DIR", dir.join("state"))
        .env("OPSDECK_CONFIG_DIR", dir.join("config"))
        .output()
        .unwrap();
    let paths: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let at = |p: &str| json!(dir.join(p).display().to_string());
    assert_eq!(paths["config"], at("config/config.toml"));
    assert_eq!(paths["themes"], at("config/themes"));
    assert_eq!(paths["history"], at("data/history.sqlite"));
    assert_eq!(paths["log"], at("state/opsdeck.log"));
    let out = Command::new(env!("CARGO_BIN_EXE_opsdeck"))
        .arg("paths")
        .env_clear()
        .env("OPSDECK_DATA_DIR", dir.join("data"))
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.lines().any(|l| l == format!("history  {}", dir.join("data/history.sqlite").display())), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_call_logs_its_error_without_the_password_of_a_url() {
    use axum::http::{header, StatusCode};
    let dir = scratch("userinfo");
    // A server that sends the client on to a URL carrying a password, again and again.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let target = format!("http://ops:pw-in-the-url@127.0.0.1:{port}/time");
    let app = axum::Router::new()
        .fallback(move || async move { (StatusCode::FOUND, [(header::LOCATION, target.clone())], "") });
    tokio::spawn(async move { axum::serve(listener, app).await });
    let base = format!("http://127.0.0.1:{port}");
    let env = [("ABLY_API_KEY", c::ABLY_KEY), ("OPSDECK_ABLY_URL", base.as_str())];
    let out = opsdeck(&dir, &["--debug", "call", "ably", "time_get"], &env).await;
    assert!(!out.status.success());
    let log = std::fs::read_to_string(dir.join("opsdeck.log")).unwrap();
    assert!(log.contains("no response"), "{log}");
    assert!(!log.contains("pw-in-the-url"), "the password is in the log:\n{log}");
    assert!(!String::from_utf8_lossy(&out.stderr).contains("pw-in-the-url"), "nor on stderr");
}
