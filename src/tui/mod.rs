//! The console: state, keys and drawing. The only module that knows about the terminal.
//!
//! The loop waits on terminal input, call results, background reports (bodies indexed, files
//! saved, sandbox reads) and the next deadline, and draws only after something changed, so an
//! idle console uses no CPU.

pub mod app;
pub mod areas;
#[cfg(test)]
mod boundary_tests;
pub mod components;
pub mod draw;
pub mod harness;
pub mod indexer;
pub mod json_tree;
pub mod keymap;
pub mod services;
pub mod setup;
pub mod svg;
pub mod tab;
#[cfg(test)]
mod tests;
pub mod theme;

use std::io::{self, IsTerminal as _, Stdout};

use crossterm::event::{
    DisableBracketedPaste, DisableMouseCapture, EnableBracketedPaste, EnableMouseCapture, Event, EventStream,
    KeyEventKind,
};
use crossterm::execute;
use crossterm::terminal::{disable_raw_mode, enable_raw_mode, EnterAlternateScreen, LeaveAlternateScreen};
use futures_util::StreamExt;
use ratatui::backend::CrosstermBackend;
use ratatui::Terminal;
use tokio::sync::mpsc;

use crate::args::GlobalArgs;
use crate::catalog::Service;
use crate::client::{self, CallEvent, Executor};
use crate::config::{self, Config};
use crate::sandbox::{self, Sandbox, SandboxOptions};
use app::App;
use setup::Setup;
use tab::Tab;

/// Everything the console needs, built without a terminal (so tests and benchmarks can too).
pub struct Console {
    pub app: App,
    pub events: mpsc::UnboundedReceiver<CallEvent>,
    /// What background tasks that are no API call bring back: the sandbox view's reads, files
    /// saved.
    pub background: mpsc::UnboundedReceiver<app::Background>,
    /// The embedded simulators; they stop when the console goes.
    pub sandbox: Sandbox,
}

/// Loads config and theme, starts the embedded simulators and builds the app, recording calls
/// in the history file of [`crate::paths::Paths`] (a history that cannot be opened is a warning
/// in the status line; the console works without it).
pub async fn start(global: &GlobalArgs) -> anyhow::Result<Console> {
    let config = Config::load(global.config.as_deref())?;
    let history = config.history.clone();
    let mut console = start_with(config, &|name| std::env::var(name).ok(), global).await?;
    let file = crate::paths::Paths::current(global.config.as_deref()).history_file;
    match crate::history::Recorder::start(file.as_deref(), &history) {
        Ok(recorder) => console.app.history = recorder,
        Err(e) => console.app.warn(format!("{e}; calls are not recorded in the history")),
    }
    Ok(console)
}

/// [`start`] with the config and environment given, for tests. The embedded AvaTax and TaxJar
/// calculate with the rate tables the environment or the config name: a table that cannot be
/// loaded stops the start, saying why, as a bad config does.
pub async fn start_with(
    config: Config,
    env: &dyn Fn(&str) -> Option<String>,
    global: &GlobalArgs,
) -> anyhow::Result<Console> {
    let tax_tables = crate::config::tax_tables(None, env, &config).map_err(anyhow::Error::msg)?;
    let access = crate::config::sandbox_access(&config).map_err(anyhow::Error::msg)?;
    let options = SandboxOptions { tax_tables, access, ..SandboxOptions::new(0, sandbox::DEFAULT_SEED) };
    start_with_sandbox(config, env, global, options).await
}

/// [`start_with`] with the embedded sandbox started as `options` say (a test's start hook).
/// Its listeners are bound here, so every tab knows its base URL; no simulator is built or
/// seeded before the first frame: each is built when its tab is first shown or a call reaches it.
pub async fn start_with_sandbox(
    config: Config,
    env: &dyn Fn(&str) -> Option<String>,
    global: &GlobalArgs,
    options: SandboxOptions,
) -> anyhow::Result<Console> {
    let sandbox = sandbox::start_options(options).await?;
    let user_themes = crate::paths::Paths::current(global.config.as_deref()).themes_dir;
    let mut setup = Setup::new(config, env, &sandbox, global.read_only, user_themes);
    // What start reads is kept, so a profile chosen later resolves against the same environment.
    let seen = std::cell::RefCell::new(std::collections::HashMap::new());
    let env = Setup::recording(env, &seen);
    let config = &setup.config;
    let resolved = config.resolve(global.profile.as_deref(), &env, &|s, r| sandbox.region_base_url(s, r))?;
    let config_warnings = config::startup_warnings(config, &resolved);
    let theme_name = global.theme.clone().or_else(|| config.theme.clone()).unwrap_or_else(|| "dark".into());
    let (theme, warning) = theme::Theme::for_terminal(&theme_name, setup.themes_dir.as_deref(), &env);
    let settings = config.http_settings();
    let http = client::http_client(&settings)?;
    let (sender, events) = mpsc::unbounded_channel();
    let executor = Executor::new(http, settings, config.max_concurrent_calls(), sender);
    let tabs = resolved.into_iter().map(|r| Tab::new(r.target.service, r.target, r.mode)).collect();
    let profile = setup.profile_name(global.profile.as_deref());
    let read_only = setup.read_only(&profile);
    let (keymap, key_problems) = keymap::Keymap::new(&config.keys);
    let auto_refresh_secs = config.auto_refresh_secs;
    let mouse = config.mouse.unwrap_or(false);
    let clipboard_cmd = config.clipboard_cmd.clone();
    let mut app = App::new(tabs, executor, theme, profile, read_only);
    app.clipboard_cmd = clipboard_cmd;
    if let Some(seconds) = auto_refresh_secs {
        app.auto_refresh_every = std::time::Duration::from_secs(seconds.max(1));
    }
    app.keymap = keymap;
    app.mouse = mouse;
    debug_assert_eq!(app.tabs.len(), Service::ALL.len());
    // A bad theme, a bad key or a risky config never blocks start: the status bar says what is wrong.
    let warnings: Vec<String> = warning.into_iter().chain(config_warnings).chain(key_problems).collect();
    if !warnings.is_empty() {
        app.warn(warnings.join("; "));
    }
    drop(env);
    setup.remember(seen.into_inner());
    app.setup = Some(setup);
    let (background_sender, background) = mpsc::unbounded_channel();
    app.background = Some(background_sender);
    app.arm_filter_wakers();
    app.embedded_control = Some(sandbox.control_url());
    app.sandbox = Some(sandbox.handle());
    Ok(Console { app, events, background, sandbox })
}

