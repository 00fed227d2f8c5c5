//! How the server reads requests and writes answers, as kube-apiserver does: query parameters
//! (booleans, integers, unknown names), `dryRun`, `/version`, and the field order of the JSON
//! it writes. Run against the embedded server on every `cargo test` and against a real
//! kube-apiserver by the envtest tier (`KCACHE_TEST_KUBECONFIG`); the same assertions hold on
//! both.

use crate::common;

use std::fmt;

use common::*;
use http::Method;
use kcache_core::Status;
use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{json, Value};

fn status(body: &Value) -> Status {
    serde_json::from_value(body.clone()).expect("a Status body")
}

/// A JSON document with its object keys in the order they were written (serde_json's own
/// maps are sorted).
#[derive(Debug)]
enum Doc {
    Object(Vec<(String, Doc)>),
    Array(Vec<Doc>),
    Leaf,
}

impl Doc {
    fn parse(bytes: &[u8]) -> Doc {
        serde_json::from_slice(bytes)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(bytes)))
    }

    fn keys(&self) -> Vec<&str> {
        match self {
            Doc::Object(fields) => fields.iter().map(|(k, _)| k.as_str()).collect(),
            other => panic!("not an object: {other:?}"),
        }
    }

    fn get(&self, key: &str) -> &Doc {
        match self {
            Doc::Object(fields) => fields
                .iter()
                .find(|(k, _)| k == key)
                .map(|(_, v)| v)
                .unwrap_or_else(|| panic!("no {key:?} in {:?}", self.keys())),
            other => panic!("not an object: {other:?}"),
        }
    }

    fn at(&self, i: usize) -> &Doc {
        match self {
            Doc::Array(items) => &items[i],
            other => panic!("not an array: {other:?}"),
        }
    }

    /// Every object's keys are sorted (how Go writes a map, and so a custom resource).
    fn assert_sorted(&self, path: &str) {
        match self {
            Doc::Object(fields) => {
                let keys = self.keys();
                let mut sorted = keys.clone();
                sorted.sort_unstable();
                assert_eq!(keys, sorted, "keys of {path}");
                for (k, v) in fields {
                    v.assert_sorted(&format!("{path}.{k}"));
                }
            }
            Doc::Array(items) => items.iter().for_each(|i| i.assert_sorted(path)),
            Doc::Leaf => {}
        }
    }
}

impl<'de> Deserialize<'de> for Doc {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(DocVisitor)
    }
}

struct DocVisitor;

