//! The simulators: one stateful axum service per vendor, each on its own loopback port, plus a
//! control port that lists them and resets their state.
//!
//! The platform every simulator stands on lives beside them: [`clock`] (one sandbox clock,
//! `--speed`), [`request`] (query, bodies, credentials), [`errors`] (the per-vendor error
//! renderer), [`ids`], [`paging`] (each vendor's style), [`retention`] (age and count caps), and
//! the request log and fault injection applied to every simulator's router from outside.
//!
//! Starting a sandbox binds its listeners at once, so every base URL is known, but builds a
//! simulator only when first needed (`lazy`): its first request, its control routes, or
//! [`SandboxHandle::ensure`]; [`Building::AtStart`] builds them all as it starts.

pub mod ably;
pub mod access;
pub mod avatax;
pub mod clock;
pub mod coinbase;
pub mod control;
pub mod credentials;
pub mod deepgram;
pub mod easypost;
pub mod errors;
pub mod faults;
pub mod ids;
mod lazy;
pub mod mailgun;
pub mod outbox;
pub mod paging;
pub mod request;
pub mod request_log;
pub mod retention;
pub mod rng;
pub mod serve;
pub mod tax;
pub mod taxjar;
pub mod timeline;
pub mod ws;

pub use self::clock::SandboxClock;
pub use self::lazy::StartHook;
pub use self::serve::ServeLimits;

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;

use axum::http::StatusCode;
use axum::response::Response;
use axum::Router;

use self::faults::FaultBook;
use self::request_log::RequestLog;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use crate::catalog::Service;

/// The seed used when none is given, so the demo data is the same on every machine.
pub const DEFAULT_SEED: u64 = 42;
/// The control port; each service listens at `port_base + offset` (see [`port_offset`]).
pub const DEFAULT_PORT_BASE: u16 = 7700;

/// The variable naming the `--port-base` of the `opsdeck sandbox` that `opsdeck call` looks for
/// and `--profile local` points at; `off` stops the look-up.
pub const PORT_BASE_VAR: &str = "OPSDECK_SANDBOX_PORT_BASE";

/// The highest offset from a port base that a listener uses.
pub fn highest_port_offset() -> u16 {
    Service::ALL.into_iter().flat_map(|s| [port_offset(s, None), port_offset(s, Some("eu"))]).max().unwrap_or(0)
}

/// [`PORT_BASE_VAR`]'s value: `Some(base)` (unset: the default), `None` for `off`, or why it is
/// no port base an `opsdeck sandbox` can listen at.
pub fn port_base_from_var(value: Option<&str>) -> Result<Option<u16>, String> {
    match value.map(str::trim).filter(|v| !v.is_empty()) {
        None => Ok(Some(DEFAULT_PORT_BASE)),
        Some(off) if off.eq_ignore_ascii_case("off") => Ok(None),
        Some(text) => match text.parse::<u16>() {
            Ok(base) if base > 0 && base.checked_add(highest_port_offset()).is_some() => Ok(Some(base)),
            _ => Err(format!(
                "{PORT_BASE_VAR} must be the --port-base of an `opsdeck sandbox` (1 to {}) or off, not '{}'",
                u16::MAX - highest_port_offset(),
                crate::inert::inert(text)
            )),
        },
    }
}

/// What every simulator is built from: the seed of its demo data and the sandbox clock it
/// reads for every time-driven behaviour. Cheap to clone; a simulator keeps what it needs.
#[derive(Clone, Debug)]
pub struct Platform {
    pub seed: u64,
    pub clock: SandboxClock,
    /// How long (sandbox ms) a new Mailgun domain's DNS records take to appear (`--dns-delay`).
    pub dns_delay_ms: i64,
    /// Cancelled when the sandbox stops: background tasks of simulators end with it.
    pub stop: CancellationToken,
    /// The tax rate tables with a user's ZIP5 tables loaded (`--tax-rates`); `None`: the
    /// built-in ones.
    pub tax_tables: Option<Arc<tax::Table>>,
    /// How far the background tasks of its simulators have got.
    pub progress: timeline::Progress,
}

impl Platform {
    pub fn new(seed: u64, clock: SandboxClock) -> Platform {
        Platform {
            seed,
            clock,
            dns_delay_ms: DEFAULT_DNS_DELAY_MS,
            stop: CancellationToken::new(),
            tax_tables: None,
            progress: timeline::Progress::default(),
        }
    }

