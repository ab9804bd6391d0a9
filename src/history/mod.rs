//! The local call history: every call sent from the console or `opsdeck call`, kept in a SQLite
//! file (`history.sqlite` in the data folder, see [`crate::paths`]) so it can be listed, read
//! again, and sent again.
//!
//! What is kept: when, profile, service, operation, the parameter values, the `--body` document,
//! the target (LIVE, SANDBOX, or a URL the user gave) and its base URL, the status (or the error),
//! the duration, the response size and the response body up to `[history] max_body_bytes`. What is
//! never kept: credentials. Headers are not stored at all; every value, body and message goes
//! through a [`Redactor`] of the target's credentials (raw and Basic-encoded forms) and the values
//! of secret-named parameters and JSON fields (`mac`, `smtp_password`, `token`) are replaced.
//!
//! Several processes may write at once (the console and any number of `opsdeck call`): the file
//! is in WAL mode with a busy timeout. A history that cannot be opened (read-only or missing data
//! folder) is a warning; the call goes on.
//!
//! Recording costs less than the call: a call is one transaction (one `INSERT`) appended to the
//! WAL with `synchronous = NORMAL`, which SQLite does not sync. Nothing else writes on a call's
//! way: no connection moves the WAL into the database when it closes (SQLite's default, which
//! cost a new WAL, and four fsyncs, per `opsdeck call`), the schema is written only when its
//! version is behind, and the retention is applied at most once a day. The WAL goes into the
//! database (a checkpoint: its only fsyncs, and the WAL starts again empty) when a recorded call
//! finds it past [`CHECKPOINT_WAL_BYTES`], after a prune, and on `clear`. What WAL and `NORMAL`
//! promise holds: a crash of opsdeck loses no recorded call; a crash of the machine may lose the
//! last ones (not yet written out by the system), and neither corrupts the file.

use std::path::{Path, PathBuf};
use std::sync::{mpsc, Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use rusqlite::config::DbConfig;
use rusqlite::{params, Connection, OptionalExtension, Row, TransactionBehavior};
use serde::Serialize;
use serde_json::{Map, Value};

use crate::catalog::{Operation, Service};
use crate::client::redact::{Redactor, REDACTED};
use crate::client::{CallError, Response, Target, Values};
use crate::config::{HistorySettings, Mode};

/// Days a call is kept when `[history] retention_days` is not set.
pub const DEFAULT_RETENTION_DAYS: u32 = 90;
/// Response bytes kept per call when `[history] max_body_bytes` is not set.
pub const DEFAULT_MAX_BODY_BYTES: usize = 256 * 1024;
/// How long a write waits for another process holding the file before it gives up.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);
/// The schema below, as `PRAGMA user_version`: an open that finds it current writes nothing.
const SCHEMA_VERSION: i64 = 1;
/// The retention is applied at most this often (when something is past it).
pub const PRUNE_EVERY: Duration = Duration::from_secs(24 * 60 * 60);
/// The WAL size a recorded call moves into the database (a checkpoint, truncating the WAL). Each
/// `opsdeck call` is a new process that reads the whole WAL back when it opens the history (SQLite's
/// recovery), so the WAL is kept small; a call with a small answer adds about 20 KB to it.
pub const CHECKPOINT_WAL_BYTES: u64 = 1024 * 1024;

/// `[history]` with its defaults applied.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Settings {
    pub enabled: bool,
    /// Calls older than this many days are deleted when the history is opened (and at most once
    /// a day, so one may stay a day longer); 0 keeps them all.
    pub retention_days: u32,
    pub max_body_bytes: usize,
}

impl From<&HistorySettings> for Settings {
    fn from(settings: &HistorySettings) -> Settings {
        Settings {
            enabled: settings.enabled.unwrap_or(true),
            retention_days: settings.retention_days.unwrap_or(DEFAULT_RETENTION_DAYS),
            max_body_bytes: settings.max_body_bytes.unwrap_or(DEFAULT_MAX_BODY_BYTES),
        }
    }
}

impl Default for Settings {
    fn default() -> Settings {
        Settings::from(&HistorySettings::default())
    }
}

/// Which front end sent a call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    Console,
    Cli,
}

impl Source {
    fn name(self) -> &'static str {
        match self {
            Source::Console => "console",
            Source::Cli => "cli",
        }
    }
}

/// How a call ended, as it is to be recorded.
#[derive(Clone, Debug)]
pub enum Outcome {
    /// The service answered with a success.
    Response { status: u16, content_type: Option<String>, body: Bytes },
    /// An error status (with the vendor's error body) or no answer at all.
    Failed { status: Option<u16>, message: String, body: Bytes },
}

