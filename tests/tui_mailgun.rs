//! The console's Mailgun tab driven by keys against the embedded simulator and its seed
//! (mailgun-contract "Seed"): the DNS view of a domain before and after its records appear and
//! are verified, composing and sending a message and seeing it accepted and stored, the event
//! log tailed until a `delivered` row arrives, stats as a chart, and suppressions, lists and
//! routes reached from their rows with sensible values filled in.
#![allow(clippy::unwrap_used, reason = "tests")]

use std::time::{Duration, Instant};

use opsdeck::catalog::Service;
use opsdeck::tui::app::{Focus, Popup};
use opsdeck::tui::harness::Harness;

/// The Mailgun tab with its domains listed (the first resource), the browser focused.
async fn mailgun() -> Harness {
    let mut h = Harness::new().await;
    h.keys("6");
    h.settle().await;
    assert_eq!(h.console.app.tab().service, Service::Mailgun);
    h.console.app.focus = Focus::Browser;
    h
}

/// Moves the browser's cursor to the first row whose record holds `text`, as a person would
/// with `g` and `j` (each step remembers the selection for forms, as a click would).
fn select_row(h: &mut Harness, text: &str) {
    h.console.app.focus = Focus::Browser;
    let records = h.console.app.tab().browser.records().to_vec();
    let Some(index) = records.iter().position(|r| r.to_string().contains(text)) else {
        panic!("a row with {text}:\n{}", h.screen())
    };
    h.keys(&format!("g{}", "j".repeat(index)));
    let selected = h.console.app.tab().browser.selected_record();
    assert!(selected.is_some_and(|r| r.to_string().contains(text)), "{text} selected:\n{}", h.screen());
}

fn popup_title(h: &Harness) -> String {
    match &h.console.app.popup {
        Some(Popup::Detail(detail)) => detail.title.clone(),
        Some(Popup::Form(form)) => format!("form {}", form.op.name),
        Some(Popup::Confirm(confirm)) => format!("confirm {}", confirm.op.name),
        Some(_) => "another popup".into(),
        None => "no popup".into(),
    }
}

/// Opens `op`'s form from the palette, sets `values` over what it was filled with, sends it.
async fn send(h: &mut Harness, op: &str, values: &[(&str, &str)]) {
    h.keys(&format!(":mailgun {op}<Enter>"));
    let Some(Popup::Form(form)) = h.console.app.popup.as_mut() else { panic!("{op} form:\n{}", h.screen()) };
    assert_eq!(form.op.name, op);
    for (name, value) in values {
        form.set_value(name, value);
    }
    h.keys("<C-s>");
    confirm_if_asked(h);
    h.settle().await;
}

/// Sending mail asks first, as a delete does; in the sandbox `y` confirms.
fn confirm_if_asked(h: &mut Harness) {
    if let Some(Popup::Confirm(confirm)) = &h.console.app.popup {
        assert_eq!(confirm.op.name, "messages_send", "only the send asks here");
        assert!(h.screen().contains("SANDBOX"), "{}", h.screen());
        h.keys("y");
    }
}

#[tokio::test]
async fn dns_view_of_a_new_domain_shows_missing_records_then_valid_ones_after_verify() {
    let mut h = mailgun().await;
    select_row(&mut h, "news.example.com");
    h.keys("<Enter>");
    h.settle().await;
    assert_eq!(popup_title(&h), "domain news.example.com · unverified", "{}", h.screen());
    let screen = h.screen();
    for text in ["sending DNS records", "receiving DNS records", "MX", "mxa.mailgun.org", "v verify"] {
        assert!(screen.contains(text), "{text} in:\n{screen}");
    }
    assert!(!screen.contains("✓ valid"), "nothing is published yet:\n{screen}");

    // v verifies: the records are not in the simulated DNS yet, so they are missing.
    h.keys("v");
    h.settle().await;
    assert_eq!(popup_title(&h), "domain news.example.com · unverified");
    let screen = h.screen();
    assert!(screen.contains("✗ missing"), "{screen}");
    assert!(screen.contains("missing from DNS"), "what to do is said:\n{screen}");

    // One DNS delay later the records are published; verifying again activates the domain,
    // and the view open is replaced in place.
    h.console.sandbox.clock().advance(61_000);
    h.keys("v");
    h.settle().await;
    assert_eq!(popup_title(&h), "domain news.example.com · active", "{}", h.screen());
    let screen = h.screen();
    assert!(screen.contains("✓ valid"), "{screen}");
    assert!(!screen.contains("✗ missing"), "{screen}");
    // b brings the last view back after closing it.
    h.keys("<Esc>");
    assert!(h.console.app.popup.is_none());
    h.keys("b");
    assert_eq!(popup_title(&h), "domain news.example.com · active");
}

