//! Time series as a chart beside the JSON: a page of records that each carry a time (ISO 8601,
//! RFC 2822 as Mailgun's stats write it, epoch seconds or milliseconds, Ably's `intervalId`) and
//! numbers (Ably stats, usage reports),
//! or Coinbase candles (`[time, low, high, open, close, volume]`), drawn one series at a time.
//!
//! Detection is pure and generic, so a new service's stats or candles chart without code here.
//! [`detect`] finds any series (what `c` charts when asked); [`worth_auto_chart`] says whether a
//! page is one whose point is its series, so the chart may appear without being asked.
//!
//! The x axis labels are chosen to fit the width drawn in (how many, and how much of the time
//! they say), never cut; the newest point, when its interval is still counting, is drawn as
//! partial (dimmed, with a hollow marker, and said in the footer) rather than as a drop.

use ratatui::layout::Rect;
use ratatui::symbols::Marker;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Axis, Block, Chart, Dataset, GraphType};
use ratatui::Frame;
use serde_json::Value;
use time::{Date, Month, OffsetDateTime, PrimitiveDateTime, Time};
use unicode_width::UnicodeWidthStr;

use crate::inert::inert;
use crate::tui::theme::Theme;

/// A day, in seconds: buckets this long or longer are drawn as bars.
const DAY_SECONDS: f64 = 86_400.0;

/// Fewer records than this are no series worth drawing.
const MIN_POINTS: usize = 2;

/// Coinbase's candle columns after the time, in order.
const CANDLE_COLUMNS: [&str; 5] = ["low", "high", "open", "close", "volume"];

/// One numeric field over time: `(unix seconds, value)`, oldest first.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    /// The field's path in a record, dots between levels (`entries.messages.all.all.count`).
    pub name: String,
    pub points: Vec<(f64, f64)>,
}

/// Every series of a page, the most useful first.
#[derive(Clone, Debug, PartialEq)]
pub struct TimeSeries {
    /// The field the times came from (`intervalId`, `time`, `created_at`).
    pub time_field: String,
    pub series: Vec<Series>,
    /// The usual time between two points (the most common gap), in seconds: each point counts
    /// what happened from its time until the next. `None` with a single time.
    pub interval: Option<f64>,
    /// Whether the records mark the interval still counting themselves (a field
    /// `inProgress`/`in_progress` on the newest record, as Ably's stats do): `Some(marked)` when
    /// any record has such a field, `None` when none does and the clock decides.
    pub in_progress: Option<bool>,
    /// Whether the page is worth a chart without being asked ([`worth_auto_chart`]).
    pub automatic: bool,
    /// Whether it is drawn as bars: buckets of a day or longer (usage by day, stats by month),
    /// each a count of its own, read as bars rather than a line.
    pub bars: bool,
}

impl TimeSeries {
    fn new(time_field: String, series: Vec<Series>, interval: Option<f64>, in_progress: Option<bool>) -> TimeSeries {
        TimeSeries { time_field, series, interval, in_progress, automatic: false, bars: false }
    }

    /// The newest time of any series.
    fn latest(&self) -> Option<f64> {
        self.series.iter().filter_map(|s| s.points.last().map(|p| p.0)).reduce(f64::max)
    }

    /// Whether the point at `at` (unix seconds) is a bucket still counting at `now`: the
    /// records say so, or, when they do not, its interval has not ended by `now`. Its value is
    /// then only what has been counted so far, so it is drawn as partial, not as a drop.
    pub fn is_partial(&self, at: f64, now: f64) -> bool {
        match self.in_progress {
            Some(marked) => marked && self.latest() == Some(at),
            None => self.interval.is_some_and(|interval| at + interval > now),
        }
    }
}

/// Whether a page of `records` is worth a chart nobody asked for: its records are the points of
/// a time series (stats, usage, candles), not things that each have a time and some numbers.
///
/// The contract, for the app deciding what to show when a page arrives:
/// - pure: reads only `records` (the page's records, in page order), no clock, no I/O; cheap
///   next to decoding the page (it reads at most the first 200 records beyond [`detect`]);
/// - `true` for candles (arrays of a time and numbers), and for pages of objects that
///   [`detect`] reads as a series whose records are buckets: no record has an `id`, no
///   id-named field (`*_id`, `*Id`) differs between records (Ably's constant `appId` is fine, a
///   trade's `trade_id` is not), each record has a time of its own, and numbers that measure
///   something are at least as many as the text fields that differ between records (Ably
///   stats, Mailgun stats, Deepgram usage);
/// - `false` for everything else, even when [`detect`] finds a series in it (AvaTax
///   transactions: an id, a date, a `totalAmount`): those are charted only when the user asks
///   (`c`), with [`detect`].
///
/// [`detect`] sets [`TimeSeries::automatic`] to this, so the app holding a series need not
/// decode the page again.
pub fn worth_auto_chart(records: &[Value]) -> bool {
    detect_series(records).is_some_and(|series| buckets(records, &series.time_field))
}

/// Whether the records of a series are buckets (see [`worth_auto_chart`]).
fn buckets(records: &[Value], time_field: &str) -> bool {
    if records.iter().all(Value::is_array) {
        return true;
    }
    let records = &records[..records.len().min(200)];
    let mut objects = Vec::with_capacity(records.len());
    for record in records {
        match record.as_object() {
            Some(object) if !object.contains_key("id") => objects.push(object),
            _ => return false,
        }
    }
    let numbers = time_like_name(time_field);
    let mut times: Vec<f64> =
        objects.iter().filter_map(|o| o.get(time_field).and_then(|v| parse_time(v, numbers))).collect();
    let timed = times.len();
    times.sort_by(f64::total_cmp);
    times.dedup();
    if times.len() < timed {
        // Two records at one time are two things, not two buckets.
        return false;
    }
    // Every top-level scalar field that is not the time, by whether it differs between records.
    let mut fields: Vec<(&str, bool)> = Vec::new();
    for (key, value) in objects.iter().flat_map(|o| o.iter()) {
        if key == time_field || value.is_object() || value.is_array() {
            continue;
        }
        let varies = objects.iter().any(|o| o.get(key) != Some(value));
        match fields.iter_mut().find(|(k, _)| *k == key) {
            Some((_, v)) => *v |= varies,
            None => fields.push((key, varies)),
        }
    }
    let is_id = |key: &str| key.ends_with("_id") || key.ends_with("Id") || key.eq_ignore_ascii_case("id");
    if fields.iter().any(|(key, varies)| *varies && is_id(key)) {
        return false;
    }
    // The measures any record has: a bucket still counting may have few of them yet.
    let mut measures: Vec<String> = Vec::new();
    let mut found = Vec::new();
    for object in &objects {
        for (key, value) in object.iter().filter(|(k, _)| *k != time_field) {
            flatten(value, key, 0, &mut found);
        }
        for (name, _) in found.drain(..) {
            if !measures.contains(&name) {
                measures.push(name);
            }
        }
    }
    let texts = fields.iter().filter(|(key, varies)| {
        *varies && objects.iter().any(|o| o.get(*key).is_some_and(|v| v.is_string() || v.is_boolean()))
    });
    !measures.is_empty() && measures.len() >= texts.count()
}

