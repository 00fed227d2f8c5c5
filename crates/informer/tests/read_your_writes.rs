//! Read your writes (KEP-5647, client-go's `LastStoreSyncResourceVersion`): the resourceVersion
//! the cache reflects, and waiting for it, on paused tokio time against an in-memory source.

use crate::support;

use std::time::Duration;

use kcache_informer::{InformerOptions, SharedIndexInformer, WaitForResourceVersionError};
use kcache_store::Indexers;
use support::*;
use tokio_util::sync::CancellationToken;

const MODES: [kcache_delta_fifo::FifoMode; 2] = [
    kcache_delta_fifo::FifoMode::Delta,
    kcache_delta_fifo::FifoMode::Real,
];

async fn started(
    src: &std::sync::Arc<kcache_informer::testing::FakeControllerSource<Pod>>,
    mode: kcache_delta_fifo::FifoMode,
) -> (
    SharedIndexInformer<Pod>,
    CancellationToken,
    tokio::task::JoinHandle<()>,
) {
    let inf = informer(src, Duration::ZERO, mode);
    let (stop, task) = start(&inf);
    assert!(inf.wait_for_cache_sync().await);
    (inf, stop, task)
}

fn cached_rv(inf: &SharedIndexInformer<Pod>, name: &str) -> Option<String> {
    inf.indexer()
        .get_by_key(&format!("default/{name}"))
        .and_then(|p| p.metadata.resource_version.clone())
}

#[tokio::test(start_paused = true)]
async fn the_first_list_sets_it_and_events_move_it() {
    for mode in MODES {
        let src = source();
        src.add(pod("a"));
        src.add(pod("b"));
        let (inf, stop, task) = started(&src, mode).await;
        // The list's resourceVersion, once its items are in the cache.
        assert_eq!(inf.last_store_sync_resource_version(), "2", "{mode:?}");
        src.modify(pod("a"));
        inf.wait_for_resource_version("3").await.unwrap();
        assert_eq!(cached_rv(&inf, "a").as_deref(), Some("3"), "{mode:?}");
        assert_eq!(inf.last_store_sync_resource_version(), "3");
        // Already reached: returns at once, also for older versions.
        inf.wait_for_resource_version("1").await.unwrap();
        stop.cancel();
        task.await.unwrap();
    }
}

/// The wait ends when the event that carries the write is applied, not before: a write the
/// watch missed keeps it waiting (and times out) until a re-watch replays it.
#[tokio::test(start_paused = true)]
async fn a_wait_ends_only_once_the_cache_holds_the_write() {
    for mode in MODES {
        let src = source();
        src.add(pod("a"));
        let (inf, stop, task) = started(&src, mode).await;
        src.modify_drop_watch(pod("a")); // rv 2, not sent to the open watch
        let err = inf
            .wait_for_resource_version_timeout("2", Duration::from_secs(5))
            .await
            .unwrap_err();
        assert_eq!(
            err,
            WaitForResourceVersionError::Timeout {
                informer: "pods".into(),
                wanted: "2".into(),
                reached: "1".into(),
                after: Duration::from_secs(5),
            },
            "{mode:?}"
        );
        let handle = inf.cache_resource_version();
        let waiter = tokio::spawn(async move { handle.wait_for_resource_version("2").await });
        tokio::task::yield_now().await;
        assert!(!waiter.is_finished(), "{mode:?}: nothing applied yet");
        src.reset_watch(); // the reflector watches again from 1 and gets the change
        waiter.await.unwrap().unwrap();
        assert_eq!(cached_rv(&inf, "a").as_deref(), Some("2"), "{mode:?}");
        stop.cancel();
        task.await.unwrap();
    }
}

/// A bookmark moves the version without any object changing (here a write the watch does not
/// report, as one outside a selector would be).
#[tokio::test(start_paused = true)]
async fn a_bookmark_moves_it() {
    for mode in MODES {
        let src = source();
        src.add(pod("a"));
        let (inf, stop, task) = started(&src, mode).await;
        src.add_drop_watch(pod("elsewhere")); // rv 2
        let handle = inf.cache_resource_version();
        assert_eq!(handle.has_reached("2"), Ok(false));
        src.bookmark();
        handle.wait_for_resource_version("2").await.unwrap();
        assert_eq!(handle.last_store_sync_resource_version(), "2", "{mode:?}");
        assert_eq!(handle.has_reached("2"), Ok(true));
        stop.cancel();
        task.await.unwrap();
    }
}

#[tokio::test(start_paused = true)]
async fn opaque_versions_are_refused_naming_them() {
    let src = source();
    src.add(pod("a"));
    let (inf, stop, task) = started(&src, MODES[0]).await;
    for bad in ["", "abc", "007"] {
        let err = inf.wait_for_resource_version(bad).await.unwrap_err();
        assert!(
            matches!(&err, WaitForResourceVersionError::Incomparable(e) if e.0 == bad),
            "{err}"
        );
        assert!(err.to_string().contains("not comparable"), "{err}");
    }
    stop.cancel();
    task.await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn cancellation_and_stop_end_a_wait_with_their_reason() {
    let src = source();
    src.add(pod("a"));
    let (inf, stop, task) = started(&src, MODES[0]).await;

    let cancel = CancellationToken::new();
    let waiter = tokio::spawn({
        let inf = inf.clone();
        let cancel = cancel.clone();
        async move { inf.wait_for_resource_version_until("50", &cancel).await }
    });
    tokio::task::yield_now().await;
    cancel.cancel();
    assert_eq!(
        waiter.await.unwrap(),
        Err(WaitForResourceVersionError::Cancelled {
            informer: "pods".into(),
            wanted: "50".into(),
            reached: "1".into(),
        })
    );

    let waiter = tokio::spawn({
        let inf = inf.clone();
        async move { inf.wait_for_resource_version("50").await }
    });
    tokio::task::yield_now().await;
    stop.cancel();
    task.await.unwrap();
    let stopped = WaitForResourceVersionError::Stopped {
        informer: "pods".into(),
        wanted: "50".into(),
        reached: "1".into(),
    };
    assert_eq!(waiter.await.unwrap(), Err(stopped.clone()));
    // A wait that starts after the stop fails at once.
    assert_eq!(inf.wait_for_resource_version("50").await, Err(stopped));
}

/// A handle taken before `run` follows the informer once it runs.
#[tokio::test(start_paused = true)]
async fn a_handle_taken_before_run_follows_the_informer() {
    let src = source();
    src.add(pod("a"));
    let inf = SharedIndexInformer::new(src.clone(), Indexers::new(), InformerOptions::named("p"));
    let handle = inf.cache_resource_version();
    assert_eq!(handle.last_store_sync_resource_version(), "");
    // Nothing applied yet: a comparable version is not reached, an opaque one is refused.
    assert_eq!(handle.has_reached("1"), Ok(false));
    assert!(handle.has_reached("x").is_err());
    let (stop, task) = start(&inf);
    handle.wait_for_resource_version("1").await.unwrap();
    assert!(inf.has_synced());
    stop.cancel();
    task.await.unwrap();
}
