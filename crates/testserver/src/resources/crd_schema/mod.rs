//! A CRD's `openAPIV3Schema` enforced on its custom resources, as apiextensions-apiserver
//! 1.20.2 does: every write is pruned ([`prune`]), defaulted ([`defaults`]) and validated
//! ([`validate`], [`extensions`]); reads are defaulted; CRD admission refuses schemas
//! that are not structural ([`structural`]); and a CRD's schemas are stored as 1.20.2's typed
//! decode leaves them ([`typed`]). Error wording is the real server's, to the byte.

use std::sync::Arc;

use kcache_core::StatusCause;
use serde_json::Value;

use super::{ResourceInfo, ScalePaths};

pub(crate) mod causes;
mod defaults;
mod extensions;
mod formats;
mod go_value;
pub(crate) mod openapi_v2;
mod prune;
mod structural;
mod typed;
mod validate;

pub(crate) use structural::check_crd;
pub(crate) use typed::store_crd_schemas;

/// One served version's schema, as its CRD gives it.
#[derive(Debug)]
pub(crate) struct CrSchema {
    /// `openAPIV3Schema` (absent: a v1beta1 CRD without validation; nothing is checked).
    root: Option<Value>,
    /// Unknown fields are dropped (not `preserveUnknownFields: true`).
    prune: bool,
    /// The schema has a `default` somewhere.
    has_defaults: bool,
    /// The storage version's `openAPIV3Schema`, when that is another version and pruning
    /// applies: 1.20.2 prunes a custom resource against it as it stores the object, so fields
    /// only the written version knows are dropped.
    storage_root: Option<Value>,
    /// `group/version` of the CRD's storage version: custom resources are stored in it and
    /// read in the version asked (conversion strategy `None`: only `apiVersion` changes).
    storage_api_version: Option<String>,
}

impl CrSchema {
    /// `openAPIV3Schema` when the OpenAPI documents publish it with properties: not when the
    /// version has no schema, or keeps unknown fields at its root or through the CRD's
    /// `preserveUnknownFields` (kubectl would refuse every field the schema does not list).
    pub(crate) fn published(&self) -> Option<&Value> {
        self.root
            .as_ref()
            .filter(|r| self.prune && r["x-kubernetes-preserve-unknown-fields"] != true)
    }

    /// The schema of `version` (an entry of a stored CRD's `spec.versions`).
    pub(crate) fn of_version(spec: &Value, version: &Value) -> Arc<CrSchema> {
        let root = Some(version["schema"]["openAPIV3Schema"].clone()).filter(Value::is_object);
        let prune = spec["preserveUnknownFields"] != true && root.is_some();
        let has_defaults = prune && root.as_ref().is_some_and(defaults::any);
        let storage = spec["versions"]
            .as_array()
            .and_then(|vs| vs.iter().find(|v| v["storage"] == true));
        let storage_root = storage
            .filter(|s| prune && s["name"] != version["name"])
            .map(|s| s["schema"]["openAPIV3Schema"].clone())
            .filter(Value::is_object);
        let storage_api_version = storage.and_then(|s| {
            Some(format!(
                "{}/{}",
                spec["group"].as_str()?,
                s["name"].as_str()?
            ))
        });
        Arc::new(CrSchema {
            root,
            prune,
            has_defaults,
            storage_root,
            storage_api_version,
        })
    }
}

/// What every write of a custom resource does before it is validated and stored: metadata
/// cut to ObjectMeta's fields, unknown fields pruned, defaults applied.
pub(crate) fn on_write(res: &ResourceInfo, obj: &mut Value) {
    let Some(schema) = &res.schema else {
        return;
    };
    prune::coerce_meta(&mut obj["metadata"]);
    let Some(root) = schema.root.as_ref().filter(|_| schema.prune) else {
        return;
    };
    prune::prune_root(obj, root);
    defaults::apply(obj, root);
    // Defaults hold only specified fields, as the real server prunes them at CRD creation.
    prune::prune_root(obj, root);
}

/// A validated custom resource as it is stored: in the storage version, pruned against that
/// version's schema when it was written through another one (1.20.2 converts the object for
/// storage, and prunes as it does, after validating it in the version it came in).
pub(crate) fn to_storage(res: &ResourceInfo, obj: &mut Value) {
    let Some(schema) = &res.schema else {
        return;
    };
    if let Some(storage) = &schema.storage_root {
        prune::prune_root(obj, storage);
    }
    if let Some(api_version) = &schema.storage_api_version {
        obj["apiVersion"] = Value::String(api_version.clone());
    }
}

/// Whether custom resources of `res` are stored in another version than `res`'s: reads then
/// set `apiVersion` to `res`'s (see [`CrSchema::storage_api_version`]).
pub(crate) fn stored_elsewhere(res: &ResourceInfo) -> bool {
    res.schema
        .as_ref()
        .and_then(|s| s.storage_api_version.as_deref())
        .is_some_and(|v| v != res.api.api_version())
}

