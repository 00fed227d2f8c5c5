//! [`EventClient`] for kcache-transport's [`Client`] (feature `transport`, on by default).

use bytes::Bytes;
use kcache_core::Error;
use kcache_transport::{Api, Client, Patch, PatchParams, PostParams};
use serde::Deserialize;
use serde_json::Value;

use crate::client::EventClient;
use crate::types::{CoreEvent, Event};

/// The part of an `APIResourceList` discovery reads.
#[derive(Deserialize)]
struct ResourceList {
    #[serde(default)]
    resources: Vec<ResourceName>,
}

#[derive(Deserialize)]
struct ResourceName {
    name: String,
}

fn namespace_of(m: &kcache_core::ObjectMeta) -> &str {
    m.namespace.as_deref().unwrap_or("default")
}

impl EventClient for Client {
    async fn serves_events_v1(&self) -> Result<bool, Error> {
        let req = http::Request::get("/apis/events.k8s.io/v1")
            .body(Bytes::new())
            .map_err(|e| Error::Request(e.into()))?;
        match self.request_json::<ResourceList>(req).await {
            Ok(list) => Ok(list.resources.iter().any(|r| r.name == "events")),
            Err(e) if e.is_not_found() => Ok(false),
            Err(e) => Err(e),
        }
    }

    async fn create_event(&self, event: &Event) -> Result<Event, Error> {
        Api::<Event>::namespaced(self.clone(), namespace_of(&event.metadata))
            .create(&PostParams::default(), event)
            .await
    }

    async fn patch_event(
        &self,
        namespace: &str,
        name: &str,
        patch: &Value,
    ) -> Result<Event, Error> {
        Api::<Event>::namespaced(self.clone(), namespace)
            .patch(name, &PatchParams::default(), &Patch::Merge(patch))
            .await
    }

    async fn create_core_event(&self, event: &CoreEvent) -> Result<CoreEvent, Error> {
        Api::<CoreEvent>::namespaced(self.clone(), namespace_of(&event.metadata))
            .create(&PostParams::default(), event)
            .await
    }

    async fn patch_core_event(
        &self,
        namespace: &str,
        name: &str,
        patch: &Value,
    ) -> Result<CoreEvent, Error> {
        Api::<CoreEvent>::namespaced(self.clone(), namespace)
            .patch(name, &PatchParams::default(), &Patch::Merge(patch))
            .await
    }
}
