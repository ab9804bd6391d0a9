//! The command line: `opsdeck` (the console), `opsdeck sandbox`, `opsdeck ops`, `opsdeck call`.

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};

use clap::{Args, Parser, Subcommand};
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

pub use crate::args::{GlobalArgs, TargetArgs};
use crate::catalog::{Operation, Service};
use crate::client::{self, pagination, CallError, Values};
use crate::config::{Config, Mode, ResolvedService};
use crate::inert::{inert, inert_json, inert_lines};
use crate::sandbox::{self, highest_port_offset};

pub mod complete;
pub mod docs;
mod find_sandbox;
pub mod output;
mod suggest;

/// A terminal operations console for Ably, Deepgram, AvaTax, TaxJar, Coinbase Exchange, Mailgun
/// and EasyPost, with a stateful simulator of each.
#[derive(Debug, Parser)]
#[command(name = "opsdeck", version, about, long_about = None, disable_help_subcommand = true,
          after_help = TOP_EXAMPLES)]
pub struct Cli {
    /// The console's options; `opsdeck call` takes them after `call` too (`--theme` only acts on the console).
    #[command(flatten)]
    pub global: GlobalArgs,
    #[command(subcommand)]
    pub command: Option<Command>,
}

const TOP_EXAMPLES: &str = "\
Examples:
  opsdeck                                   the console, every service on its simulator
  opsdeck --profile work --read-only        the console on live credentials, nothing can change
  opsdeck ops ably                          the operations of a service
  opsdeck call ably messages_list channelId=orders:eu --jq '.[].name'
  opsdeck sandbox --port-base 7700          the simulators for your own apps and SDKs
  opsdeck help environment                  every environment variable opsdeck reads
  source <(opsdeck completions bash)        tab completion of services, operations and NAME=";

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
        /// Sandbox clock speed: every time-driven behaviour (history retention, Mailgun's
        /// deliveries, engagement, webhook retries and DNS, EasyPost's trackers, batches, refunds
        /// and webhook retries) runs N times as fast. Greater than 0, at most 10000.
        #[arg(long, default_value_t = 1.0, value_name = "N", allow_negative_numbers = true)]
        speed: f64,
        /// Sandbox seconds before a new Mailgun domain's DNS records appear in the simulated
        /// DNS, so `domains_verify` first reports them missing.
        #[arg(long, default_value_t = sandbox::DEFAULT_DNS_DELAY_SECS, value_name = "SECONDS")]
        dns_delay: u64,
        /// Avalara's ZIP5 sales tax rate tables for AvaTax and TaxJar: one CSV, or a folder of
        /// TAXRATES_ZIP5_*.csv as Avalara publishes them. A ZIP they list is taxed at its local
        /// rates instead of its state's base rate. Default: OPSDECK_TAX_RATES, then the config's
        /// [sandbox] tax_rates, else the built-in tables.
        #[arg(long, value_name = "PATH")]
        tax_rates: Option<PathBuf>,
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
    #[command(after_help = CALL_EXAMPLES)]
    Call(CallArgs),
    /// Print a shell completion script: services, operations, NAME= parameters and their values,
    /// profiles and themes complete from the catalog and your config.
    #[command(after_help = COMPLETION_EXAMPLES)]
    Completions {
        /// The shell to complete in.
        shell: complete::Shell,
    },
    /// Print the manual page opsdeck(1), or write it and one page per subcommand into a folder.
    Man {
        /// Write opsdeck.1, opsdeck-call.1, ... into this folder instead of printing opsdeck.1.
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
    },
    /// Help on a subcommand (`opsdeck help call`), or on a topic: `opsdeck help environment`.
    Help {
        /// A subcommand, or `environment` for every environment variable opsdeck reads.
        #[arg(value_name = "TOPIC")]
        topic: Vec<String>,
    },
    /// Completion candidates for the words of a command line, one per line (used by the scripts
    /// of `opsdeck completions`).
    #[command(name = "__complete", hide = true)]
    Complete {
        /// The words after `opsdeck`, the last one being the word under the cursor (maybe empty).
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        words: Vec<String>,
    },
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

const CALL_EXAMPLES: &str = "\
Examples:
  opsdeck call ably messages_list channelId=orders:eu limit=5
  opsdeck call ably messages_list channelId=orders:eu --all-pages --jq '.[].id'
  opsdeck call ably messages_list channelId=orders:eu --all-pages --ndjson | head -3
  opsdeck call avatax companies_list -o table
  opsdeck call ably channels_list --jq '.[] | select(.status.isActive) | .channelId'
  opsdeck call ably time_get --include
  opsdeck call ably messages_publish channelId=orders:eu name=shipped data=hello --dry-run
  opsdeck call taxjar taxes_calculate --body @order.json --compact

Without credentials or OPSDECK_<SERVICE>_URL a call goes to the `opsdeck sandbox` running on this
machine (at OPSDECK_SANDBOX_PORT_BASE, default 7700), so what it changes lasts; with none running,
to a throwaway simulator inside the command, and a call that changes something says so.

