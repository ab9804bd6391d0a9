//! The rules a value must follow before it is sent, shared by forms, `opsdeck call` and the
//! request builder, so a bad value gets the same message wherever it is typed.

use serde_json::Value;
use time::format_description::well_known::{Iso8601, Rfc2822, Rfc3339};
use time::macros::format_description;
use time::{Date, OffsetDateTime, PrimitiveDateTime};

use serde_json::Map;

use super::{file_path, items, BodyEncoding, Family, Kind, Location, Operation, Param, Service};
use crate::inert::{inert, is_unsafe};

/// Longest value of a path, query or header parameter: servers and proxies refuse URLs and
/// headers much beyond this, with errors that do not say which value was too long.
pub const MAX_URL_VALUE_BYTES: usize = 8 * 1024;
/// Longest value of one body field typed as NAME=VALUE; a bigger document goes in `--body @FILE`.
pub const MAX_BODY_VALUE_BYTES: usize = 1024 * 1024;

/// Parameter pairs that bound a time range, `(from, to)`: where an operation has both, the first
/// may not come after the second.
const RANGES: [(&str, &str); 5] = [
    ("start", "end"),
    ("begin", "end"),
    ("start_date", "end_date"),
    ("start_datetime", "end_datetime"),
    ("from_transaction_date", "to_transaction_date"),
];

/// Checks one typed value against its parameter. An empty value means "not given".
pub fn check_value(param: &Param, value: &str) -> Result<(), String> {
    if value.is_empty() {
        return if param.required { Err("required".into()) } else { Ok(()) };
    }
    let in_url = matches!(param.location, Location::Path | Location::Query | Location::Header);
    let limit = if in_url { MAX_URL_VALUE_BYTES } else { MAX_BODY_VALUE_BYTES };
    if value.len() > limit {
        return Err(format!(
            "{} bytes is too long: a {} value may have at most {} KB",
            value.len(),
            param.location.label(),
            limit / 1024
        ));
    }
    let header_like =
        matches!(param.location, Location::Path | Location::Header) || param.family == Some(Family::HeaderName);
    if header_like && value.contains(is_unsafe) {
        return Err(format!(
            "'{}' holds a control or invisible character, which a {} value cannot carry",
            inert(value),
            param.location.label()
        ));
    }
    match param.kind {
        Kind::Int => {
            let n: i64 = value.trim().parse().map_err(|_| format!("'{value}' is not a whole number"))?;
            #[expect(clippy::cast_precision_loss, reason = "bounds in the catalog are small")]
            check_bounds(param, n as f64)?;
        }
        Kind::Num => {
            let n: f64 = value
                .trim()
                .parse()
                .ok()
                .filter(|n: &f64| n.is_finite())
                .ok_or_else(|| format!("'{value}' is not a number"))?;
            check_bounds(param, n)?;
        }
        Kind::Bool => {
            if !matches!(value.trim(), "true" | "false") {
                return Err(format!("'{value}' is not true or false"));
            }
        }
        Kind::Json => {
            serde_json::from_str::<serde_json::Value>(value).map_err(|e| format!("invalid JSON: {e}"))?;
        }
        Kind::File => {
            for item in items(param, value) {
                check_file(file_path(item))?;
            }
        }
        Kind::Str | Kind::List | Kind::Data => {
            let chars = value.chars().count();
            #[expect(clippy::cast_precision_loss, reason = "string lengths are small")]
            let len = chars as f64;
            if let Some(min) = param.min.filter(|m| len < *m) {
                return Err(format!("at least {min} characters"));
            }
            if let Some(max) = param.max.filter(|m| len > *m) {
                return Err(format!("at most {max} characters"));
            }
        }
    }
    if !param.allowed.is_empty() {
        let values: Vec<&str> = if param.kind == Kind::List { items(param, value) } else { vec![value.trim()] };
        for v in values {
            if !param.allowed.contains(&v) {
                return Err(format!("'{v}' is not one of {}", param.allowed.join(", ")));
            }
        }
    }
    Ok(())
}

