//! `cargo xtask integration --kind`: the integration test bodies the embedded and envtest tiers
//! run, against a full kind cluster (controller-manager, scheduler, kubelet, service accounts),
//! authenticating with kind's own kubeconfig (a client certificate).

use crate::kind::{KindCluster, KindOptions};
use crate::Failure;

/// Runs the kind tier with `args` (the flags after `--kind`).
pub(crate) fn run(args: &[String]) -> Result<(), Failure> {
    let (opts, rest) = KindOptions::parse(args, |k| std::env::var(k).ok())?;
    if let Some(extra) = rest.first() {
        return Err(Failure::usage(format!(
            "unknown flag {extra:?} (integration --kind takes --cluster NAME, --image IMAGE, --kind PATH, --keep)"
        )));
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    let cluster = KindCluster::up(&opts, &path)?;
    let kubeconfig = cluster.kubeconfig().display().to_string();
    eprintln!("xtask: KCACHE_TEST_KUBECONFIG={kubeconfig}");
    let title = format!("kind tier against cluster {}", cluster.name());
    crate::report::run_tests(
        &title,
        "kind",
        &[("KCACHE_TEST_KUBECONFIG", kubeconfig.as_str())],
    )?;
    // `cluster` drops here (and on every early return): deleted if this run created it.
    Ok(())
}
