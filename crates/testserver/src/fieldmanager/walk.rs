//! The structured walks over JSON objects that field ownership needs: the set of fields an
//! object sets, the comparison of two objects, the merge of an applied configuration into the
//! live object, and the removal of fields nobody owns any more.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use super::path::{covers, Display, Elem, FieldSet, Path};
use super::shape::{ListKind, ObjectKind, Shape};

/// Each item's path element, when the list is not atomic and every item has a distinct one.
fn item_elems(shape: &Shape<'_>, items: &[Value]) -> Option<Vec<Elem>> {
    let elems: Vec<Elem> = match shape.list_kind() {
        ListKind::Atomic => return None,
        ListKind::Set => items
            .iter()
            .map(|i| (!i.is_object() && !i.is_array()).then(|| Elem::Value(i.to_string())))
            .collect::<Option<_>>()?,
        ListKind::Map(keys) => items
            .iter()
            .map(|i| {
                let fields: Vec<(String, Value)> = keys
                    .iter()
                    .filter_map(|k| {
                        i.get(*k)
                            .filter(|v| !v.is_null())
                            .cloned()
                            .or_else(|| shape.key_default(k))
                            .map(|v| (k.to_string(), v))
                    })
                    .collect();
                (!fields.is_empty()).then(|| Elem::key(fields))
            })
            .collect::<Option<_>>()?,
    };
    let distinct: BTreeSet<&Elem> = elems.iter().collect();
    (distinct.len() == elems.len()).then_some(elems)
}

/// Checks an applied configuration as structured-merge-diff types it: every item of a list
/// keyed by fields has them all, and no two items share a key. The message is the API
/// server's.
pub(crate) fn check_applied(v: &Value, shape: Shape<'_>, path: &mut Path) -> Result<(), String> {
    match v {
        Value::Object(m) if shape.object_kind(v) != ObjectKind::Atomic => {
            for (k, child) in m {
                path.push(Elem::Field(k.clone()));
                check_applied(child, shape.field(k), path)?;
                path.pop();
            }
        }
        Value::Array(items) => {
            if let ListKind::Map(keys) = shape.list_kind() {
                let mut seen = BTreeSet::new();
                for (i, item) in items.iter().enumerate() {
                    let value = |k: &str| {
                        item.get(k)
                            .filter(|v| !v.is_null())
                            .cloned()
                            .or_else(|| shape.key_default(k))
                    };
                    if let Some(k) = keys.iter().find(|k| value(k).is_none()) {
                        return Err(format!(
                            "{}: element {i}: associative list with keys has an element that omits key field {k:?} (and doesn't have default value)",
                            Display(path)
                        ));
                    }
                    let e = Elem::key(
                        keys.iter()
                            .filter_map(|k| Some((k.to_string(), value(k)?)))
                            .collect(),
                    );
                    if !seen.insert(e.clone()) {
                        return Err(format!(
                            "{}: duplicate entries for key {}",
                            Display(path),
                            Display(&[e])
                        ));
                    }
                    path.push(e);
                    check_applied(item, shape, path)?;
                    path.pop();
                }
            }
        }
        _ => {}
    }
    Ok(())
}

/// The fields `v` sets, as structured-merge-diff's `ToFieldSet`: leaves, list items, map
/// entries, and struct fields that are null or empty objects.
pub(crate) fn field_set(v: &Value, shape: Shape<'_>) -> FieldSet {
    let mut out = FieldSet::new();
    collect(v, shape, &mut Vec::new(), &mut out);
    out
}

fn collect(v: &Value, shape: Shape<'_>, path: &mut Path, out: &mut FieldSet) {
    match v {
        Value::Object(m) => {
            let kind = shape.object_kind(v);
            if kind == ObjectKind::Atomic {
                out.insert(path.clone());
                return;
            }
            for (k, child) in m {
                path.push(Elem::Field(k.clone()));
                let empty = child.is_null() || child.as_object().is_some_and(Map::is_empty);
                if empty || kind == ObjectKind::Map {
                    out.insert(path.clone());
                }
                collect(child, shape.field(k), path, out);
                path.pop();
            }
        }
        Value::Array(items) => match item_elems(&shape, items) {
            None => {
                out.insert(path.clone());
            }
            Some(elems) => {
                for (item, e) in items.iter().zip(elems) {
                    path.push(e);
                    out.insert(path.clone());
                    collect(item, shape, path, out);
                    path.pop();
                }
            }
        },
        _ => {
            if !path.is_empty() {
                out.insert(path.clone());
            }
        }
    }
}

/// What changed between two objects, as structured-merge-diff's `Compare`.
#[derive(Debug, Default)]
pub(crate) struct Comparison {
    pub added: FieldSet,
    pub modified: FieldSet,
    pub removed: FieldSet,
}

