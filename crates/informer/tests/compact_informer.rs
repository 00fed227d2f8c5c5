//! Both storage modes — the plain `SharedIndexInformer<K>` and the `CompactInformer<K>` — give
//! handlers and reads the same typed objects, and both reject a watch event whose object does not
//! decode as `K` or exceeds the size limit, with an error naming the object, leaving the cache as
//! it was.

use crate::support;

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures_util::StreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kcache_compact::Compact;
use kcache_core::{Error, ListParams, ListerWatcher, Object, ObjectList, WatchParams, WatchStream};
use kcache_informer::{
    same_at, typed_index, CompactInformer, FactoryOptions, InformerOptions, LazyTyped,
    ResourceEventHandlerFuncs, SharedIndexInformer, SharedInformerFactory,
};
use kcache_reflector::WatchListMode;
use kcache_store::{IndexValues, Indexers};
use kcache_testing::{TestCluster, ROOT_CA_CONFIGMAP};
use kcache_transport::decode::WatchEventStream;
use kcache_transport::Api;
use parking_lot::Mutex;
use serde::de::DeserializeOwned;
use serde_json::json;
use tokio_util::sync::CancellationToken;

/// The size limit of the scripted watch bodies.
const LIMIT: usize = 4096;

fn cm(name: &str, rv: u32, data: serde_json::Value) -> serde_json::Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "ns", "resourceVersion": rv.to_string(),
            "labels": {"app": "web"}},
        "data": data, "unknownField": {"dropped": true}})
}

fn event(type_: &str, obj: serde_json::Value) -> String {
    json!({"type": type_, "object": obj}).to_string()
}

/// Lists a fixed list; each watch decodes the next scripted body with the transport's watch
/// decoder (limit [`LIMIT`]) and records the errors it hands the reflector.
struct Scripted {
    list: String,
    bodies: Mutex<Vec<String>>,
    errors: Arc<Mutex<Vec<String>>>,
}

impl<K: DeserializeOwned + Send + 'static> ListerWatcher<K> for Scripted {
    async fn list(&self, _: &ListParams) -> Result<ObjectList<K>, Error> {
        serde_json::from_str(&self.list).map_err(|e| Error::decode("list", e))
    }

    async fn watch(&self, _: &WatchParams) -> Result<WatchStream<K>, Error> {
        let mut bodies = self.bodies.lock();
        if bodies.is_empty() {
            return Ok(Box::pin(futures_util::stream::pending()));
        }
        let body = bodies.remove(0);
        let chunks = futures_util::stream::iter([Ok::<_, std::io::Error>(Bytes::from(body))]);
        let errors = self.errors.clone();
        let events = WatchEventStream::<_, K>::new(chunks, LIMIT).inspect(move |item| {
            if let Err(e) = item {
                errors.lock().push(e.to_string());
            }
        });
        Ok(Box::pin(events))
    }
}

/// One list, then a watch with: a malformed update of `a`, a good update of `a`, an oversized
/// update of `a` (which ends that watch), then a second watch adding `b`.
fn script() -> (Scripted, Arc<Mutex<Vec<String>>>) {
    let list = json!({"metadata": {"resourceVersion": "10"},
        "items": [cm("a", 10, json!({"k": "v1", "empty": ""}))]});
    let first = [
        event("MODIFIED", cm("a", 11, json!({"k": 1}))),
        event("MODIFIED", cm("a", 12, json!({"k": "v2"}))),
        // As the API server writes it: metadata before data.
        format!(
            r#"{{"type":"MODIFIED","object":{{"kind":"ConfigMap","apiVersion":"v1","metadata":{{"name":"a","namespace":"ns","resourceVersion":"13"}},"data":{{"k":"{}"}}}}}}"#,
            "x".repeat(2 * LIMIT)
        ),
    ]
    .concat();
    let second = event("ADDED", cm("b", 14, json!({})));
    let errors = Arc::new(Mutex::new(Vec::new()));
    let source = Scripted {
        list: list.to_string(),
        bodies: Mutex::new(vec![first, second]),
        errors: errors.clone(),
    };
    (source, errors)
}

fn options() -> InformerOptions {
    let mut o = InformerOptions::named("scripted");
    o.reflector.watch_list = WatchListMode::Disabled;
    o
}

