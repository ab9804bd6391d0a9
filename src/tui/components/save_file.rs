//! Saving a file a response links to (a shipping label, a scan form), or an answer that is a
//! file itself (the audio of text to speech): a small popup shows where it comes from and the
//! path it goes to, editable; the download or the write then runs off the UI thread and reports
//! back, so the UI never waits on it.
//!
//! The link is the server's, and real ones point at another origin (EasyPost's labels are in an
//! S3 bucket): the download is a plain GET with no credential of any service, over http or https
//! only, capped in size, and the file is created new, so nothing already on disk is replaced.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};
use ratatui::Frame;

use crate::inert::inert;
use crate::tui::components::line_input::LineInput;
use crate::tui::theme::Theme;

/// The largest file saved: labels are kilobytes, a batch's merged label a few megabytes.
pub const MAX_FILE_BYTES: u64 = 25 * 1024 * 1024;

/// How long a download may take in all.
const DOWNLOAD_TIMEOUT: Duration = Duration::from_secs(60);

/// What a key did in the popup.
#[derive(Debug, PartialEq, Eq)]
pub enum SaveAction {
    None,
    /// Save to this path (checked not to exist yet).
    Save(PathBuf),
    Cancel,
}

/// The open popup: the file's link (or what the answer saved is) and the path being edited.
pub struct SavePrompt {
    pub url: String,
    pub path: LineInput,
    /// Why the last Enter did not save (the file exists, no name given).
    pub message: Option<String>,
    /// The answer to save when it is the file itself (no download).
    pub answer: Option<SavedAnswer>,
}

/// An answer that is a file (audio bytes), kept until the user says where it goes.
#[derive(Clone, Debug)]
pub struct SavedAnswer {
    pub op: &'static crate::catalog::Operation,
    pub content_type: Option<String>,
    pub body: bytes::Bytes,
}

/// What a finished save reports to the app.
#[derive(Debug)]
pub struct SaveReport {
    pub path: PathBuf,
    /// Bytes written, or why nothing was.
    pub result: Result<u64, String>,
    /// The view of what was saved, shown once it is written (the audio's format and duration).
    pub view: Option<Box<crate::tui::components::detail::Detail>>,
}

/// The file extension an answer of this content type is saved with.
pub fn extension(content_type: Option<&str>) -> &'static str {
    let kind = content_type.unwrap_or("").split(';').next().unwrap_or("").trim().to_ascii_lowercase();
    match kind.as_str() {
        "audio/wav" | "audio/x-wav" | "audio/wave" => "wav",
        "audio/mpeg" | "audio/mp3" => "mp3",
        "audio/ogg" => "ogg",
        "audio/flac" => "flac",
        "audio/aac" => "aac",
        "audio/l16" | "audio/mulaw" | "audio/alaw" | "audio/basic" => "raw",
        "application/pdf" => "pdf",
        "image/png" => "png",
        "application/zip" => "zip",
        "text/plain" => "txt",
        _ => "bin",
    }
}

/// `stem.ext` in `dir`, or `stem-2.ext`, `stem-3.ext`… : the first name no file has yet.
pub fn free_name(dir: &Path, stem: &str, ext: &str) -> String {
    (1..1000)
        .map(|n| if n == 1 { format!("{stem}.{ext}") } else { format!("{stem}-{n}.{ext}") })
        .find(|name| !dir.join(name).exists())
        .unwrap_or_else(|| format!("{stem}.{ext}"))
}

impl SavePrompt {
    /// A prompt for `url`, starting from `file_name` in the current folder.
    pub fn new(url: String, file_name: &str) -> SavePrompt {
        SavePrompt { url, path: LineInput::new(&format!("./{file_name}")), message: None, answer: None }
    }

    /// A prompt for an answer that is a file itself, starting from `file_name`; `from` says
    /// what it is (`the answer of deepgram speech_speak, 48 KB audio/wav`).
    pub fn for_answer(from: String, answer: SavedAnswer, file_name: &str) -> SavePrompt {
        SavePrompt { answer: Some(answer), ..SavePrompt::new(from, file_name) }
    }

    pub fn paste(&mut self, text: &str) {
        self.path.insert_str(text);
    }

    pub fn handle_key(&mut self, key: KeyEvent) -> SaveAction {
        match key.code {
            KeyCode::Esc => return SaveAction::Cancel,
            KeyCode::Enter => {
                let home = directories::BaseDirs::new();
                let typed = self.path.text().trim();
                let path = expand_home(typed, home.as_ref().map(directories::BaseDirs::home_dir));
                if typed.is_empty() {
                    self.message = Some("give the file a name".into());
                } else if path.exists() {
                    // Checked again when the file is created; this is only the early word.
                    self.message =
                        Some(format!("{} exists and is never replaced: choose another name", path.display()));
                } else {
                    return SaveAction::Save(path);
                }
            }
            _ => {
                if self.path.handle_key(&key) {
                    self.message = None;
                }
            }
        }
        SaveAction::None
    }

