//! The resources the server serves: the built-in table ([`builtin`]), and the ones CRDs add
//! and remove at runtime ([`crd`]), behind one [`ResourceTable`].

use std::collections::BTreeMap;
use std::sync::Arc;

use kcache_core::ApiResource;
use parking_lot::RwLock;
use serde_json::Value;

mod behaviour;
pub(crate) mod builtin;
pub(crate) mod conversion;
mod crd;
pub(crate) mod crd_schema;
mod crd_versions;
mod deprecations;
mod event_versions;
mod hpa_behavior;
mod hpa_metrics;
pub(crate) mod hpa_versions;
mod ingress_versions;
pub(crate) mod object_meta;
pub(crate) mod set_default;
pub(crate) mod stored_fields;
pub(crate) mod version_priority;
mod versions;
mod webhook_versions;

/// Everything the server knows about one served resource.
#[derive(Debug, Clone)]
pub struct ResourceInfo {
    /// Group, version, kind, plural, scope.
    pub api: ApiResource,
    /// Singular name (discovery).
    pub singular: String,
    /// The verbs discovery lists.
    pub verbs: Vec<String>,
    /// Short names kubectl accepts (discovery).
    pub short_names: Vec<String>,
    /// Categories (discovery; `kubectl get all` reads them).
    pub categories: Vec<String>,
    /// Its subresources.
    pub subresources: Subresources,
    /// Whether DELETE answers the deleted object (else a `Status`), as the resource's registry
    /// in the real server does (`ReturnDeletedObject`).
    pub returns_deleted_object: bool,
    /// Whether `metadata.generation` is kept and bumped on non-status changes.
    pub has_generation: bool,
    /// Field paths a field selector may use besides `metadata.name`/`metadata.namespace`.
    pub fields: Vec<String>,
    /// The collection it is stored in, shared by every version (and group) the real server
    /// serves over one storage: `group/plural` (see `versions`), else `group/version/plural`.
    pub storage_id: Arc<str>,
    /// Built in (false: defined by a CRD).
    pub builtin: bool,
    /// Resources that are not plain stored objects (create-only reviews, read-only views).
    pub special: Special,
    /// The discovery entries the real server lists for it (itself, then its subresources),
    /// served as they are; empty for CRDs' resources, whose entries are built from the spec.
    pub discovery: Vec<Value>,
    /// The version's schema when a CRD defines the resource: what its writes are pruned,
    /// defaulted and validated against.
    pub(crate) schema: Option<Arc<crd_schema::CrSchema>>,
    /// The warning every request to this version gets when it is deprecated (the `Warning`
    /// header's text, as 1.20.2 words it).
    pub(crate) deprecation: Option<String>,
}

/// The subresources a resource has.
#[derive(Debug, Clone)]
pub struct Subresources {
    /// `/status` exists and the main resource ignores status writes.
    pub status: bool,
    /// Where `/scale` reads and writes replicas, when the resource has it.
    pub scale: Option<ScalePaths>,
    /// `/approval` (CertificateSigningRequests).
    pub approval: bool,
    /// `/token` (ServiceAccounts' TokenRequest).
    pub token: bool,
    /// Every subresource's name (`status`, `exec`, `binding`, ...).
    pub names: Vec<String>,
}

/// The fields `/scale` maps to an `autoscaling/v1` Scale, as a CRD's `subresources.scale`
/// names them (`.spec.replicas`).
#[derive(Debug, Clone)]
pub struct ScalePaths {
    /// `specReplicasPath`.
    pub spec_replicas: String,
    /// `statusReplicasPath`.
    pub status_replicas: String,
    /// `labelSelectorPath`: a string field (custom resources).
    pub label_selector: Option<String>,
    /// A `metav1.LabelSelector` the Scale's selector is serialized from (built-in workloads).
    pub label_selector_object: Option<String>,
}

/// What a resource is when it is not a plain stored object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Special {
    /// Stored objects with every verb.
    None,
    /// `authentication.k8s.io/v1` TokenReview: create only, nothing stored.
    TokenReview,
    /// `v1` ComponentStatus: a read-only view of the control plane's health.
    ComponentStatus,
    /// `authorization.k8s.io` access and rules reviews: answered by an authorizer that allows
    /// everything, nothing stored.
    AccessReview,
    /// `v1` Binding: create only, assigns a pod to a node.
    Binding,
}

