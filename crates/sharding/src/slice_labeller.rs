//! Slice mode's labeller: runs beside the slice sharder (same elected replica) and writes each
//! sharded object's slice label ([`crate::slice_label`]) where it is missing or wrong. The
//! label depends only on the object's shard key, so an object is written once in its life, not
//! on every membership change; until then it is in no shard's cache.
//!
//! Passes read the objects from the sharder's informers and run every sync period and as soon
//! as an object needs its label (created without one, or with a wrong one); the writes go out
//! [`PLACE_CONCURRENCY`] at a time, each conditional on the resourceVersion read.
//!
//! As in label mode, an object of a controlled kind is labelled only when its controller owner is
//! of a primary kind (its key is that owner's, so it shares the owner's slice); others are left
//! alone, out of every shard's cache.
//!
//! A wrong value is one a user or another program wrote, or one left by a change of the key (a
//! custom key over mutable fields, an adoption by a controller owner): rewriting it moves the
//! object between slices without a handover, as the edit that made it wrong did.

use std::sync::Arc;

use futures_util::{stream, StreamExt};
use kcache_core::{DynamicObject, Error, Object};
use kcache_leaderelection::CancellationToken;
use kcache_transport::{Api, Client, Patch, PatchParams};
use serde_json::json;

use crate::conventions::Ring;
use crate::object_informer::{NeedsPlacing, ObjectInformers};
use crate::passes::{pass_loop, Timing};
use crate::sharded_kind::ShardedKind;
use crate::sharder::PLACE_CONCURRENCY;
use crate::slice_label::slice_of;

/// What one labelling pass did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LabelPass {
    /// Objects given their slice label.
    pub labelled: usize,
}

pub(crate) struct SliceLabeller {
    client: Client,
    ring: Ring,
    kinds: Vec<ShardedKind>,
    /// The primary kinds' `(group, kind)`: the owners a controlled object may follow.
    primaries: Arc<Vec<(String, String)>>,
    timing: Timing,
}

/// The slice label value `obj` of `kind` must carry, or `None` for an object of a controlled
/// kind whose controller owner is not of one of `primaries`.
fn slice(
    primaries: &[(String, String)],
    kind: &ShardedKind,
    obj: &DynamicObject,
) -> Option<String> {
    if kind.controlled {
        let owner = obj.controller_owner()?;
        let followed = |(g, k): &(String, String)| g == owner.group() && k == owner.kind;
        if !primaries.iter().any(followed) {
            return None;
        }
    }
    Some(slice_of(&kind.key.key(obj)).to_string())
}

/// Whether `obj` must be (re)labelled.
fn wrong(
    primaries: &[(String, String)],
    label: &str,
    kind: &ShardedKind,
    obj: &DynamicObject,
) -> Option<String> {
    slice(primaries, kind, obj).filter(|want| obj.label(label) != Some(want.as_str()))
}

impl SliceLabeller {
    pub(crate) fn new(client: Client, ring: Ring, kinds: Vec<ShardedKind>, timing: Timing) -> Self {
        let primaries = kinds
            .iter()
            .filter(|k| !k.controlled)
            .map(|k| (k.resource.group.clone(), k.resource.kind.clone()))
            .collect();
        SliceLabeller {
            client,
            ring,
            kinds,
            primaries: Arc::new(primaries),
            timing,
        }
    }

    /// Labels until `stop` fires (the replica is no longer the sharder).
    pub(crate) async fn run(&self, stop: CancellationToken) {
        let (label, primaries) = (self.ring.slice_label(), self.primaries.clone());
        let needs: NeedsPlacing =
            Arc::new(move |kind, _, obj| wrong(&primaries, &label, kind, obj).is_some());
        let objects = ObjectInformers::new(&self.client, &self.kinds, needs);
        let watching = stop.child_token();
        let passes = async {
            tokio::select! {
                _ = stop.cancelled() => {}
                synced = objects.wait_for_sync() => if synced {
                    let ring = self.ring.name();
                    let sync = self.timing.sync_period;
                    let pass = || async { Ok(Some(self.pass(&objects, &stop).await)) };
                    pass_loop(ring, sync, &stop, pass, || objects.changed()).await;
                }
            }
            watching.cancel();
        };
        tokio::join!(objects.run(watching.clone()), passes);
    }

    /// One pass over the cached objects: labels those whose slice label is missing or wrong,
    /// then waits until the caches show the writes (at most a sync period).
    pub(crate) async fn pass(
        &self,
        cached: &ObjectInformers,
        stop: &CancellationToken,
    ) -> LabelPass {
        let mut pass = LabelPass::default();
        let label = self.ring.slice_label();
        for (k, kind) in self.kinds.iter().enumerate() {
            let objects = cached.objects(k);
            let relabel: Vec<(usize, String)> = objects
                .iter()
                .enumerate()
                .filter_map(|(i, obj)| Some((i, wrong(&self.primaries, &label, kind, obj)?)))
                .collect();
            let objects = &objects;
            let mut writes = stream::iter(relabel)
                .map(|(i, want)| async move { (i, self.write(kind, &objects[i], &want).await) })
                .buffer_unordered(PLACE_CONCURRENCY);
            let mut written = Vec::new();
            while let Some((i, done)) = writes.next().await {
                match done {
                    Ok(rv) => {
                        pass.labelled += 1;
                        written.extend(rv);
                    }
                    Err(e) if e.is_conflict() || e.is_not_found() => {}
                    Err(e) => {
                        tracing::warn!(ring = %self.ring.name(), object = %objects[i].name(), "writing the slice label failed: {e}")
                    }
                }
                if stop.is_cancelled() {
                    return pass;
                }
            }
            cached
                .catch_up_to_latest(k, written, self.timing.sync_period)
                .await;
        }
        pass
    }

