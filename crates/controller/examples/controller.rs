//! A complete controller: every `Greeting` (a small custom resource, `example.kcache.dev/v1`)
//! labelled `app=kcache-controller-example` gets a ConfigMap `<name>-greeting` holding its
//! message, owned by the Greeting (so changing or deleting the ConfigMap reconciles the Greeting
//! again), and a `Ready` condition in its status, written through the status subresource with
//! apimachinery's `meta.SetStatusCondition` rules. A finalizer makes the controller delete the
//! ConfigMap itself before its Greeting goes (what a controller does for anything the garbage
//! collector cannot see).
//!
//! `cargo run --release --example controller` runs it on the
//! embedded kcache-testserver: it registers the Greeting CRD, creates three Greetings, waits until
//! each has its ConfigMap and is Ready, deletes one ConfigMap to show the controller putting it
//! back, changes one message, deletes one Greeting to show the cleanup, prints what it reconciled
//! and exits. With `--kubeconfig F` it registers the CRD in that cluster (unless present) and runs
//! there, over every namespace, until Ctrl-C.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, ObjectMeta};
use kcache_controller::conditions::{find_status_condition, new_condition, patch_condition};
use kcache_controller::finalizer::{finalizer, Error, Event};
use kcache_controller::{apply, controlled_child, Action, Controller, ControllerError};
use kcache_controller::{DefaultErrorPolicy, Predicate, ReconcileError, ReconcileRequest};
use kcache_core::{ignore_not_found, Object, Resource};
use kcache_transport::{Api, Client, Config, DeleteParams, Patch, PatchParams, PostParams};
use parking_lot::Mutex;
use serde::{Deserialize, Serialize};
use serde_json::json;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

/// What reconcile needs: a client, and the demo's log of what it reconciled.
pub struct Ctx {
    client: Client,
    log: Log,
}

// ---- the controller: a reconcile function and the builder ----

/// Keeps the Greeting's ConfigMap holding its message, owned by it, and its `Ready` condition;
/// before the Greeting goes, deletes the ConfigMap. The helpers record their writes, so the next
/// reconcile reads them from the cache.
async fn reconcile(g: Arc<Greeting>, ctx: Arc<Ctx>) -> Result<Action, Error<ReconcileError>> {
    let key = ReconcileRequest::of(&*g);
    ctx.log.record(key.key());
    let greetings = Api::<Greeting>::namespaced(ctx.client.clone(), key.namespace());
    let configmaps = Api::<ConfigMap>::namespaced(ctx.client.clone(), key.namespace());
    let name = format!("{}-greeting", g.name());
    finalizer(&greetings, "example.kcache.dev/cleanup", g, |event| async {
        // Cleanup (the Greeting is being deleted) first; then Apply, the Greeting as it lives.
        let Event::Apply(g) = event else {
            ignore_not_found(configmaps.delete(&name, &Default::default()).await)?;
            ctx.log.record(&format!("{key} cleaned up"));
            return Ok(Action::await_change());
        };
        let mut cm: ConfigMap = controlled_child(&*g, name)?;
        cm.data = Some(BTreeMap::from([("message".into(), g.spec.message.clone())]));
        apply(&configmaps, &cm, "kcache-controller-example", true).await?;
        let ready = new_condition("Ready", "True", "ConfigMapApplied", "", g.generation());
        patch_condition(&greetings, &*g, ready).await?;
        Ok(Action::requeue_after(Duration::from_secs(300)))
    })
    .await
}

/// Runs the controller until `stop` fires; a failed reconcile is logged (tracing) and retried
/// with client-go's per-key backoff.
pub async fn run(ctx: Arc<Ctx>, stop: CancellationToken) -> Result<(), ControllerError> {
    Controller::new::<Greeting>(&ctx.client)
        .predicate(Predicate::has_label("app", "kcache-controller-example"))
        .owns::<ConfigMap>()
        .concurrency(2)
        .shutdown_on(stop)
        .run(reconcile, DefaultErrorPolicy, ctx)
        .await
}

// ---- the custom resource ----

/// A `Greeting`: "keep a ConfigMap holding `spec.message`".
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Greeting {
    /// `example.kcache.dev/v1`.
    pub api_version: String,
    /// `Greeting`.
    pub kind: String,
    /// Standard object metadata.
    pub metadata: ObjectMeta,
    /// What the user asked for.
    pub spec: GreetingSpec,
    /// What the controller observed; written only through the `status` subresource.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<GreetingStatus>,
}

/// `Greeting.spec`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct GreetingSpec {
    /// What the ConfigMap holds.
    pub message: String,
}

/// `Greeting.status`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct GreetingStatus {
    /// `Ready`: the ConfigMap holds the message of `observedGeneration`.
    #[serde(default)]
    pub conditions: Vec<Condition>,
}

