//! WebSocket connections of the simulators (Ably realtime, and the other push protocols on the
//! same layer): the upgrade and the limits every socket has, so a service's protocol module
//! holds only its own rules. A socket's messages are bounded in size (tungstenite refuses a
//! longer one and the socket ends); what the server sends waits in a bounded queue, and a client
//! that lets it fill (it stopped reading) loses its socket instead of growing the server's
//! memory; a write that makes no progress ends the socket like any other connection's
//! (`serve.rs`'s stall guard is under the upgraded stream too); the number of open sockets per
//! service is capped; and the sandbox stopping closes them all.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use axum::extract::ws::{CloseFrame, Message, Utf8Bytes, WebSocket, WebSocketUpgrade};
use axum::extract::{FromRequestParts, Request};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use futures_util::stream::{SplitSink, SplitStream};
use futures_util::{SinkExt, StreamExt};
use tokio::sync::{mpsc, OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::CancellationToken;

/// What every socket of one service is held to.
#[derive(Clone, Copy, Debug)]
pub struct WsLimits {
    /// The longest message (and frame) read from a client, in bytes.
    pub max_message: usize,
    /// Bytes of messages waiting to be sent to one client; past it the client is too slow and
    /// its socket ends.
    pub queue_bytes: usize,
    /// Sockets open at once.
    pub max_sockets: usize,
    /// How long one write may make no progress before the socket ends.
    pub write_stall: Duration,
}

/// The sockets of one service.
#[derive(Clone)]
pub struct Sockets {
    limits: WsLimits,
    open: Arc<Semaphore>,
    stop: CancellationToken,
    /// Subprotocols the service answers to (the first a client offers is echoed); none by default.
    protocols: &'static [&'static str],
}

/// A message from the client: text or binary (pings, pongs and closes are the layer's).
#[derive(Debug)]
pub enum Incoming {
    Text(String),
    Binary(Bytes),
}

/// Why a socket could not be opened, for the service to answer in its own error shape.
#[derive(Debug)]
pub enum Refused {
    /// Not a WebSocket handshake (the reason the handshake's check gives).
    NotWebSocket(String),
    /// The service has its most sockets open.
    TooMany,
}

impl Sockets {
    pub fn new(limits: WsLimits, stop: CancellationToken) -> Sockets {
        Sockets { limits, open: Arc::new(Semaphore::new(limits.max_sockets)), stop, protocols: &[] }
    }

    /// Echoes the first of `protocols` a client offers in `Sec-WebSocket-Protocol` (a browser
    /// client, which cannot send headers, carries its credentials there, and its socket fails
    /// unless one is echoed).
    pub fn with_protocols(self, protocols: &'static [&'static str]) -> Sockets {
        Sockets { protocols, ..self }
    }

    /// Answers `request`'s handshake and runs `session` on the socket once it is open; or says
    /// why it cannot, and sends nothing.
    pub async fn accept<F, Fut>(&self, request: Request, session: F) -> Result<Response, Refused>
    where
        F: FnOnce(Socket) -> Fut + Send + 'static,
        Fut: std::future::Future<Output = ()> + Send + 'static,
    {
        let (mut parts, _) = request.into_parts();
        let upgrade = match WebSocketUpgrade::from_request_parts(&mut parts, &()).await {
            Ok(upgrade) => upgrade,
            Err(rejection) => {
                let response = rejection.into_response();
                let reason = axum::body::to_bytes(response.into_body(), 4096).await.unwrap_or_default();
                return Err(Refused::NotWebSocket(String::from_utf8_lossy(&reason).into_owned()));
            }
        };
        let permit = Arc::clone(&self.open).try_acquire_owned().map_err(|_| Refused::TooMany)?;
        let (limits, stop) = (self.limits, self.stop.clone());
        let upgrade = upgrade
            .max_message_size(limits.max_message)
            .max_frame_size(limits.max_message)
            // Small buffers: most sockets carry small messages, and a thousand of them at
            // tungstenite's default 128 KiB each way cost a quarter of a gigabyte.
            .read_buffer_size(16 * 1024)
            .write_buffer_size(16 * 1024)
            // What tungstenite itself buffers for writing: the queue above it is the bound.
            .max_write_buffer_size(limits.max_message.saturating_mul(4).max(1 << 20))
            .protocols(self.protocols.iter().copied());
        Ok(upgrade.on_upgrade(move |socket| run(socket, limits, stop, permit, session)))
    }
}