impl<'de> Visitor<'de> for DocVisitor {
    type Value = Doc;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("JSON")
    }
    fn visit_bool<E>(self, _: bool) -> Result<Doc, E> {
        Ok(Doc::Leaf)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Doc, E> {
        Ok(Doc::Leaf)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Doc, E> {
        Ok(Doc::Leaf)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Doc, E> {
        Ok(Doc::Leaf)
    }
    fn visit_str<E>(self, _: &str) -> Result<Doc, E> {
        Ok(Doc::Leaf)
    }
    fn visit_unit<E>(self) -> Result<Doc, E> {
        Ok(Doc::Leaf)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<Doc, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = a.next_element()? {
            items.push(item);
        }
        Ok(Doc::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Doc, A::Error> {
        let mut fields = Vec::new();
        while let Some(entry) = a.next_entry::<String, Doc>()? {
            fields.push(entry);
        }
        Ok(Doc::Object(fields))
    }
}

/// Asserts that every key of `doc` is a field of the Go struct whose fields are `order`, and
/// that they come in that order (the real server writes fields the embedded one does not
/// set, such as `managedFields`, so only the relative order is compared).
fn assert_go_order(what: &str, doc: &Doc, order: &[&str]) {
    let keys = doc.keys();
    let positions: Vec<usize> = keys
        .iter()
        .map(|k| {
            order
                .iter()
                .position(|o| o == k)
                .unwrap_or_else(|| panic!("{what}: {k:?} is not a field; keys {keys:?}"))
        })
        .collect();
    assert!(
        positions.windows(2).all(|w| w[0] < w[1]),
        "{what}: {keys:?} is not in the order {order:?}"
    );
}

const OBJECT_META: &[&str] = &[
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
    "ownerReferences",
    "finalizers",
    "clusterName",
    "managedFields",
];

/// The first BOOKMARK frame, as written, of a watch on the collection `base` from `from`.
/// kube-apiserver only sends a bookmark newer than where the watch started, so `other` is
/// created in `base` meanwhile; the watch's selector leaves it out.
async fn bookmark_frame(
    c: &kcache_testing::TestCluster,
    base: &str,
    from: u64,
    other: &Value,
) -> Doc {
    let path = format!(
        "{base}?watch=true&allowWatchBookmarks=true&labelSelector=kcache-bookmark%3Dnone&timeoutSeconds=5&resourceVersion={from}"
    );
    let client = c.client().clone();
    let watch = tokio::spawn(async move { client.get(&path).await.unwrap() });
    let created = c.client().post(base, other).await.unwrap();
    assert_eq!(created.status, 201, "{}", created.body);
    let r = watch.await.unwrap();
    let frame = r
        .raw
        .split(|b| *b == b'\n')
        .find(|l| l.starts_with(b"{\"type\":\"BOOKMARK\""))
        .unwrap_or_else(|| panic!("no bookmark: {}", String::from_utf8_lossy(&r.raw)));
    Doc::parse(frame)
}

/// Opens a watch on `path` and returns its first event, failing if the answer is not a watch.
async fn first_event(c: &kcache_testing::TestCluster, path: &str) -> Value {
    let mut w = c
        .client()
        .watch(path)
        .await
        .unwrap()
        .unwrap_or_else(|r| panic!("{path}: {} {}", r.status, r.body));
    let got = read_until(&mut w, |e| !e.is_empty()).await;
    got[0].clone()
}

#[tokio::test]
async fn watch_is_a_go_boolean_parameter() {
    let c = cluster().await;
    let ns = c.create_namespace("conf-watchbool").await.unwrap();
    create_cm(&c, &ns, "a", json!({})).await;
    // apimachinery's Convert_Slice_string_To_bool: only "false" (any case) and "0" are false;
    // everything else, the Python client's "True", "yes" and "" included, starts a watch.
    for v in ["True", "1", "T", "true", "TRUE", "yes", ""] {
        let path = format!("{}?watch={v}&timeoutSeconds=2", cms(&ns));
        let ev = first_event(&c, &path).await;
        assert_eq!(summary(&[ev]), [("ADDED".into(), "a".into())], "watch={v}");
    }
    let bare = first_event(&c, &format!("{}?timeoutSeconds=2&watch", cms(&ns))).await;
    assert_eq!(bare["type"], "ADDED", "a bare `watch` is a watch");
    for v in ["false", "0", "False", "FALSE"] {
        let r = c
            .client()
            .get(&format!("{}?watch={v}", cms(&ns)))
            .await
            .unwrap();
        assert_eq!(r.status, 200, "watch={v}");
        assert_eq!(r.body["kind"], "ConfigMapList", "watch={v}");
        assert_eq!(names(&r.body), ["a"]);
    }
}

#[tokio::test]
async fn other_boolean_parameters_parse_the_same_way() {
    let c = cluster().await;
    let ns = c.create_namespace("conf-bools").await.unwrap();
    create_cm(&c, &ns, "a", json!({})).await;
    let path = format!(
        "{}?watch=1&allowWatchBookmarks=True&timeoutSeconds=2",
        cms(&ns)
    );
    assert_eq!(first_event(&c, &path).await["type"], "ADDED");

    // orphanDependents=True on a DELETE: the orphan finalizer holds the object (no garbage
    // collector runs in either server).
    let url = format!("{}/a", cms(&ns));
    let del = c
        .client()
        .delete(&format!("{url}?orphanDependents=True"))
        .await
        .unwrap();
    assert_eq!(del.status, 200, "{}", del.body);
    assert_eq!(del.body["metadata"]["finalizers"], json!(["orphan"]));
    assert!(del.body["metadata"]["deletionTimestamp"].is_string());
    // A garbage collector (embedded, or kube-controller-manager's) removes the finalizer of an
    // object without dependents by itself; without one the client releases it.
    let release = c
        .client()
        .patch(
            &url,
            "application/merge-patch+json",
            &json!({"metadata": {"finalizers": null}}),
        )
        .await
        .unwrap();
    assert!(
        matches!(release.status.as_u16(), 200 | 404),
        "{}",
        release.body
    );
    assert_eq!(c.client().get(&url).await.unwrap().status, 404);

    // force is a boolean too, refused on anything but an apply patch.
    create_cm(&c, &ns, "b", json!({})).await;
    let forced = c
        .client()
        .patch(
            &format!("{}/b?force=False", cms(&ns)),
            "application/merge-patch+json",
            &json!({"data": {"k": "2"}}),
        )
        .await
        .unwrap();
    assert_eq!(forced.status, 422, "{}", forced.body);
    assert_eq!(
        status(&forced.body).message,
        "PatchOptions.meta.k8s.io \"\" is invalid: force: Forbidden: may not be specified for non-apply patch"
    );
}

#[tokio::test]
async fn integer_parameters_are_go_int64s() {
    let c = cluster().await;
    let ns = c.create_namespace("conf-ints").await.unwrap();
    create_cm(&c, &ns, "a", json!({})).await;
    create_cm(&c, &ns, "b", json!({})).await;
    let base = cms(&ns);
    for (query, value) in [
        ("limit=abc", "abc"),
        ("limit=", ""),
        ("limit=1.5", "1.5"),
        ("timeoutSeconds=soon", "soon"),
        ("watch=true&timeoutSeconds=x", "x"),
        ("watch=true&limit=ten", "ten"),
    ] {
        let r = c.client().get(&format!("{base}?{query}")).await.unwrap();
        assert_eq!(r.status, 400, "{query}: {}", r.body);
        let s = status(&r.body);
        assert_eq!(s.reason, "BadRequest", "{query}");
        assert_eq!(
            s.message,
            format!("strconv.ParseInt: parsing \"{value}\": invalid syntax"),
            "{query}"
        );
    }
    let big = c
        .client()
        .get(&format!("{base}?limit=99999999999999999999"))
        .await
        .unwrap();
    assert_eq!(big.status, 400);
    assert_eq!(
        status(&big.body).message,
        "strconv.ParseInt: parsing \"99999999999999999999\": value out of range"
    );
    let grace = c
        .client()
        .delete(&format!("{base}/a?gracePeriodSeconds=later"))
        .await
        .unwrap();
    assert_eq!(grace.status, 400, "{}", grace.body);
    assert_eq!(
        status(&grace.body).message,
        "strconv.ParseInt: parsing \"later\": invalid syntax"
    );
    // Good values: a negative limit is no limit, "+1" is 1.
    let all = c.client().get(&format!("{base}?limit=-1")).await.unwrap();
    assert_eq!(names(&all.body), ["a", "b"]);
    let one = c.client().get(&format!("{base}?limit=%2B1")).await.unwrap();
    assert_eq!(names(&one.body), ["a"]);
    assert!(one.body["metadata"]["continue"].is_string());
}

#[tokio::test]
async fn unknown_parameters_are_ignored() {
    let c = cluster().await;
    let ns = c.create_namespace("conf-unknown").await.unwrap();
    let created = c
        .client()
        .post(
            &format!("{}?kcacheUnknown=1&export=yes", cms(&ns)),
            &cm("a", json!({})),
        )
        .await
        .unwrap();
    assert_eq!(created.status, 201, "{}", created.body);
    let list = c
        .client()
        .get(&format!(
            "{}?kcacheUnknown=x&includeUninitialized=1",
            cms(&ns)
        ))
        .await
        .unwrap();
    assert_eq!(names(&list.body), ["a"]);
    // A GET of one object is a get whatever `watch` says.
    let one = c
        .client()
        .get(&format!("{}/a?watch=true&kcacheUnknown", cms(&ns)))
        .await
        .unwrap();
    assert_eq!(one.body["kind"], "ConfigMap");
}

#[tokio::test]
async fn dry_run_checks_and_answers_but_stores_nothing() {
    let c = cluster().await;
    let ns = c.create_namespace("conf-dryrun").await.unwrap();
    let base = cms(&ns);
    let url = format!("{base}/a");
    let mut held = cm("held", json!({}));
    held["metadata"]["finalizers"] = json!(["example.com/hold"]);
    assert_eq!(c.client().post(&base, &held).await.unwrap().status, 201);
    let deploy = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "d"}},
                 "template": {"metadata": {"labels": {"app": "d"}}, "spec": {"containers": [{"name": "c", "image": "busybox"}]}}}});
    let deployments = format!("/apis/apps/v1/namespaces/{ns}/deployments");
    let d = c.client().post(&deployments, &deploy).await.unwrap();
    assert_eq!(d.status, 201, "{}", d.body);
    let a = create_cm(&c, &ns, "a", json!({})).await;
    let rv_before = c.server().map(|s| s.resource_version());
    let watch_path = format!(
        "{base}?watch=true&resourceVersion={}&timeoutSeconds=10",
        rv(&a)
    );
    let mut w = c.client().watch(&watch_path).await.unwrap().unwrap();

    // create: validated and answered as created (uid, creationTimestamp), never stored.
    let dry = c
        .client()
        .post(&format!("{base}?dryRun=All"), &cm("b", json!({})))
        .await
        .unwrap();
    assert_eq!(dry.status, 201, "{}", dry.body);
    assert_eq!(dry.body["metadata"]["name"], "b");
    assert!(dry.body["metadata"]["uid"]
        .as_str()
        .is_some_and(|u| u.len() == 36));
    assert!(dry.body["metadata"]["creationTimestamp"].is_string());
    assert!(
        dry.body["metadata"].get("resourceVersion").is_none(),
        "{}",
        dry.body
    );
    assert_eq!(
        c.client().get(&format!("{base}/b")).await.unwrap().status,
        404
    );
    let generated = c
        .client()
        .post(
            &format!("{base}?dryRun=All"),
            &json!({"metadata": {"generateName": "g-"}}),
        )
        .await
        .unwrap();
    assert_eq!(generated.status, 201);
    assert!(generated.body["metadata"]["name"]
        .as_str()
        .is_some_and(|n| n.starts_with("g-") && n.len() == 7));
    let invalid = c
        .client()
        .post(&format!("{base}?dryRun=All"), &cm("Bad_Name", json!({})))
        .await
        .unwrap();
    assert_eq!(invalid.status, 422, "a dry run is validated");
    let exists = c
        .client()
        .post(&format!("{base}?dryRun=All"), &cm("a", json!({})))
        .await
        .unwrap();
    assert_eq!(status(&exists.body).reason, "AlreadyExists");

    // update and patch: the answer shows the change, the store does not.
    let mut changed = a.clone();
    changed["data"] = json!({"k": "put"});
    let put = c
        .client()
        .put(&format!("{url}?dryRun=All"), &changed)
        .await
        .unwrap();
    assert_eq!(put.status, 200, "{}", put.body);
    assert_eq!(put.body["data"]["k"], "put");
    assert_eq!(
        put.body["metadata"]["resourceVersion"],
        a["metadata"]["resourceVersion"]
    );
    let patched = c
        .client()
        .patch(
            &format!("{url}?dryRun=All"),
            "application/merge-patch+json",
            &json!({"data": {"k": "patch"}}),
        )
        .await
        .unwrap();
    assert_eq!(patched.status, 200, "{}", patched.body);
    assert_eq!(patched.body["data"]["k"], "patch");
    let st = c
        .client()
        .patch(
            &format!("{deployments}/d/status?dryRun=All"),
            "application/merge-patch+json",
            &json!({"status": {"observedGeneration": 42}}),
        )
        .await
        .unwrap();
    assert_eq!(st.status, 200, "{}", st.body);
    assert_eq!(st.body["status"]["observedGeneration"], 42);
    // Not stored (on a full cluster the deployment controller writes its own status).
    let d_now = c.client().get(&format!("{deployments}/d")).await.unwrap();
    assert_ne!(d_now.body["status"]["observedGeneration"], 42);

    // delete, from the query and from DeleteOptions in the body (how client-go sends it).
    let del = c
        .client()
        .delete(&format!("{url}?dryRun=All"))
        .await
        .unwrap();
    assert_eq!(del.status, 200, "{}", del.body);
    assert_eq!(
        del.body,
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
               "details": {"name": "a", "kind": "configmaps", "uid": a["metadata"]["uid"]}})
    );
    let del_body = c
        .client()
        .request(
            Method::DELETE,
            &url,
            "application/json",
            json!({"kind": "DeleteOptions", "apiVersion": "v1", "dryRun": ["All"]}).to_string(),
        )
        .await
        .unwrap();
    assert_eq!(del_body.status, 200, "{}", del_body.body);
    let held_del = c
        .client()
        .delete(&format!("{base}/held?dryRun=All"))
        .await
        .unwrap();
    assert!(held_del.body["metadata"]["deletionTimestamp"].is_string());
    let all = c
        .client()
        .delete(&format!("{base}?dryRun=All"))
        .await
        .unwrap();
    assert_eq!(all.status, 200, "{}", all.body);
    let now = c.client().get(&base).await.unwrap();
    assert_eq!(names(&now.body), ["a", "held"]);
    assert_eq!(
        c.client().get(&url).await.unwrap().body,
        a,
        "nothing changed a"
    );
    assert!(now.body["items"][1]["metadata"]["deletionTimestamp"].is_null());

    // No resourceVersion was used (the embedded server's counter is ours alone) and no
    // watcher heard of any of it: the first event is the next real write.
    if let (Some(s), Some(before)) = (c.server(), rv_before) {
        assert_eq!(s.resource_version(), before);
    }
    c.client()
        .patch(
            &url,
            "application/merge-patch+json",
            &json!({"data": {"k": "real"}}),
        )
        .await
        .unwrap();
    let events = read_until(&mut w, |e| !e.is_empty()).await;
    assert_eq!(summary(&events), [("MODIFIED".into(), "a".into())]);
    assert_eq!(events[0]["object"]["data"]["k"], "real");
    c.client()
        .patch(
            &format!("{base}/held"),
            "application/merge-patch+json",
            &json!({"metadata": {"finalizers": null}}),
        )
        .await
        .unwrap();
}

