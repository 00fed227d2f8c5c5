//! client-go's own store and index tests (`thread_safe_store_test.go`, `index_test.go`,
//! `store_test.go`), asserted on kcache's API.

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kcache_core::{DeletedFinalStateUnknown, DynamicObject, Object, ObjectKey};
use kcache_store::{IndexValues, Indexer, Indexers, KeyFunc, StoreError, NAMESPACE_INDEX};

/// client-go's thread-safe-store tests store plain strings under explicit keys; here the object's
/// name is the key and label `v` is the string.
fn obj(key: &str, v: &str) -> Arc<DynamicObject> {
    Arc::new(DynamicObject::new(key).with_label("v", v))
}

fn split_v(o: &DynamicObject) -> Result<IndexValues<'_>, kcache_core::BoxError> {
    Ok(o.label("v").unwrap_or("").split(',').collect())
}

fn keys(store: &Indexer<DynamicObject>, index: &str, value: &str) -> Vec<String> {
    let keys = store.index_keys(index, value).unwrap();
    keys.iter().map(|k| k.to_string()).collect()
}

#[test]
fn delete_removes_empty_sets_from_index() {
    // TestThreadSafeStoreDeleteRemovesEmptySetsFromIndex
    let store = Indexer::new(Indexers::new().with("testIndexer", split_v));
    store.add(obj("testKey", "testKey")).unwrap();
    assert_eq!(keys(&store, "testIndexer", "testKey"), ["testKey"]);
    store.delete_by_key("testKey");
    assert!(store.list_index_func_values("testIndexer").is_empty());
    assert!(keys(&store, "testIndexer", "testKey").is_empty());
}

#[test]
fn add_keeps_non_empty_set_post_delete_from_index() {
    // TestThreadSafeStoreAddKeepsNonEmptySetPostDeleteFromIndex
    let store = Indexer::new(Indexers::new().with("testIndexer", |_: &DynamicObject| {
        Ok(IndexValues::one("testIndex"))
    }));
    store.add(obj("retain", "")).unwrap();
    store.add(obj("delete", "")).unwrap();
    assert_eq!(
        keys(&store, "testIndexer", "testIndex"),
        ["delete", "retain"]
    );
    store.delete_by_key("delete");
    assert_eq!(keys(&store, "testIndexer", "testIndex"), ["retain"]);
    assert_eq!(store.list_index_func_values("testIndexer").len(), 1);
}

#[test]
fn indexing_functions_with_multiple_values() {
    // TestThreadSafeStoreIndexingFunctionsWithMultipleValues
    let store = Indexer::new(Indexers::new().with("testIndexer", split_v));
    let check = |expected: &[(&str, &[&str])]| {
        for (value, want) in expected {
            assert_eq!(keys(&store, "testIndexer", value), *want, "value {value}");
        }
    };
    store.add(obj("key1", "foo")).unwrap();
    store.add(obj("key2", "bar")).unwrap();
    check(&[("foo", &["key1"]), ("bar", &["key2"])]);
    store.update(obj("key2", "foo,bar")).unwrap();
    check(&[("foo", &["key1", "key2"]), ("bar", &["key2"])]);
    store.update(obj("key1", "foo,bar")).unwrap();
    check(&[("foo", &["key1", "key2"]), ("bar", &["key1", "key2"])]);
    store.add(obj("key3", "foo,bar,baz")).unwrap();
    check(&[
        ("foo", &["key1", "key2", "key3"]),
        ("bar", &["key1", "key2", "key3"]),
        ("baz", &["key3"]),
    ]);
    store.update(obj("key1", "foo")).unwrap();
    check(&[
        ("foo", &["key1", "key2", "key3"]),
        ("bar", &["key2", "key3"]),
        ("baz", &["key3"]),
    ]);
    store.update(obj("key2", "bar")).unwrap();
    check(&[
        ("foo", &["key1", "key3"]),
        ("bar", &["key2", "key3"]),
        ("baz", &["key3"]),
    ]);
    store.delete_by_key("key1");
    check(&[
        ("foo", &["key3"]),
        ("bar", &["key2", "key3"]),
        ("baz", &["key3"]),
    ]);
    store.delete_by_key("key3");
    check(&[("foo", &[]), ("bar", &["key2"]), ("baz", &[])]);
    let mut values = store.list_index_func_values("testIndexer");
    values.sort();
    assert_eq!(values, [Arc::from("bar")]);
}

fn pod(name: &str, labels: &[(&str, &str)], annotations: &[(&str, &str)]) -> Arc<Pod> {
    let map = |kv: &[(&str, &str)]| -> Option<BTreeMap<String, String>> {
        Some(
            kv.iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        )
    };
    Arc::new(Pod {
        metadata: ObjectMeta {
            name: Some(name.into()),
            labels: map(labels),
            annotations: map(annotations),
            ..Default::default()
        },
        ..Default::default()
    })
}

fn names(pods: &[Arc<Pod>]) -> Vec<String> {
    let mut names: Vec<String> = pods.iter().map(|p| p.name().to_string()).collect();
    names.sort();
    names
}

