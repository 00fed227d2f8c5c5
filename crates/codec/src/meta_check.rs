//! Checking that a value decodes as kcache-core's `ObjectMeta` without building one.
//!
//! Why: a decoder that only checks an object and drops the result (kcache-compact checks every
//! `Compact<K>` it builds, see `any_json`) otherwise allocates and frees every string of the
//! metadata, for each object a cache takes in: for a metadata-only informer that was a third of
//! the check's cost, and the check a seventh of the client's work. [`check_object_meta`] reads
//! the same members as `ObjectMeta`'s `Deserialize` (both through [`MetaKey`]) and accepts and
//! rejects the same values, building nothing; owner references and `managedFields` entries are
//! checked by twins of their derived decoders whose members build nothing. A checking decoder
//! recognizes `ObjectMeta` by the field list it passes to `deserialize_struct`
//! ([`is_object_meta`]), runs the check instead, and hands the visitor an empty map.
//! kcache-core's tests hold the check to agreeing with decoding.

use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

use crate::any_json::AnyJson;
use crate::meta_fields::{MetaField, MetaKey, OBJECT_META_FIELDS};

/// Whether `fields`, as a `deserialize_struct` call was given them, are kcache-core's
/// `ObjectMeta`'s ([`OBJECT_META_FIELDS`], recognized by address): a decoder that only checks
/// may then check the value with [`check_object_meta`] instead of decoding it.
pub fn is_object_meta(fields: &[&str]) -> bool {
    std::ptr::eq(fields, OBJECT_META_FIELDS.as_slice())
}

/// Ok exactly when `d`'s value decodes as kcache-core's `ObjectMeta` (the same error
/// otherwise), without building it (see the module docs).
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
        use MetaField as F;
        while let Some(key) = map.next_key::<MetaKey<()>>()? {
            let field = match key {
                MetaKey::Field(field) => field,
                MetaKey::Other(()) => {
                    map.next_value::<AnyJson>()?;
                    continue;
                }
            };
            match field {
                F::Name => map.next_value::<Str>().map(drop)?,
                F::GenerateName
                | F::Namespace
                | F::Uid
                | F::ResourceVersion
                | F::CreationTimestamp
                | F::DeletionTimestamp => map.next_value::<Option<Str>>().map(drop)?,
                F::Generation | F::DeletionGracePeriodSeconds => {
                    map.next_value::<Option<i64>>().map(drop)?
                }
                F::Labels | F::Annotations => map.next_value::<Option<StrMap>>().map(drop)?,
                F::OwnerReferences => map
                    .next_value::<Option<SeqOf<twins::OwnerReference>>>()
                    .map(drop)?,
                F::Finalizers => map.next_value::<Option<SeqOf<Str>>>().map(drop)?,
                F::ManagedFields => map
                    .next_value::<Option<SeqOf<twins::ManagedFieldsEntry>>>()
                    .map(drop)?,
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

/// What kcache-core's `OwnerReference` and `ManagedFieldsEntry` derives accept: twins with the
/// same names (they are in the derives' messages), the same members in the same order (a
/// derived decoder also takes them as a sequence), and members that build nothing (`fieldsV1`
/// takes any JSON).
mod twins {
    use serde::de::IgnoredAny;

    use super::Str;

    #[derive(serde::Deserialize)]
    #[serde(rename_all = "camelCase")]
    #[allow(dead_code)] // decoded to be checked, never read
    pub(super) struct OwnerReference {
        api_version: Str,
        kind: Str,
        name: Str,
        uid: Str,
        #[serde(default)]
        controller: Option<bool>,
        #[serde(default)]
        block_owner_deletion: Option<bool>,
    }

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
    use super::*;

    #[test]
    fn object_meta_is_known_by_its_field_list_not_by_equal_names() {
        assert!(is_object_meta(&OBJECT_META_FIELDS));
        let copy: Vec<&str> = OBJECT_META_FIELDS.to_vec();
        assert!(!is_object_meta(&copy));
        assert!(!is_object_meta(&["name"]));
    }
}
