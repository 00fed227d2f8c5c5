//! A protobuf list body (`PartialObjectMetadataList`, `ConfigMapList`, …: [`ItemKind`]) split
//! into its items while it arrives: each item is handed over (to be decoded through
//! [`super::protobuf`]) as soon as its last byte is in, so items decode while the server is still
//! sending, and the client never holds the whole body. (client-go reads the body whole, then
//! decodes it.)
//!
//! The wire: `k8s\0`, then a `runtime.Unknown` {1: TypeMeta, 2: raw, 3: contentEncoding,
//! 4: contentType} whose `raw` is the list {1: ListMeta, 2: repeated item}.
//! Go writes fields in ascending order, so the `TypeMeta` naming the kind comes before the list.
//! Only the fields around the list are buffered whole, each up to the client's largest object
//! ([`Config::max_object_size`](crate::Config::max_object_size)); `raw` is read field by field.

use kcache_core::{Error, ListMeta};

use super::protobuf::{envelope_kind, list_meta, malformed, text, varint, MAGIC, PROTOBUF_LIST};
use super::protobuf_kinds::ItemKind;

/// Where the splitter is in the body.
#[derive(Debug, Clone, Copy)]
enum Stage {
    /// Before the `k8s\0` magic.
    Magic,
    /// Between the envelope's fields.
    Envelope,
    /// Inside the envelope's `raw` (the list), with this many of its bytes still to come.
    List { left: u64 },
}

/// A field's key and, for a length-delimited field, its length.
struct Header {
    number: u64,
    wire: u64,
    /// Bytes of the key and length.
    len: usize,
    /// Bytes of the value after them.
    body: usize,
}

/// Splits a protobuf list body into its items, chunk by chunk.
#[derive(Debug)]
pub struct ListSplitter {
    /// What the items are: the envelope must name its list kind.
    kind: ItemKind,
    /// Received bytes not yet read: at most one incomplete field.
    pending: Vec<u8>,
    stage: Stage,
    /// The envelope's `TypeMeta` named the list kind.
    kind_checked: bool,
    list_seen: bool,
    items: usize,
    list_meta: Option<ListMeta>,
    max_object_size: usize,
}

impl ListSplitter {
    /// A splitter of a list of `kind`, failing on any field (an item, the list's metadata)
    /// larger than `max_object_size` bytes.
    pub fn new(kind: ItemKind, max_object_size: usize) -> Self {
        ListSplitter {
            kind,
            pending: Vec::new(),
            stage: Stage::Magic,
            kind_checked: false,
            list_seen: false,
            items: 0,
            list_meta: None,
            max_object_size,
        }
    }

    /// Reads `chunk`, handing every item it completes to `on_item` with its index in the list
    /// (the item message's bytes).
    pub fn push(
        &mut self,
        chunk: &[u8],
        on_item: impl FnMut(usize, &[u8]) -> Result<(), Error>,
    ) -> Result<(), Error> {
        self.pending.extend_from_slice(chunk);
        let mut pos = 0;
        let result = self.split(&mut pos, on_item);
        self.pending.drain(..pos);
        result.map_err(|e| self.named(e))
    }

    /// `e`, naming the list's kind if it is the body's own error (not an item's).
    fn named(&self, e: Error) -> Error {
        match e {
            Error::Decode { what, message } if what == PROTOBUF_LIST => {
                Error::decode(format!("protobuf {}", self.kind.list_kind()), message)
            }
            other => other,
        }
    }

    /// What the items are.
    pub fn kind(&self) -> ItemKind {
        self.kind
    }

    /// Decodes item `index` of the list (bytes [`push`](Self::push) handed over) as `K`, seen
    /// as the JSON object the server's JSON list would hold; the error names the item.
    pub fn decode_item<K: serde::de::DeserializeOwned>(
        &self,
        index: usize,
        item: &[u8],
    ) -> Result<K, Error> {
        self.kind.decoder()(index, item)
    }

    /// The list's metadata, once it has been read (it comes before the items).
    pub fn metadata(&self) -> Option<&ListMeta> {
        self.list_meta.as_ref()
    }

    /// Ends the body: the list's metadata, or an error if the body was cut short.
    pub fn finish(&mut self) -> Result<ListMeta, Error> {
        self.end().map_err(|e| self.named(e))
    }

