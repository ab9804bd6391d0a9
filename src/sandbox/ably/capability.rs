//! Token capabilities (§2.3): parsing and canonicalising the JSON text, matching a resource and
//! an operation against it, the capability each route needs (§3, in brackets), and the caller
//! (client id, capability, expiry) that authentication produces and handlers check.

use std::collections::{BTreeMap, BTreeSet};

use super::wire::{AblyError, Val};
use super::{Call, Op};

/// The resource meaning "every channel", also the one app-wide operations (stats, channel
/// enumeration, push admin) are granted on.
pub(super) const ANY: &str = "*";

/// The operations a capability can grant (api/ably.md §2.3); anything else is refused when the
/// capability is parsed, as Ably refuses it, rather than granting nothing without a word. The
/// doc gives no code for this; 400/40000 is what the other malformed capabilities get.
const OPERATIONS: &[&str] = &[
    "annotation-publish",
    "annotation-subscribe",
    "channel-metadata",
    "history",
    "message-delete-any",
    "message-delete-own",
    "message-update-any",
    "message-update-own",
    "object-publish",
    "object-subscribe",
    "presence",
    "privileged-headers",
    "publish",
    "push-admin",
    "push-subscribe",
    "stats",
    "subscribe",
];

/// A capability: operations per resource. Sorted sets, so the canonical text falls out of
/// serialisation and duplicate resources or operations merge.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Capability {
    grants: BTreeMap<String, BTreeSet<String>>,
}

impl Capability {
    /// `{"*":["*"]}`: the sandbox key's capability, so what Basic auth and default tokens get.
    pub(super) fn all() -> Capability {
        Capability { grants: BTreeMap::from([(ANY.to_owned(), BTreeSet::from([ANY.to_owned()]))]) }
    }

    /// Parses capability text: a non-empty JSON object whose values are arrays of strings.
    /// Anything else is 400/40000 (the doc names no more specific code).
    pub(super) fn parse(raw: &str) -> Result<Capability, AblyError> {
        let bad = |why: &str| AblyError::new(400, 40000, format!("Invalid capability: {why}: {raw}"));
        let Ok(Val::Map(fields)) = serde_json::from_str::<Val>(raw) else {
            return Err(bad("expected a JSON object of resource to operations"));
        };
        if fields.is_empty() {
            return Err(bad("no resources"));
        }
        let mut grants: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (resource, ops) in fields {
            let Val::Arr(ops) = ops else {
                return Err(bad("the operations of a resource must be an array"));
            };
            let entry = grants.entry(resource.into_owned()).or_default();
            for op in ops {
                let Val::Str(op) = op else {
                    return Err(bad("operations must be strings"));
                };
                if op != ANY && !OPERATIONS.contains(&op.as_str()) {
                    return Err(bad(&format!("unknown operation {op:?}")));
                }
                entry.insert(op);
            }
        }
        Ok(Capability { grants })
    }

    /// Canonical text: resources and operations sorted, no whitespace.
    pub(super) fn canonical(&self) -> String {
        // A map of string sets always serialises; the fallback is never taken.
        serde_json::to_string(&self.grants).unwrap_or_default()
    }

    /// Whether `op` is granted on `resource` (a channel name, or `*` for app-wide operations).
    pub(super) fn allows(&self, resource: &str, op: &str) -> bool {
        self.grants.iter().any(|(granted, ops)| covers(granted, resource) && (ops.contains(ANY) || ops.contains(op)))
    }

    /// Whether `op` is granted on any resource at all.
    pub(super) fn allows_anywhere(&self, op: &str) -> bool {
        self.grants.values().any(|ops| ops.contains(ANY) || ops.contains(op))
    }

    /// Whether everything this capability grants is granted by `parent` too. A resource
    /// pattern of the child is matched as a name, so `ns:*` needs `ns:*` or `*` in the parent,
    /// and an operation `*` needs `*`.
    pub(super) fn is_subset_of(&self, parent: &Capability) -> bool {
        self.grants.iter().all(|(resource, ops)| ops.iter().all(|op| parent.allows(resource, op)))
    }
}

/// Whether a granted resource covers a requested one: `*` covers everything, `ns:*` every
/// channel starting with `ns:` (a glob, as Ably treats it: `ns` is the part before the first
/// `:` for a plain namespace), anything else only itself.
fn covers(granted: &str, resource: &str) -> bool {
    if granted == ANY || granted == resource {
        return true;
    }
    match granted.strip_suffix('*') {
        Some(prefix) if prefix.ends_with(':') => resource.starts_with(prefix),
        _ => false,
    }
}

/// 401/40160 with Ably's generic wording plus what was missing.
pub(super) fn denied(op: &str, resource: &str) -> AblyError {
    let message = match (op, resource) {
        ("publish", channel) if channel != ANY => format!("Unauthorized to publish to channel '{channel}'"),
        ("channel-metadata", ANY) => "Listing channels requires the channel-metadata capability".to_owned(),
        (op, ANY) => format!("operation not permitted with provided capability: '{op}' on '*' is required"),
        (op, channel) => {
            format!("operation not permitted with provided capability: '{op}' on channel '{channel}' is required")
        }
    };
    AblyError::new(401, 40160, message)
}

