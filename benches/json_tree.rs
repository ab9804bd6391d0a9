//! How fast the inspector opens and moves through huge JSON responses, and what the index
//! costs in memory. Run with `cargo bench --bench json_tree`.
//!
//! The documents are deterministic arrays of order-like records (nested objects and arrays,
//! strings with escapes, numbers), minified as APIs send them: minified text has the most
//! values per byte, so it is the worst case for the index's memory.

use std::cell::RefCell;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use bytes::Bytes;
use divan::{black_box, Bencher};
use ratatui::backend::TestBackend;
use ratatui::Terminal;

use opsdeck::json_index::{JsonDoc, NodeId};
use opsdeck::tui::components::inspector::{Inspector, ResponseView};
use opsdeck::tui::json_tree::{JsonTree, Searcher};
use opsdeck::tui::theme::Theme;

const MB: usize = 1024 * 1024;

/// Lines of a 200x50 pane's body, give or take its border and summary.
const PAGE: usize = 46;

#[path = "common/orders.rs"]
mod orders;
use orders::{generate, NEEDLE};

fn main() {
    report();
    divan::main();
}

fn body(mb: usize) -> Bytes {
    static SMALL: OnceLock<Bytes> = OnceLock::new();
    static LARGE: OnceLock<Bytes> = OnceLock::new();
    let cell = if mb <= 5 { &SMALL } else { &LARGE };
    cell.get_or_init(|| generate(mb * MB)).clone()
}

fn view(body: Bytes) -> ResponseView {
    ResponseView {
        title: "list orders".into(),
        status: Some(200),
        duration: Duration::from_millis(120),
        request_line: "GET http://127.0.0.1:7701/orders?limit=100000".into(),
        headers: vec![("content-type".into(), "application/json".into())],
        body,
        content_type: Some("application/json".into()),
    }
}

/// Parses and draws one 200x50 frame, as the app does when a response arrives.
fn first_frame(body: Bytes, theme: &Theme) -> Inspector {
    let mut inspector = Inspector::new();
    inspector.show(view(body));
    if let Ok(mut terminal) = Terminal::new(TestBackend::new(200, 50)) {
        let _ = terminal.draw(|frame| inspector.render(frame, frame.area(), theme, true));
    }
    inspector
}

