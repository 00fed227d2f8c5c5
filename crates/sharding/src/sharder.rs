//! The sharder: assigns objects of the sharded kinds to the live shards and moves them when the
//! ring changes. One replica runs it at a time (elected by [`Sharding`](crate::Sharding)); every
//! write is conditional on the resourceVersion it read, so even two sharders at once cannot let
//! two shards act on one object.
//!
//! Each pass reads the ring's Leases from the replica's Lease informer and, when the live shards
//! are the ones the previous pass saw (so a membership change settles first), the sharded
//! objects from the sharder's own informers over them (started for each term); per object:
//!
//! - unassigned (no shard label): assign the ring's owner (and clear a stale drain label);
//! - assigned to its owner: nothing;
//! - assigned to another shard: if the sharder holds that shard's Lease (below), reassign at
//!   once; else set the drain label and wait for the shard to acknowledge by removing both labels,
//!   after which the object is unassigned and the next pass assigns it.
//!
//! Objects of a controlled kind (a primary object's children, acted on only through its
//! reconcile) follow their controller owner: once the owner is assigned and not draining, the
//! child gets the owner's shard label directly, without a drain of its own; children of
//! no sharded owner are left alone.
//!
//! A shard that is gone cannot acknowledge. The sharder then takes over its Lease
//! ([`may_move`](crate::passes::SharderContext::may_move)); it reassigns the gone shard's objects directly only until `renew_deadline`
//! after it sent the take-over, and drains them again after that.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::SystemTime;

use futures_util::{stream, StreamExt};
use kcache_core::{DynamicObject, Error, Object};
use kcache_leaderelection::CancellationToken;
use kcache_transport::{Api, Client, Patch, PatchParams};
use serde_json::{json, Map, Value};

use crate::conventions::Ring;
use crate::key::kind_key;
use crate::lease_informer::LeaseInformer;
use crate::membership::live_shards;
use crate::object_informer::{NeedsPlacing, ObjectInformers};
use crate::passes::{pass_loop, SharderContext, Timing};
use crate::ring::HashRing;
use crate::sharded_kind::{own_key, ShardedKind};

/// How many of a pass's writes are in flight at once (in slice mode too): a sharder assigning 10k objects one
/// request at a time would take seconds on a real server for what the server handles in parallel.
pub(crate) const PLACE_CONCURRENCY: usize = 16;

/// One write a pass makes to an object's labels.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Write {
    /// Label an unassigned object with its owner (clearing a stale drain label).
    Assign(String),
    /// Relabel an object of a shard whose Lease the sharder holds.
    Move { from: String, to: String },
    /// Ask the shard the object is assigned to to let it go.
    Drain(String),
}

/// What one pass did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Pass {
    pub assigned: usize,
    pub drained: usize,
    pub moved: usize,
}

pub(crate) struct Sharder {
    ctx: SharderContext,
    kinds: Vec<ShardedKind>,
}

impl Sharder {
    pub(crate) fn new(
        client: Client,
        ring: Ring,
        identity: String,
        kinds: Vec<ShardedKind>,
        timing: Timing,
        leases: Arc<LeaseInformer>,
    ) -> Self {
        Sharder {
            ctx: SharderContext::new(client, ring, identity, timing, leases),
            kinds,
        }
    }

    /// Passes every sync period, and as soon as the membership changes (a Lease added, deleted,
    /// released or taken) or an object needs placing (created unassigned, or let go by its
    /// shard), until `stop` fires. A pass that found the membership changed is followed by
    /// another after [`SETTLE`](crate::passes::SETTLE) (at most the sync period).
    pub(crate) async fn run(&self, stop: CancellationToken) {
        tracing::info!(ring = %self.ctx.ring.name(), sharder = %self.ctx.identity, "sharder started");
        let label = self.ctx.ring.shard_label();
        // Created without a shard label, or let go by its shard.
        let needs: NeedsPlacing = Arc::new(move |_, old, new| {
            new.label(&label).is_none() && old.is_none_or(|o| o.label(&label).is_some())
        });
        let objects = ObjectInformers::new(&self.ctx.client, &self.kinds, needs);
        let watching = stop.child_token();
        let passes = async {
            self.passes(&objects, &stop).await;
            watching.cancel();
        };
        tokio::join!(objects.run(watching.clone()), passes);
    }

