//! Deepgram live transcription against the in-process simulator over a real socket: speech the
//! simulator made streams back its own words in order and in time, interim results replaced by
//! finals that tile the audio; the control messages (`KeepAlive`, `Finalize`, `CloseStream`,
//! `Configure`, a bad one); the handshake's refusals in Deepgram's words; the idle close; audio
//! it cannot read; sound events; and usage counted in seconds of audio, as `method=streaming`.

#![allow(clippy::unwrap_used, reason = "a test panics on failure")]

use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use opsdeck::catalog::Service;
use opsdeck::sandbox::credentials::DEEPGRAM_KEY;
use serde_json::{json, Value};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::HeaderValue;
use tokio_tungstenite::tungstenite::Message;

mod common;

use common::Ws;

/// What the server sent, in order, up to its close.
#[derive(Debug, Default)]
struct Heard {
    messages: Vec<Value>,
    close: Option<(u16, String)>,
}

impl Heard {
    fn of_type(&self, kind: &str) -> Vec<&Value> {
        self.messages.iter().filter(|m| m["type"] == kind).collect()
    }

    fn finals(&self) -> Vec<&Value> {
        self.of_type("Results").into_iter().filter(|m| m["is_final"] == true).collect()
    }

    /// The final transcript: each final's words, in order.
    fn final_words(&self) -> Vec<String> {
        self.finals()
            .iter()
            .flat_map(|r| r["channel"]["alternatives"][0]["words"].as_array().unwrap().clone())
            .map(|w| w["word"].as_str().unwrap().to_owned())
            .collect()
    }
}

struct Live {
    ws: Ws,
}

impl Live {
    async fn open(dg: &common::Simulated, query: &str) -> Live {
        let mut request = url(dg, query).into_client_request().unwrap();
        request.headers_mut().insert("Authorization", HeaderValue::from_str(&format!("Token {DEEPGRAM_KEY}")).unwrap());
        let (ws, response) = tokio_tungstenite::connect_async(request).await.unwrap();
        assert_eq!(response.status(), 101);
        assert!(response.headers().contains_key("dg-request-id"));
        Live { ws }
    }

    async fn audio(&mut self, bytes: &[u8]) {
        self.ws.send(Message::Binary(bytes.to_vec().into())).await.unwrap();
    }

    async fn text(&mut self, message: Value) {
        common::send_json(&mut self.ws, &message).await;
    }

    /// The next message; `None` at the close.
    async fn next(&mut self) -> Option<Value> {
        common::next_json(&mut self.ws).await
    }

    /// Everything up to the close, and the close frame.
    async fn rest(&mut self) -> Heard {
        let mut heard = Heard::default();
        loop {
            let frame = tokio::time::timeout(Duration::from_secs(10), self.ws.next()).await.expect("a frame in 10 s");
            match frame {
                Some(Ok(Message::Text(text))) => heard.messages.push(serde_json::from_str(&text).unwrap()),
                Some(Ok(Message::Close(frame))) => {
                    heard.close = frame.map(|f| (u16::from(f.code), f.reason.to_string()));
                    return heard;
                }
                Some(Ok(_)) => {}
                Some(Err(_)) | None => return heard,
            }
        }
    }
}

fn url(dg: &common::Simulated, query: &str) -> String {
    format!("{}/v1/listen?{query}", dg.sandbox.base_url(Service::Deepgram).replace("http://", "ws://"))
}

