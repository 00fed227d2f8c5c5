//! The defaults a real kube-apiserver 1.20.2 sets on a new workload (Deployment, StatefulSet,
//! DaemonSet, ReplicaSet, Job, CronJob), Pod and Secret: each created in its smallest form and
//! read back whole (spec, status, a Secret's type and data), against what 1.20.2 answered for
//! the same requests (a Job's generated `controller-uid` is its own uid). On both tiers.

use serde_json::Value;

use crate::common::cluster;

/// (collection path under the namespace, plural, body, the fields but `metadata`, `apiVersion`
/// and `kind` that kube-apiserver 1.20.2 answered).
const CASES: &[(&str, &str, &str, &str)] = &[
    (
        "apis/apps/v1",
        "deployments",
        r#"{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},"spec":{"selector":{"matchLabels":{"app":"x"}},"template":{"metadata":{"labels":{"app":"x"}},"spec":{"containers":[{"name":"c","image":"nginx"},{"name":"d","image":"busybox:1.2"}]}}}}"#,
        r#"{"spec":{"progressDeadlineSeconds":600,"replicas":1,"revisionHistoryLimit":10,"selector":{"matchLabels":{"app":"x"}},"strategy":{"rollingUpdate":{"maxSurge":"25%","maxUnavailable":"25%"},"type":"RollingUpdate"},"template":{"metadata":{"creationTimestamp":null,"labels":{"app":"x"}},"spec":{"containers":[{"image":"nginx","imagePullPolicy":"Always","name":"c","resources":{},"terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File"},{"image":"busybox:1.2","imagePullPolicy":"IfNotPresent","name":"d","resources":{},"terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File"}],"dnsPolicy":"ClusterFirst","restartPolicy":"Always","schedulerName":"default-scheduler","securityContext":{},"terminationGracePeriodSeconds":30}}},"status":{}}"#,
    ),
    (
        "apis/apps/v1",
        "statefulsets",
        r#"{"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{"name":"s"},"spec":{"serviceName":"s","selector":{"matchLabels":{"app":"x"}},"template":{"metadata":{"labels":{"app":"x"}},"spec":{"containers":[{"name":"c","image":"nginx"},{"name":"d","image":"busybox:1.2"}]}}}}"#,
        r#"{"spec":{"podManagementPolicy":"OrderedReady","replicas":1,"revisionHistoryLimit":10,"selector":{"matchLabels":{"app":"x"}},"serviceName":"s","template":{"metadata":{"creationTimestamp":null,"labels":{"app":"x"}},"spec":{"containers":[{"image":"nginx","imagePullPolicy":"Always","name":"c","resources":{},"terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File"},{"image":"busybox:1.2","imagePullPolicy":"IfNotPresent","name":"d","resources":{},"terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File"}],"dnsPolicy":"ClusterFirst","restartPolicy":"Always","schedulerName":"default-scheduler","securityContext":{},"terminationGracePeriodSeconds":30}},"updateStrategy":{"rollingUpdate":{"partition":0},"type":"RollingUpdate"}},"status":{"replicas":0}}"#,
    ),
    (
        "apis/apps/v1",
        "daemonsets",
        r#"{"apiVersion":"apps/v1","kind":"DaemonSet","metadata":{"name":"ds"},"spec":{"selector":{"matchLabels":{"app":"x"}},"template":{"metadata":{"labels":{"app":"x"}},"spec":{"containers":[{"name":"c","image":"nginx"},{"name":"d","image":"busybox:1.2"}]}}}}"#,
        r#"{"spec":{"revisionHistoryLimit":10,"selector":{"matchLabels":{"app":"x"}},"template":{"metadata":{"creationTimestamp":null,"labels":{"app":"x"}},"spec":{"containers":[{"image":"nginx","imagePullPolicy":"Always","name":"c","resources":{},"terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File"},{"image":"busybox:1.2","imagePullPolicy":"IfNotPresent","name":"d","resources":{},"terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File"}],"dnsPolicy":"ClusterFirst","restartPolicy":"Always","schedulerName":"default-scheduler","securityContext":{},"terminationGracePeriodSeconds":30}},"updateStrategy":{"rollingUpdate":{"maxUnavailable":1},"type":"RollingUpdate"}},"status":{"currentNumberScheduled":0,"desiredNumberScheduled":0,"numberMisscheduled":0,"numberReady":0}}"#,
    ),
    (
        "apis/apps/v1",
        "replicasets",
        r#"{"apiVersion":"apps/v1","kind":"ReplicaSet","metadata":{"name":"rs"},"spec":{"selector":{"matchLabels":{"app":"x"}},"template":{"metadata":{"labels":{"app":"x"}},"spec":{"containers":[{"name":"c","image":"nginx"},{"name":"d","image":"busybox:1.2"}]}}}}"#,
        r#"{"spec":{"replicas":1,"selector":{"matchLabels":{"app":"x"}},"template":{"metadata":{"creationTimestamp":null,"labels":{"app":"x"}},"spec":{"containers":[{"image":"nginx","imagePullPolicy":"Always","name":"c","resources":{},"terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File"},{"image":"busybox:1.2","imagePullPolicy":"IfNotPresent","name":"d","resources":{},"terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File"}],"dnsPolicy":"ClusterFirst","restartPolicy":"Always","schedulerName":"default-scheduler","securityContext":{},"terminationGracePeriodSeconds":30}}},"status":{"replicas":0}}"#,
    ),
    (
        "apis/batch/v1",
        "jobs",
        r#"{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"j"},"spec":{"template":{"spec":{"restartPolicy":"Never","containers":[{"name":"c","image":"busybox"}]}}}}"#,
        r#"{"spec":{"backoffLimit":6,"completions":1,"parallelism":1,"selector":{"matchLabels":{"controller-uid":"UID"}},"template":{"metadata":{"creationTimestamp":null,"labels":{"controller-uid":"UID","job-name":"j"}},"spec":{"containers":[{"image":"busybox","imagePullPolicy":"Always","name":"c","resources":{},"terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File"}],"dnsPolicy":"ClusterFirst","restartPolicy":"Never","schedulerName":"default-scheduler","securityContext":{},"terminationGracePeriodSeconds":30}}},"status":{}}"#,
    ),
    (
        "apis/batch/v1beta1",
        "cronjobs",
        r#"{"apiVersion":"batch/v1beta1","kind":"CronJob","metadata":{"name":"cj"},"spec":{"schedule":"* * * * *","jobTemplate":{"spec":{"template":{"spec":{"restartPolicy":"Never","containers":[{"name":"c","image":"busybox"}]}}}}}}"#,
        r#"{"spec":{"concurrencyPolicy":"Allow","failedJobsHistoryLimit":1,"jobTemplate":{"metadata":{"creationTimestamp":null},"spec":{"template":{"metadata":{"creationTimestamp":null},"spec":{"containers":[{"image":"busybox","imagePullPolicy":"Always","name":"c","resources":{},"terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File"}],"dnsPolicy":"ClusterFirst","restartPolicy":"Never","schedulerName":"default-scheduler","securityContext":{},"terminationGracePeriodSeconds":30}}}},"schedule":"* * * * *","successfulJobsHistoryLimit":3,"suspend":false},"status":{}}"#,
    ),
    (
        "api/v1",
        "pods",
        r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"nginx:latest","ports":[{"containerPort":80}]}],"initContainers":[{"name":"i","image":"busybox@sha256:abc"}]}}"#,
        r#"{"spec":{"containers":[{"image":"nginx:latest","imagePullPolicy":"Always","name":"c","ports":[{"containerPort":80,"protocol":"TCP"}],"resources":{},"terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File"}],"dnsPolicy":"ClusterFirst","enableServiceLinks":true,"initContainers":[{"image":"busybox@sha256:abc","imagePullPolicy":"IfNotPresent","name":"i","resources":{},"terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File"}],"preemptionPolicy":"PreemptLowerPriority","priority":0,"restartPolicy":"Always","schedulerName":"default-scheduler","securityContext":{},"terminationGracePeriodSeconds":30,"tolerations":[{"effect":"NoExecute","key":"node.kubernetes.io/not-ready","operator":"Exists","tolerationSeconds":300},{"effect":"NoExecute","key":"node.kubernetes.io/unreachable","operator":"Exists","tolerationSeconds":300}]},"status":{"phase":"Pending","qosClass":"BestEffort"}}"#,
    ),
    (
        "api/v1",
        "secrets",
        r#"{"apiVersion":"v1","kind":"Secret","metadata":{"name":"sec"},"stringData":{"a":"b"}}"#,
        r#"{"data":{"a":"Yg=="},"type":"Opaque"}"#,
    ),
];

#[tokio::test]
async fn new_workloads_pods_and_secrets_read_back_defaulted_as_on_the_real_server() {
    let c = cluster().await;
    let ns = c.create_namespace("workload-defaults").await.unwrap();
    for (gv, plural, body, want) in CASES {
        let body: Value = serde_json::from_str(body).unwrap();
        let path = format!("/{gv}/namespaces/{ns}/{plural}");
        let created = c.client().post(&path, &body).await.unwrap();
        assert_eq!(created.status, 201, "{plural}: {}", created.body);
        let mut got = created.body.clone();
        let uid = got["metadata"]["uid"].as_str().unwrap().to_string();
        for f in ["metadata", "apiVersion", "kind"] {
            got.as_object_mut().unwrap().remove(f);
        }
        let want: Value = serde_json::from_str(&want.replace("UID", &uid)).unwrap();
        assert_eq!(got, want, "{plural}");
    }
}