    /// The tax rate tables AvaTax and TaxJar calculate with. The built-in files are checked by
    /// `tax::tests`; were they broken, the build of the simulator asking fails (its requests get
    /// a 500 saying why) and nothing else.
    pub fn tax_table(&self) -> Arc<tax::Table> {
        match &self.tax_tables {
            Some(loaded) => Arc::clone(loaded),
            None => tax::builtin().unwrap_or_else(|why| panic!("the built-in tax tables are broken: {why}")),
        }
    }

    /// Real time (speed 1): for a simulator built on its own, in unit tests.
    pub fn real_time(seed: u64) -> Platform {
        Platform::new(seed, SandboxClock::real_time())
    }
}

/// The services whose simulators calculate tax, with [`Platform::tax_table`].
pub const TAX_SERVICES: [Service; 2] = [Service::Avatax, Service::Taxjar];

/// The default `--dns-delay` (and [`Platform::new`]'s): a minute, as long as a real DNS change
/// often takes to be seen.
pub const DEFAULT_DNS_DELAY_SECS: u64 = 60;
const DEFAULT_DNS_DELAY_MS: i64 = 60_000;
const _: () = assert!(DEFAULT_DNS_DELAY_MS == DEFAULT_DNS_DELAY_SECS as i64 * 1000);

/// One vendor's simulator: a router serving the vendor's real paths, over state it can reset.
/// Constructors take a [`Platform`]: `XSimulator::new(&platform)`.
pub trait Simulator: Send + Sync {
    fn service(&self) -> Service;
    /// The routes, served at the root of the service's port. The platform wraps them in the
    /// request log and fault injection; a simulator does neither itself.
    fn router(&self) -> Router;
    /// The routes of one regional listener (`Some("eu")` for Mailgun's EU port). Services with
    /// one listener keep the default.
    fn region_router(&self, region: Option<&'static str>) -> Router {
        let _ = region;
        self.router()
    }
    /// Routes the simulator adds to the control port, mounted under `/{service}` (Mailgun's
    /// `POST /mailgun/incoming`); none by default.
    fn control_router(&self) -> Option<Router> {
        None
    }
    /// Restores the seeded state.
    fn reset(&self);
    /// The vendor's own error answer for a bare `status`, so an injected fault looks to a
    /// client exactly like the real service failing. Usually
    /// `errors::render_status::<VendorError>(status, message)`.
    fn error_response(&self, status: StatusCode, message: &str) -> Response;
}

/// A service's listener. Mailgun has two: the US and the EU region.
#[derive(Clone, Debug)]
pub struct Endpoint {
    pub service: Service,
    /// `None`, or `Some("eu")` for Mailgun's EU listener.
    pub region: Option<&'static str>,
    pub addr: SocketAddr,
}

