//! How each vendor authenticates a request (`shared/api/<vendor>.md`, section 2).

use std::time::{SystemTime, UNIX_EPOCH};

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine as _;
use bytes::Bytes;
use hmac::{Hmac, Mac};
use serde_json::{Map, Value};
use sha2::Sha256;

use super::error::CallError;
use super::request::{PreparedRequest, RequestBody};
use super::{Credentials, Secret, Values};
use crate::catalog::{Method, Service};

type HmacSha256 = Hmac<Sha256>;

/// Headers whose values are secrets: redacted in `--dry-run` and never shown.
pub fn is_secret_header(name: &str) -> bool {
    ["authorization", "cb-access-sign", "cb-access-passphrase", "cb-access-key"]
        .iter()
        .any(|h| name.eq_ignore_ascii_case(h))
}

/// Adds the auth headers of the request's service.
pub fn authorize(request: &mut PreparedRequest, credentials: &Credentials) -> Result<(), CallError> {
    if request.public {
        return Ok(());
    }
    let header = |request: &mut PreparedRequest, name: &str, value: String| {
        request.headers.retain(|(k, _)| !k.eq_ignore_ascii_case(name));
        request.headers.push((name.to_owned(), value));
    };
    match credentials {
        Credentials::AblyKey(key) => {
            // `/time` and signed token requests need no auth, and the SDKs send none.
            if is_ably_time(request) {
                return Ok(());
            }
            if !key.expose().contains(':') {
                return Err(CallError::Credentials("an Ably key looks like <appId>.<keyId>:<secret>".into()));
            }
            if is_ably_token_request(request) && sign_ably_token_request(request, key)? {
                return Ok(());
            }
            header(request, "Authorization", format!("Basic {}", BASE64.encode(key.expose())));
        }
        Credentials::AblyToken(token) => {
            header(request, "Authorization", format!("Bearer {}", BASE64.encode(token.expose())));
        }
        Credentials::Deepgram(key) => header(request, "Authorization", format!("Token {}", key.expose())),
        Credentials::Avatax { account_id, license_key } => header(
            request,
            "Authorization",
            format!("Basic {}", BASE64.encode(format!("{account_id}:{}", license_key.expose()))),
        ),
        Credentials::Taxjar(token) => header(request, "Authorization", format!("Bearer {}", token.expose())),
        Credentials::Coinbase { key, secret, passphrase } => {
            let timestamp = format!("{:.3}", unix_seconds());
            let sign = coinbase_signature(
                secret.expose(),
                &timestamp,
                request.method.as_str(),
                request.path_and_query(),
                request.body.bytes(),
            )?;
            header(request, "CB-ACCESS-KEY", key.clone());
            header(request, "CB-ACCESS-SIGN", sign);
            header(request, "CB-ACCESS-TIMESTAMP", timestamp);
            header(request, "CB-ACCESS-PASSPHRASE", passphrase.expose().to_owned());
        }
        Credentials::Mailgun(key) => {
            header(request, "Authorization", format!("Basic {}", BASE64.encode(format!("api:{}", key.expose()))));
        }
        Credentials::Easypost(key) => {
            header(request, "Authorization", format!("Basic {}", BASE64.encode(format!("{}:", key.expose()))));
        }
    }
    Ok(())
}

fn is_ably_time(request: &PreparedRequest) -> bool {
    let path = request.path_and_query();
    path == "/time" || path.starts_with("/time?")
}

fn is_ably_token_request(request: &PreparedRequest) -> bool {
    request.service == Service::Ably
        && request.method == Method::Post
        && request.path_and_query().split('?').next().is_some_and(|p| p.ends_with("/requestToken"))
}

/// The fields of a token request body (empty when it is not a JSON object).
fn token_request_fields(request: &PreparedRequest) -> Map<String, Value> {
    serde_json::from_slice(request.body.bytes()).unwrap_or_default()
}

