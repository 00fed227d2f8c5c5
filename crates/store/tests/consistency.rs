//! Failures and concurrency: index function errors leave the store as it was; index functions run
//! without the lock; a held snapshot or long iteration does not hold writers back.

use std::sync::mpsc;
use std::sync::{Arc, OnceLock, Weak};
use std::thread;
use std::time::Duration;

use kcache_core::{DynamicObject, KnownObjects, Object, ReflectorStore};
use kcache_store::{IndexValues, Indexer, Indexers, StoreError};

fn obj(name: &str, app: &str) -> Arc<DynamicObject> {
    Arc::new(DynamicObject::new(name).within("ns").with_label("app", app))
}

/// Fails on objects labelled `app=bad`.
fn picky(o: &DynamicObject) -> Result<IndexValues<'_>, kcache_core::BoxError> {
    match o.label("app") {
        Some("bad") => Err("app must not be bad".into()),
        v => Ok(IndexValues::one(v.unwrap_or(""))),
    }
}

fn app_keys(store: &Indexer<DynamicObject>, app: &str) -> Vec<String> {
    let keys = store.index_keys("app", app).unwrap();
    keys.iter().map(|k| k.to_string()).collect()
}

#[test]
fn an_index_function_error_rejects_the_write_and_keeps_the_store() {
    let store = Indexer::new(Indexers::new().with_namespace_index().with("app", picky));
    let good = obj("a", "web");
    store.add(good.clone()).unwrap();

    let err = store.update(obj("a", "bad")).unwrap_err();
    assert_eq!(
        err,
        StoreError::IndexFunc {
            index: "app".into(),
            key: "ns/a".into(),
            message: "app must not be bad".into()
        }
    );
    assert_eq!(
        err.to_string(),
        "unable to calculate an index entry for key \"ns/a\" on index \"app\": app must not be bad"
    );
    assert!(Arc::ptr_eq(&store.get_by_key("ns/a").unwrap(), &good));
    assert_eq!(app_keys(&store, "web"), ["ns/a"]);
    assert!(store.add(obj("b", "bad")).is_err());
    assert_eq!(store.len(), 1);
    assert!(store.get_by_key("ns/b").is_none());

    assert!(store
        .replace(vec![obj("c", "api"), obj("d", "bad")], "9")
        .is_err());
    assert_eq!(
        store.list_keys(),
        ["ns/a".into()],
        "a failed replace changes nothing"
    );
    assert!(app_keys(&store, "api").is_empty());

    let through_trait = ReflectorStore::add(&store, obj("e", "bad")).unwrap_err();
    assert!(through_trait.to_string().contains("app must not be bad"));

    // add_indexers is all-or-nothing too.
    store.add(obj("z", "zzz")).unwrap();
    fn fails_on_z(o: &DynamicObject) -> Result<IndexValues<'_>, kcache_core::BoxError> {
        if o.name() == "z" {
            Err("no z".into())
        } else {
            Ok(IndexValues::one(o.name()))
        }
    }
    let err = store
        .add_indexers(Indexers::new().with("name", fails_on_z))
        .unwrap_err();
    assert!(
        matches!(err, StoreError::IndexFunc { ref index, ref key, .. } if index == "name" && key == "ns/z")
    );
    assert_eq!(store.get_indexers().len(), 2);
    assert_eq!(
        store.by_index("name", "a"),
        Err(StoreError::IndexNotFound("name".into()))
    );
}

#[test]
fn index_functions_run_without_the_lock() {
    // An index function that reads the store itself would deadlock if it ran under the lock.
    let me: Arc<OnceLock<Weak<Indexer<DynamicObject>>>> = Arc::new(OnceLock::new());
    let seen = me.clone();
    let store = Arc::new(Indexer::new(Indexers::new().with(
        "peek",
        move |o: &DynamicObject| {
            let store = seen.get().and_then(Weak::upgrade).expect("store");
            let already = store.get_by_key(&format!("ns/{}", o.name())).is_some();
            Ok(IndexValues::one(if already { "again" } else { "first" }))
        },
    )));
    me.set(Arc::downgrade(&store)).unwrap();
    store.add(obj("a", "")).unwrap();
    store.update(obj("a", "")).unwrap();
    assert_eq!(app_keys_of(&store, "peek", "again"), ["ns/a"]);
    store.replace(vec![obj("b", "")], "2").unwrap();
    assert_eq!(app_keys_of(&store, "peek", "first"), ["ns/b"]);
}

fn app_keys_of(store: &Indexer<DynamicObject>, index: &str, value: &str) -> Vec<String> {
    let keys = store.index_keys(index, value).unwrap();
    keys.iter().map(|k| k.to_string()).collect()
}

