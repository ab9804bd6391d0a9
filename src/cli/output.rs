//! What `opsdeck call` prints of a response: the body as JSON (pretty, compact, or one record per
//! line), a jq filter's results, the console's table, and the status line and headers before it.
//! Every choice is checked before a request is sent; everything a server sent is made inert
//! before it can reach a terminal.

use serde_json::Value;

use super::{CallArgs, Failure};
use crate::catalog::{Operation, ResponseFormat};
use crate::client::{self, auth, pagination, Credentials};
use crate::inert::{inert, inert_json, inert_lines};
use crate::jq::Filter;
use crate::json_index::{JsonDoc, NodeId};

/// `-o FORMAT`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// The response body as JSON.
    #[default]
    Json,
    /// The records as plain aligned text, with the console's columns.
    Table,
}

/// How one call's output is shaped, decided (and checked) before anything is sent.
#[derive(Debug)]
pub struct Output {
    filter: Option<Filter>,
    compact: bool,
    /// `--raw`: a string value printed bare, without quotes, with or without a filter.
    raw: bool,
    format: Format,
    ndjson: bool,
    include: bool,
    to_terminal: bool,
    id_field: Option<&'static str>,
    /// The list's columns and cells as the console's browser shows them, when its service has
    /// its own (Mailgun events, EasyPost lists).
    layout: Option<crate::table::Layout>,
    /// An answer that keys its records by name (Mailgun webhooks): the member holding them.
    keyed: Option<&'static str>,
    op_name: String,
}

impl Output {
    /// The output `args` ask for, for `op`; a usage error when the flags contradict each other,
    /// the filter does not compile, or the operation's response cannot be read as they need.
    pub fn new(args: &CallArgs, op: &Operation, to_terminal: bool) -> Result<Output, Failure> {
        let table = args.output == Format::Table;
        let refuse = |message: String| Err(Failure::usage(message));
        if table && args.ndjson {
            return refuse("-o table and --ndjson are two output formats; pick one".into());
        }
        if table && (args.compact || args.raw) {
            let flag = if args.compact { "--compact" } else { "--raw" };
            return refuse(format!("{flag} shapes JSON output and -o table prints text; drop one of them"));
        }
        if args.include && args.all_pages {
            return refuse(
                "--include shows the status and headers of one response and --all-pages reads many; drop one of them"
                    .into(),
            );
        }
        let filter = match args.jq.as_deref() {
            Some(code) => Some(Filter::compile(code).map_err(|e| Failure::usage(format!("--jq: {e}")))?),
            None => None,
        };
        if op.response != ResponseFormat::Json {
            let reader = [(filter.is_some(), "--jq"), (table, "-o table"), (args.ndjson, "--ndjson")]
                .into_iter()
                .find_map(|(given, flag)| given.then_some(flag));
            if let Some(flag) = reader {
                return refuse(format!(
                    "{} answers with binary data (audio), not JSON, so {flag} cannot read it; drop {flag} and \
                     redirect stdout to a file, e.g. `> speech.mp3`",
                    op.full_name()
                ));
            }
        }
        Ok(Output {
            filter,
            compact: args.compact,
            raw: args.raw,
            format: args.output,
            ndjson: args.ndjson,
            include: args.include,
            to_terminal,
            id_field: op.id_field,
            layout: if table { crate::tui::services::layout(op) } else { None },
            keyed: op.keyed,
            op_name: op.full_name(),
        })
    }

    /// Whether each page goes out as it arrives (`--all-pages --ndjson`).
    pub fn streams(&self) -> bool {
        self.ndjson
    }

    /// Whether the output is the body as it came, made printable (no flag reshapes it).
    fn is_plain(&self) -> bool {
        self.filter.is_none() && !self.compact && !self.raw && self.format == Format::Json && !self.ndjson
    }

    /// The status line and headers before the body, with `--include`; nothing without it.
    pub fn head(&self, status: u16, headers: &[(String, String)], credentials: &Credentials) -> Vec<u8> {
        if !self.include {
            return Vec::new();
        }
        head_text(status, headers, &secret_texts(credentials)).into_bytes()
    }

