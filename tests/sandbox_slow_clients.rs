//! Slow, idle and greedy clients against the sandbox's listeners, with raw TCP so the test
//! controls every byte and every pause.

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