#[tokio::test]
async fn dry_run_values_other_than_all_are_refused() {
    let c = cluster().await;
    let ns = c.create_namespace("conf-dryrun-bad").await.unwrap();
    let base = cms(&ns);
    let a = create_cm(&c, &ns, "a", json!({})).await;
    let url = format!("{base}/a");
    let check = |r: kcache_testing::RawResponse, kind: &str, values: &str| {
        assert_eq!(r.status, 422, "{}", r.body);
        let s = status(&r.body);
        assert_eq!(s.reason, "Invalid");
        assert_eq!(
            s.message,
            format!("{kind}.meta.k8s.io \"\" is invalid: dryRun: Unsupported value: []string{{{values}}}: supported values: \"All\"")
        );
        let d = s.details.expect("details");
        assert_eq!((d.group.as_str(), d.kind.as_str()), ("meta.k8s.io", kind));
        assert_eq!(d.causes[0].type_, "FieldValueNotSupported");
        assert_eq!(d.causes[0].field, "dryRun");
    };
    let r = c
        .client()
        .post(&format!("{base}?dryRun=yes"), &cm("b", json!({})))
        .await
        .unwrap();
    check(r, "CreateOptions", "\"yes\"");
    let r = c
        .client()
        .put(&format!("{url}?dryRun=all&dryRun=All"), &a)
        .await
        .unwrap();
    check(r, "UpdateOptions", "\"all\", \"All\"");
    let r = c
        .client()
        .patch(
            &format!("{url}?dryRun="),
            "application/merge-patch+json",
            &json!({}),
        )
        .await
        .unwrap();
    check(r, "PatchOptions", "\"\"");
    let r = c
        .client()
        .delete(&format!("{url}?dryRun=None"))
        .await
        .unwrap();
    check(r, "DeleteOptions", "\"None\"");
    let r = c
        .client()
        .request(
            Method::DELETE,
            &url,
            "application/json",
            json!({"dryRun": ["x"]}).to_string(),
        )
        .await
        .unwrap();
    check(r, "DeleteOptions", "\"x\"");
    assert_eq!(c.client().get(&url).await.unwrap().body, a);
}

