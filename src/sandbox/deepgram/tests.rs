//! The account's rules through the router: projects, keys with scopes and expiry, members and
//! the last owner, balances, models, usage, the delete cascade, and Deepgram's error shapes.
#![allow(clippy::unwrap_used, reason = "tests")]

use axum::body::Body;
use axum::http::{Request, StatusCode};
use serde_json::{json, Value};
use tower::ServiceExt;

use super::test_wav::tone_wav;
use super::DeepgramSimulator;
use crate::sandbox::{credentials, Platform, SandboxClock, Simulator};

struct Sim {
    sim: DeepgramSimulator,
    clock: SandboxClock,
}

impl Sim {
    fn new() -> Sim {
        let platform = Platform::real_time(7);
        Sim { sim: DeepgramSimulator::new(&platform), clock: platform.clock }
    }

    async fn call(
        &self,
        key: &str,
        method: &str,
        path: &str,
        body: Option<Value>,
    ) -> (StatusCode, Value, Option<String>) {
        let mut request = Request::builder().method(method).uri(path).header("authorization", format!("Token {key}"));
        if body.is_some() {
            request = request.header("content-type", "application/json");
        }
        let request = request.body(body.map_or_else(Body::empty, |b| Body::from(b.to_string()))).unwrap();
        let response = self.sim.router().oneshot(request).await.unwrap();
        let status = response.status();
        let id = response.headers().get("dg-request-id").and_then(|v| v.to_str().ok()).map(str::to_owned);
        let bytes = axum::body::to_bytes(response.into_body(), usize::MAX).await.unwrap();
        let value = serde_json::from_slice(&bytes).unwrap_or_else(|_| json!(String::from_utf8_lossy(&bytes)));
        (status, value, id)
    }

    async fn ok(&self, method: &str, path: &str, body: Option<Value>) -> Value {
        let (status, value, _) = self.call(credentials::DEEPGRAM_KEY, method, path, body).await;
        assert_eq!(status, StatusCode::OK, "{method} {path}: {value}");
        value
    }

    async fn project(&self) -> String {
        self.ok("GET", "/v1/projects", None).await["projects"][0]["project_id"].as_str().unwrap().to_owned()
    }
}

#[tokio::test]
async fn a_wrong_key_gets_deepgrams_401_with_a_request_id() {
    let sim = Sim::new();
    let (status, body, id) = sim.call("nope", "GET", "/v1/projects", None).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_eq!(
        (body["err_code"].as_str(), body["err_msg"].as_str()),
        (Some("INVALID_AUTH"), Some("Invalid credentials."))
    );
    assert_eq!(body["request_id"].as_str(), id.as_deref(), "the body and the header name the same request");
}

#[tokio::test]
async fn projects_list_get_update_and_unknown_ids() {
    let sim = Sim::new();
    let projects = sim.ok("GET", "/v1/projects", None).await;
    assert!(projects["projects"].as_array().unwrap().len() >= 2);
    let id = sim.project().await;
    let project = sim.ok("GET", &format!("/v1/projects/{id}"), None).await;
    assert_eq!(project["project_id"], id.as_str());
    sim.ok("PATCH", &format!("/v1/projects/{id}"), Some(json!({"name": "Renamed"}))).await;
    assert_eq!(sim.ok("GET", &format!("/v1/projects/{id}"), None).await["name"], "Renamed");
    let (status, body, _) = sim.call(credentials::DEEPGRAM_KEY, "GET", "/v1/projects/not-a-uuid", None).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert!(body.as_str().unwrap().starts_with("UUID parsing failed:"), "{body}");
    let (status, body, _) =
        sim.call(credentials::DEEPGRAM_KEY, "GET", "/v1/projects/6f1ee6a4-8c3a-4d8c-9e51-4a3b7e0d2c11", None).await;
    assert_eq!((status, body["category"].as_str()), (StatusCode::NOT_FOUND, Some("NOT_FOUND")));
}

