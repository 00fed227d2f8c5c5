//! Listers: read-only, selector-aware views of an indexer (client-go's `GenericLister`).

use std::sync::Arc;

use kcache_core::selector::LabelSelector;
use kcache_core::{Object, Resource};

use crate::{Indexer, StoreError, NAMESPACE_INDEX};

/// The resource name client-go's generated listers put in NotFound errors: the lower-case kind,
/// then `.group` for non-core groups (`configmap`, `deployment.apps`).
pub fn lister_resource_name<R: Resource>() -> String {
    let kind = R::KIND.to_ascii_lowercase();
    if R::GROUP.is_empty() {
        kind
    } else {
        format!("{kind}.{}", R::GROUP)
    }
}

/// Every object of `indexer` that `selector` matches (client-go's `ListAll`); the empty selector
/// matches all without reading labels.
pub fn list_all<K: Object>(indexer: &Indexer<K>, selector: &LabelSelector) -> Vec<Arc<K>> {
    if selector.is_empty() {
        return indexer.list();
    }
    indexer
        .snapshot()
        .objects()
        .filter(|o| selector.matches_object(&***o))
        .cloned()
        .collect()
}

/// The objects of one namespace that `selector` matches (client-go's `ListAllByNamespace`): read
/// from the [`NAMESPACE_INDEX`] index when the indexer has one, else by a scan. An empty namespace
/// means all namespaces.
pub fn list_all_by_namespace<K: Object>(
    indexer: &Indexer<K>,
    namespace: &str,
    selector: &LabelSelector,
) -> Vec<Arc<K>> {
    if namespace.is_empty() {
        return list_all(indexer, selector);
    }
    match indexer.by_index(NAMESPACE_INDEX, namespace) {
        Ok(mut objs) => {
            if !selector.is_empty() {
                objs.retain(|o| selector.matches_object(&**o));
            }
            objs
        }
        Err(_) => indexer
            .snapshot()
            .objects()
            .filter(|o| o.namespace().unwrap_or("") == namespace && selector.matches_object(&***o))
            .cloned()
            .collect(),
    }
}

/// A lister over all namespaces (client-go's `GenericLister` / generated `XLister`).
pub struct Lister<K> {
    indexer: Arc<Indexer<K>>,
    resource: Arc<str>,
}

impl<K> Clone for Lister<K> {
    fn clone(&self) -> Self {
        Lister {
            indexer: self.indexer.clone(),
            resource: self.resource.clone(),
        }
    }
}

impl<K: Object> Lister<K> {
    /// A lister whose NotFound errors name `resource` (e.g. `configmap`).
    pub fn new(indexer: Arc<Indexer<K>>, resource: &str) -> Self {
        Lister {
            indexer,
            resource: Arc::from(resource),
        }
    }

    /// A lister naming the resource as client-go's generated listers do
    /// ([`lister_resource_name`]).
    pub fn for_resource(indexer: Arc<Indexer<K>>) -> Self
    where
        K: Resource,
    {
        Self::new(indexer, &lister_resource_name::<K>())
    }

    /// The objects `selector` matches, across namespaces.
    pub fn list(&self, selector: &LabelSelector) -> Vec<Arc<K>> {
        list_all(&self.indexer, selector)
    }

    /// The object whose key is `name` (cluster-scoped objects; for namespaced ones use
    /// [`Lister::by_namespace`]).
    pub fn get(&self, name: &str) -> Result<Arc<K>, StoreError> {
        self.indexer
            .get_by_key(name)
            .ok_or_else(|| StoreError::NotFound {
                resource: self.resource.to_string(),
                name: name.to_string(),
            })
    }

    /// A lister for one namespace.
    pub fn by_namespace(&self, namespace: &str) -> NamespaceLister<K> {
        NamespaceLister {
            lister: self.clone(),
            namespace: Arc::from(namespace),
        }
    }
}

/// A lister for one namespace (client-go's `GenericNamespaceLister`).
pub struct NamespaceLister<K> {
    lister: Lister<K>,
    namespace: Arc<str>,
}

impl<K: Object> NamespaceLister<K> {
    /// The objects of this namespace that `selector` matches.
    pub fn list(&self, selector: &LabelSelector) -> Vec<Arc<K>> {
        list_all_by_namespace(&self.lister.indexer, &self.namespace, selector)
    }

    /// The object `namespace/name`; NotFound names the resource and `name`.
    pub fn get(&self, name: &str) -> Result<Arc<K>, StoreError> {
        let key = kcache_core::ObjectKey::new(&self.namespace, name);
        self.lister
            .indexer
            .get_by_key(key.as_str())
            .ok_or_else(|| StoreError::NotFound {
                resource: self.lister.resource.to_string(),
                name: name.to_string(),
            })
    }
}
