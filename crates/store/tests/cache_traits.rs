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
