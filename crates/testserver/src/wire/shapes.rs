//! The Go field order of the built-in types served here (k8s.io/api 1.20): each shape lists
//! a struct's JSON fields in declaration order, with the shape of the fields that are
//! structs themselves (or lists of them). Maps and leaves have none.

/// A struct's fields in declaration order, each with its own shape if it is a struct (a
/// shape on a list applies to its items).
#[derive(Debug)]
pub(crate) struct Shape<'a>(pub(crate) &'a [(&'a str, Option<&'a Shape<'a>>)]);

macro_rules! shape {
    ($($name:literal $(=> $sub:expr)?),* $(,)?) => {
        Shape(&[$(($name, shape!(@sub $($sub)?))),*])
    };
    (@sub) => { None };
    (@sub $sub:expr) => { Some(&$sub) };
}

/// The shape of the built-in `kind` of `group`.
pub(super) fn for_kind(group: &str, kind: &str) -> Option<&'static Shape<'static>> {
    Some(match (group, kind) {
        ("", "Namespace") => &NAMESPACE,
        ("", "ConfigMap") => &CONFIG_MAP,
        ("", "Secret") => &SECRET,
        ("", "Pod") => &POD,
        ("", "Service") => &SERVICE,
        ("", "Event") => &CORE_EVENT,
        ("", "ServiceAccount") => &SERVICE_ACCOUNT,
        ("", "Status") => &STATUS,
        ("", "APIVersions") => &API_VERSIONS,
        ("", "APIGroupList") => &API_GROUP_LIST,
        ("", "APIGroup") => &API_GROUP,
        ("", "APIResourceList") => &API_RESOURCE_LIST,
        ("coordination.k8s.io", "Lease") => &LEASE,
        ("apps", "Deployment") => &DEPLOYMENT,
        ("apiextensions.k8s.io", "CustomResourceDefinition") => &CRD,
        ("rbac.authorization.k8s.io", "Role" | "ClusterRole") => &ROLE,
        ("rbac.authorization.k8s.io", "RoleBinding" | "ClusterRoleBinding") => &ROLE_BINDING,
        ("", "Node") => &NODE,
        ("", "ComponentStatus") => &COMPONENT_STATUS,
        ("apps", "ReplicaSet") => &REPLICA_SET,
        ("apps", "StatefulSet") => &STATEFUL_SET,
        ("autoscaling", "Scale") => &SCALE,
        ("batch", "Job") => &JOB,
        ("batch", "CronJob") => &CRON_JOB,
        ("certificates.k8s.io", "CertificateSigningRequest") => &CSR,
        ("authentication.k8s.io", "TokenReview") => &TOKEN_REVIEW,
        ("authentication.k8s.io", "TokenRequest") => &TOKEN_REQUEST,
        ("events.k8s.io", "Event") => &EVENTS_EVENT,
        ("apiregistration.k8s.io", "APIService") => &API_SERVICE,
        _ => return None,
    })
}

pub(super) static OBJECT_META: Shape<'static> = shape![
    "name",
    "generateName",
    "namespace",
    "selfLink",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "labels",
    "annotations",
    "ownerReferences" => OWNER_REFERENCE,
    "finalizers",
    "clusterName",
    "managedFields" => MANAGED_FIELDS_ENTRY,
];

static OWNER_REFERENCE: Shape<'static> = shape![
    "apiVersion",
    "kind",
    "name",
    "uid",
    "controller",
    "blockOwnerDeletion",
];

static MANAGED_FIELDS_ENTRY: Shape<'static> = shape![
    "manager",
    "operation",
    "apiVersion",
    "time",
    "fieldsType",
    "fieldsV1",
];

pub(super) static LIST_META: Shape<'static> = shape![
    "selfLink",
    "resourceVersion",
    "continue",
    "remainingItemCount"
];

static STATUS: Shape<'static> = shape![
    "kind",
    "apiVersion",
    "metadata" => LIST_META,
    "status",
    "message",
    "reason",
    "details" => STATUS_DETAILS,
    "code",
];

static STATUS_DETAILS: Shape<'static> = shape![
    "name",
    "group",
    "kind",
    "uid",
    "causes" => STATUS_CAUSE,
    "retryAfterSeconds",
];

static STATUS_CAUSE: Shape<'static> = shape!["reason", "message", "field"];

/// `version.Info` (`/version`), which has no `kind`.
pub(crate) static VERSION_INFO: Shape<'static> = shape![
    "major",
    "minor",
    "gitVersion",
    "gitCommit",
    "gitTreeState",
    "buildDate",
    "goVersion",
    "compiler",
    "platform",
];

