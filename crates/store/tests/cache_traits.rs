//! The `Indexer` seen through kcache-core's cache traits, as an informer and a lister use it,
//! and a lister over a cache that is not an `Indexer`.

use std::sync::Arc;

use kcache_core::selector::LabelSelector;
use kcache_core::{CacheReader, CacheWriter, DynamicObject, Object, StoreError};
use kcache_store::{IndexValues, Indexer, Indexers, Lister};

fn obj(ns: &str, name: &str, app: &str) -> Arc<DynamicObject> {
    Arc::new(DynamicObject::new(name).within(ns).with_label("app", app))
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

#[test]
fn upsert_batch_writes_in_order_and_rejects_only_the_failing_writes() {
    let store = indexer();
    let a1 = obj("ns", "a", "web");
    let bad = obj("ns", "b", "bad");
    let a2 = obj("ns", "a", "db");
    let mut results = Vec::new();
    CacheWriter::upsert_batch(&store, &[&a1, &bad, &a2], &mut |r| results.push(r));
    assert_eq!(results.len(), 3);
    assert_eq!(results[0], Ok(None));
    assert!(
        matches!(&results[1], Err(StoreError::IndexFunc { index, key, .. }) if index == "app" && key == "ns/b"),
        "{:?}",
        results[1]
    );
    assert!(matches!(&results[2], Ok(Some(old)) if Arc::ptr_eq(old, &a1)));
    assert_eq!(CacheReader::len(&store), 1);
    assert!(store.by_index("app", "web").unwrap().is_empty());
    assert_eq!(store.by_index("app", "db").unwrap().len(), 1);
}

#[test]
fn upsert_batch_of_good_writes_returns_what_each_replaced() {
    let store = indexer();
    let a1 = obj("ns", "a", "web");
    let c = obj("ns", "c", "web");
    let a2 = obj("ns", "a", "web");
    let mut replaced = Vec::new();
    CacheWriter::upsert_batch(&store, &[&a1, &c, &a2], &mut |r| {
        replaced.push(r.unwrap().map(|o| o.name().to_string()))
    });
    assert_eq!(replaced, [None, None, Some("a".to_string())]);
    assert!(Arc::ptr_eq(&store.get_by_key("ns/a").unwrap(), &a2));
}

#[test]
fn deletes_return_the_removed_object() {
    let store = indexer();
    let a = obj("ns", "a", "web");
    CacheWriter::upsert(&store, a.clone()).unwrap();
    let removed = CacheWriter::delete(&store, &a).unwrap().unwrap();
    assert!(Arc::ptr_eq(&removed, &a));
    assert_eq!(CacheWriter::delete_by_key(&store, "ns/a"), Ok(None));
}

#[test]
fn reads_name_an_unknown_index() {
    let store = indexer();
    CacheWriter::upsert(&store, obj("ns", "a", "web")).unwrap();
    CacheWriter::upsert(&store, obj("ns", "b", "db")).unwrap();
    let want = StoreError::IndexNotFound("byOwner".into());
    assert_eq!(
        CacheReader::by_index(&store, "byOwner", "x"),
        Err(want.clone())
    );
    assert_eq!(CacheReader::index_keys(&store, "byOwner", "x"), Err(want));
    assert!(CacheReader::list_index_func_values(&store, "byOwner").is_empty());
    let mut values = CacheReader::list_index_func_values(&store, "app");
    values.sort();
    assert_eq!(values, [Arc::from("db"), Arc::from("web")]);
    let webs = store.list_matching(&mut |o| o.label("app") == Some("web"));
    assert_eq!(webs.len(), 1);
}

#[test]
fn a_lister_reads_any_cache_reader_even_behind_dyn() {
    let store = Arc::new(indexer());
    CacheWriter::upsert(&*store, obj("prod", "a", "web")).unwrap();
    CacheWriter::upsert(&*store, obj("dev", "b", "web")).unwrap();
    let reader: Arc<dyn CacheReader<DynamicObject>> = store;
    let lister = Lister::new(reader, "widget");
    let web = LabelSelector::parse("app=web").unwrap();
    assert_eq!(lister.list(&web).len(), 2);
    // No namespace index here: the namespace lister scans.
    assert_eq!(lister.by_namespace("prod").list(&web).len(), 1);
    assert_eq!(lister.by_namespace("prod").get("a").unwrap().name(), "a");
    assert!(lister
        .by_namespace("prod")
        .get("b")
        .unwrap_err()
        .is_not_found());
}

/// A store with an `app` index that counts its calls and keeps its values while the label stays.
struct Counting {
    store: Indexer<DynamicObject>,
    calls: Arc<std::sync::atomic::AtomicUsize>,
}

/// Calls of the index function per reuse: debug builds call it on both objects to check the
/// promise.
const CHECKS: usize = if cfg!(debug_assertions) { 2 } else { 0 };

impl Counting {
    fn new() -> Self {
        let calls = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counted = calls.clone();
        let store = Indexer::new(Indexers::new().with_reuse(
            "app",
            move |o: &DynamicObject| {
                counted.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                Ok(IndexValues::one(o.label("app").unwrap_or("")))
            },
            |old: &DynamicObject, new: &DynamicObject| old.label("app") == new.label("app"),
        ));
        Counting { store, calls }
    }

    fn calls(&self) -> usize {
        self.calls.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The keys indexed under `app`, sorted.
    fn keys(&self, app: &str) -> Vec<String> {
        let mut keys: Vec<String> = self
            .store
            .index_keys("app", app)
            .unwrap()
            .iter()
            .map(ToString::to_string)
            .collect();
        keys.sort();
        keys
    }
}

#[test]
fn an_update_with_the_same_inputs_keeps_its_values_without_calling_the_index_function() {
    let c = Counting::new();
    let a1 = obj("ns", "a", "web");
    c.store.add(a1.clone()).unwrap();
    assert_eq!(c.calls(), 1, "a new object is indexed");
    let a2 = obj("ns", "a", "web");
    assert!(Arc::ptr_eq(
        &c.store.upsert(a2.clone()).unwrap().unwrap(),
        &a1
    ));
    assert_eq!(c.calls(), 1 + CHECKS, "same label: values kept");
    let found = c.store.by_index("app", "web").unwrap();
    assert!(
        found.len() == 1 && Arc::ptr_eq(&found[0], &a2),
        "the set holds the new object"
    );
    c.store.update(obj("ns", "a", "db")).unwrap();
    assert_eq!(c.calls(), 2 + CHECKS, "the label changed: computed");
    assert!(c.keys("web").is_empty());
    assert_eq!(c.keys("db"), ["ns/a"]);

    // A batch: each object is compared with the one it replaces, the first with the stored one.
    let (b, a3, a4, a5) = (
        obj("ns", "b", "web"),
        obj("ns", "a", "db"),
        obj("ns", "a", "db"),
        obj("ns", "a", "web"),
    );
    let mut replaced = 0;
    CacheWriter::upsert_batch(&c.store, &[&b, &a3, &a4, &a5], &mut |r| {
        replaced += usize::from(r.unwrap().is_some())
    });
    assert_eq!(replaced, 3);
    assert_eq!(
        c.calls(),
        4 + 3 * CHECKS,
        "b is new and a5 changed the label; a3 and a4 kept theirs"
    );
    assert_eq!(c.keys("web"), ["ns/a", "ns/b"]);
    assert!(c.keys("db").is_empty());
}

#[test]
#[cfg(debug_assertions)]
#[should_panic(expected = "its same-inputs check held for \"ns/a\"")]
fn debug_builds_catch_a_same_inputs_check_that_misses_what_the_function_reads() {
    let store = Indexer::new(Indexers::new().with_reuse(
        "app",
        |o: &DynamicObject| Ok(IndexValues::one(o.label("app").unwrap_or(""))),
        |_: &DynamicObject, _: &DynamicObject| true,
    ));
    store.add(obj("ns", "a", "web")).unwrap();
    let _ = store.update(obj("ns", "a", "db"));
}

#[test]
fn relists_keep_the_values_of_objects_whose_inputs_are_unchanged() {
    let c = Counting::new();
    for (name, app) in [("a", "web"), ("b", "web"), ("c", "db")] {
        c.store.add(obj("ns", name, app)).unwrap();
    }
    assert_eq!(c.calls(), 3);

    // a unchanged, b moved to db, then listed again unchanged (the later one wins), c gone.
    let (a, b1, b2) = (
        obj("ns", "a", "web"),
        obj("ns", "b", "db"),
        obj("ns", "b", "db"),
    );
    c.store.replace(vec![a, b1, b2.clone()], "9").unwrap();
    assert_eq!(c.calls(), 3 + 1 + 2 * CHECKS, "only b's move is computed");
    assert_eq!(c.keys("web"), ["ns/a"]);
    assert_eq!(c.keys("db"), ["ns/b"]);
    assert!(Arc::ptr_eq(&c.store.get_by_key("ns/b").unwrap(), &b2));

    // The informer's atomic relist: a listed again unchanged, d new, b neither listed nor
    // stale (kept as it is, with its values).
    let before = c.calls();
    let (a2, d) = (obj("ns", "a", "web"), obj("ns", "d", "web"));
    let results = c.store.replace_all(&[&a2, &d], &[]);
    assert!(results.iter().all(Result::is_ok));
    assert_eq!(
        c.calls() - before,
        1 + 2 * CHECKS,
        "only the new d is computed; a and the kept b keep theirs"
    );
    assert_eq!(c.keys("web"), ["ns/a", "ns/d"]);
    assert_eq!(c.keys("db"), ["ns/b"]);
}
