//! Configuration errors: what was wrong, in which file and field.

use std::path::PathBuf;

/// A configuration could not be loaded or used.
///
/// Request-time failures are [`kcache_core::Error`]s; this enum covers building a client:
/// reading kubeconfig files and the in-cluster environment, TLS material and exec plugins.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// A file could not be read.
    #[error("cannot read {what} {path}")]
    Read {
        /// What the file is, e.g. "kubeconfig" or "certificate-authority".
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A kubeconfig file is not valid YAML or does not have kubeconfig's shape.
    #[error("kubeconfig {path}: line {line}, column {column}: {message}")]
    Yaml {
        /// The file.
        path: PathBuf,
        /// 1-based line of the error (0 when unknown).
        line: usize,
        /// 1-based column of the error (0 when unknown).
        column: usize,
        /// What the parser said.
        message: String,
    },
    /// A field of a kubeconfig has a value that cannot be used.
    #[error("kubeconfig {path}: {field}: {problem}")]
    Field {
        /// The file the entry came from.
        path: PathBuf,
        /// The field, e.g. `users[name=alice].user.client-key-data`.
        field: String,
        /// What is wrong with it.
        problem: String,
    },
    /// A name a kubeconfig refers to is not defined in any of its files.
    #[error("kubeconfig {files}: {problem}")]
    Missing {
        /// The files that were searched.
        files: String,
        /// What is missing, e.g. `context "dev" not found`.
        problem: String,
    },
    /// No kubeconfig file exists and the process does not run in a cluster.
    #[error("no configuration: {0}")]
    NoConfiguration(String),
    /// The in-cluster environment is incomplete.
    #[error("in-cluster configuration: {0}")]
    InCluster(String),
    /// TLS material could not be used.
    #[error("TLS: {0}")]
    Tls(String),
    /// An exec credential plugin failed or printed something unusable.
    #[error("exec plugin {command:?}: {problem}")]
    Exec {
        /// The plugin command.
        command: String,
        /// What went wrong.
        problem: String,
    },
    /// A [`Config`](crate::Config) field has a value that cannot be used.
    #[error("config {field}: {problem}")]
    Invalid {
        /// The field, e.g. `user_agent`.
        field: &'static str,
        /// What is wrong with it.
        problem: String,
    },
    /// The proxy URL cannot be used.
    #[error("proxy: {0}")]
    Proxy(String),
    /// An impersonation setting cannot be sent.
    #[error("impersonation: {0}")]
    Impersonation(String),
    /// The server URL is not a valid http(s) URL.
    #[error("server URL {url:?}: {problem}")]
    ServerUrl {
        /// The URL as configured.
        url: String,
        /// What is wrong with it.
        problem: String,
    },
    /// `Config::qps` / `Config::burst` make no usable client-side rate limit.
    #[error("invalid client-side rate limit (Config::qps, Config::burst)")]
    RateLimit(#[source] kcache_flowcontrol::Error),
}

/// The `Status` of a non-2xx response: the server's own when the body is one, else one made
/// from the code and body text (client-go's `newUnstructuredResponseError`). `Retry-After` goes
/// into `details.retryAfterSeconds`; a redirect is reported, never followed, so credentials are
/// never sent to another host.
pub(crate) fn status_from_response(
    code: http::StatusCode,
    retry_after: Option<u32>,
    location: Option<&http::HeaderValue>,
    body: &[u8],
) -> kcache_core::Status {
    #[derive(serde::Deserialize)]
    struct Kind {
        #[serde(default)]
        kind: String,
    }
    let decoded = serde_json::from_slice::<Kind>(body)
        .ok()
        .filter(|k| k.kind == "Status")
        .and_then(|_| serde_json::from_slice::<kcache_core::Status>(body).ok());
    let mut status = decoded.unwrap_or_else(|| {
        let reason = match code.as_u16() {
            400 => "BadRequest",
            401 => "Unauthorized",
            403 => "Forbidden",
            404 => "NotFound",
            405 => "MethodNotAllowed",
            406 => "NotAcceptable",
            409 => "Conflict",
            410 => "Gone",
            413 => "RequestEntityTooLarge",
            415 => "UnsupportedMediaType",
            422 => "Invalid",
            429 => "TooManyRequests",
            500 => "InternalError",
            503 => "ServiceUnavailable",
            504 => "Timeout",
            _ => "",
        };
        let text = String::from_utf8_lossy(body);
        let text = text.trim();
        let mut message = match (code.is_redirection(), location) {
            (true, Some(l)) => format!(
                "the server redirected to {:?}; redirects are not followed",
                l.to_str().unwrap_or("?")
            ),
            _ if text.is_empty() => code.canonical_reason().unwrap_or("unknown").to_string(),
            _ => text.chars().take(1024).collect(),
        };
        if message.is_empty() {
            message = format!("HTTP {code}");
        }
        kcache_core::Status::failure(code.as_u16(), reason, message)
    });
    if status.code == 0 {
        status.code = code.as_u16();
    }
    if let Some(secs) = retry_after {
        let details = status.details.get_or_insert_with(Default::default);
        details.retry_after_seconds.get_or_insert(secs);
    }
    status
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::StatusCode;

    #[test]
    fn decodes_or_synthesizes_status() {
        let body = br#"{"kind":"Status","apiVersion":"v1","status":"Failure","message":"configmaps \"x\" not found","reason":"NotFound","details":{"name":"x","kind":"configmaps"},"code":404}"#;
        let s = status_from_response(StatusCode::NOT_FOUND, None, None, body);
        assert!(s.is_not_found());
        assert_eq!(s.message, "configmaps \"x\" not found");
        let s = status_from_response(
            StatusCode::SERVICE_UNAVAILABLE,
            Some(3),
            None,
            b"overloaded\n",
        );
        assert_eq!(
            (s.code, s.reason.as_str(), s.message.as_str()),
            (503, "ServiceUnavailable", "overloaded")
        );
        assert_eq!(s.retry_after_seconds(), Some(3));
        let s = status_from_response(StatusCode::TOO_MANY_REQUESTS, None, None, b"");
        assert!(s.is_too_many_requests());
        assert_eq!(s.message, "Too Many Requests");
        // A JSON body that is not a Status is text.
        let s = status_from_response(StatusCode::CONFLICT, None, None, br#"{"kind":"Pod"}"#);
        assert!(s.is_conflict() && s.message.contains("Pod"));
        let loc = http::HeaderValue::from_static("https://elsewhere/");
        let s = status_from_response(StatusCode::FOUND, None, Some(&loc), b"");
        assert!(s.message.contains("elsewhere") && s.message.contains("not followed"));
        assert_eq!(s.code, 302);
    }
}
