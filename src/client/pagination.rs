//! Following a list to its next page, per vendor, and finding the records in a page.
//!
//! A next link comes from the server, so it is checked before it is followed: one that leaves the
//! origin of the first request (scheme, host, port) is refused, because the next request would
//! carry the credentials there; and [`PageTrail`] stops a walk that repeats itself or never ends.

use std::collections::HashSet;

use reqwest::Url;
use serde_json::Value;

use super::error::CallError;
use super::request::PreparedRequest;
use super::Response;
use crate::catalog::Paging;
use crate::json_index::RECORD_KEYS;

/// Pages `--all-pages` reads at most, unless told otherwise.
pub const DEFAULT_PAGE_CAP: usize = 1000;

/// The request for the page after `response`, `Ok(None)` on the last page, or an error when the
/// server's next link points at another origin.
pub fn next_page(
    paging: Paging,
    request: &PreparedRequest,
    response: &Response,
) -> Result<Option<PreparedRequest>, CallError> {
    let Some(url) = next_url(paging, request, response) else {
        return Ok(None);
    };
    let url = without_userinfo(&url);
    let (here, there) = (origin(&request.url), origin(&url));
    if here.is_none() || here != there {
        return Err(CallError::OffOrigin { url, origin: here.unwrap_or_else(|| request.url.clone()) });
    }
    let mut next = request.clone();
    next.url = url;
    Ok(Some(next))
}

/// `url` without user info: reqwest turns a URL's `user:password@` into Basic auth, so a link
/// from the server carrying one would replace the user's credential with the server's choice (and
/// print a password wherever the link is shown). Text that is not a URL is returned as it is.
pub fn without_userinfo(url: &str) -> String {
    match Url::parse(url) {
        Ok(mut parsed) if !parsed.username().is_empty() || parsed.password().is_some() => {
            let _ = parsed.set_username("");
            let _ = parsed.set_password(None);
            parsed.to_string()
        }
        _ => url.to_owned(),
    }
}

/// `scheme://host:port` of a URL, with the scheme's default port made explicit, so that
/// `https://h` and `https://h:443` are one origin and `http://h:80` and `https://h:443` two.
pub fn origin(url: &str) -> Option<String> {
    let parsed = Url::parse(url).ok()?;
    let host = parsed.host_str()?;
    Some(format!("{}://{}:{}", parsed.scheme(), host, parsed.port_or_known_default()?))
}

/// The pages of one walk through a list: stops it with an error when the server sends a page's
/// link or cursor a second time (it would loop forever) or when `cap` pages have been read.
#[derive(Debug)]
pub struct PageTrail {
    seen: HashSet<String>,
    cap: usize,
}

impl PageTrail {
    /// A walk that starts with `first`, reading at most `cap` pages in all.
    pub fn new(first: &PreparedRequest, cap: usize) -> PageTrail {
        PageTrail { seen: HashSet::from([first.url.clone()]), cap: cap.max(1) }
    }

    /// A walk that has already read `pages` (the browser's stack of pages behind the one in view).
    pub fn resume<'a>(pages: impl IntoIterator<Item = &'a PreparedRequest>, cap: usize) -> PageTrail {
        PageTrail { seen: pages.into_iter().map(|r| r.url.clone()).collect(), cap: cap.max(1) }
    }

    /// Pages read so far (the first included).
    pub fn pages(&self) -> usize {
        self.seen.len()
    }

    /// Records `next` as the next page to read, or says why it must not be.
    pub fn advance(&mut self, next: &PreparedRequest) -> Result<(), CallError> {
        if self.seen.contains(&next.url) {
            return Err(CallError::Paging(format!(
                "the server sent the same next page twice after {} pages ({}); stopped rather than loop",
                self.pages(),
                next.url
            )));
        }
        if self.pages() >= self.cap {
            return Err(CallError::Paging(format!(
                "stopped at the page cap: {} pages read and the list goes on; raise it with --page-cap N, \
                 or narrow the request",
                self.pages()
            )));
        }
        self.seen.insert(next.url.clone());
        Ok(())
    }
}

