//! `/openapi/v2` against kube-apiserver 1.20.2's: the paths with their operations and the
//! definitions with their kinds as the checked-in index
//! (`testdata/kube-apiserver-1.20.2/openapi-v2-index.json`) holds them; JSON, protobuf or 406 by
//! `Accept`; and the protobuf form read as gnostic's `openapi.v2.Document` (by field number, as
//! client-go decodes it). Paths of CRDs other tests create are left aside.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::common::cluster;
use crate::discovery::reference;

const OPENAPI_INDEX: &str = include_str!("../testdata/kube-apiserver-1.20.2/openapi-v2-index.json");

/// Whether `path` is under a group the reference does not serve (a CRD's, from other tests).
fn is_custom(path: &str, reference: &BTreeMap<String, Value>) -> bool {
    let group = path
        .strip_prefix("/apis/")
        .and_then(|p| p.split('/').next());
    group.is_some_and(|g| {
        !reference["/apis"]["groups"]
            .as_array()
            .unwrap()
            .iter()
            .any(|x| x["name"] == g)
    })
}

#[tokio::test]
async fn the_openapi_v2_document_indexes_as_the_real_servers() {
    let c = cluster().await;
    let got = c.client().get("/openapi/v2").await.unwrap();
    assert_eq!(got.status, 200);
    let (doc, want) = (
        &got.body,
        serde_json::from_str::<Value>(OPENAPI_INDEX).unwrap(),
    );
    assert_eq!(doc["swagger"], "2.0");
    let want_paths = want["paths"].as_object().unwrap();
    for (path, ops) in want_paths {
        let item = doc["paths"][path]
            .as_object()
            .unwrap_or_else(|| panic!("{path}"));
        let methods: Vec<&str> = ops
            .as_array()
            .unwrap()
            .iter()
            .map(|op| op["method"].as_str().unwrap())
            .collect();
        let served: Vec<&str> = item.keys().map(String::as_str).collect();
        assert_eq!(
            served.iter().filter(|m| **m != "parameters").count(),
            methods.len(),
            "{path}: {served:?}"
        );
        for op in ops.as_array().unwrap() {
            let o = &item[op["method"].as_str().unwrap()];
            assert_eq!(o["operationId"], op["operationId"], "{path}");
            assert_eq!(o["x-kubernetes-action"], op["action"], "{path}");
        }
    }
    let reference = reference();
    for path in doc["paths"].as_object().unwrap().keys() {
        assert!(
            want_paths.contains_key(path) || is_custom(path, &reference),
            "a path 1.20.2 does not have: {path}"
        );
    }
    for (name, gvk) in want["definitions"].as_object().unwrap() {
        let def = &doc["definitions"][name];
        assert!(def.is_object(), "{name}");
        let got_gvk = def.get("x-kubernetes-group-version-kind");
        assert_eq!(got_gvk.unwrap_or(&Value::Null), gvk, "{name}");
    }
}

#[tokio::test]
async fn the_openapi_v2_document_is_json_protobuf_or_not_acceptable() {
    let c = cluster().await;
    let get = |accept: &'static str| {
        let client = c.client();
        async move {
            client
                .request_with_headers(
                    http::Method::GET,
                    "/openapi/v2",
                    &[("accept", accept)],
                    "",
                    "",
                )
                .await
                .unwrap()
        }
    };
    for accept in ["application/json", "*/*", "application/json, */*"] {
        let resp = get(accept).await;
        assert_eq!(resp.status(), 200, "{accept}");
        let doc: Value = serde_json::from_slice(resp.body()).unwrap();
        assert_eq!(doc["swagger"], "2.0", "{accept}");
    }
    let proto = get("application/com.github.proto-openapi.spec.v2@v1.0+protobuf").await;
    assert_eq!(proto.status(), 200);
    assert_eq!(proto.headers()["content-type"], "application/octet-stream");
    for accept in ["application/yaml", "application/vnd.kubernetes.protobuf"] {
        assert_eq!(get(accept).await.status(), 406, "{accept}");
    }
}

fn varint(buf: &mut &[u8]) -> u64 {
    let mut v = 0;
    for shift in (0..64).step_by(7) {
        let (b, rest) = buf.split_first().expect("a complete varint");
        *buf = rest;
        v |= u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            break;
        }
    }
    v
}

