//! The simulators: one stateful axum service per vendor, each on its own loopback port, plus a
//! control port that lists them and resets their state.

pub mod ably;
pub mod avatax;
pub mod credentials;
pub mod rng;
pub mod serve;

pub use self::serve::ServeLimits;

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::json;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use crate::catalog::Service;

/// The seed used when none is given, so the demo data is the same on every machine.
pub const DEFAULT_SEED: u64 = 42;
/// The control port; each service listens at `port_base + offset` (see [`port_offset`]).
pub const DEFAULT_PORT_BASE: u16 = 7700;

/// One vendor's simulator: a router serving the vendor's real paths, over state it can reset.
pub trait Simulator: Send + Sync {
    fn service(&self) -> Service;
    /// The routes, served at the root of the service's port.
    fn router(&self) -> Router;
    /// Restores the seeded state.
    fn reset(&self);
}

/// A service's listener. Mailgun has two: the US and the EU region.
#[derive(Clone, Debug)]
pub struct Endpoint {
    pub service: Service,
    /// `None`, or `Some("eu")` for Mailgun's EU listener.
    pub region: Option<&'static str>,
    pub addr: SocketAddr,
    pub simulated: bool,
}

impl Endpoint {
    /// Scheme, host and port: what opsdeck's catalog paths (which carry `/v2`, `/v3`) go after.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The base URL as the vendor's SDKs expect it: EasyPost's includes `/v2`.
    pub fn sdk_base_url(&self) -> String {
        match self.service {
            Service::Easypost => format!("{}/v2", self.base_url()),
            _ => self.base_url(),
        }
    }
}

/// Offset from the port base of each listener (control is 0).
pub fn port_offset(service: Service, region: Option<&str>) -> u16 {
    match (service, region) {
        (Service::Ably, _) => 1,
        (Service::Deepgram, _) => 2,
        (Service::Avatax, _) => 3,
        (Service::Taxjar, _) => 4,
        (Service::Coinbase, _) => 5,
        (Service::Mailgun, Some("eu")) => 7,
        (Service::Mailgun, _) => 6,
        (Service::Easypost, _) => 8,
    }
}

/// Every simulator that exists so far.
fn simulators(seed: u64) -> Vec<Arc<dyn Simulator>> {
    vec![Arc::new(ably::AblySimulator::new(seed)), Arc::new(avatax::AvataxSimulator::new(seed))]
}

/// The running sandbox. Dropping it does not stop it; call [`Sandbox::shutdown`].
pub struct Sandbox {
    pub control: SocketAddr,
    pub endpoints: Vec<Endpoint>,
    simulators: Vec<Arc<dyn Simulator>>,
    stop: CancellationToken,
}

impl Sandbox {
    /// The listener of a service (the US one for Mailgun).
    pub fn endpoint(&self, service: Service) -> &Endpoint {
        self.endpoints.iter().find(|e| e.service == service && e.region.is_none()).unwrap_or(&self.endpoints[0])
    }

    pub fn base_url(&self, service: Service) -> String {
        self.endpoint(service).base_url()
    }

    /// Restores every simulator's seeded state.
    pub fn reset(&self) {
        for sim in &self.simulators {
            sim.reset();
        }
    }

    pub fn shutdown(&self) {
        self.stop.cancel();
    }
}

/// Serves `router` on a free loopback port until the runtime ends; returns its base URL. For a
/// server of one's own beside the simulators: the fake upstreams of tests and benches.
pub async fn serve_loopback(router: Router) -> std::io::Result<String> {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await?;
    let address = listener.local_addr()?;
    tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    Ok(format!("http://{address}"))
}

/// Starts every listener on loopback with the default [`ServeLimits`]. `port_base` 0 picks free
/// ports.
pub async fn start(port_base: u16, seed: u64) -> std::io::Result<Sandbox> {
    start_with(port_base, seed, ServeLimits::DEFAULT).await
}

/// [`start`] with other limits, so tests can run into the timeouts quickly.
pub async fn start_with(port_base: u16, seed: u64, limits: ServeLimits) -> std::io::Result<Sandbox> {
    let simulators = simulators(seed);
    let stop = CancellationToken::new();
    let bind = |offset: u16| {
        let port = if port_base == 0 { 0 } else { port_base.saturating_add(offset) };
        TcpListener::bind(SocketAddr::from((Ipv4Addr::LOCALHOST, port)))
    };
    let mut endpoints = Vec::new();
    let mut listeners = Vec::new();
    for service in Service::ALL {
        let regions: &[Option<&'static str>] = if service == Service::Mailgun { &[None, Some("eu")] } else { &[None] };
        for &region in regions {
            let listener = bind(port_offset(service, region))
                .await
                .map_err(|e| std::io::Error::new(e.kind(), format!("cannot listen for {service}: {e}")))?;
            let simulator = simulators.iter().find(|s| s.service() == service).cloned();
            endpoints.push(Endpoint { service, region, addr: listener.local_addr()?, simulated: simulator.is_some() });
            let router = match simulator {
                Some(sim) => sim.router(),
                None => not_simulated_router(service),
            };
            listeners.push((listener, router));
        }
    }
    let control_listener =
        bind(0).await.map_err(|e| std::io::Error::new(e.kind(), format!("cannot listen for the control port: {e}")))?;
    let control = control_listener.local_addr()?;
    let shared = Arc::new(ControlState { endpoints: endpoints.clone(), simulators: simulators.clone() });
    listeners.push((control_listener, control_router(shared)));
    for (listener, router) in listeners {
        tokio::spawn(serve::serve(listener, router, limits, stop.clone()));
    }
    Ok(Sandbox { control, endpoints, simulators, stop })
}

struct ControlState {
    endpoints: Vec<Endpoint>,
    simulators: Vec<Arc<dyn Simulator>>,
}

fn control_router(state: Arc<ControlState>) -> Router {
    Router::new().route("/", get(control_index)).route("/reset", post(control_reset)).with_state(state)
}

async fn control_index(State(state): State<Arc<ControlState>>) -> Json<serde_json::Value> {
    let services: Vec<_> = state
        .endpoints
        .iter()
        .map(|e| {
            let name = match e.region {
                Some(region) => format!("{}-{region}", e.service),
                None => e.service.name().to_owned(),
            };
            json!({"service": name, "base_url": e.sdk_base_url(), "simulated": e.simulated})
        })
        .collect();
    Json(json!({ "services": services }))
}

async fn control_reset(State(state): State<Arc<ControlState>>) -> Json<serde_json::Value> {
    for sim in &state.simulators {
        sim.reset();
    }
    Json(json!({"reset": true}))
}

/// Every path of a service without a simulator yet answers 501 with a plain explanation.
fn not_simulated_router(service: Service) -> Router {
    Router::new().fallback(move || async move { not_simulated(service) })
}

fn not_simulated(service: Service) -> Response {
    let message = format!(
        "opsdeck sandbox does not simulate {} yet; set live credentials to call the real service",
        service.title()
    );
    (StatusCode::NOT_IMPLEMENTED, Json(json!({"error": "not_simulated", "message": message}))).into_response()
}
