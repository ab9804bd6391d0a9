//! One product's order book: resting orders by price, first come first served at each price
//! (price-time priority). It holds only order keys; the orders themselves (remaining size,
//! owner) live in the exchange state, which keeps the two in step.

use std::collections::{BTreeMap, VecDeque};

use rust_decimal::Decimal;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    Buy,
    Sell,
}

impl Side {
    pub fn as_str(self) -> &'static str {
        match self {
            Side::Buy => "buy",
            Side::Sell => "sell",
        }
    }

    pub fn opposite(self) -> Side {
        match self {
            Side::Buy => Side::Sell,
            Side::Sell => Side::Buy,
        }
    }
}

#[derive(Clone, Debug, Default)]
pub struct Book {
    bids: BTreeMap<Decimal, VecDeque<u64>>,
    asks: BTreeMap<Decimal, VecDeque<u64>>,
}

impl Book {
    fn side_mut(&mut self, side: Side) -> &mut BTreeMap<Decimal, VecDeque<u64>> {
        match side {
            Side::Buy => &mut self.bids,
            Side::Sell => &mut self.asks,
        }
    }

    /// Puts an order at the back of its price's queue.
    pub fn insert(&mut self, side: Side, price: Decimal, key: u64) {
        self.side_mut(side).entry(price).or_default().push_back(key);
    }

    /// Takes an order out; false when it was not there.
    pub fn remove(&mut self, side: Side, price: Decimal, key: u64) -> bool {
        let levels = self.side_mut(side);
        let Some(queue) = levels.get_mut(&price) else { return false };
        let Some(at) = queue.iter().position(|k| *k == key) else { return false };
        queue.remove(at);
        if queue.is_empty() {
            levels.remove(&price);
        }
        true
    }

    pub fn best_bid(&self) -> Option<Decimal> {
        self.bids.keys().next_back().copied()
    }

    pub fn best_ask(&self) -> Option<Decimal> {
        self.asks.keys().next().copied()
    }

    /// The order a taker on `taker` side meets first: the oldest at the best opposite price.
    pub fn first_opposite(&self, taker: Side) -> Option<(Decimal, u64)> {
        let (price, queue) = match taker {
            Side::Buy => self.asks.iter().next()?,
            Side::Sell => self.bids.iter().next_back()?,
        };
        Some((*price, *queue.front()?))
    }

    /// Price levels best first, each with its queue in time order.
    pub fn levels(&self, side: Side) -> Box<dyn Iterator<Item = (Decimal, &VecDeque<u64>)> + '_> {
        match side {
            Side::Buy => Box::new(self.bids.iter().rev().map(|(p, q)| (*p, q))),
            Side::Sell => Box::new(self.asks.iter().map(|(p, q)| (*p, q))),
        }
    }

    #[cfg(test)]
    pub fn is_crossed(&self) -> bool {
        matches!((self.best_bid(), self.best_ask()), (Some(bid), Some(ask)) if bid >= ask)
    }

    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.bids.values().chain(self.asks.values()).map(VecDeque::len).sum()
    }
}
