//! Where tests find the data taken from other public repositories (recorded traffic, Avalara's
//! ZIP5 rate tables). The project carries none of it: it stands in `../shared/` beside the
//! checkout, or where a variable points.
//!
//! A test that needs it and does not find it fails under CI (`CI` set), saying where it looked;
//! elsewhere it prints one line saying what it skipped and why, so `cargo test` on a fresh clone
//! without `../shared` passes.

use std::io::Write;
use std::path::PathBuf;

/// Avalara's ZIP5 tables of every state and DC (`TAXRATES_ZIP5_<ST>202602.csv`).
pub const ZIP5_TABLES: SharedData = SharedData { relative: "data/tax/avalara-zip5", variable: "OPSDECK_ZIP5_DIR" };

/// The recorded real traffic of the conformance suite (`SERVICE/SOURCE.jsonl`).
pub const CONFORMANCE_RECORDINGS: SharedData =
    SharedData { relative: "conformance/recordings", variable: "OPSDECK_CONFORMANCE_DIR" };

/// A folder of `../shared`, and the variable that points elsewhere.
pub struct SharedData {
    relative: &'static str,
    variable: &'static str,
}

impl SharedData {
    /// The folder, when it exists. When it does not: under CI a panic naming where it looked,
    /// elsewhere `None` and one line on stderr naming `test` as skipped.
    pub fn for_test(&self, test: &str) -> Option<PathBuf> {
        let (path, from) = match std::env::var_os(self.variable) {
            Some(dir) => (PathBuf::from(dir), format!("set by {}", self.variable)),
            None => {
                let beside = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..").join("shared").join(self.relative);
                (beside, format!("set {} to read it from elsewhere", self.variable))
            }
        };
        if path.is_dir() {
            return Some(path);
        }
        let why = format!("{test}: no folder at {} ({from})", path.display());
        assert!(
            std::env::var_os("CI").is_none(),
            "{why}: CI must run it with the shared test data beside the checkout"
        );
        // Straight to stderr: the test harness keeps what `eprintln!` says of a passing test.
        let _ = writeln!(std::io::stderr(), "skipped {why}");
        None
    }
}
