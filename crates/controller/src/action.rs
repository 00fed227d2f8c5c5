//! What a reconcile asks for next (kube-runtime's `Action`, controller-runtime's `Result`).

use std::time::Duration;

/// What should happen to a key after its reconcile (or after its error, from the
/// [`ErrorPolicy`](crate::ErrorPolicy)).
///
/// Whatever the action, a change of the object (or of anything mapped to it) reconciles it again;
/// the action only says what happens if nothing changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Action(pub(crate) Next);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Next {
    After(Duration),
    RateLimited,
    AwaitChange,
}

impl Action {
    /// Reconcile again after `duration` (controller-runtime's `RequeueAfter`). A pending request
    /// of the same key keeps the earlier time.
    pub fn requeue_after(duration: Duration) -> Self {
        Action(Next::After(duration))
    }

    /// Reconcile again after the controller's rate limiter's delay for this key (controller-runtime's
    /// `Requeue: true`): backs off per key, and the backoff resets on the next success.
    pub fn requeue() -> Self {
        Action(Next::RateLimited)
    }

    /// Do nothing until the object (or something mapped to it) changes.
    pub fn await_change() -> Self {
        Action(Next::AwaitChange)
    }

    /// The delay asked for by [`requeue_after`](Self::requeue_after).
    pub fn requeue_after_duration(&self) -> Option<Duration> {
        match self.0 {
            Next::After(d) => Some(d),
            _ => None,
        }
    }

    /// Whether this is [`requeue`](Self::requeue).
    pub fn is_rate_limited_requeue(&self) -> bool {
        self.0 == Next::RateLimited
    }

    /// Whether this is [`await_change`](Self::await_change).
    pub fn is_await_change(&self) -> bool {
        self.0 == Next::AwaitChange
    }
}
