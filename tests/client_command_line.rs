//! The request as a command to copy (`Y` in the console, `--dry-run`): curl and HTTPie hold no
//! secret, and run only where the secrets' environment variables are set.

use std::path::{Path, PathBuf};
use std::process::Command;

use opsdeck::catalog::Service;
use opsdeck::client::request::{build, to_curl, to_httpie};
use opsdeck::client::Values;
use opsdeck::config::sandbox_target;

/// Every secret of the sandbox credentials: none may appear in a printed command.
const SECRETS: &[&str] = &[
    "sandbox-secret",
    "sandbox-deepgram-key",
    "SANDBOXLICENSEKEY",
    "sandbox-taxjar-token",
    "c2FuZGJveC1zZWNyZXQ=",
    "sandbox-passphrase",
    "sandbox-mailgun-key",
    "EZTKsandbox",
];

fn values(pairs: &[(&str, &str)]) -> Values {
    pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
}

fn commands(service: Service, op: &str, pairs: &[(&str, &str)]) -> (String, String) {
    let op = service.operation(op).expect("in the catalog");
    let target = sandbox_target(service, "http://127.0.0.1:7701".into());
    let request = build(op, &values(pairs), None, &target).expect("valid");
    (to_curl(&request, &target.credentials).expect("curl"), to_httpie(&request, &target.credentials).expect("httpie"))
}

#[test]
fn no_command_holds_a_secret() {
    type Case<'a> = (Service, &'a str, &'a [(&'a str, &'a str)]);
    let cases: &[Case] = &[
        (Service::Ably, "messages_publish", &[("channelId", "orders:eu"), ("name", "shipped"), ("data", "hi")]),
        (Service::Ably, "channels_list", &[]),
        (Service::Taxjar, "categories_list", &[]),
        (Service::Avatax, "companies_list", &[]),
    ];
    for (service, op, pairs) in cases {
        let (curl, httpie) = commands(*service, op, pairs);
        for secret in SECRETS {
            assert!(!curl.contains(secret), "{secret} in {curl}");
            assert!(!httpie.contains(secret), "{secret} in {httpie}");
        }
        assert!(httpie.starts_with("http "), "{httpie}");
        assert!(httpie.contains('$'), "a secret is a variable: {httpie}");
    }
    let (_, httpie) = commands(Service::Ably, "messages_publish", &[("channelId", "orders:eu"), ("name", "n")]);
    assert!(httpie.starts_with("http -a \"$ABLY_API_KEY\" --raw '{"), "{httpie}");
    assert!(httpie.contains(" POST 'http://127.0.0.1:7701/channels/orders%3Aeu/messages'"), "{httpie}");
    assert!(httpie.contains("'Content-Type:application/json'"), "{httpie}");
    let (_, httpie) = commands(Service::Taxjar, "categories_list", &[]);
    assert!(httpie.contains(" \"Authorization:Bearer $TAXJAR_API_KEY\""), "{httpie}");
}

/// A directory with fake `curl` and `http` that print their arguments, one a line.
fn fake_tools() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("opsdeck-fake-tools-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    for tool in ["curl", "http"] {
        let path = dir.join(tool);
        std::fs::write(&path, "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done\n").expect("write");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        }
    }
    dir
}

fn run(command: &str, tools: &Path, key: Option<&str>) -> Vec<String> {
    let path = format!("{}:{}", tools.display(), std::env::var("PATH").unwrap_or_default());
    let mut sh = Command::new("sh");
    sh.arg("-c").arg(command).env("PATH", path).env_remove("ABLY_API_KEY");
    if let Some(key) = key {
        sh.env("ABLY_API_KEY", key);
    }
    let output = sh.output().expect("sh runs");
    assert!(output.status.success(), "{command}: {output:?}");
    String::from_utf8_lossy(&output.stdout).lines().map(str::to_owned).collect()
}

#[cfg(unix)]
#[test]
fn commands_replay_only_with_the_variables_set() {
    let tools = fake_tools();
    let (curl, httpie) =
        commands(Service::Ably, "messages_publish", &[("channelId", "orders:eu"), ("name", "it's"), ("data", "a b")]);
    for (command, flag) in [(&curl, "-u"), (&httpie, "-a")] {
        let with = run(command, &tools, Some("app.key:s3cret"));
        let at = with.iter().position(|a| a == flag).expect("auth flag");
        assert_eq!(with[at + 1], "app.key:s3cret", "{command}");
        assert!(with.iter().any(|a| a.contains(r#""name":"it's""#)), "the body survives quoting: {with:?}");
        let without = run(command, &tools, None);
        let at = without.iter().position(|a| a == flag).expect("auth flag");
        assert_eq!(without[at + 1], "", "no variable, no credential: {command}");
    }
    let _ = std::fs::remove_dir_all(tools);
}
