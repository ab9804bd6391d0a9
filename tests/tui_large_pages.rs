//! Large list pages in the console: a page bigger than any table used to take is a table with
//! every row counted, filterable and scrollable; while a big body is indexed off the UI thread
//! the keys are answered, the status line shows progress, and cancelling drops the work.

#![allow(clippy::unwrap_used, reason = "tests")]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use bytes::Bytes;

use opsdeck::cli::GlobalArgs;
use opsdeck::tui::app::{Focus, Popup};
use opsdeck::tui::harness::Harness;

/// An Ably channel list of `count` records of about `size / count` bytes each.
fn page(count: usize, size: usize) -> Bytes {
    let pad = "x".repeat((size / count).saturating_sub(120));
    let mut text = String::with_capacity(size + 1024);
    text.push('[');
    for n in 0..count {
        if n > 0 {
            text.push(',');
        }
        text.push_str(&format!(
            r#"{{"channelId":"ch-{n:06}","status":{{"isActive":{}}},"created":{},"note":"{pad}"}}"#,
            n % 3 == 0,
            1_700_000_000_000_u64 + n as u64
        ));
    }
    text.push(']');
    Bytes::from(text)
}

/// Serves `pages` in turn to the requests that come (the last one from then on).
async fn server(pages: Vec<Bytes>) -> String {
    let asked = Arc::new(AtomicUsize::new(0));
    let router = Router::new().fallback(move || {
        let n = asked.fetch_add(1, Ordering::SeqCst);
        let body = pages[n.min(pages.len() - 1)].clone();
        async move { ([(axum::http::header::CONTENT_TYPE, "application/json")], body) }
    });
    opsdeck::sandbox::serve_loopback(router).await.unwrap()
}

/// A console whose Ably tab lists channels from `url`, its first page shown.
async fn console(url: String) -> Harness {
    let mut h = Harness::with_env(GlobalArgs::default(), &move |name| match name {
        "OPSDECK_ABLY_URL" => Some(url.clone()),
        _ => None,
    })
    .await;
    h.resize(160, 30);
    h.console.app.focus = Focus::Browser;
    h
}

/// Applies call results until a body is being indexed.
async fn until_indexing(h: &mut Harness) {
    while h.console.app.indexing.is_empty() {
        let event = tokio::time::timeout(Duration::from_secs(20), h.console.events.recv()).await;
        h.console.app.on_call_event(event.expect("the page arrives").expect("the pool runs"));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_over_the_old_32_mb_limit_is_a_table_with_every_row_counted() {
    let body = page(26_000, 33 * 1024 * 1024);
    assert!(body.len() > 32 * 1024 * 1024);
    let mut h = console(server(vec![body]).await).await;
    let screen = h.screen();
    assert!(screen.contains("page 1 · 26,000 rows"), "{screen}");
    assert!(screen.contains("ch-000000") && screen.contains("2023-11-14 22:13:20"), "{screen}");
    h.keys("G");
    assert!(h.screen().contains("ch-025999"), "the last row scrolls into view");
    h.keys("g/ch-02599");
    let screen = h.screen();
    assert!(screen.contains("/ch-02599") && screen.contains("10 of 26000"), "{screen}");
    assert_eq!(h.console.app.tab().browser.selected_record().unwrap()["channelId"], "ch-025990");
    // The inspector shows the same page, from the same index.
    assert!(screen.contains(" MB · application/json · ") && screen.contains(" nodes"), "{screen}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keys_are_answered_while_a_page_is_indexed_and_cancelling_drops_it() {
    let small = page(2, 400);
    let big = page(20_000, 24 * 1024 * 1024);
    let mut h = console(server(vec![small, big]).await).await;
    assert_eq!(h.console.app.tab().browser.row_count(), 2, "{}", h.screen());

    h.keys("r");
    until_indexing(&mut h).await;
    let screen = h.screen();
    assert!(screen.contains("⟳ indexing") && screen.contains("MB") && screen.contains("Esc cancels"), "{screen}");
    assert!(screen.contains("indexing channels_list…"), "the browser says what it waits for: {screen}");
    // Help opens and closes, and another tab comes and goes, while the work goes on.
    h.keys("?");
    assert!(matches!(h.console.app.popup, Some(Popup::Help)), "{}", h.screen());
    h.keys("<Esc>");
    assert!(h.console.app.popup.is_none());
    h.keys("3");
    assert_eq!(h.console.app.tab().service.name(), "avatax");
    h.keys("1");
    assert!(!h.console.app.indexing.is_empty(), "still indexing while keys are answered");

    // Esc in the browser drops the work; the rows shown stay, and what arrives later is ignored.
    h.console.app.focus = Focus::Browser;
    h.keys("<Esc>");
    assert!(h.console.app.indexing.is_empty());
    assert!(h.screen().contains("cancelled indexing the response"), "{}", h.screen());
    h.settle().await;
    let screen = h.screen();
    assert_eq!(h.console.app.tab().browser.row_count(), 2, "{screen}");
    assert!(screen.contains("page 1 · 2 rows"), "{screen}");

    // The cancel action (ctrl-x) drops it too; asked again, the page arrives whole.
    h.keys("r");
    until_indexing(&mut h).await;
    h.keys("<C-x>");
    assert!(h.console.app.indexing.is_empty());
    assert!(h.screen().contains("and the indexing of 1 response"), "{}", h.screen());
    h.settle().await;
    assert_eq!(h.console.app.tab().browser.row_count(), 2);
    h.keys("r");
    h.settle().await;
    assert!(h.screen().contains("page 1 · 20,000 rows"), "{}", h.screen());
}

#[tokio::test]
async fn a_big_page_that_is_not_json_says_where_it_breaks() {
    let mut broken = page(2_000, 2 * 1024 * 1024).to_vec();
    let middle = broken.len() / 2;
    broken[middle] = b'\x01';
    let mut h = console(server(vec![Bytes::from(broken)]).await).await;
    let screen = h.screen();
    assert!(screen.contains("no table: the response is not JSON"), "{screen}");
    assert!(screen.contains("line 1, column"), "{screen}");
}
