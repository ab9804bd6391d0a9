//! Builds the real HTTP request of an operation from the user's values, and sends it.

use std::time::{Duration, Instant, SystemTime};

use bytes::Bytes;
use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use super::error::CallError;
use super::{auth, service_errors, Credentials, HttpSettings, Redactor, Response, Target, Values};
use crate::catalog::{
    file_path, items, validate, BodyEncoding, Kind, Location, Method, Operation, Param, ResponseFormat, Service,
};

/// Characters left as they are in a path segment or query component (RFC 3986 unreserved).
const COMPONENT: &AsciiSet = &NON_ALPHANUMERIC.remove(b'-').remove(b'.').remove(b'_').remove(b'~');

/// A request ready to be authorized and sent. Holds no secret until [`auth::authorize`] runs.
#[derive(Clone, Debug)]
pub struct PreparedRequest {
    pub service: Service,
    pub method: Method,
    /// Full URL including the query string.
    pub url: String,
    pub headers: Vec<(String, String)>,
    pub body: RequestBody,
    /// Whether a successful response must be JSON (true for all but the operations the catalog
    /// says answer otherwise, and for those only when `Accept` asks for JSON).
    pub expects_json: bool,
    /// An operation anyone may call: no credentials are added to it.
    pub public: bool,
}

/// The body of a prepared request.
#[derive(Clone, Debug)]
pub enum RequestBody {
    Empty,
    Bytes { content_type: String, bytes: Bytes },
    Multipart(Vec<MultipartField>),
}

/// One part of a multipart body: text, or a file's bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MultipartField {
    pub name: String,
    pub value: MultipartValue,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MultipartValue {
    Text(String),
    /// A file read from disk: its name (without folders) and content type go in the part's
    /// headers; `path` is where it was read, as given, for the curl and HTTPie copies.
    File {
        file_name: String,
        content_type: String,
        path: String,
        bytes: Bytes,
    },
}

impl RequestBody {
    /// The exact bytes sent, where there are such (what Coinbase signs).
    pub fn bytes(&self) -> &[u8] {
        match self {
            RequestBody::Bytes { bytes, .. } => bytes,
            _ => &[],
        }
    }
}

impl PreparedRequest {
    /// The path and query, as Coinbase signs it.
    pub fn path_and_query(&self) -> &str {
        let after_scheme = self.url.find("://").map_or(0, |i| i + 3);
        self.url[after_scheme..].find('/').map_or("/", |i| &self.url[after_scheme + i..])
    }

    /// `METHOD url`, for the inspector and error messages (URLs carry no secrets).
    pub fn request_line(&self) -> String {
        format!("{} {}", self.method, self.url)
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
}

/// Builds the request of `op` from `values` (empty values are "not given") and an optional whole
/// body document (`--body`). Validates every value first, so nothing invalid is ever sent.
pub fn build(
    op: &Operation,
    values: &Values,
    body: Option<&Value>,
    target: &Target,
) -> Result<PreparedRequest, CallError> {
    let problems = validate::check_values(op, values.iter().map(|(k, v)| (k.as_str(), v.as_str())), body);
    if !problems.is_empty() {
        let list: Vec<String> = problems.iter().map(|(name, msg)| format!("{name}: {msg}")).collect();
        return Err(CallError::Invalid(list.join("; ")));
    }
    let given = |p: &Param| values.get(p.name).filter(|v| !v.is_empty()).map(String::as_str);

    let mut path = op.path.to_owned();
    for param in op.params.iter().filter(|p| p.location == Location::Path) {
        let value = given(param).unwrap_or_default();
        path = path.replace(&format!("{{{}}}", param.name), &utf8_percent_encode(value, COMPONENT).to_string());
    }
    let mut query = Vec::new();
    let mut headers = vec![("Accept".to_owned(), "application/json".to_owned())];
    for param in op.params {
        let Some(value) = given(param) else { continue };
        match param.location {
            Location::Query => {
                let items = items(param, value);
                let joined = items.join(",");
                let values = if param.comma_joined { vec![joined.as_str()] } else { items };
                for v in values {
                    query.push(format!(
                        "{}={}",
                        utf8_percent_encode(param.name, COMPONENT),
                        utf8_percent_encode(v, COMPONENT)
                    ));
                }
            }
            Location::Header => {
                // A header parameter replaces the default of the same name (`Accept`), never doubles it.
                headers.retain(|(k, _): &(String, String)| !k.eq_ignore_ascii_case(param.name));
                headers.push((param.name.to_owned(), items(param, value).join(", ")));
            }
            _ => {}
        }
    }
    let mut url = format!("{}{}", target.base_url.trim_end_matches('/'), path);
    if !query.is_empty() {
        url.push('?');
        url.push_str(&query.join("&"));
    }
    let mut body = build_body(op, values, body)?;
    if op.service == Service::Ably {
        headers.push(("X-Ably-Version".to_owned(), "5".to_owned()));
        if op.name == "tokens_request" {
            body = auth::ably_token_request_body(values, &body);
        }
    }
    let accepts_json = headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("accept"))
        .is_none_or(|(_, v)| v.to_ascii_lowercase().contains("json"));
    let expects_json = op.response == ResponseFormat::Json && accepts_json;
    Ok(PreparedRequest { service: op.service, method: op.method, url, headers, body, expects_json, public: op.public })
}

