//! Slice mode's label: each object carries its hash slice, `slice.sharding.kcache.dev/<ring>:
//! <n>`, and a shard's informers select the values of the slices dealt to it.
//!
//! The slice is [`slice_of`] the object's shard key (the same key label mode places on its ring:
//! `group/Kind/namespace/name`, or the controller owner's), so an owner and its children share
//! a slice. It depends only on the object, so the sharder writes it once and never again when
//! shards come and go: a move of a slice is a Lease write, whatever the slice holds.

use crate::ranges::{Slices, RANGE_SLICES};

/// The slice of shard key `key`: the top bits of its ring hash ([`hash_key`](crate::hash_key):
/// FNV-1a 64 with MurmurHash3's finalizer), i.e. `hash_key(key) * 256 / 2^64`, in
/// `0..RANGE_SLICES`. Stable across processes and releases, as the hash is.
pub fn slice_of(key: &str) -> u32 {
    let scaled = u128::from(crate::hash_key(key)) * u128::from(RANGE_SLICES);
    (scaled >> 64) as u32
}

/// The set-based label selector of `slices` on `label`: `<label> in (0,1,2,...)` (`slices` is
/// never empty: a shard with no slice runs no work).
pub(crate) fn selector_of(label: &str, slices: &Slices) -> String {
    let values: Vec<String> = slices.iter().map(u32::to_string).collect();
    format!("{label} in ({})", values.join(","))
}

/// Whether `value` (an object's slice label) names one of `slices`.
pub(crate) fn names_one_of(value: Option<&str>, slices: &Slices) -> bool {
    value
        .and_then(|v| v.parse::<u32>().ok())
        .is_some_and(|n| slices.contains(&n))
}

#[cfg(test)]
mod tests {
    use super::*;
    use kcache_core::selector::LabelSelector;
    use std::collections::BTreeMap;

    #[test]
    fn slices_are_the_top_bits_of_the_ring_hash_and_spread_evenly() {
        assert_eq!(slice_of("a"), (crate::hash_key("a") >> 56) as u32);
        let mut counts = [0u32; RANGE_SLICES as usize];
        for i in 0..256_000 {
            counts[slice_of(&format!("/ConfigMap/default/cm-{i}")) as usize] += 1;
        }
        let (min, max) = (counts.iter().min().unwrap(), counts.iter().max().unwrap());
        assert!(*min > 850 && *max < 1150, "{min}..{max} per slice of 1000");
    }

    #[test]
    fn a_shard_selects_exactly_its_slices_values() {
        let label = "slice.sharding.kcache.dev/foos";
        let slices: Slices = [3, 4, 200].into();
        let text = selector_of(label, &slices);
        assert_eq!(text, format!("{label} in (3,4,200)"));
        let selector = LabelSelector::parse(&text).unwrap();
        let labels = |v: &str| BTreeMap::from([(label.to_string(), v.to_string())]);
        assert!(selector.matches(Some(&labels("4"))));
        assert!(!selector.matches(Some(&labels("5"))) && !selector.matches(None));
        assert!(names_one_of(Some("200"), &slices));
        assert!(!names_one_of(Some("2"), &slices) && !names_one_of(Some("x"), &slices));
        assert!(!names_one_of(None, &slices));
    }
}
