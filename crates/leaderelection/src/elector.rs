//! [`LeaderElector`]: the acquire / renew / release loop of client-go's `leaderelection.go`.
//!
//! The two timing rules that keep two leaders from acting at once, on every candidate's own
//! monotonic clock (never from the record's wall-clock timestamps):
//!
//! - a candidate takes the lock only once the Lease has not changed for the lease duration since
//!   it *received* the version it holds, and only by an update conditional on that version's
//!   resourceVersion (a 409 is a lost race);
//! - the leader gives up — its token fires — `renew_deadline` after it *sent* its last successful
//!   renewal. That write reached the server after it was sent and every other candidate saw it
//!   later still, so the leader stops at least `lease_duration - renew_deadline` before anyone
//!   may take over. (client-go counts the deadline from the start of the renew round, one retry
//!   period after the last success; kcache's count is the stricter one.)
//!
//! Any change of the Lease (its resourceVersion) restarts a candidate's wait, where client-go
//! compares the record only: two renewals with equal timestamps still count as two.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use kcache_core::Error;
use parking_lot::Mutex;
use tokio::time::{sleep, sleep_until, timeout, timeout_at, Instant};
use tokio_util::sync::CancellationToken;

use crate::callbacks::LeaderCallbacks;
use crate::config::{LeaderElectionConfig, JITTER_FACTOR};
use crate::error::{ConfigError, HealthError};
use crate::lock::LeaseClient;
use crate::record::{whole_seconds, LeaderElectionRecord, Lease};

/// How a [`LeaderElector::run`] ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunEnd {
    /// Shut down before this candidate acquired the lock.
    NotLeading,
    /// Led, and lost the lock: the renew deadline passed or another holder was seen.
    LeadershipLost,
    /// Led until shut down (the lock was released if `release_on_cancel`).
    ShutDown,
}

/// One candidate of a leader election on one lock (client-go's `LeaderElector`).
///
/// Cheap to clone; clones share the observed state. Run one [`run`](Self::run) at a time; a
/// candidate that lost leadership may run again to campaign anew.
pub struct LeaderElector<L> {
    inner: Arc<Inner<L>>,
}

impl<L> Clone for LeaderElector<L> {
    fn clone(&self) -> Self {
        LeaderElector {
            inner: self.inner.clone(),
        }
    }
}

impl<L: LeaseClient> std::fmt::Debug for LeaderElector<L> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LeaderElector")
            .field("name", &self.inner.name)
            .field("identity", &self.inner.config.identity)
            .field("leader", &self.get_leader())
            .finish()
    }
}

struct Inner<L> {
    lock: L,
    config: LeaderElectionConfig,
    callbacks: LeaderCallbacks,
    name: String,
    state: Mutex<Observed>,
}

#[derive(Default)]
struct Observed {
    /// The Lease as last read or written.
    lease: Option<Lease>,
    /// When `lease` last changed, on this candidate's clock.
    since: Option<Instant>,
    /// The holder last passed to `on_new_leader`.
    reported: Option<String>,
}

impl Observed {
    fn holder(&self) -> Option<&str> {
        self.lease
            .as_ref()
            .map(|l| l.record.holder_identity.as_str())
    }
}

/// The outcome of one attempt.
enum Attempt {
    /// We hold the lock.
    Held,
    /// Someone else holds a lease that has not expired on our clock.
    HeldBy(String),
}

impl<L: LeaseClient> LeaderElector<L> {
    /// A candidate; fails when `config` breaks client-go's rules.
    pub fn new(
        lock: L,
        config: LeaderElectionConfig,
        callbacks: LeaderCallbacks,
    ) -> Result<Self, ConfigError> {
        config.validate()?;
        let name = if config.name.is_empty() {
            lock.describe()
        } else {
            config.name.clone()
        };
        Ok(LeaderElector {
            inner: Arc::new(Inner {
                lock,
                config,
                callbacks,
                name,
                state: Mutex::new(Observed::default()),
            }),
        })
    }

    /// The configuration.
    pub fn config(&self) -> &LeaderElectionConfig {
        &self.inner.config
    }

