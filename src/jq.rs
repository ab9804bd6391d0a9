//! jq filters over response bodies, with the jaq crates: one compiler for
//! `opsdeck call --jq` and the inspector's `|` filter, so both accept the same
//! language and report the same errors.

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use jaq_core::data::JustLut;
use jaq_core::load::{lex, parse, Arena, File, Loader};
use jaq_core::{unwrap_valr, Compiler, Ctx, Vars};
use jaq_json::Val;
use serde_json::Value;

/// Results a filter may produce before it is stopped: `repeat(1)` must end
/// with an error, not with the memory of the machine.
pub const MAX_OUTPUTS: usize = 1_000_000;

pub struct Filter {
    code: String,
    filter: jaq_core::Filter<JustLut<Val>>,
}

impl std::fmt::Debug for Filter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Filter").field("code", &self.code).finish()
    }
}

impl Filter {
    /// Parses and compiles `code`, naming the first problem the way jq users
    /// expect to read it ("expected term at `]`", "undefined filter `lenght/0`").
    pub fn compile(code: &str) -> Result<Filter, String> {
        if code.trim().is_empty() {
            return Err("the jq filter is empty (use `.` for the whole value)".to_owned());
        }
        let defs = jaq_core::defs().chain(jaq_std::defs()).chain(jaq_json::defs());
        let funs = jaq_core::funs().chain(jaq_std::funs()).chain(jaq_json::funs());
        let loader = Loader::new(defs);
        let arena = Arena::default();
        let modules =
            loader.load(&arena, File { code, path: () }).map_err(|errors| match errors.into_iter().next() {
                Some((_, error)) => load_error(code, error),
                None => "the jq filter could not be read".to_owned(),
            })?;
        let filter = Compiler::default().with_funs(funs).compile(modules).map_err(|errors| {
            let undefined: Vec<String> = errors
                .into_iter()
                .flat_map(|(_, errs)| errs)
                .map(|(name, kind)| format!("undefined {} `{name}`", kind.as_str()))
                .collect();
            undefined.join("; ")
        })?;
        Ok(Filter { code: code.to_owned(), filter })
    }

    pub fn code(&self) -> &str {
        &self.code
    }

    /// Runs the filter over a JSON body as it came off the wire.
    pub fn run_bytes(&self, body: &[u8]) -> Result<Vec<Value>, String> {
        let input = jaq_json::read::parse_single(body).map_err(|e| format!("the body is not JSON: {e}"))?;
        self.run_val(input)
    }

    /// Runs the filter over the body, or over each item of the body's array.
    pub fn run_over(&self, over: Over, body: &[u8]) -> Result<Vec<Value>, String> {
        if over == Over::Whole {
            return self.run_bytes(body);
        }
        let items: Vec<Value> = serde_json::from_slice(body).map_err(|e| format!("the body is no array: {e}"))?;
        let mut outputs = Vec::new();
        for item in &items {
            outputs.extend(self.run(item)?);
            if outputs.len() > MAX_OUTPUTS {
                return Err(format!("jq: the filter produced more than {MAX_OUTPUTS} results"));
            }
        }
        Ok(outputs)
    }

    pub fn run(&self, input: &Value) -> Result<Vec<Value>, String> {
        let text = serde_json::to_vec(input).map_err(|e| e.to_string())?;
        self.run_bytes(&text)
    }

    fn run_val(&self, input: Val) -> Result<Vec<Value>, String> {
        let ctx = Ctx::<JustLut<Val>>::new(&self.filter.lut, Vars::new([]));
        let mut outputs = Vec::new();
        for result in self.filter.id.run((ctx, input)).map(unwrap_valr) {
            let value = result.map_err(|e| format!("jq: {e}"))?;
            if outputs.len() == MAX_OUTPUTS {
                return Err(format!("jq: the filter produced more than {MAX_OUTPUTS} results"));
            }
            outputs.push(to_json(&value)?);
        }
        Ok(outputs)
    }
}

/// The first argument that makes `opsdeck` a jq worker ([`worker_main`]): hidden, internal.
pub const WORKER_ARG: &str = "__jq";

/// What a filter may spend: a filter is code the user typed, and jq code can loop forever
/// (`def f: f; f`), recurse until the stack is gone (`def f: [f]; f`) or fill the memory
/// (`reduce range(40) as $i ("x"; . + .)`). Outside a worker none of that can be stopped, so a budgeted filter runs in
/// a worker process that is killed past its time and dies past its memory.
#[derive(Clone, Copy, Debug)]
pub struct Budget {
    pub time: Duration,
    /// Address space of the worker, in bytes.
    pub memory: u64,
    /// The most bytes of results taken back.
    pub output: usize,
}

