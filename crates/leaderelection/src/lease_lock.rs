//! [`LeaseLock`]: the `coordination.k8s.io/v1` Lease lock over kcache-transport (client-go's
//! `resourcelock/leaselock.go`).

use std::collections::BTreeMap;
use std::time::SystemTime;

use kcache_core::{ApiResource, DynamicObject, Error};
use kcache_transport::{Api, Client, PostParams};
use parking_lot::Mutex;
use serde_json::{json, Map, Value};

use crate::lock::LeaseClient;
use crate::record::{LeaderElectionRecord, Lease};

/// The Lease `namespace/name` through a [`kcache_transport::Client`].
///
/// Updates write the whole Lease back (PUT, conditional on its resourceVersion) from the copy
/// last read or written, so labels, annotations and fields this crate does not know survive.
#[derive(Debug)]
pub struct LeaseLock {
    api: Api<DynamicObject>,
    namespace: String,
    name: String,
    labels: BTreeMap<String, String>,
    last: Mutex<Option<DynamicObject>>,
}

impl LeaseLock {
    /// The Lease `name` in `namespace`.
    pub fn new(client: Client, namespace: &str, name: &str) -> Self {
        LeaseLock {
            api: Api::dynamic(client, leases(), Some(namespace)),
            namespace: namespace.to_string(),
            name: name.to_string(),
            labels: BTreeMap::new(),
            last: Mutex::new(None),
        }
    }

    /// Labels the Lease carries: set when it is created and put back on each update, so others
    /// can find it by a label selector (a sharded controller's shard Leases carry their ring's
    /// label). Labels of the stored Lease not named here are kept.
    pub fn with_labels(mut self, labels: BTreeMap<String, String>) -> Self {
        self.labels = labels;
        self
    }

    /// Puts [`with_labels`](Self::with_labels)' labels on `obj`.
    fn label(&self, obj: &mut DynamicObject) {
        if !self.labels.is_empty() {
            let own = obj.metadata.labels.get_or_insert_with(BTreeMap::new);
            own.extend(self.labels.clone());
        }
    }

    /// A Lease object with no spec yet.
    fn fresh(&self) -> DynamicObject {
        let mut obj = DynamicObject::new(&self.name).within(&self.namespace);
        obj.data
            .insert("apiVersion".into(), json!("coordination.k8s.io/v1"));
        obj.data.insert("kind".into(), json!("Lease"));
        obj
    }

    fn remember(&self, obj: DynamicObject) -> Result<Lease, Error> {
        let lease = lease_from_object(&obj)?;
        *self.last.lock() = Some(obj);
        Ok(lease)
    }
}

/// `coordination.k8s.io/v1` `leases`.
pub fn leases() -> ApiResource {
    ApiResource {
        group: "coordination.k8s.io".into(),
        version: "v1".into(),
        kind: "Lease".into(),
        plural: "leases".into(),
        namespaced: true,
    }
}

impl LeaseClient for LeaseLock {
    async fn get(&self) -> Result<Option<Lease>, Error> {
        match self.api.get(&self.name).await {
            Ok(obj) => self.remember(obj).map(Some),
            Err(e) if e.is_not_found() => Ok(None),
            Err(e) => Err(e),
        }
    }

    async fn create(&self, record: &LeaderElectionRecord) -> Result<Lease, Error> {
        let mut obj = self.fresh();
        self.label(&mut obj);
        obj.data.insert("spec".into(), to_spec(record));
        let created = self.api.create(&PostParams::default(), &obj).await?;
        self.remember(created)
    }

    async fn update(&self, lease: &Lease) -> Result<Lease, Error> {
        let base =
            self.last.lock().clone().filter(|o| {
                o.metadata.resource_version.as_deref() == Some(&lease.resource_version)
            });
        let mut obj = base.unwrap_or_else(|| self.fresh());
        obj.metadata.resource_version = Some(lease.resource_version.clone());
        self.label(&mut obj);
        obj.data.insert("spec".into(), to_spec(&lease.record));
        let written = self
            .api
            .replace(&self.name, &PostParams::default(), &obj)
            .await?;
        self.remember(written)
    }

    fn describe(&self) -> String {
        format!("{}/{}", self.namespace, self.name)
    }
}

fn to_spec(r: &LeaderElectionRecord) -> Value {
    let mut spec = Map::new();
    if !r.holder_identity.is_empty() {
        spec.insert("holderIdentity".into(), json!(r.holder_identity));
    }
    spec.insert(
        "leaseDurationSeconds".into(),
        json!(r.lease_duration_seconds),
    );
    for (field, t) in [("acquireTime", r.acquire_time), ("renewTime", r.renew_time)] {
        if let Some(t) = t.and_then(micro_time) {
            spec.insert(field.into(), json!(t));
        }
    }
    spec.insert("leaseTransitions".into(), json!(r.leader_transitions));
    Value::Object(spec)
}

/// A `coordination.k8s.io/v1` Lease read as a [`Lease`] (its resourceVersion and spec), for code
/// that lists or watches Leases itself (a sharded controller's view of its ring). Fails when the
/// object has no resourceVersion; missing spec fields read as empty.
pub fn lease_from_object(obj: &DynamicObject) -> Result<Lease, Error> {
    let spec = obj.data.get("spec").cloned().unwrap_or(Value::Null);
    let number = |field: &str| {
        spec[field]
            .as_u64()
            .map_or(0, |n| u32::try_from(n).unwrap_or(u32::MAX))
    };
    let time = |field: &str| spec[field].as_str().and_then(parse_micro_time);
    let resource_version = obj
        .metadata
        .resource_version
        .clone()
        .ok_or_else(|| Error::decode("Lease", "the server sent no metadata.resourceVersion"))?;
    Ok(Lease {
        resource_version,
        record: LeaderElectionRecord {
            holder_identity: spec["holderIdentity"].as_str().unwrap_or("").to_string(),
            lease_duration_seconds: number("leaseDurationSeconds"),
            acquire_time: time("acquireTime"),
            renew_time: time("renewTime"),
            leader_transitions: number("leaseTransitions"),
        },
    })
}

/// A `MicroTime`: RFC 3339 with six fractional digits, in UTC.
fn micro_time(t: SystemTime) -> Option<String> {
    let ts = jiff::Timestamp::try_from(t).ok()?;
    Some(format!("{ts:.6}"))
}

fn parse_micro_time(s: &str) -> Option<SystemTime> {
    s.parse::<jiff::Timestamp>().ok().map(SystemTime::from)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn spec_round_trips_with_micro_times() {
        let t = SystemTime::UNIX_EPOCH + Duration::from_micros(1_700_000_000_123_456);
        assert_eq!(
            micro_time(t).as_deref(),
            Some("2023-11-14T22:13:20.123456Z")
        );
        let record = LeaderElectionRecord {
            holder_identity: "a".into(),
            lease_duration_seconds: 15,
            acquire_time: Some(t),
            renew_time: Some(t),
            leader_transitions: 3,
        };
        let mut obj = DynamicObject::new("l").with_resource_version("7");
        obj.data.insert("spec".into(), to_spec(&record));
        let lease = lease_from_object(&obj).unwrap();
        assert_eq!(lease.resource_version, "7");
        assert_eq!(lease.record, record);
        let released = LeaderElectionRecord::default();
        assert!(to_spec(&released).get("holderIdentity").is_none());
    }
}
