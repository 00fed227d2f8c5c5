//! The defaults kube-apiserver 1.20.2's decoding sets on the workload kinds and Secrets (the
//! `SetDefaults_*` functions of `pkg/apis/{core,apps,batch}/v1`), so an object reads back as a
//! real cluster returns it — what a controller comparing its desired object with the stored one
//! must cope with:
//! - pod specs (of Pods and of every pod template): `dnsPolicy: ClusterFirst`, `restartPolicy:
//!   Always`, `schedulerName: default-scheduler`, `securityContext: {}`,
//!   `terminationGracePeriodSeconds: 30`; each container's `imagePullPolicy` (`Always` for an
//!   untagged or `:latest` image, else `IfNotPresent`), `resources: {}`,
//!   `terminationMessagePath`, `terminationMessagePolicy: File`, ports' `protocol: TCP`, and
//!   probes' timings; a template's `metadata.creationTimestamp: null`;
//! - Deployments, ReplicaSets, StatefulSets, DaemonSets, Jobs and CronJobs: their replicas,
//!   strategies, history limits, deadlines and policies;
//! - Secrets: `type: Opaque`, and `stringData` written into `data` (base64).

use base64::Engine as _;
use serde_json::{json, Map, Value};

use crate::resources::set_default::set_default;
use crate::resources::ResourceInfo;

/// [`set_default`] on an object value (nothing on anything else).
fn default(obj: &mut Value, field: &str, value: Value) {
    if let Some(m) = obj.as_object_mut() {
        set_default(m, field, value);
    }
}

/// `Always` for an image without a tag or with `:latest` (and no digest), else `IfNotPresent`.
fn pull_policy(image: &str) -> &'static str {
    if image.contains('@') {
        return "IfNotPresent";
    }
    let last = image.rsplit('/').next().unwrap_or(image);
    match last.split_once(':') {
        None => "Always",
        Some((_, "latest")) => "Always",
        Some(_) => "IfNotPresent",
    }
}

fn probe(p: &mut Value) {
    if !p.is_object() {
        return;
    }
    for (field, value) in [
        ("timeoutSeconds", 1),
        ("periodSeconds", 10),
        ("successThreshold", 1),
        ("failureThreshold", 3),
    ] {
        default(p, field, json!(value));
    }
    if let Some(get) = p.get_mut("httpGet").filter(|g| g.is_object()) {
        default(get, "scheme", json!("HTTP"));
    }
}

fn container(c: &mut Value) {
    let image = c["image"].as_str().unwrap_or_default().to_string();
    default(c, "imagePullPolicy", json!(pull_policy(&image)));
    default(c, "resources", json!({}));
    default(c, "terminationMessagePath", json!("/dev/termination-log"));
    default(c, "terminationMessagePolicy", json!("File"));
    for p in c
        .get_mut("ports")
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
    {
        default(p, "protocol", json!("TCP"));
    }
    for p in ["livenessProbe", "readinessProbe", "startupProbe"] {
        if let Some(p) = c.get_mut(p) {
            probe(p);
        }
    }
}

fn pod_spec(spec: &mut Value) {
    if !spec.is_object() {
        return;
    }
    default(spec, "dnsPolicy", json!("ClusterFirst"));
    default(spec, "restartPolicy", json!("Always"));
    default(spec, "schedulerName", json!("default-scheduler"));
    default(spec, "securityContext", json!({}));
    default(spec, "terminationGracePeriodSeconds", json!(30));
    for list in ["containers", "initContainers"] {
        let containers = spec.get_mut(list).and_then(Value::as_array_mut);
        for c in containers.into_iter().flatten() {
            container(c);
        }
    }
}

/// The pod template at `t` (if any): its spec, and the zero `creationTimestamp` Go writes for
/// its metadata.
fn template(t: Option<&mut Value>) {
    let Some(t) = t.filter(|t| t.is_object()) else {
        return;
    };
    zero_creation_timestamp(t);
    if let Some(spec) = t.get_mut("spec") {
        pod_spec(spec);
    }
}

