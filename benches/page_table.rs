//! A list page as a person sees it: a loopback server sends the page, the console is driven by
//! keys, and the time runs from the key to the drawn table. Also the peak memory a page costs,
//! how fast a key is answered while a 200 MB body is being indexed, and the row filter over
//! 40,000 rows. Run with `cargo bench --bench page_table` (medians; `PAGE_RUNS` sets the runs;
//! `PAGE_TABLES_ONLY=1` measures only the two pages).
//!
//! The console is the real one (`tui::harness`: the app, its task pool, its indexing pool and a
//! 200x50 test terminal); only the terminal's own I/O is left out.

#![allow(clippy::unwrap_used, reason = "a benchmark stops on failure")]

#[path = "common/orders.rs"]
mod orders;

use std::io::BufRead as _;
use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use opsdeck::cli::GlobalArgs;
use opsdeck::tui::harness::Harness;
use peak_alloc::PeakAlloc;

/// Counts every allocation, so a page's peak memory is measured exactly, whatever the
/// allocator keeps for reuse (resident memory would not show a page that fits in freed space).
#[global_allocator]
static HEAP: PeakAlloc = PeakAlloc;

const MB: usize = 1024 * 1024;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    if let [_, flag, records, size] = args.as_slice() {
        if flag == "--serve-page" {
            return runtime.block_on(serve(records.parse().unwrap(), size.parse().unwrap()));
        }
    }
    runtime.block_on(async {
        let runs: usize = std::env::var("PAGE_RUNS").ok().and_then(|n| n.parse().ok()).unwrap_or(9);
        let cases = [("5 MB page", 3_900, 5 * MB), ("50 MB page", 40_000, 50 * MB)];
        // Only the two pages (`benches/page_compare.sh` compares them between two trees).
        let tables_only = std::env::var_os("PAGE_TABLES_ONLY").is_some();
        for (name, records, size) in cases {
            page_case(name, records, size, runs, tables_only).await;
        }
        if !tables_only {
            keys_while_indexing(200 * MB).await;
        }
    });
}

