//! Removing a handler and waiting until it has stopped (client-go's `ShutDownEventHandler`):
//! the wait ends once the call in flight has returned, no call follows, and a handler cannot
//! wait for itself.

use crate::support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use kcache_informer::{
    InformerError, InformerOptions, ResourceEventHandlerFuncs, ResourceEventHandlerRegistration,
    SharedIndexInformer,
};
use kcache_store::Indexers;
use support::*;
use tokio::sync::oneshot;

fn informer(n: usize) -> SharedIndexInformer<Pod> {
    let src = source();
    for i in 0..n {
        src.add(pod(&format!("pod{i}")));
    }
    SharedIndexInformer::new(src, Indexers::new(), InformerOptions::named("pods"))
}

/// A handler whose first call waits for `release` after saying it entered; counts calls and
/// calls under way.
struct Held {
    calls: Arc<AtomicUsize>,
    active: Arc<AtomicUsize>,
    entered: oneshot::Receiver<()>,
    release: oneshot::Sender<()>,
    handler: ResourceEventHandlerFuncs<Pod>,
}

fn held() -> Held {
    let calls = Arc::new(AtomicUsize::new(0));
    let active = Arc::new(AtomicUsize::new(0));
    let (entered_tx, entered) = oneshot::channel::<()>();
    let (release, release_rx) = oneshot::channel::<()>();
    let first = Mutex::new(Some((entered_tx, release_rx)));
    let handler = ResourceEventHandlerFuncs::new().on_add({
        let (calls, active) = (calls.clone(), active.clone());
        move |_: &Arc<Pod>, _| {
            active.fetch_add(1, Ordering::SeqCst);
            if let Some((entered, release)) = first.lock().unwrap().take() {
                let _ = entered.send(());
                let _ = release.blocking_recv();
            }
            calls.fetch_add(1, Ordering::SeqCst);
            active.fetch_sub(1, Ordering::SeqCst);
        }
    });
    Held {
        calls,
        active,
        entered,
        release,
        handler,
    }
}

#[tokio::test]
async fn shut_down_waits_for_the_call_in_flight() {
    let inf = informer(20);
    let h = held();
    let reg = inf.add_event_handler(h.handler).unwrap();
    let (stop, _) = start(&inf);
    h.entered.await.expect("the first call began");

    let shut = tokio::spawn({
        let (inf, reg) = (inf.clone(), reg.clone());
        async move { inf.shut_down_event_handler(&reg).await }
    });
    // The handler is removed at once; the wait goes on while its call runs.
    while inf.is_registered(&reg) {
        tokio::task::yield_now().await;
    }
    assert!(!shut.is_finished(), "returned while the handler's call ran");
    assert_eq!(h.active.load(Ordering::SeqCst), 1);

    h.release.send(()).unwrap();
    shut.await.unwrap().expect("shut down");
    assert_eq!(h.active.load(Ordering::SeqCst), 0, "the last call returned");
    assert_eq!(
        h.calls.load(Ordering::SeqCst),
        1,
        "nothing was delivered after the removal"
    );
    assert_eq!(reg.pending(), 0);
    // Idempotent, and immediate once stopped.
    inf.shut_down_event_handler(&reg).await.unwrap();
    stop.cancel();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn blocking_shut_down_from_a_plain_thread() {
    let inf = informer(20);
    let h = held();
    let reg = inf.add_event_handler(h.handler).unwrap();
    let (stop, _) = start(&inf);
    h.entered.await.expect("the first call began");

    let waiter = std::thread::spawn({
        let (inf, reg) = (inf.clone(), reg.clone());
        move || inf.shut_down_event_handler_blocking(&reg)
    });
    while inf.is_registered(&reg) {
        tokio::task::yield_now().await;
    }
    assert!(
        !waiter.is_finished(),
        "returned while the handler's call ran"
    );
    h.release.send(()).unwrap();
    let waited = tokio::task::spawn_blocking(move || waiter.join().unwrap())
        .await
        .unwrap();
    waited.expect("shut down");
    assert_eq!(h.active.load(Ordering::SeqCst), 0);
    assert_eq!(h.calls.load(Ordering::SeqCst), 1);
    stop.cancel();
}

#[tokio::test]
async fn a_handler_cannot_wait_for_its_own_shut_down() {
    let inf = informer(3);
    let slot: Arc<OnceLock<ResourceEventHandlerRegistration<Pod>>> = Arc::default();
    let (tx, rx) = std::sync::mpsc::channel();
    let reg = inf
        .add_event_handler(ResourceEventHandlerFuncs::new().on_add({
            let (inf, slot) = (inf.clone(), slot.clone());
            move |_: &Arc<Pod>, _| {
                if let Some(reg) = slot.get() {
                    let _ = tx.send(inf.shut_down_event_handler_blocking(reg));
                }
            }
        }))
        .unwrap();
    slot.set(reg.clone()).unwrap();
    let (stop, _) = start(&inf);
    assert!(reg.wait_for_sync().await);
    let first = rx.recv().expect("the handler tried");
    assert!(
        matches!(&first, Err(InformerError::ShutDownFromOwnHandler { informer, .. }) if informer == "pods"),
        "{first:?}"
    );
    assert!(inf.is_registered(&reg), "nothing was removed");
    // From outside, the same call works.
    inf.shut_down_event_handler(&reg).await.unwrap();
    assert!(!inf.is_registered(&reg));
    stop.cancel();
}

#[tokio::test]
async fn shut_down_of_another_informers_handler_is_an_error() {
    let (a, b) = (informer(0), informer(0));
    let reg = a
        .add_event_handler(ResourceEventHandlerFuncs::<Pod>::new())
        .unwrap();
    let err = b.shut_down_event_handler(&reg).await.unwrap_err();
    assert!(
        matches!(err, InformerError::ForeignRegistration { .. }),
        "{err}"
    );
    assert!(a.is_registered(&reg));
}
