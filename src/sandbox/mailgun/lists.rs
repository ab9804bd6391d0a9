//! Mailgun mailing lists and their members (api/mailgun.md §4 `mailing_lists_*`, §5, §7.6)
//! without HTTP: create, read, update (a rename carries the members along), delete, both list
//! paging styles (`skip`/`limit` with `total_count`, and `/pages` with absolute `paging` URLs
//! pivoting on an address, which is what both SDKs follow), members added one at a time or in
//! bulk with upsert, and the subscribed members a send to the list expands to.
//!
//! Every change is checked in full before anything is stored, so a refused call changes nothing.
//! Addresses are matched without regard to case (Mailgun treats `Dev@…` and `dev@…` as one list)
//! and ordered by their lower-cased form, which is also the paging pivot.

use std::collections::BTreeMap;

use axum::http::Method;
use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};
use serde_json::{json, Map, Value};

use super::dates::rfc2822;
use super::refusal::Refusal;
use super::validation;
use crate::sandbox::paging::encode_query;
use crate::sandbox::request::Query;

/// Who may post to a list.
pub const ACCESS_LEVELS: &[&str] = &["readonly", "members", "everyone"];
/// Where replies to list mail go.
pub const REPLY_PREFERENCES: &[&str] = &["list", "sender"];
/// `limit` of `/lists`, `/lists/pages` and both member listings when none is sent.
const DEFAULT_LIMIT: usize = 100;
/// The largest `limit` these listings accept (Mailgun documents 100 for members).
const MAX_LIMIT: usize = 100;
/// The most entries one `members.json` upload may carry.
pub const MAX_BULK_MEMBERS: usize = 1000;
const DAY_MS: i64 = 86_400_000;

/// A mailing list and its members (keyed by lower-cased address).
#[derive(Clone, Debug, PartialEq)]
struct MailingList {
    address: String,
    name: String,
    description: String,
    access_level: String,
    reply_preference: String,
    created_ms: i64,
    members: BTreeMap<String, Member>,
}

/// One member of a list; unsubscribed members stay listed but receive nothing.
#[derive(Clone, Debug, PartialEq)]
struct Member {
    address: String,
    name: String,
    vars: Map<String, Value>,
    subscribed: bool,
}

/// Mailing lists kept per region; creating one more drops the earliest created.
pub const MAX_LISTS: usize = 1_000;
/// Members a list holds in the sandbox; adding past it is refused (the simulator's limit, not
/// Mailgun's: dropping members silently would change who a send reaches).
pub const MAX_MEMBERS: usize = 100_000;

/// The mailing lists of one region.
#[derive(Clone, Debug, PartialEq)]
pub struct Lists {
    lists: BTreeMap<String, MailingList>,
    /// Lists kept ([`MAX_LISTS`]; lowered in tests).
    pub cap: usize,
    /// Members a list holds ([`MAX_MEMBERS`]; lowered in tests).
    pub member_cap: usize,
    /// Numbers the `task-id` of bulk uploads, so each upload can be told apart in a log.
    uploads: u64,
}

impl Default for Lists {
    fn default() -> Lists {
        Lists { lists: BTreeMap::new(), cap: MAX_LISTS, member_cap: MAX_MEMBERS, uploads: 0 }
    }
}

impl Lists {
    /// No lists: the EU region's start, and a clean slate for tests.
    pub fn new() -> Lists {
        Lists::default()
    }

    /// The demo lists of the US region (see "Seed" below). `now_ms` anchors created_at.
    pub fn seeded(now_ms: i64) -> Lists {
        let mut lists = Lists::new();
        let mut developers = MailingList::new("developers@mg.example.com", now_ms - 30 * DAY_MS);
        developers.name = "Developers".into();
        developers.description = "Engineers who build against the API".into();
        developers.access_level = "members".into();
        let mut bob_vars = Map::new();
        bob_vars.insert("team".into(), "api".into());
        for (address, name, vars, subscribed) in [
            ("alice@example.com", "Alice", Map::new(), true),
            ("bob@example.com", "Bob", bob_vars, true),
            ("carol@example.com", "Carol", Map::new(), false),
        ] {
            developers.insert(Member { address: address.into(), name: name.into(), vars, subscribed });
        }
        let mut newsletter = MailingList::new("newsletter@mg.example.com", now_ms - 14 * DAY_MS);
        newsletter.name = "Newsletter".into();
        newsletter.description = "Product news, once a week".into();
        for n in 1..=25 {
            newsletter.insert(Member {
                address: format!("reader{n:02}@example.com"),
                name: format!("Reader {n}"),
                vars: Map::new(),
                subscribed: true,
            });
        }
        lists.lists.insert(key(&developers.address), developers);
        lists.lists.insert(key(&newsletter.address), newsletter);
        lists
    }

    /// Everything under `/v3/lists`: `rest` is the segments after `lists`, e.g. [], ["pages"],
    /// [list], [list, "members"], [list, "members", "pages"], [list, "members.json"],
    /// [list, "members", member]. `base_url` (scheme://host:port, no slash) builds the absolute
    /// `paging` URLs. Unknown paths and methods: 404 {"message": "Not Found: ... is not simulated ..."}.
    pub fn handle(
        &mut self,
        method: &Method,
        rest: &[String],
        query: &Query,
        form: &Query,
        base_url: &str,
        now_ms: i64,
    ) -> Result<Value, Refusal> {
        let segments: Vec<&str> = rest.iter().map(String::as_str).collect();
        match (method.as_str(), segments.as_slice()) {
            ("GET", []) => self.list_offset(query),
            ("POST", []) => self.create(form, now_ms),
            ("GET", ["pages"]) => self.list_pages(query, base_url),
            ("GET", [list]) => Ok(json!({ "list": self.find(list)?.to_json() })),
            ("PUT", [list]) => self.update(list, form),
            ("DELETE", [list]) => self.delete(list),
            ("GET", [list, "members"]) => self.members_offset(list, query),
            ("POST", [list, "members"]) => self.add_member(list, form),
            ("GET", [list, "members", "pages"]) => self.members_pages(list, query, base_url),
            ("POST", [list, "members.json"]) => self.add_members(list, form),
            ("GET", [list, "members", member]) => {
                Ok(json!({ "member": self.find(list)?.find(list, member)?.to_json() }))
            }
            ("PUT", [list, "members", member]) => self.update_member(list, member, form),
            ("DELETE", [list, "members", member]) => self.delete_member(list, member),
            _ => Err(Refusal::not_found(format!(
                "Not Found: {method} /v3/lists{}{} is not simulated by the opsdeck sandbox",
                if segments.is_empty() { "" } else { "/" },
                segments.join("/")
            ))),
        }
    }

