//! Paging in each vendor style, so a list route is "filter, sort, then one call here": OData
//! `$top`/`$skip` with `@recordsetCount` and `@nextLink` (AvaTax), offset/limit (Deepgram,
//! Mailgun events), page number (TaxJar-style `page`/`per_page`), and RFC 8288 `Link` headers
//! (Ably, Coinbase). Parsing errors are typed; each vendor renders them in its own shape.

use std::ops::Range;

use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};

use super::request::Query;

/// A paging parameter that is not a number or is out of bounds.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid value for {param}: {value:?}; expected {expected}")]
pub struct PagingError {
    pub param: &'static str,
    pub value: String,
    pub expected: String,
}

/// A whole number in `min..=max` from parameter `param`, or `default` when absent.
pub fn bounded(query: &Query, param: &'static str, default: u64, min: u64, max: u64) -> Result<u64, PagingError> {
    let Some(raw) = query.get(param) else {
        return Ok(default);
    };
    match raw.trim().parse::<u64>() {
        Ok(n) if (min..=max).contains(&n) => Ok(n),
        _ => Err(PagingError { param, value: raw.to_owned(), expected: format!("a whole number from {min} to {max}") }),
    }
}

fn to_usize(n: u64) -> usize {
    usize::try_from(n).unwrap_or(usize::MAX)
}

/// The slice of `0..total` from `start`, at most `len` long.
fn window(total: usize, start: usize, len: usize) -> Range<usize> {
    let from = start.min(total);
    from..from.saturating_add(len).min(total)
}

/// AvaTax's OData paging: `$top` (0 or absent: the maximum), `$skip`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OData {
    pub top: usize,
    pub skip: usize,
}

impl OData {
    /// `max_top` is the vendor's per-call cap (1000 for AvaTax), also used when `$top` is 0.
    pub fn parse(query: &Query, max_top: usize) -> Result<OData, PagingError> {
        let max = max_top as u64;
        let top = match bounded(query, "$top", 0, 0, max)? {
            0 => max_top,
            n => to_usize(n),
        };
        let skip = to_usize(bounded(query, "$skip", 0, 0, u64::from(u32::MAX))?);
        Ok(OData { top, skip })
    }

    /// The rows of a result of `total` rows (counted after filtering) this page holds.
    pub fn range(&self, total: usize) -> Range<usize> {
        window(total, self.skip, self.top)
    }

    /// `@nextLink` for a result of `total` rows: `path` plus the request's query with `$skip`
    /// moved on (and `$top` made explicit), or `None` on the last page.
    pub fn next_link(&self, path: &str, query: &Query, total: usize) -> Option<String> {
        let next_skip = self.skip.saturating_add(self.top);
        if next_skip >= total {
            return None;
        }
        let mut pairs: Vec<(&str, String)> = query
            .pairs
            .iter()
            .filter(|(k, _)| k != "$top" && k != "$skip")
            .map(|(k, v)| (k.as_str(), v.clone()))
            .collect();
        pairs.push(("$top", self.top.to_string()));
        pairs.push(("$skip", next_skip.to_string()));
        Some(format!("{path}?{}", encode_form(&pairs)))
    }

    /// The FetchResult envelope: `{"@recordsetCount", "value", "@nextLink"?}`, the count being
    /// the rows matching before paging.
    pub fn envelope(&self, page: Vec<serde_json::Value>, total: usize, next_link: Option<String>) -> serde_json::Value {
        let mut body = serde_json::Map::new();
        body.insert("@recordsetCount".into(), total.into());
        body.insert("value".into(), serde_json::Value::Array(page));
        if let Some(link) = next_link {
            body.insert("@nextLink".into(), link.into());
        }
        serde_json::Value::Object(body)
    }
}

/// Offset/limit paging (`offset`, `limit` or the vendor's names for them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OffsetLimit {
    pub offset: usize,
    pub limit: usize,
}

impl OffsetLimit {
    pub fn parse(
        query: &Query,
        names: (&'static str, &'static str),
        default_limit: usize,
        max_limit: usize,
    ) -> Result<OffsetLimit, PagingError> {
        let offset = to_usize(bounded(query, names.0, 0, 0, u64::from(u32::MAX))?);
        let limit = to_usize(bounded(query, names.1, default_limit as u64, 1, max_limit as u64)?);
        Ok(OffsetLimit { offset, limit })
    }

    pub fn range(&self, total: usize) -> Range<usize> {
        window(total, self.offset, self.limit)
    }

    /// Whether rows remain after this page.
    pub fn has_more(&self, total: usize) -> bool {
        self.offset.saturating_add(self.limit) < total
    }
}

/// Page-number paging (`page` from 1, `per_page`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PageNumber {
    pub page: usize,
    pub per_page: usize,
}

