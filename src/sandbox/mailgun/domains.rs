//! Sending domains: their settings, the DNS records to publish (with `valid` marks from the last
//! check against the simulated DNS) and the rules of create, list, delete and verify.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use super::dates::rfc2822;
use super::dns::SimulatedDns;
use super::errors::MailgunError;
use super::messages::valid_domain_name;
use super::suppressions::Suppressions;
use super::webhooks::WebhookSet;
use crate::sandbox::ids::Ids;
use crate::sandbox::request::Query;

/// The two kinds Mailgun has: the free `sandbox…mailgun.org` one and the customer's own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DomainKind {
    Sandbox,
    Custom,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DomainState {
    Active,
    Unverified,
}

/// One DNS record Mailgun asks to publish.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DnsRecord {
    pub record_type: &'static str,
    pub name: String,
    pub value: String,
    pub priority: Option<&'static str>,
}

/// A sending domain with everything scoped to it: suppressions and webhooks.
#[derive(Clone, Debug)]
pub struct Domain {
    pub id: String,
    pub name: String,
    pub kind: DomainKind,
    pub state: DomainState,
    pub created_ms: i64,
    pub smtp_password: Option<String>,
    pub spam_action: String,
    pub wildcard: bool,
    pub web_scheme: String,
    pub web_prefix: String,
    pub dkim_selector: String,
    dkim_key: String,
    /// The `valid` marks of the last verify (sending, receiving); `None` before the first.
    pub checked: Option<(Vec<bool>, Vec<bool>)>,
    /// Sandbox domains deliver only to these.
    pub authorized_recipients: Vec<String>,
    pub suppressions: Suppressions,
    pub webhooks: WebhookSet,
}

impl Domain {
    pub fn new(ids: &mut Ids, name: &str, kind: DomainKind, state: DomainState, created_ms: i64) -> Domain {
        Domain {
            id: ids.hex(24),
            name: name.to_ascii_lowercase(),
            kind,
            state,
            created_ms,
            smtp_password: None,
            spam_action: "disabled".into(),
            wildcard: false,
            web_scheme: "http".into(),
            web_prefix: "email".into(),
            dkim_selector: if kind == DomainKind::Sandbox { "mailo".into() } else { "pic".into() },
            dkim_key: format!("k=rsa; p=MIGfMA0GCSqGSIb3DQEBAQUAA4GNADCBiQKBgQ{}", ids.alphanumeric(60)),
            checked: None,
            authorized_recipients: Vec::new(),
            suppressions: Suppressions::default(),
            webhooks: WebhookSet::default(),
        }
    }

    /// The sending records (SPF, DKIM, tracking CNAME) and receiving records (two MX), with the
    /// region's Mailgun hosts.
    pub fn records(&self, eu: bool) -> (Vec<DnsRecord>, Vec<DnsRecord>) {
        let mailgun = if eu { "eu.mailgun.org" } else { "mailgun.org" };
        let sending = vec![
            DnsRecord {
                record_type: "TXT",
                name: self.name.clone(),
                value: format!("v=spf1 include:{mailgun} ~all"),
                priority: None,
            },
            DnsRecord {
                record_type: "TXT",
                name: format!("{}._domainkey.{}", self.dkim_selector, self.name),
                value: self.dkim_key.clone(),
                priority: None,
            },
            DnsRecord {
                record_type: "CNAME",
                name: format!("{}.{}", self.web_prefix, self.name),
                value: mailgun.to_owned(),
                priority: None,
            },
        ];
        let receiving = ["mxa", "mxb"]
            .iter()
            .map(|host| DnsRecord {
                record_type: "MX",
                name: self.name.clone(),
                value: format!("{host}.{mailgun}"),
                priority: Some("10"),
            })
            .collect();
        (sending, receiving)
    }

