//! The sharder of range and slice modes: deals the hash-space slices ([`crate::ranges`]) to the
//! live shards by writing each shard's slices on its Lease, and moves a slice only through a
//! handover that never lets two shards act on it. One replica runs it at a time (elected by
//! [`Sharding`](crate::Sharding)); it writes no object (in slice mode the
//! [`SliceLabeller`](crate::slice_labeller::SliceLabeller) beside it labels each object once).
//!
//! Each pass lists the ring's Leases (a fresh read: the decisions below must not rest on a
//! cache behind the sharder's own writes) and, once the live shards are the ones the previous
//! pass saw, does:
//!
//! - **gone shards**: a Lease whose shard is not live still *claims* its ranges, since the shard
//!   could come back and run them. If its shard still holds it (expired, killed), the sharder
//!   takes it over ([`may_move`](crate::passes::SharderContext::may_move), which writes the Lease afresh, without ranges); if it was
//!   released or taken over, the sharder clears its ranges, conditional on the version it read
//!   (a shard that re-acquired it in between keeps them).
//! - **live shards**: the new deal is computed from the current one; a shard whose latest
//!   assignment is acknowledged gets one new generation that drops the slices it loses (named in
//!   `releasing`) and adds the slices it gains that no other Lease claims. A Lease claims its
//!   ranges, and while its shard holds it without having acknowledged, also its releasing
//!   ones: the shard may still run its previous generation. So a slice reaches its new shard
//!   only after the old one acknowledged a generation without it, which it does only after
//!   that generation's predecessor's work stopped.
//!
//! Like label mode, this relies on one sharder at a time (its election) and on a shard
//! stopping its work within the renew deadline once it cannot renew.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::SystemTime;

use kcache_core::Error;
use kcache_leaderelection::CancellationToken;
use kcache_transport::Client;

use crate::conventions::Ring;
use crate::lease_informer::LeaseInformer;
use crate::membership::{live_shards, ShardState};
use crate::passes::Timing;
use crate::passes::{pass_loop, SharderContext};
use crate::range_lease::{
    annotate, assignment, lease_api, list_range_assignments, RangeAssignment, Selection,
};
use crate::ranges::{deal, Slices};

/// What one range pass did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RangePass {
    /// Gone shards' Leases taken over.
    pub taken_over: usize,
    /// Released Leases whose ranges were cleared.
    pub cleared: usize,
    /// Live shards given a new generation.
    pub reassigned: usize,
}

pub(crate) struct RangeSharder {
    ctx: SharderContext,
    selection: Selection,
}

/// One listed shard Lease: its membership and its ranges.
struct Listed {
    state: ShardState,
    assignment: RangeAssignment,
}

impl Listed {
    /// The slices its shard may act on now or may be given back: its ranges, and while it holds
    /// its Lease without having acknowledged, what the latest generation took away.
    fn claims(&self) -> Slices {
        let mut claims = self.assignment.slices.clone();
        if self.state.record.holder_identity == self.state.name
            && !self.assignment.is_acknowledged()
        {
            claims.extend(&self.assignment.releasing_slices);
        }
        claims
    }
}

impl RangeSharder {
    pub(crate) fn new(
        client: Client,
        ring: Ring,
        identity: String,
        selection: Selection,
        timing: Timing,
        leases: Arc<LeaseInformer>,
    ) -> Self {
        RangeSharder {
            ctx: SharderContext::new(client, ring, identity, timing, leases),
            selection,
        }
    }

    /// Passes every sync period and whenever a Lease's holder or annotations change (a join, a
    /// leave, an acknowledgement), until `stop` fires.
    pub(crate) async fn run(&self, stop: CancellationToken) {
        tracing::info!(ring = %self.ctx.ring.name(), sharder = %self.ctx.identity, selection = ?self.selection, "slice sharder started");
        tokio::select! {
            _ = stop.cancelled() => return,
            _ = self.ctx.leases.wait_for_sync() => {}
        }
        let (ring, sync_period) = (self.ctx.ring.name(), self.ctx.timing.sync_period);
        let woken = || self.ctx.leases.changed();
        pass_loop(ring, sync_period, &stop, || self.pass(&stop), woken).await
    }

