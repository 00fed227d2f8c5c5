//! Routing one request: authentication (and the anonymous user's authorization), health,
//! injected faults, body limit, then discovery or a resource handler. Every error becomes a
//! `Status` response; nothing here panics on input.

use std::sync::Arc;

use bytes::Bytes;
use http::{header, HeaderMap, Method, Request, Response, StatusCode};
use http_body_util::{BodyExt, Limited};

use super::anonymous;
use super::auth::{self, Caller};
use super::compress;
use super::negotiation;
use crate::handlers::{discovery, dispatch, openapi_v2, Target};
use crate::http::faults::RequestInfo;
use crate::http::query::Query;
use crate::http::responses::{full, json_value, ApiError, ApiResult, Body, Streamed};
use crate::state::ServerState;

/// What a path addresses.
enum Route {
    Version,
    CoreVersions,
    Groups,
    Group(String),
    Resources(String, String),
    OpenApiV2,
    OpenApiV3,
    OpenApiV3GroupVersion(String),
    Resource(Target),
}

fn parse_path(state: &ServerState, path: &str) -> Result<Route, ApiError> {
    let segs: Vec<&str> = path.trim_matches('/').split('/').collect();
    let (group, version, rest) = match segs.as_slice() {
        ["version"] => return Ok(Route::Version),
        ["openapi", "v2"] => return Ok(Route::OpenApiV2),
        ["openapi", "v3"] => return Ok(Route::OpenApiV3),
        ["openapi", "v3", gv @ ..] => return Ok(Route::OpenApiV3GroupVersion(gv.join("/"))),
        ["api"] => return Ok(Route::CoreVersions),
        ["apis"] => return Ok(Route::Groups),
        ["apis", g] => return Ok(Route::Group(g.to_string())),
        ["api", v] => return Ok(Route::Resources(String::new(), v.to_string())),
        ["apis", g, v] => return Ok(Route::Resources(g.to_string(), v.to_string())),
        ["api", v, rest @ ..] => ("", *v, rest),
        ["apis", g, v, rest @ ..] => (*g, *v, rest),
        _ => return Err(ApiError::no_route()),
    };
    let table = &state.resources;
    let namespaced = match rest {
        ["namespaces", ns, plural, tail @ ..] if tail.len() <= 2 => table
            .get(group, version, plural)
            .filter(|r| r.api.namespaced)
            .map(|res| (res, ns, tail)),
        _ => None,
    };
    let (res, namespace, tail) = match namespaced {
        Some((res, ns, tail)) => (res, Some(ns.to_string()), tail),
        None => {
            let [plural, tail @ ..] = rest else {
                return Err(ApiError::no_route());
            };
            let res = table
                .get(group, version, plural)
                .ok_or_else(ApiError::no_route)?;
            if res.api.namespaced && !tail.is_empty() || tail.len() > 2 {
                return Err(ApiError::no_route());
            }
            (res, None, tail)
        }
    };
    if tail.iter().any(|s| s.is_empty()) || namespace.as_deref() == Some("") {
        return Err(ApiError::no_route());
    }
    Ok(Route::Resource(Target {
        res,
        namespace,
        name: tail.first().map(|s| s.to_string()),
        subresource: tail.get(1).map(|s| s.to_string()),
        dry_run: false,
    }))
}

/// Answers one request.
pub(crate) async fn handle<B>(state: Arc<ServerState>, req: Request<B>) -> Response<Body>
where
    B: http_body::Body<Data = Bytes>,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let pretty = wants_pretty(req.uri().query(), req.headers());
    let gzip = compress::accepts_gzip(req.headers());
    let mut resp = route(&state, req)
        .await
        .unwrap_or_else(ApiError::into_response);
    if pretty && resp.extensions().get::<Streamed>().is_none() {
        let (parts, body) = resp.into_parts();
        resp = match body.collect().await {
            Ok(b) => Response::from_parts(parts, full(crate::wire::indent(&b.to_bytes()))),
            Err(e) => Response::from_parts(parts, full(e.to_string())),
        };
    }
    if gzip {
        compress::gzip(resp).await
    } else {
        resp
    }
}

