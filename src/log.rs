//! The debug log: off unless `OPSDECK_LOG` (any `tracing` filter, e.g. `debug` or
//! `opsdeck::client=trace`) or `--debug` asks for it, and then written to a file
//! (`opsdeck.log` in the state folder, see [`crate::paths`]), appended to, without colours. It
//! never goes to the terminal: the console draws there.
//!
//! What is logged holds no secret: requests are logged by method and URL with secret-named query
//! values and every credential of the target redacted ([`crate::client::Redactor`]); headers and
//! bodies are not logged.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use tracing_subscriber::EnvFilter;

/// The variable holding the filter.
pub const LOG_VAR: &str = "OPSDECK_LOG";

/// The filter `--debug` uses when `OPSDECK_LOG` is not set: opsdeck's own events, not those of
/// every library.
pub const DEBUG_FILTER: &str = "opsdeck=debug";

/// Starts logging to `log_file` when `OPSDECK_LOG` is set (and not empty) or `debug` is true.
/// Returns where the log goes when it is on, or a warning (for stderr or the status line) when it
/// was asked for and cannot be written; nothing is logged then, and opsdeck carries on.
pub fn init(debug: bool, log_file: Option<&Path>) -> Result<Option<PathBuf>, String> {
    let directive = std::env::var(LOG_VAR).ok().filter(|v| !v.trim().is_empty());
    init_with(directive.as_deref(), debug, log_file)
}

/// [`init`] with the directive given.
pub fn init_with(directive: Option<&str>, debug: bool, log_file: Option<&Path>) -> Result<Option<PathBuf>, String> {
    let directive = match (directive, debug) {
        (Some(directive), _) => directive,
        (None, true) => DEBUG_FILTER,
        (None, false) => return Ok(None),
    };
    let filter = EnvFilter::builder()
        .parse(directive)
        .map_err(|e| format!("{LOG_VAR}={directive} is not a log filter ({e}); e.g. {LOG_VAR}=debug"))?;
    let path = log_file.ok_or("no state folder on this system for the log; set OPSDECK_STATE_DIR")?;
    let file = open_append(path).map_err(|e| format!("cannot write the log {}: {e}", path.display()))?;
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(false)
        .with_target(true)
        .with_writer(Mutex::new(file))
        .try_init()
        .map_err(|e| format!("cannot start logging: {e}"))?;
    tracing::info!(version = env!("CARGO_PKG_VERSION"), filter = directive, "opsdeck log started");
    Ok(Some(path.to_owned()))
}

/// Opens the log for appending, creating it and its folder (owner-only on Unix).
fn open_append(path: &Path) -> std::io::Result<std::fs::File> {
    let mut options = std::fs::OpenOptions::new();
    options.create(true).append(true);
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        let mut builder = std::fs::DirBuilder::new();
        builder.recursive(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
            builder.mode(0o700);
            options.mode(0o600);
        }
        builder.create(dir)?;
    }
    options.open(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn off_unless_asked_and_a_bad_filter_is_a_clear_error() {
        assert_eq!(init_with(None, false, None), Ok(None));
        let err = init_with(Some("opsdeck=loud"), false, Some(Path::new("/nonexistent/x.log"))).unwrap_err();
        assert!(err.contains("OPSDECK_LOG=opsdeck=loud is not a log filter"), "{err}");
        let err = init_with(None, true, None).unwrap_err();
        assert!(err.contains("OPSDECK_STATE_DIR"), "{err}");
    }
}