    /// The subscribed members of a list (address, vars object), or None when there is no such
    /// list: sending to a list address delivers to these.
    pub fn subscribed_members(&self, list_address: &str) -> Option<Vec<(String, Map<String, Value>)>> {
        let list = self.lists.get(&key(list_address))?;
        Some(list.members.values().filter(|m| m.subscribed).map(|m| (m.address.clone(), m.vars.clone())).collect())
    }

    fn find(&self, address: &str) -> Result<&MailingList, Refusal> {
        self.lists.get(&key(address)).ok_or_else(|| list_not_found(address))
    }

    fn find_mut(&mut self, address: &str) -> Result<&mut MailingList, Refusal> {
        self.lists.get_mut(&key(address)).ok_or_else(|| list_not_found(address))
    }

    fn create(&mut self, form: &Query, now_ms: i64) -> Result<Value, Refusal> {
        let address = required_address(form, "address")?;
        // Creating a list that exists is answered 200 "Mailing list has been created" (recorded
        // against the v3 API in 2016: Open Collective's second create of backers@…, with no
        // delete between). What it does to the list is not known: the fields sent are taken,
        // and its members and created_at kept.
        if let Some(existing) = self.lists.get(&key(address)) {
            let mut list = existing.clone();
            list.apply(form)?;
            let body = json!({ "list": list.to_json(), "message": "Mailing list has been created" });
            self.lists.insert(key(address), list);
            return Ok(body);
        }
        let mut list = MailingList::new(address, now_ms);
        list.apply(form)?;
        let body = json!({ "list": list.to_json(), "message": "Mailing list has been created" });
        self.lists.insert(key(address), list);
        while self.lists.len() > self.cap.max(1) {
            let new = key(address);
            let earliest = self
                .lists
                .iter()
                .filter(|(k, _)| **k != new)
                .min_by_key(|(k, l)| (l.created_ms, (*k).clone()))
                .map(|(k, _)| k.clone());
            if let Some(k) = earliest {
                self.lists.remove(&k);
            }
        }
        Ok(body)
    }

    fn update(&mut self, address: &str, form: &Query) -> Result<Value, Refusal> {
        let mut list = self.find(address)?.clone();
        list.apply(form)?;
        let new_address = match form.get("address") {
            Some(new) => checked_address(new, "address")?.to_owned(),
            None => list.address.clone(),
        };
        let (old_key, new_key) = (key(address), key(&new_address));
        if new_key != old_key && self.lists.contains_key(&new_key) {
            return Err(Refusal::bad_request(format!("Mailing list {new_address} already exists")));
        }
        // A rename moves the whole list, members included, to its new key.
        list.address = new_address;
        let body = json!({ "list": list.to_json(), "message": "Mailing list has been updated" });
        self.lists.remove(&old_key);
        self.lists.insert(new_key, list);
        Ok(body)
    }

    fn delete(&mut self, address: &str) -> Result<Value, Refusal> {
        let list = self.lists.remove(&key(address)).ok_or_else(|| list_not_found(address))?;
        Ok(json!({ "address": list.address, "message": "Mailing list has been removed" }))
    }

    fn list_offset(&self, query: &Query) -> Result<Value, Refusal> {
        let limit = count_param(query, "limit", DEFAULT_LIMIT, MAX_LIMIT)?;
        let skip = count_param(query, "skip", 0, usize::MAX)?;
        let wanted = query.get("address").map(key);
        let matching: Vec<&MailingList> =
            self.lists.iter().filter(|(k, _)| wanted.as_ref().is_none_or(|w| w == *k)).map(|(_, l)| l).collect();
        let items: Vec<Value> = matching.iter().skip(skip).take(limit).map(|l| l.to_json()).collect();
        Ok(json!({ "total_count": matching.len(), "items": items }))
    }

    fn list_pages(&self, query: &Query, base_url: &str) -> Result<Value, Refusal> {
        let page = PageRequest::parse(query)?;
        let keys: Vec<&String> = self.lists.keys().collect();
        let window = page.window(&keys);
        let items: Vec<Value> = window.iter().filter_map(|k| self.lists.get(*k)).map(MailingList::to_json).collect();
        let url = format!("{base_url}/v3/lists/pages");
        Ok(json!({ "items": items, "paging": page.paging(&url, &[], &window) }))
    }

    fn members_offset(&self, list: &str, query: &Query) -> Result<Value, Refusal> {
        let list = self.find(list)?;
        let limit = count_param(query, "limit", DEFAULT_LIMIT, MAX_LIMIT)?;
        let skip = count_param(query, "skip", 0, usize::MAX)?;
        let subscribed = optional_bool(query, "subscribed")?;
        let wanted = query.get("address").map(key);
        let matching: Vec<&Member> = list
            .members
            .iter()
            .filter(|(k, m)| wanted.as_ref().is_none_or(|w| w == *k) && subscribed.is_none_or(|s| m.subscribed == s))
            .map(|(_, m)| m)
            .collect();
        let items: Vec<Value> = matching.iter().skip(skip).take(limit).map(|m| m.to_json()).collect();
        Ok(json!({ "total_count": matching.len(), "items": items }))
    }

    fn members_pages(&self, list_address: &str, query: &Query, base_url: &str) -> Result<Value, Refusal> {
        let list = self.find(list_address)?;
        let page = PageRequest::parse(query)?;
        let subscribed = optional_bool(query, "subscribed")?;
        let keys: Vec<&String> =
            list.members.iter().filter(|(_, m)| subscribed.is_none_or(|s| m.subscribed == s)).map(|(k, _)| k).collect();
        let window = page.window(&keys);
        let items: Vec<Value> = window.iter().filter_map(|k| list.members.get(*k)).map(Member::to_json).collect();
        let url = format!("{base_url}/v3/lists/{}/members/pages", utf8_percent_encode(&list.address, PATH_SEGMENT));
        // The filter rides along in every link, so following them stays inside the same view.
        let extra: Vec<(&str, String)> =
            subscribed.map(|s| ("subscribed", if s { "yes" } else { "no" }.to_owned())).into_iter().collect();
        Ok(json!({ "items": items, "paging": page.paging(&url, &extra, &window) }))
    }

