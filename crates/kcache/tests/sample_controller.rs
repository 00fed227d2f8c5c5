//! `examples/sample-controller.rs`'s controller, in a kcache-controller `Manager`, reconciling
//! Foos against the embedded kcache-testserver, or against the real cluster named by `KCACHE_TEST_KUBECONFIG` (in a fresh
//! namespace). The embedded server and envtest run no kube-controller-manager, so there the
//! simulated deployment controller is on; on a full cluster (kind) the real deployment
//! controller makes ReplicaSets and pods, which the kubelet runs. Every wait is a liveness guard
//! on a condition, never a timing assertion.

#[path = "../examples/sample_controller/mod.rs"]
mod sample;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kcache::controller::{Manager, ReconcileRequest};
use kcache::informer::FactoryOptions;
use kcache::sharding::{Ring, Shard, Sharding};
use kcache::transport::{Api, Client, Config, DeleteParams, Patch, PatchParams, PostParams};
use kcache_core::Object;
use kcache_testing::{RequestMatch, TestCluster, Verb};
use parking_lot::Mutex;
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use sample::controller::message_resource_exists;
use sample::crd::foo_crd;
use sample::deployment::{new_deployment, POD_IMAGE};
use sample::foo::Foo;
use sample::wait::wait_until;

/// Liveness guard for each wait; the conditions normally hold within milliseconds (seconds on
/// a full cluster, where pods start).
const LIMIT: Duration = Duration::from_secs(90);

/// The events.k8s.io/v1 Events with `reason` about the Foo `name`.
async fn events_on(cluster: &TestCluster, ns: &str, name: &str, reason: &str) -> Vec<Value> {
    let path = format!(
        "/apis/events.k8s.io/v1/namespaces/{ns}/events\
         ?fieldSelector=regarding.kind%3DFoo,regarding.name%3D{name},reason%3D{reason}"
    );
    let resp = cluster.client().get(&path).await.expect("list events");
    assert_eq!(resp.status, 200, "{path}: {}", resp.body);
    resp.body["items"].as_array().cloned().unwrap_or_default()
}