/// The URL of the page after `response`, if the vendor's paging says there is one.
fn next_url(paging: Paging, request: &PreparedRequest, response: &Response) -> Option<String> {
    Some(match paging {
        Paging::None => return None,
        Paging::LinkHeader => resolve(&request.url, &link_next(response)?)?,
        Paging::ODataNextLink => resolve(&request.url, body(response)?.get("@nextLink")?.as_str()?)?,
        Paging::PagingUrl => {
            let page = body(response)?;
            if records(&page).is_none_or(|(_, r)| r.is_empty()) {
                return None;
            }
            resolve(&request.url, page.get("paging")?.get("next")?.as_str()?)?
        }
        Paging::CursorHeaders => {
            let after = response.header("cb-after")?;
            if records(&body(response)?).is_none_or(|(_, r)| r.is_empty()) {
                return None;
            }
            with_query(&request.url, &[("after", after)], &["before"])?
        }
        Paging::HasMore => {
            let page = body(response)?;
            if !page.get("has_more").and_then(Value::as_bool).unwrap_or(false) {
                return None;
            }
            let (_, rows) = records(&page)?;
            let last = rows.last()?.get("id")?.as_str()?;
            with_query(&request.url, &[("before_id", last)], &["after_id"])?
        }
        Paging::SkipLimit => {
            let page = body(response)?;
            let (_, rows) = records(&page)?;
            let parsed = Url::parse(&request.url).ok()?;
            let number = |name: &str, default: usize| {
                parsed.query_pairs().find(|(k, _)| k == name).and_then(|(_, v)| v.parse().ok()).unwrap_or(default)
            };
            let (skip, limit) = (number("skip", 0), number("limit", 100));
            if rows.is_empty() || rows.len() < limit {
                return None;
            }
            with_query(&request.url, &[("skip", &(skip + rows.len()).to_string())], &[])?
        }
        Paging::PageNumber => {
            let page = body(response)?;
            if records(&page).is_none_or(|(_, r)| r.is_empty()) {
                return None;
            }
            let parsed = Url::parse(&request.url).ok()?;
            let current: u64 =
                parsed.query_pairs().find(|(k, _)| k == "page").and_then(|(_, v)| v.parse().ok()).unwrap_or(0);
            with_query(&request.url, &[("page", &(current + 1).to_string())], &[])?
        }
    })
}

fn body(response: &Response) -> Option<Value> {
    serde_json::from_slice(&response.body).ok()
}

/// The `rel="next"` target of the `Link` headers (one header per relation, or comma-joined).
fn link_next(response: &Response) -> Option<String> {
    response.headers.iter().filter(|(k, _)| k.eq_ignore_ascii_case("link")).flat_map(|(_, v)| v.split(',')).find_map(
        |link| {
            let (target, params) = link.trim().split_once(';')?;
            let is_next = params.split(';').any(|p| p.trim().trim_start_matches("rel=").trim_matches('"') == "next");
            is_next.then(|| target.trim().trim_start_matches('<').trim_end_matches('>').to_owned())
        },
    )
}

fn resolve(base: &str, link: &str) -> Option<String> {
    Url::parse(base).ok()?.join(link).ok().map(String::from)
}

/// `url` with `set` query parameters replaced and `remove` ones dropped.
fn with_query(url: &str, set: &[(&str, &str)], remove: &[&str]) -> Option<String> {
    let mut parsed = Url::parse(url).ok()?;
    let kept: Vec<(String, String)> = parsed
        .query_pairs()
        .filter(|(k, _)| !set.iter().any(|(s, _)| s == k) && !remove.contains(&k.as_ref()))
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect();
    parsed.query_pairs_mut().clear().extend_pairs(kept).extend_pairs(set.iter().copied());
    Some(parsed.into())
}

