//! `opsdeck help [TOPIC]` and `opsdeck man`: help built from the same definitions the program
//! runs on (clap's, the credential variables of each service, the folder variables), so it
//! cannot drift from what opsdeck actually reads.

use std::io::Write;
use std::path::Path;

use clap::CommandFactory;

use super::{suggest, Cli, Failure};
use crate::catalog::Service;
use crate::client::{credential_variables, url_variable};
use crate::paths::{CONFIG_DIR_VAR, DATA_DIR_VAR, STATE_DIR_VAR};

/// The help topics besides the subcommands.
pub const TOPICS: &[&str] = &["environment"];

/// The variable that sets the level of the debug log.
pub const LOG_VAR: &str = "OPSDECK_LOG";

/// Every environment variable opsdeck reads, grouped, with what it does: `(group, [(name, text)])`.
pub fn environment_variables() -> Vec<(&'static str, Vec<(String, String)>)> {
    let mut credentials = Vec::new();
    for service in Service::ALL {
        let variables = credential_variables(service);
        for variable in variables {
            let also = if variables.len() > 1 {
                let others: Vec<&str> = variables.iter().copied().filter(|v| v != variable).collect();
                format!(" (with {})", others.join(" and "))
            } else {
                String::new()
            };
            credentials
                .push(((*variable).to_owned(), format!("{}: {}{also}", service.title(), credential_text(variable))));
        }
        if service == Service::Mailgun {
            credentials
                .push(("MAILGUN_REGION".to_owned(), "Mailgun: region of the live API, us (default) or eu".into()));
        }
    }
    let mut urls: Vec<(String, String)> = Service::ALL
        .iter()
        .map(|s| {
            (url_variable(*s), format!("{}: base URL to call instead of the real service or the simulator", s.title()))
        })
        .collect();
    urls.push((
        super::find_sandbox::PORT_BASE_VAR.to_owned(),
        format!(
            "`opsdeck call` of a service with no credentials and no URL goes to the `opsdeck sandbox` at this \
             --port-base (default {}) when one runs, else to a throwaway in-process simulator (a call that \
             changes something says so); off: always the throwaway one, silently",
            crate::sandbox::DEFAULT_PORT_BASE
        ),
    ));
    let folder = |name: &str, text: &str| (name.to_owned(), text.to_owned());
    vec![
        (
            "Live credentials: a service whose variables are all set is LIVE (environment first, then the profile)",
            credentials,
        ),
        (
            "Base URLs (e.g. http://127.0.0.1:7701 for an `opsdeck sandbox`; with or without the version the \
             service's paths start with, such as EasyPost's /v2)",
            urls,
        ),
        (
            "Simulators",
            vec![folder(
                crate::config::TAX_RATES_VAR,
                "Avalara's ZIP5 tax rate tables (one CSV, or a folder of TAXRATES_ZIP5_*.csv) for the simulated \
                 AvaTax and TaxJar of the console, `opsdeck call` and `opsdeck sandbox` (after --tax-rates, before \
                 the config's [sandbox] tax_rates)",
            )],
        ),
        (
            "Folders",
            vec![
                folder(CONFIG_DIR_VAR, "folder of config.toml and themes/ (see `opsdeck paths`)"),
                folder(DATA_DIR_VAR, "folder of the call history"),
                folder(STATE_DIR_VAR, "folder of the debug log"),
            ],
        ),
        (
            "Console and logging",
            vec![
                folder(LOG_VAR, "log level for the debug log (e.g. debug)"),
                folder("NO_COLOR", "set (not empty): the console uses no colour"),
                folder("COLORTERM", "truecolor or 24bit: the console's theme colours as written"),
                folder(
                    "TERM",
                    "the terminal's colour depth when COLORTERM says nothing (…-256color, linux, dumb); \
                     linux and dumb cannot take OSC 52 copies",
                ),
                folder("TMUX", "set inside tmux: copies go through OSC 52 only with `set-clipboard on`"),
                folder("VISUAL", "editor for JSON form fields in the console (Ctrl-e; before EDITOR)"),
                folder("EDITOR", "editor for JSON form fields in the console when VISUAL is not set (else vi)"),
                folder(
                    "OPSDECK_JQ_BIN",
                    "the binary jq filters run in, as a worker within a budget (default: this opsdeck)",
                ),
                folder("OPSDECK_JQ_MEMORY", "set by opsdeck for its jq worker: the bytes the worker may use"),
                folder(
                    "OPSDECK_JQ_PARENT",
                    "set by opsdeck for its jq worker: the worker ends when this process is gone",
                ),
                folder(
                    "OPSDECK_JQ_TIME_MS",
                    "set by opsdeck for its jq worker: the worker ends past this many milliseconds",
                ),
            ],
        ),
    ]
}

/// What one credential variable holds.
fn credential_text(variable: &str) -> &'static str {
    match variable {
        "ABLY_API_KEY" => "API key appId.keyId:secret",
        "AVATAX_ACCOUNT_ID" => "account id",
        "AVATAX_LICENSE_KEY" => "license key",
        "COINBASE_API_KEY" => "API key",
        "COINBASE_API_SECRET" => "API secret (base64)",
        "COINBASE_API_PASSPHRASE" => "API passphrase",
        "TAXJAR_API_KEY" => "API token",
        _ => "API key",
    }
}

