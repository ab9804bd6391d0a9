//! The command line: `opsdeck` (the console), `opsdeck sandbox`, `opsdeck ops`, `opsdeck call`.

use std::io::{BufRead, Write};
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use crate::catalog::{Operation, Service};
use crate::client::{self, pagination, CallError, Values};
use crate::config::{self, Config, Mode, ResolvedService};
use crate::inert::{inert, inert_json, inert_lines};
use crate::sandbox;

/// A terminal operations console for Ably, Deepgram, AvaTax, TaxJar, Coinbase Exchange, Mailgun
/// and EasyPost, with a stateful simulator of each.
#[derive(Debug, Parser)]
#[command(name = "opsdeck", version, about, long_about = None)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// Options shared by every command.
#[derive(Debug, Default, Args)]
pub struct GlobalArgs {
    /// Profile from config.toml; `local` = every service at the `opsdeck sandbox` default ports.
    #[arg(long, global = true, value_name = "NAME")]
    pub profile: Option<String>,
    /// Refuse to send any operation that changes something.
    #[arg(long, global = true)]
    pub read_only: bool,
    /// Theme: `dark`, `light`, `plain` (no colour), or a file NAME.toml in the config dir's themes folder.
    #[arg(long, global = true, value_name = "NAME")]
    pub theme: Option<String>,
    /// Config file to use instead of config.toml in the platform config dir.
    #[arg(long, global = true, value_name = "PATH")]
    pub config: Option<PathBuf>,
    /// Write a debug log (`opsdeck paths` says where); `OPSDECK_LOG=FILTER` chooses what is logged.
    #[arg(long, global = true)]
    pub debug: bool,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the simulators in the foreground, for the console, scripts, and your own apps and SDKs.
    Sandbox {
        /// Control port; each service listens at base + offset (ably +1 ... easypost +8), so at most
        /// 65527. 0 picks free ports.
        #[arg(long, default_value_t = sandbox::DEFAULT_PORT_BASE, value_name = "N")]
        port_base: u16,
        /// Seed of the demo data: the same seed gives the same data.
        #[arg(long, default_value_t = sandbox::DEFAULT_SEED, value_name = "N")]
        seed: u64,
        /// Sandbox clock speed: every time-driven behaviour (history retention, and trackers,
        /// verifications and markets as they come) runs N times as fast. Greater than 0, at most
        /// 10000.
        #[arg(long, default_value_t = 1.0, value_name = "N", allow_negative_numbers = true)]
        speed: f64,
    },
    /// List the operations of the catalog: service, operation, method and path.
    Ops {
        /// Only this service (ably, deepgram, avatax, taxjar, coinbase, mailgun, easypost).
        service: Option<String>,
        /// One operation in full: its parameters, where they go, their rules and help.
        operation: Option<String>,
        /// Full descriptions (parameters, paging, ...) as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Call one operation and print the response body as JSON.
    Call(CallArgs),
    /// Past calls, newest first: `opsdeck history [SERVICE]`, `opsdeck history show ID`.
    History(HistoryArgs),
    /// Where opsdeck keeps its config, themes, history and log.
    Paths {
        /// As a JSON object.
        #[arg(long)]
        json: bool,
    },
}

/// `opsdeck history`'s arguments.
#[derive(Debug, Args)]
pub struct HistoryArgs {
    #[command(subcommand)]
    pub action: Option<HistoryAction>,
    /// Only this service's calls.
    pub service: Option<String>,
    /// As JSON.
    #[arg(long)]
    pub json: bool,
    /// Calls listed at most.
    #[arg(long, value_name = "N", default_value_t = 50)]
    pub limit: usize,
}

/// What `opsdeck history` does besides listing.
#[derive(Debug, Subcommand)]
pub enum HistoryAction {
    /// One call in full: parameters, status and the stored response body.
    Show {
        /// The call's id (the first column of `opsdeck history`).
        id: i64,
        /// As JSON.
        #[arg(long)]
        json: bool,
    },
    /// Delete every recorded call.
    Clear,
}

/// `opsdeck call`'s arguments.
#[derive(Debug, Args)]
pub struct CallArgs {
    /// Service name, e.g. ably.
    pub service: String,
    /// Operation name, e.g. messages_list (see `opsdeck ops SERVICE`).
    pub operation: String,
    /// Parameters as NAME=VALUE, e.g. channelId=orders:eu limit=5.
    #[arg(value_name = "NAME=VALUE")]
    pub params: Vec<String>,
    /// The request body as JSON, or @FILE to read it from a file.
    #[arg(long, value_name = "JSON|@FILE")]
    pub body: Option<String>,
    /// Follow the pages of a list operation and print all records.
    #[arg(long)]
    pub all_pages: bool,
    /// With --all-pages: pages read at most; a longer list is an error (exit 1) naming the pages read.
    #[arg(long, value_name = "N", requires = "all_pages", value_parser = parse_page_cap,
          default_value_t = pagination::DEFAULT_PAGE_CAP)]
    pub page_cap: usize,
    /// Print the request as a curl command and send nothing: secrets as the $VARIABLES that hold them, signatures as placeholders.
    #[arg(long)]
    pub dry_run: bool,
    /// Send a destructive operation to a LIVE service without asking to type the target's id.
    #[arg(long)]
    pub yes: bool,
}

