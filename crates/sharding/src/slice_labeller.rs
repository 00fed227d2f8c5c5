//! Slice mode's labeller: runs beside the slice sharder (same elected replica) and writes each
//! sharded object's slice label ([`crate::slice_label`]) where it is missing or wrong. The
//! label depends only on the object's shard key, so an object is written once in its life, not
//! on every membership change; until then it is in no shard's cache.
//!
//! Passes read the objects from the sharder's informers and run every sync period and as soon
//! as an object needs its label (created without one, or with a wrong one); the writes go out
//! [`PLACE_CONCURRENCY`] at a time, each conditional on the resourceVersion read.
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
    timing: Timing,
}

/// The slice label value `obj` of `kind` must carry.
fn slice(kind: &ShardedKind, obj: &DynamicObject) -> String {
    slice_of(&kind.key.key(obj)).to_string()
}

impl SliceLabeller {
    pub(crate) fn new(client: Client, ring: Ring, kinds: Vec<ShardedKind>, timing: Timing) -> Self {
        SliceLabeller {
            client,
            ring,
            kinds,
            timing,
        }
    }

    /// Labels until `stop` fires (the replica is no longer the sharder).
    pub(crate) async fn run(&self, stop: CancellationToken) {
        let label = self.ring.slice_label();
        let needs: NeedsPlacing =
            Arc::new(move |kind, _, obj| obj.label(&label) != Some(slice(kind, obj).as_str()));
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
            let wrong: Vec<(usize, String)> = objects
                .iter()
                .enumerate()
                .map(|(i, obj)| (i, slice(kind, obj)))
                .filter(|(i, want)| objects[*i].label(&label) != Some(want.as_str()))
                .collect();
            let objects = &objects;
            let mut writes = stream::iter(wrong)
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
