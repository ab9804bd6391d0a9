//! Load benchmark of the simulators: C concurrent clients over loopback send N requests of one
//! operation in total; prints throughput and p50/p99 latency, then checks that every accepted
//! request left exactly one stored record (nothing lost, nothing duplicated).
//!
//! `cargo bench --bench sandbox_load` (plain `main`, `harness = false`). Knobs, by environment:
//! `LOAD_CASE` (a case name, or `all`), `LOAD_REQUESTS` (default 20000), `LOAD_CLIENTS`
//! (default 16).
//!
//! Adding a case: one `Case` value in `CASES` with the request a client sends (`request`) and
//! how to count what the simulator stored (`stored`). AvaTax `transactions_create` and TaxJar
//! `taxes_calculate` come next, when those simulators land.

#![allow(clippy::unwrap_used, reason = "a benchmark panics on failure")]

use std::collections::HashSet;
use std::future::Future;
use std::pin::Pin;
use std::time::{Duration, Instant};

use opsdeck::catalog::Service;
use opsdeck::sandbox::{self, credentials, Sandbox};
use serde_json::{json, Value};

/// One request to send: method, path (after the service's base URL), body and auth header.
struct Call {
    method: reqwest::Method,
    path: String,
    body: Option<Value>,
    authorization: String,
}

type Counted<'a> = Pin<Box<dyn Future<Output = Result<usize, String>> + Send + 'a>>;

/// A benchmarked operation.
struct Case {
    name: &'static str,
    service: Service,
    /// The request client `client` sends as its `index`-th.
    request: fn(client: usize, index: usize) -> Call,
    /// Records the simulator holds after the run for `clients` clients: compared with the
    /// number of successful requests.
    stored: for<'a> fn(&'a Sandbox, &'a reqwest::Client, usize) -> Counted<'a>,
}

const CASES: &[Case] =
    &[Case { name: "ably messages_publish", service: Service::Ably, request: ably_publish, stored: ably_stored }];

fn ably_auth() -> String {
    use base64::Engine;
    format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(credentials::ABLY_KEY))
}

/// Each client publishes to its own channel, so its messages can be counted apart and stay
/// under the per-channel history cap.
fn ably_publish(client: usize, index: usize) -> Call {
    Call {
        method: reqwest::Method::POST,
        path: format!("/channels/load-{client}/messages"),
        body: Some(json!({"name": "load", "data": {"client": client, "index": index}})),
        authorization: ably_auth(),
    }
}

fn ably_stored<'a>(sandbox: &'a Sandbox, http: &'a reqwest::Client, clients: usize) -> Counted<'a> {
    Box::pin(async move {
        let base = sandbox.base_url(Service::Ably);
        let mut seen = HashSet::new();
        for client in 0..clients {
            let mut url = format!("{base}/channels/load-{client}/messages?limit=1000&direction=forwards");
            loop {
                let response =
                    http.get(&url).header("authorization", ably_auth()).send().await.map_err(|e| e.to_string())?;
                let next = response
                    .headers()
                    .get("link")
                    .and_then(|l| l.to_str().ok())
                    .and_then(|l| l.split(", ").find(|p| p.ends_with("rel=\"next\"")))
                    .and_then(|p| {
                        p.split_once('?')
                            .map(|(_, q)| q.trim_end_matches("; rel=\"next\"").trim_end_matches('>').to_owned())
                    });
                let page: Value = serde_json::from_slice(&response.bytes().await.map_err(|e| e.to_string())?)
                    .map_err(|e| e.to_string())?;
                let items = page.as_array().ok_or("history is not an array")?;
                // Each message carries (client, index): a duplicate is an error, not a count.
                for item in items {
                    let key = (item["data"]["client"].as_u64(), item["data"]["index"].as_u64());
                    if !seen.insert(key) {
                        return Err(format!("message {key:?} is stored twice"));
                    }
                }
                match next {
                    Some(query) => url = format!("{base}/channels/load-{client}/messages?{query}"),
                    None => break,
                }
            }
        }
        Ok(seen.len())
    })
}

fn env_number(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).filter(|n| *n > 0).unwrap_or(default)
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    #[expect(clippy::cast_possible_truncation, clippy::cast_sign_loss, reason = "an index into a slice")]
    let index = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[index.min(sorted.len() - 1)]
}

async fn run(case: &Case, requests: usize, clients: usize) {
    let sandbox = sandbox::start(0, 42).await.expect("sandbox starts");
    let base = sandbox.base_url(case.service);
    let http = reqwest::Client::builder().pool_max_idle_per_host(clients).build().unwrap();
    let per_client = requests.div_ceil(clients);
    let started = Instant::now();
    let mut tasks = Vec::new();
    for client in 0..clients {
        let http = http.clone();
        let base = base.clone();
        let request = case.request;
        let count = per_client.min(requests.saturating_sub(client * per_client));
        tasks.push(tokio::spawn(async move {
            let mut latencies = Vec::with_capacity(count);
            let mut failures = Vec::new();
            for index in 0..count {
                let call = request(client, index);
                let mut builder = http.request(call.method, format!("{base}{}", call.path));
                builder = builder.header("authorization", call.authorization);
                if let Some(body) = call.body {
                    builder = builder.header("content-type", "application/json").body(body.to_string());
                }
                let sent = Instant::now();
                match builder.send().await {
                    Ok(response) if response.status().is_success() => {
                        let _ = response.bytes().await;
                        latencies.push(sent.elapsed());
                    }
                    Ok(response) => failures.push(format!("status {}", response.status())),
                    Err(e) => failures.push(e.to_string()),
                }
            }
            (latencies, failures)
        }));
    }
    let mut latencies = Vec::with_capacity(requests);
    let mut failures = Vec::new();
    for task in tasks {
        let (l, f) = task.await.unwrap();
        latencies.extend(l);
        failures.extend(f);
    }
    let elapsed = started.elapsed();
    latencies.sort_unstable();
    let ok = latencies.len();
    let stored = (case.stored)(&sandbox, &http, clients).await.unwrap();
    println!(
        "{:<26} {requests} requests, {clients} clients: {:>8.0} req/s  p50 {:>7.2} ms  p99 {:>7.2} ms  ok {ok}  failed {}  stored {stored}",
        case.name,
        ok as f64 / elapsed.as_secs_f64(),
        percentile(&latencies, 0.50).as_secs_f64() * 1000.0,
        percentile(&latencies, 0.99).as_secs_f64() * 1000.0,
        failures.len(),
    );
    if let Some(first) = failures.first() {
        println!("  first failure: {first}");
    }
    assert_eq!(stored, ok, "{}: every accepted request is stored exactly once", case.name);
    assert!(failures.is_empty(), "{}: {} requests failed", case.name, failures.len());
    sandbox.shutdown();
}

fn main() {
    let requests = env_number("LOAD_REQUESTS", 20_000);
    let clients = env_number("LOAD_CLIENTS", 16);
    let wanted = std::env::var("LOAD_CASE").unwrap_or_else(|_| "all".to_owned());
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let selected: Vec<&Case> = CASES.iter().filter(|c| wanted == "all" || c.name.contains(wanted.as_str())).collect();
    assert!(!selected.is_empty(), "no case matches LOAD_CASE={wanted}");
    for case in selected {
        runtime.block_on(run(case, requests, clients));
    }
}
