//! `pop_batch`, and the inbox that adds and updates go through: batches hold queue order and
//! per-key processing, and a push always reaches a consumer waiting for one.

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::{fifo, obj, pop, show};
use kcache_delta_fifo::{DeltaFifo, FifoMode, PoppedBatch};

use crate::common::Obj;

fn keys_and_deltas(batch: &PoppedBatch<'_, Obj>) -> Vec<(String, Vec<String>)> {
    batch
        .entries()
        .iter()
        .map(|e| (e.key().to_string(), show(e.deltas())))
        .collect()
}

/// A FIFO holding updates of `a`, `b`, `a` again and `c`, in that order.
fn queued(mode: FifoMode) -> DeltaFifo<Obj> {
    let f = fifo(mode, None, false);
    for (name, val) in [("a", 1), ("b", 1), ("a", 2), ("c", 1)] {
        f.update(obj(name, val)).unwrap();
    }
    f
}

#[tokio::test(start_paused = true)]
async fn a_batch_takes_queued_keys_in_order_up_to_max() {
    let f = queued(FifoMode::Delta);
    let batch = f.pop_batch(2).await.unwrap();
    assert_eq!(
        keys_and_deltas(&batch),
        [
            (
                "a".to_string(),
                vec!["Updated a=1".into(), "Updated a=2".into()]
            ),
            ("b".to_string(), vec!["Updated b=1".into()]),
        ]
    );
    drop(batch);
    let rest = f.pop_batch(10).await.unwrap();
    assert_eq!(
        keys_and_deltas(&rest),
        [("c".to_string(), vec!["Updated c=1".into()])]
    );
}

#[tokio::test(start_paused = true)]
async fn in_real_mode_a_batch_closes_at_a_key_already_in_it() {
    let f = queued(FifoMode::Real);
    // client-go's PopBatch: `a`'s second delta closes the batch, and `c` stays behind it, so
    // deltas are handed out in arrival order.
    let batch = f.pop_batch(10).await.unwrap();
    assert_eq!(
        keys_and_deltas(&batch),
        [
            ("a".to_string(), vec!["Updated a=1".into()]),
            ("b".to_string(), vec!["Updated b=1".into()]),
        ]
    );
    drop(batch);
    let rest = f.pop_batch(10).await.unwrap();
    assert_eq!(
        keys_and_deltas(&rest),
        [
            ("a".to_string(), vec!["Updated a=2".into()]),
            ("c".to_string(), vec!["Updated c=1".into()]),
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn batch_keys_stay_processing_until_the_batch_is_dropped() {
    for mode in [FifoMode::Delta, FifoMode::Real] {
        let f = fifo(mode, None, true);
        f.replace(vec![obj("a", 1), obj("b", 1)], "1").unwrap();
        let mut batch = f.pop_batch(10).await.unwrap();
        assert_eq!(batch.entries().len(), 2);
        assert!(batch.entries().iter().all(|e| e.is_in_initial_list()));
        assert_eq!(f.metrics().processing, 2);
        assert!(!f.has_synced(), "the initial entries are still processing");
        f.update(obj("a", 2)).unwrap();
        f.update(obj("c", 1)).unwrap();
        if mode == FifoMode::Delta {
            // `a` is processing: a second consumer only gets `c`.
            assert_eq!(pop(&f).0, ["Updated c=1"]);
        } else {
            // In order: `c` waits behind `a`'s update, which waits for `a`'s processing.
            let second = tokio::time::timeout(Duration::from_secs(1), f.pop(|d, _| show(d)));
            assert!(second.await.is_err(), "nothing is handed out past the head");
        }
        batch.requeue(0);
        batch.requeue(7); // out of range: ignored
        drop(batch);
        assert_eq!(f.metrics().processing, 0);
        assert!(!f.has_synced(), "the requeued initial entry is not done");
        let (first, initial) = pop(&f);
        let expected: &[&str] = match mode {
            FifoMode::Delta => &["Replaced a=1", "Updated a=2"],
            FifoMode::Real => &["Replaced a=1"],
            FifoMode::Atomic => unreachable!("not run in atomic mode"),
        };
        assert_eq!(first, expected, "{mode:?}");
        assert!(initial);
        assert!(f.has_synced());
    }
}

#[tokio::test(start_paused = true)]
async fn a_batch_waits_for_the_next_push() {
    let f = Arc::new(fifo(FifoMode::Delta, None, false));
    let consumer = {
        let f = f.clone();
        tokio::spawn(async move { keys_and_deltas(&f.pop_batch(10).await.unwrap()) })
    };
    tokio::task::yield_now().await;
    assert!(!consumer.is_finished());
    f.add(obj("a", 1)).unwrap();
    assert_eq!(
        consumer.await.unwrap(),
        [("a".to_string(), vec!["Added a=1".into()])]
    );
}

#[tokio::test(start_paused = true)]
async fn a_closed_fifo_hands_out_what_was_pushed_before_closed() {
    let f = fifo(FifoMode::Delta, None, false);
    f.add(obj("a", 1)).unwrap();
    f.close();
    assert_eq!(f.pop_batch(10).await.unwrap().entries().len(), 1);
    assert!(f.pop_batch(10).await.is_err());
}

/// A push lands in the inbox without the queue's lock; a blocking consumer about to wait must
/// still be woken by it, whichever comes first.
#[test]
fn every_push_wakes_a_waiting_blocking_consumer() {
    for round in 0..200 {
        let f = Arc::new(fifo(FifoMode::Delta, None, false));
        let consumer = {
            let f = f.clone();
            std::thread::spawn(move || pop(&f).0)
        };
        if round % 2 == 0 {
            std::thread::yield_now();
        }
        f.add(obj("a", round)).unwrap();
        assert_eq!(consumer.join().unwrap(), [format!("Added a={round}")]);
    }
}

/// The same for consumers on an async runtime's threads.
#[test]
fn every_push_wakes_a_waiting_async_consumer() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .build()
        .unwrap();
    for round in 0..200 {
        let f = Arc::new(fifo(FifoMode::Delta, None, false));
        let consumer = {
            let f = f.clone();
            rt.spawn(async move { f.pop(|d, _| show(d)).await.unwrap() })
        };
        if round % 2 == 0 {
            std::thread::yield_now();
        }
        f.add(obj("a", round)).unwrap();
        assert_eq!(rt.block_on(consumer).unwrap(), [format!("Added a={round}")]);
    }
}
