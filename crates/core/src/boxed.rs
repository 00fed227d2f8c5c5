//! A type-erased `ListerWatcher`, so that holders (informers, factories) need not name the
//! source's type.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use crate::{Error, ListParams, ListerWatcher, ObjectList, WatchParams, WatchStream};

type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

trait DynListerWatcher<K>: Send + Sync {
    fn list<'a>(&'a self, params: &'a ListParams) -> BoxFuture<'a, Result<ObjectList<K>, Error>>;
    fn list_shared<'a>(
        &'a self,
        params: &'a ListParams,
    ) -> BoxFuture<'a, Result<ObjectList<Arc<K>>, Error>>;
    fn watch<'a>(&'a self, params: &'a WatchParams)
        -> BoxFuture<'a, Result<WatchStream<K>, Error>>;
}

impl<K: Send + Sync + 'static, L: ListerWatcher<K>> DynListerWatcher<K> for L {
    fn list<'a>(&'a self, params: &'a ListParams) -> BoxFuture<'a, Result<ObjectList<K>, Error>> {
        Box::pin(ListerWatcher::list(self, params))
    }
    fn list_shared<'a>(
        &'a self,
        params: &'a ListParams,
    ) -> BoxFuture<'a, Result<ObjectList<Arc<K>>, Error>> {
        Box::pin(ListerWatcher::list_shared(self, params))
    }
    fn watch<'a>(
        &'a self,
        params: &'a WatchParams,
    ) -> BoxFuture<'a, Result<WatchStream<K>, Error>> {
        Box::pin(ListerWatcher::watch(self, params))
    }
}

/// Any `ListerWatcher<K>` behind one pointer: cheap to clone, one allocation per call.
pub struct BoxListerWatcher<K> {
    inner: Arc<dyn DynListerWatcher<K>>,
}

impl<K: Send + Sync + 'static> BoxListerWatcher<K> {
    /// Erases the type of `lw`.
    pub fn new<L: ListerWatcher<K> + 'static>(lw: L) -> Self {
        BoxListerWatcher {
            inner: Arc::new(lw),
        }
    }
}

impl<K> Clone for BoxListerWatcher<K> {
    fn clone(&self) -> Self {
        BoxListerWatcher {
            inner: self.inner.clone(),
        }
    }
}

impl<K: Send + 'static> ListerWatcher<K> for BoxListerWatcher<K> {
    async fn list(&self, params: &ListParams) -> Result<ObjectList<K>, Error> {
        self.inner.list(params).await
    }
    async fn list_shared(&self, params: &ListParams) -> Result<ObjectList<Arc<K>>, Error>
    where
        K: Send + Sync,
    {
        self.inner.list_shared(params).await
    }
    async fn watch(&self, params: &WatchParams) -> Result<WatchStream<K>, Error> {
        self.inner.watch(params).await
    }
}

impl<K> std::fmt::Debug for BoxListerWatcher<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("BoxListerWatcher")
    }
}
