//! Serving one simulator's router on one listener, so that slow, idle or too many clients cannot
//! hold the sandbox: a client has a bounded time to send a request's head and then its body, and
//! each listener serves a bounded number of connections at once.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::http::header::{self, HeaderValue};
use axum::http::{Request, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::{Json, Router};
use futures_util::{FutureExt as _, StreamExt};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::Service as _;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use serde_json::json;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::CancellationToken;

use super::faults::DropConnection;

/// The error that makes hyper drop a connection on purpose (see [`DropConnection`]).
#[derive(Debug, thiserror::Error)]
#[error("connection dropped by an injected fault")]
struct Dropped;

/// How long and how many: the limits every listener of the sandbox applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ServeLimits {
    /// Time to send a request line and headers, counted from the connection's start or the end
    /// of the previous response; an idle keep-alive connection is closed after it too.
    pub header_read: Duration,
    /// Time to send a whole body once the headers are in; a body shorter than its
    /// `Content-Length` gets 408 when it runs out.
    pub body_read: Duration,
    /// Connections served at once per listener. Further clients wait in the listen backlog until
    /// one ends, which the two timeouts above guarantee.
    pub max_connections: usize,
    /// Bodies above this get 413 before any simulator sees them: it bounds the memory one
    /// connection can take. Simulators apply their vendor's own (lower) limits after it.
    pub max_body: usize,
    /// Bytes of request bodies one listener holds at once, being read or being answered: past
    /// it a request gets 503 with `Retry-After` instead of more memory (`max_connections` bodies
    /// of `max_body` each would be 8 GiB).
    pub max_bodies_in_flight: usize,
    /// Bytes of answers one listener holds while clients read them: past it an answer is
    /// replaced by 503 with `Retry-After` (thirty clients that never read a 70 MB answer would
    /// hold 2 GB). One answer larger than this still goes when no other is held.
    pub max_answers_in_flight: usize,
    /// How long a write to a client may make no progress (a client that stopped reading)
    /// before the connection is closed, as a real server closes it.
    pub write_stall: Duration,
}

impl ServeLimits {
    /// What `opsdeck sandbox` uses.
    pub const DEFAULT: ServeLimits = ServeLimits {
        header_read: Duration::from_secs(10),
        body_read: Duration::from_secs(30),
        max_connections: 512,
        max_body: 16 * 1024 * 1024,
        max_bodies_in_flight: 64 * 1024 * 1024,
        max_answers_in_flight: 256 * 1024 * 1024,
        write_stall: Duration::from_secs(30),
    };
}

impl Default for ServeLimits {
    fn default() -> ServeLimits {
        ServeLimits::DEFAULT
    }
}

/// Serves `router` on `listener` until `stop` is cancelled; connections in progress then finish
/// their current request.
pub async fn serve(listener: TcpListener, router: Router, limits: ServeLimits, stop: CancellationToken) {
    // A cap of 0 would accept nothing ever; one connection at a time is the least that works.
    let slots = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    // One permit per byte of body held by this listener's requests, and of answer being sent.
    let bodies = Arc::new(Semaphore::new(limits.max_bodies_in_flight.min(Semaphore::MAX_PERMITS)));
    let answers = Arc::new(Semaphore::new(limits.max_answers_in_flight.clamp(1, Semaphore::MAX_PERMITS)));
    loop {
        let permit = tokio::select! {
            () = stop.cancelled() => return,
            permit = Arc::clone(&slots).acquire_owned() => match permit {
                Ok(permit) => permit,
                // The semaphore is never closed; if it were, nothing more could be served.
                Err(_) => return,
            },
        };
        let stream = tokio::select! {
            () = stop.cancelled() => return,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(e) => {
                    // Out of file descriptors and the like: wait instead of spinning on the error.
                    if !is_per_connection_error(&e) {
                        tokio::time::sleep(Duration::from_millis(50)).await;
                    }
                    continue;
                }
            },
        };
        let budgets = Budgets { bodies: Arc::clone(&bodies), answers: Arc::clone(&answers) };
        tokio::spawn(serve_connection(stream, router.clone(), limits, budgets, stop.clone(), permit));
    }
}

