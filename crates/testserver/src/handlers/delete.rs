//! DELETE of one object (finalizers hold it with a deletionTimestamp) and of a collection.

use http::StatusCode;
use serde::Deserialize;
use serde_json::{json, Value};

use kcache_core::StatusCause;

use super::options::{dry_run, not_supported, options_invalid};
use super::{crd_termination, namespace_lifecycle, Target};
use crate::handlers::meta::now_rfc3339;
use crate::http::query::{go_quote, Query};
use crate::http::responses::{json_value, ApiError, ApiResult};
use crate::resources::{conversion, ResourceInfo};
use crate::state::ServerState;
use crate::storage::{CommitError, Expect, ListAt, Stored};

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Preconditions {
    uid: Option<String>,
    resource_version: Option<String>,
}

/// The parts of `DeleteOptions` the server honours.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct DeleteOptions {
    preconditions: Option<Preconditions>,
    propagation_policy: Option<String>,
    orphan_dependents: Option<bool>,
    dry_run: Option<Vec<String>>,
}

const PROPAGATION_POLICIES: [&str; 3] = ["Foreground", "Background", "Orphan"];

impl DeleteOptions {
    /// Options naming only a propagation policy, as the controllers send them.
    pub(crate) fn propagation(policy: &str) -> Self {
        DeleteOptions {
            propagation_policy: Some(policy.to_string()),
            ..DeleteOptions::default()
        }
    }

    /// From the body, or from the query when the body is empty (as the API server reads
    /// them), then validated as `ValidateDeleteOptions` does. Returns them with whether the
    /// delete is a dry run.
    fn from_request(body: &[u8], q: &Query) -> Result<(Self, bool), ApiError> {
        let opts = if body.iter().all(u8::is_ascii_whitespace) {
            // Checked for its syntax only: no kubelet waits out a grace period here.
            q.int("gracePeriodSeconds")?;
            DeleteOptions {
                preconditions: None,
                propagation_policy: q.get("propagationPolicy").map(str::to_string),
                orphan_dependents: q.opt_flag("orphanDependents"),
                dry_run: q.all("dryRun").map(<[String]>::to_vec),
            }
        } else {
            serde_json::from_slice(body)
                .map_err(|e| ApiError::bad_request(format!("invalid DeleteOptions: {e}")))?
        };
        let mut causes = Vec::new();
        if let (Some(_), Some(p)) = (opts.orphan_dependents, &opts.propagation_policy) {
            causes.push(StatusCause {
                type_: "FieldValueInvalid".into(),
                message: format!(
                    "Invalid value: {}: orphanDependents and deletionPropagation cannot be both set",
                    go_quote(p)
                ),
                field: "propagationPolicy".into(),
            });
        }
        if let Some(p) = opts
            .propagation_policy
            .as_deref()
            .filter(|p| !PROPAGATION_POLICIES.contains(p))
        {
            let mut supported = PROPAGATION_POLICIES.to_vec();
            supported.push("nil");
            causes.push(not_supported("propagationPolicy", &go_quote(p), &supported));
        }
        let dry = dry_run(opts.dry_run.as_deref()).map_err(|c| causes.push(c));
        match dry {
            Ok(dry) if causes.is_empty() => Ok((opts, dry)),
            _ => Err(options_invalid("DeleteOptions", causes)),
        }
    }
}

/// DELETE of one object.
pub(crate) fn delete(state: &ServerState, t: &Target, q: &Query, body: &[u8]) -> ApiResult {
    let (opts, dry_run) = DeleteOptions::from_request(body, q)?;
    let t = &Target {
        dry_run,
        ..t.clone()
    };
    let name = t.name.clone().unwrap_or_default();
    let body = conversion::present_value(&t.res, delete_one(state, t, &name, &opts)?);
    Ok(json_value(StatusCode::OK, &body))
}

