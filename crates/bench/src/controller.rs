//! The `controller` scenario (see the crate README and BENCHMARKS.md): a kcache-controller
//! `Controller` over the ConfigMaps of one namespace with `workers` concurrency, whose reconcile
//! records which listed objects it reconciled and when it first saw each update's
//! `kcache-bench-seq` label value on the object it read from the cache, and awaits the next
//! change. The same workload and JSON fields as `cgbench -scenario
//! controller`, `krbench controller` and `crbench -scenario controller`:
//!  1. a plain list of the namespace's names (pages of 500, metadata only) before the clock;
//!  2. `initial_reconcile_seconds`: controller start until every listed object was reconciled once;
//!  3. `updates` merge patches, one at a time, each awaited, round-robin, setting
//!     `metadata.labels.kcache-bench-seq=<run start unix seconds>-<i>`; latency = first reconcile
//!     seeing the value − the patch call's return (`latency_req`: − just before the request);
//!     up to 30 s for stragglers, counted in `missed`; nearest-rank percentiles.
//!
//! The controller caches compactly by default (`--storage compact`, the runtime's default).

use std::convert::Infallible;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use ahash::RandomState;
use hashbrown::HashTable;
use k8s_openapi::api::core::v1::ConfigMap;
use kcache_controller::{Action, Controller, DefaultErrorPolicy};
use kcache_core::ListParams;
use kcache_informer::{FactoryOptions, SharedInformerFactory};
use kcache_transport::{Api, Patch, PatchParams};
use parking_lot::Mutex;
use serde_json::json;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use crate::report::emit;
use crate::storage::Storage;

pub(crate) const SEQ_LABEL: &str = "kcache-bench-seq";

/// Where the scenario's ConfigMaps are (`patch-floor` patches the same ones).
#[derive(clap::Args)]
pub(crate) struct Target {
    /// The kubeconfig of the server.
    #[arg(long)]
    pub(crate) kubeconfig: PathBuf,
    /// The namespace whose ConfigMaps are reconciled and patched.
    #[arg(long, default_value = "bench")]
    pub(crate) namespace: String,
}

/// Flags, as cgbench's.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    target: Target,
    /// Concurrent reconciles.
    #[arg(long, default_value_t = 2)]
    workers: usize,
    /// Merge patches after the initial reconcile.
    #[arg(long, default_value_t = 1000)]
    updates: usize,
    /// Overall limit, as a Go duration (`90s`, `10m`) or seconds.
    #[arg(long, default_value = "10m", value_parser = crate::duration::parse_duration)]
    timeout: Duration,
    /// What the controller's cache keeps.
    #[arg(long, value_enum, default_value = "compact")]
    storage: Storage,
}

/// What reconciles saw, kept as lean as cgbench's maps (which hold the names the list decoded,
/// not copies): the listed names sorted, an index of their places by name, a bit per name not
/// reconciled yet, and per update the first reconcile that saw its value.
struct Seen {
    /// The listed names, sorted: an object's place here is its bit in `pending`.
    names: Vec<String>,
    /// Each name's place, by the name's hash: a reconcile finds its bit with one probe and one
    /// comparison, where a binary search over 10k separately allocated names cost 14 cache
    /// misses (about 0.5 µs, a tenth of a reconcile's CPU in the initial list; cgbench pays
    /// one map lookup).
    places: HashTable<u32>,
    hasher: RandomState,
    /// The label values' prefix of this run: `<run>-<i>` is update `i`'s value.
    run: String,
    inner: Mutex<SeenInner>,
    reconciles: AtomicU64,
    init_done: Notify,
}

struct SeenInner {
    /// Bit `j` set: `names[j]` not reconciled yet.
    pending: Vec<u64>,
    left: usize,
    /// Update `i` → first reconcile that saw its value.
    first: Vec<Option<Instant>>,
}

impl Seen {
    fn new(mut names: Vec<String>, run: u64, updates: usize) -> Seen {
        names.sort_unstable();
        let n = names.len();
        let mut pending = vec![u64::MAX; n.div_ceil(64)];
        if !n.is_multiple_of(64) {
            pending[n / 64] = (1u64 << (n % 64)) - 1;
        }
        let hasher = RandomState::new();
        let mut places = HashTable::with_capacity(n);
        for (j, name) in names.iter().enumerate() {
            places.insert_unique(hasher.hash_one(name.as_str()), j as u32, |&k| {
                hasher.hash_one(names[k as usize].as_str())
            });
        }
        Seen {
            names,
            places,
            hasher,
            run: format!("{run}-"),
            inner: Mutex::new(SeenInner {
                pending,
                left: n,
                first: vec![None; updates],
            }),
            reconciles: AtomicU64::new(0),
            init_done: Notify::new(),
        }
    }

