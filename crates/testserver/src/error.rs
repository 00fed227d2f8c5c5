//! The crate's error type: what went wrong starting or driving a test server.

/// Errors of [`crate::TestServer`], and of kcache-testing's `TestCluster` and `RawClient`.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The listener could not be bound (port in use, no permission).
    #[error("cannot listen on {addr}")]
    Bind {
        /// The address asked for.
        addr: std::net::SocketAddr,
        /// The OS error.
        source: std::io::Error,
    },
    /// Generating the self-signed CA or serving certificate failed.
    #[error("cannot generate TLS certificates: {0}")]
    Certificate(String),
    /// rustls rejected the generated configuration.
    #[error("invalid TLS configuration: {0}")]
    Tls(String),
    /// Writing or reading a kubeconfig failed.
    #[error("kubeconfig {path}: {message}")]
    Kubeconfig {
        /// The file concerned.
        path: std::path::PathBuf,
        /// What was wrong.
        message: String,
    },
    /// A request to a real cluster (via `KCACHE_TEST_KUBECONFIG`) failed.
    #[error("request to the test cluster failed: {0}")]
    Request(String),
    /// A `--seed` argument or other option did not parse.
    #[error("invalid option {option:?}: {message}")]
    Option {
        /// The option as given.
        option: String,
        /// What was wrong.
        message: String,
    },
}