Exit status: 0 success, or the reader of the output went away (`| head`); 1 an API, network or
paging error (the vendor's error body on stdout); 2 a usage error (nothing was sent).";

const COMPLETION_EXAMPLES: &str = "\
Examples:
  source <(opsdeck completions bash)                      bash, this shell only
  opsdeck completions bash > ~/.local/share/bash-completion/completions/opsdeck
  opsdeck completions zsh > \"${fpath[1]}/_opsdeck\"       zsh (then restart it)
  opsdeck completions fish > ~/.config/fish/completions/opsdeck.fish";

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
    /// A jq filter over the response body; each result on its own line, a string as it is,
    /// without quotes (as gh --jq prints it; `| tojson` keeps them), anything else as JSON. With
    /// --all-pages it runs over the array of all records, with --ndjson over each record.
    #[arg(long, value_name = "EXPR")]
    pub jq: Option<String>,
    /// JSON on one line instead of pretty-printed.
    #[arg(long)]
    pub compact: bool,
    /// A string printed as it is, without quotes, like jq -r: what --jq does anyway; without --jq,
    /// for a response or --ndjson record that is a JSON string.
    #[arg(long, short = 'r')]
    pub raw: bool,
    /// The HTTP status line and response headers before the body (secrets redacted).
    #[arg(long, short = 'i')]
    pub include: bool,
    /// `json` (default), or `table`: the records as the console's columns in aligned text.
    #[arg(long, short = 'o', value_name = "FORMAT", value_enum, default_value_t = output::Format::Json)]
    pub output: output::Format,
    /// One compact record per line; with --all-pages each page is printed as it arrives.
    #[arg(long)]
    pub ndjson: bool,
    #[command(flatten)]
    pub target: TargetArgs,
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

    /// The reader of stdout or stderr went away (`| head -1`, a closed pager): the command ends
    /// quietly with status 0, as gh, rg and jq do. There is no one left to tell, and a pipeline
    /// under `set -o pipefail` must not fail because its reader had read enough.
    pub fn reader_gone() -> Failure {
        Failure { code: 0, message: String::new() }
    }

    /// Whether this is [`Failure::reader_gone`]: exit 0, print nothing.
    pub fn is_reader_gone(&self) -> bool {
        self.code == 0
    }

    /// A failed write of the command's output: [`Failure::reader_gone`] when the reader closed
    /// the pipe, else a runtime error that says why (a full disk, say).
    pub fn output(error: &std::io::Error) -> Failure {
        if is_reader_gone(error) {
            return Failure::reader_gone();
        }
        Failure::runtime(format!("cannot write output: {error}"))
    }
}

/// Whether a write failed because its reader went away (EPIPE; Rust ignores SIGPIPE, so a
/// closed pipe is an error on the write rather than a signal).
pub fn is_reader_gone(error: &std::io::Error) -> bool {
    error.kind() == std::io::ErrorKind::BrokenPipe
}

/// Writes all of `bytes` and flushes, for every command's output: a reader that went away ends
/// the command quietly (see [`Failure::reader_gone`]).
pub fn write_output(out: &mut dyn Write, bytes: &[u8]) -> Result<(), Failure> {
    out.write_all(bytes).and_then(|()| out.flush()).map_err(|e| Failure::output(&e))
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
    let write = |out: &mut dyn Write, text: String| write_output(out, text.as_bytes());
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
    let width = op.params.iter().map(|p| p.display_name().len()).max().unwrap_or(0) + 1;
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
        if p.repeatable() {
            rules.push("repeatable".to_owned());
        }
        if let Some(family) = p.family {
            rules.push(format!("any {}", family.label()));
        }
        let name = format!("{}{}", p.display_name(), if p.required { "*" } else { "" });
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
                "repeatable": p.repeatable(), "family": p.family.map(|f| f.label()),
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

/// A service by name, for `opsdeck call` and `opsdeck ops` alike; an unknown one is a usage
/// error suggesting the close names, or the service an operation's name belongs to
/// (`opsdeck ops messages_list`: did you mean ably messages_list?).
fn parse_service(name: &str) -> Result<Service, Failure> {
    Service::parse(name).ok_or_else(|| {
        let names: Vec<&str> = Service::ALL.iter().map(|s| s.name()).collect();
        let close = suggest::close_names(name, names.iter().copied());
        let owners = owners_of(name);
        let close = if close.is_empty() { owners.iter().map(String::as_str).collect() } else { close };
        let hint = suggest::did_you_mean(&close).map(|q| format!("{q} ")).unwrap_or_default();
        Failure::usage(format!("unknown service '{}'; {hint}(services: {})", inert(name), names.join(", ")))
    })
}

/// `SERVICE OPERATION` for each service that has an operation called `name`.
fn owners_of(name: &str) -> Vec<String> {
    Service::ALL
        .into_iter()
        .filter(|s| s.operations().iter().any(|op| op.name.eq_ignore_ascii_case(name)))
        .map(|s| format!("{s} {}", name.to_ascii_lowercase()))
        .collect()
}

/// An operation of `service` by name, for `opsdeck call` and `opsdeck ops` alike; an unknown
/// one is a usage error suggesting the close names of that service, else the same name in
/// another service, else saying how many there are to list.
fn parse_operation(service: Service, name: &str) -> Result<&'static Operation, Failure> {
    service.operation(name).ok_or_else(|| {
        let close = suggest::close_names(name, service.operations().iter().map(|op| op.name));
        let elsewhere = owners_of(name);
        let close = if close.is_empty() { elsewhere.iter().map(String::as_str).collect() } else { close };
        let hint = match suggest::did_you_mean(&close) {
            Some(question) => format!("{question} (all: `opsdeck ops {service}`)"),
            None => format!("`opsdeck ops {service}` lists its {} operations", service.operations().len()),
        };
        Failure::usage(format!("unknown operation '{}' of {service}; {hint}", inert(name)))
    })
}

