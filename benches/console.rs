//! Console benchmarks (issue 2): (a) one browser frame over many rows, (c) calls through the
//! task pool against the in-process simulator. Run: `cargo bench --bench console`.

#![allow(clippy::unwrap_used, reason = "a test panics on failure")]

use divan::Bencher;
use opsdeck::catalog::Service;
use opsdeck::client::{self, Executor, HttpSettings, Values};
use opsdeck::config::sandbox_target;
use opsdeck::sandbox;
use opsdeck::tui::components::browser::Browser;
use opsdeck::tui::theme::Theme;
use ratatui::backend::TestBackend;
use ratatui::Terminal;
use serde_json::json;

fn main() {
    divan::main();
}

/// One full frame of the browser pane at 200x50; the row count must not matter.
#[divan::bench(args = [1_000, 100_000])]
fn browser_frame(bencher: Bencher, rows: usize) {
    let mut browser = Browser::default();
    browser.title = "messages".into();
    browser.set_records(
        (0..rows)
            .map(|i| json!({"id": format!("msg:{i}"), "name": "order.created", "clientId": "checkout", "data": format!("{{\"order\":{i}}}"), "timestamp": 1_700_000_000_000u64 + i as u64}))
            .collect(),
        Some("id"),
    );
    let theme = Theme::dark();
    let mut terminal = Terminal::new(TestBackend::new(200, 50)).unwrap();
    bencher.bench_local(|| {
        terminal.draw(|f| browser.render(f, f.area(), &theme, true)).unwrap();
    });
}

/// 1,000 calls through the pool (8 at once) against the Ably simulator; calls/s = 1000 / time.
#[divan::bench(sample_count = 20)]
fn task_pool_1000_calls(bencher: Bencher) {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let sandbox = runtime.block_on(sandbox::start(0, 1)).unwrap();
    let target = sandbox_target(Service::Ably, sandbox.base_url(Service::Ably));
    let op = Service::Ably.operation("channels_get").unwrap();
    let values: Values = [("channelId".to_owned(), "chat:lobby".to_owned())].into();
    let request = client::build(op, &values, None, &target).unwrap();
    bencher.bench_local(|| {
        runtime.block_on(async {
            let settings = HttpSettings::default();
            let (sender, mut events) = tokio::sync::mpsc::unbounded_channel();
            let mut executor = Executor::new(client::http_client(&settings).unwrap(), settings, 8, sender);
            for _ in 0..1000 {
                executor.submit("bench", request.clone(), target.credentials.clone(), None);
            }
            let mut done = 0;
            while done < 1000 {
                let event = events.recv().await.unwrap();
                if let Some(delivered) = executor.accept(event) {
                    assert!(delivered.result.is_ok());
                    done += 1;
                }
            }
        });
    });
    sandbox.shutdown();
}
