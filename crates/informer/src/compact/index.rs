//! Index functions of a [`CompactInformer`](crate::CompactInformer)'s cache written over `&K`
//! ([`typed_index`], [`TypedIndexes`]), and the check that spares them on an update that leaves
//! what they read ([`same_at`], for [`Indexers::with_reuse`](kcache_store::Indexers::with_reuse)).
//!
//! A typed index function decodes `K` from the shared tree (about 5 µs for a realistic pod).
//! Index functions made by one [`TypedIndexes`] share their decode: each keeps the last object
//! it decoded, with its tree, in the group's memo, and the next one asked about the same tree
//! (the indexer computes every index of a write in turn) takes it instead of decoding. The memo
//! is a lock, not a thread-local, so whatever thread or order the calls come in, a function
//! gets the object it is asked about, and at worst decodes it again. Most updates (a status, a
//! resourceVersion) leave what an index reads, and with [`same_at`] such an update decodes
//! nothing for its indexes.

use std::sync::Arc;

use kcache_compact::{Compact, CompactObject};
use kcache_core::{BoxError, Error};
use kcache_store::IndexValues;
use parking_lot::Mutex;
use serde::de::DeserializeOwned;

/// An index function over `&K` as one over `Compact<K>`: it materializes `K` for each write.
/// Several typed index functions of one cache should come from one [`TypedIndexes`], which
/// decodes once for all of them; prefer an index function reading the tree (`Compact::get`,
/// `Object`'s metadata) where the values are at a known path.
pub fn typed_index<K, F>(
    f: F,
) -> impl for<'a> Fn(&'a Compact<K>) -> Result<IndexValues<'a>, BoxError> + Send + Sync + 'static
where
    K: DeserializeOwned + Send + Sync + 'static,
    F: for<'a> Fn(&'a K) -> Result<IndexValues<'a>, BoxError> + Send + Sync + 'static,
{
    TypedIndexes::new().index(f)
}

/// Typed index functions that share one decode per written object (see the module docs):
///
/// ```
/// # use k8s_openapi::api::core::v1::Pod;
/// # use kcache_store::{Indexers, IndexValues};
/// # use kcache_compact::Compact;
/// use kcache_informer::TypedIndexes;
///
/// let typed = TypedIndexes::<Pod>::new();
/// let indexers: Indexers<Compact<Pod>> = Indexers::new()
///     .with("node", typed.index(|p: &Pod| {
///         Ok(IndexValues::from_iter(p.spec.as_ref().and_then(|s| s.node_name.as_deref())))
///     }))
///     .with("sa", typed.index(|p: &Pod| {
///         Ok(IndexValues::from_iter(p.spec.as_ref().and_then(|s| s.service_account_name.as_deref())))
///     }));
/// # let _ = indexers;
/// ```
pub struct TypedIndexes<K> {
    /// The last object decoded by one of the group's functions, with its tree (kept so the
    /// tree cannot be freed and another take its place meanwhile).
    last: Arc<Mutex<Option<Decoded<K>>>>,
}

/// A tree and `K` decoded from it.
type Decoded<K> = (CompactObject, Arc<K>);

impl<K> Clone for TypedIndexes<K> {
    fn clone(&self) -> Self {
        TypedIndexes {
            last: self.last.clone(),
        }
    }
}

impl<K: DeserializeOwned + Send + Sync + 'static> Default for TypedIndexes<K> {
    fn default() -> Self {
        Self::new()
    }
}

impl<K: DeserializeOwned + Send + Sync + 'static> TypedIndexes<K> {
    /// A group with nothing decoded yet.
    pub fn new() -> Self {
        TypedIndexes {
            last: Arc::new(Mutex::new(None)),
        }
    }

    /// An index function over `&K` as one over `Compact<K>`, sharing the group's decode.
    pub fn index<F>(
        &self,
        f: F,
    ) -> impl for<'a> Fn(&'a Compact<K>) -> Result<IndexValues<'a>, BoxError> + Send + Sync + 'static
    where
        F: for<'a> Fn(&'a K) -> Result<IndexValues<'a>, BoxError> + Send + Sync + 'static,
    {
        let group = self.clone();
        move |obj: &Compact<K>| {
            let typed = group.typed(obj)?;
            f(&typed).map(IndexValues::into_owned)
        }
    }

    /// `obj` as `K`: the memo's if it holds the same tree, else decoded (and memoized).
    fn typed(&self, obj: &Compact<K>) -> Result<Arc<K>, Error> {
        let reused = self
            .last
            .lock()
            .as_ref()
            .and_then(|(tree, typed)| tree.same_tree(obj.object()).then(|| typed.clone()));
        if let Some(typed) = reused {
            return Ok(typed);
        }
        let typed = Arc::new(obj.to_typed()?);
        *self.last.lock() = Some((obj.object().clone(), typed.clone()));
        Ok(typed)
    }
}

