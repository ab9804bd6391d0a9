//! The commands about opsdeck's own files: `opsdeck history` (list, show, clear the recorded
//! calls) and `opsdeck paths` (where everything is kept).

use std::io::Write;

use serde_json::{json, Value};

use crate::cli::{Failure, GlobalArgs, HistoryAction, HistoryArgs};
use crate::config::Config;
use crate::format::human_bytes;
use crate::history::{self, Filter, History, Record};
use crate::inert::{inert, inert_json, inert_lines};
use crate::paths::Paths;

fn usage(message: impl Into<String>) -> Failure {
    Failure { code: 2, message: message.into() }
}

fn runtime(message: impl Into<String>) -> Failure {
    Failure { code: 1, message: message.into() }
}

/// A reader that went away ends the command quietly (see [`Failure::reader_gone`]).
fn write(out: &mut dyn Write, text: &str) -> Result<(), Failure> {
    crate::cli::write_output(out, text.as_bytes())
}

/// JSON for stdout: pretty, and inert when a terminal shows it (still the same JSON).
fn json_text(value: &Value, to_terminal: bool) -> String {
    let text = serde_json::to_string_pretty(value).unwrap_or_default();
    let mut text = if to_terminal { inert_json(&text).into_owned() } else { text };
    text.push('\n');
    text
}

/// `opsdeck paths`.
pub fn paths(global: &GlobalArgs, as_json: bool, out: &mut dyn Write) -> Result<(), Failure> {
    let paths = Paths::current(global.config.as_deref());
    let entries = paths.entries();
    if as_json {
        let map: serde_json::Map<String, Value> = entries
            .iter()
            .map(|(what, path)| ((*what).to_owned(), path.map_or(Value::Null, |p| json!(p.display().to_string()))))
            .collect();
        return write(out, &json_text(&Value::Object(map), false));
    }
    let mut text = String::new();
    for (what, path) in entries {
        let shown = path.map_or_else(|| "(none on this system)".to_owned(), |p| p.display().to_string());
        text.push_str(&format!("{what:<8} {}\n", inert(&shown)));
    }
    write(out, &text)
}

/// `opsdeck history`, `opsdeck history show ID`, `opsdeck history clear`.
pub fn history(
    global: &GlobalArgs,
    args: &HistoryArgs,
    out: &mut dyn Write,
    out_is_terminal: bool,
    err: &mut dyn Write,
) -> Result<(), Failure> {
    let config = Config::load(global.config.as_deref())?;
    let settings = history::Settings::from(&config.history);
    let path = Paths::current(global.config.as_deref())
        .history_file
        .ok_or_else(|| runtime("no data folder on this system, so there is no history; set OPSDECK_DATA_DIR"))?;
    if !path.exists() {
        if matches!(args.action, Some(HistoryAction::Show { .. })) {
            return Err(runtime(format!("no call recorded yet ({} does not exist)", path.display())));
        }
        if args.json {
            return write(out, "[]\n");
        }
        return write(out, &format!("no call recorded yet ({} does not exist)\n", path.display()));
    }
    if !settings.enabled {
        // The calls kept so far can still be read; say why no new one appears.
        let _ = writeln!(err, "opsdeck: warning: recording is off ([history] enabled = false in config.toml)");
    }
    let store = History::open(&path, &config.history).map_err(runtime)?;
    match &args.action {
        Some(HistoryAction::Show { id, json }) => show(&store, *id, *json || args.json, out, out_is_terminal),
        Some(HistoryAction::Clear) => {
            let deleted = store.clear().map_err(runtime)?;
            write(
                out,
                &format!("deleted {} from {}\n", crate::format::plural(deleted, "recorded call"), path.display()),
            )
        }
        None => {
            let service = match args.service.as_deref() {
                Some(name) => Some(
                    crate::catalog::Service::parse(name)
                        .ok_or_else(|| {
                            let names: Vec<&str> = crate::catalog::Service::ALL.iter().map(|s| s.name()).collect();
                            usage(format!("unknown service '{}'; services: {}", inert(name), names.join(", ")))
                        })?
                        .name()
                        .to_owned(),
                ),
                None => None,
            };
            let records = store.list(&Filter { service, limit: args.limit }).map_err(runtime)?;
            if args.json {
                let list = serde_json::to_value(&records).map_err(|e| runtime(e.to_string()))?;
                return write(out, &json_text(&list, out_is_terminal));
            }
            write(out, &list_text(&records))
        }
    }
}