/// `--page-cap N`: a whole number of pages, at least one.
fn parse_page_cap(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(cap) if cap > 0 => Ok(cap),
        _ => Err(format!("'{text}' is not a page count; give a whole number of at least 1, e.g. --page-cap 50")),
    }
}

/// Where `opsdeck call` writes, and whether a person is there to read it and answer.
pub struct CallIo<'a> {
    /// The response body, or the vendor's error body.
    pub out: &'a mut dyn Write,
    /// Whether `out` is a terminal: then no raw byte from a server is written to it.
    pub out_is_terminal: bool,
    /// Warnings, and the question before a destructive call on LIVE.
    pub err: &'a mut dyn Write,
    /// Where the answer to that question is read when a person can give one (stdin and stderr
    /// are terminals); without it such a call needs `--yes`.
    pub answers: Option<&'a mut dyn BufRead>,
    /// The history file the call is recorded in (`None`: not recorded); see `crate::history`.
    pub history: Option<PathBuf>,
}

/// A failure of a command, with the exit code it maps to.
#[derive(Debug)]
pub struct Failure {
    pub code: i32,
    pub message: String,
}

impl Failure {
    fn usage(message: impl Into<String>) -> Failure {
        Failure { code: 2, message: message.into() }
    }
    fn runtime(message: impl Into<String>) -> Failure {
        Failure { code: 1, message: message.into() }
    }
}

impl From<anyhow::Error> for Failure {
    fn from(e: anyhow::Error) -> Failure {
        Failure::usage(format!("{e:#}"))
    }
}

/// `opsdeck ops`.
pub fn ops(service: Option<&str>, operation: Option<&str>, as_json: bool, out: &mut dyn Write) -> Result<(), Failure> {
    let services = match service {
        Some(name) => vec![parse_service(name)?],
        None => Service::ALL.to_vec(),
    };
    let mut ops: Vec<&Operation> = services.iter().flat_map(|s| s.operations()).collect();
    let write = |out: &mut dyn Write, text: String| {
        out.write_all(text.as_bytes()).map_err(|e| Failure::runtime(format!("cannot write output: {e}")))
    };
    if let (Some(name), [service]) = (operation, services.as_slice()) {
        let op = parse_operation(*service, name)?;
        if !as_json {
            return write(out, explain(op));
        }
        ops = vec![op];
    }
    if as_json {
        let list: Vec<Value> = ops.iter().map(|op| describe(op)).collect();
        let text = serde_json::to_string_pretty(&list).map_err(|e| Failure::runtime(e.to_string()))?;
        return write(out, text + "\n");
    }
    let width = ops.iter().map(|op| op.name.len()).max().unwrap_or(0);
    let mut text = String::new();
    for op in ops {
        text.push_str(&format!("{:<9} {:<width$} {:<6} {}\n", op.service.name(), op.name, op.method.as_str(), op.path));
    }
    write(out, text)
}

/// One operation for people: what it does, where it goes, and every parameter with its rules.
fn explain(op: &Operation) -> String {
    let mut text = format!("{} — {}\n{} {}", op.full_name(), op.summary, op.method, op.path);
    if op.paging != crate::catalog::Paging::None {
        text.push_str(&format!("   (paged: {:?}; --all-pages follows it)", op.paging));
    }
    if op.destructive {
        text.push_str("   (destructive: the console asks first)");
    } else if op.mutates {
        text.push_str("   (changes state: refused with --read-only)");
    }
    text.push('\n');
    if op.params.is_empty() {
        text.push_str("no parameters\n");
    }
    let width = op.params.iter().map(|p| p.name.len()).max().unwrap_or(0) + 1;
    for p in op.params {
        let mut rules = Vec::new();
        match (p.min, p.max) {
            (Some(min), Some(max)) => rules.push(format!("{min}..{max}")),
            (Some(min), None) => rules.push(format!(">= {min}")),
            (None, Some(max)) => rules.push(format!("<= {max}")),
            (None, None) => {}
        }
        if !p.allowed.is_empty() {
            rules.push(format!("one of {}", p.allowed.join("|")));
        }
        if let Some(default) = p.default {
            rules.push(format!("default {default}"));
        }
        let name = format!("{}{}", p.name, if p.required { "*" } else { "" });
        let rules = if rules.is_empty() { String::new() } else { format!(" [{}]", rules.join(", ")) };
        text.push_str(&format!("  {name:<width$} {:<6} {:<8} {}{rules}\n", p.location.label(), p.kind.label(), p.help));
    }
    text.push_str(&format!("example: opsdeck call {} {}", op.service, op.name));
    for p in op.params.iter().filter(|p| p.required) {
        text.push_str(&format!(" {}=…", p.name));
    }
    text.push('\n');
    text
}

