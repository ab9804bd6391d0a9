//! Webhooks: per domain, up to three URLs for each event name, and the signed POSTs Mailgun
//! makes to them when events happen — `{"signature": {timestamp, token, signature}, "event-data"}`
//! with `signature = hex(HMAC-SHA256(signing key, timestamp + token))`. A 200 is done, a 406 is
//! a refusal not to retry, anything else is retried on the sandbox clock with Mailgun's backoff.
//!
//! The sandbox only delivers to loopback URLs (`http://127.0.0.1`, `localhost`, `[::1]`), so a
//! simulator can never be made to send requests into someone else's network.

use std::collections::BTreeMap;

use hmac::{Hmac, Mac};
use serde_json::{json, Value};
use sha2::Sha256;

use super::errors::MailgunError;

/// The names Mailgun accepts, in its order.
pub const NAMES: [&str; 8] =
    ["accepted", "delivered", "opened", "clicked", "unsubscribed", "complained", "permanent_fail", "temporary_fail"];

/// Mailgun's retry schedule after a failed POST (sandbox time): 10 min, 10 min, 15 min, 30 min,
/// 1 h, 2 h, 4 h, then it gives up.
pub const RETRY_AFTER_MS: [i64; 7] = [600_000, 600_000, 900_000, 1_800_000, 3_600_000, 7_200_000, 14_400_000];

/// The webhook name an event triggers (`failed` splits by severity; `stored` has none).
pub fn name_for(event: &str, severity: Option<&str>) -> Option<&'static str> {
    match (event, severity) {
        ("failed", Some("temporary")) => Some("temporary_fail"),
        ("failed", _) => Some("permanent_fail"),
        (other, _) => NAMES.iter().copied().find(|n| *n == other),
    }
}

/// The webhooks of one domain: name → URLs.
#[derive(Clone, Debug, Default)]
pub struct WebhookSet {
    pub urls: BTreeMap<String, Vec<String>>,
}

impl WebhookSet {
    pub fn list(&self) -> Value {
        let map: serde_json::Map<String, Value> =
            self.urls.iter().map(|(name, urls)| (name.clone(), json!({"urls": urls}))).collect();
        json!({"webhooks": map})
    }

    pub fn get(&self, name: &str) -> Result<Value, MailgunError> {
        check_name(name)?;
        self.urls
            .get(name)
            .map(|urls| json!({"webhook": {"urls": urls}}))
            .ok_or_else(|| MailgunError::not_found("Webhook not found"))
    }

    pub fn create(&mut self, name: Option<&str>, urls: &[String]) -> Result<Value, MailgunError> {
        let name = name.ok_or_else(|| MailgunError::bad_request("id parameter is missing"))?;
        check_name(name)?;
        let urls = check_urls(urls)?;
        if self.urls.contains_key(name) {
            return Err(MailgunError::bad_request(format!("Webhook with name {name} already exists")));
        }
        self.urls.insert(name.to_owned(), urls.clone());
        Ok(json!({"message": "Webhook has been created", "webhook": {"urls": urls}}))
    }

    pub fn update(&mut self, name: &str, urls: &[String]) -> Result<Value, MailgunError> {
        check_name(name)?;
        let urls = check_urls(urls)?;
        let slot = self.urls.get_mut(name).ok_or_else(|| MailgunError::not_found("Webhook not found"))?;
        slot.clone_from(&urls);
        Ok(json!({"message": "Webhook has been updated", "webhook": {"urls": urls}}))
    }

    pub fn delete(&mut self, name: &str) -> Result<Value, MailgunError> {
        check_name(name)?;
        let urls = self.urls.remove(name).ok_or_else(|| MailgunError::not_found("Webhook not found"))?;
        Ok(json!({"message": "Webhook has been deleted", "webhook": {"urls": urls}}))
    }
}

fn check_name(name: &str) -> Result<(), MailgunError> {
    if NAMES.contains(&name) {
        Ok(())
    } else {
        Err(MailgunError::bad_request(format!("Invalid webhook name '{name}'; use one of: {}", NAMES.join(", "))))
    }
}

/// One to three URLs (also comma-separated in one field), each loopback http(s).
fn check_urls(raw: &[String]) -> Result<Vec<String>, MailgunError> {
    let urls: Vec<String> =
        raw.iter().flat_map(|u| u.split(',')).map(str::trim).filter(|u| !u.is_empty()).map(str::to_owned).collect();
    if urls.is_empty() {
        return Err(MailgunError::bad_request("url parameter is missing"));
    }
    if urls.len() > 3 {
        return Err(MailgunError::bad_request("Maximum number of webhook urls is 3"));
    }
    for url in &urls {
        if !is_loopback_url(url) {
            return Err(MailgunError::reason(format!(
                "{url} is not a valid url: the opsdeck sandbox only delivers webhooks to loopback URLs \
                 (http://127.0.0.1:PORT/..., http://localhost:PORT/..., http://[::1]:PORT/...)"
            )));
        }
    }
    Ok(urls)
}

/// Whether `url` is http(s) to this machine only.
pub fn is_loopback_url(url: &str) -> bool {
    let Ok(parsed) = reqwest::Url::parse(url) else {
        return false;
    };
    if !matches!(parsed.scheme(), "http" | "https") || !parsed.username().is_empty() {
        return false;
    }
    let Some(host) = parsed.host_str() else {
        return false;
    };
    host.eq_ignore_ascii_case("localhost")
        || host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// `hex(HMAC-SHA256(key, timestamp + token))`.
pub fn sign(key: &str, timestamp: &str, token: &str) -> String {
    let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(key.as_bytes()) else {
        // HMAC takes keys of any length; this arm cannot run.
        return String::new();
    };
    mac.update(timestamp.as_bytes());
    mac.update(token.as_bytes());
    mac.finalize().into_bytes().iter().map(|b| format!("{b:02x}")).collect()
}

/// A POST waiting to be made.
#[derive(Clone, Debug)]
pub struct Delivery {
    pub id: u64,
    pub url: String,
    pub body: Value,
    /// 1 for the first try.
    pub attempt: u32,
    pub due_ms: i64,
    pub event: String,
}

/// What happened to one POST, kept for the control port.
#[derive(Clone, Debug)]
pub struct Attempt {
    pub delivery: u64,
    pub url: String,
    pub event: String,
    pub attempt: u32,
    /// The answer's status, 0 when there was no answer.
    pub status: u16,
    pub at_ms: i64,
    pub outcome: &'static str,
}

impl Attempt {
    pub fn to_json(&self) -> Value {
        json!({"delivery": self.delivery, "url": self.url, "event": self.event, "attempt": self.attempt,
               "status": self.status, "at": super::dates::rfc2822(self.at_ms, "UTC"), "outcome": self.outcome})
    }
}

/// What to do after an answer: done, given up, or try again at the returned time.
pub fn after_answer(status: u16, attempt: u32, now_ms: i64) -> (&'static str, Option<i64>) {
    match status {
        200..=299 => ("delivered", None),
        406 => ("rejected", None),
        _ => match RETRY_AFTER_MS.get(usize::try_from(attempt).unwrap_or(usize::MAX).saturating_sub(1)) {
            Some(wait) => ("retrying", Some(now_ms + wait)),
            None => ("failed", None),
        },
    }
}

/// Makes one POST; the answer's status, or 0 when the receiver could not be reached.
pub async fn post(http: &reqwest::Client, url: &str, body: &Value) -> u16 {
    match http.post(url).header(reqwest::header::CONTENT_TYPE, "application/json").body(body.to_string()).send().await {
        Ok(response) => response.status().as_u16(),
        Err(_) => 0,
    }
}
