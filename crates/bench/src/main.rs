//! kcache-bench: kcache's side of the side-by-side benchmarks with client-go's `cgbench` (the
//! scenarios are listed in the crate README). One subcommand per scenario; each prints one JSON
//! line.
//!
//! Adding a scenario: a module with an `Args` struct (clap) and a `run(Args)`, plus one variant
//! in [`Scenario`] and one match arm in `main`.

mod account;
mod client;
mod configmaps;
mod controller;
mod core_round_trip;
mod duration;
mod fifo;
mod heap;
mod informer;
mod many;
mod objects;
mod patch_floor;
mod podsync;
mod proc_status;
mod relist;
mod report;
mod sharded;
mod sharding;
mod storage;
mod store;
mod typed_read;
mod workqueue;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "kcache-bench",
    about = "kcache benchmarks, comparable with cgbench"
)]
struct Cli {
    /// The allocator to run on (default: `system` for the memory scenarios `informer` and
    /// `many`, `mimalloc` for the others; see src/heap.rs). The binary re-executes itself with
    /// KCACHE_BENCH_ALLOCATOR set when it is not already running on it.
    #[arg(long, global = true, value_enum)]
    allocator: Option<heap::Allocator>,
    #[command(subcommand)]
    scenario: Scenario,
}

#[derive(Subcommand)]
enum Scenario {
    /// A rate-limiting queue: one producer adds, workers get → forget → done.
    Workqueue(workqueue::Args),
    /// A cache line's round trip between two cores, as the host placed them now (what a queue's
    /// hand-over costs; `workqueue-compare.sh` records it beside client-go's rounds).
    CoreRoundTrip,
    /// An indexer: insert, update, then by_index look-ups on typed ConfigMaps.
    Store(store::Args),
    /// A DeltaFIFO into an indexer: one producer adds and updates, one consumer applies.
    Fifo(fifo::Args),
    /// A 100k relist into a full cache: RealFIFO's deltas, or with --atomic one unit in one write.
    Relist(relist::Args),
    /// An informer over a PodList fixture: sync, memory kept per pod, then update fan-out.
    Podsync(podsync::Args),
    /// A typed read (`get_by_key`) of every cached pod of a PodList fixture.
    TypedRead(typed_read::Args),
    /// A ConfigMap informer against a server: time to sync, then to N update notifications.
    Informer(informer::Args),
    /// Many small informers in one process: sync, then threads, idle CPU and peak RSS.
    Many(many::Args),
    /// A kcache-controller controller over one namespace's ConfigMaps: initial reconcile, then
    /// the latency of N patches.
    Controller(controller::Args),
    /// The `controller` scenario's patches with no controller: the least latency any client
    /// can have on the server (HTTP/1.1, a thread blocked reading the watch, nothing decoded).
    PatchFloor(patch_floor::Args),
    /// kcache-sharding's ring, simulated: balance and movement on join/leave for 3, 10, 100 shards.
    Sharding(sharding::Args),
    /// kcache-sharding on a server: one replica against several (throughput, cache sizes), then
    /// hand-over after a kill and a graceful stop, and rebalancing after a join.
    Sharded(sharded::Args),
    /// Creates ConfigMaps `bench-{i}` (about 300 bytes of data each) for `informer`.
    Seed(configmaps::SeedArgs),
    /// Modifies the seeded ConfigMaps N times, for `informer --expect-updates N`.
    Churn(configmaps::ChurnArgs),
}

fn main() {
    let cli = Cli::parse();
    let wanted = cli.allocator.unwrap_or(match cli.scenario {
        Scenario::Informer(_) | Scenario::Many(_) | Scenario::Controller(_) => {
            heap::Allocator::System
        }
        _ => heap::Allocator::Mimalloc,
    });
    if wanted != heap::Allocator::current() {
        heap::run_on(wanted);
    }
    heap::disable_transparent_huge_pages();
    match cli.scenario {
        Scenario::Workqueue(args) => workqueue::run(args),
        Scenario::CoreRoundTrip => report::emit(
            "core-round-trip",
            serde_json::json!({ "core_round_trip_ns": core_round_trip::nanos() }),
        ),
        Scenario::Store(args) => store::run(args),
        Scenario::Fifo(args) => fifo::run(args),
        Scenario::Relist(args) => relist::run(args),
        Scenario::Podsync(args) => podsync::run(args),
        Scenario::TypedRead(args) => typed_read::run(args),
        Scenario::Informer(args) => informer::run(args),
        Scenario::Many(args) => many::run(args),
        Scenario::Controller(args) => controller::run(args),
        Scenario::PatchFloor(args) => patch_floor::run(args),
        Scenario::Sharding(args) => sharding::run(args),
        Scenario::Sharded(args) => sharded::run(args),
        Scenario::Seed(args) => configmaps::seed(args),
        Scenario::Churn(args) => configmaps::churn(args),
    }
}
