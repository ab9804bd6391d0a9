//! One service's tab: its target, resources, browser, inspector and the values picked up while
//! browsing (the channel being looked at, the selected device) that pre-fill forms.

use serde_json::{Map, Value};

use crate::catalog::{Location, Operation, Service};
use crate::client::request::PreparedRequest;
use crate::client::{CallId, Response, Target, Values};
use crate::config::Mode;
use crate::tui::components::browser::Browser;
use crate::tui::components::chart::ChartView;
use crate::tui::components::detail::Detail;
use crate::tui::components::inspector::Inspector;
use crate::tui::services;
use std::time::Instant;

/// The page shown in the browser and how it was fetched, for `n`, `p` and `r`.
pub struct PageState {
    pub op: &'static Operation,
    /// What the list was asked with, for reloading it without its filters.
    pub values: Values,
    /// The values among them that narrow the list (shown in the browser's title).
    pub filters: Vec<(String, String)>,
    pub request: PreparedRequest,
    pub response: Response,
    /// Requests of the pages before this one, for `p`.
    pub previous: Vec<PreparedRequest>,
}

pub struct Tab {
    pub service: Service,
    pub target: Target,
    pub mode: Mode,
    pub resources: Vec<&'static str>,
    pub resource: usize,
    pub browser: Browser,
    pub inspector: Inspector,
    /// Ids gathered while browsing, by the path parameter that names them (`channelId` of the
    /// selected channel, `deviceId` of the selected device): what forms and lists that need
    /// one are filled with. Never a filter: a list is not narrowed by what was clicked before.
    pub context: Values,
    /// What the records ids came from are called (`DEFAULT` for a company's id), by path
    /// parameter and id: a list's title says whose it is.
    pub context_labels: std::collections::HashMap<(String, String), String>,
    /// What each operation's form last held, so nothing typed is lost when a call fails.
    pub drafts: std::collections::HashMap<&'static str, Values>,
    pub page: Option<PageState>,
    /// The lists a record led here from (an account's holds came from the accounts), newest
    /// last, each with the values it was listed with: Esc in the browser goes back one.
    pub came_from: Vec<(&'static Operation, Values)>,
    /// The list call in flight, if any.
    pub loading: Option<CallId>,
    pub auto_refresh: bool,
    pub last_refresh: Option<std::time::Instant>,
    /// Whether the first resource has been loaded (done when the tab is first shown).
    pub started: bool,
    /// Its embedded simulator is being built and seeded (the first time the tab is shown).
    pub starting: bool,
    /// The last page of each list seen in this tab (when small): what it was asked with, its
    /// records and whether more pages follow, for what a confirmation says of them later.
    pub seen_lists: std::collections::HashMap<&'static str, (Values, Vec<Value>, bool)>,
    /// The last table view of a response (a transaction, a rate breakdown), for `b`.
    pub detail: Option<Detail>,
    /// Tail mode of the list in view (`T`), if on.
    pub tail: Option<TailState>,
    /// The push socket tail mode follows instead of polling, while it serves.
    pub live_tail: Option<LiveTailState>,
    /// The push socket the open market view follows instead of polling, while it serves.
    pub live_market: Option<LiveMarketState>,
    /// A live stream the tab sends (Deepgram's live transcription of a file), while its view is
    /// open.
    pub live_stream: Option<LiveStreamState>,
    /// The market view whose socket ended: it polls until it is opened anew.
    pub market_feed_refused: Option<String>,
    /// The push socket the list in view follows its records' changes on (Coinbase's orders
    /// over the user channel).
    pub live_rows: Option<LiveRowsState>,
    /// The list whose socket ended: it is not opened again for it until another list is shown.
    pub rows_feed_refused: Option<&'static str>,
    /// The list (and its row count) a socket was looked for and none could be had (nothing
    /// yet names a product): looked for again when its rows change.
    pub rows_tried: Option<(&'static str, usize)>,
    /// The last message about this tab's own actions, for the status line while it is shown.
    pub status: Option<(String, Severity)>,
    /// Whether `status` is the error of the list in view, which its next load clears.
    status_is_list_error: bool,
    /// When a passing notice (copied, saved) leaves the status line.
    pub status_fades_at: Option<Instant>,
    /// The chart under the browser while the page in view is a time series.
    pub chart: Option<ChartView>,
    /// The list whose chart the user asked for with `C` although its point is no time series
    /// (a list of things with an amount): it is drawn only then.
    pub chart_asked_for: Option<&'static str>,
    /// The last request sent from this tab, for `Y`.
    pub sent: Option<PreparedRequest>,
    /// The open view's asking again (a tracker, a batch on its way).
    pub watch: WatchState,
    /// Answers a form needed and asked for by itself (a product's increments, the fee rates),
    /// by the key its service reads them under; `Null` when the ask failed.
    pub looked_up: std::collections::HashMap<String, Value>,
    /// Keys of those asks still in flight, so each goes once.
    pub looking_up: std::collections::HashSet<String>,
    /// The live columns of the list in view (a product's price), if its service has any.
    pub live: LiveState,
}

/// The cells a list's live columns have so far, by row id, for the list `op` they were asked
/// for; when the rows in view were last asked about, and the asks in flight.
#[derive(Debug, Default)]
pub struct LiveState {
    pub op: Option<&'static str>,
    pub cells: std::collections::HashMap<String, Vec<String>>,
    pub last_poll: Option<Instant>,
    pub in_flight: Vec<CallId>,
}

/// The open view's live refresh: when it last asked, and the ask in flight. `subject` is the
/// view it is for, so a view newly opened waits its full interval before its first ask.
#[derive(Debug, Default)]
pub struct WatchState {
    pub subject: Option<String>,
    pub last_poll: Option<Instant>,
    /// The asks in flight (a market asks for its book, candles, trades and ticker at once).
    pub in_flight: Vec<CallId>,
}

/// How long a passing notice (copied, saved) stays on the status line.
pub const NOTICE_FADES_AFTER: std::time::Duration = std::time::Duration::from_secs(4);

/// How a status message reads: news, or something that went wrong.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Severity {
    Info,
    Error,
}

/// A list followed by tail mode: which operation it follows (leaving it stops the tail), when it
/// last asked, the poll in flight, and how many rows arrived since it started.
#[derive(Clone, Debug)]
pub struct TailState {
    pub op: &'static str,
    pub last_poll: Option<std::time::Instant>,
    pub in_flight: Option<CallId>,
    pub arrived: usize,
}

/// A tail followed over a push socket: the socket (dropping it closes it), which opening of it
/// this is (events of an older one are stale), and who is present on the channel.
pub struct LiveTailState {
    pub handle: crate::client::live::LiveHandle,
    pub generation: u64,
    pub shown: String,
    pub attached: bool,
    pub present: std::collections::BTreeSet<String>,
}

/// A market view's push socket: which view (its subject), where, and whether it serves yet.
pub struct LiveMarketState {
    pub handle: crate::client::live::LiveHandle,
    pub generation: u64,
    pub subject: String,
    pub focus: String,
    pub shown: String,
    pub serving: bool,
}

/// A live stream's socket (`None` once it ended), its opening, and the view that follows it,
/// shown under `subject`.
pub struct LiveStreamState {
    pub handle: Option<crate::client::live::LiveHandle>,
    pub generation: u64,
    pub subject: String,
    pub view: Box<dyn crate::tui::services::StreamView>,
}

/// A list's push socket: which list (its operation and values), where, whether it serves yet,
/// whether a push said something changed since the page was last asked for, and that ask.
pub struct LiveRowsState {
    pub handle: crate::client::live::LiveHandle,
    pub generation: u64,
    pub op: &'static crate::catalog::Operation,
    pub values: crate::client::Values,
    pub shown: String,
    pub serving: bool,
    pub dirty: bool,
    pub in_flight: Option<crate::client::CallId>,
    /// Records the feed said are done since the page was last asked for, and those it had
    /// said when the ask in flight went.
    pub done: std::collections::BTreeSet<String>,
    pub asked_done: std::collections::BTreeSet<String>,
}

impl std::fmt::Debug for LiveRowsState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LiveRowsState").field("op", &self.op.name).field("serving", &self.serving).finish()
    }
}