async fn run<F, Fut>(
    socket: WebSocket,
    limits: WsLimits,
    stop: CancellationToken,
    permit: OwnedSemaphorePermit,
    session: F,
) where
    F: FnOnce(Socket) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    let _permit = permit;
    let (sink, stream) = socket.split();
    // The byte budget bounds the queue; the channel's own bound only has to be above it.
    let (sender, queue) = mpsc::unbounded_channel();
    let closing = stop.child_token();
    let queued = Arc::new(AtomicUsize::new(0));
    let writer = tokio::spawn(write(sink, queue, closing.clone(), Arc::clone(&queued), limits.write_stall));
    let outbox = Outbox { sender, closing: closing.clone(), queued, budget: limits.queue_bytes };
    session(Socket { stream, outbox: outbox.clone(), closing: closing.clone(), heard: std::time::Instant::now() })
        .await;
    // The session is over: what it queued last (a close, an error) is sent, then the socket ends.
    outbox.finish();
    let _ = writer.await;
}

/// The most queued messages written before one flush: a busy feed's messages go out a batch
/// to a write, not a system call each.
const BATCH: usize = 64;

/// Sends what is queued, in order, until the socket ends.
async fn write(
    mut sink: SplitSink<WebSocket, Message>,
    mut queue: mpsc::UnboundedReceiver<Outgoing>,
    closing: CancellationToken,
    queued: Arc<AtomicUsize>,
    stall: Duration,
) {
    let mut batch: Vec<Message> = Vec::with_capacity(BATCH);
    loop {
        // The socket ending (too slow, the sandbox stopping) wins over what is still queued.
        let next = tokio::select! {
            biased;
            () = closing.cancelled() => None,
            next = queue.recv() => next,
        };
        // Ended from outside: the connection is dropped, not closed politely to a client that
        // may not be reading.
        let Some(next) = next else { break };
        // A close or finish that ends the batch; never a message.
        let mut end = None;
        match next {
            Outgoing::Message(message) => batch.push(message),
            Outgoing::Texts(texts) => batch.extend(texts.into_iter().map(Message::Text)),
            other => end = Some(other),
        }
        // What else is already waiting goes in the same write.
        while end.is_none() && !batch.is_empty() && batch.len() < BATCH {
            match queue.try_recv() {
                Ok(Outgoing::Message(message)) => batch.push(message),
                Ok(Outgoing::Texts(texts)) => batch.extend(texts.into_iter().map(Message::Text)),
                Ok(other) => end = Some(other),
                Err(_) => break,
            }
        }
        if !batch.is_empty() {
            let size: usize = batch.iter().map(message_size).sum();
            let sent = tokio::select! {
                biased;
                () = closing.cancelled() => None,
                sent = tokio::time::timeout(stall, send_all(&mut sink, &mut batch)) => Some(sent),
            };
            queued.fetch_sub(size, Ordering::AcqRel);
            if !matches!(sent, Some(Ok(Ok(())))) {
                break;
            }
        }
        match end {
            Some(Outgoing::Close(code, reason)) => {
                let frame = CloseFrame { code, reason: reason.into() };
                let _ = tokio::time::timeout(stall, sink.send(Message::Close(Some(frame)))).await;
                break;
            }
            Some(Outgoing::Finish) => {
                let _ = tokio::time::timeout(stall, sink.close()).await;
                break;
            }
            Some(Outgoing::Message(_) | Outgoing::Texts(_)) | None => {}
        }
    }
    closing.cancel();
}

/// Writes a batch and flushes once.
async fn send_all(sink: &mut SplitSink<WebSocket, Message>, batch: &mut Vec<Message>) -> Result<(), axum::Error> {
    for message in batch.drain(..) {
        sink.feed(message).await?;
    }
    sink.flush().await
}

fn message_size(message: &Message) -> usize {
    match message {
        Message::Text(text) => text.len(),
        Message::Binary(bytes) => bytes.len(),
        _ => 0,
    }
}

enum Outgoing {
    Message(Message),
    /// Text messages sent in one write.
    Texts(Vec<Utf8Bytes>),
    /// Ends the socket with a close frame.
    Close(u16, String),
    /// Ends the socket once what is queued before it is sent.
    Finish,
}

