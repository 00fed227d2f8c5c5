//! Metadata-only access (client-go's `metadata.Interface`, kube-rs's `Api::list_metadata`):
//! the server sends `PartialObjectMetadata` — each object's metadata and nothing else — so
//! listing, watching and caching many objects costs a fraction of the full objects.
//!
//! An `Api<PartialObjectMeta<K>>` from [`Api::into_metadata`] asks for it on every verb, and is a
//! `ListerWatcher` (what the metadata-only informer runs on). The `Accept` header ends with
//! plain `application/json`, as client-go's: a server that cannot convert sends full objects,
//! which decode into the same `PartialObjectMeta`.

use kcache_core::{Error, ListParams, ObjectList, PartialObjectMeta, WatchParams, WatchStream};
use serde::Serialize;

use crate::api::Api;
use crate::client::ListItems;
use crate::params::{Patch, PatchParams};

impl<K: 'static> Api<K> {
    /// The same resource and namespace, metadata only: every verb of the returned Api asks the
    /// server for `PartialObjectMetadata` (client-go's `metadata.NewForConfig(c).Resource(gvr)`).
    pub fn into_metadata(self) -> Api<PartialObjectMeta<K>> {
        self.into_metadata_as()
    }

    /// [`into_metadata`](Self::into_metadata), decoding each `PartialObjectMetadata` into `M`, a
    /// representation of your choice — e.g. kcache-compact's `Compact<PartialObjectMeta<K>>`,
    /// which a compact metadata informer caches.
    pub fn into_metadata_as<M>(self) -> Api<M> {
        let mut api = Api::dynamic(
            self.client().clone(),
            self.resource().clone(),
            self.namespace(),
        );
        api.metadata_only = true;
        api
    }

    /// One object's metadata.
    pub async fn get_metadata(&self, name: &str) -> Result<PartialObjectMeta<K>, Error> {
        self.clone().into_metadata().get(name).await
    }

    /// One page of the objects' metadata.
    pub async fn list_metadata(
        &self,
        params: &ListParams,
    ) -> Result<ObjectList<PartialObjectMeta<K>>, Error> {
        self.clone().into_metadata().list(params).await
    }

    /// One page of the objects' metadata, decoded as it arrives.
    pub async fn list_metadata_stream(
        &self,
        params: &ListParams,
    ) -> Result<ListItems<PartialObjectMeta<K>>, Error> {
        self.clone().into_metadata().list_stream(params).await
    }

    /// A watch whose events carry only the objects' metadata.
    pub async fn watch_metadata(
        &self,
        params: &WatchParams,
    ) -> Result<WatchStream<PartialObjectMeta<K>>, Error> {
        self.clone().into_metadata().watch(params).await
    }

    /// Patches an object and returns its metadata (client-go's metadata client `Patch`).
    pub async fn patch_metadata<P: Serialize>(
        &self,
        name: &str,
        params: &PatchParams,
        patch: &Patch<P>,
    ) -> Result<PartialObjectMeta<K>, Error> {
        self.clone()
            .into_metadata()
            .patch(name, params, patch)
            .await
    }
}