/// One call to record, as it happened. It still holds the credentials' [`Redactor`]: the
/// redaction and the cut of the body happen in [`History::record`], off the console's UI thread.
#[derive(Clone, Debug)]
pub struct Entry {
    pub at: SystemTime,
    pub source: Source,
    pub profile: String,
    pub service: Service,
    pub operation: String,
    pub values: Values,
    /// The whole-body document (`opsdeck call --body`), if one was given.
    pub body: Option<Value>,
    /// `LIVE`, `SANDBOX` (the embedded simulator) or `URL` (a base URL the user gave: `opsdeck
    /// sandbox` elsewhere, an `OPSDECK_*_URL`, a profile's `base_url`).
    pub target: &'static str,
    pub base_url: String,
    pub outcome: Outcome,
    pub duration: Duration,
    pub redactor: Redactor,
}

/// The label a target is recorded and shown with, in the history and on every label of the
/// console (which adds the URL's host to `URL`).
pub fn target_label(mode: &Mode) -> &'static str {
    match mode {
        Mode::Live => "LIVE",
        Mode::Embedded => "SANDBOX",
        Mode::External => "URL",
    }
}

impl Entry {
    /// The entry of one call of `op` with `values` to `target`, ended with `result`.
    #[expect(clippy::too_many_arguments, reason = "one call's facts, each from a different place")]
    pub fn new(
        source: Source,
        profile: &str,
        op: &Operation,
        values: &Values,
        body: Option<&Value>,
        target: &Target,
        mode: &Mode,
        result: Result<&Response, &CallError>,
        duration: Duration,
    ) -> Entry {
        let outcome = match result {
            Ok(response) => Outcome::Response {
                status: response.status,
                content_type: response.content_type().map(str::to_owned),
                body: response.body.clone(),
            },
            Err(error) => Outcome::Failed {
                status: error.api_error().map(|api| api.status),
                message: error.to_string(),
                body: error.api_error().map(|api| api.body.clone()).unwrap_or_default(),
            },
        };
        let duration = match result {
            Ok(response) => response.duration,
            Err(_) => duration,
        };
        Entry {
            at: SystemTime::now(),
            source,
            profile: profile.to_owned(),
            service: op.service,
            operation: op.name.to_owned(),
            values: values.clone(),
            body: body.cloned(),
            target: target_label(mode),
            base_url: target.base_url.clone(),
            outcome,
            duration,
            redactor: Redactor::for_credentials(&target.credentials),
        }
    }
}

/// One recorded call, as stored (no secret in it).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Record {
    pub id: i64,
    /// RFC 3339, UTC.
    pub time: String,
    #[serde(skip)]
    pub at_ms: i64,
    pub source: String,
    pub profile: String,
    pub target: String,
    pub base_url: String,
    pub service: String,
    pub operation: String,
    /// The parameter values, by name (secret ones as `[redacted]`).
    pub params: Map<String, Value>,
    /// The `--body` document, if one was given.
    pub body: Option<Value>,
    /// The HTTP status, when the service answered.
    pub status: Option<u16>,
    /// Why the call failed, when it did.
    pub error: Option<String>,
    pub duration_ms: u64,
    /// The whole response's size in bytes (what is stored may be cut).
    pub size: u64,
    /// Whether the stored response is only the first `max_body_bytes` of it.
    pub truncated: bool,
    pub content_type: Option<String>,
    /// The stored response body; only [`History::get`] reads it.
    #[serde(skip)]
    pub response: Option<Vec<u8>>,
}

impl Record {
    /// `200`, `HTTP 404`-style status or the error, in one short word for lists.
    pub fn status_label(&self) -> String {
        match (self.status, &self.error) {
            (Some(status), _) => status.to_string(),
            (None, Some(error)) if error == "cancelled" => "cancelled".into(),
            (None, Some(_)) => "error".into(),
            (None, None) => "-".into(),
        }
    }

    /// Whether it succeeded (a 2xx answer).
    pub fn is_success(&self) -> bool {
        self.error.is_none() && self.status.is_some_and(|s| (200..300).contains(&s))
    }

