//! The command line: `opsdeck` (the console), `opsdeck sandbox`, `opsdeck ops`, `opsdeck call`.

use std::io::Write;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use crate::catalog::{Operation, Service};
use crate::client::{self, pagination, CallError, HttpSettings, Values};
use crate::config::{self, Config, Mode, ResolvedService};
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
#[derive(Debug, Args)]
pub struct GlobalArgs {
    /// Profile from config.toml; `local` = every service at the `opsdeck sandbox` default ports.
    #[arg(long, global = true, value_name = "NAME")]
    pub profile: Option<String>,
    /// Refuse to send any operation that changes something.
    #[arg(long, global = true)]
    pub read_only: bool,
    /// Theme: `dark`, `light`, or a file NAME.toml in the config dir's themes folder.
    #[arg(long, global = true, value_name = "NAME")]
    pub theme: Option<String>,
    /// Config file to use instead of config.toml in the platform config dir.
    #[arg(long, global = true, value_name = "PATH")]
    pub config: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the simulators in the foreground, for the console, scripts, and your own apps and SDKs.
    Sandbox {
        /// Control port; each service listens at base + offset (ably +1 ... easypost +8). 0 picks free ports.
        #[arg(long, default_value_t = sandbox::DEFAULT_PORT_BASE, value_name = "N")]
        port_base: u16,
        /// Seed of the demo data: the same seed gives the same data.
        #[arg(long, default_value_t = sandbox::DEFAULT_SEED, value_name = "N")]
        seed: u64,
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
    /// Print the request as a curl command (secrets redacted) and send nothing.
    #[arg(long)]
    pub dry_run: bool,
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

fn parse_params(op: &Operation, params: &[String]) -> Result<Values, Failure> {
    let mut values = Values::new();
    for param in params {
        let (name, value) = param.split_once('=').ok_or_else(|| {
            Failure::usage(format!(
                "'{param}' is not NAME=VALUE (parameters of {}: {})",
                op.full_name(),
                param_names(op)
            ))
        })?;
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
    global: &GlobalArgs,
    service: Service,
) -> Result<(ResolvedService, Option<sandbox::Sandbox>), Failure> {
    let config = Config::load(global.config.as_deref())?;
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

/// `opsdeck call`: prints the body on `out`; the error is for stderr.
pub async fn call(global: &GlobalArgs, args: &CallArgs, out: &mut dyn Write) -> Result<(), Failure> {
    let CallArgs { all_pages, dry_run, .. } = *args;
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
    let (resolved, sandbox) = resolve_target(global, service).await?;
    let target = &resolved.target;
    let request = client::build(op, &values, body.as_ref(), target).map_err(|e| call_failure(op, &e))?;
    if dry_run {
        let curl = client::request::to_curl(&request, &target.credentials).map_err(|e| call_failure(op, &e))?;
        return writeln!(out, "{curl}").map_err(|e| Failure::runtime(e.to_string()));
    }
    if sandbox.as_ref().is_some_and(|s| !s.endpoint(service).simulated) {
        return Err(Failure::runtime(format!(
            "{service} has no simulator yet and no live credentials are set; set {} to call the real service \
             (--dry-run shows the request)",
            config::credential_variables(service).join(", ")
        )));
    }
    if target.live && op.destructive {
        eprintln!("opsdeck: {} on LIVE {} ({})", op.full_name(), service.title(), target.base_url);
    }
    let settings = HttpSettings::default();
    let http = client::http_client(&settings).map_err(|e| call_failure(op, &e))?;
    let cancel = CancellationToken::new();
    let send = |request: client::PreparedRequest| {
        let (http, settings, cancel, credentials) = (&http, &settings, &cancel, &target.credentials);
        async move { client::request::execute(http, &request, credentials, settings, cancel).await }
    };
    let response = send(request.clone()).await.map_err(|e| call_failure(op, &e))?;
    let bytes = if all_pages {
        let mut pages = vec![json_of(&response)?];
        let mut trail = pagination::PageTrail::new(&request, pagination::DEFAULT_PAGE_CAP);
        let (mut request, mut response) = (request, response);
        while let Some(next) =
            pagination::next_page(op.paging, &request, &response).map_err(|e| call_failure(op, &e))?
        {
            trail.advance(&next).map_err(|e| call_failure(op, &e))?;
            response = send(next.clone()).await.map_err(|e| call_failure(op, &e))?;
            request = next;
            pages.push(json_of(&response)?);
        }
        pretty(&pagination::merge_pages(&pages))
    } else if let Ok(value) = serde_json::from_slice::<Value>(&response.body) {
        pretty(&value)
    } else {
        response.body.to_vec()
    };
    drop(sandbox);
    out.write_all(&bytes).map_err(|e| Failure::runtime(format!("cannot write output: {e}")))
}

fn json_of(response: &client::Response) -> Result<Value, Failure> {
    serde_json::from_slice(&response.body).map_err(|e| Failure::runtime(format!("a page is not JSON: {e}")))
}

fn pretty(value: &Value) -> Vec<u8> {
    let mut text = serde_json::to_vec_pretty(value).unwrap_or_default();
    text.push(b'\n');
    text
}

fn call_failure(op: &Operation, error: &CallError) -> Failure {
    Failure { code: error.exit_code(), message: format!("{}: {error}", op.full_name()) }
}

/// `opsdeck sandbox`: serves until Ctrl-C or SIGTERM.
pub async fn sandbox(port_base: u16, seed: u64, out: &mut dyn Write) -> Result<(), Failure> {
    let sandbox = sandbox::start(port_base, seed).await.map_err(|e| {
        Failure::runtime(format!(
            "{e}; is another opsdeck sandbox running? pick other ports with --port-base N (0 = any free)"
        ))
    })?;
    let mut table = format!(
        "opsdeck sandbox (seed {seed}); control http://{} (GET / lists services, POST /reset restores the data)\n\n{:<12} {:<26} {:<10} {}\n",
        sandbox.control, "SERVICE", "BASE URL", "STATE", "CREDENTIALS"
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
}
