//! `ObjectMeta`'s members, declared once: what each is called in JSON, its protobuf field
//! number in apimachinery's `generated.proto`, what kind of value it holds, and which typed
//! field of kcache-core's `ObjectMeta` keeps it (`None`: kept in `other` as JSON).
//!
//! kcache-core's `ObjectMeta` deserializer and [`check_object_meta`](crate::check_object_meta)
//! read keys through [`MetaKey`]; kcache-transport's protobuf decoder presents an `ObjectMeta`
//! message as the members of [`OBJECT_META`], in its order (the keys' order), and refuses a
//! message holding a field number the table does not have (the transport then reads the list
//! in JSON, which names the member): a field added to `ObjectMeta` upstream goes here.

use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, Deserialize, Deserializer, Visitor};

/// A typed field of kcache-core's `ObjectMeta`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)] // each is the member of the same name
pub enum MetaField {
    Name,
    GenerateName,
    Namespace,
    Uid,
    ResourceVersion,
    Generation,
    CreationTimestamp,
    DeletionTimestamp,
    DeletionGracePeriodSeconds,
    Labels,
    Annotations,
    OwnerReferences,
    Finalizers,
    ManagedFields,
}

/// What a member holds, as JSON has it and as the protobuf wire carries it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MetaKind {
    /// A string (protobuf: a string field).
    String,
    /// An RFC 3339 time (protobuf: a `Time` message).
    Time,
    /// An integer (protobuf: a varint); `omit_zero`: Go's JSON leaves a zero out.
    Int {
        /// Whether zero is left out (`omitempty` on a non-pointer field).
        omit_zero: bool,
    },
    /// A `map<string, string>`.
    StringMap,
    /// A list of strings.
    Strings,
    /// A list of `OwnerReference` messages.
    OwnerReferences,
    /// A list of `ManagedFieldsEntry` messages.
    ManagedFields,
}

/// One member of `ObjectMeta`.
#[derive(Clone, Copy, Debug)]
pub struct MetaMember {
    /// The JSON key.
    pub name: &'static str,
    /// The protobuf field number.
    pub proto: u32,
    /// What it holds.
    pub kind: MetaKind,
    /// The typed field keeping it, `None` for members kept as JSON in `other`.
    pub field: Option<MetaField>,
}

const fn member(
    name: &'static str,
    proto: u32,
    kind: MetaKind,
    field: Option<MetaField>,
) -> MetaMember {
    MetaMember {
        name,
        proto,
        kind,
        field,
    }
}

/// How many members `ObjectMeta` has ([`OBJECT_META`]).
pub const OBJECT_META_LEN: usize = 16;

const TABLE: [MetaMember; OBJECT_META_LEN] = {
    use MetaField as F;
    use MetaKind as K;
    [
        member("annotations", 12, K::StringMap, Some(F::Annotations)),
        member("clusterName", 15, K::String, None),
        member("creationTimestamp", 8, K::Time, Some(F::CreationTimestamp)),
        member(
            "deletionGracePeriodSeconds",
            10,
            K::Int { omit_zero: false },
            Some(F::DeletionGracePeriodSeconds),
        ),
        member("deletionTimestamp", 9, K::Time, Some(F::DeletionTimestamp)),
        member("finalizers", 14, K::Strings, Some(F::Finalizers)),
        member("generateName", 2, K::String, Some(F::GenerateName)),
        member(
            "generation",
            7,
            K::Int { omit_zero: true },
            Some(F::Generation),
        ),
        member("labels", 11, K::StringMap, Some(F::Labels)),
        member(
            "managedFields",
            17,
            K::ManagedFields,
            Some(F::ManagedFields),
        ),
        member("name", 1, K::String, Some(F::Name)),
        member("namespace", 3, K::String, Some(F::Namespace)),
        member(
            "ownerReferences",
            13,
            K::OwnerReferences,
            Some(F::OwnerReferences),
        ),
        member("resourceVersion", 6, K::String, Some(F::ResourceVersion)),
        member("selfLink", 4, K::String, None),
        member("uid", 5, K::String, Some(F::Uid)),
    ]
};

/// Every member of `ObjectMeta`, in the order of their JSON keys.
pub static OBJECT_META: [MetaMember; OBJECT_META_LEN] = TABLE;

/// The struct name kcache-core's `ObjectMeta` gives `deserialize_struct`.
pub const OBJECT_META_NAME: &str = "ObjectMeta";

/// The field list kcache-core's `ObjectMeta` gives `deserialize_struct`: [`OBJECT_META`]'s
/// keys. A decoder recognizes `ObjectMeta` by this list's address
/// ([`is_object_meta`](crate::is_object_meta)), a static no other type passes.
pub static OBJECT_META_FIELDS: [&str; OBJECT_META_LEN] = {
    let mut names = [""; OBJECT_META_LEN];
    let mut i = 0;
    while i < TABLE.len() {
        names[i] = TABLE[i].name;
        i += 1;
    }
    names
};

/// An `ObjectMeta` member's key: a typed field, or any other key (kept as `O`: its text when
/// building, nothing when only checking).
pub enum MetaKey<O> {
    /// A typed field.
    Field(MetaField),
    /// Any other key.
    Other(O),
}

/// What an untyped key is kept as.
pub trait OtherKey: Sized {
    /// The kept form of `key`.
    fn of(key: &str) -> Self;
}

impl OtherKey for String {
    fn of(key: &str) -> Self {
        key.to_owned()
    }
}

impl OtherKey for () {
    fn of(_: &str) -> Self {}
}

impl<O: OtherKey> MetaKey<O> {
    /// The key `key` names.
    pub fn of(key: &str) -> Self {
        match OBJECT_META
            .iter()
            .find(|m| m.name == key)
            .and_then(|m| m.field)
        {
            Some(field) => MetaKey::Field(field),
            None => MetaKey::Other(O::of(key)),
        }
    }
}

impl<'de, O: OtherKey> Deserialize<'de> for MetaKey<O> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct KeyVisitor<O>(PhantomData<O>);
        impl<O: OtherKey> Visitor<'_> for KeyVisitor<O> {
            type Value = MetaKey<O>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an ObjectMeta field name")
            }
            fn visit_str<E: de::Error>(self, key: &str) -> Result<MetaKey<O>, E> {
                Ok(MetaKey::of(key))
            }
        }
        d.deserialize_identifier(KeyVisitor(PhantomData))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_in_key_order_with_distinct_numbers_and_fields() {
        let names: Vec<_> = OBJECT_META.iter().map(|m| m.name).collect();
        let mut sorted = names.clone();
        sorted.sort_unstable();
        assert_eq!(names, sorted);
        assert_eq!(OBJECT_META_FIELDS.to_vec(), names);
        let mut numbers: Vec<_> = OBJECT_META.iter().map(|m| m.proto).collect();
        numbers.sort_unstable();
        numbers.dedup();
        assert_eq!(numbers.len(), OBJECT_META.len());
        let typed = OBJECT_META.iter().filter_map(|m| m.field).count();
        assert_eq!(typed, 14);
    }

    #[test]
    fn keys_name_their_fields() {
        for m in &OBJECT_META {
            match (MetaKey::<String>::of(m.name), m.field) {
                (MetaKey::Field(f), Some(g)) => assert_eq!(f, g),
                (MetaKey::Other(k), None) => assert_eq!(k, m.name),
                _ => panic!("{} is read as the wrong key", m.name),
            }
        }
        assert!(matches!(MetaKey::<String>::of("x"), MetaKey::Other(k) if k == "x"));
    }
}
