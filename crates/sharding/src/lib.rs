#![doc = include_str!("../README.md")]

mod hash;
mod key;
mod ring;

pub use hash::hash_key;
pub use key::{object_key, KeyFn, ShardKey};
pub use ring::{HashRing, DEFAULT_VIRTUAL_NODES};
