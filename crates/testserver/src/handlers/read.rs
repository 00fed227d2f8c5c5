//! GET of one object and of collections (list), with the real server's resourceVersion rules.

use std::sync::Arc;

use bytes::Bytes;
use http::{header, Response, StatusCode};
use http_body_util::BodyExt;
use kcache_core::StatusCause;
use serde_json::Value;

use super::list_body::ListBody;
use super::options::{forbidden, not_supported, options_invalid};
use super::Target;
use crate::http::query::{go_quote, Query};
use crate::http::responses::{json_response, json_value, ApiError, ApiResult, Body};
use crate::resources::conversion;
use crate::state::ServerState;
use crate::storage::{Continue, Filter, ListAt, ListError, Page};

const EXPIRED_LIST: &str = "The resourceVersion for the provided list is too old.";
const INCONSISTENT_CONTINUE: &str = "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.";

/// GET of one object.
pub(crate) fn get(state: &ServerState, t: &Target, q: &Query) -> ApiResult {
    let name = t.name.as_deref().unwrap_or_default();
    let obj = state
        .storage
        .get(&t.res, &t.key())
        .ok_or_else(|| ApiError::not_found(&t.res, name))?;
    let obj = conversion::present(&t.res, obj);
    if q.flag("export") {
        return Ok(json_value(
            StatusCode::OK,
            &exported(obj.value(), q.flag("exact")),
        ));
    }
    Ok(json_response(StatusCode::OK, obj.json.clone()))
}

/// `export=true` (deprecated, still served by 1.20): the object without what belongs to this
/// cluster, as the registry's `exportObjectMeta` clears it (`exact` keeps the namespace and a
/// generated name). The per-type export strategies (pods, services, ...) are not applied.
fn exported(mut obj: Value, exact: bool) -> Value {
    if let Some(meta) = obj["metadata"].as_object_mut() {
        for f in ["uid", "deletionTimestamp", "resourceVersion", "selfLink"] {
            meta.remove(f);
        }
        meta.insert("creationTimestamp".into(), Value::Null);
        if !exact {
            meta.remove("namespace");
            if meta.get("generateName").is_some_and(|g| g != "") {
                meta.remove("name");
            }
        }
    }
    obj
}

/// Parses a resourceVersion parameter (400 on a non-number, as the real server).
pub(crate) fn parse_rv(s: &str) -> Result<u64, ApiError> {
    s.parse().map_err(|_| {
        ApiError::bad_request(format!(
            "invalid resource version: strconv.ParseUint: parsing {s:?}: invalid syntax"
        ))
    })
}

fn list_options_invalid(cause: StatusCause) -> ApiError {
    options_invalid("ListOptions", vec![cause])
}

