//! Sending: the form of `POST /v3/{domain}/messages` and `messages.mime` read into a message
//! with its recipients, options and files, checked with Mailgun's own 400 texts before anything
//! is stored; and the stored message as `messages_get` gives it back (JSON or raw MIME).

use serde_json::{json, Map, Value};

use super::dates::{parse_time, rfc2822};
use super::errors::MailgunError;
use super::mime::{self, FilePart};
use crate::sandbox::request::Query;

/// Mailgun's cap on recipients of one message (to + cc + bcc).
pub const MAX_RECIPIENTS: usize = 1000;
/// A message may carry at most three tags.
pub const MAX_TAGS: usize = 3;
/// Scheduled delivery reaches at most three days ahead.
const MAX_SCHEDULE_MS: i64 = 3 * 86_400_000;

/// One envelope recipient; `list` is set when it came from a mailing list's members.
#[derive(Clone, Debug, PartialEq)]
pub struct Recipient {
    pub address: String,
    pub list: Option<String>,
    pub vars: Map<String, Value>,
}

/// What a message's events say about it: shared (`Arc`) by the stored message, its events and
/// its pipeline steps, so an event costs its own fields only and outlives the stored body.
#[derive(Clone, Debug)]
pub struct MessageCore {
    pub key: String,
    pub domain: String,
    /// Without angle brackets.
    pub message_id: String,
    pub from: String,
    pub subject: String,
    pub to_header: String,
    pub recipients: Vec<Recipient>,
    /// The attached (not inline) files: name, content type, size.
    pub attachments: Vec<(String, String, usize)>,
    pub tags: Vec<String>,
    pub user_variables: Map<String, Value>,
    pub testmode: bool,
    pub tracking: bool,
    pub created_ms: i64,
    pub deliver_at_ms: i64,
    /// The MIME text's length.
    pub size: usize,
    pub storage_url: String,
    /// `http` for the API, `smtp` for routed (incoming) mail.
    pub method: &'static str,
    /// Demo history: its events do not change the suppression tables the seed sets.
    pub seeded: bool,
}

impl MessageCore {
    /// The `sender` field: the bare address of `From`.
    pub fn sender(&self) -> String {
        parse_address(&self.from).unwrap_or_else(|| self.from.clone())
    }
}

/// A stored message's content, what `messages_get` returns; kept for Mailgun's storage
/// retention, while the [`MessageCore`] lives on in the events.
#[derive(Clone, Debug)]
pub struct StoredMessage {
    pub core: std::sync::Arc<MessageCore>,
    /// Every header, in order, as the MIME form carries them.
    pub headers: Vec<(String, String)>,
    pub text: Option<String>,
    pub html: Option<String>,
    pub files: Vec<FilePart>,
    /// The MIME text as sent to `messages.mime`; `None` when built from the parts, which
    /// [`StoredMessage::mime`] builds again on read (the same bytes: the boundary comes from the
    /// key).
    pub sent_mime: Option<String>,
}

impl StoredMessage {
    /// The message's MIME text.
    pub fn mime(&self) -> String {
        match &self.sent_mime {
            Some(mime) => mime.clone(),
            None => mime::build(
                &self.headers,
                self.text.as_deref(),
                self.html.as_deref(),
                &self.files,
                mime_seed(&self.core.key),
            ),
        }
    }

    /// `messages_get` in JSON.
    pub fn to_json(&self, base_url: &str) -> Value {
        let core = &self.core;
        let attachments: Vec<Value> = self
            .files
            .iter()
            .enumerate()
            .filter(|(_, f)| !f.inline)
            .map(|(i, f)| {
                json!({"size": f.data.len(), "url": format!("{base_url}/v3/domains/{}/messages/{}/attachments/{i}", core.domain, core.key),
                       "name": f.name, "filename": f.name, "content-type": f.content_type})
            })
            .collect();
        let content_ids: Map<String, Value> = self
            .files
            .iter()
            .filter(|f| f.inline)
            .map(|f| {
                (format!("<{}>", f.name), json!({"name": f.name, "content-type": f.content_type, "size": f.data.len()}))
            })
            .collect();
        let recipients: Vec<&str> = core.recipients.iter().map(|r| r.address.as_str()).collect();
        let mut body = json!({
            "recipients": recipients.join(", "),
            "sender": core.sender(),
            "from": core.from,
            "subject": core.subject,
            "body-plain": self.text.clone().unwrap_or_default(),
            "stripped-text": stripped(self.text.as_deref().unwrap_or("")),
            "stripped-signature": "",
            "body-html": self.html.clone().unwrap_or_default(),
            "stripped-html": self.html.clone().unwrap_or_default(),
            "attachments": attachments,
            "content-id-map": content_ids,
            "message-headers": self.headers.iter().map(|(k, v)| json!([k, v])).collect::<Vec<_>>(),
        });
        if let Some(map) = body.as_object_mut() {
            for (name, value) in &self.headers {
                map.entry(name.clone()).or_insert_with(|| json!(value));
            }
        }
        body
    }

