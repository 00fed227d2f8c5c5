//! One informer per resource and options, started together (client-go's
//! `SharedInformerFactory`).
//!
//! An informer asked for after [`SharedInformerFactory::start`] is **not** running until `start`
//! is called again — the same rule as client-go (issue client-go#675 trips many users): call
//! `start` after asking for every informer, or again after asking for more; `start` only starts
//! the ones not yet started.

use std::any::{Any, TypeId};
use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use kcache_core::{ApiResource, CacheReader, CacheWriter, ListerWatcher, Object};
use kcache_store::{Indexer, Indexers};
use parking_lot::Mutex;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::{InformerOptions, SharedIndexInformer};

/// What every informer of a factory shares.
#[derive(Debug, Clone, Default)]
pub struct FactoryOptions {
    /// Watch one namespace; `None` watches all (client-go's `WithNamespace`).
    pub namespace: Option<String>,
    /// Only objects matching this label selector (client-go's `WithTweakListOptions`).
    pub label_selector: Option<String>,
    /// Only objects matching this field selector.
    pub field_selector: Option<String>,
    /// Only objects in these KEP-5866 hash ranges (`shardSelector`, alpha in Kubernetes 1.36
    /// behind the `ShardedListAndWatch` gate); build it with `kcache_core::selector::ShardSelector`.
    /// A server without the gate ignores it and sends everything.
    pub shard_selector: Option<String>,
    /// The default handler resync period of every informer.
    pub resync_period: Duration,
    /// The template every informer's options are built from (FIFO mode, reflector settings,
    /// overflow policy); name, resync period and selectors are set by the factory.
    pub informer: InformerOptions,
}

type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;

/// An informer with its type erased, so the factory can start and wait for all of them.
trait ErasedInformer: Send + Sync {
    fn run(&self, cancel: CancellationToken) -> BoxFuture<()>;
    fn wait_for_cache_sync(&self) -> BoxFuture<bool>;
}

