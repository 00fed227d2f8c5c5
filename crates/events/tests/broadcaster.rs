//! The broadcaster end to end over the in-memory client, on paused tokio time: what is written,
//! series and their end and refresh, the core/v1 fallback with counting and aggregation, the
//! spam filter, limits, the bounded queue, retries and shutdown.

use std::time::Duration;

use kcache_core::{Error, Status};
use kcache_events::{
    BroadcasterOptions, BroadcasterStats, EventApi, EventBroadcaster, EventRecorder, EventType,
    EventsError, MemoryEventClient, ObjectReference, WriteRetry, AGGREGATE_MESSAGE_PREFIX,
};

fn foo(name: &str) -> ObjectReference {
    ObjectReference {
        api_version: "samplecontroller.k8s.io/v1alpha1".into(),
        kind: "Foo".into(),
        namespace: "ns".into(),
        name: name.into(),
        uid: format!("uid-{name}"),
        resource_version: "1".into(),
        field_path: String::new(),
    }
}

fn start(client: &MemoryEventClient) -> (EventBroadcaster, EventRecorder) {
    start_with(client, BroadcasterOptions::default())
}

fn start_with(
    client: &MemoryEventClient,
    options: BroadcasterOptions,
) -> (EventBroadcaster, EventRecorder) {
    let b = EventBroadcaster::start(client.clone(), options);
    let r = b
        .new_recorder_with_instance("sample-controller", "sample-controller-host1")
        .unwrap();
    (b, r)
}

