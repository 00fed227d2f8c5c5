//! Writing a kubeconfig kubectl, client-go and kcache accept (reading one is
//! kcache-transport's job).

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

/// PEM text of DER certificates (what [`crate::TestCluster::ca_pem`] hands out).
pub(crate) fn pem_certificates(certs: &[rustls_pki_types::CertificateDer<'static>]) -> String {
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
    use super::*;

    #[test]
    fn kcache_transport_reads_what_it_writes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config");
        let ca = rcgen::generate_simple_self_signed(vec!["localhost".into()])
            .unwrap()
            .cert
            .pem();
        std::fs::write(&path, render("https://127.0.0.1:1", Some(&ca), Some("tok"))).unwrap();
        let c = kcache_transport::Config::from_kubeconfig_file(&path).unwrap();
        assert_eq!(c.cluster_url.to_string(), "https://127.0.0.1:1/");
        assert_eq!(c.auth.token.as_ref().map(|t| t.expose()), Some("tok"));
        let roots = c.root_certs.unwrap();
        assert_eq!(pem_certificates(&roots), ca.replace("\r\n", "\n"));
        std::fs::write(&path, render("http://127.0.0.1:2", None, None)).unwrap();
        let c = kcache_transport::Config::from_kubeconfig_file(&path).unwrap();
        assert!(c.auth.token.is_none() && c.root_certs.is_none());
    }
}
