//! opsdeck as a shell citizen: completion scripts that complete from the catalog, manual pages,
//! and help on every environment variable it reads.

#![allow(clippy::unwrap_used, reason = "a test panics on failure")]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_opsdeck");

/// A folder of its own under the temp dir, empty.
fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("opsdeck-shell-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn opsdeck(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(BIN);
    command.args(args).env_clear().envs(env.iter().copied());
    command.output().expect("opsdeck runs")
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Whether `bash` can be run here; the completion tests need it and say so when it is missing.
fn has_bash() -> bool {
    Command::new("bash").arg("-c").arg("true").output().is_ok_and(|o| o.status.success())
}

/// COMPREPLY after bash runs the generated completion function on `line` (cursor at its end), as
/// bash itself would: COMP_WORDS split at blanks and at the `=` and `:` of COMP_WORDBREAKS.
fn bash_complete(script: &Path, config_dir: &Path, line: &str) -> Vec<String> {
    let program = r#"source "$1"
line="$2"
COMP_LINE="$line"; COMP_POINT=${#line}
# The pieces of NAME=VALUE as bash splits them: "=" and ":" are words of their own.
split="${line//=/ = }"
read -ra COMP_WORDS <<< "${split//:/ : }"
[[ $line == *" " ]] && COMP_WORDS+=("")
COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
COMP_WORDS[0]="$3"
_opsdeck_complete
printf '%s\n' "${COMPREPLY[@]}"
"#;
    let out = Command::new("bash")
        .args(["--norc", "--noprofile", "-c", program, "bash", script.to_str().unwrap(), line, BIN])
        .env_clear()
        .env("OPSDECK_CONFIG_DIR", config_dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    stdout(&out).lines().filter(|l| !l.is_empty()).map(str::to_owned).collect()
}

#[test]
fn bash_completes_operations_parameters_values_and_profiles_from_the_catalog() {
    if !has_bash() {
        eprintln!("skipped: no bash on this machine");
        return;
    }
    let dir = temp_dir("bash");
    let config_dir = dir.join("config");
    std::fs::create_dir_all(config_dir.join("themes")).unwrap();
    std::fs::write(config_dir.join("config.toml"), "[profiles.work.ably]\nurl = \"https://ably.example.com\"\n")
        .unwrap();
    std::fs::write(config_dir.join("themes").join("neon.toml"), "").unwrap();
    let script = dir.join("opsdeck.bash");
    let out = opsdeck(&["completions", "bash"], &[]);
    assert!(out.status.success());
    std::fs::write(&script, &out.stdout).unwrap();

    let ops = bash_complete(&script, &config_dir, "opsdeck call ably mes");
    assert!(ops.contains(&"messages_list".to_owned()), "{ops:?}");
    assert!(ops.iter().all(|o| o.starts_with("mes")), "{ops:?}");
    assert_eq!(bash_complete(&script, &config_dir, "opsdeck call ably messages_list chan"), ["channelId="]);
    assert_eq!(bash_complete(&script, &config_dir, "opsdeck ca"), ["call"]);
    let after_a_value = bash_complete(&script, &config_dir, "opsdeck call ably messages_list channelId=orders:eu li");
    assert_eq!(after_a_value, ["limit="], "a value with ':' is one word");
    let services = bash_complete(&script, &config_dir, "opsdeck call ");
    assert_eq!(services, ["ably", "deepgram", "avatax", "taxjar", "coinbase", "mailgun", "easypost"]);
    // After NAME= bash replaces only the piece after "=": the candidates say what follows it.
    let op = opsdeck::catalog::Service::Ably.operation("stats_get").unwrap();
    let unit = op.params.iter().find(|p| p.name == "unit").unwrap();
    let values = bash_complete(&script, &config_dir, "opsdeck call ably stats_get unit=");
    let expected: Vec<String> = unit.allowed.iter().map(|v| format!("={v}")).collect();
    assert_eq!(values, expected);
    let values = bash_complete(&script, &config_dir, "opsdeck call ably stats_get unit=mo");
    assert_eq!(values, ["month"]);
    assert_eq!(bash_complete(&script, &config_dir, "opsdeck --profile "), ["local", "work"]);
    assert_eq!(bash_complete(&script, &config_dir, "opsdeck --theme ne"), ["neon"]);
    assert_eq!(bash_complete(&script, &config_dir, "opsdeck call --profile w"), ["work"]);
    assert_eq!(bash_complete(&script, &config_dir, "opsdeck call ably time_get -o "), ["json", "table"]);
}

#[test]
fn zsh_and_fish_scripts_ask_the_same_candidates() {
    for shell in ["zsh", "fish"] {
        let out = opsdeck(&["completions", shell], &[]);
        assert!(out.status.success(), "{shell}");
        assert!(stdout(&out).contains("__complete"), "{shell}: {}", stdout(&out));
    }
    let out = opsdeck(&["completions", "tcsh"], &[]);
    assert_eq!(out.status.code(), Some(2));
    let out = opsdeck(&["__complete", "call", "ably", "stats_get", "unit="], &[]);
    assert_eq!(stdout(&out), "unit=minute\nunit=hour\nunit=day\nunit=month\n");
}

#[test]
fn man_prints_opsdeck_1_or_writes_a_page_per_subcommand() {
    let out = opsdeck(&["man"], &[]);
    assert!(out.status.success());
    let page = stdout(&out);
    assert!(page.contains(".TH opsdeck 1"), "{page}");
    assert!(page.contains(".SH ENVIRONMENT") && page.contains("ABLY_API_KEY"), "{page}");
    assert!(page.contains("call"), "{page}");

    let dir = temp_dir("man");
    let out = opsdeck(&["man", "--dir", dir.to_str().unwrap()], &[]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    for name in ["opsdeck.1", "opsdeck-call.1", "opsdeck-ops.1", "opsdeck-sandbox.1", "opsdeck-completions.1"] {
        let page = std::fs::read_to_string(dir.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(page.starts_with(".ie"), "{name}: {page}");
        assert!(stdout(&out).contains(name), "{}", stdout(&out));
    }
    let call = std::fs::read_to_string(dir.join("opsdeck-call.1")).unwrap();
    assert!(call.contains("\\-\\-jq") && call.contains("\\-\\-ndjson"), "{call}");
    assert!(!dir.join("opsdeck-__complete.1").exists(), "the hidden command has no page");
}

/// Every variable the source reads by name (`env("X")`, `var("X")`, `var_os("X")`, `*_VAR`
/// constants, and each service's credential and URL variables) is in `opsdeck help environment`.
#[test]
fn help_environment_names_every_variable_the_source_reads() {
    let out = opsdeck(&["help", "environment"], &[]);
    assert!(out.status.success());
    let help = stdout(&out);
    let mut read = Vec::new();
    let mut files = vec![PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/src"))];
    while let Some(path) = files.pop() {
        if path.is_dir() {
            files.extend(std::fs::read_dir(&path).unwrap().map(|e| e.unwrap().path()));
            continue;
        }
        let name = path.file_name().unwrap().to_string_lossy();
        if path.extension().is_none_or(|e| e != "rs") || name.contains("tests") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        for opener in ["env(\"", "var(\"", "var_os(\"", "_VAR: &str = \""] {
            for (at, _) in text.match_indices(opener) {
                let rest = &text[at + opener.len()..];
                let name: String =
                    rest.chars().take_while(|c| c.is_ascii_uppercase() || *c == '_' || c.is_ascii_digit()).collect();
                if !name.is_empty() && rest[name.len()..].starts_with('"') {
                    read.push(name);
                }
            }
        }
    }
    for service in opsdeck::catalog::Service::ALL {
        read.extend(opsdeck::client::credential_variables(service).iter().map(|v| (*v).to_owned()));
        read.push(opsdeck::client::url_variable(service));
    }
    assert!(read.contains(&"NO_COLOR".to_owned()) && read.contains(&"OPSDECK_CONFIG_DIR".to_owned()), "{read:?}");
    // A switch for the test suite's own terminal tests, not for people.
    read.retain(|v| v != "OPSDECK_EXIT_AFTER_FIRST_FRAME");
    // Read only by tests that need the shared test data (`opsdeck::shared_data`): the README says it.
    read.retain(|v| v != "CI");
    for variable in read {
        assert!(
            help.contains(&format!("  {variable} ")),
            "{variable} is read but not in `opsdeck help environment`:\n{help}"
        );
    }
    assert!(help.contains("OPSDECK_LOG") && help.contains("EDITOR"), "{help}");

    let call = stdout(&opsdeck(&["help", "call"], &[]));
    assert!(call.contains("--jq <EXPR>") && call.contains("Examples:"), "{call}");
    let out = opsdeck(&["help", "enviroment"], &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("did you mean environment?"));
}
