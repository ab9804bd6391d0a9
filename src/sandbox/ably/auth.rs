//! Authentication: Basic with the sandbox key, Bearer tokens minted here, and the token request
//! flow (signed requests verified by their mac, timestamp window and nonce).

use std::collections::HashMap;

use axum::http::header;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use hmac::{Hmac, Mac};
use sha2::Sha256;
use subtle::ConstantTimeEq;

use super::capability::{Caller, Capability};
use super::wire::{AblyError, Val, LENIENT_B64};
use super::{Call, Reply};
use crate::sandbox::credentials::{ABLY_KEY_NAME, ABLY_KEY_SECRET};

type HmacSha256 = Hmac<Sha256>;

/// Tokens live at most a day, like Ably's.
const MAX_TTL: i64 = 86_400_000;
const DEFAULT_TTL: i64 = 3_600_000;
/// Signed token requests must be this close to server time.
const TIMESTAMP_WINDOW: i64 = 120_000;
/// Tokens start with this so they are recognisable; the rest is payload and mac.
const TOKEN_PREFIX: &str = "opsdeck.";
/// Bytes of the HMAC-SHA256 kept in a token: 144 bits, plenty against guessing, and short
/// enough to keep tokens well under Ably's 343-byte limit.
const TOKEN_TAG_LEN: usize = 18;

fn key_mac(data: &[u8]) -> Option<HmacSha256> {
    let mut mac = HmacSha256::new_from_slice(ABLY_KEY_SECRET.as_bytes()).ok()?;
    mac.update(data);
    Some(mac)
}

/// Checks the request's credentials: `Authorization` (Basic or Bearer), else `?key=` or
/// `?access_token=`.
pub(super) fn authenticate(call: &Call) -> Result<Caller, AblyError> {
    if let Some(value) = call.headers.get(header::AUTHORIZATION) {
        let value =
            value.to_str().map_err(|_| AblyError::new(400, 40005, "Invalid credential in request: not text"))?.trim();
        let (scheme, rest) = value.split_once(' ').unwrap_or((value, ""));
        let rest = rest.trim();
        if scheme.eq_ignore_ascii_case("basic") {
            let decoded = LENIENT_B64
                .decode(rest)
                .ok()
                .and_then(|b| String::from_utf8(b).ok())
                .ok_or_else(|| AblyError::new(400, 40005, "Invalid key in request: Basic value is not base64"))?;
            check_key(&decoded)?;
            return key_caller(call);
        }
        if scheme.eq_ignore_ascii_case("bearer") {
            // SDKs send base64(token); a raw token is accepted too.
            let token = LENIENT_B64
                .decode(rest)
                .ok()
                .and_then(|b| String::from_utf8(b).ok())
                .filter(|t| t.starts_with(TOKEN_PREFIX))
                .unwrap_or_else(|| rest.to_owned());
            return verify_token(&token, call.now);
        }
        return Err(AblyError::new(
            400,
            40005,
            "Invalid credential in request: expected Basic or Bearer authorization",
        ));
    }
    if let Some(key) = call.query.get("key") {
        check_key(key)?;
        return key_caller(call);
    }
    if let Some(token) = call.query.get("access_token").or_else(|| call.query.get("accessToken")) {
        return verify_token(token, call.now);
    }
    Err(AblyError::new(401, 40101, "Invalid credentials: no authentication information provided"))
}

/// A caller authenticated with the key: the key's full capability.
fn key_caller(call: &Call) -> Result<Caller, AblyError> {
    Ok(Caller { client_id: basic_client_id(call)?, capability: Capability::all(), expires: None })
}

/// `<appId>.<keyId>:<secret>`: unparseable is 40005, wrong is 40101.
fn check_key(key: &str) -> Result<(), AblyError> {
    let Some((name, secret)) = key.split_once(':') else {
        return Err(AblyError::new(400, 40005, "Invalid key in request: expected <appId>.<keyId>:<keySecret>"));
    };
    if !name.contains('.') {
        return Err(AblyError::new(400, 40005, format!("Invalid key in request: {name}")));
    }
    // The name is public; the secret is compared in constant time so response timing cannot
    // reveal how much of a guess was right.
    let ok = name == ABLY_KEY_NAME && bool::from(secret.as_bytes().ct_eq(ABLY_KEY_SECRET.as_bytes()));
    if ok {
        Ok(())
    } else {
        Err(AblyError::invalid_credentials())
    }
}