    fn add_member(&mut self, list_address: &str, form: &Query) -> Result<Value, Refusal> {
        let list = self.find(list_address)?;
        let upsert = optional_bool(form, "upsert")?.unwrap_or(false);
        let (address, display_name) = parse_member_address(form.get("address"))?;
        let fields = MemberFields::from_form(form, display_name)?;
        let existing = list.members.get(&key(&address));
        if existing.is_some() && !upsert {
            return Err(Refusal::bad_request(format!("Address already exists '{address}'")));
        }
        if existing.is_none() && list.members.len() >= self.member_cap {
            return Err(self.members_full());
        }
        let member = fields.apply(existing.cloned().unwrap_or_else(|| Member::new(&address)));
        let body = json!({ "member": member.to_json(), "message": "Mailing list member has been created" });
        self.find_mut(list_address)?.insert(member);
        Ok(body)
    }

    fn add_members(&mut self, list_address: &str, form: &Query) -> Result<Value, Refusal> {
        let mut list = self.find(list_address)?.clone();
        let upsert = optional_bool(form, "upsert")?.unwrap_or(false);
        let raw = form.get("members").ok_or_else(|| Refusal::bad_request("Missing parameter 'members'"))?;
        let entries = match serde_json::from_str::<Value>(raw) {
            Ok(Value::Array(entries)) => entries,
            _ => return Err(Refusal::bad_request("'members' parameter should be a JSON array")),
        };
        if entries.len() > MAX_BULK_MEMBERS {
            return Err(Refusal::bad_request(format!(
                "Too many members in one request: {}, max is {MAX_BULK_MEMBERS}",
                entries.len()
            )));
        }
        // Every entry is read before any is stored, so one bad entry refuses the whole upload.
        let parsed: Vec<(String, MemberFields)> = entries.iter().map(bulk_entry).collect::<Result<_, _>>()?;
        for (address, fields) in parsed {
            match list.members.get(&key(&address)) {
                // Without upsert Mailgun leaves existing members as they are and adds the rest.
                Some(_) if !upsert => {}
                existing => {
                    let member = fields.apply(existing.cloned().unwrap_or_else(|| Member::new(&address)));
                    list.insert(member);
                }
            }
        }
        if list.members.len() > self.member_cap {
            return Err(self.members_full());
        }
        self.uploads += 1;
        let body = json!({
            "list": list.to_json(),
            "message": "Mailing list has been updated",
            "task-id": format!("{:032x}", self.uploads),
        });
        self.lists.insert(key(&list.address), list);
        Ok(body)
    }

    fn members_full(&self) -> Refusal {
        Refusal::bad_request(format!(
            "The sandbox keeps at most {} members a list (its own limit, not Mailgun's)",
            self.member_cap
        ))
    }

    fn update_member(&mut self, list_address: &str, member_address: &str, form: &Query) -> Result<Value, Refusal> {
        let list = self.find(list_address)?;
        let current = list.find(list_address, member_address)?.clone();
        let (new_address, display_name) = match form.get("address") {
            Some(raw) => parse_member_address(Some(raw))?,
            None => (current.address.clone(), None),
        };
        let fields = MemberFields::from_form(form, display_name)?;
        let (old_key, new_key) = (key(member_address), key(&new_address));
        if new_key != old_key && list.members.contains_key(&new_key) {
            return Err(Refusal::bad_request(format!("Address already exists '{new_address}'")));
        }
        let mut member = fields.apply(current);
        member.address = new_address;
        let body = json!({ "member": member.to_json(), "message": "Mailing list member has been updated" });
        let list = self.find_mut(list_address)?;
        list.members.remove(&old_key);
        list.insert(member);
        Ok(body)
    }

    fn delete_member(&mut self, list_address: &str, member_address: &str) -> Result<Value, Refusal> {
        let list = self.find_mut(list_address)?;
        let member =
            list.members.remove(&key(member_address)).ok_or_else(|| member_not_found(member_address, list_address))?;
        Ok(json!({ "member": { "address": member.address }, "message": "Mailing list member has been deleted" }))
    }
}

impl MailingList {
    fn new(address: &str, created_ms: i64) -> MailingList {
        MailingList {
            address: address.to_owned(),
            name: String::new(),
            description: String::new(),
            access_level: "readonly".into(),
            reply_preference: "list".into(),
            created_ms,
            members: BTreeMap::new(),
        }
    }

    /// Takes `name`, `description`, `access_level` and `reply_preference` from a form; checks
    /// all of them before changing any.
    fn apply(&mut self, form: &Query) -> Result<(), Refusal> {
        let access_level = match form.get("access_level") {
            Some(level) if ACCESS_LEVELS.contains(&level) => Some(level),
            Some(level) => {
                return Err(Refusal::bad_request(format!(
                    "Invalid access level '{level}'. It can be any of: 'readonly', 'members', 'everyone'."
                )))
            }
            None => None,
        };
        let reply_preference = match form.get("reply_preference") {
            Some(preference) if REPLY_PREFERENCES.contains(&preference) => Some(preference),
            Some(preference) => {
                return Err(Refusal::bad_request(format!(
                    "Invalid reply preference '{preference}'. It can be any of: 'sender', 'list'"
                )))
            }
            None => None,
        };
        if let Some(level) = access_level {
            level.clone_into(&mut self.access_level);
        }
        if let Some(preference) = reply_preference {
            preference.clone_into(&mut self.reply_preference);
        }
        // `has` rather than `get`: sending `description=` clears it.
        if form.has("name") {
            self.name = form.all("name").next().unwrap_or_default().to_owned();
        }
        if form.has("description") {
            self.description = form.all("description").next().unwrap_or_default().to_owned();
        }
        Ok(())
    }

    fn insert(&mut self, member: Member) {
        self.members.insert(key(&member.address), member);
    }

    fn find(&self, list_address: &str, member_address: &str) -> Result<&Member, Refusal> {
        self.members.get(&key(member_address)).ok_or_else(|| member_not_found(member_address, list_address))
    }

    fn to_json(&self) -> Value {
        json!({
            "address": self.address,
            "name": self.name,
            "description": self.description,
            "access_level": self.access_level,
            "reply_preference": self.reply_preference,
            "created_at": rfc2822(self.created_ms, "-0000"),
            "members_count": self.members.len(),
        })
    }
}

impl Member {
    fn new(address: &str) -> Member {
        Member { address: address.to_owned(), name: String::new(), vars: Map::new(), subscribed: true }
    }

    fn to_json(&self) -> Value {
        json!({ "address": self.address, "name": self.name, "subscribed": self.subscribed, "vars": self.vars })
    }
}

