//! The kinds whose lists kcache reads straight from protobuf: `PartialObjectMetadata` (what a
//! metadata-only list asks for, as client-go's metadata client does) and the built-in kinds
//! whose messages are known here — core/v1 `ConfigMap` and `Secret` — each item seen as the
//! JSON object the server's JSON list would hold (same keys, same values, the same fields left
//! out; items of a list carry no `apiVersion`/`kind`, as in the JSON list).
//!
//! A kind is described here and nowhere else: its [`ItemKind`] variant, its resource and list
//! kind ([`ItemKind::of_resource`], [`ItemKind::list_kind`]), and how its message reads
//! ([`ItemKind::visit`]); the decoder presents any item through `Node::Item`. A field a kind's
//! message does not have here is an error naming it (`protobuf::unknown_field`): the list is
//! then read in JSON, which names what the field holds.
//!
//! Why these: kube-apiserver encodes a list in protobuf in a fraction of its JSON time (10k
//! ConfigMaps: first byte after 37–53 ms against 55–170 ms, the whole body in 58–74 ms against
//! 84–207 ms), and most of a client's wait for a list of small objects is the server's
//! encoding. kube-controller-manager's and the scheduler's clients ask for protobuf for the same
//! reason (client-go's `ContentType: application/vnd.kubernetes.protobuf`). A kind is added
//! here with its message's fields (`k8s.io/api/core/v1/generated.proto`); every other kind is
//! listed in JSON.

use kcache_core::Error;
use serde::de::{DeserializeOwned, Visitor};

use super::protobuf::{
    decode_item, fields, map, string, unknown_field, DeError, Members, Node, Value,
};

/// What the items of a protobuf list are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ItemKind {
    /// `meta.k8s.io/v1` `PartialObjectMetadata`, for metadata-only lists.
    PartialObjectMetadata,
    /// core/v1 `ConfigMap`.
    ConfigMap,
    /// core/v1 `Secret`.
    Secret,
}

impl ItemKind {
    /// The kind of a resource's objects, if its list can be read from protobuf.
    pub fn of_resource(group: &str, version: &str, kind: &str) -> Option<ItemKind> {
        match (group, version, kind) {
            ("", "v1", "ConfigMap") => Some(ItemKind::ConfigMap),
            ("", "v1", "Secret") => Some(ItemKind::Secret),
            _ => None,
        }
    }

    /// The kind the list's envelope names.
    pub fn list_kind(self) -> &'static str {
        match self {
            ItemKind::PartialObjectMetadata => "PartialObjectMetadataList",
            ItemKind::ConfigMap => "ConfigMapList",
            ItemKind::Secret => "SecretList",
        }
    }

    /// How an item's bytes decode as `K`; the error names the item (and its object).
    pub(super) fn decoder<K: DeserializeOwned>(self) -> fn(usize, &[u8]) -> Result<K, Error> {
        match self {
            ItemKind::PartialObjectMetadata => {
                |i, b| decode_item(Node::Item(ItemKind::PartialObjectMetadata, b), i, b)
            }
            ItemKind::ConfigMap => |i, b| decode_item(Node::Item(ItemKind::ConfigMap, b), i, b),
            ItemKind::Secret => |i, b| decode_item(Node::Item(ItemKind::Secret, b), i, b),
        }
    }

    /// Presents an item's message to `visitor` as the JSON object the server would send.
    pub(super) fn visit<'de, V: Visitor<'de>>(
        self,
        buf: &'de [u8],
        visitor: V,
    ) -> Result<V::Value, DeError> {
        match self {
            ItemKind::PartialObjectMetadata => partial_object_metadata(buf, visitor),
            ItemKind::ConfigMap => config_map(buf, visitor),
            ItemKind::Secret => secret(buf, visitor),
        }
    }
}

/// `PartialObjectMetadata` {1: metadata}, with the `apiVersion` and `kind` its JSON form has.
fn partial_object_metadata<'de, V: Visitor<'de>>(
    buf: &'de [u8],
    visitor: V,
) -> Result<V::Value, DeError> {
    let mut meta = &[][..];
    let mut f = fields(buf);
    while let Some((n, v)) = f.next_field()? {
        match (n, v) {
            (1, Value::Bytes(b)) => meta = b,
            (n, v) => return Err(unknown_field("PartialObjectMetadata", n, &v)),
        }
    }
    visitor.visit_map(Members::new([
        Some(("apiVersion", Node::Str("meta.k8s.io/v1"))),
        Some(("kind", Node::Str("PartialObjectMetadata"))),
        Some(("metadata", Node::ObjectMeta(meta))),
    ]))
}

