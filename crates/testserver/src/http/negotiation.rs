//! Output negotiation and conversion, as the API server's `negotiation` package and
//! `handlers/response.go` (`transformObject`) do it: `Accept:
//! application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1` turns objects (and each watch
//! event's object) into `PartialObjectMetadata`, `as=PartialObjectMetadataList` turns a list
//! into a `PartialObjectMetadataList`. client-go's metadata client and kube-rs's metadata
//! watcher speak this.
//!
//! Clauses are tried in order; one the API server would serve but this server does not (YAML,
//! protobuf, `as=Table`) is passed over, and when only such clauses are left the response is
//! plain JSON. An `as=` the API server does not know (or one without `g=meta.k8s.io` and a
//! version) is a 406 with the API server's message. As there, the kind is checked against the
//! response only once it is made: a list asked `as=PartialObjectMetadata` (or an object asked as
//! a list) is a 406 after the request ran, and a watch asked as a list sends full objects.

use bytes::{Bytes, BytesMut};
use futures_util::StreamExt;
use http::{header, HeaderMap, Response};
use http_body::Frame;
use http_body_util::{BodyExt, BodyStream, StreamBody};
use kcache_core::Status;
use serde::Deserialize;
use serde_json::value::RawValue;

use crate::http::faults::Verb;
use crate::http::responses::{full, ApiError, ApiResult, Body};
use crate::resources::ResourceInfo;
use crate::storage::frame;

/// What the response is converted to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Convert {
    /// The object as stored.
    None,
    /// `PartialObjectMetadata` of this `meta.k8s.io` version.
    Partial(&'static str),
    /// `PartialObjectMetadataList` of this `meta.k8s.io` version.
    PartialList(&'static str),
}

/// The media types the API server lists in its 406 for built-in resources.
const ACCEPTED: &str = "application/json, application/yaml, application/vnd.kubernetes.protobuf";

fn not_acceptable(message: String) -> ApiError {
    Status::failure(406, "NotAcceptable", message).into()
}

enum Clause {
    Serve(Convert),
    /// Served by the API server, not by this one.
    Unserved,
    Refused,
}

fn clause(text: &str) -> Clause {
    let mut parts = text.split(';').map(str::trim);
    let media = parts.next().unwrap_or("").to_ascii_lowercase();
    let (mut as_, mut group, mut version) = (None, None, None);
    for p in parts {
        let (k, v) = p.split_once('=').unwrap_or((p, ""));
        let v = v.trim().trim_matches('"');
        match k.trim() {
            "as" => as_ = Some(v),
            "g" => group = Some(v),
            "v" => version = Some(v),
            "q" if v.parse::<f32>().is_ok_and(|q| q <= 0.0) => return Clause::Refused,
            _ => {}
        }
    }
    match media.as_str() {
        "application/json" | "application/*" | "*/*" | "" => {}
        "application/yaml" | "application/vnd.kubernetes.protobuf" => return Clause::Unserved,
        _ => return Clause::Refused,
    }
    let Some(kind) = as_ else {
        return Clause::Serve(Convert::None);
    };
    let version = match (group, version) {
        (Some("meta.k8s.io"), Some("v1")) => "v1",
        (Some("meta.k8s.io"), Some("v1beta1")) => "v1beta1",
        _ => return Clause::Refused,
    };
    match kind {
        "PartialObjectMetadata" => Clause::Serve(Convert::Partial(version)),
        "PartialObjectMetadataList" => Clause::Serve(Convert::PartialList(version)),
        "Table" => Clause::Unserved,
        _ => Clause::Refused,
    }
}

/// The conversion the `Accept` headers ask for, or the API server's 406.
pub(crate) fn negotiate(headers: &HeaderMap) -> Result<Convert, ApiError> {
    let mut any = false;
    let mut unserved = false;
    for value in headers.get_all(header::ACCEPT) {
        let text = value.to_str().unwrap_or("");
        for c in text.split(',').filter(|c| !c.trim().is_empty()) {
            any = true;
            match clause(c) {
                Clause::Serve(convert) => return Ok(convert),
                Clause::Unserved => unserved = true,
                Clause::Refused => {}
            }
        }
    }
    if !any || unserved {
        return Ok(Convert::None);
    }
    Err(not_acceptable(format!(
        "only the following media types are accepted: {ACCEPTED}"
    )))
}

/// The Go type the API server names in its conversion errors.
fn go_type(res: &ResourceInfo, list: bool) -> String {
    let suffix = if list { "List" } else { "" };
    if !res.builtin {
        return format!("*unstructured.Unstructured{suffix}");
    }
    let package = match res.api.group.split('.').next() {
        Some("") | None => "core",
        Some(p) => p,
    };
    format!("*{package}.{}{suffix}", res.api.kind)
}

#[derive(Deserialize)]
struct Head<'a> {
    #[serde(default, borrow)]
    kind: Option<&'a str>,
    #[serde(borrow)]
    metadata: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct ListBody<'a> {
    #[serde(borrow)]
    metadata: Option<&'a RawValue>,
    #[serde(borrow, default)]
    items: Vec<Head<'a>>,
}

