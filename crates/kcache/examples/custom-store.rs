//! A shared informer over a cache written here, not kcache-store's `Indexer`: a `BTreeMap`
//! behind a lock, with one index of its own (ConfigMaps by their `app` label). The informer
//! writes it and hands it to the DeltaFIFO through kcache-core's `CacheReader` / `CacheWriter`
//! traits; a `Lister` reads it the same way.
//!
//! ```text
//! cargo run --example custom-store
//! ```
//!
//! It starts kcache-testserver in-process (or uses the cluster named by `KCACHE_TEST_KUBECONFIG`),
//! creates ConfigMaps, then creates, updates and deletes more while the informer lists and
//! watches, and exits 0 once its cache holds exactly the server's objects (same keys, same
//! resourceVersions) and its index agrees with them; it prints the object count it converged to.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use kcache::core::selector::LabelSelector;
use kcache::core::{
    CacheReader, CacheWriter, KnownObjects, ListParams, Object, ObjectKey, Resource, StoreError,
};
use kcache::informer::{FactoryOptions, ResourceEventHandlerFuncs, SharedInformerFactory};
use kcache::store::Lister;
use kcache::transport::{Api, Client, DeleteParams, Patch, PatchParams, PostParams};
use parking_lot::RwLock;
use tokio::sync::Notify;

/// The one index this store keeps: objects by the value of their `app` label.
pub const APP_INDEX: &str = "app";

/// A cache of the example's own: objects by key in a `BTreeMap` (so lists come out sorted), and
/// the keys of each `app` label value.
#[derive(Default)]
pub struct BTreeStore<K> {
    inner: RwLock<Inner<K>>,
}

struct Inner<K> {
    objects: BTreeMap<ObjectKey, Arc<K>>,
    by_app: BTreeMap<String, BTreeSet<ObjectKey>>,
}

impl<K> Default for Inner<K> {
    fn default() -> Self {
        Inner {
            objects: BTreeMap::new(),
            by_app: BTreeMap::new(),
        }
    }
}

impl<K: Object> Inner<K> {
    fn unindex(&mut self, key: &ObjectKey, obj: &K) {
        if let Some(app) = obj.label("app") {
            if let Some(keys) = self.by_app.get_mut(app) {
                keys.remove(key);
                if keys.is_empty() {
                    self.by_app.remove(app);
                }
            }
        }
    }

    fn remove(&mut self, key: &str) -> Option<Arc<K>> {
        let (key, old) = self.objects.remove_entry(key)?;
        self.unindex(&key, &old);
        Some(old)
    }
}

impl<K> BTreeStore<K> {
    fn check_index(index: &str) -> Result<(), StoreError> {
        if index == APP_INDEX {
            Ok(())
        } else {
            Err(StoreError::IndexNotFound(index.to_string()))
        }
    }
}

/// What a DeltaFIFO asks of the cache: keys, and an object by key.
impl<K: Object> KnownObjects<K> for BTreeStore<K> {
    fn list_keys(&self) -> Vec<ObjectKey> {
        self.inner.read().objects.keys().cloned().collect()
    }
    fn get_by_key(&self, key: &str) -> Option<Arc<K>> {
        self.inner.read().objects.get(key).cloned()
    }
}

/// What listers and handlers read.
impl<K: Object> CacheReader<K> for BTreeStore<K> {
    fn list(&self) -> Vec<Arc<K>> {
        self.inner.read().objects.values().cloned().collect()
    }
    fn len(&self) -> usize {
        self.inner.read().objects.len()
    }
    fn by_index(&self, index: &str, value: &str) -> Result<Vec<Arc<K>>, StoreError> {
        Self::check_index(index)?;
        let inner = self.inner.read();
        let keys = inner.by_app.get(value).into_iter().flatten();
        Ok(keys.filter_map(|k| inner.objects.get(k).cloned()).collect())
    }
    fn index_keys(&self, index: &str, value: &str) -> Result<Vec<ObjectKey>, StoreError> {
        Self::check_index(index)?;
        let inner = self.inner.read();
        Ok(inner
            .by_app
            .get(value)
            .into_iter()
            .flatten()
            .cloned()
            .collect())
    }
    fn list_index_func_values(&self, index: &str) -> Vec<Arc<str>> {
        if Self::check_index(index).is_err() {
            return Vec::new();
        }
        self.inner
            .read()
            .by_app
            .keys()
            .map(|v| Arc::from(v.as_str()))
            .collect()
    }
}

