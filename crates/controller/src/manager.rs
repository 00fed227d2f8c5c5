//! [`Manager`]: runs controllers and other [`Runnable`]s on one client and one informer
//! factory, with leader election, signal handling, health probes and metrics
//! (controller-runtime's `pkg/manager`).
//!
//! The order of a run:
//!
//! 1. the HTTP server (if an address is configured) answers `/healthz` at once;
//! 2. runnables that do not need leader election start;
//! 3. the factory's informers start — before the campaign, so a replica waiting for the lease
//!    keeps warm caches and a new leader reconciles without a cold list (controller-runtime's
//!    warm-up);
//! 4. the elector campaigns; while leading, the runnables that need it run. Without leader
//!    election they start at once.
//!
//! A shutdown (the token, a signal, a runnable's error, or lost leadership) stops every
//! runnable within the graceful-shutdown timeout (aborting the rest), then the informers, then
//! flushes the event recorders, then closes the HTTP server.

mod election;
mod group;
mod health;
mod http;
mod signals;

pub use signals::cancel_on_signal;

use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use kcache_core::BoxError;
use kcache_events::{BroadcasterOptions, EventBroadcaster, EventRecorder, EventsError};
use kcache_informer::{FactoryOptions, SharedInformerFactory};
use kcache_leaderelection::{
    ConfigError, HealthzAdaptor, LeaderElectionConfig, LeaseClient, LeaseLock, RunEnd,
};
use kcache_transport::Client;
use parking_lot::Mutex;
use tokio::sync::{mpsc, watch};
use tokio::time::{timeout_at, Instant};
use tokio_util::sync::CancellationToken;

pub use health::Check;

use crate::Runnable;
use election::{make_elector, Elect, MakeElector, Term};
use group::Group;
use health::Checks;

/// controller-runtime's default graceful-shutdown timeout.
pub const DEFAULT_GRACEFUL_SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(30);

/// How long a leader may go without renewing past its lease before `/healthz` fails
/// (client-go's examples use 20 s).
pub const DEFAULT_LEADER_ELECTION_HEALTH_TOLERANCE: Duration = Duration::from_secs(20);

/// Why building or running a [`Manager`] failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ManagerError {
    /// A runnable or health check with this name was already added (names are unique).
    #[error("a runnable or check named {0:?} was already added")]
    DuplicateName(String),
    /// A runnable or health check has an empty name.
    #[error("runnable and check names must not be empty")]
    EmptyName,
    /// The leader election configuration breaks client-go's rules.
    #[error("invalid leader election configuration")]
    LeaderElection(#[source] ConfigError),
    /// The health/metrics address could not be bound.
    #[error("cannot listen on {addr}")]
    Bind {
        /// The configured address.
        addr: SocketAddr,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The SIGTERM/SIGINT handlers could not be installed.
    #[error("cannot install signal handlers")]
    Signals(#[source] std::io::Error),
    /// A runnable returned an error (or panicked): the manager stopped everything.
    #[error("runnable {name:?} failed")]
    Runnable {
        /// The runnable's name.
        name: String,
        /// Its error.
        #[source]
        source: BoxError,
    },
    /// This replica lost the leader lease: the leader runnables were stopped and so was the
    /// manager. Exit the process and let it restart as a candidate (controller-runtime exits).
    #[error("leader election lost")]
    LeaderElectionLost,
    /// The manager's own metrics could not be registered.
    #[error("cannot register the manager's metrics: {0}")]
    Metrics(String),
    /// Runnables still running when the graceful-shutdown timeout passed (they were aborted).
    #[error(
        "runnables {pending:?} did not stop within the graceful shutdown timeout of {timeout:?}"
    )]
    ShutdownTimeout {
        /// The timeout.
        timeout: Duration,
        /// Their names.
        pending: Vec<String>,
    },
}

/// Builds a [`Manager`] ([`Manager::builder`]).
pub struct ManagerBuilder {
    client: Client,
    factory: FactoryOptions,
    election: Option<Result<(MakeElector, String), ConfigError>>,
    health_tolerance: Duration,
    http_address: Option<SocketAddr>,
    grace: Duration,
    events: BroadcasterOptions,
}

