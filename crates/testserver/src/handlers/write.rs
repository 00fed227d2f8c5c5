//! POST (create) and PUT (update, and update of `/status`), with metadata managed like the real
//! server: uid, creationTimestamp, generation, generateName, finalizer-held deletion.

use std::sync::Arc;

use http::StatusCode;
use kcache_core::{Status, StatusCause};
use serde_json::{json, Value};

use super::delete::after_delete;
use super::{crd_termination, namespace_lifecycle, services, workload_defaults, Target};
use crate::fieldmanager::record_update;
use crate::handlers::event_validation::invalid_group;
use crate::handlers::meta::{name_suffix, new_uid, now_rfc3339};
use crate::handlers::validation::validate;
use crate::http::protobuf_body;
use crate::http::responses::{json_response, ApiError, ApiResult};
use crate::resources::{conversion, crd_schema, hpa_versions, ResourceInfo};
use crate::state::ServerState;
use crate::storage::{object_key, CommitError, Expect, Stored};

/// Metadata the server owns: copied from the stored object on every update.
const IMMUTABLE_META: [&str; 7] = [
    "uid",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "namespace",
    "name",
    "generation",
];

/// Parses a request body as a JSON object, or a protobuf-encoded one as the JSON the client
/// would have sent (400 otherwise).
pub(crate) fn parse_object(body: &[u8]) -> Result<Value, ApiError> {
    let v: Value = if protobuf_body::is_protobuf(body) {
        protobuf_body::to_json(body).map_err(|e| {
            ApiError::bad_request(format!(
                "the protobuf body of the request cannot be read: {e}"
            ))
        })?
    } else {
        serde_json::from_slice(body).map_err(|e| {
            ApiError::bad_request(format!("the body of the request is not valid JSON: {e}"))
        })?
    };
    if !v.is_object() {
        return Err(ApiError::bad_request(
            "the body of the request must be a JSON object",
        ));
    }
    Ok(v)
}

/// Checks `kind`/`apiVersion` against the URL's resource (filling them when absent) and the
/// namespace against the URL's.
fn check_identity(t: &Target, obj: &mut Value) -> Result<(), ApiError> {
    let res = &t.res;
    match obj["kind"].as_str() {
        None | Some("") => obj["kind"] = json!(res.api.kind),
        Some(k) if k != res.api.kind => {
            return Err(ApiError::bad_request(format!(
                "{k} in version {:?} cannot be handled as a {}: the object provided is unrecognized (must be of type {})",
                res.api.version, res.api.kind, res.api.kind
            )))
        }
        Some(_) => {}
    }
    match obj["apiVersion"].as_str() {
        None | Some("") => obj["apiVersion"] = json!(res.api.api_version()),
        Some(v) if v != res.api.api_version() => {
            return Err(ApiError::bad_request(format!(
                "the API version in the data ({v}) does not match the expected API version ({})",
                res.api.api_version()
            )))
        }
        Some(_) => {}
    }
    if !obj["metadata"].is_object() {
        obj["metadata"] = json!({});
    }
    let meta = &mut obj["metadata"];
    if res.api.namespaced {
        let url_ns = t.namespace.as_deref().unwrap_or_default();
        match meta["namespace"].as_str() {
            None | Some("") => meta["namespace"] = json!(url_ns),
            Some(ns) if ns != url_ns => {
                return Err(ApiError::bad_request(
                    "the namespace of the provided object does not match the namespace sent on the request",
                ))
            }
            Some(_) => {}
        }
    } else if let Some(m) = meta.as_object_mut() {
        m.remove("namespace");
    }
    Ok(())
}

fn invalid_or_ok(res: &ResourceInfo, obj: &Value) -> Result<(), ApiError> {
    let causes = validate(res, obj);
    if causes.is_empty() {
        Ok(())
    } else {
        Err(ApiError::invalid_kind(
            invalid_group(res),
            &res.api.kind,
            obj["metadata"]["name"].as_str().unwrap_or_default(),
            causes,
        ))
    }
}

