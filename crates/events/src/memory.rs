//! [`MemoryEventClient`]: an [`EventClient`] in memory, for tests of code that records events
//! (client-go's `fake.NewSimpleClientset` + `FakeRecorder`, in one).

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

use kcache_core::{Error, Status};
use parking_lot::Mutex;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{Map, Value};

use crate::client::{EventApi, EventClient};
use crate::types::{CoreEvent, Event};

/// Events of both APIs kept in maps; creates and merge patches behave as the API server's
/// (409 AlreadyExists, 404 NotFound, a new resourceVersion per write). Clones share state.
#[derive(Debug, Clone)]
pub struct MemoryEventClient {
    inner: Arc<Mutex<State>>,
}

#[derive(Debug, Default)]
struct State {
    serves_v1: bool,
    v1: BTreeMap<(String, String), Value>,
    core: BTreeMap<(String, String), Value>,
    revision: u64,
    failures: VecDeque<Error>,
    requests: Vec<String>,
}

impl Default for MemoryEventClient {
    fn default() -> Self {
        Self::new()
    }
}

impl MemoryEventClient {
    /// A cluster that serves `events.k8s.io/v1`.
    pub fn new() -> Self {
        MemoryEventClient {
            inner: Arc::new(Mutex::new(State {
                serves_v1: true,
                ..State::default()
            })),
        }
    }

    /// A cluster that serves only `core/v1` events (before Kubernetes 1.19).
    pub fn without_events_v1() -> Self {
        let c = Self::new();
        c.inner.lock().serves_v1 = false;
        c
    }

    /// The `events.k8s.io/v1` events, ordered by namespace and name.
    pub fn events(&self) -> Vec<Event> {
        decode_all(&self.inner.lock().v1)
    }

    /// The `core/v1` events, ordered by namespace and name.
    pub fn core_events(&self) -> Vec<CoreEvent> {
        decode_all(&self.inner.lock().core)
    }

    /// Every request so far, as `create|patch {api} {namespace}/{name}`.
    pub fn requests(&self) -> Vec<String> {
        self.inner.lock().requests.clone()
    }

    /// The next `errors.len()` writes fail with these errors, in order.
    pub fn fail_next(&self, errors: impl IntoIterator<Item = Error>) {
        self.inner.lock().failures.extend(errors);
    }

    /// Deletes an event of either API (as the server's TTL does).
    pub fn delete(&self, api: EventApi, namespace: &str, name: &str) {
        let mut s = self.inner.lock();
        let key = (namespace.to_string(), name.to_string());
        match api {
            EventApi::EventsV1 => s.v1.remove(&key),
            EventApi::CoreV1 => s.core.remove(&key),
        };
    }

    fn create<T: Serialize + DeserializeOwned>(
        &self,
        api: EventApi,
        ns: &str,
        name: &str,
        obj: &T,
    ) -> Result<T, Error> {
        let mut s = self.inner.lock();
        s.requests
            .push(format!("create {} {ns}/{name}", label(api)));
        if let Some(e) = s.failures.pop_front() {
            return Err(e);
        }
        let key = (ns.to_string(), name.to_string());
        if s.map(api).contains_key(&key) {
            return Err(status(
                409,
                "AlreadyExists",
                &format!("events {name:?} already exists"),
            ));
        }
        let mut v = serde_json::to_value(obj).map_err(|e| Error::decode("event", e))?;
        s.revision += 1;
        v["metadata"]["resourceVersion"] = Value::String(s.revision.to_string());
        s.map(api).insert(key, v.clone());
        serde_json::from_value(v).map_err(|e| Error::decode("event", e))
    }

    fn patch<T: DeserializeOwned>(
        &self,
        api: EventApi,
        ns: &str,
        name: &str,
        patch: &Value,
    ) -> Result<T, Error> {
        let mut s = self.inner.lock();
        s.requests.push(format!("patch {} {ns}/{name}", label(api)));
        if let Some(e) = s.failures.pop_front() {
            return Err(e);
        }
        s.revision += 1;
        let rv = s.revision.to_string();
        let key = (ns.to_string(), name.to_string());
        let Some(v) = s.map(api).get_mut(&key) else {
            return Err(status(
                404,
                "NotFound",
                &format!("events {name:?} not found"),
            ));
        };
        merge_patch(v, patch);
        v["metadata"]["resourceVersion"] = Value::String(rv);
        serde_json::from_value(v.clone()).map_err(|e| Error::decode("event", e))
    }
}

