//! Kubernetes' sample-controller (github.com/kubernetes/sample-controller) on kcache: a `Foo`
//! custom resource (`samplecontroller.k8s.io/v1alpha1`) asks for a Deployment of nginx pods; the
//! controller creates and scales that Deployment and copies its available replicas into the
//! Foo's status.
//!
//! ```text
//! cargo run -p kcache --example sample-controller                    # embedded demo; exits
//! cargo run -p kcache --example sample-controller -- --kubeconfig F  # a cluster, until Ctrl-C
//! ```
//!
//! Without `--kubeconfig` and without `$KUBECONFIG`, it starts kcache-testserver in-process,
//! creates the Foo CRD, a Deployment it does not own and three Foos (one naming that
//! Deployment), scales one Foo, deletes another, and prints a summary. The embedded server runs
//! no kube-controller-manager, so a clearly labelled simulated deployment controller marks
//! Deployments as rolled out. With a cluster, it creates the CRD if absent and runs until
//! Ctrl-C (add `--simulate-deployments` on a cluster without controllers, e.g. envtest).
//! Inside a pod (`KUBERNETES_SERVICE_HOST` set, no kubeconfig) it uses the pod's service
//! account (`Config::incluster`), as client-go's `rest.InClusterConfig`; `--namespace` narrows
//! it to one namespace. `deploy/` holds the manifests that run it in a cluster (see
//! `cargo xtask e2e --kind`).
//!
//! With `--leader-elect` (and `--lease-namespace`, `--id`), replicas campaign for a Lease and
//! only its holder runs the controller; SIGTERM stops the controller and releases the Lease:
//!
//! ```text
//! cargo run -p kcache --example sample-controller -- --kubeconfig F --leader-elect --id a
//! cargo run -p kcache --example sample-controller -- --kubeconfig F --leader-elect --id b
//! ```

#[path = "sample_controller/mod.rs"]
mod sample_controller;

#[path = "sample_controller/leader_election.rs"]
mod leader_election;

use std::error::Error;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use clap::Parser;
use k8s_openapi::api::apps::v1::Deployment;
use kcache_core::ObjectKey;
use kcache_leaderelection::RunEnd;
use kcache_testing::{ServerConfig, TestServer};
use kcache_transport::{
    Api, Client, Config, DeleteParams, KubeConfigOptions, Kubeconfig, Patch, PatchParams,
    PostParams,
};
use serde_json::json;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use sample_controller::controller::SyncOutcome;
use sample_controller::deployment::{
    available_replicas, controller_of, new_deployment, spec_replicas,
};
use sample_controller::foo::Foo;
use sample_controller::running::Running;
use sample_controller::wait::wait_until;

/// Command line.
#[derive(Parser)]
#[command(about = "Kubernetes' sample-controller on kcache")]
struct Args {
    /// The cluster's kubeconfig. Without it (and without $KUBECONFIG) an embedded
    /// kcache-testserver runs a scripted demo.
    #[arg(long)]
    kubeconfig: Option<PathBuf>,
    /// Watch and reconcile only this namespace (default: all namespaces).
    #[arg(long)]
    namespace: Option<String>,
    /// Workers processing Foo keys.
    #[arg(long, default_value_t = 2)]
    workers: usize,
    /// Embedded demo: the longest it may run before stopping.
    #[arg(long, default_value_t = 5)]
    demo_seconds: u64,
    /// Run the simulated deployment controller against the cluster too (only for clusters
    /// without kube-controller-manager, such as envtest).
    #[arg(long)]
    simulate_deployments: bool,
    #[command(flatten)]
    leader: leader_election::LeaderElectArgs,
}

/// The demo's namespace (the embedded server creates it at start).
const DEMO_NAMESPACE: &str = "default";

#[tokio::main]
async fn main() -> Result<(), Box<dyn Error>> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()),
        )
        .init();
    let args = Args::parse();
    let cancel = CancellationToken::new();
    tokio::spawn({
        let cancel = cancel.clone();
        async move {
            leader_election::shutdown_signal().await;
            cancel.cancel();
        }
    });

    let kubeconfig_env = std::env::var_os("KUBECONFIG").filter(|v| !v.is_empty());
    match (&args.kubeconfig, kubeconfig_env) {
        (Some(path), _) => run_on_cluster(Config::from_kubeconfig_file(path)?, &args, cancel).await,
        (None, Some(_)) => run_on_cluster(Config::infer()?, &args, cancel).await,
        (None, None) if std::env::var_os("KUBERNETES_SERVICE_HOST").is_some() => {
            run_on_cluster(Config::incluster()?, &args, cancel).await
        }
        (None, None) => run_demo(&args, cancel).await,
    }
}

