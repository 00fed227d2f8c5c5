//! Status conditions with apimachinery's `meta.SetStatusCondition` rules, over k8s-openapi's
//! `metav1.Condition` (feature `k8s-openapi`).
//!
//! `lastTransitionTime` moves only when the status does, so it tells how long a condition has
//! held; reason, message and observedGeneration follow every call. Each setter says whether it
//! changed anything, so a controller writes its status only when it did;
//! [`patch_status_condition`] and [`patch_condition`] do both steps.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use k8s_openapi::jiff::Timestamp;
use kcache_core::Object;
use kcache_transport::{Api, Patch, PatchParams};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::read_your_writes::wrote;

/// `"True"`.
pub const CONDITION_TRUE: &str = "True";
/// `"False"`.
pub const CONDITION_FALSE: &str = "False";
/// `"Unknown"`.
pub const CONDITION_UNKNOWN: &str = "Unknown";

/// A condition to hand to [`set_status_condition`], its `lastTransitionTime` unset (the Unix
/// epoch, see [`set_status_condition`]).
pub fn new_condition(
    type_: &str,
    status: &str,
    reason: &str,
    message: &str,
    observed_generation: Option<i64>,
) -> Condition {
    Condition {
        type_: type_.to_string(),
        status: status.to_string(),
        reason: reason.to_string(),
        message: message.to_string(),
        observed_generation,
        last_transition_time: Time(Timestamp::UNIX_EPOCH),
    }
}

/// Sets `new` in `conditions` (apimachinery's `meta.SetStatusCondition`); whether anything
/// changed.
///
/// A new type is appended, stamped now unless `new` carries a time. An existing one takes
/// `new`'s status — and then a new `lastTransitionTime` (`new`'s, or now) — only if the status
/// differs; reason, message and observedGeneration are always taken. A time at or before the
/// Unix epoch counts as unset (Go's zero `metav1.Time`; k8s-openapi's `Time` has no zero).
pub fn set_status_condition(conditions: &mut Vec<Condition>, new: Condition) -> bool {
    let stamped = |t: &Time| {
        if is_unset(t) {
            Time(Timestamp::now())
        } else {
            t.clone()
        }
    };
    let Some(existing) = conditions.iter_mut().find(|c| c.type_ == new.type_) else {
        let mut new = new;
        new.last_transition_time = stamped(&new.last_transition_time);
        conditions.push(new);
        return true;
    };
    let mut changed = false;
    if existing.status != new.status {
        existing.status = new.status;
        existing.last_transition_time = stamped(&new.last_transition_time);
        changed = true;
    }
    if existing.reason != new.reason {
        existing.reason = new.reason;
        changed = true;
    }
    if existing.message != new.message {
        existing.message = new.message;
        changed = true;
    }
    if existing.observed_generation != new.observed_generation {
        existing.observed_generation = new.observed_generation;
        changed = true;
    }
    changed
}

/// Sets `new` in the conditions of `status` (`obj`'s status, `None` if it has none yet; the
/// conditions reached through `conditions`) by [`set_status_condition`]'s rules and, only if
/// that changed anything, merge-patches `obj`'s `status` subresource with the whole new status.
/// Returns the object as written (recorded for read-your-writes when called from a reconcile,
/// see [`wrote`]), or `None` when nothing changed and nothing was sent.
///
/// ```no_run
/// # use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
/// # use kcache_controller::conditions::{new_condition, patch_status_condition};
/// # use kcache_core::{DynamicObject, Object};
/// # use kcache_transport::Api;
/// #[derive(Clone, Default, serde::Serialize, serde::Deserialize)]
/// struct FooStatus {
///     conditions: Vec<Condition>,
/// }
///
/// async fn mark_ready(foos: &Api<DynamicObject>, foo: &DynamicObject) -> Result<(), kcache_core::Error> {
///     let status: Option<FooStatus> =
///         (foo.data.get("status").cloned()).and_then(|s| serde_json::from_value(s).ok());
///     let ready = new_condition("Ready", "True", "ConfigMapApplied", "", foo.generation());
///     patch_status_condition(foos, foo, status.as_ref(), |s| &mut s.conditions, ready).await?;
///     Ok(())
/// }
/// ```
pub async fn patch_status_condition<K, S>(
    api: &Api<K>,
    obj: &K,
    status: Option<&S>,
    conditions: impl FnOnce(&mut S) -> &mut Vec<Condition>,
    new: Condition,
) -> Result<Option<K>, kcache_core::Error>
where
    K: Object + DeserializeOwned,
    S: Clone + Default + Serialize,
{
    let mut status = status.cloned().unwrap_or_default();
    if !set_status_condition(conditions(&mut status), new) {
        return Ok(None);
    }
    patch_status(api, obj, json!({ "status": status })).await
}

