//! The console against untrusted servers and unlucky users (issue 5): hostile text, looping
//! and off-origin next links, failing and hanging upstreams, pastes, terminals without colour,
//! wide characters, and thousands of random keys.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::http::{header, StatusCode};
use axum::response::IntoResponse;
use axum::routing::get;
use axum::Router;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::buffer::Buffer;
use ratatui::style::{Color, Modifier};
use serde_json::{json, Value};

use super::app::{Focus, Popup};
use super::components::browser::Browser;
use super::components::confirm::Confirm;
use super::components::inspector::ResponseView;
use super::harness::Harness;
use crate::args::GlobalArgs;
use crate::client::Values;
use crate::inert::is_unsafe;
use crate::sandbox::rng::Rng;

fn no_args() -> GlobalArgs {
    GlobalArgs::default()
}

async fn fake_upstream(router: Router) -> String {
    crate::sandbox::serve_loopback(router).await.expect("loopback port")
}

/// A console whose Ably tab talks to `url` instead of the embedded simulator.
async fn harness_against(url: &str) -> Harness {
    let url = url.to_owned();
    Harness::with_env(no_args(), &move |name| match name {
        "OPSDECK_ABLY_URL" => Some(url.clone()),
        "COLORTERM" => Some("truecolor".into()),
        _ => None,
    })
    .await
}

fn channels(names: &[&str]) -> Value {
    Value::Array(names.iter().map(|n| json!({"channelId": n, "status": {"isActive": true}})).collect())
}

/// The text of every row as a terminal shows it: the cell after a wide character belongs to it.
fn rows(buffer: &Buffer) -> Vec<String> {
    let area = buffer.area;
    (0..area.height)
        .map(|y| {
            let mut line = String::new();
            let mut x = 0;
            while x < area.width {
                let symbol = buffer[(x, y)].symbol();
                line.push_str(symbol);
                x += u16::try_from(unicode_width::UnicodeWidthStr::width(symbol).max(1)).unwrap_or(1);
            }
            line
        })
        .collect()
}

fn assert_all_inert(buffer: &Buffer, what: &str) {
    for (i, cell) in buffer.content.iter().enumerate() {
        let bad: Vec<char> = cell.symbol().chars().filter(|c| is_unsafe(*c)).collect();
        assert!(bad.is_empty(), "{what}: unsafe {bad:?} in cell {i}:\n{}", rows(buffer).join("\n"));
    }
}

#[tokio::test]
async fn n_on_a_repeated_next_link_stops_with_a_clear_error() {
    let router = Router::new().route(
        "/channels",
        get(|| async {
            // Page 2 links to itself: a server bug that would loop forever.
            ([(header::LINK, "<./channels?page=2>; rel=\"next\"")], axum::Json(channels(&["a", "b"])))
        }),
    );
    let url = fake_upstream(router).await;
    let mut h = harness_against(&url).await;
    h.console.app.focus = Focus::Browser;
    assert!(h.screen().contains("n: next"), "{}", h.screen());
    h.keys("n");
    h.settle().await;
    assert!(h.screen().contains("page 2"), "{}", h.screen());
    h.keys("n");
    assert_eq!(h.console.app.executor.active_count(), 0, "nothing sent");
    let screen = h.screen();
    assert!(screen.contains("same next page twice"), "{screen}");
    assert!(!screen.contains("loading"), "{screen}");
}

#[tokio::test]
async fn n_on_a_next_link_to_another_origin_is_refused_and_sends_nothing_there() {
    let elsewhere_hits = Arc::new(AtomicUsize::new(0));
    let hits = elsewhere_hits.clone();
    let elsewhere = fake_upstream(Router::new().fallback(move || {
        hits.fetch_add(1, Ordering::SeqCst);
        async { axum::Json(json!([])) }
    }))
    .await;
    let link = format!("<{elsewhere}/channels?page=2>; rel=\"next\"");
    let router = Router::new().route(
        "/channels",
        get(move || {
            let link = link.clone();
            async move { ([(header::LINK, link)], axum::Json(channels(&["a"]))) }
        }),
    );
    let url = fake_upstream(router).await;
    let mut h = harness_against(&url).await;
    h.console.app.focus = Focus::Browser;
    h.keys("n");
    h.settle().await;
    let status = h.console.app.status().cloned().expect("an error").0;
    assert!(status.contains("refused to follow") && status.contains(&elsewhere), "{status}");
    assert_eq!(elsewhere_hits.load(Ordering::SeqCst), 0, "the other origin never heard from us");
    assert!(h.screen().contains("page 1"));
}

