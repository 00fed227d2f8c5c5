//! Why a controller could not run.

use kcache_informer::InformerError;

/// Why a controller did not start or stopped early. A reconcile's own errors never end the
/// controller: they go to its [`ErrorPolicy`](crate::ErrorPolicy).
#[derive(Debug, thiserror::Error)]
pub enum ControllerError {
    /// Another running controller in this process has the same name (controller-runtime's
    /// unique-name check; pick another with `named`).
    #[error("a controller named {0:?} is already running in this process; give one of them another name with `named`")]
    DuplicateName(String),
    /// The builder was misconfigured.
    #[error("controller {controller:?} is misconfigured: {reason}")]
    Config {
        /// The controller's name.
        controller: String,
        /// What was wrong.
        reason: String,
    },
    /// An informer refused the controller's handler (e.g. it had already stopped).
    #[error("controller {controller:?}: {source}")]
    Informer {
        /// The controller's name.
        controller: String,
        /// The informer's error.
        #[source]
        source: InformerError,
    },
    /// An informer stopped before its cache synced.
    #[error(
        "controller {controller:?}: the informer {informer:?} stopped before its cache synced"
    )]
    NotSynced {
        /// The controller's name.
        controller: String,
        /// The informer's name.
        informer: String,
    },
}
