//! [`Sharding`]: what every replica of a sharded controller runs — its shard Lease, its work for
//! each term, and a candidacy for the sharder, in the [`Mode`] chosen (checked against the
//! server before anything starts).

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use kcache_core::{ApiResource, DynamicObject, Object, Resource};
use kcache_leaderelection::{
    CancellationToken, LeaderCallbacks, LeaderElectionConfig, LeaderElector, LeaseLock, RunEnd,
};
use kcache_transport::Client;

use kcache_core::selector::ShardField;

use crate::conventions::Ring;
use crate::error::ShardingError;
use crate::key::ShardKey;
use crate::lease_informer::LeaseInformer;
use crate::membership::ShardLease;
use crate::mode::{ignores_shard_selector, Mode};
use crate::passes::Timing;
use crate::range_lease::Selection;
use crate::range_sharder::RangeSharder;
use crate::range_terms::RangeTerms;
use crate::shard::Shard;
use crate::sharded_kind::ShardedKind;
use crate::sharder::Sharder;
use crate::slice_labeller::SliceLabeller;

/// One replica of a sharded controller: its shard Lease, its work for each term and its
/// candidacy for the sharder. The crate documentation shows a whole replica.
pub struct Sharding {
    client: Client,
    ring: Ring,
    identity: String,
    kinds: Vec<ShardedKind>,
    mode: Mode,
    lease_duration: Duration,
    renew_deadline: Duration,
    retry_period: Duration,
    sync_period: Duration,
}

impl std::fmt::Debug for Sharding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sharding")
            .field("ring", &self.ring)
            .field("identity", &self.identity)
            .field("kinds", &self.kinds.len())
            .field("mode", &self.mode)
            .finish_non_exhaustive()
    }
}

impl Sharding {
    /// The replica `identity` (unique among the replicas: the pod name) of `ring`, with
    /// client-go's lease timing (15 s / 10 s / 2 s) and a sharder pass every 2 s.
    pub fn new(client: Client, ring: Ring, identity: &str) -> Self {
        Sharding {
            client,
            ring,
            identity: identity.to_string(),
            kinds: Vec::new(),
            mode: Mode::Labels,
            lease_duration: Duration::from_secs(15),
            renew_deadline: Duration::from_secs(10),
            retry_period: Duration::from_secs(2),
            sync_period: Duration::from_secs(2),
        }
    }

    /// Shards objects of `K` (in `namespace`, or all), keyed by [`ShardKey::of_resource`]: a
    /// kind the shard's controllers reconcile (`Controller::for_`), whose drains the shard
    /// acknowledges in [`Shard::reconciler`](crate::Shard::reconciler). Add the kinds they own
    /// with [`controlled`](Self::controlled): every kind the shard's factory serves must be one
    /// or the other.
    pub fn kind<K: Resource + Object>(self, namespace: Option<&str>) -> Self {
        self.kind_with(
            K::api_resource(),
            namespace,
            ShardKey::of_kind(K::GROUP, K::KIND),
        )
    }

    /// Shards objects of `resource`, keyed by `key` (a primary kind, as [`kind`](Self::kind)).
    pub fn kind_with(
        mut self,
        resource: ApiResource,
        namespace: Option<&str>,
        key: ShardKey<DynamicObject>,
    ) -> Self {
        self.kinds.push(ShardedKind {
            resource,
            namespace: namespace.map(str::to_string),
            key,
            controlled: false,
        });
        self
    }

    /// Objects of `C` (in `namespace`, or all) controlled by an object of a primary kind (their
    /// controller ownerReference names it) go wherever their owner is, as
    /// timebertt's `controlledResources`: the shard's controllers act on them only through the
    /// owner's reconcile, so they move with the owner once its drain is acknowledged, with no
    /// drain of their own. Objects of `C` with no such owner are left unlabelled, out of every
    /// shard's cache.
    pub fn controlled<C: Resource + Object>(mut self, namespace: Option<&str>) -> Self {
        self.kinds.push(ShardedKind {
            resource: C::api_resource(),
            namespace: namespace.map(str::to_string),
            key: ShardKey::of_kind(C::GROUP, C::KIND),
            controlled: true,
        });
        self
    }

    /// How objects are divided: [`Mode::Labels`] (the default), [`Mode::Ranges`],
    /// [`Mode::Slices`] or [`Mode::Auto`]. Every replica of a ring must use the same. In range
    /// mode the kinds' keys are not used (the field's hash places each object) and their
    /// namespaces only say where to check that the server filters.
    pub fn mode(mut self, mode: Mode) -> Self {
        self.mode = mode;
        self
    }

    /// The mode to run (`None`: label mode): range mode only where the server filters by
    /// `shardSelector`.
    async fn resolve_mode(&self) -> Result<Option<Selection>, ShardingError> {
        let (field, explicit) = match self.mode {
            Mode::Labels => return Ok(None),
            Mode::Slices => return Ok(Some(Selection::SliceLabel)),
            Mode::Ranges(field) => (field, true),
            Mode::Auto(field) => (field, false),
        };
        let controlled = self.kinds.iter().any(|k| k.controlled);
        if controlled && field == ShardField::Uid {
            if explicit {
                return Err(ShardingError::ControlledByUid);
            }
            tracing::info!(ring = %self.ring.name(), "sharding in slice mode: controlled kinds do not hash with their owners' uids");
            return Ok(Some(Selection::SliceLabel));
        }
        let ignored = ignores_shard_selector(&self.client, &self.ring, &self.kinds, field)
            .await
            .map_err(ShardingError::Probe)?;
        match (ignored, explicit) {
            (None, _) => Ok(Some(Selection::Ranges(field))),
            (Some(resource), true) => Err(ShardingError::RangesUnsupported { resource }),
            (Some(resource), false) => {
                tracing::warn!(ring = %self.ring.name(), %resource, "the server ignores shardSelector (KEP-5866): sharding in slice mode");
                Ok(Some(Selection::SliceLabel))
            }
        }
    }

