//! A live push socket: a service's WebSocket (Ably's realtime connection, Deepgram's live
//! transcription), opened on the target's own host, so its credential (in the URL or a header)
//! goes nowhere else. It hands each text frame it reads to the console, sends the frames the
//! console gives it and any upload at its pace, and ends when its handle is dropped, the server
//! closes it, or a frame is larger than the console reads.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::{HeaderName, HeaderValue};
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::Message;
use tokio_util::sync::CancellationToken;

use super::credentials::Secret;

/// The largest frame read: a frame past it ends the socket.
pub const MAX_FRAME: usize = 4 << 20;
/// Frames handed to the console and not yet taken: past it the console has fallen behind a
/// server sending faster than it draws, and the socket ends rather than queue without bound.
pub const MAX_WAITING: usize = 1024;
/// How long opening the socket may take.
const OPEN_TIMEOUT: Duration = Duration::from_secs(10);

/// Bytes sent as binary frames at a steady pace once the socket opens (a file of audio at its
/// real speed), then text frames (the message that ends the stream).
pub struct Upload {
    pub bytes: Vec<u8>,
    /// The pace; each frame carries a tenth of a second of it.
    pub bytes_per_second: f64,
    pub then: Vec<String>,
}

/// How often an upload sends a frame.
pub const UPLOAD_EVERY: Duration = Duration::from_millis(100);

/// A socket to open: where, with which headers (a credential), how the console may name it
/// (no credential in it), and what it uploads.
pub struct Opening {
    pub url: String,
    pub headers: Vec<(String, Secret)>,
    pub shown: String,
    pub upload: Option<Upload>,
}

/// What the socket tells the console.
#[derive(Debug)]
pub enum LiveEvent {
    /// A text frame (a binary one is read as UTF-8 when it is).
    Frame(String),
    /// Bytes of the upload sent so far.
    Sent(usize),
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
    open_with(Opening { url, headers: Vec::new(), shown, upload: None }, report)
}

/// [`open`] with headers and an upload.
pub fn open_with(opening: Opening, report: impl Fn(LiveEvent) + Send + Sync + 'static) -> LiveHandle {
    let Opening { url, headers, shown, upload } = opening;
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
        let Ok(mut request) = url.as_str().into_client_request() else {
            return report(LiveEvent::Ended(format!("{shown} is not a WebSocket URL")));
        };
        for (name, value) in &headers {
            let (Ok(name), Ok(value)) = (HeaderName::try_from(name.as_str()), HeaderValue::from_str(value.expose()))
            else {
                return report(LiveEvent::Ended(format!("{shown}: a header cannot be sent as it is")));
            };
            request.headers_mut().insert(name, value);
        }
        let opening = tokio_tungstenite::connect_async_with_config(request, Some(config), false);
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
        let mut pace = tokio::time::interval(UPLOAD_EVERY);
        pace.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut upload = upload;
        let mut sent = 0usize;
        let why = loop {
            tokio::select! {
                () = stop.cancelled() => {
                    let _ = sink.close().await;
                    return;
                }
                _ = pace.tick(), if upload.is_some() => {
                    let Some(plan) = upload.as_mut() else { continue };
                    let chunk = ((plan.bytes_per_second * UPLOAD_EVERY.as_secs_f64()).round() as usize).max(1);
                    let end = sent.saturating_add(chunk).min(plan.bytes.len());
                    if end > sent {
                        let frame = plan.bytes[sent..end].to_vec();
                        if sink.send(Message::Binary(frame.into())).await.is_err() {
                            break "the connection broke".to_owned();
                        }
                        sent = end;
                        report(LiveEvent::Sent(sent));
                    }
                    if sent >= plan.bytes.len() {
                        for text in std::mem::take(&mut plan.then) {
                            if sink.send(Message::Text(text.into())).await.is_err() {
                                break;
                            }
                        }
                        upload = None;
                    }
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
                        break match frame {
                            None => "the server closed it".to_owned(),
                            Some(f) if f.reason.is_empty() => format!("the server closed it ({})", f.code),
                            // The reason is the server's text: the console makes it inert.
                            Some(f) => format!("the server closed it ({} {})", f.code, f.reason),
                        };
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
                LiveEvent::Sent(_) => {}
                LiveEvent::Ended(why) => break why,
            }
        };
        assert_eq!(frames, MAX_WAITING);
        assert!(why.contains("faster than the console reads"), "{why}");
    }

    /// An upload goes as binary frames of a tenth of a second of its pace each, in order, then
    /// its closing text; the header goes with the handshake; the close's reason is reported.
    #[tokio::test]
    async fn an_upload_is_sent_in_paced_frames_then_its_closing_message() {
        use tokio_tungstenite::tungstenite::handshake::server::{Request, Response};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let server = tokio::spawn(async move {
            let (stream, _) = listener.accept().await.unwrap();
            let mut authorization = None;
            #[allow(clippy::result_large_err, reason = "tungstenite's callback type")]
            let mut socket = tokio_tungstenite::accept_hdr_async(stream, |request: &Request, response: Response| {
                authorization = request.headers().get("authorization").map(|v| v.to_str().unwrap().to_owned());
                Ok(response)
            })
            .await
            .unwrap();
            let mut binary = Vec::new();
            let mut sizes = Vec::new();
            let closing = loop {
                match socket.next().await.unwrap().unwrap() {
                    Message::Binary(bytes) => {
                        sizes.push(bytes.len());
                        binary.extend_from_slice(&bytes);
                    }
                    Message::Text(text) => break text.to_string(),
                    _ => {}
                }
            };
            let frame = tokio_tungstenite::tungstenite::protocol::CloseFrame {
                code: tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode::Normal,
                reason: "done here".into(),
            };
            socket.close(Some(frame)).await.unwrap();
            (authorization, binary, sizes, closing)
        });
        let bytes: Vec<u8> = (0..2500u32).map(|i| (i % 251) as u8).collect();
        let opening = Opening {
            url: format!("ws://{address}/v1/listen"),
            headers: vec![("Authorization".into(), Secret::new("Token k"))],
            shown: "the test server".into(),
            upload: Some(Upload { bytes: bytes.clone(), bytes_per_second: 10_000.0, then: vec!["end".into()] }),
        };
        let (events, mut received) = mpsc::unbounded_channel();
        let _handle = open_with(opening, move |event| {
            let _ = events.send(event);
        });
        let mut sent = Vec::new();
        let why = loop {
            let event = tokio::time::timeout(Duration::from_secs(10), received.recv()).await;
            match event.expect("the socket ends within 10 s").expect("an event") {
                LiveEvent::Sent(n) => sent.push(n),
                LiveEvent::Frame(_) => {}
                LiveEvent::Ended(why) => break why,
            }
        };
        let (authorization, binary, sizes, closing) = server.await.unwrap();
        assert_eq!(authorization.as_deref(), Some("Token k"));
        assert_eq!(binary, bytes);
        assert_eq!(sizes, [1000, 1000, 500], "a tenth of a second of 10,000 bytes a second each");
        assert_eq!(sent, [1000, 2000, 2500]);
        assert_eq!(closing, "end");
        assert_eq!(why, "the server closed it (1000 done here)");
    }
}