/// An operation as JSON, for `opsdeck ops --json`.
fn describe(op: &Operation) -> Value {
    let params: Vec<Value> = op
        .params
        .iter()
        .map(|p| {
            json!({
                "name": p.name, "in": p.location.label(), "type": p.kind.label(), "required": p.required,
                "default": p.default, "min": p.min, "max": p.max, "allowed": p.allowed, "help": p.help,
            })
        })
        .collect();
    json!({
        "service": op.service.name(), "operation": op.name, "resource": op.resource,
        "method": op.method.as_str(), "path": op.path, "summary": op.summary,
        "body": format!("{:?}", op.body), "paging": format!("{:?}", op.paging),
        "mutates": op.mutates, "destructive": op.destructive, "params": params,
    })
}

fn parse_service(name: &str) -> Result<Service, Failure> {
    Service::parse(name).ok_or_else(|| {
        let names: Vec<&str> = Service::ALL.iter().map(|s| s.name()).collect();
        Failure::usage(format!("unknown service '{name}'; services: {}", names.join(", ")))
    })
}

fn parse_operation(service: Service, name: &str) -> Result<&'static Operation, Failure> {
    service.operation(name).ok_or_else(|| {
        let mut close: Vec<&str> = service
            .operations()
            .iter()
            .map(|op| op.name)
            .filter(|n| n.split('_').any(|w| name.contains(w)) || name.split('_').any(|w| n.contains(w)))
            .collect();
        close.truncate(6);
        let hint = if close.is_empty() {
            format!("see `opsdeck ops {service}`")
        } else {
            format!("did you mean {}? (all: `opsdeck ops {service}`)", close.join(", "))
        };
        Failure::usage(format!("unknown operation '{name}' of {service}; {hint}"))
    })
}

/// `NAME=VALUE` arguments, each naming a parameter of `op` once: a second value for the same
/// name, or a name `op` does not have, is an error rather than a silent choice.
fn parse_params(op: &Operation, params: &[String]) -> Result<Values, Failure> {
    let mut values = Values::new();
    for param in params {
        let (name, value) = param.split_once('=').filter(|(name, _)| !name.is_empty()).ok_or_else(|| {
            Failure::usage(format!(
                "'{param}' is not NAME=VALUE (parameters of {}: {})",
                op.full_name(),
                param_names(op)
            ))
        })?;
        let Some(known) = op.params.iter().find(|p| p.name == name) else {
            return Err(Failure::usage(format!(
                "{name}: unknown parameter of {}; its parameters: {} (details: `opsdeck ops {} {}`)",
                op.full_name(),
                param_names(op),
                op.service,
                op.name
            )));
        };
        if let Some(first) = values.get(name) {
            let hint = if known.kind == crate::catalog::Kind::List {
                format!("; a list takes commas: {name}={first},{value}")
            } else {
                String::new()
            };
            return Err(Failure::usage(format!("{name} is given twice ('{first}' and '{value}'); give it once{hint}")));
        }
        values.insert(name.to_owned(), value.to_owned());
    }
    Ok(values)
}

fn param_names(op: &Operation) -> String {
    if op.params.is_empty() {
        return "none".into();
    }
    op.params.iter().map(|p| p.name).collect::<Vec<_>>().join(", ")
}

/// `--body JSON|@FILE`, parsed.
fn parse_body(body: &str) -> Result<Value, Failure> {
    let (text, source) = match body.strip_prefix('@') {
        Some(path) => (
            std::fs::read_to_string(path)
                .map_err(|e| Failure::usage(format!("cannot read --body file {path}: {e}")))?,
            path.to_owned(),
        ),
        None => (body.to_owned(), "--body".to_owned()),
    };
    serde_json::from_str(&text).map_err(|e| Failure::usage(format!("{source} is not valid JSON: {e}")))
}