/// Lets the writer task run (paused time advances only when every task is idle) until
/// `done` holds; panics after an hour of virtual time.
async fn settle(b: &EventBroadcaster, done: impl Fn(&BroadcasterStats) -> bool) {
    for _ in 0..3_600_000 {
        if done(&b.stats()) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    panic!("not settled: {:?}", b.stats());
}

async fn handled(b: &EventBroadcaster, n: u64) {
    settle(b, |s| s.handled() >= n).await;
}

/// A cluster-scoped object.
fn node(name: &str) -> ObjectReference {
    ObjectReference {
        api_version: "v1".into(),
        kind: "Node".into(),
        name: name.into(),
        ..Default::default()
    }
}

fn synced(r: &EventRecorder, obj: &ObjectReference) {
    r.eventf(
        obj,
        None,
        EventType::Normal,
        "Synced",
        "Reconcile",
        "Foo synced successfully",
    );
}

#[tokio::test(start_paused = true)]
async fn a_recorded_event_is_created_as_events_k8s_io_v1() {
    let client = MemoryEventClient::new();
    let (b, r) = start(&client);
    let node = node("n1");
    let related = foo("other");
    r.eventf(
        &foo("a"),
        Some(&related),
        EventType::Warning,
        "ErrResourceExists",
        "Reconcile",
        format_args!(
            "Resource {:?} already exists and is not managed by Foo",
            "d"
        ),
    );
    synced(&r, &node);
    handled(&b, 2).await;
    assert_eq!(b.api(), Some(EventApi::EventsV1));
    let events = client.events();
    assert_eq!(events.len(), 2);
    let e = events.iter().find(|e| e.regarding.name == "a").unwrap();
    assert_eq!(e.metadata.namespace.as_deref(), Some("ns"));
    assert!(e.metadata.name.starts_with("a."), "{}", e.metadata.name);
    assert_eq!(e.type_, "Warning");
    assert_eq!(
        (e.reason.as_str(), e.action.as_str()),
        ("ErrResourceExists", "Reconcile")
    );
    assert_eq!(
        e.note,
        "Resource \"d\" already exists and is not managed by Foo"
    );
    assert_eq!(e.reporting_controller, "sample-controller");
    assert_eq!(e.reporting_instance, "sample-controller-host1");
    assert_eq!(e.related.as_ref(), Some(&related));
    assert!(e.series.is_none());
    // RFC 3339 with microseconds, UTC
    assert_eq!(e.event_time.len(), "2024-01-01T00:00:00.000000Z".len());
    assert!(e.event_time.ends_with('Z') && e.event_time.contains('.'));
    let n = events.iter().find(|e| e.regarding.name == "n1").unwrap();
    assert_eq!(
        n.metadata.namespace.as_deref(),
        Some("kube-system"),
        "a cluster-scoped object's events go to kube-system"
    );
    assert_eq!(b.stats().written, 2);
}

#[tokio::test(start_paused = true)]
async fn repeats_become_a_series_finished_after_six_minutes() {
    let client = MemoryEventClient::new();
    let (b, r) = start(&client);
    let a = foo("a");
    synced(&r, &a);
    handled(&b, 1).await;
    let first = client.events().pop().unwrap();
    synced(&r, &a);
    handled(&b, 2).await;
    let e = client.events().pop().unwrap();
    assert_eq!(e.metadata.name, first.metadata.name);
    assert_eq!(e.series.as_ref().map(|s| s.count), Some(2));
    for _ in 0..3 {
        synced(&r, &a);
    }
    handled(&b, 5).await;
    assert_eq!(
        b.stats().series_counted,
        3,
        "counted in memory, not written"
    );
    assert_eq!(client.events()[0].series.as_ref().unwrap().count, 2);
    assert_eq!(client.requests().len(), 2);

    // six minutes without a repeat end the series: its final count is written
    tokio::time::sleep(Duration::from_secs(2 * 6 * 60 + 1)).await;
    settle(&b, |s| s.written >= 3).await;
    let e = client.events().pop().unwrap();
    assert_eq!(e.series.as_ref().unwrap().count, 5);
    assert!(e.series.unwrap().last_observed_time >= e.event_time);
    // the next one starts a new event
    synced(&r, &a);
    settle(&b, |s| s.written >= 4).await;
    assert_eq!(client.events().len(), 2);
    b.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn open_series_are_refreshed_every_thirty_minutes() {
    let client = MemoryEventClient::new();
    let (b, r) = start(&client);
    let a = foo("a");
    // a repeat every 5 minutes keeps the series open
    for _ in 0..8 {
        synced(&r, &a);
        tokio::time::sleep(Duration::from_secs(5 * 60)).await;
    }
    // 40 minutes: created, series started, one refresh at 30 minutes
    handled(&b, 8).await;
    let patches = client
        .requests()
        .iter()
        .filter(|r| r.starts_with("patch"))
        .count();
    assert_eq!(patches, 2, "{:?}", client.requests());
    assert!(client.events()[0].series.as_ref().unwrap().count >= 7);
    b.shutdown().await;
    assert_eq!(client.events()[0].series.as_ref().unwrap().count, 8);
}

#[tokio::test(start_paused = true)]
async fn different_notes_are_one_series_but_other_reasons_are_not() {
    let client = MemoryEventClient::new();
    let (b, r) = start(&client);
    let a = foo("a");
    for note in ["one", "two"] {
        r.eventf(&a, None, EventType::Normal, "Synced", "Reconcile", note);
    }
    r.eventf(&a, None, EventType::Normal, "Scaled", "Reconcile", "x");
    r.eventf(&a, None, EventType::Normal, "Synced", "Delete", "x");
    r.eventf(
        &foo("b"),
        None,
        EventType::Normal,
        "Synced",
        "Reconcile",
        "x",
    );
    handled(&b, 5).await;
    let events = client.events();
    assert_eq!(events.len(), 4);
    let series: Vec<_> = events.iter().filter(|e| e.series.is_some()).collect();
    assert_eq!(series.len(), 1);
    assert_eq!(series[0].note, "one", "a series keeps its first note");
}

#[tokio::test(start_paused = true)]
async fn a_series_whose_event_is_gone_is_created_again() {
    let client = MemoryEventClient::new();
    let (b, r) = start(&client);
    let a = foo("a");
    synced(&r, &a);
    handled(&b, 1).await;
    let first = client.events().pop().unwrap();
    client.delete(EventApi::EventsV1, "ns", &first.metadata.name);
    synced(&r, &a);
    handled(&b, 2).await;
    let e = client.events().pop().unwrap();
    assert_eq!(e.metadata.name, first.metadata.name);
    assert_eq!(e.series.unwrap().count, 2);
    let reqs = client.requests();
    assert!(reqs[1].starts_with("patch") && reqs[2].starts_with("create"));
}

#[tokio::test(start_paused = true)]
async fn a_cluster_scoped_objects_core_v1_event_goes_to_default() {
    // The legacy rules (no eventTime) take "" or `default` for it, not `kube-system`.
    let client = MemoryEventClient::without_events_v1();
    let (b, r) = start(&client);
    let node = node("n1");
    synced(&r, &node);
    handled(&b, 1).await;
    let core = client.core_events();
    assert_eq!(core[0].metadata.namespace.as_deref(), Some("default"));
}

#[tokio::test(start_paused = true)]
async fn falls_back_to_core_v1_where_events_k8s_io_is_not_served() {
    let client = MemoryEventClient::without_events_v1();
    let (b, r) = start(&client);
    let a = foo("a");
    for _ in 0..3 {
        synced(&r, &a);
    }
    handled(&b, 3).await;
    assert_eq!(b.api(), Some(EventApi::CoreV1));
    assert!(client.events().is_empty());
    let core = client.core_events();
    assert_eq!(core.len(), 1);
    let e = &core[0];
    assert_eq!(e.count, 3, "identical events count");
    assert_eq!(e.involved_object, a);
    assert_eq!(e.message, "Foo synced successfully");
    assert_eq!(e.source.component, "sample-controller");
    assert_eq!((e.reason.as_str(), e.type_.as_str()), ("Synced", "Normal"));
    assert!(e.first_timestamp.is_some() && e.last_timestamp.is_some());
    assert_eq!(
        client
            .requests()
            .iter()
            .filter(|r| r.starts_with("patch v1"))
            .count(),
        2
    );

    // more than 10 different messages with one reason within 10 minutes are combined
    for i in 0..12 {
        r.eventf(
            &a,
            None,
            EventType::Warning,
            "Failed",
            "Reconcile",
            format_args!("try {i}"),
        );
    }
    handled(&b, 15).await;
    let combined: Vec<_> = client
        .core_events()
        .into_iter()
        .filter(|e| e.message.starts_with(AGGREGATE_MESSAGE_PREFIX))
        .collect();
    assert_eq!(combined.len(), 1);
    assert_eq!(combined[0].count, 3);
    assert_eq!(
        combined[0].message,
        format!("{AGGREGATE_MESSAGE_PREFIX}try 11")
    );
}

#[tokio::test(start_paused = true)]
async fn spam_is_filtered_per_object_and_refills_one_per_five_minutes() {
    let client = MemoryEventClient::new();
    let (b, r) = start(&client);
    let a = foo("a");
    for i in 0..30 {
        r.eventf(
            &a,
            None,
            EventType::Normal,
            &format!("R{i}"),
            "Reconcile",
            "x",
        );
    }
    r.eventf(&foo("b"), None, EventType::Normal, "R", "Reconcile", "x");
    handled(&b, 31).await;
    assert_eq!(b.stats().filtered, 5);
    assert_eq!(client.events().len(), 26);
    tokio::time::sleep(Duration::from_secs(300)).await;
    r.eventf(&a, None, EventType::Normal, "Later", "Reconcile", "x");
    r.eventf(&a, None, EventType::Normal, "Later2", "Reconcile", "x");
    handled(&b, 33).await;
    assert_eq!(b.stats().filtered, 6);
    assert_eq!(client.events().len(), 27);
}

#[tokio::test(start_paused = true)]
async fn fields_are_cut_to_what_the_server_accepts() {
    let client = MemoryEventClient::new();
    let (b, r) = start(&client);
    let long_reason = "R".repeat(200);
    let long_action = "A".repeat(129);
    r.eventf(
        &foo("a"),
        None,
        EventType::Normal,
        &long_reason,
        &long_action,
        "é".repeat(600),
    );
    r.eventf(&foo("a"), None, EventType::Normal, "", "Reconcile", "x");
    r.eventf(&foo("a"), None, EventType::Normal, "Synced", "", "x");
    r.eventf(
        &foo(""),
        None,
        EventType::Normal,
        "Synced",
        "Reconcile",
        "x",
    );
    handled(&b, 1).await;
    let e = client.events().pop().unwrap();
    assert_eq!(e.reason.len(), 128);
    assert_eq!(e.action.len(), 128);
    assert_eq!(e.note.len(), 1024);
    assert_eq!(b.stats().invalid, 3);
    assert_eq!(b.stats().recorded, 1);
}

#[tokio::test(start_paused = true)]
async fn a_full_queue_drops_without_blocking() {
    let client = MemoryEventClient::new();
    let options = BroadcasterOptions {
        queue_capacity: 3,
        ..BroadcasterOptions::default()
    };
    let (b, r) = start_with(&client, options);
    // the writer task has not run yet: nothing leaves the queue
    for i in 0..5 {
        r.eventf(
            &foo(&format!("o{i}")),
            None,
            EventType::Normal,
            "Synced",
            "Reconcile",
            "x",
        );
    }
    let s = b.stats();
    assert_eq!((s.recorded, s.dropped), (3, 2));
    handled(&b, 3).await;
    assert_eq!(client.events().len(), 3);
}

#[tokio::test(start_paused = true)]
async fn transport_errors_are_retried_and_server_rejections_are_not() {
    let client = MemoryEventClient::new();
    let (b, r) = start(&client);
    client.fail_next([
        Error::Connect("connection refused".into()),
        Error::Connect("connection refused".into()),
    ]);
    synced(&r, &foo("a"));
    handled(&b, 1).await;
    assert_eq!(b.stats().written, 1);
    assert_eq!(client.requests().len(), 3);

    client.fail_next([Error::from(Status::failure(422, "Invalid", "bad event"))]);
    synced(&r, &foo("b"));
    handled(&b, 2).await;
    assert_eq!(b.stats().failed, 1);
    assert_eq!(client.requests().len(), 4, "a Status is final");

    let options = BroadcasterOptions {
        retry: WriteRetry {
            max_tries: 3,
            sleep: Duration::from_secs(10),
        },
        ..BroadcasterOptions::default()
    };
    let client = MemoryEventClient::new();
    let (b, r) = start_with(&client, options);
    client.fail_next((0..5).map(|_| Error::Connect("down".into())));
    synced(&r, &foo("c"));
    handled(&b, 1).await;
    assert_eq!((b.stats().failed, client.requests().len()), (1, 3));
}

#[tokio::test(start_paused = true)]
async fn shutdown_writes_what_is_queued_and_then_drops() {
    let client = MemoryEventClient::new();
    let (b, r) = start(&client);
    let a = foo("a");
    for _ in 0..4 {
        synced(&r, &a);
    }
    b.shutdown().await;
    let e = client.events().pop().unwrap();
    assert_eq!(e.series.unwrap().count, 4);
    synced(&r, &a);
    assert_eq!(b.stats().dropped, 1);
}

#[tokio::test]
async fn a_recorder_needs_a_valid_reporting_controller() {
    let b = EventBroadcaster::start(MemoryEventClient::new(), BroadcasterOptions::default());
    let e = b.new_recorder("Not A Name").unwrap_err();
    assert!(
        matches!(&e, EventsError::ReportingController { controller, .. } if controller == "Not A Name")
    );
    assert!(
        e.to_string().contains("invalid reporting controller"),
        "{e}"
    );
    assert_eq!(
        b.new_recorder_with_instance("ctl", "").unwrap_err(),
        EventsError::EmptyInstance
    );
    let r = b.new_recorder("example.com/foo-controller").unwrap();
    assert!(r
        .reporting_instance()
        .starts_with("example.com/foo-controller-"));
    let long = b
        .new_recorder_with_instance("ctl", &"i".repeat(300))
        .unwrap();
    assert_eq!(long.reporting_instance().len(), 128);
}
