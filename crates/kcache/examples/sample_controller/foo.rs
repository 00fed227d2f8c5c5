//! The `Foo` custom resource (sample-controller's `pkg/apis/samplecontroller/v1alpha1`), typed.

use kcache_core::{ObjectMeta, Resource};
use serde::{Deserialize, Serialize};

/// A `Foo`: "run `replicas` nginx pods in a Deployment named `deploymentName`".
///
/// A plain serde struct: implementing [`Resource`] and [`Object`] is all kcache needs to give
/// it a typed informer, lister and `Api` — no code generation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Foo {
    /// `samplecontroller.k8s.io/v1alpha1`.
    pub api_version: String,
    /// `Foo`.
    pub kind: String,
    /// Standard object metadata.
    pub metadata: ObjectMeta,
    /// What the user asked for.
    pub spec: FooSpec,
    /// What the controller observed; written only through the `status` subresource.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<FooStatus>,
}

/// `Foo.spec`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FooSpec {
    /// The name of the Deployment the controller creates and owns.
    #[serde(default)]
    pub deployment_name: String,
    /// The Deployment's replicas; `None` leaves the Deployment's count alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
    /// The pods' image (`deployment::POD_IMAGE`, the preloaded pause image, when absent). Not
    /// in sample-controller's Foo: added so a cluster can run the pods with an image its nodes
    /// already hold.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image: Option<String>,
}

/// `Foo.status`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FooStatus {
    /// The Deployment's `status.availableReplicas`, copied by the controller.
    #[serde(default)]
    pub available_replicas: i32,
}

impl Resource for Foo {
    const GROUP: &'static str = "samplecontroller.k8s.io";
    const VERSION: &'static str = "v1alpha1";
    const KIND: &'static str = "Foo";
    const PLURAL: &'static str = "foos";
    const NAMESPACED: bool = true;
}

kcache_core::impl_object_for_metadata!(Foo);

impl Foo {
    /// A new Foo to create in `namespace`.
    pub fn new(namespace: &str, name: &str, deployment_name: &str, replicas: i32) -> Foo {
        Foo {
            api_version: Foo::api_resource().api_version(),
            kind: Foo::KIND.into(),
            metadata: ObjectMeta {
                name: name.into(),
                namespace: Some(namespace.into()),
                ..ObjectMeta::default()
            },
            spec: FooSpec {
                deployment_name: deployment_name.into(),
                replicas: Some(replicas),
                image: None,
            },
            status: None,
        }
    }

    /// `status.availableReplicas`, 0 before the controller first wrote it.
    pub fn available_replicas(&self) -> i32 {
        self.status.as_ref().map_or(0, |s| s.available_replicas)
    }
}
