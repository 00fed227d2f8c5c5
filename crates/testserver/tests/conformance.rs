//! API behaviour clients rely on, run against the embedded server on every `cargo test` and
//! against a real kube-apiserver by `cargo xtask integration --envtest`
//! (`KCACHE_TEST_KUBECONFIG`). The same assertions hold on both.

use crate::common;

use common::*;
use kcache_core::Status;
use serde_json::{json, Value};

fn sorted(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v
}

fn status(body: &Value) -> Status {
    serde_json::from_value(body.clone()).expect("a Status body")
}

#[tokio::test]
async fn create_get_update_and_conflict() {
    let c = cluster().await;
    let ns = c.create_namespace("conf-crud").await.unwrap();
    let created = create_cm(&c, &ns, "a", json!({})).await;
    assert!(created["metadata"]["uid"]
        .as_str()
        .is_some_and(|u| u.len() == 36));
    assert!(created["metadata"]["creationTimestamp"].is_string());
    let got = c.client().get(&format!("{}/a", cms(&ns))).await.unwrap();
    assert_eq!(got.body, created);

    let mut stale = created.clone();
    stale["data"] = json!({"k": "1"});
    let r1 = c
        .client()
        .put(&format!("{}/a", cms(&ns)), &stale)
        .await
        .unwrap();
    assert_eq!(r1.status, 200);
    assert!(rv(&r1.body) > rv(&created));
    stale["data"] = json!({"k": "2"});
    let r2 = c
        .client()
        .put(&format!("{}/a", cms(&ns)), &stale)
        .await
        .unwrap();
    assert_eq!(r2.status, 409);
    assert_eq!(
        status(&r2.body).message,
        "Operation cannot be fulfilled on configmaps \"a\": the object has been modified; please apply your changes to the latest version and try again"
    );
    assert_eq!(status(&r2.body).reason, "Conflict");
    // Writing back what is stored changes nothing, not even the resourceVersion.
    let same = c
        .client()
        .put(&format!("{}/a", cms(&ns)), &r1.body)
        .await
        .unwrap();
    assert_eq!(rv(&same.body), rv(&r1.body));
    let dup = c
        .client()
        .post(&cms(&ns), &cm("a", json!({})))
        .await
        .unwrap();
    assert_eq!(
        (dup.status.as_u16(), status(&dup.body).reason.as_str()),
        (409, "AlreadyExists")
    );
    let gen = c
        .client()
        .post(&cms(&ns), &json!({"metadata": {"generateName": "gen-"}}))
        .await
        .unwrap();
    let name = gen.body["metadata"]["name"].as_str().unwrap();
    assert!(name.starts_with("gen-") && name.len() == 9, "{name}");
    let missing = c.client().get(&format!("{}/nope", cms(&ns))).await.unwrap();
    assert_eq!(
        status(&missing.body).message,
        "configmaps \"nope\" not found"
    );
}

#[tokio::test]
async fn invalid_input_gets_a_status() {
    let c = cluster().await;
    let ns = c.create_namespace("conf-invalid").await.unwrap();
    let noname = c
        .client()
        .post(&cms(&ns), &json!({"metadata": {}}))
        .await
        .unwrap();
    assert_eq!(noname.status, 422);
    let s = status(&noname.body);
    assert_eq!(s.details.unwrap().causes[0].field, "metadata.name");
    let bad = c
        .client()
        .post(&cms(&ns), &cm("Bad_Name", json!({})))
        .await
        .unwrap();
    assert_eq!(bad.status, 422);
    assert!(status(&bad.body)
        .message
        .starts_with("ConfigMap \"Bad_Name\" is invalid: metadata.name: Invalid value"));
    let no_ns = c
        .client()
        .post(&cms("kcache-does-not-exist"), &cm("x", json!({})))
        .await
        .unwrap();
    assert_eq!(no_ns.status, 404);
    assert_eq!(
        status(&no_ns.body).message,
        "namespaces \"kcache-does-not-exist\" not found"
    );
    let not_json = c
        .client()
        .request(http::Method::POST, &cms(&ns), "application/json", "{bad")
        .await
        .unwrap();
    assert_eq!(not_json.status, 400);
    let wrong_kind = c
        .client()
        .post(
            &cms(&ns),
            &json!({"kind": "Secret", "apiVersion": "v1", "metadata": {"name": "s"}}),
        )
        .await
        .unwrap();
    assert_eq!(wrong_kind.status, 400);
    let huge = json!({"metadata": {"name": "huge"}, "data": {"k": "x".repeat(4 << 20)}});
    let too_big = c.client().post(&cms(&ns), &huge).await.unwrap();
    assert_eq!(too_big.status, 413, "{}", too_big.body);
    let list = c.client().get(&cms(&ns)).await.unwrap();
    assert!(names(&list.body).is_empty(), "nothing invalid was stored");
}

