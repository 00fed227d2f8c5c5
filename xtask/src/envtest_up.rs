//! `cargo xtask envtest-up [--controller-manager] [--kubeconfig PATH]`: starts etcd and
//! kube-apiserver from `KUBEBUILDER_ASSETS` (as the envtest tier does; with
//! `--controller-manager`, kube-controller-manager's garbage collector and namespace controller
//! too, off by default: benchmarks seed pods whose owners do not exist, which a garbage
//! collector deletes), prints the kubeconfig's path on stdout and
//! keeps them running, for benchmarks and manual work against a real API server. Stop it with
//! Ctrl-C, which the terminal sends to etcd and the API server too; from a script, start it with
//! `setsid` and kill its process group (`kill -- -PGID`). Its directory (data, logs) is left in
//! the temp dir.

use std::path::PathBuf;

use crate::envtest::{assets, certs, control_plane, run_dir, write_kubeconfig};

/// Runs `envtest-up`; returns only on error.
pub fn run(args: &[String]) -> Result<(), String> {
    let controller_manager = args.first().is_some_and(|a| a == "--controller-manager");
    let target = match &args[usize::from(controller_manager)..] {
        [] => None,
        [flag, path] if flag == "--kubeconfig" => Some(PathBuf::from(path)),
        _ => {
            return Err(
                "usage: cargo xtask envtest-up [--controller-manager] [--kubeconfig PATH]".into(),
            )
        }
    };
    let assets = assets()?;
    let dir = run_dir()?;
    let creds = certs::generate(&dir)?;
    let plane = control_plane::start(&assets, &dir, &creds, controller_manager)?;
    let kubeconfig = target.unwrap_or_else(|| dir.join("kubeconfig"));
    write_kubeconfig(&kubeconfig, &plane.url, &creds)?;
    eprintln!(
        "xtask: kube-apiserver at {}, logs in {}; Ctrl-C stops it",
        plane.url,
        dir.display()
    );
    println!("{}", kubeconfig.display());
    loop {
        std::thread::park();
    }
}
