//! [`TestServer`]: the in-process handle of a running server. It starts the listener
//! ([`crate::http::listener`]), creates what kube-apiserver creates at start, and is how tests
//! create objects directly and inject faults.

use std::net::{Ipv4Addr, SocketAddr};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use kcache_core::{ApiResource, Status};
use parking_lot::Mutex;
use serde_json::Value;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio_rustls::TlsAcceptor;

use crate::config::ServerConfig;
use crate::handlers::{create_stored, Target};
use crate::http::faults::{Failure, RequestMatch, WatchControl};
use crate::http::listener::accept_loop;
use crate::http::tls;
use crate::state::ServerState;
use crate::{kubeconfig, Error};

/// The field manager of objects created in-process.
const IN_PROCESS_MANAGER: &str = "kcache-testserver";

/// The field manager of what the server creates for itself, as kube-apiserver names itself.
const SELF_MANAGER: &str = "kube-apiserver";

/// One generation of the listener: its stop signal and accept task.
struct Listening {
    stop: watch::Sender<bool>,
    task: JoinHandle<()>,
}

/// An embedded Kubernetes API server on a loopback port, and the handle to inject faults.
///
/// Data lives in memory; [`TestServer::restart`] keeps it. Dropping the handle stops the
/// server and closes every connection.
pub struct TestServer {
    pub(crate) state: Arc<ServerState>,
    addr: SocketAddr,
    tls: Option<TlsAcceptor>,
    ca_pem: Option<String>,
    listening: Mutex<Option<Listening>>,
    /// The in-process controllers (`crate::controllers`); they outlive restarts.
    controllers: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for TestServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TestServer")
            .field("addr", &self.addr)
            .field("tls", &self.tls.is_some())
            .finish()
    }
}

impl TestServer {
    /// Starts a server with `config` holding what a fresh kube-apiserver 1.20.2 holds: the
    /// default namespaces, RBAC roles and bindings, PriorityClasses, FlowSchemas,
    /// PriorityLevelConfigurations and the `default/kubernetes` Service.
    pub async fn start(config: ServerConfig) -> Result<TestServer, Error> {
        let want = SocketAddr::from((Ipv4Addr::LOCALHOST, config.port));
        let listener = TcpListener::bind(want)
            .await
            .map_err(|source| Error::Bind { addr: want, source })?;
        let addr = listener
            .local_addr()
            .map_err(|source| Error::Bind { addr: want, source })?;
        let (tls, ca_pem) = if config.tls {
            let certs = tls::generate()?;
            (Some(TlsAcceptor::from(certs.server)), Some(certs.ca_pem))
        } else {
            (None, None)
        };
        let state = ServerState::new(config, addr.to_string());
        let controllers = crate::controllers::start(&state);
        let server = TestServer {
            state,
            addr,
            tls,
            ca_pem,
            listening: Mutex::new(None),
            controllers,
        };
        for object in crate::bootstrap::objects(addr.port()) {
            let resource = server
                .state
                .resources
                .by_kind(
                    object["apiVersion"].as_str().unwrap_or_default(),
                    object["kind"].as_str().unwrap_or_default(),
                )
                .map(|r| r.api.clone())
                .ok_or_else(|| Error::Request(format!("bootstrap object not served: {object}")))?;
            server
                .create_as(&resource, object, SELF_MANAGER)
                .map_err(|s| Error::Request(s.to_string()))?;
        }
        crate::autoregister::sync(&server.state);
        server.listen(listener);
        Ok(server)
    }

    fn listen(&self, listener: TcpListener) {
        let (stop, stop_rx) = watch::channel(false);
        let task = tokio::spawn(accept_loop(
            listener,
            self.state.clone(),
            self.tls.clone(),
            stop_rx,
        ));
        *self.listening.lock() = Some(Listening { stop, task });
    }

    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `https://127.0.0.1:PORT` (or `http://` without TLS).
    pub fn base_url(&self) -> String {
        let scheme = if self.tls.is_some() { "https" } else { "http" };
        format!("{scheme}://{}", self.addr)
    }

    /// The CA certificate (PEM) clients must trust, when serving TLS.
    pub fn ca_pem(&self) -> Option<&str> {
        self.ca_pem.as_deref()
    }

    /// The bearer token clients must send, if one is required.
    pub fn token(&self) -> Option<&str> {
        self.state.config.token.as_deref()
    }

    /// The server's newest resourceVersion.
    pub fn resource_version(&self) -> u64 {
        self.state.storage.current_rev()
    }

    /// How many watch streams are open.
    pub fn watcher_count(&self) -> usize {
        self.state.storage.watcher_count()
    }

    /// How many objects are stored.
    pub fn object_count(&self) -> usize {
        self.state.storage.object_count()
    }

    /// The kubeconfig text for this server (certificate-authority-data + token).
    pub fn kubeconfig(&self) -> String {
        kubeconfig::render(&self.base_url(), self.ca_pem(), self.token())
    }

