//! client-go's `delta_fifo_test.go`, as assertions on kcache's API (Delta mode).

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::{drain, fifo, obj, pop, show, Known, Obj};
use kcache_core::{DeletedFinalStateUnknown, ObjectKey};
use kcache_delta_fifo::{
    Delta, DeltaFifo, DeltaFifoOptions, DeltaObject, DeltaType, Deltas, Error, FifoMode,
    TransformFunc,
};

const D: FifoMode = FifoMode::Delta;

#[test]
fn add_update() {
    // TestDeltaFIFO_addUpdate
    let f = fifo(D, None, false);
    f.add(obj("foo", 10)).unwrap();
    f.update(obj("foo", 12)).unwrap();
    f.delete(obj("foo", 15)).unwrap();
    let listed: Vec<i64> = f.list().iter().map(|o| o.object().unwrap().val).collect();
    assert_eq!(listed, [15]);
    assert_eq!(f.list_keys(), [ObjectKey::from("foo")]);
    let (deltas, _) = pop(&f);
    assert_eq!(deltas, ["Added foo=10", "Updated foo=12", "Deleted foo=15"]);
    assert!(f.is_empty());
    assert!(f.get(&obj("foo", 0)).is_none(), "item did not get removed");
}

#[test]
fn replace_with_delete_delta_in() {
    // TestDeltaFIFO_replaceWithDeleteDeltaIn (#83810)
    let f = fifo(D, Some(Known::of(&[("foo", 1)])), false);
    f.delete(obj("foo", 1)).unwrap();
    f.replace(vec![obj("foo", 2)], "").unwrap();
    assert_eq!(pop(&f).0, ["Deleted foo=1", "Sync foo=2"]);
}

#[test]
fn replace_makes_deletions_for_objects_only_in_queue() {
    // TestDeltaFIFOW_ReplaceMakesDeletionsForObjectsOnlyInQueue, with and without known objects.
    type Ops = fn(&DeltaFifo<Obj>);
    let cases: [(&str, Ops, &[&str], bool); 6] = [
        (
            "added object is deleted on replace",
            |f| {
                f.add(obj("foo", 2)).unwrap();
                f.replace(vec![], "0").unwrap();
            },
            &["Added foo=2", "Deleted ~foo=2"],
            false,
        ),
        (
            "replaced object gets a single delete",
            |f| {
                f.add(obj("foo", 2)).unwrap();
                f.replace(vec![obj("foo", 2)], "0").unwrap();
                f.replace(vec![], "0").unwrap();
            },
            &["Added foo=2", "Replaced foo=2", "Deleted ~foo=2"],
            true,
        ),
        (
            "deleted object gets a single delete",
            |f| {
                f.add(obj("foo", 2)).unwrap();
                f.delete(obj("foo", 2)).unwrap();
                f.replace(vec![], "0").unwrap();
            },
            &["Added foo=2", "Deleted foo=2"],
            false,
        ),
        (
            "synced objects get a single delete",
            |f| {
                f.add(obj("foo", 2)).unwrap();
                f.replace(vec![obj("foo", 2)], "0").unwrap();
                f.replace(vec![obj("foo", 2)], "0").unwrap();
                f.replace(vec![], "0").unwrap();
            },
            &["Added foo=2", "Sync foo=2", "Sync foo=2", "Deleted ~foo=2"],
            false,
        ),
        (
            "added object gets a single delete on multiple replaces",
            |f| {
                f.add(obj("foo", 2)).unwrap();
                f.replace(vec![], "0").unwrap();
                f.replace(vec![], "1").unwrap();
            },
            &["Added foo=2", "Deleted ~foo=2"],
            false,
        ),
        (
            "added, deleted and added object is deleted",
            |f| {
                f.add(obj("foo", 2)).unwrap();
                f.delete(obj("foo", 2)).unwrap();
                f.add(obj("foo", 3)).unwrap();
                f.replace(vec![], "0").unwrap();
            },
            &[
                "Added foo=2",
                "Deleted foo=2",
                "Added foo=3",
                "Deleted ~foo=3",
            ],
            false,
        ),
    ];
    for (name, ops, expected, emit_replaced) in cases {
        for known in [Some(Known::of(&[])), None] {
            let f = fifo(D, known, emit_replaced);
            ops(&f);
            assert_eq!(pop(&f).0, expected, "{name}");
            assert!(f.is_empty(), "{name}: extra deltas {:?}", f.list_keys());
        }
    }
}