impl Resource for Greeting {
    const GROUP: &'static str = "example.kcache.dev";
    const VERSION: &'static str = "v1";
    const KIND: &'static str = "Greeting";
    const PLURAL: &'static str = "greetings";
    const NAMESPACED: bool = true;
}

kcache_core::impl_object_for_metadata!(Greeting);

impl Greeting {
    /// A new Greeting, labelled for this controller or not.
    pub fn new(name: &str, message: &str, labelled: bool) -> Greeting {
        let labels = labelled.then(|| {
            BTreeMap::from([("app".to_string(), "kcache-controller-example".to_string())])
        });
        Greeting {
            api_version: Greeting::api_resource().api_version(),
            kind: Greeting::KIND.into(),
            metadata: ObjectMeta {
                name: Some(name.into()),
                labels,
                ..Default::default()
            },
            spec: GreetingSpec {
                message: message.into(),
            },
            status: None,
        }
    }

    /// Its `Ready` condition, if any.
    pub fn ready(&self) -> Option<&Condition> {
        find_status_condition(&self.status.as_ref()?.conditions, "Ready")
    }
}

/// Registers the Greeting CRD unless it exists, and waits until it is served.
pub async fn ensure_crd(client: &Client) -> Result<(), kcache_core::Error> {
    let crd: CustomResourceDefinition = serde_json::from_value(json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "greetings.example.kcache.dev"},
        "spec": {
            "group": Greeting::GROUP,
            "scope": "Namespaced",
            "names": {"kind": "Greeting", "plural": "greetings", "singular": "greeting",
                      "listKind": "GreetingList"},
            "versions": [{
                "name": Greeting::VERSION, "served": true, "storage": true,
                "subresources": {"status": {}},
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "properties": {"message": {"type": "string"}}},
                    "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                }}},
            }],
        },
    }))
    .map_err(|e| kcache_core::Error::decode("the Greeting CRD", e))?;
    let crds = Api::<CustomResourceDefinition>::all(client.clone());
    match crds.create(&PostParams::default(), &crd).await {
        Err(e) if e.status().is_none_or(|s| s.reason != "AlreadyExists") => return Err(e),
        _ => {}
    }
    for _ in 0..100 {
        let crd = crds.get("greetings.example.kcache.dev").await?;
        let conditions = crd.status.and_then(|s| s.conditions).unwrap_or_default();
        if conditions
            .iter()
            .any(|c| c.type_ == "Established" && c.status == "True")
        {
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Err(kcache_core::Error::Request(
        "the Greeting CRD was not established in 10 s".into(),
    ))
}

// ---- the demo around it ----

/// What the controller reconciled, for the demo to wait on.
#[derive(Default)]
pub struct Log {
    seen: Mutex<BTreeMap<String, usize>>,
    progress: Notify,
}

impl Log {
    fn record(&self, key: &str) {
        println!("reconciled {key}");
        *self.seen.lock().entry(key.to_string()).or_default() += 1;
        self.progress.notify_waiters();
    }

    async fn wait_for(&self, done: impl Fn(&BTreeMap<String, usize>) -> bool) {
        loop {
            let progress = self.progress.notified();
            if done(&self.seen.lock()) {
                return;
            }
            progress.await;
        }
    }

    /// Reconciles so far, per Greeting.
    pub fn reconciled(&self) -> BTreeMap<String, usize> {
        self.seen.lock().clone()
    }

    /// Waits (reconcile by reconcile of `key`) until `done` holds.
    async fn wait_until<F: std::future::Future<Output = bool>>(
        &self,
        key: &str,
        done: impl Fn() -> F,
    ) {
        loop {
            let before = self.reconciled().get(key).copied().unwrap_or(0);
            if done().await {
                return;
            }
            self.wait_for(|log| log.get(key).copied().unwrap_or(0) > before)
                .await;
        }
    }
}

/// What the demo saw.
#[derive(Debug)]
pub struct Summary {
    /// The demo's namespace (a full cluster's Greetings elsewhere are reconciled too).
    pub namespace: String,
    /// Reconciles per Greeting.
    pub reconciled: BTreeMap<String, usize>,
    /// The controller's ConfigMaps at the end, by name: their owner's name and their message.
    pub config_maps: BTreeMap<String, (String, String)>,
    /// Each Greeting's `Ready` condition at the end: status, reason, observedGeneration, and
    /// the Greeting's generation.
    pub ready: BTreeMap<String, (String, String, Option<i64>, Option<i64>)>,
    /// Whether alpha's `Ready` kept its lastTransitionTime when its message changed (the
    /// condition's status did not change, only its observedGeneration).
    pub alpha_transition_kept: bool,
}

/// The demo on the embedded server: three Greetings (and one unlabelled, ignored), their
/// ConfigMaps and conditions, one ConfigMap deleted and put back, one message changed.
pub async fn demo() -> Summary {
    let cluster = kcache_testing::TestCluster::start()
        .await
        .expect("the embedded server starts");
    let ns = cluster
        .create_namespace("example")
        .await
        .expect("a namespace");
    let client =
        Client::new(Config::from_kubeconfig_file(cluster.kubeconfig_path()).unwrap()).unwrap();
    ensure_crd(&client).await.expect("the CRD is registered");
    let greetings = Api::<Greeting>::namespaced(client.clone(), &ns);
    for (name, labelled) in [
        ("alpha", true),
        ("beta", true),
        ("gamma", true),
        ("ignored", false),
    ] {
        let g = Greeting::new(name, &format!("hello from {name}"), labelled);
        greetings
            .create(&PostParams::default(), &g)
            .await
            .expect("created");
    }
    let ctx = Arc::new(Ctx {
        client: client.clone(),
        log: Log::default(),
    });
    let stop = CancellationToken::new();
    let task = tokio::spawn(run(ctx.clone(), stop.clone()));
    let log = &ctx.log;
    let key = |n: &str| format!("{ns}/{n}");
    for name in ["alpha", "beta", "gamma"] {
        log.wait_until(&key(name), || async {
            greetings.get(name).await.is_ok_and(|g| g.ready().is_some())
        })
        .await;
    }

    println!("converged; deleting beta-greeting: the controller puts it back");
    let configmaps = Api::<ConfigMap>::namespaced(client.clone(), &ns);
    configmaps
        .delete("beta-greeting", &DeleteParams::default())
        .await
        .expect("deleted");
    log.wait_until(&key("beta"), || async {
        configmaps.get("beta-greeting").await.is_ok()
    })
    .await;

    println!("changing alpha's message: its ConfigMap follows, Ready observes generation 2");
    let first_transition = greetings
        .get("alpha")
        .await
        .expect("alpha")
        .ready()
        .cloned();
    let patch = Patch::Merge(json!({"spec": {"message": "hello again"}}));
    greetings
        .patch("alpha", &PatchParams::default(), &patch)
        .await
        .expect("patched");
    log.wait_until(&key("alpha"), || async {
        let g = greetings.get("alpha").await.expect("alpha");
        g.ready().and_then(|c| c.observed_generation) == g.generation()
    })
    .await;
    let alpha = greetings.get("alpha").await.expect("alpha");
    let alpha_transition_kept = first_transition.zip(alpha.ready()).is_some_and(|(a, b)| {
        a.last_transition_time == b.last_transition_time
            && a.observed_generation != b.observed_generation
    });

    println!("deleting gamma: the finalizer lets the controller delete its ConfigMap first");
    greetings
        .delete("gamma", &DeleteParams::default())
        .await
        .expect("deleted");
    let cleaned = format!("{} cleaned up", key("gamma"));
    log.wait_for(|seen| seen.contains_key(&cleaned)).await;
    // The finalizer goes right after the cleanup, and with it the Greeting.
    while greetings.get("gamma").await.is_ok() {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    stop.cancel();
    task.await
        .expect("the controller returns")
        .expect("the controller ran");

    let list = configmaps.list(&Default::default()).await.expect("listed");
    let config_maps = list
        .items
        .iter()
        .filter_map(|cm| {
            let owner = cm.controller_owner()?.name.to_string();
            let message = cm.data.as_ref()?.get("message")?.clone();
            Some((cm.name().to_string(), (owner, message)))
        })
        .collect();
    let list = greetings.list(&Default::default()).await.expect("listed");
    let ready = list
        .items
        .iter()
        .filter_map(|g| {
            let c = g.ready()?;
            let seen = (c.status.clone(), c.reason.clone(), c.observed_generation);
            Some((
                g.name().to_string(),
                (seen.0, seen.1, seen.2, g.generation()),
            ))
        })
        .collect();
    Summary {
        namespace: ns,
        reconciled: log.reconciled(),
        config_maps,
        ready,
        alpha_transition_kept,
    }
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    match args
        .iter()
        .position(|a| a == "--kubeconfig")
        .and_then(|i| args.get(i + 1))
    {
        Some(path) => {
            let config = Config::from_kubeconfig_file(path).expect("a readable kubeconfig");
            let client = Client::new(config).expect("a client");
            ensure_crd(&client).await.expect("the Greeting CRD");
            let stop = CancellationToken::new();
            let s = stop.clone();
            tokio::spawn(async move {
                let _ = tokio::signal::ctrl_c().await;
                s.cancel();
            });
            let log = Log::default();
            if let Err(e) = run(Arc::new(Ctx { client, log }), stop).await {
                eprintln!("the controller did not run: {e}");
            }
        }
        None => println!("{:#?}", demo().await),
    }
}
