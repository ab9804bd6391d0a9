//! Coinbase Exchange's request signing, checked as the exchange checks it: the key, its
//! passphrase, a timestamp within 30 seconds of the server's time, and `CB-ACCESS-SIGN` =
//! base64(HMAC-SHA256(base64-decoded secret, timestamp + METHOD + path?query + body)), over the
//! exact bytes received. Each key belongs to one profile and carries permissions.

use axum::http::HeaderMap;
use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use hmac::{Hmac, Mac};
use sha2::Sha256;
use subtle::ConstantTimeEq;

use super::errors::CbError;
use super::seed::{BOT_PROFILE, DEFAULT_PROFILE};
use crate::sandbox::credentials;

/// How far a request's timestamp may be from the server's clock.
const WINDOW_SECS: f64 = 30.0;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Permission {
    View,
    Trade,
    Transfer,
}

/// The sandbox's keys: one with every permission, one that may only view, and the second
/// profile's. All share the sandbox secret and passphrase.
const KEYS: [(&str, usize, &[Permission]); 3] = [
    (credentials::COINBASE_KEY, DEFAULT_PROFILE, &[Permission::View, Permission::Trade, Permission::Transfer]),
    (credentials::COINBASE_VIEW_KEY, DEFAULT_PROFILE, &[Permission::View]),
    (credentials::COINBASE_BOT_KEY, BOT_PROFILE, &[Permission::View, Permission::Trade]),
];

/// Who signed a request.
#[derive(Clone, Copy, Debug)]
pub struct Caller {
    pub profile: usize,
    pub permissions: &'static [Permission],
}

impl Caller {
    pub fn may(&self, permission: Permission) -> Result<(), CbError> {
        if self.permissions.contains(&permission) {
            Ok(())
        } else {
            Err(CbError::forbidden())
        }
    }
}

fn header<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok()).map(str::trim).filter(|v| !v.is_empty())
}

/// `base64(HMAC-SHA256(base64-decode(secret), prehash))`; `None` when the secret is not base64.
pub fn sign(secret_b64: &str, timestamp: &str, method: &str, path_and_query: &str, body: &[u8]) -> Option<String> {
    let key = STANDARD.decode(secret_b64.trim()).ok()?;
    let mut mac = Hmac::<Sha256>::new_from_slice(&key).ok()?;
    mac.update(timestamp.as_bytes());
    mac.update(method.as_bytes());
    mac.update(path_and_query.as_bytes());
    mac.update(body);
    Some(STANDARD.encode(mac.finalize().into_bytes()))
}

/// Checks a private request's four headers against `now_s` (the server's time in seconds).
pub fn authenticate(
    headers: &HeaderMap,
    method: &str,
    path_and_query: &str,
    body: &[u8],
    now_s: f64,
) -> Result<Caller, CbError> {
    let Some(key) = header(headers, "cb-access-key") else {
        return Err(CbError::bad_request("CB-ACCESS-KEY header is required"));
    };
    let signed = Signed {
        key,
        passphrase: header(headers, "cb-access-passphrase").unwrap_or(""),
        timestamp: header(headers, "cb-access-timestamp").unwrap_or(""),
        signature: header(headers, "cb-access-sign").unwrap_or(""),
    };
    signed.check(method, path_and_query, body, now_s).map_err(|why| match why {
        NO_TIMESTAMP => CbError::bad_request("CB-ACCESS-TIMESTAMP header is required"),
        why => CbError::unauthorized(why),
    })
}

/// What [`Signed::check`] says of a signature without its timestamp.
pub const NO_TIMESTAMP: &str = "timestamp is required";

/// A signature's four parts, from a request's headers or a feed subscription's fields.
pub struct Signed<'a> {
    pub key: &'a str,
    pub passphrase: &'a str,
    pub timestamp: &'a str,
    pub signature: &'a str,
}

impl Signed<'_> {
    /// The caller, or why not in the exchange's words.
    pub fn check(&self, method: &str, path_and_query: &str, body: &[u8], now_s: f64) -> Result<Caller, &'static str> {
        let Some(&(_, profile, permissions)) = KEYS.iter().find(|(k, _, _)| *k == self.key) else {
            return Err("Invalid API Key");
        };
        if !bool::from(self.passphrase.as_bytes().ct_eq(credentials::COINBASE_PASSPHRASE.as_bytes())) {
            return Err("Invalid Passphrase");
        }
        if self.timestamp.is_empty() {
            return Err(NO_TIMESTAMP);
        }
        let fresh = self.timestamp.parse::<f64>().is_ok_and(|t| t.is_finite() && (t - now_s).abs() <= WINDOW_SECS);
        if !fresh {
            return Err("request timestamp expired");
        }
        let expected =
            sign(credentials::COINBASE_SECRET, self.timestamp, method, path_and_query, body).unwrap_or_default();
        if expected.is_empty() || !bool::from(self.signature.as_bytes().ct_eq(expected.as_bytes())) {
            return Err("invalid signature");
        }
        Ok(Caller { profile, permissions })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The test vector of api/coinbase-exchange.md §2.
    #[test]
    fn signs_the_documented_test_vector() {
        let secret = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8gISIjJCUmJygpKissLS4vMDEyMzQ1Njc4OTo7PD0+Pw==";
        let body = br#"{"product_id":"BTC-USD","side":"buy","type":"limit","price":"10.00","size":"0.01"}"#;
        assert_eq!(
            sign(secret, "1700000000.123", "POST", "/orders", body).as_deref(),
            Some("WdNham7bQYTxHNlnx9eEfvK9Y6YOFYla8ACrlhB7TJo=")
        );
        assert_eq!(
            sign(secret, "1700000000.123", "GET", "/fills?product_id=BTC-USD", b"").as_deref(),
            Some("A7f9Frme86XcptKFtmjnh7lgLFQt+LkW/1r2m3NE9o0=")
        );
    }
}
