//! A small raw HTTP client for tests: requests with JSON bodies and a watch-stream reader.
//!
//! Against the embedded server it is hyper-util's pooled client over rustls with a bearer
//! token, independent of kcache-transport, so the server's conformance suite checks the wire
//! without the client under test. Against a real cluster it authenticates with whatever the
//! kubeconfig holds (client certificates, token files, exec plugins, impersonation, proxies) by
//! sending through kcache-transport's `Client::request_raw` — the kubeconfig code users get —
//! which leaves the response (any status, the body as sent) to this client.

use std::sync::Arc;

use bytes::{Buf, Bytes, BytesMut};
use http::{header, HeaderMap, Method, Request, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::CertificateDer;
use serde_json::Value;

use kcache_testserver::Error;

/// A response: status, headers and the body parsed as JSON (`Value::String` when it is not).
#[derive(Debug, Clone)]
pub struct RawResponse {
    /// HTTP status.
    pub status: StatusCode,
    /// Response headers.
    pub headers: HeaderMap,
    /// The body.
    pub body: Value,
    /// The body's bytes as received (field order and escaping are visible here).
    pub raw: Bytes,
}

/// HTTP(S) client for one API server: its bearer token, or everything a kubeconfig holds.
#[derive(Clone)]
pub struct RawClient {
    via: Via,
    base: String,
}

#[derive(Clone)]
enum Via {
    /// hyper directly, with a bearer token.
    Hyper {
        client: Box<Client<HttpsConnector<HttpConnector>, Full<Bytes>>>,
        token: Option<String>,
    },
    /// kcache-transport's client (for its authentication), one request at a time.
    Transport(kcache_transport::Client),
}

impl std::fmt::Debug for RawClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RawClient")
            .field("base", &self.base)
            .finish()
    }
}

fn req_err(e: impl std::fmt::Display) -> Error {
    Error::Request(e.to_string())
}

impl RawClient {
    /// A client for `base_url` trusting `ca_pem` (HTTP/2 when the server offers it).
    pub fn new(base_url: &str, ca_pem: Option<&str>, token: Option<&str>) -> Result<Self, Error> {
        let mut roots = rustls::RootCertStore::empty();
        if let Some(pem) = ca_pem {
            for cert in CertificateDer::pem_slice_iter(pem.as_bytes()) {
                roots
                    .add(cert.map_err(|e| Error::Tls(e.to_string()))?)
                    .map_err(|e| Error::Tls(e.to_string()))?;
            }
        }
        let tls = rustls::ClientConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .map_err(|e| Error::Tls(e.to_string()))?
        .with_root_certificates(roots)
        .with_no_client_auth();
        // Without TCP_NODELAY every small request waits on Nagle + delayed ACK (~40 ms).
        let mut http = HttpConnector::new();
        http.set_nodelay(true);
        http.enforce_http(false);
        let connector = hyper_rustls::HttpsConnectorBuilder::new()
            .with_tls_config(tls)
            .https_or_http()
            .enable_http1()
            .enable_http2()
            .wrap_connector(http);
        Ok(RawClient {
            via: Via::Hyper {
                client: Box::new(Client::builder(TokioExecutor::new()).build(connector)),
                token: token.map(str::to_string),
            },
            base: base_url.trim_end_matches('/').to_string(),
        })
    }

    /// A client authenticating as `config` says (kcache-transport resolves a kubeconfig's
    /// certificates, tokens, exec plugins and proxies into one). Responses are left as the
    /// server sent them: no compression is asked for, nothing is retried or rate limited.
    pub fn from_config(mut config: kcache_transport::Config) -> Result<Self, Error> {
        let base = config
            .cluster_url
            .to_string()
            .trim_end_matches('/')
            .to_string();
        config.disable_compression = Some(true);
        config.qps = 0.0;
        config.max_retries = 0;
        config.request_timeout = None;
        let client =
            kcache_transport::Client::new(config).map_err(|e| Error::Tls(e.to_string()))?;
        Ok(RawClient {
            via: Via::Transport(client),
            base,
        })
    }

    async fn send(
        &self,
        method: Method,
        path: &str,
        content_type: &str,
        body: Bytes,
    ) -> Result<http::Response<Incoming>, Error> {
        self.send_with(method, path, &[], content_type, body).await
    }

    async fn send_with(
        &self,
        method: Method,
        path: &str,
        headers: &[(&str, &str)],
        content_type: &str,
        body: Bytes,
    ) -> Result<http::Response<Incoming>, Error> {
        let uri = match &self.via {
            Via::Hyper { .. } => format!("{}{path}", self.base),
            // kcache-transport prefixes its own base URL.
            Via::Transport(_) => path.to_string(),
        };
        let mut b = Request::builder().method(method).uri(uri);
        if !headers
            .iter()
            .any(|(k, _)| k.eq_ignore_ascii_case("accept"))
        {
            b = b.header(header::ACCEPT, "application/json");
        }
        for (k, v) in headers {
            b = b.header(*k, *v);
        }
        if !body.is_empty() {
            b = b.header(header::CONTENT_TYPE, content_type);
        }
        match &self.via {
            Via::Hyper { client, token } => {
                if let Some(t) = token {
                    b = b.header(header::AUTHORIZATION, format!("Bearer {t}"));
                }
                let req = b.body(Full::new(body)).map_err(req_err)?;
                client.request(req).await.map_err(req_err)
            }
            Via::Transport(client) => {
                let req = b.body(body).map_err(req_err)?;
                client.request_raw(req).await.map_err(req_err)
            }
        }
    }

