//! Reading a request the same way in every simulator: the query (repeated and `$`-prefixed
//! keys, so AvaTax's OData `$filter` and Mailgun's repeated `to` both work), the body as JSON,
//! form or multipart within a limit, and the credentials of the `Authorization` header. Each
//! failure is a typed error the simulator turns into its vendor's error shape; nothing here
//! answers a client directly.

use std::fmt;

use axum::http::header::{self, HeaderMap};
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use percent_encoding::percent_decode_str;

/// Decoded query (or form) parameters in the order sent. Names are kept as sent after
/// decoding, so `$top` and `%24top` are the same key.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Query {
    pub pairs: Vec<(String, String)>,
}

/// A query or form field whose percent-decoded name or value is not UTF-8. Refused rather than
/// decoded with replacement characters, which would quietly turn it into another value.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("parameter {field:?} is not UTF-8 once percent-decoded")]
pub struct NotUtf8 {
    /// The field's name, with replacement characters if the name itself is the bad part.
    pub field: String,
}

impl Query {
    /// Parses `a=1&b=2` (no leading `?`); `+` is a space, as browsers and SDKs encode forms.
    pub fn parse(raw: &str) -> Result<Query, NotUtf8> {
        let pairs = raw
            .split('&')
            .filter(|p| !p.is_empty())
            .map(|p| {
                let (k, v) = p.split_once('=').unwrap_or((p, ""));
                let bad = || NotUtf8 { field: decode_component_lossy(k, true) };
                Ok((decode_component(k, true).map_err(|_| bad())?, decode_component(v, true).map_err(|_| bad())?))
            })
            .collect::<Result<_, _>>()?;
        Ok(Query { pairs })
    }

    /// The first value of `name`; an empty value counts as absent, since SDKs send `param=` for
    /// parameters they leave unset.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.pairs.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str()).filter(|v| !v.is_empty())
    }

    /// Every value of a repeated key, empty ones included, in the order sent.
    pub fn all<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.pairs.iter().filter(move |(k, _)| k == name).map(|(_, v)| v.as_str())
    }

    /// Whether the key was sent at all, even empty (`?envelope`).
    pub fn has(&self, name: &str) -> bool {
        self.pairs.iter().any(|(k, _)| k == name)
    }

    /// Keys that are not in `known`: for vendors that refuse unknown parameters.
    pub fn unknown<'a>(&'a self, known: &'a [&str]) -> impl Iterator<Item = &'a str> + 'a {
        self.pairs.iter().map(|(k, _)| k.as_str()).filter(move |k| !known.contains(k))
    }
}

/// Percent-decodes one URL component; `plus` turns `+` into a space (query strings and forms).
pub fn decode_component(raw: &str, plus: bool) -> Result<String, std::str::Utf8Error> {
    let decoded = if plus && raw.contains('+') {
        percent_decode_str(&raw.replace('+', " ")).decode_utf8()?.into_owned()
    } else {
        percent_decode_str(raw).decode_utf8()?.into_owned()
    };
    Ok(decoded)
}

/// [`decode_component`] with replacement characters, only for naming a bad field in a message.
fn decode_component_lossy(raw: &str, plus: bool) -> String {
    percent_decode_str(&if plus { raw.replace('+', " ") } else { raw.to_owned() }).decode_utf8_lossy().into_owned()
}

/// A request body, decoded per its `Content-Type`.
#[derive(Clone, Debug, PartialEq)]
pub enum Body {
    /// Nothing but whitespace was sent.
    Empty,
    Json(serde_json::Value),
    Form(Query),
    Multipart(Vec<Part>),
}

/// One part of a `multipart/form-data` body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Part {
    pub name: String,
    /// Set for file uploads (Mailgun attachments).
    pub filename: Option<String>,
    pub content_type: Option<String>,
    pub data: Vec<u8>,
}

impl Part {
    /// The part as text, for plain form fields; `None` if it is not UTF-8.
    pub fn text(&self) -> Option<&str> {
        std::str::from_utf8(&self.data).ok()
    }
}

/// Why a body could not be read. Each vendor maps these to its own error code and status.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BodyError {
    #[error("the request body is {size} bytes; the limit is {limit}")]
    TooLarge { size: usize, limit: usize },
    #[error("the request body is not valid {kind}: {detail}")]
    Malformed { kind: &'static str, detail: String },
    #[error("the request body is not UTF-8: {0}")]
    NotUtf8(String),
    #[error("unsupported Content-Type {0:?}; send JSON, form or multipart data")]
    UnsupportedType(String),
}

