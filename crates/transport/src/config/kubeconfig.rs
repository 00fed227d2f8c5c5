//! The kubeconfig file format (`clientcmd/api/v1`), one file at a time.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Deserializer};

use crate::config::exec::ExecConfig;
use crate::error::ConfigError;
use crate::secret::Secret;

/// A kubeconfig: one file, or several merged with kubectl's rules ([`Kubeconfig::merge`]).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct Kubeconfig {
    /// Named clusters.
    #[serde(default, deserialize_with = "null_as_default")]
    pub clusters: Vec<NamedCluster>,
    /// Named users (`AuthInfo`s).
    #[serde(default, deserialize_with = "null_as_default")]
    pub users: Vec<NamedAuthInfo>,
    /// Named contexts.
    #[serde(default, deserialize_with = "null_as_default")]
    pub contexts: Vec<NamedContext>,
    /// The context used when none is asked for.
    #[serde(default)]
    pub current_context: Option<String>,
    /// The files this config was read from, in precedence order.
    #[serde(skip)]
    pub files: Vec<PathBuf>,
}

/// A cluster entry.
#[derive(Debug, Clone, Deserialize)]
pub struct NamedCluster {
    /// The entry's name.
    pub name: String,
    /// The cluster.
    #[serde(default)]
    pub cluster: Cluster,
    /// The file the entry was read from (client-go's `LocationOfOrigin`).
    #[serde(skip)]
    pub location_of_origin: PathBuf,
}

/// How to reach and trust an API server.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct Cluster {
    /// `https://host:port[/prefix]`.
    #[serde(default)]
    pub server: Option<String>,
    /// PEM CA bundle file (relative paths resolve against the kubeconfig's directory).
    #[serde(default)]
    pub certificate_authority: Option<String>,
    /// Base64 of a PEM CA bundle.
    #[serde(default)]
    pub certificate_authority_data: Option<String>,
    /// Accept any server certificate.
    #[serde(default)]
    pub insecure_skip_tls_verify: bool,
    /// The name to verify the server certificate against, instead of the URL's host.
    #[serde(default)]
    pub tls_server_name: Option<String>,
    /// A proxy to reach the server through: `http`, `https` or `socks5`.
    #[serde(default)]
    pub proxy_url: Option<String>,
    /// Do not ask for gzip-compressed responses (`false`: ask, even of a loopback server);
    /// unset: [`Config::asks_for_gzip`](crate::Config::asks_for_gzip) decides.
    #[serde(default)]
    pub disable_compression: Option<bool>,
}

/// A user entry.
#[derive(Debug, Clone, Deserialize)]
pub struct NamedAuthInfo {
    /// The entry's name.
    pub name: String,
    /// The credentials.
    #[serde(default)]
    pub user: AuthInfo,
    /// The file the entry was read from.
    #[serde(skip)]
    pub location_of_origin: PathBuf,
}

/// Credentials (`AuthInfo`). Secrets print as `[redacted]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct AuthInfo {
    /// PEM client certificate file.
    #[serde(default)]
    pub client_certificate: Option<String>,
    /// Base64 of a PEM client certificate.
    #[serde(default)]
    pub client_certificate_data: Option<String>,
    /// PEM private key file.
    #[serde(default)]
    pub client_key: Option<String>,
    /// Base64 of a PEM private key.
    #[serde(default)]
    pub client_key_data: Option<Secret>,
    /// A bearer token.
    #[serde(default)]
    pub token: Option<Secret>,
    /// A file holding a bearer token, re-read periodically.
    #[serde(default, rename = "tokenFile")]
    pub token_file: Option<String>,
    /// Basic auth user name.
    #[serde(default)]
    pub username: Option<String>,
    /// Basic auth password.
    #[serde(default)]
    pub password: Option<Secret>,
    /// An exec credential plugin.
    #[serde(default)]
    pub exec: Option<ExecConfig>,
    /// A legacy auth provider (not supported: rejected when the user is used).
    #[serde(default)]
    pub auth_provider: Option<serde_yaml_ng::Value>,
    /// The user to impersonate.
    #[serde(default, rename = "as")]
    pub impersonate: Option<String>,
    /// The uid to impersonate.
    #[serde(default, rename = "as-uid")]
    pub impersonate_uid: Option<String>,
    /// The groups to impersonate.
    #[serde(default, rename = "as-groups", deserialize_with = "null_as_default")]
    pub impersonate_groups: Vec<String>,
    /// Extra information about the impersonated user.
    #[serde(
        default,
        rename = "as-user-extra",
        deserialize_with = "null_as_default"
    )]
    pub impersonate_user_extra: std::collections::BTreeMap<String, Vec<String>>,
}

/// A context entry.
#[derive(Debug, Clone, Deserialize)]
pub struct NamedContext {
    /// The entry's name.
    pub name: String,
    /// The context.
    #[serde(default)]
    pub context: Context,
    /// The file the entry was read from.
    #[serde(skip)]
    pub location_of_origin: PathBuf,
}

/// A (cluster, user, namespace) triple.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Context {
    /// The cluster entry's name.
    #[serde(default)]
    pub cluster: String,
    /// The user entry's name (empty: no credentials).
    #[serde(default)]
    pub user: String,
    /// The default namespace.
    #[serde(default)]
    pub namespace: Option<String>,
}

fn null_as_default<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