/// A typed value as JSON, by its parameter's kind (the value is already validated).
fn json_value(param: &Param, value: &str) -> Result<Value, CallError> {
    let invalid = |e: String| CallError::Invalid(format!("{}: {e}", param.name));
    Ok(match param.kind {
        Kind::Int | Kind::Num => {
            Value::Number(value.trim().parse().map_err(|_| invalid(format!("'{value}' is not a number")))?)
        }
        Kind::Bool => Value::Bool(value.trim() == "true"),
        Kind::Json => serde_json::from_str(value).map_err(|e| invalid(format!("invalid JSON: {e}")))?,
        Kind::List => Value::Array(items(param, value).into_iter().map(|v| Value::String(v.to_owned())).collect()),
        Kind::Str => Value::String(value.to_owned()),
        Kind::Data => match serde_json::from_str::<Value>(value) {
            Ok(parsed @ (Value::Object(_) | Value::Array(_))) => parsed,
            _ => Value::String(value.to_owned()),
        },
        Kind::File => return Err(invalid("a file cannot be sent in a JSON body".into())),
    })
}

/// A file item (`@invoice.pdf` or `invoice.pdf`) read from disk, as a multipart file part's value:
/// the bytes, the file's own name, and a content type from its extension.
fn read_file(name: &str, item: &str) -> Result<MultipartValue, CallError> {
    let path = file_path(item);
    let bytes = std::fs::read(path)
        .map_err(|e| CallError::Invalid(format!("{name}: cannot read file {}: {e}", crate::inert::inert(path))))?;
    let file_name = std::path::Path::new(path)
        .file_name()
        .map_or_else(|| "upload".to_owned(), |n| n.to_string_lossy().into_owned());
    let content_type = mime_guess::from_path(path).first_or_octet_stream().essence_str().to_owned();
    Ok(MultipartValue::File { file_name, content_type, path: path.to_owned(), bytes: Bytes::from(bytes) })
}

/// The body values given, in catalog order, each with the name it is sent under: a family
/// (`h:`) contributes every name of it that was given (`h:X-Ticket`), in name order.
fn body_fields<'a>(op: &'a Operation, values: &'a Values) -> Vec<(&'static Param, &'a str, &'a str)> {
    let mut fields = Vec::new();
    for param in op.params.iter().filter(|p| matches!(p.location, Location::Body | Location::WholeBody)) {
        for (name, value) in values.iter().filter(|(_, v)| !v.is_empty()) {
            let ours = match param.family {
                Some(_) => op.param(name).is_some_and(|p| std::ptr::eq(p, param)),
                None => name == param.name,
            };
            if ours {
                fields.push((param, name.as_str(), value.as_str()));
            }
        }
    }
    fields
}

/// The values a call sends, however each was given: the top-level fields of the `--body`
/// document (a text as it is, anything else as compact JSON), with the values given by name
/// over them, as [`build`] sends them. What a call spends and what its confirmation restates
/// are judged from these, so a sell given as `--body` is said to be a sell.
pub fn sent_values(values: &Values, document: Option<&Value>) -> Values {
    let mut sent = Values::new();
    if let Some(Value::Object(fields)) = document {
        for (name, value) in fields {
            let text = match value {
                Value::Null => continue,
                Value::String(text) => text.clone(),
                other => other.to_string(),
            };
            sent.insert(name.clone(), text);
        }
    }
    sent.extend(values.iter().map(|(name, value)| (name.clone(), value.clone())));
    sent
}