/// The records of a list response: the array itself, or the array field that holds them
/// (`value` for AvaTax, `items` for Mailgun, the plural resource name for EasyPost, ...).
pub fn records(page: &Value) -> Option<(Option<&str>, &Vec<Value>)> {
    match page {
        Value::Array(rows) => Some((None, rows)),
        Value::Object(map) => {
            for key in RECORD_KEYS {
                if let Some(Value::Array(rows)) = map.get(key) {
                    return Some((Some(key), rows));
                }
            }
            map.iter()
                .find_map(|(k, v)| match v {
                    Value::Array(rows) if rows.iter().all(Value::is_object) => Some((Some(k.as_str()), rows)),
                    _ => None,
                })
                // A list of bare ids (TaxJar's `{"orders": ["123", ...]}`) when it is all there is.
                .or_else(|| match map.iter().collect::<Vec<_>>().as_slice() {
                    [(k, Value::Array(rows))] => Some((Some(k.as_str()), rows)),
                    _ => None,
                })
        }
        _ => None,
    }
}

/// The records of a list response, taken out of it rather than copied.
pub fn into_records(mut page: Value) -> Option<Vec<Value>> {
    let key = records(&page)?.0.map(str::to_owned);
    let rows = match key {
        Some(key) => page.as_object_mut()?.remove(&key)?,
        None => page,
    };
    match rows {
        Value::Array(rows) => Some(rows),
        _ => None,
    }
}

