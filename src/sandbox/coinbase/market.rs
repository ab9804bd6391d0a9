//! Market data and the background market. Candles are kept per minute (7 days) and per hour
//! (300 days) from every trade; larger buckets are summed from them when asked. The simulated
//! traders step on the sandbox clock: each step moves every product's fair price a little
//! (a seeded random walk), rests a bid and an ask around it, and sometimes sends a market
//! order, so the book, the tape and the candles move, and a user's resting order fills when
//! the price reaches it.

use std::collections::VecDeque;

use rust_decimal::prelude::ToPrimitive;
use rust_decimal::Decimal;

use super::book::Side;
use super::catalog::PRODUCTS;
use super::errors::CbError;
pub use super::events::Stats;
use super::orders::NewOrder;
use super::state::{caps, Candle, State, Stp};

/// The most steps one catch-up runs; a longer gap (a paused machine, a clock jump) is skipped.
const MAX_CATCH_UP: u32 = 600;
/// Resting orders one product's simulated traders keep before the oldest is cancelled.
const MAKER_ORDERS: usize = 60;
/// The granularities the exchange serves, in seconds.
pub const GRANULARITIES: [i64; 6] = [60, 300, 900, 3600, 21600, 86400];
/// The most buckets one candles request may span.
pub const MAX_BUCKETS: i64 = 300;

/// How many `increment`s make `value` (a price in ticks, a size in base units), saturating
/// past an `i64`; no price or size an order may name gets there.
fn to_units(value: Decimal, increment: Decimal) -> i64 {
    value.checked_div(increment).and_then(|units| units.round().to_i64()).unwrap_or(i64::MAX)
}

pub fn from_ticks(ticks: i64, increment: Decimal) -> Decimal {
    Decimal::from(ticks).checked_mul(increment).unwrap_or(Decimal::MAX)
}

fn push_candle(series: &mut VecDeque<Candle>, start_s: i64, price: i64, volume: i64, cap: usize) {
    match series.back_mut() {
        Some(last) if last.start_s >= start_s => {
            last.high = last.high.max(price);
            last.low = last.low.min(price);
            last.close = price;
            last.volume = last.volume.saturating_add(volume);
        }
        _ => {
            series.push_back(Candle { start_s, low: price, high: price, open: price, close: price, volume });
            if series.len() > cap {
                series.pop_front();
            }
        }
    }
}

impl State {
    /// The last trade's price, or the last candle's close before any trade.
    pub fn last_price(&self, product: usize) -> Option<Decimal> {
        let market = &self.markets[product];
        match market.trades.back() {
            Some(trade) => Some(trade.price),
            None => market.minutes.back().map(|c| from_ticks(c.close, PRODUCTS[product].quote_increment)),
        }
    }

    pub fn record_candle(&mut self, product: usize, at_ms: i64, price: Decimal, size: Decimal) {
        let spec = &PRODUCTS[product];
        let ticks = to_units(price, spec.quote_increment);
        let volume = to_units(size, spec.base_increment);
        let second = at_ms.div_euclid(1000);
        let market = &mut self.markets[product];
        push_candle(&mut market.minutes, second - second.rem_euclid(60), ticks, volume, caps::MINUTE_CANDLES);
        push_candle(&mut market.hours, second - second.rem_euclid(3600), ticks, volume, caps::HOUR_CANDLES);
    }

    /// Candles of `granularity` seconds from `start_s` to `end_s`, newest first; buckets with
    /// no trades are left out, as the exchange leaves them out.
    pub fn candles(&self, product: usize, granularity: i64, start_s: i64, end_s: i64) -> Result<Vec<Candle>, CbError> {
        if !GRANULARITIES.contains(&granularity) {
            return Err(CbError::bad_request("Unsupported granularity"));
        }
        if end_s < start_s {
            return Err(CbError::bad_request("start must be before end"));
        }
        if (end_s - start_s) / granularity > MAX_BUCKETS {
            return Err(CbError::bad_request(
                "granularity too small for the requested time range. Count of aggregations requested exceeds 300",
            ));
        }
        let market = &self.markets[product];
        let source = if granularity < 3600 { &market.minutes } else { &market.hours };
        let mut out: Vec<Candle> = Vec::new();
        let from = start_s - start_s.rem_euclid(granularity);
        for candle in source.iter().rev() {
            if candle.start_s > end_s {
                continue;
            }
            if candle.start_s < from {
                break;
            }
            let bucket = candle.start_s - candle.start_s.rem_euclid(granularity);
            match out.last_mut() {
                // Walking newest first: an older candle of the same bucket opens it.
                Some(last) if last.start_s == bucket => {
                    last.high = last.high.max(candle.high);
                    last.low = last.low.min(candle.low);
                    last.open = candle.open;
                    last.volume = last.volume.saturating_add(candle.volume);
                }
                _ => out.push(Candle { start_s: bucket, ..*candle }),
            }
        }
        // A span of exactly 300 granules touches 301 buckets when `start` is not on a bucket
        // boundary (the default range, ending now, always is); the exchange answers 300 at most.
        out.truncate(MAX_BUCKETS as usize);
        Ok(out)
    }

