//! kcache's departures from client-go: the consumer works without the lock, per-key order holds
//! across consumers, requeue, and the metrics accessors.

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::{fifo, obj, pop, show, Known};
use kcache_delta_fifo::{FifoMode, QueueMetrics};
use tokio::sync::oneshot;
use tokio::time::{advance, sleep, Instant};

#[tokio::test(start_paused = true)]
async fn slow_consumer_does_not_block_producers() {
    for mode in [FifoMode::Delta, FifoMode::Real] {
        let f = Arc::new(fifo(mode, Some(Known::of(&[("k", 1)])), true));
        f.add(obj("a", 1)).unwrap();
        let (started_tx, started) = oneshot::channel();
        let consumer = {
            let f = f.clone();
            tokio::spawn(async move {
                let p = f.pop_guard().await.unwrap();
                started_tx.send(()).unwrap();
                sleep(Duration::from_secs(3600)).await;
                show(p.deltas())
            })
        };
        started.await.unwrap();
        let t0 = Instant::now();
        for i in 0..1000 {
            f.update(obj(&format!("o{}", i % 10), i)).unwrap();
        }
        f.add(obj("a", 2)).unwrap();
        f.delete(obj("o1", 0)).unwrap();
        f.resync().unwrap();
        f.replace(vec![obj("a", 3), obj("o2", 3)], "5").unwrap();
        assert_eq!(Instant::now(), t0, "producers returned without waiting");
        assert_eq!(f.metrics().processing, 1);
        assert!(!consumer.is_finished());
        assert_eq!(consumer.await.unwrap(), ["Added a=1"]);
        assert_eq!(t0.elapsed(), Duration::from_secs(3600));
    }
}

#[tokio::test(start_paused = true)]
async fn a_key_in_processing_goes_to_no_other_consumer() {
    for mode in [FifoMode::Delta, FifoMode::Real] {
        let f = Arc::new(fifo(mode, None, false));
        f.add(obj("a", 1)).unwrap();
        let first = f.pop_guard().await.unwrap();
        assert_eq!(first.key().as_str(), "a");
        f.add(obj("a", 2)).unwrap();
        f.add(obj("b", 1)).unwrap();
        if mode == FifoMode::Delta {
            // The second consumer skips `a` (in processing) and gets `b`.
            assert_eq!(f.pop(|d, _| show(d)).await.unwrap(), ["Added b=1"]);
        } else {
            // In order: `b` waits behind `a`'s second delta, which waits for `a`.
            let blocked = tokio::time::timeout(Duration::from_secs(1), f.pop(|d, _| show(d)));
            assert!(
                blocked.await.is_err(),
                "nothing is handed out past the head"
            );
        }
        // Nothing else is poppable until `a` is done.
        let second = {
            let f = f.clone();
            tokio::spawn(async move { f.pop(|d, _| show(d)).await.unwrap() })
        };
        sleep(Duration::from_secs(10)).await;
        assert!(!second.is_finished());
        drop(first);
        assert_eq!(second.await.unwrap(), ["Added a=2"]);
    }
}

#[tokio::test(start_paused = true)]
async fn blocking_consumer_works_without_the_lock() {
    let f = Arc::new(fifo(FifoMode::Delta, None, false));
    f.add(obj("a", 1)).unwrap();
    let (release_tx, release_rx) = std::sync::mpsc::channel::<()>();
    let (started_tx, started_rx) = std::sync::mpsc::channel::<()>();
    let consumer = {
        let f = f.clone();
        std::thread::spawn(move || {
            f.pop_blocking(|d, _| {
                started_tx.send(()).unwrap();
                release_rx.recv().unwrap();
                show(d)
            })
            .unwrap()
        })
    };
    started_rx.recv().unwrap();
    // The consumer is inside its closure; producers still get the lock.
    f.add(obj("a", 2)).unwrap();
    f.add(obj("b", 1)).unwrap();
    assert_eq!(f.len(), 2);
    release_tx.send(()).unwrap();
    assert_eq!(consumer.join().unwrap(), ["Added a=1"]);
    assert_eq!(pop(&f).0, ["Added a=2"]);
}

