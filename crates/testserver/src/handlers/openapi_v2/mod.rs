//! `/openapi/v2`: kube-apiserver 1.20.2's own document — its paths and definitions as `cargo
//! xtask discovery-snapshot` checked them in — with the CRDs' ([`super::openapi_crd`]),
//! answered as kube-openapi's handler answers it:
//! JSON for `application/json`, `*/*` or no `Accept` at all, with the `Content-Type` Go's
//! `http.ServeContent` sniffs for it (`text/plain; charset=utf-8`), gnostic's protobuf
//! ([`protobuf`]) for `application/com.github.proto-openapi.spec.v2@v1.0+protobuf` (what
//! client-go's `OpenAPISchema`, and so kubectl's validation before 1.27, asks for), and 406 with
//! an empty body for anything else. Today's kubectl reads `/openapi/v3` first, which this
//! server also serves.

use std::sync::{Arc, OnceLock};

use http::{header, HeaderMap, Response, StatusCode};
use serde_json::{Map, Value};

mod protobuf;

use super::discovery::GIT_VERSION;
use super::openapi_schemas::{definitions, gunzip_json};
use crate::http::responses::{full, ApiResult};
use crate::resources::ResourceInfo;
use crate::state::ServerState;

const PATHS_GZ: &[u8] =
    include_bytes!("../../../testdata/kube-apiserver-1.20.2/openapi-v2-paths.json.gz");

/// Everything of the document but its definitions: `swagger`, `info`, `paths`, security.
fn rest() -> &'static Map<String, Value> {
    static REST: OnceLock<Map<String, Value>> = OnceLock::new();
    REST.get_or_init(|| gunzip_json(PATHS_GZ, "openapi-v2-paths.json.gz"))
}

/// The two forms of the document.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    Json,
    Protobuf,
}

const PROTOBUF: &str = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf";

/// The form the `Accept` header asks for, as kube-openapi's handler picks it (goautoneg): the
/// media ranges by descending `q` (`q=0` accepts nothing), the first that matches JSON or
/// protobuf, in that order; no header at all is JSON.
fn negotiate(headers: &HeaderMap) -> Option<Format> {
    let Some(accept) = headers.get(header::ACCEPT).and_then(|v| v.to_str().ok()) else {
        return Some(Format::Json);
    };
    if accept.trim().is_empty() {
        return Some(Format::Json);
    }
    let mut ranges: Vec<(f32, String)> = accept
        .split(',')
        .map(|clause| {
            let mut parts = clause.split(';').map(str::trim);
            let range = parts.next().unwrap_or("").to_ascii_lowercase();
            let q = parts
                .filter_map(|p| p.split_once('='))
                .find(|(k, _)| k.trim() == "q")
                .and_then(|(_, v)| v.trim().parse().ok())
                .unwrap_or(1.0);
            (q, range)
        })
        .filter(|(q, _)| *q > 0.0)
        .collect();
    ranges.sort_by(|a, b| b.0.total_cmp(&a.0));
    ranges.iter().find_map(|(_, range)| match range.as_str() {
        "application/json" | "application/*" | "*/*" => Some(Format::Json),
        PROTOBUF => Some(Format::Protobuf),
        _ => None,
    })
}

/// The document: 1.20.2's paths and definitions and those of the CRDs among `resources`,
/// `info.version` as the real server derives it from its version (the part before the first
/// `-`).
fn document(resources: &[Arc<ResourceInfo>]) -> Value {
    let mut doc = rest().clone();
    let version = GIT_VERSION.split('-').next().unwrap_or(GIT_VERSION);
    doc.insert(
        "info".into(),
        serde_json::json!({"title": "Kubernetes", "version": version}),
    );
    doc.insert("definitions".into(), Value::Object(definitions().clone()));
    super::openapi_crd::add(&mut doc, resources);
    Value::Object(doc)
}

/// `GET /openapi/v2`.
pub(crate) fn openapi_v2(state: &ServerState, headers: &HeaderMap) -> ApiResult {
    let response = Response::builder().header(header::VARY, "Accept");
    let (body, content_type) = match negotiate(headers) {
        None => {
            return Ok(response
                .status(StatusCode::NOT_ACCEPTABLE)
                .body(full(Vec::new()))
                .expect("static headers are valid"))
        }
        Some(Format::Json) => (
            serde_json::to_vec(&document(&state.resources.all())).expect("a JSON value serializes"),
            "text/plain; charset=utf-8",
        ),
        Some(Format::Protobuf) => (
            protobuf::encode(&document(&state.resources.all())),
            "application/octet-stream",
        ),
    };
    Ok(response
        .status(StatusCode::OK)
        .header(header::CONTENT_TYPE, content_type)
        .body(full(body))
        .expect("static headers are valid"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn accept(value: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(header::ACCEPT, value.parse().unwrap());
        h
    }

    #[test]
    fn the_form_is_the_first_the_client_accepts() {
        let json = Some(Format::Json);
        assert_eq!(negotiate(&HeaderMap::new()), json);
        assert_eq!(negotiate(&accept("")), json);
        assert_eq!(negotiate(&accept("application/json")), json);
        assert_eq!(negotiate(&accept("application/json, */*")), json);
        assert_eq!(negotiate(&accept("*/*")), json);
        assert_eq!(
            negotiate(&accept("application/yaml, application/*;q=0.5")),
            json
        );
        assert_eq!(negotiate(&accept(PROTOBUF)), Some(Format::Protobuf));
        let both = format!("application/json;q=0.9, {PROTOBUF}");
        assert_eq!(negotiate(&accept(&both)), Some(Format::Protobuf));
        assert_eq!(negotiate(&accept("application/yaml")), None);
        assert_eq!(
            negotiate(&accept("application/vnd.kubernetes.protobuf")),
            None
        );
        assert_eq!(negotiate(&accept("application/json;q=0")), None);
    }

    #[test]
    fn the_document_is_the_real_servers() {
        let doc = document(&[]);
        assert_eq!(doc["swagger"], "2.0");
        assert_eq!(doc["info"]["version"], "v1.20.2");
        let op = &doc["paths"]["/api/v1/namespaces/{namespace}/configmaps/{name}"]["get"];
        assert_eq!(op["operationId"], "readCoreV1NamespacedConfigMap");
        assert_eq!(
            op["responses"]["200"]["schema"]["$ref"],
            "#/definitions/io.k8s.api.core.v1.ConfigMap"
        );
        assert!(doc["definitions"]["io.k8s.api.core.v1.ConfigMap"].is_object());
        assert_eq!(doc["securityDefinitions"]["BearerToken"]["type"], "apiKey");
    }
}
