//! Label and field selectors: parsing, matching and canonical form.

mod field;
mod label;
mod validate;

pub use field::{FieldRequirement, FieldSelector};
pub use label::{LabelSelector, Operator, Requirement};

/// A selector string that does not parse, with what was wrong and where.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid {kind} selector {input:?}: {message}")]
pub struct SelectorError {
    /// "label" or "field".
    pub kind: &'static str,
    /// The whole selector string.
    pub input: String,
    /// What was wrong.
    pub message: String,
}
