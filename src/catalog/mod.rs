//! Every operation of every service, described once as data.
//!
//! Forms, `opsdeck ops`, `opsdeck call`, help text and the sandbox coverage tests all read these
//! tables, so adding an operation here is the only step needed to make it callable everywhere.

mod ably;
mod avatax;
mod coinbase;
mod deepgram;
pub use deepgram::LISTEN_LIVE;
mod easypost;
mod mailgun;
mod taxjar;
pub mod validate;

pub use avatax::ADJUSTMENT_REASONS as AVATAX_ADJUSTMENT_REASONS;
pub use avatax::DOCUMENT_TYPES as AVATAX_DOCUMENT_TYPES;
pub use deepgram::known_scope as deepgram_known_scope;
pub use deepgram::{STT_MODELS as DEEPGRAM_STT_MODELS, TTS_VOICES as DEEPGRAM_TTS_VOICES};

use std::fmt;

/// The seven services, in tab order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Service {
    Ably,
    Deepgram,
    Avatax,
    Taxjar,
    Coinbase,
    Mailgun,
    Easypost,
}

impl Service {
    /// Tab order; `ALL[i]` is tab `i + 1`.
    pub const ALL: [Service; 7] = [
        Service::Ably,
        Service::Deepgram,
        Service::Avatax,
        Service::Taxjar,
        Service::Coinbase,
        Service::Mailgun,
        Service::Easypost,
    ];

    /// The name used in commands, config keys and environment variables.
    pub fn name(self) -> &'static str {
        match self {
            Service::Ably => "ably",
            Service::Deepgram => "deepgram",
            Service::Avatax => "avatax",
            Service::Taxjar => "taxjar",
            Service::Coinbase => "coinbase",
            Service::Mailgun => "mailgun",
            Service::Easypost => "easypost",
        }
    }

    /// The vendor's product name, for titles.
    pub fn title(self) -> &'static str {
        match self {
            Service::Ably => "Ably",
            Service::Deepgram => "Deepgram",
            Service::Avatax => "AvaTax",
            Service::Taxjar => "TaxJar",
            Service::Coinbase => "Coinbase",
            Service::Mailgun => "Mailgun",
            Service::Easypost => "EasyPost",
        }
    }

    /// Parses a command-line service name (case-insensitive).
    pub fn parse(name: &str) -> Option<Service> {
        Service::ALL.into_iter().find(|s| s.name().eq_ignore_ascii_case(name))
    }

    /// Every operation of this service, in catalog order.
    pub fn operations(self) -> &'static [Operation] {
        match self {
            Service::Ably => ably::OPERATIONS,
            Service::Deepgram => deepgram::OPERATIONS,
            Service::Avatax => avatax::OPERATIONS,
            Service::Taxjar => taxjar::OPERATIONS,
            Service::Coinbase => coinbase::OPERATIONS,
            Service::Mailgun => mailgun::OPERATIONS,
            Service::Easypost => easypost::OPERATIONS,
        }
    }

    /// The resources shown in the tab's resource list, in display order.
    pub fn resources(self) -> Vec<&'static str> {
        let mut seen: Vec<&'static str> = Vec::new();
        for op in self.operations() {
            if !seen.contains(&op.resource) {
                seen.push(op.resource);
            }
        }
        seen
    }

    /// Finds one operation by its spec name.
    pub fn operation(self, name: &str) -> Option<&'static Operation> {
        self.operations().iter().find(|op| op.name == name)
    }
}

impl fmt::Display for Service {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// HTTP method of an operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Method {
    Get,
    Post,
    Put,
    Patch,
    Delete,
}

impl Method {
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Post => "POST",
            Method::Put => "PUT",
            Method::Patch => "PATCH",
            Method::Delete => "DELETE",
        }
    }

    /// Whether repeating the request is harmless, which is what makes a retry safe.
    pub fn is_idempotent(self) -> bool {
        !matches!(self, Method::Post | Method::Patch)
    }
}

impl fmt::Display for Method {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where a parameter travels in the request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Location {
    /// Substituted into `{name}` in the path template (percent-encoded).
    Path,
    /// Appended to the query string. A value with commas given for a `List` param repeats the key.
    Query,
    /// A request header.
    Header,
    /// One field of the request body; the operation's [`BodyEncoding`] says how fields are encoded.
    Body,
    /// The whole request body: JSON text for a JSON body, a file path for a raw or multipart upload.
    WholeBody,
}

impl Location {
    pub fn label(self) -> &'static str {
        match self {
            Location::Path => "path",
            Location::Query => "query",
            Location::Header => "header",
            Location::Body => "body",
            Location::WholeBody => "body",
        }
    }
}