impl Endpoint {
    /// Scheme, host and port: what opsdeck's catalog paths (which carry `/v2`, `/v3`) go after.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Where the service's WebSocket is, for those that push: Ably's realtime connection and the
    /// Coinbase Exchange feed, each at the root of the service's port, and Deepgram's live
    /// transcription.
    pub fn websocket_url(&self) -> Option<String> {
        match (self.service, self.region) {
            (Service::Ably | Service::Coinbase, None) => Some(format!("ws://{}", self.addr)),
            (Service::Deepgram, None) => Some(format!("ws://{}/v1/listen", self.addr)),
            _ => None,
        }
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

/// The listeners of a service: Mailgun has the US one and the EU one.
fn regions(service: Service) -> &'static [Option<&'static str>] {
    match service {
        Service::Mailgun => &[None, Some("eu")],
        _ => &[None],
    }
}

/// A vendor's simulator: which service, how it is built, and whether it adds routes to the
/// control port (known before it is built, so the control port can route to it).
struct Kind {
    service: Service,
    build: lazy::Build,
    control_routes: bool,
}

/// Every service's simulator: one line each.
const SIMULATORS: [Kind; 7] = [
    Kind { service: Service::Ably, build: |p| Arc::new(ably::AblySimulator::new(p)), control_routes: true },
    Kind { service: Service::Deepgram, build: |p| Arc::new(deepgram::DeepgramSimulator::new(p)), control_routes: true },
    Kind { service: Service::Avatax, build: |p| Arc::new(avatax::AvataxSimulator::new(p)), control_routes: false },
    Kind { service: Service::Taxjar, build: |p| Arc::new(taxjar::TaxjarSimulator::new(p)), control_routes: false },
    Kind { service: Service::Coinbase, build: |p| Arc::new(coinbase::CoinbaseSimulator::new(p)), control_routes: true },
    Kind { service: Service::Mailgun, build: |p| Arc::new(mailgun::MailgunSimulator::new(p)), control_routes: true },
    Kind { service: Service::Easypost, build: |p| Arc::new(easypost::EasypostSimulator::new(p)), control_routes: true },
];

/// The running sandbox. Dropping it does not stop it; call [`Sandbox::shutdown`].
pub struct Sandbox {
    pub control: SocketAddr,
    /// Every listener, in [`Service::ALL`] order (Mailgun's US one before its EU one).
    pub endpoints: Vec<Endpoint>,
    handle: SandboxHandle,
    clock: SandboxClock,
    progress: timeline::Progress,
    stop: CancellationToken,
    /// Every port it listens on, which webhooks may not target (`outbox::claim_ports`).
    ports: Arc<[u16]>,
    /// The ZIP5 tables loaded into its tax tables, if any.
    tax_zip5: Option<tax::Zip5Summary>,
}

impl Sandbox {
    /// The listener of a service (the US one for Mailgun); the first listener if the sandbox
    /// does not serve `service` ([`SandboxOptions::services`]).
    pub fn endpoint(&self, service: Service) -> &Endpoint {
        self.endpoints.iter().find(|e| e.service == service && e.region.is_none()).unwrap_or(&self.endpoints[0])
    }

    /// The control port's base URL (`GET /requests`, `POST /reset`, `/faults`).
    pub fn control_url(&self) -> String {
        format!("http://{}", self.control)
    }

    pub fn base_url(&self, service: Service) -> String {
        self.endpoint(service).base_url()
    }

    /// The base URL of a service's listener in `region` (`Some("eu")`: Mailgun's EU region),
    /// else of its one listener.
    pub fn region_base_url(&self, service: Service, region: Option<&str>) -> String {
        self.endpoints
            .iter()
            .find(|e| e.service == service && e.region == region)
            .map_or_else(|| self.base_url(service), Endpoint::base_url)
    }

    /// Restores every built simulator's seeded state (one not built yet has nothing to restore).
    pub fn reset(&self) {
        for slot in self.handle.slots.iter() {
            if let Some(built) = slot.built() {
                built.simulator.reset();
            }
        }
    }

    /// Which tax rate tables AvaTax and TaxJar calculate with, in a line.
    pub fn tax_tables_line(&self) -> String {
        tax::tables_in_force(self.tax_zip5.as_ref())
    }

    /// The clock every simulator of this sandbox reads.
    pub fn clock(&self) -> &SandboxClock {
        &self.clock
    }

    /// Waits until the simulators' background tasks have done all that is due by the sandbox
    /// clock's now (their steps made, their webhook POSTs answered): after a jump of the clock,
    /// what the jump caused has happened.
    pub async fn caught_up(&self) {
        self.progress.caught_up(self.clock.now_ms()).await;
    }

    /// What builds simulators ahead of their first request and tells whether they are built,
    /// for another task or thread.
    pub fn handle(&self) -> SandboxHandle {
        self.handle.clone()
    }

    pub fn shutdown(&self) {
        if !self.stop.is_cancelled() {
            outbox::release_ports(&self.ports);
        }
        self.stop.cancel();
    }
}

/// A cheap handle on a sandbox's simulators: to build one before its first request (the console
/// when a tab is shown) or ask whether it is built. Clones share the same simulators.
#[derive(Clone)]
pub struct SandboxHandle {
    slots: Arc<[Arc<lazy::Slot>]>,
}

impl std::fmt::Debug for SandboxHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let ready: Vec<(Service, bool)> = self.slots.iter().map(|s| (s.service(), s.is_ready())).collect();
        f.debug_struct("SandboxHandle").field("ready", &ready).finish()
    }
}

impl SandboxHandle {
    fn slot(&self, service: Service) -> Option<&Arc<lazy::Slot>> {
        self.slots.iter().find(|s| s.service() == service)
    }

