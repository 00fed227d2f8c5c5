//! The `sharding` scenario: kcache-sharding's ring simulated, no server. For each shard count n,
//! `--keys` object keys (`group/Kind/namespace/name`) are placed on a ring of n shards; the line
//! reports the largest shard over the mean, and the fraction of keys that change owner when a
//! shard joins (n → n+1) and when one leaves (n → n-1, the last-named shard), each over 1/n.
//! Targets (issue #42): largest ≤ 1.1 × mean, moved ≤ 1.1 × 1/n.

use std::time::Instant;

use kcache_sharding::{hash_key, HashRing, DEFAULT_VIRTUAL_NODES};
use serde_json::json;

/// Flags.
#[derive(clap::Args)]
pub struct Args {
    /// Shard counts, one JSON line each.
    #[arg(long, value_delimiter = ',', default_value = "3,10,100")]
    shards: Vec<usize>,
    /// Simulated objects.
    #[arg(long, default_value_t = 1_000_000)]
    keys: usize,
    /// Virtual nodes per shard.
    #[arg(long, default_value_t = DEFAULT_VIRTUAL_NODES)]
    virtual_nodes: u32,
}

pub fn run(args: Args) {
    let hashes: Vec<u64> = (0..args.keys)
        .map(|i| hash_key(&format!("example.com/Foo/team-{}/foo-{i}", i % 100)))
        .collect();
    for n in args.shards.into_iter().filter(|&n| n >= 2) {
        let names = |count: usize| (0..count).map(|i| format!("shard-{i}"));
        let ring = HashRing::with_virtual_nodes(names(n), args.virtual_nodes);
        let joined = HashRing::with_virtual_nodes(names(n + 1), args.virtual_nodes);
        let left = HashRing::with_virtual_nodes(names(n - 1), args.virtual_nodes);
        let t0 = Instant::now();
        let owners: Vec<&str> = hashes
            .iter()
            .map(|&h| ring.owner_of_hash(h).unwrap_or(""))
            .collect();
        let lookup_secs = t0.elapsed().as_secs_f64();
        let mut per_shard = std::collections::HashMap::<&str, usize>::new();
        for o in &owners {
            *per_shard.entry(o).or_default() += 1;
        }
        let moved = |other: &HashRing| {
            hashes
                .iter()
                .zip(&owners)
                .filter(|(&h, &o)| other.owner_of_hash(h) != Some(o))
                .count()
        };
        let keys = args.keys as f64;
        let mean = keys / n as f64;
        let largest = per_shard.values().copied().max().unwrap_or(0);
        let smallest = per_shard.values().copied().min().unwrap_or(0);
        let (join, leave) = (moved(&joined), moved(&left));
        crate::report::emit(
            "sharding",
            json!({
                "shards": n,
                "keys": args.keys,
                "virtual_nodes": args.virtual_nodes,
                "largest_over_mean": largest as f64 / mean,
                "smallest_over_mean": smallest as f64 / mean,
                "join_moved_fraction": join as f64 / keys,
                "join_moved_over_1_n": join as f64 / keys * n as f64,
                "leave_moved_fraction": leave as f64 / keys,
                "leave_moved_over_1_n": leave as f64 / keys * n as f64,
                "lookups_per_sec": keys / lookup_secs,
            }),
        );
    }
}