/// The type of a parameter value, as typed by the user and as sent on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Str,
    Int,
    Num,
    Bool,
    /// Any JSON value; sent as parsed JSON in a JSON body, as its text elsewhere.
    Json,
    /// Free text, or JSON when it parses as an object or array (a message payload).
    Data,
    /// Comma-separated values; a JSON array in a JSON body, repeated keys in a query or form.
    List,
    /// A path to a local file whose bytes are sent (uploads).
    File,
}

impl Kind {
    pub fn label(self) -> &'static str {
        match self {
            Kind::Str => "string",
            Kind::Int => "integer",
            Kind::Num => "number",
            Kind::Bool => "boolean",
            Kind::Json => "json",
            Kind::Data => "text or json",
            Kind::List => "list",
            Kind::File => "file",
        }
    }
}

/// One parameter of an operation.
#[derive(Clone, Copy, Debug)]
pub struct Param {
    pub name: &'static str,
    pub location: Location,
    pub kind: Kind,
    pub required: bool,
    /// The value the service assumes when the parameter is left out (shown as a hint, not sent).
    pub default: Option<&'static str>,
    /// Inclusive lower bound for numbers; for strings, minimum length.
    pub min: Option<f64>,
    /// Inclusive upper bound for numbers; for strings, maximum length.
    pub max: Option<f64>,
    /// When non-empty, the only values the service accepts.
    pub allowed: &'static [&'static str],
    /// Values to choose from when the service also takes others (Deepgram's public models,
    /// beside a custom model's id): the form offers them, nothing refuses another.
    pub suggested: &'static [&'static str],
    /// One line of help shown beside the field.
    pub help: &'static str,
    /// For a `List` in the query: sent as one comma-separated value (`$include=Lines,Summary`, as
    /// AvaTax reads it) rather than as the key repeated.
    pub comma_joined: bool,
    /// Set when `name` is a prefix standing for a family of names (`h:` for any `h:X-Header`),
    /// with the rule their suffixes follow. See [`Operation::param`].
    pub family: Option<Family>,
    /// A `List` or `File` the service takes only once (one MIME message), so giving it several
    /// times is refused instead of sending what the service would reject or ignore.
    pub single: bool,
    /// For a JSON field: the shape a form starts from, as JSON with the values to fill in left
    /// empty. Only a shape: a form refuses to send it untouched.
    pub template: Option<&'static str>,
}

/// The rule the names of a prefixed family follow after the prefix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    /// A MIME header name: an RFC 9110 token (letters, digits and ``!#$%&'*+-.^_`|~``).
    HeaderName,
    /// A variable name: anything but spaces, `=` and control characters.
    VariableName,
}

impl Family {
    /// What the suffix is, for help and messages.
    pub fn label(self) -> &'static str {
        match self {
            Family::HeaderName => "header name",
            Family::VariableName => "variable name",
        }
    }

    /// The suffix as written in help: `h:NAME`.
    pub fn placeholder(self) -> &'static str {
        "NAME"
    }

    /// An example suffix, for messages that say what to type.
    pub fn example(self) -> &'static str {
        match self {
            Family::HeaderName => "X-Ticket",
            Family::VariableName => "order-id",
        }
    }
}

/// Separates the items of one value of a repeatable parameter (`to=a to=b` is kept as
/// `a\u{1f}b`). It is ASCII's unit separator: a control character no address, tag or file
/// path a person types holds, and one `opsdeck call` refuses inside an item, so the split
/// can never cut an item in two. [`items`] is the only place that splits on it.
pub const ITEM_SEPARATOR: char = '\u{1f}';

/// The items of `value` for `param`: for a repeatable parameter the pieces between
/// [`ITEM_SEPARATOR`]s, and for a `List` each piece further cut at commas (`to=a,b`), each trimmed,
/// empty ones dropped. Any other value is its one item. Validation, request building, forms,
/// history and `--dry-run` all go through this one function, so they agree on what was given.
pub fn items<'a>(param: &Param, value: &'a str) -> Vec<&'a str> {
    let pieces: Vec<&str> = if param.repeatable() { value.split(ITEM_SEPARATOR).collect() } else { vec![value] };
    let mut items = Vec::new();
    for piece in pieces {
        if param.kind == Kind::List {
            items.extend(piece.split(',').map(str::trim).filter(|i| !i.is_empty()));
        } else if param.repeatable() {
            items.extend(Some(piece.trim()).filter(|i| !i.is_empty()));
        } else {
            items.push(piece);
        }
    }
    items
}