impl std::fmt::Debug for LiveMarketState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LiveMarketState").field("shown", &self.shown).field("serving", &self.serving).finish()
    }
}

impl std::fmt::Debug for LiveTailState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LiveTailState").field("shown", &self.shown).field("attached", &self.attached).finish()
    }
}

impl Tab {
    pub fn new(service: Service, target: Target, mode: Mode) -> Tab {
        let mut browser = Browser::default();
        browser.tone = Some(services::tones(service));
        let resources = service.resources();
        browser.title = resources.first().map_or_else(String::new, |r| (*r).to_owned());
        Tab {
            service,
            target,
            mode,
            resources,
            resource: 0,
            browser,
            inspector: Inspector::new(),
            context: Values::new(),
            context_labels: std::collections::HashMap::new(),
            drafts: std::collections::HashMap::new(),
            page: None,
            came_from: Vec::new(),
            loading: None,
            auto_refresh: false,
            last_refresh: None,
            started: false,
            starting: false,
            detail: None,
            seen_lists: std::collections::HashMap::new(),
            tail: None,
            live_tail: None,
            live_market: None,
            live_stream: None,
            market_feed_refused: None,
            live_rows: None,
            rows_feed_refused: None,
            rows_tried: None,
            status: None,
            status_is_list_error: false,
            status_fades_at: None,
            chart: None,
            chart_asked_for: None,
            sent: None,
            watch: WatchState::default(),
            looked_up: std::collections::HashMap::new(),
            looking_up: std::collections::HashSet::new(),
            live: LiveState::default(),
        }
    }