impl Comparison {
    /// Whether nothing changed.
    pub(crate) fn is_same(&self) -> bool {
        self.added.is_empty() && self.modified.is_empty() && self.removed.is_empty()
    }

    /// Added or modified paths.
    pub(crate) fn changed(&self) -> FieldSet {
        self.added.union(&self.modified).cloned().collect()
    }
}

/// Compares `old` with `new`.
pub(crate) fn compare(old: &Value, new: &Value, shape: Shape<'_>) -> Comparison {
    let mut c = Comparison::default();
    diff(Some(old), Some(new), shape, &mut Vec::new(), &mut c);
    c
}

fn diff(
    old: Option<&Value>,
    new: Option<&Value>,
    shape: Shape<'_>,
    path: &mut Path,
    c: &mut Comparison,
) {
    let (side, present) = match (old, new) {
        (None, None) => return,
        (None, Some(n)) => (&mut c.added, n),
        (Some(o), None) => (&mut c.removed, o),
        (Some(o), Some(n)) => return diff_both(o, n, shape, path, c),
    };
    subtree(present, shape, path, true, side);
}

/// Every node of a subtree that appears (or disappears): leaves, list items, lists and maps,
/// and structs — except the struct fields a built-in type's Go zero value already has
/// (`spec`, `template`, …) and its lists that are `null` there (`containers`), which appear
/// only through what they hold. Inside a list item
/// nothing exists in the zero value.
fn subtree(v: &Value, shape: Shape<'_>, path: &mut Path, in_zero: bool, out: &mut FieldSet) {
    let zero_struct = in_zero
        && matches!(path.last(), Some(Elem::Field(_)))
        && v.as_object().is_some_and(|m| !m.is_empty())
        && shape.object_kind(v) == ObjectKind::Struct
        && shape.zero_value_struct();
    let zero_list = in_zero
        && matches!(path.last(), Some(Elem::Field(_)))
        && v.is_array()
        && shape.zero_value_list();
    if !zero_struct && !zero_list && !path.is_empty() {
        out.insert(path.clone());
    }
    match v {
        Value::Object(m) if shape.object_kind(v) != ObjectKind::Atomic => {
            for (k, child) in m {
                path.push(Elem::Field(k.clone()));
                subtree(child, shape.field(k), path, zero_struct, out);
                path.pop();
            }
        }
        Value::Array(items) => {
            if let Some(elems) = item_elems(&shape, items) {
                for (item, e) in items.iter().zip(elems) {
                    path.push(e);
                    subtree(item, shape, path, false, out);
                    path.pop();
                }
            }
        }
        _ => {}
    }
}

fn diff_both(o: &Value, n: &Value, shape: Shape<'_>, path: &mut Path, c: &mut Comparison) {
    match (o, n) {
        (Value::Object(om), Value::Object(nm))
            if !(om.is_empty() && nm.is_empty())
                && shape.object_kind(o) != ObjectKind::Atomic
                && shape.object_kind(n) != ObjectKind::Atomic =>
        {
            let keys: BTreeSet<&String> = om.keys().chain(nm.keys()).collect();
            for k in keys {
                path.push(Elem::Field(k.clone()));
                diff(om.get(k), nm.get(k), shape.field(k), path, c);
                path.pop();
            }
        }
        (Value::Array(oa), Value::Array(na)) if !(oa.is_empty() && na.is_empty()) => {
            match (item_elems(&shape, oa), item_elems(&shape, na)) {
                (Some(oe), Some(ne)) => {
                    let keys: BTreeSet<&Elem> = oe.iter().chain(ne.iter()).collect();
                    for e in keys {
                        let find = |elems: &[Elem], items: &[Value]| {
                            elems.iter().position(|x| x == e).map(|i| items[i].clone())
                        };
                        let (oi, ni) = (find(&oe, oa), find(&ne, na));
                        path.push(e.clone());
                        diff(oi.as_ref(), ni.as_ref(), shape, path, c);
                        path.pop();
                    }
                }
                _ if o != n => {
                    c.modified.insert(path.clone());
                }
                _ => {}
            }
        }
        _ if o != n => {
            c.modified.insert(path.clone());
        }
        _ => {}
    }
}