    /// The status line of an error response, with `--include` (its headers are not kept).
    pub fn error_head(&self, status: u16) -> Vec<u8> {
        if !self.include {
            return Vec::new();
        }
        head_text(status, &[], &[]).into_bytes()
    }

    /// One response, as it is printed.
    pub fn one(&self, response: &client::Response) -> Result<Vec<u8>, Failure> {
        if self.is_plain() {
            return super::printable_body(&response.body, response.content_type(), self.to_terminal)
                .map_err(|reason| Failure::runtime(format!("{}: {reason}", self.op_name)));
        }
        if let Err(why) = super::json_budget(&response.body) {
            return Err(Failure::runtime(format!(
                "{}: {why}; --jq, -o table, --compact, --raw and --ndjson are refused for it. Without them \
                 the body is printed as it came: redirect it to a file (`> body.json`) and read it with a \
                 streaming tool",
                self.op_name
            )));
        }
        let empty = response.body.iter().all(u8::is_ascii_whitespace);
        if self.format == Format::Table && self.filter.is_none() && !empty {
            return self.table_of_body(&response.body);
        }
        let value = if empty {
            // An empty answer (204) is null to a filter, as in jq.
            Value::Null
        } else {
            match serde_json::from_slice::<Value>(&response.body) {
                Ok(value) => value,
                Err(_) if self.filter.is_none() && self.format == Format::Json && !self.ndjson => {
                    // --compact or --raw on a text body: nothing to reshape.
                    return super::printable_body(&response.body, response.content_type(), self.to_terminal)
                        .map_err(|reason| Failure::runtime(format!("{}: {reason}", self.op_name)));
                }
                Err(e) if e.to_string().starts_with("recursion limit exceeded") => {
                    return Err(Failure::runtime(format!(
                        "{}: the response is JSON nested deeper than {} levels, more than --jq, -o table, \
                         --compact, --raw and --ndjson read; without them it is printed as it came",
                        self.op_name,
                        super::SERDE_MAX_DEPTH
                    )))
                }
                Err(e) => {
                    return Err(Failure::runtime(format!(
                        "{}: the response is not JSON ({e}), so it cannot be filtered or tabled",
                        self.op_name
                    )))
                }
            }
        };
        if self.ndjson {
            return self.records_as_lines(value);
        }
        self.render(value)
    }

    /// Every page read by `--all-pages` (without `--ndjson`), as it is printed: the pages merged,
    /// or, for a filter or a table, the array of all their records.
    pub fn all(&self, pages: &[Value]) -> Result<Vec<u8>, Failure> {
        if self.filter.is_none() && self.format == Format::Json {
            return Ok(self.json(&pagination::merge_pages(pages)));
        }
        let records: Vec<Value> =
            pages.iter().filter_map(pagination::records).flat_map(|(_, rows)| rows.iter().cloned()).collect();
        self.render(Value::Array(records))
    }

    /// One page of `--all-pages --ndjson`: its records, one line each (or the filter's results
    /// over each record).
    pub fn page_lines(&self, page: Value) -> Result<Vec<u8>, Failure> {
        self.records_as_lines(page)
    }

    fn records_as_lines(&self, body: Value) -> Result<Vec<u8>, Failure> {
        let records = match pagination::records(&body) {
            Some(_) => pagination::into_records(body).unwrap_or_default(),
            None => vec![body],
        };
        // The filter runs over each record, all of a page in one worker.
        let results = match &self.filter {
            Some(filter) => {
                run_filter(filter, crate::jq::Over::Each, &Value::Array(records)).map_err(|e| self.jq_failure(&e))?
            }
            None => records,
        };
        let mut out = Vec::new();
        for result in &results {
            out.extend(self.json_line(result, true));
        }
        Ok(out)
    }