    /// The label value update `i` sets.
    fn value(&self, i: usize) -> String {
        format!("{}{i}", self.run)
    }

    /// The object update `i` patches (round-robin over the listed names).
    fn target(&self, i: usize) -> &str {
        &self.names[i % self.names.len()]
    }

    fn saw(&self, name: &str, val: &str, now: Instant) {
        let place = self
            .places
            .find(self.hasher.hash_one(name), |&j| {
                self.names[j as usize] == name
            })
            .map(|&j| j as usize);
        let update = val
            .strip_prefix(self.run.as_str())
            .and_then(|i| i.parse::<usize>().ok())
            .filter(|&i| self.target(i) == name);
        let mut g = self.inner.lock();
        if let Some(j) = place {
            let (word, bit) = (j / 64, 1u64 << (j % 64));
            if g.pending[word] & bit != 0 {
                g.pending[word] &= !bit;
                g.left -= 1;
                if g.left == 0 {
                    self.init_done.notify_one();
                }
            }
        }
        if let Some(slot) = update.and_then(|i| g.first.get_mut(i)) {
            slot.get_or_insert(now);
        }
    }

    fn first_seen(&self, i: usize) -> Option<Instant> {
        self.inner.lock().first[i]
    }
}

async fn reconcile(cm: Arc<ConfigMap>, seen: Arc<Seen>) -> Result<Action, Infallible> {
    let now = Instant::now();
    seen.reconciles.fetch_add(1, Ordering::Relaxed);
    let name = cm.metadata.name.as_deref().unwrap_or("");
    let labels = cm.metadata.labels.as_ref();
    let val = labels
        .and_then(|l| l.get(SEQ_LABEL))
        .map_or("", String::as_str);
    seen.saw(name, val, now);
    Ok(Action::await_change())
}

pub fn run(args: Args) {
    crate::heap::release_freed_memory_promptly();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    runtime.block_on(async {
        match tokio::time::timeout(args.timeout, scenario(&args)).await {
            Ok(fields) => emit("controller", fields),
            Err(_) => {
                eprintln!(
                    "kcache-bench: controller: timed out after {:?}",
                    args.timeout
                );
                std::process::exit(1);
            }
        }
    });
}

/// The names of the namespace's ConfigMaps, by a paginated metadata-only list.
pub(crate) async fn list_names(api: &Api<ConfigMap>) -> Vec<String> {
    let meta = api.clone().into_metadata();
    let mut names = Vec::new();
    let mut params = ListParams {
        limit: Some(500),
        ..Default::default()
    };
    loop {
        let page = meta.list(&params).await.unwrap_or_else(|e| {
            eprintln!("kcache-bench: list: {}", kcache_core::ErrorChain(&e));
            std::process::exit(1)
        });
        names.extend(page.items.iter().map(|m| m.metadata.name.clone()));
        match page.continue_token() {
            Some(c) => params.continue_token = Some(c.to_string()),
            None => return names,
        }
    }
}

pub(crate) fn ms_between(later: Instant, earlier: Instant) -> f64 {
    if later >= earlier {
        (later - earlier).as_secs_f64() * 1e3
    } else {
        -(earlier - later).as_secs_f64() * 1e3
    }
}

/// Nearest rank over sorted values.
pub(crate) fn percentile(sorted: &[f64], p: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let i = ((p * sorted.len() as f64).ceil() as usize).max(1) - 1;
    Some(sorted[i.min(sorted.len() - 1)])
}