/// Finds where a service's calls go; starts the embedded simulator when that is the target.
/// Returns the sandbox too, so it lives as long as the call.
async fn resolve_target(
    config: &Config,
    global: &GlobalArgs,
    service: Service,
) -> Result<(ResolvedService, Option<sandbox::Sandbox>), Failure> {
    let placeholder = |_: Service| String::new();
    let env = |name: &str| std::env::var(name).ok();
    let resolved = config.resolve(global.profile.as_deref(), &env, &placeholder)?;
    let mut target = resolved
        .into_iter()
        .find(|r| r.target.service == service)
        .ok_or_else(|| Failure::runtime(format!("{service} was not resolved")))?;
    if target.mode != Mode::Embedded {
        return Ok((target, None));
    }
    let sandbox = sandbox::start(0, sandbox::DEFAULT_SEED)
        .await
        .map_err(|e| Failure::runtime(format!("cannot start the embedded simulator: {e}")))?;
    target.target.base_url = sandbox.base_url(service);
    Ok((target, Some(sandbox)))
}

/// Writes each warning once on stderr, as text that cannot act on the terminal.
fn warn(err: &mut dyn Write, warnings: &[String]) {
    for warning in warnings {
        // A warning that cannot be written has nowhere else to go; the call goes on.
        let _ = writeln!(err, "opsdeck: warning: {}", inert(warning));
    }
}

/// `opsdeck call`: prints the body (or the vendor's error body) on `io.out`; the returned
/// failure is the one line for stderr.
pub async fn call(global: &GlobalArgs, args: &CallArgs, io: &mut CallIo<'_>) -> Result<(), Failure> {
    let CallArgs { all_pages, dry_run, yes, page_cap, .. } = *args;
    let service = parse_service(&args.service)?;
    let op = parse_operation(service, &args.operation)?;
    let values = parse_params(op, &args.params)?;
    let body = args.body.as_deref().map(parse_body).transpose()?;
    if global.read_only && op.mutates {
        return Err(Failure::usage(CallError::ReadOnly(op.full_name()).to_string()));
    }
    if all_pages && op.paging == crate::catalog::Paging::None {
        return Err(Failure::usage(format!("{} is not a paged list; drop --all-pages", op.full_name())));
    }
    let config = Config::load(global.config.as_deref())?;
    warn(io.err, &config.warnings);
    let (resolved, sandbox) = resolve_target(&config, global, service).await?;
    warn(io.err, &resolved.warnings);
    let target = &resolved.target;
    let request = client::build(op, &values, body.as_ref(), target).map_err(|e| call_failure(op, &e))?;
    if dry_run {
        let curl = client::request::to_curl(&request, &target.credentials).map_err(|e| call_failure(op, &e))?;
        let curl = if io.out_is_terminal { inert_lines(&curl) } else { curl.into() };
        return writeln!(io.out, "{curl}").map_err(|e| Failure::runtime(format!("cannot write output: {e}")));
    }
    if sandbox.as_ref().is_some_and(|s| !s.endpoint(service).simulated) {
        return Err(Failure::runtime(format!(
            "{service} has no simulator yet and no live credentials are set; set {} to call the real service \
             (--dry-run shows the request)",
            config::credential_variables(service).join(", ")
        )));
    }
    if target.live && op.destructive {
        let profile = global.profile.as_deref().or(config.default_profile.as_deref()).unwrap_or("default");
        match (yes, io.answers.as_deref_mut()) {
            (true, _) => {
                warn(io.err, &[format!("{} on LIVE {} ({})", op.full_name(), service.title(), target.base_url)])
            }
            (false, Some(answers)) => confirm_on_live(op, &values, target, profile, answers, io.err)?,
            (false, None) => {
                return Err(Failure::usage(format!(
                    "{} cannot be undone and {} is LIVE ({}); there is no terminal to ask on, so add --yes to send it",
                    op.full_name(),
                    service.title(),
                    target.base_url
                )))
            }
        }
    }
    let (history, warning) = crate::history::open_for_call(io.history.as_deref(), &config.history);
    warn(io.err, &Vec::from_iter(warning));
    let settings = config.http_settings();
    let http = client::http_client(&settings).map_err(|e| call_failure(op, &e))?;
    let cancel = CancellationToken::new();
    let send = |request: client::PreparedRequest| {
        let (http, settings, cancel, credentials) = (&http, &settings, &cancel, &target.credentials);
        async move { client::request::execute(http, &request, credentials, settings, cancel).await }
    };
    let (sent, first) = (std::time::Instant::now(), send(request.clone()).await);
    if let Some(history) = &history {
        let profile = global.profile.as_deref().or(config.default_profile.as_deref()).unwrap_or("default");
        let (source, mode) = (crate::history::Source::Cli, &resolved.mode);
        let entry = crate::history::Entry::new(
            source,
            profile,
            op,
            &values,
            body.as_ref(),
            target,
            mode,
            first.as_ref(),
            sent.elapsed(),
        );
        if let Err(e) = history.record(&entry) {
            warn(io.err, &[format!("{e}; this call is not recorded in the history")]);
        }
    }
    let response = match first {
        Ok(response) => response,
        Err(error) if error.api_error().is_some() => return Err(api_failure(op, &error, io)),
        Err(error) => return Err(call_failure(op, &error)),
    };
    let bytes = if all_pages {
        let mut pages = vec![json_of(&response)?];
        let mut trail = pagination::PageTrail::new(&request, page_cap);
        let (mut request, mut response) = (request, response);
        loop {
            let step = match pagination::next_page(op.paging, &request, &response) {
                Ok(None) => break,
                Ok(Some(next)) => match trail.advance(&next) {
                    Ok(()) => send(next.clone()).await.map(|response| (next, response)),
                    Err(error) => Err(error),
                },
                Err(error) => Err(error),
            };
            match step.map_err(|e| call_failure(op, &e)).and_then(|(next, page)| Ok((next, json_of(&page)?, page))) {
                Ok((next, json, page)) => {
                    pages.push(json);
                    (request, response) = (next, page);
                }
                Err(failure) => {
                    // Nothing read is lost: the records so far go out before the error.
                    let read = pages.len();
                    write_out(io.out, &pretty(&pagination::merge_pages(&pages)))?;
                    let records =
                        if read == 1 { "the page read is".to_owned() } else { format!("the {read} pages read are") };
                    return Err(Failure {
                        code: failure.code,
                        message: format!("{}; {records} on stdout", failure.message),
                    });
                }
            }
        }
        pretty(&pagination::merge_pages(&pages))
    } else {
        printable_body(&response.body, response.content_type(), io.out_is_terminal)
            .map_err(|reason| Failure::runtime(format!("{}: {reason}", op.full_name())))?
    };
    drop(sandbox);
    write_out(io.out, &bytes)
}