/// `NAME=VALUE` arguments, each naming a parameter of `op` once, except lists and files, which
/// may be given several times (`to=a to=b attachment=@a.pdf attachment=@b.pdf`): their values
/// are kept as one, joined by [`crate::catalog::join_items`]. A second value for any other name,
/// or a name `op` does not have, is an error rather than a silent choice. `h:X-Ticket=42` names
/// a parameter of the `h:` family; its suffix is checked with the other values.
fn parse_params(op: &Operation, params: &[String]) -> Result<Values, Failure> {
    let mut values = Values::new();
    for param in params {
        let (name, value) = param.split_once('=').filter(|(name, _)| !name.is_empty()).ok_or_else(|| {
            Failure::usage(format!(
                "'{}' is not NAME=VALUE (parameters of {}: {})",
                inert(param),
                op.full_name(),
                param_names(op)
            ))
        })?;
        let Some(known) = op.param(name) else {
            return Err(Failure::usage(format!(
                "{}: unknown parameter of {}; its parameters: {} (details: `opsdeck ops {} {}`)",
                inert(name),
                op.full_name(),
                param_names(op),
                op.service,
                op.name
            )));
        };
        let joined = match values.get(name) {
            None => crate::catalog::join_items([value]),
            Some(first) if known.repeatable() => crate::catalog::join_items([first.as_str(), value]),
            Some(first) => {
                let shown = crate::catalog::items(known, first).join(", ");
                return Err(Failure::usage(format!(
                    "{name} is given twice ('{}' and '{}'); give it once",
                    inert(&shown),
                    inert(value)
                )));
            }
        };
        let joined = joined.map_err(|e| Failure::usage(format!("{name}: {e}")))?;
        values.insert(name.to_owned(), joined);
    }
    Ok(values)
}

