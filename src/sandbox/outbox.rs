//! Webhook POSTs a simulator makes to receivers of the user's (Mailgun's event webhooks,
//! EasyPost's event notifications, Deepgram's callbacks): queued on the sandbox clock, retried on
//! the vendor's schedule, every attempt kept for the control port.
//!
//! The sandbox only ever sends to loopback URLs (`http://127.0.0.1`, `localhost`, `[::1]`), with a
//! client that follows no redirect and uses no proxy, so a simulator can never be made to send
//! requests into someone else's network.

use std::collections::{BTreeMap, VecDeque};
use std::time::Duration;

use serde_json::{json, Value};

/// Time allowed for one POST.
const POST_TIMEOUT: Duration = Duration::from_secs(5);
/// Attempts kept for the control port, per outbox.
const ATTEMPTS_KEPT: usize = 500;

/// The client every outgoing POST goes through: loopback only, as the URLs were checked to be;
/// no redirect may lead elsewhere and no proxy from the environment may carry a POST off the
/// machine.
pub fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(POST_TIMEOUT)
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .build()
        .unwrap_or_default()
}

/// The ports of the sandboxes running in this process (their listeners and control ports): a
/// webhook must never reach one (a POST to `/reset` on the control port would reset every
/// simulator).
static OWN_PORTS: std::sync::Mutex<Vec<u16>> = std::sync::Mutex::new(Vec::new());

/// Counts `ports` as the sandbox's own until [`release_ports`].
pub(super) fn claim_ports(ports: &[u16]) {
    OWN_PORTS.lock().unwrap_or_else(std::sync::PoisonError::into_inner).extend_from_slice(ports);
}

/// Forgets `ports` (once each) when their sandbox stops.
pub(super) fn release_ports(ports: &[u16]) {
    let mut own = OWN_PORTS.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    for port in ports {
        if let Some(at) = own.iter().position(|p| p == port) {
            own.swap_remove(at);
        }
    }
}

fn is_own_port(port: u16) -> bool {
    OWN_PORTS.lock().unwrap_or_else(std::sync::PoisonError::into_inner).contains(&port)
        || CONTROL_PORTS.lock().unwrap_or_else(std::sync::PoisonError::into_inner).contains(&port)
}

/// The header every delivery carries, whichever sandbox sends it: a control port refuses a
/// request with it, so no webhook of any opsdeck process can reset or break another's
/// simulators.
pub const DELIVERY_MARKER: &str = "x-opsdeck-delivery";

/// The header every answer of a control port carries, so a sandbox that once reached one (of
/// another opsdeck process: its own are in [`OWN_PORTS`]) never sends there again.
pub const CONTROL_MARKER: &str = "x-opsdeck-control";

/// Ports on which another opsdeck process's control port answered: never sent to again.
static CONTROL_PORTS: std::sync::Mutex<Vec<u16>> = std::sync::Mutex::new(Vec::new());

fn learn_control_port(port: u16) {
    let mut known = CONTROL_PORTS.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if !known.contains(&port) {
        known.push(port);
    }
}

/// Why the sandbox will not send to `url`, or `None` when it will: http(s) to this machine only,
/// with no credentials in it, and not to one of the sandbox's own ports.
fn refusal(url: &str) -> Option<&'static str> {
    let Ok(parsed) = reqwest::Url::parse(url) else {
        return Some("not a URL");
    };
    if !matches!(parsed.scheme(), "http" | "https") {
        return Some("not an http or https URL");
    }
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return Some("a URL with a user name or password in it");
    }
    let loopback = parsed.host_str().is_some_and(|host| {
        host.eq_ignore_ascii_case("localhost")
            || host
                .trim_start_matches('[')
                .trim_end_matches(']')
                .parse::<std::net::IpAddr>()
                .is_ok_and(|ip| ip.is_loopback())
    });
    if !loopback {
        return Some("not a loopback URL");
    }
    if parsed.port_or_known_default().is_some_and(is_own_port) {
        return Some("a port of the sandbox itself");
    }
    None
}

/// Whether the sandbox sends to `url`: http(s) to this machine only, with no credentials in it,
/// and not to one of the sandbox's own ports.
pub fn is_loopback_url(url: &str) -> bool {
    refusal(url).is_none()
}