    async fn passes(&self, objects: &ObjectInformers, stop: &CancellationToken) {
        tokio::select! {
            _ = stop.cancelled() => return,
            _ = async { self.ctx.leases.wait_for_sync().await && objects.wait_for_sync().await } => {}
        }
        let woken = || async {
            tokio::select! {
                _ = self.ctx.leases.changed() => {}
                _ = objects.changed() => {}
            }
        };
        let ring = self.ctx.ring.name();
        pass_loop(
            ring,
            self.ctx.timing.sync_period,
            stop,
            || self.pass(objects, stop),
            woken,
        )
        .await
    }

    /// One pass over the cached Leases and the cached sharded objects, once the live shards are the ones the
    /// previous pass saw: replicas of a rollout start within moments of each other, and a pass
    /// between their Leases would assign everything to the first and then drain it away. What each
    /// object needs is decided
    /// first (whether a shard's objects may move is asked once per shard), then the writes go out
    /// [`PLACE_CONCURRENCY`] at a time, and the pass ends once the caches show them (or after
    /// a sync period), so the next pass does not act on what this one already changed.
    /// `None`: the membership changed since the previous pass, nothing was done.
    pub(crate) async fn pass(
        &self,
        cached: &ObjectInformers,
        stop: &CancellationToken,
    ) -> Result<Option<Pass>, Error> {
        let shards = self.ctx.leases.shards();
        let live = live_shards(&shards, SystemTime::now());
        let mut pass = Pass::default();
        if !self.ctx.last_live.settled(&live) {
            return Ok(None);
        }
        if live.is_empty() {
            return Ok(Some(pass));
        }
        let ring = HashRing::new(live);
        // Where each primary object is settled (assigned, not draining), by its own
        // `group/Kind/namespace/name`: controlled objects follow it. Primary kinds go first.
        let mut settled: HashMap<String, String> = HashMap::new();
        let mut order: Vec<usize> = (0..self.kinds.len()).collect();
        order.sort_by_key(|&k| self.kinds[k].controlled);
        for k in order {
            let kind = &self.kinds[k];
            let objects = cached.objects(k);
            let mut written = Vec::new();
            let mut movable: HashMap<String, bool> = HashMap::new();
            let mut writes = Vec::new();
            for (i, obj) in objects.iter().enumerate() {
                if kind.controlled {
                    if let Some(write) = self.follow_owner(obj, &settled) {
                        writes.push((i, write));
                    }
                    continue;
                }
                if let Some(shard) = obj.label(&self.ctx.ring.shard_label()) {
                    if obj.label(&self.ctx.ring.drain_label()).is_none() {
                        settled.insert(own_key(kind, obj), shard.to_string());
                    }
                }
                let Some(write) = self.placement(kind, &ring, obj) else {
                    continue;
                };
                let write = match write {
                    Write::Move { from, to } => {
                        let may = match movable.get(&from) {
                            Some(&may) => may,
                            None => {
                                let may = self.ctx.may_move(&from, &shards).await?;
                                movable.insert(from.clone(), may);
                                may
                            }
                        };
                        if may {
                            Write::Move { from, to }
                        } else if obj.label(&self.ctx.ring.drain_label()).is_none() {
                            Write::Drain(from)
                        } else {
                            continue;
                        }
                    }
                    other => other,
                };
                writes.push((i, write));
            }
            let objects = &objects;
            let mut results = stream::iter(writes)
                .map(|(i, write)| async move { (i, self.write(kind, &objects[i], write).await) })
                .buffer_unordered(PLACE_CONCURRENCY);
            while let Some((i, done)) = results.next().await {
                if let Ok((_, Some(rv))) = &done {
                    written.push(rv.clone());
                }
                if let (false, Ok((Write::Assign(to) | Write::Move { to, .. }, _))) =
                    (kind.controlled, &done)
                {
                    settled.insert(own_key(kind, &objects[i]), to.clone());
                }
                match done.map(|(w, _)| w) {
                    Ok(Write::Assign(_)) => pass.assigned += 1,
                    Ok(Write::Move { .. }) => pass.moved += 1,
                    Ok(Write::Drain(_)) => pass.drained += 1,
                    Err(e) if e.is_conflict() || e.is_not_found() => {}
                    Err(e) => {
                        tracing::warn!(ring = %self.ctx.ring.name(), object = %objects[i].name(), "placing failed: {e}")
                    }
                }
                if stop.is_cancelled() {
                    return Ok(Some(pass));
                }
            }
            cached
                .catch_up_to_latest(k, written, self.ctx.timing.sync_period)
                .await;
        }
        Ok(Some(pass))
    }

