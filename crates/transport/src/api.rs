//! `Api<K>`: the verbs of one resource, typed (`K: Resource`) or dynamic (`DynamicObject` with
//! an `ApiResource` given at runtime) — client-go's typed clients and dynamic client in one type.

use std::marker::PhantomData;
use std::sync::Arc;

use bytes::Bytes;
use http::{
    header::{ACCEPT, CONTENT_TYPE},
    Method, Request,
};
use kcache_core::{
    ApiResource, Error, ListParams, ObjectList, Resource, Status, WatchParams, WatchStream,
};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::client::{Client, ListItems};
use crate::decode::{exact_copy, is_unknown_field, keep, ItemKind, Trim};
use crate::params::{DeleteParams, Patch, PatchParams, PostParams};

/// `Accept` of a metadata-only `Api` ([`Api::into_metadata`]) for one object, and for watch
/// events.
const ACCEPT_PARTIAL: &str =
    "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json";
/// `Accept` for a list.
const ACCEPT_PARTIAL_LIST: &str =
    "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json";
/// `Accept` for a list with `Config::metadata_protobuf`: protobuf first, as client-go's metadata
/// client asks (`decode::protobuf_list` splits it, `decode::protobuf` decodes its items), then
/// JSON, then plain JSON.
const ACCEPT_PARTIAL_LIST_PROTOBUF: &str = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json";

/// `Accept` of a list asked for in protobuf first ([`ItemKind`]), then JSON.
const ACCEPT_PROTOBUF_LIST: &str = "application/vnd.kubernetes.protobuf,application/json";

/// The verbs of one resource, in one namespace or across all.
pub struct Api<K> {
    client: Client,
    resource: ApiResource,
    namespace: Option<String>,
    /// Ask for `PartialObjectMetadata` (set by [`Api::into_metadata`]).
    pub(crate) metadata_only: bool,
    /// What lists and watches do to each decoded object (set by [`Api::with_exact_copies`]).
    trim: Trim<K>,
    _k: PhantomData<fn() -> K>,
}

impl<K> Clone for Api<K> {
    fn clone(&self) -> Self {
        Api {
            client: self.client.clone(),
            resource: self.resource.clone(),
            namespace: self.namespace.clone(),
            metadata_only: self.metadata_only,
            trim: self.trim,
            _k: PhantomData,
        }
    }
}

impl<K> std::fmt::Debug for Api<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Api")
            .field("resource", &self.resource)
            .field("namespace", &self.namespace)
            .finish()
    }
}

/// What a delete returned: the object while finalizers hold it, or the server's `Status` once
/// it is gone.
#[derive(Debug, Clone, PartialEq)]
pub enum Deleted<K> {
    /// Deletion is pending; the object's current state.
    Pending(K),
    /// The object is gone.
    Gone(Box<Status>),
}

impl<K: Resource> Api<K> {
    /// Objects in `namespace` (for a cluster-scoped resource the namespace is ignored).
    pub fn namespaced(client: Client, namespace: &str) -> Self {
        Api::dynamic(client, K::api_resource(), Some(namespace))
    }

    /// Objects in the client's default namespace.
    pub fn default_namespaced(client: Client) -> Self {
        let ns = client.default_namespace().to_string();
        Api::namespaced(client, &ns)
    }

    /// Objects across all namespaces (or of a cluster-scoped resource).
    pub fn all(client: Client) -> Self {
        Api::dynamic(client, K::api_resource(), None)
    }
}

impl<K> Api<K> {
    /// Objects of `resource` in `namespace` (`None`: all namespaces). Meant for
    /// `Api<DynamicObject>`; a typed `K` must match `resource`.
    pub fn dynamic(client: Client, resource: ApiResource, namespace: Option<&str>) -> Self {
        Api {
            client,
            resource,
            namespace: namespace.filter(|n| !n.is_empty()).map(String::from),
            metadata_only: false,
            trim: keep,
            _k: PhantomData,
        }
    }

    /// Lists and watches hand out exact copies of what they decode, for a cache that keeps
    /// every object: serde leaves spare room in each decoded `Vec` (a ConfigMap's one
    /// `managedFields` entry in room for four), ≈ 10% of a cache of ConfigMaps; the copy is made
    /// on the decoding thread, right after each decode (kcache-transport's `decode::exact_copy`).
    /// The factory's plain typed informers use it; other verbs are unaffected.
    pub fn with_exact_copies(mut self) -> Self
    where
        K: Clone,
    {
        self.trim = exact_copy;
        self
    }

    /// The resource.
    pub fn resource(&self) -> &ApiResource {
        &self.resource
    }

    /// The namespace, `None` for all namespaces.
    pub fn namespace(&self) -> Option<&str> {
        self.namespace.as_deref()
    }

