//! `fieldsV1` texts of protobuf items, checked to be JSON once per distinct text.
//!
//! A reader that takes `fieldsV1` as its text (serde_json's `RawValue` handshake: a user's
//! `Box<RawValue>`, kcache-compact's decoder) trusts that it is JSON, so the protobuf decoder
//! parses each text before handing it over. Yet a list brings the same few texts in every item
//! (each object a manager wrote with the same fields carries the same one), and parsing them
//! again was ≈ 3% of a metadata-only list's client work. A text equal to one that parsed before
//! on this thread is handed over after a comparison; the memo keeps at most [`SLOTS`] texts per
//! thread.

use std::cell::RefCell;

use kcache_codec::RAW_VALUE_TOKEN;
use serde::de::value::BorrowedStrDeserializer;
use serde::de::{self, DeserializeSeed, MapAccess, Visitor};

/// Texts remembered per thread.
const SLOTS: usize = 16;

#[derive(Default)]
struct Checked {
    texts: Vec<Box<[u8]>>,
    /// The slot the next new text takes once all are used.
    next: usize,
}

thread_local! {
    static CHECKED: RefCell<Checked> = RefCell::new(Checked::default());
}

/// Whether `raw` parsed as JSON before on this thread.
pub(super) fn checked_before(raw: &[u8]) -> bool {
    CHECKED.with_borrow(|c| c.texts.iter().any(|t| **t == *raw))
}

/// Remembers `raw`, which just parsed as JSON.
pub(super) fn remember(raw: &[u8]) {
    CHECKED.with_borrow_mut(|c| {
        if c.texts.len() < SLOTS {
            c.texts.push(raw.into());
        } else {
            let slot = c.next;
            c.texts[slot] = raw.into();
            c.next = (slot + 1) % SLOTS;
        }
    });
}

/// serde_json's answer to the handshake: one member, the token, whose value is the text.
struct RawText<'de> {
    text: Option<&'de str>,
    token_given: bool,
}

impl<'de> MapAccess<'de> for RawText<'de> {
    type Error = super::protobuf::DeError;

    fn next_key_seed<S: DeserializeSeed<'de>>(
        &mut self,
        seed: S,
    ) -> Result<Option<S::Value>, Self::Error> {
        if std::mem::replace(&mut self.token_given, true) {
            return Ok(None);
        }
        seed.deserialize(BorrowedStrDeserializer::new(RAW_VALUE_TOKEN))
            .map(Some)
    }

    fn next_value_seed<S: DeserializeSeed<'de>>(
        &mut self,
        seed: S,
    ) -> Result<S::Value, Self::Error> {
        let text = self
            .text
            .take()
            .ok_or_else(|| <Self::Error as de::Error>::custom("fieldsV1's text asked for twice"))?;
        seed.deserialize(BorrowedStrDeserializer::new(text))
    }
}

/// Hands `text`, known to be JSON, to a visitor that asked for it by the handshake.
pub(super) fn visit_checked<'de, V: Visitor<'de>>(
    text: &'de str,
    visitor: V,
) -> Result<V::Value, super::protobuf::DeError> {
    visitor.visit_map(RawText {
        text: Some(text),
        token_given: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_text_is_remembered_until_sixteen_others_come_after_it() {
        let first = br#"{"f:a":{}}"#;
        assert!(!checked_before(first));
        remember(first);
        assert!(checked_before(first));
        assert!(!checked_before(br#"{"f:b":{}}"#));
        for i in 0..SLOTS {
            remember(format!(r#"{{"f:{i}":{{}}}}"#).as_bytes());
        }
        assert!(!checked_before(first), "evicted by the 16 after it");
        assert!(checked_before(br#"{"f:15":{}}"#));
    }
}
