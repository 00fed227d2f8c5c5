//! `authorization.k8s.io` reviews (`subjectaccessreviews`, `localsubjectaccessreviews`,
//! `selfsubjectaccessreviews`, `selfsubjectrulesreviews`): answered as an authorizer that
//! allows everything, as the server's one user (in `system:masters`) is allowed everything.
//! Nothing is stored; the answer is the review with its status, as the real server writes it.

use http::StatusCode;
use serde_json::{json, Value};

use super::write::parse_object;
use super::Target;
use crate::fieldmanager::record_request;
use crate::http::responses::{json_value, ApiError, ApiResult};

/// POST of a review.
pub(crate) fn access_review(t: &Target, body: &[u8], manager: &str) -> ApiResult {
    let res = &t.res;
    let mut review = parse_object(body)?;
    let api_version = res.api.api_version();
    if res.api.plural == "localsubjectaccessreviews" {
        let ns = review["spec"]["resourceAttributes"]["namespace"]
            .as_str()
            .unwrap_or_default();
        if Some(ns) != t.namespace.as_deref() {
            return Err(ApiError::bad_request(format!(
                "spec.resourceAttributes.namespace must match namespace: {}",
                t.namespace.as_deref().unwrap_or_default()
            )));
        }
    }
    review["metadata"] = json!({});
    record_request(&api_version, &mut review, manager);
    let managed = review["metadata"].get_mut("managedFields").map(Value::take);
    let status = match res.api.plural.as_str() {
        "selfsubjectrulesreviews" => json!({
            "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}],
            "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}],
            "incomplete": false,
        }),
        _ => json!({"allowed": true}),
    };
    let mut out = json!({"kind": res.api.kind, "apiVersion": api_version,
                         "metadata": {"creationTimestamp": null}});
    if let Some(m) = managed {
        out["metadata"]["managedFields"] = m;
    }
    out["spec"] = review.get("spec").cloned().unwrap_or_else(|| json!({}));
    out["status"] = status;
    Ok(json_value(StatusCode::CREATED, &out))
}
