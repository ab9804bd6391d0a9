//! Copying text out of the console, by the first way that can work here: the terminal (OSC 52,
//! which also works over SSH), the system clipboard (`arboard`), or the user's `clipboard_cmd`.
//! Each way says honestly what it did, and when none can, why not, so the console can show the
//! text for the user to select instead.

use std::fmt;
use std::io::Write;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How long `clipboard_cmd` may take before it is stopped (`xclip` and `wl-copy` fork and return).
const COMMAND_TIMEOUT: Duration = Duration::from_secs(3);

/// What decides whether OSC 52 reaches a clipboard: the terminal type, and inside tmux its
/// `set-clipboard` option (only `on` passes an application's OSC 52 on).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TerminalInfo {
    /// `TERM`.
    pub term: Option<String>,
    /// Whether `TMUX` is set.
    pub tmux: bool,
    /// `tmux show -gv set-clipboard`, when inside tmux and it answered.
    pub tmux_set_clipboard: Option<String>,
}

impl TerminalInfo {
    /// Reads the environment, and asks tmux for its option when inside it.
    pub fn detect() -> TerminalInfo {
        let tmux = std::env::var_os("TMUX").is_some_and(|v| !v.is_empty());
        let tmux_set_clipboard = if tmux {
            Command::new("tmux")
                .args(["show", "-gv", "set-clipboard"])
                .stdin(Stdio::null())
                .stderr(Stdio::null())
                .output()
                .ok()
                .filter(|o| o.status.success())
                .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        } else {
            None
        };
        TerminalInfo { term: std::env::var("TERM").ok(), tmux, tmux_set_clipboard }
    }
}

/// Whether an OSC 52 write can reach a clipboard here; the reason when it cannot. A terminal
/// does not answer OSC 52, so "can" means "nothing known stops it".
pub fn osc52_reaches_clipboard(info: &TerminalInfo) -> Result<(), String> {
    if info.tmux {
        return match info.tmux_set_clipboard.as_deref() {
            Some("on") => Ok(()),
            Some(other) => {
                Err(format!("tmux has set-clipboard {other} (`tmux set -g set-clipboard on` lets OSC 52 through)"))
            }
            None => Err("tmux did not say whether set-clipboard is on".to_owned()),
        };
    }
    match info.term.as_deref() {
        Some("linux") => Err("the Linux console (TERM=linux) has no OSC 52".to_owned()),
        Some("dumb") | None => Err("TERM is dumb or unset: no OSC 52".to_owned()),
        Some(_) => Ok(()),
    }
}

/// The OSC 52 sequence that sets the clipboard to `text`. The text is base64, so whatever it
/// holds (a BEL, an ESC, a whole other escape from a server) cannot end the sequence early.
pub fn osc52(text: &str) -> String {
    use base64::Engine as _;
    format!("\x1b]52;c;{}\x07", base64::engine::general_purpose::STANDARD.encode(text))
}

/// How text was copied, for the status line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Copied {
    /// Written to the terminal as OSC 52.
    Osc52,
    /// Put on the system clipboard (X11 and the like).
    System,
    /// Given on stdin to the configured `clipboard_cmd`, which exited 0.
    Command(String),
}

impl fmt::Display for Copied {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Copied::Osc52 => write!(f, "via OSC 52 (terminal)"),
            Copied::System => write!(f, "via the system clipboard"),
            Copied::Command(command) => write!(f, "via clipboard_cmd `{command}`"),
        }
    }
}

/// The console's clipboard: what it learnt about the terminal (once), the system clipboard
/// (kept open: on X11 the copied text lives as long as its owner), and `clipboard_cmd`.
pub struct Clipboard {
    terminal: Option<TerminalInfo>,
    system: Option<arboard::Clipboard>,
    command: Option<String>,
}

impl fmt::Debug for Clipboard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Clipboard").field("terminal", &self.terminal).field("command", &self.command).finish()
    }
}

impl Clipboard {
    /// A clipboard that falls back to `command` (`wl-copy`, `xclip -selection clipboard`).
    pub fn new(command: Option<String>) -> Clipboard {
        Clipboard { terminal: None, system: None, command: command.filter(|c| !c.trim().is_empty()) }
    }

    /// A clipboard for a known terminal (tests, and terminals detected elsewhere).
    pub fn with_terminal(info: TerminalInfo, command: Option<String>) -> Clipboard {
        Clipboard { terminal: Some(info), ..Clipboard::new(command) }
    }

    /// Copies `text` by the first way that works: OSC 52 written to `terminal`, the system
    /// clipboard, `clipboard_cmd`. The error lists why each way could not.
    pub fn copy(&mut self, text: &str, terminal: &mut dyn Write) -> Result<Copied, String> {
        let info = self.terminal.get_or_insert_with(TerminalInfo::detect);
        let mut reasons = Vec::new();
        match osc52_reaches_clipboard(info) {
            Ok(()) => match terminal.write_all(osc52(text).as_bytes()).and_then(|()| terminal.flush()) {
                Ok(()) => return Ok(Copied::Osc52),
                Err(e) => reasons.push(format!("OSC 52: {e}")),
            },
            Err(why) => reasons.push(why),
        }
        match self.copy_system(text) {
            Ok(()) => return Ok(Copied::System),
            Err(why) => reasons.push(format!("system clipboard: {why}")),
        }
        match &self.command {
            Some(command) => match run_command(command, text) {
                Ok(()) => return Ok(Copied::Command(command.clone())),
                Err(why) => reasons.push(why),
            },
            None => reasons.push("no clipboard_cmd in config.toml".to_owned()),
        }
        Err(reasons.join("; "))
    }

