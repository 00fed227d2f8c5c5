//! client-go's shared_informer_test.go, as assertions on kcache-informer.

use crate::support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use kcache_informer::{
    FifoMode, InformerError, InformerOptions, OverflowPolicy, ResourceEventHandlerFuncs,
    SharedIndexInformer,
};
use kcache_store::Indexers;
use support::*;
use tokio_util::sync::CancellationToken;

in_every_fifo_mode! {
#[tokio::test(start_paused = true)]
async fn listener_resync_periods(mode: FifoMode) {
    let src = source();
    src.add(pod("pod1"));
    src.add(pod("pod2"));
    let inf = informer(&src, Duration::from_secs(1), mode);
    let (h1, rx1) = recorder();
    let (h2, rx2) = recorder();
    let (h3, rx3) = recorder();
    let r1 = inf
        .add_event_handler_with_resync_period(h1, Duration::ZERO)
        .unwrap();
    let r2 = inf
        .add_event_handler_with_resync_period(h2, Duration::from_secs(2))
        .unwrap();
    let r3 = inf
        .add_event_handler_with_resync_period(h3, Duration::from_secs(3))
        .unwrap();
    let (stop, task) = start(&inf);

    let (a1, rx1) = take(rx1, 2).await;
    let (a2, rx2) = take(rx2, 2).await;
    let (a3, rx3) = take(rx3, 2).await;
    for a in [&a1, &a2, &a3] {
        assert_eq!(names(a), ["pod1", "pod2"]);
        assert!(a.iter().all(|s| matches!(s, Seen::Add(_, true))));
    }
    assert!(r1.wait_for_sync().await && r2.wait_for_sync().await && r3.wait_for_sync().await);

    // t = 2s: only listener 2 resyncs.
    tokio::time::advance(Duration::from_secs(2)).await;
    let (s2, rx2) = take(rx2, 2).await;
    assert_eq!(names(&s2), ["pod1", "pod2"]);
    assert!(s2
        .iter()
        .all(|s| matches!(s, Seen::Update(_, o, n) if o == n)));
    // Listeners 1 and 3 have been idle since they synced: nothing queued, nothing delivered.
    assert_eq!((r1.pending(), r1.delivered()), (0, 2));
    assert_eq!((r3.pending(), r3.delivered()), (0, 2));

    // t = 3s: only listener 3 resyncs.
    tokio::time::advance(Duration::from_secs(1)).await;
    let (s3, _rx3) = take(rx3, 2).await;
    assert_eq!(names(&s3), ["pod1", "pod2"]);
    assert_eq!((r1.pending(), r1.delivered()), (0, 2));
    drop((rx1, rx2));
    stop.cancel();
    task.await.unwrap();
    // Every handler thread has finished: the counts are final.
    assert_eq!((r1.delivered(), r2.delivered(), r3.delivered()), (2, 4, 4));
}
}

#[test]
fn resync_check_period() {
    // Not run: the queue plays no part.
    let mode = FifoMode::Real;
    let src = source();
    let inf = informer(&src, Duration::from_secs(12 * 3600), mode);
    let noop = || ResourceEventHandlerFuncs::<Pod>::new();
    let h1 = inf
        .add_event_handler_with_resync_period(noop(), Duration::ZERO)
        .unwrap();
    assert_eq!(inf.resync_check_period(), Duration::from_secs(12 * 3600));
    assert_eq!(h1.resync_period(), Duration::ZERO);
    let h2 = inf
        .add_event_handler_with_resync_period(noop(), Duration::from_secs(60))
        .unwrap();
    assert_eq!(inf.resync_check_period(), Duration::from_secs(60));
    assert_eq!(
        (h1.resync_period(), h2.resync_period()),
        (Duration::ZERO, Duration::from_secs(60))
    );
    let h3 = inf
        .add_event_handler_with_resync_period(noop(), Duration::from_secs(55))
        .unwrap();
    assert_eq!(inf.resync_check_period(), Duration::from_secs(55));
    assert_eq!(h2.resync_period(), Duration::from_secs(60));
    assert_eq!(h3.resync_period(), Duration::from_secs(55));
    let h4 = inf
        .add_event_handler_with_resync_period(noop(), Duration::from_secs(5))
        .unwrap();
    assert_eq!(inf.resync_check_period(), Duration::from_secs(5));
    assert_eq!(h1.resync_period(), Duration::ZERO);
    assert_eq!(h2.resync_period(), Duration::from_secs(60));
    assert_eq!(h3.resync_period(), Duration::from_secs(55));
    assert_eq!(h4.resync_period(), Duration::from_secs(5));
    // Below the 1s minimum is raised to it.
    let h5 = inf
        .add_event_handler_with_resync_period(noop(), Duration::from_millis(10))
        .unwrap();
    assert_eq!(h5.resync_period(), Duration::from_secs(1));
}

