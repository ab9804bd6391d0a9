//! Usage statistics: per-minute counters fed by real traffic on the simulator, per-hour seeded
//! history before that, aggregated on demand into minute/hour/day/month records (§6.6).

use std::borrow::Cow;
use std::collections::BTreeMap;

use time::OffsetDateTime;

use super::wire::Val;
use crate::sandbox::credentials::ABLY_APP_ID;

/// How a metric combines when minutes are rolled up into longer intervals.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Agg {
    Sum,
    Max,
}

/// Metric indices into [`Counters`]; names follow Ably's flat `entries` keys.
pub(super) mod m {
    pub(in super::super) const ALL_COUNT: usize = 0;
    pub(in super::super) const ALL_DATA: usize = 1;
    pub(in super::super) const ALL_MSG_COUNT: usize = 2;
    pub(in super::super) const ALL_MSG_DATA: usize = 3;
    pub(in super::super) const ALL_PRESENCE_COUNT: usize = 4;
    pub(in super::super) const ALL_PRESENCE_DATA: usize = 5;
    pub(in super::super) const IN_COUNT: usize = 6;
    pub(in super::super) const IN_DATA: usize = 7;
    pub(in super::super) const IN_REALTIME_COUNT: usize = 8;
    pub(in super::super) const IN_REALTIME_DATA: usize = 9;
    pub(in super::super) const IN_REST_COUNT: usize = 10;
    pub(in super::super) const IN_REST_DATA: usize = 11;
    pub(in super::super) const OUT_COUNT: usize = 12;
    pub(in super::super) const OUT_DATA: usize = 13;
    pub(in super::super) const OUT_REALTIME_COUNT: usize = 14;
    pub(in super::super) const OUT_REALTIME_DATA: usize = 15;
    pub(in super::super) const PERSISTED_COUNT: usize = 16;
    pub(in super::super) const PERSISTED_DATA: usize = 17;
    pub(in super::super) const CONNECTIONS_PEAK: usize = 18;
    pub(in super::super) const CONNECTIONS_OPENED: usize = 19;
    pub(in super::super) const CHANNELS_PEAK: usize = 20;
    pub(in super::super) const CHANNELS_OPENED: usize = 21;
    pub(in super::super) const API_ALL_OK: usize = 22;
    pub(in super::super) const API_ALL_FAILED: usize = 23;
    pub(in super::super) const API_ALL_REFUSED: usize = 24;
    pub(in super::super) const API_TOKEN_OK: usize = 25;
    pub(in super::super) const API_TOKEN_FAILED: usize = 26;
    pub(in super::super) const API_TOKEN_REFUSED: usize = 27;
    pub(in super::super) const API_PUSH_OK: usize = 28;
    pub(in super::super) const API_PUSH_FAILED: usize = 29;
    pub(in super::super) const API_PUSH_REFUSED: usize = 30;
    pub(in super::super) const API_OTHER_OK: usize = 31;
    pub(in super::super) const API_OTHER_FAILED: usize = 32;
    pub(in super::super) const API_OTHER_REFUSED: usize = 33;
    pub(in super::super) const PUSH_DIRECT: usize = 34;
    pub(in super::super) const PUSH_CHANNEL_MESSAGES: usize = 35;
    pub(in super::super) const PUSH_ALL: usize = 36;
    pub(in super::super) const PUSH_DELIVERED: usize = 37;
    pub(in super::super) const PUSH_FAILED: usize = 38;
    pub(in super::super) const COUNT: usize = 39;
}

