//! The Coinbase Exchange feed under the load case's traffic: `FEED_SUBSCRIBERS` WebSocket
//! connections (default 100), each subscribed with a signed subscribe to the `full` channel of
//! BTC-USD, while `FEED_CLIENTS` HTTP clients (default 16) make `FEED_PAIRS` order pairs
//! (default 20,000) as `benches/sandbox_load.rs`'s Coinbase case does: a limit buy under the
//! market then its cancel, every tenth a market order that fills (its fills read instead of a
//! cancel), with the background market stepping 50 times a second.
//!
//! Each round runs the load twice, each time on a fresh sandbox (same seed): first with no
//! subscriber (the baseline), then with the subscribers connected and subscribed before the load
//! starts. The subscribers stand for clients on other machines: they read on threads of their own
//! (`feed-subscriber`, two of them) at the priority the sandbox gives its request threads, so they
//! share the cores with the engine rather than take them first, and their CPU is counted apart. For both it prints order pairs/s with the p50 and p99 of a pair, how far the heap
//! rose above its level at the start of the load (the process's every allocation: server,
//! clients and this bench's own per-subscriber tallies, which are allocated before that level is
//! taken), and the CPU the process used (`/proc/self/stat`: the sandbox, the HTTP clients and the
//! subscribers share the process and its cores); then the ratio of the two pairs/s, and the CPU
//! a delivered message costs: the sandbox's fan-out (the process but the subscribers' threads,
//! beyond what the pairs cost without subscribers) and this bench's reading of it. A market order that
//! filled nothing is answered 404 by the simulator (it forgets such an order before answering):
//! counted apart, not as a failure. Then, for the feed, after waiting (up to 30 s, polling the
//! subscribers' counters) until every subscriber has read up to the REST book's `sequence` as it
//! was when the load ended:
//! - full-channel messages delivered from the start of the load to that moment, per subscriber
//!   and in all, and that total over the time (messages/s across all subscribers, and MB/s);
//! - sequence gaps (a `sequence` not the previous one + 1; asserted to be 0) and subscribers
//!   disconnected (asserted to be 0; the reason each gave is printed);
//! - the lag at the end: how long after the last pair's answer the last subscriber had read up
//!   to that sequence (polled every millisecond);
//! - how far behind the engine the slowest subscriber was during the load, in events (the REST
//!   book's sequence against the least sequence read, sampled every 100 ms; the baseline makes
//!   the same reads; the sampler runs on the same runtime, so it tends to sample after a stall
//!   has cleared);
//! - event to delivery: each message's `time` (the sandbox clock, which at speed 1 runs with the
//!   wall clock; the engine stamps an event with the millisecond its request or market step
//!   began, so the figure includes the request's time in the engine before the event and reads
//!   up to 1 ms high) against the wall clock when the subscriber read the frame; p50, p99, max;
//! - `POST /orders` sent to that order's `received` read by the last subscriber to connect (the
//!   last one the hub sends to), on this process's monotonic clock: p50 and p99, and that every
//!   order placed was heard.
//!
//! Knobs, by environment: `FEED_SUBSCRIBERS` (default 100), `FEED_PAIRS` (default 20000),
//! `FEED_CLIENTS` (default 16), `FEED_ROUNDS` (default 1; past one, medians of the rounds are
//! printed at the end), `FEED_SUBSCRIBER_NICE` (default 10; 0 gives the readers the priority of
//! the sandbox's I/O threads, so they read as soon as a frame comes and take cores from the
//! engine's request threads).
//!
//! `cargo bench --bench coinbase_feed` (plain `main`, `harness = false`).

#![allow(clippy::unwrap_used, reason = "a benchmark panics on failure")]

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use opsdeck::catalog::Service;
use opsdeck::sandbox::{self, credentials};
use peak_alloc::PeakAlloc;
use serde_json::{json, Value};
use tokio_tungstenite::tungstenite::Message;
use tokio_util::sync::CancellationToken;

#[path = "common/coinbase.rs"]
mod coinbase_orders;
#[path = "common/cpu.rs"]
mod cpu;

#[global_allocator]
static HEAP: PeakAlloc = PeakAlloc;

const SEED: u64 = 42;
/// How long the subscribers have, after the load, to read up to the engine's sequence.
const CATCH_UP_WITHIN: Duration = Duration::from_secs(30);
const SAMPLE_EVERY: Duration = Duration::from_millis(100);

type Ws = tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

fn knob(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).filter(|n| *n > 0).unwrap_or(default)
}

