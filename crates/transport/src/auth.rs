//! Credentials on each request: a static bearer token or basic auth, a token file re-read
//! periodically, or an exec plugin's token and client certificate.

use std::path::PathBuf;
use std::sync::Arc;

use base64::Engine as _;
use http::HeaderValue;
use kcache_core::Error;
use parking_lot::Mutex;
use tokio::time::Instant;

use crate::config::exec::ExecAuth;
use crate::config::{AuthConfig, Identity, TOKEN_REREAD_PERIOD};
use crate::error::ConfigError;
use crate::secret::Secret;
use crate::tls::{self, ClientCertSlot};

/// How a client authenticates.
#[derive(Debug)]
pub(crate) struct Auth {
    header: Header,
    exec: Option<ExecAuth>,
    slot: Arc<ClientCertSlot>,
    /// The exec plugin's last certificate, to refill the slot only when it changes.
    exec_cert: Mutex<Option<String>>,
}

#[derive(Debug)]
enum Header {
    None,
    Static(HeaderValue),
    TokenFile(TokenFile),
}

/// A token file read at most once per [`TOKEN_REREAD_PERIOD`].
#[derive(Debug)]
struct TokenFile {
    path: PathBuf,
    fallback: Option<Secret>,
    cached: Mutex<Option<(HeaderValue, Instant)>>,
}

fn sensitive(v: String) -> Result<HeaderValue, String> {
    let mut h =
        HeaderValue::try_from(v).map_err(|_| "contains characters not allowed in a header")?;
    h.set_sensitive(true);
    Ok(h)
}

fn bearer(token: &str) -> Result<HeaderValue, String> {
    sensitive(format!("Bearer {}", token.trim()))
}

impl TokenFile {
    async fn header(&self) -> Result<HeaderValue, Error> {
        if let Some((h, at)) = self.cached.lock().as_ref() {
            if at.elapsed() < TOKEN_REREAD_PERIOD {
                return Ok(h.clone());
            }
        }
        let read = tokio::fs::read_to_string(&self.path).await;
        let token = match (read, &self.fallback) {
            (Ok(t), _) if !t.trim().is_empty() => Secret::new(t),
            (_, Some(fallback)) => fallback.clone(),
            (Ok(_), None) => {
                return Err(auth_error(format!(
                    "token file {} is empty",
                    self.path.display()
                )))
            }
            (Err(e), None) => {
                return Err(auth_error(format!(
                    "cannot read token file {}: {e}",
                    self.path.display()
                )))
            }
        };
        let h = bearer(token.expose())
            .map_err(|e| auth_error(format!("token file {}: {e}", self.path.display())))?;
        *self.cached.lock() = Some((h.clone(), Instant::now()));
        Ok(h)
    }
}

fn auth_error(msg: String) -> Error {
    Error::Connect(msg.into())
}

impl Auth {
    /// Checks and prepares the credentials; puts a configured client certificate in `slot`.
    pub(crate) fn new(cfg: &AuthConfig, slot: Arc<ClientCertSlot>) -> Result<Auth, ConfigError> {
        let bad = |what: &str, e: String| ConfigError::Tls(format!("{what}: {e}"));
        let header = if let Some(path) = &cfg.token_file {
            Header::TokenFile(TokenFile {
                path: path.clone(),
                fallback: cfg.token.clone(),
                cached: Mutex::new(None),
            })
        } else if let Some(token) = &cfg.token {
            Header::Static(bearer(token.expose()).map_err(|e| bad("token", e))?)
        } else if cfg.username.is_some() || cfg.password.is_some() {
            let pair = format!(
                "{}:{}",
                cfg.username.as_deref().unwrap_or(""),
                cfg.password.as_ref().map(Secret::expose).unwrap_or("")
            );
            let encoded = base64::engine::general_purpose::STANDARD.encode(pair);
            Header::Static(sensitive(format!("Basic {encoded}")).map_err(|e| bad("basic auth", e))?)
        } else {
            Header::None
        };
        if let Some(id) = &cfg.identity {
            slot.set(id).map_err(|e| bad("client certificate", e))?;
        }
        Ok(Auth {
            header,
            exec: cfg
                .exec
                .clone()
                .map(|e| ExecAuth::new(e, cfg.exec_cluster_info.clone())),
            slot,
            exec_cert: Mutex::new(None),
        })
    }

    /// The `Authorization` header for the next request, running the exec plugin when its
    /// credential is missing or expired. Failures are connect errors: nothing was sent.
    pub(crate) async fn authorization(&self) -> Result<Option<HeaderValue>, Error> {
        match &self.header {
            Header::Static(h) => return Ok(Some(h.clone())),
            Header::TokenFile(f) => return f.header().await.map(Some),
            Header::None => {}
        }
        let Some(exec) = &self.exec else {
            return Ok(None);
        };
        let cred = exec
            .credential()
            .await
            .map_err(|e| Error::Connect(Box::new(e)))?;
        if let (Some(cert), Some(key)) = (&cred.client_certificate_data, &cred.client_key_data) {
            let mut last = self.exec_cert.lock();
            if last.as_deref() != Some(cert.as_str()) {
                let identity = Identity {
                    certs: tls::parse_certs(cert.as_bytes())
                        .map_err(|e| auth_error(format!("exec plugin certificate: {e}")))?,
                    key: tls::parse_key(key.expose().as_bytes())
                        .map_err(|e| auth_error(format!("exec plugin key: {e}")))?,
                };
                self.slot
                    .set(&identity)
                    .map_err(|e| auth_error(format!("exec plugin key: {e}")))?;
                *last = Some(cert.clone());
            }
        }
        match &cred.token {
            Some(t) => bearer(t.expose())
                .map(Some)
                .map_err(|e| auth_error(format!("exec plugin token: {e}"))),
            None => Ok(None),
        }
    }

