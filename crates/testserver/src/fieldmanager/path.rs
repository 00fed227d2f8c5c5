//! Field paths and field sets as structured-merge-diff names them, and their `FieldsV1`
//! encoding (`f:name`, `k:{"name":"a"}`, `v:"x"`, `i:0`, with `.` marking a node that is itself
//! a member of the set).

use std::collections::BTreeSet;
use std::fmt;

use serde_json::{Map, Value};

/// One step of a path. The variant order is the order the API server writes them in.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Elem {
    /// A struct field or map key.
    Field(String),
    /// An associative-list item, by its key fields (canonical JSON object, keys sorted).
    Key(String),
    /// A set item, by its value (JSON).
    Value(String),
    /// A list item by position (lists whose items have no identity).
    Index(usize),
}

/// A path from the object's root.
pub(crate) type Path = Vec<Elem>;

/// A set of paths (leaves, list items and map entries a manager owns).
pub(crate) type FieldSet = BTreeSet<Path>;

impl Elem {
    /// The key of an associative-list item: `fields` as a canonical JSON object.
    pub(crate) fn key(mut fields: Vec<(String, Value)>) -> Elem {
        fields.sort_by(|a, b| a.0.cmp(&b.0));
        let body: Vec<String> = fields
            .iter()
            .map(|(k, v)| format!("{}:{}", Value::String(k.clone()), v))
            .collect();
        Elem::Key(format!("{{{}}}", body.join(",")))
    }

    fn encode(&self) -> String {
        match self {
            Elem::Field(f) => format!("f:{f}"),
            Elem::Key(k) => format!("k:{k}"),
            Elem::Value(v) => format!("v:{v}"),
            Elem::Index(i) => format!("i:{i}"),
        }
    }

    fn decode(s: &str) -> Option<Elem> {
        let (kind, rest) = s.split_once(':')?;
        Some(match kind {
            "f" => Elem::Field(rest.to_string()),
            "k" => {
                let Value::Object(m) = serde_json::from_str(rest).ok()? else {
                    return None;
                };
                Elem::key(m.into_iter().collect())
            }
            "v" => Elem::Value(serde_json::from_str::<Value>(rest).ok()?.to_string()),
            "i" => Elem::Index(rest.parse().ok()?),
            _ => return None,
        })
    }
}

/// A path as conflict messages print it: `.spec.containers[name="a"].image`.
pub(crate) struct Display<'a>(pub &'a [Elem]);

impl fmt::Display for Display<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for e in self.0 {
            match e {
                Elem::Field(name) => write!(f, ".{name}")?,
                Elem::Key(k) => {
                    let m: Map<String, Value> = serde_json::from_str(k).unwrap_or_default();
                    let parts: Vec<String> = m.iter().map(|(k, v)| format!("{k}={v}")).collect();
                    write!(f, "[{}]", parts.join(","))?
                }
                Elem::Value(v) => write!(f, "[={v}]")?,
                Elem::Index(i) => write!(f, "[{i}]")?,
            }
        }
        Ok(())
    }
}

/// Whether `set` holds `path` or anything below it.
pub(crate) fn covers(set: &FieldSet, path: &[Elem]) -> bool {
    set.range(path.to_vec()..)
        .next()
        .is_some_and(|p| p.starts_with(path))
}

/// The `fieldsV1` object of a set.
pub(crate) fn encode(set: &FieldSet) -> Value {
    let paths: Vec<&Path> = set.iter().collect();
    Value::Object(encode_level(&paths, 0))
}

/// `paths` all share their first `depth` elements; they are sorted.
fn encode_level(paths: &[&Path], depth: usize) -> Map<String, Value> {
    let mut out = Map::new();
    let mut i = 0;
    while i < paths.len() {
        let Some(head) = paths[i].get(depth) else {
            i += 1;
            continue;
        };
        let end = i + paths[i..]
            .iter()
            .take_while(|p| p.get(depth) == Some(head))
            .count();
        let group = &paths[i..end];
        let member = group.iter().any(|p| p.len() == depth + 1);
        let mut children = encode_level(group, depth + 1);
        if member && !children.is_empty() {
            let mut with_dot = Map::new();
            with_dot.insert(".".into(), Value::Object(Map::new()));
            with_dot.append(&mut children);
            children = with_dot;
        }
        out.insert(head.encode(), Value::Object(children));
        i = end;
    }
    out
}

/// Parses a `fieldsV1` object; `None` when it is not one.
pub(crate) fn decode(v: &Value) -> Option<FieldSet> {
    let mut set = FieldSet::new();
    decode_into(v.as_object()?, &mut Vec::new(), &mut set)?;
    Some(set)
}

fn decode_into(m: &Map<String, Value>, prefix: &mut Path, set: &mut FieldSet) -> Option<()> {
    for (k, v) in m {
        if k == "." {
            if !prefix.is_empty() {
                set.insert(prefix.clone());
            }
            continue;
        }
        let children = v.as_object()?;
        prefix.push(Elem::decode(k)?);
        if children.is_empty() {
            set.insert(prefix.clone());
        } else {
            decode_into(children, prefix, set)?;
        }
        prefix.pop();
    }
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn f(s: &str) -> Elem {
        Elem::Field(s.into())
    }

    #[test]
    fn encodes_members_with_children_with_a_dot() {
        let key = Elem::key(vec![("name".into(), json!("a"))]);
        let set: FieldSet = [
            vec![f("data"), f("x")],
            vec![f("spec"), f("containers"), key.clone()],
            vec![f("spec"), f("containers"), key.clone(), f("image")],
            vec![f("metadata"), f("finalizers"), Elem::Value("\"f\"".into())],
        ]
        .into_iter()
        .collect();
        let v = encode(&set);
        assert_eq!(
            v,
            json!({"f:data": {"f:x": {}}, "f:metadata": {"f:finalizers": {"v:\"f\"": {}}},
                   "f:spec": {"f:containers": {"k:{\"name\":\"a\"}": {".": {}, "f:image": {}}}}})
        );
        assert_eq!(decode(&v), Some(set));
        assert_eq!(
            Display(&[f("spec"), f("containers"), key, f("image")]).to_string(),
            ".spec.containers[name=\"a\"].image"
        );
        assert_eq!(decode(&json!({"x:bad": {}})), None);
    }

    #[test]
    fn covers_paths_and_their_descendants_only() {
        let set: FieldSet = [vec![f("a"), f("b")]].into_iter().collect();
        assert!(covers(&set, &[f("a")]));
        assert!(covers(&set, &[f("a"), f("b")]));
        assert!(!covers(&set, &[f("a"), f("c")]));
        assert!(!covers(&set, &[f("a"), f("b"), f("c")]));
    }
}
