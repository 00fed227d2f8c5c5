//! client-go's default_rate_limiters_test.go, plus the bounded-memory rule.

use std::time::Duration;

use kcache_workqueue::{
    default_controller_rate_limiter, BucketRateLimiter, ItemExponentialFailureRateLimiter,
    ItemFastSlowRateLimiter, MaxOfRateLimiter, RateLimiter, WithMaxWaitRateLimiter,
};

const MS: Duration = Duration::from_millis(1);

#[test]
fn item_exponential_failure_rate_limiter() {
    let l = ItemExponentialFailureRateLimiter::new(MS, Duration::from_secs(1));
    for expected in [1, 2, 4, 8, 16] {
        assert_eq!(l.when(&"one"), expected * MS);
    }
    assert_eq!(l.num_requeues(&"one"), 5);
    assert_eq!(l.when(&"two"), MS);
    assert_eq!(l.when(&"two"), 2 * MS);
    assert_eq!(l.num_requeues(&"two"), 2);
    l.forget(&"one");
    assert_eq!(l.num_requeues(&"one"), 0);
    assert_eq!(l.when(&"one"), MS);
}

#[test]
fn item_exponential_failure_rate_limiter_overflow() {
    let l = ItemExponentialFailureRateLimiter::new(MS, Duration::from_secs(1000));
    for _ in 0..5 {
        l.when(&"one");
    }
    assert_eq!(l.when(&"one"), 32 * MS);
    for _ in 0..1000 {
        l.when(&"overflow1");
    }
    assert_eq!(l.when(&"overflow1"), Duration::from_secs(1000));

    let hour = Duration::from_secs(3600);
    let l = ItemExponentialFailureRateLimiter::new(Duration::from_secs(60), 1000 * hour);
    l.when(&"two");
    l.when(&"two");
    assert_eq!(l.when(&"two"), Duration::from_secs(240));
    for _ in 0..1000 {
        l.when(&"overflow2");
    }
    assert_eq!(l.when(&"overflow2"), 1000 * hour);
}

#[test]
fn item_exponential_defaults_are_client_gos() {
    let l = ItemExponentialFailureRateLimiter::default();
    assert_eq!(l.when(&1), 5 * MS);
    for _ in 0..100 {
        l.when(&1);
    }
    assert_eq!(l.when(&1), Duration::from_secs(1000));
}

#[test]
fn item_fast_slow_rate_limiter() {
    let l = ItemFastSlowRateLimiter::new(5 * MS, Duration::from_secs(10), 3);
    for expected in [
        5 * MS,
        5 * MS,
        5 * MS,
        Duration::from_secs(10),
        Duration::from_secs(10),
    ] {
        assert_eq!(l.when(&"one"), expected);
    }
    assert_eq!(l.num_requeues(&"one"), 5);
    assert_eq!(l.when(&"two"), 5 * MS);
    assert_eq!(l.when(&"two"), 5 * MS);
    assert_eq!(l.num_requeues(&"two"), 2);
    l.forget(&"one");
    assert_eq!(l.num_requeues(&"one"), 0);
    assert_eq!(l.when(&"one"), 5 * MS);
}

#[test]
fn max_of_rate_limiter() {
    let l = MaxOfRateLimiter::new(vec![
        Box::new(ItemFastSlowRateLimiter::new(
            5 * MS,
            Duration::from_secs(3),
            3,
        )),
        Box::new(ItemExponentialFailureRateLimiter::new(
            MS,
            Duration::from_secs(1),
        )),
    ]);
    let three = Duration::from_secs(3);
    for expected in [5 * MS, 5 * MS, 5 * MS, three, three] {
        assert_eq!(l.when(&"one"), expected);
    }
    assert_eq!(l.num_requeues(&"one"), 5);
    assert_eq!(l.when(&"two"), 5 * MS);
    assert_eq!(l.when(&"two"), 5 * MS);
    assert_eq!(l.num_requeues(&"two"), 2);
    l.forget(&"one");
    assert_eq!(l.num_requeues(&"one"), 0);
    assert_eq!(l.when(&"one"), 5 * MS);
}

/// client-go's StepRateLimiter: `base` for the first `threshold` calls overall, then `max`.
struct Step {
    count: std::sync::atomic::AtomicUsize,
    threshold: usize,
    base: Duration,
    max: Duration,
}

