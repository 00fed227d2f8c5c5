//! `cargo xtask e2e --kind [--cluster NAME] [--keep] [--base-image IMG]`: the sample-controller
//! deployed in a full kind cluster, checked end to end. Exits 0 only if every step holds; each
//! step prints its duration, and a summary ends the run.
//!
//! The cluster lifecycle (reuse or create, Ready, kubeconfig, delete unless `--keep`; missing
//! kind or docker exits 2) is the integration tier's (`crate::kind`); the default cluster is
//! `kcache-e2e`. The steps:
//! 1. the cluster is Ready;
//! 2. the example is built with the `bench-release` profile (release with fat LTO);
//! 3. a container image is made from it without a registry (`image`);
//! 4. the image is loaded into the kind node;
//! 5. `crates/kcache/examples/sample_controller/deploy/` is applied in a fresh namespace: the CRD, a
//!    ServiceAccount with a namespaced Role, and a 2-replica Deployment running with in-cluster
//!    config and leader election; both replicas roll out;
//! 6. onwards: `scenario`, then `sharded`: the leader-elected Deployment replaced by three
//!    shards of one ring (`deploy/deployment-sharded.yaml`), a replica deleted and one added,
//!    and every replica's log checked for a Foo reconciled by two replicas at once.

mod image;
mod kubectl;
mod scenario;
mod sharded;

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use crate::kind::{KindCluster, KindOptions};
use crate::Failure;
use kubectl::Kubectl;

/// The cluster `e2e --kind` uses unless `--cluster` names another.
const DEFAULT_CLUSTER: &str = "kcache-e2e";

/// The namespace the controller is deployed to and reconciles (deleted first when a previous
/// `--keep` run left it).
const NAMESPACE: &str = "sample-controller-e2e";

const USAGE: &str =
    "usage: cargo xtask e2e --kind [--cluster NAME] [--image NODE_IMAGE] [--kind PATH] [--keep] [--base-image IMG]";

/// What `e2e` was asked for.
#[derive(Debug, PartialEq, Eq)]
struct E2eOptions {
    kind: KindOptions,
    /// The image the controller's is built on; `None`: `FROM scratch` with what it links.
    base_image: Option<String>,
}

impl E2eOptions {
    fn parse(args: &[String], env: impl Fn(&str) -> Option<String>) -> Result<Self, Failure> {
        if args.first().map(String::as_str) != Some("--kind") {
            return Err(Failure::usage(format!(
                "e2e runs on kind only (pass --kind)\n{USAGE}"
            )));
        }
        // The integration tier's default cluster is kcache-it; a later --cluster still wins.
        let mut kind_args = vec!["--cluster".to_string(), DEFAULT_CLUSTER.to_string()];
        kind_args.extend_from_slice(&args[1..]);
        let (kind, rest) = KindOptions::parse(&kind_args, env)?;
        let mut base_image = None;
        let mut rest = rest.into_iter();
        while let Some(arg) = rest.next() {
            let value = match arg.split_once('=') {
                Some(("--base-image", v)) => Some(v.to_string()),
                None if arg == "--base-image" => rest.next(),
                _ => return Err(Failure::usage(format!("unknown flag {arg:?}\n{USAGE}"))),
            };
            match value.filter(|v| !v.trim().is_empty() && !v.starts_with("--")) {
                Some(v) => base_image = Some(v),
                None => {
                    return Err(Failure::usage(format!(
                        "--base-image needs an image\n{USAGE}"
                    )))
                }
            }
        }
        Ok(E2eOptions { kind, base_image })
    }
}

/// Runs `e2e` with `args` (everything after `e2e`).
pub(crate) fn run(args: &[String]) -> Result<(), Failure> {
    let opts = E2eOptions::parse(args, |k| std::env::var(k).ok())?;
    check_kubectl()?;
    let mut steps = Steps::default();
    let result = run_steps(&opts, &mut steps);
    steps.summary(result.is_ok());
    result
}

fn run_steps(opts: &E2eOptions, steps: &mut Steps) -> Result<(), Failure> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let cluster = steps.run("kind cluster Ready (reused or created)", || {
        KindCluster::up(&opts.kind, &path)
    })?;
    let binary = steps.run(
        "build the sample-controller (cargo build --profile bench-release)",
        || Ok(image::build_binary()?),
    )?;
    let context = crate::temp_dir("kcache-e2e-image")?;
    let built = steps.run("container image without a registry (docker build)", || {
        let described = image::build_image(&binary, opts.base_image.as_deref(), &context)?;
        eprintln!("xtask e2e:   {described}");
        Ok(())
    });
    let _ = std::fs::remove_dir_all(&context);
    built?;
    steps.run(
        "load the image into the node (kind load docker-image)",
        || Ok(image::load_into_kind(&opts.kind.kind, cluster.name())?),
    )?;
    let kubectl = Kubectl {
        kubeconfig: cluster.kubeconfig().to_path_buf(),
        namespace: NAMESPACE.into(),
    };
    let outcome = scenario::run(&kubectl, steps);
    if let Err(e) = &outcome {
        eprintln!("xtask e2e: FAILED: {}", e.message);
        scenario::diagnose(&kubectl);
    }
    if !opts.kind.keep {
        // The cluster goes too if this run created it (when `cluster` drops).
        let _ = kubectl.run_cluster(&["delete", "namespace", NAMESPACE, "--wait=false"]);
    } else {
        eprintln!("xtask e2e: kept namespace {NAMESPACE} (--keep)");
    }
    outcome
}

