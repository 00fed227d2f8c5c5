//! What happens after a reconcile fails — and after it succeeds, so backoff is per key and resets
//! on success (unlike kube-runtime's `error_policy`, which never hears of successes:
//! kube-rs#1916, #297).

use std::error::Error as StdError;
use std::fmt;
use std::sync::Arc;

use kcache_core::BoxError;

use crate::action::Action;

/// Decides what follows a failed reconcile of an object, and hears of successful ones.
///
/// The controller's rate limiter keeps the per-key backoff: [`Action::requeue`] waits the
/// limiter's delay for the key, and every success (and every terminal error) clears that key's
/// backoff before [`on_success`](Self::on_success) is called. A closure
/// `Fn(Arc<K>, &E, Arc<Ctx>) -> Action` (kube-runtime's `error_policy`) is an `ErrorPolicy`.
pub trait ErrorPolicy<K, E, Ctx>: Send + Sync + 'static {
    /// The action after `error` reconciling `obj` (the last known object for a gone one).
    fn on_error(&self, obj: Arc<K>, error: &E, ctx: Arc<Ctx>) -> Action;

    /// `obj` was reconciled successfully (its backoff is already reset).
    fn on_success(&self, obj: &Arc<K>, ctx: &Arc<Ctx>) {
        let _ = (obj, ctx);
    }
}

impl<K, E, Ctx, F> ErrorPolicy<K, E, Ctx> for F
where
    F: Fn(Arc<K>, &E, Arc<Ctx>) -> Action + Send + Sync + 'static,
{
    fn on_error(&self, obj: Arc<K>, error: &E, ctx: Arc<Ctx>) -> Action {
        self(obj, error, ctx)
    }
}

/// The default policy: retry with the controller's rate limiter ([`Action::requeue`]) — client-go's
/// `DefaultControllerRateLimiter` unless the builder set another: 5 ms doubling up to 1000 s per
/// key, and at most 10 retries a second overall (burst 100).
#[derive(Debug, Clone, Copy, Default)]
pub struct DefaultErrorPolicy;

impl<K, E, Ctx> ErrorPolicy<K, E, Ctx> for DefaultErrorPolicy {
    fn on_error(&self, _: Arc<K>, _: &E, _: Arc<Ctx>) -> Action {
        Action::requeue()
    }
}

/// An error that retrying will not fix (controller-runtime's `reconcile.TerminalError`): the
/// controller records it (`controller_runtime_terminal_reconcile_errors_total`), clears the key's
/// backoff and does not retry until the object changes. The error policy is not asked.
///
/// Return it as your error, or anywhere in your error's `source()` chain.
#[derive(Debug)]
pub struct TerminalError(BoxError);

impl TerminalError {
    /// Marks `error` as terminal.
    pub fn new(error: impl Into<BoxError>) -> Self {
        TerminalError(error.into())
    }
}

impl fmt::Display for TerminalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "terminal error: {}", self.0)
    }
}

impl StdError for TerminalError {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        Some(&*self.0)
    }
}

/// Whether `error` is, or is caused by, a [`TerminalError`].
pub fn is_terminal(error: &(dyn StdError + 'static)) -> bool {
    let mut next = Some(error);
    while let Some(e) = next {
        if e.is::<TerminalError>() {
            return true;
        }
        next = e.source();
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    enum MyError {
        #[error("bad spec")]
        BadSpec(#[source] TerminalError),
        #[error("conflict")]
        Conflict,
    }

    #[test]
    fn terminal_errors_are_found_in_the_source_chain() {
        assert!(is_terminal(&TerminalError::new("no")));
        assert!(is_terminal(&MyError::BadSpec(TerminalError::new("no"))));
        assert!(!is_terminal(&MyError::Conflict));
    }

    #[test]
    fn the_default_policy_requeues_rate_limited() {
        let a = ErrorPolicy::<(), MyError, ()>::on_error(
            &DefaultErrorPolicy,
            Arc::new(()),
            &MyError::Conflict,
            Arc::new(()),
        );
        assert!(a.is_rate_limited_requeue());
    }
}
