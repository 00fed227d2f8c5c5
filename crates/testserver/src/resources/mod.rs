//! The resources the server serves: the built-in table and the ones CRDs add at runtime.

use std::collections::BTreeMap;
use std::sync::Arc;

use kcache_core::ApiResource;
use parking_lot::RwLock;
use serde_json::Value;

mod cluster;

pub(crate) use cluster::Special;

/// Everything the server knows about one served resource.
#[derive(Debug, Clone)]
pub struct ResourceInfo {
    /// Group, version, kind, plural, scope.
    pub api: ApiResource,
    /// Singular name (discovery).
    pub singular: String,
    /// Short names kubectl accepts (discovery).
    pub short_names: Vec<String>,
    /// Whether `/status` exists and the main resource ignores status writes.
    pub has_status: bool,
    /// Whether `metadata.generation` is kept and bumped on non-status changes.
    pub has_generation: bool,
    /// Field paths a field selector may use besides `metadata.name`/`metadata.namespace`.
    pub fields: Vec<String>,
    /// Storage identity shared by every version of the resource: `group/plural`.
    pub storage_id: Arc<str>,
    /// Built in (false: defined by a CRD).
    pub builtin: bool,
    /// Where `/scale` reads and writes replicas, when the resource has it.
    pub scale: Option<ScalePaths>,
    /// Resources that are not plain stored objects (create-only reviews, read-only views).
    pub special: Special,
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

impl ScalePaths {
    fn from_crd(v: &Value) -> Option<ScalePaths> {
        Some(ScalePaths {
            spec_replicas: v["specReplicasPath"].as_str()?.to_string(),
            status_replicas: v["statusReplicasPath"].as_str()?.to_string(),
            label_selector: v["labelSelectorPath"].as_str().map(str::to_string),
            label_selector_object: None,
        })
    }
}

impl ResourceInfo {
    fn builtin(
        group: &str,
        kind: &str,
        plural: &str,
        namespaced: bool,
        short: &[&str],
        (has_status, has_generation): (bool, bool),
        fields: &[&str],
    ) -> Self {
        ResourceInfo {
            api: ApiResource {
                group: group.into(),
                version: "v1".into(),
                kind: kind.into(),
                plural: plural.into(),
                namespaced,
            },
            singular: kind.to_lowercase(),
            short_names: short.iter().map(|s| s.to_string()).collect(),
            has_status,
            has_generation,
            fields: fields.iter().map(|s| s.to_string()).collect(),
            storage_id: format!("{group}/{plural}").into(),
            builtin: true,
            scale: None,
            special: Special::None,
        }
    }

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

/// The built-in resources (those the issue names), with the field selectors the real server
/// supports for them.
fn builtins() -> Vec<ResourceInfo> {
    let b = ResourceInfo::builtin;
    vec![
        b(
            "",
            "Namespace",
            "namespaces",
            false,
            &["ns"],
            (true, false),
            &["status.phase"],
        ),
        b(
            "",
            "ConfigMap",
            "configmaps",
            true,
            &["cm"],
            (false, false),
            &[],
        ),
        b(
            "",
            "Secret",
            "secrets",
            true,
            &[],
            (false, false),
            &["type"],
        ),
        b(
            "",
            "Pod",
            "pods",
            true,
            &["po"],
            (true, false),
            &[
                "spec.nodeName",
                "spec.restartPolicy",
                "spec.schedulerName",
                "spec.serviceAccountName",
                "status.phase",
                "status.podIP",
                "status.nominatedNodeName",
            ],
        ),
        b(
            "",
            "Service",
            "services",
            true,
            &["svc"],
            (true, false),
            &[],
        ),
        b(
            "",
            "Event",
            "events",
            true,
            &["ev"],
            (false, false),
            &[
                "involvedObject.kind",
                "involvedObject.namespace",
                "involvedObject.name",
                "involvedObject.uid",
                "involvedObject.apiVersion",
                "involvedObject.resourceVersion",
                "involvedObject.fieldPath",
                "reason",
                "type",
            ],
        ),
        // The real server maps these onto core/v1 Event fields (pkg/apis/events/v1
        // conversion.go); here the two APIs keep separate objects.
        b(
            "events.k8s.io",
            "Event",
            "events",
            true,
            &[],
            (false, false),
            &[
                "regarding.kind",
                "regarding.namespace",
                "regarding.name",
                "regarding.uid",
                "regarding.apiVersion",
                "regarding.resourceVersion",
                "regarding.fieldPath",
                "reportingController",
                "reason",
                "type",
            ],
        ),
        b(
            "coordination.k8s.io",
            "Lease",
            "leases",
            true,
            &[],
            (false, false),
            &[],
        ),
        b(
            "apps",
            "Deployment",
            "deployments",
            true,
            &["deploy"],
            (true, true),
            &[],
        ),
        b(
            "apiextensions.k8s.io",
            "CustomResourceDefinition",
            "customresourcedefinitions",
            false,
            &["crd", "crds"],
            (true, true),
            &[],
        ),
    ]
    .into_iter()
    .chain(cluster::builtins())
    .map(cluster::with_scale)
    .collect()
}

/// The table of served resources, keyed by `(group, version, plural)`; CRDs add and remove rows.
#[derive(Debug)]
pub(crate) struct ResourceTable {
    rows: RwLock<BTreeMap<(String, String, String), Arc<ResourceInfo>>>,
}

impl ResourceTable {
    pub(crate) fn new() -> Self {
        let rows = builtins()
            .into_iter()
            .map(|r| {
                (
                    (
                        r.api.group.clone(),
                        r.api.version.clone(),
                        r.api.plural.clone(),
                    ),
                    Arc::new(r),
                )
            })
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
        let infos = crd_resources(crd);
        let mut rows = self.rows.write();
        for r in infos {
            rows.insert(
                (
                    r.api.group.clone(),
                    r.api.version.clone(),
                    r.api.plural.clone(),
                ),
                Arc::new(r),
            );
        }
    }

