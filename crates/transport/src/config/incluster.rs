//! In-cluster configuration (client-go's `rest.InClusterConfig`): the service account's token
//! and CA, and `KUBERNETES_SERVICE_HOST`/`KUBERNETES_SERVICE_PORT`.

use std::path::Path;
use std::time::Duration;

use crate::config::{AuthConfig, Config};
use crate::error::ConfigError;
use crate::tls;

/// Where the kubelet mounts the service account's token, CA and namespace.
pub const SERVICE_ACCOUNT_DIR: &str = "/var/run/secrets/kubernetes.io/serviceaccount";

/// How long a token read from a file is used before the file is read again (client-go's
/// `NewCachedFileTokenSource`: one minute), so rotated service account tokens are picked up.
pub const TOKEN_REREAD_PERIOD: Duration = Duration::from_secs(60);

impl Config {
    /// The config of a pod's service account.
    pub fn incluster() -> Result<Config, ConfigError> {
        let var = |name| std::env::var(name).ok().filter(|v| !v.is_empty());
        Config::incluster_from(
            var("KUBERNETES_SERVICE_HOST").as_deref(),
            var("KUBERNETES_SERVICE_PORT").as_deref(),
            var("POD_NAMESPACE").as_deref(),
            Path::new(SERVICE_ACCOUNT_DIR),
        )
    }

    /// The in-cluster config from these values (the environment's, for [`Config::incluster`])
    /// and this service account directory.
    pub fn incluster_from(
        host: Option<&str>,
        port: Option<&str>,
        pod_namespace: Option<&str>,
        dir: &Path,
    ) -> Result<Config, ConfigError> {
        let (Some(host), Some(port)) = (host, port) else {
            return Err(ConfigError::InCluster(
                "KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be defined".into(),
            ));
        };
        let host = if host.contains(':') {
            format!("[{host}]")
        } else {
            host.to_string()
        };
        let url = format!("https://{host}:{port}");
        let cluster_url = url.parse().map_err(|e| ConfigError::ServerUrl {
            url: url.clone(),
            problem: format!("{e}"),
        })?;
        let token_file = dir.join("token");
        let read = |what: &'static str, p: &Path| {
            std::fs::read(p).map_err(|source| ConfigError::Read {
                what,
                path: p.to_path_buf(),
                source,
            })
        };
        read("service account token", &token_file)?;
        let ca_file = dir.join("ca.crt");
        let roots = tls::parse_certs(&read("service account CA", &ca_file)?)
            .map_err(|e| ConfigError::InCluster(format!("{}: {e}", ca_file.display())))?;
        let namespace = match pod_namespace {
            Some(ns) => ns.to_string(),
            None => std::fs::read_to_string(dir.join("namespace"))
                .map(|s| s.trim().to_string())
                .ok()
                .filter(|s| !s.is_empty())
                .unwrap_or_else(|| "default".into()),
        };
        let mut config = Config::new(cluster_url);
        config.default_namespace = namespace;
        config.root_certs = Some(roots);
        config.auth = AuthConfig {
            token_file: Some(token_file),
            ..AuthConfig::default()
        };
        Ok(config)
    }
}