fn build_body(op: &Operation, values: &Values, document: Option<&Value>) -> Result<RequestBody, CallError> {
    let fields = body_fields(op, values);
    match op.body {
        BodyEncoding::None => {
            if document.is_some() {
                return Err(CallError::Invalid(format!("{} takes no request body", op.full_name())));
            }
            Ok(RequestBody::Empty)
        }
        BodyEncoding::Json => {
            let whole = fields.iter().find(|(p, _, _)| p.location == Location::WholeBody);
            if let Some((_, name, v)) = whole.filter(|(p, _, _)| p.kind == Kind::File) {
                let bytes = match read_file(name, v)? {
                    MultipartValue::File { bytes, .. } => bytes,
                    MultipartValue::Text(text) => Bytes::from(text),
                };
                return Ok(RequestBody::Bytes { content_type: "application/octet-stream".into(), bytes });
            }
            let value = match (whole, document) {
                (Some((p, _, v)), _) => json_value(p, v)?,
                (None, doc) => {
                    let mut object = match doc {
                        Some(Value::Object(map)) => map.clone(),
                        Some(other) if fields.is_empty() => return Ok(json_body(other)),
                        Some(_) => {
                            return Err(CallError::Invalid(
                                "--body must be a JSON object when fields are also given".into(),
                            ))
                        }
                        None => Map::new(),
                    };
                    for (p, name, v) in &fields {
                        object.insert((*name).to_owned(), json_value(p, v)?);
                    }
                    Value::Object(object)
                }
            };
            Ok(json_body(&value))
        }
        BodyEncoding::Form => {
            let mut pairs = document_pairs(op, document)?;
            for (p, name, v) in &fields {
                for item in items(p, v) {
                    pairs.push(((*name).to_owned(), item.to_owned()));
                }
            }
            let encoded: Vec<String> = pairs
                .iter()
                .map(|(k, v)| format!("{}={}", utf8_percent_encode(k, COMPONENT), utf8_percent_encode(v, COMPONENT)))
                .collect();
            Ok(RequestBody::Bytes {
                content_type: "application/x-www-form-urlencoded".into(),
                bytes: Bytes::from(encoded.join("&")),
            })
        }
        BodyEncoding::Multipart => {
            let mut parts: Vec<MultipartField> = document_pairs(op, document)?
                .into_iter()
                .map(|(name, v)| MultipartField { name, value: MultipartValue::Text(v) })
                .collect();
            for (p, name, v) in &fields {
                // Each item its own part under the same name: repeated keys are how Mailgun
                // (and multipart forms generally) carry lists and several files.
                for item in items(p, v) {
                    let value = if p.kind == Kind::File {
                        read_file(name, item)?
                    } else {
                        MultipartValue::Text(item.to_owned())
                    };
                    parts.push(MultipartField { name: (*name).to_owned(), value });
                }
            }
            Ok(RequestBody::Multipart(parts))
        }
        BodyEncoding::Raw(content_type) => {
            let (p, name, v) = fields
                .iter()
                .find(|(p, _, _)| p.location == Location::WholeBody)
                .ok_or_else(|| CallError::Invalid(format!("{} needs a file to upload", op.full_name())))?;
            let bytes = match p.kind {
                Kind::File => match read_file(name, v)? {
                    MultipartValue::File { bytes, .. } => bytes,
                    MultipartValue::Text(text) => Bytes::from(text),
                },
                _ => Bytes::from(v.to_string()),
            };
            Ok(RequestBody::Bytes { content_type: content_type.to_owned(), bytes })
        }
    }
}

fn json_body(value: &Value) -> RequestBody {
    RequestBody::Bytes { content_type: "application/json".into(), bytes: Bytes::from(value.to_string()) }
}

/// A `--body` object as form fields (arrays repeat the key; a family's object, `"h:": {...}`,
/// gives one field per name, as the form's family field does).
fn document_pairs(op: &Operation, document: Option<&Value>) -> Result<Vec<(String, String)>, CallError> {
    let Some(document) = document else {
        return Ok(Vec::new());
    };
    let Value::Object(map) = document else {
        return Err(CallError::Invalid("--body must be a JSON object of form fields".into()));
    };
    let mut pairs = Vec::new();
    for (key, value) in map {
        if let Some(family) = op.param(key).filter(|p| p.family.is_some() && p.name == key && value.is_object()) {
            pairs.extend(
                validate::expand_family(family, value).map_err(|e| CallError::Invalid(format!("--body: {e}")))?,
            );
            continue;
        }
        match value {
            Value::Array(items) => pairs.extend(items.iter().map(|i| (key.clone(), scalar_text(i)))),
            other => pairs.push((key.clone(), scalar_text(other))),
        }
    }
    Ok(pairs)
}

fn scalar_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Sends a prepared request: authorizes it (again on each retry, so signatures stay fresh),
/// retries idempotent requests on connection failures, timeouts, 429 and 502-504 (honouring
/// `Retry-After`, with jittered backoff otherwise), all within `settings.total_timeout`, and turns
/// an error status into the service's error and a success that is not the expected JSON into
/// [`CallError::NotJson`].
pub async fn execute(
    http: &reqwest::Client,
    request: &PreparedRequest,
    credentials: &Credentials,
    settings: &HttpSettings,
    cancel: &CancellationToken,
) -> Result<Response, CallError> {
    let started = Instant::now();
    let deadline = started + settings.total_timeout;
    let attempts = if request.method.is_idempotent() { settings.attempts.max(1) } else { 1 };
    let mut attempt = 0;
    // Computed only when an event is logged: the fields of a disabled event are never evaluated.
    let redactor = || Redactor::for_credentials(credentials);
    let service = request.service.name();
    loop {
        attempt += 1;
        let left = deadline.saturating_duration_since(Instant::now());
        let per_attempt = settings.request_timeout.min(left);
        tracing::debug!(
            service, method = %request.method, url = %redactor().url(&request.url), attempt, of = attempts,
            timeout_ms = per_attempt.as_millis() as u64, "sending"
        );
        let sent = Instant::now();
        let outcome = tokio::select! {
            biased;
            () = cancel.cancelled() => {
                tracing::debug!(service, method = %request.method, url = %redactor().url(&request.url), attempt, "cancelled");
                return Err(CallError::Cancelled);
            }
            outcome = send_once(http, request, credentials, settings, per_attempt) => outcome,
        };
        let elapsed_ms = sent.elapsed().as_millis() as u64;
        match &outcome {
            Ok(response) => tracing::info!(
                service, method = %request.method, url = %redactor().url(&request.url), status = response.status,
                elapsed_ms, bytes = response.body.len(), attempt, "response"
            ),
            Err(error) => tracing::warn!(
                service, method = %request.method, url = %redactor().url(&request.url),
                error = %crate::inert::inert(&String::from_utf8_lossy(&redactor().scrub(error.to_string().as_bytes()))),
                elapsed_ms, attempt, "no response"
            ),
        }
        let asked_wait = match &outcome {
            Ok(response) if matches!(response.status, 429 | 502 | 503 | 504) => {
                Some(retry_after(response, SystemTime::now()))
            }
            Err(CallError::Connect { .. } | CallError::Timeout { .. }) => Some(None),
            _ => None,
        };
        if let (Some(asked), true) = (asked_wait, attempt < attempts) {
            let left = deadline.saturating_duration_since(Instant::now());
            let wait = asked.unwrap_or_else(|| backoff(attempt));
            if wait < left {
                tracing::info!(
                    service, method = %request.method, url = %redactor().url(&request.url), attempt,
                    reason = %retry_reason(&outcome), wait_ms = wait.as_millis() as u64,
                    wait_from = if asked.is_some() { "Retry-After" } else { "backoff" }, "retrying"
                );
                tokio::select! {
                    () = cancel.cancelled() => return Err(CallError::Cancelled),
                    () = tokio::time::sleep(wait) => {}
                }
                continue;
            }
            // A wait the service asked for that the budget cannot afford: say so now rather than
            // sleep and fail anyway.
            if let (Some(wait), Ok(response)) = (asked, &outcome) {
                tracing::warn!(
                    service, url = %redactor().url(&request.url), attempt, status = response.status,
                    retry_after_ms = wait.as_millis() as u64, budget_left_ms = left.as_millis() as u64,
                    "giving up: the service asks to wait longer than the call's time budget allows"
                );
                let error = service_errors::parse_error(request.service, response.status, &response.body);
                return Err(CallError::RetryAfter { error, wait, left });
            }
        }
        return finish(request, outcome, attempt, started.elapsed());
    }
}

