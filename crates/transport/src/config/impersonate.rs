//! Acting as another user: the `Impersonate-*` headers kubectl sends for `--as`, `--as-group`,
//! `--as-uid` and a kubeconfig user's `as`, `as-groups`, `as-uid`, `as-user-extra`.

use std::collections::BTreeMap;

use http::header::{HeaderName, HeaderValue};

use crate::error::ConfigError;

/// Whom requests act as (client-go's `rest.ImpersonationConfig`). Empty: the credentials' own
/// identity.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Impersonate {
    /// `Impersonate-User`.
    pub user_name: Option<String>,
    /// `Impersonate-Uid`.
    pub uid: Option<String>,
    /// One `Impersonate-Group` header each.
    pub groups: Vec<String>,
    /// `Impersonate-Extra-<key>`, one header per value; keys are percent-encoded where a header
    /// name cannot hold them, as client-go does.
    pub extra: BTreeMap<String, Vec<String>>,
}

impl Impersonate {
    /// Whether nothing is impersonated.
    pub fn is_empty(&self) -> bool {
        self.user_name.as_deref().is_none_or(str::is_empty)
            && self.uid.as_deref().is_none_or(str::is_empty)
            && self.groups.is_empty()
            && self.extra.is_empty()
    }

    /// The headers, in the order kubectl sends them.
    pub(crate) fn headers(&self) -> Result<Vec<(HeaderName, HeaderValue)>, ConfigError> {
        let mut out = Vec::new();
        let value = |what: &str, v: &str| {
            HeaderValue::from_str(v).map_err(|_| {
                ConfigError::Impersonation(format!("{what} {v:?} cannot be sent in a header"))
            })
        };
        if let Some(user) = self.user_name.as_deref().filter(|u| !u.is_empty()) {
            out.push((
                HeaderName::from_static("impersonate-user"),
                value("user", user)?,
            ));
        }
        if let Some(uid) = self.uid.as_deref().filter(|u| !u.is_empty()) {
            out.push((
                HeaderName::from_static("impersonate-uid"),
                value("uid", uid)?,
            ));
        }
        for g in &self.groups {
            out.push((
                HeaderName::from_static("impersonate-group"),
                value("group", g)?,
            ));
        }
        for (key, values) in &self.extra {
            let name = format!("impersonate-extra-{}", escape_key(key));
            let name = HeaderName::from_bytes(name.as_bytes()).map_err(|_| {
                ConfigError::Impersonation(format!("user-extra key {key:?} is not usable"))
            })?;
            for v in values {
                out.push((name.clone(), value("user-extra value", v)?));
            }
        }
        Ok(out)
    }
}

/// Percent-encodes every byte a header name cannot hold, and `%` (client-go's
/// `headerKeyEscape`); the API server unescapes the key.
fn escape_key(key: &str) -> String {
    let mut out = String::with_capacity(key.len());
    for b in key.bytes() {
        let token = b.is_ascii_alphanumeric() || b"!#$&'*+-.^_`|~".contains(&b);
        if token {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_as_kubectl_sends_them() {
        let imp = Impersonate {
            user_name: Some("jane".into()),
            uid: Some("u-1".into()),
            groups: vec!["dev".into(), "ops".into()],
            extra: BTreeMap::from([
                ("scopes".into(), vec!["view".into(), "edit".into()]),
                ("example.com/team".into(), vec!["a".into()]),
            ]),
        };
        let h: Vec<(String, String)> = imp
            .headers()
            .unwrap()
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_str().unwrap().to_string()))
            .collect();
        let pairs: Vec<(&str, &str)> = h.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        assert_eq!(
            pairs,
            [
                ("impersonate-user", "jane"),
                ("impersonate-uid", "u-1"),
                ("impersonate-group", "dev"),
                ("impersonate-group", "ops"),
                ("impersonate-extra-example.com%2fteam", "a"),
                ("impersonate-extra-scopes", "view"),
                ("impersonate-extra-scopes", "edit"),
            ]
        );
        assert!(Impersonate::default().is_empty());
        assert!(Impersonate::default().headers().unwrap().is_empty());
        let bad = Impersonate {
            user_name: Some("a\nb".into()),
            ..Impersonate::default()
        };
        assert!(bad.headers().unwrap_err().to_string().contains("user"));
    }
}
