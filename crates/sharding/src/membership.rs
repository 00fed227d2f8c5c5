//! Shard membership: each replica holds its own shard Lease, and the ring is the set of live ones.
//!
//! A shard Lease is a leader-election Lease with one candidate: its name is the replica's
//! identity, it carries the ring's label, and [`ShardLease`] holds it with kcache-leaderelection's
//! elector, so the same timing rules apply. The shard's work gets a token that fires
//! `renew_deadline` after the replica sent its last successful renewal, at least
//! `lease_duration - renew_deadline` before anyone may consider the shard gone; on a graceful
//! stop the work is awaited and then the Lease released (empty holder), so the shard is seen gone
//! at once. A shard that lost its Lease joins again as soon as it can renew, with a new term.
//!
//! The live set comes from the ring's Leases (the replica's Lease informer, or [`list_shards`]):
//! a Lease is live when its shard holds it and `renewTime + leaseDurationSeconds` is in the
//! future. That judgement uses the writer's
//! wall-clock timestamps, as timebertt's sharder does; the sharder only uses it to decide where
//! objects should go, never to let two shards act on one object (the drain handshake does that).

use std::time::SystemTime;

use kcache_core::{DynamicObject, Error, ListParams};
use kcache_leaderelection::{
    lease_from_object, leases, CancellationToken, ConfigError, LeaderCallbacks,
    LeaderElectionConfig, LeaderElectionRecord, LeaderElector, LeaseLock, RunEnd,
};
use kcache_transport::{Api, Client};

use crate::conventions::Ring;

/// One replica's shard Lease, held while the replica runs.
#[derive(Debug, Clone)]
pub struct ShardLease {
    elector: LeaderElector<LeaseLock>,
}

impl ShardLease {
    /// The shard Lease named `config.identity` in `ring`'s Lease namespace, labelled with the
    /// ring. `config`'s durations are the shard's lease rules (client-go's defaults: 15 s / 10 s /
    /// 2 s); it is always released on shutdown. Each term runs `callbacks`' work, whose token
    /// fires when the Lease is lost. Fails when the durations break client-go's rules.
    pub fn new(
        client: Client,
        ring: &Ring,
        mut config: LeaderElectionConfig,
        callbacks: LeaderCallbacks,
    ) -> Result<Self, ConfigError> {
        config.release_on_cancel = true;
        if config.name.is_empty() {
            config.name = format!("shard {} of ring {}", config.identity, ring.name());
        }
        let lock = LeaseLock::new(client, ring.lease_namespace(), &config.identity)
            .with_labels(ring.lease_labels());
        Ok(ShardLease {
            elector: LeaderElector::new(lock, config, callbacks)?,
        })
    }

    /// The shard's name: the replica's identity and its Lease's name.
    pub fn identity(&self) -> &str {
        &self.elector.config().identity
    }

    /// Whether the shard holds its Lease as last observed.
    pub fn is_held(&self) -> bool {
        self.elector.is_leader()
    }

    /// Holds the Lease until `shutdown` fires, then waits for the work and releases it. After a
    /// lost Lease (the renew deadline passed) it takes the Lease again and starts a new term.
    pub async fn run(&self, shutdown: CancellationToken) {
        while self.elector.run(shutdown.clone()).await == RunEnd::LeadershipLost {
            tracing::info!(shard = %self.identity(), "shard lease lost; joining the ring again");
        }
    }
}

/// One shard Lease of a ring as listed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShardState {
    /// The Lease's name: the shard's name on the ring.
    pub name: String,
    /// `metadata.resourceVersion` of the Lease.
    pub resource_version: String,
    /// Its spec.
    pub record: LeaderElectionRecord,
}

impl ShardState {
    /// The shard Lease `obj` (a `coordination.k8s.io/v1` Lease); fails when its spec does not
    /// read as a Lease.
    pub fn from_object(obj: &DynamicObject) -> Result<Self, Error> {
        let lease = lease_from_object(obj)?;
        Ok(ShardState {
            name: obj.metadata.name.clone(),
            resource_version: lease.resource_version,
            record: lease.record,
        })
    }

    /// Whether the shard is live at `now`: the shard holds its own Lease and its last renewal
    /// plus its lease duration lies after `now`. A released Lease (empty holder) is gone at once,
    /// and so is one the sharder took over (another holder).
    pub fn is_live(&self, now: SystemTime) -> bool {
        let r = &self.record;
        r.holder_identity == self.name
            && r.renew_time
                .and_then(|t| t.checked_add(r.lease_duration()))
                .is_some_and(|until| until > now)
    }
}

/// Every shard Lease of `ring` (live or not), by the ring's label selector.
pub async fn list_shards(client: &Client, ring: &Ring) -> Result<Vec<ShardState>, Error> {
    let leases = list_lease_objects(client, ring).await?;
    leases.iter().map(ShardState::from_object).collect()
}

/// Every shard Lease object of `ring`, listed (a fresh read, not a cache).
pub(crate) async fn list_lease_objects(
    client: &Client,
    ring: &Ring,
) -> Result<Vec<DynamicObject>, Error> {
    let api = Api::dynamic(client.clone(), leases(), Some(ring.lease_namespace()));
    let params = ListParams {
        label_selector: Some(ring.lease_selector()),
        ..ListParams::default()
    };
    Ok(api.list(&params).await?.items)
}

/// The names of the shards live at `now`, sorted: the members of the ring.
pub fn live_shards(shards: &[ShardState], now: SystemTime) -> Vec<String> {
    let mut live: Vec<String> = shards
        .iter()
        .filter(|s| s.is_live(now))
        .map(|s| s.name.clone())
        .collect();
    live.sort();
    live
}

/// The live shards a sharder's previous pass saw: a pass acts only once they are unchanged, as
/// replicas of a rollout start moments apart and a pass between their Leases would assign
/// everything to the first and then move most of it away.
#[derive(Debug, Default)]
pub(crate) struct Settling(parking_lot::Mutex<Option<Vec<String>>>);

impl Settling {
    /// Records `live`; whether the previous pass saw the same shards.
    pub(crate) fn settled(&self, live: &[String]) -> bool {
        self.0.lock().replace(live.to_vec()).as_deref() == Some(live)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn shard(name: &str, holder: &str, renewed_ago: u64, duration: u32) -> ShardState {
        ShardState {
            name: name.into(),
            resource_version: "1".into(),
            record: LeaderElectionRecord {
                holder_identity: holder.into(),
                lease_duration_seconds: duration,
                renew_time: Some(now() - Duration::from_secs(renewed_ago)),
                ..Default::default()
            },
        }
    }

    fn now() -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000)
    }

    #[test]
    fn a_shard_is_live_while_held_and_renewed_within_its_duration() {
        let shards = [
            shard("b", "b", 5, 15),
            shard("a", "a", 0, 15),
            shard("expired", "expired", 16, 15),
            shard("released", "", 0, 1),
            shard("taken", "sharder", 0, 15),
        ];
        assert!(shards[0].is_live(now()));
        assert!(!shards[2].is_live(now()));
        assert!(!shards[3].is_live(now()));
        assert!(!shards[4].is_live(now()));
        assert_eq!(live_shards(&shards, now()), ["a", "b"]);
        let never_renewed = ShardState {
            record: LeaderElectionRecord {
                renew_time: None,
                ..shards[0].record.clone()
            },
            ..shards[0].clone()
        };
        assert!(!never_renewed.is_live(now()));
    }
}