#[test]
fn enqueueing_no_lister() {
    // TestDeltaFIFO_enqueueingNoLister: a delete of an unqueued key is ignored.
    let f = fifo(D, None, false);
    f.add(obj("foo", 10)).unwrap();
    f.update(obj("bar", 15)).unwrap();
    f.add(obj("qux", 17)).unwrap();
    f.delete(obj("qux", 18)).unwrap();
    f.delete(obj("baz", 20)).unwrap();
    let newest: Vec<String> = drain(&f)
        .into_iter()
        .map(|d| d[d.len() - 1].clone())
        .collect();
    assert_eq!(newest, ["Added foo=10", "Updated bar=15", "Deleted qux=18"]);
}

#[test]
fn enqueueing_with_lister() {
    // TestDeltaFIFO_enqueueingWithLister: a delete of a known key is queued.
    let f = fifo(
        D,
        Some(Known::of(&[("foo", 5), ("bar", 6), ("baz", 7)])),
        false,
    );
    f.add(obj("foo", 10)).unwrap();
    f.update(obj("bar", 15)).unwrap();
    f.delete(obj("baz", 20)).unwrap();
    f.delete(obj("nope", 21)).unwrap();
    assert_eq!(
        drain(&f),
        [["Added foo=10"], ["Updated bar=15"], ["Deleted baz=20"]]
    );
}

#[test]
fn resync_non_existing() {
    // TestDeltaFIFO_ResyncNonExisting: a key with a pending delete gets no Sync.
    let f = fifo(D, Some(Known::of(&[("foo", 5)])), false);
    f.delete(obj("foo", 10)).unwrap();
    f.resync().unwrap();
    assert_eq!(show(&f.get_by_key("foo").unwrap()), ["Deleted foo=10"]);
}

#[test]
fn resync() {
    // TestDeltaFIFO_Resync, and resync without known objects is a no-op.
    let f = fifo(D, Some(Known::of(&[("foo", 5)])), false);
    f.resync().unwrap();
    assert_eq!(show(&f.get_by_key("foo").unwrap()), ["Sync foo=5"]);
    let f = fifo(D, None, false);
    f.resync().unwrap();
    assert!(f.is_empty());
}

#[test]
fn delete_existing_non_propagated() {
    // TestDeltaFIFO_DeleteExistingNonPropagated: a queued key not yet in the cache can be deleted.
    let f = fifo(D, Some(Known::of(&[])), false);
    f.add(obj("foo", 5)).unwrap();
    f.delete(obj("foo", 6)).unwrap();
    assert_eq!(
        show(&f.get_by_key("foo").unwrap()),
        ["Added foo=5", "Deleted foo=6"]
    );
}

#[test]
fn replace_makes_deletions() {
    // TestDeltaFIFO_ReplaceMakesDeletions
    let known = || Some(Known::of(&[("foo", 5), ("bar", 6), ("baz", 7)]));

    let f = fifo(D, known(), false);
    f.delete(obj("baz", 10)).unwrap();
    f.replace(vec![obj("foo", 5)], "0").unwrap();
    assert_eq!(
        drain(&f),
        [
            vec!["Deleted baz=10"],
            vec!["Sync foo=5"],
            vec!["Deleted ~bar=6"]
        ]
    );

    let f = fifo(D, known(), false);
    f.add(obj("baz", 10)).unwrap();
    f.replace(vec![obj("foo", 5)], "0").unwrap();
    assert_eq!(
        drain(&f),
        [
            vec!["Added baz=10", "Deleted ~baz=10"],
            vec!["Sync foo=5"],
            vec!["Deleted ~bar=6"]
        ]
    );

    let f = fifo(D, known(), false);
    f.delete(obj("bar", 6)).unwrap();
    f.add(obj("bar", 100)).unwrap();
    f.replace(vec![obj("foo", 5)], "0").unwrap();
    assert_eq!(
        drain(&f),
        [
            vec!["Deleted bar=6", "Added bar=100", "Deleted ~bar=100"],
            vec!["Sync foo=5"],
            vec!["Deleted ~baz=7"]
        ]
    );

    let f = fifo(D, known(), false);
    f.replace(vec![obj("bar", 100), obj("foo", 5)], "0")
        .unwrap();
    f.replace(vec![obj("foo", 5)], "0").unwrap();
    assert_eq!(
        drain(&f),
        [
            vec!["Sync bar=100", "Deleted ~bar=100"],
            vec!["Sync foo=5", "Sync foo=5"],
            vec!["Deleted ~baz=7"]
        ]
    );

    let f = fifo(D, None, false);
    f.add(obj("baz", 10)).unwrap();
    f.replace(vec![obj("foo", 5)], "0").unwrap();
    assert_eq!(
        drain(&f),
        [vec!["Added baz=10", "Deleted ~baz=10"], vec!["Sync foo=5"]]
    );
}

