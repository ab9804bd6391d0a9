//! One module per service: what the console knows of a service beyond its catalog. The columns
//! and cell tones of its lists, the views of its records, what Enter on a row does, the keys of
//! a record's actions, and which record fields fill which path parameters. Everything else in
//! the console (browser, inspector, forms, the app) and `opsdeck call -o table` asks
//! [`console`] and names no service; adding a service is one file here and one line in
//! [`console`]'s match.

pub mod ably;
pub mod avatax;
pub mod coinbase;
pub mod deepgram;
pub mod deepgram_audio;
pub mod deepgram_live;
pub mod easypost;
pub mod mailgun;
pub mod taxjar;

use serde_json::{Map, Value};

use crate::catalog::{Operation, Service};
use crate::client::{Target, Values};
use crate::table::Layout;
use crate::tui::components::browser::ToneFn;
use crate::tui::components::detail::{Detail, Tone};
use crate::tui::components::market::{Market, Push};

/// What a frame of a live tail's socket says.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LiveFrame {
    /// Frames to send back (an ATTACH once connected).
    pub send: Vec<String>,
    /// The subscription is in place: what happens from now on arrives.
    pub attached: bool,
    /// New records, newest first, shaped as the list's own.
    pub records: Vec<Value>,
    /// The whole set of who is present, when the frame gives it.
    pub present: Option<Vec<String>>,
    /// Who entered (or updated) and who left.
    pub entered: Vec<String>,
    pub left: Vec<String>,
    /// The socket can no longer serve the tail, and why.
    pub ended: Option<String>,
}

/// A push socket the console follows (a list's tail, a market view, a list's changes): where
/// it is (a credential may be in the URL), how the console may name it (no credential), and
/// what to send once it is open.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LiveFeed {
    pub url: String,
    pub shown: String,
    pub send: Vec<String>,
}

/// An operation sent as a live stream instead of a call (Deepgram's live transcription of a
/// file): the socket to open, with what it uploads, and the view that follows it.
pub struct LiveStream {
    pub opening: crate::client::live::Opening,
    pub view: Box<dyn StreamView>,
}

/// The view of a live stream, told what its socket does; it draws as a [`Detail`].
pub trait StreamView: Send {
    /// A text frame the server sent.
    fn frame(&mut self, text: &str);
    /// Bytes of the upload sent so far.
    fn sent(&mut self, bytes: usize);
    /// The socket ended, and why (already made inert).
    fn ended(&mut self, why: &str);
    /// The view as it stands; its `subject` names the stream.
    fn detail(&self) -> Detail;
}

/// What a frame of a list's push socket says.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RowsFrame {
    /// Something happened to the list's records: its page is asked for again.
    pub changed: bool,
    /// Records that are done (an order filled or cancelled): a row of them the page asked for
    /// again no longer has has left the list, and goes.
    pub done: Vec<String>,
    /// The subscription is in place.
    pub serving: bool,
    /// The socket can no longer serve the list, and why.
    pub ended: Option<String>,
}

/// What a frame of a market's push socket says.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MarketFrame {
    /// What the view takes in.
    pub pushes: Vec<Push>,
    /// The subscription is in place: the view needs no polling for what the socket pushes.
    pub serving: bool,
    /// The socket can no longer serve the view, and why.
    pub ended: Option<String>,
}

/// A service's console behaviour. Every method has a default: a service says only what it
/// shows differently from the generic views.
pub trait ServiceConsole: Sync {
    /// The columns and cells of `op`'s list when the generic ones say little (Mailgun events,
    /// with forty nested fields). `None`: the columns come from the records.
    fn layout(&self, op: &Operation) -> Option<Layout> {
        let _ = op;
        None
    }

    /// The tone of a list cell by its column header and text (a document's status).
    fn cell_tone(&self, header: &str, text: &str) -> Option<Tone> {
        let _ = (header, text);
        None
    }

    /// The currency of the amounts of `op`'s records when they do not say it themselves (an
    /// account's ledger is in the account's currency), from the values it was asked with and
    /// what the ids among them are called where they were picked (`name(param, id)`). `None`:
    /// the amounts are written with every digit they have.
    fn amount_unit(
        &self,
        op: &Operation,
        values: &Values,
        name: &dyn Fn(&str, &str) -> Option<String>,
    ) -> Option<String> {
        let _ = (op, values, name);
        None
    }