    /// The client.
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// The `Accept` header of a list, or of one object (and watch events); `None`: JSON.
    fn accept(&self, list: bool) -> Option<&'static str> {
        match (self.metadata_only, list) {
            (false, true) if self.protobuf_list().is_some() => Some(ACCEPT_PROTOBUF_LIST),
            (false, _) => None,
            (true, true) if self.protobuf_list().is_some() => Some(ACCEPT_PARTIAL_LIST_PROTOBUF),
            (true, true) => Some(ACCEPT_PARTIAL_LIST),
            (true, false) => Some(ACCEPT_PARTIAL),
        }
    }

    /// What a list asks for in protobuf first, if anything: `PartialObjectMetadata` for a
    /// metadata-only Api (`Config::metadata_protobuf`), the resource's own kind if kcache knows
    /// its message (`Config::protobuf`) — unless a protobuf list of the resource held a field
    /// kcache does not know (`protobuf_fallback`).
    fn protobuf_list(&self) -> Option<ItemKind> {
        let r = &self.resource;
        let kind = if self.metadata_only {
            self.client
                .metadata_protobuf()
                .then_some(ItemKind::PartialObjectMetadata)
        } else {
            ItemKind::of_resource(&r.group, &r.version, &r.kind).filter(|_| self.client.protobuf())
        }?;
        let listed_in_json = self
            .client
            .json_fallback()
            .holds(kind, &r.collection_path(None));
        (!listed_in_json).then_some(kind)
    }

    fn collection_uri(&self, query: &str) -> String {
        with_query(
            self.resource.collection_path(self.namespace.as_deref()),
            query,
        )
    }

    fn object_uri(
        &self,
        name: &str,
        subresource: Option<&str>,
        query: &str,
    ) -> Result<String, Error> {
        if name.is_empty() {
            return Err(Error::Request("resource name may not be empty".into()));
        }
        let mut p = self.resource.object_path(self.namespace.as_deref(), name);
        if let Some(sub) = subresource {
            p.push('/');
            p.push_str(sub);
        }
        Ok(with_query(p, query))
    }
}

fn with_query(mut path: String, query: &str) -> String {
    if !query.is_empty() {
        path.push('?');
        path.push_str(query);
    }
    path
}

fn request(
    method: Method,
    uri: &str,
    (content_type, accept): (Option<&str>, Option<&str>),
    body: Vec<u8>,
) -> Result<Request<Bytes>, Error> {
    let mut b = Request::builder().method(method).uri(uri);
    if let Some(ct) = content_type {
        b = b.header(CONTENT_TYPE, ct);
    }
    if let Some(a) = accept {
        b = b.header(ACCEPT, a);
    }
    b.body(Bytes::from(body))
        .map_err(|e| Error::Request(format!("invalid request {uri}: {e}").into()))
}

fn get_request(uri: &str, accept: Option<&str>) -> Result<Request<Bytes>, Error> {
    request(Method::GET, uri, (None, accept), Vec::new())
}

fn json_body<T: Serialize>(obj: &T) -> Result<Vec<u8>, Error> {
    serde_json::to_vec(obj).map_err(|e| Error::decode("request object", e))
}

