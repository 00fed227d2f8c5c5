//! kubeconfig fixtures for every auth method, merging, in-cluster config, and errors that name
//! the file, the field and the problem.

use std::path::{Path, PathBuf};

use kcache_transport::{Client, Config, ConfigError, KubeConfigOptions, Kubeconfig};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn load(name: &str) -> Config {
    Config::from_kubeconfig_file(fixture(name)).unwrap()
}

#[test]
fn token_with_ca_data_and_tls_server_name() {
    let c = load("token.yaml");
    assert_eq!(c.cluster_url.to_string(), "https://127.0.0.1:6443/");
    assert_eq!(c.default_namespace, "team-a");
    assert_eq!(c.tls_server_name.as_deref(), Some("kubernetes.default.svc"));
    assert_eq!(c.root_certs.as_ref().unwrap().len(), 1);
    assert_eq!(
        c.auth.token.as_ref().unwrap().expose(),
        "fixture-bearer-token"
    );
    let debug = format!("{c:?}");
    assert!(!debug.contains("fixture-bearer-token"), "{debug}");
    Client::new(c).unwrap();
}

#[test]
fn a_rate_limit_that_cannot_be_built_is_a_config_error() {
    use std::error::Error as _;
    let mut c = load("token-file.yaml");
    c.burst = 0;
    let Err(err) = Client::new(c.clone()) else {
        panic!("burst 0 with qps > 0 must be refused");
    };
    assert!(matches!(err, ConfigError::RateLimit(_)), "{err:?}");
    assert!(err.source().unwrap().to_string().contains("burst"), "{err}");
    c.qps = f32::NAN;
    c.burst = 10;
    assert!(matches!(
        Client::new(c.clone()),
        Err(ConfigError::RateLimit(_))
    ));
    c.qps = 0.0;
    c.burst = 0;
    Client::new(c).expect("qps 0 turns the limiter off, burst unused");
}

#[test]
fn token_file_and_ca_file_resolve_relative_to_the_kubeconfig() {
    let c = load("token-file.yaml");
    assert_eq!(
        c.auth.token_file.as_deref(),
        Some(fixture("token").as_path())
    );
    assert_eq!(c.cluster_url.path(), "/prefix/");
    assert_eq!(c.default_namespace, "default");
    assert!(c.root_certs.is_some());
    Client::new(c).unwrap();
}

#[test]
fn basic_auth_with_insecure_skip_verify() {
    let c = load("basic.yaml");
    assert!(c.insecure_skip_tls_verify && c.root_certs.is_none());
    assert_eq!(c.auth.username.as_deref(), Some("admin"));
    assert!(!format!("{c:?}").contains("fixture-password"));
    Client::new(c).unwrap();
}

#[test]
fn client_certificates_from_files_and_data() {
    let files = load("client-cert.yaml");
    let kc = Kubeconfig::read_from(fixture("client-cert.yaml")).unwrap();
    let opts = KubeConfigOptions {
        context: Some("data".into()),
        ..KubeConfigOptions::default()
    };
    let data = Config::from_kubeconfig(&kc, &opts).unwrap();
    let (a, b) = (
        files.auth.identity.as_ref().unwrap(),
        data.auth.identity.as_ref().unwrap(),
    );
    assert_eq!(a.certs, b.certs);
    assert!(format!("{a:?}").contains("[redacted]"));
    Client::new(files).unwrap();
    Client::new(data).unwrap();
}

#[test]
fn exec_plugins_v1_and_v1beta1() {
    let kc = Kubeconfig::read_from(fixture("exec.yaml")).unwrap();
    let v1 = Config::from_kubeconfig(&kc, &KubeConfigOptions::default()).unwrap();
    let exec = v1.auth.exec.as_ref().unwrap();
    assert_eq!(exec.command, fixture("exec-plugin.sh").to_string_lossy());
    assert!(!format!("{exec:?}").contains("from-env"));
    let info = v1.auth.exec_cluster_info.as_ref().unwrap();
    assert_eq!(info["server"], "https://127.0.0.1:6443");
    let beta = Config::from_kubeconfig(
        &kc,
        &KubeConfigOptions {
            context: Some("v1beta1".into()),
            ..KubeConfigOptions::default()
        },
    )
    .unwrap();
    assert!(beta.auth.exec_cluster_info.is_none());
}

#[test]
fn merged_files_follow_kubectl_precedence() {
    let kc = Kubeconfig::read_merged(&[fixture("token.yaml"), fixture("basic.yaml")]).unwrap();
    assert_eq!(kc.current_context.as_deref(), Some("token"));
    assert_eq!(kc.files.len(), 2);
    // A context of the second file is usable by name.
    let c = Config::from_kubeconfig(
        &kc,
        &KubeConfigOptions {
            context: Some("basic".into()),
            ..KubeConfigOptions::default()
        },
    )
    .unwrap();
    assert!(c.insecure_skip_tls_verify);
    let swapped = Kubeconfig::read_merged(&[fixture("basic.yaml"), fixture("token.yaml")]).unwrap();
    assert_eq!(swapped.current_context.as_deref(), Some("basic"));
}

fn err(name: &str) -> String {
    Config::from_kubeconfig_file(fixture(name))
        .unwrap_err()
        .to_string()
}

