//! Index functions of a [`CompactInformer`](crate::CompactInformer)'s cache written over `&K`
//! ([`typed_index`]), and the check that spares them on an update that leaves what they read
//! ([`same_at`], for [`Indexers::with_reuse`](kcache_store::Indexers::with_reuse)).
//!
//! A typed index function decodes `K` from the shared tree (about 5 µs for a realistic pod),
//! once per write for all of them; most updates (a status, a resourceVersion) leave what an index
//! reads, and with [`same_at`] such an update decodes nothing for its indexes.

use std::any::Any;
use std::cell::RefCell;
use std::rc::Rc;

use kcache_compact::{Compact, CompactObject};
use kcache_core::{BoxError, Error};
use kcache_store::IndexValues;
use serde::de::DeserializeOwned;

/// An index function over `&K` as one over `Compact<K>`: it materializes `K` for each write
/// (once for all the typed index functions of one write: the last object decoded on the
/// writing thread is reused), so prefer an index function reading the tree (`Compact::get`,
/// `Object`'s metadata) where the values are at a known path.
pub fn typed_index<K, F>(
    f: F,
) -> impl for<'a> Fn(&'a Compact<K>) -> Result<IndexValues<'a>, BoxError> + Send + Sync + 'static
where
    K: DeserializeOwned + 'static,
    F: for<'a> Fn(&'a K) -> Result<IndexValues<'a>, BoxError> + Send + Sync + 'static,
{
    move |obj: &Compact<K>| {
        let typed = typed_for_index(obj)?;
        f(&typed).map(IndexValues::into_owned)
    }
}

thread_local! {
    /// The last object the typed index functions decoded on this thread, with its tree (kept so
    /// the tree's address cannot be reused meanwhile): the indexer runs every index function
    /// of a write back to back on one thread.
    static LAST_INDEXED: RefCell<Option<Box<dyn Any>>> = const { RefCell::new(None) };
}

/// `obj` as `K`, decoded once for consecutive calls with the same tree.
fn typed_for_index<K: DeserializeOwned + 'static>(obj: &Compact<K>) -> Result<Rc<K>, Error> {
    let reused = LAST_INDEXED.with_borrow(|last| {
        let (tree, typed) = last.as_ref()?.downcast_ref::<(CompactObject, Rc<K>)>()?;
        tree.same_tree(obj.object()).then(|| typed.clone())
    });
    if let Some(typed) = reused {
        return Ok(typed);
    }
    let typed = Rc::new(obj.to_typed()?);
    LAST_INDEXED.set(Some(Box::new((obj.object().clone(), typed.clone()))));
    Ok(typed)
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
        let by_name = typed_index(|c: &Counted| Ok(IndexValues::one(c.name.as_str())));
        let by_len = typed_index(|c: &Counted| Ok(IndexValues::one(c.name.len().to_string())));
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
