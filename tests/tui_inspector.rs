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

    // No way worked: the command is shown where it can be selected.
    h.keys("Y<Enter>");
    let text = h.console.app.clipboard.take().expect("curl");
    assert!(text.starts_with("curl -X GET 'http://127.0.0.1:"), "{text}");
    h.console.app.on_copied(text, Err("TERM is dumb or unset: no OSC 52; no clipboard_cmd in config.toml".into()));
    let screen = h.screen();
    assert!(screen.contains("could not copy: TERM is dumb"), "{screen}");
    assert!(screen.contains("command as curl (select it to copy)"), "{screen}");
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
