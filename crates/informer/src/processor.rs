//! Fans notifications out to listeners (client-go's `sharedProcessor`).

use std::sync::Arc;
use std::time::Duration;

use parking_lot::RwLock;
use tokio::time::Instant;

use crate::delivery::Notification;
use crate::listener::Listener;
use crate::notification::Batch;

/// The resync period a listener actually gets (client-go's `determineResyncPeriod`): none if it
/// asked for none or the informer never resyncs, and never less than the check period.
pub(crate) fn determine_resync_period(desired: Duration, check: Duration) -> Duration {
    if desired.is_zero() {
        return desired;
    }
    if check.is_zero() {
        tracing::warn!(
            ?desired,
            "resync period ignored: this informer does not resync"
        );
        return Duration::ZERO;
    }
    if desired < check {
        tracing::warn!(
            ?desired,
            ?check,
            "resync period raised to the resync check period"
        );
        return check;
    }
    desired
}

pub(crate) struct Processor<K> {
    listeners: RwLock<Vec<Arc<Listener<K>>>>,
    started: RwLock<bool>,
}

impl<K: Send + Sync + 'static> Processor<K> {
    pub(crate) fn new() -> Self {
        Processor {
            listeners: RwLock::new(Vec::new()),
            started: RwLock::new(false),
        }
    }

    /// Adds a listener; lets it deliver at once if the processor runs already.
    pub(crate) fn add_listener(&self, listener: Arc<Listener<K>>) {
        let started = self.started.read();
        if *started {
            listener.start();
        }
        self.listeners.write().push(listener);
    }

    /// Removes and closes a listener; unknown ids are fine (idempotent remove).
    pub(crate) fn remove_listener(&self, id: u64) -> Option<Arc<Listener<K>>> {
        let mut ls = self.listeners.write();
        let pos = ls.iter().position(|l| l.id == id)?;
        let l = ls.remove(pos);
        drop(ls);
        l.close();
        Some(l)
    }

    pub(crate) fn contains(&self, id: u64) -> bool {
        self.listeners.read().iter().any(|l| l.id == id)
    }

    pub(crate) fn len(&self) -> usize {
        self.listeners.read().len()
    }

    pub(crate) fn listeners(&self) -> Vec<Arc<Listener<K>>> {
        self.listeners.read().clone()
    }

    /// Sends each notification to every listener, or, for a resync (`true`), only to the
    /// listeners whose resync is due in this round: one shared batch, one buffer lock per
    /// listener.
    pub(crate) fn distribute_all(&self, notes: Vec<(Notification<K>, bool)>) {
        if notes.is_empty() {
            return;
        }
        let batch = Arc::new(Batch::new(notes, Instant::now()));
        for l in self.listeners.read().iter() {
            l.add_batch(&batch, l.syncing.load(std::sync::atomic::Ordering::Acquire));
        }
    }

    /// Wakes every listener with notifications waiting (appends do not wake: see
    /// [`Listener::wake`]).
    pub(crate) fn wake_all(&self) {
        for l in self.listeners.read().iter() {
            l.wake();
        }
    }

    /// Delivers to every [`DeliveryMode::Inline`](crate::DeliveryMode::Inline) listener what it
    /// has buffered, on this thread. No lock is held during the calls, so a handler may add or
    /// remove handlers.
    pub(crate) fn deliver_inline(&self) {
        let inline: Vec<_> = self
            .listeners
            .read()
            .iter()
            .filter(|l| l.is_inline())
            .cloned()
            .collect();
        for l in &inline {
            l.deliver_inline();
        }
    }

    /// Marks which listeners take part in the coming resync; true if any does
    /// (client-go's `shouldResync`).
    pub(crate) fn should_resync(&self) -> bool {
        let now = Instant::now();
        let mut any = false;
        for l in self.listeners.read().iter() {
            let due = l.should_resync(now);
            l.syncing.store(due, std::sync::atomic::Ordering::Release);
            if due {
                any = true;
                l.determine_next_resync(now);
            }
        }
        any
    }

    /// Re-derives every listener's period after the check period dropped (before start).
    pub(crate) fn resync_check_period_changed(&self, check: Duration) {
        for l in self.listeners.read().iter() {
            let mut r = l.resync.lock();
            r.period = determine_resync_period(r.requested, check);
        }
    }

    /// Lets every listener deliver.
    pub(crate) fn run(&self) {
        let mut started = self.started.write();
        *started = true;
        for l in self.listeners.read().iter() {
            l.start();
        }
    }

    /// Closes every listener and waits until their last handler calls have returned: no
    /// handler runs after this returns.
    pub(crate) async fn stop(&self) {
        let ls = {
            let mut started = self.started.write();
            *started = false;
            std::mem::take(&mut *self.listeners.write())
        };
        for l in &ls {
            l.close();
        }
        for l in &ls {
            l.wait_stopped().await;
        }
    }
}