    /// What `obj` needs: assigning to its owner on `ring`, moving from the shard it is assigned
    /// to, or nothing.
    fn placement(&self, kind: &ShardedKind, ring: &HashRing, obj: &DynamicObject) -> Option<Write> {
        let owner = ring.owner_of(&kind.key.key(obj))?;
        match obj.label(&self.ctx.ring.shard_label()) {
            None => Some(Write::Assign(owner.to_string())),
            Some(current) if current == owner => None,
            Some(current) => Some(Write::Move {
                from: current.to_string(),
                to: owner.to_string(),
            }),
        }
    }

    /// What a controlled object needs: the shard its controller owner is settled on (by the
    /// owner's key, which is the object's), or nothing while the owner is unassigned or draining
    /// — the old shard may still reconcile the owner, and acts on the object only through it.
    fn follow_owner(
        &self,
        obj: &DynamicObject,
        settled: &HashMap<String, String>,
    ) -> Option<Write> {
        let owner = obj.controller_owner()?;
        let key = kind_key(
            owner.group(),
            owner.kind,
            obj.namespace().unwrap_or(""),
            owner.name,
        );
        let owner_shard = settled.get(&key)?;
        let drained = obj.label(&self.ctx.ring.drain_label()).is_some();
        match obj.label(&self.ctx.ring.shard_label()) {
            Some(current) if current == owner_shard && !drained => None,
            _ => Some(Write::Assign(owner_shard.clone())),
        }
    }

    /// Sends `write`; a move whose shard's Lease the sharder no longer may act for (its hold
    /// ended while earlier writes went out) becomes a drain. Returns what was written and the
    /// object's new resourceVersion.
    async fn write(
        &self,
        kind: &ShardedKind,
        obj: &DynamicObject,
        write: Write,
    ) -> Result<(Write, Option<String>), Error> {
        let write = match write {
            Write::Move { from, .. } if !self.ctx.holds(&from) => Write::Drain(from),
            other => other,
        };
        let rv = match &write {
            Write::Assign(to) | Write::Move { to, .. } => {
                self.label(kind, obj, Some(to), false).await?
            }
            Write::Drain(from) => self.label(kind, obj, Some(from), true).await?,
        };
        Ok((write, rv))
    }