impl Budget {
    pub const DEFAULT: Budget = Budget { time: Duration::from_secs(20), memory: 1 << 30, output: 256 << 20 };
}

/// Where budgeted filters run.
#[derive(Clone, Debug)]
pub enum Runner {
    /// A worker process: this `opsdeck` binary with [`WORKER_ARG`].
    Worker(PathBuf),
    /// On a thread of this process, with no budget but the count of results: for test binaries,
    /// which are not `opsdeck` and cannot be workers.
    Thread,
}

impl Runner {
    /// The runner of this process, decided once.
    pub fn shared() -> &'static Runner {
        static RUNNER: std::sync::OnceLock<Runner> = std::sync::OnceLock::new();
        RUNNER.get_or_init(Runner::detect)
    }

    /// The worker binary: `OPSDECK_JQ_BIN` when set (tests point it at the built binary), else
    /// this executable, whatever it is called (a copy named otherwise keeps its budget), unless
    /// it is a test or bench binary of cargo's (in a `deps` folder) or an example (in
    /// `examples`), which cannot be workers. A process started as a worker never starts one:
    /// a binary that does not know the worker argument would otherwise run itself again and
    /// again (the screenshots example once did, a chain of processes each starting the next).
    pub fn detect() -> Runner {
        if std::env::var_os(PARENT_VAR).is_some() {
            return Runner::Thread;
        }
        if let Some(path) = std::env::var_os("OPSDECK_JQ_BIN").filter(|p| !p.is_empty()) {
            return Runner::Worker(path.into());
        }
        match std::env::current_exe() {
            Ok(path)
                if path
                    .parent()
                    .and_then(|dir| dir.file_name())
                    .is_some_and(|dir| dir == "deps" || dir == "examples") =>
            {
                Runner::Thread
            }
            Ok(path) => Runner::Worker(path),
            Err(_) => Runner::Thread,
        }
    }
}

/// Runs `code` over the JSON `body` within `budget`, stopping early when `cancel` is set.
/// The errors say which limit was met, as the user can act on it.
pub fn run_budgeted(
    runner: &Runner,
    code: &str,
    body: &[u8],
    budget: Budget,
    cancel: &AtomicBool,
) -> Result<Vec<Value>, String> {
    let filter = Filter::compile(code)?;
    run_compiled(runner, &filter, Over::Whole, body, budget, cancel)
}

/// What a filter runs over: the body, or each item of the body's array in turn (`--ndjson`
/// with `--jq`: one worker for a page of records, not one per record).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Over {
    Whole,
    Each,
}

/// [`run_budgeted`] for a filter compiled already.
pub fn run_compiled(
    runner: &Runner,
    filter: &Filter,
    over: Over,
    body: &[u8],
    budget: Budget,
    cancel: &AtomicBool,
) -> Result<Vec<Value>, String> {
    let code = filter.code();
    let binary = match runner {
        Runner::Thread => return filter.run_over(over, body),
        Runner::Worker(binary) => binary,
    };
    let mut child = Command::new(binary)
        .arg(WORKER_ARG)
        .arg(code)
        .args((over == Over::Each).then_some(EACH_ARG))
        .env("OPSDECK_JQ_MEMORY", budget.memory.to_string())
        .env(PARENT_VAR, std::process::id().to_string())
        .env(TIME_VAR, budget.time.as_millis().to_string())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("jq: cannot start its worker ({}): {e}", binary.display()))?;
    let (Some(mut stdin), Some(stdout), Some(stderr)) = (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        let _ = child.kill();
        return Err("jq: its worker has no pipes".into());
    };
    let body = body.to_vec();
    // A worker that stops reading (it failed) must not block the writer: its write fails.
    let writer = std::thread::spawn(move || drop(stdin.write_all(&body)));
    let limit = budget.output;
    let reader = std::thread::spawn(move || read_capped(stdout, limit));
    let errors = std::thread::spawn(move || read_capped(stderr, 64 << 10));
    let started = Instant::now();
    let stopped = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Ok(status),
            Ok(None) => {}
            Err(e) => break Err(format!("jq: its worker was lost: {e}")),
        }
        if cancel.load(Ordering::Relaxed) {
            let _ = child.kill();
            let _ = child.wait();
            break Err("jq: cancelled".to_owned());
        }
        if started.elapsed() > budget.time {
            let _ = child.kill();
            let _ = child.wait();
            break Err(format!(
                "jq: stopped after {} s: the filter did not end (a recursion with no base case?)",
                budget.time.as_secs()
            ));
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let _ = writer.join();
    let output = reader.join().unwrap_or(Err(()));
    let said = errors.join().ok().and_then(Result::ok).unwrap_or_default();
    let said = String::from_utf8_lossy(&said);
    let status = stopped?;
    // Past the cap the reader stops, and the worker fails writing: the cap is the reason.
    if output.is_err() {
        return Err(format!(
            "jq: the results are over {}; ask for less",
            crate::format::human_bytes(budget.output as u64)
        ));
    }
    if !status.success() {
        return Err(match status.code() {
            Some(WORKER_JQ_ERROR) => said.trim().to_owned(),
            _ if said.contains("overflowed its stack") => {
                "jq: the filter recursed too deeply (a recursion with no base case?)".to_owned()
            }
            _ if said.contains("memory allocation") => {
                format!("jq: the filter needed more than the {} MB it may use", budget.memory >> 20)
            }
            _ => format!("jq: its worker failed ({status})"),
        });
    }
    let output = output.unwrap_or_default();
    output
        .split(|b| *b == b'\n')
        .filter(|line| !line.is_empty())
        .map(|line| serde_json::from_slice(line).map_err(|e| format!("jq: a result could not be read: {e}")))
        .collect()
}

