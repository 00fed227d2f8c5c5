//! The factory's compact informers: cached with the informer they wrap, so that every caller's
//! typed handlers share one set of typed copies.

use kcache_compact::Compact;
use kcache_core::{PartialObjectMeta, Resource};
use kcache_store::Indexers;
use kcache_transport::Api;
use serde::de::DeserializeOwned;

use super::CompactInformer;
use crate::SharedInformerFactory;

impl SharedInformerFactory {
    /// The informer of a typed resource kept compactly ([`CompactInformer`]): the cache
    /// holds structurally shared trees, handlers and reads get typed `K`s. Indexed by
    /// namespace. It is a different informer from [`informer`](Self::informer)'s (keyed by
    /// type), so ask for one of the two per resource. Every call returns the same
    /// `CompactInformer`, so all callers' typed handlers share their decodes.
    pub fn compact_informer<K>(&self) -> CompactInformer<K>
    where
        K: Resource + DeserializeOwned + Send + Sync + 'static,
    {
        let client = self.client().clone();
        self.view_of(
            &K::api_resource(),
            || Indexers::new().with_namespace_index(),
            |o| match &o.namespace {
                Some(ns) => Api::<Compact<K>>::namespaced(client, ns),
                None => Api::<Compact<K>>::all(client),
            },
            CompactInformer::from,
        )
    }

    /// The metadata-only informer of a typed resource kept compactly ([`CompactInformer`]):
    /// objects alike in their metadata (managedFields, owner references, label and annotation
    /// maps) share it, and handlers and reads get typed `PartialObjectMeta<K>`s. Indexed by
    /// namespace; a different informer from [`metadata_informer`](Self::metadata_informer)'s.
    /// Every call returns the same `CompactInformer`.
    pub fn compact_metadata_informer<K>(&self) -> CompactInformer<PartialObjectMeta<K>>
    where
        K: Resource + Send + Sync + 'static,
    {
        let client = self.client().clone();
        let resource = K::api_resource();
        self.view_of(
            &resource,
            || Indexers::new().with_namespace_index(),
            |o| {
                Api::<K>::dynamic(client, resource.clone(), o.namespace.as_deref())
                    .into_metadata_as::<Compact<PartialObjectMeta<K>>>()
            },
            CompactInformer::from,
        )
    }
}
