//! The elector's timing rules on paused tokio time, against the in-memory Lease with fault
//! injection (client-go's `leaderelection_test.go` cases, plus the two-leader safety rules).

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use kcache_core::Status;
use kcache_leaderelection::memory::{MemoryLease, MemoryLeaseClient};
use kcache_leaderelection::{
    CancellationToken, HealthzAdaptor, LeaderCallbacks, LeaderElectionConfig, LeaderElectionRecord,
    LeaderElector, RunEnd,
};
use parking_lot::Mutex;
use tokio::task::JoinHandle;
use tokio::time::{sleep, Instant};

const LEASE: Duration = Duration::from_secs(15);
const RENEW: Duration = Duration::from_secs(10);
const RETRY: Duration = Duration::from_secs(2);

/// One term: identity, started, stopped (on the shared paused clock).
type Term = (String, Instant, Option<Instant>);

/// Who led when.
#[derive(Clone, Default)]
struct Timeline(Arc<Mutex<Vec<Term>>>);

impl Timeline {
    fn callbacks(&self, id: &str) -> LeaderCallbacks {
        let (timeline, id) = (self.clone(), id.to_string());
        LeaderCallbacks::new(move |lost: CancellationToken| {
            let (timeline, id) = (timeline.clone(), id.clone());
            async move {
                let i = {
                    let mut t = timeline.0.lock();
                    t.push((id, Instant::now(), None));
                    t.len() - 1
                };
                lost.cancelled().await;
                timeline.0.lock()[i].2 = Some(Instant::now());
            }
        })
    }

    fn terms(&self) -> Vec<Term> {
        self.0.lock().clone()
    }

    fn leaders(&self) -> Vec<String> {
        self.terms().into_iter().map(|t| t.0).collect()
    }

    /// No two terms overlap.
    fn assert_one_at_a_time(&self) {
        let mut terms = self.terms();
        terms.sort_by_key(|t| t.1);
        for w in terms.windows(2) {
            let end = w[0].2.expect("an earlier term ended");
            assert!(
                end <= w[1].1,
                "{} still led when {} started",
                w[0].0,
                w[1].0
            );
        }
    }
}

fn config(id: &str) -> LeaderElectionConfig {
    let mut c = LeaderElectionConfig::new(id);
    c.lease_duration = LEASE;
    c.renew_deadline = RENEW;
    c.retry_period = RETRY;
    c
}

fn candidate(
    lease: &MemoryLease,
    id: &str,
    timeline: &Timeline,
) -> (LeaderElector<MemoryLeaseClient>, MemoryLeaseClient) {
    let client = lease.client();
    let elector = LeaderElector::new(client.clone(), config(id), timeline.callbacks(id)).unwrap();
    (elector, client)
}

fn spawn(
    elector: &LeaderElector<MemoryLeaseClient>,
    shutdown: &CancellationToken,
) -> JoinHandle<RunEnd> {
    let (e, s) = (elector.clone(), shutdown.clone());
    tokio::spawn(async move { e.run(s).await })
}

/// Lets every runnable task run at the current instant.
async fn settle() {
    for _ in 0..20 {
        tokio::task::yield_now().await;
    }
}

async fn wait_until(mut f: impl FnMut() -> bool, within: Duration) {
    let deadline = Instant::now() + within;
    while !f() {
        assert!(
            Instant::now() < deadline,
            "condition not met within {within:?}"
        );
        sleep(Duration::from_millis(10)).await;
    }
}

fn holder(lease: &MemoryLease) -> String {
    lease
        .get()
        .map(|l| l.record.holder_identity)
        .unwrap_or_default()
}

#[tokio::test(start_paused = true)]
async fn acquires_an_absent_lease_and_renews_every_retry_period() {
    let lease = MemoryLease::new("default/test");
    let timeline = Timeline::default();
    let (a, client) = candidate(&lease, "a", &timeline);
    let shutdown = CancellationToken::new();
    let run = spawn(&a, &shutdown);
    settle().await;
    let first = lease.get().expect("created");
    assert_eq!(first.record.holder_identity, "a");
    assert_eq!(first.record.lease_duration_seconds, 15);
    assert_eq!(first.record.leader_transitions, 0);
    assert!(a.is_leader());
    assert_eq!(timeline.leaders(), ["a"]);
    let before = client.requests();
    sleep(RETRY * 5 + Duration::from_millis(1)).await;
    settle().await;
    // One update per retry period: the leader renews from the Lease it wrote, without a GET.
    assert_eq!(client.requests() - before, 5);
    let now = lease.get().unwrap();
    assert_eq!(now.record.acquire_time, first.record.acquire_time);
    assert_eq!(now.record.leader_transitions, 0);
    shutdown.cancel();
    assert_eq!(run.await.unwrap(), RunEnd::ShutDown);
    // Without release_on_cancel, the lock stays with `a` until it expires.
    assert_eq!(holder(&lease), "a");
}

