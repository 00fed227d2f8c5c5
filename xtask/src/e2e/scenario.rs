//! What the deployed sample-controller must do in a full cluster, read back with kubectl:
//! leader election among its replicas, a Foo's Deployment run by the cluster's own deployment
//! controller, status following the real Deployment, scaling, Events, failover to the other
//! replica, and garbage collection of what a deleted Foo owned; then the same controller sharded
//! (`sharded`).

use std::time::{Duration, Instant};

use super::kubectl::{wait_for, Kubectl};
use super::{manifest, Steps, NAMESPACE};
use crate::Failure;

/// The Foo the scenario creates (`deploy/example-foo.yaml`).
const FOO: &str = "example-foo";
/// The label selector of the Foo's pods (`deployment_labels`).
const FOO_PODS: &str = "controller=example-foo";
/// The label selector of the controller's own pods (`deploy/deployment.yaml`).
const CONTROLLER_PODS: &str = "app=sample-controller";
/// The Lease the replicas campaign for (the example's `--lease-name` default).
const LEASE: &str = "sample-controller";
/// The example's `--lease-duration` and `--retry-period` defaults, which the manifest keeps.
const LEASE_DURATION: Duration = Duration::from_secs(15);
const RETRY_PERIOD: Duration = Duration::from_secs(2);

/// Liveness guards: a loaded 2-core machine starts pods slowly; none of these is a timing
/// assertion (the takeover bound below is the only one).
const ROLLOUT: Duration = Duration::from_secs(180);
const PODS: Duration = Duration::from_secs(120);
const GC: Duration = Duration::from_secs(120);

/// Runs the deploy step and every check after it.
pub(super) fn run(k: &Kubectl, steps: &mut Steps) -> Result<(), Failure> {
    steps.run(
        "deploy: namespace, Foo CRD, RBAC, 2-replica Deployment rolled out",
        || deploy(k),
    )?;
    let leader = steps.run(
        "leader elected: the Lease holder is one of the pods",
        || {
            let holder = wait_for("a replica to hold the Lease", ROLLOUT, || {
                holder_among_pods(k)
            })?;
            eprintln!("xtask e2e:   Lease {LEASE} held by pod {holder}");
            Ok(holder)
        },
    )?;
    steps.run(
        "a Foo -> its Deployment -> ReplicaSet -> 1 pod Running; status.availableReplicas 1",
        || {
            k.run(&["apply", "-f", &path(&manifest("example-foo.yaml"))])?;
            check_owned_chain(k)?;
            wait_replicas(k, 1)
        },
    )?;
    steps.run("scale the Foo to 3: 3 pods Running, status 3", || {
        scale(k, 3)
    })?;
    steps.run("Events for the Foo in `kubectl get events`", || events(k))?;
    steps.run(
        "delete the leader pod: the other replica takes over in time",
        || failover(k, &leader),
    )?;
    steps.run(
        "scale the Foo to 2 after the takeover: pods follow, status 2",
        || scale(k, 2),
    )?;
    steps.run(
        "delete the Foo: garbage collection removes its Deployment, ReplicaSet, pods",
        || garbage_collected(k),
    )?;
    super::sharded::run(k, steps)
}

fn path(p: &std::path::Path) -> String {
    p.display().to_string()
}

fn deploy(k: &Kubectl) -> Result<(), Failure> {
    let exists = k.run_cluster(&["get", "namespace", NAMESPACE, "-o", "name"]);
    if exists.is_ok_and(|s| !s.trim().is_empty()) {
        eprintln!("xtask e2e:   deleting namespace {NAMESPACE} left by an earlier run");
        k.run_cluster(&["delete", "namespace", NAMESPACE, "--timeout=120s"])?;
    }
    k.run_cluster(&["create", "namespace", NAMESPACE])?;
    k.run_cluster(&["apply", "-f", &path(&manifest("crd.yaml"))])?;
    k.run_cluster(&[
        "wait",
        "--for=condition=established",
        "--timeout=60s",
        "crd/foos.samplecontroller.k8s.io",
    ])?;
    k.run(&[
        "apply",
        "-f",
        &path(&manifest("rbac.yaml")),
        "-f",
        &path(&manifest("deployment.yaml")),
    ])?;
    let timeout = format!("--timeout={}s", ROLLOUT.as_secs());
    k.run(&[
        "rollout",
        "status",
        "deployment/sample-controller",
        &timeout,
    ])?;
    let pods = k.live_pods(CONTROLLER_PODS)?;
    let names: Vec<&str> = pods.iter().map(|p| p.name.as_str()).collect();
    eprintln!("xtask e2e:   controller pods: {}", names.join(", "));
    Ok(())
}

