//! The controllers a cluster runs on every object, inside the server: kube-controller-manager's
//! garbage collector ([`garbage_collector`]) and namespace controller ([`namespace_deletion`]),
//! and kube-apiserver's CRD finalizer ([`crd_cleanup`]).
//!
//! One task hears every committed write from the store, in revision order
//! ([`crate::storage::Storage::changes`]); each controller notes what concerns it, and once no
//! write is waiting, syncs what it noted. They write through the handlers a client's request
//! goes through (`delete_one`, `update_stored`), so watchers see the events a cluster shows,
//! and their own writes come back to them as changes: each sync is level-based, and the work
//! ends when a sync writes nothing.

mod crd_cleanup;
mod garbage_collector;
mod namespace_deletion;

use std::sync::Arc;

use serde_json::Value;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::handlers::delete::delete_one;
use crate::handlers::delete_options::DeleteOptions;
use crate::handlers::{update_stored, Target};
use crate::http::responses::ApiError;
use crate::resources::ResourceInfo;
use crate::state::ServerState;
use crate::storage::{Change, Stored};

/// The field manager of kube-controller-manager's writes (its user agent's product).
const CONTROLLER_MANAGER: &str = "kube-controller-manager";

/// Starts the controllers on `state`'s store; `None` if another reader took its changes.
pub(crate) fn start(state: &Arc<ServerState>) -> Option<JoinHandle<()>> {
    let rx = state.storage.changes()?;
    Some(tokio::spawn(run(state.clone(), rx)))
}

async fn run(state: Arc<ServerState>, mut rx: mpsc::UnboundedReceiver<Change>) {
    let manager = state.config.kube_controller_manager;
    let mut gc = garbage_collector::GarbageCollector::default();
    let mut namespaces = namespace_deletion::NamespaceController::new(&state);
    let mut crds = crd_cleanup::CrdFinalizer::new(&state);
    while let Some(first) = rx.recv().await {
        let mut next = Some(first);
        while let Some((id, event)) = next {
            let object = Object {
                id: &id,
                stored: &event.obj,
            };
            let deleted = event.kind == crate::storage::EventType::Deleted;
            if manager {
                gc.observe(&object, deleted);
                namespaces.observe(&object, deleted);
            }
            crds.observe(&object, deleted);
            next = rx.try_recv().ok();
        }
        if manager {
            gc.sync(&state);
            namespaces.sync(&state);
        }
        crds.sync(&state);
    }
}

/// A changed object as the controllers read it.
pub(crate) struct Object<'a> {
    /// The collection it is stored in.
    pub id: &'a Arc<str>,
    /// Its state (the last one, for a deletion).
    pub stored: &'a Arc<Stored>,
}

impl Object<'_> {
    /// Whether the JSON holds `needle` (a cheap test before parsing it).
    fn mentions(&self, needle: &str) -> bool {
        memchr::memmem::find(&self.stored.json, needle.as_bytes()).is_some()
    }

    /// Where it is stored.
    fn identity(&self) -> Identity {
        (self.id.clone(), self.stored.key.clone())
    }
}

/// An object's collection and key.
type Identity = (Arc<str>, Arc<str>);

/// The resource serving `obj` (stored objects carry their storage version's `apiVersion`, so
/// nothing is converted), or any still served from collection `id`.
fn resource_of(state: &ServerState, id: &Arc<str>, obj: &Value) -> Option<Arc<ResourceInfo>> {
    let api_version = obj["apiVersion"].as_str().unwrap_or_default();
    let kind = obj["kind"].as_str().unwrap_or_default();
    state
        .resources
        .by_kind(api_version, kind)
        .filter(|r| &r.storage_id == id)
        .or_else(|| {
            state
                .resources
                .all()
                .into_iter()
                .find(|r| &r.storage_id == id)
        })
}

/// The current object at `identity`, with its resource.
fn lookup(state: &ServerState, identity: &Identity) -> Option<(Arc<ResourceInfo>, Arc<Stored>)> {
    let res = state
        .resources
        .all()
        .into_iter()
        .find(|r| r.storage_id == identity.0)?;
    let stored = state.storage.get(&res, &identity.1)?;
    let res = resource_of(state, &identity.0, &stored.value()).unwrap_or(res);
    Some((res, stored))
}

fn target(
    res: &Arc<ResourceInfo>,
    namespace: Option<&str>,
    name: &str,
    sub: Option<&str>,
) -> Target {
    Target {
        res: res.clone(),
        namespace: namespace.filter(|_| res.api.namespaced).map(str::to_string),
        name: Some(name.to_string()),
        subresource: sub.map(str::to_string),
        dry_run: false,
    }
}

/// DELETE with a propagation policy, as a controller sends it; a 404 is no error.
fn delete(
    state: &ServerState,
    res: &Arc<ResourceInfo>,
    namespace: Option<&str>,
    name: &str,
    policy: &str,
) {
    let t = target(res, namespace, name, None);
    if let Err(e) = delete_one(state, &t, name, &DeleteOptions::propagation(policy)) {
        log_failure("delete", res, name, &e);
    }
}

/// An update (of `sub`, if given) that `edit` makes to the current object; `edit` returns
/// false when there is nothing to change. A 404 is no error.
fn update(
    state: &ServerState,
    res: &Arc<ResourceInfo>,
    namespace: Option<&str>,
    name: &str,
    sub: Option<&str>,
    manager: &str,
    mut edit: impl FnMut(&mut Value) -> bool,
) {
    let t = target(res, namespace, name, sub);
    let result = update_stored(state, &t, Some(manager), |cur| {
        let mut next = cur.clone();
        match edit(&mut next) {
            true => Ok((next, false)),
            false => Ok((cur.clone(), false)),
        }
    });
    if let Err(e) = result {
        log_failure("update", res, name, &e);
    }
}

fn log_failure(verb: &str, res: &ResourceInfo, name: &str, e: &ApiError) {
    if !e.status.is_not_found() {
        tracing::warn!(
            resource = %res.api.plural,
            name,
            error = %e.status.message,
            "in-process controller: {verb} failed"
        );
    }
}

/// `metadata.finalizers` without `finalizer`; false if it was not there.
fn remove_finalizer(obj: &mut Value, finalizer: &str) -> bool {
    let Some(list) = obj["metadata"]["finalizers"].as_array_mut() else {
        return false;
    };
    let before = list.len();
    list.retain(|f| f != finalizer);
    before != list.len()
}

fn has_finalizer(obj: &Value, finalizer: &str) -> bool {
    obj["metadata"]["finalizers"]
        .as_array()
        .is_some_and(|l| l.iter().any(|f| f == finalizer))
}
