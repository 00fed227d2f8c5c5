//! Reaching the API server through a proxy (kubeconfig `proxy-url`, client-go's
//! `rest.Config.Proxy`): an HTTP `CONNECT` tunnel over plain TCP (`http://`) or over TLS to the
//! proxy (`https://`, verified with the same roots as the server), or SOCKS5 (`socks5://`, no
//! authentication or user name and password, RFC 1928/1929; the server's host name is resolved
//! by the proxy). `user:password@` in the URL is sent as `Proxy-Authorization: Basic` or as
//! SOCKS5 credentials. TLS to the API server runs end to end inside the tunnel.
//!
//! client-go sends plain-`http://` cluster requests to an HTTP proxy in absolute form; here
//! every connection is tunnelled, which every `CONNECT`-capable proxy serves the same way.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use base64::Engine as _;
use http::Uri;
use hyper::rt::{Read, ReadBufCursor, Write};
use hyper_util::client::legacy::connect::{Connected, Connection, HttpConnector};
use hyper_util::rt::TokioIo;
use kcache_core::BoxError;
use rustls::ClientConfig;
use rustls_pki_types::ServerName;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_rustls::client::TlsStream;
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

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Http,
    Https,
    Socks5,
}

#[derive(Clone)]
struct Proxy {
    kind: Kind,
    /// `http(s)://host:port` of the proxy itself, for the TCP connector.
    address: Uri,
    host: String,
    credentials: Option<(String, String)>,
    tls: Option<tokio_rustls::TlsConnector>,
}

/// The TCP connector under TLS: direct, or through the configured proxy.
#[derive(Clone)]
pub(crate) struct ProxyConnector {
    tcp: HttpConnector,
    proxy: Option<Arc<Proxy>>,
}

impl ProxyConnector {
    /// Connects with `tcp`, through `proxy_url` when set; `tls` is the client's TLS config (an
    /// `https://` proxy is verified with it).
    pub(crate) fn new(
        tcp: HttpConnector,
        proxy_url: Option<&Uri>,
        tls: &ClientConfig,
    ) -> Result<Self, String> {
        let Some(url) = proxy_url else {
            return Ok(ProxyConnector { tcp, proxy: None });
        };
        let kind = match url.scheme_str() {
            Some("http") => Kind::Http,
            Some("https") => Kind::Https,
            Some("socks5") => Kind::Socks5,
            other => {
                return Err(format!(
                    "unsupported scheme {:?}, must be http, https, or socks5",
                    other.unwrap_or("")
                ))
            }
        };
        let host = url.host().unwrap_or_default().to_string();
        let default_port = match kind {
            Kind::Http => 80,
            Kind::Https => 443,
            Kind::Socks5 => 1080,
        };
        let port = url.port_u16().unwrap_or(default_port);
        let address: Uri = format!("http://{}:{port}", bracketed(&host))
            .parse()
            .map_err(|e| format!("proxy host {host:?}: {e}"))?;
        let credentials = url
            .authority()
            .and_then(|a| a.as_str().rsplit_once('@'))
            .map(|(userinfo, _)| {
                let (user, pass) = userinfo.split_once(':').unwrap_or((userinfo, ""));
                (percent_decode(user), percent_decode(pass))
            });
        let tls = (kind == Kind::Https).then(|| {
            let mut config = tls.clone();
            config.alpn_protocols = vec![b"http/1.1".to_vec()];
            tokio_rustls::TlsConnector::from(Arc::new(config))
        });
        Ok(ProxyConnector {
            tcp,
            proxy: Some(Arc::new(Proxy {
                kind,
                address,
                host,
                credentials,
                tls,
            })),
        })
    }
}

