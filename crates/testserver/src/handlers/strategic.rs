//! A simplified strategic merge patch: a JSON merge patch that also merges lists of objects by
//! their `name` field and understands the `$patch` / `$setElementOrder` / `$retainKeys`
//! directives well enough for what kubectl sends (directives it does not implement are
//! dropped). The real server reads merge keys from each type's schema; this server has none.

use serde_json::{Map, Value};

/// Applies `patch` to `target`.
pub(crate) fn strategic_merge(target: &mut Value, patch: &Value) {
    let Value::Object(p) = patch else {
        *target = patch.clone();
        return;
    };
    if p.get("$patch").and_then(Value::as_str) == Some("replace") {
        *target = Value::Object(strip_directives(p));
        return;
    }
    if !target.is_object() {
        *target = Value::Object(Map::new());
    }
    let t = target.as_object_mut().expect("made an object above");
    for (k, v) in p {
        if k.starts_with('$') {
            continue;
        }
        match v {
            Value::Null => {
                t.remove(k);
            }
            Value::Object(o) if o.get("$patch").and_then(Value::as_str) == Some("delete") => {
                t.remove(k);
            }
            Value::Object(_) => strategic_merge(t.entry(k.clone()).or_insert(Value::Null), v),
            Value::Array(items) if is_named_list(items) => match t.get_mut(k) {
                Some(Value::Array(existing)) if is_named_list(existing) => {
                    merge_named(existing, items)
                }
                _ => {
                    t.insert(
                        k.clone(),
                        Value::Array(items.iter().filter(|i| !is_delete(i)).map(clean).collect()),
                    );
                }
            },
            _ => {
                t.insert(k.clone(), clean(v));
            }
        }
    }
}

fn is_named_list(items: &[Value]) -> bool {
    !items.is_empty()
        && items
            .iter()
            .all(|i| i.get("name").is_some_and(Value::is_string))
}

fn is_delete(item: &Value) -> bool {
    item.get("$patch").and_then(Value::as_str) == Some("delete")
}

fn merge_named(existing: &mut Vec<Value>, items: &[Value]) {
    for item in items {
        let pos = existing
            .iter()
            .position(|e| e.get("name") == item.get("name"));
        match (pos, is_delete(item)) {
            (Some(i), true) => {
                existing.remove(i);
            }
            (Some(i), false) => strategic_merge(&mut existing[i], item),
            (None, false) => existing.push(clean(item)),
            (None, true) => {}
        }
    }
}

fn strip_directives(m: &Map<String, Value>) -> Map<String, Value> {
    m.iter()
        .filter(|(k, _)| !k.starts_with('$'))
        .map(|(k, v)| (k.clone(), clean(v)))
        .collect()
}

fn clean(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(strip_directives(m)),
        Value::Array(a) => Value::Array(a.iter().map(clean).collect()),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn merges_named_lists_and_drops_directives() {
        let mut t = json!({"spec": {"containers": [{"name": "a", "image": "x", "ports": [1]}, {"name": "b", "image": "y"}]},
                           "data": {"k": "v", "gone": "1"}});
        let p = json!({"spec": {"$setElementOrder/containers": [{"name": "a"}, {"name": "b"}],
                                "containers": [{"name": "a", "image": "z"}, {"name": "b", "$patch": "delete"}, {"name": "c", "image": "w"}]},
                       "data": {"gone": null, "new": "2"}});
        strategic_merge(&mut t, &p);
        assert_eq!(
            t,
            json!({"spec": {"containers": [{"name": "a", "image": "z", "ports": [1]}, {"name": "c", "image": "w"}]},
                             "data": {"k": "v", "new": "2"}})
        );
        let mut r = json!({"a": {"x": 1, "y": 2}});
        strategic_merge(&mut r, &json!({"a": {"$patch": "replace", "z": 3}}));
        assert_eq!(r, json!({"a": {"z": 3}}));
    }
}