#[tokio::test]
async fn list_resource_versions_and_paging() {
    let c = cluster().await;
    let ns = c.create_namespace("conf-list").await.unwrap();
    for n in ["a", "b", "c", "d", "e"] {
        create_cm(&c, &ns, n, json!({"i": n})).await;
    }
    let all = c.client().get(&cms(&ns)).await.unwrap().body;
    assert_eq!(names(&all), ["a", "b", "c", "d", "e"]);
    let list_rv: u64 = all["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    // resourceVersion=0 is served from the watch cache, which ignores limit (and, in 1.20, order).
    let any = c
        .client()
        .get(&format!("{}?resourceVersion=0&limit=2", cms(&ns)))
        .await
        .unwrap()
        .body;
    assert_eq!(sorted(names(&any)), ["a", "b", "c", "d", "e"]);

    let p1 = c
        .client()
        .get(&format!("{}?limit=2", cms(&ns)))
        .await
        .unwrap()
        .body;
    assert_eq!(names(&p1), ["a", "b"]);
    // Writes after the first page are not visible in later pages: the list is a snapshot.
    create_cm(&c, &ns, "bb", json!({})).await;
    c.client().delete(&format!("{}/d", cms(&ns))).await.unwrap();
    let mut pages = vec![p1];
    while let Some(token) = pages.last().unwrap()["metadata"]["continue"]
        .as_str()
        .filter(|t| !t.is_empty())
    {
        let next = c
            .client()
            .get(&format!("{}?limit=2&continue={token}", cms(&ns)))
            .await
            .unwrap()
            .body;
        pages.push(next);
    }
    let own: Vec<Vec<String>> = pages.iter().map(names).collect();
    assert_eq!(own, [vec!["a", "b"], vec!["c", "d"], vec!["e"]]);
    // The count of the items after the first page includes what a full cluster's controllers
    // made (its root CA ConfigMap sorts last).
    let made: usize = pages.iter().map(made_by_cluster_count).sum();
    assert_eq!(pages[0]["metadata"]["remainingItemCount"], 3 + made);
    // Every page is served at the first page's resourceVersion (other writes in a full cluster
    // may have moved it past the earlier list's).
    let page_rv = pages[0]["metadata"]["resourceVersion"].as_str().unwrap();
    assert!(page_rv.parse::<u64>().unwrap() >= list_rv);
    for p in &pages {
        assert_eq!(p["metadata"]["resourceVersion"].as_str().unwrap(), page_rv);
    }

    let exact = c
        .client()
        .get(&format!(
            "{}?resourceVersion={list_rv}&resourceVersionMatch=Exact",
            cms(&ns)
        ))
        .await
        .unwrap();
    assert_eq!(names(&exact.body), ["a", "b", "c", "d", "e"]);
    let newest = c
        .client()
        .get(&format!(
            "{}?resourceVersion={list_rv}&resourceVersionMatch=NotOlderThan",
            cms(&ns)
        ))
        .await
        .unwrap();
    assert_eq!(sorted(names(&newest.body)), ["a", "b", "bb", "c", "e"]);

    let future = list_rv + 100_000;
    let too_new = c
        .client()
        .get(&format!("{}?resourceVersion={future}", cms(&ns)))
        .await
        .unwrap();
    assert_eq!(too_new.status, 504);
    let s = status(&too_new.body);
    assert!(s.is_too_large_resource_version(), "{s:?}");
    assert_eq!(s.retry_after_seconds(), Some(1));
}

#[tokio::test]
async fn selectors() {
    let c = cluster().await;
    let ns = c.create_namespace("conf-sel").await.unwrap();
    create_cm(&c, &ns, "web", json!({"app": "web", "tier": "front"})).await;
    create_cm(&c, &ns, "api", json!({"app": "api"})).await;
    create_cm(&c, &ns, "db", json!({"app": "db", "tier": "back"})).await;
    let q = |sel: &str| {
        let c = &c;
        let path = format!(
            "{}?labelSelector={}",
            cms(&ns),
            kcache_core::encode_query(&[("", sel.to_string())]).trim_start_matches('=')
        );
        async move { names(&c.client().get(&path).await.unwrap().body) }
    };
    assert_eq!(q("app=web").await, ["web"]);
    assert_eq!(q("app!=web").await, ["api", "db"]);
    assert_eq!(q("app in (api,db)").await, ["api", "db"]);
    assert_eq!(q("tier").await, ["db", "web"]);
    assert_eq!(q("!tier").await, ["api"]);
    assert_eq!(q("tier notin (front)").await, ["api", "db"]);
    let by_name = c
        .client()
        .get(&format!("{}?fieldSelector=metadata.name%3Dapi", cms(&ns)))
        .await
        .unwrap();
    assert_eq!(names(&by_name.body), ["api"]);
    let by_ns = c
        .client()
        .get(&format!(
            "/api/v1/configmaps?fieldSelector=metadata.namespace%3D{ns}"
        ))
        .await
        .unwrap();
    assert_eq!(names(&by_ns.body), ["api", "db", "web"]);
    let unknown = c
        .client()
        .get(&format!("{}?fieldSelector=spec.nope%3Dx", cms(&ns)))
        .await
        .unwrap();
    assert_eq!(unknown.status, 400);
    assert!(
        status(&unknown.body)
            .message
            .contains("\"spec.nope\" is not a known field selector"),
        "{}",
        unknown.body
    );
}

#[tokio::test]
async fn watch_from_resource_version_and_timeout() {
    let c = cluster().await;
    let ns = c.create_namespace("conf-watch").await.unwrap();
    let a = create_cm(&c, &ns, "a", json!({})).await;
    let mut a2 = a.clone();
    a2["data"] = json!({"k": "2"});
    c.client()
        .put(&format!("{}/a", cms(&ns)), &a2)
        .await
        .unwrap();
    create_cm(&c, &ns, "b", json!({})).await;
    let path = format!(
        "{}?watch=true&resourceVersion={}&timeoutSeconds=2",
        cms(&ns),
        rv(&a)
    );
    let mut w = c.client().watch(&path).await.unwrap().expect("watch opens");
    let got = read_until(&mut w, |e| e.len() == 2).await;
    assert_eq!(
        summary(&got),
        [
            ("MODIFIED".into(), "a".into()),
            ("ADDED".into(), "b".into())
        ]
    );
    c.client().delete(&format!("{}/b", cms(&ns))).await.unwrap();
    let del = read_until(&mut w, |e| !e.is_empty()).await;
    assert_eq!(summary(&del), [("DELETED".into(), "b".into())]);
    assert!(
        rv(&del[0]["object"]) > rv(&got[1]["object"]),
        "a deletion has its own resourceVersion"
    );
    // timeoutSeconds ends the stream cleanly.
    let rest = read_until(&mut w, |_| false).await;
    assert!(rest.is_empty(), "{rest:?}");

    // Without a resourceVersion the watch starts with the current state.
    let mut w = c
        .client()
        .watch(&format!("{}?watch=true&timeoutSeconds=1", cms(&ns)))
        .await
        .unwrap()
        .unwrap();
    let init = read_until(&mut w, |e| e.len() == 1).await;
    assert_eq!(summary(&init), [("ADDED".into(), "a".into())]);
}

#[tokio::test]
async fn watch_reports_objects_entering_and_leaving_the_selector() {
    let c = cluster().await;
    let ns = c.create_namespace("conf-enter").await.unwrap();
    let obj = create_cm(&c, &ns, "x", json!({"app": "other"})).await;
    let path = format!(
        "{}?watch=true&labelSelector=app%3Dweb&resourceVersion={}&timeoutSeconds=5",
        cms(&ns),
        rv(&obj)
    );
    let mut w = c.client().watch(&path).await.unwrap().unwrap();
    let url = format!("{}/x", cms(&ns));
    let merge = "application/merge-patch+json";
    c.client()
        .patch(
            &url,
            merge,
            &json!({"metadata": {"labels": {"app": "web"}}}),
        )
        .await
        .unwrap();
    c.client()
        .patch(&url, merge, &json!({"data": {"k": "changed"}}))
        .await
        .unwrap();
    let left = c
        .client()
        .patch(
            &url,
            merge,
            &json!({"metadata": {"labels": {"app": "gone"}}}),
        )
        .await
        .unwrap();
    let got = read_until(&mut w, |e| e.len() == 3).await;
    assert_eq!(
        summary(&got),
        [
            ("ADDED".into(), "x".into()),
            ("MODIFIED".into(), "x".into()),
            ("DELETED".into(), "x".into())
        ]
    );
    // The DELETED event of an object leaving the selector carries its old state at the new
    // resourceVersion.
    assert_eq!(got[2]["object"]["metadata"]["labels"]["app"], "web");
    assert_eq!(rv(&got[2]["object"]), rv(&left.body));
}

#[tokio::test]
async fn watch_older_than_the_window_is_expired() {
    let c = cluster().await;
    if c.is_real() {
        return skip(
            "watch_older_than_the_window_is_expired",
            "kube-apiserver >= 1.19 keeps every watch-cache event younger than 75 s, so a 410 cannot be forced quickly",
        );
    }
    let ns = c.create_namespace("conf-old").await.unwrap();
    let first = create_cm(&c, &ns, "first", json!({})).await;
    let url = format!("{}/churn", cms(&ns));
    create_cm(&c, &ns, "churn", json!({})).await;
    for i in 0..120 {
        let r = c
            .client()
            .patch(
                &url,
                "application/merge-patch+json",
                &json!({"data": {"i": i.to_string()}}),
            )
            .await
            .unwrap();
        assert_eq!(r.status, 200);
    }
    let path = format!(
        "{}?watch=true&resourceVersion={}&timeoutSeconds=5",
        cms(&ns),
        rv(&first)
    );
    let mut w = c
        .client()
        .watch(&path)
        .await
        .unwrap()
        .expect("the 410 travels as a watch event");
    let got = read_until(&mut w, |e| !e.is_empty()).await;
    assert_eq!(got[0]["type"], "ERROR");
    let s = status(&got[0]["object"]);
    assert!(s.is_gone(), "{s:?}");
    assert_eq!(s.reason, "Expired");
    assert!(
        s.message
            .starts_with(&format!("too old resource version: {} (", rv(&first))),
        "{}",
        s.message
    );
}

#[tokio::test]
async fn bookmarks_when_allowed() {
    let c = cluster().await;
    let ns = c.create_namespace("conf-bm").await.unwrap();
    let obj = create_cm(&c, &ns, "a", json!({})).await;
    let path = format!(
        "{}?watch=true&allowWatchBookmarks=true&resourceVersion={}&timeoutSeconds=5",
        cms(&ns),
        rv(&obj)
    );
    let mut w = c.client().watch(&path).await.unwrap().unwrap();
    let got = read_until(&mut w, |e| e.iter().any(|e| e["type"] == "BOOKMARK")).await;
    let bm = got.iter().find(|e| e["type"] == "BOOKMARK").unwrap();
    assert!(rv(&bm["object"]) >= rv(&obj));
    assert_eq!(bm["object"]["kind"], "ConfigMap");
}

#[tokio::test]
async fn watch_list_sends_initial_events_then_an_annotated_bookmark() {
    let c = cluster().await;
    let ns = c.create_namespace("conf-wl").await.unwrap();
    create_cm(&c, &ns, "a", json!({})).await;
    create_cm(&c, &ns, "b", json!({})).await;
    let path = format!("{}?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=5", cms(&ns));
    let mut w = match c.client().watch(&path).await.unwrap() {
        Ok(w) => w,
        Err(resp) if c.is_real() && resp.status == 422 => {
            let why = format!(
                "this kube-apiserver rejects sendInitialEvents (watch-list needs 1.27+): {}",
                resp.body["message"]
            );
            return skip("watch_list", &why);
        }
        Err(resp) => panic!("watch-list refused: {}", resp.body),
    };
    let got = read_until(&mut w, |e| e.iter().any(|e| e["type"] == "BOOKMARK")).await;
    assert_eq!(
        summary(&got[..2]),
        [("ADDED".into(), "a".into()), ("ADDED".into(), "b".into())]
    );
    assert_eq!(
        got[2]["object"]["metadata"]["annotations"][kcache_core::INITIAL_EVENTS_END_ANNOTATION],
        "true"
    );
}

#[tokio::test]
async fn finalizers_hold_deletion() {
    let c = cluster().await;
    let ns = c.create_namespace("conf-fin").await.unwrap();
    let mut body = cm("held", json!({}));
    body["metadata"]["finalizers"] = json!(["example.com/hold"]);
    let created = c.client().post(&cms(&ns), &body).await.unwrap().body;
    let url = format!("{}/held", cms(&ns));
    let path = format!(
        "{}?watch=true&resourceVersion={}&timeoutSeconds=5",
        cms(&ns),
        rv(&created)
    );
    let mut w = c.client().watch(&path).await.unwrap().unwrap();
    let del = c.client().delete(&url).await.unwrap();
    assert_eq!(del.status, 200);
    let held = c.client().get(&url).await.unwrap().body;
    assert!(held["metadata"]["deletionTimestamp"].is_string(), "{held}");
    let released = c
        .client()
        .patch(
            &url,
            "application/merge-patch+json",
            &json!({"metadata": {"finalizers": null}}),
        )
        .await
        .unwrap();
    assert_eq!(released.status, 200, "{}", released.body);
    assert_eq!(c.client().get(&url).await.unwrap().status, 404);
    let got = read_until(&mut w, |e| e.len() == 2).await;
    assert_eq!(
        summary(&got),
        [
            ("MODIFIED".into(), "held".into()),
            ("DELETED".into(), "held".into())
        ]
    );

    create_cm(&c, &ns, "x1", json!({"batch": "1"})).await;
    create_cm(&c, &ns, "x2", json!({"batch": "1"})).await;
    create_cm(&c, &ns, "keep", json!({})).await;
    let dc = c
        .client()
        .delete(&format!("{}?labelSelector=batch%3D1", cms(&ns)))
        .await
        .unwrap();
    assert_eq!(dc.status, 200);
    assert_eq!(
        names(&c.client().get(&cms(&ns)).await.unwrap().body),
        ["keep"]
    );
}

#[tokio::test]
async fn patch_types() {
    let c = cluster().await;
    let ns = c.create_namespace("conf-patch").await.unwrap();
    create_cm(&c, &ns, "p", json!({})).await;
    let url = format!("{}/p", cms(&ns));
    let m = c
        .client()
        .patch(
            &url,
            "application/merge-patch+json",
            &json!({"data": {"m": "1"}}),
        )
        .await
        .unwrap();
    assert_eq!(m.body["data"], json!({"k": "v", "m": "1"}));
    let j = c
        .client()
        .patch(
            &url,
            "application/json-patch+json",
            &json!([{"op": "remove", "path": "/data/k"}]),
        )
        .await
        .unwrap();
    assert_eq!(j.body["data"], json!({"m": "1"}));
    let s = c
        .client()
        .patch(
            &url,
            "application/strategic-merge-patch+json",
            &json!({"data": {"s": "2"}}),
        )
        .await
        .unwrap();
    assert_eq!(s.body["data"], json!({"m": "1", "s": "2"}));
    let stale = c
        .client()
        .patch(
            &url,
            "application/merge-patch+json",
            &json!({"metadata": {"resourceVersion": rv(&m.body).to_string()}, "data": {"x": "y"}}),
        )
        .await
        .unwrap();
    assert_eq!(stale.status, 409);
    let yaml = format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: applied\n  namespace: {ns}\ndata:\n  a: b\n");
    let apply_url = format!("{}/applied?fieldManager=kcache-test", cms(&ns));
    let created = c
        .client()
        .request(
            http::Method::PATCH,
            &apply_url,
            "application/apply-patch+yaml",
            yaml,
        )
        .await
        .unwrap();
    assert_eq!(created.status, 201, "{}", created.body);
    assert_eq!(created.body["data"], json!({"a": "b"}));
}

#[tokio::test]
async fn status_subresource_and_generation() {
    let c = cluster().await;
    let ns = c.create_namespace("conf-status").await.unwrap();
    let deploy = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "d"}},
                 "template": {"metadata": {"labels": {"app": "d"}}, "spec": {"containers": [{"name": "c", "image": "busybox"}]}}}});
    let base = format!("/apis/apps/v1/namespaces/{ns}/deployments");
    let d = c.client().post(&base, &deploy).await.unwrap();
    assert_eq!(d.status, 201, "{}", d.body);
    assert_eq!(d.body["metadata"]["generation"], 1);
    let url = format!("{base}/d");
    let merge = "application/merge-patch+json";
    let st = c
        .client()
        .patch(
            &format!("{url}/status"),
            merge,
            &json!({"status": {"observedGeneration": 1}, "spec": {"replicas": 5}}),
        )
        .await
        .unwrap();
    assert_eq!(st.status, 200, "{}", st.body);
    assert_eq!(st.body["status"]["observedGeneration"], 1);
    assert_eq!(
        st.body["spec"]["replicas"], 1,
        "a status write changes only status"
    );
    assert_eq!(st.body["metadata"]["generation"], 1);
    let sp = c
        .client()
        .patch(
            &url,
            merge,
            &json!({"spec": {"replicas": 2}, "status": {"observedGeneration": 9}}),
        )
        .await
        .unwrap();
    assert_eq!(sp.body["metadata"]["generation"], 2);
    assert_eq!(
        sp.body["status"]["observedGeneration"], 1,
        "the main resource ignores status"
    );
    let lb = c
        .client()
        .patch(&url, merge, &json!({"metadata": {"labels": {"x": "y"}}}))
        .await
        .unwrap();
    assert_eq!(
        lb.body["metadata"]["generation"], 2,
        "metadata changes do not bump generation"
    );
}

