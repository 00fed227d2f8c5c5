//! `metadata.managedFields` typed, with each entry's field set kept as its JSON text.
//!
//! Why: as untyped JSON (a `serde_json::Value` in `ObjectMeta::other`) every entry was a tree
//! of small maps, one allocation per key of `fieldsV1` (`f:data`, `f:metadata`, `f:labels`,
//! ...), built for every object decoded and freed with it. A metadata-only cache kept more
//! than twice its present memory that way, and more than client-go's, which keeps `fieldsV1` as its bytes
//! (`metav1.FieldsV1{Raw}`); a handler of a compact cache spent most of each object's decoding
//! on that tree. Here an entry is a handful of strings and one text, as client-go's.
//!
//! An entry's members that this type does not name are dropped, as client-go's and
//! k8s-openapi's `ManagedFieldsEntry` drop them.

use std::fmt;

use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use kcache_codec::{
    raw_value_answer, AnyJson, AnyJsonVisitor, FirstKey, FirstKeyIs, RAW_VALUE_TOKEN,
};

/// One entry of `metadata.managedFields` (`metav1.ManagedFieldsEntry`): which manager set which
/// fields, through which operation and API version.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ManagedFieldsEntry {
    /// The manager's name (a client's field manager, e.g. `kubectl-client-side-apply`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub manager: Option<String>,
    /// `Apply` or `Update`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operation: Option<String>,
    /// The API version the fields were set through.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    /// RFC 3339 time of the manager's last change.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time: Option<String>,
    /// The format of `fields_v1`: `FieldsV1`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fields_type: Option<String>,
    /// The fields the manager owns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fields_v1: Option<FieldsV1>,
    /// The subresource the fields were set through, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subresource: Option<String>,
}

/// A field set (`managedFields[].fieldsV1`) as the JSON text it was sent as, as client-go's
/// `FieldsV1.Raw` keeps its bytes: decoding it builds no tree ([`FieldsV1::to_value`] does,
/// when asked). Written out, it is that JSON again.
#[derive(Debug, Clone)]
pub struct FieldsV1(Box<RawValue>);

impl FieldsV1 {
    /// The field set of a JSON text; an error if `json` is not JSON.
    pub fn from_json(json: impl Into<String>) -> Result<Self, serde_json::Error> {
        RawValue::from_string(json.into()).map(FieldsV1)
    }

    /// The field set of a JSON value.
    pub fn from_value(value: &Value) -> Self {
        // Serializing a `Value` cannot fail: its keys are strings.
        FieldsV1(serde_json::value::to_raw_value(value).expect("a JSON value serializes"))
    }

    /// The JSON text.
    pub fn json(&self) -> &str {
        self.0.get()
    }

    /// The field set as a JSON tree (`{"f:metadata": {"f:labels": {...}}}`); an error only if
    /// a deserializer vouched for a text that is not JSON.
    pub fn to_value(&self) -> serde_json::Result<Value> {
        serde_json::from_str(self.json())
    }
}

/// Equal when the texts are: the server writes a field set in one canonical form.
impl PartialEq for FieldsV1 {
    fn eq(&self, other: &Self) -> bool {
        self.json() == other.json()
    }
}

impl Eq for FieldsV1 {}

/// Written as the JSON value it holds, to any serializer. (`RawValue`'s own `Serialize` would copy
/// the text, but only serde_json's serializers understand it: YAML would get a struct named after
/// serde_json's private token. Writing is rare next to decoding; the parse is of one small text.)
impl Serialize for FieldsV1 {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.to_value()
            .map_err(serde::ser::Error::custom)?
            .serialize(s)
    }
}

/// Any JSON value. A deserializer that answers serde_json's `RawValue` handshake (serde_json's
/// own, kcache's protobuf and compact decoders) hands over the text, which is kept; any other
/// hands over the value, which is written out as text.
impl<'de> Deserialize<'de> for FieldsV1 {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_newtype_struct(RAW_VALUE_TOKEN, FieldsVisitor)
    }
}

struct FieldsVisitor;

/// The field set of a value a deserializer handed over instead of text.
fn of_any(AnyJson(value): AnyJson) -> FieldsV1 {
    FieldsV1::from_value(&value)
}

