//! The wire beyond plain JSON, on both servers: gzip of large responses (`Accept-Encoding`)
//! and `PartialObjectMetadata` conversion (`Accept: ...;as=PartialObjectMetadata[List]`), with
//! the API server's 406 for what it cannot convert.

use crate::common;

use std::io::Read as _;

use common::*;
use http::{Method, Response};
use kcache_core::Status;
use serde_json::{json, Value};

const PARTIAL: &str = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1";
const PARTIAL_LIST: &str = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1";

async fn get(
    c: &kcache_testing::TestCluster,
    path: &str,
    headers: &[(&str, &str)],
) -> Response<bytes::Bytes> {
    c.client()
        .request_with_headers(Method::GET, path, headers, "", "")
        .await
        .unwrap()
}

fn json_of(resp: &Response<bytes::Bytes>) -> Value {
    serde_json::from_slice(resp.body())
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(resp.body())))
}

fn gunzip(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(bytes)
        .read_to_end(&mut out)
        .unwrap();
    out
}

#[tokio::test]
async fn large_responses_are_gzipped_when_asked_and_watches_never() {
    let c = cluster().await;
    let ns = c.create_namespace("wire-gzip").await.unwrap();
    let value = "x".repeat(4096);
    for i in 0..40 {
        let mut obj = cm(&format!("cm-{i}"), json!({}));
        obj["data"] = json!({ "v": value });
        let r = c.client().post(&cms(&ns), &obj).await.unwrap();
        assert_eq!(r.status, 201, "{}", r.body);
    }
    let gzip = [("Accept-Encoding", "gzip")];
    let list = get(&c, &cms(&ns), &gzip).await;
    assert_eq!(list.status(), 200);
    assert_eq!(list.headers()["content-encoding"], "gzip");
    assert!(list.headers()["vary"]
        .to_str()
        .unwrap()
        .contains("Accept-Encoding"));
    let plain: Value = serde_json::from_slice(&gunzip(list.body())).unwrap();
    assert_eq!(names(&plain).len(), 40);
    assert!(list.body().len() < 160 * 1024 / 4, "{}", list.body().len());

    let unasked = get(&c, &cms(&ns), &[]).await;
    assert!(unasked.headers().get("content-encoding").is_none());
    assert_eq!(json_of(&unasked)["items"], plain["items"]);
    // One object is under the 128 KiB threshold.
    let one = get(&c, &format!("{}/cm-0", cms(&ns)), &gzip).await;
    assert!(one.headers().get("content-encoding").is_none());
    assert_eq!(json_of(&one)["metadata"]["name"], "cm-0");
    // A watch (40 initial events, > 128 KiB) is streamed uncompressed.
    let watch = get(
        &c,
        &format!("{}?watch=true&timeoutSeconds=1", cms(&ns)),
        &gzip,
    )
    .await;
    assert_eq!(watch.status(), 200);
    assert!(watch.headers().get("content-encoding").is_none());
    let events = String::from_utf8_lossy(watch.body())
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|e| e["type"] == "ADDED" && !made_by_cluster(&e["object"]))
        .count();
    assert_eq!(events, 40);
}