async fn scenario(args: &Args) -> serde_json::Value {
    let client = crate::client::from_kubeconfig(&args.target.kubeconfig);
    let api = Api::<ConfigMap>::namespaced(client.clone(), &args.target.namespace);
    let names = list_names(&api).await;
    let n = names.len();
    let updates = if n == 0 { 0 } else { args.updates };
    let run = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let seen = Arc::new(Seen::new(names, run, updates));
    if n == 0 {
        seen.init_done.notify_one();
    }

    let start = Instant::now();
    let options = FactoryOptions {
        namespace: Some(args.target.namespace.clone()),
        ..Default::default()
    };
    let factory = Arc::new(SharedInformerFactory::new(client, options));
    let storage = match args.storage {
        Storage::Compact => kcache_controller::Storage::Compact,
        Storage::Plain => kcache_controller::Storage::Plain,
    };
    let stop = CancellationToken::new();
    let controller = Controller::for_with_storage::<ConfigMap>(&factory, storage)
        .named("kcache-bench")
        .concurrency(args.workers)
        .shutdown_on(stop.clone());
    let task = tokio::spawn(controller.run(reconcile, DefaultErrorPolicy, seen.clone()));
    seen.init_done.notified().await;
    let initial = start.elapsed().as_secs_f64();
    eprintln!("RECONCILED");

    let pp = PatchParams::default();
    let (mut issued, mut sent) = (Vec::with_capacity(updates), Vec::with_capacity(updates));
    let t0 = Instant::now();
    for i in 0..updates {
        let patch = json!({"metadata": {"labels": {SEQ_LABEL: seen.value(i)}}});
        issued.push(Instant::now());
        if let Err(e) = api.patch(seen.target(i), &pp, &Patch::Merge(&patch)).await {
            eprintln!("kcache-bench: patch: {}", kcache_core::ErrorChain(&e));
            std::process::exit(1);
        }
        sent.push(Instant::now());
    }
    let patch_seconds = t0.elapsed().as_secs_f64();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let (mut lat, mut lat_req, mut missed) = (Vec::new(), Vec::new(), 0usize);
        for i in 0..sent.len() {
            match seen.first_seen(i) {
                Some(t) => {
                    lat.push(ms_between(t, sent[i]));
                    lat_req.push(ms_between(t, issued[i]));
                }
                None => missed += 1,
            }
        }
        if missed == 0 || Instant::now() > deadline {
            lat.sort_by(f64::total_cmp);
            lat_req.sort_by(f64::total_cmp);
            let fields = json!({
                "objects": n, "workers": args.workers, "updates": args.updates,
                "initial_reconcile_seconds": initial, "patch_seconds": patch_seconds,
                "latency_p50_ms": percentile(&lat, 0.50), "latency_p99_ms": percentile(&lat, 0.99),
                "latency_req_p50_ms": percentile(&lat_req, 0.50),
                "latency_req_p99_ms": percentile(&lat_req, 0.99),
                "missed": missed, "reconciles": seen.reconciles.load(Ordering::Relaxed),
                "storage": args.storage.name(),
            });
            stop.cancel();
            let _ = task.await;
            factory.shutdown().await;
            return fields;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::{percentile, Seen};
    use std::time::Instant;

    #[test]
    fn seen_counts_each_listed_name_once_and_each_updates_first_sight() {
        let names = ["b", "a", "c"].map(String::from).to_vec();
        let seen = Seen::new(names, 7, 4);
        assert_eq!(
            (seen.target(0), seen.target(4), seen.value(4)),
            ("a", "b", "7-4".into())
        );
        let (t1, t2) = (
            Instant::now(),
            Instant::now() + std::time::Duration::from_millis(1),
        );
        seen.saw("a", "", t1);
        seen.saw("a", "6-0", t1); // another run's value
        seen.saw("b", "7-0", t1); // update 0 patches "a", not "b"
        assert_eq!(seen.inner.lock().left, 1);
        assert_eq!(seen.first_seen(0), None);
        seen.saw("a", "7-0", t2);
        seen.saw("a", "7-0", t1 + std::time::Duration::from_millis(5));
        assert_eq!(seen.first_seen(0), Some(t2));
        seen.saw("b", "", t1);
        seen.saw("unknown", "", t1);
        assert_eq!(seen.inner.lock().left, 1);
        seen.saw("c", "", t1);
        assert_eq!(seen.inner.lock().left, 0);
        let many = Seen::new((0..130).map(|i| format!("n{i:03}")).collect(), 1, 0);
        assert_eq!(
            many.inner
                .lock()
                .pending
                .iter()
                .map(|w| w.count_ones())
                .sum::<u32>(),
            130
        );
    }

    #[test]
    fn nearest_rank() {
        let v = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(percentile(&v, 0.5), Some(2.0));
        assert_eq!(percentile(&v, 0.99), Some(4.0));
        assert_eq!(percentile(&[], 0.5), None);
    }
}
