//! The worker loop: take a key, wait for the controller's own writes to reach the cache, read the
//! object, reconcile it (panics caught, time bounded), and schedule what comes next.
//!
//! The queue gives the scheduling rules: a key is never handed to two workers at once (a key
//! added while it is processing is reconciled again once, after); pending requests of a key
//! collapse into one, and of delayed ones the earliest time wins.

use std::collections::HashMap;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Duration;

use futures_util::FutureExt;
use parking_lot::Mutex;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use crate::action::{Action, Next};
use crate::cache::ObjectCache;
use crate::enqueue::WorkQueue;
use crate::error_policy::{is_terminal, ErrorPolicy};
use crate::metrics::ControllerMetrics;
use crate::read_your_writes::WriteTracker;
use crate::reconcile_request::ReconcileRequest;
use crate::BoxFuture;

/// A reconcile function, boxed.
pub(crate) type ReconcileFn<K, Ctx, E> =
    Arc<dyn Fn(Arc<K>, Arc<Ctx>) -> BoxFuture<Result<Action, E>> + Send + Sync>;

/// The last known state of deleted objects, kept until their "gone" reconcile.
pub(crate) type GoneObjects<K> = Arc<Mutex<HashMap<ReconcileRequest, Arc<K>>>>;

pub(crate) struct Runner<K, Ctx, E> {
    pub name: Arc<str>,
    pub cache: Arc<dyn ObjectCache<K>>,
    pub queue: WorkQueue,
    pub reconcile: ReconcileFn<K, Ctx, E>,
    pub gone: Option<ReconcileFn<K, Ctx, E>>,
    pub gone_objects: GoneObjects<K>,
    pub policy: Arc<dyn ErrorPolicy<K, E, Ctx>>,
    pub ctx: Arc<Ctx>,
    pub metrics: ControllerMetrics,
    pub writes: WriteTracker,
    pub reconcile_timeout: Option<Duration>,
    pub read_your_writes_timeout: Duration,
}

enum Outcome<E> {
    Done(Result<Action, E>),
    Panicked,
    TimedOut,
}

impl<K, Ctx, E> Runner<K, Ctx, E>
where
    K: Send + Sync + 'static,
    Ctx: Send + Sync + 'static,
    E: std::error::Error + Send + Sync + 'static,
{
    /// One worker: takes keys until `stop` fires or the queue shuts down; a reconcile in flight
    /// when `stop` fires finishes first.
    pub async fn worker(self: Arc<Self>, stop: CancellationToken) {
        loop {
            let request = tokio::select! {
                biased;
                () = stop.cancelled() => return,
                r = self.queue.get() => r,
            };
            let Some(request) = request else { return };
            self.metrics.active_workers.inc();
            let span = tracing::info_span!("reconcile", controller = %self.name, key = %request);
            self.process(&request).instrument(span).await;
            self.metrics.active_workers.dec();
            self.queue.done(&request);
        }
    }

    async fn process(&self, request: &ReconcileRequest) {
        self.writes
            .wait(request, self.read_your_writes_timeout)
            .await;
        let (obj, reconcile) = match self.cache.get(request.key()) {
            Some(obj) => (obj, &self.reconcile),
            None => {
                let last = self.gone_objects.lock().remove(request);
                match (last, &self.gone) {
                    (Some(last), Some(gone)) => (last, gone),
                    _ => {
                        tracing::debug!("not in the cache: nothing to reconcile");
                        self.queue.forget(request);
                        self.writes.forget(request);
                        return;
                    }
                }
            }
        };
        let start = Instant::now();
        let call = self
            .writes
            .scope(request, reconcile(obj.clone(), self.ctx.clone()));
        let call = AssertUnwindSafe(call).catch_unwind();
        let outcome = match self.reconcile_timeout {
            Some(limit) => match tokio::time::timeout(limit, call).await {
                Ok(r) => r.map_or(Outcome::Panicked, Outcome::Done),
                Err(_) => Outcome::TimedOut,
            },
            None => call.await.map_or(Outcome::Panicked, Outcome::Done),
        };
        self.metrics.time.observe(start.elapsed().as_secs_f64());
        let m = &self.metrics;
        match outcome {
            Outcome::Done(Ok(action)) => {
                self.queue.forget(request);
                self.policy.on_success(&obj, &self.ctx);
                match action.0 {
                    Next::After(_) => m.requeue_after.inc(),
                    Next::RateLimited => m.requeue.inc(),
                    Next::AwaitChange => m.success.inc(),
                }
                self.schedule(request, action);
            }
            Outcome::Done(Err(error)) => {
                m.error.inc();
                m.errors.inc();
                if is_terminal(&error) {
                    m.terminal.inc();
                    self.queue.forget(request);
                    tracing::error!(%error, "reconcile failed with a terminal error: not retried until the object changes");
                    return;
                }
                tracing::error!(%error, "reconcile failed");
                let action = self.policy.on_error(obj, &error, self.ctx.clone());
                self.schedule(request, action);
            }
            Outcome::Panicked => {
                m.error.inc();
                m.errors.inc();
                m.panics.inc();
                tracing::error!("reconcile panicked; retrying with backoff");
                self.queue.add_rate_limited(request.clone());
            }
            Outcome::TimedOut => {
                m.error.inc();
                m.errors.inc();
                m.timeouts.inc();
                tracing::error!(
                    timeout = ?self.reconcile_timeout,
                    "reconcile timed out; retrying with backoff"
                );
                self.queue.add_rate_limited(request.clone());
            }
        }
    }

    fn schedule(&self, request: &ReconcileRequest, action: Action) {
        match action.0 {
            Next::After(d) => self.queue.add_after(request.clone(), d),
            Next::RateLimited => self.queue.add_rate_limited(request.clone()),
            Next::AwaitChange => {}
        }
    }
}