/// What the informer writes.
impl<K: Object> CacheWriter<K> for BTreeStore<K> {
    fn upsert(&self, obj: Arc<K>) -> Result<Option<Arc<K>>, StoreError> {
        let key = ObjectKey::of(&*obj);
        let mut inner = self.inner.write();
        let old = inner.remove(key.as_str());
        if let Some(app) = obj.label("app") {
            inner
                .by_app
                .entry(app.to_string())
                .or_default()
                .insert(key.clone());
        }
        inner.objects.insert(key, obj);
        Ok(old)
    }
    fn delete(&self, obj: &K) -> Result<Option<Arc<K>>, StoreError> {
        self.delete_by_key(ObjectKey::of(obj).as_str())
    }
    fn delete_by_key(&self, key: &str) -> Result<Option<Arc<K>>, StoreError> {
        Ok(self.inner.write().remove(key))
    }
}

/// How the run ended.
#[derive(Debug)]
pub struct Outcome {
    /// Objects in the cache (and on the server) at the end.
    pub objects: usize,
    /// Key → resourceVersion of the cache at the end, equal to the server's list.
    pub cache: BTreeMap<String, String>,
    /// Keys per `app` value, read through the store's own index with a `Lister`-style read.
    pub by_app: BTreeMap<String, usize>,
    /// Deletions the handler saw.
    pub deletes: usize,
}

/// ConfigMaps created before the informer starts.
pub const SEED: usize = 40;
/// ConfigMaps created while it syncs (every second also updates a seeded one, every fourth
/// deletes one).
pub const CHURN: usize = 40;

fn config_map(namespace: &str, name: &str, app: &str, generation: usize) -> ConfigMap {
    serde_json::from_value(serde_json::json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace, "labels": {"app": app}},
        "data": {"generation": generation.to_string()}
    }))
    .expect("a valid ConfigMap")
}

fn app_of(i: usize) -> String {
    format!("app-{}", i % 4)
}

/// Creates, updates (moving objects between `app` values) and deletes ConfigMaps.
async fn churn(api: Api<ConfigMap>, namespace: String) -> Result<(), String> {
    let fail = |what: &str, e: &dyn std::fmt::Display| format!("{what}: {e}");
    for i in 0..CHURN {
        let name = format!("churn-{i}");
        let created = config_map(&namespace, &name, &app_of(i), 0);
        api.create(&PostParams::default(), &created)
            .await
            .map_err(|e| fail("create", &e))?;
        // Updates go to even-numbered seeds, deletions to odd-numbered ones.
        if i % 2 == 0 {
            let seeded = format!("seed-{i}");
            let patch = Patch::Merge(serde_json::json!({
                "metadata": {"labels": {"app": app_of(i + 1)}},
                "data": {"generation": "1"}
            }));
            api.patch(&seeded, &PatchParams::default(), &patch)
                .await
                .map_err(|e| fail("patch", &e))?;
        }
        if i % 4 == 0 {
            api.delete(&format!("seed-{}", i + 1), &DeleteParams::default())
                .await
                .map_err(|e| fail("delete", &e))?;
        }
        tokio::task::yield_now().await;
    }
    Ok(())
}

/// Key → resourceVersion of every object.
fn versions<K: Object>(objs: impl IntoIterator<Item = impl AsRef<K>>) -> BTreeMap<String, String> {
    objs.into_iter()
        .map(|o| {
            let o = o.as_ref();
            let rv = o.resource_version().unwrap_or_default().to_string();
            (ObjectKey::of(o).to_string(), rv)
        })
        .collect()
}

