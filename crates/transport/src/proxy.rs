//! Reaching the API server through a proxy, chosen as client-go chooses it: the kubeconfig's
//! `proxy-url` (`rest.Config.Proxy`) when set, for every request; else Go's
//! `http.ProxyFromEnvironment`: `HTTPS_PROXY` for `https://` servers, `HTTP_PROXY` for
//! `http://` ones (each also lowercase; the uppercase one wins), except hosts matching
//! `NO_PROXY`, `localhost` and loopback addresses.
//!
//! A proxy is an HTTP `CONNECT` tunnel over plain TCP (`http://`) or over TLS to the proxy
//! (`https://`, verified with the same roots as the server), or SOCKS5 (`socks5://`, no
//! authentication or user name and password; the server's host name is resolved by the proxy),
//! on hyper-util's proxy connectors. `user:password@` in the URL is sent as
//! `Proxy-Authorization: Basic` or as SOCKS5 credentials. TLS to the API server runs end to end
//! inside the tunnel.
//!
//! client-go sends plain-`http://` cluster requests to an HTTP proxy in absolute form; here
//! every connection is tunnelled, which every `CONNECT`-capable proxy serves the same way.

use std::future::Future;
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use http::Uri;
use hyper_rustls::MaybeHttpsStream;
use hyper_util::client::legacy::connect::proxy::{SocksV5, Tunnel};
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::proxy::matcher::{Intercept, Matcher};
use hyper_util::rt::TokioIo;
use kcache_core::BoxError;
use rustls::ClientConfig;
use tokio::net::TcpStream;
use tower_service::Service;

/// Checks a `proxy-url` as client-go's `parseProxyURL` does: `http`, `https` or `socks5`.
pub(crate) fn parse_proxy_url(url: &str) -> Result<Uri, String> {
    // The URL may hold a password: errors name the problem, not the URL.
    let uri: Uri = url.parse().map_err(|e| format!("not a URL: {e}"))?;
    match uri.scheme_str() {
        Some("http" | "https" | "socks5") if uri.host().is_some() => Ok(uri),
        Some("http" | "https" | "socks5") => Err("the URL has no host".into()),
        other => Err(format!(
            "unsupported scheme {:?}, must be http, https, or socks5",
            other.unwrap_or("")
        )),
    }
}

/// Where the proxy of a connection comes from.
enum Source {
    /// The kubeconfig's `proxy-url`: every request.
    Configured(Matcher),
    /// The environment, as Go's `http.ProxyFromEnvironment` reads it.
    Environment(Matcher),
}

/// The TCP connector under TLS: direct, or through the proxy client-go would use.
#[derive(Clone)]
pub(crate) struct ProxyConnector {
    tcp: HttpConnector,
    source: Option<Arc<Source>>,
    /// TLS to an `https://` proxy (the client's roots; HTTP/1.1 only).
    proxy_tls: ClientConfig,
}

/// A connection: TCP to the server or a proxy, or TLS to an `https://` proxy.
pub(crate) type ProxyStream = MaybeHttpsStream<TokioIo<TcpStream>>;

impl ProxyConnector {
    /// Connects with `tcp`, through `proxy_url` when set, else through the proxy the environment
    /// names; `tls` is the client's TLS config (an `https://` proxy is verified with it).
    pub(crate) fn new(
        tcp: HttpConnector,
        proxy_url: Option<&Uri>,
        tls: &ClientConfig,
    ) -> Result<Self, String> {
        let source = match proxy_url {
            Some(url) => {
                let url = parse_proxy_url(&url.to_string())?.to_string();
                Some(Source::Configured(
                    Matcher::builder().http(url.clone()).https(url).build(),
                ))
            }
            None => from_environment(|name| std::env::var(name).ok()).map(Source::Environment),
        };
        let mut proxy_tls = tls.clone();
        proxy_tls.alpn_protocols.clear();
        Ok(ProxyConnector {
            tcp,
            source: source.map(Arc::new),
            proxy_tls,
        })
    }

    /// The proxy for `dst`, if any.
    fn intercept(&self, dst: &Uri) -> Option<Intercept> {
        match self.source.as_deref()? {
            Source::Configured(m) => m.intercept(dst),
            Source::Environment(m) => environment_intercept(m, dst),
        }
    }
}

