//! What the tests share: a cluster, a client for it, a namespace per test.

use kcache_testing::TestCluster;
use kcache_transport::{Client, Config};

/// A cluster (embedded unless `KCACHE_TEST_KUBECONFIG` is set), a client without client-side
/// rate limits, and a fresh namespace.
pub async fn cluster(prefix: &str) -> (TestCluster, Client, String) {
    let cluster = TestCluster::start().await.expect("test cluster");
    let mut config = Config::from_kubeconfig_file(cluster.kubeconfig_path()).expect("kubeconfig");
    config.qps = 0.0;
    let client = Client::new(config).expect("client");
    let ns = cluster.create_namespace(prefix).await.expect("namespace");
    (cluster, client, ns)
}

/// A client for an address nothing listens on: for manager tests that never reach a server.
pub fn unreachable_client() -> Client {
    Client::new(Config::new("http://127.0.0.1:9".parse().unwrap())).expect("client")
}

/// An error type for reconcile closures.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Failed(pub &'static str);
