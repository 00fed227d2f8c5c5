//! The built-in kinds' schemas, as kube-apiserver 1.20.2 publishes them in `/openapi/v2`
//! (its definitions, checked in gzipped by `cargo xtask discovery-snapshot`), handed out per
//! group/version in the `/openapi/v3` documents' `components.schemas`. kubectl reads a
//! group/version's v3 document when the server has one, and `kubectl explain` walks those
//! schemas: without them it fails where 1.20.2 (through its v2 document) answers.

use std::io::Read as _;
use std::sync::OnceLock;

use serde_json::{Map, Value};

const DEFINITIONS_GZ: &[u8] =
    include_bytes!("../../testdata/kube-apiserver-1.20.2/openapi-v2-definitions.json.gz");

const V2_REF: &str = "#/definitions/";
const V3_REF: &str = "#/components/schemas/";

/// The definitions, decompressed and parsed once.
pub(crate) fn definitions() -> &'static Map<String, Value> {
    static DEFINITIONS: OnceLock<Map<String, Value>> = OnceLock::new();
    DEFINITIONS.get_or_init(|| gunzip_json(DEFINITIONS_GZ, "openapi-v2-definitions.json.gz"))
}

/// A checked-in gzipped JSON object (one of `cargo xtask discovery-snapshot`'s files).
pub(crate) fn gunzip_json(gz: &[u8], name: &str) -> Map<String, Value> {
    let mut text = Vec::new();
    flate2::read::GzDecoder::new(gz)
        .read_to_end(&mut text)
        .unwrap_or_else(|e| panic!("the embedded {name} is not gzip: {e}"));
    serde_json::from_slice(&text)
        .unwrap_or_else(|e| panic!("the embedded {name} is not a JSON object: {e}"))
}

/// Whether the definition is one of `group/version`'s kinds.
fn is_kind_of(schema: &Value, group: &str, version: &str) -> bool {
    schema["x-kubernetes-group-version-kind"]
        .as_array()
        .is_some_and(|gvks| {
            gvks.iter()
                .any(|g| g["group"] == group && g["version"] == version)
        })
}

/// Collects the definitions `schema` refers to (`$ref`), recursively.
fn refs(schema: &Value, out: &mut Vec<String>) {
    match schema {
        Value::Object(m) => {
            if let Some(name) = m
                .get("$ref")
                .and_then(Value::as_str)
                .and_then(|r| r.strip_prefix(V2_REF))
            {
                out.push(name.to_string());
            }
            m.values().for_each(|v| refs(v, out));
        }
        Value::Array(a) => a.iter().for_each(|v| refs(v, out)),
        _ => {}
    }
}

/// The schema with its references pointing into `components.schemas`.
pub(crate) fn as_v3(schema: &Value) -> Value {
    match schema {
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, v)| match (k.as_str(), v.as_str()) {
                    ("$ref", Some(r)) => (k.clone(), Value::String(r.replace(V2_REF, V3_REF))),
                    _ => (k.clone(), as_v3(v)),
                })
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(as_v3).collect()),
        other => other.clone(),
    }
}

/// The schemas of `group/version`'s kinds and of every definition they reach, keyed by
/// definition name (empty for a group/version 1.20.2 does not build in, such as a CRD's).
pub(crate) fn schemas_for(group: &str, version: &str) -> Map<String, Value> {
    let kinds = definitions()
        .iter()
        .filter(|(_, s)| is_kind_of(s, group, version))
        .map(|(name, _)| name.clone())
        .collect();
    reached(kinds)
}

/// The definitions named in `todo` and every definition they reach, for `components.schemas`.
pub(crate) fn reached(mut todo: Vec<String>) -> Map<String, Value> {
    let defs = definitions();
    let mut out = Map::new();
    while let Some(name) = todo.pop() {
        if out.contains_key(&name) {
            continue;
        }
        if let Some(schema) = defs.get(&name) {
            refs(schema, &mut todo);
            out.insert(name, as_v3(schema));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_group_version_gets_its_kinds_and_what_they_reach() {
        let core = schemas_for("", "v1");
        let service = &core["io.k8s.api.core.v1.Service"];
        assert_eq!(
            service["properties"]["spec"]["$ref"],
            "#/components/schemas/io.k8s.api.core.v1.ServiceSpec"
        );
        assert!(core.contains_key("io.k8s.api.core.v1.ServiceSpec"));
        assert!(core.contains_key("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"));
        assert!(!core.contains_key("io.k8s.api.apps.v1.Deployment"));
        assert!(schemas_for("example.com", "v1").is_empty());
    }
}
