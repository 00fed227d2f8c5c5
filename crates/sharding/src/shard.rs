//! [`Shard`]: what a replica's work gets for one term of holding its shard Lease — its label
//! selector, and the shard's half of the drain handshake.
//!
//! The handshake runs inside the reconcile path ([`Shard::reconciler`]): the controller's queue
//! never hands out a key while a reconcile of it is in flight, so the acknowledgement of a drain
//! runs only after the last reconcile of that object finished. Once the shard has seen the drain
//! label, the object in its cache carries it until the watch reports the object gone from the
//! shard's selector, so no later reconcile of it reaches the user's function either.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use kcache_controller::Action;
use kcache_core::{DynamicObject, Error, Object, Resource};
use kcache_informer::FactoryOptions;
use kcache_leaderelection::CancellationToken;
use kcache_transport::{Api, Client, Patch, PatchParams};
use serde_json::{json, Map, Value};

use crate::conventions::Ring;

/// A reconcile future, boxed (what [`Shard::reconciler`] returns).
pub type ReconcileFuture<E> = Pin<Box<dyn Future<Output = Result<Action, E>> + Send>>;

/// One term of a replica's membership in the ring.
#[derive(Debug, Clone)]
pub struct Shard {
    client: Client,
    ring: Ring,
    name: String,
    token: CancellationToken,
}

impl Shard {
    pub(crate) fn new(client: Client, ring: Ring, name: String, token: CancellationToken) -> Self {
        Shard {
            client,
            ring,
            name,
            token,
        }
    }

    /// The shard's name (the replica's identity).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The ring.
    pub fn ring(&self) -> &Ring {
        &self.ring
    }

    /// Fires when this term ends: the Lease was lost or the replica is shutting down. Run the
    /// controllers until it fires (`Manager::run_until(shard.token())`) and return promptly.
    pub fn token(&self) -> CancellationToken {
        self.token.clone()
    }

    /// `shard.alpha.sharding.timebertt.dev/<ring>=<name>`: the objects assigned to this shard.
    pub fn label_selector(&self) -> String {
        self.ring.shard_selector(&self.name)
    }

    /// Informer factory options that watch only this shard's objects (give them to
    /// `Manager::builder(..).factory_options(..)`); every kind the factory serves must be one the
    /// sharder assigns.
    pub fn factory_options(&self) -> FactoryOptions {
        FactoryOptions {
            label_selector: Some(self.label_selector()),
            ..FactoryOptions::default()
        }
    }

    /// Whether the sharder asked this shard to let `obj` go.
    pub fn is_draining<K: Object>(&self, obj: &K) -> bool {
        obj.label(&self.ring.drain_label()).is_some()
    }

    /// Lets `obj` go: removes the shard and drain labels, conditional on the resourceVersion the
    /// shard saw (a conflict means a newer version is on its way; its event retries).
    pub async fn acknowledge_drain<K: Object + Resource>(&self, obj: &K) -> Result<(), Error> {
        let api =
            Api::<DynamicObject>::dynamic(self.client.clone(), K::api_resource(), obj.namespace());
        let labels = Map::from_iter([
            (self.ring.shard_label(), Value::Null),
            (self.ring.drain_label(), Value::Null),
        ]);
        let patch = json!({"metadata": {
            "labels": labels,
            "resourceVersion": obj.resource_version(),
        }});
        api.patch(obj.name(), &PatchParams::default(), &Patch::Merge(patch))
            .await?;
        tracing::debug!(shard = %self.name, object = %obj.name(), "acknowledged drain");
        Ok(())
    }

    /// Wraps a controller's reconcile function: an object marked for draining is acknowledged
    /// instead of reconciled; any other object goes to `reconcile`.
    pub fn reconciler<K, Ctx, E, F, Fut>(
        &self,
        reconcile: F,
    ) -> impl Fn(Arc<K>, Arc<Ctx>) -> ReconcileFuture<E> + Send + Sync + 'static
    where
        K: Object + Resource,
        Ctx: Send + Sync + 'static,
        E: Send + 'static,
        F: Fn(Arc<K>, Arc<Ctx>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Action, E>> + Send + 'static,
    {
        let shard = self.clone();
        move |obj: Arc<K>, ctx: Arc<Ctx>| -> ReconcileFuture<E> {
            if !shard.is_draining(obj.as_ref()) {
                return Box::pin(reconcile(obj, ctx));
            }
            let shard = shard.clone();
            Box::pin(async move {
                match shard.acknowledge_drain(obj.as_ref()).await {
                    Ok(()) => Ok(Action::await_change()),
                    Err(e) if e.is_conflict() || e.is_not_found() => Ok(Action::await_change()),
                    Err(e) => {
                        tracing::warn!(shard = %shard.name, object = %obj.name(), "acknowledging a drain failed: {e}");
                        Ok(Action::requeue())
                    }
                }
            })
        }
    }
}
