//! The `sharded` scenario: kcache-sharding on a server, in label mode, `--mode ranges` (range
//! mode, KEP-5866 `shardSelector`: the server must filter by it) or `--mode slices` (slice mode:
//! each object labelled once with its hash slice), replicas in one process
//! (each in a runtime of its own, with its own client, so killing one drops everything it was
//! doing, as SIGKILL would). The namespace's ConfigMaps are the sharded objects; each replica runs
//! a controller with one worker whose reconcile awaits `--reconcile-ms` (an I/O-bound reconcile)
//! and records (object, replica, start). Phases, each on the objects as they stand:
//!
//!  0. Slice mode: `label_seconds`, writing every object's slice labels (both rings', one patch
//!     per object, 16 at a time), which the sharder does once in an object's life: the phases
//!     below measure the steady state, where the sharder finds every label right.
//!  1. `one_seconds`: one replica alone (ring `<run>-1`), start until every object was reconciled;
//!     `one_cached`: the most objects its cache held.
//!  2. `three_seconds`: `--replicas` replicas (ring `<run>-n`) started together, until every
//!     object was reconciled; then until the ring converged (label mode: every object labelled
//!     with its owner among them, none draining; range and slice modes: every replica holds an
//!     acknowledged share of the slices and every object is in exactly one of their slices);
//!     `three_cached_max`: the most objects any one cache held.
//!  3. Kill one replica (its runtime dropped: no Lease released). `kill_handover_seconds`: from the
//!     kill until each of its objects is owned by a live replica (labelled to it, or in its
//!     acknowledged slices) and in that replica's cache;
//!     `kill_reconciled_seconds`: from the kill until each was reconciled by another replica.
//!  4. Stop another gracefully (its controllers stop, its Leases are released): the same two
//!     times from the stop's request, `stop_handover_seconds` and `stop_reconciled_seconds`.
//!  5. Add replicas back to `--replicas`: `join_balanced_seconds`, until the ring converged again.
//!
//! Targets (issue #42): `one_seconds / three_seconds` ≥ 2.7 with 3 replicas; `three_cached_max`
//! ≤ 0.4 × `one_cached`; handover after a kill ≤ lease duration + 10 s, after a graceful stop
//! ≤ 5 s; balanced after a join ≤ 30 s. Afterwards the run's labels and Leases are removed.

use std::collections::{BTreeSet, HashMap};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use futures_util::{stream, StreamExt};
use k8s_openapi::api::core::v1::ConfigMap;
use kcache_controller::{Action, Controller, DefaultErrorPolicy, Manager};
use kcache_core::selector::ShardField;
use kcache_core::{DynamicObject, ListParams, Object, Resource};
use kcache_informer::FactoryOptions;
use kcache_sharding::{
    list_range_assignments, object_key, slice_of, HashRing, Mode, Ring, Shard, Sharding,
    RANGE_SLICES,
};
use kcache_transport::{Api, Client, Config, DeleteParams, Patch, PatchParams};
use parking_lot::Mutex;
use serde_json::{json, Map, Value};
use tokio_util::sync::CancellationToken;

/// Flags.
#[derive(clap::Args)]
pub struct Args {
    /// The kubeconfig of the server (its namespace holds the ConfigMaps: `seed --configmaps N`).
    #[arg(long)]
    kubeconfig: PathBuf,
    /// The namespace whose ConfigMaps are sharded; the Leases live there too.
    #[arg(long, default_value = "default")]
    namespace: String,
    /// Replicas of the sharded phases.
    #[arg(long, default_value_t = 3)]
    replicas: usize,
    /// How long each reconcile awaits.
    #[arg(long, default_value_t = 10)]
    reconcile_ms: u64,
    /// The shard Leases' duration (renew deadline 2/3 of it, retry period 2/15, as client-go's
    /// 15 s / 10 s / 2 s).
    #[arg(long, default_value_t = 15)]
    lease_seconds: u64,
    /// How objects are divided: `labels` (the sharder labels each with its shard), `ranges`
    /// (hash ranges of the uid on the shard Leases; the server must support KEP-5866
    /// `shardSelector`) or `slices` (each object labelled once with its hash slice, the slices
    /// on the shard Leases).
    #[arg(long, value_enum, default_value_t = ShardMode::Labels)]
    mode: ShardMode,
    /// Overall limit of each phase, as a Go duration (`90s`, `10m`) or seconds.
    #[arg(long, default_value = "10m", value_parser = crate::duration::parse_duration)]
    phase_timeout: Duration,
}

/// `--mode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum ShardMode {
    Labels,
    Ranges,
    Slices,
}

