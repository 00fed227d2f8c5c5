//! PATCH: JSON patch, JSON merge patch, strategic merge patch (simplified, see `strategic`) and
//! server-side apply (field ownership, conflicts and `force`: see `fieldmanager`).

use http::{header, HeaderMap, StatusCode};
use kcache_core::Status;
use serde_json::Value;

use super::options::patch_options;
use super::strategic::strategic_merge;
use super::write::{create_stored, parse_object, update_with};
use super::Target;
use crate::fieldmanager;
use crate::http::query::Query;
use crate::http::responses::{json_response, ApiError, ApiResult};
use crate::state::ServerState;

/// A patch that transforms the live object.
enum Patch {
    Json(json_patch::Patch),
    Merge(Value),
    Strategic(Value),
}

enum Kind {
    Patch(Patch),
    Apply(Value),
}

fn unprocessable(msg: String) -> ApiError {
    Status::failure(422, "Invalid", msg).into()
}

/// The patch type, then the `PatchOptions` (validated for that type: their 422 comes before
/// any complaint about the body, as in the API server), then the body. Returns the patch and
/// whether it is a dry run.
fn parse(headers: &HeaderMap, body: &[u8], q: &Query) -> Result<(Kind, bool), ApiError> {
    let ct = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    let media = ct.split(';').next().unwrap_or_default().trim();
    const APPLY: &str = "application/apply-patch+yaml";
    if !matches!(
        media,
        "application/json-patch+json"
            | "application/merge-patch+json"
            | "application/strategic-merge-patch+json"
            | APPLY
    ) {
        return Err(ApiError::unsupported_media_type(media));
    }
    let dry_run = patch_options(q, media == APPLY)?;
    let bad_json = |e: serde_json::Error| {
        ApiError::bad_request(format!("the body of the patch is not valid JSON: {e}"))
    };
    let kind = match media {
        "application/json-patch+json" => {
            Kind::Patch(Patch::Json(serde_json::from_slice(body).map_err(bad_json)?))
        }
        "application/merge-patch+json" => Kind::Patch(Patch::Merge(parse_object(body)?)),
        "application/strategic-merge-patch+json" => {
            Kind::Patch(Patch::Strategic(parse_object(body)?))
        }
        _ => {
            let v: Value = serde_yaml_ng::from_slice(body).map_err(|e| {
                ApiError::bad_request(format!(
                    "the body of the apply patch is not valid YAML: {e}"
                ))
            })?;
            if !v.is_object() {
                return Err(ApiError::bad_request(
                    "the body of the apply patch must be an object",
                ));
            }
            Kind::Apply(v)
        }
    };
    Ok((kind, dry_run))
}

/// PATCH of an object or its `/status`; `manager` is recorded in `managedFields`.
pub(crate) fn patch(
    state: &ServerState,
    t: &Target,
    q: &Query,
    headers: &HeaderMap,
    body: &[u8],
    manager: &str,
) -> ApiResult {
    let (kind, dry_run) = parse(headers, body, q)?;
    let t = &Target {
        dry_run,
        ..t.clone()
    };
    let patch = match kind {
        Kind::Apply(applied) => return apply(state, t, q, &applied, manager),
        Kind::Patch(p) => p,
    };
    update_with(state, t, Some(manager), |cur| {
        let next = patch.applied_to(cur)?;
        let rv = &next["metadata"]["resourceVersion"];
        let explicit = rv.is_string() && *rv != cur["metadata"]["resourceVersion"];
        Ok((next, explicit))
    })
}

impl Patch {
    fn applied_to(&self, cur: &Value) -> Result<Value, ApiError> {
        let mut next = cur.clone();
        match self {
            Patch::Json(p) => {
                json_patch::patch(&mut next, p).map_err(|e| unprocessable(e.to_string()))?
            }
            Patch::Merge(p) => json_patch::merge(&mut next, p),
            Patch::Strategic(p) => strategic_merge(&mut next, p),
        }
        if !next.is_object() {
            return Err(unprocessable(
                "the patched object is not a JSON object".into(),
            ));
        }
        Ok(next)
    }
}

/// The request's patch applied to `cur` (a subresource's view of an object, like a Scale),
/// and whether it is a dry run; an apply patch is merged over it as a merge patch would be.
pub(crate) fn patched(
    cur: &Value,
    headers: &HeaderMap,
    body: &[u8],
    q: &Query,
) -> Result<(Value, bool), ApiError> {
    let (kind, dry_run) = parse(headers, body, q)?;
    let next = match kind {
        Kind::Patch(p) => p.applied_to(cur)?,
        Kind::Apply(applied) => Patch::Merge(applied).applied_to(cur)?,
    };
    Ok((next, dry_run))
}

/// A server-side apply: creates the object when absent.
fn apply(state: &ServerState, t: &Target, q: &Query, applied: &Value, manager: &str) -> ApiResult {
    let force = q.flag("force");
    if t.subresource.is_none() && state.storage.get(&t.res, &t.key()).is_none() {
        let mut obj = fieldmanager::apply(&t.res, None, applied, manager, force)?;
        if obj["metadata"]["name"].as_str().is_none_or(str::is_empty) {
            obj["metadata"]["name"] = t.name.clone().into();
        }
        let stored = create_stored(state, t, obj, None)?;
        return Ok(json_response(StatusCode::CREATED, stored.json.clone()));
    }
    update_with(state, t, None, |cur| {
        let next = fieldmanager::apply(&t.res, Some(cur), applied, manager, force)?;
        Ok((next, false))
    })
}
