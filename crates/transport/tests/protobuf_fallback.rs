//! A protobuf list whose items hold a field kcache's protobuf decoder does not know (here an
//! `ObjectMeta` field 18, as one added to the API after kcache would come): the page is read
//! again in JSON, the result is the JSON list's, and the client lists that resource in JSON from
//! then on. kcache-testserver does not serve protobuf, so a server here answers protobuf or JSON
//! as the `Accept` header asks and records what each request asked for.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use futures_util::StreamExt;
use http_body_util::Full;
use k8s_openapi::api::core::v1::ConfigMap;
use kcache_core::{DynamicObject, ListParams, ListerWatcher, Resource};
use kcache_transport::{Api, Client, Config};
use parking_lot::Mutex;
use serde_json::json;

fn varint(mut v: u64, out: &mut Vec<u8>) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn field(number: u64, body: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    varint(number << 3 | 2, &mut out);
    varint(body.len() as u64, &mut out);
    out.extend_from_slice(body);
    out
}

/// `ObjectMeta` of `ns/name`, with field 18 (`xNew` in JSON) when `new` is given.
fn meta(name: &str, new: Option<&str>) -> Vec<u8> {
    let mut m = [field(1, name.as_bytes()), field(3, b"ns")].concat();
    if let Some(new) = new {
        m.extend(field(18, new.as_bytes()));
    }
    m
}

/// The JSON metadata the server writes for the same object.
fn meta_json(name: &str, new: Option<&str>) -> serde_json::Value {
    let mut m = json!({"name": name, "namespace": "ns"});
    if let Some(new) = new {
        m["xNew"] = json!(new);
    }
    m
}

/// The objects every list holds: the first has the field kcache does not know.
const OBJECTS: [(&str, Option<&str>); 2] = [("a", Some("later")), ("b", None)];

/// The list as kube-apiserver sends it in protobuf: ConfigMaps (data {k: v}) or, `partial`,
/// their `PartialObjectMetadata`.
fn protobuf_list(partial: bool) -> Vec<u8> {
    let mut list = field(1, &field(2, b"7"));
    for (name, new) in OBJECTS {
        let mut item = field(1, &meta(name, new));
        if !partial {
            item.extend(field(2, &[field(1, b"k"), field(2, b"v")].concat()));
        }
        list.extend(field(2, &item));
    }
    let (api_version, kind) = match partial {
        true => ("meta.k8s.io/v1", "PartialObjectMetadataList"),
        false => ("v1", "ConfigMapList"),
    };
    let type_meta = [field(1, api_version.as_bytes()), field(2, kind.as_bytes())].concat();
    [b"k8s\0".to_vec(), field(1, &type_meta), field(2, &list)].concat()
}

/// The same list in JSON.
fn json_list(partial: bool) -> Vec<u8> {
    let items: Vec<_> = OBJECTS
        .iter()
        .map(|(name, new)| match partial {
            true => json!({"apiVersion": "meta.k8s.io/v1", "kind": "PartialObjectMetadata",
                "metadata": meta_json(name, *new)}),
            false => json!({"metadata": meta_json(name, *new), "data": {"k": "v"}}),
        })
        .collect();
    let (api_version, kind) = match partial {
        true => ("meta.k8s.io/v1", "PartialObjectMetadataList"),
        false => ("v1", "ConfigMapList"),
    };
    serde_json::to_vec(&json!({"apiVersion": api_version, "kind": kind,
        "metadata": {"resourceVersion": "7"}, "items": items}))
    .unwrap()
}

