//! [`HealthzAdaptor`]: a liveness check that fails when this process believes it leads but has
//! not renewed for longer than the lease (client-go's `healthzadaptor.go`), so a wedged leader
//! gets restarted.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use crate::error::HealthError;

type Check = dyn Fn(Duration) -> Result<(), HealthError> + Send + Sync;

/// A health check to create before the elector and attach to it later, like client-go's
/// `NewLeaderHealthzAdaptor(timeout)` + `SetLeaderElection`.
///
/// Healthy while not attached, while not the leader, and while the last renewal is younger than
/// the lease duration plus `tolerance`.
#[derive(Clone)]
pub struct HealthzAdaptor {
    tolerance: Duration,
    check: Arc<OnceLock<Arc<Check>>>,
}

impl std::fmt::Debug for HealthzAdaptor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HealthzAdaptor")
            .field("tolerance", &self.tolerance)
            .field("attached", &self.check.get().is_some())
            .finish()
    }
}

impl HealthzAdaptor {
    /// An adaptor tolerating `tolerance` past the lease duration (client-go's
    /// `maxTolerableExpiredLease`).
    pub fn new(tolerance: Duration) -> Self {
        HealthzAdaptor {
            tolerance,
            check: Arc::new(OnceLock::new()),
        }
    }

    /// The check's name (`leaderElection`, as client-go's).
    pub fn name(&self) -> &'static str {
        "leaderElection"
    }

    /// Attaches the elector to check; the first attachment wins.
    pub fn set_leader_election<L: crate::LeaseClient>(&self, elector: &crate::LeaderElector<L>) {
        let elector = elector.clone();
        let _ = self
            .check
            .set(Arc::new(move |tolerance| elector.check(tolerance)));
    }

    /// Runs the check.
    pub fn check(&self) -> Result<(), HealthError> {
        match self.check.get() {
            Some(check) => check(self.tolerance),
            None => Ok(()),
        }
    }
}