/// The Running pods of the Foo `owner`'s Deployment (label `controller=<owner>`).
async fn running_pods(cluster: &TestCluster, ns: &str, owner: &str) -> usize {
    let path = format!("/api/v1/namespaces/{ns}/pods?labelSelector=controller%3D{owner}");
    let resp = cluster.client().get(&path).await.expect("list pods");
    assert_eq!(resp.status, 200, "{path}: {}", resp.body);
    resp.body["items"].as_array().map_or(0, |pods| {
        pods.iter()
            .filter(|p| p["status"]["phase"] == "Running")
            .count()
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sample_controller_reconciles_foos() {
    let cluster = TestCluster::start().await.expect("test cluster");
    let ns = cluster
        .create_namespace("sample-controller")
        .await
        .expect("namespace");
    let mut config = Config::from_kubeconfig_file(cluster.kubeconfig_path()).expect("kubeconfig");
    config.qps = 100.0;
    config.burst = 200;
    let client = Client::new(config).expect("client");
    let real_controllers = cluster.runs_controllers().await.expect("probe the cluster");
    let mut manager = sample::manager(client.clone(), Some(ns.clone()))
        .build()
        .expect("manager");
    let sample = sample::add_to(&mut manager, 2, !real_controllers, None)
        .await
        .expect("the CRD, the controller");
    let ctl = sample.ctx.clone();
    let stop = CancellationToken::new();
    let running = tokio::spawn(manager.run_until(stop.clone()));
    let foos: Api<Foo> = Api::namespaced(client.clone(), &ns);
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), &ns);

    // A Foo gets its Deployment: named by spec.deploymentName, controlled by the Foo.
    let owned = foos
        .create(
            &PostParams::default(),
            &Foo::new(&ns, "owned", "owned-nginx", 1),
        )
        .await
        .expect("create Foo owned");
    let owned_key = ReconcileRequest::new(&ns, "owned");
    let owned_nginx = ReconcileRequest::new(&ns, "owned-nginx");
    wait_until("Deployment owned-nginx", LIMIT, async || {
        ctl.deployments.get_by_key(owned_nginx.key()).is_some()
    })
    .await
    .unwrap();
    let d = deployments
        .get("owned-nginx")
        .await
        .expect("get owned-nginx");
    assert_eq!(
        d.metadata.owner_references,
        Some(vec![OwnerReference {
            api_version: "samplecontroller.k8s.io/v1alpha1".into(),
            kind: "Foo".into(),
            name: "owned".into(),
            uid: owned.metadata.uid.clone().expect("the server set a uid"),
            controller: Some(true),
            block_owner_deletion: Some(true),
        }])
    );
    assert_eq!(d.spec.replicas, Some(1));
    let labels = BTreeMap::from([
        ("app".to_string(), "nginx".to_string()),
        ("controller".to_string(), "owned".to_string()),
    ]);
    assert_eq!(d.spec.selector.match_labels.as_ref(), Some(&labels));
    let template = d
        .spec
        .template
        .metadata
        .as_ref()
        .expect("template metadata");
    assert_eq!(template.labels.as_ref(), Some(&labels));
    let containers = &d.spec.template.spec.as_ref().expect("pod spec").containers;
    assert_eq!(containers[0].image.as_deref(), Some(POD_IMAGE));

    // The Foo's status follows the Deployment's (simulated, or the real controller's).
    wait_until(
        "Foo owned to report 1 available replica",
        LIMIT,
        async || {
            ctl.foos
                .get_by_key(owned_key.key())
                .is_some_and(|f| f.available_replicas() == 1)
        },
    )
    .await
    .unwrap();
    let got = foos.get("owned").await.expect("get Foo owned");
    assert_eq!(got.available_replicas(), 1);
    let d = deployments.get("owned-nginx").await.unwrap();
    assert_eq!(d.status.and_then(|s| s.available_replicas), Some(1));
    match sample.simulator.as_ref() {
        Some(simulator) => assert!(
            simulator.updates() > 0,
            "the status came from the simulator"
        ),
        None => assert_eq!(
            running_pods(&cluster, &ns, "owned").await,
            1,
            "the real controllers made a pod the kubelet runs"
        ),
    }

    // Scaling the Foo scales the Deployment, and the status follows.
    foos.patch(
        "owned",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"replicas": 3}})),
    )
    .await
    .expect("scale Foo owned");
    wait_until(
        "Foo owned to report 3 available replicas",
        LIMIT,
        async || {
            ctl.foos
                .get_by_key(owned_key.key())
                .is_some_and(|f| f.available_replicas() == 3)
        },
    )
    .await
    .unwrap();
    let d = deployments.get("owned-nginx").await.unwrap();
    assert_eq!(d.spec.replicas, Some(3));
    assert_eq!(d.status.and_then(|s| s.available_replicas), Some(3));
    assert_eq!(foos.get("owned").await.unwrap().available_replicas(), 3);
    if sample.simulator.is_none() {
        assert_eq!(running_pods(&cluster, &ns, "owned").await, 3);
    }

    // Each sync recorded a `Synced` Event on the Foo; syncs of an unchanged Foo (here: its
    // Deployment touched) repeat it, which makes a series.
    wait_until("a Synced event on Foo owned", LIMIT, async || {
        !events_on(&cluster, &ns, "owned", "Synced").await.is_empty()
    })
    .await
    .unwrap();
    let synced = events_on(&cluster, &ns, "owned", "Synced").await;
    assert_eq!(synced[0]["note"], "Foo synced successfully");
    assert_eq!(synced[0]["type"], "Normal");
    assert_eq!(synced[0]["regarding"]["kind"], "Foo");
    assert_eq!(synced[0]["reportingController"], "sample-controller");
    let mut touches = 0u32;
    wait_until("a Synced series on Foo owned", LIMIT, async || {
        if touches.is_multiple_of(10) {
            let label = json!({"metadata": {"labels": {"touched": touches.to_string()}}});
            let touch = Patch::Merge(label);
            deployments
                .patch("owned-nginx", &PatchParams::default(), &touch)
                .await
                .expect("touch owned-nginx");
        }
        touches += 1;
        let synced = events_on(&cluster, &ns, "owned", "Synced").await;
        synced
            .iter()
            .any(|e| e["series"]["count"].as_i64() >= Some(2))
    })
    .await
    .unwrap();

    // Read your writes: after scaling the Deployment, the next reconcile of the Foo waits until
    // the Deployment cache holds that write instead of acting on the older Deployment (which
    // would update it a second time). On the embedded server the Deployment watch is held back
    // (re-watches delayed 6 s after a cut) while a touch of the Foo makes that next reconcile
    // start.
    let writes_before = ctl.stats.lock()[&owned_key].deployment_writes;
    let held_back = cluster.server().inspect(|server| {
        let watch = RequestMatch::any()
            .verb(Verb::Watch)
            .resource("deployments");
        server.delay(watch, Duration::from_secs(6));
        server.cut_watches();
    });
    foos.patch(
        "owned",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"replicas": 4}})),
    )
    .await
    .expect("scale Foo owned to 4");
    wait_until("Deployment owned-nginx scaled to 4", LIMIT, async || {
        deployments.get("owned-nginx").await.unwrap().spec.replicas == Some(4)
    })
    .await
    .unwrap();
    let touch = json!({"metadata": {"labels": {"touched": "after-scale"}}});
    foos.patch("owned", &PatchParams::default(), &Patch::Merge(touch))
        .await
        .expect("touch Foo owned");
    match &held_back {
        Some(_) => assert_eq!(
            ctl.deployments
                .get_by_key(owned_nginx.key())
                .and_then(|d| d.spec.replicas),
            Some(3),
            "the Deployment cache is behind the write when the touch's reconcile starts"
        ),
        None => println!(
            "kcache-skip: sample_controller_reconciles_foos: holding a watch back needs fault \
             injection (the count of writes is checked still)"
        ),
    }
    wait_until(
        "Foo owned to report 4 available replicas",
        LIMIT,
        async || {
            ctl.foos
                .get_by_key(owned_key.key())
                .is_some_and(|f| f.available_replicas() == 4)
        },
    )
    .await
    .unwrap();
    if let Some(server) = held_back {
        server.clear_faults();
    }
    assert_eq!(
        ctl.stats.lock()[&owned_key].deployment_writes,
        writes_before + 1,
        "one update per change: no reconcile acted on the Deployment from before its own write"
    );

    // A deleted Deployment is recreated (its delete event enqueues the owning Foo).
    let old_uid = d.metadata.uid.clone();
    deployments
        .delete("owned-nginx", &DeleteParams::default())
        .await
        .expect("delete owned-nginx");
    wait_until("Deployment owned-nginx recreated", LIMIT, async || {
        ctl.deployments
            .get_by_key(owned_nginx.key())
            .is_some_and(|d| d.uid() != old_uid.as_deref())
    })
    .await
    .unwrap();
    assert_eq!(
        deployments.get("owned-nginx").await.unwrap().spec.replicas,
        Some(4)
    );

    // A Deployment of the same name that the Foo does not control is reported, not adopted.
    let taken = new_deployment(&Foo::new(&ns, "someone-else", "taken", 2));
    deployments
        .create(&PostParams::default(), &taken)
        .await
        .expect("create Deployment taken");
    foos.create(&PostParams::default(), &Foo::new(&ns, "clash", "taken", 4))
        .await
        .expect("create Foo clash");
    let clash_key = ReconcileRequest::new(&ns, "clash");
    wait_until("Foo clash to be refused, and retried", LIMIT, async || {
        ctl.stats
            .lock()
            .get(&clash_key)
            .is_some_and(|s| s.failed >= 2)
    })
    .await
    .unwrap();
    assert_eq!(
        message_resource_exists("taken"),
        r#"Resource "taken" already exists and is not managed by Foo"#
    );
    let d = deployments.get("taken").await.unwrap();
    assert_eq!(d.metadata.owner_references, None, "not adopted");
    assert_eq!(d.spec.replicas, Some(2), "not scaled");
    assert_eq!(foos.get("clash").await.unwrap().status, None);
    wait_until(
        "an ErrResourceExists event on Foo clash",
        LIMIT,
        async || {
            let refused = events_on(&cluster, &ns, "clash", "ErrResourceExists").await;
            refused.iter().any(|e| {
                e["type"] == "Warning" && e["note"] == message_resource_exists("taken").as_str()
            })
        },
    )
    .await
    .unwrap();

    // Deleting a Foo: it leaves the cache and is not reconciled again (the garbage collector,
    // in a cluster, removes its Deployment through the owner reference).
    foos.delete("owned", &DeleteParams::default())
        .await
        .expect("delete Foo owned");
    wait_until("Foo owned to leave the cache", LIMIT, async || {
        ctl.foos.get_by_key(owned_key.key()).is_none()
    })
    .await
    .unwrap();
    let stats = ctl.stats.lock()[&owned_key].clone();
    assert!(stats.synced > 0, "{stats:?}");

    stop.cancel();
    let stopped = running.await.expect("the manager's task");
    stopped.expect("a clean shutdown: every runnable, informer and event writer stopped in time");
    if cluster.is_real() {
        // Best effort: a real cluster is shared between runs (the CRD stays for the next one).
        if let Err(e) = cluster
            .client()
            .delete(&format!("/api/v1/namespaces/{ns}"))
            .await
        {
            eprintln!("could not delete namespace {ns}: {e}");
        }
    }
}