/// Entry names and roll-up rule, in index order.
const METRICS: [(&str, Agg); m::COUNT] = [
    ("messages.all.all.count", Agg::Sum),
    ("messages.all.all.data", Agg::Sum),
    ("messages.all.messages.count", Agg::Sum),
    ("messages.all.messages.data", Agg::Sum),
    ("messages.all.presence.count", Agg::Sum),
    ("messages.all.presence.data", Agg::Sum),
    ("messages.inbound.all.all.count", Agg::Sum),
    ("messages.inbound.all.all.data", Agg::Sum),
    ("messages.inbound.realtime.messages.count", Agg::Sum),
    ("messages.inbound.realtime.messages.data", Agg::Sum),
    ("messages.inbound.rest.messages.count", Agg::Sum),
    ("messages.inbound.rest.messages.data", Agg::Sum),
    ("messages.outbound.all.all.count", Agg::Sum),
    ("messages.outbound.all.all.data", Agg::Sum),
    ("messages.outbound.realtime.messages.count", Agg::Sum),
    ("messages.outbound.realtime.messages.data", Agg::Sum),
    ("messages.persisted.all.count", Agg::Sum),
    ("messages.persisted.all.data", Agg::Sum),
    ("connections.all.peak", Agg::Max),
    ("connections.all.opened", Agg::Sum),
    ("channels.peak", Agg::Max),
    ("channels.opened", Agg::Sum),
    ("apiRequests.all.succeeded", Agg::Sum),
    ("apiRequests.all.failed", Agg::Sum),
    ("apiRequests.all.refused", Agg::Sum),
    ("apiRequests.tokenRequests.succeeded", Agg::Sum),
    ("apiRequests.tokenRequests.failed", Agg::Sum),
    ("apiRequests.tokenRequests.refused", Agg::Sum),
    ("apiRequests.push.succeeded", Agg::Sum),
    ("apiRequests.push.failed", Agg::Sum),
    ("apiRequests.push.refused", Agg::Sum),
    ("apiRequests.other.succeeded", Agg::Sum),
    ("apiRequests.other.failed", Agg::Sum),
    ("apiRequests.other.refused", Agg::Sum),
    ("push.directPublishes", Agg::Sum),
    ("push.channelMessages", Agg::Sum),
    ("push.notifications.all", Agg::Sum),
    ("push.notifications.delivered", Agg::Sum),
    ("push.notifications.failed", Agg::Sum),
];

/// One interval's metrics.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Counters(pub(super) [u64; m::COUNT]);

impl Default for Counters {
    fn default() -> Counters {
        Counters([0; m::COUNT])
    }
}

impl Counters {
    pub(super) fn add(&mut self, metric: usize, n: u64) {
        if let Some(slot) = self.0.get_mut(metric) {
            *slot = slot.saturating_add(n);
        }
    }

    pub(super) fn raise(&mut self, metric: usize, n: u64) {
        if let Some(slot) = self.0.get_mut(metric) {
            *slot = (*slot).max(n);
        }
    }

    fn merge(&mut self, other: &Counters) {
        for (i, (_, agg)) in METRICS.iter().enumerate() {
            match agg {
                Agg::Sum => self.0[i] = self.0[i].saturating_add(other.0[i]),
                Agg::Max => self.0[i] = self.0[i].max(other.0[i]),
            }
        }
    }

    /// Ably's sparse `entries` map: zero metrics are left out.
    fn entries(&self) -> Val {
        let fields = METRICS
            .iter()
            .zip(self.0.iter())
            .filter(|(_, &v)| v > 0)
            .map(|((name, _), &v)| (Cow::Borrowed(*name), Val::Int(i64::try_from(v).unwrap_or(i64::MAX))))
            .collect();
        Val::Map(fields)
    }
}

/// The `unit` of a stats query.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Unit {
    Minute,
    Hour,
    Day,
    Month,
}

const MINUTE_MS: i64 = 60_000;
pub(super) const HOUR_MS: i64 = 3_600_000;
const DAY_MS: i64 = 86_400_000;

impl Unit {
    pub(super) fn parse(s: &str) -> Option<Unit> {
        match s {
            "minute" => Some(Unit::Minute),
            "hour" => Some(Unit::Hour),
            "day" => Some(Unit::Day),
            "month" => Some(Unit::Month),
            _ => None,
        }
    }

