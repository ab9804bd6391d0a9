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

/// A WAV written by hand, independently of the Deepgram simulator's own writer: `seconds` of 16-bit PCM at `rate`, interleaved; channel `c` holds a tone of 440 × (c + 1) Hz.
pub fn tone_wav(seconds: f64, rate: u32, channels: u16) -> Vec<u8> {
    let frames = (seconds * f64::from(rate)).round() as u32;
    let data_len = frames * u32::from(channels) * 2;
    let mut out = Vec::with_capacity(44 + data_len as usize);
    out.extend_from_slice(b"RIFF");
    out.extend_from_slice(&(36 + data_len).to_le_bytes());
    out.extend_from_slice(b"WAVEfmt ");
    out.extend_from_slice(&16u32.to_le_bytes());
    out.extend_from_slice(&1u16.to_le_bytes());
    out.extend_from_slice(&channels.to_le_bytes());
    out.extend_from_slice(&rate.to_le_bytes());
    out.extend_from_slice(&(rate * u32::from(channels) * 2).to_le_bytes());
    out.extend_from_slice(&(channels * 2).to_le_bytes());
    out.extend_from_slice(&16u16.to_le_bytes());
    out.extend_from_slice(b"data");
    out.extend_from_slice(&data_len.to_le_bytes());
    for i in 0..frames {
        let t = f64::from(i) / f64::from(rate);
        for c in 0..channels {
            let hz = 440.0 * f64::from(c + 1);
            out.extend_from_slice(&(((t * hz * std::f64::consts::TAU).sin() * 8000.0) as i16).to_le_bytes());
        }
    }
    out
}