    /// Writes [`TestServer::kubeconfig`] to `path`.
    pub fn write_kubeconfig(&self, path: &Path) -> Result<(), Error> {
        std::fs::write(path, self.kubeconfig()).map_err(|e| Error::Kubeconfig {
            path: path.to_path_buf(),
            message: e.to_string(),
        })
    }

    /// The served resource with this plural (built-in or from a CRD).
    pub fn api_resource(&self, plural: &str) -> Option<ApiResource> {
        self.state
            .resources
            .by_plural(plural)
            .map(|r| r.api.clone())
    }

    /// Creates an object in-process, exactly as a POST would (same validation and metadata);
    /// the namespace comes from `metadata.namespace`. Returns the stored object.
    pub fn create(&self, resource: &ApiResource, object: Value) -> Result<Value, Box<Status>> {
        self.create_as(resource, object, IN_PROCESS_MANAGER)
    }

    /// [`TestServer::create`] recording `manager` in `managedFields`.
    fn create_as(
        &self,
        resource: &ApiResource,
        object: Value,
        manager: &str,
    ) -> Result<Value, Box<Status>> {
        let res = self
            .state
            .resources
            .get(&resource.group, &resource.version, &resource.plural)
            .ok_or_else(|| {
                Box::new(Status::failure(
                    404,
                    "NotFound",
                    format!("resource {} is not served", resource.plural),
                ))
            })?;
        let namespace = object["metadata"]["namespace"].as_str().map(str::to_string);
        let target = Target {
            res,
            namespace,
            name: None,
            subresource: None,
            dry_run: false,
        };
        create_stored(&self.state, &target, object, Some(manager))
            .map(|s| s.value())
            .map_err(|e| e.status)
    }

    /// Aborts every open watch stream now (clients see a connection error).
    pub fn cut_watches(&self) {
        let _ = self.state.watch_control.send(WatchControl::Cut);
    }

    /// Makes every open watch write half of its next event and then abort.
    pub fn close_watches_mid_object(&self) {
        let _ = self.state.watch_control.send(WatchControl::HalfObject);
    }

    /// Writes bytes that are not JSON on every open watch.
    pub fn send_malformed_on_watches(&self) {
        let _ = self.state.watch_control.send(WatchControl::Malformed);
    }

    /// Sends a BOOKMARK now on every watch that allowed bookmarks.
    pub fn send_bookmarks(&self) {
        let _ = self.state.watch_control.send(WatchControl::Bookmark);
    }

    /// Drops all watch history: watches and exact lists at older resourceVersions now get 410.
    pub fn compact_history(&self) {
        self.state.storage.compact();
    }

    /// Forces every client to relist: the revision moves on, all history is compacted through
    /// it and every watch is cut, so a re-watch from the last resourceVersion a client saw gets
    /// 410 Gone (what an etcd compaction does to a client that fell behind). Returns the new
    /// revision. Over HTTP: `POST /testserver/expire-watches`.
    pub fn expire_watches(&self) -> u64 {
        self.state.expire_watches()
    }

    /// Fails the next `n` requests matching `matcher` with `failure`.
    pub fn fail_next(&self, n: usize, matcher: RequestMatch, failure: Failure) {
        self.state.faults.fail_next(n, matcher, failure);
    }

    /// Delays every request matching `matcher` by `by` (until [`TestServer::clear_faults`]).
    pub fn delay(&self, matcher: RequestMatch, by: Duration) {
        self.state.faults.delay(matcher, by);
    }

    /// Removes every failure and delay rule.
    pub fn clear_faults(&self) {
        self.state.faults.clear();
    }

    /// Simulates an API server restart: every connection is dropped, the data is kept, and the
    /// listener comes back on the same port.
    pub async fn restart(&self) -> Result<(), Error> {
        self.stop_listening().await;
        let mut last = None;
        for _ in 0..50 {
            match TcpListener::bind(self.addr).await {
                Ok(l) => {
                    self.listen(l);
                    return Ok(());
                }
                Err(e) => last = Some(e),
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        Err(Error::Bind {
            addr: self.addr,
            source: last.expect("the loop ran"),
        })
    }

    async fn stop_listening(&self) {
        let current = self.listening.lock().take();
        if let Some(l) = current {
            let _ = l.stop.send(true);
            let _ = l.task.await;
        }
    }

    /// Stops the server and waits for the listener to close.
    pub async fn shutdown(self) {
        self.stop_listening().await;
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        if let Some(l) = self.listening.lock().take() {
            let _ = l.stop.send(true);
        }
        if let Some(c) = &self.controllers {
            c.abort();
        }
    }
}

/// The built-in namespaces resource.
pub(crate) fn namespaces() -> ApiResource {
    ApiResource {
        group: String::new(),
        version: "v1".into(),
        kind: "Namespace".into(),
        plural: "namespaces".into(),
        namespaced: false,
    }
}