/// One reconcile: which object, which replica, when it started.
type Reconciled = (Arc<str>, Arc<str>, Instant);

/// Every reconcile.
#[derive(Default)]
struct Log(Mutex<Vec<Reconciled>>);

impl Log {
    /// Whether every one of `objects` was reconciled since `since` by a replica `by` accepts.
    fn all_reconciled(
        &self,
        objects: &BTreeSet<String>,
        since: Instant,
        by: impl Fn(&str) -> bool,
    ) -> bool {
        let mut left: BTreeSet<&str> = objects.iter().map(String::as_str).collect();
        for (object, replica, start) in self.0.lock().iter() {
            if *start >= since && by(replica) {
                left.remove(object.as_ref());
            }
        }
        left.is_empty()
    }
}

/// One replica: a runtime of its own, and the most objects its cache held.
struct Replica {
    name: String,
    runtime: Option<tokio::runtime::Runtime>,
    stop: CancellationToken,
    task: Option<tokio::task::JoinHandle<()>>,
    cached: Arc<AtomicUsize>,
    peak_cached: Arc<AtomicUsize>,
}

impl Drop for Replica {
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

struct Setup {
    config: Config,
    namespace: String,
    reconcile: Duration,
    lease: (Duration, Duration, Duration),
    mode: ShardMode,
    log: Arc<Log>,
}

impl Setup {
    fn start(&self, ring: &Ring, name: &str) -> Replica {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("tokio runtime");
        let stop = CancellationToken::new();
        let (cached, peak_cached) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
        let client = Client::new(self.config.clone()).expect("client");
        let (lease, renew, retry) = self.lease;
        let sharding = Sharding::new(client.clone(), ring.clone(), name)
            .kind::<ConfigMap>(Some(&self.namespace))
            .mode(match self.mode {
                ShardMode::Labels => Mode::Labels,
                ShardMode::Ranges => Mode::Ranges(ShardField::Uid),
                ShardMode::Slices => Mode::Slices,
            })
            .lease_timing(lease, renew, retry);
        let (namespace, reconcile_for, log) =
            (self.namespace.clone(), self.reconcile, self.log.clone());
        let (c, p) = (cached.clone(), peak_cached.clone());
        let replica: Arc<str> = name.into();
        let work = move |shard: Shard| {
            let (client, namespace, log, replica) = (
                client.clone(),
                namespace.clone(),
                log.clone(),
                replica.clone(),
            );
            let (cached, peak) = (c.clone(), p.clone());
            async move {
                let options = FactoryOptions {
                    namespace: Some(namespace),
                    ..shard.factory_options()
                };
                let mut manager = Manager::builder(client)
                    .factory_options(options)
                    .build()
                    .expect("manager");
                let reconcile = move |cm: Arc<ConfigMap>, _: Arc<()>| {
                    log.0
                        .lock()
                        .push((cm.name().into(), replica.clone(), Instant::now()));
                    async move {
                        tokio::time::sleep(reconcile_for).await;
                        Ok::<_, std::convert::Infallible>(Action::await_change())
                    }
                };
                let controller = Controller::for_::<ConfigMap>(manager.factory())
                    .named(format!("sharded-{}", shard.name()))
                    .concurrency(1);
                let controller = shard
                    .into_runnable(controller, reconcile, DefaultErrorPolicy, Arc::new(()))
                    .expect("the drain handler");
                manager.add(controller).expect("add the controller");
                let informer = manager.factory().compact_informer::<ConfigMap>();
                let token = shard.token();
                let sampler = async move {
                    loop {
                        let n = informer.len();
                        cached.store(n, Ordering::Relaxed);
                        peak.fetch_max(n, Ordering::Relaxed);
                        tokio::time::sleep(Duration::from_millis(50)).await;
                    }
                };
                tokio::select! {
                    done = manager.run_until(token) => if let Err(e) = done {
                        eprintln!("kcache-bench: sharded: {}: manager: {e}", shard.name());
                    },
                    () = sampler => {}
                }
            }
        };
        let task = runtime.spawn({
            let stop = stop.clone();
            async move {
                if let Err(e) = sharding.run(stop, work).await {
                    eprintln!("kcache-bench: sharded: {e}");
                }
            }
        });
        Replica {
            name: name.to_string(),
            runtime: Some(runtime),
            stop,
            task: Some(task),
            cached,
            peak_cached,
        }
    }
}

impl Replica {
    /// SIGTERM: the controllers stop, then the Leases are released.
    async fn stop(mut self) {
        self.stop.cancel();
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
}

/// Polls `check` every 100 ms until it holds or `limit` passes; the seconds since `since`.
async fn until<F, Fut>(what: &str, since: Instant, limit: Duration, mut check: F) -> f64
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    while !check().await {
        if since.elapsed() > limit {
            eprintln!("kcache-bench: sharded: {what}: not reached in {limit:?}");
            std::process::exit(1);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    since.elapsed().as_secs_f64()
}

/// The namespace's ConfigMaps, as objects with labels.
async fn objects(api: &Api<DynamicObject>) -> Vec<DynamicObject> {
    match api.list(&ListParams::default()).await {
        Ok(list) => list.items,
        Err(e) => {
            eprintln!(
                "kcache-bench: sharded: list: {}",
                kcache_core::ErrorChain(&e)
            );
            std::process::exit(1)
        }
    }
}

/// Each object's owner as the mode records it: its shard label unless draining (label mode),
/// or the one shard Lease with acknowledged slices that hold it (range mode: its uid's hash;
/// slice mode: its slice label, if that is its key's slice); `None` while it is unassigned or
/// moving.
async fn owners(
    api: &Api<DynamicObject>,
    ring: &Ring,
    mode: ShardMode,
) -> Vec<(DynamicObject, Option<String>)> {
    let objects = objects(api).await;
    if mode == ShardMode::Labels {
        return objects
            .into_iter()
            .map(|o| {
                let draining = o.label(&ring.drain_label()).is_some();
                let owner = o.label(&ring.shard_label()).filter(|_| !draining);
                let owner = owner.map(str::to_string);
                (o, owner)
            })
            .collect();
    }
    let leases = list_range_assignments(api.client(), ring)
        .await
        .unwrap_or_else(|e| {
            eprintln!("kcache-bench: sharded: list the shard Leases: {e}");
            std::process::exit(1)
        });
    objects
        .into_iter()
        .map(|o| {
            let slice = slice_of(&object_key("", "ConfigMap", &o));
            let labelled = o.label(&ring.slice_label()) == Some(slice.to_string().as_str());
            let mut holders = leases.iter().filter(|(_, a)| match mode {
                ShardMode::Slices => labelled && a.slices.contains(&slice),
                _ => !a.ranges.is_empty() && a.ranges.matches(&o),
            });
            let owner = match (holders.next(), holders.next()) {
                (Some((state, a)), None) if a.is_acknowledged() => Some(state.name.clone()),
                _ => None,
            };
            (o, owner)
        })
        .collect()
}

/// Whether every object is owned by its place among `live`: label mode, its owner on their
/// ring; range and slice modes, one of them, each of which holds an acknowledged even share of
/// the slices.
async fn converged(
    api: &Api<DynamicObject>,
    ring: &Ring,
    mode: ShardMode,
    live: &[Replica],
) -> bool {
    let owned = owners(api, ring, mode).await;
    if mode == ShardMode::Labels {
        let hash_ring = HashRing::new(live.iter().map(|r| r.name.clone()));
        return owned.iter().all(|(o, owner)| {
            owner.as_deref() == hash_ring.owner_of(&object_key("", "ConfigMap", o))
        });
    }
    let Ok(leases) = list_range_assignments(api.client(), ring).await else {
        return false;
    };
    let share = RANGE_SLICES as usize / live.len().max(1);
    let even = live.iter().all(|r| {
        leases.iter().any(|(state, a)| {
            let slices = a.slices.len();
            state.name == r.name && a.is_acknowledged() && (share..=share + 1).contains(&slices)
        })
    });
    even && owned.iter().all(|(_, owner)| {
        owner
            .as_ref()
            .is_some_and(|o| live.iter().any(|r| r.name == *o))
    })
}

/// The names of the objects owned by `shard`.
async fn assigned_to(
    api: &Api<DynamicObject>,
    ring: &Ring,
    mode: ShardMode,
    shard: &str,
) -> BTreeSet<String> {
    owners(api, ring, mode)
        .await
        .into_iter()
        .filter(|(_, owner)| owner.as_deref() == Some(shard))
        .map(|(o, _)| o.name().to_string())
        .collect()
}

/// Whether every one of `names` is owned by a replica of `live`, and the live replicas' caches
/// together hold as many objects as the namespace has.
async fn handed_over(
    api: &Api<DynamicObject>,
    ring: &Ring,
    mode: ShardMode,
    names: &BTreeSet<String>,
    live: &[&Replica],
    total: usize,
) -> bool {
    let cached: usize = live.iter().map(|r| r.cached.load(Ordering::Relaxed)).sum();
    cached == total
        && owners(api, ring, mode)
            .await
            .iter()
            .filter(|(o, _)| names.contains(o.name()))
            .all(|(_, owner)| {
                owner
                    .as_ref()
                    .is_some_and(|s| live.iter().any(|r| r.name == *s))
            })
}

/// What every phase of the sharded ring's run shares: how its replicas start, the sharded
/// objects, the ring, how many objects there are and how long a phase may take.
struct RingRun<'a> {
    setup: &'a Setup,
    api: &'a Api<DynamicObject>,
    ring: &'a Ring,
    total: usize,
    limit: Duration,
}

impl RingRun<'_> {
    /// The seconds from `since` until the `how` replica's objects `theirs` were handed over to
    /// `live`, and until each was reconciled by one of them.
    async fn hand_over(
        &self,
        how: &str,
        since: Instant,
        theirs: &BTreeSet<String>,
        live: &[Replica],
    ) -> (f64, f64) {
        let live: Vec<&Replica> = live.iter().collect();
        let handed = until(
            &format!("the {how} replica's objects handed over"),
            since,
            self.limit,
            || {
                handed_over(
                    self.api,
                    self.ring,
                    self.setup.mode,
                    theirs,
                    &live,
                    self.total,
                )
            },
        )
        .await;
        let reconciled = until(
            &format!("the {how} replica's objects reconciled"),
            since,
            self.limit,
            || async {
                let by_live = |r: &str| live.iter().any(|l| l.name == r);
                self.setup.log.all_reconciled(theirs, since, by_live)
            },
        )
        .await;
        (handed, reconciled)
    }
}

/// Writes `labels(object)` on every object, 16 at a time; fails the run on an error when
/// `strict`.
async fn label_all(
    api: &Api<DynamicObject>,
    labels: impl Fn(&DynamicObject) -> Map<String, Value>,
    strict: bool,
) {
    let patches: Vec<(String, Value)> = objects(api)
        .await
        .iter()
        .map(|o| {
            let patch = json!({"metadata": {"labels": labels(o)}});
            (o.name().to_string(), patch)
        })
        .collect();
    stream::iter(patches)
        .for_each_concurrent(16, |(name, patch)| async move {
            let done = api
                .patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
                .await;
            if let (Err(e), true) = (done, strict) {
                eprintln!("kcache-bench: sharded: label {name}: {e}");
                std::process::exit(1);
            }
        })
        .await;
}

/// Removes the run's shard, drain and slice labels from every object, and its Leases.
async fn clean_up(client: &Client, api: &Api<DynamicObject>, namespace: &str, rings: &[Ring]) {
    let mut labels = Map::new();
    for ring in rings {
        labels.insert(ring.shard_label(), Value::Null);
        labels.insert(ring.drain_label(), Value::Null);
        labels.insert(ring.slice_label(), Value::Null);
    }
    label_all(api, |_| labels.clone(), false).await;
    let leases = Api::<DynamicObject>::dynamic(
        client.clone(),
        k8s_openapi::api::coordination::v1::Lease::api_resource(),
        Some(namespace),
    );
    for ring in rings {
        let selector = ring
            .lease_labels()
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(",");
        let params = ListParams {
            label_selector: Some(selector),
            ..ListParams::default()
        };
        if let Ok(list) = leases.list(&params).await {
            for lease in list.items {
                let _ = leases.delete(lease.name(), &DeleteParams::default()).await;
            }
        }
        let _ = leases
            .delete(
                &format!("{}-sharder", ring.name()),
                &DeleteParams::default(),
            )
            .await;
    }
}

pub fn run(args: Args) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("tokio runtime");
    let fields = runtime.block_on(scenario(&args));
    crate::report::emit("sharded", fields);
}

