//! Label key and value syntax (apimachinery's `validation.IsQualifiedName`, `IsValidLabelValue`).

/// Checks a label key: an optional DNS subdomain prefix (≤ 253) and `/`, then a name (≤ 63)
/// of alphanumerics, `-`, `_`, `.`, starting and ending alphanumeric.
pub(crate) fn check_key(key: &str) -> Result<(), String> {
    let (prefix, name) = match key.split_once('/') {
        Some((p, n)) => (Some(p), n),
        None => (None, key),
    };
    if let Some(p) = prefix {
        if p.is_empty() || p.len() > 253 {
            return Err(format!(
                "key {key:?}: prefix must be a DNS subdomain of 1 to 253 characters"
            ));
        }
        let ok = p.split('.').all(|l| {
            !l.is_empty()
                && l.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
                && !l.starts_with('-')
                && !l.ends_with('-')
        });
        if !ok {
            return Err(format!(
                "key {key:?}: prefix must be a lowercase DNS subdomain"
            ));
        }
    }
    if name.is_empty() {
        return Err(format!("key {key:?}: name part must not be empty"));
    }
    check_name(name).map_err(|m| format!("key {key:?}: name part {m}"))
}

/// Checks a label value: empty, or ≤ 63 characters in the name syntax.
pub(crate) fn check_value(value: &str) -> Result<(), String> {
    if value.is_empty() {
        return Ok(());
    }
    check_name(value).map_err(|m| format!("value {value:?} {m}"))
}

fn check_name(s: &str) -> Result<(), String> {
    if s.len() > 63 {
        return Err("must be no more than 63 characters".into());
    }
    let b = s.as_bytes();
    let inner_ok = b
        .iter()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'));
    let ends_ok = b[0].is_ascii_alphanumeric() && b[b.len() - 1].is_ascii_alphanumeric();
    if inner_ok && ends_ok {
        Ok(())
    } else {
        Err("must consist of alphanumerics, '-', '_' or '.', and start and end alphanumeric".into())
    }
}
