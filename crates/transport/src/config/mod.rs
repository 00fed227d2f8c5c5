//! Client configuration: where the server is, how to trust it, who we are, and the client's
//! limits — built from a kubeconfig ([`Config::from_kubeconfig`]), from the in-cluster
//! environment ([`Config::incluster`]), or from whichever exists ([`Config::infer`]).

mod compression;
pub mod exec;
mod impersonate;
mod incluster;
pub mod kubeconfig;
pub mod merge;
mod resolve;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use rustls_pki_types::CertificateDer;

use crate::decode::DEFAULT_MAX_OBJECT_SIZE;
use crate::error::ConfigError;
use crate::secret::Secret;
use crate::warning::WarningHandler;
use exec::ExecConfig;
pub use impersonate::Impersonate;
pub use incluster::{SERVICE_ACCOUNT_DIR, TOKEN_REREAD_PERIOD};
use kubeconfig::Kubeconfig;
pub use resolve::KubeConfigOptions;
// Client certificates are TLS material (tls.rs loads them); `config::Identity` stays a path.
pub use crate::tls::Identity;

/// Everything a [`Client`](crate::Client) needs (client-go's `rest.Config`). `Debug` never
/// prints credentials (nor a proxy URL's password).
#[derive(Clone)]
pub struct Config {
    /// The server: `https://host:port`, optionally with a path prefix.
    pub cluster_url: http::Uri,
    /// The namespace of the context (or the pod), `default` if none.
    pub default_namespace: String,
    /// Trusted CA certificates; `None` trusts the system's roots.
    pub root_certs: Option<Vec<CertificateDer<'static>>>,
    /// Accept any server certificate (kubeconfig `insecure-skip-tls-verify`).
    pub insecure_skip_tls_verify: bool,
    /// Verify the server certificate against this name instead of the URL's host.
    pub tls_server_name: Option<String>,
    /// Credentials.
    pub auth: AuthConfig,
    /// Time allowed to open a TCP connection (client-go's dialer: 30 s).
    pub connect_timeout: Option<Duration>,
    /// Time allowed for a non-watch request's response (headers, and a buffered body); watches
    /// are exempt. `None`: no limit.
    pub request_timeout: Option<Duration>,
    /// HTTP/2 ping interval that detects dead connections under long watches (client-go: 30 s
    /// read-idle timeout, 15 s ping timeout). `None`: no pings.
    pub keep_alive: Option<Duration>,
    /// Client-side rate limit for non-watch requests, requests per second (client-go: 5), a
    /// kcache-flowcontrol token bucket. 0 or less disables the limiter; NaN or infinity is a
    /// [`ConfigError::RateLimit`](crate::ConfigError::RateLimit) from `Client::new`.
    pub qps: f32,
    /// Burst of the rate limit (client-go: 10); at least 1 when `qps > 0`.
    pub burst: u32,
    /// Retries of a non-watch request answered 429 or 5xx with `Retry-After` (client-go: 10).
    pub max_retries: u32,
    /// Largest single object (watch event or list item) accepted, in bytes; it bounds the
    /// decompressed bytes of a gzipped response too.
    pub max_object_size: usize,
    /// The `User-Agent` header (client-go's `rest.Config.UserAgent`); `None`: `kcache/VERSION`.
    /// Lets audit logs, API priority and fairness, and test servers tell clients apart.
    pub user_agent: Option<String>,
    /// Whether not to ask for gzip-compressed responses (client-go's `DisableCompression`,
    /// kubeconfig `disable-compression`). `None` (the default): ask, as client-go does, unless
    /// the server is on the loopback, where compressing costs both sides CPU and saves nothing
    /// ([`Config::asks_for_gzip`]). The API server compresses responses over 128 KiB, and the
    /// client decompresses while decoding.
    pub disable_compression: Option<bool>,
    /// Ask for metadata-only lists in protobuf first, as client-go's metadata client always
    /// does (`metadata.go`); on by default. kube-apiserver encodes a list's protobuf in about
    /// half its JSON time and a third of its bytes, and kcache decodes each item from protobuf as
    /// it arrives, so the list is decoded while the server sends it, as a JSON list is. A server
    /// without protobuf (kcache-testserver) answers the JSON alternative the `Accept` header
    /// also offers. Watches and single objects stay JSON. A page whose items hold a protobuf
    /// field kcache does not know is read again in JSON, and so are the resource's later lists.
    pub metadata_protobuf: bool,
    /// Ask for lists of the built-in kinds whose protobuf messages kcache knows (core/v1
    /// ConfigMap and Secret, [`ItemKind`](crate::decode::ItemKind)) in protobuf first, as the
    /// clients of kube-controller-manager and the scheduler do (client-go's `ContentType:
    /// application/vnd.kubernetes.protobuf`); on by default. The server encodes such a list in
    /// protobuf in a fraction of its JSON time, and each item decodes as `K` straight from its
    /// protobuf bytes, seen as the JSON the server would have sent. Other kinds, watches and
    /// single objects stay JSON; a server without protobuf answers the JSON alternative. A page
    /// whose items hold a protobuf field kcache does not know (one added to `ObjectMeta` or to
    /// the kind after kcache) is read again in JSON, and so are the resource's later lists:
    /// only JSON can name what such a field holds.
    pub protobuf: bool,
    /// Act as another user (kubeconfig `as`, `as-uid`, `as-groups`, `as-user-extra`).
    pub impersonate: Impersonate,
    /// Reach the server through this proxy: `http://`, `https://` (both with `CONNECT`) or
    /// `socks5://`, optionally with `user:password@` (kubeconfig `proxy-url`).
    pub proxy_url: Option<http::Uri>,
    /// Where the server's warnings go (`Warning` headers, e.g. for deprecated API versions;
    /// client-go's `rest.Config.WarningHandler`); `None`: [`WarningLogger`](crate::WarningLogger).
    pub warning_handler: Option<Arc<dyn WarningHandler>>,
}

