//! Label, field and shard selectors: parsing, matching and canonical form.

mod field;
mod label;
mod shard;
mod validate;

pub use field::{FieldRequirement, FieldSelector};
pub use label::{LabelSelector, Operator, Requirement};
pub use shard::{fnv1a64, fnv1a64_continue, ShardField, ShardRange, ShardSelector};

/// A selector string that does not parse, with what was wrong and where.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid {kind} selector {input:?}: {message}")]
pub struct SelectorError {
    /// "label", "field" or "shard".
    pub kind: &'static str,
    /// The whole selector string.
    pub input: String,
    /// What was wrong.
    pub message: String,
}
