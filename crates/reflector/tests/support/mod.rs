//! A scripted in-memory `ListerWatcher` that records every request, and a recording store.
// Each test binary uses a different part of this module.
#![allow(dead_code)]

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::StreamExt;
use kcache_core::{
    Bookmark, DynamicObject, Error, ListMeta, ListParams, ListerWatcher, Object, ObjectKey,
    ObjectList, ReflectorStore, Status, StatusCause, StatusDetails, StoreError, WatchEvent,
    WatchParams, WatchStream,
};
use kcache_reflector::{Reflector, ReflectorHandle, ReflectorOptions, WatchListMode};
use tokio::sync::mpsc;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

pub type Obj = DynamicObject;
pub type Item = Result<WatchEvent<Obj>, Error>;

pub fn pod(name: &str, rv: &str) -> Obj {
    DynamicObject::new(name)
        .within("ns")
        .with_resource_version(rv)
}

pub fn list(rv: &str, items: Vec<Obj>) -> Result<ObjectList<Obj>, Error> {
    Ok(ObjectList::new(items, rv))
}

pub fn page(rv: &str, continue_token: &str, items: Vec<Obj>) -> Result<ObjectList<Obj>, Error> {
    Ok(ObjectList {
        metadata: ListMeta {
            resource_version: Some(rv.to_string()),
            continue_: Some(continue_token.to_string()),
            remaining_item_count: None,
            shard_info: None,
        },
        items,
    })
}

pub fn pods(names: std::ops::Range<usize>) -> Vec<Obj> {
    names
        .map(|i| pod(&format!("pod-{i}"), &i.to_string()))
        .collect()
}

pub fn status(code: u16, reason: &str) -> Status {
    Status::failure(code, reason, format!("{reason} for the test"))
}

pub fn api(code: u16, reason: &str) -> Error {
    Error::from(status(code, reason))
}

pub fn expired() -> Error {
    api(410, "Expired")
}

pub fn too_many() -> Error {
    api(429, "TooManyRequests")
}

/// A "too large resource version" error in one of the three server formats.
pub fn too_large(format: usize) -> Error {
    let mut s = Status::failure(504, "Timeout", "too large resource version");
    let cause = match format {
        0 => StatusCause {
            type_: "ResourceVersionTooLarge".into(),
            ..StatusCause::default()
        },
        1 => StatusCause {
            message: "Too large resource version".into(),
            ..StatusCause::default()
        },
        _ => {
            s.message = "Too large resource version".into();
            return Error::from(s);
        }
    };
    s.details = Some(StatusDetails {
        causes: vec![cause],
        ..StatusDetails::default()
    });
    Error::from(s)
}

pub fn added(name: &str, rv: &str) -> Item {
    Ok(WatchEvent::Added(pod(name, rv)))
}
pub fn modified(name: &str, rv: &str) -> Item {
    Ok(WatchEvent::Modified(pod(name, rv)))
}
pub fn deleted(name: &str, rv: &str) -> Item {
    Ok(WatchEvent::Deleted(pod(name, rv)))
}
pub fn bookmark(rv: &str) -> Item {
    Ok(WatchEvent::Bookmark(Bookmark {
        resource_version: rv.to_string(),
        initial_events_end: false,
    }))
}
pub fn end_bookmark(rv: &str) -> Item {
    Ok(WatchEvent::Bookmark(Bookmark {
        resource_version: rv.to_string(),
        initial_events_end: true,
    }))
}
pub fn error_event(code: u16, reason: &str) -> Item {
    Ok(WatchEvent::Error(status(code, reason)))
}

/// How a scripted watch stream ends after its items.
#[derive(Debug, Clone, Copy)]
pub enum End {
    /// Ends cleanly right away.
    Now,
    /// Ends cleanly after this long (a server-side timeout).
    After(Duration),
    /// Never ends.
    Never,
}

/// One scripted answer to a watch request.
pub enum WatchScript {
    Fail(Error),
    Stream(Vec<Item>, End),
    Channel(mpsc::UnboundedReceiver<Item>),
}

/// A request the reflector sent, with the (paused-clock) time it was sent.
#[derive(Debug, Clone, PartialEq)]
pub enum Request {
    List(ListParams),
    Watch(WatchParams),
}

#[derive(Default)]
struct Script {
    lists: VecDeque<Result<ObjectList<Obj>, Error>>,
    watches: VecDeque<WatchScript>,
    requests: Vec<(Instant, Request)>,
}

/// Replays scripted list and watch results in order and records every request. When a script
/// runs out, it cancels `cancel` (ending the test's reflector) and answers with an error or a
/// stream that never ends.
pub struct ScriptedLw {
    script: Mutex<Script>,
    pub cancel: CancellationToken,
}

impl ScriptedLw {
    pub fn new() -> Arc<Self> {
        Arc::new(ScriptedLw {
            script: Mutex::new(Script::default()),
            cancel: CancellationToken::new(),
        })
    }

