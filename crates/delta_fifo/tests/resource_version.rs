//! The resourceVersion the consumer's cache reflects (client-go's `LastStoreSyncResourceVersion`,
//! `TestThreadSafeStoreRV` and controller_test.go's store-RV cases): events, relists and
//! bookmarks move it in write order, in both modes, once everything before them is processed.

use std::sync::Arc;

use kcache_core::DynamicObject;
use kcache_delta_fifo::{DeltaFifo, DeltaFifoOptions, FifoMode};
use parking_lot::Mutex;

fn cm(name: &str, rv: &str) -> Arc<DynamicObject> {
    Arc::new(
        DynamicObject::new(name)
            .within("ns")
            .with_resource_version(rv),
    )
}

fn fifo(mode: FifoMode) -> DeltaFifo<DynamicObject> {
    DeltaFifo::new(DeltaFifoOptions {
        mode,
        ..Default::default()
    })
}

const MODES: [FifoMode; 3] = [FifoMode::Delta, FifoMode::Real, FifoMode::Atomic];

/// Pops one entry and finishes it; returns the key popped ("" for an atomic unit, which
/// carries no deltas).
fn pop_one(f: &DeltaFifo<DynamicObject>) -> String {
    f.pop_blocking(|d, _| {
        d.newest()
            .map(|n| n.object.key().to_string())
            .unwrap_or_default()
    })
    .unwrap()
}

#[test]
fn events_move_it_once_processed() {
    for mode in MODES {
        let f = fifo(mode);
        assert_eq!(f.last_store_sync_resource_version(), "", "{mode:?}");
        f.add(cm("a", "10")).unwrap();
        f.update(cm("b", "11")).unwrap();
        // Queued, not processed: the cache does not reflect them yet.
        assert_eq!(f.last_store_sync_resource_version(), "", "{mode:?}");
        assert_eq!(pop_one(&f), "ns/a");
        // One round of pushes is one mark: it waits for the last of them.
        assert_eq!(f.last_store_sync_resource_version(), "", "{mode:?}");
        assert_eq!(pop_one(&f), "ns/b");
        assert_eq!(f.last_store_sync_resource_version(), "11", "{mode:?}");
        // Delta mode drops a deletion of a key it neither queues nor knows; its resourceVersion
        // still counts (nothing is left to apply). Real mode queues it.
        f.delete(cm("b", "12")).unwrap();
        if !f.is_empty() {
            pop_one(&f);
        }
        assert_eq!(f.last_store_sync_resource_version(), "12", "{mode:?}");
    }
}

#[test]
fn a_relist_moves_it_to_the_list_resource_version_once_applied() {
    for mode in MODES {
        let f = fifo(mode);
        f.replace(vec![cm("a", "3"), cm("b", "5")], "20").unwrap();
        assert_eq!(f.last_store_sync_resource_version(), "", "{mode:?}");
        while !f.is_empty() {
            pop_one(&f);
        }
        assert_eq!(f.last_store_sync_resource_version(), "20", "{mode:?}");
        // An empty relist is applied at once; in Atomic mode it is still a unit to apply (it
        // empties the cache), reached once popped.
        f.replace(vec![], "25").unwrap();
        if mode == FifoMode::Atomic {
            assert_eq!(f.last_store_sync_resource_version(), "20");
            pop_one(&f);
        }
        assert_eq!(f.last_store_sync_resource_version(), "25", "{mode:?}");
    }
}

#[test]
fn a_bookmark_waits_for_everything_queued_before_it() {
    for mode in MODES {
        let f = fifo(mode);
        f.bookmark("7");
        assert_eq!(f.last_store_sync_resource_version(), "7", "{mode:?}");
        f.add(cm("a", "8")).unwrap();
        f.bookmark("9");
        assert_eq!(f.last_store_sync_resource_version(), "7", "{mode:?}");
        pop_one(&f);
        assert_eq!(f.last_store_sync_resource_version(), "9", "{mode:?}");
    }
}

