//! Ably realtime fan-out on the simulator: `REALTIME_SUBSCRIBERS` connections (default 1,000)
//! attached to one channel while messages are published over REST at `REALTIME_RATE` a second
//! (default 100) for `REALTIME_SECONDS` (default 10). Prints the p50 and p99 of publish to
//! delivery over every delivery, the heap each connection costs (both ends: client and server
//! share this process), and how far the heap grows while one subscriber reads nothing (the
//! sandbox's 4 MiB budget per socket bounds it).
//!
//! `cargo bench --bench ably_realtime` (plain `main`, `harness = false`).

#![allow(clippy::unwrap_used, reason = "a benchmark panics on failure")]

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use opsdeck::catalog::Service;
use opsdeck::sandbox::{self, credentials};
use peak_alloc::PeakAlloc;
use serde_json::{json, Value};
use tokio_tungstenite::tungstenite::Message;

#[global_allocator]
static HEAP: PeakAlloc = PeakAlloc;

fn knob(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

type Ws = tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// A connection attached to `channel`, its ATTACHED read.
async fn subscriber(url: &str, channel: &str) -> Ws {
    // Client buffers as small as the server's, so the figure per connection is mostly the
    // sandbox's.
    let config = tokio_tungstenite::tungstenite::protocol::WebSocketConfig::default()
        .read_buffer_size(16 * 1024)
        .write_buffer_size(16 * 1024);
    let (mut ws, _) = tokio_tungstenite::connect_async_with_config(url, Some(config), false).await.unwrap();
    ws.send(Message::Text(json!({"action": 10, "channel": channel}).to_string().into())).await.unwrap();
    loop {
        let Some(Ok(Message::Text(text))) = ws.next().await else { panic!("the socket ended before ATTACHED") };
        let message: Value = serde_json::from_str(&text).unwrap();
        if message["action"] == 11 {
            return ws;
        }
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let at = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[at.min(sorted.len().saturating_sub(1))]
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    runtime.block_on(run());
}

async fn run() {
    let (subscribers, rate, seconds) =
        (knob("REALTIME_SUBSCRIBERS", 1000), knob("REALTIME_RATE", 100), knob("REALTIME_SECONDS", 10));
    let sandbox = sandbox::start(0, 42).await.unwrap();
    let rest = sandbox.base_url(Service::Ably);
    let url = format!("{}/?key={}&format=json", rest.replace("http://", "ws://"), credentials::ABLY_KEY);
    let http = reqwest::Client::new();
    let auth =
        format!("Basic {}", base64::Engine::encode(&base64::engine::general_purpose::STANDARD, credentials::ABLY_KEY));
    // The simulator builds itself on its first request: not what connections cost.
    http.get(format!("{rest}/time")).send().await.unwrap();
    let _warm = subscriber(&url, "warm-up").await;

    let before = HEAP.current_usage();
    let mut sockets = Vec::with_capacity(subscribers);
    for _ in 0..subscribers {
        sockets.push(subscriber(&url, "fanout").await);
    }
    let per_connection = HEAP.current_usage().saturating_sub(before) / subscribers.max(1);

    let latencies = Arc::new(Mutex::new(Vec::with_capacity(subscribers * rate * seconds)));
    let started = Instant::now();
    let expected = rate * seconds;
    let readers: Vec<_> = sockets
        .into_iter()
        .map(|mut ws| {
            let latencies = Arc::clone(&latencies);
            tokio::spawn(async move {
                let mut seen = 0;
                while seen < expected {
                    let Ok(Some(Ok(Message::Text(text)))) =
                        tokio::time::timeout(Duration::from_secs(30), ws.next()).await
                    else {
                        break;
                    };
                    let message: Value = serde_json::from_str(&text).unwrap();
                    if message["action"] != 15 {
                        continue;
                    }
                    let at = started.elapsed();
                    for item in message["messages"].as_array().into_iter().flatten() {
                        let sent = Duration::from_micros(item["data"].as_str().unwrap().parse().unwrap());
                        latencies.lock().unwrap().push(at.saturating_sub(sent));
                        seen += 1;
                    }
                }
                seen
            })
        })
        .collect();
    let every = Duration::from_secs(1) / u32::try_from(rate.max(1)).unwrap();
    for n in 0..expected {
        let due = every * u32::try_from(n).unwrap();
        if let Some(wait) = due.checked_sub(started.elapsed()) {
            tokio::time::sleep(wait).await;
        }
        let sent = started.elapsed().as_micros().to_string();
        let response = http
            .post(format!("{rest}/channels/fanout/messages"))
            .header("authorization", &auth)
            .header("content-type", "application/json")
            .body(json!({"name": "tick", "data": sent}).to_string())
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 201);
    }
    let mut delivered = 0;
    for reader in readers {
        delivered += reader.await.unwrap();
    }
    let mut latencies = std::mem::take(&mut *latencies.lock().unwrap());
    latencies.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!(
        "{subscribers} subscribers, {rate} publishes/s for {seconds} s: {delivered} of {} deliveries, publish to delivery p50 {:.2} ms, p99 {:.2} ms",
        subscribers * expected,
        ms(percentile(&latencies, 0.5)),
        ms(percentile(&latencies, 0.99)),
    );
    println!("heap per connection (client and server ends, this process): {:.1} KB", per_connection as f64 / 1024.0);

    // 40 MB published to a channel nobody hears, then to one whose subscriber reads nothing:
    // the difference is what the stalled socket holds (history grows the same in both).
    let data = "x".repeat(60_000);
    let publish_40mb = |channel: &'static str| {
        let (http, rest, auth, data) = (http.clone(), rest.clone(), auth.clone(), data.clone());
        async move {
            let before = HEAP.current_usage();
            for _ in 0..680 {
                let response = http
                    .post(format!("{rest}/channels/{channel}/messages"))
                    .header("authorization", &auth)
                    .header("content-type", "application/json")
                    .body(json!({"data": data}).to_string())
                    .send()
                    .await
                    .unwrap();
                assert_eq!(response.status(), 201);
            }
            HEAP.current_usage().saturating_sub(before)
        }
    };
    let unheard = publish_40mb("unheard").await;
    let _stalled = subscriber(&url, "stalled").await;
    let stalled = publish_40mb("stalled").await;
    let mb = |bytes: usize| bytes as f64 / (1024.0 * 1024.0);
    println!(
        "40 MB published: the heap grows {:.1} MB with nobody listening, {:.1} MB with a subscriber reading nothing ({:+.1} MB for its socket)",
        mb(unheard),
        mb(stalled),
        mb(stalled) - mb(unheard)
    );
}
