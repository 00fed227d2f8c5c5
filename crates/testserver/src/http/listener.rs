//! The listener: loopback TCP, optional TLS, HTTP/1.1 and HTTP/2 (ALPN, or h2c prior
//! knowledge) via hyper-util's auto builder. Each connection is served by [`super::router`].

use std::convert::Infallible;
use std::sync::Arc;

use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio_rustls::TlsAcceptor;

use super::router;
use crate::state::ServerState;

/// Accepts connections until `stop` changes, serving each on its own task.
pub(crate) async fn accept_loop(
    listener: TcpListener,
    state: Arc<ServerState>,
    tls: Option<TlsAcceptor>,
    mut stop: watch::Receiver<bool>,
) {
    loop {
        let stream = tokio::select! {
            _ = stop.changed() => return,
            r = listener.accept() => match r {
                Ok((s, _)) => s,
                Err(e) => {
                    tracing::warn!("accept failed: {e}");
                    continue;
                }
            },
        };
        let _ = stream.set_nodelay(true);
        let (state, tls, stop) = (state.clone(), tls.clone(), stop.clone());
        tokio::spawn(async move {
            match tls {
                Some(acceptor) => match acceptor.accept(stream).await {
                    Ok(s) => serve(s, state, stop).await,
                    Err(e) => tracing::debug!("TLS handshake failed: {e}"),
                },
                None => serve(stream, state, stop).await,
            }
        });
    }
}

/// Serves one connection until it ends or the listener generation stops (then it is dropped
/// mid-flight, like a server process that went away).
async fn serve<I>(io: I, state: Arc<ServerState>, mut stop: watch::Receiver<bool>)
where
    I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let svc = service_fn(move |req| {
        let state = state.clone();
        async move { Ok::<_, Infallible>(router::handle(state, req).await) }
    });
    let builder = auto::Builder::new(TokioExecutor::new());
    let conn = builder.serve_connection(TokioIo::new(io), svc);
    tokio::select! {
        r = conn => if let Err(e) = r { tracing::debug!("connection ended: {e}") },
        _ = stop.changed() => {}
    }
}
