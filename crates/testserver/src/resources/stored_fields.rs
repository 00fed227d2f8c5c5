//! Where a converted resource is stored and which field paths its collection indexes: what the
//! storage needs of the version table, apart from the conversions themselves.

use super::behaviour::behaviour;
use super::versions::{storage, Family, Storage};
use super::ResourceInfo;

/// Where `res` is stored, when its versions are converted (built-in resources in the table).
pub(super) fn stored_as(res: &ResourceInfo) -> Option<Storage> {
    res.builtin
        .then(|| storage(&res.api.group, &res.api.plural))
        .flatten()
}

/// The field selector paths the stored objects of `res`'s collection index: the storage
/// version's (a core Event's, whichever version writes first).
pub(crate) fn stored_fields(res: &ResourceInfo) -> Vec<String> {
    match stored_as(res) {
        Some(s) if s.family == Family::Event => behaviour("", "events")
            .fields
            .iter()
            .map(|f| f.to_string())
            .collect(),
        _ => res.fields.clone(),
    }
}
