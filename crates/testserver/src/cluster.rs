//! [`TestCluster`]: the cluster an integration test runs against — a real one named by
//! `KCACHE_TEST_KUBECONFIG`, or an embedded TLS + token [`TestServer`].

use std::path::{Path, PathBuf};

use serde_json::json;

use crate::client::RawClient;
use crate::config::ServerConfig;
use crate::meta::name_suffix;
use crate::{kubeconfig, Error, TestServer};

/// The environment variable naming a real cluster's kubeconfig.
pub const KUBECONFIG_ENV: &str = "KCACHE_TEST_KUBECONFIG";

/// A cluster for one test: real when `KCACHE_TEST_KUBECONFIG` is set, embedded otherwise.
#[derive(Debug)]
pub struct TestCluster {
    server: Option<TestServer>,
    kubeconfig: PathBuf,
    base_url: String,
    token: Option<String>,
    ca_pem: Option<String>,
    client: RawClient,
    _dir: Option<tempfile::TempDir>,
}

impl TestCluster {
    /// Targets `KCACHE_TEST_KUBECONFIG` if set, else starts an embedded server with TLS and a
    /// random token and writes its kubeconfig into a temporary directory.
    pub async fn start() -> Result<TestCluster, Error> {
        Self::start_with(ServerConfig::default()).await
    }

    /// Like [`TestCluster::start`]; `config` applies to the embedded server (its `tls` and
    /// `token` are always set).
    pub async fn start_with(config: ServerConfig) -> Result<TestCluster, Error> {
        match std::env::var_os(KUBECONFIG_ENV).filter(|v| !v.is_empty()) {
            Some(path) => Self::real(PathBuf::from(path)),
            None => Self::embedded(config).await,
        }
    }

    fn real(path: PathBuf) -> Result<TestCluster, Error> {
        let ep = kubeconfig::read(&path)?;
        let client = RawClient::new(&ep.server, ep.ca_pem.as_deref(), ep.token.as_deref())?;
        Ok(TestCluster {
            server: None,
            kubeconfig: path,
            base_url: ep.server,
            token: ep.token,
            ca_pem: ep.ca_pem,
            client,
            _dir: None,
        })
    }

    async fn embedded(mut config: ServerConfig) -> Result<TestCluster, Error> {
        config.tls = true;
        config
            .token
            .get_or_insert_with(|| format!("kcache-{}{}", name_suffix(), name_suffix()));
        let server = TestServer::start(config).await?;
        let dir = tempfile::tempdir().map_err(|e| Error::Kubeconfig {
            path: PathBuf::new(),
            message: e.to_string(),
        })?;
        let path = dir.path().join("kubeconfig");
        server.write_kubeconfig(&path)?;
        let client = RawClient::new(&server.base_url(), server.ca_pem(), server.token())?;
        Ok(TestCluster {
            base_url: server.base_url(),
            token: server.token().map(str::to_string),
            ca_pem: server.ca_pem().map(str::to_string),
            server: Some(server),
            kubeconfig: path,
            client,
            _dir: Some(dir),
        })
    }

    /// Whether this is a real cluster (no fault injection).
    pub fn is_real(&self) -> bool {
        self.server.is_none()
    }

    /// The kubeconfig to hand to clients.
    pub fn kubeconfig_path(&self) -> &Path {
        &self.kubeconfig
    }

    /// The API server URL.
    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    /// The bearer token.
    pub fn token(&self) -> Option<&str> {
        self.token.as_deref()
    }

    /// The CA certificate (PEM) to trust.
    pub fn ca_pem(&self) -> Option<&str> {
        self.ca_pem.as_deref()
    }

    /// The embedded server, for fault injection; `None` on a real cluster.
    pub fn server(&self) -> Option<&TestServer> {
        self.server.as_ref()
    }

    /// A raw HTTP client for this cluster (setup and assertions without kcache-transport).
    pub fn client(&self) -> &RawClient {
        &self.client
    }

    /// Creates a namespace with a unique name starting with `prefix` and returns the name, so
    /// tests sharing a real cluster do not see each other's objects.
    pub async fn create_namespace(&self, prefix: &str) -> Result<String, Error> {
        let body = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"generateName": format!("{prefix}-")}});
        let resp = self.client.post("/api/v1/namespaces", &body).await?;
        match resp.body["metadata"]["name"].as_str() {
            Some(name) if resp.status.is_success() => Ok(name.to_string()),
            _ => Err(Error::Request(format!(
                "creating a namespace answered {}: {}",
                resp.status, resp.body
            ))),
        }
    }
}