/// A kernel figure from /proc/self/status, in KiB (Linux only).
fn status_kib(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Peak resident memory added while `work` runs, in bytes: resets the high-water mark, runs,
/// and reads it back. `None` where the kernel does not offer this.
fn peak_growth<T>(work: impl FnOnce() -> T) -> (T, Option<u64>) {
    let reset = std::fs::write("/proc/self/clear_refs", "5").is_ok();
    let before = status_kib("VmRSS:");
    let out = work();
    let peak = status_kib("VmHWM:");
    let growth = match (reset, before, peak) {
        (true, Some(before), Some(peak)) => Some(peak.saturating_sub(before) * 1024),
        _ => None,
    };
    (out, growth)
}

fn report() {
    let body = body(50);
    let len = body.len() as f64;
    let (doc, peak) = peak_growth(|| {
        let started = Instant::now();
        let doc = JsonDoc::parse(body.clone());
        (doc, started.elapsed())
    });
    let (doc, parse_time) = doc;
    let Ok(doc) = doc else {
        eprintln!("the generated document does not parse");
        return;
    };
    let nodes = doc.node_count();
    let heap = doc.heap_bytes();
    eprintln!("50 MB document: {} bytes, {nodes} nodes, {:.1} bytes of text per node", body.len(), len / nodes as f64);
    eprintln!(
        "index: {heap} bytes ({} per node); (body + index) / body = {:.2}",
        heap / nodes.max(1),
        (len + heap as f64) / len
    );
    if let Some(peak) = peak {
        eprintln!(
            "measured peak RSS growth while parsing: {peak} bytes; (body + growth) / body = {:.2}",
            (len + peak as f64) / len
        );
    }
    eprintln!("cold parse: {parse_time:?}");
    drop(doc);

    let theme = Theme::dark();
    let started = Instant::now();
    let inspector = first_frame(body.clone(), &theme);
    eprintln!("cold first frame (parse + 200x50 draw): {:?}", started.elapsed());
    drop(inspector);

    let (value, peak) = peak_growth(|| {
        let started = Instant::now();
        let value = serde_json::from_slice::<serde_json::Value>(&body);
        (value, started.elapsed())
    });
    let (value, serde_time) = value;
    match (value.is_ok(), peak) {
        (true, Some(peak)) => eprintln!(
            "serde_json::Value for comparison: {serde_time:?}, peak RSS growth {peak} bytes; (body + growth) / body = {:.2}",
            (len + peak as f64) / len
        ),
        (true, None) => eprintln!("serde_json::Value for comparison: {serde_time:?}"),
        (false, _) => eprintln!("serde_json rejected the generated document"),
    }
    drop(value);
}

/// A tree over the `mb` document, viewed in a `PAGE`-line window.
fn tree(mb: usize) -> Option<JsonTree> {
    let mut tree = JsonTree::new(JsonDoc::parse(body(mb)).ok()?);
    black_box(tree.lines(PAGE));
    Some(tree)
}

#[divan::bench(args = [5, 50], sample_count = 20)]
fn parse(bencher: Bencher, mb: usize) {
    let body = body(mb);
    bencher.bench(|| JsonDoc::parse(black_box(body.clone())));
}

#[divan::bench(args = [5, 50], sample_count = 20)]
fn first_frame_200x50(bencher: Bencher, mb: usize) {
    let body = body(mb);
    let theme = Theme::dark();
    bencher.bench_local(|| first_frame(black_box(body.clone()), &theme));
}

#[divan::bench(args = [50], sample_count = 5, sample_size = 1)]
fn serde_value(bencher: Bencher, mb: usize) {
    let body = body(mb);
    bencher.bench(|| serde_json::from_slice::<serde_json::Value>(black_box(&body)).is_ok());
}

/// Times `action` plus the lines of the next frame, after an untimed `setup` before each call.
fn tree_action(bencher: Bencher, mb: usize, setup: fn(&mut JsonTree), action: fn(&mut JsonTree)) {
    let Some(tree) = tree(mb) else { return };
    let tree = RefCell::new(tree);
    bencher.with_inputs(|| setup(&mut tree.borrow_mut())).bench_local_values(|()| {
        let mut tree = tree.borrow_mut();
        action(&mut tree);
        tree.lines(PAGE).len()
    });
}

/// Puts the cursor in the middle of the document, deep inside a record.
fn to_middle(tree: &mut JsonTree) {
    let middle = tree.doc().node_at(tree.doc().body().len() / 2);
    tree.reveal(middle);
}

#[divan::bench(args = [5, 50], sample_size = 1, sample_count = 500)]
fn page_down(bencher: Bencher, mb: usize) {
    tree_action(
        bencher,
        mb,
        |tree| {
            if tree.cursor() == tree.last_line() {
                to_middle(tree);
            }
        },
        |tree| tree.page_down(PAGE),
    );
}

#[divan::bench(args = [5, 50], sample_size = 1, sample_count = 500)]
fn page_up(bencher: Bencher, mb: usize) {
    tree_action(
        bencher,
        mb,
        |tree| {
            if tree.cursor() == tree.top() && tree.top() == NodeId::ROOT {
                to_middle(tree);
            }
        },
        |tree| tree.page_up(PAGE),
    );
}

#[divan::bench(args = [5, 50], sample_size = 1, sample_count = 500)]
fn toggle_node(bencher: Bencher, mb: usize) {
    tree_action(bencher, mb, |_| {}, JsonTree::toggle);
}

#[divan::bench(args = [5, 50], sample_size = 1, sample_count = 500)]
fn expand_all(bencher: Bencher, mb: usize) {
    tree_action(
        bencher,
        mb,
        |tree| {
            tree.collapse_all();
            to_middle(tree);
        },
        JsonTree::expand_all,
    );
}

#[divan::bench(args = [5, 50], sample_size = 1, sample_count = 500)]
fn collapse_all(bencher: Bencher, mb: usize) {
    tree_action(
        bencher,
        mb,
        |tree| {
            tree.expand_all();
            to_middle(tree);
        },
        JsonTree::collapse_all,
    );
}

#[divan::bench(args = [5, 50], sample_count = 20)]
fn search_whole_body(bencher: Bencher, mb: usize) {
    let Some(mut tree) = tree(mb) else { return };
    bencher.bench_local(|| {
        let mut searcher = Searcher::new(&NEEDLE.to_ascii_lowercase());
        tree.find_next(&mut searcher, 0)
    });
}
