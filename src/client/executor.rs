//! The task pool: every call runs as a tokio task, at most N at once, and reports back through a
//! channel. The owner (the console, or a benchmark) keeps the book of calls and decides which
//! results still matter: a result that arrives after its cancel, or for a view that has since
//! been refreshed again, is dropped.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use tokio::sync::{mpsc, Semaphore};
use tokio_util::sync::CancellationToken;

use super::error::CallError;
use super::request::{execute, PreparedRequest};
use super::{Credentials, HttpSettings, Response};

/// Identifies one call for its whole life.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CallId(pub u64);

impl fmt::Display for CallId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#{}", self.0)
    }
}

/// Where a call is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CallState {
    /// Waiting for a free slot in the pool.
    Queued,
    InFlight,
    Done,
    Failed,
    Cancelled,
}

impl CallState {
    pub fn is_active(self) -> bool {
        matches!(self, CallState::Queued | CallState::InFlight)
    }
}

/// What a call task reports.
#[derive(Debug)]
pub enum CallEvent {
    Started(CallId),
    Finished(CallId, Result<Response, Arc<CallError>>),
}

/// A finished call whose result is still wanted.
#[derive(Debug)]
pub struct Delivered {
    pub id: CallId,
    pub label: String,
    pub slot: Option<String>,
    pub result: Result<Response, Arc<CallError>>,
}

struct Call {
    state: CallState,
    cancel: CancellationToken,
    label: String,
    slot: Option<String>,
}

/// Finished calls remembered for `state()`; older ones are forgotten.
const FINISHED_KEPT: usize = 256;

/// The pool and the book of calls. Lives on the UI thread; tasks only send events.
pub struct Executor {
    http: reqwest::Client,
    settings: HttpSettings,
    permits: Arc<Semaphore>,
    events: mpsc::UnboundedSender<CallEvent>,
    calls: HashMap<CallId, Call>,
    /// The newest call of each view ("slot"), so a refresh supersedes the one before it.
    slots: HashMap<String, CallId>,
    next_id: u64,
}

impl Executor {
    /// A pool running at most `max_concurrent` calls at once; events go to `events`.
    pub fn new(
        http: reqwest::Client,
        settings: HttpSettings,
        max_concurrent: usize,
        events: mpsc::UnboundedSender<CallEvent>,
    ) -> Executor {
        Executor {
            http,
            settings,
            permits: Arc::new(Semaphore::new(max_concurrent.max(1))),
            events,
            calls: HashMap::new(),
            slots: HashMap::new(),
            next_id: 1,
        }
    }

    /// Queues a call. With a `slot`, any active call of the same slot is cancelled: the newest
    /// request for a view wins. Must be called inside a tokio runtime.
    pub fn submit(
        &mut self,
        label: impl Into<String>,
        request: PreparedRequest,
        credentials: Credentials,
        slot: Option<String>,
    ) -> CallId {
        let id = CallId(self.next_id);
        self.next_id += 1;
        if let Some(previous) = slot.as_ref().and_then(|s| self.slots.insert(s.clone(), id)) {
            self.cancel(previous);
        }
        let cancel = CancellationToken::new();
        let label = label.into();
        tracing::debug!(call = %id, label = %label, slot = slot.as_deref().unwrap_or(""), "queued");
        self.calls.insert(id, Call { state: CallState::Queued, cancel: cancel.clone(), label, slot });
        let (http, settings, permits, events) =
            (self.http.clone(), self.settings, self.permits.clone(), self.events.clone());
        tokio::spawn(async move {
            let permit = tokio::select! {
                biased;
                () = cancel.cancelled() => None,
                permit = permits.acquire_owned() => permit.ok(),
            };
            let result = match permit {
                Some(_permit) => {
                    let _ = events.send(CallEvent::Started(id));
                    execute(&http, &request, &credentials, &settings, &cancel).await
                }
                None => Err(CallError::Cancelled),
            };
            // The owner may be gone (console closed): nothing left to tell.
            let _ = events.send(CallEvent::Finished(id, result.map_err(Arc::new)));
        });
        self.prune();
        id
    }

    /// Cancels a queued or in-flight call; its result, if it still arrives, is dropped.
    pub fn cancel(&mut self, id: CallId) -> bool {
        match self.calls.get_mut(&id) {
            Some(call) if call.state.is_active() => {
                tracing::debug!(call = %id, label = %call.label, "cancelling");
                call.state = CallState::Cancelled;
                call.cancel.cancel();
                true
            }
            _ => false,
        }
    }

    /// Cancels every active call; returns how many there were.
    pub fn cancel_all(&mut self) -> usize {
        let active: Vec<CallId> = self.active().map(|(id, _)| id).collect();
        active.into_iter().filter(|id| self.cancel(*id)).count()
    }

    /// Records an event; returns the result when it is still wanted.
    pub fn accept(&mut self, event: CallEvent) -> Option<Delivered> {
        match event {
            CallEvent::Started(id) => {
                if let Some(call) = self.calls.get_mut(&id).filter(|c| c.state == CallState::Queued) {
                    call.state = CallState::InFlight;
                }
                None
            }
            CallEvent::Finished(id, result) => {
                let call = self.calls.get_mut(&id)?;
                if !call.state.is_active() {
                    return None;
                }
                call.state = if result.is_ok() { CallState::Done } else { CallState::Failed };
                if let Some(slot) = &call.slot {
                    if self.slots.get(slot) == Some(&id) {
                        self.slots.remove(slot);
                    }
                }
                Some(Delivered { id, label: call.label.clone(), slot: call.slot.clone(), result })
            }
        }
    }

    pub fn state(&self, id: CallId) -> Option<CallState> {
        self.calls.get(&id).map(|c| c.state)
    }

    /// Active calls, oldest first, with their labels.
    pub fn active(&self) -> impl Iterator<Item = (CallId, &str)> {
        let mut active: Vec<(CallId, &str)> =
            self.calls.iter().filter(|(_, c)| c.state.is_active()).map(|(id, c)| (*id, c.label.as_str())).collect();
        active.sort_by_key(|(id, _)| *id);
        active.into_iter()
    }

    /// Calls queued or in flight.
    pub fn active_count(&self) -> usize {
        self.calls.values().filter(|c| c.state.is_active()).count()
    }

    pub fn in_flight_count(&self) -> usize {
        self.calls.values().filter(|c| c.state == CallState::InFlight).count()
    }

    fn prune(&mut self) {
        let finished = self.calls.len() - self.active_count();
        if finished <= FINISHED_KEPT {
            return;
        }
        let mut done: Vec<CallId> =
            self.calls.iter().filter(|(_, c)| !c.state.is_active()).map(|(id, _)| *id).collect();
        done.sort();
        for id in done.iter().take(finished - FINISHED_KEPT / 2) {
            self.calls.remove(id);
        }
    }
}