impl<'de> Visitor<'de> for FieldsVisitor {
    type Value = FieldsV1;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<FieldsV1, A::Error> {
        let first = match map.next_key_seed(FirstKey(str::to_owned))? {
            None => return Ok(FieldsV1::from_value(&Value::Object(Map::new()))),
            Some(FirstKeyIs::Token) => {
                // The deserializer vouches for the text (the handshake's contract; kcache's
                // protobuf decoder checks each distinct text once). Handed on through the same
                // handshake, serde_json keeps it without parsing it again, as `from_json` would.
                let text: String = map.next_value()?;
                return Box::<RawValue>::deserialize(raw_value_answer::<A::Error>(text))
                    .map(FieldsV1);
            }
            Some(FirstKeyIs::Member(key)) => key,
        };
        let mut members = Map::new();
        members.insert(first, map.next_value::<AnyJson>()?.0);
        while let Some(key) = map.next_key::<String>()? {
            members.insert(key, map.next_value::<AnyJson>()?.0);
        }
        Ok(FieldsV1::from_value(&Value::Object(members)))
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<FieldsV1, D::Error> {
        AnyJsonVisitor.visit_newtype_struct(d).map(of_any)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<FieldsV1, D::Error> {
        AnyJsonVisitor.visit_some(d).map(of_any)
    }

    fn visit_none<E: de::Error>(self) -> Result<FieldsV1, E> {
        AnyJsonVisitor.visit_none().map(of_any)
    }

    fn visit_unit<E: de::Error>(self) -> Result<FieldsV1, E> {
        AnyJsonVisitor.visit_unit().map(of_any)
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<FieldsV1, E> {
        AnyJsonVisitor.visit_bool(v).map(of_any)
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<FieldsV1, E> {
        AnyJsonVisitor.visit_i64(v).map(of_any)
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<FieldsV1, E> {
        AnyJsonVisitor.visit_u64(v).map(of_any)
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<FieldsV1, E> {
        AnyJsonVisitor.visit_f64(v).map(of_any)
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<FieldsV1, E> {
        AnyJsonVisitor.visit_str(v).map(of_any)
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<FieldsV1, E> {
        AnyJsonVisitor.visit_string(v).map(of_any)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<FieldsV1, A::Error> {
        AnyJsonVisitor.visit_seq(seq).map(of_any)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    const VALUES: [&str; 7] = [
        r#"{"f:data":{".":{},"f:key":{}},"f:metadata":{"f:labels":{"f:app":{}}}}"#,
        "{}",
        "null",
        "[1,\"x\",{\"a\":[]}]",
        "7",
        "\"s\"",
        "true",
    ];

    /// From text, from a value, from serde's value deserializers: the same JSON.
    #[test]
    fn fields_v1_keeps_any_json_from_every_deserializer() {
        for text in VALUES {
            let value: Value = serde_json::from_str(text).unwrap();
            let from_text: FieldsV1 = serde_json::from_str(text).unwrap();
            assert_eq!(from_text.json(), text);
            assert_eq!(from_text.to_value().unwrap(), value);
            let from_value: FieldsV1 = serde_json::from_value(value.clone()).unwrap();
            assert_eq!(from_value.to_value().unwrap(), value, "{text}");
            let from_ref = FieldsV1::deserialize(&value).unwrap();
            assert_eq!(from_ref.to_value().unwrap(), value, "{text}");
            assert_eq!(serde_json::to_value(&from_text).unwrap(), value);
            assert_eq!(serde_json::to_string(&from_text).unwrap(), text);
        }
        // A deserializer with no handshake and no newtypes: the value itself.
        let map = de::value::MapDeserializer::<_, serde_json::Error>::new(
            [("f:a", 1u64), ("f:b", 2)].into_iter(),
        );
        assert_eq!(
            FieldsV1::deserialize(map).unwrap().to_value().unwrap(),
            json!({"f:a": 1, "f:b": 2})
        );
        assert!(FieldsV1::from_json("{").is_err());
    }

    /// A serializer that is not serde_json's gets the value, not serde_json's private token.
    #[test]
    fn fields_v1_writes_its_value_to_any_serializer() {
        let fields = FieldsV1::from_json(r#"{"f:data":{"f:k":{}}}"#).unwrap();
        let yaml = serde_yaml_ng::to_string(&fields).unwrap();
        assert_eq!(yaml, "f:data:\n  f:k: {}\n");
        assert_eq!(serde_yaml_ng::from_str::<FieldsV1>(&yaml).unwrap(), fields);
    }

    #[test]
    fn an_entry_reads_and_writes_what_the_server_sends() {
        let wire = json!({
            "manager": "kubectl", "operation": "Update", "apiVersion": "v1",
            "time": "2020-01-01T00:00:00Z", "fieldsType": "FieldsV1",
            "fieldsV1": {"f:data": {"f:k": {}}}, "subresource": "status"
        });
        let entry: ManagedFieldsEntry = serde_json::from_value(wire.clone()).unwrap();
        assert_eq!(entry.manager.as_deref(), Some("kubectl"));
        assert_eq!(entry.api_version.as_deref(), Some("v1"));
        assert_eq!(entry.fields_type.as_deref(), Some("FieldsV1"));
        assert_eq!(entry.subresource.as_deref(), Some("status"));
        assert_eq!(
            entry.fields_v1.as_ref().unwrap().to_value().unwrap(),
            wire["fieldsV1"]
        );
        assert_eq!(serde_json::to_value(&entry).unwrap(), wire);
        let err = serde_json::from_value::<ManagedFieldsEntry>(json!({"manager": 1})).unwrap_err();
        assert!(err.to_string().contains("a string"), "{err}");
    }
}
