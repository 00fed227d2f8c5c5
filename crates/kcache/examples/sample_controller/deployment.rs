//! The Deployment a Foo owns (sample-controller's `newDeployment`) and the owner-reference
//! helpers client-go has in `metav1` (`NewControllerRef`, `GetControllerOf`, `IsControlledBy`).

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec};
use k8s_openapi::api::core::v1::{Container, PodSpec, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta, OwnerReference};
use kcache_core::{Object, Resource};

use super::foo::Foo;

/// The pods' image. Upstream sample-controller runs `nginx:latest`; the pause image does
/// nothing, but every kind node has it preloaded (`imagePullPolicy: IfNotPresent`) and any
/// cluster can pull it, so the Deployment becomes available on an offline cluster too.
pub const POD_IMAGE: &str = "k8s.gcr.io/pause:3.2";

/// The labels of the Deployment and its pods; `controller` names the owning Foo.
pub fn deployment_labels(foo: &Foo) -> BTreeMap<String, String> {
    BTreeMap::from([
        ("app".to_string(), "nginx".to_string()),
        ("controller".to_string(), foo.name().to_string()),
    ])
}

/// The Deployment `foo` asks for: `spec.deploymentName`, `spec.replicas` pods of `spec.image`
/// ([`POD_IMAGE`] by default), controlled by `foo` (so deleting the Foo garbage-collects it in a
/// cluster that runs the GC). Images are pulled only if the node lacks them (`IfNotPresent`), so
/// images loaded into a node without a registry run.
pub fn new_deployment(foo: &Foo) -> Deployment {
    let labels = deployment_labels(foo);
    Deployment {
        metadata: ObjectMeta {
            name: Some(foo.spec.deployment_name.clone()),
            namespace: foo.metadata.namespace.clone(),
            owner_references: Some(vec![new_controller_ref(foo)]),
            ..ObjectMeta::default()
        },
        spec: DeploymentSpec {
            replicas: foo.spec.replicas,
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
                        name: "nginx".into(),
                        image: Some(foo.spec.image.as_deref().unwrap_or(POD_IMAGE).into()),
                        image_pull_policy: Some("IfNotPresent".into()),
                        ..Container::default()
                    }],
                    ..PodSpec::default()
                }),
            },
            ..DeploymentSpec::default()
        },
        status: None,
    }
}

/// `metav1.NewControllerRef(foo, Foo's GVK)`: controller and blockOwnerDeletion set.
pub fn new_controller_ref(foo: &Foo) -> OwnerReference {
    OwnerReference {
        api_version: Foo::api_resource().api_version(),
        kind: Foo::KIND.into(),
        name: foo.name().into(),
        uid: foo.uid().unwrap_or_default().into(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }
}

/// `metav1.GetControllerOf`: the owner reference with `controller: true`, if any.
pub fn controller_of(meta: &ObjectMeta) -> Option<&OwnerReference> {
    meta.owner_references
        .as_deref()
        .unwrap_or_default()
        .iter()
        .find(|r| r.controller == Some(true))
}

/// `metav1.IsControlledBy`: the controller reference points at `foo`'s uid.
pub fn is_controlled_by(deployment: &Deployment, foo: &Foo) -> bool {
    controller_of(&deployment.metadata).is_some_and(|r| Some(r.uid.as_str()) == foo.uid())
}

/// `spec.replicas` (the API server defaults a missing value to 1).
pub fn spec_replicas(deployment: &Deployment) -> i32 {
    deployment.spec.replicas.unwrap_or(1)
}

/// `status.availableReplicas`, 0 when absent.
pub fn available_replicas(deployment: &Deployment) -> i32 {
    deployment
        .status
        .as_ref()
        .and_then(|s| s.available_replicas)
        .unwrap_or(0)
}
