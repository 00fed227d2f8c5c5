#![doc = include_str!("../README.md")]

mod interner;
mod object;
mod serde_impls;
mod value;

#[cfg(test)]
mod tests;

pub use object::CompactObject;
pub use value::{CompactMap, CompactValue};
