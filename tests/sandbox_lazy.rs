//! Simulators built when first used: a sandbox binds its listeners at once and builds a
//! simulator on its first request (or `SandboxHandle::ensure`), once, on a blocking thread, with
//! the start hook seeing every build.

#![allow(clippy::unwrap_used, reason = "a test panics on failure")]

use std::sync::{mpsc, Arc, Mutex};
use std::thread::ThreadId;
use std::time::Duration;

use opsdeck::catalog::Service;
use opsdeck::sandbox::{self, credentials, Building, Sandbox, SandboxOptions, StartHook};
use serde_json::{json, Value};

/// Every build the hook saw: the service and the thread it ran on.
#[derive(Clone, Default)]
struct Builds(Arc<Mutex<Vec<(Service, ThreadId)>>>);

impl Builds {
    fn hook(&self) -> StartHook {
        let seen = Arc::clone(&self.0);
        Arc::new(move |service| seen.lock().unwrap().push((service, std::thread::current().id())))
    }

    fn services(&self) -> Vec<Service> {
        self.0.lock().unwrap().iter().map(|(s, _)| *s).collect()
    }
}

async fn start(options: SandboxOptions) -> Sandbox {
    sandbox::start_options(options).await.expect("sandbox starts")
}

fn lazy(hook: StartHook) -> SandboxOptions {
    SandboxOptions { start_hook: Some(hook), ..SandboxOptions::new(0, 11) }
}

fn client() -> reqwest::Client {
    reqwest::Client::builder().pool_max_idle_per_host(0).timeout(Duration::from_secs(60)).build().unwrap()
}