#[tokio::test]
async fn a_created_key_authenticates_with_its_scopes_and_is_shown_once() {
    let sim = Sim::new();
    let id = sim.project().await;
    let created = sim
        .ok(
            "POST",
            &format!("/v1/projects/{id}/keys"),
            Some(json!({"comment": "test key", "scopes": ["member"], "tags": ["t"]})),
        )
        .await;
    let secret = created["key"].as_str().unwrap().to_owned();
    let key_id = created["api_key_id"].as_str().unwrap().to_owned();
    let listed = sim.ok("GET", &format!("/v1/projects/{id}/keys"), None).await;
    let item =
        listed["api_keys"].as_array().unwrap().iter().find(|k| k["api_key"]["api_key_id"] == key_id.as_str()).unwrap();
    assert!(!item.to_string().contains(&secret), "lists never show a secret");
    // The member key sees its project only, may read usage, may not delete the project nor list
    // members, nor make an owner key.
    let (status, projects, _) = sim.call(&secret, "GET", "/v1/projects", None).await;
    assert_eq!((status, projects["projects"].as_array().unwrap().len()), (StatusCode::OK, 1));
    assert_eq!(sim.call(&secret, "GET", &format!("/v1/projects/{id}/usage"), None).await.0, StatusCode::OK);
    for (method, path, body) in [
        ("DELETE", format!("/v1/projects/{id}"), None),
        ("GET", format!("/v1/projects/{id}/members"), None),
        ("POST", format!("/v1/projects/{id}/keys"), Some(json!({"comment": "x", "scopes": ["owner"]}))),
    ] {
        let (status, body, _) = sim.call(&secret, method, &path, body).await;
        assert_eq!(
            (status, body["err_code"].as_str()),
            (StatusCode::UNAUTHORIZED, Some("INSUFFICIENT_PERMISSIONS")),
            "{method} {path}"
        );
    }
    // Deleted: revoked at once.
    sim.ok("DELETE", &format!("/v1/projects/{id}/keys/{key_id}"), None).await;
    assert_eq!(sim.call(&secret, "GET", "/v1/projects", None).await.0, StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn key_expiry_by_ttl_or_date_but_not_both_and_bad_scopes() {
    let sim = Sim::new();
    let id = sim.project().await;
    let path = format!("/v1/projects/{id}/keys");
    let ttl = sim
        .ok("POST", &path, Some(json!({"comment": "short", "scopes": ["member"], "time_to_live_in_seconds": 60})))
        .await;
    let secret = ttl["key"].as_str().unwrap().to_owned();
    assert!(ttl["expiration_date"].is_string());
    assert_eq!(sim.call(&secret, "GET", "/v1/projects", None).await.0, StatusCode::OK);
    sim.clock.advance(61_000);
    let (status, body, _) = sim.call(&secret, "GET", "/v1/projects", None).await;
    assert_eq!((status, body["err_code"].as_str()), (StatusCode::UNAUTHORIZED, Some("INVALID_AUTH")), "expired");
    for body in [
        json!({"comment": "both", "scopes": ["member"], "time_to_live_in_seconds": 60, "expiration_date": "2099-01-01T00:00:00Z"}),
        json!({"comment": "bad scope", "scopes": ["superuser"]}),
        json!({"comment": "no scopes", "scopes": []}),
        json!({"scopes": ["member"]}),
        json!({"comment": "past", "scopes": ["member"], "expiration_date": "2001-01-01T00:00:00Z"}),
    ] {
        let before = sim.ok("GET", &path, None).await["api_keys"].as_array().unwrap().len();
        let (status, answer, _) = sim.call(credentials::DEEPGRAM_KEY, "POST", &path, Some(body.clone())).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}: {answer}");
        assert!(answer["err_msg"].as_str().is_some_and(|m| !m.is_empty()));
        assert_eq!(sim.ok("GET", &path, None).await["api_keys"].as_array().unwrap().len(), before, "nothing created");
    }
}

#[tokio::test]
async fn the_last_owner_stays_and_a_deleted_project_takes_everything_with_it() {
    let sim = Sim::new();
    let id = sim.project().await;
    let members = sim.ok("GET", &format!("/v1/projects/{id}/members"), None).await;
    let members = members["members"].as_array().unwrap().clone();
    let owners: Vec<&Value> = members.iter().filter(|m| m["scopes"][0] == "owner").collect();
    assert_eq!(owners.len(), 1, "{members:?}");
    let owner = owners[0]["member_id"].as_str().unwrap();
    let (status, body, _) =
        sim.call(credentials::DEEPGRAM_KEY, "DELETE", &format!("/v1/projects/{id}/members/{owner}"), None).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(body["err_msg"].as_str().unwrap().contains("last owner"), "{body}");
    let member = members.iter().find(|m| m["scopes"][0] == "member").unwrap()["member_id"].as_str().unwrap().to_owned();
    sim.ok("DELETE", &format!("/v1/projects/{id}/members/{member}"), None).await;
    assert_eq!(
        sim.ok("GET", &format!("/v1/projects/{id}/members"), None).await["members"].as_array().unwrap().len(),
        members.len() - 1
    );

    let balances = sim.ok("GET", &format!("/v1/projects/{id}/balances"), None).await;
    assert!(balances["balances"][0]["amount"].as_f64().unwrap() > 0.0);
    let key =
        sim.ok("POST", &format!("/v1/projects/{id}/keys"), Some(json!({"comment": "k", "scopes": ["member"]}))).await;
    sim.ok("DELETE", &format!("/v1/projects/{id}"), None).await;
    for path in ["", "/keys", "/members", "/balances", "/usage"] {
        let (status, body, _) =
            sim.call(credentials::DEEPGRAM_KEY, "GET", &format!("/v1/projects/{id}{path}"), None).await;
        assert_eq!((status, body["category"].as_str()), (StatusCode::NOT_FOUND, Some("NOT_FOUND")), "{path}");
    }
    assert_eq!(sim.call(key["key"].as_str().unwrap(), "GET", "/v1/projects", None).await.0, StatusCode::UNAUTHORIZED);
    assert!(!sim.ok("GET", "/v1/projects", None).await.to_string().contains(&id));
}

#[tokio::test]
async fn usage_sums_the_seeded_days_with_filters_and_models_are_served_by_uuid() {
    let sim = Sim::new();
    let id = sim.project().await;
    let today = crate::sandbox::clock::date(sim.clock.now_ms());
    let month_ago = crate::sandbox::clock::date(sim.clock.now_ms() - 40 * 86_400_000);
    let all = sim.ok("GET", &format!("/v1/projects/{id}/usage?start={month_ago}&end={today}"), None).await;
    let days = all["results"].as_array().unwrap();
    assert!(days.len() >= 30, "{} days", days.len());
    assert!(days.iter().all(|d| d["requests"].as_u64().unwrap() > 0 && d["hours"].as_f64().unwrap() > 0.0));
    let speak =
        sim.ok("GET", &format!("/v1/projects/{id}/usage?start={month_ago}&end={today}&endpoint=speak"), None).await;
    assert!(
        speak["results"][0]["hours"].as_f64().unwrap() == 0.0
            && speak["results"][0]["tts"]["characters"].as_u64().unwrap() > 0
    );
    let diarized =
        sim.ok("GET", &format!("/v1/projects/{id}/usage?start={month_ago}&end={today}&diarize=true"), None).await;
    assert!(diarized["results"].as_array().unwrap().len() < days.len(), "only the days with diarization");
    // A date-time counts as its day (older API versions took them).
    let timed = sim.ok("GET", &format!("/v1/projects/{id}/usage?start={month_ago}T10:00:00Z&end={today}"), None).await;
    assert_eq!(timed["start"], month_ago.as_str());
    for bad in ["start=yesterday", "endpoint=fax", "diarize=maybe", "start=2026-02-01&end=2026-01-01"] {
        let (status, body, _) =
            sim.call(credentials::DEEPGRAM_KEY, "GET", &format!("/v1/projects/{id}/usage?{bad}"), None).await;
        assert_eq!(
            (status, body["err_code"].as_str()),
            (StatusCode::BAD_REQUEST, Some("INVALID_QUERY_PARAMETER")),
            "{bad}"
        );
    }
    let models = sim.ok("GET", "/v1/models", None).await;
    let nova = models["stt"].as_array().unwrap().iter().find(|m| m["canonical_name"] == "nova-3").unwrap().clone();
    let uuid = nova["uuid"].as_str().unwrap();
    assert_eq!(sim.ok("GET", &format!("/v1/models/{uuid}"), None).await, nova);
    assert!(models["tts"].as_array().unwrap().iter().any(|m| m["canonical_name"] == "aura-2-thalia-en"));
    let (status, _, _) =
        sim.call(credentials::DEEPGRAM_KEY, "GET", "/v1/models/6f1ee6a4-8c3a-4d8c-9e51-4a3b7e0d2c11", None).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

impl Sim {
    async fn raw(
        &self,
        method: &str,
        path: &str,
        content_type: &str,
        body: Vec<u8>,
    ) -> (StatusCode, axum::http::HeaderMap, Vec<u8>) {
        let request = Request::builder()
            .method(method)
            .uri(path)
            .header("authorization", format!("Token {}", credentials::DEEPGRAM_KEY))
            .header("content-type", content_type)
            .body(Body::from(body))
            .unwrap();
        let response = self.sim.router().oneshot(request).await.unwrap();
        let (status, headers) = (response.status(), response.headers().clone());
        let bytes = axum::body::to_bytes(response.into_body(), usize::MAX).await.unwrap();
        (status, headers, bytes.to_vec())
    }

    async fn raw_json(&self, path: &str, content_type: &str, body: Vec<u8>) -> (StatusCode, Value) {
        let (status, _, bytes) = self.raw("POST", path, content_type, body).await;
        (status, serde_json::from_slice(&bytes).unwrap_or_else(|_| json!(String::from_utf8_lossy(&bytes))))
    }
}

#[tokio::test]
async fn speech_made_by_the_simulator_transcribes_back_to_its_text() {
    let sim = Sim::new();
    let text = "Hello, welcome to the opsdeck sandbox. How are you today?";
    for (query, content_type) in [
        ("", "audio/wav"),
        ("?encoding=mulaw&container=wav", "audio/wav"),
        ("?encoding=linear16&sample_rate=16000", "audio/wav"),
    ] {
        let (status, headers, audio) = sim
            .raw(
                "POST",
                &format!("/v1/speak{query}"),
                "application/json",
                json!({"text": text}).to_string().into_bytes(),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{query}: {}", String::from_utf8_lossy(&audio));
        assert_eq!(headers["content-type"], content_type);
        assert_eq!(headers["dg-char-count"], text.chars().count().to_string().as_str());
        assert!(
            headers.contains_key("dg-model-name")
                && headers.contains_key("dg-model-uuid")
                && headers.contains_key("dg-request-id")
        );
        let (status, answer) = sim
            .raw_json("/v1/listen?punctuate=true&utterances=true&diarize=true", "application/octet-stream", audio)
            .await;
        assert_eq!(status, StatusCode::OK, "{answer}");
        let alternative = &answer["results"]["channels"][0]["alternatives"][0];
        assert_eq!(alternative["transcript"], text, "{query}");
        assert!(answer["metadata"]["warnings"].is_null(), "not synthetic: {answer}");
        let duration = answer["metadata"]["duration"].as_f64().unwrap();
        assert!(alternative["words"].as_array().unwrap().iter().all(|w| w["end"].as_f64().unwrap() <= duration));
        assert_eq!(answer["results"]["utterances"].as_array().unwrap().len(), 2, "two sentences");
    }
    let longer = sim
        .raw("POST", "/v1/speak", "application/json", json!({"text": text.repeat(3)}).to_string().into_bytes())
        .await
        .2;
    let shorter =
        sim.raw("POST", "/v1/speak", "application/json", json!({"text": text}).to_string().into_bytes()).await.2;
    assert!(longer.len() > 2 * shorter.len(), "length grows with the text");
}

#[tokio::test]
async fn other_audio_keeps_its_own_duration_channels_and_rate_with_a_synthetic_transcript() {
    let sim = Sim::new();
    let wav = tone_wav(3.0, 16_000, 2);
    let (status, answer) = sim
        .raw_json("/v1/listen?multichannel=true&paragraphs=true&diarize=true&sentiment=true&tag=t1", "audio/wav", wav)
        .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    let metadata = &answer["metadata"];
    assert_eq!((metadata["duration"].as_f64(), metadata["channels"].as_u64()), (Some(3.0), Some(2)));
    assert_eq!(metadata["sample_rate"], 16_000);
    assert_eq!(metadata["tags"], json!(["t1"]));
    assert!(metadata["warnings"][0]["message"].as_str().unwrap().contains("synthetic"), "{metadata}");
    let channels = answer["results"]["channels"].as_array().unwrap();
    assert_eq!(channels.len(), 2, "one channel each with multichannel");
    let words = channels[0]["alternatives"][0]["words"].as_array().unwrap();
    assert!(!words.is_empty() && words.iter().all(|w| w["end"].as_f64().unwrap() <= 3.0 && w["speaker"].is_u64()));
    assert!(words.iter().all(|w| w["sentiment"].is_string()));
    assert!(channels[0]["alternatives"][0]["paragraphs"]["transcript"].as_str().unwrap().contains("Speaker 0:"));
    assert!(answer["results"]["sentiments"]["average"]["sentiment"].is_string());
    // The same file reads the same.
    let again = sim
        .raw_json(
            "/v1/listen?multichannel=true&paragraphs=true&diarize=true&sentiment=true&tag=t1",
            "audio/wav",
            tone_wav(3.0, 16_000, 2),
        )
        .await
        .1;
    assert_eq!(again["results"], answer["results"]);
}

#[tokio::test]
async fn bad_audio_formats_and_sources_get_deepgrams_errors() {
    let sim = Sim::new();
    let (status, body) = sim.raw_json("/v1/listen", "application/octet-stream", b"definitely not audio".to_vec()).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(
        body["err_msg"].as_str().unwrap().starts_with("failed to process audio: corrupt or unsupported data"),
        "{body}"
    );
    let (status, body) = sim
        .raw_json(
            "/v1/listen",
            "application/json",
            json!({"url": "https://example.com/a.wav"}).to_string().into_bytes(),
        )
        .await;
    assert_eq!((status, body["err_code"].as_str()), (StatusCode::BAD_REQUEST, Some("REMOTE_CONTENT_ERROR")));
    let (status, body) = sim.raw_json("/v1/listen?model=no-such-model", "audio/wav", tone_wav(1.0, 8000, 1)).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    let (status, body) = sim.raw_json("/v1/listen?punctuate=maybe", "audio/wav", tone_wav(1.0, 8000, 1)).await;
    assert_eq!((status, body["err_code"].as_str()), (StatusCode::BAD_REQUEST, Some("INVALID_QUERY_PARAMETER")));
    let (status, body) = sim
        .raw_json("/v1/speak?encoding=mp3", "application/json", json!({"text": "hi"}).to_string().into_bytes())
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(body["err_msg"].as_str().unwrap().starts_with("Unsupported audio format"), "{body}");
    let (status, body) =
        sim.raw_json("/v1/speak", "application/json", json!({"text": "  "}).to_string().into_bytes()).await;
    assert_eq!(
        (status, body["err_msg"].as_str()),
        (StatusCode::BAD_REQUEST, Some("Input text contains no characters."))
    );
    let (status, _) =
        sim.raw_json("/v1/speak", "application/json", json!({"text": "a".repeat(2401)}).to_string().into_bytes()).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
}

#[tokio::test]
async fn text_analysis_and_usage_counting_every_request_once() {
    let sim = Sim::new();
    let id = sim.project().await;
    let today = crate::sandbox::clock::date(sim.clock.now_ms());
    let usage =
        |v: &Value| v["results"].as_array().unwrap().iter().map(|d| d["requests"].as_u64().unwrap()).sum::<u64>();
    let before = usage(&sim.ok("GET", &format!("/v1/projects/{id}/usage?start={today}&end={today}"), None).await);
    let text = "I am so angry, my order arrived broken and late. I want to cancel my subscription. \
                The support agent was kind though, and the refund was quick.";
    let (status, answer) = sim
        .raw_json(
            "/v1/read?sentiment=true&summarize=true&topics=true&intents=true",
            "application/json",
            json!({"text": text}).to_string().into_bytes(),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert!(answer["results"]["summary"]["text"].as_str().is_some_and(|s| !s.is_empty()));
    assert!(answer["results"]["sentiments"]["segments"].as_array().is_some_and(|s| !s.is_empty()));
    assert!(answer["results"]["intents"].to_string().to_lowercase().contains("cancel"), "{answer}");
    assert!(answer["metadata"]["sentiment_info"]["input_tokens"].as_u64().unwrap() > 0);
    for (query, body, code) in [
        ("?sentiment=true&language=fr", json!({"text": text}), "INVALID_QUERY_PARAMETER"),
        ("?sentiment=true", json!({"text": text, "url": "http://127.0.0.1:1/x"}), "PAYLOAD_ERROR"),
        ("?sentiment=true", json!({}), "PAYLOAD_ERROR"),
        ("?sentiment=true", json!({"text": " "}), "PAYLOAD_ERROR"),
    ] {
        let (status, got) =
            sim.raw_json(&format!("/v1/read{query}"), "application/json", body.to_string().into_bytes()).await;
        assert_eq!((status, got["err_code"].as_str()), (StatusCode::BAD_REQUEST, Some(code)), "{query} {body}");
    }
    sim.raw("POST", "/v1/speak", "application/json", json!({"text": "one"}).to_string().into_bytes()).await;
    sim.raw("POST", "/v1/listen", "audio/wav", tone_wav(2.0, 8000, 1)).await;
    let after = sim.ok("GET", &format!("/v1/projects/{id}/usage?start={today}&end={today}"), None).await;
    assert_eq!(usage(&after), before + 3, "a read, a speak and a listen, each once (refused ones not at all)");
    let listen =
        sim.ok("GET", &format!("/v1/projects/{id}/usage?start={today}&end={today}&endpoint=listen"), None).await;
    assert!(listen["results"][0]["hours"].as_f64().unwrap() > 0.0);
}

/// Every permission api/deepgram.md §6.7 names is a scope a key may carry (the `admins:*` and
/// `owners:*` ones too), the catalog's one list deciding for the console and the simulator.
#[tokio::test]
async fn every_documented_scope_makes_a_key() {
    let sim = Sim::new();
    let id = sim.project().await;
    for scope in ["admins:read:invites", "owners:write:kick", "self-hosted:product:engine", "billing:read"] {
        let body = json!({"comment": scope, "scopes": [scope]});
        sim.ok("POST", &format!("/v1/projects/{id}/keys"), Some(body)).await;
    }
}

/// The models the console's forms offer are ones the simulator serves.
#[test]
fn the_models_the_forms_offer_are_served() {
    for name in crate::catalog::DEEPGRAM_STT_MODELS {
        assert!(super::models::stt(name).is_some(), "{name}");
    }
    for name in crate::catalog::DEEPGRAM_TTS_VOICES {
        assert!(super::models::tts(name).is_some(), "{name}");
    }
}

/// A member's keys are the ones it made: it lists and deletes those only, and an owner's key it
/// did not make is refused to it and goes on working. An admin sees every key and deletes only
/// the ones it made.
#[tokio::test]
async fn a_member_key_reaches_the_keys_it_made_and_an_admin_reads_all_but_deletes_its_own() {
    let sim = Sim::new();
    let id = sim.project().await;
    let keys = format!("/v1/projects/{id}/keys");
    let make = |scopes: &'static str| {
        let body = json!({"comment": format!("{scopes} key"), "scopes": [scopes]});
        let (sim, keys) = (&sim, keys.clone());
        async move {
            let created = sim.ok("POST", &keys, Some(body)).await;
            (created["key"].as_str().unwrap().to_owned(), created["api_key_id"].as_str().unwrap().to_owned())
        }
    };
    let (owner_secret, owner_id) = make("owner").await;
    let (member_secret, member_id) = make("member").await;
    let (admin_secret, _) = make("admin").await;
    let ids = |listed: &Value| -> Vec<String> {
        listed["api_keys"]
            .as_array()
            .unwrap()
            .iter()
            .map(|k| k["api_key"]["api_key_id"].as_str().unwrap().to_owned())
            .collect()
    };
    // The member sees itself only, then the key it makes.
    let (status, listed, _) = sim.call(&member_secret, "GET", &keys, None).await;
    assert_eq!((status, ids(&listed)), (StatusCode::OK, vec![member_id.clone()]));
    let (status, made, _) =
        sim.call(&member_secret, "POST", &keys, Some(json!({"comment": "mine", "scopes": ["member"]}))).await;
    assert_eq!(status, StatusCode::OK, "{made}");
    let mine = made["api_key_id"].as_str().unwrap().to_owned();
    let (_, listed, _) = sim.call(&member_secret, "GET", &keys, None).await;
    let mut seen = ids(&listed);
    seen.sort();
    let mut expected = vec![member_id.clone(), mine.clone()];
    expected.sort();
    assert_eq!(seen, expected);
    // The owner's key is out of its reach, and keeps working.
    let (status, body, _) = sim.call(&member_secret, "GET", &format!("{keys}/{owner_id}"), None).await;
    assert_eq!(body["err_code"], "INSUFFICIENT_PERMISSIONS", "{status}: {body}");
    let (status, body, _) = sim.call(&member_secret, "DELETE", &format!("{keys}/{owner_id}"), None).await;
    assert_eq!(body["err_code"], "INSUFFICIENT_PERMISSIONS", "{status}: {body}");
    assert_eq!(sim.call(&owner_secret, "GET", "/v1/projects", None).await.0, StatusCode::OK);
    let (status, _, _) = sim.call(&member_secret, "DELETE", &format!("{keys}/{mine}"), None).await;
    assert_eq!(status, StatusCode::OK, "its own key it may delete");
    // An admin sees them all, and deletes only what it made.
    let (_, listed, _) = sim.call(&admin_secret, "GET", &keys, None).await;
    assert!(ids(&listed).contains(&owner_id) && ids(&listed).contains(&member_id));
    for other in [&owner_id, &member_id] {
        let (_, body, _) = sim.call(&admin_secret, "DELETE", &format!("{keys}/{other}"), None).await;
        assert_eq!(body["err_code"], "INSUFFICIENT_PERMISSIONS", "{body}");
    }
    assert_eq!(sim.call(&owner_secret, "GET", "/v1/projects", None).await.0, StatusCode::OK);
    let (_, made, _) =
        sim.call(&admin_secret, "POST", &keys, Some(json!({"comment": "admin's", "scopes": ["member"]}))).await;
    let made = made["api_key_id"].as_str().unwrap().to_owned();
    assert_eq!(sim.call(&admin_secret, "DELETE", &format!("{keys}/{made}"), None).await.0, StatusCode::OK);
    // The owner's key reaches every key.
    assert_eq!(sim.call(&owner_secret, "DELETE", &format!("{keys}/{member_id}"), None).await.0, StatusCode::OK);
    assert_eq!(sim.call(&member_secret, "GET", "/v1/projects", None).await.0, StatusCode::UNAUTHORIZED);
}
