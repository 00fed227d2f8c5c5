//! The object store: one global revision counter (like etcd), per-resource objects sorted by
//! key, a bounded event history per resource, and the live watchers.
//!
//! Every write takes the one write lock briefly (it serializes one object); readers take the
//! read lock only to copy `Arc`s out, and serialize responses after releasing it.

mod continue_token;
mod event;
mod filter;
mod history;
mod object;
mod watchers;

use std::collections::{BTreeMap, HashMap};
use std::ops::Bound;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use parking_lot::RwLock;
use serde_json::Value;
use tokio::sync::{mpsc, watch};

pub(crate) use continue_token::Continue;
pub(crate) use event::{frame, Emit, Event, EventType};
pub(crate) use filter::Filter;
pub(crate) use history::TooOld;
pub(crate) use object::{object_key, Stored};
pub(crate) use watchers::Delivery;

use crate::resources::ResourceInfo;
use history::History;
use watchers::Watchers;

/// What a write requires of the current object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Expect {
    /// Must not exist (create).
    Absent,
    /// Must exist at exactly this revision (optimistic concurrency).
    Rv(u64),
}

/// Why a write was refused.
#[derive(Debug)]
pub(crate) enum CommitError {
    /// [`Expect::Absent`] but the key exists.
    AlreadyExists,
    /// The key does not exist.
    NotFound,
    /// [`Expect::Rv`] did not match.
    Conflict,
}

/// Which state a list reads.
#[derive(Debug, Clone, Copy)]
pub(crate) enum ListAt {
    /// The newest state.
    Current,
    /// The state at exactly this revision (needs the history window).
    Exact(u64),
}

/// Why a list could not be served.
#[derive(Debug)]
pub(crate) enum ListError {
    /// The revision is older than the history window.
    TooOld,
    /// The revision is newer than the server's.
    TooLarge {
        /// The revision asked for.
        requested: u64,
        /// The server's revision.
        current: u64,
    },
}

/// One page of a list.
#[derive(Debug)]
pub(crate) struct Page {
    /// The matching objects, in key order.
    pub items: Vec<Arc<Stored>>,
    /// The revision the page was read at.
    pub rv: u64,
    /// The last key, when more objects follow.
    pub next_after: Option<String>,
    /// How many objects follow (only without selectors, like the real server).
    pub remaining: Option<i64>,
}

/// Where a new watch starts.
#[derive(Debug, Clone, Copy)]
pub(crate) enum WatchStart {
    /// Synthetic ADDED events for the current state, then new events.
    State,
    /// Only events after this revision.
    After(u64),
}

/// A registered watcher: what to send first, and the buffer of what follows.
pub(crate) struct Registration {
    /// Events to send before the live ones.
    pub initial: Vec<Delivery>,
    /// The revision at registration.
    pub rev: u64,
    /// Live events.
    pub rx: mpsc::Receiver<Delivery>,
    /// Set if the watcher was dropped for being too slow.
    pub dropped_slow: Arc<AtomicBool>,
    /// Unregisters on drop.
    pub _guard: WatchGuard,
}

/// Removes a watcher from the store when its stream goes away.
pub(crate) struct WatchGuard {
    storage: Arc<Storage>,
    id: Arc<str>,
    watcher: u64,
}

impl Drop for WatchGuard {
    fn drop(&mut self) {
        if let Some(c) = self.storage.inner.write().collections.get_mut(&self.id) {
            c.watchers.remove(self.watcher);
        }
    }
}

#[derive(Debug, Default)]
struct Collection {
    /// The storage id it is kept under.
    id: Arc<str>,
    objects: BTreeMap<Arc<str>, Arc<Stored>>,
    history: History,
    watchers: Watchers,
    fields: Vec<String>,
}

#[derive(Debug, Default)]
struct Inner {
    rev: u64,
    next_watcher: u64,
    collections: HashMap<Arc<str>, Collection>,
}

/// One committed write as the in-process controllers hear of it: the collection and the event.
pub(crate) type Change = (Arc<str>, Arc<Event>);

/// The store shared by every connection of a server (and kept across restarts).
#[derive(Debug)]
pub(crate) struct Storage {
    inner: RwLock<Inner>,
    rev_tx: watch::Sender<u64>,
    history_window: usize,
    watcher_buffer: usize,
    /// Every committed write, in revision order (sent under the write lock), for the
    /// controllers; unbounded so a writer never waits on them.
    feed: OnceLock<mpsc::UnboundedSender<Change>>,
}

