//! The API server's error document (`metav1.Status`) and what it means.

use serde::{Deserialize, Serialize};

/// One cause inside a [`StatusDetails`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StatusCause {
    /// Machine-readable cause, e.g. `FieldValueInvalid` or `ResourceVersionTooLarge`.
    #[serde(default, rename = "reason", skip_serializing_if = "String::is_empty")]
    pub type_: String,
    /// Human-readable description.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
    /// The field the cause is about, e.g. `metadata.name`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub field: String,
}

/// Details of a [`Status`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StatusDetails {
    /// The name of the object concerned.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// Its API group.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub group: String,
    /// Its kind (or resource).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub kind: String,
    /// Its uid.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub uid: String,
    /// Individual causes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub causes: Vec<StatusCause>,
    /// Seconds the client should wait before retrying (429, 503).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_after_seconds: Option<u32>,
}

/// The API server's answer to a failed request, and the object of a watch `ERROR` event.
///
/// The classification methods mirror apimachinery's `errors.IsGone`, `IsResourceExpired`,
/// `IsTooManyRequests`, `IsConflict`, `IsNotFound`, `IsInvalid` and the reflector's
/// `isTooLargeResourceVersionError`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Status {
    /// `Success` or `Failure`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub status: String,
    /// Human-readable description.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
    /// Machine-readable reason, e.g. `Expired`, `NotFound`, `Conflict`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
    /// Extra data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<StatusDetails>,
    /// The HTTP status code.
    #[serde(default)]
    pub code: u16,
}

/// `metav1.CauseTypeResourceVersionTooLarge`.
pub const CAUSE_RESOURCE_VERSION_TOO_LARGE: &str = "ResourceVersionTooLarge";
const TOO_LARGE_MESSAGE: &str = "Too large resource version";

impl Status {
    /// A failure with this code, reason and message.
    pub fn failure(code: u16, reason: &str, message: impl Into<String>) -> Self {
        Status {
            status: "Failure".into(),
            message: message.into(),
            reason: reason.into(),
            details: None,
            code,
        }
    }

    /// 410 Gone, or reason `Expired`/`Gone`: the requested resourceVersion is no longer
    /// available (`IsResourceExpired` || `IsGone`).
    pub fn is_gone(&self) -> bool {
        self.code == 410 || self.reason == "Expired" || self.reason == "Gone"
    }

    /// 429 Too Many Requests.
    pub fn is_too_many_requests(&self) -> bool {
        self.code == 429 || self.reason == "TooManyRequests"
    }

    /// The server's `retryAfterSeconds`, if any.
    pub fn retry_after_seconds(&self) -> Option<u32> {
        self.details.as_ref().and_then(|d| d.retry_after_seconds)
    }

    /// 409 Conflict (a stale resourceVersion on update, or an existing name on create).
    pub fn is_conflict(&self) -> bool {
        self.code == 409 || self.reason == "Conflict" || self.reason == "AlreadyExists"
    }

    /// 404 Not Found.
    pub fn is_not_found(&self) -> bool {
        self.code == 404 || self.reason == "NotFound"
    }

    /// 422 Invalid.
    pub fn is_invalid(&self) -> bool {
        self.code == 422 || self.reason == "Invalid"
    }

    /// 504 Timeout.
    pub fn is_timeout(&self) -> bool {
        self.code == 504 || self.reason == "Timeout"
    }

    /// The requested minimum resourceVersion is newer than the server has seen. Recognises the
    /// three formats servers have used: a `ResourceVersionTooLarge` cause (1.18.6+), a timeout
    /// with a cause message "Too large resource version" (1.17.0–1.18.5), and a timeout whose
    /// message contains it (before 1.17).
    pub fn is_too_large_resource_version(&self) -> bool {
        let causes = self
            .details
            .as_ref()
            .map(|d| d.causes.as_slice())
            .unwrap_or(&[]);
        if causes
            .iter()
            .any(|c| c.type_ == CAUSE_RESOURCE_VERSION_TOO_LARGE)
        {
            return true;
        }
        if !self.is_timeout() {
            return false;
        }
        causes.iter().any(|c| c.message == TOO_LARGE_MESSAGE)
            || self.message.contains(TOO_LARGE_MESSAGE)
    }
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({}): {}", self.code, self.reason, self.message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(v: serde_json::Value) -> Status {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn classifies() {
        let gone = parse(
            serde_json::json!({"kind": "Status", "apiVersion": "v1", "status": "Failure",
            "message": "too old resource version: 1 (5)", "reason": "Expired", "code": 410}),
        );
        assert!(gone.is_gone());
        assert!(!gone.is_too_many_requests());
        assert!(Status::failure(500, "Gone", "x").is_gone());
        let tmr = parse(serde_json::json!({"code": 429, "reason": "TooManyRequests",
            "details": {"retryAfterSeconds": 3}}));
        assert!(tmr.is_too_many_requests());
        assert_eq!(tmr.retry_after_seconds(), Some(3));
        assert!(Status::failure(409, "Conflict", "").is_conflict());
        assert!(Status::failure(404, "NotFound", "").is_not_found());
        assert!(Status::failure(422, "Invalid", "").is_invalid());
    }

    #[test]
    fn too_large_resource_version_in_all_three_formats() {
        let new = parse(serde_json::json!({"code": 504, "reason": "Timeout",
            "details": {"causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}]}}));
        let mid = parse(serde_json::json!({"code": 504, "reason": "Timeout",
            "details": {"causes": [{"message": "Too large resource version"}]}}));
        let old = parse(serde_json::json!({"code": 504, "reason": "Timeout",
            "message": "Too large resource version: 10, current: 5"}));
        assert!(new.is_too_large_resource_version());
        assert!(mid.is_too_large_resource_version());
        assert!(old.is_too_large_resource_version());
        let other =
            parse(serde_json::json!({"code": 500, "message": "Too large resource version"}));
        assert!(!other.is_too_large_resource_version());
        assert!(!Status::failure(504, "Timeout", "slow").is_too_large_resource_version());
    }
}
