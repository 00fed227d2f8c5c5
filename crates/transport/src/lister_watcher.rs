//! `Api<K>` as the reflector's `ListerWatcher`: list = one page through the streaming decoder,
//! watch = the decoded event stream.

use std::future::Future;

use kcache_core::{Error, ListParams, ListerWatcher, ObjectList, WatchParams, WatchStream};
use serde::de::DeserializeOwned;

use crate::api::Api;

impl<K: DeserializeOwned + Send + 'static> ListerWatcher<K> for Api<K> {
    fn list(
        &self,
        params: &ListParams,
    ) -> impl Future<Output = Result<ObjectList<K>, Error>> + Send {
        Api::list(self, params)
    }

    fn watch(
        &self,
        params: &WatchParams,
    ) -> impl Future<Output = Result<WatchStream<K>, Error>> + Send {
        Api::watch(self, params)
    }
}