/// GET of a collection.
pub(crate) async fn list(state: &Arc<ServerState>, t: &Target, q: &Query) -> ApiResult {
    let filter = t.filter(q, &state.config)?;
    // Both are ListOptions fields: a bad value is a 400 on a list too.
    q.int("timeoutSeconds")?;
    let mut limit = q
        .int("limit")?
        .filter(|l| *l > 0)
        .map(|l| usize::try_from(l).unwrap_or(usize::MAX));
    let rv = q.get("resourceVersion");
    let rv_match = q.get("resourceVersionMatch");
    if rv_match.is_some() && rv.is_none() {
        return Err(list_options_invalid(forbidden(
            "resourceVersionMatch",
            "resourceVersionMatch is forbidden unless resourceVersion is provided",
        )));
    }
    if let Some(m) = rv_match.filter(|m| !matches!(*m, "NotOlderThan" | "Exact")) {
        return Err(list_options_invalid(not_supported(
            "resourceVersionMatch",
            &go_quote(m),
            &["Exact", "NotOlderThan"],
        )));
    }
    let (at, after, continuing) = if let Some(token) = q.get("continue") {
        if rv.is_some_and(|r| r != "0") {
            return Err(ApiError::bad_request(
                "specifying resource version is not allowed when using continue",
            ));
        }
        let c = Continue::decode(token).map_err(ApiError::bad_request)?;
        (
            c.rv.map_or(ListAt::Current, ListAt::Exact),
            Some(c.after),
            true,
        )
    } else {
        let at = match rv {
            None => ListAt::Current,
            Some("0") => {
                if rv_match == Some("Exact") {
                    return Err(list_options_invalid(forbidden(
                        "resourceVersionMatch",
                        "resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"",
                    )));
                }
                // Served from the watch cache, which ignores paging (as the real server does).
                limit = None;
                ListAt::Current
            }
            Some(n) => {
                let n = parse_rv(n)?;
                // Exact when asked, and (legacy rule) when paging with a resourceVersion.
                if rv_match == Some("Exact") || (rv_match.is_none() && limit.is_some()) {
                    ListAt::Exact(n)
                } else {
                    if !state
                        .storage
                        .wait_for_rev(n, state.config.too_large_rv_wait)
                        .await
                    {
                        return Err(ApiError::too_large_rv(n, state.storage.current_rev()));
                    }
                    ListAt::Current
                }
            }
        };
        (at, None, false)
    };
    let page = match state
        .storage
        .list(&t.res, at, &filter, after.as_deref(), limit)
    {
        Ok(p) => p,
        Err(ListError::TooOld) if continuing => {
            let mut e = ApiError::expired(INCONSISTENT_CONTINUE);
            e.continue_token = Some(
                Continue {
                    rv: None,
                    after: after.unwrap_or_default(),
                }
                .encode(),
            );
            return Err(e);
        }
        Err(ListError::TooOld) => return Err(ApiError::expired(EXPIRED_LIST)),
        Err(ListError::TooLarge { requested, current }) => {
            return Err(ApiError::too_large_rv(requested, current))
        }
    };
    Ok(list_response(t, page, &filter))
}

/// The list response, streamed from the page's stored items (see [`ListBody`]): the stored
/// JSON of each item is copied into a list written in the API server's field order (`kind`,
/// `apiVersion`, `metadata`, `items` for built-in types; sorted keys for custom resources, as
/// their unstructured lists are).
///
/// The items of a built-in list are Go structs whose TypeMeta is empty, so the API server
/// writes them without `kind` and `apiVersion`; a stored built-in object starts with exactly
/// those two fields, which are skipped. Custom resources keep theirs, as on the real server.
fn list_response(t: &Target, page: Page, filter: &Filter) -> Response<Body> {
    let mut meta = serde_json::json!({"resourceVersion": page.rv.to_string()});
    if let Some(after) = &page.next_after {
        meta["continue"] = Continue {
            rv: Some(page.rv),
            after: after.clone(),
        }
        .encode()
        .into();
    }
    if let Some(n) = page.remaining {
        meta["remainingItemCount"] = n.into();
    }
    if !filter.shards.is_empty() {
        // KEP-5866: the applied selector, echoed so a client can tell it was honoured.
        meta["shardInfo"] = serde_json::json!({"selector": filter.shards.to_string()});
    }
    let shell = serde_json::json!({"kind": t.res.list_kind(), "apiVersion": t.res.api.api_version(),
                                   "metadata": meta, "items": []});
    let mut shell = crate::wire::to_vec(&shell);
    shell.push(b'\n');
    let shell = Bytes::from(shell);
    // Only the kind, apiVersion and metadata strings precede it, and none holds a quote.
    const ITEMS: &[u8] = b"\"items\":[";
    let at = shell
        .windows(ITEMS.len())
        .position(|w| w == ITEMS)
        .expect("the shell has an items key")
        + ITEMS.len();
    let type_meta = t.res.builtin.then(|| {
        format!(
            "{{\"kind\":\"{}\",\"apiVersion\":\"{}\",",
            t.res.api.kind,
            t.res.api.api_version()
        )
    });
    let items = page
        .items
        .into_iter()
        .map(|o| conversion::present(&t.res, o))
        .collect();
    let body = ListBody::new(shell.slice(..at), items, type_meta, shell.slice(at..));
    Response::builder()
        .status(StatusCode::OK)
        .header(header::CONTENT_TYPE, "application/json")
        .body(body.boxed_unsync())
        .expect("static headers are valid")
}
