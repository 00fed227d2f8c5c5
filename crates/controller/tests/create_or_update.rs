//! `create_or_update` and `create_or_patch`, mirroring controllerutil_test.go's cases against
//! the API server.

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec, DeploymentStatus};
use k8s_openapi::api::core::v1::{ConfigMap, Container, PodSpec, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use kcache_controller::create_or_update::Error;
use kcache_controller::{create_or_patch, create_or_update, OperationResult};
use kcache_transport::Api;

use crate::helpers::{cluster, Failed};

fn cm(name: &str) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.into()),
            ..ObjectMeta::default()
        },
        ..ConfigMap::default()
    }
}

fn set_data(key: &str, value: &str) -> impl FnOnce(&mut ConfigMap) -> Result<(), Failed> {
    let (key, value) = (key.to_string(), value.to_string());
    move |cm| {
        cm.data.get_or_insert_with(BTreeMap::new).insert(key, value);
        Ok(())
    }
}

#[tokio::test]
async fn create_or_update_creates_updates_and_leaves_alone() {
    let (_c, client, ns) = cluster("cou").await;
    let api = Api::<ConfigMap>::namespaced(client, &ns);

    let (created, result) = create_or_update(&api, cm("a"), set_data("k", "1"))
        .await
        .unwrap();
    assert_eq!(result, OperationResult::Created);
    assert_eq!(created.data.as_ref().unwrap()["k"], "1");

    let (updated, result) = create_or_update(&api, cm("a"), set_data("k", "2"))
        .await
        .unwrap();
    assert_eq!(result, OperationResult::Updated);
    assert_eq!(api.get("a").await.unwrap().data.unwrap()["k"], "2");

    let (same, result) = create_or_update(&api, cm("a"), set_data("k", "2"))
        .await
        .unwrap();
    assert_eq!(result, OperationResult::Unchanged);
    assert_eq!(
        same.metadata.resource_version, updated.metadata.resource_version,
        "no write was sent"
    );
}

#[tokio::test]
async fn a_failing_mutate_writes_nothing() {
    let (_c, client, ns) = cluster("cou-err").await;
    let api = Api::<ConfigMap>::namespaced(client, &ns);
    let out = create_or_update(&api, cm("a"), |_| Err(Failed("no"))).await;
    assert!(matches!(out, Err(Error::Mutate(Failed("no")))));
    assert!(api.get("a").await.unwrap_err().is_not_found());
}

#[tokio::test]
async fn mutate_may_not_change_the_name() {
    let (_c, client, ns) = cluster("cou-key").await;
    let api = Api::<ConfigMap>::namespaced(client, &ns);
    let out = create_or_update(&api, cm("a"), |c: &mut ConfigMap| {
        c.metadata.name = Some("b".into());
        Ok::<_, Failed>(())
    })
    .await;
    assert!(
        matches!(out, Err(Error::KeyChanged { ref before, ref after }) if before == "a" && after == "b"),
        "{out:?}"
    );
    create_or_update(&api, cm("a"), set_data("k", "v"))
        .await
        .unwrap();
    let out = create_or_patch(&api, cm("a"), |c: &mut ConfigMap| {
        c.metadata.namespace = Some("elsewhere".into());
        Ok::<_, Failed>(())
    })
    .await;
    assert!(matches!(out, Err(Error::KeyChanged { .. })), "{out:?}");
    let out = create_or_update(&api, cm(""), set_data("k", "v")).await;
    assert!(matches!(out, Err(Error::UnnamedObject)));
}

fn deployment(name: &str) -> Deployment {
    let labels = BTreeMap::from([("app".to_string(), name.to_string())]);
    Deployment {
        metadata: ObjectMeta {
            name: Some(name.into()),
            ..ObjectMeta::default()
        },
        spec: DeploymentSpec {
            replicas: Some(1),
            selector: LabelSelector {
                match_labels: Some(labels.clone()),
                ..LabelSelector::default()
            },
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(labels),
                    ..ObjectMeta::default()
                }),
                spec: Some(PodSpec {
                    containers: vec![Container {
                        name: "c".into(),
                        image: Some("nginx".into()),
                        ..Container::default()
                    }],
                    ..PodSpec::default()
                }),
            },
            ..DeploymentSpec::default()
        },
        ..Deployment::default()
    }
}

fn replicas(n: i32) -> impl FnOnce(&mut Deployment) -> Result<(), Failed> {
    move |d| {
        d.spec.replicas = Some(n);
        Ok(())
    }
}

fn observed(n: i64) -> impl FnOnce(&mut Deployment) -> Result<(), Failed> {
    move |d| {
        d.status
            .get_or_insert_with(DeploymentStatus::default)
            .observed_generation = Some(n);
        Ok(())
    }
}

#[tokio::test]
async fn create_or_patch_reports_spec_and_status_changes_apart() {
    let (_c, client, ns) = cluster("cop").await;
    let api = Api::<Deployment>::namespaced(client, &ns);
    let r = |out: Result<(Deployment, OperationResult), Error<Failed>>| out.unwrap().1;

    assert_eq!(
        r(create_or_patch(&api, deployment("d"), replicas(2)).await),
        OperationResult::Created
    );
    assert_eq!(
        r(create_or_patch(&api, deployment("d"), replicas(2)).await),
        OperationResult::Unchanged
    );
    assert_eq!(
        r(create_or_patch(&api, deployment("d"), replicas(3)).await),
        OperationResult::Updated
    );
    assert_eq!(api.get("d").await.unwrap().spec.replicas, Some(3));

    // The status as the server answered the status patch: on a full cluster the Deployment
    // controller writes this status too, so a later read may already hold its value.
    let (patched, result) = create_or_patch(&api, deployment("d"), observed(5))
        .await
        .unwrap();
    assert_eq!(result, OperationResult::UpdatedStatusOnly);
    assert_eq!(patched.status.unwrap().observed_generation, Some(5));

    let both = |d: &mut Deployment| {
        replicas(4)(d)?;
        observed(6)(d)
    };
    let (patched, result) = create_or_patch(&api, deployment("d"), both).await.unwrap();
    assert_eq!(result, OperationResult::UpdatedStatus);
    assert_eq!(patched.status.unwrap().observed_generation, Some(6));
    let got = api.get("d").await.unwrap();
    assert_eq!(got.spec.replicas, Some(4));
}
