//! What a manager runs: controllers, and anything else that lives as long as the process.

use std::future::Future;
use std::pin::Pin;

use kcache_core::BoxError;
use tokio_util::sync::CancellationToken;

/// The future a [`Runnable`] returns.
pub type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;

/// Something a manager starts and stops: controller-runtime's `manager.Runnable` together with
/// its `LeaderElectionRunnable`.
///
/// A runnable that needs leader election is started only once this replica leads; its caches
/// are started (warmed) by the manager before that, so a new leader reconciles without a cold
/// list.
pub trait Runnable: Send + 'static {
    /// A name unique within the manager (logs, metrics, health checks).
    fn name(&self) -> &str;

    /// Whether it may run only while this replica holds the leader lease (controller-runtime's
    /// `NeedLeaderElection`; true for controllers unless configured otherwise).
    fn needs_leader_election(&self) -> bool {
        true
    }

    /// Runs until `shutdown` is cancelled, then finishes the work in flight (bounded by the
    /// runnable's own timeout) and returns.
    fn start(self: Box<Self>, shutdown: CancellationToken) -> BoxFuture<Result<(), BoxError>>;
}
