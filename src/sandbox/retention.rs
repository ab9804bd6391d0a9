//! Retention: stored records age out the way the vendor's do (on the sandbox clock) and every
//! collection has a count cap, so a sandbox left running under load keeps bounded memory.
//! Two shapes cover the simulators: [`Retained`], a time-ordered log (message history, events)
//! addressed by sequence numbers that stay valid as old records go; and [`Collection`], records
//! by key (transactions, orders) evicted oldest-inserted first.

use std::collections::{BTreeMap, VecDeque};

/// How long records live and how many a collection keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RetentionPolicy {
    /// Records older than this (sandbox ms) are dropped; `None` keeps them until the count cap.
    pub max_age_ms: Option<i64>,
    /// The most records kept; the oldest go first when it is reached. At least 1.
    pub max_count: usize,
}

impl RetentionPolicy {
    pub const HOUR_MS: i64 = 3_600_000;

    pub const fn new(max_age_ms: Option<i64>, max_count: usize) -> RetentionPolicy {
        RetentionPolicy { max_age_ms, max_count }
    }

    fn cap(&self) -> usize {
        self.max_count.max(1)
    }

    /// The oldest timestamp still retained at `now`.
    fn horizon(&self, now_ms: i64) -> Option<i64> {
        self.max_age_ms.map(|age| now_ms.saturating_sub(age))
    }
}

/// A time-ordered log. Each record gets a sequence number (0, 1, …) that never changes, so a
/// page cursor holding one stays valid while older records are dropped; timestamps must not
/// decrease (a record pushed with an earlier time is stored at the last record's time order
/// anyway, and ages out with it).
#[derive(Clone, Debug)]
pub struct Retained<T> {
    policy: RetentionPolicy,
    records: VecDeque<(i64, T)>,
    /// Sequence number of `records[0]`.
    first_seq: u64,
}

impl<T> Retained<T> {
    pub fn new(policy: RetentionPolicy) -> Retained<T> {
        Retained { policy, records: VecDeque::new(), first_seq: 0 }
    }

    pub fn policy(&self) -> RetentionPolicy {
        self.policy
    }

    /// Appends a record stamped `at_ms`; returns its sequence number and the records the count
    /// cap pushed out (oldest first), so the caller can drop any index pointing at them.
    pub fn push(&mut self, at_ms: i64, item: T) -> (u64, Vec<(u64, T)>) {
        let seq = self.end_seq();
        self.records.push_back((at_ms, item));
        let mut evicted = Vec::new();
        while self.records.len() > self.policy.cap() {
            if let Some(old) = self.pop_front() {
                evicted.push(old);
            }
        }
        (seq, evicted)
    }

    /// Drops the records older than the policy's age at `now_ms`; returns them.
    pub fn expire(&mut self, now_ms: i64) -> Vec<(u64, T)> {
        let Some(horizon) = self.policy.horizon(now_ms) else {
            return Vec::new();
        };
        let mut expired = Vec::new();
        while self.records.front().is_some_and(|(at, _)| *at < horizon) {
            if let Some(old) = self.pop_front() {
                expired.push(old);
            }
        }
        expired
    }

    fn pop_front(&mut self) -> Option<(u64, T)> {
        let (_, item) = self.records.pop_front()?;
        let seq = self.first_seq;
        self.first_seq += 1;
        Some((seq, item))
    }

    pub fn len(&self) -> usize {
        self.records.len()
    }

    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    /// Sequence number of the oldest record kept (or of the next one, when empty).
    pub fn first_seq(&self) -> u64 {
        self.first_seq
    }

    /// Sequence number the next record will get.
    pub fn end_seq(&self) -> u64 {
        self.first_seq + self.records.len() as u64
    }

    /// The record with sequence number `seq`, if still kept.
    pub fn get(&self, seq: u64) -> Option<&T> {
        let index = usize::try_from(seq.checked_sub(self.first_seq)?).ok()?;
        self.records.get(index).map(|(_, item)| item)
    }

