//! The record of range and slice modes on each shard Lease: the annotations through which the
//! sharder assigns a shard its slices and the shard acknowledges them.
//!
//! The sharder writes the shard's slices — in range mode as [`RANGES_ANNOTATION`] (the shard's
//! canonical `shardSelector`) and, when it takes slices away, [`RELEASING_ANNOTATION`]; in slice
//! mode as lists (`0-84,170`) in [`SLICES_ANNOTATION`] and [`RELEASING_SLICES_ANNOTATION`] —
//! and [`GENERATION_ANNOTATION`] (raised on every change). The shard writes
//! [`ACKNOWLEDGED_ANNOTATION`]: the generation it now runs, once the work of every earlier
//! generation has stopped, conditional on the Lease version whose generation it read (so an
//! acknowledgement never lands on a Lease rewritten in between). A Lease with no annotations
//! (new, or written afresh when the sharder took it over) assigns nothing.

use kcache_core::selector::{ShardField, ShardSelector};
use kcache_core::{DynamicObject, Error, Object};
use kcache_transport::{Api, Client, Patch, PatchParams};
use serde_json::{json, Map, Value};

use crate::conventions::Ring;
use crate::membership::{list_lease_objects, ShardState};
use crate::ranges::{format_slices, parse_slices, selector_of, slices_of, Slices};

/// The ranges the sharder assigned to the shard: a canonical KEP-5866 `shardSelector`.
pub const RANGES_ANNOTATION: &str = "sharding.kcache.dev/ranges";
/// The generation of the assignment, raised by the sharder on every change.
pub const GENERATION_ANNOTATION: &str = "sharding.kcache.dev/generation";
/// The ranges the latest change took away, which the shard may act on until it acknowledges.
pub const RELEASING_ANNOTATION: &str = "sharding.kcache.dev/releasing";
/// The generation the shard runs, written by the shard.
pub const ACKNOWLEDGED_ANNOTATION: &str = "sharding.kcache.dev/acknowledged";
/// Slice mode: the slices the sharder assigned to the shard, as a list (`0-84,170`).
pub const SLICES_ANNOTATION: &str = "sharding.kcache.dev/slices";
/// Slice mode: the slices the latest change took away, as a list.
pub const RELEASING_SLICES_ANNOTATION: &str = "sharding.kcache.dev/releasing-slices";

/// How a shard's informers select the objects of its slices, and so how its Lease records them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Selection {
    /// Range mode: a KEP-5866 `shardSelector` over the field's hash.
    Ranges(ShardField),
    /// Slice mode: the values of the slice label the sharder writes on each object.
    SliceLabel,
}

/// One shard Lease's assignment of slices (range or slice mode), as read from its annotations.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RangeAssignment {
    /// The Lease's name: the shard.
    pub shard: String,
    /// The Lease's resourceVersion.
    pub resource_version: String,
    /// The assignment's generation (0: never assigned).
    pub generation: u64,
    /// Range mode: the shard's ranges (empty: none, or slice mode).
    pub ranges: ShardSelector,
    /// Range mode: what the latest change took away.
    pub releasing: ShardSelector,
    /// The shard's slices, in either mode (`0..RANGE_SLICES`).
    pub slices: Slices,
    /// The slices the latest change took away, in either mode.
    pub releasing_slices: Slices,
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
        let list = |key: &str| -> Result<Slices, Error> {
            parse_slices(text(key).unwrap_or(""))
                .map_err(|e| Error::decode(format!("annotation {key} of Lease {}", obj.name()), e))
        };
        let (ranges, releasing) = (
            selector(RANGES_ANNOTATION)?,
            selector(RELEASING_ANNOTATION)?,
        );
        let mut slices = list(SLICES_ANNOTATION)?;
        slices.extend(slices_of(&ranges));
        let mut releasing_slices = list(RELEASING_SLICES_ANNOTATION)?;
        releasing_slices.extend(slices_of(&releasing));
        Ok(RangeAssignment {
            shard: obj.name().to_string(),
            resource_version: obj.resource_version().unwrap_or_default().to_string(),
            generation: number(GENERATION_ANNOTATION)?,
            ranges,
            releasing,
            slices,
            releasing_slices,
            acknowledged: number(ACKNOWLEDGED_ANNOTATION)?,
        })
    }

    /// Whether the shard runs this generation (and nothing it released).
    pub fn is_acknowledged(&self) -> bool {
        self.acknowledged == self.generation
    }
}