/// What a console started without a terminal says instead of drawing a broken screen.
pub const NEEDS_A_TERMINAL: &str = "the console needs a terminal; use `opsdeck call` in scripts and pipes";

/// Runs the console until the user quits, Ctrl-C, SIGINT, SIGHUP or SIGTERM; the terminal is
/// restored on every way out, panics included.
/// `log_warning` says why a debug log that was asked for is not written.
pub async fn run(global: &GlobalArgs, log_warning: Option<String>) -> anyhow::Result<()> {
    let started = std::time::Instant::now();
    if !(io::stdin().is_terminal() && io::stdout().is_terminal()) {
        anyhow::bail!(NEEDS_A_TERMINAL);
    }
    let mut console = start(global).await?;
    if let Some(warning) = log_warning {
        console.app.warn(warning);
    }
    install_panic_hook();
    let mut terminal = enter_terminal(console.app.mouse)?;
    let result = event_loop(&mut terminal, &mut console).await;
    leave_terminal();
    if let Ok(Some(drawn)) = result {
        eprintln!("first complete frame {:.2} ms after start", (drawn - started).as_secs_f64() * 1000.0);
    }
    console.sandbox.shutdown();
    result.map(|_| ())
}

/// `mouse`: capture clicks and the wheel (`mouse = true`); off by default, so the terminal's
/// own text selection keeps working.
fn enter_terminal(mouse: bool) -> anyhow::Result<Terminal<CrosstermBackend<Stdout>>> {
    enable_raw_mode()?;
    // Bracketed paste: a pasted `orders:eu` arrives as one text, not as the keys `o`, `r`, ….
    let mut entered = execute!(io::stdout(), EnterAlternateScreen, EnableBracketedPaste);
    if mouse && entered.is_ok() {
        entered = execute!(io::stdout(), EnableMouseCapture);
    }
    if let Err(e) = entered {
        leave_terminal();
        return Err(e.into());
    }
    Ok(Terminal::new(CrosstermBackend::new(io::stdout()))?)
}

/// Leaves the screen, runs `$VISUAL`/`$EDITOR` on `text`, and takes the screen back.
fn edit_outside(terminal: &mut Terminal<CrosstermBackend<Stdout>>, text: &str, mouse: bool) -> Result<String, String> {
    leave_terminal();
    let editor = components::form::editor_command(&|name| std::env::var(name).ok());
    let result = components::form::run_editor(&editor, text);
    let back = enable_raw_mode()
        .and_then(|()| execute!(io::stdout(), EnterAlternateScreen, EnableBracketedPaste))
        .and_then(|()| if mouse { execute!(io::stdout(), EnableMouseCapture) } else { Ok(()) })
        .and_then(|()| terminal.clear());
    match back {
        Ok(()) => result,
        Err(e) => Err(format!("the terminal could not be taken back: {e}")),
    }
}

/// Restores the terminal; safe to call more than once.
fn leave_terminal() {
    let _ = disable_raw_mode();
    let _ = execute!(
        io::stdout(),
        DisableMouseCapture,
        DisableBracketedPaste,
        LeaveAlternateScreen,
        crossterm::cursor::Show
    );
}

/// Restores the terminal before the default hook prints the panic, so the message is readable.
/// Only a panic of the console's own thread does: a simulator's panic (a request, a build) is
/// caught and answered as a 500 while the console goes on, so the screen must stay.
fn install_panic_hook() {
    let previous = std::panic::take_hook();
    let console = std::thread::current().id();
    std::panic::set_hook(Box::new(move |info| {
        if std::thread::current().id() == console {
            leave_terminal();
            previous(info);
        } else {
            tracing::error!("panic off the console's thread: {info}");
        }
    }));
}

