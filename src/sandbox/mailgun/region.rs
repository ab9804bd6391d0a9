//! One region's state (US or EU: Mailgun keeps them apart) and the event pipeline that runs on
//! it. Sends are checked, stored and accepted at once; delivery, failures and engagement are
//! steps due at sandbox times, decided by an RNG seeded per message, so the same seed and the
//! same requests give the same events. Steps run in due order whenever the region is touched
//! (a request, the background task), and each event queues its signed webhook POSTs.

use std::collections::{BTreeMap, HashMap};

use serde_json::{json, Map, Value};

use super::dates::epoch_seconds;
use super::dns::SimulatedDns;
use super::domains::{Domain, DomainKind, DomainState};
use super::errors::MailgunError;
use super::events::EventLog;
use super::lists::Lists;
use super::messages::{self, Draft, Recipient, StoredMessage};
use super::mime::{self, FilePart};
use super::routes::{RouteAction, Routes};
use super::suppressions::{Record, Table};
use super::webhooks;
use crate::sandbox::credentials::MAILGUN_WEBHOOK_SIGNING_KEY;
use crate::sandbox::ids::Ids;
use crate::sandbox::outbox::{self, Delivery, Outbox};
use crate::sandbox::rng::Rng;

/// How long a temporary failure waits before the next attempt (Mailgun's first retry step).
const TEMPFAIL_RETRY_MS: i64 = 600_000;
/// Mailgun keeps stored messages about three days.
const MESSAGE_RETENTION_MS: i64 = 3 * 86_400_000;

/// A pipeline step.
#[derive(Clone, Debug)]
enum Step {
    Deliver { key: String, recipient: usize, attempt: u32 },
    Engage { key: String, recipient: usize, event: &'static str },
}

/// An HTTP POST a route asks for: URL and form fields.
pub type Post = (String, Vec<(String, String)>);

/// A forward to an email address made by a route: recorded, since the sandbox sends no mail.
#[derive(Clone, Debug)]
pub struct Forward {
    pub route: String,
    pub destination: String,
    pub recipient: String,
    pub at_ms: i64,
}

pub struct Region {
    pub eu: bool,
    seed: u64,
    pub domains: BTreeMap<String, Domain>,
    pub dns: SimulatedDns,
    pub messages: HashMap<String, StoredMessage>,
    pub events: EventLog,
    pending: BTreeMap<(i64, u64), Step>,
    step_seq: u64,
    /// Webhook POSTs to make, and those made.
    pub outbox: Outbox,
    pub forwards: Vec<Forward>,
    pub lists: Lists,
    pub routes: Routes,
    pub ids: Ids,
    message_count: u64,
    next_prune_ms: i64,
    /// `http://host:port` as clients reach this region, for storage and paging URLs.
    pub base_url: String,
}

/// FNV-1a, to derive a per-message RNG from its storage key.
fn hash(text: &str, salt: u64) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325 ^ salt, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}

fn provider(domain: &str) -> &'static str {
    match domain {
        "gmail.com" | "googlemail.com" => "Gmail",
        "yahoo.com" => "Yahoo",
        "outlook.com" | "hotmail.com" | "live.com" => "Microsoft",
        _ => "Other",
    }
}

impl Region {
    pub fn new(eu: bool, seed: u64, lists: Lists, routes: Routes, base_url: String) -> Region {
        Region {
            eu,
            seed,
            domains: BTreeMap::new(),
            dns: SimulatedDns::default(),
            messages: HashMap::new(),
            events: EventLog::default(),
            pending: BTreeMap::new(),
            step_seq: 0,
            outbox: Outbox::new(webhooks::RETRY),
            forwards: Vec::new(),
            lists,
            routes,
            ids: Ids::new(seed, if eu { 0x4555 } else { 0x5553 }),
            message_count: 0,
            next_prune_ms: i64::MIN,
            base_url,
        }
    }

