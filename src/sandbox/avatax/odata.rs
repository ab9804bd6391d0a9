//! AvaTax's list parameters: `$filter` (a small real parser over the filter grammar of
//! api/avatax.md §4), `$orderBy`, `$top`, `$skip`, and the FetchResult envelope with
//! `@recordsetCount` and `@nextLink`.
//!
//! Filters and sorts run over the records as they are serialized, so the field names a caller
//! filters on are exactly the ones they see in the response. Top-level scalar fields only:
//! nested objects and arrays are "not filterable", as on the real service.

use std::cmp::Ordering;

use serde_json::{Map, Value};

use super::errors::AvaError;
use crate::sandbox::paging::{OData, PagingError};
use crate::sandbox::request::Query;

/// The service's hard limit of rows per call.
pub const MAX_TOP: usize = 1000;

/// The longest `$filter` read, in bytes. The real service sits behind a web server whose query
/// strings stop well short of this (IIS's default is 2,048 bytes), so no filter it would take
/// is refused here; what is refused gets the `SyntaxError` a malformed filter gets.
pub const MAX_FILTER_LEN: usize = 8 * 1024;

/// The deepest nesting of parentheses and `not` read: the parser descends once per level, so a
/// bound keeps a hostile filter (1,500 `(` or 12,000 `not `) from exhausting a worker's stack.
/// Far beyond any filter a person or an SDK writes.
pub const MAX_FILTER_DEPTH: usize = 64;

