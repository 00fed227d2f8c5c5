//! One JSON value from bytes, read as text when the bytes are UTF-8.
//!
//! Why: checked to be UTF-8 in one pass first, the bytes are read by serde_json as a `&str`, and
//! it takes each string as it is; from bytes it checks every string on its own (a twentieth of
//! a typed list's decoding). Bytes that are not UTF-8 are read as bytes, for serde_json's error
//! and its position.

use serde::de::DeserializeSeed;

/// `seed`'s value from `bytes`, which must hold nothing after it (as `serde_json::from_slice`).
pub(super) fn from_json<'a, S: DeserializeSeed<'a>>(
    bytes: &'a [u8],
    seed: S,
) -> serde_json::Result<S::Value> {
    match std::str::from_utf8(bytes) {
        Ok(text) => whole(serde_json::Deserializer::from_str(text), seed),
        Err(_) => whole(serde_json::Deserializer::from_slice(bytes), seed),
    }
}

/// `seed`'s value from `de`, and then the end of the input.
fn whole<'a, R: serde_json::de::Read<'a>, S: DeserializeSeed<'a>>(
    mut de: serde_json::Deserializer<R>,
    seed: S,
) -> serde_json::Result<S::Value> {
    let value = seed.deserialize(&mut de)?;
    de.end()?;
    Ok(value)
}