/// `metadata.creationTimestamp: null` on an embedded object (a template), as Go writes a zero
/// time.
fn zero_creation_timestamp(t: &mut Value) {
    default(t, "metadata", json!({}));
    if let Some(m) = t.get_mut("metadata").and_then(Value::as_object_mut) {
        m.entry("creationTimestamp").or_insert(Value::Null);
    }
}

/// The tolerations the `DefaultTolerationSeconds` admission plugin adds to a pod that does not
/// tolerate the not-ready and unreachable taints itself.
fn default_tolerations(spec: &mut Value) {
    default(spec, "tolerations", json!([]));
    let Some(list) = spec.get_mut("tolerations").and_then(Value::as_array_mut) else {
        return;
    };
    for key in [
        "node.kubernetes.io/not-ready",
        "node.kubernetes.io/unreachable",
    ] {
        let tolerated = list.iter().any(|t| {
            (t["key"] == key || (t["key"].is_null() && t["operator"] == "Exists"))
                && (t["effect"].is_null() || t["effect"] == "NoExecute" || t["effect"] == "")
        });
        if !tolerated {
            list.push(
                json!({"key": key, "operator": "Exists", "effect": "NoExecute",
                             "tolerationSeconds": 300}),
            );
        }
    }
}

/// A new pod's QoS class (`GetPodQOS`): `Guaranteed` when every container limits cpu and
/// memory with requests equal to the limits, `BestEffort` when none requests or limits
/// anything, else `Burstable`.
pub(crate) fn qos_class(spec: &Value) -> &'static str {
    let containers: Vec<&Value> = ["containers", "initContainers"]
        .iter()
        .flat_map(|l| spec[*l].as_array().into_iter().flatten())
        .collect();
    let set = |c: &Value, part: &str| {
        c["resources"][part]
            .as_object()
            .is_some_and(|m| !m.is_empty())
    };
    if containers
        .iter()
        .all(|c| !set(c, "requests") && !set(c, "limits"))
    {
        return "BestEffort";
    }
    let guaranteed = containers.iter().all(|c| {
        let (req, lim) = (&c["resources"]["requests"], &c["resources"]["limits"]);
        ["cpu", "memory"]
            .iter()
            .all(|r| !lim[*r].is_null() && (req[*r].is_null() || req[*r] == lim[*r]))
    });
    if guaranteed {
        "Guaranteed"
    } else {
        "Burstable"
    }
}

/// Fills `field` of `spec` as `{type: RollingUpdate, rollingUpdate: {...}}`.
fn rolling(spec: &mut Value, field: &str, rolling_update: Value) {
    default(spec, field, json!({"type": "RollingUpdate"}));
    let Some(strategy) = spec.get_mut(field).filter(|s| s.is_object()) else {
        return;
    };
    default(strategy, "type", json!("RollingUpdate"));
    if strategy["type"] != "RollingUpdate" {
        return;
    }
    default(strategy, "rollingUpdate", json!({}));
    if let (Some(update), Value::Object(fields)) =
        (strategy.get_mut("rollingUpdate"), rolling_update)
    {
        for (k, v) in fields {
            default(update, &k, v);
        }
    }
}

/// Writes `stringData` into `data` (base64), as the real server's conversion does.
fn secret(obj: &mut Value) {
    default(obj, "type", json!("Opaque"));
    let Some(Value::Object(string_data)) = obj.as_object_mut().and_then(|o| o.remove("stringData"))
    else {
        return;
    };
    default(obj, "data", Value::Object(Map::new()));
    if let Some(data) = obj["data"].as_object_mut() {
        for (k, v) in string_data {
            let text = v.as_str().unwrap_or_default();
            data.insert(
                k,
                json!(base64::engine::general_purpose::STANDARD.encode(text)),
            );
        }
    }
}

