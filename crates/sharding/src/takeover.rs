//! Taking over a gone shard's Lease: how the sharder, in either mode, gets the right to act for a
//! shard that can no longer acknowledge.
//!
//! With the leader-election rules: once the sharder has seen the Lease unchanged for the lease
//! duration on its own clock (its Lease informer's events date each version), or released, it
//! writes itself as holder, conditional on that version. The shard's work had stopped
//! `lease_duration - renew_deadline` before that, and a shard coming back sees the sharder
//! holding its Lease and waits a lease duration before it acts. The take-over writes the Lease
//! afresh (its spec and the ring's label only), so range mode's assignment annotations on it are
//! gone with it: a shard returning to it has no ranges until the sharder deals it some.

use std::time::SystemTime;

use kcache_core::Error;
use kcache_leaderelection::{LeaderElectionRecord, Lease, LeaseClient, LeaseLock};
use tokio::time::Instant;

use crate::membership::ShardState;
use crate::passes::SharderContext;

impl SharderContext {
    /// Whether the objects of `shard` may be reassigned without its acknowledgement now: the
    /// sharder holds the shard's Lease (taking it over if it is gone).
    pub(crate) async fn may_move(&self, shard: &str, shards: &[ShardState]) -> Result<bool, Error> {
        if self.holds(shard) {
            return Ok(true);
        }
        let lock = LeaseLock::new(self.client.clone(), self.ring.lease_namespace(), shard)
            .with_labels(self.ring.lease_labels());
        let Some(state) = shards.iter().find(|s| s.name == shard) else {
            // No Lease at all: create it held by the sharder, so the shard cannot appear unseen.
            let sent = Instant::now();
            return match lock.create(&self.record(0)).await {
                Ok(_) => Ok(self.hold(shard, sent)),
                Err(e) if e.is_conflict() => Ok(false),
                Err(e) => Err(e),
            };
        };
        let holder = &state.record.holder_identity;
        let waited = self.leases.unchanged_for(shard, &state.resource_version);
        let duration = self
            .timing
            .lease_duration
            .max(state.record.lease_duration());
        let gone = holder.is_empty() || waited.is_some_and(|w| w >= duration);
        if !gone {
            return Ok(false);
        }
        let sent = Instant::now();
        let takeover = Lease {
            resource_version: state.resource_version.clone(),
            record: self.record(state.record.leader_transitions.saturating_add(1)),
        };
        // A LeaseLock updates from the copy it last read; this one read nothing, so it writes a
        // fresh Lease (with the ring's label) conditional on the version listed.
        match lock.update(&takeover).await {
            Ok(_) => {
                tracing::info!(ring = %self.ring.name(), %shard, "took over a gone shard's lease");
                Ok(self.hold(shard, sent))
            }
            Err(e) if e.is_conflict() => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Whether the sharder may still move `shard`'s objects directly.
    pub(crate) fn holds(&self, shard: &str) -> bool {
        self.held
            .lock()
            .get(shard)
            .is_some_and(|&until| Instant::now() < until)
    }

    fn hold(&self, shard: &str, sent: Instant) -> bool {
        let until = sent + self.timing.renew_deadline;
        self.held.lock().insert(shard.to_string(), until);
        Instant::now() < until
    }

    fn record(&self, transitions: u32) -> LeaderElectionRecord {
        let now = SystemTime::now();
        LeaderElectionRecord {
            holder_identity: self.identity.clone(),
            lease_duration_seconds: self.timing.lease_duration.as_secs_f64().ceil().max(1.0) as u32,
            acquire_time: Some(now),
            renew_time: Some(now),
            leader_transitions: transitions,
        }
    }
}