fn partial(out: &mut Vec<u8>, version: &str, metadata: Option<&RawValue>) {
    out.extend_from_slice(br#"{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/"#);
    out.extend_from_slice(version.as_bytes());
    out.extend_from_slice(br#"","metadata":"#);
    out.extend_from_slice(metadata.map_or("{}", RawValue::get).as_bytes());
    out.push(b'}');
}

fn unreadable(e: serde_json::Error) -> ApiError {
    Status::failure(
        500,
        "InternalError",
        format!("cannot convert the response: {e}"),
    )
    .into()
}

/// One object as `PartialObjectMetadata`; a `Status` passes unchanged.
fn object_to_partial(body: &[u8], version: &str) -> Result<Option<Vec<u8>>, ApiError> {
    let head: Head = serde_json::from_slice(body).map_err(unreadable)?;
    if head.kind == Some("Status") {
        return Ok(None);
    }
    let mut out = Vec::with_capacity(body.len().min(4096));
    partial(&mut out, version, head.metadata);
    Ok(Some(out))
}

fn list_to_partial(body: &[u8], version: &str) -> Result<Vec<u8>, ApiError> {
    let list: ListBody = serde_json::from_slice(body).map_err(unreadable)?;
    let mut out = Vec::with_capacity(256 + list.items.len() * 512);
    out.extend_from_slice(br#"{"kind":"PartialObjectMetadataList","apiVersion":"meta.k8s.io/"#);
    out.extend_from_slice(version.as_bytes());
    out.extend_from_slice(br#"","metadata":"#);
    out.extend_from_slice(list.metadata.map_or("{}", RawValue::get).as_bytes());
    if list.items.is_empty() {
        // The API server's list is a Go slice left nil, which encodes as `null`.
        out.extend_from_slice(br#","items":null}"#);
        return Ok(out);
    }
    out.extend_from_slice(br#","items":["#);
    for (i, item) in list.items.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        partial(&mut out, version, item.metadata);
    }
    out.extend_from_slice(b"]}");
    Ok(out)
}

/// Converts a successful response of `verb` on `res`; errors (`Status` bodies) pass unchanged.
pub(crate) async fn apply(
    convert: &Convert,
    res: &ResourceInfo,
    verb: Option<Verb>,
    resp: Response<Body>,
) -> ApiResult {
    if *convert == Convert::None || !resp.status().is_success() {
        return Ok(resp);
    }
    if verb == Some(Verb::Watch) {
        return Ok(match convert {
            &Convert::Partial(v) => resp.map(move |b| watch_to_partial(b, v)),
            _ => resp,
        });
    }
    let list = matches!(verb, Some(Verb::List | Verb::DeleteCollection));
    let (parts, body) = resp.into_parts();
    let body = body
        .collect()
        .await
        .map_err(|e| Status::failure(500, "InternalError", e.to_string()))?
        .to_bytes();
    let out = match (convert, list) {
        (Convert::PartialList(v), true) => list_to_partial(&body, v)?,
        (Convert::Partial(_), true) => {
            return Err(not_acceptable(format!(
                "you requested PartialObjectMetadata, but the requested object is a list ({})",
                go_type(res, true)
            )))
        }
        (Convert::PartialList(_), false) if object_to_partial(&body, "v1")?.is_some() => {
            return Err(not_acceptable(format!(
                "you requested PartialObjectMetadataList, but the requested object is not a list ({})",
                go_type(res, false)
            )));
        }
        (Convert::Partial(v), false) => object_to_partial(&body, v)?.unwrap_or(body.to_vec()),
        // A Status (a finished delete) is never converted.
        _ => body.to_vec(),
    };
    let mut resp = Response::from_parts(parts, full(out));
    resp.headers_mut().remove(header::CONTENT_LENGTH);
    Ok(resp)
}

#[derive(Deserialize)]
struct WatchFrame<'a> {
    #[serde(rename = "type", borrow)]
    type_: &'a str,
    #[serde(borrow)]
    object: &'a RawValue,
}

/// Converts every complete `{"type":..,"object":..}\n` frame of a watch body; a cut stream
/// ends with the error it ended with.
fn watch_to_partial(body: Body, version: &'static str) -> Body {
    let mut pending = BytesMut::new();
    let frames = BodyStream::new(body).map(move |frame| {
        let data = match frame.map(Frame::into_data) {
            Ok(Ok(d)) => d,
            Ok(Err(_trailers)) => Bytes::new(),
            Err(e) => return Err(e),
        };
        pending.extend_from_slice(&data);
        let mut out = BytesMut::new();
        while let Some(end) = pending.iter().position(|b| *b == b'\n') {
            let line = pending.split_to(end + 1);
            match convert_frame(&line, version) {
                Some(converted) => out.extend_from_slice(&converted),
                None => out.extend_from_slice(&line),
            }
        }
        Ok(Frame::data(out.freeze()))
    });
    StreamBody::new(frames).boxed_unsync()
}

fn convert_frame(line: &[u8], version: &str) -> Option<Bytes> {
    let f: WatchFrame = serde_json::from_slice(line).ok()?;
    let object = object_to_partial(f.object.get().as_bytes(), version).ok()??;
    Some(frame(f.type_, &object))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn accept(v: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(header::ACCEPT, v.parse().unwrap());
        h
    }

    #[test]
    fn negotiates_as_the_api_server() {
        let n = |v: &str| negotiate(&accept(v)).map_err(|e| e.status.code);
        assert_eq!(negotiate(&HeaderMap::new()).ok(), Some(Convert::None));
        assert_eq!(
            n("application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io"),
            Ok(Convert::PartialList("v1"))
        );
        // client-go's metadata client: protobuf first, then JSON, then plain.
        assert_eq!(
            n("application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json"),
            Ok(Convert::Partial("v1"))
        );
        assert_eq!(
            n("application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1beta1"),
            Ok(Convert::Partial("v1beta1"))
        );
        // kubectl's table request falls back to plain JSON here.
        assert_eq!(
            n("application/json;as=Table;v=v1;g=meta.k8s.io,application/json"),
            Ok(Convert::None)
        );
        assert_eq!(n("application/json;as=Foo;g=meta.k8s.io;v=v1"), Err(406));
        assert_eq!(n("application/json;as=PartialObjectMetadata"), Err(406));
        assert_eq!(n("text/plain"), Err(406));
        let e = negotiate(&accept("application/json;as=Foo;g=meta.k8s.io;v=v1")).unwrap_err();
        assert_eq!(
            e.status.message,
            "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf"
        );
    }

    #[test]
    fn converts_objects_lists_and_frames() {
        let obj = br#"{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a","resourceVersion":"3"},"data":{"k":"v"}}"#;
        let p = object_to_partial(obj, "v1").unwrap().unwrap();
        assert_eq!(
            std::str::from_utf8(&p).unwrap(),
            r#"{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{"name":"a","resourceVersion":"3"}}"#
        );
        assert!(object_to_partial(br#"{"kind":"Status","code":404}"#, "v1")
            .unwrap()
            .is_none());
        let list = br#"{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"9"},"items":[{"metadata":{"name":"a"},"data":{}},{"metadata":{"name":"b"}}]}"#;
        let v: serde_json::Value =
            serde_json::from_slice(&list_to_partial(list, "v1").unwrap()).unwrap();
        assert_eq!(v["kind"], "PartialObjectMetadataList");
        assert_eq!(v["metadata"]["resourceVersion"], "9");
        assert_eq!(v["items"][1]["metadata"]["name"], "b");
        assert_eq!(v["items"][0]["kind"], "PartialObjectMetadata");
        let empty = br#"{"kind":"NodeList","apiVersion":"v1","metadata":{"resourceVersion":"9"},"items":[]}"#;
        let v: serde_json::Value =
            serde_json::from_slice(&list_to_partial(empty, "v1").unwrap()).unwrap();
        assert_eq!(
            v["items"],
            serde_json::Value::Null,
            "as kube-apiserver writes it"
        );
        assert!(v["items"][0].get("data").is_none());
        let f = convert_frame(
            b"{\"type\":\"ADDED\",\"object\":{\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"a\"},\"data\":{}}}\n",
            "v1",
        )
        .unwrap();
        assert_eq!(
            &f[..],
            b"{\"type\":\"ADDED\",\"object\":{\"kind\":\"PartialObjectMetadata\",\"apiVersion\":\"meta.k8s.io/v1\",\"metadata\":{\"name\":\"a\"}}}\n"
        );
    }
}