/// `deploy/crd.yaml` (what users and `cargo xtask e2e --kind` apply) is the CRD the controller
/// creates itself when allowed to.
/// One replica of the sharded sample-controller: its shard Lease and, for each term, the Foo
/// controller over its shard's objects; `ctx` is the current term's controller.
struct Replica {
    name: String,
    stop: CancellationToken,
    ctx: Arc<Mutex<Option<Arc<sample::controller::Ctx>>>>,
    task: tokio::task::JoinHandle<()>,
}

fn start_replica(client: &Client, ns: &str, ring: &str, name: &str) -> Replica {
    let sharding = Sharding::new(client.clone(), Ring::new(ring, ns), name)
        .kind::<Foo>(Some(ns))
        .controlled::<Deployment>(Some(ns))
        .lease_timing(
            Duration::from_secs(6),
            Duration::from_secs(4),
            Duration::from_millis(500),
        )
        .sync_period(Duration::from_millis(500));
    let (stop, ctx) = (CancellationToken::new(), Arc::new(Mutex::new(None)));
    let (client, namespace, current) = (client.clone(), ns.to_string(), ctx.clone());
    let work = move |shard: Shard| {
        let (client, current) = (client.clone(), current.clone());
        let options = FactoryOptions {
            label_selector: shard.label_selector(),
            ..sample::factory_options(Some(namespace.clone()))
        };
        async move {
            let token = shard.token();
            let mut manager = Manager::builder(client)
                .factory_options(options)
                .build()
                .expect("manager");
            // The test reads the Deployments' spec, not their status: no simulated controller.
            let added = sample::add_controllers(&mut manager, 1, false, Some(shard))
                .expect("the shard's controllers");
            *current.lock() = Some(added.ctx);
            manager.run_until(token).await.expect("the shard's manager");
        }
    };
    let task = tokio::spawn({
        let stop = stop.clone();
        async move { sharding.run(stop, work).await.expect("lease timing") }
    });
    Replica {
        name: name.to_string(),
        stop,
        ctx,
        task,
    }
}