/// What the server sets on a new object's status, per resource.
fn initial_status(res: &ResourceInfo, obj: &mut Value) {
    let m = obj.as_object_mut().expect("checked to be an object");
    match (res.api.group.as_str(), res.api.plural.as_str()) {
        ("", "pods") => {
            let qos = workload_defaults::qos_class(m.get("spec").unwrap_or(&Value::Null));
            m.insert(
                "status".into(),
                json!({"phase": "Pending", "qosClass": qos}),
            );
        }
        ("", "namespaces") => {
            m.insert("spec".into(), json!({"finalizers": ["kubernetes"]}));
            m.insert("status".into(), json!({"phase": "Active"}));
        }
        ("apiextensions.k8s.io", "customresourcedefinitions") => {
            let names = m
                .get("spec")
                .map(|s| s["names"].clone())
                .unwrap_or_default();
            let storage: Vec<Value> = m
                .get("spec")
                .and_then(|s| s["versions"].as_array())
                .map_or_else(Vec::new, |vs| {
                    vs.iter()
                        .filter(|v| v["storage"].as_bool() == Some(true))
                        .map(|v| v["name"].clone())
                        .collect()
                });
            let now = now_rfc3339();
            let cond = |t: &str, reason: &str| json!({"type": t, "status": "True", "lastTransitionTime": now, "reason": reason, "message": ""});
            m.insert(
                "status".into(),
                json!({"conditions": [cond("NamesAccepted", "NoConflicts"), cond("Established", "InitialNamesAccepted")],
                       "acceptedNames": names, "storedVersions": storage}),
            );
        }
        ("autoscaling", "horizontalpodautoscalers") => {
            m.insert("status".into(), hpa_versions::zero_status());
        }
        // The status structs Go writes even before a controller filled them.
        ("apps", "deployments") | ("batch", "jobs") | ("batch", "cronjobs") => {
            m.insert("status".into(), json!({}));
        }
        ("apps", "replicasets") | ("apps", "statefulsets") => {
            m.insert("status".into(), json!({"replicas": 0}));
        }
        ("apps", "daemonsets") => {
            m.insert(
                "status".into(),
                json!({"currentNumberScheduled": 0, "desiredNumberScheduled": 0,
                       "numberMisscheduled": 0, "numberReady": 0}),
            );
        }
        _ if res.subresources.status => {
            m.remove("status");
        }
        _ => {}
    }
}

/// Creates `obj` (already parsed) at `t`: the body of POST, of a server-side apply that finds
/// nothing, and of [`crate::TestServer::create`]. `updater` is the manager an `Update` entry of
/// `managedFields` records (`None`: the object's `managedFields` are already final).
pub(crate) fn create_stored(
    state: &ServerState,
    t: &Target,
    mut obj: Value,
    updater: Option<&str>,
) -> Result<Arc<Stored>, ApiError> {
    let res = &t.res;
    check_identity(t, &mut obj)?;
    namespace_lifecycle::admit_create(state, t, &obj)?;
    let mut obj = conversion::to_storage(res, obj);
    crd_schema::on_write(res, &mut obj);
    if services::is_service(res) {
        services::set_defaults(&mut obj);
    }
    workload_defaults::apply(res, &mut obj);
    if is_crd(res) {
        crd_schema::store_crd_schemas(&mut obj);
    }
    if obj["metadata"]["resourceVersion"]
        .as_str()
        .is_some_and(|rv| !rv.is_empty())
    {
        return Err(Status::failure(
            500,
            "InternalError",
            "resourceVersion should not be set on objects to be created",
        )
        .into());
    }
    if let Some(manager) = updater {
        if (res.api.group.as_str(), res.api.plural.as_str()) == ("", "namespaces") {
            // Defaulted when the API server decodes the request, so owned by the creator.
            obj["status"]["phase"] = json!("Active");
        }
        record_update(res, None, &mut obj, manager);
    }
    let generate = obj["metadata"]["generateName"]
        .as_str()
        .filter(|g| !g.is_empty())
        .map(str::to_string);
    let explicit_name = obj["metadata"]["name"]
        .as_str()
        .filter(|n| !n.is_empty())
        .map(str::to_string);
    if let Some(name) = &explicit_name {
        if t.name.as_deref().is_some_and(|url| url != name) {
            return Err(ApiError::bad_request(format!(
                "the name of the object ({name}) does not match the name on the URL ({})",
                t.name.as_deref().unwrap_or_default()
            )));
        }
    }
    {
        let meta = obj["metadata"]
            .as_object_mut()
            .expect("check_identity made it an object");
        meta.insert("uid".into(), json!(new_uid()));
        meta.insert("creationTimestamp".into(), json!(now_rfc3339()));
        for f in [
            "deletionTimestamp",
            "deletionGracePeriodSeconds",
            "resourceVersion",
            "generation",
        ] {
            meta.remove(f);
        }
        if res.has_generation {
            meta.insert("generation".into(), json!(1));
        }
    }
    initial_status(res, &mut obj);
    workload_defaults::prepare_create(res, &mut obj);
    if services::is_service(res) {
        services::allocate_on_create(state, res, &mut obj)?;
    }
    for _ in 0..8 {
        let name = match (&explicit_name, &generate) {
            (Some(n), _) => n.clone(),
            (None, Some(prefix)) => format!("{prefix}{}", name_suffix()),
            (None, None) => String::new(),
        };
        obj["metadata"]["name"] = json!(name);
        invalid_or_ok(res, &obj)?;
        crd_schema::to_storage(res, &mut obj);
        let key = object_key(t.namespace.as_deref().filter(|_| res.api.namespaced), &name);
        if t.dry_run {
            // What the API server's dry run answers: the object as it would be created, uid
            // and creationTimestamp set, no resourceVersion.
            match state.storage.get(res, &key) {
                Some(_) if explicit_name.is_none() => continue,
                Some(_) => return Err(ApiError::already_exists(res, &name)),
                None => {
                    let stored = Arc::new(Stored::new(&obj, 0, &res.fields));
                    return Ok(conversion::present(res, stored));
                }
            }
        }
        match state.storage.put(res, &key, Expect::Absent, obj.clone()) {
            Ok(stored) => {
                if res.api.plural == "customresourcedefinitions" {
                    state.resources.add_crd(&obj);
                    crate::autoregister::sync(state);
                }
                return Ok(conversion::present(res, stored));
            }
            Err(CommitError::AlreadyExists) if explicit_name.is_none() => continue,
            Err(_) => return Err(ApiError::already_exists(res, &name)),
        }
    }
    Err(Status::failure(500, "InternalError", "could not generate a unique name").into())
}

