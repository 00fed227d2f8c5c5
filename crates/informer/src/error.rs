//! The informer's errors.

/// What an informer refuses.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum InformerError {
    /// A handler was added after the informer stopped (client-go words it the same way).
    #[error("handler was not added to shared informer {0:?} because it has stopped already")]
    Stopped(String),
    /// A setting that only applies before `run` was changed after it.
    #[error("informer {0:?} has already started: {1} must be set before run")]
    AlreadyStarted(String, &'static str),
    /// `run` was called twice.
    #[error("informer {0:?} is already running or has run; an informer runs once")]
    RunTwice(String),
    /// The indexer refused (duplicate index name, failing index function).
    #[error(transparent)]
    Store(#[from] kcache_store::StoreError),
}
