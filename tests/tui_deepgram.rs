//! The console's Deepgram tab driven by keys against the embedded simulator and its seed (two
//! projects with keys, members, balances and 45 days of usage): a project opened as the hub of
//! its keys, members, balances and usage (charted as daily bars); a new key's secret shown once
//! and copied; a WAV made here transcribed; speech saved to a file and read back; multi-line
//! text analyzed; a project's deletion restating what goes with it; path completion in file
//! fields; and bad input caught with a message and nothing sent.
#![allow(clippy::unwrap_used, reason = "tests")]

use std::path::{Path, PathBuf};

use opsdeck::catalog::Service;
use opsdeck::tui::app::{Focus, Popup};
use opsdeck::tui::harness::Harness;

mod common;

/// The Deepgram tab with its projects listed (the first resource), the browser focused.
async fn deepgram() -> Harness {
    let mut h = Harness::new().await;
    h.keys("2");
    h.settle().await;
    assert_eq!(h.console.app.tab().service, Service::Deepgram);
    h.console.app.focus = Focus::Browser;
    let screen = h.screen();
    assert!(screen.contains("Support calls") && !screen.contains("no sim"), "{screen}");
    h
}

fn scratch(name: &str) -> PathBuf {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    let dir = std::env::temp_dir().join(format!("opsdeck-dg-{}-{nanos}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Moves the browser's cursor to the first row whose record holds `text`.
fn select_row(h: &mut Harness, text: &str) {
    h.console.app.focus = Focus::Browser;
    let records = h.console.app.tab().browser.records().clone();
    let Some(index) = records.iter().position(|r| r.to_string().contains(text)) else {
        panic!("a row with {text}:\n{}", h.screen())
    };
    h.keys(&format!("g{}", "j".repeat(index)));
}

fn popup_title(h: &Harness) -> String {
    match &h.console.app.popup {
        Some(Popup::Detail(detail)) => detail.title.clone(),
        Some(Popup::Form(form)) => format!("form {}", form.op.name),
        Some(Popup::Confirm(confirm)) => format!("confirm {}", confirm.op.name),
        Some(Popup::Save(..)) => "save".into(),
        Some(_) => "another popup".into(),
        None => "no popup".into(),
    }
}

/// Opens `op`'s form from the palette and sets `values` over what it was filled with.
fn form(h: &mut Harness, op: &str, values: &[(&str, &str)]) {
    h.keys(&format!(":deepgram {op}<Enter>"));
    let Some(Popup::Form(form)) = h.console.app.popup.as_mut() else { panic!("{op} form:\n{}", h.screen()) };
    assert_eq!(form.op.name, op);
    for (name, value) in values {
        form.set_value(name, value);
    }
}

/// Opens the first project ("Support calls") as its hub view, asked for whole.
async fn open_project(h: &mut Harness) {
    h.browse("projects").await;
    select_row(h, "Support calls");
    h.keys("<Enter>");
    h.settle().await;
    assert_eq!(popup_title(h), "project Support calls", "{}", h.screen());
}

fn sent_count(h: &Harness) -> usize {
    h.console.app.executor.active_count()
}

#[tokio::test]
async fn a_project_opens_its_keys_members_balances_and_usage_as_daily_bars() {
    let mut h = deepgram().await;
    open_project(&mut h).await;
    let screen = h.screen();
    for text in ["project id", "a keys", "m members", "b balances", "u usage", "d delete"] {
        assert!(screen.contains(text), "{text} in:\n{screen}");
    }

    h.keys("a");
    h.settle().await;
    let screen = h.screen();
    assert!(h.console.app.popup.is_none(), "{screen}");
    for text in [
        "keys of Support calls",
        "production transcription",
        "ci pipeline",
        "ada@opsdeck.example",
        "comment",
        "scopes",
        "expiration_date",
    ] {
        assert!(screen.contains(text), "{text} in:\n{screen}");
    }

    // Members and balances of the same project, from the hub again.
    open_project(&mut h).await;
    h.keys("m");
    h.settle().await;
    let screen = h.screen();
    for text in ["members of Support calls", "grace@opsdeck.example", "owner", "admin", "member"] {
        assert!(screen.contains(text), "{text} in:\n{screen}");
    }
    open_project(&mut h).await;
    h.keys("b");
    h.settle().await;
    let screen = h.screen();
    assert!(
        screen.contains("balances of Support calls") && screen.contains("187.25") && screen.contains("USD"),
        "{screen}"
    );

    // Usage of the last 30 days: a table by day with totals, then the daily bars.
    open_project(&mut h).await;
    h.keys("u");
    h.settle().await;
    assert!(popup_title(&h).starts_with("usage "), "{}", h.screen());
    let Some(Popup::Detail(view)) = &h.console.app.popup else { unreachable!() };
    let table = &view.tables[0];
    // The seed's usage runs to yesterday: 29 or 30 days of the range, and a total.
    assert!((30..=31).contains(&table.rows.len()), "30 days and a total: {:?}", table.rows);
    assert_eq!(table.rows.last().unwrap()[0], "total");
    // The total keeps two decimals, as the days it adds up do (it read `129` under `3.51`).
    let decimals = |cell: &str| cell.split_once('.').map_or(0, |(_, d)| d.len());
    assert!(table.rows.iter().all(|row| decimals(&row[1]) == 2), "{:?}", table.rows);
    let screen = h.screen();
    assert!(screen.contains("hours") && screen.contains("requests") && screen.contains("c chart"), "{screen}");
    h.keys("c");
    let chart = h.console.app.chart().expect("a chart under the list");
    assert!(chart.data.bars, "usage by day is drawn as bars");
    assert_eq!(chart.series().unwrap().name, "hours");
    assert!(chart.data.series.iter().any(|s| s.name == "requests"));
    let screen = h.screen();
    assert!(screen.contains(" hours ") && screen.contains("[ ] series"), "{screen}");
    // Bars stand on the axis: a column of block marks.
    assert!(screen.contains('█') || screen.contains('▀') || screen.contains('▄'), "{screen}");
}

#[tokio::test]
async fn a_new_key_shows_its_secret_once_with_a_warning_and_a_copy_key() {
    let mut h = deepgram().await;
    select_row(&mut h, "Support calls");
    form(&mut h, "keys_create", &[("comment", "opsdeck test key"), ("scopes", "member")]);
    let Some(Popup::Form(form)) = &h.console.app.popup else { unreachable!() };
    assert!(form.values().get("project_id").is_some_and(|p| !p.is_empty()), "the project fills the form");
    h.keys("<C-s>");
    h.settle().await;
    assert_eq!(popup_title(&h), "new API key · copy its secret now", "{}", h.screen());
    let Some(Popup::Detail(view)) = &h.console.app.popup else { unreachable!() };
    let secret = view.texts[0].1.clone();
    assert!(secret.len() >= 20, "{secret}");
    let screen = h.screen();
    for text in ["shown only this once", "will not be shown again", "c copy the secret", secret.as_str()] {
        assert!(screen.contains(text), "{text} in:\n{screen}");
    }
    h.keys("c");
    assert_eq!(h.console.app.clipboard.as_deref(), Some(secret.as_str()), "the secret goes to the clipboard");
    h.keys("<Esc>");

    // The list has the key, never its secret.
    h.browse("keys").await;
    let records = h.console.app.tab().browser.records();
    assert!(records.iter().any(|r| r.to_string().contains("opsdeck test key")), "{records:?}");
    assert!(!records.iter().any(|r| r.to_string().contains(&secret)));
    assert!(!h.screen().contains(&secret));
}

#[tokio::test]
async fn a_wav_made_here_is_transcribed_with_its_duration_and_a_transcript() {
    let mut h = deepgram().await;
    let dir = scratch("transcribe");
    let path = dir.join("tone.wav");
    std::fs::write(&path, common::tone_wav(1.5, 16_000, 1)).unwrap();
    form(&mut h, "transcription_transcribe", &[("file", &path.display().to_string()), ("paragraphs", "true")]);
    h.keys("<C-s>");
    h.settle().await;
    assert_eq!(popup_title(&h), "transcript · 1.5 s · 1 channel", "{}", h.screen());
    let Some(Popup::Detail(view)) = &h.console.app.popup else { unreachable!() };
    assert!(view.facts.iter().any(|(l, v, _)| l == "duration" && v.starts_with("1.50 s")), "{:?}", view.facts);
    assert!(view.note.as_deref().is_some_and(|n| n.contains("synthetic")), "{:?}", view.note);
    let transcript = &view.texts.iter().find(|(t, _)| t == "transcript").unwrap().1;
    assert!(transcript.starts_with("[0:0"), "paragraphs with their times: {transcript}");
    let screen = h.screen();
    assert!(screen.contains("transcript") && screen.contains("duration"), "{screen}");
    // The JSON stays reachable: the inspector holds the answer.
    h.keys("<Esc>");
    assert!(h.screen().contains("metadata"), "{}", h.screen());
    let _ = std::fs::remove_dir_all(dir);
}

/// Sends speech_speak with `values`, saves its answer under `dir`, returns the file.
async fn speak(h: &mut Harness, values: &[(&str, &str)], dir: &Path, name: &str) -> PathBuf {
    form(h, "speech_speak", values);
    h.keys("<C-s>");
    h.settle().await;
    assert_eq!(popup_title(h), "save", "{}", h.screen());
    let screen = h.screen();
    assert!(screen.contains("the answer of deepgram speech_speak") && screen.contains("audio/wav"), "{screen}");
    let path = dir.join(name);
    h.keys("<C-u>");
    h.paste(&path.display().to_string());
    h.keys("<Enter>");
    h.settle().await;
    path
}

#[tokio::test]
async fn speech_is_saved_as_a_wav_whose_format_and_duration_show_and_reads_back_as_its_text() {
    let mut h = deepgram().await;
    let dir = scratch("speak");
    let path = speak(&mut h, &[("text", "hello from the operations deck")], &dir, "hello.wav").await;
    let bytes = std::fs::read(&path).unwrap();
    assert_eq!(&bytes[..4], b"RIFF");
    assert_eq!(&bytes[8..12], b"WAVE");
    assert_eq!(u16::from_le_bytes([bytes[20], bytes[21]]), 1, "linear16 PCM");
    let rate = u32::from_le_bytes([bytes[24], bytes[25], bytes[26], bytes[27]]);
    assert_eq!(rate, 24_000);
    assert!(popup_title(&h).starts_with("speech saved · "), "{}", h.screen());
    let screen = h.screen();
    for text in ["WAV, linear16 PCM", "24000 Hz", "channels", "duration", "hello.wav"] {
        assert!(screen.contains(text), "{text} in:\n{screen}");
    }

    // An existing file is never replaced: the prompt says so and waits for another name.
    h.keys("<Esc>");
    form(&mut h, "speech_speak", &[("text", "again")]);
    h.keys("<C-s>");
    h.settle().await;
    h.keys("<C-u>");
    h.paste(&path.display().to_string());
    h.keys("<Enter>");
    assert!(h.screen().contains("never replaced"), "{}", h.screen());
    h.keys("<Esc>");
    assert_eq!(std::fs::read(&path).unwrap(), bytes);

    // Round trip: the saved speech transcribes back to its words.
    form(&mut h, "transcription_transcribe", &[("file", &path.display().to_string())]);
    h.keys("<C-s>");
    h.settle().await;
    let Some(Popup::Detail(view)) = &h.console.app.popup else { panic!("{}", h.screen()) };
    let transcript = &view.texts.iter().find(|(t, _)| t == "transcript").unwrap().1;
    assert!(transcript.to_lowercase().contains("hello from the operations deck"), "{transcript}");
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test]
async fn speech_in_a_format_the_simulator_refuses_says_why_and_saves_nothing() {
    let mut h = deepgram().await;
    form(&mut h, "speech_speak", &[("text", "hello"), ("encoding", "mp3")]);
    h.keys("<C-s>");
    h.settle().await;
    assert_ne!(popup_title(&h), "save");
    let status = h.console.app.status().map(|(m, _)| m.clone()).unwrap_or_default();
    assert!(status.contains("speech_speak") && status.contains("400"), "{status}");
    assert!(h.screen().to_lowercase().contains("unsupported"), "{}", h.screen());
}

#[tokio::test]
async fn analyze_takes_text_over_several_lines_and_shows_sentiment_and_summary() {
    let mut h = deepgram().await;
    h.keys(":deepgram text_analyze<Enter>");
    let Some(Popup::Form(form)) = h.console.app.popup.as_mut() else { panic!("{}", h.screen()) };
    assert!(form.focused_takes_lines(), "the text field takes lines");
    form.set_value("sentiment", "true");
    form.set_value("summarize", "true");
    form.set_value("topics", "true");
    h.type_text("I love how fast the support team answered.");
    h.keys("<Enter>");
    h.type_text("The refund arrived quickly and the agent was great.");
    let Some(Popup::Form(form)) = &h.console.app.popup else { unreachable!() };
    assert!(form.values()["text"].contains(".\nThe refund"), "{:?}", form.values());
    assert!(h.screen().contains("The refund arrived"), "both lines shown:\n{}", h.screen());
    h.keys("<C-s>");
    h.settle().await;
    assert_eq!(popup_title(&h), "text analysis", "{}", h.screen());
    let Some(Popup::Detail(view)) = &h.console.app.popup else { unreachable!() };
    assert!(view.facts.iter().any(|(l, v, _)| l == "sentiment" && v.starts_with("positive")), "{:?}", view.facts);
    assert!(view.texts.iter().any(|(t, s)| t == "summary" && !s.is_empty()), "{:?}", view.texts);
    let screen = h.screen();
    assert!(screen.contains("sentiment (") && screen.contains("topics ("), "{screen}");
}

#[tokio::test]
async fn deleting_a_project_restates_its_cascade_and_sends_nothing_before_yes() {
    let mut h = deepgram().await;
    open_project(&mut h).await;
    h.keys("a");
    h.settle().await;
    open_project(&mut h).await;
    h.keys("m");
    h.settle().await;
    open_project(&mut h).await;
    h.keys("d");
    assert_eq!(popup_title(&h), "confirm projects_delete", "{}", h.screen());
    assert_eq!(sent_count(&h), 0, "nothing is sent before yes");
    let screen = h.screen();
    for text in ["project Support calls", "3 API keys", "4 members", "its balances", "usage history", "SANDBOX"] {
        assert!(screen.contains(text), "{text} in:\n{screen}");
    }
    h.keys("<Esc>");
    h.settle().await;
    h.browse("projects").await;
    assert_eq!(h.console.app.tab().browser.records().len(), 2, "nothing was deleted");
}

#[tokio::test]
async fn file_fields_complete_paths_with_tab_in_any_service() {
    let mut h = deepgram().await;
    let dir = scratch("complete");
    std::fs::write(dir.join("speech-one.wav"), common::tone_wav(0.2, 8000, 1)).unwrap();
    std::fs::write(dir.join("speech-two.wav"), common::tone_wav(0.2, 8000, 1)).unwrap();
    std::fs::write(dir.join("notes.txt"), "x").unwrap();
    std::fs::create_dir_all(dir.join("nested")).unwrap();
    h.keys(":deepgram transcription_transcribe<Enter>");
    h.keys("<Tab>");
    let prefix = format!("{}/sp", dir.display());
    h.type_text(&prefix);
    h.keys("<Tab>");
    let value = |h: &Harness| match &h.console.app.popup {
        Some(Popup::Form(form)) => form.values().get("file").cloned().unwrap_or_default(),
        _ => panic!("the form is open"),
    };
    assert_eq!(value(&h), format!("{}/speech-", dir.display()), "as far as the names agree");
    assert!(h.screen().contains("2 match: speech-one.wav  speech-two.wav"), "{}", h.screen());
    h.type_text("t");
    h.keys("<Tab>");
    assert_eq!(value(&h), format!("{}/speech-two.wav", dir.display()));
    // A whole name: Tab goes on to the next field.
    h.keys("<Tab>");
    let Some(Popup::Form(form)) = &h.console.app.popup else { unreachable!() };
    assert!(!form.focused_takes_lines() || form.values().contains_key("file"));
    h.keys("<Esc>");

    // Folders get their slash; Mailgun's attachments complete the same way.
    h.keys(":mailgun messages_send<Enter>");
    let Some(Popup::Form(form)) = h.console.app.popup.as_mut() else { panic!("{}", h.screen()) };
    let fields = form.op.params.iter().position(|p| p.name == "attachment").unwrap();
    for _ in 0..fields {
        h.keys("<Down>");
    }
    h.type_text(&format!("{}/ne", dir.display()));
    h.keys("<Tab>");
    let Some(Popup::Form(form)) = &h.console.app.popup else { unreachable!() };
    assert_eq!(form.values().get("attachment").cloned().unwrap_or_default(), format!("{}/nested/", dir.display()));
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test]
async fn bad_input_gives_a_message_and_sends_nothing() {
    let mut h = deepgram().await;
    let dir = scratch("bad");
    let sent_before = h.console.app.tab().sent.clone().map(|r| r.request_line());

    // A missing file, and a file that is no audio.
    let missing = dir.join("missing.wav").display().to_string();
    form(&mut h, "transcription_transcribe", &[("file", &missing)]);
    h.keys("<C-s>");
    assert!(h.screen().contains(&format!("no file at {missing}")), "{}", h.screen());
    h.keys("<Esc>");
    std::fs::write(dir.join("notes.txt"), "not audio at all").unwrap();
    let notes = dir.join("notes.txt").display().to_string();
    form(&mut h, "transcription_transcribe", &[("file", &notes)]);
    h.keys("<C-s>");
    assert!(h.screen().contains("✗ no audio Deepgram reads"), "{}", h.screen());
    h.keys("<Esc>");
    std::fs::write(dir.join("empty.wav"), "").unwrap();
    form(&mut h, "transcription_transcribe", &[("file", &dir.join("empty.wav").display().to_string())]);
    h.keys("<C-s>");
    assert!(h.screen().contains("✗ the file is empty"), "{}", h.screen());
    h.keys("<Esc>");

    // Empty and blank text.
    form(&mut h, "text_analyze", &[]);
    h.keys("<C-s>");
    assert!(h.screen().contains("give text or url"), "{}", h.screen());
    h.keys("<Esc>");
    form(&mut h, "text_analyze", &[("text", "   \n  ")]);
    h.keys("<C-s>");
    assert!(h.screen().contains("only blank space"), "{}", h.screen());
    h.keys("<Esc>");

    // A date that is no date, a range that runs backwards, an unknown scope.
    select_row(&mut h, "Support calls");
    form(&mut h, "usage_get", &[("start", "2024-13-45")]);
    h.keys("<C-s>");
    assert!(h.screen().contains("'2024-13-45' is no date"), "{}", h.screen());
    h.keys("<Esc>");
    form(&mut h, "usage_get", &[("start", "2024-05-10"), ("end", "2024-05-01")]);
    h.keys("<C-s>");
    assert!(h.screen().contains("before it starts"), "{}", h.screen());
    h.keys("<Esc>");
    form(&mut h, "keys_create", &[("comment", "x"), ("scopes", "member, keys:fly")]);
    h.keys("<C-s>");
    assert!(h.screen().contains("unknown scope keys:fly"), "{}", h.screen());
    h.keys("<Esc>");

    assert_eq!(h.console.app.tab().sent.clone().map(|r| r.request_line()), sent_before, "nothing was sent");
    assert_eq!(sent_count(&h), 0);

    // An unknown project id is sent, and the simulator's answer is said plainly.
    form(&mut h, "projects_get", &[("project_id", "00000000-0000-4000-8000-000000000000")]);
    h.keys("<C-s>");
    h.settle().await;
    let status = h.console.app.status().map(|(m, _)| m.clone()).unwrap_or_default();
    assert!(status.contains("projects_get") && status.contains("404"), "{status}");
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test]
async fn models_list_speech_to_text_and_voices_with_useful_columns() {
    let mut h = deepgram().await;
    h.browse("models").await;
    let records = h.console.app.tab().browser.records();
    assert!(records.iter().any(|r| r["canonical_name"] == "nova-3"), "{records:?}");
    assert!(records.iter().any(|r| r.get("metadata").is_some()), "the voices are listed too");
    let screen = h.screen();
    for text in ["canonical_name", "kind", "architecture", "languages", "stt", "tts", "aura"] {
        assert!(screen.contains(text), "{text} in:\n{screen}");
    }
    // A voice opens as its facts, and its uuid fills models_get.
    select_row(&mut h, "aura-2");
    h.keys("<Enter>");
    assert!(popup_title(&h).starts_with("model aura-2"), "{}", h.screen());
    assert!(h.screen().contains("text to speech (a voice)"), "{}", h.screen());
    h.keys("<Esc>");
    h.keys(":deepgram models_get<Enter><C-s>");
    h.settle().await;
    assert!(popup_title(&h).starts_with("model aura-2"), "{}", h.screen());
}

/// `d` on a row of a project's keys deletes that key, after a confirmation that names it by its
/// comment and scopes; the list then lacks it.
#[tokio::test]
async fn d_on_a_key_row_deletes_it_after_naming_its_comment_and_scopes() {
    let mut h = deepgram().await;
    open_project(&mut h).await;
    h.keys("a");
    h.settle().await;
    h.console.app.focus = Focus::Browser;
    select_row(&mut h, "production transcription");
    h.keys("d");
    let Some(Popup::Confirm(confirm)) = &h.console.app.popup else { panic!("a confirmation:\n{}", h.screen()) };
    assert_eq!(confirm.op.name, "keys_delete");
    let named = confirm.effects.iter().find(|e| e.contains("“production transcription”")).cloned().unwrap_or_default();
    assert!(named.starts_with("deletes key “production transcription” (") && named.contains("with scopes "), "{named}");
    h.keys("y");
    h.settle().await;
    h.keys("r");
    h.settle().await;
    let screen = h.screen();
    assert!(!screen.contains("production transcription") && screen.contains("ci pipeline"), "{screen}");
}