/// One value holding `items`, the inverse of [`items`] for a repeatable parameter. `Err` names an
/// item that holds the separator itself, which could not be told apart afterwards.
pub fn join_items<'a>(items: impl IntoIterator<Item = &'a str>) -> Result<String, String> {
    let items: Vec<&str> = items.into_iter().collect();
    if let Some(bad) = items.iter().find(|i| i.contains(ITEM_SEPARATOR)) {
        return Err(format!("'{}' holds a control character (U+001F) a value cannot carry", crate::inert::inert(bad)));
    }
    Ok(items.join(&ITEM_SEPARATOR.to_string()))
}

/// `values` of `op` as the `NAME=VALUE` pairs that give them on the command line: a repeatable
/// parameter once per item (`to=a to=b`), anything else as it is. For messages, confirmations
/// and history listings, which show what was given rather than how it is kept.
pub fn given_pairs<'a>(
    op: &Operation,
    values: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> Vec<(&'a str, &'a str)> {
    let mut pairs = Vec::new();
    for (name, value) in values {
        match op.param(name).filter(|p| p.repeatable()) {
            Some(param) => pairs.extend(items(param, value).into_iter().map(|item| (name, item))),
            None => pairs.push((name, value)),
        }
    }
    pairs
}

/// The path of a file item: `@invoice.pdf` and `invoice.pdf` both name `invoice.pdf` (the `@`
/// is curl's and HTTPie's way to say "a file"; a file whose name starts with `@` is `./@name`).
pub fn file_path(item: &str) -> &str {
    item.strip_prefix('@').unwrap_or(item)
}

impl Param {
    /// The base every catalog entry starts from: an optional string.
    pub const fn new(name: &'static str, location: Location, help: &'static str) -> Param {
        Param {
            name,
            location,
            kind: Kind::Str,
            required: false,
            default: None,
            min: None,
            max: None,
            allowed: &[],
            suggested: &[],
            help,
            comma_joined: false,
            family: None,
            single: false,
            template: None,
        }
    }
    /// The JSON shape a form's field starts from (see [`Param::template`]).
    pub const fn template(mut self, shape: &'static str) -> Param {
        self.template = Some(shape);
        self
    }
    /// A family of body fields named `prefix` + any suffix following `rule` (`h:` + a header name).
    pub const fn family(prefix: &'static str, rule: Family, help: &'static str) -> Param {
        let mut param = Param::new(prefix, Location::Body, help);
        param.family = Some(rule);
        param
    }
    /// A `List` or `File` the service takes once: giving it twice is an error.
    pub const fn single(mut self) -> Param {
        self.single = true;
        self
    }
    /// Whether the parameter may be given several times, each value its own repeated key or
    /// multipart part: lists and files in the query or the body, unless the service takes one.
    pub fn repeatable(&self) -> bool {
        matches!(self.kind, Kind::List | Kind::File)
            && matches!(self.location, Location::Query | Location::Body)
            && !self.single
            && self.family.is_none()
    }
    /// Whether `name` is this parameter's: its own name, or for a family any name with its prefix.
    pub fn names(&self, name: &str) -> bool {
        match self.family {
            Some(_) => name.starts_with(self.name),
            None => name == self.name,
        }
    }
    /// The name as help shows it: `h:NAME` for a family, else the name.
    pub fn display_name(&self) -> String {
        match self.family {
            Some(rule) => format!("{}{}", self.name, rule.placeholder()),
            None => self.name.to_owned(),
        }
    }
    pub const fn path(name: &'static str, help: &'static str) -> Param {
        Param::new(name, Location::Path, help).required()
    }
    pub const fn query(name: &'static str, help: &'static str) -> Param {
        Param::new(name, Location::Query, help)
    }
    pub const fn body(name: &'static str, help: &'static str) -> Param {
        Param::new(name, Location::Body, help)
    }
    pub const fn header(name: &'static str, help: &'static str) -> Param {
        Param::new(name, Location::Header, help)
    }
    pub const fn whole_body(name: &'static str, help: &'static str) -> Param {
        Param::new(name, Location::WholeBody, help)
    }
    pub const fn required(mut self) -> Param {
        self.required = true;
        self
    }
    pub const fn kind(mut self, kind: Kind) -> Param {
        self.kind = kind;
        self
    }
    pub const fn int(self) -> Param {
        self.kind(Kind::Int)
    }
    pub const fn num(self) -> Param {
        self.kind(Kind::Num)
    }
    pub const fn boolean(self) -> Param {
        self.kind(Kind::Bool)
    }
    pub const fn json(self) -> Param {
        self.kind(Kind::Json)
    }
    pub const fn list(self) -> Param {
        self.kind(Kind::List)
    }
    /// A list sent as one comma-separated query value.
    pub const fn comma_joined(mut self) -> Param {
        self.kind = Kind::List;
        self.comma_joined = true;
        self
    }
    pub const fn file(self) -> Param {
        self.kind(Kind::File)
    }
    pub const fn default(mut self, value: &'static str) -> Param {
        self.default = Some(value);
        self
    }
    pub const fn range(mut self, min: f64, max: f64) -> Param {
        self.min = Some(min);
        self.max = Some(max);
        self
    }
    pub const fn min(mut self, min: f64) -> Param {
        self.min = Some(min);
        self
    }
    pub const fn max(mut self, max: f64) -> Param {
        self.max = Some(max);
        self
    }
    pub const fn one_of(mut self, allowed: &'static [&'static str]) -> Param {
        self.allowed = allowed;
        self
    }

    pub const fn suggest(mut self, values: &'static [&'static str]) -> Param {
        self.suggested = values;
        self
    }

    /// What a form offers to choose from: the only values, else the suggested ones.
    pub fn choices(&self) -> &'static [&'static str] {
        if self.allowed.is_empty() {
            self.suggested
        } else {
            self.allowed
        }
    }
}