async fn scenario(args: &Args) -> Value {
    let client = crate::client::from_kubeconfig(&args.kubeconfig);
    let mut config = Config::from_kubeconfig_file(&args.kubeconfig).expect("kubeconfig read above");
    config.qps = 1000.0;
    config.burst = 1000;
    let api = Api::<DynamicObject>::dynamic(
        client.clone(),
        ConfigMap::api_resource(),
        Some(&args.namespace),
    );
    let all: BTreeSet<String> = objects(&api)
        .await
        .iter()
        .map(|o| o.name().to_string())
        .collect();
    let total = all.len();
    let lease = Duration::from_secs(args.lease_seconds.max(3));
    let setup = Setup {
        config,
        namespace: args.namespace.clone(),
        reconcile: Duration::from_millis(args.reconcile_ms),
        lease: (lease, lease * 2 / 3, lease * 2 / 15),
        mode: args.mode,
        log: Arc::new(Log::default()),
    };
    let run = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let limit = args.phase_timeout;
    let n = args.replicas.max(2);
    let (ring_one, ring_n) = (
        Ring::new(&format!("b{run}-1"), &args.namespace),
        Ring::new(&format!("b{run}-{n}"), &args.namespace),
    );

    // 0. Slice mode: every object's slice labels, once.
    let t0 = Instant::now();
    if args.mode == ShardMode::Slices {
        let rings = [&ring_one, &ring_n];
        let slices = |o: &DynamicObject| {
            let slice = slice_of(&object_key("", "ConfigMap", o)).to_string();
            rings
                .iter()
                .map(|r| (r.slice_label(), json!(slice)))
                .collect()
        };
        label_all(&api, slices, true).await;
    }
    let label_seconds = (args.mode == ShardMode::Slices).then(|| t0.elapsed().as_secs_f64());

    // 1. One replica alone.
    let t0 = Instant::now();
    let one = setup.start(&ring_one, "one-0");
    let one_seconds = until("one replica reconciled every object", t0, limit, || async {
        setup.log.all_reconciled(&all, t0, |r| r == "one-0")
    })
    .await;
    let one_cached = one.peak_cached.load(Ordering::Relaxed);
    one.stop().await;

    // 2. n replicas.
    let t0 = Instant::now();
    let mut replicas: Vec<Replica> = (0..n)
        .map(|i| setup.start(&ring_n, &format!("shard-{i}")))
        .collect();
    let three_seconds = until(
        "the replicas reconciled every object",
        t0,
        limit,
        || async {
            setup
                .log
                .all_reconciled(&all, t0, |r| r.starts_with("shard-"))
        },
    )
    .await;
    until("the ring converged", t0, limit, || async {
        converged(&api, &ring_n, args.mode, &replicas).await
    })
    .await;
    let three_cached_max = replicas
        .iter()
        .map(|r| r.peak_cached.load(Ordering::Relaxed))
        .max()
        .unwrap_or(0);
    let per_replica: HashMap<String, usize> = replicas
        .iter()
        .map(|r| (r.name.clone(), r.cached.load(Ordering::Relaxed)))
        .collect();

    let ring_run = RingRun {
        setup: &setup,
        api: &api,
        ring: &ring_n,
        total,
        limit,
    };

    // 3. Kill the last replica.
    let victim = replicas.pop().expect("n ≥ 2");
    let theirs = assigned_to(&api, &ring_n, args.mode, &victim.name).await;
    let t0 = Instant::now();
    drop(victim);
    let (kill_handover_seconds, kill_reconciled_seconds) =
        ring_run.hand_over("killed", t0, &theirs, &replicas).await;

    // 4. Stop the next one gracefully.
    let stopped = replicas.pop().expect("n ≥ 2");
    let theirs = assigned_to(&api, &ring_n, args.mode, &stopped.name).await;
    let t0 = Instant::now();
    stopped.stop().await;
    let (stop_handover_seconds, stop_reconciled_seconds) =
        ring_run.hand_over("stopped", t0, &theirs, &replicas).await;

    // 5. Replicas join again.
    let t0 = Instant::now();
    replicas.extend((replicas.len()..n).map(|i| setup.start(&ring_n, &format!("shard-{}", n + i))));
    let join_balanced_seconds = until("the ring balanced after the join", t0, limit, || async {
        converged(&api, &ring_n, args.mode, &replicas).await
    })
    .await;
    for r in replicas {
        r.stop().await;
    }
    clean_up(&client, &api, &args.namespace, &[ring_one, ring_n]).await;

    json!({
        "objects": total, "replicas": n, "reconcile_ms": args.reconcile_ms,
        "mode": format!("{:?}", args.mode).to_lowercase(),
        "lease_seconds": lease.as_secs(),
        "label_seconds": label_seconds,
        "one_seconds": one_seconds, "three_seconds": three_seconds,
        "speedup": one_seconds / three_seconds,
        "one_cached": one_cached, "three_cached_max": three_cached_max,
        "cached_ratio": three_cached_max as f64 / one_cached.max(1) as f64,
        "cached_per_replica": per_replica,
        "kill_handover_seconds": kill_handover_seconds,
        "kill_reconciled_seconds": kill_reconciled_seconds,
        "stop_handover_seconds": stop_handover_seconds,
        "stop_reconciled_seconds": stop_reconciled_seconds,
        "join_balanced_seconds": join_balanced_seconds,
    })
}
