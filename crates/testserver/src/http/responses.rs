//! Building responses: JSON bodies and `Status` errors worded like the real server's.

use std::convert::Infallible;

use bytes::{BufMut, Bytes, BytesMut};
use http::{header, Response, StatusCode};
use http_body_util::{combinators::UnsyncBoxBody, BodyExt, Full};
use kcache_core::{Status, StatusCause, StatusDetails, CAUSE_RESOURCE_VERSION_TOO_LARGE};
use serde_json::{json, Value};

use crate::resources::ResourceInfo;

/// Every response body: full JSON, or a watch stream.
pub(crate) type Body = UnsyncBoxBody<Bytes, std::io::Error>;

/// A response result: errors are responses too.
pub(crate) type ApiResult = Result<Response<Body>, ApiError>;

/// A full body from bytes.
pub(crate) fn full(bytes: impl Into<Bytes>) -> Body {
    Full::new(bytes.into())
        .map_err(|e: Infallible| match e {})
        .boxed_unsync()
}

/// A JSON response. Like Go's `json.Encoder`, which the API server writes with, the body ends
/// with a newline (added here unless the caller already did).
pub(crate) fn json_response(code: StatusCode, body: impl Into<Bytes>) -> Response<Body> {
    let body: Bytes = body.into();
    let body = if body.ends_with(b"\n") {
        body
    } else {
        let mut b = BytesMut::with_capacity(body.len() + 1);
        b.extend_from_slice(&body);
        b.put_u8(b'\n');
        b.freeze()
    };
    Response::builder()
        .status(code)
        .header(header::CONTENT_TYPE, "application/json")
        .body(full(body))
        .expect("static headers are valid")
}

/// A JSON response sent exactly as given (no newline added): what Go's `json.MarshalIndent`
/// writes, for `/version` and indented (`pretty`) answers.
pub(crate) fn raw_json_response(code: StatusCode, body: impl Into<Bytes>) -> Response<Body> {
    Response::builder()
        .status(code)
        .header(header::CONTENT_TYPE, "application/json")
        .body(full(body))
        .expect("static headers are valid")
}

/// Marks a streamed answer (a watch), which is never re-indented for `pretty`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Streamed;

/// A JSON response from a value, written as the API server writes it (see `crate::wire`).
pub(crate) fn json_value(code: StatusCode, v: &Value) -> Response<Body> {
    json_response(code, crate::wire::to_vec(v))
}

/// A failed request: the `Status` the client decodes, plus what travels in headers.
#[derive(Debug, Clone)]
pub(crate) struct ApiError {
    /// The Status body (boxed: errors travel in every handler's `Result`).
    pub status: Box<Status>,
    /// `metadata.continue` of the Status (the inconsistent-continue token of an expired list).
    pub continue_token: Option<String>,
}

impl From<Status> for ApiError {
    fn from(status: Status) -> Self {
        ApiError {
            status: Box::new(status),
            continue_token: None,
        }
    }
}

/// `configmaps` or `deployments.apps`: how the real server names a resource in messages.
pub(crate) fn qualified(res: &ResourceInfo) -> String {
    if res.api.group.is_empty() {
        res.api.plural.clone()
    } else {
        format!("{}.{}", res.api.plural, res.api.group)
    }
}

fn with_details(mut s: Status, res: &ResourceInfo, name: &str) -> Status {
    s.details = Some(StatusDetails {
        name: name.into(),
        group: res.api.group.clone(),
        kind: res.api.plural.clone(),
        ..StatusDetails::default()
    });
    s
}

impl ApiError {
    /// 404 for an object.
    pub(crate) fn not_found(res: &ResourceInfo, name: &str) -> Self {
        let msg = format!("{} \"{name}\" not found", qualified(res));
        with_details(Status::failure(404, "NotFound", msg), res, name).into()
    }

    /// 404 for a path the server does not serve.
    pub(crate) fn no_route() -> Self {
        Status::failure(
            404,
            "NotFound",
            "the server could not find the requested resource",
        )
        .into()
    }

    /// 403 Forbidden for an object (`errors.NewForbidden`): an admission rule refused it.
    pub(crate) fn forbidden(res: &ResourceInfo, name: &str, why: &str) -> Self {
        let msg = format!("{} \"{name}\" is forbidden: {why}", qualified(res));
        with_details(Status::failure(403, "Forbidden", msg), res, name).into()
    }

    /// 405 MethodNotAllowed for a verb on a resource (`errors.NewMethodNotSupported`).
    pub(crate) fn method_not_supported(res: &ResourceInfo, verb: &str) -> Self {
        let msg = format!(
            "{verb} is not supported on resources of kind {:?}",
            qualified(res)
        );
        with_details(Status::failure(405, "MethodNotAllowed", msg), res, "").into()
    }