/// Signs an Ably TokenRequest in place when the key is the one it names: a fresh nonce (unless one
/// was given) and the mac. Signing happens here, as the request is sent, rather than when it is
/// built, so a prepared request never holds a usable signature (`--dry-run` prints prepared
/// requests). Returns whether the request now carries a mac, which makes it need no other auth.
fn sign_ably_token_request(request: &mut PreparedRequest, key: &Secret) -> Result<bool, CallError> {
    let mut fields = token_request_fields(request);
    if fields.get("mac").is_some_and(|m| !m.is_null()) {
        return Ok(true);
    }
    let (name, secret) = key.expose().split_once(':').unwrap_or_default();
    let key_name = fields.get("keyName").and_then(Value::as_str).unwrap_or_default().to_owned();
    if name != key_name {
        return Ok(false);
    }
    let nonce = match fields.get("nonce").and_then(Value::as_str) {
        Some(given) => given.to_owned(),
        None => random_nonce()?,
    };
    fields.insert("nonce".into(), Value::String(nonce.clone()));
    let text = |k: &str| match fields.get(k) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) | None => String::new(),
        Some(other) => other.to_string(),
    };
    let mac = ably_token_mac(
        secret,
        [&key_name, &text("ttl"), &text("capability"), &text("clientId"), &text("timestamp"), &nonce],
    );
    fields.insert("mac".into(), Value::String(mac));
    request.body = json_object_body(fields);
    Ok(true)
}

fn json_object_body(fields: Map<String, Value>) -> RequestBody {
    RequestBody::Bytes {
        content_type: "application/json".into(),
        bytes: Bytes::from(Value::Object(fields).to_string()),
    }
}

/// What `--dry-run` prints in place of the auth: curl arguments that read each secret from its
/// environment variable when the printed command runs (double-quoted, so the shell expands them),
/// and a placeholder saying what goes there where only opsdeck could compute the value (a
/// signature). A printed command therefore works for the key's owner and for nobody else, and a
/// signed request is never printed whole: replaying it would mint a token or place an order.
pub fn dry_run_auth(request: &mut PreparedRequest, credentials: &Credentials) -> Result<Vec<String>, CallError> {
    if request.public {
        return Ok(Vec::new());
    }
    let vars = super::credential_variables(request.service);
    let var = |i: usize| vars.get(i).copied().unwrap_or("API_KEY");
    let header = |value: &str| vec!["-H".to_owned(), format!("\"{value}\"")];
    Ok(match credentials {
        Credentials::AblyKey(key) => {
            if is_ably_time(request) {
                return Ok(Vec::new());
            }
            if is_ably_token_request(request) {
                let mut fields = token_request_fields(request);
                let (name, _) = key.expose().split_once(':').unwrap_or_default();
                let signs = fields.get("mac").is_some_and(|m| !m.is_null())
                    || fields.get("keyName").and_then(Value::as_str) == Some(name);
                if signs {
                    if !fields.contains_key("nonce") {
                        fields.insert("nonce".into(), Value::String(NONCE_PLACEHOLDER.into()));
                    }
                    fields.insert("mac".into(), Value::String(format!("<{MAC_PLACEHOLDER} {}>", var(0))));
                    request.body = json_object_body(fields);
                    return Ok(Vec::new());
                }
            }
            vec!["-u".to_owned(), format!("\"${}\"", var(0))]
        }
        Credentials::AblyToken(_) => {
            header("Authorization: Bearer $(printf %s \"$ABLY_TOKEN\" | base64 | tr -d '\\n')")
        }
        Credentials::Deepgram(_) => header(&format!("Authorization: Token ${}", var(0))),
        Credentials::Avatax { .. } => vec!["-u".to_owned(), format!("\"${}:${}\"", var(0), var(1))],
        Credentials::Taxjar(_) => header(&format!("Authorization: Bearer ${}", var(0))),
        Credentials::Coinbase { .. } => {
            let mut args = header(&format!("CB-ACCESS-KEY: ${}", var(0)));
            args.extend(header(&format!("CB-ACCESS-PASSPHRASE: ${}", var(2))));
            args.extend(["-H".to_owned(), "'CB-ACCESS-TIMESTAMP: <unix time in seconds when sent>'".to_owned()]);
            args.extend([
                "-H".to_owned(),
                format!(
                    "'CB-ACCESS-SIGN: <base64 HMAC-SHA256 of timestamp+method+path+body keyed with the base64-decoded \
                     {}; a dry run does not sign>'",
                    var(1)
                ),
            ]);
            args
        }
        Credentials::Mailgun(_) => vec!["-u".to_owned(), format!("\"api:${}\"", var(0))],
        Credentials::Easypost(_) => vec!["-u".to_owned(), format!("\"${}:\"", var(0))],
    })
}

