//! The HTTP client: hyper + hyper-util's pooled client over rustls, HTTP/2 by ALPN (so every
//! watch of a client shares one connection) with HTTP/1.1 fallback; authentication, the
//! client-side rate limit, `Retry-After` retries, timeouts and status decoding per request.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::header::{
    HeaderName, HeaderValue, ACCEPT, ACCEPT_ENCODING, AUTHORIZATION, CONTENT_TYPE, USER_AGENT,
};
use http::{Method, Request, Response, StatusCode};
use http_body_util::Full;
use hyper::body::Incoming;
use hyper_rustls::{FixedServerNameResolver, HttpsConnector};
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::{TokioExecutor, TokioTimer};
use kcache_core::{Error, WatchStream};
use kcache_flowcontrol::TokenBucket;
use rustls_pki_types::ServerName;
use serde::de::DeserializeOwned;

use crate::auth::Auth;
use crate::body::ResponseBody;
use crate::config::Config;
use crate::decode::{keep, protobuf, ItemKind, ListStream, Trim, WatchEventStream};
use crate::error::{status_from_response, ConfigError};
use crate::protobuf_fallback::JsonFallback;
use crate::proxy::ProxyConnector;
use crate::retry;
use crate::tls::{self, ClientCertSlot};
use crate::warning::{self, WarningHandler, WarningLogger};

/// The items of a list response as they are decoded (see [`ListStream`]).
pub type ListItems<K> = ListStream<ResponseBody, K>;

type HyperClient = hyper_util::client::legacy::Client<HttpsConnector<ProxyConnector>, Full<Bytes>>;

/// A client of one API server (client-go's `rest.RESTClient` with its transport). Cheap to
/// clone: clones share the connection pool, credentials and rate limiter.
#[derive(Clone)]
pub struct Client {
    inner: Arc<Inner>,
}

struct Inner {
    http: HyperClient,
    /// `scheme://authority[/prefix]`, no trailing slash.
    base: String,
    auth: Auth,
    /// client-go's `flowcontrol` token bucket on non-watch requests; `None`: `qps <= 0`.
    limiter: Option<TokenBucket>,
    request_timeout: Option<Duration>,
    max_retries: u32,
    default_namespace: String,
    max_object_size: usize,
    user_agent: HeaderValue,
    /// `Accept-Encoding: gzip` on every request (`Config::asks_for_gzip`).
    gzip: bool,
    /// Metadata-only lists ask for protobuf first (`Config::metadata_protobuf`).
    metadata_protobuf: bool,
    /// Lists of the built-in kinds kcache knows ask for protobuf first (`Config::protobuf`).
    protobuf: bool,
    /// Resources listed in JSON since a protobuf list of theirs held a field kcache does not
    /// know.
    json_fallback: Arc<JsonFallback>,
    /// Impersonation headers, sent with every request.
    impersonate: Vec<(HeaderName, HeaderValue)>,
    /// Where the warnings of every response go.
    warnings: Arc<dyn WarningHandler>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("base", &self.inner.base)
            .field("default_namespace", &self.inner.default_namespace)
            .finish_non_exhaustive()
    }
}

/// How a request is treated: watches are exempt from the rate limit, retries and timeouts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A request whose whole response is read.
    Buffered,
    /// A streamed list: the timeout covers the response headers.
    Streamed,
    /// A watch.
    Watch,
}

const USER_AGENT_VALUE: &str = concat!("kcache/", env!("CARGO_PKG_VERSION"));