    /// Any request with extra headers (an `Accept` given here replaces the default
    /// `application/json`); the response body as sent, not decoded or decompressed.
    pub async fn request_with_headers(
        &self,
        method: Method,
        path: &str,
        headers: &[(&str, &str)],
        content_type: &str,
        body: impl Into<Bytes>,
    ) -> Result<http::Response<Bytes>, Error> {
        let resp = self
            .send_with(method, path, headers, content_type, body.into())
            .await?;
        let (parts, body) = resp.into_parts();
        let bytes = body.collect().await.map_err(req_err)?.to_bytes();
        Ok(http::Response::from_parts(parts, bytes))
    }

    /// Any request; `body` is sent as is with `content_type`.
    pub async fn request(
        &self,
        method: Method,
        path: &str,
        content_type: &str,
        body: impl Into<Bytes>,
    ) -> Result<RawResponse, Error> {
        let resp = self.send(method, path, content_type, body.into()).await?;
        let (parts, body) = resp.into_parts();
        let bytes = body.collect().await.map_err(req_err)?.to_bytes();
        let body = serde_json::from_slice(&bytes)
            .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into_owned()));
        Ok(RawResponse {
            status: parts.status,
            headers: parts.headers,
            body,
            raw: bytes,
        })
    }

    /// GET.
    pub async fn get(&self, path: &str) -> Result<RawResponse, Error> {
        self.request(Method::GET, path, "", Bytes::new()).await
    }

    /// POST of a JSON object.
    pub async fn post(&self, path: &str, body: &Value) -> Result<RawResponse, Error> {
        self.request(Method::POST, path, "application/json", body.to_string())
            .await
    }

    /// PUT of a JSON object.
    pub async fn put(&self, path: &str, body: &Value) -> Result<RawResponse, Error> {
        self.request(Method::PUT, path, "application/json", body.to_string())
            .await
    }

    /// PATCH with a patch document of `content_type` (e.g. `application/merge-patch+json`).
    pub async fn patch(
        &self,
        path: &str,
        content_type: &str,
        body: &Value,
    ) -> Result<RawResponse, Error> {
        self.request(Method::PATCH, path, content_type, body.to_string())
            .await
    }

    /// DELETE.
    pub async fn delete(&self, path: &str) -> Result<RawResponse, Error> {
        self.request(Method::DELETE, path, "", Bytes::new()).await
    }

    /// Opens a watch (`path` includes `?watch=true...`); a non-200 answer is returned as `Err`
    /// carrying the response.
    pub async fn watch(&self, path: &str) -> Result<Result<WatchReader, RawResponse>, Error> {
        let resp = self.send(Method::GET, path, "", Bytes::new()).await?;
        if resp.status() != StatusCode::OK {
            let (parts, body) = resp.into_parts();
            let bytes = body.collect().await.map_err(req_err)?.to_bytes();
            let body = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
            return Ok(Err(RawResponse {
                status: parts.status,
                headers: parts.headers,
                body,
                raw: bytes,
            }));
        }
        Ok(Ok(WatchReader {
            body: resp.into_body(),
            buf: BytesMut::new(),
        }))
    }
}

/// Reads a watch body: concatenated JSON values, never assuming chunk or line boundaries.
#[derive(Debug)]
pub struct WatchReader {
    body: Incoming,
    buf: BytesMut,
}

impl WatchReader {
    /// The next event (`{"type":...,"object":...}`); `None` at a clean end of the stream; an
    /// error for a broken connection, bytes that are not JSON or a truncated last event.
    pub async fn next(&mut self) -> Option<Result<Value, Error>> {
        loop {
            let mut it = serde_json::Deserializer::from_slice(&self.buf).into_iter::<Value>();
            match it.next() {
                Some(Ok(v)) => {
                    let used = it.byte_offset();
                    self.buf.advance(used);
                    return Some(Ok(v));
                }
                Some(Err(e)) if !e.is_eof() => {
                    return Some(Err(Error::Request(format!("watch decode: {e}"))))
                }
                _ => {}
            }
            match self.body.frame().await {
                Some(Ok(f)) => {
                    if let Ok(data) = f.into_data() {
                        self.buf.extend_from_slice(&data);
                    }
                }
                Some(Err(e)) => return Some(Err(req_err(e))),
                None if self.buf.iter().all(u8::is_ascii_whitespace) => return None,
                None => {
                    return Some(Err(Error::Request(
                        "watch stream ended in the middle of an event".into(),
                    )))
                }
            }
        }
    }
}
