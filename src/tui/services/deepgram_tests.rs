use super::*;
use serde_json::json;

use crate::sandbox::deepgram::test_wav::tone_wav;

fn op(name: &str) -> &'static Operation {
    Service::Deepgram.operation(name).unwrap()
}

fn day(text: &str) -> time::Date {
    parse_date(text).unwrap()
}

fn values(pairs: &[(&str, &str)]) -> Values {
    pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
}

#[test]
fn audio_reads_as_format_rate_channels_and_duration() {
    let wav = tone_wav(3.0, 24_000, 1);
    let facts = audio_facts(Some("audio/wav"), &wav);
    assert_eq!(facts.format, "WAV, linear16 PCM");
    assert_eq!((facts.sample_rate, facts.channels, facts.bits), (Some(24_000), Some(1), Some(16)));
    assert!((facts.duration.unwrap() - 3.0).abs() < 1e-9);
    let stereo = audio_facts(None, &tone_wav(1.0, 8000, 2));
    assert!((stereo.duration.unwrap() - 1.0).abs() < 1e-9, "{stereo:?}");

    // Bare audio: the rate its content type names; compressed audio: the format alone.
    let raw = audio_facts(Some("audio/l16;rate=24000"), &[0u8; 24_000]);
    assert_eq!(raw.format, "linear16 (raw PCM, 16-bit)");
    assert!((raw.duration.unwrap() - 0.5).abs() < 1e-9);
    let mulaw = audio_facts(Some("audio/mulaw;rate=8000"), &[0u8; 4000]);
    assert!((mulaw.duration.unwrap() - 0.5).abs() < 1e-9);
    let mp3 = audio_facts(Some("audio/mpeg"), b"ID3....");
    assert_eq!((mp3.format.as_str(), mp3.duration), ("MP3", None));

    let view = audio_view(Some("audio/wav"), &wav, Path::new("/tmp/hello.wav"));
    assert_eq!(view.title, "speech saved · 3.0 s");
    let fact_of = |label: &str| view.facts.iter().find(|(l, ..)| l == label).map(|(_, v, _)| v.clone());
    assert_eq!(fact_of("sample rate").as_deref(), Some("24000 Hz"));
    assert_eq!(fact_of("duration").as_deref(), Some("3.00 s"));
    assert_eq!(fact_of("file").as_deref(), Some("/tmp/hello.wav"));
}

