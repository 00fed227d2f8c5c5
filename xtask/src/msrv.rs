//! The minimum supported Rust version holds: the workspace's `rust-version` toolchain (installed
//! with rustup when missing) builds and tests the whole workspace with every feature, in a
//! target directory of its own (`target/msrv`) so the stable build's artifacts stay.

use std::path::Path;
use std::process::Command;

/// The workspace's `rust-version` (`[workspace.package]` of the root `Cargo.toml`).
pub(crate) fn rust_version(root: &Path) -> Result<String, String> {
    let manifest =
        std::fs::read_to_string(root.join("Cargo.toml")).map_err(|e| format!("Cargo.toml: {e}"))?;
    manifest
        .lines()
        .filter_map(|l| l.trim().strip_prefix("rust-version"))
        .filter_map(|rest| rest.trim().strip_prefix('='))
        .map(|v| v.trim().trim_matches('"').to_string())
        .next()
        .ok_or_else(|| "the root Cargo.toml sets no rust-version".to_string())
}

/// `cargo test --workspace --all-features` on the `rust-version` toolchain.
pub(crate) fn test() -> Result<(), String> {
    let root = crate::workspace_root();
    let version = rust_version(&root)?;
    run(
        Command::new("rustup").args(["toolchain", "install", &version, "--profile", "minimal"]),
        &format!("rustup toolchain install {version}"),
    )?;
    let target = root.join("target/msrv");
    let mut cargo = Command::new("rustup");
    cargo
        .args([
            "run",
            &version,
            "cargo",
            "test",
            "--workspace",
            "--all-features",
        ])
        .env("CARGO_TARGET_DIR", &target)
        .envs(crate::CI_BUILD.iter().copied())
        .current_dir(&root);
    // The outer cargo's variables (its own path, the package's) would mislead the older one.
    for (name, _) in std::env::vars_os() {
        let name = name.to_string_lossy();
        if name == "CARGO"
            || name == "RUSTC"
            || name == "RUSTDOC"
            || name == "RUSTUP_TOOLCHAIN"
            || name.starts_with("CARGO_PKG_")
            || name.starts_with("CARGO_MANIFEST_")
        {
            cargo.env_remove(name.as_ref());
        }
    }
    run(
        &mut cargo,
        &format!("cargo +{version} test --workspace --all-features"),
    )
}

fn run(command: &mut Command, what: &str) -> Result<(), String> {
    eprintln!("xtask: {what}");
    let status = command
        .status()
        .map_err(|e| format!("cannot run `{what}`: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("`{what}` failed ({status})"))
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_workspace_names_its_rust_version() {
        let version = super::rust_version(&crate::workspace_root()).unwrap();
        assert!(
            version.split('.').all(|p| p.parse::<u32>().is_ok()),
            "{version}"
        );
    }
}
