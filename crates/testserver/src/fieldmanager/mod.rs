//! Field ownership, as kube-apiserver's field manager and structured-merge-diff keep it in
//! `metadata.managedFields`.
//!
//! Every create, update and patch records an `Update` entry for its manager (the
//! `fieldManager` parameter, else the user agent's product name, else `unknown`) owning what
//! the write added or changed; it takes those fields from every other manager, and a removed
//! field leaves every manager. A server-side apply records an `Apply` entry owning exactly the
//! fields of the applied configuration, merges it into the live object, removes the fields the
//! manager applied last time and no longer applies when no other manager owns them, and
//! answers 409 with one cause per field when it would change a field another manager owns
//! (unless `force=true`, which takes those fields over). `/scale` writes record nothing, as
//! in 1.20.
//!
//! Where the real server differs: it runs defaulting before the field manager, so its
//! entries also own defaulted fields; this server has no defaulting. It caps `Update`
//! managers at ten (merging older ones into `ancient-changes`); this server does not.

mod managed;
mod path;
mod shape;
mod walk;

use kcache_core::{Status, StatusCause, StatusDetails};
use serde_json::{json, Value};

use crate::handlers::meta::now_rfc3339;
use crate::http::responses::ApiError;
use crate::resources::ResourceInfo;
use managed::{decode_entries, encode_entries, is_reset, Entry, Operation};
use path::{Display, Elem, FieldSet};
use shape::Shape;
use walk::{check_applied, compare, field_set, merge, remove_unowned};

/// Longest manager name the API server keeps from a user agent.
const MAX_MANAGER_LEN: usize = 128;

/// The manager a write is recorded for: `fieldManager`, else the user agent up to its first
/// `/` (printable characters, at most 128 bytes), else `unknown`.
pub(crate) fn manager_name(field_manager: Option<&str>, user_agent: Option<&str>) -> String {
    if let Some(m) = field_manager.filter(|m| !m.is_empty()) {
        return m.to_string();
    }
    let product = user_agent
        .unwrap_or_default()
        .split('/')
        .next()
        .unwrap_or_default();
    let mut name = String::new();
    for c in product.chars().filter(|c| !c.is_control()) {
        if name.len() + c.len_utf8() > MAX_MANAGER_LEN {
            break;
        }
        name.push(c);
    }
    if name.is_empty() {
        "unknown".into()
    } else {
        name
    }
}

/// Fields no manager ever owns: identity and server-managed metadata.
fn strip(mut set: FieldSet) -> FieldSet {
    let f = |s: &str| Elem::Field(s.into());
    set.remove(&vec![f("apiVersion")]);
    set.remove(&vec![f("kind")]);
    set.remove(&vec![f("metadata")]);
    for m in [
        "name",
        "namespace",
        "creationTimestamp",
        "selfLink",
        "uid",
        "clusterName",
        "generation",
        "managedFields",
        "resourceVersion",
    ] {
        set.remove(&vec![f("metadata"), f(m)]);
    }
    set
}

fn shape(res: &ResourceInfo) -> Shape<'static> {
    Shape::root(!res.builtin)
}

/// Removes and returns `metadata.managedFields`.
fn take_managed(obj: &mut Value) -> Option<Value> {
    obj.get_mut("metadata")?
        .as_object_mut()?
        .remove("managedFields")
}

fn put_managed(obj: &mut Value, entries: Vec<Entry>) {
    let encoded = encode_entries(entries);
    if let Some(m) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
        if encoded.as_array().is_some_and(|a| !a.is_empty()) {
            m.insert("managedFields".into(), encoded);
        } else {
            m.remove("managedFields");
        }
    }
}

/// Records an update by `manager` that turns `live` (`None` for a create) into `new`, in
/// `new`'s `managedFields`. Entries the request carries replace the live ones (a client may
/// edit them); a list holding one empty entry (or, on built-in types, an empty list) strips
/// them, this write's included; otherwise (absent or undecodable) the live ones stay. Updates
/// of an object without entries record none, as 1.20 does; creates always do.
pub(crate) fn record_update(
    res: &ResourceInfo,
    live: Option<&Value>,
    new: &mut Value,
    manager: &str,
) {
    record(&res.api.api_version(), res.builtin, live, new, manager);
}

/// Records the creator of a built-in request object that is answered rather than stored
/// (TokenRequest, TokenReview): the API server runs its field manager on those too.
pub(crate) fn record_request(api_version: &str, obj: &mut Value, manager: &str) {
    record(api_version, true, None, obj, manager);
}

fn record(api_version: &str, builtin: bool, live: Option<&Value>, new: &mut Value, manager: &str) {
    let incoming = take_managed(new);
    if is_reset(incoming.as_ref(), builtin) {
        return;
    }
    let creating = live.is_none();
    let mut live = live.cloned().unwrap_or_else(|| json!({}));
    let live_entries = decode_entries(take_managed(&mut live).as_ref());
    let mut entries = decode_entries(incoming.as_ref())
        .filter(|e| !e.is_empty())
        .or(live_entries)
        .unwrap_or_default();
    if entries.is_empty() && !creating {
        // An object whose fields nobody owns stays so until an apply (`skipNonAppliedManager`).
        return;
    }
    let c = compare(&live, new, Shape::root(!builtin));
    let changed = strip(c.changed());
    for e in &mut entries {
        e.fields
            .retain(|p| !changed.contains(p) && !c.removed.contains(p));
    }
    let mine: FieldSet = changed.difference(&c.removed).cloned().collect();
    if !mine.is_empty() {
        let api_version = api_version.to_string();
        let now = Some(now_rfc3339());
        match entries
            .iter_mut()
            .find(|e| e.is(manager, Operation::Update, &api_version))
        {
            Some(e) => {
                e.fields.extend(mine);
                e.time = now;
            }
            None => entries.push(Entry {
                manager: manager.to_string(),
                operation: Operation::Update,
                api_version,
                time: now,
                fields: mine,
            }),
        }
    }
    put_managed(new, entries);
}