    /// `messages_get` with `Accept: message/rfc2822`.
    pub fn to_rfc2822_json(&self) -> Value {
        let core = &self.core;
        let recipients: Vec<&str> = core.recipients.iter().map(|r| r.address.as_str()).collect();
        json!({"recipients": recipients.join(", "), "sender": core.sender(), "from": core.from,
               "subject": core.subject, "body-mime": self.mime()})
    }
}

/// The seed of a built message's MIME boundary: the start of its storage key.
pub fn mime_seed(key: &str) -> &str {
    key.get(..16).unwrap_or(key)
}

/// The text without a trailing `-- ` signature block.
fn stripped(text: &str) -> String {
    text.split("\n-- \n").next().unwrap_or(text).trim_end().to_owned()
}

/// The bare address of `Name <a@b.c>` or `a@b.c`, if it is one.
pub fn parse_address(item: &str) -> Option<String> {
    let item = item.trim();
    let address = match (item.rfind('<'), item.rfind('>')) {
        (Some(open), Some(close)) if open < close && item[close + 1..].trim().is_empty() => &item[open + 1..close],
        (None, None) => item,
        _ => return None,
    };
    let address = address.trim();
    valid_address(address).then(|| address.to_owned())
}

/// `local@domain.tld`: no spaces or brackets, one `@`, a dotted domain of letters, digits and
/// hyphens.
pub fn valid_address(address: &str) -> bool {
    let Some((local, domain)) = address.rsplit_once('@') else {
        return false;
    };
    !local.is_empty()
        && local.len() <= 64
        && !local.starts_with('.')
        && !local.ends_with('.')
        && local.chars().all(|c| c.is_ascii_graphic() && !"<>()[]\\,;:@\"".contains(c))
        && valid_domain_name(domain)
}

/// A domain name Mailgun accepts: dot-separated labels of letters, digits and hyphens.
pub fn valid_domain_name(name: &str) -> bool {
    let labels: Vec<&str> = name.split('.').collect();
    name.len() <= 253
        && labels.len() >= 2
        && labels.iter().all(|l| {
            !l.is_empty()
                && l.len() <= 63
                && !l.starts_with('-')
                && !l.ends_with('-')
                && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
        })
}

/// Splits a recipients field at commas outside quotes and angle brackets.
pub fn split_addresses(field: &str) -> Vec<String> {
    let mut items = Vec::new();
    let mut current = String::new();
    let (mut quoted, mut angle) = (false, false);
    for c in field.chars() {
        match c {
            '"' => quoted = !quoted,
            '<' if !quoted => angle = true,
            '>' if !quoted => angle = false,
            ',' if !quoted && !angle => {
                items.push(std::mem::take(&mut current));
                continue;
            }
            _ => {}
        }
        current.push(c);
    }
    items.push(current);
    items.into_iter().map(|s| s.trim().to_owned()).filter(|s| !s.is_empty()).collect()
}

/// Every address of a repeated, comma-separated field, each checked (`'field' parameter is not a
/// valid address`).
fn addresses(form: &Query, field: &str) -> Result<(Vec<String>, Vec<String>), MailgunError> {
    let mut shown = Vec::new();
    let mut bare = Vec::new();
    for value in form.all(field) {
        for item in split_addresses(value) {
            let address = parse_address(&item).ok_or_else(|| {
                MailgunError::bad_request(format!(
                    "'{field}' parameter is not a valid address. please check documentation"
                ))
            })?;
            shown.push(item);
            bare.push(address);
        }
    }
    Ok((shown, bare))
}

/// A yes/no option (`yes`, `no`, `true`, `false`, `True`, `1`, `0`, `htmlonly` counts as yes).
fn flag(form: &Query, name: &str, default: bool) -> Result<bool, MailgunError> {
    match form.get(name) {
        None => Ok(default),
        Some(v) if v.eq_ignore_ascii_case("htmlonly") => Ok(true),
        Some(v) => super::parse_bool(v)
            .ok_or_else(|| MailgunError::bad_request(format!("{name} parameter is not a valid value: {v}"))),
    }
}

