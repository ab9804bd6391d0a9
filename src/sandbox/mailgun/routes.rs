//! Mailgun routes (api/mailgun.md §4 `routes_*`, §7.7) without HTTP: account-wide rules that
//! decide what happens to incoming mail. Each has a priority (lower runs first), a filter
//! expression and actions; both are parsed and checked when stored, so a route that is kept can
//! always be evaluated, and a refused create or update stores nothing.
//!
//! Expressions: `match_recipient("regex")`, `match_header("name", "regex")`, `catch_all()`,
//! combined with `and` / `or` (`and` binds tighter) and parentheses. Patterns follow Mailgun's
//! Python-style matching: anchored at the start of the value, not at its end, so
//! `match_header("subject", ".*support")` finds "support" anywhere; recipients, being addresses,
//! match without regard to case. Actions: `forward("url or address")`, `store()`,
//! `store(notify="url")`, `stop()`.

use axum::http::Method;
use regex_lite::{Regex, RegexBuilder};
use serde_json::{json, Value};

use super::dates::rfc2822;
use super::lists::count_param;
use super::refusal::Refusal;
use crate::sandbox::ids::Ids;
use crate::sandbox::request::Query;

/// The largest `limit` of `GET /v3/routes`; more is refused with Mailgun's own words.
pub const MAX_LIMIT: usize = 1000;
const DEFAULT_LIMIT: usize = 100;
/// Longest expression or action text kept: far above real use, low enough that a hostile one
/// costs little to parse and compile.
const MAX_TEXT_LEN: usize = 4096;
/// Compiled size allowed per pattern, for the same reason.
const REGEX_SIZE_LIMIT: usize = 1 << 20;
/// Parentheses deeper than this are refused, so parsing never recurses without bound.
const MAX_NESTING: usize = 32;
const DAY_MS: i64 = 86_400_000;
/// Separates this generator's ids from the other collections sharing the seed.
const ID_STREAM: u64 = 0x6d67_726f_7574; // "mgrout"

/// What a matched route does with a message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RouteAction {
    /// POST the message to a URL, or send it on to an address.
    Forward(String),
    /// Keep the message (retrievable by storage key), optionally POSTing a notice to a URL.
    Store { notify: Option<String> },
    /// No lower-priority route is evaluated after this one.
    Stop,
}

/// A route an incoming message matched, in the order the routes run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MatchedRoute {
    pub id: String,
    pub expression: String,
    pub actions: Vec<RouteAction>,
}

/// A parsed filter expression.
#[derive(Clone, Debug)]
enum Filter {
    Recipient(Regex),
    Header(String, Regex),
    CatchAll,
    And(Box<Filter>, Box<Filter>),
    Or(Box<Filter>, Box<Filter>),
}

impl Filter {
    fn matches(&self, recipient: &str, headers: &[(String, String)]) -> bool {
        match self {
            Filter::Recipient(re) => re.is_match(recipient),
            Filter::Header(name, re) => {
                headers.iter().any(|(k, v)| k.trim().eq_ignore_ascii_case(name) && re.is_match(v.trim()))
            }
            Filter::CatchAll => true,
            Filter::And(a, b) => a.matches(recipient, headers) && b.matches(recipient, headers),
            Filter::Or(a, b) => a.matches(recipient, headers) || b.matches(recipient, headers),
        }
    }
}

#[derive(Clone, Debug)]
struct Route {
    id: String,
    priority: i64,
    description: String,
    expression: String,
    filter: Filter,
    /// The action texts as sent (what the API shows) and parsed (what matching returns).
    action_texts: Vec<String>,
    actions: Vec<RouteAction>,
    created_ms: i64,
    /// Creation order, the tie-break between equal priorities.
    sequence: u64,
}

impl Route {
    fn to_json(&self) -> Value {
        json!({
            "id": self.id,
            "priority": self.priority,
            "description": self.description,
            "expression": self.expression,
            "actions": self.action_texts,
            "created_at": rfc2822(self.created_ms, "GMT"),
        })
    }
}

/// Routes kept per region; creating one more drops the earliest created.
pub const MAX_ROUTES: usize = 1_000;

/// The routes of one region (account-wide: routes are not per domain).
#[derive(Clone, Debug)]
pub struct Routes {
    ids: Ids,
    routes: Vec<Route>,
    next_sequence: u64,
    /// Routes kept ([`MAX_ROUTES`]; lowered in tests).
    pub cap: usize,
}