    /// The shard Leases' and the sharder's lease timing (client-go's rules apply).
    pub fn lease_timing(
        mut self,
        lease_duration: Duration,
        renew_deadline: Duration,
        retry_period: Duration,
    ) -> Self {
        self.lease_duration = lease_duration;
        self.renew_deadline = renew_deadline;
        self.retry_period = retry_period;
        self
    }

    /// How often the sharder passes over the cached Leases and objects when nothing woke it
    /// sooner (and finds killed replicas, whose Leases expire without an event).
    pub fn sync_period(mut self, period: Duration) -> Self {
        self.sync_period = period;
        self
    }

    fn election(&self, identity: &str) -> LeaderElectionConfig {
        let mut c = LeaderElectionConfig::new(identity);
        c.lease_duration = self.lease_duration;
        c.renew_deadline = self.renew_deadline;
        c.retry_period = self.retry_period;
        c.release_on_cancel = true;
        c
    }

    /// Runs until `shutdown` fires: holds the shard Lease and runs `work` for each term (its
    /// [`Shard::token`] fires when the term ends; in range and slice modes a term lasts one
    /// assignment of slices), and campaigns for the sharder (Lease `<ring>-sharder`). Returns after the work
    /// stopped and both Leases were released. Fails at once when the lease timing breaks
    /// client-go's rules, or range mode was asked for and cannot run (see [`ShardingError`]).
    pub async fn run<F, Fut>(
        self,
        shutdown: CancellationToken,
        work: F,
    ) -> Result<(), ShardingError>
    where
        F: Fn(Shard) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        // Fail on bad timing before asking the server anything.
        self.election(&self.identity).validate()?;
        let selection = self.resolve_mode().await?;
        let leases = Arc::new(LeaseInformer::new(self.client.clone(), self.ring.clone()));
        let timing = Timing {
            lease_duration: self.lease_duration,
            renew_deadline: self.renew_deadline,
            sync_period: self.sync_period,
        };
        let (client, ring, identity) = (
            self.client.clone(),
            self.ring.clone(),
            self.identity.clone(),
        );
        let work = Arc::new(work);
        let (callbacks, sharder) = match selection {
            None => {
                let callbacks = LeaderCallbacks::new(move |token: CancellationToken| {
                    let shard = Shard::new(client.clone(), ring.clone(), identity.clone(), token);
                    work(shard)
                });
                let sharder = Sharder::new(
                    self.client.clone(),
                    self.ring.clone(),
                    self.identity.clone(),
                    self.kinds.clone(),
                    timing,
                    leases.clone(),
                );
                (callbacks, AnySharder::Labels(Arc::new(sharder)))
            }
            Some(selection) => {
                let terms = Arc::new(RangeTerms::new(
                    client,
                    ring,
                    identity,
                    selection,
                    leases.clone(),
                    self.sync_period,
                ));
                let callbacks = LeaderCallbacks::new(move |token: CancellationToken| {
                    let (terms, work) = (terms.clone(), work.clone());
                    async move { terms.run(token, work).await }
                });
                let sharder = Arc::new(RangeSharder::new(
                    self.client.clone(),
                    self.ring.clone(),
                    self.identity.clone(),
                    selection,
                    timing,
                    leases.clone(),
                ));
                let sharder = match selection {
                    Selection::Ranges(_) => AnySharder::Ranges(sharder),
                    Selection::SliceLabel => {
                        let labeller = SliceLabeller::new(
                            self.client.clone(),
                            self.ring.clone(),
                            self.kinds.clone(),
                            timing,
                        );
                        AnySharder::Slices(sharder, Arc::new(labeller))
                    }
                };
                (callbacks, sharder)
            }
        };
        let lease = ShardLease::new(
            self.client.clone(),
            &self.ring,
            self.election(&self.identity),
            callbacks,
        )?;
        let lock = LeaseLock::new(
            self.client.clone(),
            self.ring.lease_namespace(),
            &format!("{}-sharder", self.ring.name()),
        );
        let elector = LeaderElector::new(
            lock,
            self.election(&self.identity),
            LeaderCallbacks::new({
                move |stop: CancellationToken| {
                    let sharder = sharder.clone();
                    async move { sharder.run(stop).await }
                }
            }),
        )?;
        let campaign = {
            let shutdown = shutdown.clone();
            async move { while elector.run(shutdown.clone()).await == RunEnd::LeadershipLost {} }
        };
        let watching = leases.run(shutdown.clone());
        tokio::join!(lease.run(shutdown), campaign, watching);
        Ok(())
    }
}

/// The sharder of the mode the replica runs.
#[derive(Clone)]
enum AnySharder {
    Labels(Arc<Sharder>),
    Ranges(Arc<RangeSharder>),
    /// The slices' deal and the objects' slice labels, independent of each other.
    Slices(Arc<RangeSharder>, Arc<SliceLabeller>),
}

impl AnySharder {
    async fn run(&self, stop: CancellationToken) {
        match self {
            AnySharder::Labels(s) => s.run(stop).await,
            AnySharder::Ranges(s) => s.run(stop).await,
            AnySharder::Slices(s, labeller) => {
                tokio::join!(s.run(stop.clone()), labeller.run(stop));
            }
        }
    }
}
