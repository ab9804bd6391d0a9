//! The inspector's conventions, driven by keys against the in-process simulators: `Y` copies a
//! request as curl or HTTPie, `|` filters the response with jq, time series get a chart.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use opsdeck::clipboard::Copied;
use opsdeck::tui::app::{Focus, Popup};
use opsdeck::tui::harness::Harness;

fn alt(c: char) -> KeyEvent {
    KeyEvent::new(KeyCode::Char(c), KeyModifiers::ALT)
}

#[tokio::test]
async fn y_copies_the_last_request_as_httpie_or_curl_without_secrets() {
    let mut h = Harness::new().await;
    h.keys("Y");
    let screen = h.screen();
    assert!(screen.contains("copy request as"), "{screen}");
    assert!(screen.contains("last sent: GET http://127.0.0.1:"), "{screen}");
    assert!(screen.contains("HTTPie"), "{screen}");
    h.keys("h");
    assert!(h.console.app.popup.is_none());
    let text = h.console.app.clipboard.take().expect("a command to copy");
    assert!(text.starts_with("http -a \"$ABLY_API_KEY\" GET 'http://127.0.0.1:"), "{text}");
    assert!(!text.contains("sandbox-secret"), "{text}");
    // The event loop found a way: the status line says which.
    h.console.app.on_copied(text, Ok(Copied::Osc52));
    assert!(h.screen().contains("copied as HTTPie via OSC 52 (terminal)"), "{}", h.screen());
    // A passing notice: it stays with its tab and fades after a few seconds.
    h.keys("2");
    assert!(!h.screen().contains("copied as HTTPie"), "not on another tab: {}", h.screen());
    h.keys("1");
    assert!(h.screen().contains("copied as HTTPie"), "back on its own tab: {}", h.screen());
    let fades_at = h.console.app.tab().status_fades_at.expect("a passing notice");
    assert!(h.console.app.next_deadline().is_some_and(|at| at <= fades_at), "the loop wakes up to take it off");
    h.console.app.on_tick(fades_at);
    assert!(!h.screen().contains("copied as HTTPie"), "faded: {}", h.screen());

    // No way worked: the command is shown where it can be selected.
    h.keys("Y<Enter>");
    let text = h.console.app.clipboard.take().expect("curl");
    assert!(text.starts_with("curl -X GET 'http://127.0.0.1:"), "{text}");
    h.console.app.on_copied(text, Err("TERM is dumb or unset: no OSC 52; no clipboard_cmd in config.toml".into()));
    let screen = h.screen();
    assert!(screen.contains("could not copy: TERM is dumb"), "{screen}");
    assert!(screen.contains("┐┌ command as curl ─"), "{screen}");
    assert!(screen.contains("│curl -X GET \\"), "{screen}");
    assert!(screen.contains("│  'http://127.0.0.1:"), "{screen}");
    assert!(screen.contains("-u \"$ABLY_API_KEY\""), "{screen}");
    assert_eq!(h.console.app.focus, Focus::Inspector);
    assert!(!screen.contains("sandbox-secret"));
}

