//! Server-side apply with a field manager: send the fields this controller owns, and let the
//! API server merge them and track ownership in `managedFields`.
//!
//! Apply is the write a controller should prefer for objects it makes: it needs no read first,
//! never overwrites fields other managers own (a conflict fails unless `force`), and drops the
//! fields this manager applied before but no longer sends.

use kcache_core::Object;
use kcache_transport::{Api, Patch, PatchParams};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

use crate::read_your_writes::wrote;

/// Applies `obj` as `field_manager` (`PATCH` with `application/apply-patch+yaml`). With
/// `force`, fields owned by other managers are taken over instead of failing with 409
/// (controllers usually force: they are the source of truth for what they apply).
///
/// The body is `obj` as JSON with `apiVersion` and `kind` filled in from the `Api`'s resource
/// when missing (apply requires them) and `metadata.managedFields` removed (the server refuses
/// an apply carrying it). A `metadata.resourceVersion` left in `obj` makes the apply
/// conditional on it. Returns the object as the server has it after the apply, recorded for
/// read-your-writes when called from a reconcile ([`wrote`](crate::wrote)).
pub async fn apply<K>(
    api: &Api<K>,
    obj: &K,
    field_manager: &str,
    force: bool,
) -> Result<K, kcache_core::Error>
where
    K: Object + Serialize + DeserializeOwned,
{
    let (name, body, params) = apply_request(api, obj, field_manager, force)?;
    let written = api.patch(&name, &params, &Patch::Apply(body)).await?;
    wrote(&written);
    Ok(written)
}

/// [`apply`] to the `status` subresource: only the status fields of `obj` count.
pub async fn apply_status<K>(
    api: &Api<K>,
    obj: &K,
    field_manager: &str,
    force: bool,
) -> Result<K, kcache_core::Error>
where
    K: Object + Serialize + DeserializeOwned,
{
    let (name, body, params) = apply_request(api, obj, field_manager, force)?;
    let written = api
        .patch_status(&name, &params, &Patch::Apply(body))
        .await?;
    wrote(&written);
    Ok(written)
}

fn apply_request<K: Object + Serialize>(
    api: &Api<K>,
    obj: &K,
    field_manager: &str,
    force: bool,
) -> Result<(String, Value, PatchParams), kcache_core::Error> {
    let invalid = |m: String| kcache_core::Error::Request(m.into());
    if field_manager.is_empty() {
        return Err(invalid("server-side apply needs a field manager".into()));
    }
    if obj.name().is_empty() {
        return Err(invalid("the object to apply has no name".into()));
    }
    let mut body =
        serde_json::to_value(obj).map_err(|e| kcache_core::Error::decode("object", e))?;
    let Some(map) = body.as_object_mut() else {
        return Err(invalid("the object to apply is not a JSON object".into()));
    };
    let resource = api.resource();
    map.entry("apiVersion")
        .or_insert_with(|| resource.api_version().into());
    map.entry("kind")
        .or_insert_with(|| resource.kind.clone().into());
    if let Some(meta) = map.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.remove("managedFields");
    }
    let mut params = PatchParams::apply(field_manager);
    params.force = force;
    Ok((obj.name().to_string(), body, params))
}