    pub fn stats(&self, product: usize, now_ms: i64) -> Stats {
        let spec = &PRODUCTS[product];
        let market = &self.markets[product];
        let now_s = now_ms.div_euclid(1000);
        let day: Vec<&Candle> = market.minutes.iter().rev().take_while(|c| c.start_s > now_s - 86_400).collect();
        let price = |ticks: i64| from_ticks(ticks, spec.quote_increment);
        let size = |units: i64| Decimal::from(units).checked_mul(spec.base_increment).unwrap_or(Decimal::MAX);
        let month: i64 = market
            .hours
            .iter()
            .rev()
            .take_while(|c| c.start_s > now_s - 30 * 86_400)
            .map(|c| c.volume)
            .fold(0i64, i64::saturating_add);
        Stats {
            open: day.last().map(|c| price(c.open)),
            high: day.iter().map(|c| c.high).max().map(price),
            low: day.iter().map(|c| c.low).min().map(price),
            last: self.last_price(product),
            volume: size(day.iter().map(|c| c.volume).fold(0i64, i64::saturating_add)),
            volume_30day: size(month),
        }
    }

    /// Runs the background market's steps due by `now_ms`.
    pub fn step_market_until(&mut self, now_ms: i64) {
        if self.settings.paused {
            self.next_step_ms = self.next_step_ms.max(now_ms);
            return;
        }
        let interval = self.step_interval_ms();
        let mut steps = 0;
        while self.next_step_ms <= now_ms && steps < MAX_CATCH_UP {
            let at = self.next_step_ms;
            for product in 0..PRODUCTS.len() {
                self.step_product(product, at);
            }
            self.steps += 1;
            self.next_step_ms += interval;
            steps += 1;
        }
        if self.next_step_ms <= now_ms {
            self.next_step_ms = now_ms + interval;
        }
    }

    pub fn step_interval_ms(&self) -> i64 {
        #[expect(clippy::cast_possible_truncation, reason = "clamped to 1 ms .. 1 hour")]
        let ms = (1000.0 / self.settings.rate.max(0.000_3)).clamp(1.0, 3_600_000.0) as i64;
        ms
    }

    /// The simulated traders, as profiles (set by the seed).
    fn traders(&self) -> Vec<usize> {
        (0..self.profiles.len()).filter(|p| !self.keeps_records(*p)).collect()
    }

    /// One step of one product's market.
    pub fn step_product(&mut self, product: usize, at_ms: i64) {
        let traders = self.traders();
        if traders.is_empty() {
            return;
        }
        let spec = &PRODUCTS[product];
        let tick = spec.quote_increment;
        let fair = self.markets[product].fair_ticks;
        let drift = (fair / 4000).max(1);
        let fair = (fair + self.rng.range(-drift, drift)).max(10);
        self.markets[product].fair_ticks = fair;
        let spread = (fair / 10_000).max(1);
        let lot_units = (spec.lot / spec.base_increment).to_i64().unwrap_or(1).max(1);
        let size = |rng: &mut crate::sandbox::rng::Rng| {
            Decimal::from((lot_units * rng.range(1, 40) / 10).max(1)) * spec.base_increment
        };
        let maker = traders[usize::try_from(self.rng.below(traders.len() as u64)).unwrap_or(0)];
        let bid = fair - spread * self.rng.range(1, 12);
        let ask = fair + spread * self.rng.range(1, 12);
        let mut placed = Vec::new();
        for (side, ticks) in [(Side::Buy, bid), (Side::Sell, ask)] {
            if ticks <= 0 {
                continue;
            }
            let order = NewOrder {
                stp: Stp::CancelOldest,
                ..NewOrder::limit(product, side, from_ticks(ticks, tick), size(&mut self.rng))
            };
            if let Ok(key) = self.place(maker, order, at_ms) {
                placed.push(key);
            }
        }
        if self.rng.chance(60) {
            let taker = traders[usize::try_from(self.rng.below(traders.len() as u64)).unwrap_or(0)];
            let side = if self.rng.chance(50) { Side::Buy } else { Side::Sell };
            let order =
                NewOrder { stp: Stp::CancelOldest, ..NewOrder::market(product, side, Some(size(&mut self.rng)), None) };
            let _ = self.place(taker, order, at_ms);
        }
        let resting = &mut self.markets[product].makers;
        resting.extend(placed);
        let mut stale = Vec::new();
        while resting.len() > MAKER_ORDERS {
            stale.extend(resting.pop_front());
        }
        for key in stale {
            self.finish(key, "canceled", at_ms);
        }
    }
}
