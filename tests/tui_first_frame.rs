//! The console draws its first frame before any simulator is built or seeded: each embedded
//! simulator is built off the UI thread the first time its tab is shown, and the tab says it is
//! starting meanwhile. A start hook that blocks until the first frame is seen proves the order.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use opsdeck::args::GlobalArgs;
use opsdeck::catalog::Service;
use opsdeck::config::Config;
use opsdeck::sandbox::{SandboxOptions, DEFAULT_SEED};
use opsdeck::tui::harness::Harness;

/// Each build the sandbox began: its service, and whether the console's first frame had been
/// drawn when the hook let it go on.
type Builds = Arc<Mutex<Vec<(Service, bool)>>>;

async fn console_with_a_blocking_hook() -> (Harness, Builds, Arc<AtomicBool>) {
    let builds: Builds = Arc::default();
    let drawn = Arc::new(AtomicBool::new(false));
    let (log, seen) = (builds.clone(), drawn.clone());
    let hook = Arc::new(move |service: Service| {
        // Blocks the build until the first frame is drawn, or gives up after 10 s (and says so).
        let deadline = Instant::now() + Duration::from_secs(10);
        while !seen.load(Ordering::SeqCst) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(2));
        }
        log.lock().expect("log").push((service, seen.load(Ordering::SeqCst)));
    });
    let options = SandboxOptions { start_hook: Some(hook), ..SandboxOptions::new(0, DEFAULT_SEED) };
    let env = |name: &str| (name == "COLORTERM").then(|| "truecolor".to_owned());
    let started = tokio::time::timeout(
        Duration::from_secs(5),
        opsdeck::tui::start_with_sandbox(Config::default(), &env, &GlobalArgs::default(), options),
    )
    .await
    .expect("the console starts without waiting for a simulator")
    .expect("the console starts");
    (Harness::over(started), builds, drawn)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_first_frame_is_drawn_before_any_simulator_is_built() {
    let (mut h, builds, drawn) = console_with_a_blocking_hook().await;
    assert!(builds.lock().unwrap().is_empty(), "nothing built while the console started");
    h.console.app.start_tab();
    let first = h.screen();
    drawn.store(true, Ordering::SeqCst);
    assert!(first.contains("starting the Ably simulator"), "the tab says it is starting:\n{first}");
    h.settle().await;
    assert_eq!(*builds.lock().unwrap(), [(Service::Ably, true)], "only the tab shown, after the first frame");
    let loaded = h.screen();
    assert!(loaded.contains("orders:eu") || loaded.contains("rows"), "the first resource loaded:\n{loaded}");
    assert!(!loaded.contains("starting the Ably simulator"), "{loaded}");
    assert!(!h.console.app.tabs[0].starting);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_tab_builds_only_its_own_simulator_on_its_first_visit() {
    let (mut h, builds, drawn) = console_with_a_blocking_hook().await;
    drawn.store(true, Ordering::SeqCst);
    h.console.app.start_tab();
    h.settle().await;
    let avatax = h.console.app.tabs.iter().position(|t| t.service == Service::Avatax).expect("an AvaTax tab");
    h.keys(&(avatax + 1).to_string());
    h.settle().await;
    h.keys(&(avatax + 1).to_string());
    h.keys("1");
    h.settle().await;
    let built: Vec<Service> = builds.lock().unwrap().iter().map(|(s, _)| *s).collect();
    assert_eq!(built, [Service::Ably, Service::Avatax], "a second visit builds nothing again");
}