#[tokio::test]
async fn a_failed_load_is_shown_and_cleared_by_the_next_success() {
    let calls = Arc::new(AtomicUsize::new(0));
    let counter = calls.clone();
    let router = Router::new().route(
        "/channels",
        get(move || {
            let n = counter.fetch_add(1, Ordering::SeqCst);
            async move {
                match n {
                    1 => (
                        StatusCode::INTERNAL_SERVER_ERROR,
                        axum::Json(json!({"error": {"message": "boom \u{1b}[2J", "code": 50000, "statusCode": 500}})),
                    )
                        .into_response(),
                    3 => ([(header::CONTENT_TYPE, "text/html")], "<html>gateway</html>").into_response(),
                    _ => axum::Json(channels(&["a", "b"])).into_response(),
                }
            }
        }),
    );
    let url = fake_upstream(router).await;
    let mut h = harness_against(&url).await;
    h.console.app.focus = Focus::Browser;
    h.keys("r");
    h.settle().await;
    let screen = h.screen();
    assert!(screen.contains("✗ ably channels_list") && screen.contains("boom ␛[2J"), "{screen}");
    assert!(!screen.contains("loading"), "{screen}");
    h.keys("r");
    h.settle().await;
    assert!(h.console.app.status().is_none(), "the error went with the success: {:?}", h.console.app.status());
    assert!(!h.screen().contains("boom"), "{}", h.screen());
    // A 2xx page that is not JSON: whatever the client makes of it, nothing keeps loading.
    h.keys("r");
    h.settle().await;
    let screen = h.screen();
    assert!(!screen.contains("loading"), "{screen}");
}

#[tokio::test]
async fn ctrl_x_leaves_no_pane_loading_and_calls_in_flight_show_their_time() {
    let calls = Arc::new(AtomicUsize::new(0));
    let counter = calls.clone();
    let router = Router::new().fallback(move || {
        let n = counter.fetch_add(1, Ordering::SeqCst);
        async move {
            if n > 0 {
                tokio::time::sleep(Duration::from_secs(60)).await;
            }
            axum::Json(channels(&["a"]))
        }
    });
    let url = fake_upstream(router).await;
    let mut h = harness_against(&url).await;
    h.open_resource("push devices");
    assert!(h.screen().contains("loading push_device_list"), "{}", h.screen());
    let deadline = h.console.app.next_deadline().expect("a redraw while a call is in flight");
    assert!(deadline > Instant::now() && deadline <= Instant::now() + Duration::from_secs(1));
    tokio::time::sleep(Duration::from_millis(1100)).await;
    h.apply_ready_events();
    let screen = h.screen();
    // At least the second slept; more on a loaded machine.
    let shown = screen.split("in flight, 0 queued · ").nth(1).and_then(|rest| rest.split(" s").next());
    assert!(shown.and_then(|s| s.parse::<u64>().ok()).is_some_and(|secs| secs >= 1), "{screen}");
    h.keys("<C-x>");
    let screen = h.screen();
    assert!(!screen.contains("loading"), "{screen}");
    assert!(screen.contains("cancelled 1 call"), "{screen}");
    assert!(h.console.app.next_deadline().is_none(), "idle again");
}

#[tokio::test]
async fn auto_refresh_idles_without_a_list_in_view() {
    let mut h = Harness::new().await;
    // A resource without a list (Ably's server time) has nothing to reload.
    h.browse("time").await;
    h.keys("<Esc>a");
    assert!(h.console.app.next_deadline().is_none(), "no deadline without a list in view");
    // ...and a list in view is reloaded when due, never in the past.
    h.browse("channels").await;
    let deadline = h.console.app.next_deadline().expect("the list reloads");
    assert!(deadline >= Instant::now() - Duration::from_millis(5));
}

