//! `docs/architecture.md`'s crate table says which of our crates each crate depends on; `cargo
//! xtask ci` checks it against `cargo metadata`, so the page cannot drift from the manifests.
//!
//! A row reads `` | `kcache-informer` | core, store (+ transport behind `transport`) | … ``:
//! the names before the parenthesis are the crate's normal dependencies on our crates (short
//! names, `kcache-` left off), those inside `(+ … behind …)` its optional ones, `—` none.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

/// What a row or a manifest says of one crate: required and optional dependencies on ours.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Deps {
    pub required: BTreeSet<String>,
    pub optional: BTreeSet<String>,
}

/// Compares the table with the workspace's manifests.
pub(crate) fn check(root: &Path) -> Result<(), String> {
    let page = root.join("docs/architecture.md");
    let text = std::fs::read_to_string(&page).map_err(|e| format!("{}: {e}", page.display()))?;
    let table = parse_table(&text)?;
    let actual = workspace_deps(root)?;
    let mut wrong = Vec::new();
    for (name, deps) in &actual {
        match table.get(name) {
            None => wrong.push(format!("`{name}` has no row")),
            Some(row) if row != deps => wrong.push(format!(
                "`{name}`: the table says {} but Cargo.toml says {}",
                describe(row),
                describe(deps)
            )),
            Some(_) => {}
        }
    }
    for name in table.keys().filter(|n| !actual.contains_key(*n)) {
        wrong.push(format!(
            "`{name}` has a row but is no published workspace crate"
        ));
    }
    if wrong.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "docs/architecture.md's dependency table is out of date:\n  {}",
            wrong.join("\n  ")
        ))
    }
}

fn describe(d: &Deps) -> String {
    let list = |s: &BTreeSet<String>| s.iter().cloned().collect::<Vec<_>>().join(", ");
    match (d.required.is_empty(), d.optional.is_empty()) {
        (true, true) => "—".into(),
        (false, true) => list(&d.required),
        (true, false) => format!("(+ {} optional)", list(&d.optional)),
        (false, false) => format!("{} (+ {} optional)", list(&d.required), list(&d.optional)),
    }
}

/// The table's rows: crate name → dependencies.
pub(crate) fn parse_table(text: &str) -> Result<BTreeMap<String, Deps>, String> {
    let mut rows = BTreeMap::new();
    for line in text.lines() {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        // | `kcache-x` | deps | mirrors |  →  ["", "`kcache-x`", "deps", "mirrors", ""]
        let Some(name) = cells
            .get(1)
            .and_then(|c| c.strip_prefix('`'))
            .and_then(|c| c.strip_suffix('`'))
            .filter(|n| *n == "kcache" || n.starts_with("kcache-"))
        else {
            continue;
        };
        let deps = cells
            .get(2)
            .ok_or_else(|| format!("row of `{name}` has no dependency cell"))?;
        rows.insert(name.to_string(), parse_cell(deps));
    }
    if rows.is_empty() {
        return Err("docs/architecture.md has no crate table".into());
    }
    Ok(rows)
}

/// `core, store (+ transport behind `transport`, on by default)` → required {core, store},
/// optional {transport}.
fn parse_cell(cell: &str) -> Deps {
    let (required, optional) = match cell.split_once("(+") {
        Some((req, opt)) => (
            req,
            opt.split_once("behind").map_or(opt, |(names, _)| names),
        ),
        None => (cell, ""),
    };
    let names = |s: &str| -> BTreeSet<String> {
        s.split([',', ' '])
            .map(|w| w.trim_matches(|c: char| !c.is_ascii_alphanumeric() && c != '-'))
            .filter(|w| !w.is_empty())
            .map(|w| format!("kcache-{w}"))
            .collect()
    };
    Deps {
        required: names(required),
        optional: names(optional),
    }
}

/// Each published workspace crate's normal dependencies on our crates, from `cargo metadata`.
pub(crate) fn workspace_deps(root: &Path) -> Result<BTreeMap<String, Deps>, String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(root)
        .output()
        .map_err(|e| format!("cannot run cargo metadata: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "cargo metadata failed: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let meta: serde_json::Value =
        serde_json::from_slice(&out.stdout).map_err(|e| format!("cargo metadata: {e}"))?;
    let mut crates = BTreeMap::new();
    for package in meta["packages"].as_array().into_iter().flatten() {
        let name = package["name"].as_str().unwrap_or_default();
        // `publish = false` reads as `[]`.
        let unpublished = package["publish"].as_array().is_some_and(|r| r.is_empty());
        if unpublished || !(name == "kcache" || name.starts_with("kcache-")) {
            continue;
        }
        let mut deps = Deps::default();
        for dep in package["dependencies"].as_array().into_iter().flatten() {
            let dep_name = dep["name"].as_str().unwrap_or_default();
            let normal = dep["kind"].is_null();
            if !normal || !dep_name.starts_with("kcache-") {
                continue;
            }
            let set = if dep["optional"].as_bool() == Some(true) {
                &mut deps.optional
            } else {
                &mut deps.required
            };
            set.insert(dep_name.to_string());
        }
        crates.insert(name.to_string(), deps);
    }
    Ok(crates)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(names: &[&str]) -> BTreeSet<String> {
        names.iter().map(|n| format!("kcache-{n}")).collect()
    }

    #[test]
    fn cells_name_required_and_optional_crates() {
        assert_eq!(parse_cell("—"), Deps::default());
        assert_eq!(
            parse_cell("core, flowcontrol"),
            Deps {
                required: set(&["core", "flowcontrol"]),
                optional: set(&[]),
            }
        );
        assert_eq!(
            parse_cell("core, store, delta-fifo (+ transport behind `transport`, on by default)"),
            Deps {
                required: set(&["core", "store", "delta-fifo"]),
                optional: set(&["transport"]),
            }
        );
        assert_eq!(
            parse_cell("core (+ store, events behind features)"),
            Deps {
                required: set(&["core"]),
                optional: set(&["store", "events"]),
            }
        );
    }

    #[test]
    fn rows_are_read_from_the_crate_table_only() {
        let text = "| crate | depends on (ours) | mirrors |\n|---|---|---|\n\
                    | `kcache-core` | — | `tools/cache` |\n\
                    | `kcache-store` | core | `index.go` |\n\
                    | trait | crate | implemented by | used by |\n\
                    | `ListerWatcher<K>` | core | `Api<K>` | reflector |\n";
        let rows = parse_table(text).unwrap();
        assert_eq!(
            rows.keys().collect::<Vec<_>>(),
            ["kcache-core", "kcache-store"]
        );
        assert_eq!(rows["kcache-store"].required, set(&["core"]));
    }
}
