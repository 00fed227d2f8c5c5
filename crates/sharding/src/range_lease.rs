//! Range mode's record on each shard Lease: the annotations through which the sharder assigns a
//! shard its ranges and the shard acknowledges them.
//!
//! The sharder writes [`RANGES_ANNOTATION`] (the shard's canonical `shardSelector`),
//! [`GENERATION_ANNOTATION`] (raised on every change) and, when it takes ranges away,
//! [`RELEASING_ANNOTATION`] (the ranges taken away). The shard writes
//! [`ACKNOWLEDGED_ANNOTATION`]: the generation it now runs, once the work of every earlier
//! generation has stopped, conditional on the Lease version whose generation it read (so an
//! acknowledgement never lands on a Lease rewritten in between). A Lease with no annotations
//! (new, or written afresh when the sharder took it over) assigns nothing.

use kcache_core::selector::ShardSelector;
use kcache_core::{DynamicObject, Error, Object};
use kcache_transport::{Api, Client, Patch, PatchParams};
use serde_json::{json, Map, Value};

use crate::conventions::Ring;
use crate::membership::{list_lease_objects, ShardState};
use crate::ranges::{slices_of, Slices};

/// The ranges the sharder assigned to the shard: a canonical KEP-5866 `shardSelector`.
pub const RANGES_ANNOTATION: &str = "sharding.kcache.dev/ranges";
/// The generation of the assignment, raised by the sharder on every change.
pub const GENERATION_ANNOTATION: &str = "sharding.kcache.dev/generation";
/// The ranges the latest change took away, which the shard may act on until it acknowledges.
pub const RELEASING_ANNOTATION: &str = "sharding.kcache.dev/releasing";
/// The generation the shard runs, written by the shard.
pub const ACKNOWLEDGED_ANNOTATION: &str = "sharding.kcache.dev/acknowledged";

/// One shard Lease's range assignment, as read from its annotations.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RangeAssignment {
    /// The Lease's name: the shard.
    pub shard: String,
    /// The Lease's resourceVersion.
    pub resource_version: String,
    /// The assignment's generation (0: never assigned).
    pub generation: u64,
    /// The shard's ranges (empty: none).
    pub ranges: ShardSelector,
    /// What the latest change took away.
    pub releasing: ShardSelector,
    /// The generation the shard acknowledged.
    pub acknowledged: u64,
}

impl RangeAssignment {
    /// The assignment recorded on the shard Lease `obj`; fails, naming the annotation, when one
    /// does not parse.
    pub fn from_lease(obj: &DynamicObject) -> Result<Self, Error> {
        let text = |key: &str| {
            obj.annotations()
                .and_then(|a| a.get(key))
                .map(String::as_str)
        };
        let number = |key: &str| -> Result<u64, Error> {
            text(key).map_or(Ok(0), |v| {
                v.parse().map_err(|e| {
                    Error::decode(format!("annotation {key} of Lease {}", obj.name()), e)
                })
            })
        };
        let selector = |key: &str| -> Result<ShardSelector, Error> {
            ShardSelector::parse(text(key).unwrap_or(""))
                .map_err(|e| Error::decode(format!("annotation {key} of Lease {}", obj.name()), e))
        };
        Ok(RangeAssignment {
            shard: obj.name().to_string(),
            resource_version: obj.resource_version().unwrap_or_default().to_string(),
            generation: number(GENERATION_ANNOTATION)?,
            ranges: selector(RANGES_ANNOTATION)?,
            releasing: selector(RELEASING_ANNOTATION)?,
            acknowledged: number(ACKNOWLEDGED_ANNOTATION)?,
        })
    }

    /// Whether the shard runs this generation (and nothing it released).
    pub fn is_acknowledged(&self) -> bool {
        self.acknowledged == self.generation
    }

    pub(crate) fn slices(&self) -> Slices {
        slices_of(&self.ranges)
    }

    pub(crate) fn releasing_slices(&self) -> Slices {
        slices_of(&self.releasing)
    }
}

/// Every shard Lease of `ring` (live or not) with its range assignment, listed (range mode).
pub async fn list_range_assignments(
    client: &Client,
    ring: &Ring,
) -> Result<Vec<(ShardState, RangeAssignment)>, Error> {
    let leases = list_lease_objects(client, ring).await?;
    leases
        .iter()
        .map(|obj| {
            Ok((
                ShardState::from_object(obj)?,
                RangeAssignment::from_lease(obj)?,
            ))
        })
        .collect()
}

/// The shard Leases of a ring, for reading and writing their annotations.
pub(crate) fn lease_api(client: &Client, namespace: &str) -> Api<DynamicObject> {
    Api::dynamic(
        client.clone(),
        kcache_leaderelection::leases(),
        Some(namespace),
    )
}

/// Merge-patches `annotations` (a `null` removes one) onto the Lease `name`, conditional on
/// `resource_version` when given.
pub(crate) async fn annotate(
    api: &Api<DynamicObject>,
    name: &str,
    annotations: Map<String, Value>,
    resource_version: Option<&str>,
) -> Result<DynamicObject, Error> {
    let mut metadata = json!({ "annotations": annotations });
    if let Some(rv) = resource_version {
        metadata["resourceVersion"] = json!(rv);
    }
    api.patch(
        name,
        &PatchParams::default(),
        &Patch::Merge(json!({ "metadata": metadata })),
    )
    .await
}

/// The annotations of assignment `generation` with `ranges`, `releasing` what it took away
/// (an empty selector removes an annotation).
pub(crate) fn assignment(
    generation: u64,
    ranges: &ShardSelector,
    releasing: &ShardSelector,
) -> Map<String, Value> {
    let value = |s: &ShardSelector| match s.is_empty() {
        true => Value::Null,
        false => json!(s.to_string()),
    };
    Map::from_iter([
        (
            GENERATION_ANNOTATION.to_string(),
            json!(generation.to_string()),
        ),
        (RANGES_ANNOTATION.to_string(), value(ranges)),
        (RELEASING_ANNOTATION.to_string(), value(releasing)),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;
    use kcache_core::selector::{ShardField, ShardRange};
    use std::collections::BTreeMap;

    #[test]
    fn an_unannotated_lease_assigns_nothing_and_bad_annotations_are_named() {
        let lease = DynamicObject::new("shard-a").with_resource_version("5");
        let a = RangeAssignment::from_lease(&lease).unwrap();
        assert_eq!((a.generation, a.acknowledged), (0, 0));
        assert!(a.ranges.is_empty() && a.is_acknowledged());

        let range = ShardSelector::from(ShardRange::split(ShardField::Uid, 0, 2).unwrap());
        let mut lease = lease;
        lease.metadata.annotations = Some(BTreeMap::from([
            (GENERATION_ANNOTATION.into(), "3".into()),
            (RANGES_ANNOTATION.into(), range.to_string()),
            (ACKNOWLEDGED_ANNOTATION.into(), "2".into()),
        ]));
        let a = RangeAssignment::from_lease(&lease).unwrap();
        assert_eq!((a.generation, a.acknowledged), (3, 2));
        assert_eq!(a.slices().len(), 128);
        assert!(!a.is_acknowledged());

        lease
            .metadata
            .annotations
            .as_mut()
            .unwrap()
            .insert(RANGES_ANNOTATION.into(), "shardRange(nope)".into());
        let e = RangeAssignment::from_lease(&lease).unwrap_err().to_string();
        assert!(
            e.contains(RANGES_ANNOTATION) && e.contains("shard-a"),
            "{e}"
        );
    }
}