fn param_names(op: &Operation) -> String {
    if op.params.is_empty() {
        return "none".into();
    }
    op.params.iter().map(crate::catalog::Param::display_name).collect::<Vec<_>>().join(", ")
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

/// Where a call without credentials or a URL of its own goes (see [`resolve_target`]).
enum Simulator {
    /// Not a simulator opsdeck picked: LIVE, or a URL the user gave.
    Given,
    /// A running `opsdeck sandbox`: what the call changes is still there for the next one.
    Running { simulated: bool },
    /// A throwaway simulator started inside this command for this call. `why` says why no
    /// running sandbox was used, for the note after the call; `None` when the user turned the
    /// look-up off and expects it. The sandbox is only held: it serves until the command ends.
    InProcess { _sandbox: sandbox::Sandbox, why: Option<String> },
    /// A dry run with no sandbox running: nothing is started, the URL printed is where
    /// `opsdeck sandbox` would serve the service, and the note says so.
    NotStarted { note: String },
}

/// Finds where a service's calls go. A service with credentials or an `OPSDECK_*_URL` goes
/// where they say. Any other goes to a running `opsdeck sandbox` when one answers on the
/// sandbox ports ([`find_sandbox`]), so state lasts from one call to the next; else to a
/// simulator started in this process for this call (only that service's listeners and its
/// simulator, whose build starts at once so it overlaps the rest of the call's start), which
/// lives as long as the returned [`Simulator`]. A dry run starts nothing.
async fn resolve_target(
    config: &Config,
    global: &GlobalArgs,
    service: Service,
    dry_run: bool,
) -> Result<(ResolvedService, Simulator), Failure> {
    let placeholder = |_: Service, _: Option<&'static str>| String::new();
    let env = |name: &str| std::env::var(name).ok();
    let resolved = config.resolve(global.profile.as_deref(), &env, &placeholder)?;
    let mut target = resolved
        .into_iter()
        .find(|r| r.target.service == service)
        .ok_or_else(|| Failure::runtime(format!("{service} was not resolved")))?;
    if target.mode != Mode::Embedded {
        return Ok((target, Simulator::Given));
    }
    // Only the simulator's public demo credentials can go to what is found here: a service with
    // credentials of its own returned above.
    let look = find_sandbox::Look::from_var(env(find_sandbox::PORT_BASE_VAR).as_deref()).map_err(Failure::usage)?;
    let port_base = look.port_base();
    let control = format!("127.0.0.1:{port_base}");
    let why = match look {
        find_sandbox::Look::Off => None,
        find_sandbox::Look::At(base) => match find_sandbox::find(base, service, target.region).await {
            Ok(found) => {
                target.target.base_url = found.base_url;
                target.mode = Mode::External;
                return Ok((target, Simulator::Running { simulated: found.simulated }));
            }
            Err(find_sandbox::NotFound::NothingListens) => Some(format!("no `opsdeck sandbox` answers on {control}")),
            Err(find_sandbox::NotFound::SomethingElse(reason)) => {
                Some(format!("{control} answers but is not an opsdeck sandbox ({})", inert(&reason)))
            }
        },
    };
    let start_one = match port_base {
        sandbox::DEFAULT_PORT_BASE => "`opsdeck sandbox`".to_owned(),
        base => format!("`opsdeck sandbox --port-base {base}`"),
    };
    if dry_run {
        let url = format!("http://127.0.0.1:{}", port_base + sandbox::port_offset(service, target.region));
        let note = match &why {
            Some(why) => format!(
                "nothing listens at {url} ({why}): it is where {start_one} serves {}; start it in another \
                 terminal to send this there",
                service.title()
            ),
            None => format!(
                "{}=off: nothing is started for a dry run; {url} is where {start_one} serves {}",
                find_sandbox::PORT_BASE_VAR,
                service.title()
            ),
        };
        target.target.base_url = url;
        return Ok((target, Simulator::NotStarted { note }));
    }
    // Only the simulators that tax read the tables: any other call pays nothing for them.
    let tax_tables = if sandbox::TAX_SERVICES.contains(&service) {
        crate::config::tax_tables(None, &env, config).map_err(Failure::usage)?
    } else {
        None
    };
    let sandbox =
        sandbox::start_options(sandbox::SandboxOptions { tax_tables, ..sandbox::SandboxOptions::for_call(service) })
            .await
            .map_err(|e| Failure::runtime(format!("cannot start the embedded simulator: {e}")))?;
    target.target.base_url = sandbox.region_base_url(service, target.region);
    let why = why.map(|why| {
        format!(
            "{why}, so this call went to a throwaway {} simulator inside this command: what it created or \
             changed is gone now. To keep state from one call to the next, run {start_one} in another terminal",
            service.title()
        )
    });
    Ok((target, Simulator::InProcess { _sandbox: sandbox, why }))
}

/// A note on stderr: something the user should know that is no warning.
fn note(err: &mut dyn Write, text: &str) {
    // A note that cannot be written has nowhere else to go; the call goes on.
    let _ = writeln!(err, "opsdeck: note: {}", inert(text));
}

/// Writes each warning once on stderr, as text that cannot act on the terminal.
fn warn(err: &mut dyn Write, warnings: &[String]) {
    for warning in warnings {
        // A warning that cannot be written has nowhere else to go; the call goes on.
        let _ = writeln!(err, "opsdeck: warning: {}", inert(warning));
    }
}

/// The config file as named in messages.
fn config_file_name(config: &Config) -> String {
    config
        .source
        .as_ref()
        .map_or_else(|| "the config".to_owned(), |path| inert(&path.display().to_string()).into_owned())
}

/// Which top-level flags `command` acts on; the others, given before it, are a usage error rather
/// than silently ignored (`opsdeck --theme light ops` would otherwise look like it did something).
pub fn check_global_flags(global: &GlobalArgs, command: Option<&Command>) -> Result<(), Failure> {
    let (name, acts_on): (&str, &[&str]) = match command {
        None => return Ok(()),
        Some(Command::Call(_)) => ("call", &["--profile", "--read-only", "--config"]),
        Some(Command::Sandbox { .. }) => ("sandbox", &[]),
        Some(Command::Ops { .. }) => ("ops", &[]),
        Some(Command::Completions { .. }) => ("completions", &[]),
        Some(Command::Man { .. }) => ("man", &[]),
        Some(Command::Help { .. }) => ("help", &[]),
        Some(Command::Complete { .. }) => ("__complete", &[]),
        Some(Command::History(_)) => ("history", &["--config"]),
        Some(Command::Paths { .. }) => ("paths", &["--config"]),
    };
    let ignored: Vec<&str> = global.given().into_iter().filter(|flag| !acts_on.contains(flag)).collect();
    if ignored.is_empty() {
        return Ok(());
    }
    let what = if ignored.len() == 1 { "acts" } else { "act" };
    Err(Failure::usage(format!(
        "{} {what} on the console, not on `opsdeck {name}`; drop {}",
        ignored.join(", "),
        if ignored.len() == 1 { "it" } else { "them" }
    )))
}

/// `opsdeck call`: prints the body (or the vendor's error body) on `io.out`; the returned
/// failure is the one line for stderr. `global` are the flags given before `call`; those after
/// it (`args.target`) win.
pub async fn call(global: &GlobalArgs, args: &CallArgs, io: &mut CallIo<'_>) -> Result<(), Failure> {
    let global = &global.with(&args.target);
    let CallArgs { all_pages, dry_run, yes, page_cap, .. } = *args;
    let service = parse_service(&args.service)?;
    let op = parse_operation(service, &args.operation)?;
    let mut values = parse_params(op, &args.params)?;
    // A table has the console's columns, and the console lists some resources with values that
    // give them (Ably's channels with their metadata): a table asks the same, saying so.
    if args.output == output::Format::Table {
        let missing: Vec<&(&str, &str)> = op.browse.iter().filter(|(name, _)| !values.contains_key(*name)).collect();
        let added: Vec<String> = missing.iter().map(|(name, value)| format!("{name}={value}")).collect();
        values.extend(missing.into_iter().map(|(name, value)| ((*name).to_owned(), (*value).to_owned())));
        if !added.is_empty() {
            note(
                io.err,
                &format!("-o table lists as the console does, with {} (give it to change it)", added.join(" ")),
            );
        }
    }
    let body = args.body.as_deref().map(parse_body).transpose()?;
    if all_pages && op.paging == crate::catalog::Paging::None {
        return Err(Failure::usage(format!("{} is not a paged list; drop --all-pages", op.full_name())));
    }
    let output = output::Output::new(args, op, io.out_is_terminal)?;
    let config = Config::load(global.config.as_deref())?;
    if op.mutates {
        let why = if global.read_only {
            Some("--read-only is on (drop it to send)".to_owned())
        } else if config.profile_read_only(global.profile.as_deref()) {
            let profile = global.profile.as_deref().or(config.default_profile.as_deref()).unwrap_or("default");
            Some(format!("profile {} is read-only (read_only = true in {})", inert(profile), config_file_name(&config)))
        } else {
            None
        };
        if let Some(why) = why {
            return Err(Failure::usage(CallError::ReadOnly { operation: op.full_name(), why }.to_string()));
        }
    }
    warn(io.err, &config.warnings);
    let (resolved, simulator) = resolve_target(&config, global, service, dry_run).await?;
    warn(io.err, &resolved.warnings);
    let target = &resolved.target;
    let request = client::build(op, &values, body.as_ref(), target).map_err(|e| call_failure(op, &e))?;
    if dry_run {
        if let Simulator::NotStarted { note: text } = &simulator {
            note(io.err, text);
        }
        let curl = client::request::to_curl(&request, &target.credentials).map_err(|e| call_failure(op, &e))?;
        let curl = if io.out_is_terminal { inert_lines(&curl) } else { curl.into() };
        return write_out(io.out, format!("{curl}\n").as_bytes());
    }
    let simulated = match &simulator {
        Simulator::Running { simulated } => *simulated,
        Simulator::InProcess { .. } | Simulator::Given | Simulator::NotStarted { .. } => true,
    };
    if !simulated {
        return Err(Failure::runtime(format!(
            "{service} has no simulator yet and no live credentials are set; set {} to call the real service \
             (--dry-run shows the request)",
            client::credential_variables(service).join(", ")
        )));
    }
    // Destructive, or spending because of what is sent (a shipment bought in its create call),
    // given by name or in --body alike.
    let sent = client::request::sent_values(&values, body.as_ref());
    let spending = op.spending(&|name| sent.get(name).cloned());
    if target.live && (op.destructive || spending.is_some()) {
        let profile = global.profile.as_deref().or(config.default_profile.as_deref()).unwrap_or("default");
        let spends = spending.as_deref().map(|what| format!(": {what}")).unwrap_or_default();
        match (yes, io.answers.as_deref_mut()) {
            (true, _) => warn(
                io.err,
                &[format!("{} on LIVE {} ({}){spends}", op.full_name(), service.title(), target.base_url)],
            ),
            (false, Some(answers)) => confirm_on_live(op, &sent, target, profile, answers, io.err)?,
            (false, None) => {
                return Err(Failure::usage(format!(
                    "{} cannot be undone{spends} and {} is LIVE ({}); there is no terminal to ask on, so add --yes to send it",
                    op.full_name(),
                    service.title(),
                    target.base_url
                )))
            }
        }
    }
    // The history opens on a thread of its own while the request is on its way: its file is
    // read and checked in the time the answer takes, not before the request goes out.
    let opening = {
        let (path, settings) = (io.history.clone(), config.history.clone());
        tokio::task::spawn_blocking(move || crate::history::open_for_call(path.as_deref(), &settings))
    };
    let settings = config.http_settings();
    let http = client::http_client(&settings).map_err(|e| call_failure(op, &e))?;
    let cancel = CancellationToken::new();
    let send = |request: client::PreparedRequest| {
        let (http, settings, cancel, credentials) = (&http, &settings, &cancel, &target.credentials);
        async move { client::request::execute(http, &request, credentials, settings, cancel).await }
    };
    let (sent, first) = (std::time::Instant::now(), send(request.clone()).await);
    let (history, warning) =
        opening.await.unwrap_or_else(|e| (None, Some(format!("the history could not be opened: {e}"))));
    warn(io.err, &Vec::from_iter(warning));
    // Once per command, as soon as the call is answered: what it changed is gone already. Only
    // for an operation that changes something: a read loses nothing (it reads the seeded demo
    // data), and a script reading it keeps a clean stderr.
    if let (Simulator::InProcess { why: Some(why), .. }, true) = (&simulator, op.mutates) {
        note(io.err, why);
    }
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
        Err(error) => {
            if let Some(api) = error.api_error() {
                write_out(io.out, &output.error_head(api.status))?;
                return Err(api_failure(op, &error, io));
            }
            let mut failure = call_failure(op, &error);
            if let Some(hint) = crate::config::sandbox_unreachable_hint(target, &error) {
                failure.message.push_str(&format!("; {hint}"));
            }
            return Err(failure);
        }
    };
    if !all_pages {
        write_out(io.out, &output.head(response.status, &response.headers, &target.credentials))?;
        let bytes = output.one(&response)?;
        drop(simulator);
        return write_out(io.out, &bytes);
    }
    // --all-pages: with --ndjson each page goes out as it arrives, else all of them at the end.
    let streams = output.streams();
    let mut pages = Vec::new();
    let mut read = 1;
    let first = json_of(&response)?;
    if streams {
        write_out(io.out, &output.page_lines(first)?)?;
    } else {
        pages.push(first);
    }
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
                read += 1;
                if streams {
                    write_out(io.out, &output.page_lines(json)?)?;
                } else {
                    pages.push(json);
                }
                (request, response) = (next, page);
            }
            Err(failure) => {
                // Nothing read is lost: the records so far go out before the error.
                if !streams {
                    write_out(io.out, &output.all(&pages)?)?;
                }
                let records = match (streams, read) {
                    (false, 1) => "the page read is".to_owned(),
                    (false, _) => format!("the {read} pages read are"),
                    (true, 1) => "the records of the page read are".to_owned(),
                    (true, _) => format!("the records of the {read} pages read are"),
                };
                return Err(Failure {
                    code: failure.code,
                    message: format!("{}; {records} on stdout", failure.message),
                });
            }
        }
    }
    drop(simulator);
    if streams {
        return Ok(());
    }
    write_out(io.out, &output.all(&pages)?)
}