/// What the sandbox says of a URL it will not send to, in any vendor's error message. The URL
/// is shown without its user name and password.
pub fn loopback_only(url: &str) -> String {
    let why = refusal(url).unwrap_or("not a URL the sandbox sends to");
    let shown = match reqwest::Url::parse(url) {
        Ok(mut parsed) => {
            let _ = parsed.set_username("");
            let _ = parsed.set_password(None);
            parsed.to_string()
        }
        Err(_) => url.to_owned(),
    };
    format!(
        "{shown} is not a valid url ({why}): the opsdeck sandbox only delivers webhooks to loopback URLs \
         of your own receivers (http://127.0.0.1:PORT/..., http://localhost:PORT/..., http://[::1]:PORT/...), \
         without credentials and not to its own ports"
    )
}

/// How a vendor treats an answer: 2xx is done; `refused` (Mailgun's 406) ends it without retry;
/// anything else is tried again after the next wait of `schedule_ms`, until it runs out.
#[derive(Clone, Copy, Debug)]
pub struct RetryPolicy {
    pub schedule_ms: &'static [i64],
    pub refused: Option<u16>,
}

/// A POST (or PUT) waiting to be made.
#[derive(Clone, Debug)]
pub struct Delivery {
    pub id: u64,
    pub url: String,
    /// `POST`, or `PUT` where the user asked for it (Deepgram's `callback_method`).
    pub method: reqwest::Method,
    /// JSON, or what the body is (Deepgram's speech answer: audio).
    pub content_type: String,
    /// Extra headers (signatures, the user's custom headers).
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// 1 for the first try.
    pub attempt: u32,
    pub due_ms: i64,
    /// What the POST is about (`delivered`, `tracker.updated`), for the attempt log.
    pub event: String,
}

/// What happened to one POST.
#[derive(Clone, Debug)]
pub struct Attempt {
    pub delivery: u64,
    pub url: String,
    pub event: String,
    pub attempt: u32,
    /// The answer's status, 0 when there was no answer.
    pub status: u16,
    pub at_ms: i64,
    /// `delivered`, `rejected`, `retrying`, `failed` (given up) or `not sent`.
    pub outcome: &'static str,
    /// Why it was not sent (an URL off this machine), when it was not.
    pub why: Option<&'static str>,
}

impl Attempt {
    /// The attempt as the control port lists it, its time written by the vendor's `time` format.
    pub fn to_json(&self, time: impl Fn(i64) -> String) -> Value {
        let mut attempt = json!({"delivery": self.delivery, "url": self.url, "event": self.event,
               "attempt": self.attempt, "status": self.status, "at": time(self.at_ms), "outcome": self.outcome});
        if let Some(why) = self.why {
            attempt["why"] = json!(why);
        }
        attempt
    }
}

/// The queue of POSTs to make and the log of those made.
#[derive(Clone, Debug)]
pub struct Outbox {
    queue: BTreeMap<(i64, u64), Delivery>,
    next_id: u64,
    attempts: VecDeque<Attempt>,
    policy: RetryPolicy,
}

impl Outbox {
    pub fn new(policy: RetryPolicy) -> Outbox {
        Outbox { queue: BTreeMap::new(), next_id: 0, attempts: VecDeque::new(), policy }
    }

    /// Queues a JSON POST due at `due_ms`; returns its delivery id.
    pub fn queue(
        &mut self,
        url: String,
        headers: Vec<(String, String)>,
        body: Vec<u8>,
        event: String,
        due_ms: i64,
    ) -> u64 {
        let (method, content_type) = (reqwest::Method::POST, "application/json".to_owned());
        self.queue_request(Delivery { id: 0, url, method, content_type, headers, body, attempt: 1, due_ms, event })
    }

    /// Queues `delivery` (its id is given here) unless its URL is one the sandbox does not send
    /// to: that is logged at once as `not sent`, with why, and never retried. Returns its id.
    pub fn queue_request(&mut self, mut delivery: Delivery) -> u64 {
        self.next_id += 1;
        delivery.id = self.next_id;
        if let Some(why) = refusal(&delivery.url) {
            self.log(Attempt {
                delivery: delivery.id,
                url: delivery.url,
                event: delivery.event,
                attempt: 1,
                status: 0,
                at_ms: delivery.due_ms,
                outcome: "not sent",
                why: Some(why),
            });
            return self.next_id;
        }
        self.queue.insert((delivery.due_ms, delivery.id), delivery);
        self.next_id
    }

