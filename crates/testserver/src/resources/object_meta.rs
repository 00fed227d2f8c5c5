//! ObjectMeta validation as kube-apiserver 1.20.2 does it on every write (apimachinery's
//! `ValidateObjectMetaAccessor`, in its order): label keys are qualified names and values
//! label values, annotation keys qualified names (lower-cased first) within 256 KiB in all,
//! owner references complete and at most one of them the controller, finalizers qualified
//! names and not both `orphan` and `foregroundDeletion`. Built-in kinds add core's rule that a
//! finalizer is a standard one (`kubernetes`, `orphan`, `foregroundDeletion`) or has a `/`.
//! Messages are the real server's; several errors of one map come in key order (the real
//! server's is Go's map order, which varies).

use kcache_core::StatusCause;
use serde_json::Value;

use super::crd_schema::causes::{invalid, too_long};
use crate::http::query::go_quote;

const DNS1123_LABEL_MAX: usize = 63;
/// The message of an invalid DNS-1123 subdomain.
pub(crate) const SUBDOMAIN_MSG: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
/// The message of a qualified name's invalid name part.
pub(crate) const NAME_PART_MSG: &str = "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const QUALIFIED_MSG: &str = "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')";
const LABEL_VALUE_MSG: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
const ANNOTATIONS_MAX: usize = 256 * 1024;
const STANDARD_FINALIZERS: [&str; 3] = ["kubernetes", "orphan", "foregroundDeletion"];

/// `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`, whole.
fn is_name_part(s: &str) -> bool {
    let b = s.as_bytes();
    let inner = |c: &u8| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.');
    !b.is_empty()
        && b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric()
        && b.iter().all(inner)
}

/// The message of an invalid DNS-1123 label (a namespace's name).
pub(crate) const LABEL_MSG: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";

/// A DNS-1123 label: lower-case alphanumerics and `-`, at most 63.
pub(crate) fn is_label(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.len() <= DNS1123_LABEL_MAX
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
        && b[0] != b'-'
        && b[b.len() - 1] != b'-'
}

/// A DNS-1123 subdomain: dot-separated labels, at most 253.
pub(crate) fn is_subdomain(s: &str) -> bool {
    s.len() <= 253 && s.split('.').all(is_label)
}

/// What is wrong with `s` as a qualified name (`IsQualifiedName`), in its order.
pub(crate) fn qualified_name_problems(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let parts: Vec<&str> = s.split('/').collect();
    let name = match parts[..] {
        [name] => name,
        [prefix, name] => {
            if prefix.is_empty() {
                out.push("prefix part must be non-empty".into());
            } else if !is_subdomain(prefix) {
                out.push(format!("prefix part {SUBDOMAIN_MSG}"));
            }
            name
        }
        _ => return vec![QUALIFIED_MSG.into()],
    };
    if name.is_empty() {
        out.push("name part must be non-empty".into());
    } else if name.len() > DNS1123_LABEL_MAX {
        out.push("name part must be no more than 63 characters".into());
    }
    if !is_name_part(name) {
        out.push(NAME_PART_MSG.into());
    }
    out
}

/// What is wrong with `s` as a label value (`IsValidLabelValue`).
fn label_value_problems(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    if s.len() > DNS1123_LABEL_MAX {
        out.push("must be no more than 63 characters".into());
    }
    if !s.is_empty() && !is_name_part(s) {
        out.push(LABEL_VALUE_MSG.into());
    }
    out
}

/// Go's `%#v` of a `[]string`.
fn go_strings(v: &[&str]) -> String {
    let items: Vec<String> = v.iter().map(|s| go_quote(s)).collect();
    format!("[]string{{{}}}", items.join(", "))
}

