//! Sharded replicas against kcache-testserver with faults: each replica runs in a runtime of its
//! own (killing one drops its runtime, as SIGKILL ends a process), with its own client, its own
//! shard Lease and Manager, and a candidacy for the sharder. Faults: one replica cut off from the
//! server (every request of its user agent answered 503) for longer than a lease, a replica
//! killed, one stopped gracefully, one added. Every reconcile records (object, replica, start,
//! end).
//!
//! Checked: no two reconciles of one object overlap, whichever replicas ran them; after the
//! faults stop, every object is owned by exactly one running replica and was reconciled by it
//! after the faults. In label mode its owner is the one on the ring of the running replicas and
//! the object carries exactly that shard label and no drain label; in range mode exactly one
//! shard Lease's ranges hold it, a running replica's, which acknowledged them; in slice mode it
//! carries the slice of its key and exactly one such Lease's slices hold that. Every seed runs in
//! every mode.
//!
//! Real time with scaled-down durations (lease 2 s, renew deadline 0.8 s, retry 0.2 s: a shard
//! stops acting 1.2 s before anyone may take its objects without its acknowledgement); waits are
//! on conditions. `cargo test` runs seeds 3 and 6 (every kind of fault between them);
//! `KCACHE_SOAK_SEEDS=N` runs seeds 0..N (`cargo xtask soak sharding` runs 20);
//! `KCACHE_CHAOS_SEED=S` replays one.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kcache_controller::{Action, Controller, DefaultErrorPolicy, Manager};
use kcache_core::selector::ShardField;
use kcache_core::{DynamicObject, ListParams, Object, Resource};
use kcache_informer::FactoryOptions;
use kcache_leaderelection::CancellationToken;
use kcache_sharding::{
    list_range_assignments, object_key, slice_of, HashRing, Mode, Ring, Shard, Sharding,
};
use kcache_testing::{Failure, RequestMatch, TestCluster};
use kcache_transport::{Api, Client, Config, PostParams};
use parking_lot::Mutex;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

const LEASE: Duration = Duration::from_secs(2);
const RENEW: Duration = Duration::from_millis(800);
const RETRY: Duration = Duration::from_millis(200);
const OBJECTS: usize = 24;
/// How long a reconcile takes, and the requeue after each: long enough that a shard is often
/// in the middle of one when an object moves. A sharder that moves objects of live shards
/// without the handover (the drain handshake, or the acknowledgement of a range generation)
/// fails this test; each seed prints its closest hand-over.
const RECONCILE: Duration = Duration::from_millis(30);
/// The seeds of a plain `cargo test`.
const DEFAULT_SEEDS: [u64; 2] = [3, 6];
const STEPS: usize = 3;
/// How long convergence may go without progress after the faults (a lease, a take-over, a rejoin,
/// on a loaded machine): a liveness guard, not a timing claim. A starved machine can let a
/// replica's 2 s Lease lapse and the ring change again, which is the sharder doing its job; so
/// the limit runs from the last time more objects had settled than at the poll before, up to
/// [`CONVERGE_AT_MOST`].
const CONVERGE: Duration = Duration::from_secs(30);
/// The bound on convergence however much progress is made: past it the ring is flapping.
const CONVERGE_AT_MOST: Duration = Duration::from_secs(120);

/// One reconcile: which object, which replica, when.
#[derive(Debug, Clone)]
struct Rec {
    object: String,
    replica: String,
    start: Instant,
    end: Option<Instant>,
}

#[derive(Clone, Default)]
struct Log(Arc<Mutex<Vec<Rec>>>);

/// Sets the end of a reconcile when dropped: when it returns, or when its runtime is killed.
struct Running(Log, usize);

impl Drop for Running {
    fn drop(&mut self) {
        self.0 .0.lock()[self.1].end = Some(Instant::now());
    }
}

impl Log {
    fn start(&self, object: &str, replica: &str) -> Running {
        let mut recs = self.0.lock();
        recs.push(Rec {
            object: object.into(),
            replica: replica.into(),
            start: Instant::now(),
            end: None,
        });
        Running(self.clone(), recs.len() - 1)
    }

    fn overlaps(&self) -> Vec<String> {
        let mut by_object: HashMap<String, Vec<Rec>> = HashMap::new();
        for r in self.0.lock().iter() {
            by_object
                .entry(r.object.clone())
                .or_default()
                .push(r.clone());
        }
        let mut wrong = Vec::new();
        for (object, mut recs) in by_object {
            recs.sort_by_key(|r| r.start);
            let mut until: Option<(Instant, String)> = None;
            for r in recs {
                if let Some((end, who)) = &until {
                    if *end > r.start {
                        wrong.push(format!(
                            "{object}: {who} reconciled until {:?} after {} started",
                            *end - r.start,
                            r.replica
                        ));
                    }
                }
                let end = r.end.unwrap_or_else(Instant::now);
                if until.as_ref().is_none_or(|(e, _)| end > *e) {
                    until = Some((end, r.replica.clone()));
                }
            }
        }
        wrong
    }

