//! client-go's throttle_test.go assertions on `TokenBucket`, on paused tokio time.

use std::num::NonZeroU32;
use std::time::Duration;

use kcache_flowcontrol::{Error, TokenBucket};
use tokio::time::{advance, Instant};

const MS: Duration = Duration::from_millis(1);

#[tokio::test(start_paused = true)]
async fn allows_a_burst_then_qps() {
    let bucket = TokenBucket::new(5.0, 10).unwrap();
    let start = Instant::now();
    for _ in 0..10 {
        bucket.wait().await;
    }
    assert_eq!(start.elapsed(), Duration::ZERO, "the burst passes at once");
    for _ in 0..5 {
        bucket.wait().await;
    }
    let waited = start.elapsed();
    assert!(
        waited >= 999 * MS && waited <= 1001 * MS,
        "five more at 5 qps take a second: {waited:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn try_accept_takes_only_a_present_token() {
    // client-go TestBasicThrottle / TestIncrementThrottle
    let bucket = TokenBucket::new(1.0, 3).unwrap();
    for i in 0..3 {
        assert!(bucket.try_accept(), "token {i} of the burst");
    }
    assert!(!bucket.try_accept(), "the burst is spent");
    advance(Duration::from_secs(1)).await;
    assert!(bucket.try_accept(), "one token refilled after a second");
    assert!(!bucket.try_accept());
}

#[tokio::test(start_paused = true)]
async fn reserve_takes_future_tokens_and_spreads_them_at_qps() {
    let bucket = TokenBucket::new(10.0, 3).unwrap();
    for _ in 0..3 {
        assert_eq!(bucket.reserve(), Duration::ZERO);
    }
    assert_eq!(bucket.reserve(), 100 * MS);
    assert_eq!(bucket.reserve(), 200 * MS);
    assert_eq!(bucket.reserve(), 300 * MS);
    assert!(!bucket.try_accept(), "reserved tokens are gone");
    advance(Duration::from_secs(1)).await;
    assert_eq!(
        bucket.reserve(),
        Duration::ZERO,
        "refilled after the reservations"
    );
}

#[test]
fn bad_rates_are_errors_naming_the_value() {
    for qps in [0.0, -1.0, f64::INFINITY] {
        let err = TokenBucket::new(qps, 1).unwrap_err();
        assert_eq!(err, Error::Qps(qps));
        assert!(err.to_string().contains(&qps.to_string()), "{err}");
    }
    let err = TokenBucket::new(f64::NAN, 1).unwrap_err();
    assert!(matches!(err, Error::Qps(q) if q.is_nan()));
    assert!(err.to_string().contains("NaN"), "{err}");
    let err = TokenBucket::new(1.0, 0).unwrap_err();
    assert_eq!(err, Error::Burst);
    assert!(err.to_string().contains("burst"), "{err}");
}

#[test]
fn extreme_rates_are_clamped_not_rejected() {
    let fast = TokenBucket::new(1e12, 1).unwrap();
    assert!(fast.try_accept());
    let slow = TokenBucket::new(1e-30, 1).unwrap();
    assert!(slow.try_accept());
    assert!(!slow.try_accept());
    assert!(slow.reserve() > Duration::from_secs(3600 * 24 * 365));
}

#[test]
fn per_second_and_accessors() {
    let ten = NonZeroU32::MIN.saturating_add(9);
    let bucket = TokenBucket::per_second(ten, NonZeroU32::MIN);
    assert_eq!(bucket.qps(), 10.0);
    assert_eq!(bucket.burst(), 1);
    assert!(format!("{bucket:?}").contains("qps: 10.0"));
}

#[test]
fn accept_blocks_a_thread_without_a_runtime() {
    // No tokio runtime here: the bucket reads the system clock and `accept` sleeps the thread.
    let bucket = TokenBucket::new(200.0, 1).unwrap();
    let start = std::time::Instant::now();
    bucket.accept();
    bucket.accept();
    assert!(
        start.elapsed() >= 4 * MS,
        "the second token comes 5ms after the first: {:?}",
        start.elapsed()
    );
}
