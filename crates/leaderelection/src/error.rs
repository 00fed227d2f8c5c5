//! The crate's errors: a configuration that breaks client-go's rules, and a failed health check.

/// A [`LeaderElectionConfig`](crate::LeaderElectionConfig) that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {problem}")]
pub struct ConfigError {
    /// The field at fault, e.g. `renew_deadline`.
    pub field: &'static str,
    /// What is wrong with it.
    pub problem: String,
}

/// The leader has not renewed its lease for longer than the lease duration plus the tolerance
/// (client-go's `HealthzAdaptor` error).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("failed election to renew leadership on lease {lock}: last renewed {since_renew:?} ago")]
pub struct HealthError {
    /// The lock's `namespace/name`.
    pub lock: String,
    /// Time since the last successful renewal.
    pub since_renew: std::time::Duration,
}
