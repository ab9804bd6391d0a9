//! Mailgun's two ways of writing time: RFC 2822 strings in bodies (`Thu, 13 Oct 2011 18:02:00
//! GMT`) and epoch seconds as floats in events; parameters take either.

use time::{Month, OffsetDateTime, Weekday};

use crate::sandbox::clock;

const WEEKDAYS: [&str; 7] = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];
const MONTHS: [&str; 12] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

fn weekday_name(day: Weekday) -> &'static str {
    WEEKDAYS[usize::from(day.number_days_from_monday())]
}

/// `Thu, 13 Oct 2011 18:02:00 <zone>`: Mailgun writes `GMT` on domains and suppressions and
/// `UTC` in stats, and clients parse both.
pub fn rfc2822(ms: i64, zone: &str) -> String {
    let dt = clock::datetime(ms);
    format!(
        "{}, {:02} {} {:04} {:02}:{:02}:{:02} {zone}",
        weekday_name(dt.weekday()),
        dt.day(),
        MONTHS[usize::from(u8::from(dt.month())) - 1],
        dt.year(),
        dt.hour(),
        dt.minute(),
        dt.second()
    )
}

/// Epoch seconds with the millisecond fraction, as event `timestamp`s are written.
#[expect(clippy::cast_precision_loss, reason = "epoch milliseconds fit a double exactly until year 287396")]
pub fn epoch_seconds(ms: i64) -> f64 {
    ms as f64 / 1000.0
}

/// A time parameter: epoch seconds (`1529692199` or `1529692199.62`) or RFC 2822 with a zone of
/// `GMT`, `UTC`, `UT`, `Z` or `±hhmm`, the weekday optional. `None` when it is neither.
pub fn parse_time(text: &str) -> Option<i64> {
    let text = text.trim();
    if let Ok(seconds) = text.parse::<f64>() {
        if seconds.is_finite() && seconds.abs() < 1e13 {
            #[expect(clippy::cast_possible_truncation, reason = "bounded just above")]
            return Some((seconds * 1000.0).round() as i64);
        }
        return None;
    }
    let rest = match text.split_once(',') {
        Some((day, rest)) if WEEKDAYS.iter().any(|w| w.eq_ignore_ascii_case(day.trim())) => rest,
        Some(_) => return None,
        None => text,
    };
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let [day, month, year, clock_time, rest @ ..] = fields.as_slice() else {
        return None;
    };
    let day: u8 = day.parse().ok()?;
    let month = MONTHS.iter().position(|m| m.eq_ignore_ascii_case(month))?;
    let month = Month::try_from(u8::try_from(month + 1).ok()?).ok()?;
    let year: i32 = year.parse().ok()?;
    let mut hms = clock_time.split(':');
    let hour: u8 = hms.next()?.parse().ok()?;
    let minute: u8 = hms.next()?.parse().ok()?;
    let second: u8 = hms.next().map_or(Some(0), |s| s.parse().ok())?;
    if hms.next().is_some() {
        return None;
    }
    let offset_minutes: i64 = match rest.first().copied() {
        None | Some("GMT" | "UTC" | "UT" | "Z" | "gmt" | "utc") => 0,
        Some(zone) => {
            let (sign, digits) = match zone.as_bytes().first() {
                Some(b'+') => (1, &zone[1..]),
                Some(b'-') => (-1, &zone[1..]),
                _ => return None,
            };
            if digits.len() != 4 || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            let hours: i64 = digits[..2].parse().ok()?;
            let minutes: i64 = digits[2..].parse().ok()?;
            sign * (hours * 60 + minutes)
        }
    };
    let date = time::Date::from_calendar_date(year, month, day).ok()?;
    let time = time::Time::from_hms(hour, minute, second).ok()?;
    let utc = time::PrimitiveDateTime::new(date, time).assume_utc();
    let ms = i64::try_from(utc.unix_timestamp_nanos() / 1_000_000).ok()?;
    Some(ms - offset_minutes * 60_000)
}

