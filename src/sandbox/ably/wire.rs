//! Wire formats of the simulator: a value type that survives both JSON and MessagePack (binary
//! included), request-body decoding by `Content-Type`, response encoding by `Accept`, query-string
//! handling and Ably's error shape.

use std::borrow::Cow;
use std::fmt;

use axum::http::header::{self, HeaderMap, HeaderName, HeaderValue};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig, STANDARD};
use base64::engine::DecodePaddingMode;
use base64::Engine;
use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};

use crate::sandbox::request::Query;

/// Base64 that accepts input with or without padding: clients differ in what they send.
pub(super) const LENIENT_B64: GeneralPurpose = GeneralPurpose::new(
    &base64::alphabet::STANDARD,
    GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
);

/// Map keys: the simulator's own keys are static, decoded ones are owned; `Cow` avoids an
/// allocation per field when building responses.
pub(super) type Key = Cow<'static, str>;

/// A JSON/MessagePack value that can also hold raw bytes, so binary message data published over
/// MessagePack comes back byte for byte.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Val {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    Bin(Vec<u8>),
    Arr(Vec<Val>),
    Map(Vec<(Key, Val)>),
}

impl Val {
    /// A map from static keys, the way every response record is built.
    pub(super) fn map<const N: usize>(fields: [(&'static str, Val); N]) -> Val {
        Val::Map(fields.into_iter().map(|(k, v)| (Cow::Borrowed(k), v)).collect())
    }

    pub(super) fn str(s: impl Into<String>) -> Val {
        Val::Str(s.into())
    }

    /// A field of a map; `None` for absent keys, `null` values and non-maps alike, since Ably
    /// treats a `null` field as absent (ably-python sends `null` for unset token fields).
    pub(super) fn field(&self, key: &str) -> Option<&Val> {
        match self {
            Val::Map(fields) => {
                fields.iter().find(|(k, _)| k == key).map(|(_, v)| v).filter(|v| !matches!(v, Val::Null))
            }
            _ => None,
        }
    }

    pub(super) fn as_str(&self) -> Option<&str> {
        match self {
            Val::Str(s) => Some(s),
            _ => None,
        }
    }

    /// Integers, including floats with an integral value (JavaScript numbers) and numeric
    /// strings (form-encoded bodies carry everything as text).
    pub(super) fn as_i64(&self) -> Option<i64> {
        match self {
            Val::Int(n) => Some(*n),
            Val::Float(f) if f.fract() == 0.0 && f.abs() < 9.0e15 => Some(*f as i64),
            Val::Str(s) => s.trim().parse().ok(),
            _ => None,
        }
    }

    pub(super) fn is_map(&self) -> bool {
        matches!(self, Val::Map(_))
    }

    /// Adds a field to a map (no-op on other values); used for optional fields.
    pub(super) fn push(&mut self, key: &'static str, value: Val) {
        if let Val::Map(fields) = self {
            fields.push((Cow::Borrowed(key), value));
        }
    }

    /// Rough encoded size in bytes, for the message-size limit and the `data` counters of stats.
    pub(super) fn approx_size(&self) -> usize {
        match self {
            Val::Null | Val::Bool(_) => 4,
            Val::Int(_) | Val::Float(_) => 8,
            Val::Str(s) => s.len(),
            Val::Bin(b) => b.len(),
            Val::Arr(items) => 2 + items.iter().map(|v| v.approx_size() + 1).sum::<usize>(),
            Val::Map(fields) => 2 + fields.iter().map(|(k, v)| k.len() + 4 + v.approx_size()).sum::<usize>(),
        }
    }
}

impl Serialize for Val {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Val::Null => serializer.serialize_unit(),
            Val::Bool(b) => serializer.serialize_bool(*b),
            Val::Int(n) => serializer.serialize_i64(*n),
            Val::Float(f) => serializer.serialize_f64(*f),
            Val::Str(s) => serializer.serialize_str(s),
            // JSON has no bytes: stray binary (e.g. inside extras) goes out as base64 text.
            Val::Bin(b) if serializer.is_human_readable() => serializer.serialize_str(&STANDARD.encode(b)),
            Val::Bin(b) => serializer.serialize_bytes(b),
            Val::Arr(items) => {
                let mut seq = serializer.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(item)?;
                }
                seq.end()
            }
            Val::Map(fields) => {
                let mut map = serializer.serialize_map(Some(fields.len()))?;
                for (k, v) in fields {
                    map.serialize_entry(k.as_ref(), v)?;
                }
                map.end()
            }
        }
    }
}

struct ValVisitor;