fn now_s() -> f64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs_f64()
}

/// Wall time in µs since the epoch.
fn wall_us() -> i64 {
    let since = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap();
    i64::try_from(since.as_micros()).unwrap()
}

fn micros(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}

// ---- The REST side, signed as benches/sandbox_load.rs signs it ----

/// A signed Coinbase request (signed now: the exchange allows 30 s of skew).
fn signed(
    http: &reqwest::Client,
    base: &str,
    method: reqwest::Method,
    path: &str,
    body: Option<&Value>,
) -> reqwest::RequestBuilder {
    let timestamp = format!("{:.3}", now_s());
    let text = body.map(Value::to_string).unwrap_or_default();
    let sign = opsdeck::sandbox::coinbase::sign(
        credentials::COINBASE_SECRET,
        &timestamp,
        method.as_str(),
        path,
        text.as_bytes(),
    )
    .unwrap();
    let mut builder = http
        .request(method, format!("{base}{path}"))
        .header("cb-access-key", credentials::COINBASE_KEY)
        .header("cb-access-sign", sign)
        .header("cb-access-timestamp", timestamp)
        .header("cb-access-passphrase", credentials::COINBASE_PASSPHRASE);
    if body.is_some() {
        builder = builder.header("content-type", "application/json").body(text);
    }
    builder
}

/// Sends one request; its JSON answer (`Null` when not JSON), or `Err` naming what went wrong.
async fn send(builder: reqwest::RequestBuilder) -> Result<Value, String> {
    match builder.send().await {
        Ok(response) if response.status().is_success() => {
            let bytes = response.bytes().await.map_err(|e| e.to_string())?;
            Ok(serde_json::from_slice(&bytes).unwrap_or(Value::Null))
        }
        Ok(response) => {
            let status = response.status();
            let body = response.text().await.unwrap_or_default();
            Err(format!("status {status}: {}", body.chars().take(300).collect::<String>()))
        }
        Err(e) => Err(e.to_string()),
    }
}

/// The order just placed cancelled (a market order, done at once, has its fills read instead).
fn then(answer: &Value) -> (reqwest::Method, String) {
    let id = answer["id"].as_str().unwrap_or_default();
    if answer["type"] == "market" {
        return (reqwest::Method::GET, format!("/fills?order_id={id}"));
    }
    (reqwest::Method::DELETE, format!("/orders/{id}"))
}

/// The REST book's `sequence` for BTC-USD: the last full-channel event's.
async fn book_sequence(http: &reqwest::Client, base: &str) -> u64 {
    let book = send(signed(http, base, reqwest::Method::GET, "/products/BTC-USD/book", None)).await.unwrap();
    book["sequence"].as_u64().unwrap_or_else(|| panic!("a book without a sequence: {book}"))
}

/// What the load made: pairs in their time, and when each order was sent (µs since `origin`).
struct Load {
    elapsed: Duration,
    pairs: Vec<Duration>,
    placed: Vec<(u128, u64)>,
    /// Market orders the simulator answered 404 (filled nothing: see `load`), not in `pairs`.
    unfilled_market: usize,
}

async fn load(http: &reqwest::Client, base: &str, pairs: usize, clients: usize, origin: Instant) -> Load {
    let per_client = pairs.div_ceil(clients);
    let started = Instant::now();
    let mut tasks = Vec::new();
    for client in 0..clients {
        let (http, base) = (http.clone(), base.to_owned());
        let count = per_client.min(pairs.saturating_sub(client * per_client));
        tasks.push(tokio::spawn(async move {
            let mut latencies = Vec::with_capacity(count);
            let mut placed = Vec::with_capacity(count);
            let (mut failures, mut unfilled_market) = (Vec::new(), 0usize);
            for index in 0..count {
                let body = coinbase_orders::load_case_order(client, index);
                let request = signed(&http, &base, reqwest::Method::POST, "/orders", Some(&body));
                let sent = Instant::now();
                let result = match send(request).await {
                    // A market order that filled nothing is cancelled and forgotten before its
                    // own POST answers, so the simulator answers 404 for it (the exchange answers
                    // with the order).
                    Err(e) if body["type"] == "market" && e.starts_with("status 404") => {
                        unfilled_market += 1;
                        continue;
                    }
                    Ok(answer) => {
                        if let Some(id) = answer["id"].as_str().and_then(uuid) {
                            placed.push((id, micros(sent.duration_since(origin))));
                        }
                        let (method, path) = then(&answer);
                        let result = send(signed(&http, &base, method.clone(), &path, None)).await;
                        result.map_err(|e| format!("{method} {path} after {answer}: {e}"))
                    }
                    Err(e) => Err(format!("POST /orders {body}: {e}")),
                };
                match result {
                    Ok(_) => latencies.push(sent.elapsed()),
                    Err(e) => failures.push(e),
                }
            }
            (latencies, placed, failures, unfilled_market)
        }));
    }
    let (mut latencies, mut placed, mut failures) = (Vec::with_capacity(pairs), Vec::with_capacity(pairs), Vec::new());
    let mut unfilled_market = 0;
    for task in tasks {
        let (l, p, f, u) = task.await.unwrap();
        latencies.extend(l);
        placed.extend(p);
        failures.extend(f);
        unfilled_market += u;
    }
    let elapsed = started.elapsed();
    assert!(failures.is_empty(), "{} of {pairs} pairs failed, the first: {}", failures.len(), failures[0]);
    latencies.sort_unstable();
    Load { elapsed, pairs: latencies, placed, unfilled_market }
}

