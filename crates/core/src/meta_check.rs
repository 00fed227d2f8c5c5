//! Checking that a value decodes as `ObjectMeta` without building one.
//!
//! Why: a decoder that only checks an object and drops the result (kcache-compact checks every
//! `Compact<K>` it builds, see `any_json`) otherwise allocates and frees every string of the
//! metadata, for each object a cache takes in: for a metadata-only informer that was a third of
//! the check's cost, and the check a seventh of the client's work. [`check_object_meta`] reads
//! the same members as `ObjectMeta`'s `Deserialize` (one key enum, matched exhaustively by
//! both) and accepts and rejects the same values, building nothing but owner references (rare,
//! and their required fields are the derive's to judge); a `managedFields` entry is checked by
//! a twin of its derived decoder whose members build nothing. A checking decoder asks
//! [`checks_without_building`] whether the type it is asked for is `ObjectMeta`, runs the check
//! instead, and hands the visitor an empty map.

use std::any::type_name;
use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

use crate::any_json::AnyJson;
use crate::meta::{ObjectMeta, OwnerReference};
use crate::meta_de::MetaKey;

/// Whether a decoder that only checks may check a `T` with [`check_object_meta`] instead of
/// decoding it: true for [`ObjectMeta`].
pub fn checks_without_building<T: ?Sized>() -> bool {
    type_name::<T>() == type_name::<ObjectMeta>()
}

/// Ok exactly when `d`'s value decodes as [`ObjectMeta`] (the same error otherwise), without
/// building it (see the module docs).
pub fn check_object_meta<'de, D: Deserializer<'de>>(d: D) -> Result<(), D::Error> {
    d.deserialize_map(MetaCheck)
}

struct MetaCheck;

impl<'de> Visitor<'de> for MetaCheck {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("object metadata (a JSON object)")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<MetaKey<()>>()? {
            match key {
                MetaKey::Name => map.next_value::<Str>().map(drop)?,
                MetaKey::GenerateName
                | MetaKey::Namespace
                | MetaKey::Uid
                | MetaKey::ResourceVersion
                | MetaKey::CreationTimestamp
                | MetaKey::DeletionTimestamp => map.next_value::<Option<Str>>().map(drop)?,
                MetaKey::Generation | MetaKey::DeletionGracePeriodSeconds => {
                    map.next_value::<Option<i64>>().map(drop)?
                }
                MetaKey::Labels | MetaKey::Annotations => {
                    map.next_value::<Option<StrMap>>().map(drop)?
                }
                MetaKey::OwnerReferences => {
                    map.next_value::<Option<Vec<OwnerReference>>>().map(drop)?
                }
                MetaKey::Finalizers => map.next_value::<Option<SeqOf<Str>>>().map(drop)?,
                MetaKey::ManagedFields => map
                    .next_value::<Option<SeqOf<entry_check::ManagedFieldsEntry>>>()
                    .map(drop)?,
                MetaKey::Other(()) => map.next_value::<AnyJson>().map(drop)?,
            }
        }
        Ok(())
    }
}

/// What `String` accepts: a string, or bytes that are UTF-8.
struct Str;

impl<'de> Deserialize<'de> for Str {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Str;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_str<E: de::Error>(self, _: &str) -> Result<Str, E> {
                Ok(Str)
            }
            fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<Str, E> {
                std::str::from_utf8(v)
                    .map(|_| Str)
                    .map_err(|_| E::invalid_value(de::Unexpected::Bytes(v), &self))
            }
        }
        d.deserialize_string(V)
    }
}

/// What `BTreeMap<String, String>` accepts (a repeated key is no error there either).
struct StrMap;

impl<'de> Deserialize<'de> for StrMap {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = StrMap;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a map")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<StrMap, A::Error> {
                while map.next_entry::<Str, Str>()?.is_some() {}
                Ok(StrMap)
            }
        }
        d.deserialize_map(V)
    }
}

/// What `Vec<T>` accepts, each element checked as `C` (`Str` for `Vec<String>`).
struct SeqOf<C>(PhantomData<C>);

impl<'de, C: Deserialize<'de>> Deserialize<'de> for SeqOf<C> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<C>(PhantomData<C>);
        impl<'de, C: Deserialize<'de>> Visitor<'de> for V<C> {
            type Value = SeqOf<C>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a sequence")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<SeqOf<C>, A::Error> {
                while seq.next_element::<C>()?.is_some() {}
                Ok(SeqOf(PhantomData))
            }
        }
        d.deserialize_seq(V(PhantomData))
    }
}

/// What `ManagedFieldsEntry`'s derive accepts: a twin with the same name (it is in the
/// derive's messages), the same members in the same order (a derived decoder also takes them
/// as a sequence), and members that build nothing (`fieldsV1` takes any JSON).
mod entry_check {
    use serde::de::IgnoredAny;

    use super::Str;

    #[derive(serde::Deserialize)]
    #[serde(rename_all = "camelCase")]
    #[allow(dead_code)] // decoded to be checked, never read
    pub(super) struct ManagedFieldsEntry {
        #[serde(default)]
        manager: Option<Str>,
        #[serde(default)]
        operation: Option<Str>,
        #[serde(default)]
        api_version: Option<Str>,
        #[serde(default)]
        time: Option<Str>,
        #[serde(default)]
        fields_type: Option<Str>,
        #[serde(default)]
        fields_v1: Option<IgnoredAny>,
        #[serde(default)]
        subresource: Option<Str>,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    use super::*;

    /// Every member valid, null, and of each wrong type: the check accepts what decoding
    /// accepts and fails with the same message.
    #[test]
    fn the_check_agrees_with_decoding() {
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
        for key in [
            "name",
            "generateName",
            "namespace",
            "uid",
            "resourceVersion",
            "generation",
            "creationTimestamp",
            "deletionTimestamp",
            "deletionGracePeriodSeconds",
            "labels",
            "annotations",
            "ownerReferences",
            "finalizers",
            "managedFields",
            "other",
        ] {
            for value in &wrong {
                cases.push(json!({ key: value }));
            }
        }
        cases.push(json!({"labels": {"a": 1}}));
        cases.push(json!({"finalizers": ["f", null]}));
        cases.push(json!({"ownerReferences": [{"apiVersion": "v1", "kind": "Pod"}]}));
        // managedFields entries: every member valid, null and wrong; not an object; as a
        // sequence (a derived decoder takes that too).
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
            let checked = check_object_meta(case).map_err(|e| e.to_string());
            assert_eq!(checked, decoded, "{case}");
            rejected += usize::from(decoded.is_err());
        }
        assert!(rejected > 40, "the table has wrong values: {rejected}");
    }

    #[test]
    fn only_object_meta_is_checked_this_way() {
        assert!(checks_without_building::<ObjectMeta>());
        assert!(!checks_without_building::<OwnerReference>());
        assert!(!checks_without_building::<crate::PartialObjectMeta>());
    }
}
