//! What the client tests of every simulated service share: the in-process sandbox, opsdeck's own
//! HTTP client, and one operation sent through `client::build` and `client::request::execute`
//! exactly as `opsdeck call` sends it.

#![allow(dead_code, reason = "each test file uses the part it needs")]

use opsdeck::catalog::Service;
use opsdeck::client::{self, CallError, HttpSettings, Response, Target, Values};
use opsdeck::config::sandbox_target;
use opsdeck::sandbox::{self, Sandbox};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

/// One service's simulator, running in-process, and a client for it with the sandbox credentials.
pub struct Simulated {
    pub service: Service,
    pub sandbox: Sandbox,
    pub http: reqwest::Client,
    pub target: Target,
}

impl Simulated {
    /// The whole sandbox (seed 7) started on free loopback ports, aimed at `service`.
    pub async fn start(service: Service) -> Simulated {
        let sandbox = sandbox::start(0, 7).await.expect("sandbox starts");
        let target = sandbox_target(service, sandbox.base_url(service));
        let http = client::http_client(&HttpSettings::default()).expect("client builds");
        Simulated { service, sandbox, http, target }
    }

    /// Sends operation `op` with `params` (and an optional `--body` document) as `target`.
    pub async fn send(
        &self,
        target: &Target,
        op: &str,
        params: &[(&str, &str)],
        body: Option<Value>,
    ) -> Result<Response, CallError> {
        let op = self.service.operation(op).expect("operation exists");
        let values: Values = params.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
        let request = client::build(op, &values, body.as_ref(), target)?;
        client::request::execute(
            &self.http,
            &request,
            &target.credentials,
            &HttpSettings::default(),
            &CancellationToken::new(),
        )
        .await
    }
}

/// A WAV written by hand (the same file the library's own tests use).
#[path = "../../src/sandbox/deepgram/test_wav.rs"]
mod test_wav;
#[allow(unused_imports, reason = "each test file uses the part it needs")]
pub use test_wav::tone_wav;

/// A WebSocket client's socket.
pub type Ws = tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// Sends `message` as a text frame.
pub async fn send_json(ws: &mut Ws, message: &Value) {
    use futures_util::SinkExt as _;
    let text = tokio_tungstenite::tungstenite::Message::Text(message.to_string().into());
    ws.send(text).await.expect("the socket takes a frame");
}

/// The next text frame, as JSON (frames of other kinds skipped); `None` once the socket closes.
/// Waits 10 s at most.
pub async fn next_json(ws: &mut Ws) -> Option<Value> {
    use futures_util::StreamExt as _;
    use tokio_tungstenite::tungstenite::Message;
    loop {
        let frame = tokio::time::timeout(std::time::Duration::from_secs(10), ws.next()).await.expect("a frame in 10 s");
        match frame? {
            Ok(Message::Text(text)) => return Some(serde_json::from_str(&text).expect("a JSON frame")),
            Ok(Message::Close(_)) | Err(_) => return None,
            Ok(_) => {}
        }
    }
}