// Discovery.

static API_VERSIONS: Shape<'static> = shape![
    "kind",
    "apiVersion",
    "versions",
    "serverAddressByClientCIDRs" => SERVER_ADDRESS,
];

static SERVER_ADDRESS: Shape<'static> = shape!["clientCIDR", "serverAddress"];

static API_GROUP_LIST: Shape<'static> = shape!["kind", "apiVersion", "groups" => API_GROUP];

static API_GROUP: Shape<'static> = shape![
    "kind",
    "apiVersion",
    "name",
    "versions" => GROUP_VERSION,
    "preferredVersion" => GROUP_VERSION,
    "serverAddressByClientCIDRs" => SERVER_ADDRESS,
];

static GROUP_VERSION: Shape<'static> = shape!["groupVersion", "version"];

static API_RESOURCE_LIST: Shape<'static> = shape![
    "kind",
    "apiVersion",
    "groupVersion",
    "resources" => API_RESOURCE,
];

static API_RESOURCE: Shape<'static> = shape![
    "name",
    "singularName",
    "namespaced",
    "group",
    "version",
    "kind",
    "verbs",
    "shortNames",
    "categories",
    "storageVersionHash",
];

// core/v1.

static NAMESPACE: Shape<'static> = shape![
    "kind",
    "apiVersion",
    "metadata" => OBJECT_META,
    "spec",
    "status" => NAMESPACE_STATUS,
];

static NAMESPACE_STATUS: Shape<'static> = shape!["phase", "conditions" => CONDITION];

/// The condition types of namespaces, pods, nodes, jobs, CRDs, APIServices and
/// `metav1.Condition` (no type has more than one of `observedGeneration`,
/// `lastHeartbeatTime` and `lastProbeTime`).
static CONDITION: Shape<'static> = shape![
    "type",
    "status",
    "observedGeneration",
    "lastHeartbeatTime",
    "lastProbeTime",
    "lastTransitionTime",
    "reason",
    "message",
];

static CONFIG_MAP: Shape<'static> = shape![
    "kind",
    "apiVersion",
    "metadata" => OBJECT_META,
    "immutable",
    "data",
    "binaryData",
];

static SECRET: Shape<'static> = shape![
    "kind",
    "apiVersion",
    "metadata" => OBJECT_META,
    "immutable",
    "data",
    "stringData",
    "type",
];

static SERVICE_ACCOUNT: Shape<'static> = shape![
    "kind",
    "apiVersion",
    "metadata" => OBJECT_META,
    "secrets" => OBJECT_REFERENCE,
    "imagePullSecrets",
    "automountServiceAccountToken",
];

static POD: Shape<'static> = shape![
    "kind",
    "apiVersion",
    "metadata" => OBJECT_META,
    "spec" => POD_SPEC,
    "status" => POD_STATUS,
];

static POD_SPEC: Shape<'static> = shape![
    "volumes",
    "initContainers" => CONTAINER,
    "containers" => CONTAINER,
    "ephemeralContainers" => CONTAINER,
    "restartPolicy",
    "terminationGracePeriodSeconds",
    "activeDeadlineSeconds",
    "dnsPolicy",
    "nodeSelector",
    "serviceAccountName",
    "serviceAccount",
    "automountServiceAccountToken",
    "nodeName",
    "hostNetwork",
    "hostPID",
    "hostIPC",
    "shareProcessNamespace",
    "securityContext",
    "imagePullSecrets",
    "hostname",
    "subdomain",
    "affinity",
    "schedulerName",
    "tolerations" => TOLERATION,
    "hostAliases",
    "priorityClassName",
    "priority",
    "dnsConfig",
    "readinessGates",
    "runtimeClassName",
    "enableServiceLinks",
    "preemptionPolicy",
    "overhead",
    "topologySpreadConstraints",
    "setHostnameAsFQDN",
];

static CONTAINER: Shape<'static> = shape![
    "name",
    "image",
    "command",
    "args",
    "workingDir",
    "ports" => CONTAINER_PORT,
    "envFrom",
    "env" => ENV_VAR,
    "resources",
    "volumeMounts",
    "volumeDevices",
    "livenessProbe",
    "readinessProbe",
    "startupProbe",
    "lifecycle",
    "terminationMessagePath",
    "terminationMessagePolicy",
    "imagePullPolicy",
    "securityContext",
    "stdin",
    "stdinOnce",
    "tty",
];

static CONTAINER_PORT: Shape<'static> =
    shape!["name", "hostPort", "containerPort", "protocol", "hostIP"];

static ENV_VAR: Shape<'static> = shape!["name", "value", "valueFrom"];

