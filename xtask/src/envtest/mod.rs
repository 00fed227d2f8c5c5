//! The envtest tier: starts etcd and kube-apiserver from `KUBEBUILDER_ASSETS` (a directory with
//! both binaries, as controller-runtime's `setup-envtest` installs them), and
//! kube-controller-manager's garbage collector and namespace controller when the directory
//! holds that binary too, writes a kubeconfig,
//! and runs every integration test target with `KCACHE_TEST_KUBECONFIG` pointing at it. Both
//! processes are always stopped.

pub(crate) mod certs;
pub(crate) mod control_plane;

use std::path::{Path, PathBuf};

/// Runs the envtest tier.
pub fn run() -> Result<(), String> {
    let assets = assets()?;
    let dir = run_dir()?;
    let result = run_in(&assets, &dir);
    if result.is_ok() {
        let _ = std::fs::remove_dir_all(&dir);
    } else {
        eprintln!("xtask: logs kept in {}", dir.display());
    }
    result
}

/// The `KUBEBUILDER_ASSETS` directory, checked to hold etcd and kube-apiserver.
pub(crate) fn assets() -> Result<PathBuf, String> {
    let assets = std::env::var("KUBEBUILDER_ASSETS").map_err(|_| {
        "KUBEBUILDER_ASSETS is not set: point it at a directory with etcd and kube-apiserver (`setup-envtest use -p path 1.20.2` prints one)".to_string()
    })?;
    let assets = PathBuf::from(assets);
    for bin in ["etcd", "kube-apiserver"] {
        if !assets.join(bin).is_file() {
            return Err(format!(
                "{bin} is missing from KUBEBUILDER_ASSETS={}",
                assets.display()
            ));
        }
    }
    Ok(assets)
}

pub(crate) fn run_dir() -> Result<PathBuf, String> {
    crate::temp_dir("kcache-envtest")
}

fn run_in(assets: &Path, dir: &Path) -> Result<(), String> {
    let creds = certs::generate(dir)?;
    let plane = control_plane::start(assets, dir, &creds, true)?;
    let kubeconfig = dir.join("kubeconfig");
    write_kubeconfig(&kubeconfig, &plane.url, &creds)?;
    eprintln!("xtask: KCACHE_TEST_KUBECONFIG={}", kubeconfig.display());
    let kc = kubeconfig.display().to_string();
    let path = format!(
        "{}:{}",
        assets.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    crate::report::run_tests(
        "envtest tier against kube-apiserver from KUBEBUILDER_ASSETS",
        "envtest",
        &[
            ("KCACHE_TEST_KUBECONFIG", kc.as_str()),
            ("PATH", path.as_str()),
        ],
    )
    // `plane` drops here: kube-apiserver, then etcd, are stopped whatever the tests did.
}

pub(crate) fn write_kubeconfig(
    path: &Path,
    server: &str,
    creds: &certs::Credentials,
) -> Result<(), String> {
    let ca = std::fs::read(&creds.ca_cert).map_err(|e| format!("cannot read the CA: {e}"))?;
    let text = format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: envtest\n  cluster:\n    server: {server}\n    certificate-authority-data: {}\n\
         contexts:\n- name: envtest\n  context:\n    cluster: envtest\n    user: envtest\n    namespace: default\n\
         current-context: envtest\nusers:\n- name: envtest\n  user:\n    token: {}\n",
        certs::base64(&ca),
        creds.token
    );
    std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
}
