//! The custom resources in the OpenAPI documents. In `/openapi/v2`, as kube-apiserver 1.20.2
//! publishes each served version of a CRD: the paths and the list definition from the real
//! server's own (`openapi-v2-crd.json`, recorded by `cargo xtask discovery-snapshot` with the
//! CRD's names as placeholders), the object definition from the version's schema made OpenAPI
//! v2 ([`crate::resources::crd_schema::openapi_v2`]) with `apiVersion`, `kind` and `metadata`
//! added, and the `_v2` copies of the meta definitions the real server adds once a CRD is
//! published (`ObjectMeta_v2`, `OwnerReference_v2` and `Scale_v2` only while a CRD has
//! `/scale`, as the real server's merge of the documents leaves them). The list kind is
//! `<Kind>List`. In `/openapi/v3` (which 1.20.2 does not serve; kubectl reads it here), the
//! same object definition, so `kubectl explain` describes custom resources as it does on 1.20.2
//! through `/openapi/v2` (kubectl cannot explain a schema holding `anyOf`).

use std::sync::{Arc, OnceLock};

use serde_json::{json, Map, Value};

use crate::resources::crd_schema::openapi_v2;
use crate::resources::ResourceInfo;

const TEMPLATES: &str = include_str!("../../testdata/kube-apiserver-1.20.2/openapi-v2-crd.json");
const META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.";
/// The definitions a CRD with `/scale` brings.
const WITH_SCALE: &[&str] = &["ObjectMeta_v2", "OwnerReference_v2", "Scale_v2"];

fn templates() -> &'static Value {
    static T: OnceLock<Value> = OnceLock::new();
    T.get_or_init(|| serde_json::from_str(TEMPLATES).expect("openapi-v2-crd.json is JSON"))
}

/// The group as the real server names it in operation ids and tags: its parts (split at `.`
/// and `-`) in camel case, e.g. `my-stuff.example.com` → `myStuffExampleCom`.
fn rest_friendly(group: &str) -> String {
    group
        .split(['.', '-'])
        .filter(|p| !p.is_empty())
        .enumerate()
        .map(|(i, p)| {
            if i == 0 {
                p.to_string()
            } else {
                upper_first(p)
            }
        })
        .collect()
}

