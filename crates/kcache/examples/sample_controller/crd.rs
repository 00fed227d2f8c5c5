//! The Foo CustomResourceDefinition (sample-controller's
//! `artifacts/examples/crd-status-subresource.yaml`) and creating it when absent.

use std::time::Duration;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kcache_core::Resource;
use kcache_transport::{Api, Client, PostParams};
use serde_json::json;

use super::foo::Foo;
use super::wait::wait_until;
use super::SampleError;

/// The `api-approved.kubernetes.io` value of sample-controller's manifest.
const API_APPROVAL: &str = "unapproved, experimental-only; please get an approval from Kubernetes \
    API reviewers if you're trying to develop a CRD in the *.k8s.io or *.kubernetes.io groups";

/// How long a new CRD may take to become `Established`.
const ESTABLISH_TIMEOUT: Duration = Duration::from_secs(20);

/// `foos.samplecontroller.k8s.io`, served at v1alpha1 with the `status` subresource enabled
/// (so the controller's status writes cannot touch the spec, and users' spec writes cannot touch
/// the status).
pub fn foo_crd() -> CustomResourceDefinition {
    let int = |min: Option<i32>| match min {
        Some(m) => json!({"type": "integer", "minimum": m, "maximum": 10}),
        None => json!({"type": "integer"}),
    };
    serde_json::from_value(json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {
            "name": format!("{}.{}", Foo::PLURAL, Foo::GROUP),
            // kube-apiserver refuses CRDs in *.k8s.io groups without it (KEP 1111); the
            // sample's own manifest carries the same value.
            "annotations": {"api-approved.kubernetes.io": API_APPROVAL},
        },
        "spec": {
            "group": Foo::GROUP,
            "scope": "Namespaced",
            "names": {
                "kind": Foo::KIND,
                "plural": Foo::PLURAL,
                "singular": "foo",
                "listKind": "FooList",
            },
            "versions": [{
                "name": Foo::VERSION,
                "served": true,
                "storage": true,
                "subresources": {"status": {}},
                "schema": {"openAPIV3Schema": {
                    "type": "object",
                    "properties": {
                        "spec": {"type": "object", "properties": {
                            "deploymentName": {"type": "string"},
                            "replicas": int(Some(1)),
                            "image": {"type": "string"},
                        }},
                        "status": {"type": "object", "properties": {
                            "availableReplicas": int(None),
                        }},
                    },
                }},
            }],
        },
    }))
    .expect("the CRD literal matches k8s-openapi's CustomResourceDefinition")
}

/// Creates the Foo CRD unless it exists, then waits until the server reports it `Established`
/// (only then are Foos served).
///
/// A controller whose service account may not touch CRDs (the least-privilege deployment in
/// `deploy/`, where the CRD is installed with the manifests, as sample-controller's are) is
/// refused with 403: it then assumes the CRD is installed, and its Foo informer keeps retrying
/// the list until Foos are served.
pub async fn ensure_foo_crd(client: &Client) -> Result<(), SampleError> {
    let api: Api<CustomResourceDefinition> = Api::all(client.clone());
    let crd = foo_crd();
    let name = crd.metadata.name.clone().unwrap_or_default();
    match api.create(&PostParams::default(), &crd).await {
        Ok(_) => tracing::info!(crd = %name, "created the Foo CustomResourceDefinition"),
        Err(e) if is_already_exists(&e) => tracing::info!(crd = %name, "Foo CRD already exists"),
        Err(e) if has_reason(&e, "Forbidden") => {
            tracing::info!(crd = %name, "may not manage CRDs: assuming the Foo CRD is installed");
            return Ok(());
        }
        Err(e) => return Err(e.into()),
    }
    let what = format!("CustomResourceDefinition {name} to be Established");
    wait_until(&what, ESTABLISH_TIMEOUT, async || {
        api.get(&name).await.is_ok_and(|crd| {
            crd.status
                .and_then(|s| s.conditions)
                .unwrap_or_default()
                .iter()
                .any(|c| c.type_ == "Established" && c.status == "True")
        })
    })
    .await?;
    Ok(())
}

/// client-go's `errors.IsAlreadyExists` (kcache-core's `is_conflict` also matches stale writes).
fn is_already_exists(e: &kcache_core::Error) -> bool {
    has_reason(e, "AlreadyExists")
}

/// The server answered with a Status of this `reason` (client-go's `errors.ReasonForError`).
fn has_reason(e: &kcache_core::Error, reason: &str) -> bool {
    e.status().is_some_and(|s| s.reason == reason)
}