/// How the request body is encoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BodyEncoding {
    None,
    /// `application/json`: `Body` params become fields of an object, or a `WholeBody` param is the
    /// whole JSON document. A `WholeBody` file param, when given, is sent instead as the file's
    /// bytes (`application/octet-stream`): Deepgram takes audio by URL in JSON or as the upload.
    Json,
    /// `application/x-www-form-urlencoded`.
    Form,
    /// `multipart/form-data`; `File` params become file parts.
    Multipart,
    /// The bytes of the `WholeBody` file param, with this content type.
    Raw(&'static str),
}

/// How a list operation pages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Paging {
    None,
    /// RFC 5988 `Link` headers, `rel="next"` relative to the request URL (Ably).
    LinkHeader,
    /// `$top`/`$skip` with `@nextLink` in the body (AvaTax).
    ODataNextLink,
    /// `CB-AFTER`/`CB-BEFORE` response headers fed back as `after`/`before` (Coinbase).
    CursorHeaders,
    /// `paging.next` URL in the body (Mailgun).
    PagingUrl,
    /// `has_more` with `before_id`/`after_id` (EasyPost).
    HasMore,
    /// `page`/`limit` query parameters (Deepgram, TaxJar where paged).
    PageNumber,
    /// `skip`/`limit` offsets: a full page means there may be more (Mailgun domains, routes).
    SkipLimit,
}

/// What a successful response's body is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ResponseFormat {
    /// JSON (or empty, as a 204): anything else is an error, not a success.
    Json,
    /// Bytes of another kind (audio from text-to-speech), passed on as they come.
    Bytes,
}

/// What a call spends given its values (looked up by name), or `None` when it spends nothing.
pub type SpendRule = fn(&dyn Fn(&str) -> Option<String>) -> Option<String>;

/// One operation of one service.
#[derive(Debug)]
pub struct Operation {
    pub service: Service,
    /// The spec's operation name, used everywhere in opsdeck.
    pub name: &'static str,
    /// The resource it belongs to, shown in the tab's resource list.
    pub resource: &'static str,
    pub method: Method,
    /// The real path template, with `{name}` for path parameters.
    pub path: &'static str,
    /// One line saying what it does.
    pub summary: &'static str,
    pub params: &'static [Param],
    pub body: BodyEncoding,
    pub paging: Paging,
    /// Whether it changes anything (blocked by `--read-only`).
    pub mutates: bool,
    /// Whether it deletes, voids, cancels, refunds, withdraws, clears or sends mail (asks for
    /// confirmation).
    pub destructive: bool,
    /// For a list operation: the field of each row that identifies it, used to pre-fill the
    /// forms of operations on one record (e.g. `id`, `channelId`).
    pub id_field: Option<&'static str>,
    /// When what is sent makes a call spend money though its name does not say so (EasyPost's
    /// shipment bought in the same call, a Coinbase order): what it spends, from the values by
    /// name. Such a call is asked first like a destructive one.
    pub spends: Option<SpendRule>,
    /// For a list whose answer keys its records by name instead of listing them
    /// (`{"webhooks": {"delivered": {...}}}`): the member that holds them. Each becomes a row
    /// with its name under `id_field`.
    pub keyed: Option<&'static str>,
    /// Values the browser adds when it lists this resource, for a richer table than the API's
    /// default (Ably channels with their metadata rather than bare names).
    pub browse: &'static [(&'static str, &'static str)],
    /// What its successful responses carry; JSON unless the entry says otherwise.
    pub response: ResponseFormat,
    /// The most bytes the files of one call may hold together (Mailgun: a 25 MB message), so a
    /// send the service would refuse is refused before any file is read or sent.
    pub max_file_bytes: Option<u64>,
    /// Open to anyone (Coinbase market data): the client sends no credentials with it, since a
    /// credential goes nowhere it is not needed.
    pub public: bool,
    /// Parameters that exclude each other (Deepgram's audio URL or file, a key's TTL or expiry
    /// date): at most one of each group may be given, and exactly one when it is `required`.
    pub exclusive: &'static [Exclusive],
    /// Parameters of which at least one must be given, any of them or several (Coinbase's fills
    /// of an order or of a product); empty when none is needed.
    pub at_least_one: &'static [&'static str],
}