in_every_fifo_mode! {
#[tokio::test]
async fn late_handler_gets_initial_adds_and_its_own_has_synced(mode: FifoMode) {
    let src = source();
    src.add(pod("pod1"));
    src.add(pod("pod2"));
    let inf = informer(&src, Duration::ZERO, mode);
    let (stop, task) = start(&inf);
    assert!(inf.wait_for_cache_sync().await);
    let (tx, rx) = std::sync::mpsc::channel::<()>();
    let gate = Arc::new(parking_lot::Mutex::new(Some(rx)));
    let (h, rx_seen) = recorder();
    // Blocks its first notification until released, so its registration is seen unsynced.
    let gated = ResourceEventHandlerFuncs::<Pod>::new().on_add({
        let gate = gate.clone();
        move |o, initial| {
            if let Some(rx) = gate.lock().take() {
                let _ = rx.recv();
            }
            h.0.send(Seen::Add(o.metadata.name.clone(), initial))
                .unwrap();
        }
    });
    let reg = inf.add_event_handler(gated).unwrap();
    assert!(inf.has_synced());
    assert!(!reg.has_synced(), "initial adds not delivered yet");
    tx.send(()).unwrap();
    let (seen, _rx) = take(rx_seen, 2).await;
    assert_eq!(names(&seen), ["pod1", "pod2"]);
    assert!(seen.iter().all(|s| matches!(s, Seen::Add(_, true))));
    assert!(reg.wait_for_sync().await);
    stop.cancel();
    task.await.unwrap();
}
}

in_every_fifo_mode! {
#[tokio::test]
async fn add_while_active_sees_later_events_once(mode: FifoMode) {
    let src = source();
    src.add(pod("pod1"));
    let inf = informer(&src, Duration::ZERO, mode);
    let (stop, task) = start(&inf);
    assert!(inf.wait_for_cache_sync().await);
    let (h, rx) = recorder();
    inf.add_event_handler(h).unwrap();
    src.add(pod("pod2"));
    src.delete(pod("pod1"));
    let (seen, _rx) = take(rx, 3).await;
    assert_eq!(
        seen,
        [
            Seen::Add("pod1".into(), true),
            Seen::Add("pod2".into(), false),
            Seen::Delete("pod1".into())
        ]
    );
    stop.cancel();
    task.await.unwrap();
}
}

#[test]
fn multiple_registration_and_idempotent_remove() {
    // Not run: the queue plays no part.
    let mode = FifoMode::Real;
    let src = source();
    let inf = informer(&src, Duration::from_secs(1), mode);
    let handler = Arc::new(ResourceEventHandlerFuncs::<Pod>::new());
    let reg1 = inf.add_event_handler(handler.clone()).unwrap();
    let reg2 = inf.add_event_handler(handler).unwrap();
    assert!(inf.is_registered(&reg1) && inf.is_registered(&reg2));
    assert_eq!(inf.handler_count(), 2);
    inf.remove_event_handler(&reg1).unwrap();
    assert!(!inf.is_registered(&reg1) && inf.is_registered(&reg2));
    assert_eq!(inf.handler_count(), 1);
    // Removing a removed registration is fine; one of another informer is an error naming
    // both informers, and removes nothing.
    inf.remove_event_handler(&reg1).unwrap();
    let other =
        SharedIndexInformer::new(source(), Indexers::new(), InformerOptions::named("other"));
    let err = other.remove_event_handler(&reg2).unwrap_err();
    assert!(
        matches!(&err, InformerError::ForeignRegistration { informer, owner, .. }
            if informer == "other" && owner == "pods"),
        "{err}"
    );
    assert!(inf.is_registered(&reg2));
    inf.remove_event_handler(&reg2).unwrap();
    assert_eq!(inf.handler_count(), 0);
}

