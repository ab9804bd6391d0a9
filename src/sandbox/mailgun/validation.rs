//! Mailgun's address validation (`/v4/address/validate`, api/mailgun.md §7.11) without HTTP: the
//! syntax rules, a table of disposable-mail domains, role local parts, the simulated DNS's MX
//! knowledge (supplied by the caller) and typo suggestions for the big mailbox providers. The
//! syntax check is also what lists and members use to refuse a malformed address.

use serde_json::{json, Value};

/// Mailgun refuses to validate longer addresses (the `address` parameter is ≤ 512 characters).
pub const MAX_ADDRESS_LEN: usize = 512;
/// RFC 5321's limits on the parts: longer ones no mail server accepts.
const MAX_LOCAL_LEN: usize = 64;
const MAX_DOMAIN_LEN: usize = 253;
const MAX_LABEL_LEN: usize = 63;

/// Why an address is not one, in words a 400 message or a test can show.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SyntaxError {
    Empty,
    TooLong,
    NoAt,
    BadLocalPart,
    BadDomain,
}

/// The local part and domain of a syntactically valid address (`local@domain`, no display name,
/// no surrounding spaces). Dot-atom local parts (RFC 5322 `atext` and single dots) and quoted
/// local parts are accepted; the domain must be a host name of at least two labels with an
/// alphabetic top-level label, since mail is not delivered to bare hosts or IP literals here.
pub fn split_address(address: &str) -> Result<(&str, &str), SyntaxError> {
    if address.is_empty() {
        return Err(SyntaxError::Empty);
    }
    if address.chars().count() > MAX_ADDRESS_LEN {
        return Err(SyntaxError::TooLong);
    }
    let (local, domain) = address.rsplit_once('@').ok_or(SyntaxError::NoAt)?;
    if !valid_local(local) {
        return Err(SyntaxError::BadLocalPart);
    }
    if !valid_domain(domain) {
        return Err(SyntaxError::BadDomain);
    }
    Ok((local, domain))
}

/// Whether `address` passes [`split_address`].
pub fn is_valid_address(address: &str) -> bool {
    split_address(address).is_ok()
}

fn is_atext(c: char) -> bool {
    c.is_ascii_alphanumeric() || "!#$%&'*+/=?^_`{|}~-".contains(c)
}

fn valid_local(local: &str) -> bool {
    if local.is_empty() || local.len() > MAX_LOCAL_LEN {
        return false;
    }
    if let Some(inner) = local.strip_prefix('"').and_then(|l| l.strip_suffix('"')) {
        // A quoted string: printable ASCII, with `"` and `\` only escaped.
        let mut escaped = false;
        for c in inner.chars() {
            if !(' '..='~').contains(&c) {
                return false;
            }
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                return false;
            }
        }
        return !escaped;
    }
    local.split('.').all(|atom| !atom.is_empty() && atom.chars().all(is_atext))
}

fn valid_domain(domain: &str) -> bool {
    if domain.is_empty() || domain.len() > MAX_DOMAIN_LEN {
        return false;
    }
    let labels: Vec<&str> = domain.split('.').collect();
    if labels.len() < 2 {
        return false;
    }
    let label_ok = |label: &&str| {
        !label.is_empty()
            && label.len() <= MAX_LABEL_LEN
            && label.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
            && !label.starts_with('-')
            && !label.ends_with('-')
    };
    let tld_ok = labels.last().is_some_and(|tld| tld.len() >= 2 && tld.chars().all(|c| c.is_ascii_alphabetic()));
    labels.iter().all(label_ok) && tld_ok
}

/// Throwaway-mailbox services: mail to them is read by nobody in particular, so Mailgun says
/// `do_not_send`. A real handful, not an exhaustive list.
pub const DISPOSABLE_DOMAINS: &[&str] = &[
    "10minutemail.com",
    "discard.email",
    "dispostable.com",
    "fakeinbox.com",
    "getnada.com",
    "guerrillamail.com",
    "guerrillamail.net",
    "maildrop.cc",
    "mailinator.com",
    "mailnesia.com",
    "mintemail.com",
    "sharklasers.com",
    "temp-mail.org",
    "throwawaymail.com",
    "trashmail.com",
    "yopmail.com",
];