impl<'de> Visitor<'de> for ValVisitor {
    type Value = Val;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON or MessagePack value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Val, E> {
        Ok(Val::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Val, E> {
        Ok(Val::Int(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Val, E> {
        Ok(i64::try_from(v).map_or(Val::Float(v as f64), Val::Int))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Val, E> {
        Ok(Val::Float(v))
    }
    fn visit_str<E>(self, v: &str) -> Result<Val, E> {
        Ok(Val::Str(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Val, E> {
        Ok(Val::Str(v))
    }
    fn visit_bytes<E>(self, v: &[u8]) -> Result<Val, E> {
        Ok(Val::Bin(v.to_vec()))
    }
    fn visit_byte_buf<E>(self, v: Vec<u8>) -> Result<Val, E> {
        Ok(Val::Bin(v))
    }
    fn visit_none<E>(self) -> Result<Val, E> {
        Ok(Val::Null)
    }
    fn visit_unit<E>(self) -> Result<Val, E> {
        Ok(Val::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Val, D::Error> {
        Val::deserialize(d)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Val, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1024));
        while let Some(item) = seq.next_element::<Val>()? {
            items.push(item);
        }
        Ok(Val::Arr(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Val, A::Error> {
        let mut fields = Vec::with_capacity(map.size_hint().unwrap_or(0).min(64));
        while let Some((k, v)) = map.next_entry::<Val, Val>()? {
            let key = match k {
                Val::Str(s) => s,
                Val::Int(n) => n.to_string(),
                Val::Bin(b) => String::from_utf8(b).map_err(|_| de::Error::custom("map keys must be text"))?,
                _ => return Err(de::Error::custom("map keys must be text")),
            };
            fields.push((Cow::Owned(key), v));
        }
        Ok(Val::Map(fields))
    }
}

impl<'de> Deserialize<'de> for Val {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Val, D::Error> {
        d.deserialize_any(ValVisitor)
    }
}

/// Response (and request body) encoding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Format {
    Json,
    Msgpack,
}

impl Format {
    pub(super) fn content_type(self) -> &'static str {
        match self {
            Format::Json => "application/json",
            Format::Msgpack => "application/x-msgpack",
        }
    }

    /// The answer format: `Accept` wins, then `format=`, then JSON (api/ably.md §1).
    pub(super) fn negotiate(headers: &HeaderMap, query: &Query) -> Format {
        let accept = headers.get(header::ACCEPT).and_then(|v| v.to_str().ok()).unwrap_or("");
        if accept.contains("msgpack") {
            Format::Msgpack
        } else if accept.contains("json") {
            Format::Json
        } else if query.get("format") == Some("msgpack") {
            Format::Msgpack
        } else {
            Format::Json
        }
    }

    pub(super) fn encode(self, value: &Val) -> Vec<u8> {
        match self {
            Format::Json => serde_json::to_vec(value).unwrap_or_else(|_| b"null".to_vec()),
            Format::Msgpack => rmp_serde::to_vec(value).unwrap_or_else(|_| vec![0xc0]),
        }
    }
}

/// Nesting allowed in request bodies; deeper MessagePack could exhaust a worker's stack.
const MAX_DEPTH: usize = 100;

pub(super) fn from_msgpack(body: &[u8]) -> Result<Val, rmp_serde::decode::Error> {
    let mut de = rmp_serde::Deserializer::from_read_ref(body);
    de.set_max_depth(MAX_DEPTH);
    Val::deserialize(&mut de)
}

/// Decodes a request body per its `Content-Type`; an empty body is `null`.
pub(super) fn decode_body(headers: &HeaderMap, body: &[u8]) -> Result<Val, AblyError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(Val::Null);
    }
    let content_type =
        headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("").to_ascii_lowercase();
    let bad = |what: &str, e: &dyn fmt::Display| {
        AblyError::new(400, 40001, format!("Invalid request body: unparseable {what}: {e}"))
    };
    if content_type.contains("msgpack") {
        from_msgpack(body).map_err(|e| bad("MessagePack", &e))
    } else if content_type.starts_with("application/x-www-form-urlencoded") {
        let text = std::str::from_utf8(body).map_err(|e| bad("form", &e))?;
        let form = Query::parse(text).map_err(|e| {
            AblyError::new(400, 40001, format!("Invalid request body: form field {:?} is not UTF-8", e.field))
        })?;
        let fields = form.pairs.into_iter().map(|(k, v)| (Cow::Owned(k), Val::Str(v))).collect();
        Ok(Val::Map(fields))
    } else if content_type.contains("json") || content_type.is_empty() {
        match serde_json::from_slice(body) {
            Ok(v) => Ok(v),
            // No declared type: a MessagePack body is the only other thing an SDK sends.
            Err(e) if content_type.is_empty() => from_msgpack(body).map_err(|_| bad("JSON", &e)),
            Err(e) => Err(bad("JSON", &e)),
        }
    } else {
        Err(AblyError::new(
            415,
            41500,
            format!("Unsupported Content-Type {content_type}: send JSON, MessagePack or form data"),
        ))
    }
}

/// The query of a request, or the error answering it: a parameter that is not UTF-8 is an
/// invalid parameter value (40003).
pub(super) fn parse_query(raw: &str) -> Result<Query, AblyError> {
    Query::parse(raw).map_err(|e| {
        AblyError::bad_param(format!("Invalid value for parameter '{}': not UTF-8 once percent-decoded", e.field))
    })
}

/// A query filter: an absent filter lets everything through.
pub(super) fn passes(filter: Option<&str>, value: Option<&str>) -> bool {
    filter.is_none() || filter == value
}

/// An Ably error: HTTP status, Ably code and message, rendered as `{"error": {...}}`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct AblyError {
    pub(super) status: u16,
    pub(super) code: u32,
    pub(super) message: String,
}

impl AblyError {
    pub(super) fn new(status: u16, code: u32, message: impl Into<String>) -> AblyError {
        AblyError { status, code, message: message.into() }
    }

    /// 400/40003, the code Ably uses for an invalid parameter value.
    pub(super) fn bad_param(message: impl Into<String>) -> AblyError {
        AblyError::new(400, 40003, message)
    }

    /// 401/40101 with the message the real service uses.
    pub(super) fn invalid_credentials() -> AblyError {
        AblyError::new(401, 40101, "Invalid credentials")
    }

    pub(super) fn not_found(message: impl Into<String>) -> AblyError {
        AblyError::new(404, 40400, message)
    }

    pub(super) fn body(&self) -> Val {
        Val::map([(
            "error",
            Val::map([
                ("message", Val::str(self.message.clone())),
                ("code", Val::Int(i64::from(self.code))),
                ("statusCode", Val::Int(i64::from(self.status))),
                ("href", Val::str(format!("https://help.ably.io/error/{}", self.code))),
            ]),
        )])
    }

    /// The `X-Ably-ErrorCode`/`X-Ably-ErrorMessage` pair the real service repeats in headers.
    pub(super) fn add_headers(&self, headers: &mut HeaderMap) {
        headers.insert(HeaderName::from_static("x-ably-errorcode"), HeaderValue::from(self.code));
        headers
            .insert(HeaderName::from_static("x-ably-errormessage"), crate::sandbox::errors::header_text(&self.message));
    }
}

/// Ably's shape for the platform: faults and refusals answer like Ably does.
impl crate::sandbox::errors::VendorError for AblyError {
    fn status(&self) -> StatusCode {
        StatusCode::from_u16(self.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
    }

    fn body(&self) -> serde_json::Value {
        serde_json::to_value(AblyError::body(self)).unwrap_or(serde_json::Value::Null)
    }

    fn add_headers(&self, headers: &mut HeaderMap) {
        AblyError::add_headers(self, headers);
    }

    /// Ably's codes are the status times 100 plus a detail; the bare status gets detail 0,
    /// except 429, which Ably always answers as 42910 (rate limit exceeded).
    fn for_status(status: StatusCode, message: &str) -> AblyError {
        let code = match status.as_u16() {
            429 => 42910,
            other => u32::from(other) * 100,
        };
        AblyError::new(status.as_u16(), code, message)
    }
}

/// A finished response body in the negotiated format.
pub(super) fn body_response(status: StatusCode, format: Format, value: &Val) -> Response {
    let mut response = (status, format.encode(value)).into_response();
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static(format.content_type()));
    response
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::paging::encode_query;
    use crate::sandbox::request::NotUtf8;

    #[test]
    fn binary_survives_msgpack_and_becomes_base64_in_json() {
        let v = Val::map([("data", Val::Bin(vec![0, 159, 255]))]);
        let packed = Format::Msgpack.encode(&v);
        let back: Val = rmp_serde::from_slice(&packed).expect("decodes");
        assert_eq!(back, v);
        let json = String::from_utf8(Format::Json.encode(&v)).expect("utf8");
        assert_eq!(json, r#"{"data":"AJ//"}"#);
    }

    #[test]
    fn query_decoding_and_link_encoding() {
        let q = Query::parse("prefix=demo%3Achan&by=&x=a+b").expect("UTF-8");
        assert_eq!(q.get("prefix"), Some("demo:chan"));
        assert_eq!(q.get("by"), None);
        assert_eq!(q.get("x"), Some("a b"));
        assert_eq!(encode_query(&[("c", "a,b:c".into())]), "c=a%2Cb%3Ac");
        assert_eq!(Query::parse("ok=1&caf%E9=2").map(|_| ()), Err(NotUtf8 { field: "caf\u{fffd}".into() }));
        assert_eq!(Query::parse("name=%FF%FE").map(|_| ()), Err(NotUtf8 { field: "name".into() }));
    }
}