/// Delta mode keeps a key's first place while newer deltas join it: a write after a bookmark
/// can be applied before the bookmark is reached, never the other way round.
#[test]
fn in_delta_mode_a_key_that_keeps_its_place_never_lets_a_mark_jump_ahead() {
    let f = fifo(FifoMode::Delta);
    f.add(cm("a", "1")).unwrap();
    f.add(cm("b", "2")).unwrap();
    f.bookmark("3");
    f.update(cm("a", "4")).unwrap();
    // "a" (with rv 1 and 4) is popped first; "b" (rv 2) is still queued, so neither 3 nor 4
    // is reflected.
    assert_eq!(pop_one(&f), "ns/a");
    assert_eq!(
        f.last_store_sync_resource_version(),
        "",
        "b is not applied yet"
    );
    assert_eq!(pop_one(&f), "ns/b");
    assert_eq!(f.last_store_sync_resource_version(), "4");
}

/// A batch's entries count until the batch is dropped (the consumer has applied them then).
#[tokio::test]
async fn a_batch_moves_it_when_dropped() {
    for mode in MODES {
        let f = fifo(mode);
        f.add(cm("a", "1")).unwrap();
        f.add(cm("b", "2")).unwrap();
        f.bookmark("5");
        let batch = f.pop_batch(10).await.unwrap();
        assert_eq!(batch.entries().len(), 2);
        assert_eq!(f.last_store_sync_resource_version(), "", "{mode:?}");
        drop(batch);
        assert_eq!(f.last_store_sync_resource_version(), "5", "{mode:?}");
    }
}

/// Real mode hands out deltas in arrival order: a batch closes at a key it already holds, and
/// the mark behind a key's later delta waits for that delta.
#[tokio::test]
async fn real_mode_marks_follow_the_deltas_in_order() {
    let f = fifo(FifoMode::Real);
    f.add(cm("a", "1")).unwrap();
    f.update(cm("a", "2")).unwrap();
    f.bookmark("3");
    f.add(cm("b", "4")).unwrap();
    let batch = f.pop_batch(10).await.unwrap();
    let keys: Vec<String> = batch
        .entries()
        .iter()
        .map(|e| e.key().to_string())
        .collect();
    assert_eq!(keys, ["ns/a"], "the batch closes at a's second delta");
    drop(batch);
    let rv = f.last_store_sync_resource_version();
    assert!(
        rv.is_empty() || rv == "1",
        "a's second delta is queued: {rv:?}"
    );
    pop_one(&f);
    assert_eq!(
        f.last_store_sync_resource_version(),
        "3",
        "a's second delta, then the bookmark behind it"
    );
    pop_one(&f);
    assert_eq!(f.last_store_sync_resource_version(), "4");
}

#[test]
fn a_requeued_entry_holds_marks_until_it_is_processed() {
    for mode in MODES {
        let f = fifo(mode);
        f.add(cm("a", "1")).unwrap();
        f.bookmark("2");
        let popped = block_on(f.pop_guard()).unwrap();
        popped.requeue();
        assert_eq!(f.last_store_sync_resource_version(), "", "{mode:?}");
        pop_one(&f);
        assert_eq!(f.last_store_sync_resource_version(), "2", "{mode:?}");
    }
}

#[test]
fn the_observer_hears_every_move_in_order() {
    for mode in MODES {
        let f = fifo(mode);
        let seen = Arc::new(Mutex::new(Vec::<String>::new()));
        let s = seen.clone();
        f.set_resource_version_observer(Arc::new(move |rv| s.lock().push(rv.to_owned())));
        f.replace(vec![cm("a", "1")], "5").unwrap();
        pop_one(&f);
        f.add(cm("b", "6")).unwrap();
        pop_one(&f);
        f.bookmark("6");
        f.bookmark("9");
        assert_eq!(*seen.lock(), ["5", "6", "9"], "{mode:?}");
    }
}

/// Runs a future that completes without waiting (the queue is not empty).
fn block_on<F: std::future::Future>(fut: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
        .block_on(fut)
}