impl BodyError {
    /// The status nearly every vendor uses for this failure (413, 415 or 400).
    pub fn status(&self) -> u16 {
        match self {
            BodyError::TooLarge { .. } => 413,
            BodyError::UnsupportedType(_) => 415,
            BodyError::Malformed { .. } | BodyError::NotUtf8(_) => 400,
        }
    }
}

/// Nesting allowed in JSON bodies, so a hostile body cannot exhaust a worker's stack
/// (serde_json stops at 128 itself; this keeps our own walks shallower).
const MAX_JSON_DEPTH: usize = 64;

/// Decodes `body` per the `Content-Type` of `headers`, refusing it above `limit` bytes (the
/// vendor's own limit; the listener has already refused anything above the sandbox's). A body
/// without a `Content-Type` is read as JSON, which is what SDKs that forget the header send.
pub fn read_body(headers: &HeaderMap, body: &[u8], limit: usize) -> Result<Body, BodyError> {
    if body.len() > limit {
        return Err(BodyError::TooLarge { size: body.len(), limit });
    }
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(Body::Empty);
    }
    let content_type = content_type(headers);
    let essence = content_type.split(';').next().unwrap_or("").trim().to_owned();
    if essence == "application/x-www-form-urlencoded" {
        let text = std::str::from_utf8(body).map_err(|e| BodyError::NotUtf8(e.to_string()))?;
        return Query::parse(text.trim()).map(Body::Form).map_err(|e| BodyError::NotUtf8(e.to_string()));
    }
    if essence == "multipart/form-data" {
        // From the header as sent: boundaries are case-sensitive.
        let raw = headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("");
        let boundary = parameter(raw, "boundary").ok_or_else(|| BodyError::Malformed {
            kind: "multipart",
            detail: "the Content-Type has no boundary".to_owned(),
        })?;
        return parse_multipart(body, &boundary).map(Body::Multipart);
    }
    if essence.is_empty() || essence == "application/json" || essence.ends_with("+json") {
        let text = std::str::from_utf8(body).map_err(|e| BodyError::NotUtf8(e.to_string()))?;
        let value: serde_json::Value =
            serde_json::from_str(text).map_err(|e| BodyError::Malformed { kind: "JSON", detail: e.to_string() })?;
        if depth(&value) > MAX_JSON_DEPTH {
            return Err(BodyError::Malformed {
                kind: "JSON",
                detail: format!("nested deeper than {MAX_JSON_DEPTH} levels"),
            });
        }
        return Ok(Body::Json(value));
    }
    Err(BodyError::UnsupportedType(essence))
}

/// The `Content-Type`, lower-cased, or empty.
pub fn content_type(headers: &HeaderMap) -> String {
    headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("").trim().to_ascii_lowercase()
}

fn depth(value: &serde_json::Value) -> usize {
    match value {
        serde_json::Value::Array(items) => 1 + items.iter().map(depth).max().unwrap_or(0),
        serde_json::Value::Object(map) => 1 + map.values().map(depth).max().unwrap_or(0),
        _ => 0,
    }
}

