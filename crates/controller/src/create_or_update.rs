//! controllerutil's `CreateOrUpdate` and `CreateOrPatch`: make an object what a closure says,
//! creating it if missing, and report what was done.
//!
//! Both read the object from the API server (not a cache: the write that follows must start
//! from the current version), run `mutate` on it (or on the given object if it is missing), and
//! write only if `mutate` changed something. `mutate` must not change the name or namespace.

use kcache_core::Object;
use kcache_transport::{Api, Patch, PatchParams, PostParams};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{Map, Value};

/// What [`create_or_update`] or [`create_or_patch`] did (controllerutil's `OperationResult`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OperationResult {
    /// Nothing changed: no write was sent.
    Unchanged,
    /// The object did not exist and was created.
    Created,
    /// The object was updated (by [`create_or_patch`]: outside its status).
    Updated,
    /// [`create_or_patch`]: the object and its status were patched.
    UpdatedStatus,
    /// [`create_or_patch`]: only the status was patched.
    UpdatedStatusOnly,
}

impl OperationResult {
    /// controllerutil's string for it (`unchanged`, `created`, `updated`, `updatedStatus`,
    /// `updatedStatusOnly`), for logs and events.
    pub fn as_str(self) -> &'static str {
        match self {
            OperationResult::Unchanged => "unchanged",
            OperationResult::Created => "created",
            OperationResult::Updated => "updated",
            OperationResult::UpdatedStatus => "updatedStatus",
            OperationResult::UpdatedStatusOnly => "updatedStatusOnly",
        }
    }
}

impl std::fmt::Display for OperationResult {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why [`create_or_update`] or [`create_or_patch`] failed.
#[derive(Debug, thiserror::Error)]
pub enum Error<E: std::error::Error + 'static> {
    /// `mutate` returned an error; nothing was written.
    #[error("mutate failed")]
    Mutate(#[source] E),
    /// `mutate` changed the object's name or namespace.
    #[error("mutate cannot change the object's name or namespace: {before} became {after}")]
    KeyChanged {
        /// `namespace/name` before.
        before: String,
        /// `namespace/name` after.
        after: String,
    },
    /// The object has no name.
    #[error("the object has no name")]
    UnnamedObject,
    /// A read or write failed (a 409 on update: someone wrote in between; retry).
    #[error("API request failed")]
    Api(#[source] kcache_core::Error),
}

/// Creates `obj` or updates it to what `mutate` makes of the server's copy (controllerutil's
/// `CreateOrUpdate`). The update is a `replace` carrying the read resourceVersion, so a
/// concurrent write makes it fail with 409 rather than be overwritten. Returns the object as
/// the server has it after the call.
///
/// Changes are found by comparing the object before and after `mutate` (`PartialEq`, as
/// controllerutil uses `equality.Semantic.DeepEqual`).
pub async fn create_or_update<K, E, F>(
    api: &Api<K>,
    obj: K,
    mutate: F,
) -> Result<(K, OperationResult), Error<E>>
where
    K: Object + Clone + PartialEq + Serialize + DeserializeOwned,
    E: std::error::Error + 'static,
    F: FnOnce(&mut K) -> Result<(), E>,
{
    let name = name_of(&obj)?;
    let (current, mutate) = match get_or_create(api, obj, &name, mutate).await? {
        Fetched::Created(created) => return Ok((created, OperationResult::Created)),
        Fetched::Existing(current, mutate) => (current, mutate),
    };
    let mut next = current.clone();
    run_mutate(&mut next, mutate)?;
    if next == current {
        return Ok((current, OperationResult::Unchanged));
    }
    let updated = api
        .replace(&name, &PostParams::default(), &next)
        .await
        .map_err(Error::Api)?;
    Ok((updated, OperationResult::Updated))
}

/// Creates `obj` or patches the server's copy with what `mutate` changed (controllerutil's
/// `CreateOrPatch`): a JSON merge patch of the changes outside `status`, and one of `status`
/// through the status subresource, each sent only if something changed there. No
/// resourceVersion is sent: fields `mutate` did not touch are never overwritten, so there is no
/// conflict to retry.
pub async fn create_or_patch<K, E, F>(
    api: &Api<K>,
    obj: K,
    mutate: F,
) -> Result<(K, OperationResult), Error<E>>
where
    K: Object + Clone + Serialize + DeserializeOwned,
    E: std::error::Error + 'static,
    F: FnOnce(&mut K) -> Result<(), E>,
{
    let name = name_of(&obj)?;
    let (current, mutate) = match get_or_create(api, obj, &name, mutate).await? {
        Fetched::Created(created) => return Ok((created, OperationResult::Created)),
        Fetched::Existing(current, mutate) => (current, mutate),
    };
    let mut next = current.clone();
    run_mutate(&mut next, mutate)?;
    let (mut before, mut after) = (to_json(&current)?, to_json(&next)?);
    let before_status = before.remove("status");
    let after_status = after.remove("status");
    let mut result = OperationResult::Unchanged;
    let mut latest = current;
    let spec_patch = merge_diff(&Value::Object(before), &Value::Object(after));
    if !is_empty_patch(&spec_patch) {
        latest = api
            .patch(&name, &PatchParams::default(), &Patch::Merge(&spec_patch))
            .await
            .map_err(Error::Api)?;
        result = OperationResult::Updated;
    }
    if before_status != after_status {
        let null = Value::Null;
        let status_patch = serde_json::json!({
            "status": merge_diff(before_status.as_ref().unwrap_or(&null),
                                 after_status.as_ref().unwrap_or(&null)),
        });
        latest = api
            .patch_status(&name, &PatchParams::default(), &Patch::Merge(&status_patch))
            .await
            .map_err(Error::Api)?;
        result = match result {
            OperationResult::Updated => OperationResult::UpdatedStatus,
            _ => OperationResult::UpdatedStatusOnly,
        };
    }
    Ok((latest, result))
}

enum Fetched<K, F> {
    Created(K),
    Existing(K, F),
}

/// Reads the object; if it is missing, mutates `obj` and creates it.
async fn get_or_create<K, E, F>(
    api: &Api<K>,
    mut obj: K,
    name: &str,
    mutate: F,
) -> Result<Fetched<K, F>, Error<E>>
where
    K: Object + Serialize + DeserializeOwned,
    E: std::error::Error + 'static,
    F: FnOnce(&mut K) -> Result<(), E>,
{
    match api.get(name).await {
        Ok(current) => Ok(Fetched::Existing(current, mutate)),
        Err(e) if e.is_not_found() => {
            run_mutate(&mut obj, mutate)?;
            let created = api
                .create(&PostParams::default(), &obj)
                .await
                .map_err(Error::Api)?;
            Ok(Fetched::Created(created))
        }
        Err(e) => Err(Error::Api(e)),
    }
}

/// controllerutil's `mutate`: runs `f` and refuses a changed key.
fn run_mutate<K: Object, E: std::error::Error + 'static>(
    obj: &mut K,
    f: impl FnOnce(&mut K) -> Result<(), E>,
) -> Result<(), Error<E>> {
    let before = key_of(obj);
    f(obj).map_err(Error::Mutate)?;
    let after = key_of(obj);
    if before != after {
        return Err(Error::KeyChanged { before, after });
    }
    Ok(())
}

fn name_of<K: Object, E: std::error::Error + 'static>(obj: &K) -> Result<String, Error<E>> {
    match obj.name() {
        "" => Err(Error::UnnamedObject),
        n => Ok(n.to_string()),
    }
}

