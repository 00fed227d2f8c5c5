//! What kube-apiserver 1.20.2 answers a request that carries no credentials when it checks
//! tokens: the request runs as `system:anonymous`, whom the default RBAC roles let read only the
//! public information (`get` on `/healthz`, `/livez`, `/readyz` and `/version`: the
//! `system:public-info-viewer` role), and everything else is 403 Forbidden, worded from the
//! request's attributes as the apiserver's `RequestInfoFactory` reads them off the path, so an
//! unknown resource is refused the same way as a served one.

use http::Method;
use kcache_core::{Status, StatusDetails};

use super::query::Query;
use super::responses::ApiError;

const USER: &str = "system:anonymous";

/// The paths `system:public-info-viewer` may `get`.
const PUBLIC: [&str; 5] = ["/healthz", "/livez", "/readyz", "/version", "/version/"];

/// Ok if the anonymous user may make this request, else the server's 403.
pub(crate) fn authorize(method: &Method, path: &str, query: &Query) -> Result<(), ApiError> {
    if method == Method::GET && PUBLIC.contains(&path) {
        return Ok(());
    }
    match resource_attributes(method, path, query) {
        Attributes::NonResource => {
            let verb = method.as_str().to_lowercase();
            Err(forbidden(
                format!("forbidden: User \"{USER}\" cannot {verb} path \"{path}\""),
                StatusDetails::default(),
            ))
        }
        Attributes::Resource(r) => Err(r.forbidden()),
        // The real server fails to build its request attributes (500) before authorizing;
        // the router answers such a path as it does for any caller.
        Attributes::Unparsable => Ok(()),
    }
}

/// What authorization sees of a request.
#[derive(Debug, PartialEq)]
enum Attributes {
    NonResource,
    Resource(ResourceRequest),
    Unparsable,
}

/// A request on an API resource, as `RequestInfo` describes it.
#[derive(Debug, PartialEq)]
struct ResourceRequest {
    verb: String,
    group: String,
    namespace: String,
    resource: String,
    subresource: String,
    name: String,
}

impl ResourceRequest {
    /// `errors.NewForbidden` with the message of the apiserver's `forbiddenMessage`.
    fn forbidden(&self) -> ApiError {
        let mut resource = self.resource.clone();
        if !self.subresource.is_empty() {
            resource = format!("{resource}/{}", self.subresource);
        }
        let scope = match self.namespace.as_str() {
            "" => "at the cluster scope".to_string(),
            ns => format!("in the namespace \"{ns}\""),
        };
        let why = format!(
            "User \"{USER}\" cannot {} resource \"{resource}\" in API group \"{}\" {scope}",
            self.verb, self.group
        );
        let qualified = match self.group.as_str() {
            "" => self.resource.clone(),
            g => format!("{}.{g}", self.resource),
        };
        let message = match (qualified.as_str(), self.name.as_str()) {
            ("", _) => format!("forbidden: {why}"),
            (q, "") => format!("{q} is forbidden: {why}"),
            (q, name) => format!("{q} \"{name}\" is forbidden: {why}"),
        };
        let details = StatusDetails {
            name: self.name.clone(),
            group: self.group.clone(),
            kind: self.resource.clone(),
            ..StatusDetails::default()
        };
        forbidden(message, details)
    }
}

fn forbidden(message: String, details: StatusDetails) -> ApiError {
    let mut status = Status::failure(403, "Forbidden", message);
    status.details = Some(details);
    status.into()
}