#[tokio::test]
async fn a_selected_message_does_not_become_the_channel() {
    let mut h = Harness::new().await;
    let channel = h.console.app.tab().browser.selected_record().unwrap()["channelId"].as_str().unwrap().to_owned();
    h.browse("messages").await;
    assert!(h.console.app.tab().browser.row_count() > 1, "{}", h.screen());
    h.console.app.focus = Focus::Browser;
    h.keys("j");
    let message_id = h.console.app.tab().browser.selected_record().unwrap()["id"].clone();
    h.keys(":messages_publish<Enter>");
    let Some(Popup::Form(form)) = h.console.app.popup.as_ref() else { panic!("form") };
    assert_eq!(form.values().get("channelId"), Some(&channel), "not the message id {message_id}");
    h.keys("<Esc>");
    h.browse("channels").await;
    assert!(!h.screen().contains("only "), "channels are not filtered: {}", h.screen());
}

#[tokio::test]
async fn devices_are_not_narrowed_by_a_subscription_and_a_filter_shows_and_clears() {
    let mut h = Harness::new().await;
    h.resize(250, 40);
    h.browse("push devices").await;
    let all = h.console.app.tab().browser.row_count();
    assert!(all > 1, "{}", h.screen());
    h.browse("push subscriptions").await;
    let subscriptions = h.console.app.tab().browser.records().to_vec();
    let row = subscriptions.iter().position(|s| s["deviceId"].is_string()).expect("a device's subscription");
    let device = subscriptions[row]["deviceId"].as_str().unwrap().to_owned();
    h.console.app.focus = Focus::Browser;
    h.keys(&"j".repeat(row));
    assert_eq!(h.console.app.tab().context.get("deviceId"), Some(&device), "remembered for device forms");
    h.browse("push devices").await;
    assert_eq!(h.console.app.tab().browser.row_count(), all, "the list is whole:\n{}", h.screen());
    assert!(!h.screen().contains("only deviceId"));
    // Asking for one device in the form narrows the list, and says so.
    h.keys(":push_device_list<Enter>");
    let Some(Popup::Form(form)) = h.console.app.popup.as_mut() else { panic!("form") };
    form.set_value("deviceId", &device);
    h.keys("<C-s>");
    h.settle().await;
    assert_eq!(h.console.app.tab().browser.row_count(), 1);
    assert!(h.screen().contains(&format!("only deviceId={device} (c clears)")), "{}", h.screen());
    h.console.app.focus = Focus::Browser;
    h.keys("c");
    h.settle().await;
    assert_eq!(h.console.app.tab().browser.row_count(), all);
    assert!(!h.screen().contains("only deviceId"), "{}", h.screen());
}

#[tokio::test]
async fn a_paste_is_text_never_keys() {
    let mut h = Harness::new().await;
    h.console.app.focus = Focus::Browser;
    h.paste("orders:eu");
    assert!(h.console.app.popup.is_none(), "`o` did not open the operations menu");
    assert_eq!(h.console.app.tab().browser.filter.text(), "orders:eu");
    assert!(h.screen().contains("/orders:eu"), "{}", h.screen());
    h.keys("<Enter>");
    h.keys(":channels_get<Enter>");
    let Some(Popup::Form(form)) = h.console.app.popup.as_mut() else { panic!("form") };
    form.set_value("channelId", "");
    h.paste("chat:\u{1b}[2Jlobby\r\n");
    let Some(Popup::Form(form)) = h.console.app.popup.as_ref() else { panic!("form") };
    assert_eq!(form.values().get("channelId").map(String::as_str), Some("chat:[2Jlobby"));
    h.keys("<Esc>");
    h.console.app.focus = Focus::Resources;
    h.paste("q");
    assert!(!h.console.app.quit);
    assert!(h.screen().contains("paste ignored"), "{}", h.screen());
}

