//! A complete controller: every ConfigMap labelled `app=kcache-controller-example` gets a Secret
//! `<name>-copy` holding the same data, owned by the ConfigMap (so changing or deleting the Secret
//! reconciles the ConfigMap again). A finalizer makes the controller delete the copy itself before
//! its ConfigMap goes (what a controller does for anything the garbage collector cannot see).
//!
//! `cargo run -p kcache-controller --example controller` runs it on the embedded kcache-testserver:
//! it creates three ConfigMaps, waits until each has its Secret, deletes one Secret to show the
//! controller putting it back, deletes one ConfigMap to show the cleanup, prints what it
//! reconciled and exits. With `--kubeconfig F` it runs against that cluster, over every namespace,
//! until Ctrl-C.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use k8s_openapi::ByteString;
use kcache_controller::finalizer::{self, finalizer, Event};
use kcache_controller::{Action, Controller, ReconcileRequest, WriteTracker};
use kcache_informer::{FactoryOptions, SharedInformerFactory};
use kcache_transport::{Api, Client, Config, DeleteParams, Patch, PatchParams, PostParams};
use parking_lot::Mutex;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

/// What reconcile needs: a client, where to report writes, and a log for the demo.
pub struct Ctx {
    client: Client,
    writes: WriteTracker,
    log: Mutex<BTreeMap<String, usize>>,
    progress: Notify,
}

// ---- the controller: a reconcile function and the builder ----

type Error = finalizer::Error<kcache_core::Error>;

async fn reconcile(cm: Arc<ConfigMap>, ctx: Arc<Ctx>) -> Result<Action, Error> {
    let ns = cm.metadata.namespace.clone().unwrap_or_default();
    let key = format!("{ns}/{}", cm.metadata.name.as_deref().unwrap_or(""));
    let api = Api::<ConfigMap>::namespaced(ctx.client.clone(), &ns);
    let mut cleaned = false;
    let action = finalizer(&api, "example.kcache.dev/copy", cm, |event| async {
        match event {
            Event::Apply(cm) => copy(&cm, &ctx).await,
            Event::Cleanup(cm) => {
                let copy = format!("{}-copy", cm.metadata.name.as_deref().unwrap_or(""));
                let secrets = Api::<Secret>::namespaced(ctx.client.clone(), &ns);
                match secrets.delete(&copy, &DeleteParams::default()).await {
                    Err(e) if !e.is_not_found() => Err(e),
                    _ => {
                        cleaned = true;
                        Ok(Action::await_change())
                    }
                }
            }
        }
    })
    .await?;
    if cleaned {
        ctx.record(&format!("{key} cleaned up")); // and its finalizer removed: the ConfigMap goes
    }
    Ok(action)
}