/// A `; name=value` parameter of a header value, unquoted. A quoted value may hold `;` and
/// backslash-escaped quotes (RFC 7578 §4.2, RFC 9110 §5.6.4), as in `filename="a;b \"c\".txt"`.
fn parameter(value: &str, name: &str) -> Option<String> {
    let mut rest = value.split_once(';')?.1;
    loop {
        let (key, after_key) = rest.split_once('=')?;
        // A key is what follows the last `;` before the `=` (`; flag; name=x`).
        let key = key.rsplit(';').next().unwrap_or(key).trim();
        let after_key = after_key.trim_start();
        let (found, after) = match after_key.strip_prefix('"') {
            Some(quoted) => {
                let mut out = String::new();
                let mut chars = quoted.char_indices();
                let mut end = quoted.len();
                while let Some((i, c)) = chars.next() {
                    match c {
                        '\\' => out.extend(chars.next().map(|(_, c)| c)),
                        '"' => {
                            end = i + 1;
                            break;
                        }
                        c => out.push(c),
                    }
                }
                (out, &quoted[end..])
            }
            None => {
                let (v, after) = after_key.split_once(';').unwrap_or((after_key, ""));
                (v.trim().to_owned(), after)
            }
        };
        if key.eq_ignore_ascii_case(name) {
            return Some(found);
        }
        rest = after.split_once(';')?.1;
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    memchr::memmem::find(haystack, needle)
}

// Why this multipart reader is hand-written and not `multer` (issue 19, item 15): it is one
// linear pass (each search starts where the last one ended), has no recursion, and held under
// `tests/sandbox_fuzz.rs` (mutated Mailgun sends and messages.mime uploads, 20 000 parts, garbled
// boundaries, a part header that never ends). It is twice as fast as `multer` fed one chunk
// (`benches/parsers.rs`, medians of two runs: a Mailgun send with a 100 KB attachment 9.6 and
// 10.0 us against 20.1 and 19.0 us; 1000 small parts 0.49 ms against 0.97 and 0.90 ms), and
// `multer` is async over a stream where our callers are sync, and would bring `encoding_rs`,
// `spin` and `mime` for a charset conversion we never ask for. Its strictness is a multipart parser's: a boundary of 1 to 70
// characters, CRLF after each delimiter, a blank line after each part's headers, a closing
// delimiter; a part without a `name` is left out (Mailgun ignores it, as Rack, Go's
// `ParseMultipartForm` and Python's form parsers do); quoted parameters are read as quoted strings.

/// The parts of a `multipart/form-data` body (RFC 7578).
fn parse_multipart(body: &[u8], boundary: &str) -> Result<Vec<Part>, BodyError> {
    let bad = |detail: &str| BodyError::Malformed { kind: "multipart", detail: detail.to_owned() };
    if boundary.is_empty() || boundary.len() > 70 {
        return Err(bad("the boundary must be 1 to 70 characters"));
    }
    let delimiter = format!("--{boundary}");
    let start = find(body, delimiter.as_bytes()).ok_or_else(|| bad("the body does not contain the boundary"))?;
    let mut rest = &body[start + delimiter.len()..];
    let separator = format!("\r\n--{boundary}");
    let mut parts = Vec::new();
    loop {
        if rest.starts_with(b"--") {
            return Ok(parts);
        }
        rest = rest.strip_prefix(b"\r\n").ok_or_else(|| bad("a boundary is not followed by a line break"))?;
        let head_end = find(rest, b"\r\n\r\n").ok_or_else(|| bad("a part has no blank line after its headers"))?;
        let head = std::str::from_utf8(&rest[..head_end]).map_err(|_| bad("part headers are not UTF-8"))?;
        let after_head = &rest[head_end + 4..];
        let data_end = find(after_head, separator.as_bytes()).ok_or_else(|| bad("the closing boundary is missing"))?;
        // A part without a name is passed over, as Mailgun and most form parsers do.
        if let Some(part) = part(head, after_head[..data_end].to_vec()) {
            parts.push(part);
        }
        rest = &after_head[data_end + separator.len()..];
    }
}

/// One part, or None when its Content-Disposition names no field.
fn part(head: &str, data: Vec<u8>) -> Option<Part> {
    let mut name = None;
    let mut filename = None;
    let mut content_type = None;
    for line in head.split("\r\n") {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        if key.trim().eq_ignore_ascii_case("content-disposition") {
            name = parameter(value, "name");
            filename = parameter(value, "filename");
        } else if key.trim().eq_ignore_ascii_case("content-type") {
            content_type = Some(value.trim().to_owned());
        }
    }
    Some(Part { name: name?, filename, content_type, data })
}

/// The credentials of an `Authorization` header.
#[derive(Clone, PartialEq, Eq)]
pub enum Credentials {
    /// `Basic base64(user:password)`: Ably keys, AvaTax, Mailgun, EasyPost.
    Basic { user: String, password: String },
    /// `Bearer TOKEN`: TaxJar, Ably tokens.
    Bearer(String),
    /// `Token TOKEN` or `Token token="TOKEN"`: Deepgram, TaxJar's older form.
    Token(String),
}

/// Never prints a secret, so credentials can sit in structs that are logged.
impl fmt::Debug for Credentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Credentials::Basic { user, .. } => write!(f, "Basic({user}:[redacted])"),
            Credentials::Bearer(_) => f.write_str("Bearer([redacted])"),
            Credentials::Token(_) => f.write_str("Token([redacted])"),
        }
    }
}

/// Why an `Authorization` header could not be read; vendors answer 401 in their own shape.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AuthError {
    #[error("the Authorization header is not valid text")]
    NotText,
    #[error("the Authorization scheme {0:?} is not supported")]
    UnknownScheme(String),
    #[error("the Basic credentials are not base64 of user:password")]
    BadBasic,
    #[error("the Authorization header has an empty {0} token")]
    Empty(&'static str),
}

