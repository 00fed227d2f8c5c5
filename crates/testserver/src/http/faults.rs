//! Fault injection: failing or delaying chosen requests, and disrupting watch streams.

use std::time::Duration;

use kcache_core::{Status, StatusDetails};
use parking_lot::Mutex;

use crate::http::responses::ApiError;

/// A request's verb, as the API server's authorizer names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verb {
    /// GET of one object.
    Get,
    /// GET of a collection.
    List,
    /// GET of a collection with `watch=true`.
    Watch,
    /// POST.
    Create,
    /// PUT.
    Update,
    /// PATCH.
    Patch,
    /// DELETE of one object.
    Delete,
    /// DELETE of a collection.
    DeleteCollection,
}

/// What the fault machinery knows about a request.
#[derive(Debug, Clone)]
pub(crate) struct RequestInfo {
    pub verb: Option<Verb>,
    pub resource: Option<String>,
    pub path: String,
    /// The `User-Agent` header, empty when absent.
    pub user_agent: String,
}

/// Which requests a fault applies to; every condition set must hold. `RequestMatch::any()`
/// matches every API request.
#[derive(Debug, Clone, Default)]
pub struct RequestMatch {
    verb: Option<Verb>,
    resource: Option<String>,
    path_contains: Option<String>,
    user_agent_contains: Option<String>,
}

impl RequestMatch {
    /// Matches every request.
    pub fn any() -> Self {
        RequestMatch::default()
    }

    /// Only this verb.
    pub fn verb(mut self, verb: Verb) -> Self {
        self.verb = Some(verb);
        self
    }

    /// Only this resource (plural, e.g. `configmaps`).
    pub fn resource(mut self, plural: &str) -> Self {
        self.resource = Some(plural.into());
        self
    }

    /// Only paths containing this text.
    pub fn path_contains(mut self, text: &str) -> Self {
        self.path_contains = Some(text.into());
        self
    }

    /// Only requests whose `User-Agent` contains this text: faults for one client among many
    /// (give each client its own user agent).
    pub fn user_agent_contains(mut self, text: &str) -> Self {
        self.user_agent_contains = Some(text.into());
        self
    }

    pub(crate) fn matches(&self, req: &RequestInfo) -> bool {
        self.verb.is_none_or(|v| req.verb == Some(v))
            && self
                .resource
                .as_deref()
                .is_none_or(|r| req.resource.as_deref() == Some(r))
            && self
                .path_contains
                .as_deref()
                .is_none_or(|p| req.path.contains(p))
            && self
                .user_agent_contains
                .as_deref()
                .is_none_or(|ua| req.user_agent.contains(ua))
    }
}

/// The error an injected failure answers with.
#[derive(Debug, Clone)]
pub enum Failure {
    /// 429 TooManyRequests with `Retry-After` and `retryAfterSeconds`.
    TooManyRequests {
        /// Seconds to wait.
        retry_after_seconds: u32,
    },
    /// 500 InternalError.
    InternalError,
    /// 503 ServiceUnavailable with `Retry-After`.
    ServiceUnavailable {
        /// Seconds to wait.
        retry_after_seconds: u32,
    },
    /// 504 "Too large resource version" (cause ResourceVersionTooLarge).
    TooLargeResourceVersion,
    /// Any Status.
    Status(Box<Status>),
}

impl Failure {
    fn to_error(&self, current_rev: u64) -> ApiError {
        let with_retry = |code, reason: &str, msg: &str, secs: u32| {
            let mut s = Status::failure(code, reason, msg);
            s.details = Some(StatusDetails {
                retry_after_seconds: Some(secs),
                ..StatusDetails::default()
            });
            ApiError::from(s)
        };
        match self {
            Failure::TooManyRequests {
                retry_after_seconds,
            } => with_retry(
                429,
                "TooManyRequests",
                "Too many requests, please try again later.",
                *retry_after_seconds,
            ),
            Failure::InternalError => Status::failure(
                500,
                "InternalError",
                "Internal error occurred: injected by kcache-testserver",
            )
            .into(),
            Failure::ServiceUnavailable {
                retry_after_seconds,
            } => with_retry(
                503,
                "ServiceUnavailable",
                "The server is currently unable to handle the request",
                *retry_after_seconds,
            ),
            Failure::TooLargeResourceVersion => {
                ApiError::too_large_rv(current_rev + 1000, current_rev)
            }
            Failure::Status(s) => (**s).clone().into(),
        }
    }
}

