//! `cargo publish --workspace --dry-run`: every published crate packaged in dependency order and
//! built from its package alone (cargo overlays the packages made so far as a local registry),
//! as crates.io would get it. `publish = false` crates (kcache-bench, xtask) are left out.
//!
//! Cargo takes a registry package of a given version to be immutable: it reuses the directory it
//! unpacked the overlaid package into (`$CARGO_HOME/registry/src/-HASH/NAME-VERSION`) and the
//! library it built from it, on the next dry run of the same version. A crate would then be
//! verified against the previous run's build of its kcache dependencies (a new method missing).
//! The dry run therefore starts by removing those unpacked copies (crates.io's own registry,
//! `index.crates.io-*`, is left alone) and by `cargo clean -p` of every published crate.

use std::path::PathBuf;

/// Packages and verifies every published crate without uploading.
pub(crate) fn dry_run() -> Result<(), String> {
    remove_stale_overlays()?;
    let published = crate::dependency_table::workspace_deps(&crate::workspace_root())?;
    let mut clean = vec!["clean"];
    for name in published.keys() {
        clean.extend(["-p", name]);
    }
    crate::cargo(&clean, crate::CI_BUILD)?;
    crate::cargo(
        &[
            "publish",
            "--workspace",
            "--dry-run",
            // What is packaged is the working tree: uncommitted edits are checked too.
            "--allow-dirty",
            "--exclude",
            "kcache-bench",
            "--exclude",
            "xtask",
        ],
        crate::CI_BUILD,
    )
}

/// Removes the unpacked `kcache*` packages of earlier dry runs' overlay registries (the
/// `registry/src` directories whose name starts with `-`).
fn remove_stale_overlays() -> Result<(), String> {
    let Some(home) = cargo_home() else {
        return Ok(());
    };
    let Ok(registries) = std::fs::read_dir(home.join("registry").join("src")) else {
        return Ok(()); // nothing unpacked yet
    };
    for registry in registries.flatten() {
        if !registry.file_name().to_string_lossy().starts_with('-') {
            continue;
        }
        let Ok(packages) = std::fs::read_dir(registry.path()) else {
            continue;
        };
        for package in packages.flatten() {
            if package.file_name().to_string_lossy().starts_with("kcache") {
                let path = package.path();
                std::fs::remove_dir_all(&path).map_err(|e| {
                    format!(
                        "publish: cannot remove the stale package {}: {e}",
                        path.display()
                    )
                })?;
            }
        }
    }
    Ok(())
}

/// `$CARGO_HOME`, else `~/.cargo`.
fn cargo_home() -> Option<PathBuf> {
    std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))
}
