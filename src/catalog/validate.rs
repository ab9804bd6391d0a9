//! The rules a value must follow before it is sent, shared by forms, `opsdeck call` and the
//! request builder, so a bad value gets the same message wherever it is typed.

use super::{Kind, Operation, Param};

/// Checks one typed value against its parameter. An empty value means "not given".
pub fn check_value(param: &Param, value: &str) -> Result<(), String> {
    if value.is_empty() {
        return if param.required { Err("required".into()) } else { Ok(()) };
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
            for path in value.split(',').map(str::trim) {
                if !std::path::Path::new(path).is_file() {
                    return Err(format!("no file at {path}"));
                }
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
        let values: Vec<&str> =
            if param.kind == Kind::List { value.split(',').map(str::trim).collect() } else { vec![value.trim()] };
        for v in values {
            if !param.allowed.contains(&v) {
                return Err(format!("'{v}' is not one of {}", param.allowed.join(", ")));
            }
        }
    }
    Ok(())
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

/// Checks a whole set of values: unknown names, missing required values and each value.
/// Returns every problem as `(parameter, message)`, so a form can show each beside its field.
pub fn check_values<'a>(
    op: &Operation,
    values: impl IntoIterator<Item = (&'a str, &'a str)>,
    body_given: bool,
) -> Vec<(String, String)> {
    let mut problems = Vec::new();
    let mut given = Vec::new();
    for (name, value) in values {
        match op.param(name) {
            Some(param) => {
                if let Err(e) = check_value(param, value) {
                    problems.push((name.to_owned(), e));
                }
                if !value.is_empty() {
                    given.push(name);
                }
            }
            None => {
                let known: Vec<&str> = op.params.iter().map(|p| p.name).collect();
                let known = if known.is_empty() { "none".to_owned() } else { known.join(", ") };
                problems.push((name.to_owned(), format!("unknown parameter of {}; known: {known}", op.full_name())));
            }
        }
    }
    for param in op.params.iter().filter(|p| p.required) {
        // A `--body` document may carry the body fields itself.
        let in_body = matches!(param.location, super::Location::Body | super::Location::WholeBody);
        let satisfied =
            given.contains(&param.name) || (body_given && in_body) || problems.iter().any(|(n, _)| n == param.name);
        if !satisfied {
            problems.push((param.name.to_owned(), "required".into()));
        }
    }
    problems
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
        let problems = check_values(op, [("limit", "5000"), ("colour", "red")], false);
        let names: Vec<&str> = problems.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["limit", "colour", "channelId"]);
        assert!(problems[1].1.contains("known: channelId, start"));
    }
}
