//! Slow, idle and greedy clients against the sandbox's listeners, with raw TCP so the test
//! controls every byte and every pause.

#![allow(clippy::unwrap_used, reason = "a test panics on failure")]

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use opsdeck::catalog::Service;
use opsdeck::sandbox::{self, Sandbox, ServeLimits};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const HEADER_READ: Duration = Duration::from_millis(1500);
const BODY_READ: Duration = Duration::from_millis(1500);
/// A normal request beside slow clients must finish well before their timeouts would free
/// anything, with room for a loaded test machine.
const PROMPT: Duration = Duration::from_millis(1000);
/// How long past a timeout the server may take to act on it on a busy test machine.
const GRACE: Duration = Duration::from_secs(3);

async fn sandbox(max_connections: usize) -> (Sandbox, SocketAddr) {
    let limits =
        ServeLimits { header_read: HEADER_READ, body_read: BODY_READ, max_connections, ..ServeLimits::DEFAULT };
    let sandbox = sandbox::start_with(0, 42, limits).await.expect("sandbox starts");
    let addr = sandbox.endpoint(Service::Ably).addr;
    (sandbox, addr)
}

/// Everything the server sends until it closes the connection, and how long that took; panics
/// if it keeps the connection open past `limit`.
async fn read_until_closed(stream: &mut TcpStream, limit: Duration) -> (String, Duration) {
    let started = Instant::now();
    let mut received = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match tokio::time::timeout(limit.saturating_sub(started.elapsed()), stream.read(&mut buf)).await {
            Err(_) => panic!(
                "the server kept the connection open for {limit:?}; received so far: {:?}",
                String::from_utf8_lossy(&received)
            ),
            Ok(Ok(0) | Err(_)) => return (String::from_utf8_lossy(&received).into_owned(), started.elapsed()),
            Ok(Ok(n)) => received.extend_from_slice(&buf[..n]),
        }
    }
}

/// A complete, well-behaved request on a fresh connection; returns the status line and the time
/// it took from connecting to the end of the answer.
async fn normal_request(addr: SocketAddr) -> (String, Duration) {
    let started = Instant::now();
    let mut stream = TcpStream::connect(addr).await.expect("connects");
    stream.write_all(b"GET /time HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n").await.expect("sends");
    let (answer, _) = read_until_closed(&mut stream, Duration::from_secs(10)).await;
    (answer.lines().next().unwrap_or_default().to_owned(), started.elapsed())
}

#[tokio::test]
async fn half_a_request_line_is_closed_within_the_header_timeout_while_others_are_served() {
    let (sandbox, addr) = sandbox(512).await;
    let mut slow = TcpStream::connect(addr).await.expect("connects");
    slow.write_all(b"GET /ti").await.expect("sends");
    let (status, took) = normal_request(addr).await;
    assert_eq!(status, "HTTP/1.1 200 OK");
    assert!(took < PROMPT, "a normal request took {took:?} beside a slow one");
    let (_, took) = read_until_closed(&mut slow, HEADER_READ + GRACE).await;
    assert!(took >= HEADER_READ / 2, "closed after {took:?}, before the header timeout");
    sandbox.shutdown();
}

#[tokio::test]
async fn an_idle_connection_is_closed_within_the_header_timeout() {
    let (sandbox, addr) = sandbox(512).await;
    let mut idle = TcpStream::connect(addr).await.expect("connects");
    read_until_closed(&mut idle, HEADER_READ + GRACE).await;
    sandbox.shutdown();
}

#[tokio::test]
async fn headers_trickled_byte_by_byte_do_not_outlast_the_header_timeout() {
    let (sandbox, addr) = sandbox(512).await;
    let mut slow = TcpStream::connect(addr).await.expect("connects");
    let head = b"GET /time HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Padding: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n\r\n";
    let started = Instant::now();
    for byte in head {
        if slow.write_all(&[*byte]).await.is_err() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
        if started.elapsed() > HEADER_READ + GRACE {
            panic!("the server was still taking header bytes after {:?}", started.elapsed());
        }
    }
    let (answer, _) = read_until_closed(&mut slow, GRACE).await;
    assert!(!answer.contains("200 OK"), "a head sent over {:?} was served: {answer}", started.elapsed());
    sandbox.shutdown();
}

