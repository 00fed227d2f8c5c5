//! [`TestCluster`]: the cluster an integration test runs against — a real one named by
//! `KCACHE_TEST_KUBECONFIG`, or an embedded TLS + token [`TestServer`].

use std::path::{Path, PathBuf};

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use kcache_testserver::{Error, ServerConfig, TestServer};
use rand::distr::{Alphanumeric, SampleString};
use serde_json::json;

use crate::raw_client::RawClient;

/// The environment variable naming a real cluster's kubeconfig.
pub const KUBECONFIG_ENV: &str = "KCACHE_TEST_KUBECONFIG";

/// The ConfigMap that a full cluster's kube-controller-manager (its root-ca-cert-publisher)
/// puts into every namespace, shortly after the namespace is created; envtest and the
/// embedded server have no such controller. Tests listing a namespace's ConfigMaps leave it
/// out and assert on what they created.
pub const ROOT_CA_CONFIGMAP: &str = "kube-root-ca.crt";

/// A cluster for one test: real when `KCACHE_TEST_KUBECONFIG` is set, embedded otherwise.
#[derive(Debug)]
pub struct TestCluster {
    server: Option<TestServer>,
    kubeconfig: PathBuf,
    base_url: String,
    token: Option<String>,
    ca_pem: Option<String>,
    client: RawClient,
    /// What a real cluster's controllers put into every new namespace (probed once).
    furnished: tokio::sync::OnceCell<Vec<Furnishing>>,
    _dir: Option<tempfile::TempDir>,
}

/// Objects kube-controller-manager puts into every namespace, as API paths below it: the
/// service-account controller's `default` ServiceAccount (pods cannot be created before it
/// exists) and the root-ca-cert-publisher's ConfigMap ([`ROOT_CA_CONFIGMAP`]).
const FURNISHINGS: [&str; 2] = ["serviceaccounts/default", "configmaps/kube-root-ca.crt"];

/// One object controllers put into every namespace, and what makes it complete.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Furnishing {
    /// One of [`FURNISHINGS`].
    path: &'static str,
    /// Wait until its `secrets` list is non-empty too: before Kubernetes 1.24 the token
    /// controller adds a token Secret to each ServiceAccount, and the ServiceAccount admission
    /// plugin refuses pods (500, "No API token found") until it is there.
    with_token: bool,
}