#[test]
fn get_index_func_values() {
    // TestGetIndexFuncValues
    let index = Indexer::new(Indexers::new().with("testmodes", |p: &Pod| {
        Ok(IndexValues::one(p.label("foo").unwrap_or("")))
    }));
    index.add(pod("one", &[("foo", "bar")], &[])).unwrap();
    index.add(pod("two", &[("foo", "bar")], &[])).unwrap();
    index.add(pod("tre", &[("foo", "biz")], &[])).unwrap();
    let mut values = index.list_index_func_values("testmodes");
    values.sort();
    assert_eq!(values, [Arc::from("bar"), Arc::from("biz")]);
}

fn users(p: &Pod) -> Result<IndexValues<'_>, kcache_core::BoxError> {
    let users = p
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get("users"))
        .map_or("", String::as_str);
    Ok(users.split(',').collect())
}

#[test]
fn multi_index_keys() {
    // TestMultiIndexKeys
    let index = Indexer::new(Indexers::new().with("byUser", users));
    let pod1 = pod("one", &[], &[("users", "ernie,bert")]);
    let pod2 = pod("two", &[], &[("users", "bert,oscar")]);
    let pod3 = pod("tre", &[], &[("users", "ernie,elmo")]);
    for p in [&pod1, &pod2, &pod3] {
        index.add(p.clone()).unwrap();
    }
    let expected: [(&str, &[&str]); 5] = [
        ("ernie", &["one", "tre"]),
        ("bert", &["one", "two"]),
        ("elmo", &["tre"]),
        ("oscar", &["two"]),
        ("elmo1", &[]),
    ];
    for (user, want) in expected {
        assert_eq!(
            names(&index.by_index("byUser", user).unwrap()),
            want,
            "{user}"
        );
    }
    index.delete(&pod3).unwrap();
    assert_eq!(names(&index.by_index("byUser", "ernie").unwrap()), ["one"]);
    assert!(index.by_index("byUser", "elmo").unwrap().is_empty());

    let mut copy_of_pod2 = (*pod2).clone();
    copy_of_pod2
        .metadata
        .annotations
        .as_mut()
        .unwrap()
        .insert("users".into(), "oscar".into());
    index.update(Arc::new(copy_of_pod2)).unwrap();
    assert_eq!(names(&index.by_index("byUser", "bert").unwrap()), ["one"]);
}

#[test]
fn store_public_interface() {
    // doTestStore (TestCache), with a custom key function as client-go's test uses.
    let key_func = KeyFunc::custom(|o: &DynamicObject| Ok(ObjectKey::from(o.name())));
    let store = Indexer::with_key_func(key_func, Indexers::new());
    let val = |o: &Arc<DynamicObject>| o.label("v").unwrap_or("").to_string();
    store.add(obj("foo", "bar")).unwrap();
    assert_eq!(val(&store.get(&obj("foo", "")).unwrap().unwrap()), "bar");
    store.update(obj("foo", "baz")).unwrap();
    assert_eq!(val(&store.get(&obj("foo", "")).unwrap().unwrap()), "baz");
    store.delete(&obj("foo", "")).unwrap();
    assert!(store.get(&obj("foo", "")).unwrap().is_none());

    for (k, v) in [("a", "b"), ("c", "d"), ("e", "e")] {
        store.add(obj(k, v)).unwrap();
    }
    let mut found: Vec<String> = store.list().iter().map(val).collect();
    found.sort();
    assert_eq!(found, ["b", "d", "e"]);

    store
        .replace(vec![obj("foo", "foo"), obj("bar", "bar")], "0")
        .unwrap();
    let mut found: Vec<String> = store.list().iter().map(val).collect();
    found.sort();
    assert_eq!(found, ["bar", "foo"]);
    let mut keys = store.list_keys();
    keys.sort();
    assert_eq!(keys, [ObjectKey::from("bar"), ObjectKey::from("foo")]);
    store.resync().unwrap();
    assert_eq!(store.len(), 2);
}

#[test]
fn index_returns_objects_sharing_any_value_once() {
    // doTestIndex (TestIndex), plus a multi-value probe object that must not duplicate results.
    let index = Indexer::new(Indexers::new().with("by_val", split_v));
    for (k, v) in [("a", "b"), ("c", "b"), ("e", "f"), ("g", "h")] {
        index.add(obj(k, v)).unwrap();
    }
    let ids = |objs: Vec<Arc<DynamicObject>>| {
        let mut ids: Vec<String> = objs.iter().map(|o| o.name().to_string()).collect();
        ids.sort();
        ids
    };
    assert_eq!(
        ids(index.index("by_val", &obj("", "b")).unwrap()),
        ["a", "c"]
    );
    assert_eq!(ids(index.index("by_val", &obj("", "f")).unwrap()), ["e"]);
    assert_eq!(ids(index.index("by_val", &obj("", "h")).unwrap()), ["g"]);
    index.add(obj("x", "b,f")).unwrap();
    assert_eq!(
        ids(index.index("by_val", &obj("", "b,f,nothing")).unwrap()),
        ["a", "c", "e", "x"]
    );
}