/// Why an attempt is retried, for the log.
fn retry_reason(outcome: &Result<Response, CallError>) -> String {
    match outcome {
        Ok(response) => format!("HTTP {}", response.status),
        Err(CallError::Connect { .. }) => "cannot connect".to_owned(),
        Err(CallError::Timeout { .. }) => "timeout".to_owned(),
        Err(_) => "error".to_owned(),
    }
}

/// The call's result from its last attempt's outcome.
fn finish(
    request: &PreparedRequest,
    outcome: Result<Response, CallError>,
    attempts: u32,
    total: Duration,
) -> Result<Response, CallError> {
    let mut response = match outcome {
        Ok(response) => response,
        Err(CallError::Timeout { url, per_attempt, .. }) => {
            return Err(CallError::Timeout { url, per_attempt, attempts, total })
        }
        Err(other) => return Err(other),
    };
    response.duration = total;
    if !response.is_success() {
        return Err(CallError::Api(service_errors::parse_error(request.service, response.status, &response.body)));
    }
    if request.expects_json && !response.body.is_empty() && !is_json(&response.body) {
        return Err(not_json(request, &response));
    }
    Ok(response)
}

/// Whether a body is JSON. A big body is only checked to start and end like JSON: whoever
/// reads it validates it anyway (the console's index, `--jq`), and a second full pass over
/// 50 MB here would cost as much as indexing it.
fn is_json(body: &[u8]) -> bool {
    if body.len() <= FULLY_CHECKED_JSON {
        // The index's pass, not serde's: it has no recursion limit of 128, so JSON nested deeper
        // is still JSON (nested past the index's own depth limit, or holding more values than it
        // may index, it is JSON too: whoever reads it says why it cannot).
        use crate::json_index::{JsonDoc, JsonErrorKind};
        return match JsonDoc::parse(Bytes::copy_from_slice(body)) {
            Ok(_) => true,
            Err(e) => matches!(e.kind, JsonErrorKind::TooDeep | JsonErrorKind::TooManyValues { .. }),
        };
    }
    let text = body.trim_ascii();
    matches!((text.first(), text.last()), (Some(b'{'), Some(b'}')) | (Some(b'['), Some(b']')))
}

/// Bodies up to this size are parsed to tell whether they are JSON.
const FULLY_CHECKED_JSON: usize = 1024 * 1024;

/// Bytes of a non-JSON body shown in the error: enough to recognise a login page or a proxy.
const PREVIEW_BYTES: usize = 120;

fn not_json(request: &PreparedRequest, response: &Response) -> CallError {
    let head = &response.body[..response.body.len().min(PREVIEW_BYTES)];
    let mut preview = crate::inert::inert(String::from_utf8_lossy(head).trim()).into_owned();
    if response.body.len() > PREVIEW_BYTES {
        preview.push('…');
    }
    CallError::NotJson {
        url: request.url.clone(),
        status: response.status,
        content_type: crate::inert::inert(response.content_type().unwrap_or("no content type")).into_owned(),
        preview,
    }
}

/// Exponential backoff with jitter: attempt n waits a random time between half and all of
/// 200 ms x 2^(n-1), so clients that failed together do not retry in step.
fn backoff(attempt: u32) -> Duration {
    let full = Duration::from_millis(200 * 2u64.pow(attempt.saturating_sub(1).min(10)));
    let mut random = [0u8; 4];
    // Without OS randomness the wait is simply the full one.
    let fraction = if getrandom::getrandom(&mut random).is_ok() {
        f64::from(u32::from_le_bytes(random)) / f64::from(u32::MAX)
    } else {
        1.0
    };
    full / 2 + full.mul_f64(fraction / 2.0)
}

