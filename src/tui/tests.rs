//! The console driven by keys against the in-process simulators, read back from a TestBackend.

use std::time::Duration;

use super::app::{Focus, Popup};
use super::harness::Harness;
use crate::cli::GlobalArgs;
use crate::client::CallState;

#[tokio::test]
async fn starts_on_ably_with_channels_and_seven_tabs() {
    let mut h = Harness::new().await;
    let screen = h.screen();
    for (i, title) in ["Ably", "Deepgram", "AvaTax", "TaxJar", "Coinbase", "Mailgun", "EasyPost"].iter().enumerate() {
        assert!(screen.contains(&format!("{} {title}", i + 1)), "tab {title} in:\n{screen}");
    }
    assert!(screen.contains("1 Ably SANDBOX"), "{screen}");
    assert!(screen.contains("2 Deepgram SANDBOX"), "{screen}");
    h.resize(100, 30);
    let narrow = h.screen();
    let header = narrow.lines().next().unwrap();
    assert!(header.contains("1 Ably SBX") && header.contains(" 2 SBX 3 SBX"), "short badges when narrow:\n{narrow}");
    assert!(header.ends_with("profile default"), "the profile stays in view: {header}");
    h.resize(160, 40);
    let screen = h.screen();
    assert!(screen.contains("channels"));
    assert!(screen.contains("page 1"), "{screen}");
    let rows = h.console.app.tab().browser.row_count();
    assert!(rows >= 5, "seeded channels shown: {rows}");
}

#[tokio::test]
async fn switching_tabs_builds_and_lists_each_service() {
    let mut h = Harness::new().await;
    h.keys("2");
    assert_eq!(h.console.app.active, 1);
    h.settle().await;
    // Deepgram's simulator is built on this first visit and its projects listed.
    let screen = h.screen();
    assert!(screen.contains("projects") && screen.contains("page 1"), "{screen}");
    assert!(h.console.app.tab().browser.row_count() >= 2, "the seeded projects: {screen}");
    h.keys("<Tab>");
    assert_eq!(h.console.app.active, 2);
    h.keys("<S-Tab><S-Tab>");
    assert_eq!(h.console.app.active, 0);
    // AvaTax, shown on the way, loaded its companies.
    h.settle().await;
    // Every operation of a tab is listed, and one sent from a form reaches its simulator.
    h.keys("2o");
    let screen = h.screen();
    assert!(screen.contains("projects_list"), "{screen}");
    h.keys("projects_list<Enter><C-s>");
    h.settle().await;
    assert!(!h.screen().contains("DEEPGRAM_API_KEY"), "{}", h.screen());
}

#[tokio::test]
async fn browse_a_channel_and_open_it_in_the_inspector() {
    let mut h = Harness::new().await;
    let first = h.console.app.tab().browser.selected_record().expect("a channel");
    let second_id = h.console.app.tab().browser.records()[1].clone();
    h.keys("j<Enter>");
    assert_eq!(h.console.app.focus, Focus::Inspector);
    let screen = h.screen();
    let id = second_id.as_str().map_or_else(|| second_id["channelId"].as_str().unwrap().to_owned(), str::to_owned);
    assert!(screen.contains(&id), "{screen}");
    assert_ne!(first, second_id);
    // The selection is remembered for forms: messages of that channel.
    h.browse("messages").await;
    let screen = h.screen();
    assert!(screen.contains("messages"), "{screen}");
    assert!(h.console.app.tab().browser.row_count() > 0, "history of {id}:\n{screen}");
}

#[tokio::test]
async fn forms_are_prefilled_from_the_object_selected_in_the_inspector() {
    let mut h = Harness::new().await;
    let row = h.console.app.tab().browser.selected_record().unwrap();
    assert_eq!(row["channelId"], "alerts:ops", "the browser has the first channel selected");
    h.console.app.focus = Focus::Inspector;
    h.keys("/chat:lobby<Enter>h");
    h.keys(":channels_get<Enter>");
    let Some(Popup::Form(form)) = h.console.app.popup.as_ref() else { panic!("form") };
    assert_eq!(form.values().get("channelId").map(String::as_str), Some("chat:lobby"));
}

#[tokio::test]
async fn y_copies_the_selected_value() {
    let mut h = Harness::new().await;
    h.console.app.focus = Focus::Inspector;
    h.keys("/chat:lobby<Enter>y");
    assert_eq!(h.console.app.clipboard.as_deref(), Some("chat:lobby"), "a string is copied without quotes");
    h.keys("hy");
    let copied = h.console.app.clipboard.take().unwrap();
    let record: serde_json::Value = serde_json::from_str(&copied).unwrap();
    assert_eq!(record["channelId"], "chat:lobby");
    assert!(copied.contains("\n  "), "objects are pretty-printed");
    assert!(h.screen().contains("copied"));
}