/// `GET /time` of Ably with the sandbox key: the cheapest request that needs the simulator.
async fn ably_time(http: &reqwest::Client, sandbox: &Sandbox) -> u16 {
    http.get(format!("{}/time", sandbox.base_url(Service::Ably)))
        .basic_auth(credentials::ABLY_KEY_NAME, Some(credentials::ABLY_KEY_SECRET))
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

async fn control(http: &reqwest::Client, sandbox: &Sandbox, method: reqwest::Method, path: &str) -> (u16, Value) {
    let response = http.request(method, format!("{}{path}", sandbox.control_url())).send().await.unwrap();
    let status = response.status().as_u16();
    (status, serde_json::from_slice(&response.bytes().await.unwrap()).unwrap_or(Value::Null))
}

#[tokio::test]
async fn nothing_is_built_until_a_request_reaches_its_listener() {
    let builds = Builds::default();
    let sandbox = start(lazy(builds.hook())).await;
    let handle = sandbox.handle();
    let http = client();
    assert_eq!(sandbox.endpoints.len(), 8, "every listener is bound at start");
    // The control port answers what it can without building anything.
    let (status, index) = control(&http, &sandbox, reqwest::Method::GET, "/").await;
    assert_eq!(status, 200);
    assert_eq!(
        index["services"][0],
        json!({"service": "ably", "base_url": sandbox.base_url(Service::Ably),
        "ready": false, "websocket_url": sandbox.base_url(Service::Ably).replace("http://", "ws://")})
    );
    for (method, path) in [
        (reqwest::Method::GET, "/requests"),
        (reqwest::Method::GET, "/faults"),
        (reqwest::Method::POST, "/reset?service=ably"),
        (reqwest::Method::POST, "/reset"),
        (reqwest::Method::DELETE, "/faults"),
    ] {
        let (status, body) = control(&http, &sandbox, method, path).await;
        assert_eq!(status, 200, "{path}: {body}");
    }
    let (_, reset) = control(&http, &sandbox, reqwest::Method::POST, "/reset").await;
    assert_eq!(reset, json!({"reset": ["ably", "deepgram", "avatax", "taxjar", "coinbase", "mailgun", "easypost"]}));
    sandbox.reset();
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(builds.services(), [], "nothing was built");
    assert!(Service::ALL.iter().all(|&s| !handle.is_ready(s)));

    // The first request builds Ably, and only Ably, once.
    assert_eq!(ably_time(&http, &sandbox).await, 200);
    assert_eq!(ably_time(&http, &sandbox).await, 200);
    assert_eq!(builds.services(), [Service::Ably]);
    assert!(handle.is_ready(Service::Ably));
    for other in [Service::Deepgram, Service::Avatax, Service::Taxjar, Service::Mailgun, Service::Easypost] {
        assert!(!handle.is_ready(other), "{other} was not asked for");
    }
    let (_, index) = control(&http, &sandbox, reqwest::Method::GET, "/").await;
    assert_eq!(index["services"][0]["ready"], true);
    assert_eq!(index["services"][2]["ready"], false);
    let (_, log) = control(&http, &sandbox, reqwest::Method::GET, "/requests?service=ably").await;
    assert_eq!(log["requests"].as_array().unwrap().len(), 2, "the building request is logged too: {log}");
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(builds.services(), [Service::Ably], "a service never asked for is never built");
    sandbox.shutdown();
}

#[tokio::test]
async fn the_hook_runs_on_a_blocking_thread_before_the_build_and_concurrent_first_requests_build_once() {
    let test_thread = std::thread::current().id();
    let (entered_tx, entered_rx) = mpsc::channel::<Service>();
    let (release_tx, release_rx) = mpsc::channel::<()>();
    let (entered_tx, release_rx) = (Mutex::new(entered_tx), Mutex::new(release_rx));
    let builds = Builds::default();
    let record = builds.hook();
    // Blocks its thread until released: had it run on the test's (only) runtime thread, nothing
    // below could run.
    let hook: StartHook = Arc::new(move |service| {
        record(service);
        entered_tx.lock().unwrap().send(service).unwrap();
        release_rx.lock().unwrap().recv().unwrap();
    });
    let sandbox = Arc::new(start(lazy(hook)).await);
    let handle = sandbox.handle();
    let http = client();
    let requests: Vec<_> = (0..8)
        .map(|_| {
            let (http, sandbox) = (http.clone(), Arc::clone(&sandbox));
            tokio::spawn(async move { ably_time(&http, &sandbox).await })
        })
        .collect();
    let ensured = tokio::spawn({
        let handle = handle.clone();
        async move { handle.ensure(Service::Ably).await }
    });
    // The hook is entered while the runtime goes on: the control port still answers.
    let entered =
        tokio::task::spawn_blocking(move || entered_rx.recv_timeout(Duration::from_secs(30)).map(|s| (s, entered_rx)));
    let (service, entered_rx) = entered.await.unwrap().expect("the hook ran");
    assert_eq!(service, Service::Ably);
    let (status, _) = control(&http, &sandbox, reqwest::Method::GET, "/faults").await;
    assert_eq!(status, 200, "the runtime is not held by the build");
    assert!(!handle.is_ready(Service::Ably), "the hook runs before the simulator is built");
    assert!(requests.iter().all(|r| !r.is_finished()) && !ensured.is_finished(), "requests wait for the build");
    // Time for every request to reach the listener while the build is held.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(requests.iter().all(|r| !r.is_finished()));
    release_tx.send(()).unwrap();
    for request in requests {
        assert_eq!(request.await.unwrap(), 200);
    }
    assert_eq!(ensured.await.unwrap(), Ok(()));
    assert!(handle.is_ready(Service::Ably));
    assert!(entered_rx.try_recv().is_err(), "built once");
    let seen = builds.0.lock().unwrap().clone();
    assert_eq!(seen.len(), 1, "{:?}", builds.services());
    assert_ne!(seen[0].1, test_thread, "the hook ran on another thread than the test's runtime");
    sandbox.shutdown();
}

#[tokio::test]
async fn ensure_builds_a_simulator_before_any_request() {
    let builds = Builds::default();
    let sandbox = start(lazy(builds.hook())).await;
    let handle = sandbox.handle();
    assert!(!handle.is_ready(Service::Taxjar));
    handle.ensure(Service::Taxjar).await.unwrap();
    assert!(handle.is_ready(Service::Taxjar));
    handle.ensure(Service::Taxjar).await.unwrap();
    // Only the service asked for is built.
    assert!(!handle.is_ready(Service::Deepgram));
    assert_eq!(builds.services(), [Service::Taxjar]);
    // Built, its state resets; and a handle moves to another thread.
    sandbox.reset();
    let moved = handle.clone();
    std::thread::spawn(move || assert!(moved.is_ready(Service::Taxjar))).join().unwrap();
    sandbox.shutdown();
}

#[tokio::test]
async fn mailgun_builds_once_for_both_regions_and_its_control_routes() {
    let builds = Builds::default();
    let sandbox = Arc::new(start(lazy(builds.hook())).await);
    let http = client();
    // A reset of a service never built does nothing, and builds nothing.
    let (status, body) = control(&http, &sandbox, reqwest::Method::POST, "/reset?service=mailgun").await;
    assert_eq!((status, body), (200, json!({"reset": ["mailgun"]})));
    let regions = [None, Some("eu")].map(|region| {
        let (http, sandbox) = (http.clone(), Arc::clone(&sandbox));
        tokio::spawn(async move {
            http.get(format!("{}/v3/domains", sandbox.region_base_url(Service::Mailgun, region)))
                .basic_auth("api", Some(credentials::MAILGUN_KEY))
                .send()
                .await
                .unwrap()
                .status()
                .as_u16()
        })
    });
    for region in regions {
        assert_eq!(region.await.unwrap(), 200);
    }
    let (status, body) = control(&http, &sandbox, reqwest::Method::GET, "/mailgun/webhooks").await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(builds.services(), [Service::Mailgun]);
    // EasyPost's control routes build EasyPost, and a path it does not have is the control
    // port's 404.
    let (status, _) = control(&http, &sandbox, reqwest::Method::GET, "/easypost/webhooks").await;
    assert_eq!(status, 200);
    let (status, body) = control(&http, &sandbox, reqwest::Method::GET, "/easypost/nothing").await;
    assert_eq!((status, body["error"].as_str()), (404, Some("not_found")));
    assert_eq!(builds.services(), [Service::Mailgun, Service::Easypost]);
    sandbox.shutdown();
}

#[tokio::test]
async fn faults_and_the_log_apply_to_the_request_that_builds() {
    let builds = Builds::default();
    let sandbox = start(lazy(builds.hook())).await;
    let http = client();
    let fault = json!({"service": "ably", "path": "/time", "status": 503, "count": 1});
    let added = http
        .post(format!("{}/faults", sandbox.control_url()))
        .header("content-type", "application/json")
        .body(fault.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(added.status().as_u16(), 201);
    assert_eq!(builds.services(), [], "adding a fault builds nothing");
    let failed = http.get(format!("{}/time", sandbox.base_url(Service::Ably))).send().await.unwrap();
    assert_eq!(failed.status().as_u16(), 503);
    assert_eq!(failed.headers()["x-ably-errorcode"], "50300", "the fault answers in Ably's shape");
    assert_eq!(ably_time(&http, &sandbox).await, 200);
    let (_, log) = control(&http, &sandbox, reqwest::Method::GET, "/requests?service=ably").await;
    let statuses: Vec<u64> =
        log["requests"].as_array().unwrap().iter().map(|r| r["status"].as_u64().unwrap()).collect();
    assert_eq!(statuses, [200, 503]);
    assert_eq!(builds.services(), [Service::Ably]);
    sandbox.shutdown();
}

#[tokio::test]
async fn a_build_that_panics_answers_500_and_the_rest_of_the_sandbox_goes_on() {
    let builds = Builds::default();
    let record = builds.hook();
    let hook: StartHook = Arc::new(move |service| {
        record(service);
        assert_ne!(service, Service::Avatax, "a simulator that cannot start");
    });
    let sandbox = start(lazy(hook)).await;
    let handle = sandbox.handle();
    let http = client();
    for _ in 0..2 {
        let response =
            http.get(format!("{}/api/v2/utilities/ping", sandbox.base_url(Service::Avatax))).send().await.unwrap();
        assert_eq!(response.status().as_u16(), 500);
        let body: Value = serde_json::from_slice(&response.bytes().await.unwrap()).unwrap();
        assert_eq!(body["error"], "simulator_failed");
        let message = body["message"].as_str().unwrap();
        assert!(
            message.contains("AvaTax simulator could not be started") && message.contains("cannot start"),
            "{message}"
        );
    }
    let error = handle.ensure(Service::Avatax).await.unwrap_err();
    assert!(error.contains("could not be started"), "{error}");
    assert!(!handle.is_ready(Service::Avatax));
    assert_eq!(ably_time(&http, &sandbox).await, 200, "other simulators still work");
    let (_, log) = control(&http, &sandbox, reqwest::Method::GET, "/requests?service=avatax").await;
    assert_eq!(log["requests"][0]["status"], 500);
    assert_eq!(builds.services(), [Service::Avatax, Service::Ably], "the failed build is not tried again");
    sandbox.shutdown();
}

#[tokio::test]
async fn at_start_every_simulator_is_built_without_a_request() {
    let builds = Builds::default();
    let sandbox = start(SandboxOptions { building: Building::AtStart, ..lazy(builds.hook()) }).await;
    let handle = sandbox.handle();
    for service in Service::ALL {
        handle.ensure(service).await.unwrap();
        assert!(handle.is_ready(service));
    }
    let mut built = builds.services();
    built.sort_by_key(|s| s.name());
    assert_eq!(
        built,
        [
            Service::Ably,
            Service::Avatax,
            Service::Coinbase,
            Service::Deepgram,
            Service::Easypost,
            Service::Mailgun,
            Service::Taxjar
        ]
    );
    sandbox.shutdown();
}

#[tokio::test]
async fn the_call_sandbox_serves_and_builds_only_the_service_called() {
    let builds = Builds::default();
    let options = SandboxOptions { start_hook: Some(builds.hook()), ..SandboxOptions::for_call(Service::Ably) };
    let sandbox = start(options).await;
    let handle = sandbox.handle();
    assert_eq!(sandbox.endpoints.iter().map(|e| e.service).collect::<Vec<_>>(), [Service::Ably]);
    handle.ensure(Service::Ably).await.unwrap();
    assert_eq!(ably_time(&client(), &sandbox).await, 200);
    assert!(handle.ensure(Service::Taxjar).await.is_err(), "not served");
    assert!(!handle.is_ready(Service::Taxjar));
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(builds.services(), [Service::Ably]);
    sandbox.shutdown();

    // Mailgun's call sandbox has both regions' listeners over its one simulator.
    let builds = Builds::default();
    let options = SandboxOptions { start_hook: Some(builds.hook()), ..SandboxOptions::for_call(Service::Mailgun) };
    let sandbox = start(options).await;
    let listeners: Vec<_> = sandbox.endpoints.iter().map(|e| (e.service, e.region)).collect();
    assert_eq!(listeners, [(Service::Mailgun, None), (Service::Mailgun, Some("eu"))]);
    sandbox.handle().ensure(Service::Mailgun).await.unwrap();
    assert_eq!(builds.services(), [Service::Mailgun]);
    sandbox.shutdown();

    let empty = SandboxOptions { services: Vec::new(), ..SandboxOptions::new(0, 1) };
    assert!(sandbox::start_options(empty).await.is_err(), "a sandbox serves something");
}