impl std::fmt::Debug for ManagerBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ManagerBuilder")
            .field("leader_election", &self.election.is_some())
            .field("http_address", &self.http_address)
            .field("graceful_shutdown_timeout", &self.grace)
            .finish_non_exhaustive()
    }
}

impl ManagerBuilder {
    /// Options of the shared informer factory (namespace, selectors, resync, informer mode).
    pub fn factory_options(mut self, options: FactoryOptions) -> Self {
        self.factory = options;
        self
    }

    /// Elects a leader on the Lease `namespace/name` through the manager's client; runnables
    /// needing leader election run only while this replica holds it.
    pub fn leader_election(
        self,
        namespace: &str,
        name: &str,
        config: LeaderElectionConfig,
    ) -> Self {
        let lock = LeaseLock::new(self.client.clone(), namespace, name);
        self.leader_election_with(lock, config)
    }

    /// [`leader_election`](Self::leader_election) on any lock (kcache-leaderelection's in-memory
    /// Lease in tests, or your own `LeaseClient`).
    pub fn leader_election_with<L: LeaseClient>(
        mut self,
        lock: L,
        config: LeaderElectionConfig,
    ) -> Self {
        self.election = Some(make_elector(lock, config));
        self
    }

    /// How long past its lease a leader may go without renewing before `/healthz` fails
    /// (default [`DEFAULT_LEADER_ELECTION_HEALTH_TOLERANCE`]).
    pub fn leader_election_health_tolerance(mut self, tolerance: Duration) -> Self {
        self.health_tolerance = tolerance;
        self
    }

    /// Serves `/healthz`, `/readyz` and `/metrics` on `addr` (port 0 picks one; see
    /// [`Manager::http_local_addr`]). Off unless set.
    pub fn http_address(mut self, addr: SocketAddr) -> Self {
        self.http_address = Some(addr);
        self
    }

    /// How long runnables get to stop at shutdown before they are aborted (default 30 s).
    pub fn graceful_shutdown_timeout(mut self, timeout: Duration) -> Self {
        self.grace = timeout;
        self
    }

    /// Options of the event broadcaster behind [`Manager::event_recorder`].
    pub fn event_options(mut self, options: BroadcasterOptions) -> Self {
        self.events = options;
        self
    }

    /// The manager; fails on an invalid leader election configuration or an address that
    /// cannot be bound.
    pub fn build(self) -> Result<Manager, ManagerError> {
        let listener = match self.http_address {
            None => None,
            Some(addr) => {
                let bind = |source| ManagerError::Bind { addr, source };
                let l = std::net::TcpListener::bind(addr).map_err(bind)?;
                l.set_nonblocking(true).map_err(bind)?;
                Some(l)
            }
        };
        let (election, election_name) = match self.election.transpose() {
            Ok(Some((make, name))) => (Some(make), Some(name)),
            Ok(None) => (None, None),
            Err(e) => return Err(ManagerError::LeaderElection(e)),
        };
        #[cfg(feature = "prometheus")]
        let registry = prometheus::Registry::new();
        #[cfg(feature = "prometheus")]
        let leader_status = election_name
            .map(|name| leader_status_gauge(&registry, &name))
            .transpose()
            .map_err(|e| ManagerError::Metrics(e.to_string()))?;
        #[cfg(not(feature = "prometheus"))]
        let _ = election_name;
        let factory = Arc::new(SharedInformerFactory::new(
            self.client.clone(),
            self.factory,
        ));
        let health = HealthzAdaptor::new(self.health_tolerance);
        let (healthz, readyz) = (Checks::default(), Checks::default());
        let mut manager = Manager {
            client: self.client,
            factory: factory.clone(),
            names: BTreeSet::new(),
            runnables: Vec::new(),
            election,
            health: health.clone(),
            healthz,
            readyz,
            listener,
            grace: self.grace,
            events: OnceLock::new(),
            event_options: self.events,
            leading: watch::channel(false).0,
            #[cfg(feature = "prometheus")]
            registry,
            #[cfg(feature = "prometheus")]
            leader_status,
        };
        manager
            .healthz
            .add(health.name(), health::leader_election(health.clone()));
        manager
            .readyz
            .add("informers", health::informers_synced(factory));
        manager
            .readyz
            .add(health.name(), health::leader_election(health));
        Ok(manager)
    }
}