    /// The shortest time between one replica's last reconcile of an object and another
    /// replica's first, over every hand-over.
    fn closest_handover(&self) -> Option<Duration> {
        let mut by_object: HashMap<String, Vec<Rec>> = HashMap::new();
        for r in self.0.lock().iter() {
            by_object
                .entry(r.object.clone())
                .or_default()
                .push(r.clone());
        }
        let mut closest: Option<Duration> = None;
        for (_, mut recs) in by_object {
            recs.sort_by_key(|r| r.start);
            for w in recs.windows(2) {
                if w[0].replica != w[1].replica {
                    let gap = w[1]
                        .start
                        .saturating_duration_since(w[0].end.unwrap_or(w[1].start));
                    closest = Some(closest.map_or(gap, |c| c.min(gap)));
                }
            }
        }
        closest
    }

    fn reconciled_since(&self, object: &str, replica: &str, since: Instant) -> bool {
        self.0
            .lock()
            .iter()
            .any(|r| r.object == object && r.replica == replica && r.start >= since)
    }
}

fn config(cluster: &TestCluster, agent: &str) -> Config {
    let mut config = Config::from_kubeconfig_file(cluster.kubeconfig_path()).expect("kubeconfig");
    config.qps = 0.0;
    config.max_retries = 0;
    config.connect_timeout = Some(Duration::from_millis(500));
    config.request_timeout = Some(RENEW);
    config.user_agent = Some(agent.to_string());
    config
}

fn agent(name: &str) -> String {
    format!("sharding-chaos/{name}")
}