/// Who is calling, as far as handlers care.
#[derive(Clone, Debug)]
pub(super) struct Caller {
    /// Client id bound to the credentials (token `clientId`, or `X-Ably-ClientId` with Basic);
    /// `*` means any.
    pub(super) client_id: Option<String>,
    /// What the credentials may do: the key's capability with Basic auth, the token's own
    /// (signed into it) with a token.
    pub(super) capability: Capability,
    /// When the credentials stop working: a token's expiry; `None` for the key.
    pub(super) expires: Option<i64>,
}

impl Caller {
    /// Refuses with 40160 unless the credentials grant `op` on `resource`.
    pub(super) fn require(&self, resource: &str, op: &str) -> Result<(), AblyError> {
        if self.capability.allows(resource, op) {
            Ok(())
        } else {
            Err(denied(op, resource))
        }
    }

    /// Whether the credentials act for `client_id`: bound to it, or to the wildcard `*`.
    pub(super) fn owns_client(&self, client_id: Option<&str>) -> bool {
        match (self.client_id.as_deref(), client_id) {
            (Some(ANY), Some(_)) => true,
            (Some(bound), Some(given)) => bound == given,
            _ => false,
        }
    }
}

/// The capability a route needs before its handler runs: (resource, operation). `None` for
/// routes that need none, and for the push routes that also accept `push-subscribe` for the
/// caller's own client or device; those check in their handler, where the body is known.
pub(super) fn required(op: Op, call: &Call) -> Option<(String, &'static str)> {
    // The decoded name as in the path; an invalid one still gets its 40010 from the handler
    // when the capability allows it.
    let channel = || call.segment(1).unwrap_or_default();
    let need = match op {
        Op::ChannelsList => (ANY.to_owned(), "channel-metadata"),
        Op::ChannelsGet => (channel(), "channel-metadata"),
        Op::MessagesPublish => (channel(), "publish"),
        Op::MessagesList | Op::PresenceHistory => (channel(), "history"),
        // The doc gives presence get as [subscribe], like the realtime presence set.
        Op::PresenceGet => (channel(), "subscribe"),
        Op::Stats => (ANY.to_owned(), "stats"),
        Op::DeviceGet
        | Op::DeviceList
        | Op::DevicePatch
        | Op::DeviceDelete
        | Op::DeviceDeleteWhere
        | Op::DeviceResetToken
        | Op::PushPublish
        | Op::SubscriptionList
        | Op::PushChannels => (ANY.to_owned(), "push-admin"),
        // Batch publish is checked per channel and reported per channel in the BatchResult.
        Op::BatchPublish
        | Op::DeviceRegister
        | Op::DeviceSave
        | Op::SubscriptionCreate
        | Op::SubscriptionDelete
        | Op::Time
        | Op::RequestToken
        | Op::NotFound
        | Op::MethodNotAllowed => return None,
    };
    Some(need)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cap(raw: &str) -> Capability {
        Capability::parse(raw).expect("valid capability")
    }

    #[test]
    fn parses_canonicalises_and_merges() {
        let c = cap(r#"{ "b": ["subscribe","publish","subscribe"], "a": ["*"], "b": ["history"] }"#);
        assert_eq!(c.canonical(), r#"{"a":["*"],"b":["history","publish","subscribe"]}"#);
        assert_eq!(Capability::all().canonical(), r#"{"*":["*"]}"#);
        for bad in ["[1]", "{}", r#"{"a":"publish"}"#, r#"{"a":[1]}"#, "not json", r#""{}""#] {
            assert_eq!(Capability::parse(bad).map_err(|e| (e.status, e.code)), Err((400, 40000)), "{bad}");
        }
    }

    #[test]
    fn resources_and_operations_match() {
        let c = cap(r#"{"cap-demo":["subscribe"],"chat:*":["publish"],"ops":["*"]}"#);
        assert!(c.allows("cap-demo", "subscribe"));
        assert!(!c.allows("cap-demo", "publish"));
        assert!(!c.allows("other", "subscribe"));
        assert!(c.allows("chat:room", "publish"));
        assert!(c.allows("chat:room:deep", "publish"));
        assert!(!c.allows("chat", "publish"));
        assert!(!c.allows("chatter:room", "publish"));
        assert!(!c.allows(ANY, "publish"), "a namespace grant is not an app-wide one");
        assert!(c.allows("ops", "history") && c.allows("ops", "presence"));
        assert!(!c.allows("ops:x", "history"));
        assert!(Capability::all().allows(ANY, "stats"));
        assert!(c.allows_anywhere("push-subscribe"), "through ops: *");
        let narrow = cap(r#"{"chat:*":["publish"]}"#);
        assert!(narrow.allows_anywhere("publish") && !narrow.allows_anywhere("push-subscribe"));
    }

    #[test]
    fn subsets() {
        let parent = cap(r#"{"chat:*":["publish","subscribe"],"ops":["*"]}"#);
        assert!(cap(r#"{"chat:room":["publish"]}"#).is_subset_of(&parent));
        assert!(cap(r#"{"chat:*":["subscribe"],"ops":["history","*"]}"#).is_subset_of(&parent));
        assert!(!cap(r#"{"chat:*":["*"]}"#).is_subset_of(&parent));
        assert!(!cap(r#"{"*":["subscribe"]}"#).is_subset_of(&parent));
        assert!(!cap(r#"{"other":["subscribe"]}"#).is_subset_of(&parent));
        assert!(parent.is_subset_of(&Capability::all()));
    }
}
