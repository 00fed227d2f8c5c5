//! How requests reach the server: kubeconfig `proxy-url` (HTTP CONNECT and SOCKS5, with
//! credentials), impersonation headers from `as`/`as-groups`/`as-uid`/`as-user-extra`, and
//! client-go's retry of GETs whose connection was reset.

use crate::support;

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::Full;
use k8s_openapi::api::core::v1::ConfigMap;
use kcache_core::{DynamicObject, ListParams, Resource};
use kcache_testing::TestCluster;
use kcache_transport::{Api, Client, Config, PostParams};
use parking_lot::Mutex;
use rustls_pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use support::{client, own};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// What a test proxy saw: the targets asked for and the credentials sent.
#[derive(Default)]
struct Seen {
    targets: Vec<String>,
    credentials: Vec<String>,
}

async fn read_head<S: AsyncRead + Unpin>(s: &mut S) -> String {
    let mut head = Vec::new();
    while !head.ends_with(b"\r\n\r\n") {
        head.push(s.read_u8().await.unwrap());
    }
    String::from_utf8(head).unwrap()
}

/// Serves one CONNECT request on `inbound`: tunnels to the target, or answers `refuse`.
async fn serve_connect<S: AsyncRead + AsyncWrite + Unpin>(
    mut inbound: S,
    record: Arc<Mutex<Seen>>,
    refuse: Option<&'static str>,
) {
    let head = read_head(&mut inbound).await;
    let target = head.split_whitespace().nth(1).unwrap().to_string();
    let auth = head
        .lines()
        .find_map(|l| l.strip_prefix("Proxy-Authorization: "))
        .unwrap_or_default()
        .to_string();
    {
        let mut s = record.lock();
        s.targets.push(target.clone());
        s.credentials.push(auth);
    }
    if let Some(status) = refuse {
        let _ = inbound
            .write_all(format!("HTTP/1.1 {status}\r\n\r\n").as_bytes())
            .await;
        return;
    }
    let mut outbound = TcpStream::connect(target.as_str()).await.unwrap();
    inbound
        .write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
        .await
        .unwrap();
    let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
}

/// An HTTP CONNECT proxy; answers `refuse` (e.g. 407) instead of tunnelling when given.
async fn connect_proxy(refuse: Option<&'static str>) -> (SocketAddr, Arc<Mutex<Seen>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let seen = Arc::new(Mutex::new(Seen::default()));
    let record = seen.clone();
    tokio::spawn(async move {
        while let Ok((inbound, _)) = listener.accept().await {
            tokio::spawn(serve_connect(inbound, record.clone(), refuse));
        }
    });
    (addr, seen)
}

/// An HTTPS CONNECT proxy on 127.0.0.1 with a fresh self-signed certificate (returned, to be
/// trusted by the client).
async fn https_connect_proxy() -> (SocketAddr, CertificateDer<'static>, Arc<Mutex<Seen>>) {
    let key = rcgen::KeyPair::generate().unwrap();
    let cert = rcgen::CertificateParams::new(vec!["127.0.0.1".to_string()])
        .unwrap()
        .self_signed(&key)
        .unwrap();
    let der = CertificateDer::from(cert.der().to_vec());
    let tls = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_no_client_auth()
    .with_single_cert(
        vec![der.clone()],
        PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der())),
    )
    .unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(tls));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let seen = Arc::new(Mutex::new(Seen::default()));
    let record = seen.clone();
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let (acceptor, record) = (acceptor.clone(), record.clone());
            tokio::spawn(async move {
                if let Ok(tls) = acceptor.accept(tcp).await {
                    serve_connect(tls, record, None).await;
                }
            });
        }
    });
    (addr, der, seen)
}