/// With Basic auth an SDK configured with a client id sends it base64-encoded in a header.
fn basic_client_id(call: &Call) -> Result<Option<String>, AblyError> {
    let Some(raw) = call.headers.get("x-ably-clientid") else {
        return Ok(None);
    };
    raw.to_str()
        .ok()
        .and_then(|v| LENIENT_B64.decode(v.trim()).ok())
        .and_then(|b| String::from_utf8(b).ok())
        .map(Some)
        .ok_or_else(|| AblyError::new(400, 40012, "Invalid X-Ably-ClientId header: not base64"))
}

/// Tokens are self-contained (`opsdeck.<payload>.<mac>`, payload = base64url of the JSON array
/// `[issued, expires, clientId, capability]`) so no token table grows under load and tokens
/// stay valid across `reset()`. The mac covers the whole payload, so neither the client id nor
/// the granted capability can be edited; JSON keeps any character in either unambiguous.
pub(super) fn mint_token(issued: i64, expires: i64, client_id: Option<&str>, capability: &Capability) -> String {
    let contents = serde_json::json!([issued, expires, client_id.unwrap_or(""), capability.canonical()]);
    let payload = URL_SAFE_NO_PAD.encode(contents.to_string());
    let tag = key_mac(payload.as_bytes())
        .map(|m| URL_SAFE_NO_PAD.encode(&m.finalize().into_bytes()[..TOKEN_TAG_LEN]))
        .unwrap_or_default();
    format!("{TOKEN_PREFIX}{payload}.{tag}")
}

/// The contents of a token whose mac checks out; `None` for anything forged or malformed.
fn open_token(token: &str) -> Option<(i64, String, Capability)> {
    let (payload, tag) = token.strip_prefix(TOKEN_PREFIX)?.split_once('.')?;
    let tag = URL_SAFE_NO_PAD.decode(tag).ok()?;
    // `verify_truncated_left` accepts any non-empty prefix of the mac, so a shorter tag would
    // be a shorter secret: one byte is guessed in 256 tries. Only the full tag counts. The
    // comparison itself is constant-time (hmac compares with `subtle`).
    if tag.len() != TOKEN_TAG_LEN {
        return None;
    }
    key_mac(payload.as_bytes())?.verify_truncated_left(&tag).ok()?;
    let contents: serde_json::Value = serde_json::from_slice(&URL_SAFE_NO_PAD.decode(payload).ok()?).ok()?;
    let [issued, expires, client, capability] = contents.as_array()?.as_slice() else {
        return None;
    };
    issued.as_i64()?;
    let capability = Capability::parse(capability.as_str()?).ok()?;
    Some((expires.as_i64()?, client.as_str()?.to_owned(), capability))
}

pub(super) fn verify_token(token: &str, now: i64) -> Result<Caller, AblyError> {
    let Some((expires, client, capability)) = open_token(token) else {
        return Err(AblyError::invalid_credentials());
    };
    if expires <= now {
        return Err(AblyError::new(401, 40142, "Token expired"));
    }
    Ok(Caller { client_id: (!client.is_empty()).then_some(client), capability, expires: Some(expires) })
}

/// Whether a token request's timestamp is within the window around server time; any `i64`
/// works (no overflow at the extremes).
fn is_current(timestamp: i64, now: i64) -> bool {
    timestamp.abs_diff(now) <= TIMESTAMP_WINDOW.unsigned_abs()
}

fn stale_timestamp() -> AblyError {
    AblyError::new(
        401,
        40104,
        "Timestamp not current: the token request timestamp must be within 2 minutes of server time",
    )
}

/// Nonces of accepted signed token requests, by `timestamp:nonce`, to refuse replays.
#[derive(Debug, Default)]
pub(super) struct NonceBook {
    seen: HashMap<String, i64>,
}

