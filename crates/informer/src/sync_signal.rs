//! Event-driven waiting for "synced" conditions (no polling, unlike client-go's 100ms loop).

use tokio::sync::Notify;

/// Woken whenever something that a `has_synced` answer depends on changes.
#[derive(Default)]
pub(crate) struct SyncSignal {
    notify: Notify,
}

impl SyncSignal {
    pub(crate) fn notify(&self) {
        self.notify.notify_waiters();
    }

    /// Waits until `cond` holds; rechecks it after every notification.
    pub(crate) async fn wait_until(&self, mut cond: impl FnMut() -> bool) {
        loop {
            let notified = self.notify.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if cond() {
                return;
            }
            notified.await;
        }
    }
}