/// Reads `from` to its end, or fails past `limit` bytes (and stops reading, so a writer that
/// goes on fails rather than waits).
fn read_capped(from: impl Read, limit: usize) -> Result<Vec<u8>, ()> {
    let mut taken = Vec::new();
    let read = from.take(limit as u64 + 1).read_to_end(&mut taken);
    match read {
        Ok(_) if taken.len() <= limit => Ok(taken),
        _ => Err(()),
    }
}

/// The pid of the process that started a worker, and the time it may take (milliseconds): the
/// worker ends itself when either is past, so a parent killed outright (SIGKILL leaves it no
/// chance to kill its worker) never leaves a worker spinning.
const PARENT_VAR: &str = "OPSDECK_JQ_PARENT";
const TIME_VAR: &str = "OPSDECK_JQ_TIME_MS";

/// How often a worker looks whether its parent is still there.
const PARENT_WATCH: Duration = Duration::from_millis(100);

/// Ends this worker when its parent is gone or its time budget is past (with a second's grace,
/// so a parent that is there says why first).
fn watch_parent() {
    let parent = std::env::var(PARENT_VAR).ok().and_then(|p| p.parse::<u32>().ok());
    let time = std::env::var(TIME_VAR).ok().and_then(|t| t.parse::<u64>().ok()).map(Duration::from_millis);
    if parent.is_none() && time.is_none() {
        return;
    }
    let started = Instant::now();
    std::thread::spawn(move || loop {
        std::thread::sleep(PARENT_WATCH);
        if parent.is_some_and(|parent| !parent_is(parent)) {
            std::process::exit(1);
        }
        if time.is_some_and(|time| started.elapsed() > time + Duration::from_secs(1)) {
            std::process::exit(1);
        }
    });
}

/// Whether this process's parent is still `pid` (an orphan is adopted by another process).
#[cfg(unix)]
fn parent_is(pid: u32) -> bool {
    std::os::unix::process::parent_id() == pid
}

#[cfg(not(unix))]
fn parent_is(_pid: u32) -> bool {
    // Elsewhere the time budget alone ends an orphan.
    true
}

/// The worker's third argument when the filter runs over each item of the body's array.
const EACH_ARG: &str = "each";

/// The exit status of a worker whose filter failed as jq code does (its message on stderr).
const WORKER_JQ_ERROR: i32 = 3;

/// `opsdeck __jq CODE [each]`: a jq worker. Reads a JSON body on stdin, writes each result as one line
/// of JSON on stdout; a filter error is one line on stderr and status 3. Its address space is
/// capped at `OPSDECK_JQ_MEMORY` bytes first, so running out ends it rather than the machine.
pub fn worker_main(code: &str, each: bool) -> i32 {
    watch_parent();
    let memory = std::env::var("OPSDECK_JQ_MEMORY").ok().and_then(|m| m.parse::<u64>().ok());
    if let Some(bytes) = memory {
        limit_memory(bytes);
    }
    let mut body = Vec::new();
    let mut err = std::io::stderr();
    if let Err(e) = std::io::stdin().read_to_end(&mut body) {
        let _ = writeln!(err, "jq: the body could not be read: {e}");
        return WORKER_JQ_ERROR;
    }
    let over = if each { Over::Each } else { Over::Whole };
    let results = Filter::compile(code).and_then(|filter| filter.run_over(over, &body));
    match results {
        Ok(results) => {
            let mut out = std::io::BufWriter::new(std::io::stdout().lock());
            for result in results {
                if writeln!(out, "{result}").is_err() {
                    return 1;
                }
            }
            if out.flush().is_err() {
                return 1;
            }
            0
        }
        Err(e) => {
            let _ = writeln!(err, "{}", e.lines().next().unwrap_or_default());
            WORKER_JQ_ERROR
        }
    }
}