/// The Lease's holder when it is a live controller pod (the identity is the pod's name).
fn holder_among_pods(k: &Kubectl) -> Result<Option<String>, String> {
    let holder = k.jsonpath(&["lease", LEASE], "{.spec.holderIdentity}")?;
    let pods = k.live_pods(CONTROLLER_PODS)?;
    if pods.iter().any(|p| p.name == holder) {
        Ok(Some(holder))
    } else {
        Err(format!("holder {holder:?}, controller pods {pods:?}"))
    }
}

/// The Deployment is controlled by the Foo (its uid), and the cluster's deployment controller
/// made a ReplicaSet for it.
fn check_owned_chain(k: &Kubectl) -> Result<(), Failure> {
    let foo_uid = k.jsonpath(&["foo", FOO], "{.metadata.uid}")?;
    let owner = wait_for("the Foo's Deployment", PODS, || {
        let owner = k.jsonpath(
            &["deployments", "--field-selector", &format!("metadata.name={FOO}")],
            "{range .items[*].metadata.ownerReferences[*]}{.kind}/{.name}/{.uid}/{.controller}{end}",
        )?;
        Ok((!owner.is_empty()).then_some(owner))
    })?;
    // The one owner reference, with `controller: true` (`metav1.NewControllerRef`).
    if owner != format!("Foo/{FOO}/{foo_uid}/true") {
        return Err(format!(
            "Deployment {FOO}'s owner references are {owner:?}, not the Foo's controller \
             reference Foo/{FOO}/{foo_uid}/true"
        )
        .into());
    }
    let rs = wait_for("the Deployment's ReplicaSet", PODS, || {
        let rs = k.jsonpath(
            &["replicasets", "-l", FOO_PODS],
            "{range .items[*]}{.metadata.name} (controlled by {.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].name}){end}",
        )?;
        Ok(rs.contains(&format!("Deployment/{FOO}")).then_some(rs))
    })?;
    eprintln!("xtask e2e:   Deployment {FOO} controlled by Foo {FOO}; ReplicaSet {rs}");
    Ok(())
}

/// Patches the Foo's `spec.replicas` and waits for the pods and status to follow.
fn scale(k: &Kubectl, replicas: usize) -> Result<(), Failure> {
    let patch = format!("{{\"spec\":{{\"replicas\":{replicas}}}}}");
    k.run(&["patch", "foo", FOO, "--type=merge", "-p", &patch])?;
    wait_replicas(k, replicas)
}

/// `replicas` pods of the Foo Running and ready (none other left), the Deployment asking for
/// `replicas`, and the Foo's `status.availableReplicas` saying so.
fn wait_replicas(k: &Kubectl, replicas: usize) -> Result<(), Failure> {
    let what = format!("{replicas} Running pods and Foo status.availableReplicas {replicas}");
    wait_for(&what, PODS, || {
        let pods = k.live_pods(FOO_PODS)?;
        let running = pods.iter().filter(|p| p.running_ready).count();
        let spec = k.jsonpath(&["deployment", FOO], "{.spec.replicas}")?;
        let status = k.jsonpath(&["foo", FOO], "{.status.availableReplicas}")?;
        let seen = format!(
            "{running}/{} pods running, Deployment spec.replicas {spec}, Foo status.availableReplicas {status:?}",
            pods.len()
        );
        let want = replicas.to_string();
        match running == replicas && pods.len() == replicas && spec == want && status == want {
            true => {
                eprintln!("xtask e2e:   {seen}");
                Ok(Some(()))
            }
            false => Err(seen),
        }
    })?;
    Ok(())
}