    /// Stops serving a CRD's resources; returns their storage ids.
    pub(crate) fn remove_crd(&self, crd: &Value) -> Vec<Arc<str>> {
        let mut rows = self.rows.write();
        let mut ids = Vec::new();
        for r in crd_resources(crd) {
            if let Some(old) = rows.remove(&(
                r.api.group.clone(),
                r.api.version.clone(),
                r.api.plural.clone(),
            )) {
                ids.push(old.storage_id.clone());
            }
        }
        ids
    }
}

/// The resources (one per served version) a CustomResourceDefinition object describes.
fn crd_resources(crd: &Value) -> Vec<ResourceInfo> {
    let spec = &crd["spec"];
    let group = spec["group"].as_str().unwrap_or_default();
    let names = &spec["names"];
    let plural = names["plural"].as_str().unwrap_or_default();
    let kind = names["kind"].as_str().unwrap_or_default();
    let singular = names["singular"]
        .as_str()
        .map(str::to_string)
        .unwrap_or_else(|| kind.to_lowercase());
    let short_names: Vec<String> = names["shortNames"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|s| s.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    let namespaced = spec["scope"].as_str() != Some("Cluster");
    let versions = spec["versions"].as_array().cloned().unwrap_or_default();
    versions
        .iter()
        .filter(|v| v["served"].as_bool().unwrap_or(true))
        .filter_map(|v| {
            let version = v["name"].as_str()?;
            Some(ResourceInfo {
                api: ApiResource {
                    group: group.into(),
                    version: version.into(),
                    kind: kind.into(),
                    plural: plural.into(),
                    namespaced,
                },
                singular: singular.clone(),
                short_names: short_names.clone(),
                has_status: v["subresources"]["status"].is_object(),
                has_generation: true,
                fields: Vec::new(),
                storage_id: format!("{group}/{plural}").into(),
                builtin: false,
                scale: ScalePaths::from_crd(&v["subresources"]["scale"]),
                special: Special::None,
            })
        })
        .collect()
}
