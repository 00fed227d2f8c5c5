//! kube-controller-manager's garbage collector (pkg/controller/garbagecollector), on the
//! server's store: objects whose owners are all gone are deleted; references to gone owners
//! are removed from objects that keep another; an owner deleted in the foreground
//! (`foregroundDeletion`) waits for the dependents that block it, an orphaned one
//! (`orphan`) has its references removed from its dependents first.
//!
//! Like the real one it keeps a graph of owner uid → dependents, fed by every write, and
//! reads the owners themselves when it decides (the real one confirms with a live GET).

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use serde_json::Value;

use super::{
    delete, has_finalizer, lookup, remove_finalizer, update, Identity, Object, CONTROLLER_MANAGER,
};
use crate::handlers::delete_options::{FOREGROUND, ORPHAN};
use crate::resources::ResourceInfo;
use crate::state::ServerState;
use crate::storage::object_key;

/// The dependency graph and the work it found.
#[derive(Debug, Default)]
pub(crate) struct GarbageCollector {
    /// Owner uid → the objects that reference it.
    dependents: HashMap<String, BTreeSet<Identity>>,
    /// Each referencing object's owner uids, to keep `dependents` in step.
    owners: HashMap<Identity, Vec<String>>,
    /// Owners being deleted with a GC finalizer (foreground or orphan), by uid.
    deleting: HashMap<String, Identity>,
    /// Objects whose owners to check (`attemptToDelete`).
    attempt: BTreeSet<Identity>,
    /// Owners being deleted whose dependents to process.
    process: BTreeSet<String>,
}

/// How an owner reference resolves (`attemptToDeleteItem`'s classification).
enum OwnerState {
    /// It exists and is not waiting on its dependents.
    Solid,
    /// It is gone (or another object with its name took its place).
    Dangling,
    /// It is being deleted in the foreground.
    Waiting,
    /// Its kind is not served: nothing can be decided (the real one retries).
    Unknown,
}

impl GarbageCollector {
    /// Updates the graph with one write and notes the work it brings.
    pub(crate) fn observe(&mut self, obj: &Object<'_>, deleted: bool) {
        let identity = obj.identity();
        let relevant = obj.mentions("\"ownerReferences\"")
            || obj.mentions("\"deletionTimestamp\"")
            || self.owners.contains_key(&identity)
            || (deleted && !self.dependents.is_empty());
        if !relevant {
            return;
        }
        let value = obj.stored.value();
        let uid = value["metadata"]["uid"].as_str().unwrap_or_default();
        let refs: Vec<String> = match deleted {
            true => Vec::new(),
            false => owner_references(&value)
                .filter_map(|r| r["uid"].as_str().map(str::to_string))
                .collect(),
        };
        let before = self.owners.remove(&identity).unwrap_or_default();
        for gone in before.iter().filter(|u| !refs.contains(u)) {
            if let Some(set) = self.dependents.get_mut(gone) {
                set.remove(&identity);
                if set.is_empty() {
                    self.dependents.remove(gone);
                }
            }
            if self.deleting.contains_key(gone) {
                self.process.insert(gone.clone());
            }
        }
        for owner in &refs {
            self.dependents
                .entry(owner.clone())
                .or_default()
                .insert(identity.clone());
        }
        if !refs.is_empty() {
            self.owners.insert(identity.clone(), refs);
            self.attempt.insert(identity.clone());
        }
        if deleted {
            self.deleting.remove(uid);
            if let Some(set) = self.dependents.get(uid) {
                self.attempt.extend(set.iter().cloned());
            }
            return;
        }
        let gc_deleting = value["metadata"]["deletionTimestamp"].is_string()
            && (has_finalizer(&value, ORPHAN) || has_finalizer(&value, FOREGROUND));
        if gc_deleting {
            self.deleting.insert(uid.to_string(), identity);
            self.process.insert(uid.to_string());
        } else {
            self.deleting.remove(uid);
        }
    }

    /// Does the work noted since the last sync.
    pub(crate) fn sync(&mut self, state: &ServerState) {
        for uid in std::mem::take(&mut self.process) {
            self.process_deleting_owner(state, &uid);
        }
        for identity in std::mem::take(&mut self.attempt) {
            self.attempt_to_delete(state, &identity);
        }
    }

