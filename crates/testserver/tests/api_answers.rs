//! Answers a client of kube-apiserver 1.20.2 relies on, checked on both tiers: field selectors
//! on absent fields, reviews, conflicts, what DELETE returns, the bootstrap objects and the pod
//! subresources no kubelet serves here.

use serde_json::json;

use crate::common::cluster;

#[tokio::test]
async fn field_selectors_read_absent_fields_as_their_defaults() {
    let c = cluster().await;
    let ns = c.create_namespace("fields").await.unwrap();
    let node = json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": ns}});
    assert_eq!(
        c.client()
            .post("/api/v1/nodes", &node)
            .await
            .unwrap()
            .status,
        201
    );
    let names = |sel: &'static str| {
        let c = &c;
        async move {
            let r = c
                .client()
                .get(&format!("/api/v1/nodes?fieldSelector={sel}"))
                .await
                .unwrap();
            assert_eq!(r.status, 200, "{sel}: {}", r.body);
            r.body["items"]
                .as_array()
                .unwrap()
                .iter()
                .map(|i| i["metadata"]["name"].as_str().unwrap().to_string())
                .collect::<Vec<_>>()
        }
    };
    assert!(names("spec.unschedulable%3Dfalse").await.contains(&ns));
    assert!(!names("spec.unschedulable%3Dtrue").await.contains(&ns));
    let bad = c
        .client()
        .get("/api/v1/nodes?fieldSelector=spec.podCIDR%3Dx")
        .await
        .unwrap();
    assert_eq!(bad.status, 400, "{}", bad.body);
    assert_eq!(
        c.client()
            .delete(&format!("/api/v1/nodes/{ns}"))
            .await
            .unwrap()
            .status,
        200
    );
}

#[tokio::test]
async fn reviews_allow_the_servers_user() {
    let c = cluster().await;
    let review = json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
        "spec": {"resourceAttributes": {"verb": "create", "resource": "pods", "namespace": "default"}}});
    let r = c
        .client()
        .post(
            "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
            &review,
        )
        .await
        .unwrap();
    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(r.body["kind"], "SelfSubjectAccessReview");
    assert_eq!(r.body["status"]["allowed"], true);
    assert_eq!(r.body["spec"]["resourceAttributes"]["resource"], "pods");
}

#[tokio::test]
async fn delete_answers_the_object_or_a_status_as_the_real_server() {
    let c = cluster().await;
    let ns = c.create_namespace("delete-answers").await.unwrap();
    let svc = json!({"metadata": {"name": "s"}, "spec": {"ports": [{"port": 80}]}});
    let base = format!("/api/v1/namespaces/{ns}");
    assert_eq!(
        c.client()
            .post(&format!("{base}/services"), &svc)
            .await
            .unwrap()
            .status,
        201
    );
    let sa = json!({"metadata": {"name": "robot"}});
    assert_eq!(
        c.client()
            .post(&format!("{base}/serviceaccounts"), &sa)
            .await
            .unwrap()
            .status,
        201
    );
    let gone = c
        .client()
        .delete(&format!("{base}/services/s"))
        .await
        .unwrap();
    assert_eq!(
        (gone.status.as_u16(), gone.body["kind"].as_str()),
        (200, Some("Status"))
    );
    let gone = c
        .client()
        .delete(&format!("{base}/serviceaccounts/robot"))
        .await
        .unwrap();
    assert_eq!(
        (gone.status.as_u16(), gone.body["kind"].as_str()),
        (200, Some("ServiceAccount"))
    );
}

#[tokio::test]
async fn a_fresh_server_holds_the_bootstrap_objects_and_conflicts_are_409() {
    let c = cluster().await;
    for name in ["cluster-admin", "admin", "edit", "view", "system:discovery"] {
        let r = c
            .client()
            .get(&format!(
                "/apis/rbac.authorization.k8s.io/v1/clusterroles/{name}"
            ))
            .await
            .unwrap();
        assert_eq!(r.status, 200, "{name}");
    }
    let pc = c
        .client()
        .get("/apis/scheduling.k8s.io/v1/priorityclasses/system-node-critical")
        .await
        .unwrap();
    assert_eq!(pc.body["value"], 2000001000);
    let fs = c
        .client()
        .get("/apis/flowcontrol.apiserver.k8s.io/v1beta1/flowschemas/catch-all")
        .await
        .unwrap();
    assert_eq!(fs.status, 200);
    let api_service = json!({"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService", "metadata": {"name": "v1.apps"},
        "spec": {"group": "apps", "version": "v1", "groupPriorityMinimum": 100, "versionPriority": 10}});
    let r = c
        .client()
        .post("/apis/apiregistration.k8s.io/v1/apiservices", &api_service)
        .await
        .unwrap();
    assert_eq!(
        (r.status.as_u16(), r.body["reason"].as_str()),
        (409, Some("AlreadyExists")),
        "{}",
        r.body
    );
    let role = json!({"metadata": {"name": "view"}, "rules": []});
    let r = c
        .client()
        .post("/apis/rbac.authorization.k8s.io/v1/clusterroles", &role)
        .await
        .unwrap();
    assert_eq!(
        (r.status.as_u16(), r.body["reason"].as_str()),
        (409, Some("AlreadyExists"))
    );
}

