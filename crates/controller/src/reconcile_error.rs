//! [`ReconcileError`]: one error type for a reconcile that needs none of its own.

use kcache_core::BoxError;

use crate::error_policy::TerminalError;
use crate::owner::OwnerError;

/// What kcache-controller's helpers and the API fail with, for a reconcile that has no error
/// type of its own (the part `kube::Error` plays for kube-runtime users): `?` converts an API
/// error, an [`OwnerError`] and a [`TerminalError`], and [`other`](Self::other) anything else.
///
/// The variants keep their error as the `source()`, so [`is_terminal`](crate::is_terminal)
/// finds a terminal error inside, and logs show the whole chain.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReconcileError {
    /// An API request failed.
    #[error("API request failed: {0}")]
    Api(#[source] kcache_core::Error),
    /// An owner reference could not be set.
    #[error("owner reference: {0}")]
    Owner(#[source] OwnerError),
    /// Retrying will not help until the object changes.
    #[error("{0}")]
    Terminal(#[source] TerminalError),
    /// Anything else the reconcile failed with.
    #[error("{0}")]
    Other(#[source] BoxError),
}

impl ReconcileError {
    /// Wraps any error (or message) the reconcile fails with.
    pub fn other(error: impl Into<BoxError>) -> Self {
        ReconcileError::Other(error.into())
    }
}

impl From<kcache_core::Error> for ReconcileError {
    fn from(e: kcache_core::Error) -> Self {
        ReconcileError::Api(e)
    }
}

impl From<OwnerError> for ReconcileError {
    fn from(e: OwnerError) -> Self {
        ReconcileError::Owner(e)
    }
}

impl From<TerminalError> for ReconcileError {
    fn from(e: TerminalError) -> Self {
        ReconcileError::Terminal(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::is_terminal;

    #[test]
    fn a_terminal_error_stays_terminal_in_any_variant() {
        assert!(is_terminal(&ReconcileError::from(TerminalError::new(
            "bad spec"
        ))));
        assert!(is_terminal(&ReconcileError::other(TerminalError::new(
            "bad spec"
        ))));
        assert!(!is_terminal(&ReconcileError::other("transient")));
        assert!(!is_terminal(&ReconcileError::from(
            kcache_core::Error::Cancelled
        )));
    }

    #[test]
    fn the_message_names_the_cause() {
        let e = ReconcileError::from(kcache_core::Error::Cancelled);
        assert_eq!(e.to_string(), "API request failed: cancelled");
        assert_eq!(ReconcileError::other("no quota").to_string(), "no quota");
    }
}