/// Local parts that name a function rather than a person: mail to them reaches a group or
/// nobody, so Mailgun flags them as role addresses.
pub const ROLE_LOCAL_PARTS: &[&str] = &[
    "abuse",
    "admin",
    "administrator",
    "billing",
    "contact",
    "help",
    "hostmaster",
    "info",
    "marketing",
    "no-reply",
    "noc",
    "noreply",
    "postmaster",
    "privacy",
    "sales",
    "security",
    "support",
    "webmaster",
];

/// Mailbox providers whose misspellings get a `did_you_mean`.
const PROVIDERS: &[&str] = &[
    "aol.com",
    "gmail.com",
    "googlemail.com",
    "hotmail.com",
    "icloud.com",
    "live.com",
    "outlook.com",
    "protonmail.com",
    "yahoo.com",
];

/// Real domains one edit away from a provider: never "corrected" into one (`mail.com` is not a
/// typo of `gmail.com`).
const LOOKALIKES: &[&str] = &["email.com", "gmx.com", "mail.com", "mac.com", "me.com", "ymail.com", "yahoo.co.uk"];

/// Whether the domain (any case) is in [`DISPOSABLE_DOMAINS`], subdomains included.
pub fn is_disposable(domain: &str) -> bool {
    let domain = domain.to_ascii_lowercase();
    DISPOSABLE_DOMAINS.iter().any(|d| domain == *d || domain.strip_suffix(d).is_some_and(|rest| rest.ends_with('.')))
}

/// Whether the local part (any case, `+tag` ignored) is in [`ROLE_LOCAL_PARTS`].
pub fn is_role(local: &str) -> bool {
    let base = local.split('+').next().unwrap_or(local).to_ascii_lowercase();
    ROLE_LOCAL_PARTS.contains(&base.as_str())
}

/// The provider domain `domain` is most likely a misspelling of: one insertion, deletion,
/// substitution or swap of neighbours away, and not itself a known domain.
pub fn suggest_domain(domain: &str) -> Option<&'static str> {
    let domain = domain.to_ascii_lowercase();
    if PROVIDERS.contains(&domain.as_str()) || LOOKALIKES.contains(&domain.as_str()) {
        return None;
    }
    PROVIDERS.iter().copied().find(|provider| edit_distance(&domain, provider) == 1)
}

/// Optimal-string-alignment distance (Levenshtein plus swaps of neighbours), which is how
/// typing slips look: `gmial` is one slip from `gmail`, not two.
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut rows = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in rows.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in rows[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (rows[i - 1][j] + 1).min(rows[i][j - 1] + 1).min(rows[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(rows[i - 2][j - 2] + 1);
            }
            rows[i][j] = best;
        }
    }
    rows[a.len()][b.len()]
}

