//! [`Sharding`]: what every replica of a sharded controller runs — its shard Lease, its work for
//! each term, and a candidacy for the sharder.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use kcache_core::{ApiResource, DynamicObject, Object, Resource};
use kcache_leaderelection::{
    CancellationToken, ConfigError, LeaderCallbacks, LeaderElectionConfig, LeaderElector,
    LeaseLock, RunEnd,
};
use kcache_transport::Client;

use crate::conventions::Ring;
use crate::key::ShardKey;
use crate::lease_informer::LeaseInformer;
use crate::membership::ShardLease;
use crate::shard::Shard;
use crate::sharded_kind::ShardedKind;
use crate::sharder::{Sharder, Timing};

/// One replica of a sharded controller (label mode): its shard Lease, its work for each term and
/// its candidacy for the sharder. The crate documentation shows a whole replica.
pub struct Sharding {
    client: Client,
    ring: Ring,
    identity: String,
    kinds: Vec<ShardedKind>,
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
    /// [`Shard::token`] fires when the term ends), and campaigns for the sharder (Lease
    /// `<ring>-sharder`). Returns after the work stopped and both Leases were released. Fails at
    /// once when the lease timing breaks client-go's rules.
    pub async fn run<F, Fut>(self, shutdown: CancellationToken, work: F) -> Result<(), ConfigError>
    where
        F: Fn(Shard) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let (client, ring, identity) = (
            self.client.clone(),
            self.ring.clone(),
            self.identity.clone(),
        );
        let work = Arc::new(work);
        let callbacks = LeaderCallbacks::new(move |token: CancellationToken| {
            let shard = Shard::new(client.clone(), ring.clone(), identity.clone(), token);
            work(shard)
        });
        let lease = ShardLease::new(
            self.client.clone(),
            &self.ring,
            self.election(&self.identity),
            callbacks,
        )?;
        let leases = Arc::new(LeaseInformer::new(self.client.clone(), self.ring.clone()));
        let sharder = Arc::new(Sharder::new(
            self.client.clone(),
            self.ring.clone(),
            self.identity.clone(),
            self.kinds.clone(),
            Timing {
                lease_duration: self.lease_duration,
                renew_deadline: self.renew_deadline,
                sync_period: self.sync_period,
            },
            leases.clone(),
        ));
        let lock = LeaseLock::new(
            self.client.clone(),
            self.ring.lease_namespace(),
            &format!("{}-sharder", self.ring.name()),
        );
        let elector = LeaderElector::new(
            lock,
            self.election(&self.identity),
            LeaderCallbacks::new({
                let sharder = sharder.clone();
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
