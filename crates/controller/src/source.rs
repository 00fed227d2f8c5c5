//! What triggers reconciles: the primary kind's events, owned kinds (`owns`), other kinds
//! mapped to keys (`watches`), custom streams (`watches_stream`) and "everything" triggers
//! (`reconcile_all_on`).
//!
//! Each informer-backed source is its own informer with its own reflector, so a watch of one
//! kind that fails backs off alone while the others keep delivering (kube-runtime merges every
//! trigger into one stream with one backoff).

use std::sync::Arc;

use futures_util::{Stream, StreamExt};
use kcache_core::{Object, Resource};
use kcache_informer::ResourceEventHandlerFuncs;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::cache::{HandlerRegistration, ObjectCache};
use crate::enqueue::Enqueue;
use crate::error::ControllerError;
use crate::predicate::{all_accept, Event, Predicate};
use crate::reconcile_request::ReconcileRequest;

/// Per-source options: predicates and, for [`owns_with`](crate::Controller::owns_with), which
/// owner references count.
pub struct SourceOptions<T> {
    pub(crate) predicates: Vec<Predicate<T>>,
    pub(crate) every_owner: bool,
}

impl<T> Default for SourceOptions<T> {
    fn default() -> Self {
        SourceOptions {
            predicates: Vec::new(),
            every_owner: false,
        }
    }
}

impl<T> std::fmt::Debug for SourceOptions<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SourceOptions")
            .field("predicates", &self.predicates.len())
            .field("every_owner", &self.every_owner)
            .finish()
    }
}

impl<T> SourceOptions<T> {
    /// Options with no predicate, controller owners only.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a predicate; all of a source's predicates must pass (controller-runtime's
    /// `WithPredicates`).
    pub fn predicate(mut self, predicate: Predicate<T>) -> Self {
        self.predicates.push(predicate);
        self
    }

    /// For `owns`: any owner reference of the owner's kind maps to that owner, not only the one
    /// with `controller: true` (kube-runtime's rule; controller-runtime's `MatchEveryOwner`).
    pub fn every_owner(mut self) -> Self {
        self.every_owner = true;
        self
    }
}

/// What a started source leaves behind: a handler registration and/or a task.
#[derive(Default)]
pub(crate) struct Started {
    pub name: String,
    pub registration: Option<Box<dyn HandlerRegistration>>,
    pub task: Option<JoinHandle<()>>,
}

impl Started {
    pub fn stop(&self) {
        if let Some(r) = &self.registration {
            r.remove();
        }
        if let Some(t) = &self.task {
            t.abort();
        }
    }
}

/// What a source gets when the controller starts.
pub(crate) struct SourceContext<K> {
    pub enqueue: Enqueue,
    pub primary: Arc<dyn ObjectCache<K>>,
    pub cancel: CancellationToken,
}

/// A source, started once when the controller runs.
pub(crate) type Source<K> =
    Box<dyn FnOnce(&SourceContext<K>) -> Result<Started, ControllerError> + Send>;

/// Whether an update is a resync: the same resourceVersion on both sides.
fn is_resync<T: Object>(old: &T, new: &T) -> bool {
    old.resource_version().is_some() && old.resource_version() == new.resource_version()
}

/// A handler that maps each event of `T` to requests, after `predicates`.
pub(crate) fn mapping_handler<T, F>(
    enqueue: Enqueue,
    predicates: Vec<Predicate<T>>,
    map: F,
) -> ResourceEventHandlerFuncs<T>
where
    T: Object,
    F: Fn(&T) -> Vec<ReconcileRequest> + Send + Sync + 'static,
{
    let map = Arc::new(map);
    let predicates = Arc::new(predicates);
    let (e1, e2, e3) = (enqueue.clone(), enqueue.clone(), enqueue);
    let (m1, m2, m3) = (map.clone(), map.clone(), map);
    let (p1, p2, p3) = (predicates.clone(), predicates.clone(), predicates);
    ResourceEventHandlerFuncs::new()
        .on_add(move |obj: &Arc<T>, initial| {
            if all_accept(&p1, &Event::Create(&**obj)) {
                for r in m1(obj) {
                    e1.event(r, initial);
                }
            }
        })
        .on_update(move |old: &Arc<T>, new: &Arc<T>| {
            if !all_accept(&p2, &Event::Update { old, new }) {
                return;
            }
            let resync = is_resync(&**old, &**new);
            let mut requests = m2(new);
            for r in m2(old) {
                if !requests.contains(&r) {
                    requests.push(r);
                }
            }
            for r in requests {
                e2.event(r, resync);
            }
        })
        .on_delete(move |gone| {
            if let Some(obj) = gone.object() {
                if all_accept(&p3, &Event::Delete(&**obj)) {
                    for r in m3(obj) {
                        e3.event(r, false);
                    }
                }
            }
        })
}

