//! `cargo xtask fuzz [--seconds N] [TARGET...]`: every fuzz target of `fuzz/` (or the ones
//! named) run with cargo-fuzz for a bounded time each, from its seeds.
//!
//! Needs the nightly toolchain and cargo-fuzz (`cargo install cargo-fuzz`). Each target's corpus
//! starts from `fuzz/seeds/TARGET` (if any), copied into `fuzz/corpus/TARGET` (ignored by git) so
//! the seeds stay as committed; a crash leaves its input in `fuzz/artifacts/TARGET` and fails
//! the command.

use std::path::Path;
use std::process::Command;

use crate::{workspace_root, Failure};

/// How long each target runs when `--seconds` is not given.
const DEFAULT_SECONDS: u64 = 60;

pub(crate) fn run(args: &[String]) -> Result<(), Failure> {
    let mut seconds = DEFAULT_SECONDS;
    let mut chosen = Vec::new();
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--seconds" => {
                let value = args
                    .next()
                    .ok_or_else(|| Failure::usage("--seconds needs a number".into()))?;
                seconds = value.parse().map_err(|_| {
                    Failure::usage(format!("--seconds takes whole seconds, not {value:?}"))
                })?;
            }
            other if other.starts_with('-') => {
                return Err(Failure::usage(format!("fuzz: unknown option {other}")))
            }
            target => chosen.push(target.to_string()),
        }
    }
    let fuzz = workspace_root().join("fuzz");
    let all = targets(&fuzz.join("Cargo.toml"))?;
    if let Some(unknown) = chosen.iter().find(|t| !all.contains(t)) {
        return Err(Failure::usage(format!(
            "fuzz: no target {unknown:?}; the targets are {}",
            all.join(", ")
        )));
    }
    let targets = if chosen.is_empty() { all } else { chosen };
    let probe = Command::new("cargo")
        .args(["+nightly", "fuzz", "--version"])
        .output();
    if !probe.is_ok_and(|o| o.status.success()) {
        return Err(Failure::missing(
            "fuzz: needs the nightly toolchain and cargo-fuzz (`rustup toolchain install nightly`, `cargo install cargo-fuzz`)".into(),
        ));
    }
    for target in &targets {
        let corpus = fuzz.join("corpus").join(target);
        std::fs::create_dir_all(&corpus)
            .map_err(|e| format!("fuzz: cannot make {}: {e}", corpus.display()))?;
        copy_seeds(&fuzz.join("seeds").join(target), &corpus)?;
        eprintln!("xtask: fuzz {target} for {seconds} s");
        let status = Command::new("cargo")
            .current_dir(&fuzz)
            .args(["+nightly", "fuzz", "run", target])
            .arg(&corpus)
            .arg("--")
            .arg(format!("-max_total_time={seconds}"))
            .arg("-max_len=65536")
            .status()
            .map_err(|e| format!("fuzz: cannot run cargo fuzz: {e}"))?;
        if !status.success() {
            return Err(format!(
                "fuzz: {target} failed ({status}); the input is in fuzz/artifacts/{target}"
            )
            .into());
        }
    }
    Ok(())
}

/// The `[[bin]]` names of the fuzz crate's manifest.
fn targets(manifest: &Path) -> Result<Vec<String>, Failure> {
    let text = std::fs::read_to_string(manifest)
        .map_err(|e| format!("fuzz: cannot read {}: {e}", manifest.display()))?;
    let mut names = Vec::new();
    let mut in_bin = false;
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            in_bin = line == "[[bin]]";
        } else if let Some(value) = line.strip_prefix("name").filter(|_| in_bin) {
            let name = value
                .trim_start()
                .trim_start_matches('=')
                .trim()
                .trim_matches('"');
            names.push(name.to_string());
        }
    }
    if names.is_empty() {
        return Err(format!("fuzz: {} names no [[bin]] target", manifest.display()).into());
    }
    Ok(names)
}

/// Copies the files of `seeds` (if it exists) into `corpus`.
fn copy_seeds(seeds: &Path, corpus: &Path) -> Result<(), Failure> {
    let Ok(entries) = std::fs::read_dir(seeds) else {
        return Ok(());
    };
    for entry in entries.flatten() {
        let to = corpus.join(entry.file_name());
        std::fs::copy(entry.path(), &to)
            .map_err(|e| format!("fuzz: cannot copy {}: {e}", entry.path().display()))?;
    }
    Ok(())
}
