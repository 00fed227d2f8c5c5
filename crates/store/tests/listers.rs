//! client-go's `listers_test.go` (`ListAll` with subset/all/no match) and the generic listers.

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kcache_core::selector::LabelSelector;
use kcache_core::{DynamicObject, Object};
use kcache_store::{
    list_all, list_all_by_namespace, lister_resource_name, Indexer, Indexers, Lister,
};

fn store_with(
    num_objects: usize,
    num_matching: usize,
    labels: &[(&str, &str)],
) -> Indexer<DynamicObject> {
    let store = Indexer::default();
    for i in 0..num_objects {
        let mut o = DynamicObject::new(&format!("obj-{i}"));
        if i < num_matching {
            for (k, v) in labels {
                o = o.with_label(k, v);
            }
        }
        store.add(Arc::new(o)).unwrap();
    }
    store
}

#[test]
fn list_all_subset_all_and_no_match() {
    // TestListAll, at a tenth of client-go's sizes.
    let subset = store_with(10_000, 1_000, &[("match", "true")]);
    let sel = LabelSelector::parse("match=true").unwrap();
    assert_eq!(list_all(&subset, &sel).len(), 1_000);
    let all = store_with(10_000, 0, &[]);
    assert_eq!(list_all(&all, &LabelSelector::everything()).len(), 10_000);
    let none = store_with(10_000, 10_000, &[("nomatch", "true")]);
    assert!(list_all(&none, &sel).is_empty());
}

fn cm(ns: &str, name: &str, app: &str) -> Arc<ConfigMap> {
    Arc::new(ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some(ns.into()),
            labels: Some(BTreeMap::from([("app".to_string(), app.to_string())])),
            ..Default::default()
        },
        ..Default::default()
    })
}

fn names(objs: &[Arc<ConfigMap>]) -> Vec<String> {
    let mut names: Vec<String> = objs.iter().map(|o| o.name().to_string()).collect();
    names.sort();
    names
}

fn fill(store: &Indexer<ConfigMap>) {
    for (ns, name, app) in [("a", "x", "web"), ("a", "y", "db"), ("b", "x", "web")] {
        store.add(cm(ns, name, app)).unwrap();
    }
}

#[test]
fn namespace_lister_reads_the_index_or_scans() {
    let indexed = Arc::new(Indexer::new(Indexers::new().with_namespace_index()));
    let scanned = Arc::new(Indexer::default());
    fill(&indexed);
    fill(&scanned);
    let web = LabelSelector::parse("app=web").unwrap();
    for store in [indexed, scanned] {
        let lister = Lister::for_resource(store.clone());
        assert_eq!(
            names(&lister.list(&LabelSelector::everything())),
            ["x", "x", "y"]
        );
        assert_eq!(names(&lister.list(&web)), ["x", "x"]);
        let a = lister.by_namespace("a");
        assert_eq!(names(&a.list(&LabelSelector::everything())), ["x", "y"]);
        assert_eq!(names(&a.list(&web)), ["x"]);
        assert!(lister.by_namespace("c").list(&web).is_empty());
        // An empty namespace is all namespaces (client-go's NamespaceAll).
        assert_eq!(list_all_by_namespace(&store, "", &web).len(), 2);
        assert_eq!(a.get("y").unwrap().name(), "y");
    }
}

#[test]
fn get_reports_not_found_naming_the_resource() {
    let store = Arc::new(Indexer::new(Indexers::new().with_namespace_index()));
    fill(&store);
    let lister = Lister::for_resource(store.clone());
    let err = lister.by_namespace("a").get("nope").unwrap_err();
    assert!(err.is_not_found());
    assert_eq!(err.to_string(), "configmap \"nope\" not found");
    assert!(kcache_core::Error::from(err).is_not_found());
    assert_eq!(lister.get("a/x").unwrap().name(), "x");
    assert_eq!(
        lister.get("x").unwrap_err().to_string(),
        "configmap \"x\" not found"
    );
    assert_eq!(lister_resource_name::<Deployment>(), "deployment.apps");
    let named = Lister::new(store, "widgets.example.com");
    assert_eq!(
        named.get("x").unwrap_err().to_string(),
        "widgets.example.com \"x\" not found"
    );
}