#[tokio::test]
async fn no_color_draws_with_attributes_only() {
    let mut h = Harness::with_env(no_args(), &|name| (name == "NO_COLOR").then(|| "1".to_owned())).await;
    assert_eq!(h.console.app.theme.name, "plain");
    h.screen();
    let buffer = h.buffer().clone();
    assert!(buffer.content.iter().all(|c| c.fg == Color::Reset && c.bg == Color::Reset), "no colour at all");
    let selected = buffer.content.iter().filter(|c| c.modifier.contains(Modifier::REVERSED)).count();
    assert!(selected > 10, "the selection shows in reverse video");
    assert!(buffer.content.iter().any(|c| c.modifier.contains(Modifier::BOLD)), "focus and titles in bold");
}

#[tokio::test]
async fn without_truecolor_no_24_bit_colour_is_sent() {
    for (term, allowed) in [("xterm-256color", "indexed"), ("linux", "named")] {
        let mut h = Harness::with_env(no_args(), &move |name| (name == "TERM").then(|| term.to_owned())).await;
        h.screen();
        for cell in &h.buffer().content {
            for colour in [cell.fg, cell.bg] {
                let ok = !matches!((colour, allowed), (Color::Rgb(..), _) | (Color::Indexed(_), "named"));
                assert!(ok, "TERM={term}: {colour:?}");
            }
        }
    }
}

#[tokio::test]
async fn wide_characters_show_whole_and_columns_fit_them() {
    let mut browser = Browser::default();
    browser.title = "events".into();
    browser
        .set_records(vec![json!({"id": "ev_1", "name": "注文.作成"}), json!({"id": "ev_2", "name": "x"})], Some("id"));
    let mut terminal = ratatui::Terminal::new(ratatui::backend::TestBackend::new(40, 6)).unwrap();
    terminal.draw(|f| browser.render(f, f.area(), &crate::tui::theme::Theme::dark(), true)).unwrap();
    let shown = rows(terminal.backend().buffer());
    assert!(shown.iter().any(|r| r.contains("ev_1 注文.作成")), "{shown:#?}");
    // A cell too long for its column is cut between characters, never inside a wide one.
    let long = "注".repeat(40);
    let cut = super::components::browser::truncate_to_width(&long, 9);
    assert_eq!(cut, format!("{}…", "注".repeat(4)));
    assert!(unicode_width::UnicodeWidthStr::width(cut.as_str()) <= 9);
}

/// A string of random characters weighted toward the ones a terminal acts on.
fn hostile_text(rng: &mut Rng) -> String {
    const NASTY: &[&str] =
        &["\u{1b}]52;c;aGVsbG8=\u{7}", "\u{1b}[2J", "\u{9b}31m", "\u{202e}", "\u{2066}", "\r", "\n", "\t", "\u{7f}"];
    let mut text = String::new();
    for _ in 0..rng.below(12) + 1 {
        if rng.chance(40) {
            text.push_str(rng.pick::<&str>(NASTY));
        } else {
            let c = char::from_u32(u32::try_from(rng.below(0x2100)).unwrap_or(0)).unwrap_or('?');
            text.push(c);
        }
    }
    text
}