#[tokio::test]
async fn version_reports_the_served_api() {
    let c = cluster().await;
    let r = c.client().get("/version").await.unwrap();
    let version = (r.body["major"].as_str(), r.body["minor"].as_str());
    if c.is_real() && version == (Some(""), Some("")) {
        // A kube-apiserver built from source without release ldflags (the envtest tier's
        // may be) leaves these empty; only the field order below can be compared.
        skip(
            "version_numbers",
            &format!("the real server is an unversioned build: {}", r.body),
        );
    } else {
        assert_eq!(version, (Some("1"), Some("20")));
        assert!(r.body["gitVersion"]
            .as_str()
            .is_some_and(|g| g.starts_with("v1.20.")));
    }
    assert_eq!(
        Doc::parse(&r.raw).keys(),
        [
            "major",
            "minor",
            "gitVersion",
            "gitCommit",
            "gitTreeState",
            "buildDate",
            "goVersion",
            "compiler",
            "platform"
        ]
    );
}

#[tokio::test]
async fn built_in_objects_are_written_in_go_field_order() {
    let c = cluster().await;
    let ns = c.create_namespace("conf-order").await.unwrap();
    let base = cms(&ns);
    let body = json!({"data": {"k": "<v>"}, "immutable": true, "kind": "ConfigMap", "apiVersion": "v1",
        "metadata": {"name": "a", "labels": {"b": "1", "a": "2"}, "annotations": {"n": "1"}, "finalizers": ["example.com/x"]}});
    let created = c.client().post(&base, &body).await.unwrap();
    assert_eq!(created.status, 201, "{}", created.body);
    let top = [
        "kind",
        "apiVersion",
        "metadata",
        "immutable",
        "data",
        "binaryData",
    ];
    for (what, raw) in [
        ("create", created.raw.clone()),
        (
            "get",
            c.client().get(&format!("{base}/a")).await.unwrap().raw,
        ),
    ] {
        let doc = Doc::parse(&raw);
        assert_eq!(
            doc.keys()[..3],
            ["kind", "apiVersion", "metadata"],
            "{what}"
        );
        assert_go_order(what, &doc, &top);
        assert_go_order(what, doc.get("metadata"), OBJECT_META);
        // Go escapes HTML characters in strings, and its encoder ends a document with a newline.
        let text = String::from_utf8_lossy(&raw);
        assert!(text.ends_with("}\n"), "{what}: {text:?}");
        assert!(text.contains(r#""k":"\u003cv\u003e""#), "{what}: {text}");
    }
    let list = Doc::parse(&c.client().get(&base).await.unwrap().raw);
    assert_eq!(list.keys(), ["kind", "apiVersion", "metadata", "items"]);
    let item = list.get("items").at(0);
    assert_go_order("list item", item, &top);
    assert_eq!(
        item.keys()[0],
        "metadata",
        "a typed list's items have no kind or apiVersion"
    );
    // A watch event carries the object as a get shows it.
    let watch = c
        .client()
        .get(&format!("{base}?watch=true&timeoutSeconds=1"))
        .await
        .unwrap();
    let first_line = watch.raw.split(|b| *b == b'\n').next().unwrap();
    let event = Doc::parse(first_line);
    assert_eq!(event.keys(), ["type", "object"]);
    assert_go_order("watch", event.get("object"), &top);
    assert_go_order("watch", event.get("object").get("metadata"), OBJECT_META);
    // A bookmark is an empty Go struct: its nil creationTimestamp is written as null.
    let a = c.client().get(&format!("{base}/a")).await.unwrap().body;
    let bookmark = bookmark_frame(&c, &base, rv(&a), &cm("b", json!({}))).await;
    let object = bookmark.get("object");
    assert_eq!(object.keys(), ["kind", "apiVersion", "metadata"]);
    assert_eq!(
        object.get("metadata").keys(),
        ["resourceVersion", "creationTimestamp"]
    );

    let deploy = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
        "spec": {"template": {"spec": {"containers": [{"image": "busybox", "name": "c", "env": [{"value": "1", "name": "E"}]}]},
                              "metadata": {"labels": {"app": "d"}}},
                 "selector": {"matchLabels": {"app": "d"}}, "replicas": 1}});
    let d = c
        .client()
        .post(
            &format!("/apis/apps/v1/namespaces/{ns}/deployments"),
            &deploy,
        )
        .await
        .unwrap();
    assert_eq!(d.status, 201, "{}", d.body);
    let doc = Doc::parse(&d.raw);
    assert_go_order(
        "deployment",
        &doc,
        &["kind", "apiVersion", "metadata", "spec", "status"],
    );
    let spec = doc.get("spec");
    assert_go_order(
        "deployment spec",
        spec,
        &[
            "replicas",
            "selector",
            "template",
            "strategy",
            "minReadySeconds",
            "revisionHistoryLimit",
            "paused",
            "progressDeadlineSeconds",
        ],
    );
    assert_eq!(spec.get("template").keys()[0], "metadata");
    let container = spec.get("template").get("spec").get("containers").at(0);
    assert_eq!(container.keys()[..2], ["name", "image"]);
    assert_eq!(container.get("env").at(0).keys(), ["name", "value"]);

    let missing = c.client().get(&format!("{base}/nope")).await.unwrap();
    assert_eq!(
        Doc::parse(&missing.raw).keys(),
        [
            "kind",
            "apiVersion",
            "metadata",
            "status",
            "message",
            "reason",
            "details",
            "code"
        ]
    );
    c.client()
        .patch(
            &format!("{base}/a"),
            "application/merge-patch+json",
            &json!({"metadata": {"finalizers": null}}),
        )
        .await
        .unwrap();
}