#[tokio::test]
async fn compose_send_and_see_the_message_accepted_and_stored() {
    let mut h = mailgun().await;
    select_row(&mut h, "mg.example.com");
    h.keys(":compose email<Enter>");
    let Some(Popup::Form(form)) = h.console.app.popup.as_mut() else { panic!("form:\n{}", h.screen()) };
    assert_eq!(form.op.name, "messages_send");
    let values = form.values();
    assert_eq!(values.get("domain").map(String::as_str), Some("mg.example.com"), "the domain in view");
    assert_eq!(values.get("from").map(String::as_str), Some("postmaster@mg.example.com"));
    form.set_value("to", "compose-check@example.com");
    form.set_value("subject", "Console check");
    form.set_value("text", "Sent from the console.");
    h.keys("<C-s>");
    assert_eq!(popup_title(&h), "confirm messages_send", "sending mail asks first:\n{}", h.screen());
    let screen = h.screen();
    assert!(screen.contains("to=compose-check@example.com"), "{screen}");
    assert!(
        screen.contains("This sends mail: once sent, it is sent") && !screen.contains("cannot be undone"),
        "it says what it does: {screen}"
    );
    confirm_if_asked(&mut h);
    h.settle().await;
    let screen = h.screen();
    assert!(screen.contains("messages_send: 200"), "{screen}");
    assert!(screen.contains("Queued. Thank you."), "{screen}");

    // The event log has it accepted.
    h.browse("events").await;
    select_row(&mut h, "compose-check@example.com");
    let screen = h.screen();
    assert!(screen.contains("accepted") && screen.contains("Console check"), "{screen}");
    // From its event, the stored message: headers, text, attachments.
    h.keys(":mailgun messages_get<Enter>");
    let Some(Popup::Form(form)) = h.console.app.popup.as_ref() else { panic!("form:\n{}", h.screen()) };
    assert!(form.values().get("storage_key").is_some_and(|k| !k.is_empty()), "the event's storage key");
    h.keys("<C-s>");
    h.settle().await;
    assert_eq!(popup_title(&h), "message: Console check", "{}", h.screen());
    let screen = h.screen();
    assert!(screen.contains("Sent from the console."), "{screen}");
    assert!(screen.contains("attachments (0)") && screen.contains("headers"), "{screen}");
}

#[tokio::test]
async fn event_tail_shows_a_delivered_row_appear_after_the_clock_advances() {
    let mut h = mailgun().await;
    select_row(&mut h, "mg.example.com");
    // The list's own filter: only this recipient's events (none yet).
    send(&mut h, "events_list", &[("recipient", "tail-check@example.com")]).await;
    assert_eq!(h.console.app.tab().browser.row_count(), 0, "{}", h.screen());
    assert!(h.screen().contains("only recipient=tail-check@example.com"), "{}", h.screen());
    h.keys("T");
    assert!(h.screen().contains("● tail 2 s"), "{}", h.screen());

    send(
        &mut h,
        "messages_send",
        &[
            ("domain", "mg.example.com"),
            ("from", "postmaster@mg.example.com"),
            ("to", "tail-check@example.com"),
            ("subject", "Tail check"),
            ("text", "hello"),
        ],
    )
    .await;
    assert!(h.screen().contains("messages_send: 200"), "{}", h.screen());
    assert!(h.console.app.tab().tail.is_some(), "sending does not stop the tail");

    let mut at = Instant::now();
    let mut poll = |h: &mut Harness| {
        at += Duration::from_secs(3);
        h.console.app.on_tick(at);
    };
    poll(&mut h);
    h.settle().await;
    let records = h.console.app.tab().browser.records().to_vec();
    assert!(records.iter().any(|r| r["event"] == "accepted"), "accepted arrives first:\n{}", h.screen());
    assert!(records.iter().all(|r| r["recipient"] == "tail-check@example.com"), "the filter holds");

    // Delivery follows within seconds of sandbox time.
    h.console.sandbox.clock().advance(10_000);
    poll(&mut h);
    h.settle().await;
    let found = h.console.app.tab().browser.records().iter().position(|r| r["event"] == "delivered");
    let Some(delivered) = found else { panic!("a delivered row:\n{}", h.screen()) };
    let browser = &h.console.app.tab().browser;
    assert!(browser.is_new(delivered), "marked as new");
    assert!(delivered < browser.records().iter().position(|r| r["event"] == "accepted").unwrap(), "newest on top");
    let screen = h.screen();
    assert!(screen.lines().any(|l| l.contains("● ") && l.contains("delivered")), "{screen}");
    assert!(screen.contains("new"), "{screen}");
    h.keys("T");
    assert!(h.console.app.tab().tail.is_none());
}

#[tokio::test]
async fn stats_total_is_charted() {
    let mut h = mailgun().await;
    select_row(&mut h, "mg.example.com");
    send(&mut h, "stats_total", &[("event", "accepted,delivered,failed,opened"), ("resolution", "day")]).await;
    assert_eq!(popup_title(&h), "stats by day", "{}", h.screen());
    assert!(h.screen().contains("c chart"), "{}", h.screen());
    h.keys("c");
    assert!(h.console.app.popup.is_none());
    let screen = h.screen();
    assert!(screen.contains("accepted.total"), "the chart under the list:\n{screen}");
    h.keys("]");
    assert!(h.screen().contains("delivered.total"), "{}", h.screen());
}

