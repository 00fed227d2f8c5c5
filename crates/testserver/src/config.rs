//! Options of a [`crate::TestServer`].

use std::time::Duration;

/// How a [`crate::TestServer`] listens and behaves. `Default` is plain HTTP on a random loopback
/// port with no authentication.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// Loopback port; 0 picks a free one.
    pub port: u16,
    /// Serve HTTPS with a freshly generated self-signed CA (h2 negotiated via ALPN).
    pub tls: bool,
    /// Require `Authorization: Bearer <token>` on every request except health checks.
    pub token: Option<String>,
    /// Watch events kept per resource, like the watch cache's capacity: a watch or an `Exact`
    /// list older than this window answers 410 Expired. Memory is bounded by it.
    pub history_window: usize,
    /// Period of the BOOKMARK events sent to watches with `allowWatchBookmarks=true` (the real
    /// watch cache sends them about once a minute).
    pub bookmark_interval: Duration,
    /// Events buffered per watcher; a watcher whose buffer is full is closed (see the README's
    /// slow-watcher policy) so it never blocks writers or other watchers.
    pub watcher_buffer: usize,
    /// Largest accepted request body (the real server's limit is 3 MiB).
    pub max_body_bytes: usize,
    /// How long a list at a resourceVersion newer than the server's waits before answering
    /// 504 "Too large resource version" (the real watch cache waits 3 s).
    pub too_large_rv_wait: Duration,
    /// Watch length when the client gives no `timeoutSeconds` (the real server picks 30–60 min).
    pub default_watch_timeout: Duration,
    /// Kubernetes 1.36's `ShardedListAndWatch` gate (KEP-5866): lists and watches filter by
    /// `shardSelector` and lists echo it in `metadata.shardInfo`. Off, the parameter is ignored
    /// as an older server ignores it (no filter, no echo), so clients' fallbacks can be tested.
    pub sharded_list_and_watch: bool,
    /// Run what kube-controller-manager runs on a cluster and acts on every object: the
    /// garbage collector (ownerReferences; background, foreground and orphan deletion) and the
    /// namespace controller (a deleted namespace's content is deleted, then the namespace). Off,
    /// the server behaves as envtest's lone kube-apiserver: dependents outlive their owners and
    /// a deleted namespace stays `Terminating`. kube-apiserver's own controllers (a deleted
    /// CRD's instance cleanup) run either way.
    pub kube_controller_manager: bool,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            port: 0,
            tls: false,
            token: None,
            history_window: 10_000,
            bookmark_interval: Duration::from_secs(60),
            watcher_buffer: 1_000,
            max_body_bytes: 3 * 1024 * 1024,
            too_large_rv_wait: Duration::from_secs(3),
            default_watch_timeout: Duration::from_secs(1800),
            sharded_list_and_watch: true,
            kube_controller_manager: true,
        }
    }
}