    /// The newest record.
    pub fn last(&self) -> Option<&T> {
        self.records.back().map(|(_, item)| item)
    }

    /// Records with their sequence numbers and times, oldest first.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (u64, i64, &T)> + ExactSizeIterator {
        let first = self.first_seq;
        self.records.iter().enumerate().map(move |(i, (at, item))| (first + i as u64, *at, item))
    }

    /// The sequence number of the first record for which `before` is false, assuming `before`
    /// holds for a prefix (binary search; e.g. "stamped before t").
    pub fn partition_seq(&self, before: impl Fn(i64, &T) -> bool) -> u64 {
        self.first_seq + self.records.partition_point(|(at, item)| before(*at, item)) as u64
    }

    /// The records with sequence numbers in `from..to` (clamped to what is kept), oldest first.
    pub fn range(&self, from: u64, to: u64) -> impl DoubleEndedIterator<Item = &T> {
        let lo = usize::try_from(from.saturating_sub(self.first_seq)).unwrap_or(usize::MAX).min(self.records.len());
        let hi = usize::try_from(to.saturating_sub(self.first_seq)).unwrap_or(usize::MAX).min(self.records.len());
        self.records.range(lo..hi.max(lo)).map(|(_, item)| item)
    }

    /// Removes every record, keeping the sequence going so old cursors cannot name new records.
    pub fn clear(&mut self) {
        self.first_seq = self.end_seq();
        self.records.clear();
    }
}

/// Records by key, capped and aged by insertion time: orders, transactions, shipments.
/// Replacing a record keeps its original insertion time (an update does not make an old
/// record young again).
#[derive(Clone, Debug)]
pub struct Collection<K, V> {
    policy: RetentionPolicy,
    entries: BTreeMap<K, Entry<V>>,
    /// Insertion order for eviction; entries removed since are skipped lazily (`generation`).
    order: VecDeque<(i64, u64, K)>,
    next_generation: u64,
}

#[derive(Clone, Debug)]
struct Entry<V> {
    inserted_ms: i64,
    generation: u64,
    value: V,
}

impl<K: Ord + Clone, V> Collection<K, V> {
    pub fn new(policy: RetentionPolicy) -> Collection<K, V> {
        Collection { policy, entries: BTreeMap::new(), order: VecDeque::new(), next_generation: 0 }
    }

    /// Inserts or replaces `key`; returns the records the count cap evicted (never `key`).
    pub fn insert(&mut self, key: K, at_ms: i64, value: V) -> Vec<(K, V)> {
        if let Some(entry) = self.entries.get_mut(&key) {
            entry.value = value;
            return Vec::new();
        }
        let generation = self.next_generation;
        self.next_generation += 1;
        self.entries.insert(key.clone(), Entry { inserted_ms: at_ms, generation, value });
        self.order.push_back((at_ms, generation, key));
        let mut evicted = Vec::new();
        while self.entries.len() > self.policy.cap() {
            match self.pop_oldest() {
                Some(old) => evicted.push(old),
                None => break,
            }
        }
        self.compact();
        evicted
    }

    /// Drops records inserted longer ago than the policy's age; returns them.
    pub fn expire(&mut self, now_ms: i64) -> Vec<(K, V)> {
        let Some(horizon) = self.policy.horizon(now_ms) else {
            return Vec::new();
        };
        let mut expired = Vec::new();
        while let Some((at, _, _)) = self.order.front() {
            if *at >= horizon {
                break;
            }
            match self.pop_oldest() {
                Some(old) => expired.push(old),
                None => break,
            }
        }
        expired
    }

    /// The oldest live record, removed; stale order entries on the way are discarded. Public
    /// for collections whose records also count against a second cap (Mailgun's events).
    pub fn pop_oldest(&mut self) -> Option<(K, V)> {
        while let Some((_, generation, key)) = self.order.pop_front() {
            if self.entries.get(&key).is_some_and(|e| e.generation == generation) {
                return self.entries.remove(&key).map(|e| (key, e.value));
            }
        }
        None
    }