/// `Retry-After` as seconds or as an HTTP date (RFC 9110 §10.2.3), relative to `now`.
fn retry_after(response: &Response, now: SystemTime) -> Option<Duration> {
    let value = response.header("retry-after")?.trim();
    if let Ok(seconds) = value.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    let date = time::OffsetDateTime::parse(value, &time::format_description::well_known::Rfc2822).ok()?;
    let when = SystemTime::from(date);
    Some(when.duration_since(now).unwrap_or(Duration::ZERO))
}

async fn send_once(
    http: &reqwest::Client,
    request: &PreparedRequest,
    credentials: &Credentials,
    settings: &HttpSettings,
    timeout: Duration,
) -> Result<Response, CallError> {
    let mut authorized = request.clone();
    auth::authorize(&mut authorized, credentials)?;
    let url = authorized.url.clone();
    let method = match authorized.method {
        Method::Get => reqwest::Method::GET,
        Method::Post => reqwest::Method::POST,
        Method::Put => reqwest::Method::PUT,
        Method::Patch => reqwest::Method::PATCH,
        Method::Delete => reqwest::Method::DELETE,
    };
    let mut builder = http.request(method, &url).timeout(timeout);
    for (name, value) in &authorized.headers {
        builder = builder.header(name, value);
    }
    builder = match authorized.body {
        RequestBody::Empty => builder,
        RequestBody::Bytes { content_type, bytes } => builder.header("Content-Type", content_type).body(bytes),
        RequestBody::Multipart(fields) => {
            let mut form = reqwest::multipart::Form::new();
            for field in fields {
                form = match field.value {
                    MultipartValue::Text(text) => form.text(field.name, text),
                    MultipartValue::File { file_name, content_type, bytes, .. } => {
                        let part = reqwest::multipart::Part::stream(bytes)
                            .file_name(file_name)
                            .mime_str(&content_type)
                            .map_err(|e| {
                                CallError::Invalid(format!("{}: content type {content_type}: {e}", field.name))
                            })?;
                        form.part(field.name, part)
                    }
                };
            }
            builder.multipart(form)
        }
    };
    let started = Instant::now();
    let mut response = builder.send().await.map_err(|e| transport_error(&url, &e, timeout))?;
    let status = response.status().as_u16();
    let headers = response
        .headers()
        .iter()
        .map(|(k, v)| (k.as_str().to_owned(), String::from_utf8_lossy(v.as_bytes()).into_owned()))
        .collect();
    let expected = response.content_length();
    if expected.is_some_and(|n| n > settings.max_body_bytes) {
        return Err(CallError::TooLarge { limit_mb: settings.max_body_bytes / (1024 * 1024) });
    }
    // Sized once when the length is known: growing by doubling would briefly hold ~3x the body.
    let mut body = Vec::with_capacity(expected.and_then(|n| usize::try_from(n).ok()).unwrap_or(0));
    while let Some(chunk) = response.chunk().await.map_err(|e| transport_error(&url, &e, timeout))? {
        if (body.len() + chunk.len()) as u64 > settings.max_body_bytes {
            return Err(CallError::TooLarge { limit_mb: settings.max_body_bytes / (1024 * 1024) });
        }
        body.extend_from_slice(&chunk);
    }
    Ok(Response {
        status,
        headers,
        body: Bytes::from(body),
        duration: started.elapsed(),
        request_line: request.request_line(),
    })
}

fn transport_error(url: &str, error: &reqwest::Error, timeout: Duration) -> CallError {
    let url = url.to_owned();
    if error.is_timeout() {
        return CallError::Timeout { url, per_attempt: timeout, attempts: 1, total: timeout };
    }
    if let Some(refused) = find_source::<super::RefusedRedirect>(error) {
        return CallError::OffOrigin { url: refused.url.clone(), origin: refused.origin.clone() };
    }
    // The innermost cause says what actually went wrong (refused, DNS, certificate).
    let mut reason = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(inner) = source {
        reason = inner.to_string();
        source = inner.source();
    }
    if error.is_connect() {
        CallError::Connect { url, reason }
    } else {
        CallError::Network { url, reason }
    }
}

/// The first error of type `T` in `error`'s chain of causes.
fn find_source<'a, T: std::error::Error + 'static>(error: &'a (dyn std::error::Error + 'static)) -> Option<&'a T> {
    let mut current = Some(error);
    while let Some(e) = current {
        if let Some(found) = e.downcast_ref::<T>() {
            return Some(found);
        }
        current = e.source();
    }
    None
}