#[test]
fn replace_makes_deletions_replaced() {
    // TestDeltaFIFO_ReplaceMakesDeletionsReplaced and _ReplaceDeltaType
    let f = fifo(
        D,
        Some(Known::of(&[("foo", 5), ("bar", 6), ("baz", 7)])),
        true,
    );
    f.delete(obj("baz", 10)).unwrap();
    f.replace(vec![obj("foo", 6)], "0").unwrap();
    assert_eq!(
        drain(&f),
        [
            vec!["Deleted baz=10"],
            vec!["Replaced foo=6"],
            vec!["Deleted ~bar=6"]
        ]
    );
}

#[test]
fn update_resync_race() {
    // TestDeltaFIFO_UpdateResyncRace: resync adds nothing for a key with pending deltas.
    let f = fifo(D, Some(Known::of(&[("foo", 5)])), false);
    f.update(obj("foo", 6)).unwrap();
    f.resync().unwrap();
    assert_eq!(drain(&f), [["Updated foo=6"]]);
}

#[test]
fn has_synced_correct_on_deletion() {
    // TestDeltaFIFO_HasSyncedCorrectOnDeletion: tombstones of the first relist are initial.
    let f = fifo(
        D,
        Some(Known::of(&[("foo", 5), ("bar", 6), ("baz", 7)])),
        false,
    );
    f.replace(vec![obj("foo", 5)], "0").unwrap();
    for expected in [["Sync foo=5"], ["Deleted ~bar=6"], ["Deleted ~baz=7"]] {
        assert!(!f.has_synced());
        assert_eq!(pop(&f), (expected.map(String::from).to_vec(), true));
    }
    assert!(f.has_synced());
}

#[test]
fn detect_line_jumpers() {
    // TestDeltaFIFO_detectLineJumpers: a key with new deltas keeps its place; a popped key
    // re-enters at the back.
    let f = fifo(D, None, false);
    f.add(obj("foo", 10)).unwrap();
    f.add(obj("bar", 1)).unwrap();
    f.add(obj("foo", 11)).unwrap();
    f.add(obj("foo", 13)).unwrap();
    f.add(obj("zab", 30)).unwrap();
    let newest = |f: &DeltaFifo<Obj>| pop(f).0.last().cloned().unwrap();
    assert_eq!(newest(&f), "Added foo=13");
    f.add(obj("foo", 14)).unwrap();
    assert_eq!(newest(&f), "Added bar=1");
    assert_eq!(newest(&f), "Added zab=30");
    assert_eq!(newest(&f), "Added foo=14");
}

#[test]
fn key_of() {
    // TestDeltaFIFO_KeyOf
    let a = DeltaObject::Object(obj("A", 0));
    assert_eq!(a.key().as_str(), "A");
    let b = DeltaObject::<Obj>::Tombstone(Box::new(DeletedFinalStateUnknown {
        key: "B".into(),
        obj: None,
    }));
    assert_eq!(b.key().as_str(), "B");
    let c = Deltas::from(vec![Delta::new(DeltaType::Added, obj("C", 0))]);
    assert_eq!(c.key().unwrap().as_str(), "C");
    let d = Deltas::<Obj>::from(vec![Delta::tombstone("D".into(), None)]);
    assert_eq!(d.key().unwrap().as_str(), "D");
    let empty = Deltas::<Obj>::default();
    assert!(matches!(empty.key(), Err(Error::EmptyDeltas)));
}