impl Routes {
    /// No routes; ids from crate::sandbox::ids::Ids, so the same seed gives the same ids.
    pub fn new(seed: u64) -> Routes {
        Routes { ids: Ids::new(seed, ID_STREAM), routes: Vec::new(), next_sequence: 0, cap: MAX_ROUTES }
    }

    /// The demo routes: support mail forwarded to ops (and nothing else done with it), and
    /// everything else stored.
    pub fn seeded(seed: u64, now_ms: i64) -> Routes {
        let mut routes = Routes::new(seed);
        let demo: [(i64, &str, &str, &[&str], i64); 2] = [
            (
                0,
                "Support mail to the ops inbox",
                r#"match_recipient("support@mg.example.com")"#,
                &[r#"forward("ops@example.com")"#, "stop()"],
                now_ms - 10 * DAY_MS,
            ),
            (10, "Keep everything else", "catch_all()", &["store()"], now_ms - 9 * DAY_MS),
        ];
        for (priority, description, expression, actions, created_ms) in demo {
            let actions: Vec<String> = actions.iter().map(|a| (*a).to_owned()).collect();
            // The demo texts are fixed and valid; a failure here would be a bug caught by tests.
            if let Ok(route) = routes.build(priority, description, expression, &actions, created_ms) {
                routes.routes.push(route);
            }
        }
        routes
    }

    /// Everything under `/v3/routes`: `rest` = segments after `routes` ([] or [id]).
    pub fn handle(
        &mut self,
        method: &Method,
        rest: &[String],
        query: &Query,
        form: &Query,
        now_ms: i64,
    ) -> Result<Value, Refusal> {
        let segments: Vec<&str> = rest.iter().map(String::as_str).collect();
        match (method.as_str(), segments.as_slice()) {
            ("GET", []) => self.list(query),
            ("POST", []) => self.create(form, now_ms),
            ("GET", [id]) => Ok(json!({ "route": self.find(id)?.to_json() })),
            ("PUT", [id]) => self.update(id, form),
            ("DELETE", [id]) => self.delete(id),
            _ => Err(Refusal::not_found(format!(
                "Not Found: {method} /v3/routes{}{} is not simulated by the opsdeck sandbox",
                if segments.is_empty() { "" } else { "/" },
                segments.join("/")
            ))),
        }
    }

    /// The routes an incoming message matches, lowest priority first (ties: oldest first),
    /// stopping after the first matched route whose actions include stop().
    pub fn matching(&self, recipient: &str, headers: &[(String, String)]) -> Vec<MatchedRoute> {
        let mut matched = Vec::new();
        for route in self.ordered() {
            if route.filter.matches(recipient.trim(), headers) {
                matched.push(MatchedRoute {
                    id: route.id.clone(),
                    expression: route.expression.clone(),
                    actions: route.actions.clone(),
                });
                if route.actions.contains(&RouteAction::Stop) {
                    break;
                }
            }
        }
        matched
    }

    /// Routes in the order they run.
    fn ordered(&self) -> Vec<&Route> {
        let mut ordered: Vec<&Route> = self.routes.iter().collect();
        ordered.sort_by_key(|r| (r.priority, r.sequence));
        ordered
    }

    fn find(&self, id: &str) -> Result<&Route, Refusal> {
        self.routes.iter().find(|r| r.id == id).ok_or_else(route_not_found)
    }

    fn list(&self, query: &Query) -> Result<Value, Refusal> {
        let limit = count_param(query, "limit", DEFAULT_LIMIT, MAX_LIMIT)?;
        let skip = count_param(query, "skip", 0, usize::MAX)?;
        let items: Vec<Value> = self.ordered().into_iter().skip(skip).take(limit).map(Route::to_json).collect();
        Ok(json!({ "total_count": self.routes.len(), "items": items }))
    }

    fn create(&mut self, form: &Query, now_ms: i64) -> Result<Value, Refusal> {
        let expression = form.get("expression").ok_or_else(|| missing("expression"))?;
        // A route without actions is kept with `"actions": []` (recorded: 200).
        let actions = actions_of(form);
        let priority = priority_of(form)?.unwrap_or(0);
        let description = form.get("description").unwrap_or_default();
        let route = self.build(priority, description, expression, &actions, now_ms)?;
        let body = json!({ "message": "Route has been created", "route": route.to_json() });
        self.routes.push(route);
        while self.routes.len() > self.cap.max(1) {
            let earliest = self.routes.iter().enumerate().min_by_key(|(_, r)| r.sequence).map(|(i, _)| i);
            if let Some(i) = earliest {
                self.routes.remove(i);
            }
        }
        Ok(body)
    }

    fn update(&mut self, id: &str, form: &Query) -> Result<Value, Refusal> {
        let mut route = self.find(id)?.clone();
        if let Some(priority) = priority_of(form)? {
            route.priority = priority;
        }
        if form.has("description") {
            route.description = form.all("description").next().unwrap_or_default().to_owned();
        }
        if let Some(expression) = form.get("expression") {
            route.filter = parse_expression(expression)?;
            expression.trim().clone_into(&mut route.expression);
        }
        let actions = actions_of(form);
        if !actions.is_empty() {
            // Sent actions replace the list, as Mailgun does.
            route.actions = actions.iter().map(|a| parse_action(a)).collect::<Result<_, _>>()?;
            route.action_texts = actions;
        }
        let json = route.to_json();
        // Old clients read the fields flat, current ones under `route`: answer both.
        let mut body = json.as_object().cloned().unwrap_or_default();
        body.insert("message".into(), "Route has been updated".into());
        body.insert("route".into(), json);
        if let Some(slot) = self.routes.iter_mut().find(|r| r.id == id) {
            *slot = route;
        }
        Ok(Value::Object(body))
    }

    fn delete(&mut self, id: &str) -> Result<Value, Refusal> {
        let index = self.routes.iter().position(|r| r.id == id).ok_or_else(route_not_found)?;
        let route = self.routes.remove(index);
        Ok(json!({ "message": "Route has been deleted", "id": route.id }))
    }

    /// A checked route with a fresh id; nothing is stored yet.
    fn build(
        &mut self,
        priority: i64,
        description: &str,
        expression: &str,
        actions: &[String],
        created_ms: i64,
    ) -> Result<Route, Refusal> {
        let filter = parse_expression(expression)?;
        let parsed: Vec<RouteAction> = actions.iter().map(|a| parse_action(a)).collect::<Result<_, _>>()?;
        let mut id = self.ids.hex(24);
        while self.routes.iter().any(|r| r.id == id) {
            id = self.ids.hex(24);
        }
        self.next_sequence += 1;
        Ok(Route {
            id,
            priority,
            description: description.to_owned(),
            expression: expression.trim().to_owned(),
            filter,
            action_texts: actions.to_vec(),
            actions: parsed,
            created_ms,
            sequence: self.next_sequence,
        })
    }
}

fn actions_of(form: &Query) -> Vec<String> {
    form.all("action").map(str::trim).filter(|a| !a.is_empty()).map(str::to_owned).collect()
}

fn priority_of(form: &Query) -> Result<Option<i64>, Refusal> {
    match form.get("priority") {
        None => Ok(None),
        Some(raw) => match raw.trim().parse::<i64>() {
            Ok(p) if p >= 0 => Ok(Some(p)),
            _ => {
                Err(Refusal::bad_request(format!("Invalid 'priority' value '{raw}': expected a non-negative integer")))
            }
        },
    }
}

fn missing(field: &str) -> Refusal {
    Refusal::bad_request(format!("Missing parameter '{field}'"))
}

fn route_not_found() -> Refusal {
    Refusal::not_found("Route not found")
}

/// One token of an expression or action.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Token {
    Ident(String),
    Str(String),
    Open,
    Close,
    Comma,
    Equals,
}