/// How long a new namespace may take to be furnished (a liveness guard, normally < 1 s).
const FURNISH_LIMIT: std::time::Duration = std::time::Duration::from_secs(60);

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

    /// A real cluster, its kubeconfig read by kcache-transport exactly as users' clients read
    /// it (client certificates and exec plugins included).
    fn real(path: PathBuf) -> Result<TestCluster, Error> {
        let config = kcache_transport::Config::from_kubeconfig_file(&path).map_err(|e| {
            Error::Kubeconfig {
                path: path.clone(),
                message: e.to_string(),
            }
        })?;
        let base_url = config
            .cluster_url
            .to_string()
            .trim_end_matches('/')
            .to_string();
        let token = config.auth.token.as_ref().map(|t| t.expose().to_string());
        let ca_pem = config.root_certs.as_deref().map(pem_certificates);
        let client = RawClient::from_config(config)?;
        Ok(TestCluster {
            server: None,
            kubeconfig: path,
            base_url,
            token,
            ca_pem,
            client,
            furnished: tokio::sync::OnceCell::new(),
            _dir: None,
        })
    }

    async fn embedded(mut config: ServerConfig) -> Result<TestCluster, Error> {
        config.tls = true;
        config.token.get_or_insert_with(|| {
            format!(
                "kcache-{}",
                Alphanumeric.sample_string(&mut rand::rng(), 10)
            )
        });
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
            furnished: tokio::sync::OnceCell::new(),
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

    /// The bearer token, if the kubeconfig authenticates with one (kind's uses a client
    /// certificate instead: use [`TestCluster::kubeconfig_path`] to authenticate as it says).
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
    /// tests sharing a real cluster do not see each other's objects. On a full cluster it
    /// returns once the controllers have furnished the namespace (its `default` ServiceAccount
    /// and root CA ConfigMap), so a test starts from a settled namespace and can create pods.
    pub async fn create_namespace(&self, prefix: &str) -> Result<String, Error> {
        let body = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"generateName": format!("{prefix}-")}});
        let resp = self.client.post("/api/v1/namespaces", &body).await?;
        let name = match resp.body["metadata"]["name"].as_str() {
            Some(name) if resp.status.is_success() => name.to_string(),
            _ => {
                return Err(Error::Request(format!(
                    "creating a namespace answered {}: {}",
                    resp.status, resp.body
                )))
            }
        };
        for f in self.furnishings().await? {
            self.wait_for(
                &format!("/api/v1/namespaces/{name}/{}", f.path),
                f.with_token,
            )
            .await?;
        }
        Ok(name)
    }

    /// Whether kube-controller-manager runs here (a full cluster such as kind; not envtest or
    /// the embedded server): its service-account controller made namespace `default`'s
    /// `default` ServiceAccount. Tests use it to leave work to the real controllers.
    pub async fn runs_controllers(&self) -> Result<bool, Error> {
        Ok(self
            .furnishings()
            .await?
            .iter()
            .any(|f| f.path == FURNISHINGS[0]))
    }

    /// Which of [`FURNISHINGS`] namespace `default` holds: what controllers put everywhere.
    async fn furnishings(&self) -> Result<&[Furnishing], Error> {
        let probed = self
            .furnished
            .get_or_try_init(|| async {
                if !self.is_real() {
                    return Ok(Vec::new());
                }
                let mut found = Vec::new();
                for path in FURNISHINGS {
                    let resp = self
                        .client
                        .get(&format!("/api/v1/namespaces/default/{path}"))
                        .await?;
                    if resp.status.is_success() {
                        found.push(Furnishing {
                            path,
                            with_token: has_secrets(&resp.body),
                        });
                    }
                }
                Ok::<_, Error>(found)
            })
            .await?;
        Ok(probed)
    }

    /// Polls `path` until it exists (and, `with_token`, lists a Secret); an error after
    /// [`FURNISH_LIMIT`].
    async fn wait_for(&self, path: &str, with_token: bool) -> Result<(), Error> {
        let deadline = tokio::time::Instant::now() + FURNISH_LIMIT;
        loop {
            let resp = self.client.get(path).await?;
            if resp.status.is_success() && (!with_token || has_secrets(&resp.body)) {
                return Ok(());
            }
            if tokio::time::Instant::now() >= deadline {
                return Err(Error::Request(format!(
                    "{path} was not there (with a token Secret: {with_token}) within \
                     {FURNISH_LIMIT:?}; last answer {}: {}",
                    resp.status, resp.body
                )));
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
    }
}

/// Whether a ServiceAccount lists a Secret (false for any other object).
fn has_secrets(obj: &serde_json::Value) -> bool {
    obj["secrets"].as_array().is_some_and(|s| !s.is_empty())
}

/// PEM text of DER certificates (what [`TestCluster::ca_pem`] hands out for a real cluster).
fn pem_certificates(certs: &[rustls_pki_types::CertificateDer<'static>]) -> String {
    let mut out = String::new();
    for cert in certs {
        out.push_str("-----BEGIN CERTIFICATE-----\n");
        let b64 = STANDARD.encode(cert.as_ref());
        for line in b64.as_bytes().chunks(64) {
            out.push_str(&String::from_utf8_lossy(line));
            out.push('\n');
        }
        out.push_str("-----END CERTIFICATE-----\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use rustls_pki_types::pem::PemObject;
    use rustls_pki_types::CertificateDer;

    use super::*;

    /// A real cluster's CA comes back from kcache-transport as DER; handed out as PEM it is the
    /// text the server wrote.
    #[tokio::test]
    async fn pem_of_der_is_the_pem_read() {
        let config = ServerConfig {
            tls: true,
            ..ServerConfig::default()
        };
        let server = TestServer::start(config).await.unwrap();
        let pem = server.ca_pem().unwrap().replace("\r\n", "\n");
        let der: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(pem.as_bytes())
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(der.len(), 1);
        assert_eq!(pem_certificates(&der), pem);
    }
}