    /// Builds and seeds `service`'s simulator unless it is built (or waits for the build under
    /// way), and returns when it is ready to answer. An error for a simulator that could not be
    /// built (its requests get 500 with the same message) or that this sandbox does not serve.
    pub async fn ensure(&self, service: Service) -> Result<(), String> {
        match self.slot(service) {
            Some(slot) => slot.get().await.map(|_| ()),
            None => Err(format!("this sandbox does not serve {}", service.title())),
        }
    }

    /// Whether `service`'s requests are answered without waiting for a build: its simulator is
    /// built. False while it builds, after a failed build, and for a service this sandbox does
    /// not serve.
    pub fn is_ready(&self, service: Service) -> bool {
        self.slot(service).is_some_and(|slot| slot.is_ready())
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

/// When a sandbox builds its simulators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Building {
    /// Each when first needed: its first request, its control routes, or
    /// [`SandboxHandle::ensure`]. What the console and `opsdeck call` use.
    WhenUsed,
    /// All at once as the sandbox starts (on the blocking pool; [`start_options`] does not wait
    /// for them, [`SandboxHandle::ensure`] does): `opsdeck sandbox`, whose users point SDKs at
    /// every port.
    AtStart,
}

/// How to start a sandbox: what `opsdeck sandbox`'s flags set.
#[derive(Clone)]
pub struct SandboxOptions {
    /// The control port; each service at `port_base + offset`. 0 picks free ports.
    pub port_base: u16,
    pub seed: u64,
    /// The sandbox clock (its speed); a fresh real-time clock by default.
    pub clock: SandboxClock,
    pub limits: ServeLimits,
    /// Sandbox seconds before a new Mailgun domain's DNS records appear (`--dns-delay`).
    pub dns_delay_secs: u64,
    /// When simulators are built; [`Building::WhenUsed`] by default.
    pub building: Building,
    /// The services given listeners: every one by default; `opsdeck call` serves only the one
    /// it calls. Must not be empty.
    pub services: Vec<Service>,
    /// Called on the building thread just before each simulator is built, with its service.
    pub start_hook: Option<StartHook>,
    /// The tax rate tables with a user's ZIP5 tables loaded ([`tax::load_zip5`]); `None`: the
    /// built-in ones.
    pub tax_tables: Option<Arc<tax::Table>>,
    /// The hosts and web origins the user allows besides this machine's own programs
    /// (`[sandbox] hosts`, `origins`).
    pub access: access::Access,
}

impl std::fmt::Debug for SandboxOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SandboxOptions")
            .field("port_base", &self.port_base)
            .field("seed", &self.seed)
            .field("clock", &self.clock)
            .field("limits", &self.limits)
            .field("dns_delay_secs", &self.dns_delay_secs)
            .field("building", &self.building)
            .field("services", &self.services)
            .field("start_hook", &self.start_hook.is_some())
            .field("tax_tables", &self.tax_tables.as_ref().and_then(|t| t.zip5.as_ref()))
            .field("access", &self.access)
            .finish()
    }
}

impl SandboxOptions {
    pub fn new(port_base: u16, seed: u64) -> SandboxOptions {
        SandboxOptions {
            port_base,
            seed,
            clock: SandboxClock::real_time(),
            limits: ServeLimits::DEFAULT,
            dns_delay_secs: DEFAULT_DNS_DELAY_SECS,
            building: Building::WhenUsed,
            services: Service::ALL.to_vec(),
            start_hook: None,
            tax_tables: None,
            access: access::Access::default(),
        }
    }

    /// What `opsdeck call` starts to call `service` in the embedded sandbox: that service's
    /// listeners only (on free ports, the default seed), and only its simulator, whose build
    /// starts at once so that it overlaps the rest of the call's start.
    pub fn for_call(service: Service) -> SandboxOptions {
        SandboxOptions { building: Building::AtStart, services: vec![service], ..SandboxOptions::new(0, DEFAULT_SEED) }
    }
}

/// Starts every listener on loopback with the default [`ServeLimits`]; each simulator is built
/// when first used. `port_base` 0 picks free ports.
pub async fn start(port_base: u16, seed: u64) -> std::io::Result<Sandbox> {
    start_options(SandboxOptions::new(port_base, seed)).await
}

/// [`start`] with other limits, so tests can run into the timeouts quickly.
pub async fn start_with(port_base: u16, seed: u64, limits: ServeLimits) -> std::io::Result<Sandbox> {
    start_options(SandboxOptions { limits, ..SandboxOptions::new(port_base, seed) }).await
}