    /// Whether the last observed record names this candidate (client-go's `IsLeader`). It stays
    /// true after a failed renewal until another holder is seen; the leading token is what tells
    /// the work to stop.
    pub fn is_leader(&self) -> bool {
        self.get_leader().as_deref() == Some(self.inner.config.identity.as_str())
    }

    /// The holder in the last observed record (client-go's `GetLeader`); `None` if nobody holds
    /// the lock or it was never read.
    pub fn get_leader(&self) -> Option<String> {
        let s = self.inner.state.lock();
        s.holder().filter(|h| !h.is_empty()).map(str::to_string)
    }

    /// The last observed record.
    pub fn observed_record(&self) -> Option<LeaderElectionRecord> {
        let s = self.inner.state.lock();
        s.lease.as_ref().map(|l| l.record.clone())
    }

    /// client-go's `Check`: an error when this candidate is the observed holder and the record
    /// has not been renewed for more than the lease duration plus `tolerance`.
    pub fn check(&self, tolerance: Duration) -> Result<(), HealthError> {
        if !self.is_leader() {
            return Ok(());
        }
        let since = self.inner.state.lock().since;
        let since_renew = since.map_or(Duration::ZERO, |t| t.elapsed());
        if since_renew > self.inner.config.lease_duration + tolerance {
            return Err(HealthError {
                lock: self.inner.lock.describe(),
                since_renew,
            });
        }
        Ok(())
    }

    /// Campaigns until this candidate acquires the lock, leads until leadership is lost or
    /// `shutdown` fires, and returns (client-go's `Run`). While leading, the future from
    /// `on_started_leading` runs on its own task; its token fires when leadership ends, and `run`
    /// waits for it to return before releasing the lock and calling `on_stopped_leading`.
    pub async fn run(&self, shutdown: CancellationToken) -> RunEnd {
        let Some(acquired) = self.acquire(&shutdown).await else {
            return RunEnd::NotLeading;
        };
        let end = self.lead(&shutdown, acquired).await;
        if let Some(stopped) = &self.inner.callbacks.stopped {
            stopped();
        }
        end
    }

    /// Tries until the lock is ours; returns when the successful attempt started.
    async fn acquire(&self, shutdown: &CancellationToken) -> Option<Instant> {
        let cfg = &self.inner.config;
        let name = &self.inner.name;
        tracing::info!(lock = %name, identity = %cfg.identity, "attempting to acquire leader lease");
        loop {
            let sent = Instant::now();
            let attempt = timeout(cfg.renew_deadline, self.try_acquire_or_renew());
            let result = tokio::select! {
                biased;
                _ = shutdown.cancelled() => return None,
                r = attempt => r,
            };
            match result {
                Ok(Ok(Attempt::Held)) if sent.elapsed() < cfg.renew_deadline => {
                    tracing::info!(lock = %name, identity = %cfg.identity, "successfully acquired lease");
                    return Some(sent);
                }
                Ok(Ok(Attempt::Held)) => {
                    tracing::warn!(lock = %name, "acquired the lease too late to lead; renewing");
                }
                Ok(Ok(Attempt::HeldBy(holder))) => {
                    tracing::debug!(lock = %name, %holder, "lease is held and has not yet expired");
                }
                Ok(Err(e)) if e.is_conflict() => {
                    tracing::debug!(lock = %name, "lost the race for the lease: {e}");
                }
                Ok(Err(e)) => tracing::warn!(lock = %name, "error acquiring the lease: {e}"),
                Err(_) => tracing::warn!(lock = %name, "acquiring the lease timed out"),
            }
            let wait = self.until_next_attempt();
            tokio::select! {
                biased;
                _ = shutdown.cancelled() => return None,
                _ = sleep(wait) => {}
            }
        }
    }