#[tokio::test]
async fn pods_on_no_node_answer_as_the_real_server() {
    let c = cluster().await;
    let ns = c.create_namespace("pod-subresources").await.unwrap();
    // A scheduler nobody runs, so a full cluster's scheduler leaves the pod on no node too.
    let pod = json!({"metadata": {"name": "p"}, "spec": {"schedulerName": "kcache-no-scheduler",
        "containers": [{"name": "c", "image": "busybox"}]}});
    let base = format!("/api/v1/namespaces/{ns}/pods");
    assert_eq!(c.client().post(&base, &pod).await.unwrap().status, 201);
    let exec = c
        .client()
        .get(&format!("{base}/p/exec?command=ls"))
        .await
        .unwrap();
    assert_eq!(exec.status, 400);
    assert_eq!(exec.body["message"], "pod p does not have a host assigned");
    let log = c.client().get(&format!("{base}/p/log")).await.unwrap();
    assert_eq!(log.status, 204, "no log without a kubelet: {}", log.body);
    let binding = json!({"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "p"}, "target": {"kind": "Node", "name": "n1"}});
    let bound = c
        .client()
        .post(&format!("{base}/p/binding"), &binding)
        .await
        .unwrap();
    assert_eq!(bound.status, 201, "{}", bound.body);
    let got = c.client().get(&format!("{base}/p")).await.unwrap();
    assert_eq!(got.body["spec"]["nodeName"], "n1");
}

#[tokio::test]
async fn services_are_defaulted_and_given_addresses_and_ports() {
    let c = cluster().await;
    let ns = c.create_namespace("services").await.unwrap();
    let base = format!("/api/v1/namespaces/{ns}/services");
    let create = |name: &str, spec: serde_json::Value| {
        let (c, base) = (&c, &base);
        let body = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": name}, "spec": spec});
        async move {
            let r = c.client().post(base, &body).await.unwrap();
            assert_eq!(r.status, 201, "{}", r.body);
            r.body
        }
    };
    let plain = create(
        "plain",
        json!({"ports": [{"port": 80}], "selector": {"a": "b"}}),
    )
    .await;
    let spec = &plain["spec"];
    assert_eq!(spec["type"], "ClusterIP");
    assert_eq!(spec["sessionAffinity"], "None");
    assert_eq!(spec["ports"][0]["protocol"], "TCP");
    assert_eq!(spec["ports"][0]["targetPort"], 80);
    let ip = spec["clusterIP"].as_str().unwrap().to_string();
    // From the server's service range: kube-apiserver's default 10.0.0.0/24 on the test server
    // and envtest, kind's own 10.96.0.0/12 there.
    assert!(ip.parse::<std::net::Ipv4Addr>().is_ok(), "{ip}");
    if c.server().is_some() {
        assert!(ip.starts_with("10.0.0."), "{ip}");
    }
    assert_eq!(spec["clusterIPs"], json!([ip]));
    assert_eq!(plain["status"], json!({"loadBalancer": {}}));
    assert!(spec.get("externalTrafficPolicy").is_none(), "{spec}");

    let node_port = create(
        "np",
        json!({"type": "NodePort", "ports": [{"port": 80, "targetPort": "http"}]}),
    )
    .await;
    let port = node_port["spec"]["ports"][0]["nodePort"].as_u64().unwrap();
    assert!((30000..=32767).contains(&port), "{port}");
    assert_eq!(node_port["spec"]["ports"][0]["targetPort"], "http");
    assert_eq!(node_port["spec"]["externalTrafficPolicy"], "Cluster");
    assert_ne!(node_port["spec"]["clusterIP"], ip.as_str());

    let headless = create(
        "headless",
        json!({"clusterIP": "None", "ports": [{"port": 80}]}),
    )
    .await;
    assert_eq!(headless["spec"]["clusterIPs"], json!(["None"]));
    let external = create(
        "external",
        json!({"type": "ExternalName", "externalName": "example.com"}),
    )
    .await;
    assert!(external["spec"].get("clusterIP").is_none(), "{external}");
    assert_eq!(external["status"], json!({"loadBalancer": {}}));

    // An address in use is refused, as the allocator refuses it.
    let taken =
        json!({"metadata": {"name": "taken"}, "spec": {"clusterIP": ip, "ports": [{"port": 80}]}});
    let r = c.client().post(&base, &taken).await.unwrap();
    assert_eq!(r.status, 422, "{}", r.body);
    assert_eq!(r.body["details"]["causes"][0]["field"], "spec.clusterIPs");

    // Several ports need names.
    let patch = json!({"spec": {"ports": [{"name": "new", "port": 8080}]}});
    let path = format!("{base}/plain");
    let strategic = "application/strategic-merge-patch+json";
    let r = c.client().patch(&path, strategic, &patch).await.unwrap();
    assert_eq!(r.status, 422, "{}", r.body);
    assert_eq!(
        r.body["details"]["causes"][0]["field"],
        "spec.ports[1].name"
    );

    // A strategic merge patch adds a port (merged by `port`, new ones first), keeping the
    // address.
    let named = json!({"spec": {"ports": [{"name": "web", "port": 80}]}});
    let r = c.client().patch(&path, strategic, &named).await.unwrap();
    assert_eq!(r.status, 200, "{}", r.body);
    let r = c.client().patch(&path, strategic, &patch).await.unwrap();
    assert_eq!(r.status, 200, "{}", r.body);
    let ports: Vec<_> = r.body["spec"]["ports"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["name"].clone(),
                p["port"].clone(),
                p["targetPort"].clone(),
            )
        })
        .collect();
    assert_eq!(
        ports,
        [
            (json!("new"), json!(8080), json!(8080)),
            (json!("web"), json!(80), json!(80))
        ]
    );
    assert_eq!(r.body["spec"]["clusterIP"], ip.as_str());

    // 1.20.2 does not carry the address over an update that leaves it out.
    let mut update = r.body.clone();
    update["spec"].as_object_mut().unwrap().remove("clusterIP");
    update["spec"].as_object_mut().unwrap().remove("clusterIPs");
    let r = c.client().put(&path, &update).await.unwrap();
    assert_eq!(r.status, 422, "{}", r.body);
    assert_eq!(
        r.body["details"]["causes"][0]["field"],
        "spec.clusterIPs[0]"
    );
}

