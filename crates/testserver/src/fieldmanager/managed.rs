//! `metadata.managedFields`: decoding the entries an object carries into per-manager field
//! sets, and writing them back in the API server's order.

use serde_json::{json, Value};

use super::path::{decode, encode, FieldSet};

/// `Apply` or `Update`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Operation {
    Apply,
    Update,
}

impl Operation {
    fn as_str(self) -> &'static str {
        match self {
            Operation::Apply => "Apply",
            Operation::Update => "Update",
        }
    }
}

/// One manager's entry.
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    pub manager: String,
    pub operation: Operation,
    pub api_version: String,
    pub time: Option<String>,
    pub fields: FieldSet,
}

impl Entry {
    /// Whether this entry is the one `manager` writes with `op` at `api_version`: appliers have
    /// one entry whatever the version, updaters one per version (as `BuildManagerIdentifier`).
    pub(crate) fn is(&self, manager: &str, op: Operation, api_version: &str) -> bool {
        self.manager == manager
            && self.operation == op
            && (op == Operation::Apply || self.api_version == api_version)
    }

    /// How conflict messages name the manager.
    pub(crate) fn describe(&self) -> String {
        match self.operation {
            Operation::Apply => format!("{:?}", self.manager),
            Operation::Update => format!("{:?} using {}", self.manager, self.api_version),
        }
    }
}

/// Whether a written `managedFields` asks to strip them: a list holding one empty entry, or
/// an empty list on a built-in type. (kube-apiserver 1.20 reads an empty list of a custom
/// resource as no list at all, and keeps the live entries then.)
pub(crate) fn is_reset(v: Option<&Value>, builtin: bool) -> bool {
    match v.and_then(Value::as_array).map(Vec::as_slice) {
        Some([]) => builtin,
        Some([only]) => only.as_object().is_some_and(|m| m.is_empty()),
        _ => false,
    }
}

/// The entries of a `managedFields` value; `None` if absent or not decodable.
pub(crate) fn decode_entries(v: Option<&Value>) -> Option<Vec<Entry>> {
    v?.as_array()?
        .iter()
        .map(|e| {
            let operation = match e["operation"].as_str()? {
                "Apply" => Operation::Apply,
                "Update" => Operation::Update,
                _ => return None,
            };
            if e["fieldsType"].as_str()? != "FieldsV1" {
                return None;
            }
            Some(Entry {
                manager: e["manager"].as_str().unwrap_or_default().to_string(),
                operation,
                api_version: e["apiVersion"].as_str().unwrap_or_default().to_string(),
                time: e["time"].as_str().map(str::to_string),
                fields: decode(&e["fieldsV1"])?,
            })
        })
        .collect()
}

/// The `managedFields` value, sorted as the API server sorts it (operation, time, manager,
/// apiVersion); entries owning nothing are left out.
pub(crate) fn encode_entries(mut entries: Vec<Entry>) -> Value {
    entries.retain(|e| !e.fields.is_empty());
    entries.sort_by(|a, b| {
        (a.operation, &a.time, &a.manager, &a.api_version).cmp(&(
            b.operation,
            &b.time,
            &b.manager,
            &b.api_version,
        ))
    });
    Value::Array(
        entries
            .into_iter()
            .map(|e| {
                let mut v = json!({"manager": e.manager, "operation": e.operation.as_str(), "apiVersion": e.api_version});
                if let Some(t) = e.time {
                    v["time"] = json!(t);
                }
                v["fieldsType"] = json!("FieldsV1");
                v["fieldsV1"] = encode(&e.fields);
                v
            })
            .collect(),
    )
}
