//! JSON encoding and decoding of `CompactValue`: decoding interns as it goes, so a duplicate
//! subtree is dropped as soon as it is complete and only its canonical copy is kept.

use std::cell::RefCell;
use std::fmt;
use std::sync::Arc;
use std::thread::LocalKey;

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Number;

use super::unique::{self, is_unique_key, Scope};
use super::value::{intern_str, CompactValue};
use super::verbatim::{is_verbatim_key, VerbatimSeed};

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

pub(crate) struct ValueVisitor;

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
        let open = Open::new(&ITEMS);
        let scope = Scope::open();
        while let Some(v) = seq.next_element()? {
            ITEMS.with_borrow_mut(|items| items.push(v));
        }
        let sharing = scope.close();
        Ok(ITEMS.with_borrow_mut(|items| CompactValue::array_from(items, open.start, sharing)))
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<CompactValue, A::Error> {
        object_rest(map, None)
    }
}

/// The object whose members `map` has left, from the value of `first_key` if that key was
/// read already.
pub(crate) fn object_rest<'de, A: MapAccess<'de>>(
    mut map: A,
    first_key: Option<Arc<str>>,
) -> Result<CompactValue, A::Error> {
    let open = Open::new(&MEMBERS);
    let scope = Scope::open();
    let mut key = first_key;
    if key.is_none() {
        key = map.next_key_seed(KeySeed)?;
    }
    while let Some(k) = key {
        let v = if is_verbatim_key(&k) {
            map.next_value_seed(VerbatimSeed)?
        } else if is_unique_key(&k) {
            map.next_value_seed(UniqueSeed)?
        } else {
            unique::member(&k, || map.next_value())?
        };
        MEMBERS.with_borrow_mut(|members| members.push((k, v)));
        key = map.next_key_seed(KeySeed)?;
    }
    let sharing = scope.close();
    Ok(MEMBERS.with_borrow_mut(|members| CompactValue::object_from(members, open.start, sharing)))
}

thread_local! {
    /// The items of the arrays this thread is decoding, innermost last: a nested array pushes
    /// its items above its parent's and takes them off when it is complete, so one buffer,
    /// grown once, serves every array (no `Vec` allocated, grown and freed per array).
    static ITEMS: RefCell<Vec<CompactValue>> = const { RefCell::new(Vec::new()) };
    /// The same for objects' members.
    static MEMBERS: RefCell<Vec<(Arc<str>, CompactValue)>> = const { RefCell::new(Vec::new()) };
}

/// Elements a thread's stack keeps reserved between values.
const KEPT: usize = 1024;

/// A container being decoded on one of the stacks: where its elements start. If decoding fails
/// (or unwinds) before it is complete, dropping this takes its elements off.
struct Open<T: 'static> {
    stack: &'static LocalKey<RefCell<Vec<T>>>,
    start: usize,
}

impl<T> Open<T> {
    fn new(stack: &'static LocalKey<RefCell<Vec<T>>>) -> Self {
        let start = stack.with_borrow(Vec::len);
        Open { stack, start }
    }
}

impl<T> Drop for Open<T> {
    fn drop(&mut self) {
        // After a complete container this only bounds what an outermost one leaves reserved
        // (one huge array would otherwise keep its size for the thread's life): its elements
        // are drained already. `try_with`: a value decoded while the thread's locals are being
        // destroyed.
        let _ = self.stack.try_with(|stack| {
            if let Ok(mut stack) = stack.try_borrow_mut() {
                stack.truncate(self.start);
                if self.start == 0 {
                    stack.shrink_to(KEPT);
                }
            }
        });
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

/// Elements on this thread's stacks (for tests: none between values).
#[cfg(test)]
pub(crate) fn open_elements() -> usize {
    ITEMS.with_borrow(Vec::len) + MEMBERS.with_borrow(Vec::len)
}

/// The `Visitor` methods of a visitor that decodes booleans, numbers, `null` and `None` as
/// [`ValueVisitor`] does (the seeds below that treat only some values their own way).
macro_rules! scalars_as_values {
    () => {
        fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<CompactValue, E> {
            ValueVisitor.visit_bool(v)
        }

        fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<CompactValue, E> {
            ValueVisitor.visit_i64(v)
        }

        fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<CompactValue, E> {
            ValueVisitor.visit_u64(v)
        }

        fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<CompactValue, E> {
            ValueVisitor.visit_f64(v)
        }

        fn visit_unit<E: serde::de::Error>(self) -> Result<CompactValue, E> {
            ValueVisitor.visit_unit()
        }

        fn visit_none<E: serde::de::Error>(self) -> Result<CompactValue, E> {
            ValueVisitor.visit_none()
        }
    };
}
pub(crate) use scalars_as_values;

/// Decodes a unique key's value: a string as a plain `Arc<str>`, anything else as usual.
pub(crate) struct UniqueSeed;

impl<'de> DeserializeSeed<'de> for UniqueSeed {
    type Value = CompactValue;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<CompactValue, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for UniqueSeed {
    type Value = CompactValue;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_str<E>(self, v: &str) -> Result<CompactValue, E> {
        unique::mark();
        Ok(CompactValue::String(Arc::from(v)))
    }

    scalars_as_values!();

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<CompactValue, D::Error> {
        d.deserialize_any(self)
    }

    fn visit_seq<A: de::SeqAccess<'de>>(self, seq: A) -> Result<CompactValue, A::Error> {
        ValueVisitor.visit_seq(seq)
    }

    fn visit_map<A: de::MapAccess<'de>>(self, map: A) -> Result<CompactValue, A::Error> {
        ValueVisitor.visit_map(map)
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<CompactValue, D::Error> {
        CompactValue::deserialize(d)
    }
}
