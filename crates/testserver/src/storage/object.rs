//! One stored object: its serialized JSON plus the metadata list and watch filtering read.

use std::collections::BTreeMap;
use std::sync::Arc;

use bytes::Bytes;
use serde_json::Value;

/// An object as stored: the wire JSON (serialized once, at write time, so lists and watch
/// fan-out only copy bytes) and the few fields that selectors and keys need.
#[derive(Debug)]
pub(crate) struct Stored {
    /// The revision that last wrote it (its `metadata.resourceVersion`).
    pub rv: u64,
    /// `namespace/name` or `name`: the sort order of lists, like etcd keys.
    pub key: Arc<str>,
    /// `metadata.namespace`.
    pub namespace: Option<String>,
    /// `metadata.name`.
    pub name: String,
    /// `metadata.labels`.
    pub labels: Option<BTreeMap<String, String>>,
    /// FNV-1a 64 of `metadata.uid`: what a uid `shardRange` compares (8 bytes, not the uid).
    pub uid_hash: u64,
    /// Values of the resource's selectable fields (`spec.nodeName`, ...).
    pub fields: Vec<(String, String)>,
    /// The object's JSON, as the API server writes it (see `crate::wire`).
    pub json: Bytes,
}

impl Stored {
    /// Builds the stored form of `value` (whose resourceVersion is already `rv`).
    pub(crate) fn new(value: &Value, rv: u64, field_paths: &[String]) -> Self {
        let meta = &value["metadata"];
        let name = meta["name"].as_str().unwrap_or_default().to_string();
        let namespace = meta["namespace"]
            .as_str()
            .filter(|s| !s.is_empty())
            .map(str::to_string);
        let labels = meta["labels"].as_object().map(|m| {
            m.iter()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
                .collect()
        });
        let uid_hash =
            kcache_core::selector::fnv1a64(meta["uid"].as_str().unwrap_or_default().as_bytes());
        let fields = field_paths
            .iter()
            .map(|p| (p.clone(), selectable_field(value, p)))
            .collect();
        // Exactly sized: a serializer's buffer grows by doubling, and a store of a million
        // objects would otherwise carry up to twice their JSON.
        let mut json = crate::wire::to_vec(value);
        json.shrink_to_fit();
        Stored {
            rv,
            key: object_key(namespace.as_deref(), &name).into(),
            namespace,
            name,
            labels,
            uid_hash,
            fields,
            json: Bytes::from(json),
        }
    }

    /// The object as a JSON value (parsed again: the write path is rare next to reads).
    pub(crate) fn value(&self) -> Value {
        serde_json::from_slice(&self.json).expect("stored JSON was produced by serde_json")
    }

    /// The value of a selectable field.
    pub(crate) fn field(&self, path: &str) -> Option<&str> {
        match path {
            "metadata.name" => Some(&self.name),
            "metadata.namespace" => Some(self.namespace.as_deref().unwrap_or("")),
            _ => self
                .fields
                .iter()
                .find(|(p, _)| p == path)
                .map(|(_, v)| v.as_str()),
        }
    }

    /// A copy carrying another resourceVersion (a deleted object's last state, or the old state
    /// of an object that left a watcher's selector, both reported at the event's revision).
    pub(crate) fn with_rv(&self, rv: u64, field_paths: &[String]) -> Stored {
        let mut v = self.value();
        v["metadata"]["resourceVersion"] = Value::String(rv.to_string());
        Stored::new(&v, rv, field_paths)
    }
}

/// The storage key of an object: `namespace/name`, or `name` when cluster-scoped.
pub(crate) fn object_key(namespace: Option<&str>, name: &str) -> String {
    match namespace {
        Some(ns) if !ns.is_empty() => format!("{ns}/{name}"),
        _ => name.to_string(),
    }
}

/// A selectable field's value as the real server's `ToSelectableFields` computes it: an absent
/// field reads as its Go zero value or the default the server would have set
/// (`spec.unschedulable==false` matches a Node that never set it), and `status.successful`
/// is a Job's `status.succeeded`.
fn selectable_field(value: &Value, field: &str) -> String {
    let (path, default) = match field {
        "spec.unschedulable" => (field, "false"),
        "status.replicas" => (field, "0"),
        "status.successful" => ("status.succeeded", "0"),
        "spec.restartPolicy" => (field, "Always"),
        "spec.schedulerName" => (field, "default-scheduler"),
        _ => (field, ""),
    };
    lookup_path(value, path).unwrap_or_else(|| default.to_string())
}

/// A dotted path (`spec.nodeName`) read as a string; numbers and booleans are formatted.
fn lookup_path(value: &Value, path: &str) -> Option<String> {
    let v = path.split('.').try_fold(value, |v, seg| v.get(seg))?;
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Null => None,
        other => Some(other.to_string()),
    }
}