/// Applies a JSON merge patch (RFC 7386) to `target`, as the API server applies a
/// `application/merge-patch+json` body: objects merge member by member, `null` removes a
/// member, anything else replaces.
fn merge_patch(target: &mut Value, patch: &Value) {
    let Value::Object(members) = patch else {
        *target = patch.clone();
        return;
    };
    if !target.is_object() {
        *target = Value::Object(Map::new());
    }
    if let Value::Object(map) = target {
        for (key, value) in members {
            if value.is_null() {
                map.remove(key);
            } else {
                merge_patch(map.entry(key.as_str()).or_insert(Value::Null), value);
            }
        }
    }
}

impl State {
    fn map(&mut self, api: EventApi) -> &mut BTreeMap<(String, String), Value> {
        match api {
            EventApi::EventsV1 => &mut self.v1,
            EventApi::CoreV1 => &mut self.core,
        }
    }
}

fn label(api: EventApi) -> &'static str {
    match api {
        EventApi::EventsV1 => "events.k8s.io/v1",
        EventApi::CoreV1 => "v1",
    }
}

fn status(code: u16, reason: &str, message: &str) -> Error {
    Error::from(Status::failure(code, reason, message))
}

fn decode_all<T: DeserializeOwned>(m: &BTreeMap<(String, String), Value>) -> Vec<T> {
    m.values()
        .filter_map(|v| serde_json::from_value(v.clone()).ok())
        .collect()
}

fn ns_of(meta: &kcache_core::ObjectMeta) -> &str {
    meta.namespace.as_deref().unwrap_or_default()
}

impl EventClient for MemoryEventClient {
    async fn serves_events_v1(&self) -> Result<bool, Error> {
        Ok(self.inner.lock().serves_v1)
    }

    async fn create_event(&self, event: &Event) -> Result<Event, Error> {
        let m = &event.metadata;
        self.create(EventApi::EventsV1, ns_of(m), &m.name, event)
    }

    async fn patch_event(
        &self,
        namespace: &str,
        name: &str,
        patch: &Value,
    ) -> Result<Event, Error> {
        self.patch(EventApi::EventsV1, namespace, name, patch)
    }

    async fn create_core_event(&self, event: &CoreEvent) -> Result<CoreEvent, Error> {
        let m = &event.metadata;
        self.create(EventApi::CoreV1, ns_of(m), &m.name, event)
    }

    async fn patch_core_event(
        &self,
        namespace: &str,
        name: &str,
        patch: &Value,
    ) -> Result<CoreEvent, Error> {
        self.patch(EventApi::CoreV1, namespace, name, patch)
    }
}

#[cfg(test)]
mod tests {
    use super::merge_patch;
    use serde_json::json;

    #[test]
    fn merge_patch_follows_rfc_7386() {
        // RFC 7386's own example.
        let mut target = json!({
            "title": "Goodbye!",
            "author": {"givenName": "John", "familyName": "Doe"},
            "tags": ["example", "sample"],
            "content": "This will be unchanged"
        });
        merge_patch(
            &mut target,
            &json!({
                "title": "Hello!",
                "phoneNumber": "+01-123-456-7890",
                "author": {"familyName": null},
                "tags": ["example"]
            }),
        );
        assert_eq!(
            target,
            json!({
                "title": "Hello!",
                "author": {"givenName": "John"},
                "tags": ["example"],
                "content": "This will be unchanged",
                "phoneNumber": "+01-123-456-7890"
            })
        );
        let mut scalar = json!("a");
        merge_patch(&mut scalar, &json!({"b": {"c": null, "d": 1}}));
        assert_eq!(scalar, json!({"b": {"d": 1}}));
    }
}
