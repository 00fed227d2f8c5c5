//! Kubernetes' sample-controller (github.com/kubernetes/sample-controller) on kcache-controller:
//! a `Foo` custom resource asks for a Deployment of nginx pods; the controller creates and scales
//! it and copies its available replicas into the Foo's status.
//!
//! ```text
//! cargo run -p kcache --example sample-controller                    # embedded demo; exits
//! cargo run -p kcache --example sample-controller -- --kubeconfig F  # a cluster, until Ctrl-C
//! cargo run -p kcache --example sample-controller -- --kubeconfig F --leader-elect --id a
//! cargo run -p kcache --example sample-controller -- --kubeconfig F --shard-ring foos --id a
//! ```
//!
//! Without `--kubeconfig` and `$KUBECONFIG`, it runs a scripted demo on kcache-testserver
//! in-process, with a clearly labelled simulated deployment controller (the server runs no
//! kube-controller-manager; `--simulate-deployments` runs it on a cluster without one, e.g.
//! envtest). With a cluster it creates the CRD if absent and runs until SIGTERM or Ctrl-C; in a
//! pod it uses the pod's service account. With `--leader-elect` only the Lease's holder
//! reconciles (the others keep warm caches); SIGTERM releases the Lease. With `--shard-ring R`
//! every replica reconciles its own part of the Foos instead (kcache-sharding's label mode: a
//! shard Lease per replica, one replica elected as the sharder labels each Foo and the Deployment
//! it controls with its shard). `deploy/` runs it in a cluster, leader-elected and sharded
//! (`cargo xtask e2e --kind`).

#[path = "sample_controller/mod.rs"]
mod sample_controller;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use clap::Parser;
use k8s_openapi::api::apps::v1::Deployment;
use kcache::controller::{Manager, ReconcileRequest};
use kcache::core::BoxError;
use kcache::informer::FactoryOptions;
use kcache::leaderelection::{LeaderElectionConfig, LeaseLock};
use kcache::sharding::{Mode, Ring, Shard, Sharding};
use kcache::transport::{
    Api, Client, Config, DeleteParams, KubeConfigOptions, Kubeconfig, Patch, PatchParams,
    PostParams,
};
use kcache::Object;
use kcache_testing::{ServerConfig, TestServer};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use sample_controller::controller::Ctx;
use sample_controller::deployment::{available_replicas, new_deployment, spec_replicas};
use sample_controller::foo::Foo;
use sample_controller::wait::wait_until;
use sample_controller::Sample;

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
    /// Run the controller only while holding the Lease `--lease-name` in `--lease-namespace`;
    /// on SIGTERM or Ctrl-C, stop it and release the Lease.
    #[arg(long)]
    leader_elect: bool,
    /// The Lease's namespace.
    #[arg(long, default_value = "default")]
    lease_namespace: String,
    /// The Lease's name.
    #[arg(long, default_value = "sample-controller")]
    lease_name: String,
    /// Run as one shard of the ring named so (kcache-sharding), instead of leader-elected: the
    /// replica's Lease and the sharder's live in `--lease-namespace`.
    #[arg(long, conflicts_with = "leader_elect")]
    shard_ring: Option<String>,
    /// How the ring divides the Foos: `labels` (the sharder labels each Foo with its shard and
    /// drains it before a move) or `slices` (each Foo labelled once with its hash slice; a move
    /// is a Lease write).
    #[arg(long, value_enum, default_value_t = ShardMode::Labels)]
    shard_mode: ShardMode,
    /// This replica's identity in the Lease (default: `$POD_NAME`, which a Deployment sets
    /// through the downward API; else hostname + "_" + the process id).
    #[arg(long)]
    id: Option<String>,
    /// Seconds others wait after the last renewal before taking over.
    #[arg(long, default_value = "15", value_parser = seconds)]
    lease_duration: Duration,
    /// Seconds the leader keeps retrying a renewal before it stops leading.
    #[arg(long, default_value = "10", value_parser = seconds)]
    renew_deadline: Duration,
    /// Seconds between attempts.
    #[arg(long, default_value = "2", value_parser = seconds)]
    retry_period: Duration,
}

/// `--shard-mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum ShardMode {
    Labels,
    Slices,
}

fn seconds(s: &str) -> Result<Duration, String> {
    let secs = s.parse::<f64>().map_err(|e| e.to_string())?;
    Duration::try_from_secs_f64(secs).map_err(|e| e.to_string())
}