    fn end(&mut self) -> Result<ListMeta, Error> {
        match self.stage {
            Stage::Magic => return Err(malformed("the body ends before the k8s protobuf magic")),
            Stage::List { left } => {
                return Err(malformed(format!(
                    "the body ends {left} bytes before the end of the list, after {} items",
                    self.items
                )))
            }
            Stage::Envelope if !self.pending.is_empty() => {
                return Err(malformed("the body ends inside a field of the envelope"))
            }
            Stage::Envelope if !self.list_seen => {
                return Err(malformed("the envelope has no object"))
            }
            Stage::Envelope => {}
        }
        Ok(self.list_meta.take().unwrap_or_default())
    }

    /// Reads every complete field from `pending[*pos..]`, advancing `pos` past them.
    fn split(
        &mut self,
        pos: &mut usize,
        mut on_item: impl FnMut(usize, &[u8]) -> Result<(), Error>,
    ) -> Result<(), Error> {
        loop {
            let buf = &self.pending[*pos..];
            match self.stage {
                Stage::Magic => {
                    if buf.len() < MAGIC.len() {
                        if !MAGIC.starts_with(buf) {
                            return Err(not_protobuf());
                        }
                        return Ok(());
                    }
                    if !buf.starts_with(MAGIC) {
                        return Err(not_protobuf());
                    }
                    *pos += MAGIC.len();
                    self.stage = Stage::Envelope;
                }
                Stage::Envelope => {
                    let Some(h) = header(buf)? else {
                        return Ok(());
                    };
                    if (h.number, h.wire) == (2, 2) {
                        if !self.kind_checked {
                            return Err(malformed("the envelope names no kind before its object"));
                        }
                        if self.list_seen {
                            return Err(malformed("the envelope holds two objects"));
                        }
                        self.list_seen = true;
                        self.stage = Stage::List {
                            left: h.body as u64,
                        };
                        *pos += h.len;
                        continue;
                    }
                    let Some(body) = complete(
                        buf,
                        &h,
                        format_args!("an envelope field"),
                        self.max_object_size,
                    )?
                    else {
                        return Ok(());
                    };
                    match (h.number, h.wire) {
                        (1, 2) => {
                            let kind = envelope_kind(body)?;
                            let expected = self.kind.list_kind();
                            if kind != expected {
                                return Err(malformed(format!(
                                    "the server sent kind {kind:?}, not {expected}"
                                )));
                            }
                            self.kind_checked = true;
                        }
                        (3, 2) if !body.is_empty() => {
                            return Err(malformed(format!(
                                "content encoding {:?} inside the envelope is not supported",
                                text(body)?
                            )))
                        }
                        // `contentType` and fields added later: the JSON list has no envelope.
                        _ => {}
                    }
                    *pos += h.len + h.body;
                }
                Stage::List { left: 0 } => self.stage = Stage::Envelope,
                Stage::List { left } => {
                    let Some(h) = header(buf)? else {
                        return Ok(());
                    };
                    let total = h.len + h.body;
                    if total as u64 > left {
                        return Err(malformed(format!(
                            "a field of {total} bytes runs past the end of the list ({left} bytes left)"
                        )));
                    }
                    let Some(body) = complete(
                        buf,
                        &h,
                        format_args!("list item {}", self.items),
                        self.max_object_size,
                    )?
                    else {
                        return Ok(());
                    };
                    match (h.number, h.wire) {
                        (1, 2) => self.list_meta = Some(list_meta(body)?),
                        (2, 2) => {
                            on_item(self.items, body)?;
                            self.items += 1;
                        }
                        // Fields added to the list message later: the JSON list decoder skips
                        // members other than `items` and `metadata` too.
                        _ => {}
                    }
                    *pos += total;
                    self.stage = Stage::List {
                        left: left - total as u64,
                    };
                }
            }
        }
    }
}

fn not_protobuf() -> Error {
    malformed("the body does not start with the k8s protobuf magic")
}

/// The header of the field `buf` starts with; `None` if `buf` ends inside it.
fn header(buf: &[u8]) -> Result<Option<Header>, Error> {
    let Some((key, n)) = varint(buf)? else {
        return Ok(None);
    };
    let wire = key & 7;
    let (len, body) = match wire {
        0 => match varint(&buf[n..])? {
            Some((_, m)) => (n, m),
            None => return Ok(None),
        },
        1 => (n, 8),
        2 => match varint(&buf[n..])? {
            Some((size, m)) => (n + m, usize::try_from(size).map_err(malformed)?),
            None => return Ok(None),
        },
        5 => (n, 4),
        other => return Err(malformed(format!("unsupported wire type {other}"))),
    };
    Ok(Some(Header {
        number: key >> 3,
        wire,
        len,
        body,
    }))
}