/// `HTTP_PROXY`, `HTTPS_PROXY` and `NO_PROXY` as Go's `httpproxy.FromEnvironment` reads them
/// through `var` (the uppercase name first, an empty value as unset); `None` when neither
/// proxy is set.
fn from_environment(var: impl Fn(&str) -> Option<String>) -> Option<Matcher> {
    let any = |names: [&str; 2]| {
        names
            .iter()
            .filter_map(|n| var(n))
            .find(|v| !v.is_empty())
            .unwrap_or_default()
    };
    let http = any(["HTTP_PROXY", "http_proxy"]);
    let https = any(["HTTPS_PROXY", "https_proxy"]);
    if http.is_empty() && https.is_empty() {
        return None;
    }
    Some(
        Matcher::builder()
            .http(http)
            .https(https)
            .no(any(["NO_PROXY", "no_proxy"]))
            .build(),
    )
}

/// The environment's proxy for `dst`: by its scheme, unless `NO_PROXY` or Go's `useProxy`
/// rule exempts it.
fn environment_intercept(m: &Matcher, dst: &Uri) -> Option<Intercept> {
    if is_local(dst.host()?) {
        return None;
    }
    m.intercept(dst)
}

/// Go's `useProxy` never proxies `localhost` or a loopback address.
fn is_local(host: &str) -> bool {
    host.eq_ignore_ascii_case("localhost")
        || host
            .trim_matches(['[', ']'])
            .parse::<IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// `dst` with its port spelled out (hyper-util's connectors assume 443 without one).
fn with_port(dst: &Uri) -> Result<Uri, BoxError> {
    let host = dst.host().ok_or("request URL without a host")?;
    let port = dst.port_u16().unwrap_or(match dst.scheme_str() {
        Some("http") => 80,
        _ => 443,
    });
    let scheme = dst.scheme_str().unwrap_or("https");
    Ok(format!("{scheme}://{host}:{port}").parse()?)
}

impl Service<Uri> for ProxyConnector {
    type Response = ProxyStream;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<ProxyStream, BoxError>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.tcp.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, dst: Uri) -> Self::Future {
        let mut tcp = self.tcp.clone();
        let Some(proxy) = self.intercept(&dst) else {
            return Box::pin(async move { Ok(MaybeHttpsStream::Http(tcp.call(dst).await?)) });
        };
        let proxy_tls = self.proxy_tls.clone();
        Box::pin(async move {
            let dst = with_port(&dst)?;
            let target = format!(
                "{}:{}",
                dst.host().unwrap_or_default(),
                dst.port_u16().unwrap_or(443)
            );
            let at = proxy
                .uri()
                .authority()
                .map(|a| a.as_str())
                .unwrap_or_default();
            let at = at.rsplit_once('@').map_or(at, |(_, host)| host).to_string();
            let refused = |e: BoxError| -> BoxError { tunnel_error(&at, &target, e) };
            match proxy.uri().scheme_str() {
                Some("http") => {
                    let mut tunnel = Tunnel::new(proxy.uri().clone(), tcp);
                    if let Some(auth) = proxy.basic_auth() {
                        tunnel = tunnel.with_auth(auth.clone());
                    }
                    let io = tunnel.call(dst).await.map_err(|e| refused(e.into()))?;
                    Ok(MaybeHttpsStream::Http(io))
                }
                Some("https") => {
                    let tls = hyper_rustls::HttpsConnectorBuilder::new()
                        .with_tls_config(proxy_tls)
                        .https_only()
                        .enable_http1()
                        .wrap_connector(tcp);
                    let mut tunnel = Tunnel::new(proxy.uri().clone(), tls);
                    if let Some(auth) = proxy.basic_auth() {
                        tunnel = tunnel.with_auth(auth.clone());
                    }
                    tunnel.call(dst).await.map_err(|e| refused(e.into()))
                }
                Some("socks5" | "socks5h") => {
                    let mut socks = SocksV5::new(proxy.uri().clone(), tcp);
                    if let Some((user, pass)) = proxy.raw_auth() {
                        socks = socks.with_auth(user.to_string(), pass.to_string());
                    }
                    let io = socks
                        .call(dst)
                        .await
                        .map_err(|e| format!("socks5 proxy {at}: CONNECT {target}: {e}"))?;
                    Ok(MaybeHttpsStream::Http(io))
                }
                other => Err(format!(
                    "proxy {at}: unsupported scheme {:?}, must be http, https, or socks5",
                    other.unwrap_or("")
                )
                .into()),
            }
        })
    }
}