    /// Keeps the order queue from growing with removed keys: rebuilt when mostly stale.
    fn compact(&mut self) {
        if self.order.len() > 2 * self.entries.len() + 64 {
            let entries = &self.entries;
            self.order.retain(|(_, generation, key)| entries.get(key).is_some_and(|e| e.generation == *generation));
        }
    }

    pub fn get(&self, key: &K) -> Option<&V> {
        self.entries.get(key).map(|e| &e.value)
    }

    pub fn get_mut(&mut self, key: &K) -> Option<&mut V> {
        self.entries.get_mut(key).map(|e| &mut e.value)
    }

    pub fn contains(&self, key: &K) -> bool {
        self.entries.contains_key(key)
    }

    pub fn remove(&mut self, key: &K) -> Option<V> {
        let removed = self.entries.remove(key).map(|e| e.value);
        self.compact();
        removed
    }

    /// When `key` was inserted (sandbox ms).
    pub fn inserted_at(&self, key: &K) -> Option<i64> {
        self.entries.get(key).map(|e| e.inserted_ms)
    }

    /// Records in key order.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (&K, &V)> {
        self.entries.iter().map(|(k, e)| (k, &e.value))
    }

    pub fn values(&self) -> impl DoubleEndedIterator<Item = &V> {
        self.entries.values().map(|e| &e.value)
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOUR: i64 = RetentionPolicy::HOUR_MS;

    #[test]
    fn log_keeps_the_cap_and_sequence_numbers_survive_eviction() {
        let mut log = Retained::new(RetentionPolicy::new(Some(24 * HOUR), 100));
        for i in 0..1000_i64 {
            let (seq, evicted) = log.push(i, i);
            assert_eq!(seq, u64::try_from(i).expect("positive"));
            assert_eq!(evicted.len(), usize::from(i >= 100));
        }
        assert_eq!(log.len(), 100);
        assert_eq!((log.first_seq(), log.end_seq()), (900, 1000));
        assert_eq!(log.get(950), Some(&950));
        assert_eq!(log.get(10), None);
        assert_eq!(log.range(990, 2000).copied().collect::<Vec<_>>(), (990..1000).collect::<Vec<_>>());
        assert_eq!(log.partition_seq(|at, _| at < 950), 950);
    }

    #[test]
    fn log_ages_out_on_the_clock() {
        let mut log = Retained::new(RetentionPolicy::new(Some(24 * HOUR), 1000));
        log.push(0, "old");
        log.push(10 * HOUR, "newer");
        assert!(log.expire(24 * HOUR).is_empty());
        assert_eq!(log.expire(24 * HOUR + 1), vec![(0, "old")]);
        assert_eq!(log.iter().map(|(seq, _, v)| (seq, *v)).collect::<Vec<_>>(), [(1, "newer")]);
        log.clear();
        assert_eq!((log.len(), log.first_seq()), (0, 2));
    }

    #[test]
    fn collection_caps_ages_and_survives_removes() {
        let mut orders = Collection::new(RetentionPolicy::new(Some(HOUR), 3));
        for (i, key) in ["a", "b", "c"].into_iter().enumerate() {
            assert!(orders.insert(key, i64::try_from(i).expect("small"), i).is_empty());
        }
        // Replacing keeps the insertion time; the cap then evicts the oldest insert.
        assert!(orders.insert("a", 50, 10).is_empty());
        assert_eq!(orders.insert("d", 60, 3), vec![("a", 10)]);
        assert_eq!(orders.remove(&"b"), Some(1));
        assert!(orders.insert("e", 70, 4).is_empty());
        assert_eq!(orders.len(), 3);
        assert_eq!(orders.expire(HOUR + 65).into_iter().map(|(k, _)| k).collect::<Vec<_>>(), ["c", "d"]);
        assert_eq!(orders.iter().map(|(k, v)| (*k, *v)).collect::<Vec<_>>(), [("e", 4)]);
        for i in 0..10_000 {
            orders.insert("x", i, 0);
            orders.remove(&"x");
        }
        assert!(orders.order.len() < 100, "removed keys do not pile up");
    }
}
