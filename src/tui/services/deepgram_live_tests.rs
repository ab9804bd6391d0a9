//! Tests of the live transcript's plan (URL, header, pace) and its view.

use super::*;
use crate::catalog::LISTEN_LIVE;
use crate::client::Credentials;

fn target(base: &str) -> Target {
    Target {
        service: crate::catalog::Service::Deepgram,
        base_url: base.to_owned(),
        credentials: Credentials::Deepgram(Secret::new("k3y")),
        live: false,
    }
}

fn file(name: &str, bytes: &[u8]) -> std::path::PathBuf {
    let path = std::env::temp_dir().join(format!("opsdeck-live-{}-{name}", std::process::id()));
    std::fs::write(&path, bytes).unwrap();
    path
}

#[test]
fn a_wav_streams_over_the_targets_own_host_with_its_token_at_its_byte_rate() {
    let wav = crate::sandbox::deepgram::audio::speak("hi", "linear16", Some("wav"), Some(16000), 1.0).unwrap();
    let path = file("a.wav", &wav.bytes);
    let values: Values =
        [("file", path.display().to_string()), ("interim_results", "true".into()), ("model", "nova-3".into())]
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v))
            .collect();
    let stream = plan(&LISTEN_LIVE, &values, &target("https://api.deepgram.com")).unwrap();
    let opening = &stream.opening;
    assert!(opening.url.starts_with("wss://api.deepgram.com/v1/listen?"), "{}", opening.url);
    assert!(opening.url.contains("interim_results=true") && opening.url.contains("model=nova-3"));
    assert!(!opening.url.contains("k3y") && !opening.shown.contains("k3y"), "no credential in the URL");
    assert_eq!(opening.headers.len(), 1);
    assert_eq!(opening.headers[0].1.expose(), "Token k3y");
    let upload = opening.upload.as_ref().unwrap();
    assert_eq!(upload.bytes, wav.bytes);
    assert!((upload.bytes_per_second - 32000.0).abs() < 1e-9);
    assert_eq!(upload.then, [CLOSE_STREAM]);
    assert_eq!(socket_url("http://127.0.0.1:7706/v1/listen?a=b").as_deref(), Some("ws://127.0.0.1:7706/v1/listen?a=b"));
    let _ = std::fs::remove_file(path);
}

#[test]
fn raw_audio_is_paced_by_its_encoding_rate_and_channels_and_compressed_is_refused() {
    let raw = file("a.raw", &[0u8; 1600]);
    let mut values: Values = [("file".to_owned(), raw.display().to_string())].into_iter().collect();
    let refused = plan(&LISTEN_LIVE, &values, &target("http://127.0.0.1:1")).err().unwrap();
    assert!(refused.contains("raw audio needs its encoding"), "{refused}");
    values.insert("encoding".into(), "mulaw".into());
    let refused = plan(&LISTEN_LIVE, &values, &target("http://127.0.0.1:1")).err().unwrap();
    assert!(refused.contains("sample_rate"), "{refused}");
    values.insert("sample_rate".into(), "8000".into());
    values.insert("channels".into(), "2".into());
    let stream = plan(&LISTEN_LIVE, &values, &target("http://127.0.0.1:1")).unwrap();
    assert!((stream.opening.upload.unwrap().bytes_per_second - 16000.0).abs() < 1e-9);
    values.insert("encoding".into(), "opus".into());
    let refused = plan(&LISTEN_LIVE, &values, &target("http://127.0.0.1:1")).err().unwrap();
    assert!(refused.contains("cannot be paced"), "{refused}");
    let _ = std::fs::remove_file(raw);
}

fn results(start: f64, duration: f64, is_final: bool, transcript: &str) -> String {
    serde_json::json!({
        "type": "Results", "channel_index": [0, 1], "start": start, "duration": duration, "is_final": is_final,
        "channel": {"alternatives": [{"transcript": transcript, "words": []}]},
        "metadata": {"request_id": "r-1"},
    })
    .to_string()
}

#[test]
fn interim_words_are_replaced_by_finals_and_the_view_says_how_it_ended() {
    let mut view = LiveTranscript::new("a.wav".into(), "ws://h/v1/listen".into(), 64_000, 32_000.0, 2.0);
    view.frame(&results(0.0, 1.0, false, "hello"));
    assert_eq!((view.transcript().as_str(), view.interim()), ("", "hello"));
    view.frame(&results(0.0, 1.5, false, "hello there"));
    assert_eq!(view.interim(), "hello there");
    view.frame(&results(0.0, 1.6, true, "Hello there."));
    assert_eq!((view.transcript().as_str(), view.interim()), ("Hello there.", ""));
    // Another channel's results are not this view's; garbage is said to be garbage.
    view.frame(&serde_json::json!({"type": "Results", "channel_index": [1, 2], "is_final": false, "channel": {"alternatives": [{"transcript": "other"}]}}).to_string());
    assert_eq!(view.interim(), "");
    view.frame("not json");
    view.sent(32_000);
    let detail = view.detail();
    assert!(detail.facts.iter().any(|(_, v, _)| v.contains("1.0 of 2.0 s sent")), "{:?}", detail.facts);
    assert!(detail.facts.iter().any(|(l, v, _)| l == "refused" && v.contains("not JSON")));
    assert_eq!(detail.subject.as_deref(), Some("live transcript of a.wav"));
    view.sent(64_000);
    view.frame(&results(1.6, 0.4, true, ""));
    assert!(view.detail().facts[0].1.contains("all sent"));
    view.ended("the server closed it (1011 NET-0001)");
    let detail = view.detail();
    assert!(detail.title.ends_with("ended"));
    assert_eq!(detail.facts[0].1, "ended early: the server closed it (1011 NET-0001)");
    assert_eq!(detail.facts[0].2, Some(Tone::Bad));
    // Metadata first, then the close: done, not ended.
    let mut done = LiveTranscript::new("b.wav".into(), "ws://h".into(), 10, 10.0, 1.0);
    done.frame(r#"{"type":"Metadata","request_id":"r-2"}"#);
    done.ended("the server closed it (1000)");
    assert!(done.detail().title.ends_with("done"));
}