#[tokio::test]
async fn suppressions_lists_routes_and_webhooks_are_reached_from_their_rows() {
    let mut h = mailgun().await;
    select_row(&mut h, "mg.example.com");
    h.browse("bounces").await;
    select_row(&mut h, "bounced@example.net");
    assert!(h.screen().contains("No such mailbox"), "{}", h.screen());
    // Removing the selected bounce: address and domain filled in, and asked first.
    h.keys(":mailgun bounces_delete<Enter>");
    let Some(Popup::Form(form)) = h.console.app.popup.as_ref() else { panic!("form:\n{}", h.screen()) };
    let values = form.values();
    assert_eq!(values.get("address").map(String::as_str), Some("bounced@example.net"));
    assert_eq!(values.get("domain").map(String::as_str), Some("mg.example.com"));
    h.keys("<C-s>");
    assert_eq!(popup_title(&h), "confirm bounces_delete");
    h.keys("y");
    h.settle().await;
    assert!(h.screen().contains("bounces_delete: 200"), "{}", h.screen());
    assert!(
        !h.console.app.tab().browser.records().iter().any(|r| r["address"] == "bounced@example.net"),
        "the list in view is reloaded without it"
    );
    // Clearing all of them is asked first too.
    h.keys(":mailgun bounces_clear<Enter><C-s>");
    assert_eq!(popup_title(&h), "confirm bounces_clear");
    h.keys("<Esc>");

    // A mailing list opens its members.
    h.browse("mailing lists").await;
    select_row(&mut h, "developers@mg.example.com");
    h.keys("<Enter>");
    h.settle().await;
    let screen = h.screen();
    assert!(screen.contains("bob@example.com") && screen.contains("carol@example.com"), "{screen}");
    assert_eq!(h.console.app.tab().page.as_ref().unwrap().op.name, "mailing_lists_members_list");
    h.keys(":mailgun mailing_lists_members_add<Enter>");
    let Some(Popup::Form(form)) = h.console.app.popup.as_ref() else { panic!("form") };
    assert_eq!(form.values().get("list_address").map(String::as_str), Some("developers@mg.example.com"));
    h.keys("<Esc>");

    // Routes list, and webhooks as a table of name → URLs.
    h.browse("routes").await;
    assert!(h.screen().contains("catch_all()"), "{}", h.screen());
    send(
        &mut h,
        "webhooks_create",
        &[("domain", "mg.example.com"), ("id", "delivered"), ("url", "http://127.0.0.1:9/hook")],
    )
    .await;
    send(&mut h, "webhooks_list", &[("domain", "mg.example.com")]).await;
    assert!(popup_title(&h).starts_with("webhooks ("), "{}", h.screen());
    assert!(h.screen().contains("http://127.0.0.1:9/hook"), "{}", h.screen());

    // The webhooks resource is a list too: its answer keys webhooks by name, and each is a row
    // whose name fills the forms of the others.
    h.keys("<Esc>");
    h.browse("webhooks").await;
    let screen = h.screen();
    assert!(!screen.contains("has no list"), "{screen}");
    assert!(screen.contains("webhooks of mg.example.com"), "{screen}");
    select_row(&mut h, "delivered");
    assert!(h.screen().contains("http://127.0.0.1:9/hook"), "{}", h.screen());
    h.keys(":mailgun webhooks_delete<Enter>");
    let Some(Popup::Form(form)) = h.console.app.popup.as_ref() else { panic!("form") };
    assert_eq!(form.values().get("id").map(String::as_str), Some("delivered"));
}

/// Enter on a resource with no list whose read needs what only a form asks (AvaTax addresses,
/// Mailgun validations) opens nothing and sends nothing; one whose read asks nothing (AvaTax
/// ping, Ably time) is sent at once.
#[tokio::test]
async fn enter_on_a_resource_without_a_list_sends_only_a_read_that_asks_nothing() {
    let mut h = Harness::new().await;
    for (tab, resource, sends) in
        [("1", "time", true), ("3", "addresses", false), ("3", "utilities", true), ("6", "validations", false)]
    {
        h.keys(tab);
        h.settle().await;
        let sent_before = h.console.app.tab().sent.clone().map(|s| s.url);
        h.browse(resource).await;
        assert!(
            !matches!(h.console.app.popup, Some(Popup::Menu(_) | Popup::Form(_))),
            "{resource}: nothing opens to catch the next keys:\n{}",
            h.screen()
        );
        let sent = h.console.app.tab().sent.clone().map(|s| s.url);
        assert_eq!(sent != sent_before, sends, "{resource}: {sent:?}");
        if !sends {
            let notice = h.console.app.tab().browser.notice.clone().unwrap_or_default().0;
            assert_eq!(notice, format!("{resource} has no list; press o for its operations"));
        }
        h.console.app.popup = None;
    }
}
