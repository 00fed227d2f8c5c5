//! List and watch options, encoded exactly as client-go encodes `metav1.ListOptions`.

use std::fmt::Write as _;

/// `resourceVersionMatch`: how `resourceVersion` is interpreted on a list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ResourceVersionMatch {
    /// Any data at least as new as the given version.
    NotOlderThan,
    /// Exactly the given version.
    Exact,
}

impl ResourceVersionMatch {
    /// The wire value.
    pub fn as_str(self) -> &'static str {
        match self {
            ResourceVersionMatch::NotOlderThan => "NotOlderThan",
            ResourceVersionMatch::Exact => "Exact",
        }
    }
}

/// Options of one list request (one page).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ListParams {
    /// `labelSelector`.
    pub label_selector: Option<String>,
    /// `fieldSelector`.
    pub field_selector: Option<String>,
    /// `limit`: the page size; `None` or 0 asks for everything at once.
    pub limit: Option<i64>,
    /// `continue`: the token of the previous page.
    pub continue_token: Option<String>,
    /// `resourceVersion`: `None`/"" is a consistent read, "0" any cached data.
    pub resource_version: Option<String>,
    /// `resourceVersionMatch`.
    pub resource_version_match: Option<ResourceVersionMatch>,
    /// `timeoutSeconds`.
    pub timeout_seconds: Option<u32>,
    /// `shardSelector` (KEP-5866, alpha in 1.36): only objects in these hash ranges; see
    /// [`crate::selector::ShardSelector`]. A server without the feature ignores it and lists
    /// everything.
    pub shard_selector: Option<String>,
}

/// Options of one watch request.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WatchParams {
    /// `labelSelector`.
    pub label_selector: Option<String>,
    /// `fieldSelector`.
    pub field_selector: Option<String>,
    /// `resourceVersion` to start after.
    pub resource_version: Option<String>,
    /// `resourceVersionMatch` (watch-list sends `NotOlderThan`).
    pub resource_version_match: Option<ResourceVersionMatch>,
    /// `timeoutSeconds`: the server ends the watch cleanly after this long.
    pub timeout_seconds: Option<u32>,
    /// `allowWatchBookmarks`.
    pub allow_watch_bookmarks: bool,
    /// `sendInitialEvents` (watch-list).
    pub send_initial_events: Option<bool>,
    /// `shardSelector` (KEP-5866), like [`ListParams::shard_selector`].
    pub shard_selector: Option<String>,
}

impl ListParams {
    /// The query parameters, sorted by name like Go's `url.Values.Encode`; empty values omitted.
    pub fn query_pairs(&self) -> Vec<(&'static str, String)> {
        let mut q = Vec::with_capacity(8);
        push(&mut q, "continue", self.continue_token.as_deref());
        push(&mut q, "fieldSelector", self.field_selector.as_deref());
        push(&mut q, "labelSelector", self.label_selector.as_deref());
        if let Some(l) = self.limit.filter(|l| *l > 0) {
            q.push(("limit", l.to_string()));
        }
        push(&mut q, "resourceVersion", self.resource_version.as_deref());
        push(
            &mut q,
            "resourceVersionMatch",
            self.resource_version_match.map(|m| m.as_str()),
        );
        push(&mut q, "shardSelector", self.shard_selector.as_deref());
        if let Some(t) = self.timeout_seconds {
            q.push(("timeoutSeconds", t.to_string()));
        }
        q
    }

    /// The encoded query string (without `?`).
    pub fn to_query(&self) -> String {
        encode_query(&self.query_pairs())
    }
}