    pub(super) fn name(self) -> &'static str {
        match self {
            Unit::Minute => "minute",
            Unit::Hour => "hour",
            Unit::Day => "day",
            Unit::Month => "month",
        }
    }

    /// Start of the interval holding `ms`.
    pub(super) fn floor(self, ms: i64) -> i64 {
        match self {
            Unit::Minute => ms - ms.rem_euclid(MINUTE_MS),
            Unit::Hour => ms - ms.rem_euclid(HOUR_MS),
            Unit::Day => ms - ms.rem_euclid(DAY_MS),
            Unit::Month => {
                let day_start = ms - ms.rem_euclid(DAY_MS);
                match datetime(day_start) {
                    Some(dt) => day_start - (i64::from(dt.day()) - 1) * DAY_MS,
                    None => day_start,
                }
            }
        }
    }

    /// `intervalId` in the forms ably-python parses: `yyyy-mm-dd:hh:mm` for minutes,
    /// `yyyy-mm-dd:hh` for the others.
    pub(super) fn interval_id(self, start: i64) -> String {
        let Some(dt) = datetime(start) else {
            return "1970-01-01:00".to_owned();
        };
        let (y, mo, d, h) = (dt.year(), u8::from(dt.month()), dt.day(), dt.hour());
        match self {
            Unit::Minute => format!("{y:04}-{mo:02}-{d:02}:{h:02}:{:02}", dt.minute()),
            _ => format!("{y:04}-{mo:02}-{d:02}:{h:02}"),
        }
    }
}

fn datetime(ms: i64) -> Option<OffsetDateTime> {
    OffsetDateTime::from_unix_timestamp_nanos(i128::from(ms) * 1_000_000).ok()
}

/// `inProgress` for the interval still running: the time of the latest data.
fn in_progress(now: i64) -> String {
    match datetime(now) {
        Some(dt) => format!(
            "{:04}-{:02}-{:02}:{:02}:{:02}:{:02}",
            dt.year(),
            u8::from(dt.month()),
            dt.day(),
            dt.hour(),
            dt.minute(),
            dt.second()
        ),
        None => String::new(),
    }
}

/// All counters: real and seeded minutes, and seeded hours older than the first minute.
#[derive(Debug, Default)]
pub(super) struct StatsBook {
    pub(super) minutes: BTreeMap<i64, Counters>,
    pub(super) hours: BTreeMap<i64, Counters>,
}

/// Minutes kept as minutes (a week): older ones are rolled into their hour, so stats keep their
/// totals while memory stays bounded under any traffic or `--speed`.
pub(super) const MAX_MINUTES: usize = 7 * 24 * 60;
/// Hours kept (two years); older ones are dropped.
pub(super) const MAX_HOURS: usize = 2 * 366 * 24;

impl StatsBook {
    /// The counters of the minute holding `now`, created on first use.
    pub(super) fn minute(&mut self, now: i64) -> &mut Counters {
        let key = Unit::Minute.floor(now);
        if !self.minutes.contains_key(&key) {
            self.roll_up_beyond_caps();
        }
        self.minutes.entry(key).or_default()
    }

    /// Rolls the oldest minutes into their hours, and drops the oldest hours, until both fit.
    /// An hour bucket never follows a minute of a later hour, which `page` relies on.
    fn roll_up_beyond_caps(&mut self) {
        while self.minutes.len() >= MAX_MINUTES {
            let Some((minute, counters)) = self.minutes.pop_first() else { break };
            self.hours.entry(Unit::Hour.floor(minute)).or_default().merge(&counters);
        }
        while self.hours.len() > MAX_HOURS {
            self.hours.pop_first();
        }
    }

    /// Up to `want` intervals of `unit` starting in `[floor(start), end]`, in the order of
    /// `forwards`, from `cursor` (an interval start) on. Buckets are walked lazily and merged per
    /// interval, so a page costs its own size, not the whole history. Like Ably, a query starting
    /// mid-interval still sees that interval.
    pub(super) fn page(&self, query: &StatsQuery, want: usize) -> Vec<(i64, Counters)> {
        let unit = query.unit;
        let mut lo = unit.floor(query.start);
        let mut hi = end_bucket_bound(unit, query.end);
        if let Some(cursor) = query.cursor {
            if query.forwards {
                lo = lo.max(cursor);
            } else {
                hi = hi.min(end_bucket_bound(unit, cursor));
            }
        }
        let mut out: Vec<(i64, Counters)> = Vec::new();
        if lo >= hi {
            return out;
        }
        // Seeded hours all precede the minutes, so the chain is in key order.
        let hours = if unit == Unit::Minute { None } else { Some(self.hours.range(lo..hi)) };
        let buckets = hours.into_iter().flatten().chain(self.minutes.range(lo..hi));
        let buckets: Box<dyn Iterator<Item = (&i64, &Counters)>> =
            if query.forwards { Box::new(buckets) } else { Box::new(buckets.rev()) };
        for (&bucket, counters) in buckets {
            // Buckets are at most an hour long, so each lies inside one interval of any unit.
            let key = unit.floor(bucket);
            if key > query.end || (!query.forwards && query.cursor.is_some_and(|c| key > c)) {
                continue;
            }
            let full = out.len() == want;
            match out.last_mut() {
                Some((last, merged)) if *last == key => merged.merge(counters),
                _ if full => break,
                _ => out.push((key, counters.clone())),
            }
        }
        out
    }
}

