//! `/scale`: an `autoscaling/v1` Scale view of a workload's replicas (built-in deployments,
//! replicasets and statefulsets; custom resources whose CRD enables `subresources.scale`),
//! readable, updatable and patchable. Writing it sets the object's spec replicas; like 1.20,
//! it records nothing in the object's `managedFields`.

use http::{HeaderMap, Method, StatusCode};
use kcache_core::StatusCause;
use serde_json::{json, Map, Value};

use super::patch::patched;
use super::write::{parse_object, update_stored};
use super::Target;
use crate::http::query::Query;
use crate::http::responses::{json_value, ApiError, ApiResult};
use crate::resources::{ResourceInfo, ScalePaths};
use crate::state::ServerState;

fn segments(path: &str) -> impl Iterator<Item = &str> {
    path.split('.').filter(|s| !s.is_empty())
}

fn at<'a>(obj: &'a Value, path: &str) -> Option<&'a Value> {
    segments(path).try_fold(obj, |v, s| v.get(s))
}

fn set_at(obj: &mut Value, path: &str, value: Value) {
    let segs: Vec<&str> = segments(path).collect();
    let Some((last, parents)) = segs.split_last() else {
        return;
    };
    let mut v = obj;
    for s in parents {
        if !v[*s].is_object() {
            v[*s] = Value::Object(Map::new());
        }
        v = &mut v[*s];
    }
    v[*last] = value;
}

