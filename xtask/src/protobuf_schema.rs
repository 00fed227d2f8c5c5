//! `cargo xtask protobuf-schema [--src DIR] [--out FILE]`: reads the `generated.proto` files of
//! the Kubernetes 1.20.2 source tree (Debian's, unpacked by `../shared/tools/envtest-assets.sh`
//! under DIR, default `/var/tmp/kcache-envtest-build/kubernetes-1.20.2`) and writes every
//! message's fields — number, name, type, and whether the field is optional, repeated or a map
//! — as gzipped JSON, by default kcache-testserver's
//! `testdata/kube-apiserver-1.20.2/protobuf-messages.json.gz`: what it reads protobuf request
//! bodies (kubectl's typed clients send them) with. The proto files are proto2 with one message
//! per type and fields `optional|repeated TYPE name = N;` or `map<K, V> name = N;`; a type
//! without a dot is of the file's own package.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

const DEFAULT_SRC: &str = "/var/tmp/kcache-envtest-build/kubernetes-1.20.2";

/// The groups of proto files the server's resources come from.
const ROOTS: [&str; 4] = [
    "staging/src/k8s.io/api",
    "staging/src/k8s.io/apimachinery/pkg",
    "staging/src/k8s.io/apiextensions-apiserver/pkg/apis",
    "staging/src/k8s.io/kube-aggregator/pkg/apis",
];

/// Runs `protobuf-schema`.
pub fn run(args: &[String]) -> Result<(), String> {
    let mut src = PathBuf::from(DEFAULT_SRC);
    let mut out = crate::workspace_root()
        .join("crates/testserver/testdata/kube-apiserver-1.20.2/protobuf-messages.json.gz");
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let value = it.next().ok_or(format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--src" => src = PathBuf::from(value),
            "--out" => out = PathBuf::from(value),
            _ => return Err("usage: cargo xtask protobuf-schema [--src DIR] [--out FILE]".into()),
        }
    }
    let mut files = Vec::new();
    for root in ROOTS {
        collect(&src.join(root), &mut files)?;
    }
    if files.is_empty() {
        return Err(format!(
            "no generated.proto under {} (run ../shared/tools/envtest-assets.sh)",
            src.display()
        ));
    }
    files.sort();
    let mut messages = BTreeMap::new();
    for file in &files {
        let text = std::fs::read_to_string(file)
            .map_err(|e| format!("cannot read {}: {e}", file.display()))?;
        parse(&text, &mut messages).map_err(|e| format!("{}: {e}", file.display()))?;
    }
    let doc = json!({"messages": messages});
    crate::discovery_snapshot::write_gzip(
        &out,
        &serde_json::to_vec(&doc).map_err(|e| e.to_string())?,
    )?;
    eprintln!(
        "xtask: {} messages from {} proto files written to {}",
        messages.len(),
        files.len(),
        out.display()
    );
    Ok(())
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(());
    };
    for entry in entries {
        let path = entry.map_err(|e| e.to_string())?.path();
        if path.is_dir() {
            if !path.ends_with("testapigroup") {
                collect(&path, out)?;
            }
        } else if path.file_name().is_some_and(|n| n == "generated.proto") {
            out.push(path);
        }
    }
    Ok(())
}

/// A type named in `package`'s file, fully qualified.
fn qualified(ty: &str, package: &str) -> String {
    const SCALARS: [&str; 8] = [
        "string", "bytes", "bool", "int32", "int64", "double", "float", "uint64",
    ];
    if SCALARS.contains(&ty) || ty.contains('.') {
        ty.to_string()
    } else {
        format!("{package}.{ty}")
    }
}

/// Adds the messages of one file: `name → [[number, field, type, label]]` with label `o`
/// (optional), `r` (repeated) or `m` (map; type `K,V`).
fn parse(text: &str, messages: &mut BTreeMap<String, Value>) -> Result<(), String> {
    let mut package = String::new();
    let mut current: Option<(String, Vec<Value>)> = None;
    for line in text.lines().map(str::trim) {
        if line.starts_with("//") || line.is_empty() {
            continue;
        }
        if let Some(p) = line.strip_prefix("package ") {
            package = p.trim_end_matches(';').trim().to_string();
        } else if let Some(m) = line.strip_prefix("message ") {
            let name = m.trim_end_matches('{').trim();
            current = Some((format!("{package}.{name}"), Vec::new()));
        } else if line == "}" {
            if let Some((name, fields)) = current.take() {
                messages.insert(name, Value::Array(fields));
            }
        } else if let Some((_, fields)) = current.as_mut() {
            let (decl, number) = line
                .trim_end_matches(';')
                .rsplit_once('=')
                .ok_or(format!("no field number in {line:?}"))?;
            let number: u32 = number
                .split_whitespace()
                .next()
                .and_then(|n| n.parse().ok())
                .ok_or(format!("bad field number in {line:?}"))?;
            let decl = decl.trim();
            let field = if let Some(map) = decl.strip_prefix("map<") {
                let (types, name) = map.split_once('>').ok_or(format!("bad map in {line:?}"))?;
                let (k, v) = types
                    .split_once(',')
                    .ok_or(format!("bad map in {line:?}"))?;
                let ty = format!(
                    "{},{}",
                    qualified(k.trim(), &package),
                    qualified(v.trim(), &package)
                );
                json!([number, name.trim(), ty, "m"])
            } else {
                let parts: Vec<&str> = decl.split_whitespace().collect();
                let [label, ty, name] = parts[..] else {
                    return Err(format!("unexpected field {line:?}"));
                };
                let label = match label {
                    "optional" | "required" => "o",
                    "repeated" => "r",
                    other => return Err(format!("unexpected label {other:?} in {line:?}")),
                };
                json!([number, name, qualified(ty, &package), label])
            };
            fields.push(field);
        }
    }
    Ok(())
}