static TOLERATION: Shape<'static> =
    shape!["key", "operator", "value", "effect", "tolerationSeconds"];

static POD_STATUS: Shape<'static> = shape![
    "phase",
    "conditions" => CONDITION,
    "message",
    "reason",
    "nominatedNodeName",
    "hostIP",
    "podIP",
    "podIPs",
    "startTime",
    "initContainerStatuses" => CONTAINER_STATUS,
    "containerStatuses" => CONTAINER_STATUS,
    "qosClass",
    "ephemeralContainerStatuses" => CONTAINER_STATUS,
];

static CONTAINER_STATUS: Shape<'static> = shape![
    "name",
    "state",
    "lastState",
    "ready",
    "restartCount",
    "image",
    "imageID",
    "containerID",
    "started",
];

static SERVICE: Shape<'static> = shape![
    "kind",
    "apiVersion",
    "metadata" => OBJECT_META,
    "spec" => SERVICE_SPEC,
    "status" => SERVICE_STATUS,
];

static SERVICE_SPEC: Shape<'static> = shape![
    "ports" => SERVICE_PORT,
    "selector",
    "clusterIP",
    "clusterIPs",
    "type",
    "externalIPs",
    "sessionAffinity",
    "loadBalancerIP",
    "loadBalancerSourceRanges",
    "externalName",
    "externalTrafficPolicy",
    "healthCheckNodePort",
    "publishNotReadyAddresses",
    "sessionAffinityConfig",
    "topologyKeys",
    "ipFamily",
    "ipFamilies",
    "ipFamilyPolicy",
    "allocateLoadBalancerNodePorts",
];

static SERVICE_PORT: Shape<'static> = shape![
    "name",
    "protocol",
    "appProtocol",
    "port",
    "targetPort",
    "nodePort",
];

static SERVICE_STATUS: Shape<'static> = shape!["loadBalancer", "conditions" => CONDITION];

static CORE_EVENT: Shape<'static> = shape![
    "kind",
    "apiVersion",
    "metadata" => OBJECT_META,
    "involvedObject" => OBJECT_REFERENCE,
    "reason",
    "message",
    "source",
    "firstTimestamp",
    "lastTimestamp",
    "count",
    "type",
    "eventTime",
    "series",
    "action",
    "related" => OBJECT_REFERENCE,
    "reportingComponent",
    "reportingInstance",
];

static OBJECT_REFERENCE: Shape<'static> = shape![
    "kind",
    "namespace",
    "name",
    "uid",
    "apiVersion",
    "resourceVersion",
    "fieldPath",
];

// coordination.k8s.io/v1.

static LEASE: Shape<'static> = shape![
    "kind",
    "apiVersion",
    "metadata" => OBJECT_META,
    "spec" => LEASE_SPEC,
];

static LEASE_SPEC: Shape<'static> = shape![
    "holderIdentity",
    "leaseDurationSeconds",
    "acquireTime",
    "renewTime",
    "leaseTransitions",
];

// apps/v1.

static DEPLOYMENT: Shape<'static> = shape![
    "kind",
    "apiVersion",
    "metadata" => OBJECT_META,
    "spec" => DEPLOYMENT_SPEC,
    "status" => DEPLOYMENT_STATUS,
];

static DEPLOYMENT_SPEC: Shape<'static> = shape![
    "replicas",
    "selector" => LABEL_SELECTOR,
    "template" => POD_TEMPLATE_SPEC,
    "strategy",
    "minReadySeconds",
    "revisionHistoryLimit",
    "paused",
    "progressDeadlineSeconds",
];

static LABEL_SELECTOR: Shape<'static> = shape!["matchLabels", "matchExpressions" => REQUIREMENT];

static REQUIREMENT: Shape<'static> = shape!["key", "operator", "values"];

static POD_TEMPLATE_SPEC: Shape<'static> = shape!["metadata" => OBJECT_META, "spec" => POD_SPEC];

static DEPLOYMENT_STATUS: Shape<'static> = shape![
    "observedGeneration",
    "replicas",
    "updatedReplicas",
    "readyReplicas",
    "availableReplicas",
    "unavailableReplicas",
    "conditions" => DEPLOYMENT_CONDITION,
    "collisionCount",
];

static DEPLOYMENT_CONDITION: Shape<'static> = shape![
    "type",
    "status",
    "lastUpdateTime",
    "lastTransitionTime",
    "reason",
    "message",
];

// apiextensions.k8s.io/v1.

static CRD: Shape<'static> = shape![
    "kind",
    "apiVersion",
    "metadata" => OBJECT_META,
    "spec" => CRD_SPEC,
    "status" => CRD_STATUS,
];