    /// The structured view of a response of `op`, for the operations that have one.
    fn detail(&self, op: &Operation, body: &Value) -> Option<Detail> {
        let _ = (op, body);
        None
    }

    /// What Enter on a row of `list_op` does beyond the generic (show the record in the
    /// inspector, or fetch it when the row is a bare id). `scope` reads the values the list was
    /// asked with and the ids gathered while browsing, by name.
    fn open_row(&self, list_op: &str, record: &Value, scope: &dyn Fn(&str) -> Option<String>) -> Option<RowAction> {
        let _ = (list_op, record, scope);
        None
    }

    /// The keys of the record actions a view of `record` offers (`c` commit, `v` void), with
    /// what each is called; [`ServiceConsole::record_action`] says what they open.
    fn record_keys(&self, record: &Value) -> &'static [(char, &'static str)] {
        let _ = record;
        &[]
    }

    /// What a confirmation of `op` needs to know that only a fresh answer can tell (the open
    /// orders a cancel-all cancels): asked when it opens, read by [`Self::effects_looked_up`].
    fn confirm_lookups(&self, op: &Operation, values: &Values) -> Vec<Lookup> {
        let _ = (op, values);
        Vec::new()
    }

    /// What a confirmation says from the answers to its lookups (`None`: not answered yet).
    fn effects_looked_up(
        &self,
        op: &Operation,
        values: &Values,
        looked_up: &dyn Fn(&str) -> Option<Value>,
    ) -> Vec<String> {
        let _ = (op, values, looked_up);
        Vec::new()
    }

    /// What a confirmation's border says `op` does, when "This cannot be undone" (or, for a
    /// call that spends, "This spends what it says below") is not the truth of it.
    fn confirm_headline(&self, op: &Operation) -> Option<&'static str> {
        let _ = op;
        None
    }

    /// Keys that act on the selected row of `list_op` where it is (a key's delete in
    /// Deepgram's keys), each with its label: [`ServiceConsole::record_action`] says what each
    /// does. They win over the browser's own keys in that list.
    fn row_keys(&self, list_op: &str) -> &'static [(char, &'static str)] {
        let _ = list_op;
        &[]
    }

    /// The form a record action key opens: the operation and the values it starts with.
    /// Nothing is sent before the user reads the form and sends it.
    fn record_action(
        &self,
        key: char,
        record: &Value,
        scope: &dyn Fn(&str) -> Option<String>,
    ) -> Option<(&'static str, Values)> {
        let _ = (key, record, scope);
        None
    }

    /// Ids a selected row of `list_op` gives to the forms and lists that need them, by path
    /// parameter, beyond the generic rules (a field named like the parameter; the row's id).
    fn remembered(&self, list_op: &str, record: &Map<String, Value>) -> Vec<(&'static str, String)> {
        let _ = (list_op, record);
        Vec::new()
    }

    /// What a record is called where its id is shown for it (a list's title: `customers of
    /// DEFAULT`): by default its `name` or `code`.
    fn label(&self, record: &Map<String, Value>) -> Option<String> {
        ["name", "code"].iter().find_map(|key| record.get(*key)?.as_str().filter(|s| !s.is_empty()).map(str::to_owned))
    }

    /// Values `op`'s form starts with beyond the generic ones, from the selected `record` and
    /// the tab's `target`.
    fn suggest(&self, op: &Operation, record: &Map<String, Value>, target: &Target, values: &mut Values) {
        let _ = (op, record, target, values);
    }

    /// What sending `op` with `values` will do, said in its confirmation (the price a purchase
    /// spends). `known` finds a record shown in this tab by id.
    fn effects(&self, op: &Operation, values: &Values, known: &dyn Fn(&str) -> Option<Value>) -> Vec<String> {
        let _ = (op, values, known);
        Vec::new()
    }

    /// What sending `op` with `values` will do, said from the records of the lists this tab
    /// has in view (`seen(list_op)`): how many open orders a cancel-all cancels.
    fn effects_seen(&self, op: &Operation, values: &Values, seen: &dyn Fn(&str) -> Option<Seen>) -> Vec<String> {
        let _ = (op, values, seen);
        Vec::new()
    }

    /// Columns `list_op`'s rows get from one more ask per row (a product's price and 24-hour
    /// change from its stats), asked again for the rows in view while the list is shown.
    /// A socket that pushes `op`'s new records as they happen (Ably's realtime connection for a
    /// channel's history), which tail mode follows instead of polling; `None`: it polls.
    fn live_tail(&self, op: &Operation, values: &Values, target: &Target) -> Option<LiveFeed> {
        let _ = (op, values, target);
        None
    }

    /// What one frame of `live_tail`'s socket says.
    fn live_frame(&self, op: &Operation, values: &Values, frame: &str) -> LiveFrame {
        let _ = (op, values, frame);
        LiveFrame::default()
    }

    fn live_columns(&self, list_op: &str) -> Option<LiveColumns> {
        let _ = list_op;
        None
    }

    /// A socket that pushes a market view's book, trades and ticker for instrument `focus`,
    /// which the view follows instead of polling them; `None`: it polls.
    fn market_feed(&self, focus: &str, target: &Target) -> Option<LiveFeed> {
        let _ = (focus, target);
        None
    }

    /// Whether `op`'s list follows a push socket of its records' changes while shown.
    fn pushes_rows(&self, op: &Operation) -> bool {
        let _ = op;
        false
    }

    /// The socket `op`'s list follows (the Coinbase user channel for the orders list), given
    /// the records the tab knows (whose products it subscribes to); `None`: it does not.
    fn rows_feed(&self, op: &Operation, values: &Values, target: &Target, known: &[Value]) -> Option<LiveFeed> {
        let _ = (op, values, target, known);
        None
    }

    /// What one frame of `rows_feed`'s socket says.
    fn rows_frame(&self, op: &Operation, frame: &str) -> RowsFrame {
        let _ = (op, frame);
        RowsFrame::default()
    }

    /// What one frame of `market_feed`'s socket says.
    fn market_frame(&self, focus: &str, frame: &str) -> MarketFrame {
        let _ = (focus, frame);
        MarketFrame::default()
    }

    /// The part of a market view an answer of `op` asked with `values` fills (a book, candles,
    /// trades, a ticker, a row of the board), when the view asked for it.
    fn market(&self, op: &Operation, values: &Values, body: &Value) -> Option<Market> {
        let _ = (op, values, body);
        None
    }

    /// Problems of `op`'s form the catalog cannot see, by field (a price finer than the
    /// product's increment), from what the tab knows (`known`, by id): nothing is sent while
    /// there are any.
    fn form_problems(
        &self,
        op: &Operation,
        values: &Values,
        known: &dyn Fn(&str) -> Option<Value>,
    ) -> Vec<(&'static str, String)> {
        let _ = (op, values, known);
        Vec::new()
    }

    /// Lines shown in `op`'s form while it is filled (what an order will cost and hold).
    fn form_notes(&self, op: &Operation, values: &Values, known: &dyn Fn(&str) -> Option<Value>) -> Vec<String> {
        let _ = (op, values, known);
        Vec::new()
    }

    /// What `op`'s form needs to know and the tab does not yet: each a key `known` will find
    /// the answer under, and the operation (with its values) that asks for it. Sent quietly,
    /// once per key.
    fn lookups(&self, op: &Operation, values: &Values, known: &dyn Fn(&str) -> Option<Value>) -> Vec<Lookup> {
        let _ = (op, values, known);
        Vec::new()
    }

    /// The arrays of `op`'s answer whose records together are its rows, when they are more
    /// than one (Deepgram's models: speech-to-text, then the voices); by default the records
    /// are where lists conventionally keep them.
    fn record_arrays(&self, op: &Operation) -> &'static [&'static str] {
        let _ = op;
        &[]
    }

    /// The text fields of `op`'s form typed over several lines (a text to analyze): Enter
    /// there starts a new line, as in JSON fields.
    fn text_lines(&self, op: &Operation) -> &'static [&'static str] {
        let _ = op;
        &[]
    }

    /// The view of a file an answer of `op` was saved to (the audio a text-to-speech call
    /// made: its format and duration), from its content type and bytes.
    fn saved_view(
        &self,
        op: &Operation,
        content_type: Option<&str>,
        bytes: &[u8],
        path: &std::path::Path,
    ) -> Option<Detail> {
        let _ = (op, content_type, bytes, path);
        None
    }

    /// The form "transcribe live" opens, when this service streams one (Deepgram's
    /// `transcription_live`).
    fn live_form(&self) -> Option<&'static Operation> {
        None
    }

    /// [`ServiceConsole::live_form`]'s values sent as a live stream, or why they cannot be.
    fn live_stream(&self, op: &Operation, values: &Values, target: &Target) -> Result<LiveStream, String> {
        let _ = (values, target);
        Err(format!("{} is not sent as a live stream", op.name))
    }

    /// The operation a compose key opens (`ComposeEmail`, `ComposeMime`), when this service
    /// composes messages.
    fn compose(&self, kind: Compose) -> Option<&'static str> {
        let _ = kind;
        None
    }
}