    /// The parameter values as the forms and the client take them.
    pub fn values(&self) -> Values {
        self.params
            .iter()
            .map(|(name, value)| {
                let text = match value {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                (name.clone(), text)
            })
            .collect()
    }

    /// Whether a value was withheld from the history, so the call cannot be sent again as it is.
    pub fn has_redacted_values(&self) -> bool {
        self.params.values().any(|v| v.as_str().is_some_and(|s| s.contains(REDACTED)))
            || self.body.as_ref().is_some_and(|b| b.to_string().contains(REDACTED))
    }

    /// The operation in the catalog, if it is still there.
    pub fn operation(&self) -> Option<&'static Operation> {
        Service::parse(&self.service)?.operation(&self.operation)
    }

    /// The parameter values as the `NAME=VALUE` pairs `opsdeck call` takes: a repeatable one
    /// (several `to`, several files) once per item, split by the catalog's one rule.
    pub fn given_pairs(&self) -> Vec<(String, String)> {
        let values = self.values();
        let pairs = values.iter().map(|(k, v)| (k.as_str(), v.as_str()));
        match self.operation() {
            Some(op) => {
                crate::catalog::given_pairs(op, pairs).into_iter().map(|(k, v)| (k.to_owned(), v.to_owned())).collect()
            }
            None => values.clone().into_iter().collect(),
        }
    }

    /// `name=value` pairs on one line, for lists and filters.
    pub fn params_line(&self) -> String {
        self.given_pairs().iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(" ")
    }
}

/// What [`History::list`] returns.
#[derive(Clone, Debug, Default)]
pub struct Filter {
    /// Only this service (`ably`).
    pub service: Option<String>,
    /// At most this many, newest first (0: no limit).
    pub limit: usize,
}

/// The history file, open.
pub struct History {
    conn: Connection,
    settings: Settings,
    path: PathBuf,
}

impl std::fmt::Debug for History {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("History").field("path", &self.path).field("settings", &self.settings).finish()
    }
}

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS calls (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    at_ms INTEGER NOT NULL,
    source TEXT NOT NULL,
    profile TEXT NOT NULL,
    service TEXT NOT NULL,
    operation TEXT NOT NULL,
    params TEXT NOT NULL,
    body TEXT,
    target TEXT NOT NULL,
    base_url TEXT NOT NULL,
    status INTEGER,
    error TEXT,
    duration_ms INTEGER NOT NULL,
    response_size INTEGER NOT NULL,
    response_body BLOB,
    truncated INTEGER NOT NULL DEFAULT 0,
    content_type TEXT
);
CREATE INDEX IF NOT EXISTS calls_at ON calls (at_ms);
CREATE INDEX IF NOT EXISTS calls_service ON calls (service, id);
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
";

/// The `meta` row holding when the retention was last applied (unix ms).
const PRUNED_AT: &str = "pruned_at_ms";

const COLUMNS: &str = "id, at_ms, source, profile, service, operation, params, body, target, base_url, status, \
                       error, duration_ms, response_size, truncated, content_type";

fn sql_error(path: &Path) -> impl Fn(rusqlite::Error) -> String + '_ {
    move |e| format!("history {}: {e}", path.display())
}

impl History {
    /// Opens (creating it and its folder) the history at `path`, and deletes what is older than
    /// the retention when that is due ([`History::prune_if_due`]). The file is readable by its
    /// owner only: it holds response bodies.
    pub fn open(path: &Path, settings: &HistorySettings) -> Result<History, String> {
        let history = History::open_quiet(path, Settings::from(settings))?;
        history.prune_if_due(SystemTime::now())?;
        Ok(history)
    }

