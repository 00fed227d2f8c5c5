//! PATCH: JSON patch, JSON merge patch, strategic merge patch (simplified, see `strategic`) and
//! server-side apply (simplified: the applied configuration is merged over the live object;
//! no field ownership or conflicts).

use http::{header, HeaderMap, StatusCode};
use kcache_core::{Status, StatusCause, StatusDetails};
use serde_json::Value;

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

fn parse(headers: &HeaderMap, body: &[u8], q: &Query) -> Result<Kind, ApiError> {
    let ct = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    let media = ct.split(';').next().unwrap_or_default().trim();
    let bad_json = |e: serde_json::Error| {
        ApiError::bad_request(format!("the body of the patch is not valid JSON: {e}"))
    };
    Ok(match media {
        "application/json-patch+json" => {
            Kind::Json(serde_json::from_slice(body).map_err(bad_json)?)
        }
        "application/merge-patch+json" => Kind::Merge(parse_object(body)?),
        "application/strategic-merge-patch+json" => Kind::Strategic(parse_object(body)?),
        "application/apply-patch+yaml" => {
            if q.get("fieldManager").is_none() {
                let mut s = Status::failure(
                    422,
                    "Invalid",
                    "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply patch",
                );
                s.details = Some(StatusDetails {
                    group: "meta.k8s.io".into(),
                    kind: "PatchOptions".into(),
                    causes: vec![StatusCause {
                        type_: "FieldValueRequired".into(),
                        message: "Required value: is required for apply patch".into(),
                        field: "fieldManager".into(),
                    }],
                    ..StatusDetails::default()
                });
                return Err(s.into());
            }
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
        other => return Err(ApiError::unsupported_media_type(other)),
    })
}

/// PATCH of an object or its `/status`.
pub(crate) fn patch(
    state: &ServerState,
    t: &Target,
    q: &Query,
    headers: &HeaderMap,
    body: &[u8],
) -> ApiResult {
    let kind = parse(headers, body, q)?;
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
