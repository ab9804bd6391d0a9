//! What may be kept on disk (history) or written to the debug log: every credential of the
//! target removed wherever it appears, in its raw and its encoded (Basic) forms, and the values of
//! fields and parameters whose names say they hold a secret (`mac`, `smtp_password`, `token`).

use std::fmt;

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine as _;

use crate::client::Credentials;

/// What replaces a secret.
pub const REDACTED: &str = "[redacted]";

/// Secrets shorter than this are not searched for: a one-character "secret" would redact every
/// letter of a body, and no real credential is that short.
const MIN_SECRET_LEN: usize = 4;

/// The secret strings of one target's credentials, to be removed from what is stored or logged.
/// Its `Debug` never shows them.
#[derive(Clone, Default)]
pub struct Redactor {
    /// Longest first, so a key is removed whole before a part of it (its secret half) is.
    secrets: Vec<String>,
}

impl fmt::Debug for Redactor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Redactor({} secrets)", self.secrets.len())
    }
}

impl Redactor {
    /// Every form in which `credentials` could appear: the raw values and the Basic encodings
    /// the client sends (`base64(account:key)`).
    pub fn for_credentials(credentials: &Credentials) -> Redactor {
        let mut secrets: Vec<String> = Vec::new();
        let mut add = |value: &str| secrets.push(value.to_owned());
        match credentials {
            Credentials::AblyKey(key) => {
                add(key.expose());
                add(&BASE64.encode(key.expose()));
                if let Some((_, secret)) = key.expose().split_once(':') {
                    add(secret);
                }
            }
            Credentials::AblyToken(token) => {
                add(token.expose());
                add(&BASE64.encode(token.expose()));
            }
            Credentials::Deepgram(key) | Credentials::Taxjar(key) => add(key.expose()),
            Credentials::Avatax { account_id, license_key } => {
                add(license_key.expose());
                add(&BASE64.encode(format!("{account_id}:{}", license_key.expose())));
            }
            Credentials::Coinbase { key, secret, passphrase } => {
                add(key);
                add(secret.expose());
                add(passphrase.expose());
            }
            Credentials::Mailgun(key) => {
                add(key.expose());
                add(&BASE64.encode(format!("api:{}", key.expose())));
            }
            Credentials::Easypost(key) => {
                add(key.expose());
                add(&BASE64.encode(format!("{}:", key.expose())));
            }
        }
        secrets.retain(|s| s.len() >= MIN_SECRET_LEN);
        secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
        secrets.dedup();
        Redactor { secrets }
    }

    /// The longest secret, so a caller cutting text can keep enough of it to find one that
    /// straddles the cut.
    pub fn longest(&self) -> usize {
        self.secrets.first().map_or(0, String::len)
    }

    /// `cut`, moved past any secret that starts before it and ends after it, so cutting `bytes`
    /// there leaves no part of a secret that could no longer be recognised.
    pub fn cut_outside_secrets(&self, bytes: &[u8], cut: usize) -> usize {
        let mut cut = cut.min(bytes.len());
        for secret in &self.secrets {
            let len = secret.len();
            let from = cut.saturating_sub(len - 1);
            let to = (cut + len - 1).min(bytes.len());
            if let Some(at) = memchr::memmem::find(&bytes[from..to], secret.as_bytes()) {
                cut = cut.max(from + at + len);
            }
        }
        cut
    }

    /// `text` with every secret replaced.
    pub fn text(&self, text: &str) -> String {
        let mut text = text.to_owned();
        for secret in &self.secrets {
            if text.contains(secret.as_str()) {
                text = text.replace(secret.as_str(), REDACTED);
            }
        }
        text
    }

    /// `bytes` with every secret replaced (bodies need not be UTF-8).
    pub fn bytes(&self, bytes: &[u8]) -> Vec<u8> {
        let mut bytes = bytes.to_vec();
        for secret in &self.secrets {
            let needle = secret.as_bytes();
            if memchr::memmem::find(&bytes, needle).is_none() {
                continue;
            }
            let mut out = Vec::with_capacity(bytes.len());
            let mut rest = bytes.as_slice();
            while let Some(at) = memchr::memmem::find(rest, needle) {
                out.extend_from_slice(&rest[..at]);
                out.extend_from_slice(REDACTED.as_bytes());
                rest = &rest[at + needle.len()..];
            }
            out.extend_from_slice(rest);
            bytes = out;
        }
        bytes
    }