    /// A whole body (or all records): through the filter, then as JSON lines or a table.
    fn render(&self, input: Value) -> Result<Vec<u8>, Failure> {
        let results = match &self.filter {
            Some(filter) => run_filter(filter, crate::jq::Over::Whole, &input).map_err(|e| self.jq_failure(&e))?,
            None => vec![input],
        };
        if self.format == Format::Table {
            let rows = match <[Value; 1]>::try_from(results) {
                Ok([one]) => match pagination::into_records(one.clone()) {
                    Some(rows) => rows,
                    None => vec![one],
                },
                Err(many) => many,
            };
            // The list's id column, as the console shows it; rows a filter made may not have it.
            let id_field = self.id_field.filter(|field| match (&self.filter, rows.first()) {
                (Some(_), Some(Value::Object(map))) => map.contains_key(*field),
                _ => true,
            });
            // A filter's rows have shapes of their own: the generic columns fit them.
            let layout = if self.filter.is_some() { None } else { self.layout.clone() };
            return crate::table::render_values(&rows, id_field, layout)
                .map(String::into_bytes)
                .map_err(|e| Failure::runtime(format!("{}: the table cannot be made: {e}", self.op_name)));
        }
        Ok(results.iter().flat_map(|r| self.json_line(r, self.compact)).collect())
    }

    /// `-o table` of one response, read through the index: no DOM of the body, at any size.
    fn table_of_body(&self, body: &bytes::Bytes) -> Result<Vec<u8>, Failure> {
        let doc = JsonDoc::parse(body.clone()).map_err(|e| match e.kind {
            crate::json_index::JsonErrorKind::TooDeep => Failure::runtime(format!(
                "{}: the response is JSON nested deeper than {} levels, so it cannot be tabled",
                self.op_name,
                crate::json_index::MAX_DEPTH
            )),
            _ => Failure::runtime(format!("{}: the response is not JSON ({e}), so it cannot be tabled", self.op_name)),
        })?;
        // Records keyed by name are rows named by their keys, as the console shows them.
        if let Some(rows) = self.keyed.zip(self.id_field).and_then(|(member, name)| doc.keyed_records(member, name)) {
            return crate::table::render_values(&rows, self.id_field, self.layout.clone())
                .map(String::into_bytes)
                .map_err(|e| Failure::runtime(format!("{}: the table cannot be made: {e}", self.op_name)));
        }
        let records = doc.records().unwrap_or_else(|| vec![NodeId::ROOT]);
        Ok(crate::table::render_text(&doc, &records, self.id_field, self.layout.clone()).into_bytes())
    }

    fn jq_failure(&self, error: &str) -> Failure {
        // The worker's messages start with `jq:` already.
        let error = error.strip_prefix("jq: ").unwrap_or(error);
        Failure::runtime(format!("{}: --jq: {}", self.op_name, inert(error)))
    }

    /// A value on its own line(s): a string bare when it is a `--jq` result (as `gh --jq` prints
    /// it: `--jq '.[].id'` gives ids to paste or pipe, not JSON strings; `tojson` keeps the
    /// quotes) or with `--raw`, else JSON; inert for a terminal.
    fn json_line(&self, value: &Value, compact: bool) -> Vec<u8> {
        let bare = self.raw || self.filter.is_some();
        if let (true, Value::String(text)) = (bare, value) {
            let mut line = if self.to_terminal { inert_lines(text).into_owned() } else { text.clone() };
            line.push('\n');
            return line.into_bytes();
        }
        if compact {
            let mut line = inert_json(&value.to_string()).into_owned();
            line.push('\n');
            line.into_bytes()
        } else {
            self.json(value)
        }
    }

    fn json(&self, value: &Value) -> Vec<u8> {
        if self.compact {
            return self.json_line(value, true);
        }
        super::pretty(value)
    }
}

/// Headers whose values are secrets whatever they hold.
const SECRET_HEADERS: &[&str] = &["authorization", "proxy-authorization", "set-cookie", "cookie"];

