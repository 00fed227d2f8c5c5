//! The sharder: assigns objects of the sharded kinds to the live shards and moves them when the
//! ring changes. One replica runs it at a time (elected by [`Sharding`](crate::Sharding)); every
//! write is conditional on the resourceVersion it read, so even two sharders at once cannot let
//! two shards act on one object.
//!
//! Each pass lists the ring's Leases and the sharded objects and, per object:
//!
//! - unassigned (no shard label): assign the ring's owner (and clear a stale drain label);
//! - assigned to its owner: nothing;
//! - assigned to another shard: if the sharder holds that shard's Lease (below), reassign at
//!   once; else set the drain label and wait for the shard to acknowledge by removing both labels,
//!   after which the object is unassigned and the next pass assigns it.
//!
//! A shard that is gone cannot acknowledge. The sharder then takes over its Lease, with the
//! leader-election rules: once it has seen the Lease unchanged for the lease duration on its own
//! clock (or released), it writes itself as holder, conditional on that version. The shard's work
//! had stopped `lease_duration - renew_deadline` before that, and a shard coming back sees the
//! sharder holding its Lease and waits a lease duration before it acts; the sharder reassigns the
//! gone shard's objects directly only until `renew_deadline` after it sent the take-over, and
//! drains them again after that.

use std::collections::HashMap;
use std::time::{Duration, SystemTime};

use kcache_core::{ApiResource, DynamicObject, Error, ListParams, Object};
use kcache_leaderelection::{
    CancellationToken, LeaderElectionRecord, Lease, LeaseClient, LeaseLock,
};
use kcache_transport::{Api, Client, Patch, PatchParams};
use parking_lot::Mutex;
use serde_json::{json, Map, Value};
use tokio::time::Instant;

use crate::conventions::Ring;
use crate::key::ShardKey;
use crate::membership::{list_shards, live_shards, ShardState};
use crate::ring::HashRing;

/// One sharded kind: its resource, where to look and how its objects are keyed.
#[derive(Debug, Clone)]
pub(crate) struct ShardedKind {
    pub resource: ApiResource,
    pub namespace: Option<String>,
    pub key: ShardKey<DynamicObject>,
}

/// Timing the sharder shares with the shards' Leases.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Timing {
    pub lease_duration: Duration,
    pub renew_deadline: Duration,
    pub sync_period: Duration,
}

/// What one pass did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Pass {
    pub assigned: usize,
    pub drained: usize,
    pub moved: usize,
}

pub(crate) struct Sharder {
    client: Client,
    ring: Ring,
    identity: String,
    kinds: Vec<ShardedKind>,
    timing: Timing,
    /// Each shard Lease's resourceVersion and when this sharder first saw it.
    seen: Mutex<HashMap<String, (String, Instant)>>,
    /// Shards whose Lease this sharder holds, until when it may move their objects directly.
    held: Mutex<HashMap<String, Instant>>,
}

impl Sharder {
    pub(crate) fn new(
        client: Client,
        ring: Ring,
        identity: String,
        kinds: Vec<ShardedKind>,
        timing: Timing,
    ) -> Self {
        Sharder {
            client,
            ring,
            identity,
            kinds,
            timing,
            seen: Mutex::new(HashMap::new()),
            held: Mutex::new(HashMap::new()),
        }
    }

    /// Passes every sync period until `stop` fires.
    pub(crate) async fn run(&self, stop: CancellationToken) {
        tracing::info!(ring = %self.ring.name(), sharder = %self.identity, "sharder started");
        while !stop.is_cancelled() {
            match self.pass(&stop).await {
                Ok(p) if p != Pass::default() => {
                    tracing::debug!(ring = %self.ring.name(), ?p, "sharder pass")
                }
                Ok(_) => {}
                Err(e) => tracing::warn!(ring = %self.ring.name(), "sharder pass failed: {e}"),
            }
            tokio::select! {
                _ = stop.cancelled() => {}
                _ = tokio::time::sleep(self.timing.sync_period) => {}
            }
        }
    }