    /// An owner being deleted with `orphan` (its references leave its dependents, then the
    /// finalizer goes) or `foregroundDeletion` (its dependents are deleted; the finalizer goes
    /// once none that blocks it is left).
    fn process_deleting_owner(&mut self, state: &ServerState, uid: &str) {
        let Some(identity) = self.deleting.get(uid).cloned() else {
            return;
        };
        let Some((res, stored)) = lookup(state, &identity) else {
            return;
        };
        let owner = stored.value();
        if owner["metadata"]["uid"] != uid {
            return;
        }
        let dependents: Vec<Identity> = self
            .dependents
            .get(uid)
            .map(|s| s.iter().cloned().collect())
            .unwrap_or_default();
        let finalizer = if has_finalizer(&owner, ORPHAN) {
            for dependent in &dependents {
                if let Some((dres, dstored)) = lookup(state, dependent) {
                    update(
                        state,
                        &dres,
                        dstored.namespace.as_deref(),
                        &dstored.name,
                        None,
                        CONTROLLER_MANAGER,
                        |obj| remove_owner_reference(obj, uid),
                    );
                }
            }
            ORPHAN
        } else if has_finalizer(&owner, FOREGROUND) {
            for dependent in &dependents {
                self.attempt_to_delete(state, dependent);
            }
            let blocked = dependents.iter().any(|d| {
                lookup(state, d).is_some_and(|(_, s)| {
                    owner_references(&s.value())
                        .any(|r| r["uid"] == uid && r["blockOwnerDeletion"] == true)
                })
            });
            if blocked {
                return;
            }
            FOREGROUND
        } else {
            return;
        };
        update(
            state,
            &res,
            stored.namespace.as_deref(),
            &stored.name,
            None,
            CONTROLLER_MANAGER,
            |obj| remove_finalizer(obj, finalizer),
        );
    }

    /// `attemptToDeleteItem`: an object whose owners are all gone or waiting is deleted (in the
    /// foreground if it has dependents and an owner waits on it, else with the policy its own
    /// finalizers name); one with a live owner loses only its references to the others.
    fn attempt_to_delete(&mut self, state: &ServerState, identity: &Identity) {
        let Some((res, stored)) = lookup(state, identity) else {
            return;
        };
        let item = stored.value();
        if item["metadata"]["deletionTimestamp"].is_string() {
            // Already being deleted; its own foreground deletion is processed as an owner's.
            return;
        }
        let (mut solid, mut gone) = (false, Vec::new());
        let mut waiting = false;
        for r in owner_references(&item) {
            match owner_state(state, &res, stored.namespace.as_deref(), r) {
                OwnerState::Solid => solid = true,
                OwnerState::Dangling => gone.push(r["uid"].clone()),
                OwnerState::Waiting => {
                    waiting = true;
                    gone.push(r["uid"].clone());
                }
                OwnerState::Unknown => return,
            }
        }
        let namespace = stored.namespace.as_deref();
        if solid {
            if !gone.is_empty() {
                update(
                    state,
                    &res,
                    namespace,
                    &stored.name,
                    None,
                    CONTROLLER_MANAGER,
                    |obj| {
                        let mut changed = false;
                        for uid in &gone {
                            changed |= remove_owner_reference(obj, uid.as_str().unwrap_or(""));
                        }
                        changed
                    },
                );
            }
            return;
        }
        let uid = item["metadata"]["uid"].as_str().unwrap_or_default();
        let has_dependents = self.dependents.get(uid).is_some_and(|s| !s.is_empty());
        let policy = if waiting && has_dependents {
            "Foreground"
        } else if has_finalizer(&item, ORPHAN) {
            "Orphan"
        } else if has_finalizer(&item, FOREGROUND) {
            "Foreground"
        } else {
            "Background"
        };
        delete(state, &res, namespace, &stored.name, policy);
    }
}

/// The object's `metadata.ownerReferences`.
fn owner_references(obj: &Value) -> impl Iterator<Item = &Value> {
    obj["metadata"]["ownerReferences"]
        .as_array()
        .into_iter()
        .flatten()
}

/// Removes the references to `uid`; false if there were none.
fn remove_owner_reference(obj: &mut Value, uid: &str) -> bool {
    let Some(refs) = obj["metadata"]["ownerReferences"].as_array_mut() else {
        return false;
    };
    let before = refs.len();
    refs.retain(|r| r["uid"] != uid);
    let changed = refs.len() != before;
    if refs.is_empty() {
        if let Some(meta) = obj["metadata"].as_object_mut() {
            meta.remove("ownerReferences");
        }
    }
    changed
}

/// Finds the owner a reference names: its kind's resource, in the dependent's namespace when
/// namespaced, with the same uid.
fn owner_state(
    state: &ServerState,
    dependent: &Arc<ResourceInfo>,
    namespace: Option<&str>,
    r: &Value,
) -> OwnerState {
    let api_version = r["apiVersion"].as_str().unwrap_or_default();
    let kind = r["kind"].as_str().unwrap_or_default();
    let Some(res) = state.resources.by_kind(api_version, kind) else {
        return OwnerState::Unknown;
    };
    let namespace = match (res.api.namespaced, dependent.api.namespaced) {
        (true, true) => namespace,
        // A namespaced owner of a cluster-scoped object cannot be found (1.20 treats it as
        // absent).
        (true, false) => return OwnerState::Dangling,
        (false, _) => None,
    };
    let name = r["name"].as_str().unwrap_or_default();
    let Some(owner) = state.storage.get(&res, &object_key(namespace, name)) else {
        return OwnerState::Dangling;
    };
    let owner = owner.value();
    if owner["metadata"]["uid"] != r["uid"] {
        return OwnerState::Dangling;
    }
    if owner["metadata"]["deletionTimestamp"].is_string() && has_finalizer(&owner, FOREGROUND) {
        OwnerState::Waiting
    } else {
        OwnerState::Solid
    }
}