#[test]
fn only_audio_containers_pass_unless_raw_audio_is_declared() {
    assert!(looks_like_audio(b"RIFF\0\0\0\0WAVE"));
    assert!(looks_like_audio(b"fLaC"));
    assert!(looks_like_audio(b"OggS"));
    assert!(looks_like_audio(&[0xff, 0xfb, 0x90]));
    assert!(looks_like_audio(b"\0\0\0\x20ftypM4A "));
    assert!(!looks_like_audio(b"hello, world"));
    assert!(!looks_like_audio(b"%PDF-1.7"));
    let dir = std::env::temp_dir().join(format!("opsdeck-dg-unit-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let text = dir.join("notes.txt");
    std::fs::write(&text, "not audio").unwrap();
    assert!(audio_problem(&text, false).unwrap().contains("no audio Deepgram reads"));
    assert_eq!(audio_problem(&text, true), None, "raw audio with its encoding given");
    let empty = dir.join("empty.wav");
    std::fs::write(&empty, "").unwrap();
    assert!(audio_problem(&empty, true).unwrap().contains("empty"));
    assert_eq!(audio_problem(&dir.join("missing.wav"), false), None, "left to the form's own check");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_transcript_reads_as_paragraphs_then_utterances_then_words() {
    let word = |w: &str, start: f64, end: f64, speaker: u64| json!({"word": w, "punctuated_word": w, "start": start, "end": end, "confidence": 0.9, "speaker": speaker});
    let words = vec![word("Hello.", 0.3, 0.8, 0), word("Hi", 1.0, 1.2, 1), word("there.", 1.2, 1.6, 1)];
    let body = json!({
        "metadata": {"request_id": "r1", "duration": 65.25, "channels": 1,
            "model_info": {"u": {"name": "general-nova-3", "version": "1", "arch": "nova-3"}},
            "warnings": [{"parameter": "transcript", "type": "simulated", "message": "the words are synthetic"}]},
        "results": {"channels": [{"alternatives": [{"transcript": "Hello. Hi there.", "confidence": 0.93, "words": words,
            "paragraphs": {"transcript": "", "paragraphs": [
                {"sentences": [{"text": "Hello.", "start": 0.3, "end": 0.8}], "speaker": 0, "start": 0.3, "end": 0.8},
                {"sentences": [{"text": "Hi there.", "start": 1.0, "end": 1.6}], "speaker": 1, "start": 61.0, "end": 61.6}
            ]}}]}]}
    });
    let view = detail_for(op("transcription_transcribe"), &body).unwrap();
    assert_eq!(view.title, "transcript · 65.2 s · 1 channel");
    assert_eq!(view.texts[0].0, "transcript");
    assert_eq!(view.texts[0].1, "[0:00.3–0:00.8] Speaker 0: Hello.\n[1:01.0–1:01.6] Speaker 1: Hi there.");
    assert!(view.facts.iter().any(|(l, v, _)| l == "model" && v == "general-nova-3"), "{:?}", view.facts);
    assert!(view.facts.iter().any(|(l, v, _)| l == "duration" && v == "65.25 s (1:05.2)"), "{:?}", view.facts);
    assert_eq!(view.note.as_deref(), Some("⚠ transcript: the words are synthetic"));
    assert!(view.tables.is_empty(), "the paragraphs say the words");

    // No paragraphs: the utterances; none either: runs of words by speaker.
    let mut utterances = body.clone();
    utterances["results"]["channels"][0]["alternatives"][0].as_object_mut().unwrap().remove("paragraphs");
    utterances["results"]["utterances"] =
        json!([{"start": 0.3, "end": 1.6, "channel": 0, "transcript": "Hello. Hi there.", "speaker": 0}]);
    let view = detail_for(op("transcription_transcribe"), &utterances).unwrap();
    assert_eq!(view.texts[0].1, "[0:00.3–0:01.6] Speaker 0: Hello. Hi there.");
    utterances["results"].as_object_mut().unwrap().remove("utterances");
    let view = detail_for(op("transcription_transcribe"), &utterances).unwrap();
    assert_eq!(view.texts[0].1, "[0:00.3–0:00.8] Speaker 0: Hello.\n[0:01.0–0:01.6] Speaker 1: Hi there.");
    assert_eq!(view.tables.last().unwrap().title, "words (3)");

    // Two channels: a section each.
    let mut stereo = utterances.clone();
    stereo["metadata"]["channels"] = json!(2);
    let channel = stereo["results"]["channels"][0].clone();
    stereo["results"]["channels"].as_array_mut().unwrap().push(channel);
    let view = detail_for(op("transcription_transcribe"), &stereo).unwrap();
    assert_eq!(view.title, "transcript · 65.2 s · 2 channels");
    let titles: Vec<&str> = view.texts.iter().map(|(t, _)| t.as_str()).collect();
    assert_eq!(titles, ["channel 0", "channel 1"]);

    // A callback answer is only its request id.
    let later = detail_for(op("transcription_transcribe"), &json!({"request_id": "abc"})).unwrap();
    assert!(later.title.contains("callback"));
}

#[test]
fn an_analysis_shows_summary_sentiment_topics_and_intents_in_either_shape() {
    let body = json!({
        "metadata": {"request_id": "r", "language": "en"},
        "results": {
            "summary": {"text": "A customer thanks support."},
            "sentiments": {"segments": [{"text": "Thanks a lot.", "sentiment": "positive", "sentiment_score": 0.7}],
                "average": {"sentiment": "positive", "sentiment_score": 0.7}},
            "topics": {"segments": [{"text": "Thanks a lot.", "topics": [{"topic": "Support", "confidence_score": 0.8}]}]},
            "intents": {"segments": [{"text": "Thanks a lot.", "intents": [{"intent": "Give thanks", "confidence_score": 0.6}]}]}
        }
    });
    let view = detail_for(op("text_analyze"), &body).unwrap();
    assert_eq!(view.facts[0], ("sentiment".to_owned(), "positive (0.70)".to_owned(), Some(Tone::Good)));
    assert_eq!(view.texts, [("summary".to_owned(), "A customer thanks support.".to_owned())]);
    let titles: Vec<&str> = view.tables.iter().map(|t| t.title.as_str()).collect();
    assert_eq!(titles, ["sentiment (1 segment)", "topics (1)", "intents (1)"]);
    assert_eq!(view.tables[1].rows[0], ["Support", "0.80", "Thanks a lot."]);
    // The OpenAPI file's nested metadata reads the same.
    let nested = json!({"metadata": {"metadata": {"language": "en", "request_id": "n"}}, "results": {}});
    let view = detail_for(op("text_analyze"), &nested).unwrap();
    assert!(view.facts.iter().any(|(l, v, _)| l == "request id" && v == "n"));
    assert!(view.note.unwrap().contains("nothing was asked for"));
}

#[test]
fn a_new_key_view_holds_the_secret_once_with_a_copy_key_and_a_warning() {
    let body = json!({"api_key_id": "k1", "key": "s3cr3t-abcdef", "comment": "ci", "scopes": ["member"], "tags": [], "created": "2026-01-01T00:00:00Z"});
    let view = detail_for(op("keys_create"), &body).unwrap();
    assert_eq!(view.texts, [("secret (shown only this once)".to_owned(), "s3cr3t-abcdef".to_owned())]);
    assert!(view.note.unwrap().contains("will not be shown again"));
    assert_eq!(
        view.commands[0].command,
        DetailCommand::Copy { text: "s3cr3t-abcdef".into(), what: "the new key's secret".into() }
    );
    assert!(view.record.is_none(), "the secret is kept in no record a later view or form reads");
}

#[test]
fn usage_by_day_with_totals_and_a_chart_key() {
    let body = json!({"start": "2026-11-01", "end": "2026-11-03", "resolution": {"units": "day", "amount": 1}, "results": [
        {"start": "2026-11-01", "end": "2026-11-01", "hours": 1.5, "total_hours": 1.5, "requests": 10, "tokens": {"in": 5, "out": 1}, "tts": {"characters": 100, "requests": 2}},
        {"start": "2026-11-03", "end": "2026-11-03", "hours": 0.25, "total_hours": 0.25, "requests": 4, "tokens": {"in": 0, "out": 0}, "tts": {"characters": 0, "requests": 0}}
    ]});
    let view = detail_for(op("usage_get"), &body).unwrap();
    assert_eq!(view.title, "usage 2026-11-01 → 2026-11-03");
    assert_eq!(view.tables[0].rows[0], ["2026-11-01", "1.50", "10", "100", "6"]);
    assert_eq!(view.tables[0].rows[2], ["total", "1.75", "14", "100", "6"]);
    assert_eq!(view.commands[0].command, DetailCommand::Chart);
    // And the page charts as daily bars, hours first.
    let records = body["results"].as_array().unwrap();
    let series = crate::tui::components::chart::detect(records).unwrap();
    assert!(series.automatic && series.bars, "{series:?}");
    assert_eq!(series.series[0].name, "hours");
    assert!(series.series.iter().any(|s| s.name == "requests"));
}

#[test]
fn forms_catch_bad_dates_scopes_expiries_and_blank_text() {
    let today = day("2026-11-27");
    assert_eq!(usage_range(today), ("2026-10-29".to_owned(), "2026-11-27".to_owned()));
    let mut suggested = values(&[("project_id", "p")]);
    suggest(op("usage_get"), &mut suggested, today);
    assert_eq!(suggested.get("start").map(String::as_str), Some("2026-10-29"));
    let mut typed = values(&[("start", "2026-01-01")]);
    suggest(op("usage_get"), &mut typed, today);
    assert_eq!(typed.get("start").map(String::as_str), Some("2026-01-01"), "a date given is kept");

    let problems = form_problems(op("usage_get"), &values(&[("start", "2026-02-30"), ("end", "yesterday")]), today);
    assert_eq!(problems.len(), 2, "{problems:?}");
    assert!(problems[0].1.contains("'2026-02-30' is no date"));
    let backwards = form_problems(op("usage_get"), &values(&[("start", "2026-05-10"), ("end", "2026-05-01")]), today);
    assert_eq!(backwards, [("end", "ends (2026-05-01) before it starts (2026-05-10)".to_owned())]);
    assert!(form_problems(op("usage_get"), &values(&[("start", "2026-05-01")]), today).is_empty());

    let scopes = form_problems(op("keys_create"), &values(&[("scopes", "member, usage:read, keys:fly")]), today);
    assert_eq!(scopes[0].0, "scopes");
    assert!(scopes[0].1.starts_with("unknown scope keys:fly"), "{scopes:?}");
    assert!(
        form_problems(op("keys_create"), &values(&[("scopes", "admin, self-hosted:product:api")]), today).is_empty()
    );
    let past = form_problems(op("keys_create"), &values(&[("expiration_date", "2020-01-01T00:00:00Z")]), today);
    assert!(past[0].1.contains("in the past"), "{past:?}");
    let bad = form_problems(op("keys_create"), &values(&[("expiration_date", "next week")]), today);
    assert!(bad[0].1.contains("no RFC 3339 time"), "{bad:?}");

    let blank = form_problems(op("text_analyze"), &values(&[("text", " \n ")]), today);
    assert_eq!(blank[0].0, "text");
    assert!(form_problems(op("text_analyze"), &values(&[("text", "hi\nthere")]), today).is_empty());
    assert_eq!(Deepgram.text_lines(op("text_analyze")), ["text"]);
    assert!(Deepgram.text_lines(op("projects_get")).is_empty());
}

#[test]
fn deleting_a_project_names_what_goes_with_it_counted_where_seen() {
    let project = "p-1";
    let seen = |list: &str| -> Option<Seen> {
        match list {
            "projects_list" => Some(Seen {
                records: vec![json!({"project_id": project, "name": "Support calls"})],
                values: Values::new(),
                more: false,
            }),
            "keys_list" => Some(Seen {
                records: vec![json!({}), json!({}), json!({})],
                values: values(&[("project_id", project)]),
                more: false,
            }),
            // Members seen for another project say nothing of this one.
            "members_list" => {
                Some(Seen { records: vec![json!({})], values: values(&[("project_id", "other")]), more: false })
            }
            _ => None,
        }
    };
    let lines = Deepgram.effects_seen(op("projects_delete"), &values(&[("project_id", project)]), &seen);
    assert_eq!(lines[0], "deletes project Support calls (p-1) and everything in it:");
    assert_eq!(lines[1], "3 API keys, its members and its balances go with it, and its usage history");
    assert!(Deepgram.effects_seen(op("keys_delete"), &values(&[("project_id", project)]), &seen).is_empty());
}

#[test]
fn rows_open_as_views_and_give_their_ids() {
    let project = json!({"project_id": "p-1", "name": "Support calls"});
    let scope = |name: &str| (name == "project_id").then(|| "p-1".to_owned());
    let Some(RowAction::View(view, Some((fetch, values)))) = Deepgram.open_row("projects_list", &project, &scope)
    else {
        panic!("a project opens as a view and is asked for whole")
    };
    assert_eq!((view.title.as_str(), fetch), ("project Support calls", "projects_get"));
    assert_eq!(values.get("project_id").map(String::as_str), Some("p-1"));
    let keys: Vec<char> = view.commands.iter().map(|k| k.key).collect();
    assert_eq!(keys, ['a', 'm', 'b', 'u', 'n', 'e', 'd']);
    assert!(view.same_subject(&detail_for(op("projects_get"), &project).unwrap()));

    let key = json!({"member": {"member_id": "m", "email": "ada@x"}, "api_key": {"api_key_id": "k-9", "comment": "ci", "scopes": ["member"], "created": "2026-01-01T10:00:00.000Z"}});
    let Some(RowAction::View(view, None)) = Deepgram.open_row("keys_list", &key, &scope) else { panic!("a key view") };
    assert_eq!(
        view.commands[0].command,
        DetailCommand::Send { op: "keys_delete", values: pairs(&[("project_id", "p-1"), ("key_id", "k-9")]) }
    );
    assert!(view.facts.iter().any(|(l, v, _)| l == "created" && v == "2026-01-01 10:00:00"));
    assert_eq!(remembered("keys_list", key.as_object().unwrap()), [("key_id", "k-9".to_owned())]);
    assert_eq!(Deepgram.label(key.as_object().unwrap()).as_deref(), Some("ci"));
    let model = json!({"uuid": "u-1", "name": "thalia", "canonical_name": "aura-2-thalia-en", "metadata": {"accent": "American"}});
    assert_eq!(remembered("models_list", model.as_object().unwrap()), [("model_id", "u-1".to_owned())]);

    let columns: Vec<String> = layout(op("keys_list")).unwrap().columns.iter().map(Column::label).collect();
    assert_eq!(columns, ["comment", "scopes", "created", "expiration_date", "email", "tags", "api_key_id"]);
    let models: Vec<String> = layout(op("models_list")).unwrap().columns.iter().map(Column::label).collect();
    assert!(models.starts_with(&["name".to_owned(), "canonical_name".to_owned(), "kind".to_owned()]));
}

#[test]
fn list_cells_join_lists_and_shorten_times() {
    let page = json!({"api_keys": [{"member": {"email": "ada@x"}, "api_key": {"api_key_id": "k", "comment": "ci",
        "scopes": ["member", "usage:read"], "created": "2026-01-01T10:00:00.123Z"}}]});
    let doc = crate::json_index::JsonDoc::parse(bytes::Bytes::from(page.to_string())).unwrap();
    let records = doc.records().unwrap();
    let spec = crate::table::RowSpec::new(Some("api_key_id"), layout(op("keys_list")));
    let table = spec.table(&doc, &records);
    let cells: Vec<&str> = table.rows[0].cells().collect();
    assert_eq!(cells[..3], ["ci", "member, usage:read", "2026-01-01 10:00:00"]);
    assert_eq!(cells[4], "ada@x");
    assert_eq!(Deepgram.cell_tone("scopes", "owner"), Some(Tone::Changed));
}

#[test]
fn usage_totals_keep_two_decimals_like_the_days() {
    let day = |start: &str, hours: f64, requests: u64| serde_json::json!({"start": start, "hours": hours, "requests": requests, "tts": {"characters": 1200}});
    let body = serde_json::json!({"start": "2026-11-01", "end": "2026-11-03", "resolution": {"units": "day"},
        "results": [day("2026-11-01", 60.25, 900), day("2026-11-02", 60.5, 1100)]});
    let view = usage_view(&body);
    let rows = &view.tables[0].rows;
    assert_eq!(rows[0][1], "60.25");
    assert_eq!(rows[2], ["total", "120.75", "2,000", "2,400", "0"], "the total keeps its hundredths");
    assert!(view.facts.contains(&fact("audio hours", "120.75".to_owned())), "{:?}", view.facts);
    let big = serde_json::json!({"results": [day("2026-11-01", 1234.5, 1)]});
    assert_eq!(usage_view(&big).tables[0].rows[1][1], "1,234.50");
}
