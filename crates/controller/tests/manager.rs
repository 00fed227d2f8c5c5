//! The Manager's lifecycle on paused tokio time, with the in-memory Lease: which runnables
//! start when, what stops them, and what `run_until` returns.

use std::time::{Duration, SystemTime};

use kcache_controller::{BoxFuture, Manager, ManagerError, Runnable};
use kcache_core::BoxError;
use kcache_leaderelection::memory::MemoryLease;
use kcache_leaderelection::{LeaderElectionConfig, LeaderElectionRecord};
use tokio::sync::mpsc;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::helpers::unreachable_client;

const LEASE: Duration = Duration::from_secs(15);
const RENEW: Duration = Duration::from_secs(10);

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Seen {
    Started,
    Stopped,
}

#[derive(Debug, Clone, Copy)]
pub enum Behaviour {
    /// Runs until told to stop.
    Serve,
    /// Returns an error at once.
    Fail,
    /// Panics at once.
    Panic,
    /// Never stops.
    Hang,
}

/// A runnable reporting its start and stop on a channel.
pub struct Probe {
    pub name: &'static str,
    pub leader: bool,
    pub behaviour: Behaviour,
    pub tx: mpsc::UnboundedSender<(&'static str, Seen)>,
}

impl Probe {
    pub fn new(
        name: &'static str,
        leader: bool,
        tx: &mpsc::UnboundedSender<(&'static str, Seen)>,
    ) -> Self {
        Probe {
            name,
            leader,
            behaviour: Behaviour::Serve,
            tx: tx.clone(),
        }
    }

    fn behaving(mut self, behaviour: Behaviour) -> Self {
        self.behaviour = behaviour;
        self
    }
}

impl Runnable for Probe {
    fn name(&self) -> &str {
        self.name
    }
    fn needs_leader_election(&self) -> bool {
        self.leader
    }
    fn start(self: Box<Self>, shutdown: CancellationToken) -> BoxFuture<Result<(), BoxError>> {
        Box::pin(async move {
            let _ = self.tx.send((self.name, Seen::Started));
            match self.behaviour {
                Behaviour::Serve => shutdown.cancelled().await,
                Behaviour::Fail => return Err("boom".into()),
                Behaviour::Panic => panic!("oops"),
                Behaviour::Hang => std::future::pending().await,
            }
            let _ = self.tx.send((self.name, Seen::Stopped));
            Ok(())
        })
    }
}

fn config(id: &str) -> LeaderElectionConfig {
    let mut c = LeaderElectionConfig::new(id);
    c.lease_duration = LEASE;
    c.renew_deadline = RENEW;
    c.retry_period = Duration::from_secs(2);
    c
}

fn held_by(lease: &MemoryLease, holder: &str) {
    lease.put(LeaderElectionRecord {
        holder_identity: holder.into(),
        lease_duration_seconds: 15,
        acquire_time: Some(SystemTime::now()),
        renew_time: Some(SystemTime::now()),
        leader_transitions: 0,
    });
}

#[tokio::test(start_paused = true)]
async fn names_are_unique_and_non_empty() {
    let (tx, _rx) = mpsc::unbounded_channel();
    let mut m = Manager::builder(unreachable_client()).build().unwrap();
    m.add(Probe::new("a", true, &tx)).unwrap();
    assert!(
        matches!(m.add(Probe::new("a", false, &tx)), Err(ManagerError::DuplicateName(n)) if n == "a")
    );
    assert!(matches!(
        m.add(Probe::new("", false, &tx)),
        Err(ManagerError::EmptyName)
    ));
    let mut bad = config("x");
    bad.renew_deadline = LEASE;
    let err = Manager::builder(unreachable_client())
        .leader_election_with(MemoryLease::new("l").client(), bad)
        .build()
        .unwrap_err();
    assert!(
        matches!(err, ManagerError::LeaderElection(ref e) if e.field == "lease_duration"),
        "{err:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn without_leader_election_everything_starts_and_stops_on_shutdown() {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let mut m = Manager::builder(unreachable_client()).build().unwrap();
    m.add(Probe::new("ctl", true, &tx)).unwrap();
    m.add(Probe::new("web", false, &tx)).unwrap();
    let elected = m.elected();
    let shutdown = CancellationToken::new();
    let run = tokio::spawn(m.run_until(shutdown.clone()));
    let mut started = vec![rx.recv().await.unwrap(), rx.recv().await.unwrap()];
    started.sort();
    assert_eq!(started, [("ctl", Seen::Started), ("web", Seen::Started)]);
    assert!(*elected.borrow(), "no election: elected at once");
    shutdown.cancel();
    run.await.unwrap().unwrap();
    let mut stopped = vec![rx.recv().await.unwrap(), rx.recv().await.unwrap()];
    stopped.sort();
    assert_eq!(stopped, [("ctl", Seen::Stopped), ("web", Seen::Stopped)]);
}

#[tokio::test(start_paused = true)]
async fn a_failing_or_panicking_runnable_stops_the_manager() {
    for behaviour in [Behaviour::Fail, Behaviour::Panic] {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let mut m = Manager::builder(unreachable_client()).build().unwrap();
        m.add(Probe::new("ok", false, &tx)).unwrap();
        m.add(Probe::new("bad", false, &tx).behaving(behaviour))
            .unwrap();
        let err = m.run_until(CancellationToken::new()).await.unwrap_err();
        match err {
            ManagerError::Runnable { name, source } => {
                assert_eq!(name, "bad");
                let expected = match behaviour {
                    Behaviour::Fail => "boom",
                    _ => "panicked: oops",
                };
                assert_eq!(source.to_string(), expected);
            }
            other => panic!("{other:?}"),
        }
        let mut seen = Vec::new();
        while let Ok(s) = rx.try_recv() {
            seen.push(s);
        }
        assert!(seen.contains(&("ok", Seen::Stopped)), "{seen:?}");
    }
}

#[tokio::test(start_paused = true)]
async fn the_graceful_shutdown_timeout_bounds_the_stop() {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let mut m = Manager::builder(unreachable_client())
        .graceful_shutdown_timeout(Duration::from_secs(5))
        .build()
        .unwrap();
    m.add(Probe::new("polite", false, &tx)).unwrap();
    m.add(Probe::new("stuck", false, &tx).behaving(Behaviour::Hang))
        .unwrap();
    let shutdown = CancellationToken::new();
    let run = tokio::spawn(m.run_until(shutdown.clone()));
    rx.recv().await.unwrap();
    rx.recv().await.unwrap();
    let asked = Instant::now();
    shutdown.cancel();
    let err = run.await.unwrap().unwrap_err();
    assert_eq!(asked.elapsed(), Duration::from_secs(5));
    match err {
        ManagerError::ShutdownTimeout { timeout, pending } => {
            assert_eq!(timeout, Duration::from_secs(5));
            assert_eq!(pending, ["stuck"]);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(rx.recv().await, Some(("polite", Seen::Stopped)));
}

#[tokio::test(start_paused = true)]
async fn leader_runnables_wait_for_the_lease_and_stop_when_it_is_lost() {
    let lease = MemoryLease::new("kube-system/ctl");
    held_by(&lease, "other");
    let lock = lease.client();
    let (tx, mut rx) = mpsc::unbounded_channel();
    let mut m = Manager::builder(unreachable_client())
        .leader_election_with(lock.clone(), config("me"))
        .build()
        .unwrap();
    m.add(Probe::new("ctl", true, &tx)).unwrap();
    m.add(Probe::new("web", false, &tx)).unwrap();
    #[cfg(feature = "prometheus")]
    let registry = m.registry().clone();
    // The `leader_election_master_status` line of /metrics, without the prometheus feature none.
    let leader_status = move || -> Option<String> {
        #[cfg(feature = "prometheus")]
        {
            let text = prometheus::TextEncoder::new()
                .encode_to_string(&registry.gather())
                .unwrap();
            text.lines()
                .find(|l| l.starts_with("leader_election_master_status{"))
                .map(str::to_string)
        }
        #[cfg(not(feature = "prometheus"))]
        None
    };
    let mut elected = m.elected();
    let begin = Instant::now();
    let run = tokio::spawn(m.run_until(CancellationToken::new()));

    assert_eq!(rx.recv().await, Some(("web", Seen::Started)));
    assert_eq!(begin.elapsed(), Duration::ZERO, "not waiting for the lease");
    assert_eq!(rx.recv().await, Some(("ctl", Seen::Started)));
    assert!(
        begin.elapsed() >= LEASE,
        "started after the other holder's lease expired: {:?}",
        begin.elapsed()
    );
    assert!(*elected.borrow_and_update());
    assert_eq!(lease.get().unwrap().record.holder_identity, "me");
    if cfg!(feature = "prometheus") {
        let line = r#"leader_election_master_status{name="kube-system/ctl"} 1"#;
        assert_eq!(leader_status().as_deref(), Some(line));
    }

    // Renewals fail from now on: at the renew deadline the term ends.
    let cut = Instant::now();
    lock.set_cut(true);
    assert_eq!(rx.recv().await, Some(("ctl", Seen::Stopped)));
    assert!(
        cut.elapsed() <= RENEW,
        "stopped within the renew deadline: {:?}",
        cut.elapsed()
    );
    let err = run.await.unwrap().unwrap_err();
    assert!(matches!(err, ManagerError::LeaderElectionLost), "{err:?}");
    assert_eq!(
        rx.recv().await,
        Some(("web", Seen::Stopped)),
        "the manager stopped too"
    );
    assert!(!*elected.borrow_and_update());
}

#[tokio::test(start_paused = true)]
async fn two_managers_one_lease_one_leader_at_a_time() {
    let lease = MemoryLease::new("kube-system/ctl");
    let (tx, mut rx) = mpsc::unbounded_channel();
    let manager = |id: &str, name: &'static str| {
        let mut c = config(id);
        c.release_on_cancel = true;
        let mut m = Manager::builder(unreachable_client())
            .leader_election_with(lease.client(), c)
            .build()
            .unwrap();
        m.add(Probe::new(name, true, &tx)).unwrap();
        m
    };
    let (a, b) = (manager("a", "ctl-a"), manager("b", "ctl-b"));
    let (stop_a, stop_b) = (CancellationToken::new(), CancellationToken::new());
    let run_a = tokio::spawn(a.run_until(stop_a.clone()));
    assert_eq!(rx.recv().await, Some(("ctl-a", Seen::Started)));
    let run_b = tokio::spawn(b.run_until(stop_b.clone()));
    // b campaigns for a while: a renews, so b never starts.
    tokio::time::sleep(LEASE * 3).await;
    assert!(rx.try_recv().is_err(), "b must not lead while a does");

    // a shuts down and releases the lease: b takes over within a retry period or so.
    stop_a.cancel();
    assert_eq!(rx.recv().await, Some(("ctl-a", Seen::Stopped)));
    run_a.await.unwrap().unwrap();
    let released = Instant::now();
    assert_eq!(rx.recv().await, Some(("ctl-b", Seen::Started)));
    assert!(
        released.elapsed() < LEASE,
        "released, not expired: {:?}",
        released.elapsed()
    );
    stop_b.cancel();
    run_b.await.unwrap().unwrap();
}