    /// A parameter's value as it may be kept: redacted whole when its name says it is a secret;
    /// otherwise as [`Redactor::scrub`] leaves it (a JSON value's secret fields, URLs' user info).
    pub fn param(&self, name: &str, value: &str) -> String {
        if is_secret_name(name) || looks_like_credential(value) {
            REDACTED.to_owned()
        } else {
            String::from_utf8_lossy(&self.scrub(value.as_bytes())).into_owned()
        }
    }

    /// Learns the secrets a request or response carries in its own content, so they are removed
    /// wherever else they appear (a webhook secret sent in a parameter and echoed in the response,
    /// a URL's password repeated in an error): the string values of secret-named fields at any
    /// depth (and every string under them), the values of header-like pairs
    /// (`{"name":"Authorization","value":"Bearer …"}`), and the user info of every URL.
    /// `text` need not be JSON; what is not JSON only gives its URLs' user info.
    pub fn learn(&mut self, text: &[u8]) {
        let mut found = Vec::new();
        let trimmed = text.trim_ascii_start();
        // A document costs many times its text: only texts of a size a request or a kept
        // history body has are read as one (the byte-level redaction covers the rest).
        const MAX_LEARNED_JSON: usize = 4 * 1024 * 1024;
        if (trimmed.starts_with(b"{") || trimmed.starts_with(b"[")) && trimmed.len() <= MAX_LEARNED_JSON {
            if let Ok(value) = serde_json::from_slice::<serde_json::Value>(trimmed) {
                secrets_in_json(&value, false, &mut found);
            }
        }
        for (from, to) in userinfo_spans(text) {
            let userinfo = String::from_utf8_lossy(&text[from..to]).into_owned();
            if let Some((_, password)) = userinfo.split_once(':') {
                found.push(password.to_owned());
                found.push(percent_decoded(password));
            }
            found.push(percent_decoded(&userinfo));
            found.push(userinfo);
        }
        for secret in found {
            self.add(secret);
        }
    }

    /// One more secret to remove (and its JSON-escaped form), unless it is too short to be one.
    fn add(&mut self, secret: String) {
        if secret.len() < MIN_SECRET_LEN {
            return;
        }
        let escaped = serde_json::to_string(&secret).unwrap_or_default();
        let escaped = escaped.trim_matches('"');
        if escaped != secret && escaped.len() >= MIN_SECRET_LEN {
            self.secrets.push(escaped.to_owned());
        }
        self.secrets.push(secret);
        self.secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
        self.secrets.dedup();
    }

    /// Text (JSON or not, whole or cut) as it may be kept: the values of secret-named JSON fields
    /// redacted ([`json_fields`]), every known secret removed, and the user info of every URL in
    /// it replaced (`https://[redacted]@host/`).
    pub fn scrub(&self, text: &[u8]) -> Vec<u8> {
        without_userinfo(&self.bytes(&json_fields(text)))
    }

    /// A URL as it may be logged or kept: no user info, secret-named query values redacted,
    /// and no credential anywhere in it.
    pub fn url(&self, url: &str) -> String {
        let mut url = match reqwest::Url::parse(url) {
            Ok(mut parsed) if !parsed.username().is_empty() || parsed.password().is_some() => {
                let _ = parsed.set_username("");
                let _ = parsed.set_password(None);
                parsed.to_string()
            }
            _ => url.to_owned(),
        };
        if let Some((base, query)) = url.split_once('?') {
            let pairs: Vec<String> = query
                .split('&')
                .map(|pair| match pair.split_once('=') {
                    Some((name, _)) if is_secret_name(&percent_decoded(name)) => format!("{name}={REDACTED}"),
                    _ => pair.to_owned(),
                })
                .collect();
            url = format!("{base}?{}", pairs.join("&"));
        }
        self.text(&url)
    }
}