fn write_out(out: &mut dyn Write, bytes: &[u8]) -> Result<(), Failure> {
    out.write_all(bytes).and_then(|()| out.flush()).map_err(|e| Failure::runtime(format!("cannot write output: {e}")))
}

/// A body as it may be printed: JSON pretty and inert (still the same JSON); anything else raw
/// into a file or pipe, but on a terminal only as inert text, never as raw bytes. `Err` says why
/// it cannot be shown.
fn printable_body(body: &[u8], content_type: Option<&str>, to_terminal: bool) -> Result<Vec<u8>, String> {
    if let Ok(value) = serde_json::from_slice::<Value>(body) {
        return Ok(pretty(&value));
    }
    if !to_terminal || body.is_empty() {
        return Ok(body.to_vec());
    }
    match std::str::from_utf8(body) {
        Ok(text) => {
            let mut shown = inert_lines(text).into_owned();
            if !shown.ends_with('\n') {
                shown.push('\n');
            }
            Ok(shown.into_bytes())
        }
        Err(_) => Err(format!(
            "the response is {} bytes of binary data ({}); not printed on a terminal: redirect stdout to a file, \
             e.g. `> response.bin`",
            body.len(),
            inert(content_type.unwrap_or("no content type"))
        )),
    }
}

/// An API error: the vendor's error body on stdout (as `gh api` does), the one-line message
/// for stderr.
fn api_failure(op: &Operation, error: &CallError, io: &mut CallIo<'_>) -> Failure {
    let mut failure = call_failure(op, error);
    let body = error.api_error().map(|api| api.body.clone()).unwrap_or_default();
    match printable_body(&body, None, io.out_is_terminal) {
        Ok(bytes) => {
            if let Err(unwritten) = write_out(io.out, &bytes) {
                failure.message.push_str(&format!(" ({})", unwritten.message));
            }
        }
        Err(reason) => failure.message.push_str(&format!(" (error body not shown: {reason})")),
    }
    failure
}

fn json_of(response: &client::Response) -> Result<Value, Failure> {
    serde_json::from_slice(&response.body).map_err(|e| {
        Failure::runtime(format!(
            "a page of {} is not JSON ({e}); its first bytes: {}",
            inert(&response.request_line),
            inert(&String::from_utf8_lossy(&response.body[..response.body.len().min(80)]))
        ))
    })
}

