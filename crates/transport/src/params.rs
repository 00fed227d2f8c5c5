//! Options of write requests: create/replace (`CreateOptions`/`UpdateOptions`), patch
//! (`PatchOptions` + patch type) and delete (`DeleteOptions`).

use kcache_core::{encode_query, Error};
use serde::Serialize;

/// Options of create and replace.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PostParams {
    /// Validate and report, persist nothing (`dryRun=All`).
    pub dry_run: bool,
    /// The manager recorded in managedFields.
    pub field_manager: Option<String>,
}

impl PostParams {
    pub(crate) fn to_query(&self) -> String {
        let mut q = Vec::new();
        if self.dry_run {
            q.push(("dryRun", "All".to_string()));
        }
        if let Some(m) = &self.field_manager {
            q.push(("fieldManager", m.clone()));
        }
        encode_query(&q)
    }
}

/// A patch and its type.
#[derive(Debug, Clone, PartialEq)]
pub enum Patch<P> {
    /// Server-side apply (`application/apply-patch+yaml`; JSON is YAML). Needs a field manager.
    Apply(P),
    /// A JSON patch (RFC 6902): `P` serializes to the array of operations.
    Json(P),
    /// A JSON merge patch (RFC 7386).
    Merge(P),
    /// A strategic merge patch (built-in types only).
    Strategic(P),
}

impl<P: Serialize> Patch<P> {
    pub(crate) fn content_type(&self) -> &'static str {
        match self {
            Patch::Apply(_) => "application/apply-patch+yaml",
            Patch::Json(_) => "application/json-patch+json",
            Patch::Merge(_) => "application/merge-patch+json",
            Patch::Strategic(_) => "application/strategic-merge-patch+json",
        }
    }

    pub(crate) fn body(&self) -> Result<Vec<u8>, Error> {
        let p = match self {
            Patch::Apply(p) | Patch::Json(p) | Patch::Merge(p) | Patch::Strategic(p) => p,
        };
        serde_json::to_vec(p).map_err(|e| Error::decode("patch", e))
    }
}

/// Options of a patch.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PatchParams {
    /// Validate and report, persist nothing.
    pub dry_run: bool,
    /// The manager recorded in managedFields; required for server-side apply.
    pub field_manager: Option<String>,
    /// Server-side apply only: take ownership of conflicting fields.
    pub force: bool,
}

impl PatchParams {
    /// Server-side apply as `manager`.
    pub fn apply(manager: &str) -> Self {
        PatchParams {
            field_manager: Some(manager.to_string()),
            ..PatchParams::default()
        }
    }

    /// Takes ownership of conflicting fields (builder style).
    pub fn force(mut self) -> Self {
        self.force = true;
        self
    }

    pub(crate) fn to_query<P: Serialize>(&self, patch: &Patch<P>) -> Result<String, Error> {
        let apply = matches!(patch, Patch::Apply(_));
        let invalid = |m: &str| Error::Request(m.to_string().into());
        if apply && self.field_manager.as_deref().is_none_or(str::is_empty) {
            return Err(invalid(
                "server-side apply needs PatchParams::field_manager",
            ));
        }
        if self.force && !apply {
            return Err(invalid(
                "PatchParams::force is only valid for server-side apply",
            ));
        }
        let mut q = Vec::new();
        if self.dry_run {
            q.push(("dryRun", "All".to_string()));
        }
        if let Some(m) = &self.field_manager {
            q.push(("fieldManager", m.clone()));
        }
        if self.force {
            q.push(("force", "true".to_string()));
        }
        Ok(encode_query(&q))
    }
}

/// What happens to dependents of a deleted object.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum PropagationPolicy {
    /// Dependents are left alone.
    Orphan,
    /// The object goes now; dependents are deleted in the background.
    Background,
    /// Dependents are deleted first.
    Foreground,
}

/// Conditions the object must meet for the delete to happen.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Preconditions {
    /// The object's uid must be this.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uid: Option<String>,
    /// The object's resourceVersion must be this.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resource_version: Option<String>,
}

/// Options of a delete (sent as a `DeleteOptions` body).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DeleteParams {
    /// Validate and report, delete nothing.
    pub dry_run: bool,
    /// Seconds before the object is deleted; 0 deletes immediately.
    pub grace_period_seconds: Option<u32>,
    /// What happens to dependents.
    pub propagation_policy: Option<PropagationPolicy>,
    /// Conditions for the delete.
    pub preconditions: Option<Preconditions>,
}

impl DeleteParams {
    pub(crate) fn body(&self) -> Vec<u8> {
        let mut o = serde_json::json!({"kind": "DeleteOptions", "apiVersion": "v1"});
        if self.dry_run {
            o["dryRun"] = serde_json::json!(["All"]);
        }
        if let Some(g) = self.grace_period_seconds {
            o["gracePeriodSeconds"] = g.into();
        }
        if let Some(p) = self.propagation_policy {
            o["propagationPolicy"] = serde_json::to_value(p).unwrap_or_default();
        }
        if let Some(p) = &self.preconditions {
            o["preconditions"] = serde_json::to_value(p).unwrap_or_default();
        }
        o.to_string().into_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_options() {
        let pp = PostParams {
            dry_run: true,
            field_manager: Some("me".into()),
        };
        assert_eq!(pp.to_query(), "dryRun=All&fieldManager=me");
        let apply = Patch::Apply(serde_json::json!({}));
        assert_eq!(
            PatchParams::apply("ctl").force().to_query(&apply).unwrap(),
            "fieldManager=ctl&force=true"
        );
        assert!(PatchParams::default().to_query(&apply).is_err());
        let merge = Patch::Merge(serde_json::json!({}));
        assert!(PatchParams::apply("x").force().to_query(&merge).is_err());
        assert_eq!(merge.content_type(), "application/merge-patch+json");
        let dp = DeleteParams {
            grace_period_seconds: Some(0),
            propagation_policy: Some(PropagationPolicy::Foreground),
            preconditions: Some(Preconditions {
                resource_version: Some("7".into()),
                uid: None,
            }),
            dry_run: true,
        };
        let v: serde_json::Value = serde_json::from_slice(&dp.body()).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"kind": "DeleteOptions", "apiVersion": "v1", "dryRun": ["All"],
                "gracePeriodSeconds": 0, "propagationPolicy": "Foreground",
                "preconditions": {"resourceVersion": "7"}})
        );
    }
}