impl<K: DeserializeOwned + Send + 'static> Api<K> {
    /// Reads one object.
    pub async fn get(&self, name: &str) -> Result<K, Error> {
        self.client
            .request_json(get_request(
                &self.object_uri(name, None, "")?,
                self.accept(false),
            )?)
            .await
    }

    /// Reads one object through its `status` subresource.
    pub async fn get_status(&self, name: &str) -> Result<K, Error> {
        let uri = self.object_uri(name, Some("status"), "")?;
        self.client
            .request_json(get_request(&uri, self.accept(false))?)
            .await
    }

    /// Lists one page, decoding items as they arrive (use [`ListPager`](crate::ListPager) for
    /// every page).
    ///
    /// A page asked for in protobuf whose items hold a field kcache's protobuf decoder does not
    /// know is read again in JSON, and the resource is listed in JSON from then on: the result
    /// is the JSON list's.
    pub async fn list(&self, params: &ListParams) -> Result<ObjectList<K>, Error> {
        self.list_whole(params, ListItems::into_list).await
    }

    /// One page read whole by `read`, again in JSON if it came in protobuf and held a field
    /// kcache does not know ([`Api::list`]).
    pub(crate) async fn list_whole<T, F>(
        &self,
        params: &ListParams,
        read: impl Fn(ListItems<K>) -> F,
    ) -> Result<ObjectList<T>, Error>
    where
        F: std::future::Future<Output = Result<ObjectList<T>, Error>>,
    {
        let in_protobuf = self.protobuf_list().is_some();
        match read(self.list_stream(params).await?).await {
            // `list_stream` remembered the resource: it asks for JSON now.
            Err(e) if in_protobuf && is_unknown_field(&e) => {
                read(self.list_stream(params).await?).await
            }
            page => page,
        }
    }

    /// Lists one page as a stream of items, never holding the whole body; the list's metadata
    /// is on the stream once it ends.
    ///
    /// A protobuf page holding a field kcache's protobuf decoder does not know ends in an error
    /// naming it ([`is_unknown_field`](crate::decode::is_unknown_field); the items before it are
    /// handed over already), and the resource is listed in JSON from then on; [`Api::list`]
    /// reads such a page again in JSON itself.
    pub async fn list_stream(&self, params: &ListParams) -> Result<ListItems<K>, Error> {
        let uri = self.collection_uri(&params.to_query());
        let kind = self.protobuf_list();
        let items = self
            .client
            .request_list_of(get_request(&uri, self.accept(true))?, kind)
            .await?
            .with_trim(self.trim);
        let Some(kind) = kind else {
            return Ok(items);
        };
        let fallback = Arc::clone(self.client.json_fallback());
        let resource = self.resource.collection_path(None);
        Ok(items.on_unknown_field(Box::new(move || fallback.remember(kind, resource))))
    }

    /// Starts a watch.
    pub async fn watch(&self, params: &WatchParams) -> Result<WatchStream<K>, Error> {
        let uri = self.collection_uri(&params.to_query());
        self.client
            .watch_trimmed(get_request(&uri, self.accept(false))?, self.trim)
            .await
    }

    /// Patches an object.
    pub async fn patch<P: Serialize>(
        &self,
        name: &str,
        params: &PatchParams,
        patch: &Patch<P>,
    ) -> Result<K, Error> {
        self.patch_at(name, None, params, patch).await
    }

    /// Patches an object's `status` subresource.
    pub async fn patch_status<P: Serialize>(
        &self,
        name: &str,
        params: &PatchParams,
        patch: &Patch<P>,
    ) -> Result<K, Error> {
        self.patch_at(name, Some("status"), params, patch).await
    }

    async fn patch_at<P: Serialize>(
        &self,
        name: &str,
        sub: Option<&str>,
        params: &PatchParams,
        patch: &Patch<P>,
    ) -> Result<K, Error> {
        let uri = self.object_uri(name, sub, &params.to_query(patch)?)?;
        let req = request(
            Method::PATCH,
            &uri,
            (Some(patch.content_type()), self.accept(false)),
            patch.body()?,
        )?;
        self.client.request_json(req).await
    }

    /// Deletes an object.
    pub async fn delete(&self, name: &str, params: &DeleteParams) -> Result<Deleted<K>, Error> {
        let uri = self.object_uri(name, None, "")?;
        let req = request(
            Method::DELETE,
            &uri,
            (Some("application/json"), self.accept(false)),
            params.body(),
        )?;
        let body = self.client.request_bytes(req).await?;
        #[derive(Deserialize)]
        struct Kind {
            #[serde(default)]
            kind: String,
        }
        let kind: Kind =
            serde_json::from_slice(&body).map_err(|e| Error::decode("delete response", e))?;
        if kind.kind == "Status" {
            let s =
                serde_json::from_slice(&body).map_err(|e| Error::decode("delete response", e))?;
            return Ok(Deleted::Gone(Box::new(s)));
        }
        serde_json::from_slice(&body)
            .map(Deleted::Pending)
            .map_err(|e| Error::decode("delete response", e))
    }
}

impl<K: Serialize + DeserializeOwned + Send + 'static> Api<K> {
    /// Creates an object (in this Api's namespace).
    pub async fn create(&self, params: &PostParams, obj: &K) -> Result<K, Error> {
        let uri = self.collection_uri(&params.to_query());
        let req = request(
            Method::POST,
            &uri,
            (Some("application/json"), self.accept(false)),
            json_body(obj)?,
        )?;
        self.client.request_json(req).await
    }

    /// Replaces an object (its resourceVersion, if set, must be current).
    pub async fn replace(&self, name: &str, params: &PostParams, obj: &K) -> Result<K, Error> {
        self.put(name, None, params, obj).await
    }

    /// Replaces an object's status through the `status` subresource.
    pub async fn replace_status(
        &self,
        name: &str,
        params: &PostParams,
        obj: &K,
    ) -> Result<K, Error> {
        self.put(name, Some("status"), params, obj).await
    }

    async fn put(
        &self,
        name: &str,
        sub: Option<&str>,
        params: &PostParams,
        obj: &K,
    ) -> Result<K, Error> {
        let uri = self.object_uri(name, sub, &params.to_query())?;
        let req = request(
            Method::PUT,
            &uri,
            (Some("application/json"), self.accept(false)),
            json_body(obj)?,
        )?;
        self.client.request_json(req).await
    }
}
