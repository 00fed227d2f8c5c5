//! A DELETE's options as the API server reads them (`DeleteOptions`, from the body or the
//! query), their preconditions, and the garbage collector's finalizer they call for: what the
//! generic delete and the resources with a termination of their own (namespaces, CRDs) share.

use serde::Deserialize;
use serde_json::Value;

use kcache_core::StatusCause;

use super::options::{dry_run, not_supported, options_invalid};
use crate::http::query::{go_quote, Query};
use crate::http::responses::ApiError;
use crate::resources::ResourceInfo;
use crate::storage::Stored;

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
    pub(crate) fn from_request(body: &[u8], q: &Query) -> Result<(Self, bool), ApiError> {
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