/// Sets the defaults of `res`'s objects on `obj` (a create or an update of the main resource;
/// a pod's admission defaults too, which hold on updates since those fields do not change).
pub(crate) fn apply(res: &ResourceInfo, obj: &mut Value) {
    let group_plural = (res.api.group.as_str(), res.api.plural.as_str());
    if group_plural == ("", "secrets") {
        return secret(obj);
    }
    if group_plural == ("", "podtemplates") {
        return template(obj.get_mut("template"));
    }
    let Some(spec) = obj.get_mut("spec").filter(|s| s.is_object()) else {
        return;
    };
    match group_plural {
        ("", "pods") => {
            pod_spec(spec);
            default(spec, "enableServiceLinks", json!(true));
            default(spec, "priority", json!(0));
            default(spec, "preemptionPolicy", json!("PreemptLowerPriority"));
            default_tolerations(spec);
        }
        ("apps", "deployments") => {
            default(spec, "replicas", json!(1));
            rolling(
                spec,
                "strategy",
                json!({"maxUnavailable": "25%", "maxSurge": "25%"}),
            );
            default(spec, "revisionHistoryLimit", json!(10));
            default(spec, "progressDeadlineSeconds", json!(600));
            template(spec.get_mut("template"));
        }
        ("apps", "replicasets") => {
            default(spec, "replicas", json!(1));
            template(spec.get_mut("template"));
        }
        ("apps", "statefulsets") => {
            default(spec, "replicas", json!(1));
            default(spec, "podManagementPolicy", json!("OrderedReady"));
            rolling(spec, "updateStrategy", json!({"partition": 0}));
            default(spec, "revisionHistoryLimit", json!(10));
            template(spec.get_mut("template"));
        }
        ("apps", "daemonsets") => {
            rolling(spec, "updateStrategy", json!({"maxUnavailable": 1}));
            default(spec, "revisionHistoryLimit", json!(10));
            template(spec.get_mut("template"));
        }
        ("batch", "jobs") => {
            if spec["completions"].is_null() && spec["parallelism"].is_null() {
                default(spec, "completions", json!(1));
            }
            default(spec, "parallelism", json!(1));
            default(spec, "backoffLimit", json!(6));
            template(spec.get_mut("template"));
        }
        ("batch", "cronjobs") => {
            default(spec, "concurrencyPolicy", json!("Allow"));
            default(spec, "suspend", json!(false));
            default(spec, "successfulJobsHistoryLimit", json!(3));
            default(spec, "failedJobsHistoryLimit", json!(1));
            if let Some(job) = spec.get_mut("jobTemplate").filter(|j| j.is_object()) {
                zero_creation_timestamp(job);
                template(job.get_mut("spec").and_then(|s| s.get_mut("template")));
            }
        }
        _ => {}
    }
}

/// What the Job strategy sets on a new Job (`PrepareForCreate`): unless `manualSelector` is
/// set, a selector on `controller-uid` (the Job's uid) and those labels, with `job-name`, on
/// its pod template.
pub(crate) fn prepare_create(res: &ResourceInfo, obj: &mut Value) {
    if (res.api.group.as_str(), res.api.plural.as_str()) != ("batch", "jobs")
        || obj["spec"]["manualSelector"] == true
    {
        return;
    }
    let uid = obj["metadata"]["uid"].clone();
    let name = obj["metadata"]["name"].clone();
    let Some(spec) = obj.get_mut("spec").filter(|s| s.is_object()) else {
        return;
    };
    spec["selector"] = json!({"matchLabels": {"controller-uid": uid}});
    let Some(t) = spec.get_mut("template").filter(|t| t.is_object()) else {
        return;
    };
    default(t, "metadata", json!({}));
    default(&mut t["metadata"], "labels", json!({}));
    if let Some(labels) = t["metadata"]["labels"].as_object_mut() {
        labels.insert("controller-uid".into(), uid);
        labels.insert("job-name".into(), name);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn images_pull_as_the_real_server_defaults() {
        assert_eq!(pull_policy("nginx"), "Always");
        assert_eq!(pull_policy("nginx:latest"), "Always");
        assert_eq!(pull_policy("busybox:1.2"), "IfNotPresent");
        assert_eq!(pull_policy("registry:5000/app"), "Always");
        assert_eq!(pull_policy("registry:5000/app:v1"), "IfNotPresent");
        assert_eq!(pull_policy("busybox@sha256:abc"), "IfNotPresent");
    }
}