/// Writes and flushes (a streamed page is out before the next is asked for). A reader that went
/// away (`| head -1`) ends the call quietly, with status 0: no further page is asked for.
fn write_out(out: &mut dyn Write, bytes: &[u8]) -> Result<(), Failure> {
    if bytes.is_empty() {
        return Ok(());
    }
    write_output(out, bytes)
}

/// A body as it may be printed: JSON pretty and inert (still the same JSON); anything else raw
/// into a file or pipe, but on a terminal only as inert text, never as raw bytes. `Err` says why
/// it cannot be shown.
fn printable_body(body: &[u8], content_type: Option<&str>, to_terminal: bool) -> Result<Vec<u8>, String> {
    // A body of more tiny values than the console's index budget allows is printed as it came,
    // not pretty-printed: its document would take many times its size in memory.
    if json_budget(body).is_ok() {
        if let Ok(value) = serde_json::from_slice::<Value>(body) {
            return Ok(pretty(&value));
        }
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

/// How deep serde_json reads JSON into a document (its recursion limit): deeper JSON is still
/// JSON, but `--jq` and the other reshaping outputs cannot read it.
pub(crate) const SERDE_MAX_DEPTH: usize = 128;

/// Bodies up to this size always fit the index budget (a value takes at least 2 bytes of body
/// and 16 of index), so only bigger ones are checked.
const ALWAYS_WITHIN_BUDGET: usize = 8 * 1024 * 1024;

/// Whether a JSON body may be read into a document: the console's index budget
/// ([`crate::json_index::BUDGET_TIMES_BODY`] times its size plus
/// [`crate::json_index::BUDGET_SLACK`]) applied to `opsdeck call`, so a body of tiny values
/// (`[0,0,0,…]`) is refused rather than taking gigabytes. The error says why, for a message.
pub(crate) fn json_budget(body: &[u8]) -> Result<(), String> {
    if body.len() <= ALWAYS_WITHIN_BUDGET {
        return Ok(());
    }
    match crate::json_index::JsonDoc::parse(bytes::Bytes::copy_from_slice(body)) {
        Err(e) if matches!(e.kind, crate::json_index::JsonErrorKind::TooManyValues { .. }) => {
            Err(format!("the response ({}) holds {}", crate::format::human_bytes(body.len() as u64), e.kind))
        }
        _ => Ok(()),
    }
}

/// An API error: the vendor's error body on stdout (as `gh api` does), the one-line message
/// for stderr.
fn api_failure(op: &Operation, error: &CallError, io: &mut CallIo<'_>) -> Failure {
    let mut failure = call_failure(op, error);
    let body = error.api_error().map(|api| api.body.clone()).unwrap_or_default();
    match printable_body(&body, None, io.out_is_terminal) {
        Ok(bytes) => match write_out(io.out, &bytes) {
            Ok(()) => {}
            // No one reads the body, so no one reads the line about it either.
            Err(unwritten) if unwritten.is_reader_gone() => return unwritten,
            Err(unwritten) => failure.message.push_str(&format!(" ({})", unwritten.message)),
        },
        Err(reason) => failure.message.push_str(&format!(" (error body not shown: {reason})")),
    }
    failure
}

fn json_of(response: &client::Response) -> Result<Value, Failure> {
    json_budget(&response.body).map_err(|why| {
        Failure::runtime(format!(
            "a page of {}: {why}; --all-pages reads every page into memory: read the pages one at a time \
             without it",
            inert(&response.request_line)
        ))
    })?;
    serde_json::from_slice(&response.body).map_err(|e| {
        if e.to_string().starts_with("recursion limit exceeded") {
            return Failure::runtime(format!(
                "a page of {} is JSON nested deeper than {SERDE_MAX_DEPTH} levels, more than --all-pages reads",
                inert(&response.request_line)
            ));
        }
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

/// `values` as the `NAME=VALUE` words that would give them, a repeatable one once per item.
fn given_words(op: &Operation, values: &Values) -> Vec<String> {
    let values = values.iter().map(|(k, v)| (k.as_str(), v.as_str()));
    crate::catalog::given_pairs(op, values).iter().map(|(name, value)| format!("{name}={value}")).collect()
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
    let given = if values.is_empty() { "(no parameters)".to_owned() } else { given_words(op, values).join("  ") };
    let spends = op.spending(&|name| values.get(name).cloned()).map(|what| format!("→ {what}\n")).unwrap_or_default();
    let question = format!(
        "LIVE {} · profile {profile} · {}\n{} — {}. This cannot be undone.\ntarget: {given}\n{spends}\
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

/// What `opsdeck sandbox` is started with.
#[derive(Debug)]
pub struct SandboxArgs<'a> {
    pub port_base: u16,
    pub seed: u64,
    pub speed: f64,
    pub dns_delay: u64,
    pub tax_rates: Option<&'a Path>,
}

/// `opsdeck sandbox`: serves until Ctrl-C or SIGTERM.
pub async fn sandbox(global: &GlobalArgs, args: SandboxArgs<'_>, out: &mut dyn Write) -> Result<(), Failure> {
    let SandboxArgs { port_base, seed, speed, dns_delay, tax_rates } = args;
    check_port_base(port_base)?;
    let clock = sandbox::SandboxClock::new(speed).map_err(|e| Failure::usage(format!("--speed {speed}: {e}")))?;
    let env = |name: &str| std::env::var(name).ok();
    // The config is read only when it may name the tables: a flag or the variable wins over it.
    let config = Config::load(global.config.as_deref()).map_err(|e| Failure::usage(format!("{e:#}")))?;
    let tax_tables = crate::config::tax_tables(tax_rates, &env, &config).map_err(Failure::usage)?;
    let access = crate::config::sandbox_access(&config).map_err(Failure::usage)?;
    // Every simulator is built at once, as users point SDKs at every port; each line of the
    // table is printed as its simulator is ready.
    let options = sandbox::SandboxOptions {
        clock,
        dns_delay_secs: dns_delay,
        building: sandbox::Building::AtStart,
        tax_tables,
        access,
        ..sandbox::SandboxOptions::new(port_base, seed)
    };
    let sandbox = sandbox::start_options(options).await.map_err(|e| {
        Failure::runtime(format!(
            "{e}; is another opsdeck sandbox running? pick other ports with --port-base N (0 = any free)"
        ))
    })?;
    let control = sandbox.control_url();
    // The banner is for whoever started the sandbox; the sandbox serves whether or not anyone
    // reads it (`opsdeck sandbox | grep -m1 'Ctrl-C'` waits until it is ready, then leaves it
    // running), so a reader that went away only stops the banner.
    let mut reading = true;
    let mut write = |out: &mut dyn Write, text: &str| {
        if reading && out.write_all(text.as_bytes()).and_then(|()| out.flush()).is_err() {
            reading = false;
        }
    };
    let head = format!(
        "opsdeck sandbox (seed {seed}, speed {speed}x); control {control}\n\
         tax tables: {tables}\n\
         \x20 GET    {control}/requests?service=NAME&limit=N   recent requests, secrets redacted\n\
         \x20 POST   {control}/reset?service=NAME              restore the seeded data (all without service)\n\
         \x20 POST   {control}/faults                          inject a fault: {{\"service\",\"path\",\"status\"|\"latency_ms\"|\"drop\"|\"retry_after\",\"count\"|\"probability\"}}; GET lists, DELETE removes\n\
         \x20 POST   {control}/mailgun/incoming                incoming mail for Mailgun routes: {{\"region\",\"recipient\",\"from\",\"subject\",\"headers\",\"body-plain\"}}\n\
         \x20 GET    {control}/mailgun/webhooks                Mailgun webhook POSTs made (signing key {signing}) and forwards recorded\n\
         \x20 GET    {control}/easypost/webhooks               EasyPost webhook POSTs made (signed with each webhook's secret)\n\
         \x20 POST   {control}/coinbase/market                 the Coinbase market's simulated traders: {{\"paused\": true|false, \"rate\": steps per second}}; GET shows them and the funds audit\n\
         \n{:<12} {:<26} {:<10} {}\n",
        "SERVICE",
        "BASE URL",
        "STATE",
        "CREDENTIALS",
        signing = sandbox::credentials::MAILGUN_WEBHOOK_SIGNING_KEY,
        tables = inert(&sandbox.tax_tables_line()),
    );
    write(out, &head);
    let handle = sandbox.handle();
    for endpoint in &sandbox.endpoints {
        let name = match endpoint.region {
            Some(region) => format!("{}-{region}", endpoint.service),
            None => endpoint.service.name().to_owned(),
        };
        // The base `OPSDECK_*_URL` expects (it takes the one with the version too).
        let base = endpoint.base_url();
        let (state, credentials) = match handle.ensure(endpoint.service).await {
            Ok(()) => ("simulated", credentials_line(endpoint.service)),
            Err(e) => ("failed", inert(&e).into_owned()),
        };
        write(out, &format!("{name:<12} {base:<26} {state:<10} {credentials}\n"));
    }
    write(out, &sandbox_usage(&sandbox.endpoints, port_base));
    write(out, "\nCtrl-C stops.\n");
    wait_for_shutdown().await;
    sandbox.shutdown();
    Ok(())
}

/// What `opsdeck sandbox` prints under its table: the `OPSDECK_*_URL` lines that point opsdeck
/// (the console, `opsdeck call`, scripts) at it from another shell, ready to paste, how
/// `opsdeck call` finds it without them, and the base URLs SDKs want where they differ.
fn sandbox_usage(endpoints: &[sandbox::Endpoint], port_base: u16) -> String {
    let mut text =
        String::from("\nTo point opsdeck at this sandbox from another shell (the console and `opsdeck call`):\n");
    for endpoint in endpoints {
        let line = format!("export {}={}", client::url_variable(endpoint.service), endpoint.base_url());
        match endpoint.region {
            None => text.push_str(&format!("  {line}\n")),
            Some(region) => {
                text.push_str(&format!("  # {} {} region: {line}\n", endpoint.service.title(), region.to_uppercase()));
            }
        }
    }
    match port_base {
        0 => {}
        sandbox::DEFAULT_PORT_BASE => text.push_str(&format!(
            "Without them `opsdeck call` finds this sandbox by itself (control port {port_base}), and so does \
             the console with `opsdeck --profile local`.\n"
        )),
        _ => text.push_str(&format!(
            "Without them `opsdeck call` finds this sandbox with {}={port_base}.\n",
            find_sandbox::PORT_BASE_VAR
        )),
    }
    let sdk: Vec<String> = endpoints
        .iter()
        .filter(|e| e.region.is_none() && e.sdk_base_url() != e.base_url())
        .map(|e| format!("{} {}", e.service.title(), e.sdk_base_url()))
        .collect();
    if !sdk.is_empty() {
        text.push_str(&format!(
            "SDKs take the same base URLs, except: {} (opsdeck takes either form).\n",
            sdk.join(", ")
        ));
    }
    let sockets: Vec<String> =
        endpoints.iter().filter_map(|e| Some(format!("{} {}", e.service.title(), e.websocket_url()?))).collect();
    if !sockets.is_empty() {
        text.push_str(&format!("WebSockets: {}.\n", sockets.join(", ")));
    }
    text
}

fn credentials_line(service: Service) -> String {
    use crate::sandbox::credentials as c;
    match service {
        Service::Ably => format!("key {}", c::ABLY_KEY),
        Service::Deepgram => format!("Authorization: Token {}", c::DEEPGRAM_KEY),
        Service::Avatax => format!("Basic {}:{}", c::AVATAX_ACCOUNT_ID, c::AVATAX_LICENSE_KEY),
        Service::Taxjar => format!("Authorization: Bearer {}", c::TAXJAR_TOKEN),
        Service::Coinbase => {
            format!(
                "key {} secret {} passphrase {} (view-only key {}, second profile {})",
                c::COINBASE_KEY,
                c::COINBASE_SECRET,
                c::COINBASE_PASSPHRASE,
                c::COINBASE_VIEW_KEY,
                c::COINBASE_BOT_KEY
            )
        }
        Service::Mailgun => format!("Basic api:{}", c::MAILGUN_KEY),
        Service::Easypost => format!("key {} (Basic with an empty password, or Bearer)", c::EASYPOST_KEY),
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
        assert!(err.message.contains("did you mean messages_list"), "{}", err.message);
        assert!(err.message.ends_with("(all: `opsdeck ops ably`)"), "{}", err.message);
        let err = parse_operation(Service::Ably, "list_messages").unwrap_err();
        assert!(err.message.contains("did you mean messages_list"), "{}", err.message);
        let err = parse_operation(Service::Ably, "xyzzy").unwrap_err();
        assert!(
            err.message.ends_with("unknown operation 'xyzzy' of ably; `opsdeck ops ably` lists its 18 operations"),
            "{}",
            err.message
        );
        let err = parse_operation(Service::Ably, "domains_list").unwrap_err();
        assert!(err.message.contains("did you mean mailgun domains_list?"), "{}", err.message);
        let err = parse_service("messages_list").unwrap_err();
        assert!(err.message.starts_with("unknown service 'messages_list'; did you mean ably messages_list?"));
        let err = parse_service("abyl").unwrap_err();
        assert_eq!(err.code, 2);
        assert!(
            err.message.starts_with("unknown service 'abyl'; did you mean ably? (services: ably, "),
            "{}",
            err.message
        );
    }

    #[test]
    fn top_level_flags_are_refused_where_they_do_not_act() {
        let theme = GlobalArgs { theme: Some("light".into()), ..GlobalArgs::default() };
        let ops = Command::Ops { service: None, operation: None, json: false };
        let err = check_global_flags(&theme, Some(&ops)).unwrap_err();
        assert_eq!(err.code, 2);
        assert_eq!(err.message, "--theme acts on the console, not on `opsdeck ops`; drop it");
        assert!(check_global_flags(&theme, None).is_ok(), "the console takes it");
        let profile = GlobalArgs { profile: Some("work".into()), read_only: true, ..GlobalArgs::default() };
        let call = Cli::try_parse_from(["opsdeck", "call", "ably", "time_get"]).unwrap().command.unwrap();
        assert!(check_global_flags(&profile, Some(&call)).is_ok(), "call takes --profile and --read-only");
        let err = check_global_flags(&profile, Some(&ops)).unwrap_err();
        assert!(err.message.starts_with("--profile, --read-only act on the console"), "{}", err.message);
    }

    #[test]
    fn flags_after_call_win_over_those_before_it() {
        let cli = Cli::try_parse_from([
            "opsdeck",
            "--profile",
            "a",
            "call",
            "--profile",
            "b",
            "--read-only",
            "ably",
            "time_get",
        ])
        .unwrap();
        let Some(Command::Call(args)) = &cli.command else { panic!("call") };
        let merged = cli.global.with(&args.target);
        assert_eq!((merged.profile.as_deref(), merged.read_only), (Some("b"), true));
        assert!(
            Cli::try_parse_from(["opsdeck", "call", "--theme", "x", "ably", "time_get"]).is_err(),
            "no --theme on call"
        );
        assert!(Cli::try_parse_from(["opsdeck", "ops", "--profile", "x"]).is_err(), "no --profile on ops");
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
        // A list or a file may be repeated: each value is an item of one value, in order.
        let send = Service::Mailgun.operation("messages_send").unwrap();
        let params: Vec<String> =
            ["to=a@x.com", "to=b@y.com,c@z.com", "o:tag=a", "o:tag=b", "h:X-Ticket=42", "v:order-id=7"]
                .iter()
                .map(|p| (*p).to_owned())
                .collect();
        let values = parse_params(send, &params).unwrap();
        let to = crate::catalog::items(send.param("to").unwrap(), &values["to"]);
        assert_eq!(to, ["a@x.com", "b@y.com", "c@z.com"]);
        assert_eq!(crate::catalog::items(send.param("o:tag").unwrap(), &values["o:tag"]), ["a", "b"]);
        assert_eq!((values["h:X-Ticket"].as_str(), values["v:order-id"].as_str()), ("42", "7"));
        assert_eq!(
            given_words(send, &values),
            ["h:X-Ticket=42", "o:tag=a", "o:tag=b", "to=a@x.com", "to=b@y.com", "to=c@z.com", "v:order-id=7"]
        );
        // ... but not a family name, a single file, or any other parameter.
        let twice = |op: &Operation, params: &[&str]| {
            let params: Vec<String> = params.iter().map(|p| (*p).to_owned()).collect();
            parse_params(op, &params).unwrap_err().message
        };
        assert_eq!(twice(send, &["h:X-A=1", "h:X-A=2"]), "h:X-A is given twice ('1' and '2'); give it once");
        assert_eq!(twice(send, &["subject=a", "subject=b"]), "subject is given twice ('a' and 'b'); give it once");
        let mime = Service::Mailgun.operation("messages_send_mime").unwrap();
        assert!(twice(mime, &["message=@a.eml", "message=@b.eml"]).starts_with("message is given twice"));
        let err = twice(send, &["to=a\u{1f}b"]);
        assert!(err.contains("holds a control character (U+001F)"), "{err}");
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
    fn the_sandbox_says_how_opsdeck_reaches_it() {
        let endpoint = |service, region, port| sandbox::Endpoint {
            service,
            region,
            addr: std::net::SocketAddr::from(([127, 0, 0, 1], port)),
        };
        let endpoints = [
            endpoint(Service::Ably, None, 7701),
            endpoint(Service::Deepgram, None, 7702),
            endpoint(Service::Mailgun, None, 7706),
            endpoint(Service::Mailgun, Some("eu"), 7707),
            endpoint(Service::Easypost, None, 7708),
        ];
        let text = sandbox_usage(&endpoints, 7700);
        assert_eq!(
            text,
            "\nTo point opsdeck at this sandbox from another shell (the console and `opsdeck call`):\n\
             \x20 export OPSDECK_ABLY_URL=http://127.0.0.1:7701\n\
             \x20 export OPSDECK_DEEPGRAM_URL=http://127.0.0.1:7702\n\
             \x20 export OPSDECK_MAILGUN_URL=http://127.0.0.1:7706\n\
             \x20 # Mailgun EU region: export OPSDECK_MAILGUN_URL=http://127.0.0.1:7707\n\
             \x20 export OPSDECK_EASYPOST_URL=http://127.0.0.1:7708\n\
             Without them `opsdeck call` finds this sandbox by itself (control port 7700), and so does the \
             console with `opsdeck --profile local`.\n\
             SDKs take the same base URLs, except: EasyPost http://127.0.0.1:7708/v2 (opsdeck takes either form).\n\
             WebSockets: Ably ws://127.0.0.1:7701, Deepgram ws://127.0.0.1:7702/v1/listen.\n"
        );
        assert!(sandbox_usage(&endpoints, 17700)
            .contains("Without them `opsdeck call` finds this sandbox with OPSDECK_SANDBOX_PORT_BASE=17700.\n"));
        assert!(!sandbox_usage(&endpoints, 0).contains("Without them"), "free ports: no base to give");
    }

    #[test]
    fn the_page_cap_is_a_positive_count() {
        assert_eq!(parse_page_cap("3"), Ok(3));
        for bad in ["0", "-1", "lots", ""] {
            assert!(parse_page_cap(bad).unwrap_err().contains("at least 1"), "{bad}");
        }
    }
}
