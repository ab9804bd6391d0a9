//! A live push socket: a service's WebSocket (Ably's realtime connection), opened on the
//! target's own host, so its credential goes nowhere else. It hands each text frame it reads to
//! the console, sends the frames the console gives it, and ends when its handle is dropped, the
//! server closes it, or a frame is larger than the console reads.

use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::Message;
use tokio_util::sync::CancellationToken;

/// The largest frame read: a frame past it ends the socket.
pub const MAX_FRAME: usize = 4 << 20;
/// How long opening the socket may take.
const OPEN_TIMEOUT: Duration = Duration::from_secs(10);

/// What the socket tells the console.
#[derive(Debug)]
pub enum LiveEvent {
    /// A text frame (a binary one is read as UTF-8 when it is).
    Frame(String),
    /// The socket ended (or never opened), and why, in words with no secret in them.
    Ended(String),
}

/// An open socket; dropping it closes the socket.
pub struct LiveHandle {
    outgoing: mpsc::UnboundedSender<String>,
    stop: CancellationToken,
}

impl LiveHandle {
    /// Sends a text frame (dropped when the socket has ended).
    pub fn send(&self, frame: String) {
        let _ = self.outgoing.send(frame);
    }
}

impl Drop for LiveHandle {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

/// Opens `url` (`ws://` or `wss://`) and reports what happens to `report` until the handle is
/// dropped. `shown` is the URL as the console may print it (no credential in it).
pub fn open(url: String, shown: String, report: impl Fn(LiveEvent) + Send + 'static) -> LiveHandle {
    let (outgoing, mut queue) = mpsc::unbounded_channel::<String>();
    let stop = CancellationToken::new();
    let handle = LiveHandle { outgoing, stop: stop.clone() };
    tokio::spawn(async move {
        let config = WebSocketConfig::default().max_message_size(Some(MAX_FRAME)).max_frame_size(Some(MAX_FRAME));
        let opening = tokio_tungstenite::connect_async_with_config(url.as_str(), Some(config), false);
        let opened = tokio::select! {
            () = stop.cancelled() => return,
            opened = tokio::time::timeout(OPEN_TIMEOUT, opening) => opened,
        };
        let socket = match opened {
            Ok(Ok((socket, _))) => socket,
            // The error may quote the URL, and the URL holds the credential: say only what failed.
            Ok(Err(e)) => return report(LiveEvent::Ended(format!("{shown} did not open: {}", kind_of(&e)))),
            Err(_) => {
                return report(LiveEvent::Ended(format!("{shown} did not open within {} s", OPEN_TIMEOUT.as_secs())))
            }
        };
        let (mut sink, mut stream) = socket.split();
        let why = loop {
            tokio::select! {
                () = stop.cancelled() => {
                    let _ = sink.close().await;
                    return;
                }
                Some(frame) = queue.recv() => {
                    if sink.send(Message::Text(frame.into())).await.is_err() {
                        break "the connection broke".to_owned();
                    }
                }
                frame = stream.next() => match frame {
                    Some(Ok(Message::Text(text))) => report(LiveEvent::Frame(text.as_str().to_owned())),
                    Some(Ok(Message::Binary(bytes))) => match String::from_utf8(bytes.to_vec()) {
                        Ok(text) => report(LiveEvent::Frame(text)),
                        Err(_) => break "the server sent a binary frame the console cannot read".to_owned(),
                    },
                    Some(Ok(Message::Close(frame))) => {
                        break frame.map_or_else(|| "the server closed it".to_owned(), |f| format!("the server closed it ({})", f.code));
                    }
                    Some(Ok(_)) => {}
                    Some(Err(e)) => break kind_of(&e),
                    None => break "the connection ended".to_owned(),
                },
            }
        };
        report(LiveEvent::Ended(why));
    });
    handle
}

/// An error in words that never quote the request (its URL holds the credential).
fn kind_of(error: &tokio_tungstenite::tungstenite::Error) -> String {
    use tokio_tungstenite::tungstenite::Error;
    match error {
        Error::Http(response) => format!("the server answered {} instead of a WebSocket", response.status()),
        Error::Capacity(_) => format!("a frame was larger than {} MiB", MAX_FRAME >> 20),
        Error::Io(e) => format!("{}", e.kind()),
        Error::Tls(_) => "the TLS handshake failed".to_owned(),
        Error::Url(_) => "the address is not a WebSocket URL".to_owned(),
        Error::ConnectionClosed | Error::AlreadyClosed => "the connection ended".to_owned(),
        _ => "the WebSocket protocol failed".to_owned(),
    }
}
