//! A relist applied through `CacheWriter::replace_all`: what it writes, removes and keeps, and
//! that no reader ever sees part of it (client-go's AtomicFIFO promise: the cache shows the
//! state before a relist or after it).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use kcache_core::{CacheReader, CacheWriter, DynamicObject, Object, ObjectKey, StoreError};
use kcache_store::{IndexValues, Indexer, Indexers};
use proptest::prelude::*;

/// An object `ns/name` labelled `app`.
fn obj(name: &str, app: &str) -> Arc<DynamicObject> {
    Arc::new(DynamicObject::new(name).within("ns").with_label("app", app))
}

/// Indexes by `app`, and fails on objects labelled `app=bad`.
fn indexer() -> Indexer<DynamicObject> {
    Indexer::new(Indexers::new().with(
        "app",
        |o: &DynamicObject| match o.label("app").unwrap_or("") {
            "bad" => Err("no index for bad apps".into()),
            app => Ok(IndexValues::one(app)),
        },
    ))
}

fn replace_all(
    store: &Indexer<DynamicObject>,
    objs: &[&Arc<DynamicObject>],
    stale: &[&str],
) -> Vec<Result<Option<Arc<DynamicObject>>, StoreError>> {
    let stale: Vec<ObjectKey> = stale.iter().map(|k| ObjectKey::from(*k)).collect();
    let mut results = Vec::new();
    CacheWriter::replace_all(store, objs, &stale, "7", &mut |r| results.push(r)).unwrap();
    results
}

#[test]
fn writes_the_list_removes_the_stale_keys_and_keeps_the_rest() {
    let store = indexer();
    let (a1, b1, c1) = (obj("a", "web"), obj("b", "web"), obj("c", "db"));
    for o in [&a1, &b1, &c1] {
        store.upsert(o.clone()).unwrap();
    }
    let (a2, d1) = (obj("a", "db"), obj("d", "web"));
    let results = replace_all(&store, &[&a2, &d1], &["ns/b"]);
    assert!(matches!(&results[0], Ok(Some(old)) if Arc::ptr_eq(old, &a1)));
    assert_eq!(results[1], Ok(None));
    let mut keys: Vec<String> = store.list_keys().iter().map(|k| k.to_string()).collect();
    keys.sort();
    assert_eq!(
        keys,
        ["ns/a", "ns/c", "ns/d"],
        "c was neither listed nor stale"
    );
    let mut db: Vec<String> = store
        .by_index("app", "db")
        .unwrap()
        .iter()
        .map(|o| o.metadata.name.clone())
        .collect();
    db.sort();
    assert_eq!(db, ["a", "c"], "the indexes follow the swap");
    assert_eq!(store.by_index("app", "web").unwrap().len(), 1);
}

#[test]
fn a_failing_object_keeps_its_old_version_and_the_rest_goes_ahead() {
    let store = indexer();
    let a1 = obj("a", "web");
    store.upsert(a1.clone()).unwrap();
    let (bad, b1, b2) = (obj("a", "bad"), obj("b", "web"), obj("b", "db"));
    let results = replace_all(&store, &[&bad, &b1, &b2], &[]);
    assert!(
        matches!(&results[0], Err(StoreError::IndexFunc { key, .. }) if key == "ns/a"),
        "{:?}",
        results[0]
    );
    assert_eq!(results[1], Ok(None));
    assert!(
        matches!(&results[2], Ok(Some(old)) if Arc::ptr_eq(old, &b1)),
        "a later write of a key replaces the earlier one of the same list"
    );
    assert!(Arc::ptr_eq(&store.get_by_key("ns/a").unwrap(), &a1));
    assert!(Arc::ptr_eq(&store.get_by_key("ns/b").unwrap(), &b2));
}

/// The content as a reader compares it: name to label.
type Content = BTreeMap<String, String>;

fn content_of(objs: &[Arc<DynamicObject>]) -> Content {
    objs.iter()
        .map(|o| {
            (
                o.metadata.name.clone(),
                o.label("app").unwrap_or("").to_string(),
            )
        })
        .collect()
}

fn build(content: &Content) -> Vec<Arc<DynamicObject>> {
    content.iter().map(|(n, app)| obj(n, app)).collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Readers list the cache over and over while a relist is applied: each list is the state
    /// before the relist or the state after it, never a mix.
    #[test]
    fn readers_see_the_state_before_or_after_a_relist_never_between(
        before in prop::collection::btree_map("[a-z]{1,3}", "web|db|api", 0..300),
        after in prop::collection::btree_map("[a-z]{1,3}", "web|db|api", 0..300),
    ) {
        let store = Arc::new(indexer());
        for o in build(&before) {
            store.upsert(o).unwrap();
        }
        let listed = build(&after);
        let stale: Vec<ObjectKey> = before
            .keys()
            .filter(|k| !after.contains_key(*k))
            .map(|k| ObjectKey::new("ns", k))
            .collect();
        let done = Arc::new(AtomicBool::new(false));
        let readers: Vec<_> = (0..2)
            .map(|_| {
                let (store, done) = (store.clone(), done.clone());
                std::thread::spawn(move || {
                    let mut seen = Vec::new();
                    // At least one list after the relist, whatever the scheduling.
                    loop {
                        let finished = done.load(Ordering::Acquire);
                        seen.push(content_of(&store.list()));
                        if finished {
                            return seen;
                        }
                    }
                })
            })
            .collect();
        let refs: Vec<&Arc<DynamicObject>> = listed.iter().collect();
        let mut failed = Vec::new();
        CacheWriter::replace_all(&*store, &refs, &stale, "2", &mut |r| {
            if let Err(e) = r {
                failed.push(e);
            }
        })
        .unwrap();
        done.store(true, Ordering::Release);
        prop_assert!(failed.is_empty());
        for reader in readers {
            let seen = reader.join().unwrap();
            prop_assert_eq!(seen.last(), Some(&after));
            for snapshot in &seen {
                prop_assert!(
                    snapshot == &before || snapshot == &after,
                    "a reader saw a partly applied relist: {} objects", snapshot.len()
                );
            }
        }
        prop_assert_eq!(content_of(&store.list()), after);
    }
}