fn upper_first(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

/// The placeholders of the templates and what they stand for in `res`.
fn names(res: &ResourceInfo) -> Vec<(&'static str, String)> {
    let group = &res.api.group;
    let friendly = rest_friendly(group);
    let reversed: Vec<&str> = group.rsplit('.').collect();
    vec![
        ("{definitionGroup}", reversed.join(".")),
        ("{group}", group.clone()),
        ("{GroupName}", upper_first(&friendly)),
        ("{groupName}", friendly),
        ("{Version}", upper_first(&res.api.version)),
        ("{version}", res.api.version.clone()),
        ("{Kind}", res.api.kind.clone()),
        ("{plural}", res.api.plural.clone()),
    ]
}

/// `template` with its placeholders filled in, in every string and key.
fn fill(template: &Value, names: &[(&str, String)]) -> Value {
    let swap = |s: &str| {
        names
            .iter()
            .fold(s.to_string(), |s, (from, to)| s.replace(from, to))
    };
    match template {
        Value::String(s) => Value::String(swap(s)),
        Value::Array(a) => Value::Array(a.iter().map(|v| fill(v, names)).collect()),
        Value::Object(m) => {
            Value::Object(m.iter().map(|(k, v)| (swap(k), fill(v, names))).collect())
        }
        other => other.clone(),
    }
}

/// The definition of `res`'s objects: a bare `object` where the schema publishes no
/// properties, else the schema made OpenAPI v2 with `apiVersion`, `kind` and `metadata` (whose
/// schema is `metadata`) added.
fn object_definition(res: &ResourceInfo, names: &[(&str, String)], metadata: &str) -> Value {
    let schema = res.schema.as_ref().and_then(|s| s.published());
    let schema = schema.map(openapi_v2::to_v2);
    let mut def = match schema {
        Some(Value::Object(mut def)) => {
            let mut added = fill(&templates()["objectProperties"], names);
            added["metadata"]["$ref"] = json!(metadata);
            let props = def.entry("properties").or_insert_with(|| json!({}));
            if let (Some(props), Value::Object(added)) = (props.as_object_mut(), added) {
                props.extend(added);
            }
            def
        }
        _ => Map::from_iter([("type".to_string(), json!("object"))]),
    };
    def.insert(
        "x-kubernetes-group-version-kind".into(),
        json!([{"group": res.api.group, "kind": res.api.kind, "version": res.api.version}]),
    );
    Value::Object(def)
}

/// The name of `res`'s object definition (`dev.example.v1.Foo` for `example.dev/v1` Foos).
fn definition_name(res: &ResourceInfo, names: &[(&str, String)]) -> String {
    format!("{}.{}.{}", names[0].1, res.api.version, res.api.kind)
}

/// The CRD's schema and what it refers to, for the `/openapi/v3` document of its
/// group/version (nothing for a built-in resource).
pub(crate) fn v3_schemas(res: &ResourceInfo) -> Map<String, Value> {
    if res.builtin || res.schema.is_none() {
        return Map::new();
    }
    let names = names(res);
    let meta = format!("{META}ObjectMeta");
    let metadata = format!("#/components/schemas/{meta}");
    let mut schemas = super::openapi_schemas::reached(vec![meta]);
    schemas.insert(
        definition_name(res, &names),
        object_definition(res, &names, &metadata),
    );
    schemas
}

/// Adds the paths and definitions of every custom resource among `resources`.
pub(crate) fn add(doc: &mut Map<String, Value>, resources: &[Arc<ResourceInfo>]) {
    let crds: Vec<&ResourceInfo> = resources
        .iter()
        .map(Arc::as_ref)
        .filter(|r| !r.builtin && r.schema.is_some())
        .collect();
    if crds.is_empty() {
        return;
    }
    let scale = crds.iter().any(|r| r.subresources.scale.is_some());
    let t = templates();
    let mut paths = Map::new();
    let mut definitions = Map::new();
    for res in crds {
        let names = names(res);
        let scope = if res.api.namespaced {
            "namespaced"
        } else {
            "cluster"
        };
        for (path, item) in t[scope].as_object().into_iter().flatten() {
            let sub = path.rsplit('/').next().unwrap_or_default();
            if (sub == "status" && !res.subresources.status)
                || (sub == "scale" && res.subresources.scale.is_none())
            {
                continue;
            }
            let item = fill(item, &names);
            paths.insert(
                fill(&json!(path), &names)
                    .as_str()
                    .unwrap_or_default()
                    .into(),
                item,
            );
        }
        let prefix = definition_name(res, &names);
        let meta = if scale { "ObjectMeta_v2" } else { "ObjectMeta" };
        let metadata = format!("#/definitions/{META}{meta}");
        definitions.insert(prefix.clone(), object_definition(res, &names, &metadata));
        definitions.insert(format!("{prefix}List"), fill(&t["list"], &names));
    }
    for (name, def) in t["definitions"].as_object().into_iter().flatten() {
        if scale || !WITH_SCALE.iter().any(|w| name.ends_with(w)) {
            definitions.insert(name.clone(), def.clone());
        }
    }
    if let Some(Value::Object(p)) = doc.get_mut("paths") {
        p.extend(paths);
    }
    if let Some(Value::Object(d)) = doc.get_mut("definitions") {
        d.extend(definitions);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_are_named_as_the_real_server_names_them() {
        assert_eq!(rest_friendly("my-stuff.kcache.dev"), "myStuffKcacheDev");
        assert_eq!(rest_friendly("example.com"), "exampleCom");
        assert_eq!(upper_first("v2beta1"), "V2beta1");
    }

    #[test]
    fn the_templates_hold_every_placeholder_the_paths_need() {
        let t = templates();
        let namespaced = t["namespaced"].as_object().unwrap();
        assert!(namespaced
            .contains_key("/apis/{group}/{version}/namespaces/{namespace}/{plural}/{name}/scale"));
        assert!(namespaced.contains_key("/apis/{group}/{version}/{plural}"));
        let list = &namespaced["/apis/{group}/{version}/namespaces/{namespace}/{plural}"]["get"];
        assert_eq!(
            list["operationId"],
            "list{GroupName}{Version}Namespaced{Kind}"
        );
        assert_eq!(list["tags"], json!(["{groupName}_{version}"]));
    }
}