/// `RequestInfoFactory.NewRequestInfo`: `/api/V/...` and `/apis/G/V/...` with at least one
/// segment after the version are resource requests.
fn resource_attributes(method: &Method, path: &str, query: &Query) -> Attributes {
    let segs: Vec<&str> = path.trim_matches('/').split('/').collect();
    let (group, mut parts) = match segs.as_slice() {
        ["api", _, rest @ ..] if !rest.is_empty() => ("", rest),
        ["apis", g, _, rest @ ..] if !rest.is_empty() => (*g, rest),
        _ => return Attributes::NonResource,
    };
    let mut verb = match *method {
        Method::POST => "create",
        Method::GET | Method::HEAD => "get",
        Method::PUT => "update",
        Method::PATCH => "patch",
        Method::DELETE => "delete",
        _ => "",
    };
    if let [special @ ("watch" | "proxy"), rest @ ..] = parts {
        if rest.is_empty() {
            return Attributes::Unparsable;
        }
        verb = special;
        parts = rest;
    }
    let mut namespace = "";
    if let ["namespaces", ns, rest @ ..] = parts {
        namespace = ns;
        if !rest.is_empty() && !matches!(rest[0], "status" | "finalize") {
            parts = rest;
        }
    }
    let at = |i: usize| parts.get(i).copied().unwrap_or_default().to_string();
    let subresource = if verb == "proxy" {
        String::new()
    } else {
        at(2)
    };
    let mut name = at(1);
    let mut verb = verb.to_string();
    if name.is_empty() && verb == "get" {
        verb = if query.flag("watch") { "watch" } else { "list" }.into();
        name = exact_name(query.get("fieldSelector").unwrap_or_default());
    }
    if name.is_empty() && verb == "delete" {
        verb = "deletecollection".into();
    }
    Attributes::Resource(ResourceRequest {
        verb,
        group: group.into(),
        namespace: namespace.into(),
        resource: at(0),
        subresource,
        name,
    })
}

/// The name a field selector pins (`metadata.name=N` among its terms), if it is a valid path
/// segment: a list or watch of one object is authorized as that object.
fn exact_name(selector: &str) -> String {
    selector
        .split(',')
        .find_map(|term| {
            term.strip_prefix("metadata.name==")
                .or_else(|| term.strip_prefix("metadata.name="))
        })
        .filter(|n| !n.contains('/') && !n.contains('%') && !matches!(*n, "." | ".."))
        .unwrap_or_default()
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(method: Method, path_and_query: &str) -> Option<String> {
        let (path, query) = path_and_query
            .split_once('?')
            .unwrap_or((path_and_query, ""));
        authorize(&method, path, &Query::parse(Some(query)))
            .err()
            .map(|e| e.status.message)
    }

    #[test]
    fn public_information_is_readable() {
        for p in PUBLIC {
            assert_eq!(message(Method::GET, p), None, "{p}");
        }
        assert_eq!(
            message(Method::POST, "/healthz").unwrap(),
            "forbidden: User \"system:anonymous\" cannot post path \"/healthz\""
        );
        assert_eq!(
            message(Method::GET, "/apis/apps/v1").unwrap(),
            "forbidden: User \"system:anonymous\" cannot get path \"/apis/apps/v1\""
        );
    }

    #[test]
    fn resource_requests_name_verb_resource_and_scope() {
        let cases = [
            (Method::GET, "/api/v1/namespaces/default/pods",
             "pods is forbidden: User \"system:anonymous\" cannot list resource \"pods\" in API group \"\" in the namespace \"default\""),
            (Method::GET, "/api/v1/namespaces/default/pods/x/log",
             "pods \"x\" is forbidden: User \"system:anonymous\" cannot get resource \"pods/log\" in API group \"\" in the namespace \"default\""),
            (Method::GET, "/apis/apps/v1/deployments?watch=1",
             "deployments.apps is forbidden: User \"system:anonymous\" cannot watch resource \"deployments\" in API group \"apps\" at the cluster scope"),
            (Method::GET, "/api/v1/namespaces/default/pods?fieldSelector=metadata.name%3Dx,a%3Db",
             "pods \"x\" is forbidden: User \"system:anonymous\" cannot list resource \"pods\" in API group \"\" in the namespace \"default\""),
            (Method::GET, "/api/v1/watch/namespaces/default/pods",
             "pods is forbidden: User \"system:anonymous\" cannot watch resource \"pods\" in API group \"\" in the namespace \"default\""),
            (Method::DELETE, "/api/v1/namespaces/default/configmaps",
             "configmaps is forbidden: User \"system:anonymous\" cannot deletecollection resource \"configmaps\" in API group \"\" in the namespace \"default\""),
            (Method::PUT, "/api/v1/namespaces/ns/finalize",
             "namespaces \"ns\" is forbidden: User \"system:anonymous\" cannot update resource \"namespaces/finalize\" in API group \"\" in the namespace \"ns\""),
        ];
        for (method, path, want) in cases {
            assert_eq!(message(method, path).unwrap(), want, "{path}");
        }
        assert_eq!(message(Method::GET, "/api/v1/watch"), None);
    }
}
