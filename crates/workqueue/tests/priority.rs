//! The priority queue extension (controller-runtime's priority queue).

use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use kcache_workqueue::PriorityQueue;

#[test]
fn higher_priority_first_fifo_within_a_priority() {
    let q = PriorityQueue::new();
    q.add_with_priority("low-1", -1);
    q.add("zero-1");
    q.add_with_priority("high-1", 10);
    q.add("zero-2");
    q.add_with_priority("high-2", 10);
    q.add_with_priority("low-2", -1);
    let order: Vec<_> = (0..6).map(|_| q.get_blocking().unwrap()).collect();
    assert_eq!(
        order,
        ["high-1", "high-2", "zero-1", "zero-2", "low-1", "low-2"]
    );
}

#[test]
fn re_adding_with_a_higher_priority_raises_a_lower_one_does_not() {
    let q = PriorityQueue::new();
    q.add("a");
    q.add("b");
    q.add("c");
    q.add_with_priority("c", 5); // raised
    q.add_with_priority("a", -5); // not lowered
    assert_eq!(q.len(), 3, "still deduplicated");
    assert_eq!(q.get_blocking(), Some("c"));
    assert_eq!(q.get_blocking(), Some("a"));
    assert_eq!(q.get_blocking(), Some("b"));
}

#[test]
fn raised_items_keep_their_first_add_order_within_the_new_priority() {
    let q = PriorityQueue::new();
    q.add("first");
    q.add_with_priority("second", 1);
    q.add_with_priority("first", 1);
    assert_eq!(q.get_blocking(), Some("first"));
    assert_eq!(q.get_blocking(), Some("second"));
}

#[test]
fn dirty_processing_rules_apply() {
    let q = PriorityQueue::new();
    q.add("x");
    let x = q.get_blocking().unwrap();
    q.add_with_priority("x", 1);
    q.add_with_priority("x", 7);
    assert_eq!(q.len(), 0, "not queued while processing");
    q.add_with_priority("y", 3);
    q.done(&x);
    assert_eq!(q.len(), 2);
    assert_eq!(
        q.get_blocking(),
        Some("x"),
        "re-queued with the highest priority added"
    );
    assert_eq!(q.get_blocking(), Some("y"));
}

#[test]
fn one_worker_at_a_time_and_shutdown() {
    let q = PriorityQueue::new();
    q.add(1);
    let i = q.get_blocking().unwrap();
    q.add(1);
    let (tx, rx) = mpsc::channel();
    let worker = {
        let q = q.clone();
        thread::spawn(move || {
            while let Some(i) = q.get_blocking() {
                tx.send(i).unwrap();
                q.done(&i);
            }
        })
    };
    assert!(rx.recv_timeout(Duration::from_millis(30)).is_err());
    q.done(&i);
    assert_eq!(rx.recv().unwrap(), 1);
    q.shut_down();
    worker.join().unwrap();
}

#[tokio::test]
async fn async_get_and_drain() {
    let q = PriorityQueue::new();
    q.add_with_priority("b", 1);
    q.add_with_priority("a", 2);
    let a = q.get().await.unwrap();
    assert_eq!(a, "a");
    let drain = tokio::spawn({
        let q = q.clone();
        async move { q.shut_down_with_drain().await }
    });
    tokio::task::yield_now().await;
    assert!(q.shutting_down());
    assert_eq!(q.get().await, Some("b"));
    q.done(&a);
    q.done(&"b");
    drain.await.unwrap();
    assert_eq!(q.get().await, None);
}
