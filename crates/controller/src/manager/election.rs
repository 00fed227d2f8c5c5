//! Leader election for the manager: one elector (any `LeaseClient`, type-erased), and the term
//! of leadership that starts the runnables needing it and stops them when it ends.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use kcache_informer::SharedInformerFactory;
use kcache_leaderelection::{
    CancellationToken, ConfigError, HealthzAdaptor, LeaderCallbacks, LeaderElectionConfig,
    LeaderElector, LeaseClient, RunEnd,
};
use parking_lot::Mutex;
use tokio::sync::{mpsc, watch};
use tokio::time::Instant;

use super::group::{Ended, Group};
use crate::Runnable;

/// A [`LeaderElector`] over any lock.
pub(crate) trait Elect: Send + Sync {
    fn run(&self, shutdown: CancellationToken) -> Pin<Box<dyn Future<Output = RunEnd> + Send>>;
}

impl<L: LeaseClient> Elect for LeaderElector<L> {
    fn run(&self, shutdown: CancellationToken) -> Pin<Box<dyn Future<Output = RunEnd> + Send>> {
        let me = self.clone();
        Box::pin(async move { me.run(shutdown).await })
    }
}

/// Builds the elector once the callbacks exist.
pub(crate) type MakeElector =
    Box<dyn FnOnce(LeaderCallbacks, &HealthzAdaptor) -> Result<Arc<dyn Elect>, ConfigError> + Send>;

/// `lock` and `config` as a [`MakeElector`], with the election's name (the config's, else the
/// lock's `namespace/name`); the config is checked now.
pub(crate) fn make_elector<L: LeaseClient>(
    lock: L,
    config: LeaderElectionConfig,
) -> Result<(MakeElector, String), ConfigError> {
    config.validate()?;
    let name = match config.name.is_empty() {
        true => lock.describe(),
        false => config.name.clone(),
    };
    let make: MakeElector = Box::new(move |callbacks, health: &HealthzAdaptor| {
        let elector = LeaderElector::new(lock, config, callbacks)?;
        health.set_leader_election(&elector);
        Ok(Arc::new(elector) as Arc<dyn Elect>)
    });
    Ok((make, name))
}

/// What a term of leadership runs, shared between the manager and the elector's callback.
pub(crate) struct Term {
    /// The runnables that need leadership; taken by the first term.
    pub(crate) runnables: Mutex<Vec<Box<dyn Runnable>>>,
    pub(crate) ended: mpsc::UnboundedSender<Ended>,
    pub(crate) grace: Duration,
    /// Runnables that did not stop within `grace` when the term ended.
    pub(crate) pending: Mutex<Vec<String>>,
    pub(crate) leading: watch::Sender<bool>,
    pub(crate) factory: Arc<SharedInformerFactory>,
    /// `leader_election_master_status{name}`: 1 while leading.
    #[cfg(feature = "prometheus")]
    pub(crate) status: Option<prometheus::IntGauge>,
}

impl Term {
    /// The callbacks that run a term on this.
    pub(crate) fn callbacks(self: &Arc<Self>) -> LeaderCallbacks {
        let term = self.clone();
        LeaderCallbacks::new(move |lost| term.clone().lead(lost))
    }

    /// Leads until `lost` fires: starts the leader runnables (their informers started, and
    /// warmed, before the campaign), then stops them within the grace period.
    async fn lead(self: Arc<Self>, lost: CancellationToken) {
        let runnables = std::mem::take(&mut *self.runnables.lock());
        self.factory.start();
        self.leading.send_replace(true);
        self.set_status(1);
        let group = Group::start(runnables, lost.clone(), &self.ended);
        lost.cancelled().await;
        let pending = group.stop(Instant::now() + self.grace).await;
        self.pending.lock().extend(pending);
        self.leading.send_replace(false);
        self.set_status(0);
    }

    fn set_status(&self, value: i64) {
        #[cfg(feature = "prometheus")]
        if let Some(g) = &self.status {
            g.set(value);
        }
        #[cfg(not(feature = "prometheus"))]
        let _ = value;
    }
}