/// A SOCKS5 proxy requiring the user name and password `u`/`p` (RFC 1928, 1929).
async fn socks5_proxy() -> (SocketAddr, Arc<Mutex<Seen>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let seen = Arc::new(Mutex::new(Seen::default()));
    let record = seen.clone();
    tokio::spawn(async move {
        while let Ok((mut s, _)) = listener.accept().await {
            let record = record.clone();
            tokio::spawn(async move {
                let mut greeting = [0u8; 2];
                s.read_exact(&mut greeting).await.unwrap();
                let mut methods = vec![0u8; greeting[1] as usize];
                s.read_exact(&mut methods).await.unwrap();
                assert!(methods.contains(&2), "credentials are offered");
                s.write_all(&[5, 2]).await.unwrap();
                let version = s.read_u8().await.unwrap();
                assert_eq!(version, 1);
                let user = read_field(&mut s).await;
                let pass = read_field(&mut s).await;
                record.lock().credentials.push(format!("{user}:{pass}"));
                let ok = user == "u" && pass == "p";
                s.write_all(&[1, if ok { 0 } else { 1 }]).await.unwrap();
                if !ok {
                    return;
                }
                let mut req = [0u8; 4];
                s.read_exact(&mut req).await.unwrap();
                let host = match req[3] {
                    1 => {
                        let mut ip = [0u8; 4];
                        s.read_exact(&mut ip).await.unwrap();
                        std::net::Ipv4Addr::from(ip).to_string()
                    }
                    3 => read_field(&mut s).await,
                    t => panic!("address type {t}"),
                };
                let port = s.read_u16().await.unwrap();
                record.lock().targets.push(format!("{host}:{port}"));
                let mut outbound = TcpStream::connect((host.as_str(), port)).await.unwrap();
                s.write_all(&[5, 0, 0, 1, 0, 0, 0, 0, 0, 0]).await.unwrap();
                let _ = tokio::io::copy_bidirectional(&mut s, &mut outbound).await;
            });
        }
    });
    (addr, seen)
}

async fn read_field(s: &mut TcpStream) -> String {
    let n = s.read_u8().await.unwrap() as usize;
    let mut b = vec![0u8; n];
    s.read_exact(&mut b).await.unwrap();
    String::from_utf8(b).unwrap()
}

fn server_authority(cluster: &TestCluster) -> String {
    let url: http::Uri = cluster.base_url().parse().unwrap();
    let host = url.host().unwrap();
    format!("{host}:{}", url.port_u16().unwrap_or(443))
}

#[tokio::test]
async fn tunnels_through_an_http_connect_proxy_with_credentials() {
    let cluster = TestCluster::start().await.unwrap();
    let ns = cluster.create_namespace("proxy").await.unwrap();
    let (proxy, seen) = connect_proxy(None).await;
    let c = client(&cluster, |c| {
        c.proxy_url = Some(format!("http://alice:s%40cret@{proxy}").parse().unwrap());
    });
    let api: Api<ConfigMap> = Api::namespaced(c, &ns);
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some("through-proxy".into());
    api.create(&PostParams::default(), &cm).await.unwrap();
    let listed = api.list(&ListParams::default()).await.unwrap().items;
    assert_eq!(own(&listed).len(), 1);
    let seen = seen.lock();
    assert!(!seen.targets.is_empty());
    assert!(seen
        .targets
        .iter()
        .all(|t| *t == server_authority(&cluster)));
    // base64("alice:s@cret")
    assert_eq!(seen.credentials[0], "Basic YWxpY2U6c0BjcmV0");
}

#[tokio::test]
async fn a_refused_connect_is_an_error_naming_the_proxy_answer() {
    let cluster = TestCluster::start().await.unwrap();
    let (proxy, _) = connect_proxy(Some("407 Proxy Authentication Required")).await;
    let c = client(&cluster, |c| {
        c.proxy_url = Some(format!("http://{proxy}").parse().unwrap());
        c.max_retries = 0;
    });
    let e = Api::<ConfigMap>::namespaced(c, "default")
        .get("x")
        .await
        .unwrap_err();
    let msg = format!("{e} {:?}", std::error::Error::source(&e));
    assert!(msg.contains("407"), "{msg}");
}

#[tokio::test]
async fn tunnels_through_an_https_proxy_verified_with_the_cluster_roots() {
    let cluster = TestCluster::start().await.unwrap();
    let ns = cluster.create_namespace("https-proxy").await.unwrap();
    let (proxy, proxy_cert, seen) = https_connect_proxy().await;
    let c = client(&cluster, |c| {
        c.proxy_url = Some(format!("https://{proxy}").parse().unwrap());
        c.root_certs.get_or_insert_with(Vec::new).push(proxy_cert);
    });
    let list = Api::<ConfigMap>::namespaced(c, &ns)
        .list(&ListParams::default())
        .await
        .unwrap();
    assert!(own(&list.items).is_empty());
    assert_eq!(seen.lock().targets[0], server_authority(&cluster));
}

#[tokio::test]
async fn tunnels_through_a_socks5_proxy_with_credentials() {
    let cluster = TestCluster::start().await.unwrap();
    let ns = cluster.create_namespace("socks").await.unwrap();
    let (proxy, seen) = socks5_proxy().await;
    let c = client(&cluster, |c| {
        c.proxy_url = Some(format!("socks5://u:p@{proxy}").parse().unwrap());
    });
    let list = Api::<ConfigMap>::namespaced(c, &ns)
        .list(&ListParams::default())
        .await
        .unwrap();
    assert!(own(&list.items).is_empty());
    let seen = seen.lock();
    assert_eq!(seen.credentials[0], "u:p");
    assert_eq!(seen.targets[0], server_authority(&cluster));
}

