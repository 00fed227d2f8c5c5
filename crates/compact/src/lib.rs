#![doc = include_str!("../README.md")]

mod de;
mod front;
mod interner;
mod object;
mod serde_impls;
mod typed;
mod unique;
mod value;
mod verbatim;

#[cfg(test)]
mod tests;

pub use object::CompactObject;
pub use typed::Compact;
pub use value::{CompactMap, CompactValue};
