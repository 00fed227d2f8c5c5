//! Handlers registered `DeliveryMode::Inline`: called on the informer's processing task, after
//! the cache took the change, with the same notifications, order, sync accounting, panic
//! handling and removal rules as pooled handlers.

use crate::support;

use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use kcache_informer::{
    DeliveryMode, FifoMode, HandlerOptions, InformerError, ResourceEventHandler,
    ResourceEventHandlerFuncs, ResourceEventHandlerRegistration, SharedIndexInformer,
};
use support::*;

const INLINE: HandlerOptions = HandlerOptions {
    resync_period: None,
    delivery: DeliveryMode::Inline,
};

/// A recorder that also notes, per call, whether it ran on a tokio runtime's thread (the
/// informer's task) and whether the cache already held what it was told about.
struct Where {
    seen: Recorder,
    on_runtime: Flags,
    cached: Flags,
    informer: SharedIndexInformer<Pod>,
}

/// What a [`Where`] handler recorded.
type Flags = Arc<Mutex<Vec<bool>>>;

impl Where {
    /// A `Where` over `informer`, with what it sends and its two lists of flags.
    fn over(
        informer: &SharedIndexInformer<Pod>,
    ) -> (Where, std::sync::mpsc::Receiver<Seen>, Flags, Flags) {
        let (seen, rx) = recorder();
        let (on_runtime, cached) = (Flags::default(), Flags::default());
        let handler = Where {
            seen,
            on_runtime: Arc::clone(&on_runtime),
            cached: Arc::clone(&cached),
            informer: informer.clone(),
        };
        (handler, rx, on_runtime, cached)
    }

    fn note(&self, key: &str, present: bool) {
        let runtime = tokio::runtime::Handle::try_current().is_ok();
        self.on_runtime.lock().unwrap().push(runtime);
        let held = self.informer.indexer().get_by_key(key).is_some();
        self.cached.lock().unwrap().push(held == present);
    }
}

impl ResourceEventHandler<Pod> for Where {
    fn on_add(&self, obj: &Arc<Pod>, initial: bool) {
        self.note(&format!("default/{}", obj.metadata.name), true);
        self.seen.on_add(obj, initial)
    }
    fn on_update(&self, old: &Arc<Pod>, new: &Arc<Pod>) {
        self.note(&format!("default/{}", new.metadata.name), true);
        self.seen.on_update(old, new)
    }
    fn on_delete(&self, obj: &kcache_informer::DeletedObject<Pod>) {
        self.note(obj.key().as_ref(), false);
        self.seen.on_delete(obj)
    }
}

in_every_fifo_mode! {
#[tokio::test]
async fn an_inline_handler_sees_what_a_pooled_one_sees_on_the_informers_task(mode: FifoMode) {
    let src = source();
    src.add(pod("a"));
    src.add(pod("b"));
    let inf = informer(&src, Duration::ZERO, mode);
    let (inline, inline_rx, on_runtime, cached) = Where::over(&inf);
    let inline_reg = inf.add_event_handler_with_options(inline, INLINE).unwrap();
    let (pooled, pooled_rx) = recorder();
    let pooled_reg = inf.add_event_handler(pooled).unwrap();
    let (stop, _) = start(&inf);
    assert!(inline_reg.wait_for_sync().await);
    assert!(pooled_reg.wait_for_sync().await);

    src.modify(pod("a"));
    src.add(pod("c"));
    src.delete(pod("b"));
    let (inline_seen, _) = take(inline_rx, 5).await;
    let (pooled_seen, _) = take(pooled_rx, 5).await;
    assert_eq!(names(&inline_seen[..2]), ["a", "b"]);
    assert!(inline_seen[..2].iter().all(|s| matches!(s, Seen::Add(_, true))));
    assert_eq!(inline_seen[2..], pooled_seen[2..], "the same changes, in order");
    assert!(matches!(&inline_seen[2], Seen::Update(n, _, _) if n == "a"));
    assert_eq!(inline_seen[3], Seen::Add("c".into(), false));
    assert_eq!(inline_seen[4], Seen::Delete("b".into()));
    assert_eq!(*on_runtime.lock().unwrap(), [true; 5], "every call ran on the informer's task");
    assert_eq!(*cached.lock().unwrap(), [true; 5], "the cache had each change before its call");
    assert_eq!((inline_reg.delivered(), inline_reg.pending()), (5, 0));
    stop.cancel();
}
}