#[tokio::test(start_paused = true)]
async fn a_candidate_waits_a_lease_duration_on_its_own_clock_not_the_record_timestamps() {
    let lease = MemoryLease::new("default/test");
    // The record claims a renewal in 1970: it must not count as expired.
    lease.put(LeaderElectionRecord {
        holder_identity: "old".into(),
        lease_duration_seconds: 15,
        renew_time: Some(SystemTime::UNIX_EPOCH),
        acquire_time: Some(SystemTime::UNIX_EPOCH),
        leader_transitions: 4,
    });
    let timeline = Timeline::default();
    let (b, _) = candidate(&lease, "b", &timeline);
    let shutdown = CancellationToken::new();
    let start = Instant::now();
    let _run = spawn(&b, &shutdown);
    settle().await;
    assert_eq!(b.get_leader().as_deref(), Some("old"));
    // The old holder renews for 30 s (a new record each time): b keeps waiting.
    for _ in 0..15 {
        sleep(RETRY).await;
        let mut r = lease.get().unwrap().record;
        r.renew_time = Some(SystemTime::UNIX_EPOCH);
        lease.put(r);
        settle().await;
        assert!(timeline.terms().is_empty(), "b acquired a renewed lease");
    }
    let last_change = Instant::now();
    // The holder stops; b sees the last change at most one jittered retry later and acquires
    // once that has not changed for 15 s on its clock.
    wait_until(|| !timeline.terms().is_empty(), LEASE + RETRY * 3).await;
    let started = timeline.terms()[0].1;
    assert!(
        started >= last_change + LEASE,
        "acquired {:?} after the last change",
        started - last_change
    );
    assert!(started <= last_change + LEASE + RETRY.mul_f64(2.2) + Duration::from_millis(1));
    let record = lease.get().unwrap().record;
    assert_eq!(record.holder_identity, "b");
    assert_eq!(record.leader_transitions, 5);
    assert!(start < started);
    shutdown.cancel();
}

#[tokio::test(start_paused = true)]
async fn a_leader_cut_off_stops_before_another_may_act() {
    let lease = MemoryLease::new("default/test");
    let timeline = Timeline::default();
    let (a, a_client) = candidate(&lease, "a", &timeline);
    let shutdown = CancellationToken::new();
    let a_run = spawn(&a, &shutdown);
    settle().await;
    let (b, _) = candidate(&lease, "b", &timeline);
    let _b_run = spawn(&b, &shutdown);
    sleep(RETRY * 3 + Duration::from_millis(300)).await;
    settle().await;
    let last_renewal = lease.get().unwrap();
    let cut_at = Instant::now();
    a_client.set_cut(true);
    wait_until(|| timeline.terms().len() == 2, LEASE * 2).await;
    assert_eq!(a_run.await.unwrap(), RunEnd::LeadershipLost);
    let terms = timeline.terms();
    let (a_end, b_start) = (terms[0].2.unwrap(), terms[1].1);
    assert_eq!(terms[1].0, "b");
    // a gives up within the renew deadline of its last successful renewal (sent before the
    // cut), b acts no sooner than a lease duration after it saw that renewal.
    assert!(
        a_end <= cut_at + RENEW,
        "a stopped {:?} after the cut",
        a_end - cut_at
    );
    assert!(
        b_start - a_end >= LEASE - RENEW - RETRY,
        "margin {:?}",
        b_start - a_end
    );
    assert!(b_start <= cut_at + LEASE + RETRY.mul_f64(2.2) + Duration::from_millis(1));
    timeline.assert_one_at_a_time();
    let now = lease.get().unwrap();
    assert_ne!(now.resource_version, last_renewal.resource_version);
    assert_eq!(now.record.leader_transitions, 1);
    shutdown.cancel();
}

#[tokio::test(start_paused = true)]
async fn renew_errors_are_retried_until_the_renew_deadline() {
    let lease = MemoryLease::new("default/test");
    let timeline = Timeline::default();
    let (a, client) = candidate(&lease, "a", &timeline);
    let shutdown = CancellationToken::new();
    let run = spawn(&a, &shutdown);
    settle().await;
    // Four failed attempts (8 s of 500s, 429s and lost responses) stay under the deadline.
    client.fail_next([
        Status::failure(500, "InternalError", "injected"),
        Status::failure(429, "TooManyRequests", "injected"),
        Status::failure(500, "InternalError", "injected"),
    ]);
    client.lose_next_responses(1);
    sleep(RETRY * 6).await;
    settle().await;
    assert!(!run.is_finished());
    assert_eq!(timeline.terms()[0].2, None, "a gave up within the deadline");
    assert_eq!(holder(&lease), "a");
    // Now every request hangs: the attempt in flight is abandoned at the deadline.
    let last_ok = Instant::now();
    client.set_latency(Duration::from_secs(3600));
    wait_until(|| run.is_finished(), RENEW + RETRY).await;
    let end = timeline.terms()[0].2.unwrap();
    assert!(
        end <= last_ok + RENEW,
        "stopped {:?} after the last renewal",
        end - last_ok
    );
    assert!(end > last_ok + RENEW - RETRY - Duration::from_millis(1));
    assert_eq!(run.await.unwrap(), RunEnd::LeadershipLost);
    shutdown.cancel();
}

