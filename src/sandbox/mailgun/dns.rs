//! The simulated DNS of one region: which domains have published Mailgun's records and from
//! when. A new domain's records appear one DNS delay after it is created (on the sandbox clock),
//! so `verify` first finds them missing and later activates the domain; recipients' MX lookups
//! answer from the same place.

use std::collections::BTreeMap;

/// Top-level domains that never have mail servers (RFC 2606 / 6761), so sending to them bounces.
const NO_MAIL_TLDS: &[&str] = &["invalid", "test", "localhost", "local"];

#[derive(Clone, Debug, Default)]
pub struct SimulatedDns {
    /// Domain name (lower case) → when its records become visible (ms).
    published: BTreeMap<String, i64>,
}

impl SimulatedDns {
    /// `domain`'s records appear at `visible_at_ms`; an earlier publication is kept.
    pub fn publish(&mut self, domain: &str, visible_at_ms: i64) {
        let at = self.published.entry(domain.to_ascii_lowercase()).or_insert(visible_at_ms);
        *at = (*at).min(visible_at_ms);
    }

    /// Whether the Mailgun records of `domain` (one of the simulator's own) are visible now.
    pub fn records_visible(&self, domain: &str, now_ms: i64) -> bool {
        self.published.get(&domain.to_ascii_lowercase()).is_some_and(|at| *at <= now_ms)
    }

    /// Whether mail to `domain` has somewhere to go: the simulator's own domains once their MX
    /// records are published; reserved test TLDs never; every other domain does, as the
    /// example and real provider domains people send to do.
    pub fn has_mx(&self, domain: &str, now_ms: i64) -> bool {
        let domain = domain.trim().trim_end_matches('.').to_ascii_lowercase();
        if let Some(at) = self.published.get(&domain) {
            return *at <= now_ms;
        }
        match domain.rsplit_once('.') {
            Some((_, tld)) => !tld.is_empty() && !NO_MAIL_TLDS.contains(&tld),
            None => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_appear_after_the_delay_and_test_tlds_have_no_mx() {
        let mut dns = SimulatedDns::default();
        dns.publish("News.example.com", 1_000);
        assert!(!dns.records_visible("news.example.com", 999));
        assert!(!dns.has_mx("news.example.com", 999));
        assert!(dns.records_visible("news.example.com", 1_000));
        assert!(dns.has_mx("gmail.com", 0));
        assert!(!dns.has_mx("nowhere.invalid", 0));
        assert!(!dns.has_mx("localhost", 0));
    }
}