#[tokio::test]
async fn a_list_goes_to_the_pool_and_single_events_come_inline_again() {
    let src = source();
    for i in 0..100 {
        src.add(pod(&format!("p{i:03}")));
    }
    let inf = informer(&src, Duration::ZERO, FifoMode::Real);
    let (handler, rx, on_runtime, cached) = Where::over(&inf);
    let reg = inf.add_event_handler_with_options(handler, INLINE).unwrap();
    let (stop, _) = start(&inf);
    assert!(reg.wait_for_sync().await);
    let (listed, mut rx) = take(rx, 100).await;
    assert_eq!(listed.len(), 100);
    assert_eq!(
        *on_runtime.lock().unwrap(),
        [false; 100],
        "the list's 100 adds went to a pool thread"
    );

    // Once the pool job has caught up (it does not linger for an inline handler), single
    // events are delivered on the informer's task again.
    for attempt in 0..100 {
        src.modify(pod("p000"));
        let (seen, back) = take(rx, 1).await;
        rx = back;
        assert!(matches!(&seen[0], Seen::Update(n, _, _) if n == "p000"));
        if on_runtime.lock().unwrap()[100 + attempt] {
            break;
        }
        assert!(attempt < 99, "no update came inline");
    }
    assert!(cached.lock().unwrap().iter().all(|c| *c));
    stop.cancel();
}

#[tokio::test]
async fn a_late_inline_handler_gets_its_initial_adds_before_later_changes() {
    let src = source();
    for name in ["a", "b", "c"] {
        src.add(pod(name));
    }
    let inf = informer(&src, Duration::ZERO, FifoMode::Real);
    let (stop, _) = start(&inf);
    assert!(inf.wait_for_cache_sync().await);

    let (rec, rx) = recorder();
    let reg = inf.add_event_handler_with_options(rec, INLINE).unwrap();
    src.add(pod("d"));
    let (seen, _) = take(rx, 4).await;
    assert_eq!(names(&seen[..3]), ["a", "b", "c"]);
    assert!(seen[..3].iter().all(|s| matches!(s, Seen::Add(_, true))));
    assert_eq!(seen[3], Seen::Add("d".into(), false));
    assert!(reg.wait_for_sync().await);
    stop.cancel();
}

#[tokio::test]
async fn an_inline_handler_that_panics_is_counted_and_keeps_receiving() {
    let src = source();
    let inf = informer(&src, Duration::ZERO, FifoMode::Real);
    let (rec, rx) = recorder();
    let handler = ResourceEventHandlerFuncs::new().on_add(move |obj: &Arc<Pod>, initial| {
        assert_ne!(obj.metadata.name, "bad", "a handler's bug");
        rec.on_add(obj, initial)
    });
    let reg = inf.add_event_handler_with_options(handler, INLINE).unwrap();
    let (stop, _) = start(&inf);
    assert!(reg.wait_for_sync().await);
    src.add(pod("bad"));
    src.add(pod("good"));
    let (seen, _) = take(rx, 1).await;
    assert_eq!(seen, [Seen::Add("good".into(), false)]);
    assert_eq!(reg.panics(), 1);
    assert_eq!(inf.indexer().list().len(), 2, "the informer went on");
    stop.cancel();
}

#[tokio::test]
async fn an_inline_handler_may_remove_itself_but_not_wait_for_that() {
    let src = source();
    let inf = informer(&src, Duration::ZERO, FifoMode::Real);
    let slot: Arc<OnceLock<ResourceEventHandlerRegistration<Pod>>> = Arc::default();
    let (tx, rx) = std::sync::mpsc::channel();
    let (rec, seen_rx) = recorder();
    let handler = ResourceEventHandlerFuncs::new().on_add({
        let (inf, slot) = (inf.clone(), slot.clone());
        move |obj: &Arc<Pod>, initial| {
            rec.on_add(obj, initial);
            let reg = slot.get().expect("registered before the first event");
            let _ = tx.send(inf.shut_down_event_handler_blocking(reg));
            let _ = tx.send(inf.remove_event_handler(reg));
        }
    });
    let reg = inf.add_event_handler_with_options(handler, INLINE).unwrap();
    slot.set(reg.clone()).unwrap();
    let (stop, _) = start(&inf);
    assert!(reg.wait_for_sync().await);
    src.add(pod("first"));
    let (seen, seen_rx) = take(seen_rx, 1).await;
    assert_eq!(seen, [Seen::Add("first".into(), false)]);
    let waited = rx.recv().unwrap();
    assert!(
        matches!(&waited, Err(InformerError::ShutDownFromOwnHandler { informer, .. }) if informer == "pods"),
        "{waited:?}"
    );
    rx.recv()
        .unwrap()
        .expect("removed from inside its own call, with no deadlock");
    assert!(!inf.is_registered(&reg));

    // Later changes reach the cache, not the removed handler.
    src.add(pod("second"));
    while inf.indexer().get_by_key("default/second").is_none() {
        tokio::task::yield_now().await;
    }
    inf.shut_down_event_handler(&reg).await.unwrap();
    assert!(seen_rx.try_recv().is_err(), "nothing after the removal");
    stop.cancel();
}