/// Merges an applied configuration into the live object: struct fields and map entries merge
/// recursively, associative lists merge by key (live order first, new items after), atomic
/// values are replaced; a null in the configuration removes the field.
pub(crate) fn merge(live: &mut Value, applied: &Value, shape: Shape<'_>) {
    match (&mut *live, applied) {
        (Value::Object(lm), Value::Object(am))
            if shape.object_kind(applied) != ObjectKind::Atomic =>
        {
            for (k, av) in am {
                match (lm.get_mut(k), av) {
                    (_, Value::Null) => {
                        lm.remove(k);
                    }
                    (Some(lv), _) => merge(lv, av, shape.field(k)),
                    (None, _) => {
                        lm.insert(k.clone(), av.clone());
                    }
                }
            }
        }
        (Value::Array(la), Value::Array(aa)) => {
            match (item_elems(&shape, la), item_elems(&shape, aa)) {
                (Some(le), Some(ae)) => {
                    for (item, e) in aa.iter().zip(&ae) {
                        match le.iter().position(|x| x == e) {
                            Some(i) => merge(&mut la[i], item, shape),
                            None => la.push(item.clone()),
                        }
                    }
                }
                _ => *live = applied.clone(),
            }
        }
        _ => *live = applied.clone(),
    }
}

/// Removes from `v` each path of `drop` that `keep` neither holds nor holds anything below.
pub(crate) fn remove_unowned(v: &mut Value, drop: &FieldSet, keep: &FieldSet, shape: Shape<'_>) {
    let doomed: Vec<&Path> = drop.iter().filter(|p| !covers(keep, p)).collect();
    for p in doomed {
        remove_at(v, p, shape);
    }
}

fn remove_at(v: &mut Value, path: &[Elem], shape: Shape<'_>) {
    let Some((head, rest)) = path.split_first() else {
        return;
    };
    match (v, head) {
        (Value::Object(m), Elem::Field(k)) => {
            if rest.is_empty() {
                m.remove(k);
            } else if let Some(child) = m.get_mut(k) {
                remove_at(child, rest, shape.field(k));
            }
        }
        (Value::Array(items), e) => {
            let Some(elems) = item_elems(&shape, items) else {
                return;
            };
            let Some(i) = elems.iter().position(|x| x == e) else {
                return;
            };
            if rest.is_empty() {
                items.remove(i);
            } else {
                remove_at(&mut items[i], rest, shape);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fieldmanager::path::encode;
    use serde_json::json;

    #[test]
    fn field_sets_follow_the_type() {
        let deploy = json!({"spec": {"replicas": 1, "selector": {"matchLabels": {"a": "b"}},
            "template": {"spec": {"containers": [{"name": "c", "image": "i", "ports": [{"containerPort": 80}]}]}}},
            "metadata": {"labels": {"a": "b"}, "finalizers": ["x"]}});
        assert_eq!(
            encode(&field_set(&deploy, Shape::root(false))),
            json!({"f:metadata": {"f:finalizers": {"v:\"x\"": {}}, "f:labels": {"f:a": {}}},
                   "f:spec": {"f:replicas": {}, "f:selector": {},
                     "f:template": {"f:spec": {"f:containers": {"k:{\"name\":\"c\"}": {".": {}, "f:image": {}, "f:name": {},
                       "f:ports": {"k:{\"containerPort\":80,\"protocol\":\"TCP\"}": {".": {}, "f:containerPort": {}}}}}}}}})
        );
        let cr = json!({"spec": {"x": {"y": 1}, "list": [1, 2]}});
        assert_eq!(
            encode(&field_set(&cr, Shape::root(true))),
            json!({"f:spec": {".": {}, "f:list": {}, "f:x": {".": {}, "f:y": {}}}})
        );
    }

    #[test]
    fn compare_and_merge_by_key() {
        let s = Shape::root(false);
        let old = json!({"spec": {"containers": [{"name": "a", "image": "1"}, {"name": "b", "image": "2"}]}});
        let mut new = old.clone();
        merge(
            &mut new,
            &json!({"spec": {"containers": [{"name": "b", "image": "3"}, {"name": "c", "image": "4"}]}}),
            s,
        );
        assert_eq!(
            new,
            json!({"spec": {"containers": [{"name": "a", "image": "1"}, {"name": "b", "image": "3"}, {"name": "c", "image": "4"}]}})
        );
        let c = compare(&old, &new, s);
        let k = |n: &str| Elem::key(vec![("name".into(), json!(n))]);
        let f = |n: &str| Elem::Field(n.into());
        let containers = vec![f("spec"), f("containers")];
        assert_eq!(
            c.modified,
            [[containers.clone(), vec![k("b"), f("image")]].concat()]
                .into_iter()
                .collect()
        );
        assert!(c
            .added
            .contains(&[containers.clone(), vec![k("c")]].concat()));
        assert!(c.removed.is_empty());
        let drop: FieldSet = [[containers.clone(), vec![k("a")]].concat()]
            .into_iter()
            .collect();
        remove_unowned(&mut new, &drop, &FieldSet::new(), s);
        assert_eq!(new["spec"]["containers"].as_array().unwrap().len(), 2);
    }
}