impl PageNumber {
    pub fn parse(
        query: &Query,
        names: (&'static str, &'static str),
        default_per_page: usize,
        max_per_page: usize,
    ) -> Result<PageNumber, PagingError> {
        let page = to_usize(bounded(query, names.0, 1, 1, u64::from(u32::MAX))?);
        let per_page = to_usize(bounded(query, names.1, default_per_page as u64, 1, max_per_page as u64)?);
        Ok(PageNumber { page, per_page })
    }

    pub fn range(&self, total: usize) -> Range<usize> {
        window(total, (self.page - 1).saturating_mul(self.per_page), self.per_page)
    }

    /// Pages in a result of `total` rows (at least 1: an empty result is one empty page).
    pub fn total_pages(&self, total: usize) -> usize {
        total.div_ceil(self.per_page).max(1)
    }
}

/// An RFC 8288 `Link` header value from `(target, rel)` pairs: `<target>; rel="next", ...`.
/// Targets are used as given: each vendor decides whether they are absolute or relative.
pub fn link_header(links: &[(String, &str)]) -> String {
    links.iter().map(|(target, rel)| format!("<{target}>; rel=\"{rel}\"")).collect::<Vec<_>>().join(", ")
}

/// Everything but RFC 3986 unreserved characters is escaped, so links never contain commas
/// (clients split `Link` on them) and `$` keys come out as `%24` the way AvaTax writes them.
const COMPONENT: &AsciiSet = &NON_ALPHANUMERIC.remove(b'-').remove(b'_').remove(b'.').remove(b'~');

/// A query string from decoded pairs, every component percent-encoded.
pub fn encode_query(pairs: &[(&str, String)]) -> String {
    join_pairs(pairs, |s, out| out.extend(utf8_percent_encode(s, COMPONENT)))
}

/// A query string in form style (spaces as `+`), as AvaTax writes `@nextLink`.
pub fn encode_form(pairs: &[(&str, String)]) -> String {
    join_pairs(pairs, |s, out| {
        for (index, piece) in s.split(' ').enumerate() {
            if index > 0 {
                out.push('+');
            }
            out.extend(utf8_percent_encode(piece, COMPONENT));
        }
    })
}

fn join_pairs(pairs: &[(&str, String)], encode: impl Fn(&str, &mut String)) -> String {
    let mut out = String::new();
    for (k, v) in pairs {
        if !out.is_empty() {
            out.push('&');
        }
        encode(k, &mut out);
        out.push('=');
        encode(v, &mut out);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(raw: &str) -> Query {
        Query::parse(raw).expect("UTF-8")
    }

    #[test]
    fn odata_pages_count_and_link_like_avatax() {
        let query = q("%24filter=status+eq+%27Committed%27&%24top=1&%24skip=1000");
        let paging = OData::parse(&query, 1000).expect("valid");
        assert_eq!(paging, OData { top: 1, skip: 1000 });
        assert_eq!(paging.range(60_933), 1000..1001);
        assert_eq!(
            paging.next_link("/api/v2/companies/Z/transactions", &query, 60_933).as_deref(),
            Some("/api/v2/companies/Z/transactions?%24filter=status+eq+%27Committed%27&%24top=1&%24skip=1001")
        );
        assert_eq!(paging.next_link("/x", &query, 1001), None);
        let body = paging.envelope(vec![serde_json::json!({"id": 1})], 60_933, None);
        assert_eq!(body.to_string(), r#"{"@recordsetCount":60933,"value":[{"id":1}]}"#);
        assert_eq!(OData::parse(&q(""), 1000), Ok(OData { top: 1000, skip: 0 }));
        assert_eq!(OData::parse(&q("$top=1001"), 1000).map_err(|e| e.param), Err("$top"));
        assert_eq!(OData::parse(&q("$skip=-1"), 1000).map_err(|e| e.param), Err("$skip"));
        assert_eq!(OData { top: 10, skip: 50 }.range(20), 20..20);
    }

    #[test]
    fn offset_and_page_number() {
        let paging = OffsetLimit::parse(&q("offset=2&limit=3"), ("offset", "limit"), 10, 100).expect("valid");
        assert_eq!((paging.range(4), paging.has_more(4), paging.has_more(6)), (2..4, false, true));
        assert!(OffsetLimit::parse(&q("limit=0"), ("offset", "limit"), 10, 100).is_err());
        let pages = PageNumber::parse(&q("page=2&per_page=2"), ("page", "per_page"), 25, 100).expect("valid");
        assert_eq!((pages.range(5), pages.total_pages(5), pages.total_pages(0)), (2..4, 3, 1));
        let err = PageNumber::parse(&q("page=0"), ("page", "per_page"), 25, 100).expect_err("page 0");
        assert_eq!(err.to_string(), "invalid value for page: \"0\"; expected a whole number from 1 to 4294967295");
    }

    #[test]
    fn link_headers() {
        let next = format!("/orders?{}", encode_query(&[("after", "a,b".into())]));
        assert_eq!(link_header(&[(next, "next")]), "</orders?after=a%2Cb>; rel=\"next\"");
    }
}