#[test]
fn broken_kubeconfigs_name_file_field_and_problem() {
    let e = err("missing-context.yaml");
    assert!(
        e.contains("missing-context.yaml") && e.contains("context \"nowhere\" not found"),
        "{e}"
    );
    let e = err("bad-base64.yaml");
    assert!(
        e.contains("bad-base64.yaml")
            && e.contains("clusters[name=c].cluster.certificate-authority-data")
            && e.contains("invalid base64"),
        "{e}"
    );
    let e = err("missing-ca-file.yaml");
    assert!(
        e.contains("missing-ca-file.yaml")
            && e.contains("certificate-authority")
            && e.contains("does-not-exist.pem"),
        "{e}"
    );
    let e = Config::from_kubeconfig_file(fixture("broken-yaml.yaml")).unwrap_err();
    assert!(matches!(e, ConfigError::Yaml { line: 6, .. }), "{e}");
    assert!(e.to_string().contains("broken-yaml.yaml: line 6"), "{e}");
    let e = err("no-such-file.yaml");
    assert!(
        e.contains("cannot read kubeconfig") && e.contains("no-such-file.yaml"),
        "{e}"
    );
}

#[test]
fn disable_compression_is_kept_as_written_and_unset_leaves_the_choice_to_the_address() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config");
    for (field, server, want, gzip) in [
        ("", "https://127.0.0.1:6443", None, false),
        ("", "https://10.0.0.1:6443", None, true),
        (
            ", disable-compression: false",
            "https://127.0.0.1:6443",
            Some(false),
            true,
        ),
        (
            ", disable-compression: true",
            "https://10.0.0.1:6443",
            Some(true),
            false,
        ),
    ] {
        std::fs::write(
            &path,
            format!(
                "current-context: x\ncontexts: [{{name: x, context: {{cluster: c, user: ''}}}}]\n\
                 clusters: [{{name: c, cluster: {{server: '{server}'{field}}}}}]\n"
            ),
        )
        .unwrap();
        let c = Config::from_kubeconfig_file(&path).unwrap();
        assert_eq!(c.disable_compression, want, "{field} {server}");
        assert_eq!(c.asks_for_gzip(), gzip, "{field} {server}");
    }
}

#[test]
fn conflicting_fields_are_rejected_like_kubectl() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            "clusters: [{name: c, cluster: {server: 'https://h', certificate-authority-data: eA==, certificate-authority: /x}}]",
            "both specified",
        ),
        (
            "clusters: [{name: c, cluster: {server: 'https://h', certificate-authority: CA, insecure-skip-tls-verify: true}}]",
            "insecure-skip-tls-verify",
        ),
        ("clusters: [{name: c, cluster: {}}]", "clusters[name=c].cluster.server: must be set"),
        ("clusters: [{name: c, cluster: {server: 'ftp://h'}}]", "not an http(s) URL"),
        (
            "clusters: [{name: c, cluster: {server: 'https://h'}}]\nusers: [{name: u, user: {token: t, username: a}}]",
            "more than one authentication method",
        ),
        (
            "clusters: [{name: c, cluster: {server: 'https://h'}}]\nusers: [{name: u, user: {client-certificate: CA}}]",
            "no client key",
        ),
        (
            "clusters: [{name: c, cluster: {server: 'https://h'}}]\nusers: [{name: u, user: {exec: {command: x, apiVersion: client.authentication.k8s.io/v1}}}]",
            "users[name=u].user.exec: interactiveMode",
        ),
        (
            "clusters: [{name: c, cluster: {server: 'https://h'}}]\nusers: [{name: u, user: {auth-provider: {name: gcp}}}]",
            "auth-provider",
        ),
        ("clusters: [{name: c, cluster: {server: 'https://h'}}]\nusers: []", "user \"u\""),
    ];
    std::fs::copy(fixture("ca.pem"), dir.path().join("CA")).unwrap();
    for (i, (body, want)) in cases.iter().enumerate() {
        let path = dir.path().join(format!("case{i}"));
        let text = format!("current-context: x\ncontexts: [{{name: x, context: {{cluster: c, user: u}}}}]\n{body}\n");
        let text = if body.contains("users") {
            text
        } else {
            text.replace("user: u", "user: ''")
        };
        std::fs::write(&path, text).unwrap();
        let e = Config::from_kubeconfig_file(&path).unwrap_err().to_string();
        assert!(
            e.contains(want) && e.contains(&format!("case{i}")),
            "case {i}: {e}"
        );
    }
}

#[test]
fn in_cluster_config_reads_the_service_account() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("token"), "sa-token").unwrap();
    std::fs::copy(fixture("ca.pem"), dir.path().join("ca.crt")).unwrap();
    std::fs::write(dir.path().join("namespace"), "kube-system\n").unwrap();
    let c = Config::incluster_from(Some("10.0.0.1"), Some("443"), None, dir.path()).unwrap();
    assert_eq!(c.cluster_url.to_string(), "https://10.0.0.1:443/");
    assert_eq!(c.default_namespace, "kube-system");
    assert_eq!(
        c.auth.token_file.as_deref(),
        Some(dir.path().join("token").as_path())
    );
    let v6 =
        Config::incluster_from(Some("fd00::1"), Some("6443"), Some("pods"), dir.path()).unwrap();
    assert_eq!(v6.cluster_url.to_string(), "https://[fd00::1]:6443/");
    assert_eq!(v6.default_namespace, "pods");
    Client::new(c).unwrap();
    let e = Config::incluster_from(None, Some("443"), None, dir.path()).unwrap_err();
    assert!(e.to_string().contains("KUBERNETES_SERVICE_HOST"), "{e}");
    std::fs::remove_file(dir.path().join("ca.crt")).unwrap();
    let e = Config::incluster_from(Some("h"), Some("1"), None, dir.path()).unwrap_err();
    assert!(e.to_string().contains("ca.crt"), "{e}");
}