/// Runs controllers and other [`Runnable`]s sharing one [`Client`] and one
/// [`SharedInformerFactory`] (controller-runtime's `Manager`; see the module docs for the
/// order of a run).
pub struct Manager {
    client: Client,
    factory: Arc<SharedInformerFactory>,
    names: BTreeSet<String>,
    runnables: Vec<Box<dyn Runnable>>,
    election: Option<MakeElector>,
    health: HealthzAdaptor,
    healthz: Checks,
    readyz: Checks,
    listener: Option<std::net::TcpListener>,
    grace: Duration,
    events: OnceLock<EventBroadcaster>,
    event_options: BroadcasterOptions,
    leading: watch::Sender<bool>,
    #[cfg(feature = "prometheus")]
    registry: prometheus::Registry,
    #[cfg(feature = "prometheus")]
    leader_status: Option<prometheus::IntGauge>,
}

impl std::fmt::Debug for Manager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Manager")
            .field("runnables", &self.names)
            .field("leader_election", &self.election.is_some())
            .field("http_address", &self.http_local_addr())
            .finish_non_exhaustive()
    }
}

impl Manager {
    /// A builder for a manager over `client`.
    pub fn builder(client: Client) -> ManagerBuilder {
        ManagerBuilder {
            client,
            factory: FactoryOptions::default(),
            election: None,
            health_tolerance: DEFAULT_LEADER_ELECTION_HEALTH_TOLERANCE,
            http_address: None,
            grace: DEFAULT_GRACEFUL_SHUTDOWN_TIMEOUT,
            events: BroadcasterOptions::default(),
        }
    }

    /// The client every runnable shares.
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// The informer factory every runnable shares. Informers asked for before [`run`](Self::run)
    /// start before the leader campaign (warm caches on standby replicas).
    pub fn factory(&self) -> &Arc<SharedInformerFactory> {
        &self.factory
    }

    /// Adds a runnable; its name must be unique within the manager.
    pub fn add(&mut self, runnable: impl Runnable) -> Result<(), ManagerError> {
        self.add_boxed(Box::new(runnable))
    }

    /// [`add`](Self::add) for a boxed runnable.
    pub fn add_boxed(&mut self, runnable: Box<dyn Runnable>) -> Result<(), ManagerError> {
        self.claim(runnable.name())?;
        self.runnables.push(runnable);
        Ok(())
    }

    /// Adds a `/healthz` check (liveness). The leader election check is there already.
    pub fn add_healthz_check(&mut self, name: &str, check: Check) -> Result<(), ManagerError> {
        checked_add(&mut self.healthz, name, check)
    }

    /// Adds a `/readyz` check. The informers' sync and the leader election checks are there
    /// already.
    pub fn add_readyz_check(&mut self, name: &str, check: Check) -> Result<(), ManagerError> {
        checked_add(&mut self.readyz, name, check)
    }

    /// An event recorder reporting as `controller` (e.g. `foo-controller`), all writing through
    /// one broadcaster on the manager's client, flushed at shutdown. Call it inside the tokio
    /// runtime (the broadcaster's writer task starts on first use).
    pub fn event_recorder(&self, controller: &str) -> Result<EventRecorder, EventsError> {
        self.events
            .get_or_init(|| {
                EventBroadcaster::start(self.client.clone(), self.event_options.clone())
            })
            .new_recorder(controller)
    }

    /// The registry `/metrics` serves; register controller and workqueue metrics into it.
    #[cfg(feature = "prometheus")]
    pub fn registry(&self) -> &prometheus::Registry {
        &self.registry
    }

    /// Where the health/metrics server listens, if configured.
    pub fn http_local_addr(&self) -> Option<SocketAddr> {
        self.listener.as_ref().and_then(|l| l.local_addr().ok())
    }