#[tokio::test]
async fn publish_through_the_form_and_see_it_in_history() {
    let mut h = Harness::new().await;
    h.keys(":messages_publish<Enter>");
    assert!(matches!(h.console.app.popup, Some(Popup::Form(_))));
    // channelId is pre-filled from the selected channel; replace it.
    let Some(Popup::Form(form)) = h.console.app.popup.as_mut() else { unreachable!() };
    form.set_value("channelId", "ui:test");
    h.keys("<Tab>deploy-finished<Tab>all green<C-s>");
    assert!(h.console.app.popup.is_none(), "form closed on send");
    h.settle().await;
    let screen = h.screen();
    assert!(screen.contains("messages_publish: 201"), "{screen}");
    h.keys(":messages_list<Enter>");
    let Some(Popup::Form(form)) = h.console.app.popup.as_mut() else { panic!("form") };
    form.set_value("channelId", "ui:test");
    h.keys("<C-s>");
    h.settle().await;
    let screen = h.screen();
    assert!(screen.contains("deploy-finished"), "{screen}");
    assert!(screen.contains("all green"), "{screen}");
}

#[tokio::test]
async fn every_ably_operation_runs_from_the_console() {
    let mut h = Harness::new().await;
    let push = r#"{"recipient":{"transportType":"fcm","registrationToken":"tok"}}"#;
    let batch = r#"[{"channels":["ui:a","ui:b"],"messages":[{"name":"n","data":"d"}]}]"#;
    let steps: &[(&str, &[(&str, &str)])] = &[
        ("channels_list", &[]),
        ("channels_get", &[("channelId", "chat:lobby")]),
        ("messages_publish", &[("channelId", "ui:all"), ("name", "hello"), ("data", "{\"a\":1}")]),
        ("messages_batch_publish", &[("batch", batch)]),
        ("messages_list", &[("channelId", "ui:all")]),
        ("presence_get", &[("channelId", "chat:lobby")]),
        ("presence_history", &[("channelId", "chat:lobby")]),
        ("push_device_register", &[("id", "ui-dev"), ("platform", "android"), ("formFactor", "phone"), ("push", push)]),
        ("push_device_get", &[("deviceId", "ui-dev")]),
        ("push_device_list", &[("deviceId", "ui-dev")]),
        ("push_subscriptions_create", &[("channel", "ui:all"), ("deviceId", "ui-dev")]),
        ("push_subscriptions_list", &[("deviceId", "ui-dev")]),
        ("push_publish", &[("recipient", r#"{"deviceId":"ui-dev"}"#), ("notification", r#"{"title":"t","body":"b"}"#)]),
        ("push_subscriptions_delete", &[("channel", "ui:all"), ("deviceId", "ui-dev")]),
        ("push_device_delete", &[("deviceId", "ui-dev")]),
        ("stats_get", &[("unit", "hour")]),
        ("time_get", &[]),
        ("tokens_request", &[("keyName", "opsdeck.sandbox"), ("ttl", "60000")]),
    ];
    assert_eq!(steps.len(), crate::catalog::Service::Ably.operations().len());
    for (name, values) in steps {
        h.keys(&format!(":ably {name}<Enter>"));
        let Some(Popup::Form(form)) = h.console.app.popup.as_mut() else { panic!("{name}: no form") };
        assert_eq!(form.op.name, *name);
        for param in form.op.params {
            let value = values.iter().find(|(k, _)| *k == param.name).map_or("", |(_, v)| *v);
            form.set_value(param.name, value);
        }
        h.keys("<C-s>");
        if matches!(h.console.app.popup, Some(Popup::Confirm(_))) {
            h.keys("y");
        }
        h.settle().await;
        h.settle().await;
        let (status, _) = h.console.app.status().cloned().expect("a status");
        assert!(status.starts_with(&format!("ably {name}: 2")), "{name}: {status}");
        // The server time opens a view of its own; the next operation is typed after it.
        if matches!(h.console.app.popup, Some(Popup::Detail(_))) {
            h.keys("<Esc>");
        }
    }
    // The last response, the issued token, is in the inspector.
    let view = h.console.app.tab().inspector.view().expect("a response");
    assert_eq!(view.title, "tokens_request");
    let details: serde_json::Value = serde_json::from_slice(&view.body).unwrap();
    assert!(details["token"].as_str().is_some_and(|t| !t.is_empty()), "{details}");
}

#[tokio::test]
async fn a_bad_value_shows_an_error_beside_the_field_and_sends_nothing() {
    let mut h = Harness::new().await;
    h.keys(":messages_list<Enter>");
    let Some(Popup::Form(form)) = h.console.app.popup.as_mut() else { panic!("form") };
    form.set_value("channelId", "x");
    form.set_value("limit", "5000");
    h.keys("<C-s>");
    assert_eq!(h.console.app.executor.active_count(), 0, "nothing sent");
    let screen = h.screen();
    assert!(screen.contains("✗ must be at most 1000"), "{screen}");
    assert!(screen.contains("nothing was sent"));
    // Esc keeps what was typed for next time.
    h.keys("<Esc>:messages_list<Enter>");
    let Some(Popup::Form(form)) = h.console.app.popup.as_ref() else { panic!("form") };
    assert_eq!(form.values().get("limit").map(String::as_str), Some("5000"));
}

#[tokio::test]
async fn a_bad_draft_does_not_break_browsing() {
    let mut h = Harness::new().await;
    h.keys(":messages_list<Enter>");
    let Some(Popup::Form(form)) = h.console.app.popup.as_mut() else { panic!("form") };
    form.set_value("limit", "5000");
    h.keys("<Esc>");
    h.browse("messages").await;
    assert!(h.console.app.popup.is_none(), "no form: the selected channel is enough");
    assert!(h.console.app.tab().browser.row_count() > 0);
    let screen = h.screen();
    assert!(screen.contains("messages of alerts:ops page 1"), "the title names the channel: {screen}");
}

#[tokio::test]
async fn delete_asks_first_and_only_then_sends() {
    let mut h = Harness::new().await;
    h.browse("push devices").await;
    let before = h.console.app.tab().browser.row_count();
    assert!(before > 0, "seeded devices");
    let device = h.console.app.tab().browser.selected_record().unwrap()["id"].as_str().unwrap().to_owned();
    h.keys("o");
    let Some(Popup::Menu(_)) = h.console.app.popup else { panic!("menu") };
    h.keys("/push_device_delete<Enter>");
    let Some(Popup::Form(form)) = h.console.app.popup.as_ref() else { panic!("form") };
    assert_eq!(form.op.name, "push_device_delete");
    assert_eq!(form.values().get("deviceId"), Some(&device), "pre-filled from the selection");
    h.keys("<C-s>");
    let screen = h.screen();
    assert!(screen.contains("This cannot be undone"), "{screen}");
    assert!(screen.contains("SANDBOX"));
    assert!(screen.contains(&format!("deviceId={device}")));
    h.keys("n");
    assert_eq!(h.console.app.executor.active_count(), 0);
    assert!(h.screen().contains("nothing was sent"));
    h.keys(":push_device_delete<Enter><C-s>y");
    h.settle().await;
    h.settle().await;
    assert_eq!(h.console.app.tab().browser.row_count(), before - 1, "the list was refreshed without it");
}

#[tokio::test]
async fn on_a_live_service_the_target_id_must_be_typed() {
    // A "live" Ably that is really a simulator, so the test stays offline.
    let remote = crate::sandbox::start(0, 9).await.unwrap();
    let url = remote.base_url(crate::catalog::Service::Ably);
    let env = |name: &str| match name {
        "ABLY_API_KEY" => Some(crate::sandbox::credentials::ABLY_KEY.to_owned()),
        "OPSDECK_ABLY_URL" => Some(url.clone()),
        _ => None,
    };
    let global = GlobalArgs::default();
    let mut h = Harness::with_env(global, &env).await;
    assert!(h.screen().contains("1 Ably LIVE"), "{}", h.screen());
    h.browse("push devices").await;
    let device = h.console.app.tab().browser.selected_record().unwrap()["id"].as_str().unwrap().to_owned();
    h.keys(":ably push_device_delete<Enter><C-s>");
    let screen = h.screen();
    assert!(screen.contains("LIVE") && screen.contains(&format!("Type {device} and press Enter")), "{screen}");
    h.keys("y<Enter>");
    assert_eq!(h.console.app.executor.active_count(), 0, "a y is not the id");
    assert!(matches!(h.console.app.popup, Some(Popup::Confirm(_))));
    h.keys("<BS>");
    h.keys(&format!("{device}<Enter>"));
    h.settle().await;
    let (status, _) = h.console.app.status().cloned().unwrap();
    assert!(status.starts_with("ably push_device_delete: 204"), "{status}");
    remote.shutdown();
}

#[tokio::test]
async fn cancelling_an_in_flight_call_drops_its_result() {
    let mut h = Harness::new().await;
    h.console.app.focus = Focus::Browser;
    h.keys("r");
    let id = h.console.app.tab().loading.expect("a refresh in flight");
    h.keys("<Esc>");
    assert_eq!(h.console.app.executor.state(id), Some(CallState::Cancelled));
    assert!(h.console.app.tab().loading.is_none());
    // Whatever the task still reports is dropped.
    if let Ok(Some(event)) = tokio::time::timeout(Duration::from_secs(5), h.console.events.recv()).await {
        h.console.app.on_call_event(event);
    }
    assert_eq!(h.console.app.executor.state(id), Some(CallState::Cancelled));
    assert!(h.screen().contains("cancelled call"));
}

#[tokio::test]
async fn refreshing_twice_keeps_only_the_newest() {
    let mut h = Harness::new().await;
    h.console.app.focus = Focus::Browser;
    h.keys("r");
    let first = h.console.app.tab().loading.unwrap();
    h.keys("r");
    let second = h.console.app.tab().loading.unwrap();
    assert_ne!(first, second);
    assert_eq!(h.console.app.executor.state(first), Some(CallState::Cancelled));
    h.settle().await;
    assert_eq!(h.console.app.executor.state(second), Some(CallState::Done));
}

#[tokio::test]
async fn next_and_previous_page_follow_the_api() {
    let mut h = Harness::new().await;
    h.keys(":messages_list<Enter>");
    let Some(Popup::Form(form)) = h.console.app.popup.as_mut() else { panic!("form") };
    form.set_value("limit", "5");
    h.keys("<C-s>");
    h.settle().await;
    let first = h.console.app.tab().browser.records().to_vec();
    assert_eq!(first.len(), 5);
    assert!(h.screen().contains("page 1 · 5 rows · n: next"));
    h.console.app.focus = Focus::Browser;
    h.keys("n");
    h.settle().await;
    assert!(h.screen().contains("page 2 · 5 rows"), "{}", h.screen());
    let second = h.console.app.tab().browser.records().to_vec();
    assert_ne!(first, second);
    assert!(first[4]["timestamp"].as_u64() >= second[0]["timestamp"].as_u64(), "older messages on page 2");
    h.keys("p");
    h.settle().await;
    assert_eq!(h.console.app.tab().browser.records(), first.as_slice());
    h.keys("p");
    assert!(h.screen().contains("this is the first page"));
}

#[tokio::test]
async fn auto_refresh_reloads_the_view_when_due() {
    let mut h = Harness::new().await;
    assert!(h.console.app.next_deadline().is_none(), "idle: nothing to wake up for");
    h.keys("a");
    assert!(h.screen().contains("auto-refresh every 2 s"));
    let deadline = h.console.app.next_deadline().expect("a wake-up is scheduled");
    h.console.app.on_tick(deadline);
    assert!(h.console.app.tab().loading.is_some(), "the refresh was sent");
    h.settle().await;
    h.keys("a");
    assert!(h.console.app.next_deadline().is_none());
}

#[tokio::test]
async fn the_palette_reaches_any_service() {
    let mut h = Harness::new().await;
    h.keys(":easypost shipments_buy<Enter>");
    assert_eq!(h.console.app.tab().service, crate::catalog::Service::Easypost);
    let Some(Popup::Form(form)) = h.console.app.popup.as_ref() else { panic!("form") };
    assert_eq!(form.op.name, "shipments_buy");
    assert!(h.screen().contains("→ SANDBOX"));
}

#[tokio::test]
async fn any_size_down_to_tiny_never_panics() {
    let mut h = Harness::new().await;
    h.keys("?");
    for (w, h_) in [(200, 50), (60, 15), (59, 14), (20, 5), (1, 1)] {
        h.resize(w, h_);
        let screen = h.screen();
        if w < 60 {
            assert!(screen.contains("Terminal") || w < 20, "{screen}");
        }
    }
    h.resize(100, 30);
    assert!(h.screen().contains("Keys of the browser"));
}

#[tokio::test]
async fn themes_by_name_and_a_missing_one_falls_back_with_a_warning() {
    let light = Harness::with_args(GlobalArgs { theme: Some("light".into()), ..GlobalArgs::default() });
    let mut light = light.await;
    assert_eq!(light.console.app.theme.name, "light");
    assert!(light.console.app.status().is_none());
    light.screen();
    let mut missing = Harness::with_args(GlobalArgs { theme: Some("neon".into()), ..GlobalArgs::default() }).await;
    assert_eq!(missing.console.app.theme.name, "dark");
    assert!(missing.screen().contains("no theme named 'neon'"), "{}", missing.screen());
}

#[tokio::test]
async fn read_only_refuses_changes() {
    let mut h = Harness::with_args(GlobalArgs { read_only: true, ..GlobalArgs::default() }).await;
    h.keys(":messages_publish<Enter>");
    assert!(h.screen().contains("will not be sent"), "the form warns before anything is typed");
    let Some(Popup::Form(form)) = h.console.app.popup.as_mut() else { panic!("form") };
    form.set_value("channelId", "x");
    h.keys("<C-s>");
    assert_eq!(h.console.app.executor.active_count(), 0);
    assert!(h.screen().contains("--read-only is on"));
}

/// Publishes a message to the embedded Ably straight over HTTP, as another client would: the
/// console learns of it only by asking.
async fn publish_elsewhere(h: &Harness, channel: &str, name: &str) {
    let base = h.console.sandbox.base_url(crate::catalog::Service::Ably);
    let (user, secret) = crate::sandbox::credentials::ABLY_KEY.split_once(':').unwrap();
    let answer = reqwest::Client::new()
        .post(format!("{base}/channels/{channel}/messages"))
        .basic_auth(user, Some(secret))
        .header("content-type", "application/json")
        .body(serde_json::json!({"name": name, "data": "from elsewhere"}).to_string())
        .send()
        .await
        .unwrap();
    assert!(answer.status().is_success(), "{}", answer.status());
}

#[tokio::test]
async fn tail_puts_new_messages_on_top_and_stops_when_leaving_the_list() {
    let mut h = Harness::new().await;
    // Polling, as a tail does where no push socket serves (`live_tail_*` below follow one).
    h.console.app.live_tails = false;
    publish_elsewhere(&h, "ui:tail", "first").await;
    publish_elsewhere(&h, "ui:tail", "second").await;
    h.keys(":messages_list<Enter>");
    let Some(Popup::Form(form)) = h.console.app.popup.as_mut() else { panic!("form") };
    form.set_value("channelId", "ui:tail");
    h.keys("<C-s>");
    h.settle().await;
    assert_eq!(h.console.app.tab().browser.row_count(), 2, "{}", h.screen());
    // The cursor on the older message, and a row filter typed: both survive the tail.
    h.console.app.focus = Focus::Browser;
    h.keys("j");
    let selected = h.console.app.tab().browser.selected_record().unwrap();
    assert_eq!(selected["name"], "first");
    h.keys("T");
    let screen = h.screen();
    assert!(screen.contains("● tail 2 s · 0 new"), "{screen}");
    assert!(screen.contains("tail 2s · 0 new"), "the status bar says so too:\n{screen}");
    // Nothing is due before the interval is over.
    h.console.app.on_tick(std::time::Instant::now());
    assert_eq!(h.console.app.executor.active_count(), 0);

    publish_elsewhere(&h, "ui:tail", "third").await;
    let later = std::time::Instant::now() + Duration::from_secs(3);
    assert!(h.console.app.next_deadline().is_some_and(|at| at <= later), "the loop wakes up for the tail");
    h.console.app.on_tick(later);
    assert_eq!(h.console.app.executor.active_count(), 1, "one poll");
    h.console.app.on_tick(later + Duration::from_secs(3));
    assert_eq!(h.console.app.executor.active_count(), 1, "never two polls at once");
    h.settle().await;
    let browser = &h.console.app.tab().browser;
    assert_eq!(browser.row_count(), 3);
    assert_eq!(browser.records()[0]["name"], "third", "new rows on top");
    assert!(browser.is_new(0) && !browser.is_new(1));
    assert_eq!(browser.selected_record(), Some(selected), "the cursor stays on its message");
    let screen = h.screen();
    assert!(screen.contains("● tail 2 s · 1 new"), "{screen}");
    assert!(screen.lines().any(|l| l.contains("● ") && l.contains("third")), "the new row is marked:\n{screen}");

    // T again stops it; the row stays.
    h.keys("T");
    assert!(h.console.app.tab().tail.is_none());
    assert!(!h.screen().contains("● tail"), "{}", h.screen());
    h.console.app.on_tick(later + Duration::from_secs(10));
    assert_eq!(h.console.app.executor.active_count(), 0, "no poll after it stopped");

    // Leaving the list stops it too.
    h.keys("T");
    assert!(h.console.app.tab().tail.is_some());
    h.browse("channels").await;
    assert!(h.console.app.tab().tail.is_none(), "another list in view ends the tail");
    // And a view that is no list has nothing to tail.
    h.keys("T");
    assert!(h.console.app.tab().tail.is_some(), "channels is a list too");
    h.keys("T");
}

/// Applies what the console's background tasks and calls report until `done`, failing after
/// 10 s: for what arrives by itself, such as a live tail's pushes.
async fn until(h: &mut Harness, what: &str, done: impl Fn(&mut Harness) -> bool) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while !done(h) {
        let console = &mut h.console;
        tokio::select! {
            Some(report) = console.background.recv() => console.app.on_background(report),
            Some(event) = console.events.recv() => console.app.on_call_event(event),
            () = tokio::time::sleep_until(deadline) => panic!("{what} within 10 s:\n{}", h.screen()),
        }
    }
}

/// Opens the message history of `channel`, the browser focused.
async fn open_messages(h: &mut Harness, channel: &str) {
    h.keys(":messages_list<Enter>");
    let Some(Popup::Form(form)) = h.console.app.popup.as_mut() else { panic!("form") };
    form.set_value("channelId", channel);
    h.keys("<C-s>");
    h.settle().await;
    h.console.app.focus = Focus::Browser;
}

#[tokio::test]
async fn a_live_tail_follows_the_channel_over_realtime_without_polling() {
    let mut h = Harness::new().await;
    publish_elsewhere(&h, "ui:live", "first").await;
    open_messages(&mut h, "ui:live").await;
    h.keys("T");
    assert!(h.screen().contains("● live · connecting"), "{}", h.screen());
    until(&mut h, "the channel attached", |h| h.screen().contains("● live · 0 new")).await;
    // No poll is ever due while the socket serves.
    h.console.app.on_tick(std::time::Instant::now() + Duration::from_secs(30));
    assert_eq!(h.console.app.executor.active_count(), 0, "no poll");

    publish_elsewhere(&h, "ui:live", "second").await;
    until(&mut h, "the pushed message on top", |h| h.console.app.tab().browser.row_count() == 2).await;
    h.settle().await;
    let browser = &h.console.app.tab().browser;
    assert_eq!(browser.records()[0]["name"], "second");
    assert!(browser.is_new(0) && !browser.is_new(1));
    assert!(h.screen().contains("● live · 1 new"), "{}", h.screen());
    assert!(h.screen().contains("tail live · 1 new"), "the status bar says so too:\n{}", h.screen());

    // Someone enters the channel's presence on a connection of their own.
    let base = h.console.sandbox.base_url(crate::catalog::Service::Ably).replace("http://", "ws://");
    let key = crate::sandbox::credentials::ABLY_KEY;
    let (mut ada, _) = tokio_tungstenite::connect_async(format!("{base}/?key={key}&clientId=ada")).await.unwrap();
    use futures_util::SinkExt as _;
    let enter = serde_json::json!({"action": 14, "channel": "ui:live", "msgSerial": 0, "presence": [{"action": 2}]});
    ada.send(tokio_tungstenite::tungstenite::Message::Text(enter.to_string().into())).await.unwrap();
    until(&mut h, "ada present", |h| h.screen().contains("1 present (ada)")).await;
    drop(ada);

    // T stops it: the socket closes and nothing more arrives.
    h.keys("T");
    assert!(h.console.app.tab().live_tail.is_none() && h.console.app.tab().tail.is_none());
}

#[tokio::test]
async fn a_live_tail_that_cannot_connect_says_so_and_polls() {
    let mut h = Harness::new().await;
    publish_elsewhere(&h, "ui:fallback", "first").await;
    open_messages(&mut h, "ui:fallback").await;
    // The tab's target now names a host that speaks no realtime (the control port).
    let control = h.console.sandbox.control_url();
    h.console.app.tabs[h.console.app.active].target.base_url = control;
    h.keys("T");
    until(&mut h, "the fallback", |h| h.console.app.tab().live_tail.is_none()).await;
    let screen = h.screen();
    assert!(screen.contains("tail polls every 2 s: the live connection ended"), "{screen}");
    assert!(!screen.contains("sandbox-secret"), "no credential is shown:\n{screen}");
    assert!(h.console.app.tab().tail_due(std::time::Instant::now(), Duration::from_secs(2)), "the tail polls");
}

#[tokio::test]
async fn compose_from_the_palette_opens_mailguns_send_forms_from_any_tab() {
    let mut h = Harness::new().await;
    h.keys(":compose email<Enter>");
    assert_eq!(h.console.app.tab().service, crate::catalog::Service::Mailgun);
    let Some(Popup::Form(form)) = h.console.app.popup.as_ref() else { panic!("form:\n{}", h.screen()) };
    assert_eq!(form.op.name, "messages_send");
    // What was typed is kept for next time, as every form's draft is.
    let Some(Popup::Form(form)) = h.console.app.popup.as_mut() else { unreachable!() };
    form.set_value("domain", "mg.example.com");
    h.keys("<Esc>1:compose email<Enter>");
    let Some(Popup::Form(form)) = h.console.app.popup.as_ref() else { panic!("form") };
    assert_eq!(form.values().get("domain").map(String::as_str), Some("mg.example.com"));
    h.keys("<Esc>:compose mime<Enter>");
    let Some(Popup::Form(form)) = h.console.app.popup.as_ref() else { panic!("form") };
    assert_eq!(form.op.name, "messages_send_mime");
}

/// How many requests the Coinbase simulator's log holds for `path`, whatever their query (the
/// control port's view).
async fn coinbase_requests(h: &Harness, path: &str) -> usize {
    let control = h.console.sandbox.control_url();
    let log = reqwest::get(format!("{control}/requests?service=coinbase&limit=1000")).await.unwrap();
    let log: serde_json::Value = serde_json::from_slice(&log.bytes().await.unwrap()).unwrap();
    let asked = |r: &&serde_json::Value| r["path"].as_str().is_some_and(|p| p.split('?').next() == Some(path));
    log["requests"].as_array().unwrap().iter().filter(asked).count()
}

#[tokio::test]
async fn a_market_view_runs_on_the_coinbase_feed_without_polling_its_book() {
    let mut h = Harness::new().await;
    h.keys("5");
    assert_eq!(h.console.app.tab().service, crate::catalog::Service::Coinbase);
    h.browse("products").await;
    h.console.app.focus = Focus::Browser;
    h.keys("<Enter>");
    let Some(Popup::Detail(view)) = h.console.app.popup.as_ref() else { panic!("a view:\n{}", h.screen()) };
    assert_eq!(view.title, "BTC-USD · market");
    // The first answers give the history; the feed then serves.
    h.console.app.on_tick(std::time::Instant::now());
    until(&mut h, "the feed serving", |h| h.console.app.tab().live_market.as_ref().is_some_and(|l| l.serving)).await;
    h.settle().await;
    until(&mut h, "the pushed book", |h| {
        matches!(&h.console.app.popup, Some(Popup::Detail(d)) if d.market.as_ref().is_some_and(|m| m.depth.is_some()))
    })
    .await;
    let screen = h.screen();
    assert!(screen.contains("order book ● live") && screen.contains("trades ● live"), "{screen}");
    let books = coinbase_requests(&h, "/products/BTC-USD/book").await;
    let trades = coinbase_requests(&h, "/products/BTC-USD/trades").await;
    assert!(books >= 1 && trades >= 1, "the first answers were asked: {books} {trades}");

    // The market moves: trades arrive on the tape and in the candles by themselves.
    let control = h.console.sandbox.control_url();
    let faster = reqwest::Client::new().post(format!("{control}/coinbase/market")).body(r#"{"rate": 20}"#);
    assert!(faster.send().await.unwrap().status().is_success());
    let tape_top = |h: &Harness| match &h.console.app.popup {
        Some(Popup::Detail(d)) => d.market.as_ref().and_then(|m| m.tape.as_ref()?.first().cloned()),
        _ => None,
    };
    let before = tape_top(&h);
    let updates = |h: &Harness| match &h.console.app.popup {
        Some(Popup::Detail(d)) => d.market.as_ref().map_or(0, |m| m.updates),
        _ => 0,
    };
    let pushed = updates(&h);
    until(&mut h, "a new trade on the tape", |h| tape_top(h) != before).await;
    until(&mut h, "more pushes", |h| updates(h) > pushed + 5).await;
    for second in 1..=4 {
        h.console.app.on_tick(std::time::Instant::now() + Duration::from_secs(3 * second));
        h.settle().await;
    }
    assert_eq!(coinbase_requests(&h, "/products/BTC-USD/book").await, books, "the book is not asked again");
    assert_eq!(coinbase_requests(&h, "/products/BTC-USD/trades").await, trades, "nor the trades");

    // Closing the view closes its socket, at the tick the event loop makes for it.
    h.keys("<Esc>");
    let due = h.console.app.next_deadline();
    assert!(due.is_some_and(|at| at <= std::time::Instant::now()), "a tick is due: {due:?}");
    h.console.app.on_tick(std::time::Instant::now());
    assert!(h.console.app.tab().live_market.is_none());
}

/// A signed request to the console's Coinbase simulator with the sandbox key: its JSON answer.
async fn coinbase_call(
    h: &Harness,
    method: reqwest::Method,
    path: &str,
    body: Option<serde_json::Value>,
) -> serde_json::Value {
    use crate::sandbox::credentials as c;
    let base = h.console.sandbox.base_url(crate::catalog::Service::Coinbase);
    let body = body.map(|b| b.to_string()).unwrap_or_default();
    let timestamp = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs().to_string();
    let signature =
        crate::sandbox::coinbase::sign(c::COINBASE_SECRET, &timestamp, method.as_str(), path, body.as_bytes()).unwrap();
    let answer = reqwest::Client::new()
        .request(method, format!("{base}{path}"))
        .header("cb-access-key", c::COINBASE_KEY)
        .header("cb-access-passphrase", c::COINBASE_PASSPHRASE)
        .header("cb-access-timestamp", timestamp)
        .header("cb-access-sign", signature)
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await
        .unwrap();
    serde_json::from_slice(&answer.bytes().await.unwrap()).unwrap()
}

#[tokio::test]
async fn the_orders_list_follows_the_user_channel_an_order_filling_in_place() {
    let mut h = Harness::new().await;
    h.keys("5");
    h.settle().await;
    let control = h.console.sandbox.control_url();
    let market =
        |body: &'static str| reqwest::Client::new().post(format!("{control}/coinbase/market")).body(body).send();
    assert!(market(r#"{"paused": true}"#).await.unwrap().status().is_success());
    // A buy resting a cent under the best ask, above every bid: the simulated traders' next
    // market sell takes it.
    let book = coinbase_call(&h, reqwest::Method::GET, "/products/BTC-USD/book", None).await;
    let best_ask: rust_decimal::Decimal = book["asks"][0][0].as_str().unwrap().parse().unwrap();
    let price = (best_ask - rust_decimal::Decimal::new(1, 2)).to_string();
    let order = json_order(&h, &price).await;
    let id = order["id"].as_str().unwrap().to_owned();

    h.keys(":orders_list<Enter>");
    let Some(Popup::Form(form)) = h.console.app.popup.as_mut() else { panic!("form:\n{}", h.screen()) };
    form.set_value("status", "all");
    h.keys("<C-s>");
    h.settle().await;
    h.console.app.focus = Focus::Browser;
    let status_of = |h: &Harness, id: &str| {
        let records = h.console.app.tab().browser.records();
        records
            .iter()
            .find(|r| r["id"] == id)
            .map(|r| (r["status"].as_str().unwrap_or_default().to_owned(), r["filled_size"].clone()))
    };
    assert_eq!(status_of(&h, &id).map(|s| s.0), Some("open".to_owned()), "{}", h.screen());
    // The event loop ticks for it: the list's socket is to open now, with nothing else due.
    let due = h.console.app.next_deadline();
    assert!(due.is_some_and(|at| at <= std::time::Instant::now()), "a tick is due: {due:?}");
    h.console.app.on_tick(std::time::Instant::now());
    until(&mut h, "the user channel serving", |h| h.console.app.tab().live_rows.as_ref().is_some_and(|l| l.serving))
        .await;
    assert!(h.screen().contains("● live · ws://"), "the list says it is live:\n{}", h.screen());

    // The market runs: a trader's sell fills our buy, and its row says so where it is.
    assert!(market(r#"{"paused": false, "rate": 50}"#).await.unwrap().status().is_success());
    let filled = |h: &mut Harness| {
        h.console.app.on_tick(std::time::Instant::now());
        status_of(h, &id).is_some_and(|(status, _)| status == "done")
    };
    until(&mut h, "our order done in the list", filled).await;
    let (_, filled_size) = status_of(&h, &id).unwrap();
    assert_eq!(filled_size, "0.00010000", "{}", h.screen());
    assert!(h.console.app.tab().tail.is_none(), "no tail: the list follows by itself");
    assert_eq!(
        h.console.app.tab().browser.records().iter().filter(|r| r["id"] == id.as_str()).count(),
        1,
        "one row for it, in place"
    );

    // One placed elsewhere comes on top, marked; cancelled elsewhere, it leaves the list.
    let other = json_order(&h, "50000.00").await;
    let other_id = other["id"].as_str().unwrap().to_owned();
    let listed = |h: &mut Harness, id: &str| {
        h.console.app.on_tick(std::time::Instant::now());
        h.console.app.tab().browser.records().iter().any(|r| r["id"] == id)
    };
    until(&mut h, "the new order on top", |h| listed(h, &other_id)).await;
    assert_eq!(h.console.app.tab().browser.records()[0]["id"], other_id.as_str());
    assert!(h.console.app.tab().browser.is_new(0), "marked as arrived");
    coinbase_call(&h, reqwest::Method::DELETE, &format!("/orders/{other_id}"), None).await;
    until(&mut h, "the cancelled order gone", |h| !listed(h, &other_id)).await;
    assert!(listed(&mut h, &id), "the filled one stays, done");

    // Another list shown closes the socket.
    h.browse("products").await;
    h.console.app.on_tick(std::time::Instant::now());
    assert!(h.console.app.tab().live_rows.is_none());
}

async fn json_order(h: &Harness, price: &str) -> serde_json::Value {
    let body =
        serde_json::json!({"product_id": "BTC-USD", "side": "buy", "type": "limit", "price": price, "size": "0.0001"});
    let order = coinbase_call(h, reqwest::Method::POST, "/orders", Some(body)).await;
    assert!(order["id"].is_string(), "{order}");
    order
}

/// A file written for one test, removed when it ends.
struct ScratchFile(std::path::PathBuf);

impl ScratchFile {
    fn new(name: &str, bytes: &[u8]) -> ScratchFile {
        let path = std::env::temp_dir().join(format!("opsdeck-{}-{name}", std::process::id()));
        std::fs::write(&path, bytes).unwrap();
        ScratchFile(path)
    }

    fn path(&self) -> String {
        self.0.display().to_string()
    }
}

impl Drop for ScratchFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// The texts of the open view, by title.
fn view_text(h: &Harness, title: &str) -> Option<String> {
    match &h.console.app.popup {
        Some(Popup::Detail(d)) => d.texts.iter().find(|(t, _)| t == title).map(|(_, text)| text.clone()),
        _ => None,
    }
}

#[tokio::test]
async fn transcribe_live_streams_a_file_at_its_speed_interim_words_replaced_by_finals() {
    let text = "live words arrive while the audio plays.";
    let speech = crate::sandbox::deepgram::audio::speak(text, "linear16", Some("wav"), Some(16000), 1.0).unwrap();
    let file = ScratchFile::new("live.wav", &speech.bytes);
    let mut h = Harness::new().await;
    h.keys(":transcribe live<Enter>");
    assert_eq!(h.console.app.tab().service, crate::catalog::Service::Deepgram);
    let Some(Popup::Form(form)) = h.console.app.popup.as_mut() else { panic!("form:\n{}", h.screen()) };
    assert_eq!(form.op.name, "transcription_live");
    form.set_value("file", &file.path());
    form.set_value("punctuate", "true");
    h.keys("<C-s>");
    let Some(Popup::Detail(view)) = h.console.app.popup.as_ref() else { panic!("a view:\n{}", h.screen()) };
    assert!(view.title.starts_with("live transcript"), "{}", view.title);
    // Words show before they are final, then move to the transcript as finals replace them.
    let seen_interim = std::cell::Cell::new(false);
    until(&mut h, "the stream done", |h| {
        if view_text(h, "hearing (not final yet)").is_some_and(|t| !t.is_empty()) {
            seen_interim.set(true);
        }
        matches!(&h.console.app.popup, Some(Popup::Detail(d)) if d.title.ends_with("done"))
    })
    .await;
    assert!(seen_interim.get(), "interim words were shown");
    assert_eq!(view_text(&h, "transcript (final)").as_deref(), Some("Live words arrive while the audio plays."));
    assert_eq!(view_text(&h, "hearing (not final yet)"), None);
    let screen = h.screen();
    assert!(screen.contains("done: the service sent its last results"), "{screen}");
    assert!(screen.contains("interim_results=true"), "the socket's query is shown: {screen}");
    // The sandbox counted the stream as usage in seconds of audio.
    h.keys("<Esc>");
    h.console.app.on_tick(std::time::Instant::now());
    assert!(h.console.app.tab().live_stream.is_none());
}

#[tokio::test]
async fn closing_a_live_transcript_stops_its_stream_and_unpaceable_audio_is_refused() {
    let speech =
        crate::sandbox::deepgram::audio::speak(&"long ".repeat(60), "linear16", None, Some(8000), 1.0).unwrap();
    let file = ScratchFile::new("long.wav", &speech.bytes);
    let mut h = Harness::new().await;
    h.keys(":transcribe live<Enter>");
    let Some(Popup::Form(form)) = h.console.app.popup.as_mut() else { panic!("form") };
    form.set_value("file", &file.path());
    h.keys("<C-s>");
    until(&mut h, "some audio sent", |h| {
        matches!(&h.console.app.popup, Some(Popup::Detail(d)) if d.facts.iter().any(|(_, v, _)| v.contains(" of ") && !v.contains(" 0.0 of")))
    })
    .await;
    h.keys("<Esc>");
    assert!(h.console.app.next_deadline().is_some_and(|at| at <= std::time::Instant::now()), "a tick is due");
    h.console.app.on_tick(std::time::Instant::now());
    assert!(h.console.app.tab().live_stream.is_none());
    assert!(h.screen().contains("stopped the live transcript"), "{}", h.screen());

    // Compressed audio cannot be paced without decoding it: refused before anything is sent.
    let flac = ScratchFile::new("x.flac", b"fLaC\0\0\0\x22 and more bytes than a header");
    h.keys(":transcribe live<Enter>");
    let Some(Popup::Form(form)) = h.console.app.popup.as_mut() else { panic!("form") };
    form.set_value("file", &flac.path());
    h.keys("<C-s>");
    let screen = h.screen();
    assert!(screen.contains("cannot be paced without decoding it"), "{screen}");
    assert!(h.console.app.tab().live_stream.is_none());
}