    pub fn render(&self, frame: &mut Frame, area: Rect, theme: &Theme) {
        let width = area.width.saturating_sub(4).clamp(10, 90).min(area.width);
        let height = 9.min(area.height);
        let popup = super::centered(area, width, height);
        frame.render_widget(Clear, popup);
        let block = Block::default()
            .borders(Borders::ALL)
            .border_style(theme.border_focused)
            .title(Span::styled(" save file ", theme.title))
            .title_bottom(Span::styled(" Enter saves · Ctrl-u clears · Esc cancels ", theme.muted));
        let mut to = vec![Span::styled("to   ", theme.muted)];
        to.extend(self.path.spans(usize::from(width.saturating_sub(7)), theme.accent, theme.selection));
        let mut lines = vec![
            Line::from(vec![
                Span::styled("from ", theme.muted),
                Span::styled(inert(&self.url).into_owned(), theme.text),
            ]),
            Line::from(to),
        ];
        match (&self.message, &self.answer) {
            (Some(message), _) => lines.push(Line::styled(inert(message).into_owned(), theme.error)),
            (None, Some(_)) => {
                lines.push(Line::styled(
                    "the answer is written as it came; an existing file is never replaced",
                    theme.muted,
                ));
            }
            (None, None) => lines
                .push(Line::styled("downloaded without credentials; an existing file is never replaced", theme.muted)),
        }
        frame.render_widget(Paragraph::new(lines).block(block).wrap(Wrap { trim: false }), popup);
    }
}

/// `~/x` as the home folder's `x` (the shell would); anything else as it is.
fn expand_home(path: &str, home: Option<&Path>) -> PathBuf {
    match (path.strip_prefix("~/"), home) {
        (Some(rest), Some(home)) => home.join(rest),
        _ => PathBuf::from(path),
    }
}

/// The client downloads use: no default headers (so no credential), no `Referer`, and
/// redirects followed only to http or https, at most five.
pub fn download_client() -> Result<reqwest::Client, String> {
    let policy = reqwest::redirect::Policy::custom(|attempt| {
        let web = matches!(attempt.url().scheme(), "http" | "https");
        if attempt.previous().len() >= 5 || !web {
            attempt.stop()
        } else {
            attempt.follow()
        }
    });
    reqwest::Client::builder()
        .redirect(policy)
        .referer(false)
        .connect_timeout(Duration::from_secs(10))
        .timeout(DOWNLOAD_TIMEOUT)
        .build()
        .map_err(|e| format!("no HTTP client for downloads: {e}"))
}

/// Why `url` is not downloaded, if it is not: only http and https, with no user or password
/// in it (nothing that could be taken for a credential).
pub fn check_url(url: &str) -> Result<reqwest::Url, String> {
    let parsed = reqwest::Url::parse(url).map_err(|e| format!("{} is no URL: {e}", inert(url)))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(format!("{}: only http and https links are downloaded", inert(url)));
    }
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return Err("the link carries a user name or password: not downloaded".into());
    }
    Ok(parsed)
}

/// Downloads `url` (at most `cap` bytes) and writes it to `path`, which must not exist yet.
/// Runs on a spawned task; the write runs on the blocking pool.
pub async fn download_to(client: reqwest::Client, url: String, path: PathBuf, cap: u64) -> SaveReport {
    let result = fetch(&client, &url, cap).await;
    let result = match result {
        Ok(bytes) => {
            let target = path.clone();
            tokio::task::spawn_blocking(move || write_new(&target, &bytes))
                .await
                .unwrap_or_else(|e| Err(format!("the write stopped: {e}")))
        }
        Err(e) => Err(e),
    };
    SaveReport { path, result, view: None }
}

async fn fetch(client: &reqwest::Client, url: &str, cap: u64) -> Result<Vec<u8>, String> {
    let parsed = check_url(url)?;
    let origin = parsed.origin().ascii_serialization();
    let mut response = client.get(parsed).send().await.map_err(|e| format!("{origin}: {}", without_url(&e)))?;
    let status = response.status();
    if !status.is_success() {
        return Err(format!("{origin} answered {status}"));
    }
    if response.content_length().is_some_and(|length| length > cap) {
        return Err(format!("the file is larger than {} MB: not saved", cap / (1024 * 1024)));
    }
    let mut bytes = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|e| format!("{origin}: {}", without_url(&e)))? {
        if bytes.len() as u64 + chunk.len() as u64 > cap {
            return Err(format!("the file is larger than {} MB: not saved", cap / (1024 * 1024)));
        }
        bytes.extend_from_slice(&chunk);
    }
    Ok(bytes)
}