/// A time: an RFC 3339 / ISO 8601 string, Ably's `intervalId` (`2024-01-01:10:05`,
/// `2024-01-01:10`, `2024-01-01`, `2024-01`), or, when `numbers` is allowed, epoch seconds or
/// milliseconds; as unix seconds.
pub fn parse_time(value: &Value, numbers: bool) -> Option<f64> {
    match value {
        Value::String(text) => parse_time_text(text.trim()),
        Value::Number(n) if numbers => {
            let n = n.as_f64()?;
            // Milliseconds from 1973 on, seconds from 1973 to 5138: anything else is a count.
            if (1e11..1e14).contains(&n) {
                Some(n / 1000.0)
            } else if (1e8..1e11).contains(&n) {
                Some(n)
            } else {
                None
            }
        }
        _ => None,
    }
}

fn parse_time_text(text: &str) -> Option<f64> {
    // Digits alone are an id or a count here: a number is a time only in a time field.
    if text.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        return None;
    }
    crate::format::parse_timestamp(text).map(unix).or_else(|| interval_id(text))
}

/// Ably's `intervalId`: `yyyy-mm-dd:hh:mm`, `yyyy-mm-dd:hh`, `yyyy-mm-dd` or `yyyy-mm`, in UTC.
fn interval_id(text: &str) -> Option<f64> {
    let mut parts = text.split(':');
    let date = parts.next()?;
    let mut fields = date.split('-');
    let year: i32 = digits(fields.next()?, 4)?;
    let month: u8 = digits(fields.next()?, 2)?;
    let day: u8 = fields.next().map_or(Some(1), |d| digits(d, 2))?;
    if fields.next().is_some() {
        return None;
    }
    let hour: u8 = parts.next().map_or(Some(0), |h| digits(h, 2))?;
    let minute: u8 = parts.next().map_or(Some(0), |m| digits(m, 2))?;
    if parts.next().is_some() {
        return None;
    }
    let date = Date::from_calendar_date(year, Month::try_from(month).ok()?, day).ok()?;
    let time = Time::from_hms(hour, minute, 0).ok()?;
    Some(unix(PrimitiveDateTime::new(date, time).assume_utc()))
}

fn digits<T: std::str::FromStr>(text: &str, len: usize) -> Option<T> {
    (text.len() == len && text.bytes().all(|b| b.is_ascii_digit())).then(|| text.parse().ok()).flatten()
}

fn unix(at: OffsetDateTime) -> f64 {
    at.unix_timestamp() as f64 + f64::from(at.nanosecond()) / 1e9
}

/// Whether a key names a time, so a number in it may be read as an epoch (`time`, `created_at`,
/// `createdAt`, `timestamp`, `intervalId`), and is no measure.
fn time_like_name(key: &str) -> bool {
    let lower = key.to_ascii_lowercase();
    ["ts", "t", "start", "end", "bucket", "period"].contains(&lower.as_str())
        || ["time", "date", "interval", "created", "updated"].iter().any(|word| lower.contains(word))
        || lower.ends_with("_at")
        || lower.ends_with("_ts")
        || key.ends_with("At")
}

/// Whether a numeric field is an identifier or a time rather than a measure.
fn is_measure(path: &str) -> bool {
    let last = path.rsplit('.').next().unwrap_or(path);
    let lower = last.to_ascii_lowercase();
    !(lower == "id" || lower.ends_with("_id") || last.ends_with("Id") || time_like_name(last))
}

/// The page's time series, if it is one: at least two records with a time, and numbers. `None`
/// for anything else, cheaply (the first record decides most pages).
pub fn detect(records: &[Value]) -> Option<TimeSeries> {
    let mut series = detect_series(records)?;
    series.automatic = buckets(records, &series.time_field);
    series.bars = series.automatic && series.interval.is_some_and(|gap| gap >= DAY_SECONDS - 1.0);
    Some(series)
}

fn detect_series(records: &[Value]) -> Option<TimeSeries> {
    if records.len() < MIN_POINTS {
        return None;
    }
    candles(records).or_else(|| objects(records))
}

/// The most common gap between the distinct `times`, in seconds (the shortest of equally
/// common ones): the interval each point counts.
fn usual_gap(mut times: Vec<f64>) -> Option<f64> {
    times.sort_by(f64::total_cmp);
    times.dedup();
    let mut gaps: Vec<f64> = times.windows(2).map(|w| w[1] - w[0]).filter(|gap| *gap > 0.0).collect();
    gaps.sort_by(f64::total_cmp);
    let mut best: Option<(usize, f64)> = None;
    for run in gaps.chunk_by(|a, b| (a - b).abs() < 0.5) {
        if best.is_none_or(|(count, _)| run.len() > count) {
            best = Some((run.len(), run[0]));
        }
    }
    best.map(|(_, gap)| gap)
}

/// Whether the records mark the interval still counting (`Some(newest is marked)`), or say
/// nothing of it (`None`).
fn marked_in_progress(records: &[Value], time_field: &str, numbers: bool) -> Option<bool> {
    fn mark(record: &Value) -> Option<&Value> {
        ["inProgress", "in_progress"].iter().find_map(|key| record.get(*key))
    }
    if !records.iter().any(|r| mark(r).is_some()) {
        return None;
    }
    let newest = records
        .iter()
        .filter_map(|r| Some((r.get(time_field).and_then(|v| parse_time(v, numbers))?, r)))
        .max_by(|a, b| a.0.total_cmp(&b.0))?;
    Some(mark(newest.1).is_some_and(|v| !v.is_null() && v.as_bool() != Some(false)))
}

