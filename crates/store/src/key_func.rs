//! Key functions: how a store names its objects.

use std::fmt;
use std::sync::Arc;

use kcache_core::{BoxError, DeletedFinalStateUnknown, Object, ObjectKey};

/// A custom key function (client-go's `KeyFunc`); it may fail, which rejects the write.
pub type CustomKeyFunc<K> = Arc<dyn Fn(&K) -> Result<ObjectKey, BoxError> + Send + Sync>;

/// How a store computes an object's key.
pub enum KeyFunc<K> {
    /// client-go's `MetaNamespaceKeyFunc`: `namespace/name`, or `name` when cluster-scoped.
    MetaNamespace,
    /// Any other function.
    Custom(CustomKeyFunc<K>),
}

impl<K> Clone for KeyFunc<K> {
    fn clone(&self) -> Self {
        match self {
            KeyFunc::MetaNamespace => KeyFunc::MetaNamespace,
            KeyFunc::Custom(f) => KeyFunc::Custom(f.clone()),
        }
    }
}

impl<K> fmt::Debug for KeyFunc<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            KeyFunc::MetaNamespace => "MetaNamespaceKeyFunc",
            KeyFunc::Custom(_) => "Custom",
        })
    }
}

impl<K: Object> KeyFunc<K> {
    /// Wraps a custom function.
    pub fn custom<F>(f: F) -> Self
    where
        F: Fn(&K) -> Result<ObjectKey, BoxError> + Send + Sync + 'static,
    {
        KeyFunc::Custom(Arc::new(f))
    }

    /// The key of `obj`.
    pub fn key_of(&self, obj: &K) -> Result<ObjectKey, crate::StoreError> {
        match self {
            KeyFunc::MetaNamespace => Ok(meta_namespace_key_func(obj)),
            KeyFunc::Custom(f) => f(obj).map_err(|e| crate::StoreError::Key(e.to_string())),
        }
    }
}

/// client-go's `MetaNamespaceKeyFunc`: [`ObjectKey::of`].
pub fn meta_namespace_key_func<K: Object + ?Sized>(obj: &K) -> ObjectKey {
    ObjectKey::of(obj)
}

/// The key of a tombstone is the key it was stored under, whatever its last known object says
/// (client-go's `DeletionHandlingMetaNamespaceKeyFunc`).
pub fn deletion_handling_meta_namespace_key_func<K>(
    tombstone: &DeletedFinalStateUnknown<K>,
) -> ObjectKey {
    tombstone.key.clone()
}