/// Whether a file can be sent: it exists, is a file, and can be opened for reading. The error
/// names the path, so of several attachments the one at fault is plain.
fn check_file(path: &str) -> Result<(), String> {
    let shown = inert(path);
    match std::fs::metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(format!("no file at {shown}")),
        Err(e) => Err(format!("cannot read {shown}: {e}")),
        Ok(meta) if meta.is_dir() => Err(format!("{shown} is a folder; give a file")),
        Ok(_) => std::fs::File::open(path).map(drop).map_err(|e| format!("cannot read {shown}: {e}")),
    }
}

/// Checks a name given for `param`: for a family (`h:`, `v:`), that a suffix follows the prefix
/// and follows the family's rule; any other name is the parameter's own and fine.
pub fn check_name(param: &Param, name: &str) -> Result<(), String> {
    let Some(rule) = param.family else { return Ok(()) };
    let prefix = param.name;
    let suffix = name.strip_prefix(prefix).unwrap_or(name);
    if suffix.is_empty() {
        return Err(format!("needs a {} after {prefix}, e.g. {prefix}{}=VALUE", rule.label(), rule.example()));
    }
    let bad = match rule {
        // RFC 9110 §5.1: a field name is a token.
        Family::HeaderName => suffix.chars().find(|c| !(c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(*c))),
        Family::VariableName => suffix.chars().find(|c| c.is_whitespace() || *c == '=' || is_unsafe(*c)),
    };
    match bad {
        Some(c) => Err(format!(
            "'{}' is not a {}: '{}' cannot be in it{}",
            inert(suffix),
            rule.label(),
            inert(&c.to_string()),
            if rule == Family::HeaderName { " (letters, digits and !#$%&'*+-.^_`|~ only)" } else { "" }
        )),
        None => Ok(()),
    }
}

/// The values of `family` among `values` as the one JSON object a form edits
/// (`{"X-Ticket": "42"}` for `h:X-Ticket=42`), pretty-printed; `None` when there are none.
/// Every value is a JSON string, so expanding it again gives back exactly the text that was sent.
/// A name listed in the catalog on its own (`h:Reply-To`) is that parameter's, not the family's.
pub fn family_object<'a>(
    op: &Operation,
    family: &Param,
    values: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> Option<String> {
    let mut object = Map::new();
    for (name, value) in values {
        let ours = op.param(name).is_some_and(|p| p.family.is_some() && p.name == family.name);
        if let Some(suffix) = name.strip_prefix(family.name).filter(|s| ours && !s.is_empty()) {
            object.insert(suffix.to_owned(), Value::String(value.to_owned()));
        }
    }
    (!object.is_empty()).then(|| serde_json::to_string_pretty(&Value::Object(object)).unwrap_or_default())
}

/// A family's JSON object (as a form holds it, or as `{"h:": {...}}` in a `--body` document)
/// as the `(name, value)` pairs sent, each name and value checked: `{"X-Ticket": 42}` gives
/// `("h:X-Ticket", "42")`. Strings are sent as they are, anything else as its JSON text; a key
/// that already carries the prefix keeps it once.
pub fn expand_family(family: &Param, object: &Value) -> Result<Vec<(String, String)>, String> {
    let rule = family.family.unwrap_or(Family::VariableName);
    let Value::Object(map) = object else {
        return Err(format!(
            "must be a JSON object of {}s and values, e.g. {{\"{}\": \"42\"}}",
            rule.label(),
            rule.example()
        ));
    };
    let mut pairs = Vec::new();
    for (key, value) in map {
        let name = if key.starts_with(family.name) { key.clone() } else { format!("{}{key}", family.name) };
        let text = match value {
            Value::String(s) => s.clone(),
            Value::Null => continue,
            other => other.to_string(),
        };
        check_name(family, &name).map_err(|e| format!("{name}: {e}"))?;
        check_value(family, &text).map_err(|e| format!("{name}: {e}"))?;
        pairs.push((name, text));
    }
    Ok(pairs)
}