    /// Writes the shard label (`None`: removed) and the drain label, conditional on `obj`'s
    /// resourceVersion; returns the new one.
    async fn label(
        &self,
        kind: &ShardedKind,
        obj: &DynamicObject,
        shard: Option<&str>,
        drain: bool,
    ) -> Result<Option<String>, Error> {
        let api = Api::<DynamicObject>::dynamic(
            self.ctx.client.clone(),
            kind.resource.clone(),
            obj.namespace(),
        );
        let labels = Map::from_iter([
            (
                self.ctx.ring.shard_label(),
                shard.map_or(Value::Null, |s| json!(s)),
            ),
            (
                self.ctx.ring.drain_label(),
                if drain { json!("true") } else { Value::Null },
            ),
        ]);
        let patch = json!({"metadata": {
            "labels": labels,
            "resourceVersion": obj.resource_version(),
        }});
        let written = api
            .patch(obj.name(), &PatchParams::default(), &Patch::Merge(patch))
            .await?;
        Ok(written.resource_version().map(str::to_string))
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::time::Duration;

    use k8s_openapi::api::core::v1::{ConfigMap, Secret};
    use kcache_controller::controlled_child;
    use kcache_core::{ApiResource, ListParams, Resource};
    use kcache_leaderelection::{LeaderElectionRecord, LeaseClient, LeaseLock};
    use kcache_testing::TestCluster;
    use kcache_transport::{Config, PostParams};

    use super::*;
    use crate::key::ShardKey;

    const OBJECTS: usize = 40;

    async fn join(client: &Client, ring: &Ring, shard: &str) {
        let lock = LeaseLock::new(client.clone(), ring.lease_namespace(), shard)
            .with_labels(ring.lease_labels());
        let now = SystemTime::now();
        let record = LeaderElectionRecord {
            holder_identity: shard.to_string(),
            lease_duration_seconds: 60,
            acquire_time: Some(now),
            renew_time: Some(now),
            leader_transitions: 0,
        };
        lock.create(&record).await.expect("shard Lease");
    }

    /// Waits until the Lease informer's cache holds `n` shard Leases.
    async fn until_cached(leases: &LeaseInformer, n: usize) {
        let cached = async {
            while leases.shards().len() < n {
                leases.changed().await;
            }
        };
        tokio::time::timeout(Duration::from_secs(30), cached)
            .await
            .expect("the Lease informer sees the Lease");
    }

    async fn labels(api: &Api<DynamicObject>, ring: &Ring) -> Vec<(Option<String>, bool)> {
        let list = api.list(&ListParams::default()).await.expect("list");
        list.items
            .iter()
            .map(|o| {
                let shard = o.label(&ring.shard_label()).map(str::to_string);
                (shard, o.label(&ring.drain_label()).is_some())
            })
            .collect()
    }

    /// A test server, a client that is never rate-limited and a ring in a fresh namespace: what
    /// every sharder test starts from.
    struct Setup {
        _cluster: TestCluster,
        client: Client,
        ns: String,
        ring: Ring,
    }

    impl Setup {
        async fn new(namespace: &str) -> Self {
            let cluster = TestCluster::start().await.unwrap();
            let ns = cluster.create_namespace(namespace).await.unwrap();
            let mut config = Config::from_kubeconfig_file(cluster.kubeconfig_path()).unwrap();
            config.qps = 0.0;
            let client = Client::new(config).unwrap();
            let ring = Ring::new("unit", &ns);
            Setup {
                _cluster: cluster,
                client,
                ns,
                ring,
            }
        }

        /// A kind in the namespace, keyed as ConfigMaps (the owners of every test).
        fn kind(&self, resource: ApiResource, controlled: bool) -> ShardedKind {
            ShardedKind {
                resource,
                namespace: Some(self.ns.clone()),
                key: ShardKey::of_kind("", "ConfigMap"),
                controlled,
            }
        }

        fn dynamic(&self, resource: ApiResource) -> Api<DynamicObject> {
            Api::dynamic(self.client.clone(), resource, Some(&self.ns))
        }

        /// Shard "a"'s sharder, with Leases long enough never to expire in a test.
        fn sharder(
            &self,
            kinds: Vec<ShardedKind>,
            sync_period: Duration,
            leases: Arc<LeaseInformer>,
        ) -> Sharder {
            let timing = Timing {
                lease_duration: Duration::from_secs(60),
                renew_deadline: Duration::from_secs(40),
                sync_period,
            };
            Sharder::new(
                self.client.clone(),
                self.ring.clone(),
                "a".into(),
                kinds,
                timing,
                leases,
            )
        }

        fn leases(&self) -> Arc<LeaseInformer> {
            Arc::new(LeaseInformer::new(self.client.clone(), self.ring.clone()))
        }
    }

    /// The Lease and object informers a pass reads, running and synced until [`Caches::stop`].
    struct Caches {
        leases: Arc<LeaseInformer>,
        objects: Arc<ObjectInformers>,
        stop: CancellationToken,
        running: Vec<tokio::task::JoinHandle<()>>,
    }

    impl Caches {
        async fn start(setup: &Setup, kinds: &[ShardedKind]) -> Self {
            let stop = CancellationToken::new();
            let leases = setup.leases();
            let label = setup.ring.shard_label();
            let needs: NeedsPlacing = Arc::new(move |_, _, o| o.label(&label).is_none());
            let objects = Arc::new(ObjectInformers::new(&setup.client, kinds, needs));
            let running = vec![
                tokio::spawn({
                    let (leases, stop) = (leases.clone(), stop.clone());
                    async move { leases.run(stop).await }
                }),
                tokio::spawn({
                    let (objects, stop) = (objects.clone(), stop.clone());
                    async move { objects.run(stop).await }
                }),
            ];
            assert!(leases.wait_for_sync().await);
            assert!(objects.wait_for_sync().await);
            Caches {
                leases,
                objects,
                stop,
                running,
            }
        }

        async fn stop(self) {
            self.stop.cancel();
            for task in self.running {
                task.await.unwrap();
            }
        }
    }

    /// A pass acts once the live shards are the ones the previous pass saw; then every object is
    /// assigned in one pass (its writes in flight together), and a join drains only the objects
    /// the new shard owns.
    #[tokio::test]
    async fn passes_wait_for_the_ring_to_settle_then_assign_every_object() {
        let setup = Setup::new("sharder").await;
        let (client, ring) = (&setup.client, &setup.ring);
        let cms = setup.dynamic(ConfigMap::api_resource());
        let typed = Api::<ConfigMap>::namespaced(client.clone(), &setup.ns);
        for i in 0..OBJECTS {
            let mut cm = ConfigMap::default();
            cm.metadata.name = Some(format!("obj-{i}"));
            typed.create(&PostParams::default(), &cm).await.unwrap();
        }
        let kinds = [setup.kind(ConfigMap::api_resource(), false)];
        let caches = Caches::start(&setup, &kinds).await;
        let (leases, cached, stop) = (&caches.leases, &caches.objects, &caches.stop);
        let sharder = setup.sharder(kinds.to_vec(), Duration::from_secs(1), leases.clone());

        join(client, ring, "a").await;
        until_cached(leases, 1).await;
        assert_eq!(
            sharder.pass(cached, stop).await.unwrap(),
            None,
            "first sight"
        );
        assert!(labels(&cms, ring).await.iter().all(|l| *l == (None, false)));
        let pass = sharder.pass(cached, stop).await.unwrap().expect("settled");
        assert_eq!(pass.assigned, OBJECTS);
        assert!(labels(&cms, ring)
            .await
            .iter()
            .all(|l| *l == (Some("a".into()), false)));

        join(client, ring, "b").await;
        until_cached(leases, 2).await;
        assert_eq!(
            sharder.pass(cached, stop).await.unwrap(),
            None,
            "b just joined"
        );
        let pass = sharder.pass(cached, stop).await.unwrap().expect("settled");
        let owners = HashRing::new(["a", "b"]);
        let list = cms.list(&ListParams::default()).await.unwrap();
        let to_b = list
            .items
            .iter()
            .filter(|o| owners.owner_of(&crate::object_key("", "ConfigMap", *o)) == Some("b"))
            .count();
        assert!(to_b > 0 && to_b < OBJECTS, "{to_b} of {OBJECTS} move");
        assert_eq!(
            pass,
            Pass {
                assigned: 0,
                drained: to_b,
                moved: 0
            }
        );
        let draining = labels(&cms, ring).await.iter().filter(|l| l.1).count();
        assert_eq!(draining, to_b);
        caches.stop().await;
    }

    /// With an hour's sync period, an object created after the ring settled is assigned on its
    /// add event.
    #[tokio::test]
    async fn a_new_object_is_assigned_on_its_add_event() {
        let setup = Setup::new("sharder-add").await;
        let (client, ring) = (&setup.client, &setup.ring);
        join(client, ring, "a").await;
        let leases = setup.leases();
        let stop = CancellationToken::new();
        let kinds = vec![setup.kind(ConfigMap::api_resource(), false)];
        let sharder = Arc::new(setup.sharder(kinds, Duration::from_secs(3600), leases.clone()));
        let running = tokio::spawn({
            let (leases, sharder, stop) = (leases.clone(), sharder.clone(), stop.clone());
            async move { tokio::join!(leases.run(stop.clone()), sharder.run(stop)) }
        });
        let typed = Api::<ConfigMap>::namespaced(client.clone(), &setup.ns);
        let assigned = |name: &'static str| {
            let typed = typed.clone();
            let label = ring.shard_label();
            async move {
                loop {
                    let cm = typed.get(name).await.unwrap();
                    if cm.label(&label) == Some("a") {
                        return;
                    }
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
            }
        };
        let mut cm = ConfigMap::default();
        cm.metadata.name = Some("first".into());
        typed.create(&PostParams::default(), &cm).await.unwrap();
        tokio::time::timeout(Duration::from_secs(30), assigned("first"))
            .await
            .expect("the first object is assigned once the ring settled");
        cm.metadata.name = Some("later".into());
        typed.create(&PostParams::default(), &cm).await.unwrap();
        tokio::time::timeout(Duration::from_secs(30), assigned("later"))
            .await
            .expect("an object created later is assigned on its add event");
        stop.cancel();
        running.await.unwrap();
    }

    /// Children (Secrets controlled by the ConfigMaps) get their owner's shard in the pass that
    /// assigns it; a join drains only the owners, and each child follows once its owner's drain
    /// was acknowledged, never drained itself; a child of no sharded owner stays unlabelled.
    #[tokio::test]
    async fn controlled_objects_follow_their_owner_without_a_drain() {
        let setup = Setup::new("controlled").await;
        let (client, ring, ns) = (&setup.client, &setup.ring, &setup.ns);
        let cms = setup.dynamic(ConfigMap::api_resource());
        let secrets = setup.dynamic(Secret::api_resource());
        let (typed_cms, typed_secrets) = (
            Api::<ConfigMap>::namespaced(client.clone(), ns),
            Api::<Secret>::namespaced(client.clone(), ns),
        );
        for i in 0..10 {
            let mut cm = ConfigMap::default();
            cm.metadata.name = Some(format!("owner-{i}"));
            let cm = typed_cms.create(&PostParams::default(), &cm).await.unwrap();
            let secret: Secret = controlled_child(&cm, format!("child-{i}")).unwrap();
            typed_secrets
                .create(&PostParams::default(), &secret)
                .await
                .unwrap();
        }
        let mut orphan = Secret::default();
        orphan.metadata.name = Some("orphan".into());
        typed_secrets
            .create(&PostParams::default(), &orphan)
            .await
            .unwrap();
        let kinds = vec![
            // Listed first: primary kinds still go first.
            setup.kind(Secret::api_resource(), true),
            setup.kind(ConfigMap::api_resource(), false),
        ];
        let caches = Caches::start(&setup, &kinds).await;
        let (leases, cached, stop) = (&caches.leases, &caches.objects, &caches.stop);
        let sharder = setup.sharder(kinds, Duration::from_secs(1), leases.clone());
        let shard_of = |api: &Api<DynamicObject>| {
            let (api, ring) = (api.clone(), ring.clone());
            async move {
                let list = api.list(&ListParams::default()).await.unwrap().items;
                list.iter()
                    .map(|o| {
                        let shard = o.label(&ring.shard_label()).map(str::to_string);
                        let drained = o.label(&ring.drain_label()).is_some();
                        (o.name().to_string(), (shard, drained))
                    })
                    .collect::<BTreeMap<_, _>>()
            }
        };

        join(client, ring, "a").await;
        until_cached(leases, 1).await;
        let pass = sharder.pass(cached, stop).await.unwrap();
        assert_eq!(pass, None, "first sight");
        let pass = sharder.pass(cached, stop).await.unwrap().expect("settled");
        assert_eq!(
            pass.assigned, 20,
            "10 owners and their 10 children in one pass"
        );
        let children = shard_of(&secrets).await;
        assert_eq!(children["orphan"], (None, false));
        for i in 0..10 {
            assert_eq!(children[&format!("child-{i}")], (Some("a".into()), false));
        }

        join(client, ring, "b").await;
        until_cached(leases, 2).await;
        let pass = sharder.pass(cached, stop).await.unwrap();
        assert_eq!(pass, None, "b just joined");
        let pass = sharder.pass(cached, stop).await.unwrap().expect("settled");
        assert!(pass.drained > 0 && pass.drained < 10, "{pass:?}");
        assert_eq!(
            (pass.assigned, pass.moved),
            (0, 0),
            "children wait for their owners"
        );
        let owners = shard_of(&cms).await;
        let children = shard_of(&secrets).await;
        let mut moving = Vec::new();
        for i in 0..10 {
            let (owner, child) = (
                &owners[&format!("owner-{i}")],
                &children[&format!("child-{i}")],
            );
            assert_eq!(
                *child,
                (Some("a".into()), false),
                "child-{i} stays while owner-{i} drains"
            );
            if owner.1 {
                moving.push(i);
            }
        }
        assert_eq!(moving.len(), pass.drained);
        // Shard a acknowledges its owners' drains (removes both labels).
        for i in &moving {
            let patch = json!({"metadata": {"labels": {
                ring.shard_label(): null, ring.drain_label(): null}}});
            let acked = cms
                .patch(
                    &format!("owner-{i}"),
                    &PatchParams::default(),
                    &Patch::Merge(patch),
                )
                .await
                .unwrap();
            let rv = acked.resource_version().unwrap().to_string();
            cached.catch_up(1, &rv, Duration::from_secs(30)).await;
        }
        let pass = sharder.pass(cached, stop).await.unwrap().expect("settled");
        assert_eq!(
            pass.assigned,
            2 * moving.len(),
            "each owner and its child: {pass:?}"
        );
        let children = shard_of(&secrets).await;
        for i in 0..10 {
            let to = if moving.contains(&i) { "b" } else { "a" };
            assert_eq!(children[&format!("child-{i}")], (Some(to.into()), false));
        }
        assert_eq!(children["orphan"], (None, false));
        caches.stop().await;
    }
}