/// The v4 answer for one address (`address`, `is_disposable_address`, `is_role_address`,
/// `reason` [..], `result`, `risk`, optional `did_you_mean`), from syntax, a disposable-domain
/// table, role local parts and the simulated DNS's MX knowledge (`has_mx`, which SIM supplies).
///
/// The verdict, worst first: bad syntax → `undeliverable`/`high` (`failed custom grammar
/// check`); disposable domain → `do_not_send`/`high`; with `provider_lookup` off nothing is
/// asked of the DNS, so the answer is `unknown` with reason `no_data` (risk `medium` for a role
/// address, else `unknown`); no MX → `undeliverable`/`high` (`no_mx`); a role address →
/// `deliverable`/`medium`; else `deliverable`/`low`.
pub fn validate(address: &str, provider_lookup: bool, has_mx: &dyn Fn(&str) -> bool) -> Value {
    let address = address.trim();
    let Ok((local, domain)) = split_address(address) else {
        return answer(address, false, false, &["failed custom grammar check"], "undeliverable", "high", None, None);
    };
    let disposable = is_disposable(domain);
    let role = is_role(local);
    let did_you_mean = suggest_domain(domain).map(|d| format!("{local}@{d}"));
    // Plus-addressing delivers to the mailbox without the tag: Mailgun reports it as the root.
    let root = local.split_once('+').map(|(base, _)| format!("{base}@{domain}"));
    let mut reasons: Vec<&str> = Vec::new();
    if role {
        reasons.push("mailbox_is_role_address");
    }
    let (result, risk) = if disposable {
        reasons.push("mailbox_is_disposable_address");
        ("do_not_send", "high")
    } else if !provider_lookup {
        reasons.push("no_data");
        ("unknown", if role { "medium" } else { "unknown" })
    } else if !has_mx(&domain.to_ascii_lowercase()) {
        reasons.push("no_mx");
        ("undeliverable", "high")
    } else if role {
        ("deliverable", "medium")
    } else {
        ("deliverable", "low")
    };
    answer(address, disposable, role, &reasons, result, risk, did_you_mean, root)
}

