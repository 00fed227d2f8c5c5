//! A simplified strategic merge patch: a JSON merge patch that also merges lists of objects by
//! a merge key and understands the `$patch` / `$setElementOrder` / `$retainKeys` directives
//! well enough for what kubectl sends (directives it does not implement are dropped). The real
//! server reads merge keys from each type's schema; this server has none, so it knows the
//! built-in types' keys that are not `name` by the list's field name ([`merge_key`]) and
//! merges the other lists whose items all have a `name` by it.

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
            Value::Array(items) if merge_key(k, items).is_some() => match t.get_mut(k) {
                Some(Value::Array(existing)) if merge_key(k, existing).is_some() => {
                    let key = merge_key(k, items).expect("checked in the guard");
                    merge_keyed(existing, items, key)
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

/// The merge key of the list `field` whose items are `items`, when they all carry it: the
/// built-in types' keys other than `name` (`patchMergeKey` in their Go types), else `name`.
fn merge_key(field: &str, items: &[Value]) -> Option<&'static str> {
    let key = match field {
        "ports" if items.iter().any(|i| i.get("containerPort").is_some()) => "containerPort",
        "ports" => "port",
        "volumeMounts" => "mountPath",
        "volumeDevices" => "devicePath",
        "hostAliases" => "ip",
        "topologySpreadConstraints" => "topologyKey",
        "conditions" | "addresses" => "type",
        "ownerReferences" => "uid",
        _ => "name",
    };
    let keyed = !items.is_empty()
        && items
            .iter()
            .all(|i| i.get(key).is_some_and(|v| v.is_string() || v.is_number()));
    keyed.then_some(key)
}

fn is_delete(item: &Value) -> bool {
    item.get("$patch").and_then(Value::as_str) == Some("delete")
}

/// Merges `items` into `existing` by `key`, in the order the real server's `mergeSlice` leaves
/// them: the patch's items in the patch's order and the others in theirs, interleaved where
/// both are in the original list, the patch's first where one is new.
fn merge_keyed(existing: &mut Vec<Value>, items: &[Value], key: &str) {
    let original: Vec<Value> = existing.iter().map(|e| e[key].clone()).collect();
    let mut patched = Vec::new();
    for item in items {
        let pos = existing.iter().position(|e| e.get(key) == item.get(key));
        match (pos, is_delete(item)) {
            (Some(i), true) => {
                existing.remove(i);
            }
            (Some(i), false) => {
                let mut merged = existing.remove(i);
                strategic_merge(&mut merged, item);
                patched.push(merged);
            }
            (None, false) => patched.push(clean(item)),
            (None, true) => {}
        }
    }
    let index = |v: &Value| original.iter().position(|o| *o == v[key]);
    let server_only = std::mem::take(existing);
    let (mut left, mut right) = (
        server_only.into_iter().peekable(),
        patched.into_iter().peekable(),
    );
    loop {
        let take_left = match (left.peek(), right.peek()) {
            (None, None) => break,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (Some(l), Some(r)) => matches!((index(l), index(r)), (Some(li), Some(ri)) if li < ri),
        };
        let next = if take_left { left.next() } else { right.next() };
        existing.extend(next);
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

    #[test]
    fn merges_by_the_types_keys_in_the_servers_order() {
        let mut svc =
            json!({"spec": {"ports": [{"name": "a", "port": 80}, {"name": "b", "port": 90}]}});
        strategic_merge(
            &mut svc,
            &json!({"spec": {"ports": [{"name": "new", "port": 8080}, {"port": 90, "name": "b2"}]}}),
        );
        assert_eq!(
            svc["spec"]["ports"],
            json!([{"name": "new", "port": 8080}, {"name": "a", "port": 80}, {"name": "b2", "port": 90}])
        );
        let mut pod = json!({"volumeMounts": [{"name": "v", "mountPath": "/a"}]});
        strategic_merge(
            &mut pod,
            &json!({"volumeMounts": [{"name": "v", "mountPath": "/b"}]}),
        );
        assert_eq!(pod["volumeMounts"].as_array().unwrap().len(), 2);
    }
}