fn bracketed(host: &str) -> String {
    if host.contains(':') && !host.starts_with('[') {
        format!("[{host}]")
    } else {
        host.to_string()
    }
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        match (
            b[i],
            b.get(i + 1).and_then(|c| hex(*c)),
            b.get(i + 2).and_then(|c| hex(*c)),
        ) {
            (b'%', Some(h), Some(l)) => {
                out.push((h * 16 + l) as u8);
                i += 3;
            }
            (c, _, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A connection: TCP to the server or a proxy, or TLS to an `https://` proxy.
pub(crate) enum ProxyStream {
    Tcp(TokioIo<TcpStream>),
    Tls(TokioIo<Box<TlsStream<TcpStream>>>),
}

impl Connection for ProxyStream {
    fn connected(&self) -> Connected {
        match self {
            ProxyStream::Tcp(s) => s.connected(),
            ProxyStream::Tls(_) => Connected::new(),
        }
    }
}

impl Read for ProxyStream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: ReadBufCursor<'_>,
    ) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            ProxyStream::Tcp(s) => Pin::new(s).poll_read(cx, buf),
            ProxyStream::Tls(s) => Pin::new(s).poll_read(cx, buf),
        }
    }
}

impl Write for ProxyStream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        match self.get_mut() {
            ProxyStream::Tcp(s) => Pin::new(s).poll_write(cx, buf),
            ProxyStream::Tls(s) => Pin::new(s).poll_write(cx, buf),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            ProxyStream::Tcp(s) => Pin::new(s).poll_flush(cx),
            ProxyStream::Tls(s) => Pin::new(s).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            ProxyStream::Tcp(s) => Pin::new(s).poll_shutdown(cx),
            ProxyStream::Tls(s) => Pin::new(s).poll_shutdown(cx),
        }
    }
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
        let proxy = self.proxy.clone();
        Box::pin(async move {
            let Some(proxy) = proxy else {
                return Ok(ProxyStream::Tcp(tcp.call(dst).await?));
            };
            let host = dst.host().unwrap_or_default().to_string();
            let port = dst.port_u16().unwrap_or(match dst.scheme_str() {
                Some("http") => 80,
                _ => 443,
            });
            let mut stream = tcp
                .call(proxy.address.clone())
                .await
                .map_err(|e| format!("cannot connect to proxy {}: {e}", proxy.address))?
                .into_inner();
            match (&proxy.tls, proxy.kind) {
                (Some(tls), _) => {
                    let name =
                        ServerName::try_from(proxy.host.trim_matches(['[', ']']).to_string())
                            .map_err(|e| format!("proxy host {:?}: {e}", proxy.host))?;
                    let mut tls = tls
                        .connect(name, stream)
                        .await
                        .map_err(|e| format!("TLS to proxy {}: {e}", proxy.host))?;
                    http_connect(&mut tls, &proxy, &host, port).await?;
                    Ok(ProxyStream::Tls(TokioIo::new(Box::new(tls))))
                }
                (None, Kind::Socks5) => {
                    socks5_connect(&mut stream, &proxy, &host, port).await?;
                    Ok(ProxyStream::Tcp(TokioIo::new(stream)))
                }
                (None, _) => {
                    http_connect(&mut stream, &proxy, &host, port).await?;
                    Ok(ProxyStream::Tcp(TokioIo::new(stream)))
                }
            }
        })
    }
}

/// The longest `CONNECT` response head read.
const MAX_CONNECT_RESPONSE: usize = 16 * 1024;

/// Opens a `CONNECT` tunnel to `host:port`.
async fn http_connect<S: AsyncRead + AsyncWrite + Unpin>(
    s: &mut S,
    proxy: &Proxy,
    host: &str,
    port: u16,
) -> Result<(), BoxError> {
    let target = format!("{}:{port}", bracketed(host));
    let mut req = format!("CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n");
    if let Some((user, pass)) = &proxy.credentials {
        let token = base64::engine::general_purpose::STANDARD.encode(format!("{user}:{pass}"));
        req.push_str(&format!("Proxy-Authorization: Basic {token}\r\n"));
    }
    req.push_str("\r\n");
    s.write_all(req.as_bytes()).await?;
    s.flush().await?;
    // Byte by byte up to the blank line: nothing of the tunnel is read here.
    let mut head = Vec::with_capacity(256);
    while !head.ends_with(b"\r\n\r\n") {
        if head.len() >= MAX_CONNECT_RESPONSE {
            return Err(format!("proxy {}: CONNECT response head too long", proxy.host).into());
        }
        let b = s
            .read_u8()
            .await
            .map_err(|e| format!("proxy {}: reading the CONNECT response: {e}", proxy.host))?;
        head.push(b);
    }
    let text = String::from_utf8_lossy(&head);
    let status_line = text.lines().next().unwrap_or_default();
    let code = status_line.split_whitespace().nth(1).unwrap_or_default();
    if !code.starts_with('2') || code.len() != 3 {
        return Err(format!(
            "proxy {} refused CONNECT {target}: {status_line}",
            proxy.host
        )
        .into());
    }
    Ok(())
}

