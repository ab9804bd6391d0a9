//! The console's sandbox view against a loopback fake of the control port (`GET /requests`,
//! `GET /faults`): what it lists, that it reads in the background, that hostile text stays
//! inert, and what it says on a LIVE tab.
#![allow(clippy::unwrap_used, reason = "tests")]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::routing::get;
use axum::{Json, Router};
use serde_json::json;

use opsdeck::cli::GlobalArgs;
use opsdeck::inert::is_unsafe;
use opsdeck::tui::app::Popup;
use opsdeck::tui::harness::Harness;

fn no_args() -> GlobalArgs {
    GlobalArgs::default()
}

#[derive(serde::Deserialize)]
struct RequestsQuery {
    service: String,
    limit: usize,
}

fn fake_control(reads: Arc<AtomicUsize>) -> Router {
    Router::new()
        .route(
            "/requests",
            get(|State(reads): State<Arc<AtomicUsize>>, Query(q): Query<RequestsQuery>| async move {
                reads.fetch_add(1, Ordering::SeqCst);
                assert!(q.limit > 0);
                Json(json!({"requests": [
                    {"service": q.service, "method": "POST", "path": "/channels/orders/messages", "status": 201, "latency_ms": 3, "at": "2026-11-23T10:00:02Z"},
                    {"service": q.service, "method": "GET", "path": "/channels/\u{1b}[31mred", "status": 503, "latency_ms": 250, "at": "2026-11-23T10:00:01Z"}]}))
            }),
        )
        .route(
            "/faults",
            get(|| async {
                Json(json!({"faults": [{"id": "f1", "service": "ably", "path": "/channels/*", "method": null,
                    "status": 503, "latency_ms": 0, "drop": false, "retry_after": null, "remaining": 2, "probability": null}]}))
            }),
        )
        .with_state(reads)
}

#[tokio::test]
async fn s_lists_the_tabs_recent_requests_and_the_active_faults() {
    let reads = Arc::new(AtomicUsize::new(0));
    let control = opsdeck::sandbox::serve_loopback(fake_control(reads.clone())).await.unwrap();
    let mut h = Harness::new().await;
    h.console.app.embedded_control = Some(control.clone());
    h.keys("S");
    assert!(matches!(h.console.app.popup, Some(Popup::Sandbox(_))));
    assert!(h.screen().contains("loading"), "the view opens before the read is back");
    h.settle().await;
    let screen = h.screen();
    for text in [
        "recent requests to Ably (2, newest first)",
        "/channels/orders/messages",
        "201",
        "250",
        "active faults (1)",
        "/channels/*",
        "status 503",
        "2 left",
        &control,
    ] {
        assert!(screen.contains(text), "{text} in:\n{screen}");
    }
    assert!(screen.contains("␛[31mred"), "a hostile path is shown, not run:\n{screen}");
    let buffer = h.buffer_after_draw();
    assert!(buffer.content.iter().all(|c| !c.symbol().chars().any(is_unsafe)));
    // r reads again.
    h.keys("r");
    h.settle().await;
    assert_eq!(reads.load(Ordering::SeqCst), 2);
    h.keys("<Esc>");
    assert!(h.console.app.popup.is_none());
    // The palette has it too.
    h.keys(":sandbox view<Enter>");
    assert!(matches!(h.console.app.popup, Some(Popup::Sandbox(_))));
    h.settle().await;
}

#[tokio::test]
async fn a_failing_control_port_is_reported_plainly() {
    let router = Router::new()
        .route("/requests", get(|| async { (StatusCode::INTERNAL_SERVER_ERROR, "boom \u{1b}]52;c;ZXZpbA==\u{7}") }))
        .route("/faults", get(|| async { "not json" }));
    let control = opsdeck::sandbox::serve_loopback(router).await.unwrap();
    let mut h = Harness::new().await;
    h.console.app.embedded_control = Some(control);
    h.keys("S");
    h.settle().await;
    let screen = h.screen();
    assert!(screen.contains("500 Internal Server Error"), "{screen}");
    assert!(screen.contains("did not answer JSON"), "{screen}");
    let buffer = h.buffer_after_draw();
    assert!(buffer.content.iter().all(|c| !c.symbol().chars().any(is_unsafe)));
}

#[tokio::test]
async fn a_live_tab_has_no_sandbox_to_show() {
    let remote = opsdeck::sandbox::start(0, 9).await.unwrap();
    let url = remote.base_url(opsdeck::catalog::Service::Ably);
    let env = move |name: &str| match name {
        "ABLY_API_KEY" => Some(opsdeck::sandbox::credentials::ABLY_KEY.to_owned()),
        "OPSDECK_ABLY_URL" => Some(url.clone()),
        _ => None,
    };
    let mut h = Harness::with_env(no_args(), &env).await;
    h.keys("S");
    assert_eq!(h.console.app.background_pending, 0, "nothing is read");
    let screen = h.screen();
    assert!(screen.contains("Ably is LIVE") && screen.contains("no sandbox to show"), "{screen}");
    remote.shutdown();
}

#[tokio::test]
async fn the_embedded_sandbox_shows_the_consoles_own_requests_and_an_injected_fault() {
    let mut h = Harness::new().await;
    let control = h.console.app.embedded_control.clone().unwrap();
    assert_eq!(control, h.console.sandbox.control_url());
    let fault = json!({"service": "ably", "path": "/time", "status": 503, "count": 100});
    let added = reqwest::Client::new()
        .post(format!("{control}/faults"))
        .header("content-type", "application/json")
        .body(fault.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(added.status().as_u16(), 201);
    // The time is asked for through the fault: the console shows Ably's error, the log a 503.
    h.keys(":ably time_get<Enter><C-s>");
    h.settle().await;
    h.keys("S");
    h.settle().await;
    let screen = h.screen();
    for text in
        [&format!("control {control}"), "GET", "/channels", "/time", "503", "active faults (1)", "status 503", " left"]
    {
        assert!(screen.contains(text), "{text} in:\n{screen}");
    }
}