    /// Opens without pruning (a second connection of the same process, for reading).
    fn open_quiet(path: &Path, settings: Settings) -> Result<History, String> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            create_private_dir(dir).map_err(|e| format!("cannot create the history folder {}: {e}", dir.display()))?;
        }
        create_private_file(path).map_err(|e| format!("cannot create the history file {}: {e}", path.display()))?;
        let error = sql_error(path);
        let conn = Connection::open(path).map_err(&error)?;
        conn.busy_timeout(BUSY_TIMEOUT).map_err(&error)?;
        // The last connection to close leaves the WAL as it is: checkpoints are `record`'s.
        conn.set_db_config(DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, true).map_err(&error)?;
        // Deleted calls (retention, clear) are overwritten, not left in free pages. No automatic
        // checkpoint: a passive one leaves the WAL to be read back whole by the next process.
        conn.execute_batch("PRAGMA synchronous = NORMAL; PRAGMA secure_delete = ON; PRAGMA wal_autocheckpoint = 0;")
            .map_err(&error)?;
        let version: i64 = conn.query_row("PRAGMA user_version", [], |row| row.get(0)).map_err(&error)?;
        if version < SCHEMA_VERSION {
            // Once per file (and per schema change); WAL mode is kept in the file from then on.
            conn.query_row("PRAGMA journal_mode = WAL", [], |row| row.get::<_, String>(0)).map_err(&error)?;
            conn.execute_batch(&format!("BEGIN IMMEDIATE; {SCHEMA} PRAGMA user_version = {SCHEMA_VERSION}; COMMIT;"))
                .map_err(&error)?;
        }
        Ok(History { conn, settings, path: path.to_owned() })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn settings(&self) -> Settings {
        self.settings
    }

    /// Records one call: secrets redacted, the body cut at `max_body_bytes`. Returns its id.
    pub fn record(&self, entry: &Entry) -> Result<i64, String> {
        let stored = StoredEntry::from_entry(entry, self.settings.max_body_bytes);
        self.conn
            .execute(
                "INSERT INTO calls (at_ms, source, profile, service, operation, params, body, target, base_url, \
                 status, error, duration_ms, response_size, response_body, truncated, content_type) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)",
                params![
                    unix_millis(entry.at),
                    entry.source.name(),
                    stored.profile,
                    entry.service.name(),
                    entry.operation,
                    stored.params,
                    stored.body,
                    entry.target,
                    stored.base_url,
                    stored.status,
                    stored.error,
                    i64::try_from(entry.duration.as_millis()).unwrap_or(i64::MAX),
                    i64::try_from(stored.size).unwrap_or(i64::MAX),
                    stored.response,
                    stored.truncated,
                    stored.content_type,
                ],
            )
            .map_err(sql_error(&self.path))?;
        let id = self.conn.last_insert_rowid();
        if self.wal_bytes() >= CHECKPOINT_WAL_BYTES {
            // The recorded call is in; a checkpoint that fails (busy) is tried again next time.
            let _ = self.checkpoint();
        }
        Ok(id)
    }

    /// The size of the WAL file (0 when there is none).
    fn wal_bytes(&self) -> u64 {
        let mut wal = self.path.clone().into_os_string();
        wal.push("-wal");
        std::fs::metadata(wal).map_or(0, |m| m.len())
    }

    /// Moves the WAL into the database and empties it (`TRUNCATE`): the one place the history
    /// syncs (the WAL, then the database; and the new WAL's header when the next call starts it).
    fn checkpoint(&self) -> Result<(), String> {
        let busy: i64 = self
            .conn
            .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |row| row.get(0))
            .map_err(sql_error(&self.path))?;
        if busy != 0 {
            return Err(format!("history {}: checkpoint deferred, the file is busy", self.path.display()));
        }
        Ok(())
    }

    /// Recorded calls, newest first, without their bodies.
    pub fn list(&self, filter: &Filter) -> Result<Vec<Record>, String> {
        let error = sql_error(&self.path);
        let limit = if filter.limit == 0 { -1 } else { i64::try_from(filter.limit).unwrap_or(i64::MAX) };
        let mut statement = self
            .conn
            .prepare(&format!(
                "SELECT {COLUMNS} FROM calls WHERE (?1 IS NULL OR service = ?1) ORDER BY id DESC LIMIT ?2"
            ))
            .map_err(&error)?;
        let rows = statement.query_map(params![filter.service, limit], |row| record(row, false)).map_err(&error)?;
        rows.collect::<Result<Vec<_>, _>>().map_err(&error)
    }

    /// One recorded call with its stored response body.
    pub fn get(&self, id: i64) -> Result<Option<Record>, String> {
        self.conn
            .query_row(&format!("SELECT {COLUMNS}, response_body FROM calls WHERE id = ?1"), [id], |row| {
                record(row, true)
            })
            .optional()
            .map_err(sql_error(&self.path))
    }

    /// Applies the retention when it is due: something is older than it and it was last applied
    /// [`PRUNE_EVERY`] ago or more (or never, or in what is now the future). Otherwise this only
    /// reads, so an open on a call's way writes nothing. Returns how many calls were deleted.
    pub fn prune_if_due(&self, now: SystemTime) -> Result<usize, String> {
        let Some(cutoff) = self.cutoff(now) else {
            return Ok(0);
        };
        let error = sql_error(&self.path);
        let last: Option<i64> = self
            .conn
            .query_row("SELECT value FROM meta WHERE name = ?1", [PRUNED_AT], |row| row.get(0))
            .optional()
            .map_err(&error)?;
        let now_ms = unix_millis(now);
        let every = i64::try_from(PRUNE_EVERY.as_millis()).unwrap_or(i64::MAX);
        if last.is_some_and(|last| last <= now_ms && now_ms - last < every) {
            return Ok(0);
        }
        let stale: bool = self
            .conn
            .query_row("SELECT EXISTS (SELECT 1 FROM calls WHERE at_ms < ?1)", [cutoff], |row| row.get(0))
            .map_err(&error)?;
        if !stale {
            return Ok(0);
        }
        self.prune(now)
    }

    /// Deletes the calls older than the retention at `now`, notes when, and checkpoints so the
    /// deleted calls' pages leave the WAL too; returns how many were deleted.
    pub fn prune(&self, now: SystemTime) -> Result<usize, String> {
        let Some(cutoff) = self.cutoff(now) else {
            return Ok(0);
        };
        let error = sql_error(&self.path);
        let transaction =
            rusqlite::Transaction::new_unchecked(&self.conn, TransactionBehavior::Immediate).map_err(&error)?;
        let deleted = transaction.execute("DELETE FROM calls WHERE at_ms < ?1", [cutoff]).map_err(&error)?;
        transaction
            .execute(
                "INSERT INTO meta (name, value) VALUES (?1, ?2) ON CONFLICT (name) DO UPDATE SET value = ?2",
                params![PRUNED_AT, unix_millis(now)],
            )
            .map_err(&error)?;
        transaction.commit().map_err(&error)?;
        if deleted > 0 {
            let _ = self.checkpoint();
        }
        Ok(deleted)
    }

    /// The time before which calls are past the retention, in unix ms; `None` when kept forever.
    fn cutoff(&self, now: SystemTime) -> Option<i64> {
        let keep = Duration::from_secs(u64::from(self.settings.retention_days) * 24 * 60 * 60);
        (self.settings.retention_days > 0).then(|| unix_millis(now.checked_sub(keep).unwrap_or(UNIX_EPOCH)))
    }

    /// Deletes every recorded call; returns how many there were.
    pub fn clear(&self) -> Result<usize, String> {
        let error = sql_error(&self.path);
        let deleted = self.conn.execute("DELETE FROM calls", []).map_err(&error)?;
        // Move the WAL's copies into the (now zeroed) file, give the pages back, and empty the WAL
        // of the rewritten pages too.
        let _ = self.conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE); VACUUM; PRAGMA wal_checkpoint(TRUNCATE);");
        Ok(deleted)
    }
}

