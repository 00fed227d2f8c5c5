//! An in-memory `ListerWatcher` for testing controllers without a server (client-go's
//! `tools/cache/testing.FakeControllerSource`).

use std::collections::BTreeMap;
use std::sync::Arc;

use kcache_core::{
    Bookmark, Error, ListParams, ListerWatcher, Object, ObjectKey, ObjectList, WatchEvent,
    WatchParams, WatchStream,
};
use parking_lot::Mutex;
use tokio::sync::mpsc;

type SetResourceVersion<K> = Box<dyn Fn(&mut K, String) + Send + Sync>;

/// An object endpoint in memory: every change gets the next resourceVersion, is kept in a
/// history, and is sent to open watches (unless dropped on purpose). A watch from
/// resourceVersion N first replays the history after N, so changes are never lost across
/// watch restarts; [`reset_watch`](Self::reset_watch) ends open watches cleanly. Watch-list
/// requests (`sendInitialEvents=true`) get the current objects as `ADDED` events and the
/// initial-events-end bookmark, as a 1.27+ server sends them.
pub struct FakeControllerSource<K> {
    inner: Mutex<Inner<K>>,
    set_rv: SetResourceVersion<K>,
}

struct Inner<K> {
    rv: u64,
    items: BTreeMap<ObjectKey, Arc<K>>,
    history: Vec<(u64, WatchEvent<Arc<K>>)>,
    watchers: Vec<mpsc::UnboundedSender<Result<WatchEvent<K>, Error>>>,
    list_error: Option<Box<dyn Fn() -> Error + Send + Sync>>,
}

impl<K: Object + Clone> FakeControllerSource<K> {
    /// An empty source; `set_rv` writes a resourceVersion into an object.
    pub fn new(set_rv: impl Fn(&mut K, String) + Send + Sync + 'static) -> Arc<Self> {
        Arc::new(FakeControllerSource {
            inner: Mutex::new(Inner {
                rv: 0,
                items: BTreeMap::new(),
                history: Vec::new(),
                watchers: Vec::new(),
                list_error: None,
            }),
            set_rv: Box::new(set_rv),
        })
    }

    /// Creates or replaces an object and sends `ADDED`.
    pub fn add(&self, obj: K) {
        self.change(obj, Kind::Added, true)
    }

    /// Changes an object and sends `MODIFIED`.
    pub fn modify(&self, obj: K) {
        self.change(obj, Kind::Modified, true)
    }

    /// Deletes an object and sends `DELETED`.
    pub fn delete(&self, obj: K) {
        self.change(obj, Kind::Deleted, true)
    }

    /// Adds an object without telling open watches (seen only by a relist or a re-watch).
    pub fn add_drop_watch(&self, obj: K) {
        self.change(obj, Kind::Added, false)
    }

    /// Modifies an object without telling open watches.
    pub fn modify_drop_watch(&self, obj: K) {
        self.change(obj, Kind::Modified, false)
    }

    /// Deletes an object without telling open watches.
    pub fn delete_drop_watch(&self, obj: K) {
        self.change(obj, Kind::Deleted, false)
    }

    /// Sends a `BOOKMARK` at the current resourceVersion to open watches (as a server does
    /// periodically: nothing this watch reports changed up to there).
    pub fn bookmark(&self) {
        let mut inner = self.inner.lock();
        let bookmark = WatchEvent::Bookmark(Bookmark {
            resource_version: inner.rv.to_string(),
            initial_events_end: false,
        });
        inner
            .watchers
            .retain(|w| w.send(Ok(bookmark.clone())).is_ok());
    }

    /// Ends every open watch cleanly (as a server timeout would).
    pub fn reset_watch(&self) {
        self.inner.lock().watchers.clear();
    }

    /// Makes every later list fail with the error `f` builds (`None` to stop failing).
    pub fn set_list_error(&self, f: Option<Box<dyn Fn() -> Error + Send + Sync>>) {
        self.inner.lock().list_error = f;
    }

    /// The current objects.
    pub fn objects(&self) -> Vec<Arc<K>> {
        self.inner.lock().items.values().cloned().collect()
    }

    fn change(&self, mut obj: K, kind: Kind, broadcast: bool) {
        let mut inner = self.inner.lock();
        inner.rv += 1;
        let rv = inner.rv;
        (self.set_rv)(&mut obj, rv.to_string());
        let key = ObjectKey::of(&obj);
        let obj = Arc::new(obj);
        let event = match kind {
            Kind::Added => {
                inner.items.insert(key, obj.clone());
                WatchEvent::Added(obj)
            }
            Kind::Modified => {
                inner.items.insert(key, obj.clone());
                WatchEvent::Modified(obj)
            }
            Kind::Deleted => {
                inner.items.remove(&key);
                WatchEvent::Deleted(obj)
            }
        };
        if broadcast {
            let ev = event.clone().map(|o| (*o).clone());
            inner.watchers.retain(|w| w.send(Ok(ev.clone())).is_ok());
        }
        inner.history.push((rv, event));
    }
}

enum Kind {
    Added,
    Modified,
    Deleted,
}

impl<K: Object + Clone> ListerWatcher<K> for FakeControllerSource<K> {
    async fn list(&self, _params: &ListParams) -> Result<ObjectList<K>, Error> {
        let inner = self.inner.lock();
        if let Some(f) = &inner.list_error {
            return Err(f());
        }
        let items = inner.items.values().map(|o| (**o).clone()).collect();
        Ok(ObjectList::new(items, inner.rv.to_string()))
    }

    async fn watch(&self, params: &WatchParams) -> Result<WatchStream<K>, Error> {
        let from: u64 = params
            .resource_version
            .as_deref()
            .unwrap_or("")
            .parse()
            .unwrap_or(0);
        let (tx, rx) = mpsc::unbounded_channel();
        let mut inner = self.inner.lock();
        if params.send_initial_events == Some(true) {
            // Watch-list: the current state as ADDED events, then the end-of-initial-events
            // bookmark, then changes.
            for obj in inner.items.values() {
                let _ = tx.send(Ok(WatchEvent::Added((**obj).clone())));
            }
            let _ = tx.send(Ok(WatchEvent::Bookmark(Bookmark {
                resource_version: inner.rv.to_string(),
                initial_events_end: true,
            })));
        } else if from > 0 {
            for (rv, ev) in &inner.history {
                if *rv > from {
                    let _ = tx.send(Ok(ev.clone().map(|o| (*o).clone())));
                }
            }
        }
        inner.watchers.push(tx);
        Ok(Box::pin(
            tokio_stream::wrappers::UnboundedReceiverStream::new(rx),
        ))
    }
}
