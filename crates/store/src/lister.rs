//! Listers: read-only, selector-aware views of a cache (client-go's `GenericLister`), over
//! any [`CacheReader`] — client-go's listers take the `Indexer` interface the same way.

use std::marker::PhantomData;
use std::sync::Arc;

use kcache_core::selector::LabelSelector;
use kcache_core::{CacheReader, Object, Resource};

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

/// Every object of `cache` that `selector` matches (client-go's `ListAll`); the empty selector
/// matches all without reading labels.
pub fn list_all<K: Object, C: CacheReader<K> + ?Sized>(
    cache: &C,
    selector: &LabelSelector,
) -> Vec<Arc<K>> {
    if selector.is_empty() {
        return cache.list();
    }
    cache.list_matching(&mut |o| selector.matches_object(o))
}

/// The objects of one namespace that `selector` matches (client-go's `ListAllByNamespace`): read
/// from the [`NAMESPACE_INDEX`] index when the cache has one, else by a scan. An empty namespace
/// means all namespaces.
pub fn list_all_by_namespace<K: Object, C: CacheReader<K> + ?Sized>(
    cache: &C,
    namespace: &str,
    selector: &LabelSelector,
) -> Vec<Arc<K>> {
    if namespace.is_empty() {
        return list_all(cache, selector);
    }
    match cache.by_index(NAMESPACE_INDEX, namespace) {
        Ok(mut objs) => {
            if !selector.is_empty() {
                objs.retain(|o| selector.matches_object(&**o));
            }
            objs
        }
        Err(_) => cache.list_matching(&mut |o| {
            o.namespace().unwrap_or("") == namespace && selector.matches_object(o)
        }),
    }
}

/// A lister over all namespaces (client-go's `GenericLister` / generated `XLister`), reading any
/// [`CacheReader`] — an [`Indexer`] unless said otherwise (an informer's `indexer()`, or a
/// cache of your own).
pub struct Lister<K, C: ?Sized = Indexer<K>> {
    cache: Arc<C>,
    resource: Arc<str>,
    _objects: PhantomData<fn() -> K>,
}

impl<K, C: ?Sized> Clone for Lister<K, C> {
    fn clone(&self) -> Self {
        Lister {
            cache: self.cache.clone(),
            resource: self.resource.clone(),
            _objects: PhantomData,
        }
    }
}

impl<K: Object, C: CacheReader<K> + ?Sized> Lister<K, C> {
    /// A lister over `cache` whose NotFound errors name `resource` (e.g. `configmap`).
    pub fn new(cache: Arc<C>, resource: &str) -> Self {
        Lister {
            cache,
            resource: Arc::from(resource),
            _objects: PhantomData,
        }
    }

    /// A lister naming the resource as client-go's generated listers do
    /// ([`lister_resource_name`]).
    pub fn for_resource(cache: Arc<C>) -> Self
    where
        K: Resource,
    {
        Self::new(cache, &lister_resource_name::<K>())
    }

    /// The objects `selector` matches, across namespaces.
    pub fn list(&self, selector: &LabelSelector) -> Vec<Arc<K>> {
        list_all(&*self.cache, selector)
    }

    /// The object whose key is `name` (cluster-scoped objects; for namespaced ones use
    /// [`Lister::by_namespace`]).
    pub fn get(&self, name: &str) -> Result<Arc<K>, StoreError> {
        self.cache
            .get_by_key(name)
            .ok_or_else(|| StoreError::NotFound {
                resource: self.resource.to_string(),
                name: name.to_string(),
            })
    }

    /// A lister for one namespace.
    pub fn by_namespace(&self, namespace: &str) -> NamespaceLister<K, C> {
        NamespaceLister {
            lister: self.clone(),
            namespace: Arc::from(namespace),
        }
    }
}

/// A lister for one namespace (client-go's `GenericNamespaceLister`).
pub struct NamespaceLister<K, C: ?Sized = Indexer<K>> {
    lister: Lister<K, C>,
    namespace: Arc<str>,
}

impl<K: Object, C: CacheReader<K> + ?Sized> NamespaceLister<K, C> {
    /// The objects of this namespace that `selector` matches.
    pub fn list(&self, selector: &LabelSelector) -> Vec<Arc<K>> {
        list_all_by_namespace(&*self.lister.cache, &self.namespace, selector)
    }

    /// The object `namespace/name`; NotFound names the resource and `name`.
    pub fn get(&self, name: &str) -> Result<Arc<K>, StoreError> {
        let key = kcache_core::ObjectKey::new(&self.namespace, name);
        self.lister
            .cache
            .get_by_key(key.as_str())
            .ok_or_else(|| StoreError::NotFound {
                resource: self.lister.resource.to_string(),
                name: name.to_string(),
            })
    }
}