/// The finalizer the registry adds for the garbage collector (`deletionFinalizersForGarbage
/// Collection`): the one the options ask for, else the resource's default policy (1.20.2 keeps
/// orphaning by default where older clients expected it: batch/v1 Jobs, v1
/// ReplicationControllers, batch/v1beta1 CronJobs). Events never get one.
pub(crate) fn gc_finalizer(res: &ResourceInfo, opts: &DeleteOptions) -> Option<&'static str> {
    let gv = (res.api.group.as_str(), res.api.version.as_str());
    if res.api.plural == "events" && matches!(gv.0, "" | "events.k8s.io") {
        return None;
    }
    match (opts.orphan_dependents, opts.propagation_policy.as_deref()) {
        (Some(true), _) => Some(ORPHAN),
        (Some(false), _) => Some(FOREGROUND),
        (None, Some("Foreground")) => Some(FOREGROUND),
        (None, Some("Orphan")) => Some(ORPHAN),
        (None, Some(_)) => None,
        (None, None) => match (gv, res.api.plural.as_str()) {
            (("batch", "v1"), "jobs")
            | (("", "v1"), "replicationcontrollers")
            | (("batch", "v1beta1"), "cronjobs") => Some(ORPHAN),
            _ => None,
        },
    }
}

/// The garbage collector's finalizers (`metav1.FinalizerOrphanDependents`,
/// `FinalizerDeleteDependents`).
pub(crate) const ORPHAN: &str = "orphan";
/// See [`ORPHAN`].
pub(crate) const FOREGROUND: &str = "foregroundDeletion";

/// Checks the options' preconditions against the stored object (409 naming the mismatch).
pub(crate) fn check_preconditions(
    res: &ResourceInfo,
    name: &str,
    current: &Stored,
    cur: &Value,
    opts: &DeleteOptions,
) -> Result<(), ApiError> {
    let Some(p) = &opts.preconditions else {
        return Ok(());
    };
    let uid = cur["metadata"]["uid"].as_str().unwrap_or_default();
    if let Some(want) = p.uid.as_deref().filter(|u| *u != uid) {
        let why =
            format!("Precondition failed: UID in precondition: {want}, UID in object meta: {uid}");
        return Err(ApiError::conflict(res, name, &why));
    }
    if let Some(want) = p
        .resource_version
        .as_deref()
        .filter(|rv| *rv != current.rv.to_string())
    {
        let why = format!(
            "Precondition failed: ResourceVersion in precondition: {want}, ResourceVersion in object meta: {}",
            current.rv
        );
        return Err(ApiError::conflict(res, name, &why));
    }
    Ok(())
}

/// What a resource's own delete rule made of a DELETE.
pub(crate) enum Termination {
    /// Done: the object as stored now (its termination began, or is under way).
    Answer(Value),
    /// The object changed meanwhile: read it again.
    Conflict,
    /// The registry's generic delete applies (finalizers hold the object, else it goes).
    Generic,
}