/// A `metav1.LabelSelector` as its string form (`LabelSelectorAsSelector`), keys sorted.
fn selector_string(sel: &Value) -> String {
    let mut reqs: Vec<(String, String)> = Vec::new();
    if let Some(m) = sel["matchLabels"].as_object() {
        for (k, v) in m {
            reqs.push((k.clone(), format!("{k}={}", v.as_str().unwrap_or_default())));
        }
    }
    for e in sel["matchExpressions"].as_array().into_iter().flatten() {
        let key = e["key"].as_str().unwrap_or_default().to_string();
        let mut values: Vec<&str> = e["values"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        values.sort_unstable();
        let text = match e["operator"].as_str().unwrap_or_default() {
            "In" => format!("{key} in ({})", values.join(",")),
            "NotIn" => format!("{key} notin ({})", values.join(",")),
            "Exists" => key.clone(),
            _ => format!("!{key}"),
        };
        reqs.push((key, text));
    }
    reqs.sort();
    reqs.into_iter()
        .map(|(_, t)| t)
        .collect::<Vec<_>>()
        .join(",")
}

/// The Scale of `obj`.
fn scale_of(paths: &ScalePaths, obj: &Value) -> Value {
    let meta = &obj["metadata"];
    let mut metadata = json!({"name": meta["name"]});
    for f in ["namespace", "uid", "resourceVersion", "creationTimestamp"] {
        if !meta[f].is_null() {
            metadata[f] = meta[f].clone();
        }
    }
    let replicas = |p: &str| at(obj, p).and_then(Value::as_i64).unwrap_or(0);
    let mut spec = json!({});
    if replicas(&paths.spec_replicas) != 0 {
        spec["replicas"] = json!(replicas(&paths.spec_replicas));
    }
    let mut status = json!({"replicas": replicas(&paths.status_replicas)});
    let selector = match (&paths.label_selector, &paths.label_selector_object) {
        (Some(p), _) => at(obj, p).and_then(Value::as_str).map(str::to_string),
        (None, Some(p)) => at(obj, p).map(selector_string),
        (None, None) => None,
    };
    if let Some(s) = selector.filter(|s| !s.is_empty()) {
        status["selector"] = json!(s);
    }
    json!({"kind": "Scale", "apiVersion": "autoscaling/v1", "metadata": metadata, "spec": spec, "status": status})
}

/// 404 for a missing object, worded as kube-apiserver 1.20 words it: the deployments' and
/// replicasets' scale storage names itself `deployments/scale.apps`; the statefulsets' and a
/// custom resource's name the resource.
fn not_found(res: &ResourceInfo, name: &str) -> ApiError {
    if !res.builtin || res.api.plural == "statefulsets" {
        return ApiError::not_found(res, name);
    }
    let mut scale = res.clone();
    scale.api.plural = format!("{}/scale", res.api.plural);
    ApiError::not_found(&scale, name)
}

/// The workload itself (the Scale is a view of it).
fn object_target(t: &Target) -> Target {
    Target {
        subresource: None,
        ..t.clone()
    }
}

/// GET, PUT and PATCH of `/scale`.
pub(crate) fn scale(
    state: &ServerState,
    method: &Method,
    t: &Target,
    query: &Query,
    headers: &HeaderMap,
    body: &[u8],
) -> ApiResult {
    let res = &t.res;
    let Some(paths) = res.subresources.scale.as_ref() else {
        return Err(ApiError::no_route());
    };
    let name = t.name.as_deref().unwrap_or_default();
    let current = || {
        state
            .storage
            .get(res, &t.key())
            .map(|s| s.value())
            .ok_or_else(|| not_found(res, name))
    };
    let (wanted, dry_run) = match *method {
        Method::GET => return Ok(json_value(StatusCode::OK, &scale_of(paths, &current()?))),
        Method::PUT => (parse_object(body)?, t.dry_run),
        Method::PATCH => patched(&scale_of(paths, &current()?), headers, body, query)?,
        _ => return Err(ApiError::method_not_allowed()),
    };
    let replicas = check_scale(name, &wanted)?;
    let want_rv = wanted["metadata"]["resourceVersion"]
        .as_str()
        .filter(|rv| !rv.is_empty() && *method == Method::PUT)
        .map(str::to_string);
    let target = Target {
        dry_run,
        ..object_target(t)
    };
    let stored = update_stored(state, &target, None, |cur| {
        let mut next = cur.clone();
        set_at(&mut next, &paths.spec_replicas, json!(replicas));
        match &want_rv {
            Some(rv) => {
                next["metadata"]["resourceVersion"] = json!(rv);
                Ok((next, true))
            }
            None => Ok((next, false)),
        }
    })?;
    Ok(json_value(
        StatusCode::OK,
        &scale_of(paths, &stored.value()),
    ))
}

/// The replicas a Scale asks for: 400 for another kind or a name that is not the URL's, 422
/// for a negative count, as the API server.
fn check_scale(name: &str, scale: &Value) -> Result<i64, ApiError> {
    match scale["kind"].as_str() {
        None | Some("" | "Scale") => {}
        Some(k) => {
            return Err(ApiError::bad_request(format!(
                "{k} in version \"v1\" cannot be handled as a Scale: the object provided is unrecognized (must be of type Scale)"
            )))
        }
    }
    if scale["metadata"]["name"]
        .as_str()
        .is_some_and(|n| n != name)
    {
        return Err(ApiError::bad_request(format!(
            "the name of the object ({}) does not match the name on the URL ({name})",
            scale["metadata"]["name"].as_str().unwrap_or_default()
        )));
    }
    let replicas = match &scale["spec"]["replicas"] {
        Value::Null => 0,
        v => v.as_i64().ok_or_else(|| {
            ApiError::bad_request(format!("spec.replicas must be an integer, not {v}"))
        })?,
    };
    if replicas < 0 {
        return Err(ApiError::invalid_kind(
            "autoscaling",
            "Scale",
            name,
            vec![StatusCause {
                type_: "FieldValueInvalid".into(),
                message: format!("Invalid value: {replicas}: must be greater than or equal to 0"),
                field: "spec.replicas".into(),
            }],
        ));
    }
    Ok(replicas)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selectors_print_as_label_selector_strings() {
        let sel = json!({"matchLabels": {"b": "2", "a": "1"},
            "matchExpressions": [{"key": "c", "operator": "In", "values": ["y", "x"]}, {"key": "d", "operator": "DoesNotExist"}]});
        assert_eq!(selector_string(&sel), "a=1,b=2,c in (x,y),!d");
    }
}
