//! Writing a kubeconfig kubectl, client-go and kcache accept, and reading the few fields
//! [`crate::TestCluster`] needs from one.

use std::path::Path;

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use serde_json::Value;

use crate::Error;

/// A kubeconfig for one cluster, one user (bearer token) and one context, namespace `default`.
pub(crate) fn render(server: &str, ca_pem: Option<&str>, token: Option<&str>) -> String {
    let ca = ca_pem.map_or(String::new(), |pem| {
        format!("    certificate-authority-data: {}\n", STANDARD.encode(pem))
    });
    let user = token.map_or("  user: {}\n".to_string(), |t| {
        format!("  user:\n    token: {t}\n")
    });
    format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: kcache\n  cluster:\n    server: {server}\n{ca}\
         contexts:\n- name: kcache\n  context:\n    cluster: kcache\n    user: kcache\n    namespace: default\n\
         current-context: kcache\nusers:\n- name: kcache\n{user}"
    )
}

/// Where and how to reach the cluster a kubeconfig's current context names.
#[derive(Debug, Clone)]
pub(crate) struct Endpoint {
    pub server: String,
    pub ca_pem: Option<String>,
    pub token: Option<String>,
}

fn named<'a>(list: &'a Value, name: &str, field: &str) -> Option<&'a Value> {
    list.as_array()?
        .iter()
        .find(|e| e["name"].as_str() == Some(name))
        .map(|e| &e[field])
}

/// Reads the current context's server, CA (data or file) and token (or token file).
pub(crate) fn read(path: &Path) -> Result<Endpoint, Error> {
    let err = |message: String| Error::Kubeconfig {
        path: path.to_path_buf(),
        message,
    };
    let text = std::fs::read_to_string(path).map_err(|e| err(e.to_string()))?;
    let doc: Value = serde_yaml_ng::from_str(&text).map_err(|e| err(e.to_string()))?;
    let ctx_name = doc["current-context"]
        .as_str()
        .ok_or_else(|| err("no current-context".into()))?;
    let ctx = named(&doc["contexts"], ctx_name, "context")
        .ok_or_else(|| err(format!("no context {ctx_name:?}")))?;
    let cluster_name = ctx["cluster"].as_str().unwrap_or_default();
    let cluster = named(&doc["clusters"], cluster_name, "cluster")
        .ok_or_else(|| err(format!("no cluster {cluster_name:?}")))?;
    let server = cluster["server"]
        .as_str()
        .ok_or_else(|| err("cluster has no server".into()))?
        .to_string();
    let ca_pem = match (
        cluster["certificate-authority-data"].as_str(),
        cluster["certificate-authority"].as_str(),
    ) {
        (Some(data), _) => {
            let raw = STANDARD
                .decode(data.trim())
                .map_err(|e| err(format!("certificate-authority-data: {e}")))?;
            Some(
                String::from_utf8(raw)
                    .map_err(|e| err(format!("certificate-authority-data: {e}")))?,
            )
        }
        (None, Some(file)) => {
            Some(std::fs::read_to_string(file).map_err(|e| err(format!("{file}: {e}")))?)
        }
        (None, None) => None,
    };
    let user_name = ctx["user"].as_str().unwrap_or_default();
    let user = named(&doc["users"], user_name, "user")
        .cloned()
        .unwrap_or_default();
    let token = match (user["token"].as_str(), user["tokenFile"].as_str()) {
        (Some(t), _) => Some(t.to_string()),
        (None, Some(f)) => Some(
            std::fs::read_to_string(f)
                .map_err(|e| err(format!("{f}: {e}")))?
                .trim()
                .to_string(),
        ),
        (None, None) => None,
    };
    Ok(Endpoint {
        server,
        ca_pem,
        token,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_back_what_it_writes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config");
        std::fs::write(
            &path,
            render("https://127.0.0.1:1", Some("PEM"), Some("tok")),
        )
        .unwrap();
        let e = read(&path).unwrap();
        assert_eq!(e.server, "https://127.0.0.1:1");
        assert_eq!(e.ca_pem.as_deref(), Some("PEM"));
        assert_eq!(e.token.as_deref(), Some("tok"));
        std::fs::write(&path, render("http://127.0.0.1:2", None, None)).unwrap();
        assert!(read(&path).unwrap().token.is_none());
        std::fs::write(&path, "kind: Config\n").unwrap();
        assert!(read(&path).is_err());
    }
}
