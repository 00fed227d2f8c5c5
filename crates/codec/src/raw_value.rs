//! serde_json's `RawValue` handshake, from both ends: a type that takes a value's JSON text
//! when the deserializer has it ([`FirstKey`] tells the handshake from an object's first
//! member), and a deserializer that has the text ([`raw_value_answer`]).

use std::fmt;

use serde::de::value::MapDeserializer;
use serde::de::{self, DeserializeSeed, Deserializer, Visitor};

/// The newtype name with which serde_json's `RawValue` asks a deserializer for a value's JSON
/// text; the answer is a map of one member, this key, whose value is the text. serde_json keeps
/// it private; it has not changed since `RawValue` exists, and if it did, serde_json would hand
/// the value over as usual and only the shortcuts built on it would be lost (kcache-compact's
/// memo of decoded `fieldsV1`, kcache-transport's of `fieldsV1` texts checked to be JSON).
pub const RAW_VALUE_TOKEN: &str = "$serde_json::private::RawValue";

/// serde_json's answer to its handshake, for a deserializer that holds the value's text: a map of
/// one member, [`RAW_VALUE_TOKEN`], whose value is `text`. The text must be JSON; a `RawValue`
/// keeps it without parsing it again.
pub fn raw_value_answer<'de, E: de::Error>(text: String) -> impl Deserializer<'de, Error = E> {
    MapDeserializer::new(std::iter::once((RAW_VALUE_TOKEN, text)))
}

/// The first key of a map handed to a visitor that asked for the handshake: the handshake's
/// token (the value is the JSON text), or an object's first member, kept as `K`.
pub enum FirstKeyIs<K> {
    /// The handshake: the map's value is the JSON text.
    Token,
    /// An object's first member's key (the deserializer gave the value itself).
    Member(K),
}

/// Reads a map's first key as [`FirstKeyIs`], keeping a member's key with the function it holds.
pub struct FirstKey<K>(pub fn(&str) -> K);

impl<'de, K> DeserializeSeed<'de> for FirstKey<K> {
    type Value = FirstKeyIs<K>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<FirstKeyIs<K>, D::Error> {
        d.deserialize_str(self)
    }
}

impl<K> Visitor<'_> for FirstKey<K> {
    type Value = FirstKeyIs<K>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object key")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<FirstKeyIs<K>, E> {
        Ok(if v == RAW_VALUE_TOKEN {
            FirstKeyIs::Token
        } else {
            FirstKeyIs::Member(self.0(v))
        })
    }
}