static CRD_SPEC: Shape<'static> = shape![
    "group",
    "names" => CRD_NAMES,
    "scope",
    "versions" => CRD_VERSION,
    "conversion",
    "preserveUnknownFields",
];

static CRD_NAMES: Shape<'static> = shape![
    "plural",
    "singular",
    "shortNames",
    "kind",
    "listKind",
    "categories",
];

static CRD_VERSION: Shape<'static> = shape![
    "name",
    "served",
    "storage",
    "deprecated",
    "deprecationWarning",
    "schema",
    "subresources",
    "additionalPrinterColumns",
];

static CRD_STATUS: Shape<'static> = shape![
    "conditions" => CONDITION,
    "acceptedNames" => CRD_NAMES,
    "storedVersions",
];

// rbac.authorization.k8s.io/v1.

static ROLE: Shape<'static> = shape![
    "kind",
    "apiVersion",
    "metadata" => OBJECT_META,
    "rules" => POLICY_RULE,
    "aggregationRule",
];

static POLICY_RULE: Shape<'static> = shape![
    "verbs",
    "apiGroups",
    "resources",
    "resourceNames",
    "nonResourceURLs",
];

static ROLE_BINDING: Shape<'static> = shape![
    "kind",
    "apiVersion",
    "metadata" => OBJECT_META,
    "subjects" => SUBJECT,
    "roleRef" => ROLE_REF,
];

static SUBJECT: Shape<'static> = shape!["kind", "apiGroup", "name", "namespace"];

static ROLE_REF: Shape<'static> = shape!["apiGroup", "kind", "name"];

// The other built-in kinds clients touch.

static NODE: Shape<'static> = shape![
    "kind",
    "apiVersion",
    "metadata" => OBJECT_META,
    "spec" => NODE_SPEC,
    "status" => NODE_STATUS,
];

static NODE_SPEC: Shape<'static> = shape![
    "podCIDR",
    "podCIDRs",
    "providerID",
    "unschedulable",
    "taints",
    "configSource",
    "externalID",
];

static NODE_STATUS: Shape<'static> = shape![
    "capacity",
    "allocatable",
    "phase",
    "conditions" => CONDITION,
    "addresses" => NODE_ADDRESS,
    "daemonEndpoints",
    "nodeInfo" => NODE_INFO,
    "images",
    "volumesInUse",
    "volumesAttached",
    "config",
];

static NODE_ADDRESS: Shape<'static> = shape!["type", "address"];

static NODE_INFO: Shape<'static> = shape![
    "machineID",
    "systemUUID",
    "bootID",
    "kernelVersion",
    "osImage",
    "containerRuntimeVersion",
    "kubeletVersion",
    "kubeProxyVersion",
    "operatingSystem",
    "architecture",
];

static COMPONENT_STATUS: Shape<'static> = shape![
    "kind",
    "apiVersion",
    "metadata" => OBJECT_META,
    "conditions" => COMPONENT_CONDITION,
];

static COMPONENT_CONDITION: Shape<'static> = shape!["type", "status", "message", "error"];

static REPLICA_SET: Shape<'static> = shape![
    "kind",
    "apiVersion",
    "metadata" => OBJECT_META,
    "spec" => REPLICA_SET_SPEC,
    "status" => REPLICA_SET_STATUS,
];

static REPLICA_SET_SPEC: Shape<'static> = shape![
    "replicas",
    "minReadySeconds",
    "selector" => LABEL_SELECTOR,
    "template" => POD_TEMPLATE_SPEC,
];

static REPLICA_SET_STATUS: Shape<'static> = shape![
    "replicas",
    "fullyLabeledReplicas",
    "readyReplicas",
    "availableReplicas",
    "observedGeneration",
    "conditions" => CONDITION,
];

static STATEFUL_SET: Shape<'static> = shape![
    "kind",
    "apiVersion",
    "metadata" => OBJECT_META,
    "spec" => STATEFUL_SET_SPEC,
    "status" => STATEFUL_SET_STATUS,
];

static STATEFUL_SET_SPEC: Shape<'static> = shape![
    "replicas",
    "selector" => LABEL_SELECTOR,
    "template" => POD_TEMPLATE_SPEC,
    "volumeClaimTemplates",
    "serviceName",
    "podManagementPolicy",
    "updateStrategy",
    "revisionHistoryLimit",
];

static STATEFUL_SET_STATUS: Shape<'static> = shape![
    "observedGeneration",
    "replicas",
    "readyReplicas",
    "currentReplicas",
    "updatedReplicas",
    "currentRevision",
    "updateRevision",
    "collisionCount",
    "conditions" => CONDITION,
];

