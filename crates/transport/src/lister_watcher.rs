//! `Api<K>` as the reflector's `ListerWatcher`: list = one page through the streaming decoder,
//! watch = the decoded event stream.

use std::future::Future;
use std::sync::Arc;

use kcache_core::{Error, ListParams, ListerWatcher, ObjectList, WatchParams, WatchStream};
use serde::de::DeserializeOwned;

use crate::api::Api;
use crate::decode::ListStream;

impl<K: DeserializeOwned + Send + 'static> ListerWatcher<K> for Api<K> {
    fn list(
        &self,
        params: &ListParams,
    ) -> impl Future<Output = Result<ObjectList<K>, Error>> + Send {
        Api::list(self, params)
    }

    /// Each item goes into its `Arc` on the thread that decoded it; read again in JSON as
    /// [`Api::list`] is.
    async fn list_shared(&self, params: &ListParams) -> Result<ObjectList<Arc<K>>, Error>
    where
        K: Send + Sync,
    {
        self.list_whole(params, ListStream::into_shared_list).await
    }

    fn watch(
        &self,
        params: &WatchParams,
    ) -> impl Future<Output = Result<WatchStream<K>, Error>> + Send {
        Api::watch(self, params)
    }
}