/// Collects the secrets in a JSON value: every string under a secret-named field (`under`), and
/// the value of a header-like pair whose name is a secret header's.
fn secrets_in_json(value: &serde_json::Value, under: bool, found: &mut Vec<String>) {
    use serde_json::Value;
    match value {
        Value::String(text) if under => {
            found.push(text.clone());
            // `Bearer xyz`, `Basic xyz`: the credential alone may be repeated elsewhere.
            if let Some((_, credential)) = text.split_once(' ') {
                found.push(credential.trim().to_owned());
            }
        }
        Value::Array(items) => items.iter().for_each(|item| secrets_in_json(item, under, found)),
        Value::Object(fields) => {
            let header_name = fields.iter().find_map(|(key, value)| {
                matches!(key.to_ascii_lowercase().as_str(), "name" | "key" | "header").then(|| value.as_str()).flatten()
            });
            let header_secret = header_name.is_some_and(is_secret_header);
            for (key, value) in fields {
                let secret = under
                    || is_secret_name(key)
                    || (header_secret && matches!(key.to_ascii_lowercase().as_str(), "value" | "values"));
                secrets_in_json(value, secret, found);
            }
        }
        _ => {}
    }
}

/// Whether a header of this name carries a credential (`Authorization`, `X-Api-Key`, `Cookie`).
pub fn is_secret_header(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    is_secret_name(name) || lower.contains("auth") || lower.contains("cookie") || lower.contains("api-key")
}

/// The spans of user info in every URL of `text`: after `://` (or `:\/\/` in JSON), up to the
/// last `@` before the authority ends.
fn userinfo_spans(text: &[u8]) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let mut at = 0;
    while let Some(found) = memchr::memchr(b':', &text[at..]) {
        let sep = at + found;
        let start = if text[sep..].starts_with(b"://") {
            sep + 3
        } else if text[sep..].starts_with(br":\/\/") {
            sep + 5
        } else {
            at = sep + 1;
            continue;
        };
        let mut end = start;
        let mut last_at = None;
        while end < text.len() {
            match text[end] {
                b'/' | b'\\' | b'?' | b'#' | b'"' | b'\'' | b'<' | b'>' | b'`' => break,
                c if c.is_ascii_whitespace() || c.is_ascii_control() => break,
                b'@' => last_at = Some(end),
                _ => {}
            }
            end += 1;
        }
        if let Some(last) = last_at {
            if last > start {
                spans.push((start, last));
            }
        }
        at = end.max(sep + 1);
    }
    spans
}

/// `text` with the user info of every URL replaced by `[redacted]`.
pub fn without_userinfo(text: &[u8]) -> Vec<u8> {
    let spans = userinfo_spans(text);
    if spans.is_empty() {
        return text.to_vec();
    }
    let mut out = Vec::with_capacity(text.len());
    let mut from = 0;
    for (start, end) in spans {
        out.extend_from_slice(&text[from..start]);
        out.extend_from_slice(REDACTED.as_bytes());
        from = end;
    }
    out.extend_from_slice(&text[from..]);
    out
}

fn percent_decoded(text: &str) -> String {
    percent_encoding::percent_decode_str(text).decode_utf8_lossy().into_owned()
}

/// Whether a parameter, query or JSON field of this name holds a secret (compared
/// case-insensitively, `-` and `_` ignored): API keys, tokens, signatures, passwords, MACs.
/// `secret`, `password`, `passphrase` and `token` anywhere in the name (`webhook_secret`,
/// `secretKey`, `tokens`); the other words as suffixes: `keyName` and `keyword` are not secrets;
/// over-redacting `monkey` is the safe side of the trade.
pub fn is_secret_name(name: &str) -> bool {
    let name: String = name.chars().filter(|c| *c != '_' && *c != '-').collect::<String>().to_ascii_lowercase();
    const SECRET_WORDS: [&str; 5] = ["secret", "password", "passwd", "passphrase", "token"];
    if SECRET_WORDS.iter().any(|word| name.contains(word)) {
        return true;
    }
    const SECRET_ENDINGS: [&str; 7] = ["key", "secret", "token", "password", "passphrase", "signature", "credential"];
    SECRET_ENDINGS.iter().any(|word| name.ends_with(word))
        || matches!(name.as_str(), "mac" | "sig" | "auth" | "authorization" | "credentials")
}

