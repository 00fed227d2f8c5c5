//! The ConfigMaps of the store and fifo scenarios, built as cgbench builds them.

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

/// ConfigMap `cm-{i}` in namespace `ns-{i % 100}` at resourceVersion `gen·n + i`, data `{k: v}`,
/// and, when `app_label` is set, label `app = app-{(i + gen) % 1000}` (the store scenario's).
pub fn config_map(i: usize, gen: usize, n: usize, app_label: bool) -> Arc<ConfigMap> {
    let labels = app_label
        .then(|| BTreeMap::from([("app".to_string(), format!("app-{}", (i + gen) % 1000))]));
    Arc::new(ConfigMap {
        metadata: ObjectMeta {
            name: Some(format!("cm-{i}")),
            namespace: Some(format!("ns-{}", i % 100)),
            resource_version: Some((gen * n + i).to_string()),
            labels,
            ..Default::default()
        },
        data: Some(BTreeMap::from([("k".to_string(), "v".to_string())])),
        ..Default::default()
    })
}
