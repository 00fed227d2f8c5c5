//! SharedInformerFactory: sharing, start-after-start (client-go#675), wait, shutdown.

use crate::support;

use kcache_core::ApiResource;
use kcache_informer::{FactoryOptions, SharedInformerFactory};
use kcache_store::Indexers;
use support::*;

fn resource(plural: &str) -> ApiResource {
    ApiResource {
        group: String::new(),
        version: "v1".into(),
        kind: plural.into(),
        plural: plural.into(),
        namespaced: true,
    }
}

#[tokio::test]
async fn one_informer_per_resource_and_late_informers_need_start() {
    let pods = source();
    pods.add(pod("a"));
    let cms = source();
    cms.add(pod("b"));
    cms.add(pod("c"));
    let factory = SharedInformerFactory::with_options(FactoryOptions::default());
    let first = factory.informer_for(&resource("pods"), Indexers::new, |_| pods.clone());
    let again = factory.informer_for(
        &resource("pods"),
        Indexers::new,
        |_| -> std::sync::Arc<kcache_informer::testing::FakeControllerSource<Pod>> {
            unreachable!("an existing informer is reused")
        },
    );
    assert!(std::ptr::eq(
        first.indexer().as_ref(),
        again.indexer().as_ref()
    ));

    factory.start();
    let synced = factory.wait_for_cache_sync().await;
    assert_eq!(
        synced.into_iter().collect::<Vec<_>>(),
        [("pods.v1".to_string(), true)]
    );
    assert_eq!(first.indexer().len(), 1);

    // Asked for after start: not running until start is called again.
    let late = factory.informer_for(&resource("configmaps"), Indexers::new, |_| cms.clone());
    assert!(!late.has_started());
    assert_eq!(
        factory.wait_for_cache_sync().await.len(),
        1,
        "only started informers are waited for"
    );
    factory.start();
    let synced = factory.wait_for_cache_sync().await;
    assert_eq!(synced.len(), 2);
    assert!(synced.values().all(|s| *s));
    assert_eq!(late.indexer().len(), 2);

    factory.shutdown().await;
    assert!(first.is_stopped() && late.is_stopped());
    factory.start();
    assert!(first.is_stopped(), "start after shutdown starts nothing");
}

#[cfg(feature = "prometheus")]
#[tokio::test]
async fn prometheus_collector_reports_informers_and_handlers() {
    use std::sync::Arc;

    use kcache_informer::{InformerCollector, ResourceEventHandlerFuncs};
    let pods = source();
    pods.add(pod("a"));
    pods.add(pod("b"));
    let factory = SharedInformerFactory::with_options(FactoryOptions::default());
    let inf = factory.informer_for(&resource("pods"), Indexers::new, |_| pods.clone());
    let reg = inf
        .add_event_handler(ResourceEventHandlerFuncs::new())
        .unwrap();
    factory.start();
    factory.wait_for_cache_sync().await;
    assert!(reg.wait_for_sync().await);
    let collector = InformerCollector::new().unwrap();
    collector.register(Arc::new(inf.clone()));
    let registry = prometheus::Registry::new();
    registry.register(Box::new(collector)).unwrap();
    let text = prometheus::TextEncoder::new()
        .encode_to_string(&registry.gather())
        .unwrap();
    assert!(
        text.contains("kcache_informer_objects{informer=\"pods.v1\"} 2"),
        "{text}"
    );
    assert!(
        text.contains("kcache_informer_synced{informer=\"pods.v1\"} 1"),
        "{text}"
    );
    assert!(
        text.contains("kcache_informer_lists_total{informer=\"pods.v1\"} 1"),
        "{text}"
    );
    assert!(
        text.contains(
            "kcache_informer_handler_delivered_total{handler=\"1\",informer=\"pods.v1\"} 2"
        ),
        "{text}"
    );
    // client-go's names: the FIFO's queue, and per handler its queue and call latency.
    let latency = reg.processing_latency();
    assert_eq!(
        latency.count, 2,
        "one observation per delivered notification"
    );
    assert_eq!(latency.cumulative[11], 2, "both calls took under 10 s");
    for line in [
        "informer_queued_items{name=\"pods.v1\"} 0",
        "informer_handler_queued_items{handler=\"1\",name=\"pods.v1\"} 0",
        "# TYPE informer_handler_processing_latency_seconds histogram",
        "informer_handler_processing_latency_seconds_bucket{handler=\"1\",name=\"pods.v1\",le=\"10\"} 2",
        "informer_handler_processing_latency_seconds_bucket{handler=\"1\",name=\"pods.v1\",le=\"+Inf\"} 2",
        "informer_handler_processing_latency_seconds_count{handler=\"1\",name=\"pods.v1\"} 2",
    ] {
        assert!(text.contains(line), "{line} missing from\n{text}");
    }
    let sum = format!(
        "informer_handler_processing_latency_seconds_sum{{handler=\"1\",name=\"pods.v1\"}} {}",
        latency.sum.as_secs_f64()
    );
    assert!(text.contains(&sum), "{sum} missing from\n{text}");
    factory.shutdown().await;
}
