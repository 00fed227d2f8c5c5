//! Values that every JSON value decodes as, kept whole: `ObjectMeta`'s untyped members and
//! k8s-openapi's `FieldsV1` (`managedFields[].fieldsV1`).
//!
//! Why: a decoder that only checks that an object decodes as its type, and drops the result
//! (kcache-compact checks every `Compact<K>` it builds), need not build such a value, since
//! whatever the JSON holds there, it decodes. Building it is most of a check's cost for a
//! typical object: `managedFields` is a tree of small maps, each allocated and freed. These types
//! ask for a newtype struct (`deserialize_newtype_struct`), which is where a checking decoder
//! sees their type ([`accepts_any_json`]) and can hand them `null` instead of the subtree; every
//! other decoder reads them as usual.

use std::any::type_name;
use std::fmt;

use serde::de::value::{MapAccessDeserializer, SeqAccessDeserializer};
use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

/// Whether decoding a `T` accepts every JSON value and keeps it as it is, so that a decoder
/// that only checks an object may give it `null` in place of the value (see the module docs).
/// True for [`FieldsV1`](crate::FieldsV1), k8s-openapi's `FieldsV1` (with the `k8s-openapi`
/// feature) and the untyped members of [`ObjectMeta`](crate::ObjectMeta); false for everything
/// else, `serde_json::Value` included (a type holding a `Value` may still reject some of them).
pub fn accepts_any_json<T: ?Sized>() -> bool {
    let name = type_name::<T>();
    name == type_name::<AnyJson>() || name == type_name::<crate::FieldsV1>() || is_fields_v1(name)
}

#[cfg(feature = "k8s-openapi")]
fn is_fields_v1(name: &str) -> bool {
    // k8s-openapi's `FieldsV1` is `struct FieldsV1(serde_json::Value)`, decoded through
    // `deserialize_newtype_struct("FieldsV1", ..)` then `Value::deserialize`.
    name == type_name::<k8s_openapi::apimachinery::pkg::apis::meta::v1::FieldsV1>()
}

#[cfg(not(feature = "k8s-openapi"))]
fn is_fields_v1(_: &str) -> bool {
    false
}

/// A JSON value decoded through `deserialize_newtype_struct`, so that a checking decoder can
/// recognize it ([`accepts_any_json`]).
pub(crate) struct AnyJson(pub(crate) Value);

impl<'de> Deserialize<'de> for AnyJson {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_newtype_struct("AnyJson", AnyJsonVisitor)
    }
}

/// Takes the newtype's inner value; also takes a value directly, for deserializers that answer
/// a newtype struct with the value itself.
pub(crate) struct AnyJsonVisitor;

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

    #[test]
    fn only_whole_value_types_accept_any_json() {
        assert!(accepts_any_json::<AnyJson>());
        assert!(accepts_any_json::<crate::FieldsV1>());
        assert!(!accepts_any_json::<Value>());
        assert!(!accepts_any_json::<String>());
        assert!(!accepts_any_json::<crate::ObjectMeta>());
    }

    #[cfg(feature = "k8s-openapi")]
    #[test]
    fn fields_v1_accepts_any_json() {
        use k8s_openapi::apimachinery::pkg::apis::meta::v1::FieldsV1;
        assert!(accepts_any_json::<FieldsV1>());
        // What the shortcut relies on: any JSON decodes as `FieldsV1`, through a newtype.
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
