//! Query parameters shared by the paginated routes (`limit`, `direction`, `start`/`end`) and the
//! `Link` header in the one form ably-js accepts: `<./<segment>?<query>>; rel="<rel>"`.

use time::format_description::well_known::Rfc3339;
use time::macros::format_description;
use time::{Date, OffsetDateTime, PrimitiveDateTime};

use super::wire::AblyError;
use crate::sandbox::paging::encode_query;
use crate::sandbox::request::Query;

/// Default and maximum page size on every paginated route.
pub(super) const DEFAULT_LIMIT: usize = 100;
pub(super) const MAX_LIMIT: usize = 1000;

/// `limit`: 1..=1000, default 100; anything else is Ably's 400/40003.
pub(super) fn limit(query: &Query) -> Result<usize, AblyError> {
    let Some(raw) = query.get("limit") else {
        return Ok(DEFAULT_LIMIT);
    };
    match raw.trim().parse::<i64>() {
        Ok(n) if (1..=1000).contains(&n) => Ok(usize::try_from(n).unwrap_or(DEFAULT_LIMIT)),
        Ok(n) if n > 1000 => Err(AblyError::bad_param(format!(
            "Invalid value for parameter 'limit': {n} exceeds the maximum of {MAX_LIMIT}"
        ))),
        _ => Err(AblyError::bad_param(format!(
            "Invalid value for parameter 'limit': {raw:?}; expected an integer from 1 to {MAX_LIMIT}"
        ))),
    }
}

/// `direction`: newest first (`backwards`, the default) or oldest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Direction {
    Forwards,
    Backwards,
}

impl Direction {
    pub(super) fn name(self) -> &'static str {
        match self {
            Direction::Forwards => "forwards",
            Direction::Backwards => "backwards",
        }
    }
}

pub(super) fn direction(query: &Query) -> Result<Direction, AblyError> {
    match query.get("direction") {
        None | Some("backwards") => Ok(Direction::Backwards),
        Some("forwards") => Ok(Direction::Forwards),
        Some(other) => Err(AblyError::bad_param(format!(
            "Invalid value for parameter 'direction': {other:?}; expected forwards or backwards"
        ))),
    }
}

/// `start`/`end` (inclusive), as ms epoch or ISO 8601; defaults: beginning of time and now.
pub(super) fn time_range(query: &Query, now: i64) -> Result<(i64, i64), AblyError> {
    let start = match query.get("start") {
        Some(raw) => parse_time("start", raw)?,
        None => 0,
    };
    let end = match query.get("end") {
        Some(raw) => parse_time("end", raw)?,
        None => now,
    };
    if start > end {
        return Err(AblyError::bad_param(format!(
            "Invalid value for parameter 'start': start ({start}) is after end ({end})"
        )));
    }
    Ok((start, end))
}

/// Milliseconds since the epoch, or an ISO 8601 date-time (offset optional, UTC assumed), or a
/// plain date (midnight UTC).
pub(super) fn parse_time(name: &str, raw: &str) -> Result<i64, AblyError> {
    let text = raw.trim();
    if let Ok(ms) = text.parse::<i64>() {
        if ms >= 0 {
            return Ok(ms);
        }
    }
    let to_ms = |dt: OffsetDateTime| i64::try_from(dt.unix_timestamp_nanos() / 1_000_000).ok();
    let parsed = OffsetDateTime::parse(text, &Rfc3339)
        .ok()
        .or_else(|| {
            PrimitiveDateTime::parse(
                text,
                format_description!("[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond]"),
            )
            .ok()
            .map(PrimitiveDateTime::assume_utc)
        })
        .or_else(|| {
            PrimitiveDateTime::parse(text, format_description!("[year]-[month]-[day]T[hour]:[minute]:[second]"))
                .ok()
                .map(PrimitiveDateTime::assume_utc)
        })
        .or_else(|| {
            PrimitiveDateTime::parse(text, format_description!("[year]-[month]-[day]T[hour]:[minute]"))
                .ok()
                .map(PrimitiveDateTime::assume_utc)
        })
        .or_else(|| {
            Date::parse(text, format_description!("[year]-[month]-[day]")).ok().map(|d| d.midnight().assume_utc())
        })
        .and_then(to_ms)
        .filter(|ms| *ms >= 0);
    parsed.ok_or_else(|| {
        AblyError::bad_param(format!(
            "Invalid value for parameter '{name}': {raw:?}; expected milliseconds since the epoch or an ISO 8601 time"
        ))
    })
}

/// Builds the `Link` header of one page. `base` holds the query that selects the whole result
/// (filters, concrete time range, limit); `current` and `next` are cursors into it.
pub(super) struct Links<'a> {
    /// Last segment of the request path: ably-js keeps the path and swaps only the query.
    pub(super) segment: &'a str,
    pub(super) base: Vec<(&'static str, String)>,
    /// The request's own `format`, carried over so following pages keep it.
    pub(super) format: Option<String>,
}

impl Links<'_> {
    fn url(&self, cursor: Option<&str>) -> String {
        let mut pairs: Vec<(&str, String)> = self.base.iter().map(|(k, v)| (*k, v.clone())).collect();
        if let Some(c) = cursor {
            pairs.push(("cursor", c.to_owned()));
        }
        if let Some(f) = &self.format {
            pairs.push(("format", f.clone()));
        }
        format!("<./{}?{}>", self.segment, encode_query(&pairs))
    }

    /// The header value: `first`, `current`, and `next` when another page exists.
    pub(super) fn header(&self, current: Option<&str>, next: Option<&str>) -> String {
        let mut out = format!("{}; rel=\"first\", {}; rel=\"current\"", self.url(None), self.url(current));
        if let Some(n) = next {
            out.push_str(", ");
            out.push_str(&self.url(Some(n)));
            out.push_str("; rel=\"next\"");
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits() {
        assert_eq!(limit(&Query::parse("").expect("UTF-8")), Ok(100));
        assert_eq!(limit(&Query::parse("limit=1000").expect("UTF-8")), Ok(1000));
        assert_eq!(limit(&Query::parse("limit=1001").expect("UTF-8")).map_err(|e| e.code), Err(40003));
        assert!(limit(&Query::parse("limit=0").expect("UTF-8")).is_err());
        assert!(limit(&Query::parse("limit=x").expect("UTF-8")).is_err());
    }

    #[test]
    fn times() {
        assert_eq!(parse_time("start", "1700000000000"), Ok(1_700_000_000_000));
        assert_eq!(parse_time("start", "2023-11-14T22:13:20Z"), Ok(1_700_000_000_000));
        assert_eq!(parse_time("start", "2023-11-14T23:13:20.5+01:00"), Ok(1_700_000_000_500));
        assert_eq!(parse_time("start", "2023-11-14T22:13:20"), Ok(1_700_000_000_000));
        assert_eq!(parse_time("end", "2023-11-14"), Ok(1_699_920_000_000));
        let err = parse_time("end", "yesterday").expect_err("bad");
        assert!(err.message.contains("'end'"));
        assert!(time_range(&Query::parse("start=5&end=4").expect("UTF-8"), 10).is_err());
    }

    #[test]
    fn link_form() {
        let links =
            Links { segment: "history", base: vec![("limit", "2".into()), ("start", "0".into())], format: None };
        assert_eq!(
            links.header(None, Some("a,b")),
            "<./history?limit=2&start=0>; rel=\"first\", <./history?limit=2&start=0>; rel=\"current\", <./history?limit=2&start=0&cursor=a%2Cb>; rel=\"next\""
        );
    }
}
