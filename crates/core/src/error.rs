//! The error every `ListerWatcher` and `ReflectorStore` returns, classified for retry decisions.

use std::time::Duration;

use crate::status::Status;

/// A boxed error from a lower layer.
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// An error from talking to the API server or from writing into a store.
///
/// The reflector decides what to do next (relist, back off and re-watch, fall back to a
/// consistent list) from the classification methods, not from the variant, so a transport and an
/// in-memory `ListerWatcher` produce the same behaviour.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The server answered with a `Status` (a non-2xx response or a watch `ERROR` event).
    #[error("the API server said {0}")]
    Api(Box<Status>),
    /// No connection could be made (refused, reset, DNS, TLS handshake).
    #[error("cannot connect")]
    Connect(#[source] BoxError),
    /// The request or its response body failed mid-way.
    #[error("request failed")]
    Request(#[source] BoxError),
    /// A response could not be decoded (malformed JSON, wrong type, oversized object).
    #[error("cannot decode {what}: {message}")]
    Decode {
        /// What was being decoded, e.g. "watch event" or "list item".
        what: String,
        /// What was wrong.
        message: String,
    },
    /// A store rejected a write (e.g. an index function failed); the variant says why.
    #[error(transparent)]
    Store(crate::StoreError),
    /// The operation was cancelled.
    #[error("cancelled")]
    Cancelled,
}

impl Error {
    /// The server's `Status`, if it sent one.
    pub fn status(&self) -> Option<&Status> {
        match self {
            Error::Api(s) => Some(s),
            _ => None,
        }
    }

    /// The requested resourceVersion is too old (410 Gone / reason Expired).
    pub fn is_gone(&self) -> bool {
        self.status().is_some_and(Status::is_gone)
    }

    /// 429 Too Many Requests.
    pub fn is_too_many_requests(&self) -> bool {
        self.status().is_some_and(Status::is_too_many_requests)
    }

    /// How long the server asked to wait before retrying.
    pub fn retry_after(&self) -> Option<Duration> {
        self.status()
            .and_then(Status::retry_after_seconds)
            .map(|s| Duration::from_secs(u64::from(s)))
    }

    /// The requested resourceVersion is newer than the server knows (all three formats).
    pub fn is_too_large_resource_version(&self) -> bool {
        self.status()
            .is_some_and(Status::is_too_large_resource_version)
    }

    /// 409 Conflict.
    pub fn is_conflict(&self) -> bool {
        self.status().is_some_and(Status::is_conflict)
    }

    /// 404 Not Found.
    pub fn is_not_found(&self) -> bool {
        self.status().is_some_and(Status::is_not_found)
    }

    /// 422 Invalid.
    pub fn is_invalid(&self) -> bool {
        self.status().is_some_and(Status::is_invalid)
    }

    /// No connection could be made: the reflector backs off and re-watches without relisting.
    pub fn is_connect(&self) -> bool {
        matches!(self, Error::Connect(_))
    }

    /// A decode error with this description.
    pub fn decode(what: impl Into<String>, message: impl std::fmt::Display) -> Self {
        Error::Decode {
            what: what.into(),
            message: message.to_string(),
        }
    }
}

impl From<Status> for Error {
    fn from(s: Status) -> Self {
        Error::Api(Box::new(s))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_through_status() {
        let e = Error::from(Status::failure(
            410,
            "Expired",
            "too old resource version: 1 (5)",
        ));
        assert!(e.is_gone());
        assert!(!e.is_connect());
        assert!(e.to_string().contains("too old resource version"));
        let mut s = Status::failure(429, "TooManyRequests", "slow down");
        s.details = Some(crate::StatusDetails {
            retry_after_seconds: Some(2),
            ..Default::default()
        });
        assert_eq!(Error::from(s).retry_after(), Some(Duration::from_secs(2)));
        let c = Error::Connect("connection refused".into());
        assert!(c.is_connect() && !c.is_gone());
        assert_eq!(
            Error::decode("watch event", "unknown type \"FOO\"").to_string(),
            "cannot decode watch event: unknown type \"FOO\""
        );
    }
}
