//! PATCH: JSON patch, JSON merge patch, strategic merge patch (simplified, see `strategic`) and
//! server-side apply (simplified: the applied configuration is merged over the live object;
//! no field ownership or conflicts).

use http::{header, HeaderMap, StatusCode};
use kcache_core::Status;
use serde_json::Value;

use super::options::patch_options;
use super::strategic::strategic_merge;
use super::write::{create_stored, parse_object, update_with};
use super::Target;
use crate::query::Query;
use crate::responses::{json_response, ApiError, ApiResult};
use crate::state::ServerState;

enum Kind {
    Json(json_patch::Patch),
    Merge(Value),
    Strategic(Value),
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
            Kind::Json(serde_json::from_slice(body).map_err(bad_json)?)
        }
        "application/merge-patch+json" => Kind::Merge(parse_object(body)?),
        "application/strategic-merge-patch+json" => Kind::Strategic(parse_object(body)?),
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

/// PATCH of an object or its `/status`.
pub(crate) fn patch(
    state: &ServerState,
    t: &Target,
    q: &Query,
    headers: &HeaderMap,
    body: &[u8],
) -> ApiResult {
    let (kind, dry_run) = parse(headers, body, q)?;
    let t = &Target {
        dry_run,
        ..t.clone()
    };
    let key = t.key();
    if let Kind::Apply(applied) = &kind {
        if t.subresource.is_none() && state.storage.get(&t.res, &key).is_none() {
            let stored = create_stored(state, t, applied.clone())?;
            return Ok(json_response(StatusCode::CREATED, stored.json.clone()));
        }
    }
    update_with(state, t, |cur| {
        let mut next = cur.clone();
        match &kind {
            Kind::Json(p) => {
                json_patch::patch(&mut next, p).map_err(|e| unprocessable(e.to_string()))?
            }
            Kind::Merge(p) | Kind::Apply(p) => json_patch::merge(&mut next, p),
            Kind::Strategic(p) => strategic_merge(&mut next, p),
        }
        if !next.is_object() {
            return Err(unprocessable(
                "the patched object is not a JSON object".into(),
            ));
        }
        let rv = &next["metadata"]["resourceVersion"];
        let explicit = rv.is_string() && *rv != cur["metadata"]["resourceVersion"];
        Ok((next, explicit))
    })
}
