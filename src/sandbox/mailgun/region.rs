//! One region's state (US or EU: Mailgun keeps them apart) and the event pipeline that runs on
//! it. Sends are checked, stored and accepted at once; delivery, failures and engagement are
//! steps due at sandbox times, decided by an RNG seeded per message, so the same seed and the
//! same requests give the same events. Steps run in due order whenever the region is touched
//! (a request, the background task), and each event queues its signed webhook POSTs.

use std::collections::{BTreeMap, HashSet, VecDeque};
use std::sync::Arc;

use serde_json::{json, Map, Value};

use super::dns::SimulatedDns;
use super::domains::{Domain, DomainKind, DomainState};
use super::errors::MailgunError;
use super::events::{Event, EventLog};
use super::lists::Lists;
use super::messages::{self, Draft, MessageCore, Recipient, StoredMessage};
use super::mime::{self, FilePart};
use super::routes::{RouteAction, Routes};
use super::suppressions::{Record, Table};
use super::webhooks;
use crate::sandbox::credentials::MAILGUN_WEBHOOK_SIGNING_KEY;
use crate::sandbox::ids::Ids;
use crate::sandbox::outbox::{self, Delivery, Outbox};
use crate::sandbox::retention::{Collection, RetentionPolicy};
use crate::sandbox::rng::Rng;

/// How long a temporary failure waits before the next attempt (Mailgun's first retry step).
const TEMPFAIL_RETRY_MS: i64 = 600_000;
const DAY_MS: i64 = 86_400_000;
/// Mailgun keeps stored messages about three days.
const MESSAGE_RETENTION_MS: i64 = 3 * DAY_MS;
/// Mailgun keeps events for a time that depends on the plan, at most 30 days; the sandbox
/// account is on the longest, so the seeded week of history is all there.
pub const EVENT_RETENTION_MS: i64 = 30 * DAY_MS;
/// Messages kept (with their events); beyond it the oldest go, events included.
pub const MAX_MESSAGES: usize = 100_000;
/// Events kept; beyond it the oldest messages go with all their events.
pub const MAX_EVENTS: usize = 500_000;
/// Forwards to email addresses remembered by routes; the oldest go first.
pub const MAX_FORWARDS: usize = 1_000;

/// How much a region keeps: fields, so tests can lower them.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    pub messages: usize,
    pub events: usize,
    pub forwards: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits { messages: MAX_MESSAGES, events: MAX_EVENTS, forwards: MAX_FORWARDS }
    }
}

/// A message as the region keeps it: what its events share, its content while Mailgun stores
/// it, and the keys of its events (so they go with it).
#[derive(Clone, Debug)]
pub struct MessageRecord {
    pub core: Arc<MessageCore>,
    pub content: Option<StoredMessage>,
    events: Vec<(i64, u64)>,
}

