//! client-go's delaying_queue_test.go and rate_limiting_queue_test.go, on paused tokio time.

use std::time::Duration;

use kcache_workqueue::{DelayingQueue, ItemExponentialFailureRateLimiter, RateLimitingQueue};
use tokio::time::advance;

const MS: Duration = Duration::from_millis(1);

/// Lets the timer task run after time moved.
async fn settle() {
    for _ in 0..8 {
        tokio::task::yield_now().await;
    }
}

#[tokio::test(start_paused = true)]
async fn simple_queue() {
    let q = DelayingQueue::new();
    q.add_after("foo", 50 * MS);
    settle().await;
    assert_eq!(q.len(), 0, "should not have added");
    assert_eq!(q.waiting_len(), 1);

    advance(60 * MS).await;
    settle().await;
    assert_eq!(q.len(), 1, "should have added");
    let item = q.get().await.unwrap();
    q.done(&item);

    advance(10 * Duration::from_secs(1)).await;
    settle().await;
    assert_eq!(q.len(), 0, "should not have added again");
}

#[tokio::test(start_paused = true)]
async fn deduping() {
    let q = DelayingQueue::new();
    q.add_after("foo", 50 * MS);
    q.add_after("foo", 70 * MS);
    assert_eq!(q.waiting_len(), 1, "deduplicated");
    assert_eq!(q.len(), 0);

    // the earlier time (50ms) wins
    advance(60 * MS).await;
    settle().await;
    assert_eq!(q.len(), 1);
    let item = q.get().await.unwrap();
    q.done(&item);

    // the later add does not fire again
    advance(20 * MS).await;
    settle().await;
    assert_eq!(q.len(), 0);

    // an earlier second add overrides a later first one
    q.add_after("foo", 50 * MS);
    q.add_after("foo", 30 * MS);
    settle().await;
    assert_eq!(q.len(), 0);
    advance(40 * MS).await;
    settle().await;
    assert_eq!(q.len(), 1);
    let item = q.get().await.unwrap();
    q.done(&item);
    advance(20 * MS).await;
    settle().await;
    assert_eq!(q.len(), 0);

    // an item being processed: the delayed add marks it dirty when it fires
    q.add("foo");
    let i = q.get().await.unwrap();
    q.add_after("foo", 5 * MS);
    assert!(q.contains(&"foo"));
    advance(10 * MS).await;
    settle().await;
    assert_eq!(q.len(), 0, "dirty while processing");
    q.done(&i);
    assert_eq!(q.len(), 1);
}

#[tokio::test(start_paused = true)]
async fn add_two_fire_early() {
    let q = DelayingQueue::new();
    q.add_after("foo", Duration::from_secs(1));
    q.add_after("bar", 50 * MS);
    settle().await;
    assert_eq!(q.len(), 0);

    advance(60 * MS).await;
    settle().await;
    assert_eq!(q.len(), 1);
    assert_eq!(q.get().await, Some("bar"));

    q.add_after("baz", Duration::from_secs(2));
    advance(Duration::from_secs(1)).await;
    settle().await;
    assert_eq!(q.len(), 1);
    assert_eq!(q.get().await, Some("foo"));

    advance(Duration::from_secs(2)).await;
    settle().await;
    assert_eq!(q.len(), 1);
    assert_eq!(q.get().await, Some("baz"));
}

#[tokio::test(start_paused = true)]
async fn copy_shifting_fires_in_time_order() {
    let q = DelayingQueue::new();
    q.add_after("foo", Duration::from_secs(1));
    q.add_after("bar", 500 * MS);
    q.add_after("baz", 250 * MS);
    settle().await;
    assert_eq!(q.len(), 0);
    advance(Duration::from_secs(2)).await;
    settle().await;
    assert_eq!(q.len(), 3);
    assert_eq!(q.get().await, Some("baz"));
    assert_eq!(q.get().await, Some("bar"));
    assert_eq!(q.get().await, Some("foo"));
}

#[tokio::test(start_paused = true)]
async fn zero_delay_adds_now_and_shutdown_drops_waiting_items() {
    let q = DelayingQueue::new();
    q.add_after(1, Duration::ZERO);
    assert_eq!(q.len(), 1);
    q.add_after(2, 10 * MS);
    q.shut_down();
    settle().await;
    assert_eq!(q.waiting_len(), 0, "waiting items dropped");
    q.add_after(3, 10 * MS);
    advance(20 * MS).await;
    settle().await;
    assert_eq!(q.get().await, Some(1));
    assert_eq!(q.get().await, None);
}

#[tokio::test(start_paused = true)]
async fn a_getter_waiting_on_an_empty_queue_gets_a_delayed_item() {
    let q = DelayingQueue::new();
    q.add_after("late", 100 * MS);
    let start = tokio::time::Instant::now();
    // With paused time the runtime auto-advances to the timer.
    assert_eq!(q.get().await, Some("late"));
    assert_eq!(start.elapsed(), 100 * MS);
}

#[tokio::test(start_paused = true)]
async fn rate_limiting_queue() {
    let q = RateLimitingQueue::new(ItemExponentialFailureRateLimiter::new(
        MS,
        Duration::from_secs(1),
    ));
    // "one" waits 1ms, then 2ms (the earliest of the two waits wins: 1ms)
    q.add_rate_limited("one");
    q.add_rate_limited("one");
    assert_eq!(q.num_requeues(&"one"), 2);
    q.add_rate_limited("two");
    q.add_rate_limited("two");
    assert_eq!(q.waiting_len(), 2);
    advance(MS).await;
    settle().await;
    assert_eq!(q.len(), 2, "both fire at their first delay");

    q.forget(&"one");
    assert_eq!(q.num_requeues(&"one"), 0);
    assert_eq!(q.num_requeues(&"two"), 2);
    assert_eq!(q.len(), 2, "forget does not dequeue");

    // third failure of "two" waits 4ms; "one" starts again at 1ms
    q.add_rate_limited("two");
    q.add_rate_limited("one");
    let _ = q.get().await;
    let _ = q.get().await;
    assert_eq!(q.len(), 0);
    advance(MS).await;
    settle().await;
    assert_eq!(
        q.waiting_len(),
        1,
        "'one' fired (processing), 'two' still waits"
    );
    advance(3 * MS).await;
    settle().await;
    assert_eq!(q.waiting_len(), 0);
}