/// The credentials sent, `Ok(None)` when there is no `Authorization` header.
pub fn credentials(headers: &HeaderMap) -> Result<Option<Credentials>, AuthError> {
    let Some(value) = headers.get(header::AUTHORIZATION) else {
        return Ok(None);
    };
    let text = value.to_str().map_err(|_| AuthError::NotText)?.trim();
    let (scheme, rest) = text.split_once(' ').unwrap_or((text, ""));
    let rest = rest.trim();
    match scheme.to_ascii_lowercase().as_str() {
        "basic" => {
            let decoded = STANDARD.decode(rest).map_err(|_| AuthError::BadBasic)?;
            let decoded = String::from_utf8(decoded).map_err(|_| AuthError::BadBasic)?;
            let (user, password) = decoded.split_once(':').ok_or(AuthError::BadBasic)?;
            Ok(Some(Credentials::Basic { user: user.to_owned(), password: password.to_owned() }))
        }
        "bearer" if rest.is_empty() => Err(AuthError::Empty("Bearer")),
        "bearer" => Ok(Some(Credentials::Bearer(rest.to_owned()))),
        "token" => {
            let token = rest.strip_prefix("token=").map_or(rest, |t| t.trim_matches('"'));
            if token.is_empty() {
                return Err(AuthError::Empty("Token"));
            }
            Ok(Some(Credentials::Token(token.to_owned())))
        }
        _ => Err(AuthError::UnknownScheme(scheme.to_owned())),
    }
}

#[cfg(test)]
mod tests {
    use axum::http::HeaderValue;

    use super::*;

