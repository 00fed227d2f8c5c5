//! Resources served in several versions (and groups) over one stored object, as
//! kube-apiserver 1.20.2 serves them: written through one version, read, listed and watched
//! through the others in their own shapes. Run on both servers.

use serde_json::{json, Value};

use crate::common::{cluster, read_until};

/// The URL of `plural` in `namespace` for `api_version` (`group/version`).
fn collection(api_version: &str, ns: &str, plural: &str) -> String {
    format!("/apis/{api_version}/namespaces/{ns}/{plural}")
}

#[tokio::test]
async fn an_ingress_written_as_extensions_v1beta1_is_networking_v1_and_watched_there() {
    let c = cluster().await;
    let client = c.client();
    let ns = c.create_namespace("ingress-versions").await.unwrap();
    let v1 = collection("networking.k8s.io/v1", &ns, "ingresses");
    let list = client.get(&v1).await.unwrap();
    let rv = list.body["metadata"]["resourceVersion"].as_str().unwrap();
    let mut watch = client
        .watch(&format!("{v1}?watch=1&resourceVersion={rv}"))
        .await
        .unwrap()
        .unwrap_or_else(|r| panic!("watch: {}", r.body));
    let old = json!({"apiVersion": "extensions/v1beta1", "kind": "Ingress",
        "metadata": {"name": "web"},
        "spec": {"backend": {"serviceName": "default", "servicePort": 80},
                 "rules": [{"host": "a.example.com", "http": {"paths": [
                     {"path": "/", "backend": {"serviceName": "web", "servicePort": "http"}}]}}]}});
    let ext = collection("extensions/v1beta1", &ns, "ingresses");
    let created = client.post(&ext, &old).await.unwrap();
    assert_eq!(created.status, 201, "{}", created.body);
    assert_eq!(created.body["apiVersion"], "extensions/v1beta1");
    assert_eq!(
        created.body["spec"]["rules"][0]["http"]["paths"][0]["pathType"],
        "ImplementationSpecific"
    );

    let got = client.get(&format!("{v1}/web")).await.unwrap();
    assert_eq!(got.status, 200, "{}", got.body);
    assert_eq!(got.body["apiVersion"], "networking.k8s.io/v1");
    assert_eq!(
        got.body["spec"]["defaultBackend"],
        json!({"service": {"name": "default", "port": {"number": 80}}})
    );
    assert_eq!(
        got.body["spec"]["rules"][0]["http"]["paths"][0]["backend"],
        json!({"service": {"name": "web", "port": {"name": "http"}}})
    );
    assert_eq!(
        got.body["metadata"]["resourceVersion"],
        created.body["metadata"]["resourceVersion"]
    );
    let events = read_until(&mut watch, |evs| !evs.is_empty()).await;
    assert_eq!(events[0]["type"], "ADDED");
    assert_eq!(events[0]["object"]["apiVersion"], "networking.k8s.io/v1");
    assert!(events[0]["object"]["spec"]["defaultBackend"].is_object());

    let beta = collection("networking.k8s.io/v1beta1", &ns, "ingresses");
    let listed = client.get(&beta).await.unwrap();
    assert_eq!(listed.body["apiVersion"], "networking.k8s.io/v1beta1");
    let item = &listed.body["items"][0];
    assert_eq!(item["spec"]["backend"]["serviceName"], "default");
    assert_eq!(item["spec"]["backend"]["servicePort"], 80);

    // Written through v1: the next resourceVersion of the same object.
    let mut update = got.body.clone();
    update["spec"]["defaultBackend"]["service"]["port"] = json!({"number": 8080});
    let put = client.put(&format!("{v1}/web"), &update).await.unwrap();
    assert_eq!(put.status, 200, "{}", put.body);
    let old_again = client.get(&format!("{ext}/web")).await.unwrap();
    assert_eq!(old_again.body["spec"]["backend"]["servicePort"], 8080);
    let mut again = old;
    again["apiVersion"] = json!("networking.k8s.io/v1beta1");
    let again = client.post(&beta, &again).await.unwrap();
    assert_eq!(again.status, 409, "{}", again.body);
    assert_eq!(again.body["reason"], "AlreadyExists");
}