/// A group of parameters of which at most one may be given (see [`Operation::exclusive`]).
#[derive(Debug)]
pub struct Exclusive {
    pub params: &'static [&'static str],
    /// Exactly one must be given.
    pub required: bool,
}

impl Operation {
    /// An operation with no parameters, body or paging; catalog entries override fields of it.
    /// Anything but a GET changes state, and a DELETE is destructive, unless an entry says otherwise.
    pub const fn base(
        service: Service,
        name: &'static str,
        resource: &'static str,
        method: Method,
        path: &'static str,
        summary: &'static str,
    ) -> Operation {
        Operation {
            service,
            name,
            resource,
            method,
            path,
            summary,
            params: &[],
            body: BodyEncoding::None,
            paging: Paging::None,
            mutates: !matches!(method, Method::Get),
            destructive: matches!(method, Method::Delete),
            id_field: None,
            keyed: None,
            spends: None,
            browse: &[],
            response: ResponseFormat::Json,
            max_file_bytes: None,
            public: false,
            exclusive: &[],
            at_least_one: &[],
        }
    }

    /// What sending this with the values `value` gives spends, when it does (see [`Operation::spends`]).
    pub fn spending(&self, value: &dyn Fn(&str) -> Option<String>) -> Option<String> {
        self.spends.and_then(|rule| rule(value))
    }

    /// Whether a call must be asked first (on LIVE: confirmed or `--yes`): destructive, or
    /// spending with these values.
    pub fn asks_first(&self, value: &dyn Fn(&str) -> Option<String>) -> bool {
        self.destructive || self.spending(value).is_some()
    }

    /// `service operation`, for messages.
    pub fn full_name(&self) -> String {
        format!("{} {}", self.service.name(), self.name)
    }

    /// The parameter `name` belongs to: the one of that exact name, else the family whose prefix
    /// it starts with (`h:X-Ticket` is the `h:` family's; `h:Reply-To`, listed itself, is not).
    pub fn param(&self, name: &str) -> Option<&'static Param> {
        self.params
            .iter()
            .find(|p| p.family.is_none() && p.name == name)
            .or_else(|| self.params.iter().filter(|p| p.family.is_some()).find(|p| p.names(name)))
    }

    /// Whether this operation lists the records of its resource (what the browser shows):
    /// a GET that names the field identifying each row.
    pub fn is_list(&self) -> bool {
        self.method == Method::Get && self.id_field.is_some()
    }

    /// What a page of this list holds, for its title: the resource for `orders_list`, `holds`
    /// for `accounts_get_holds`, `presence history` for `presence_history`.
    pub fn list_noun(&self) -> String {
        let rest = self.name.strip_prefix(self.resource).and_then(|r| r.strip_prefix('_')).unwrap_or(self.name);
        match rest.strip_prefix("get_") {
            Some(part) => part.replace('_', " "),
            None if matches!(rest, "list" | "get") => self.resource.to_owned(),
            None => format!("{} {}", self.resource, rest.replace('_', " ")),
        }
    }

    /// The path parameter names in template order.
    pub fn path_params(&self) -> Vec<&str> {
        let mut names = Vec::new();
        let mut rest = self.path;
        while let Some(start) = rest.find('{') {
            let Some(len) = rest[start..].find('}') else {
                break;
            };
            names.push(&rest[start + 1..start + len]);
            rest = &rest[start + len + 1..];
        }
        names
    }
}

/// Every operation of every service, in tab then catalog order.
pub fn all_operations() -> impl Iterator<Item = &'static Operation> {
    Service::ALL.into_iter().flat_map(|s| s.operations().iter())
}

#[cfg(test)]
mod tests;
