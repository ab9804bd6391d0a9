//! Webhooks: per domain, up to three URLs for each event name, and the signed POSTs Mailgun
//! makes to them when events happen — `{"signature": {timestamp, token, signature}, "event-data"}`
//! with `signature = hex(HMAC-SHA256(signing key, timestamp + token))`, queued in the region's
//! [`crate::sandbox::outbox`] and retried with Mailgun's backoff. Any http(s) URL is kept, as
//! Mailgun keeps it; the outbox only ever sends to loopback ones, and logs the others as `not
//! sent` with why (`GET /mailgun/webhooks` on the control port).

use std::collections::BTreeMap;

use hmac::{Hmac, Mac};
use serde_json::{json, Value};
use sha2::Sha256;

use super::errors::MailgunError;
use crate::sandbox::outbox::RetryPolicy;

/// The names Mailgun accepts, in its order.
pub const NAMES: [&str; 8] =
    ["accepted", "delivered", "opened", "clicked", "unsubscribed", "complained", "permanent_fail", "temporary_fail"];

/// Mailgun's retry schedule after a failed POST (sandbox time): 10 min, 10 min, 15 min, 30 min,
/// 1 h, 2 h, 4 h, then it gives up. A 406 is a refusal not to retry.
pub const RETRY: RetryPolicy = RetryPolicy {
    schedule_ms: &[600_000, 600_000, 900_000, 1_800_000, 3_600_000, 7_200_000, 14_400_000],
    refused: Some(406),
};

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

/// One to three URLs (also comma-separated in one field), each an http(s) URL. Mailgun accepts
/// URLs off this machine (recorded: 200); what else it calls "not a valid url" is not known, so
/// only what is no http(s) URL at all is refused, with its capitalised `Reason`.
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
        let web = reqwest::Url::parse(url).is_ok_and(|u| matches!(u.scheme(), "http" | "https") && u.has_host());
        if !web {
            return Err(MailgunError::reason(format!("{url} is not a valid url")));
        }
    }
    Ok(urls)
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