#[expect(clippy::too_many_arguments, reason = "one call per verdict; a struct would only rename them")]
fn answer(
    address: &str,
    disposable: bool,
    role: bool,
    reasons: &[&str],
    result: &str,
    risk: &str,
    did_you_mean: Option<String>,
    root_address: Option<String>,
) -> Value {
    let mut body = json!({
        "address": address,
        "is_disposable_address": disposable,
        "is_role_address": role,
        "reason": reasons,
        "result": result,
        "risk": risk,
    });
    if let Some(map) = body.as_object_mut() {
        if let Some(suggestion) = did_you_mean {
            map.insert("did_you_mean".into(), suggestion.into());
        }
        if let Some(root) = root_address {
            map.insert("root_address".into(), root.into());
        }
    }
    body
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mx_everywhere_but_invalid(domain: &str) -> bool {
        !domain.ends_with(".invalid")
    }

    fn check(address: &str) -> Value {
        validate(address, true, &mx_everywhere_but_invalid)
    }

    #[test]
    fn syntax_rules() {
        for good in ["a@example.com", "first.last+tag@mg.example.com", "o'neil@x-y.io", "\"odd one\"@example.org"] {
            assert!(is_valid_address(good), "{good}");
        }
        let cases = [
            ("", SyntaxError::Empty),
            ("nobody", SyntaxError::NoAt),
            ("@example.com", SyntaxError::BadLocalPart),
            (".a@example.com", SyntaxError::BadLocalPart),
            ("a..b@example.com", SyntaxError::BadLocalPart),
            ("a.@example.com", SyntaxError::BadLocalPart),
            ("a b@example.com", SyntaxError::BadLocalPart),
            ("a@localhost", SyntaxError::BadDomain),
            ("a@", SyntaxError::BadDomain),
            ("a@-x.com", SyntaxError::BadDomain),
            ("a@x..com", SyntaxError::BadDomain),
            ("a@x.c", SyntaxError::BadDomain),
            ("a@x.123", SyntaxError::BadDomain),
            ("a@exa_mple.com", SyntaxError::BadDomain),
            ("Alice <a@example.com>", SyntaxError::BadLocalPart),
        ];
        for (address, error) in cases {
            assert_eq!(split_address(address), Err(error), "{address}");
        }
        let long_local = format!("{}@example.com", "a".repeat(65));
        assert_eq!(split_address(&long_local), Err(SyntaxError::BadLocalPart));
        let too_long = format!("a@{}.com", "b".repeat(520));
        assert_eq!(split_address(&too_long), Err(SyntaxError::TooLong));
    }

    #[test]
    fn deliverable_address_is_low_risk() {
        assert_eq!(
            check("alice@example.com"),
            json!({"address": "alice@example.com", "is_disposable_address": false, "is_role_address": false,
                   "reason": [], "result": "deliverable", "risk": "low"})
        );
    }

    #[test]
    fn bad_syntax_is_undeliverable() {
        let answer = check("not-an-address");
        assert_eq!(answer["result"], "undeliverable");
        assert_eq!(answer["risk"], "high");
        assert_eq!(answer["reason"], json!(["failed custom grammar check"]));
        let long = format!("{}@example.com", "a".repeat(600));
        assert_eq!(check(&long)["result"], "undeliverable");
    }

    #[test]
    fn disposable_domains_are_do_not_send() {
        for address in ["x@mailinator.com", "x@GuerrillaMail.com", "x@10minutemail.com", "x@eu.mailinator.com"] {
            let answer = check(address);
            assert_eq!(answer["is_disposable_address"], true, "{address}");
            assert_eq!(answer["result"], "do_not_send");
            assert_eq!(answer["risk"], "high");
            assert_eq!(answer["reason"], json!(["mailbox_is_disposable_address"]));
        }
        assert!(!is_disposable("notmailinator.com"));
    }

    #[test]
    fn role_addresses_are_medium_risk() {
        for address in ["admin@example.com", "Info@example.com", "support+x@example.com", "noreply@example.com"] {
            let answer = check(address);
            assert_eq!(answer["is_role_address"], true, "{address}");
            assert_eq!(answer["result"], "deliverable");
            assert_eq!(answer["risk"], "medium");
            assert_eq!(answer["reason"], json!(["mailbox_is_role_address"]));
        }
        assert_eq!(
            check("postmaster@mailinator.com")["reason"],
            json!(["mailbox_is_role_address", "mailbox_is_disposable_address"])
        );
        assert!(!is_role("administrators"));
    }

    #[test]
    fn domains_without_mx_are_undeliverable() {
        let answer = check("bob@nowhere.invalid");
        assert_eq!((answer["result"].as_str(), answer["risk"].as_str()), (Some("undeliverable"), Some("high")));
        assert_eq!(answer["reason"], json!(["no_mx"]));
    }

    #[test]
    fn without_provider_lookup_there_is_no_data_and_no_dns_question() {
        let asked = std::cell::Cell::new(false);
        let has_mx = |_: &str| {
            asked.set(true);
            false
        };
        let answer = validate("bob@nowhere.invalid", false, &has_mx);
        assert!(!asked.get());
        assert_eq!(answer["result"], "unknown");
        assert_eq!(answer["risk"], "unknown");
        assert_eq!(answer["reason"], json!(["no_data"]));
        assert_eq!(validate("info@example.com", false, &has_mx)["risk"], "medium");
        // The disposable table is local knowledge: it still applies.
        assert_eq!(validate("x@yopmail.com", false, &has_mx)["result"], "do_not_send");
    }

    #[test]
    fn typos_of_providers_get_a_suggestion() {
        let cases = [
            ("jane@gmial.com", Some("jane@gmail.com")),
            ("jane@gmail.con", Some("jane@gmail.com")),
            ("jane@gmai.com", Some("jane@gmail.com")),
            ("jane@hotmial.com", Some("jane@hotmail.com")),
            ("jane@yahooo.com", Some("jane@yahoo.com")),
            ("jane@outlok.com", Some("jane@outlook.com")),
            ("jane@gmail.com", None),
            ("jane@mail.com", None),
            ("jane@example.com", None),
        ];
        for (address, suggestion) in cases {
            assert_eq!(check(address).get("did_you_mean").and_then(Value::as_str), suggestion, "{address}");
        }
    }

    #[test]
    fn plus_addresses_report_their_root() {
        assert_eq!(check("dev+alerts@example.com")["root_address"], "dev@example.com");
        assert!(check("dev@example.com").get("root_address").is_none());
    }

    #[test]
    fn edit_distance_counts_swaps_once() {
        assert_eq!(edit_distance("gmial.com", "gmail.com"), 1);
        assert_eq!(edit_distance("abc", "abc"), 0);
        assert_eq!(edit_distance("", "ab"), 2);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
    }
}
