//! Id generators: deterministic from the seed, so the same `--seed` and the same requests give
//! the same ids (reproducible demos and tests), and distinct within a simulator's lifetime.
//! A generator lives inside a simulator's state, under its lock, and is reset with it.

use super::rng::Rng;

/// Hands out ids in the styles vendors use.
#[derive(Clone, Debug)]
pub struct Ids {
    rng: Rng,
    counter: u64,
}

impl Ids {
    /// `stream` separates generators that share a seed (one per collection), so adding a
    /// generator does not shift the ids of another.
    pub fn new(seed: u64, stream: u64) -> Ids {
        Ids { rng: Rng::new(seed ^ stream.wrapping_mul(0xD1B5_4A32_D192_ED03)), counter: 0 }
    }

    /// The next of an increasing sequence starting after `first - 1`: AvaTax's numeric ids.
    pub fn sequential(&mut self, first: u64) -> u64 {
        self.counter = self.counter.wrapping_add(1);
        first.wrapping_add(self.counter - 1)
    }

    /// A UUID-shaped id (Coinbase orders, Deepgram requests).
    pub fn uuid(&mut self) -> String {
        self.rng.uuid()
    }

    /// `prefix_` and `len` alphanumerics (EasyPost `shp_…`); unique because the counter is
    /// mixed in, not only drawn.
    pub fn prefixed(&mut self, prefix: &str, len: usize) -> String {
        self.counter = self.counter.wrapping_add(1);
        let tail = self.rng.hex(len.saturating_sub(6));
        let count = format!("{:06x}", self.counter & 0xFF_FFFF);
        format!("{prefix}_{tail}{count}")
    }

    /// `len` lower-case hex digits.
    pub fn hex(&mut self, len: usize) -> String {
        self.rng.hex(len)
    }

    /// `len` characters of `[A-Za-z0-9]`.
    pub fn alphanumeric(&mut self, len: usize) -> String {
        self.rng.alphanumeric(len)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::Ids;

    #[test]
    fn same_seed_same_ids_and_no_repeats() {
        let mut a = Ids::new(1, 2);
        let mut b = Ids::new(1, 2);
        assert_eq!(a.uuid(), b.uuid());
        assert_ne!(Ids::new(1, 3).uuid(), Ids::new(1, 2).uuid());
        assert_eq!((a.sequential(1000), a.sequential(1000)), (1000, 1001));
        let ids: HashSet<String> = (0..10_000).map(|_| b.prefixed("shp", 32)).collect();
        assert_eq!(ids.len(), 10_000);
        assert!(ids.iter().all(|id| id.starts_with("shp_") && id.len() == 36));
    }
}
