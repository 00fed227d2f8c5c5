//! The Deployment a Foo asks for (sample-controller's `newDeployment`).

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec};
use k8s_openapi::api::core::v1::{Container, PodSpec, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use kcache_core::Object;

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
/// ([`POD_IMAGE`] by default). The controller makes `foo` its controller
/// (`set_controller_reference`), so deleting the Foo garbage-collects it in a cluster that runs
/// the GC. Images are pulled only if the node lacks them (`IfNotPresent`), so images loaded into
/// a node without a registry run.
pub fn new_deployment(foo: &Foo) -> Deployment {
    let labels = deployment_labels(foo);
    Deployment {
        metadata: ObjectMeta {
            name: Some(foo.spec.deployment_name.clone()),
            namespace: foo.metadata.namespace.clone(),
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