    fn log(&mut self, attempt: Attempt) {
        self.attempts.push_back(attempt);
        while self.attempts.len() > ATTEMPTS_KEPT {
            self.attempts.pop_front();
        }
    }

    /// Takes the POSTs due by `now_ms` out of the queue.
    pub fn due(&mut self, now_ms: i64) -> Vec<Delivery> {
        let mut due = Vec::new();
        while let Some(entry) = self.queue.first_entry() {
            if entry.key().0 > now_ms {
                break;
            }
            due.push(entry.remove());
        }
        due
    }

    /// When the next queued POST is due.
    pub fn next_due(&self) -> Option<i64> {
        self.queue.keys().next().map(|k| k.0)
    }

    /// Records what a POST got back and queues its retry if the vendor would retry.
    pub fn answered(&mut self, mut delivery: Delivery, status: u16, now_ms: i64) -> &'static str {
        let (outcome, retry_at) = self.after_answer(status, delivery.attempt, now_ms);
        self.log(Attempt {
            delivery: delivery.id,
            url: delivery.url.clone(),
            event: delivery.event.clone(),
            attempt: delivery.attempt,
            status,
            at_ms: now_ms,
            outcome,
            why: None,
        });
        if let Some(at) = retry_at {
            delivery.attempt += 1;
            delivery.due_ms = at;
            self.queue.insert((at, delivery.id), delivery);
        }
        outcome
    }

    /// What to do after an answer: done, refused, given up, or try again at the returned time.
    pub fn after_answer(&self, status: u16, attempt: u32, now_ms: i64) -> (&'static str, Option<i64>) {
        match status {
            200..=299 => ("delivered", None),
            s if Some(s) == self.policy.refused => ("rejected", None),
            _ => {
                let index = usize::try_from(attempt).unwrap_or(usize::MAX).saturating_sub(1);
                match self.policy.schedule_ms.get(index) {
                    Some(wait) => ("retrying", Some(now_ms + wait)),
                    None => ("failed", None),
                }
            }
        }
    }

    /// Attempts made, oldest first.
    pub fn attempts(&self) -> impl DoubleEndedIterator<Item = &Attempt> {
        self.attempts.iter()
    }

    /// POSTs still queued.
    pub fn pending(&self) -> usize {
        self.queue.len()
    }
}

/// POSTs `fields` as a form to `url` at once (a Mailgun route's `forward()`), as [`post`] sends:
/// checked, marked, and never to a control port. The answer's status, or 0.
pub async fn post_form(http: &reqwest::Client, url: &str, fields: &[(String, String)]) -> u16 {
    let encode =
        |text: &str| percent_encoding::utf8_percent_encode(text, percent_encoding::NON_ALPHANUMERIC).to_string();
    let body: Vec<String> = fields.iter().map(|(name, value)| format!("{}={}", encode(name), encode(value))).collect();
    let body = body.join("&");
    let delivery = Delivery {
        id: 0,
        url: url.to_owned(),
        method: reqwest::Method::POST,
        content_type: "application/x-www-form-urlencoded".to_owned(),
        headers: Vec::new(),
        body: body.into(),
        attempt: 1,
        due_ms: 0,
        event: String::new(),
    };
    post(http, &delivery).await
}