/// Whether the answer is indented, as the API server decides (`isPrettyPrint`): a non-empty
/// `pretty` parameter read with `strconv.ParseBool` (unlike other booleans: `yes` is false),
/// otherwise whether the client is curl, wget or a browser. Watches never are.
fn wants_pretty(raw_query: Option<&str>, headers: &HeaderMap) -> bool {
    if let Some(v) = Query::parse(raw_query).get("pretty") {
        return matches!(v, "1" | "t" | "T" | "TRUE" | "true" | "True");
    }
    let agent = headers
        .get(header::USER_AGENT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    ["curl", "Wget", "Mozilla/5.0"]
        .iter()
        .any(|p| agent.starts_with(p))
}

/// The admin endpoint of [`crate::TestServer::expire_watches`] (not an API path: no real
/// server serves it), for benchmarks that drive a client in another process.
pub(crate) const EXPIRE_WATCHES: &str = "/testserver/expire-watches";

fn expire_watches(state: &ServerState, method: &Method) -> ApiResult {
    if method != Method::POST {
        return Err(ApiError::method_not_allowed());
    }
    let rev = state.expire_watches();
    Ok(json_value(
        StatusCode::OK,
        &serde_json::json!({"resourceVersion": rev.to_string()}),
    ))
}

async fn route<B>(state: &Arc<ServerState>, req: Request<B>) -> ApiResult
where
    B: http_body::Body<Data = Bytes>,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let (parts, body) = req.into_parts();
    let path = parts.uri.path().to_string();
    let query = Query::parse(parts.uri.query());
    if auth::authenticate(state.config.token.as_deref(), &parts.headers)? == Caller::Anonymous {
        anonymous::authorize(&parts.method, &path, &query)?;
    }
    if matches!(path.as_str(), "/healthz" | "/readyz" | "/livez") {
        return Ok(Response::builder()
            .header(header::CONTENT_TYPE, "text/plain; charset=utf-8")
            .body(full("ok"))
            .expect("static headers are valid"));
    }
    if path == EXPIRE_WATCHES {
        return expire_watches(state, &parts.method);
    }
    let route = parse_path(state, &path)?;
    let warning = match &route {
        Route::Resource(t) => t.res.deprecation.clone(),
        _ => None,
    };
    let resp = serve(state, parts, body, path, route)
        .await
        .unwrap_or_else(ApiError::into_response);
    Ok(with_warning(resp, warning.as_deref()))
}

/// Adds the deprecation warning of the resource asked for, as the real server sends it with
/// every answer for a deprecated version (`Warning: 299 - "..."`, quotes escaped).
fn with_warning(mut resp: Response<Body>, warning: Option<&str>) -> Response<Body> {
    if let Some(w) = warning {
        let quoted = w.replace('\\', "\\\\").replace('"', "\\\"");
        if let Ok(v) = format!("299 - \"{quoted}\"").parse() {
            resp.headers_mut().insert(header::WARNING, v);
        }
    }
    resp
}

/// A request for `route` (authenticated), once its path is known.
async fn serve<B>(
    state: &Arc<ServerState>,
    parts: http::request::Parts,
    body: B,
    path: String,
    route: Route,
) -> ApiResult
where
    B: http_body::Body<Data = Bytes>,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let query = Query::parse(parts.uri.query());
    let convert = match &route {
        Route::Resource(_) => negotiation::negotiate(&parts.headers)?,
        _ => negotiation::Convert::None,
    };
    let info = RequestInfo {
        verb: match &route {
            Route::Resource(t) => t.verb(&parts.method, &query),
            _ => None,
        },
        resource: match &route {
            Route::Resource(t) => Some(t.res.api.plural.clone()),
            _ => None,
        },
        path: path.clone(),
        user_agent: parts
            .headers
            .get(http::header::USER_AGENT)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_string(),
    };
    let delay = state.faults.delay_for(&info);
    if !delay.is_zero() {
        tokio::time::sleep(delay).await;
    }
    if let Some(err) = state
        .faults
        .take_failure(&info, state.storage.current_rev())
    {
        return Err(err);
    }
    let limit = state.config.max_body_bytes;
    let body = match Limited::new(body, limit).collect().await {
        Ok(b) => b.to_bytes(),
        Err(e)
            if e.downcast_ref::<http_body_util::LengthLimitError>()
                .is_some() =>
        {
            return Err(ApiError::too_large_body(limit))
        }
        Err(e) => {
            return Err(ApiError::bad_request(format!(
                "cannot read the request body: {e}"
            )))
        }
    };
    match route {
        Route::Resource(t) => {
            let res = t.res.clone();
            let resp = dispatch(state, &parts.method, t, &query, &parts.headers, body).await?;
            negotiation::apply(&convert, &res, info.verb, resp).await
        }
        _ if parts.method != Method::GET => Err(ApiError::method_not_allowed()),
        Route::Version => discovery::version(),
        Route::CoreVersions => discovery::core_versions(state),
        Route::Groups => discovery::group_list(state),
        Route::Group(g) => discovery::group(state, &g),
        Route::Resources(g, v) => discovery::resource_list(state, &g, &v),
        Route::OpenApiV2 => openapi_v2::openapi_v2(state, &parts.headers),
        Route::OpenApiV3 => discovery::openapi_v3_root(state),
        Route::OpenApiV3GroupVersion(gv) => discovery::openapi_v3_group_version(state, &gv),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pretty_follows_the_parameter_then_the_user_agent() {
        let agent = |ua: &str| {
            let mut h = HeaderMap::new();
            h.insert(header::USER_AGENT, ua.parse().unwrap());
            h
        };
        let none = HeaderMap::new();
        assert!(wants_pretty(Some("pretty=true"), &none));
        assert!(wants_pretty(Some("pretty=T"), &none));
        assert!(!wants_pretty(Some("pretty=yes"), &none));
        assert!(!wants_pretty(None, &none));
        assert!(wants_pretty(None, &agent("curl/8.5.0")));
        assert!(wants_pretty(Some("pretty="), &agent("Wget/1.21")));
        assert!(wants_pretty(None, &agent("Mozilla/5.0 (X11)")));
        assert!(!wants_pretty(Some("pretty=false"), &agent("curl/8.5.0")));
        assert!(!wants_pretty(None, &agent("kubectl/v1.32.4")));
    }
}
