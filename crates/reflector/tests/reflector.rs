//! client-go's reflector_test.go, against a scripted ListerWatcher, in paused time.

mod support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use kcache_core::{DynamicObject, Error, WatchEvent};
use kcache_reflector::{Reflector, ReflectorError, ReflectorOptions};
use support::*;
use tokio::time::Instant;

fn new_reflector(
    lw: &Arc<ScriptedLw>,
    store: &Arc<RecordingStore>,
    opts: ReflectorOptions,
) -> TestReflector {
    Reflector::new(lw.clone(), store.clone(), opts)
}

/// Records every error the reflector reports to its watch-error handler.
fn record_errors(r: &mut TestReflector) -> Arc<Mutex<Vec<String>>> {
    let errors = Arc::new(Mutex::new(Vec::new()));
    let sink = errors.clone();
    r.set_watch_error_handler(move |_, e: &ReflectorError| {
        sink.lock()
            .unwrap()
            .push(kcache_core::ErrorChain(e).to_string())
    });
    errors
}

fn server_error() -> WatchScript {
    WatchScript::Fail(api(500, "InternalError"))
}

#[tokio::test(start_paused = true)]
async fn list_and_watch() {
    // TestReflectorListAndWatch, watch-list disabled.
    let lw = ScriptedLw::new();
    lw.push_list(list("1", vec![pod("foo", "1")]));
    let tx = lw.push_channel_watch();
    let store = RecordingStore::new();
    let (handle, task) = spawn(new_reflector(&lw, &store, options(false)), &lw);
    for e in [
        modified("foo", "2"),
        added("bar", "3"),
        added("baz", "4"),
        added("qux", "5"),
        added("zoo", "6"),
    ] {
        tx.send(e).unwrap();
    }
    store.wait_for_ops(6).await;
    assert_eq!(
        without_timeouts(lw.requests()),
        [
            Request::List(list_params("0", Some(500))),
            Request::Watch(watch_params("1")),
        ]
    );
    let k = |n: &str, rv: &str| (format!("ns/{n}"), rv.to_string());
    assert_eq!(
        store.ops(),
        [
            Op::Replace(vec![k("foo", "1")], "1".into()),
            Op::Update("ns/foo".into(), "2".into()),
            Op::Add("ns/bar".into(), "3".into()),
            Op::Add("ns/baz".into(), "4".into()),
            Op::Add("ns/qux".into(), "5".into()),
            Op::Add("ns/zoo".into(), "6".into()),
        ]
    );
    assert_eq!(handle.last_sync_resource_version(), "6");
    let stats = handle.stats();
    assert_eq!(
        (stats.lists, stats.relists, stats.syncs, stats.watches),
        (1, 0, 1, 1)
    );
    lw.cancel.cancel();
    task.await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn relists_at_the_last_synced_resource_version() {
    // TestReflectorResyncWithResourceVersion: a relist never travels back in time.
    let lw = ScriptedLw::new();
    lw.push_list(list("10", pods(0..4)));
    lw.push_watch(server_error());
    lw.push_list(list("11", pods(0..8)));
    let store = RecordingStore::new();
    run_to_end(new_reflector(&lw, &store, options(false)), &lw).await;
    assert_eq!(lw.list_rvs(), ["0", "10"]);
    // A list at an exact resourceVersion is served whole by the watch cache: no limit.
    assert_eq!(lw.list_requests()[1], list_params("10", None));
    assert_eq!(store.items().len(), 8);
}

#[tokio::test(start_paused = true)]
async fn expired_exact_resource_version_relists_from_etcd() {
    // TestReflectorExpiredExactResourceVersion.
    let lw = ScriptedLw::new();
    lw.push_list(list("10", pods(0..4)));
    lw.push_watch(server_error());
    lw.push_list(Err(expired()));
    lw.push_list(list("11", pods(0..8)));
    lw.push_watch(server_error());
    lw.push_list(list("12", pods(0..8)));
    let store = RecordingStore::new();
    run_to_end(new_reflector(&lw, &store, options(false)), &lw).await;
    // After a successful list at "" the last RV is available again.
    assert_eq!(lw.list_rvs(), ["0", "10", "", "11"]);
    assert_eq!(lw.list_requests()[2], list_params("", Some(500)));
    assert_eq!(store.items().len(), 8);
}

#[tokio::test(start_paused = true)]
async fn full_list_if_a_continuation_page_expired() {
    // TestReflectorFullListIfExpired; the relist follows a 410 ERROR event and asks for the last
    // synced RV, not "" (kubernetes#86483).
    let lw = ScriptedLw::new();
    lw.push_list(list("10", pods(0..4)));
    lw.push_watch(WatchScript::Stream(
        vec![error_event(410, "Expired")],
        End::Now,
    ));
    lw.push_list(page("11", "C1", pods(0..4)));
    lw.push_list(Err(expired()));
    lw.push_list(list("11", pods(0..8)));
    let store = RecordingStore::new();
    let mut r = new_reflector(
        &lw,
        &store,
        ReflectorOptions {
            page_size: Some(4),
            ..options(false)
        },
    );
    let errors = record_errors(&mut r);
    run_to_end(r, &lw).await;
    let continuation = kcache_core::ListParams {
        continue_token: Some("C1".into()),
        limit: Some(4),
        ..Default::default()
    };
    assert_eq!(
        lw.list_requests(),
        [
            list_params("0", Some(4)),
            list_params("10", Some(4)),
            continuation,
            list_params("10", None),
        ]
    );
    assert_eq!(store.items().len(), 8);
    assert_eq!(
        lw.watch_requests()
            .last()
            .unwrap()
            .resource_version
            .as_deref(),
        Some("11")
    );
    assert_eq!(errors.lock().unwrap().len(), 1);
    assert!(errors.lock().unwrap()[0].contains("410"), "{errors:?}");
}

#[tokio::test(start_paused = true)]
async fn full_list_if_too_large_in_all_three_formats() {
    // TestReflectorFullListIfTooLarge.
    let lw = ScriptedLw::new();
    lw.push_list(list("20", vec![]));
    for (format, rv) in [(0, "30"), (1, "40"), (2, "50")] {
        lw.push_watch(server_error());
        lw.push_list(Err(too_large(format)));
        lw.push_list(list(rv, vec![]));
    }
    let store = RecordingStore::new();
    run_to_end(new_reflector(&lw, &store, options(false)), &lw).await;
    assert_eq!(lw.list_rvs(), ["0", "20", "", "30", "", "40", ""]);
}

#[tokio::test(start_paused = true)]
async fn page_size_policy() {
    // TestReflectorWatchListPageSize, TestReflectorNotPaginatingNotConsistentReads and
    // TestReflectorPaginatingNonConsistentReadsIfWatchCacheDisabled.
    let cont = |token: &str, limit: i64| kcache_core::ListParams {
        continue_token: Some(token.into()),
        limit: Some(limit),
        ..Default::default()
    };

    // A configured page size wins, also for a list at an exact resourceVersion.
    let lw = ScriptedLw::new();
    lw.push_list(list("10", pods(0..4)));
    lw.push_watch(server_error());
    lw.push_list(page("10", "C1", pods(0..4)));
    lw.push_list(page("10", "C2", pods(4..8)));
    lw.push_list(list("10", pods(8..10)));
    let store = RecordingStore::new();
    run_to_end(
        new_reflector(
            &lw,
            &store,
            ReflectorOptions {
                page_size: Some(4),
                ..options(false)
            },
        ),
        &lw,
    )
    .await;
    assert_eq!(
        lw.list_requests(),
        [
            list_params("0", Some(4)),
            list_params("10", Some(4)),
            cont("C1", 4),
            cont("C2", 4)
        ]
    );
    assert_eq!(store.items().len(), 10);

    // A list at "0" that came back whole: later lists at an exact RV are not paginated.
    let lw = ScriptedLw::new();
    lw.push_list(list("10", pods(0..10)));
    lw.push_watch(server_error());
    lw.push_list(list("10", pods(0..10)));
    let store = RecordingStore::new();
    run_to_end(new_reflector(&lw, &store, options(false)), &lw).await;
    assert_eq!(
        lw.list_requests(),
        [list_params("0", Some(500)), list_params("10", None)]
    );

    // A list at "0" that came back paginated (watch cache off): every later list is paginated.
    let lw = ScriptedLw::new();
    lw.push_list(page("10", "C1", pods(0..4)));
    lw.push_list(list("10", pods(4..10)));
    lw.push_watch(server_error());
    lw.push_list(list("10", pods(0..10)));
    let store = RecordingStore::new();
    run_to_end(new_reflector(&lw, &store, options(false)), &lw).await;
    assert_eq!(
        lw.list_requests(),
        [
            list_params("0", Some(500)),
            cont("C1", 500),
            list_params("10", Some(500))
        ]
    );
    assert_eq!(store.replaces()[0].0.len(), 10);
}

#[tokio::test(start_paused = true)]
async fn watch_timeout_is_random_in_min_to_twice_min() {
    // TestWatchTimeout: small minimums are not honoured.
    for (min, expected_min) in [(None, 300), (Some(1), 300), (Some(1800), 1800)] {
        for _ in 0..20 {
            let lw = ScriptedLw::new();
            lw.push_list(list("10", vec![]));
            let mut opts = options(false);
            if let Some(m) = min {
                opts.min_watch_timeout = Duration::from_secs(m);
            }
            run_to_end(new_reflector(&lw, &RecordingStore::new(), opts), &lw).await;
            let t = lw.watch_requests()[0].timeout_seconds.unwrap();
            assert!(
                (expected_min..2 * expected_min).contains(&t),
                "{t} for min {min:?}"
            );
        }
    }
}

#[tokio::test(start_paused = true)]
async fn backoff_on_too_many_requests() {
    // TestBackoffOnTooManyRequests: a 429 on connect and a 429 ERROR event each back off once
    // and re-watch; then a watch that closes at once is a very short watch, which relists at
    // the last RV after the next step of the same backoff.
    let lw = ScriptedLw::new();
    lw.push_list(list("1", vec![]));
    lw.push_watch(WatchScript::Fail(too_many()));
    lw.push_watch(WatchScript::Stream(
        vec![error_event(429, "TooManyRequests")],
        End::Now,
    ));
    lw.push_watch(WatchScript::Stream(vec![], End::Now));
    let store = RecordingStore::new();
    let mut r = new_reflector(&lw, &store, options(false));
    let errors = record_errors(&mut r);
    run_to_end(r, &lw).await;
    let requests = lw.timed_requests();
    assert_eq!(
        without_timeouts(requests.iter().map(|(_, r)| r.clone()).collect()),
        [
            Request::List(list_params("0", Some(500))),
            Request::Watch(watch_params("1")),
            Request::Watch(watch_params("1")),
            Request::Watch(watch_params("1")),
            Request::List(list_params("1", None)),
        ]
    );
    let gap = |i: usize| requests[i + 1].0 - requests[i].0;
    assert_eq!(gap(0), Duration::ZERO);
    assert!(in_range(gap(1), 800), "first backoff {:?}", gap(1));
    assert!(in_range(gap(2), 1600), "second backoff {:?}", gap(2));
    assert!(
        in_range(gap(3), 3200),
        "the relist shares the backoff: {:?}",
        gap(3)
    );
    // The second error is the scripted lister running out.
    let errors = errors.lock().unwrap();
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert!(errors[0].starts_with("very short watch"), "{errors:?}");
}

#[tokio::test(start_paused = true)]
async fn no_relist_on_too_many_requests_or_refused_connections() {
    // TestNoRelistOnTooManyRequests, plus a refused connection, plus a clean end.
    let lw = ScriptedLw::new();
    lw.push_list(list("1", vec![]));
    for _ in 0..4 {
        lw.push_watch(WatchScript::Fail(too_many()));
    }
    lw.push_watch(WatchScript::Fail(Error::Connect(
        "connection refused".into(),
    )));
    lw.push_watch(WatchScript::Stream(
        vec![added("a", "2")],
        End::After(Duration::from_secs(300)),
    ));
    let store = RecordingStore::new();
    let r = new_reflector(&lw, &store, options(false));
    let handle = r.handle();
    run_to_end(r, &lw).await;
    let watch_rvs: Vec<_> = lw
        .watch_requests()
        .into_iter()
        .map(|p| p.resource_version.unwrap())
        .collect();
    assert_eq!(watch_rvs, ["1", "1", "1", "1", "1", "1", "2"]);
    assert_eq!(lw.list_requests().len(), 1);
    let stats = handle.stats();
    assert_eq!(
        (stats.lists, stats.watches, stats.watch_restarts),
        (1, 7, 6)
    );
}

#[tokio::test(start_paused = true)]
async fn clean_end_rewatches_from_the_last_rv_without_relisting() {
    let lw = ScriptedLw::new();
    lw.push_list(list("1", vec![]));
    lw.push_watch(WatchScript::Stream(
        vec![added("a", "2"), bookmark("5")],
        End::After(Duration::from_secs(400)),
    ));
    let store = RecordingStore::new();
    let mut r = new_reflector(&lw, &store, options(false));
    let errors = record_errors(&mut r);
    run_to_end(r, &lw).await;
    let requests = lw.timed_requests();
    assert_eq!(
        without_timeouts(requests.iter().map(|(_, r)| r.clone()).collect()),
        [
            Request::List(list_params("0", Some(500))),
            Request::Watch(watch_params("1")),
            Request::Watch(watch_params("5")),
        ]
    );
    assert_eq!(
        requests[2].0 - requests[1].0,
        Duration::from_secs(400),
        "no backoff"
    );
    assert_eq!(
        store.ops()[1..],
        [Op::Add("ns/a".into(), "2".into()), Op::Bookmark("5".into())]
    );
    assert!(errors.lock().unwrap().is_empty(), "a clean end is silent");
}

#[tokio::test(start_paused = true)]
async fn other_watch_errors_relist_after_backoff() {
    let lw = ScriptedLw::new();
    lw.push_list(list("1", vec![]));
    lw.push_watch(WatchScript::Stream(
        vec![added("a", "2"), error_event(500, "InternalError")],
        End::Now,
    ));
    let store = RecordingStore::new();
    let mut r = new_reflector(&lw, &store, options(false));
    let errors = record_errors(&mut r);
    run_to_end(r, &lw).await;
    let requests = lw.timed_requests();
    assert_eq!(requests.len(), 3);
    assert_eq!(requests[2].1, Request::List(list_params("2", None)));
    assert!(in_range(requests[2].0 - requests[1].0, 800));
    // The second error is the scripted lister running out.
    assert!(
        errors.lock().unwrap()[0].contains("InternalError"),
        "{errors:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn nameless_objects_and_undecodable_events_are_skipped() {
    let lw = ScriptedLw::new();
    lw.push_list(list("1", vec![]));
    lw.push_watch(WatchScript::Stream(
        vec![
            Ok(WatchEvent::Added(
                DynamicObject::default().with_resource_version("9"),
            )),
            Err(Error::decode("watch event", "unknown type \"FOO\"")),
            added("b", "3"),
        ],
        End::After(Duration::from_secs(300)),
    ));
    let store = RecordingStore::new();
    run_to_end(new_reflector(&lw, &store, options(false)), &lw).await;
    assert_eq!(store.ops()[1..], [Op::Add("ns/b".into(), "3".into())]);
    assert_eq!(
        lw.watch_requests()[1].resource_version.as_deref(),
        Some("3")
    );
}

#[tokio::test(start_paused = true)]
async fn resource_version_follows_every_event() {
    // TestReflectorResourceVersionUpdate.
    let lw = ScriptedLw::new();
    lw.push_list(list("10", vec![]));
    let tx = lw.push_channel_watch();
    let store = RecordingStore::new();
    let (handle, task) = spawn(new_reflector(&lw, &store, options(false)), &lw);
    let events = [
        added("p", "10"),
        modified("p", "20"),
        bookmark("30"),
        deleted("p", "40"),
    ];
    for (i, (e, rv)) in events.into_iter().zip(["10", "20", "30", "40"]).enumerate() {
        tx.send(e).unwrap();
        store.wait_for_ops(i + 2).await;
        assert_eq!(handle.last_sync_resource_version(), rv);
    }
    lw.cancel.cancel();
    task.await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn watch_from_zero_ignores_added_versions_until_another_event() {
    let lw = ScriptedLw::new();
    lw.push_list(list("0", vec![]));
    let tx = lw.push_channel_watch();
    let store = RecordingStore::new();
    let (handle, task) = spawn(new_reflector(&lw, &store, options(false)), &lw);
    for (i, (e, rv)) in [
        (added("a", "6"), "0"),
        (added("b", "5"), "0"),
        (modified("a", "7"), "7"),
        (added("c", "8"), "8"),
    ]
    .into_iter()
    .enumerate()
    {
        tx.send(e).unwrap();
        store.wait_for_ops(i + 2).await;
        assert_eq!(handle.last_sync_resource_version(), rv, "after event {i}");
    }
    assert_eq!(
        lw.watch_requests()[0].resource_version.as_deref(),
        Some("0")
    );
    lw.cancel.cancel();
    task.await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn replaces_store_on_unsafe_delete() {
    // TestReflectorReplacesStoreOnUnsafeDelete: a corrupt object is unsafe-deleted and the
    // watch ends with a 500; the relist's replace removes it and keeps the others.
    let existing = vec![pod("foo-1", "1"), pod("foo-2", "2"), pod("foo-3", "3")];
    let lw = ScriptedLw::new();
    lw.push_list(list("3", existing.clone()));
    lw.push_watch(WatchScript::Stream(
        vec![added("foo", "4"), error_event(500, "StorageReadError")],
        End::Now,
    ));
    lw.push_list(list("5", existing));
    let store = RecordingStore::new();
    let r = new_reflector(&lw, &store, options(false));
    let handle = r.handle();
    run_to_end(r, &lw).await;
    assert_eq!(lw.list_rvs(), ["0", "4"]);
    assert_eq!(handle.last_sync_resource_version(), "5");
    let replaces = store.replaces();
    assert_eq!(replaces.len(), 2);
    assert_eq!(replaces[1].1, "5");
    assert_eq!(
        store
            .items()
            .into_iter()
            .map(|(k, _)| k)
            .collect::<Vec<_>>(),
        ["ns/foo-1", "ns/foo-2", "ns/foo-3"]
    );
}

#[tokio::test(start_paused = true)]
async fn resync_calls_the_store_and_a_failure_ends_the_pass() {
    // TestReflectorResync.
    let lw = ScriptedLw::new();
    lw.push_list(list("1", vec![]));
    lw.push_watch(WatchScript::Stream(vec![], End::Never));
    let store = RecordingStore::failing_resync(2);
    let mut opts = options(false);
    opts.resync_period = Duration::from_secs(30);
    let mut r = new_reflector(&lw, &store, opts);
    let errors = record_errors(&mut r);
    let start = Instant::now();
    run_to_end(r, &lw).await;
    assert_eq!(store.resync_calls(), 2);
    // The failed resync at 60 s ends the pass; the relist follows one backoff step later.
    let relist_at = lw.timed_requests()[2].0 - start - Duration::from_secs(60);
    assert!(
        in_range(relist_at, 800),
        "relisted {relist_at:?} after the failed resync"
    );
    assert_eq!(lw.list_requests().len(), 2);
    assert!(
        errors.lock().unwrap()[0].starts_with("resync failed"),
        "{errors:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn should_resync_gates_resync() {
    for (allow, expected) in [(true, 10), (false, 0)] {
        let lw = ScriptedLw::new();
        lw.push_list(list("1", vec![]));
        lw.push_watch(WatchScript::Stream(
            vec![added("a", "2")],
            End::After(Duration::from_secs(310)),
        ));
        let store = RecordingStore::new();
        let mut opts = options(false);
        opts.resync_period = Duration::from_secs(30);
        let mut r = new_reflector(&lw, &store, opts);
        r.set_should_resync(move || allow);
        run_to_end(r, &lw).await;
        assert_eq!(store.resync_calls(), expected);
    }
}

/// A ListerWatcher whose list and watch never answer.
struct Silent;
impl kcache_core::ListerWatcher<Obj> for Silent {
    async fn list(
        &self,
        _: &kcache_core::ListParams,
    ) -> Result<kcache_core::ObjectList<Obj>, Error> {
        std::future::pending().await
    }
    async fn watch(
        &self,
        _: &kcache_core::WatchParams,
    ) -> Result<kcache_core::WatchStream<Obj>, Error> {
        std::future::pending().await
    }
}

#[tokio::test(start_paused = true)]
async fn stops_promptly_mid_list_and_mid_watch() {
    // Mid-list.
    let cancel = tokio_util::sync::CancellationToken::new();
    let r = Reflector::new(Silent, RecordingStore::new(), options(false));
    let task = tokio::spawn(r.run(cancel.clone()));
    tokio::time::sleep(Duration::from_secs(10)).await;
    cancel.cancel();
    tokio::time::timeout(Duration::from_millis(1), task)
        .await
        .expect("stopped mid-list")
        .unwrap();

    // Mid-watch.
    let lw = ScriptedLw::new();
    lw.push_list(list("1", vec![]));
    lw.push_watch(WatchScript::Stream(vec![], End::Never));
    let store = RecordingStore::new();
    let (_, task) = spawn(new_reflector(&lw, &store, options(false)), &lw);
    store.wait_for_ops(1).await;
    tokio::time::sleep(Duration::from_secs(10)).await;
    lw.cancel.cancel();
    tokio::time::timeout(Duration::from_millis(1), task)
        .await
        .expect("stopped mid-watch")
        .unwrap();
}

#[test]
fn run_is_send() {
    fn assert_send<T: Send + 'static>(_: T) {}
    let lw = ScriptedLw::new();
    let r = new_reflector(&lw, &RecordingStore::new(), options(false));
    assert_send(r.run(tokio_util::sync::CancellationToken::new()));
}

const SHARD: &str = "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')";

#[tokio::test(start_paused = true)]
async fn selectors_go_into_every_request() {
    let lw = ScriptedLw::new();
    lw.push_list(page("10", "C1", pods(0..1)));
    lw.push_list(list("10", pods(1..2)));
    lw.push_watch(WatchScript::Fail(api(500, "InternalError")));
    let store = RecordingStore::new();
    let opts = ReflectorOptions {
        label_selector: Some("app=web".into()),
        field_selector: Some("metadata.name!=x".into()),
        shard_selector: Some(SHARD.into()),
        watch_list: kcache_reflector::WatchListMode::Auto,
        ..options(false)
    };
    run_to_end(new_reflector(&lw, &store, opts), &lw).await;
    let requests = lw.requests();
    assert_eq!(requests.len(), 4, "{requests:?}");
    for r in requests {
        let (label, field, shard) = match r {
            Request::List(p) => (p.label_selector, p.field_selector, p.shard_selector),
            Request::Watch(p) => (p.label_selector, p.field_selector, p.shard_selector),
        };
        assert_eq!(label.as_deref(), Some("app=web"));
        assert_eq!(field.as_deref(), Some("metadata.name!=x"));
        assert_eq!(shard.as_deref(), Some(SHARD));
    }
}

#[tokio::test(start_paused = true)]
async fn a_broken_body_rewatches_without_relisting() {
    // client-go's StreamWatcher closes the channel on probable-EOF errors (connection reset):
    // the reflector re-watches from the last RV. A break before any event within a second is
    // a very short watch and relists.
    let lw = ScriptedLw::new();
    lw.push_list(list("1", vec![]));
    lw.push_watch(WatchScript::Stream(
        vec![
            added("a", "2"),
            Err(Error::Request("connection reset".into())),
        ],
        End::Never,
    ));
    lw.push_watch(WatchScript::Stream(
        vec![Err(Error::Request("connection reset".into()))],
        End::Never,
    ));
    let store = RecordingStore::new();
    let mut r = new_reflector(&lw, &store, options(false));
    let errors = record_errors(&mut r);
    run_to_end(r, &lw).await;
    assert_eq!(
        without_timeouts(lw.requests()),
        [
            Request::List(list_params("0", Some(500))),
            Request::Watch(watch_params("1")),
            Request::Watch(watch_params("2")),
            Request::List(list_params("2", None)),
        ]
    );
    assert!(
        errors.lock().unwrap()[0].starts_with("very short watch"),
        "{errors:?}"
    );
}