#[tokio::test(start_paused = true)]
async fn relist_during_processing_sees_the_key_as_applied() {
    // The cache (known objects) does not have `a` yet while its Added is being processed; a
    // relist that lacks `a` must still tombstone it, or the cache keeps a ghost (#115658).
    for mode in [FifoMode::Delta, FifoMode::Real] {
        let known = Known::of(&[]);
        let f = fifo(mode, Some(known.clone()), true);
        f.add(obj("a", 1)).unwrap();
        let p = f.pop_guard().await.unwrap();
        f.replace(vec![], "2").unwrap();
        f.resync().unwrap();
        drop(p);
        assert_eq!(pop(&f).0, ["Deleted ~a=1"], "{mode:?}");
        assert!(f.is_empty());

        // A deletion being processed: the key counts as gone — no tombstone, no Sync, and a
        // second delete of it is ignored (Delta mode).
        known.0.lock().push(obj("b", 1));
        f.delete(obj("b", 1)).unwrap();
        let p = f.pop_guard().await.unwrap();
        f.replace(vec![], "3").unwrap();
        f.resync().unwrap();
        if mode == FifoMode::Delta {
            f.delete(obj("b", 1)).unwrap();
        }
        drop(p);
        assert!(f.is_empty(), "{mode:?}: {:?}", f.list_keys());

        // An update being processed: resync syncs the updated object.
        known.0.lock().clear();
        known.0.lock().push(obj("c", 1));
        f.update(obj("c", 2)).unwrap();
        let p = f.pop_guard().await.unwrap();
        f.resync().unwrap();
        drop(p);
        assert_eq!(pop(&f).0, ["Sync c=2"], "{mode:?}");
    }
}

#[tokio::test(start_paused = true)]
async fn has_synced_waits_for_processing() {
    for mode in [FifoMode::Delta, FifoMode::Real] {
        let f = fifo(mode, None, true);
        f.replace(vec![obj("a", 1)], "1").unwrap();
        f.add(obj("b", 1)).unwrap();
        let p = f.pop_guard().await.unwrap();
        assert!(p.is_in_initial_list());
        assert!(
            !f.has_synced(),
            "the last initial item is still being processed"
        );
        // Another consumer's pop meanwhile is not initial, as with client-go's serialization.
        assert!(!f.pop(|_, initial| initial).await.unwrap());
        drop(p);
        assert!(f.has_synced());
    }
}

#[tokio::test(start_paused = true)]
async fn requeue_puts_deltas_back_ahead_of_newer_ones() {
    for mode in [FifoMode::Delta, FifoMode::Real] {
        let f = fifo(mode, None, true);
        f.replace(vec![obj("a", 1), obj("b", 1)], "1").unwrap();
        let p = f.pop_guard().await.unwrap();
        f.update(obj("a", 2)).unwrap();
        p.requeue();
        assert!(!f.has_synced());
        let all: Vec<String> = std::iter::from_fn(|| {
            (!f.is_empty()).then(|| {
                f.pop_blocking(|d, initial| format!("{:?} {initial}", show(d)))
                    .unwrap()
            })
        })
        .collect();
        let expected: &[&str] = match mode {
            // `a` re-entered the queue behind `b` when updated; the requeue keeps that place.
            FifoMode::Delta => &[
                r#"["Replaced b=1"] true"#,
                r#"["Replaced a=1", "Updated a=2"] true"#,
            ],
            FifoMode::Real => &[
                r#"["Replaced b=1"] true"#,
                r#"["Replaced a=1"] true"#,
                r#"["Updated a=2"] false"#,
            ],
            FifoMode::Atomic => unreachable!("not run in atomic mode"),
        };
        assert_eq!(all, expected, "{mode:?}");
        assert!(f.has_synced());
    }
}

#[tokio::test(start_paused = true)]
async fn requeue_of_an_unqueued_key_goes_to_the_back() {
    let f = fifo(FifoMode::Delta, None, false);
    f.add(obj("a", 1)).unwrap();
    f.add(obj("b", 1)).unwrap();
    f.pop_guard().await.unwrap().requeue();
    assert_eq!(pop(&f).0, ["Added b=1"]);
    assert_eq!(pop(&f).0, ["Added a=1"]);
}

#[tokio::test(start_paused = true)]
async fn metrics_report_depth_and_oldest_age() {
    let f = fifo(FifoMode::Delta, None, false);
    assert_eq!(
        f.metrics(),
        QueueMetrics {
            depth: 0,
            processing: 0,
            oldest_age: None
        }
    );
    f.add(obj("a", 1)).unwrap();
    advance(Duration::from_secs(5)).await;
    f.add(obj("b", 1)).unwrap();
    f.add(obj("a", 2)).unwrap();
    advance(Duration::from_secs(2)).await;
    let m = f.metrics();
    assert_eq!((m.depth, m.oldest_age), (2, Some(Duration::from_secs(7))));
    let p = f.pop_guard().await.unwrap();
    let m = f.metrics();
    assert_eq!(
        (m.depth, m.processing, m.oldest_age),
        (1, 1, Some(Duration::from_secs(2)))
    );
    drop(p);
    assert_eq!(f.metrics().processing, 0);
}
