//! Values that every JSON value decodes as, kept whole: kcache-core's `ObjectMeta`'s untyped
//! members and `FieldsV1`, k8s-openapi's `FieldsV1` (`managedFields[].fieldsV1`).
//!
//! Why: a decoder that only checks that an object decodes as its type, and drops the result
//! (kcache-compact checks every `Compact<K>` it builds), need not build such a value, since
//! whatever the JSON holds there, it decodes. Building it is most of a check's cost for a
//! typical object: `managedFields` is a tree of small maps, each allocated and freed. These types
//! ask for a newtype struct by a name a checking decoder recognizes ([`accepts_any_json`]) and
//! can hand them `null` instead of the subtree; every other decoder reads them as usual.

use std::fmt;

use serde::de::value::{MapAccessDeserializer, SeqAccessDeserializer};
use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

/// The newtype name [`AnyJson`] asks for: a token no other type uses.
pub const ANY_JSON_TOKEN: &str = "$kcache_codec::AnyJson";

/// The newtype name of Kubernetes' `metav1.FieldsV1` as k8s-openapi decodes it
/// (`struct FieldsV1(serde_json::Value)`, through `deserialize_newtype_struct("FieldsV1", ..)`):
/// by the API's definition, any JSON.
const K8S_FIELDS_V1: &str = "FieldsV1";

/// Whether a newtype struct that asks for `name` accepts every JSON value and keeps it as it is,
/// so that a decoder that only checks an object may hand it `null` in place of the value (see the
/// module docs): [`AnyJson`] (kcache-core's untyped `ObjectMeta` members) and k8s-openapi's
/// `FieldsV1`. serde_json's `RawValue` handshake ([`RAW_VALUE_TOKEN`](crate::RAW_VALUE_TOKEN),
/// kcache-core's `FieldsV1`) is not among them: such a type wants a text, and any JSON text
/// (`null`) does.
pub fn accepts_any_json(name: &str) -> bool {
    name == ANY_JSON_TOKEN || name == K8S_FIELDS_V1
}

/// A JSON value decoded through `deserialize_newtype_struct(ANY_JSON_TOKEN, ..)`, so that a
/// checking decoder can recognize it ([`accepts_any_json`]).
pub struct AnyJson(pub Value);

impl<'de> Deserialize<'de> for AnyJson {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_newtype_struct(ANY_JSON_TOKEN, AnyJsonVisitor)
    }
}

/// Takes the newtype's inner value; also takes a value directly, for deserializers that answer
/// a newtype struct with the value itself.
pub struct AnyJsonVisitor;

impl<'de> Visitor<'de> for AnyJsonVisitor {
    type Value = AnyJson;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<AnyJson, D::Error> {
        Value::deserialize(d).map(AnyJson)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<AnyJson, D::Error> {
        Value::deserialize(d).map(AnyJson)
    }

    fn visit_none<E>(self) -> Result<AnyJson, E> {
        Ok(AnyJson(Value::Null))
    }

    fn visit_unit<E>(self) -> Result<AnyJson, E> {
        Ok(AnyJson(Value::Null))
    }

    fn visit_bool<E>(self, v: bool) -> Result<AnyJson, E> {
        Ok(AnyJson(Value::Bool(v)))
    }

    fn visit_i64<E>(self, v: i64) -> Result<AnyJson, E> {
        Ok(AnyJson(v.into()))
    }

    fn visit_u64<E>(self, v: u64) -> Result<AnyJson, E> {
        Ok(AnyJson(v.into()))
    }

    fn visit_f64<E>(self, v: f64) -> Result<AnyJson, E> {
        Ok(AnyJson(v.into()))
    }

    fn visit_str<E>(self, v: &str) -> Result<AnyJson, E> {
        Ok(AnyJson(Value::String(v.to_owned())))
    }

    fn visit_string<E>(self, v: String) -> Result<AnyJson, E> {
        Ok(AnyJson(Value::String(v)))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<AnyJson, A::Error> {
        Value::deserialize(SeqAccessDeserializer::new(seq)).map(AnyJson)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<AnyJson, A::Error> {
        Value::deserialize(MapAccessDeserializer::new(map)).map(AnyJson)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::de;
    use serde_json::json;

    #[test]
    fn any_json_decodes_every_value_as_it_is() {
        for v in [
            json!(null),
            json!(true),
            json!(-3),
            json!(18446744073709551615u64),
            json!(1.5),
            json!("s"),
            json!([1, {"a": []}]),
            json!({"f:data": {".": {}}}),
        ] {
            let text = serde_json::to_string(&v).unwrap();
            assert_eq!(serde_json::from_str::<AnyJson>(&text).unwrap().0, v);
            assert_eq!(serde_json::from_value::<AnyJson>(v.clone()).unwrap().0, v);
        }
    }

    #[test]
    fn any_json_takes_a_value_from_deserializers_without_newtypes() {
        // serde's value deserializers answer a newtype struct with the value itself.
        let s = de::value::StrDeserializer::<serde_json::Error>::new("s");
        assert_eq!(AnyJson::deserialize(s).unwrap().0, json!("s"));
        let map = de::value::MapDeserializer::<_, serde_json::Error>::new(
            [("a", 1u64), ("b", 2)].into_iter(),
        );
        assert_eq!(
            AnyJson::deserialize(map).unwrap().0,
            json!({"a": 1, "b": 2})
        );
    }

    /// A deserializer that records the newtype name it is asked for.
    struct NewtypeName;

    impl<'de> Deserializer<'de> for NewtypeName {
        type Error = de::value::Error;

        fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Self::Error> {
            Err(de::Error::custom("not a newtype"))
        }

        fn deserialize_newtype_struct<V: Visitor<'de>>(
            self,
            name: &'static str,
            _: V,
        ) -> Result<V::Value, Self::Error> {
            Err(de::Error::custom(name))
        }

        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
            option unit unit_struct seq tuple tuple_struct map struct enum identifier ignored_any
        }
    }

    fn newtype_name<T: for<'de> Deserialize<'de>>() -> String {
        match T::deserialize(NewtypeName) {
            Err(e) => e.to_string(),
            Ok(_) => unreachable!("NewtypeName never decodes"),
        }
    }

    /// The types the shortcut is for ask for the names it recognizes; others do not.
    #[test]
    fn only_whole_value_types_ask_for_an_any_json_name() {
        use k8s_openapi::apimachinery::pkg::apis::meta::v1::FieldsV1;
        assert!(accepts_any_json(&newtype_name::<AnyJson>()));
        assert!(accepts_any_json(&newtype_name::<FieldsV1>()));
        assert!(!accepts_any_json(&newtype_name::<Value>()));
        assert!(!accepts_any_json(&newtype_name::<
            Box<serde_json::value::RawValue>,
        >()));
        // What the shortcut relies on: any JSON decodes as k8s-openapi's `FieldsV1`.
        for v in [
            json!(null),
            json!([1, "x"]),
            json!({"f:a": {".": {}}}),
            json!(7),
        ] {
            assert_eq!(serde_json::from_value::<FieldsV1>(v.clone()).unwrap().0, v);
        }
    }
}