impl Client {
    /// A client for this configuration.
    pub fn new(config: Config) -> Result<Client, ConfigError> {
        let slot = Arc::new(ClientCertSlot::default());
        let auth = Auth::new(&config.auth, slot.clone())?;
        let tls = tls::client_config(
            config.root_certs.as_deref(),
            config.insecure_skip_tls_verify,
            slot,
        )?;
        let mut connector = HttpConnector::new();
        connector.enforce_http(false);
        connector.set_nodelay(true);
        connector.set_connect_timeout(config.connect_timeout);
        let connector = ProxyConnector::new(connector, config.proxy_url.as_ref(), &tls)
            .map_err(ConfigError::Proxy)?;
        let builder = hyper_rustls::HttpsConnectorBuilder::new()
            .with_tls_config(tls)
            .https_or_http();
        let builder = match &config.tls_server_name {
            Some(name) => {
                let name = ServerName::try_from(name.clone())
                    .map_err(|e| ConfigError::Tls(format!("tls-server-name {name:?}: {e}")))?;
                builder.with_server_name_resolver(FixedServerNameResolver::new(name))
            }
            None => builder,
        };
        let connector = builder.enable_all_versions().wrap_connector(connector);
        let mut http = hyper_util::client::legacy::Client::builder(TokioExecutor::new());
        http.timer(TokioTimer::new());
        // hyper grows an HTTP/1 connection's read buffer up to ~400 KiB while a list streams in
        // faster than it is read; the decoders copy what they need at once, so 64 KiB (a few
        // more reads of a large body) lowers an informer's peak RSS.
        http.http1_max_buf_size(64 * 1024);
        if let Some(interval) = config.keep_alive {
            http.http2_keep_alive_interval(interval)
                .http2_keep_alive_timeout(interval / 2)
                .http2_keep_alive_while_idle(true);
        }
        let url = &config.cluster_url;
        let (Some(scheme), Some(authority)) = (url.scheme_str(), url.authority()) else {
            return Err(ConfigError::ServerUrl {
                url: url.to_string(),
                problem: "needs a scheme and a host".into(),
            });
        };
        let base = format!("{scheme}://{authority}{}", url.path().trim_end_matches('/'));
        let user_agent = match &config.user_agent {
            None => HeaderValue::from_static(USER_AGENT_VALUE),
            Some(ua) => HeaderValue::from_str(ua).map_err(|_| ConfigError::Invalid {
                field: "user_agent",
                problem: format!("{ua:?} is not a valid header value"),
            })?,
        };
        // As client-go's REST client: no limiter unless qps > 0 (NaN is rejected, not ignored).
        let gzip = config.asks_for_gzip();
        let limiter = if config.qps > 0.0 || config.qps.is_nan() {
            let bucket = TokenBucket::new(f64::from(config.qps), config.burst);
            Some(bucket.map_err(ConfigError::RateLimit)?)
        } else {
            None
        };
        Ok(Client {
            inner: Arc::new(Inner {
                http: http.build(connector),
                base,
                auth,
                limiter,
                request_timeout: config.request_timeout,
                max_retries: config.max_retries,
                default_namespace: config.default_namespace,
                max_object_size: config.max_object_size,
                user_agent,
                gzip,
                metadata_protobuf: config.metadata_protobuf,
                protobuf: config.protobuf,
                json_fallback: Arc::default(),
                impersonate: config.impersonate.headers()?,
                warnings: config
                    .warning_handler
                    .unwrap_or_else(|| Arc::new(WarningLogger)),
            }),
        })
    }

    /// A client from [`Config::infer`]: the kubeconfig kubectl would use, else the in-cluster
    /// service account.
    pub async fn try_default() -> Result<Client, ConfigError> {
        Client::new(Config::infer()?)
    }

    /// A client for the current context of this kubeconfig file.
    pub fn from_kubeconfig(path: impl Into<std::path::PathBuf>) -> Result<Client, ConfigError> {
        Client::new(Config::from_kubeconfig_file(path)?)
    }

    /// The namespace of the configuration's context (or pod).
    pub fn default_namespace(&self) -> &str {
        &self.inner.default_namespace
    }

    /// Whether metadata-only lists ask for protobuf first (`Config::metadata_protobuf`).
    pub(crate) fn metadata_protobuf(&self) -> bool {
        self.inner.metadata_protobuf
    }

    /// Whether lists of the built-in kinds kcache knows ask for protobuf first
    /// (`Config::protobuf`).
    pub(crate) fn protobuf(&self) -> bool {
        self.inner.protobuf
    }