/// Splits an expression or action into tokens; strings take `"…"` or `'…'` with `\` escapes.
fn tokenize(text: &str) -> Result<Vec<Token>, String> {
    if text.len() > MAX_TEXT_LEN {
        return Err(format!("it is longer than {MAX_TEXT_LEN} characters"));
    }
    let mut tokens = Vec::new();
    let mut chars = text.chars().peekable();
    while let Some(&c) = chars.peek() {
        match c {
            c if c.is_whitespace() => {
                chars.next();
            }
            '(' | ')' | ',' | '=' => {
                chars.next();
                tokens.push(match c {
                    '(' => Token::Open,
                    ')' => Token::Close,
                    ',' => Token::Comma,
                    _ => Token::Equals,
                });
            }
            '"' | '\'' => {
                chars.next();
                let mut value = String::new();
                let mut closed = false;
                while let Some(c2) = chars.next() {
                    if c2 == '\\' {
                        // `\"` and `\\` are escapes for the quoting; any other `\x` is kept
                        // whole, since it belongs to the regular expression.
                        match chars.next() {
                            Some(next) if next == c || next == '\\' => value.push(next),
                            Some(next) => {
                                value.push('\\');
                                value.push(next);
                            }
                            None => break,
                        }
                    } else if c2 == c {
                        closed = true;
                        break;
                    } else {
                        value.push(c2);
                    }
                }
                if !closed {
                    return Err("a quoted string is not closed".into());
                }
                tokens.push(Token::Str(value));
            }
            c if c.is_ascii_alphabetic() || c == '_' => {
                let mut ident = String::new();
                while let Some(&c2) = chars.peek() {
                    if c2.is_ascii_alphanumeric() || c2 == '_' {
                        ident.push(c2);
                        chars.next();
                    } else {
                        break;
                    }
                }
                tokens.push(Token::Ident(ident));
            }
            other => return Err(format!("unexpected character '{other}'")),
        }
    }
    Ok(tokens)
}