/// `ConfigMap` {1: metadata, 2: data, 3: binaryData, 4: immutable}. `data` and `binaryData` are
/// left out when empty and `immutable` when unset (`omitempty`, a `*bool`); `binaryData`'s
/// values are base64, as Go's JSON writes `[]byte`.
fn config_map<'de, V: Visitor<'de>>(buf: &'de [u8], visitor: V) -> Result<V::Value, DeError> {
    let (mut meta, mut data, mut binary, mut immutable) = (&[][..], vec![], vec![], None);
    let mut f = fields(buf);
    while let Some((n, v)) = f.next_field()? {
        match (n, v) {
            (1, Value::Bytes(b)) => meta = b,
            (2, Value::Bytes(b)) => data.push(b),
            (3, Value::Bytes(b)) => binary.push(b),
            (4, Value::Varint(b)) => immutable = Some(b != 0),
            (n, v) => return Err(unknown_field("ConfigMap", n, &v)),
        }
    }
    visitor.visit_map(Members::new([
        map("binaryData", binary, Node::BytesMap),
        map("data", data, Node::StringMap),
        immutable.map(|b| ("immutable", Node::Bool(b))),
        Some(("metadata", Node::ObjectMeta(meta))),
    ]))
}

/// `Secret` {1: metadata, 2: data, 3: type, 4: stringData, 5: immutable}. `data`'s values are
/// base64; `type` is left out when empty, as are the maps and an unset `immutable`.
fn secret<'de, V: Visitor<'de>>(buf: &'de [u8], visitor: V) -> Result<V::Value, DeError> {
    let (mut meta, mut data, mut strings, mut kind, mut immutable) =
        (&[][..], vec![], vec![], None, None);
    let mut f = fields(buf);
    while let Some((n, v)) = f.next_field()? {
        match (n, v) {
            (1, Value::Bytes(b)) => meta = b,
            (2, Value::Bytes(b)) => data.push(b),
            (3, Value::Bytes(b)) => kind = Some(b),
            (4, Value::Bytes(b)) => strings.push(b),
            (5, Value::Varint(b)) => immutable = Some(b != 0),
            (n, v) => return Err(unknown_field("Secret", n, &v)),
        }
    }
    visitor.visit_map(Members::new([
        map("data", data, Node::BytesMap),
        immutable.map(|b| ("immutable", Node::Bool(b))),
        Some(("metadata", Node::ObjectMeta(meta))),
        map("stringData", strings, Node::StringMap),
        string("type", kind)?,
    ]))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A length-delimited field of fewer than 128 bytes.
    fn field(number: u8, body: &[u8]) -> Vec<u8> {
        [&[number << 3 | 2, body.len() as u8][..], body].concat()
    }

    #[test]
    fn kinds_are_known_by_group_version_and_kind() {
        assert_eq!(
            ItemKind::of_resource("", "v1", "ConfigMap"),
            Some(ItemKind::ConfigMap)
        );
        assert_eq!(
            ItemKind::of_resource("", "v1", "Secret"),
            Some(ItemKind::Secret)
        );
        assert_eq!(ItemKind::of_resource("", "v1", "Pod"), None);
        assert_eq!(ItemKind::of_resource("apps", "v1", "ConfigMap"), None);
    }

    #[test]
    fn a_field_a_kind_does_not_have_is_an_error_naming_it() {
        use super::super::protobuf::is_unknown_field;
        let meta = field(1, &[field(1, b"cm"), field(3, b"ns")].concat());
        for (kind, extra, names) in [
            (
                ItemKind::ConfigMap,
                field(5, b"x"),
                "ConfigMap field 5 (length-delimited)",
            ),
            // `type` (3) as a varint.
            (
                ItemKind::Secret,
                vec![3 << 3, 1],
                "Secret field 3 (a varint)",
            ),
            (
                ItemKind::Secret,
                vec![6 << 3, 1],
                "Secret field 6 (a varint)",
            ),
        ] {
            let item = [meta.clone(), extra].concat();
            let err = kind.decoder::<serde_json::Value>()(4, &item).unwrap_err();
            assert!(is_unknown_field(&err), "{err}");
            let err = err.to_string();
            assert!(
                err.contains("list item 4 (ns/cm)") && err.contains(names),
                "{names}: {err}"
            );
        }
    }

    #[test]
    fn a_bad_config_map_is_an_error_naming_it() {
        let meta = [field(1, b"cm"), field(3, b"ns")].concat();
        // data {"k": "\xff"}: a string that is not UTF-8.
        let entry = [field(1, b"k"), field(2, b"\xff")].concat();
        let item = [field(1, &meta), field(2, &entry)].concat();
        let err = ItemKind::ConfigMap.decoder::<serde_json::Value>()(4, &item)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("list item 4 (ns/cm)") && err.contains("UTF-8"),
            "{err}"
        );
        // The same bytes in a Secret's data are bytes: base64, as Go's JSON writes them.
        let secret = ItemKind::Secret.decoder::<serde_json::Value>()(4, &item).unwrap();
        assert_eq!(secret["data"]["k"], "/w==");
        assert_eq!(secret["metadata"]["name"], "cm");
    }
}