#[test]
fn has_synced() {
    // TestDeltaFIFO_HasSynced: the full truth table.
    type Op = fn(&DeltaFifo<Obj>);
    let add: Op = |f| f.add(obj("a", 1)).unwrap();
    let replace_empty: Op = |f| f.replace(vec![], "0").unwrap();
    let replace_ab: Op = |f| f.replace(vec![obj("a", 1), obj("b", 2)], "0").unwrap();
    let replace_aa: Op = |f| f.replace(vec![obj("a", 1), obj("a", 2)], "0").unwrap();
    let pop1: Op = |f| {
        pop(f);
    };
    let delete: Op = |f| f.delete(obj("a", 1)).unwrap();
    let cases: [(&[Op], bool); 8] = [
        (&[], false),
        (&[add], true),
        (&[delete], true),
        (&[replace_empty], true),
        (&[replace_ab], false),
        (&[replace_ab, pop1], false),
        (&[replace_ab, pop1, pop1], true),
        (&[replace_aa, pop1], true),
    ];
    for (i, (ops, expected)) in cases.iter().enumerate() {
        let f = fifo(D, None, false);
        for op in *ops {
            op(&f);
        }
        assert_eq!(f.has_synced(), *expected, "case {i}");
    }
}

#[test]
fn is_in_initial_list_only_for_the_first_list() {
    let f = fifo(D, None, true);
    f.replace(vec![obj("a", 1)], "0").unwrap();
    f.add(obj("b", 2)).unwrap();
    assert_eq!(pop(&f), (vec!["Replaced a=1".to_string()], true));
    assert!(f.has_synced());
    assert_eq!(pop(&f), (vec!["Added b=2".to_string()], false));
    f.replace(vec![obj("c", 3)], "1").unwrap();
    assert!(!pop(&f).1, "a later relist is not the initial list");
}

#[test]
fn transformer() {
    // TestDeltaFIFO_transformer: transformed once on entry, tombstones carry the transformed
    // object (the type system rules out transforming a tombstone).
    let xfrm: TransformFunc<Obj> = Arc::new(|o: Arc<Obj>| {
        let mut o = Arc::unwrap_or_clone(o);
        o.xfrm += 1;
        Ok(Arc::new(o))
    });
    let f = DeltaFifo::new(DeltaFifoOptions {
        transformer: Some(xfrm),
        ..Default::default()
    });
    f.add(obj("foo", 10)).unwrap();
    f.add(obj("bar", 11)).unwrap();
    f.update(obj("foo", 12)).unwrap();
    f.delete(obj("foo", 15)).unwrap();
    f.replace(vec![], "").unwrap();
    f.add(obj("bar", 16)).unwrap();
    f.replace(vec![], "").unwrap();
    assert_eq!(
        f.list_keys(),
        [ObjectKey::from("foo"), ObjectKey::from("bar")]
    );
    let foo = f.pop_blocking(|d, _| d.clone()).unwrap();
    let newest = foo.newest().unwrap();
    assert_eq!(newest.type_, DeltaType::Deleted);
    let o = newest.object.object().unwrap();
    assert!(!newest.object.is_tombstone(), "regular deletion of foo");
    assert_eq!((o.val, o.xfrm), (15, 1));
    let bar = f.pop_blocking(|d, _| d.clone()).unwrap();
    let t = bar.newest().unwrap().object.as_tombstone().unwrap();
    let o = t.obj.as_ref().unwrap();
    assert_eq!((t.key.as_str(), o.val, o.xfrm), ("bar", 16, 1));
    for d in foo.iter().chain(bar.iter()) {
        assert_eq!(d.object.object().unwrap().xfrm, 1, "{d:?}");
    }
}

