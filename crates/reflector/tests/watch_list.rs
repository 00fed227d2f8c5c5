//! client-go's reflector_watchlist_test.go (TestWatchList, TestWatchListResourceVersion) and the
//! watch-list half of TestReflectorListAndWatch, against a scripted ListerWatcher.

mod support;

use std::sync::Arc;
use std::time::Duration;

use kcache_reflector::{Reflector, ReflectorOptions};
use support::*;

fn new_reflector(lw: &Arc<ScriptedLw>, store: &Arc<RecordingStore>) -> TestReflector {
    Reflector::new(lw.clone(), store.clone(), options(true))
}

fn k(name: &str, rv: &str) -> (String, String) {
    (format!("ns/{name}"), rv.to_string())
}

#[tokio::test(start_paused = true)]
async fn syncs_at_the_end_bookmark_and_keeps_the_stream() {
    // TestReflectorListAndWatch "UseWatchList enabled" and "prove that the reflector is synced
    // after receiving a bookmark event".
    let lw = ScriptedLw::new();
    let tx = lw.push_channel_watch();
    let store = RecordingStore::new();
    let (handle, task) = spawn(new_reflector(&lw, &store), &lw);
    for e in [
        added("foo", "1"),
        added("bar", "2"),
        end_bookmark("2"),
        modified("foo", "3"),
        added("baz", "4"),
    ] {
        tx.send(e).unwrap();
    }
    store.wait_for_ops(3).await;
    assert_eq!(
        without_timeouts(lw.requests()),
        [Request::Watch(watch_list_params(""))]
    );
    assert_eq!(
        store.ops(),
        [
            Op::Replace(vec![k("bar", "2"), k("foo", "1")], "2".into()),
            Op::Update("ns/foo".into(), "3".into()),
            Op::Add("ns/baz".into(), "4".into()),
        ]
    );
    assert_eq!(handle.last_sync_resource_version(), "4");
    assert_eq!(handle.stats().syncs, 1);
    lw.cancel.cancel();
    task.await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn updates_and_deletes_during_streaming_fold_into_the_replace() {
    let lw = ScriptedLw::new();
    lw.push_watch(WatchScript::Stream(
        vec![
            added("p1", "1"),
            added("p2", "2"),
            modified("p1", "3"),
            added("p3", "4"),
            deleted("p3", "5"),
            end_bookmark("5"),
        ],
        End::After(Duration::from_secs(300)),
    ));
    let store = RecordingStore::new();
    run_to_end(new_reflector(&lw, &store), &lw).await;
    assert_eq!(
        store.replaces(),
        [(vec![k("p1", "3"), k("p2", "2")], "5".to_string())]
    );
    // The stream that ended cleanly is followed by a plain watch from the bookmark's RV.
    assert_eq!(
        without_timeouts(lw.requests()),
        [
            Request::Watch(watch_list_params("")),
            Request::Watch(watch_params("5")),
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn resource_version_comes_from_the_end_bookmark_only() {
    // TestWatchListResourceVersion: ADDED events never set the RV, and without an end bookmark
    // nothing is synced.
    let lw = ScriptedLw::new();
    lw.push_watch(WatchScript::Stream(vec![added("p1", "1")], End::Now));
    let store = RecordingStore::new();
    let r = new_reflector(&lw, &store);
    let handle = r.handle();
    run_to_end(r, &lw).await;
    assert!(store.ops().is_empty());
    assert_eq!(handle.last_sync_resource_version(), "");
    // The stream ended before its initial events did: a new watch-list request (after a
    // backoff step).
    let requests = lw.timed_requests();
    assert_eq!(
        without_timeouts(requests.iter().map(|(_, r)| r.clone()).collect()),
        [
            Request::Watch(watch_list_params("")),
            Request::Watch(watch_list_params("")),
        ]
    );
    assert!(in_range(requests[1].0 - requests[0].0, 800));

    let lw = ScriptedLw::new();
    lw.push_watch(WatchScript::Stream(
        vec![added("p1", "1"), end_bookmark("2")],
        End::Never,
    ));
    let store = RecordingStore::new();
    let (handle, task) = spawn(new_reflector(&lw, &store), &lw);
    store.wait_for_ops(1).await;
    assert_eq!(store.replaces(), [(vec![k("p1", "1")], "2".to_string())]);
    assert_eq!(handle.last_sync_resource_version(), "2");
    lw.cancel.cancel();
    task.await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn retries_429() {
    let lw = ScriptedLw::new();
    lw.push_watch(WatchScript::Fail(too_many()));
    lw.push_watch(WatchScript::Fail(too_many()));
    lw.push_watch(WatchScript::Stream(
        vec![added("p1", "1"), end_bookmark("2")],
        End::Never,
    ));
    let store = RecordingStore::new();
    let (_, task) = spawn(new_reflector(&lw, &store), &lw);
    store.wait_for_ops(1).await;
    let requests = lw.timed_requests();
    assert_eq!(
        without_timeouts(requests.iter().map(|(_, r)| r.clone()).collect()),
        vec![Request::Watch(watch_list_params("")); 3]
    );
    assert!(in_range(requests[1].0 - requests[0].0, 800));
    assert!(in_range(requests[2].0 - requests[1].0, 1600));
    assert_eq!(store.replaces(), [(vec![k("p1", "1")], "2".to_string())]);
    lw.cancel.cancel();
    task.await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn stopping_before_sync_starts_a_new_watch_list() {
    let lw = ScriptedLw::new();
    lw.push_watch(WatchScript::Stream(vec![added("p1", "1")], End::Now));
    lw.push_watch(WatchScript::Stream(
        vec![added("p1", "1"), end_bookmark("1")],
        End::Never,
    ));
    let store = RecordingStore::new();
    let (_, task) = spawn(new_reflector(&lw, &store), &lw);
    store.wait_for_ops(1).await;
    assert_eq!(lw.watch_requests().len(), 2);
    assert!(lw.list_requests().is_empty());
    assert_eq!(store.items(), [k("p1", "1")]);
    lw.cancel.cancel();
    task.await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn expired_established_watch_relists_with_a_watch_list_at_the_last_rv() {
    // "expiring an established watcher results in returning an error from the reflector", then
    // the relist's watch-list at the last RV expires too and retries at once from "".
    let lw = ScriptedLw::new();
    lw.push_watch(WatchScript::Stream(
        vec![added("p1", "1"), end_bookmark("2"), added("p3", "3")],
        End::After(Duration::from_secs(300)),
    ));
    lw.push_watch(WatchScript::Fail(expired()));
    lw.push_watch(WatchScript::Fail(expired()));
    let store = RecordingStore::new();
    run_to_end(new_reflector(&lw, &store), &lw).await;
    assert_eq!(
        without_timeouts(lw.requests()),
        [
            Request::Watch(watch_list_params("")),
            Request::Watch(watch_params("3")),
            Request::Watch(watch_list_params("3")),
            Request::Watch(watch_list_params("")),
        ]
    );
    assert_eq!(store.items(), [k("p1", "1"), k("p3", "3")]);
}

#[tokio::test(start_paused = true)]
async fn missing_end_bookmark_falls_back_to_list_after_the_bounded_wait_and_is_remembered() {
    // "prove that the reflector is checking the value of the initialEventsEnd annotation": a
    // bookmark without the annotation does not end the initial events. client-go would wait
    // forever (kubernetes#140890); kcache lists after `watch_list_end_timeout`.
    let lw = ScriptedLw::new();
    lw.push_watch(WatchScript::Stream(
        vec![added("p1", "1"), added("p2", "2"), bookmark("2")],
        End::Never,
    ));
    lw.push_list(list("2", vec![pod("p1", "1"), pod("p2", "2")]));
    lw.push_watch(WatchScript::Fail(api(500, "InternalError")));
    let store = RecordingStore::new();
    run_to_end(new_reflector(&lw, &store), &lw).await;
    let requests = lw.timed_requests();
    assert_eq!(
        without_timeouts(requests.iter().map(|(_, r)| r.clone()).collect()),
        [
            Request::Watch(watch_list_params("")),
            Request::List(list_params("0", Some(500))),
            Request::Watch(watch_params("2")),
            // The relist remembers that this server does not end its initial events.
            Request::List(list_params("2", None)),
        ]
    );
    assert_eq!(requests[1].0 - requests[0].0, Duration::from_secs(60));
    assert_eq!(store.replaces().len(), 1);
}

#[tokio::test(start_paused = true)]
async fn bounded_wait_is_configurable() {
    let lw = ScriptedLw::new();
    lw.push_watch(WatchScript::Stream(vec![added("p1", "1")], End::Never));
    let store = RecordingStore::new();
    let r = Reflector::new(
        lw.clone(),
        store.clone(),
        ReflectorOptions {
            watch_list_end_timeout: Duration::from_secs(5),
            ..options(true)
        },
    );
    run_to_end(r, &lw).await;
    let requests = lw.timed_requests();
    assert!(matches!(requests[1].1, Request::List(_)));
    assert_eq!(requests[1].0 - requests[0].0, Duration::from_secs(5));
}

#[tokio::test(start_paused = true)]
async fn invalid_falls_back_to_list_and_is_remembered() {
    // "the reflector can fall back to old LIST/WATCH semantics when a server doesn't support
    // streaming".
    for (code, reason) in [
        (422, "Invalid"),
        (400, "BadRequest"),
        (405, "MethodNotAllowed"),
    ] {
        let lw = ScriptedLw::new();
        lw.push_watch(WatchScript::Fail(api(code, reason)));
        lw.push_list(list("1", vec![pod("p1", "1")]));
        lw.push_watch(WatchScript::Stream(
            vec![added("p2", "2"), error_event(500, "InternalError")],
            End::Now,
        ));
        let store = RecordingStore::new();
        run_to_end(new_reflector(&lw, &store), &lw).await;
        assert_eq!(
            without_timeouts(lw.requests()),
            [
                Request::Watch(watch_list_params("")),
                Request::List(list_params("0", Some(500))),
                Request::Watch(watch_params("1")),
                Request::List(list_params("2", None)),
            ],
            "{code}"
        );
        assert_eq!(store.items(), [k("p1", "1"), k("p2", "2")]);
    }
}

#[tokio::test(start_paused = true)]
async fn other_errors_fall_back_for_one_pass_only() {
    // "returning any other error than apierrors.NewInvalid forces fallback".
    let lw = ScriptedLw::new();
    lw.push_watch(WatchScript::Fail(api(500, "InternalError")));
    lw.push_list(list("1", vec![pod("p1", "1")]));
    lw.push_watch(WatchScript::Fail(api(500, "InternalError")));
    let store = RecordingStore::new();
    run_to_end(new_reflector(&lw, &store), &lw).await;
    assert_eq!(
        without_timeouts(lw.requests()),
        [
            Request::Watch(watch_list_params("")),
            Request::List(list_params("0", Some(500))),
            Request::Watch(watch_params("1")),
            Request::Watch(watch_list_params("1")),
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn disabled_uses_list_and_watch() {
    // "the reflector uses the old LIST/WATCH semantics if the UseWatchList is turned off".
    let lw = ScriptedLw::new();
    lw.push_list(list("1", vec![pod("p1", "1")]));
    let store = RecordingStore::new();
    run_to_end(
        Reflector::new(lw.clone(), store.clone(), options(false)),
        &lw,
    )
    .await;
    assert_eq!(
        without_timeouts(lw.requests()),
        [
            Request::List(list_params("0", Some(500))),
            Request::Watch(watch_params("1")),
        ]
    );
    assert_eq!(store.items(), [k("p1", "1")]);
}
