//! What a resource's own delete rule (a namespace's or a CRD's termination) tells the generic
//! delete.

use serde_json::Value;

/// What a resource's own delete rule made of a DELETE.
pub(crate) enum Termination {
    /// Done: the object as stored now (its termination began, or is under way).
    Answer(Value),
    /// The object changed meanwhile: read it again.
    Conflict,
    /// The registry's generic delete applies (finalizers hold the object, else it goes).
    Generic,
}