#[tokio::test]
async fn random_hostile_text_never_reaches_the_screen_raw() {
    let mut h = Harness::new().await;
    for seed in 1..=5 {
        let mut rng = Rng::new(seed);
        let app = &mut h.console.app;
        app.popup = None;
        let records: Vec<Value> = (0..20)
            .map(|_| {
                let mut record = serde_json::Map::new();
                record.insert("channelId".into(), Value::String(hostile_text(&mut rng)));
                record.insert(hostile_text(&mut rng), Value::String(hostile_text(&mut rng)));
                record.insert("name".into(), Value::String(hostile_text(&mut rng)));
                Value::Object(record)
            })
            .collect();
        let body = serde_json::to_vec(&records).unwrap();
        let tab = &mut app.tabs[0];
        tab.browser.title = hostile_text(&mut rng);
        tab.browser.set_records(records, Some("channelId"));
        tab.browser.filter_note = Some(hostile_text(&mut rng));
        tab.inspector.show(ResponseView {
            title: hostile_text(&mut rng),
            status: Some(200),
            duration: Duration::from_millis(3),
            request_line: hostile_text(&mut rng),
            headers: vec![(hostile_text(&mut rng), hostile_text(&mut rng))],
            body: body.into(),
            content_type: Some(hostile_text(&mut rng)),
        });
        let active = app.active;
        app.tabs[active].say(hostile_text(&mut rng), super::app::Severity::Error);
        app.focus = Focus::Browser;
        assert_all_inert(h.buffer_after_draw(), "browser, tree and status");
        // The raw view and the headers.
        h.console.app.focus = Focus::Inspector;
        h.keys("e");
        assert_all_inert(h.buffer_after_draw(), "expanded tree");
        h.keys("w");
        assert_all_inert(h.buffer_after_draw(), "raw view");
        h.keys("H");
        assert_all_inert(h.buffer_after_draw(), "headers");
        h.keys("t");
        // A form pre-filled from a hostile record, which still sends the real value.
        h.console.app.focus = Focus::Browser;
        let real = h.console.app.tab().browser.selected_record().unwrap()["channelId"].as_str().unwrap().to_owned();
        h.keys(":channels_get<Enter>");
        assert_all_inert(h.buffer_after_draw(), "form");
        let Some(Popup::Form(form)) = h.console.app.popup.as_ref() else { panic!("form") };
        assert_eq!(form.values().get("channelId"), Some(&real), "the value sent is the record's own");
        // A confirm dialog about hostile values.
        let op = crate::catalog::Service::Ably.operation("push_device_delete").unwrap();
        let values: Values = [("deviceId".to_owned(), hostile_text(&mut rng))].into();
        h.console.app.popup = Some(Popup::Confirm(Confirm::new(op, values, true, hostile_text(&mut rng))));
        h.paste(&hostile_text(&mut rng));
        assert_all_inert(h.buffer_after_draw(), "confirm");
    }
}