/// The value of the field `h` heads, once `buf` holds all of it; an error naming `what` if it is
/// larger than `max` bytes (it would never be handed over, only buffered). `what` is formatted
/// only for that error: naming every item up front cost an allocation per item.
fn complete<'b>(
    buf: &'b [u8],
    h: &Header,
    what: std::fmt::Arguments<'_>,
    max: usize,
) -> Result<Option<&'b [u8]>, Error> {
    if h.body > max {
        return Err(malformed(format!(
            "{what} is {} bytes, larger than the limit of {max} bytes",
            h.body
        )));
    }
    Ok(buf.get(h.len..h.len + h.body))
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::{ConfigMap, Secret};
    use kcache_core::PartialObjectMeta;

    use super::*;

    /// A list kube-apiserver 1.20.2 sent for
    /// `GET /api/v1/namespaces/pbfix/configmaps` with client-go's metadata `Accept`, and the
    /// JSON it sent for the same list with the JSON `Accept`.
    const PROTOBUF_LIST: &[u8] = include_bytes!("../../tests/fixtures/partial-list.pb");
    const JSON_LIST: &[u8] = include_bytes!("../../tests/fixtures/partial-list.json");

    /// Splits `body` fed in chunks of `size` bytes and decodes each item as `K`; the items, the
    /// list's metadata and how many items each push completed.
    fn split<K: serde::de::DeserializeOwned>(
        body: &[u8],
        size: usize,
    ) -> Result<(Vec<K>, ListMeta, Vec<usize>), Error> {
        split_as(ItemKind::PartialObjectMetadata, body, size)
    }

    /// [`split`] of a list of `kind`.
    fn split_as<K: serde::de::DeserializeOwned>(
        kind: ItemKind,
        body: &[u8],
        size: usize,
    ) -> Result<(Vec<K>, ListMeta, Vec<usize>), Error> {
        let mut s = ListSplitter::new(kind, 1 << 20);
        let decode = kind.decoder::<K>();
        let mut items = Vec::new();
        let mut produced = Vec::new();
        for chunk in body.chunks(size) {
            let before = items.len();
            s.push(chunk, |index, item| {
                assert_eq!(index, items.len());
                items.push(decode(index, item)?);
                Ok(())
            })?;
            produced.push(items.len() - before);
        }
        let meta = s.finish()?;
        Ok((items, meta, produced))
    }

    #[test]
    fn decodes_typed_objects_as_from_the_servers_json() {
        let servers: serde_json::Value = serde_json::from_slice(JSON_LIST).unwrap();
        let from_json: Vec<PartialObjectMeta<ConfigMap>> =
            serde_json::from_value(servers["items"].clone()).unwrap();
        let (items, _, _) = split::<PartialObjectMeta<ConfigMap>>(PROTOBUF_LIST, 64).unwrap();
        assert_eq!(items, from_json);
        assert_eq!(items.len(), 3);
    }

    #[test]
    fn items_come_out_before_the_body_ends() {
        let mut s = ListSplitter::new(ItemKind::PartialObjectMetadata, 1 << 20);
        let mut items = 0;
        // The fixture's first item is 1,208 bytes, its second ends at byte 1,443.
        let cut = 1_337;
        for chunk in PROTOBUF_LIST[..cut].chunks(64) {
            s.push(chunk, |_, _| {
                items += 1;
                Ok(())
            })
            .unwrap();
            // The pending bytes never hold more than one field.
            assert!(s.pending.len() < 1_300, "{} bytes pending", s.pending.len());
        }
        // The first item is handed over before the body ends.
        assert!(items >= 1);
        s.push(&PROTOBUF_LIST[cut..], |_, _| {
            items += 1;
            Ok(())
        })
        .unwrap();
        s.finish().unwrap();
        assert_eq!(items, 3);
    }

    #[test]
    fn truncated_body_is_an_error_not_a_panic() {
        for cut in [0, 3, 10, PROTOBUF_LIST.len() / 2, PROTOBUF_LIST.len() - 1] {
            let err = split::<serde_json::Value>(&PROTOBUF_LIST[..cut], 16).unwrap_err();
            assert!(
                err.to_string().contains("PartialObjectMetadataList"),
                "{err}"
            );
        }
    }

    #[test]
    fn an_item_over_the_limit_is_refused_by_index() {
        let mut s = ListSplitter::new(ItemKind::PartialObjectMetadata, 100);
        let err = s.push(PROTOBUF_LIST, |_, _| Ok(())).unwrap_err();
        assert!(err.to_string().contains("list item 0 is"), "{err}");
        assert!(err.to_string().contains("limit of 100 bytes"), "{err}");
    }

    #[test]
    fn another_kind_is_refused_by_name() {
        // k8s\0, TypeMeta {apiVersion: v1, kind: ConfigMapList}, raw: empty.
        let mut body = b"k8s\0".to_vec();
        let type_meta = [b"\x0a\x02v1".as_slice(), b"\x12\x0dConfigMapList"].concat();
        body.push(0x0a);
        body.push(type_meta.len() as u8);
        body.extend_from_slice(&type_meta);
        body.extend_from_slice(b"\x12\x00");
        let err = split::<serde_json::Value>(&body, 5).unwrap_err();
        assert!(err.to_string().contains("ConfigMapList"), "{err}");
    }

    /// Lists kube-apiserver 1.20.2 sent for `GET /api/v1/namespaces/pbfix2/configmaps` and
    /// `.../secrets` with `Accept: application/vnd.kubernetes.protobuf`, and the JSON it sent for
    /// the same lists: ConfigMaps with data (an empty value, non-ASCII text), binaryData,
    /// `immutable` true and false, labels, annotations, an owner and a finalizer, and a bare
    /// one; Secrets of type `Opaque` (with bytes that are not UTF-8) and `kubernetes.io/tls`
    /// (immutable), and one without data.
    const CONFIGMAP_LIST: &[u8] = include_bytes!("../../tests/fixtures/configmap-list.pb");
    const CONFIGMAP_JSON: &[u8] = include_bytes!("../../tests/fixtures/configmap-list.json");
    const SECRET_LIST: &[u8] = include_bytes!("../../tests/fixtures/secret-list.pb");
    const SECRET_JSON: &[u8] = include_bytes!("../../tests/fixtures/secret-list.json");

    #[test]
    fn every_kind_decodes_as_the_servers_json() {
        for (kind, body, json) in [
            (ItemKind::PartialObjectMetadata, PROTOBUF_LIST, JSON_LIST),
            (ItemKind::ConfigMap, CONFIGMAP_LIST, CONFIGMAP_JSON),
            (ItemKind::Secret, SECRET_LIST, SECRET_JSON),
        ] {
            let servers: serde_json::Value = serde_json::from_slice(json).unwrap();
            assert_eq!(servers["kind"], kind.list_kind());
            for size in [1, 7, 13, 64, body.len()] {
                let (items, meta, _) = split_as::<serde_json::Value>(kind, body, size).unwrap();
                assert_eq!(
                    serde_json::Value::Array(items),
                    servers["items"],
                    "{kind:?} in chunks of {size} bytes"
                );
                assert_eq!(serde_json::to_value(&meta).unwrap(), servers["metadata"]);
            }
        }
    }

    #[test]
    fn built_in_kinds_decode_as_typed_objects_from_the_servers_json() {
        let servers: serde_json::Value = serde_json::from_slice(CONFIGMAP_JSON).unwrap();
        let from_json: Vec<ConfigMap> = serde_json::from_value(servers["items"].clone()).unwrap();
        let (items, _, _) = split_as::<ConfigMap>(ItemKind::ConfigMap, CONFIGMAP_LIST, 64).unwrap();
        assert_eq!(items, from_json);
        assert_eq!(
            items[0].binary_data.as_ref().unwrap()["blob"].0,
            b"\0\x01\x02\x03\x04\xff"
        );
        assert_eq!(items[2].immutable, Some(false));

        let servers: serde_json::Value = serde_json::from_slice(SECRET_JSON).unwrap();
        let from_json: Vec<Secret> = serde_json::from_value(servers["items"].clone()).unwrap();
        let (items, _, _) = split_as::<Secret>(ItemKind::Secret, SECRET_LIST, 64).unwrap();
        assert_eq!(items, from_json);
        assert_eq!(items[1].data.as_ref().unwrap()["bin"].0, b"\0\x01\x02\xff");
    }

    #[test]
    fn a_list_of_another_built_in_kind_is_refused_naming_both() {
        let err = split_as::<serde_json::Value>(ItemKind::Secret, CONFIGMAP_LIST, 64)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("protobuf SecretList") && err.contains("\"ConfigMapList\""),
            "{err}"
        );
    }

    #[test]
    fn json_is_not_protobuf() {
        let err = split::<serde_json::Value>(br#"{"kind":"List"}"#, 2).unwrap_err();
        assert!(err.to_string().contains("magic"), "{err}");
    }
}