/// Errors that concern only the connection being accepted, after which accepting can go on.
fn is_per_connection_error(e: &std::io::Error) -> bool {
    use std::io::ErrorKind::{ConnectionAborted, ConnectionRefused, ConnectionReset};
    matches!(e.kind(), ConnectionRefused | ConnectionAborted | ConnectionReset)
}

/// The bytes a listener holds: of request bodies being read or answered, and of answers being
/// sent.
#[derive(Clone)]
struct Budgets {
    bodies: Arc<Semaphore>,
    answers: Arc<Semaphore>,
}

/// Answers this small are not counted: what they hold is no more than a connection's buffers.
const UNCOUNTED_ANSWER: usize = 64 * 1024;

/// `response` with its bytes counted against the listener's answers until its body is sent or
/// dropped; 503 with `Retry-After` when the listener holds too much already.
fn counted_answer(response: Response, answers: &Arc<Semaphore>, limits: ServeLimits) -> Response {
    use axum::body::HttpBody as _;
    let Some(size) = response.body().size_hint().exact().and_then(|s| usize::try_from(s).ok()) else {
        // A streamed answer holds what it has made so far, not the whole of it.
        return response;
    };
    if size <= UNCOUNTED_ANSWER {
        return response;
    }
    let wanted = size.min(limits.max_answers_in_flight).clamp(1, Semaphore::MAX_PERMITS);
    let Some(permit) = u32::try_from(wanted).ok().and_then(|n| Arc::clone(answers).try_acquire_many_owned(n).ok())
    else {
        let mut busy = refusal(
            StatusCode::SERVICE_UNAVAILABLE,
            "too_many_answers",
            format!(
                "the sandbox holds as many answers as it sends at once ({} bytes on this port, clients still reading them); retry shortly",
                limits.max_answers_in_flight
            ),
        );
        busy.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        return busy;
    };
    let (parts, body) = response.into_parts();
    Response::from_parts(parts, Body::new(HeldAnswer { body, rest: Bytes::new(), _permit: permit }))
}

/// An answer's body with the bytes it holds counted, handed to the connection a slice at a time:
/// the permit (and the answer's buffer, which the slices share) goes when the last slice is
/// taken or the client is gone, not when the connection has queued a whole answer it cannot
/// send.
struct HeldAnswer {
    body: Body,
    rest: Bytes,
    _permit: OwnedSemaphorePermit,
}

/// The slices an answer is handed to the connection in.
const ANSWER_SLICE: usize = 64 * 1024;

impl axum::body::HttpBody for HeldAnswer {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> Poll<Option<Result<hyper::body::Frame<Bytes>, axum::Error>>> {
        if self.rest.is_empty() {
            match std::pin::Pin::new(&mut self.body).poll_frame(cx) {
                Poll::Ready(Some(Ok(frame))) => match frame.into_data() {
                    Ok(data) => self.rest = data,
                    Err(frame) => return Poll::Ready(Some(Ok(frame))),
                },
                other => return other,
            }
        }
        let take = self.rest.len().min(ANSWER_SLICE);
        let slice = self.rest.split_to(take);
        Poll::Ready(Some(Ok(hyper::body::Frame::data(slice))))
    }

    fn is_end_stream(&self) -> bool {
        self.rest.is_empty() && self.body.is_end_stream()
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        let mut hint = self.body.size_hint();
        let rest = self.rest.len() as u64;
        hint.set_lower(hint.lower() + rest);
        if let Some(upper) = hint.upper() {
            hint.set_upper(upper + rest);
        }
        hint
    }
}

