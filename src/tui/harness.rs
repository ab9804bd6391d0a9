//! Drives the console without a terminal: keys in, call results applied, screen read back from
//! a TestBackend. Used by the UI tests and by `cargo run --example screenshots`.

use std::time::Duration;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers, MouseButton, MouseEvent, MouseEventKind};
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::Terminal;

use super::app::Focus;
use super::{draw, start_with, Console};
use crate::args::GlobalArgs;
use crate::config::Config;

/// Owns a console and its terminal; feeds keys, waits for calls, reads the screen.
pub struct Harness {
    pub console: Console,
    terminal: Terminal<TestBackend>,
}

impl Harness {
    pub async fn new() -> Harness {
        Harness::with_args(GlobalArgs::default()).await
    }

    /// A console on a truecolor terminal, seeing no other environment.
    pub async fn with_args(global: GlobalArgs) -> Harness {
        Harness::with_env(global, &|name| (name == "COLORTERM").then(|| "truecolor".to_owned())).await
    }

    /// A console that sees `env` as its environment (live credentials, URL overrides).
    pub async fn with_env(global: GlobalArgs, env: &dyn Fn(&str) -> Option<String>) -> Harness {
        Harness::with_config(Config::default(), global, env).await
    }

    /// A console started with `config`, as if read from config.toml (`[keys]`, `mouse`,
    /// profiles), seeing `env` as its environment.
    pub async fn with_config(config: Config, global: GlobalArgs, env: &dyn Fn(&str) -> Option<String>) -> Harness {
        let mut console = start_with(config, env, &global).await.expect("console starts");
        console.app.start_tab();
        let mut harness = Harness { console, terminal: Terminal::new(TestBackend::new(160, 40)).expect("terminal") };
        harness.settle().await;
        harness
    }

    /// A harness over a console started by the test itself, before any tab is shown or any
    /// frame drawn (to watch what the console does first).
    pub fn over(console: Console) -> Harness {
        Harness { console, terminal: Terminal::new(TestBackend::new(160, 40)).expect("terminal") }
    }

    /// Types `text` character by character, `<` included (no key names).
    pub fn type_text(&mut self, text: &str) {
        for c in text.chars() {
            self.console.app.handle_key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
        }
    }

