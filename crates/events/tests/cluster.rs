//! Against kcache-testserver (TLS + token), or the real cluster named by
//! KCACHE_TEST_KUBECONFIG: a recorded event appears as events.k8s.io/v1, repeats become a
//! series the server accepts, field selectors find it, and the core/v1 path writes events the
//! server's legacy validation accepts. Every wait is a liveness guard on a condition.

use std::time::Duration;

use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use kcache_core::Error;
use kcache_events::{
    BroadcasterOptions, CoreEvent, Event, EventApi, EventBroadcaster, EventClient, EventType,
    ObjectReference,
};
use kcache_testing::TestCluster;
use kcache_transport::{Api, Client, Config, PostParams};
use serde_json::Value;

const LIMIT: Duration = Duration::from_secs(20);

async fn setup(prefix: &str) -> (TestCluster, String, Client) {
    let cluster = TestCluster::start().await.unwrap();
    let ns = cluster.create_namespace(prefix).await.unwrap();
    let mut config = Config::from_kubeconfig_file(cluster.kubeconfig_path()).unwrap();
    config.qps = 0.0;
    let client = Client::new(config).unwrap();
    (cluster, ns, client)
}

/// A ConfigMap to hang events on (a real object with a uid).
async fn config_map(client: &Client, ns: &str, name: &str) -> ObjectReference {
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some(name.into());
    let cm = Api::<ConfigMap>::namespaced(client.clone(), ns)
        .create(&PostParams::default(), &cm)
        .await
        .unwrap();
    ObjectReference::of(&cm)
}

async fn list(cluster: &TestCluster, path: &str) -> Vec<Value> {
    let resp = cluster.client().get(path).await.unwrap();
    assert_eq!(resp.status, 200, "{path}: {}", resp.body);
    resp.body["items"].as_array().cloned().unwrap_or_default()
}