/// The request as a curl command for `--dry-run`. It holds no secret and no signature: secrets
/// appear as their environment variables (`$ABLY_API_KEY`), so the owner of the key can run it,
/// and signatures as placeholders that say what goes there (see [`auth::dry_run_auth`]).
pub fn to_curl(request: &PreparedRequest, credentials: &Credentials) -> Result<String, CallError> {
    let mut authorized = request.clone();
    let auth_args = auth::dry_run_auth(&mut authorized, credentials)?;
    let shown = ShownBody::new(request, credentials);
    let quote = |s: &str| format!("'{}'", s.replace('\'', r"'\''"));
    let mut parts = vec!["curl".to_owned(), "-X".to_owned(), authorized.method.to_string(), quote(&authorized.url)];
    parts.extend(auth_args);
    for (name, value) in &authorized.headers {
        let shown = if auth::is_secret_header(name) { "[redacted]" } else { value.as_str() };
        parts.push("-H".into());
        parts.push(quote(&format!("{name}: {shown}")));
    }
    match &authorized.body {
        RequestBody::Empty => {}
        RequestBody::Bytes { content_type, bytes } => {
            parts.push("-H".into());
            parts.push(quote(&format!("Content-Type: {content_type}")));
            match std::str::from_utf8(bytes) {
                Ok(text) => {
                    parts.push("--data-raw".into());
                    parts.push(quote(&shown.body(text)));
                }
                Err(_) => parts.push(format!("--data-binary @- # {} bytes", bytes.len())),
            }
        }
        RequestBody::Multipart(fields) => {
            for field in fields {
                parts.push("-F".into());
                parts.push(match &field.value {
                    MultipartValue::Text(text) => quote(&format!("{}={}", field.name, shown.field(&field.name, text))),
                    MultipartValue::File { content_type, path, .. } => {
                        quote(&format!("{}=@{};type={content_type}", field.name, curl_file(path)))
                    }
                });
            }
        }
    }
    Ok(shown.finish(parts.join(" ")))
}

/// What a printed request shows of its body: secrets typed into it (a `webhook_secret`, a custom
/// `Authorization` header's value, a password in a URL, the target's own credential) become
/// `[redacted]`, as in the history, and the command then says so: it is for reading and for the
/// key's owner to fill in, never a secret to replay.
struct ShownBody {
    redactor: Redactor,
    redacted: std::cell::Cell<bool>,
}

impl ShownBody {
    fn new(request: &PreparedRequest, credentials: &Credentials) -> ShownBody {
        let mut redactor = Redactor::for_credentials(credentials);
        match &request.body {
            RequestBody::Bytes { bytes, .. } => redactor.learn(bytes),
            RequestBody::Multipart(fields) => {
                for field in fields {
                    if let MultipartValue::Text(text) = &field.value {
                        redactor.learn(text.as_bytes());
                    }
                }
            }
            RequestBody::Empty => {}
        }
        ShownBody { redactor, redacted: std::cell::Cell::new(false) }
    }

    fn body(&self, text: &str) -> String {
        // What was learned from the request as given, not every secret-named field: the
        // placeholders the dry run puts in a signed body (`mac`) stay to be read.
        let shown = super::redact::without_userinfo(&self.redactor.bytes(text.as_bytes()));
        let shown = String::from_utf8_lossy(&shown).into_owned();
        if shown != text {
            self.redacted.set(true);
        }
        shown
    }

    fn field(&self, name: &str, text: &str) -> String {
        if super::redact::is_secret_name(name) && !text.is_empty() {
            self.redacted.set(true);
            return super::redact::REDACTED.to_owned();
        }
        self.body(text)
    }

    fn finish(&self, command: String) -> String {
        if self.redacted.get() {
            format!("{command} # secrets in the body are shown as {}", super::redact::REDACTED)
        } else {
            command
        }
    }
}

/// A file path as curl's `-F name=@PATH;type=...` (and HTTPie's `name@PATH;type=...`) read it: in
/// double quotes when it holds a character those would take as a separator.
fn curl_file(path: &str) -> String {
    if path.contains([';', ',', '"', '\\']) {
        format!("\"{}\"", path.replace('\\', "\\\\").replace('"', "\\\""))
    } else {
        path.to_owned()
    }
}