// ---- The feed side ----

/// What a subscriber has read so far, for the bench to poll while it reads.
#[derive(Default)]
struct Counters {
    /// Full-channel messages read, and their bytes.
    messages: AtomicU64,
    bytes: AtomicU64,
    /// The last full-channel `sequence` read.
    last: AtomicU64,
    gaps: AtomicU64,
    /// The socket ended before the bench stopped reading.
    ended: AtomicBool,
}

/// What a subscriber heard, handed back when it stops.
struct Heard {
    first: u64,
    latency: Histogram,
    /// Messages whose `time` was after the wall clock when they were read (clocks disagreeing).
    early: u64,
    /// Why the socket ended, or the `error` messages it was sent.
    trouble: Vec<String>,
    /// The watched subscriber: each order's `received`, read when (µs since the origin).
    received: HashMap<u128, u64>,
}

/// A socket to the feed, subscribed (signed) to `full` for BTC-USD, its `subscriptions` read.
async fn subscribe(url: &str) -> Ws {
    // Client buffers as small as the server's, as benches/ably_realtime.rs has them.
    let config = tokio_tungstenite::tungstenite::protocol::WebSocketConfig::default()
        .read_buffer_size(16 * 1024)
        .write_buffer_size(16 * 1024);
    let (mut ws, _) = tokio_tungstenite::connect_async_with_config(url, Some(config), false).await.unwrap();
    let timestamp = format!("{:.3}", now_s());
    let signature =
        opsdeck::sandbox::coinbase::sign(credentials::COINBASE_SECRET, &timestamp, "GET", "/users/self/verify", b"")
            .unwrap();
    let subscribe = json!({
        "type": "subscribe",
        "product_ids": ["BTC-USD"],
        "channels": ["full"],
        "key": credentials::COINBASE_KEY,
        "signature": signature,
        "passphrase": credentials::COINBASE_PASSPHRASE,
        "timestamp": timestamp,
    });
    ws.send(Message::Text(subscribe.to_string().into())).await.unwrap();
    loop {
        let frame = tokio::time::timeout(Duration::from_secs(10), ws.next()).await.expect("an answer in 10 s");
        match frame {
            Some(Ok(Message::Text(text))) => match kind(&text) {
                Some("subscriptions") => return ws,
                Some("error") => panic!("the subscribe was refused: {text}"),
                _ => {}
            },
            Some(Ok(_)) => {}
            other => panic!("the socket ended before `subscriptions`: {other:?}"),
        }
    }
}

const TYPE: &str = "\"type\":\"";
const TIME: &str = "\"time\":\"";
const SEQUENCE: &str = "\"sequence\":";
const ORDER_ID: &str = "\"order_id\":\"";

/// The text after the first `key` (a field's name with what precedes its value).
fn after<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    text.find(key).map(|at| &text[at + key.len()..])
}

/// A message's `type`: the feed writes it first.
fn kind(text: &str) -> Option<&str> {
    match text.strip_prefix("{\"type\":\"") {
        Some(rest) => rest.split('"').next(),
        None => quoted(text, TYPE),
    }
}

/// A string field's value (the feed writes no escape in the ones read here).
fn quoted<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    after(text, key)?.split('"').next()
}

fn number(text: &str, key: &str) -> Option<u64> {
    let rest = after(text, key)?;
    let end = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
    rest[..end].parse().ok()
}