/// Defaults applied to a custom resource read from storage (its schema may have gained
/// defaults since it was written). Whether a read needs parsing at all: see [`reads_default`].
pub(crate) fn on_read(res: &ResourceInfo, obj: &mut Value) {
    // Only objects of the resource (not a watch's bookmark or error Status).
    let named = obj["metadata"]["name"]
        .as_str()
        .is_some_and(|n| !n.is_empty());
    if !named || obj["kind"] != res.api.kind.as_str() {
        return;
    }
    if let Some(root) = res
        .schema
        .as_ref()
        .filter(|s| s.has_defaults)
        .and_then(|s| s.root.as_ref())
    {
        defaults::apply(obj, root);
    }
}

/// Whether reads of `res` are defaulted ([`on_read`] changes something only then).
pub(crate) fn reads_default(res: &ResourceInfo) -> bool {
    res.schema.as_ref().is_some_and(|s| s.has_defaults)
}

/// The schema problems of a custom resource about to be stored (empty: valid).
pub(crate) fn validate(res: &ResourceInfo, obj: &Value) -> Vec<StatusCause> {
    let Some(schema) = &res.schema else {
        return Vec::new();
    };
    let mut out = Vec::new();
    if let Some(root) = &schema.root {
        out = validate::validate(root, obj, "");
        extensions::validate(root, obj, "", &mut out);
    }
    if let Some(scale) = &res.subresources.scale {
        scale_accessors(scale, obj, &mut out);
    }
    out
}

/// The `/scale` paths must lead to int32s (`ValidateScaleSpec`/`ValidateScaleStatus`): a
/// value of another type is an `accessor error`, one out of range is invalid; both are named
/// by the path as the CRD spells it.
fn scale_accessors(scale: &ScalePaths, obj: &Value, out: &mut Vec<StatusCause>) {
    for path in [&scale.spec_replicas, &scale.status_replicas] {
        let mut at = obj;
        let segments: Vec<&str> = path.trim_start_matches('.').split('.').collect();
        for (i, seg) in segments.iter().enumerate() {
            let (expected, next) = match at {
                Value::Object(m) => ("", m.get(*seg)),
                other => ("map[string]interface{}", Some(other)),
            };
            let Some(next) = next else {
                break;
            };
            let last = i + 1 == segments.len();
            let wrong = if !expected.is_empty() {
                Some(expected)
            } else if last && !(next.is_i64() || next.is_u64()) {
                Some("int64")
            } else {
                None
            };
            if let Some(expected) = wrong {
                let bad = if expected == "int64" { next } else { at };
                out.push(causes::invalid(
                    path,
                    "0",
                    &format!(
                        "{path} accessor error: {} is of the type {}, expected {expected}",
                        go_value::plain(bad),
                        go_value::type_name(bad)
                    ),
                ));
                break;
            }
            if last {
                let n = next.as_i64().unwrap_or(i64::MAX);
                let detail = match n {
                    ..0 => "should be a non-negative integer".to_string(),
                    n if n > i64::from(i32::MAX) => {
                        format!("should be less than or equal to {}", i32::MAX)
                    }
                    _ => continue,
                };
                out.push(causes::invalid(path, &n.to_string(), &detail));
            }
            at = next;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn scale_paths_must_hold_integers() {
        let scale = ScalePaths {
            spec_replicas: ".spec.replicas".into(),
            status_replicas: ".status.replicas".into(),
            label_selector: None,
            label_selector_object: None,
        };
        let mut out = Vec::new();
        scale_accessors(&scale, &json!({"spec": {"replicas": "x"}}), &mut out);
        scale_accessors(&scale, &json!({"spec": []}), &mut out);
        scale_accessors(
            &scale,
            &json!({"spec": {"replicas": 1.5}, "status": {}}),
            &mut out,
        );
        scale_accessors(&scale, &json!({"spec": {"replicas": 2}}), &mut out);
        scale_accessors(&scale, &json!({"spec": {"replicas": -1}}), &mut out);
        scale_accessors(
            &scale,
            &json!({"status": {"replicas": 3000000000u64}}),
            &mut out,
        );
        let got: Vec<String> = out
            .iter()
            .map(|c| format!("{}: {}", c.field, c.message))
            .collect();
        assert_eq!(
            got,
            [
                ".spec.replicas: Invalid value: 0: .spec.replicas accessor error: x is of the type string, expected int64",
                ".spec.replicas: Invalid value: 0: .spec.replicas accessor error: [] is of the type []interface {}, expected map[string]interface{}",
                ".spec.replicas: Invalid value: 0: .spec.replicas accessor error: 1.5 is of the type float64, expected int64",
                ".spec.replicas: Invalid value: -1: should be a non-negative integer",
                ".status.replicas: Invalid value: 3000000000: should be less than or equal to 2147483647",
            ]
        );
    }
}
