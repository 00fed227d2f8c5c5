//! Two `examples/sample-controller.rs` processes with `--leader-elect` against one cluster (the
//! embedded kcache-testserver, or `KCACHE_TEST_KUBECONFIG`'s): exactly one reconciles and its
//! id is the Lease's `spec.holderIdentity`; after SIGKILL of the holder the other's id is there
//! within lease duration + retry period × (1 + jitter) + 1 s for the round trips; after SIGTERM
//! (which releases the Lease) the other takes over well before a lease duration.
//!
//! The example is built with the same cargo and profile (a no-op after `cargo test`, which builds
//! examples). Durations are scaled down: lease 4 s, renew deadline 2.5 s, retry 0.25 s.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use kcache_testing::TestCluster;
use serde_json::json;

const LEASE: Duration = Duration::from_secs(4);
const RETRY: Duration = Duration::from_millis(250);
/// A read and an update (and, after SIGTERM, stopping the controller) on a loaded machine.
const SLACK: Duration = Duration::from_secs(1);
/// After SIGTERM: stopping the controller, then the release and the take-over round trips.
const STOP_SLACK: Duration = Duration::from_secs(2);
/// Liveness guard for process start-up and reconciling.
const LIMIT: Duration = Duration::from_secs(60);

fn example_binary() -> PathBuf {
    // target/<profile>/deps/<this test> → target/<profile>/examples/sample-controller
    let exe = std::env::current_exe().expect("test binary path");
    let profile_dir = exe
        .parent()
        .and_then(|d| d.parent())
        .expect("target/<profile>");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut build = Command::new(cargo);
    build.args(["build", "-p", "kcache", "--example", "sample-controller"]);
    // Without the variables cargo sets for tests: build scripts that depend on them (ring's)
    // would otherwise see a change and rebuild, twice per run.
    for (key, _) in std::env::vars_os() {
        let key = key.to_string_lossy();
        let set_for_tests = ["CARGO_PKG_", "CARGO_MANIFEST_", "CARGO_BIN_"]
            .iter()
            .any(|p| key.starts_with(p))
            || [
                "CARGO_CRATE_NAME",
                "CARGO_PRIMARY_PACKAGE",
                "CARGO_TARGET_TMPDIR",
            ]
            .contains(&key.as_ref())
            || key == "CARGO_RUSTC_CURRENT_DIR"
            || key == "OUT_DIR";
        if set_for_tests {
            build.env_remove(key.as_ref());
        }
    }
    if profile_dir.file_name().is_some_and(|n| n == "release") {
        build.arg("--release");
    }
    let status = build.status().expect("cargo runs");
    assert!(
        status.success(),
        "building the sample-controller example failed"
    );
    profile_dir.join("examples").join("sample-controller")
}

/// One sample-controller process and everything it printed.
struct Replica {
    id: &'static str,
    child: Child,
    output: Arc<Mutex<Vec<String>>>,
}

impl Replica {
    fn start(bin: &PathBuf, kubeconfig: &std::path::Path, ns: &str, id: &'static str) -> Replica {
        let mut child = Command::new(bin)
            .args(["--kubeconfig".as_ref(), kubeconfig.as_os_str()])
            .args(["--leader-elect", "--lease-namespace", ns, "--id", id])
            .args([
                "--lease-duration",
                "4",
                "--renew-deadline",
                "2.5",
                "--retry-period",
                "0.25",
            ])
            .arg("--simulate-deployments")
            .env("RUST_LOG", "info")
            .env("NO_COLOR", "1")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the example starts");
        let output = Arc::new(Mutex::new(Vec::new()));
        for stream in [
            Box::new(child.stdout.take().unwrap()) as Box<dyn std::io::Read + Send>,
            Box::new(child.stderr.take().unwrap()),
        ] {
            let out = output.clone();
            std::thread::spawn(move || {
                for line in BufReader::new(stream).lines().map_while(Result::ok) {
                    out.lock().unwrap().push(line);
                }
            });
        }
        Replica { id, child, output }
    }

    fn printed(&self, text: &str) -> bool {
        self.output.lock().unwrap().iter().any(|l| l.contains(text))
    }

    fn signal(&mut self, sig: &str) {
        let pid = self.child.id().to_string();
        let ok = Command::new("kill").args([sig, &pid]).status();
        assert!(ok.is_ok_and(|s| s.success()), "kill {sig} {pid}");
    }

    fn dump(&self) -> String {
        format!(
            "--- {} ---\n{}",
            self.id,
            self.output.lock().unwrap().join("\n")
        )
    }
}