/// The member fields a request sets; `None` leaves the stored value (or the default) alone.
#[derive(Clone, Debug, Default)]
struct MemberFields {
    name: Option<String>,
    vars: Option<Map<String, Value>>,
    subscribed: Option<bool>,
}

impl MemberFields {
    /// From a form: `name` (else the display name of `Name <address>`), `vars` (a JSON object
    /// string) and `subscribed` (yes/no/true/false in any case).
    fn from_form(form: &Query, display_name: Option<String>) -> Result<MemberFields, Refusal> {
        let name = if form.has("name") { form.all("name").next().map(str::to_owned) } else { display_name };
        let vars = match form.get("vars") {
            Some(raw) => Some(parse_vars(&Value::String(raw.to_owned()))?),
            None => None,
        };
        Ok(MemberFields { name, vars, subscribed: optional_bool(form, "subscribed")? })
    }

    fn apply(self, mut member: Member) -> Member {
        if let Some(name) = self.name {
            member.name = name;
        }
        if let Some(vars) = self.vars {
            member.vars = vars;
        }
        if let Some(subscribed) = self.subscribed {
            member.subscribed = subscribed;
        }
        member
    }
}

/// One entry of a `members.json` upload: an address string, or an object with `address` and
/// optionally `name`, `vars` (object or JSON string) and `subscribed` (boolean or yes/no).
fn bulk_entry(entry: &Value) -> Result<(String, MemberFields), Refusal> {
    match entry {
        Value::String(text) => {
            let (address, name) = parse_member_address(Some(text))?;
            Ok((address, MemberFields { name, ..MemberFields::default() }))
        }
        Value::Object(fields) => {
            let (address, display_name) = parse_member_address(fields.get("address").and_then(Value::as_str))?;
            let name = match fields.get("name") {
                Some(Value::String(name)) => Some(name.clone()),
                Some(Value::Null) | None => display_name,
                Some(_) => return Err(Refusal::bad_request("Member 'name' should be a string")),
            };
            let vars = match fields.get("vars") {
                Some(Value::Null) | None => None,
                Some(vars) => Some(parse_vars(vars)?),
            };
            let subscribed = match fields.get("subscribed") {
                Some(Value::Bool(b)) => Some(*b),
                Some(Value::String(text)) => Some(parse_bool("subscribed", text)?),
                Some(Value::Null) | None => None,
                Some(other) => return Err(invalid_bool("subscribed", &other.to_string())),
            };
            Ok((address, MemberFields { name, vars, subscribed }))
        }
        other => Err(Refusal::bad_request(format!("Invalid member entry {other}: expected an address or an object"))),
    }
}

/// `vars` as an object: sent as a JSON string in forms, or already an object in bulk entries.
fn parse_vars(vars: &Value) -> Result<Map<String, Value>, Refusal> {
    let parsed = match vars {
        Value::String(text) => serde_json::from_str::<Value>(text).ok(),
        other => Some(other.clone()),
    };
    match parsed {
        Some(Value::Object(map)) => Ok(map),
        _ => Err(Refusal::bad_request("'vars' parameter should be a valid JSON object")),
    }
}

/// A member address as sent, plain or `Name <address>`, checked; the display name if any.
fn parse_member_address(raw: Option<&str>) -> Result<(String, Option<String>), Refusal> {
    let raw = raw.map(str::trim).filter(|r| !r.is_empty()).ok_or_else(|| missing("address"))?;
    if let Some((name, rest)) = raw.split_once('<') {
        if let Some(address) = rest.strip_suffix('>') {
            let name = name.trim().trim_matches('"').trim();
            let address = checked_address(address.trim(), "address")?;
            return Ok((address.to_owned(), (!name.is_empty()).then(|| name.to_owned())));
        }
    }
    Ok((checked_address(raw, "address")?.to_owned(), None))
}

/// The required address field `field` of a form, checked.
fn required_address<'a>(form: &'a Query, field: &str) -> Result<&'a str, Refusal> {
    checked_address(form.get(field).ok_or_else(|| missing(field))?.trim(), field)
}

fn checked_address<'a>(address: &'a str, field: &str) -> Result<&'a str, Refusal> {
    if validation::is_valid_address(address) {
        Ok(address)
    } else {
        Err(Refusal::bad_request(format!("'{field}' parameter is not a valid email address: '{address}'")))
    }
}

fn missing(field: &str) -> Refusal {
    Refusal::bad_request(format!("Missing parameter '{field}'"))
}

fn list_not_found(address: &str) -> Refusal {
    Refusal::not_found(format!("Mailing list {address} not found"))
}

fn member_not_found(member: &str, list: &str) -> Refusal {
    Refusal::not_found(format!("Member {member} of mailing list {list} not found"))
}

/// The lookup key of an address: lower-cased, so case never makes two lists or members.
fn key(address: &str) -> String {
    address.trim().to_lowercase()
}

/// A yes/no flag as Mailgun's clients send it (see [`super::parse_bool`]), or the 400 naming it.
pub(crate) fn parse_bool(field: &str, value: &str) -> Result<bool, Refusal> {
    super::parse_bool(value).ok_or_else(|| invalid_bool(field, value))
}

fn invalid_bool(field: &str, value: &str) -> Refusal {
    Refusal::bad_request(format!("Invalid '{field}' value '{value}': expected yes or no"))
}

fn optional_bool(form: &Query, field: &str) -> Result<Option<bool>, Refusal> {
    form.get(field).map(|v| parse_bool(field, v)).transpose()
}

/// A whole-number parameter (`limit`, `skip`) from `default`, refused above `max` with the
/// wording Mailgun uses for routes' `limit`.
pub(crate) fn count_param(query: &Query, name: &str, default: usize, max: usize) -> Result<usize, Refusal> {
    let Some(raw) = query.get(name) else {
        return Ok(default);
    };
    let value: usize = raw
        .trim()
        .parse()
        .map_err(|_| Refusal::bad_request(format!("The '{name}' parameter should be a non-negative integer")))?;
    if value > max {
        return Err(Refusal::bad_request(format!("The '{name}' parameter can't be larger than {max}")));
    }
    Ok(value)
}

/// Path characters kept as they are in paging URLs: unreserved ones and `@`, so a list address
/// reads naturally and still never breaks the path.
const PATH_SEGMENT: &AsciiSet =
    &NON_ALPHANUMERIC.remove(b'-').remove(b'_').remove(b'.').remove(b'~').remove(b'@').remove(b'+');