fn bad_apply(msg: String) -> ApiError {
    ApiError::bad_request(msg)
}

/// A server-side apply of `applied` by `manager` to `live` (`None`: the object does not exist
/// yet): the merged object with its `managedFields`, or the 409 listing the conflicts.
pub(crate) fn apply(
    res: &ResourceInfo,
    live: Option<&Value>,
    applied: &Value,
    manager: &str,
    force: bool,
) -> Result<Value, ApiError> {
    if !applied["metadata"]["managedFields"].is_null() {
        return Err(bad_apply("metadata.managedFields must be nil".into()));
    }
    let api_version = res.api.api_version();
    let given = applied["apiVersion"].as_str().unwrap_or_default();
    if given != api_version {
        return Err(bad_apply(format!(
            "Incorrect version specified in apply patch. Specified patch version: {given}, expected: {api_version}"
        )));
    }
    let shape = shape(res);
    check_applied(applied, shape, &mut Vec::new()).map_err(|e| {
        ApiError::from(Status::failure(
            500,
            "",
            format!("failed to create typed patch object: {e}"),
        ))
    })?;
    let existed = live.is_some();
    let mut live = live.cloned().unwrap_or_else(|| json!({}));
    let mut entries = decode_entries(take_managed(&mut live).as_ref()).unwrap_or_default();
    if existed && entries.is_empty() {
        // Everything already there belongs to one manager, as if it had created the object.
        entries.push(Entry {
            manager: "before-first-apply".into(),
            operation: Operation::Update,
            api_version: api_version.clone(),
            time: None,
            fields: strip(compare(&json!({}), &live, shape).changed()),
        });
    }
    let mut merged = live.clone();
    merge(&mut merged, applied, shape);
    let applied_set = strip(field_set(applied, shape));
    let (mine, last) = match entries
        .iter()
        .position(|e| e.is(manager, Operation::Apply, ""))
    {
        Some(i) => {
            let last = std::mem::replace(&mut entries[i].fields, applied_set);
            entries[i].api_version = api_version.clone();
            (i, last)
        }
        None => {
            entries.push(Entry {
                manager: manager.to_string(),
                operation: Operation::Apply,
                api_version: api_version.clone(),
                time: None,
                fields: applied_set,
            });
            (entries.len() - 1, FieldSet::new())
        }
    };
    let dropped: FieldSet = last.difference(&entries[mine].fields).cloned().collect();
    if !dropped.is_empty() {
        let owned: FieldSet = entries
            .iter()
            .flat_map(|e| e.fields.iter().cloned())
            .collect();
        remove_unowned(&mut merged, &dropped, &owned, shape);
    }
    let c = compare(&live, &merged, shape);
    let changed = c.changed();
    let mut conflicts: Vec<(String, String)> = Vec::new();
    for (_, e) in entries.iter().enumerate().filter(|(i, _)| *i != mine) {
        conflicts.extend(
            e.fields
                .intersection(&changed)
                .map(|p| (e.describe(), Display(p).to_string())),
        );
    }
    if !force && !conflicts.is_empty() {
        conflicts.sort();
        return Err(conflict_error(&conflicts));
    }
    for (i, e) in entries.iter_mut().enumerate() {
        if i != mine {
            e.fields
                .retain(|p| !changed.contains(p) && !c.removed.contains(p));
        }
    }
    if !c.is_same() || entries[mine].time.is_none() {
        entries[mine].time = Some(now_rfc3339());
    }
    put_managed(&mut merged, entries);
    Ok(merged)
}

/// The API server's 409 for an apply that would change other managers' fields.
fn conflict_error(conflicts: &[(String, String)]) -> ApiError {
    let message = match conflicts {
        [(who, path)] => format!("Apply failed with 1 conflict: conflict with {who}: {path}"),
        _ => {
            let mut lines = Vec::new();
            let mut last: Option<&str> = None;
            for (who, path) in conflicts {
                if last != Some(who.as_str()) {
                    lines.push(format!("conflicts with {who}:"));
                    last = Some(who);
                }
                lines.push(format!("- {path}"));
            }
            format!(
                "Apply failed with {} conflicts: {}",
                conflicts.len(),
                lines.join("\n")
            )
        }
    };
    let mut s = Status::failure(409, "Conflict", message);
    s.details = Some(StatusDetails {
        causes: conflicts
            .iter()
            .map(|(who, path)| StatusCause {
                type_: "FieldManagerConflict".into(),
                message: format!("conflict with {who}"),
                field: path.clone(),
            })
            .collect(),
        ..StatusDetails::default()
    });
    s.into()
}

#[cfg(test)]
mod tests;