/// DELETE of one object through the registry's rules: namespaces and CRDs first go into
/// termination (their controllers finish the deletion), finalizers hold the others.
pub(crate) fn delete_one(
    state: &ServerState,
    t: &Target,
    name: &str,
    opts: &DeleteOptions,
) -> Result<Value, ApiError> {
    let res = &t.res;
    let key =
        crate::storage::object_key(t.namespace.as_deref().filter(|_| res.api.namespaced), name);
    loop {
        let current = state
            .storage
            .get(res, &key)
            .ok_or_else(|| ApiError::not_found(res, name))?;
        let mut cur = current.value();
        check_preconditions(res, name, &current, &cur, opts)?;
        let termination = match (res.api.group.as_str(), res.api.plural.as_str()) {
            ("", "namespaces") => namespace_lifecycle::delete(state, t, &current, &cur, opts)?,
            ("apiextensions.k8s.io", "customresourcedefinitions") => {
                crd_termination::delete(state, t, &current, &cur)
            }
            _ => Termination::Generic,
        };
        match termination {
            Termination::Answer(v) => return Ok(v),
            Termination::Conflict => continue,
            Termination::Generic => {}
        }
        let mut finalizers: Vec<Value> = cur["metadata"]["finalizers"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        if let Some(f) = gc_finalizer(res, opts).filter(|f| !finalizers.iter().any(|x| x == f)) {
            finalizers.push(json!(f));
        }
        if !finalizers.is_empty() {
            if cur["metadata"]["deletionTimestamp"].is_string() {
                return Ok(cur);
            }
            cur["metadata"]["deletionTimestamp"] = json!(now_rfc3339());
            cur["metadata"]["deletionGracePeriodSeconds"] = json!(0);
            cur["metadata"]["finalizers"] = Value::Array(finalizers);
            if t.dry_run {
                return Ok(cur);
            }
            match state.storage.put(res, &key, Expect::Rv(current.rv), cur) {
                Ok(s) => return Ok(s.value()),
                Err(CommitError::Conflict) => continue,
                Err(_) => return Err(ApiError::not_found(res, name)),
            }
        }
        let gone = if t.dry_run {
            // Checked, not deleted: the answer shows the object as it is.
            current
        } else {
            match state
                .storage
                .delete(res, &key, Expect::Rv(current.rv), None)
            {
                Ok(g) => g,
                Err(CommitError::Conflict) => continue,
                Err(_) => return Err(ApiError::not_found(res, name)),
            }
        };
        if !t.dry_run {
            after_delete(state, res, &cur);
        }
        if res.returns_deleted_object {
            return Ok(gone.value());
        }
        let mut details =
            json!({"name": name, "kind": res.api.plural, "uid": cur["metadata"]["uid"]});
        if !res.api.group.is_empty() {
            // An empty group is omitted, as Go omits empty strings of StatusDetails.
            details["group"] = json!(res.api.group);
        }
        return Ok(json!({
            "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
            "details": details,
        }));
    }
}

/// What goes with an object once it is gone from the store: a CRD's resources stop being
/// served (their objects were deleted by its cleanup first) and their APIServices go.
pub(crate) fn after_delete(state: &ServerState, res: &ResourceInfo, last: &Value) {
    if (res.api.group.as_str(), res.api.plural.as_str())
        == ("apiextensions.k8s.io", "customresourcedefinitions")
    {
        for id in state.resources.remove_crd(last) {
            state.storage.drop_collection(&id);
        }
        crate::autoregister::sync(state);
    }
}

/// DELETE of a collection: every object matching the selectors, one by one.
pub(crate) fn delete_collection(
    state: &ServerState,
    t: &Target,
    q: &Query,
    body: &[u8],
) -> ApiResult {
    let filter = t.filter(q, &state.config)?;
    q.int("limit")?;
    q.int("timeoutSeconds")?;
    let (opts, dry_run) = DeleteOptions::from_request(body, q)?;
    let page = state
        .storage
        .list(&t.res, ListAt::Current, &filter, None, None)
        .map_err(|_| ApiError::bad_request("cannot list the collection"))?;
    let mut items = Vec::new();
    for obj in &page.items {
        let target = Target {
            namespace: obj.namespace.clone(),
            dry_run,
            ..t.clone()
        };
        match delete_one(state, &target, &obj.name, &opts) {
            Ok(_) => {}
            Err(e) if e.status.is_not_found() => {}
            Err(e) => return Err(e),
        }
        // The answer is the list as it was read before deleting (the real `DeleteCollection`
        // returns its list), whatever a single DELETE of the resource answers.
        items.push(conversion::present_value(&t.res, obj.value()));
    }
    let body = json!({"kind": t.res.list_kind(), "apiVersion": t.res.api.api_version(),
                      "metadata": {"resourceVersion": state.storage.current_rev().to_string()}, "items": items});
    Ok(json_value(StatusCode::OK, &body))
}
