//! Ownership scenarios from the API server's field manager tests, on ConfigMaps and a
//! schemaless custom resource.

use super::*;
use crate::resources::ResourceTable;
use serde_json::json;

fn configmaps() -> std::sync::Arc<ResourceInfo> {
    ResourceTable::new().get("", "v1", "configmaps").unwrap()
}

fn cm(data: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "namespace": "d"}, "data": data})
}

fn managers(obj: &Value) -> Vec<(String, String, Value)> {
    obj["metadata"]["managedFields"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|e| {
                    (
                        e["manager"].as_str().unwrap().to_string(),
                        e["operation"].as_str().unwrap().to_string(),
                        e["fieldsV1"].clone(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn manager_names_come_from_the_parameter_or_the_user_agent() {
    assert_eq!(manager_name(Some("m"), Some("kubectl/v1.20")), "m");
    assert_eq!(
        manager_name(
            None,
            Some("kubectl/v1.20.2 (linux/amd64) kubernetes/faf5ec6")
        ),
        "kubectl"
    );
    assert_eq!(manager_name(None, None), "unknown");
    assert_eq!(manager_name(None, Some(&"x".repeat(300))).len(), 128);
}

#[test]
fn updates_record_what_they_changed_and_take_it_from_others() {
    let res = configmaps();
    let mut created = cm(json!({"a": "1", "b": "2"}));
    record_update(&res, None, &mut created, "creator");
    assert_eq!(
        managers(&created),
        vec![(
            "creator".into(),
            "Update".into(),
            json!({"f:data": {".": {}, "f:a": {}, "f:b": {}}})
        )]
    );
    assert_eq!(created["metadata"]["managedFields"][0]["apiVersion"], "v1");
    assert!(created["metadata"]["managedFields"][0]["time"].is_string());
    let mut next = created.clone();
    next["data"]["a"] = json!("changed");
    next["data"].as_object_mut().unwrap().remove("b");
    record_update(&res, Some(&created), &mut next, "editor");
    assert_eq!(
        managers(&next),
        vec![
            ("creator".into(), "Update".into(), json!({"f:data": {}})),
            (
                "editor".into(),
                "Update".into(),
                json!({"f:data": {"f:a": {}}})
            ),
        ]
    );
    // One empty entry resets them.
    let mut reset = next.clone();
    reset["metadata"]["managedFields"] = json!([{}]);
    record_update(&res, Some(&next), &mut reset, "editor");
    assert!(reset["metadata"].get("managedFields").is_none());
}

#[test]
fn apply_conflicts_unless_forced_and_removes_what_it_stops_applying() {
    let res = configmaps();
    let mut live = cm(json!({"a": "1"}));
    record_update(&res, None, &mut live, "creator");
    let err = apply(
        &res,
        Some(&live),
        &cm(json!({"a": "2", "c": "3"})),
        "ssa",
        false,
    )
    .unwrap_err();
    assert_eq!(err.status.code, 409);
    assert_eq!(
        err.status.message,
        "Apply failed with 1 conflict: conflict with \"creator\" using v1: .data.a"
    );
    let causes = &err.status.details.as_ref().unwrap().causes;
    assert_eq!(
        (causes[0].type_.as_str(), causes[0].field.as_str()),
        ("FieldManagerConflict", ".data.a")
    );
    // The same value is no conflict: both own it.
    let shared = apply(
        &res,
        Some(&live),
        &cm(json!({"a": "1", "c": "3"})),
        "ssa",
        false,
    )
    .unwrap();
    assert_eq!(
        managers(&shared),
        vec![
            (
                "ssa".into(),
                "Apply".into(),
                json!({"f:data": {"f:a": {}, "f:c": {}}})
            ),
            (
                "creator".into(),
                "Update".into(),
                json!({"f:data": {".": {}, "f:a": {}}})
            ),
        ]
    );
    // Dropping `c` (owned by nobody else) removes it; dropping `a` keeps it (creator owns it).
    let dropped = apply(&res, Some(&shared), &cm(json!({})), "ssa", false).unwrap();
    assert_eq!(dropped["data"], json!({"a": "1"}));
    let forced = apply(&res, Some(&live), &cm(json!({"a": "2"})), "ssa", true).unwrap();
    assert_eq!(forced["data"], json!({"a": "2"}));
    assert_eq!(
        managers(&forced),
        vec![
            ("ssa".into(), "Apply".into(), json!({"f:data": {"f:a": {}}})),
            ("creator".into(), "Update".into(), json!({"f:data": {}})),
        ]
    );
}

#[test]
fn apply_checks_its_input() {
    let res = configmaps();
    let mut with_fields = cm(json!({}));
    with_fields["metadata"]["managedFields"] = json!([]);
    assert_eq!(
        apply(&res, None, &with_fields, "m", false)
            .unwrap_err()
            .status
            .message,
        "metadata.managedFields must be nil"
    );
    let mut wrong = cm(json!({}));
    wrong["apiVersion"] = json!("v2");
    assert_eq!(
        apply(&res, None, &wrong, "m", false)
            .unwrap_err()
            .status
            .message,
        "Incorrect version specified in apply patch. Specified patch version: v2, expected: v1"
    );
}

#[test]
fn objects_without_managed_fields_get_a_before_first_apply_owner() {
    let res = configmaps();
    let live = cm(json!({"a": "1"}));
    let err = apply(&res, Some(&live), &cm(json!({"a": "2"})), "ssa", false).unwrap_err();
    assert_eq!(
        err.status.message,
        "Apply failed with 1 conflict: conflict with \"before-first-apply\" using v1: .data.a"
    );
}