/// What each request asked for: `protobuf` or `json`, and whether as `PartialObjectMetadata`.
type Asked = Arc<Mutex<Vec<(&'static str, bool)>>>;

/// A server answering every list in protobuf when the `Accept` header's first choice is
/// protobuf, else in JSON.
async fn server() -> (SocketAddr, Asked) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let asked = Asked::default();
    let log = asked.clone();
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let log = log.clone();
            let service = hyper::service::service_fn(move |req: http::Request<_>| {
                let accept = req
                    .headers()
                    .get(http::header::ACCEPT)
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or("")
                    .to_string();
                let first = accept.split(',').next().unwrap_or("");
                let protobuf = first.starts_with("application/vnd.kubernetes.protobuf");
                let partial = first.contains("as=PartialObjectMetadataList");
                log.lock()
                    .push((if protobuf { "protobuf" } else { "json" }, partial));
                let (content_type, body) = match protobuf {
                    true => (
                        "application/vnd.kubernetes.protobuf",
                        protobuf_list(partial),
                    ),
                    false => ("application/json", json_list(partial)),
                };
                async move {
                    Ok::<_, Infallible>(
                        http::Response::builder()
                            .header("content-type", content_type)
                            .body(Full::new(Bytes::from(body)))
                            .unwrap(),
                    )
                }
            });
            tokio::spawn(async move {
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(hyper_util::rt::TokioIo::new(tcp), service)
                    .await;
            });
        }
    });
    (addr, asked)
}

fn client(addr: SocketAddr, protobuf: bool) -> Client {
    let mut config = Config::new(format!("http://{addr}").parse().unwrap());
    config.qps = 0.0;
    config.protobuf = protobuf;
    config.metadata_protobuf = protobuf;
    Client::new(config).unwrap()
}

fn api<K>(client: Client) -> Api<K> {
    Api::dynamic(client, ConfigMap::api_resource(), Some("ns"))
}

/// What each request since the last call asked for.
fn take(asked: &Asked) -> Vec<(&'static str, bool)> {
    std::mem::take(&mut *asked.lock())
}

#[tokio::test]
async fn a_protobuf_list_holding_a_field_kcache_does_not_know_is_read_again_in_json() {
    let (addr, asked) = server().await;
    let json_only = client(addr, false);
    let expected = api::<DynamicObject>(json_only.clone())
        .list(&ListParams::default())
        .await
        .unwrap();
    // The JSON path keeps the member in `metadata.other`.
    assert_eq!(expected.items[0].metadata.other["xNew"], "later");
    take(&asked);

    let c = client(addr, true);
    let list = api::<DynamicObject>(c.clone())
        .list(&ListParams::default())
        .await
        .unwrap();
    assert_eq!(list, expected);
    assert_eq!(take(&asked), [("protobuf", false), ("json", false)]);
    // Remembered: the resource's next lists, whatever they decode into, ask for JSON alone.
    let list = api::<DynamicObject>(c.clone())
        .list(&ListParams::default())
        .await
        .unwrap();
    assert_eq!(list, expected);
    let typed = api::<ConfigMap>(c.clone())
        .list_shared(&ListParams::default())
        .await
        .unwrap();
    let typed_json = api::<ConfigMap>(json_only.clone())
        .list(&ListParams::default())
        .await
        .unwrap();
    assert_eq!(
        typed
            .items
            .iter()
            .map(|o| (**o).clone())
            .collect::<Vec<_>>(),
        typed_json.items
    );
    assert_eq!(take(&asked), [("json", false); 3]);

    // A metadata-only list is remembered apart: it asks protobuf once, then JSON.
    let expected = api::<DynamicObject>(json_only)
        .list_metadata(&ListParams::default())
        .await
        .unwrap();
    take(&asked);
    for _ in 0..2 {
        let list = api::<DynamicObject>(c.clone())
            .list_metadata(&ListParams::default())
            .await
            .unwrap();
        assert_eq!(list, expected);
        assert_eq!(list.items[0].metadata.other["xNew"], "later");
    }
    assert_eq!(
        take(&asked),
        [("protobuf", true), ("json", true), ("json", true)]
    );
}

#[tokio::test]
async fn a_streamed_protobuf_list_fails_naming_the_field_and_the_next_asks_for_json() {
    let (addr, asked) = server().await;
    let api = api::<DynamicObject>(client(addr, true));
    let mut items = api.list_stream(&ListParams::default()).await.unwrap();
    let err = items.next().await.unwrap().unwrap_err().to_string();
    assert!(
        err.contains("list item 0 (ns/a)") && err.contains("ObjectMeta field 18"),
        "{err}"
    );
    let items: Vec<_> = api
        .list_stream(&ListParams::default())
        .await
        .unwrap()
        .collect()
        .await;
    assert_eq!(items.len(), 2);
    assert_eq!(items[0].as_ref().unwrap().metadata.other["xNew"], "later");
    assert_eq!(take(&asked), [("protobuf", false), ("json", false)]);
}