/// The check for [`Indexers::with_reuse`](kcache_store::Indexers::with_reuse) of an index
/// function over `Compact<K>` that reads only the values at `paths` (each a path as
/// [`Compact::get`] takes it, e.g. `&["spec", "nodeName"]`): an object has the same inputs as the
/// one it replaces when every path holds equal values in both (absent in both counts as equal).
/// Equal subtrees are interned, so comparing one costs a pointer compare, and the walk stops at
/// the first subtree both share ([`CompactValue::same_at`](kcache_compact::CompactValue::same_at));
/// nothing is decoded.
///
/// The paths must cover everything the index function reads, down to what it decides on:
/// `typed_index(|p: &Pod| ... p.spec.node_name ...)` reads `["spec", "nodeName"]`, a label
/// index `["metadata", "labels", "app"]` (or all of `["metadata", "labels"]`).
pub fn same_at<K: 'static>(
    paths: &[&[&str]],
) -> impl Fn(&Compact<K>, &Compact<K>) -> bool + Send + Sync + 'static {
    let paths: Vec<Vec<Box<str>>> = paths
        .iter()
        .map(|p| p.iter().map(|s| Box::from(*s)).collect())
        .collect();
    move |old: &Compact<K>, new: &Compact<K>| {
        let (old, new) = (old.object().as_value(), new.object().as_value());
        paths.iter().all(|path| old.same_at(new, path))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use serde::Deserialize;

    use super::*;

    static DECODES: AtomicUsize = AtomicUsize::new(0);

    /// An object that counts its decodes.
    struct Counted {
        name: String,
    }

    impl<'de> Deserialize<'de> for Counted {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            #[derive(Deserialize)]
            struct Meta {
                name: String,
            }
            #[derive(Deserialize)]
            struct Raw {
                metadata: Meta,
            }
            DECODES.fetch_add(1, Ordering::Relaxed);
            Ok(Counted {
                name: Raw::deserialize(d)?.metadata.name,
            })
        }
    }

    fn counted(name: &str) -> Compact<Counted> {
        serde_json::from_value(serde_json::json!({"metadata": {"name": name}})).unwrap()
    }

    #[test]
    fn the_typed_index_functions_of_one_write_decode_it_once() {
        let (a, b) = (counted("a"), counted("b"));
        let typed = TypedIndexes::new();
        let by_name = typed.index(|c: &Counted| Ok(IndexValues::one(c.name.as_str())));
        let by_len = typed.index(|c: &Counted| Ok(IndexValues::one(c.name.len().to_string())));
        let before = DECODES.load(Ordering::Relaxed);
        let write = |o: &Compact<Counted>| {
            let name = by_name(o).unwrap().into_owned();
            let len = by_len(o).unwrap().into_owned();
            (format!("{name:?}"), format!("{len:?}"))
        };
        assert_eq!(write(&a), write(&a));
        assert!(write(&b).0.contains('b'));
        assert!(write(&a).0.contains('a'));
        assert_eq!(
            DECODES.load(Ordering::Relaxed) - before,
            3,
            "a, then b, then a again"
        );
        // From another thread, interleaved with another object: still the object asked about.
        let before = DECODES.load(Ordering::Relaxed);
        std::thread::scope(|s| {
            s.spawn(|| assert!(write(&b).0.contains('b')));
        });
        assert!(write(&a).0.contains('a'));
        assert_eq!(DECODES.load(Ordering::Relaxed) - before, 2);
        // Functions of separate groups decode each for itself.
        let alone = typed_index(|c: &Counted| Ok(IndexValues::one(c.name.as_str())));
        let before = DECODES.load(Ordering::Relaxed);
        alone(&a).unwrap();
        assert_eq!(DECODES.load(Ordering::Relaxed) - before, 1);
    }

    #[test]
    fn same_at_compares_only_the_paths_given() {
        let pod = |rv: &str, node: Option<&str>, app: &str| -> Compact<serde_json::Value> {
            let mut spec = serde_json::json!({"containers": [{"name": "c"}]});
            if let Some(node) = node {
                spec["nodeName"] = node.into();
            }
            serde_json::from_value(serde_json::json!({
                "metadata": {"name": "p", "resourceVersion": rv, "labels": {"app": app}},
                "spec": spec,
            }))
            .unwrap()
        };
        let same = same_at(&[&["spec", "nodeName"], &["metadata", "labels", "app"]]);
        let n1 = pod("1", Some("n1"), "web");
        assert!(same(&n1, &n1), "one tree");
        assert!(
            same(&n1, &pod("2", Some("n1"), "web")),
            "only the resourceVersion moved"
        );
        assert!(!same(&n1, &pod("2", Some("n2"), "web")), "the node moved");
        assert!(!same(&n1, &pod("2", None, "web")), "the node went");
        assert!(!same(&n1, &pod("2", Some("n1"), "db")), "the label changed");
        assert!(
            same(&pod("1", None, "web"), &pod("2", None, "web")),
            "absent in both"
        );
    }
}
