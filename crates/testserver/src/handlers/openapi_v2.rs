//! `/openapi/v2`: kube-apiserver 1.20.2's own document — its paths and definitions as `cargo
//! xtask discovery-snapshot` checked them in — and its CRDs' ([`super::openapi_crd`]), answered as kube-openapi's handler answers it:
//! JSON for `application/json`, `*/*` or no `Accept` at all, with the `Content-Type` Go's
//! `http.ServeContent` sniffs for it (`text/plain; charset=utf-8`), and 406 with an empty body
//! for anything else. The real server also answers its protobuf form
//! (`application/com.github.proto-openapi.spec.v2@v1.0+protobuf`, what client-go's
//! `OpenAPISchema` asks for); this one does not, so such a request is a 406 here.
//! Today's kubectl reads `/openapi/v3` first, which this server also serves.

use std::sync::{Arc, OnceLock};

use http::{header, HeaderMap, Response, StatusCode};
use serde_json::{Map, Value};

use super::discovery::GIT_VERSION;
use super::openapi_schemas::{definitions, gunzip_json};
use crate::http::responses::{full, ApiResult};
use crate::resources::ResourceInfo;
use crate::state::ServerState;

const PATHS_GZ: &[u8] =
    include_bytes!("../../testdata/kube-apiserver-1.20.2/openapi-v2-paths.json.gz");

/// Everything of the document but its definitions: `swagger`, `info`, `paths`, security.
fn rest() -> &'static Map<String, Value> {
    static REST: OnceLock<Map<String, Value>> = OnceLock::new();
    REST.get_or_init(|| gunzip_json(PATHS_GZ, "openapi-v2-paths.json.gz"))
}

/// Whether the `Accept` header lets the JSON document be sent (goautoneg's matching of
/// `application/json` against each media range; a range with `q=0` accepts nothing).
fn accepts_json(headers: &HeaderMap) -> bool {
    let Some(accept) = headers.get(header::ACCEPT).and_then(|v| v.to_str().ok()) else {
        return true;
    };
    if accept.trim().is_empty() {
        return true;
    }
    accept.split(',').any(|clause| {
        let mut parts = clause.split(';').map(str::trim);
        let range = parts.next().unwrap_or("").to_ascii_lowercase();
        let refused = parts.any(|p| {
            p.split_once('=')
                .is_some_and(|(k, v)| k.trim() == "q" && v.trim().parse::<f32>() == Ok(0.0))
        });
        !refused && matches!(range.as_str(), "application/json" | "application/*" | "*/*")
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
    if !accepts_json(headers) {
        return Ok(response
            .status(StatusCode::NOT_ACCEPTABLE)
            .body(full(Vec::new()))
            .expect("static headers are valid"));
    }
    let body =
        serde_json::to_vec(&document(&state.resources.all())).expect("a JSON value serializes");
    Ok(response
        .status(StatusCode::OK)
        .header(header::CONTENT_TYPE, "text/plain; charset=utf-8")
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
    fn json_is_sent_unless_the_client_accepts_only_other_types() {
        assert!(accepts_json(&HeaderMap::new()));
        assert!(accepts_json(&accept("")));
        assert!(accepts_json(&accept("application/json")));
        assert!(accepts_json(&accept("application/json, */*")));
        assert!(accepts_json(&accept("*/*")));
        assert!(accepts_json(&accept(
            "application/yaml, application/*;q=0.5"
        )));
        assert!(!accepts_json(&accept("application/yaml")));
        assert!(!accepts_json(&accept(
            "application/vnd.kubernetes.protobuf"
        )));
        assert!(!accepts_json(&accept(
            "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"
        )));
        assert!(!accepts_json(&accept("application/json;q=0")));
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
