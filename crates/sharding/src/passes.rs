//! What the sharder of either mode shares: its context (client, ring, Lease informer,
//! take-overs held, the live shards of the previous pass) and its loop of passes — a pass every sync
//! period, and as soon as something it watches changed; a pass that found the membership
//! changed is followed by another after [`SETTLE`].

use std::collections::HashMap;
use std::fmt::Debug;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use kcache_core::Error;
use kcache_leaderelection::CancellationToken;
use kcache_transport::Client;
use parking_lot::Mutex;
use tokio::time::Instant;

use crate::conventions::Ring;
use crate::lease_informer::LeaseInformer;
use crate::membership::Settling;

/// Timing the sharder shares with the shards' Leases.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Timing {
    pub lease_duration: Duration,
    pub renew_deadline: Duration,
    pub sync_period: Duration,
}

/// What a sharder of either mode works with.
pub(crate) struct SharderContext {
    pub client: Client,
    pub ring: Ring,
    /// The replica's identity, written as holder of the Leases it takes over.
    pub identity: String,
    pub timing: Timing,
    /// The replica's Lease informer: the shards, when each Lease last changed, and a wake-up on
    /// membership changes.
    pub leases: Arc<LeaseInformer>,
    /// Shards whose Lease this sharder took over, until when it may act for them
    /// ([`may_move`](Self::may_move)).
    pub held: Mutex<HashMap<String, Instant>>,
    /// The live shards of the previous pass.
    pub last_live: Settling,
}

impl SharderContext {
    pub(crate) fn new(
        client: Client,
        ring: Ring,
        identity: String,
        timing: Timing,
        leases: Arc<LeaseInformer>,
    ) -> Self {
        SharderContext {
            client,
            ring,
            identity,
            timing,
            leases,
            held: Mutex::new(HashMap::new()),
            last_live: Settling::default(),
        }
    }
}

/// How soon a pass follows one that found the membership changed: replicas started together
/// have all joined by then.
pub(crate) const SETTLE: Duration = Duration::from_millis(500);

/// Runs `pass` until `stop` fires: after each, waits the sync period, or [`SETTLE`] (at most
/// the sync period) when the pass found the membership changed (`Ok(None)`), or until `woken`
/// resolves. A pass that did something is logged at debug level, a failed one as a warning.
pub(crate) async fn pass_loop<P, F, Fut, W, WFut>(
    ring: &str,
    sync_period: Duration,
    stop: &CancellationToken,
    mut pass: F,
    woken: W,
) where
    P: Debug + Default + PartialEq,
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<Option<P>, Error>>,
    W: Fn() -> WFut,
    WFut: Future<Output = ()>,
{
    while !stop.is_cancelled() {
        let wait = match pass().await {
            Ok(Some(p)) => {
                if p != P::default() {
                    tracing::debug!(%ring, ?p, "sharder pass");
                }
                sync_period
            }
            Ok(None) => SETTLE.min(sync_period),
            Err(e) => {
                tracing::warn!(%ring, "sharder pass failed: {e}");
                sync_period
            }
        };
        tokio::select! {
            _ = stop.cancelled() => {}
            _ = tokio::time::sleep(wait) => {}
            _ = woken() => {}
        }
    }
}