/// Coinbase candles: arrays of `[time, low, high, open, close, volume]` numbers.
fn candles(records: &[Value]) -> Option<TimeSeries> {
    let mut columns: Vec<Vec<(f64, f64)>> = vec![Vec::new(); CANDLE_COLUMNS.len()];
    let mut times = Vec::with_capacity(records.len());
    for record in records {
        let row = record.as_array()?;
        if row.len() != CANDLE_COLUMNS.len() + 1 {
            return None;
        }
        let at = parse_time(row.first()?, true)?;
        times.push(at);
        for (column, value) in columns.iter_mut().zip(&row[1..]) {
            column.push((at, value.as_f64()?));
        }
    }
    let mut series: Vec<Series> =
        CANDLE_COLUMNS.iter().zip(columns).map(|(name, points)| sorted((*name).to_owned(), points)).collect();
    // The close is what a chart of prices shows first.
    series.sort_by_key(|s| s.name != "close");
    Some(TimeSeries::new("time".to_owned(), series, usual_gap(times), None))
}

fn objects(records: &[Value]) -> Option<TimeSeries> {
    let first = records.first()?.as_object()?;
    // Records named by a string id are things that happened (a message, a Mailgun event), not
    // points of a series: charting their sizes and codes over time would say nothing.
    if first.get("id").is_some_and(Value::is_string) {
        return None;
    }
    let needed = records.len() * 4 / 5;
    let time_field = first.iter().map(|(k, _)| k).find(|key| {
        let numbers = time_like_name(key);
        records.iter().filter(|r| r.get(key.as_str()).and_then(|v| parse_time(v, numbers)).is_some()).count()
            >= needed.max(MIN_POINTS)
    })?;
    let numbers = time_like_name(time_field);
    // Series in the order their fields first appear, so ties keep the vendor's order.
    let mut series: Vec<Series> = Vec::new();
    let mut index: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    let mut times = Vec::with_capacity(records.len());
    for record in records {
        let Some(object) = record.as_object() else { continue };
        let Some(at) = object.get(time_field).and_then(|v| parse_time(v, numbers)) else { continue };
        times.push(at);
        let mut fields = Vec::new();
        for (key, value) in object.iter().filter(|(k, _)| *k != time_field) {
            flatten(value, key, 0, &mut fields);
        }
        for (name, value) in fields {
            let slot = *index.entry(name.clone()).or_insert_with(|| {
                series.push(Series { name, points: Vec::new() });
                series.len() - 1
            });
            if let Some(s) = series.get_mut(slot) {
                s.points.push((at, value));
            }
        }
    }
    let mut series: Vec<Series> =
        series.into_iter().filter(|s| s.points.len() >= MIN_POINTS).map(|s| sorted(s.name, s.points)).collect();
    let moving = |s: &Series| s.points.iter().any(|p| p.1 != s.points[0].1);
    // Nothing moves (a message's `action` code): a flat line says nothing worth the room.
    if !series.iter().any(moving) {
        return None;
    }
    // Most useful first: in (nearly) every record, moving, and named like a measure of volume.
    // Stats are sparse (an interval in progress lacks most entries), so 80% counts as all.
    let most = series.iter().map(|s| s.points.len()).max().unwrap_or(0);
    series.sort_by_key(|s| {
        (
            s.points.len() * 5 < most * 4,
            !moving(s),
            std::cmp::Reverse(preference(&s.name)),
            std::cmp::Reverse(s.points.len()),
        )
    });
    let in_progress = marked_in_progress(records, time_field, numbers);
    Some(TimeSeries::new(time_field.clone(), series, usual_gap(times), in_progress))
}

fn preference(name: &str) -> u8 {
    let lower = name.to_ascii_lowercase();
    let words = ["count", "close", "total", "value", "amount", "price", "requests", "usage", "hours"];
    u8::from(words.iter().any(|w| lower.ends_with(w))) * 2 + u8::from(lower.contains("all"))
}

/// The numbers in `value` by their dotted path; arrays (lists of things) are not series.
fn flatten(value: &Value, path: &str, depth: usize, out: &mut Vec<(String, f64)>) {
    match value {
        Value::Number(n) if is_measure(path) => {
            if let Some(n) = n.as_f64().filter(|n| n.is_finite()) {
                out.push((path.to_owned(), n));
            }
        }
        Value::Object(map) if depth < 6 => {
            // A count split into parts that each have a total but with none of its own
            // (Mailgun's `failed`: temporary and permanent) gets one, the sum of the parts,
            // placed before them as the whole comes before its parts.
            let parts: Vec<f64> = map.values().filter_map(|part| part.get("total")?.as_f64()).collect();
            if !map.contains_key("total") && !parts.is_empty() && parts.len() == map.len() {
                out.push((format!("{path}.total"), parts.iter().sum()));
            }
            for (key, inner) in map {
                flatten(inner, &format!("{path}.{key}"), depth + 1, out);
            }
        }
        _ => {}
    }
}

fn sorted(name: String, mut points: Vec<(f64, f64)>) -> Series {
    points.sort_by(|a, b| a.0.total_cmp(&b.0));
    Series { name, points }
}

/// A time axis label: `MM-DD HH:MM` in UTC.
pub fn time_label(seconds: f64) -> String {
    label_text(seconds, LabelFormat::DayTime)
}

/// How much of a time an axis label says, longest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum LabelFormat {
    /// `11-26 17:21`
    DayTime,
    /// `17:21`, the day said once in the axis title.
    Time,
    /// `11-26`
    Day,
    /// `2026-11-26`
    Date,
    /// `2026-11`
    Month,
    /// `2026`
    Year,
}

fn utc(seconds: f64) -> Option<OffsetDateTime> {
    OffsetDateTime::from_unix_timestamp(seconds.floor() as i64).ok()
}

fn label_text(seconds: f64, format: LabelFormat) -> String {
    let Some(at) = utc(seconds) else { return String::new() };
    let (month, day) = (u8::from(at.month()), at.day());
    match format {
        LabelFormat::DayTime => format!("{month:02}-{day:02} {:02}:{:02}", at.hour(), at.minute()),
        LabelFormat::Time => format!("{:02}:{:02}", at.hour(), at.minute()),
        LabelFormat::Day => format!("{month:02}-{day:02}"),
        LabelFormat::Date => format!("{}-{month:02}-{day:02}", at.year()),
        LabelFormat::Month => format!("{}-{month:02}", at.year()),
        LabelFormat::Year => at.year().to_string(),
    }
}

/// Labels on an axis at most: more would crowd it.
const MAX_X_LABELS: usize = 6;
/// Blank columns at least between two labels, so they read as two.
const LABEL_GAP: u16 = 2;