    /// Whether this replica leads, as it changes (controller-runtime's `Elected`): true while
    /// leading, or once running without leader election.
    pub fn elected(&self) -> watch::Receiver<bool> {
        self.leading.subscribe()
    }

    /// Runs until SIGTERM or SIGINT (a second one exits the process at once), then shuts down
    /// gracefully. See [`run_until`](Self::run_until) for what it returns.
    pub async fn run(self) -> Result<(), ManagerError> {
        let token = CancellationToken::new();
        signals::cancel_on_signal(token.clone()).map_err(ManagerError::Signals)?;
        self.run_until(token).await
    }

    /// Runs until `shutdown` fires, a runnable fails, or leadership is lost; then stops every
    /// runnable within the graceful-shutdown timeout, the informers, the event recorders and
    /// the HTTP server, and returns. `Ok` only after a requested shutdown in which everything
    /// stopped in time.
    pub async fn run_until(mut self, shutdown: CancellationToken) -> Result<(), ManagerError> {
        let stop = CancellationToken::new();
        let (ended_tx, mut ended) = mpsc::unbounded_channel();
        let (leaders, others): (Vec<_>, Vec<_>) = std::mem::take(&mut self.runnables)
            .into_iter()
            .partition(|r| self.election.is_some() && r.needs_leader_election());
        let term = Arc::new(Term {
            runnables: Mutex::new(leaders),
            ended: ended_tx.clone(),
            grace: self.grace,
            pending: Mutex::new(Vec::new()),
            leading: self.leading.clone(),
            factory: self.factory.clone(),
            #[cfg(feature = "prometheus")]
            status: self.leader_status.clone(),
        });
        // Built before anything starts, so a failure leaves nothing running.
        let elector: Option<Arc<dyn Elect>> = match self.election.take() {
            Some(make) => {
                Some(make(term.callbacks(), &self.health).map_err(ManagerError::LeaderElection)?)
            }
            None => None,
        };
        let http_stop = CancellationToken::new();
        let http = self.start_http(http_stop.clone());
        let others = Group::start(others, stop.child_token(), &ended_tx);
        self.factory.start();
        let mut election = match elector {
            None => {
                self.leading.send_replace(true);
                let leaders = std::mem::take(&mut *term.runnables.lock());
                let group = Group::start(leaders, stop.child_token(), &ended_tx);
                ElectionTask::None(group)
            }
            Some(elector) => ElectionTask::Running(tokio::spawn(elector.run(stop.child_token()))),
        };
        drop(ended_tx);

        let mut outcome = Ok(());
        // An error of a runnable told to stop (a term that ended): reported only if nothing
        // else went wrong.
        let mut late = None;
        loop {
            tokio::select! {
                _ = shutdown.cancelled() => {
                    tracing::info!("manager: shutdown requested");
                    break;
                }
                Some(e) = ended.recv() => match e.result {
                    Ok(()) => tracing::info!(runnable = %e.name, "runnable returned"),
                    Err(source) if e.stopping => {
                        tracing::warn!(runnable = %e.name, "runnable failed while stopping: {source}");
                        late.get_or_insert(ManagerError::Runnable { name: e.name, source });
                    }
                    Err(source) => {
                        tracing::error!(runnable = %e.name, "runnable failed, stopping the manager: {source}");
                        outcome = Err(ManagerError::Runnable { name: e.name, source });
                        break;
                    }
                },
                end = election.ended() => {
                    if end == Some(RunEnd::LeadershipLost) {
                        tracing::error!("manager: leader election lost, stopping");
                        outcome = Err(ManagerError::LeaderElectionLost);
                    }
                    break;
                }
            }
        }

        stop.cancel();
        let deadline = Instant::now() + self.grace;
        let mut pending = others.stop(deadline).await;
        pending.extend(election.stop(deadline).await);
        pending.extend(std::mem::take(&mut *term.pending.lock()));
        if timeout_at(deadline, self.factory.shutdown()).await.is_err() {
            pending.push("informers".into());
        }
        if let Some(events) = self.events.get() {
            if timeout_at(deadline, events.shutdown()).await.is_err() {
                pending.push("event recorders".into());
            }
        }
        while let Ok(e) = ended.try_recv() {
            if let Err(source) = e.result {
                late.get_or_insert(ManagerError::Runnable {
                    name: e.name,
                    source,
                });
            }
        }
        if let (Ok(()), Some(e)) = (&outcome, late) {
            outcome = Err(e);
        }
        http_stop.cancel();
        if let Some(http) = http {
            let _ = http.await;
        }
        self.leading.send_replace(false);
        match (outcome, pending.is_empty()) {
            (Ok(()), false) => Err(ManagerError::ShutdownTimeout {
                timeout: self.grace,
                pending,
            }),
            (outcome, _) => outcome,
        }
    }

