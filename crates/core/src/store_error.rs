//! The typed error of every cache read and write, whoever implements the cache.

use std::sync::Arc;

use crate::{Error, Status};

/// What went wrong in a store, indexer or lister call (the error of [`crate::CacheReader`] and
/// [`crate::CacheWriter`]).
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// An index name that was never registered (client-go's wording).
    #[error("Index with name {0} does not exist")]
    IndexNotFound(String),
    /// `add_indexers` was given names that already exist (or the same name twice).
    #[error("indexer conflict: {0:?}")]
    IndexerConflict(Vec<String>),
    /// An index function failed; the write was rejected and the store left as it was.
    #[error("unable to calculate an index entry for key {key:?} on index {index:?}: {message}")]
    IndexFunc {
        /// The index whose function failed.
        index: String,
        /// The key of the object being written.
        key: String,
        /// The function's own message.
        message: String,
    },
    /// A custom key function failed (client-go's `KeyError`); the write was rejected.
    #[error("couldn't create key for object: {0}")]
    Key(String),
    /// A lister found no object by that name (client-go's `errors.NewNotFound(resource, name)`).
    #[error("{resource} {name:?} not found")]
    NotFound {
        /// The resource, e.g. `configmap` or `deployment.apps`.
        resource: String,
        /// The name looked up.
        name: String,
    },
    /// Any other failure of the store's own (a custom cache's backend, a FIFO's transformer).
    #[error(transparent)]
    Other(Arc<dyn std::error::Error + Send + Sync + 'static>),
}

impl StoreError {
    /// Wraps a failure that has no variant of its own.
    pub fn other(e: impl Into<crate::BoxError>) -> Self {
        StoreError::Other(Arc::from(e.into()))
    }

    /// Whether this is a lister's NotFound (client-go's `errors.IsNotFound`).
    pub fn is_not_found(&self) -> bool {
        matches!(self, StoreError::NotFound { .. })
    }
}

impl PartialEq for StoreError {
    /// Variants compare by value; two `Other`s are equal when they share one error.
    fn eq(&self, other: &Self) -> bool {
        use StoreError::*;
        match (self, other) {
            (IndexNotFound(a), IndexNotFound(b)) => a == b,
            (IndexerConflict(a), IndexerConflict(b)) => a == b,
            (
                IndexFunc {
                    index: i1,
                    key: k1,
                    message: m1,
                },
                IndexFunc {
                    index: i2,
                    key: k2,
                    message: m2,
                },
            ) => i1 == i2 && k1 == k2 && m1 == m2,
            (Key(a), Key(b)) => a == b,
            (
                NotFound {
                    resource: r1,
                    name: n1,
                },
                NotFound {
                    resource: r2,
                    name: n2,
                },
            ) => r1 == r2 && n1 == n2,
            (Other(a), Other(b)) => Arc::ptr_eq(a, b),
            _ => false,
        }
    }
}

impl Eq for StoreError {}

impl From<StoreError> for Error {
    /// NotFound becomes a 404 `Status` (so `is_not_found()` holds, as in client-go); everything
    /// else a rejected store write, with its variant kept.
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::NotFound { .. } => Status::failure(404, "NotFound", e.to_string()).into(),
            other => Error::Store(other),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_read_like_client_go() {
        assert_eq!(
            StoreError::IndexNotFound("byUser".into()).to_string(),
            "Index with name byUser does not exist"
        );
        let nf = StoreError::NotFound {
            resource: "configmap".into(),
            name: "x".into(),
        };
        assert_eq!(nf.to_string(), "configmap \"x\" not found");
        assert!(Error::from(nf).is_not_found());
        let e = Error::from(StoreError::Key("no name".into()));
        assert_eq!(e.to_string(), "couldn't create key for object: no name");
        assert!(matches!(e, Error::Store(StoreError::Key(_))));
    }

    #[test]
    fn other_keeps_the_message_and_compares_by_identity() {
        let e = StoreError::other("disk full");
        assert_eq!(e.to_string(), "disk full");
        assert_eq!(e, e.clone());
        assert_ne!(e, StoreError::other("disk full"));
    }
}
