//! Every Deepgram operation through opsdeck's client against the in-process simulator, and
//! `opsdeck call deepgram ...` as a user types it: projects, keys made and used with their scopes
//! and expiry, members and the last owner, balances, models, usage counted from the requests
//! made here, transcription of a WAV made in the test (uploaded and by loopback URL), speech
//! saved and transcribed back, text analysis, the delete cascade; and bad input refused with a
//! clear message before anything is sent or changed.

#![allow(clippy::unwrap_used, reason = "a test panics on failure")]

use std::process::{Command, Output};

use axum::routing::get;
use axum::Router;
use opsdeck::catalog::Service;
use opsdeck::client::{CallError, Credentials, Response, Secret, Target};
use serde_json::Value;

mod common;

struct Deepgram(common::Simulated);

impl std::ops::Deref for Deepgram {
    type Target = common::Simulated;
    fn deref(&self) -> &common::Simulated {
        &self.0
    }
}

impl Deepgram {
    async fn start() -> Deepgram {
        Deepgram(common::Simulated::start(Service::Deepgram).await)
    }

    async fn call(&self, op: &str, params: &[(&str, &str)]) -> Result<Response, CallError> {
        self.0.send(&self.target, op, params, None).await
    }

    async fn json(&self, op: &str, params: &[(&str, &str)]) -> Value {
        let response = self.call(op, params).await.unwrap_or_else(|e| panic!("{op}: {e}"));
        serde_json::from_slice(&response.body).expect("JSON body")
    }

    async fn as_key(&self, secret: &str, op: &str, params: &[(&str, &str)]) -> Result<Response, CallError> {
        let target = Target { credentials: Credentials::Deepgram(Secret::new(secret)), ..self.target.clone() };
        self.0.send(&target, op, params, None).await
    }

    async fn project(&self) -> String {
        self.json("projects_list", &[]).await["projects"][0]["project_id"].as_str().unwrap().to_owned()
    }

    /// Requests counted in today's usage of `project` for `endpoint`.
    async fn requests_today(&self, project: &str, endpoint: &str) -> u64 {
        let usage = self.json("usage_get", &[("project_id", project), ("endpoint", endpoint)]).await;
        let today = usage["end"].as_str().unwrap().to_owned();
        usage["results"]
            .as_array()
            .unwrap()
            .iter()
            .find(|day| day["start"] == today.as_str())
            .map_or(0, |day| day["requests"].as_u64().unwrap_or(0) + day["tts"]["requests"].as_u64().unwrap_or(0))
    }

    fn url(&self) -> String {
        self.sandbox.base_url(Service::Deepgram)
    }
}

fn api_error(result: Result<Response, CallError>) -> (u16, Value) {
    match result {
        Err(CallError::Api(e)) => (e.status, serde_json::from_slice(&e.body).unwrap_or(Value::Null)),
        other => panic!("expected an API error, got {other:?}"),
    }
}

fn invalid(result: Result<Response, CallError>) -> String {
    match result {
        Err(CallError::Invalid(message)) => message,
        other => panic!("expected the client to refuse, got {other:?}"),
    }
}

/// The format fields of a WAV header: (format tag, channels, sample rate, bits, data bytes).
fn wav_header(bytes: &[u8]) -> (u16, u16, u32, u16, u32) {
    assert_eq!(&bytes[0..4], b"RIFF");
    assert_eq!(&bytes[8..16], b"WAVEfmt ");
    let u16_at = |i: usize| u16::from_le_bytes([bytes[i], bytes[i + 1]]);
    let u32_at = |i: usize| u32::from_le_bytes([bytes[i], bytes[i + 1], bytes[i + 2], bytes[i + 3]]);
    let data = bytes.windows(4).position(|w| w == b"data").unwrap();
    (u16_at(20), u16_at(22), u32_at(24), u16_at(34), u32_at(data + 4))
}

fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("opsdeck-deepgram-client-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

#[tokio::test]
async fn projects_keys_members_balances_and_models_through_the_client() {
    let dg = Deepgram::start().await;
    let projects = dg.json("projects_list", &[]).await;
    assert!(projects["projects"].as_array().unwrap().len() >= 2, "{projects}");
    let id = dg.project().await;
    assert_eq!(dg.json("projects_get", &[("project_id", &id)]).await["project_id"], id.as_str());
    dg.json("projects_update", &[("project_id", &id), ("name", "Renamed by the client")]).await;
    assert_eq!(dg.json("projects_get", &[("project_id", &id)]).await["name"], "Renamed by the client");

    // A key made with scopes, tags and a lifetime: its secret comes once, and it works at once.
    let created = dg
        .json(
            "keys_create",
            &[
                ("project_id", &id),
                ("comment", "ci reader"),
                ("scopes", "member"),
                ("tags", "ci,read"),
                ("time_to_live_in_seconds", "3600"),
            ],
        )
        .await;
    let secret = created["key"].as_str().unwrap().to_owned();
    let key_id = created["api_key_id"].as_str().unwrap().to_owned();
    assert_eq!(created["scopes"], serde_json::json!(["member"]), "{created}");
    assert!(created["expiration_date"].is_string(), "{created}");
    let keys = dg.call("keys_list", &[("project_id", &id)]).await.unwrap();
    let listed = String::from_utf8_lossy(&keys.body).into_owned();
    assert!(listed.contains(&key_id) && !listed.contains(&secret), "listed without its secret: {listed}");
    let mine = dg.as_key(&secret, "projects_list", &[]).await.unwrap();
    let mine: Value = serde_json::from_slice(&mine.body).unwrap();
    assert_eq!(mine["projects"].as_array().unwrap().len(), 1, "a project key sees its project only");
    let (status, body) = api_error(dg.as_key(&secret, "projects_delete", &[("project_id", &id)]).await);
    assert_eq!((status, body["err_code"].as_str()), (401, Some("INSUFFICIENT_PERMISSIONS")), "{body}");
    dg.json("keys_delete", &[("project_id", &id), ("key_id", &key_id)]).await;
    let (status, body) = api_error(dg.as_key(&secret, "projects_list", &[]).await);
    assert_eq!((status, body["err_code"].as_str()), (401, Some("INVALID_AUTH")), "revoked at once: {body}");

    // Members: the last owner stays; another member goes.
    let members = dg.json("members_list", &[("project_id", &id)]).await["members"].as_array().unwrap().clone();
    let with = |scope: &str| {
        members.iter().find(|m| m["scopes"][0] == scope).unwrap()["member_id"].as_str().unwrap().to_owned()
    };
    let (status, body) =
        api_error(dg.call("members_remove", &[("project_id", &id), ("member_id", &with("owner"))]).await);
    assert_eq!(status, 400);
    assert!(body["err_msg"].as_str().unwrap().contains("last owner"), "{body}");
    dg.json("members_remove", &[("project_id", &id), ("member_id", &with("member"))]).await;
    let left = dg.json("members_list", &[("project_id", &id)]).await;
    assert_eq!(left["members"].as_array().unwrap().len(), members.len() - 1);

    let balances = dg.json("balances_list", &[("project_id", &id)]).await;
    let balance = &balances["balances"][0];
    assert!(balance["balance_id"].is_string() && balance["amount"].as_f64().unwrap() > 0.0, "{balances}");
    assert!(balance["units"].is_string(), "{balances}");

    let models = dg.json("models_list", &[]).await;
    let stt = models["stt"].as_array().unwrap();
    let tts = models["tts"].as_array().unwrap();
    assert!(stt.iter().any(|m| m["canonical_name"] == "nova-3"), "{models}");
    assert!(tts.iter().any(|m| m["canonical_name"] == "aura-2-thalia-en"), "{models}");
    let uuid = tts[0]["uuid"].as_str().unwrap();
    assert_eq!(dg.json("models_get", &[("model_id", uuid)]).await["uuid"], uuid);
    let (status, _) = api_error(dg.call("models_get", &[("model_id", "00000000-0000-4000-8000-000000000000")]).await);
    assert_eq!(status, 404);
    dg.sandbox.shutdown();
}

#[tokio::test]
async fn a_wav_made_here_is_transcribed_from_a_file_and_from_a_loopback_url_and_counted_once() {
    let dg = Deepgram::start().await;
    let id = dg.project().await;
    let wav = common::tone_wav(2.5, 22_050, 2);
    let path = scratch("tone.wav");
    std::fs::write(&path, &wav).unwrap();
    let before = dg.requests_today(&id, "listen").await;
    let answer = dg
        .json(
            "transcription_transcribe",
            &[("file", path.to_str().unwrap()), ("diarize", "true"), ("paragraphs", "true"), ("punctuate", "true")],
        )
        .await;
    // Duration, channels and rate are the file's own, read from its header and samples.
    let metadata = &answer["metadata"];
    assert!((metadata["duration"].as_f64().unwrap() - 2.5).abs() < 0.01, "{metadata}");
    assert_eq!(metadata["channels"], 2);
    assert_eq!(metadata["sample_rate"], 22_050);
    assert!(metadata["warnings"].to_string().contains("synthetic"), "says its text is made up: {metadata}");
    let alternative = &answer["results"]["channels"][0]["alternatives"][0];
    let words = alternative["words"].as_array().unwrap();
    assert!(!words.is_empty() && words.iter().all(|w| w["end"].as_f64().unwrap() <= 2.5 && w["speaker"].is_u64()));
    assert!(alternative["paragraphs"]["paragraphs"].as_array().is_some_and(|p| !p.is_empty()), "{alternative}");

    // By URL, served on loopback.
    let served = wav.clone();
    let router = Router::new().route("/tone.wav", get(move || async move { served.clone() }));
    let host = opsdeck::sandbox::serve_loopback(router).await.unwrap();
    let by_url = dg.json("transcription_transcribe", &[("url", &format!("{host}/tone.wav"))]).await;
    assert_eq!(by_url["metadata"]["duration"], answer["metadata"]["duration"]);
    // Elsewhere: Deepgram's remote-content error, and nothing fetched.
    let (status, body) =
        api_error(dg.call("transcription_transcribe", &[("url", "https://example.com/tone.wav")]).await);
    assert_eq!((status, body["err_code"].as_str()), (400, Some("REMOTE_CONTENT_ERROR")), "{body}");
    assert_eq!(dg.requests_today(&id, "listen").await, before + 2, "each transcription counted once");
    dg.sandbox.shutdown();
}

// `opsdeck call` blocks this thread while the simulator answers on another.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn speech_saved_by_opsdeck_call_transcribes_back_to_its_text() {
    let dg = Deepgram::start().await;
    let text = "The sandbox speaks. Then it listens to itself.";
    let path = scratch("spoken.wav");
    let out = opsdeck(&["call", "deepgram", "speech_speak", &format!("text={text}")], &dg.url());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    std::fs::write(&path, &out.stdout).unwrap();
    let (format, channels, rate, bits, data) = wav_header(&out.stdout);
    assert_eq!((format, channels, bits), (1, 1, 16), "linear16 mono WAV");
    let seconds = f64::from(data) / f64::from(rate) / 2.0;
    assert!(seconds > 1.0, "length follows the text: {seconds} s");
    let answer = dg.json("transcription_transcribe", &[("file", path.to_str().unwrap()), ("punctuate", "true")]).await;
    assert_eq!(answer["results"]["channels"][0]["alternatives"][0]["transcript"], text);
    assert!((answer["metadata"]["duration"].as_f64().unwrap() - seconds).abs() < 0.01);
    // mulaw without a container: raw bytes, one per sample; a format not produced is refused.
    let raw = dg.call("speech_speak", &[("text", text), ("encoding", "mulaw"), ("container", "none")]).await.unwrap();
    assert_eq!(raw.header("content-type"), Some("audio/mulaw;rate=8000"));
    assert!(raw.header("dg-char-count").is_some() && raw.header("dg-request-id").is_some());
    assert_eq!(raw.body.len() * 2, usize::try_from(data).unwrap() / 3, "8 kHz mulaw against 24 kHz linear16");
    let (status, body) = api_error(dg.call("speech_speak", &[("text", text), ("encoding", "mp3")]).await);
    assert_eq!(status, 400, "{body}");
    assert!(body.to_string().contains("mp3"), "names the format: {body}");
    dg.sandbox.shutdown();
}