    /// One pass (module docs), which stops writing once `stop` fired (the sharder was deposed).
    /// `None`: the live shards changed since the previous pass.
    pub(crate) async fn pass(&self, stop: &CancellationToken) -> Result<Option<RangePass>, Error> {
        let api = lease_api(&self.ctx.client, self.ctx.ring.lease_namespace());
        let listed: Vec<Listed> = list_range_assignments(&self.ctx.client, &self.ctx.ring)
            .await?
            .into_iter()
            .map(|(state, assignment)| Listed { state, assignment })
            .collect();
        let states: Vec<ShardState> = listed.iter().map(|l| l.state.clone()).collect();
        let live = live_shards(&states, SystemTime::now());
        if !self.ctx.last_live.settled(&live) {
            return Ok(None);
        }
        let mut pass = RangePass::default();
        for gone in listed.iter().filter(|l| !live.contains(&l.state.name)) {
            if gone.claims().is_empty() || stop.is_cancelled() {
                continue;
            }
            let (name, a) = (&gone.state.name, &gone.assignment);
            if gone.state.record.holder_identity == *name {
                if self.ctx.may_move(name, &states).await? {
                    pass.taken_over += 1;
                }
                continue;
            }
            let none = Slices::new();
            let cleared = assignment(a.generation + 1, &none, &none, self.selection);
            match annotate(&api, name, cleared, Some(&a.resource_version)).await {
                Ok(_) => pass.cleared += 1,
                Err(e) if e.is_conflict() || e.is_not_found() => {}
                Err(e) => return Err(e),
            }
        }
        let current: BTreeMap<String, Slices> = listed
            .iter()
            .filter(|l| live.contains(&l.state.name))
            .map(|l| (l.state.name.clone(), l.assignment.slices.clone()))
            .collect();
        let target = deal(&current, &live);
        let claims: Vec<(&str, Slices)> = listed
            .iter()
            .map(|l| (l.state.name.as_str(), l.claims()))
            .collect();
        for l in listed.iter().filter(|l| live.contains(&l.state.name)) {
            let (name, a) = (&l.state.name, &l.assignment);
            if !a.is_acknowledged() || stop.is_cancelled() {
                continue;
            }
            let have = &a.slices;
            let want = &target[name];
            let release: Slices = have.difference(want).copied().collect();
            let grant = want.difference(have).copied().filter(|s| {
                claims
                    .iter()
                    .all(|(other, c)| *other == name.as_str() || !c.contains(s))
            });
            let mut next: Slices = have.intersection(want).copied().collect();
            next.extend(grant);
            if next == *have {
                continue;
            }
            let write = assignment(a.generation + 1, &next, &release, self.selection);
            annotate(&api, name, write, None).await?;
            pass.reassigned += 1;
        }
        Ok(Some(pass))
    }
}

#[cfg(test)]
mod tests {
    use std::time::SystemTime;

    use kcache_leaderelection::LeaderElectionRecord;

    use super::*;

    fn listed(name: &str, holder: &str, generation: u64, acknowledged: u64) -> Listed {
        Listed {
            state: ShardState {
                name: name.into(),
                resource_version: "1".into(),
                record: LeaderElectionRecord {
                    holder_identity: holder.into(),
                    renew_time: Some(SystemTime::now()),
                    ..Default::default()
                },
            },
            assignment: RangeAssignment {
                shard: name.into(),
                generation,
                acknowledged,
                slices: (0..10).collect(),
                releasing_slices: (10..20).collect(),
                ..Default::default()
            },
        }
    }

    /// What a shard gave up stays claimed while it holds its Lease without acknowledging; once
    /// it acknowledged, or its Lease was released or taken over (its work stopped), only its
    /// ranges are.
    #[test]
    fn released_slices_stay_claimed_until_acknowledged_or_the_shard_is_gone() {
        assert_eq!(listed("a", "a", 3, 2).claims(), (0..20).collect());
        assert_eq!(listed("a", "a", 3, 3).claims(), (0..10).collect());
        assert_eq!(listed("a", "", 3, 2).claims(), (0..10).collect());
        assert_eq!(listed("a", "sharder", 3, 2).claims(), (0..10).collect());
    }
}