    pub fn push_list(&self, result: Result<ObjectList<Obj>, Error>) -> &Self {
        self.script.lock().unwrap().lists.push_back(result);
        self
    }

    pub fn push_watch(&self, script: WatchScript) -> &Self {
        self.script.lock().unwrap().watches.push_back(script);
        self
    }

    /// Pushes a watch fed through a channel the test holds.
    pub fn push_channel_watch(&self) -> mpsc::UnboundedSender<Item> {
        let (tx, rx) = mpsc::unbounded_channel();
        self.push_watch(WatchScript::Channel(rx));
        tx
    }

    pub fn requests(&self) -> Vec<Request> {
        self.timed_requests().into_iter().map(|(_, r)| r).collect()
    }

    pub fn timed_requests(&self) -> Vec<(Instant, Request)> {
        self.script.lock().unwrap().requests.clone()
    }

    pub fn list_requests(&self) -> Vec<ListParams> {
        self.requests()
            .into_iter()
            .filter_map(|r| match r {
                Request::List(p) => Some(p),
                Request::Watch(_) => None,
            })
            .collect()
    }

    pub fn watch_requests(&self) -> Vec<WatchParams> {
        self.requests()
            .into_iter()
            .filter_map(|r| match r {
                Request::Watch(p) => Some(p),
                Request::List(_) => None,
            })
            .collect()
    }

    /// The resourceVersion of every list request, "" when absent.
    pub fn list_rvs(&self) -> Vec<String> {
        self.list_requests()
            .into_iter()
            .map(|p| p.resource_version.unwrap_or_default())
            .collect()
    }

    fn record(&self, request: Request) {
        self.script
            .lock()
            .unwrap()
            .requests
            .push((Instant::now(), request));
    }
}

impl ListerWatcher<Obj> for ScriptedLw {
    async fn list(&self, params: &ListParams) -> Result<ObjectList<Obj>, Error> {
        self.record(Request::List(params.clone()));
        let next = self.script.lock().unwrap().lists.pop_front();
        next.unwrap_or_else(|| {
            self.cancel.cancel();
            Err(Error::Store(StoreError::other("list script exhausted")))
        })
    }

    async fn watch(&self, params: &WatchParams) -> Result<WatchStream<Obj>, Error> {
        self.record(Request::Watch(params.clone()));
        let next = self.script.lock().unwrap().watches.pop_front();
        match next {
            None => {
                self.cancel.cancel();
                Ok(Box::pin(futures_util::stream::pending()))
            }
            Some(WatchScript::Fail(e)) => Err(e),
            Some(WatchScript::Channel(rx)) => Ok(Box::pin(tokio_stream_from(rx))),
            Some(WatchScript::Stream(items, end)) => {
                let items = futures_util::stream::iter(items);
                Ok(match end {
                    End::Now => Box::pin(items),
                    End::After(d) => Box::pin(
                        items.chain(
                            futures_util::stream::once(tokio::time::sleep(d))
                                .filter_map(|_| async { None }),
                        ),
                    ),
                    End::Never => Box::pin(items.chain(futures_util::stream::pending())),
                })
            }
        }
    }
}

fn tokio_stream_from(rx: mpsc::UnboundedReceiver<Item>) -> impl futures_util::Stream<Item = Item> {
    futures_util::stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|i| (i, rx)) })
}

/// One call the reflector made on the store; objects as (key, resourceVersion).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op {
    Add(String, String),
    Update(String, String),
    Delete(String, String),
    Replace(Vec<(String, String)>, String),
    Resync,
    Bookmark(String),
}

fn key_rv(obj: &Obj) -> (String, String) {
    (
        ObjectKey::of(obj).as_str().to_string(),
        obj.resource_version().unwrap_or_default().to_string(),
    )
}

/// A store that records every call and keeps a key → resourceVersion map like a plain store.
#[derive(Default)]
pub struct RecordingStore {
    ops: Mutex<Vec<Op>>,
    items: Mutex<BTreeMap<String, String>>,
    fail_resync_call: Option<usize>,
    resyncs: Mutex<usize>,
}

impl RecordingStore {
    pub fn new() -> Arc<Self> {
        Arc::new(RecordingStore::default())
    }

    /// A store whose `n`-th (1-based) resync call fails.
    pub fn failing_resync(n: usize) -> Arc<Self> {
        Arc::new(RecordingStore {
            fail_resync_call: Some(n),
            ..RecordingStore::default()
        })
    }

    pub fn ops(&self) -> Vec<Op> {
        self.ops.lock().unwrap().clone()
    }

    /// (key, resourceVersion) of everything in the store, sorted by key.
    pub fn items(&self) -> Vec<(String, String)> {
        self.items
            .lock()
            .unwrap()
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    }

    pub fn replaces(&self) -> Vec<(Vec<(String, String)>, String)> {
        self.ops()
            .into_iter()
            .filter_map(|op| match op {
                Op::Replace(items, rv) => Some((items, rv)),
                _ => None,
            })
            .collect()
    }

