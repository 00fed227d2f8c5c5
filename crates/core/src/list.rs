//! One page of a list response.

use serde::{Deserialize, Serialize};

use crate::meta::ListMeta;

/// One page of a list (`metav1.List` of `K`): the items and the list's metadata.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ObjectList<K> {
    /// resourceVersion, continue token and remaining item count.
    #[serde(default)]
    pub metadata: ListMeta,
    /// The items of this page.
    #[serde(default = "Vec::new")]
    pub items: Vec<K>,
}

impl<K> Default for ObjectList<K> {
    fn default() -> Self {
        ObjectList {
            metadata: ListMeta::default(),
            items: Vec::new(),
        }
    }
}

impl<K> ObjectList<K> {
    /// A page with these items at this resourceVersion, and no continuation.
    pub fn new(items: Vec<K>, resource_version: impl Into<String>) -> Self {
        ObjectList {
            metadata: ListMeta {
                resource_version: Some(resource_version.into()),
                ..ListMeta::default()
            },
            items,
        }
    }

    /// The resourceVersion the page was served at ("" if none).
    pub fn resource_version(&self) -> &str {
        self.metadata.resource_version.as_deref().unwrap_or("")
    }

    /// The continue token for the next page, if there is one.
    pub fn continue_token(&self) -> Option<&str> {
        self.metadata.continue_.as_deref().filter(|c| !c.is_empty())
    }
}
