//! A serde `Deserializer` over a borrowed `CompactValue`: a typed object (a k8s-openapi `Pod`)
//! is built straight from the shared tree, with no intermediate `serde_json::Value` and no JSON
//! text. Strings are handed out borrowed, so the only allocations are the typed object's own.
//!
//! It behaves as `serde_json::Value`'s deserializer does (that is what makes a typed read equal
//! to decoding the JSON): numbers go through `serde_json::Number`, `null` is `None`, an enum is a
//! string (unit variant) or a one-member object, unknown struct fields are ignored unless the
//! type says `deny_unknown_fields`.
//!
//! [`Reader::checking`] is the same decoder for a check whose result is dropped
//! (`Compact::from_object`): a value whose type accepts every JSON value
//! (`kcache_codec::accepts_any_json`, recognized by the newtype name it asks for:
//! `managedFields[].fieldsV1`, `ObjectMeta`'s untyped members) gets `null` instead of its
//! subtree (a type asking for serde_json's `RawValue` handshake gets the text `null`), since the
//! subtree cannot make the check fail, and kcache-core's `ObjectMeta` (recognized by the field
//! list it asks for, `kcache_codec::is_object_meta`) is checked by
//! `kcache_codec::check_object_meta`, which builds no strings, then handed an empty map.

use kcache_codec::{raw_value_answer, RAW_VALUE_TOKEN};
use serde::de::{
    self, DeserializeSeed, Deserializer, EnumAccess, MapAccess, SeqAccess, VariantAccess, Visitor,
};
use serde::forward_to_deserialize_any;
use serde_json::Error;

use super::value::CompactValue;

/// What a skipped value is read as.
static NULL: CompactValue = CompactValue::Null;

/// The decoder over one value of a tree; `checking` is carried down to every value under it.
#[derive(Clone, Copy)]
pub(crate) struct Reader<'de> {
    value: &'de CompactValue,
    checking: bool,
}

impl<'de> Reader<'de> {
    /// The decoder for a check whose result is dropped (see the module docs).
    pub(crate) fn checking(value: &'de CompactValue) -> Self {
        Reader {
            value,
            checking: true,
        }
    }

    /// The decoder of `value`, in this reader's mode.
    fn of(self, value: &'de CompactValue) -> Self {
        Reader { value, ..self }
    }
}

impl<'de> Deserializer<'de> for &'de CompactValue {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        reading(self).deserialize_any(visitor)
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        reading(self).deserialize_option(visitor)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        reading(self).deserialize_newtype_struct(name, visitor)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        reading(self).deserialize_enum(name, variants, visitor)
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_unit()
    }

    forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        unit unit_struct seq tuple tuple_struct map struct identifier
    }
}

/// The decoder of a typed read: every value decoded in full.
fn reading(value: &CompactValue) -> Reader<'_> {
    Reader {
        value,
        checking: false,
    }
}