/// `opsdeck help environment`.
pub fn environment() -> String {
    let groups = environment_variables();
    let width = groups.iter().flat_map(|(_, vars)| vars.iter().map(|(name, _)| name.len())).max().unwrap_or(0);
    let mut text = String::from("Environment variables opsdeck reads:\n");
    for (group, vars) in groups {
        text.push_str(&format!("\n{group}:\n"));
        for (name, help) in vars {
            text.push_str(&format!("  {name:<width$}  {help}\n"));
        }
    }
    text.push_str(
        "\nA secret in config.toml can be a command instead (api_key_cmd = \"pass show ably\"); secrets never \
         appear on screen, in logs, in history or in --dry-run output.\n",
    );
    text
}

/// `opsdeck help [TOPIC]`: a subcommand's full help, or a topic.
pub fn help(topic: &[String], out: &mut dyn Write) -> Result<(), Failure> {
    let mut command = Cli::command();
    command.build();
    let text = match topic {
        [] => command.render_long_help().to_string(),
        [name] if TOPICS.contains(&name.as_str()) => environment(),
        [name, ..] => {
            let names: Vec<String> = command
                .get_subcommands()
                .filter(|s| !s.is_hide_set())
                .map(|s| s.get_name().to_owned())
                .chain(TOPICS.iter().map(|t| (*t).to_owned()))
                .collect();
            match command.find_subcommand_mut(name).filter(|s| !s.is_hide_set()) {
                Some(sub) => sub.render_long_help().to_string(),
                None => {
                    let close = suggest::close_names(name, names.iter().map(String::as_str));
                    let hint = suggest::did_you_mean(&close).map(|q| format!("{q} ")).unwrap_or_default();
                    return Err(Failure::usage(format!(
                        "no help on '{}'; {hint}(topics: {})",
                        crate::inert::inert(name),
                        names.join(", ")
                    )));
                }
            }
        }
    };
    super::write_output(out, text.as_bytes())
}

/// `opsdeck man`: opsdeck(1) on `out`, or with `dir` opsdeck.1 and one page per subcommand
/// (opsdeck-call.1, ...) written there.
pub fn man(dir: Option<&Path>, out: &mut dyn Write) -> Result<(), Failure> {
    let mut command = Cli::command();
    command.build();
    let Some(dir) = dir else {
        return top_page(&command, out).and_then(|()| out.flush()).map_err(|e| Failure::output(&e));
    };
    let failed =
        |e: std::io::Error| Failure::runtime(format!("cannot write the manual pages into {}: {e}", dir.display()));
    std::fs::create_dir_all(dir).map_err(failed)?;
    let mut written = Vec::new();
    for sub in command.get_subcommands().filter(|s| !s.is_hide_set()) {
        let page = clap_mangen::Man::new(sub.clone());
        written.push(page.generate_to(dir).map_err(failed)?);
    }
    let top = dir.join("opsdeck.1");
    let mut file = std::fs::File::create(&top).map_err(failed)?;
    top_page(&command, &mut file).map_err(failed)?;
    written.insert(0, top);
    let list: String = written.iter().map(|p| format!("{}\n", p.display())).collect();
    super::write_output(out, list.as_bytes())
}

/// opsdeck(1): clap's sections, then ENVIRONMENT from [`environment_variables`].
fn top_page(command: &clap::Command, out: &mut dyn Write) -> std::io::Result<()> {
    let page = clap_mangen::Man::new(command.clone());
    page.render_title(out)?;
    page.render_name_section(out)?;
    page.render_synopsis_section(out)?;
    page.render_description_section(out)?;
    page.render_options_section(out)?;
    page.render_subcommands_section(out)?;
    out.write_all(b".SH ENVIRONMENT\n")?;
    for (_, vars) in environment_variables() {
        for (name, help) in vars {
            out.write_all(format!(".TP\n\\fB{}\\fR\n{}\n", roff(&name), roff(&help)).as_bytes())?;
        }
    }
    page.render_extra_section(out)?;
    page.render_version_section(out)
}

/// Text for a roff paragraph: backslashes and hyphens escaped, no line starting as a request.
fn roff(text: &str) -> String {
    let escaped = text.replace('\\', "\\e").replace('-', "\\-");
    if escaped.starts_with(['.', '\'']) {
        format!("\\&{escaped}")
    } else {
        escaped
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_environment_names_every_credential_and_url_variable() {
        let text = environment();
        for service in Service::ALL {
            for variable in credential_variables(service) {
                assert!(text.contains(&format!("  {variable} ")), "{variable} missing:\n{text}");
            }
            assert!(text.contains(&url_variable(service)), "{text}");
        }
        assert!(text.contains("OPSDECK_LOG") && text.contains("log level for the debug log (e.g. debug)"));
        assert!(text.contains("AVATAX_ACCOUNT_ID") && text.contains("(with AVATAX_LICENSE_KEY)"), "{text}");
    }

    #[test]
    fn roff_escapes_what_roff_would_act_on() {
        assert_eq!(roff("--all-pages"), "\\-\\-all\\-pages");
        assert_eq!(roff(".hidden"), "\\&.hidden");
        assert_eq!(roff("a\\b"), "a\\eb");
    }
}
