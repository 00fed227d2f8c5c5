//! [`LeaderElectionConfig`]: client-go's timing defaults and the rules relating them.

use std::time::Duration;

use crate::error::ConfigError;

/// client-go's `JitterFactor`: a candidate waits between `retry_period` and
/// `retry_period × (1 + JITTER_FACTOR)` between attempts, so candidates do not poll in step.
pub const JITTER_FACTOR: f64 = 1.2;

/// How one candidate takes part in an election (client-go's `LeaderElectionConfig`).
///
/// Every candidate of one lock should use the same durations. Validation follows client-go:
/// `lease_duration > renew_deadline > retry_period × JITTER_FACTOR > 0`.
#[derive(Debug, Clone, PartialEq)]
pub struct LeaderElectionConfig {
    /// This candidate's identity, written into the Lease's `holderIdentity`. Must be unique among
    /// the candidates (client-go's examples use hostname + `_` + a random suffix).
    pub identity: String,
    /// How long others wait after they last saw the record change before taking the lock
    /// (client-go default 15 s).
    pub lease_duration: Duration,
    /// How long the leader keeps trying to renew before it gives leadership up (default 10 s).
    /// Measured from the start of its last successful renewal, so the leader stops acting at
    /// least `lease_duration - renew_deadline` before anyone else may take over.
    pub renew_deadline: Duration,
    /// The wait between attempts (default 2 s), jittered by [`JITTER_FACTOR`] for candidates.
    pub retry_period: Duration,
    /// On shutdown, wait for the leading task to return and then release the lock by writing an
    /// empty holder, so another candidate takes over within about one retry period instead of
    /// one lease duration (client-go's `ReleaseOnCancel`).
    pub release_on_cancel: bool,
    /// A name for logs (client-go's `Name`); the lock's `namespace/name` when empty.
    pub name: String,
}

impl LeaderElectionConfig {
    /// client-go's defaults (15 s / 10 s / 2 s, no release on cancel) for `identity`.
    pub fn new(identity: impl Into<String>) -> Self {
        LeaderElectionConfig {
            identity: identity.into(),
            lease_duration: Duration::from_secs(15),
            renew_deadline: Duration::from_secs(10),
            retry_period: Duration::from_secs(2),
            release_on_cancel: false,
            name: String::new(),
        }
    }

    /// Checks client-go's rules; the error names the field at fault.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let bad = |field: &'static str, problem: String| Err(ConfigError { field, problem });
        if self.identity.is_empty() {
            return bad("identity", "must not be empty".into());
        }
        for (field, d) in [
            ("lease_duration", self.lease_duration),
            ("renew_deadline", self.renew_deadline),
            ("retry_period", self.retry_period),
        ] {
            if d.is_zero() {
                return bad(field, "must be greater than zero".into());
            }
        }
        if self.lease_duration <= self.renew_deadline {
            return bad(
                "lease_duration",
                format!(
                    "{:?} must be greater than renew_deadline {:?}",
                    self.lease_duration, self.renew_deadline
                ),
            );
        }
        let jittered = self.retry_period.mul_f64(JITTER_FACTOR);
        if self.renew_deadline <= jittered {
            return bad(
                "renew_deadline",
                format!(
                    "{:?} must be greater than retry_period × {JITTER_FACTOR} = {jittered:?}",
                    self.renew_deadline
                ),
            );
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secs(s: u64) -> Duration {
        Duration::from_secs(s)
    }

    #[test]
    fn defaults_are_client_gos_and_valid() {
        let c = LeaderElectionConfig::new("a");
        assert_eq!(
            (c.lease_duration, c.renew_deadline, c.retry_period),
            (secs(15), secs(10), secs(2))
        );
        assert!(!c.release_on_cancel);
        c.validate().unwrap();
    }

    #[test]
    fn each_rule_names_its_field() {
        let field = |f: fn(&mut LeaderElectionConfig)| {
            let mut c = LeaderElectionConfig::new("a");
            f(&mut c);
            let e = c.validate().unwrap_err();
            assert!(e.to_string().starts_with(e.field), "{e}");
            e.field
        };
        assert_eq!(field(|c| c.identity.clear()), "identity");
        assert_eq!(field(|c| c.lease_duration = secs(0)), "lease_duration");
        assert_eq!(field(|c| c.renew_deadline = secs(0)), "renew_deadline");
        assert_eq!(field(|c| c.retry_period = secs(0)), "retry_period");
        assert_eq!(field(|c| c.lease_duration = secs(10)), "lease_duration");
        // 2 s × 1.2 = 2.4 s: a renew deadline of 2 s is too short (client-go's rule).
        assert_eq!(field(|c| c.renew_deadline = secs(2)), "renew_deadline");
        let mut ok = LeaderElectionConfig::new("a");
        ok.renew_deadline = Duration::from_millis(2401);
        ok.validate().unwrap();
    }
}
