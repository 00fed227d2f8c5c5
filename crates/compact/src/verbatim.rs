//! `managedFields[].fieldsV1`, decoded once per distinct text.
//!
//! The API server stores `fieldsV1` verbatim and sends it as written: every object a manager
//! wrote with the same set of fields (every ConfigMap with the same keys, every pod of a
//! deployment) carries the same text, and it is most of a small object's metadata. Decoding it
//! as any other value parses and interns every key and node of it again, only for the
//! interner to find the tree it already has. Here its text is asked for instead, through
//! serde_json's `RawValue` handshake (which serde_json's deserializers and kcache-transport's
//! protobuf decoder answer), and looked up in a small per-thread memo of texts already decoded:
//! a hit costs a hash and a comparison of the text. A deserializer that does not know the
//! handshake hands the value over as usual, and it is decoded as any other.
//!
//! The memo holds a strong reference to each of its (at most [`SLOTS`] per thread) trees until
//! another text takes the slot.

use std::cell::RefCell;
use std::fmt;
use std::sync::{Arc, LazyLock};

use kcache_codec::{FirstKey, FirstKeyIs, RAW_VALUE_TOKEN};
use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer};

use super::interner::HASHER;
use super::serde_impls::{object_rest, scalars_as_values, ValueVisitor};
use super::value::{intern_str, CompactValue};

/// The key whose value is decoded here. Held, so the interned key stays the canonical one and
/// a key is recognised by its address.
static FIELDS_V1: LazyLock<Arc<str>> = LazyLock::new(|| intern_str("fieldsV1"));

/// Whether a member with this (interned) key is decoded here.
pub(crate) fn is_verbatim_key(key: &Arc<str>) -> bool {
    Arc::ptr_eq(key, &FIELDS_V1)
}

/// Memo slots per thread (a power of two): a list decodes a handful of distinct texts.
const SLOTS: usize = 64;

type Slot = Option<(u64, Box<str>, CompactValue)>;

thread_local! {
    static MEMO: RefCell<Vec<Slot>> = RefCell::new(vec![None; SLOTS]);
}

/// The value of this JSON text: from the memo, or parsed (and interned) and remembered.
fn decode_text(text: &str) -> Result<CompactValue, serde_json::Error> {
    let hash = HASHER.hash_one(text);
    let slot = hash as usize & (SLOTS - 1);
    let hit = MEMO.with_borrow(|memo| match &memo[slot] {
        Some((h, t, v)) if *h == hash && **t == *text => Some(v.clone()),
        _ => None,
    });
    if let Some(v) = hit {
        #[cfg(test)]
        HITS.with(|h| h.set(h.get() + 1));
        return Ok(v);
    }
    // Not borrowed while parsing: the text may hold another `fieldsV1` member.
    let value: CompactValue = serde_json::from_str(text)?;
    MEMO.with_borrow_mut(|memo| memo[slot] = Some((hash, text.into(), value.clone())));
    Ok(value)
}