/// The shapes the seven services' keys and tokens have, and those of the keys users most often
/// carry beside them: a value of one of these shapes is a secret whatever its field is called.
const CREDENTIAL_SHAPES: &[&str] = &[
    // Ably: `appId.keyId:secret`.
    r"^[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}:[A-Za-z0-9_+/=-]{10,}$",
    // EasyPost production and test keys.
    r"^EZ[AT]K[0-9A-Za-z]{16,}$",
    // Mailgun: `key-` and 32 letters or digits, or the newer `hex32-hex8-hex8`.
    r"^key-[0-9a-z]{32}$",
    r"^[0-9a-f]{32}-[0-9a-f]{8}-[0-9a-f]{8}$",
    // Deepgram (40 hex digits), TaxJar and Coinbase keys (32).
    r"^[0-9a-f]{32}$",
    r"^[0-9a-f]{40}$",
    // AvaTax license keys: 16 upper-case hex digits.
    r"^[0-9A-F]{16}$",
    // Coinbase API secrets: 64 bytes in base64.
    r"^[A-Za-z0-9+/]{86}==$",
    // Signed tokens (Ably and Deepgram issue JWTs), and the usual live/test key prefixes.
    r"^eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}$",
    r"^(sk|rk|pk)_(live|test)_[0-9A-Za-z]{8,}$",
    r"^whsec_[0-9A-Za-z]{8,}$",
    // An Authorization value itself.
    r"^(Bearer|Basic|Token) [A-Za-z0-9._~+/=-]{8,}$",
];

/// Whether `value` has the shape of a credential ([`CREDENTIAL_SHAPES`]).
pub fn looks_like_credential(value: &str) -> bool {
    static SHAPES: std::sync::LazyLock<Vec<regex_lite::Regex>> = std::sync::LazyLock::new(|| {
        CREDENTIAL_SHAPES.iter().filter_map(|shape| regex_lite::Regex::new(shape).ok()).collect()
    });
    let value = value.trim();
    (MIN_SECRET_LEN..=512).contains(&value.len()) && SHAPES.iter().any(|shape| shape.is_match(value))
}

/// JSON text (or the start of it, cut anywhere) with the string value of every secret-named
/// field replaced by `"[redacted]"`; everything else byte for byte as it was. Works on text that is
/// not JSON at all (it then changes nothing, or a `"token": "…"` inside it), and on a cut body (a
/// value that runs past the cut is redacted to the end).
pub fn json_fields(text: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len());
    let mut i = 0;
    while i < text.len() {
        if text[i] != b'"' {
            out.push(text[i]);
            i += 1;
            continue;
        }
        let end = string_end(text, i);
        let mut j = end;
        while j < text.len() && text[j].is_ascii_whitespace() {
            j += 1;
        }
        let is_name = j < text.len() && text[j] == b':';
        // A value shaped like one of the services' keys is a secret whatever it is called.
        if !is_name && looks_like_credential(&string_text(&text[i..end])) {
            out.extend_from_slice(b"\"[redacted]\"");
            i = end;
            continue;
        }
        out.extend_from_slice(&text[i..end]);
        if is_name && is_secret_name(&string_text(&text[i..end])) {
            j += 1;
            while j < text.len() && text[j].is_ascii_whitespace() {
                j += 1;
            }
            out.extend_from_slice(&text[end..j]);
            if j < text.len() && text[j] == b'"' {
                out.extend_from_slice(b"\"[redacted]\"");
                i = string_end(text, j);
                continue;
            }
            i = j;
            continue;
        }
        i = end;
    }
    out
}

/// The index just past the string starting with the quote at `start` (or the end of the text).
fn string_end(text: &[u8], start: usize) -> usize {
    let mut i = start + 1;
    while i < text.len() {
        match text[i] {
            b'\\' => i += 2,
            b'"' => return i + 1,
            _ => i += 1,
        }
    }
    text.len()
}

