//! Metadata-only informers (client-go's `metadatainformer`): the informer caches
//! `PartialObjectMeta<K>` — names, labels, annotations, owners, versions — listed and watched
//! with `Accept: application/json;as=PartialObjectMetadata[List];g=meta.k8s.io;v=v1`. For a
//! controller that needs only metadata of many objects, the cache and the wire carry a fraction
//! of the full objects.
//!
//! A metadata informer and a full informer of the same resource are separate informers (keyed by
//! type), as in client-go, where they come from separate factories.

use kcache_core::{ApiResource, PartialObjectMeta, Resource};
use kcache_store::Indexers;
use kcache_transport::Api;

use crate::{SharedIndexInformer, SharedInformerFactory};

impl SharedInformerFactory {
    /// The metadata-only informer of a typed resource, indexed by namespace.
    pub fn metadata_informer<K>(&self) -> SharedIndexInformer<PartialObjectMeta<K>>
    where
        K: Resource + 'static,
    {
        self.metadata_informer_for_typed::<K>(&K::api_resource())
    }

    /// The metadata-only informer of a resource known at runtime (client-go's
    /// `metadatainformer.NewSharedInformerFactory(client, resync).ForResource(gvr)`).
    pub fn metadata_informer_for(
        &self,
        resource: &ApiResource,
    ) -> SharedIndexInformer<PartialObjectMeta> {
        self.metadata_informer_for_typed(resource)
    }

    fn metadata_informer_for_typed<K: 'static>(
        &self,
        resource: &ApiResource,
    ) -> SharedIndexInformer<PartialObjectMeta<K>> {
        let client = self.client().clone();
        self.informer_for(
            resource,
            || Indexers::new().with_namespace_index(),
            |o| Api::<K>::dynamic(client, resource.clone(), o.namespace.as_deref()).into_metadata(),
        )
    }
}
