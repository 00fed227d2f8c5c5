//! client-go's `the_real_fifo_test.go`, as assertions on kcache's API (Real mode).

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::{drain, fifo, obj, pop, show, Known, Obj};
use kcache_delta_fifo::{DeltaFifo, DeltaFifoOptions, DeltaType, Error, FifoMode, TransformFunc};

const R: FifoMode = FifoMode::Real;

/// Every queued delta, one per pop, flattened.
fn drain_flat(f: &DeltaFifo<Obj>) -> Vec<String> {
    drain(f).into_iter().flatten().collect()
}

#[test]
fn replace_with_delete_delta_in() {
    let f = fifo(R, Some(Known::of(&[("foo", 1)])), false);
    f.delete(obj("foo", 1)).unwrap();
    f.replace(vec![obj("foo", 2)], "").unwrap();
    assert_eq!(drain_flat(&f), ["Deleted foo=1", "Replaced foo=2"]);
}

#[test]
fn replace_makes_deletions_for_objects_only_in_queue() {
    type Ops = fn(&DeltaFifo<Obj>);
    let cases: [(Ops, &[&str]); 5] = [
        (
            |f| {
                f.add(obj("foo", 2)).unwrap();
                f.replace(vec![], "0").unwrap();
            },
            &["Added foo=2", "Deleted ~foo=2"],
        ),
        (
            |f| {
                f.add(obj("foo", 2)).unwrap();
                f.delete(obj("foo", 2)).unwrap();
                f.replace(vec![], "0").unwrap();
            },
            &["Added foo=2", "Deleted foo=2"],
        ),
        (
            |f| {
                f.add(obj("foo", 2)).unwrap();
                f.replace(vec![obj("foo", 2)], "0").unwrap();
                f.replace(vec![obj("foo", 2)], "0").unwrap();
                f.replace(vec![], "0").unwrap();
            },
            &[
                "Added foo=2",
                "Replaced foo=2",
                "Replaced foo=2",
                "Deleted ~foo=2",
            ],
        ),
        (
            |f| {
                f.add(obj("foo", 2)).unwrap();
                f.replace(vec![], "0").unwrap();
                f.replace(vec![], "1").unwrap();
            },
            &["Added foo=2", "Deleted ~foo=2"],
        ),
        (
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
        ),
    ];
    for (i, (ops, expected)) in cases.into_iter().enumerate() {
        let f = fifo(R, Some(Known::of(&[])), false);
        ops(&f);
        assert_eq!(drain_flat(&f), expected, "case {i}");
    }
}

#[test]
fn add_update_keeps_every_delta() {
    // TestRealFIFO_addUpdate
    let f = fifo(R, Some(Known::of(&[])), false);
    f.add(obj("foo", 10)).unwrap();
    f.update(obj("foo", 12)).unwrap();
    f.delete(obj("foo", 15)).unwrap();
    assert_eq!(
        show(&f.get_by_key("foo").unwrap()),
        ["Added foo=10", "Updated foo=12", "Deleted foo=15"]
    );
    assert_eq!(f.len(), 3);
    assert_eq!(
        drain(&f),
        [["Added foo=10"], ["Updated foo=12"], ["Deleted foo=15"]]
    );
}

#[test]
fn transformer() {
    // TestRealFIFO_transformer
    let xfrm: TransformFunc<Obj> = Arc::new(|o: Arc<Obj>| {
        let mut o = Arc::unwrap_or_clone(o);
        o.xfrm += 1;
        Ok(Arc::new(o))
    });
    let f = DeltaFifo::new(DeltaFifoOptions {
        known_objects: Some(Known::of(&[])),
        transformer: Some(xfrm),
        mode: R,
        ..Default::default()
    });
    f.add(obj("foo", 10)).unwrap();
    f.add(obj("bar", 11)).unwrap();
    f.update(obj("foo", 12)).unwrap();
    f.delete(obj("foo", 15)).unwrap();
    f.replace(vec![], "").unwrap();
    f.add(obj("bar", 16)).unwrap();
    f.replace(vec![], "").unwrap();
    let mut all = Vec::new();
    while !f.is_empty() {
        all.extend(f.pop_blocking(|d, _| d.clone()).unwrap());
    }
    let shown: Vec<String> = all
        .iter()
        .map(|d| show(&vec![d.clone()].into())[0].clone())
        .collect();
    assert_eq!(
        shown,
        [
            "Added foo=10",
            "Added bar=11",
            "Updated foo=12",
            "Deleted foo=15",
            "Deleted ~bar=11",
            "Added bar=16",
            "Deleted ~bar=16",
        ]
    );
    assert!(all.iter().all(|d| d.object.object().unwrap().xfrm == 1));
}

#[test]
fn enqueueing_no_lister_queues_every_delete() {
    let f = fifo(R, None, false);
    f.add(obj("foo", 10)).unwrap();
    f.update(obj("bar", 15)).unwrap();
    f.add(obj("qux", 17)).unwrap();
    f.delete(obj("qux", 18)).unwrap();
    f.delete(obj("baz", 20)).unwrap();
    assert_eq!(
        drain_flat(&f),
        [
            "Added foo=10",
            "Updated bar=15",
            "Added qux=17",
            "Deleted qux=18",
            "Deleted baz=20"
        ]
    );
}

#[test]
fn resync_non_existing_and_resync() {
    let f = fifo(R, Some(Known::of(&[("foo", 5)])), false);
    f.delete(obj("foo", 10)).unwrap();
    f.resync().unwrap();
    assert_eq!(drain_flat(&f), ["Deleted foo=10"]);
    f.resync().unwrap();
    assert_eq!(drain_flat(&f), ["Sync foo=5"]);
}