#[tokio::test]
async fn text_analysis_and_usage_through_the_client() {
    let dg = Deepgram::start().await;
    let id = dg.project().await;
    let text = "The support team was wonderful and fixed the billing problem quickly.\n\
                I want to cancel my old subscription. The new plan is great value.";
    let answer = dg
        .json(
            "text_analyze",
            &[("text", text), ("sentiment", "true"), ("topics", "true"), ("intents", "true"), ("summarize", "true")],
        )
        .await;
    let results = &answer["results"];
    assert!(results["sentiments"]["average"]["sentiment"].is_string(), "{answer}");
    assert!(!results["topics"]["segments"].as_array().unwrap().is_empty(), "{answer}");
    assert!(!results["intents"]["segments"].as_array().unwrap().is_empty(), "{answer}");
    assert!(results["summary"]["text"].as_str().is_some_and(|s| !s.is_empty()), "{answer}");
    let (status, body) = api_error(dg.call("text_analyze", &[("text", "Bonjour"), ("language", "fr")]).await);
    assert_eq!(status, 400, "{body}");
    // Usage over a range with a filter; a bad date is refused by the service in its words.
    let usage = dg.json("usage_get", &[("project_id", &id), ("endpoint", "read")]).await;
    assert!(usage["results"].as_array().unwrap().iter().any(|d| d["requests"].as_u64() > Some(0)), "{usage}");
    let month = dg.json("usage_get", &[("project_id", &id), ("start", "2026-10-01"), ("end", "2026-10-31")]).await;
    assert_eq!(month["start"], "2026-10-01");
    let message = invalid(dg.call("usage_get", &[("project_id", &id), ("start", "2026-13-01")]).await);
    assert!(message.contains("'2026-13-01' is not a time"), "{message}");
    let (status, body) = api_error(dg.call("usage_get", &[("project_id", &id), ("start", "1790000000")]).await);
    assert_eq!(status, 400);
    assert!(body.to_string().contains("YYYY-MM-DD"), "{body}");
    dg.sandbox.shutdown();
}