    /// Writes `obj`'s slice label, conditional on its resourceVersion; returns the new one.
    async fn write(
        &self,
        kind: &ShardedKind,
        obj: &DynamicObject,
        slice: &str,
    ) -> Result<Option<String>, Error> {
        let api = Api::<DynamicObject>::dynamic(
            self.client.clone(),
            kind.resource.clone(),
            obj.namespace(),
        );
        let patch = json!({"metadata": {
            "labels": { self.ring.slice_label(): slice },
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
    use std::time::Duration;

    use k8s_openapi::api::core::v1::{ConfigMap, Secret};
    use kcache_controller::controlled_child;
    use kcache_core::{ListParams, Resource};
    use kcache_testing::TestCluster;
    use kcache_transport::{Config, PostParams};

    use super::*;
    use crate::key::{object_key, ShardKey};

    /// One pass labels a primary object with its key's slice and its child with the same
    /// slice, leaves a child of no primary owner alone, and corrects a wrong label; a second
    /// pass writes nothing.
    #[tokio::test]
    async fn objects_are_labelled_once_with_their_keys_slice_children_with_their_owners() {
        let cluster = TestCluster::start().await.unwrap();
        let ns = cluster.create_namespace("slices").await.unwrap();
        let mut config = Config::from_kubeconfig_file(cluster.kubeconfig_path()).unwrap();
        config.qps = 0.0;
        let client = Client::new(config).unwrap();
        let ring = Ring::new("unit", &ns);
        let (cms, secrets) = (
            Api::<ConfigMap>::namespaced(client.clone(), &ns),
            Api::<Secret>::namespaced(client.clone(), &ns),
        );
        let mut cm = ConfigMap::default();
        cm.metadata.name = Some("owner".into());
        let owner = cms.create(&PostParams::default(), &cm).await.unwrap();
        cm.metadata.name = Some("mislabelled".into());
        cm.metadata.labels = Some([(ring.slice_label(), "999".to_string())].into());
        cms.create(&PostParams::default(), &cm).await.unwrap();
        let child: Secret = controlled_child(&owner, "child").unwrap();
        secrets
            .create(&PostParams::default(), &child)
            .await
            .unwrap();
        let mut orphan = Secret::default();
        orphan.metadata.name = Some("orphan".into());
        secrets
            .create(&PostParams::default(), &orphan)
            .await
            .unwrap();

        let kind = |resource, controlled| ShardedKind {
            resource,
            namespace: Some(ns.clone()),
            key: ShardKey::of_kind("", if controlled { "Secret" } else { "ConfigMap" }),
            controlled,
        };
        let kinds = vec![
            kind(ConfigMap::api_resource(), false),
            kind(Secret::api_resource(), true),
        ];
        let timing = Timing {
            lease_duration: Duration::from_secs(60),
            renew_deadline: Duration::from_secs(40),
            sync_period: Duration::from_secs(1),
        };
        let labeller = SliceLabeller::new(client.clone(), ring.clone(), kinds.clone(), timing);
        let needs: NeedsPlacing = Arc::new(|_, _, _| false);
        let cached = ObjectInformers::new(&client, &kinds, needs);
        let stop = CancellationToken::new();
        let passes = async {
            assert!(cached.wait_for_sync().await);
            let first = labeller.pass(&cached, &stop).await;
            let second = labeller.pass(&cached, &stop).await;
            stop.cancel();
            (first, second)
        };
        let (_, (first, second)) = tokio::join!(cached.run(stop.clone()), passes);
        assert_eq!((first.labelled, second.labelled), (3, 0));

        let owner_slice = slice_of(&object_key("", "ConfigMap", &owner)).to_string();
        let label = |o: &DynamicObject| o.label(&ring.slice_label()).map(str::to_string);
        let all = |resource| {
            let api = Api::<DynamicObject>::dynamic(client.clone(), resource, Some(&ns));
            async move { api.list(&ListParams::default()).await.unwrap().items }
        };
        for o in all(ConfigMap::api_resource()).await {
            let want = slice_of(&object_key("", "ConfigMap", &o)).to_string();
            assert_eq!(label(&o), Some(want), "{}", o.name());
        }
        for o in all(Secret::api_resource()).await {
            let want = (o.name() == "child").then(|| owner_slice.clone());
            assert_eq!(label(&o), want, "{}", o.name());
        }
    }
}