/// A send checked and read, before the domain's rules and storing.
#[derive(Debug)]
pub struct Draft {
    pub from: String,
    pub subject: String,
    pub to_header: String,
    /// Envelope recipients (to, cc, bcc) before list expansion.
    pub envelope: Vec<String>,
    pub headers: Vec<(String, String)>,
    pub text: Option<String>,
    pub html: Option<String>,
    pub files: Vec<FilePart>,
    pub tags: Vec<String>,
    pub user_variables: Map<String, Value>,
    pub recipient_variables: Map<String, Value>,
    pub testmode: bool,
    pub tracking: bool,
    pub deliver_at_ms: Option<i64>,
    /// The MIME as sent (`messages.mime`); built when stored otherwise.
    pub mime: Option<String>,
}

/// The options every send takes (`o:`, `h:`, `v:`, `recipient-variables`).
fn options(form: &Query, now_ms: i64, draft: &mut Draft) -> Result<(), MailgunError> {
    let tags: Vec<String> = form
        .all("o:tag")
        .flat_map(|t| t.split(','))
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(str::to_owned)
        .collect();
    if tags.len() > MAX_TAGS {
        return Err(MailgunError::bad_request(format!(
            "Too many tags: a message may carry at most {MAX_TAGS}, not {}",
            tags.len()
        )));
    }
    draft.tags = tags;
    draft.testmode = flag(form, "o:testmode", false)?;
    let tracking = flag(form, "o:tracking", true)?;
    let opens = flag(form, "o:tracking-opens", tracking)?;
    draft.tracking = opens;
    flag(form, "o:tracking-clicks", tracking)?;
    flag(form, "o:dkim", true)?;
    flag(form, "o:require-tls", false)?;
    flag(form, "o:skip-verification", false)?;
    if let Some(when) = form.get("o:deliverytime") {
        let at = parse_time(when).ok_or_else(|| MailgunError::bad_request("invalid delivery time format"))?;
        if at > now_ms + MAX_SCHEDULE_MS {
            return Err(MailgunError::bad_request("delivery time can't be more than 3 days in the future"));
        }
        draft.deliver_at_ms = Some(at.max(now_ms));
    }
    for (key, value) in &form.pairs {
        if let Some(name) = key.strip_prefix("h:") {
            if !name.is_empty() {
                draft.headers.push((name.to_owned(), value.clone()));
            }
        } else if let Some(name) = key.strip_prefix("v:") {
            if !name.is_empty() {
                let parsed = serde_json::from_str::<Value>(value).ok().filter(|v| v.is_object() || v.is_array());
                draft.user_variables.insert(name.to_owned(), parsed.unwrap_or_else(|| json!(value)));
            }
        }
    }
    if let Some(vars) = form.get("recipient-variables") {
        match serde_json::from_str::<Value>(vars) {
            Ok(Value::Object(map)) => draft.recipient_variables = map,
            _ => return Err(MailgunError::bad_request("recipient-variables parameter is not a valid JSON")),
        }
    }
    let options_size: usize = form
        .pairs
        .iter()
        .filter(|(k, _)| ["o:", "h:", "v:", "t:"].iter().any(|p| k.starts_with(p)))
        .map(|(k, v)| k.len() + v.len())
        .sum();
    if options_size > 16 * 1024 {
        return Err(MailgunError::bad_request("The total size of o:, h:, v: and t: parameters exceeds 16 KB"));
    }
    Ok(())
}

fn envelope(form: &Query) -> Result<(Vec<String>, Vec<String>), MailgunError> {
    if form.all("to").all(|v| v.trim().is_empty()) {
        return Err(MailgunError::bad_request("'to' parameter is missing"));
    }
    let (to_shown, mut all) = addresses(form, "to")?;
    all.extend(addresses(form, "cc")?.1);
    all.extend(addresses(form, "bcc")?.1);
    if all.len() > MAX_RECIPIENTS {
        return Err(MailgunError::bad_request(format!("Too many recipients, max is {MAX_RECIPIENTS}")));
    }
    Ok((to_shown, all))
}

