//! The options a request carries besides its object (`ListOptions`, `CreateOptions`,
//! `UpdateOptions`, `PatchOptions`, `DeleteOptions`), checked as kube-apiserver's
//! `ValidateXOptions` do: a bad value answers 422 `Invalid` naming the options kind
//! (`CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: ...`).

use kcache_core::StatusCause;

use crate::http::query::{go_quote, Query};
use crate::http::responses::ApiError;

/// The one `dryRun` value the API server accepts.
const DRY_RUN_ALL: &str = "All";

/// 422 for options of `kind` (`ListOptions`, `CreateOptions`, ...).
pub(crate) fn options_invalid(kind: &str, causes: Vec<StatusCause>) -> ApiError {
    ApiError::invalid_kind("meta.k8s.io", kind, "", causes)
}

/// `field.Forbidden`.
pub(crate) fn forbidden(field: &str, detail: &str) -> StatusCause {
    StatusCause {
        type_: "FieldValueForbidden".into(),
        message: format!("Forbidden: {detail}"),
        field: field.into(),
    }
}

/// `field.Required`.
pub(crate) fn required(field: &str, detail: &str) -> StatusCause {
    StatusCause {
        type_: "FieldValueRequired".into(),
        message: format!("Required value: {detail}"),
        field: field.into(),
    }
}

/// `field.NotSupported`; `value` is already printed the way Go prints it.
pub(crate) fn not_supported(field: &str, value: &str, supported: &[&str]) -> StatusCause {
    let supported = supported
        .iter()
        .map(|s| go_quote(s))
        .collect::<Vec<_>>()
        .join(", ");
    StatusCause {
        type_: "FieldValueNotSupported".into(),
        message: format!("Unsupported value: {value}: supported values: {supported}"),
        field: field.into(),
    }
}

/// `dryRun` (of any options kind): absent is a real write, every value `All` a dry run, anything else (the empty
/// value too) is refused with the values printed as Go's `%#v` prints a `[]string`.
pub(crate) fn dry_run(values: Option<&[String]>) -> Result<bool, StatusCause> {
    match values {
        None => Ok(false),
        Some(vs) if vs.iter().all(|v| v == DRY_RUN_ALL) => Ok(!vs.is_empty()),
        Some(vs) => {
            let printed = vs.iter().map(|v| go_quote(v)).collect::<Vec<_>>();
            Err(not_supported(
                "dryRun",
                &format!("[]string{{{}}}", printed.join(", ")),
                &[DRY_RUN_ALL],
            ))
        }
    }
}

/// The longest `fieldManager` the API server takes.
const FIELD_MANAGER_MAX: usize = 128;

/// `ValidateFieldManager`: at most 128 bytes, printable characters only.
fn field_manager(q: &Query, causes: &mut Vec<StatusCause>) {
    let Some(m) = q.get("fieldManager") else {
        return;
    };
    if m.len() > FIELD_MANAGER_MAX {
        causes.push(StatusCause {
            type_: "FieldValueTooLong".into(),
            message: format!("Too long: must have at most {FIELD_MANAGER_MAX} bytes"),
            field: "fieldManager".into(),
        });
    }
    for (i, c) in m.char_indices() {
        if c.is_control() || (c.is_whitespace() && c != ' ') {
            causes.push(StatusCause {
                type_: "FieldValueInvalid".into(),
                message: format!(
                    "Invalid value: {}: invalid character U+{:04X} (at position {i})",
                    go_quote(m),
                    c as u32
                ),
                field: "fieldManager".into(),
            });
        }
    }
}

/// The 422 for `causes`, or whether the request is a dry run.
fn checked(kind: &str, mut causes: Vec<StatusCause>, q: &Query) -> Result<bool, ApiError> {
    let dry = dry_run(q.all("dryRun")).map_err(|c| causes.push(c));
    match dry {
        Ok(dry) if causes.is_empty() => Ok(dry),
        _ => Err(options_invalid(kind, causes)),
    }
}

/// `CreateOptions` or `UpdateOptions` (`kind`) from the query: whether the write is a dry run.
pub(crate) fn write_options(kind: &str, q: &Query) -> Result<bool, ApiError> {
    let mut causes = Vec::new();
    field_manager(q, &mut causes);
    checked(kind, causes, q)
}

/// `PatchOptions` from the query: `force` only for apply, `fieldManager` required for apply,
/// `dryRun`. Returns whether the patch is a dry run.
pub(crate) fn patch_options(q: &Query, apply: bool) -> Result<bool, ApiError> {
    let mut causes = Vec::new();
    if !apply && q.opt_flag("force").is_some() {
        causes.push(forbidden(
            "force",
            "may not be specified for non-apply patch",
        ));
    }
    if apply && q.get("fieldManager").is_none() {
        causes.push(required("fieldManager", "is required for apply patch"));
    }
    field_manager(q, &mut causes);
    checked("PatchOptions", causes, q)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(s: &str) -> Query {
        Query::parse(Some(s))
    }

    #[test]
    fn dry_run_accepts_only_all() {
        assert!(!write_options("CreateOptions", &q("")).unwrap());
        assert!(write_options("CreateOptions", &q("dryRun=All")).unwrap());
        assert!(write_options("CreateOptions", &q("dryRun=All&dryRun=All")).unwrap());
        let e = write_options("CreateOptions", &q("dryRun=all&dryRun=All")).unwrap_err();
        assert_eq!(e.status.code, 422);
        assert_eq!(
            e.status.message,
            "CreateOptions.meta.k8s.io \"\" is invalid: dryRun: Unsupported value: []string{\"all\", \"All\"}: supported values: \"All\""
        );
        let d = e.status.details.unwrap();
        assert_eq!(
            (d.group.as_str(), d.kind.as_str()),
            ("meta.k8s.io", "CreateOptions")
        );
        assert_eq!(d.causes[0].type_, "FieldValueNotSupported");
        assert!(write_options("UpdateOptions", &q("dryRun=")).is_err());
    }

    #[test]
    fn field_managers_are_short_and_printable() {
        assert!(!write_options("CreateOptions", &q("fieldManager=kubectl-edit")).unwrap());
        let long = "m".repeat(129);
        let e = write_options("CreateOptions", &q(&format!("fieldManager={long}"))).unwrap_err();
        assert_eq!(
            e.status.message,
            "CreateOptions.meta.k8s.io \"\" is invalid: fieldManager: Too long: must have at most 128 bytes"
        );
        let e = write_options("UpdateOptions", &q("fieldManager=a%07")).unwrap_err();
        assert_eq!(
            e.status.message,
            "UpdateOptions.meta.k8s.io \"\" is invalid: fieldManager: Invalid value: \"a\\a\": invalid character U+0007 (at position 1)"
        );
    }

    #[test]
    fn patch_options_check_force_and_field_manager() {
        assert!(!patch_options(&q(""), false).unwrap());
        assert!(patch_options(&q("fieldManager=m&force=true&dryRun=All"), true).unwrap());
        let e = patch_options(&q("force=false&dryRun=x"), false).unwrap_err();
        assert_eq!(
            e.status.message,
            "PatchOptions.meta.k8s.io \"\" is invalid: [force: Forbidden: may not be specified for non-apply patch, dryRun: Unsupported value: []string{\"x\"}: supported values: \"All\"]"
        );
        let e = patch_options(&q(""), true).unwrap_err();
        assert_eq!(
            e.status.message,
            "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply patch"
        );
    }
}
