//! Turning a kubeconfig context into a [`Config`] (client-go's `DirectClientConfig`), with
//! kubectl's validation: every error names the file, the field and the problem.

use std::path::Path;

use base64::Engine as _;

use crate::config::kubeconfig::{AuthInfo, Cluster, Kubeconfig, NamedAuthInfo, NamedCluster};
use crate::config::{AuthConfig, Config, Identity, Impersonate};
use crate::error::ConfigError;
use crate::tls;

/// Which context, cluster and user to use instead of the kubeconfig's choices (kubectl's
/// `--context`, `--cluster`, `--user`).
#[derive(Debug, Clone, Default)]
pub struct KubeConfigOptions {
    /// The context; default: current-context.
    pub context: Option<String>,
    /// The cluster; default: the context's.
    pub cluster: Option<String>,
    /// The user; default: the context's.
    pub user: Option<String>,
}

fn field_error(path: &Path, field: String, problem: impl Into<String>) -> ConfigError {
    ConfigError::Field {
        path: path.to_path_buf(),
        field,
        problem: problem.into(),
    }
}

/// Reads `data` (base64) or `file` (a path): exactly one may be set.
fn data_or_file(
    origin: &Path,
    prefix: &str,
    (data_name, data): (&str, Option<&str>),
    (file_name, file): (&str, Option<&str>),
) -> Result<Option<Vec<u8>>, ConfigError> {
    let data = data.filter(|d| !d.is_empty());
    let file = file.filter(|f| !f.is_empty());
    match (data, file) {
        (Some(_), Some(_)) => Err(field_error(
            origin,
            format!("{prefix}.{data_name}"),
            format!("{data_name} and {file_name} are both specified; use one"),
        )),
        (Some(d), None) => {
            let compact: String = d.chars().filter(|c| !c.is_whitespace()).collect();
            base64::engine::general_purpose::STANDARD
                .decode(compact)
                .map(Some)
                .map_err(|e| {
                    field_error(
                        origin,
                        format!("{prefix}.{data_name}"),
                        format!("invalid base64: {e}"),
                    )
                })
        }
        (None, Some(f)) => std::fs::read(f).map(Some).map_err(|e| {
            field_error(
                origin,
                format!("{prefix}.{file_name}"),
                format!("cannot read {f}: {e}"),
            )
        }),
        (None, None) => Ok(None),
    }
}

impl Config {
    /// The config of a kubeconfig context: `options` choose the context, cluster and user, by
    /// default the current context's.
    pub fn from_kubeconfig(
        kc: &Kubeconfig,
        options: &KubeConfigOptions,
    ) -> Result<Config, ConfigError> {
        let missing = |problem: String| ConfigError::Missing {
            files: kc.files_display(),
            problem,
        };
        let context_name = options
            .context
            .clone()
            .or_else(|| kc.current_context.clone())
            .filter(|c| !c.is_empty())
            .ok_or_else(|| missing("current-context is not set and no context was given".into()))?;
        let context = kc
            .context(&context_name)
            .ok_or_else(|| missing(format!("context {context_name:?} not found")))?;
        let cluster_name = options
            .cluster
            .as_deref()
            .unwrap_or(&context.context.cluster);
        if cluster_name.is_empty() {
            return Err(field_error(
                &context.location_of_origin,
                format!("contexts[name={context_name}].context.cluster"),
                "must be set",
            ));
        }
        let cluster = kc.cluster(cluster_name).ok_or_else(|| {
            missing(format!(
                "cluster {cluster_name:?} (of context {context_name:?}) not found"
            ))
        })?;
        let user_name = options.user.as_deref().unwrap_or(&context.context.user);
        let user = match user_name {
            "" => None,
            name => Some(kc.user(name).ok_or_else(|| {
                missing(format!(
                    "user {name:?} (of context {context_name:?}) not found"
                ))
            })?),
        };
        let mut config = cluster_config(cluster)?;
        if let Some(ns) = context
            .context
            .namespace
            .as_deref()
            .filter(|n| !n.is_empty())
        {
            config.default_namespace = ns.to_string();
        }
        if let Some(user) = user {
            config.auth = auth_config(user, &cluster.cluster)?;
            let u = &user.user;
            config.impersonate = Impersonate {
                user_name: u.impersonate.clone().filter(|s| !s.is_empty()),
                uid: u.impersonate_uid.clone().filter(|s| !s.is_empty()),
                groups: u.impersonate_groups.clone(),
                extra: u.impersonate_user_extra.clone(),
            };
        }
        Ok(config)
    }
}

