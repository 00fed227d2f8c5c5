//! A crate whose integration tests link as one binary (`autotests = false`, a `[[test]]` whose
//! root declares each file as a module) compiles only the files its roots name: a new
//! `tests/*.rs` left out would silently never run. `cargo xtask ci` refuses that.

use std::collections::BTreeSet;
use std::path::Path;

/// Every crate under `crates/` with `autotests = false`: each `tests/*.rs` is a `[[test]]` path
/// or a `mod` of one.
pub(crate) fn check(root: &Path) -> Result<(), String> {
    let mut missing = Vec::new();
    let crates = std::fs::read_dir(root.join("crates")).map_err(|e| format!("crates/: {e}"))?;
    for dir in crates.flatten().map(|e| e.path()) {
        let Ok(manifest) = std::fs::read_to_string(dir.join("Cargo.toml")) else {
            continue;
        };
        if !manifest.lines().any(|l| l.trim() == "autotests = false") {
            continue;
        }
        let roots = test_paths(&manifest);
        let mut sources = Vec::new();
        for path in &roots {
            let file = dir.join(path);
            sources.push(
                std::fs::read_to_string(&file).map_err(|e| format!("{}: {e}", file.display()))?,
            );
        }
        let tests = dir.join("tests");
        let files = std::fs::read_dir(&tests).map_err(|e| format!("{}: {e}", tests.display()))?;
        let stems = files.flatten().filter_map(|e| {
            e.file_name()
                .to_str()?
                .strip_suffix(".rs")
                .map(str::to_owned)
        });
        for stem in unnamed(stems, &roots, &sources) {
            missing.push(tests.join(format!("{stem}.rs")).display().to_string());
        }
    }
    if missing.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "not compiled (autotests = false): name each in its crate's tests/main.rs \
             (`mod file;`) or as a [[test]]: {}",
            missing.join(", ")
        ))
    }
}

/// The `path`s of a manifest's `[[test]]` targets under `tests/`.
fn test_paths(manifest: &str) -> Vec<String> {
    manifest
        .lines()
        .filter_map(|l| l.trim().strip_prefix("path = \"tests/")?.strip_suffix('"'))
        .map(|p| format!("tests/{p}"))
        .collect()
}

/// The file stems that are neither a test root (`tests/<stem>.rs`) nor a `mod <stem>;` of one.
fn unnamed(
    stems: impl Iterator<Item = String>,
    roots: &[String],
    sources: &[String],
) -> BTreeSet<String> {
    let modules: BTreeSet<&str> = sources
        .iter()
        .flat_map(|s| s.lines())
        .filter_map(|l| l.trim().strip_prefix("mod ")?.strip_suffix(';'))
        .collect();
    stems
        .filter(|s| !roots.contains(&format!("tests/{s}.rs")) && !modules.contains(s.as_str()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_neither_a_root_nor_a_module_is_reported() {
        let manifest = "[package]\nautotests = false\n\n[[test]]\nname = \"it\"\npath = \
                        \"tests/main.rs\"\n\n[[test]]\nname = \"alone\"\npath = \"tests/alone.rs\"\n";
        let roots = test_paths(manifest);
        assert_eq!(roots, ["tests/main.rs", "tests/alone.rs"]);
        let main = "//! doc\n#[macro_use]\nmod support;\n#[cfg(feature = \"x\")]\nmod a;\nmod b;\n";
        let stems = ["main", "alone", "a", "b", "forgotten"].map(String::from);
        let left = unnamed(stems.into_iter(), &roots, &[main.to_owned()]);
        assert_eq!(left, BTreeSet::from(["forgotten".to_owned()]));
    }
}
