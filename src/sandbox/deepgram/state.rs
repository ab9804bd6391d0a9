//! The Deepgram account: projects with their members, API keys (scoped, optionally expiring;
//! the secret shown once), balances and usage. Usage is summed from the requests made to the
//! simulator plus seeded history. Rules (who may do what, the last owner, a deleted project's
//! cascade) live here, without HTTP.

use std::collections::VecDeque;

use axum::http::StatusCode;

use super::errors::DgError;
use crate::sandbox::credentials;
use crate::sandbox::ids::Ids;
use crate::sandbox::outbox::Outbox;

/// Caps on what is kept (README lists them).
pub mod caps {
    /// API keys a project holds; one more is refused (the simulator's own limit).
    pub const KEYS: usize = 1_000;
    /// Usage records a project keeps; the oldest go first.
    pub const USAGE: usize = 100_000;
}

/// The roles, lowest first, and what each may do (api/deepgram.md §6.7).
pub const ROLES: [&str; 3] = ["member", "admin", "owner"];
const MEMBER: &[&str] = &["project:read", "project:write", "keys:read", "keys:write", "usage:read", "usage:write"];
const ADMIN_ALSO: &[&str] = &[
    "members:read",
    "members:read:invites",
    "members:read:scopes",
    "members:write",
    "members:write:invites",
    "members:write:scopes",
    "members:write:kick",
    "admins:read",
    "admins:read:invites",
    "admins:read:scopes",
    "admins:write",
    "admins:write:invites",
    "admins:write:scopes",
    "admins:write:kick",
    "owners:read",
    "owners:read:invites",
    "owners:read:scopes",
    "billing:read",
];

/// Whether `scopes` grant `permission`, directly or by a role.
pub fn grants(scopes: &[String], permission: &str) -> bool {
    scopes.iter().any(|scope| match scope.as_str() {
        "owner" => true,
        "admin" => MEMBER.contains(&permission) || ADMIN_ALSO.contains(&permission),
        "member" => MEMBER.contains(&permission),
        other => other == permission,
    })
}

/// The highest role among `scopes` (0 none, 1 member, 2 admin, 3 owner).
pub fn level(scopes: &[String]) -> usize {
    scopes.iter().filter_map(|s| ROLES.iter().position(|r| r == s)).map(|i| i + 1).max().unwrap_or(0)
}

pub struct Member {
    pub id: String,
    pub email: String,
    pub first_name: String,
    pub last_name: String,
    pub scopes: Vec<String>,
}

pub struct Key {
    pub id: String,
    pub secret: String,
    pub comment: String,
    pub scopes: Vec<String>,
    pub tags: Vec<String>,
    pub created_ms: i64,
    pub expires_ms: Option<i64>,
    pub member_id: String,
    /// The key that created it through the API (`None`: the sandbox key or the seed).
    pub created_by: Option<String>,
}

pub struct Balance {
    pub id: String,
    pub amount: f64,
    pub units: &'static str,
    pub purchase_order_id: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Endpoint {
    Listen,
    Speak,
    Read,
}

impl Endpoint {
    pub fn as_str(self) -> &'static str {
        match self {
            Endpoint::Listen => "listen",
            Endpoint::Speak => "speak",
            Endpoint::Read => "read",
        }
    }
}

/// The usage features a filter can name (api/deepgram.md's list of boolean filters).
pub const FEATURES: &[&str] = &[
    "alternatives",
    "callback",
    "callback_method",
    "channels",
    "custom_intent",
    "custom_intent_mode",
    "custom_topic",
    "custom_topic_mode",
    "detect_entities",
    "detect_language",
    "diarize",
    "dictation",
    "encoding",
    "extra",
    "filler_words",
    "intents",
    "keyterm",
    "keywords",
    "language",
    "measurements",
    "multichannel",
    "numerals",
    "paragraphs",
    "profanity_filter",
    "punctuate",
    "redact",
    "replace",
    "sample_rate",
    "search",
    "sentiment",
    "smart_format",
    "summarize",
    "topics",
    "utt_split",
    "utterances",
    "version",
];