    /// The resources this client lists in JSON since a protobuf list of theirs held a field
    /// kcache does not know.
    pub(crate) fn json_fallback(&self) -> &Arc<JsonFallback> {
        &self.inner.json_fallback
    }

    /// The largest object the decoders accept.
    pub fn max_object_size(&self) -> usize {
        self.inner.max_object_size
    }

    /// Sends a request (URI: path and query only) and reads the whole response body.
    pub async fn request_bytes(&self, req: Request<Bytes>) -> Result<Bytes, Error> {
        let limit = self.inner.max_object_size;
        let timeout = self.inner.request_timeout;
        let resp = self.send(&req, Kind::Buffered).await?;
        let body = ResponseBody::of(resp)?.read_to_end(limit);
        match timeout {
            Some(t) => tokio::time::timeout(t, body).await.map_err(|_| {
                Error::Request(format!("response body not read within {t:?}").into())
            })?,
            None => body.await,
        }
    }

    /// Sends a request and decodes the JSON response.
    pub async fn request_json<T: DeserializeOwned>(&self, req: Request<Bytes>) -> Result<T, Error> {
        let body = self.request_bytes(req).await?;
        serde_json::from_slice(&body).map_err(|e| Error::decode("response", e))
    }

    /// Sends a list request and decodes its items one at a time as the body arrives. A protobuf
    /// answer is read as a `PartialObjectMetadataList` (what a metadata-only `Accept` asks for
    /// first, as client-go's metadata client does).
    pub async fn request_list<K: DeserializeOwned>(
        &self,
        req: Request<Bytes>,
    ) -> Result<ListItems<K>, Error> {
        self.request_list_of(req, Some(ItemKind::PartialObjectMetadata))
            .await
    }