/// Returns when the first complete frame was drawn if `OPSDECK_EXIT_AFTER_FIRST_FRAME` asked
/// to stop there (benches/process.sh), else `None`.
async fn event_loop(
    terminal: &mut Terminal<CrosstermBackend<Stdout>>,
    console: &mut Console,
) -> anyhow::Result<Option<std::time::Instant>> {
    let app = &mut console.app;
    app.start_tab();
    let mut input = EventStream::new();
    let mut terminate = Signals::new();
    let mut dirty = true;
    // For benches/process.sh: stop after the first complete frame (data loaded and drawn).
    let exit_after_first_frame = std::env::var_os("OPSDECK_EXIT_AFTER_FIRST_FRAME").is_some();
    let mut clipboard = crate::clipboard::Clipboard::new(app.clipboard_cmd.clone());
    loop {
        if let Some(text) = app.clipboard.take() {
            let result = clipboard.copy(&text, &mut io::stdout());
            app.on_copied(text, result);
        }
        if let Some(request) = app.pending_editor.take() {
            // The editor gets the terminal: no reader may take its keys meanwhile.
            drop(input);
            let result = edit_outside(terminal, &request.text, app.mouse);
            input = EventStream::new();
            app.on_edited(&request, result);
            dirty = true;
        }
        if dirty {
            terminal.draw(|frame| draw::draw(frame, app))?;
            dirty = false;
            if exit_after_first_frame && app.executor.active_count() == 0 && app.indexing.is_empty() {
                return Ok(Some(std::time::Instant::now()));
            }
        }
        let deadline = app.next_deadline();
        tokio::select! {
            biased;
            () = terminate.wait() => break,
            Some(event) = console.events.recv() => {
                app.on_call_event(event);
                // Take everything already queued before drawing once.
                while let Ok(event) = console.events.try_recv() {
                    app.on_call_event(event);
                }
                dirty = true;
            }
            Some(report) = console.background.recv() => {
                app.on_background(report);
                dirty = true;
            }
            event = input.next() => match event {
                Some(Ok(Event::Key(key))) if key.kind != KeyEventKind::Release => {
                    app.handle_key(key);
                    dirty = true;
                }
                Some(Ok(Event::Paste(text))) => {
                    app.handle_paste(&text);
                    dirty = true;
                }
                Some(Ok(Event::Mouse(mouse))) if app.mouse => {
                    app.handle_mouse(mouse);
                    dirty = true;
                }
                Some(Ok(Event::Resize(..))) => dirty = true,
                Some(Ok(_)) => {}
                Some(Err(e)) => return Err(e.into()),
                None => break,
            },
            () = sleep_until(deadline) => {
                app.on_tick(std::time::Instant::now());
                dirty = true;
            }
        }
        if app.quit {
            break;
        }
    }
    Ok(None)
}

/// Sleeps until `deadline`, or forever when there is none (nothing to wake up for).
async fn sleep_until(deadline: Option<std::time::Instant>) {
    match deadline {
        Some(at) => tokio::time::sleep_until(tokio::time::Instant::from_std(at)).await,
        None => std::future::pending().await,
    }
}

/// The signals that end the console the way `q` does, so the terminal is restored: SIGTERM
/// (`kill`), SIGHUP (the terminal closed) and SIGINT (Ctrl-C from outside raw mode, `kill -INT`).
#[cfg(unix)]
struct Signals(Vec<tokio::signal::unix::Signal>);

#[cfg(unix)]
impl Signals {
    fn new() -> Signals {
        use tokio::signal::unix::{signal, SignalKind};
        let kinds = [SignalKind::terminate(), SignalKind::hangup(), SignalKind::interrupt()];
        Signals(kinds.into_iter().filter_map(|kind| signal(kind).ok()).collect())
    }

    async fn wait(&mut self) {
        if self.0.is_empty() {
            return std::future::pending().await;
        }
        let any = self.0.iter_mut().map(|s| Box::pin(s.recv()));
        futures_util::future::select_all(any).await;
    }
}

#[cfg(not(unix))]
struct Signals;

#[cfg(not(unix))]
impl Signals {
    fn new() -> Signals {
        Signals
    }

    async fn wait(&mut self) {
        std::future::pending().await
    }
}

#[cfg(all(test, unix))]
mod signal_tests {
    use super::Signals;

    /// SIGHUP (terminal closed) and SIGINT end the loop like SIGTERM, so the terminal is restored
    /// instead of left in raw mode by the default action.
    #[tokio::test]
    async fn hangup_and_interrupt_end_the_console_like_terminate() {
        for signal in ["-HUP", "-INT", "-TERM"] {
            let mut signals = Signals::new();
            let pid = std::process::id().to_string();
            let status = std::process::Command::new("kill").args([signal, &pid]).status().expect("kill runs");
            assert!(status.success());
            let woke = tokio::time::timeout(std::time::Duration::from_secs(5), signals.wait()).await;
            assert!(woke.is_ok(), "{signal} ends the loop");
        }
    }
}