/// Keys a user might press, `q` and Ctrl-c left out so the console stays up.
fn random_key(rng: &mut Rng) -> Option<KeyEvent> {
    let plain = |code| Some(KeyEvent::new(code, KeyModifiers::NONE));
    match rng.below(100) {
        0..=44 => {
            let c = char::from(b'a' + u8::try_from(rng.below(26)).unwrap_or(0));
            if c == 'q' {
                None
            } else {
                plain(KeyCode::Char(if rng.chance(10) { c.to_ascii_uppercase() } else { c }))
            }
        }
        45..=54 => plain(KeyCode::Char(char::from(b'0' + u8::try_from(rng.below(10)).unwrap_or(0)))),
        55..=70 => plain(*rng.pick(&[KeyCode::Up, KeyCode::Down, KeyCode::Left, KeyCode::Right])),
        71..=77 => plain(KeyCode::Enter),
        78..=83 => plain(KeyCode::Esc),
        84..=87 => plain(KeyCode::Tab),
        88 => Some(KeyEvent::new(KeyCode::Char('x'), KeyModifiers::CONTROL)),
        89..=99 => plain(KeyCode::Char(*rng.pick(&[':', '/', 'o', '?']))),
        _ => None,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn thousands_of_random_keys_pastes_and_resizes_never_panic() {
    let started = Instant::now();
    for seed in 1..=5u64 {
        let mut h = Harness::new().await;
        let mut rng = Rng::new(seed);
        for step in 0..5_000 {
            if rng.chance(2) {
                let width = u16::try_from(rng.below(250) + 1).unwrap_or(1);
                let height = u16::try_from(rng.below(80) + 1).unwrap_or(1);
                h.resize(width, height);
            }
            if rng.chance(3) {
                h.paste(&hostile_text(&mut rng));
            } else if let Some(key) = random_key(&mut rng) {
                h.console.app.handle_key(key);
            }
            h.console.app.quit = false;
            h.apply_ready_events();
            if step % 10 == 0 {
                h.screen();
            }
        }
        h.console.app.executor.cancel_all();
    }
    assert!(started.elapsed() < Duration::from_secs(120), "took {:?}", started.elapsed());
}

#[tokio::test]
async fn the_console_honours_request_timeout_secs_from_config() {
    let router = Router::new().fallback(|| async {
        tokio::time::sleep(Duration::from_secs(120)).await;
        axum::Json(json!([]))
    });
    let url = fake_upstream(router).await;
    let config = crate::config::Config { request_timeout_secs: Some(1), ..crate::config::Config::default() };
    let env = move |name: &str| (name == "OPSDECK_ABLY_URL").then(|| url.clone());
    let mut console = super::start_with(config, &env, &no_args()).await.expect("console starts");
    let started = Instant::now();
    console.app.start_tab();
    while console.app.executor.active_count() > 0 {
        let event = tokio::time::timeout(Duration::from_secs(20), console.events.recv())
            .await
            .expect("the timeout ends the call, not the 120 s server")
            .expect("channel open");
        console.app.on_call_event(event);
    }
    let (status, _) = console.app.status().cloned().expect("an error");
    assert!(status.contains("no answer in 1.0 s"), "{status}");
    assert!(started.elapsed() < Duration::from_secs(15), "{:?}", started.elapsed());
}

#[tokio::test]
async fn config_warnings_show_in_the_status_line_at_start() {
    // A live key sent over plain http to a host that is not loopback: said at once, before any call.
    let env = |name: &str| match name {
        "ABLY_API_KEY" => Some("app.key:s3cr3t".to_owned()),
        "OPSDECK_ABLY_URL" => Some("http://ably.internal.example:8080".to_owned()),
        _ => None,
    };
    let console = super::start_with(crate::config::Config::default(), &env, &no_args()).await.expect("starts");
    let (status, severity) = console.app.status().cloned().expect("a warning");
    assert_eq!(severity, crate::tui::app::Severity::Error);
    assert!(status.contains("http://"), "{status}");
    assert!(!status.contains("s3cr3t"), "{status}");
    console.sandbox.shutdown();
}

/// One decision of where a tab's calls go, read by every label (issue 18): a URL the user gave
/// is shown as its host, never as SANDBOX; a tab on the embedded sandbox says SANDBOX everywhere.
#[tokio::test]
async fn every_label_says_the_same_target() {
    let url = fake_upstream(Router::new().fallback(|| async { axum::Json(json!({"projects": []})) })).await;
    let host = url.trim_start_matches("http://").trim_end_matches('/').to_owned();
    let env = move |name: &str| (name == "OPSDECK_COINBASE_URL").then(|| url.clone());
    let mut h = Harness::with_env(no_args(), &env).await;
    h.resize(200, 50);
    let header = h.screen().lines().next().unwrap_or_default().to_owned();
    assert!(header.contains(&format!("5 Coinbase URL {host}")), "{header}");
    assert!(header.contains("2 Deepgram SANDBOX"), "{header}");
    h.keys("5");
    h.settle().await;
    let screen = h.screen();
    let status = screen.lines().last().unwrap_or_default();
    assert!(status.contains(&format!("URL {host}")) && !status.contains("SANDBOX"), "{status}");
    h.keys(":coinbase accounts_get<Enter>");
    let screen = h.screen();
    let title = screen.lines().find(|l| l.contains("coinbase accounts_get")).unwrap_or_default();
    assert!(title.contains(&format!("→ URL {host}")) && !title.contains("SANDBOX"), "the form's title: {screen}");
    h.keys("<Esc>2");
    let screen = h.screen();
    let status = screen.lines().last().unwrap_or_default();
    assert!(status.contains("SANDBOX") && !status.contains(&host), "{status}");
    h.keys(":deepgram projects_get<Enter>");
    assert!(h.screen().contains("→ SANDBOX http://127.0.0.1:"), "{}", h.screen());
}