    /// A jittered retry period, shortened to the moment the observed lease expires on our
    /// clock: the next attempt is the first that can succeed.
    fn until_next_attempt(&self) -> Duration {
        let retry = self.inner.config.retry_period;
        let jittered = retry.mul_f64(1.0 + rand::random::<f64>() * JITTER_FACTOR);
        let s = self.inner.state.lock();
        match (&s.lease, s.since) {
            (Some(lease), Some(since)) if !lease.record.holder_identity.is_empty() => {
                let expires = since + self.lease_duration_of(&lease.record);
                let left = expires.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    jittered
                } else {
                    jittered.min(left)
                }
            }
            _ => jittered,
        }
    }

    /// Leads from an acquisition whose request was sent at `acquired`.
    async fn lead(&self, shutdown: &CancellationToken, acquired: Instant) -> RunEnd {
        let cfg = &self.inner.config;
        let name = &self.inner.name;
        let token = CancellationToken::new();
        let work = tokio::spawn((self.inner.callbacks.started)(token.clone()));
        let mut valid_until = acquired + cfg.renew_deadline;
        let mut next = Instant::now() + cfg.retry_period;
        let end = loop {
            tokio::select! {
                biased;
                _ = shutdown.cancelled() => break RunEnd::ShutDown,
                _ = sleep_until(next.min(valid_until)) => {}
            }
            if Instant::now() >= valid_until {
                tracing::warn!(lock = %name, "failed to renew the lease within the renew deadline");
                break RunEnd::LeadershipLost;
            }
            let sent = Instant::now();
            let result = tokio::select! {
                biased;
                _ = shutdown.cancelled() => break RunEnd::ShutDown,
                r = timeout_at(valid_until, self.try_acquire_or_renew()) => r,
            };
            match result {
                Ok(Ok(Attempt::Held)) => {
                    valid_until = sent + cfg.renew_deadline;
                    next = Instant::now() + cfg.retry_period;
                }
                Ok(Ok(Attempt::HeldBy(holder))) => {
                    tracing::warn!(lock = %name, %holder, "the lease is held by another candidate");
                    break RunEnd::LeadershipLost;
                }
                Ok(Err(e)) => {
                    tracing::warn!(lock = %name, "error renewing the lease: {e}");
                    next = Instant::now() + cfg.retry_period;
                }
                Err(_) => {
                    tracing::warn!(lock = %name, "renewing the lease timed out at the renew deadline");
                    break RunEnd::LeadershipLost;
                }
            }
        };
        token.cancel();
        if let Err(e) = work.await {
            tracing::error!(lock = %name, "the leading task failed: {e}");
        }
        if end == RunEnd::ShutDown && cfg.release_on_cancel {
            match timeout(cfg.renew_deadline, self.release()).await {
                Ok(Ok(())) => tracing::info!(lock = %name, "released the lease"),
                Ok(Err(e)) => tracing::warn!(lock = %name, "failed to release the lease: {e}"),
                Err(_) => tracing::warn!(lock = %name, "releasing the lease timed out"),
            }
        }
        end
    }

    /// client-go's `tryAcquireOrRenew`: one attempt to write this candidate into the record.
    async fn try_acquire_or_renew(&self) -> Result<Attempt, Error> {
        let (cfg, lock) = (&self.inner.config, &self.inner.lock);
        let sent = Instant::now();
        let wall = SystemTime::now();
        let mut desired = LeaderElectionRecord {
            holder_identity: cfg.identity.clone(),
            lease_duration_seconds: whole_seconds(cfg.lease_duration),
            acquire_time: Some(wall),
            renew_time: Some(wall),
            leader_transitions: 0,
        };
        // The leader renews from the Lease it last wrote, without reading it first.
        if let Some(own) = self.own_valid_lease(sent) {
            desired.acquire_time = own.record.acquire_time;
            desired.leader_transitions = own.record.leader_transitions;
            let update = Lease {
                resource_version: own.resource_version,
                record: desired.clone(),
            };
            match lock.update(&update).await {
                Ok(written) => {
                    self.observe(written, sent);
                    return Ok(Attempt::Held);
                }
                Err(e) => {
                    tracing::debug!(lock = %self.inner.name, "renewing from the cached lease failed, reading it: {e}")
                }
            }
        }
        let Some(current) = lock.get().await? else {
            let created = lock.create(&desired).await?;
            self.observe(created, sent);
            return Ok(Attempt::Held);
        };
        self.observe(current.clone(), Instant::now());
        let old = &current.record;
        if !old.holder_identity.is_empty()
            && old.holder_identity != cfg.identity
            && self.observed_valid(Instant::now())
        {
            return Ok(Attempt::HeldBy(old.holder_identity.clone()));
        }
        if old.holder_identity == cfg.identity {
            desired.acquire_time = old.acquire_time;
            desired.leader_transitions = old.leader_transitions;
        } else {
            desired.leader_transitions = old.leader_transitions.saturating_add(1);
        }
        let update = Lease {
            resource_version: current.resource_version,
            record: desired,
        };
        let written = lock.update(&update).await?;
        self.observe(written, sent);
        Ok(Attempt::Held)
    }

    /// client-go's `release`: writes an empty holder with a one-second lease, conditional on
    /// the Lease this leader last wrote. A conflict means a renewal abandoned at shutdown may
    /// still have landed: the Lease is read again and released if it still names us.
    async fn release(&self) -> Result<(), Error> {
        let own = {
            let s = self.inner.state.lock();
            match &s.lease {
                Some(l) if l.record.holder_identity == self.inner.config.identity => l.clone(),
                _ => return Ok(()),
            }
        };
        let transitions = own.record.leader_transitions;
        match self.write_release(own.resource_version, transitions).await {
            Err(e) if e.is_conflict() => {
                let Some(current) = self.inner.lock.get().await? else {
                    return Ok(());
                };
                let ours = current.record.holder_identity == self.inner.config.identity;
                let rv = current.resource_version.clone();
                self.observe(current, Instant::now());
                match ours {
                    true => self.write_release(rv, transitions).await,
                    false => Ok(()),
                }
            }
            other => other,
        }
    }

    async fn write_release(&self, resource_version: String, transitions: u32) -> Result<(), Error> {
        let wall = SystemTime::now();
        let released = Lease {
            resource_version,
            record: LeaderElectionRecord {
                holder_identity: String::new(),
                lease_duration_seconds: 1,
                acquire_time: Some(wall),
                renew_time: Some(wall),
                leader_transitions: transitions,
            },
        };
        let written = self.inner.lock.update(&released).await?;
        self.observe(written, Instant::now());
        Ok(())
    }

    /// Records a read or written Lease; its wait restarts at `at` when it changed.
    fn observe(&self, lease: Lease, at: Instant) {
        let report = {
            let mut s = self.inner.state.lock();
            if s.lease.as_ref() != Some(&lease) {
                s.since = Some(at);
            }
            let holder = lease.record.holder_identity.clone();
            s.lease = Some(lease);
            let new = !holder.is_empty() && s.reported.as_deref() != Some(holder.as_str());
            if new {
                s.reported = Some(holder.clone());
            }
            new.then_some(holder)
        };
        if let (Some(holder), Some(f)) = (report, &self.inner.callbacks.new_leader) {
            tracing::info!(lock = %self.inner.name, %holder, "new leader elected");
            f(&holder);
        }
    }

    /// The longer of our lease duration and the one the record announces.
    fn lease_duration_of(&self, record: &LeaderElectionRecord) -> Duration {
        self.inner
            .config
            .lease_duration
            .max(record.lease_duration())
    }

    /// Whether the observed lease has not expired at `now` on our clock.
    fn observed_valid(&self, now: Instant) -> bool {
        let s = self.inner.state.lock();
        match (&s.lease, s.since) {
            (Some(l), Some(since)) => since + self.lease_duration_of(&l.record) > now,
            _ => false,
        }
    }

    /// The Lease, when we wrote it last and it has not expired on our clock.
    fn own_valid_lease(&self, now: Instant) -> Option<Lease> {
        let lease = {
            let s = self.inner.state.lock();
            s.lease
                .clone()
                .filter(|l| l.record.holder_identity == self.inner.config.identity)?
        };
        self.observed_valid(now).then_some(lease)
    }
}