fn invalid_expression(expression: &str, why: &str) -> Refusal {
    Refusal::bad_request(format!(
        "Invalid expression '{}': {why}. Use match_recipient(\"pattern\"), match_header(\"header\", \"pattern\") \
         or catch_all(), joined with 'and' / 'or'",
        expression.trim()
    ))
}

/// Parses and compiles a filter expression, or says what is wrong with it.
fn parse_expression(expression: &str) -> Result<Filter, Refusal> {
    let tokens = tokenize(expression).map_err(|why| invalid_expression(expression, &why))?;
    if tokens.is_empty() {
        return Err(invalid_expression(expression, "it is empty"));
    }
    let mut parser = Parser { tokens: &tokens, at: 0 };
    let filter = parser.or_expr(0).map_err(|why| invalid_expression(expression, &why))?;
    if parser.at != tokens.len() {
        return Err(invalid_expression(expression, "unexpected text after the end of the expression"));
    }
    Ok(filter)
}

/// A recursive-descent parser over the tokens: `or` of `and`s of calls or parenthesized groups.
struct Parser<'a> {
    tokens: &'a [Token],
    at: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.at)
    }

    fn next(&mut self) -> Option<&Token> {
        let token = self.tokens.get(self.at);
        self.at += 1;
        token
    }

    fn keyword(&self, word: &str) -> bool {
        matches!(self.peek(), Some(Token::Ident(w)) if w.eq_ignore_ascii_case(word))
    }

    fn or_expr(&mut self, depth: usize) -> Result<Filter, String> {
        let mut left = self.and_expr(depth)?;
        while self.keyword("or") {
            self.at += 1;
            let right = self.and_expr(depth)?;
            left = Filter::Or(Box::new(left), Box::new(right));
        }
        Ok(left)
    }

    fn and_expr(&mut self, depth: usize) -> Result<Filter, String> {
        let mut left = self.primary(depth)?;
        while self.keyword("and") {
            self.at += 1;
            let right = self.primary(depth)?;
            left = Filter::And(Box::new(left), Box::new(right));
        }
        Ok(left)
    }

    fn primary(&mut self, depth: usize) -> Result<Filter, String> {
        match self.next().cloned() {
            Some(Token::Open) => {
                if depth >= MAX_NESTING {
                    return Err(format!("parentheses nested deeper than {MAX_NESTING}"));
                }
                let inner = self.or_expr(depth + 1)?;
                match self.next() {
                    Some(Token::Close) => Ok(inner),
                    _ => Err("a '(' is not closed".into()),
                }
            }
            Some(Token::Ident(name)) => {
                let args = self.arguments(&name)?;
                call(&name, &args)
            }
            Some(other) => Err(format!("expected a filter, found {}", describe(&other))),
            None => Err("it ends where a filter was expected".into()),
        }
    }

    /// `( "a", "b" )` after a function name: its string arguments.
    fn arguments(&mut self, name: &str) -> Result<Vec<String>, String> {
        if self.next() != Some(&Token::Open) {
            return Err(format!("'{name}' must be followed by '('"));
        }
        let mut args = Vec::new();
        if self.peek() == Some(&Token::Close) {
            self.at += 1;
            return Ok(args);
        }
        loop {
            match self.next().cloned() {
                Some(Token::Str(value)) => args.push(value),
                Some(other) => {
                    return Err(format!("arguments of '{name}' must be quoted strings, found {}", describe(&other)))
                }
                None => return Err(format!("'{name}(' is not closed")),
            }
            match self.next() {
                Some(Token::Comma) => {}
                Some(Token::Close) => return Ok(args),
                _ => return Err(format!("'{name}(' is not closed")),
            }
        }
    }
}

