//! Decoding `ObjectMeta` and `PartialObjectMeta` without `#[serde(flatten)]`.
//!
//! Why by hand: serde's derive for a struct with a flattened field first buffers every member
//! of the object into its private `Content` tree (each string allocated), then decodes the
//! fields from that copy. A metadata-only list of 10k ConfigMaps spent most of its decoding time
//! there, twice per item (`PartialObjectMeta` flattens `TypeMeta`, `ObjectMeta` flattens the
//! fields it does not type). These visitors read each member once, straight from the decoder;
//! the JSON form accepted and the values produced are the derive's, except that a repeated key
//! keeps its last value instead of failing (as `serde_json::Value` and the API server's
//! decoder do). `ObjectMeta`'s keys are kcache-codec's table (`MetaKey`), which its checker
//! (`check_object_meta`) and the protobuf decoder read too.

use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, Visitor};

use kcache_codec::{AnyJson, MetaField, MetaKey, OBJECT_META_FIELDS, OBJECT_META_NAME};

use crate::meta::{ObjectMeta, TypeMeta};
use crate::partial::PartialObjectMeta;

impl<'de> Deserialize<'de> for ObjectMeta {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct MetaVisitor;
        impl<'de> Visitor<'de> for MetaVisitor {
            type Value = ObjectMeta;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("object metadata (a JSON object)")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ObjectMeta, A::Error> {
                let mut m = ObjectMeta::default();
                while let Some(key) = map.next_key::<MetaKey<String>>()? {
                    use MetaField as F;
                    let field = match key {
                        MetaKey::Field(field) => field,
                        MetaKey::Other(key) => {
                            let AnyJson(value) = map.next_value()?;
                            m.other.insert(key, value);
                            continue;
                        }
                    };
                    match field {
                        F::Name => m.name = map.next_value()?,
                        F::GenerateName => m.generate_name = map.next_value()?,
                        F::Namespace => m.namespace = map.next_value()?,
                        F::Uid => m.uid = map.next_value()?,
                        F::ResourceVersion => m.resource_version = map.next_value()?,
                        F::Generation => m.generation = map.next_value()?,
                        F::CreationTimestamp => m.creation_timestamp = map.next_value()?,
                        F::DeletionTimestamp => m.deletion_timestamp = map.next_value()?,
                        F::DeletionGracePeriodSeconds => {
                            m.deletion_grace_period_seconds = map.next_value()?
                        }
                        F::Labels => m.labels = map.next_value()?,
                        F::Annotations => m.annotations = map.next_value()?,
                        F::OwnerReferences => m.owner_references = map.next_value()?,
                        F::Finalizers => m.finalizers = map.next_value()?,
                        F::ManagedFields => m.managed_fields = map.next_value()?,
                    }
                }
                Ok(m)
            }
        }
        // As a struct with kcache-codec's field list, by which a checking decoder
        // (kcache-compact's) recognizes it; serde_json reads a struct as it reads a map.
        d.deserialize_struct(OBJECT_META_NAME, &OBJECT_META_FIELDS, MetaVisitor)
    }
}

/// A `PartialObjectMeta` member's key.
enum PartialKey {
    ApiVersion,
    Kind,
    Metadata,
    Other,
}

impl<'de> Deserialize<'de> for PartialKey {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl Visitor<'_> for KeyVisitor {
            type Value = PartialKey;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a field name")
            }
            fn visit_str<E: de::Error>(self, key: &str) -> Result<PartialKey, E> {
                Ok(match key {
                    "apiVersion" => PartialKey::ApiVersion,
                    "kind" => PartialKey::Kind,
                    "metadata" => PartialKey::Metadata,
                    _ => PartialKey::Other,
                })
            }
        }
        d.deserialize_identifier(KeyVisitor)
    }
}