/// Runs the demo against `KCACHE_TEST_KUBECONFIG` or an embedded server.
pub async fn demo() -> Result<Outcome, String> {
    let cluster = kcache_testing::TestCluster::start()
        .await
        .map_err(|e| format!("test server: {e}"))?;
    let namespace = cluster
        .create_namespace("custom-store")
        .await
        .map_err(|e| format!("namespace: {e}"))?;
    let client = Client::from_kubeconfig(cluster.kubeconfig_path()).map_err(|e| e.to_string())?;
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), &namespace);
    for i in 0..SEED {
        let cm = config_map(&namespace, &format!("seed-{i}"), &app_of(i), 0);
        api.create(&PostParams::default(), &cm)
            .await
            .map_err(|e| format!("seed: {e}"))?;
    }

    // Only the demo's ConfigMaps (they all have an `app` label): a full cluster puts its own
    // (the root CA bundle) into every namespace.
    let selector = ListParams {
        label_selector: Some("app".into()),
        ..ListParams::default()
    };
    let factory = SharedInformerFactory::new(
        client.clone(),
        FactoryOptions {
            namespace: Some(namespace.clone()),
            label_selector: selector.label_selector.clone(),
            ..FactoryOptions::default()
        },
    );
    let informer = factory.informer_with_cache(
        &ConfigMap::api_resource(),
        || Arc::new(BTreeStore::<ConfigMap>::default()),
        |o| Api::<ConfigMap>::namespaced(client.clone(), o.namespace.as_deref().unwrap_or("")),
    );
    // Every notification wakes the convergence check below: it waits on events, not on a clock.
    let changed = Arc::new(Notify::new());
    let deletes = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let (on_add, on_update, on_delete) = (changed.clone(), changed.clone(), changed.clone());
    let counted = deletes.clone();
    informer
        .add_event_handler(
            ResourceEventHandlerFuncs::new()
                .on_add(move |_: &Arc<ConfigMap>, _| on_add.notify_one())
                .on_update(move |_, _| on_update.notify_one())
                .on_delete(move |_| {
                    counted.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    on_delete.notify_one();
                }),
        )
        .map_err(|e| e.to_string())?;

    factory.start();
    // The churn runs while the informer lists and syncs.
    let churning = tokio::spawn(churn(api.clone(), namespace.clone()));
    let synced = factory.wait_for_cache_sync().await;
    if !synced.values().all(|s| *s) {
        return Err(format!("the informer did not sync: {synced:?}"));
    }
    churning.await.map_err(|e| e.to_string())??;

    let want = versions::<ConfigMap>(
        api.list(&selector)
            .await
            .map_err(|e| format!("list: {e}"))?
            .items
            .into_iter()
            .map(Arc::new),
    );
    let cache = informer.indexer().clone();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let notified = changed.notified();
        let have = versions::<ConfigMap>(cache.list());
        if have == want {
            break;
        }
        if tokio::time::timeout_at(deadline, notified).await.is_err() {
            return Err(format!(
                "the cache did not converge: {} cached, {} on the server",
                have.len(),
                want.len()
            ));
        }
    }

    // Reads through the store's own index, and through a lister over the same store.
    let mut by_app = BTreeMap::new();
    for app in cache.list_index_func_values(APP_INDEX) {
        let keys = cache
            .index_keys(APP_INDEX, &app)
            .map_err(|e| e.to_string())?;
        by_app.insert(app.to_string(), keys.len());
    }
    let lister = Lister::for_resource(cache.clone());
    let everything = lister
        .by_namespace(&namespace)
        .list(&LabelSelector::everything());
    if everything.len() != want.len() || by_app.values().sum::<usize>() != want.len() {
        return Err(format!(
            "the lister ({}) or the index ({by_app:?}) disagrees with the cache ({})",
            everything.len(),
            want.len()
        ));
    }
    factory.shutdown().await;
    Ok(Outcome {
        objects: want.len(),
        cache: want,
        by_app,
        deletes: deletes.load(std::sync::atomic::Ordering::Relaxed),
    })
}

#[tokio::main]
async fn main() {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into()),
        )
        .init();
    match demo().await {
        Ok(outcome) => {
            println!(
                "converged: {} objects, cache equals the server's list; by app: {:?}",
                outcome.objects, outcome.by_app
            );
        }
        Err(e) => {
            eprintln!("custom-store: {e}");
            std::process::exit(1);
        }
    }
}
