//! The resources every cluster has and clients touch: the default namespaces and
//! `default/kubernetes` Service, nodes, service accounts with `/token`, token reviews, jobs
//! and cronjobs, RBAC, CSRs with `/approval`, component statuses and API services (the local
//! ones the server registers, and one a client registers). Run
//! against both servers like every conformance suite.

use crate::common;

use common::*;
use kcache_testing::TestCluster;
use serde_json::{json, Value};

fn resource_names(doc: &Value) -> Vec<String> {
    doc["resources"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|r| r["name"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

async fn created(c: &TestCluster, path: &str, body: Value) -> Value {
    let r = c.client().post(path, &body).await.unwrap();
    assert_eq!(r.status, 201, "POST {path}: {}", r.body);
    r.body
}

#[tokio::test]
async fn the_cluster_starts_with_its_namespaces_and_service() {
    let c = cluster().await;
    for ns in ["default", "kube-system", "kube-public", "kube-node-lease"] {
        let r = c
            .client()
            .get(&format!("/api/v1/namespaces/{ns}"))
            .await
            .unwrap();
        assert_eq!(r.status, 200, "namespace {ns}: {}", r.body);
    }
    let svc = c
        .client()
        .get("/api/v1/namespaces/default/services/kubernetes")
        .await
        .unwrap();
    assert_eq!(svc.status, 200, "{}", svc.body);
    assert_eq!(
        svc.body["metadata"]["labels"],
        json!({"component": "apiserver", "provider": "kubernetes"})
    );
    let port = &svc.body["spec"]["ports"][0];
    assert_eq!(
        (&port["name"], &port["port"], &port["protocol"]),
        (&json!("https"), &json!(443), &json!("TCP"))
    );
    assert_eq!(svc.body["spec"]["type"], "ClusterIP");
}

#[tokio::test]
async fn discovery_lists_the_cluster_resources() {
    let c = cluster().await;
    let get = |p: &'static str| {
        let c = &c;
        async move { resource_names(&c.client().get(p).await.unwrap().body) }
    };
    let core = get("/api/v1").await;
    for r in [
        "nodes",
        "serviceaccounts",
        "serviceaccounts/token",
        "componentstatuses",
        "services",
    ] {
        assert!(core.contains(&r.to_string()), "{r} in {core:?}");
    }
    let expect = [
        ("/apis/apps/v1", "replicasets/scale"),
        ("/apis/apps/v1", "statefulsets/scale"),
        ("/apis/batch/v1", "jobs"),
        ("/apis/batch/v1beta1", "cronjobs"),
        ("/apis/authentication.k8s.io/v1", "tokenreviews"),
        ("/apis/rbac.authorization.k8s.io/v1", "clusterrolebindings"),
        (
            "/apis/certificates.k8s.io/v1",
            "certificatesigningrequests/approval",
        ),
        ("/apis/apiregistration.k8s.io/v1", "apiservices"),
    ];
    for (path, r) in expect {
        let names = get(path).await;
        assert!(names.contains(&r.to_string()), "{r} in {path}: {names:?}");
    }
    let tr = c
        .client()
        .get("/apis/authentication.k8s.io/v1")
        .await
        .unwrap()
        .body;
    let verbs = tr["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "tokenreviews")
        .map(|r| r["verbs"].clone());
    assert_eq!(verbs, Some(json!(["create"])));
}

/// Categories as kube-apiserver 1.20 lists them: `kubectl get all` reads `all`.
#[tokio::test]
async fn discovery_lists_categories() {
    let c = cluster().await;
    let cases = [
        ("/api/v1", "pods", json!(["all"])),
        ("/api/v1", "services", json!(["all"])),
        ("/api/v1", "configmaps", Value::Null),
        ("/apis/apps/v1", "deployments", json!(["all"])),
        ("/apis/batch/v1", "jobs", json!(["all"])),
        (
            "/apis/apiextensions.k8s.io/v1",
            "customresourcedefinitions",
            json!(["api-extensions"]),
        ),
    ];
    for (path, plural, want) in cases {
        let doc = c.client().get(path).await.unwrap().body;
        let entry = doc["resources"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["name"] == plural)
            .cloned()
            .unwrap_or_else(|| panic!("{plural} in {path}"));
        assert_eq!(entry["categories"], want, "{plural}");
    }
}

#[tokio::test]
async fn service_account_tokens_and_reviews() {
    let c = cluster().await;
    let ns = c.create_namespace("cluster-sa").await.unwrap();
    created(
        &c,
        &format!("/api/v1/namespaces/{ns}/serviceaccounts"),
        json!({"metadata": {"name": "robot"}}),
    )
    .await;
    let token_url = format!("/api/v1/namespaces/{ns}/serviceaccounts/robot/token");
    let req = json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {"expirationSeconds": 3600}});
    let tr = created(&c, &token_url, req).await;
    assert_eq!(tr["kind"], "TokenRequest");
    assert_eq!(tr["apiVersion"], "authentication.k8s.io/v1");
    assert_eq!(
        tr["metadata"]["managedFields"][0]["fieldsV1"],
        json!({"f:spec": {"f:expirationSeconds": {}}}),
        "the API server runs its field manager on the request too"
    );
    let token = tr["status"]["token"].as_str().unwrap().to_string();
    assert_eq!(token.split('.').count(), 3, "a JWT: {token}");
    assert!(tr["status"]["expirationTimestamp"]
        .as_str()
        .is_some_and(|t| t.ends_with('Z')));

    let short = c
        .client()
        .post(&token_url, &json!({"spec": {"expirationSeconds": 10}}))
        .await
        .unwrap();
    assert_eq!(short.status, 422, "{}", short.body);
    assert_eq!(
        short.body["details"]["causes"][0]["field"],
        "spec.expirationSeconds"
    );
    assert_eq!(short.body["details"]["kind"], "TokenRequest");
    assert_eq!(short.body["details"]["group"], "authentication.k8s.io");
    let message = short.body["message"].as_str().unwrap_or_default();
    assert!(
        message.starts_with("TokenRequest.authentication.k8s.io \"")
            && message.contains("is invalid: spec.expirationSeconds: Invalid value: 10: "),
        "{message}"
    );
    let none = c
        .client()
        .post(
            &format!("/api/v1/namespaces/{ns}/serviceaccounts/nobody/token"),
            &json!({"spec": {}}),
        )
        .await
        .unwrap();
    assert_eq!(none.status, 404, "{}", none.body);

    let reviews = "/apis/authentication.k8s.io/v1/tokenreviews";
    let review = |t: &str| json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": {"token": t}});
    let ok = created(&c, reviews, review(&token)).await;
    assert_eq!(ok["status"]["authenticated"], true, "{ok}");
    assert_eq!(
        ok["status"]["user"]["username"],
        format!("system:serviceaccount:{ns}:robot")
    );
    let groups = ok["status"]["user"]["groups"].as_array().unwrap();
    assert!(groups.contains(&json!(format!("system:serviceaccounts:{ns}"))));
    if let Some(own) = c.token() {
        let me = created(&c, reviews, review(own)).await;
        assert_eq!(me["status"]["authenticated"], true, "{me}");
    }
    let bad = created(&c, reviews, review("not-a-token")).await;
    assert_ne!(bad["status"]["authenticated"], true, "{bad}");
    assert_eq!(bad["status"]["error"], "invalid bearer token");
    let list = c.client().get(reviews).await.unwrap();
    assert_eq!(
        list.status, 405,
        "tokenreviews are create-only: {}",
        list.body
    );
}

#[tokio::test]
async fn workloads_rbac_and_nodes_are_stored() {
    let c = cluster().await;
    let ns = c.create_namespace("cluster-store").await.unwrap();
    let template = json!({"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}});
    let job = created(&c, &format!("/apis/batch/v1/namespaces/{ns}/jobs"),
        json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"}, "spec": {"template": template}})).await;
    assert_eq!(job["kind"], "Job");
    let cron = json!({"apiVersion": "batch/v1beta1", "kind": "CronJob", "metadata": {"name": "cj"},
        "spec": {"schedule": "*/5 * * * *", "jobTemplate": {"spec": {"template": template}}}});
    let cj = created(
        &c,
        &format!("/apis/batch/v1beta1/namespaces/{ns}/cronjobs"),
        cron,
    )
    .await;
    assert_eq!(cj["spec"]["schedule"], "*/5 * * * *");
    let listed = c
        .client()
        .get(&format!("/apis/batch/v1beta1/namespaces/{ns}/cronjobs"))
        .await
        .unwrap();
    assert_eq!(names(&listed.body), ["cj"]);

    let rbac = "/apis/rbac.authorization.k8s.io/v1";
    let rules = json!([{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list"]}]);
    created(
        &c,
        &format!("{rbac}/namespaces/{ns}/roles"),
        json!({"metadata": {"name": "r"}, "rules": rules}),
    )
    .await;
    let subject = json!([{"kind": "ServiceAccount", "name": "default", "namespace": ns}]);
    created(&c, &format!("{rbac}/namespaces/{ns}/rolebindings"),
        json!({"metadata": {"name": "rb"}, "subjects": subject, "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "r"}})).await;
    let cr = created(
        &c,
        &format!("{rbac}/clusterroles"),
        json!({"metadata": {"name": format!("{ns}-cr")}, "rules": rules}),
    )
    .await;
    assert!(cr["metadata"].get("namespace").is_none());
    created(&c, &format!("{rbac}/clusterrolebindings"),
        json!({"metadata": {"name": format!("{ns}-crb")}, "subjects": subject,
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": format!("{ns}-cr")}})).await;

    let node = created(&c, "/api/v1/nodes", json!({"metadata": {"name": format!("{ns}-node"), "labels": {"kubernetes.io/hostname": ns}}})).await;
    assert_eq!(node["kind"], "Node");
    for path in [
        format!("/api/v1/nodes/{ns}-node"),
        format!("{rbac}/clusterrolebindings/{ns}-crb"),
        format!("{rbac}/clusterroles/{ns}-cr"),
    ] {
        assert_eq!(
            c.client().delete(&path).await.unwrap().status,
            200,
            "DELETE {path}"
        );
    }
}

#[tokio::test]
async fn certificate_signing_requests_are_approved() {
    let c = cluster().await;
    let ns = c.create_namespace("cluster-csr").await.unwrap();
    let key = rcgen::KeyPair::generate().unwrap();
    let params = rcgen::CertificateParams::new(vec![format!("{ns}.example")]).unwrap();
    let pem = params.serialize_request(&key).unwrap().pem().unwrap();
    use base64::Engine as _;
    let request = base64::engine::general_purpose::STANDARD.encode(pem);
    let name = format!("{ns}-csr");
    let base = "/apis/certificates.k8s.io/v1/certificatesigningrequests";
    let csr = created(&c, base, json!({"apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest",
        "metadata": {"name": name}, "spec": {"request": request, "signerName": "example.com/kcache", "usages": ["digital signature"]}})).await;
    let mut approval = csr.clone();
    approval["status"] = json!({"conditions": [{"type": "Approved", "status": "True", "reason": "KcacheTest", "message": "approved by a test"}]});
    let approved = c
        .client()
        .put(&format!("{base}/{name}/approval"), &approval)
        .await
        .unwrap();
    assert_eq!(approved.status, 200, "{}", approved.body);
    let got = c
        .client()
        .get(&format!("{base}/{name}"))
        .await
        .unwrap()
        .body;
    let cond = &got["status"]["conditions"][0];
    assert_eq!(
        (&cond["type"], &cond["status"], &cond["reason"]),
        (&json!("Approved"), &json!("True"), &json!("KcacheTest"))
    );
    assert_eq!(
        c.client()
            .delete(&format!("{base}/{name}"))
            .await
            .unwrap()
            .status,
        200
    );
}

#[tokio::test]
async fn component_statuses_are_a_view_and_api_services_are_registered() {
    let c = cluster().await;
    let cs = c.client().get("/api/v1/componentstatuses").await.unwrap();
    assert_eq!(cs.status, 200, "{}", cs.body);
    assert_eq!(cs.body["kind"], "ComponentStatusList");
    assert!(
        cs.body["items"][0].get("kind").is_none(),
        "list items carry no kind: {}",
        cs.body
    );
    let mut got = names(&cs.body);
    got.sort();
    assert_eq!(got, ["controller-manager", "etcd-0", "scheduler"]);
    let etcd = c
        .client()
        .get("/api/v1/componentstatuses/etcd-0")
        .await
        .unwrap()
        .body;
    assert_eq!(etcd["conditions"][0]["type"], "Healthy");
    assert_eq!(etcd["conditions"][0]["status"], "True");

    let svcs = c
        .client()
        .get("/apis/apiregistration.k8s.io/v1/apiservices")
        .await
        .unwrap();
    assert_eq!(svcs.status, 200, "{}", svcs.body);
    let all = names(&svcs.body);
    for want in [
        "v1.",
        "v1.apps",
        "v1.batch",
        "v1beta1.batch",
        "v1.authentication.k8s.io",
        "v1.rbac.authorization.k8s.io",
        "v1.certificates.k8s.io",
    ] {
        assert!(all.contains(&want.to_string()), "{want} in {all:?}");
    }
    assert!(
        !all.contains(&"v1.apiregistration.k8s.io".to_string()),
        "the aggregator lists no APIService for itself"
    );
    let apps = c
        .client()
        .get("/apis/apiregistration.k8s.io/v1/apiservices/v1.apps")
        .await
        .unwrap()
        .body;
    assert_eq!(apps["spec"]["group"], "apps");
    assert_eq!(apps["spec"]["version"], "v1");
    let available = &apps["status"]["conditions"][0];
    assert_eq!(
        (&available["type"], &available["status"]),
        (&json!("Available"), &json!("True"))
    );
    assert_eq!(
        apps["metadata"]["labels"]["kube-aggregator.kubernetes.io/automanaged"],
        "onstart"
    );

    // A client registers an aggregated API (nothing serves it, which the server does not
    // check at creation); registering it again is a 409 worded as the real server's.
    let ns = c.create_namespace("apiservice").await.unwrap();
    let name = format!("v1alpha1.{ns}.example.com");
    let path = "/apis/apiregistration.k8s.io/v1/apiservices";
    let api_service = json!({"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
        "metadata": {"name": name},
        "spec": {"insecureSkipTLSVerify": true, "group": format!("{ns}.example.com"), "version": "v1alpha1",
                 "groupPriorityMinimum": 1000, "versionPriority": 15,
                 "service": {"name": "api", "namespace": ns}}});
    let made = created(&c, path, api_service.clone()).await;
    assert_eq!(made["spec"]["service"]["name"], "api");
    let read = c.client().get(&format!("{path}/{name}")).await.unwrap();
    assert_eq!(read.status, 200, "{}", read.body);
    let again = c.client().post(path, &api_service).await.unwrap();
    assert_eq!(again.status, 409, "{}", again.body);
    assert_eq!(
        again.body,
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
               "message": format!("apiservices.apiregistration.k8s.io \"{name}\" already exists"),
               "reason": "AlreadyExists",
               "details": {"name": name, "group": "apiregistration.k8s.io", "kind": "apiservices"},
               "code": 409})
    );
    let listed = c.client().get(path).await.unwrap();
    assert!(names(&listed.body).contains(&name), "{}", listed.body);
    let gone = c.client().delete(&format!("{path}/{name}")).await.unwrap();
    assert_eq!(gone.status, 200, "{}", gone.body);
    let after = c.client().get(&format!("{path}/{name}")).await.unwrap();
    assert_eq!(after.status, 404, "{}", after.body);
}