/// Makes one POST; the answer's status, or 0 when the receiver could not be reached.
pub async fn post(http: &reqwest::Client, delivery: &Delivery) -> u16 {
    // Checked again as it is sent: a port may have become the sandbox's since the URL was given.
    if !is_loopback_url(&delivery.url) {
        return 0;
    }
    let mut request = http
        .request(delivery.method.clone(), &delivery.url)
        .header(reqwest::header::CONTENT_TYPE, delivery.content_type.as_str())
        .body(delivery.body.clone());
    for (name, value) in &delivery.headers {
        request = request.header(name.as_str(), value.as_str());
    }
    // Last, so a user's custom header cannot take it away.
    request = request.header(DELIVERY_MARKER, "1");
    match request.send().await {
        Ok(response) => {
            if response.headers().contains_key(CONTROL_MARKER) {
                if let Some(port) = response.url().port_or_known_default() {
                    learn_control_port(port);
                }
            }
            response.status().as_u16()
        }
        Err(_) => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const POLICY: RetryPolicy = RetryPolicy { schedule_ms: &[1_000, 5_000], refused: Some(406) };

    #[test]
    fn only_loopback_urls_without_credentials() {
        assert!(is_loopback_url("http://127.0.0.1:9000/hook"));
        assert!(is_loopback_url("https://localhost/hook"));
        assert!(is_loopback_url("http://[::1]:80/"));
        assert!(is_loopback_url("http://127.9.9.9/"));
        assert!(!is_loopback_url("http://10.0.0.1/hook"));
        assert!(!is_loopback_url("http://example.com/hook"));
        assert!(!is_loopback_url("ftp://127.0.0.1/hook"));
        assert!(!is_loopback_url("http://user:pw@127.0.0.1/hook"));
        assert!(!is_loopback_url("not a url"));
    }

    #[test]
    fn never_the_sandboxs_own_ports_and_the_refusal_says_why() {
        // A port no other test of this process claims.
        let port = 1;
        assert!(is_loopback_url("http://127.0.0.1:1/reset"));
        claim_ports(&[port]);
        assert!(!is_loopback_url("http://127.0.0.1:1/reset"));
        assert!(!is_loopback_url("http://localhost:1/reset"));
        assert!(loopback_only("http://127.0.0.1:1/reset").contains("a port of the sandbox itself"));
        // A port where another opsdeck's control port answered is never sent to again.
        assert!(is_loopback_url("http://127.0.0.1:2/reset"));
        learn_control_port(2);
        assert!(!is_loopback_url("http://localhost:2/"));
        release_ports(&[port]);
        assert!(is_loopback_url("http://127.0.0.1:1/reset"));
        let said = loopback_only("http://user:secret@127.0.0.1:9000/hook");
        assert!(said.contains("user name or password") && !said.contains("secret"), "{said}");
        assert!(loopback_only("http://example.com/hook").contains("not a loopback URL"));
    }

    #[test]
    fn retries_on_the_schedule_then_gives_up() {
        let mut outbox = Outbox::new(POLICY);
        outbox.queue("http://127.0.0.1/a".into(), vec![], b"{}".to_vec(), "e".into(), 100);
        assert!(outbox.due(99).is_empty());
        let first = outbox.due(100).remove(0);
        assert_eq!(outbox.answered(first, 500, 100), "retrying");
        assert_eq!(outbox.next_due(), Some(1_100));
        let second = outbox.due(1_100).remove(0);
        assert_eq!(second.attempt, 2);
        assert_eq!(outbox.answered(second, 0, 1_100), "retrying");
        let third = outbox.due(6_100).remove(0);
        assert_eq!(outbox.answered(third, 502, 6_100), "failed");
        assert_eq!(outbox.pending(), 0);
        let outcomes: Vec<_> = outbox.attempts().map(|a| (a.attempt, a.outcome)).collect();
        assert_eq!(outcomes, [(1, "retrying"), (2, "retrying"), (3, "failed")]);
    }

    #[test]
    fn a_url_off_this_machine_is_logged_as_not_sent_and_never_queued() {
        let mut outbox = Outbox::new(POLICY);
        let put = Delivery {
            id: 0,
            url: "https://example.com/callback".into(),
            method: reqwest::Method::PUT,
            content_type: "audio/wav".into(),
            headers: Vec::new(),
            body: b"RIFF".to_vec(),
            attempt: 1,
            due_ms: 5,
            event: "speak".into(),
        };
        let id = outbox.queue_request(put);
        assert_eq!(outbox.pending(), 0);
        let logged: Vec<_> = outbox.attempts().map(|a| a.to_json(|ms| ms.to_string())).collect();
        assert_eq!(logged.len(), 1);
        assert_eq!((logged[0]["delivery"].as_u64(), logged[0]["outcome"].as_str()), (Some(id), Some("not sent")));
        assert_eq!(logged[0]["why"], "not a loopback URL");
    }

    #[test]
    fn success_and_refusal_end_a_delivery() {
        let outbox = Outbox::new(POLICY);
        assert_eq!(outbox.after_answer(204, 1, 0), ("delivered", None));
        assert_eq!(outbox.after_answer(406, 1, 0), ("rejected", None));
        let no_refusal = Outbox::new(RetryPolicy { refused: None, ..POLICY });
        assert_eq!(no_refusal.after_answer(406, 1, 0), ("retrying", Some(1_000)));
    }
}