/// What handlers saw: (event, name, data) in order.
type Seen = Arc<Mutex<Vec<(&'static str, String, Option<String>)>>>;

fn recorder(seen: &Seen) -> ResourceEventHandlerFuncs<ConfigMap> {
    let data = |c: &ConfigMap| format!("{:?}", c.data);
    let (a, u) = (seen.clone(), seen.clone());
    ResourceEventHandlerFuncs::new()
        .on_add(move |o: &Arc<ConfigMap>, _| {
            a.lock().push(("add", o.name().to_string(), Some(data(o))))
        })
        .on_update(move |_, n: &Arc<ConfigMap>| {
            u.lock()
                .push(("update", n.name().to_string(), Some(data(n))))
        })
}

/// Runs until `b` is cached, then returns what the handler saw, the cached `a` and `b`, and the
/// decode errors.
async fn run_plain() -> (
    Vec<(&'static str, String, Option<String>)>,
    ConfigMap,
    ConfigMap,
    Vec<String>,
) {
    let (source, errors) = script();
    let informer = SharedIndexInformer::<ConfigMap>::new(source, Indexers::new(), options());
    let seen = Seen::default();
    informer.add_event_handler(recorder(&seen)).unwrap();
    let cancel = CancellationToken::new();
    let run = tokio::spawn({
        let (i, c) = (informer.clone(), cancel.clone());
        async move { i.run(c).await }
    });
    let b = wait_for(|| informer.indexer().get_by_key("ns/b")).await;
    wait_for(|| (seen.lock().len() == 3).then_some(())).await;
    let a = informer.indexer().get_by_key("ns/a").unwrap();
    cancel.cancel();
    run.await.unwrap().unwrap();
    let seen = seen.lock().clone();
    let errors = errors.lock().clone();
    (seen, (*a).clone(), (*b).clone(), errors)
}

async fn run_compact() -> (
    Vec<(&'static str, String, Option<String>)>,
    ConfigMap,
    ConfigMap,
    Vec<String>,
) {
    let (source, errors) = script();
    let by_first_key = typed_index(|c: &ConfigMap| {
        let first = c.data.as_ref().and_then(|d| d.keys().next().cloned());
        Ok(IndexValues::one(first.unwrap_or_default()))
    });
    let informer = CompactInformer::<ConfigMap>::new(
        source,
        Indexers::new().with_reuse("key", by_first_key, same_at(&[&["data"]])),
        options(),
    );
    let seen = Seen::default();
    informer.add_event_handler(recorder(&seen)).unwrap();
    let cancel = CancellationToken::new();
    let run = tokio::spawn({
        let (i, c) = (informer.clone(), cancel.clone());
        async move { i.run(c).await }
    });
    let b = wait_for(|| informer.get_by_key("ns/b")).await;
    wait_for(|| (seen.lock().len() == 3).then_some(())).await;
    let a = informer.get_by_key("ns/a").unwrap();
    let keyed: Vec<String> = informer
        .by_index("key", "k")
        .unwrap()
        .iter()
        .map(|c| c.name().to_string())
        .collect();
    assert_eq!(keyed, ["a"]);
    assert_eq!(informer.list().len(), 2);
    cancel.cancel();
    run.await.unwrap().unwrap();
    let seen = seen.lock().clone();
    let errors = errors.lock().clone();
    (seen, (*a).clone(), (*b).clone(), errors)
}

async fn wait_for<T>(mut f: impl FnMut() -> Option<T>) -> T {
    tokio::time::timeout(Duration::from_secs(20), async {
        loop {
            if let Some(v) = f() {
                return v;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await
    .expect("condition reached")
}

#[tokio::test]
async fn both_modes_reject_bad_events_by_name_and_hand_out_equal_objects() {
    let plain = run_plain().await;
    let compact = run_compact().await;
    for (seen, a, b, errors) in [&plain, &compact] {
        // The malformed and the oversized update were rejected, naming the object; the cache
        // kept the good update before the oversized one.
        assert_eq!(errors.len(), 2, "{errors:?}");
        assert!(
            errors[0].contains(r#""ns/a""#) && errors[0].contains("invalid type"),
            "{errors:?}"
        );
        assert!(
            errors[1].contains(r#""ns/a""#) && errors[1].contains("larger than"),
            "{errors:?}"
        );
        assert_eq!(a.metadata.resource_version.as_deref(), Some("12"));
        assert_eq!(a.data.as_ref().unwrap()["k"], "v2");
        assert_eq!(b.metadata.resource_version.as_deref(), Some("14"));
        let names: Vec<_> = seen.iter().map(|(e, n, _)| (*e, n.as_str())).collect();
        assert_eq!(names, [("add", "a"), ("update", "a"), ("add", "b")]);
    }
    // Same typed values in both modes: handlers' and reads'.
    assert_eq!(plain.0, compact.0);
    assert_eq!(plain.1, compact.1);
    assert_eq!(plain.2, compact.2);
}

/// The factory's compact informer against the embedded server (or `KCACHE_TEST_KUBECONFIG`'s).
#[tokio::test]
async fn the_factory_compact_informer_reads_what_the_server_holds() {
    let cluster = TestCluster::start().await.unwrap();
    let ns = cluster.create_namespace("compact-inf").await.unwrap();
    let client = support::cluster_client(&cluster);
    let api = Api::<ConfigMap>::namespaced(client.clone(), &ns);
    for name in ["a", "b"] {
        let body =
            json!({"metadata": {"name": name, "labels": {"app": name}}, "data": {"k": name}});
        let path = format!("/api/v1/namespaces/{ns}/configmaps");
        assert_eq!(
            cluster.client().post(&path, &body).await.unwrap().status,
            201
        );
    }
    let factory = SharedInformerFactory::new(
        client,
        FactoryOptions {
            namespace: Some(ns.clone()),
            ..FactoryOptions::default()
        },
    );
    let informer = factory.compact_informer::<ConfigMap>();
    let metadata = factory.compact_metadata_informer::<ConfigMap>();
    let (tx, mut updates) = tokio::sync::mpsc::unbounded_channel();
    informer
        .add_event_handler(ResourceEventHandlerFuncs::new().on_update(
            move |_, new: &Arc<ConfigMap>| {
                let _ = tx.send(new.clone());
            },
        ))
        .unwrap();
    // A second caller gets the same compact informer: its handlers share the first's decodes.
    let (tx, mut second_updates) = tokio::sync::mpsc::unbounded_channel();
    factory
        .compact_informer::<ConfigMap>()
        .add_event_handler(ResourceEventHandlerFuncs::new().on_update(
            move |_, new: &Arc<ConfigMap>| {
                let _ = tx.send(new.clone());
            },
        ))
        .unwrap();
    factory.start();
    assert!(factory.wait_for_cache_sync().await.values().all(|s| *s));
    for name in ["a", "b"] {
        let cached = informer
            .get_by_key(&format!("{ns}/{name}"))
            .expect("cached");
        assert_eq!(*cached, api.get(name).await.unwrap());
    }
    let a: Arc<Compact<ConfigMap>> = informer.indexer().get_by_key(&format!("{ns}/a")).unwrap();
    let meta = metadata
        .get_by_key(&format!("{ns}/a"))
        .expect("metadata cached");
    assert_eq!((meta.name(), meta.label("app")), ("a", Some("a")));
    // A full cluster also publishes its root CA into every namespace.
    let ours = |names: Vec<String>| {
        let mut n: Vec<String> = names
            .into_iter()
            .filter(|n| n != ROOT_CA_CONFIGMAP)
            .collect();
        n.sort();
        n
    };
    let names = metadata
        .list()
        .iter()
        .map(|m| m.name().to_string())
        .collect();
    assert_eq!(ours(names), ["a", "b"]);
    assert_eq!(a.get(&["data", "k"]).and_then(|v| v.as_str()), Some("a"));

    let patch = cluster
        .client()
        .patch(
            &format!("/api/v1/namespaces/{ns}/configmaps/b"),
            "application/merge-patch+json",
            &json!({"data": {"k": "changed"}}),
        )
        .await
        .unwrap();
    assert_eq!(patch.status, 200);
    let updated = support::named(&mut updates, "b").await;
    assert_eq!(updated.data.as_ref().unwrap()["k"], "changed");
    let second = support::named(&mut second_updates, "b").await;
    assert!(
        Arc::ptr_eq(&updated, &second),
        "two callers' handlers decoded the update twice"
    );
    assert_eq!(*updated, api.get("b").await.unwrap());
    factory.shutdown().await;
}

/// What a [`collecting`] handler got: every add's object and every update's new object.
type Got<T> = Arc<Mutex<Vec<Arc<T>>>>;

fn collecting<T: Send + Sync + 'static>(got: &Got<T>) -> ResourceEventHandlerFuncs<T> {
    let (a, u) = (got.clone(), got.clone());
    ResourceEventHandlerFuncs::new()
        .on_add(move |o: &Arc<T>, _| a.lock().push(o.clone()))
        .on_update(move |_, n: &Arc<T>| u.lock().push(n.clone()))
}

/// Typed handlers of a compact informer share one decoded copy of each notification's object:
/// three handlers see the very same `Arc<ConfigMap>` for every add and update.
#[tokio::test]
async fn typed_handlers_share_each_notifications_copy() {
    let (source, _errors) = script();
    let informer = CompactInformer::<ConfigMap>::new(source, Indexers::new(), options());
    let got: Vec<Got<ConfigMap>> = (0..3).map(|_| Got::default()).collect();
    for g in &got {
        informer.add_event_handler(collecting(g)).unwrap();
    }
    let cancel = CancellationToken::new();
    let run = tokio::spawn({
        let (i, c) = (informer.clone(), cancel.clone());
        async move { i.run(c).await }
    });
    wait_for(|| got.iter().all(|g| g.lock().len() == 3).then_some(())).await;
    cancel.cancel();
    run.await.unwrap().unwrap();
    let (first, rest) = got.split_first().unwrap();
    let first = first.lock();
    for other in rest {
        for (mine, theirs) in first.iter().zip(other.lock().iter()) {
            assert!(Arc::ptr_eq(mine, theirs), "{} decoded twice", mine.name());
        }
    }
}

/// Lazy handlers get one `LazyTyped` per notification's object, shared with every other handler
/// of the informer: reading its metadata decodes nothing, and when a typed handler is registered
/// too, its decoded copy is the one the lazy handles give.
#[tokio::test]
async fn lazy_handlers_share_one_handle_decoded_only_when_read() {
    for with_typed in [false, true] {
        let (source, _errors) = script();
        let informer = CompactInformer::<ConfigMap>::new(source, Indexers::new(), options());
        let got: Vec<Got<LazyTyped<ConfigMap>>> = (0..2).map(|_| Got::default()).collect();
        for g in &got {
            informer.add_lazy_event_handler(collecting(g)).unwrap();
        }
        let decoded = Got::<ConfigMap>::default();
        if with_typed {
            informer.add_event_handler(collecting(&decoded)).unwrap();
        }
        let cancel = CancellationToken::new();
        let run = tokio::spawn({
            let (i, c) = (informer.clone(), cancel.clone());
            async move { i.run(c).await }
        });
        let len = |g: &Got<_>| g.lock().len();
        wait_for(|| {
            let typed_done = !with_typed || decoded.lock().len() == 3;
            (got.iter().all(|g| len(g) == 3) && typed_done).then_some(())
        })
        .await;
        cancel.cancel();
        run.await.unwrap().unwrap();
        let (first, second) = (got[0].lock(), got[1].lock());
        let names: Vec<_> = first.iter().map(|o| (o.namespace(), o.name())).collect();
        assert_eq!(
            names,
            [(Some("ns"), "a"), (Some("ns"), "a"), (Some("ns"), "b")]
        );
        for (i, (mine, theirs)) in first.iter().zip(second.iter()).enumerate() {
            assert!(Arc::ptr_eq(mine, theirs), "notification {i}: two handles");
            assert_eq!(mine.is_decoded(), with_typed, "notification {i}");
            if with_typed {
                assert!(Arc::ptr_eq(&mine.typed(), &decoded.lock()[i]));
            }
        }
        // The first read decodes, for both handlers' handle.
        assert_eq!(first[1].data.as_ref().unwrap()["k"], "v2");
        assert!(second[1].is_decoded());
        assert_eq!(*first[2].typed(), first[2].compact().to_typed().unwrap());
    }
}
