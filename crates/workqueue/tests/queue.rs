//! client-go's queue_test.go, as assertions on `Queue`.

use std::collections::HashMap;
use std::sync::mpsc;
use std::sync::Arc;
use std::thread;

use kcache_workqueue::Queue;

/// How a test shuts the queue down: client-go runs several tests with both.
#[derive(Clone, Copy, Debug)]
enum Shutdown {
    Plain,
    Drain,
}

fn shut(q: &Queue<i32>, how: Shutdown) {
    match how {
        Shutdown::Plain => q.shut_down(),
        Shutdown::Drain => q.shut_down_with_drain_blocking(),
    }
}

#[test]
fn basic_many_producers_and_consumers() {
    for how in [Shutdown::Plain, Shutdown::Drain] {
        let q = Queue::<i32>::new();
        let producers: Vec<_> = (0..50)
            .map(|i| {
                let q = q.clone();
                thread::spawn(move || {
                    for _ in 0..50 {
                        q.add(i);
                        thread::yield_now();
                    }
                })
            })
            .collect();
        let consumers: Vec<_> = (0..10)
            .map(|_| {
                let q = q.clone();
                thread::spawn(move || {
                    while let Some(item) = q.get_blocking() {
                        assert_ne!(item, -1, "got an item added after shutdown");
                        q.done(&item);
                    }
                })
            })
            .collect();
        producers.into_iter().for_each(|p| p.join().unwrap());
        shut(&q, how);
        q.add(-1);
        consumers.into_iter().for_each(|c| c.join().unwrap());
        assert_eq!(q.len(), 0, "{how:?}");
    }
}

#[test]
fn add_while_processing() {
    for how in [Shutdown::Plain, Shutdown::Drain] {
        let q = Queue::<i32>::new();
        let producers: Vec<_> = (0..50)
            .map(|i| {
                let q = q.clone();
                thread::spawn(move || q.add(i))
            })
            .collect();
        let consumers: Vec<_> = (0..10)
            .map(|_| {
                let q = q.clone();
                thread::spawn(move || {
                    let mut counters = HashMap::new();
                    while let Some(item) = q.get_blocking() {
                        let n = counters.entry(item).or_insert(0);
                        *n += 1;
                        if *n < 2 {
                            q.add(item);
                        }
                        q.done(&item);
                    }
                })
            })
            .collect();
        producers.into_iter().for_each(|p| p.join().unwrap());
        shut(&q, how);
        consumers.into_iter().for_each(|c| c.join().unwrap());
        assert_eq!(q.len(), 0, "{how:?}");
    }
}

#[test]
fn len_counts_queued_items_once() {
    let q = Queue::new();
    q.add("foo");
    assert_eq!(q.len(), 1);
    q.add("bar");
    assert_eq!(q.len(), 2);
    q.add("foo");
    assert_eq!(q.len(), 2);
}

#[test]
fn find_sees_dirty_and_processing_items() {
    let q = Queue::new();
    assert!(!q.contains(&"foo"));
    q.add("foo");
    assert!(q.contains(&"foo"));
    let i = q.get_blocking().unwrap();
    assert!(q.contains(&"foo"), "processing counts");
    q.done(&i);
    assert!(!q.contains(&"foo"));
}

#[test]
fn reinsert() {
    let q = Queue::new();
    q.add("foo");
    let i = q.get_blocking().unwrap();
    assert_eq!(i, "foo");
    q.add(i);
    q.done(&i);
    let i = q.get_blocking().unwrap();
    assert_eq!(i, "foo");
    q.done(&i);
    assert_eq!(q.len(), 0);
}

#[test]
fn an_item_done_and_added_again_is_queued_again() {
    let q = Queue::new();
    for round in 0..3 {
        q.add("foo");
        q.add("foo");
        assert_eq!(q.len(), 1, "round {round}: one item queued");
        let i = q.get_blocking().unwrap();
        q.done(&i);
        assert!(!q.contains(&"foo"), "round {round}: done and clean");
        assert_eq!(q.len(), 0);
    }
}

#[test]
fn the_queue_keeps_a_bounded_number_of_items_done() {
    // The queue keeps some clean entries (their keys) to re-queue them in place; it must let go
    // of them: at most 512 per shard of 32 beyond what is queued or processing.
    let q = Queue::<Arc<str>>::new();
    let keys: Vec<Arc<str>> = (0..100_000)
        .map(|i| Arc::from(format!("ns/k{i}")))
        .collect();
    for k in &keys {
        q.add_ref(k);
        let got = q.get_blocking().unwrap();
        q.done(&got);
    }
    let held = keys.iter().filter(|k| Arc::strong_count(k) > 1).count();
    assert!(held <= 32 * 512, "{held} keys still held by the queue");
    // What it kept still follows the rules.
    q.add_ref(&keys[99_999]);
    assert_eq!(q.len(), 1);
    assert_eq!(q.get_blocking().as_deref(), Some("ns/k99999"));
}