    pub fn resync_calls(&self) -> usize {
        *self.resyncs.lock().unwrap()
    }

    /// Waits (in paused time) until the store has seen `n` calls.
    pub async fn wait_for_ops(&self, n: usize) {
        for _ in 0..100_000 {
            if self.ops.lock().unwrap().len() >= n {
                return;
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        panic!("store never saw {n} calls: {:?}", self.ops());
    }

    fn push(&self, op: Op) {
        self.ops.lock().unwrap().push(op);
    }
}

impl ReflectorStore<Obj> for RecordingStore {
    fn add(&self, obj: Arc<Obj>) -> Result<(), Error> {
        let (k, rv) = key_rv(&obj);
        self.items.lock().unwrap().insert(k.clone(), rv.clone());
        self.push(Op::Add(k, rv));
        Ok(())
    }
    fn update(&self, obj: Arc<Obj>) -> Result<(), Error> {
        let (k, rv) = key_rv(&obj);
        self.items.lock().unwrap().insert(k.clone(), rv.clone());
        self.push(Op::Update(k, rv));
        Ok(())
    }
    fn delete(&self, obj: Arc<Obj>) -> Result<(), Error> {
        let (k, rv) = key_rv(&obj);
        self.items.lock().unwrap().remove(&k);
        self.push(Op::Delete(k, rv));
        Ok(())
    }
    fn replace(&self, items: Vec<Arc<Obj>>, rv: &str) -> Result<(), Error> {
        let mut listed: Vec<(String, String)> = items.iter().map(|o| key_rv(o)).collect();
        listed.sort();
        *self.items.lock().unwrap() = listed.iter().cloned().collect();
        self.push(Op::Replace(listed, rv.to_string()));
        Ok(())
    }
    fn resync(&self) -> Result<(), Error> {
        let mut n = self.resyncs.lock().unwrap();
        *n += 1;
        self.push(Op::Resync);
        if Some(*n) == self.fail_resync_call {
            return Err(Error::Store(StoreError::other(
                "resync refused by the test",
            )));
        }
        Ok(())
    }
    fn bookmark(&self, rv: &str) {
        self.push(Op::Bookmark(rv.to_string()));
    }
}

/// Whether `d` is one jittered backoff step of `from_ms`: in `[from, 2·from)` as drawn, and at
/// most `2·from` as slept — tokio's timer rounds a sleep up to the next millisecond.
pub fn in_range(d: Duration, from_ms: u64) -> bool {
    d >= Duration::from_millis(from_ms) && d <= Duration::from_millis(2 * from_ms)
}

/// Options for scripted tests: list + watch unless `watch_list`.
pub fn options(watch_list: bool) -> ReflectorOptions {
    ReflectorOptions {
        name: "test".into(),
        watch_list: if watch_list {
            WatchListMode::Auto
        } else {
            WatchListMode::Disabled
        },
        ..ReflectorOptions::default()
    }
}

pub type TestReflector = Reflector<Obj, Arc<ScriptedLw>, Arc<RecordingStore>>;

/// Runs `reflector` until the script runs out (the scripted lister cancels), failing the test if
/// that takes more than an hour of (paused) time.
pub async fn run_to_end(reflector: TestReflector, lw: &ScriptedLw) {
    let cancel = lw.cancel.clone();
    tokio::time::timeout(Duration::from_secs(3600), reflector.run(cancel))
        .await
        .expect("the reflector did not use up its script within an hour");
}

/// Spawns `reflector` and returns its handle and task.
pub fn spawn(
    reflector: TestReflector,
    lw: &ScriptedLw,
) -> (ReflectorHandle, tokio::task::JoinHandle<()>) {
    let handle = reflector.handle();
    let task = tokio::spawn(reflector.run(lw.cancel.clone()));
    (handle, task)
}

pub fn watch_params(rv: &str) -> WatchParams {
    WatchParams {
        resource_version: Some(rv.to_string()),
        allow_watch_bookmarks: true,
        ..WatchParams::default()
    }
}

pub fn watch_list_params(rv: &str) -> WatchParams {
    WatchParams {
        resource_version: Some(rv.to_string()),
        resource_version_match: Some(kcache_core::ResourceVersionMatch::NotOlderThan),
        send_initial_events: Some(true),
        allow_watch_bookmarks: true,
        ..WatchParams::default()
    }
}

pub fn list_params(rv: &str, limit: Option<i64>) -> ListParams {
    ListParams {
        resource_version: Some(rv.to_string()),
        limit,
        ..ListParams::default()
    }
}

/// The requests with `timeout_seconds` cleared (it is random), like client-go's tests ignore it.
pub fn without_timeouts(requests: Vec<Request>) -> Vec<Request> {
    requests
        .into_iter()
        .map(|r| match r {
            Request::Watch(mut p) => {
                assert!(
                    p.timeout_seconds.is_some(),
                    "every watch sets timeoutSeconds"
                );
                p.timeout_seconds = None;
                Request::Watch(p)
            }
            list => list,
        })
        .collect()
}
