//! The resources a client lists in JSON although it would ask for protobuf: a protobuf list of
//! theirs held a field kcache's protobuf decoder does not know (`decode::protobuf`'s
//! `unknown_field`). The page that met it is read again in JSON (`Api::list`), and later lists
//! of the resource ask for JSON straight away, so the second request is paid once per resource
//! and client.
//!
//! Why not skip the field: the JSON path keeps members its reader does not know (kcache-core's
//! `ObjectMeta.other`, `DynamicObject`, kcache-compact's `Compact<K>`), and a field number cannot
//! be turned into a member name without the schema; JSON gives the answer the reader expects.

use std::collections::HashSet;

use parking_lot::Mutex;

use crate::decode::ItemKind;

/// The resources listed in JSON from now on, by what their protobuf list was asked as.
#[derive(Debug, Default)]
pub(crate) struct JsonFallback {
    resources: Mutex<HashSet<(ItemKind, String)>>,
}

impl JsonFallback {
    /// Whether lists of `resource` (its collection path across namespaces) asked for as `kind`
    /// go to JSON.
    pub(crate) fn holds(&self, kind: ItemKind, resource: &str) -> bool {
        self.resources
            .lock()
            .contains(&(kind, resource.to_string()))
    }

    /// Lists of `resource` asked for as `kind` go to JSON from now on.
    pub(crate) fn remember(&self, kind: ItemKind, resource: String) {
        if self.resources.lock().insert((kind, resource.clone())) {
            tracing::info!(
                resource,
                ?kind,
                "a protobuf list held a field kcache does not know: listing in JSON from now on"
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_resource_is_remembered_per_kind() {
        let fallback = JsonFallback::default();
        assert!(!fallback.holds(ItemKind::ConfigMap, "/api/v1/configmaps"));
        fallback.remember(ItemKind::ConfigMap, "/api/v1/configmaps".into());
        assert!(fallback.holds(ItemKind::ConfigMap, "/api/v1/configmaps"));
        // A metadata-only list of the same resource, or another resource, still asks protobuf.
        assert!(!fallback.holds(ItemKind::PartialObjectMetadata, "/api/v1/configmaps"));
        assert!(!fallback.holds(ItemKind::ConfigMap, "/api/v1/secrets"));
    }
}