impl WatchParams {
    /// The query parameters including `watch=true`, sorted by name like `url.Values.Encode`.
    pub fn query_pairs(&self) -> Vec<(&'static str, String)> {
        let mut q = Vec::with_capacity(9);
        if self.allow_watch_bookmarks {
            q.push(("allowWatchBookmarks", "true".to_string()));
        }
        push(&mut q, "fieldSelector", self.field_selector.as_deref());
        push(&mut q, "labelSelector", self.label_selector.as_deref());
        push(&mut q, "resourceVersion", self.resource_version.as_deref());
        push(
            &mut q,
            "resourceVersionMatch",
            self.resource_version_match.map(|m| m.as_str()),
        );
        if let Some(s) = self.send_initial_events {
            q.push(("sendInitialEvents", s.to_string()));
        }
        push(&mut q, "shardSelector", self.shard_selector.as_deref());
        if let Some(t) = self.timeout_seconds {
            q.push(("timeoutSeconds", t.to_string()));
        }
        q.push(("watch", "true".to_string()));
        q
    }

    /// The encoded query string (without `?`).
    pub fn to_query(&self) -> String {
        encode_query(&self.query_pairs())
    }
}

fn push(q: &mut Vec<(&'static str, String)>, name: &'static str, value: Option<&str>) {
    if let Some(v) = value.filter(|v| !v.is_empty()) {
        q.push((name, v.to_string()));
    }
}

/// Encodes pairs as Go's `url.Values.Encode` does (`QueryEscape`: space as `+`).
pub fn encode_query(pairs: &[(&str, String)]) -> String {
    let mut out = String::new();
    for (i, (k, v)) in pairs.iter().enumerate() {
        if i > 0 {
            out.push('&');
        }
        query_escape(&mut out, k);
        out.push('=');
        query_escape(&mut out, v);
    }
    out
}

fn query_escape(out: &mut String, s: &str) {
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                out.push(b as char)
            }
            b' ' => out.push('+'),
            _ => {
                let _ = write!(out, "%{b:02X}");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn list_query_matches_client_go() {
        let p = ListParams {
            limit: Some(500),
            resource_version: Some("0".into()),
            label_selector: Some("app in (a,b),!x".into()),
            ..ListParams::default()
        };
        assert_eq!(
            p.to_query(),
            "labelSelector=app+in+%28a%2Cb%29%2C%21x&limit=500&resourceVersion=0"
        );
        let cont = ListParams {
            limit: Some(500),
            continue_token: Some("tok".into()),
            ..ListParams::default()
        };
        assert_eq!(cont.to_query(), "continue=tok&limit=500");
        assert_eq!(ListParams::default().to_query(), "");
        let exact = ListParams {
            resource_version: Some("10".into()),
            resource_version_match: Some(ResourceVersionMatch::Exact),
            ..ListParams::default()
        };
        assert_eq!(
            exact.to_query(),
            "resourceVersion=10&resourceVersionMatch=Exact"
        );
    }

    #[test]
    fn watch_query_matches_client_go() {
        let p = WatchParams {
            resource_version: Some("10".into()),
            timeout_seconds: Some(300),
            allow_watch_bookmarks: true,
            ..WatchParams::default()
        };
        assert_eq!(
            p.to_query(),
            "allowWatchBookmarks=true&resourceVersion=10&timeoutSeconds=300&watch=true"
        );
        let wl = WatchParams {
            allow_watch_bookmarks: true,
            send_initial_events: Some(true),
            resource_version_match: Some(ResourceVersionMatch::NotOlderThan),
            ..WatchParams::default()
        };
        assert_eq!(
            wl.to_query(),
            "allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan&sendInitialEvents=true&watch=true"
        );
    }

    #[test]
    fn shard_selector_is_sent_in_url_values_order() {
        let sel = "shardRange(object.metadata.uid, '0x0', '0x8000000000000000')";
        let list = ListParams {
            shard_selector: Some(sel.into()),
            timeout_seconds: Some(5),
            ..ListParams::default()
        };
        let encoded = "shardSelector=shardRange%28object.metadata.uid%2C+%270x0%27%2C+%270x8000000000000000%27%29";
        assert_eq!(list.to_query(), format!("{encoded}&timeoutSeconds=5"));
        let watch = WatchParams {
            shard_selector: Some(sel.into()),
            send_initial_events: Some(true),
            ..WatchParams::default()
        };
        assert_eq!(
            watch.to_query(),
            format!("sendInitialEvents=true&{encoded}&watch=true")
        );
    }
}