impl<T> RateLimiter<T> for Step {
    fn when(&self, _: &T) -> Duration {
        let n = self
            .count
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
            + 1;
        if n <= self.threshold {
            self.base
        } else {
            self.max
        }
    }
    fn forget(&self, _: &T) {}
    fn num_requeues(&self, _: &T) -> usize {
        0
    }
}

#[test]
fn with_max_wait_rate_limiter() {
    let step = Step {
        count: Default::default(),
        threshold: 100,
        base: 5 * MS,
        max: Duration::from_secs(1000),
    };
    let l = WithMaxWaitRateLimiter::new(Box::new(step), Duration::from_secs(500));
    for i in 0..100 {
        assert_eq!(l.when(&i), 5 * MS);
    }
    for i in 100..200 {
        assert_eq!(l.when(&i), Duration::from_secs(500));
    }
}

#[tokio::test(start_paused = true)]
async fn bucket_rate_limiter_reserves_tokens_at_qps() {
    let l = BucketRateLimiter::new(10.0, 3).unwrap();
    // the burst is free
    for i in 0..3 {
        assert_eq!(RateLimiter::<i32>::when(&l, &i), Duration::ZERO);
    }
    // then every call reserves the next token: 100ms apart at 10 qps
    assert_eq!(RateLimiter::<i32>::when(&l, &3), 100 * MS);
    assert_eq!(RateLimiter::<i32>::when(&l, &4), 200 * MS);
    assert_eq!(RateLimiter::<i32>::when(&l, &5), 300 * MS);
    RateLimiter::<i32>::forget(&l, &5);
    assert_eq!(RateLimiter::<i32>::num_requeues(&l, &5), 0);
    // time refills the bucket
    tokio::time::advance(Duration::from_secs(1)).await;
    assert_eq!(RateLimiter::<i32>::when(&l, &6), Duration::ZERO);
}

#[test]
fn bucket_rate_limiter_rejects_a_bad_rate_by_name() {
    let err = BucketRateLimiter::new(0.0, 100).unwrap_err();
    assert!(err.to_string().contains("qps"), "{err}");
    let err = BucketRateLimiter::new(10.0, 0).unwrap_err();
    assert!(err.to_string().contains("burst"), "{err}");
}

#[tokio::test(start_paused = true)]
async fn default_controller_rate_limiter_is_max_of_exponential_and_bucket() {
    let l = default_controller_rate_limiter::<u32>();
    assert_eq!(l.when(&1), 5 * MS);
    assert_eq!(l.when(&1), 10 * MS);
    assert_eq!(l.num_requeues(&1), 2);
    // 98 more tokens of the burst of 100 are left; then the bucket paces at 10 qps
    for i in 2..100 {
        l.when(&i);
    }
    assert_eq!(
        l.when(&1000),
        100 * MS,
        "bucket: first token after the burst"
    );
    l.forget(&1);
    assert_eq!(l.num_requeues(&1), 0);
}

#[test]
fn limiter_memory_is_bounded_and_evicts_the_least_recently_failed() {
    let l = ItemExponentialFailureRateLimiter::with_max_tracked(MS, Duration::from_secs(1), 3);
    l.when(&"a");
    l.when(&"b");
    l.when(&"c");
    l.when(&"a"); // "a" failed most recently now; "b" is the oldest
    assert_eq!(l.tracked_items(), 3);
    l.when(&"d"); // evicts "b"
    assert_eq!(l.tracked_items(), 3);
    assert_eq!(l.num_requeues(&"b"), 0, "evicted");
    assert_eq!(l.num_requeues(&"a"), 2, "kept, with its count");
    assert_eq!(l.when(&"a"), 4 * MS, "backoff continues for tracked items");

    // never forgetting a stream of distinct items stays within the bound
    let l = ItemFastSlowRateLimiter::with_max_tracked(MS, Duration::from_secs(1), 1, 1000);
    for i in 0..100_000u32 {
        l.when(&i);
    }
    assert_eq!(l.tracked_items(), 1000);
    assert_eq!(l.num_requeues(&99_999), 1);
    assert_eq!(l.num_requeues(&0), 0);
}