/// The x axis labels of times `first..last` on a plot `width` columns wide: each label's
/// column from the plot's left edge and its text, the first at the left edge, the last ending
/// at the right one, those between centred on their time. As many as fit (two at least, six at
/// most), saying as much of the time as fits: the day and time, else the time alone (the day
/// then goes into the axis title, returned beside them), else the day alone. A label is never
/// cut: when not even two fit, only the last is given, and none when it does not fit either.
/// `midnights`: every point is at 00:00 (daily buckets), so the time of day says nothing.
pub fn x_labels(first: f64, last: f64, width: u16, midnights: bool) -> (Vec<(u16, String)>, Option<String>) {
    let (Some(start), Some(end)) = (utc(first), utc(last)) else { return (Vec::new(), None) };
    let same_day = start.date() == end.date();
    let long = last - first > 330.0 * 86_400.0;
    let day_span = || format!("{} – {}", label_text(first, LabelFormat::Day), label_text(last, LabelFormat::Day));
    let candidates: Vec<(LabelFormat, Option<String>)> = if long {
        vec![(LabelFormat::Date, None), (LabelFormat::Month, None), (LabelFormat::Year, None)]
    } else if same_day && !midnights {
        vec![(LabelFormat::Time, Some(label_text(first, LabelFormat::Date)))]
    } else if midnights {
        vec![(LabelFormat::Day, None)]
    } else {
        vec![(LabelFormat::DayTime, None), (LabelFormat::Day, None), (LabelFormat::Time, Some(day_span()))]
    };
    for (format, title) in &candidates {
        for count in (2..=MAX_X_LABELS).rev() {
            let times: Vec<f64> = (0..count).map(|i| first + (last - first) * i as f64 / (count - 1) as f64).collect();
            let texts: Vec<String> = times.iter().map(|t| label_text(*t, *format)).collect();
            // Two labels alike (two ticks in one day, shown as days) would say nothing new.
            if texts.windows(2).any(|pair| pair[0] == pair[1]) {
                continue;
            }
            if let Some(placed) = place(&texts, width) {
                return (placed, title.clone());
            }
        }
    }
    // Not even two fit: the newest time alone, right-aligned, when it fits.
    let (format, title) = candidates.last().cloned().unwrap_or((LabelFormat::DayTime, None));
    let text = label_text(last, format);
    let text_width = u16::try_from(text.width()).unwrap_or(u16::MAX);
    if text_width <= width {
        return (vec![(width - text_width, text)], title);
    }
    (Vec::new(), None)
}

/// Where evenly spaced labels start on a plot `width` columns wide, or `None` when they
/// would overlap, come closer than [`LABEL_GAP`], or leave the plot.
fn place(texts: &[String], width: u16) -> Option<Vec<(u16, String)>> {
    let count = texts.len();
    let mut placed: Vec<(u16, String)> = Vec::with_capacity(count);
    let mut free_from = 0_u32;
    for (i, text) in texts.iter().enumerate() {
        let w = u32::try_from(text.width()).ok()?;
        let span = u32::from(width.saturating_sub(1));
        let tick =
            (span * u32::try_from(i).ok()? + u32::try_from(count - 1).ok()? / 2) / u32::try_from(count - 1).ok()?;
        let start = match i {
            0 => 0,
            _ if i + 1 == count => u32::from(width).checked_sub(w)?,
            _ => tick.checked_sub(w / 2)?,
        };
        if start < free_from || start + w > u32::from(width) {
            return None;
        }
        free_from = start + w + u32::from(LABEL_GAP);
        placed.push((u16::try_from(start).ok()?, text.clone()));
    }
    Some(placed)
}

/// A value axis label, short: `950`, `12.5k`, `3.1M`.
pub fn value_label(value: f64) -> String {
    let magnitude = value.abs();
    let (scaled, suffix) = if magnitude >= 1e9 {
        (value / 1e9, "G")
    } else if magnitude >= 1e6 {
        (value / 1e6, "M")
    } else if magnitude >= 1e4 {
        (value / 1e3, "k")
    } else {
        (value, "")
    };
    if scaled.fract() == 0.0 || scaled.abs() >= 100.0 {
        format!("{scaled:.0}{suffix}")
    } else if scaled.abs() >= 10.0 {
        format!("{scaled:.1}{suffix}")
    } else {
        format!("{scaled:.2}{suffix}")
    }
}

/// The chart pane of a page: its series and the one drawn.
#[derive(Clone, Debug, PartialEq)]
pub struct ChartView {
    pub data: TimeSeries,
    pub selected: usize,
}

impl ChartView {
    pub fn new(data: TimeSeries) -> ChartView {
        ChartView { data, selected: 0 }
    }

    /// Keeps the series the user chose when the page is refreshed with the same fields.
    pub fn replace(&mut self, data: TimeSeries) {
        let chosen = self.series().map(|s| s.name.clone());
        self.selected = chosen.and_then(|name| data.series.iter().position(|s| s.name == name)).unwrap_or(0);
        self.data = data;
    }

    pub fn series(&self) -> Option<&Series> {
        self.data.series.get(self.selected)
    }

    /// `]` (forward) and `[`: the next series, wrapping around.
    pub fn cycle(&mut self, forward: bool) {
        let len = self.data.series.len().max(1);
        self.selected = if forward { (self.selected + 1) % len } else { (self.selected + len - 1) % len };
    }

    pub fn render(&self, frame: &mut Frame, area: Rect, theme: &Theme) {
        let now = unix(OffsetDateTime::now_utc());
        self.render_at(frame, area, theme, now);
    }

