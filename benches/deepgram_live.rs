//! Deepgram live transcription under load: `LIVE_STREAMS` WebSockets at once (default 50), each
//! streaming the same `LIVE_SECONDS`-long WAV (default 10 s of the simulator's own speech, 16 kHz
//! mono linear16) at its real rate, a tenth of a second a frame, with `interim_results`, then
//! `CloseStream`.
//!
//! For each round (`LIVE_ROUNDS`, default 3, each on a fresh sandbox) it prints:
//! - the sandbox's CPU per stream: the process's CPU (`/proc/self/stat`, which keeps the time of
//!   threads that have ended) less the clients' (they run on a runtime of their own whose threads
//!   are named `bench-client`, read per thread from `/proc/self/task/*/stat`), over the streams
//!   and the wall time, as a share of a core, and in µs per second of audio;
//! - the latency from each stream's last audio frame written to its last final result read
//!   (`CloseStream` sent right after the frame): p50, p99, max;
//! - that every stream read its whole text back, in order, and closed with 1000.
//!
//! Then the medians of the rounds. `cargo bench --bench deepgram_live` (plain `main`).

#![allow(clippy::unwrap_used, reason = "a benchmark panics on failure")]

use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use opsdeck::catalog::Service;
use opsdeck::sandbox::{self, credentials};
use serde_json::Value;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::Message;

#[path = "common/cpu.rs"]
mod cpu;

const SEED: u64 = 11;
const CLIENT_THREAD: &str = "bench-client";

