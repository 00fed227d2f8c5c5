//! JSON written the way kube-apiserver writes it, byte for byte where clients can tell:
//!
//! - **Field order.** A built-in type is a Go struct, and Go's `encoding/json` writes struct
//!   fields in declaration order: `kind`, `apiVersion`, `metadata` (in `ObjectMeta`'s order:
//!   `name`, `generateName`, `namespace`, ..., `managedFields`), then the type's own fields
//!   (`spec` before `status`, `immutable` before `data`, ...). [`shapes`] holds those orders
//!   for the kinds served here, at least to the first levels of spec and status; keys a shape
//!   does not list (maps such as `labels`, unknown structure) are written after the listed
//!   ones, sorted, as Go writes a map.
//! - **Custom resources** are `map[string]interface{}` on the server (unstructured), which
//!   Go writes with sorted keys at every level: `apiVersion`, `kind`, `metadata`, `spec`, ...
//!   So objects of groups that are not built in are written sorted.
//! - **Escaping** as Go's encoder: `<`, `>`, `&`, U+2028 and U+2029 as `\u003c`-style
//!   escapes, control characters as `\n`, `\r`, `\t` or `\u00XX`.
//!
//! `serde_json::Value` keeps its maps sorted (the workspace does not turn on
//! `preserve_order`), so the order is imposed here, when an object is serialized — once per
//! write, at store time.

mod indent;
mod shapes;

use std::io::Write;

use serde_json::{Map, Value};

pub(crate) use indent::indent;
pub(crate) use shapes::VERSION_INFO;
use shapes::{Shape, LIST_META, OBJECT_META};

/// `value` as the API server writes it; the shape is chosen by its `apiVersion` and `kind`.
pub(crate) fn to_vec(value: &Value) -> Vec<u8> {
    let mut out = Vec::with_capacity(256);
    match value.as_object() {
        Some(m) => write_top(&mut out, m),
        None => write_value(&mut out, value, None),
    }
    out
}

/// `value` written in the field order of `shape` (for documents without a `kind`).
pub(crate) fn to_vec_shaped(value: &Value, shape: &Shape<'_>) -> Vec<u8> {
    let mut out = Vec::with_capacity(256);
    write_value(&mut out, value, Some(shape));
    out
}

/// Whether `field` is one of ObjectMeta's (what decoding a custom resource's `metadata` into
/// ObjectMeta keeps on the real server).
pub(crate) fn is_object_meta_field(field: &str) -> bool {
    OBJECT_META.0.iter().any(|(name, _)| *name == field)
}

/// Whether objects of `group` are built-in types (Go structs) rather than custom resources
/// (CRDs may not use these groups).
pub(crate) fn builtin_group(group: &str) -> bool {
    matches!(
        group,
        "" | "apps" | "batch" | "autoscaling" | "policy" | "extensions"
    ) || group.ends_with(".k8s.io")
}

fn write_top(out: &mut Vec<u8>, m: &Map<String, Value>) {
    let api_version = m.get("apiVersion").and_then(Value::as_str).unwrap_or("");
    let kind = m.get("kind").and_then(Value::as_str).unwrap_or("");
    let group = api_version.rsplit_once('/').map_or("", |(g, _)| g);
    if !builtin_group(group) || kind.is_empty() {
        return write_object(out, m, None);
    }
    if let Some(shape) = shapes::for_kind(group, kind) {
        return write_object(out, m, Some(shape));
    }
    // A list of a known kind, or a built-in kind without a table here: the TypeMeta and
    // metadata orders are common to all of them.
    let item = kind
        .strip_suffix("List")
        .and_then(|k| shapes::for_kind(group, k));
    let typed = [
        ("kind", None),
        ("apiVersion", None),
        ("metadata", Some(&OBJECT_META)),
    ];
    let typed = Shape(&typed);
    match item {
        Some(item) => {
            let list = [
                ("kind", None),
                ("apiVersion", None),
                ("metadata", Some(&LIST_META)),
                ("items", Some(item)),
            ];
            write_object(out, m, Some(&Shape(&list)));
        }
        None if kind.ends_with("List") && m.contains_key("items") => {
            let list = [
                ("kind", None),
                ("apiVersion", None),
                ("metadata", Some(&LIST_META)),
                ("items", Some(&typed)),
            ];
            write_object(out, m, Some(&Shape(&list)));
        }
        None => write_object(out, m, Some(&typed)),
    }
}