#[test]
fn delete_existing_non_propagated() {
    let f = fifo(R, Some(Known::of(&[])), false);
    f.add(obj("foo", 5)).unwrap();
    f.delete(obj("foo", 6)).unwrap();
    assert_eq!(drain_flat(&f), ["Added foo=5", "Deleted foo=6"]);
}

#[test]
fn replace_makes_deletions_tombstones_first() {
    // TestRealFIFO_ReplaceMakesDeletions
    let known = || Some(Known::of(&[("foo", 5), ("bar", 6), ("baz", 7)]));

    let f = fifo(R, known(), false);
    f.delete(obj("baz", 10)).unwrap();
    f.replace(vec![obj("foo", 5)], "0").unwrap();
    assert_eq!(
        drain_flat(&f),
        ["Deleted baz=10", "Deleted ~bar=6", "Replaced foo=5"]
    );

    let f = fifo(R, known(), false);
    f.add(obj("baz", 10)).unwrap();
    f.replace(vec![obj("foo", 5)], "0").unwrap();
    assert_eq!(
        drain_flat(&f),
        [
            "Added baz=10",
            "Deleted ~baz=10",
            "Deleted ~bar=6",
            "Replaced foo=5"
        ]
    );

    let f = fifo(R, known(), false);
    f.delete(obj("bar", 6)).unwrap();
    f.add(obj("bar", 100)).unwrap();
    f.replace(vec![obj("foo", 5)], "0").unwrap();
    assert_eq!(
        drain_flat(&f),
        [
            "Deleted bar=6",
            "Added bar=100",
            "Deleted ~bar=100",
            "Deleted ~baz=7",
            "Replaced foo=5"
        ]
    );

    let f = fifo(R, known(), false);
    f.replace(vec![obj("bar", 100), obj("foo", 5)], "0")
        .unwrap();
    f.replace(vec![obj("foo", 5)], "0").unwrap();
    assert_eq!(
        drain_flat(&f),
        [
            "Deleted ~baz=7",
            "Replaced bar=100",
            "Replaced foo=5",
            "Deleted ~bar=100",
            "Replaced foo=5"
        ]
    );
}

#[test]
fn update_resync_race() {
    let f = fifo(R, Some(Known::of(&[("foo", 5)])), false);
    f.update(obj("foo", 6)).unwrap();
    f.resync().unwrap();
    assert_eq!(drain_flat(&f), ["Updated foo=6"]);
}

#[test]
fn has_synced_correct_on_deletion() {
    let f = fifo(
        R,
        Some(Known::of(&[("foo", 5), ("bar", 6), ("baz", 7)])),
        false,
    );
    f.replace(vec![obj("foo", 5)], "0").unwrap();
    for expected in ["Deleted ~bar=6", "Deleted ~baz=7", "Replaced foo=5"] {
        assert!(!f.has_synced());
        assert_eq!(pop(&f), (vec![expected.to_string()], true));
    }
    assert!(f.has_synced());
}

#[test]
fn detect_line_jumpers_in_order() {
    let f = fifo(R, Some(Known::of(&[])), false);
    for (n, v) in [
        ("foo", 10),
        ("bar", 1),
        ("foo", 11),
        ("foo", 13),
        ("zab", 30),
    ] {
        f.add(obj(n, v)).unwrap();
    }
    assert_eq!(pop(&f).0, ["Added foo=10"]);
    f.add(obj("foo", 14)).unwrap();
    assert_eq!(
        drain_flat(&f),
        [
            "Added bar=1",
            "Added foo=11",
            "Added foo=13",
            "Added zab=30",
            "Added foo=14"
        ]
    );
}

#[test]
fn has_synced() {
    type Op = fn(&DeltaFifo<Obj>);
    let add: Op = |f| f.add(obj("a", 1)).unwrap();
    let replace_empty: Op = |f| f.replace(vec![], "0").unwrap();
    let replace_ab: Op = |f| f.replace(vec![obj("a", 1), obj("b", 2)], "0").unwrap();
    let replace_aa: Op = |f| f.replace(vec![obj("a", 1), obj("a", 2)], "0").unwrap();
    let pop1: Op = |f| {
        pop(f);
    };
    let cases: [(&[Op], bool); 8] = [
        (&[], false),
        (&[add], true),
        (&[replace_empty], true),
        (&[replace_ab], false),
        (&[replace_ab, pop1], false),
        (&[replace_ab, pop1, pop1], true),
        (&[replace_aa, pop1], false),
        (&[replace_aa, pop1, pop1], true),
    ];
    for (i, (ops, expected)) in cases.iter().enumerate() {
        let f = fifo(R, Some(Known::of(&[])), false);
        for op in *ops {
            op(&f);
        }
        assert_eq!(f.has_synced(), *expected, "case {i}");
    }
}

#[test]
fn replace_always_emits_replaced() {
    let f = fifo(R, None, false);
    f.replace(vec![obj("a", 1)], "0").unwrap();
    let d = f.pop_blocking(|d, _| d.clone()).unwrap();
    assert_eq!(d[0].type_, DeltaType::Replaced);
}

#[tokio::test(start_paused = true)]
async fn pop_should_unblock_when_closed() {
    let f = Arc::new(fifo(R, Some(Known::of(&[("foo", 5)])), false));
    let tasks: Vec<_> = (0..10)
        .map(|_| {
            let f = f.clone();
            tokio::spawn(async move { f.pop(|_, _| ()).await })
        })
        .collect();
    tokio::task::yield_now().await;
    f.close();
    for t in tasks {
        let r = tokio::time::timeout(Duration::from_millis(500), t)
            .await
            .expect("pop returned after close");
        assert!(matches!(r.unwrap(), Err(Error::Closed)));
    }
}