/// An order id (a UUID) as a number: no allocation per message.
fn uuid(text: &str) -> Option<u128> {
    if text.len() != 36 {
        return None;
    }
    text.bytes().filter(|b| *b != b'-').try_fold(0u128, |n, b| Some(n << 4 | u128::from(char::from(b).to_digit(16)?)))
}

/// Days since 1970-01-01 of a civil date (Howard Hinnant's `days_from_civil`).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let day_of_year = (153 * ((month + 9) % 12) + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// `2026-03-11T20:48:46.622000Z` (the feed's `time`) as µs since the epoch.
fn time_us(text: &str) -> Option<i64> {
    let b = text.as_bytes();
    if b.len() != 27 || b[4] != b'-' || b[10] != b'T' || b[19] != b'.' || b[26] != b'Z' {
        return None;
    }
    let digits = |from: usize, to: usize| {
        b[from..to].iter().try_fold(0i64, |n, d| d.is_ascii_digit().then(|| n * 10 + i64::from(d - b'0')))
    };
    let days = days_from_civil(digits(0, 4)?, digits(5, 7)?, digits(8, 10)?);
    let seconds = days * 86_400 + digits(11, 13)? * 3_600 + digits(14, 16)? * 60 + digits(17, 19)?;
    Some(seconds * 1_000_000 + digits(20, 26)?)
}

/// Reads every frame of `ws` until `stop`: counts the full channel's messages and gaps in
/// their sequence, and each message's event-to-delivery latency; the watched one also notes
/// when each order's `received` came.
async fn read(mut ws: Ws, counters: Arc<Counters>, stop: CancellationToken, origin: Instant, watched: bool) -> Heard {
    let mut heard = Heard {
        first: 0,
        latency: Histogram::new(),
        early: 0,
        trouble: Vec::new(),
        received: HashMap::with_capacity(if watched { 100_000 } else { 0 }),
    };
    let mut previous = 0u64;
    loop {
        let frame = tokio::select! {
            biased;
            () = stop.cancelled() => break,
            frame = ws.next() => frame,
        };
        let (read_us, read_at) = (wall_us(), Instant::now());
        let text = match frame {
            Some(Ok(Message::Text(text))) => text,
            Some(Ok(Message::Close(frame))) => {
                heard.trouble.push(format!("closed by the sandbox: {frame:?}"));
                break;
            }
            Some(Ok(_)) => continue,
            Some(Err(e)) => {
                heard.trouble.push(format!("socket error: {e}"));
                break;
            }
            None => {
                heard.trouble.push("the socket ended".into());
                break;
            }
        };
        let text = text.as_str();
        match kind(text) {
            Some("received" | "open" | "done" | "match" | "change") => {}
            Some("error") => {
                heard.trouble.push(format!("sent an error: {text}"));
                continue;
            }
            _ => continue,
        }
        let sequence =
            number(text, SEQUENCE).unwrap_or_else(|| panic!("a full-channel message without a sequence: {text}"));
        if previous == 0 {
            heard.first = sequence;
        } else if sequence != previous + 1 {
            counters.gaps.fetch_add(1, Ordering::Relaxed);
        }
        previous = sequence;
        let event_us =
            quoted(text, TIME).and_then(time_us).unwrap_or_else(|| panic!("a message without a time: {text}"));
        let late = read_us - event_us;
        if late < 0 {
            heard.early += 1;
        }
        heard.latency.add(u64::try_from(late).unwrap_or(0));
        if watched && text.starts_with("{\"type\":\"received\"") {
            if let Some(id) = quoted(text, ORDER_ID).and_then(uuid) {
                heard.received.insert(id, micros(read_at.duration_since(origin)));
            }
        }
        counters.messages.fetch_add(1, Ordering::Relaxed);
        counters.bytes.fetch_add(text.len() as u64, Ordering::Relaxed);
        counters.last.store(sequence, Ordering::Release);
    }
    if !heard.trouble.is_empty() && !stop.is_cancelled() {
        counters.ended.store(true, Ordering::Release);
    }
    heard
}

/// Latencies in µs: 50 µs buckets up to 1 s, then 10 ms buckets up to 120 s (the last bucket
/// holds everything past it). Fixed size, allocated before the heap is measured.
struct Histogram {
    counts: Vec<u64>,
    max: u64,
}