/// kubectl applies the manifests and reads what the cluster did: missing, it is exit code 2.
fn check_kubectl() -> Result<(), Failure> {
    match Command::new("kubectl")
        .args(["version", "--client"])
        .output()
    {
        Ok(out) if out.status.success() => Ok(()),
        Ok(out) => Err(Failure::missing(format!(
            "kubectl does not work (`kubectl version --client` failed: {})",
            String::from_utf8_lossy(&out.stderr).trim()
        ))),
        Err(e) => Err(Failure::missing(format!(
            "kubectl is missing ({e}): e2e applies the manifests and reads the cluster with it. \
             Install it (https://kubernetes.io/docs/tasks/tools/) and put it on PATH."
        ))),
    }
}

/// The manifest `name` from `crates/kcache/examples/sample_controller/deploy/`.
fn manifest(name: &str) -> PathBuf {
    crate::workspace_root()
        .join("crates/kcache/examples/sample_controller/deploy")
        .join(name)
}

/// The steps run so far, timed.
#[derive(Default)]
struct Steps {
    done: Vec<(String, Duration, bool)>,
}

impl Steps {
    /// Runs one step, printing its title before and its duration after.
    fn run<T>(
        &mut self,
        title: &str,
        step: impl FnOnce() -> Result<T, Failure>,
    ) -> Result<T, Failure> {
        let n = self.done.len() + 1;
        eprintln!("xtask e2e: [{n:>2}] {title} ...");
        let start = Instant::now();
        let result = step();
        let took = start.elapsed();
        let verdict = if result.is_ok() { "ok" } else { "FAILED" };
        eprintln!(
            "xtask e2e: [{n:>2}] {verdict} in {:.1} s",
            took.as_secs_f64()
        );
        self.done.push((title.to_string(), took, result.is_ok()));
        result
    }

    fn summary(&self, passed: bool) {
        eprintln!("\nxtask e2e: summary");
        for (n, (title, took, ok)) in self.done.iter().enumerate() {
            let verdict = if *ok { "ok    " } else { "FAILED" };
            eprintln!(
                "  [{:>2}] {verdict} {:>6.1} s  {title}",
                n + 1,
                took.as_secs_f64()
            );
        }
        let total: Duration = self.done.iter().map(|(_, t, _)| *t).sum();
        let verdict = if passed { "passed" } else { "FAILED" };
        eprintln!(
            "xtask e2e: {verdict} ({:.1} s in steps)",
            total.as_secs_f64()
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    fn no_env(_: &str) -> Option<String> {
        None
    }

    #[test]
    fn defaults_to_its_own_cluster_from_scratch() {
        let o = E2eOptions::parse(&args(&["--kind"]), no_env).unwrap();
        assert_eq!(o.kind.cluster, "kcache-e2e");
        assert_eq!((o.kind.keep, o.base_image), (false, None));
    }

    #[test]
    fn flags_pick_cluster_keep_and_base_image() {
        let a = args(&[
            "--kind",
            "--cluster",
            "dev",
            "--keep",
            "--base-image",
            "debian:12",
        ]);
        let o = E2eOptions::parse(&a, no_env).unwrap();
        assert_eq!(o.kind.cluster, "dev");
        assert!(o.kind.keep);
        assert_eq!(o.base_image.as_deref(), Some("debian:12"));
        let o = E2eOptions::parse(&args(&["--kind", "--base-image=img:1"]), no_env).unwrap();
        assert_eq!(o.base_image.as_deref(), Some("img:1"));
    }

    #[test]
    fn bad_arguments_are_usage_errors() {
        for (a, needle) in [
            (&[][..], "pass --kind"),
            (&["--envtest"][..], "pass --kind"),
            (
                &["--kind", "--base-image"][..],
                "--base-image needs an image",
            ),
            (
                &["--kind", "--base-image", "--keep"][..],
                "--base-image needs an image",
            ),
            (
                &["--kind", "--frobnicate"][..],
                "unknown flag \"--frobnicate\"",
            ),
            (
                &["--kind", "--cluster", "Bad_Name"][..],
                "invalid cluster name",
            ),
        ] {
            let e = E2eOptions::parse(&args(a), no_env).unwrap_err();
            assert_eq!(e.code, 2, "{a:?}");
            assert!(e.message.contains(needle), "{a:?}: {}", e.message);
        }
    }
}