/// `HTTP 200 OK`, the headers one per line (inert; secrets redacted), and an empty line.
pub fn head_text(status: u16, headers: &[(String, String)], secrets: &[String]) -> String {
    let mut text = format!("HTTP {status} {}\n", client::error::reason_phrase(status));
    for (name, value) in headers {
        let secret = SECRET_HEADERS.iter().any(|h| name.eq_ignore_ascii_case(h))
            || auth::is_secret_header(name)
            || secrets.iter().any(|s| value.contains(s.as_str()));
        let shown = if secret { "[redacted]".into() } else { inert(value) };
        text.push_str(&format!("{}: {shown}\n", inert(name)));
    }
    text.push('\n');
    text
}

/// Every form in which `credentials` travel: the raw secrets and the auth header values (and
/// their tokens) they make, so a header that echoes any of them is redacted.
pub fn secret_texts(credentials: &Credentials) -> Vec<String> {
    let mut texts: Vec<String> = match credentials {
        Credentials::AblyKey(s)
        | Credentials::AblyToken(s)
        | Credentials::Deepgram(s)
        | Credentials::Taxjar(s)
        | Credentials::Mailgun(s)
        | Credentials::Easypost(s) => vec![s.expose().to_owned()],
        Credentials::Avatax { license_key, .. } => vec![license_key.expose().to_owned()],
        Credentials::Coinbase { key, secret, passphrase } => {
            vec![key.clone(), secret.expose().to_owned(), passphrase.expose().to_owned()]
        }
    };
    // The headers a request carries: a Basic header holds the secret only in base64.
    let mut probe = client::PreparedRequest {
        service: crate::catalog::Service::Ably,
        method: crate::catalog::Method::Get,
        url: "http://127.0.0.1/".into(),
        headers: Vec::new(),
        body: client::request::RequestBody::Empty,
        expects_json: true,
        public: false,
    };
    if auth::authorize(&mut probe, credentials).is_ok() {
        for (name, value) in &probe.headers {
            if auth::is_secret_header(name) {
                texts.extend(value.split_whitespace().map(str::to_owned));
                texts.push(value.clone());
            }
        }
    }
    // A very short "secret" would redact half the headers; such a value protects nothing anyway.
    texts.retain(|t| t.len() >= 4 && !matches!(t.as_str(), "Basic" | "Bearer" | "Token"));
    texts.sort();
    texts.dedup();
    texts
}

/// Runs `--jq` in a worker with the budget of every filter (time, memory, size of results), so
/// a filter that never ends or fills the memory stops with its reason instead of the machine.
fn run_filter(filter: &Filter, over: crate::jq::Over, input: &Value) -> Result<Vec<Value>, String> {
    let body = serde_json::to_vec(input).map_err(|e| e.to_string())?;
    let cancel = std::sync::atomic::AtomicBool::new(false);
    crate::jq::run_compiled(crate::jq::Runner::shared(), filter, over, &body, crate::jq::Budget::DEFAULT, &cancel)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::Secret;

    #[test]
    fn headers_that_carry_secrets_are_redacted_and_the_rest_inert() {
        let credentials = Credentials::Mailgun(Secret::new("key-123456"));
        let secrets = secret_texts(&credentials);
        let headers: Vec<(String, String)> = [
            ("Content-Type", "application/json"),
            ("Set-Cookie", "session=abc"),
            ("Authorization", "Basic whatever"),
            ("X-Echo", "you sent key-123456"),
            ("X-Echo-Basic", "Basic YXBpOmtleS0xMjM0NTY="),
            ("X-Evil", "a\u{1b}]52;c;aGk=\u{7}b"),
        ]
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
        let text = head_text(200, &headers, &secrets);
        assert_eq!(
            text,
            "HTTP 200 OK\nContent-Type: application/json\nSet-Cookie: [redacted]\nAuthorization: [redacted]\n\
             X-Echo: [redacted]\nX-Echo-Basic: [redacted]\nX-Evil: a␛]52;c;aGk=␇b\n\n"
        );
    }
}
