//! Comparing resourceVersions, where the server's form allows it.
//!
//! The API calls resourceVersions opaque strings. kube-apiserver's are etcd revisions written
//! as decimal integers, and KEP-5504 ("comparable resource version") lets clients compare two
//! of them only when both are in that form: digits only, no leading zero. Anything else (an
//! aggregated API server's opaque token, an empty string) is not comparable, and saying so is
//! better than guessing: KEP-5647's read-your-writes wait refuses such versions the same way.

use std::cmp::Ordering;

/// A resourceVersion that is not a canonical decimal integer, so it cannot be ordered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "resourceVersion {0:?} is not comparable: only decimal integers without leading zeros \
     (kube-apiserver's etcd revisions) can be ordered; other servers' resourceVersions are opaque"
)]
pub struct IncomparableResourceVersion(pub String);

/// Orders two resourceVersions as KEP-5504 does: both must be decimal integers without leading
/// zeros (of any length: they are compared by length, then digit by digit, never parsed).
/// Otherwise the error names the first one that is not.
pub fn compare_resource_versions(
    a: &str,
    b: &str,
) -> Result<Ordering, IncomparableResourceVersion> {
    check_comparable(a)?;
    check_comparable(b)?;
    Ok(a.len().cmp(&b.len()).then_with(|| a.cmp(b)))
}

/// Whether `rv` is in the form [`compare_resource_versions`] can order.
pub fn is_comparable_resource_version(rv: &str) -> bool {
    check_comparable(rv).is_ok()
}

fn check_comparable(rv: &str) -> Result<(), IncomparableResourceVersion> {
    let digits = !rv.is_empty() && rv.bytes().all(|b| b.is_ascii_digit());
    let leading_zero = rv.len() > 1 && rv.starts_with('0');
    if digits && !leading_zero {
        Ok(())
    } else {
        Err(IncomparableResourceVersion(rv.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_compare_by_value_whatever_their_length() {
        assert_eq!(compare_resource_versions("9", "10"), Ok(Ordering::Less));
        assert_eq!(compare_resource_versions("10", "10"), Ok(Ordering::Equal));
        assert_eq!(
            compare_resource_versions("200", "199"),
            Ok(Ordering::Greater)
        );
        assert_eq!(compare_resource_versions("0", "1"), Ok(Ordering::Less));
        // Longer than u64: still ordered, never parsed.
        let big = "123456789012345678901234567890";
        assert_eq!(
            compare_resource_versions(big, "18446744073709551615"),
            Ok(Ordering::Greater)
        );
    }

    #[test]
    fn opaque_versions_are_refused_and_named() {
        for bad in ["", "01", "abc", "12a", "-1", " 1", "1.5"] {
            let err = compare_resource_versions("5", bad).unwrap_err();
            assert_eq!(err, IncomparableResourceVersion(bad.to_owned()));
            assert!(!is_comparable_resource_version(bad));
        }
        let err = compare_resource_versions("x1", "5").unwrap_err();
        assert!(
            err.to_string().contains("\"x1\" is not comparable"),
            "{err}"
        );
    }
}
