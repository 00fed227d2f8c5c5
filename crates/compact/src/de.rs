//! A serde `Deserializer` over a borrowed `CompactValue`: a typed object (a k8s-openapi `Pod`)
//! is built straight from the shared tree, with no intermediate `serde_json::Value` and no JSON
//! text. Strings are handed out borrowed, so the only allocations are the typed object's own.
//!
//! It behaves as `serde_json::Value`'s deserializer does (that is what makes a typed read equal
//! to decoding the JSON): numbers go through `serde_json::Number`, `null` is `None`, an enum is a
//! string (unit variant) or a one-member object, unknown struct fields are ignored unless the
//! type says `deny_unknown_fields`.

use serde::de::{
    self, DeserializeSeed, Deserializer, EnumAccess, MapAccess, SeqAccess, VariantAccess, Visitor,
};
use serde::forward_to_deserialize_any;
use serde_json::Error;

use super::value::CompactValue;

impl<'de> Deserializer<'de> for &'de CompactValue {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self {
            CompactValue::Null => visitor.visit_unit(),
            CompactValue::Bool(b) => visitor.visit_bool(*b),
            CompactValue::Number(n) => n.deserialize_any(visitor),
            CompactValue::String(s) => visitor.visit_borrowed_str(s),
            CompactValue::Array(a) => {
                let mut seq = Seq { items: a.iter() };
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
        match self {
            CompactValue::Null => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        match self {
            CompactValue::String(s) => {
                visitor.visit_enum(de::value::BorrowedStrDeserializer::new(s))
            }
            CompactValue::Object(o) if o.len() == 1 => visitor.visit_enum(Enum {
                variant: &o[0].0,
                value: &o[0].1,
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

    forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        unit unit_struct seq tuple tuple_struct map struct identifier
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
}

impl<'de> SeqAccess<'de> for Seq<'de> {
    type Error = Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Error> {
        self.items.next().map(|v| seed.deserialize(v)).transpose()
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.items.len())
    }
}

struct Map<'de> {
    members: std::slice::Iter<'de, (std::sync::Arc<str>, CompactValue)>,
    value: Option<&'de CompactValue>,
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
            Some(v) => seed.deserialize(v),
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
    value: &'de CompactValue,
}

impl<'de> EnumAccess<'de> for Enum<'de> {
    type Error = Error;
    type Variant = &'de CompactValue;

    fn variant_seed<V: DeserializeSeed<'de>>(
        self,
        seed: V,
    ) -> Result<(V::Value, &'de CompactValue), Error> {
        let variant = seed.deserialize(de::value::BorrowedStrDeserializer::new(self.variant))?;
        Ok((variant, self.value))
    }
}

impl<'de> VariantAccess<'de> for &'de CompactValue {
    type Error = Error;

    fn unit_variant(self) -> Result<(), Error> {
        match self {
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