#[tokio::test]
async fn a_body_shorter_than_its_content_length_gets_408_within_the_body_timeout() {
    let (sandbox, addr) = sandbox(512).await;
    let mut slow = TcpStream::connect(addr).await.expect("connects");
    slow.write_all(
        b"POST /channels/slow/messages HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
          Content-Length: 100\r\n\r\n{\"name\":",
    )
    .await
    .expect("sends");
    let (status, took) = normal_request(addr).await;
    assert_eq!(status, "HTTP/1.1 200 OK");
    assert!(took < PROMPT, "a normal request took {took:?} beside a slow body");
    let (answer, _) = read_until_closed(&mut slow, BODY_READ + GRACE).await;
    assert!(answer.starts_with("HTTP/1.1 408"), "expected 408, got {answer:?}");
    assert!(answer.contains("did not arrive within"), "{answer}");
    sandbox.shutdown();
}

#[tokio::test]
async fn an_http2_preface_is_refused_and_half_of_one_times_out() {
    let (sandbox, addr) = sandbox(512).await;
    let mut h2 = TcpStream::connect(addr).await.expect("connects");
    h2.write_all(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n").await.expect("sends");
    let (_, took) = read_until_closed(&mut h2, GRACE).await;
    assert!(took < HEADER_READ, "a full HTTP/2 preface held the connection for {took:?}");

    let mut half = TcpStream::connect(addr).await.expect("connects");
    half.write_all(b"PRI * HTTP/2.0\r\n").await.expect("sends");
    read_until_closed(&mut half, HEADER_READ + GRACE).await;
    sandbox.shutdown();
}

#[tokio::test]
async fn many_slow_clients_do_not_slow_a_normal_one() {
    let (sandbox, addr) = sandbox(512).await;
    let mut slow = Vec::new();
    for _ in 0..200 {
        let mut stream = TcpStream::connect(addr).await.expect("connects");
        stream.write_all(b"POST /channels/x/messages HTTP/1.1\r\nHost: s").await.expect("sends");
        slow.push(stream);
    }
    for _ in 0..5 {
        let (status, took) = normal_request(addr).await;
        assert_eq!(status, "HTTP/1.1 200 OK");
        assert!(took < PROMPT, "a normal request took {took:?} beside 200 slow clients");
    }
    for stream in &mut slow {
        read_until_closed(stream, HEADER_READ + GRACE).await;
    }
    sandbox.shutdown();
}

#[tokio::test]
async fn past_the_connection_cap_a_client_waits_until_a_slot_frees() {
    let (sandbox, addr) = sandbox(2).await;
    let mut holders = Vec::new();
    for _ in 0..2 {
        let mut stream = TcpStream::connect(addr).await.expect("connects");
        stream.write_all(b"GET /ti").await.expect("sends");
        holders.push(stream);
    }
    // Let the server accept both before the third arrives.
    tokio::time::sleep(Duration::from_millis(100)).await;
    let (status, took) = normal_request(addr).await;
    assert_eq!(status, "HTTP/1.1 200 OK", "served once the holders timed out");
    assert!(took >= HEADER_READ / 2, "served after {took:?} although both slots were held");
    assert!(took < HEADER_READ + GRACE, "waited {took:?}, past the header timeout of the holders");
    sandbox.shutdown();
}

#[tokio::test]
async fn a_body_over_the_sandbox_limit_gets_413_before_it_is_sent() {
    let limits = ServeLimits { max_body: 1024, ..ServeLimits::DEFAULT };
    let sandbox = sandbox::start_with(0, 42, limits).await.expect("sandbox starts");
    let mut big = TcpStream::connect(sandbox.endpoint(Service::Ably).addr).await.expect("connects");
    big.write_all(b"POST /channels/big/messages HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5000\r\n\r\n")
        .await
        .expect("sends");
    let (answer, _) = read_until_closed(&mut big, GRACE).await;
    assert!(answer.starts_with("HTTP/1.1 413"), "expected 413, got {answer:?}");
    assert!(answer.contains("1024 bytes"), "{answer}");
    sandbox.shutdown();
}

/// Deepgram's longest text spoken at 48 kHz: an answer of tens of megabytes from a 2 KB request.
fn speak_text() -> String {
    let text = "the quick brown fox jumps over the lazy dog ".repeat(60);
    text[..2_390].to_owned()
}

fn speak_request() -> String {
    let body = serde_json::json!({ "text": speak_text() }).to_string();
    format!(
        "POST /v1/speak?encoding=linear16&sample_rate=48000 HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Token {}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        opsdeck::sandbox::credentials::DEEPGRAM_KEY,
        body.len()
    )
}

/// The whole answer to [`speak_request`], read by a client that reads: bigger than any socket
/// buffer.
async fn whole_answer(addr: SocketAddr) -> Vec<u8> {
    let mut reader = TcpStream::connect(addr).await.unwrap();
    reader
        .write_all(speak_request().replace("HTTP/1.1\r\n", "HTTP/1.1\r\nConnection: close\r\n").as_bytes())
        .await
        .unwrap();
    let mut whole = Vec::new();
    reader.read_to_end(&mut whole).await.unwrap();
    assert!(whole.starts_with(b"HTTP/1.1 200"), "{}", String::from_utf8_lossy(&whole[..200.min(whole.len())]));
    assert!(whole.len() > 16 * 1024 * 1024, "an answer of {} bytes fits in buffers", whole.len());
    whole
}

/// A client that sends [`speak_request`] and never reads, with a small receive buffer (else the
/// kernel's would take the whole answer for it).
async fn stuck_client(addr: SocketAddr) -> TcpStream {
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(16 * 1024).unwrap();
    let mut stuck = socket.connect(addr).await.unwrap();
    stuck.write_all(speak_request().as_bytes()).await.unwrap();
    stuck
}

/// While a client that does not read holds a big answer, another big answer past the listener's
/// budget is a 503 with `Retry-After`; once that client is gone, its bytes are let go and big
/// answers are served again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_in_flight_have_a_budget_and_a_gone_client_gives_its_share_back() {
    // No stall limit in this test: only the budget lets go of nothing.
    let limits = ServeLimits {
        write_stall: Duration::from_secs(3600),
        max_answers_in_flight: 8 * 1024 * 1024,
        ..ServeLimits::DEFAULT
    };
    let sandbox = sandbox::start_with(0, 42, limits).await.expect("sandbox starts");
    let addr = sandbox.endpoint(Service::Deepgram).addr;
    let whole = whole_answer(addr).await;
    let stuck = stuck_client(addr).await;
    // Its answer is being sent (and so held) before anyone else asks: its head has arrived.
    let mut head = [0u8; 12];
    let deadline = Instant::now() + Duration::from_secs(60);
    while stuck.peek(&mut head).await.unwrap() < head.len() {
        assert!(Instant::now() < deadline, "the stuck client's answer never began");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(&head, b"HTTP/1.1 200", "the stuck client's answer is being sent");
    let http = reqwest::Client::new();
    let speak = || {
        http.post(format!("http://{addr}/v1/speak?encoding=linear16&sample_rate=48000"))
            .header("authorization", format!("Token {}", opsdeck::sandbox::credentials::DEEPGRAM_KEY))
            .header("content-type", "application/json")
            .body(serde_json::json!({ "text": speak_text() }).to_string())
            .send()
    };
    // Served until the stuck client's answer is made and held; refused from then on.
    let mut attempts = 0;
    let refused = loop {
        attempts += 1;
        assert!(attempts < 100, "a big answer past the budget was never refused");
        let answer = speak().await.unwrap();
        if answer.status().as_u16() == 503 {
            break answer;
        }
        assert_eq!(answer.status().as_u16(), 200);
        let _ = answer.bytes().await;
    };
    assert_eq!(refused.headers()["retry-after"], "1");
    assert!(speak().await.unwrap().status().as_u16() == 503, "held for as long as the client stays");
    drop(stuck);
    // The server's next write fails and its share comes back.
    let deadline = Instant::now() + Duration::from_secs(60);
    let served = loop {
        assert!(Instant::now() < deadline, "the gone client's share never came back");
        let answer = speak().await.unwrap();
        if answer.status().as_u16() == 200 {
            break answer;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(served.bytes().await.unwrap().len(), answer_len(&whole));
    sandbox.shutdown();
}

/// A client that stops reading a big answer loses its connection once writing to it has made
/// no progress for the stall limit: it gets part of the answer, then the end of the stream.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_stops_reading_loses_its_connection_after_the_stall_limit() {
    const STALL: Duration = Duration::from_millis(1500);
    let limits = ServeLimits { write_stall: STALL, ..ServeLimits::DEFAULT };
    let sandbox = sandbox::start_with(0, 42, limits).await.expect("sandbox starts");
    let addr = sandbox.endpoint(Service::Deepgram).addr;
    let whole = whole_answer(addr).await;
    let mut stuck = stuck_client(addr).await;
    // Reading nothing for well past the limit (with room for a loaded machine) …
    tokio::time::sleep(STALL + GRACE + GRACE).await;
    // … the connection was closed: what was sent before, then its end (a connection still open
    // would go on to give the whole answer and then wait, as keep-alive does).
    let mut received = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(60), stuck.read_to_end(&mut received))
        .await
        .expect("the connection was closed");
    assert!(received.len() < whole.len(), "the server gave up on it ({} of {} bytes)", received.len(), whole.len());
    sandbox.shutdown();
}

/// The body length of a raw HTTP/1.1 answer.
fn answer_len(raw: &[u8]) -> usize {
    let head = raw.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
    raw.len() - head
}