/// `value` as pretty JSON with a final newline, inert for a terminal and still the same JSON.
fn pretty(value: &Value) -> Vec<u8> {
    let text = serde_json::to_string_pretty(value).unwrap_or_default();
    let mut text = inert_json(&text).into_owned();
    text.push('\n');
    text.into_bytes()
}

/// One line for stderr; the error's text may come from the server, so it is made inert.
fn call_failure(op: &Operation, error: &CallError) -> Failure {
    Failure { code: error.exit_code(), message: format!("{}: {}", op.full_name(), inert(&error.to_string())) }
}

/// What must be typed to confirm a destructive call: the value of its path parameters (the
/// target's id), else the first value given, else the operation's name.
fn target_id(op: &Operation, values: &Values) -> String {
    let path_values: Vec<&str> = op
        .params
        .iter()
        .filter(|p| p.location == crate::catalog::Location::Path)
        .filter_map(|p| values.get(p.name).map(String::as_str).filter(|v| !v.is_empty()))
        .collect();
    if !path_values.is_empty() {
        return path_values.join("/");
    }
    values.values().find(|v| !v.is_empty()).cloned().unwrap_or_else(|| op.name.to_owned())
}

/// Asks before a destructive operation runs on LIVE, as the console's confirm dialog does:
/// restates the service, profile, base URL and target, and wants the target's id typed back, so
/// a reflexive Enter cannot delete production data.
pub fn confirm_on_live(
    op: &Operation,
    values: &Values,
    target: &client::Target,
    profile: &str,
    answers: &mut dyn BufRead,
    ask: &mut dyn Write,
) -> Result<(), Failure> {
    let expected = target_id(op, values);
    let given = if values.is_empty() {
        "(no parameters)".to_owned()
    } else {
        values.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join("  ")
    };
    let question = format!(
        "LIVE {} · profile {profile} · {}\n{} — {}. This cannot be undone.\ntarget: {given}\n\
         Type {expected} and press Enter to confirm (anything else cancels): ",
        op.service.title(),
        target.base_url,
        op.full_name(),
        op.summary,
    );
    ask.write_all(inert_lines(&question).as_bytes())
        .and_then(|()| ask.flush())
        .map_err(|e| Failure::runtime(format!("cannot ask for confirmation: {e}")))?;
    let mut answer = String::new();
    answers.read_line(&mut answer).map_err(|e| Failure::runtime(format!("cannot read the confirmation: {e}")))?;
    if answer.trim_end_matches(['\r', '\n']) == expected {
        return Ok(());
    }
    Err(Failure::runtime(format!("{} not confirmed (the answer was not {expected}); nothing was sent", op.full_name())))
}

/// The highest offset from `--port-base` a listener uses.
fn highest_port_offset() -> u16 {
    Service::ALL
        .into_iter()
        .flat_map(|s| [sandbox::port_offset(s, None), sandbox::port_offset(s, Some("eu"))])
        .max()
        .unwrap_or(0)
}

/// A port base whose listeners all fit below 65536 (or 0: free ports).
fn check_port_base(port_base: u16) -> Result<(), Failure> {
    let highest = highest_port_offset();
    if port_base != 0 && port_base.checked_add(highest).is_none() {
        return Err(Failure::usage(format!(
            "--port-base {port_base} is too high: the services listen at base+1 to base+{highest}, so give at most \
             {}, or 0 for free ports",
            u16::MAX - highest
        )));
    }
    Ok(())
}

/// `opsdeck sandbox`: serves until Ctrl-C or SIGTERM.
pub async fn sandbox(port_base: u16, seed: u64, speed: f64, out: &mut dyn Write) -> Result<(), Failure> {
    check_port_base(port_base)?;
    let clock = sandbox::SandboxClock::new(speed).map_err(|e| Failure::usage(format!("--speed {speed}: {e}")))?;
    let options = sandbox::SandboxOptions { clock, ..sandbox::SandboxOptions::new(port_base, seed) };
    let sandbox = sandbox::start_options(options).await.map_err(|e| {
        Failure::runtime(format!(
            "{e}; is another opsdeck sandbox running? pick other ports with --port-base N (0 = any free)"
        ))
    })?;
    let control = sandbox.control_url();
    let mut table = format!(
        "opsdeck sandbox (seed {seed}, speed {speed}x); control {control}\n\
         \x20 GET    {control}/requests?service=NAME&limit=N   recent requests, secrets redacted\n\
         \x20 POST   {control}/reset?service=NAME              restore the seeded data (all without service)\n\
         \x20 POST   {control}/faults                          inject a fault: {{\"service\",\"path\",\"status\"|\"latency_ms\"|\"drop\"|\"retry_after\",\"count\"|\"probability\"}}; GET lists, DELETE removes\n\
         \n{:<12} {:<26} {:<10} {}\n",
        "SERVICE", "BASE URL", "STATE", "CREDENTIALS"
    );
    for endpoint in &sandbox.endpoints {
        let name = match endpoint.region {
            Some(region) => format!("{}-{region}", endpoint.service),
            None => endpoint.service.name().to_owned(),
        };
        let state = if endpoint.simulated { "simulated" } else { "not yet" };
        let base = endpoint.sdk_base_url();
        table.push_str(&format!("{name:<12} {base:<26} {state:<10} {}\n", credentials_line(endpoint.service)));
    }
    table.push_str("\nCtrl-C stops.\n");
    out.write_all(table.as_bytes()).and_then(|()| out.flush()).map_err(|e| Failure::runtime(e.to_string()))?;
    wait_for_shutdown().await;
    sandbox.shutdown();
    Ok(())
}

