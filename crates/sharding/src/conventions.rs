//! The label names a ring uses, timebertt/kubernetes-controller-sharding's by default so that a
//! kcache controller can also run under that project's sharder (and its tooling reads ours).

use std::collections::BTreeMap;

/// The ring label on each shard Lease (`<ring label>: <ring>`).
pub const RING_LABEL: &str = "alpha.sharding.timebertt.dev/clusterring";
/// The prefix of the shard label on objects (`<prefix>/<ring>: <shard>`).
pub const SHARD_LABEL_PREFIX: &str = "shard.alpha.sharding.timebertt.dev";
/// The prefix of the drain label on objects (`<prefix>/<ring>: "true"`).
pub const DRAIN_LABEL_PREFIX: &str = "drain.alpha.sharding.timebertt.dev";

/// The prefix of the slice label on objects in slice mode (`<prefix>/<ring>: <slice>`).
pub const SLICE_LABEL_PREFIX: &str = "slice.sharding.kcache.dev";

/// One ring: its name, where its shard Leases live and the labels it uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ring {
    name: String,
    lease_namespace: String,
    ring_label: String,
    shard_label_prefix: String,
    drain_label_prefix: String,
}

impl Ring {
    /// The ring `name` (one per sharded controller; a label value, so at most 63 characters of
    /// `[a-z0-9A-Z._-]`) with its shard Leases in `lease_namespace`, with timebertt's labels.
    pub fn new(name: &str, lease_namespace: &str) -> Self {
        Ring {
            name: name.to_string(),
            lease_namespace: lease_namespace.to_string(),
            ring_label: RING_LABEL.to_string(),
            shard_label_prefix: SHARD_LABEL_PREFIX.to_string(),
            drain_label_prefix: DRAIN_LABEL_PREFIX.to_string(),
        }
    }

    /// Other label names: the Leases' ring label and the objects' shard and drain label prefixes.
    pub fn with_labels(mut self, ring_label: &str, shard_prefix: &str, drain_prefix: &str) -> Self {
        self.ring_label = ring_label.to_string();
        self.shard_label_prefix = shard_prefix.to_string();
        self.drain_label_prefix = drain_prefix.to_string();
        self
    }

    /// The ring's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The namespace of the shard Leases.
    pub fn lease_namespace(&self) -> &str {
        &self.lease_namespace
    }

    /// The labels every shard Lease of this ring carries.
    pub fn lease_labels(&self) -> BTreeMap<String, String> {
        BTreeMap::from([(self.ring_label.clone(), self.name.clone())])
    }

    /// The label selector of this ring's shard Leases.
    pub fn lease_selector(&self) -> String {
        format!("{}={}", self.ring_label, self.name)
    }

    /// The label naming an object's shard: `shard.alpha.sharding.timebertt.dev/<ring>`.
    pub fn shard_label(&self) -> String {
        format!("{}/{}", self.shard_label_prefix, self.name)
    }

    /// The label asking an object's shard to let it go: `drain.alpha.sharding.timebertt.dev/<ring>`.
    pub fn drain_label(&self) -> String {
        format!("{}/{}", self.drain_label_prefix, self.name)
    }

    /// Slice mode's label on each object: `slice.sharding.kcache.dev/<ring>`, its hash slice
    /// ([`slice_of`](crate::slice_of) its shard key). Per ring, as two rings may key one kind
    /// differently.
    pub fn slice_label(&self) -> String {
        format!("{SLICE_LABEL_PREFIX}/{}", self.name)
    }

    /// The label selector of the objects assigned to `shard` (what its informers watch).
    pub fn shard_selector(&self, shard: &str) -> String {
        format!("{}={shard}", self.shard_label())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_follow_timeberts_conventions() {
        let ring = Ring::new("foos", "operators");
        assert_eq!(
            ring.lease_selector(),
            "alpha.sharding.timebertt.dev/clusterring=foos"
        );
        assert_eq!(
            ring.shard_label(),
            "shard.alpha.sharding.timebertt.dev/foos"
        );
        assert_eq!(
            ring.drain_label(),
            "drain.alpha.sharding.timebertt.dev/foos"
        );
        assert_eq!(
            ring.shard_selector("replica-a"),
            "shard.alpha.sharding.timebertt.dev/foos=replica-a"
        );
        assert_eq!(ring.slice_label(), "slice.sharding.kcache.dev/foos");
        let own = ring.with_labels("example.com/ring", "shard.example.com", "drain.example.com");
        assert_eq!(own.shard_label(), "shard.example.com/foos");
        assert_eq!(own.lease_labels()["example.com/ring"], "foos");
    }
}
