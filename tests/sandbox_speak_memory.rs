//! A long `/v1/speak` answer is the only copy of its audio in memory (issue 32): 2,400 emoji at
//! 48 kHz are about 74 MB of WAV, and making them once took six times that as floats. Counted by
//! the allocator while the client reads the answer a chunk at a time and keeps none of it. One
//! test in its own binary, so nothing else allocates meanwhile.

#![allow(clippy::unwrap_used, reason = "a test panics on failure")]

use opsdeck::catalog::Service;
use opsdeck::sandbox::{self, credentials};
use peak_alloc::PeakAlloc;
use serde_json::json;

#[global_allocator]
static HEAP: PeakAlloc = PeakAlloc;

async fn speak(http: &reqwest::Client, base: &str, text: &str) -> usize {
    let mut response = http
        .post(format!("{base}/v1/speak?encoding=linear16&sample_rate=48000"))
        .header("authorization", format!("Token {}", credentials::DEEPGRAM_KEY))
        .header("content-type", "application/json")
        .body(json!({"text": text}).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["content-type"], "audio/wav");
    let mut read = 0;
    while let Some(chunk) = response.chunk().await.unwrap() {
        read += chunk.len();
    }
    read
}

#[tokio::test]
async fn a_long_spoken_answer_is_held_once() {
    let sandbox = sandbox::start(0, 42).await.unwrap();
    let base = sandbox.base_url(Service::Deepgram);
    let http = reqwest::Client::new();
    // The service seeds itself and the connection is made before anything is counted.
    speak(&http, &base, "warm up").await;
    let text = "😀".repeat(2_400);
    let before = HEAP.current_usage();
    HEAP.reset_peak_usage();
    let answer = speak(&http, &base, &text).await;
    let peak = HEAP.peak_usage().saturating_sub(before);
    assert!(answer > 50_000_000, "a long answer: {answer} bytes");
    let ratio = peak as f64 / answer as f64;
    assert!(ratio < 1.5, "the answer's {answer} bytes took {peak} bytes at the peak ({ratio:.2}x)");
}