    /// One pass over the Leases and every sharded object.
    pub(crate) async fn pass(&self, stop: &CancellationToken) -> Result<Pass, Error> {
        let shards = list_shards(&self.client, &self.ring).await?;
        self.observe(&shards);
        let ring = HashRing::new(live_shards(&shards, SystemTime::now()));
        let mut pass = Pass::default();
        if ring.is_empty() {
            return Ok(pass);
        }
        for kind in &self.kinds {
            let api = Api::<DynamicObject>::dynamic(
                self.client.clone(),
                kind.resource.clone(),
                kind.namespace.as_deref(),
            );
            for obj in api.list(&ListParams::default()).await?.items {
                if stop.is_cancelled() {
                    return Ok(pass);
                }
                if let Err(e) = self.place(kind, &ring, &shards, &obj, &mut pass).await {
                    if !e.is_conflict() && !e.is_not_found() {
                        tracing::warn!(ring = %self.ring.name(), object = %obj.name(), "placing failed: {e}");
                    }
                }
            }
        }
        Ok(pass)
    }

    async fn place(
        &self,
        kind: &ShardedKind,
        ring: &HashRing,
        shards: &[ShardState],
        obj: &DynamicObject,
        pass: &mut Pass,
    ) -> Result<(), Error> {
        let Some(owner) = ring.owner_of(&kind.key.key(obj)) else {
            return Ok(());
        };
        let shard_label = self.ring.shard_label();
        let drain_label = self.ring.drain_label();
        let draining = obj.label(&drain_label).is_some();
        match obj.label(&shard_label) {
            None => {
                self.label(kind, obj, Some(owner), false).await?;
                pass.assigned += 1;
            }
            Some(current) if current == owner => {}
            Some(current) => {
                if self.may_move(current, shards).await? {
                    self.label(kind, obj, Some(owner), false).await?;
                    pass.moved += 1;
                } else if !draining {
                    self.label(kind, obj, Some(current), true).await?;
                    pass.drained += 1;
                }
            }
        }
        Ok(())
    }

    /// Writes the shard label (`None`: removed) and the drain label, conditional on `obj`'s
    /// resourceVersion.
    async fn label(
        &self,
        kind: &ShardedKind,
        obj: &DynamicObject,
        shard: Option<&str>,
        drain: bool,
    ) -> Result<(), Error> {
        let api = Api::<DynamicObject>::dynamic(
            self.client.clone(),
            kind.resource.clone(),
            obj.namespace(),
        );
        let labels = Map::from_iter([
            (
                self.ring.shard_label(),
                shard.map_or(Value::Null, |s| json!(s)),
            ),
            (
                self.ring.drain_label(),
                if drain { json!("true") } else { Value::Null },
            ),
        ]);
        let patch = json!({"metadata": {
            "labels": labels,
            "resourceVersion": obj.resource_version(),
        }});
        api.patch(obj.name(), &PatchParams::default(), &Patch::Merge(patch))
            .await?;
        Ok(())
    }

    /// Records each Lease's version, restarting its wait when it changed.
    fn observe(&self, shards: &[ShardState]) {
        let now = Instant::now();
        let mut seen = self.seen.lock();
        for s in shards {
            match seen.get(&s.name) {
                Some((rv, _)) if *rv == s.resource_version => {}
                _ => {
                    seen.insert(s.name.clone(), (s.resource_version.clone(), now));
                }
            }
        }
    }

    /// Whether the objects of `shard` may be reassigned without its acknowledgement now: the
    /// sharder holds the shard's Lease (taking it over if it is gone).
    async fn may_move(&self, shard: &str, shards: &[ShardState]) -> Result<bool, Error> {
        let now = Instant::now();
        if self
            .held
            .lock()
            .get(shard)
            .is_some_and(|&until| now < until)
        {
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
        let waited = self
            .seen
            .lock()
            .get(shard)
            .filter(|(rv, _)| *rv == state.resource_version)
            .map(|&(_, since)| since.elapsed());
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