/// kube-apiserver 1.20.2 checks that an Event's namespace agrees with its involved object's in
/// every version, and that an event with an `eventTime` names its reporter: an `eventTime`
/// event about a cluster-scoped object belongs in `kube-system` (the `default` namespace
/// kube-rs's and client-go's recorders pick is refused), an old-style one in `default`.
#[tokio::test]
async fn events_agree_with_their_involved_objects_namespace() {
    let c = cluster().await;
    let ns = c.create_namespace("event-ns").await.unwrap();
    let core = |ns: &str| format!("/api/v1/namespaces/{ns}/events");
    let node = json!({"kind": "Node", "name": ns, "apiVersion": "v1"});
    let time = "2021-01-13T13:20:00.000000Z";
    let reporter = json!({"reportingController": "example.com/ctl", "reportingInstance": "i",
        "action": "Test", "reason": "Test", "type": "Normal", "eventTime": time});
    let with = |mut base: serde_json::Value, name: &str, extra: serde_json::Value| {
        base["metadata"] = json!({"name": name});
        for (k, v) in extra.as_object().unwrap() {
            base[k] = v.clone();
        }
        base
    };
    let refused = |r: kcache_testing::RawResponse| {
        assert_eq!(r.status, 422, "{}", r.body);
        r.body["details"]["causes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| format!("{} {}", c["field"].as_str().unwrap(), c["message"]))
            .collect::<Vec<_>>()
    };
    let mismatch = |v: &str| {
        format!("involvedObject.namespace \"Invalid value: \\\"{v}\\\": does not match event.namespace\"")
    };

    // events.k8s.io/v1, about a cluster-scoped object, in a namespace other than kube-system.
    let events_v1 = format!("/apis/events.k8s.io/v1/namespaces/{ns}/events");
    let regarding = json!({"regarding": node});
    let r = c
        .client()
        .post(&events_v1, &with(reporter.clone(), "a", regarding))
        .await
        .unwrap();
    // Named as the core kind it is validated as, whichever group the write came in.
    let message = r.body["message"].as_str().unwrap_or_default();
    assert!(message.starts_with("Event \"a\" is invalid: "), "{message}");
    assert_eq!(r.body["details"]["group"], json!(null));
    assert_eq!(refused(r), [mismatch("")]);

    // Old-style core events: a cluster-scoped object's in `default` only, a namespaced
    // object's in its own namespace.
    let old = json!({"involvedObject": node, "reason": "Test"});
    let r = c
        .client()
        .post(&core(&ns), &with(old.clone(), "b", json!({})))
        .await
        .unwrap();
    assert_eq!(refused(r), [mismatch("")]);
    let pod = json!({"kind": "Pod", "name": "p", "namespace": "elsewhere"});
    let other = with(old.clone(), "c", json!({"involvedObject": pod}));
    let r = c.client().post(&core(&ns), &other).await.unwrap();
    assert_eq!(refused(r), [mismatch("elsewhere")]);
    let name = format!("{ns}.old");
    let path = format!("{}/{name}", core("default"));
    let r = c
        .client()
        .post(&core("default"), &with(old, &name, json!({})))
        .await
        .unwrap();
    assert_eq!(r.status, 201, "{}", r.body);
    // An update is checked too.
    let mut moved = r.body.clone();
    moved["involvedObject"]["namespace"] = json!(ns);
    let r = c.client().put(&path, &moved).await.unwrap();
    assert_eq!(refused(r), [mismatch(&ns)]);
    assert_eq!(c.client().delete(&path).await.unwrap().status, 200);

    // A core event with an eventTime must name its reporter, action and reason.
    let own = json!({"kind": "Pod", "name": "p", "namespace": ns});
    let timed = json!({"involvedObject": own, "eventTime": time, "reason": "Test"});
    let r = c
        .client()
        .post(&core(&ns), &with(timed, "d", json!({})))
        .await
        .unwrap();
    let fields: Vec<String> = refused(r)
        .iter()
        .map(|c| c.split(' ').next().unwrap().to_string())
        .collect();
    assert_eq!(
        fields,
        [
            "reportingController",
            "reportingController",
            "reportingController",
            "reportingInstance",
            "action"
        ]
    );

    // An events.k8s.io event about a node is stored in kube-system; once it has an eventTime,
    // the server compares a namespaced object's namespace with nothing.
    let name = format!("{ns}.node");
    let system = "/apis/events.k8s.io/v1/namespaces/kube-system/events";
    let ok = with(reporter.clone(), &name, json!({"regarding": node}));
    let r = c.client().post(system, &ok).await.unwrap();
    assert_eq!(r.status, 201, "{}", r.body);
    let mut moved = r.body.clone();
    moved["regarding"] = json!({"kind": "Pod", "name": "p", "namespace": ns});
    let r = c
        .client()
        .put(&format!("{system}/{name}"), &moved)
        .await
        .unwrap();
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(
        c.client()
            .delete(&format!("{system}/{name}"))
            .await
            .unwrap()
            .status,
        200
    );
}

/// A request without credentials to a server that checks tokens runs as `system:anonymous`
/// (kube-apiserver's default `--anonymous-auth`): it may read the version and health, and
/// everything else is 403 worded from the request; a wrong token is 401 everywhere.
#[tokio::test]
async fn requests_without_credentials_are_the_anonymous_users() {
    let c = cluster().await;
    let ns = c.create_namespace("anonymous").await.unwrap();
    let anonymous = kcache_testing::RawClient::new(c.base_url(), c.ca_pem(), None).unwrap();
    for path in ["/version", "/healthz"] {
        assert_eq!(anonymous.get(path).await.unwrap().status, 200, "{path}");
    }
    let refused = |r: kcache_testing::RawResponse| {
        assert_eq!(r.status, 403, "{}", r.body);
        assert_eq!(r.body["reason"], "Forbidden");
        let message = r.body["message"].as_str().unwrap().to_string();
        (message, r.body["details"].clone())
    };
    let (message, details) = refused(anonymous.get("/api").await.unwrap());
    assert_eq!(
        message,
        r#"forbidden: User "system:anonymous" cannot get path "/api""#
    );
    assert_eq!(details, json!({}));
    let log = format!("/api/v1/namespaces/{ns}/pods/x/log");
    let (message, details) = refused(anonymous.get(&log).await.unwrap());
    assert_eq!(
        message,
        format!(
            r#"pods "x" is forbidden: User "system:anonymous" cannot get resource "pods/log" in API group "" in the namespace "{ns}""#
        )
    );
    assert_eq!(details, json!({"name": "x", "kind": "pods"}));
    let r = anonymous
        .get("/apis/apps/v1/deployments?watch=true")
        .await
        .unwrap();
    let (message, details) = refused(r);
    assert_eq!(
        message,
        r#"deployments.apps is forbidden: User "system:anonymous" cannot watch resource "deployments" in API group "apps" at the cluster scope"#
    );
    assert_eq!(details, json!({"group": "apps", "kind": "deployments"}));
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}});
    let r = anonymous
        .post(&format!("/api/v1/namespaces/{ns}/configmaps"), &cm)
        .await
        .unwrap();
    assert!(refused(r)
        .0
        .contains(r#"cannot create resource "configmaps""#));

    let wrong = kcache_testing::RawClient::new(c.base_url(), c.ca_pem(), Some("wrong")).unwrap();
    for path in ["/version", "/api"] {
        let r = wrong.get(path).await.unwrap();
        assert_eq!(r.status, 401, "{path}: {}", r.body);
        assert_eq!(r.body["reason"], "Unauthorized");
    }
}
