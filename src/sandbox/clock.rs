//! The sandbox clock: one per sandbox, read by every time-driven behaviour of every simulator
//! (timestamps, retention, trackers, markets), so `--speed N` makes all of them move N times as
//! fast and a test can jump it forward instead of sleeping.

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

/// The fastest `--speed` accepted: a day passes in under nine seconds, which is as fast as a
/// person can still watch things move; beyond it timestamps would outrun the ms resolution.
pub const MAX_SPEED: f64 = 10_000.0;

/// Sandbox time = start + speed × elapsed wall time + any [`SandboxClock::advance`]. Clones
/// share one clock (an `Arc`), so a simulator can keep its own handle cheaply.
#[derive(Clone, Debug)]
pub struct SandboxClock {
    inner: Arc<ClockInner>,
}

#[derive(Debug)]
struct ClockInner {
    started: Instant,
    start_ms: i64,
    speed: f64,
    /// Jumps made by [`SandboxClock::advance`], ms; atomic so readers never take a lock.
    skipped_ms: AtomicI64,
}

/// Why a speed was refused: the message names the bounds, for `--speed` and for tests.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("the sandbox speed must be greater than 0 and at most {MAX_SPEED}, not {0}")]
pub struct SpeedError(pub f64);

impl SandboxClock {
    /// A clock starting at the current wall time, running `speed` times as fast as it.
    pub fn new(speed: f64) -> Result<SandboxClock, SpeedError> {
        SandboxClock::starting_at(wall_ms(), speed)
    }

    /// A clock starting at `start_ms` (ms since the epoch): for tests that need fixed dates.
    pub fn starting_at(start_ms: i64, speed: f64) -> Result<SandboxClock, SpeedError> {
        if !(speed > 0.0 && speed <= MAX_SPEED) {
            return Err(SpeedError(speed));
        }
        Ok(SandboxClock {
            inner: Arc::new(ClockInner { started: Instant::now(), start_ms, speed, skipped_ms: AtomicI64::new(0) }),
        })
    }

    /// Real time: speed 1 from now. What a simulator built outside a sandbox (a unit test) uses.
    pub fn real_time() -> SandboxClock {
        SandboxClock {
            inner: Arc::new(ClockInner {
                started: Instant::now(),
                start_ms: wall_ms(),
                speed: 1.0,
                skipped_ms: AtomicI64::new(0),
            }),
        }
    }

    pub fn speed(&self) -> f64 {
        self.inner.speed
    }

    /// Sandbox time in ms since the epoch, the unit most vendors' timestamps reduce to.
    pub fn now_ms(&self) -> i64 {
        let elapsed = self.inner.started.elapsed().as_secs_f64() * 1000.0 * self.inner.speed;
        // Saturating: a sandbox left running at full speed for centuries still answers.
        #[expect(clippy::cast_possible_truncation, reason = "saturating float to int conversion is wanted")]
        let elapsed = elapsed as i64;
        self.inner.start_ms.saturating_add(elapsed).saturating_add(self.inner.skipped_ms.load(Ordering::Relaxed))
    }

    /// Milliseconds since the clock started as a network peer lives them: wall time, which
    /// `--speed` does not hurry, plus every [`SandboxClock::advance`], which a test makes to
    /// pass a timeout without waiting. For timeouts of a connection (a live stream's idle
    /// close), which a sped-up sandbox must not shorten for a client sending in real time.
    pub fn real_ms(&self) -> i64 {
        let wall = i64::try_from(self.inner.started.elapsed().as_millis()).unwrap_or(i64::MAX);
        wall.saturating_add(self.inner.skipped_ms.load(Ordering::Relaxed))
    }

    /// Sandbox time as a date-time, for vendors that speak dates.
    pub fn now(&self) -> OffsetDateTime {
        datetime(self.now_ms())
    }

    /// Moves sandbox time forward by `ms` for every holder of this clock: lets a test (or a
    /// future control action) age records out without waiting. Negative values are ignored, so
    /// sandbox time never runs backwards.
    pub fn advance(&self, ms: i64) {
        if ms > 0 {
            self.inner.skipped_ms.fetch_add(ms, Ordering::Relaxed);
        }
    }
}

/// Wall time in ms since the epoch.
pub fn wall_ms() -> i64 {
    let nanos = OffsetDateTime::now_utc().unix_timestamp_nanos() / 1_000_000;
    i64::try_from(nanos).unwrap_or(i64::MAX)
}