/// The length-delimited fields of a message (number and bytes), in order; the others are
/// skipped.
fn fields(mut buf: &[u8]) -> Vec<(u64, &[u8])> {
    let mut out = Vec::new();
    while !buf.is_empty() {
        let key = varint(&mut buf);
        match key & 7 {
            0 => drop(varint(&mut buf)),
            1 => buf = &buf[8..],
            2 => {
                let len = varint(&mut buf) as usize;
                let (b, rest) = buf.split_at(len);
                buf = rest;
                out.push((key >> 3, b));
            }
            other => panic!("wire type {other}"),
        }
    }
    out
}

/// Every length-delimited field `number` of `msg`.
fn all(msg: &[u8], number: u64) -> Vec<&[u8]> {
    fields(msg)
        .into_iter()
        .filter(|(n, _)| *n == number)
        .map(|(_, b)| b)
        .collect()
}

fn one(msg: &[u8], number: u64) -> &[u8] {
    all(msg, number)
        .first()
        .copied()
        .unwrap_or_else(|| panic!("field {number}"))
}

fn text(msg: &[u8], number: u64) -> &str {
    std::str::from_utf8(one(msg, number)).unwrap()
}

/// The value of the `NamedX` entry (`name = 1`, `value = 2`) called `name` among `entries`.
fn named<'a>(entries: Vec<&'a [u8]>, name: &str) -> &'a [u8] {
    entries
        .into_iter()
        .find(|e| text(e, 1) == name)
        .map(|e| one(e, 2))
        .unwrap_or_else(|| panic!("no entry {name}"))
}

/// A vendor extension's value (`NamedAny` → `Any.yaml`), read as YAML (JSON is YAML).
fn extension(msg: &[u8], number: u64, name: &str) -> Value {
    let yaml = text(named(all(msg, number), name), 2);
    serde_yaml_ng::from_str(yaml).unwrap_or_else(|e| panic!("{name}: {yaml}: {e}"))
}

#[tokio::test]
async fn the_openapi_v2_protobuf_is_gnostics_document() {
    let c = cluster().await;
    let resp = c
        .client()
        .request_with_headers(
            http::Method::GET,
            "/openapi/v2",
            &[(
                "accept",
                "application/com.github.proto-openapi.spec.v2@v1.0+protobuf",
            )],
            "",
            "",
        )
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.headers()["content-type"], "application/octet-stream");
    let doc = resp.body().as_ref();
    assert_eq!(text(doc, 1), "2.0", "swagger");
    assert_eq!(text(one(doc, 2), 1), "Kubernetes", "info.title");

    // paths (8) → NamedPathItem (2) → PathItem.get (2) → Operation
    let item = named(
        all(one(doc, 8), 2),
        "/api/v1/namespaces/{namespace}/configmaps/{name}",
    );
    let get = one(item, 2);
    assert_eq!(
        text(get, 5),
        "readCoreV1NamespacedConfigMap",
        "operation_id"
    );
    assert_eq!(extension(get, 13, "x-kubernetes-action"), "get");
    assert_eq!(
        extension(get, 13, "x-kubernetes-group-version-kind"),
        serde_json::json!({"group": "", "kind": "ConfigMap", "version": "v1"})
    );
    // responses (9) → "200" → ResponseValue.response (1) → schema (2) → Schema._ref (1)
    let ok = one(named(all(one(get, 9), 1), "200"), 1);
    assert_eq!(
        text(one(one(ok, 2), 1), 1),
        "#/definitions/io.k8s.api.core.v1.ConfigMap"
    );
    // the path's parameters (9): `name` is a path parameter (NonBodyParameter.path = 4)
    let path_params: Vec<&str> = all(item, 9)
        .into_iter()
        .filter_map(|p| all(one(one(p, 1), 2), 4).first().map(|s| text(s, 4)))
        .collect();
    assert!(path_params.contains(&"name"), "{path_params:?}");

    // definitions (9) → NamedSchema (1) → Schema
    let cm = named(all(one(doc, 9), 1), "io.k8s.api.core.v1.ConfigMap");
    assert_eq!(
        extension(cm, 31, "x-kubernetes-group-version-kind"),
        serde_json::json!([{"group": "", "kind": "ConfigMap", "version": "v1"}])
    );
    // properties (25) → NamedSchema (1) "data" → additional_properties (21) → schema (1) → type
    let data = named(all(one(cm, 25), 1), "data");
    let values = one(one(data, 21), 1);
    assert_eq!(text(one(values, 22), 1), "string");
    assert_eq!(text(one(data, 22), 1), "object");
}