fn check_bounds(param: &Param, n: f64) -> Result<(), String> {
    if let Some(min) = param.min.filter(|m| n < *m) {
        return Err(format!("must be at least {min}"));
    }
    if let Some(max) = param.max.filter(|m| n > *m) {
        return Err(format!("must be at most {max}"));
    }
    Ok(())
}

/// Checks a whole set of values and the `--body` document given with them: unknown names,
/// missing required values, each value, a document of the wrong shape, a field given both as
/// NAME=VALUE and in the document, and time ranges that end before they start. Returns every
/// problem as `(parameter, message)`, so a form can show each beside its field.
pub fn check_values<'a>(
    op: &Operation,
    values: impl IntoIterator<Item = (&'a str, &'a str)>,
    document: Option<&Value>,
) -> Vec<(String, String)> {
    let mut problems = Vec::new();
    let mut given = Vec::new();
    for (name, value) in values {
        match op.param(name) {
            Some(param) => {
                if let Err(e) = check_name(param, name).and_then(|()| check_value(param, value)) {
                    problems.push((name.to_owned(), e));
                }
                if !value.is_empty() {
                    given.push((name, value));
                }
            }
            None => {
                let known: Vec<String> = op.params.iter().map(Param::display_name).collect();
                let known = if known.is_empty() { "none".to_owned() } else { known.join(", ") };
                problems.push((name.to_owned(), format!("unknown parameter of {}; known: {known}", op.full_name())));
            }
        }
    }
    let fields = document.and_then(Value::as_object);
    if let Some(document) = document {
        if let Some(problem) = check_document(op, document) {
            problems.push(("--body".to_owned(), problem));
        }
    }
    // Family names in a form body document (`"h:X-Ticket"`, or `"h:": {...}`) follow the same
    // rules as when given as NAME=VALUE, and may not repeat one.
    if matches!(op.body, BodyEncoding::Form | BodyEncoding::Multipart) {
        for (key, value) in fields.into_iter().flatten() {
            let Some(family) = op.param(key).filter(|p| p.family.is_some()) else { continue };
            let named = if key == family.name && value.is_object() {
                expand_family(family, value).map(|pairs| pairs.into_iter().map(|(n, _)| n).collect())
            } else {
                check_name(family, key).map(|()| vec![key.clone()]).map_err(|e| format!("{key}: {e}"))
            };
            match named {
                Ok(names) => {
                    for name in names.iter().filter(|n| given.iter().any(|(g, _)| g == n)) {
                        problems
                            .push((name.clone(), format!("given both as {name}=VALUE and in --body; give it once")));
                    }
                }
                Err(e) => problems.push(("--body".to_owned(), e)),
            }
        }
    }
    for param in op.params {
        let by_value = given.iter().any(|(n, _)| *n == param.name);
        let in_document = match param.location {
            Location::Body => fields.and_then(|f| f.get(param.name)).is_some_and(|v| !v.is_null()),
            Location::WholeBody => document.is_some(),
            _ => false,
        };
        if by_value && in_document {
            problems.push((
                param.name.to_owned(),
                format!("given both as {}=VALUE and in --body; give it once", param.name),
            ));
        }
        let reported = problems.iter().any(|(n, _)| n == param.name);
        if param.required && !by_value && !in_document && !reported {
            let how = if param.location == Location::Body && document.is_some() {
                format!("required: give {}=VALUE or put it in --body", param.name)
            } else {
                "required".to_owned()
            };
            problems.push((param.name.to_owned(), how));
        }
    }
    for group in op.exclusive {
        let present: Vec<&str> = group
            .params
            .iter()
            .copied()
            .filter(|name| {
                given.iter().any(|(n, _)| n == name)
                    || fields.and_then(|f| f.get(*name)).is_some_and(|v| !v.is_null())
                    || (op.param(name).is_some_and(|p| p.location == Location::WholeBody) && document.is_some())
            })
            .collect();
        let choices = group.params.join(" or ");
        match present.as_slice() {
            [] if group.required => {
                problems.push((group.params.first().copied().unwrap_or_default().to_owned(), format!("give {choices}")))
            }
            [_, second, ..] => problems.push(((*second).to_owned(), format!("give {choices}, not both"))),
            _ => {}
        }
    }
    let given_any = op.at_least_one.iter().any(|name| {
        given.iter().any(|(n, _)| n == name) || fields.and_then(|f| f.get(*name)).is_some_and(|v| !v.is_null())
    });
    if let (false, Some(first)) = (given_any, op.at_least_one.first()) {
        problems.push(((*first).to_owned(), format!("give {} (or both)", op.at_least_one.join(" or "))));
    }
    if let Some(limit) = op.max_file_bytes {
        if let Some(problem) = check_file_total(op, &given, limit) {
            problems.push(problem);
        }
    }
    for (from, to) in RANGES {
        if op.param(from).is_none() || op.param(to).is_none() {
            continue;
        }
        let value = |name: &str| given.iter().find(|(n, _)| *n == name).map(|(_, v)| *v);
        let mut instant = |name: &str| {
            let text = value(name)?;
            let parsed = parse_time(op.service, text);
            if parsed.is_none() {
                problems.push((
                    name.to_owned(),
                    format!(
                        "'{}' is not a time: use {}, RFC 3339 (2024-05-01T12:00:00Z), a date (2024-05-01) \
                         or RFC 2822",
                        inert(text),
                        if op.service == Service::Ably { "epoch milliseconds" } else { "epoch seconds" }
                    ),
                ));
            }
            parsed
        };
        if let (Some(start), Some(end)) = (instant(from), instant(to)) {
            if start > end {
                problems.push((
                    from.to_owned(),
                    format!(
                        "{from} '{}' is after {to} '{}'; the range would be empty",
                        inert(value(from).unwrap_or_default()),
                        inert(value(to).unwrap_or_default())
                    ),
                ));
            }
        }
    }
    problems
}

