//! How each vendor authenticates a request (`shared/api/<vendor>.md`, section 2).

use std::time::{SystemTime, UNIX_EPOCH};

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine as _;
use bytes::Bytes;
use hmac::{Hmac, Mac};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use super::error::CallError;
use super::request::{PreparedRequest, RequestBody};
use super::{Credentials, Values};

type HmacSha256 = Hmac<Sha256>;

/// Headers whose values are secrets: redacted in `--dry-run` and never shown.
pub fn is_secret_header(name: &str) -> bool {
    ["authorization", "cb-access-sign", "cb-access-passphrase", "cb-access-key"]
        .iter()
        .any(|h| name.eq_ignore_ascii_case(h))
}

/// Adds the auth headers of the request's service.
pub fn authorize(request: &mut PreparedRequest, credentials: &Credentials) -> Result<(), CallError> {
    let header = |request: &mut PreparedRequest, name: &str, value: String| {
        request.headers.retain(|(k, _)| !k.eq_ignore_ascii_case(name));
        request.headers.push((name.to_owned(), value));
    };
    match credentials {
        Credentials::AblyKey(key) => {
            // `/time` and signed token requests need no auth, and the SDKs send none.
            if is_ably_unauthenticated(request) {
                return Ok(());
            }
            if !key.expose().contains(':') {
                return Err(CallError::Credentials("an Ably key looks like <appId>.<keyId>:<secret>".into()));
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

fn is_ably_unauthenticated(request: &PreparedRequest) -> bool {
    let path = request.path_and_query();
    if path == "/time" || path.starts_with("/time?") {
        return true;
    }
    path.contains("/requestToken")
        && serde_json::from_slice::<Value>(request.body.bytes())
            .ok()
            .is_some_and(|body| body.get("mac").is_some_and(|m| !m.is_null()))
}

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

/// Completes an Ably TokenRequest body: keyName from the path, timestamp now, and — when the
/// console holds the key and no mac was given — a nonce and the mac, so the request is signed.
pub fn ably_token_request_body(
    values: &Values,
    body: &RequestBody,
    credentials: &Credentials,
) -> Result<RequestBody, CallError> {
    let mut fields: Map<String, Value> = serde_json::from_slice(body.bytes()).unwrap_or_default();
    let key_name = values.get("keyName").cloned().unwrap_or_default();
    fields.insert("keyName".into(), Value::String(key_name.clone()));
    if !fields.contains_key("timestamp") {
        fields.insert("timestamp".into(), Value::from(unix_millis()));
    }
    if let (Credentials::AblyKey(key), false) = (credentials, fields.contains_key("mac")) {
        let (name, secret) = key.expose().split_once(':').unwrap_or_default();
        if name == key_name {
            let nonce = fields.get("nonce").and_then(Value::as_str).map_or_else(random_nonce, str::to_owned);
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
        }
    }
    Ok(RequestBody::Bytes {
        content_type: "application/json".into(),
        bytes: Bytes::from(Value::Object(fields).to_string()),
    })
}

/// 32 hex characters that are not guessable from the outside (time, process and a counter).
fn random_nonce() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let seed = format!("{:?}{}{}", SystemTime::now(), std::process::id(), COUNTER.fetch_add(1, Ordering::Relaxed));
    let digest = Sha256::digest(seed.as_bytes());
    digest.iter().take(16).map(|b| format!("{b:02x}")).collect()
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
