#![doc = include_str!("../README.md")]

mod any_json;
mod meta_check;
mod meta_fields;
mod raw_value;

pub use any_json::{accepts_any_json, AnyJson, AnyJsonVisitor, ANY_JSON_TOKEN};
pub use meta_check::{check_object_meta, is_object_meta};
pub use meta_fields::{
    MetaField, MetaKey, MetaKind, MetaMember, OtherKey, OBJECT_META, OBJECT_META_FIELDS,
    OBJECT_META_LEN, OBJECT_META_NAME,
};
pub use raw_value::{raw_value_answer, FirstKey, FirstKeyIs, RAW_VALUE_TOKEN};