impl Storage {
    pub(crate) fn new(history_window: usize, watcher_buffer: usize) -> Arc<Self> {
        Arc::new(Storage {
            inner: RwLock::new(Inner::default()),
            rev_tx: watch::channel(0).0,
            history_window,
            watcher_buffer: watcher_buffer.max(1),
            feed: OnceLock::new(),
        })
    }

    /// Every write from now on, in revision order; `None` when already taken (one reader).
    pub(crate) fn changes(&self) -> Option<mpsc::UnboundedReceiver<Change>> {
        let (tx, rx) = mpsc::unbounded_channel();
        self.feed.set(tx).ok().map(|()| rx)
    }

    /// The newest revision.
    pub(crate) fn current_rev(&self) -> u64 {
        self.inner.read().rev
    }

    /// Waits up to `timeout` for the revision to reach `rv`; false if it did not.
    pub(crate) async fn wait_for_rev(&self, rv: u64, timeout: Duration) -> bool {
        let mut rx = self.rev_tx.subscribe();
        tokio::time::timeout(timeout, rx.wait_for(|r| *r >= rv))
            .await
            .is_ok_and(|r| r.is_ok())
    }

    /// The current object at `key`.
    pub(crate) fn get(&self, res: &ResourceInfo, key: &str) -> Option<Arc<Stored>> {
        self.inner
            .read()
            .collections
            .get(&res.storage_id)?
            .objects
            .get(key)
            .cloned()
    }

    /// Writes `value` at `key` if `expect` holds; assigns the next revision.
    pub(crate) fn put(
        &self,
        res: &ResourceInfo,
        key: &str,
        expect: Expect,
        mut value: Value,
    ) -> Result<Arc<Stored>, CommitError> {
        let mut guard = self.inner.write();
        let inner = &mut *guard;
        let c = collection(&mut inner.collections, res);
        let prev = c.objects.get(key).cloned();
        check(prev.as_deref(), expect)?;
        inner.rev += 1;
        let rv = inner.rev;
        value["metadata"]["resourceVersion"] = Value::String(rv.to_string());
        let obj = Arc::new(Stored::new(&value, rv, &c.fields));
        c.objects.insert(obj.key.clone(), obj.clone());
        let kind = if prev.is_some() {
            EventType::Modified
        } else {
            EventType::Added
        };
        record(
            c,
            Arc::new(Event::new(rv, kind, obj.clone(), prev)),
            self.history_window,
            self.feed.get(),
        );
        drop(guard);
        self.rev_tx.send_replace(rv);
        Ok(obj)
    }

    /// Deletes `key` if `expect` holds; returns the last state (`last`, or the stored one),
    /// stamped with the deletion's revision (what DELETED events carry).
    pub(crate) fn delete(
        &self,
        res: &ResourceInfo,
        key: &str,
        expect: Expect,
        last: Option<Value>,
    ) -> Result<Arc<Stored>, CommitError> {
        let mut inner = self.inner.write();
        let prev = inner
            .collections
            .get(&res.storage_id)
            .and_then(|c| c.objects.get(key).cloned());
        check(prev.as_deref(), expect)?;
        let gone = delete_locked(
            &mut inner,
            &res.storage_id,
            key,
            last,
            self.history_window,
            self.feed.get(),
        )
        .ok_or(CommitError::NotFound)?;
        let rv = inner.rev;
        drop(inner);
        self.rev_tx.send_replace(rv);
        Ok(gone)
    }

    /// Deletes every object of a resource and closes its watchers (its CRD was deleted).
    pub(crate) fn drop_collection(&self, id: &Arc<str>) {
        let mut inner = self.inner.write();
        let keys: Vec<Arc<str>> = match inner.collections.get(id) {
            Some(c) => c.objects.keys().cloned().collect(),
            None => return,
        };
        for key in keys {
            delete_locked(
                &mut inner,
                id,
                &key,
                None,
                self.history_window,
                self.feed.get(),
            );
        }
        if let Some(mut c) = inner.collections.remove(id) {
            c.watchers.clear();
        }
        let rv = inner.rev;
        drop(inner);
        self.rev_tx.send_replace(rv);
    }

