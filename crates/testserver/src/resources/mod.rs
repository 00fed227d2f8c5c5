//! The resources the server serves: the built-in table ([`builtin`]), and the ones CRDs add
//! and remove at runtime ([`crd`]), behind one [`ResourceTable`].

use std::collections::BTreeMap;
use std::sync::Arc;

use kcache_core::ApiResource;
use parking_lot::RwLock;
use serde_json::Value;

mod builtin;
mod crd;

/// Everything the server knows about one served resource.
#[derive(Debug, Clone)]
pub struct ResourceInfo {
    /// Group, version, kind, plural, scope.
    pub api: ApiResource,
    /// Singular name (discovery).
    pub singular: String,
    /// The verbs discovery lists.
    pub verbs: &'static [&'static str],
    /// Short names kubectl accepts (discovery).
    pub short_names: Vec<String>,
    /// Categories (discovery; `kubectl get all` reads them).
    pub categories: Vec<String>,
    /// Its subresources.
    pub subresources: Subresources,
    /// Whether `metadata.generation` is kept and bumped on non-status changes.
    pub has_generation: bool,
    /// Field paths a field selector may use besides `metadata.name`/`metadata.namespace`.
    pub fields: Vec<String>,
    /// Storage identity shared by every version of the resource: `group/plural`.
    pub storage_id: Arc<str>,
    /// Built in (false: defined by a CRD).
    pub builtin: bool,
    /// Resources that are not plain stored objects (create-only reviews, read-only views).
    pub special: Special,
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
    /// `apiregistration.k8s.io/v1` APIService: a read-only view, one per served group/version.
    ApiService,
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

impl From<&builtin::BuiltinResource> for ResourceInfo {
    fn from(b: &builtin::BuiltinResource) -> Self {
        let strings = |s: &[&str]| s.iter().map(|s| s.to_string()).collect();
        let scale = b.subresources.scale.then(|| ScalePaths {
            spec_replicas: ".spec.replicas".into(),
            status_replicas: ".status.replicas".into(),
            label_selector: None,
            label_selector_object: Some(".spec.selector".into()),
        });
        ResourceInfo {
            api: ApiResource {
                group: b.group.into(),
                version: b.version.into(),
                kind: b.kind.into(),
                plural: b.plural.into(),
                namespaced: b.namespaced,
            },
            singular: b.singular.into(),
            verbs: b.verbs,
            short_names: strings(b.short_names),
            categories: strings(b.categories),
            subresources: Subresources {
                status: b.subresources.status,
                scale,
                approval: b.subresources.approval,
                token: b.subresources.token,
            },
            has_generation: b.generation,
            fields: strings(b.field_selectors),
            storage_id: format!("{}/{}", b.group, b.plural).into(),
            builtin: true,
            special: b.special,
        }
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
        let rows = builtin::BUILTINS
            .iter()
            .map(ResourceInfo::from)
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

    /// A built-in resource by plural (core group first); used by the binary's `--seed`.
    pub(crate) fn by_plural(&self, plural: &str) -> Option<Arc<ResourceInfo>> {
        self.rows
            .read()
            .values()
            .find(|r| r.api.plural == plural)
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
