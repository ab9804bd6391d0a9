//! The account's rules through the router: projects, keys with scopes and expiry, members and
//! the last owner, balances, models, usage, the delete cascade, and Deepgram's error shapes.
#![allow(clippy::unwrap_used, reason = "tests")]

use axum::body::Body;
use axum::http::{Request, StatusCode};
use serde_json::{json, Value};
use tower::ServiceExt;

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

    async fn call(&self, key: &str, method: &str, path: &str, body: Option<Value>) -> (StatusCode, Value, Option<String>) {
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
    assert_eq!((body["err_code"].as_str(), body["err_msg"].as_str()), (Some("INVALID_AUTH"), Some("Invalid credentials.")));
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
        .ok("POST", &format!("/v1/projects/{id}/keys"), Some(json!({"comment": "test key", "scopes": ["member"], "tags": ["t"]})))
        .await;
    let secret = created["key"].as_str().unwrap().to_owned();
    let key_id = created["api_key_id"].as_str().unwrap().to_owned();
    let listed = sim.ok("GET", &format!("/v1/projects/{id}/keys"), None).await;
    let item = listed["api_keys"].as_array().unwrap().iter().find(|k| k["api_key"]["api_key_id"] == key_id.as_str()).unwrap();
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
        assert_eq!((status, body["err_code"].as_str()), (StatusCode::UNAUTHORIZED, Some("INSUFFICIENT_PERMISSIONS")), "{method} {path}");
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
    let ttl = sim.ok("POST", &path, Some(json!({"comment": "short", "scopes": ["member"], "time_to_live_in_seconds": 60}))).await;
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
    let (status, body, _) = sim.call(credentials::DEEPGRAM_KEY, "DELETE", &format!("/v1/projects/{id}/members/{owner}"), None).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(body["err_msg"].as_str().unwrap().contains("last owner"), "{body}");
    let member = members.iter().find(|m| m["scopes"][0] == "member").unwrap()["member_id"].as_str().unwrap().to_owned();
    sim.ok("DELETE", &format!("/v1/projects/{id}/members/{member}"), None).await;
    assert_eq!(sim.ok("GET", &format!("/v1/projects/{id}/members"), None).await["members"].as_array().unwrap().len(), members.len() - 1);

    let balances = sim.ok("GET", &format!("/v1/projects/{id}/balances"), None).await;
    assert!(balances["balances"][0]["amount"].as_f64().unwrap() > 0.0);
    let key = sim.ok("POST", &format!("/v1/projects/{id}/keys"), Some(json!({"comment": "k", "scopes": ["member"]}))).await;
    sim.ok("DELETE", &format!("/v1/projects/{id}"), None).await;
    for path in ["", "/keys", "/members", "/balances", "/usage"] {
        let (status, body, _) = sim.call(credentials::DEEPGRAM_KEY, "GET", &format!("/v1/projects/{id}{path}"), None).await;
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
    let speak = sim.ok("GET", &format!("/v1/projects/{id}/usage?start={month_ago}&end={today}&endpoint=speak"), None).await;
    assert!(speak["results"][0]["hours"].as_f64().unwrap() == 0.0 && speak["results"][0]["tts"]["characters"].as_u64().unwrap() > 0);
    let diarized = sim.ok("GET", &format!("/v1/projects/{id}/usage?start={month_ago}&end={today}&diarize=true"), None).await;
    assert!(diarized["results"].as_array().unwrap().len() < days.len(), "only the days with diarization");
    for bad in ["start=yesterday", "endpoint=fax", "diarize=maybe", "start=2026-02-01&end=2026-01-01"] {
        let (status, body, _) = sim.call(credentials::DEEPGRAM_KEY, "GET", &format!("/v1/projects/{id}/usage?{bad}"), None).await;
        assert_eq!((status, body["err_code"].as_str()), (StatusCode::BAD_REQUEST, Some("INVALID_QUERY_PARAMETER")), "{bad}");
    }
    let models = sim.ok("GET", "/v1/models", None).await;
    let nova = models["stt"].as_array().unwrap().iter().find(|m| m["canonical_name"] == "nova-3").unwrap().clone();
    let uuid = nova["uuid"].as_str().unwrap();
    assert_eq!(sim.ok("GET", &format!("/v1/models/{uuid}"), None).await, nova);
    assert!(models["tts"].as_array().unwrap().iter().any(|m| m["canonical_name"] == "aura-2-thalia-en"));
    let (status, _, _) = sim.call(credentials::DEEPGRAM_KEY, "GET", "/v1/models/6f1ee6a4-8c3a-4d8c-9e51-4a3b7e0d2c11", None).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}
