//! What structured-merge-diff would know from a type's schema, for the places that decide
//! ownership: whether an object's keys are struct fields, map entries, or one atomic value, and
//! whether a list is atomic, a set of scalars, or a map keyed by some of its items' fields.
//!
//! The server has no OpenAPI models, so built-in types use a table of the list-map keys and
//! map-typed fields of the Kubernetes types (`+listType=map`/`+listMapKey`, `patchMergeKey`
//! with `patchStrategy=merge`, `map[string]...` fields); every other built-in list is atomic.
//! Custom resources get the API server's deduced schema: maps merge per key, lists are atomic;
//! their `metadata` is `ObjectMeta` as for every type.

use serde_json::Value;

/// How an object's keys are owned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ObjectKind {
    /// Struct fields: a key is owned through what it holds.
    Struct,
    /// Map entries: each key is owned itself.
    Map,
    /// One value (e.g. `LabelSelector`, `+structType=atomic`).
    Atomic,
}

/// How a list's items are owned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ListKind {
    /// The whole list is one value.
    Atomic,
    /// A set of scalars, each owned by value.
    Set,
    /// Items identified by these fields.
    Map(&'static [&'static str]),
}

/// Where in an object a value sits: the field it is under and the one above that.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Shape<'a> {
    deduced: bool,
    in_meta: bool,
    root: bool,
    parent: &'a str,
    name: &'a str,
}

impl<'a> Shape<'a> {
    /// The root of an object; `deduced` for custom resources.
    pub(crate) fn root(deduced: bool) -> Self {
        Shape {
            deduced,
            in_meta: false,
            root: true,
            parent: "",
            name: "",
        }
    }

    /// The value under `key` of an object at this shape.
    pub(crate) fn field<'b>(&self, key: &'b str) -> Shape<'b>
    where
        'a: 'b,
    {
        Shape {
            deduced: self.deduced,
            in_meta: self.in_meta || (self.root && key == "metadata"),
            root: false,
            parent: self.name,
            name: key,
        }
    }

    fn typed(&self) -> bool {
        !self.deduced || self.in_meta
    }

    /// How the object `v` at this shape is owned.
    pub(crate) fn object_kind(&self, v: &Value) -> ObjectKind {
        if !self.typed() {
            return ObjectKind::Map;
        }
        match self.name {
            "selector" if v.get("matchLabels").is_some() || v.get("matchExpressions").is_some() => {
                ObjectKind::Atomic
            }
            "labels" | "annotations" | "data" | "binaryData" | "stringData" | "nodeSelector"
            | "matchLabels" | "limits" | "requests" | "capacity" | "allocatable" | "hard"
            | "used" | "selector" | "extra" | "parameters" => ObjectKind::Map,
            _ => ObjectKind::Struct,
        }
    }

    /// Whether this is a struct field a built-in type's Go zero value already holds (a value,
    /// not a pointer, in the Go type): it never appears or disappears by itself.
    pub(crate) fn zero_value_struct(&self) -> bool {
        self.typed()
            && matches!(
                self.name,
                "metadata"
                    | "spec"
                    | "status"
                    | "template"
                    | "strategy"
                    | "updateStrategy"
                    | "jobTemplate"
                    | "resources"
                    | "roleRef"
                    | "loadBalancer"
                    | "user"
                    | "nodeInfo"
                    | "daemonEndpoints"
                    | "kubeletEndpoint"
            )
    }

    /// Whether this is a list field a built-in type's Go zero value holds as `null` (no
    /// `omitempty`): only its items appear.
    pub(crate) fn zero_value_list(&self) -> bool {
        self.typed() && self.parent == "spec" && self.name == "containers"
    }

    /// The value a list-map key takes when an item leaves it out, where the schema gives one
    /// (a container port's `protocol` is `TCP`).
    pub(crate) fn key_default(&self, key: &str) -> Option<Value> {
        let container = matches!(
            self.parent,
            "containers" | "initContainers" | "ephemeralContainers"
        );
        (self.typed() && container && self.name == "ports" && key == "protocol")
            .then(|| Value::String("TCP".into()))
    }

    /// How a list at this shape is owned.
    pub(crate) fn list_kind(&self) -> ListKind {
        if !self.typed() {
            return ListKind::Atomic;
        }
        match (self.parent, self.name) {
            (_, "finalizers") => ListKind::Set,
            (_, "ownerReferences") => ListKind::Map(&["uid"]),
            (
                _,
                "containers"
                | "initContainers"
                | "ephemeralContainers"
                | "volumes"
                | "env"
                | "imagePullSecrets",
            ) => ListKind::Map(&["name"]),
            ("containers" | "initContainers" | "ephemeralContainers", "ports") => {
                ListKind::Map(&["containerPort", "protocol"])
            }
            (_, "ports") => ListKind::Map(&["port", "protocol"]),
            (_, "volumeMounts") => ListKind::Map(&["mountPath"]),
            (_, "volumeDevices") => ListKind::Map(&["devicePath"]),
            (_, "hostAliases") => ListKind::Map(&["ip"]),
            (_, "conditions") => ListKind::Map(&["type"]),
            (_, "topologySpreadConstraints") => {
                ListKind::Map(&["topologyKey", "whenUnsatisfiable"])
            }
            _ => ListKind::Atomic,
        }
    }
}