/// A stats query, parsed.
pub(super) struct StatsQuery {
    pub(super) unit: Unit,
    pub(super) start: i64,
    pub(super) end: i64,
    pub(super) forwards: bool,
    pub(super) cursor: Option<i64>,
}

/// Exclusive upper bound of bucket keys that can fall into intervals starting at or before `end`.
fn end_bucket_bound(unit: Unit, end: i64) -> i64 {
    let last_start = unit.floor(end);
    let span = match unit {
        Unit::Minute => MINUTE_MS,
        Unit::Hour => HOUR_MS,
        Unit::Day => DAY_MS,
        Unit::Month => 31 * DAY_MS,
    };
    last_start.saturating_add(span)
}

/// One stats record (§6.6).
pub(super) fn record(unit: Unit, start: i64, counters: &Counters, now: i64) -> Val {
    let mut v = Val::map([
        ("intervalId", Val::Str(unit.interval_id(start))),
        ("unit", Val::str(unit.name())),
        ("appId", Val::str(ABLY_APP_ID)),
        ("schema", Val::str("https://schemas.ably.com/json/app-stats-0.0.5.json")),
        ("entries", counters.entries()),
    ]);
    if unit.floor(now) == start {
        v.push("inProgress", Val::Str(in_progress(now)));
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interval_ids_and_floors() {
        // 2025-01-20 15:11:42.5 UTC
        let ms = 1_737_385_902_500;
        assert_eq!(Unit::Minute.interval_id(Unit::Minute.floor(ms)), "2025-01-20:15:11");
        assert_eq!(Unit::Hour.interval_id(Unit::Hour.floor(ms)), "2025-01-20:15");
        assert_eq!(Unit::Day.interval_id(Unit::Day.floor(ms)), "2025-01-20:00");
        assert_eq!(Unit::Month.interval_id(Unit::Month.floor(ms)), "2025-01-01:00");
    }

    #[test]
    fn peaks_take_the_maximum_and_counts_add_up() {
        let mut book = StatsBook::default();
        let base = 1_737_385_200_000; // 15:00
        book.minute(base).add(m::ALL_COUNT, 3);
        book.minute(base).raise(m::CONNECTIONS_PEAK, 7);
        book.minute(base + 60_000).add(m::ALL_COUNT, 4);
        book.minute(base + 60_000).raise(m::CONNECTIONS_PEAK, 5);
        let query = StatsQuery { unit: Unit::Hour, start: 0, end: base + HOUR_MS, forwards: false, cursor: None };
        let hours = book.page(&query, 5);
        assert_eq!(hours.len(), 1);
        let (start, c) = &hours[0];
        assert_eq!(*start, base);
        assert_eq!(c.0[m::ALL_COUNT], 7);
        assert_eq!(c.0[m::CONNECTIONS_PEAK], 7);
    }

    #[test]
    fn old_minutes_roll_into_their_hours_and_the_totals_stay() {
        let mut book = StatsBook::default();
        let base = 1_737_385_200_000; // 15:00
        let minutes = MAX_MINUTES + 180;
        for i in 0..minutes {
            book.minute(base + i64::try_from(i).unwrap() * 60_000).add(m::ALL_COUNT, 1);
        }
        assert!(book.minutes.len() <= MAX_MINUTES, "{} minutes kept", book.minutes.len());
        assert_eq!(book.hours.len(), 3, "the first three hours are now hours");
        let query =
            StatsQuery { unit: Unit::Day, start: 0, end: base + 30 * 24 * HOUR_MS, forwards: true, cursor: None };
        let total: u64 = book.page(&query, 100).iter().map(|(_, c)| c.0[m::ALL_COUNT]).sum();
        assert_eq!(total, u64::try_from(minutes).unwrap(), "nothing counted is lost");
    }
}
