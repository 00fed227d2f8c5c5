//! A custom resource as kube-derive users write one — serde structs, k8s-openapi's
//! `ObjectMeta`, a spec whose OpenAPI schema `schemars` derives — made a kcache object with one
//! `Resource` impl and `impl_object_for_metadata!`. Its CustomResourceDefinition is built from
//! the derived schema (no hand-written JSON schema), then printed, or applied to the embedded
//! test server (or the cluster `KCACHE_TEST_KUBECONFIG` names) where CronTabs are created and
//! read back through a typed informer.
//!
//! ```text
//! cargo run --example crd                # apply, create CronTabs, list them through an informer
//! cargo run --example crd -- --print     # print the CRD as JSON (`| kubectl apply -f -`)
//! ```

use std::time::Duration;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kcache::core::{CacheReader, Object, Resource};
use kcache::informer::{FactoryOptions, SharedInformerFactory};
use kcache::transport::{Api, Client, PostParams};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

/// `CronTab`, the custom resource of Kubernetes' CRD walkthrough (`stable.example.com/v1`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CronTab {
    /// `stable.example.com/v1`.
    pub api_version: String,
    /// `CronTab`.
    pub kind: String,
    /// k8s-openapi's `ObjectMeta`, as kube-derive's types carry it.
    pub metadata: ObjectMeta,
    /// What the user asked for.
    pub spec: CronTabSpec,
    /// What a controller observed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<CronTabStatus>,
}

/// `CronTab.spec`; its schema is the CRD's `spec` schema.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CronTabSpec {
    /// When to run, in cron syntax.
    pub cron_spec: String,
    /// The image to run.
    pub image: String,
    /// How many pods to run at once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 10))]
    pub replicas: Option<i32>,
}

/// `CronTab.status`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CronTabStatus {
    /// When the job last ran (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_schedule_time: Option<String>,
}

impl Resource for CronTab {
    const GROUP: &'static str = "stable.example.com";
    const VERSION: &'static str = "v1";
    const KIND: &'static str = "CronTab";
    const PLURAL: &'static str = "crontabs";
    const NAMESPACED: bool = true;
}

kcache::core::impl_object_for_metadata!(CronTab);

impl CronTab {
    /// A new CronTab to create in `namespace`.
    pub fn new(namespace: &str, name: &str, spec: CronTabSpec) -> CronTab {
        CronTab {
            api_version: CronTab::api_resource().api_version(),
            kind: CronTab::KIND.into(),
            metadata: ObjectMeta {
                name: Some(name.into()),
                namespace: Some(namespace.into()),
                ..ObjectMeta::default()
            },
            spec,
            status: None,
        }
    }
}

/// `T`'s OpenAPI v3 schema as a CRD takes it: every subschema inline (a structural schema has
/// no `$ref`), `Option`s `nullable`, no `$schema`.
pub fn structural_schema<T: JsonSchema>() -> Value {
    let generator = schemars::generate::SchemaSettings::openapi3()
        .with(|s| {
            s.inline_subschemas = true;
            s.meta_schema = None;
        })
        .into_generator();
    let mut schema = Value::from(generator.into_root_schema_for::<T>());
    if let Some(root) = schema.as_object_mut() {
        root.remove("title");
    }
    schema
}

/// `crontabs.stable.example.com`, its schema derived from [`CronTabSpec`] and
/// [`CronTabStatus`], with the `status` subresource.
pub fn crontab_crd() -> CustomResourceDefinition {
    serde_json::from_value(json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("{}.{}", CronTab::PLURAL, CronTab::GROUP)},
        "spec": {
            "group": CronTab::GROUP,
            "scope": "Namespaced",
            "names": {
                "kind": CronTab::KIND,
                "plural": CronTab::PLURAL,
                "singular": "crontab",
                "listKind": "CronTabList",
                "shortNames": ["ct"],
            },
            "versions": [{
                "name": CronTab::VERSION,
                "served": true,
                "storage": true,
                "subresources": {"status": {}},
                "schema": {"openAPIV3Schema": {
                    "type": "object",
                    "required": ["spec"],
                    "properties": {
                        "spec": structural_schema::<CronTabSpec>(),
                        "status": structural_schema::<CronTabStatus>(),
                    },
                }},
            }],
        },
    }))
    .expect("the CRD matches k8s-openapi's CustomResourceDefinition")
}

