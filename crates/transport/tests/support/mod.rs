//! Shared helpers of the integration tests (each test binary uses some of them).

#![allow(dead_code)]

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use k8s_openapi::api::core::v1::ConfigMap;
use kcache_testing::{TestCluster, ROOT_CA_CONFIGMAP};
use kcache_transport::{Client, Config};

/// The ConfigMaps a test created: all but the root CA bundle a full cluster's controllers put
/// into every namespace.
pub fn own(items: &[ConfigMap]) -> Vec<&ConfigMap> {
    items
        .iter()
        .filter(|cm| cm.metadata.name.as_deref() != Some(ROOT_CA_CONFIGMAP))
        .collect()
}

/// A config for the cluster's kubeconfig, adjusted by `tweak`.
pub fn config(cluster: &TestCluster, tweak: impl FnOnce(&mut Config)) -> Config {
    let mut c = Config::from_kubeconfig_file(cluster.kubeconfig_path()).unwrap();
    // Tests create objects quickly; the default 5 qps would only slow them down.
    c.qps = 0.0;
    tweak(&mut c);
    c
}

/// A client for the cluster, adjusted by `tweak`.
pub fn client(cluster: &TestCluster, tweak: impl FnOnce(&mut Config)) -> Client {
    Client::new(config(cluster, tweak)).unwrap()
}

/// A TCP proxy to `target` counting the connections it accepts.
pub async fn counting_proxy(target: SocketAddr) -> (SocketAddr, Arc<AtomicUsize>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let count = Arc::new(AtomicUsize::new(0));
    let seen = count.clone();
    tokio::spawn(async move {
        while let Ok((mut inbound, _)) = listener.accept().await {
            seen.fetch_add(1, Ordering::SeqCst);
            tokio::spawn(async move {
                if let Ok(mut outbound) = tokio::net::TcpStream::connect(target).await {
                    let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                }
            });
        }
    });
    (addr, count)
}
