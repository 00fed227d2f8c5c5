//! The manager's one small HTTP server: `/healthz`, `/readyz` (and `/healthz/<check>`,
//! `/readyz/<check>`) and, with the `prometheus` feature, `/metrics`. HTTP/1.1 over plain TCP,
//! meant for the kubelet's probes and a Prometheus scrape on the pod network.

use std::convert::Infallible;
use std::sync::Arc;

use bytes::Bytes;
use http::{Method, Request, Response, StatusCode};
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use super::health::Checks;

/// What the server answers from.
pub(crate) struct Endpoints {
    pub(crate) healthz: Checks,
    pub(crate) readyz: Checks,
    #[cfg(feature = "prometheus")]
    pub(crate) registry: prometheus::Registry,
}

/// Serves until `stop` fires, then drops every open connection.
pub(crate) async fn serve(
    listener: TcpListener,
    endpoints: Arc<Endpoints>,
    stop: CancellationToken,
) {
    let mut connections = JoinSet::new();
    loop {
        let accepted = tokio::select! {
            _ = stop.cancelled() => break,
            accepted = listener.accept() => accepted,
            Some(_) = connections.join_next(), if !connections.is_empty() => continue,
        };
        let stream = match accepted {
            Ok((stream, _)) => stream,
            Err(e) => {
                tracing::warn!("health/metrics server: accept failed: {e}");
                continue;
            }
        };
        let endpoints = endpoints.clone();
        connections.spawn(async move {
            let service = service_fn(move |req| {
                let endpoints = endpoints.clone();
                async move { Ok::<_, Infallible>(endpoints.answer(&req)) }
            });
            let conn = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service);
            if let Err(e) = conn.await {
                tracing::debug!("health/metrics connection ended: {e}");
            }
        });
    }
    connections.abort_all();
}

impl Endpoints {
    fn answer(&self, req: &Request<Incoming>) -> Response<Full<Bytes>> {
        if req.method() != Method::GET && req.method() != Method::HEAD {
            return text(StatusCode::METHOD_NOT_ALLOWED, "only GET and HEAD\n".into());
        }
        let path = req.uri().path();
        let verbose = req.uri().query().is_some_and(|q| {
            q.split('&')
                .any(|p| p == "verbose" || p.starts_with("verbose="))
        });
        let probe = |endpoint: &str, checks: &Checks, only: Option<&str>| match checks.run(only) {
            None => text(StatusCode::NOT_FOUND, format!("no check {only:?}\n")),
            Some((true, report)) if verbose => {
                text(StatusCode::OK, format!("{report}{endpoint} check passed\n"))
            }
            Some((true, _)) => text(StatusCode::OK, "ok".into()),
            Some((false, report)) => text(
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("{report}{endpoint} check failed\n"),
            ),
        };
        match path.trim_end_matches('/') {
            "/healthz" => probe("healthz", &self.healthz, None),
            "/readyz" => probe("readyz", &self.readyz, None),
            #[cfg(feature = "prometheus")]
            "/metrics" => self.metrics(),
            p => match (p.strip_prefix("/healthz/"), p.strip_prefix("/readyz/")) {
                (Some(check), _) => probe("healthz", &self.healthz, Some(check)),
                (_, Some(check)) => probe("readyz", &self.readyz, Some(check)),
                _ => text(StatusCode::NOT_FOUND, "not found\n".into()),
            },
        }
    }

    #[cfg(feature = "prometheus")]
    fn metrics(&self) -> Response<Full<Bytes>> {
        use prometheus::Encoder;
        let encoder = prometheus::TextEncoder::new();
        let mut body = Vec::new();
        match encoder.encode(&self.registry.gather(), &mut body) {
            Ok(()) => Response::builder()
                .header(http::header::CONTENT_TYPE, encoder.format_type())
                .body(Full::new(Bytes::from(body)))
                .unwrap_or_default(),
            Err(e) => text(StatusCode::INTERNAL_SERVER_ERROR, format!("{e}\n")),
        }
    }
}

fn text(status: StatusCode, body: String) -> Response<Full<Bytes>> {
    let mut resp = Response::new(Full::new(Bytes::from(body)));
    *resp.status_mut() = status;
    resp.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    resp
}
