//! Bodies indexed off the UI thread. A response is indexed once ([`JsonDoc`]), a list page's
//! rows are made from that index ([`RowSpec::table`]), and the console gets both back as a
//! report to the app (`Background::Indexed`), so a 200 MB body never stops the keys. While a job runs its
//! [`Watch`] says how far it got, and cancelling it stops the work within about a megabyte.

use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;

use crate::catalog::Operation;
use crate::client;
use crate::json_index::{JsonDoc, JsonError, Kind, NodeId, Watch};
use crate::table::{RowSpec, Table};
use crate::tui::components::chart::{self, TimeSeries};
use crate::tui::components::inspector::ResponseView;

/// Largest page whose records are decoded to look for a time series: charts are drawn from
/// stats and candles pages, which are small, and decoding is what the index exists to avoid.
const CHART_BODY_LIMIT: usize = 8 * 1024 * 1024;

/// Records looked at to tell whether a page is a time series.
const CHART_PROBE: usize = 16;

/// Largest answer read as a value for a view: views show one record or a short series.
const VIEW_BODY_LIMIT: usize = 8 * 1024 * 1024;

/// What a finished job hands back.
#[derive(Debug)]
pub struct Indexed {
    pub doc: Arc<JsonDoc>,
    /// Where the rows' records are: `doc`, or for an answer that keys its records by name
    /// ([`Operation::keyed`](crate::catalog::Operation)) those records, each with its name.
    pub records_doc: Arc<JsonDoc>,
    /// The page's rows, when rows were asked for and the body is a list.
    pub table: Option<Table>,
    /// The page's time series, when it is one.
    pub series: Option<TimeSeries>,
    /// An answer that is no list, read for its view (see [`Then::Answer`]).
    pub value: Option<serde_json::Value>,
}