/// The request as an HTTPie command, with the same guarantees as [`to_curl`]: secrets are the
/// environment variables that hold them (`-a "$ABLY_API_KEY"`), signatures placeholders, so it
/// runs for the key's owner and replays for nobody else.
pub fn to_httpie(request: &PreparedRequest, credentials: &Credentials) -> Result<String, CallError> {
    let mut authorized = request.clone();
    let auth_args = auth::dry_run_auth(&mut authorized, credentials)?;
    let shown = ShownBody::new(request, credentials);
    let quote = |s: &str| format!("'{}'", s.replace('\'', r"'\''"));
    let mut options = Vec::new();
    let mut items = Vec::new();
    // curl's `-u X` is HTTPie's `-a X`; a header `-H "Name: value"` is the item `"Name:value"`
    // (the quoting, and so the shell's expansion of `$VARIABLE`, stays as it was).
    let mut args = auth_args.into_iter();
    while let Some(arg) = args.next() {
        match (arg.as_str(), args.next()) {
            ("-u", Some(user)) => options.extend(["-a".to_owned(), user]),
            ("-H", Some(header)) => items.push(header.replacen(": ", ":", 1)),
            (_, next) => items.extend(std::iter::once(arg.clone()).chain(next)),
        }
    }
    for (name, value) in &authorized.headers {
        let shown = if auth::is_secret_header(name) { "[redacted]" } else { value.as_str() };
        items.push(quote(&format!("{name}:{shown}")));
    }
    match &authorized.body {
        RequestBody::Empty => {}
        RequestBody::Bytes { content_type, bytes } => {
            items.push(quote(&format!("Content-Type:{content_type}")));
            match std::str::from_utf8(bytes) {
                Ok(text) => options.extend(["--raw".to_owned(), quote(&shown.body(text))]),
                Err(_) => items.push(format!("< body.bin # {} bytes", bytes.len())),
            }
        }
        RequestBody::Multipart(fields) => {
            options.push("--multipart".to_owned());
            for field in fields {
                items.push(match &field.value {
                    MultipartValue::Text(text) => quote(&format!("{}={}", field.name, shown.field(&field.name, text))),
                    MultipartValue::File { content_type, path, .. } => {
                        quote(&format!("{}@{};type={content_type}", field.name, curl_file(path)))
                    }
                });
            }
        }
    }
    let mut parts = vec!["http".to_owned()];
    parts.extend(options);
    parts.push(authorized.method.to_string());
    parts.push(quote(&authorized.url));
    parts.extend(items);
    Ok(shown.finish(parts.join(" ")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::Secret;

    /// A target on a local simulator's port (the client knows no simulator; these only build).
    fn simulator_target(service: Service, credentials: Credentials, port: u16) -> Target {
        Target { service, base_url: format!("http://127.0.0.1:{port}"), credentials, live: false }
    }

    fn with_retry_after(value: &str) -> Response {
        Response {
            status: 503,
            headers: vec![("Retry-After".into(), value.into())],
            body: Bytes::new(),
            duration: Duration::ZERO,
            request_line: String::new(),
        }
    }

    #[test]
    fn retry_after_is_read_as_seconds_or_an_http_date() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_445_412_470);
        assert_eq!(retry_after(&with_retry_after("7"), now), Some(Duration::from_secs(7)));
        // 1445412480 is Wed, 21 Oct 2015 07:28:00 GMT.
        let date = with_retry_after("Wed, 21 Oct 2015 07:28:00 GMT");
        assert_eq!(retry_after(&date, now), Some(Duration::from_secs(10)));
        let past = SystemTime::UNIX_EPOCH + Duration::from_secs(1_445_412_490);
        assert_eq!(retry_after(&date, past), Some(Duration::ZERO));
        assert_eq!(retry_after(&with_retry_after("soon"), now), None);
    }

    #[test]
    fn backoff_is_jittered_within_half_and_all_of_the_step() {
        let waits: Vec<Duration> = (0..40).map(|_| backoff(2)).collect();
        assert!(
            waits.iter().all(|w| *w >= Duration::from_millis(200) && *w <= Duration::from_millis(400)),
            "{waits:?}"
        );
        assert!(waits.iter().any(|w| *w != waits[0]), "40 waits all equal: no jitter");
    }

    /// A folder of files for one test, removed when dropped.
    struct Files(std::path::PathBuf);

    impl Files {
        fn new(name: &str, files: &[(&str, &[u8])]) -> Files {
            let dir = std::env::temp_dir().join(format!("opsdeck-request-{name}-{}", std::process::id()));
            std::fs::create_dir_all(&dir).expect("dir");
            for (file, bytes) in files {
                std::fs::write(dir.join(file), bytes).expect("write");
            }
            Files(dir)
        }
        fn path(&self, file: &str) -> String {
            self.0.join(file).to_string_lossy().into_owned()
        }
    }

    impl Drop for Files {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn mailgun_send(values: &[(&str, &str)], body: Option<&Value>) -> Result<PreparedRequest, CallError> {
        let op = Service::Mailgun.operation("messages_send").expect("in the catalog");
        let mut given = Values::new();
        for (name, value) in values {
            let joined = match given.get(*name) {
                Some(first) => crate::catalog::join_items([first.as_str(), value]).expect("joinable"),
                None => (*value).to_owned(),
            };
            given.insert((*name).to_owned(), joined);
        }
        let target = simulator_target(Service::Mailgun, Credentials::Mailgun(Secret::new("key-sandbox")), 7706);
        build(op, &given, body, &target)
    }

    fn text(name: &str, value: &str) -> MultipartField {
        MultipartField { name: name.into(), value: MultipartValue::Text(value.into()) }
    }

    #[test]
    fn repeated_values_files_and_families_become_exact_multipart_parts() {
        let files =
            Files::new("parts", &[("invoice.pdf", b"%PDF-1.7"), ("terms.txt", b"terms"), ("blob.zzq", b"\x00")]);
        let (invoice, terms, blob) = (files.path("invoice.pdf"), files.path("terms.txt"), files.path("blob.zzq"));
        let request = mailgun_send(
            &[
                ("domain", "mg.example.com"),
                ("from", "ops@mg.example.com"),
                ("to", "a@x.com"),
                ("to", "b@y.com,c@z.com"),
                ("subject", "Invoice"),
                ("attachment", &format!("@{invoice}")),
                ("attachment", &terms),
                ("inline", &blob),
                ("o:tag", "billing"),
                ("o:tag", "june"),
                ("h:X-Ticket", "42"),
                ("h:Reply-To", "help@mg.example.com"),
                ("v:order-id", "{\"n\":7}"),
            ],
            None,
        )
        .expect("valid");
        assert_eq!(request.url, "http://127.0.0.1:7706/v3/mg.example.com/messages");
        let RequestBody::Multipart(parts) = &request.body else { panic!("multipart: {:?}", request.body) };
        let file = |name: &str, file_name: &str, content_type: &str, path: &str, bytes: &'static [u8]| MultipartField {
            name: name.into(),
            value: MultipartValue::File {
                file_name: file_name.into(),
                content_type: content_type.into(),
                path: path.into(),
                bytes: Bytes::from_static(bytes),
            },
        };
        assert_eq!(
            parts,
            &[
                text("from", "ops@mg.example.com"),
                text("to", "a@x.com"),
                text("to", "b@y.com"),
                text("to", "c@z.com"),
                text("subject", "Invoice"),
                file("attachment", "invoice.pdf", "application/pdf", &invoice, b"%PDF-1.7"),
                file("attachment", "terms.txt", "text/plain", &terms, b"terms"),
                file("inline", "blob.zzq", "application/octet-stream", &blob, b"\x00"),
                text("o:tag", "billing"),
                text("o:tag", "june"),
                text("h:Reply-To", "help@mg.example.com"),
                text("h:X-Ticket", "42"),
                text("v:order-id", "{\"n\":7}"),
            ]
        );
    }

    #[test]
    fn a_body_document_may_hold_a_family_object() {
        let doc = serde_json::json!({"h:": {"X-Ticket": 42}, "v:order-id": "7", "o:tag": ["a", "b"]});
        let base = [("domain", "d.com"), ("from", "f@d.com"), ("to", "t@x.com"), ("subject", "s")];
        let request = mailgun_send(&base, Some(&doc)).expect("valid");
        let RequestBody::Multipart(parts) = &request.body else { panic!("multipart") };
        let names: Vec<(&str, &MultipartValue)> = parts.iter().map(|p| (p.name.as_str(), &p.value)).collect();
        assert_eq!(
            names[..4].iter().map(|(n, _)| *n).collect::<Vec<_>>(),
            ["h:X-Ticket", "v:order-id", "o:tag", "o:tag"]
        );
        assert_eq!(parts[0], text("h:X-Ticket", "42"));
        let bad = mailgun_send(&base, Some(&serde_json::json!({"h:": {"Bad Name": "1"}}))).unwrap_err();
        assert!(bad.to_string().contains("'Bad Name' is not a header name"), "{bad}");
    }

    #[test]
    fn an_unreadable_file_is_refused_before_anything_is_built() {
        let files = Files::new("missing", &[("a.pdf", b"a")]);
        let (present, missing) = (files.path("a.pdf"), files.path("gone.pdf"));
        let base = [("domain", "d.com"), ("from", "f@d.com"), ("to", "t@x.com"), ("subject", "s")];
        let values: Vec<(&str, &str)> =
            base.iter().copied().chain([("attachment", present.as_str()), ("attachment", &missing)]).collect();
        let error = mailgun_send(&values, None).unwrap_err();
        assert_eq!(error.exit_code(), 2);
        assert_eq!(error.to_string(), format!("invalid input: attachment: no file at {missing}"));
    }

    #[test]
    fn curl_and_httpie_copies_name_files_and_their_types_never_their_bytes() {
        let files = Files::new("copies", &[("invoice.pdf", b"SECRET-BYTES"), ("a;b.png", b"png")]);
        let (invoice, odd) = (files.path("invoice.pdf"), files.path("a;b.png"));
        let base = [("domain", "d.com"), ("from", "f@d.com"), ("to", "a@x.com"), ("to", "b@x.com"), ("subject", "s")];
        let values: Vec<(&str, &str)> = base
            .iter()
            .copied()
            .chain([("attachment", invoice.as_str()), ("attachment", &odd), ("h:X-T", "1")])
            .collect();
        let request = mailgun_send(&values, None).expect("valid");
        let credentials = Credentials::Mailgun(super::super::Secret::new("key-1"));
        let curl = to_curl(&request, &credentials).expect("curl");
        assert!(curl.contains(&format!("-F 'attachment=@{invoice};type=application/pdf'")), "{curl}");
        assert!(curl.contains(&format!("-F 'attachment=@\"{odd}\";type=image/png'")), "{curl}");
        assert!(curl.contains("-F 'to=a@x.com' -F 'to=b@x.com'") && curl.contains("-F 'h:X-T=1'"), "{curl}");
        let httpie = to_httpie(&request, &credentials).expect("httpie");
        assert!(httpie.contains(&format!("'attachment@{invoice};type=application/pdf'")), "{httpie}");
        assert!(httpie.contains("'to=a@x.com' 'to=b@x.com'"), "{httpie}");
        for copy in [&curl, &httpie] {
            assert!(!copy.contains("SECRET-BYTES") && !copy.contains("key-1"), "{copy}");
        }
    }

    #[test]
    fn avatax_include_goes_as_one_comma_separated_value() {
        let op = Service::Avatax.operation("transactions_get").expect("in the catalog");
        let values: Values = [("companyCode", "DEFAULT"), ("transactionCode", "INV-1"), ("$include", "Lines, Summary")]
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect();
        let credentials =
            Credentials::Avatax { account_id: "1100000001".into(), license_key: Secret::new("LICENSE1234") };
        let target = simulator_target(Service::Avatax, credentials, 7703);
        let request = build(op, &values, None, &target).expect("valid");
        assert!(request.url.ends_with("/transactions/INV-1?%24include=Lines%2CSummary"), "{}", request.url);
    }
}