#[tokio::test]
async fn alt_y_in_a_form_copies_the_request_being_built() {
    let mut h = Harness::new().await;
    h.keys(":messages_publish<Enter>");
    assert!(matches!(h.console.app.popup, Some(Popup::Form(_))));
    h.keys("<Tab>shipped");
    h.console.app.handle_key(alt('y'));
    let screen = h.screen();
    assert!(screen.contains("the ably messages_publish form as filled"), "{screen}");
    h.keys("c");
    assert!(matches!(h.console.app.popup, Some(Popup::Form(_))), "the form comes back");
    let text = h.console.app.clipboard.take().expect("curl");
    assert!(text.starts_with("curl -X POST 'http://127.0.0.1:"), "{text}");
    assert!(text.contains(r#""name":"shipped""#), "{text}");
    // Nothing was sent.
    assert_eq!(h.console.app.executor.active_count(), 0);
}

#[tokio::test]
async fn ably_stats_are_charted_beside_the_json() {
    let mut h = Harness::new().await;
    let screen = h.screen();
    assert!(!screen.contains("[ ] series"), "channels are no time series:\n{screen}");
    h.browse("messages").await;
    assert!(!h.screen().contains("[ ] series"), "nor messages (their only number is a constant):\n{}", h.screen());
    h.browse("stats").await;
    let screen = h.screen();
    assert!(screen.contains("entries.messages.all.all.count 1/"), "{screen}");
    assert!(screen.contains("intervalId"), "{screen}");
    assert!(screen.contains("[ ] series · C hides"), "{screen}");
    h.keys("]");
    let screen = h.screen();
    let second = h.console.app.chart().and_then(|c| c.series()).expect("a series").name.clone();
    assert!(screen.contains(&format!("{second} 2/")), "{screen}");
    assert!(screen.contains(&format!("chart: {second}")), "{screen}");
    // Refreshed, the chosen series stays.
    h.keys("r");
    h.settle().await;
    assert!(h.screen().contains(&format!("{second} 2/")), "{}", h.screen());
    h.keys("C");
    let screen = h.screen();
    assert!(!screen.contains("[ ] series") && screen.contains("charts hidden"), "{screen}");
    h.keys("C");
    assert!(h.screen().contains("[ ] series"));
    h.browse("channels").await;
    assert!(!h.screen().contains("[ ] series"), "{}", h.screen());
}

#[tokio::test]
async fn the_jq_filter_runs_over_an_ably_messages_list_and_stays_with_it() {
    let mut h = Harness::new().await;
    h.browse("messages").await;
    h.keys("l|");
    assert_eq!(h.console.app.focus, Focus::Inspector);
    h.keys("[.[] | .name] | unique");
    assert!(h.screen().contains("| [.[] | .name] | unique "), "{}", h.screen());
    h.keys("<Enter>");
    let screen = h.screen();
    assert!(screen.contains("messages_list | [.[] | .name] | unique"), "{screen}");
    assert!(!screen.contains("results"), "one output is itself: {screen}");
    // A refresh keeps the filter on this view.
    h.keys("r");
    h.settle().await;
    assert!(h.screen().contains("messages_list | [.[] | .name] | unique"), "{}", h.screen());
    h.keys("|");
    h.keys(&"<BS>".repeat(30));
    h.keys(".[].id<Enter>");
    let screen = h.screen();
    assert!(screen.contains("| .[].id · "), "{screen}");
    assert!(screen.contains(" results"), "{screen}");
}

#[tokio::test]
async fn ctrl_e_asks_the_event_loop_for_the_editor_and_the_text_comes_back() {
    let mut h = Harness::new().await;
    h.keys(":push_publish<Enter>");
    h.paste("{\"clientId\": \"a\"}");
    h.keys("<C-e>");
    let request = h.console.app.pending_editor.take().expect("an editor request for the loop");
    assert_eq!(request.field, "recipient");
    assert_eq!(request.text, "{\"clientId\": \"a\"}");
    h.console.app.on_edited(&request, Ok("{\"clientId\": \"ops\"}\n".into()));
    let Some(Popup::Form(form)) = h.console.app.popup.as_ref() else { panic!("the form stays open") };
    assert_eq!(form.values()["recipient"], "{\"clientId\": \"ops\"}");
    assert!(h.screen().contains("recipient edited in the editor"), "{}", h.screen());
    h.console.app.on_edited(&request, Err("the editor `vi` failed (exit status: 1)".into()));
    let screen = h.screen();
    assert!(screen.contains("recipient kept its text"), "{screen}");
    assert!(screen.contains("the editor `vi` failed (exit status: 1); recipient keeps its text"), "{screen}");
}

/// A filter's result wakes the console: it is shown when it is ready, not at the next tick
/// (the event loop waited up to 500 ms for one), and `running…` shows until then.
#[tokio::test]
async fn a_filters_result_wakes_the_console_without_waiting_for_a_tick() {
    let mut h = Harness::new().await;
    h.browse("messages").await;
    h.keys("l|");
    h.type_text("length");
    h.keys("<Enter>");
    assert!(h.console.app.tab().inspector.is_filtering());
    // The loop's next wake-up: the filter's own report, with no tick in between.
    let report = tokio::time::timeout(std::time::Duration::from_secs(30), h.console.background.recv())
        .await
        .expect("the filter reports")
        .expect("the channel is open");
    assert!(matches!(report, opsdeck::tui::app::Background::Filtered), "{report:?}");
    h.console.app.on_background(report);
    assert!(!h.console.app.tab().inspector.is_filtering(), "its result is in");
    assert!(h.screen().contains("messages_list | length"), "{}", h.screen());
}