/// Writes the ConfigMap's Secret (server-side apply: idempotent, and it takes the fields back).
async fn copy(cm: &ConfigMap, ctx: &Ctx) -> Result<Action, kcache_core::Error> {
    let (ns, name) = (
        cm.metadata.namespace.as_deref().unwrap_or("default"),
        cm.metadata.name.as_deref().unwrap_or(""),
    );
    let owner = OwnerReference {
        api_version: "v1".into(),
        kind: "ConfigMap".into(),
        name: name.into(),
        uid: cm.metadata.uid.clone().unwrap_or_default(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    };
    let data = cm
        .data
        .iter()
        .flatten()
        .map(|(k, v)| (k.clone(), ByteString(v.clone().into_bytes())));
    let secret = Secret {
        metadata: ObjectMeta {
            name: Some(format!("{name}-copy")),
            owner_references: Some(vec![owner]),
            ..Default::default()
        },
        data: Some(data.collect()),
        ..Default::default()
    };
    let apply = PatchParams {
        force: true,
        ..PatchParams::apply("kcache-controller-example")
    };
    let written = Api::<Secret>::namespaced(ctx.client.clone(), ns)
        .patch(&format!("{name}-copy"), &apply, &Patch::Apply(&secret))
        .await?;
    ctx.writes.wrote(&ReconcileRequest::of(cm), &written); // the next reconcile reads this write
    ctx.record(&format!("{ns}/{name}"));
    Ok(Action::requeue_after(Duration::from_secs(300)))
}

fn error_policy(cm: Arc<ConfigMap>, error: &Error, _: Arc<Ctx>) -> Action {
    eprintln!(
        "reconciling {:?} failed: {}; retrying with backoff",
        cm.metadata.name,
        kcache_core::ErrorChain(error)
    );
    Action::requeue()
}

/// Runs the controller on `client` until `stop` fires.
pub async fn run(client: Client, stop: CancellationToken, log: impl FnOnce(Arc<Ctx>)) {
    let factory = Arc::new(SharedInformerFactory::new(
        client.clone(),
        FactoryOptions::default(),
    ));
    let controller = Controller::for_::<ConfigMap>(&factory)
        .predicate(kcache_controller::Predicate::from_object(
            |cm: &ConfigMap| {
                cm.metadata
                    .labels
                    .as_ref()
                    .and_then(|l| l.get("app"))
                    .map(String::as_str)
                    == Some("kcache-controller-example")
            },
        ))
        .owns::<Secret>()
        .concurrency(2)
        .shutdown_on(stop);
    let ctx = Arc::new(Ctx {
        client,
        writes: controller.writes(),
        log: Mutex::default(),
        progress: Notify::new(),
    });
    log(ctx.clone());
    if let Err(e) = controller.run(reconcile, error_policy, ctx).await {
        eprintln!("the controller did not run: {e}");
    }
    factory.shutdown().await;
}

// ---- the demo around it ----

impl Ctx {
    fn record(&self, key: &str) {
        println!("reconciled {key}");
        *self.log.lock().entry(key.to_string()).or_default() += 1;
        self.progress.notify_waiters();
    }

    async fn wait_for(&self, done: impl Fn(&BTreeMap<String, usize>) -> bool) {
        loop {
            let progress = self.progress.notified();
            if done(&self.log.lock()) {
                return;
            }
            progress.await;
        }
    }

    /// Reconciles so far, per ConfigMap.
    pub fn reconciled(&self) -> BTreeMap<String, usize> {
        self.log.lock().clone()
    }
}

/// What the demo saw.
#[derive(Debug)]
pub struct Summary {
    /// The demo's namespace (a full cluster's ConfigMaps elsewhere are reconciled too).
    pub namespace: String,
    /// Reconciles per ConfigMap.
    pub reconciled: BTreeMap<String, usize>,
    /// The Secrets at the end, by name, with their owner's name.
    pub secrets: BTreeMap<String, String>,
    /// Whether the deleted ConfigMap was gone once its cleanup had run.
    pub gamma_gone: bool,
}

/// The demo on the embedded server: three ConfigMaps (and one unlabelled, ignored), their
/// Secrets, one Secret deleted and put back.
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
    let cms = Api::<ConfigMap>::namespaced(client.clone(), &ns);
    for (name, labelled) in [
        ("alpha", true),
        ("beta", true),
        ("gamma", true),
        ("ignored", false),
    ] {
        let labels = labelled.then(|| {
            BTreeMap::from([("app".to_string(), "kcache-controller-example".to_string())])
        });
        let cm = ConfigMap {
            metadata: ObjectMeta {
                name: Some(name.into()),
                labels,
                ..Default::default()
            },
            data: Some(BTreeMap::from([(
                "greeting".to_string(),
                format!("hello from {name}"),
            )])),
            ..Default::default()
        };
        cms.create(&PostParams::default(), &cm)
            .await
            .expect("created");
    }
    let stop = CancellationToken::new();
    let (tx, rx) = tokio::sync::oneshot::channel();
    let task = tokio::spawn(run(client.clone(), stop.clone(), move |ctx| {
        drop(tx.send(ctx))
    }));
    let ctx = rx.await.expect("the controller starts");
    let key = |n: &str| format!("{ns}/{n}");
    let three = [key("alpha"), key("beta"), key("gamma")];
    ctx.wait_for(|log| three.iter().all(|k| log.contains_key(k)))
        .await;
    println!("converged; deleting beta-copy: the controller puts it back");
    let secrets = Api::<Secret>::namespaced(client.clone(), &ns);
    secrets
        .delete("beta-copy", &DeleteParams::default())
        .await
        .expect("deleted");
    loop {
        let before = ctx.reconciled()[&key("beta")];
        if secrets.get("beta-copy").await.is_ok() {
            break;
        }
        ctx.wait_for(|log| log[&key("beta")] > before).await;
    }
    println!("deleting gamma: the finalizer lets the controller delete its copy first");
    cms.delete("gamma", &DeleteParams::default())
        .await
        .expect("deleted");
    let cleaned = format!("{} cleaned up", key("gamma"));
    ctx.wait_for(|log| log.contains_key(&cleaned)).await;
    let gamma_gone = cms.get("gamma").await.is_err_and(|e| e.is_not_found());
    stop.cancel();
    task.await.expect("the controller returns");
    let list = secrets.list(&Default::default()).await.expect("listed");
    let secrets = list
        .items
        .iter()
        .map(|s| {
            let owner = s
                .metadata
                .owner_references
                .iter()
                .flatten()
                .map(|o| o.name.clone())
                .next();
            (
                s.metadata.name.clone().unwrap_or_default(),
                owner.unwrap_or_default(),
            )
        })
        .collect();
    Summary {
        namespace: ns,
        reconciled: ctx.reconciled(),
        secrets,
        gamma_gone,
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
            let stop = CancellationToken::new();
            let s = stop.clone();
            tokio::spawn(async move {
                let _ = tokio::signal::ctrl_c().await;
                s.cancel();
            });
            run(Client::new(config).expect("a client"), stop, |_| {}).await;
        }
        None => println!("{:#?}", demo().await),
    }
}
