//! `cargo xtask discovery-snapshot [--out DIR]`: starts a real kube-apiserver from
//! `KUBEBUILDER_ASSETS` (as the envtest tier does) and writes what a client learns of it before
//! it reads any object, so kcache-testserver can be built and tested against the real thing:
//!
//! - `discovery.json`: `/api`, `/api/v1`, `/apis` and every `/apis/GROUP/VERSION`,
//!   keyed by path;
//! - `openapi-v2-index.json`: `/openapi/v2` reduced to what kubectl reads from it — every path
//!   with its operations, and every definition with its `x-kubernetes-group-version-kind`;
//! - `openapi-v2-definitions.json.gz`: `/openapi/v2`'s definitions (the built-in kinds'
//!   schemas), compact JSON with sorted keys, gzipped: what `kubectl explain` reads;
//! - `openapi-v2-paths.json.gz`: the rest of `/openapi/v2` (`swagger`, `info`, every path with
//!   its operations and parameters, the security members), the same way: kcache-testserver
//!   serves the two parts joined as its own `/openapi/v2`;
//! - `bootstrap.json`: the objects a fresh server creates at start (namespaces, the default RBAC
//!   roles and bindings, priority classes, flow-control schemas and levels, `default/kubernetes`),
//!   with what differs between two starts (uid, resourceVersion, timestamps, managedFields,
//!   cluster IPs) removed;
//! - `deprecations.json`: the deprecation warning (the `Warning` header) the server sends with
//!   every request to each resource of a deprecated version;
//! - `kubectl-api-resources.txt` and `kubectl-api-versions.txt`: kubectl's own view;
//! - `openapi-v2-crd.json`: how the server publishes a CRD in `/openapi/v2`, as templates
//!   (`crd_openapi_snapshot`; taken last, after two CRDs are created).
//!
//! The default DIR is kcache-testserver's `testdata/kube-apiserver-1.20.2`. Every file is
//! written in a stable order, so a second run on the same server version changes nothing.
//! (The API server's own Lease in kube-system is left out: its name is random per start.)

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::envtest::{assets, certs, control_plane, run_dir, write_kubeconfig};
use crate::snapshot_kubectl::Kubectl;

/// Kinds a fresh kube-apiserver 1.20.2 creates objects of at start (resource names as kubectl
/// takes them).
const BOOTSTRAP_RESOURCES: &str = "namespaces,services,endpoints,clusterroles,clusterrolebindings,\
roles,rolebindings,priorityclasses,flowschemas,prioritylevelconfigurations,configmaps";

/// Metadata and spec members that differ between two starts of the same server.
const VOLATILE: &[&[&str]] = &[
    &["metadata", "uid"],
    &["metadata", "resourceVersion"],
    &["metadata", "creationTimestamp"],
    &["metadata", "managedFields"],
    &["metadata", "selfLink"],
    &["spec", "clusterIP"],
    &["spec", "clusterIPs"],
    &["spec", "holderIdentity"],
    &["spec", "acquireTime"],
    &["spec", "renewTime"],
    &["status"],
    &["subsets"],
    &["data"],
];