impl<'de> Deserializer<'de> for Reader<'de> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.value {
            CompactValue::Null => visitor.visit_unit(),
            CompactValue::Bool(b) => visitor.visit_bool(*b),
            CompactValue::Number(n) => n.deserialize_any(visitor),
            CompactValue::String(s) => visitor.visit_borrowed_str(s),
            CompactValue::Array(a) => {
                let mut seq = Seq {
                    items: a.iter(),
                    reader: self,
                };
                let value = visitor.visit_seq(&mut seq)?;
                match seq.items.len() {
                    0 => Ok(value),
                    left => Err(de::Error::invalid_length(
                        a.len() - left,
                        &"fewer elements in array",
                    )),
                }
            }
            CompactValue::Object(o) => {
                let mut map = Map {
                    members: o.iter(),
                    value: None,
                    reader: self,
                };
                let value = visitor.visit_map(&mut map)?;
                match map.members.len() {
                    0 => Ok(value),
                    _ => Err(de::Error::invalid_length(o.len(), &"fewer elements in map")),
                }
            }
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.value {
            CompactValue::Null => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        if self.checking && kcache_codec::accepts_any_json(name) {
            return visitor.visit_newtype_struct(self.of(&NULL));
        }
        if self.checking && name == RAW_VALUE_TOKEN {
            // Any JSON text does for a type that takes the text: the shortest.
            return raw_value_answer::<Error>("null".to_owned()).deserialize_any(visitor);
        }
        if name == RAW_VALUE_TOKEN {
            // serde_json's `RawValue` (and kcache-core's `FieldsV1`) asking for the value's
            // JSON text: written from the tree, no `serde_json::Value` built in between.
            let text = serde_json::to_string(self.value)?;
            return raw_value_answer::<Error>(text).deserialize_any(visitor);
        }
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        match self.value {
            CompactValue::String(s) => {
                visitor.visit_enum(de::value::BorrowedStrDeserializer::new(s))
            }
            CompactValue::Object(o) if o.len() == 1 => visitor.visit_enum(Enum {
                variant: &o[0].0,
                value: self.of(&o[0].1),
            }),
            other => Err(de::Error::invalid_type(
                unexpected(other),
                &"a string or a map with a single key",
            )),
        }
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_unit()
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        if self.checking && kcache_codec::is_object_meta(fields) {
            kcache_codec::check_object_meta(self)?;
            let nothing = std::iter::empty::<(&str, &str)>();
            return visitor.visit_map(de::value::MapDeserializer::<_, Error>::new(nothing));
        }
        self.deserialize_any(visitor)
    }

    forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        unit unit_struct seq tuple tuple_struct map identifier
    }
}

/// What a value is, for type errors.
fn unexpected(v: &CompactValue) -> de::Unexpected<'_> {
    match v {
        CompactValue::Null => de::Unexpected::Unit,
        CompactValue::Bool(b) => de::Unexpected::Bool(*b),
        CompactValue::Number(_) => de::Unexpected::Other("number"),
        CompactValue::String(s) => de::Unexpected::Str(s),
        CompactValue::Array(_) => de::Unexpected::Seq,
        CompactValue::Object(_) => de::Unexpected::Map,
    }
}

struct Seq<'de> {
    items: std::slice::Iter<'de, CompactValue>,
    reader: Reader<'de>,
}

impl<'de> SeqAccess<'de> for Seq<'de> {
    type Error = Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Error> {
        let reader = self.reader;
        self.items
            .next()
            .map(|v| seed.deserialize(reader.of(v)))
            .transpose()
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.items.len())
    }
}

struct Map<'de> {
    members: std::slice::Iter<'de, (std::sync::Arc<str>, CompactValue)>,
    value: Option<&'de CompactValue>,
    reader: Reader<'de>,
}

impl<'de> MapAccess<'de> for Map<'de> {
    type Error = Error;

    fn next_key_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Error> {
        let Some((key, value)) = self.members.next() else {
            return Ok(None);
        };
        self.value = Some(value);
        seed.deserialize(de::value::BorrowedStrDeserializer::new(key))
            .map(Some)
    }

    fn next_value_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<T::Value, Error> {
        match self.value.take() {
            Some(v) => seed.deserialize(self.reader.of(v)),
            None => Err(de::Error::custom(
                "a map value was asked for before its key",
            )),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.members.len())
    }
}

struct Enum<'de> {
    variant: &'de str,
    value: Reader<'de>,
}

impl<'de> EnumAccess<'de> for Enum<'de> {
    type Error = Error;
    type Variant = Reader<'de>;

    fn variant_seed<V: DeserializeSeed<'de>>(
        self,
        seed: V,
    ) -> Result<(V::Value, Reader<'de>), Error> {
        let variant = seed.deserialize(de::value::BorrowedStrDeserializer::new(self.variant))?;
        Ok((variant, self.value))
    }
}