/// One replica process: a runtime of its own.
struct Replica {
    name: String,
    runtime: Option<tokio::runtime::Runtime>,
    stop: CancellationToken,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl Drop for Replica {
    /// A replica left over when a seed fails ends like a killed one (a runtime cannot be
    /// dropped inside the test's async context).
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

fn start(cluster: &TestCluster, ns: &str, name: &str, log: &Log, mode: Mode) -> Replica {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("runtime");
    let stop = CancellationToken::new();
    let (config, ns, name_, log, s) = (
        config(cluster, &agent(name)),
        ns.to_string(),
        name.to_string(),
        log.clone(),
        stop.clone(),
    );
    let task = runtime.spawn(async move {
        let client = Client::new(config).expect("client");
        let sharding = Sharding::new(client.clone(), Ring::new("chaos", &ns), &name_)
            .kind::<ConfigMap>(Some(&ns))
            .mode(mode)
            .lease_timing(LEASE, RENEW, RETRY)
            .sync_period(Duration::from_millis(100));
        let work = move |shard: Shard| {
            let (client, ns, name, log) = (client.clone(), ns.clone(), name_.clone(), log.clone());
            async move {
                let options = FactoryOptions {
                    namespace: Some(ns),
                    ..shard.factory_options()
                };
                let mut manager = Manager::builder(client)
                    .factory_options(options)
                    .graceful_shutdown_timeout(RENEW)
                    .build()
                    .expect("manager");
                let controller_name = format!("configmap-{name}");
                let reconcile = move |cm: Arc<ConfigMap>, _: Arc<()>| {
                    let running = log.start(cm.name(), &name);
                    async move {
                        tokio::time::sleep(RECONCILE).await;
                        drop(running);
                        Ok::<_, std::io::Error>(Action::requeue_after(RECONCILE))
                    }
                };
                // Controller names are unique per process, and every replica shares this one.
                // A worker per object: every object is in a reconcile half of the time, and
                // none waits behind others' requeues (the objects of a term's initial list are
                // queued at low priority, and with fewer workers than objects the requeued
                // ones would always go first).
                let controller = Controller::for_::<ConfigMap>(manager.factory())
                    .named(controller_name)
                    .concurrency(OBJECTS);
                let controller = shard
                    .into_runnable(controller, reconcile, DefaultErrorPolicy, Arc::new(()))
                    .expect("the drain handler");
                manager.add(controller).expect("add the controller");
                if let Err(e) = manager.run_until(shard.token()).await {
                    eprintln!("{}: manager: {e:?}", shard.name());
                }
            }
        };
        sharding.run(s, work).await.expect("the replica starts");
    });
    Replica {
        name: name.to_string(),
        runtime: Some(runtime),
        stop,
        task: Some(task),
    }
}

impl Replica {
    /// SIGKILL: every task of the replica dropped where it stands; nothing released.
    fn kill(self) {
        drop(self);
    }

    /// SIGTERM: the work stops, then both Leases are released.
    async fn stop(mut self) {
        self.stop.cancel();
        if let Some(task) = self.task.take() {
            let _ = tokio::time::timeout(CONVERGE, task).await;
        }
    }
}

/// Each object's owner in label mode: its shard on the ring of the `running` replicas, if it
/// carries exactly that label and no drain label.
fn label_owners(
    objects: &[&DynamicObject],
    ring: &Ring,
    running: &[String],
) -> BTreeMap<String, Result<String, String>> {
    let hash_ring = HashRing::new(running.iter().cloned());
    objects
        .iter()
        .map(|o| {
            let owner = hash_ring
                .owner_of(&object_key("", "ConfigMap", *o))
                .unwrap_or("");
            let labels: BTreeMap<_, _> = o.labels().cloned().unwrap_or_default();
            let owned = if labels.get(&ring.shard_label()).map(String::as_str) != Some(owner) {
                Err(format!("{} labelled {:?}, owner {owner}", o.name(), labels))
            } else if labels.contains_key(&ring.drain_label()) {
                Err(format!("{} still draining", o.name()))
            } else {
                Ok(owner.to_string())
            };
            (o.name().to_string(), owned)
        })
        .collect()
}

/// Each object's owner in range and slice modes: the one shard Lease whose slices hold it, if
/// that is a `running` replica's and acknowledged.
async fn range_owners(
    client: &Client,
    objects: &[&DynamicObject],
    ring: &Ring,
    running: &[String],
    mode: Mode,
) -> Result<BTreeMap<String, Result<String, String>>, String> {
    let leases = list_range_assignments(client, ring)
        .await
        .map_err(|e| e.to_string())?;
    Ok(objects
        .iter()
        .map(|o| {
            let slice = slice_of(&object_key("", "ConfigMap", *o));
            if mode == Mode::Slices && o.label(&ring.slice_label()) != Some(&slice.to_string()) {
                let owned = Err(format!("{} not labelled with slice {slice}", o.name()));
                return (o.name().to_string(), owned);
            }
            let holders: Vec<_> = leases
                .iter()
                .filter(|(_, a)| match mode {
                    Mode::Slices => a.slices.contains(&slice),
                    // An empty selector matches everything, and assigns nothing.
                    _ => !a.ranges.is_empty() && a.ranges.matches(*o),
                })
                .collect();
            let owned = match holders[..] {
                [(state, a)] if running.contains(&state.name) && a.is_acknowledged() => {
                    Ok(state.name.clone())
                }
                _ => Err(format!(
                    "{} in the ranges of {:?}",
                    o.name(),
                    holders
                        .iter()
                        .map(|(s, a)| (&s.name, a.generation, a.acknowledged))
                        .collect::<Vec<_>>()
                )),
            };
            (o.name().to_string(), owned)
        })
        .collect())
}

/// Whether every object is owned by one of `running` (as its mode says) and was reconciled by
/// it since `since`; if not, how many are and what the first one that is not lacks.
async fn converged(
    api: &Api<DynamicObject>,
    ring: &Ring,
    mode: Mode,
    running: &[String],
    log: &Log,
    since: Instant,
) -> Result<(), (usize, String)> {
    let list = api
        .list(&ListParams::default())
        .await
        .map_err(|e| (0, e.to_string()))?;
    let objects: Vec<_> = list
        .items
        .iter()
        .filter(|o| o.name().starts_with("obj-"))
        .collect();
    if objects.len() != OBJECTS {
        return Err((0, format!("{} objects listed", objects.len())));
    }
    let owners = match mode {
        Mode::Labels => label_owners(&objects, ring, running),
        _ => range_owners(api.client(), &objects, ring, running, mode)
            .await
            .map_err(|e| (0, e))?,
    };
    let mut settled = 0;
    let mut first_unsettled = None;
    for (object, owner) in owners {
        let lacks = match owner {
            Err(lacks) => Some(lacks),
            Ok(owner) if !log.reconciled_since(&object, &owner, since) => {
                Some(format!("{object} not yet reconciled by {owner}"))
            }
            Ok(_) => None,
        };
        match lacks {
            None => settled += 1,
            Some(lacks) => {
                first_unsettled.get_or_insert(lacks);
            }
        }
    }
    match first_unsettled {
        None => Ok(()),
        Some(lacks) => Err((settled, lacks)),
    }
}

async fn wait_converged(
    api: &Api<DynamicObject>,
    ring: &Ring,
    mode: Mode,
    replicas: &[Replica],
    log: &Log,
) -> Result<(), String> {
    let running: Vec<String> = replicas.iter().map(|r| r.name.clone()).collect();
    let since = Instant::now();
    let (mut progress, mut last) = (since, 0);
    loop {
        match converged(api, ring, mode, &running, log, since).await {
            Ok(()) => return Ok(()),
            Err((settled, lacks)) => {
                let now = Instant::now();
                if settled > last {
                    progress = now;
                }
                last = settled;
                if now >= progress + CONVERGE || now >= since + CONVERGE_AT_MOST {
                    return Err(format!(
                        "not converged on {running:?} after {:?}: {last} of {OBJECTS} objects \
                         settled, none more for {:?}; {lacks}",
                        now - since,
                        now - progress
                    ));
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    }
}

async fn run_seed(seed: u64, mode: Mode) -> Result<String, String> {
    let mut rng = StdRng::seed_from_u64(seed);
    let cluster = TestCluster::start().await.map_err(|e| e.to_string())?;
    let Some(server) = cluster.server() else {
        return Ok(
            "kcache-skip: sharding chaos: needs the embedded server's fault injection".into(),
        );
    };
    let ns = cluster
        .create_namespace("shard-chaos")
        .await
        .map_err(|e| e.to_string())?;
    let observer = Client::new(config(&cluster, "sharding-chaos/observer")).expect("client");
    let cms: Api<ConfigMap> = Api::namespaced(observer.clone(), &ns);
    for i in 0..OBJECTS {
        let cm = ConfigMap {
            metadata: ObjectMeta {
                name: Some(format!("obj-{i}")),
                ..Default::default()
            },
            ..Default::default()
        };
        cms.create(&PostParams::default(), &cm)
            .await
            .map_err(|e| e.to_string())?;
    }
    let api =
        Api::<DynamicObject>::dynamic(observer, <ConfigMap as Resource>::api_resource(), Some(&ns));
    let ring = Ring::new("chaos", &ns);
    let log = Log::default();
    let mut next = 0;
    let mut name = || {
        next += 1;
        format!("replica-{next}")
    };
    let mut replicas: Vec<Replica> = (0..3)
        .map(|_| start(&cluster, &ns, &name(), &log, mode))
        .collect();
    let mut steps = Vec::new();
    wait_converged(&api, &ring, mode, &replicas, &log).await?;
    for _ in 0..STEPS {
        let kind = rng.random_range(0..4);
        match kind {
            0 => {
                let i = rng.random_range(0..replicas.len());
                let who = replicas[i].name.clone();
                steps.push(format!("cut {who}"));
                server.fail_next(
                    usize::MAX,
                    RequestMatch::any().user_agent_contains(&agent(&who)),
                    Failure::ServiceUnavailable {
                        retry_after_seconds: 1,
                    },
                );
                tokio::time::sleep(LEASE + RENEW).await;
                server.clear_faults();
            }
            1 if replicas.len() > 1 => {
                let r = replicas.remove(rng.random_range(0..replicas.len()));
                steps.push(format!("kill {}", r.name));
                r.kill();
            }
            2 if replicas.len() > 1 => {
                let r = replicas.remove(rng.random_range(0..replicas.len()));
                steps.push(format!("stop {}", r.name));
                r.stop().await;
            }
            _ => {
                let r = start(&cluster, &ns, &name(), &log, mode);
                steps.push(format!("add {}", r.name));
                replicas.push(r);
            }
        }
        wait_converged(&api, &ring, mode, &replicas, &log)
            .await
            .map_err(|e| format!("after {steps:?}: {e}"))?;
    }
    let overlaps = log.overlaps();
    let reconciles = log.0.lock().len();
    let closest = log.closest_handover();
    for r in replicas {
        r.stop().await;
    }
    if !overlaps.is_empty() {
        return Err(format!(
            "seed {seed}, {mode:?}, steps {steps:?}: overlapping reconciles:\n{}",
            overlaps.join("\n")
        ));
    }
    Ok(format!(
        "seed {seed}, {mode:?}: {steps:?}, {reconciles} reconciles, no overlap, closest hand-over {closest:?}"
    ))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_object_is_reconciled_by_two_replicas_at_once() {
    let seeds: Vec<u64> = match std::env::var("KCACHE_CHAOS_SEED") {
        Ok(s) => vec![s.parse().expect("KCACHE_CHAOS_SEED is a number")],
        Err(_) => {
            match std::env::var("KCACHE_SOAK_SEEDS")
                .ok()
                .and_then(|s| s.parse::<u64>().ok())
            {
                Some(n) => (0..n).collect(),
                // Between them: a cut, a kill, two stops and two additions.
                None => DEFAULT_SEEDS.to_vec(),
            }
        }
    };
    for mode in [Mode::Labels, Mode::Ranges(ShardField::Uid), Mode::Slices] {
        for &seed in &seeds {
            match run_seed(seed, mode).await {
                Ok(line) => println!("{line}"),
                Err(e) => panic!("seed {seed}, {mode:?} (replay: KCACHE_CHAOS_SEED={seed}): {e}"),
            }
        }
    }
}
