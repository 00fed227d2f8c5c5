//! gzip as client-go speaks it: asked for by default of a remote server, not of the loopback
//! (`disable_compression` decides when set), decompressed while the list and watch decoders
//! read, and their memory bound holds on the decompressed bytes — a small compressed body that
//! inflates without end is refused once one object passes `max_object_size`.

use crate::support;

use std::convert::Infallible;
use std::io::Write as _;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use bytes::Bytes;
use futures_util::StreamExt;
use http_body_util::StreamBody;
use hyper::body::Frame;
use k8s_openapi::api::core::v1::ConfigMap;
use kcache_core::{DynamicObject, Error, ListParams, Resource, WatchParams};
use kcache_testing::TestCluster;
use kcache_transport::{Api, Client, Config, PostParams};
use support::{client, own};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// A TCP forwarder to `target` counting the bytes the server sends back.
async fn byte_counting_proxy(target: SocketAddr) -> (SocketAddr, Arc<AtomicUsize>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let count = Arc::new(AtomicUsize::new(0));
    let seen = count.clone();
    tokio::spawn(async move {
        while let Ok((inbound, _)) = listener.accept().await {
            let seen = seen.clone();
            tokio::spawn(async move {
                let Ok(outbound) = tokio::net::TcpStream::connect(target).await else {
                    return;
                };
                let (mut ri, mut wi) = inbound.into_split();
                let (mut ro, mut wo) = outbound.into_split();
                tokio::spawn(async move {
                    let _ = tokio::io::copy(&mut ri, &mut wo).await;
                    let _ = wo.shutdown().await;
                });
                let mut buf = vec![0u8; 64 * 1024];
                while let Ok(n) = ro.read(&mut buf).await {
                    if n == 0 || wi.write_all(&buf[..n]).await.is_err() {
                        break;
                    }
                    seen.fetch_add(n, Ordering::SeqCst);
                }
            });
        }
    });
    (addr, count)
}

#[tokio::test]
async fn lists_are_gzipped_when_asked_and_a_loopback_server_is_not_asked_by_default() {
    let cluster = TestCluster::start().await.unwrap();
    let ns = cluster.create_namespace("gz").await.unwrap();
    let api: Api<ConfigMap> = Api::namespaced(client(&cluster, |_| {}), &ns);
    let value = "v".repeat(4096);
    for i in 0..40 {
        let mut cm = ConfigMap::default();
        cm.metadata.name = Some(format!("cm-{i}"));
        cm.data = Some([("v".to_string(), value.clone())].into());
        api.create(&PostParams::default(), &cm).await.unwrap();
    }
    let url: http::Uri = cluster.base_url().parse().unwrap();
    let host = url.host().unwrap().trim_matches(['[', ']']).to_string();
    let target = tokio::net::lookup_host((host.as_str(), url.port_u16().unwrap_or(443)))
        .await
        .unwrap()
        .next()
        .unwrap();
    let mut wire = Vec::new();
    for disable in [Some(false), Some(true), None] {
        let (proxy, bytes) = byte_counting_proxy(target).await;
        let c = client(&cluster, |c| {
            c.cluster_url = format!("https://{proxy}").parse().unwrap();
            c.tls_server_name.get_or_insert(host.clone());
            c.disable_compression = disable;
        });
        let list = Api::<ConfigMap>::namespaced(c, &ns)
            .list(&ListParams::default())
            .await
            .unwrap();
        let own = own(&list.items);
        assert_eq!(own.len(), 40);
        assert!(own.iter().all(|cm| cm.data.as_ref().unwrap()["v"] == value));
        wire.push(bytes.load(Ordering::SeqCst));
    }
    // 160 KiB of JSON: gzipped it is a few KiB (plus the TLS handshake the runs share). The
    // proxy listens on 127.0.0.1, so by default the client asks for no gzip.
    assert!(wire[1] > 160 * 1024, "{wire:?}");
    assert!(wire[0] * 4 < wire[1], "{wire:?}");
    assert!(wire[2] > 160 * 1024, "{wire:?}");
}

/// An HTTP server answering every request with `Content-Encoding: gzip` and a gzip stream of
/// `head` followed by `filler` repeated without end (256 KiB of it compress to a few hundred
/// bytes).
async fn gzip_bomb(head: &'static [u8], filler: u8) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let service = hyper::service::service_fn(move |_req| async move {
                let mut enc =
                    flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
                enc.write_all(head).unwrap();
                let block = vec![filler; 1 << 18];
                let chunks = futures_util::stream::unfold(enc, move |mut enc| {
                    let block = block.clone();
                    async move {
                        // Let the client run between chunks, whatever the runtime.
                        tokio::task::yield_now().await;
                        enc.write_all(&block).ok()?;
                        enc.flush().ok()?;
                        let out = Bytes::from(std::mem::take(enc.get_mut()));
                        Some((Ok::<_, Infallible>(Frame::data(out)), enc))
                    }
                });
                Ok::<_, Infallible>(
                    http::Response::builder()
                        .header("content-type", "application/json")
                        .header("content-encoding", "gzip")
                        .body(StreamBody::new(chunks))
                        .unwrap(),
                )
            });
            tokio::spawn(async move {
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(hyper_util::rt::TokioIo::new(tcp), service)
                    .await;
            });
        }
    });
    addr
}

fn bomb_client(addr: SocketAddr) -> Api<DynamicObject> {
    let mut config = Config::new(format!("http://{addr}").parse().unwrap());
    config.qps = 0.0;
    config.max_object_size = 1 << 20;
    let resource = ConfigMap::api_resource();
    Api::dynamic(Client::new(config).unwrap(), resource, Some("default"))
}

fn assert_too_large(e: &Error) {
    // The bound may be the error's cause (a failed body read), so read the whole chain.
    let msg = kcache_core::ErrorChain(e).to_string();
    assert!(
        msg.contains("1048576") || msg.contains("larger than"),
        "not a size error: {msg}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_watch_line_inflating_without_end_is_refused_at_the_size_bound() {
    let addr = gzip_bomb(br#"{"type":"ADDED","object":{"metadata":{"name":""#, b'a').await;
    let mut watch = bomb_client(addr)
        .watch(&WatchParams::default())
        .await
        .unwrap();
    let e = watch.next().await.unwrap().unwrap_err();
    assert_too_large(&e);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_list_item_inflating_without_end_is_refused_at_the_size_bound() {
    let addr = gzip_bomb(
        br#"{"kind":"ConfigMapList","items":[{"metadata":{"name":""#,
        b'a',
    )
    .await;
    let api = bomb_client(addr);
    let e = api.list(&ListParams::default()).await.unwrap_err();
    assert_too_large(&e);
    // Items are handed over as they decompress: the first one arrives while the body (here
    // endless whitespace after it) is still coming.
    let addr = gzip_bomb(
        br#"{"kind":"ConfigMapList","items":[{"metadata":{"name":"a"}}"#,
        b' ',
    )
    .await;
    let mut items = bomb_client(addr)
        .list_stream(&ListParams::default())
        .await
        .unwrap();
    let first = items.next().await.unwrap().unwrap();
    assert_eq!(first.metadata.name, "a");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_buffered_response_inflating_without_end_is_refused_at_the_size_bound() {
    let addr = gzip_bomb(br#"{"metadata":{"name":""#, b'a').await;
    let e = bomb_client(addr).get("x").await.unwrap_err();
    assert_too_large(&e);
}
