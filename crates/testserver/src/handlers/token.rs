//! `serviceaccounts/{name}/token` (TokenRequest) and `tokenreviews` (TokenReview), the
//! `authentication.k8s.io/v1` calls clients make to get and check service-account tokens.

use std::time::{Duration, SystemTime};

use http::StatusCode;
use kcache_core::StatusCause;
use serde_json::{json, Value};

use super::write::parse_object;
use super::Target;
use crate::fieldmanager::record_request;
use crate::handlers::meta::rfc3339;
use crate::http::responses::{json_value, ApiError, ApiResult};
use crate::http::tokens::{Issued, ISSUER};
use crate::resources::ResourceInfo;
use crate::state::ServerState;

/// The default and the bounds of `spec.expirationSeconds`.
const DEFAULT_EXPIRATION: i64 = 3600;
const MIN_EXPIRATION: i64 = 600;
const MAX_EXPIRATION: i64 = 1 << 32;

const API_VERSION: &str = "authentication.k8s.io/v1";

/// The user the kubeconfig's token authenticates as (envtest's static token user).
const ADMIN: &str = "kcache-admin";

fn string_list(v: &Value) -> Vec<String> {
    v.as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| s.as_str().map(str::to_string))
        .collect()
}

/// POST `serviceaccounts/{name}/token`.
pub(crate) fn token_request(
    state: &ServerState,
    t: &Target,
    body: &[u8],
    manager: &str,
) -> ApiResult {
    let name = t.name.as_deref().unwrap_or_default();
    let namespace = t.namespace.clone().unwrap_or_default();
    let sa = state
        .storage
        .get(&t.res, &t.key())
        .ok_or_else(|| ApiError::not_found(&t.res, name))?
        .value();
    let req = if body.is_empty() {
        json!({})
    } else {
        parse_object(body)?
    };
    let mut audiences = string_list(&req["spec"]["audiences"]);
    if audiences.is_empty() {
        audiences.push(ISSUER.to_string());
    }
    let seconds = req["spec"]["expirationSeconds"]
        .as_i64()
        .unwrap_or(DEFAULT_EXPIRATION);
    // Defaulted while decoding, so owned by the requester like what it sent.
    let mut sent = json!({"metadata": {}, "spec": req["spec"].clone()});
    sent["spec"]["expirationSeconds"] = json!(seconds);
    record_request(API_VERSION, &mut sent, manager);
    let too = if seconds < MIN_EXPIRATION {
        Some("may not specify a duration less than 10 minutes")
    } else if seconds > MAX_EXPIRATION {
        Some("may not specify a duration larger than 2^32 seconds")
    } else {
        None
    };
    if let Some(why) = too {
        return Err(ApiError::invalid_kind(
            "authentication.k8s.io",
            "TokenRequest",
            name,
            vec![StatusCause {
                type_: "FieldValueInvalid".into(),
                message: format!("Invalid value: {seconds}: {why}"),
                field: "spec.expirationSeconds".into(),
            }],
        ));
    }
    let expires = SystemTime::now() + Duration::from_secs(seconds as u64);
    let token = state.tokens.issue(Issued {
        namespace: namespace.clone(),
        name: name.to_string(),
        uid: sa["metadata"]["uid"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
        audiences: audiences.clone(),
        expires,
    });
    let mut metadata = json!({"creationTimestamp": null});
    if let Some(m) = sent
        .get_mut("metadata")
        .and_then(|m| m.get_mut("managedFields"))
    {
        metadata["managedFields"] = m.take();
    }
    Ok(json_value(
        StatusCode::CREATED,
        &json!({"kind": "TokenRequest", "apiVersion": API_VERSION, "metadata": metadata,
                "spec": {"audiences": audiences, "expirationSeconds": seconds, "boundObjectRef": null},
                "status": {"token": token, "expirationTimestamp": rfc3339(expires)}}),
    ))
}

/// POST `tokenreviews`: authenticates the server's own token and the tokens it issued (while
/// their service account still exists with the same uid).
pub(crate) fn token_review(
    state: &ServerState,
    res: &ResourceInfo,
    body: &[u8],
    manager: &str,
) -> ApiResult {
    let mut review = parse_object(body)?;
    let api_version = res.api.api_version();
    review["metadata"] = json!({});
    record_request(&api_version, &mut review, manager);
    let managed = review["metadata"].get_mut("managedFields").map(Value::take);
    let token = review["spec"]["token"].as_str().unwrap_or_default();
    let wanted = string_list(&review["spec"]["audiences"]);
    let sa_res = state.resources.get("", "v1", "serviceaccounts");
    let status = if !token.is_empty() && state.config.token.as_deref() == Some(token) {
        let audiences = if wanted.is_empty() {
            vec![ISSUER.to_string()]
        } else {
            wanted.clone()
        };
        json!({"authenticated": true, "audiences": audiences,
               "user": {"username": ADMIN, "uid": ADMIN, "groups": ["system:masters", "system:authenticated"]}})
    } else {
        let live = state.tokens.lookup(token).filter(|i| {
            let key = crate::storage::object_key(Some(&i.namespace), &i.name);
            sa_res
                .as_ref()
                .and_then(|r| state.storage.get(r, &key))
                .is_some_and(|sa| sa.value()["metadata"]["uid"].as_str() == Some(i.uid.as_str()))
        });
        let audiences: Option<Vec<String>> = live.as_ref().and_then(|i| {
            if wanted.is_empty() {
                return Some(i.audiences.clone());
            }
            let both: Vec<String> = wanted
                .iter()
                .filter(|a| i.audiences.contains(a))
                .cloned()
                .collect();
            (!both.is_empty()).then_some(both)
        });
        match (live, audiences) {
            (Some(i), Some(audiences)) => json!({"authenticated": true, "audiences": audiences,
                "user": {"username": format!("system:serviceaccount:{}:{}", i.namespace, i.name), "uid": i.uid,
                         "groups": ["system:serviceaccounts", format!("system:serviceaccounts:{}", i.namespace), "system:authenticated"]}}),
            _ => json!({"user": {}, "error": "invalid bearer token"}),
        }
    };
    review["kind"] = json!("TokenReview");
    review["apiVersion"] = json!(api_version);
    review["metadata"] = json!({"creationTimestamp": null});
    if let Some(m) = managed {
        review["metadata"]["managedFields"] = m;
    }
    review["status"] = status;
    Ok(json_value(StatusCode::CREATED, &review))
}
