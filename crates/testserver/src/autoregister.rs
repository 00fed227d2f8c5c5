//! What kube-apiserver's autoregistration controller keeps in storage: one local APIService
//! per served group/version (none for `apiregistration.k8s.io` itself), labelled
//! `kube-aggregator.kubernetes.io/automanaged` (`onstart` for built-in groups, `true` for the
//! ones CRDs add), created at start and as CRDs come and go. APIServices are otherwise plain
//! stored objects: a client may register its own (`v1alpha1.wardle.k8s.io`), and creating
//! one that exists is a 409, as on the real server.

use std::collections::BTreeSet;
use std::sync::OnceLock;

use serde_json::{json, Value};

use crate::handlers::meta::{new_uid, now_rfc3339};
use crate::state::ServerState;
use crate::storage::{Expect, Filter, ListAt};

const GROUP: &str = "apiregistration.k8s.io";
const AUTOMANAGED: &str = "kube-aggregator.kubernetes.io/automanaged";

/// When the server started (the built-in APIServices' condition time).
fn started() -> &'static str {
    static STARTED: OnceLock<String> = OnceLock::new();
    STARTED.get_or_init(now_rfc3339)
}

/// The API server's priorities for its own groups (`apiVersionPriorities`); custom groups
/// get 1000/100.
fn priority(group: &str, version: &str) -> (i64, i64) {
    let group_min = match group {
        "" => 18000,
        "apps" => 17800,
        "events.k8s.io" => 17750,
        "authentication.k8s.io" => 17700,
        "autoscaling" => 17500,
        "batch" => 17400,
        "certificates.k8s.io" => 17300,
        "rbac.authorization.k8s.io" => 17000,
        "apiextensions.k8s.io" => 16700,
        "coordination.k8s.io" => 16500,
        _ => return (1000, 100),
    };
    let version_priority = match (group, version) {
        ("", _) => 1,
        ("batch", "v1beta1") => 9,
        _ => 15,
    };
    (group_min, version_priority)
}

/// The local APIService of `group/version` as `api_version` of apiregistration serves it.
fn local_api_service(api_version: &str, group: &str, version: &str, builtin: bool) -> Value {
    let (group_min, version_priority) = priority(group, version);
    let automanaged = if builtin { "onstart" } else { "true" };
    json!({"kind": "APIService", "apiVersion": api_version,
           "metadata": {"name": format!("{version}.{group}"), "uid": new_uid(), "creationTimestamp": now_rfc3339(),
                        "labels": {AUTOMANAGED: automanaged}},
           "spec": {"group": group, "version": version, "groupPriorityMinimum": group_min, "versionPriority": version_priority},
           "status": {"conditions": [{"type": "Available", "status": "True", "lastTransitionTime": started(),
                                      "reason": "Local", "message": "Local APIServices are always available"}]}})
}

/// Brings the stored automanaged APIServices (in every served version of apiregistration) in
/// line with the served group/versions: creates the missing ones, deletes those whose group
/// version is no longer served. Those a client created are left alone.
pub(crate) fn sync(state: &ServerState) {
    let all = state.resources.all();
    let served: BTreeSet<(String, String, bool)> = all
        .iter()
        .filter(|r| r.api.group != GROUP)
        .map(|r| (r.api.group.clone(), r.api.version.clone(), r.builtin))
        .collect();
    for res in all
        .iter()
        .filter(|r| r.api.group == GROUP && r.api.plural == "apiservices")
    {
        let stored = state
            .storage
            .list(res, ListAt::Current, &Filter::default(), None, None)
            .map(|p| p.items)
            .unwrap_or_default();
        let mut names = BTreeSet::new();
        for s in stored {
            let v = s.value();
            let automanaged = v["metadata"]["labels"][AUTOMANAGED].is_string();
            let group = v["spec"]["group"].as_str().unwrap_or_default();
            let version = v["spec"]["version"].as_str().unwrap_or_default();
            let wanted = served
                .iter()
                .any(|(g, ver, _)| g == group && ver == version);
            if automanaged && !wanted {
                let _ = state.storage.delete(res, &s.key, Expect::Rv(s.rv), None);
            } else {
                names.insert(s.name.clone());
            }
        }
        for (group, version, builtin) in &served {
            let name = format!("{version}.{group}");
            if !names.contains(&name) {
                let obj = local_api_service(&res.api.api_version(), group, version, *builtin);
                let _ = state.storage.put(res, &name, Expect::Absent, obj);
            }
        }
    }
}