/// Any object read as its metadata: `apiVersion` and `kind` (kept as `types` when both are
/// there, as the flattened `Option<TypeMeta>` was), `metadata`, and every other member skipped
/// unbuffered (a full object's `spec` or `data` costs only the scan).
impl<'de, K> Deserialize<'de> for PartialObjectMeta<K> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct PartialVisitor<K>(PhantomData<fn() -> K>);
        impl<'de, K> Visitor<'de> for PartialVisitor<K> {
            type Value = PartialObjectMeta<K>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object with metadata (a JSON object)")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let (mut api_version, mut kind, mut metadata) = (None, None, None);
                while let Some(key) = map.next_key::<PartialKey>()? {
                    match key {
                        PartialKey::ApiVersion => api_version = Some(map.next_value()?),
                        PartialKey::Kind => kind = Some(map.next_value()?),
                        PartialKey::Metadata => metadata = Some(map.next_value()?),
                        PartialKey::Other => drop(map.next_value::<IgnoredAny>()?),
                    }
                }
                let types = match (api_version, kind) {
                    (Some(api_version), Some(kind)) => Some(TypeMeta { api_version, kind }),
                    _ => None,
                };
                Ok(PartialObjectMeta::from_parts(
                    types,
                    metadata.unwrap_or_default(),
                ))
            }
        }
        d.deserialize_map(PartialVisitor(PhantomData))
    }
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;
    use serde_json::{json, Value};

    use crate::meta::ObjectMeta;
    use crate::partial::PartialObjectMeta;

    #[test]
    fn every_member_lands_where_the_derive_put_it() {
        let wire = json!({
            "kind": "PartialObjectMetadata",
            "apiVersion": "meta.k8s.io/v1",
            "spec": {"ignored": [1, 2, {"deep": null}]},
            "metadata": {
                "name": "a", "namespace": "ns", "uid": "u-1", "resourceVersion": "7",
                "generation": 2, "creationTimestamp": "2020-01-01T00:00:00Z",
                "deletionTimestamp": null, "deletionGracePeriodSeconds": 30,
                "labels": {"app": "x"}, "annotations": {"n": "v"},
                "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": "u-2",
                                     "controller": true}],
                "finalizers": ["f"],
                "managedFields": [{"manager": "m", "fieldsV1": {"f:data": {}}}],
                "selfLink": "/x"
            }
        });
        let p: PartialObjectMeta = serde_json::from_value(wire.clone()).unwrap();
        let types = p.types.as_ref().unwrap();
        assert_eq!(
            (types.api_version.as_str(), types.kind.as_str()),
            ("meta.k8s.io/v1", "PartialObjectMetadata")
        );
        let m = &p.metadata;
        assert_eq!((m.name.as_str(), m.namespace.as_deref()), ("a", Some("ns")));
        assert_eq!(
            (m.uid.as_deref(), m.resource_version.as_deref()),
            (Some("u-1"), Some("7"))
        );
        assert_eq!(
            (m.generation, m.deletion_grace_period_seconds),
            (Some(2), Some(30))
        );
        assert_eq!(m.deletion_timestamp, None);
        assert_eq!(m.labels.as_ref().unwrap()["app"], "x");
        assert_eq!(
            m.owner_references.as_ref().unwrap()[0].controller,
            Some(true)
        );
        assert_eq!(m.finalizers.as_deref(), Some(&["f".to_string()][..]));
        let entry = &m.managed_fields.as_ref().unwrap()[0];
        assert_eq!(entry.manager.as_deref(), Some("m"));
        assert_eq!(entry.fields_v1.as_ref().unwrap().json(), r#"{"f:data":{}}"#);
        assert!(!m.other.contains_key("managedFields"));
        assert_eq!(m.other["selfLink"], "/x");
        // Written back, the metadata is what was read.
        assert_eq!(
            serde_json::to_value(m).unwrap()["managedFields"],
            wire["metadata"]["managedFields"]
        );
    }

    #[test]
    fn types_need_both_members_and_metadata_defaults() {
        let p: PartialObjectMeta = serde_json::from_value(json!({"kind": "X"})).unwrap();
        assert!(p.types.is_none());
        assert_eq!(p.metadata, ObjectMeta::default());
    }

    #[test]
    fn a_wrongly_typed_field_is_an_error_naming_what_was_expected() {
        let err = serde_json::from_value::<ObjectMeta>(json!({"labels": ["not", "a", "map"]}))
            .unwrap_err();
        assert!(err.to_string().contains("map"), "{err}");
        let err = serde_json::from_value::<PartialObjectMeta>(json!([1])).unwrap_err();
        assert!(err.to_string().contains("JSON object"), "{err}");
    }

    /// Every member valid, null, and of each wrong type: kcache-codec's check accepts what
    /// decoding accepts and fails with the same message.
    #[test]
    fn the_codec_check_agrees_with_decoding() {
        let mut cases = vec![
            json!({}),
            json!({"name": "a", "namespace": "ns", "uid": "u", "resourceVersion": "1",
                   "generation": 3, "creationTimestamp": "2020-01-01T00:00:00Z",
                   "deletionTimestamp": null, "deletionGracePeriodSeconds": 30,
                   "labels": {"a": "b"}, "annotations": {}, "finalizers": ["f"],
                   "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": "p",
                                        "uid": "u"}],
                   "managedFields": [{"fieldsV1": {"f:x": {}}}], "selfLink": 7}),
            json!([]),
            json!("metadata"),
            json!(null),
        ];
        let wrong: [Value; 6] = [
            json!(null),
            json!(1),
            json!(-1.5),
            json!("s"),
            json!(["s"]),
            json!({"k": "v"}),
        ];
        for &key in kcache_codec::OBJECT_META_FIELDS.iter().chain(&["other"]) {
            for value in &wrong {
                cases.push(json!({ key: value }));
            }
        }
        cases.push(json!({"labels": {"a": 1}}));
        cases.push(json!({"finalizers": ["f", null]}));
        cases.push(json!({"ownerReferences": [{"apiVersion": "v1", "kind": "Pod"}]}));
        cases.push(json!({"ownerReferences": [["v1", "Pod", "p", "u", true]]}));
        // Owner references and managedFields entries: every member valid, null and wrong; not
        // an object; as a sequence (a derived decoder takes that too).
        for key in [
            "apiVersion",
            "kind",
            "name",
            "uid",
            "controller",
            "blockOwnerDeletion",
        ] {
            let mut owner = json!({"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": "u"});
            for value in &wrong {
                owner[key] = value.clone();
                cases.push(json!({ "ownerReferences": [owner.clone()] }));
            }
        }
        for key in [
            "manager",
            "operation",
            "apiVersion",
            "time",
            "fieldsType",
            "fieldsV1",
            "subresource",
            "unknown",
        ] {
            cases.push(json!({"managedFields": [{ key: "v" }]}));
            for value in &wrong {
                cases.push(json!({"managedFields": [{ key: value }]}));
            }
        }
        for entry in [
            json!(null),
            json!(1),
            json!("s"),
            json!(["m", "Update"]),
            json!([1]),
        ] {
            cases.push(json!({"managedFields": [entry]}));
        }
        let mut rejected = 0;
        for case in &cases {
            let decoded = ObjectMeta::deserialize(case)
                .map(drop)
                .map_err(|e| e.to_string());
            let checked = kcache_codec::check_object_meta(case).map_err(|e| e.to_string());
            assert_eq!(checked, decoded, "{case}");
            rejected += usize::from(decoded.is_err());
        }
        assert!(rejected > 60, "the table has wrong values: {rejected}");
    }
}