fn knob(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// CPU time of the clients' threads, and of the whole process (threads that ended included).
fn cpu_used() -> Option<(Duration, Duration)> {
    Some((cpu::threads_cpu(CLIENT_THREAD)?, cpu::process_cpu()?))
}

/// The sentence spoken long enough to last about `seconds`.
fn sentence(seconds: usize) -> String {
    let words = ["streams", "of", "speech", "arrive", "in", "real", "time", "and", "are", "heard"];
    // A character lasts 80 ms; the chime and header 0.67 s.
    let chars = ((seconds as f64 - 0.7) / 0.08) as usize;
    let mut text = String::new();
    for word in words.iter().cycle() {
        if text.len() + word.len() + 1 > chars {
            break;
        }
        if !text.is_empty() {
            text.push(' ');
        }
        text.push_str(word);
    }
    text
}

struct Stream {
    /// From the last audio frame written to the last final result read.
    latency: Duration,
    words: Vec<String>,
    close: Option<u16>,
}

async fn stream(url: String, wav: std::sync::Arc<Vec<u8>>) -> Stream {
    let mut request = url.into_client_request().unwrap();
    request.headers_mut().insert("Authorization", format!("Token {}", credentials::DEEPGRAM_KEY).parse().unwrap());
    let (ws, _) = tokio_tungstenite::connect_async(request).await.unwrap();
    let (mut sink, mut source) = ws.split();
    let reader = tokio::spawn(async move {
        let (mut words, mut last_final, mut close) = (Vec::new(), None, None);
        while let Some(Ok(frame)) = source.next().await {
            match frame {
                Message::Text(text) => {
                    let message: Value = serde_json::from_str(&text).unwrap();
                    if message["type"] == "Results" && message["is_final"] == true {
                        last_final = Some(Instant::now());
                        for w in message["channel"]["alternatives"][0]["words"].as_array().unwrap() {
                            words.push(w["word"].as_str().unwrap().to_owned());
                        }
                    }
                }
                Message::Close(frame) => {
                    close = frame.map(|f| u16::from(f.code));
                    break;
                }
                _ => {}
            }
        }
        (words, last_final, close)
    });
    let mut pace = tokio::time::interval(Duration::from_millis(100));
    let mut last_frame = Instant::now();
    for chunk in wav.chunks(3200) {
        pace.tick().await;
        sink.send(Message::Binary(chunk.to_vec().into())).await.unwrap();
        last_frame = Instant::now();
    }
    sink.send(Message::Text(r#"{"type":"CloseStream"}"#.into())).await.unwrap();
    let (words, last_final, close) = reader.await.unwrap();
    Stream { latency: last_final.unwrap().duration_since(last_frame), words, close }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

struct Round {
    cpu_share: f64,
    us_per_audio_second: f64,
    p50: Duration,
    p99: Duration,
}

fn round(label: &str, streams: usize, seconds: usize) -> Round {
    let server = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let clients = tokio::runtime::Builder::new_multi_thread().thread_name(CLIENT_THREAD).enable_all().build().unwrap();
    let sandbox = server.block_on(sandbox::start(0, SEED)).unwrap();
    let base = sandbox.base_url(Service::Deepgram);
    let text = sentence(seconds);
    let wav = clients.block_on(async {
        let response = reqwest::Client::new()
            .post(format!("{base}/v1/speak?encoding=linear16&sample_rate=16000"))
            .header("Authorization", format!("Token {}", credentials::DEEPGRAM_KEY))
            .header("Content-Type", "application/json")
            .body(serde_json::json!({ "text": text }).to_string())
            .send()
            .await
            .unwrap();
        response.bytes().await.unwrap().to_vec()
    });
    let audio_seconds = (wav.len() - 44) as f64 / 32000.0;
    let wav = std::sync::Arc::new(wav);
    let url = format!("{}/v1/listen?interim_results=true", base.replace("http://", "ws://"));
    // One warm-up stream builds the simulator and its first socket.
    clients.block_on(stream(url.clone(), std::sync::Arc::new(wav[..32044].to_vec())));
    let (clients_before, process_before) = cpu_used().unwrap_or_default();
    let started = Instant::now();
    let results: Vec<Stream> = clients.block_on(async {
        let tasks: Vec<_> =
            (0..streams).map(|_| tokio::spawn(stream(url.clone(), std::sync::Arc::clone(&wav)))).collect();
        let mut out = Vec::new();
        for task in tasks {
            out.push(task.await.unwrap());
        }
        out
    });
    let wall = started.elapsed();
    let (clients_after, process_after) = cpu_used().unwrap_or_default();
    let client_cpu = clients_after.saturating_sub(clients_before);
    let server_cpu = process_after.saturating_sub(process_before).saturating_sub(client_cpu);
    let expected: Vec<String> = text.split_whitespace().map(str::to_owned).collect();
    for (n, s) in results.iter().enumerate() {
        assert_eq!(s.words, expected, "stream {n} read its text back");
        assert_eq!(s.close, Some(1000), "stream {n} closed normally");
    }
    let mut latencies: Vec<Duration> = results.iter().map(|s| s.latency).collect();
    latencies.sort();
    let cpu_share = server_cpu.as_secs_f64() / wall.as_secs_f64() / streams as f64;
    let us_per_audio_second = server_cpu.as_secs_f64() * 1e6 / (audio_seconds * streams as f64);
    let (p50, p99) = (percentile(&latencies, 0.5), percentile(&latencies, 0.99));
    println!(
        "{label}: {streams} streams of {audio_seconds:.1} s in {:.2} s; sandbox CPU {:.2} s ({:.2} % of a core a stream, {us_per_audio_second:.0} µs a second of audio), clients {:.2} s; last frame to last final p50 {:.2} ms p99 {:.2} ms max {:.2} ms; every stream read its {} words back",
        wall.as_secs_f64(),
        server_cpu.as_secs_f64(),
        cpu_share * 100.0,
        client_cpu.as_secs_f64(),
        ms(p50),
        ms(p99),
        ms(*latencies.last().unwrap()),
        expected.len(),
    );
    sandbox.shutdown();
    drop(clients);
    drop(server);
    Round { cpu_share, us_per_audio_second, p50, p99 }
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn main() {
    let streams = knob("LIVE_STREAMS", 50);
    let seconds = knob("LIVE_SECONDS", 10);
    let rounds = knob("LIVE_ROUNDS", 3);
    println!("deepgram live: {streams} streams at real time, {seconds} s each, interim results on; {rounds} rounds");
    let all: Vec<Round> = (1..=rounds).map(|n| round(&format!("round {n}"), streams, seconds)).collect();
    println!(
        "median of {rounds}: {:.2} % of a core a stream, {:.0} µs CPU a second of audio; last frame to last final p50 {:.2} ms, p99 {:.2} ms",
        median(all.iter().map(|r| r.cpu_share * 100.0).collect()),
        median(all.iter().map(|r| r.us_per_audio_second).collect()),
        median(all.iter().map(|r| ms(r.p50)).collect()),
        median(all.iter().map(|r| ms(r.p99)).collect()),
    );
}
