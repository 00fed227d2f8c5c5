//! The field errors the schema checks report, worded as apimachinery's `field.Error`s are
//! (`Invalid value: 0: ...`, `Required value`, `Unsupported value: ...`, `Duplicate value: ...`).

use kcache_core::StatusCause;
use serde_json::Value;

use super::go_value;
use crate::http::query::go_quote;

/// `field.Invalid(field, value, detail)`, the value already printed.
pub(crate) fn invalid(field: &str, value: &str, detail: &str) -> StatusCause {
    StatusCause {
        type_: "FieldValueInvalid".into(),
        message: format!("Invalid value: {value}: {detail}"),
        field: field.into(),
    }
}

/// `field.Required(field, detail)`.
pub(crate) fn required(field: &str, detail: &str) -> StatusCause {
    let message = if detail.is_empty() {
        "Required value".to_string()
    } else {
        format!("Required value: {detail}")
    };
    StatusCause {
        type_: "FieldValueRequired".into(),
        message,
        field: field.into(),
    }
}

/// `field.TooLong(field, value, max)` as the real server prints it for a map (no value).
pub(crate) fn too_long(field: &str, max: usize) -> StatusCause {
    StatusCause {
        type_: "FieldValueTooLong".into(),
        message: format!("Too long: must have at most {max} bytes"),
        field: field.into(),
    }
}

/// `field.Forbidden(field, detail)`.
pub(crate) fn forbidden(field: &str, detail: &str) -> StatusCause {
    StatusCause {
        type_: "FieldValueForbidden".into(),
        message: format!("Forbidden: {detail}"),
        field: field.into(),
    }
}

/// `field.NotSupported(field, value, allowed)`: strings listed as they are, other allowed
/// values as JSON, each quoted.
pub(super) fn not_supported(field: &str, value: &Value, allowed: &[Value]) -> StatusCause {
    let list = allowed
        .iter()
        .map(|a| match a {
            Value::String(s) => go_quote(s),
            other => go_quote(&other.to_string()),
        })
        .collect::<Vec<_>>()
        .join(", ");
    StatusCause {
        type_: "FieldValueNotSupported".into(),
        message: format!(
            "Unsupported value: {}: supported values: {list}",
            go_value::bad_value(value)
        ),
        field: field.into(),
    }
}

/// `field.Duplicate(field, value)`, the value already printed.
pub(super) fn duplicate(field: &str, value: &str) -> StatusCause {
    StatusCause {
        type_: "FieldValueDuplicate".into(),
        message: format!("Duplicate value: {value}"),
        field: field.into(),
    }
}

/// `path.key`, or `key` at the root.
pub(super) fn child(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}
