//! Project automation. `cargo xtask ci` is the command `.ci/run` and README call.
//!
//! - `ci`: every integration test file compiled (`test_layout`), no import circle between files
//!   (`import_cycles`), docs/architecture.md's dependency table against `cargo metadata`
//!   (`dependency_table`), rustfmt check, clippy with `-D warnings`, the whole test suite with
//!   every feature on, `cargo publish --workspace --dry-run` of every published crate
//!   (`publish`), then the test suite again on the workspace's `rust-version` toolchain (`msrv`).
//! - `integration --embedded`: the integration tier against kcache-testserver (also part of `ci`).
//! - `integration --envtest`: the same test bodies against a real etcd + kube-apiserver found in
//!   `KUBEBUILDER_ASSETS` (controller-runtime's `setup-envtest use -p path 1.20.2` prints one).
//! - `integration --kind [--cluster NAME] [--image IMAGE] [--kind PATH] [--keep]`: the same test
//!   bodies against a full kind cluster (reused if it exists, else created and deleted after).
//! - `e2e --kind [--cluster NAME] [--keep] [--base-image IMG]`: the sample-controller built into
//!   an image, deployed in a kind cluster (default `kcache-e2e`) and checked end to end.
//! - `envtest-up [--controller-manager] [--kubeconfig PATH]`: a real etcd + kube-apiserver
//!   (and kube-controller-manager's garbage collector and namespace controller) that keeps
//!   running (for benchmarks); prints the kubeconfig path.
//! - `discovery-snapshot [--out DIR]`: kube-apiserver 1.20.2's discovery, OpenAPI index, definitions and
//!   bootstrap objects, written as kcache-testserver's reference data.
//! - `soak [reflector | leaderelection | sharding] [SEEDS]`: a chaos test with many seeds, in release mode.
//! - `fuzz [--seconds N] [TARGET...]`: each fuzz target of `fuzz/` run with cargo-fuzz for a
//!   bounded time (60 s by default).

mod crd_openapi_snapshot;
mod dependency_table;
mod discovery_snapshot;
mod e2e;
mod envtest;
mod envtest_up;
mod fuzz;
mod import_cycles;
mod integration_kind;
mod kind;
mod msrv;
mod protobuf_schema;
mod publish;
mod report;
mod snapshot_kubectl;
mod soak;
mod test_layout;

use std::process::{Command, ExitCode};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("ci") => ci().map_err(Failure::from),
        Some("integration") => integration(&args[1..]),
        Some("e2e") => e2e::run(&args[1..]),
        Some("envtest-up") => envtest_up::run(&args[1..]).map_err(Failure::from),
        Some("soak") => soak::run(&args[1..]).map_err(Failure::from),
        Some("discovery-snapshot") => discovery_snapshot::run(&args[1..]).map_err(Failure::from),
        Some("fuzz") => fuzz::run(&args[1..]),
        Some("protobuf-schema") => protobuf_schema::run(&args[1..]).map_err(Failure::from),
        _ => {
            eprintln!(
                "usage: cargo xtask ci | integration [--embedded | --envtest | --kind [--cluster NAME] [--image IMAGE] [--kind PATH] [--keep]] | e2e --kind [--cluster NAME] [--keep] [--base-image IMG] | envtest-up [--controller-manager] [--kubeconfig PATH] | soak [reflector | leaderelection | sharding] [SEEDS] | discovery-snapshot [--out DIR] | protobuf-schema [--src DIR] [--out FILE] | fuzz [--seconds N] [TARGET...]"
            );
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: {}", e.message);
            ExitCode::from(e.code)
        }
    }
}

/// Why a command failed and its exit code: 1 for a failure, 2 for bad usage or a missing
/// prerequisite (a tool or daemon the command cannot run without).
#[derive(Debug)]
pub(crate) struct Failure {
    pub message: String,
    pub code: u8,
}

impl Failure {
    /// Bad arguments (exit code 2).
    pub(crate) fn usage(message: String) -> Failure {
        Failure { message, code: 2 }
    }

    /// A missing prerequisite (exit code 2).
    pub(crate) fn missing(message: String) -> Failure {
        Failure { message, code: 2 }
    }
}

impl From<String> for Failure {
    fn from(message: String) -> Failure {
        Failure { message, code: 1 }
    }
}

/// A new directory in the temp dir named `prefix-PID-NANOS`.
pub(crate) fn temp_dir(prefix: &str) -> Result<std::path::PathBuf, String> {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let dir = std::env::temp_dir().join(format!("{prefix}-{}-{nanos}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    Ok(dir)
}

/// Runs `cargo` with `args` from the workspace root, failing on a non-zero exit.
pub(crate) fn cargo(args: &[&str], envs: &[(&str, &str)]) -> Result<(), String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    eprintln!("xtask: cargo {}", args.join(" "));
    let mut command = Command::new(cargo);
    // `cargo xtask` (a `cargo run`) hands xtask's own package variables to us; build scripts
    // that watch them (ring's `rerun-if-env-changed=CARGO_PKG_NAME`, ...) would then rebuild,
    // and rebuild again on the next plain `cargo build`.
    for (name, _) in std::env::vars_os() {
        let name = name.to_string_lossy();
        if name.starts_with("CARGO_PKG_") || name.starts_with("CARGO_MANIFEST_") {
            command.env_remove(name.as_ref());
        }
    }
    let status = command
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

/// The checkout xtask works on: the one `cargo xtask` ran in (cargo sets `CARGO_MANIFEST_DIR` for
/// the binary it runs), else the one the binary was built from. Two checkouts sharing a target
/// directory share one xtask binary (cargo hashes workspace members by their relative path), so
/// the path compiled in may name the other checkout.
pub(crate) fn workspace_root() -> std::path::PathBuf {
    let manifest_dir = std::env::var_os("CARGO_MANIFEST_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| env!("CARGO_MANIFEST_DIR").into());
    manifest_dir
        .parent()
        .expect("xtask lives one level below the workspace root")
        .to_path_buf()
}

/// CI machines have had little disk to spare (a build once failed with none left). A clean CI
/// build gains nothing from incremental caches, which would double its target directory, nor
/// from debug info: without it (and with std's stripped, which cargo then does) the test
/// binaries are a third smaller. Panics still name their file and line.
pub(crate) const CI_BUILD: &[(&str, &str)] =
    &[("CARGO_INCREMENTAL", "0"), ("CARGO_PROFILE_DEV_DEBUG", "0")];

fn ci() -> Result<(), String> {
    test_layout::check(&workspace_root())?;
    import_cycles::check(&workspace_root())?;
    dependency_table::check(&workspace_root())?;
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
        CI_BUILD,
    )?;
    // One test build with every feature on (the Prometheus metrics tests, the facade's optional
    // crates): no test needs a feature off, and a second build would double CI's target dir.
    cargo(&["test", "--workspace", "--all-features"], CI_BUILD)?;
    publish::dry_run()?;
    msrv::test()
}

fn integration(args: &[String]) -> Result<(), Failure> {
    match args.first().map(String::as_str) {
        None | Some("--embedded") => Ok(cargo(&["test", "--workspace", "--test", "*"], &[])?),
        Some("--envtest") => Ok(envtest::run()?),
        Some("--kind") => integration_kind::run(&args[1..]),
        Some(other) => Err(Failure::usage(format!(
            "unknown integration tier {other:?} (use --embedded, --envtest or --kind)"
        ))),
    }
}