const FINE_US: u64 = 50;
const FINE_UP_TO: u64 = 1_000_000;
const COARSE_US: u64 = 10_000;
const COARSE_UP_TO: u64 = 120_000_000;
const FINE_BUCKETS: usize = (FINE_UP_TO / FINE_US) as usize;
const BUCKETS: usize = FINE_BUCKETS + ((COARSE_UP_TO - FINE_UP_TO) / COARSE_US) as usize + 1;

impl Histogram {
    fn new() -> Histogram {
        Histogram { counts: vec![0; BUCKETS], max: 0 }
    }

    fn add(&mut self, us: u64) {
        let bucket = if us < FINE_UP_TO {
            usize::try_from(us / FINE_US).unwrap()
        } else {
            FINE_BUCKETS + usize::try_from((us.min(COARSE_UP_TO) - FINE_UP_TO) / COARSE_US).unwrap()
        };
        self.counts[bucket] += 1;
        self.max = self.max.max(us);
    }

    fn merge(&mut self, other: &Histogram) {
        for (mine, theirs) in self.counts.iter_mut().zip(&other.counts) {
            *mine += theirs;
        }
        self.max = self.max.max(other.max);
    }

    fn total(&self) -> u64 {
        self.counts.iter().sum()
    }

    /// The upper edge of the bucket holding the `p`-th quantile, in µs.
    fn quantile(&self, p: f64) -> u64 {
        let total = self.total();
        if total == 0 {
            return 0;
        }
        #[expect(clippy::cast_possible_truncation, clippy::cast_sign_loss, reason = "a rank among the counts")]
        let rank = ((total - 1) as f64 * p).round() as u64;
        let mut seen = 0;
        for (bucket, count) in self.counts.iter().enumerate() {
            seen += count;
            if seen > rank {
                let bucket = bucket as u64;
                let edge = if bucket < FINE_BUCKETS as u64 {
                    (bucket + 1) * FINE_US
                } else {
                    FINE_UP_TO + (bucket - FINE_BUCKETS as u64 + 1) * COARSE_US
                };
                return edge.min(self.max);
            }
        }
        self.max
    }
}

fn percentile<T: Copy + Default>(sorted: &[T], p: f64) -> T {
    if sorted.is_empty() {
        return T::default();
    }
    #[expect(clippy::cast_possible_truncation, clippy::cast_sign_loss, reason = "an index into a slice")]
    let index = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[index.min(sorted.len() - 1)]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn us_ms(us: u64) -> f64 {
    us as f64 / 1000.0
}

fn mb(bytes: usize) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

/// The name of the subscribers' threads: their CPU is told apart from the rest of the process.
const SUBSCRIBER_THREAD: &str = "feed-subscriber";

/// The runtime the subscribers read on: threads of their own, by default at the priority the
/// sandbox gives its request threads (`nice` 10), so this bench's readers, which stand for
/// clients on other machines, do not take the cores from the engine they measure.
fn subscriber_runtime(nice: i32) -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name(SUBSCRIBER_THREAD)
        .on_thread_start(move || {
            #[cfg(target_os = "linux")]
            let _ = rustix::process::setpriority_process(None, nice);
        })
        .enable_all()
        .build()
        .unwrap()
}

/// One run's figures, for the comparison and the medians of several rounds.
struct Outcome {
    pairs_per_s: f64,
    pairs: usize,
    /// CPU the process used from the load's start to the last catch-up, and of it the
    /// subscribers' threads.
    cpu: Option<Duration>,
    subscriber_cpu: Option<Duration>,
    /// With subscribers: messages delivered and their rate across subscribers, and the lag at
    /// the end.
    delivered: u64,
    delivery_per_s: Option<f64>,
    lag: Option<Duration>,
}

