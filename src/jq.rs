//! jq filters over response bodies, with the jaq crates: one compiler for
//! `opsdeck call --jq` and the inspector's `|` filter, so both accept the same
//! language and report the same errors.

use jaq_core::data::JustLut;
use jaq_core::load::{lex, parse, Arena, File, Loader};
use jaq_core::{unwrap_valr, Compiler, Ctx, Vars};
use jaq_json::Val;
use serde_json::Value;

/// Results a filter may produce before it is stopped: `repeat(1)` must end
/// with an error, not with the memory of the machine.
pub const MAX_OUTPUTS: usize = 1_000_000;

pub struct Filter {
    code: String,
    filter: jaq_core::Filter<JustLut<Val>>,
}

impl std::fmt::Debug for Filter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Filter").field("code", &self.code).finish()
    }
}

impl Filter {
    /// Parses and compiles `code`, naming the first problem the way jq users
    /// expect to read it ("expected term at `]`", "undefined filter `lenght/0`").
    pub fn compile(code: &str) -> Result<Filter, String> {
        if code.trim().is_empty() {
            return Err("the jq filter is empty (use `.` for the whole value)".to_owned());
        }
        let defs = jaq_core::defs().chain(jaq_std::defs()).chain(jaq_json::defs());
        let funs = jaq_core::funs().chain(jaq_std::funs()).chain(jaq_json::funs());
        let loader = Loader::new(defs);
        let arena = Arena::default();
        let modules =
            loader.load(&arena, File { code, path: () }).map_err(|errors| match errors.into_iter().next() {
                Some((_, error)) => load_error(code, error),
                None => "the jq filter could not be read".to_owned(),
            })?;
        let filter = Compiler::default().with_funs(funs).compile(modules).map_err(|errors| {
            let undefined: Vec<String> = errors
                .into_iter()
                .flat_map(|(_, errs)| errs)
                .map(|(name, kind)| format!("undefined {} `{name}`", kind.as_str()))
                .collect();
            undefined.join("; ")
        })?;
        Ok(Filter { code: code.to_owned(), filter })
    }

    pub fn code(&self) -> &str {
        &self.code
    }

    /// Runs the filter over a JSON body as it came off the wire.
    pub fn run_bytes(&self, body: &[u8]) -> Result<Vec<Value>, String> {
        let input = jaq_json::read::parse_single(body).map_err(|e| format!("the body is not JSON: {e}"))?;
        self.run_val(input)
    }

    pub fn run(&self, input: &Value) -> Result<Vec<Value>, String> {
        let text = serde_json::to_vec(input).map_err(|e| e.to_string())?;
        self.run_bytes(&text)
    }

    fn run_val(&self, input: Val) -> Result<Vec<Value>, String> {
        let ctx = Ctx::<JustLut<Val>>::new(&self.filter.lut, Vars::new([]));
        let mut outputs = Vec::new();
        for result in self.filter.id.run((ctx, input)).map(unwrap_valr) {
            let value = result.map_err(|e| format!("jq: {e}"))?;
            if outputs.len() == MAX_OUTPUTS {
                return Err(format!("jq: the filter produced more than {MAX_OUTPUTS} results"));
            }
            outputs.push(to_json(&value)?);
        }
        Ok(outputs)
    }
}

fn to_json(value: &Val) -> Result<Value, String> {
    // jaq writes its values as JSON text; numbers jq cannot put in JSON (nan,
    // infinite) come out as words serde_json refuses, and jq prints them as null.
    let text = value.to_string();
    Ok(serde_json::from_str(&text).unwrap_or(Value::Null))
}

fn load_error(code: &str, error: jaq_core::load::Error<&str>) -> String {
    use jaq_core::load::Error;
    let at = |rest: &str| {
        let rest = rest.trim_start();
        if rest.is_empty() {
            "at the end".to_owned()
        } else {
            let shown: String = rest.chars().take(12).collect();
            format!("at `{shown}` (offset {})", code.len() - rest.len())
        }
    };
    match error {
        Error::Io(errors) => errors.into_iter().map(|(path, e)| format!("{path}: {e}")).collect::<Vec<_>>().join("; "),
        Error::Lex(errors) => errors
            .into_iter()
            .map(|(expect, rest): lex::Error<&str>| format!("expected {} {}", expect.as_str(), at(rest)))
            .collect::<Vec<_>>()
            .join("; "),
        Error::Parse(errors) => errors
            .into_iter()
            .map(|(expect, rest): parse::Error<&str>| format!("expected {} {}", expect.as_str(), at(rest)))
            .collect::<Vec<_>>()
            .join("; "),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_filter_runs_over_bytes_and_values() {
        let ids = Filter::compile(".[].id").expect("compiles");
        let body = br#"[{"id":"a","n":1},{"id":"b","n":2}]"#;
        assert_eq!(ids.run_bytes(body).expect("runs"), vec![json!("a"), json!("b")]);
        let sum = Filter::compile("map(.n) | add").expect("compiles");
        assert_eq!(sum.run(&json!([{"n": 1}, {"n": 2}])).expect("runs"), vec![json!(3)]);
    }

    #[test]
    fn std_functions_and_key_order_survive() {
        let filter = Filter::compile(r#"{z: 1, a: (.s | test("^ord"))} | to_entries | map(.key)"#).expect("compiles");
        assert_eq!(filter.run(&json!({"s": "orders"})).expect("runs"), vec![json!(["z", "a"])]);
    }

    #[test]
    fn errors_name_the_problem() {
        let syntax = Filter::compile(".[] |").expect_err("incomplete");
        assert!(syntax.contains("expected"), "{syntax}");
        let undefined = Filter::compile("lenght").expect_err("typo");
        assert!(undefined.contains("undefined filter `lenght`"), "{undefined}");
        assert!(Filter::compile("  ").expect_err("empty").contains("empty"));
        let runtime = Filter::compile(".a.b").expect("compiles").run(&json!({"a": 1})).expect_err("cannot index");
        assert!(runtime.starts_with("jq: "), "{runtime}");
        let not_json = Filter::compile(".").expect("compiles").run_bytes(b"<html>").expect_err("not json");
        assert!(not_json.contains("not JSON"), "{not_json}");
    }

    #[test]
    fn endless_filters_stop() {
        let endless = Filter::compile("repeat(1)").expect("compiles");
        assert!(endless.run(&json!(null)).expect_err("bounded").contains("more than"));
    }
}