/// Whether the files given for `op` together fit `limit` bytes, read from their sizes on disk
/// (nothing is read); the problem is reported on the first file parameter.
pub fn check_file_total(op: &Operation, given: &[(&str, &str)], limit: u64) -> Option<(String, String)> {
    let mut total = 0u64;
    let mut first = None;
    for (name, value) in given {
        let Some(param) = op.param(name).filter(|p| p.kind == Kind::File) else { continue };
        first.get_or_insert(*name);
        for item in items(param, value) {
            total += std::fs::metadata(file_path(item)).map(|m| m.len()).unwrap_or(0);
        }
    }
    // Megabytes to one decimal, rounded up (so 25 MB and a byte is not shown as 25 MB).
    let mb = |bytes: u64| {
        let tenths = bytes.saturating_mul(10).div_ceil(1024 * 1024);
        if tenths % 10 == 0 {
            (tenths / 10).to_string()
        } else {
            format!("{}.{}", tenths / 10, tenths % 10)
        }
    };
    (total > limit).then(|| {
        (
            first.unwrap_or_default().to_owned(),
            format!(
                "the files hold {} MB; {} takes at most {} MB in one call: send fewer or smaller files",
                mb(total),
                op.full_name(),
                mb(limit)
            ),
        )
    })
}

/// What is wrong with the shape of a `--body` document for `op`, if anything.
fn check_document(op: &Operation, document: &Value) -> Option<String> {
    match op.body {
        BodyEncoding::None => return Some(format!("{} takes no request body", op.full_name())),
        BodyEncoding::Raw(_) => {
            return Some(format!("{} sends a file: give it as NAME=PATH, not --body", op.full_name()))
        }
        BodyEncoding::Json if op.params.iter().any(|p| p.location == Location::WholeBody) => return None,
        BodyEncoding::Json | BodyEncoding::Form | BodyEncoding::Multipart => {}
    }
    let kind = match document {
        Value::Object(_) => return None,
        Value::Array(_) => "an array",
        Value::String(_) => "a string",
        Value::Number(_) => "a number",
        Value::Bool(_) => "a boolean",
        Value::Null => "null",
    };
    Some(format!("must be a JSON object of {}'s body fields, not {kind}", op.full_name()))
}