    /// Presses keys written as text: plain characters, or `<Enter>`, `<Esc>`, `<Tab>`, `<S-Tab>`,
    /// `<Down>`, `<Up>`, `<Left>`, `<Right>`, `<Home>`, `<End>`, `<Del>`, `<BS>`, `<C-x>` (Ctrl
    /// plus a letter), `<A-x>` (Alt plus a letter).
    pub fn keys(&mut self, keys: &str) {
        let mut rest = keys;
        while let Some(c) = rest.chars().next() {
            let (key, len) = if c == '<' {
                let end = rest.find('>').expect("closed key name");
                let name = &rest[1..end];
                let key = match name {
                    "Enter" => KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE),
                    "Esc" => KeyEvent::new(KeyCode::Esc, KeyModifiers::NONE),
                    "Tab" => KeyEvent::new(KeyCode::Tab, KeyModifiers::NONE),
                    "S-Tab" => KeyEvent::new(KeyCode::BackTab, KeyModifiers::SHIFT),
                    "Down" => KeyEvent::new(KeyCode::Down, KeyModifiers::NONE),
                    "Up" => KeyEvent::new(KeyCode::Up, KeyModifiers::NONE),
                    "BS" => KeyEvent::new(KeyCode::Backspace, KeyModifiers::NONE),
                    "Left" => KeyEvent::new(KeyCode::Left, KeyModifiers::NONE),
                    "Right" => KeyEvent::new(KeyCode::Right, KeyModifiers::NONE),
                    "Home" => KeyEvent::new(KeyCode::Home, KeyModifiers::NONE),
                    "End" => KeyEvent::new(KeyCode::End, KeyModifiers::NONE),
                    "Del" => KeyEvent::new(KeyCode::Delete, KeyModifiers::NONE),
                    alt if alt.starts_with("A-") => {
                        KeyEvent::new(KeyCode::Char(alt.chars().nth(2).expect("letter")), KeyModifiers::ALT)
                    }
                    function if function.starts_with('F') => {
                        KeyEvent::new(KeyCode::F(function[1..].parse().expect("F1-F24")), KeyModifiers::NONE)
                    }
                    ctrl if ctrl.starts_with("C-") => {
                        KeyEvent::new(KeyCode::Char(ctrl.chars().nth(2).expect("letter")), KeyModifiers::CONTROL)
                    }
                    other => panic!("unknown key <{other}>"),
                };
                (key, end + 1)
            } else {
                (KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE), c.len_utf8())
            };
            self.console.app.handle_key(key);
            rest = &rest[len..];
        }
    }

    /// A left click at column `x`, row `y` of the screen as last drawn.
    pub fn click(&mut self, x: u16, y: u16) {
        self.mouse(MouseEventKind::Down(MouseButton::Left), x, y);
    }

    /// Turns the wheel once down (or up) with the pointer at `x`, `y`.
    pub fn wheel(&mut self, down: bool, x: u16, y: u16) {
        self.mouse(if down { MouseEventKind::ScrollDown } else { MouseEventKind::ScrollUp }, x, y);
    }

    fn mouse(&mut self, kind: MouseEventKind, column: u16, row: u16) {
        self.console.app.handle_mouse(MouseEvent { kind, column, row, modifiers: KeyModifiers::NONE });
    }

    /// Where `text` is on the screen (column, row of its first character), drawing a frame first.
    pub fn find(&mut self, text: &str) -> Option<(u16, u16)> {
        let screen = self.screen();
        screen.lines().enumerate().find_map(|(y, line)| {
            let at = line.find(text)?;
            let x = line[..at].chars().count();
            Some((u16::try_from(x).ok()?, u16::try_from(y).ok()?))
        })
    }

    /// Pastes `text` as a terminal with bracketed paste would deliver it.
    pub fn paste(&mut self, text: &str) {
        self.console.app.handle_paste(text);
    }

    /// Waits for the jq filters at work, so a screen shows their results.
    pub fn wait_filters(&mut self) {
        for tab in &mut self.console.app.tabs {
            tab.inspector.wait_filter(Duration::from_secs(30));
        }
    }

    /// Applies call results, the sandbox view's reads and files saved, until nothing is in flight.
    pub async fn settle(&mut self) {
        loop {
            let console = &mut self.console;
            if console.app.executor.active_count() == 0 && console.app.background_pending == 0 {
                break;
            }
            let wait = async {
                tokio::select! {
                    Some(event) = console.events.recv() => console.app.on_call_event(event),
                    Some(report) = console.background.recv() => console.app.on_background(report),
                }
            };
            tokio::time::timeout(Duration::from_secs(10), wait).await.expect("calls finish within 10 s");
        }
    }

    pub fn screen(&mut self) -> String {
        self.wait_filters();
        let app = &mut self.console.app;
        self.terminal.draw(|f| draw::draw(f, app)).expect("draws");
        let buffer = self.terminal.backend().buffer();
        let area = buffer.area;
        (0..area.height)
            .map(|y| (0..area.width).map(|x| buffer[(x, y)].symbol()).collect::<String>().trim_end().to_owned())
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// Draws a frame and returns it, for tests that look at every cell.
    pub fn buffer_after_draw(&mut self) -> &Buffer {
        self.screen();
        self.terminal.backend().buffer()
    }

    /// Applies the call results that have already arrived, without waiting for more.
    pub fn apply_ready_events(&mut self) {
        while let Ok(event) = self.console.events.try_recv() {
            self.console.app.on_call_event(event);
        }
    }

    /// The last drawn frame, for rendering to an image.
    pub fn buffer(&self) -> &Buffer {
        self.terminal.backend().buffer()
    }

    pub fn resize(&mut self, width: u16, height: u16) {
        self.terminal.backend_mut().resize(width, height);
    }

    /// Moves the resource list to `name` and opens it.
    pub async fn browse(&mut self, name: &str) {
        self.open_resource(name);
        self.settle().await;
    }

    /// Moves the resource list to `name` and opens it, leaving its list call in flight.
    pub fn open_resource(&mut self, name: &str) {
        let tab = &self.console.app.tabs[self.console.app.active];
        let index = tab.resources.iter().position(|r| *r == name).expect("resource exists");
        self.console.app.focus = Focus::Resources;
        let current = tab.resource;
        let moves = if index >= current { "j".repeat(index - current) } else { "k".repeat(current - index) };
        self.keys(&moves);
        self.keys("<Enter>");
    }
}