impl Drop for Replica {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

async fn holder(cluster: &TestCluster, ns: &str) -> Option<String> {
    let path = format!("/apis/coordination.k8s.io/v1/namespaces/{ns}/leases/sample-controller");
    let resp = cluster.client().get(&path).await.ok()?;
    resp.body["spec"]["holderIdentity"]
        .as_str()
        .map(str::to_string)
}

async fn wait_holder(
    cluster: &TestCluster,
    ns: &str,
    want: impl Fn(&str) -> bool,
    within: Duration,
) -> Option<String> {
    let deadline = Instant::now() + within;
    while Instant::now() < deadline {
        if let Some(h) = holder(cluster, ns).await.filter(|h| want(h)) {
            return Some(h);
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    None
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_replica_reconciles_and_the_other_takes_over() {
    let bin = example_binary();
    let cluster = TestCluster::start().await.expect("test cluster");
    let ns = cluster
        .create_namespace("leader-elect")
        .await
        .expect("namespace");
    let kubeconfig = cluster.kubeconfig_path().to_path_buf();
    let mut replicas = [
        Replica::start(&bin, &kubeconfig, &ns, "a"),
        Replica::start(&bin, &kubeconfig, &ns, "b"),
    ];
    let dump = |r: &[Replica]| r.iter().map(Replica::dump).collect::<Vec<_>>().join("\n");

    // One of them holds the Lease and starts the controller.
    let first = wait_holder(&cluster, &ns, |h| h == "a" || h == "b", LIMIT).await;
    let first = first.unwrap_or_else(|| panic!("nobody took the Lease\n{}", dump(&replicas)));
    let (l, o) = if first == "a" { (0, 1) } else { (1, 0) };

    // A Foo gets its Deployment from the leader only (the CRD appears when the leader starts).
    let foo = json!({"apiVersion": "samplecontroller.k8s.io/v1alpha1", "kind": "Foo",
        "metadata": {"name": "elected", "namespace": ns},
        "spec": {"deploymentName": "elected", "replicas": 1}});
    let foos = format!("/apis/samplecontroller.k8s.io/v1alpha1/namespaces/{ns}/foos");
    let deadline = Instant::now() + LIMIT;
    loop {
        let created = cluster.client().post(&foos, &foo).await;
        if created.is_ok_and(|r| r.status.is_success()) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "cannot create the Foo\n{}",
            dump(&replicas)
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let deployment = format!("/apis/apps/v1/namespaces/{ns}/deployments/elected");
    let deadline = Instant::now() + LIMIT;
    while !cluster
        .client()
        .get(&deployment)
        .await
        .is_ok_and(|r| r.status.is_success())
    {
        assert!(
            Instant::now() < deadline,
            "no Deployment\n{}",
            dump(&replicas)
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(
        replicas[l].printed("creating Deployment"),
        "{}",
        dump(&replicas)
    );
    assert!(
        !replicas[o].printed("starting workers"),
        "the follower ran the controller\n{}",
        dump(&replicas)
    );
    assert_eq!(holder(&cluster, &ns).await.as_deref(), Some(replicas[l].id));

    // SIGKILL the leader: no release; the other takes over once the lease has expired.
    let killed = Instant::now();
    replicas[l].signal("-KILL");
    let bound = LEASE + RETRY.mul_f64(2.2) + SLACK;
    let other = replicas[o].id;
    let took = wait_holder(&cluster, &ns, |h| h == other, bound + LIMIT).await;
    assert!(
        took.is_some(),
        "{other} never took over\n{}",
        dump(&replicas)
    );
    let after_kill = killed.elapsed();
    assert!(
        after_kill <= bound,
        "took over {after_kill:?} after SIGKILL (bound {bound:?})\n{}",
        dump(&replicas)
    );

    // Restart the killed one as a follower, then SIGTERM the new leader: it stops its
    // controller and releases the Lease, so the restarted one takes over without waiting for
    // the lease to expire.
    let restarted = replicas[l].id;
    replicas[l] = Replica::start(&bin, &kubeconfig, &ns, restarted);
    let deadline = Instant::now() + LIMIT;
    while !replicas[l].printed("attempting to acquire leader lease") {
        assert!(
            Instant::now() < deadline,
            "the restarted replica never campaigned\n{}",
            dump(&replicas)
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let termed = Instant::now();
    replicas[o].signal("-TERM");
    let took = wait_holder(&cluster, &ns, |h| h == restarted, LEASE + LIMIT).await;
    assert!(
        took.is_some(),
        "{restarted} never took over\n{}",
        dump(&replicas)
    );
    let after_term = termed.elapsed();
    let bound = RETRY.mul_f64(2.2) + STOP_SLACK;
    assert!(
        after_term <= bound,
        "took over {after_term:?} after SIGTERM (bound {bound:?})\n{}",
        dump(&replicas)
    );
    let status = replicas[o]
        .child
        .wait()
        .expect("the terminated replica exits");
    assert!(
        status.success(),
        "SIGTERM is a clean exit: {status}\n{}",
        dump(&replicas)
    );
    assert!(
        replicas[o].printed("released the lease"),
        "{}",
        dump(&replicas)
    );
}