/// The Events the controller recorded on the Foo, as `kubectl get events` lists them.
fn events(k: &Kubectl) -> Result<(), Failure> {
    let selector = format!("involvedObject.kind=Foo,involvedObject.name={FOO}");
    let lines = wait_for("a Synced Event on the Foo", PODS, || {
        let lines = k.jsonpath(
            &["events", "--field-selector", &selector],
            "{range .items[*]}{.type} {.reason} {.involvedObject.kind}/{.involvedObject.name}: {.message} (from {.reportingComponent}){\"\\n\"}{end}",
        )?;
        Ok(lines
            .contains(&format!("Normal Synced Foo/{FOO}"))
            .then_some(lines))
    })?;
    for line in lines.lines() {
        eprintln!("xtask e2e:   event: {line}");
    }
    Ok(())
}

/// Deletes the leader's pod (gracefully: SIGTERM makes it release the Lease) and waits for
/// another live pod to hold the Lease, within the lease duration plus one retry period.
fn failover(k: &Kubectl, leader: &str) -> Result<(), Failure> {
    let pods = k.live_pods(CONTROLLER_PODS)?;
    let deleted = Instant::now();
    k.run(&["delete", "pod", leader, "--wait=false"])?;
    let bound = LEASE_DURATION + RETRY_PERIOD;
    let holder = wait_for("another replica to hold the Lease", bound, || {
        let holder = k.jsonpath(&["lease", LEASE], "{.spec.holderIdentity}")?;
        let live = k.live_pods(CONTROLLER_PODS)?;
        match holder != leader && live.iter().any(|p| p.name == holder) {
            true => Ok(Some(holder)),
            false => Err(format!("holder {holder:?}")),
        }
    })?;
    let took = deleted.elapsed();
    let which = match pods.iter().any(|p| p.name == holder) {
        true => "the other original replica",
        false => "the ReplicaSet's replacement pod",
    };
    eprintln!(
        "xtask e2e:   {holder} ({which}) took over {:.1} s after {leader} was deleted (bound {:.0} s)",
        took.as_secs_f64(),
        bound.as_secs_f64()
    );
    Ok(())
}

/// Deletes the Foo and waits until the garbage collector has removed the Deployment it
/// controlled, that Deployment's ReplicaSets, and their pods.
fn garbage_collected(k: &Kubectl) -> Result<(), Failure> {
    k.run(&["delete", "foo", FOO])?;
    let by_name = format!("metadata.name={FOO}");
    wait_for("Deployment, ReplicaSet and pods to be gone", GC, || {
        let deployments = k.run(&[
            "get",
            "deployments",
            "--field-selector",
            &by_name,
            "-o",
            "name",
        ])?;
        let replicasets = k.run(&["get", "replicasets", "-l", FOO_PODS, "-o", "name"])?;
        let pods = k.run(&["get", "pods", "-l", FOO_PODS, "-o", "name"])?;
        let left: Vec<&str> = [&deployments, &replicasets, &pods]
            .iter()
            .flat_map(|s| s.lines())
            .filter(|l| !l.trim().is_empty())
            .collect();
        match left.is_empty() {
            true => Ok(Some(())),
            false => Err(format!("still there: {}", left.join(", "))),
        }
    })?;
    Ok(())
}

/// After a failure: what the namespace holds and what the controller logged.
pub(super) fn diagnose(k: &Kubectl) {
    if let Ok(all) = k.run(&["get", "all,foos,leases,events", "-o", "wide"]) {
        eprintln!("xtask e2e: namespace {NAMESPACE}:\n{all}");
    }
    let pods = k
        .run(&["get", "pods", "-l", CONTROLLER_PODS, "-o", "name"])
        .unwrap_or_default();
    for pod in pods.lines().filter(|l| !l.trim().is_empty()) {
        match k.run(&["logs", pod, "--tail=40"]) {
            Ok(log) => eprintln!("xtask e2e: {pod} log (last 40 lines):\n{log}"),
            Err(e) => eprintln!("xtask e2e: {pod}: {e}"),
        }
    }
}