/// Foos the sharded test creates: enough that every one of three replicas gets some.
const FOOS: usize = 24;

/// Foo name → the shard its label names.
async fn placement(foos: &Api<Foo>, label: &str) -> BTreeMap<String, Option<String>> {
    let list = foos.list(&Default::default()).await.expect("list Foos");
    list.items
        .iter()
        .map(|f| (f.name().to_string(), f.label(label).map(str::to_string)))
        .collect()
}

/// The sample-controller as three shards of one ring (`--shard-ring`): every Foo is placed on
/// one replica, reconciled there, its Deployment labelled for the same shard; a replica stopped
/// gracefully hands its Foos to the others, and a replica joining gets its part through drains,
/// the Deployments following their Foos; each time a change of every Foo is reconciled by the
/// replica it is placed on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sharded_sample_controller_spreads_foos_and_hands_them_over() {
    let cluster = TestCluster::start().await.expect("test cluster");
    let ns = cluster
        .create_namespace("sharded-sample")
        .await
        .expect("namespace");
    let mut config = Config::from_kubeconfig_file(cluster.kubeconfig_path()).expect("kubeconfig");
    (config.qps, config.burst) = (200.0, 400);
    let client = Client::new(config).expect("client");
    sample::crd::ensure_foo_crd(&client).await.expect("the CRD");
    let ring = format!("foos-{ns}");
    let (label, drain) = (
        Ring::new(&ring, &ns).shard_label(),
        Ring::new(&ring, &ns).drain_label(),
    );
    let mut replicas: Vec<Replica> = ["r0", "r1", "r2"]
        .iter()
        .map(|name| start_replica(&client, &ns, &ring, name))
        .collect();
    let foos: Api<Foo> = Api::namespaced(client.clone(), &ns);
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), &ns);
    for i in 0..FOOS {
        let name = format!("foo-{i:02}");
        let foo = Foo::new(&ns, &name, &name, 1);
        foos.create(&PostParams::default(), &foo)
            .await
            .expect("create Foo");
    }

    // Placed on live replicas, every one of them, and reconciled by the one it names.
    let ctxs: Mutex<BTreeMap<String, _>> = Mutex::new(
        replicas
            .iter()
            .map(|r| (r.name.clone(), r.ctx.clone()))
            .collect(),
    );
    let reconciled_by_owner = |live: Vec<String>, replicas_wanted: i32| {
        let (foos, deployments, label, ns, ctxs) = (&foos, &deployments, &label, &ns, &ctxs);
        let drain = &drain;
        async move || {
            let placed = placement(foos, label).await;
            let mut used = BTreeMap::<&str, usize>::new();
            for (name, shard) in &placed {
                let Some(shard) = shard.as_deref().filter(|s| live.iter().any(|l| l == s)) else {
                    return false;
                };
                *used.entry(shard).or_default() += 1;
                let current = ctxs.lock()[shard].clone();
                let Some(ctx) = current.lock().clone() else {
                    return false;
                };
                let key = ReconcileRequest::new(ns, name);
                if ctx.stats.lock().get(&key).is_none_or(|s| s.synced == 0) {
                    return false;
                }
                let d = match deployments.get(name).await {
                    Ok(d) => d,
                    Err(e) if e.is_not_found() => return false,
                    Err(e) => panic!("get Deployment {name}: {e}"),
                };
                let wanted = d.spec.replicas == Some(replicas_wanted);
                if d.label(label) != Some(shard) || d.label(drain).is_some() || !wanted {
                    return false;
                }
            }
            placed.len() == FOOS && used.len() == live.len()
        }
    };
    let all: Vec<String> = replicas.iter().map(|r| r.name.clone()).collect();
    wait_until(
        "every Foo placed on a replica and reconciled by it",
        LIMIT,
        reconciled_by_owner(all, 1),
    )
    .await
    .unwrap();

    // A graceful stop releases the shard Lease: its Foos move to the others at once.
    let gone = replicas.remove(0);
    gone.stop.cancel();
    gone.task.await.expect("the stopped replica");
    for i in 0..FOOS {
        let patch = Patch::Merge(json!({"spec": {"replicas": 2}}));
        foos.patch(&format!("foo-{i:02}"), &PatchParams::default(), &patch)
            .await
            .expect("patch Foo");
    }
    let live: Vec<String> = replicas.iter().map(|r| r.name.clone()).collect();
    wait_until(
        "every Foo on a live replica, its change reconciled there",
        LIMIT,
        reconciled_by_owner(live, 2),
    )
    .await
    .unwrap();

    // A replica joins: the others drain its Foos (the shard acknowledges), the Deployments
    // follow their Foos, and the new replica reconciles a change of each of its Foos.
    replicas.push(start_replica(&client, &ns, &ring, "r3"));
    ctxs.lock().insert("r3".into(), replicas[2].ctx.clone());
    for i in 0..FOOS {
        let patch = Patch::Merge(json!({"spec": {"replicas": 3}}));
        foos.patch(&format!("foo-{i:02}"), &PatchParams::default(), &patch)
            .await
            .expect("patch Foo");
    }
    let live: Vec<String> = replicas.iter().map(|r| r.name.clone()).collect();
    wait_until(
        "every Foo on one of three live replicas, the joiner's included, its change reconciled",
        LIMIT,
        reconciled_by_owner(live, 3),
    )
    .await
    .unwrap();
    for r in replicas {
        r.stop.cancel();
        r.task.await.expect("replica");
    }
}