/// The requests for the owners of kind `O` that `obj`'s owner references name.
pub(crate) fn owners_of<O: Resource, C: Object>(
    obj: &C,
    every_owner: bool,
) -> Vec<ReconcileRequest> {
    let namespace = if O::NAMESPACED {
        obj.namespace().unwrap_or("")
    } else {
        ""
    };
    let is_owner_kind = |r: &kcache_core::OwnerRef<'_>| r.kind == O::KIND && r.group() == O::GROUP;
    if every_owner {
        obj.owner_references()
            .iter()
            .filter(|r| is_owner_kind(r))
            .map(|r| ReconcileRequest::new(namespace, r.name))
            .collect()
    } else {
        obj.controller_owner()
            .filter(is_owner_kind)
            .map(|r| ReconcileRequest::new(namespace, r.name))
            .into_iter()
            .collect()
    }
}

/// An informer-backed source: `handler` registered on `cache`.
pub(crate) fn informer_source<K, T: Object>(
    cache: Arc<dyn ObjectCache<T>>,
    controller: String,
    handler: impl FnOnce(Enqueue) -> ResourceEventHandlerFuncs<T> + Send + 'static,
) -> Source<K> {
    Box::new(move |cx: &SourceContext<K>| {
        let registration = cache
            .add_handler(handler(cx.enqueue.clone()))
            .map_err(|source| ControllerError::Informer { controller, source })?;
        Ok(Started {
            name: cache.name().to_string(),
            registration: Some(registration),
            task: None,
        })
    })
}

/// The primary kind's events as keys only (no predicate, no "gone" tracking needs the objects):
/// through [`ObjectCache::add_key_handler`], so the compact cache decodes nothing per event.
pub(crate) fn key_source<K: 'static>(
    cache: Arc<dyn ObjectCache<K>>,
    controller: String,
) -> Source<K> {
    Box::new(move |cx: &SourceContext<K>| {
        let enqueue = cx.enqueue.clone();
        let registration = cache
            .add_key_handler(Arc::new(move |request, low| enqueue.event(request, low)))
            .map_err(|source| ControllerError::Informer { controller, source })?;
        Ok(Started {
            name: cache.name().to_string(),
            registration: Some(registration),
            task: None,
        })
    })
}

/// A stream source: each item becomes the requests `map` makes of it.
pub(crate) fn stream_source<K, S, F>(stream: S, map: F) -> Source<K>
where
    K: 'static,
    S: Stream + Send + 'static,
    F: Fn(S::Item, &SourceContext<K>) -> Vec<ReconcileRequest> + Send + Sync + 'static,
{
    Box::new(move |cx: &SourceContext<K>| {
        let mut stream = Box::pin(stream);
        let inner = SourceContext {
            enqueue: cx.enqueue.clone(),
            primary: cx.primary.clone(),
            cancel: cx.cancel.clone(),
        };
        let task = tokio::spawn(async move {
            loop {
                let item = tokio::select! {
                    () = inner.cancel.cancelled() => return,
                    item = stream.next() => item,
                };
                let Some(item) = item else { return };
                for r in map(item, &inner) {
                    inner.enqueue.event(r, false);
                }
            }
        });
        Ok(Started {
            name: "stream".into(),
            registration: None,
            task: Some(task),
        })
    })
}