/// Shown in a dry run's token request where the nonce goes: a real one is drawn when it is sent.
pub const NONCE_PLACEHOLDER: &str = "<random nonce, drawn when sent; a dry run does not sign>";
/// The start of the placeholder shown where a token request's mac goes.
pub const MAC_PLACEHOLDER: &str = "HMAC-SHA256 of the token request, keyed with the secret of";

fn unix_seconds() -> f64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0.0, |d| d.as_secs_f64())
}

fn unix_millis() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// `base64(HMAC-SHA256(base64decode(secret), timestamp + method + path + body))`.
pub fn coinbase_signature(
    secret_b64: &str,
    timestamp: &str,
    method: &str,
    path: &str,
    body: &[u8],
) -> Result<String, CallError> {
    let key = BASE64
        .decode(secret_b64.trim())
        .map_err(|_| CallError::Credentials("the Coinbase API secret must be base64".into()))?;
    let mut mac = HmacSha256::new_from_slice(&key).map_err(|e| CallError::Credentials(e.to_string()))?;
    mac.update(timestamp.as_bytes());
    mac.update(method.as_bytes());
    mac.update(path.as_bytes());
    mac.update(body);
    Ok(BASE64.encode(mac.finalize().into_bytes()))
}

/// `base64(HMAC-SHA256(secret, signText))` of an Ably TokenRequest, where signText is each field
/// (empty when absent) followed by a newline, in the order keyName, ttl, capability, clientId,
/// timestamp, nonce.
pub fn ably_token_mac(secret: &str, fields: [&str; 6]) -> String {
    let mut sign_text = String::new();
    for field in fields {
        sign_text.push_str(field);
        sign_text.push('\n');
    }
    let mut mac = HmacSha256::new_from_slice(secret.as_bytes()).expect("HMAC accepts keys of any length");
    mac.update(sign_text.as_bytes());
    BASE64.encode(mac.finalize().into_bytes())
}

/// An Ably TokenRequest body: keyName from the path and timestamp now. The nonce and mac are
/// added by [`authorize`] as it is sent, never here.
pub fn ably_token_request_body(values: &Values, body: &RequestBody) -> RequestBody {
    let mut fields: Map<String, Value> = serde_json::from_slice(body.bytes()).unwrap_or_default();
    let key_name = values.get("keyName").cloned().unwrap_or_default();
    fields.insert("keyName".into(), Value::String(key_name));
    if !fields.contains_key("timestamp") {
        fields.insert("timestamp".into(), Value::from(unix_millis()));
    }
    json_object_body(fields)
}

/// 32 hex characters from the OS random source: a nonce derived from time and process id could be
/// guessed, and a guessed nonce lets a captured token request be predicted.
fn random_nonce() -> Result<String, CallError> {
    let mut bytes = [0u8; 16];
    getrandom::getrandom(&mut bytes)
        .map_err(|e| CallError::Credentials(format!("cannot sign the token request: no OS randomness ({e})")))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The vector in api/coinbase-exchange.md §2.
    #[test]
    fn coinbase_signing_vector() {
        let secret = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8gISIjJCUmJygpKissLS4vMDEyMzQ1Njc4OTo7PD0+Pw==";
        let body = br#"{"product_id":"BTC-USD","side":"buy","type":"limit","price":"10.00","size":"0.01"}"#;
        assert_eq!(
            coinbase_signature(secret, "1700000000.123", "POST", "/orders", body).unwrap(),
            "WdNham7bQYTxHNlnx9eEfvK9Y6YOFYla8ACrlhB7TJo="
        );
        assert_eq!(
            coinbase_signature(secret, "1700000000.123", "GET", "/fills?product_id=BTC-USD", b"").unwrap(),
            "A7f9Frme86XcptKFtmjnh7lgLFQt+LkW/1r2m3NE9o0="
        );
        assert!(matches!(coinbase_signature("not base64!", "1", "GET", "/", b""), Err(CallError::Credentials(_))));
    }

    #[test]
    fn secret_headers_are_recognised() {
        assert!(is_secret_header("authorization"));
        assert!(is_secret_header("CB-ACCESS-SIGN"));
        assert!(!is_secret_header("Accept"));
    }
}