/// A disruption sent to every open watch stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WatchControl {
    /// Abort the stream now (connection error on the client).
    Cut,
    /// Write the first half of the next event, then abort.
    HalfObject,
    /// Write bytes that are not JSON, then carry on.
    Malformed,
    /// Send a BOOKMARK now.
    Bookmark,
}

#[derive(Debug)]
struct FailRule {
    matcher: RequestMatch,
    remaining: usize,
    failure: Failure,
}

/// The failure and delay rules of a server.
#[derive(Debug, Default)]
pub(crate) struct Faults {
    fails: Mutex<Vec<FailRule>>,
    delays: Mutex<Vec<(RequestMatch, Duration)>>,
}

impl Faults {
    pub(crate) fn fail_next(&self, n: usize, matcher: RequestMatch, failure: Failure) {
        self.fails.lock().push(FailRule {
            matcher,
            remaining: n,
            failure,
        });
    }

    pub(crate) fn delay(&self, matcher: RequestMatch, by: Duration) {
        self.delays.lock().push((matcher, by));
    }

    pub(crate) fn clear(&self) {
        self.fails.lock().clear();
        self.delays.lock().clear();
    }

    /// The delay for a request (the sum of matching rules).
    pub(crate) fn delay_for(&self, req: &RequestInfo) -> Duration {
        self.delays
            .lock()
            .iter()
            .filter(|(m, _)| m.matches(req))
            .map(|(_, d)| *d)
            .sum()
    }

    /// Consumes one use of the first matching failure rule.
    pub(crate) fn take_failure(&self, req: &RequestInfo, current_rev: u64) -> Option<ApiError> {
        let mut fails = self.fails.lock();
        let i = fails
            .iter()
            .position(|r| r.remaining > 0 && r.matcher.matches(req))?;
        fails[i].remaining -= 1;
        let err = fails[i].failure.to_error(current_rev);
        if fails[i].remaining == 0 {
            fails.remove(i);
        }
        Some(err)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(verb: Verb, resource: &str) -> RequestInfo {
        RequestInfo {
            verb: Some(verb),
            resource: Some(resource.into()),
            path: format!("/api/v1/{resource}"),
            user_agent: format!("test/{resource}"),
        }
    }

    #[test]
    fn fails_exactly_n_matching_requests() {
        let f = Faults::default();
        f.fail_next(
            2,
            RequestMatch::any().verb(Verb::List).resource("pods"),
            Failure::TooManyRequests {
                retry_after_seconds: 3,
            },
        );
        assert!(f.take_failure(&req(Verb::List, "configmaps"), 1).is_none());
        assert!(f.take_failure(&req(Verb::Watch, "pods"), 1).is_none());
        let e = f.take_failure(&req(Verb::List, "pods"), 1).unwrap();
        assert_eq!(e.status.code, 429);
        assert_eq!(e.status.retry_after_seconds(), Some(3));
        assert!(f.take_failure(&req(Verb::List, "pods"), 1).is_some());
        assert!(f.take_failure(&req(Verb::List, "pods"), 1).is_none());
    }

    #[test]
    fn matches_one_client_by_user_agent() {
        let f = Faults::default();
        f.fail_next(
            5,
            RequestMatch::any().user_agent_contains("/pods"),
            Failure::InternalError,
        );
        assert!(f.take_failure(&req(Verb::Get, "secrets"), 1).is_none());
        assert!(f.take_failure(&req(Verb::Get, "pods"), 1).is_some());
    }

    #[test]
    fn delays_add_up_and_clear() {
        let f = Faults::default();
        f.delay(RequestMatch::any(), Duration::from_millis(5));
        f.delay(
            RequestMatch::any().path_contains("/pods"),
            Duration::from_millis(7),
        );
        assert_eq!(
            f.delay_for(&req(Verb::Get, "pods")),
            Duration::from_millis(12)
        );
        assert_eq!(
            f.delay_for(&req(Verb::Get, "secrets")),
            Duration::from_millis(5)
        );
        f.clear();
        assert_eq!(f.delay_for(&req(Verb::Get, "pods")), Duration::ZERO);
        let too_large = Failure::TooLargeResourceVersion.to_error(5);
        assert!(too_large.status.is_too_large_resource_version());
    }
}
