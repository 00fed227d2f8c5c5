//! Errors of this crate: only a recorder's construction can fail (recording never does).

/// What was wrong with a recorder's identity.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum EventsError {
    /// The reporting controller is not a Kubernetes qualified name (the server would reject
    /// every event).
    #[error("invalid reporting controller {controller:?}: {problem}")]
    ReportingController {
        /// The name given.
        controller: String,
        /// What is wrong with it.
        problem: String,
    },
    /// The reporting instance is empty.
    #[error("the reporting instance may not be empty")]
    EmptyInstance,
}