#[cfg(test)]
thread_local! {
    static HITS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Texts this thread found in its memo (for tests).
#[cfg(test)]
pub(crate) fn memo_hits() -> usize {
    HITS.with(std::cell::Cell::get)
}

/// Decodes a `fieldsV1` value, by its text where the deserializer gives it.
pub(crate) struct VerbatimSeed;

impl<'de> DeserializeSeed<'de> for VerbatimSeed {
    type Value = CompactValue;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<CompactValue, D::Error> {
        d.deserialize_newtype_struct(RAW_VALUE_TOKEN, VerbatimVisitor)
    }
}

/// Takes the text if it comes; any other value as [`ValueVisitor`] does.
struct VerbatimVisitor;

impl<'de> Visitor<'de> for VerbatimVisitor {
    type Value = CompactValue;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<CompactValue, A::Error> {
        match map.next_key_seed(FirstKey(intern_str))? {
            Some(FirstKeyIs::Token) => map.next_value_seed(TextSeed),
            Some(FirstKeyIs::Member(key)) => object_rest(map, Some(key)),
            None => object_rest(map, None),
        }
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<CompactValue, D::Error> {
        CompactValue::deserialize(d)
    }

    scalars_as_values!();

    fn visit_str<E: de::Error>(self, v: &str) -> Result<CompactValue, E> {
        ValueVisitor.visit_str(v)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<CompactValue, D::Error> {
        ValueVisitor.visit_some(d)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<CompactValue, A::Error> {
        ValueVisitor.visit_seq(seq)
    }
}

/// The handshake's value: the JSON text.
struct TextSeed;

impl<'de> DeserializeSeed<'de> for TextSeed {
    type Value = CompactValue;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<CompactValue, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for TextSeed {
    type Value = CompactValue;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON text")
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<CompactValue, E> {
        decode_text(text).map_err(E::custom)
    }
}

#[cfg(test)]
mod tests {
    use serde::de::value::MapDeserializer;
    use serde_json::json;

    use super::*;

    fn object(fields: serde_json::Value) -> serde_json::Value {
        json!({"metadata": {"name": "a", "managedFields": [
            {"manager": "m", "fieldsType": "FieldsV1", "fieldsV1": fields}
        ]}})
    }

    fn fields_of(v: &CompactValue) -> &CompactValue {
        let entries = v
            .get("metadata")
            .and_then(|m| m.get("managedFields"))
            .unwrap();
        entries.as_array().unwrap()[0].get("fieldsV1").unwrap()
    }

    #[test]
    fn a_fields_v1_text_seen_before_is_taken_from_the_memo() {
        let wire = object(json!({"f:data": {".": {}, "f:k": {}}, "f:metadata": {"f:labels": {}}}));
        let text = wire.to_string();
        let first: CompactValue = serde_json::from_str(&text).unwrap();
        let hits = memo_hits();
        let second: CompactValue = serde_json::from_str(&text).unwrap();
        assert_eq!(memo_hits(), hits + 1);
        assert_eq!(first, CompactValue::from(&wire));
        assert_eq!(second, CompactValue::from(&wire));
        match (fields_of(&first), fields_of(&second)) {
            (CompactValue::Object(a), CompactValue::Object(b)) => assert!(Arc::ptr_eq(a, b)),
            other => panic!("fieldsV1 is not an object: {other:?}"),
        }
    }

    #[test]
    fn any_value_of_fields_v1_decodes_as_it_would_elsewhere() {
        for fields in [
            json!(null),
            json!("text"),
            json!(12),
            json!(-1.5),
            json!(true),
            json!([1, {"fieldsV1": {"f:x": {}}}, "y"]),
            json!({"fieldsV1": {"f:nested": {}}, "b": [null]}),
            json!({}),
        ] {
            let wire = object(fields.clone());
            let decoded: CompactValue = serde_json::from_str(&wire.to_string()).unwrap();
            assert_eq!(decoded, CompactValue::from(&wire), "{fields}");
            // And again, from the memo.
            let again: CompactValue = serde_json::from_str(&wire.to_string()).unwrap();
            assert_eq!(again, CompactValue::from(&wire), "{fields}");
        }
    }

    #[test]
    fn a_deserializer_without_the_handshake_hands_the_object_over_as_usual() {
        // serde's `MapDeserializer` answers the newtype with the map's own members.
        let members = vec![("f:b", json!({})), ("f:a", json!({"x": 1}))];
        let map = MapDeserializer::<_, serde_json::Error>::new(members.into_iter());
        let decoded = VerbatimSeed.deserialize(map).unwrap();
        assert_eq!(
            decoded,
            CompactValue::from(&json!({"f:a": {"x": 1}, "f:b": {}}))
        );
        let empty = MapDeserializer::<_, serde_json::Error>::new(
            Vec::<(&str, serde_json::Value)>::new().into_iter(),
        );
        assert_eq!(
            VerbatimSeed.deserialize(empty).unwrap(),
            CompactValue::from(&json!({}))
        );
        // The shared tree's own reader answers it with the value.
        let wire = object(json!({"f:k": {}}));
        let tree = CompactValue::from(&wire);
        assert_eq!(CompactValue::deserialize(&tree).unwrap(), tree);
    }

    #[test]
    fn broken_fields_v1_text_is_an_error() {
        let text = r#"{"metadata": {"managedFields": [{"fieldsV1": {"f:a": }}]}}"#;
        assert!(serde_json::from_str::<CompactValue>(text).is_err());
    }
}