static SCALE: Shape<'static> = shape![
    "kind",
    "apiVersion",
    "metadata" => OBJECT_META,
    "spec",
    "status" => SCALE_STATUS,
];

static SCALE_STATUS: Shape<'static> = shape!["replicas", "selector"];

static JOB: Shape<'static> = shape![
    "kind",
    "apiVersion",
    "metadata" => OBJECT_META,
    "spec" => JOB_SPEC,
    "status" => JOB_STATUS,
];

static JOB_SPEC: Shape<'static> = shape![
    "parallelism",
    "completions",
    "activeDeadlineSeconds",
    "backoffLimit",
    "selector" => LABEL_SELECTOR,
    "manualSelector",
    "template" => POD_TEMPLATE_SPEC,
    "ttlSecondsAfterFinished",
];

static JOB_STATUS: Shape<'static> = shape![
    "conditions" => CONDITION,
    "startTime",
    "completionTime",
    "active",
    "succeeded",
    "failed",
];

static CRON_JOB: Shape<'static> = shape![
    "kind",
    "apiVersion",
    "metadata" => OBJECT_META,
    "spec" => CRON_JOB_SPEC,
    "status" => CRON_JOB_STATUS,
];

static CRON_JOB_SPEC: Shape<'static> = shape![
    "schedule",
    "startingDeadlineSeconds",
    "concurrencyPolicy",
    "suspend",
    "jobTemplate" => JOB_TEMPLATE_SPEC,
    "successfulJobsHistoryLimit",
    "failedJobsHistoryLimit",
];

static JOB_TEMPLATE_SPEC: Shape<'static> = shape!["metadata" => OBJECT_META, "spec" => JOB_SPEC];

static CRON_JOB_STATUS: Shape<'static> = shape!["active" => OBJECT_REFERENCE, "lastScheduleTime"];

static CSR: Shape<'static> = shape![
    "kind",
    "apiVersion",
    "metadata" => OBJECT_META,
    "spec" => CSR_SPEC,
    "status" => CSR_STATUS,
];

static CSR_SPEC: Shape<'static> = shape![
    "request",
    "signerName",
    "usages",
    "username",
    "uid",
    "groups",
    "extra",
];

static CSR_STATUS: Shape<'static> = shape!["conditions" => CSR_CONDITION, "certificate"];

static CSR_CONDITION: Shape<'static> = shape![
    "type",
    "status",
    "reason",
    "message",
    "lastUpdateTime",
    "lastTransitionTime",
];

static TOKEN_REVIEW: Shape<'static> = shape![
    "kind",
    "apiVersion",
    "metadata" => OBJECT_META,
    "spec",
    "status" => TOKEN_REVIEW_STATUS,
];

static TOKEN_REVIEW_STATUS: Shape<'static> =
    shape!["authenticated", "user" => USER_INFO, "audiences", "error"];

static USER_INFO: Shape<'static> = shape!["username", "uid", "groups", "extra"];

static TOKEN_REQUEST: Shape<'static> = shape![
    "kind",
    "apiVersion",
    "metadata" => OBJECT_META,
    "spec" => TOKEN_REQUEST_SPEC,
    "status",
];

static TOKEN_REQUEST_SPEC: Shape<'static> = shape![
    "audiences",
    "expirationSeconds",
    "boundObjectRef" => OBJECT_REFERENCE,
];

static EVENTS_EVENT: Shape<'static> = shape![
    "kind",
    "apiVersion",
    "metadata" => OBJECT_META,
    "eventTime",
    "series",
    "reportingController",
    "reportingInstance",
    "action",
    "reason",
    "regarding" => OBJECT_REFERENCE,
    "related" => OBJECT_REFERENCE,
    "note",
    "type",
    "deprecatedSource",
    "deprecatedFirstTimestamp",
    "deprecatedLastTimestamp",
    "deprecatedCount",
];

static API_SERVICE: Shape<'static> = shape![
    "kind",
    "apiVersion",
    "metadata" => OBJECT_META,
    "spec" => API_SERVICE_SPEC,
    "status" => API_SERVICE_STATUS,
];

static API_SERVICE_STATUS: Shape<'static> = shape!["conditions" => CONDITION];

static SERVICE_REFERENCE: Shape<'static> = shape!["namespace", "name", "port"];

static API_SERVICE_SPEC: Shape<'static> = shape![
    "service" => SERVICE_REFERENCE,
    "group",
    "version",
    "insecureSkipTLSVerify",
    "caBundle",
    "groupPriorityMinimum",
    "versionPriority",
];
