//! The one error type of this crate.

/// What went wrong in a store, indexer or lister call.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
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
}

impl StoreError {
    /// Whether this is a lister's NotFound (client-go's `errors.IsNotFound`).
    pub fn is_not_found(&self) -> bool {
        matches!(self, StoreError::NotFound { .. })
    }
}

impl From<StoreError> for kcache_core::Error {
    /// NotFound becomes a 404 `Status` (so `is_not_found()` holds, as in client-go); everything else
    /// a rejected store write.
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::NotFound { .. } => {
                kcache_core::Status::failure(404, "NotFound", e.to_string()).into()
            }
            other => kcache_core::Error::Store(other.to_string()),
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
        assert!(kcache_core::Error::from(nf).is_not_found());
        let e = kcache_core::Error::from(StoreError::Key("no name".into()));
        assert_eq!(
            e.to_string(),
            "store: couldn't create key for object: no name"
        );
    }
}
