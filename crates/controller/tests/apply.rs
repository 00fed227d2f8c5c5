//! Server-side apply with a field manager: ownership, conflicts, force, and fields a manager
//! stops applying.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kcache_controller::apply;
use kcache_core::{ApiResource, DynamicObject};
use kcache_transport::Api;

use crate::helpers::cluster;

fn cm(name: &str, data: &[(&str, &str)]) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.into()),
            ..ObjectMeta::default()
        },
        data: Some(
            data.iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        ),
        ..ConfigMap::default()
    }
}

fn managers(cm: &ConfigMap) -> Vec<String> {
    cm.metadata
        .managed_fields
        .iter()
        .flatten()
        .filter_map(|m| m.manager.clone())
        .collect()
}

#[tokio::test]
async fn apply_owns_what_it_sends_and_drops_what_it_stops_sending() {
    let (_c, client, ns) = cluster("apply").await;
    let api = Api::<ConfigMap>::namespaced(client, &ns);
    let got = apply(&api, &cm("a", &[("x", "1"), ("y", "2")]), "ctl", false)
        .await
        .unwrap();
    assert!(
        managers(&got).contains(&"ctl".to_string()),
        "{:?}",
        managers(&got)
    );
    let got = apply(&api, &cm("a", &[("x", "1")]), "ctl", false)
        .await
        .unwrap();
    assert_eq!(
        got.data.unwrap(),
        BTreeMap::from([("x".into(), "1".into())])
    );
}

#[tokio::test]
async fn a_conflict_fails_unless_forced() {
    let (_c, client, ns) = cluster("apply-force").await;
    let api = Api::<ConfigMap>::namespaced(client, &ns);
    apply(&api, &cm("a", &[("x", "1")]), "other", false)
        .await
        .unwrap();
    let err = apply(&api, &cm("a", &[("x", "2")]), "ctl", false)
        .await
        .unwrap_err();
    assert!(err.is_conflict(), "{err:?}");
    let got = apply(&api, &cm("a", &[("x", "2")]), "ctl", true)
        .await
        .unwrap();
    assert_eq!(got.data.unwrap()["x"], "2");
}

#[tokio::test]
async fn api_version_and_kind_are_filled_in_and_bad_input_named() {
    let (_c, client, ns) = cluster("apply-dyn").await;
    let resource = ApiResource {
        group: String::new(),
        version: "v1".into(),
        kind: "ConfigMap".into(),
        plural: "configmaps".into(),
        namespaced: true,
    };
    let api = Api::<DynamicObject>::dynamic(client, resource, Some(&ns));
    let mut obj = DynamicObject::new("d");
    obj.data
        .insert("data".into(), serde_json::json!({"k": "v"}));
    let got = apply(&api, &obj, "ctl", false).await.unwrap();
    assert_eq!(got.data["data"]["k"], "v");
    let err = apply(&api, &obj, "", false).await.unwrap_err();
    assert!(err.to_string().contains("request failed"), "{err}");
    assert!(kcache_core::ErrorChain(&err)
        .to_string()
        .contains("field manager"));
}