/// [`patch_status_condition`] for an object whose conditions are at `status.conditions`, where
/// the API conventions put them: the current ones are read from `obj` itself (one
/// serialization of it), so the call names no status type, and only `status.conditions` is
/// sent (a merge patch replaces that list and leaves the rest of the status alone).
///
/// ```no_run
/// # use kcache_controller::conditions::{new_condition, patch_condition};
/// # use kcache_core::{DynamicObject, Object};
/// # async fn f(foos: &kcache_transport::Api<DynamicObject>, foo: &DynamicObject) -> Result<(), kcache_core::Error> {
/// let ready = new_condition("Ready", "True", "ConfigMapApplied", "", foo.generation());
/// patch_condition(foos, foo, ready).await?;
/// # Ok(()) }
/// ```
pub async fn patch_condition<K>(
    api: &Api<K>,
    obj: &K,
    new: Condition,
) -> Result<Option<K>, kcache_core::Error>
where
    K: Object + Serialize + DeserializeOwned,
{
    let decode = |e| kcache_core::Error::decode("status.conditions", e);
    let object = serde_json::to_value(obj).map_err(decode)?;
    let mut conditions: Vec<Condition> = match object.pointer("/status/conditions") {
        None | Some(Value::Null) => Vec::new(),
        Some(list) => Vec::deserialize(list).map_err(decode)?,
    };
    if !set_status_condition(&mut conditions, new) {
        return Ok(None);
    }
    patch_status(api, obj, json!({ "status": { "conditions": conditions } })).await
}

/// Merge-patches `obj`'s status subresource, recording the write for read-your-writes.
async fn patch_status<K: Object + DeserializeOwned>(
    api: &Api<K>,
    obj: &K,
    patch: Value,
) -> Result<Option<K>, kcache_core::Error> {
    let written = api
        .patch_status(obj.name(), &PatchParams::default(), &Patch::Merge(patch))
        .await?;
    wrote(&written);
    Ok(Some(written))
}

/// Removes the condition of `type_` (apimachinery's `meta.RemoveStatusCondition`); whether one
/// was there.
pub fn remove_status_condition(conditions: &mut Vec<Condition>, type_: &str) -> bool {
    let before = conditions.len();
    conditions.retain(|c| c.type_ != type_);
    conditions.len() != before
}

/// The condition of `type_` (apimachinery's `meta.FindStatusCondition`).
pub fn find_status_condition<'a>(
    conditions: &'a [Condition],
    type_: &str,
) -> Option<&'a Condition> {
    conditions.iter().find(|c| c.type_ == type_)
}

/// Whether the condition of `type_` is present and `"True"`.
pub fn is_status_condition_true(conditions: &[Condition], type_: &str) -> bool {
    is_status_condition_present_and_equal(conditions, type_, CONDITION_TRUE)
}

/// Whether the condition of `type_` is present and `"False"`.
pub fn is_status_condition_false(conditions: &[Condition], type_: &str) -> bool {
    is_status_condition_present_and_equal(conditions, type_, CONDITION_FALSE)
}

/// Whether the condition of `type_` is present with `status`.
pub fn is_status_condition_present_and_equal(
    conditions: &[Condition],
    type_: &str,
    status: &str,
) -> bool {
    find_status_condition(conditions, type_).is_some_and(|c| c.status == status)
}

fn is_unset(t: &Time) -> bool {
    t.0 <= Timestamp::UNIX_EPOCH
}