impl<'de> VariantAccess<'de> for Reader<'de> {
    type Error = Error;

    fn unit_variant(self) -> Result<(), Error> {
        match self.value {
            CompactValue::Null => Ok(()),
            other => Err(de::Error::invalid_type(unexpected(other), &"unit variant")),
        }
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, Error> {
        seed.deserialize(self)
    }

    fn tuple_variant<V: Visitor<'de>>(self, _len: usize, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_seq(visitor)
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.deserialize_map(visitor)
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::ConfigMap;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::FieldsV1;
    use kcache_core::PartialObjectMeta;
    use serde::Deserialize;
    use serde_json::json;

    use super::Reader;
    use crate::{Compact, CompactObject, CompactValue};

    fn config_map(data: serde_json::Value) -> serde_json::Value {
        json!({
            "metadata": {
                "name": "cm", "namespace": "ns", "resourceVersion": "7",
                "creationTimestamp": "2026-11-26T20:59:34Z",
                "managedFields": [{
                    "manager": "kcache", "operation": "Update", "apiVersion": "v1",
                    "time": "2026-11-26T20:59:34Z", "fieldsType": "FieldsV1",
                    "fieldsV1": {"f:data": {".": {}, "f:k": {}}, "odd": [1, "x", null]}
                }],
                "selfLink": "/x"
            },
            "data": data
        })
    }

    #[test]
    fn a_check_skips_only_what_takes_any_json() {
        let wire = config_map(json!({"k": "v"}));
        let tree = CompactValue::from(&wire);
        let full = ConfigMap::deserialize(&tree).unwrap();
        let checked = ConfigMap::deserialize(Reader::checking(&tree)).unwrap();
        let fields = |cm: &ConfigMap| cm.metadata.managed_fields.as_ref().unwrap()[0].clone();
        assert_eq!(
            fields(&full).fields_v1,
            Some(FieldsV1(
                wire["metadata"]["managedFields"][0]["fieldsV1"].clone()
            ))
        );
        assert_eq!(fields(&checked).fields_v1, Some(FieldsV1(json!(null))));
        // Everything else is decoded as in full.
        let mut unskipped = checked.clone();
        unskipped.metadata.managed_fields = full.metadata.managed_fields.clone();
        assert_eq!(unskipped, full);

        let full = PartialObjectMeta::<ConfigMap>::deserialize(&tree).unwrap();
        let checked = PartialObjectMeta::<ConfigMap>::deserialize(Reader::checking(&tree)).unwrap();
        // `fieldsV1` kept as text, written from the tree (the `RawValue` handshake).
        assert_eq!(
            serde_json::to_value(&full.metadata.managed_fields).unwrap(),
            wire["metadata"]["managedFields"]
        );
        assert_eq!(full.metadata.other["selfLink"], "/x");
        // `ObjectMeta` is checked without being built: the check hands back an empty one.
        assert_eq!(checked.metadata, kcache_core::ObjectMeta::default());
        assert_eq!(checked.types, full.types);
    }

    #[test]
    fn a_check_rejects_what_decoding_rejects() {
        let object = |v: serde_json::Value| CompactObject::from_json(&v).unwrap();
        assert!(Compact::<ConfigMap>::from_object(object(config_map(json!({"k": "v"})))).is_ok());
        let err = Compact::<ConfigMap>::from_object(object(config_map(json!({"k": 1}))))
            .unwrap_err()
            .to_string();
        assert!(err.contains("ConfigMap \"ns/cm\""), "{err}");
        let mut bad_time = config_map(json!({}));
        bad_time["metadata"]["managedFields"][0]["time"] = json!("yesterday");
        assert!(Compact::<ConfigMap>::from_object(object(bad_time)).is_err());
        let mut bad_owner = config_map(json!({}));
        bad_owner["metadata"]["ownerReferences"] = json!([{"kind": "Pod", "name": "p"}]);
        let err = Compact::<PartialObjectMeta<ConfigMap>>::from_object(object(bad_owner))
            .unwrap_err()
            .to_string();
        assert!(err.contains("missing field"), "{err}");
    }
}