async fn serve_connection(
    stream: TcpStream,
    router: Router,
    limits: ServeLimits,
    budgets: Budgets,
    stop: CancellationToken,
    permit: OwnedSemaphorePermit,
) {
    // Small request/response exchanges: do not let Nagle hold the last segment back.
    let _ = stream.set_nodelay(true);
    let stream = StallGuard::new(stream, limits.write_stall);
    let router = TowerToHyperService::new(router);
    let service = hyper::service::service_fn(move |request: Request<Incoming>| {
        let router = router.clone();
        let Budgets { bodies, answers } = budgets.clone();
        async move {
            // The body's bytes stay counted until its answer is made.
            let mut held = Held(None);
            let response = match buffered(request, limits, &bodies, &mut held).await {
                // A simulator's panic is caught nearer, to answer in its vendor's shape; this
                // catches the rest (the control port's own handlers) so no panic ends a
                // connection without an answer.
                Ok(request) => match AssertUnwindSafe(router.call(request)).catch_unwind().await {
                    Ok(Ok(response)) => response,
                    Ok(Err(never)) => match never {},
                    Err(panic) => {
                        let why = super::lazy::panic_text(panic.as_ref());
                        tracing::error!("the sandbox panicked on a request: {why}");
                        refusal(
                            StatusCode::INTERNAL_SERVER_ERROR,
                            "internal_error",
                            "the opsdeck sandbox failed on this request; see its log".to_owned(),
                        )
                    }
                },
                Err(refusal) => refusal,
            };
            drop(held);
            // An injected fault asked for the connection to go: an error from the service makes
            // hyper close it without writing a response, as a crashed upstream would.
            if response.extensions().get::<DropConnection>().is_some() {
                return Err(Dropped);
            }
            Ok(counted_answer(response, &answers, limits))
        }
    });
    // HTTP/1 only, as before: a client opening with the HTTP/2 preface gets an error and the
    // connection is closed, and half a preface runs into the header timeout like any other head.
    let connection = http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_read)
        .serve_connection(TokioIo::new(stream), service)
        // A simulator's realtime socket (`ws.rs`) takes the connection over, stall guard and all.
        .with_upgrades();
    let mut connection = std::pin::pin!(connection);
    tokio::select! {
        // Errors here are the client's (timeouts, resets, garbage): nothing to report.
        _ = connection.as_mut() => {}
        () = stop.cancelled() => {
            connection.as_mut().graceful_shutdown();
            let _ = connection.await;
        }
    }
    drop(permit);
}

/// A connection whose writes fail once one has made no progress for `limit`: a client that
/// stopped reading cannot hold its connection, and the answer it holds, for good.
struct StallGuard {
    stream: TcpStream,
    limit: Duration,
    stalled: Option<std::pin::Pin<Box<tokio::time::Sleep>>>,
}

impl StallGuard {
    fn new(stream: TcpStream, limit: Duration) -> StallGuard {
        StallGuard { stream, limit, stalled: None }
    }

    /// What a write that returned `poll` means: progress resets the clock; no progress past
    /// the limit is an error that ends the connection.
    fn watch<T>(
        &mut self,
        cx: &mut std::task::Context<'_>,
        poll: Poll<std::io::Result<T>>,
    ) -> Poll<std::io::Result<T>> {
        use std::future::Future as _;
        match poll {
            Poll::Ready(result) => {
                self.stalled = None;
                Poll::Ready(result)
            }
            Poll::Pending => {
                let limit = self.limit;
                let stalled = self.stalled.get_or_insert_with(|| Box::pin(tokio::time::sleep(limit)));
                if stalled.as_mut().poll(cx).is_ready() {
                    return Poll::Ready(Err(std::io::Error::new(
                        std::io::ErrorKind::TimedOut,
                        "the client read nothing of the answer for too long",
                    )));
                }
                Poll::Pending
            }
        }
    }
}

impl tokio::io::AsyncRead for StallGuard {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.stream).poll_read(cx, buf)
    }
}

impl tokio::io::AsyncWrite for StallGuard {
    fn poll_write(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let poll = std::pin::Pin::new(&mut self.stream).poll_write(cx, buf);
        self.watch(cx, poll)
    }