fn describe(token: &Token) -> String {
    match token {
        Token::Ident(word) => format!("'{word}'"),
        Token::Str(value) => format!("\"{value}\""),
        Token::Open => "'('".into(),
        Token::Close => "')'".into(),
        Token::Comma => "','".into(),
        Token::Equals => "'='".into(),
    }
}

/// One filter function with its arguments, its pattern compiled.
fn call(name: &str, args: &[String]) -> Result<Filter, String> {
    match (name, args) {
        ("match_recipient", [pattern]) => Ok(Filter::Recipient(compile(pattern, true)?)),
        ("match_header", [header, pattern]) => {
            if header.trim().is_empty() || !header.trim().chars().all(|c| c.is_ascii_graphic() && c != ':') {
                return Err(format!("'{header}' is not a header name"));
            }
            Ok(Filter::Header(header.trim().to_owned(), compile(pattern, false)?))
        }
        ("catch_all", []) => Ok(Filter::CatchAll),
        ("match_recipient", _) => Err("match_recipient takes one pattern".into()),
        ("match_header", _) => Err("match_header takes a header name and a pattern".into()),
        ("catch_all", _) => Err("catch_all takes no arguments".into()),
        (other, _) => Err(format!("unknown filter '{other}'")),
    }
}

/// A pattern anchored at the start of the value (Python's `re.match`, which Mailgun uses).
fn compile(pattern: &str, ignore_case: bool) -> Result<Regex, String> {
    RegexBuilder::new(&format!("^(?:{pattern})"))
        .case_insensitive(ignore_case)
        .size_limit(REGEX_SIZE_LIMIT)
        .nest_limit(MAX_NESTING as u32 * 4)
        .build()
        .map_err(|e| format!("the pattern \"{pattern}\" is not a valid regular expression ({e})"))
}

fn invalid_action(action: &str, why: &str) -> Refusal {
    Refusal::bad_request(format!(
        "Invalid action '{}': {why}. Use forward(\"url or address\"), store(), store(notify=\"url\") or stop()",
        action.trim()
    ))
}

/// Parses one action text.
fn parse_action(action: &str) -> Result<RouteAction, Refusal> {
    let bad = |why: &str| invalid_action(action, why);
    let tokens = tokenize(action).map_err(|why| bad(&why))?;
    let Some((Token::Ident(name), rest)) = tokens.split_first() else {
        return Err(bad("it does not start with an action name"));
    };
    if rest.first() != Some(&Token::Open) || rest.last() != Some(&Token::Close) {
        return Err(bad(&format!("'{name}' must be followed by (...)")));
    }
    let inner = &rest[1..rest.len() - 1];
    match (name.as_str(), inner) {
        // Mailgun keeps any string given to forward(), a pattern such as ".*@example.com"
        // included (recorded: 200). Whether it refuses forward() with no argument, or a notify
        // that is no URL, is not known: both are kept. The sandbox only POSTs to loopback http(s)
        // destinations and records the others as forwards.
        ("forward", []) => Ok(RouteAction::Forward(String::new())),
        ("forward", [Token::Str(destination)]) => Ok(RouteAction::Forward(destination.trim().to_owned())),
        ("forward", _) => Err(bad("forward takes one quoted URL or address")),
        ("store", []) => Ok(RouteAction::Store { notify: None }),
        ("store", [Token::Str(url)]) => Ok(notify_url(url)),
        ("store", [Token::Ident(key), Token::Equals, Token::Str(url)]) if key == "notify" => Ok(notify_url(url)),
        ("store", _) => Err(bad("store takes nothing or notify=\"url\"")),
        ("stop", []) => Ok(RouteAction::Stop),
        ("stop", _) => Err(bad("stop takes no arguments")),
        (other, _) => Err(bad(&format!("unknown action '{other}'"))),
    }
}