#[test]
fn deploy_crd_yaml_is_foo_crd() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/sample_controller/deploy/crd.yaml"
    );
    let text = std::fs::read_to_string(path).expect("read deploy/crd.yaml");
    // Compared typed: the schema's bounds are f64 in k8s-openapi and integers in the YAML.
    let yaml: CustomResourceDefinition =
        serde_yaml_ng::from_str(&text).expect("deploy/crd.yaml is a CustomResourceDefinition");
    assert_eq!(yaml, foo_crd());
}

/// The pods run `spec.image` when the Foo names one, pulled only if absent from the node (so
/// an image loaded into a kind node runs without a registry); else the pause image.
#[test]
fn deployment_pods_run_the_foos_image() {
    let container = |foo: &Foo| {
        let d = new_deployment(foo);
        let c = &d.spec.template.spec.as_ref().expect("pod spec").containers[0];
        (c.image.clone(), c.image_pull_policy.clone())
    };
    let mut foo = Foo::new("ns", "a", "a", 1);
    assert_eq!(
        container(&foo),
        (Some(POD_IMAGE.into()), Some("IfNotPresent".into()))
    );
    foo.spec.image = Some("registry.example/demo:2".into());
    assert_eq!(
        container(&foo),
        (
            Some("registry.example/demo:2".into()),
            Some("IfNotPresent".into())
        )
    );
}