#[test]
fn unknown_index_is_an_error_named_like_client_go() {
    let index: Indexer<DynamicObject> = Indexer::default();
    let want = StoreError::IndexNotFound("nope".into());
    assert_eq!(index.by_index("nope", "x").unwrap_err(), want);
    assert_eq!(index.index_keys("nope", "x").unwrap_err(), want);
    assert_eq!(index.index("nope", &obj("a", "")).unwrap_err(), want);
    assert_eq!(want.to_string(), "Index with name nope does not exist");
    assert!(index.list_index_func_values("nope").is_empty());
}

#[test]
fn add_indexers_conflicts_and_indexes_existing_items() {
    let index = Indexer::new(Indexers::new().with_namespace_index());
    index
        .add(Arc::new(
            DynamicObject::new("a").within("ns1").with_label("v", "x,y"),
        ))
        .unwrap();
    index
        .add(Arc::new(
            DynamicObject::new("b").within("ns2").with_label("v", "y"),
        ))
        .unwrap();
    let err = index
        .add_indexers(Indexers::new().with_namespace_index().with("v", split_v))
        .unwrap_err();
    assert_eq!(
        err,
        StoreError::IndexerConflict(vec![NAMESPACE_INDEX.into()])
    );
    assert_eq!(
        index.get_indexers().len(),
        1,
        "a conflicting call adds nothing"
    );

    index
        .add_indexers(Indexers::new().with("v", split_v))
        .unwrap();
    assert_eq!(
        index.index_keys("v", "y").unwrap(),
        ["ns1/a".into(), "ns2/b".into()]
    );
    assert_eq!(
        index.index_keys("v", "x").unwrap(),
        [ObjectKey::from("ns1/a")]
    );
    index.delete_by_key("ns1/a");
    assert!(index.index_keys("v", "x").unwrap().is_empty());
    assert_eq!(
        index.index_keys(NAMESPACE_INDEX, "ns2").unwrap(),
        ["ns2/b".into()]
    );
    let indexers = index.get_indexers();
    assert_eq!(indexers.names().collect::<Vec<_>>(), [NAMESPACE_INDEX, "v"]);
}

#[test]
fn meta_namespace_index_and_keys() {
    let index = Indexer::new(Indexers::new().with_namespace_index());
    index
        .add(Arc::new(DynamicObject::new("a").within("prod")))
        .unwrap();
    index.add(Arc::new(DynamicObject::new("node-1"))).unwrap();
    assert_eq!(
        index.index_keys("namespace", "prod").unwrap(),
        ["prod/a".into()]
    );
    assert_eq!(
        index.index_keys("namespace", "").unwrap(),
        ["node-1".into()]
    );
    assert!(index.get_by_key("prod/a").is_some());
    assert!(index.get_by_key("node-1").is_some());
}

#[test]
fn tombstones_delete_by_their_stored_key() {
    let index = Indexer::new(Indexers::new().with_namespace_index());
    let a = Arc::new(DynamicObject::new("a").within("prod"));
    index.add(a.clone()).unwrap();
    // The tombstone's last known state may even name another object: its key decides.
    let tombstone = DeletedFinalStateUnknown {
        key: ObjectKey::from("prod/a"),
        obj: Some(Arc::new(DynamicObject::new("renamed").within("elsewhere"))),
    };
    let removed = index.delete_tombstone(&tombstone).unwrap();
    assert!(Arc::ptr_eq(&removed, &a));
    assert!(index.is_empty());
    assert!(index.index_keys("namespace", "prod").unwrap().is_empty());
    assert!(index.delete_tombstone(&tombstone).is_none());
}

#[test]
fn key_function_errors_reject_the_write() {
    let key_func = KeyFunc::custom(|o: &DynamicObject| {
        if o.name().is_empty() {
            Err("object has no name".into())
        } else {
            Ok(ObjectKey::from(o.name()))
        }
    });
    let store = Indexer::with_key_func(key_func, Indexers::new());
    let err = store.add(obj("", "")).unwrap_err();
    assert_eq!(
        err.to_string(),
        "couldn't create key for object: object has no name"
    );
    assert!(store.is_empty());
    assert!(store.replace(vec![obj("a", ""), obj("", "")], "1").is_err());
    assert!(store.is_empty(), "a failed replace changes nothing");
}

#[test]
fn upsert_returns_the_replaced_object() {
    let store = Indexer::new(Indexers::new().with("testIndexer", split_v));
    let first = obj("k", "a");
    assert!(store.upsert(first.clone()).unwrap().is_none());
    let second = obj("k", "b");
    let old = store.upsert(second.clone()).unwrap().expect("replaced");
    assert!(Arc::ptr_eq(&old, &first));
    assert!(Arc::ptr_eq(&store.get_by_key("k").unwrap(), &second));
    assert_eq!(keys(&store, "testIndexer", "b"), ["k"]);
    assert!(keys(&store, "testIndexer", "a").is_empty());
}
