//! Request handlers, one file per verb family, and what writes share: validation of incoming
//! objects and the metadata the server manages (uids, timestamps, generated names).

pub(crate) mod crd_termination;
pub(crate) mod delete;
pub(crate) mod delete_options;
pub(crate) mod discovery;
mod event_validation;
mod list_body;
pub(crate) mod meta;
pub(crate) mod namespace_lifecycle;
mod openapi_crd;
mod openapi_schemas;
pub(crate) mod openapi_v2;
mod options;
mod patch;
mod pod_subresources;
mod read;
mod reviews;
mod scale;
mod services;
mod strategic;
mod termination;
mod token;
mod validation;
mod views;
mod watch;
mod workload_defaults;
mod write;

use std::sync::Arc;

pub(crate) use openapi_schemas::gunzip_json;
pub(crate) use write::{create_stored, update_stored};

use bytes::Bytes;
use http::{HeaderMap, Method};
use kcache_core::selector::{FieldSelector, LabelSelector, ShardSelector};

use crate::config::ServerConfig;
use crate::http::faults::Verb;
use crate::http::query::Query;
use crate::http::responses::{ApiError, ApiResult};
use crate::resources::{ResourceInfo, Special};
use crate::state::ServerState;
use crate::storage::{object_key, Filter};

/// The resource, namespace, name and subresource a request addresses.
#[derive(Debug, Clone)]
pub(crate) struct Target {
    pub res: Arc<ResourceInfo>,
    pub namespace: Option<String>,
    pub name: Option<String>,
    pub subresource: Option<String>,
    /// `dryRun=All`: the write is checked and answered as usual, but nothing is stored, no
    /// watcher hears of it and no resourceVersion is used.
    pub dry_run: bool,
}

impl Target {
    /// The storage key of the named object.
    pub(crate) fn key(&self) -> String {
        object_key(
            self.namespace.as_deref(),
            self.name.as_deref().unwrap_or_default(),
        )
    }

    /// The verb, as faults and logs name it.
    pub(crate) fn verb(&self, method: &Method, query: &Query) -> Option<Verb> {
        let named = self.name.is_some();
        Some(match *method {
            Method::GET if named => Verb::Get,
            Method::GET if query.flag("watch") => Verb::Watch,
            Method::GET => Verb::List,
            Method::POST => Verb::Create,
            Method::PUT => Verb::Update,
            Method::PATCH => Verb::Patch,
            Method::DELETE if named => Verb::Delete,
            Method::DELETE => Verb::DeleteCollection,
            _ => return None,
        })
    }

    /// The list/watch predicate from the URL and the selector parameters (`shardSelector` only
    /// with the `ShardedListAndWatch` gate on).
    pub(crate) fn filter(&self, query: &Query, config: &ServerConfig) -> Result<Filter, ApiError> {
        let labels = LabelSelector::parse(query.get("labelSelector").unwrap_or(""))
            .map_err(|e| ApiError::bad_request(format!("unable to parse requirement: {e}")))?;
        let fields = FieldSelector::parse(query.get("fieldSelector").unwrap_or(""))
            .map_err(|e| ApiError::bad_request(e.to_string()))?;
        if let Some(r) = fields
            .requirements()
            .iter()
            .find(|r| !self.res.supports_field(&r.field))
        {
            let mut known = vec![
                "metadata.name".to_string(),
                "metadata.namespace".to_string(),
            ];
            known.extend(self.res.fields.iter().cloned());
            let only = known
                .iter()
                .map(|f| format!("{f:?}"))
                .collect::<Vec<_>>()
                .join(", ");
            return Err(ApiError::bad_request(format!(
                "{:?} is not a known field selector: only {only}",
                r.field
            )));
        }
        let shards = match config.sharded_list_and_watch {
            true => ShardSelector::parse(query.get("shardSelector").unwrap_or(""))
                .map_err(|e| ApiError::bad_request(e.to_string()))?,
            false => ShardSelector::default(),
        };
        Ok(Filter {
            namespace: self.namespace.clone(),
            labels,
            fields,
            shards,
            renames: crate::resources::conversion::selector_renames(&self.res),
        })
    }
}