#[tokio::test]
async fn deleting_a_project_takes_its_keys_members_balances_and_usage() {
    let dg = Deepgram::start().await;
    let id = dg.project().await;
    let key = dg.json("keys_create", &[("project_id", &id), ("comment", "doomed"), ("scopes", "member")]).await;
    dg.json("projects_delete", &[("project_id", &id)]).await;
    for op in ["projects_get", "keys_list", "members_list", "balances_list", "usage_get"] {
        let (status, body) = api_error(dg.call(op, &[("project_id", &id)]).await);
        assert_eq!((status, body["category"].as_str()), (404, Some("NOT_FOUND")), "{op}: {body}");
    }
    let (status, _) = api_error(dg.as_key(key["key"].as_str().unwrap(), "projects_list", &[]).await);
    assert_eq!(status, 401, "its keys went with it");
    dg.sandbox.shutdown();
}

// `opsdeck call` blocks this thread while the simulator answers on another.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_is_refused_with_a_clear_message_and_changes_nothing() {
    let dg = Deepgram::start().await;
    let id = dg.project().await;
    let listens = dg.requests_today(&id, "listen").await;
    let keys = dg.json("keys_list", &[("project_id", &id)]).await["api_keys"].as_array().unwrap().len();
    // Refused by the client before anything is sent.
    let missing = scratch("no-such-file.wav");
    let message = invalid(dg.call("transcription_transcribe", &[("file", missing.to_str().unwrap())]).await);
    assert!(message.contains("no-such-file.wav"), "{message}");
    let message = invalid(dg.call("transcription_transcribe", &[]).await);
    assert!(message.contains("give url or file"), "{message}");
    let wav = scratch("both.wav");
    std::fs::write(&wav, common::tone_wav(0.5, 8000, 1)).unwrap();
    let both = [("url", "http://127.0.0.1:1/a.wav"), ("file", wav.to_str().unwrap())];
    assert!(invalid(dg.call("transcription_transcribe", &both).await).contains("not both"));
    assert!(invalid(dg.call("text_analyze", &[]).await).contains("give text or url"));
    let ttl_and_date = [
        ("project_id", id.as_str()),
        ("comment", "x"),
        ("scopes", "member"),
        ("time_to_live_in_seconds", "60"),
        ("expiration_date", "2099-01-01T00:00:00Z"),
    ];
    assert!(invalid(dg.call("keys_create", &ttl_and_date).await).contains("not both"));
    // Refused by the service, in its words.
    let garbage = scratch("garbage.wav");
    std::fs::write(&garbage, b"this is not audio at all, just text pretending").unwrap();
    let (status, body) = api_error(dg.call("transcription_transcribe", &[("file", garbage.to_str().unwrap())]).await);
    assert_eq!(status, 400, "{body}");
    assert!(body.to_string().contains("failed to process audio"), "{body}");
    let (status, _) =
        api_error(dg.call("keys_create", &[("project_id", &id), ("comment", "x"), ("scopes", "superuser")]).await);
    assert_eq!(status, 400);
    let (status, _) = api_error(dg.call("keys_delete", &[("project_id", &id), ("key_id", "no-such-key")]).await);
    assert!(status == 400 || status == 404, "{status}");
    let after = dg.json("keys_list", &[("project_id", &id)]).await["api_keys"].as_array().unwrap().len();
    assert_eq!(after, keys, "no key made");
    assert_eq!(dg.requests_today(&id, "listen").await, listens, "refused audio is not usage");

    // The same from `opsdeck call`: exit status 1 or 2 with the reason, nothing on stdout.
    for (args, says) in [
        (vec!["transcription_transcribe", "file=/no/such/file.wav"], "/no/such/file.wav"),
        (vec!["text_analyze"], "give text or url"),
        (vec!["speech_speak", "text="], "text"),
        (vec!["usage_get", "project_id=PROJECT", "start=yesterday"], "'yesterday' is not a time"),
        (vec!["usage_get", "project_id=PROJECT", "start=1790000000"], "YYYY-MM-DD"),
        (vec!["keys_create", "project_id=PROJECT", "comment=x", "scopes=superuser"], "superuser"),
        (vec!["projects_get", "project_id=6f1ee6a4-8c3a-4d8c-9e51-4a3b7e0d2c11"], "NOT_FOUND"),
    ] {
        let args: Vec<String> = args.iter().map(|a| a.replace("PROJECT", &id)).collect();
        let args: Vec<&str> = ["call", "deepgram"].into_iter().chain(args.iter().map(String::as_str)).collect();
        let out = opsdeck(&args, &dg.url());
        let stderr = String::from_utf8_lossy(&out.stderr);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(!out.status.success(), "{args:?} refused");
        assert!(format!("{stderr}{stdout}").contains(says), "{args:?}: {stderr} {stdout}");
    }
    dg.sandbox.shutdown();
}

