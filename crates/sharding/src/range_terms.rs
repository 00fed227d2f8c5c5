//! The shard side of range and slice modes: within one term of holding its shard Lease, the
//! replica runs the user's work once per assignment generation, each time with that
//! generation's slices.
//!
//! The shard reads its own Lease (a fresh GET, never a cache that could be behind a take-over)
//! when it starts holding it, whenever the Lease informer sees an assignment change, and every
//! resync period. On a new generation it first stops the running work (cancels its token and
//! waits for it: the controllers stop and in-flight reconciles finish), then acknowledges the
//! generation on its Lease, conditional on the version it read, and only then starts the work
//! with the new slices. A generation with no slices runs no work (an empty `shardSelector`
//! would select everything). When the Lease term ends, the running work is stopped before the
//! elector may release the Lease.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use kcache_core::{DynamicObject, Error};
use kcache_leaderelection::CancellationToken;
use kcache_transport::{Api, Client};
use serde_json::{json, Map};

use crate::conventions::Ring;
use crate::lease_informer::LeaseInformer;
use crate::membership::ShardState;
use crate::range_lease::{
    annotate, lease_api, RangeAssignment, Selection, ACKNOWLEDGED_ANNOTATION,
};
use crate::ranges::selector_of;
use crate::shard::Shard;

/// A replica's runner of its work in range or slice mode.
pub(crate) struct RangeTerms {
    client: Client,
    ring: Ring,
    identity: String,
    selection: Selection,
    leases: Arc<LeaseInformer>,
    /// How often the shard reads its Lease when no change was seen.
    resync: Duration,
}

/// The work of one generation.
struct Running {
    generation: u64,
    /// `None`: the generation has no slices, nothing runs.
    work: Option<(CancellationToken, tokio::task::JoinHandle<()>)>,
}

impl Running {
    async fn stop(self) {
        if let Some((token, work)) = self.work {
            token.cancel();
            if let Err(e) = work.await {
                tracing::error!("a shard's work failed: {e}");
            }
        }
    }
}

impl RangeTerms {
    pub(crate) fn new(
        client: Client,
        ring: Ring,
        identity: String,
        selection: Selection,
        leases: Arc<LeaseInformer>,
        resync: Duration,
    ) -> Self {
        RangeTerms {
            client,
            ring,
            identity,
            selection,
            leases,
            resync,
        }
    }

    /// Runs `work` for each generation of this shard's slices until `lease` (the Lease term's
    /// token) fires, then stops the running work.
    pub(crate) async fn run<F, Fut>(&self, lease: CancellationToken, work: Arc<F>)
    where
        F: Fn(Shard) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let api = lease_api(&self.client, self.ring.lease_namespace());
        let mut changes = self.leases.assignments();
        let mut running: Option<Running> = None;
        while !lease.is_cancelled() {
            match self.step(&api, &lease, &mut running, &work).await {
                Ok(()) => {}
                // A renewal landed between the read and the acknowledgement: read again.
                Err(e) if e.is_conflict() => continue,
                Err(e) => {
                    tracing::warn!(shard = %self.identity, "reading the shard's slices: {e}")
                }
            }
            tokio::select! {
                _ = lease.cancelled() => {}
                _ = changes.changed() => {}
                _ = tokio::time::sleep(self.resync) => {}
            }
        }
        if let Some(r) = running.take() {
            r.stop().await;
        }
    }

    /// Reads the Lease; on a new generation, stops the old work, acknowledges and starts the new.
    async fn step<F, Fut>(
        &self,
        api: &Api<DynamicObject>,
        lease: &CancellationToken,
        running: &mut Option<Running>,
        work: &Arc<F>,
    ) -> Result<(), Error>
    where
        F: Fn(Shard) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let obj = api.get(&self.identity).await?;
        let assigned = RangeAssignment::from_lease(&obj)?;
        if ShardState::from_object(&obj)?.record.holder_identity != self.identity {
            // Taken over between our renewal and this read: nothing is ours any more.
            if let Some(old) = running.take() {
                old.stop().await;
            }
            return Ok(());
        }
        if running
            .as_ref()
            .is_some_and(|r| r.generation == assigned.generation)
        {
            return Ok(());
        }
        if let Some(old) = running.take() {
            old.stop().await;
        }
        if !assigned.is_acknowledged() {
            let ack = Map::from_iter([(
                ACKNOWLEDGED_ANNOTATION.to_string(),
                json!(assigned.generation.to_string()),
            )]);
            annotate(api, &self.identity, ack, Some(&assigned.resource_version)).await?;
        }
        let generation = assigned.generation;
        let work = match assigned.slices.is_empty() || lease.is_cancelled() {
            true => None,
            false => {
                tracing::info!(shard = %self.identity, generation, slices = assigned.slices.len(), "starting the shard's work");
                let token = lease.child_token();
                let shard = Shard::new(
                    self.client.clone(),
                    self.ring.clone(),
                    self.identity.clone(),
                    token.clone(),
                );
                // From the slices (never empty here), whichever mode wrote them.
                let shard = match self.selection {
                    Selection::Ranges(field) => {
                        shard.with_ranges(selector_of(field, &assigned.slices))
                    }
                    Selection::SliceLabel => shard.with_slices(assigned.slices),
                };
                Some((token, tokio::spawn(work(shard))))
            }
        };
        *running = Some(Running { generation, work });
        Ok(())
    }
}