/// The date-time of `ms` since the epoch (clamped to what `time` can represent).
pub fn datetime(ms: i64) -> OffsetDateTime {
    OffsetDateTime::from_unix_timestamp_nanos(i128::from(ms) * 1_000_000).unwrap_or(if ms < 0 {
        OffsetDateTime::UNIX_EPOCH
    } else {
        time::PrimitiveDateTime::MAX.assume_utc()
    })
}

/// RFC 3339 with millisecond precision and `Z`, the form most vendors' JSON timestamps take
/// (`2024-05-01T12:00:00.123Z`).
pub fn rfc3339_ms(ms: i64) -> String {
    let dt = datetime(ms);
    let date = dt.date();
    let t = dt.time();
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
        date.year(),
        u8::from(date.month()),
        date.day(),
        t.hour(),
        t.minute(),
        t.second(),
        t.millisecond()
    )
}

/// RFC 3339 in whole seconds (`2024-05-01T12:00:00Z`), as TaxJar and EasyPost write times.
pub fn rfc3339_seconds(ms: i64) -> String {
    let mut text = rfc3339_ms(ms);
    text.replace_range(19..23, "");
    text
}

/// The calendar date (`2024-05-01`), as AvaTax and TaxJar write document dates.
pub fn date(ms: i64) -> String {
    rfc3339_ms(ms)[..10].to_owned()
}

/// Parses an RFC 3339 date-time into ms since the epoch; `None` when it is not one.
pub fn parse_rfc3339(text: &str) -> Option<i64> {
    let dt = OffsetDateTime::parse(text.trim(), &Rfc3339).ok()?;
    i64::try_from(dt.unix_timestamp_nanos() / 1_000_000).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn speed_is_bounded() {
        assert!(SandboxClock::new(0.0).is_err());
        assert!(SandboxClock::new(-1.0).is_err());
        assert!(SandboxClock::new(f64::NAN).is_err());
        assert!(SandboxClock::new(10_000.5).is_err());
        assert!(SandboxClock::new(10_000.0).is_ok());
        assert_eq!(
            SandboxClock::new(0.0).map(|_| ()).map_err(|e| e.to_string()),
            Err("the sandbox speed must be greater than 0 and at most 10000, not 0".to_owned())
        );
    }

    #[test]
    fn real_time_is_not_hurried_by_speed_but_takes_the_jumps() {
        let fast = SandboxClock::starting_at(1_700_000_000_000, 10_000.0).expect("valid speed");
        let wall = std::time::Instant::now();
        let real = fast.real_ms();
        fast.advance(10_000);
        let real_passed = fast.real_ms() - real;
        let wall_passed = i64::try_from(wall.elapsed().as_millis()).unwrap_or(i64::MAX);
        // The jump, and the wall time that passed (to the millisecond), not 10,000 times it.
        assert!(real_passed >= 10_000, "{real_passed}");
        assert!(real_passed <= 10_000 + wall_passed + 1, "{real_passed} after {wall_passed} ms");
    }

    #[test]
    fn fast_clock_runs_ahead_and_advance_is_shared_by_clones() {
        let start = 1_700_000_000_000;
        let fast = SandboxClock::starting_at(start, 1000.0).expect("valid speed");
        std::thread::sleep(std::time::Duration::from_millis(20));
        // 20 ms of wall time at 1000× is at least 20 s of sandbox time.
        assert!(fast.now_ms() - start >= 20_000);
        let slow = SandboxClock::starting_at(start, 1.0).expect("valid speed");
        let shared = slow.clone();
        shared.advance(3_600_000);
        shared.advance(-5);
        assert!(slow.now_ms() - start >= 3_600_000);
        assert!(slow.now_ms() - start < 3_700_000);
    }

    #[test]
    fn formats() {
        let ms = 1_700_000_000_123;
        assert_eq!(rfc3339_ms(ms), "2023-11-14T22:13:20.123Z");
        assert_eq!(rfc3339_seconds(ms), "2023-11-14T22:13:20Z");
        assert_eq!(date(ms), "2023-11-14");
        assert_eq!(parse_rfc3339("2023-11-14T23:13:20.123+01:00"), Some(ms));
        assert_eq!(parse_rfc3339("yesterday"), None);
        assert_eq!(datetime(ms).unix_timestamp(), 1_700_000_000);
    }
}