/// Runs against a real cluster, across all namespaces, until Ctrl-C.
async fn run_on_cluster(
    config: Config,
    args: &Args,
    cancel: CancellationToken,
) -> Result<(), Box<dyn Error>> {
    tracing::info!(server = %config.cluster_url, "running against a cluster until Ctrl-C");
    if args.leader.leader_elect {
        return run_leader_elected(config, args, cancel).await;
    }
    let running = Running::start(
        Client::new(config)?,
        args.namespace.clone(),
        args.workers,
        args.simulate_deployments,
    )
    .await?;
    cancel.cancelled().await;
    running.shutdown().await?;
    Ok(())
}

/// Runs the controller only while holding the Lease; exits with an error when leadership is
/// lost, as client-go's and controller-runtime's controllers do.
///
/// The controller runs on this task (`Running::start`'s future is not `Send`), told to start
/// by the leading callback through a channel, which then waits until it has stopped.
async fn run_leader_elected(
    config: Config,
    args: &Args,
    cancel: CancellationToken,
) -> Result<(), Box<dyn Error>> {
    let client = Client::new(config.clone())?;
    let (start, mut terms) = mpsc::unbounded_channel::<(CancellationToken, oneshot::Sender<()>)>();
    let lead = move |lost: CancellationToken| {
        let start = start.clone();
        async move {
            let (stopped, wait) = oneshot::channel();
            if start.send((lost, stopped)).is_ok() {
                let _ = wait.await;
            }
        }
    };
    let elect = leader_election::run_elected(config, &args.leader, cancel.clone(), lead);
    let serve = async {
        while let Some((lost, stopped)) = terms.recv().await {
            match Running::start(
                client.clone(),
                args.namespace.clone(),
                args.workers,
                args.simulate_deployments,
            )
            .await
            {
                Ok(running) => {
                    lost.cancelled().await;
                    if let Err(e) = running.shutdown().await {
                        tracing::error!("the controller failed: {e}");
                    }
                }
                Err(e) => {
                    tracing::error!("cannot start the controller: {e}");
                    cancel.cancel();
                }
            }
            let _ = stopped.send(());
        }
    };
    let (end, ()) = tokio::join!(elect, serve);
    match end? {
        RunEnd::LeadershipLost => Err("leader election lost".into()),
        RunEnd::NotLeading | RunEnd::ShutDown => Ok(()),
    }
}

/// Starts the embedded server, runs the scripted demo within `--demo-seconds`, then stops and
/// prints what the controller did.
async fn run_demo(args: &Args, cancel: CancellationToken) -> Result<(), Box<dyn Error>> {
    let started = Instant::now();
    let server = TestServer::start(ServerConfig {
        tls: true,
        token: Some("sample-controller-demo".into()),
        ..ServerConfig::default()
    })
    .await?;
    println!("embedded kcache-testserver at {}", server.base_url());
    let kubeconfig = Kubeconfig::parse(&server.kubeconfig(), Path::new("<embedded>"))?;
    let mut config = Config::from_kubeconfig(&kubeconfig, &KubeConfigOptions::default())?;
    // An in-process server needs no protection from us: lift client-go's 5 qps default.
    config.qps = 100.0;
    config.burst = 200;
    let client = Client::new(config)?;

    // The embedded server has no kube-controller-manager: simulate its deployment controller.
    let running = Running::start(client.clone(), None, args.workers, true).await?;
    let budget = Duration::from_secs(args.demo_seconds);
    tokio::select! {
        r = tokio::time::timeout(budget, script(&client, &running)) => match r {
            Ok(r) => r?,
            Err(_) => println!("!!! --demo-seconds {} ran out first", args.demo_seconds),
        },
        () = cancel.cancelled() => println!("!!! interrupted"),
    }
    running_summary(&running, started);
    running.shutdown().await?;
    server.shutdown().await;
    Ok(())
}