/// The list as a table, newest first; every text from the file made inert.
pub fn list_text(records: &[Record]) -> String {
    if records.is_empty() {
        return "no call recorded\n".to_owned();
    }
    let width = |f: &dyn Fn(&Record) -> usize, title: &str| records.iter().map(f).max().unwrap_or(0).max(title.len());
    let (id_w, profile_w, op_w) = (
        width(&|r| r.id.to_string().len(), "ID"),
        width(&|r| r.profile.chars().count(), "PROFILE"),
        width(&|r| r.operation.chars().count(), "OPERATION"),
    );
    let mut text = format!(
        "{:<id_w$}  {:<19}  {:<profile_w$}  {:<8}  {:<8}  {:<op_w$}  {:<9}  {:>8}  {:>9}\n",
        "ID", "TIME (UTC)", "PROFILE", "TARGET", "SERVICE", "OPERATION", "STATUS", "DURATION", "SIZE"
    );
    for r in records {
        text.push_str(&format!(
            "{:<id_w$}  {:<19}  {:<profile_w$}  {:<8}  {:<8}  {:<op_w$}  {:<9}  {:>8}  {:>9}\n",
            r.id,
            history::short_time(r.at_ms),
            inert(&r.profile),
            inert(&r.target),
            inert(&r.service),
            inert(&r.operation),
            r.status_label(),
            format!("{} ms", r.duration_ms),
            human_bytes(r.size),
        ));
    }
    text
}

fn show(store: &History, id: i64, as_json: bool, out: &mut dyn Write, to_terminal: bool) -> Result<(), Failure> {
    let record = store
        .get(id)
        .map_err(runtime)?
        .ok_or_else(|| runtime(format!("no recorded call {id}; `opsdeck history` lists them")))?;
    let body = record.response.as_deref().unwrap_or_default();
    if as_json {
        let mut value = serde_json::to_value(&record).map_err(|e| runtime(e.to_string()))?;
        let response = match serde_json::from_slice::<Value>(body) {
            Ok(parsed) if !record.truncated => parsed,
            _ => std::str::from_utf8(body).map_or(Value::Null, |text| Value::String(text.to_owned())),
        };
        if let Value::Object(map) = &mut value {
            map.insert("response".into(), response);
        }
        return write(out, &json_text(&value, to_terminal));
    }
    write(out, &show_text(&record, to_terminal))
}

/// One call for people: what was asked, how it went, and the stored response.
pub fn show_text(record: &Record, to_terminal: bool) -> String {
    let status =
        record.error.as_deref().map_or_else(|| record.status_label(), |e| format!("{} ({e})", record.status_label()));
    // Every value is made inert on its own: a newline inside one cannot fake another line.
    let mut text = format!(
        "#{} {} {} — {} in {} ms\n",
        record.id,
        inert(&record.service),
        inert(&record.operation),
        inert(&status),
        record.duration_ms
    );
    text.push_str(&format!("time      {}\n", record.time));
    text.push_str(&format!("profile   {} (from the {})\n", inert(&record.profile), inert(&record.source)));
    text.push_str(&format!("target    {} {}\n", inert(&record.target), inert(&record.base_url)));
    if record.params.is_empty() {
        text.push_str("params    (none)\n");
    }
    for (i, (name, value)) in record.given_pairs().iter().enumerate() {
        let label = if i == 0 { "params" } else { "" };
        text.push_str(&format!("{label:<9} {}={}\n", inert(name), inert(value)));
    }
    if let Some(body) = &record.body {
        text.push_str(&format!("--body    {}\n", inert(&body.to_string())));
    }
    let body = record.response.as_deref().unwrap_or_default();
    let kept =
        if record.truncated { format!(", first {} kept", human_bytes(body.len() as u64)) } else { String::new() };
    let kind = record.content_type.as_deref().map_or_else(String::new, |c| format!(" {c}"));
    text.push_str(&format!("response  {}{}{kept}\n", human_bytes(record.size), inert(&kind)));
    let mut shown = text;
    if body.is_empty() {
        return shown;
    }
    shown.push('\n');
    match serde_json::from_slice::<Value>(body) {
        Ok(value) => shown.push_str(&json_text(&value, true)),
        Err(_) => match std::str::from_utf8(body) {
            Ok(body) => {
                shown.push_str(&if to_terminal { inert_lines(body) } else { body.into() });
                if !shown.ends_with('\n') {
                    shown.push('\n');
                }
            }
            Err(_) => shown.push_str(&format!("({} of binary data, not shown)\n", human_bytes(body.len() as u64))),
        },
    }
    if record.truncated {
        shown.push_str("… (cut: [history] max_body_bytes)\n");
    }
    shown
}
