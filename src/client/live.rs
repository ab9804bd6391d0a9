//! A live push socket: a service's WebSocket (Ably's realtime connection), opened on the
//! target's own host, so its credential goes nowhere else. It hands each text frame it reads to
//! the console, sends the frames the console gives it, and ends when its handle is dropped, the
//! server closes it, or a frame is larger than the console reads.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::Message;
use tokio_util::sync::CancellationToken;

/// The largest frame read: a frame past it ends the socket.
pub const MAX_FRAME: usize = 4 << 20;
/// Frames handed to the console and not yet taken: past it the console has fallen behind a
/// server sending faster than it draws, and the socket ends rather than queue without bound.
pub const MAX_WAITING: usize = 1024;
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
    waiting: Arc<AtomicUsize>,
}

impl LiveHandle {
    /// The console took one frame it was handed.
    pub fn taken(&self) {
        let _ = self.waiting.fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1));
    }

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
pub fn open(url: String, shown: String, report: impl Fn(LiveEvent) + Send + Sync + 'static) -> LiveHandle {
    let (outgoing, mut queue) = mpsc::unbounded_channel::<String>();
    let stop = CancellationToken::new();
    let waiting = Arc::new(AtomicUsize::new(0));
    let handle = LiveHandle { outgoing, stop: stop.clone(), waiting: Arc::clone(&waiting) };
    tokio::spawn(async move {
        let hand_over = |text: String| -> bool {
            if waiting.fetch_add(1, Ordering::AcqRel) >= MAX_WAITING {
                return false;
            }
            report(LiveEvent::Frame(text));
            true
        };
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
                    Some(Ok(Message::Text(text))) => {
                        if !hand_over(text.as_str().to_owned()) {
                            break format!("the server sent faster than the console reads ({MAX_WAITING} frames waiting)");
                        }
                    }
                    Some(Ok(Message::Binary(bytes))) => match String::from_utf8(bytes.to_vec()) {
                        Ok(text) => {
                            if !hand_over(text) {
                                break format!("the server sent faster than the console reads ({MAX_WAITING} frames waiting)");
                            }
                        }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A server that floods a console that takes nothing: the socket ends once `MAX_WAITING`
    /// frames wait, and says so, instead of queueing every frame.
    #[tokio::test]
    async fn a_console_that_falls_behind_ends_the_socket_instead_of_queueing() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        tokio::spawn(async move {
            let (stream, _) = listener.accept().await.unwrap();
            let mut socket = tokio_tungstenite::accept_async(stream).await.unwrap();
            for n in 0..(MAX_WAITING * 3) {
                if socket.send(Message::Text(format!("frame {n}").into())).await.is_err() {
                    break;
                }
            }
            // Held open: only the console's limit may end it.
            std::future::pending::<()>().await;
        });
        let (events, mut received) = mpsc::unbounded_channel();
        let _handle = open(format!("ws://{address}/"), "the test server".into(), move |event| {
            let _ = events.send(event);
        });
        let mut frames = 0;
        let why = loop {
            let event = tokio::time::timeout(Duration::from_secs(10), received.recv()).await;
            match event.expect("the socket ends within 10 s").expect("an event") {
                LiveEvent::Frame(_) => frames += 1,
                LiveEvent::Ended(why) => break why,
            }
        };
        assert_eq!(frames, MAX_WAITING);
        assert!(why.contains("faster than the console reads"), "{why}");
    }
}
