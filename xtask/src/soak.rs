//! `cargo xtask soak [SEEDS]`: the reflector's chaos test (crates/reflector/tests/chaos.rs) with
//! many seeds, in release mode. `cargo test` runs 20 seeds; this runs 500 unless told otherwise
//! (argument or `KCACHE_SOAK_SEEDS`). Replay one failing seed with
//! `KCACHE_CHAOS_SEED=<seed> cargo test -p kcache-reflector --test chaos`.

pub(crate) fn run(args: &[String]) -> Result<(), String> {
    let seeds = match args.first() {
        Some(n) => n.clone(),
        None => std::env::var("KCACHE_SOAK_SEEDS").unwrap_or_else(|_| "500".into()),
    };
    seeds
        .parse::<u64>()
        .map_err(|_| format!("the number of soak seeds must be a number, not {seeds:?}"))?;
    crate::cargo(
        &[
            "test",
            "--release",
            "-p",
            "kcache-reflector",
            "--test",
            "chaos",
            "--",
            "--nocapture",
        ],
        &[("KCACHE_SOAK_SEEDS", &seeds)],
    )
}
