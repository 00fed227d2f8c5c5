//! JSON encoding and decoding of `CompactValue`: decoding interns as it goes, so a duplicate
//! subtree is dropped as soon as it is complete and only its canonical copy is kept.

use std::fmt;
use std::sync::Arc;

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Number;

use super::value::{intern_str, CompactValue};

impl Serialize for CompactValue {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            CompactValue::Null => s.serialize_unit(),
            CompactValue::Bool(b) => s.serialize_bool(*b),
            CompactValue::Number(n) => n.serialize(s),
            CompactValue::String(v) => s.serialize_str(v),
            CompactValue::Array(a) => {
                let mut seq = s.serialize_seq(Some(a.len()))?;
                for v in a.iter() {
                    seq.serialize_element(v)?;
                }
                seq.end()
            }
            CompactValue::Object(o) => {
                let mut map = s.serialize_map(Some(o.len()))?;
                for (k, v) in o.iter() {
                    map.serialize_entry(&**k, v)?;
                }
                map.end()
            }
        }
    }
}

impl<'de> Deserialize<'de> for CompactValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ValueVisitor)
    }
}

struct ValueVisitor;

impl<'de> Visitor<'de> for ValueVisitor {
    type Value = CompactValue;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<CompactValue, E> {
        Ok(CompactValue::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<CompactValue, E> {
        Ok(CompactValue::Number(v.into()))
    }

    fn visit_u64<E>(self, v: u64) -> Result<CompactValue, E> {
        Ok(CompactValue::Number(v.into()))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<CompactValue, E> {
        Number::from_f64(v)
            .map(CompactValue::Number)
            .ok_or_else(|| E::custom(format!("{v} is not a JSON number")))
    }

    fn visit_str<E>(self, v: &str) -> Result<CompactValue, E> {
        Ok(CompactValue::string(v))
    }

    fn visit_unit<E>(self) -> Result<CompactValue, E> {
        Ok(CompactValue::Null)
    }

    fn visit_none<E>(self) -> Result<CompactValue, E> {
        Ok(CompactValue::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<CompactValue, D::Error> {
        CompactValue::deserialize(d)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<CompactValue, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(v) = seq.next_element()? {
            items.push(v);
        }
        Ok(CompactValue::array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<CompactValue, A::Error> {
        let mut members = Vec::with_capacity(map.size_hint().unwrap_or(0));
        while let Some(k) = map.next_key_seed(KeySeed)? {
            members.push((k, map.next_value()?));
        }
        Ok(CompactValue::from_members(members))
    }
}

/// Decodes an object key straight into its interned `Arc<str>` (no `String` in between).
struct KeySeed;

impl<'de> DeserializeSeed<'de> for KeySeed {
    type Value = Arc<str>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Arc<str>, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for KeySeed {
    type Value = Arc<str>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object key")
    }

    fn visit_str<E>(self, v: &str) -> Result<Arc<str>, E> {
        Ok(intern_str(v))
    }
}