fn key_of(obj: &impl Object) -> String {
    match obj.namespace().filter(|n| !n.is_empty()) {
        Some(ns) => format!("{ns}/{}", obj.name()),
        None => obj.name().to_string(),
    }
}

fn to_json<K: Serialize, E: std::error::Error + 'static>(
    obj: &K,
) -> Result<Map<String, Value>, Error<E>> {
    match serde_json::to_value(obj) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(_) => Err(Error::Api(kcache_core::Error::decode(
            "object",
            "does not serialize to a JSON object",
        ))),
        Err(e) => Err(Error::Api(kcache_core::Error::decode("object", e))),
    }
}

/// The JSON merge patch (RFC 7386) turning `before` into `after` (jsonpatch's
/// `CreateMergePatch`, which controller-runtime's `MergeFrom` uses): changed members, removed
/// members as `null`, anything that is not an object replaced whole.
pub(crate) fn merge_diff(before: &Value, after: &Value) -> Value {
    match (before, after) {
        (Value::Object(b), Value::Object(a)) => {
            let mut patch = Map::new();
            for (k, av) in a {
                match b.get(k) {
                    Some(bv) if bv == av => {}
                    Some(bv @ Value::Object(_)) if av.is_object() => {
                        patch.insert(k.clone(), merge_diff(bv, av));
                    }
                    _ => {
                        patch.insert(k.clone(), av.clone());
                    }
                }
            }
            for k in b.keys().filter(|k| !a.contains_key(*k)) {
                patch.insert(k.clone(), Value::Null);
            }
            Value::Object(patch)
        }
        _ => after.clone(),
    }
}

fn is_empty_patch(p: &Value) -> bool {
    p.as_object().is_some_and(Map::is_empty)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn merge_diff_is_rfc_7386() {
        let before = json!({"a": 1, "b": {"c": 1, "d": 2}, "e": [1, 2], "f": "x"});
        let after = json!({"a": 1, "b": {"c": 3}, "e": [1], "g": null});
        let patch = merge_diff(&before, &after);
        assert_eq!(
            patch,
            json!({"b": {"c": 3, "d": null}, "e": [1], "f": null, "g": null})
        );
        let mut applied = before.clone();
        json_merge(&mut applied, &patch);
        assert_eq!(applied, json!({"a": 1, "b": {"c": 3}, "e": [1]}));
        assert_eq!(merge_diff(&after, &after), json!({}));
    }

    /// RFC 7386's apply, to check the diff round-trips.
    fn json_merge(target: &mut Value, patch: &Value) {
        let Value::Object(p) = patch else {
            *target = patch.clone();
            return;
        };
        if !target.is_object() {
            *target = json!({});
        }
        let t = target.as_object_mut().unwrap();
        for (k, v) in p {
            if v.is_null() {
                t.remove(k);
            } else {
                json_merge(t.entry(k.clone()).or_insert(Value::Null), v);
            }
        }
    }

    #[test]
    fn operation_results_read_as_controllerutils() {
        assert_eq!(OperationResult::Unchanged.to_string(), "unchanged");
        assert_eq!(
            OperationResult::UpdatedStatusOnly.as_str(),
            "updatedStatusOnly"
        );
    }
}
