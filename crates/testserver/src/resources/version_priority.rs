//! The order kube-apiserver gives the versions of a group (apimachinery's
//! `CompareKubeAwareVersionStrings`): versions shaped `v<major>[alpha|beta<minor>]` first — GA,
//! then beta, then alpha, each by major and then minor number, highest first — then any
//! other version, alphabetically. A CRD's discovery lists its versions in this order (the
//! first is preferred), and a deprecated version's warning names the first one not deprecated.

use std::cmp::Ordering;

/// `(stage, major, minor)` of a kube-like version, the stage 2 for GA, 1 beta, 0 alpha.
fn parse(v: &str) -> Option<(u8, u64, u64)> {
    let rest = v.strip_prefix('v')?;
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    let major: u64 = rest.get(..digits)?.parse().ok()?;
    if major == 0 || rest.starts_with('0') {
        return None;
    }
    let tail = &rest[digits..];
    if tail.is_empty() {
        return Some((2, major, 0));
    }
    let (stage, minor) = if let Some(m) = tail.strip_prefix("beta") {
        (1, m)
    } else {
        (0, tail.strip_prefix("alpha")?)
    };
    if minor.is_empty() || minor.starts_with('0') || !minor.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((stage, major, minor.parse().ok()?))
}

/// `a` before `b` (`Less`) when `a` has the higher priority.
pub(crate) fn by_priority(a: &str, b: &str) -> Ordering {
    match (parse(a), parse(b)) {
        (Some(x), Some(y)) => y.cmp(&x),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => a.cmp(b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ga_then_beta_then_alpha_then_the_rest() {
        let mut v = vec![
            "foo1",
            "v1alpha1",
            "v10",
            "v1beta1",
            "v2",
            "v1",
            "v11alpha2",
            "v12beta3",
            "foo10",
            "v3beta1",
            "v1beta2",
            "v01",
        ];
        v.sort_by(|a, b| by_priority(a, b));
        assert_eq!(
            v,
            [
                "v10",
                "v2",
                "v1",
                "v12beta3",
                "v3beta1",
                "v1beta2",
                "v1beta1",
                "v11alpha2",
                "v1alpha1",
                "foo1",
                "foo10",
                "v01"
            ]
        );
    }
}
