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