#[test]
fn collapse() {
    let q = Queue::new();
    q.add("bar");
    q.add("bar");
    assert_eq!(q.len(), 1);
    let i = q.get_blocking().unwrap();
    assert_eq!(i, "bar");
    q.done(&i);
    assert_eq!(q.len(), 0);
}

#[test]
fn collapse_while_processing() {
    let q = Queue::new();
    q.add("foo");
    let i = q.get_blocking().unwrap();
    assert_eq!(i, "foo");
    q.add("foo");
    q.add("foo");
    assert_eq!(q.len(), 0, "not queued while processing");

    let (tx, rx) = mpsc::channel();
    let worker = {
        let q = q.clone();
        thread::spawn(move || {
            let i = q.get_blocking().unwrap();
            tx.send(i).unwrap();
            q.done(&i);
        })
    };
    // The other worker parks: the item stays processing until the first is done.
    while q.waiting_getters() == 0 {
        thread::yield_now();
    }
    assert!(rx.try_recv().is_err());
    q.done(&"foo");
    assert_eq!(rx.recv().unwrap(), "foo");
    worker.join().unwrap();
    assert_eq!(q.len(), 0);
}

#[test]
fn queued_items_are_handed_out_after_shut_down() {
    let q = Queue::new();
    q.add(1);
    q.add(2);
    q.shut_down();
    q.add(3);
    assert!(q.shutting_down());
    assert_eq!(q.get_blocking(), Some(1));
    assert_eq!(q.get_blocking(), Some(2));
    assert_eq!(q.get_blocking(), None);
}

/// Calls get until it reports shutdown (client-go's `for !shuttingDown { _, shuttingDown = Get() }`).
fn get_until_shutdown(q: &Queue<&'static str>) {
    while q.get_blocking().is_some() {}
}

#[test]
fn queue_drainage_using_shut_down_with_drain() {
    let q = Queue::new();
    q.add("foo");
    q.add("bar");
    let first = q.get_blocking().unwrap();
    let second = q.get_blocking().unwrap();
    let (tx, rx) = mpsc::channel();
    let drainer = {
        let q = q.clone();
        thread::spawn(move || {
            q.shut_down_with_drain_blocking();
            tx.send(()).unwrap();
        })
    };
    while !q.shutting_down() {
        thread::yield_now();
    }
    get_until_shutdown(&q);
    assert!(rx.try_recv().is_err(), "drain waits for processing items");
    q.done(&first);
    assert!(rx.try_recv().is_err(), "one item is still processing");
    q.done(&second);
    rx.recv().unwrap();
    drainer.join().unwrap();
}

#[test]
fn queue_drainage_using_shut_down_with_drain_with_dirty_item() {
    let q = Queue::new();
    q.add("foo");
    let gotten = q.get_blocking().unwrap();
    q.add("foo");
    let drainer = {
        let q = q.clone();
        thread::spawn(move || q.shut_down_with_drain_blocking())
    };
    while !q.shutting_down() {
        thread::yield_now();
    }
    assert_eq!(
        q.get_blocking(),
        None,
        "dirty-while-processing is not queued"
    );
    q.done(&gotten);
    let again = q.get_blocking().expect("done re-queued the dirty item");
    q.done(&again);
    assert_eq!(q.get_blocking(), None);
    drainer.join().unwrap();
}

#[test]
fn force_queue_shutdown_using_shut_down() {
    let q = Queue::new();
    q.add("foo");
    q.add("bar");
    q.get_blocking();
    q.get_blocking();
    let drainer = {
        let q = q.clone();
        thread::spawn(move || q.shut_down_with_drain_blocking())
    };
    while !q.shutting_down() {
        thread::yield_now();
    }
    get_until_shutdown(&q);
    q.shut_down();
    drainer.join().unwrap(); // released without any done
}

#[test]
fn no_queue_drainage_using_shut_down() {
    let q = Queue::new();
    q.add("foo");
    q.add("bar");
    q.get_blocking();
    q.get_blocking();
    let q2 = q.clone();
    thread::spawn(move || q2.shut_down()).join().unwrap();
}