fn record(row: &Row<'_>, with_body: bool) -> rusqlite::Result<Record> {
    let at_ms: i64 = row.get(1)?;
    let params: String = row.get(6)?;
    let body: Option<String> = row.get(7)?;
    let status: Option<i64> = row.get(10)?;
    let duration: i64 = row.get(12)?;
    let size: i64 = row.get(13)?;
    Ok(Record {
        id: row.get(0)?,
        time: rfc3339(at_ms),
        at_ms,
        source: row.get(2)?,
        profile: row.get(3)?,
        service: row.get(4)?,
        operation: row.get(5)?,
        params: serde_json::from_str(&params).unwrap_or_default(),
        body: body.and_then(|b| serde_json::from_str(&b).ok()),
        target: row.get(8)?,
        base_url: row.get(9)?,
        status: status.and_then(|s| u16::try_from(s).ok()),
        error: row.get(11)?,
        duration_ms: u64::try_from(duration).unwrap_or(0),
        size: u64::try_from(size).unwrap_or(0),
        truncated: row.get::<_, i64>(14)? != 0,
        content_type: row.get(15)?,
        response: if with_body { row.get::<_, Option<Vec<u8>>>(16)? } else { None },
    })
}

/// An entry as it goes into the file: every text redacted, the body cut.
struct StoredEntry {
    profile: String,
    params: String,
    body: Option<String>,
    base_url: String,
    status: Option<u16>,
    error: Option<String>,
    size: usize,
    response: Vec<u8>,
    truncated: bool,
    content_type: Option<String>,
}