/// One run of the load on a fresh sandbox with `subscribers` on the feed (0: the baseline).
async fn run(
    label: &str,
    subscribers: usize,
    pairs: usize,
    clients: usize,
    subscriber_runtime: &tokio::runtime::Handle,
) -> Outcome {
    let sandbox = sandbox::start(0, SEED).await.expect("sandbox starts");
    let base = sandbox.base_url(Service::Coinbase);
    let http = reqwest::Client::builder().pool_max_idle_per_host(clients + 1).build().unwrap();
    let answer = http.post(format!("{}/coinbase/market", sandbox.control_url())).body(r#"{"rate": 50}"#).send().await;
    assert!(answer.unwrap().status().is_success(), "the market's rate was set");
    // The simulator builds itself on its first request: not the run's.
    book_sequence(&http, &base).await;

    let origin = Instant::now();
    let stop = CancellationToken::new();
    let url = base.replace("http://", "ws://");
    let mut readers = Vec::with_capacity(subscribers);
    for n in 0..subscribers {
        let counters = Arc::new(Counters::default());
        let (subscribed, ready) = tokio::sync::oneshot::channel();
        let (url, reading, stop) = (url.clone(), Arc::clone(&counters), stop.clone());
        let task = subscriber_runtime.spawn(async move {
            let ws = subscribe(&url).await;
            let _ = subscribed.send(());
            read(ws, reading, stop, origin, n + 1 == subscribers).await
        });
        ready.await.expect("subscribed");
        readers.push((counters, task));
    }
    // Messages and bytes read by all the subscribers so far.
    let delivered = |readers: &[(Arc<Counters>, tokio::task::JoinHandle<Heard>)]| -> (u64, u64) {
        readers.iter().fold((0, 0), |(messages, bytes), (c, _)| {
            (messages + c.messages.load(Ordering::Relaxed), bytes + c.bytes.load(Ordering::Relaxed))
        })
    };
    // The least sequence read by a subscriber still open (`None`: none open).
    let slowest = |readers: &[(Arc<Counters>, tokio::task::JoinHandle<Heard>)]| -> Option<u64> {
        readers
            .iter()
            .filter(|(c, _)| !c.ended.load(Ordering::Acquire))
            .map(|(c, _)| c.last.load(Ordering::Acquire))
            .min()
    };

    let heap_before = HEAP.current_usage();
    HEAP.reset_peak_usage();
    let start_sequence = book_sequence(&http, &base).await;
    let delivered_before = delivered(&readers);
    let cpu_before = cpu::process_cpu();
    let subscriber_cpu_before = cpu::threads_cpu(SUBSCRIBER_THREAD);
    let started = Instant::now();
    // The engine's sequence against the slowest subscriber's, every 100 ms of the load.
    let sampling = CancellationToken::new();
    let sampler = {
        let (http, base, sampling) = (http.clone(), base.clone(), sampling.clone());
        let counters: Vec<Arc<Counters>> = readers.iter().map(|(c, _)| Arc::clone(c)).collect();
        tokio::spawn(async move {
            let mut behind = Vec::new();
            loop {
                tokio::select! {
                    () = sampling.cancelled() => break,
                    () = tokio::time::sleep(SAMPLE_EVERY) => {}
                }
                let engine = book_sequence(&http, &base).await;
                let least = counters
                    .iter()
                    .filter(|c| !c.ended.load(Ordering::Acquire))
                    .map(|c| c.last.load(Ordering::Acquire))
                    .min();
                if let Some(least) = least {
                    behind.push(engine.saturating_sub(least));
                }
            }
            behind
        })
    };
    let load = load(&http, &base, pairs, clients, origin).await;
    let ended = Instant::now();
    sampling.cancel();
    let mut behind = sampler.await.unwrap();
    behind.sort_unstable();
    let behind_mean = behind.iter().sum::<u64>() as f64 / behind.len().max(1) as f64;
    let target = book_sequence(&http, &base).await;

    // Every subscriber read up to the engine's sequence at the end of the load?
    let caught_up = loop {
        if slowest(&readers).is_none_or(|least| least >= target) {
            break Some(Instant::now());
        }
        if ended.elapsed() > CATCH_UP_WITHIN {
            break None;
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    };
    let window_end = caught_up.unwrap_or_else(Instant::now);
    let (delivered_in_window, bytes_in_window) = {
        let (messages, bytes) = delivered(&readers);
        (messages - delivered_before.0, bytes - delivered_before.1)
    };
    let cpu = cpu::process_cpu().zip(cpu_before).map(|(after, before)| after.saturating_sub(before));
    let subscriber_cpu = cpu::threads_cpu(SUBSCRIBER_THREAD)
        .zip(subscriber_cpu_before)
        .map(|(after, before)| after.saturating_sub(before));
    let heap_peak = HEAP.peak_usage().saturating_sub(heap_before);
    let still_behind: Vec<u64> = readers
        .iter()
        .filter(|(c, _)| !c.ended.load(Ordering::Acquire))
        .map(|(c, _)| c.last.load(Ordering::Acquire))
        .filter(|last| *last < target)
        .collect();
    stop.cancel();
    let mut heard = Vec::with_capacity(subscribers);
    let mut counts = Vec::with_capacity(subscribers);
    let (mut gaps, mut disconnected) = (0, 0);
    for (counters, task) in readers {
        heard.push(task.await.unwrap());
        counts.push(counters.messages.load(Ordering::Relaxed));
        gaps += counters.gaps.load(Ordering::Relaxed);
        disconnected += usize::from(counters.ended.load(Ordering::Acquire));
    }
    sandbox.shutdown();

    let pairs_per_s = load.pairs.len() as f64 / load.elapsed.as_secs_f64();
    println!(
        "{label:<28} {:>6.0} pairs/s  p50 {:>6.2} ms  p99 {:>6.2} ms  ({} pairs in {:.2} s)  heap peak +{:.1} MB  CPU {}",
        pairs_per_s,
        ms(percentile(&load.pairs, 0.50)),
        ms(percentile(&load.pairs, 0.99)),
        load.pairs.len(),
        load.elapsed.as_secs_f64(),
        mb(heap_peak),
        cpu.map_or_else(
            || "unknown".to_owned(),
            |cpu| format!(
                "{:.2} s ({:.2} of the machine's cores)",
                cpu.as_secs_f64(),
                cpu.as_secs_f64() / window_end.duration_since(started).as_secs_f64()
            )
        ),
    );
    if load.unfilled_market > 0 {
        println!(
            "  {} market orders filled nothing and were answered 404 NotFound (not counted as pairs)",
            load.unfilled_market
        );
    }
    if subscribers == 0 {
        return Outcome {
            pairs_per_s,
            pairs: load.pairs.len(),
            cpu,
            subscriber_cpu,
            delivered: 0,
            delivery_per_s: None,
            lag: None,
        };
    }

    let window = window_end.duration_since(started);
    let delivery_per_s = delivered_in_window as f64 / window.as_secs_f64();
    let events = target - start_sequence;
    counts.sort_unstable();
    println!(
        "  events: {events} full-channel events for BTC-USD during the load (sequence {start_sequence} to {target}), {:.0}/s",
        events as f64 / load.elapsed.as_secs_f64(),
    );
    println!(
        "  delivered: {delivered_in_window} messages from the load's start to the last catch-up ({:.2} s), {:.0} a subscriber; {:.0} messages/s across {subscribers} subscribers ({:.0} MB/s of JSON, {:.0} B a message)",
        window.as_secs_f64(),
        delivered_in_window as f64 / subscribers as f64,
        delivery_per_s,
        bytes_in_window as f64 / 1e6 / window.as_secs_f64(),
        bytes_in_window as f64 / delivered_in_window.max(1) as f64,
    );
    println!(
        "  each subscriber's full messages since it subscribed: min {} median {} max {}",
        counts.first().copied().unwrap_or(0),
        percentile(&counts, 0.5),
        counts.last().copied().unwrap_or(0),
    );
    let lag = caught_up.map(|at| at.duration_since(ended));
    match lag {
        Some(lag) => {
            println!("  caught up: every subscriber read sequence {target} {:.1} ms after the load ended", ms(lag))
        }
        None => println!(
            "  NOT caught up {} s after the load ended: {} subscribers behind sequence {target} (least read {:?})",
            CATCH_UP_WITHIN.as_secs(),
            still_behind.len(),
            still_behind.iter().min(),
        ),
    }
    println!(
        "  behind the engine during the load (slowest subscriber, every {} ms, {} samples): median {} events, mean {:.0}, max {}",
        SAMPLE_EVERY.as_millis(),
        behind.len(),
        percentile(&behind, 0.5),
        behind_mean,
        behind.last().copied().unwrap_or(0),
    );
    let mut latency = Histogram::new();
    let mut early = 0;
    for h in &heard {
        latency.merge(&h.latency);
        early += h.early;
    }
    println!(
        "  event `time` to read (wall clock, whole-ms event times): p50 {:.2} ms  p99 {:.2} ms  max {:.2} ms  over {} messages ({early} stamped after they were read)",
        us_ms(latency.quantile(0.50)),
        us_ms(latency.quantile(0.99)),
        us_ms(latency.max),
        latency.total(),
    );
    let watched = &heard[subscribers - 1].received;
    let mut sent_to_read: Vec<u64> =
        load.placed.iter().filter_map(|(id, sent)| watched.get(id).map(|read| read.saturating_sub(*sent))).collect();
    sent_to_read.sort_unstable();
    println!(
        "  POST /orders sent to its `received` read by the last subscriber: p50 {:.2} ms  p99 {:.2} ms  ({} of {} orders heard)",
        us_ms(percentile(&sent_to_read, 0.50)),
        us_ms(percentile(&sent_to_read, 0.99)),
        sent_to_read.len(),
        load.placed.len(),
    );
    let firsts: Vec<u64> = heard.iter().map(|h| h.first).collect();
    let late_start = firsts.iter().filter(|first| **first > start_sequence + 1).count();
    println!("  sequence gaps {gaps}, subscribers disconnected {disconnected}, subscribers whose first message came after the load began {late_start}");
    for (n, h) in heard.iter().enumerate().filter(|(_, h)| !h.trouble.is_empty()) {
        println!("    subscriber {n}: {}", h.trouble.join("; "));
    }
    assert_eq!(gaps, 0, "the full channel's sequence has no gap on any subscriber");
    assert_eq!(disconnected, 0, "no subscriber was disconnected");
    assert!(caught_up.is_some(), "every subscriber caught up within {} s", CATCH_UP_WITHIN.as_secs());
    assert_eq!(sent_to_read.len(), load.placed.len(), "the last subscriber heard every order placed");
    Outcome {
        pairs_per_s,
        pairs: load.pairs.len(),
        cpu,
        subscriber_cpu,
        delivered: delivered_in_window,
        delivery_per_s: Some(delivery_per_s),
        lag,
    }
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    percentile(&values, 0.5)
}

fn main() {
    let subscribers = knob("FEED_SUBSCRIBERS", 100);
    let pairs = knob("FEED_PAIRS", 20_000);
    let clients = knob("FEED_CLIENTS", 16);
    let rounds = knob("FEED_ROUNDS", 1);
    let nice = std::env::var("FEED_SUBSCRIBER_NICE").ok().and_then(|v| v.parse().ok()).unwrap_or(10);
    println!(
        "coinbase feed: {pairs} order pairs from {clients} clients, the market at 50 steps/s, without then with {subscribers} subscribers on `full` BTC-USD; a fresh sandbox (seed {SEED}) for each run; the subscribers read at nice {nice}"
    );
    // A runtime of its own for each run: the sandbox lowers the priority of the blocking-pool
    // threads that answer its requests, and a thread created from one of them (the feed's hub,
    // when the simulator is built there) would inherit it from the run before.
    let runtime = || tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let (mut without, mut with, mut ratios, mut delivery, mut lags) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for round in 1..=rounds {
        let readers = subscriber_runtime(nice);
        let baseline =
            runtime().block_on(run(&format!("round {round} no subscriber"), 0, pairs, clients, readers.handle()));
        let fed = runtime().block_on(run(
            &format!("round {round} {subscribers} subscribers"),
            subscribers,
            pairs,
            clients,
            readers.handle(),
        ));
        drop(readers);
        let ratio = fed.pairs_per_s / baseline.pairs_per_s;
        println!("  pairs/s with the subscribers against without: {ratio:.2}");
        if let (Some(base_cpu), Some(fed_cpu), Some(readers_cpu)) = (baseline.cpu, fed.cpu, fed.subscriber_cpu) {
            let per_pair = base_cpu.as_secs_f64() / baseline.pairs.max(1) as f64;
            // The sandbox and the HTTP clients: the process but the subscribers' threads.
            let served = fed_cpu.saturating_sub(readers_cpu).as_secs_f64();
            let fan_out = served - per_pair * fed.pairs as f64;
            let delivered = fed.delivered.max(1) as f64;
            println!(
                "  CPU: {:.0} µs a pair without subscribers; with them, {:.0} µs a pair for the sandbox and its HTTP clients, of which {:.2} µs a delivered message is the feed's fan-out (beyond the pairs' own), and {:.2} s on the subscribers' threads ({:.2} µs a message read)",
                per_pair * 1e6,
                served / fed.pairs.max(1) as f64 * 1e6,
                fan_out / delivered * 1e6,
                readers_cpu.as_secs_f64(),
                readers_cpu.as_secs_f64() / delivered * 1e6,
            );
        }
        without.push(baseline.pairs_per_s);
        with.push(fed.pairs_per_s);
        ratios.push(ratio);
        delivery.extend(fed.delivery_per_s);
        lags.extend(fed.lag.map(ms));
    }
    if rounds > 1 {
        println!(
            "medians of {rounds} rounds: {:.0} pairs/s without, {:.0} with {subscribers} subscribers (ratio {:.2}); {:.0} messages/s delivered; lag at the end {:.1} ms",
            median(without),
            median(with),
            median(ratios),
            median(delivery),
            median(lags),
        );
    }
}