    /// [`ChartView::render`] as at `now` (unix seconds), which decides whether the newest point
    /// is still counting.
    pub fn render_at(&self, frame: &mut Frame, area: Rect, theme: &Theme, now: f64) {
        let area = area.intersection(frame.area());
        if area.is_empty() {
            return;
        }
        let Some(series) = self.series() else { return };
        let (first, last) = match (series.points.first(), series.points.last()) {
            (Some(first), Some(last)) => (first.0, last.0),
            _ => return,
        };
        let partial = series.points.len() >= 2 && self.data.is_partial(last, now);
        let count = self.data.series.len();
        let title = Line::from(vec![
            Span::styled(format!(" {} ", inert(&series.name)), theme.title),
            Span::styled(format!("{}/{count} ", self.selected + 1), theme.muted),
        ]);
        let inner_width = usize::from(area.width.saturating_sub(2));
        let block_for = |mut axis_title: Line<'static>| {
            let mut footer = footer(partial, inner_width.saturating_sub(axis_title.width() + 1));
            if partial && footer.is_empty() {
                // That the newest point is partial matters more than what the axis counts.
                footer = format!(" {PARTIAL_MARK} partial ");
                axis_title = super::fit_line(axis_title, inner_width.saturating_sub(footer.width() + 3));
            }
            Block::bordered()
                .border_style(theme.border(false))
                .title(title.clone())
                .title_bottom(axis_title.left_aligned())
                .title_bottom(Line::styled(footer, theme.muted).right_aligned())
        };
        let inner = block_for(Line::default()).inner(area);
        let (low, high) = series.points.iter().fold((f64::MAX, f64::MIN), |(lo, hi), p| (lo.min(p.1), hi.max(p.1)));
        let (low, high) = if high > low { (low.min(0.0), high) } else { (low.min(0.0), low.max(0.0) + 1.0) };
        let span = if last > first { (first, last) } else { (first - 1.0, first + 1.0) };
        let y_labels: Vec<Span> = [low, (low + high) / 2.0, high].iter().map(|v| Span::raw(value_label(*v))).collect();
        let y_label_width = y_labels.iter().map(Span::width).max().unwrap_or(0);
        // The plot's columns as the chart lays them out: the y labels (at most a third of the
        // width) and the axis line come first.
        let label_columns = u16::try_from(y_label_width).unwrap_or(u16::MAX).min(inner.width / 3);
        let plot_left = inner.x + label_columns + u16::from(inner.x + label_columns + 1 < inner.right());
        let plot_width = inner.right().saturating_sub(plot_left);
        let midnights = series.points.iter().all(|p| p.0.rem_euclid(86_400.0) == 0.0);
        let (x_labels, day) = x_labels(span.0, span.1, plot_width, midnights);
        let mut axis_title = inert(&self.data.time_field).into_owned();
        if let Some(day) = day {
            axis_title = format!("{axis_title} · {day}");
        }
        // What the x axis counts goes on the bottom border, under its labels: an axis title is
        // drawn inside the plot, over its newest points.
        let axis_title = super::fit_line(Line::styled(format!(" {axis_title} "), theme.muted), inner_width);
        let block = block_for(axis_title);
        let done = if partial { &series.points[..series.points.len() - 1] } else { &series.points[..] };
        // Bars stand on the axis, one column each; a line joins its points.
        let (marker, graph) =
            if self.data.bars { (Marker::HalfBlock, GraphType::Bar) } else { (Marker::Braille, GraphType::Line) };
        let mut datasets = vec![Dataset::default().marker(marker).graph_type(graph).style(theme.accent).data(done)];
        let tail = if self.data.bars {
            &series.points[series.points.len().saturating_sub(1)..]
        } else {
            &series.points[series.points.len().saturating_sub(2)..]
        };
        if partial {
            datasets.push(Dataset::default().marker(marker).graph_type(graph).style(theme.muted).data(tail));
        }
        let chart = Chart::new(datasets)
            .block(block)
            .style(theme.text)
            .x_axis(
                Axis::default()
                    .style(theme.muted)
                    .bounds([span.0, span.1])
                    // Blank labels keep the chart's room for them; the labels themselves are
                    // placed below, where they fit whole (the chart's own spacing cuts them).
                    .labels(vec![Span::raw(""), Span::raw("")]),
            )
            .y_axis(Axis::default().style(theme.muted).bounds([low, high]).labels(y_labels));
        frame.render_widget(chart, area);
        if inner.height < 3 || plot_width == 0 {
            return;
        }
        let label_row = inner.bottom() - 1;
        let buffer = frame.buffer_mut();
        for (offset, text) in &x_labels {
            buffer.set_stringn(plot_left + offset, label_row, text, usize::from(plot_width - offset), theme.muted);
        }
        if partial {
            // The point still counting, hollow: a value that will grow, not a fall.
            let plot_bottom = inner.bottom() - 3;
            let plot_height = plot_bottom + 1 - inner.y;
            let x_frac = (last - span.0) / (span.1 - span.0);
            let y_frac = (high - series.points[series.points.len() - 1].1) / (high - low);
            let column = ((x_frac * f64::from(plot_width * 2 - 1)) as u16 / 2).min(plot_width - 1);
            let row = ((y_frac * f64::from(plot_height * 4 - 1)) as u16 / 4).min(plot_height - 1);
            if let Some(cell) = buffer.cell_mut((plot_left + column, inner.y + row)) {
                cell.set_symbol(PARTIAL_MARK).set_style(theme.muted);
            }
        }
    }
}

/// What marks the point still counting, on the plot and in the footer.
pub const PARTIAL_MARK: &str = "○";