#[tokio::test]
async fn async_drain_and_forced_release() {
    let q = Queue::new();
    q.add(1);
    let i = q.get().await.unwrap();
    let drain = tokio::spawn({
        let q = q.clone();
        async move { q.shut_down_with_drain().await }
    });
    tokio::task::yield_now().await;
    assert!(!drain.is_finished());
    q.done(&i);
    drain.await.unwrap();

    let q = Queue::new();
    q.add(1);
    let _held = q.get().await.unwrap();
    let drain = tokio::spawn({
        let q = q.clone();
        async move { q.shut_down_with_drain().await }
    });
    tokio::task::yield_now().await;
    q.shut_down();
    drain.await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shut_down_wakes_async_and_blocking_getters() {
    let q = Arc::new(Queue::<u32>::new());
    let tasks: Vec<_> = (0..4)
        .map(|_| {
            let q = q.clone();
            tokio::spawn(async move { q.get().await })
        })
        .collect();
    let threads: Vec<_> = (0..4)
        .map(|_| {
            let q = q.clone();
            thread::spawn(move || q.get_blocking())
        })
        .collect();
    // Every getter parked, so shutdown has to wake them (not just be seen by late getters).
    while q.waiting_getters() < 8 {
        tokio::task::yield_now().await;
    }
    q.shut_down();
    for t in tasks {
        assert_eq!(t.await.unwrap(), None);
    }
    for t in threads {
        assert_eq!(t.join().unwrap(), None);
    }
}

#[tokio::test]
async fn a_cancelled_async_getter_passes_its_wake_up_on() {
    let q = Queue::<u32>::new();
    let cancelled = tokio::spawn({
        let q = q.clone();
        async move { q.get().await }
    });
    let waiting = tokio::spawn({
        let q = q.clone();
        async move { q.get().await }
    });
    tokio::task::yield_now().await; // both register
    q.add(7); // wakes the first registered getter...
    cancelled.abort(); // ...which is cancelled before it runs
    assert!(cancelled.await.unwrap_err().is_cancelled());
    assert_eq!(waiting.await.unwrap(), Some(7));
}

#[tokio::test]
async fn async_and_blocking_getters_share_a_queue() {
    let q = Queue::<u32>::new();
    let blocking = {
        let q = q.clone();
        thread::spawn(move || {
            let mut got = Vec::new();
            while let Some(i) = q.get_blocking() {
                got.push(i);
                q.done(&i);
            }
            got
        })
    };
    let task = tokio::spawn({
        let q = q.clone();
        async move {
            let mut got = Vec::new();
            while let Some(i) = q.get().await {
                got.push(i);
                q.done(&i);
                tokio::task::yield_now().await;
            }
            got
        }
    });
    for i in 0..1000 {
        q.add(i);
        if i % 100 == 0 {
            tokio::task::yield_now().await;
        }
    }
    q.shut_down();
    let mut all = blocking.join().unwrap();
    all.extend(task.await.unwrap());
    all.sort_unstable();
    all.dedup();
    assert_eq!(all.len(), 1000, "every distinct item processed once");
}

#[test]
fn add_ref_follows_the_same_rules_and_clones_only_when_queued() {
    let q = Queue::<String>::new();
    let key = "default/a".to_string();
    q.add_ref(&key);
    q.add_ref(&key);
    assert_eq!(q.len(), 1);
    let got = q.get_blocking().unwrap();
    q.add_ref(&key); // dirty while processing
    assert_eq!(q.len(), 0);
    q.done(&got);
    assert_eq!(q.get_blocking().as_ref(), Some(&key));
    q.shut_down();
    q.add_ref(&key);
    assert_eq!(q.len(), 0, "dropped after shutdown");
}

#[test]
fn a_dropped_guard_calls_done() {
    let q = Queue::new();
    q.add(1);
    {
        let item = q.get_guarded_blocking().unwrap();
        assert_eq!(*item, 1);
        q.add(1);
        assert_eq!(q.len(), 0, "processing: the add waits for done");
    }
    assert_eq!(q.len(), 1, "the guard's done queued the dirty item again");
    let item = q.get_guarded_blocking().unwrap();
    assert_eq!(item.item(), &1);
    item.done();
    assert!(!q.contains(&1), "explicit done");
}

#[test]
fn a_worker_that_panics_still_releases_its_item() {
    let q = Queue::new();
    q.add("boom");
    let worker = {
        let q = q.clone();
        thread::spawn(move || {
            let _item = q.get_guarded_blocking().unwrap();
            panic!("the reconcile panicked");
        })
    };
    assert!(worker.join().is_err());
    assert!(!q.contains(&"boom"), "unwinding dropped the guard");
    q.add("boom");
    assert_eq!(q.len(), 1, "and the item can be queued again");
}

#[tokio::test]
async fn an_async_worker_returning_early_calls_done() {
    async fn work(q: &Queue<u32>) -> Result<(), String> {
        let item = q.get_guarded().await.ok_or("shut down")?;
        if *item % 2 == 1 {
            return Err(format!("{} is odd", *item)); // early return: the guard calls done
        }
        Ok(())
    }
    let q = Queue::new();
    q.add(3);
    assert_eq!(work(&q).await, Err("3 is odd".to_string()));
    assert!(!q.contains(&3));
    q.shut_down();
    assert_eq!(work(&q).await, Err("shut down".to_string()));
}