impl Subresources {
    /// Whether the subresource `name` exists.
    pub fn has(&self, name: &str) -> bool {
        self.names.iter().any(|n| n == name)
    }
}

impl ResourceInfo {
    /// The list kind, e.g. `ConfigMapList`.
    pub fn list_kind(&self) -> String {
        format!("{}List", self.api.kind)
    }

    /// Whether a field selector may name `field`.
    pub fn supports_field(&self, field: &str) -> bool {
        field == "metadata.name"
            || field == "metadata.namespace"
            || self.fields.iter().any(|f| f == field)
    }
}

/// The table of served resources, keyed by `(group, version, plural)`; CRDs add and remove rows.
#[derive(Debug)]
pub(crate) struct ResourceTable {
    rows: RwLock<BTreeMap<(String, String, String), Arc<ResourceInfo>>>,
}

/// A row's key.
fn key(r: &ResourceInfo) -> (String, String, String) {
    (
        r.api.group.clone(),
        r.api.version.clone(),
        r.api.plural.clone(),
    )
}

impl ResourceTable {
    pub(crate) fn new() -> Self {
        let rows = builtin::builtins()
            .into_iter()
            .map(|r| (key(&r), Arc::new(r)))
            .collect();
        ResourceTable {
            rows: RwLock::new(rows),
        }
    }

    /// The resource served at `group/version/plural`.
    pub(crate) fn get(
        &self,
        group: &str,
        version: &str,
        plural: &str,
    ) -> Option<Arc<ResourceInfo>> {
        self.rows
            .read()
            .get(&(group.to_string(), version.to_string(), plural.to_string()))
            .cloned()
    }

    /// `v1` namespaces, which the server itself reads (always served).
    pub(crate) fn namespaces(&self) -> Arc<ResourceInfo> {
        self.get("", "v1", "namespaces")
            .expect("namespaces is built in")
    }

    /// `apiextensions.k8s.io/v1` CustomResourceDefinitions, which the server itself reads
    /// (always served).
    pub(crate) fn crds(&self) -> Arc<ResourceInfo> {
        self.get("apiextensions.k8s.io", "v1", "customresourcedefinitions")
            .expect("customresourcedefinitions is built in")
    }

    /// A built-in resource by plural (core group first); used by the binary's `--seed`.
    pub(crate) fn by_plural(&self, plural: &str) -> Option<Arc<ResourceInfo>> {
        self.rows
            .read()
            .values()
            .find(|r| r.api.plural == plural)
            .cloned()
    }

    /// The resource serving `kind` in `apiVersion` (`v1`, `group/version`).
    pub(crate) fn by_kind(&self, api_version: &str, kind: &str) -> Option<Arc<ResourceInfo>> {
        self.rows
            .read()
            .values()
            .find(|r| r.api.api_version() == api_version && r.api.kind == kind)
            .cloned()
    }

    /// Every served resource, ordered by group, version, plural.
    pub(crate) fn all(&self) -> Vec<Arc<ResourceInfo>> {
        self.rows.read().values().cloned().collect()
    }

    /// Starts serving the resources a CRD defines (every served version).
    pub(crate) fn add_crd(&self, crd: &Value) {
        let infos = crd::resources(crd);
        let mut rows = self.rows.write();
        for r in infos {
            rows.insert(key(&r), Arc::new(r));
        }
    }

    /// Serves an updated CRD's resources as it now defines them (versions, schemas, storage
    /// version); their stored objects stay.
    pub(crate) fn update_crd(&self, old: &Value, new: &Value) {
        let infos = crd::resources(new);
        let mut rows = self.rows.write();
        for r in crd::resources(old) {
            rows.remove(&key(&r));
        }
        for r in infos {
            rows.insert(key(&r), Arc::new(r));
        }
    }

    /// Stops serving a CRD's resources; returns their storage ids.
    pub(crate) fn remove_crd(&self, crd: &Value) -> Vec<Arc<str>> {
        let mut rows = self.rows.write();
        crd::resources(crd)
            .iter()
            .filter_map(|r| rows.remove(&key(r)))
            .map(|old| old.storage_id.clone())
            .collect()
    }
}