/// What Enter on a row does, when a service says.
pub enum RowAction {
    /// List this resource for the selected row (a company's transactions).
    Drill(&'static str),
    /// Show this view of the row at once (kept for `b`); with an operation, also ask for the
    /// whole record, whose answer replaces the view.
    View(Box<Detail>, Option<(&'static str, Values)>),
    /// Send this operation (a domain, asked for with its DNS records).
    Fetch(&'static str, Values),
}

/// The records of a list the tab has in view, as [`ServiceConsole::effects_seen`] reads them:
/// what the list was asked with, and whether more pages follow the one in view.
pub struct Seen {
    pub records: Vec<Value>,
    pub values: Values,
    pub more: bool,
}

/// Columns of a list filled by asking about each row in view: `op` with `param` set to the
/// row's `id_field`, its answer made into `headers.len()` cells by `cells`.
#[derive(Clone, Copy, Debug)]
pub struct LiveColumns {
    pub op: &'static str,
    pub param: &'static str,
    pub id_field: &'static str,
    pub headers: &'static [&'static str],
    pub cells: fn(&Value) -> Vec<String>,
}

/// Something a form needs to know, asked for by `op` with `values`; its answer is known under
/// `key` afterwards.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lookup {
    pub key: String,
    pub op: &'static str,
    pub values: Values,
}

/// The compose keys: a message from fields, or a MIME message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compose {
    Fields,
    Mime,
}

/// The one registry: a service's console behaviour.
pub fn console(service: Service) -> &'static dyn ServiceConsole {
    match service {
        Service::Ably => &ably::Ably,
        Service::Deepgram => &deepgram::Deepgram,
        Service::Avatax => &avatax::Avatax,
        Service::Taxjar => &taxjar::Taxjar,
        Service::Coinbase => &coinbase::Coinbase,
        Service::Mailgun => &mailgun::Mailgun,
        Service::Easypost => &easypost::Easypost,
    }
}