#[test]
fn a_held_snapshot_does_not_block_writers() {
    let store = Arc::new(Indexer::new(Indexers::new().with("app", picky)));
    for i in 0..1000 {
        store.add(obj(&format!("o{i}"), "old")).unwrap();
    }
    let snapshot = store.snapshot();
    let mut walk = snapshot.iter();
    let first = walk.next().map(|(k, _)| k.clone()).unwrap();

    // Mid-iteration, another thread rewrites, deletes and replaces everything.
    let (done_tx, done_rx) = mpsc::channel();
    let writer = {
        let store = store.clone();
        thread::spawn(move || {
            for i in 0..1000 {
                store.update(obj(&format!("o{i}"), "new")).unwrap();
            }
            store.delete_by_key(first.as_str());
            store.replace(vec![obj("only", "new")], "5").unwrap();
            done_tx.send(()).unwrap();
        })
    };
    // A deadlock guard, not a timing assertion: the writer never waits for this reader.
    done_rx
        .recv_timeout(Duration::from_secs(30))
        .expect("writers finished while a reader held a snapshot mid-iteration");
    writer.join().unwrap();

    assert_eq!(walk.count(), 999, "the snapshot still has every old object");
    assert_eq!(snapshot.len(), 1000);
    assert!(snapshot.objects().all(|o| o.label("app") == Some("old")));
    assert_eq!(store.list_keys(), ["ns/only".into()]);
    assert_eq!(app_keys(&store, "new"), ["ns/only"]);
    assert!(app_keys(&store, "old").is_empty());
    assert_eq!(KnownObjects::list_keys(&*store).len(), 1);
}

#[test]
fn writes_after_a_snapshot_leave_it_unchanged() {
    let store = Indexer::new(Indexers::new());
    for i in 0..600 {
        store.add(obj(&format!("o{i}"), "v1")).unwrap();
    }
    let before = store.snapshot();
    for i in 0..600 {
        store.update(obj(&format!("o{i}"), "v2")).unwrap();
    }
    store.add(obj("extra", "v2")).unwrap();
    assert_eq!(before.len(), 600);
    assert!(before.get("ns/extra").is_none());
    assert!(before.objects().all(|o| o.label("app") == Some("v1")));
    let after = store.snapshot();
    assert_eq!(after.len(), 601);
    assert!(after.objects().all(|o| o.label("app") == Some("v2")));
    assert_eq!(after.get("ns/o7").unwrap().label("app"), Some("v2"));
}

#[test]
fn add_indexers_while_writers_run_ends_consistent() {
    let store = Arc::new(Indexer::new(Indexers::new()));
    for i in 0..2000 {
        store
            .add(obj(&format!("o{i}"), &format!("v{}", i % 7)))
            .unwrap();
    }
    let writer = {
        let store = store.clone();
        thread::spawn(move || {
            for round in 0..3 {
                for i in 0..2000 {
                    let app = format!("v{}", (i + round) % 11);
                    store.update(obj(&format!("o{i}"), &app)).unwrap();
                }
                for i in (0..2000).step_by(13) {
                    store.delete_by_key(&format!("ns/o{i}"));
                }
            }
        })
    };
    store
        .add_indexers(Indexers::new().with("app", picky))
        .unwrap();
    writer.join().unwrap();
    // Every index set equals a recomputation from the stored objects.
    let mut total = 0;
    for value in store.list_index_func_values("app") {
        let keys = store.index_keys("app", &value).unwrap();
        assert!(!keys.is_empty());
        for k in &keys {
            assert_eq!(
                store.get_by_key(k.as_str()).unwrap().label("app"),
                Some(&*value)
            );
        }
        total += keys.len();
    }
    assert_eq!(total, store.len());
}

#[test]
fn by_index_sees_each_write_and_keeps_no_replaced_object_alive() {
    let store = Indexer::new(Indexers::new().with_namespace_index().with("app", picky));
    let first = obj("a", "web");
    store.add(first.clone()).unwrap();
    store.add(obj("b", "web")).unwrap();
    // The first read keeps the set's objects; the next must still see every later write.
    assert_eq!(store.by_index("app", "web").unwrap().len(), 2);
    let second = obj("a", "web");
    store.update(second.clone()).unwrap();
    assert_eq!(
        Arc::strong_count(&first),
        1,
        "neither the item map nor a set's kept objects hold the replaced object"
    );
    let web = store.by_index("namespace", "ns").unwrap();
    assert!(web.iter().any(|o| Arc::ptr_eq(o, &second)));
    let web = store.by_index("app", "web").unwrap();
    assert!(web.iter().any(|o| Arc::ptr_eq(o, &second)));

    // A move, a delete and an add each change what the next read returns.
    store.update(obj("a", "db")).unwrap();
    assert_eq!(store.by_index("app", "web").unwrap().len(), 1);
    store.delete_by_key("ns/b");
    assert!(store.by_index("app", "web").unwrap().is_empty());
    store.add(obj("c", "db")).unwrap();
    assert_eq!(store.by_index("app", "db").unwrap().len(), 2);
    assert_eq!(store.by_index("namespace", "ns").unwrap().len(), 2);
}