impl NonceBook {
    /// Records a nonce; false if it was already used. Entries older than the timestamp window
    /// can never be replayed (their timestamp is refused), so they are dropped as the book grows.
    fn insert(&mut self, timestamp: i64, nonce: &str, now: i64) -> bool {
        if self.seen.len() > 10_000 {
            self.seen.retain(|_, t| *t >= now - 2 * TIMESTAMP_WINDOW);
        }
        self.seen.insert(format!("{timestamp}:{nonce}"), timestamp).is_none()
    }
}

fn opt_str<'a>(body: &'a Val, key: &str) -> Result<Option<&'a str>, AblyError> {
    match body.field(key) {
        None => Ok(None),
        Some(Val::Str(s)) => Ok(Some(s)),
        Some(_) => Err(AblyError::bad_param(format!("Invalid token request: {key} must be a string"))),
    }
}

fn opt_int(body: &Val, key: &str) -> Result<Option<i64>, AblyError> {
    match body.field(key) {
        None => Ok(None),
        Some(v) => v
            .as_i64()
            .map(Some)
            .ok_or_else(|| AblyError::bad_param(format!("Invalid token request: {key} must be an integer"))),
    }
}

/// `POST /keys/{keyName}/requestToken`.
pub(super) fn request_token(nonces: &std::sync::Mutex<NonceBook>, call: &Call) -> Result<Reply, AblyError> {
    let path_key = call.segment(1).unwrap_or_default();
    if path_key != ABLY_KEY_NAME {
        return Err(AblyError::new(401, 40101, format!("Invalid credentials: no key named {path_key}")));
    }
    let body = call.body()?;
    if !matches!(body, Val::Map(_) | Val::Null) {
        return Err(AblyError::new(400, 40001, "Invalid request body: expected a TokenRequest object"));
    }
    let key_name = opt_str(&body, "keyName")?;
    if key_name.is_some_and(|k| k != path_key) {
        return Err(AblyError::new(401, 40101, "Invalid credentials: keyName does not match the key in the path"));
    }
    let ttl = opt_int(&body, "ttl")?;
    let capability = opt_str(&body, "capability")?;
    let client_id = opt_str(&body, "clientId")?;
    let timestamp = opt_int(&body, "timestamp")?;
    let nonce = opt_str(&body, "nonce")?;
    let mac = opt_str(&body, "mac")?;

    let parent = if let Some(mac) = mac {
        let sign_text = format!(
            "{}\n{}\n{}\n{}\n{}\n{}\n",
            key_name.unwrap_or(&path_key),
            ttl.map(|t| t.to_string()).unwrap_or_default(),
            capability.unwrap_or(""),
            client_id.unwrap_or(""),
            timestamp.map(|t| t.to_string()).unwrap_or_default(),
            nonce.unwrap_or(""),
        );
        let given = LENIENT_B64.decode(mac.trim()).unwrap_or_default();
        // `verify_slice` wants the whole mac and compares in constant time.
        let verified = key_mac(sign_text.as_bytes()).is_some_and(|m| m.verify_slice(&given).is_ok());
        if !verified {
            return Err(AblyError::new(401, 40101, "Invalid credentials: request mac does not match"));
        }
        let Some(timestamp) = timestamp.filter(|&t| is_current(t, call.now)) else {
            return Err(stale_timestamp());
        };
        let nonce = nonce.unwrap_or("");
        if nonce.chars().count() < 16 {
            return Err(AblyError::bad_param("Invalid token request: nonce must be at least 16 characters"));
        }
        let fresh = nonces.lock().unwrap_or_else(std::sync::PoisonError::into_inner).insert(timestamp, nonce, call.now);
        if !fresh {
            return Err(AblyError::new(401, 40105, "Nonce value replayed"));
        }
        // A signed request speaks for the key itself.
        Caller { client_id: None, capability: Capability::all(), expires: None }
    } else {
        // Unsigned: whoever authenticates it (the key, or a token) can only hand on what it
        // holds, so a restricted token cannot mint a broader, longer-lived or unbound one.
        let caller = authenticate(call)?;
        // api/ably.md gives the window for the TokenRequest's timestamp without exempting
        // unsigned requests; the SDKs send a current one, so one that is given is held to it.
        // An absent one is allowed: there is no mac it could be part of.
        if timestamp.is_some_and(|t| !is_current(t, call.now)) {
            return Err(stale_timestamp());
        }
        caller
    };
    let client_id = match (&parent, client_id.filter(|c| !c.is_empty())) {
        (Caller { expires: Some(_), client_id: Some(bound), .. }, requested) if bound != "*" => {
            if requested.is_some_and(|r| r != bound) {
                return Err(AblyError::new(
                    401,
                    40102,
                    format!("Incompatible credentials: this token is bound to clientId '{bound}'"),
                ));
            }
            Some(bound.clone())
        }
        (_, requested) => requested.map(str::to_owned),
    };
    let (parent_expires, parent) = (parent.expires, parent.capability);

    let ttl = ttl.unwrap_or(DEFAULT_TTL);
    if !(1..=MAX_TTL).contains(&ttl) {
        return Err(AblyError::bad_param(format!(
            "Invalid token request: ttl {ttl} must be between 1 and {MAX_TTL} ms"
        )));
    }
    // Absent means the credentials' own capability (§2.3); a requested one must fit inside it.
    let capability = match capability {
        Some(c) if !c.trim().is_empty() => {
            let requested = Capability::parse(c)?;
            if !requested.is_subset_of(&parent) {
                return Err(AblyError::new(
                    401,
                    40160,
                    format!(
                        "Unable to issue a token: requested capability {} is not a subset of {}",
                        requested.canonical(),
                        parent.canonical()
                    ),
                ));
            }
            requested
        }
        _ => parent,
    };
    let issued = call.now;
    let expires = issued.saturating_add(ttl).min(parent_expires.unwrap_or(i64::MAX));
    let client_id = client_id.as_deref();
    let mut details = Val::map([
        ("token", Val::Str(mint_token(issued, expires, client_id, &capability))),
        ("keyName", Val::str(ABLY_KEY_NAME)),
        ("issued", Val::Int(issued)),
        ("expires", Val::Int(expires)),
        ("capability", Val::Str(capability.canonical())),
    ]);
    if let Some(c) = client_id {
        details.push("clientId", Val::str(c));
    }
    Ok(Reply::ok(details))
}

