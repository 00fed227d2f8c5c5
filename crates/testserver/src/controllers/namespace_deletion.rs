//! kube-controller-manager's namespace controller (pkg/controller/namespace/deletion): a
//! namespace being deleted has every object of every namespaced resource deleted (in the
//! preferred version of each group, as discovery lists them), its deletion conditions written,
//! and, once nothing is left, its `kubernetes` finalizer removed through `finalize`, which
//! deletes it.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use serde_json::{json, Value};

use super::{delete, update, Object, CONTROLLER_MANAGER};
use crate::handlers::meta::now_rfc3339;
use crate::handlers::namespace_lifecycle::KUBERNETES;
use crate::resources::version_priority::by_priority;
use crate::resources::ResourceInfo;
use crate::state::ServerState;
use crate::storage::{Filter, ListAt};

/// The conditions the controller keeps, with their reason and message when all is well
/// (`okReasons`, `okMessages`).
const CONDITIONS: [(&str, &str, &str); 5] = [
    (
        "NamespaceDeletionDiscoveryFailure",
        "ResourcesDiscovered",
        "All resources successfully discovered",
    ),
    (
        "NamespaceDeletionGroupVersionParsingFailure",
        "ParsedGroupVersions",
        "All legacy kube types successfully parsed",
    ),
    (
        "NamespaceDeletionContentFailure",
        "ContentDeleted",
        "All content successfully deleted, may be waiting on finalization",
    ),
    (
        "NamespaceContentRemaining",
        "ContentRemoved",
        "All content successfully removed",
    ),
    (
        "NamespaceFinalizersRemaining",
        "ContentHasNoFinalizers",
        "All content-preserving finalizers finished",
    ),
];

/// Namespaces being deleted, and those to sync.
#[derive(Debug)]
pub(crate) struct NamespaceController {
    /// The collection namespaces are stored in.
    namespaces_id: Arc<str>,
    terminating: BTreeSet<String>,
    dirty: BTreeSet<String>,
}

impl NamespaceController {
    pub(crate) fn new(state: &ServerState) -> Self {
        NamespaceController {
            namespaces_id: state.resources.namespaces().storage_id.clone(),
            terminating: BTreeSet::new(),
            dirty: BTreeSet::new(),
        }
    }

    /// Notes a namespace being deleted, and a change of content in one.
    pub(crate) fn observe(&mut self, obj: &Object<'_>, deleted: bool) {
        if *obj.id == self.namespaces_id {
            let name = obj.stored.name.clone();
            if deleted {
                self.terminating.remove(&name);
                self.dirty.remove(&name);
            } else if obj.mentions("\"deletionTimestamp\"") {
                self.terminating.insert(name.clone());
                self.dirty.insert(name);
            }
            return;
        }
        if let Some(ns) = obj.stored.namespace.as_ref() {
            if self.terminating.contains(ns) {
                self.dirty.insert(ns.clone());
            }
        }
    }

    /// Syncs every namespace noted (`namespacedResourcesDeleter.Delete`).
    pub(crate) fn sync(&mut self, state: &ServerState) {
        for ns in std::mem::take(&mut self.dirty) {
            sync_namespace(state, &ns);
        }
    }
}

fn sync_namespace(state: &ServerState, name: &str) {
    let res = state.resources.namespaces();
    let Some(stored) = state.storage.get(&res, name) else {
        return;
    };
    let ns = stored.value();
    let finalized = ns["spec"]["finalizers"]
        .as_array()
        .is_none_or(|f| f.is_empty());
    if !ns["metadata"]["deletionTimestamp"].is_string() || finalized {
        return;
    }
    let remaining = delete_all_content(state, name);
    let conditions = conditions(&remaining);
    update(
        state,
        &res,
        None,
        name,
        Some("status"),
        CONTROLLER_MANAGER,
        |obj| {
            obj["status"]["phase"] = json!("Terminating");
            set_conditions(obj, &conditions)
        },
    );
    if !remaining.by_resource.is_empty() {
        // The deletions and finalizer removals still to come wake the controller again.
        return;
    }
    update(
        state,
        &res,
        None,
        name,
        Some("finalize"),
        CONTROLLER_MANAGER,
        |obj| {
            let Some(list) = obj["spec"]["finalizers"].as_array_mut() else {
                return false;
            };
            let before = list.len();
            list.retain(|f| f != KUBERNETES);
            before != list.len()
        },
    );
}

/// What was left after one round of deletions.
#[derive(Debug, Default)]
struct Remaining {
    /// `resource.group` → objects left.
    by_resource: BTreeMap<String, usize>,
    /// finalizer → objects it holds.
    by_finalizer: BTreeMap<String, usize>,
}

