//! `cargo xtask soak [leaderelection|sharding] [SEEDS]`: a chaos test with many seeds, in release mode.
//!
//! - `soak [SEEDS]`: the reflector's (crates/reflector/tests/chaos.rs); `cargo test` runs 20
//!   seeds, this 500 unless told otherwise. Replay one failing seed with
//!   `KCACHE_CHAOS_SEED=<seed> cargo test -p kcache-reflector --test chaos`.
//! - `soak leaderelection [SEEDS]`: leader election's (crates/leaderelection/tests/chaos.rs,
//!   about 8 s per pair of seeds); `cargo test` runs 2 seeds, this 50 unless told otherwise.
//!   Replay with `KCACHE_CHAOS_SEED=<seed> cargo test -p kcache-leaderelection --test chaos`.
//! - `soak sharding [SEEDS]`: sharded replicas' (crates/sharding/tests/chaos.rs: no object
//!   reconciled by two replicas at once through cuts, kills, stops and additions); `cargo test`
//!   runs 2 seeds, this 20 unless told otherwise. Replay with
//!   `KCACHE_CHAOS_SEED=<seed> cargo test -p kcache-sharding --test chaos`.
//!
//! `KCACHE_SOAK_SEEDS` sets the number of seeds when no argument does.

pub(crate) fn run(args: &[String]) -> Result<(), String> {
    let (package, default, rest) = match args.first().map(String::as_str) {
        Some("leaderelection") => ("kcache-leaderelection", "50", &args[1..]),
        Some("sharding") => ("kcache-sharding", "20", &args[1..]),
        Some("reflector") => ("kcache-reflector", "500", &args[1..]),
        _ => ("kcache-reflector", "500", args),
    };
    let seeds = match rest.first() {
        Some(n) => n.clone(),
        None => std::env::var("KCACHE_SOAK_SEEDS").unwrap_or_else(|_| default.into()),
    };
    seeds
        .parse::<u64>()
        .map_err(|_| format!("the number of soak seeds must be a number, not {seeds:?}"))?;
    crate::cargo(
        &[
            "test",
            "--release",
            "-p",
            package,
            "--test",
            "chaos",
            "--",
            "--nocapture",
        ],
        &[("KCACHE_SOAK_SEEDS", &seeds)],
    )
}
