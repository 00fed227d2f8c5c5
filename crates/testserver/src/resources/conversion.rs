//! Conversion between the versions of one stored resource, as kube-apiserver 1.20.2 does it:
//! an object written through any version is stored in the resource's storage version
//! ([`super::versions`]), and each read, list, watch event and write answer is converted to
//! the version of the URL it was asked through, with `apiVersion` set accordingly.

use std::sync::Arc;

use bytes::Bytes;
use serde_json::{json, Value};

use super::stored_fields::stored_as;
use super::versions::{Family, Storage};
use super::{
    crd_schema, crd_versions, event_versions, hpa_versions, ingress_versions, webhook_versions,
    ResourceInfo,
};
use crate::storage::Stored;

/// The field selector paths of `res`'s version that read another field of the stored object
/// (`regarding.name` of an `events.k8s.io` Event is the stored `involvedObject.name`).
pub(crate) fn selector_renames(res: &ResourceInfo) -> &'static [(&'static str, &'static str)] {
    match stored_as(res) {
        Some(s)
            if s.family == Family::Event
                && event_versions::is_events_api(&res.api.api_version()) =>
        {
            event_versions::SELECTORS
        }
        _ => &[],
    }
}

/// An incoming object (as `res`'s version) in the stored version's shape, with the defaults
/// of the version it was written in.
pub(crate) fn to_storage(res: &ResourceInfo, mut obj: Value) -> Value {
    let Some(s) = stored_as(res) else {
        return obj;
    };
    if !obj.is_object() {
        return obj;
    }
    let from = res.api.api_version();
    obj = match s.family {
        Family::Same => obj,
        Family::Webhooks => {
            let mutating = res.api.kind == "MutatingWebhookConfiguration";
            webhook_versions::to_storage(&from, mutating, obj)
        }
        Family::Crd => crd_versions::to_storage(&from, obj),
        Family::Autoscaler => hpa_versions::to_storage(&from, obj),
        Family::Event => event_versions::to_storage(&from, obj),
        Family::Ingress => ingress_versions::to_storage(&from, obj),
    };
    obj["apiVersion"] = json!(s.api_version);
    obj
}

/// A stored object as `res`'s version serves it (the same object when no conversion applies).
pub(crate) fn present(res: &ResourceInfo, stored: Arc<Stored>) -> Arc<Stored> {
    let defaulted = crd_schema::reads_default(res);
    if !converted(res) && !defaulted {
        return stored;
    }
    let value = stored.value();
    if !needs_conversion(res, &value) && !defaulted {
        return stored;
    }
    Arc::new(Stored::new(
        &present_value(res, value),
        stored.rv,
        &res.fields,
    ))
}

/// Where `res` is stored, when that is another version than `res`'s own: only then is an
/// object parsed to be converted (reads in the storage version copy the stored bytes).
fn foreign(res: &ResourceInfo) -> Option<Storage> {
    stored_as(res).filter(|s| s.api_version != res.api.api_version())
}

/// Whether objects of `res` may be stored in another version than `res`'s.
fn converted(res: &ResourceInfo) -> bool {
    foreign(res).is_some() || crd_schema::stored_elsewhere(res)
}

/// Whether `obj` is stored in another version than `res`'s. A custom resource may carry any
/// version of its group (the storage version when it was written).
fn needs_conversion(res: &ResourceInfo, obj: &Value) -> bool {
    if obj["kind"] != res.api.kind.as_str() {
        return false;
    }
    match foreign(res) {
        Some(s) => obj["apiVersion"] == s.api_version,
        None => {
            crd_schema::stored_elsewhere(res) && obj["apiVersion"] != res.api.api_version().as_str()
        }
    }
}

/// [`present`] for an object as a value: converted, and defaulted when its CRD's schema has
/// defaults.
pub(crate) fn present_value(res: &ResourceInfo, mut obj: Value) -> Value {
    crd_schema::on_read(res, &mut obj);
    if !needs_conversion(res, &obj) {
        return obj;
    }
    let to = res.api.api_version();
    let Some(s) = foreign(res) else {
        // A custom resource: conversion strategy `None`.
        obj["apiVersion"] = json!(to);
        return obj;
    };
    let mut obj = match s.family {
        Family::Same | Family::Webhooks => obj,
        Family::Crd => crd_versions::from_storage(obj),
        Family::Autoscaler => hpa_versions::from_storage(&to, obj),
        Family::Event => event_versions::from_storage(&to, obj),
        Family::Ingress => ingress_versions::from_storage(obj),
    };
    obj["apiVersion"] = json!(to);
    obj
}

/// [`present`] for one watch event frame (`{"type":...,"object":...}` and a newline).
pub(crate) fn present_frame(res: &ResourceInfo, frame: Bytes) -> Bytes {
    let defaulted = crd_schema::reads_default(res);
    if !converted(res) && !defaulted {
        return frame;
    }
    let Ok(mut event) = serde_json::from_slice::<Value>(&frame) else {
        return frame;
    };
    if !needs_conversion(res, &event["object"]) && !defaulted {
        return frame;
    }
    event["object"] = present_value(res, event["object"].take());
    let mut out = crate::wire::to_vec(&event);
    out.push(b'\n');
    Bytes::from(out)
}