/// An error's text without the URL (a signed link's query is as good as a key while it lasts).
fn without_url(error: &reqwest::Error) -> String {
    let kind = if error.is_timeout() {
        "timed out"
    } else if error.is_connect() {
        "could not connect"
    } else if error.is_redirect() {
        "too many or unsafe redirects"
    } else {
        "the download failed"
    };
    kind.to_owned()
}

/// Creates `path` and writes `bytes`; an existing file is left alone, a half-written one removed.
pub fn write_new(path: &Path, bytes: &[u8]) -> Result<u64, String> {
    let shown = inert(&path.display().to_string()).into_owned();
    let mut file = std::fs::OpenOptions::new().write(true).create_new(true).open(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::AlreadyExists => format!("{shown} exists and was not replaced: choose another name"),
        std::io::ErrorKind::NotFound => format!("{shown}: no such folder"),
        _ => format!("{shown}: {e}"),
    })?;
    if let Err(e) = file.write_all(bytes).and_then(|()| file.sync_all()) {
        drop(file);
        let _ = std::fs::remove_file(path);
        return Err(format!("{shown}: {e}"));
    }
    Ok(bytes.len() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crossterm::event::KeyModifiers;

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    fn scratch(name: &str) -> PathBuf {
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
        let dir = std::env::temp_dir().join(format!("opsdeck-save-{}-{nanos}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn the_prompt_draws_at_any_size_and_shows_server_text_inert() {
        use ratatui::backend::TestBackend;
        use ratatui::Terminal;
        let mut prompt = SavePrompt::new("http://127.0.0.1:1/a\x1b[2J.png".into(), "x.png");
        prompt.message = Some("bad\x07".into());
        for (w, h) in [(1, 1), (5, 3), (20, 4), (80, 24)] {
            let mut terminal = Terminal::new(TestBackend::new(w, h)).unwrap();
            terminal.draw(|f| prompt.render(f, f.area(), &Theme::dark())).unwrap();
            let buffer = terminal.backend().buffer();
            let text: String = buffer.content().iter().map(ratatui::buffer::Cell::symbol).collect();
            assert!(!text.contains('\x1b') && !text.contains('\x07'), "{text}");
            if w == 80 {
                assert!(text.contains("a␛[2J.png") && text.contains("./x.png"), "{text}");
            }
        }
    }

    #[test]
    fn only_plain_web_links_without_user_info_are_downloaded() {
        assert!(check_url("https://easypost-files.s3.us-west-2.amazonaws.com/files/postage_label/a.png").is_ok());
        assert!(check_url("http://127.0.0.1:7708/files/postage_label/a.png").is_ok());
        for bad in ["file:///etc/passwd", "ftp://example.com/a", "https://user:pw@example.com/a", "not a url"] {
            assert!(check_url(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn an_existing_file_is_never_replaced_and_a_new_one_is_written_whole() {
        let dir = scratch("write");
        let path = dir.join("label.png");
        assert_eq!(write_new(&path, b"\x89PNG one"), Ok(8));
        let again = write_new(&path, b"other");
        assert!(again.as_ref().is_err_and(|e| e.contains("exists and was not replaced")), "{again:?}");
        assert_eq!(std::fs::read(&path).unwrap(), b"\x89PNG one");
        let missing = write_new(&dir.join("no/such/folder.png"), b"x");
        assert!(missing.is_err_and(|e| e.contains("no such folder")));
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn the_prompt_edits_the_path_and_refuses_an_existing_file() {
        let dir = scratch("prompt");
        let taken = dir.join("taken.zpl");
        std::fs::write(&taken, "x").unwrap();
        let mut prompt = SavePrompt::new("http://127.0.0.1:1/f.zpl".into(), "9400.zpl");
        assert_eq!(prompt.path.text(), "./9400.zpl");
        prompt.handle_key(KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL));
        assert_eq!(prompt.handle_key(key(KeyCode::Enter)), SaveAction::None);
        assert!(prompt.message.as_deref().is_some_and(|m| m.contains("name")));
        prompt.paste(&taken.display().to_string());
        assert_eq!(prompt.handle_key(key(KeyCode::Enter)), SaveAction::None);
        assert!(prompt.message.as_deref().is_some_and(|m| m.contains("never replaced")), "{:?}", prompt.message);
        prompt.handle_key(key(KeyCode::Backspace));
        prompt.handle_key(key(KeyCode::Char('2')));
        assert_eq!(prompt.handle_key(key(KeyCode::Enter)), SaveAction::Save(dir.join("taken.zp2")));
        assert_eq!(prompt.handle_key(key(KeyCode::Esc)), SaveAction::Cancel);
        let home = Some(Path::new("/home/op"));
        assert_eq!(expand_home("~/labels/a.pdf", home), PathBuf::from("/home/op/labels/a.pdf"));
        assert_eq!(expand_home("./a.pdf", home), PathBuf::from("./a.pdf"));
        assert_eq!(expand_home("~/a.pdf", None), PathBuf::from("~/a.pdf"));
        let _ = std::fs::remove_dir_all(dir);
    }
}