/// A `CONNECT` failure, naming the proxy, the target and what went wrong (hyper-util's
/// `TunnelError` is not public: its message and source say it).
fn tunnel_error(proxy: &str, target: &str, e: BoxError) -> BoxError {
    let what = e.to_string();
    let why = if what.ends_with("proxy authorization required") {
        "refused: 407 Proxy Authentication Required".to_string()
    } else if what.ends_with("unsuccessful") {
        "refused: the answer was not 200 Connection established".to_string()
    } else {
        match e.source() {
            Some(source) => format!("{what}: {source}"),
            None => what,
        }
    };
    format!("proxy {proxy}, CONNECT {target}: {why}").into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_proxy_urls_as_client_go() {
        assert!(parse_proxy_url("http://proxy:3128").is_ok());
        assert!(parse_proxy_url("https://u:p@proxy").is_ok());
        assert!(parse_proxy_url("socks5://127.0.0.1:1080").is_ok());
        assert_eq!(
            parse_proxy_url("ftp://proxy").unwrap_err(),
            "unsupported scheme \"ftp\", must be http, https, or socks5"
        );
    }

    #[test]
    fn credentials_are_percent_decoded() {
        let url = "http://alice:s%40cret@proxy:3128";
        let m = Matcher::builder().http(url).https(url).build();
        let proxy = m.intercept(&"https://server".parse().unwrap()).unwrap();
        // base64("alice:s@cret")
        assert_eq!(
            proxy.basic_auth().unwrap().to_str().unwrap(),
            "Basic YWxpY2U6c0BjcmV0"
        );
    }

    #[test]
    fn the_environment_is_read_as_go_reads_it() {
        let env = |vars: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                vars.iter()
                    .find(|(n, _)| *n == name)
                    .map(|(_, v)| v.to_string())
            }
        };
        let proxy_of = |m: &Matcher, dst: &str| {
            environment_intercept(m, &dst.parse().unwrap()).map(|i| i.uri().to_string())
        };
        assert!(from_environment(env(&[("NO_PROXY", "x")])).is_none());
        assert!(from_environment(env(&[("HTTPS_PROXY", "")])).is_none());

        let m = from_environment(env(&[
            ("HTTPS_PROXY", "http://upper:3128"),
            ("https_proxy", "http://lower:3128"),
            ("http_proxy", "socks5://plain:1080"),
            ("no_proxy", "internal.example,10.0.0.0/8"),
        ]))
        .unwrap();
        // By the server's scheme; the uppercase variable wins.
        assert_eq!(
            proxy_of(&m, "https://kube.example:6443").as_deref(),
            Some("http://upper:3128/")
        );
        assert_eq!(
            proxy_of(&m, "http://kube.example").as_deref(),
            Some("socks5://plain:1080/")
        );
        // NO_PROXY: domains with their subdomains, CIDR ranges.
        assert_eq!(proxy_of(&m, "https://api.internal.example"), None);
        assert_eq!(proxy_of(&m, "https://10.1.2.3:6443"), None);
        // Go never proxies loopback.
        assert_eq!(proxy_of(&m, "https://127.0.0.1:6443"), None);
        assert_eq!(proxy_of(&m, "https://localhost:6443"), None);

        // A lowercase-only setting counts; HTTP_PROXY does not serve https:// servers.
        let m = from_environment(env(&[("http_proxy", "proxy:8080")])).unwrap();
        assert_eq!(proxy_of(&m, "https://kube.example"), None);
        assert_eq!(
            proxy_of(&m, "http://kube.example").as_deref(),
            Some("http://proxy:8080/")
        );
    }

    #[test]
    fn loopback_and_localhost_are_never_proxied_from_the_environment() {
        assert!(is_local("localhost"));
        assert!(is_local("127.0.0.1"));
        assert!(is_local("[::1]"));
        assert!(!is_local("10.0.0.1"));
        assert!(!is_local("kube.example"));
    }

    #[test]
    fn a_missing_port_is_the_scheme_default() {
        assert_eq!(
            with_port(&"http://h".parse().unwrap()).unwrap(),
            "http://h:80"
        );
        assert_eq!(
            with_port(&"https://[::1]".parse().unwrap()).unwrap(),
            "https://[::1]:443"
        );
    }
}
