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

/// Whether an index function would give `new` the values it gave `old`, which `new` replaces:
/// true only if they agree on everything the function reads (see [`Indexers::with_reuse`]).
pub type SameInputs<K> = Arc<dyn Fn(&K, &K) -> bool + Send + Sync>;

/// One named index function, with its [`SameInputs`] check if it has one.
pub(crate) struct Entry<K> {
    pub(crate) name: Arc<str>,
    pub(crate) func: IndexFunc<K>,
    same_inputs: Option<SameInputs<K>>,
}

impl<K> Clone for Entry<K> {
    fn clone(&self) -> Self {
        Entry {
            name: self.name.clone(),
            func: self.func.clone(),
            same_inputs: self.same_inputs.clone(),
        }
    }
}

/// client-go's `MetaNamespaceIndexFunc`: an object's namespace (empty for cluster-scoped ones).
pub fn meta_namespace_index_func<K: Object>(obj: &K) -> Result<IndexValues<'_>, BoxError> {
    Ok(IndexValues::one(obj.namespace().unwrap_or("")))
}

/// Named index functions (client-go's `Indexers`), in the order they were given.
pub struct Indexers<K> {
    pub(crate) entries: Vec<Entry<K>>,
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
    pub fn with<F>(self, name: &str, f: F) -> Self
    where
        F: for<'a> Fn(&'a K) -> Result<IndexValues<'a>, BoxError> + Send + Sync + 'static,
    {
        self.set(name, Arc::new(f), None)
    }

    /// Sets the index function called `name` as [`Indexers::with`] does, with a check that
    /// spares calling it: when an object replaces one with the same key and
    /// `same_inputs(old, new)` holds, the new object keeps the old one's values in this index
    /// and `f` is not called. client-go calls every index function on every update; an
    /// update that changes only what no index reads (a status, the resourceVersion) then costs
    /// no index function at all, which matters when `f` is dear (one that decodes the object).
    ///
    /// `same_inputs` must hold only if `f` would return the same values for both, e.g. when
    /// they agree on every field `f` reads. Debug builds check it: on every reuse they call `f`
    /// on both and panic, naming the index and key, if the values differ.
    pub fn with_reuse<F, S>(self, name: &str, f: F, same_inputs: S) -> Self
    where
        F: for<'a> Fn(&'a K) -> Result<IndexValues<'a>, BoxError> + Send + Sync + 'static,
        S: Fn(&K, &K) -> bool + Send + Sync + 'static,
    {
        self.set(name, Arc::new(f), Some(Arc::new(same_inputs)))
    }

    fn set(mut self, name: &str, func: IndexFunc<K>, same_inputs: Option<SameInputs<K>>) -> Self {
        let entry = Entry {
            name: Arc::from(name),
            func,
            same_inputs,
        };
        match self.position(name) {
            Some(i) => self.entries[i] = entry,
            None => self.entries.push(entry),
        }
        self
    }

    /// The names, in order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|e| &*e.name)
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
        self.entries.iter().position(|e| &*e.name == name)
    }

    /// How many index functions.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Every index function's values for `obj`, replacing `old` if it does (see
    /// [`Indexers::compute_into`]); the first failure names the index and `key`.
    pub(crate) fn compute<'a>(
        &self,
        key: &str,
        old: Option<&K>,
        obj: &'a K,
    ) -> Result<Vec<IndexValues<'a>>, StoreError> {
        let mut values = Vec::with_capacity(self.entries.len());
        self.compute_into(key, old, obj, &mut values)?;
        Ok(values)
    }

    /// Whether some index function has a [`SameInputs`] check, for which a write needs the
    /// object it replaces.
    pub(crate) fn reuses(&self) -> bool {
        self.entries.iter().any(|e| e.same_inputs.is_some())
    }

    /// [`Indexers::compute`] appending to `out` (one buffer for several objects' values), for
    /// `obj` replacing `old` if it does: an index function whose [`SameInputs`] check holds for
    /// them is not called, its values are [`IndexValues::kept`].
    pub(crate) fn compute_into<'a>(
        &self,
        key: &str,
        old: Option<&K>,
        obj: &'a K,
        out: &mut Vec<IndexValues<'a>>,
    ) -> Result<(), StoreError> {
        for e in &self.entries {
            if let (Some(old), Some(same)) = (old, &e.same_inputs) {
                if same(old, obj) {
                    #[cfg(debug_assertions)]
                    e.check_reuse(key, old, obj);
                    out.push(IndexValues::kept());
                    continue;
                }
            }
            out.push((e.func)(obj).map_err(|err| StoreError::IndexFunc {
                index: e.name.to_string(),
                key: key.to_string(),
                message: err.to_string(),
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

#[cfg(debug_assertions)]
impl<K> Entry<K> {
    /// Panics if this index function's [`SameInputs`] check held for values that differ: the
    /// index would have kept wrong values.
    fn check_reuse(&self, key: &str, old: &K, new: &K) {
        let (before, after) = ((self.func)(old).ok(), (self.func)(new).ok());
        assert!(
            before == after,
            "index {:?}: its same-inputs check held for {key:?}, but its values went from \
             {before:?} to {after:?}",
            self.name,
        );
    }
}
