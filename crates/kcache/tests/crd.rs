//! Runs `examples/crd.rs`: a custom resource with k8s-openapi's `ObjectMeta` and a schema
//! derived by schemars, through its CRD, the server and a typed informer.

#[allow(dead_code)]
#[path = "../examples/crd.rs"]
mod example;

use kcache::core::Object;
use serde_json::{json, Value};

/// The CRD's `openAPIV3Schema`, as JSON.
fn schema() -> Value {
    let crd = serde_json::to_value(example::crontab_crd()).unwrap();
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"].clone()
}

#[test]
fn the_crd_schema_is_derived_from_the_spec_type() {
    let schema = schema();
    let spec = &schema["properties"]["spec"];
    assert_eq!(spec["type"], "object");
    assert_eq!(spec["required"], json!(["cronSpec", "image"]));
    let props = &spec["properties"];
    assert_eq!(props["cronSpec"]["type"], "string");
    assert_eq!(
        props["cronSpec"]["description"],
        "When to run, in cron syntax."
    );
    assert_eq!(props["replicas"]["type"], "integer");
    // JSONSchemaProps holds bounds as f64.
    assert_eq!(props["replicas"]["minimum"].as_f64(), Some(1.0));
    assert_eq!(props["replicas"]["maximum"].as_f64(), Some(10.0));
    assert_eq!(props["replicas"]["nullable"], true);
    // Structural: nothing by reference, no meta-schema.
    let text = schema.to_string();
    assert!(
        !text.contains("$ref") && !text.contains("$schema"),
        "{text}"
    );
}

#[test]
fn k8s_openapi_metadata_answers_as_object() {
    let mut c = example::demo_crontabs("ns").remove(0);
    c.metadata.uid = Some("u-1".into());
    c.metadata.finalizers = Some(vec!["stable.example.com/cleanup".into()]);
    assert_eq!((c.namespace(), c.name()), (Some("ns"), "every-minute"));
    assert_eq!(c.uid(), Some("u-1"));
    assert!(c.has_finalizer("stable.example.com/cleanup"));
    assert!(!c.is_deleting());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crontabs_round_trip_through_the_crd_and_an_informer() {
    let cached = example::demo().await.expect("the demo runs");
    let names: Vec<&str> = cached.iter().map(|c| c.name()).collect();
    assert_eq!(names, ["every-minute", "nightly"]);
    let namespace = cached[0].namespace().unwrap().to_string();
    for (got, sent) in cached.iter().zip(example::demo_crontabs(&namespace)) {
        assert_eq!(got.spec, sent.spec);
        assert!(got.resource_version().is_some());
    }
}