/// Runs `discovery-snapshot`.
pub fn run(args: &[String]) -> Result<(), String> {
    let out = match args {
        [] => crate::workspace_root().join("crates/testserver/testdata/kube-apiserver-1.20.2"),
        [flag, dir] if flag == "--out" => PathBuf::from(dir),
        _ => return Err("usage: cargo xtask discovery-snapshot [--out DIR]".into()),
    };
    let assets = assets()?;
    let dir = run_dir()?;
    let creds = certs::generate(&dir)?;
    let plane = control_plane::start(&assets, &dir, &creds, false)?;
    let kubeconfig = dir.join("kubeconfig");
    write_kubeconfig(&kubeconfig, &plane.url, &creds)?;
    let kubectl = Kubectl::new(kubeconfig);
    std::fs::create_dir_all(&out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;

    let version = kubectl.json(&["get", "--raw", "/version"])?;
    let server = version["gitVersion"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    // Debian's build says `v0.0.0-master+<commit>`: refuse only a server naming another release.
    if server.starts_with("v1.") && !server.starts_with("v1.20.") {
        return Err(format!(
            "KUBEBUILDER_ASSETS holds kube-apiserver {server}; the snapshot is of 1.20.2"
        ));
    }
    let port = plane.url.rsplit(':').next().unwrap_or_default().to_string();
    let write = |name: &str, value: &Value| write_json(&out.join(name), value, &port);
    let discovery_docs = discovery(&kubectl)?;
    write("discovery.json", &discovery_docs)?;
    write(
        "deprecations.json",
        &deprecations(&kubectl, &discovery_docs)?,
    )?;
    let openapi = kubectl.json(&["get", "--raw", "/openapi/v2"])?;
    write("openapi-v2-index.json", &openapi_index(&openapi))?;
    let mut rest = openapi.clone();
    let definitions = rest
        .as_object_mut()
        .and_then(|doc| doc.remove("definitions"))
        .ok_or("/openapi/v2 has no definitions")?;
    write_gzip(
        &out.join("openapi-v2-definitions.json.gz"),
        &serde_json::to_vec(&definitions).map_err(|e| e.to_string())?,
    )?;
    write_gzip(
        &out.join("openapi-v2-paths.json.gz"),
        &serde_json::to_vec(&rest).map_err(|e| e.to_string())?,
    )?;
    let mut objects = kubectl.json(&["get", BOOTSTRAP_RESOURCES, "-A", "-o", "json"])?;
    write("bootstrap.json", &bootstrap(&mut objects))?;
    write_text(
        &out.join("kubectl-api-resources.txt"),
        &kubectl.text(&["api-resources", "-o", "wide"])?,
    )?;
    write_text(
        &out.join("kubectl-api-versions.txt"),
        &kubectl.text(&["api-versions"])?,
    )?;
    write(
        "openapi-v2-crd.json",
        &crate::crd_openapi_snapshot::templates(&kubectl, &dir)?,
    )?;
    drop(plane);
    let _ = std::fs::remove_dir_all(&dir);
    eprintln!(
        "xtask: kube-apiserver {server} discovery written to {}",
        out.display()
    );
    Ok(())
}

/// Every discovery document a client reads, keyed by its path.
fn discovery(kubectl: &Kubectl) -> Result<Value, String> {
    let mut docs = Map::new();
    for path in ["/api", "/api/v1", "/apis"] {
        docs.insert(path.into(), kubectl.json(&["get", "--raw", path])?);
    }
    let group_versions: Vec<String> = docs["/apis"]["groups"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|g| g["versions"].as_array().into_iter().flatten())
        .filter_map(|v| v["groupVersion"].as_str().map(|gv| format!("/apis/{gv}")))
        .collect();
    for path in group_versions {
        let doc = kubectl.json(&["get", "--raw", &path])?;
        docs.insert(path, doc);
    }
    Ok(Value::Object(docs))
}

/// The deprecation warning the server sends with every request to a resource, keyed by
/// `group/version/resource` (`version/resource` for the core group): a list of each listable
/// resource, its `Warning` headers as kubectl prints them.
fn deprecations(kubectl: &Kubectl, docs: &Value) -> Result<Value, String> {
    let mut out = Map::new();
    for (path, doc) in docs.as_object().into_iter().flatten() {
        let Some(gv) = path
            .strip_prefix("/apis/")
            .or_else(|| path.strip_prefix("/api/"))
        else {
            continue;
        };
        for r in doc["resources"].as_array().into_iter().flatten() {
            let name = r["name"].as_str().unwrap_or_default();
            let listable = r["verbs"]
                .as_array()
                .is_some_and(|v| v.iter().any(|v| v == "list"));
            if name.contains('/') || !listable {
                continue;
            }
            let warnings =
                kubectl.warnings(&["get", "--raw", &format!("{path}/{name}?limit=1")])?;
            if let Some(w) = warnings.first() {
                out.insert(format!("{gv}/{name}"), Value::String(w.clone()));
            }
        }
    }
    Ok(Value::Object(out))
}

/// `/openapi/v2` reduced to its paths (with their operations) and its definitions (with their
/// group-version-kinds).
fn openapi_index(openapi: &Value) -> Value {
    let paths: Map<String, Value> = openapi["paths"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(path, item)| {
            let ops: Vec<Value> = item
                .as_object()
                .into_iter()
                .flatten()
                .filter(|(op, _)| op.as_str() != "parameters")
                .map(|(op, body)| {
                    serde_json::json!({
                        "method": op,
                        "operationId": body["operationId"],
                        "action": body["x-kubernetes-action"],
                    })
                })
                .collect();
            (path.clone(), Value::Array(ops))
        })
        .collect();
    let definitions: Map<String, Value> = openapi["definitions"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(name, def)| {
            let gvk = def
                .get("x-kubernetes-group-version-kind")
                .cloned()
                .unwrap_or(Value::Null);
            (name.clone(), gvk)
        })
        .collect();
    serde_json::json!({ "paths": paths, "definitions": definitions })
}

/// The bootstrap objects without what differs between two starts, sorted by kind, namespace
/// and name.
fn bootstrap(list: &mut Value) -> Value {
    let mut items: Vec<Value> = list["items"]
        .as_array_mut()
        .map(std::mem::take)
        .unwrap_or_default();
    for item in &mut items {
        for path in VOLATILE {
            remove_at(item, path);
        }
    }
    let key = |o: &Value| {
        let m = &o["metadata"];
        format!(
            "{}/{}/{}",
            o["kind"].as_str().unwrap_or_default(),
            m["namespace"].as_str().unwrap_or_default(),
            m["name"].as_str().unwrap_or_default()
        )
    };
    items.sort_by_key(key);
    Value::Array(items)
}

fn remove_at(value: &mut Value, path: &[&str]) {
    match path {
        [] => {}
        [last] => {
            if let Some(map) = value.as_object_mut() {
                map.remove(*last);
            }
        }
        [first, rest @ ..] => {
            if let Some(inner) = value.get_mut(*first) {
                remove_at(inner, rest);
            }
        }
    }
}

/// Writes `value` pretty-printed, with the server's random port written as 6443 (the usual
/// secure port): it shows in `/api`'s `serverAddressByClientCIDRs` and in `default/kubernetes`'s
/// `targetPort`.
fn write_json(path: &Path, value: &Value, port: &str) -> Result<(), String> {
    let text = serde_json::to_string_pretty(value)
        .map_err(|e| format!("cannot encode {}: {e}", path.display()))?
        .replace(&format!("127.0.0.1:{port}\""), "127.0.0.1:6443\"")
        .replace(
            &format!("\"targetPort\": {port}\n"),
            "\"targetPort\": 6443\n",
        );
    write_text(path, &format!("{text}\n"))
}

/// Writes `bytes` gzipped (no file name or time in the header, so the same input gives the
/// same file).
pub(crate) fn write_gzip(path: &Path, bytes: &[u8]) -> Result<(), String> {
    use std::io::Write as _;
    let mut gz = flate2::GzBuilder::new().write(Vec::new(), flate2::Compression::best());
    gz.write_all(bytes)
        .and_then(|()| gz.finish())
        .and_then(|out| std::fs::write(path, out))
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}

fn write_text(path: &Path, text: &str) -> Result<(), String> {
    std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
}