    fn poll_write_vectored(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        let poll = std::pin::Pin::new(&mut self.stream).poll_write_vectored(cx, bufs);
        self.watch(cx, poll)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(mut self: std::pin::Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> Poll<std::io::Result<()>> {
        let poll = std::pin::Pin::new(&mut self.stream).poll_flush(cx);
        self.watch(cx, poll)
    }

    fn poll_shutdown(mut self: std::pin::Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> Poll<std::io::Result<()>> {
        let poll = std::pin::Pin::new(&mut self.stream).poll_shutdown(cx);
        self.watch(cx, poll)
    }
}

/// The bytes of body a request holds of its listener's budget ([`ServeLimits::max_bodies_in_flight`]).
struct Held(Option<OwnedSemaphorePermit>);

impl Held {
    /// Counts `bytes` more, or says the listener holds too much already.
    fn take(&mut self, bodies: &Arc<Semaphore>, bytes: usize) -> Result<(), BodyError> {
        if bytes == 0 {
            return Ok(());
        }
        let bytes = u32::try_from(bytes).map_err(|_| BodyError::Busy)?;
        let permit = Arc::clone(bodies).try_acquire_many_owned(bytes).map_err(|_| BodyError::Busy)?;
        match &mut self.0 {
            Some(held) => held.merge(permit),
            None => self.0 = Some(permit),
        }
        Ok(())
    }
}

/// The request with its whole body read within `body_read`, or the answer refusing it.
async fn buffered(
    request: Request<Incoming>,
    limits: ServeLimits,
    bodies: &Arc<Semaphore>,
    held: &mut Held,
) -> Result<Request<Body>, Response> {
    let (parts, incoming) = request.into_parts();
    let declared = parts
        .headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    if declared.is_some_and(|len| len > limits.max_body as u64) {
        return Err(too_large(limits.max_body));
    }
    // A declared length is counted before a byte is read, so a refused client sends nothing.
    if let Some(len) = declared.and_then(|len| usize::try_from(len).ok()) {
        if held.take(bodies, len).is_err() {
            return Err(busy(limits.max_bodies_in_flight));
        }
    }
    let reserved = declared.and_then(|len| usize::try_from(len).ok()).unwrap_or(0);
    let collecting = collect(incoming, limits.max_body, reserved, bodies, held);
    let body = match tokio::time::timeout(limits.body_read, collecting).await {
        Ok(Ok(body)) => body,
        Ok(Err(BodyError::TooLarge)) => return Err(too_large(limits.max_body)),
        Ok(Err(BodyError::Busy)) => return Err(busy(limits.max_bodies_in_flight)),
        Ok(Err(BodyError::Read(e))) => {
            return Err(refusal(
                StatusCode::BAD_REQUEST,
                "bad_request",
                format!("the request body could not be read: {e}"),
            ))
        }
        Err(_) => {
            return Err(refusal(
                StatusCode::REQUEST_TIMEOUT,
                "request_timeout",
                format!("the request body did not arrive within {} s", limits.body_read.as_secs_f64()),
            ))
        }
    };
    Ok(Request::from_parts(parts, Body::from(body)))
}

enum BodyError {
    TooLarge,
    /// The listener holds its budget of body bytes already.
    Busy,
    Read(axum::Error),
}

/// Reads the body, counting in `held` every byte past the `reserved` ones counted already.
async fn collect(
    incoming: Incoming,
    max_body: usize,
    reserved: usize,
    bodies: &Arc<Semaphore>,
    held: &mut Held,
) -> Result<Bytes, BodyError> {
    let mut chunks = Body::new(incoming).into_data_stream();
    let mut body = Vec::new();
    while let Some(chunk) = chunks.next().await {
        let chunk = chunk.map_err(BodyError::Read)?;
        let len = body.len().saturating_add(chunk.len());
        if len > max_body {
            return Err(BodyError::TooLarge);
        }
        // A body longer than it declared is hyper's error; a chunked one is counted as it comes.
        let counted = body.len().max(reserved);
        held.take(bodies, len.saturating_sub(counted))?;
        body.extend_from_slice(&chunk);
    }
    Ok(Bytes::from(body))
}

/// 503 with `Retry-After`: the listener holds as many body bytes as it takes at once.
fn busy(max_bodies_in_flight: usize) -> Response {
    let mut response = refusal(
        StatusCode::SERVICE_UNAVAILABLE,
        "too_many_bodies",
        format!(
            "the sandbox is reading as many request bodies as it holds at once ({max_bodies_in_flight} bytes on this port); retry shortly"
        ),
    );
    response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    response
}

fn too_large(max_body: usize) -> Response {
    refusal(
        StatusCode::PAYLOAD_TOO_LARGE,
        "payload_too_large",
        format!("the request body is larger than the sandbox accepts ({max_body} bytes)"),
    )
}

/// An answer from the sandbox itself (no simulator saw the request); the connection is closed
/// after it, since the rest of the request may still be on its way.
fn refusal(status: StatusCode, error: &str, message: String) -> Response {
    let mut response = (status, Json(json!({"error": error, "message": message}))).into_response();
    response.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
    response
}
