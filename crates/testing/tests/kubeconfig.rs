//! The kubeconfig the embedded server writes (`TestServer::write_kubeconfig`, what a
//! `TestCluster` hands out) is read by kcache-transport, the code users get, as it was meant.

use kcache_testing::{ServerConfig, TestServer};

#[tokio::test]
async fn kcache_transport_reads_what_the_server_writes() {
    let server = TestServer::start(ServerConfig {
        tls: true,
        token: Some("tok".into()),
        ..ServerConfig::default()
    })
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config");
    server.write_kubeconfig(&path).unwrap();
    let c = kcache_transport::Config::from_kubeconfig_file(&path).unwrap();
    assert_eq!(
        c.cluster_url.to_string(),
        format!("https://{}/", server.addr())
    );
    assert_eq!(c.auth.token.as_ref().map(|t| t.expose()), Some("tok"));
    assert_eq!(c.root_certs.map(|r| r.len()), Some(1));

    let plain = TestServer::start(ServerConfig::default()).await.unwrap();
    plain.write_kubeconfig(&path).unwrap();
    let c = kcache_transport::Config::from_kubeconfig_file(&path).unwrap();
    assert_eq!(
        c.cluster_url.to_string(),
        format!("http://{}/", plain.addr())
    );
    assert!(c.auth.token.is_none() && c.root_certs.is_none());
}