/// The server: a process of its own, so its memory and its copy of the page are not counted
/// as the console's. Answers every GET with the page, and prints its base URL.
async fn serve(records: usize, size: usize) {
    let body = orders::page(records, size);
    let app = axum::Router::new().fallback(move || {
        let body = body.clone();
        async move { ([(axum::http::header::CONTENT_TYPE, "application/json")], body) }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    println!("http://{}", listener.local_addr().unwrap());
    // Ends with the benchmark, which closes our stdin.
    tokio::spawn(async move { axum::serve(listener, app).await });
    let _ = tokio::task::spawn_blocking(|| std::io::stdin().read_line(&mut String::new())).await;
}

/// Starts the page server process; returns it (killed when dropped) and its base URL.
fn server(records: usize, size: usize) -> (Server, String) {
    let mut child = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--serve-page", &records.to_string(), &size.to_string()])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut url = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap()).read_line(&mut url).unwrap();
    (Server(child), url.trim().to_owned())
}

struct Server(std::process::Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A console whose Ably tab lists from `url`, with its first page loaded, at 200x50.
async fn console(url: &str) -> Harness {
    let url = url.to_owned();
    let env = move |name: &str| match name {
        "OPSDECK_ABLY_URL" => Some(url.clone()),
        "COLORTERM" => Some("truecolor".to_owned()),
        _ => None,
    };
    let mut h = Harness::with_env(GlobalArgs::default(), &env).await;
    h.resize(200, 50);
    h.screen();
    h
}

/// `40,000`, as the browser's title writes a count. Written here, not imported, so this bench
/// builds against older trees too (`benches/page_compare.sh` runs it on a baseline).
fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    match values.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => values[n / 2],
        n => (values[n / 2 - 1] + values[n / 2]) / 2.0,
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// `r` on a page of `records` records, `size` bytes: key to table drawn, the part of it that was
/// the transfer, and the peak memory the page added.
async fn page_case(name: &str, records: usize, size: usize, runs: usize, tables_only: bool) {
    let (_server, url) = server(records, size);
    let mut h = console(&url).await;
    assert_eq!(h.console.app.tab().browser.row_count(), records, "{}", h.screen());
    let len = h.console.app.tab().page.as_ref().unwrap().response.body.len();
    let (mut total, mut beyond, mut peaks) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..runs {
        // A console showing nothing yet, so the peak is what this page costs.
        let active = h.console.app.active;
        let tab = &mut h.console.app.tabs[active];
        tab.page = None;
        tab.browser.clear();
        tab.inspector.clear();
        h.screen();
        let before = HEAP.current_usage();
        HEAP.reset_peak_usage();
        let started = Instant::now();
        h.keys("r");
        h.settle().await;
        let screen = h.screen();
        let elapsed = started.elapsed();
        let peak = HEAP.peak_usage();
        let tab = h.console.app.tab();
        assert_eq!(tab.browser.row_count(), records, "{screen}");
        assert!(screen.contains(&format!("page 1 · {} rows", thousands(records))), "{screen}");
        let transfer = tab.page.as_ref().unwrap().response.duration;
        total.push(ms(elapsed));
        beyond.push(ms(elapsed.saturating_sub(transfer)));
        peaks.push(peak.saturating_sub(before) as f64 / len as f64);
    }
    println!(
        "{name} ({records} records, {:.1} MB): key to table drawn {:.1} ms, of which beyond the transfer {:.1} ms; \
         peak heap {:.2}x the body (medians of {runs})",
        len as f64 / MB as f64,
        median(total),
        median(beyond),
        median(peaks),
    );
    if records >= 40_000 && !tables_only {
        filter_keystrokes(&mut h);
    }
}

/// `/` then a needle typed one key at a time over every row: each key to its frame.
fn filter_keystrokes(h: &mut Harness) {
    let rows = h.console.app.tab().browser.row_count();
    h.keys("/");
    let mut times = Vec::new();
    for c in "39999".chars() {
        let started = Instant::now();
        h.console.app.handle_key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
        h.screen();
        times.push(ms(started.elapsed()));
    }
    let first = times[0];
    let shown = h.screen();
    assert!(shown.contains(" of 40000") && !shown.contains("no row matches"), "{shown}");
    h.keys("<Esc>");
    println!(
        "filter over {rows} rows: {:.2} ms a keystroke to its frame (median of {}; the first, which lowers the \
         rows' text once, {first:.2} ms)",
        median(times.clone()),
        times.len()
    );
}

/// A key pressed while a `size` page is being indexed: from the key to its frame.
async fn keys_while_indexing(size: usize) {
    let records = size / 1300;
    let (_server, url) = server(records, size);
    let mut h = console(&url).await;
    let len = h.console.app.tab().page.as_ref().unwrap().response.body.len();
    let mut times = Vec::new();
    let mut indexing_took = Vec::new();
    for _ in 0..3 {
        let started = Instant::now();
        h.keys("r");
        // Wait for the body to arrive and its indexing to start.
        while h.console.app.indexing.is_empty() {
            let event = tokio::time::timeout(Duration::from_secs(30), h.console.events.recv()).await;
            if let Ok(Some(event)) = event {
                h.console.app.on_call_event(event);
            }
        }
        // Keys a person presses while waiting: help, close it, another tab and back.
        for keys in ["?", "<Esc>", "<Tab>", "<S-Tab>"] {
            if h.console.app.indexing.is_empty() {
                break;
            }
            let pressed = Instant::now();
            h.keys(keys);
            let screen = h.screen();
            times.push(ms(pressed.elapsed()));
            assert!(screen.contains("indexing") || keys != "<S-Tab>", "{screen}");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        h.settle().await;
        indexing_took.push(ms(started.elapsed()));
        assert_eq!(h.console.app.tab().browser.row_count(), records);
    }
    println!(
        "while a {:.0} MB page ({records} records) is indexed: key to frame {:.2} ms (median of {}, max {:.2} ms); \
         key to its table {:.0} ms",
        len as f64 / MB as f64,
        median(times.clone()),
        times.len(),
        times.iter().copied().fold(0.0, f64::max),
        median(indexing_took),
    );
}