impl<K, C> ErasedInformer for SharedIndexInformer<K, C>
where
    K: Object,
    C: CacheReader<K> + CacheWriter<K> + 'static,
{
    fn run(&self, cancel: CancellationToken) -> BoxFuture<()> {
        let me = self.clone();
        Box::pin(async move {
            if let Err(e) = me.run(cancel).await {
                tracing::error!(informer = me.name(), "informer did not run: {e}");
            }
        })
    }
    fn wait_for_cache_sync(&self) -> BoxFuture<bool> {
        let me = self.clone();
        Box::pin(async move { me.wait_for_cache_sync().await })
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct InformerKey {
    /// The informer's type: the object type and the cache type.
    type_id: TypeId,
    group: String,
    version: String,
    plural: String,
}

impl InformerKey {
    /// The key of informer type `I` of `resource`.
    fn of<I: 'static>(resource: &ApiResource) -> Self {
        InformerKey {
            type_id: TypeId::of::<I>(),
            group: resource.group.clone(),
            version: resource.version.clone(),
            plural: resource.plural.clone(),
        }
    }
}

struct Entry {
    name: String,
    typed: Arc<dyn Any + Send + Sync>,
    /// Views of the informer made once and shared by every caller ([`SharedInformerFactory::view_of`]).
    views: Vec<Arc<dyn Any + Send + Sync>>,
    erased: Arc<dyn ErasedInformer>,
    task: Option<JoinHandle<()>>,
}

struct State {
    entries: HashMap<InformerKey, Entry>,
    shutting_down: bool,
}

/// Creates and shares informers: asking twice for the same resource (and the same object and
/// cache types) returns the same informer.
///
/// Informers cache into kcache-store's [`Indexer`] ([`informer_for`](Self::informer_for)) or into
/// a cache of your own ([`informer_with_cache`](Self::informer_with_cache)); the factory starts,
/// waits for and stops both kinds alike.
pub struct SharedInformerFactory {
    options: FactoryOptions,
    state: Mutex<State>,
    cancel: CancellationToken,
    #[cfg(feature = "transport")]
    client: Option<kcache_transport::Client>,
}

impl SharedInformerFactory {
    /// A factory whose informers get their `ListerWatcher` from the caller
    /// ([`informer_for`](Self::informer_for)).
    pub fn with_options(options: FactoryOptions) -> Self {
        SharedInformerFactory {
            options,
            state: Mutex::new(State {
                entries: HashMap::new(),
                shutting_down: false,
            }),
            cancel: CancellationToken::new(),
            #[cfg(feature = "transport")]
            client: None,
        }
    }

    /// The factory's options.
    pub fn options(&self) -> &FactoryOptions {
        &self.options
    }

    /// The informer for `resource`, created with `make_source` the first time. The source must
    /// apply the factory's namespace; selectors are applied by the reflector from
    /// [`FactoryOptions`].
    pub fn informer_for<K, L>(
        &self,
        resource: &ApiResource,
        indexers: impl FnOnce() -> Indexers<K>,
        make_source: impl FnOnce(&FactoryOptions) -> L,
    ) -> SharedIndexInformer<K>
    where
        K: Object,
        L: ListerWatcher<K> + 'static,
    {
        self.informer_with_cache(resource, || Arc::new(Indexer::new(indexers())), make_source)
    }

    /// [`informer_for`](Self::informer_for) with a cache of your own, made by `make_cache` the
    /// first time (see [`SharedIndexInformer::with_cache`]). An informer of the same resource
    /// with another cache type is another informer.
    pub fn informer_with_cache<K, C, L>(
        &self,
        resource: &ApiResource,
        make_cache: impl FnOnce() -> Arc<C>,
        make_source: impl FnOnce(&FactoryOptions) -> L,
    ) -> SharedIndexInformer<K, C>
    where
        K: Object,
        C: CacheReader<K> + CacheWriter<K> + 'static,
        L: ListerWatcher<K> + 'static,
    {
        let key = InformerKey::of::<SharedIndexInformer<K, C>>(resource);
        let mut st = self.state.lock();
        if let Some(e) = st.entries.get(&key) {
            if let Some(inf) = e.typed.downcast_ref::<SharedIndexInformer<K, C>>() {
                return inf.clone();
            }
        }
        let name = match &self.options.namespace {
            Some(ns) => format!("{}.{}/{}", resource.plural, resource.api_version(), ns),
            None => format!("{}.{}", resource.plural, resource.api_version()),
        };
        let mut opts = self.options.informer.clone();
        opts.name = name.clone();
        opts.resync_period = self.options.resync_period;
        opts.reflector.label_selector = self.options.label_selector.clone();
        opts.reflector.field_selector = self.options.field_selector.clone();
        opts.reflector.shard_selector = self.options.shard_selector.clone();
        let informer =
            SharedIndexInformer::with_cache(make_source(&self.options), make_cache(), opts);
        st.entries.insert(
            key,
            Entry {
                name,
                typed: Arc::new(informer.clone()),
                views: Vec::new(),
                erased: Arc::new(informer.clone()),
                task: None,
            },
        );
        informer
    }

    /// The informer [`informer_for`](Self::informer_for) gives, seen through a `V` made by
    /// `view` once per informer and cached with it: every caller gets the same view (the
    /// compact informer, whose handlers share their decodes).
    #[cfg_attr(not(all(feature = "compact", feature = "transport")), allow(dead_code))]
    pub(crate) fn view_of<K, L, V>(
        &self,
        resource: &ApiResource,
        indexers: impl FnOnce() -> Indexers<K>,
        make_source: impl FnOnce(&FactoryOptions) -> L,
        view: impl FnOnce(SharedIndexInformer<K>) -> V,
    ) -> V
    where
        K: Object,
        L: ListerWatcher<K> + 'static,
        V: Clone + Send + Sync + 'static,
    {
        let informer = self.informer_for(resource, indexers, make_source);
        let key = InformerKey::of::<SharedIndexInformer<K>>(resource);
        let mut st = self.state.lock();
        let Some(entry) = st.entries.get_mut(&key) else {
            // Only `shutdown` removes entries: a view of its own for a late caller.
            return view(informer);
        };
        if let Some(found) = entry.views.iter().find_map(|v| v.downcast_ref::<V>()) {
            return found.clone();
        }
        let made = view(informer);
        entry.views.push(Arc::new(made.clone()));
        made
    }

    /// Starts every informer not started yet (client-go's `Start`); needs a tokio runtime.
    /// Does nothing after [`shutdown`](Self::shutdown).
    pub fn start(&self) {
        let mut st = self.state.lock();
        if st.shutting_down {
            tracing::warn!("SharedInformerFactory::start after shutdown: nothing started");
            return;
        }
        for e in st.entries.values_mut().filter(|e| e.task.is_none()) {
            e.task = Some(tokio::spawn(e.erased.run(self.cancel.child_token())));
        }
    }

    /// Waits until every started informer has synced or stopped; per informer name, whether it
    /// synced (client-go's `WaitForCacheSync`). Informers not started are not waited for.
    pub async fn wait_for_cache_sync(&self) -> BTreeMap<String, bool> {
        let waits: Vec<(String, Arc<dyn ErasedInformer>)> = {
            let st = self.state.lock();
            st.entries
                .values()
                .filter(|e| e.task.is_some())
                .map(|e| (e.name.clone(), e.erased.clone()))
                .collect()
        };
        let mut out = BTreeMap::new();
        for (name, inf) in waits {
            out.insert(name, inf.wait_for_cache_sync().await);
        }
        out
    }

    /// Stops every informer and waits until all have returned (no handler runs afterwards).
    pub async fn shutdown(&self) {
        let tasks: Vec<JoinHandle<()>> = {
            let mut st = self.state.lock();
            st.shutting_down = true;
            st.entries
                .values_mut()
                .filter_map(|e| e.task.take())
                .collect()
        };
        self.cancel.cancel();
        for t in tasks {
            if let Err(e) = t.await {
                tracing::error!("informer task failed: {e}");
            }
        }
    }
}

impl Drop for SharedInformerFactory {
    /// Dropping the factory stops its informers (without waiting; use `shutdown` to wait).
    fn drop(&mut self) {
        self.cancel.cancel();
    }
}

#[cfg(feature = "transport")]
mod with_transport {
    use kcache_core::{DynamicObject, Resource};
    use kcache_transport::{Api, Client};
    use serde::de::DeserializeOwned;

    use super::*;

    impl SharedInformerFactory {
        /// A factory whose informers list and watch through `client`
        /// (client-go's `NewSharedInformerFactoryWithOptions`).
        pub fn new(client: Client, options: FactoryOptions) -> Self {
            let mut f = Self::with_options(options);
            f.client = Some(client);
            f
        }

        pub(crate) fn client(&self) -> &Client {
            self.client
                .as_ref()
                .expect("informer() needs a factory built with SharedInformerFactory::new(client)")
        }

        /// The informer of a typed resource, indexed by namespace. Its lists and watches hand
        /// it exact copies of what they decode ([`Api::with_exact_copies`]): a decoded `Vec`
        /// keeps spare room that the cache would keep for the object's lifetime (one clone per
        /// object on the thread that decoded it buys a lower peak RSS).
        pub fn informer<K>(&self) -> SharedIndexInformer<K>
        where
            K: Resource + Object + DeserializeOwned + Clone,
        {
            let client = self.client().clone();
            self.informer_for(
                &K::api_resource(),
                || Indexers::new().with_namespace_index(),
                |o| {
                    match &o.namespace {
                        Some(ns) => Api::<K>::namespaced(client, ns),
                        None => Api::<K>::all(client),
                    }
                    .with_exact_copies()
                },
            )
        }

        /// The informer of a resource known only at runtime (client-go's dynamic informer).
        pub fn dynamic_informer(
            &self,
            resource: &ApiResource,
        ) -> SharedIndexInformer<DynamicObject> {
            let client = self.client().clone();
            self.informer_for(
                resource,
                || Indexers::new().with_namespace_index(),
                |o| Api::<DynamicObject>::dynamic(client, resource.clone(), o.namespace.as_deref()),
            )
        }
    }
}