in_every_fifo_mode! {
#[tokio::test]
async fn add_on_stopped_informer_is_an_error(mode: FifoMode) {
    let src = source();
    let inf = informer(&src, Duration::ZERO, mode);
    let (stop, task) = start(&inf);
    stop.cancel();
    task.await.unwrap();
    assert!(inf.is_stopped());
    let err = inf
        .add_event_handler(ResourceEventHandlerFuncs::new())
        .unwrap_err();
    assert!(matches!(err, InformerError::Stopped(_)), "{err}");
    assert!(err.to_string().contains("has stopped already"));
    let again = inf.run(CancellationToken::new()).await.unwrap_err();
    assert!(matches!(again, InformerError::RunTwice(_)));
}
}

in_every_fifo_mode! {
#[tokio::test(start_paused = true)]
async fn watch_disruption(mode: FifoMode) {
    let src = source();
    src.add(pod("pod1"));
    src.add(pod("pod2"));
    let inf = informer(&src, Duration::from_secs(1), mode);
    let (hn, rxn) = recorder();
    let (hr, rxr) = recorder();
    let no_resync = inf
        .add_event_handler_with_resync_period(hn, Duration::ZERO)
        .unwrap();
    let resync = inf
        .add_event_handler_with_resync_period(hr, Duration::from_secs(1))
        .unwrap();
    let (stop, task) = start(&inf);
    let (a, rxn) = take(rxn, 2).await;
    let (b, rxr) = take(rxr, 2).await;
    assert_eq!(
        (names(&a), names(&b)),
        (
            vec!["pod1".to_string(), "pod2".into()],
            vec!["pod1".to_string(), "pod2".into()]
        )
    );

    // wait_for_sync returns once the initial adds are fully delivered: the counts are settled.
    assert!(no_resync.wait_for_sync().await && resync.wait_for_sync().await);
    assert_eq!((no_resync.delivered(), resync.delivered()), (2, 2));

    // Changes the open watch does not carry.
    src.add_drop_watch(pod("pod3"));
    src.modify_drop_watch(pod("pod2"));
    tokio::task::yield_now().await;
    assert_eq!(inf.indexer().len(), 2, "nobody saw the dropped changes");

    // The resync round picks only the resyncing handler...
    tokio::time::advance(Duration::from_secs(1)).await;
    let (synced, rxr) = take(rxr, 2).await;
    assert_eq!(names(&synced), ["pod1", "pod2"]);
    assert!(synced
        .iter()
        .all(|s| matches!(s, Seen::Update(_, o, n) if o == n)));
    assert_eq!(
        (no_resync.pending(), no_resync.delivered()),
        (0, 2),
        "the non-resyncing handler got no resync"
    );
    // ...then the watch is cut: the re-watch from the last resourceVersion brings the changes.
    src.reset_watch();
    let (n, _rxn) = take(rxn, 2).await;
    let (r, _rxr) = take(rxr, 2).await;
    for seen in [&n, &r] {
        assert_eq!(names(seen), ["pod2", "pod3"]);
        assert!(seen.contains(&Seen::Add("pod3".into(), false)));
        assert!(seen.contains(&Seen::Update("pod2".into(), "2".into(), "4".into())));
    }
    assert_eq!(inf.indexer().len(), 3);
    stop.cancel();
    task.await.unwrap();
}
}