/// Audio the simulator's `/v1/speak` makes of `text`.
async fn speak(dg: &common::Simulated, text: &str, format: &str) -> Vec<u8> {
    let response = dg
        .http
        .post(format!("{}/v1/speak?{format}", dg.sandbox.base_url(Service::Deepgram)))
        .header("Authorization", format!("Token {DEEPGRAM_KEY}"))
        .header("Content-Type", "application/json")
        .body(json!({"text": text}).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    response.bytes().await.unwrap().to_vec()
}

/// `seconds` of silence as 16-bit mono PCM.
fn silence(seconds: f64, rate: u32) -> Vec<u8> {
    vec![0u8; (seconds * f64::from(rate)) as usize * 2]
}

#[tokio::test]
async fn spoken_audio_streams_back_its_words_in_order_and_in_time() {
    let dg = common::Simulated::start(Service::Deepgram).await;
    let text = "the quick brown fox jumps over the lazy dog near the riverbank.";
    let wav = speak(&dg, text, "encoding=linear16&sample_rate=16000").await;
    let mut live = Live::open(&dg, "model=nova-3&interim_results=true&punctuate=true").await;
    // A tenth of a second a frame, as a microphone sends it.
    for chunk in wav.chunks(3200) {
        live.audio(chunk).await;
    }
    live.text(json!({"type": "CloseStream"})).await;
    let heard = live.rest().await;
    assert_eq!(heard.close, Some((1000, String::new())));

    let expected: Vec<String> = text.split_whitespace().map(|w| w.trim_end_matches('.').to_owned()).collect();
    assert_eq!(heard.final_words(), expected);
    let punctuated: Vec<&str> = heard
        .finals()
        .iter()
        .map(|r| r["channel"]["alternatives"][0]["transcript"].as_str().unwrap())
        .filter(|t| !t.is_empty())
        .collect();
    assert_eq!(punctuated.join(" "), "The quick brown fox jumps over the lazy dog near the riverbank.");

    // Interim results came first, each a prefix of what became final.
    let results = heard.of_type("Results");
    let interims: Vec<&&Value> = results.iter().filter(|r| r["is_final"] == false).collect();
    assert!(interims.len() >= 3, "{} interim results over {} s of audio", interims.len(), wav.len() / 32000);
    assert!(heard.finals().len() >= 2, "a long utterance is finalised in parts");

    // Finals tile the audio: each starts where the last ended, and the words lie within them.
    let mut at = 0.0f64;
    let mut last_word_end = 0.0f64;
    for r in heard.finals() {
        let (start, duration) = (r["start"].as_f64().unwrap(), r["duration"].as_f64().unwrap());
        assert!((start - at).abs() < 0.002, "final starts at {start}, the last ended at {at}");
        at = start + duration;
        for w in r["channel"]["alternatives"][0]["words"].as_array().unwrap() {
            let (ws, we) = (w["start"].as_f64().unwrap(), w["end"].as_f64().unwrap());
            assert!(ws >= last_word_end - 1e-9 && we > ws, "word times go forward: {w}");
            assert!(we <= at + 0.002, "a word of a final ends within it: {w} in {start}+{duration}");
            last_word_end = we;
        }
        assert_eq!(r["channel_index"], json!([0, 1]));
        assert_eq!(r["metadata"]["model_info"]["name"], "nova-3");
        assert!(r["metadata"]["warnings"].is_null(), "the simulator's own speech is not flagged");
    }
    // Each word is known in time: the interim result that first shows a word ends after it.
    for r in interims {
        let end = r["start"].as_f64().unwrap() + r["duration"].as_f64().unwrap();
        for w in r["channel"]["alternatives"][0]["words"].as_array().unwrap() {
            assert!(w["end"].as_f64().unwrap() <= end + 0.002, "{w} shown by a result ending at {end}");
        }
    }
    let metadata = heard.of_type("Metadata");
    assert_eq!(metadata.len(), 1);
    let seconds = (wav.len() - 44) as f64 / 32000.0;
    assert!((metadata[0]["duration"].as_f64().unwrap() - seconds).abs() < 0.01);
    assert_eq!(metadata[0]["channels"], 1);
    assert_eq!(metadata[0]["transaction_key"], "deprecated");
    assert!((at - seconds).abs() < 0.01, "the finals cover all {seconds} s, not {at}");
    assert_eq!(heard.messages.last().unwrap()["type"], "Metadata");
}

#[tokio::test]
async fn raw_mulaw_at_eight_kilohertz_reads_the_same() {
    let dg = common::Simulated::start(Service::Deepgram).await;
    let raw = speak(&dg, "hello from the sandbox", "encoding=mulaw&container=none").await;
    let mut live = Live::open(&dg, "encoding=mulaw&sample_rate=8000").await;
    for chunk in raw.chunks(800) {
        live.audio(chunk).await;
    }
    live.text(json!({"type": "CloseStream"})).await;
    let heard = live.rest().await;
    assert_eq!(heard.final_words(), ["hello", "from", "the", "sandbox"]);
    assert!(heard.of_type("Results").iter().all(|r| r["is_final"] == true), "no interim results unless asked");
}

#[tokio::test]
async fn other_audio_gets_synthetic_words_flagged_and_sound_events() {
    let dg = common::Simulated::start(Service::Deepgram).await;
    // One second of silence, two of tone, two of silence: speech starts at 1 s and ends with
    // the silence after it.
    let mut pcm = silence(1.0, 16000);
    let tone = common::tone_wav(2.0, 16000, 1);
    pcm.extend_from_slice(&tone[44..]);
    pcm.extend_from_slice(&silence(2.0, 16000));
    let mut live = Live::open(
        &dg,
        "encoding=linear16&sample_rate=16000&interim_results=true&vad_events=true&endpointing=300&utterance_end_ms=1000",
    )
    .await;
    for chunk in pcm.chunks(1600) {
        live.audio(chunk).await;
    }
    live.text(json!({"type": "CloseStream"})).await;
    let heard = live.rest().await;

    let started = heard.of_type("SpeechStarted");
    assert_eq!(started.len(), 1, "{:?}", heard.messages);
    assert!((started[0]["timestamp"].as_f64().unwrap() - 1.0).abs() < 0.011);
    let words = heard.final_words();
    assert_eq!(words.len(), 5, "one word a 0.4 s of sound: {words:?}");
    let endpoint: Vec<&Value> = heard.finals().into_iter().filter(|r| r["speech_final"] == true).collect();
    assert_eq!(endpoint.len(), 1, "an endpoint 300 ms into the silence");
    let end = endpoint[0]["start"].as_f64().unwrap() + endpoint[0]["duration"].as_f64().unwrap();
    assert!((end - 3.3).abs() < 0.011, "the endpoint at {end}");
    let finals = heard.finals();
    let with_words = finals.iter().find(|r| !r["channel"]["alternatives"][0]["words"].as_array().unwrap().is_empty());
    let flagged = with_words.unwrap();
    assert_eq!(flagged["metadata"]["warnings"][0]["type"], "simulated");
    assert_eq!(flagged["channel"]["alternatives"][0]["confidence"], 0.62);
    let utterance_end = heard.of_type("UtteranceEnd");
    assert_eq!(utterance_end.len(), 1);
    let last = utterance_end[0]["last_word_end"].as_f64().unwrap();
    assert!(last > 2.5 && last < 3.0, "the last word ends with the sound, at {last}");
    assert_eq!(heard.of_type("Metadata")[0]["warnings"][0]["type"], "simulated");

    // The same audio reads the same words.
    let mut again = Live::open(&dg, "encoding=linear16&sample_rate=16000").await;
    again.audio(&pcm).await;
    again.text(json!({"type": "CloseStream"})).await;
    assert_eq!(again.rest().await.final_words(), words);
}

#[tokio::test]
async fn finalize_keepalive_configure_and_a_bad_message() {
    let dg = common::Simulated::start(Service::Deepgram).await;
    let wav = speak(&dg, "one two three", "encoding=linear16&sample_rate=16000").await;
    let mut live = Live::open(&dg, "model=nova-3").await;
    live.audio(&wav).await;
    live.text(json!({"type": "KeepAlive"})).await;
    live.text(json!({"type": "Finalize"})).await;
    let result = live.next().await.unwrap();
    assert_eq!(result["type"], "Results");
    assert_eq!(result["from_finalize"], true);
    assert_eq!(result["is_final"], true);
    assert_eq!(result["channel"]["alternatives"][0]["transcript"], "one two three");

    live.text(json!({"type": "Configure", "keyterms": ["opsdeck"], "features": {"punctuate": true}})).await;
    let configured = live.next().await.unwrap();
    assert_eq!(configured["type"], "ConfigureSuccess");
    assert_eq!(configured["keyterms"], json!(["opsdeck"]));
    assert_eq!(configured["request_id"], result["metadata"]["request_id"]);

    live.ws.send(Message::Text("{not json".into())).await.unwrap();
    let error = live.next().await.unwrap();
    assert_eq!(error["type"], "Error");
    assert_eq!(error["variant"], "SchemaError");
    assert_eq!(error["message"], "{not json");
    live.text(json!({"type": "Dance"})).await;
    assert_eq!(live.next().await.unwrap()["variant"], "SchemaError");

    // The socket is still open: an empty binary frame ends the stream, as it used to.
    live.audio(&[]).await;
    let heard = live.rest().await;
    assert_eq!(heard.close, Some((1000, String::new())));
    assert_eq!(heard.of_type("Metadata").len(), 1);

    // Keyterms are Nova-3's.
    let mut other = Live::open(&dg, "model=nova-2").await;
    other.text(json!({"type": "Configure", "keyterms": ["x"]})).await;
    let refused = other.next().await.unwrap();
    assert_eq!(refused["type"], "ConfigureFailure");
    assert_eq!(refused["code"], "CONFIGURE_KEYTERMS_NOT_SUPPORTED");
}

#[tokio::test]
async fn the_handshake_is_refused_in_deepgrams_words() {
    let dg = common::Simulated::start(Service::Deepgram).await;
    let refused = |request: tokio_tungstenite::tungstenite::handshake::client::Request| async move {
        match tokio_tungstenite::connect_async(request).await {
            Err(tokio_tungstenite::tungstenite::Error::Http(response)) => {
                let status = response.status().as_u16();
                let dg_error = response.headers().get("dg-error").map(|v| v.to_str().unwrap().to_owned());
                let body: Value = serde_json::from_slice(response.body().as_deref().unwrap_or_default()).unwrap();
                (status, dg_error, body)
            }
            other => panic!("expected a refusal, got {other:?}"),
        }
    };
    let (status, dg_error, body) = refused(url(&dg, "model=nova-3").into_client_request().unwrap()).await;
    assert_eq!((status, body["err_code"].as_str()), (401, Some("INVALID_AUTH")));
    assert_eq!(dg_error.as_deref(), Some("Invalid credentials."));

    let with_key = |query: &str| {
        let mut request = url(&dg, query).into_client_request().unwrap();
        request.headers_mut().insert("Authorization", HeaderValue::from_str(&format!("Token {DEEPGRAM_KEY}")).unwrap());
        request
    };
    let (status, _, body) = refused(with_key("encoding=linear16")).await;
    assert_eq!(status, 400, "{body}");
    assert!(body["err_msg"].as_str().unwrap().contains("sample_rate"));
    let (status, _, body) = refused(with_key("encoding=wav&sample_rate=8000")).await;
    assert_eq!(status, 400);
    assert!(body["err_msg"].as_str().unwrap().contains("unknown variant `wav`"));
    let (status, _, _) = refused(with_key("interim_results=yes")).await;
    assert_eq!(status, 400);
    let (status, _, body) = refused(with_key("model=whisper-large")).await;
    assert_eq!(status, 400, "{body}");

    // A browser carries the key as subprotocols, and gets one echoed.
    let mut request = url(&dg, "model=nova-3").into_client_request().unwrap();
    request
        .headers_mut()
        .insert("Sec-WebSocket-Protocol", HeaderValue::from_str(&format!("token, {DEEPGRAM_KEY}")).unwrap());
    let (_, response) = tokio_tungstenite::connect_async(request).await.unwrap();
    assert_eq!(response.headers().get("sec-websocket-protocol").unwrap(), "token");
}

#[tokio::test]
async fn ten_quiet_seconds_close_the_stream_net_0001() {
    let dg = common::Simulated::start(Service::Deepgram).await;
    let mut live = Live::open(&dg, "model=nova-3").await;
    // A message with an answer: once it comes, the socket has heard the client.
    async fn heard_now(live: &mut Live) {
        live.ws.send(Message::Text("?".into())).await.unwrap();
        assert_eq!(live.next().await.unwrap()["variant"], "SchemaError");
    }
    heard_now(&mut live).await;
    dg.sandbox.clock().advance(6_000);
    // A KeepAlive (no answer; the message after it shows it was read) restarts the count.
    live.text(json!({"type": "KeepAlive"})).await;
    heard_now(&mut live).await;
    dg.sandbox.clock().advance(6_000);
    heard_now(&mut live).await;
    // The sandbox clock jumps past the idle limit; the socket sees it at its next look.
    dg.sandbox.clock().advance(10_001);
    let heard = live.rest().await;
    assert_eq!(heard.close, Some((1011, "NET-0001".to_owned())));
    assert!(heard.messages.is_empty());
}

#[tokio::test]
async fn audio_that_cannot_be_read_closes_data_0000() {
    let dg = common::Simulated::start(Service::Deepgram).await;
    let mut live = Live::open(&dg, "model=nova-3").await;
    live.audio(b"this is plainly not audio of any kind").await;
    let heard = live.rest().await;
    assert_eq!(heard.close, Some((1008, "DATA-0000".to_owned())));
}

#[tokio::test]
async fn a_stream_is_usage_in_seconds_of_audio_as_streaming() {
    let dg = common::Simulated::start(Service::Deepgram).await;
    let base = dg.sandbox.base_url(Service::Deepgram);
    let get = |path: String| {
        let http = dg.http.clone();
        async move {
            let response =
                http.get(path).header("Authorization", format!("Token {DEEPGRAM_KEY}")).send().await.unwrap();
            serde_json::from_slice::<Value>(&response.bytes().await.unwrap()).unwrap()
        }
    };
    let projects = get(format!("{base}/v1/projects")).await;
    let project = projects["projects"][0]["project_id"].as_str().unwrap().to_owned();
    let usage = format!("{base}/v1/projects/{project}/usage?method=streaming");
    let before = get(usage.clone()).await;
    let hours = |u: &Value| u["results"].as_array().unwrap().iter().map(|r| r["hours"].as_f64().unwrap()).sum::<f64>();
    let requests =
        |u: &Value| u["results"].as_array().unwrap().iter().map(|r| r["requests"].as_u64().unwrap()).sum::<u64>();

    let mut live = Live::open(&dg, "encoding=linear16&sample_rate=16000&tag=live-test").await;
    live.audio(&silence(36.0, 16000)).await;
    live.text(json!({"type": "CloseStream"})).await;
    let heard = live.rest().await;
    assert_eq!(heard.close.unwrap().0, 1000);

    let after = get(usage.clone()).await;
    assert_eq!(requests(&after), requests(&before) + 1);
    assert!((hours(&after) - hours(&before) - 0.01).abs() < 1e-3, "36 s is 0.01 h");
    let sync = get(format!("{base}/v1/projects/{project}/usage?method=sync&tag=live-test")).await;
    assert_eq!(requests(&sync), 0, "a stream is not a sync request");
}

#[tokio::test]
async fn the_handshake_is_logged_and_faulted_like_any_request_and_channels_answer_apart() {
    let dg = common::Simulated::start(Service::Deepgram).await;
    let control = dg.sandbox.control_url();
    // A fault on the path refuses the handshake with its status; the log has both.
    let fault = json!({"service": "deepgram", "path": "/v1/listen", "status": 503, "count": 1});
    let added = dg.http.post(format!("{control}/faults")).body(fault.to_string()).send().await.unwrap();
    assert!(added.status().is_success(), "{}", added.text().await.unwrap());
    let mut request = url(&dg, "model=nova-3").into_client_request().unwrap();
    request.headers_mut().insert("Authorization", HeaderValue::from_str(&format!("Token {DEEPGRAM_KEY}")).unwrap());
    match tokio_tungstenite::connect_async(request).await {
        Err(tokio_tungstenite::tungstenite::Error::Http(response)) => assert_eq!(response.status(), 503),
        other => panic!("the fault refuses the handshake: {other:?}"),
    }
    // The next one is served: two channels, each with its own results.
    let mut live = Live::open(&dg, "encoding=linear16&sample_rate=8000&channels=2&multichannel=true").await;
    let stereo = common::tone_wav(1.0, 8000, 2);
    live.audio(&stereo[44..]).await;
    live.text(json!({"type": "CloseStream"})).await;
    let heard = live.rest().await;
    let indexes: Vec<&Value> = heard.finals().iter().map(|r| &r["channel_index"]).collect();
    assert_eq!(indexes, [&json!([0, 2]), &json!([1, 2])]);
    assert_eq!(heard.of_type("Metadata")[0]["channels"], 2);
    let log = dg.http.get(format!("{control}/requests?service=deepgram&limit=10")).send().await.unwrap();
    let log: Value = serde_json::from_slice(&log.bytes().await.unwrap()).unwrap();
    let statuses: Vec<u64> = log["requests"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["path"].as_str().is_some_and(|p| p.starts_with("/v1/listen")))
        .map(|r| r["status"].as_u64().unwrap())
        .collect();
    assert!(statuses.contains(&503) && statuses.contains(&101), "{log}");
}