/// POST.
pub(crate) fn create(state: &ServerState, t: &Target, body: &[u8], manager: &str) -> ApiResult {
    if t.res.api.namespaced && t.namespace.is_none() {
        return Err(ApiError::method_not_allowed());
    }
    crd_termination::admit_create(state, &t.res)?;
    create_stored(state, t, parse_object(body)?, Some(manager))
        .map(|s| json_response(StatusCode::CREATED, s.json.clone()))
}

/// PUT of an object or its `/status`.
pub(crate) fn update(state: &ServerState, t: &Target, body: &[u8], manager: &str) -> ApiResult {
    let mut incoming = parse_object(body)?;
    check_identity(t, &mut incoming)?;
    let url_name = t.name.as_deref().unwrap_or_default();
    match incoming["metadata"]["name"].as_str() {
        Some(n) if n != url_name => {
            return Err(ApiError::bad_request(format!(
                "the name of the object ({n}) does not match the name on the URL ({url_name})"
            )))
        }
        _ => incoming["metadata"]["name"] = json!(url_name),
    }
    let has_rv = incoming["metadata"]["resourceVersion"]
        .as_str()
        .is_some_and(|s| !s.is_empty());
    if !has_rv && !t.res.builtin {
        let cause = StatusCause {
            type_: "FieldValueInvalid".into(),
            message: "Invalid value: 0x0: must be specified for an update".into(),
            field: "metadata.resourceVersion".into(),
        };
        return Err(ApiError::invalid(&t.res, url_name, vec![cause]));
    }
    update_with(state, t, Some(manager), |_| Ok((incoming.clone(), has_rv)))
}

/// The update loop shared by PUT and PATCH: `make` turns the current object into the requested
/// one (and says whether its resourceVersion is the client's precondition); unconditional
/// writes retry on a concurrent change, conditional ones answer 409. `updater` is recorded in
/// `managedFields` as for [`create_stored`].
pub(crate) fn update_with(
    state: &ServerState,
    t: &Target,
    updater: Option<&str>,
    make: impl FnMut(&Value) -> Result<(Value, bool), ApiError>,
) -> ApiResult {
    update_stored(state, t, updater, make).map(|s| json_response(StatusCode::OK, s.json.clone()))
}