in_every_fifo_mode! {
#[tokio::test]
async fn a_write_the_cache_rejects_is_skipped_and_the_rest_of_the_batch_goes_ahead(mode: FifoMode) {
    let src = source();
    for name in ["pod1", "bad", "pod2"] {
        src.add(pod(name));
    }
    let inf = informer(&src, Duration::ZERO, mode);
    inf.add_indexers(
        Indexers::new().with("picky", |p: &Pod| match p.metadata.name.as_str() {
            "bad" => Err("no index value for bad".into()),
            _ => Ok(kcache_store::IndexValues::none()),
        }),
    )
    .unwrap();
    let (h, rx) = recorder();
    inf.add_event_handler(h).unwrap();
    let (stop, task) = start(&inf);
    assert!(inf.wait_for_cache_sync().await);
    let (seen, rx) = take(rx, 2).await;
    assert_eq!(names(&seen), ["pod1", "pod2"]);
    assert_eq!(inf.indexer().len(), 2);
    assert!(inf.indexer().get_by_key("default/bad").is_none());
    // The informer keeps going: a later event of a good object is written and notified.
    src.add(pod("pod3"));
    let (seen, _rx) = take(rx, 1).await;
    assert_eq!(names(&seen), ["pod3"]);
    stop.cancel();
    task.await.unwrap();
}
}

in_every_fifo_mode! {
#[tokio::test]
async fn transformer_applies_before_cache_and_handlers(mode: FifoMode) {
    let src = source();
    src.add(pod("pod1"));
    src.add(pod("pod2"));
    let inf = informer(&src, Duration::ZERO, mode);
    inf.set_transform(|p: Arc<Pod>| {
        let mut p = (*p).clone();
        p.metadata.name = p.metadata.name.to_uppercase();
        Ok(Arc::new(p))
    })
    .unwrap();
    let (h, rx) = recorder();
    inf.add_event_handler(h).unwrap();
    let (stop, task) = start(&inf);
    let (seen, _rx) = take(rx, 2).await;
    assert_eq!(names(&seen), ["POD1", "POD2"]);
    assert!(inf.indexer().get_by_key("default/POD1").is_some());
    let late = inf.set_transform(Ok).unwrap_err();
    assert!(matches!(late, InformerError::AlreadyStarted(..)));
    stop.cancel();
    task.await.unwrap();
}
}

in_every_fifo_mode! {
#[tokio::test]
async fn no_handler_runs_after_run_returns(mode: FifoMode) {
    let src = source();
    for i in 0..50 {
        src.add(pod(&format!("pod{i}")));
    }
    let inf = informer(&src, Duration::ZERO, mode);
    let calls = Arc::new(AtomicUsize::new(0));
    // Calls under way: entered and not yet returned.
    let active = Arc::new(AtomicUsize::new(0));
    let (entered_tx, entered_rx) = tokio::sync::oneshot::channel::<()>();
    let (release_tx, release_rx) = tokio::sync::oneshot::channel::<()>();
    // The first call holds the handler until the informer has been told to stop, so the stop
    // finds a call in progress and notifications still buffered.
    let first = std::sync::Mutex::new(Some((entered_tx, release_rx)));
    let reg = inf
        .add_event_handler(ResourceEventHandlerFuncs::new().on_add({
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
        }))
        .unwrap();
    let (stop, task) = start(&inf);
    assert!(inf.wait_for_cache_sync().await);
    entered_rx.await.expect("the handler's first call began");
    stop.cancel();
    release_tx
        .send(())
        .expect("the handler waits for the release");
    task.await.unwrap();
    // The call in progress at the stop has returned, and the handler is closed: its buffer is
    // dropped and nothing more is delivered.
    assert_eq!(
        active.load(Ordering::SeqCst),
        0,
        "run returned while a handler call was still running"
    );
    assert!(calls.load(Ordering::SeqCst) >= 1);
    assert_eq!(reg.pending(), 0);
    assert!(!inf.is_registered(&reg));
}
}

in_every_fifo_mode! {
#[tokio::test]
async fn panicking_handler_is_counted_and_does_not_wedge_has_synced(mode: FifoMode) {
    let src = source();
    src.add(pod("pod1"));
    src.add(pod("pod2"));
    let inf = informer(&src, Duration::ZERO, mode);
    let (h, rx) = recorder();
    let panicky = inf
        .add_event_handler(
            ResourceEventHandlerFuncs::<Pod>::new()
                .on_add(|_, _| panic!("boom"))
                .on_update(move |_, new| {
                    let _ = h.0.send(Seen::Update(
                        new.metadata.name.clone(),
                        String::new(),
                        String::new(),
                    ));
                }),
        )
        .unwrap();
    let (stop, task) = start(&inf);
    assert!(
        panicky.wait_for_sync().await,
        "a panic on an initial add must not wedge has_synced"
    );
    assert_eq!(panicky.panics(), 2);
    src.modify(pod("pod1"));
    let (seen, _rx) = take(rx, 1).await;
    assert_eq!(
        seen[0].name(),
        "pod1",
        "the handler keeps receiving after a panic"
    );
    stop.cancel();
    task.await.unwrap();
}
}