#[tokio::test]
async fn an_autoscaler_written_as_v1_reads_as_v2beta1_and_v2beta2() {
    let c = cluster().await;
    let client = c.client();
    let ns = c.create_namespace("hpa-versions").await.unwrap();
    let others = r#"[{"type":"Pods","pods":{"metricName":"qps","targetAverageValue":"10"}}]"#;
    let v1 = json!({"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "h", "annotations": {"autoscaling.alpha.kubernetes.io/metrics": others}},
        "spec": {"maxReplicas": 3, "targetCPUUtilizationPercentage": 50,
                 "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "d"}}});
    let created = client
        .post(
            &collection("autoscaling/v1", &ns, "horizontalpodautoscalers"),
            &v1,
        )
        .await
        .unwrap();
    assert_eq!(created.status, 201, "{}", created.body);
    assert_eq!(created.body["spec"]["minReplicas"], 1);
    assert_eq!(created.body["spec"]["targetCPUUtilizationPercentage"], 50);

    let v2 = collection("autoscaling/v2beta2", &ns, "horizontalpodautoscalers");
    let got = client.get(&format!("{v2}/h")).await.unwrap();
    assert_eq!(got.status, 200, "{}", got.body);
    assert_eq!(got.body["apiVersion"], "autoscaling/v2beta2");
    assert!(
        got.body["metadata"].get("annotations").is_none(),
        "{}",
        got.body
    );
    assert_eq!(
        got.body["spec"]["metrics"],
        json!([{"type": "Pods", "pods": {"metric": {"name": "qps"},
                 "target": {"type": "AverageValue", "averageValue": "10"}}},
               {"type": "Resource", "resource": {"name": "cpu",
                 "target": {"type": "Utilization", "averageUtilization": 50}}}])
    );
    let b1 = client
        .get(&collection(
            "autoscaling/v2beta1",
            &ns,
            "horizontalpodautoscalers",
        ))
        .await
        .unwrap();
    assert_eq!(
        b1.body["items"][0]["spec"]["metrics"],
        json!([{"type": "Pods", "pods": {"metricName": "qps", "targetAverageValue": "10"}},
               {"type": "Resource", "resource": {"name": "cpu", "targetAverageUtilization": 50}}])
    );

    // A v2beta2 autoscaler without metrics targets 80% cpu, which v1 shows as its own field.
    let bare = json!({"apiVersion": "autoscaling/v2beta2", "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "bare"},
        "spec": {"maxReplicas": 2, "scaleTargetRef": {"kind": "Deployment", "name": "d"}}});
    let made = client.post(&v2, &bare).await.unwrap();
    assert_eq!(made.status, 201, "{}", made.body);
    let as_v1 = client
        .get(&format!(
            "{}/bare",
            collection("autoscaling/v1", &ns, "horizontalpodautoscalers")
        ))
        .await
        .unwrap();
    assert_eq!(as_v1.body["spec"]["targetCPUUtilizationPercentage"], 80);
    assert!(as_v1.body["metadata"].get("annotations").is_none());
}

/// An autoscaler written as v2beta2 with part of a `behavior`: the rest defaulted, the status
/// written with its zero counts and `null` lists, and v1 and v2beta1 carrying the behavior in
/// the annotation with Go's field names, byte for byte as 1.20.2 writes it.
#[tokio::test]
async fn an_autoscalers_behavior_is_defaulted_and_annotated_as_the_real_server_does() {
    let c = cluster().await;
    let client = c.client();
    let ns = c.create_namespace("hpa-behavior").await.unwrap();
    let v2 = collection("autoscaling/v2beta2", &ns, "horizontalpodautoscalers");
    let hpa = json!({"apiVersion": "autoscaling/v2beta2", "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "h"},
        "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                 "maxReplicas": 5, "behavior": {"scaleUp": {"selectPolicy": "Min"}}}});
    let created = client.post(&v2, &hpa).await.unwrap();
    assert_eq!(created.status, 201, "{}", created.body);
    assert_eq!(
        created.body["spec"]["behavior"],
        json!({"scaleDown": {"policies": [{"periodSeconds": 15, "type": "Percent", "value": 100}], "selectPolicy": "Max"},
               "scaleUp": {"policies": [{"periodSeconds": 15, "type": "Pods", "value": 4}, {"periodSeconds": 15, "type": "Percent", "value": 100}],
                           "selectPolicy": "Min", "stabilizationWindowSeconds": 0}})
    );
    assert_eq!(
        created.body["status"],
        json!({"conditions": null, "currentMetrics": null, "currentReplicas": 0, "desiredReplicas": 0})
    );
    let annotation = r#"{"ScaleUp":{"StabilizationWindowSeconds":0,"SelectPolicy":"Min","Policies":[{"Type":"Pods","Value":4,"PeriodSeconds":15},{"Type":"Percent","Value":100,"PeriodSeconds":15}]},"ScaleDown":{"StabilizationWindowSeconds":null,"SelectPolicy":"Max","Policies":[{"Type":"Percent","Value":100,"PeriodSeconds":15}]}}"#;
    for version in ["autoscaling/v1", "autoscaling/v2beta1"] {
        let path = format!("{}/h", collection(version, &ns, "horizontalpodautoscalers"));
        let got = client.get(&path).await.unwrap();
        assert_eq!(got.status, 200, "{}", got.body);
        assert_eq!(
            got.body["metadata"]["annotations"]["autoscaling.alpha.kubernetes.io/behavior"],
            annotation,
            "{version}"
        );
        assert!(got.body["spec"].get("behavior").is_none(), "{version}");
    }
    let v1 = collection("autoscaling/v1", &ns, "horizontalpodautoscalers");
    let got = client.get(&format!("{v1}/h")).await.unwrap();
    assert_eq!(
        got.body["status"],
        json!({"currentReplicas": 0, "desiredReplicas": 0})
    );
}

#[tokio::test]
async fn a_v1beta1_webhook_configuration_reads_as_v1_with_v1beta1_defaults() {
    let c = cluster().await;
    let client = c.client();
    let ns = c.create_namespace("webhook-versions").await.unwrap();
    let hook = json!({"apiVersion": "admissionregistration.k8s.io/v1beta1",
        "kind": "ValidatingWebhookConfiguration", "metadata": {"name": ns},
        "webhooks": [{"name": "check.example.com",
                      "clientConfig": {"url": "https://check.example.com/"}}]});
    let b1 = "/apis/admissionregistration.k8s.io/v1beta1/validatingwebhookconfigurations";
    let created = client.post(b1, &hook).await.unwrap();
    assert_eq!(created.status, 201, "{}", created.body);
    let v1 = format!("/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/{ns}");
    let got = client.get(&v1).await.unwrap();
    assert_eq!(got.status, 200, "{}", got.body);
    assert_eq!(got.body["apiVersion"], "admissionregistration.k8s.io/v1");
    let w = &got.body["webhooks"][0];
    assert_eq!(w["failurePolicy"], "Ignore");
    assert_eq!(w["matchPolicy"], "Exact");
    assert_eq!(w["sideEffects"], "Unknown");
    assert_eq!(w["timeoutSeconds"], 30);
    assert_eq!(w["admissionReviewVersions"], json!(["v1beta1"]));
    let deleted = client.delete(&v1).await.unwrap();
    assert_eq!(deleted.status, 200, "{}", deleted.body);
}

/// The defaults every webhook gets, in both versions (selectors, rule scope, service port, a
/// mutating webhook's reinvocation policy), and v1's own, exactly as 1.20.2 answers a create.
#[tokio::test]
async fn a_v1_webhook_configuration_gets_v1_and_the_shared_defaults() {
    let c = cluster().await;
    let client = c.client();
    let name = c.create_namespace("webhook-defaults").await.unwrap();
    let hook = json!({"apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "MutatingWebhookConfiguration", "metadata": {"name": name},
        "webhooks": [{"name": "a.example.com", "sideEffects": "None", "admissionReviewVersions": ["v1"],
                      "clientConfig": {"service": {"namespace": "default", "name": "svc"}},
                      "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"]}]}]});
    let path = "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations";
    let created = client.post(path, &hook).await.unwrap();
    assert_eq!(created.status, 201, "{}", created.body);
    assert_eq!(
        created.body["webhooks"][0],
        json!({"admissionReviewVersions": ["v1"],
               "clientConfig": {"service": {"name": "svc", "namespace": "default", "port": 443}},
               "failurePolicy": "Fail", "matchPolicy": "Equivalent", "name": "a.example.com",
               "namespaceSelector": {}, "objectSelector": {}, "reinvocationPolicy": "Never",
               "rules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"],
                          "resources": ["pods"], "scope": "*"}],
               "sideEffects": "None", "timeoutSeconds": 10})
    );
    let deleted = client.delete(&format!("{path}/{name}")).await.unwrap();
    assert_eq!(deleted.status, 200, "{}", deleted.body);
}

