//! `--leader-elect`: run the controller only while holding a Lease, so two or three replicas
//! can run with one active (client-go's `tools/leaderelection`, as kube-controller-manager and
//! controller-runtime use it), through kcache-leaderelection.

use std::error::Error;
use std::future::Future;
use std::hash::{BuildHasher, Hasher};
use std::time::Duration;

use kcache_leaderelection::{
    LeaderCallbacks, LeaderElectionConfig, LeaderElector, LeaseLock, RunEnd,
};
use kcache_transport::{Client, Config};
use tokio_util::sync::CancellationToken;

/// The leader-election flags.
#[derive(clap::Args, Debug, Clone)]
pub struct LeaderElectArgs {
    /// Run the controller only while holding the Lease `--lease-name` in `--lease-namespace`;
    /// on SIGTERM or Ctrl-C, stop it and release the Lease.
    #[arg(long)]
    pub leader_elect: bool,
    /// The Lease's namespace.
    #[arg(long, default_value = "default")]
    pub lease_namespace: String,
    /// The Lease's name.
    #[arg(long, default_value = "sample-controller")]
    pub lease_name: String,
    /// This replica's identity in the Lease (default: `$POD_NAME`, which a Deployment sets
    /// through the downward API; else hostname + "_" + a random suffix).
    #[arg(long)]
    pub id: Option<String>,
    /// Seconds others wait after the last renewal before taking over.
    #[arg(long, default_value_t = 15.0)]
    pub lease_duration: f64,
    /// Seconds the leader keeps retrying a renewal before it stops leading.
    #[arg(long, default_value_t = 10.0)]
    pub renew_deadline: f64,
    /// Seconds between attempts.
    #[arg(long, default_value_t = 2.0)]
    pub retry_period: f64,
}

/// The pod's name in a pod (`$POD_NAME`, so the Lease's holder names the pod, as
/// kube-controller-manager's does); elsewhere client-go's examples' identity: the hostname,
/// `_`, and a random suffix (two replicas on one machine stay distinct).
pub fn default_identity() -> String {
    if let Some(pod) = std::env::var("POD_NAME")
        .ok()
        .filter(|p| !p.trim().is_empty())
    {
        return pod.trim().to_string();
    }
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".into());
    let random = std::collections::hash_map::RandomState::new()
        .build_hasher()
        .finish();
    format!("{host}_{:08x}", random as u32)
}

fn seconds(flag: &str, s: f64) -> Result<Duration, String> {
    Duration::try_from_secs_f64(s).map_err(|e| format!("--{flag} {s}: {e}"))
}

/// Campaigns for the Lease and runs `lead` while holding it, until `shutdown` fires (then the
/// Lease is released once `lead` returned) or leadership is lost.
pub async fn run_elected<F, Fut>(
    config: Config,
    args: &LeaderElectArgs,
    shutdown: CancellationToken,
    lead: F,
) -> Result<RunEnd, Box<dyn Error>>
where
    F: Fn(CancellationToken) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    let identity = args.id.clone().unwrap_or_else(default_identity);
    let mut le = LeaderElectionConfig::new(identity.clone());
    le.lease_duration = seconds("lease-duration", args.lease_duration)?;
    le.renew_deadline = seconds("renew-deadline", args.renew_deadline)?;
    le.retry_period = seconds("retry-period", args.retry_period)?;
    le.release_on_cancel = true;
    // A client of its own, so the controller's requests never hold up a renewal.
    let lock = LeaseLock::new(
        Client::new(config)?,
        &args.lease_namespace,
        &args.lease_name,
    );
    let me = identity.clone();
    let callbacks = LeaderCallbacks::new(lead)
        .on_new_leader(move |holder| match holder == me {
            true => tracing::info!(identity = holder, "started leading"),
            false => tracing::info!(leader = holder, "new leader elected"),
        })
        .on_stopped_leading(|| tracing::info!("stopped leading"));
    let elector = LeaderElector::new(lock, le, callbacks)?;
    tracing::info!(%identity, lease = %format!("{}/{}", args.lease_namespace, args.lease_name), "campaigning");
    Ok(elector.run(shutdown).await)
}

/// Resolves on Ctrl-C or SIGTERM.
pub async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => tokio::select! {
                _ = tokio::signal::ctrl_c() => tracing::info!("Ctrl-C: shutting down"),
                _ = term.recv() => tracing::info!("SIGTERM: shutting down"),
            },
            Err(e) => {
                tracing::warn!("cannot watch SIGTERM: {e}");
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    if tokio::signal::ctrl_c().await.is_ok() {
        tracing::info!("Ctrl-C: shutting down");
    }
}