/// A parsed `$filter`.
#[derive(Clone, Debug, PartialEq)]
pub enum Filter {
    /// Criteria joined by `and` (two or more), kept flat so that a long chain costs no depth.
    And(Vec<Filter>),
    /// Criteria joined by `or` (two or more).
    Or(Vec<Filter>),
    Not(Box<Filter>),
    Compare {
        field: String,
        op: CompareOp,
        value: Literal,
    },
    Between {
        field: String,
        low: Literal,
        high: Literal,
    },
    In {
        field: String,
        values: Vec<Literal>,
    },
    Text {
        field: String,
        op: TextOp,
        value: String,
    },
    IsNull {
        field: String,
        negated: bool,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CompareOp {
    Eq,
    Ne,
    Gt,
    Ge,
    Lt,
    Le,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TextOp {
    Contains,
    StartsWith,
    EndsWith,
}

/// A value in a filter: quoted text, a number, or a bare word (enum values such as `Committed`,
/// and `true`, `false`, `null`).
#[derive(Clone, Debug, PartialEq)]
pub enum Literal {
    Text(String),
    Number(String),
    Word(String),
}

impl Literal {
    fn as_text(&self) -> &str {
        match self {
            Literal::Text(s) | Literal::Number(s) | Literal::Word(s) => s,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
enum Token {
    Word(String),
    Text(String),
    Number(String),
    Symbol(&'static str),
    Open,
    Close,
    Comma,
}

fn syntax(message: impl Into<String>) -> AvaError {
    AvaError::new(400, "SyntaxError", 19, "The $filter parameter could not be parsed.")
        .describe(message)
        .refers_to("$filter")
}

fn tokenize(input: &str) -> Result<Vec<Token>, AvaError> {
    let chars: Vec<char> = input.chars().collect();
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match c {
            c if c.is_whitespace() => i += 1,
            '(' => {
                tokens.push(Token::Open);
                i += 1;
            }
            ')' => {
                tokens.push(Token::Close);
                i += 1;
            }
            ',' => {
                tokens.push(Token::Comma);
                i += 1;
            }
            '\'' | '"' => {
                let quote = c;
                let start = i;
                let mut text = String::new();
                i += 1;
                loop {
                    match chars.get(i) {
                        None => {
                            return Err(AvaError::new(
                                400,
                                "UnterminatedValueError",
                                21,
                                "The $filter parameter has an unterminated value.",
                            )
                            .describe(format!(
                                "The quoted value starting at position {} has no closing {quote}.",
                                start + 1
                            ))
                            .refers_to("$filter"))
                        }
                        // A doubled quote is a quote inside the value.
                        Some(&q) if q == quote && chars.get(i + 1) == Some(&quote) => {
                            text.push(quote);
                            i += 2;
                        }
                        Some(&q) if q == quote => {
                            i += 1;
                            break;
                        }
                        Some(&other) => {
                            text.push(other);
                            i += 1;
                        }
                    }
                }
                tokens.push(Token::Text(text));
            }
            '=' => {
                tokens.push(Token::Symbol("eq"));
                i += 1;
            }
            '!' if chars.get(i + 1) == Some(&'=') => {
                tokens.push(Token::Symbol("ne"));
                i += 2;
            }
            '<' | '>' => {
                let next = chars.get(i + 1).copied();
                let (symbol, width) = match (c, next) {
                    ('<', Some('>')) => ("ne", 2),
                    ('<', Some('=')) => ("le", 2),
                    ('>', Some('=')) => ("ge", 2),
                    ('<', _) => ("lt", 1),
                    _ => ("gt", 1),
                };
                tokens.push(Token::Symbol(symbol));
                i += width;
            }
            c if c.is_ascii_digit() || (c == '-' && chars.get(i + 1).is_some_and(char::is_ascii_digit)) => {
                let start = i;
                i += 1;
                while chars.get(i).is_some_and(|d| d.is_ascii_digit() || *d == '.') {
                    i += 1;
                }
                // A date written bare (2024-01-31) reads as one value, not a subtraction.
                while chars.get(i).is_some_and(|d| d.is_ascii_digit() || matches!(d, '-' | ':' | 'T')) {
                    i += 1;
                }
                tokens.push(Token::Number(chars[start..i].iter().collect()));
            }
            c if c.is_alphanumeric() || c == '_' || c == '@' => {
                let start = i;
                while chars.get(i).is_some_and(|d| d.is_alphanumeric() || matches!(d, '_' | '.' | '@')) {
                    i += 1;
                }
                tokens.push(Token::Word(chars[start..i].iter().collect()));
            }
            other => return Err(syntax(format!("Unexpected character '{other}' at position {}.", i + 1))),
        }
    }
    Ok(tokens)
}

struct Parser {
    tokens: Vec<Token>,
    at: usize,
    /// Parentheses and `not`s open around the token at `at`.
    depth: usize,
}

fn is_keyword(token: Option<&Token>, keyword: &str) -> bool {
    matches!(token, Some(Token::Word(w)) if w.eq_ignore_ascii_case(keyword))
}

impl Parser {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.at)
    }

    fn next(&mut self) -> Option<Token> {
        let token = self.tokens.get(self.at).cloned();
        self.at += 1;
        token
    }

    fn eat_keyword(&mut self, keyword: &str) -> bool {
        if is_keyword(self.peek(), keyword) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    fn or(&mut self) -> Result<Filter, AvaError> {
        let mut terms = vec![self.and()?];
        while self.eat_keyword("or") {
            terms.push(self.and()?);
        }
        Ok(if terms.len() == 1 { terms.remove(0) } else { Filter::Or(terms) })
    }

    fn and(&mut self) -> Result<Filter, AvaError> {
        let mut terms = vec![self.unary()?];
        while self.eat_keyword("and") {
            terms.push(self.unary()?);
        }
        Ok(if terms.len() == 1 { terms.remove(0) } else { Filter::And(terms) })
    }

    fn unary(&mut self) -> Result<Filter, AvaError> {
        if is_keyword(self.peek(), "not") || self.peek() == Some(&Token::Open) {
            self.depth += 1;
            if self.depth > MAX_FILTER_DEPTH {
                return Err(syntax(format!(
                    "The filter nests parentheses and 'not' deeper than {MAX_FILTER_DEPTH} levels."
                )));
            }
            let inner = self.nested();
            self.depth -= 1;
            return inner;
        }
        self.criterion()
    }

    /// A `not` or a parenthesised filter, one level deeper.
    fn nested(&mut self) -> Result<Filter, AvaError> {
        if self.eat_keyword("not") {
            return Ok(Filter::Not(Box::new(self.unary()?)));
        }
        self.at += 1;
        let inner = self.or()?;
        match self.next() {
            Some(Token::Close) => Ok(inner),
            _ => Err(syntax("A parenthesis is not closed.")),
        }
    }

    fn field(&mut self) -> Result<String, AvaError> {
        match self.next() {
            Some(Token::Word(w)) if !["and", "or", "not"].iter().any(|k| w.eq_ignore_ascii_case(k)) => Ok(w),
            Some(other) => Err(syntax(format!("Expected a field name, found {}.", describe(&other)))),
            None => Err(syntax("Expected a field name, found the end of the filter.")),
        }
    }

    fn literal(&mut self) -> Result<Literal, AvaError> {
        match self.next() {
            Some(Token::Text(t)) => Ok(Literal::Text(t)),
            Some(Token::Number(n)) => Ok(Literal::Number(n)),
            Some(Token::Word(w)) => Ok(Literal::Word(w)),
            Some(other) => Err(syntax(format!("Expected a value, found {}.", describe(&other)))),
            None => Err(syntax("Expected a value, found the end of the filter.")),
        }
    }

    fn criterion(&mut self) -> Result<Filter, AvaError> {
        // OData's function form: contains(field, 'x'), startswith(field, 'x').
        if let (Some(Token::Word(w)), Some(Token::Open)) = (self.peek(), self.tokens.get(self.at + 1)) {
            if let Some(op) = text_op(w) {
                self.at += 2;
                let field = self.field()?;
                if self.next() != Some(Token::Comma) {
                    return Err(syntax(format!("Expected a comma after the field name {field}.")));
                }
                let value = self.literal()?.as_text().to_owned();
                if self.next() != Some(Token::Close) {
                    return Err(syntax("A parenthesis is not closed."));
                }
                return Ok(Filter::Text { field, op, value });
            }
        }
        let field = self.field()?;
        let operator = match self.next() {
            Some(Token::Symbol(s)) => s.to_owned(),
            Some(Token::Word(w)) => w.to_ascii_lowercase(),
            Some(other) => {
                return Err(syntax(format!("Expected an operator after {field}, found {}.", describe(&other))))
            }
            None => return Err(syntax(format!("Expected an operator after {field}, found the end of the filter."))),
        };
        let filter = match operator.as_str() {
            "eq" => Filter::Compare { value: self.literal()?, field, op: CompareOp::Eq },
            "ne" => Filter::Compare { value: self.literal()?, field, op: CompareOp::Ne },
            "gt" => Filter::Compare { value: self.literal()?, field, op: CompareOp::Gt },
            "ge" => Filter::Compare { value: self.literal()?, field, op: CompareOp::Ge },
            "lt" => Filter::Compare { value: self.literal()?, field, op: CompareOp::Lt },
            "le" => Filter::Compare { value: self.literal()?, field, op: CompareOp::Le },
            "between" => {
                let low = self.literal()?;
                if !self.eat_keyword("and") {
                    return Err(syntax(format!("Expected 'and' in '{field} between ... and ...'.")));
                }
                let high = self.literal()?;
                Filter::Between { field, low, high }
            }
            "in" => {
                if self.next() != Some(Token::Open) {
                    return Err(syntax(format!("Expected '(' after '{field} in'.")));
                }
                let mut values = vec![self.literal()?];
                loop {
                    match self.next() {
                        Some(Token::Comma) => values.push(self.literal()?),
                        Some(Token::Close) => break,
                        _ => return Err(syntax(format!("The list after '{field} in' is not closed."))),
                    }
                }
                Filter::In { field, values }
            }
            "is" => {
                let negated = self.eat_keyword("not");
                if !self.eat_keyword("null") {
                    return Err(syntax(format!("Expected 'null' after '{field} is'.")));
                }
                Filter::IsNull { field, negated }
            }
            word => match text_op(word) {
                Some(op) => Filter::Text { value: self.literal()?.as_text().to_owned(), field, op },
                None => {
                    return Err(AvaError::new(400, "MalformedFilterException", 182, "The $filter parameter is malformed.")
                        .describe(format!(
                            "'{word}' is not an operator; use eq, ne, gt, ge, lt, le, between, in, contains, startswith, endswith or is null."
                        ))
                        .refers_to("$filter"))
                }
            },
        };
        Ok(filter)
    }
}

fn text_op(word: &str) -> Option<TextOp> {
    match word.to_ascii_lowercase().as_str() {
        "contains" => Some(TextOp::Contains),
        "startswith" => Some(TextOp::StartsWith),
        "endswith" => Some(TextOp::EndsWith),
        _ => None,
    }
}

fn describe(token: &Token) -> String {
    match token {
        Token::Word(w) => format!("'{w}'"),
        Token::Text(t) => format!("the value '{t}'"),
        Token::Number(n) => format!("the number {n}"),
        Token::Symbol(s) => format!("the operator {s}"),
        Token::Open => "'('".to_owned(),
        Token::Close => "')'".to_owned(),
        Token::Comma => "','".to_owned(),
    }
}

/// Parses a `$filter`; an empty or blank filter is `None`.
pub fn parse_filter(input: &str) -> Result<Option<Filter>, AvaError> {
    if input.len() > MAX_FILTER_LEN {
        return Err(syntax(format!("The filter is {} bytes long; at most {MAX_FILTER_LEN} are read.", input.len())));
    }
    let tokens = tokenize(input)?;
    if tokens.is_empty() {
        return Ok(None);
    }
    let mut parser = Parser { tokens, at: 0, depth: 0 };
    let filter = parser.or()?;
    match parser.peek() {
        None => Ok(Some(filter)),
        Some(Token::Word(w)) if matches!(parser.tokens.get(parser.at + 1), Some(Token::Word(_) | Token::Open)) => {
            Err(AvaError::new(400, "UnknownConjunctionError", 189, "The $filter parameter has an unknown conjunction.")
                .describe(format!("'{w}' is not a conjunction; criteria are joined with 'and' or 'or'."))
                .refers_to("$filter"))
        }
        Some(Token::Close) => Err(syntax("A closing parenthesis has no opening one.")),
        Some(other) => Err(AvaError::new(400, "ExpectedConjunctionError", 183, "Expected 'and' or 'or' in $filter.")
            .describe(format!("Found {} where a conjunction was expected.", describe(other)))
            .refers_to("$filter")),
    }
}

/// The value of a record's field, found regardless of letter case (as the service matches
/// names). `Err` when the record has no such field or it is not a scalar.
fn field_value<'a>(record: &'a Map<String, Value>, field: &str, sample: bool) -> Result<&'a Value, AvaError> {
    let value = record.iter().find(|(k, _)| k.eq_ignore_ascii_case(field)).map(|(_, v)| v);
    match value {
        Some(Value::Object(_) | Value::Array(_)) => {
            Err(AvaError::new(400, "FieldNotQueryableError", 1408, format!("The field {field} is not queryable."))
                .describe("Nested objects and lists cannot be filtered or sorted on.")
                .refers_to("$filter"))
        }
        Some(v) => Ok(v),
        // Optional fields absent from this record read as null, as long as the field exists on
        // some record of the kind (checked by `validate_fields`).
        None if !sample => Ok(&Value::Null),
        None => Err(unknown_field(field)),
    }
}

fn unknown_field(field: &str) -> AvaError {
    AvaError::new(400, "InvalidQueryField", 17, format!("'{field}' is not a valid field for filtering."))
        .describe("Filter on a field shown in the list's records, e.g. id or code.")
        .refers_to("$filter")
}

fn type_error(field: &str, literal: &Literal, kind: &str) -> AvaError {
    AvaError::new(
        400,
        "InvalidQueryValue",
        18,
        format!("The value '{}' cannot be compared with {field}.", literal.as_text()),
    )
    .describe(format!("{field} is {kind}."))
    .refers_to("$filter")
}

fn looks_like_date(text: &str) -> bool {
    let b = text.as_bytes();
    b.len() >= 10 && b[4] == b'-' && b[7] == b'-' && b[..4].iter().all(u8::is_ascii_digit)
}

fn valid_date(text: &str) -> bool {
    let day = text.get(..10).unwrap_or(text);
    time::Date::parse(day, time::macros::format_description!("[year]-[month]-[day]")).is_ok()
        && (text.len() == 10 || text.as_bytes().get(10) == Some(&b'T'))
}

/// Orders two texts as the service does, regardless of letter case (without a lowered copy of
/// either: a filter compares every record's text).
fn cmp_ignoring_case(a: &str, b: &str) -> Ordering {
    if a.is_ascii() && b.is_ascii() {
        // The same order, without the Unicode tables: a sort compares hundreds of thousands.
        return a.bytes().map(|c| c.to_ascii_lowercase()).cmp(b.bytes().map(|c| c.to_ascii_lowercase()));
    }
    a.chars().flat_map(char::to_lowercase).cmp(b.chars().flat_map(char::to_lowercase))
}

/// Compares a record's value with a literal; `Err` when they are of different types.
fn compare(field: &str, value: &Value, literal: &Literal) -> Result<Option<Ordering>, AvaError> {
    let text = literal.as_text();
    if matches!(literal, Literal::Word(w) if w.eq_ignore_ascii_case("null")) {
        return Ok(if value.is_null() { Some(Ordering::Equal) } else { None });
    }
    match value {
        Value::Null => Ok(None),
        Value::Number(n) => {
            let wanted: f64 = text.parse().map_err(|_| type_error(field, literal, "a number"))?;
            Ok(n.as_f64().and_then(|have| have.partial_cmp(&wanted)))
        }
        Value::Bool(b) => match text.to_ascii_lowercase().as_str() {
            "true" => Ok(Some(b.cmp(&true))),
            "false" => Ok(Some(b.cmp(&false))),
            _ => Err(type_error(field, literal, "true or false")),
        },
        Value::String(s) => {
            if looks_like_date(s) {
                if !valid_date(text) {
                    return Err(AvaError::date_format("$filter", text));
                }
                // Dates compare at the precision the caller wrote: `date le '2024-01-31'`
                // includes that whole day of a timestamp field.
                let have = s.get(..text.len().min(s.len())).unwrap_or(s);
                return Ok(Some(have.cmp(text)));
            }
            Ok(Some(cmp_ignoring_case(s, text)))
        }
        Value::Object(_) | Value::Array(_) => Err(type_error(field, literal, "not a scalar")),
    }
}

/// Whether the record whose fields `record` reads (by name, as the filter writes it; null
/// when the record lacks it) passes the filter.
fn matches(filter: &Filter, record: &mut dyn FnMut(&str) -> Result<Value, AvaError>) -> Result<bool, AvaError> {
    Ok(match filter {
        Filter::And(terms) => {
            for term in terms {
                if !matches(term, record)? {
                    return Ok(false);
                }
            }
            true
        }
        Filter::Or(terms) => {
            for term in terms {
                if matches(term, record)? {
                    return Ok(true);
                }
            }
            false
        }
        Filter::Not(inner) => !matches(inner, record)?,
        Filter::Compare { field, op, value } => {
            let ordering = compare(field, &record(field)?, value)?;
            match (op, ordering) {
                (CompareOp::Ne, None) => true,
                (_, None) => false,
                (CompareOp::Eq, Some(o)) => o == Ordering::Equal,
                (CompareOp::Ne, Some(o)) => o != Ordering::Equal,
                (CompareOp::Gt, Some(o)) => o == Ordering::Greater,
                (CompareOp::Ge, Some(o)) => o != Ordering::Less,
                (CompareOp::Lt, Some(o)) => o == Ordering::Less,
                (CompareOp::Le, Some(o)) => o != Ordering::Greater,
            }
        }
        Filter::Between { field, low, high } => {
            let value = &record(field)?;
            // The service's between is half-open: at least the first, below the second.
            compare(field, value, low)?.is_some_and(|o| o != Ordering::Less)
                && compare(field, value, high)?.is_some_and(|o| o == Ordering::Less)
        }
        Filter::In { field, values } => {
            let value = &record(field)?;
            let mut found = false;
            for literal in values {
                found |= compare(field, value, literal)? == Some(Ordering::Equal);
            }
            found
        }
        Filter::Text { field, op, value } => match record(field)? {
            Value::String(s) => {
                let (s, value) = (s.to_lowercase(), value.to_lowercase());
                match op {
                    TextOp::Contains => s.contains(&value),
                    TextOp::StartsWith => s.starts_with(&value),
                    TextOp::EndsWith => s.ends_with(&value),
                }
            }
            Value::Null => false,
            _ => return Err(type_error(field, &Literal::Text(value.clone()), "not text")),
        },
        Filter::IsNull { field, negated } => {
            let null = record(field)?.is_null();
            null != *negated
        }
    })
}

fn fields_of(filter: &Filter, out: &mut Vec<String>) {
    match filter {
        Filter::And(terms) | Filter::Or(terms) => {
            for term in terms {
                fields_of(term, out);
            }
        }
        Filter::Not(inner) => fields_of(inner, out),
        Filter::Compare { field, .. }
        | Filter::Between { field, .. }
        | Filter::In { field, .. }
        | Filter::Text { field, .. }
        | Filter::IsNull { field, .. } => out.push(field.clone()),
    }
}

/// Every field a filter or sort names must exist on the kind of record: `known` lists the
/// fields of the kind (those of a full record), so an empty list still rejects a misspelling.
fn validate_fields(fields: &[String], known: &Map<String, Value>) -> Result<(), AvaError> {
    for field in fields {
        field_value(known, field, true)?;
    }
    Ok(())
}

/// One sort key of `$orderBy`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SortKey {
    pub field: String,
    pub descending: bool,
}

/// Parses `$orderBy`: `field [ASC|DESC]`, comma-separated.
pub fn parse_order_by(input: &str) -> Result<Vec<SortKey>, AvaError> {
    let mut keys: Vec<SortKey> = Vec::new();
    for part in input.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let words: Vec<&str> = part.split_whitespace().collect();
        let descending = match words.as_slice() {
            [_] => false,
            [_, dir] if dir.eq_ignore_ascii_case("asc") => false,
            [_, dir] if dir.eq_ignore_ascii_case("desc") => true,
            _ => {
                return Err(AvaError::new(400, "SyntaxError", 19, "The $orderBy parameter could not be parsed.")
                    .describe(format!("'{part}' is not 'field', 'field ASC' or 'field DESC'."))
                    .refers_to("$orderBy"))
            }
        };
        let field = words[0].to_owned();
        if keys.iter().any(|k| k.field.eq_ignore_ascii_case(&field)) {
            return Err(AvaError::new(
                400,
                "DuplicateFieldNameInOrderBy",
                194,
                format!("The field {field} appears twice in $orderBy."),
            )
            .refers_to("$orderBy"));
        }
        keys.push(SortKey { field, descending });
    }
    Ok(keys)
}

fn order_values(a: &Value, b: &Value) -> Ordering {
    match (a, b) {
        (Value::Null, Value::Null) => Ordering::Equal,
        (Value::Null, _) => Ordering::Less,
        (_, Value::Null) => Ordering::Greater,
        (Value::Number(x), Value::Number(y)) => {
            x.as_f64().unwrap_or(0.0).partial_cmp(&y.as_f64().unwrap_or(0.0)).unwrap_or(Ordering::Equal)
        }
        (Value::String(x), Value::String(y)) => cmp_ignoring_case(x, y),
        (Value::Bool(x), Value::Bool(y)) => x.cmp(y),
        _ => Ordering::Equal,
    }
}

/// The filter and sort of one list request.
#[derive(Clone, Debug, Default)]
pub struct ListQuery {
    pub filter: Option<String>,
    pub order_by: Option<String>,
}

fn paging_error(e: &PagingError) -> AvaError {
    AvaError::new(
        400,
        "QueryParameterOutOfRange",
        199,
        format!("The query parameter {} is out of range: '{}'.", e.param, e.value),
    )
    .describe(format!("Expected {}.", e.expected))
    .refers_to(e.param)
}

/// Reads one top-level field of a record as its list writes it, without rendering the rest.
pub type FieldReader<'a, R> = Box<dyn Fn(&R) -> Value + 'a>;

/// Filters, sorts and pages `records` (each serialized by `render`, or read a field at a time
/// by what `reader` gives for a field's name; `template` a full record of the kind, for
/// checking field names) into a FetchResult for the list at `path`. `query` is
/// the request's own, which `@nextLink` repeats with `$skip` moved on.
pub fn fetch_result<'r, R: Clone>(
    path: &str,
    records: Vec<R>,
    render: impl Fn(R) -> Value,
    reader: &dyn Fn(&str) -> Option<FieldReader<'r, R>>,
    template: &Value,
    list: &ListQuery,
    query: &Query,
) -> Result<Value, AvaError> {
    // No record of the kind exists anywhere to check names against: nothing can match anyway.
    let template = template.as_object();
    let filter = list.filter.as_deref().map(parse_filter).transpose()?.flatten();
    let order = list.order_by.as_deref().map(parse_order_by).transpose()?.unwrap_or_default();
    let paging = OData::parse(query, MAX_TOP).map_err(|e| paging_error(&e))?;
    if let (Some(filter), Some(template)) = (&filter, template) {
        let mut fields = Vec::new();
        fields_of(filter, &mut fields);
        validate_fields(&fields, template)?;
    }
    if let Some(template) = template {
        for key in &order {
            field_value(template, &key.field, true).map_err(|_| {
                AvaError::new(
                    400,
                    "FieldNotOrderableError",
                    1411,
                    format!("The field {} cannot be sorted on.", key.field),
                )
                .describe("Sort on a top-level field shown in the list's records.")
                .refers_to("$orderBy")
            })?;
        }
    }
    if filter.is_none() && order.is_empty() {
        // The list's own order and every record kept: only the page is rendered, so a page
        // costs what it holds however long the list.
        let total = records.len();
        let range = paging.range(total);
        let page: Vec<Value> = records.into_iter().skip(range.start).take(range.len()).map(render).collect();
        return Ok(paging.envelope(page, total, paging.next_link(path, query, total)));
    }
    // What a filter and a sort read of each record: only the fields they name, through the
    // store's readers where it has them; a record is rendered (once) only for a field no reader
    // gives. What is kept is the sort keys and where each record is, never a copy of a record:
    // a sort of 40,000 documents holds 40,000 keys.
    let mut named: Vec<String> = Vec::new();
    if let Some(filter) = &filter {
        fields_of(filter, &mut named);
    }
    named.extend(order.iter().map(|key| key.field.clone()));
    let mut fields: Vec<(String, Option<FieldReader<'_, R>>)> = Vec::new();
    for name in named {
        if !fields.iter().any(|(known, _)| known.eq_ignore_ascii_case(&name)) {
            let read = reader(&name);
            fields.push((name, read));
        }
    }
    let renders = fields.iter().any(|(_, read)| read.is_none());
    let mut keys: Vec<Value> = Vec::new();
    let mut kept: Vec<(usize, usize)> = Vec::new();
    for (index, record) in records.iter().enumerate() {
        let rendered = if renders { render(record.clone()) } else { Value::Null };
        let mut value_of = |field: &str| -> Result<Value, AvaError> {
            match fields.iter().find(|(name, _)| name.eq_ignore_ascii_case(field)) {
                Some((_, Some(read))) => Ok(read(record)),
                _ => match rendered.as_object() {
                    Some(map) => field_value(map, field, false).cloned(),
                    None => Ok(Value::Null),
                },
            }
        };
        let keep = match &filter {
            Some(f) => matches(f, &mut value_of)?,
            None => true,
        };
        if keep {
            for key in &order {
                keys.push(value_of(&key.field)?);
            }
            kept.push((kept.len(), index));
        }
    }
    let total = kept.len();
    let range = paging.range(total);
    if !order.is_empty() {
        let width = order.len();
        // Equal keys keep the list's own order (the record's place breaks ties), so a page
        // chosen before the sort reads as a page of the whole sort.
        let by_keys = |a: &(usize, usize), b: &(usize, usize)| {
            let (a_keys, b_keys) = (&keys[a.0 * width..][..width], &keys[b.0 * width..][..width]);
            for (at, key) in order.iter().enumerate() {
                let ordering = order_values(&a_keys[at], &b_keys[at]);
                let ordering = if key.descending { ordering.reverse() } else { ordering };
                if ordering != Ordering::Equal {
                    return ordering;
                }
            }
            a.1.cmp(&b.1)
        };
        // Only the records up to the page's end need their order: `$top=10` of 40,000 is a
        // selection, not a sort.
        if range.end < kept.len() {
            kept.select_nth_unstable_by(range.end, by_keys);
            kept.truncate(range.end);
        }
        kept.sort_unstable_by(by_keys);
    }
    let mut records: Vec<Option<R>> = records.into_iter().map(Some).collect();
    let page: Vec<Value> = kept[range.start.min(kept.len())..range.end.min(kept.len())]
        .iter()
        .filter_map(|(_, index)| records.get_mut(*index).and_then(Option::take).map(&render))
        .collect();
    Ok(paging.envelope(page, total, paging.next_link(path, query, total)))
}

/// The value a filter requires `field` to equal, when it does for every record it keeps: the
/// filter is `field eq 'value'`, or an `and` with that among its criteria. An index of the
/// field then gives the only records the filter can keep.
pub fn required_text(filter: &Filter, field: &str) -> Option<String> {
    match filter {
        Filter::Compare { field: named, op: CompareOp::Eq, value: Literal::Text(text) }
            if named.eq_ignore_ascii_case(field) =>
        {
            Some(text.clone())
        }
        Filter::And(criteria) => criteria.iter().find_map(|c| required_text(c, field)),
        _ => None,
    }
}

/// Whether a filter names `field` anywhere (transactions_list searches 30 days unless the
/// filter has a date criterion).
pub fn mentions(filter: &Filter, field: &str) -> bool {
    let mut fields = Vec::new();
    fields_of(filter, &mut fields);
    fields.iter().any(|f| f.eq_ignore_ascii_case(field))
}