    /// The domain object of every answer.
    pub fn to_json(&self) -> Value {
        let state = match self.state {
            DomainState::Active => "active",
            DomainState::Unverified => "unverified",
        };
        let mut domain = json!({
            "id": self.id,
            "name": self.name,
            "state": state,
            "type": if self.kind == DomainKind::Sandbox { "sandbox" } else { "custom" },
            "created_at": rfc2822(self.created_ms, "GMT"),
            "smtp_login": format!("postmaster@{}", self.name),
            "spam_action": self.spam_action,
            "wildcard": self.wildcard,
            "require_tls": false,
            "skip_verification": false,
            "is_disabled": false,
            "web_prefix": self.web_prefix,
            "web_scheme": self.web_scheme,
            "use_automatic_sender_security": true,
            "encrypt_incoming_message": false,
            "disabled": null,
        });
        if let (Some(password), Some(map)) = (&self.smtp_password, domain.as_object_mut()) {
            map.insert("smtp_password".into(), json!(password));
        }
        domain
    }

    /// `{"domain", "receiving_dns_records", "sending_dns_records"}`.
    pub fn with_records(&self, eu: bool) -> Value {
        let (sending, receiving) = self.records(eu);
        let marks = |records: &[DnsRecord], checked: Option<&Vec<bool>>| -> Vec<Value> {
            records
                .iter()
                .enumerate()
                .map(|(i, r)| {
                    let valid = match checked.and_then(|c| c.get(i)) {
                        Some(true) => "valid",
                        Some(false) => "invalid",
                        None => "unknown",
                    };
                    let mut record = json!({
                        "record_type": r.record_type, "name": r.name, "value": r.value, "valid": valid,
                        "cached": if valid == "valid" { json!([r.value]) } else { json!([]) },
                        "is_active": valid == "valid",
                    });
                    if let (Some(p), Some(map)) = (r.priority, record.as_object_mut()) {
                        map.insert("priority".into(), json!(p));
                    }
                    record
                })
                .collect()
        };
        json!({
            "domain": self.to_json(),
            "receiving_dns_records": marks(&receiving, self.checked.as_ref().map(|c| &c.1)),
            "sending_dns_records": marks(&sending, self.checked.as_ref().map(|c| &c.0)),
        })
    }

    /// Checks every record against the simulated DNS; all sending records valid activates the
    /// domain (Mailgun does not require the receiving MX records to send).
    pub fn verify(&mut self, dns: &SimulatedDns, now_ms: i64, eu: bool) {
        let visible = dns.records_visible(&self.name, now_ms);
        let (sending, receiving) = self.records(eu);
        let sending = vec![visible; sending.len()];
        let receiving = vec![visible; receiving.len()];
        if sending.iter().all(|v| *v) {
            self.state = DomainState::Active;
        }
        self.checked = Some((sending, receiving));
    }
}

/// What `POST /v3/domains` reads; checked in full before anything is created.
/// Domains a region holds in the sandbox; one more is refused (the simulator's own limit: a
/// domain carries its messages, lists and suppressions, so none is dropped to make room).
pub const MAX_DOMAINS: usize = 1_000;