/// Signs a token request the way the SDKs do; used by tests and handy for scripts.
#[cfg(test)]
pub(super) fn sign_request(
    ttl: Option<i64>,
    capability: Option<&str>,
    client_id: Option<&str>,
    timestamp: i64,
    nonce: &str,
) -> String {
    let text = format!(
        "{ABLY_KEY_NAME}\n{}\n{}\n{}\n{timestamp}\n{nonce}\n",
        ttl.map(|t| t.to_string()).unwrap_or_default(),
        capability.unwrap_or(""),
        client_id.unwrap_or(""),
    );
    key_mac(text.as_bytes())
        .map(|m| base64::engine::general_purpose::STANDARD.encode(m.finalize().into_bytes()))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_round_trip_and_expire() {
        let limited = Capability::parse(r#"{"cap-demo":["subscribe"]}"#).expect("capability");
        let t = mint_token(1_000, 5_000, Some("bob|eve"), &limited);
        let caller = verify_token(&t, 2_000).expect("valid");
        assert_eq!(caller.client_id.as_deref(), Some("bob|eve"));
        assert_eq!(caller.capability, limited);
        assert_eq!(verify_token(&t, 6_000).map_err(|e| e.code).err(), Some(40142));
        let forged = t.replace("opsdeck.", "opsdeck.x");
        assert_eq!(verify_token(&forged, 2_000).map_err(|e| e.code).err(), Some(40101));
        let anonymous = mint_token(1_000, 5_000, None, &Capability::all());
        let (head, _) = anonymous.rsplit_once('.').expect("token has a tag");
        for byte in 0..=u8::MAX {
            let short = format!("{head}.{}", URL_SAFE_NO_PAD.encode([byte]));
            assert!(verify_token(&short, 2_000).is_err(), "a one-byte tag was accepted: {short}");
        }
        assert!(verify_token(&format!("{head}."), 2_000).is_err(), "an empty tag was accepted");
        let caller = verify_token(&anonymous, 2_000).expect("valid");
        assert_eq!((caller.client_id, caller.capability), (None, Capability::all()));
    }
}