/// The text of a quoted JSON string (escapes decoded when it is whole and valid).
fn string_text(quoted: &[u8]) -> String {
    if quoted.contains(&b'\\') {
        if let Ok(text) = serde_json::from_slice::<String>(quoted) {
            return text;
        }
    }
    let inner = quoted.strip_prefix(b"\"").unwrap_or(quoted);
    let inner = inner.strip_suffix(b"\"").unwrap_or(inner);
    String::from_utf8_lossy(inner).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::Secret;

    #[test]
    fn a_value_shaped_like_a_key_is_redacted_whatever_it_is_called() {
        let redactor = Redactor::default();
        for secret in [
            "sk_live_4eC39HqLyjWDarjtT1zdp7dc",
            "EZAK2f1c3d1a0b9e4f5a8c7d6e5f4a3b2c1d",
            "key-3ax6xnjp29jd6fds4gc373sgvjxteol0",
            "0123456789abcdef0123456789abcdef",
            "9a1e4f35a2b7c6d8e0f1a2b3c4d5e6f7a8b9c0d1",
            "app1.key2:Zb3RleHRzZWNyZXQ",
            "1A2B3C4D5E6F7A8B",
            "Bearer 8a9b7c6d5e4f3a2b1c0d",
        ] {
            assert_eq!(redactor.param("cred", secret), REDACTED, "{secret}");
            let body = format!(r#"{{"cred": "{secret}", "list": ["{secret}"], "name": "kept"}}"#);
            let kept = String::from_utf8(redactor.scrub(body.as_bytes())).unwrap();
            assert!(!kept.contains(secret) && kept.contains("kept"), "{kept}");
        }
        // Names, ids and words are no keys.
        for value in
            ["shp_0123456789abcdef0123456789abcdef", "BTC-USD", "2026-11-28T10:00:00Z", "hello world", "EZ1000000001"]
        {
            assert_eq!(redactor.param("note", value), value);
        }
    }

    #[test]
    fn every_form_of_a_credential_is_removed() {
        let redactor = Redactor::for_credentials(&Credentials::AblyKey(Secret::new("app.key:s3cret-value")));
        assert_eq!(redactor.text("k=app.key:s3cret-value and s3cret-value"), "k=[redacted] and [redacted]");
        let basic = BASE64.encode("app.key:s3cret-value");
        assert_eq!(redactor.bytes(format!("Basic {basic}!").as_bytes()), b"Basic [redacted]!");
        assert_eq!(redactor.text("app.key is the key name"), "app.key is the key name");
        let redactor = Redactor::for_credentials(&Credentials::Avatax {
            account_id: "1100000001".into(),
            license_key: Secret::new("LICENSE1234"),
        });
        assert_eq!(redactor.param("companyCode", "LICENSE1234"), "[redacted]");
        assert_eq!(redactor.param("companyCode", "DEFAULT"), "DEFAULT");
        assert_eq!(redactor.param("mac", "abc"), "[redacted]");
        assert_eq!(format!("{redactor:?}"), "Redactor(2 secrets)");
    }

    #[test]
    fn secret_fields_of_json_are_redacted_even_when_cut() {
        let body = br#"{"token": "xyz.abc", "keyName":"app.key", "n": {"mac":"m=="}, "ttl": 5}"#;
        assert_eq!(
            String::from_utf8(json_fields(body)).unwrap(),
            r#"{"token": "[redacted]", "keyName":"app.key", "n": {"mac":"[redacted]"}, "ttl": 5}"#
        );
        let cut = br#"[{"id":"a\"b","smtp_password":"hunter2-and-mo"#;
        assert_eq!(String::from_utf8(json_fields(cut)).unwrap(), r#"[{"id":"a\"b","smtp_password":"[redacted]""#);
        assert_eq!(json_fields(b"plain \"text\": here"), b"plain \"text\": here");
    }

    #[test]
    fn urls_lose_user_info_and_secret_query_values() {
        let redactor = Redactor::default();
        assert_eq!(
            redactor.url("https://u:p@example.com/x?key=a.b:c&limit=5&access_token=t"),
            "https://example.com/x?key=[redacted]&limit=5&access_token=[redacted]"
        );
    }

    #[test]
    fn secrets_carried_in_json_and_urls_are_learned_and_removed_everywhere() {
        let mut redactor = Redactor::default();
        redactor.learn(br#"{"a":{"custom_headers":[{"name":"Authorization","value":"Bearer abc-123-def"}]},"u":"https://me:pw-9876@h.com/x"}"#);
        assert_eq!(redactor.scrub(b"echo abc-123-def and pw-9876"), b"echo [redacted] and [redacted]");
        assert_eq!(
            redactor.scrub(br#"{"url":"https:\/\/x:y@h.com\/p","webhook_secret":"s"}"#),
            br#"{"url":"https:\/\/[redacted]@h.com\/p","webhook_secret":"[redacted]"}"#
        );
        assert_eq!(
            without_userinfo(b"see http://a:b@c.d/e?f=g@h and mailto:x@y"),
            b"see http://[redacted]@c.d/e?f=g@h and mailto:x@y"
        );
    }
}
