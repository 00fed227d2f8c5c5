//! The client every network scenario uses: a kubeconfig's current context with QPS and burst
//! raised to 1000/1000, as cgbench's, so client-side rate limiting never shapes a figure.

use std::path::Path;

use kcache_transport::{Client, Config};

/// A client for `kubeconfig`; exits with a message naming the file if it cannot be built.
pub fn from_kubeconfig(kubeconfig: &Path) -> Client {
    configured(kubeconfig, |_| {})
}

/// [`from_kubeconfig`], with `adjust` applied to the config last (a scenario's own flags).
pub fn configured(kubeconfig: &Path, adjust: impl FnOnce(&mut Config)) -> Client {
    let built = Config::from_kubeconfig_file(kubeconfig).and_then(|mut config| {
        config.qps = 1000.0;
        config.burst = 1000;
        adjust(&mut config);
        Client::new(config)
    });
    built.unwrap_or_else(|e| {
        eprintln!(
            "kcache-bench: kubeconfig {}: {}",
            kubeconfig.display(),
            kcache_core::ErrorChain(&e)
        );
        std::process::exit(2)
    })
}