impl std::fmt::Debug for Config {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let proxy = self.proxy_url.as_ref().map(|u| {
            let authority = u.authority().map_or("", |a| a.as_str());
            let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
            format!("{}://{host}", u.scheme_str().unwrap_or(""))
        });
        f.debug_struct("Config")
            .field("cluster_url", &self.cluster_url)
            .field("default_namespace", &self.default_namespace)
            .field("root_certs", &self.root_certs.as_ref().map(Vec::len))
            .field("insecure_skip_tls_verify", &self.insecure_skip_tls_verify)
            .field("tls_server_name", &self.tls_server_name)
            .field("auth", &self.auth)
            .field("connect_timeout", &self.connect_timeout)
            .field("request_timeout", &self.request_timeout)
            .field("keep_alive", &self.keep_alive)
            .field("qps", &self.qps)
            .field("burst", &self.burst)
            .field("max_retries", &self.max_retries)
            .field("max_object_size", &self.max_object_size)
            .field("user_agent", &self.user_agent)
            .field("disable_compression", &self.disable_compression)
            .field("metadata_protobuf", &self.metadata_protobuf)
            .field("protobuf", &self.protobuf)
            .field("impersonate", &self.impersonate)
            .field("proxy_url", &proxy)
            .field("warning_handler", &self.warning_handler.is_some())
            .finish()
    }
}

/// Credentials. Secret values print as `[redacted]`.
#[derive(Debug, Clone, Default)]
pub struct AuthConfig {
    /// A bearer token.
    pub token: Option<Secret>,
    /// A file holding a bearer token, re-read every [`TOKEN_REREAD_PERIOD`] (rotated service
    /// account tokens); `token` is used if it cannot be read.
    pub token_file: Option<PathBuf>,
    /// Basic auth user name.
    pub username: Option<String>,
    /// Basic auth password.
    pub password: Option<Secret>,
    /// A TLS client certificate and key.
    pub identity: Option<Identity>,
    /// An exec credential plugin.
    pub exec: Option<ExecConfig>,
    /// The cluster details passed to the plugin when it asks for them (`provideClusterInfo`).
    pub exec_cluster_info: Option<serde_json::Value>,
}

impl Config {
    /// A config for `cluster_url` with no credentials and client-go's defaults.
    pub fn new(cluster_url: http::Uri) -> Config {
        Config {
            cluster_url,
            default_namespace: "default".into(),
            root_certs: None,
            insecure_skip_tls_verify: false,
            tls_server_name: None,
            auth: AuthConfig::default(),
            connect_timeout: Some(Duration::from_secs(30)),
            request_timeout: Some(Duration::from_secs(60)),
            keep_alive: Some(Duration::from_secs(30)),
            qps: 5.0,
            burst: 10,
            max_retries: 10,
            max_object_size: DEFAULT_MAX_OBJECT_SIZE,
            user_agent: None,
            disable_compression: None,
            metadata_protobuf: true,
            protobuf: true,
            impersonate: Impersonate::default(),
            proxy_url: None,
            warning_handler: None,
        }
    }

    /// The config kubectl would use: the kubeconfig from `KUBECONFIG` or `~/.kube/config` (its
    /// current context), or else the in-cluster service account.
    pub fn infer() -> Result<Config, ConfigError> {
        if let Some(kc) = Kubeconfig::from_env()? {
            return Config::from_kubeconfig(&kc, &KubeConfigOptions::default());
        }
        match Config::incluster() {
            Ok(c) => Ok(c),
            Err(ConfigError::InCluster(why)) => Err(ConfigError::NoConfiguration(format!(
                "no kubeconfig ($KUBECONFIG unset or naming no existing file, ~/.kube/config \
                 missing) and not in a cluster ({why})"
            ))),
            Err(e) => Err(e),
        }
    }

    /// The config of one kubeconfig file's current context.
    pub fn from_kubeconfig_file(path: impl Into<PathBuf>) -> Result<Config, ConfigError> {
        let kc = Kubeconfig::read_from(path.into())?;
        Config::from_kubeconfig(&kc, &KubeConfigOptions::default())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_hides_credentials() {
        let mut c = Config::new("https://h:6443".parse().unwrap());
        c.auth.token = Some(Secret::new("tok-value"));
        c.proxy_url = Some("http://user:pass-value@proxy:3128".parse().unwrap());
        let printed = format!("{c:?}");
        assert!(printed.contains("http://proxy:3128"), "{printed}");
        assert!(!printed.contains("pass-value") && !printed.contains("tok-value"));
    }
}
