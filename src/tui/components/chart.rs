//! Time series as a chart beside the JSON: a page of records that each carry a time (ISO 8601,
//! RFC 2822 as Mailgun's stats write it, epoch seconds or milliseconds, Ably's `intervalId`) and
//! numbers (Ably stats, usage reports),
//! or Coinbase candles (`[time, low, high, open, close, volume]`), drawn one series at a time.
//!
//! Detection is pure and generic, so a new service's stats or candles chart without code here.

use ratatui::layout::Rect;
use ratatui::symbols::Marker;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Axis, Block, Chart, Dataset, GraphType};
use ratatui::Frame;
use serde_json::Value;
use time::format_description::well_known::{Iso8601, Rfc2822, Rfc3339};
use time::{Date, Month, OffsetDateTime, PrimitiveDateTime, Time};

use crate::inert::inert;
use crate::tui::theme::Theme;

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
    if let Ok(at) = OffsetDateTime::parse(text, &Rfc3339) {
        return Some(unix(at));
    }
    if let Ok(at) = OffsetDateTime::parse(text, &Iso8601::DEFAULT) {
        return Some(unix(at));
    }
    if let Ok(at) = PrimitiveDateTime::parse(text, &Iso8601::DEFAULT) {
        return Some(unix(at.assume_utc()));
    }
    rfc2822(text).or_else(|| interval_id(text))
}

/// RFC 2822 (`Tue, 14 Feb 2012 00:00:00 UTC`, `... GMT`, `... -0000`, `... +0100`), as Mailgun
/// writes its stats buckets and record dates. The `time` crate reads numeric zones and `GMT`/`UT`;
/// `UTC`, which Mailgun writes too, is read as `+0000`.
fn rfc2822(text: &str) -> Option<f64> {
    if !text.contains(':') || !text.chars().next().is_some_and(|c| c.is_ascii_alphanumeric()) {
        return None;
    }
    let numeric = match text.rsplit_once(' ') {
        Some((rest, "UTC" | "GMT" | "UT" | "Z")) => format!("{rest} +0000"),
        _ => text.to_owned(),
    };
    OffsetDateTime::parse(&numeric, &Rfc2822).ok().map(unix)
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
    if records.len() < MIN_POINTS {
        return None;
    }
    candles(records).or_else(|| objects(records))
}

/// Coinbase candles: arrays of `[time, low, high, open, close, volume]` numbers.
fn candles(records: &[Value]) -> Option<TimeSeries> {
    let mut columns: Vec<Vec<(f64, f64)>> = vec![Vec::new(); CANDLE_COLUMNS.len()];
    for record in records {
        let row = record.as_array()?;
        if row.len() != CANDLE_COLUMNS.len() + 1 {
            return None;
        }
        let at = parse_time(row.first()?, true)?;
        for (column, value) in columns.iter_mut().zip(&row[1..]) {
            column.push((at, value.as_f64()?));
        }
    }
    let mut series: Vec<Series> =
        CANDLE_COLUMNS.iter().zip(columns).map(|(name, points)| sorted((*name).to_owned(), points)).collect();
    // The close is what a chart of prices shows first.
    series.sort_by_key(|s| s.name != "close");
    Some(TimeSeries { time_field: "time".to_owned(), series })
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
    for record in records {
        let Some(object) = record.as_object() else { continue };
        let Some(at) = object.get(time_field).and_then(|v| parse_time(v, numbers)) else { continue };
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
    Some(TimeSeries { time_field: time_field.clone(), series })
}

fn preference(name: &str) -> u8 {
    let lower = name.to_ascii_lowercase();
    let words = ["count", "close", "total", "value", "amount", "price", "requests", "usage"];
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

/// A time axis label: `MM-DD HH:MM` in UTC, or the date alone for whole days.
pub fn time_label(seconds: f64) -> String {
    let Ok(at) = OffsetDateTime::from_unix_timestamp(seconds.floor() as i64) else { return String::new() };
    format!("{:02}-{:02} {:02}:{:02}", u8::from(at.month()), at.day(), at.hour(), at.minute())
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
        let area = area.intersection(frame.area());
        if area.is_empty() {
            return;
        }
        let Some(series) = self.series() else { return };
        let count = self.data.series.len();
        let title = Line::from(vec![
            Span::styled(format!(" {} ", inert(&series.name)), theme.title),
            Span::styled(format!("{}/{count} ", self.selected + 1), theme.muted),
        ]);
        let block = Block::bordered()
            .border_style(theme.border(false))
            .title(title)
            .title_bottom(Line::styled(" [ ] series · C hides ", theme.muted).right_aligned());
        let (first, last) = match (series.points.first(), series.points.last()) {
            (Some(first), Some(last)) => (first.0, last.0),
            _ => return,
        };
        let (low, high) = series.points.iter().fold((f64::MAX, f64::MIN), |(lo, hi), p| (lo.min(p.1), hi.max(p.1)));
        let (low, high) = if high > low { (low.min(0.0), high) } else { (low.min(0.0), low.max(0.0) + 1.0) };
        let span = if last > first { (first, last) } else { (first - 1.0, first + 1.0) };
        let middle = (span.0 + span.1) / 2.0;
        let x_labels: Vec<Span> = [span.0, middle, span.1].iter().map(|t| Span::raw(time_label(*t))).collect();
        let y_labels: Vec<Span> = [low, (low + high) / 2.0, high].iter().map(|v| Span::raw(value_label(*v))).collect();
        let dataset = Dataset::default()
            .marker(Marker::Braille)
            .graph_type(GraphType::Line)
            .style(theme.accent)
            .data(&series.points);
        let chart = Chart::new(vec![dataset])
            .block(block)
            .style(theme.text)
            .x_axis(
                Axis::default()
                    .title(Span::styled(inert(&self.data.time_field).into_owned(), theme.muted))
                    .style(theme.muted)
                    .bounds([span.0, span.1])
                    .labels(x_labels)
                    .labels_alignment(ratatui::layout::Alignment::Right),
            )
            .y_axis(Axis::default().style(theme.muted).bounds([low, high]).labels(y_labels));
        frame.render_widget(chart, area);
    }
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
        for label in ["01-01 10:04", "01-01 10:06", "intervalId", "9", "[ ] series · C hides"] {
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
}