impl Kubeconfig {
    /// Reads one file. Relative file references inside it (certificate-authority,
    /// client-certificate, client-key, tokenFile, and an exec command containing a `/`) are
    /// resolved against the file's directory, as kubectl does.
    pub fn read_from(path: impl AsRef<Path>) -> Result<Kubeconfig, ConfigError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            what: "kubeconfig",
            path: path.to_path_buf(),
            source,
        })?;
        Kubeconfig::parse(&text, path)
    }

    /// Parses the text of a kubeconfig that was read from `path`.
    pub fn parse(text: &str, path: &Path) -> Result<Kubeconfig, ConfigError> {
        let mut kc: Kubeconfig = if text.trim().is_empty() {
            Kubeconfig::default()
        } else {
            serde_yaml_ng::from_str(text).map_err(|e| {
                let (line, column) = e.location().map_or((0, 0), |l| (l.line(), l.column()));
                ConfigError::Yaml {
                    path: path.to_path_buf(),
                    line,
                    column,
                    message: e.to_string(),
                }
            })?
        };
        let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        let dir = std::path::absolute(&dir).unwrap_or(dir);
        for c in &mut kc.clusters {
            c.location_of_origin = path.to_path_buf();
            resolve(&dir, &mut c.cluster.certificate_authority);
        }
        for u in &mut kc.users {
            u.location_of_origin = path.to_path_buf();
            resolve(&dir, &mut u.user.client_certificate);
            resolve(&dir, &mut u.user.client_key);
            resolve(&dir, &mut u.user.token_file);
            if let Some(exec) = &mut u.user.exec {
                if exec.command.contains('/') {
                    let mut cmd = Some(std::mem::take(&mut exec.command));
                    resolve(&dir, &mut cmd);
                    exec.command = cmd.unwrap_or_default();
                }
            }
        }
        for c in &mut kc.contexts {
            c.location_of_origin = path.to_path_buf();
        }
        kc.files = vec![path.to_path_buf()];
        Ok(kc)
    }

    /// The context entry with this name.
    pub fn context(&self, name: &str) -> Option<&NamedContext> {
        self.contexts.iter().find(|c| c.name == name)
    }

    /// The cluster entry with this name.
    pub fn cluster(&self, name: &str) -> Option<&NamedCluster> {
        self.clusters.iter().find(|c| c.name == name)
    }

    /// The user entry with this name.
    pub fn user(&self, name: &str) -> Option<&NamedAuthInfo> {
        self.users.iter().find(|c| c.name == name)
    }

    /// The files, for error messages.
    pub(crate) fn files_display(&self) -> String {
        let names: Vec<_> = self.files.iter().map(|f| f.display().to_string()).collect();
        if names.is_empty() {
            "(no files)".to_string()
        } else {
            names.join(":")
        }
    }
}

fn resolve(dir: &Path, field: &mut Option<String>) {
    if let Some(p) = field.as_mut().filter(|p| !p.is_empty()) {
        if Path::new(p).is_relative() {
            // Like Go's filepath.Join, drop `.` components.
            let rel: PathBuf = Path::new(p)
                .components()
                .filter(|c| !matches!(c, std::path::Component::CurDir))
                .collect();
            *p = dir.join(rel).to_string_lossy().into_owned();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yaml_errors_name_the_file_and_line() {
        let text = "clusters:\n- name: a\n  cluster:\n    server: [\n";
        let e = Kubeconfig::parse(text, Path::new("/cfg/bad.yaml")).unwrap_err();
        let msg = e.to_string();
        assert!(msg.starts_with("kubeconfig /cfg/bad.yaml: line "), "{msg}");
        let ConfigError::Yaml { line, .. } = e else {
            panic!()
        };
        assert!(line >= 4, "{line}");
        let wrong_shape = "contexts: 5\n";
        let e = Kubeconfig::parse(wrong_shape, Path::new("/x")).unwrap_err();
        assert!(e.to_string().contains("line 1"), "{e}");
    }

    #[test]
    fn resolves_relative_paths_against_the_file() {
        let text = "clusters:\n- name: c\n  cluster: {server: 'https://h', certificate-authority: ca.pem}\nusers:\n- name: u\n  user:\n    client-certificate: /abs/cert.pem\n    tokenFile: tok\n    exec: {command: ./plugin.sh, apiVersion: client.authentication.k8s.io/v1beta1}\n- name: v\n  user:\n    exec: {command: kubectl-oidc, apiVersion: client.authentication.k8s.io/v1beta1}\ncontexts: null\n";
        let kc = Kubeconfig::parse(text, Path::new("/etc/kube/config")).unwrap();
        assert_eq!(
            kc.cluster("c")
                .unwrap()
                .cluster
                .certificate_authority
                .as_deref(),
            Some("/etc/kube/ca.pem")
        );
        let u = &kc.user("u").unwrap().user;
        assert_eq!(u.client_certificate.as_deref(), Some("/abs/cert.pem"));
        assert_eq!(u.token_file.as_deref(), Some("/etc/kube/tok"));
        assert_eq!(u.exec.as_ref().unwrap().command, "/etc/kube/plugin.sh");
        assert_eq!(
            kc.user("v").unwrap().user.exec.as_ref().unwrap().command,
            "kubectl-oidc"
        );
        assert!(kc.contexts.is_empty());
        assert_eq!(
            kc.user("u").unwrap().location_of_origin,
            Path::new("/etc/kube/config")
        );
    }
}
