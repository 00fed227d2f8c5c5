//! The rule every built-in defaulter here follows, as Go's `SetDefaults_*` functions do: a
//! field is filled only when it is unset (absent or `null`). A `null` default stands for "no
//! default" (a field the version requires), and leaves the field alone.

use serde_json::{Map, Value};

/// Sets `obj.<field>` to `value` when it is unset and `value` is not `null`.
pub(crate) fn set_default(obj: &mut Map<String, Value>, field: &str, value: Value) {
    if !value.is_null() && obj.get(field).is_none_or(Value::is_null) {
        obj.insert(field.into(), value);
    }
}