#[cfg(unix)]
fn limit_memory(bytes: u64) {
    // A limit that cannot be set leaves the worker as the rest of the system is: the time budget
    // still ends it.
    let _ = rlimit::setrlimit(rlimit::Resource::AS, bytes, bytes);
}

#[cfg(not(unix))]
fn limit_memory(_bytes: u64) {}

fn to_json(value: &Val) -> Result<Value, String> {
    // jaq writes its values as JSON text; numbers jq cannot put in JSON (nan,
    // infinite) come out as words serde_json refuses, and jq prints them as null.
    let text = value.to_string();
    Ok(serde_json::from_str(&text).unwrap_or(Value::Null))
}

fn load_error(code: &str, error: jaq_core::load::Error<&str>) -> String {
    use jaq_core::load::Error;
    let at = |rest: &str| {
        let rest = rest.trim_start();
        if rest.is_empty() {
            "at the end".to_owned()
        } else {
            let shown: String = rest.chars().take(12).collect();
            format!("at `{shown}` (offset {})", code.len() - rest.len())
        }
    };
    match error {
        Error::Io(errors) => errors.into_iter().map(|(path, e)| format!("{path}: {e}")).collect::<Vec<_>>().join("; "),
        Error::Lex(errors) => errors
            .into_iter()
            .map(|(expect, rest): lex::Error<&str>| format!("expected {} {}", expect.as_str(), at(rest)))
            .collect::<Vec<_>>()
            .join("; "),
        Error::Parse(errors) => errors
            .into_iter()
            .map(|(expect, rest): parse::Error<&str>| format!("expected {} {}", expect.as_str(), at(rest)))
            .collect::<Vec<_>>()
            .join("; "),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_filter_runs_over_bytes_and_values() {
        let ids = Filter::compile(".[].id").expect("compiles");
        let body = br#"[{"id":"a","n":1},{"id":"b","n":2}]"#;
        assert_eq!(ids.run_bytes(body).expect("runs"), vec![json!("a"), json!("b")]);
        let sum = Filter::compile("map(.n) | add").expect("compiles");
        assert_eq!(sum.run(&json!([{"n": 1}, {"n": 2}])).expect("runs"), vec![json!(3)]);
    }

    #[test]
    fn std_functions_and_key_order_survive() {
        let filter = Filter::compile(r#"{z: 1, a: (.s | test("^ord"))} | to_entries | map(.key)"#).expect("compiles");
        assert_eq!(filter.run(&json!({"s": "orders"})).expect("runs"), vec![json!(["z", "a"])]);
    }

    #[test]
    fn errors_name_the_problem() {
        let syntax = Filter::compile(".[] |").expect_err("incomplete");
        assert!(syntax.contains("expected"), "{syntax}");
        let undefined = Filter::compile("lenght").expect_err("typo");
        assert!(undefined.contains("undefined filter `lenght`"), "{undefined}");
        assert!(Filter::compile("  ").expect_err("empty").contains("empty"));
        let runtime = Filter::compile(".a.b").expect("compiles").run(&json!({"a": 1})).expect_err("cannot index");
        assert!(runtime.starts_with("jq: "), "{runtime}");
        let not_json = Filter::compile(".").expect("compiles").run_bytes(b"<html>").expect_err("not json");
        assert!(not_json.contains("not JSON"), "{not_json}");
    }

    #[test]
    fn a_filter_runs_over_each_item_of_an_array() {
        let id = Filter::compile(".id").expect("compiles");
        let each = id.run_over(Over::Each, br#"[{"id":1},{"id":"b"}]"#).expect("runs");
        assert_eq!(each, vec![json!(1), json!("b")]);
        assert!(id.run_over(Over::Each, b"{}").expect_err("no array").contains("no array"));
    }

    #[test]
    fn endless_filters_stop() {
        let endless = Filter::compile("repeat(1)").expect("compiles");
        assert!(endless.run(&json!(null)).expect_err("bounded").contains("more than"));
    }
}
