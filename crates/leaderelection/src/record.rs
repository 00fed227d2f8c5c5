//! What the lock stores: client-go's `resourcelock.LeaderElectionRecord`, the spec of a
//! `coordination.k8s.io/v1` Lease.

use std::time::{Duration, SystemTime};

/// Who holds the lock and since when (client-go's `LeaderElectionRecord`; a Lease's `spec`).
///
/// The times are informational: they come from the writer's wall clock, so no candidate decides
/// anything from them. Expiry is judged on each candidate's own monotonic clock, from when it
/// saw the record change.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LeaderElectionRecord {
    /// The identity of the holder; empty when nobody holds the lock (after a release).
    pub holder_identity: String,
    /// How long the holder asks others to wait after its last renewal (`leaseDurationSeconds`).
    pub lease_duration_seconds: u32,
    /// When the current holder acquired the lock (`acquireTime`).
    pub acquire_time: Option<SystemTime>,
    /// When the holder last renewed (`renewTime`).
    pub renew_time: Option<SystemTime>,
    /// How many times the lock changed hands (`leaseTransitions`).
    pub leader_transitions: u32,
}

impl LeaderElectionRecord {
    /// The lease duration this record announces.
    pub fn lease_duration(&self) -> Duration {
        Duration::from_secs(u64::from(self.lease_duration_seconds))
    }
}

/// One stored Lease: its record and the resourceVersion an update must be conditional on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lease {
    /// `metadata.resourceVersion`: an update carrying an older one fails with 409 Conflict.
    pub resource_version: String,
    /// `spec`.
    pub record: LeaderElectionRecord,
}

/// `lease_duration` in whole seconds, rounded up so that nobody waits less than the holder's
/// configured duration.
pub(crate) fn whole_seconds(d: Duration) -> u32 {
    let secs = d.as_secs() + u64::from(d.subsec_nanos() > 0);
    u32::try_from(secs).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_round_up_to_whole_seconds() {
        assert_eq!(whole_seconds(Duration::from_secs(15)), 15);
        assert_eq!(whole_seconds(Duration::from_millis(1500)), 2);
        assert_eq!(whole_seconds(Duration::from_millis(1)), 1);
        let r = LeaderElectionRecord {
            lease_duration_seconds: 15,
            ..Default::default()
        };
        assert_eq!(r.lease_duration(), Duration::from_secs(15));
    }
}
