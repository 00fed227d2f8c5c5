//! What a controller queues: the key of the object to reconcile (controller-runtime's
//! `reconcile.Request`, kube-runtime's `ObjectRef`).

use std::fmt;

use kcache_core::{Object, ObjectKey};

/// The object a reconcile is for: its `namespace/name` key (just `name` when cluster-scoped).
///
/// The queue holds requests, not objects: a reconcile always reads the newest cached state, and
/// several events of one object collapse into one request. Cloning is a reference count.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ReconcileRequest(ObjectKey);

impl ReconcileRequest {
    /// The request for `name` in `namespace` (`""` for a cluster-scoped object).
    pub fn new(namespace: &str, name: &str) -> Self {
        ReconcileRequest(ObjectKey::new(namespace, name))
    }

    /// The request for `obj`.
    pub fn of<K: Object + ?Sized>(obj: &K) -> Self {
        ReconcileRequest(ObjectKey::of(obj))
    }

    /// The cache key, `namespace/name`.
    pub fn key(&self) -> &str {
        self.0.as_str()
    }

    /// The namespace (`""` for a cluster-scoped object).
    pub fn namespace(&self) -> &str {
        self.0.namespace()
    }

    /// The name.
    pub fn name(&self) -> &str {
        self.0.name()
    }
}

impl From<ObjectKey> for ReconcileRequest {
    fn from(key: ObjectKey) -> Self {
        ReconcileRequest(key)
    }
}

impl fmt::Display for ReconcileRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.key())
    }
}

impl fmt::Debug for ReconcileRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ReconcileRequest({})", self.key())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn namespaced_and_cluster_scoped_keys() {
        let r = ReconcileRequest::new("ns", "a");
        assert_eq!((r.key(), r.namespace(), r.name()), ("ns/a", "ns", "a"));
        let c = ReconcileRequest::new("", "node-1");
        assert_eq!((c.key(), c.namespace(), c.name()), ("node-1", "", "node-1"));
        assert_eq!(r.to_string(), "ns/a");
    }
}