/// `POST /v3/{domain}/messages`.
pub fn read_send(form: &Query, files: Vec<FilePart>, now_ms: i64) -> Result<Draft, MailgunError> {
    let from = form.get("from").ok_or_else(|| MailgunError::bad_request("'from' parameter is missing"))?;
    if parse_address(from).is_none() {
        return Err(MailgunError::bad_request("'from' parameter is not a valid address. please check documentation"));
    }
    let (to_shown, envelope) = envelope(form)?;
    let subject = form.get("subject").ok_or_else(|| MailgunError::bad_request("'subject' parameter is missing"))?;
    let (text, html) = (form.get("text"), form.get("html").or_else(|| form.get("amp-html")));
    if text.is_none() && html.is_none() && form.get("template").is_none() {
        return Err(MailgunError::bad_request(
            "Need at least one of 'text', 'html', 'amp-html' or 'template' parameters specified",
        ));
    }
    if form.get("html").is_some() && form.get("template").is_some() {
        return Err(MailgunError::bad_request("html and template parameters are mutually exclusive"));
    }
    let mut cc_header = Vec::new();
    for value in form.all("cc") {
        cc_header.extend(split_addresses(value));
    }
    let mut draft = Draft {
        from: from.to_owned(),
        subject: subject.to_owned(),
        to_header: to_shown.join(", "),
        envelope,
        headers: Vec::new(),
        text: text.map(str::to_owned),
        html: html.map(str::to_owned),
        files,
        tags: Vec::new(),
        user_variables: Map::new(),
        recipient_variables: Map::new(),
        testmode: false,
        tracking: true,
        deliver_at_ms: None,
        mime: None,
    };
    options(form, now_ms, &mut draft)?;
    if !cc_header.is_empty() {
        draft.headers.insert(0, ("Cc".into(), cc_header.join(", ")));
    }
    Ok(draft)
}

/// `POST /v3/{domain}/messages.mime`: `to` from the form, the rest from the MIME in the
/// `message` file part.
pub fn read_mime(
    form: &Query,
    message: Option<&[u8]>,
    message_is_text: bool,
    now_ms: i64,
) -> Result<Draft, MailgunError> {
    let (_, envelope) = envelope(form)?;
    let raw = match message {
        Some(raw) if !message_is_text => raw,
        Some(_) => return Err(MailgunError::bad_request("'message' parameter is not a file")),
        None => return Err(MailgunError::bad_request("'message' parameter is missing")),
    };
    let parsed = mime::parse(raw).map_err(|e| MailgunError::bad_request(format!("Invalid MIME message: {e}")))?;
    let from = parsed.header("From").ok_or_else(|| MailgunError::bad_request("'from' parameter is missing"))?;
    if parse_address(from).is_none() {
        return Err(MailgunError::bad_request("'from' parameter is not a valid address. please check documentation"));
    }
    let mut draft = Draft {
        from: from.to_owned(),
        subject: parsed.header("Subject").unwrap_or("").to_owned(),
        to_header: parsed.header("To").unwrap_or("").to_owned(),
        envelope,
        headers: Vec::new(),
        text: parsed.text.clone(),
        html: parsed.html.clone(),
        files: parsed.files.clone(),
        tags: Vec::new(),
        user_variables: Map::new(),
        recipient_variables: Map::new(),
        testmode: false,
        tracking: true,
        deliver_at_ms: None,
        mime: Some(String::from_utf8_lossy(raw).into_owned()),
    };
    options(form, now_ms, &mut draft)?;
    // The message's own headers come first; `h:` options are added after them.
    let mut headers = parsed.headers;
    headers.retain(|(k, _)| !k.eq_ignore_ascii_case("content-type") && !k.eq_ignore_ascii_case("mime-version"));
    headers.append(&mut draft.headers);
    draft.headers = headers;
    Ok(draft)
}

/// The headers a sent message carries, Mailgun's own `X-Mailgun-*` included.
pub fn headers_of(draft: &Draft, message_id: &str, now_ms: i64) -> Vec<(String, String)> {
    if draft.mime.is_some() {
        let mut headers = draft.headers.clone();
        if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("message-id")) {
            headers.push(("Message-Id".into(), format!("<{message_id}>")));
        }
        return headers;
    }
    let mut headers = vec![
        ("From".to_owned(), draft.from.clone()),
        ("To".to_owned(), draft.to_header.clone()),
        ("Subject".to_owned(), draft.subject.clone()),
        ("Message-Id".to_owned(), format!("<{message_id}>")),
        ("Date".to_owned(), rfc2822(now_ms, "+0000")),
    ];
    headers.extend(draft.headers.iter().cloned());
    for tag in &draft.tags {
        headers.push(("X-Mailgun-Tag".into(), tag.clone()));
    }
    if !draft.user_variables.is_empty() {
        headers.push(("X-Mailgun-Variables".into(), Value::Object(draft.user_variables.clone()).to_string()));
    }
    headers
}
