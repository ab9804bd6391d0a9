//! Simulators built when first needed. Building and seeding a simulator costs milliseconds and
//! megabytes, so a sandbox binds its listeners at once but builds a service's simulator only when
//! a request reaches it (or the control port needs its state, or [`super::SandboxHandle::ensure`]
//! asks): once, on the blocking pool, with every request that comes meanwhile waiting for it.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

use axum::extract::Request;
use axum::response::Response;
use axum::Router;
use hyper_util::service::TowerToHyperService;
use tokio::sync::watch;

use super::{Platform, Simulator};
use crate::catalog::Service;

/// Called on the building thread just before a simulator is built, with its service (see
/// [`super::SandboxOptions::start_hook`]).
pub type StartHook = Arc<dyn Fn(Service) + Send + Sync>;

/// How one vendor's simulator is made.
pub(super) type Build = fn(&Platform) -> Arc<dyn Simulator>;

/// A simulator once built, with the routers it serves made once.
pub(super) struct Built {
    pub(super) simulator: Arc<dyn Simulator>,
    /// One per listener of the service (Mailgun: the US one and the EU one).
    routers: Vec<(Option<&'static str>, Router)>,
    /// Its routes under `/{service}/` on the control port.
    pub(super) control: Option<Router>,
}

impl Built {
    /// The router of the listener in `region` (the first one if there is none for `region`).
    pub(super) fn router(&self, region: Option<&str>) -> Option<&Router> {
        self.routers.iter().find(|(r, _)| *r == region).or_else(|| self.routers.first()).map(|(_, router)| router)
    }
}

/// One service's simulator, built the first time it is needed.
pub(super) struct Slot {
    service: Service,
    build: Build,
    /// Whether the simulator adds routes to the control port, known before it is built.
    control_routes: bool,
    platform: Platform,
    hook: Option<StartHook>,
    /// Set by whoever starts the build, so it starts once.
    started: AtomicBool,
    /// The simulator, or why it could not be built; set once by the building thread.
    done: OnceLock<Result<Built, String>>,
    /// Turns true once `done` is set: what requests arriving during the build wait on.
    ready: watch::Sender<bool>,
}

impl Slot {
    pub(super) fn new(
        service: Service,
        build: Build,
        control_routes: bool,
        platform: Platform,
        hook: Option<StartHook>,
    ) -> Slot {
        Slot {
            service,
            build,
            control_routes,
            platform,
            hook,
            started: AtomicBool::new(false),
            done: OnceLock::new(),
            ready: watch::Sender::new(false),
        }
    }

    pub(super) fn service(&self) -> Service {
        self.service
    }

    pub(super) fn has_control_routes(&self) -> bool {
        self.control_routes
    }

    /// The simulator if it is built, without building it.
    pub(super) fn built(&self) -> Option<&Built> {
        self.done.get().and_then(|done| done.as_ref().ok())
    }

    pub(super) fn is_ready(&self) -> bool {
        self.built().is_some()
    }

    /// Starts building the simulator on the blocking pool unless that has started already;
    /// does not wait for it. Must be called within a tokio runtime.
    pub(super) fn start(self: &Arc<Self>) {
        if self.started.swap(true, Ordering::AcqRel) {
            return;
        }
        let slot = Arc::clone(self);
        // Not awaited: the build finishes and is kept even when the request that started it
        // goes away (a client that disconnects mid-build would otherwise make the next
        // request build again).
        drop(tokio::task::spawn_blocking(move || slot.build_here()));
    }

    /// The simulator, built first if need be; waits for a build under way.
    pub(super) async fn get(self: &Arc<Self>) -> Result<&Built, String> {
        if let Some(done) = self.done.get() {
            return done.as_ref().map_err(Clone::clone);
        }
        // Subscribed before the build can finish, and a watch keeps its value: no wake is lost.
        let mut ready = self.ready.subscribe();
        self.start();
        // The sender lives as long as `self`, so this only ends when the value turns true.
        let _ = ready.wait_for(|ready| *ready).await;
        match self.done.get() {
            Some(done) => done.as_ref().map_err(Clone::clone),
            None => Err(format!("the {} simulator's build ended without a result", self.service.title())),
        }
    }

    /// Runs the hook and builds the simulator, on the blocking thread `start` gave it. A panic
    /// (of the hook or of the build) becomes the error every request to it gets.
    fn build_here(&self) {
        let service = self.service;
        let built = catch_unwind(AssertUnwindSafe(|| {
            if let Some(hook) = &self.hook {
                hook(service);
            }
            let simulator = (self.build)(&self.platform);
            let routers =
                super::regions(service).iter().map(|&region| (region, simulator.region_router(region))).collect();
            let control = simulator.control_router();
            Built { simulator, routers, control }
        }));
        let done = built.map_err(|panic| {
            let why = panic_text(panic.as_ref());
            let message = format!("the {} simulator could not be started: {why}", service.title());
            tracing::error!("{message}");
            message
        });
        // Only this thread sets it (`start` runs once), so it is empty here.
        let _ = self.done.set(done);
        self.ready.send_replace(true);
    }
}

/// Answers `request` with `router`, as if it had been routed there in the first place.
pub(super) async fn dispatch(router: &Router, request: Request) -> Response {
    use hyper::service::Service as _;
    match TowerToHyperService::new(router.clone()).call(request).await {
        Ok(response) => response,
        Err(never) => match never {},
    }
}

/// What a panic said, for the log and the 500 it becomes.
pub(super) fn panic_text(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "it panicked".to_owned())
}

/// [`dispatch`], with a panic of the simulator's handler caught and logged: `Err` says what
/// it said, for the caller to answer that one request with a 500 in the vendor's shape. The
/// other requests, and the process, carry on (the simulators' locks ignore poisoning).
pub(super) async fn dispatch_guarded(router: &Router, request: Request, service: Service) -> Result<Response, String> {
    use futures_util::FutureExt as _;
    let (method, path) = (request.method().clone(), request.uri().path().to_owned());
    AssertUnwindSafe(dispatch(router, request)).catch_unwind().await.map_err(|panic| {
        let why = panic_text(panic.as_ref());
        tracing::error!(service = service.name(), %method, path, "the simulator panicked on a request: {why}");
        why
    })
}
