//! Naming the object a decode error is about: its `namespace/name`, found in its JSON (or the
//! first bytes of it, for one too large to buffer) by a byte scan that needs no valid JSON.

/// How far into a value the scan looks: the API server writes `metadata` first, with name and
/// namespace near its start.
const SCAN_LIMIT: usize = 4096;

/// `what` followed by the object's quoted `namespace/name`, when the bytes reveal it.
pub(crate) fn named(what: &str, bytes: &[u8]) -> String {
    match object_key_in(bytes) {
        Some(key) => format!("{what} {key:?}"),
        None => what.to_string(),
    }
}

/// The `namespace/name` (or `name`) of the first `metadata` object in `bytes`, if found.
pub(crate) fn object_key_in(bytes: &[u8]) -> Option<String> {
    let bytes = &bytes[..bytes.len().min(SCAN_LIMIT)];
    let meta = find_key(bytes, b"metadata").filter(|&i| bytes.get(i) == Some(&b'{'))?;
    let meta = &bytes[meta..];
    let name = string_member(meta, b"name")?;
    Some(match string_member(meta, b"namespace") {
        Some(ns) if !ns.is_empty() => format!("{ns}/{name}"),
        _ => name,
    })
}

/// The simple (escape-free) string value of the first `"key":` in `bytes`.
fn string_member(bytes: &[u8], key: &[u8]) -> Option<String> {
    let start = find_key(bytes, key)?;
    let rest = bytes.get(start..)?.strip_prefix(b"\"")?;
    let end = rest.iter().position(|&b| b == b'"' || b == b'\\')?;
    (rest[end] == b'"')
        .then(|| String::from_utf8(rest[..end].to_vec()).ok())
        .flatten()
}

/// The offset of the value after the first `"key"` followed by `:` (whitespace allowed).
fn find_key(bytes: &[u8], key: &[u8]) -> Option<usize> {
    let mut from = 0;
    while from < bytes.len() {
        let at = from
            + bytes[from..].windows(key.len() + 2).position(|w| {
                w[0] == b'"' && &w[1..=key.len()] == key && w[key.len() + 1] == b'"'
            })?;
        let mut i = at + key.len() + 2;
        while bytes.get(i).is_some_and(u8::is_ascii_whitespace) {
            i += 1;
        }
        if bytes.get(i) == Some(&b':') {
            i += 1;
            while bytes.get(i).is_some_and(u8::is_ascii_whitespace) {
                i += 1;
            }
            return Some(i);
        }
        from = at + 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_namespace_and_name_in_whole_or_cut_json() {
        let ev = br#"{"type":"ADDED","object":{"kind":"Pod","metadata":{"generateName":"w-","name":"w-1","namespace":"prod"},"spec":{"name":"x""#;
        assert_eq!(object_key_in(ev).as_deref(), Some("prod/w-1"));
        let cluster = br#"{"metadata" : { "name" : "node-1" }}"#;
        assert_eq!(object_key_in(cluster).as_deref(), Some("node-1"));
        assert_eq!(named("watch event", cluster), r#"watch event "node-1""#);
        assert_eq!(object_key_in(br#"{"metadata":3,"name":"x"}"#), None);
        assert_eq!(object_key_in(br#"{"metadata":{"name":"a\"b"}}"#), None);
        assert_eq!(named("list item 3", b"[1,2"), "list item 3");
    }
}
