//! client-go's atomic-FIFO tests (`TestRealFIFO_ReplaceAtomic`, `TestRealFIFO_ReplaceAtomicPop`,
//! `TestRealFIFO_ResyncAtomic` in the_real_fifo_test.go), as assertions on `FifoMode::Atomic`:
//! a relist or resync is one queue entry, in order with the deltas around it.

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::{fifo, obj, show, Known, Obj};
use kcache_delta_fifo::{AtomicEvent, DeltaFifo, FifoMode, PoppedEntry};

const A: FifoMode = FifoMode::Atomic;

/// What one popped entry is: its deltas, or the unit it stands for.
fn describe(e: &PoppedEntry<Obj>) -> String {
    match e.atomic() {
        None => show(e.deltas()).join(","),
        Some(AtomicEvent::SyncAll) => "SyncAll".into(),
        Some(AtomicEvent::ReplacedAll {
            resource_version,
            objects,
        }) => {
            let listed: Vec<String> = objects
                .iter()
                .map(|(k, o)| format!("{k}={}", o.val))
                .collect();
            format!("ReplacedAll@{resource_version}[{}]", listed.join(","))
        }
    }
}

/// Pops one entry at a time until the queue is empty.
async fn drain(f: &DeltaFifo<Obj>) -> Vec<String> {
    let mut out = Vec::new();
    while !f.is_empty() {
        out.push(describe(&f.pop_guard().await.unwrap()));
    }
    out
}

#[tokio::test(start_paused = true)]
async fn replace_is_one_entry_in_order_with_the_deltas_around_it() {
    type Ops = fn(&DeltaFifo<Obj>);
    let cases: [(&str, Ops, &[&str]); 3] = [
        (
            "base replace",
            |f| f.replace(vec![], "123").unwrap(),
            &["ReplacedAll@123[]"],
        ),
        (
            "an added object stays queued before the replace",
            |f| {
                f.add(obj("foo", 2)).unwrap();
                f.replace(vec![], "123").unwrap();
            },
            &["Added foo=2", "ReplacedAll@123[]"],
        ),
        (
            "several replaces run in order",
            |f| {
                f.add(obj("foo", 2)).unwrap();
                f.replace(vec![obj("foo", 2)], "10").unwrap();
                f.replace(vec![obj("foo", 2)], "20").unwrap();
                f.replace(vec![], "56").unwrap();
            },
            &[
                "Added foo=2",
                "ReplacedAll@10[foo=2]",
                "ReplacedAll@20[foo=2]",
                "ReplacedAll@56[]",
            ],
        ),
    ];
    for (name, ops, expected) in cases {
        // Known objects are ignored in atomic mode: the consumer reconciles against its cache.
        let f = fifo(A, Some(Known::of(&[("gone", 1)])), false);
        ops(&f);
        assert_eq!(drain(&f).await, expected, "{name}");
    }
}

#[tokio::test(start_paused = true)]
async fn replace_pops_after_the_add_before_it_and_alone() {
    let f = fifo(A, None, false);
    f.add(obj("foo", 10)).unwrap();
    f.replace(vec![obj("foo", 15)], "20").unwrap();
    f.add(obj("bar", 1)).unwrap();
    // A batch stops before the unit; the unit pops alone; what follows waits for it.
    let first = f.pop_batch(10).await.unwrap();
    assert_eq!(
        first.entries().iter().map(describe).collect::<Vec<_>>(),
        ["Added foo=10"]
    );
    let blocked = tokio::time::timeout(Duration::from_secs(1), f.pop_guard());
    assert!(
        blocked.await.is_err(),
        "the unit waits for the entry before it"
    );
    drop(first);
    let unit = f.pop_batch(10).await.unwrap();
    assert_eq!(
        unit.entries().iter().map(describe).collect::<Vec<_>>(),
        ["ReplacedAll@20[foo=15]"]
    );
    let blocked = tokio::time::timeout(Duration::from_secs(1), f.pop_guard());
    assert!(
        blocked.await.is_err(),
        "nothing passes a unit being processed"
    );
    drop(unit);
    assert_eq!(drain(&f).await, ["Added bar=1"]);
}

#[tokio::test(start_paused = true)]
async fn resync_is_one_sync_all_entry() {
    let f = fifo(A, None, false);
    f.resync().unwrap();
    f.add(obj("foo", 2)).unwrap();
    f.resync().unwrap();
    assert_eq!(drain(&f).await, ["SyncAll", "Added foo=2", "SyncAll"]);
}

#[tokio::test(start_paused = true)]
async fn the_first_replace_is_the_initial_list_and_syncs_once_processed() {
    let f = fifo(A, None, false);
    f.replace(vec![obj("a", 1), obj("b", 1)], "5").unwrap();
    assert!(!f.has_synced());
    let unit = f.pop_guard().await.unwrap();
    assert!(unit.is_in_initial_list());
    assert!(!f.has_synced(), "the list is still being applied");
    drop(unit);
    assert!(f.has_synced());
}

#[tokio::test(start_paused = true)]
async fn a_requeued_unit_goes_back_to_the_head() {
    let f = fifo(A, None, false);
    f.replace(vec![obj("a", 1)], "5").unwrap();
    let unit = f.pop_guard().await.unwrap();
    f.add(obj("b", 1)).unwrap();
    unit.requeue();
    assert!(!f.has_synced(), "the requeued initial list is not applied");
    assert_eq!(drain(&f).await, ["ReplacedAll@5[a=1]", "Added b=1"]);
    assert!(f.has_synced());
}

#[tokio::test(start_paused = true)]
async fn transformer_runs_on_the_listed_objects() {
    let f = kcache_delta_fifo::DeltaFifo::new(kcache_delta_fifo::DeltaFifoOptions {
        mode: A,
        transformer: Some(Arc::new(|o: Arc<Obj>| {
            let mut o = (*o).clone();
            o.val *= 10;
            Ok(Arc::new(o))
        })),
        ..Default::default()
    });
    f.replace(vec![obj("a", 1)], "5").unwrap();
    assert_eq!(drain(&f).await, ["ReplacedAll@5[a=10]"]);
}