#[tokio::test]
async fn custom_resource_definitions_are_served() {
    let c = cluster().await;
    let ns = c.create_namespace("conf-crd").await.unwrap();
    let group = format!("{ns}.kcache.test");
    let crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("widgets.{group}")},
        "spec": {"group": group, "scope": "Namespaced",
                 "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
                 "versions": [{"name": "v1", "served": true, "storage": true, "subresources": {"status": {}},
                               "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]}});
    let r = c
        .client()
        .post(
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
            &crd,
        )
        .await
        .unwrap();
    assert_eq!(r.status, 201, "{}", r.body);
    let base = format!("/apis/{group}/v1/namespaces/{ns}/widgets");
    let w = json!({"apiVersion": format!("{group}/v1"), "kind": "Widget", "metadata": {"name": "w1"}, "spec": {"size": 1}});
    let mut created = None;
    for _ in 0..100 {
        let r = c.client().post(&base, &w).await.unwrap();
        if r.status == 201 {
            created = Some(r.body);
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let created = created.expect("the CRD's resource gets served");
    assert_eq!(created["metadata"]["generation"], 1);
    let disc = c.client().get(&format!("/apis/{group}/v1")).await.unwrap();
    assert!(
        disc.body["resources"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["name"] == "widgets/status"),
        "{}",
        disc.body
    );
    let st = c
        .client()
        .patch(
            &format!("{base}/w1/status"),
            "application/merge-patch+json",
            &json!({"status": {"ready": true}}),
        )
        .await
        .unwrap();
    assert_eq!(st.body["status"]["ready"], true);
    assert_eq!(names(&c.client().get(&base).await.unwrap().body), ["w1"]);
    let del = c
        .client()
        .delete(&format!(
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.{group}"
        ))
        .await
        .unwrap();
    assert_eq!(del.status, 200);
}

#[tokio::test]
async fn discovery_and_version() {
    let c = cluster().await;
    let v = c.client().get("/version").await.unwrap().body;
    assert!(v["gitVersion"].as_str().is_some_and(|g| !g.is_empty()));
    let api = c.client().get("/api").await.unwrap().body;
    assert_eq!(api["versions"], json!(["v1"]));
    let v1 = c.client().get("/api/v1").await.unwrap().body;
    let cmr = v1["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "configmaps")
        .unwrap()
        .clone();
    assert_eq!(cmr["namespaced"], true);
    assert!(cmr["verbs"].as_array().unwrap().contains(&json!("watch")));
    let groups = c.client().get("/apis").await.unwrap().body;
    let has = |g: &str| {
        groups["groups"]
            .as_array()
            .unwrap()
            .iter()
            .any(|x| x["name"] == g)
    };
    assert!(has("apps") && has("coordination.k8s.io") && has("apiextensions.k8s.io"));
    assert!(has("events.k8s.io"));
}