    /// The server answered 401: forget cached credentials so the next request fetches new ones.
    pub(crate) async fn unauthorized(&self) {
        if let Header::TokenFile(f) = &self.header {
            *f.cached.lock() = None;
        }
        if let Some(exec) = &self.exec {
            exec.invalidate().await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn token_file_is_reread_after_the_period() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("token");
        std::fs::write(&path, "one\n").unwrap();
        let cfg = AuthConfig {
            token_file: Some(path.clone()),
            ..AuthConfig::default()
        };
        let auth = Auth::new(&cfg, Arc::default()).unwrap();
        let get = || async { auth.authorization().await.unwrap().unwrap() };
        assert_eq!(get().await, "Bearer one");
        std::fs::write(&path, "two").unwrap();
        tokio::time::advance(TOKEN_REREAD_PERIOD / 2).await;
        assert_eq!(get().await, "Bearer one");
        tokio::time::advance(TOKEN_REREAD_PERIOD / 2).await;
        assert_eq!(get().await, "Bearer two");
        assert!(get().await.is_sensitive());
        std::fs::remove_file(&path).unwrap();
        auth.unauthorized().await;
        let e = auth.authorization().await.unwrap_err();
        assert!(
            e.is_connect()
                && kcache_core::ErrorChain(&e)
                    .to_string()
                    .contains("cannot read token file"),
            "{e}"
        );
    }

    #[tokio::test]
    async fn basic_and_static_tokens() {
        let basic = AuthConfig {
            username: Some("admin".into()),
            password: Some(Secret::new("s3cret")),
            ..AuthConfig::default()
        };
        let a = Auth::new(&basic, Arc::default()).unwrap();
        assert_eq!(
            a.authorization().await.unwrap().unwrap(),
            "Basic YWRtaW46czNjcmV0"
        );
        assert!(!format!("{basic:?}").contains("s3cret"));
        let none = Auth::new(&AuthConfig::default(), Arc::default()).unwrap();
        assert!(none.authorization().await.unwrap().is_none());
        let bad = AuthConfig {
            token: Some(Secret::new("a\nb")),
            ..AuthConfig::default()
        };
        assert!(Auth::new(&bad, Arc::default()).is_err());
    }

    fn exec_auth(dir: &std::path::Path, command: &str) -> Auth {
        use crate::config::exec::{ExecConfig, ExecEnvVar, EXEC_API_VERSIONS};
        let cfg = AuthConfig {
            exec: Some(ExecConfig {
                command: dir.join(command).to_string_lossy().into_owned(),
                args: Some(vec!["get-token".into()]),
                env: Some(vec![ExecEnvVar {
                    name: "FIXTURE_SECRET".into(),
                    value: Secret::new("from-env"),
                }]),
                api_version: EXEC_API_VERSIONS[0].into(),
                install_hint: Some("see the fixture".into()),
                provide_cluster_info: true,
                interactive_mode: Some("Never".into()),
            }),
            exec_cluster_info: Some(serde_json::json!({"server": "https://h:1"})),
            ..AuthConfig::default()
        };
        Auth::new(&cfg, Arc::default()).unwrap()
    }

    #[tokio::test]
    async fn exec_plugin_is_cached_until_expiry_or_401() {
        let dir = tempfile::tempdir().unwrap();
        let fixture = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/exec-plugin.sh");
        std::fs::copy(fixture, dir.path().join("plugin.sh")).unwrap();
        let runs = || {
            std::fs::read_to_string(dir.path().join("count"))
                .unwrap()
                .lines()
                .count()
        };
        let auth = exec_auth(dir.path(), "plugin.sh");
        assert_eq!(
            auth.authorization().await.unwrap().unwrap(),
            "Bearer exec-token"
        );
        assert_eq!(
            auth.authorization().await.unwrap().unwrap(),
            "Bearer exec-token"
        );
        assert_eq!(runs(), 1);
        let info: serde_json::Value =
            serde_json::from_slice(&std::fs::read(dir.path().join("exec-info.json")).unwrap())
                .unwrap();
        assert_eq!(
            info,
            serde_json::json!({"apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential",
                "spec": {"interactive": false, "cluster": {"server": "https://h:1"}}})
        );
        assert_eq!(
            std::fs::read_to_string(dir.path().join("args")).unwrap(),
            "get-token from-env"
        );
        // A 401 forgets the credential; an expired one is fetched again on every use.
        std::fs::write(dir.path().join("exec-token"), "second").unwrap();
        std::fs::write(dir.path().join("expiration"), "2000-01-01T00:00:00Z").unwrap();
        auth.unauthorized().await;
        assert_eq!(
            auth.authorization().await.unwrap().unwrap(),
            "Bearer second"
        );
        assert_eq!(runs(), 2);
        auth.authorization().await.unwrap();
        assert_eq!(runs(), 3);
        std::fs::write(dir.path().join("expiration"), "2999-01-01T00:00:00Z").unwrap();
        auth.authorization().await.unwrap();
        auth.authorization().await.unwrap();
        assert_eq!(runs(), 4);
        std::fs::write(dir.path().join("fail"), "").unwrap();
        auth.unauthorized().await;
        let e = auth.authorization().await.unwrap_err();
        let e = kcache_core::ErrorChain(&e).to_string();
        assert!(
            e.contains("plugin failure requested") && e.contains("see the fixture"),
            "{e}"
        );
        let missing = exec_auth(dir.path(), "no-such-plugin");
        let e = missing.authorization().await.unwrap_err();
        assert!(
            e.is_connect()
                && kcache_core::ErrorChain(&e)
                    .to_string()
                    .contains("cannot run"),
            "{e}"
        );
    }
}