    fn claim(&mut self, name: &str) -> Result<(), ManagerError> {
        if name.is_empty() {
            return Err(ManagerError::EmptyName);
        }
        if !self.names.insert(name.to_string()) {
            return Err(ManagerError::DuplicateName(name.to_string()));
        }
        Ok(())
    }

    fn start_http(&mut self, stop: CancellationToken) -> Option<tokio::task::JoinHandle<()>> {
        let listener = self.listener.take()?;
        let listener = match tokio::net::TcpListener::from_std(listener) {
            Ok(l) => l,
            Err(e) => {
                tracing::error!("health/metrics server cannot start: {e}");
                return None;
            }
        };
        let endpoints = Arc::new(http::Endpoints {
            healthz: self.healthz.clone(),
            readyz: self.readyz.clone(),
            #[cfg(feature = "prometheus")]
            registry: self.registry.clone(),
        });
        Some(tokio::spawn(http::serve(listener, endpoints, stop)))
    }
}

/// client-go's (and controller-runtime's) `leader_election_master_status{name}` gauge.
#[cfg(feature = "prometheus")]
fn leader_status_gauge(
    registry: &prometheus::Registry,
    name: &str,
) -> Result<prometheus::IntGauge, prometheus::Error> {
    let vec = prometheus::IntGaugeVec::new(
        prometheus::Opts::new(
            "leader_election_master_status",
            "Gauge of if the reporting system is master of the relevant lease, 0 indicates \
             backup, 1 indicates master. 'name' is the string used to identify the lease.",
        ),
        &["name"],
    )?;
    registry.register(Box::new(vec.clone()))?;
    Ok(vec.with_label_values(&[name]))
}

fn checked_add(checks: &mut Checks, name: &str, check: Check) -> Result<(), ManagerError> {
    if name.is_empty() {
        return Err(ManagerError::EmptyName);
    }
    match checks.add(name, check) {
        true => Ok(()),
        false => Err(ManagerError::DuplicateName(name.to_string())),
    }
}

/// The leader runnables' side of a run: started at once, or by the elector.
enum ElectionTask {
    /// No leader election: the leader runnables run in a plain group.
    None(Group),
    /// The elector's run.
    Running(tokio::task::JoinHandle<RunEnd>),
    /// The elector's run has returned.
    Done,
}

impl ElectionTask {
    /// Resolves when the elector's run returns (never without leader election).
    async fn ended(&mut self) -> Option<RunEnd> {
        match self {
            ElectionTask::Running(task) => {
                let end = task.await.ok();
                *self = ElectionTask::Done;
                end
            }
            _ => std::future::pending().await,
        }
    }

    /// Stops the leader runnables by the deadline; names of those that did not stop.
    async fn stop(self, deadline: Instant) -> Vec<String> {
        match self {
            ElectionTask::None(group) => group.stop(deadline).await,
            ElectionTask::Running(mut task) => {
                // The elector stops its term (within the grace period), then may release the
                // lease; past the deadline the lease is left to expire.
                if timeout_at(deadline, &mut task).await.is_err() {
                    task.abort();
                    return vec!["leader election (lease release)".into()];
                }
                Vec::new()
            }
            ElectionTask::Done => Vec::new(),
        }
    }
}