/// The problems of `meta` (an object's `metadata`, at `path`); `builtin` adds core's finalizer
/// rule.
pub(crate) fn validate(meta: &Value, path: &str, builtin: bool, out: &mut Vec<StatusCause>) {
    let field = |f: &str| format!("{path}.{f}");
    for (k, v) in meta["labels"].as_object().into_iter().flatten() {
        for p in qualified_name_problems(k) {
            out.push(invalid(&field("labels"), &go_quote(k), &p));
        }
        let value = v.as_str().unwrap_or_default();
        for p in label_value_problems(value) {
            out.push(invalid(&field("labels"), &go_quote(value), &p));
        }
    }
    let mut size = 0;
    for (k, v) in meta["annotations"].as_object().into_iter().flatten() {
        for p in qualified_name_problems(&k.to_lowercase()) {
            out.push(invalid(&field("annotations"), &go_quote(k), &p));
        }
        size += k.len() + v.as_str().map_or(0, str::len);
    }
    if size > ANNOTATIONS_MAX {
        out.push(too_long(&field("annotations"), ANNOTATIONS_MAX));
    }
    owner_references(meta, &field("ownerReferences"), out);
    let finalizers: Vec<&str> = meta["finalizers"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    for f in &finalizers {
        for p in qualified_name_problems(f) {
            out.push(invalid(&field("finalizers"), &go_quote(f), &p));
        }
    }
    if finalizers.contains(&"orphan") && finalizers.contains(&"foregroundDeletion") {
        out.push(invalid(
            &field("finalizers"),
            &go_strings(&finalizers),
            "finalizer orphan and foregroundDeletion cannot be both set",
        ));
    }
    if builtin {
        for (i, f) in finalizers.iter().enumerate() {
            if !STANDARD_FINALIZERS.contains(f) && !f.contains('/') {
                out.push(invalid(
                    &format!("{path}.finalizers[{i}]"),
                    &go_quote(f),
                    "name is neither a standard finalizer name nor is it fully qualified",
                ));
            }
        }
    }
}

/// `ValidateOwnerReferences`: each reference complete (the fields reported without an
/// index, as the real server does), at most one controller.
fn owner_references(meta: &Value, path: &str, out: &mut Vec<StatusCause>) {
    let refs = meta["ownerReferences"]
        .as_array()
        .map_or(&[][..], Vec::as_slice);
    for r in refs {
        for (f, what) in [
            ("apiVersion", "version"),
            ("kind", "kind"),
            ("name", "name"),
            ("uid", "uid"),
        ] {
            if r[f].as_str().unwrap_or_default().is_empty() {
                out.push(invalid(
                    &format!("{path}.{f}"),
                    "\"\"",
                    &format!("{what} must not be empty"),
                ));
            }
        }
    }
    let controllers: Vec<&str> = refs
        .iter()
        .filter(|r| r["controller"] == true)
        .map(|r| r["name"].as_str().unwrap_or_default())
        .collect();
    if controllers.len() > 1 {
        // The real server prints the references with Go's %#v, pointer addresses included.
        out.push(invalid(
            path,
            "[]v1.OwnerReference{...}",
            &format!(
                "Only one reference can have Controller set to true. Found \"true\" in references for {}",
                controllers.join(" and ")
            ),
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn problems(meta: Value, builtin: bool) -> Vec<(String, String)> {
        let mut out = Vec::new();
        validate(&meta, "metadata", builtin, &mut out);
        out.into_iter().map(|c| (c.field, c.message)).collect()
    }

    #[test]
    fn qualified_names_as_apimachinery_checks_them() {
        assert!(qualified_name_problems("app.kubernetes.io/name").is_empty());
        assert!(qualified_name_problems("a_b.c-d").is_empty());
        assert_eq!(
            qualified_name_problems("/n"),
            ["prefix part must be non-empty"]
        );
        assert_eq!(qualified_name_problems("p/").len(), 2);
        assert_eq!(qualified_name_problems("x/y/z"), [QUALIFIED_MSG]);
        assert!(qualified_name_problems("Bad_Prefix/n")[0].starts_with("prefix part a lowercase"));
        let long = "a".repeat(64);
        assert_eq!(
            qualified_name_problems(&long),
            ["name part must be no more than 63 characters"]
        );
    }

    #[test]
    fn labels_annotations_and_finalizers() {
        let long = "a".repeat(64);
        let got = problems(
            json!({"labels": {"good": "bad value", "ok": long},
                   "annotations": {"Upper/ok": "x", "A B": "y"},
                   "finalizers": ["a", "orphan", "foregroundDeletion", "example.com/f"]}),
            true,
        );
        let fields: Vec<&str> = got.iter().map(|(f, _)| f.as_str()).collect();
        assert_eq!(
            fields,
            [
                "metadata.labels",
                "metadata.labels",
                "metadata.annotations",
                "metadata.finalizers",
                "metadata.finalizers[0]"
            ]
        );
        assert!(got[0]
            .1
            .starts_with("Invalid value: \"bad value\": a valid label"));
        assert_eq!(
            got[1].1,
            format!("Invalid value: \"{long}\": must be no more than 63 characters")
        );
        assert_eq!(
            got[3].1,
            "Invalid value: []string{\"a\", \"orphan\", \"foregroundDeletion\", \"example.com/f\"}: finalizer orphan and foregroundDeletion cannot be both set"
        );
        assert_eq!(
            got[4].1,
            "Invalid value: \"a\": name is neither a standard finalizer name nor is it fully qualified"
        );
        // Custom resources (and embedded objects) are held to apimachinery's rules only.
        assert_eq!(problems(json!({"finalizers": ["a"]}), false), []);
    }

    #[test]
    fn owner_references_are_complete_with_one_controller() {
        let got = problems(
            json!({"ownerReferences": [{"apiVersion": "", "kind": "", "name": "", "uid": ""}]}),
            true,
        );
        assert_eq!(
            got,
            [
                (
                    "metadata.ownerReferences.apiVersion".to_string(),
                    "Invalid value: \"\": version must not be empty".to_string()
                ),
                (
                    "metadata.ownerReferences.kind".to_string(),
                    "Invalid value: \"\": kind must not be empty".to_string()
                ),
                (
                    "metadata.ownerReferences.name".to_string(),
                    "Invalid value: \"\": name must not be empty".to_string()
                ),
                (
                    "metadata.ownerReferences.uid".to_string(),
                    "Invalid value: \"\": uid must not be empty".to_string()
                ),
            ]
        );
        let two = |n: &str| json!({"apiVersion": "v1", "kind": "ConfigMap", "name": n, "uid": n, "controller": true});
        let got = problems(json!({"ownerReferences": [two("a"), two("b")]}), true);
        assert!(got[0].1.ends_with("Only one reference can have Controller set to true. Found \"true\" in references for a and b"));
    }
}