impl StoredEntry {
    fn from_entry(entry: &Entry, max_body_bytes: usize) -> StoredEntry {
        // The secrets the call carries in its own content (a webhook's secret or custom
        // Authorization header in a JSON value, a URL's password) are learned from every column
        // first, so each is removed from every other column too.
        let mut learned = entry.redactor.clone();
        for value in entry.values.values() {
            learned.learn(value.as_bytes());
        }
        let body_text = entry.body.as_ref().map(Value::to_string);
        if let Some(text) = &body_text {
            learned.learn(text.as_bytes());
        }
        let (status, error, content_type, response) = match &entry.outcome {
            Outcome::Response { status, content_type, body } => (Some(*status), None, content_type.clone(), body),
            Outcome::Failed { status, message, body } => (*status, Some(message), None, body),
        };
        if let Some(message) = error {
            learned.learn(message.as_bytes());
        }
        // Only the part that may be kept is read for secrets: a huge body is never parsed whole.
        learned.learn(&response[..max_body_bytes.min(response.len())]);
        let redactor = &learned;
        let params: Map<String, Value> = entry
            .values
            .iter()
            .map(|(name, value)| (name.clone(), Value::String(redactor.param(name, value))))
            .collect();
        let body = body_text.map(|text| String::from_utf8_lossy(&redactor.scrub(text.as_bytes())).into_owned());
        let error = error.map(|message| String::from_utf8_lossy(&redactor.scrub(message.as_bytes())).into_owned());
        let (kept, truncated) = kept_body(response, max_body_bytes, redactor);
        StoredEntry {
            profile: redactor.text(&entry.profile),
            params: Value::Object(params).to_string(),
            body,
            base_url: redactor.url(&entry.base_url),
            status,
            error,
            size: response.len(),
            response: kept,
            truncated,
            content_type,
        }
    }
}

/// The part of a response body that is kept: at most about `cap` bytes (a secret across the cut
/// is kept whole so it can be found and removed), secret fields and credentials redacted, and a
/// character cut in half at the end dropped.
fn kept_body(body: &[u8], cap: usize, redactor: &Redactor) -> (Vec<u8>, bool) {
    let cut = redactor.cut_outside_secrets(body, cap.min(body.len()));
    let truncated = cut < body.len();
    let mut kept = redactor.scrub(&body[..cut]);
    if truncated {
        if let Err(e) = std::str::from_utf8(&kept) {
            if e.error_len().is_none() {
                kept.truncate(e.valid_up_to());
            }
        }
    }
    (kept, truncated)
}

fn unix_millis(at: SystemTime) -> i64 {
    at.duration_since(UNIX_EPOCH).map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

fn datetime(at_ms: i64) -> time::OffsetDateTime {
    let nanos = i128::from(at_ms) * 1_000_000;
    time::OffsetDateTime::from_unix_timestamp_nanos(nanos).unwrap_or(time::OffsetDateTime::UNIX_EPOCH)
}

/// `2025-06-01T12:34:56.789Z`.
pub fn rfc3339(at_ms: i64) -> String {
    datetime(at_ms).format(&time::format_description::well_known::Rfc3339).unwrap_or_default()
}

/// `2025-06-01 12:34:56` (UTC), for lists.
pub fn short_time(at_ms: i64) -> String {
    let format = time::macros::format_description!("[year]-[month]-[day] [hour]:[minute]:[second]");
    datetime(at_ms).format(&format).unwrap_or_default()
}

#[cfg(unix)]
fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir)
}

#[cfg(not(unix))]
fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)
}

/// Creates the file readable by its owner only (SQLite gives its WAL the same mode).
#[cfg(unix)]
fn create_private_file(path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new().create(true).append(true).mode(0o600).open(path).map(drop)
}

#[cfg(not(unix))]
fn create_private_file(path: &Path) -> std::io::Result<()> {
    std::fs::OpenOptions::new().create(true).append(true).open(path).map(drop)
}

/// The history of a command-line call: `None` when recording is off; a warning (for stderr)
/// when it cannot be opened, since the call works without it.
pub fn open_for_call(path: Option<&Path>, settings: &HistorySettings) -> (Option<History>, Option<String>) {
    if !Settings::from(settings).enabled {
        return (None, None);
    }
    let Some(path) = path else {
        return (None, Some("no data folder on this system: calls are not recorded in the history".into()));
    };
    match History::open(path, settings) {
        Ok(history) => (Some(history), None),
        Err(e) => (None, Some(format!("{e}; this call is not recorded in the history"))),
    }
}

/// What the writer thread is asked to do.
enum Job {
    Record(Box<Entry>),
    /// Answer once everything queued before is written.
    Flush(mpsc::Sender<()>),
}