/// `opsdeck call` aimed at this test's simulator, with no other configuration.
fn opsdeck(args: &[&str], url: &str) -> Output {
    let scratch = std::env::temp_dir().join(format!("opsdeck-deepgram-cli-{}", std::process::id()));
    Command::new(env!("CARGO_BIN_EXE_opsdeck"))
        .args(args)
        .env_clear()
        .env("OPSDECK_DATA_DIR", &scratch)
        .env("OPSDECK_STATE_DIR", &scratch)
        .env("OPSDECK_SANDBOX_PORT_BASE", "off")
        .env("OPSDECK_DEEPGRAM_URL", url)
        .output()
        .expect("opsdeck runs")
}

/// What a callback receiver of the test's own got: method, content type, body.
type Received = std::sync::Arc<std::sync::Mutex<Vec<(String, String, Vec<u8>)>>>;

async fn receiver(status: u16) -> (String, Received) {
    let received = Received::default();
    let log = received.clone();
    let router = Router::new().fallback(move |request: axum::extract::Request| {
        let log = log.clone();
        async move {
            let method = request.method().to_string();
            let content_type =
                request.headers().get("content-type").and_then(|v| v.to_str().ok()).unwrap_or_default().to_owned();
            let body = axum::body::to_bytes(request.into_body(), usize::MAX).await.unwrap().to_vec();
            log.lock().unwrap().push((method, content_type, body));
            axum::http::StatusCode::from_u16(status).unwrap()
        }
    });
    (opsdeck::sandbox::serve_loopback(router).await.unwrap(), received)
}