    pub fn name(&self) -> &'static str {
        if self.eu {
            "eu"
        } else {
            "us"
        }
    }

    /// The domain, or Mailgun's 404 for a domain of another region or none.
    pub fn domain(&self, name: &str) -> Result<&Domain, MailgunError> {
        self.domains
            .get(&name.to_ascii_lowercase())
            .ok_or_else(|| MailgunError::not_found(format!("Domain not found: {name}")))
    }

    pub fn domain_mut(&mut self, name: &str) -> Result<&mut Domain, MailgunError> {
        self.domains
            .get_mut(&name.to_ascii_lowercase())
            .ok_or_else(|| MailgunError::not_found(format!("Domain not found: {name}")))
    }

    /// The domain for the management endpoints (`/v3/domains/...`), whose 404 does not name it.
    pub fn managed_domain(&self, name: &str) -> Result<&Domain, MailgunError> {
        self.domains.get(&name.to_ascii_lowercase()).ok_or_else(|| MailgunError::not_found("Domain not found"))
    }

    pub fn managed_domain_mut(&mut self, name: &str) -> Result<&mut Domain, MailgunError> {
        self.domains.get_mut(&name.to_ascii_lowercase()).ok_or_else(|| MailgunError::not_found("Domain not found"))
    }

    fn schedule(&mut self, due_ms: i64, step: Step) {
        self.step_seq += 1;
        self.pending.insert((due_ms, self.step_seq), step);
    }

    /// The earliest time something is due (a step or a webhook POST).
    pub fn next_due(&self) -> Option<i64> {
        let step = self.pending.keys().next().map(|k| k.0);
        let post = self.outbox.next_due();
        match (step, post) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    #[cfg(test)]
    pub fn pending_steps(&self) -> usize {
        self.pending.len()
    }

    /// Runs every step due by `now_ms`, in due order (steps they add included), and drops
    /// stored messages past Mailgun's retention (checked once a sandbox hour).
    pub fn run_due(&mut self, now_ms: i64) {
        if now_ms >= self.next_prune_ms {
            self.next_prune_ms = now_ms + 3_600_000;
            let pending: std::collections::HashSet<&str> = self
                .pending
                .values()
                .map(|s| match s {
                    Step::Deliver { key, .. } | Step::Engage { key, .. } => key.as_str(),
                })
                .collect();
            let keep =
                |m: &StoredMessage| m.created_ms >= now_ms - MESSAGE_RETENTION_MS || pending.contains(m.key.as_str());
            let drop: Vec<String> = self.messages.values().filter(|m| !keep(m)).map(|m| m.key.clone()).collect();
            for key in drop {
                self.messages.remove(&key);
            }
        }
        while let Some(entry) = self.pending.first_entry() {
            if entry.key().0 > now_ms {
                break;
            }
            let ((due, _), step) = entry.remove_entry();
            match step {
                Step::Deliver { key, recipient, attempt } => self.deliver(&key, recipient, attempt, due),
                Step::Engage { key, recipient, event } => self.engage(&key, recipient, event, due),
            }
        }
    }

    /// Sends a checked draft from `domain`; answers `{"id", "message"}`.
    pub fn send(&mut self, domain_name: &str, draft: Draft, now_ms: i64) -> Result<Value, MailgunError> {
        let domain = self.domain(domain_name)?;
        if domain.state == DomainState::Unverified {
            return Err(MailgunError::new(
                403,
                format!(
                    "Domain {} is not allowed to send: The domain is unverified and requires DNS configuration. \
                     Log in to your control panel to view required DNS records.",
                    domain.name
                ),
            ));
        }
        // Mailing list addresses expand to their subscribed members.
        let mut recipients: Vec<Recipient> = Vec::new();
        for address in &draft.envelope {
            let expanded = match self.lists.subscribed_members(address) {
                Some(members) => members
                    .into_iter()
                    .map(|(member, vars)| Recipient { address: member, list: Some(address.to_ascii_lowercase()), vars })
                    .collect(),
                None => vec![Recipient { address: address.clone(), list: None, vars: Map::new() }],
            };
            for mut r in expanded {
                if let Some(Value::Object(vars)) = draft.recipient_variables.get(&r.address) {
                    r.vars.extend(vars.clone());
                }
                if !recipients.iter().any(|x| x.address.eq_ignore_ascii_case(&r.address)) {
                    recipients.push(r);
                }
            }
        }
        if recipients.len() > messages::MAX_RECIPIENTS {
            return Err(MailgunError::bad_request(format!("Too many recipients, max is {}", messages::MAX_RECIPIENTS)));
        }
        if domain.kind == DomainKind::Sandbox {
            if let Some(r) = recipients
                .iter()
                .find(|r| !domain.authorized_recipients.iter().any(|a| a.eq_ignore_ascii_case(&r.address)))
            {
                return Err(MailgunError::new(
                    403,
                    format!(
                        "Domain {} is not allowed to send: Sandbox subdomains are for test purposes only. Please add \
                         your own domain or add the address ({}) to authorized recipients in Account Settings.",
                        domain.name, r.address
                    ),
                ));
            }
        }
        let domain_name = domain.name.clone();
        let message = self.store(&domain_name, draft, recipients, now_ms, "http", false);
        let id = format!("<{}>", message.message_id);
        self.accept(message, now_ms);
        Ok(json!({"id": id, "message": "Queued. Thank you."}))
    }

    /// Stores a message and returns a copy of it.
    fn store(
        &mut self,
        domain: &str,
        draft: Draft,
        recipients: Vec<Recipient>,
        now_ms: i64,
        method: &'static str,
        seeded: bool,
    ) -> StoredMessage {
        self.message_count += 1;
        let dt = crate::sandbox::clock::rfc3339_seconds(now_ms).replace(['-', ':', 'T', 'Z'], "");
        let message_id = format!("{dt}.{}.{}@{domain}", self.message_count, self.ids.hex(16).to_ascii_uppercase());
        let key = format!("{}{}", if self.eu { "BAA" } else { "AgE" }, self.ids.alphanumeric(41));
        let headers = messages::headers_of(&draft, &message_id, now_ms);
        let mime = draft.mime.clone().unwrap_or_else(|| {
            mime::build(&headers, draft.text.as_deref(), draft.html.as_deref(), &draft.files, &key[..16])
        });
        let message = StoredMessage {
            storage_url: format!("{}/v3/domains/{domain}/messages/{key}", self.base_url),
            key: key.clone(),
            domain: domain.to_owned(),
            message_id,
            from: draft.from,
            subject: draft.subject,
            to_header: draft.to_header,
            recipients,
            headers,
            text: draft.text,
            html: draft.html,
            files: draft.files,
            tags: draft.tags,
            user_variables: draft.user_variables,
            testmode: draft.testmode,
            tracking: draft.tracking,
            created_ms: now_ms,
            deliver_at_ms: draft.deliver_at_ms.unwrap_or(now_ms),
            mime,
            method,
            seeded,
        };
        self.messages.insert(key, message.clone());
        message
    }

    /// The `accepted` events of a stored message and its delivery steps.
    fn accept(&mut self, message: StoredMessage, now_ms: i64) {
        for (index, recipient) in message.recipients.iter().enumerate() {
            let mut body = self.event_body("accepted", now_ms, &message, index);
            if let Some(map) = body.as_object_mut() {
                map.insert("method".into(), json!(message.method));
                if let Some(m) = map.get_mut("message").and_then(Value::as_object_mut) {
                    m.insert("recipients".into(), json!([recipient.address]));
                }
            }
            self.record(&message.domain, now_ms, body);
            let mut rng = Rng::new(self.seed ^ hash(&message.key, index as u64));
            let delay = rng.range(1_000, 4_000);
            self.schedule(
                message.deliver_at_ms.max(now_ms) + delay,
                Step::Deliver { key: message.key.clone(), recipient: index, attempt: 1 },
            );
        }
    }

    /// An event's JSON for recipient `index` of `message`.
    fn event_body(&mut self, kind: &str, ts_ms: i64, message: &StoredMessage, index: usize) -> Value {
        let recipient = message.recipients.get(index).cloned().unwrap_or(Recipient {
            address: String::new(),
            list: None,
            vars: Map::new(),
        });
        let recipient_domain = recipient.address.rsplit_once('@').map_or("", |(_, d)| d).to_ascii_lowercase();
        let level = match kind {
            "failed" => "error",
            _ => "info",
        };
        let mut body = json!({
            "id": self.ids.alphanumeric(22),
            "event": kind,
            "timestamp": epoch_seconds(ts_ms),
            "log-level": level,
            "recipient": recipient.address,
            "recipient-domain": recipient_domain,
            "recipient-provider": provider(&recipient_domain),
            "envelope": {"sender": message.sender(), "transport": "smtp", "targets": recipient.address, "sending-ip": "127.0.0.1"},
            "flags": {"is-authenticated": message.method == "http", "is-routed": message.method == "smtp", "is-test-mode": message.testmode,
                      "is-system-test": false, "is-amp": false, "is-encrypted": false},
            "message": {
                "headers": {"to": message.to_header, "message-id": message.message_id, "from": message.from, "subject": message.subject},
                "attachments": message.files.iter().filter(|f| !f.inline).map(|f| json!({"filename": f.name, "content-type": f.content_type, "size": f.data.len()})).collect::<Vec<_>>(),
                "size": message.size(),
            },
            "tags": message.tags,
            "user-variables": message.user_variables,
            "campaigns": [],
        });
        if let Some(map) = body.as_object_mut() {
            if matches!(kind, "accepted" | "delivered" | "failed" | "stored") {
                let region = if self.eu { "europe-west1" } else { "us-east4" };
                map.insert(
                    "storage".into(),
                    json!({"key": message.key, "url": message.storage_url, "region": region, "env": "production"}),
                );
            }
            if let Some(list) = &recipient.list {
                map.insert("mailing-list".into(), json!({"address": list, "list-id": list, "sid": ""}));
            }
            if !recipient.vars.is_empty() {
                map.insert("recipient-variables".into(), Value::Object(recipient.vars.clone()));
            }
        }
        body
    }

    /// Logs an event and queues its webhook POSTs.
    fn record(&mut self, domain: &str, ts_ms: i64, body: Value) {
        let kind = body["event"].as_str().unwrap_or("").to_owned();
        let name = webhooks::name_for(&kind, body["severity"].as_str());
        let urls = name
            .and_then(|n| self.domains.get(domain).and_then(|d| d.webhooks.urls.get(n)).cloned())
            .unwrap_or_default();
        for url in urls {
            let token = self.ids.alphanumeric(50);
            let timestamp = (ts_ms / 1000).to_string();
            let signature = webhooks::sign(MAILGUN_WEBHOOK_SIGNING_KEY, &timestamp, &token);
            let post = json!({"signature": {"timestamp": timestamp, "token": token, "signature": signature}, "event-data": body});
            self.outbox.queue(url, Vec::new(), post.to_string().into_bytes(), kind.clone(), ts_ms);
        }
        self.events.push(ts_ms, domain, body);
    }

    fn deliver(&mut self, key: &str, index: usize, attempt: u32, due: i64) {
        let Some(message) = self.messages.get(key).cloned() else {
            return;
        };
        let Some(recipient) = message.recipients.get(index).cloned() else {
            return;
        };
        let Some(domain) = self.domains.get(&message.domain) else {
            // The domain was deleted before delivery: nothing left to deliver from.
            return;
        };
        let suppressed = domain.suppressions.check(&recipient.address, &message.tags);
        let (local, recipient_domain) = recipient.address.rsplit_once('@').unwrap_or((&recipient.address, ""));
        let mut body = if let Some(s) = suppressed {
            let mut body = self.event_body("failed", due, &message, index);
            extend(
                &mut body,
                json!({"severity": "permanent", "reason": s.reason,
                "delivery-status": {"attempt-no": attempt, "message": "", "code": s.code, "description": s.description, "session-seconds": 0.0}}),
            );
            body
        } else if !self.dns.has_mx(recipient_domain, due) {
            let text = format!("No MX for {recipient_domain}");
            if !message.seeded {
                if let Some(d) = self.domains.get_mut(&message.domain) {
                    d.suppressions.upsert(
                        Table::Bounces,
                        Record {
                            address: recipient.address.clone(),
                            created_ms: due,
                            code: "550".into(),
                            error: text.clone(),
                            tags: Vec::new(),
                        },
                    );
                }
            }
            let mut body = self.event_body("failed", due, &message, index);
            extend(
                &mut body,
                json!({"severity": "permanent", "reason": "bounce",
                "delivery-status": {"attempt-no": attempt, "message": text, "code": 550, "description": text, "session-seconds": 0.0, "enhanced-code": "5.1.2"}}),
            );
            body
        } else if local.to_ascii_lowercase().starts_with("tempfail") && attempt == 1 {
            let mut body = self.event_body("failed", due, &message, index);
            extend(
                &mut body,
                json!({"severity": "temporary", "reason": "generic", "log-level": "warn",
                "delivery-status": {"attempt-no": attempt, "message": "4.2.1 Mailbox temporarily unavailable, try again later", "code": 421,
                    "description": "", "session-seconds": 0.3, "retry-seconds": TEMPFAIL_RETRY_MS / 1000, "enhanced-code": "4.2.1"}}),
            );
            self.schedule(
                due + TEMPFAIL_RETRY_MS,
                Step::Deliver { key: key.to_owned(), recipient: index, attempt: attempt + 1 },
            );
            body
        } else {
            let mut rng = Rng::new(self.seed ^ hash(key, 1000 + index as u64));
            let session = 0.1 + f64::from(u32::try_from(rng.below(1900)).unwrap_or(0)) / 1000.0;
            let mut body = self.event_body("delivered", due, &message, index);
            extend(
                &mut body,
                json!({"delivery-status": {"tls": true, "mx-host": format!("mx.{recipient_domain}"), "code": 250, "description": "",
                "session-seconds": session, "utf8": true, "attempt-no": attempt, "message": "OK", "certificate-verified": true}}),
            );
            if !message.testmode {
                self.plan_engagement(&message, index, due, &mut rng);
            }
            body
        };
        if let Some(map) = body.as_object_mut() {
            if let Some(o) = map.get_mut("message").and_then(Value::as_object_mut) {
                o.remove("recipients");
            }
        }
        self.record(&message.domain, due, body);
    }

    /// Opens, clicks, unsubscribes and complaints after a delivery, drawn from the message's RNG.
    fn plan_engagement(&mut self, message: &StoredMessage, index: usize, delivered: i64, rng: &mut Rng) {
        let key = message.key.clone();
        if message.tracking && rng.chance(45) {
            let opened = delivered + rng.range(60_000, 6 * 3_600_000);
            self.schedule(opened, Step::Engage { key: key.clone(), recipient: index, event: "opened" });
            if rng.chance(40) {
                let clicked = opened + rng.range(5_000, 1_800_000);
                self.schedule(clicked, Step::Engage { key: key.clone(), recipient: index, event: "clicked" });
            }
            if rng.chance(5) {
                let unsubscribed = opened + rng.range(30_000, 3_600_000);
                self.schedule(unsubscribed, Step::Engage { key: key.clone(), recipient: index, event: "unsubscribed" });
            }
        }
        if rng.chance(2) {
            let complained = delivered + rng.range(3_600_000, 86_400_000);
            self.schedule(complained, Step::Engage { key, recipient: index, event: "complained" });
        }
    }

    fn engage(&mut self, key: &str, index: usize, event: &'static str, due: i64) {
        let Some(message) = self.messages.get(key).cloned() else {
            return;
        };
        if !self.domains.contains_key(&message.domain) {
            return;
        }
        let Some(recipient) = message.recipients.get(index).map(|r| r.address.clone()) else {
            return;
        };
        let mut rng = Rng::new(self.seed ^ hash(key, 2000 + index as u64));
        let clients = [
            ("Chrome", "Windows", "desktop"),
            ("Mobile Safari", "iOS", "mobile"),
            ("Thunderbird", "Linux", "desktop"),
            ("Gmail", "Android", "mobile"),
        ];
        let (client, os, device) = *rng.pick(&clients);
        let mut body = self.event_body(event, due, &message, index);
        extend(
            &mut body,
            json!({
                "ip": format!("203.0.113.{}", rng.range(1, 254)),
                "geolocation": {"country": "US", "region": "CA", "city": "San Francisco"},
                "client-info": {"client-name": client, "client-os": os, "device-type": device, "client-type": if device == "mobile" { "mobile browser" } else { "browser" },
                                "user-agent": format!("Mozilla/5.0 ({os}) {client}")},
            }),
        );
        if event == "clicked" {
            extend(&mut body, json!({"url": format!("https://{}/offers/{}", message.domain, rng.range(1, 20))}));
        }
        if !message.seeded {
            if let Some(domain) = self.domains.get_mut(&message.domain) {
                let record = Record {
                    address: recipient,
                    created_ms: due,
                    code: String::new(),
                    error: String::new(),
                    tags: vec!["*".into()],
                };
                match event {
                    "unsubscribed" => domain.suppressions.upsert(Table::Unsubscribes, record),
                    "complained" => {
                        domain.suppressions.upsert(Table::Complaints, Record { tags: Vec::new(), ..record })
                    }
                    _ => {}
                }
            }
        }
        self.record(&message.domain, due, body);
    }

    /// Demo history: a message sent at `at_ms` through the same pipeline, whose events leave the
    /// seeded suppression tables as they are.
    pub fn seed_message(&mut self, domain: &str, draft: Draft, at_ms: i64) {
        let recipients =
            draft.envelope.iter().map(|a| Recipient { address: a.clone(), list: None, vars: Map::new() }).collect();
        let message = self.store(domain, draft, recipients, at_ms, "http", true);
        self.accept(message, at_ms);
    }

    /// Takes the webhook POSTs due by `now_ms` out of the queue.
    pub fn due_deliveries(&mut self, now_ms: i64) -> Vec<Delivery> {
        self.outbox.due(now_ms)
    }

    /// Records what a POST got back and queues its retry if Mailgun would retry.
    pub fn delivered(&mut self, delivery: Delivery, status: u16, now_ms: i64) {
        self.outbox.answered(delivery, status, now_ms);
    }

    /// Mail arriving from outside (the control port): routes matched, their actions performed
    /// or recorded. Returns the answer and the HTTP POSTs to make (URL, form fields).
    pub fn incoming(&mut self, mail: &Value, now_ms: i64) -> Result<(Value, Vec<Post>), MailgunError> {
        let text = |k: &str| mail.get(k).and_then(Value::as_str).map(str::to_owned);
        let recipient = text("recipient").ok_or_else(|| MailgunError::bad_request("recipient is required"))?;
        if !messages::valid_address(&recipient) {
            return Err(MailgunError::bad_request(format!("recipient is not a valid address: {recipient}")));
        }
        let from = text("from").unwrap_or_else(|| "sender@example.com".into());
        let subject = text("subject").unwrap_or_default();
        let body_plain = text("body-plain").unwrap_or_default();
        let mut headers: Vec<(String, String)> =
            vec![("From".into(), from.clone()), ("To".into(), recipient.clone()), ("Subject".into(), subject.clone())];
        if let Some(extra) = mail.get("headers").and_then(Value::as_object) {
            for (k, v) in extra {
                headers.push((k.clone(), v.as_str().map_or_else(|| v.to_string(), str::to_owned)));
            }
        }
        let matched = self.routes.matching(&recipient, &headers);
        let mut routes = Vec::new();
        let mut performed = Vec::new();
        let mut posts = Vec::new();
        let fields = |extra: &[(&str, String)]| -> Vec<(String, String)> {
            let mut f: Vec<(String, String)> = vec![
                ("recipient".into(), recipient.clone()),
                ("sender".into(), messages::parse_address(&from).unwrap_or_else(|| from.clone())),
                ("from".into(), from.clone()),
                ("subject".into(), subject.clone()),
                ("body-plain".into(), body_plain.clone()),
                ("stripped-text".into(), body_plain.trim().to_owned()),
                (
                    "message-headers".into(),
                    Value::Array(headers.iter().map(|(k, v)| json!([k, v])).collect()).to_string(),
                ),
            ];
            f.extend(extra.iter().map(|(k, v)| ((*k).to_owned(), v.clone())));
            f
        };
        for route in &matched {
            let mut actions = Vec::new();
            for action in &route.actions {
                match action {
                    RouteAction::Forward(dest) => {
                        actions.push(format!("forward(\"{dest}\")"));
                        if dest.starts_with("http://") || dest.starts_with("https://") {
                            if outbox::is_loopback_url(dest) {
                                posts.push((dest.clone(), fields(&[])));
                                performed.push(json!({"route": route.id, "action": "forward", "destination": dest, "posted": true}));
                            } else {
                                performed.push(
                                    json!({"route": route.id, "action": "forward", "destination": dest, "posted": false,
                                    "note": "the opsdeck sandbox only POSTs to loopback URLs"}),
                                );
                            }
                        } else {
                            self.forwards.push(Forward {
                                route: route.id.clone(),
                                destination: dest.clone(),
                                recipient: recipient.clone(),
                                at_ms: now_ms,
                            });
                            performed.push(
                                json!({"route": route.id, "action": "forward", "destination": dest, "recorded": true}),
                            );
                        }
                    }
                    RouteAction::Store { notify } => {
                        actions.push(
                            notify.as_ref().map_or_else(|| "store()".to_owned(), |u| format!("store(notify=\"{u}\")")),
                        );
                        let domain = recipient.rsplit_once('@').map_or("", |(_, d)| d).to_ascii_lowercase();
                        let draft = Draft {
                            from: from.clone(),
                            subject: subject.clone(),
                            to_header: recipient.clone(),
                            envelope: vec![recipient.clone()],
                            headers: headers.clone(),
                            text: Some(body_plain.clone()),
                            html: None,
                            files: Vec::<FilePart>::new(),
                            tags: Vec::new(),
                            user_variables: Map::new(),
                            recipient_variables: Map::new(),
                            testmode: false,
                            tracking: false,
                            deliver_at_ms: None,
                            mime: None,
                        };
                        let recipients = vec![Recipient { address: recipient.clone(), list: None, vars: Map::new() }];
                        let message = self.store(&domain, draft, recipients, now_ms, "smtp", false);
                        let mut accepted = self.event_body("accepted", now_ms, &message, 0);
                        extend(&mut accepted, json!({"method": "smtp"}));
                        self.record(&domain, now_ms, accepted);
                        let stored = self.event_body("stored", now_ms, &message, 0);
                        self.record(&domain, now_ms, stored);
                        if let Some(url) = notify {
                            if outbox::is_loopback_url(url) {
                                posts.push((url.clone(), fields(&[("message-url", message.storage_url.clone())])));
                            }
                        }
                        performed.push(json!({"route": route.id, "action": "store", "storage": {"key": message.key, "url": message.storage_url},
                            "notify": notify}));
                    }
                    RouteAction::Stop => {
                        actions.push("stop()".to_owned());
                        performed.push(json!({"route": route.id, "action": "stop"}));
                    }
                }
            }
            routes.push(json!({"id": route.id, "expression": route.expression, "actions": actions}));
        }
        Ok((json!({"recipient": recipient, "region": self.name(), "matched": routes, "actions": performed}), posts))
    }

    /// Removes a domain and everything scoped to it.
    pub fn delete_domain(&mut self, name: &str) -> Result<(), MailgunError> {
        let key = name.to_ascii_lowercase();
        let domain = self.managed_domain(&key)?;
        if domain.kind == DomainKind::Sandbox {
            return Err(MailgunError::bad_request("Sandbox domains cannot be deleted"));
        }
        self.domains.remove(&key);
        self.messages.retain(|_, m| m.domain != key);
        self.events.remove_domain(&key);
        Ok(())
    }
}

/// Merges the keys of `extra` into `body`.
fn extend(body: &mut Value, extra: Value) {
    if let (Some(map), Value::Object(extra)) = (body.as_object_mut(), extra) {
        map.extend(extra);
    }
}