/// A time as nanoseconds since the epoch, from any of the forms the services take: epoch numbers
/// (milliseconds for Ably, seconds elsewhere), RFC 3339 / ISO 8601 (UTC when no offset is
/// given), a bare date (`2024-05-01`, `2024/05/01`) or RFC 2822.
fn parse_time(service: Service, text: &str) -> Option<i128> {
    let text = text.trim();
    if let Ok(number) = text.parse::<f64>() {
        let unit = if service == Service::Ably { 1e6 } else { 1e9 };
        #[expect(clippy::cast_possible_truncation, reason = "an epoch in nanoseconds fits an i128")]
        return number.is_finite().then_some((number * unit) as i128);
    }
    let utc = |t: PrimitiveDateTime| t.assume_utc().unix_timestamp_nanos();
    OffsetDateTime::parse(text, &Rfc3339)
        .or_else(|_| OffsetDateTime::parse(text, &Iso8601::DEFAULT))
        .or_else(|_| OffsetDateTime::parse(text, &Rfc2822))
        .map(OffsetDateTime::unix_timestamp_nanos)
        .ok()
        .or_else(|| PrimitiveDateTime::parse(text, &Iso8601::DEFAULT).ok().map(utc))
        .or_else(|| Date::parse(text, format_description!("[year]-[month]-[day]")).ok().map(|d| utc(d.midnight())))
        .or_else(|| Date::parse(text, format_description!("[year]/[month]/[day]")).ok().map(|d| utc(d.midnight())))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::{Location, Service};

    #[test]
    fn numbers_bounds_and_allowed_values() {
        let limit = Param::query("limit", "max").int().range(1.0, 1000.0);
        assert!(check_value(&limit, "100").is_ok());
        assert_eq!(check_value(&limit, "1001").unwrap_err(), "must be at most 1000");
        assert_eq!(check_value(&limit, "ten").unwrap_err(), "'ten' is not a whole number");
        assert!(check_value(&limit, "").is_ok());
        let dir = Param::new("direction", Location::Query, "d").one_of(&["forwards", "backwards"]);
        assert_eq!(check_value(&dir, "up").unwrap_err(), "'up' is not one of forwards, backwards");
        let json = Param::body("data", "d").json();
        assert!(check_value(&json, "{\"a\":1}").is_ok());
        assert!(check_value(&json, "{a:1}").unwrap_err().starts_with("invalid JSON"));
        let file = Param::body("attachment", "a").file();
        assert_eq!(check_value(&file, "/no/such/file.pdf").unwrap_err(), "no file at /no/such/file.pdf");
        assert!(check_value(&file, concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml")).is_ok());
        let req = Param::path("channelId", "c");
        assert_eq!(check_value(&req, "").unwrap_err(), "required");
    }

    #[test]
    fn check_values_reports_unknown_and_missing() {
        let op = Service::Ably.operation("messages_list").expect("op");
        let problems = check_values(op, [("limit", "5000"), ("colour", "red")], None);
        let names: Vec<&str> = problems.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["limit", "colour", "channelId"]);
        assert!(problems[1].1.contains("known: channelId, start"));
    }

    fn problems_of(service: Service, op: &str, values: &[(&str, &str)], body: Option<&Value>) -> Vec<(String, String)> {
        check_values(service.operation(op).expect("op"), values.iter().copied(), body)
    }

    #[test]
    fn a_range_that_ends_before_it_starts_is_refused() {
        let problems = problems_of(
            Service::Ably,
            "messages_list",
            &[("channelId", "c"), ("start", "2024-05-02T00:00:00Z"), ("end", "1714521600000")],
            None,
        );
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert_eq!(problems[0].0, "start");
        assert!(problems[0].1.contains("is after end '1714521600000'"), "{problems:?}");
        let fine = [("channelId", "c"), ("start", "1714521600000"), ("end", "2024-05-02")];
        assert!(problems_of(Service::Ably, "messages_list", &fine, None).is_empty());
        let taxjar = [("from_transaction_date", "2024/06/01"), ("to_transaction_date", "2024/05/01")];
        let problems = problems_of(Service::Taxjar, "orders_list", &taxjar, None);
        assert_eq!(problems[0].0, "from_transaction_date", "{problems:?}");
        let mailgun =
            [("domain", "mg.example.com"), ("begin", "Fri, 03 May 2024 09:00:00 -0000"), ("end", "1714000000")];
        assert_eq!(problems_of(Service::Mailgun, "events_list", &mailgun, None)[0].0, "begin");
        let garbled = problems_of(Service::Ably, "messages_list", &[("channelId", "c"), ("end", "yesterday")], None);
        assert_eq!(garbled[0].0, "end");
        assert!(garbled[0].1.contains("'yesterday' is not a time: use epoch milliseconds"), "{garbled:?}");
    }

    #[test]
    fn a_list_of_an_order_or_a_product_needs_one_of_them_or_both() {
        let fills = Service::Coinbase.operation("fills_list").expect("fills_list");
        assert_eq!(
            check_values(fills, [("limit", "5")], None),
            [("order_id".to_owned(), "give order_id or product_id (or both)".to_owned())]
        );
        assert!(check_values(fills, [("product_id", "BTC-USD")], None).is_empty());
        assert!(check_values(fills, [("product_id", "BTC-USD"), ("order_id", "o-1")], None).is_empty());
    }

    #[test]
    fn a_body_document_must_be_an_object_hold_required_fields_and_not_repeat_values() {
        let publish =
            |values: &[(&str, &str)], body: &Value| problems_of(Service::Coinbase, "orders_create", values, Some(body));
        let not_object = publish(&[], &serde_json::json!(["BTC-USD"]));
        assert!(not_object
            .iter()
            .any(|(n, m)| n == "--body" && m.contains("must be a JSON object") && m.contains("not an array")));
        let lacking = publish(&[], &serde_json::json!({"product_id": "BTC-USD", "type": "market", "size": "1"}));
        assert_eq!(lacking, [("side".to_owned(), "required: give side=VALUE or put it in --body".to_owned())]);
        let complete = serde_json::json!({"product_id": "BTC-USD", "side": "buy", "type": "market", "size": "1"});
        assert!(publish(&[], &complete).is_empty());
        let twice = publish(&[("side", "sell")], &complete);
        assert_eq!(twice, [("side".to_owned(), "given both as side=VALUE and in --body; give it once".to_owned())]);
        let no_body = problems_of(Service::Ably, "channels_list", &[], Some(&serde_json::json!({})));
        assert!(no_body[0].1.contains("takes no request body"), "{no_body:?}");
    }

    fn send_problems(values: &[(&str, &str)], body: Option<&Value>) -> Vec<(String, String)> {
        let base = [("domain", "mg.example.com"), ("from", "a@mg.example.com"), ("to", "b@x.com"), ("subject", "s")];
        let all: Vec<(&str, &str)> = base.iter().chain(values).copied().collect();
        problems_of(Service::Mailgun, "messages_send", &all, body)
    }

    #[test]
    fn items_split_repeated_values_and_list_commas_and_nothing_else() {
        let op = Service::Mailgun.operation("messages_send").expect("op");
        let to = op.param("to").expect("to");
        assert_eq!(
            crate::catalog::items(to, "a@x.com\u{1f}b@y.com, c@z.com\u{1f} "),
            ["a@x.com", "b@y.com", "c@z.com"]
        );
        let attachment = op.param("attachment").expect("attachment");
        let joined = crate::catalog::join_items(["@a, b.pdf", "c.pdf"]).expect("joinable");
        assert_eq!(crate::catalog::items(attachment, &joined), ["@a, b.pdf", "c.pdf"], "a comma in a path stays");
        assert_eq!(crate::catalog::file_path("@a, b.pdf"), "a, b.pdf");
        let subject = op.param("subject").expect("subject");
        assert_eq!(crate::catalog::items(subject, " hi\u{1f}there "), [" hi\u{1f}there "], "not repeatable: as it is");
        assert!(crate::catalog::join_items(["a\u{1f}b"]).is_err());
        let mime = Service::Mailgun.operation("messages_send_mime").expect("op");
        assert!(!mime.param("message").expect("message").repeatable());
        assert!(to.repeatable() && attachment.repeatable() && op.param("o:tag").expect("tag").repeatable());
    }

    #[test]
    fn family_names_are_found_by_prefix_and_checked() {
        let op = Service::Mailgun.operation("messages_send").expect("op");
        assert_eq!(op.param("h:X-Ticket").map(|p| p.name), Some("h:"));
        assert_eq!(op.param("h:Reply-To").map(|p| p.name), Some("h:Reply-To"), "a listed name is its own");
        assert_eq!(op.param("v:order-id").map(|p| p.name), Some("v:"));
        assert!(op.param("x:anything").is_none());
        let mime = Service::Mailgun.operation("messages_send_mime").expect("op");
        assert!(mime.param("h:X-Ticket").is_some() && mime.param("v:id").is_some());

        assert!(send_problems(&[("h:X-Ticket", "42"), ("v:order-id", "{\"n\":1}")], None).is_empty());
        let empty = send_problems(&[("h:", "42")], None);
        assert_eq!(empty, [("h:".to_owned(), "needs a header name after h:, e.g. h:X-Ticket=VALUE".to_owned())]);
        let empty = send_problems(&[("v:", "1")], None);
        assert_eq!(empty[0].1, "needs a variable name after v:, e.g. v:order-id=VALUE");
        let spaced = send_problems(&[("h:X Ticket", "42")], None);
        assert_eq!(spaced[0].0, "h:X Ticket");
        assert!(spaced[0].1.starts_with("'X Ticket' is not a header name: ' ' cannot be in it"), "{spaced:?}");
        let colon = send_problems(&[("h:X:Y", "1")], None);
        assert!(colon[0].1.contains("'X:Y' is not a header name"), "{colon:?}");
        let injected = send_problems(&[("h:X-Ticket", "42\r\nBcc: all@x.com")], None);
        assert!(injected[0].1.contains("holds a control or invisible character"), "{injected:?}");
        let var = send_problems(&[("v:order id", "1")], None);
        assert!(var[0].1.contains("'order id' is not a variable name"), "{var:?}");
        let unknown = send_problems(&[("x:y", "1")], None);
        assert!(unknown[0].1.contains("h:NAME, v:NAME"), "{unknown:?}");
    }

    #[test]
    fn family_objects_expand_and_collapse_back_to_the_same_values() {
        let op = Service::Mailgun.operation("messages_send").expect("op");
        let headers = op.param("h:").expect("family");
        let object = serde_json::json!({"X-Ticket": 42, "h:X-Team": "ops", "X-Gone": null});
        let pairs = expand_family(headers, &object).expect("valid");
        assert_eq!(pairs, [("h:X-Ticket".to_owned(), "42".to_owned()), ("h:X-Team".to_owned(), "ops".to_owned())]);
        let values = [("h:X-Ticket", "42"), ("h:Reply-To", "r@x.com"), ("h:X-Team", "ops"), ("to", "a@x.com")];
        let text = family_object(op, headers, values).expect("some");
        let back: Value = serde_json::from_str(&text).expect("JSON");
        assert_eq!(back, serde_json::json!({"X-Team": "ops", "X-Ticket": "42"}), "h:Reply-To is not the family's");
        assert!(family_object(op, headers, [("to", "a@x.com")]).is_none());
        let bad = expand_family(headers, &serde_json::json!({"X Y": "1"})).unwrap_err();
        assert!(bad.starts_with("h:X Y: 'X Y' is not a header name"), "{bad}");
        let not_object = expand_family(headers, &serde_json::json!(["X-Ticket"])).unwrap_err();
        assert_eq!(not_object, "must be a JSON object of header names and values, e.g. {\"X-Ticket\": \"42\"}");
        // In a --body document: names checked, and not given twice.
        let doc = serde_json::json!({"h:": {"X-Ticket": "42"}, "v:bad name": "1"});
        let problems = send_problems(&[("h:X-Ticket", "43")], Some(&doc));
        assert!(problems.iter().any(|(n, m)| n == "h:X-Ticket" && m.contains("given both")), "{problems:?}");
        assert!(problems.iter().any(|(n, m)| n == "--body" && m.contains("'bad name' is not a variable name")));
    }

    #[test]
    fn every_file_of_a_repeated_value_is_checked_and_the_missing_one_named() {
        let dir = std::env::temp_dir().join(format!("opsdeck-validate-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let present = dir.join("invoice.pdf");
        std::fs::write(&present, b"%PDF").expect("write");
        let present = present.to_string_lossy().into_owned();
        let missing = dir.join("terms.pdf").to_string_lossy().into_owned();
        let value = crate::catalog::join_items([format!("@{present}").as_str(), missing.as_str()]).expect("join");
        let problems = send_problems(&[("attachment", &value)], None);
        assert_eq!(problems, [("attachment".to_owned(), format!("no file at {missing}"))]);
        let folder = send_problems(&[("attachment", &dir.to_string_lossy())], None);
        assert!(folder[0].1.ends_with("is a folder; give a file"), "{folder:?}");
        assert!(send_problems(&[("attachment", &format!("@{present}")), ("inline", &present)], None).is_empty());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn files_over_the_message_limit_are_refused_before_reading_them() {
        let dir = std::env::temp_dir().join(format!("opsdeck-validate-big-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let big = dir.join("big.bin");
        let file = std::fs::File::create(&big).expect("create");
        // A sparse file: the size is on disk without the bytes.
        file.set_len(26 * 1024 * 1024).expect("size");
        let problems = send_problems(&[("attachment", &big.to_string_lossy())], None);
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert_eq!(problems[0].0, "attachment");
        assert!(
            problems[0].1.contains("the files hold 26 MB; mailgun messages_send takes at most 25 MB"),
            "{problems:?}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn path_values_with_control_characters_and_oversized_values_are_refused() {
        let channel = Param::path("channelId", "c");
        let error = check_value(&channel, "a\u{1b}[2J\u{202e}b").unwrap_err();
        assert!(error.contains("'a␛[2J\\u{202e}b' holds a control or invisible character"), "{error}");
        let query = Param::query("prefix", "p");
        let error = check_value(&query, &"x".repeat(MAX_URL_VALUE_BYTES + 1)).unwrap_err();
        assert_eq!(error, "8193 bytes is too long: a query value may have at most 8 KB");
        assert!(check_value(&query, &"x".repeat(MAX_URL_VALUE_BYTES)).is_ok());
        let body = Param::body("data", "d");
        assert!(check_value(&body, &"x".repeat(MAX_BODY_VALUE_BYTES + 1)).unwrap_err().contains("at most 1024 KB"));
    }
}