/// The columns and cells `op`'s list is shown with, in the console and by `opsdeck call -o table`.
pub fn layout(op: &Operation) -> Option<Layout> {
    console(op.service).layout(op)
}

/// The structured view of a response of `op`, if its service has one.
pub fn detail(op: &Operation, body: &Value) -> Option<Detail> {
    console(op.service).detail(op, body)
}

/// The tone of a cell of a `service` list; a verification mark reads the same everywhere.
pub fn cell_tone(service: Service, header: &str, text: &str) -> Option<Tone> {
    match (header, text) {
        ("verified", "✓") => Some(Tone::Good),
        ("verified", "✗") => Some(Tone::Bad),
        _ => console(service).cell_tone(header, text),
    }
}

/// [`cell_tone`] of `service` as the browser keeps it: a plain function per service.
pub fn tones(service: Service) -> ToneFn {
    match service {
        Service::Ably => |header, text| cell_tone(Service::Ably, header, text),
        Service::Deepgram => |header, text| cell_tone(Service::Deepgram, header, text),
        Service::Avatax => |header, text| cell_tone(Service::Avatax, header, text),
        Service::Taxjar => |header, text| cell_tone(Service::Taxjar, header, text),
        Service::Coinbase => |header, text| cell_tone(Service::Coinbase, header, text),
        Service::Mailgun => |header, text| cell_tone(Service::Mailgun, header, text),
        Service::Easypost => |header, text| cell_tone(Service::Easypost, header, text),
    }
}

/// The service that composes messages for `kind`, and the operation it opens.
pub fn composer(kind: Compose) -> Option<(Service, &'static str)> {
    Service::ALL.into_iter().find_map(|service| console(service).compose(kind).map(|op| (service, op)))
}

/// The service whose "transcribe live" form streams, and the form's operation.
pub fn live_streamer() -> Option<(Service, &'static Operation)> {
    Service::ALL.into_iter().find_map(|service| console(service).live_form().map(|op| (service, op)))
}
