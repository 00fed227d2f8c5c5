//! Objects whose type is known only at runtime.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::meta::{ObjectMeta, TypeMeta};

/// An object of any kind: typed metadata, everything else kept as JSON.
///
/// Mirrors client-go's `unstructured.Unstructured`, with `metadata` parsed once so the machinery
/// reads keys and versions without walking JSON. Reading and writing one back is lossless: every
/// field that is not typed here is kept in `data` (and in `metadata.other`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DynamicObject {
    /// `apiVersion` and `kind`, when the server sent them.
    #[serde(flatten, default, skip_serializing_if = "Option::is_none")]
    pub types: Option<TypeMeta>,
    /// The object's metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// Every other top-level field (`spec`, `status`, `data`, ...).
    #[serde(flatten)]
    pub data: serde_json::Map<String, serde_json::Value>,
}

impl DynamicObject {
    /// An object with this name and nothing else.
    pub fn new(name: &str) -> Self {
        DynamicObject {
            metadata: ObjectMeta {
                name: name.to_string(),
                ..ObjectMeta::default()
            },
            ..DynamicObject::default()
        }
    }

    /// Sets the namespace (builder style).
    pub fn within(mut self, namespace: &str) -> Self {
        self.metadata.namespace = Some(namespace.to_string());
        self
    }

    /// Sets the resourceVersion (builder style).
    pub fn with_resource_version(mut self, rv: &str) -> Self {
        self.metadata.resource_version = Some(rv.to_string());
        self
    }

    /// Sets a label (builder style).
    pub fn with_label(mut self, key: &str, value: &str) -> Self {
        self.metadata
            .labels
            .get_or_insert_with(BTreeMap::new)
            .insert(key.to_string(), value.to_string());
        self
    }
}

crate::impl_object_for_metadata!(DynamicObject);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Object;

    #[test]
    fn round_trips_losslessly() {
        let json = serde_json::json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "a", "namespace": "ns", "resourceVersion": "7",
                "labels": {"app": "x"},
                "managedFields": [{"manager": "kubectl", "operation": "Update"}],
                "ownerReferences": [{"apiVersion": "v1", "kind": "Foo", "name": "f", "uid": "u1",
                    "controller": true}]},
            "data": {"k": "v"}, "immutable": false
        });
        let obj: DynamicObject = serde_json::from_value(json.clone()).unwrap();
        assert_eq!(obj.name(), "a");
        assert_eq!(obj.namespace(), Some("ns"));
        assert_eq!(obj.resource_version(), Some("7"));
        assert_eq!(obj.label("app"), Some("x"));
        assert_eq!(obj.types.as_ref().unwrap().kind, "ConfigMap");
        assert_eq!(serde_json::to_value(&obj).unwrap(), json);
    }

    #[test]
    fn builds() {
        let o = DynamicObject::new("a")
            .within("b")
            .with_resource_version("3")
            .with_label("x", "y");
        assert_eq!(crate::ObjectKey::of(&o).as_str(), "b/a");
        assert_eq!(o.label("x"), Some("y"));
        assert!(o.types.is_none());
        assert_eq!(
            serde_json::to_value(&o).unwrap()["metadata"]["labels"]["x"],
            "y"
        );
    }
}
