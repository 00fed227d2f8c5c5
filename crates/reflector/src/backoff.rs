//! The one backoff a reflector shares between relists, watch retries and 429s.

use std::time::Duration;

use tokio::time::Instant;

use crate::BackoffOptions;

/// Exponential backoff with jitter and a reset after a quiet period (client-go's
/// `Backoff.DelayWithReset`).
///
/// client-go resets every `reset_after` since its last reset, whatever happened in between;
/// kcache resets when `reset_after` has passed since the previous delay, i.e. after that long
/// without a failure, which is what the reset is meant to express.
#[derive(Debug)]
pub(crate) struct Backoff {
    options: BackoffOptions,
    next: Duration,
    last_delay_at: Option<Instant>,
}

impl Backoff {
    pub(crate) fn new(options: BackoffOptions) -> Self {
        let next = options.initial.min(options.cap);
        Backoff {
            options,
            next,
            last_delay_at: None,
        }
    }

    /// The next delay: the current step, jittered into `[d, d + jitter·d)`.
    pub(crate) fn next_delay(&mut self) -> Duration {
        let now = Instant::now();
        if self
            .last_delay_at
            .is_some_and(|at| now.duration_since(at) >= self.options.reset_after)
        {
            self.next = self.options.initial.min(self.options.cap);
        }
        self.last_delay_at = Some(now);
        let base = self.next;
        self.next = base
            .mul_f64(self.options.factor.max(1.0))
            .min(self.options.cap);
        let jitter = self.options.jitter.max(0.0);
        if jitter == 0.0 {
            return base;
        }
        base + base.mul_f64(jitter * rand::random::<f64>())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn in_step(d: Duration, base_ms: u64) -> bool {
        let base = Duration::from_millis(base_ms);
        d >= base && d < base * 2
    }

    #[tokio::test(start_paused = true)]
    async fn doubles_with_jitter_up_to_the_cap() {
        let mut b = Backoff::new(BackoffOptions::default());
        for base in [800, 1600, 3200, 6400, 12800, 25600, 30000, 30000] {
            let d = b.next_delay();
            assert!(in_step(d, base), "{d:?} not in [{base}ms, {}ms)", 2 * base);
        }
    }

    #[tokio::test(start_paused = true)]
    async fn resets_after_a_quiet_period_only() {
        let mut b = Backoff::new(BackoffOptions::default());
        b.next_delay();
        tokio::time::advance(Duration::from_secs(119)).await;
        assert!(in_step(b.next_delay(), 1600), "no reset before 2 minutes");
        tokio::time::advance(Duration::from_secs(120)).await;
        assert!(in_step(b.next_delay(), 800), "reset after 2 quiet minutes");
    }

    #[tokio::test(start_paused = true)]
    async fn without_jitter_the_steps_are_exact() {
        let mut b = Backoff::new(BackoffOptions {
            initial: Duration::from_millis(10),
            cap: Duration::from_millis(100),
            jitter: 0.0,
            ..BackoffOptions::default()
        });
        let steps: Vec<u128> = (0..6).map(|_| b.next_delay().as_millis()).collect();
        assert_eq!(steps, [10, 20, 40, 80, 100, 100]);
    }
}