/// Deletes every object in `ns`, per group and resource in its preferred version, and counts
/// what is still there (held by finalizers).
fn delete_all_content(state: &ServerState, ns: &str) -> Remaining {
    let mut remaining = Remaining::default();
    let filter = Filter {
        namespace: Some(ns.to_string()),
        ..Filter::default()
    };
    for res in preferred_namespaced(state) {
        let Ok(page) = state
            .storage
            .list(&res, ListAt::Current, &filter, None, None)
        else {
            continue;
        };
        for obj in &page.items {
            delete(state, &res, Some(ns), &obj.name, "Background");
        }
        let Ok(left) = state
            .storage
            .list(&res, ListAt::Current, &filter, None, None)
        else {
            continue;
        };
        if left.items.is_empty() {
            continue;
        }
        let key = format!("{}.{}", res.api.plural, res.api.group);
        remaining.by_resource.insert(key, left.items.len());
        for obj in &left.items {
            for f in obj.value()["metadata"]["finalizers"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
            {
                *remaining.by_finalizer.entry(f.to_string()).or_default() += 1;
            }
        }
    }
    remaining
}

/// The namespaced resources that can be deleted, each in its group's most preferred version
/// that serves it (`ServerPreferredNamespacedResources`).
fn preferred_namespaced(state: &ServerState) -> Vec<Arc<ResourceInfo>> {
    let mut best: BTreeMap<(String, String), Arc<ResourceInfo>> = BTreeMap::new();
    for res in state.resources.all() {
        if !res.api.namespaced || !res.verbs.iter().any(|v| v == "delete") {
            continue;
        }
        let key = (res.api.group.clone(), res.api.plural.clone());
        match best.get(&key) {
            Some(b) if by_priority(&b.api.version, &res.api.version).is_le() => {}
            _ => {
                best.insert(key, res);
            }
        }
    }
    best.into_values().collect()
}

/// The five conditions for what remains (`namespaceConditionUpdater`).
fn conditions(remaining: &Remaining) -> Vec<(&'static str, &'static str, &'static str, String)> {
    CONDITIONS
        .iter()
        .map(|&(type_, ok_reason, ok_message)| match type_ {
            "NamespaceContentRemaining" if !remaining.by_resource.is_empty() => {
                let list: Vec<String> = remaining
                    .by_resource
                    .iter()
                    .map(|(r, n)| format!("{r} has {n} resource instances"))
                    .collect();
                let message = format!("Some resources are remaining: {}", list.join(", "));
                (type_, "True", "SomeResourcesRemain", message)
            }
            "NamespaceFinalizersRemaining" if !remaining.by_finalizer.is_empty() => {
                let list: Vec<String> = remaining
                    .by_finalizer
                    .iter()
                    .map(|(f, n)| format!("{f} in {n} resource instances"))
                    .collect();
                let message = format!(
                    "Some content in the namespace has finalizers remaining: {}",
                    list.join(", ")
                );
                (type_, "True", "SomeFinalizersRemain", message)
            }
            _ => (type_, "False", ok_reason, ok_message.to_string()),
        })
        .collect()
}

/// `updateConditions`: each condition added, or changed in place (its transition time moved
/// only when its status changes); false when nothing changed.
fn set_conditions(
    ns: &mut Value,
    wanted: &[(&'static str, &'static str, &'static str, String)],
) -> bool {
    if !ns["status"]["conditions"].is_array() {
        ns["status"]["conditions"] = json!([]);
    }
    let list = ns["status"]["conditions"]
        .as_array_mut()
        .expect("made an array above");
    let mut changed = false;
    for (type_, status, reason, message) in wanted {
        let now = now_rfc3339();
        match list.iter_mut().find(|c| c["type"] == *type_) {
            None => {
                list.push(
                    json!({"type": type_, "status": status, "lastTransitionTime": now,
                                 "reason": reason, "message": message}),
                );
                changed = true;
            }
            Some(c)
                if c["status"] != *status || c["reason"] != *reason || c["message"] != *message =>
            {
                if c["status"] != *status {
                    c["lastTransitionTime"] = json!(now);
                }
                c["status"] = json!(status);
                c["reason"] = json!(reason);
                c["message"] = json!(message);
                changed = true;
            }
            Some(_) => {}
        }
    }
    changed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conditions_name_what_remains_as_the_namespace_controller_does() {
        let mut remaining = Remaining::default();
        remaining.by_resource.insert("configmaps.".into(), 2);
        remaining.by_finalizer.insert("example.com/hold".into(), 2);
        let c = conditions(&remaining);
        assert_eq!(c[0].1, "False");
        assert_eq!(c[0].2, "ResourcesDiscovered");
        assert_eq!(
            c[3],
            (
                "NamespaceContentRemaining",
                "True",
                "SomeResourcesRemain",
                "Some resources are remaining: configmaps. has 2 resource instances".to_string()
            )
        );
        assert_eq!(
            c[4].3,
            "Some content in the namespace has finalizers remaining: example.com/hold in 2 resource instances"
        );
        let all_clear = conditions(&Remaining::default());
        assert!(all_clear.iter().all(|c| c.1 == "False"));
        assert_eq!(all_clear[3].3, "All content successfully removed");
    }
}