/// [`update_with`], returning the stored object.
pub(crate) fn update_stored(
    state: &ServerState,
    t: &Target,
    updater: Option<&str>,
    mut make: impl FnMut(&Value) -> Result<(Value, bool), ApiError>,
) -> Result<Arc<Stored>, ApiError> {
    let res = &t.res;
    let name = t.name.as_deref().unwrap_or_default();
    let key = t.key();
    let sub = t.subresource.as_deref();
    let status_only = matches!(sub, Some("status" | "approval"));
    loop {
        let current = state
            .storage
            .get(res, &key)
            .ok_or_else(|| ApiError::not_found(res, name))?;
        let cur = current.value();
        let (incoming, explicit) = make(&conversion::present_value(res, cur.clone()))?;
        let mut incoming = conversion::to_storage(res, incoming);
        if services::is_service(res) && !status_only {
            services::set_defaults(&mut incoming);
        }
        if !status_only {
            workload_defaults::apply(res, &mut incoming);
            if is_crd(res) {
                crd_schema::store_crd_schemas(&mut incoming);
            }
        }
        if explicit {
            let rv = incoming["metadata"]["resourceVersion"]
                .as_str()
                .unwrap_or_default();
            if rv.parse::<u64>().ok() != Some(current.rv) {
                if rv.parse::<u64>().is_err() {
                    return Err(ApiError::bad_request(format!(
                        "invalid resource version: {rv:?}"
                    )));
                }
                return Err(ApiError::conflict(res, name, ApiError::MODIFIED));
            }
        }
        let mut next = merge_update(res, status_only, &cur, incoming);
        if is_namespace(res) && sub.is_none() {
            // The namespace strategy's PrepareForUpdate: only `finalize` changes them.
            let kept = cur["spec"].get("finalizers").cloned();
            if let Some(spec) = next["spec"].as_object_mut() {
                match kept {
                    Some(f) => spec.insert("finalizers".into(), f),
                    None => spec.remove("finalizers"),
                };
            }
        }
        crd_schema::on_write(res, &mut next);
        if sub == Some("approval") {
            // `/approval` writes only the conditions (CertificateSigningRequest approval).
            let conditions = next["status"]["conditions"].clone();
            next["status"] = cur["status"].clone();
            if !next["status"].is_object() {
                next["status"] = json!({});
            }
            next["status"]["conditions"] = conditions;
        }
        if services::is_service(res) {
            services::check_update(state, res, &cur, &mut next)?;
        }
        if let Some(manager) = updater {
            record_update(res, Some(&cur), &mut next, manager);
        }
        invalid_or_ok(res, &next)?;
        crd_schema::to_storage(res, &mut next);
        if next == cur {
            return Ok(conversion::present(res, current));
        }
        if t.dry_run {
            let stored = Arc::new(Stored::new(&next, current.rv, &res.fields));
            return Ok(conversion::present(res, stored));
        }
        let deleting = next["metadata"]["deletionTimestamp"].is_string();
        let no_finalizers = next["metadata"]["finalizers"]
            .as_array()
            .is_none_or(|f| f.is_empty())
            && (!is_namespace(res) || namespace_lifecycle::spec_finalized(&next));
        let result = if deleting && no_finalizers {
            state
                .storage
                .delete(res, &key, Expect::Rv(current.rv), Some(next))
        } else {
            state.storage.put(res, &key, Expect::Rv(current.rv), next)
        };
        match result {
            Ok(stored) => {
                if deleting && no_finalizers {
                    after_delete(state, res, &cur);
                } else if res.api.plural == "customresourcedefinitions" {
                    state.resources.update_crd(&cur, &stored.value());
                    crate::autoregister::sync(state);
                }
                return Ok(conversion::present(res, stored));
            }
            Err(CommitError::Conflict) if !explicit => continue,
            Err(CommitError::Conflict) => {
                return Err(ApiError::conflict(res, name, ApiError::MODIFIED))
            }
            Err(_) => return Err(ApiError::not_found(res, name)),
        }
    }
}

/// A CustomResourceDefinition: its schemas are stored as 1.20.2's typed decode leaves them.
fn is_crd(res: &ResourceInfo) -> bool {
    res.builtin
        && res.api.group == "apiextensions.k8s.io"
        && res.api.plural == "customresourcedefinitions"
}

fn is_namespace(res: &ResourceInfo) -> bool {
    res.builtin && res.api.group.is_empty() && res.api.plural == "namespaces"
}

/// The object an update stores: server-owned metadata from `cur`; status from `cur` unless this
/// is a status update, and everything else from `cur` if it is; generation bumped when anything
/// outside metadata and status changed.
fn merge_update(res: &ResourceInfo, status_only: bool, cur: &Value, incoming: Value) -> Value {
    let mut next = if status_only {
        let mut n = cur.clone();
        set_or_remove(&mut n, "status", incoming.get("status"));
        if res.api.plural == "customresourcedefinitions" {
            // The CRD status strategy keeps only labels, annotations and owners: its
            // finalizer controller removes its finalizer with the status it writes.
            let finalizers = incoming["metadata"].get("finalizers");
            set_or_remove(&mut n["metadata"], "finalizers", finalizers);
        }
        n
    } else {
        let mut n = incoming;
        if res.subresources.status {
            set_or_remove(&mut n, "status", cur.get("status"));
        }
        n
    };
    let meta = &mut next["metadata"];
    for f in IMMUTABLE_META {
        set_or_remove(meta, f, cur["metadata"].get(f));
    }
    meta["resourceVersion"] = cur["metadata"]["resourceVersion"].clone();
    if res.has_generation && !status_only && without_meta_status(&next) != without_meta_status(cur)
    {
        let g = cur["metadata"]["generation"].as_i64().unwrap_or(0) + 1;
        next["metadata"]["generation"] = json!(g);
    }
    next
}

fn set_or_remove(obj: &mut Value, field: &str, value: Option<&Value>) {
    if let Some(m) = obj.as_object_mut() {
        match value {
            Some(v) => {
                m.insert(field.into(), v.clone());
            }
            None => {
                m.remove(field);
            }
        }
    }
}

fn without_meta_status(v: &Value) -> Value {
    let mut v = v.clone();
    if let Some(m) = v.as_object_mut() {
        m.remove("metadata");
        m.remove("status");
    }
    v
}