#[tokio::test]
async fn partial_object_metadata_for_get_list_patch_and_watch() {
    let c = cluster().await;
    let ns = c.create_namespace("wire-partial").await.unwrap();
    create_cm(&c, &ns, "a", json!({"app": "x"})).await;
    create_cm(&c, &ns, "b", json!({})).await;

    let one = get(&c, &format!("{}/a", cms(&ns)), &[("Accept", PARTIAL)]).await;
    assert_eq!(one.status(), 200);
    let one = json_of(&one);
    assert_eq!(one["kind"], "PartialObjectMetadata");
    assert_eq!(one["apiVersion"], "meta.k8s.io/v1");
    assert_eq!(one["metadata"]["name"], "a");
    assert_eq!(one["metadata"]["labels"]["app"], "x");
    assert!(one["metadata"]["uid"].is_string());
    assert!(one.get("data").is_none(), "{one}");

    // client-go's metadata client offers protobuf first, then JSON, then plain JSON.
    let accept = format!("application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,{PARTIAL_LIST},application/json");
    let list = get(&c, &cms(&ns), &[("Accept", PARTIAL_LIST)]).await;
    assert_eq!(list.status(), 200);
    let list = json_of(&list);
    assert_eq!(list["kind"], "PartialObjectMetadataList");
    assert_eq!(list["apiVersion"], "meta.k8s.io/v1");
    assert!(list["metadata"]["resourceVersion"].is_string());
    let items = list["items"].as_array().unwrap();
    assert_eq!(names(&list).len(), 2);
    for item in items {
        assert_eq!(item["kind"], "PartialObjectMetadata");
        assert_eq!(item["apiVersion"], "meta.k8s.io/v1");
        assert!(item.get("data").is_none(), "{item}");
    }
    // An empty one has `items: null`, as the API server writes the nil slice.
    let none = format!("{}?labelSelector=app%3Dnone", cms(&ns));
    let empty = json_of(&get(&c, &none, &[("Accept", PARTIAL_LIST)]).await);
    assert_eq!(empty["items"], Value::Null, "{empty}");
    if !c.is_real() {
        // The real server answers this one in protobuf, which the testserver does not speak.
        let by_client_go = get(&c, &cms(&ns), &[("Accept", accept.as_str())]).await;
        assert_eq!(json_of(&by_client_go)["kind"], "PartialObjectMetadataList");
    }

    let patched = c
        .client()
        .request_with_headers(
            Method::PATCH,
            &format!("{}/a", cms(&ns)),
            &[("Accept", PARTIAL)],
            "application/merge-patch+json",
            r#"{"metadata":{"labels":{"patched":"yes"}}}"#,
        )
        .await
        .unwrap();
    assert_eq!(patched.status(), 200);
    let patched = json_of(&patched);
    assert_eq!(patched["kind"], "PartialObjectMetadata");
    assert_eq!(patched["metadata"]["labels"]["patched"], "yes");

    let watch = get(
        &c,
        &format!("{}?watch=true&timeoutSeconds=1", cms(&ns)),
        &[("Accept", PARTIAL)],
    )
    .await;
    assert_eq!(watch.status(), 200);
    let events: Vec<Value> = String::from_utf8_lossy(watch.body())
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|e| !made_by_cluster(&e["object"]))
        .collect();
    // A watch without a resourceVersion starts with the current state as ADDEDs. A real API
    // server serves that state from its watch cache, which may not have the patch above yet:
    // it then follows as a MODIFIED.
    assert!(events.len() >= 2, "{events:?}");
    let (added, later) = events.split_at(2);
    for e in added {
        assert_eq!(e["type"], "ADDED", "{events:?}");
    }
    let most = if c.is_real() { 1 } else { 0 };
    assert!(later.len() <= most, "{events:?}");
    for e in later {
        assert_eq!(e["type"], "MODIFIED", "{events:?}");
        assert_eq!(e["object"]["metadata"]["name"], "a");
        assert_eq!(e["object"]["metadata"]["labels"]["patched"], "yes");
    }
    for e in &events {
        assert_eq!(e["object"]["kind"], "PartialObjectMetadata");
        assert!(e["object"].get("data").is_none(), "{e}");
    }
}

#[tokio::test]
async fn unconvertible_accept_is_406() {
    let c = cluster().await;
    let ns = c.create_namespace("wire-406").await.unwrap();
    create_cm(&c, &ns, "a", json!({})).await;
    let status = |r: &Response<bytes::Bytes>| -> Status {
        serde_json::from_slice(r.body()).expect("a Status body")
    };

    let unknown = get(
        &c,
        &cms(&ns),
        &[("Accept", "application/json;as=Foo;g=meta.k8s.io;v=v1")],
    )
    .await;
    assert_eq!(unknown.status(), 406);
    let s = status(&unknown);
    assert_eq!(s.reason, "NotAcceptable");
    assert_eq!(
        s.message,
        "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf"
    );

    let list_as_object = get(&c, &cms(&ns), &[("Accept", PARTIAL)]).await;
    assert_eq!(list_as_object.status(), 406);
    assert!(status(&list_as_object)
        .message
        .starts_with("you requested PartialObjectMetadata, but the requested object is a list"));
    let object_as_list = get(&c, &format!("{}/a", cms(&ns)), &[("Accept", PARTIAL_LIST)]).await;
    assert_eq!(object_as_list.status(), 406);
    assert!(status(&object_as_list).message.starts_with(
        "you requested PartialObjectMetadataList, but the requested object is not a list"
    ));
    // Errors are Status bodies, never converted.
    let missing = get(&c, &format!("{}/nope", cms(&ns)), &[("Accept", PARTIAL)]).await;
    assert_eq!(missing.status(), 404);
    assert_eq!(status(&missing).reason, "NotFound");
}