#[tokio::test(start_paused = true)]
async fn racing_candidates_conflict_and_one_wins() {
    let lease = MemoryLease::new("default/test");
    let timeline = Timeline::default();
    let shutdown = CancellationToken::new();
    let mut clients = Vec::new();
    for id in ["a", "b", "c"] {
        let (e, c) = candidate(&lease, id, &timeline);
        c.set_latency(Duration::from_millis(5));
        spawn(&e, &shutdown);
        clients.push(c);
    }
    // All three race to create; then the lease expires under an absent holder and they race
    // to update the same resourceVersion.
    sleep(Duration::from_secs(1)).await;
    settle().await;
    assert_eq!(timeline.terms().len(), 1, "exactly one won the create");
    let first = timeline.leaders()[0].clone();
    let i = ["a", "b", "c"].iter().position(|id| *id == first).unwrap();
    clients[i].set_cut(true);
    for _ in 0..60 {
        sleep(Duration::from_millis(500)).await;
        settle().await;
    }
    assert_eq!(timeline.terms().len(), 2, "exactly one took over");
    timeline.assert_one_at_a_time();
    assert_ne!(timeline.leaders()[1], first);
    shutdown.cancel();
}

#[tokio::test(start_paused = true)]
async fn release_on_cancel_hands_over_within_a_retry_period() {
    let lease = MemoryLease::new("default/test");
    let timeline = Timeline::default();
    let client = lease.client();
    let mut cfg = config("a");
    cfg.release_on_cancel = true;
    let finished_before_release = Arc::new(Mutex::new(None));
    let seen = (finished_before_release.clone(), lease.clone());
    let a = LeaderElector::new(
        client,
        cfg,
        LeaderCallbacks::new(move |lost: CancellationToken| {
            let (flag, lease) = seen.clone();
            async move {
                lost.cancelled().await;
                sleep(Duration::from_millis(700)).await; // the work winds down
                *flag.lock() = Some(holder(&lease) == "a");
            }
        }),
    )
    .unwrap();
    let a_shutdown = CancellationToken::new();
    let a_run = spawn(&a, &a_shutdown);
    settle().await;
    let (b, _) = candidate(&lease, "b", &timeline);
    let b_shutdown = CancellationToken::new();
    let _b_run = spawn(&b, &b_shutdown);
    sleep(RETRY * 3).await;
    settle().await;
    let transitions = lease.get().unwrap().record.leader_transitions;
    let stop = Instant::now();
    a_shutdown.cancel();
    assert_eq!(a_run.await.unwrap(), RunEnd::ShutDown);
    assert_eq!(
        *finished_before_release.lock(),
        Some(true),
        "released only after the work ended"
    );
    // What `a` wrote last: the release.
    let released = a.observed_record().unwrap();
    assert_eq!(released.holder_identity, "");
    assert_eq!(released.lease_duration_seconds, 1);
    assert_eq!(released.leader_transitions, transitions);
    wait_until(|| !timeline.terms().is_empty(), RETRY * 3).await;
    assert!(timeline.terms()[0].1 - stop <= Duration::from_millis(700) + RETRY.mul_f64(2.2));
    assert_eq!(holder(&lease), "b");
    assert_eq!(
        lease.get().unwrap().record.leader_transitions,
        transitions + 1
    );
    b_shutdown.cancel();
}

#[tokio::test(start_paused = true)]
async fn release_after_an_abandoned_renewal_reads_the_lease_again() {
    let lease = MemoryLease::new("default/test");
    let timeline = Timeline::default();
    let client = lease.client();
    let mut cfg = config("a");
    cfg.release_on_cancel = true;
    let a = LeaderElector::new(client.clone(), cfg, timeline.callbacks("a")).unwrap();
    let shutdown = CancellationToken::new();
    let run = spawn(&a, &shutdown);
    settle().await;
    // Each request now takes 1 s to arrive and 1 s to answer: shut down after the next
    // renewal has been applied but before its answer came back.
    let before = lease.get().unwrap();
    client.set_latency(Duration::from_secs(1));
    sleep(RETRY + Duration::from_millis(1500)).await;
    let renewed = lease.get().unwrap();
    assert_eq!(renewed.record.holder_identity, "a");
    assert_ne!(
        renewed.resource_version, before.resource_version,
        "the renewal landed"
    );
    shutdown.cancel();
    assert_eq!(run.await.unwrap(), RunEnd::ShutDown);
    let released = lease.get().unwrap().record;
    assert_eq!(
        released.holder_identity, "",
        "released despite the conflict"
    );
    assert_eq!(released.lease_duration_seconds, 1);
}