/// The demo's namespace (the embedded server creates it at start).
const DEMO_NAMESPACE: &str = "default";

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()),
        )
        .init();
    let args = Args::parse();
    let kubeconfig_env = std::env::var_os("KUBECONFIG").filter(|v| !v.is_empty());
    let config = match (&args.kubeconfig, kubeconfig_env) {
        (Some(path), _) => Config::from_kubeconfig_file(path)?,
        (None, Some(_)) => Config::infer()?,
        (None, None) if std::env::var_os("KUBERNETES_SERVICE_HOST").is_some() => {
            Config::incluster()?
        }
        (None, None) => return run_demo(&args).await,
    };
    run_on_cluster(config, &args).await
}

/// Runs against a cluster until SIGTERM or Ctrl-C. With `--leader-elect` the controller runs
/// only while this replica holds the Lease, and losing it is an error exit, as client-go's and
/// controller-runtime's controllers do.
async fn run_on_cluster(config: Config, args: &Args) -> Result<(), BoxError> {
    tracing::info!(server = %config.cluster_url, "running against a cluster until Ctrl-C");
    let client = Client::new(config.clone())?;
    if let Some(ring) = &args.shard_ring {
        return run_sharded(client, ring, args).await;
    }
    let mut manager = sample_controller::manager(client, args.namespace.clone());
    if args.leader_elect {
        let identity = args.id.clone().unwrap_or_else(default_identity);
        let (namespace, name) = (&args.lease_namespace, &args.lease_name);
        tracing::info!(%identity, lease = %format!("{namespace}/{name}"), "campaigning");
        let election = LeaderElectionConfig {
            lease_duration: args.lease_duration,
            renew_deadline: args.renew_deadline,
            retry_period: args.retry_period,
            release_on_cancel: true,
            ..LeaderElectionConfig::new(identity)
        };
        // A client of its own, so the controller's requests never hold up a renewal.
        let lock = LeaseLock::new(Client::new(config)?, namespace, name);
        manager = manager.leader_election_with(lock, election);
    }
    let mut manager = manager.build()?;
    sample_controller::add_to(&mut manager, args.workers, args.simulate_deployments, None).await?;
    Ok(manager.run().await?)
}

/// Runs as one shard of `ring` until SIGTERM or Ctrl-C: holds this replica's shard Lease and,
/// for each term of holding it, runs the Foo controller over the Foos (and Deployments) labelled
/// for this shard (or for its slices); campaigns for the sharder. On a signal the controller stops first, then both
/// Leases are released, so the others take its Foos over at once.
async fn run_sharded(client: Client, ring: &str, args: &Args) -> Result<(), BoxError> {
    let identity = args.id.clone().unwrap_or_else(default_identity);
    let namespace = args.namespace.clone();
    tracing::info!(%identity, %ring, "joining the shard ring");
    let sharding = Sharding::new(
        client.clone(),
        Ring::new(ring, &args.lease_namespace),
        &identity,
    )
    .kind::<Foo>(namespace.as_deref())
    .controlled::<Deployment>(namespace.as_deref())
    .mode(match args.shard_mode {
        ShardMode::Labels => Mode::Labels,
        ShardMode::Slices => Mode::Slices,
    })
    .lease_timing(args.lease_duration, args.renew_deadline, args.retry_period);
    sample_controller::crd::ensure_foo_crd(&client).await?;
    let shutdown = CancellationToken::new();
    kcache::controller::manager::cancel_on_signal(shutdown.clone())?;
    let (workers, simulate) = (args.workers, args.simulate_deployments);
    let work = move |shard: Shard| {
        let (client, namespace) = (client.clone(), namespace.clone());
        async move {
            tracing::info!(shard = %shard.name(), "holding the shard Lease: reconciling its Foos");
            let options = FactoryOptions {
                label_selector: shard.label_selector(),
                ..sample_controller::factory_options(namespace)
            };
            let mut manager = match Manager::builder(client).factory_options(options).build() {
                Ok(manager) => manager,
                Err(e) => return tracing::error!("no manager for the shard: {e}"),
            };
            let token = shard.token();
            if let Err(e) =
                sample_controller::add_controllers(&mut manager, workers, simulate, Some(shard))
            {
                return tracing::error!("cannot add the shard's controllers: {e}");
            }
            if let Err(e) = manager.run_until(token).await {
                tracing::error!("the shard's controller stopped: {e}");
            }
        }
    };
    sharding.run(shutdown, work).await?;
    Ok(())
}

