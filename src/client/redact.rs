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

    /// A parameter's value as it may be kept: redacted whole when its name says it is a secret.
    pub fn param(&self, name: &str, value: &str) -> String {
        if is_secret_name(name) {
            REDACTED.to_owned()
        } else {
            self.text(value)
        }
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

fn percent_decoded(text: &str) -> String {
    percent_encoding::percent_decode_str(text).decode_utf8_lossy().into_owned()
}

/// Whether a parameter, query or JSON field of this name holds a secret (compared
/// case-insensitively, `-` and `_` ignored): API keys, tokens, signatures, passwords, MACs.
/// Suffixes, not substrings: `keyName` and `keyword` are not secrets; over-redacting `monkey` is
/// the safe side of the trade.
pub fn is_secret_name(name: &str) -> bool {
    let name: String = name.chars().filter(|c| *c != '_' && *c != '-').collect::<String>().to_ascii_lowercase();
    const SECRET_ENDINGS: [&str; 7] = ["key", "secret", "token", "password", "passphrase", "signature", "credential"];
    SECRET_ENDINGS.iter().any(|word| name.ends_with(word))
        || matches!(name.as_str(), "mac" | "sig" | "auth" | "authorization" | "credentials")
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
        out.extend_from_slice(&text[i..end]);
        let mut j = end;
        while j < text.len() && text[j].is_ascii_whitespace() {
            j += 1;
        }
        if j < text.len() && text[j] == b':' && is_secret_name(&string_text(&text[i..end])) {
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
}