/// Which page of a `/pages` listing: `page` (`first`, `last`, `next`, `prev`/`previous`),
/// `address` (the pivot) and `limit`.
#[derive(Clone, Debug, PartialEq, Eq)]
struct PageRequest {
    direction: Direction,
    pivot: Option<String>,
    limit: usize,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Direction {
    First,
    Last,
    Next,
    Previous,
}

impl PageRequest {
    fn parse(query: &Query) -> Result<PageRequest, Refusal> {
        let direction = match query.get("page").map(str::to_ascii_lowercase).as_deref() {
            None | Some("first") => Direction::First,
            Some("last") => Direction::Last,
            Some("next") => Direction::Next,
            Some("prev" | "previous") => Direction::Previous,
            Some(_) => {
                return Err(Refusal::bad_request("The 'page' parameter should be one of: first, last, next, prev"))
            }
        };
        let limit = count_param(query, "limit", DEFAULT_LIMIT, MAX_LIMIT)?;
        Ok(PageRequest { direction, pivot: query.get("address").map(key), limit })
    }

    /// This page's keys out of `keys` (ascending): after the pivot for `next`, before it for
    /// `prev`; without a pivot `next` starts at the beginning and `prev` has nothing before it.
    fn window<'a>(&self, keys: &[&'a String]) -> Vec<&'a String> {
        let n = keys.len();
        let range = match (self.direction, &self.pivot) {
            (Direction::First, _) | (Direction::Next, None) => 0..self.limit.min(n),
            (Direction::Last, _) => n.saturating_sub(self.limit)..n,
            (Direction::Next, Some(pivot)) => {
                let start = keys.partition_point(|k| k.as_str() <= pivot.as_str());
                start..start.saturating_add(self.limit).min(n)
            }
            (Direction::Previous, Some(pivot)) => {
                let end = keys.partition_point(|k| k.as_str() < pivot.as_str());
                end.saturating_sub(self.limit)..end
            }
            (Direction::Previous, None) => 0..0,
        };
        keys[range].to_vec()
    }

    /// The absolute `paging` URLs: `next` pivots on this page's last address, `previous` on its
    /// first; an empty page keeps the pivot it was asked with, so following `next` past the end
    /// stays empty and `previous` leads back.
    fn paging(&self, url: &str, extra: &[(&str, String)], window: &[&String]) -> Value {
        let link = |page: &str, pivot: Option<&str>| {
            let mut pairs: Vec<(&str, String)> = vec![("page", page.to_owned())];
            if let Some(pivot) = pivot {
                pairs.push(("address", pivot.to_owned()));
            }
            pairs.push(("limit", self.limit.to_string()));
            pairs.extend(extra.iter().cloned());
            format!("{url}?{}", encode_query(&pairs))
        };
        let first = window.first().map(|k| k.as_str()).or(self.pivot.as_deref());
        let last = window.last().map(|k| k.as_str()).or(self.pivot.as_deref());
        json!({
            "first": link("first", None),
            "last": link("last", None),
            "next": link("next", last),
            "previous": link("prev", first),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_700_000_000_000;
    const BASE: &str = "http://127.0.0.1:7706";

    fn q(raw: &str) -> Query {
        Query::parse(raw).expect("UTF-8")
    }

    fn call(lists: &mut Lists, method: Method, path: &[&str], query: &str, form: &str) -> Result<Value, Refusal> {
        let rest: Vec<String> = path.iter().map(|s| (*s).to_owned()).collect();
        lists.handle(&method, &rest, &q(query), &q(form), BASE, NOW)
    }

    fn ok(lists: &mut Lists, method: Method, path: &[&str], query: &str, form: &str) -> Value {
        call(lists, method, path, query, form).expect("accepted")
    }

    fn refused(lists: &mut Lists, method: Method, path: &[&str], query: &str, form: &str) -> (u16, String) {
        let before = lists.clone();
        let refusal = call(lists, method, path, query, form).expect_err("refused");
        assert_eq!(*lists, before, "a refused call changed nothing");
        (refusal.status, refusal.body["message"].as_str().unwrap_or_default().to_owned())
    }

    /// Follows `next` links from the first page to the empty one.
    fn walk(lists: &mut Lists, path: &[&str], first_query: &str) -> Vec<String> {
        let mut seen = Vec::new();
        let mut query = first_query.to_owned();
        for _ in 0..100 {
            let page = ok(lists, Method::GET, path, &query, "");
            let items = page["items"].as_array().expect("items").clone();
            if items.is_empty() {
                return seen;
            }
            seen.extend(items.iter().map(|i| i["address"].as_str().unwrap_or_default().to_owned()));
            let next = page["paging"]["next"].as_str().expect("next").to_owned();
            assert!(next.starts_with(BASE), "absolute: {next}");
            query = next.split_once('?').map(|(_, q)| q.to_owned()).unwrap_or_default();
        }
        panic!("paging never ended");
    }

    #[test]
    fn dates_are_rfc2822() {
        assert_eq!(rfc2822(1_312_923_027_000, "-0000"), "Tue, 09 Aug 2011 20:50:27 -0000");
        assert_eq!(rfc2822(1_329_311_011_000, "GMT"), "Wed, 15 Feb 2012 13:03:31 GMT");
    }

    #[test]
    fn seed_has_the_contract_lists() {
        let mut lists = Lists::seeded(NOW);
        let developers = ok(&mut lists, Method::GET, &["developers@mg.example.com"], "", "");
        assert_eq!(developers["list"]["name"], "Developers");
        assert_eq!(developers["list"]["members_count"], 3);
        let bob = ok(&mut lists, Method::GET, &["developers@mg.example.com", "members", "bob@example.com"], "", "");
        assert_eq!(bob["member"]["vars"], json!({"team": "api"}));
        let newsletter = ok(&mut lists, Method::GET, &["newsletter@mg.example.com"], "", "");
        assert_eq!(newsletter["list"]["access_level"], "readonly");
        assert_eq!(newsletter["list"]["members_count"], 25);
        let subscribed = lists.subscribed_members("Developers@MG.example.com").expect("list exists");
        let addresses: Vec<&str> = subscribed.iter().map(|(a, _)| a.as_str()).collect();
        assert_eq!(addresses, ["alice@example.com", "bob@example.com"]);
        assert_eq!(subscribed[1].1.get("team"), Some(&json!("api")));
        assert_eq!(lists.subscribed_members("newsletter@mg.example.com").map(|m| m.len()), Some(25));
        assert!(lists.subscribed_members("nobody@mg.example.com").is_none());
    }

    #[test]
    fn create_defaults_and_validation() {
        let mut lists = Lists::new();
        let created = ok(&mut lists, Method::POST, &[], "", "address=dev%40mg.example.com&name=Dev");
        assert_eq!(created["message"], "Mailing list has been created");
        assert_eq!(
            created["list"],
            json!({"address": "dev@mg.example.com", "name": "Dev", "description": "", "access_level": "readonly",
                   "reply_preference": "list", "created_at": rfc2822(NOW, "-0000"), "members_count": 0})
        );
        assert_eq!(
            refused(&mut lists, Method::POST, &[], "", "address=ops%40mg.example.com&access_level=public"),
            (400, "Invalid access level 'public'. It can be any of: 'readonly', 'members', 'everyone'.".into())
        );
        assert_eq!(
            refused(&mut lists, Method::POST, &[], "", "address=ops%40mg.example.com&reply_preference=all"),
            (400, "Invalid reply preference 'all'. It can be any of: 'sender', 'list'".into())
        );
        assert_eq!(refused(&mut lists, Method::POST, &[], "", "name=x"), (400, "Missing parameter 'address'".into()));
        assert_eq!(refused(&mut lists, Method::POST, &[], "", "address=not-an-address").0, 400);
        // A create of an existing list (any case) is 200 and takes the fields sent; members and
        // created_at stay, and a bad field still refuses it.
        ok(&mut lists, Method::POST, &["dev@mg.example.com", "members"], "", "address=ann%40example.com");
        let again = ok(&mut lists, Method::POST, &[], "", "address=DEV%40mg.example.com&description=Again");
        assert_eq!(again["message"], "Mailing list has been created");
        assert_eq!(
            (&again["list"]["address"], &again["list"]["name"], &again["list"]["description"]),
            (&json!("dev@mg.example.com"), &json!("Dev"), &json!("Again"))
        );
        assert_eq!(again["list"]["members_count"], 1);
        assert_eq!(again["list"]["created_at"], rfc2822(NOW, "-0000"));
        assert_eq!(refused(&mut lists, Method::POST, &[], "", "address=dev%40mg.example.com&access_level=x").0, 400);
        let everyone = ok(
            &mut lists,
            Method::POST,
            &[],
            "",
            "address=all%40mg.example.com&access_level=everyone&reply_preference=sender&description=All",
        );
        assert_eq!(everyone["list"]["access_level"], "everyone");
        assert_eq!(everyone["list"]["reply_preference"], "sender");
        assert_eq!(everyone["list"]["description"], "All");
    }

    #[test]
    fn unknown_lists_members_and_paths_are_404() {
        let mut lists = Lists::seeded(NOW);
        let gone = (404, "Mailing list gone@mg.example.com not found".to_owned());
        assert_eq!(refused(&mut lists, Method::GET, &["gone@mg.example.com"], "", ""), gone);
        assert_eq!(refused(&mut lists, Method::PUT, &["gone@mg.example.com"], "", "name=x"), gone);
        assert_eq!(refused(&mut lists, Method::DELETE, &["gone@mg.example.com"], "", ""), gone);
        assert_eq!(
            refused(&mut lists, Method::POST, &["gone@mg.example.com", "members"], "", "address=a%40b.com"),
            gone
        );
        assert_eq!(refused(&mut lists, Method::GET, &["gone@mg.example.com", "members", "pages"], "", ""), gone);
        let member = (404, "Member zed@example.com of mailing list developers@mg.example.com not found".to_owned());
        let path = ["developers@mg.example.com", "members", "zed@example.com"];
        assert_eq!(refused(&mut lists, Method::GET, &path, "", ""), member);
        assert_eq!(refused(&mut lists, Method::PUT, &path, "", "name=Zed"), member);
        assert_eq!(refused(&mut lists, Method::DELETE, &path, "", ""), member);
        assert_eq!(
            refused(&mut lists, Method::PATCH, &["developers@mg.example.com"], "", ""),
            (
                404,
                "Not Found: PATCH /v3/lists/developers@mg.example.com is not simulated by the opsdeck sandbox".into()
            )
        );
        assert_eq!(
            refused(&mut lists, Method::GET, &["a", "b", "c", "d"], "", ""),
            (404, "Not Found: GET /v3/lists/a/b/c/d is not simulated by the opsdeck sandbox".into())
        );
    }

    #[test]
    fn update_renames_and_moves_members() {
        let mut lists = Lists::seeded(NOW);
        let updated = ok(
            &mut lists,
            Method::PUT,
            &["developers@mg.example.com"],
            "",
            "address=devs%40mg.example.com&description=New&access_level=everyone",
        );
        assert_eq!(updated["message"], "Mailing list has been updated");
        assert_eq!(updated["list"]["address"], "devs@mg.example.com");
        assert_eq!(updated["list"]["name"], "Developers");
        assert_eq!(updated["list"]["members_count"], 3);
        assert_eq!(refused(&mut lists, Method::GET, &["developers@mg.example.com"], "", "").0, 404);
        assert_eq!(lists.subscribed_members("devs@mg.example.com").map(|m| m.len()), Some(2));
        // Onto an existing list, or with a bad value: refused, nothing changed.
        assert_eq!(
            refused(&mut lists, Method::PUT, &["devs@mg.example.com"], "", "address=newsletter%40mg.example.com"),
            (400, "Mailing list newsletter@mg.example.com already exists".into())
        );
        assert_eq!(refused(&mut lists, Method::PUT, &["devs@mg.example.com"], "", "name=X&access_level=nope").0, 400);
        assert_eq!(refused(&mut lists, Method::PUT, &["devs@mg.example.com"], "", "address=bad").0, 400);
    }

    #[test]
    fn delete_removes_list_and_members() {
        let mut lists = Lists::seeded(NOW);
        let deleted = ok(&mut lists, Method::DELETE, &["newsletter@mg.example.com"], "", "");
        assert_eq!(
            deleted,
            json!({"address": "newsletter@mg.example.com", "message": "Mailing list has been removed"})
        );
        assert!(lists.subscribed_members("newsletter@mg.example.com").is_none());
        assert_eq!(ok(&mut lists, Method::GET, &[], "", "")["total_count"], 1);
    }

    #[test]
    fn list_offset_paging_and_filter() {
        let mut lists = Lists::new();
        for n in 0..7 {
            ok(&mut lists, Method::POST, &[], "", &format!("address=l{n}%40mg.example.com"));
        }
        let page = ok(&mut lists, Method::GET, &[], "limit=3&skip=5", "");
        assert_eq!(page["total_count"], 7);
        let addresses: Vec<&str> =
            page["items"].as_array().expect("items").iter().filter_map(|i| i["address"].as_str()).collect();
        assert_eq!(addresses, ["l5@mg.example.com", "l6@mg.example.com"]);
        let one = ok(&mut lists, Method::GET, &[], "address=L3%40mg.example.com", "");
        assert_eq!(
            (one["total_count"].as_u64(), one["items"][0]["address"].as_str()),
            (Some(1), Some("l3@mg.example.com"))
        );
        assert_eq!(
            refused(&mut lists, Method::GET, &[], "limit=101", ""),
            (400, "The 'limit' parameter can't be larger than 100".into())
        );
        assert_eq!(refused(&mut lists, Method::GET, &[], "skip=-1", "").0, 400);
    }

    #[test]
    fn list_pages_walk_forward_and_back_without_loss() {
        let mut lists = Lists::new();
        let mut expected = Vec::new();
        for n in 0..11 {
            let address = format!("list{n:02}@mg.example.com");
            ok(&mut lists, Method::POST, &[], "", &format!("address={address}"));
            expected.push(address);
        }
        assert_eq!(walk(&mut lists, &["pages"], "limit=4"), expected);
        let first = ok(&mut lists, Method::GET, &["pages"], "limit=4", "");
        assert_eq!(
            first["paging"],
            json!({
                "first": format!("{BASE}/v3/lists/pages?page=first&limit=4"),
                "last": format!("{BASE}/v3/lists/pages?page=last&limit=4"),
                "next": format!("{BASE}/v3/lists/pages?page=next&address=list03%40mg.example.com&limit=4"),
                "previous": format!("{BASE}/v3/lists/pages?page=prev&address=list00%40mg.example.com&limit=4"),
            })
        );
        let last = ok(&mut lists, Method::GET, &["pages"], "page=last&limit=4", "");
        assert_eq!(last["items"].as_array().map(Vec::len), Some(4));
        assert_eq!(last["items"][0]["address"], "list07@mg.example.com");
        // Backwards from the last page.
        let mut back = Vec::new();
        let mut query = "page=last&limit=4".to_owned();
        loop {
            let page = ok(&mut lists, Method::GET, &["pages"], &query, "");
            let items = page["items"].as_array().expect("items").clone();
            if items.is_empty() {
                break;
            }
            let mut addresses: Vec<String> =
                items.iter().filter_map(|i| i["address"].as_str().map(str::to_owned)).collect();
            addresses.extend(back);
            back = addresses;
            let prev = page["paging"]["previous"].as_str().expect("previous").to_owned();
            query = prev.split_once('?').map(|(_, q)| q.to_owned()).unwrap_or_default();
        }
        assert_eq!(back, expected);
        assert_eq!(refused(&mut lists, Method::GET, &["pages"], "page=sideways", "").0, 400);
        // Past the end: empty, and `next` keeps pointing past the end.
        let beyond = ok(&mut lists, Method::GET, &["pages"], "page=next&address=list10%40mg.example.com", "");
        assert_eq!(beyond["items"], json!([]));
        assert!(beyond["paging"]["next"].as_str().is_some_and(|n| n.contains("address=list10%40mg.example.com")));
    }

    #[test]
    fn add_member_upsert_vars_and_subscribed() {
        let mut lists = Lists::seeded(NOW);
        let dev = "developers@mg.example.com";
        let added = ok(
            &mut lists,
            Method::POST,
            &[dev, "members"],
            "",
            "address=dan%40example.com&name=Dan&vars=%7B%22age%22%3A27%7D&subscribed=no",
        );
        assert_eq!(added["message"], "Mailing list member has been created");
        assert_eq!(
            added["member"],
            json!({"address": "dan@example.com", "name": "Dan", "subscribed": false, "vars": {"age": 27}})
        );
        assert_eq!(
            refused(&mut lists, Method::POST, &[dev, "members"], "", "address=Alice%40example.com"),
            (400, "Address already exists 'Alice@example.com'".into())
        );
        // Upsert changes only what is sent; `True` is how the Python SDK spells it.
        let upserted = ok(
            &mut lists,
            Method::POST,
            &[dev, "members"],
            "",
            "address=dan%40example.com&upsert=True&subscribed=true",
        );
        assert_eq!(
            upserted["member"],
            json!({"address": "dan@example.com", "name": "Dan", "subscribed": true, "vars": {"age": 27}})
        );
        assert_eq!(ok(&mut lists, Method::GET, &[dev], "", "")["list"]["members_count"], 4);
        let named = ok(&mut lists, Method::POST, &[dev, "members"], "", "address=Erin+%3Cerin%40example.com%3E");
        assert_eq!(
            (named["member"]["address"].as_str(), named["member"]["name"].as_str()),
            (Some("erin@example.com"), Some("Erin"))
        );
        for bad in [
            "address=x%40example.com&vars=%5B1%5D",
            "address=x%40example.com&vars=nope",
            "address=x%40example.com&subscribed=maybe",
            "address=x%40example.com&upsert=perhaps",
            "address=not-an-address",
            "name=NoAddress",
        ] {
            assert_eq!(refused(&mut lists, Method::POST, &[dev, "members"], "", bad).0, 400, "{bad}");
        }
    }

    #[test]
    fn member_get_update_delete() {
        let mut lists = Lists::seeded(NOW);
        let dev = "developers@mg.example.com";
        let carol = ok(&mut lists, Method::GET, &[dev, "members", "CAROL@example.com"], "", "");
        assert_eq!(carol["member"]["subscribed"], false);
        let updated = ok(
            &mut lists,
            Method::PUT,
            &[dev, "members", "carol@example.com"],
            "",
            "subscribed=yes&vars=%7B%22x%22%3A1%7D",
        );
        assert_eq!(updated["message"], "Mailing list member has been updated");
        assert_eq!(
            updated["member"],
            json!({"address": "carol@example.com", "name": "Carol", "subscribed": true, "vars": {"x": 1}})
        );
        let moved =
            ok(&mut lists, Method::PUT, &[dev, "members", "carol@example.com"], "", "address=caroline%40example.com");
        assert_eq!(moved["member"]["address"], "caroline@example.com");
        assert_eq!(refused(&mut lists, Method::GET, &[dev, "members", "carol@example.com"], "", "").0, 404);
        assert_eq!(
            refused(
                &mut lists,
                Method::PUT,
                &[dev, "members", "caroline@example.com"],
                "",
                "address=bob%40example.com"
            ),
            (400, "Address already exists 'bob@example.com'".into())
        );
        let deleted = ok(&mut lists, Method::DELETE, &[dev, "members", "caroline@example.com"], "", "");
        assert_eq!(
            deleted,
            json!({"member": {"address": "caroline@example.com"}, "message": "Mailing list member has been deleted"})
        );
        assert_eq!(ok(&mut lists, Method::GET, &[dev], "", "")["list"]["members_count"], 2);
    }

    #[test]
    fn bulk_members_json() {
        let mut lists = Lists::seeded(NOW);
        let dev = "developers@mg.example.com";
        let members = r#"[ "frank@example.com", {"address": "Gina <gina@example.com>", "vars": {"k": "v"}, "subscribed": "no"},
                           {"address": "alice@example.com", "name": "Changed"} ]"#;
        let form = format!("members={}", encode_query(&[("x", members.to_owned())]).trim_start_matches("x="));
        let body = ok(&mut lists, Method::POST, &[dev, "members.json"], "", &form);
        assert_eq!(body["message"], "Mailing list has been updated");
        assert_eq!(body["list"]["members_count"], 5);
        assert!(body["task-id"].is_string());
        // Without upsert an existing member is left as it was.
        let alice = ok(&mut lists, Method::GET, &[dev, "members", "alice@example.com"], "", "");
        assert_eq!(alice["member"]["name"], "Alice");
        let gina = ok(&mut lists, Method::GET, &[dev, "members", "gina@example.com"], "", "");
        assert_eq!(
            gina["member"],
            json!({"address": "gina@example.com", "name": "Gina", "subscribed": false, "vars": {"k": "v"}})
        );
        let upsert = format!("{form}&upsert=yes");
        ok(&mut lists, Method::POST, &[dev, "members.json"], "", &upsert);
        let alice = ok(&mut lists, Method::GET, &[dev, "members", "alice@example.com"], "", "");
        assert_eq!(alice["member"]["name"], "Changed");
        // One bad entry refuses the whole upload.
        for bad in [
            r#"["ok@example.com", "broken"]"#,
            r#"[{"name": "no address"}]"#,
            r#"[{"address": "h@example.com", "vars": "[]"}]"#,
            r#"[{"address": "h@example.com", "subscribed": 3}]"#,
            r#"[42]"#,
            r#"{"address": "h@example.com"}"#,
            "not json",
        ] {
            let form = format!("members={}", encode_query(&[("x", bad.to_owned())]).trim_start_matches("x="));
            assert_eq!(refused(&mut lists, Method::POST, &[dev, "members.json"], "", &form).0, 400, "{bad}");
        }
        assert_eq!(refused(&mut lists, Method::POST, &[dev, "members.json"], "", "").0, 400);
        let many: Vec<String> = (0..=MAX_BULK_MEMBERS).map(|n| format!("\"m{n}@example.com\"")).collect();
        let form =
            format!("members={}", encode_query(&[("x", format!("[{}]", many.join(",")))]).trim_start_matches("x="));
        assert_eq!(refused(&mut lists, Method::POST, &[dev, "members.json"], "", &form).0, 400);
    }

    #[test]
    fn past_the_member_cap_a_list_refuses_new_members_and_keeps_what_it_has() {
        let mut lists = Lists::seeded(NOW);
        let dev = "developers@mg.example.com";
        let held = ok(&mut lists, Method::GET, &[dev], "", "")["list"]["members_count"].as_u64().expect("count");
        lists.member_cap = usize::try_from(held).expect("small") + 1;
        ok(&mut lists, Method::POST, &[dev, "members"], "", "address=one%40example.com");
        let (status, message) = refused(&mut lists, Method::POST, &[dev, "members"], "", "address=two%40example.com");
        assert_eq!(status, 400);
        assert!(message.contains("at most") && message.contains("not Mailgun's"), "{message}");
        // An existing member can still be changed; a bulk upload past the cap stores nothing.
        ok(&mut lists, Method::POST, &[dev, "members"], "", "address=one%40example.com&upsert=yes&name=One");
        let bulk = "members=%5B%22three%40example.com%22%5D";
        assert_eq!(refused(&mut lists, Method::POST, &[dev, "members.json"], "", bulk).0, 400);
    }

    #[test]
    fn members_offset_and_pages() {
        let mut lists = Lists::seeded(NOW);
        let news = "newsletter@mg.example.com";
        let page = ok(&mut lists, Method::GET, &[news, "members"], "limit=10&skip=20", "");
        assert_eq!(page["total_count"], 25);
        assert_eq!(page["items"].as_array().map(Vec::len), Some(5));
        assert_eq!(page["items"][0]["address"], "reader21@example.com");
        assert_eq!(refused(&mut lists, Method::GET, &[news, "members"], "limit=101", "").0, 400);
        let expected: Vec<String> = (1..=25).map(|n| format!("reader{n:02}@example.com")).collect();
        assert_eq!(walk(&mut lists, &[news, "members", "pages"], "limit=7"), expected);
        let first = ok(&mut lists, Method::GET, &[news, "members", "pages"], "limit=7", "");
        assert_eq!(
            first["paging"]["next"],
            format!("{BASE}/v3/lists/newsletter@mg.example.com/members/pages?page=next&address=reader07%40example.com&limit=7")
        );
        assert!(first["paging"]["previous"]
            .as_str()
            .is_some_and(|p| p.contains("page=prev&address=reader01%40example.com")));
        // The subscribed filter applies to both styles and rides along in the links.
        let dev = "developers@mg.example.com";
        let unsubscribed = ok(&mut lists, Method::GET, &[dev, "members"], "subscribed=no", "");
        assert_eq!(
            (unsubscribed["total_count"].as_u64(), unsubscribed["items"][0]["address"].as_str()),
            (Some(1), Some("carol@example.com"))
        );
        let subscribed = ok(&mut lists, Method::GET, &[dev, "members", "pages"], "subscribed=yes&limit=1", "");
        assert!(subscribed["paging"]["next"].as_str().is_some_and(|n| n.ends_with("&subscribed=yes")));
        assert_eq!(
            walk(&mut lists, &[dev, "members", "pages"], "subscribed=yes&limit=1"),
            ["alice@example.com", "bob@example.com"]
        );
        let by_address = ok(&mut lists, Method::GET, &[dev, "members"], "address=BOB%40example.com", "");
        assert_eq!(by_address["total_count"], 1);
    }
}