    fn copy_system(&mut self, text: &str) -> Result<(), String> {
        if self.system.is_none() {
            self.system = Some(arboard::Clipboard::new().map_err(|e| e.to_string())?);
        }
        let Some(system) = self.system.as_mut() else { return Err("unavailable".to_owned()) };
        system.set_text(text.to_owned()).map_err(|e| {
            self.system = None;
            e.to_string()
        })
    }
}

/// Runs `command` with `sh -c`, `text` on its stdin; Ok when it exits 0 within the timeout. Its
/// output goes nowhere: the console owns the screen.
pub fn run_command(command: &str, text: &str) -> Result<(), String> {
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(command)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("clipboard_cmd `{command}` did not start: {e}"))?;
    if let Some(mut stdin) = child.stdin.take() {
        // A command that exits without reading is judged by its exit status below.
        let _ = stdin.write_all(text.as_bytes());
    }
    let started = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(status)) if status.success() => return Ok(()),
            Ok(Some(status)) => return Err(format!("clipboard_cmd `{command}` failed ({status})")),
            Ok(None) if started.elapsed() > COMMAND_TIMEOUT => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("clipboard_cmd `{command}` took over {} s", COMMAND_TIMEOUT.as_secs()));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(10)),
            Err(e) => return Err(format!("clipboard_cmd `{command}`: {e}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(term: &str, tmux: Option<&str>) -> TerminalInfo {
        TerminalInfo {
            term: Some(term.to_owned()),
            tmux: tmux.is_some(),
            tmux_set_clipboard: tmux.filter(|v| !v.is_empty()).map(str::to_owned),
        }
    }

    #[test]
    fn osc52_is_used_where_nothing_stops_it() {
        assert_eq!(osc52_reaches_clipboard(&info("xterm-256color", None)), Ok(()));
        assert_eq!(osc52_reaches_clipboard(&info("tmux-256color", Some("on"))), Ok(()));
        let external = osc52_reaches_clipboard(&info("tmux-256color", Some("external"))).unwrap_err();
        assert!(external.contains("set-clipboard external"), "{external}");
        assert!(osc52_reaches_clipboard(&info("screen", Some(""))).is_err(), "tmux that does not answer");
        assert!(osc52_reaches_clipboard(&info("linux", None)).unwrap_err().contains("Linux console"));
        assert!(osc52_reaches_clipboard(&info("dumb", None)).is_err());
    }

    #[test]
    fn copied_text_cannot_break_out_of_the_clipboard_escape() {
        let hostile = "id\x07\x1b]52;c;ZXZpbA==\x07\x1b[2J\u{9c}";
        let sequence = osc52(hostile);
        let payload = sequence.strip_prefix("\x1b]52;c;").and_then(|s| s.strip_suffix('\x07')).expect("framed");
        assert!(payload.chars().all(|c| c.is_ascii_alphanumeric() || "+/=".contains(c)), "{payload}");
        use base64::Engine as _;
        let decoded = base64::engine::general_purpose::STANDARD.decode(payload).expect("base64");
        assert_eq!(decoded, hostile.as_bytes());
    }

    #[test]
    fn the_terminal_gets_osc52_when_it_can() {
        let mut clipboard = Clipboard::with_terminal(info("xterm", None), None);
        let mut out = Vec::new();
        assert_eq!(clipboard.copy("curl x", &mut out), Ok(Copied::Osc52));
        assert_eq!(out, osc52("curl x").into_bytes());
        assert_eq!(Copied::Osc52.to_string(), "via OSC 52 (terminal)");
    }

    #[cfg(unix)]
    #[test]
    fn clipboard_cmd_gets_the_text_on_stdin_when_the_terminal_cannot() {
        let file = std::env::temp_dir().join(format!("opsdeck-clipboard-{}", std::process::id()));
        let command = format!("cat > '{}'", file.display());
        let mut clipboard = Clipboard::with_terminal(info("linux", None), Some(command.clone()));
        let mut out = Vec::new();
        let copied = clipboard.copy("http GET 'u'", &mut out);
        // A machine with a display may take it on the system clipboard first; either is honest.
        match copied {
            Ok(Copied::Command(c)) => {
                assert_eq!(c, command);
                assert_eq!(std::fs::read_to_string(&file).expect("written"), "http GET 'u'");
            }
            Ok(Copied::System) => {}
            other => panic!("{other:?}"),
        }
        assert!(out.is_empty(), "nothing written to a terminal that cannot take it");
        let _ = std::fs::remove_file(&file);

        let mut failing = Clipboard::with_terminal(info("linux", None), Some("exit 3".into()));
        if let Err(why) = failing.copy("x", &mut out) {
            assert!(why.contains("Linux console") && why.contains("`exit 3` failed"), "{why}");
        }
        let mut none = Clipboard::with_terminal(info("dumb", None), None);
        if let Err(why) = none.copy("x", &mut out) {
            assert!(why.contains("no clipboard_cmd"), "{why}");
        }
    }
}