/// Creates the CRD unless it exists and waits until it is `Established` (only then are
/// CronTabs served).
pub async fn apply_crd(client: &Client) -> Result<(), String> {
    let api: Api<CustomResourceDefinition> = Api::all(client.clone());
    let crd = crontab_crd();
    let name = crd.metadata.name.clone().unwrap_or_default();
    match api.create(&PostParams::default(), &crd).await {
        Ok(_) => {}
        Err(e) if e.status().is_some_and(|s| s.reason == "AlreadyExists") => {}
        Err(e) => return Err(format!("creating {name}: {e}")),
    }
    let established = |crd: &CustomResourceDefinition| {
        crd.status
            .as_ref()
            .and_then(|s| s.conditions.as_ref())
            .is_some_and(|c| {
                c.iter()
                    .any(|c| c.type_ == "Established" && c.status == "True")
            })
    };
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        if api.get(&name).await.is_ok_and(|crd| established(&crd)) {
            return Ok(());
        }
        if tokio::time::Instant::now() > deadline {
            return Err(format!("{name} not Established after 20 s"));
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The CronTabs [`demo`] creates.
pub fn demo_crontabs(namespace: &str) -> Vec<CronTab> {
    let spec = |cron: &str, replicas| CronTabSpec {
        cron_spec: cron.into(),
        image: "my-awesome-cron-image".into(),
        replicas,
    };
    vec![
        CronTab::new(namespace, "every-minute", spec("* * * * */5", Some(2))),
        CronTab::new(namespace, "nightly", spec("0 3 * * *", None)),
    ]
}

/// Applies the CRD, creates [`demo_crontabs`] in a fresh namespace and returns what a typed
/// informer over CronTabs holds once synced.
pub async fn demo() -> Result<Vec<CronTab>, String> {
    let cluster = kcache_testing::TestCluster::start()
        .await
        .map_err(|e| format!("test server: {e}"))?;
    let client = Client::from_kubeconfig(cluster.kubeconfig_path()).map_err(|e| e.to_string())?;
    apply_crd(&client).await?;
    let namespace = cluster
        .create_namespace("crd")
        .await
        .map_err(|e| format!("namespace: {e}"))?;
    let api: Api<CronTab> = Api::namespaced(client.clone(), &namespace);
    for crontab in demo_crontabs(&namespace) {
        api.create(&PostParams::default(), &crontab)
            .await
            .map_err(|e| format!("creating CronTab {}: {e}", crontab.name()))?;
    }
    let factory = SharedInformerFactory::new(
        client,
        FactoryOptions {
            namespace: Some(namespace),
            ..FactoryOptions::default()
        },
    );
    let informer = factory.informer::<CronTab>();
    factory.start();
    if !factory
        .wait_for_cache_sync()
        .await
        .values()
        .all(|synced| *synced)
    {
        return Err("the CronTab informer did not sync".into());
    }
    let mut cached: Vec<CronTab> = informer
        .indexer()
        .list()
        .into_iter()
        .map(|c| (*c).clone())
        .collect();
    cached.sort_by(|a, b| a.name().cmp(b.name()));
    factory.shutdown().await;
    Ok(cached)
}

#[tokio::main]
async fn main() {
    if std::env::args().any(|a| a == "--print") {
        let crd = serde_json::to_string_pretty(&crontab_crd()).expect("a CRD serializes");
        println!("{crd}");
        return;
    }
    match demo().await {
        Ok(crontabs) => {
            for c in crontabs {
                println!(
                    "{}/{}: every {:?} runs {} (replicas {:?})",
                    c.namespace().unwrap_or_default(),
                    c.name(),
                    c.spec.cron_spec,
                    c.spec.image,
                    c.spec.replicas
                );
            }
        }
        Err(e) => {
            eprintln!("crd: {e}");
            std::process::exit(1);
        }
    }
}