fn write_value(out: &mut Vec<u8>, v: &Value, shape: Option<&Shape<'_>>) {
    match v {
        Value::Object(m) => write_object(out, m, shape),
        // A shape on a list applies to each of its items.
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_value(out, item, shape);
            }
            out.push(b']');
        }
        Value::String(s) => write_string(out, s),
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(b) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
        Value::Number(n) => {
            write!(out, "{n}").expect("writing to a Vec cannot fail");
        }
    }
}

fn write_object(out: &mut Vec<u8>, m: &Map<String, Value>, shape: Option<&Shape<'_>>) {
    out.push(b'{');
    let mut first = true;
    let mut field = |out: &mut Vec<u8>, k: &str, v: &Value, sub: Option<&Shape<'_>>| {
        if !std::mem::take(&mut first) {
            out.push(b',');
        }
        write_string(out, k);
        out.push(b':');
        write_value(out, v, sub);
    };
    let listed = shape.map_or(&[][..], |s| s.0);
    for (k, sub) in listed {
        if let Some(v) = m.get(*k) {
            field(out, k, v, *sub);
        }
    }
    for (k, v) in m {
        if !listed.iter().any(|(l, _)| l == k) {
            field(out, k, v, None);
        }
    }
    out.push(b'}');
}

/// A JSON string as Go's `encoding/json` writes it (HTML-safe escaping on).
fn write_string(out: &mut Vec<u8>, s: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push(b'"');
    let mut start = 0;
    for (i, c) in s.char_indices() {
        let escaped: Option<&[u8]> = match c {
            '"' => Some(b"\\\""),
            '\\' => Some(b"\\\\"),
            '\n' => Some(b"\\n"),
            '\r' => Some(b"\\r"),
            '\t' => Some(b"\\t"),
            '\u{2028}' => Some(b"\\u2028"),
            '\u{2029}' => Some(b"\\u2029"),
            c if (c as u32) < 0x20 || matches!(c, '<' | '>' | '&') => None,
            _ => continue,
        };
        out.extend_from_slice(&s.as_bytes()[start..i]);
        match escaped {
            Some(e) => out.extend_from_slice(e),
            None => {
                let b = c as u8;
                out.extend_from_slice(b"\\u00");
                out.push(HEX[usize::from(b >> 4)]);
                out.push(HEX[usize::from(b & 0xf)]);
            }
        }
        start = i + c.len_utf8();
    }
    out.extend_from_slice(&s.as_bytes()[start..]);
    out.push(b'"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn text(v: &Value) -> String {
        String::from_utf8(to_vec(v)).unwrap()
    }

    #[test]
    fn built_in_objects_follow_the_go_field_order() {
        let cm = json!({"data": {"b": "1", "a": "2"}, "metadata": {"uid": "u", "name": "n",
            "labels": {"z": "1", "a": "2"}, "resourceVersion": "3", "namespace": "ns", "zz": 1},
            "kind": "ConfigMap", "apiVersion": "v1", "immutable": true});
        assert_eq!(
            text(&cm),
            r#"{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"n","namespace":"ns","uid":"u","resourceVersion":"3","labels":{"a":"2","z":"1"},"zz":1},"immutable":true,"data":{"a":"2","b":"1"}}"#
        );
        let dep = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
            "status": {"replicas": 1, "observedGeneration": 2},
            "spec": {"template": {"spec": {"containers": [{"image": "i", "name": "c"}]},
                                  "metadata": {"labels": {"a": "b"}}},
                     "selector": {"matchLabels": {"a": "b"}}, "replicas": 1}});
        assert_eq!(
            text(&dep),
            r#"{"kind":"Deployment","apiVersion":"apps/v1","metadata":{"name":"d"},"spec":{"replicas":1,"selector":{"matchLabels":{"a":"b"}},"template":{"metadata":{"labels":{"a":"b"}},"spec":{"containers":[{"name":"c","image":"i"}]}}},"status":{"observedGeneration":2,"replicas":1}}"#
        );
    }

    #[test]
    fn lists_statuses_and_unknown_built_ins_put_type_and_metadata_first() {
        let list = json!({"items": [{"metadata": {"uid": "u", "name": "a"}}], "metadata":
            {"resourceVersion": "1", "continue": "c"}, "apiVersion": "v1", "kind": "ConfigMapList"});
        assert_eq!(
            text(&list),
            r#"{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"1","continue":"c"},"items":[{"metadata":{"name":"a","uid":"u"}}]}"#
        );
        let status = json!({"code": 404, "reason": "NotFound", "message": "m", "status": "Failure",
            "details": {"kind": "configmaps", "name": "a"}, "metadata": {}, "apiVersion": "v1", "kind": "Status"});
        assert_eq!(
            text(&status),
            r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"m","reason":"NotFound","details":{"name":"a","kind":"configmaps"},"code":404}"#
        );
        let other = json!({"b": 1, "metadata": {"uid": "u", "name": "x"}, "apiVersion": "batch/v1", "kind": "Unlisted"});
        assert_eq!(
            text(&other),
            r#"{"kind":"Unlisted","apiVersion":"batch/v1","metadata":{"name":"x","uid":"u"},"b":1}"#
        );
    }

    #[test]
    fn custom_resources_are_sorted_like_a_go_map() {
        let cr = json!({"kind": "Widget", "apiVersion": "example.com/v1", "spec": {"b": 1, "a": 2},
            "metadata": {"uid": "u", "name": "w"}});
        assert_eq!(
            text(&cr),
            r#"{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w","uid":"u"},"spec":{"a":2,"b":1}}"#
        );
    }

    /// The built-in kinds written in the common order only (TypeMeta, ObjectMeta in Go's
    /// order, then the other fields in key order) for want of a table of their Go fields.
    const WITHOUT_FIELD_ORDER: &[(&str, &str)] = &[
        ("", "Binding"),
        ("", "Endpoints"),
        ("", "LimitRange"),
        ("", "PersistentVolume"),
        ("", "PersistentVolumeClaim"),
        ("", "PodTemplate"),
        ("", "ReplicationController"),
        ("", "ResourceQuota"),
        (
            "admissionregistration.k8s.io",
            "MutatingWebhookConfiguration",
        ),
        (
            "admissionregistration.k8s.io",
            "ValidatingWebhookConfiguration",
        ),
        ("apps", "ControllerRevision"),
        ("apps", "DaemonSet"),
        ("authorization.k8s.io", "LocalSubjectAccessReview"),
        ("authorization.k8s.io", "SelfSubjectAccessReview"),
        ("authorization.k8s.io", "SelfSubjectRulesReview"),
        ("authorization.k8s.io", "SubjectAccessReview"),
        ("autoscaling", "HorizontalPodAutoscaler"),
        ("discovery.k8s.io", "EndpointSlice"),
        ("extensions", "Ingress"),
        ("flowcontrol.apiserver.k8s.io", "FlowSchema"),
        ("flowcontrol.apiserver.k8s.io", "PriorityLevelConfiguration"),
        ("networking.k8s.io", "Ingress"),
        ("networking.k8s.io", "IngressClass"),
        ("networking.k8s.io", "NetworkPolicy"),
        ("node.k8s.io", "RuntimeClass"),
        ("policy", "PodDisruptionBudget"),
        ("policy", "PodSecurityPolicy"),
        ("scheduling.k8s.io", "PriorityClass"),
        ("storage.k8s.io", "CSIDriver"),
        ("storage.k8s.io", "CSINode"),
        ("storage.k8s.io", "StorageClass"),
        ("storage.k8s.io", "VolumeAttachment"),
    ];

    #[test]
    fn every_served_built_in_kind_has_its_field_order_but_the_listed() {
        let table = crate::resources::ResourceTable::new();
        for r in table.all() {
            assert!(builtin_group(&r.api.group), "{}", r.api.group);
            let listed = WITHOUT_FIELD_ORDER.contains(&(r.api.group.as_str(), r.api.kind.as_str()));
            assert_eq!(
                shapes::for_kind(&r.api.group, &r.api.kind).is_none(),
                listed,
                "field order of {}/{}",
                r.api.group,
                r.api.kind
            );
        }
        assert!(!builtin_group("example.com"));
    }

    #[test]
    fn strings_are_escaped_as_go_does() {
        let v = json!({"k": "<a href=\"x\">&amp;</a>\u{2028}\u{1}\n\t\\é"});
        assert_eq!(
            text(&v),
            r#"{"k":"\u003ca href=\"x\"\u003e\u0026amp;\u003c/a\u003e\u2028\u0001\n\t\\é"}"#
        );
        // Whatever the escaping, the bytes are JSON that means the same value.
        assert_eq!(serde_json::from_slice::<Value>(&to_vec(&v)).unwrap(), v);
    }
}