fn cluster_config(named: &NamedCluster) -> Result<Config, ConfigError> {
    let origin = &named.location_of_origin;
    let prefix = format!("clusters[name={}].cluster", named.name);
    let c = &named.cluster;
    let server = c
        .server
        .as_deref()
        .filter(|s| !s.is_empty())
        .ok_or_else(|| field_error(origin, format!("{prefix}.server"), "must be set"))?;
    let url: http::Uri = server.parse().map_err(|e| {
        field_error(
            origin,
            format!("{prefix}.server"),
            format!("invalid URL {server:?}: {e}"),
        )
    })?;
    if !matches!(url.scheme_str(), Some("https" | "http")) || url.host().is_none() {
        return Err(field_error(
            origin,
            format!("{prefix}.server"),
            format!("{server:?} is not an http(s) URL with a host"),
        ));
    }
    let proxy_url = match c.proxy_url.as_deref().filter(|p| !p.is_empty()) {
        Some(p) => Some(
            crate::proxy::parse_proxy_url(p)
                .map_err(|e| field_error(origin, format!("{prefix}.proxy-url"), e))?,
        ),
        None => None,
    };
    let ca = data_or_file(
        origin,
        &prefix,
        (
            "certificate-authority-data",
            c.certificate_authority_data.as_deref(),
        ),
        ("certificate-authority", c.certificate_authority.as_deref()),
    )?;
    if ca.is_some() && c.insecure_skip_tls_verify {
        return Err(field_error(
            origin,
            format!("{prefix}.insecure-skip-tls-verify"),
            "specifying a root certificate authority with insecure-skip-tls-verify is not allowed",
        ));
    }
    let mut config = Config::new(url);
    if let Some(pem) = ca {
        let field = if c
            .certificate_authority_data
            .as_deref()
            .is_some_and(|d| !d.is_empty())
        {
            "certificate-authority-data"
        } else {
            "certificate-authority"
        };
        let certs = tls::parse_certs(&pem)
            .map_err(|e| field_error(origin, format!("{prefix}.{field}"), e))?;
        config.root_certs = Some(certs);
    }
    config.insecure_skip_tls_verify = c.insecure_skip_tls_verify;
    config.tls_server_name = c.tls_server_name.clone().filter(|n| !n.is_empty());
    config.proxy_url = proxy_url;
    config.disable_compression = c.disable_compression;
    Ok(config)
}

fn auth_config(named: &NamedAuthInfo, cluster: &Cluster) -> Result<AuthConfig, ConfigError> {
    let origin = &named.location_of_origin;
    let prefix = format!("users[name={}].user", named.name);
    let u: &AuthInfo = &named.user;
    let has_token = u.token.as_ref().is_some_and(|t| !t.is_empty())
        || u.token_file.as_deref().is_some_and(|f| !f.is_empty());
    let has_basic = u.username.as_deref().is_some_and(|s| !s.is_empty())
        || u.password.as_ref().is_some_and(|p| !p.is_empty());
    if has_token && has_basic {
        return Err(field_error(
            origin,
            prefix,
            "more than one authentication method found: token and basic auth; only one is allowed",
        ));
    }
    if u.auth_provider.is_some() {
        return Err(field_error(
            origin,
            format!("{prefix}.auth-provider"),
            "auth-provider plugins are not supported; use an exec credential plugin",
        ));
    }
    let cert = data_or_file(
        origin,
        &prefix,
        (
            "client-certificate-data",
            u.client_certificate_data.as_deref(),
        ),
        ("client-certificate", u.client_certificate.as_deref()),
    )?;
    let key = data_or_file(
        origin,
        &prefix,
        (
            "client-key-data",
            u.client_key_data.as_ref().map(|k| k.expose()),
        ),
        ("client-key", u.client_key.as_deref()),
    )?;
    let identity = match (cert, key) {
        (None, None) => None,
        (Some(_), None) => {
            return Err(field_error(
                origin,
                format!("{prefix}.client-key"),
                "client-certificate is set but no client key",
            ))
        }
        (None, Some(_)) => {
            return Err(field_error(
                origin,
                format!("{prefix}.client-certificate"),
                "client-key is set but no client certificate",
            ))
        }
        (Some(cert), Some(key)) => Some(Identity {
            certs: tls::parse_certs(&cert)
                .map_err(|e| field_error(origin, format!("{prefix}.client-certificate"), e))?,
            key: tls::parse_key(&key)
                .map_err(|e| field_error(origin, format!("{prefix}.client-key"), e))?,
        }),
    };
    if let Some(exec) = &u.exec {
        exec.validate()
            .map_err(|e| field_error(origin, format!("{prefix}.exec"), e))?;
    }
    let exec_cluster_info = u.exec.as_ref().filter(|e| e.provide_cluster_info).map(|_| {
        let mut info = serde_json::json!({
            "server": cluster.server,
            "insecure-skip-tls-verify": cluster.insecure_skip_tls_verify,
        });
        if let Some(name) = &cluster.tls_server_name {
            info["tls-server-name"] = name.clone().into();
        }
        if let Some(ca) = &cluster.certificate_authority_data {
            info["certificate-authority-data"] = ca.clone().into();
        }
        info
    });
    Ok(AuthConfig {
        token: u.token.clone().filter(|t| !t.is_empty()),
        token_file: u
            .token_file
            .as_deref()
            .filter(|f| !f.is_empty())
            .map(Into::into),
        username: u.username.clone().filter(|s| !s.is_empty()),
        password: u.password.clone().filter(|p| !p.is_empty()),
        identity,
        exec: u.exec.clone(),
        exec_cluster_info,
    })
}
