//! Object metadata as the API server sends it (`metav1.ObjectMeta`, `metav1.TypeMeta`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::managed_fields::ManagedFieldsEntry;

/// `apiVersion` and `kind`, present on objects sent by the API server.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TypeMeta {
    /// `group/version`, or `version` for the core group.
    #[serde(rename = "apiVersion")]
    pub api_version: String,
    /// The object's kind, e.g. `ConfigMap`.
    pub kind: String,
}

/// An owner reference (`metav1.OwnerReference`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OwnerReference {
    /// The owner's `apiVersion`.
    pub api_version: String,
    /// The owner's kind.
    pub kind: String,
    /// The owner's name.
    pub name: String,
    /// The owner's uid.
    pub uid: String,
    /// Whether the owner is the managing controller.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub controller: Option<bool>,
    /// Whether the owner cannot be deleted before this object (foreground deletion).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block_owner_deletion: Option<bool>,
}

/// The metadata every object carries (`metav1.ObjectMeta`).
///
/// The fields the machinery reads are typed, and `managedFields` (each entry's field set kept as
/// its JSON text, see [`ManagedFieldsEntry`]); every other field (`selfLink`, ...) is kept as
/// JSON in `other`, so an object read and written back loses nothing. (`Deserialize` is written
/// by hand in `meta_de`, without serde's buffering for `flatten`.)
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ObjectMeta {
    /// The object's name.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// Prefix the server completes into a unique name on create.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generate_name: Option<String>,
    /// The namespace; absent for cluster-scoped objects.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// The server-assigned unique id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uid: Option<String>,
    /// The opaque version of this object; changes on every write.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_version: Option<String>,
    /// The spec generation, bumped by the server on spec changes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generation: Option<i64>,
    /// RFC 3339 creation time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub creation_timestamp: Option<String>,
    /// RFC 3339 time at which deletion was requested.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deletion_timestamp: Option<String>,
    /// Grace period of a pending deletion.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deletion_grace_period_seconds: Option<i64>,
    /// Labels, matched by label selectors.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labels: Option<BTreeMap<String, String>>,
    /// Annotations (the watch-list end bookmark is one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<BTreeMap<String, String>>,
    /// Owners of this object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner_references: Option<Vec<OwnerReference>>,
    /// Finalizers that hold a deletion until removed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finalizers: Option<Vec<String>>,
    /// Which field managers set which fields (server-side apply's bookkeeping).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub managed_fields: Option<Vec<ManagedFieldsEntry>>,
    /// Every other metadata field, kept verbatim.
    #[serde(flatten)]
    pub other: serde_json::Map<String, serde_json::Value>,
}

/// List metadata (`metav1.ListMeta`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListMeta {
    /// The resourceVersion the list was served at.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_version: Option<String>,
    /// The token for the next page; absent or empty on the last page.
    #[serde(default, rename = "continue", skip_serializing_if = "Option::is_none")]
    pub continue_: Option<String>,
    /// How many items remain after this page, when the server knows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remaining_item_count: Option<i64>,
    /// The `shardSelector` the server applied (KEP-5866); absent when it ignored or was not
    /// sent one, so a client that asked for a shard learns whether the list is filtered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard_info: Option<ShardInfo>,
}

/// `metav1.ShardInfo` (KEP-5866): what a sharded list was filtered by.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShardInfo {
    /// The applied selector, in the server's canonical form.
    #[serde(default)]
    pub selector: String,
}