#[tokio::test]
async fn a_role_written_as_v1beta1_is_listed_and_watched_as_v1() {
    let c = cluster().await;
    let client = c.client();
    let ns = c.create_namespace("rbac-versions").await.unwrap();
    let v1 = format!("/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/roles");
    let b1 = format!("/apis/rbac.authorization.k8s.io/v1beta1/namespaces/{ns}/roles");
    let list = client.get(&v1).await.unwrap();
    let rv = list.body["metadata"]["resourceVersion"].as_str().unwrap();
    let mut watch = client
        .watch(&format!("{v1}?watch=1&resourceVersion={rv}"))
        .await
        .unwrap()
        .unwrap_or_else(|r| panic!("watch: {}", r.body));
    let rules = json!([{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]);
    let role = json!({"apiVersion": "rbac.authorization.k8s.io/v1beta1", "kind": "Role",
        "metadata": {"name": "reader"}, "rules": rules});
    let created = client.post(&b1, &role).await.unwrap();
    assert_eq!(created.status, 201, "{}", created.body);
    let listed = client.get(&v1).await.unwrap();
    let items: Vec<&Value> = listed.body["items"].as_array().unwrap().iter().collect();
    assert_eq!(items.len(), 1, "{}", listed.body);
    assert_eq!(items[0]["rules"], rules);
    let events = read_until(&mut watch, |evs| !evs.is_empty()).await;
    assert_eq!(events[0]["type"], "ADDED");
    assert_eq!(
        events[0]["object"]["apiVersion"],
        "rbac.authorization.k8s.io/v1"
    );
    let deleted = client.delete(&format!("{v1}/reader")).await.unwrap();
    assert_eq!(deleted.status, 200, "{}", deleted.body);
    let gone = client.get(&format!("{b1}/reader")).await.unwrap();
    assert_eq!(gone.status, 404, "{}", gone.body);
    // What the server made at start is there in every version too.
    let admin = client
        .get("/apis/rbac.authorization.k8s.io/v1beta1/clusterroles/cluster-admin")
        .await
        .unwrap();
    assert_eq!(admin.status, 200, "{}", admin.body);
    assert_eq!(
        admin.body["apiVersion"],
        "rbac.authorization.k8s.io/v1beta1"
    );
}

#[tokio::test]
async fn core_events_and_events_api_events_are_one_object_with_renamed_fields() {
    let c = cluster().await;
    let client = c.client();
    let ns = c.create_namespace("event-versions").await.unwrap();
    let core = format!("/api/v1/namespaces/{ns}/events");
    let api = collection("events.k8s.io/v1", &ns, "events");
    let list = client.get(&api).await.unwrap();
    let rv = list.body["metadata"]["resourceVersion"].as_str().unwrap();
    let mut watch = client
        .watch(&format!(
            "{api}?watch=1&resourceVersion={rv}&fieldSelector=regarding.name%3Dp"
        ))
        .await
        .unwrap()
        .unwrap_or_else(|r| panic!("watch: {}", r.body));
    let old = json!({"apiVersion": "v1", "kind": "Event", "metadata": {"name": "e"},
        "involvedObject": {"kind": "Pod", "name": "p", "namespace": ns},
        "message": "pulled", "reason": "Pulled", "type": "Normal", "count": 2,
        "source": {"component": "kubelet"}});
    let created = client.post(&core, &old).await.unwrap();
    assert_eq!(created.status, 201, "{}", created.body);

    let got = client.get(&format!("{api}/e")).await.unwrap();
    assert_eq!(got.status, 200, "{}", got.body);
    assert_eq!(got.body["apiVersion"], "events.k8s.io/v1");
    assert_eq!(got.body["note"], "pulled");
    assert_eq!(got.body["regarding"]["name"], "p");
    assert_eq!(got.body["deprecatedCount"], 2);
    assert_eq!(got.body["deprecatedSource"]["component"], "kubelet");
    assert!(got.body.get("message").is_none(), "{}", got.body);
    let events = read_until(&mut watch, |evs| !evs.is_empty()).await;
    assert_eq!(events[0]["type"], "ADDED");
    assert_eq!(events[0]["object"]["note"], "pulled");

    let new = json!({"apiVersion": "events.k8s.io/v1beta1", "kind": "Event",
        "metadata": {"name": "n"}, "eventTime": "2021-01-13T13:20:00.000000Z",
        "reportingController": "kcache/test", "reportingInstance": "i", "action": "Test",
        "reason": "Test", "type": "Normal", "note": "hello",
        "regarding": {"kind": "Pod", "name": "q", "namespace": ns}});
    let beta = collection("events.k8s.io/v1beta1", &ns, "events");
    let made = client.post(&beta, &new).await.unwrap();
    assert_eq!(made.status, 201, "{}", made.body);
    let selected = client
        .get(&format!("{core}?fieldSelector=involvedObject.name%3Dq"))
        .await
        .unwrap();
    assert_eq!(selected.status, 200, "{}", selected.body);
    let items = selected.body["items"].as_array().unwrap();
    assert_eq!(items.len(), 1, "{}", selected.body);
    assert_eq!(items[0]["message"], "hello");
    assert_eq!(items[0]["reportingComponent"], "kcache/test");
    let by_regarding = client
        .get(&format!("{api}?fieldSelector=regarding.name%3Dq"))
        .await
        .unwrap();
    let items = by_regarding.body["items"].as_array().unwrap();
    assert_eq!(items.len(), 1, "{}", by_regarding.body);
    assert_eq!(items[0]["metadata"]["name"], "n");
    let again = client
        .post(&core, &{
            let mut o = old.clone();
            o["metadata"]["name"] = json!("n");
            o
        })
        .await
        .unwrap();
    assert_eq!(again.status, 409, "{}", again.body);
}
