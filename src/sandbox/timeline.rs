//! The background task of a simulator whose state moves on its own (Mailgun's deliveries, EasyPost's
//! batches and trackers): it makes due steps happen on the sandbox clock and makes the webhook
//! POSTs they queued, sleeping until the next due time or until a request queues work, so an idle
//! sandbox costs no CPU.

use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;

use tokio::sync::{watch, Notify};
use tokio_util::sync::CancellationToken;

use super::outbox::{self, Delivery};
use super::{Platform, SandboxClock};

/// The task never sleeps longer than this, so a jump of the sandbox clock (`advance`) is noticed
/// soon even when nothing is due.
const MAX_SLEEP: Duration = Duration::from_millis(250);

/// What was due: the POSTs to make now (each with what the simulator needs to file its answer),
/// and when the next step or POST is due.
pub struct Due<T> {
    pub posts: Vec<(T, Delivery)>,
    pub next_ms: Option<i64>,
}

/// How far the background tasks of a sandbox have got: for each, the sandbox time by which it
/// has made every step and POST that was due. Whoever jumps the clock and then looks for what the
/// jump caused (a webhook POST) waits on this rather than for "long enough".
#[derive(Clone, Debug, Default)]
pub struct Progress(Arc<Mutex<Vec<Tracked>>>);

#[derive(Debug)]
struct Tracked {
    done_ms: watch::Receiver<i64>,
    wake: Weak<Notify>,
}

impl Progress {
    fn track(&self, done_ms: watch::Receiver<i64>, wake: &Arc<Notify>) {
        let mut tracked = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        // A dropped simulator's task is gone: nothing to wait for.
        tracked.retain(|t| t.wake.strong_count() > 0);
        tracked.push(Tracked { done_ms, wake: Arc::downgrade(wake) });
    }

    /// Waits until every background task has done all that was due by `at_ms`. The tasks are
    /// rung, so one asleep until a later due time looks at the clock now.
    pub async fn caught_up(&self, at_ms: i64) {
        let waits: Vec<(watch::Receiver<i64>, Option<Arc<Notify>>)> = {
            let tracked = self.0.lock().unwrap_or_else(PoisonError::into_inner);
            tracked.iter().map(|t| (t.done_ms.clone(), t.wake.upgrade())).collect()
        };
        for (mut done_ms, wake) in waits {
            if let Some(wake) = wake {
                wake.notify_one();
            }
            // An error is a task that ended (the sandbox stopped): it owes nothing more.
            let _ = done_ms.wait_for(|&done| done >= at_ms).await;
        }
    }
}

/// What a background task runs with: the sandbox clock, the bell request handlers ring when they
/// queue work, the loopback-only client its POSTs go through, the token that ends it, and where it
/// says how far it has got.
pub struct Engine {
    pub clock: SandboxClock,
    pub wake: Arc<Notify>,
    pub http: reqwest::Client,
    pub stop: CancellationToken,
    done_ms: watch::Sender<i64>,
}

impl Engine {
    pub fn new(platform: &Platform) -> Engine {
        let wake = Arc::new(Notify::new());
        let (done_ms, progress) = watch::channel(i64::MIN);
        platform.progress.track(progress, &wake);
        Engine {
            clock: platform.clock.clone(),
            wake,
            http: outbox::client(),
            stop: platform.stop.child_token(),
            done_ms,
        }
    }

    /// Tells the background task that work was queued.
    pub fn ring(&self) {
        self.wake.notify_one();
    }
}

/// A simulator's state as its background task sees it.
pub trait Timeline: Send + Sync + 'static {
    /// Where a POST came from (a region, an account), handed back with its answer.
    type Origin: Send + 'static;
    fn engine(&self) -> &Engine;
    /// Makes every step due by `now_ms` happen and takes the POSTs due by then.
    fn due(&self, now_ms: i64) -> Due<Self::Origin>;
    /// Files the answers (status, 0 for none) of POSTs made at `at_ms`.
    fn answered(&self, answers: Vec<(Self::Origin, Delivery, u16)>, at_ms: i64);
}

/// Spawns the background task of `timeline` on the current runtime, if there is one: without one
/// (a plain unit test) requests still run due steps themselves; only POSTs wait for a runtime.
pub fn spawn<T: Timeline>(timeline: &Arc<T>) {
    let stop = timeline.engine().stop.clone();
    if let Ok(runtime) = tokio::runtime::Handle::try_current() {
        runtime.spawn(run(Arc::downgrade(timeline), stop));
    } else {
        // No task will ever run: nobody may wait for it.
        timeline.engine().done_ms.send_replace(i64::MAX);
    }
}

/// Runs until `stop` or until the simulator is dropped.
async fn run<T: Timeline>(timeline: Weak<T>, stop: CancellationToken) {
    loop {
        let Some(strong) = timeline.upgrade() else {
            return;
        };
        let now = strong.engine().clock.now_ms();
        let Due { posts, next_ms } = strong.due(now);
        if !posts.is_empty() {
            let http = strong.engine().http.clone();
            let sends = posts.iter().map(|(_, d)| outbox::post(&http, d));
            let statuses = tokio::select! {
                statuses = futures_util::future::join_all(sends) => statuses,
                () = stop.cancelled() => return,
            };
            let at = strong.engine().clock.now_ms();
            let answers = posts.into_iter().zip(statuses).map(|((origin, d), status)| (origin, d, status)).collect();
            strong.answered(answers, at);
            continue;
        }
        strong.engine().done_ms.send_replace(now);
        let speed = strong.engine().clock.speed();
        let wait = next_ms.map(|due| {
            #[expect(
                clippy::cast_precision_loss,
                clippy::cast_possible_truncation,
                clippy::cast_sign_loss,
                reason = "clamped to MAX_SLEEP"
            )]
            let ms = ((due - now).max(1) as f64 / speed).ceil().min(MAX_SLEEP.as_millis() as f64) as u64;
            Duration::from_millis(ms)
        });
        let wake = Arc::clone(&strong.engine().wake);
        let notified = wake.notified();
        tokio::pin!(notified);
        // Registered before the simulator is let go, so a wake in between is not lost.
        notified.as_mut().enable();
        drop(strong);
        let sleep = async {
            match wait {
                Some(wait) => tokio::time::sleep(wait).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            () = stop.cancelled() => return,
            () = notified => {}
            () = sleep => {}
        }
    }
}