    /// Reads one page. The lock is held only to collect `Arc`s.
    pub(crate) fn list(
        &self,
        res: &ResourceInfo,
        at: ListAt,
        filter: &Filter,
        after: Option<&str>,
        limit: Option<usize>,
    ) -> Result<Page, ListError> {
        let inner = self.inner.read();
        let empty = Collection::default();
        let c = inner.collections.get(&res.storage_id).unwrap_or(&empty);
        let (rv, overlay) = match at {
            ListAt::Current => (inner.rev, BTreeMap::new()),
            ListAt::Exact(rv) if rv > inner.rev => {
                return Err(ListError::TooLarge {
                    requested: rv,
                    current: inner.rev,
                })
            }
            ListAt::Exact(rv) => (rv, c.history.undo_to(rv).map_err(|_| ListError::TooOld)?),
        };
        let prefix = filter.namespace.as_ref().map(|ns| format!("{ns}/"));
        let mut it = state_at(&c.objects, &overlay, after, prefix.as_deref());
        let mut items = Vec::new();
        for obj in it.by_ref() {
            if filter.matches(obj) {
                items.push(obj.clone());
                if limit.is_some_and(|l| items.len() >= l) {
                    break;
                }
            }
        }
        let rest = if limit.is_some() { it.count() } else { 0 };
        let next_after = (rest > 0)
            .then(|| items.last().map(|o| o.key.to_string()))
            .flatten();
        let remaining = (next_after.is_some() && !filter.has_selectors()).then_some(rest as i64);
        Ok(Page {
            items,
            rv,
            next_after,
            remaining,
        })
    }

    /// Registers a watcher; fails if `start` is older than the history window.
    pub(crate) fn watch(
        self: &Arc<Self>,
        res: &ResourceInfo,
        filter: Arc<Filter>,
        start: WatchStart,
    ) -> Result<Registration, TooOld> {
        let mut guard = self.inner.write();
        let inner = &mut *guard;
        let rev = inner.rev;
        inner.next_watcher += 1;
        let watcher = inner.next_watcher;
        let c = collection(&mut inner.collections, res);
        let initial: Vec<Delivery> = match start {
            WatchStart::State => c
                .objects
                .values()
                .filter(|o| filter.matches(o))
                .map(|o| {
                    (
                        Arc::new(Event::new(o.rv, EventType::Added, o.clone(), None)),
                        Emit::Added,
                    )
                })
                .collect(),
            WatchStart::After(rv) => c
                .history
                .since(rv)?
                .into_iter()
                .filter_map(|e| e.emit_for(&filter).map(|emit| (e, emit)))
                .collect(),
        };
        let (tx, rx) = mpsc::channel(self.watcher_buffer);
        let dropped_slow = Arc::new(AtomicBool::new(false));
        c.watchers.insert(watcher, filter, tx, dropped_slow.clone());
        drop(guard);
        Ok(Registration {
            initial,
            rev,
            rx,
            dropped_slow,
            _guard: WatchGuard {
                storage: self.clone(),
                id: res.storage_id.clone(),
                watcher,
            },
        })
    }

    /// Moves everything already queued for a watcher into `out` and returns the revision it has
    /// then seen in full (writes enqueue under the write lock, so nothing older is missing).
    pub(crate) fn progress(
        &self,
        rx: &mut mpsc::Receiver<Delivery>,
        mut out: impl FnMut(Delivery),
    ) -> u64 {
        let inner = self.inner.read();
        while let Ok(d) = rx.try_recv() {
            out(d);
        }
        inner.rev
    }

    /// Forgets all history: every older revision now answers 410.
    pub(crate) fn compact(&self) {
        let mut inner = self.inner.write();
        let rev = inner.rev;
        for c in inner.collections.values_mut() {
            c.history.compact(rev);
        }
    }

    /// Advances the revision by one (as a write elsewhere in etcd would) and compacts through
    /// it, so even a client that has seen every event is now behind the window; returns the
    /// new revision.
    pub(crate) fn compact_past_now(&self) -> u64 {
        let mut inner = self.inner.write();
        inner.rev += 1;
        let rev = inner.rev;
        for c in inner.collections.values_mut() {
            c.history.compact(rev);
        }
        drop(inner);
        self.rev_tx.send_replace(rev);
        rev
    }

    /// How many watchers are registered (all resources).
    pub(crate) fn watcher_count(&self) -> usize {
        self.inner
            .read()
            .collections
            .values()
            .map(|c| c.watchers.len())
            .sum()
    }

