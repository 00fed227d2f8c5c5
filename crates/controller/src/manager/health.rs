//! The manager's health checks: `/healthz` (liveness) and `/readyz` (readiness), each a list of
//! named checks answered as the API server answers its own (`[+]name ok` / `[-]name failed`).

use std::sync::Arc;

use futures_util::FutureExt;
use kcache_informer::SharedInformerFactory;
use kcache_leaderelection::HealthzAdaptor;

/// One health check: `Ok` when healthy, `Err(reason)` otherwise. Called on every request, so
/// it must be quick and must not block.
pub type Check = Arc<dyn Fn() -> Result<(), String> + Send + Sync>;

/// The named checks of one endpoint, in the order they were added.
#[derive(Clone, Default)]
pub(crate) struct Checks(Vec<(String, Check)>);

impl Checks {
    /// Adds `check`; `false` if the name is taken.
    pub(crate) fn add(&mut self, name: &str, check: Check) -> bool {
        if self.0.iter().any(|(n, _)| n == name) {
            return false;
        }
        self.0.push((name.to_string(), check));
        true
    }

    /// Runs every check (or only `only`); `None` if `only` names no check. Returns whether all
    /// passed and the API server's report, one line per check.
    pub(crate) fn run(&self, only: Option<&str>) -> Option<(bool, String)> {
        let selected: Vec<_> = self
            .0
            .iter()
            .filter(|(n, _)| only.is_none_or(|o| o == n))
            .collect();
        if only.is_some() && selected.is_empty() {
            return None;
        }
        let mut healthy = true;
        let mut report = String::new();
        for (name, check) in selected {
            match check() {
                Ok(()) => report.push_str(&format!("[+]{name} ok\n")),
                Err(reason) => {
                    healthy = false;
                    report.push_str(&format!("[-]{name} failed: {reason}\n"));
                }
            }
        }
        Some((healthy, report))
    }
}

/// `/readyz`'s informer check: every informer the factory started has synced. The factory's
/// wait resolves on its first poll when all have (each informer's wait is event-driven), so
/// polling it once answers without blocking.
pub(crate) fn informers_synced(factory: Arc<SharedInformerFactory>) -> Check {
    Arc::new(move || match factory.wait_for_cache_sync().now_or_never() {
        None => Err("informers have not synced yet".into()),
        Some(synced) => {
            let stopped: Vec<_> = synced
                .into_iter()
                .filter(|(_, s)| !s)
                .map(|(n, _)| n)
                .collect();
            match stopped.is_empty() {
                true => Ok(()),
                false => Err(format!(
                    "informers stopped before syncing: {}",
                    stopped.join(", ")
                )),
            }
        }
    })
}

/// client-go's leader-election health check: fails when this replica leads but has not renewed
/// for longer than the lease plus the adaptor's tolerance (a wedged leader).
pub(crate) fn leader_election(adaptor: HealthzAdaptor) -> Check {
    Arc::new(move || adaptor.check().map_err(|e| e.to_string()))
}
