//! Index functions and the named set of them an indexer is built with.

use std::sync::Arc;

use kcache_core::{BoxError, Object};

use crate::values::IndexValues;
use crate::StoreError;

/// The index name client-go uses for [`meta_namespace_index_func`] (`cache.NamespaceIndex`).
pub const NAMESPACE_INDEX: &str = "namespace";

/// An index function (client-go's `IndexFunc`): the values an object is indexed under.
///
/// It may borrow the values from the object. An error rejects the write that called it.
pub type IndexFunc<K> =
    Arc<dyn for<'a> Fn(&'a K) -> Result<IndexValues<'a>, BoxError> + Send + Sync>;

/// client-go's `MetaNamespaceIndexFunc`: an object's namespace (empty for cluster-scoped ones).
pub fn meta_namespace_index_func<K: Object>(obj: &K) -> Result<IndexValues<'_>, BoxError> {
    Ok(IndexValues::one(obj.namespace().unwrap_or("")))
}

/// Named index functions (client-go's `Indexers`), in the order they were given.
pub struct Indexers<K> {
    pub(crate) entries: Vec<(Arc<str>, IndexFunc<K>)>,
}

impl<K> Default for Indexers<K> {
    fn default() -> Self {
        Indexers {
            entries: Vec::new(),
        }
    }
}

impl<K> Clone for Indexers<K> {
    fn clone(&self) -> Self {
        Indexers {
            entries: self.entries.clone(),
        }
    }
}

impl<K: Object> Indexers<K> {
    /// Adds [`meta_namespace_index_func`] under [`NAMESPACE_INDEX`].
    pub fn with_namespace_index(self) -> Self {
        self.with(NAMESPACE_INDEX, meta_namespace_index_func::<K>)
    }
}

impl<K> Indexers<K> {
    /// No index functions.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the index function called `name`, replacing one already set under that name here
    /// (like assigning into client-go's `Indexers` map).
    pub fn with<F>(mut self, name: &str, f: F) -> Self
    where
        F: for<'a> Fn(&'a K) -> Result<IndexValues<'a>, BoxError> + Send + Sync + 'static,
    {
        let f: IndexFunc<K> = Arc::new(f);
        match self.position(name) {
            Some(i) => self.entries[i].1 = f,
            None => self.entries.push((Arc::from(name), f)),
        }
        self
    }

    /// The names, in order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|(n, _)| &**n)
    }

    /// The names `existing` already has, sorted.
    pub(crate) fn conflicts_with(&self, existing: &Indexers<K>) -> Vec<String> {
        let mut out: Vec<String> = self
            .names()
            .filter(|n| existing.position(n).is_some())
            .map(String::from)
            .collect();
        out.sort();
        out
    }

    /// The position of the index called `name`.
    pub(crate) fn position(&self, name: &str) -> Option<usize> {
        self.entries.iter().position(|(n, _)| &**n == name)
    }

    /// How many index functions.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Every index function's values for `obj`; the first failure names the index and `key`.
    pub(crate) fn compute<'a>(
        &self,
        key: &str,
        obj: &'a K,
    ) -> Result<Vec<IndexValues<'a>>, StoreError> {
        let mut values = Vec::with_capacity(self.entries.len());
        self.compute_into(key, obj, &mut values)?;
        Ok(values)
    }

    /// [`Indexers::compute`] appending to `out` (one buffer for several objects' values).
    pub(crate) fn compute_into<'a>(
        &self,
        key: &str,
        obj: &'a K,
        out: &mut Vec<IndexValues<'a>>,
    ) -> Result<(), StoreError> {
        for (name, f) in &self.entries {
            out.push(f(obj).map_err(|e| StoreError::IndexFunc {
                index: name.to_string(),
                key: key.to_string(),
                message: e.to_string(),
            })?);
        }
        Ok(())
    }

    /// These index functions followed by `more`'s.
    pub(crate) fn extended(&self, more: &Indexers<K>) -> Indexers<K> {
        let mut entries = self.entries.clone();
        entries.extend(more.entries.iter().cloned());
        Indexers { entries }
    }
}