/// Concatenates the records of several pages into one response body (`--all-pages`).
pub fn merge_pages(pages: &[Value]) -> Value {
    let Some(first) = pages.first() else {
        return Value::Array(Vec::new());
    };
    let all: Vec<Value> = pages.iter().filter_map(records).flat_map(|(_, rows)| rows.iter().cloned()).collect();
    match (first, records(first)) {
        (Value::Object(map), Some((Some(key), _))) => {
            let mut merged = map.clone();
            merged.insert(key.to_owned(), Value::Array(all));
            Value::Object(merged)
        }
        _ => Value::Array(all),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::{Method, Service};
    use crate::client::request::RequestBody;
    use serde_json::json;

    fn request(url: &str) -> PreparedRequest {
        PreparedRequest {
            service: Service::Ably,
            method: Method::Get,
            url: url.into(),
            headers: vec![],
            body: RequestBody::Empty,
            expects_json: true,
            public: false,
        }
    }

    fn response(headers: &[(&str, &str)], body: &Value) -> Response {
        Response {
            status: 200,
            headers: headers.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect(),
            body: body.to_string().into(),
            duration: std::time::Duration::ZERO,
            request_line: String::new(),
        }
    }

    #[test]
    fn link_header_next_is_resolved_against_the_request() {
        let r = response(
            &[(
                "link",
                "<./messages?limit=2&cursor=abc>; rel=\"first\", <./messages?limit=2&cursor=def>; rel=\"next\"",
            )],
            &json!([]),
        );
        let next =
            next_page(Paging::LinkHeader, &request("http://h:1/channels/x/messages?limit=2"), &r).unwrap().unwrap();
        assert_eq!(next.url, "http://h:1/channels/x/messages?limit=2&cursor=def");
        let last = response(&[("Link", "<./messages?limit=2>; rel=\"first\"")], &json!([]));
        assert!(next_page(Paging::LinkHeader, &request("http://h:1/channels/x/messages"), &last).unwrap().is_none());
    }

    #[test]
    fn has_more_pages_before_the_last_id() {
        let r = response(&[], &json!({"addresses": [{"id": "adr_1"}, {"id": "adr_2"}], "has_more": true}));
        let next = next_page(Paging::HasMore, &request("http://h/v2/addresses?page_size=2"), &r).unwrap().unwrap();
        assert_eq!(next.url, "http://h/v2/addresses?page_size=2&before_id=adr_2");
        let done = response(&[], &json!({"addresses": [{"id": "adr_3"}], "has_more": false}));
        assert!(next_page(Paging::HasMore, &request("http://h/v2/addresses"), &done).unwrap().is_none());
    }

    #[test]
    fn cursor_headers_and_odata() {
        let r = response(&[("CB-AFTER", "77")], &json!([{"trade_id": 78}]));
        let next = next_page(Paging::CursorHeaders, &request("http://h/fills?limit=1&before=9"), &r).unwrap().unwrap();
        assert_eq!(next.url, "http://h/fills?limit=1&after=77");
        let o = response(&[], &json!({"value": [{"id": 1}], "@nextLink": "/api/v2/companies?%24top=1&%24skip=1"}));
        let next = next_page(Paging::ODataNextLink, &request("http://h/api/v2/companies?$top=1"), &o).unwrap().unwrap();
        assert_eq!(next.url, "http://h/api/v2/companies?%24top=1&%24skip=1");
    }

    #[test]
    fn skip_limit_moves_on_after_a_full_page() {
        let full = response(&[], &json!({"total_count": 5, "items": [{"name": "a"}, {"name": "b"}]}));
        let next = next_page(Paging::SkipLimit, &request("http://h/v3/domains?limit=2"), &full).unwrap().unwrap();
        assert_eq!(next.url, "http://h/v3/domains?limit=2&skip=2");
        let short = response(&[], &json!({"items": [{"name": "e"}]}));
        assert!(next_page(Paging::SkipLimit, &request("http://h/v3/domains?limit=2&skip=4"), &short)
            .unwrap()
            .is_none());
    }

    #[test]
    fn next_links_to_another_origin_are_refused_in_every_style() {
        let base = "http://127.0.0.1:7701/channels/x/messages?limit=2";
        for elsewhere in [
            "http://127.0.0.1:9999/steal",
            "https://127.0.0.1:7701/x",
            "http://evil.example:7701/x",
            "//evil.example/x",
        ] {
            let cases = [
                (Paging::LinkHeader, response(&[("link", &format!("<{elsewhere}>; rel=\"next\""))], &json!([]))),
                (Paging::ODataNextLink, response(&[], &json!({"value": [{"id": 1}], "@nextLink": elsewhere}))),
                (Paging::PagingUrl, response(&[], &json!({"items": [{"id": 1}], "paging": {"next": elsewhere}}))),
            ];
            for (paging, page) in cases {
                let err = next_page(paging, &request(base), &page).unwrap_err();
                assert!(
                    matches!(&err, CallError::OffOrigin { origin, .. } if origin == "http://127.0.0.1:7701"),
                    "{paging:?} {elsewhere}: {err}"
                );
            }
        }
        // The same origin spelled with its default port is the same origin.
        let same = response(&[], &json!({"value": [{"id": 1}], "@nextLink": "https://h:443/api/v2/x?$skip=1"}));
        assert!(next_page(Paging::ODataNextLink, &request("https://h/api/v2/x"), &same).unwrap().is_some());
    }

    #[test]
    fn a_trail_stops_on_a_repeated_link_and_at_its_cap() {
        let first = request("http://h/x?page=1");
        let mut trail = PageTrail::new(&first, 3);
        trail.advance(&request("http://h/x?page=2")).unwrap();
        let err = trail.advance(&request("http://h/x?page=1")).unwrap_err();
        assert!(err.to_string().contains("same next page twice after 2 pages"), "{err}");
        trail.advance(&request("http://h/x?page=3")).unwrap();
        let err = trail.advance(&request("http://h/x?page=4")).unwrap_err();
        assert!(err.to_string().contains("page cap: 3 pages read"), "{err}");
    }

    #[test]
    fn a_list_of_bare_ids_is_the_records_when_it_is_all_there_is() {
        let page = json!({"orders": ["123", "124"]});
        assert_eq!(records(&page).map(|(k, r)| (k, r.len())), Some((Some("orders"), 2)));
        assert!(records(&json!({"ids": ["1"], "total": 1})).is_none(), "not when other fields say otherwise");
        assert_eq!(merge_pages(&[page.clone(), json!({"orders": ["125"]})])["orders"], json!(["123", "124", "125"]));
    }

    #[test]
    fn merging_keeps_the_envelope() {
        let a = json!({"items": [1, 2], "paging": {}});
        let b = json!({"items": [3], "paging": {}});
        assert_eq!(merge_pages(&[a, b])["items"], json!([1, 2, 3]));
        assert_eq!(merge_pages(&[json!([1]), json!([2])]), json!([1, 2]));
    }
}