#[test]
fn transformer_error_queues_nothing() {
    let f = DeltaFifo::new(DeltaFifoOptions {
        transformer: Some(Arc::new(|o: Arc<Obj>| {
            if o.val < 0 {
                Err("negative".into())
            } else {
                Ok(o)
            }
        })),
        ..Default::default()
    });
    let err = f.replace(vec![obj("a", 1), obj("b", -1)], "0").unwrap_err();
    // What failed in Display, the transformer's own error as the source.
    assert_eq!(err.to_string(), "DeltaFIFO: the transformer failed on b");
    let source = std::error::Error::source(&err).map(ToString::to_string);
    assert_eq!(source.as_deref(), Some("negative"));
    assert!(f.is_empty());
    assert!(!f.has_synced());
    assert!(f.add(obj("c", -2)).is_err());
    assert!(f.is_empty());
}

#[test]
fn sync_deltas_are_not_transformed() {
    let known = Known::of(&[("foo", 5)]);
    let f = DeltaFifo::new(DeltaFifoOptions {
        known_objects: Some(known),
        transformer: Some(Arc::new(|o: Arc<Obj>| {
            let mut o = Arc::unwrap_or_clone(o);
            o.xfrm += 1;
            Ok(Arc::new(o))
        })),
        ..Default::default()
    });
    f.resync().unwrap();
    f.replace(vec![], "0").unwrap();
    let d = f.pop_blocking(|d, _| d.clone()).unwrap();
    assert_eq!(d[0].type_, DeltaType::Sync);
    assert_eq!(d[0].object.object().unwrap().xfrm, 0);
    assert_eq!(
        d[1].object.object().unwrap().xfrm,
        0,
        "tombstone of a known obj"
    );
}

#[tokio::test(start_paused = true)]
async fn pop_should_unblock_when_closed() {
    // TestDeltaFIFO_PopShouldUnblockWhenClosed
    let f = Arc::new(fifo(D, Some(Known::of(&[("foo", 5)])), false));
    let mut tasks = Vec::new();
    for _ in 0..10 {
        let f = f.clone();
        tasks.push(tokio::spawn(async move { f.pop(|_, _| ()).await }));
    }
    let blocking = {
        let f = f.clone();
        std::thread::spawn(move || f.pop_blocking(|_, _| ()))
    };
    tokio::task::yield_now().await;
    f.close();
    for t in tasks {
        let r = tokio::time::timeout(Duration::from_millis(500), t)
            .await
            .expect("pop returned after close");
        assert!(matches!(r.unwrap(), Err(Error::Closed)));
    }
    assert!(matches!(blocking.join().unwrap(), Err(Error::Closed)));
    assert!(f.is_closed());
}

#[tokio::test(start_paused = true)]
async fn close_still_drains_the_queue() {
    let f = fifo(D, None, false);
    f.add(obj("a", 1)).unwrap();
    f.close();
    assert_eq!(f.pop(|d, _| show(d)).await.unwrap(), ["Added a=1"]);
    assert!(matches!(f.pop(|_, _| ()).await, Err(Error::Closed)));
}

#[test]
fn replace_with_keys_is_replace() {
    // A watch-list hands its items over with the keys its temporary store built: the same
    // deltas and tombstones as `replace`, in both modes.
    for mode in [FifoMode::Delta, FifoMode::Real] {
        let run = |keyed: bool| {
            let f = fifo(mode, Some(Known::of(&[("gone", 1), ("kept", 2)])), true);
            f.add(obj("queued", 3)).unwrap();
            let items = vec![obj("kept", 4), obj("new", 5)];
            if keyed {
                let items = items.into_iter().map(|o| (ObjectKey::of(&*o), o));
                f.replace_with_keys(items.collect(), "9").unwrap();
            } else {
                f.replace(items, "9").unwrap();
            }
            drain(&f)
        };
        let replaced = run(false);
        assert_eq!(run(true), replaced, "{mode:?}");
        let all: Vec<String> = replaced.concat();
        for want in [
            "Added queued=3",
            "Replaced kept=4",
            "Replaced new=5",
            "Deleted ~gone=1",
        ] {
            assert!(all.iter().any(|d| d == want), "{mode:?}: {want} in {all:?}");
        }
    }
}