/// The pod's name in a pod (`$POD_NAME`, so the Lease's holder names the pod, as
/// kube-controller-manager's does); elsewhere the hostname, `_` and the process id (two replicas
/// on one machine stay distinct).
fn default_identity() -> String {
    match std::env::var("POD_NAME")
        .ok()
        .filter(|p| !p.trim().is_empty())
    {
        Some(pod) => pod.trim().to_string(),
        None => {
            let host = std::fs::read_to_string("/proc/sys/kernel/hostname");
            let host = host.unwrap_or_else(|_| "localhost".into());
            format!("{}_{}", host.trim(), std::process::id())
        }
    }
}

/// Starts the embedded server, runs the scripted demo within `--demo-seconds`, then stops and
/// prints what the controller did.
async fn run_demo(args: &Args) -> Result<(), BoxError> {
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
    (config.qps, config.burst) = (100.0, 200);
    let client = Client::new(config)?;

    // The embedded server has no kube-controller-manager: simulate its deployment controller.
    let mut manager = sample_controller::manager(client.clone(), None).build()?;
    let sample = sample_controller::add_to(&mut manager, args.workers, true, None).await?;
    let stop = CancellationToken::new();
    let running = tokio::spawn(manager.run_until(stop.clone()));
    let budget = Duration::from_secs(args.demo_seconds);
    match tokio::time::timeout(budget, script(&client, &sample.ctx)).await {
        Ok(done) => done?,
        Err(_) => println!("!!! --demo-seconds {} ran out first", args.demo_seconds),
    }
    stop.cancel();
    running.await??;
    summary(&client, &sample, started).await?;
    server.shutdown().await;
    Ok(())
}

/// The demo: every step waits until the controller's caches show it reconciled.
async fn script(client: &Client, ctx: &Ctx) -> Result<(), BoxError> {
    let foos: Api<Foo> = Api::namespaced(client.clone(), DEMO_NAMESPACE);
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), DEMO_NAMESPACE);
    let limit = Duration::from_secs(60); // a liveness guard; --demo-seconds bounds the demo

    println!("--- a Deployment \"not-ours\" that no Foo controls");
    let not_ours = new_deployment(&Foo::new(DEMO_NAMESPACE, "someone-else", "not-ours", 1));
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
    let key = |name: &str| ReconcileRequest::new(DEMO_NAMESPACE, name);
    let available = |name: &str, n: i32| {
        let key = key(name);
        move || {
            ctx.foos
                .get_by_key(key.key())
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
    let clash = key("clashing-foo");
    wait_until("clashing-foo to be refused", limit, async || {
        ctx.stats.lock().get(&clash).is_some_and(|s| s.failed > 0)
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
    let second = key("second-foo");
    wait_until("second-foo to leave the cache", limit, async || {
        ctx.foos.get_by_key(second.key()).is_none()
    })
    .await?;
    println!("--- second-foo is gone: nothing more to reconcile for it");
    Ok(())
}

/// What the controller saw and did.
async fn summary(client: &Client, sample: &Sample, started: Instant) -> Result<(), BoxError> {
    let ctx = &sample.ctx;
    println!(
        "\n=== sample-controller summary ({:.1?}) ===",
        started.elapsed()
    );
    for (key, stats) in ctx.stats.lock().clone() {
        let now = match ctx.foos.get_by_key(key.key()) {
            Some(cached) => format!(
                "deployment {:?}, spec.replicas {}, status.availableReplicas {}",
                cached.spec.deployment_name,
                cached.spec.replicas.unwrap_or(1),
                cached.available_replicas()
            ),
            None => "deleted".to_string(),
        };
        println!(
            "Foo {key}: {now}\n    reconciles: {} ok, {} failed (retried with backoff); {} Deployment writes",
            stats.synced, stats.failed, stats.deployment_writes
        );
    }
    let deployments = Api::<Deployment>::namespaced(client.clone(), DEMO_NAMESPACE);
    for d in deployments.list(&Default::default()).await?.items {
        let owner = d
            .controller_owner()
            .map_or("no controller".to_string(), |o| {
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
            ReconcileRequest::of(&d),
            spec_replicas(&d),
            available_replicas(&d),
            pod_labels.join(",")
        );
    }
    if let Some(simulator) = &sample.simulator {
        println!(
            "simulated kube-controller-manager: {} Deployment status updates",
            simulator.updates()
        );
    }
    println!(
        "(no garbage collector runs in the embedded server: a deleted Foo's Deployment stays; a \
         cluster's GC removes it through the ownerReference)"
    );
    Ok(())
}