/// The console's writer: records on a thread of its own, so a slow disk or another process
/// holding the file (a write waits up to 5 s for it) never stalls the UI thread. The event handler
/// only moves the entry (the response body is shared `Bytes`, not copied) into a channel; the
/// redaction and the cut of the body also happen on that thread.
pub struct Recorder {
    sender: Option<mpsc::Sender<Job>>,
    thread: Option<JoinHandle<()>>,
    /// The first write that failed, for the status line (later failures are not repeated).
    failure: Arc<Mutex<Option<String>>>,
    path: PathBuf,
    settings: Settings,
}

impl Recorder {
    /// Opens the history at `path` (pruning it) and starts the writer. `Ok(None)` when recording
    /// is off.
    pub fn start(path: Option<&Path>, settings: &HistorySettings) -> Result<Option<Recorder>, String> {
        let resolved = Settings::from(settings);
        if !resolved.enabled {
            return Ok(None);
        }
        let path = path.ok_or("no data folder on this system: calls are not recorded in the history")?;
        let history = History::open(path, settings)?;
        let (sender, receiver) = mpsc::channel::<Job>();
        let failure = Arc::new(Mutex::new(None));
        let report = failure.clone();
        let thread = std::thread::Builder::new()
            .name("opsdeck-history".into())
            .spawn(move || {
                let mut failed = false;
                for job in receiver {
                    let entry = match job {
                        Job::Record(entry) => entry,
                        Job::Flush(done) => {
                            let _ = done.send(());
                            continue;
                        }
                    };
                    if let Err(e) = history.record(&entry) {
                        if !failed {
                            *report.lock().unwrap_or_else(PoisonError::into_inner) = Some(e);
                            failed = true;
                        }
                    }
                }
            })
            .map_err(|e| format!("cannot start the history writer: {e}"))?;
        Ok(Some(Recorder {
            sender: Some(sender),
            thread: Some(thread),
            failure,
            path: path.to_owned(),
            settings: resolved,
        }))
    }

    /// Queues one call; never waits.
    pub fn record(&self, entry: Entry) {
        if let Some(sender) = &self.sender {
            let _ = sender.send(Job::Record(Box::new(entry)));
        }
    }

    /// Waits (at most `timeout`) until every call queued so far is written; false on time out.
    pub fn flush(&self, timeout: Duration) -> bool {
        let (done, wait) = mpsc::channel();
        self.sender.as_ref().is_some_and(|s| s.send(Job::Flush(done)).is_ok()) && wait.recv_timeout(timeout).is_ok()
    }

    /// A write failure not reported yet.
    pub fn take_failure(&self) -> Option<String> {
        self.failure.lock().unwrap_or_else(PoisonError::into_inner).take()
    }