/// One open socket, as its session reads it.
pub struct Socket {
    stream: SplitStream<WebSocket>,
    outbox: Outbox,
    closing: CancellationToken,
    /// When the client last sent anything, a pong included.
    heard: std::time::Instant,
}

impl Socket {
    /// The client's next message; `None` once the socket is closed, broken, too slow to read
    /// what it is sent, or the sandbox stops.
    pub async fn next(&mut self) -> Option<Incoming> {
        loop {
            let frame = tokio::select! {
                biased;
                () = self.closing.cancelled() => return None,
                frame = self.stream.next() => frame,
            };
            if matches!(frame, Some(Ok(_))) {
                self.heard = std::time::Instant::now();
            }
            match frame {
                Some(Ok(Message::Text(text))) => return Some(Incoming::Text(text.as_str().to_owned())),
                Some(Ok(Message::Binary(bytes))) => return Some(Incoming::Binary(bytes)),
                // tungstenite answers pings itself.
                Some(Ok(Message::Ping(_) | Message::Pong(_))) => {}
                Some(Ok(Message::Close(_)) | Err(_)) | None => return None,
            }
        }
    }

    /// How long since the client last sent anything (a pong to [`Outbox::ping`] included).
    pub fn silent_for(&self) -> Duration {
        self.heard.elapsed()
    }

    /// Where to send this socket's messages from anywhere (another connection's publish).
    pub fn outbox(&self) -> Outbox {
        self.outbox.clone()
    }

    /// Resolves when the socket ends for any reason but the session's own return.
    pub async fn closed(&self) {
        self.closing.cancelled().await;
    }
}

/// Sends to one socket without waiting: a message that does not fit the queue's byte budget
/// ends the socket.
#[derive(Clone)]
pub struct Outbox {
    sender: mpsc::UnboundedSender<Outgoing>,
    closing: CancellationToken,
    /// Bytes queued and not yet written.
    queued: Arc<AtomicUsize>,
    budget: usize,
}

/// The socket is gone, or was too slow and is going.
#[derive(Debug, PartialEq, Eq)]
pub struct Gone;

impl Outbox {
    pub fn text(&self, text: String) -> Result<(), Gone> {
        self.push(Outgoing::Message(Message::Text(text.into())))
    }

    /// A text message made once and sent to many sockets (a feed's fan-out): each gets the
    /// same bytes, not a copy.
    pub fn shared_text(&self, text: &Utf8Bytes) -> Result<(), Gone> {
        self.push(Outgoing::Message(Message::Text(text.clone())))
    }

    /// Several such messages at once, in order: one wake of the socket's writer, and one write
    /// for them all (a feed's pass over many events).
    pub fn shared_texts(&self, texts: Vec<Utf8Bytes>) -> Result<(), Gone> {
        self.push(Outgoing::Texts(texts))
    }

    pub fn binary(&self, bytes: Vec<u8>) -> Result<(), Gone> {
        self.push(Outgoing::Message(Message::Binary(bytes.into())))
    }

    /// A WebSocket ping: a live client answers it (with no protocol message of its own).
    pub fn ping(&self) -> Result<(), Gone> {
        self.push(Outgoing::Message(Message::Ping(Bytes::new())))
    }

    /// Ends the socket with a close frame after what is already queued.
    pub fn close(&self, code: u16, reason: &str) {
        let _ = self.push(Outgoing::Close(code, reason.to_owned()));
    }

    /// Ends the socket at once (another socket takes its connection over).
    pub fn end(&self) {
        self.closing.cancel();
    }

    fn finish(&self) {
        if self.sender.send(Outgoing::Finish).is_err() {
            self.closing.cancel();
        }
    }

    fn push(&self, message: Outgoing) -> Result<(), Gone> {
        if self.closing.is_cancelled() {
            return Err(Gone);
        }
        let size = match &message {
            Outgoing::Message(message) => message_size(message),
            Outgoing::Texts(texts) => texts.iter().map(|text| text.as_str().len()).sum(),
            _ => 0,
        };
        // Past the budget the client has stopped reading (or reads slower than it is sent to):
        // its socket ends rather than the sandbox holding more for it.
        if self.queued.fetch_add(size, Ordering::AcqRel).saturating_add(size) > self.budget {
            self.queued.fetch_sub(size, Ordering::AcqRel);
            self.closing.cancel();
            return Err(Gone);
        }
        self.sender.send(message).map_err(|_| {
            self.closing.cancel();
            Gone
        })
    }
}