/// Opens a SOCKS5 connection to `host:port` (RFC 1928; credentials per RFC 1929).
async fn socks5_connect(
    s: &mut TcpStream,
    proxy: &Proxy,
    host: &str,
    port: u16,
) -> Result<(), BoxError> {
    let fail = |what: String| -> BoxError { format!("socks5 proxy {}: {what}", proxy.host).into() };
    let methods: &[u8] = if proxy.credentials.is_some() {
        &[5, 2, 0, 2]
    } else {
        &[5, 1, 0]
    };
    s.write_all(methods).await?;
    let mut reply = [0u8; 2];
    s.read_exact(&mut reply).await?;
    match (reply, &proxy.credentials) {
        ([5, 0], _) => {}
        ([5, 2], Some((user, pass))) => {
            if user.len() > 255 || pass.len() > 255 {
                return Err(fail("user name or password longer than 255 bytes".into()));
            }
            let mut auth = vec![1, user.len() as u8];
            auth.extend_from_slice(user.as_bytes());
            auth.push(pass.len() as u8);
            auth.extend_from_slice(pass.as_bytes());
            s.write_all(&auth).await?;
            s.read_exact(&mut reply).await?;
            if reply[1] != 0 {
                return Err(fail("user name and password rejected".into()));
            }
        }
        ([5, 0xff], _) => return Err(fail("no acceptable authentication method".into())),
        (r, _) => return Err(fail(format!("unexpected greeting reply {r:?}"))),
    }
    let mut req = vec![5, 1, 0];
    let bare = host.trim_matches(['[', ']']);
    match bare.parse::<std::net::IpAddr>() {
        Ok(std::net::IpAddr::V4(ip)) => {
            req.push(1);
            req.extend_from_slice(&ip.octets());
        }
        Ok(std::net::IpAddr::V6(ip)) => {
            req.push(4);
            req.extend_from_slice(&ip.octets());
        }
        Err(_) => {
            if bare.len() > 255 {
                return Err(fail(format!("host name {bare:?} longer than 255 bytes")));
            }
            req.push(3);
            req.push(bare.len() as u8);
            req.extend_from_slice(bare.as_bytes());
        }
    }
    req.extend_from_slice(&port.to_be_bytes());
    s.write_all(&req).await?;
    let mut head = [0u8; 4];
    s.read_exact(&mut head).await?;
    if head[1] != 0 {
        let why = match head[1] {
            1 => "general failure",
            2 => "connection not allowed by ruleset",
            3 => "network unreachable",
            4 => "host unreachable",
            5 => "connection refused",
            6 => "TTL expired",
            7 => "command not supported",
            8 => "address type not supported",
            _ => "unknown error",
        };
        return Err(fail(format!("CONNECT {host}:{port} failed: {why}")));
    }
    let rest = match head[3] {
        1 => 4 + 2,
        4 => 16 + 2,
        3 => usize::from(s.read_u8().await?) + 2,
        t => return Err(fail(format!("unexpected address type {t} in reply"))),
    };
    let mut skip = vec![0u8; rest];
    s.read_exact(&mut skip).await?;
    Ok(())
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
        assert_eq!(percent_decode("a%40b%3"), "a@b%3");
    }
}
