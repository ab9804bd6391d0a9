//! A jq filter typed in the console runs off the UI thread, in a worker with a time and memory
//! budget (issue 19): a filter that never ends leaves the keys working and `Esc` stops it; one
//! that recurses forever or fills the memory ends its worker, not the console.
#![allow(clippy::unwrap_used, reason = "tests")]

use std::time::{Duration, Instant};

use opsdeck::tui::app::Focus;
use opsdeck::tui::harness::Harness;

#[tokio::test]
async fn runaway_filters_end_their_worker_not_the_console() {
    // The console's filters run in this built binary, as they do in the real console.
    std::env::set_var("OPSDECK_JQ_BIN", env!("CARGO_BIN_EXE_opsdeck"));
    let mut h = Harness::new().await;
    h.console.app.focus = Focus::Inspector;

    // A filter that never ends: the keys still work while it runs, and Esc stops it.
    h.keys("|");
    h.type_text("def f: f; f");
    h.keys("<Enter>");
    assert!(h.console.app.tab().inspector.is_filtering());
    h.keys("<Down><Down>");
    assert!(h.console.app.tab().inspector.is_filtering(), "still running, and the keys were answered");
    h.keys("<Esc>");
    assert!(!h.console.app.tab().inspector.is_filtering(), "Esc cancelled it");
    assert!(h.screen().contains("jq: cancelled"), "{}", h.screen());
    assert_eq!(h.console.app.focus, Focus::Inspector, "the first Esc stops the filter only");

    // Endless recursion overflows the worker's stack, not the console's.
    // Each meets only its own limit on a busy machine too (a doubling string passes 1 GiB in
    // under a second, long before the time budget).
    for (code, said) in [
        ("def f: [f]; f", "recursed too deeply"),
        (r#"reduce range(40) as $i ("x"; . + .)"#, "needed more than the 1024 MB it may use"),
    ] {
        h.keys("|<C-u>");
        h.type_text(code);
        h.keys("<Enter>");
        let started = Instant::now();
        while h.console.app.tab().inspector.is_filtering() && started.elapsed() < Duration::from_secs(25) {
            h.console.app.on_tick(Instant::now());
            std::thread::sleep(Duration::from_millis(20));
        }
        let screen = h.screen();
        assert!(screen.contains(said), "{code}: {screen}");
    }
    // The console carries on: a good filter still runs.
    h.keys("|<C-u>");
    h.type_text("length");
    h.keys("<Enter>");
    assert!(h.screen().contains("channels_list | length"), "{}", h.screen());
}

#[test]
fn a_filter_past_its_time_is_stopped_and_its_results_are_capped() {
    use opsdeck::jq::{run_budgeted, Budget, Runner};
    use std::sync::atomic::AtomicBool;
    let worker = Runner::Worker(env!("CARGO_BIN_EXE_opsdeck").into());
    let quick = Budget { time: Duration::from_secs(1), ..Budget::DEFAULT };
    let started = Instant::now();
    let error = run_budgeted(&worker, "def f: f; f", b"1", quick, &AtomicBool::new(false)).unwrap_err();
    assert!(error.contains("stopped after 1 s"), "{error}");
    assert!(started.elapsed() < Duration::from_secs(10));
    let small = Budget { output: 1000, ..Budget::DEFAULT };
    let error = run_budgeted(&worker, "range(100000)", b"null", small, &AtomicBool::new(false)).unwrap_err();
    assert!(error.contains("the results are over"), "{error}");
    let fine = run_budgeted(&worker, ".[] | .id", br#"[{"id":"a"},{"id":2}]"#, quick, &AtomicBool::new(false));
    assert_eq!(fine.unwrap(), vec![serde_json::json!("a"), serde_json::json!(2)]);
    let error = run_budgeted(&worker, ".a.b", b"[1]", quick, &AtomicBool::new(false)).unwrap_err();
    assert!(error.starts_with("jq: cannot index"), "{error}");
}