pub fn create(
    domains: &BTreeMap<String, Domain>,
    ids: &mut Ids,
    form: &Query,
    now_ms: i64,
) -> Result<Domain, MailgunError> {
    let name = form
        .get("name")
        .ok_or_else(|| MailgunError::bad_request("Missing parameter 'name'"))?
        .trim()
        .to_ascii_lowercase();
    if !valid_domain_name(&name) {
        return Err(MailgunError::bad_request(format!("'{name}' is not a valid domain name")));
    }
    if domains.contains_key(&name) {
        return Err(MailgunError::bad_request(format!("This domain name is already taken: {name}")));
    }
    if domains.len() >= MAX_DOMAINS {
        return Err(MailgunError::bad_request(format!(
            "The sandbox keeps at most {MAX_DOMAINS} domains a region (its own limit, not Mailgun's)"
        )));
    }
    let password = form.get("smtp_password");
    if let Some(p) = password {
        if !(5..=32).contains(&p.chars().count()) {
            let which = if p.chars().count() < 5 { "too short" } else { "too long" };
            return Err(MailgunError::bad_request(format!(
                "Password is {which}. It must be between 5 and 32 characters."
            )));
        }
    }
    let spam_action = form.get("spam_action").unwrap_or("disabled");
    if !["disabled", "block", "tag"].contains(&spam_action) {
        return Err(MailgunError::bad_request("Invalid spam_action, must be one of: disabled, block, tag"));
    }
    let wildcard = match form.get("wildcard") {
        None => false,
        Some(v) => {
            super::parse_bool(v).ok_or_else(|| MailgunError::bad_request("Invalid boolean value for 'wildcard'"))?
        }
    };
    let web_scheme = form.get("web_scheme").unwrap_or("http");
    if !["http", "https"].contains(&web_scheme) {
        return Err(MailgunError::bad_request("web_scheme must be http or https"));
    }
    let web_prefix = form.get("web_prefix").unwrap_or("email");
    if !valid_domain_name(&format!("{web_prefix}.x")) || web_prefix.contains('.') {
        return Err(MailgunError::bad_request("web_prefix is not a valid DNS label"));
    }
    if let Some(size) = form.get("dkim_key_size") {
        if size != "1024" && size != "2048" {
            return Err(MailgunError::bad_request("dkim_key_size must be 1024 or 2048"));
        }
    }
    let mut domain = Domain::new(ids, &name, DomainKind::Custom, DomainState::Unverified, now_ms);
    domain.smtp_password = password.map(str::to_owned);
    domain.spam_action = spam_action.to_owned();
    domain.wildcard = wildcard;
    domain.web_scheme = web_scheme.to_owned();
    domain.web_prefix = web_prefix.to_owned();
    if let Some(selector) = form.get("dkim_selector") {
        domain.dkim_selector = selector.to_owned();
    }
    Ok(domain)
}

/// `GET /v3/domains`: `limit` (1–1000), `skip`, `state`, v4 `sort` and `search`.
pub fn list(domains: &BTreeMap<String, Domain>, query: &Query) -> Result<Value, MailgunError> {
    let limit = crate::sandbox::paging::bounded(query, "limit", 100, 1, 1000)
        .map_err(|_| MailgunError::bad_request("The 'limit' parameter must be a number between 1 and 1000"))?;
    let skip = crate::sandbox::paging::bounded(query, "skip", 0, 0, u64::from(u32::MAX))
        .map_err(|_| MailgunError::bad_request("The 'skip' parameter must be a non-negative number"))?;
    let state = query.get("state");
    if let Some(s) = state {
        if !["active", "unverified", "disabled"].contains(&s) {
            return Err(MailgunError::bad_request("Invalid state: must be one of active, unverified, disabled"));
        }
    }
    let search = query.get("search").map(str::to_ascii_lowercase);
    // The v3 list is in creation order; v4's `sort` orders by name.
    let mut rows: Vec<&Domain> = domains
        .values()
        .filter(|d| state.is_none_or(|s| s == d.to_json()["state"]))
        .filter(|d| search.as_deref().is_none_or(|s| d.name.contains(s)))
        .collect();
    match query.get("sort") {
        None => rows.sort_by(|a, b| (a.created_ms, &a.name).cmp(&(b.created_ms, &b.name))),
        Some("name" | "name:asc") => {}
        Some("name:desc") => rows.reverse(),
        Some(other) => return Err(MailgunError::bad_request(format!("Invalid sort value: {other}"))),
    }
    let total = rows.len();
    let items: Vec<Value> = rows
        .into_iter()
        .skip(usize::try_from(skip).unwrap_or(usize::MAX))
        .take(usize::try_from(limit).unwrap_or(usize::MAX))
        .map(Domain::to_json)
        .collect();
    Ok(json!({"total_count": total, "items": items}))
}