async fn wait_for(what: &str, mut cond: impl AsyncFnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + LIMIT;
    while !cond().await {
        assert!(tokio::time::Instant::now() < deadline, "timed out: {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn a_recorded_event_appears_and_repeats_become_a_series() {
    let (cluster, ns, client) = setup("events").await;
    let cm = config_map(&client, &ns, "watched").await;
    let b = EventBroadcaster::start(client.clone(), BroadcasterOptions::default());
    let r = b.new_recorder("kcache-events-test").unwrap();
    for _ in 0..3 {
        r.eventf(
            &cm,
            None,
            EventType::Normal,
            "Synced",
            "Reconcile",
            "synced successfully",
        );
    }
    r.eventf(
        &cm,
        None,
        EventType::Warning,
        "ErrResourceExists",
        "Reconcile",
        format_args!(
            "Resource {:?} already exists and is not managed by Foo",
            "x"
        ),
    );
    let path = format!(
        "/apis/events.k8s.io/v1/namespaces/{ns}/events?fieldSelector=regarding.name%3Dwatched,reason%3DSynced"
    );
    wait_for("a Synced series of 2", async || {
        let items = list(&cluster, &path).await;
        items.len() == 1 && items[0]["series"]["count"] == 2
    })
    .await;
    assert_eq!(b.api(), Some(EventApi::EventsV1));
    let e: Event = serde_json::from_value(list(&cluster, &path).await.remove(0)).unwrap();
    assert_eq!(e.regarding, cm);
    assert_eq!(e.reporting_controller, "kcache-events-test");
    assert_eq!(e.note, "synced successfully");
    b.shutdown().await;
    // the shutdown wrote the third occurrence
    let e: Event = serde_json::from_value(list(&cluster, &path).await.remove(0)).unwrap();
    assert_eq!(e.series.unwrap().count, 3);
    let warnings = list(
        &cluster,
        &format!("/apis/events.k8s.io/v1/namespaces/{ns}/events?fieldSelector=type%3DWarning"),
    )
    .await;
    assert_eq!(warnings.len(), 1);
    assert_eq!(
        warnings[0]["note"],
        "Resource \"x\" already exists and is not managed by Foo"
    );
    // create, start the series, the warning, the final count at shutdown
    let s = b.stats();
    assert_eq!((s.written, s.failed, s.dropped), (4, 0, 0), "{s:?}");
    assert_eq!(s.series_counted, 1);
}

/// The transport's client, made to report events.k8s.io/v1 as not served: drives the core/v1
/// path against a server that has it (both the embedded and the real one serve both).
struct CoreOnly(Client);

impl EventClient for CoreOnly {
    async fn serves_events_v1(&self) -> Result<bool, Error> {
        assert!(self.0.serves_events_v1().await?, "the server serves it");
        Ok(false)
    }
    async fn create_event(&self, e: &Event) -> Result<Event, Error> {
        self.0.create_event(e).await
    }
    async fn patch_event(&self, ns: &str, name: &str, p: &Value) -> Result<Event, Error> {
        self.0.patch_event(ns, name, p).await
    }
    async fn create_core_event(&self, e: &CoreEvent) -> Result<CoreEvent, Error> {
        self.0.create_core_event(e).await
    }
    async fn patch_core_event(&self, ns: &str, name: &str, p: &Value) -> Result<CoreEvent, Error> {
        self.0.patch_core_event(ns, name, p).await
    }
}

#[tokio::test]
async fn the_core_v1_fallback_writes_counted_events() {
    let (cluster, ns, client) = setup("core-events").await;
    let cm = config_map(&client, &ns, "watched").await;
    let b = EventBroadcaster::start(CoreOnly(client), BroadcasterOptions::default());
    let r = b.new_recorder("kcache-events-test").unwrap();
    for _ in 0..3 {
        r.eventf(
            &cm,
            None,
            EventType::Normal,
            "Synced",
            "Reconcile",
            "synced successfully",
        );
    }
    let path = format!(
        "/api/v1/namespaces/{ns}/events?fieldSelector=involvedObject.name%3Dwatched,reason%3DSynced"
    );
    wait_for("a core/v1 event counted 3 times", async || {
        let items = list(&cluster, &path).await;
        items.len() == 1 && items[0]["count"] == 3
    })
    .await;
    assert_eq!(b.api(), Some(EventApi::CoreV1));
    let e: CoreEvent = serde_json::from_value(list(&cluster, &path).await.remove(0)).unwrap();
    assert_eq!(e.involved_object, cm);
    assert_eq!(e.source.component, "kcache-events-test");
    assert_eq!(e.message, "synced successfully");
    b.shutdown().await;
    assert_eq!(b.stats().failed, 0);
}

#[tokio::test]
async fn events_about_a_cluster_scoped_object_are_accepted_in_both_apis() {
    // kube-apiserver 1.20.2 takes such an events.k8s.io/v1 event only in kube-system, and a
    // core/v1 one only in default (or no namespace).
    let (cluster, ns, client) = setup("cluster-scoped").await;
    let namespace = Api::<Namespace>::all(client.clone())
        .get(&ns)
        .await
        .unwrap();
    let regarding = ObjectReference::of(&namespace);
    let v1 = EventBroadcaster::start(client.clone(), BroadcasterOptions::default());
    let core = EventBroadcaster::start(CoreOnly(client), BroadcasterOptions::default());
    for b in [&v1, &core] {
        let r = b.new_recorder("kcache-events-test").unwrap();
        r.eventf(
            &regarding,
            None,
            EventType::Normal,
            "Observed",
            "Reconcile",
            "namespace observed",
        );
    }
    let paths = [
        format!("/apis/events.k8s.io/v1/namespaces/kube-system/events?fieldSelector=regarding.name%3D{ns}"),
        format!("/api/v1/namespaces/default/events?fieldSelector=involvedObject.name%3D{ns}"),
    ];
    for path in &paths {
        wait_for(path, async || list(&cluster, path).await.len() == 1).await;
    }
    for b in [v1, core] {
        b.shutdown().await;
        assert_eq!(b.stats().failed, 0, "{:?}", b.api());
    }
}
