//! Object keys in client-go's `MetaNamespaceKeyFunc` format.

use std::borrow::Borrow;
use std::fmt;
use std::sync::Arc;

use crate::Object;

/// An object's cache key: `namespace/name`, or `name` for cluster-scoped objects.
///
/// Mirrors the string keys of client-go's `MetaNamespaceKeyFunc`. It is one shared allocation, so
/// cloning it (into the FIFO queue, the store, index sets and work queues) costs a reference-count
/// increment. It borrows as `str`, so maps keyed by `ObjectKey` are looked up with a `&str`.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ObjectKey(Arc<str>);

/// The error of [`ObjectKey::parse`] / [`split_meta_namespace_key`], worded as client-go words it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unexpected key format: {0:?}")]
pub struct KeyFormatError(pub String);

impl ObjectKey {
    /// The key of a namespace (possibly empty) and name, as `MetaNamespaceKeyFunc` builds it.
    pub fn new(namespace: &str, name: &str) -> Self {
        Self::with_str(namespace, name, |key| ObjectKey(Arc::from(key)))
    }

    /// Calls `f` with the key of a namespace and name as a string slice, without allocating it
    /// when it fits in 256 bytes: keys are built on every FIFO push and store write, and a
    /// look-up of a key already stored needs no owned copy (building an owned key this way
    /// costs one allocation, the shared string, instead of two).
    pub fn with_str<R>(namespace: &str, name: &str, f: impl FnOnce(&str) -> R) -> R {
        if namespace.is_empty() {
            return f(name);
        }
        let len = namespace.len() + 1 + name.len();
        let mut buf = [0u8; 256];
        if len <= buf.len() {
            buf[..namespace.len()].copy_from_slice(namespace.as_bytes());
            buf[namespace.len()] = b'/';
            buf[namespace.len() + 1..len].copy_from_slice(name.as_bytes());
            if let Ok(key) = std::str::from_utf8(&buf[..len]) {
                return f(key);
            }
        }
        f(&format!("{namespace}/{name}"))
    }

    /// The key of an object (client-go's `MetaNamespaceKeyFunc`).
    pub fn of<K: Object + ?Sized>(obj: &K) -> Self {
        Self::new(obj.namespace().unwrap_or(""), obj.name())
    }

    /// Parses a key, checking it has one or two `/`-separated parts (`SplitMetaNamespaceKey`).
    pub fn parse(key: &str) -> Result<Self, KeyFormatError> {
        split_meta_namespace_key(key)?;
        Ok(ObjectKey(Arc::from(key)))
    }

    /// The key as a string slice.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The namespace part; empty for cluster-scoped keys.
    pub fn namespace(&self) -> &str {
        match self.0.split_once('/') {
            Some((ns, _)) => ns,
            None => "",
        }
    }

    /// The name part.
    pub fn name(&self) -> &str {
        match self.0.split_once('/') {
            Some((_, name)) => name,
            None => &self.0,
        }
    }
}

/// Splits a key into `(namespace, name)`: one part is `("", name)`, two parts `(ns, name)`,
/// anything else is an error (client-go's `SplitMetaNamespaceKey`).
pub fn split_meta_namespace_key(key: &str) -> Result<(&str, &str), KeyFormatError> {
    let mut parts = key.split('/');
    match (parts.next(), parts.next(), parts.next()) {
        (Some(name), None, None) => Ok(("", name)),
        (Some(ns), Some(name), None) => Ok((ns, name)),
        _ => Err(KeyFormatError(key.to_string())),
    }
}

impl Borrow<str> for ObjectKey {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for ObjectKey {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for ObjectKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for ObjectKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

impl From<&str> for ObjectKey {
    /// Wraps a string as a key without checking its format (use [`ObjectKey::parse`] to check).
    fn from(s: &str) -> Self {
        ObjectKey(Arc::from(s))
    }
}

impl From<String> for ObjectKey {
    /// Wraps a string as a key without checking its format (use [`ObjectKey::parse`] to check).
    fn from(s: String) -> Self {
        ObjectKey(Arc::from(s))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_and_splits_like_client_go() {
        assert_eq!(ObjectKey::new("ns", "a").as_str(), "ns/a");
        assert_eq!(ObjectKey::new("", "node-1").as_str(), "node-1");
        let k = ObjectKey::new("ns", "a");
        assert_eq!((k.namespace(), k.name()), ("ns", "a"));
        let k = ObjectKey::new("", "a");
        assert_eq!((k.namespace(), k.name()), ("", "a"));
        assert_eq!(split_meta_namespace_key("a"), Ok(("", "a")));
        assert_eq!(split_meta_namespace_key("ns/a"), Ok(("ns", "a")));
        assert_eq!(
            split_meta_namespace_key("a/b/c").unwrap_err().to_string(),
            "unexpected key format: \"a/b/c\""
        );
        assert!(ObjectKey::parse("x/y/z").is_err());
        assert_eq!(ObjectKey::parse("x/y").unwrap().name(), "y");
    }

    #[test]
    fn keys_of_any_length_and_script() {
        // Up to the stack buffer, at its edge, and past it (a 253-byte name in a 63-byte
        // namespace, the longest Kubernetes allows).
        for (ns_len, name_len) in [(3, 5), (100, 155), (100, 156), (63, 253)] {
            let (ns, name) = ("n".repeat(ns_len), "é".repeat(name_len / 2));
            let k = ObjectKey::new(&ns, &name);
            assert_eq!(k.as_str(), format!("{ns}/{name}"));
            assert_eq!((k.namespace(), k.name()), (ns.as_str(), name.as_str()));
        }
    }

    #[test]
    fn looks_up_by_str() {
        let mut m = std::collections::HashMap::new();
        m.insert(ObjectKey::new("ns", "a"), 1);
        assert_eq!(m.get("ns/a"), Some(&1));
    }
}