    /// [`request_list`](Self::request_list) whose protobuf answer, if any, is a list of `kind`;
    /// with `None` a protobuf answer (not asked for) is an error.
    pub(crate) async fn request_list_of<K: DeserializeOwned>(
        &self,
        req: Request<Bytes>,
        kind: Option<ItemKind>,
    ) -> Result<ListItems<K>, Error> {
        let resp = self.send(&req, Kind::Streamed).await?;
        let protobuf = resp
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with(protobuf::PROTOBUF));
        let body = ResponseBody::of(resp)?;
        let max = self.inner.max_object_size;
        Ok(match (protobuf, kind) {
            (false, _) => ListStream::new(body, max),
            (true, Some(kind)) => ListStream::protobuf(body, kind, max),
            (true, None) => {
                return Err(Error::decode(
                    format!("{} {}", req.method(), req.uri()),
                    "the server answered in protobuf, which the request did not ask for",
                ))
            }
        })
    }

    /// Starts a watch: no rate limit, no retries, no timeout (the server ends it).
    pub async fn request_watch<K: DeserializeOwned + Send + 'static>(
        &self,
        req: Request<Bytes>,
    ) -> Result<WatchStream<K>, Error> {
        self.watch_trimmed(req, keep).await
    }

    /// [`Client::request_watch`], applying `trim` to each decoded object.
    pub(crate) async fn watch_trimmed<K: DeserializeOwned + Send + 'static>(
        &self,
        req: Request<Bytes>,
        trim: Trim<K>,
    ) -> Result<WatchStream<K>, Error> {
        let resp = self.send(&req, Kind::Watch).await?;
        Ok(Box::pin(
            WatchEventStream::new(ResponseBody::of(resp)?, self.inner.max_object_size)
                .with_trim(trim),
        ))
    }

    /// Sends a request once and returns the response as the server sent it, whatever its
    /// status (client-go's `rest.Result` before `Into`, kube-rs's `Client::send`): credentials,
    /// impersonation and the client's headers are applied, the body is not read, decoded or
    /// decompressed. No rate limit, retries or timeout: for tools and tests that check the
    /// wire themselves.
    pub async fn request_raw(&self, req: Request<Bytes>) -> Result<Response<Incoming>, Error> {
        let resp = match self.inner.http.request(self.build(&req).await?).await {
            Ok(resp) => resp,
            Err(e) if e.is_connect() => return Err(Error::Connect(Box::new(e))),
            Err(e) => return Err(Error::Request(Box::new(e))),
        };
        if resp.status() == StatusCode::UNAUTHORIZED {
            self.inner.auth.unauthorized().await;
        }
        Ok(resp)
    }

    async fn build(&self, req: &Request<Bytes>) -> Result<Request<Full<Bytes>>, Error> {
        let pq = req.uri().path_and_query().map_or("/", |p| p.as_str());
        let uri = format!("{}{pq}", self.inner.base);
        let mut out = Request::builder()
            .method(req.method().clone())
            .uri(&uri)
            .body(Full::new(req.body().clone()))
            .map_err(|e| Error::Request(format!("invalid request {uri}: {e}").into()))?;
        let headers = out.headers_mut();
        headers.extend(req.headers().clone());
        headers
            .entry(ACCEPT)
            .or_insert(HeaderValue::from_static("application/json"));
        headers.insert(USER_AGENT, self.inner.user_agent.clone());
        if self.inner.gzip {
            headers
                .entry(ACCEPT_ENCODING)
                .or_insert(HeaderValue::from_static("gzip"));
        }
        for (name, value) in &self.inner.impersonate {
            headers.append(name.clone(), value.clone());
        }
        if let Some(auth) = self.inner.auth.authorization().await? {
            headers.insert(AUTHORIZATION, auth);
        }
        Ok(out)
    }

    async fn send(&self, req: &Request<Bytes>, kind: Kind) -> Result<Response<Incoming>, Error> {
        let inner = &self.inner;
        let mut attempt = 0;
        loop {
            if kind != Kind::Watch {
                if let Some(l) = &inner.limiter {
                    l.wait().await;
                }
            }
            let sent = inner.http.request(self.build(req).await?);
            let sent = match (kind, inner.request_timeout) {
                (Kind::Watch, _) | (_, None) => sent.await,
                (_, Some(t)) => tokio::time::timeout(t, sent).await.map_err(|_| {
                    Error::Request(
                        format!("{} {}: no response within {t:?}", req.method(), req.uri()).into(),
                    )
                })?,
            };
            let resp = match sent {
                Ok(resp) => resp,
                Err(e)
                    if kind != Kind::Watch
                        && req.method() == Method::GET
                        && attempt < inner.max_retries
                        && retry::is_retryable(&e) =>
                {
                    attempt += 1;
                    tracing::debug!(attempt, uri = %req.uri(), "retrying a GET after: {e}");
                    tokio::time::sleep(retry::CONNECTION_RESET_DELAY).await;
                    continue;
                }
                Err(e) if e.is_connect() => return Err(Error::Connect(Box::new(e))),
                Err(e) => return Err(Error::Request(Box::new(e))),
            };
            warning::handle(&*inner.warnings, resp.headers());
            let code = resp.status();
            if code.is_success() {
                return Ok(resp);
            }
            let retry_after = resp
                .headers()
                .get(http::header::RETRY_AFTER)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.trim().parse::<u32>().ok());
            let location = resp.headers().get(http::header::LOCATION).cloned();
            let body = match ResponseBody::of(resp) {
                Ok(b) => b
                    .read_to_end(inner.max_object_size)
                    .await
                    .unwrap_or_default(),
                Err(_) => Bytes::new(),
            };
            if code == StatusCode::UNAUTHORIZED {
                inner.auth.unauthorized().await;
            }
            let retryable = code == StatusCode::TOO_MANY_REQUESTS || code.is_server_error();
            if let (true, true, Some(secs)) = (
                kind != Kind::Watch,
                retryable && attempt < inner.max_retries,
                retry_after,
            ) {
                attempt += 1;
                tracing::debug!(%code, secs, attempt, uri = %req.uri(), "retrying after Retry-After");
                tokio::time::sleep(Duration::from_secs(u64::from(secs))).await;
                continue;
            }
            return Err(status_from_response(code, retry_after, location.as_ref(), &body).into());
        }
    }
}