    /// A connection for reading (the history view); writes stay on the writer's thread.
    pub fn reader(&self) -> Result<History, String> {
        History::open_quiet(&self.path, self.settings)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for Recorder {
    /// Writes what is still queued before the console exits.
    fn drop(&mut self) {
        drop(self.sender.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_body_is_cut_whole_characters_and_secrets_first() {
        let redactor =
            Redactor::for_credentials(&crate::client::Credentials::Taxjar(crate::client::Secret::new("tok-123456")));
        let body = "ééééé".as_bytes();
        let (kept, truncated) = kept_body(body, 5, &redactor);
        assert_eq!((kept.as_slice(), truncated), ("éé".as_bytes(), true));
        let body = b"0123tok-123456789";
        let (kept, truncated) = kept_body(body, 6, &redactor);
        assert_eq!((String::from_utf8(kept).unwrap().as_str(), truncated), ("0123[redacted]", true));
        let (kept, truncated) = kept_body(b"short", 100, &redactor);
        assert_eq!((kept.as_slice(), truncated), (b"short".as_slice(), false));
    }

    /// A folder of its own for one test, empty.
    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("opsdeck-history-unit-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn entry(at: SystemTime, body: Vec<u8>) -> Entry {
        Entry {
            at,
            source: Source::Cli,
            profile: "default".into(),
            service: Service::Ably,
            operation: "time_get".into(),
            values: Values::new(),
            body: None,
            target: "SANDBOX",
            base_url: "http://127.0.0.1:1".into(),
            outcome: Outcome::Response { status: 200, content_type: None, body: body.into() },
            duration: Duration::from_millis(1),
            redactor: Redactor::default(),
        }
    }

    fn settings(retention_days: u32) -> HistorySettings {
        HistorySettings { enabled: None, retention_days: Some(retention_days), max_body_bytes: Some(1 << 20) }
    }

    fn read(path: &Path, suffix: &str) -> Vec<u8> {
        let mut name = path.as_os_str().to_owned();
        name.push(suffix);
        std::fs::read(name).unwrap_or_default()
    }

    /// The transactions in the WAL since it was last started: its frames that end one (a commit
    /// frame holds the database size) and carry the WAL header's salt.
    fn wal_commits(path: &Path) -> usize {
        let wal = read(path, "-wal");
        if wal.len() < 32 {
            return 0;
        }
        let page = u32::from_be_bytes([wal[8], wal[9], wal[10], wal[11]]) as usize;
        let salt = &wal[16..24];
        let frames = wal[32..].chunks_exact(24 + page);
        frames.take_while(|frame| &frame[8..16] == salt).filter(|frame| frame[4..8] != [0; 4]).count()
    }

    #[test]
    fn a_recorded_call_is_one_transaction_in_the_wal_and_the_database_file_is_not_written() {
        let path = scratch("one-transaction").join("history.sqlite");
        let history = History::open(&path, &settings(90)).unwrap();
        history.record(&entry(SystemTime::now(), b"[1]".to_vec())).unwrap();
        drop(history);
        let (database, commits) = (read(&path, ""), wal_commits(&path));

        let history = History::open(&path, &settings(90)).unwrap();
        assert_eq!(wal_commits(&path), commits, "opening writes nothing");
        history.record(&entry(SystemTime::now(), b"[2]".to_vec())).unwrap();
        assert_eq!(wal_commits(&path), commits + 1, "one call, one transaction");
        drop(history);
        assert_eq!(wal_commits(&path), commits + 1, "closing leaves the WAL as it is");
        assert!(read(&path, "") == database, "the database file is written only by a checkpoint");
        let history = History::open(&path, &settings(90)).unwrap();
        assert_eq!(history.list(&Filter::default()).unwrap().len(), 2, "read back from the WAL");
    }

    #[test]
    fn the_retention_is_applied_when_due_at_most_once_a_day() {
        let path = scratch("retention-due").join("history.sqlite");
        let now = SystemTime::now();
        let days = |n: u64| Duration::from_secs(n * 24 * 60 * 60);
        let history = History::open(&path, &settings(30)).unwrap();
        history.record(&entry(now - days(31), Vec::new())).unwrap();
        drop(history);
        // Never applied and something is past it: the open applies it.
        let history = History::open(&path, &settings(30)).unwrap();
        assert!(history.list(&Filter::default()).unwrap().is_empty());
        history.record(&entry(now - days(40), Vec::new())).unwrap();
        drop(history);
        // Applied less than a day ago: an open only reads.
        let commits = wal_commits(&path);
        let history = History::open(&path, &settings(30)).unwrap();
        assert_eq!(history.list(&Filter::default()).unwrap().len(), 1, "not due yet");
        assert_eq!(wal_commits(&path), commits, "nothing was written");
        assert_eq!(history.prune_if_due(now + PRUNE_EVERY - Duration::from_secs(60)).unwrap(), 0);
        assert_eq!(history.prune_if_due(now + PRUNE_EVERY + Duration::from_secs(60)).unwrap(), 1, "a day later it is");
        assert_eq!(history.prune_if_due(now + PRUNE_EVERY * 3).unwrap(), 0, "nothing past it: no write");
        assert_eq!(wal_commits(&path), 0, "a prune that deleted calls empties the WAL into the file");
    }

    #[test]
    fn a_wal_past_its_limit_goes_into_the_database_and_starts_again() {
        let path = scratch("checkpoint").join("history.sqlite");
        let history = History::open(&path, &settings(90)).unwrap();
        let body = vec![b'x'; 64 * 1024];
        let mut recorded = 0;
        while history.wal_bytes() < CHECKPOINT_WAL_BYTES - 80 * 1024 {
            history.record(&entry(SystemTime::now(), body.clone())).unwrap();
            recorded += 1;
        }
        let database = read(&path, "").len();
        history.record(&entry(SystemTime::now(), body.clone())).unwrap();
        history.record(&entry(SystemTime::now(), body)).unwrap();
        assert!(read(&path, "").len() > database + 2 * 64 * 1024, "the calls are in the database file");
        assert!(wal_commits(&path) <= 1, "the WAL started again: {} commits", wal_commits(&path));
        assert_eq!(history.list(&Filter::default()).unwrap().len(), recorded + 2);
    }

    #[test]
    fn times_read_as_utc() {
        assert_eq!(short_time(1_700_000_000_123), "2023-11-14 22:13:20");
        assert_eq!(rfc3339(1_700_000_000_123), "2023-11-14T22:13:20.123Z");
    }
}
