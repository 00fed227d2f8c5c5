//! `LazyTyped<K>`: a compact informer's object handed to a handler without decoding it.
//!
//! client-go hands handlers a pointer into its cache; a typed handler of a compact informer gets
//! a `K` decoded from the shared tree (a realistic pod ≈ 6 µs, and as long again to free), even
//! when all it does is enqueue the object's key, as most controllers' handlers do
//! (controller-runtime's `EnqueueRequestForObject`). A lazy handler gets this value instead: its
//! metadata comes from the tree, and `K` is decoded the first time the handler reads it — once
//! for all the handlers the notification goes to, as typed handlers share their copies.

use std::fmt;
use std::ops::Deref;
use std::sync::{Arc, OnceLock};

use kcache_compact::Compact;
use kcache_core::{Error, Object};
use serde::de::DeserializeOwned;

/// A cached `K` as a [lazy handler](crate::CompactInformer::add_lazy_event_handler) receives
/// it: the object's shared tree, and `K` decoded from it on first use.
///
/// - Metadata ([`Object`]: name, namespace, labels, resourceVersion) and the tree
///   ([`compact`](Self::compact), `Compact::get` by path) are read without decoding.
/// - Dereferencing (`obj.spec`, `&*obj`) or [`typed`](Self::typed) decodes `K` once; every
///   handler holding the same notification then reads that one copy. Two handlers reading it at
///   the same moment may both decode (the first stored wins) rather than one waiting.
///
/// Dereferencing panics only if `K`'s decoding is not deterministic: the tree was checked to
/// decode as `K` when it entered the cache. [`try_typed`](Self::try_typed) returns that error.
pub struct LazyTyped<K> {
    compact: Arc<Compact<K>>,
    typed: OnceLock<Arc<K>>,
}

impl<K> LazyTyped<K> {
    /// The cached object, not decoded yet.
    pub fn new(compact: Arc<Compact<K>>) -> Self {
        LazyTyped {
            compact,
            typed: OnceLock::new(),
        }
    }

    /// The cached object's tree, as the cache holds it.
    pub fn compact(&self) -> &Arc<Compact<K>> {
        &self.compact
    }

    /// Whether `K` has been decoded (by this holder or another of the same notification).
    pub fn is_decoded(&self) -> bool {
        self.typed.get().is_some()
    }
}

impl<K: DeserializeOwned> LazyTyped<K> {
    /// The typed object, decoded on the first call.
    pub fn try_typed(&self) -> Result<&Arc<K>, Error> {
        if let Some(typed) = self.typed.get() {
            return Ok(typed);
        }
        let typed = Arc::new(self.compact.to_typed()?);
        Ok(self.typed.get_or_init(|| typed))
    }

    /// The typed object (shared, not copied), decoded on the first call.
    pub fn typed(&self) -> Arc<K> {
        self.deref_typed().clone()
    }

    fn deref_typed(&self) -> &Arc<K> {
        match self.try_typed() {
            Ok(typed) => typed,
            Err(e) => {
                panic!("a cached object no longer decodes (non-deterministic Deserialize): {e}")
            }
        }
    }
}

impl<K: DeserializeOwned> Deref for LazyTyped<K> {
    type Target = K;

    fn deref(&self) -> &K {
        self.deref_typed()
    }
}

impl<K: Send + Sync + 'static> Object for LazyTyped<K> {
    fn name(&self) -> &str {
        self.compact.name()
    }
    fn namespace(&self) -> Option<&str> {
        self.compact.namespace()
    }
    fn resource_version(&self) -> Option<&str> {
        self.compact.resource_version()
    }
    fn uid(&self) -> Option<&str> {
        self.compact.uid()
    }
    fn labels(&self) -> Option<&std::collections::BTreeMap<String, String>> {
        self.compact.labels()
    }
    fn annotations(&self) -> Option<&std::collections::BTreeMap<String, String>> {
        self.compact.annotations()
    }
    fn generation(&self) -> Option<i64> {
        self.compact.generation()
    }
    fn is_deleting(&self) -> bool {
        self.compact.is_deleting()
    }
    fn has_finalizer(&self, name: &str) -> bool {
        self.compact.has_finalizer(name)
    }
    fn owner_references(&self) -> Vec<kcache_core::OwnerRef<'_>> {
        self.compact.owner_references()
    }
}

impl<K> fmt::Debug for LazyTyped<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LazyTyped")
            .field("compact", &self.compact)
            .field("decoded", &self.is_decoded())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Deserialize)]
    struct Thing {
        metadata: Meta,
        spec: Spec,
    }

    #[derive(serde::Deserialize)]
    struct Meta {
        name: String,
    }

    #[derive(serde::Deserialize)]
    struct Spec {
        size: u32,
    }

    fn lazy() -> LazyTyped<Thing> {
        let json = serde_json::json!({
            "metadata": {"name": "a", "namespace": "ns", "labels": {"app": "x"}},
            "spec": {"size": 3}
        });
        LazyTyped::new(Arc::new(serde_json::from_value(json).unwrap()))
    }

    #[test]
    fn metadata_reads_decode_nothing_and_the_first_read_of_k_decodes_once() {
        let obj = lazy();
        assert_eq!((obj.name(), obj.namespace()), ("a", Some("ns")));
        assert_eq!(obj.label("app"), Some("x"));
        assert!(!obj.is_decoded(), "metadata comes from the tree");
        assert_eq!(obj.spec.size, 3);
        assert!(obj.is_decoded());
        let first = obj.typed();
        assert!(Arc::ptr_eq(&first, &obj.typed()), "one decode, shared");
        assert_eq!(first.metadata.name, "a");
    }
}