/// Starts a sandbox as `options` say. Returns once every listener is bound, without waiting for
/// any simulator to be built (see [`Building`]).
pub async fn start_options(options: SandboxOptions) -> std::io::Result<Sandbox> {
    let SandboxOptions {
        port_base,
        seed,
        clock,
        limits,
        dns_delay_secs,
        building,
        services,
        start_hook,
        tax_tables,
        access,
    } = options;
    let access = Arc::new(access);
    if services.is_empty() {
        return Err(std::io::Error::new(std::io::ErrorKind::InvalidInput, "a sandbox must serve at least one service"));
    }
    let stop = CancellationToken::new();
    let dns_delay_ms = i64::try_from(dns_delay_secs.saturating_mul(1000)).unwrap_or(i64::MAX);
    let tax_zip5 = tax_tables.as_ref().and_then(|t| t.zip5.clone());
    let platform = Platform { dns_delay_ms, stop: stop.clone(), tax_tables, ..Platform::new(seed, clock) };
    let slots: Vec<Arc<lazy::Slot>> = SIMULATORS
        .iter()
        .filter(|kind| services.contains(&kind.service))
        .map(|kind| {
            let (platform, hook) = (platform.clone(), start_hook.clone());
            Arc::new(lazy::Slot::new(kind.service, kind.build, kind.control_routes, platform, hook))
        })
        .collect();
    let log = Arc::new(RequestLog::default());
    let faults = Arc::new(FaultBook::new(seed));
    let bind = |offset: u16| {
        let port = if port_base == 0 { 0 } else { port_base.saturating_add(offset) };
        TcpListener::bind(SocketAddr::from((Ipv4Addr::LOCALHOST, port)))
    };
    let mut endpoints = Vec::new();
    let mut listeners = Vec::new();
    for service in Service::ALL.into_iter().filter(|s| services.contains(s)) {
        // Every service has a simulator (SIMULATORS lists all of `Service::ALL`, tested).
        let Some(slot) = slots.iter().find(|s| s.service() == service).cloned() else { continue };
        let work = Arc::new(tokio::sync::Semaphore::new(control::WORK_PER_SERVICE));
        for &region in regions(service) {
            let listener = bind(port_offset(service, region))
                .await
                .map_err(|e| std::io::Error::new(e.kind(), format!("cannot listen for {service}: {e}")))?;
            endpoints.push(Endpoint { service, region, addr: listener.local_addr()? });
            let observer = Arc::new(control::Observer {
                service,
                region,
                slot: Arc::clone(&slot),
                log: Arc::clone(&log),
                faults: Arc::clone(&faults),
                clock: platform.clock.clone(),
                access: Arc::clone(&access),
                work: Arc::clone(&work),
            });
            listeners.push((listener, control::observed(observer)));
        }
    }
    let control_listener =
        bind(0).await.map_err(|e| std::io::Error::new(e.kind(), format!("cannot listen for the control port: {e}")))?;
    let control = control_listener.local_addr()?;
    let shared = Arc::new(control::ControlState {
        port: control.port(),
        endpoints: endpoints.clone(),
        slots: slots.clone(),
        log,
        faults,
        clock: platform.clock.clone(),
        tax_zip5: tax_zip5.clone(),
    });
    listeners.push((control_listener, control::router(shared)));
    let ports: Vec<u16> = endpoints.iter().map(|e| e.addr.port()).chain([control.port()]).collect();
    outbox::claim_ports(&ports);
    for (listener, router) in listeners {
        tokio::spawn(serve::serve(listener, router, limits, stop.clone()));
    }
    if building == Building::AtStart {
        for slot in &slots {
            slot.start();
        }
    }
    let handle = SandboxHandle { slots: slots.into() };
    Ok(Sandbox {
        control,
        endpoints,
        handle,
        clock: platform.clock,
        progress: platform.progress,
        stop,
        ports: ports.into(),
        tax_zip5,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_service_has_exactly_one_simulator() {
        for service in Service::ALL {
            assert_eq!(SIMULATORS.iter().filter(|kind| kind.service == service).count(), 1, "{service}");
        }
        assert_eq!(SIMULATORS.len(), Service::ALL.len());
    }
}