    /// 409 AlreadyExists.
    pub(crate) fn already_exists(res: &ResourceInfo, name: &str) -> Self {
        let msg = format!("{} \"{name}\" already exists", qualified(res));
        with_details(Status::failure(409, "AlreadyExists", msg), res, name).into()
    }

    /// 409 Conflict on a stale resourceVersion, worded like the real server.
    pub(crate) fn conflict(res: &ResourceInfo, name: &str, why: &str) -> Self {
        let msg = format!(
            "Operation cannot be fulfilled on {} \"{name}\": {why}",
            qualified(res)
        );
        with_details(Status::failure(409, "Conflict", msg), res, name).into()
    }

    /// The message of a stale-resourceVersion conflict.
    pub(crate) const MODIFIED: &'static str =
        "the object has been modified; please apply your changes to the latest version and try again";

    /// 422 Invalid with causes naming fields.
    pub(crate) fn invalid(res: &ResourceInfo, name: &str, causes: Vec<StatusCause>) -> Self {
        Self::invalid_kind(&res.api.group, &res.api.kind, name, causes)
    }

    /// 422 Invalid for an object of `kind` in `group` (apimachinery's `NewInvalid`): the
    /// message names the qualified kind (`Deployment.apps`, `CreateOptions.meta.k8s.io`) and
    /// lists the causes.
    pub(crate) fn invalid_kind(
        group: &str,
        kind: &str,
        name: &str,
        causes: Vec<StatusCause>,
    ) -> Self {
        let list = causes
            .iter()
            .map(|c| format!("{}: {}", c.field, c.message))
            .collect::<Vec<_>>();
        let joined = if list.len() == 1 {
            list[0].clone()
        } else {
            format!("[{}]", list.join(", "))
        };
        let qualified = if group.is_empty() {
            kind.to_string()
        } else {
            format!("{kind}.{group}")
        };
        let msg = format!("{qualified} \"{name}\" is invalid: {joined}");
        let mut s = Status::failure(422, "Invalid", msg);
        s.details = Some(StatusDetails {
            name: name.into(),
            group: group.into(),
            kind: kind.into(),
            causes,
            ..StatusDetails::default()
        });
        s.into()
    }

    /// 400 BadRequest.
    pub(crate) fn bad_request(msg: impl Into<String>) -> Self {
        Status::failure(400, "BadRequest", msg).into()
    }

    /// 410 Expired.
    pub(crate) fn expired(msg: impl Into<String>) -> Self {
        Status::failure(410, "Expired", msg).into()
    }

    /// 504 "Too large resource version", exactly as the real watch cache answers.
    pub(crate) fn too_large_rv(requested: u64, current: u64) -> Self {
        let mut s = Status::failure(
            504,
            "Timeout",
            format!("Timeout: Too large resource version: {requested}, current: {current}"),
        );
        s.details = Some(StatusDetails {
            causes: vec![StatusCause {
                type_: CAUSE_RESOURCE_VERSION_TOO_LARGE.into(),
                message: "Too large resource version".into(),
                field: String::new(),
            }],
            retry_after_seconds: Some(1),
            ..StatusDetails::default()
        });
        s.into()
    }

    /// 405.
    pub(crate) fn method_not_allowed() -> Self {
        Status::failure(
            405,
            "MethodNotAllowed",
            "the server does not allow this method on the requested resource",
        )
        .into()
    }

    /// 401.
    pub(crate) fn unauthorized() -> Self {
        Status::failure(401, "Unauthorized", "Unauthorized").into()
    }

    /// 413, with the real server's limit message.
    pub(crate) fn too_large_body(limit: usize) -> Self {
        Status::failure(
            413,
            "RequestEntityTooLarge",
            format!("Request entity too large: limit is {limit}"),
        )
        .into()
    }

    /// 415 for a patch type the server does not know.
    pub(crate) fn unsupported_media_type(ct: &str) -> Self {
        Status::failure(415, "UnsupportedMediaType", format!("the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml, application/strategic-merge-patch+json ({ct:?} given)")).into()
    }

    /// The Status as the JSON the server sends.
    pub(crate) fn body(&self) -> Value {
        let mut v = serde_json::to_value(&*self.status).expect("Status serializes");
        let obj = v.as_object_mut().expect("Status is an object");
        obj.insert("kind".into(), json!("Status"));
        obj.insert("apiVersion".into(), json!("v1"));
        let mut meta = json!({});
        if let Some(c) = &self.continue_token {
            meta["continue"] = json!(c);
        }
        obj.insert("metadata".into(), meta);
        v
    }

    /// The HTTP response, with `Retry-After` when the Status carries retryAfterSeconds.
    pub(crate) fn into_response(self) -> Response<Body> {
        let code =
            StatusCode::from_u16(self.status.code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let mut resp = json_value(code, &self.body());
        if let Some(secs) = self.status.retry_after_seconds() {
            resp.headers_mut().insert(
                header::RETRY_AFTER,
                secs.to_string().parse().expect("digits are a valid header"),
            );
        }
        resp
    }
}
