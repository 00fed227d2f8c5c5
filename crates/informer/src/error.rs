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
    /// A registration was handed to an informer that did not issue it (client-go's
    /// `RemoveEventHandler` refuses a handle that is not its own kind).
    #[error("handler registration {registration} belongs to informer {owner:?}, not to informer {informer:?}")]
    ForeignRegistration {
        /// The informer asked to remove the handler.
        informer: String,
        /// The informer that issued the registration.
        owner: String,
        /// The registration's id.
        registration: u64,
    },
    /// `shut_down_event_handler` was called from the handler it would wait for: waiting for its
    /// own last call to return would never end (client-go deadlocks; nothing is removed here).
    #[error("handler {registration} of informer {informer:?} cannot wait for its own shutdown from inside its own call; use remove_event_handler there")]
    ShutDownFromOwnHandler {
        /// The informer.
        informer: String,
        /// The registration's id.
        registration: u64,
    },
    /// The indexer refused (duplicate index name, failing index function).
    #[error(transparent)]
    Store(#[from] kcache_store::StoreError),
}
