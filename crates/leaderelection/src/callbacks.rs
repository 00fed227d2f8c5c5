//! [`LeaderCallbacks`]: what runs when this candidate starts or stops leading, and when any new
//! leader is observed (client-go's `LeaderCallbacks`).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

/// The work a leader does, as a boxed future.
pub(crate) type LeadingFuture = Pin<Box<dyn Future<Output = ()> + Send + 'static>>;
type Started = dyn Fn(CancellationToken) -> LeadingFuture + Send + Sync;
type Stopped = dyn Fn() + Send + Sync;
type NewLeader = dyn Fn(&str) + Send + Sync;

/// The callbacks of one candidate.
///
/// `on_started_leading` builds the leader's work from a token that fires when leadership is
/// lost (the renew deadline passed, someone else holds the lock) or the run is shut down. The
/// elector spawns that future and, once the token fired, waits for it to return before it
/// releases the lock or calls `on_stopped_leading`: unlike client-go, where the leading goroutine
/// may still run after `Run` returns, a released lock here means the work has stopped.
#[derive(Clone)]
pub struct LeaderCallbacks {
    pub(crate) started: Arc<Started>,
    pub(crate) stopped: Option<Arc<Stopped>>,
    pub(crate) new_leader: Option<Arc<NewLeader>>,
}

impl std::fmt::Debug for LeaderCallbacks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LeaderCallbacks")
            .field("on_stopped_leading", &self.stopped.is_some())
            .field("on_new_leader", &self.new_leader.is_some())
            .finish_non_exhaustive()
    }
}

impl LeaderCallbacks {
    /// Callbacks with the leader's work (client-go's `OnStartedLeading`).
    pub fn new<F, Fut>(on_started_leading: F) -> Self
    where
        F: Fn(CancellationToken) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        LeaderCallbacks {
            started: Arc::new(move |token| -> LeadingFuture {
                Box::pin(on_started_leading(token))
            }),
            stopped: None,
            new_leader: None,
        }
    }

    /// Called once a term of leadership has ended and the leading future has returned
    /// (client-go's `OnStoppedLeading`; client-go also calls it when the run ends without ever
    /// leading, kcache does not).
    pub fn on_stopped_leading(mut self, f: impl Fn() + Send + Sync + 'static) -> Self {
        self.stopped = Some(Arc::new(f));
        self
    }

    /// Called with the holder's identity each time a different holder is observed, this
    /// candidate included (client-go's `OnNewLeader`). An empty holder (a released lock) is not
    /// reported.
    pub fn on_new_leader(mut self, f: impl Fn(&str) + Send + Sync + 'static) -> Self {
        self.new_leader = Some(Arc::new(f));
        self
    }
}