/// Runs the handler for `method` on `target`.
pub(crate) async fn dispatch(
    state: &Arc<ServerState>,
    method: &Method,
    mut target: Target,
    query: &Query,
    headers: &HeaderMap,
    body: Bytes,
) -> ApiResult {
    let manager = crate::fieldmanager::manager_name(
        query.get("fieldManager"),
        headers
            .get(http::header::USER_AGENT)
            .and_then(|v| v.to_str().ok()),
    );
    let verb = target.verb(method, query);
    // Options come before the body, as in the API server's handlers; patch and delete read
    // theirs in their handlers (they depend on the patch type, or may come in the body).
    target.dry_run = match verb {
        Some(Verb::Create) => options::write_options("CreateOptions", query)?,
        Some(Verb::Update) => options::write_options("UpdateOptions", query)?,
        _ => false,
    };
    let sub = target.subresource.as_deref();
    let res = &target.res;
    let plain = res.special == Special::None;
    match (sub, res.special, verb) {
        (None, _, _) if plain => {}
        (Some("status"), _, _) if plain && res.subresources.status => {}
        (Some("approval"), _, _) if res.subresources.approval => {}
        (Some("finalize"), _, verb) if plain && res.builtin && res.api.plural == "namespaces" => {
            return match verb {
                // FinalizeREST: an update that keeps the status and takes spec.finalizers.
                Some(Verb::Update) => write::update(state, &target, &body, &manager),
                _ => Err(ApiError::method_not_allowed()),
            };
        }
        (Some("scale"), _, _) if res.subresources.scale.is_some() => {
            return scale::scale(state, method, &target, query, headers, &body)
        }
        (Some("token"), _, Some(Verb::Create)) if res.subresources.token => {
            return token::token_request(state, &target, &body, &manager)
        }
        (None, Special::TokenReview, Some(Verb::Create)) => {
            return token::token_review(state, &target.res, &body, &manager)
        }
        (None, Special::AccessReview, Some(Verb::Create)) => {
            return reviews::access_review(&target, &body, &manager)
        }
        (None, Special::Binding, Some(Verb::Create)) if target.namespace.is_some() => {
            return pod_subresources::bind(state, &target, &body)
        }
        (Some("binding"), _, Some(Verb::Create)) if plain && res.subresources.has("binding") => {
            return pod_subresources::bind(state, &target, &body)
        }
        (Some("eviction"), _, Some(Verb::Create)) if plain && res.subresources.has("eviction") => {
            return pod_subresources::evict(state, &target, query, &body)
        }
        (Some(s @ ("exec" | "attach" | "portforward")), _, Some(Verb::Get | Verb::Create))
        | (Some(s @ "log"), _, Some(Verb::Get))
        | (Some(s @ "proxy"), _, Some(_))
            if plain && res.api.plural == "pods" && res.subresources.has(s) =>
        {
            return pod_subresources::unscheduled(state, &target, s)
        }
        (None, Special::ComponentStatus, Some(v @ (Verb::Get | Verb::List | Verb::Watch))) => {
            return views::get(&target, v == Verb::Watch)
        }
        (None, _, _) => return Err(ApiError::method_not_allowed()),
        (Some(_), _, _) => return Err(ApiError::no_route()),
    }
    match verb {
        Some(Verb::Get) => read::get(state, &target, query),
        Some(Verb::List) if sub.is_none() => read::list(state, &target, query).await,
        Some(Verb::Watch) if sub.is_none() => watch::watch(state, &target, query),
        Some(Verb::Create) if sub.is_none() => write::create(state, &target, &body, &manager),
        Some(Verb::Update) => write::update(state, &target, &body, &manager),
        Some(Verb::Patch) => patch::patch(state, &target, query, headers, &body, &manager),
        Some(Verb::Delete) if sub.is_none() => delete::delete(state, &target, query, &body),
        Some(Verb::DeleteCollection) if sub.is_none() => {
            delete::delete_collection(state, &target, query, &body)
        }
        _ => Err(ApiError::method_not_allowed()),
    }
}