    pub fn resource_name(&self) -> &'static str {
        self.resources.get(self.resource).copied().unwrap_or("")
    }

    /// Where this tab's calls go, as every label of the console says it (header, status bar,
    /// form titles, confirmations; the history records [`crate::history::target_label`]):
    /// `LIVE`, `SANDBOX` (the embedded simulator), or `URL host:port` (a base URL the user
    /// gave, never called SANDBOX).
    pub fn target_badge(&self) -> String {
        match &self.mode {
            Mode::External => {
                let url = reqwest::Url::parse(&self.target.base_url).ok();
                let host = url.as_ref().and_then(|u| {
                    Some(format!("{}{}", u.host_str()?, u.port().map(|p| format!(":{p}")).unwrap_or_default()))
                });
                format!("URL {}", host.unwrap_or_else(|| self.target.base_url.clone()))
            }
            mode => crate::history::target_label(mode).into(),
        }
    }

    /// The badge and the base URL, for titles: `SANDBOX http://127.0.0.1:7701`.
    pub fn target_line(&self) -> String {
        format!("{} {}", self.target_badge(), self.target.base_url)
    }

    /// Says `message` in the status line while this tab is shown.
    pub fn say(&mut self, message: String, severity: Severity) {
        self.status = Some((message, severity));
        self.status_is_list_error = false;
        self.status_fades_at = None;
    }

    /// Says `message` for a few seconds: news that is done with once read (copied, saved).
    pub fn say_briefly(&mut self, message: String, now: Instant) {
        self.say(message, Severity::Info);
        self.status_fades_at = Some(now + NOTICE_FADES_AFTER);
    }

    /// Takes a passing notice off once its time is up.
    pub fn fade_status(&mut self, now: Instant) {
        if self.status_fades_at.is_some_and(|at| at <= now) {
            self.status = None;
            self.status_fades_at = None;
        }
    }

    /// Says why the list in view failed; its next successful load takes the message away.
    pub fn say_view_error(&mut self, message: String) {
        self.say(message, Severity::Error);
        self.status_is_list_error = true;
    }

    /// The list in view loaded: its earlier failure is no longer news.
    pub fn clear_view_error(&mut self) {
        if std::mem::take(&mut self.status_is_list_error) {
            self.status = None;
        }
    }

    /// A value by name from what the list in view was asked with, else from the ids gathered
    /// while browsing: what a service's row and record actions address a record with.
    pub fn scope(&self, name: &str) -> Option<String> {
        self.page.as_ref().and_then(|p| p.values.get(name).cloned()).or_else(|| self.context.get(name).cloned())
    }

    /// The executor's slot of the calls whose answer is the browser's page: the newest one
    /// sent cancels the one before, so a slower, older answer never replaces a newer list.
    pub fn browser_slot(&self) -> String {
        format!("{}/browser", self.service)
    }

    /// The list call in view stops (cancelled): nothing may keep saying "loading".
    pub fn stop_loading(&mut self) {
        if self.loading.take().is_some() && self.page.is_none() {
            self.browser.notice = Some(("cancelled; r loads it again".into(), false));
        }
    }

    /// Ends tail mode (leaving the list, or `T` again); says whether it was on.
    pub fn stop_tail(&mut self) -> bool {
        self.browser.tail_note = None;
        self.live_tail = None;
        self.tail.take().is_some()
    }

    /// Whether a tail poll is due at `now`: tailing the list in view, nothing loading or polling.
    pub fn tail_due(&self, now: std::time::Instant, every: std::time::Duration) -> bool {
        let Some(tail) = &self.tail else { return false };
        if self.live_tail.is_some() {
            return false;
        }
        let following = self.page.as_ref().is_some_and(|p| p.op.name == tail.op);
        following
            && self.can_auto_refresh()
            && tail.in_flight.is_none()
            && tail.last_poll.is_none_or(|at| at + every <= now)
    }

    /// Whether auto-refresh has anything to reload: a list in view from a service that answers.
    pub fn can_auto_refresh(&self) -> bool {
        self.page.is_some() && self.loading.is_none()
    }

    /// The operation that lists the selected resource, if it has one.
    pub fn list_op(&self) -> Option<&'static Operation> {
        let resource = self.resource_name();
        self.service.operations().iter().find(|op| op.resource == resource && op.is_list())
    }

    /// The tab's operations in two groups: those of the selected resource, then the rest.
    pub fn operations_for_menu(&self) -> (Vec<&'static Operation>, Vec<&'static Operation>) {
        let resource = self.resource_name();
        self.service.operations().iter().partition(|op| op.resource == resource)
    }

    /// The selected record, seen as an object (a bare value becomes `{id_field: value}`).
    pub fn selected_record(&self) -> Option<Map<String, Value>> {
        let record = self.browser.selected_record()?;
        match record {
            Value::Object(map) => Some(map.clone()),
            other => {
                let id_field = self.page.as_ref().and_then(|p| p.op.id_field)?;
                Some([(id_field.to_owned(), other.clone())].into_iter().collect())
            }
        }
    }

    /// Records the ids a selected row gives: its fields named like a path parameter of this
    /// service (a subscription's `deviceId`), and its own id under the path parameters that its
    /// resource's operations name it by (a device's `id` is their `deviceId`). The parameters
    /// the list itself was called with are not its id: a message's id is not its `channelId`.
    pub fn remember_selection(&mut self) {
        let Some(page_op) = self.page.as_ref().map(|p| p.op) else { return };
        let Some(record) = self.selected_record() else { return };
        let operations = self.service.operations();
        let console = services::console(self.service);
        let is_path_param = |name: &str| {
            operations.iter().any(|op| op.params.iter().any(|p| p.location == Location::Path && p.name == name))
        };
        let mut remembered: Vec<(String, String)> = Vec::new();
        for (key, value) in &record {
            if let Some(text) = id_value(value).filter(|_| is_path_param(key)) {
                remembered.push((key.clone(), text));
            }
        }
        for (name, value) in console.remembered(page_op.name, &record) {
            remembered.push((name.to_owned(), value));
        }
        let own_id = page_op.id_field.and_then(|f| record.get(f)).and_then(id_value);
        let listed_with = |name: &str| page_op.params.iter().any(|p| p.location == Location::Path && p.name == name);
        if let Some(id) = &own_id {
            let label = console.label(&record).unwrap_or_else(|| id.clone());
            // A record whose id field is named like the path parameter (a Deepgram project's
            // `project_id`): what it is called goes with it too.
            if let Some(field) = page_op.id_field.filter(|f| is_path_param(f)) {
                self.name_id(field, id, &label);
            }
            for op in operations.iter().filter(|op| op.resource == page_op.resource) {
                for param in op.params.iter().filter(|p| p.location == Location::Path) {
                    if !record.contains_key(param.name) && !listed_with(param.name) {
                        remembered.push((param.name.to_owned(), id.clone()));
                        self.name_id(param.name, id, &label);
                    }
                }
            }
        }
        for (name, id) in remembered {
            self.context.insert(name, id);
        }
    }

    /// The resource whose rows give `param` (a company's id for `companyId`): the one with an
    /// operation that takes it in its path while its list does not, so picking one of its rows
    /// is how a user chooses it.
    pub fn source_of(&self, param: &str) -> Option<&'static str> {
        let operations = self.service.operations();
        operations.iter().filter(|op| op.is_list() && op.id_field.is_some()).map(|list| list.resource).find(
            |resource| {
                let list = operations.iter().find(|op| op.resource == *resource && op.is_list());
                let listed_with =
                    list.is_some_and(|l| l.params.iter().any(|p| p.location == Location::Path && p.name == param));
                !listed_with
                    && operations
                        .iter()
                        .filter(|op| op.resource == *resource)
                        .any(|op| op.params.iter().any(|p| p.location == Location::Path && p.name == param))
            },
        )
    }

    /// Whose `op` with `values` lists, for its title: each path parameter's value, by the name
    /// of the record it was picked from when it was (`DEFAULT`, not `100007`).
    pub fn scope_label(&self, op: &'static Operation, values: &Values) -> Option<String> {
        let parts: Vec<String> = op
            .params
            .iter()
            .filter(|p| p.location == Location::Path)
            .filter_map(|p| {
                let value = values.get(p.name)?;
                Some(self.context_labels.get(&(p.name.to_owned(), value.clone())).unwrap_or(value).clone())
            })
            .collect();
        (!parts.is_empty()).then(|| parts.join(" / "))
    }

    /// What the id `id` of path parameter `param` was called where it was picked, if it was.
    pub fn id_name(&self, param: &str, id: &str) -> Option<String> {
        self.context_labels.get(&(param.to_owned(), id.to_owned())).cloned()
    }

    /// What the id `id` of path parameter `param` is called, for titles. Every id seen keeps its
    /// name (a list asked before another row was selected still reads `holds of BTC`), up to a
    /// bound past which the oldest are forgotten all at once.
    fn name_id(&mut self, param: &str, id: &str, label: &str) {
        const NAMES: usize = 4096;
        if self.context_labels.len() >= NAMES {
            self.context_labels.clear();
        }
        self.context_labels.insert((param.to_owned(), id.to_owned()), label.to_owned());
    }

    /// Names the ids among `values` that are `record`'s own (its `id` field) by what the
    /// record is called, for the titles of the lists they lead to.
    pub fn name_ids_after(&mut self, record: &Map<String, Value>, values: &[(String, String)]) {
        let Some(label) = services::console(self.service).label(record) else { return };
        let Some(id) = record.get("id").and_then(id_value) else { return };
        for (name, value) in values.iter().filter(|(_, value)| *value == id) {
            self.name_id(name, value, &label);
        }
    }

    /// A list's title: what it lists and whose it is (`ledger of BTC`, `transactions of
    /// DEFAULT`), or just what it lists when no record was picked for it.
    pub fn list_title(&self, op: &'static Operation, values: &Values) -> String {
        let noun = op.list_noun();
        match self.scope_label(op, values) {
            Some(scope) => format!("{noun} of {scope}"),
            None => noun,
        }
    }

    /// The values the browser lists `op` with: the ids it needs (from the selection and the
    /// context) and the op's browse values. Optional filters are never filled in: a list
    /// shows everything unless the user asked for less in its form.
    /// Drafts are not used: a half-typed form must not break browsing.
    pub fn browse_values(&self, op: &'static Operation) -> Values {
        let mut values = self.suggested_values(op, None);
        values.retain(|name, _| {
            op.params.iter().any(|p| p.name == name && (p.required || op.at_least_one.contains(&p.name)))
        });
        for (name, value) in op.browse {
            values.entry((*name).to_owned()).or_insert_with(|| (*value).to_owned());
        }
        values
    }

    /// Notes the list a record led away from, for Esc; a long walk keeps its last steps.
    pub fn remember_where_from(&mut self, list: Option<(&'static Operation, Values)>) {
        const STEPS: usize = 16;
        self.came_from.extend(list);
        if self.came_from.len() > STEPS {
            self.came_from.remove(0);
        }
    }

    /// Values to pre-fill `op`'s form with: the last draft, else the suggested values.
    pub fn prefill(&self, op: &'static Operation, record: Option<&Map<String, Value>>) -> Values {
        match self.drafts.get(op.name) {
            Some(draft) => draft.clone(),
            None => self.suggested_values(op, record),
        }
    }

    /// Values for `op` taken from `record` (by default the browser's selected row) and the
    /// browsing context. A record fills a path parameter of any operation by name (an id is an
    /// id wherever it goes), but its other fields fill only operations on its own resource: a
    /// message's `clientId` is no filter for push devices.
    pub fn suggested_values(&self, op: &'static Operation, record: Option<&Map<String, Value>>) -> Values {
        let record = record.cloned().or_else(|| self.selected_record()).unwrap_or_default();
        let record_resource = self.page.as_ref().map(|p| p.op.resource);
        let same_resource = record_resource == Some(op.resource);
        let mut values = Values::new();
        for param in op.params {
            // A record's body fields pre-fill updates only: copying them into a create would
            // make a duplicate (or, with Ably's idempotent ids, silently publish nothing).
            let is_update = matches!(op.method, crate::catalog::Method::Put | crate::catalog::Method::Patch);
            // A record's fields are no filter for the list it came from: they would narrow it to
            // that one record.
            let list_filter = op.is_list() && !param.required && param.location == Location::Query;
            let usable = match param.location {
                Location::Path => true,
                Location::Body => is_update && same_resource,
                _ => same_resource && !list_filter,
            };
            let from_record = record.get(param.name).filter(|_| usable).and_then(|v| match v {
                Value::Object(_) | Value::Array(_)
                    if matches!(param.kind, crate::catalog::Kind::Json | crate::catalog::Kind::Data) =>
                {
                    Some(v.to_string())
                }
                _ if param.location == Location::Path => id_value(v),
                other => scalar(other),
            });
            // The context holds ids by the path parameter that takes them, nothing else; a list
            // that needs one of several ids (fills of an order or a product) takes them too.
            let takes_id = param.location == Location::Path || op.at_least_one.contains(&param.name);
            let from_context = takes_id.then(|| self.context.get(param.name).cloned()).flatten();
            if let Some(value) = from_record.or(from_context) {
                values.insert(param.name.to_owned(), value);
            }
        }
        services::console(op.service).suggest(op, &record, &self.target, &mut values);
        values
    }
}

/// A value that can stand for a record's id: a non-empty string or a number other than zero. A
/// zero or empty id is a placeholder (AvaTax's system tax codes belong to `companyId: 0`) and
/// never addresses a record the user chose.
fn id_value(value: &Value) -> Option<String> {
    scalar(value).filter(|text| !text.is_empty() && text != "0" && !matches!(value, Value::Bool(_)))
}

fn scalar(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}
