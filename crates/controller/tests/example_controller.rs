//! Runs `examples/controller.rs`'s demo on the embedded server: every labelled Greeting gets its
//! owned ConfigMap and a `Ready` condition, the unlabelled one is ignored, a deleted ConfigMap is
//! put back, a changed message reaches the ConfigMap and the condition's observedGeneration (its
//! lastTransitionTime kept), and a deleted Greeting's ConfigMap is deleted by the finalizer's
//! cleanup before the Greeting goes. And `patch_status_condition` and `patch_condition` on its
//! Greeting CRD.

#[allow(dead_code)]
#[path = "../examples/controller.rs"]
mod example;

use example::Greeting;
use kcache_controller::conditions::{new_condition, patch_condition, patch_status_condition};
use kcache_core::{DynamicObject, Object, Resource};
use kcache_transport::{Api, Patch, PatchParams, PostParams};
use serde_json::json;

use crate::helpers::cluster;

#[tokio::test]
async fn patch_status_condition_writes_only_a_change() {
    let (_c, client, ns) = cluster("status-condition").await;
    example::ensure_crd(&client).await.unwrap();
    let api = Api::<Greeting>::namespaced(client, &ns);
    let g = Greeting::new("g", "hello", false);
    let g = api.create(&PostParams::default(), &g).await.unwrap();
    let ready = |status: &str| new_condition("Ready", status, "Checked", "", g.generation());
    let set = |g: Greeting, status: &str| {
        let new = ready(status);
        let api = api.clone();
        async move {
            patch_status_condition(&api, &g, g.status.as_ref(), |s| &mut s.conditions, new)
                .await
                .unwrap()
        }
    };

    let first = set(g.clone(), "True")
        .await
        .expect("a new condition is written");
    assert_eq!(first.ready().map(|c| c.status.as_str()), Some("True"));
    assert_eq!(first.spec.message, "hello", "only the status is patched");
    let unchanged = set(first.clone(), "True").await;
    assert!(unchanged.is_none(), "nothing changed, nothing sent");
    let stored = api.get("g").await.unwrap();
    assert_eq!(stored.resource_version(), first.resource_version());
    let second = set(stored, "False")
        .await
        .expect("a changed status is written");
    let (was, now) = (first.ready().unwrap(), second.ready().unwrap());
    assert_eq!(now.status, "False");
    assert!(now.last_transition_time.0 >= was.last_transition_time.0);
    assert_eq!(
        second.status.unwrap().conditions.len(),
        1,
        "replaced, not added"
    );
}

/// `patch_condition` reads the conditions from the object's `status.conditions` and sends only
/// that list: other conditions and other status fields stay.
#[tokio::test]
async fn patch_condition_keeps_the_other_conditions_and_status_fields() {
    let (_c, client, ns) = cluster("condition").await;
    example::ensure_crd(&client).await.unwrap();
    let api = Api::<Greeting>::namespaced(client.clone(), &ns);
    api.create(&PostParams::default(), &Greeting::new("g", "hello", false))
        .await
        .unwrap();
    let extra = Patch::Merge(json!({"status": {"note": "kept"}}));
    let g = api
        .patch_status("g", &PatchParams::default(), &extra)
        .await
        .unwrap();
    let cond = |type_: &str, status: &str| new_condition(type_, status, "Checked", "", None);

    let synced = patch_condition(&api, &g, cond("Synced", "True"))
        .await
        .unwrap()
        .expect("a new condition is written");
    let ready = patch_condition(&api, &synced, cond("Ready", "False"))
        .await
        .unwrap()
        .expect("a second type is written");
    let conditions = &ready.status.as_ref().unwrap().conditions;
    let types: Vec<_> = conditions.iter().map(|c| (&*c.type_, &*c.status)).collect();
    assert_eq!(types, [("Synced", "True"), ("Ready", "False")]);
    let same = patch_condition(&api, &ready, cond("Ready", "False")).await;
    assert!(same.unwrap().is_none(), "nothing changed, nothing sent");
    let raw = Api::<DynamicObject>::dynamic(client, Greeting::api_resource(), Some(&ns));
    let stored = raw.get("g").await.unwrap();
    assert_eq!(stored.resource_version(), ready.resource_version());
    assert_eq!(stored.data["status"]["note"], "kept", "{stored:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_example_converges_repairs_a_deleted_configmap_sets_ready_and_cleans_up() {
    // A guard, not a timing rule: a demo that stops converging fails instead of hanging.
    let s = tokio::time::timeout(std::time::Duration::from_secs(300), example::demo())
        .await
        .expect("the demo converges");
    // The controller's ConfigMaps (a full cluster also holds each namespace's root-CA ConfigMap,
    // which has no controller).
    let owned: Vec<(&str, &str, &str)> = s
        .config_maps
        .iter()
        .map(|(k, (owner, message))| (k.as_str(), owner.as_str(), message.as_str()))
        .collect();
    assert_eq!(
        owned,
        [
            ("alpha-greeting", "alpha", "hello again"),
            ("beta-greeting", "beta", "hello from beta")
        ],
        "gamma-greeting deleted by the cleanup: {s:?}"
    );
    let ready = |name: &str| s.ready.get(name).cloned();
    let true_at = |generation: i64| {
        Some((
            "True".to_string(),
            "ConfigMapApplied".to_string(),
            Some(generation),
            Some(generation),
        ))
    };
    assert_eq!(
        ready("alpha"),
        true_at(2),
        "the changed spec observed: {s:?}"
    );
    assert_eq!(ready("beta"), true_at(1), "{s:?}");
    assert_eq!(ready("ignored"), None, "{s:?}");
    assert!(
        s.alpha_transition_kept,
        "a condition whose status stays keeps its lastTransitionTime: {s:?}"
    );
    assert!(
        s.reconciled.keys().all(|k| !k.ends_with("/ignored")),
        "the predicate keeps the unlabelled Greeting out: {s:?}"
    );
    let key = |name: &str| format!("{}/{name}", s.namespace);
    assert!(s.reconciled.contains_key(&key("gamma cleaned up")), "{s:?}");
    let beta = s.reconciled.get(&key("beta"));
    assert!(beta.is_some_and(|n| *n >= 2), "{s:?}");
}