/// A pipeline step.
#[derive(Clone, Debug)]
enum Step {
    Deliver { message: Arc<MessageCore>, recipient: usize, attempt: u32 },
    Engage { message: Arc<MessageCore>, recipient: usize, event: &'static str },
}

impl Step {
    fn message(&self) -> &MessageCore {
        match self {
            Step::Deliver { message, .. } | Step::Engage { message, .. } => message,
        }
    }
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
    /// Messages by storage key, kept for the event retention (their content for the storage
    /// retention) and capped.
    pub messages: Collection<String, MessageRecord>,
    pub events: EventLog,
    limits: Limits,
    pending: BTreeMap<(i64, u64), Step>,
    step_seq: u64,
    /// Webhook POSTs to make, and those made.
    pub outbox: Outbox,
    pub forwards: VecDeque<Forward>,
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

impl Region {
    pub fn new(eu: bool, seed: u64, lists: Lists, routes: Routes, base_url: String) -> Region {
        Region {
            eu,
            seed,
            domains: BTreeMap::new(),
            dns: SimulatedDns::default(),
            messages: Collection::new(RetentionPolicy::new(Some(EVENT_RETENTION_MS), Limits::default().messages)),
            events: EventLog::default(),
            limits: Limits::default(),
            pending: BTreeMap::new(),
            step_seq: 0,
            outbox: Outbox::new(webhooks::RETRY),
            forwards: VecDeque::new(),
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

    /// The domain of a `/v3/{domain}/...` call (sending, events, stats, suppressions). One not on
    /// the account, or of the other region, is Mailgun's 401 with the text `Forbidden` (recorded
    /// for sending and events; taken to hold for stats and suppressions, which pass the same
    /// check of the key against the domain).
    pub fn domain(&self, name: &str) -> Result<&Domain, MailgunError> {
        self.domains.get(&name.to_ascii_lowercase()).ok_or(MailgunError::Forbidden)
    }

    pub fn domain_mut(&mut self, name: &str) -> Result<&mut Domain, MailgunError> {
        self.domains.get_mut(&name.to_ascii_lowercase()).ok_or(MailgunError::Forbidden)
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
        self.expire(now_ms);
        while let Some(entry) = self.pending.first_entry() {
            if entry.key().0 > now_ms {
                break;
            }
            let ((due, _), step) = entry.remove_entry();
            match step {
                Step::Deliver { message, recipient, attempt } => self.deliver(&message, recipient, attempt, due),
                Step::Engage { message, recipient, event } => self.engage(&message, recipient, event, due),
            }
        }
    }

    /// Lowers (or raises) what the region keeps, dropping what is over at once: for tests.
    #[cfg(test)]
    pub fn set_limits(&mut self, limits: Limits) {
        self.limits = limits;
        let mut messages = Collection::new(RetentionPolicy::new(Some(EVENT_RETENTION_MS), limits.messages));
        let mut records = Vec::new();
        while let Some(record) = self.messages.pop_oldest() {
            records.push(record);
        }
        for (key, record) in records {
            let at = record.core.created_ms;
            for (_, gone) in messages.insert(key, at, record) {
                self.forget(&gone);
            }
        }
        self.messages = messages;
        self.enforce_event_cap();
        while self.forwards.len() > limits.forwards {
            self.forwards.pop_front();
        }
    }

    /// Ages out events, messages and stored contents on the sandbox clock; contents are checked
    /// once a sandbox hour (a message with pipeline steps still to come keeps its content).
    fn expire(&mut self, now_ms: i64) {
        self.events.expire(now_ms.saturating_sub(EVENT_RETENTION_MS));
        for (_, gone) in self.messages.expire(now_ms) {
            self.forget(&gone);
        }
        if now_ms < self.next_prune_ms {
            return;
        }
        self.next_prune_ms = now_ms + 3_600_000;
        let pending: HashSet<&str> = self.pending.values().map(|s| s.message().key.as_str()).collect();
        let horizon = now_ms - MESSAGE_RETENTION_MS;
        let drop: Vec<String> = self
            .messages
            .values()
            .filter(|r| r.content.is_some() && r.core.created_ms < horizon && !pending.contains(r.core.key.as_str()))
            .map(|r| r.core.key.clone())
            .collect();
        for key in drop {
            if let Some(record) = self.messages.get_mut(&key) {
                record.content = None;
            }
        }
    }

    /// Drops the events of a message that is gone.
    fn forget(&mut self, record: &MessageRecord) {
        for key in &record.events {
            self.events.remove(*key);
        }
    }

    /// Past the event cap, the oldest messages go with their events.
    fn enforce_event_cap(&mut self) {
        while self.events.len() > self.limits.events.max(1) {
            match self.messages.pop_oldest() {
                Some((_, gone)) => self.forget(&gone),
                None => break,
            }
        }
    }

    /// The stored message `key` of `domain`, while Mailgun keeps its content.
    pub fn stored_message(&self, domain: &str, key: &str) -> Option<&StoredMessage> {
        self.messages.get(&key.to_owned()).and_then(|r| r.content.as_ref()).filter(|m| m.core.domain == domain)
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
        self.accept(&message, now_ms);
        Ok(json!({"id": id, "message": "Queued. Thank you."}))
    }

    /// Stores a message and returns what its events share.
    fn store(
        &mut self,
        domain: &str,
        draft: Draft,
        recipients: Vec<Recipient>,
        now_ms: i64,
        method: &'static str,
        seeded: bool,
    ) -> Arc<MessageCore> {
        self.message_count += 1;
        let dt = crate::sandbox::clock::rfc3339_seconds(now_ms).replace(['-', ':', 'T', 'Z'], "");
        let generated = format!("{dt}.{}.{}@{domain}", self.message_count, self.ids.hex(16).to_ascii_uppercase());
        // A MIME send keeps the message's own Message-ID, and Mailgun answers with it (recorded:
        // `"id": "<...@rouge.local.mail>"` for a messages.mime send).
        let own = draft.mime.as_ref().and_then(|_| {
            draft
                .headers
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case("message-id"))
                .map(|(_, v)| v.trim().trim_start_matches('<').trim_end_matches('>').trim().to_owned())
        });
        let message_id = own.filter(|id| !id.is_empty()).unwrap_or(generated);
        let key = format!("{}{}", if self.eu { "BAA" } else { "AgE" }, self.ids.alphanumeric(41));
        let headers = messages::headers_of(&draft, &message_id, now_ms);
        let size = match &draft.mime {
            Some(mime) => mime.len(),
            None => mime::build(
                &headers,
                draft.text.as_deref(),
                draft.html.as_deref(),
                &draft.files,
                messages::mime_seed(&key),
            )
            .len(),
        };
        let core = Arc::new(MessageCore {
            storage_url: format!("{}/v3/domains/{domain}/messages/{key}", self.base_url),
            key: key.clone(),
            domain: domain.to_owned(),
            message_id,
            from: draft.from,
            subject: draft.subject,
            to_header: draft.to_header,
            recipients,
            attachments: draft
                .files
                .iter()
                .filter(|f| !f.inline)
                .map(|f| (f.name.clone(), f.content_type.clone(), f.data.len()))
                .collect(),
            tags: draft.tags,
            user_variables: draft.user_variables,
            testmode: draft.testmode,
            tracking: draft.tracking,
            created_ms: now_ms,
            deliver_at_ms: draft.deliver_at_ms.unwrap_or(now_ms),
            size,
            method,
            seeded,
        });
        let content = StoredMessage {
            core: Arc::clone(&core),
            headers,
            text: draft.text,
            html: draft.html,
            files: draft.files,
            sent_mime: draft.mime,
        };
        let record = MessageRecord { core: Arc::clone(&core), content: Some(content), events: Vec::new() };
        for (_, gone) in self.messages.insert(key, now_ms, record) {
            self.forget(&gone);
        }
        core
    }

    /// The `accepted` events of a stored message and its delivery steps.
    fn accept(&mut self, message: &Arc<MessageCore>, now_ms: i64) {
        for index in 0..message.recipients.len() {
            let mut event = self.new_event("accepted", now_ms, message, index);
            event.set_extra(&json!({"method": message.method}));
            event.lists_recipient = true;
            self.record(event);
            let mut rng = Rng::new(self.seed ^ hash(&message.key, index as u64));
            let delay = rng.range(1_000, 4_000);
            self.schedule(
                message.deliver_at_ms.max(now_ms) + delay,
                Step::Deliver { message: Arc::clone(message), recipient: index, attempt: 1 },
            );
        }
    }

    /// A new event of `kind` for recipient `index` of `message`, with its id.
    fn new_event(&mut self, kind: &'static str, ts_ms: i64, message: &Arc<MessageCore>, index: usize) -> Event {
        Event {
            seq: 0,
            ts_ms,
            message: Arc::clone(message),
            recipient: index,
            kind,
            id: self.ids.alphanumeric(22).into_boxed_str(),
            severity: None,
            extra: None,
            lists_recipient: false,
            eu: self.eu,
        }
    }

    /// Logs an event of a kept message and queues its webhook POSTs.
    fn record(&mut self, event: Event) {
        let key = event.message.key.clone();
        if !self.messages.contains(&key) {
            return;
        }
        let domain = event.message.domain.clone();
        let ts_ms = event.ts_ms;
        let name = webhooks::name_for(event.kind, event.severity);
        let urls = name
            .and_then(|n| self.domains.get(&domain).and_then(|d| d.webhooks.urls.get(n)).cloned())
            .unwrap_or_default();
        if !urls.is_empty() {
            let body = event.body();
            for url in urls {
                let token = self.ids.alphanumeric(50);
                let timestamp = (ts_ms / 1000).to_string();
                let signature = webhooks::sign(MAILGUN_WEBHOOK_SIGNING_KEY, &timestamp, &token);
                let post = json!({"signature": {"timestamp": timestamp, "token": token, "signature": signature}, "event-data": body});
                self.outbox.queue(url, Vec::new(), post.to_string().into_bytes(), event.kind.to_owned(), ts_ms);
            }
        }
        let at = self.events.push(event);
        if let Some(record) = self.messages.get_mut(&key) {
            record.events.push(at);
        }
        self.enforce_event_cap();
    }

    fn deliver(&mut self, message: &Arc<MessageCore>, index: usize, attempt: u32, due: i64) {
        if !self.messages.contains(&message.key) {
            // Gone past the cap or retention: nothing left to deliver.
            return;
        }
        let Some(recipient) = message.recipients.get(index).cloned() else {
            return;
        };
        let Some(domain) = self.domains.get(&message.domain) else {
            // The domain was deleted before delivery: nothing left to deliver from.
            return;
        };
        let key = message.key.as_str();
        let suppressed = domain.suppressions.check(&recipient.address, &message.tags);
        let (local, recipient_domain) = recipient.address.rsplit_once('@').unwrap_or((&recipient.address, ""));
        let (kind, extra) = if let Some(s) = suppressed {
            (
                "failed",
                json!({"severity": "permanent", "reason": s.reason,
                "delivery-status": {"attempt-no": attempt, "message": "", "code": s.code, "description": s.description, "session-seconds": 0.0}}),
            )
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
            (
                "failed",
                json!({"severity": "permanent", "reason": "bounce",
                "delivery-status": {"attempt-no": attempt, "message": text, "code": 550, "description": text, "session-seconds": 0.0, "enhanced-code": "5.1.2"}}),
            )
        } else if local.to_ascii_lowercase().starts_with("tempfail") && attempt == 1 {
            let extra = json!({"severity": "temporary", "reason": "generic", "log-level": "warn",
                "delivery-status": {"attempt-no": attempt, "message": "4.2.1 Mailbox temporarily unavailable, try again later", "code": 421,
                    "description": "", "session-seconds": 0.3, "retry-seconds": TEMPFAIL_RETRY_MS / 1000, "enhanced-code": "4.2.1"}});
            // The event's id is drawn before the retry is planned, as the log has always had it.
            let mut event = self.new_event("failed", due, message, index);
            event.set_extra(&extra);
            self.schedule(
                due + TEMPFAIL_RETRY_MS,
                Step::Deliver { message: Arc::clone(message), recipient: index, attempt: attempt + 1 },
            );
            self.record(event);
            return;
        } else {
            let mut rng = Rng::new(self.seed ^ hash(key, 1000 + index as u64));
            let session = 0.1 + f64::from(u32::try_from(rng.below(1900)).unwrap_or(0)) / 1000.0;
            let mut event = self.new_event("delivered", due, message, index);
            event.set_extra(&json!({"delivery-status": {"tls": true, "mx-host": format!("mx.{recipient_domain}"), "code": 250, "description": "",
                "session-seconds": session, "utf8": true, "attempt-no": attempt, "message": "OK", "certificate-verified": true}}));
            if !message.testmode {
                self.plan_engagement(message, index, due, &mut rng);
            }
            self.record(event);
            return;
        };
        let mut event = self.new_event(kind, due, message, index);
        event.set_extra(&extra);
        self.record(event);
    }

    /// Opens, clicks, unsubscribes and complaints after a delivery, drawn from the message's RNG.
    fn plan_engagement(&mut self, message: &Arc<MessageCore>, index: usize, delivered: i64, rng: &mut Rng) {
        let step = |event| Step::Engage { message: Arc::clone(message), recipient: index, event };
        if message.tracking && rng.chance(45) {
            let opened = delivered + rng.range(60_000, 6 * 3_600_000);
            self.schedule(opened, step("opened"));
            if rng.chance(40) {
                let clicked = opened + rng.range(5_000, 1_800_000);
                self.schedule(clicked, step("clicked"));
            }
            if rng.chance(5) {
                let unsubscribed = opened + rng.range(30_000, 3_600_000);
                self.schedule(unsubscribed, step("unsubscribed"));
            }
        }
        if rng.chance(2) {
            let complained = delivered + rng.range(3_600_000, 86_400_000);
            self.schedule(complained, step("complained"));
        }
    }

    fn engage(&mut self, message: &Arc<MessageCore>, index: usize, event: &'static str, due: i64) {
        let key = message.key.as_str();
        if !self.messages.contains(&message.key) || !self.domains.contains_key(&message.domain) {
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
        let mut logged = self.new_event(event, due, message, index);
        let mut extra = json!({
                "ip": format!("203.0.113.{}", rng.range(1, 254)),
                "geolocation": {"country": "US", "region": "CA", "city": "San Francisco"},
                "client-info": {"client-name": client, "client-os": os, "device-type": device, "client-type": if device == "mobile" { "mobile browser" } else { "browser" },
                                "user-agent": format!("Mozilla/5.0 ({os}) {client}")},
        });
        if event == "clicked" {
            extend(&mut extra, json!({"url": format!("https://{}/offers/{}", message.domain, rng.range(1, 20))}));
        }
        logged.set_extra(&extra);
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
        self.record(logged);
    }

    /// Demo history: a message sent at `at_ms` through the same pipeline, whose events leave the
    /// seeded suppression tables as they are.
    pub fn seed_message(&mut self, domain: &str, draft: Draft, at_ms: i64) {
        let recipients =
            draft.envelope.iter().map(|a| Recipient { address: a.clone(), list: None, vars: Map::new() }).collect();
        let message = self.store(domain, draft, recipients, at_ms, "http", true);
        self.accept(&message, at_ms);
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
                            if self.forwards.len() >= self.limits.forwards.max(1) {
                                self.forwards.pop_front();
                            }
                            self.forwards.push_back(Forward {
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
                        let mut accepted = self.new_event("accepted", now_ms, &message, 0);
                        accepted.set_extra(&json!({"method": "smtp"}));
                        self.record(accepted);
                        let stored = self.new_event("stored", now_ms, &message, 0);
                        self.record(stored);
                        let mut done = json!({"route": route.id, "action": "store",
                            "storage": {"key": message.key, "url": message.storage_url}, "notify": notify});
                        if let Some(url) = notify {
                            if outbox::is_loopback_url(url) {
                                posts.push((url.clone(), fields(&[("message-url", message.storage_url.clone())])));
                            } else {
                                done["posted"] = json!(false);
                                done["note"] = json!("the opsdeck sandbox only POSTs to loopback URLs");
                            }
                        }
                        performed.push(done);
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
        let gone: Vec<String> =
            self.messages.values().filter(|r| r.core.domain == key).map(|r| r.core.key.clone()).collect();
        for message in gone {
            self.messages.remove(&message);
        }
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