/// What a job is for: what the console does with its result.
pub enum Then {
    /// A list page for the browser (and the inspector).
    Page(Page),
    /// A tail poll's page: its new rows join the browser's.
    Tail { op: &'static Operation },
    /// A page asked for after its list's feed said something changed: its rows replace the
    /// browser's of the same id.
    Rows { op: &'static Operation, done: std::collections::BTreeSet<String> },
    /// A response for the inspector only.
    Inspect { view: ResponseView },
    /// A big answer to an operation that is no list: the inspector shows it, and its view (a
    /// transaction's lines, a shipment's rates) is made from it, when it is small enough for one.
    Answer(Answer),
}

/// An operation's answer: what was asked, and the answer.
pub struct Answer {
    pub op: &'static Operation,
    pub values: client::Values,
    pub request: client::PreparedRequest,
    pub response: client::Response,
    /// The file the answer links to, to save next: the call, a JSON pointer, a file name.
    pub save: Option<(client::CallId, String, String)>,
}

impl Then {
    /// Whether the job also reads the body as a value, for a view.
    pub fn wants_value(&self) -> bool {
        matches!(self, Then::Answer(_))
    }
}

/// A list page that arrived: what was asked, and the answer.
pub struct Page {
    pub op: &'static Operation,
    pub values: client::Values,
    pub request: client::PreparedRequest,
    /// Requests of the pages before this one, for `p`.
    pub previous: Vec<client::PreparedRequest>,
    pub response: client::Response,
}

/// A job in progress.
pub struct Job {
    pub tab: usize,
    pub watch: Arc<Watch>,
    /// The body's size, for the progress note.
    pub size: usize,
    pub started: Instant,
    pub then: Then,
}

impl Job {
    /// `34.0 of 50.0 MB`, for the status line and the browser.
    pub fn progress(&self) -> String {
        let mb = |bytes: usize| bytes as f64 / (1024.0 * 1024.0);
        let done = self.watch.done().min(self.size);
        if done >= self.size {
            return format!("{:.1} MB indexed, making rows", mb(self.size));
        }
        format!("{:.1} of {:.1} MB ({}%)", mb(done), mb(self.size), done * 100 / self.size.max(1))
    }
}

/// Indexes `body`, and makes its rows with `rows` when it is a list: what a job does, on
/// whatever thread it runs (benchmarks call it directly).
pub fn index(body: Bytes, watch: &Watch, rows: Option<&Rows>, value: bool) -> Result<Indexed, JsonError> {
    let doc = Arc::new(JsonDoc::parse_watched(body, watch)?);
    let value = (value && doc.body().len() <= VIEW_BODY_LIMIT).then(|| doc.root().to_value());
    let keyed = rows.and_then(|r| doc.keyed_records(r.keyed?, r.spec.id_field?));
    let (records_doc, records) = match keyed.map(|records| JsonDoc::from_values(&records)) {
        Some(Ok((keyed_doc, records))) => (Arc::new(keyed_doc), Some(records)),
        _ => (doc.clone(), rows.and_then(|rows| records_of(&doc, rows.arrays))),
    };
    let (table, series) = match (rows, records) {
        (Some(rows), Some(records)) => {
            let series = time_series(&records_doc, &records);
            (Some(rows.spec.table(&records_doc, &records)), series)
        }
        _ => (None, None),
    };
    Ok(Indexed { doc, records_doc, table, series, value })
}

/// How to make a list's rows: the table's columns, and whether its answer keys its records by
/// name rather than listing them.
pub struct Rows {
    pub spec: RowSpec,
    pub keyed: Option<&'static str>,
    /// The arrays whose records together make the rows, when the service names them (Deepgram's
    /// models: `stt` then `tts`); otherwise where the records conventionally are.
    pub arrays: &'static [&'static str],
}

/// The records of a page: those of each of `arrays` in turn when any is there, else the
/// conventional ones.
fn records_of(doc: &JsonDoc, arrays: &[&str]) -> Option<Vec<NodeId>> {
    let named: Vec<NodeId> = arrays
        .iter()
        .filter_map(|name| doc.root().get(name).filter(|item| item.kind() == Kind::Array))
        .flat_map(|array| array.children().map(|item| item.id))
        .collect();
    if named.is_empty() {
        doc.records()
    } else {
        Some(named)
    }
}

impl Rows {
    /// The rows of `op`'s pages, as the browser shows them; amounts the records do not say the
    /// currency of are in `unit` when it is known.
    pub fn of(op: &'static crate::catalog::Operation, unit: Option<String>) -> Rows {
        Rows {
            spec: RowSpec::new(op.id_field, crate::tui::services::layout(op)).with_unit(unit),
            keyed: op.keyed,
            arrays: crate::tui::services::console(op.service).record_arrays(op),
        }
    }
}

/// The page's time series: its records are decoded only when the first one looks like a point
/// (a candle array, or an object not named by a string id) and the page is small.
fn time_series(doc: &JsonDoc, records: &[NodeId]) -> Option<TimeSeries> {
    let first = doc.item(*records.first()?);
    let candidate = match first.kind() {
        Kind::Array => true,
        Kind::Object => first.get("id").is_none_or(|id| id.kind() != Kind::String),
        _ => false,
    };
    if !candidate || doc.body().len() > CHART_BODY_LIMIT {
        return None;
    }
    // The first records decide whether the page is a series at all, so a page that is none is
    // never decoded whole.
    let decode = |ids: &[NodeId]| ids.iter().map(|id| doc.item(*id).to_value()).collect::<Vec<_>>();
    let probe = chart::detect(&decode(&records[..records.len().min(CHART_PROBE)]))?;
    if records.len() <= CHART_PROBE {
        return Some(probe);
    }
    chart::detect(&decode(records))
}

/// Runs a job on the blocking pool (inline when there is no runtime) and hands its result to
/// `done` (the app's report of it, by ticket).
pub fn spawn(
    done: impl FnOnce(Result<Indexed, JsonError>) + Send + 'static,
    body: Bytes,
    watch: Arc<Watch>,
    rows: Option<Rows>,
    value: bool,
) {
    let job = move || {
        let result = index(body, &watch, rows.as_ref(), value);
        done(result);
    };
    match tokio::runtime::Handle::try_current() {
        Ok(runtime) => drop(runtime.spawn_blocking(job)),
        Err(_) => job(),
    }
}