in_every_fifo_mode! {
#[tokio::test]
async fn a_stuck_handler_blocks_neither_the_fifo_nor_other_handlers(mode: FifoMode) {
    let src = source();
    let inf = informer(&src, Duration::ZERO, mode);
    let (release_tx, release_rx) = std::sync::mpsc::channel::<()>();
    let release_rx = parking_lot::Mutex::new(release_rx);
    let stuck = inf
        .add_event_handler(ResourceEventHandlerFuncs::<Pod>::new().on_add(move |_, _| {
            let _ = release_rx.lock().recv();
        }))
        .unwrap();
    let (h, rx) = recorder();
    inf.add_event_handler(h).unwrap();
    let (stop, task) = start(&inf);
    assert!(inf.wait_for_cache_sync().await);
    for i in 0..100 {
        src.add(pod(&format!("p{i}")));
    }
    let (seen, _rx) = take(rx, 100).await;
    assert_eq!(seen.len(), 100);
    assert_eq!(inf.indexer().len(), 100, "the cache kept up");
    assert_eq!(stuck.pending(), 100, "one in delivery, 99 buffered");
    assert!(stuck.oldest_pending_age().is_some());
    let stats = inf.stats();
    assert_eq!(stats.objects, 100);
    assert!(stats.handlers.iter().any(|h| h.pending == 100));
    drop(release_tx);
    stop.cancel();
    task.await.unwrap();
}
}

in_every_fifo_mode! {
#[tokio::test]
async fn bounded_handler_buffer_disconnects_on_overflow(mode: FifoMode) {
    let src = source();
    let opts = InformerOptions {
        overflow: OverflowPolicy::Disconnect { max_pending: 10 },
        fifo_mode: mode,
        ..InformerOptions::named("bounded")
    };
    let inf = SharedIndexInformer::new(src.clone(), Indexers::new(), opts);
    let (release_tx, release_rx) = std::sync::mpsc::channel::<()>();
    let release_rx = parking_lot::Mutex::new(release_rx);
    let stuck = inf
        .add_event_handler(ResourceEventHandlerFuncs::<Pod>::new().on_add(move |_, _| {
            let _ = release_rx.lock().recv();
        }))
        .unwrap();
    let (h, rx) = recorder();
    let healthy = inf.add_event_handler(h).unwrap();
    let (stop, task) = start(&inf);
    assert!(inf.wait_for_cache_sync().await);
    // Batches smaller than the bound, each drained by the healthy handler before the next:
    // only the stuck handler's buffer can pass the bound.
    let mut rx = rx;
    for batch in 0..3 {
        for i in 0..8 {
            src.add(pod(&format!("p{batch}-{i}")));
        }
        rx = take(rx, 8).await.1;
    }
    assert!(stuck.is_overflowed());
    assert!(!healthy.is_overflowed());
    assert_eq!(
        stuck.pending(),
        0,
        "an overflowed handler's buffer is dropped"
    );
    drop(release_tx);
    stop.cancel();
    task.await.unwrap();
}
}

in_every_fifo_mode! {
#[tokio::test]
async fn empty_first_list_syncs_without_any_pop(mode: FifoMode) {
    let src = source();
    let inf = informer(&src, Duration::ZERO, mode);
    let reg = inf
        .add_event_handler(ResourceEventHandlerFuncs::new())
        .unwrap();
    let (stop, task) = start(&inf);
    assert!(inf.wait_for_cache_sync().await);
    assert!(reg.wait_for_sync().await);
    assert!(!inf.last_sync_resource_version().is_empty() || src.objects().is_empty());
    stop.cancel();
    task.await.unwrap();
}
}