/// The chart's bottom line: its keys, and that the newest point is partial, as much as fits.
fn footer(partial: bool, width: usize) -> String {
    let keys = " [ ] series · C hides ";
    if !partial {
        return keys.to_owned();
    }
    [
        format!(" {PARTIAL_MARK} last interval still counting ·{keys}"),
        format!(" {PARTIAL_MARK} last still counting ·{keys}"),
        format!(" {PARTIAL_MARK} partial ·{keys}"),
        format!(" {PARTIAL_MARK} partial · [ ] series "),
        format!(" {PARTIAL_MARK} partial "),
    ]
    .into_iter()
    .find(|text| text.width() + 2 <= width)
    .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::backend::TestBackend;
    use ratatui::Terminal;
    use serde_json::json;

    fn at(text: &str) -> f64 {
        parse_time(&json!(text), false).unwrap()
    }

    #[test]
    fn times_in_every_shape() {
        let ten_five = 1_704_103_500.0; // 2024-01-01T10:05:00Z
        assert_eq!(at("2024-01-01T10:05:00Z"), ten_five);
        assert_eq!(at("2024-01-01T11:05:00+01:00"), ten_five);
        assert_eq!(at("2024-01-01T10:05:00"), ten_five);
        assert_eq!(at("2024-01-01:10:05"), ten_five, "Ably minute");
        assert_eq!(at("2024-01-01:10"), ten_five - 300.0, "Ably hour");
        assert_eq!(at("2024-01-01"), ten_five - 36_300.0);
        assert_eq!(at("2024-01"), ten_five - 36_300.0);
        assert_eq!(parse_time(&json!(1_704_103_500), true), Some(ten_five));
        assert_eq!(parse_time(&json!(1_704_103_500_000_u64), true), Some(ten_five));
        assert_eq!(parse_time(&json!(1_704_103_500), false), None, "a number is a time only in a time field");
        assert_eq!(parse_time(&json!(42), true), None);
        for not_time in ["orders:eu", "2024-13-01", "2024-01-01:25", "12", ""] {
            assert_eq!(parse_time(&json!(not_time), false), None, "{not_time}");
        }
        assert_eq!(time_label(ten_five), "01-01 10:05");
        assert_eq!(value_label(950.0), "950");
        assert_eq!(value_label(12_500.0), "12.5k");
        assert_eq!(value_label(90.5), "90.5");
        assert_eq!(value_label(3_100_000.0), "3.10M");
        assert_eq!(value_label(0.5), "0.50");
    }

    #[test]
    fn ably_stats_chart_their_message_count_first() {
        let records = json!([
            {"intervalId": "2024-01-01:10:06", "unit": "minute", "appId": "x",
             "entries": {"messages.all.all.count": 7, "messages.all.all.data": 900, "channels.peak": 3}},
            {"intervalId": "2024-01-01:10:05", "unit": "minute", "appId": "x",
             "entries": {"messages.all.all.count": 4, "messages.all.all.data": 100, "channels.peak": 3}},
            {"intervalId": "2024-01-01:10:04", "unit": "minute", "appId": "x", "inProgress": "2024-01-01:10:04:30",
             "entries": {"messages.all.all.count": 5, "messages.all.all.data": 500}}
        ]);
        let found = detect(records.as_array().unwrap()).expect("a time series");
        assert_eq!(found.time_field, "intervalId");
        let names: Vec<&str> = found.series.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["entries.messages.all.all.count", "entries.messages.all.all.data", "entries.channels.peak"]);
        let count = &found.series[0];
        assert_eq!(count.points.iter().map(|p| p.1).collect::<Vec<_>>(), [5.0, 4.0, 7.0], "oldest first");
        assert_eq!(count.points[1].0, at("2024-01-01T10:05:00Z"));
        // The old nested format works the same way.
        let nested = json!([
            {"intervalId": "2024-01-01:10", "all": {"messages": {"count": 3, "data": 10}}},
            {"intervalId": "2024-01-01:11", "all": {"messages": {"count": 5, "data": 30}}}
        ]);
        assert_eq!(detect(nested.as_array().unwrap()).unwrap().series[0].name, "all.messages.count");
    }

    #[test]
    fn mailgun_stats_chart_their_totals_by_rfc_2822_time() {
        assert_eq!(at("Mon, 01 Jan 2024 10:05:00 UTC"), 1_704_103_500.0);
        assert_eq!(at("Mon, 01 Jan 2024 10:05:00 GMT"), 1_704_103_500.0);
        assert_eq!(at("Mon, 01 Jan 2024 11:05:00 +0100"), 1_704_103_500.0);
        assert_eq!(at("Mon, 01 Jan 2024 10:05:00 -0000"), 1_704_103_500.0);
        let stats = json!([
            {"time": "Mon, 01 Jan 2024 00:00:00 UTC", "accepted": {"incoming": 0, "outgoing": 10, "total": 10},
             "delivered": {"smtp": 9, "http": 0, "total": 9},
             "failed": {"temporary": {"espblock": 0, "total": 0}, "permanent": {"bounce": 1, "total": 1}},
             "opened": {"total": 4, "unique": 3}},
            {"time": "Tue, 02 Jan 2024 00:00:00 UTC", "accepted": {"incoming": 0, "outgoing": 20, "total": 20},
             "delivered": {"smtp": 17, "http": 0, "total": 17},
             "failed": {"temporary": {"espblock": 1, "total": 1}, "permanent": {"bounce": 2, "total": 2}},
             "opened": {"total": 8, "unique": 5}}
        ]);
        let found = detect(stats.as_array().unwrap()).expect("a time series");
        assert_eq!(found.time_field, "time");
        let names: Vec<&str> = found.series.iter().map(|s| s.name.as_str()).take(4).collect();
        assert_eq!(names, ["accepted.total", "delivered.total", "failed.total", "failed.temporary.total"]);
        let failed = found.series.iter().find(|s| s.name == "failed.total").unwrap();
        assert_eq!(failed.points.iter().map(|p| p.1).collect::<Vec<_>>(), [1.0, 3.0], "temporary + permanent");
        assert!(found.series.iter().any(|s| s.name == "opened.total"));
    }

    #[test]
    fn candles_and_epoch_records_and_what_is_no_series() {
        let candles = json!([[1_704_103_560, 1.0, 3.0, 2.0, 2.5, 100.0], [1_704_103_500, 1.0, 2.0, 1.5, 1.8, 90.0]]);
        let found = detect(candles.as_array().unwrap()).expect("candles");
        assert_eq!(found.series[0].name, "close");
        assert_eq!(found.series[0].points, [(1_704_103_500.0, 1.8), (1_704_103_560.0, 2.5)]);
        let usage = json!([
            {"id": 17, "created_at": 1_704_103_500_000_u64, "requests": 10, "ok": true},
            {"id": 18, "created_at": 1_704_103_560_000_u64, "requests": 12, "ok": true}
        ]);
        let found = detect(usage.as_array().unwrap()).expect("epoch ms");
        assert_eq!(found.time_field, "created_at");
        assert_eq!(found.series.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(), ["requests"], "ids are no series");
        for no_series in [
            json!([{"channelId": "a", "connections": 3}, {"channelId": "b", "connections": 4}]),
            json!([{"time": "2024-01-01T10:05:00Z", "name": "x"}, {"time": "2024-01-01T10:06:00Z", "name": "y"}]),
            json!([{"time": "2024-01-01T10:05:00Z", "n": 1}]),
            json!([{"timestamp": 1_704_103_500_000_u64, "action": 0}, {"timestamp": 1_704_103_560_000_u64, "action": 0}]),
            json!([
                {"id": "czsjqFATSlC3QtAK", "event": "delivered", "timestamp": 1_529_692_199.6, "message": {"size": 586}},
                {"id": "hK7mQVt1QtqRiOfQ", "event": "accepted", "timestamp": 1_529_692_198.1, "message": {"size": 912}}
            ]),
            json!(["a", "b"]),
            json!([[1, 2], [3, 4]]),
        ] {
            assert_eq!(detect(no_series.as_array().unwrap()), None, "{no_series}");
        }
    }

    #[test]
    fn renders_title_axes_and_labels_inert() {
        let records = json!([
            {"intervalId": "2024-01-01:10:04", "entries": {"messages.all.all.count": 5, "evil\u{1b}[2J": 1}},
            {"intervalId": "2024-01-01:10:06", "entries": {"messages.all.all.count": 9, "evil\u{1b}[2J": 2}}
        ]);
        let mut chart = ChartView::new(detect(records.as_array().unwrap()).unwrap());
        let draw = |chart: &ChartView| {
            let mut terminal = Terminal::new(TestBackend::new(60, 14)).unwrap();
            terminal.draw(|frame| chart.render(frame, frame.area(), &Theme::dark())).unwrap();
            let buffer = terminal.backend().buffer().clone();
            (0..14).map(|y| (0..60).map(|x| buffer[(x, y)].symbol()).collect::<String>()).collect::<Vec<_>>()
        };
        let screen = draw(&chart);
        assert!(screen[0].contains("entries.messages.all.all.count 1/2"), "{screen:#?}");
        let text = screen.join("\n");
        // Within one day the labels give the time and the axis title the day.
        for label in ["10:04", "10:06", "intervalId · 2024-01-01", "9", "[ ] series · C hides"] {
            assert!(text.contains(label), "{label} in {text}");
        }
        assert!(
            text.contains('⣀') || text.contains('⠁') || text.chars().any(|c| ('\u{2801}'..='\u{28ff}').contains(&c))
        );
        chart.cycle(true);
        let screen = draw(&chart);
        assert!(screen[0].contains("2/2"), "{screen:#?}");
        assert!(!screen.join("").contains('\u{1b}'), "a key from the server is shown inert");
        chart.cycle(true);
        assert_eq!(chart.selected, 0);
        for (w, h) in [(1, 1), (5, 3), (20, 4)] {
            let mut terminal = Terminal::new(TestBackend::new(w, h)).unwrap();
            terminal.draw(|frame| chart.render(frame, frame.area(), &Theme::dark())).unwrap();
        }
    }

    #[test]
    fn no_label_draws_over_the_plot() {
        // Daily usage, its newest day the highest: the points the axis title once covered.
        let records: Vec<Value> = (1..=20)
            .map(|day| json!({"start": format!("2026-11-{day:02}"), "end": format!("2026-11-{day:02}"), "hours": day}))
            .collect();
        let chart = ChartView::new(detect(&records).unwrap());
        for (width, height) in [(80, 20), (44, 12), (120, 30)] {
            let screen = drawn(&chart, width, height, at("2026-12-01T00:00:00Z"));
            let axis_row = screen.iter().position(|line| line.chars().skip(1).any(|c| c == '└')).unwrap();
            let axis_column = screen[axis_row].chars().skip(1).position(|c| c == '└').unwrap() + 1;
            for line in &screen[1..axis_row] {
                let plot: String = line.chars().skip(axis_column + 1).take_while(|c| *c != '│').collect();
                assert!(!plot.chars().any(char::is_alphanumeric), "text over the plot:\n{}", screen.join("\n"));
            }
            let bottom = screen.last().unwrap();
            assert!(bottom.contains(" start "), "the axis says what it counts:\n{}", screen.join("\n"));
        }
    }

    /// The screen of a chart drawn `width` x `height` as at `now`.
    fn drawn(chart: &ChartView, width: u16, height: u16, now: f64) -> Vec<String> {
        let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
        terminal.draw(|frame| chart.render_at(frame, frame.area(), &Theme::dark(), now)).unwrap();
        let buffer = terminal.backend().buffer().clone();
        (0..height).map(|y| (0..width).map(|x| buffer[(x, y)].symbol()).collect::<String>()).collect()
    }

    /// A minute of Ably stats for each of `minutes` minutes up to `newest` (unix seconds), newest
    /// first as Ably lists them; the newest marked in progress when `counting`.
    fn minute_stats(newest: f64, minutes: usize, counting: bool) -> Vec<Value> {
        (0..minutes)
            .map(|i| {
                let at = utc(newest - 60.0 * i as f64).unwrap();
                let id = format!(
                    "{}-{:02}-{:02}:{:02}:{:02}",
                    at.year(),
                    u8::from(at.month()),
                    at.day(),
                    at.hour(),
                    at.minute()
                );
                let mut record = json!({"intervalId": id, "unit": "minute", "appId": "opsdeck",
                    "schema": "https://schemas.ably.com/json/app-stats-0.0.5.json",
                    "entries": {"messages.all.all.count": 100 + (i * 37) % 50, "messages.all.all.data": 2000 + i}});
                if counting && i == 0 {
                    record["inProgress"] = json!(format!("{id}:15"));
                }
                record
            })
            .collect()
    }

    #[test]
    fn x_axis_labels_at_80x24_are_whole_times_never_cut() {
        // 100 minutes of stats in a chart the size the console gives it at 80x24 (the issue
        // saw `10-31 00:0 1-13 00:  -26 00:00` there).
        let newest = at("2026-11-26T17:21:00Z");
        let chart = ChartView::new(detect(&minute_stats(newest, 100, false)).unwrap());
        let screen = drawn(&chart, 36, 12, newest + 3600.0);
        let axis = &screen[10];
        let words: Vec<&str> = axis.trim_matches(|c| c == '│' || c == ' ').split_whitespace().collect();
        assert!(words.len() >= 2, "at least the first and last time:\n{}", screen.join("\n"));
        for word in &words {
            let whole =
                word.len() == 5 && word.as_bytes()[2] == b':' && word.bytes().filter(u8::is_ascii_digit).count() == 4;
            assert!(whole, "{word:?} is a whole HH:MM label:\n{}", screen.join("\n"));
        }
        assert_eq!(words.first(), Some(&"15:42"), "{}", screen.join("\n"));
        assert_eq!(words.last(), Some(&"17:21"), "{}", screen.join("\n"));
        assert!(screen.join("\n").contains("intervalId · 2026-11-26"), "the day, once:\n{}", screen.join("\n"));
    }

    #[test]
    fn labels_fit_any_width_and_say_as_much_as_fits() {
        let day = 86_400.0;
        let start = at("2026-01-05T08:00:00Z");
        for (span, midnights) in [
            (300.0, false),
            (6.0 * 3600.0, false),
            (30.0 * 3600.0, false),
            (20.0 * day, false),
            (20.0 * day, true),
            (900.0 * day, true),
        ] {
            for width in 0..=120_u16 {
                let (labels, _) = x_labels(start, start + span, width, midnights);
                let mut free = 0;
                for (offset, text) in &labels {
                    let end = offset + u16::try_from(text.width()).unwrap();
                    assert!(*offset >= free && end <= width, "{span} s at {width}: {labels:?}");
                    free = end + LABEL_GAP;
                }
                if width >= 30 {
                    assert!(labels.len() >= 2, "{span} s at {width}: {labels:?}");
                }
            }
        }
        // Wide enough, the day and time; narrower, the day alone; within a day, the time.
        let (wide, title) = x_labels(start, start + 20.0 * day, 100, false);
        assert_eq!((wide[0].1.as_str(), title), ("01-05 08:00", None));
        let (narrow, _) = x_labels(start, start + 20.0 * day, 16, false);
        assert_eq!(narrow.iter().map(|l| l.1.as_str()).collect::<Vec<_>>(), ["01-05", "01-25"]);
        let (hours, title) = x_labels(start, start + 3600.0, 30, false);
        assert_eq!((hours[0].1.as_str(), title.as_deref()), ("08:00", Some("2026-01-05")));
        assert_eq!(x_labels(start, start + 3600.0, 4, false).0, [], "nothing rather than a cut label");
    }

    #[test]
    fn the_interval_still_counting_is_drawn_partial() {
        let newest = at("2026-11-26T17:21:00Z");
        // Ably marks the minute in progress itself.
        let counting = detect(&minute_stats(newest, 30, true)).unwrap();
        assert_eq!((counting.interval, counting.in_progress), (Some(60.0), Some(true)));
        assert!(counting.is_partial(newest, newest + 86_400.0), "the record's mark wins over the clock");
        let screen = drawn(&ChartView::new(counting), 100, 14, newest + 15.0).join("\n");
        assert!(screen.contains("○ last interval still counting"), "{screen}");
        assert!(screen.contains(PARTIAL_MARK), "{screen}");
        let done = detect(&minute_stats(newest, 30, false)).unwrap();
        assert!(done.is_partial(newest, newest + 15.0), "marked nowhere: the clock says the minute is not over");
        assert!(!done.is_partial(newest, newest + 60.0));
        // Candles say nothing: the clock decides (the newest minute ends 60 s after it began).
        let candles: Vec<Value> =
            (0..10).map(|i| json!([newest - 60.0 * f64::from(i), 1.0, 3.0, 2.0, 2.5, 100.0])).collect();
        let candles = detect(&candles).unwrap();
        assert_eq!((candles.interval, candles.in_progress), (Some(60.0), None));
        assert!(candles.is_partial(newest, newest + 30.0));
        assert!(!candles.is_partial(newest, newest + 60.0));
        assert!(!candles.is_partial(newest - 60.0, newest + 30.0), "only the newest can be counting");
        let screen = drawn(&ChartView::new(candles.clone()), 70, 14, newest + 90.0).join("\n");
        assert!(!screen.contains("counting") && !screen.contains(PARTIAL_MARK), "{screen}");
        // Narrow, the footer says it shorter, and never loses it.
        let screen = drawn(&ChartView::new(candles), 30, 12, newest + 30.0).join("\n");
        assert!(screen.contains("○ partial"), "{screen}");
    }

    #[test]
    fn only_pages_of_series_chart_unasked() {
        let newest = at("2026-11-26T17:21:00Z");
        let stats = minute_stats(newest, 10, true);
        let mailgun = json!([
            {"time": "Mon, 01 Jan 2024 00:00:00 UTC", "accepted": {"incoming": 0, "outgoing": 10, "total": 10},
             "delivered": {"smtp": 9, "http": 0, "total": 9}},
            {"time": "Tue, 02 Jan 2024 00:00:00 UTC", "accepted": {"incoming": 0, "outgoing": 20, "total": 20},
             "delivered": {"smtp": 17, "http": 0, "total": 17}}
        ]);
        let usage = json!([
            {"start": "2024-01-01", "end": "2024-01-02", "hours": 1.5, "total_hours": 1.5, "requests": 12},
            {"start": "2024-01-02", "end": "2024-01-03", "hours": 2.5, "total_hours": 4.0, "requests": 20}
        ]);
        let candles = json!([[1_704_103_560, 1.0, 3.0, 2.0, 2.5, 100.0], [1_704_103_500, 1.0, 2.0, 1.5, 1.8, 90.0]]);
        for page in [
            stats,
            mailgun.as_array().unwrap().clone(),
            usage.as_array().unwrap().clone(),
            candles.as_array().unwrap().clone(),
        ] {
            assert!(worth_auto_chart(&page), "{page:?}");
            assert!(detect(&page).unwrap().automatic);
        }
        let transaction = |id: u32, date: &str, total: f64| {
            json!({"id": id, "code": format!("INV-{id}"), "companyId": 1, "date": date, "status": "Committed",
                "type": "SalesInvoice", "customerCode": "ACME", "currencyCode": "USD", "totalAmount": total,
                "totalTax": total * 0.08, "totalTaxable": total})
        };
        let transactions = vec![transaction(1, "2024-01-01", 100.0), transaction(2, "2024-01-03", 250.0)];
        let found = detect(&transactions).expect("`c` still charts it when asked");
        assert!(!found.automatic && !worth_auto_chart(&transactions), "a list of things with an amount");
        // Trades: numbered, so things, not buckets.
        let trades = json!([
            {"time": "2024-01-01T10:00:00Z", "trade_id": 7, "side": "buy", "size": 0.5, "price": 100.0},
            {"time": "2024-01-01T10:01:00Z", "trade_id": 8, "side": "sell", "size": 0.2, "price": 101.0}
        ]);
        assert!(detect(trades.as_array().unwrap()).is_some() && !worth_auto_chart(trades.as_array().unwrap()));
        // Two records at one time are two things.
        let same_time = json!([
            {"time": "2024-01-01T10:00:00Z", "requests": 1}, {"time": "2024-01-01T10:00:00Z", "requests": 2},
            {"time": "2024-01-01T10:01:00Z", "requests": 3}
        ]);
        assert!(!worth_auto_chart(same_time.as_array().unwrap()));
        assert!(!worth_auto_chart(&[]));
    }

    #[test]
    fn daily_buckets_are_bars_and_minute_buckets_a_line() {
        let days: Vec<Value> = (1..=5)
            .map(|d| serde_json::json!({"start": format!("2026-11-0{d}"), "hours": f64::from(d), "requests": d * 10}))
            .collect();
        let series = detect(&days).unwrap();
        assert!(series.automatic && series.bars);
        assert_eq!(series.series[0].name, "hours");
        let view = ChartView::new(series);
        let mut terminal = ratatui::Terminal::new(ratatui::backend::TestBackend::new(60, 12)).unwrap();
        terminal.draw(|f| view.render_at(f, f.area(), &Theme::dark(), 2e9)).unwrap();
        let text: String = terminal.backend().buffer().content.iter().map(ratatui::buffer::Cell::symbol).collect();
        assert!(text.contains('█') || text.contains('▀') || text.contains('▄'), "{text}");
        let minutes: Vec<Value> = (0..5)
            .map(|m| serde_json::json!({"intervalId": format!("2026-11-01:10:0{m}"), "count": m * 3 + 1}))
            .collect();
        assert!(!detect(&minutes).unwrap().bars);
    }
}