#[tokio::test(start_paused = true)]
async fn health_check_fails_past_lease_duration_plus_tolerance() {
    let lease = MemoryLease::new("default/test");
    let timeline = Timeline::default();
    let healthz = HealthzAdaptor::new(Duration::from_secs(5));
    assert!(
        healthz.check().is_ok(),
        "healthy before the elector is attached"
    );
    let (a, client) = candidate(&lease, "a", &timeline);
    healthz.set_leader_election(&a);
    assert_eq!(healthz.name(), "leaderElection");
    let shutdown = CancellationToken::new();
    let run = spawn(&a, &shutdown);
    settle().await;
    sleep(RETRY * 2).await;
    settle().await;
    assert!(healthz.check().is_ok());
    let last = Instant::now();
    client.set_cut(true);
    sleep(LEASE + Duration::from_secs(5) - Duration::from_millis(100)).await;
    assert!(
        healthz.check().is_ok(),
        "within lease + tolerance of {:?}",
        last.elapsed()
    );
    sleep(Duration::from_millis(200)).await;
    let err = healthz.check().unwrap_err();
    assert!(err.to_string().contains("default/test"), "{err}");
    assert_eq!(run.await.unwrap(), RunEnd::LeadershipLost);
    // Another holder observed: no longer the leader, healthy again.
    let (b, _) = candidate(&lease, "b", &timeline);
    let _b = spawn(&b, &shutdown);
    wait_until(|| timeline.terms().len() == 2, LEASE * 2).await;
    // `a` campaigns again once it can reach the Lease, and sees `b` hold it.
    client.set_cut(false);
    let _a = spawn(&a, &shutdown);
    wait_until(|| a.get_leader().as_deref() == Some("b"), RETRY * 3).await;
    assert!(healthz.check().is_ok());
    shutdown.cancel();
}

#[tokio::test(start_paused = true)]
async fn new_leaders_are_reported_once_each() {
    let lease = MemoryLease::new("default/test");
    let timeline = Timeline::default();
    let seen = Arc::new(Mutex::new(Vec::<String>::new()));
    let record = seen.clone();
    let client = lease.client();
    let b = LeaderElector::new(
        client,
        config("b"),
        timeline
            .callbacks("b")
            .on_new_leader(move |id| record.lock().push(id.to_string())),
    )
    .unwrap();
    let (a, a_client) = candidate(&lease, "a", &timeline);
    let shutdown = CancellationToken::new();
    spawn(&a, &shutdown);
    settle().await;
    spawn(&b, &shutdown);
    sleep(RETRY * 4).await;
    settle().await;
    a_client.set_cut(true);
    wait_until(|| timeline.terms().len() == 2, LEASE * 2).await;
    assert_eq!(*seen.lock(), ["a", "b"]);
    shutdown.cancel();
}

#[tokio::test(start_paused = true)]
async fn shutdown_before_acquiring_ends_without_leading() {
    let lease = MemoryLease::new("default/test");
    lease.put(LeaderElectionRecord {
        holder_identity: "other".into(),
        lease_duration_seconds: 15,
        ..Default::default()
    });
    let timeline = Timeline::default();
    let stopped = Arc::new(Mutex::new(0));
    let count = stopped.clone();
    let a = LeaderElector::new(
        lease.client(),
        config("a"),
        timeline
            .callbacks("a")
            .on_stopped_leading(move || *count.lock() += 1),
    )
    .unwrap();
    let shutdown = CancellationToken::new();
    let run = spawn(&a, &shutdown);
    sleep(RETRY * 3).await;
    shutdown.cancel();
    assert_eq!(run.await.unwrap(), RunEnd::NotLeading);
    assert!(timeline.terms().is_empty());
    assert_eq!(*stopped.lock(), 0);
    assert_eq!(holder(&lease), "other");
}

#[test]
fn invalid_configs_are_refused_naming_the_field() {
    let lease = MemoryLease::new("default/test");
    let mut cfg = config("a");
    cfg.renew_deadline = LEASE;
    let err =
        LeaderElector::new(lease.client(), cfg, LeaderCallbacks::new(|_| async {})).unwrap_err();
    assert_eq!(err.field, "lease_duration");
}