#[tokio::test]
async fn custom_resources_are_written_with_sorted_keys() {
    let c = cluster().await;
    let ns = c.create_namespace("conf-crorder").await.unwrap();
    let group = format!("{ns}.kcache.test");
    let crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("gadgets.{group}")},
        "spec": {"group": group, "scope": "Namespaced",
                 "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget", "listKind": "GadgetList"},
                 "versions": [{"name": "v1", "served": true, "storage": true,
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
    assert_eq!(
        Doc::parse(&r.raw).keys()[..3],
        ["kind", "apiVersion", "metadata"],
        "a CRD is a built-in type"
    );
    let base = format!("/apis/{group}/v1/namespaces/{ns}/gadgets");
    let g = json!({"spec": {"zeta": 1, "alpha": {"y": 1, "x": 2}}, "metadata": {"name": "g1", "labels": {"a": "b"}},
                   "kind": "Gadget", "apiVersion": format!("{group}/v1")});
    let mut created = None;
    for _ in 0..100 {
        let r = c.client().post(&base, &g).await.unwrap();
        if r.status == 201 {
            created = Some(r.raw);
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let created = Doc::parse(&created.expect("the CRD's resource gets served"));
    assert_eq!(created.keys(), ["apiVersion", "kind", "metadata", "spec"]);
    created.assert_sorted("created");
    let get = c.client().get(&format!("{base}/g1")).await.unwrap();
    Doc::parse(&get.raw).assert_sorted("get");
    // An unstructured bookmark has only the type and the resourceVersion.
    let g2 =
        json!({"kind": "Gadget", "apiVersion": format!("{group}/v1"), "metadata": {"name": "g2"}});
    let bookmark = bookmark_frame(&c, &base, rv(&get.body), &g2).await;
    let object = bookmark.get("object");
    assert_eq!(object.keys(), ["apiVersion", "kind", "metadata"]);
    assert_eq!(object.get("metadata").keys(), ["resourceVersion"]);
    let list = Doc::parse(&c.client().get(&base).await.unwrap().raw);
    list.assert_sorted("list");
    assert_eq!(
        list.get("items").at(0).keys()[..2],
        ["apiVersion", "kind"],
        "unstructured items keep their type"
    );
    c.client()
        .delete(&format!(
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gadgets.{group}"
        ))
        .await
        .unwrap();
}

#[tokio::test]
async fn pretty_indents_answers_but_not_watches() {
    let c = cluster().await;
    let ns = c.create_namespace("conf-pretty").await.unwrap();
    create_cm(&c, &ns, "a", json!({})).await;
    let url = format!("{}/a", cms(&ns));
    // `pretty` is read with strconv.ParseBool, unlike the other booleans.
    for v in ["true", "1", "T"] {
        let r = c.client().get(&format!("{url}?pretty={v}")).await.unwrap();
        let text = String::from_utf8_lossy(&r.raw);
        assert!(
            text.starts_with("{\n  \"kind\": \"ConfigMap\",\n  \"apiVersion\": \"v1\",\n  \"metadata\": {\n    \"name\": \"a\","),
            "pretty={v}: {text}"
        );
        assert!(
            text.ends_with("\n}"),
            "pretty={v}: no newline after the document"
        );
    }
    for v in ["yes", "false", "0"] {
        let r = c.client().get(&format!("{url}?pretty={v}")).await.unwrap();
        assert!(r.raw.starts_with(b"{\"kind\":\"ConfigMap\","), "pretty={v}");
    }
    let missing = c
        .client()
        .get(&format!("{url}-nope?pretty=true"))
        .await
        .unwrap();
    assert!(
        missing.raw.starts_with(b"{\n  \"kind\": \"Status\","),
        "{:?}",
        missing.raw
    );
    let list = c
        .client()
        .get(&format!("{}?pretty=true", cms(&ns)))
        .await
        .unwrap();
    assert!(list.raw.starts_with(b"{\n  \"kind\": \"ConfigMapList\","));
    let watch = c
        .client()
        .get(&format!(
            "{}?watch=true&pretty=true&timeoutSeconds=1",
            cms(&ns)
        ))
        .await
        .unwrap();
    assert!(
        watch
            .raw
            .starts_with(b"{\"type\":\"ADDED\",\"object\":{\"kind\":\"ConfigMap\","),
        "{:?}",
        watch.raw
    );
    // /version is always indented.
    let version = c.client().get("/version").await.unwrap();
    assert!(version.raw.starts_with(b"{\n  \"major\": "));
}

#[tokio::test]
async fn discovery_documents_are_written_in_go_field_order() {
    let c = cluster().await;
    let keys = |raw: &[u8]| -> Vec<String> {
        Doc::parse(raw)
            .keys()
            .into_iter()
            .map(str::to_string)
            .collect()
    };
    let api = c.client().get("/api").await.unwrap();
    assert_eq!(
        keys(&api.raw),
        ["kind", "versions", "serverAddressByClientCIDRs"]
    );
    let core = c.client().get("/api/v1").await.unwrap();
    assert_eq!(
        keys(&core.raw),
        ["kind", "groupVersion", "resources"],
        "/api/v1 has no apiVersion"
    );
    let resource = Doc::parse(&core.raw);
    assert_go_order(
        "APIResource",
        resource.get("resources").at(0),
        &[
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
        ],
    );
    let apps = c.client().get("/apis/apps/v1").await.unwrap();
    assert_eq!(
        keys(&apps.raw),
        ["kind", "apiVersion", "groupVersion", "resources"]
    );
    let groups = c.client().get("/apis").await.unwrap();
    assert_eq!(keys(&groups.raw), ["kind", "apiVersion", "groups"]);
    let group = Doc::parse(&groups.raw);
    assert_eq!(
        group.get("groups").at(0).keys(),
        ["name", "versions", "preferredVersion"]
    );
}

#[tokio::test]
async fn export_is_a_boolean_of_get() {
    let c = cluster().await;
    let ns = c.create_namespace("conf-export").await.unwrap();
    let created = c
        .client()
        .post(
            &cms(&ns),
            &json!({"metadata": {"generateName": "gen-", "labels": {"a": "b"}}, "data": {"k": "v"}}),
        )
        .await
        .unwrap();
    assert_eq!(created.status, 201, "{}", created.body);
    let url = format!(
        "{}/{}",
        cms(&ns),
        created.body["metadata"]["name"].as_str().unwrap()
    );
    // Deprecated but served by 1.20: what belongs to this cluster is cleared.
    let exported = c.client().get(&format!("{url}?export=yes")).await.unwrap();
    assert_eq!(exported.status, 200, "{}", exported.body);
    let mut meta = exported.body["metadata"].clone();
    // The real server keeps managedFields (the embedded one does not write them).
    meta.as_object_mut().unwrap().remove("managedFields");
    assert_eq!(
        meta,
        json!({"generateName": "gen-", "creationTimestamp": null, "labels": {"a": "b"}})
    );
    assert_eq!(exported.body["data"], json!({"k": "v"}));
    assert_go_order(
        "export",
        Doc::parse(&exported.raw).get("metadata"),
        OBJECT_META,
    );
    let exact = c
        .client()
        .get(&format!("{url}?export=1&exact=True"))
        .await
        .unwrap();
    assert_eq!(
        exact.body["metadata"]["name"],
        created.body["metadata"]["name"]
    );
    assert_eq!(exact.body["metadata"]["namespace"], ns.as_str());
    assert!(exact.body["metadata"].get("uid").is_none());
    let plain = c
        .client()
        .get(&format!("{url}?export=false"))
        .await
        .unwrap();
    assert_eq!(plain.body, created.body);
}