async fn wait_for(received: &Received, count: usize) -> Vec<(String, String, Vec<u8>)> {
    for _ in 0..200 {
        if received.lock().unwrap().len() >= count {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    received.lock().unwrap().clone()
}

#[tokio::test]
async fn a_callback_gets_the_result_later_and_the_answer_is_only_its_request_id() {
    let dg = Deepgram::start().await;
    let id = dg.project().await;
    let (url, received) = receiver(200).await;
    let path = scratch("callback.wav");
    std::fs::write(&path, common::tone_wav(1.0, 8000, 1)).unwrap();
    // Listen: {"request_id"} now, the transcription POSTed to the receiver.
    let answer = dg
        .json("transcription_transcribe", &[("file", path.to_str().unwrap()), ("callback", &format!("{url}/listen"))])
        .await;
    let request_id = answer["request_id"].as_str().unwrap().to_owned();
    assert_eq!(answer.as_object().unwrap().len(), 1, "only the request id: {answer}");
    let got = wait_for(&received, 1).await;
    let (method, content_type, body) = &got[0];
    assert_eq!((method.as_str(), content_type.as_str()), ("POST", "application/json"));
    let result: Value = serde_json::from_slice(body).unwrap();
    assert_eq!(result["metadata"]["request_id"], request_id.as_str());
    assert!((result["metadata"]["duration"].as_f64().unwrap() - 1.0).abs() < 0.01);
    // Speak by PUT: the audio itself, as a WAV.
    let text = "Sent later.";
    let spoken = dg
        .json("speech_speak", &[("text", text), ("callback", &format!("{url}/speak")), ("callback_method", "PUT")])
        .await;
    assert!(spoken["request_id"].is_string(), "{spoken}");
    let got = wait_for(&received, 2).await;
    let (method, content_type, audio) = &got[1];
    assert_eq!((method.as_str(), content_type.as_str()), ("PUT", "audio/wav"));
    assert_eq!(&audio[..4], b"RIFF");
    // Read: its analysis.
    dg.json("text_analyze", &[("text", "All good."), ("sentiment", "true"), ("callback", &format!("{url}/read"))])
        .await;
    let got = wait_for(&received, 3).await;
    let analysis: Value = serde_json::from_slice(&got[2].2).unwrap();
    assert!(analysis["results"]["sentiments"].is_object(), "{analysis}");
    // Usage counts them, and filters on the callback.
    let usage = dg.json("usage_get", &[("project_id", &id), ("callback", "true")]).await;
    let requests: u64 = usage["results"].as_array().unwrap().iter().map(|d| d["requests"].as_u64().unwrap()).sum();
    let spoken_requests: u64 =
        usage["results"].as_array().unwrap().iter().map(|d| d["tts"]["requests"].as_u64().unwrap_or(0)).sum();
    assert_eq!((requests, spoken_requests), (3, 1), "{usage}");
    // A bad callback URL or method is refused at once, and nothing is counted.
    let (status, body) = api_error(dg.call("text_analyze", &[("text", "x"), ("callback", "not a url")]).await);
    assert_eq!((status, body["err_code"].as_str()), (400, Some("INVALID_QUERY_PARAMETER")), "{body}");
    dg.sandbox.shutdown();
}

#[tokio::test]
async fn a_callback_off_this_machine_is_accepted_but_not_sent_and_a_failing_one_is_retried() {
    let dg = Deepgram::start().await;
    let control = format!("{}/deepgram/callbacks", dg.sandbox.control_url());
    let answer = dg.json("text_analyze", &[("text", "Hello."), ("callback", "https://example.com/hook")]).await;
    assert!(answer["request_id"].is_string(), "accepted as Deepgram accepts it: {answer}");
    let log: Value =
        serde_json::from_slice(&dg.http.get(&control).send().await.unwrap().bytes().await.unwrap()).unwrap();
    let first = &log["callbacks"][0];
    assert_eq!((first["outcome"].as_str(), first["why"].as_str()), (Some("not sent"), Some("not a loopback URL")));
    // A receiver answering 500 is tried again 30 s (sandbox time) later.
    let (url, received) = receiver(500).await;
    dg.json("text_analyze", &[("text", "Hello."), ("callback", &url)]).await;
    assert_eq!(wait_for(&received, 1).await.len(), 1);
    // The retry is scheduled once the first answer is recorded: the clock moves after that, not
    // merely after the receiver saw the POST.
    let mut recorded = false;
    for _ in 0..500 {
        let log: Value =
            serde_json::from_slice(&dg.http.get(&control).send().await.unwrap().bytes().await.unwrap()).unwrap();
        if log["callbacks"][0]["status"].as_u64() == Some(500) {
            recorded = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert!(recorded, "the first attempt's 500 was recorded");
    dg.sandbox.clock().advance(30_000);
    assert_eq!(wait_for(&received, 2).await.len(), 2, "retried after 30 s");
    let log: Value =
        serde_json::from_slice(&dg.http.get(&control).send().await.unwrap().bytes().await.unwrap()).unwrap();
    let latest = &log["callbacks"][0];
    assert_eq!((latest["attempt"].as_u64(), latest["status"].as_u64()), (Some(2), Some(500)), "{log}");
    assert_eq!(latest["outcome"], "retrying");
    dg.sandbox.shutdown();
}
