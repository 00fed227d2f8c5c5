//! kube-apiserver's CRD finalizer (apiextensions-apiserver's `CRDFinalizer`): a CRD being
//! deleted with the `customresourcecleanup.apiextensions.k8s.io` finalizer has its `Terminating`
//! condition set to `InstanceDeletionInProgress`, every custom resource it defines deleted,
//! and once none is left the condition set to `InstanceDeletionCompleted` and the finalizer
//! removed, which deletes the CRD.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use super::{delete, remove_finalizer, update, Object};
use crate::handlers::crd_termination::{set_condition, CLEANUP_FINALIZER};
use crate::resources::ResourceInfo;
use crate::state::ServerState;
use crate::storage::{Filter, ListAt};

/// The field manager of kube-apiserver's own writes.
const APISERVER: &str = "kube-apiserver";

/// CRDs being cleaned up (by the collection of their custom resources), and those to sync.
#[derive(Debug)]
pub(crate) struct CrdFinalizer {
    /// The collection CRDs are stored in.
    crds_id: Arc<str>,
    /// Collection of the custom resources → CRD name.
    terminating: BTreeMap<Arc<str>, String>,
    dirty: BTreeSet<String>,
}

impl CrdFinalizer {
    pub(crate) fn new(state: &ServerState) -> Self {
        CrdFinalizer {
            crds_id: state.resources.crds().storage_id.clone(),
            terminating: BTreeMap::new(),
            dirty: BTreeSet::new(),
        }
    }

    /// Notes a CRD being deleted, and a change of one of its custom resources.
    pub(crate) fn observe(&mut self, obj: &Object<'_>, deleted: bool) {
        if *obj.id == self.crds_id {
            let name = obj.stored.name.clone();
            let value = obj.stored.value();
            let group = value["spec"]["group"].as_str().unwrap_or_default();
            let plural = value["spec"]["names"]["plural"]
                .as_str()
                .unwrap_or_default();
            let id: Arc<str> = format!("{group}/{plural}").into();
            if deleted {
                self.terminating.remove(&id);
                self.dirty.remove(&name);
            } else if obj.mentions(CLEANUP_FINALIZER) && obj.mentions("\"deletionTimestamp\"") {
                self.terminating.insert(id, name.clone());
                self.dirty.insert(name);
            }
            return;
        }
        if let Some(name) = self.terminating.get(obj.id) {
            self.dirty.insert(name.clone());
        }
    }

    /// Syncs every CRD noted (`CRDFinalizer.sync`).
    pub(crate) fn sync(&mut self, state: &ServerState) {
        for name in std::mem::take(&mut self.dirty) {
            sync_crd(state, &name);
        }
    }
}

fn sync_crd(state: &ServerState, name: &str) {
    let res = state.resources.crds();
    let Some(stored) = state.storage.get(&res, name) else {
        return;
    };
    let crd = stored.value();
    if !crd["metadata"]["deletionTimestamp"].is_string()
        || !super::has_finalizer(&crd, CLEANUP_FINALIZER)
    {
        return;
    }
    update(state, &res, None, name, Some("status"), APISERVER, |obj| {
        set_condition(
            obj,
            "True",
            "InstanceDeletionInProgress",
            "CustomResource deletion is in progress",
        );
        true
    });
    // Any served version reads the instances (they are stored once).
    let Some(instances) = state
        .resources
        .all()
        .into_iter()
        .find(|r| !r.builtin && format!("{}.{}", r.api.plural, r.api.group) == name)
    else {
        finish(
            state,
            &res,
            name,
            "NeverEstablished",
            "resource was never established",
        );
        return;
    };
    let all = Filter::default();
    let Ok(page) = state
        .storage
        .list(&instances, ListAt::Current, &all, None, None)
    else {
        return;
    };
    for obj in &page.items {
        delete(
            state,
            &instances,
            obj.namespace.as_deref(),
            &obj.name,
            "Background",
        );
    }
    let left = state
        .storage
        .list(&instances, ListAt::Current, &all, None, None)
        .map_or(0, |p| p.items.len());
    if left > 0 {
        // Held by their finalizers: their deletions wake this controller again.
        return;
    }
    finish(
        state,
        &res,
        name,
        "InstanceDeletionCompleted",
        "removed all instances",
    );
}

/// The last status update: the outcome in the condition, the finalizer gone (the CRD with it).
fn finish(state: &ServerState, res: &Arc<ResourceInfo>, name: &str, reason: &str, message: &str) {
    update(state, res, None, name, Some("status"), APISERVER, |obj| {
        set_condition(obj, "False", reason, message);
        remove_finalizer(obj, CLEANUP_FINALIZER);
        true
    });
}