/// A set of [`FEATURES`], one bit each: a usage record is kept small (it is the one collection
/// that grows with every request).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Features(u64);

impl Features {
    /// The features among `names` (names that are not usage features are not kept).
    pub fn of<'a>(names: impl IntoIterator<Item = &'a str>) -> Features {
        Features(
            names.into_iter().filter_map(|n| FEATURES.iter().position(|f| *f == n)).fold(0, |bits, i| bits | 1 << i),
        )
    }

    /// These features and `other`'s.
    pub fn with(self, other: Features) -> Features {
        Features(self.0 | other.0)
    }

    pub fn contains_all(self, wanted: Features) -> bool {
        self.0 & wanted.0 == wanted.0
    }
}

/// Requests of one kind at one time: one request made to the simulator, or a seeded day's worth.
pub struct Usage {
    pub at_ms: i64,
    pub endpoint: Endpoint,
    /// A live stream (`method=streaming` in the usage filters) rather than a request.
    pub streaming: bool,
    /// The model's canonical name, from the catalogue.
    pub model: &'static str,
    /// The key's id (`accessor`), empty for the sandbox key.
    pub accessor: String,
    pub tags: Box<[Box<str>]>,
    /// The features asked for (`diarize`, `sentiment`, ...), for the usage filters.
    pub features: Features,
    pub requests: u64,
    pub audio_seconds: f64,
    pub characters: u64,
    pub tokens_in: u64,
    pub tokens_out: u64,
}

pub struct Project {
    pub id: String,
    pub name: String,
    pub company: String,
    pub mip_opt_out: bool,
    pub members: Vec<Member>,
    pub keys: Vec<Key>,
    pub balances: Vec<Balance>,
    pub usage: VecDeque<Usage>,
}

/// Who made a request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Caller {
    /// The sandbox key: an owner of every project of the account.
    Sandbox,
    /// A key created through the API: its project and its id.
    Key { project: String, key_id: String },
}

pub struct State {
    pub projects: Vec<Project>,
    pub ids: Ids,
    /// Results of asynchronous requests on their way to their `callback` URLs.
    pub outbox: Outbox,
}

impl State {
    pub fn new(seed: u64) -> State {
        State { projects: Vec::new(), ids: Ids::new(seed, 0xD6), outbox: Outbox::new(super::callbacks::RETRY) }
    }

    /// The caller a `Token` names, refusing an unknown or expired key as Deepgram does.
    pub fn authenticate(&self, secret: &str, now_ms: i64) -> Result<Caller, DgError> {
        if secret == credentials::DEEPGRAM_KEY {
            return Ok(Caller::Sandbox);
        }
        for project in &self.projects {
            if let Some(key) = project.keys.iter().find(|k| k.secret == secret) {
                if key.expires_ms.is_some_and(|at| at <= now_ms) {
                    return Err(DgError::invalid_auth());
                }
                return Ok(Caller::Key { project: project.id.clone(), key_id: key.id.clone() });
            }
        }
        Err(DgError::invalid_auth())
    }

    /// The scopes `caller` holds on project `index`.
    pub fn scopes(&self, caller: &Caller, index: usize) -> Vec<String> {
        match caller {
            Caller::Sandbox => vec!["owner".to_owned()],
            Caller::Key { project, key_id } => {
                let p = &self.projects[index];
                if &p.id != project {
                    return Vec::new();
                }
                p.keys.iter().find(|k| &k.id == key_id).map(|k| k.scopes.clone()).unwrap_or_default()
            }
        }
    }