fn credentials_line(service: Service) -> String {
    use crate::sandbox::credentials as c;
    match service {
        Service::Ably => format!("key {}", c::ABLY_KEY),
        Service::Deepgram => format!("Authorization: Token {}", c::DEEPGRAM_KEY),
        Service::Avatax => format!("Basic {}:{}", c::AVATAX_ACCOUNT_ID, c::AVATAX_LICENSE_KEY),
        Service::Taxjar => format!("Authorization: Bearer {}", c::TAXJAR_TOKEN),
        Service::Coinbase => {
            format!("key {} secret {} passphrase {}", c::COINBASE_KEY, c::COINBASE_SECRET, c::COINBASE_PASSPHRASE)
        }
        Service::Mailgun => format!("Basic api:{}", c::MAILGUN_KEY),
        Service::Easypost => format!("key {} (Basic, empty password)", c::EASYPOST_KEY),
    }
}

/// Resolves on Ctrl-C or SIGTERM.
pub async fn wait_for_shutdown() {
    #[cfg(unix)]
    {
        let mut term = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(term) => term,
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
                return;
            }
        };
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ops_lists_every_operation_with_method_and_path() {
        let mut out = Vec::new();
        ops(Some("ably"), None, false, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(text.lines().count(), 18);
        assert!(text.lines().any(|l| l.split_whitespace().collect::<Vec<_>>()
            == ["ably", "messages_list", "GET", "/channels/{channelId}/messages"]));
        let err = ops(Some("slack"), None, false, &mut Vec::new()).unwrap_err();
        assert_eq!(err.code, 2);
        assert!(err.message.contains("services: ably, deepgram"));
    }

    #[test]
    fn one_operation_in_full() {
        let mut out = Vec::new();
        ops(Some("ably"), Some("messages_list"), false, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(
            text.starts_with("ably messages_list — message history of a channel\nGET /channels/{channelId}/messages")
        );
        assert!(text.contains("channelId*"), "{text}");
        assert!(text.contains("limit"), "{text}");
        assert!(text.contains("[1..1000, default 100]"), "{text}");
        assert!(text.contains("example: opsdeck call ably messages_list channelId=…"), "{text}");
        assert_eq!(ops(Some("ably"), Some("nope"), false, &mut Vec::new()).unwrap_err().code, 2);
    }

    #[test]
    fn unknown_operation_suggests_close_names() {
        let err = parse_operation(Service::Ably, "messages_lst").unwrap_err();
        assert_eq!(err.code, 2);
        assert!(
            err.message.contains("did you mean messages_publish, messages_batch_publish, messages_list"),
            "{}",
            err.message
        );
    }
    fn live_ably(base_url: &str) -> client::Target {
        client::Target {
            service: Service::Ably,
            base_url: base_url.to_owned(),
            credentials: client::Credentials::AblyKey(client::Secret::new("a.b:c")),
            live: true,
        }
    }

    fn ask(op: &str, params: &[&str], answer: &str) -> (Result<(), Failure>, String) {
        let op = Service::Ably.operation(op).unwrap();
        let params: Vec<String> = params.iter().map(|p| (*p).to_owned()).collect();
        let values = parse_params(op, &params).unwrap();
        let mut question = Vec::new();
        let target = live_ably("https://main.realtime.ably.net");
        let result = confirm_on_live(op, &values, &target, "work", &mut answer.as_bytes(), &mut question);
        (result, String::from_utf8(question).unwrap())
    }

    #[test]
    fn a_destructive_call_on_live_asks_for_the_target_id() {
        let (result, question) = ask("push_device_delete", &["deviceId=phone-7"], "phone-7\n");
        assert!(result.is_ok());
        assert_eq!(
            question,
            "LIVE Ably · profile work · https://main.realtime.ably.net\n\
             ably push_device_delete — unregister a device and its subscriptions. This cannot be undone.\n\
             target: deviceId=phone-7\n\
             Type phone-7 and press Enter to confirm (anything else cancels): "
        );
        for answer in ["y\n", "\n", "", "phone-8\n"] {
            let (result, _) = ask("push_device_delete", &["deviceId=phone-7"], answer);
            let failure = result.unwrap_err();
            assert_eq!(failure.code, 1, "{answer:?}");
            assert!(failure.message.contains("not confirmed") && failure.message.contains("nothing was sent"));
        }
        let (result, question) = ask("push_subscriptions_delete", &["deviceId=d\u{1b}[2J"], "d\u{1b}[2J\r\n");
        assert!(result.is_ok());
        assert!(question.contains("Type d␛[2J and press Enter"), "{question}");
        let (result, question) = ask("push_subscriptions_delete", &[], "push_subscriptions_delete\n");
        assert!(result.is_ok(), "{question}");
        assert!(question.contains("target: (no parameters)"), "{question}");
    }

    #[test]
    fn parameters_given_twice_or_unknown_are_errors() {
        let op = Service::Ably.operation("messages_list").unwrap();
        let twice = |params: &[&str]| {
            let params: Vec<String> = params.iter().map(|p| (*p).to_owned()).collect();
            parse_params(op, &params).unwrap_err()
        };
        let err = twice(&["channelId=a", "limit=5", "limit=10"]);
        assert_eq!(err.code, 2);
        assert_eq!(err.message, "limit is given twice ('5' and '10'); give it once");
        let err = twice(&["channelId=a", "colour=red"]);
        assert!(err
            .message
            .starts_with("colour: unknown parameter of ably messages_list; its parameters: channelId, "));
        assert!(err.message.ends_with("(details: `opsdeck ops ably messages_list`)"), "{}", err.message);
        assert!(twice(&["=a"]).message.contains("is not NAME=VALUE"));
        let (op, list) = Service::ALL
            .iter()
            .flat_map(|s| s.operations())
            .find_map(|op| op.params.iter().find(|p| p.kind == crate::catalog::Kind::List).map(|p| (op, p)))
            .unwrap();
        let params = vec![format!("{}=a", list.name), format!("{}=b", list.name)];
        let err = parse_params(op, &params).unwrap_err();
        assert!(err.message.ends_with(&format!("a list takes commas: {}=a,b", list.name)), "{}", err.message);
    }

    #[test]
    fn bodies_reach_a_terminal_only_inert() {
        let json = "{\"name\":\"\\u001b]52;c;aGk=\\u0007\",\"data\":\"\u{9b}2J \u{202e}\"}".as_bytes();
        let shown = String::from_utf8(printable_body(json, None, true).unwrap()).unwrap();
        assert!(!shown.chars().any(|c| crate::inert::is_unsafe(c) && c != '\n'), "{shown}");
        let back: Value = serde_json::from_str(&shown).unwrap();
        assert_eq!(back, serde_json::from_slice::<Value>(json).unwrap());

        let text = b"plain \x1b[2Jtext\n\xc2\x9b";
        let shown = String::from_utf8(printable_body(text, Some("text/plain"), true).unwrap()).unwrap();
        assert_eq!(shown, "plain ␛[2Jtext\n\\u{9b}\n");
        assert_eq!(printable_body(text, Some("text/plain"), false).unwrap(), text, "a file gets the bytes");

        let binary = b"\x89PNG\r\n\x1a\n\xff\xfe";
        let reason = printable_body(binary, Some("image/png"), true).unwrap_err();
        assert!(
            reason.contains("10 bytes of binary data (image/png)") && reason.contains("redirect stdout"),
            "{reason}"
        );
        assert_eq!(printable_body(binary, Some("image/png"), false).unwrap(), binary);
    }

    #[test]
    fn a_port_base_whose_listeners_overflow_is_a_usage_error() {
        let err = check_port_base(65530).unwrap_err();
        assert_eq!(err.code, 2);
        assert!(err.message.contains("give at most 65527, or 0 for free ports"), "{}", err.message);
        assert!(check_port_base(65527).is_ok() && check_port_base(0).is_ok() && check_port_base(7700).is_ok());
    }

    #[test]
    fn the_page_cap_is_a_positive_count() {
        assert_eq!(parse_page_cap("3"), Ok(3));
        for bad in ["0", "-1", "lots", ""] {
            assert!(parse_page_cap(bad).unwrap_err().contains("at least 1"), "{bad}");
        }
    }
}
