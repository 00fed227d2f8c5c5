//! Project automation. `cargo xtask ci` is the command `.ci/run` and README call.
//!
//! - `ci`: rustfmt check, clippy with `-D warnings`, then the whole test suite with every
//!   feature on.
//! - `integration --embedded`: the integration tier against kcache-testserver (also part of `ci`).
//! - `integration --envtest`: the same test bodies against a real etcd + kube-apiserver found in
//!   `KUBEBUILDER_ASSETS` (controller-runtime's `setup-envtest use -p path 1.20.2` prints one).
//! - `envtest-up [--kubeconfig PATH]`: a real etcd + kube-apiserver that keeps running (for
//!   benchmarks); prints the kubeconfig path.
//! - `soak [reflector | leaderelection] [SEEDS]`: a chaos test with many seeds, in release mode.

mod envtest;
mod envtest_up;
mod soak;

use std::process::{Command, ExitCode};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("ci") => ci(),
        Some("integration") => integration(&args[1..]),
        Some("envtest-up") => envtest_up::run(&args[1..]),
        Some("soak") => soak::run(&args[1..]),
        _ => {
            eprintln!(
                "usage: cargo xtask ci | integration [--embedded | --envtest] | envtest-up [--kubeconfig PATH] | soak [reflector | leaderelection] [SEEDS]"
            );
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Runs `cargo` with `args` from the workspace root, failing on a non-zero exit.
pub(crate) fn cargo(args: &[&str], envs: &[(&str, &str)]) -> Result<(), String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    eprintln!("xtask: cargo {}", args.join(" "));
    let status = Command::new(cargo)
        .args(args)
        .envs(envs.iter().copied())
        .current_dir(workspace_root())
        .status()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("`cargo {}` failed ({status})", args.join(" ")))
    }
}

pub(crate) fn workspace_root() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives one level below the workspace root")
        .to_path_buf()
}

/// A clean CI build gains nothing from incremental caches, which would double its target
/// directory (≈ 1.5 → 2.9 GB); CI machines have had little disk to spare.
const NO_INCREMENTAL: &[(&str, &str)] = &[("CARGO_INCREMENTAL", "0")];

fn ci() -> Result<(), String> {
    cargo(&["fmt", "--all", "--", "--check"], &[])?;
    cargo(
        &[
            "clippy",
            "--workspace",
            "--all-targets",
            "--all-features",
            "--",
            "-D",
            "warnings",
        ],
        NO_INCREMENTAL,
    )?;
    // One test build with every feature on (the Prometheus metrics tests, the facade's optional
    // crates): no test needs a feature off, and a second build would double CI's target dir.
    cargo(&["test", "--workspace", "--all-features"], NO_INCREMENTAL)
}

fn integration(args: &[String]) -> Result<(), String> {
    match args.first().map(String::as_str) {
        None | Some("--embedded") => cargo(&["test", "--workspace", "--test", "*"], &[]),
        Some("--envtest") => envtest::run(),
        Some(other) => Err(format!(
            "unknown integration tier {other:?} (use --embedded or --envtest)"
        )),
    }
}