/// `store(notify=...)`'s action, the text kept as given.
fn notify_url(url: &str) -> RouteAction {
    RouteAction::Store { notify: Some(url.trim().to_owned()) }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_700_000_000_000;

    fn q(raw: &str) -> Query {
        Query::parse(raw).expect("UTF-8")
    }

    fn form(pairs: &[(&str, &str)]) -> Query {
        Query { pairs: pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect() }
    }

    fn call_api(
        routes: &mut Routes,
        method: Method,
        path: &[&str],
        query: &str,
        body: &Query,
    ) -> Result<Value, Refusal> {
        let rest: Vec<String> = path.iter().map(|s| (*s).to_owned()).collect();
        routes.handle(&method, &rest, &q(query), body, NOW)
    }

    fn snapshot(routes: &Routes) -> Vec<Value> {
        routes.routes.iter().map(Route::to_json).collect()
    }

    fn refused(routes: &mut Routes, method: Method, path: &[&str], query: &str, body: &Query) -> (u16, String) {
        let before = snapshot(routes);
        let refusal = call_api(routes, method, path, query, body).expect_err("refused");
        assert_eq!(snapshot(routes), before, "a refused call changed nothing");
        (refusal.status, refusal.body["message"].as_str().unwrap_or_default().to_owned())
    }

    fn headers(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
    }

    fn ids(matched: &[MatchedRoute], routes: &Routes) -> Vec<i64> {
        matched.iter().filter_map(|m| routes.routes.iter().find(|r| r.id == m.id)).map(|r| r.priority).collect()
    }

    #[test]
    fn seed_routes_and_their_matching() {
        let routes = Routes::seeded(42, NOW);
        assert_eq!(routes.routes.len(), 2);
        let support = routes.matching("Support@mg.example.com", &[]);
        assert_eq!(support.len(), 1, "stop() ends the evaluation");
        assert_eq!(support[0].actions, [RouteAction::Forward("ops@example.com".into()), RouteAction::Stop]);
        let other = routes.matching("sales@mg.example.com", &[]);
        assert_eq!(other.len(), 1);
        assert_eq!(
            (other[0].expression.as_str(), other[0].actions.clone()),
            ("catch_all()", vec![RouteAction::Store { notify: None }])
        );
        assert_eq!(Routes::seeded(42, NOW).routes[0].id, routes.routes[0].id, "same seed, same ids");
        assert_eq!(routes.routes[0].id.len(), 24);
    }

    #[test]
    fn create_get_list_delete() {
        let mut routes = Routes::new(1);
        let created = call_api(
            &mut routes,
            Method::POST,
            &[],
            "",
            &form(&[
                ("priority", "5"),
                ("description", "Sample route"),
                ("expression", r#"match_recipient(".*@samples.mailgun.org")"#),
                ("action", r#"forward("http://myhost.com/messages/")"#),
                ("action", "stop()"),
            ]),
        )
        .expect("created");
        assert_eq!(created["message"], "Route has been created");
        let route = &created["route"];
        let id = route["id"].as_str().expect("id").to_owned();
        assert_eq!(route["actions"], json!([r#"forward("http://myhost.com/messages/")"#, "stop()"]));
        assert_eq!(route["created_at"], rfc2822(NOW, "GMT"));
        assert_eq!(route["priority"], 5);
        let got = call_api(&mut routes, Method::GET, &[&id], "", &Query::default()).expect("found");
        assert_eq!(&got["route"], route);
        let listed = call_api(&mut routes, Method::GET, &[], "", &Query::default()).expect("listed");
        assert_eq!((listed["total_count"].as_u64(), listed["items"][0]["id"].as_str()), (Some(1), Some(id.as_str())));
        let deleted = call_api(&mut routes, Method::DELETE, &[&id], "", &Query::default()).expect("deleted");
        assert_eq!(deleted, json!({"message": "Route has been deleted", "id": id}));
        assert_eq!(refused(&mut routes, Method::GET, &[&id], "", &Query::default()), (404, "Route not found".into()));
        assert_eq!(refused(&mut routes, Method::DELETE, &[&id], "", &Query::default()).0, 404);
        assert_eq!(refused(&mut routes, Method::PUT, &["nope"], "", &form(&[("priority", "1")])).0, 404);
        assert_eq!(
            refused(&mut routes, Method::GET, &["a", "b"], "", &Query::default()),
            (404, "Not Found: GET /v3/routes/a/b is not simulated by the opsdeck sandbox".into())
        );
        assert_eq!(
            refused(&mut routes, Method::PATCH, &[], "", &Query::default()),
            (404, "Not Found: PATCH /v3/routes is not simulated by the opsdeck sandbox".into())
        );
    }

    #[test]
    fn list_limit_skip_and_order() {
        let mut routes = Routes::new(1);
        for priority in [30, 10, 20, 10] {
            call_api(
                &mut routes,
                Method::POST,
                &[],
                "",
                &form(&[("priority", &priority.to_string()), ("expression", "catch_all()"), ("action", "store()")]),
            )
            .expect("created");
        }
        let page = call_api(&mut routes, Method::GET, &[], "limit=2&skip=1", &Query::default()).expect("listed");
        assert_eq!(page["total_count"], 4);
        let priorities: Vec<i64> =
            page["items"].as_array().expect("items").iter().filter_map(|i| i["priority"].as_i64()).collect();
        assert_eq!(priorities, [10, 20]);
        assert_eq!(
            refused(&mut routes, Method::GET, &[], "limit=1001", &Query::default()),
            (400, "The 'limit' parameter can't be larger than 1000".into())
        );
        assert!(call_api(&mut routes, Method::GET, &[], "limit=1000", &Query::default()).is_ok());
        assert_eq!(refused(&mut routes, Method::GET, &[], "skip=x", &Query::default()).0, 400);
    }

    #[test]
    fn update_answers_flat_and_nested() {
        let mut routes = Routes::seeded(7, NOW);
        let id = routes.routes[1].id.clone();
        let updated = call_api(
            &mut routes,
            Method::PUT,
            &[&id],
            "",
            &form(&[
                ("priority", "1"),
                ("expression", r#"match_header("subject", ".*invoice")"#),
                ("action", r#"store(notify="http://127.0.0.1:9/n")"#),
            ]),
        )
        .expect("updated");
        assert_eq!(updated["message"], "Route has been updated");
        assert_eq!(updated["priority"], 1);
        assert_eq!(updated["route"]["priority"], 1);
        assert_eq!(updated["id"], updated["route"]["id"]);
        assert_eq!(updated["actions"], json!([r#"store(notify="http://127.0.0.1:9/n")"#]));
        // Unsent fields stay; sent description may clear.
        assert_eq!(updated["description"], "Keep everything else");
        let matched = routes.matching("x@mg.example.com", &headers(&[("Subject", "Your invoice 42")]));
        assert_eq!(matched[0].actions, [RouteAction::Store { notify: Some("http://127.0.0.1:9/n".into()) }]);
        assert!(routes.matching("x@mg.example.com", &headers(&[("Subject", "hello")])).is_empty());
        // Bad updates change nothing.
        assert_eq!(
            refused(
                &mut routes,
                Method::PUT,
                &[&id],
                "",
                &form(&[("priority", "2"), ("expression", "match_recipient(")])
            )
            .0,
            400
        );
        assert_eq!(
            refused(&mut routes, Method::PUT, &[&id], "", &form(&[("priority", "2"), ("action", "explode()")])).0,
            400
        );
        assert_eq!(refused(&mut routes, Method::PUT, &[&id], "", &form(&[("priority", "-1")])).0, 400);
    }

    #[test]
    fn create_refusals_store_nothing() {
        let mut routes = Routes::seeded(3, NOW);
        let cases: &[&[(&str, &str)]] = &[
            &[("action", "stop()")],
            &[("expression", "catch_all()"), ("action", "stop()"), ("priority", "high")],
            &[("expression", "match_recipient(\"[unclosed\")"), ("action", "stop()")],
            &[("expression", "match_recipient(foo)"), ("action", "stop()")],
            &[("expression", "match_recipient(\"a\", \"b\")"), ("action", "stop()")],
            &[("expression", "match_header(\"subject\")"), ("action", "stop()")],
            &[("expression", "match_header(\"bad name\", \"x\")"), ("action", "stop()")],
            &[("expression", "catch_all(\"x\")"), ("action", "stop()")],
            &[("expression", "match_everything()"), ("action", "stop()")],
            &[("expression", "catch_all() and"), ("action", "stop()")],
            &[("expression", "catch_all() catch_all()"), ("action", "stop()")],
            &[("expression", "(catch_all()"), ("action", "stop()")],
            &[("expression", "match_recipient(\"x)"), ("action", "stop()")],
            &[("expression", "catch_all()"), ("action", "store(url=\"http://x\")")],
            &[("expression", "catch_all()"), ("action", "stop(1)")],
            &[("expression", "catch_all()"), ("action", "stop")],
            &[("expression", "catch_all()"), ("action", "drop()")],
        ];
        for case in cases {
            let (status, message) = refused(&mut routes, Method::POST, &[], "", &form(case));
            assert_eq!(status, 400, "{case:?}");
            assert!(!message.is_empty());
        }
        let deep = format!("{}catch_all(){}", "(".repeat(100), ")".repeat(100));
        assert_eq!(
            refused(&mut routes, Method::POST, &[], "", &form(&[("expression", &deep), ("action", "stop()")])).0,
            400
        );
        let (_, message) = refused(
            &mut routes,
            Method::POST,
            &[],
            "",
            &form(&[("expression", "match_everything()"), ("action", "stop()")]),
        );
        assert!(message.contains("unknown filter 'match_everything'"), "{message}");
    }

    #[test]
    fn expressions_combine_with_and_or() {
        let mut routes = Routes::new(9);
        for (priority, expression) in [
            (1, r#"match_recipient("alerts@.*") and match_header("X-Severity", "high|critical")"#),
            (
                2,
                r#"match_recipient('billing@mg\.example\.com') or (match_header("subject", ".*refund") and catch_all())"#,
            ),
        ] {
            call_api(
                &mut routes,
                Method::POST,
                &[],
                "",
                &form(&[
                    ("priority", &priority.to_string()),
                    ("expression", expression),
                    ("action", "forward(\"ops@example.com\")"),
                ]),
            )
            .expect("valid");
        }
        let r = &routes;
        assert_eq!(ids(&r.matching("alerts@x.com", &headers(&[("x-severity", "critical")])), r), [1]);
        assert!(r.matching("alerts@x.com", &headers(&[("X-Severity", "low")])).is_empty());
        assert_eq!(ids(&r.matching("billing@mg.example.com", &[]), r), [2]);
        assert!(r.matching("billingXmg.example.com", &[]).is_empty(), "escaped dots");
        assert_eq!(ids(&r.matching("a@b.com", &headers(&[("Subject", "Please refund me")])), r), [2]);
        // Start-anchored: the pattern must match from the first character.
        assert!(r.matching("xalerts@x.com", &headers(&[("X-Severity", "high")])).is_empty());
    }

    #[test]
    fn matching_runs_by_priority_then_age_and_stops() {
        let mut routes = Routes::new(5);
        let add = |routes: &mut Routes, priority: &str, actions: &[&str]| {
            let mut pairs = vec![("priority", priority), ("expression", "catch_all()")];
            pairs.extend(actions.iter().map(|a| ("action", *a)));
            call_api(routes, Method::POST, &[], "", &form(&pairs)).expect("valid")["route"]["id"]
                .as_str()
                .unwrap_or_default()
                .to_owned()
        };
        let late = add(&mut routes, "5", &["store()"]);
        let early = add(&mut routes, "0", &["forward(\"https://hooks.example.com/in\")"]);
        let same_priority_newer = add(&mut routes, "5", &["stop()"]);
        let never = add(&mut routes, "9", &["store()"]);
        let matched: Vec<String> = routes.matching("anyone@example.com", &[]).into_iter().map(|m| m.id).collect();
        assert_eq!(matched, [early, late, same_priority_newer]);
        assert!(!routes.matching("anyone@example.com", &[]).iter().any(|m| m.id == never));
    }

    #[test]
    fn actions_parse() {
        assert_eq!(
            parse_action(" forward( 'https://x.example.com/in' ) "),
            Ok(RouteAction::Forward("https://x.example.com/in".into()))
        );
        assert_eq!(parse_action("forward(\"a@example.com\")"), Ok(RouteAction::Forward("a@example.com".into())));
        assert_eq!(parse_action("store()"), Ok(RouteAction::Store { notify: None }));
        assert_eq!(
            parse_action("store(notify=\"http://h/n\")"),
            Ok(RouteAction::Store { notify: Some("http://h/n".into()) })
        );
        assert_eq!(parse_action("stop()"), Ok(RouteAction::Stop));
        assert!(parse_action("").is_err());
        // Any string is kept: a pattern, a bare word, an incomplete URL, nothing.
        for kept in [".*@mg.example.com", "not a destination", "http://", ""] {
            assert_eq!(parse_action(&format!("forward(\"{kept}\")")), Ok(RouteAction::Forward(kept.into())));
        }
        assert_eq!(parse_action("forward()"), Ok(RouteAction::Forward(String::new())));
        assert_eq!(
            parse_action("store(notify=\"somewhere\")"),
            Ok(RouteAction::Store { notify: Some("somewhere".into()) })
        );
        assert!(parse_action("forward(\"a\", \"b\")").is_err());
        assert!(parse_action(&format!("forward(\"http://{}\")", "a".repeat(MAX_TEXT_LEN))).is_err());
    }
}