    /// Whether `caller` may see (`write`: delete) `key` of project `index`. Deepgram's roles
    /// documentation gives `keys:read` and `keys:write` to every role but limits them to the keys
    /// the caller created, except that an admin reads every key and an owner reaches every key.
    /// What "created" means for a key made by another key is not documented: here it is the key
    /// that made it through the API (a member key made by an owner's key did not make that
    /// owner's keys), and a key reaches itself.
    pub fn may_touch_key(&self, caller: &Caller, index: usize, key: &Key, write: bool) -> bool {
        let Caller::Key { key_id, .. } = caller else { return true };
        let made = &key.id == key_id || key.created_by.as_ref() == Some(key_id);
        match level(&self.scopes(caller, index)) {
            3 => true,
            2 => !write || made,
            _ => made,
        }
    }

    /// The projects `caller` can see, by index.
    pub fn visible(&self, caller: &Caller) -> Vec<usize> {
        (0..self.projects.len())
            .filter(|i| match caller {
                Caller::Sandbox => true,
                Caller::Key { project, .. } => &self.projects[*i].id == project,
            })
            .collect()
    }

    /// The project a path names: a non-uuid is Deepgram's plain-text 404; an unknown, deleted
    /// or foreign one its JSON 404; then the caller must hold `permission` on it.
    pub fn project(&self, caller: &Caller, id: &str, permission: &str) -> Result<usize, DgError> {
        if let Some(bad) = uuid_problem(id) {
            return Err(DgError::plain(StatusCode::NOT_FOUND, format!("UUID parsing failed: {bad}")));
        }
        let index = self
            .visible(caller)
            .into_iter()
            .find(|i| self.projects[*i].id.eq_ignore_ascii_case(id))
            .ok_or_else(DgError::project_not_found)?;
        if !grants(&self.scopes(caller, index), permission) {
            return Err(DgError::insufficient_permissions());
        }
        Ok(index)
    }

    /// `DELETE /v1/projects/{id}`: the project and everything in it (keys, members, balances,
    /// usage) go at once; its keys stop working.
    pub fn delete_project(&mut self, index: usize) -> Project {
        self.projects.remove(index)
    }

    /// `DELETE .../members/{id}`: refused for the last owner.
    pub fn remove_member(&mut self, index: usize, member_id: &str) -> Result<(), DgError> {
        let project = &mut self.projects[index];
        let at = project.members.iter().position(|m| m.id == member_id).ok_or_else(|| DgError::not_found("member"))?;
        let owners = project.members.iter().filter(|m| m.scopes.iter().any(|s| s == "owner")).count();
        if owners == 1 && project.members[at].scopes.iter().any(|s| s == "owner") {
            return Err(DgError::bad_request(
                "Cannot remove the last owner of a project. Make another member an owner first.",
            ));
        }
        let member = project.members.remove(at);
        // A removed member's keys go with them.
        project.keys.retain(|k| k.member_id != member.id);
        Ok(())
    }

    /// Records one request's usage on the project `id`, keeping the newest [`caps::USAGE`]. A
    /// project deleted while the request ran takes its usage with it.
    pub fn record(&mut self, id: &str, usage: Usage) {
        let Some(project) = self.projects.iter_mut().find(|p| p.id == id) else { return };
        let log = &mut project.usage;
        log.push_back(usage);
        while log.len() > caps::USAGE {
            log.pop_front();
        }
    }
}

/// What is wrong with a project id that is not a uuid (Deepgram's plain-text wording), if
/// anything.
pub fn uuid_problem(id: &str) -> Option<String> {
    let hex: Vec<char> = id.chars().filter(|c| *c != '-').collect();
    if let Some(c) = hex.iter().find(|c| !c.is_ascii_hexdigit()) {
        return Some(format!(
            "invalid character: expected an optional prefix of `urn:uuid:` followed by [0-9a-fA-F-], found `{c}`"
        ));
    }
    if hex.len() != 32 {
        return Some(format!("invalid length: expected length 32 for simple format, found {}", hex.len()));
    }
    None
}