#[test]
fn a_kubeconfig_naming_an_unsupported_proxy_scheme_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config");
    std::fs::write(
        &path,
        "clusters:\n- name: c\n  cluster: {server: 'https://example.invalid', proxy-url: 'ftp://proxy:21'}\ncontexts:\n- name: x\n  context: {cluster: c}\ncurrent-context: x\n",
    )
    .unwrap();
    let e = Config::from_kubeconfig_file(&path).unwrap_err().to_string();
    assert!(e.contains(&path.display().to_string()), "{e}");
    assert!(e.contains("clusters[name=c].cluster.proxy-url"), "{e}");
    assert!(e.contains("unsupported scheme \"ftp\""), "{e}");
}

/// A plain-HTTP server recording each request's headers and answering with `reply`; the first
/// `resets` connections are closed after the request is read, without an answer.
async fn recording_server(resets: usize) -> (SocketAddr, Arc<Mutex<Vec<http::HeaderMap>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let requests = Arc::new(Mutex::new(Vec::new()));
    let record = requests.clone();
    let connections = Arc::new(AtomicUsize::new(0));
    tokio::spawn(async move {
        while let Ok((mut tcp, _)) = listener.accept().await {
            let record = record.clone();
            if connections.fetch_add(1, Ordering::SeqCst) < resets {
                tokio::spawn(async move {
                    let _ = read_head(&mut tcp).await;
                    record.lock().push(http::HeaderMap::new());
                    // Dropped: the client sees the connection close before any response.
                });
                continue;
            }
            let service = hyper::service::service_fn(move |req: http::Request<_>| {
                record.lock().push(req.headers().clone());
                async move {
                    Ok::<_, Infallible>(
                        http::Response::builder()
                            .header("content-type", "application/json")
                            .body(Full::new(Bytes::from_static(
                                br#"{"metadata":{"name":"x","namespace":"default"}}"#,
                            )))
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
    (addr, requests)
}

fn configmaps(client: Client) -> Api<DynamicObject> {
    let resource = ConfigMap::api_resource();
    Api::dynamic(client, resource, Some("default"))
}

#[tokio::test]
async fn impersonation_headers_come_from_the_kubeconfig_user() {
    let (addr, requests) = recording_server(0).await;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config");
    std::fs::write(
        &path,
        format!(
            "clusters:\n- name: c\n  cluster: {{server: 'http://{addr}'}}\nusers:\n- name: u\n  user:\n    token: t\n    as: jane\n    as-uid: uid-1\n    as-groups: [dev, ops]\n    as-user-extra:\n      scopes: [view, edit]\ncontexts:\n- name: x\n  context: {{cluster: c, user: u}}\ncurrent-context: x\n"
        ),
    )
    .unwrap();
    let client = Client::from_kubeconfig(&path).unwrap();
    configmaps(client).get("x").await.unwrap();
    let headers = requests.lock()[0].clone();
    let all = |name: &str| -> Vec<String> {
        headers
            .get_all(name)
            .iter()
            .map(|v| v.to_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(all("impersonate-user"), ["jane"]);
    assert_eq!(all("impersonate-uid"), ["uid-1"]);
    assert_eq!(all("impersonate-group"), ["dev", "ops"]);
    assert_eq!(all("impersonate-extra-scopes"), ["view", "edit"]);
    assert_eq!(all("authorization"), ["Bearer t"]);
    // A loopback server is not asked for gzip (`Config::asks_for_gzip`).
    assert!(all("accept-encoding").is_empty());
}

fn plain_client(addr: SocketAddr) -> Client {
    let mut config = Config::new(format!("http://{addr}").parse().unwrap());
    config.qps = 0.0;
    config.request_timeout = None;
    config.connect_timeout = None;
    config.keep_alive = None;
    Client::new(config).unwrap()
}

#[tokio::test(start_paused = true)]
async fn a_get_is_retried_after_a_connection_reset_and_a_write_is_not() {
    let (addr, requests) = recording_server(2).await;
    let api = configmaps(plain_client(addr));
    let got = api.get("x").await.unwrap();
    assert_eq!(got.metadata.name, "x");
    assert_eq!(requests.lock().len(), 3, "two resets, then the answer");

    let (addr, requests) = recording_server(1).await;
    let api = configmaps(plain_client(addr));
    let e = api
        .create(&PostParams::default(), &DynamicObject::new("y"))
        .await
        .unwrap_err();
    assert!(!e.to_string().is_empty());
    assert_eq!(requests.lock().len(), 1, "a POST is never sent twice");
}
