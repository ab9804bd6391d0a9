//! The demo data of both regions (names fixed, ids and engagement from `--seed`): the US sandbox
//! domain, `mg.example.com` with a week of history and its suppressions, the unverified
//! `news.example.com` whose records appear one DNS delay after start, the lists and routes; the
//! EU region's `mg.example.eu` with a day of history.

use serde_json::Map;

use super::domains::{Domain, DomainKind, DomainState};
use super::lists::Lists;
use super::messages::Draft;
use super::region::Region;
use super::routes::Routes;
use super::suppressions::{Record, Table};
use crate::sandbox::rng::Rng;

pub const SANDBOX_DOMAIN: &str = "sandbox5f1e8a2b.mailgun.org";
pub const US_DOMAIN: &str = "mg.example.com";
pub const UNVERIFIED_DOMAIN: &str = "news.example.com";
pub const EU_DOMAIN: &str = "mg.example.eu";
const DAY_MS: i64 = 86_400_000;

/// Both regions as seeded at `anchor_ms`.
pub fn regions(seed: u64, anchor_ms: i64, dns_delay_ms: i64, us_base: String, eu_base: String) -> (Region, Region) {
    let mut us = Region::new(false, seed, Lists::seeded(anchor_ms), Routes::seeded(seed, anchor_ms), us_base);
    let sandbox_created = anchor_ms - 90 * DAY_MS;
    let mut sandbox =
        Domain::new(&mut us.ids, SANDBOX_DOMAIN, DomainKind::Sandbox, DomainState::Active, sandbox_created);
    sandbox.authorized_recipients = vec!["ops@example.com".into(), "dev@example.com".into()];
    add_active(&mut us, sandbox, sandbox_created);
    let mg_created = anchor_ms - 60 * DAY_MS;
    let mut mg = Domain::new(&mut us.ids, US_DOMAIN, DomainKind::Custom, DomainState::Active, mg_created);
    let suppressions = &mut mg.suppressions;
    let record = |address: &str, days_ago: i64, code: &str, error: &str, tags: &[&str]| Record {
        address: address.into(),
        created_ms: anchor_ms - days_ago * DAY_MS,
        code: code.into(),
        error: error.into(),
        tags: tags.iter().map(|t| (*t).to_owned()).collect(),
    };
    suppressions.upsert(Table::Bounces, record("bounced@example.net", 12, "550", "No such mailbox", &[]));
    suppressions.upsert(
        Table::Bounces,
        record("gone@example.org", 9, "550", "5.1.1 The email account that you tried to reach does not exist", &[]),
    );
    suppressions.upsert(Table::Bounces, record("full@example.com", 3, "552", "Mailbox full", &[]));
    suppressions.upsert(Table::Complaints, record("angry@example.com", 5, "", "", &[]));
    suppressions.upsert(Table::Unsubscribes, record("quit@example.com", 20, "", "", &["*"]));
    suppressions.upsert(Table::Unsubscribes, record("weekly-off@example.com", 8, "", "", &["weekly"]));
    add_active(&mut us, mg, mg_created);
    let news =
        Domain::new(&mut us.ids, UNVERIFIED_DOMAIN, DomainKind::Custom, DomainState::Unverified, anchor_ms - 3_600_000);
    us.dns.publish(UNVERIFIED_DOMAIN, anchor_ms + dns_delay_ms);
    us.domains.insert(news.name.clone(), news);
    history(&mut us, US_DOMAIN, seed, anchor_ms, 7, 300);

    let mut eu = Region::new(true, seed, Lists::new(), Routes::new(seed ^ 0xE0), eu_base);
    let eu_created = anchor_ms - 30 * DAY_MS;
    let domain = Domain::new(&mut eu.ids, EU_DOMAIN, DomainKind::Custom, DomainState::Active, eu_created);
    add_active(&mut eu, domain, eu_created);
    history(&mut eu, EU_DOMAIN, seed ^ 0xE0, anchor_ms, 1, 40);
    (us, eu)
}

/// An active domain whose records have been published and checked since `since_ms`.
fn add_active(region: &mut Region, mut domain: Domain, since_ms: i64) {
    region.dns.publish(&domain.name, since_ms);
    let eu = region.eu;
    domain.verify(&region.dns, since_ms, eu);
    region.domains.insert(domain.name.clone(), domain);
}

/// `count` messages over the `days` before the anchor, through the real pipeline; the steps
/// still due after the anchor (late opens, clicks) happen live.
fn history(region: &mut Region, domain: &str, seed: u64, anchor_ms: i64, days: i64, count: i64) {
    const SUBJECTS: [&str; 6] =
        ["Your receipt", "Weekly digest", "Password reset", "Welcome aboard", "Invoice available", "Service alert"];
    const TAGS: [&str; 4] = ["receipt", "weekly", "alert", "onboarding"];
    const SPECIAL: [&str; 6] = [
        "bounced@example.net",
        "quit@example.com",
        "angry@example.com",
        "weekly-off@example.com",
        "tempfail-relay@example.com",
        "full@example.com",
    ];
    let mut rng = Rng::new(seed ^ 0x4849_5354);
    let span = days * DAY_MS;
    for i in 0..count {
        let at = anchor_ms - span + i * span / count + rng.range(0, span / count / 2);
        let recipients: Vec<String> = (0..rng.range(1, 3))
            .map(|_| {
                if rng.chance(8) {
                    (*rng.pick(&SPECIAL)).to_owned()
                } else {
                    let providers = ["example.com", "example.org", "gmail.com", "yahoo.com", "outlook.com"];
                    format!("user{:03}@{}", rng.range(1, 120), rng.pick(&providers))
                }
            })
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect();
        let subject = (*rng.pick(&SUBJECTS)).to_owned();
        let tag = (*rng.pick(&TAGS)).to_owned();
        let draft = Draft {
            from: format!("Example Ops <ops@{domain}>"),
            subject: subject.clone(),
            to_header: recipients.join(", "),
            envelope: recipients,
            headers: Vec::new(),
            text: Some(format!("{subject}\n\nThis is demo message {i} of the opsdeck sandbox.")),
            html: None,
            files: Vec::new(),
            tags: vec![tag],
            user_variables: Map::new(),
            recipient_variables: Map::new(),
            testmode: false,
            tracking: true,
            deliver_at_ms: None,
            mime: None,
        };
        region.seed_message(domain, draft, at);
        region.run_due(at);
    }
    region.run_due(anchor_ms);
}
