//! Writing a kubeconfig kubectl, client-go and kcache accept (reading one is
//! kcache-transport's job; kcache-testing's tests check it reads what this writes).

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;

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