/// The demo: every step waits until the controller's caches show it reconciled.
async fn script(client: &Client, running: &Running) -> Result<(), Box<dyn Error>> {
    let foos: Api<Foo> = Api::namespaced(client.clone(), DEMO_NAMESPACE);
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), DEMO_NAMESPACE);
    let ctl = &running.controller;
    let limit = Duration::from_secs(60); // a liveness guard; --demo-seconds bounds the demo

    println!("--- a Deployment \"not-ours\" that no Foo controls");
    let mut not_ours = new_deployment(&Foo::new(DEMO_NAMESPACE, "someone-else", "not-ours", 1));
    not_ours.metadata.owner_references = None;
    deployments
        .create(&PostParams::default(), &not_ours)
        .await?;

    println!(
        "--- create Foos example-foo (1 replica), second-foo (2), clashing-foo (\"not-ours\")"
    );
    for (name, deployment, replicas) in [
        ("example-foo", "example-foo", 1),
        ("second-foo", "second-foo", 2),
        ("clashing-foo", "not-ours", 1),
    ] {
        let new = Foo::new(DEMO_NAMESPACE, name, deployment, replicas);
        foos.create(&PostParams::default(), &new).await?;
    }
    let available = |name: &str, n: i32| {
        let key = ObjectKey::new(DEMO_NAMESPACE, name);
        move || {
            ctl.foos()
                .indexer()
                .get_by_key(key.as_str())
                .is_some_and(|f| f.available_replicas() == n)
        }
    };
    let (example1, second2) = (available("example-foo", 1), available("second-foo", 2));
    wait_until(
        "Foos to report their available replicas",
        limit,
        async || example1() && second2(),
    )
    .await?;
    let clash = ObjectKey::new(DEMO_NAMESPACE, "clashing-foo");
    wait_until("clashing-foo to be refused", limit, async || {
        ctl.sync_stats().get(&clash).is_some_and(|s| s.failed > 0)
    })
    .await?;
    println!(
        "--- reconciled: example-foo has 1 available replica, second-foo 2; clashing-foo refused"
    );

    println!("--- scale example-foo to 3 replicas");
    foos.patch(
        "example-foo",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"replicas": 3}})),
    )
    .await?;
    let example3 = available("example-foo", 3);
    wait_until(
        "example-foo to report 3 available replicas",
        limit,
        async || example3(),
    )
    .await?;
    println!("--- reconciled: example-foo has 3 available replicas");

    println!("--- delete second-foo");
    foos.delete("second-foo", &DeleteParams::default()).await?;
    let second = ObjectKey::new(DEMO_NAMESPACE, "second-foo");
    wait_until("second-foo's key to leave the queue", limit, async || {
        let gone =
            ctl.sync_stats().get(&second).and_then(|s| s.last.clone()) == Some(SyncOutcome::Gone);
        gone && !ctl.queue().contains(&second)
    })
    .await?;
    println!("--- handled: second-foo no longer exists; its key left the queue");
    Ok(())
}

/// What the controller saw and did.
fn running_summary(running: &Running, started: Instant) {
    let ctl = &running.controller;
    println!(
        "\n=== sample-controller summary ({:.1?}) ===",
        started.elapsed()
    );
    for (key, stats) in ctl.sync_stats() {
        let now = match ctl.foos().indexer().get_by_key(key.as_str()) {
            Some(cached) => format!(
                "deployment {:?}, spec.replicas {}, status.availableReplicas {}",
                cached.spec.deployment_name,
                cached.spec.replicas.unwrap_or(1),
                cached.available_replicas()
            ),
            None => "deleted".to_string(),
        };
        let last = match &stats.last {
            Some(SyncOutcome::Failed(e)) => format!(
                "last sync failed ({e}); {} rate-limited requeues",
                ctl.queue().num_requeues(&key)
            ),
            Some(other) => format!("last sync {other:?}"),
            None => "never synced".into(),
        };
        println!(
            "Foo {}: {now}\n    syncs: {} ok, {} failed, {} found it gone; {last}\n    \
             read your writes: {} syncs found our last write cached, {} waited for it, {} stale reads",
            key.as_str(),
            stats.synced,
            stats.failed,
            stats.gone,
            stats.writes_seen,
            stats.cache_waits,
            stats.stale_reads
        );
    }
    for d in ctl.deployments().indexer().list() {
        let owner = controller_of(&d.metadata).map_or("no controller".to_string(), |o| {
            format!("controlled by {} {}", o.kind, o.name)
        });
        let pod_labels: Vec<String> = d
            .spec
            .template
            .metadata
            .as_ref()
            .and_then(|m| m.labels.as_ref())
            .into_iter()
            .flatten()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        println!(
            "Deployment {}: replicas {}, available {}, {owner}, pods {}",
            ObjectKey::of(&*d).as_str(),
            spec_replicas(&d),
            available_replicas(&d),
            pod_labels.join(",")
        );
    }
    let events = ctl.events().broadcaster();
    println!("events ({:?}): {:?}", events.api(), events.stats());
    if let Some(sim) = &running.simulator {
        println!(
            "simulated kube-controller-manager: {} Deployment status updates",
            sim.updates()
        );
    }
    println!(
        "(no garbage collector runs in the embedded server: a deleted Foo's Deployment stays; a \
         cluster's GC removes it through the ownerReference)"
    );
}