/// The start of the hour, day or month holding `ms`: the stats buckets.
pub fn floor(ms: i64, resolution: Resolution) -> i64 {
    let dt = clock::datetime(ms);
    let start = match resolution {
        Resolution::Hour => {
            dt.replace_minute(0).and_then(|d| d.replace_second(0)).and_then(|d| d.replace_nanosecond(0))
        }
        Resolution::Day => Ok(dt.replace_time(time::Time::MIDNIGHT)),
        Resolution::Month => dt.replace_day(1).map(|d| d.replace_time(time::Time::MIDNIGHT)),
    };
    start.map_or(ms, to_ms)
}

/// The bucket after the one starting at `start`.
pub fn next_bucket(start: i64, resolution: Resolution) -> i64 {
    match resolution {
        Resolution::Hour => start + 3_600_000,
        Resolution::Day => start + 86_400_000,
        Resolution::Month => {
            let dt = clock::datetime(start);
            let (year, month) = if dt.month() == Month::December {
                (dt.year() + 1, Month::January)
            } else {
                (dt.year(), dt.month().next())
            };
            time::Date::from_calendar_date(year, month, 1)
                .map_or(start + 31 * 86_400_000, |d| to_ms(d.midnight().assume_utc()))
        }
    }
}

fn to_ms(dt: OffsetDateTime) -> i64 {
    i64::try_from(dt.unix_timestamp_nanos() / 1_000_000).unwrap_or(i64::MAX)
}

/// A stats bucket size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Resolution {
    Hour,
    Day,
    Month,
}

impl Resolution {
    pub fn parse(text: &str) -> Option<Resolution> {
        match text {
            "hour" => Some(Resolution::Hour),
            "day" => Some(Resolution::Day),
            "month" => Some(Resolution::Month),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Resolution::Hour => "hour",
            Resolution::Day => "day",
            Resolution::Month => "month",
        }
    }
}

/// A `duration` parameter (`24h`, `7d`, `1m` = one month of 30 days) in ms.
pub fn parse_duration(text: &str) -> Option<i64> {
    let text = text.trim();
    let unit = text.chars().last()?;
    let count: i64 = text[..text.len() - unit.len_utf8()].parse().ok().filter(|n| *n > 0 && *n < 100_000)?;
    let unit_ms = match unit {
        'h' => 3_600_000,
        'd' => 86_400_000,
        'm' => 30 * 86_400_000,
        _ => return None,
    };
    Some(count * unit_ms)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc2822_round_trips_and_takes_every_zone() {
        let ms = 1_318_528_920_000; // Thu, 13 Oct 2011 18:02:00 GMT
        assert_eq!(rfc2822(ms, "GMT"), "Thu, 13 Oct 2011 18:02:00 GMT");
        assert_eq!(parse_time("Thu, 13 Oct 2011 18:02:00 GMT"), Some(ms));
        assert_eq!(parse_time("13 Oct 2011 18:02:00 UTC"), Some(ms));
        assert_eq!(parse_time("Thu, 13 Oct 2011 20:02:00 +0200"), Some(ms));
        assert_eq!(parse_time("Thu, 13 Oct 2011 18:02:00 -0000"), Some(ms));
        assert_eq!(parse_time("1318528920"), Some(ms));
        assert_eq!(parse_time("1318528920.5"), Some(ms + 500));
        assert_eq!(parse_time("yesterday"), None);
        assert_eq!(parse_time("Thu, 32 Oct 2011 18:02:00 GMT"), None);
        assert_eq!(floor(ms, Resolution::Day), 1_318_464_000_000);
        assert_eq!(rfc2822(floor(ms, Resolution::Month), "UTC"), "Sat, 01 Oct 2011 00:00:00 UTC");
        assert_eq!(
            rfc2822(next_bucket(floor(ms, Resolution::Month), Resolution::Month), "UTC"),
            "Tue, 01 Nov 2011 00:00:00 UTC"
        );
        assert_eq!(parse_duration("24h"), Some(86_400_000));
        assert_eq!(parse_duration("x"), None);
    }
}
