//! `cargo publish --workspace --dry-run`: every published crate packaged in dependency order and
//! built from its package alone (cargo overlays the packages made so far as a local registry),
//! as crates.io would get it. `publish = false` crates (kcache-bench, xtask) are left out.

/// Packages and verifies every published crate without uploading.
pub(crate) fn dry_run() -> Result<(), String> {
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
