//! `opsdeck ops` and `opsdeck call` as a user runs them: output and exit codes.

#![allow(clippy::unwrap_used, reason = "a test panics on failure")]

use std::process::{Command, Output};

use opsdeck::catalog::Service;
use opsdeck::sandbox;
use serde_json::Value;

/// Runs the binary with a clean environment (no live credentials, no user config).
fn opsdeck(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_opsdeck"));
    command.args(args).env_clear();
    for (k, v) in env {
        command.env(k, v);
    }
    command.output().expect("opsdeck runs")
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn ops_lists_the_whole_catalog() {
    let all = opsdeck(&["ops"], &[]);
    assert!(all.status.success());
    assert_eq!(stdout(&all).lines().count(), 174);
    let ably = opsdeck(&["ops", "ably", "--json"], &[]);
    let ops: Value = serde_json::from_slice(&ably.stdout).unwrap();
    assert_eq!(ops.as_array().unwrap().len(), 18);
    assert_eq!(ops[0]["service"], "ably");
    assert!(ops[0]["params"].is_array());
    let bad = opsdeck(&["ops", "twilio"], &[]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(stderr(&bad).contains("unknown service 'twilio'"));
}

/// The catalog as `opsdeck ops` prints it is kept in `tests/golden/ops.txt`, so a change to
/// any operation shows up in review. `UPDATE_GOLDEN=1 cargo test --test cli` rewrites it.
#[test]
fn ops_output_matches_the_golden_file() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden/ops.txt");
    let out = stdout(&opsdeck(&["ops"], &[]));
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(path, &out).unwrap();
    }
    let golden = std::fs::read_to_string(path).unwrap();
    assert!(
        out == golden,
        "`opsdeck ops` differs from tests/golden/ops.txt; if intended, run UPDATE_GOLDEN=1 cargo test --test cli"
    );
}

#[test]
fn call_runs_against_the_embedded_simulator_with_no_credentials() {
    let out = opsdeck(&["call", "ably", "time_get"], &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let time: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(time[0].as_u64().unwrap() > 1_700_000_000_000);
}

#[test]
fn usage_errors_exit_2_with_a_message() {
    let cases: &[(&[&str], &str)] = &[
        (&["call", "slack", "x"], "unknown service 'slack'"),
        (&["call", "ably", "messages_lst"], "did you mean"),
        (&["call", "ably", "messages_list", "channelId"], "'channelId' is not NAME=VALUE"),
        (&["call", "ably", "messages_list", "channelId=a", "limit=lots"], "limit: 'lots' is not a whole number"),
        (&["call", "ably", "messages_list", "colour=red", "channelId=a"], "colour: unknown parameter"),
        (&["call", "ably", "messages_list"], "channelId: required"),
        (&["call", "ably", "messages_batch_publish", "--body", "{not json"], "--body is not valid JSON"),
        (
            &["call", "ably", "messages_publish", "channelId=a", "--body", "@/nonexistent/file.json"],
            "cannot read --body file",
        ),
        (&["--read-only", "call", "ably", "messages_publish", "channelId=a", "name=x"], "--read-only is on"),
        (&["call", "ably", "time_get", "--all-pages"], "not a paged list"),
        (&["--profile", "nosuch", "call", "ably", "time_get"], "no profile named 'nosuch'"),
    ];
    for (args, expected) in cases {
        let out = opsdeck(args, &[]);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(expected), "{args:?}: {}", stderr(&out));
        assert!(out.stdout.is_empty(), "{args:?} printed on stdout");
    }
}

#[test]
fn dry_run_prints_curl_with_secrets_redacted() {
    let out = opsdeck(&["call", "ably", "messages_publish", "channelId=orders:eu", "name=hi", "--dry-run"], &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let curl = stdout(&out);
    assert!(curl.starts_with("curl -X POST 'http://127.0.0.1:"), "{curl}");
    assert!(curl.contains("/channels/orders%3Aeu/messages'"), "{curl}");
    assert!(curl.contains("'Authorization: [redacted]'"), "{curl}");
    assert!(!curl.contains("sandbox-secret") && !curl.contains("c2FuZGJveC"), "{curl}");
    assert!(curl.contains(r#"--data-raw '{"name":"hi"}'"#), "{curl}");
    let coinbase = opsdeck(&["call", "coinbase", "accounts_list", "--dry-run"], &[]);
    let curl = stdout(&coinbase);
    assert!(curl.contains("CB-ACCESS-SIGN: [redacted]") && !curl.contains("sandbox-passphrase"), "{curl}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn call_against_a_running_sandbox_pages_and_reports_api_errors() {
    let sandbox = sandbox::start(0, 3).await.unwrap();
    let url = sandbox.base_url(Service::Ably);
    let env = [("OPSDECK_ABLY_URL", url.as_str())];
    let run = |args: Vec<String>| {
        let env = env.map(|(k, v)| (k, v.to_owned()));
        tokio::task::spawn_blocking(move || {
            let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            opsdeck(&args, &env)
        })
    };
    let words = |text: &str| text.split_whitespace().map(str::to_owned).collect::<Vec<_>>();
    for i in 0..5 {
        let out = run(words(&format!("call ably messages_publish channelId=cli:paging name=m{i}"))).await.unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
    }
    let out = run(words("call ably messages_list channelId=cli:paging limit=2 --all-pages")).await.unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let all: Value = serde_json::from_slice(&out.stdout).unwrap();
    let names: Vec<&str> = all.as_array().unwrap().iter().map(|m| m["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["m4", "m3", "m2", "m1", "m0"]);

    let out = run(words("call ably push_device_get deviceId=no-such-device")).await.unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("HTTP 404 (40400)"), "{}", stderr(&out));
    assert!(out.stdout.is_empty());
    sandbox.shutdown();
}

#[test]
fn a_service_without_simulator_or_credentials_says_what_to_set() {
    let out = opsdeck(&["call", "deepgram", "projects_list"], &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("deepgram has no simulator yet"), "{}", stderr(&out));
    assert!(stderr(&out).contains("DEEPGRAM_API_KEY"));
}

#[test]
fn unreachable_host_is_a_clear_runtime_error() {
    let out = opsdeck(&["call", "ably", "channels_list"], &[("OPSDECK_ABLY_URL", "http://127.0.0.1:9")]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("cannot reach http://127.0.0.1:9/channels"), "{}", stderr(&out));
}