    fn headers(pairs: &[(header::HeaderName, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (k, v) in pairs {
            map.insert(k.clone(), HeaderValue::from_str(v).expect("valid header"));
        }
        map
    }

    #[test]
    fn query_keeps_repeated_and_dollar_keys() {
        let q = Query::parse("%24filter=status+eq+%27Committed%27&$top=2&to=a&to=b&empty=").expect("UTF-8");
        assert_eq!(q.get("$filter"), Some("status eq 'Committed'"));
        assert_eq!(q.get("$top"), Some("2"));
        assert_eq!(q.all("to").collect::<Vec<_>>(), ["a", "b"]);
        assert_eq!(q.get("empty"), None);
        assert!(q.has("empty"));
        assert_eq!(q.unknown(&["$filter", "$top", "to"]).collect::<Vec<_>>(), ["empty"]);
        assert_eq!(Query::parse("name=%FF").map(|_| ()), Err(NotUtf8 { field: "name".into() }));
    }

    #[test]
    fn bodies_by_content_type() {
        let json = headers(&[(header::CONTENT_TYPE, "application/json; charset=utf-8")]);
        assert_eq!(read_body(&json, br#"{"a":1}"#, 100), Ok(Body::Json(serde_json::json!({"a": 1}))));
        assert_eq!(read_body(&json, b"  ", 100), Ok(Body::Empty));
        assert!(matches!(read_body(&json, b"{", 100), Err(BodyError::Malformed { kind: "JSON", .. })));
        assert!(matches!(read_body(&json, b"\"\xff\"", 100), Err(BodyError::NotUtf8(_))));
        assert_eq!(read_body(&json, &[b' '; 101], 100), Err(BodyError::TooLarge { size: 101, limit: 100 }));
        let deep = format!("{}{}", "[".repeat(80), "]".repeat(80));
        assert!(matches!(read_body(&json, deep.as_bytes(), 1000), Err(BodyError::Malformed { .. })));

        let form = headers(&[(header::CONTENT_TYPE, "application/x-www-form-urlencoded")]);
        let Ok(Body::Form(q)) = read_body(&form, b"to=a&to=b&subject=hi+there", 100) else {
            panic!("form expected");
        };
        assert_eq!(q.all("to").count(), 2);
        assert_eq!(q.get("subject"), Some("hi there"));

        let xml = headers(&[(header::CONTENT_TYPE, "text/xml")]);
        assert_eq!(read_body(&xml, b"<a/>", 100), Err(BodyError::UnsupportedType("text/xml".into())));
        assert_eq!(read_body(&xml, b"<a/>", 100).map_err(|e| e.status()), Err(415));
    }

    #[test]
    fn multipart_fields_and_files() {
        let body = b"--XyZ\r\nContent-Disposition: form-data; name=\"to\"\r\n\r\na@example.com\r\n--XyZ\r\n\
Content-Disposition: form-data; name=\"attachment\"; filename=\"a.bin\"\r\nContent-Type: application/octet-stream\r\n\r\n\x00\xff\r\n--XyZ--\r\n";
        let h = headers(&[(header::CONTENT_TYPE, "multipart/form-data; boundary=XyZ")]);
        let parts = match read_body(&h, body, 1000) {
            Ok(Body::Multipart(parts)) => parts,
            other => panic!("multipart expected, not {other:?}"),
        };
        assert_eq!(parts.len(), 2);
        assert_eq!((parts[0].name.as_str(), parts[0].text()), ("to", Some("a@example.com")));
        assert_eq!(parts[1].filename.as_deref(), Some("a.bin"));
        assert_eq!(parts[1].data, [0, 255]);
        let no_boundary = headers(&[(header::CONTENT_TYPE, "multipart/form-data")]);
        assert!(matches!(read_body(&no_boundary, body, 1000), Err(BodyError::Malformed { .. })));
        assert!(matches!(read_body(&h, b"--XyZ\r\nno end", 1000), Err(BodyError::Malformed { .. })));
        // A quoted `;` and escaped quotes stay in the name, as every multipart parser reads them.
        assert_eq!(parameter(r#"form-data; name="a;b"; filename="x \"y\".txt""#, "name").as_deref(), Some("a;b"));
        assert_eq!(
            parameter(r#"form-data; name="a;b"; filename="x \"y\".txt""#, "filename").as_deref(),
            Some("x \"y\".txt")
        );
        assert_eq!(parameter("form-data; flag; NAME = to ;x=1", "name").as_deref(), Some("to"));
        assert_eq!(
            parameter("multipart/form-data; boundary=\"unterminated", "boundary").as_deref(),
            Some("unterminated")
        );
        assert_eq!(parameter("form-data; filename=a", "name"), None);
    }

    #[test]
    fn multipart_part_without_a_name_is_left_out() {
        let body = b"--B\r\nContent-Disposition: form-data; name=\"to\"\r\n\r\na@example.com\r\n--B\r\n\
Content-Disposition: form-data\r\n\r\nstray\r\n--B\r\nContent-Type: text/plain\r\n\r\nno header\r\n--B\r\n\
Content-Disposition: form-data; filename=\"x.txt\"\r\n\r\nfile\r\n--B\r\n\
Content-Disposition: form-data; name=\"subject\"\r\n\r\nhi\r\n--B--\r\n";
        let h = headers(&[(header::CONTENT_TYPE, "multipart/form-data; boundary=B")]);
        let parts = match read_body(&h, body, 1000) {
            Ok(Body::Multipart(parts)) => parts,
            other => panic!("multipart expected, not {other:?}"),
        };
        let names: Vec<(&str, Option<&str>)> = parts.iter().map(|p| (p.name.as_str(), p.text())).collect();
        assert_eq!(names, [("to", Some("a@example.com")), ("subject", Some("hi"))]);
        // Only nameless parts go: a body that is not multipart at all is still refused.
        assert!(matches!(
            read_body(&h, b"--B\r\nContent-Disposition: form-data\r\n\r\nx", 1000),
            Err(BodyError::Malformed { .. })
        ));
    }

    #[test]
    fn authorization_schemes() {
        let basic = headers(&[(header::AUTHORIZATION, "Basic dXNlcjpwYTpzcw==")]);
        assert_eq!(credentials(&basic), Ok(Some(Credentials::Basic { user: "user".into(), password: "pa:ss".into() })));
        let bearer = headers(&[(header::AUTHORIZATION, "Bearer abc")]);
        assert_eq!(credentials(&bearer), Ok(Some(Credentials::Bearer("abc".into()))));
        let token = headers(&[(header::AUTHORIZATION, "Token token=\"abc\"")]);
        assert_eq!(credentials(&token), Ok(Some(Credentials::Token("abc".into()))));
        let plain_token = headers(&[(header::AUTHORIZATION, "token abc")]);
        assert_eq!(credentials(&plain_token), Ok(Some(Credentials::Token("abc".into()))));
        assert_eq!(credentials(&HeaderMap::new()), Ok(None));
        let bad = headers(&[(header::AUTHORIZATION, "Basic !!!")]);
        assert_eq!(credentials(&bad), Err(AuthError::BadBasic));
        let other = headers(&[(header::AUTHORIZATION, "Digest x")]);
        assert_eq!(credentials(&other), Err(AuthError::UnknownScheme("Digest".into())));
        assert_eq!(format!("{:?}", credentials(&basic)), "Ok(Some(Basic(user:[redacted])))");
    }
}
