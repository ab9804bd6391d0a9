//! One service's heavy requests must not stall the others: Ably `/time` and the control port
//! are timed one request after another, first on an idle sandbox, then while 8 clients upload
//! FLAC files that decode to two hours of audio each to Deepgram and 4 clients sort AvaTax's
//! documents with `$orderBy`. Prints p50/p99 of both phases and their ratio, and the heavy
//! requests answered meanwhile (and how many were told 429 to wait).
//!
//! `cargo bench --bench sandbox_isolation` (plain `main`, `harness = false`). Knobs:
//! `ISOLATION_DOCUMENTS` (AvaTax documents seeded, default 20000), `ISOLATION_SAMPLES` (timed
//! requests per phase, default 200).

#![allow(clippy::unwrap_used, reason = "a benchmark panics on failure")]

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use opsdeck::catalog::Service;
use opsdeck::sandbox::{self, credentials};
use serde_json::json;

fn knob(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// A FLAC stream of `seconds` of silence at 8 kHz mono, in CONSTANT subframes (a few bytes per
/// 4096 samples): tiny to send, long to decode.
fn silent_flac(seconds: u64) -> Vec<u8> {
    fn crc8(bytes: &[u8]) -> u8 {
        bytes.iter().fold(0u8, |mut c, &x| {
            c ^= x;
            for _ in 0..8 {
                c = if c & 0x80 != 0 { (c << 1) ^ 0x07 } else { c << 1 };
            }
            c
        })
    }
    fn crc16(bytes: &[u8]) -> u16 {
        bytes.iter().fold(0u16, |mut c, &x| {
            c ^= u16::from(x) << 8;
            for _ in 0..8 {
                c = if c & 0x8000 != 0 { (c << 1) ^ 0x8005 } else { c << 1 };
            }
            c
        })
    }
    /// A frame number as FLAC writes it: UTF-8's variable-length coding.
    fn coded(n: u32) -> Vec<u8> {
        char::from_u32(n).map_or_else(Vec::new, |c| c.to_string().into_bytes())
    }
    const BLOCK: u64 = 4096;
    const RATE: u64 = 8000;
    let total = seconds * RATE;
    let mut out = b"fLaC".to_vec();
    out.extend_from_slice(&[0x80, 0, 0, 34]);
    out.extend_from_slice(&(BLOCK as u16).to_be_bytes());
    out.extend_from_slice(&(BLOCK as u16).to_be_bytes());
    out.extend_from_slice(&[0; 6]);
    let packed: u64 = (RATE << 44) | (15u64 << 36) | total;
    out.extend_from_slice(&packed.to_be_bytes());
    out.extend_from_slice(&[0; 16]);
    for (n, start) in (0..total).step_by(BLOCK as usize).enumerate() {
        let len = BLOCK.min(total - start);
        let mut frame = vec![0xFF, 0xF8, 0x70, 0x08];
        // Frame numbers past the surrogates are not chars: such a stream is long enough anyway.
        let number = coded(u32::try_from(n).unwrap());
        if number.is_empty() {
            break;
        }
        frame.extend_from_slice(&number);
        frame.extend_from_slice(&((len - 1) as u16).to_be_bytes());
        frame.push(crc8(&frame));
        // One CONSTANT subframe: the value 0.
        frame.extend_from_slice(&[0x00, 0, 0]);
        let crc = crc16(&frame);
        frame.extend_from_slice(&crc.to_be_bytes());
        out.extend_from_slice(&frame);
    }
    out
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let at = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[at.min(sorted.len() - 1)]
}

/// `samples` GETs of `url`, one after another: their latencies, sorted.
async fn timed(http: &reqwest::Client, url: &str, samples: usize) -> Vec<Duration> {
    let mut took = Vec::with_capacity(samples);
    for _ in 0..samples {
        let started = Instant::now();
        let response = http.get(url).send().await.unwrap();
        assert!(response.status().is_success(), "{url}: {}", response.status());
        let _ = response.bytes().await.unwrap();
        took.push(started.elapsed());
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    took.sort();
    took
}

fn report(what: &str, idle: &[Duration], busy: &[Duration]) {
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!(
        "{what:<14} idle p50 {:>8.2} ms  p99 {:>8.2} ms   busy p50 {:>8.2} ms  p99 {:>8.2} ms   p99 ratio {:.1}x",
        ms(percentile(idle, 0.5)),
        ms(percentile(idle, 0.99)),
        ms(percentile(busy, 0.5)),
        ms(percentile(busy, 0.99)),
        ms(percentile(busy, 0.99)) / ms(percentile(idle, 0.99)).max(0.001)
    );
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    runtime.block_on(run());
}

async fn run() {
    let documents = knob("ISOLATION_DOCUMENTS", 20_000);
    let samples = knob("ISOLATION_SAMPLES", 200);
    let sandbox = sandbox::start(0, 42).await.unwrap();
    let http = reqwest::Client::new();
    let (ably, avatax, deepgram) =
        (sandbox.base_url(Service::Ably), sandbox.base_url(Service::Avatax), sandbox.base_url(Service::Deepgram));
    let avatax_auth = format!(
        "Basic {}",
        base64::Engine::encode(
            &base64::engine::general_purpose::STANDARD,
            format!("{}:{}", credentials::AVATAX_ACCOUNT_ID, credentials::AVATAX_LICENSE_KEY)
        )
    );
    eprintln!("seeding {documents} AvaTax documents…");
    let seeding: Vec<_> = (0..8)
        .map(|client| {
            let (http, avatax, auth) = (http.clone(), avatax.clone(), avatax_auth.clone());
            tokio::spawn(async move {
                for index in (client..documents).step_by(8) {
                    let document = json!({
                        "type": "SalesInvoice", "companyCode": "DEFAULT", "code": format!("ISO-{index}"),
                        "date": "2026-11-20", "customerCode": format!("C{}", index % 97),
                        "addresses": {"singleLocation": {"line1": "123 Main Street", "city": "Irvine", "region": "CA",
                            "country": "US", "postalCode": "92615"}},
                        "lines": [{"number": "1", "amount": 100 + index % 1000, "taxCode": "P0000000"}],
                    });
                    let response = http
                        .post(format!("{avatax}/api/v2/transactions/create"))
                        .header("authorization", &auth)
                        .header("content-type", "application/json")
                        .body(document.to_string())
                        .send()
                        .await
                        .unwrap();
                    assert!(response.status().is_success(), "{}", response.status());
                }
            })
        })
        .collect();
    for task in seeding {
        task.await.unwrap();
    }
    let time_url = format!("{ably}/time");
    let control_url = format!("{}/", sandbox.control_url());
    let idle_ably = timed(&http, &time_url, samples).await;
    let idle_control = timed(&http, &control_url, samples).await;

    let flac = bytes::Bytes::from(silent_flac(2 * 3600));
    eprintln!(
        "heavy load: 8 uploads of a {} KB FLAC (2 h of audio), 4 AvaTax sorts over {documents}",
        flac.len() / 1024
    );
    let stop = Arc::new(AtomicBool::new(false));
    let (answered, busy) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let mut heavy = Vec::new();
    for _ in 0..8 {
        let (http, url, flac, stop, answered, busy) = (
            http.clone(),
            format!("{deepgram}/v1/listen"),
            flac.clone(),
            Arc::clone(&stop),
            Arc::clone(&answered),
            Arc::clone(&busy),
        );
        heavy.push(tokio::spawn(async move {
            while !stop.load(Ordering::Relaxed) {
                let response = http
                    .post(&url)
                    .header("authorization", format!("Token {}", credentials::DEEPGRAM_KEY))
                    .header("content-type", "audio/flac")
                    .body(flac.clone())
                    .send()
                    .await
                    .unwrap();
                let counter = if response.status().as_u16() == 429 { &busy } else { &answered };
                counter.fetch_add(1, Ordering::Relaxed);
                let _ = response.bytes().await;
            }
        }));
    }
    for _ in 0..4 {
        let (http, url, auth, stop, answered, busy) = (
            http.clone(),
            format!("{avatax}/api/v2/companies/DEFAULT/transactions?$orderBy=totalAmount%20desc&$top=10"),
            avatax_auth.clone(),
            Arc::clone(&stop),
            Arc::clone(&answered),
            Arc::clone(&busy),
        );
        heavy.push(tokio::spawn(async move {
            while !stop.load(Ordering::Relaxed) {
                let response = http.get(&url).header("authorization", &auth).send().await.unwrap();
                let counter = if response.status().as_u16() == 429 { &busy } else { &answered };
                counter.fetch_add(1, Ordering::Relaxed);
                let _ = response.bytes().await;
            }
        }));
    }
    // The heavy requests are under way before the timing starts.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let busy_ably = timed(&http, &time_url, samples).await;
    let busy_control = timed(&http, &control_url, samples).await;
    stop.store(true, Ordering::Relaxed);
    for task in heavy {
        let _ = task.await;
    }
    report("ably /time", &idle_ably, &busy_ably);
    report("control GET /", &idle_control, &busy_control);
    println!(
        "heavy requests answered meanwhile: {}, told 429 to wait: {}",
        answered.load(Ordering::Relaxed),
        busy.load(Ordering::Relaxed)
    );
    sandbox.shutdown();
}
