//! Metadata-only objects (`metav1.PartialObjectMetadata`): what the API server sends for
//! `Accept: application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1`.

use std::fmt;
use std::marker::PhantomData;

use serde::{Serialize, Serializer};

use crate::dynamic::DynamicObject;
use crate::meta::{ObjectMeta, TypeMeta};
use crate::resource::Resource;

/// The group/version of `PartialObjectMetadata` and `PartialObjectMetadataList`.
pub const META_API_VERSION: &str = "meta.k8s.io/v1";

/// An object of type `K` with only its metadata (client-go's `metav1.PartialObjectMetadata`,
/// kube-rs's `PartialObjectMeta<K>`): the cheapest way to cache many objects when only names,
/// labels, annotations, owners and versions matter.
///
/// `K` only says which resource the metadata is of (`Resource` is forwarded from it, so
/// `Api::<PartialObjectMeta<ConfigMap>>` paths are ConfigMap paths); nothing of `K` is stored.
/// `PartialObjectMeta` (with `K` = [`DynamicObject`]) is the runtime-typed form, as client-go's
/// metadata client returns for any GVR.
pub struct PartialObjectMeta<K = DynamicObject> {
    /// `apiVersion: meta.k8s.io/v1`, `kind: PartialObjectMetadata` as the server sends them.
    pub types: Option<TypeMeta>,
    /// The object's metadata.
    pub metadata: ObjectMeta,
    _k: PhantomData<fn() -> K>,
}

impl<K> PartialObjectMeta<K> {
    /// Metadata with `apiVersion`/`kind` set as the server sends them.
    pub fn new(metadata: ObjectMeta) -> Self {
        PartialObjectMeta {
            types: Some(TypeMeta {
                api_version: META_API_VERSION.into(),
                kind: "PartialObjectMetadata".into(),
            }),
            metadata,
            _k: PhantomData,
        }
    }

    /// Metadata with the `apiVersion`/`kind` that came with it (`None` if they did not).
    pub(crate) fn from_parts(types: Option<TypeMeta>, metadata: ObjectMeta) -> Self {
        PartialObjectMeta {
            types,
            metadata,
            _k: PhantomData,
        }
    }
}

impl<K> Default for PartialObjectMeta<K> {
    fn default() -> Self {
        PartialObjectMeta::new(ObjectMeta::default())
    }
}

impl<K> Clone for PartialObjectMeta<K> {
    fn clone(&self) -> Self {
        PartialObjectMeta {
            types: self.types.clone(),
            metadata: self.metadata.clone(),
            _k: PhantomData,
        }
    }
}

impl<K> PartialEq for PartialObjectMeta<K> {
    fn eq(&self, other: &Self) -> bool {
        self.types == other.types && self.metadata == other.metadata
    }
}

impl<K> fmt::Debug for PartialObjectMeta<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PartialObjectMeta")
            .field("types", &self.types)
            .field("metadata", &self.metadata)
            .finish()
    }
}

/// The wire shape, without the marker type (so serde needs no bound on `K`). Decoding is by
/// hand, in `meta_de`.
#[derive(Serialize)]
struct Wire<T, M> {
    #[serde(flatten, default, skip_serializing_if = "Option::is_none")]
    types: Option<T>,
    #[serde(default)]
    metadata: M,
}

impl<K> Serialize for PartialObjectMeta<K> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        Wire {
            types: self.types.as_ref(),
            metadata: &self.metadata,
        }
        .serialize(s)
    }
}

impl<K: Resource> Resource for PartialObjectMeta<K> {
    const GROUP: &'static str = K::GROUP;
    const VERSION: &'static str = K::VERSION;
    const KIND: &'static str = K::KIND;
    const PLURAL: &'static str = K::PLURAL;
    const NAMESPACED: bool = K::NAMESPACED;
}

impl<K: 'static> crate::Object for PartialObjectMeta<K> {
    fn name(&self) -> &str {
        &self.metadata.name
    }
    fn namespace(&self) -> Option<&str> {
        self.metadata.namespace.as_deref()
    }
    fn resource_version(&self) -> Option<&str> {
        self.metadata.resource_version.as_deref()
    }
    fn uid(&self) -> Option<&str> {
        self.metadata.uid.as_deref()
    }
    fn labels(&self) -> Option<&std::collections::BTreeMap<String, String>> {
        self.metadata.labels.as_ref()
    }
    fn annotations(&self) -> Option<&std::collections::BTreeMap<String, String>> {
        self.metadata.annotations.as_ref()
    }
    fn generation(&self) -> Option<i64> {
        self.metadata.generation
    }
    fn is_deleting(&self) -> bool {
        self.metadata.deletion_timestamp.is_some()
    }
    fn has_finalizer(&self, name: &str) -> bool {
        self.metadata
            .finalizers
            .as_ref()
            .is_some_and(|f| f.iter().any(|x| x == name))
    }
    fn owner_references(&self) -> Vec<crate::OwnerRef<'_>> {
        self.metadata
            .owner_references
            .iter()
            .flatten()
            .map(crate::OwnerRef::from)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Object;

    struct Widget;
    impl Resource for Widget {
        const GROUP: &'static str = "example.com";
        const VERSION: &'static str = "v1";
        const KIND: &'static str = "Widget";
        const PLURAL: &'static str = "widgets";
        const NAMESPACED: bool = true;
    }

    #[test]
    fn decodes_what_the_server_sends_and_forwards_the_resource() {
        let json = serde_json::json!({
            "kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
            "metadata": {"name": "a", "namespace": "ns", "resourceVersion": "7",
                "labels": {"app": "x"}, "managedFields": [{"manager": "m"}]}
        });
        let p: PartialObjectMeta<Widget> = serde_json::from_value(json.clone()).unwrap();
        assert_eq!((p.name(), p.namespace()), ("a", Some("ns")));
        assert_eq!(p.label("app"), Some("x"));
        assert_eq!(p.types.as_ref().unwrap().kind, "PartialObjectMetadata");
        assert_eq!(serde_json::to_value(&p).unwrap(), json);
        assert_eq!(
            PartialObjectMeta::<Widget>::api_resource(),
            Widget::api_resource()
        );
        let empty = PartialObjectMeta::<Widget>::default();
        assert_eq!(empty.types, p.types);
        assert_eq!(empty.metadata, ObjectMeta::default());
    }
}