/// Every shard Lease of `ring` (live or not) with its assignment, listed (range or slice mode).
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

/// The annotations of assignment `generation` with `slices`, `releasing` what it took away, as
/// `selection` records them; the other mode's annotations, and empty ones, are removed.
pub(crate) fn assignment(
    generation: u64,
    slices: &Slices,
    releasing: &Slices,
    selection: Selection,
) -> Map<String, Value> {
    let text = |s: String| match s.is_empty() {
        true => Value::Null,
        false => json!(s),
    };
    let (ranges, releasing_ranges, list, releasing_list) = match selection {
        Selection::Ranges(field) => (
            text(selector_of(field, slices).to_string()),
            text(selector_of(field, releasing).to_string()),
            Value::Null,
            Value::Null,
        ),
        Selection::SliceLabel => (
            Value::Null,
            Value::Null,
            text(format_slices(slices)),
            text(format_slices(releasing)),
        ),
    };
    Map::from_iter([
        (
            GENERATION_ANNOTATION.to_string(),
            json!(generation.to_string()),
        ),
        (RANGES_ANNOTATION.to_string(), ranges),
        (RELEASING_ANNOTATION.to_string(), releasing_ranges),
        (SLICES_ANNOTATION.to_string(), list),
        (RELEASING_SLICES_ANNOTATION.to_string(), releasing_list),
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
        assert_eq!(a.slices.len(), 128);
        assert!(!a.is_acknowledged());

        let annotations = lease.metadata.annotations.as_mut().unwrap();
        annotations.insert(RANGES_ANNOTATION.into(), "shardRange(nope)".into());
        let e = RangeAssignment::from_lease(&lease).unwrap_err().to_string();
        assert!(
            e.contains(RANGES_ANNOTATION) && e.contains("shard-a"),
            "{e}"
        );
    }

    /// Slice mode writes lists, range mode selectors; each reads back as the same slices, and
    /// each write removes the other mode's annotations.
    #[test]
    fn both_modes_record_the_same_slices() {
        let (slices, releasing): (Slices, Slices) = ((0..10).collect(), (10..12).collect());
        for selection in [Selection::Ranges(ShardField::Uid), Selection::SliceLabel] {
            let written = assignment(4, &slices, &releasing, selection);
            let annotations: BTreeMap<String, String> = written
                .iter()
                .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
                .collect();
            assert_eq!(written.len(), 5, "every key set or removed");
            assert_eq!(annotations.len(), 3, "{annotations:?}");
            let mut lease = DynamicObject::new("shard-a");
            lease.metadata.annotations = Some(annotations.clone());
            let a = RangeAssignment::from_lease(&lease).unwrap();
            assert_eq!(
                (a.generation, &a.slices, &a.releasing_slices),
                (4, &slices, &releasing)
            );
            let ranges = selection != Selection::SliceLabel;
            assert_eq!(annotations.contains_key(RANGES_ANNOTATION), ranges);
            assert_eq!(annotations.contains_key(SLICES_ANNOTATION), !ranges);
        }
        let mut bad = DynamicObject::new("shard-b");
        bad.metadata.annotations =
            Some(BTreeMap::from([(SLICES_ANNOTATION.into(), "0-300".into())]));
        let e = RangeAssignment::from_lease(&bad).unwrap_err().to_string();
        assert!(
            e.contains(SLICES_ANNOTATION) && e.contains("shard-b"),
            "{e}"
        );
    }
}