    /// How many objects are stored (all resources).
    pub(crate) fn object_count(&self) -> usize {
        self.inner
            .read()
            .collections
            .values()
            .map(|c| c.objects.len())
            .sum()
    }
}

fn collection<'a>(
    map: &'a mut HashMap<Arc<str>, Collection>,
    res: &ResourceInfo,
) -> &'a mut Collection {
    map.entry(res.storage_id.clone())
        .or_insert_with(|| Collection {
            id: res.storage_id.clone(),
            fields: crate::resources::stored_fields::stored_fields(res),
            ..Collection::default()
        })
}

fn check(prev: Option<&Stored>, expect: Expect) -> Result<(), CommitError> {
    match (prev, expect) {
        (Some(_), Expect::Absent) => Err(CommitError::AlreadyExists),
        (None, Expect::Absent) => Ok(()),
        (None, _) => Err(CommitError::NotFound),
        (Some(p), Expect::Rv(rv)) if p.rv != rv => Err(CommitError::Conflict),
        (Some(_), _) => Ok(()),
    }
}

fn record(
    c: &mut Collection,
    event: Arc<Event>,
    window: usize,
    feed: Option<&mpsc::UnboundedSender<Change>>,
) {
    if let Some(feed) = feed {
        // A closed feed (the controllers stopped with the server) is not the writer's concern.
        let _ = feed.send((c.id.clone(), event.clone()));
    }
    c.watchers.dispatch(&event);
    c.history.push(event, window);
}

fn delete_locked(
    inner: &mut Inner,
    id: &Arc<str>,
    key: &str,
    last: Option<Value>,
    window: usize,
    feed: Option<&mpsc::UnboundedSender<Change>>,
) -> Option<Arc<Stored>> {
    let c = inner.collections.get_mut(id)?;
    let prev = c.objects.remove(key)?;
    inner.rev += 1;
    let rv = inner.rev;
    let gone = Arc::new(match last {
        Some(mut v) => {
            v["metadata"]["resourceVersion"] = Value::String(rv.to_string());
            Stored::new(&v, rv, &c.fields)
        }
        None => prev.with_rv(rv, &c.fields),
    });
    record(
        c,
        Arc::new(Event::new(rv, EventType::Deleted, gone.clone(), Some(prev))),
        window,
        feed,
    );
    Some(gone)
}

/// The objects at some revision after `after` (and under `prefix`), in key order: the current
/// objects with the keys written since that revision replaced by their older state.
fn state_at<'a>(
    objects: &'a BTreeMap<Arc<str>, Arc<Stored>>,
    overlay: &'a BTreeMap<Arc<str>, Option<Arc<Stored>>>,
    after: Option<&'a str>,
    prefix: Option<&'a str>,
) -> impl Iterator<Item = &'a Arc<Stored>> + 'a {
    let lower = match (after, prefix) {
        (Some(a), _) => Bound::Excluded(a),
        (None, Some(p)) => Bound::Included(p),
        (None, None) => Bound::Unbounded,
    };
    let current = objects
        .range::<str, _>((lower, Bound::Unbounded))
        .filter(move |(k, _)| !overlay.contains_key(*k))
        .map(|(_, v)| v);
    let older = overlay
        .range::<str, _>((lower, Bound::Unbounded))
        .filter_map(|(_, v)| v.as_ref());
    MergeByKey {
        a: current.peekable(),
        b: older.peekable(),
    }
    .take_while(move |o| prefix.is_none_or(|p| o.key.starts_with(p)))
}

/// Merges two key-ordered iterators of objects.
struct MergeByKey<A: Iterator, B: Iterator> {
    a: std::iter::Peekable<A>,
    b: std::iter::Peekable<B>,
}

impl<'a, A, B> Iterator for MergeByKey<A, B>
where
    A: Iterator<Item = &'a Arc<Stored>>,
    B: Iterator<Item = &'a Arc<Stored>>,
{
    type Item = &'a Arc<Stored>;

    fn next(&mut self) -> Option<Self::Item> {
        match (self.a.peek(), self.b.peek()) {
            (Some(x), Some(y)) if y.key < x.key => self.b.next(),
            (Some(_), _) => self.a.next(),
            (None, _) => self.b.next(),
        }
    }
}
