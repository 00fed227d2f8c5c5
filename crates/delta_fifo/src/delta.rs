//! Deltas: what happened to one object, oldest first.

use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

use kcache_core::{DeletedFinalStateUnknown, Object, ObjectKey};

/// What a delta carries: the object, or the tombstone of a missed deletion. It is kcache-core's
/// [`DeletedObject`](kcache_core::DeletedObject), so an informer hands it to `on_delete` as is.
pub use kcache_core::DeletedObject as DeltaObject;

use crate::Error;

/// The kind of change a [`Delta`] records (client-go's `DeltaType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DeltaType {
    /// The object was created (watch `ADDED`).
    Added,
    /// The object changed (watch `MODIFIED`).
    Updated,
    /// The object was deleted; its object may be a [`DeletedFinalStateUnknown`] tombstone.
    Deleted,
    /// The object came from a relist (`replace`) and `emit_delta_type_replaced` is on.
    Replaced,
    /// The object came from a resync, or from a relist when `emit_delta_type_replaced` is off.
    Sync,
}

impl DeltaType {
    /// client-go's spelling of the type ("Added", "Updated", ...).
    pub fn as_str(self) -> &'static str {
        match self {
            DeltaType::Added => "Added",
            DeltaType::Updated => "Updated",
            DeltaType::Deleted => "Deleted",
            DeltaType::Replaced => "Replaced",
            DeltaType::Sync => "Sync",
        }
    }
}

impl fmt::Display for DeltaType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One change to one object (client-go's `Delta`).
#[derive(Debug, PartialEq)]
pub struct Delta<K> {
    /// What happened.
    pub type_: DeltaType,
    /// The object after it happened (or a tombstone for a missed deletion).
    pub object: DeltaObject<K>,
}

impl<K> Delta<K> {
    /// A delta carrying an object.
    pub fn new(type_: DeltaType, obj: Arc<K>) -> Self {
        Delta {
            type_,
            object: DeltaObject::Object(obj),
        }
    }

    /// A `Deleted` delta carrying a tombstone.
    pub fn tombstone(key: ObjectKey, obj: Option<Arc<K>>) -> Self {
        Delta {
            type_: DeltaType::Deleted,
            object: DeltaObject::Tombstone(Box::new(DeletedFinalStateUnknown { key, obj })),
        }
    }

    /// What the cache holds for this key once the delta is applied: nothing after a deletion,
    /// else the object (the rule an informer applies).
    pub(crate) fn resulting_object(&self) -> Option<Arc<K>> {
        match (&self.type_, &self.object) {
            (DeltaType::Deleted, _) => None,
            (_, o) => o.object().cloned(),
        }
    }
}

impl<K> Clone for Delta<K> {
    fn clone(&self) -> Self {
        Delta {
            type_: self.type_,
            object: self.object.clone(),
        }
    }
}

/// The deltas of one key, oldest first (client-go's `Deltas`).
///
/// The FIFO hands out one `Deltas` per pop. It is never empty when it comes from the FIFO; one
/// built by hand may be, and then [`Deltas::key`] fails like client-go's `KeyOf`.
#[derive(Debug, PartialEq)]
pub struct Deltas<K>(pub(crate) Vec<Delta<K>>);

impl<K> Deltas<K> {
    /// The oldest delta.
    pub fn oldest(&self) -> Option<&Delta<K>> {
        self.0.first()
    }

    /// The newest delta.
    pub fn newest(&self) -> Option<&Delta<K>> {
        self.0.last()
    }

    /// The deltas as a vector.
    pub fn into_vec(self) -> Vec<Delta<K>> {
        self.0
    }
}

impl<K: Object> Deltas<K> {
    /// The key of the newest delta's object (client-go's `KeyOf` on a `Deltas`).
    pub fn key(&self) -> Result<ObjectKey, Error> {
        self.newest()
            .map(|d| d.object.key())
            .ok_or(Error::EmptyDeltas)
    }
}

impl<K> Clone for Deltas<K> {
    fn clone(&self) -> Self {
        Deltas(self.0.clone())
    }
}

impl<K> Deref for Deltas<K> {
    type Target = [Delta<K>];
    fn deref(&self) -> &[Delta<K>] {
        &self.0
    }
}

impl<K> From<Vec<Delta<K>>> for Deltas<K> {
    fn from(v: Vec<Delta<K>>) -> Self {
        Deltas(v)
    }
}

impl<K> IntoIterator for Deltas<K> {
    type Item = Delta<K>;
    type IntoIter = std::vec::IntoIter<Delta<K>>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

impl<'a, K> IntoIterator for &'a Deltas<K> {
    type Item = &'a Delta<K>;
    type IntoIter = std::slice::Iter<'a, Delta<K>>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

impl<K> Default for Deltas<K> {
    fn default() -> Self {
        Deltas(Vec::new())
    }
}
