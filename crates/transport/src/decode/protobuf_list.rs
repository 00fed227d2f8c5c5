//! A protobuf `PartialObjectMetadataList` body turned into the JSON list while it arrives: each
//! item is rewritten (see [`super::protobuf`]) as soon as its last byte is in, so the list
//! decoder behind it decodes items while the server is still sending, and the client never
//! holds the whole body. (client-go reads the body whole, then decodes it.)
//!
//! The wire: `k8s\0`, then a `runtime.Unknown` {1: TypeMeta, 2: raw, 3: contentEncoding,
//! 4: contentType} whose `raw` is the list {1: ListMeta, 2: repeated PartialObjectMetadata}.
//! Go writes fields in ascending order, so the `TypeMeta` naming the kind comes before the list.
//! Only the fields around the list are buffered whole, each up to the client's largest object
//! ([`Config::max_object_size`](crate::Config::max_object_size)); `raw` is read field by field.

use kcache_core::Error;

use super::protobuf::{
    envelope_kind, malformed, text, write_list_meta, write_partial_object, MAGIC,
};

/// What the JSON list starts with; its `metadata` comes after the items, once it has been read.
const PREFIX: &[u8] =
    br#"{"kind":"PartialObjectMetadataList","apiVersion":"meta.k8s.io/v1","items":["#;

/// Where the transcoder is in the body.
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

/// Rewrites a protobuf `PartialObjectMetadataList` body as its JSON list, chunk by chunk.
#[derive(Debug)]
pub struct PartialListTranscoder {
    /// Received bytes not yet rewritten: at most one incomplete field.
    pending: Vec<u8>,
    stage: Stage,
    /// The envelope's `TypeMeta` named `PartialObjectMetadataList`.
    kind_checked: bool,
    list_seen: bool,
    items: usize,
    list_meta: Option<Vec<u8>>,
    max_object_size: usize,
}

impl PartialListTranscoder {
    /// A transcoder failing on any field (an item, the list's metadata) larger than
    /// `max_object_size` bytes.
    pub fn new(max_object_size: usize) -> Self {
        PartialListTranscoder {
            pending: Vec::new(),
            stage: Stage::Magic,
            kind_checked: false,
            list_seen: false,
            items: 0,
            list_meta: None,
            max_object_size,
        }
    }

    /// Reads `chunk`, appending to `out` the JSON of every item it completes.
    pub fn push(&mut self, chunk: &[u8], out: &mut Vec<u8>) -> Result<(), Error> {
        self.pending.extend_from_slice(chunk);
        let mut pos = 0;
        let result = self.rewrite(&mut pos, out);
        self.pending.drain(..pos);
        result
    }

    /// Ends the body: appends the rest of the JSON list, or fails if the body was cut short.
    pub fn finish(&mut self, out: &mut Vec<u8>) -> Result<(), Error> {
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
        out.extend_from_slice(br#"],"metadata":"#);
        write_list_meta(out, self.list_meta.as_deref().unwrap_or_default())?;
        out.push(b'}');
        Ok(())
    }

    /// Rewrites every complete field from `pending[*pos..]`, advancing `pos` past them.
    fn rewrite(&mut self, pos: &mut usize, out: &mut Vec<u8>) -> Result<(), Error> {
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
                        out.extend_from_slice(PREFIX);
                        continue;
                    }
                    let Some(body) = complete(buf, &h, "an envelope field", self.max_object_size)?
                    else {
                        return Ok(());
                    };
                    match (h.number, h.wire) {
                        (1, 2) => {
                            let kind = envelope_kind(body)?;
                            if kind != "PartialObjectMetadataList" {
                                return Err(malformed(format!(
                                    "the server sent kind {kind:?}, not PartialObjectMetadataList"
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
                    let what = format!("list item {}", self.items);
                    let Some(body) = complete(buf, &h, &what, self.max_object_size)? else {
                        return Ok(());
                    };
                    match (h.number, h.wire) {
                        (1, 2) => self.list_meta = Some(body.to_vec()),
                        (2, 2) => {
                            if self.items > 0 {
                                out.push(b',');
                            }
                            write_partial_object(out, body)
                                .map_err(|e| malformed(format!("{what}: {e}")))?;
                            self.items += 1;
                        }
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

/// A varint and its length; `None` if `buf` ends inside it.
fn varint(buf: &[u8]) -> Result<Option<(u64, usize)>, Error> {
    let mut value = 0u64;
    for (i, &b) in buf.iter().enumerate().take(10) {
        value |= u64::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            return Ok(Some((value, i + 1)));
        }
    }
    if buf.len() >= 10 {
        return Err(malformed("a varint is longer than 10 bytes"));
    }
    Ok(None)
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
/// larger than `max` bytes (it would never be rewritten, only buffered).
fn complete<'b>(
    buf: &'b [u8],
    h: &Header,
    what: &str,
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
    use super::*;

    /// A list kube-apiserver 1.20.2 sent for
    /// `GET /api/v1/namespaces/pbfix/configmaps` with client-go's metadata `Accept`, and the
    /// JSON it sent for the same list with the JSON `Accept`.
    const PROTOBUF_LIST: &[u8] = include_bytes!("../../tests/fixtures/partial-list.pb");
    const JSON_LIST: &[u8] = include_bytes!("../../tests/fixtures/partial-list.json");

    /// Transcodes `body` fed in chunks of `size` bytes; the JSON and how many bytes each push
    /// produced.
    fn transcode(body: &[u8], size: usize) -> Result<(Vec<u8>, Vec<usize>), Error> {
        let mut t = PartialListTranscoder::new(1 << 20);
        let mut json = Vec::new();
        let mut produced = Vec::new();
        for chunk in body.chunks(size) {
            let before = json.len();
            t.push(chunk, &mut json)?;
            produced.push(json.len() - before);
        }
        t.finish(&mut json)?;
        Ok((json, produced))
    }

    #[test]
    fn transcodes_what_the_server_sends_as_json() {
        let servers: serde_json::Value = serde_json::from_slice(JSON_LIST).unwrap();
        for size in [1, 7, 64, PROTOBUF_LIST.len()] {
            let (json, _) = transcode(PROTOBUF_LIST, size).unwrap();
            let ours: serde_json::Value = serde_json::from_slice(&json).unwrap();
            assert_eq!(ours, servers, "chunks of {size} bytes");
            assert_eq!(ours["items"].as_array().unwrap().len(), 3);
        }
    }

    #[test]
    fn items_come_out_before_the_body_ends() {
        let mut t = PartialListTranscoder::new(1 << 20);
        let mut out = Vec::new();
        // The fixture's first item is 1,208 bytes, its second ends at byte 1,443.
        let cut = 1_337;
        for chunk in PROTOBUF_LIST[..cut].chunks(64) {
            t.push(chunk, &mut out).unwrap();
            // The pending bytes never hold more than one field.
            assert!(t.pending.len() < 1_300, "{} bytes pending", t.pending.len());
        }
        let items = |json: &[u8]| {
            json.windows(23)
                .filter(|w| w == br#""PartialObjectMetadata""#)
                .count()
        };
        // The first item is rewritten before the body ends.
        assert!(items(&out) >= 1, "{}", String::from_utf8_lossy(&out));
        t.push(&PROTOBUF_LIST[cut..], &mut out).unwrap();
        t.finish(&mut out).unwrap();
        assert_eq!(items(&out), 3);
    }

    #[test]
    fn truncated_body_is_an_error_not_a_panic() {
        for cut in [0, 3, 10, PROTOBUF_LIST.len() / 2, PROTOBUF_LIST.len() - 1] {
            let err = transcode(&PROTOBUF_LIST[..cut], 16).unwrap_err();
            assert!(
                err.to_string().contains("PartialObjectMetadataList"),
                "{err}"
            );
        }
    }

    #[test]
    fn an_item_over_the_limit_is_refused_by_index() {
        let mut t = PartialListTranscoder::new(100);
        let err = t.push(PROTOBUF_LIST, &mut Vec::new()).unwrap_err();
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
        let err = transcode(&body, 5).unwrap_err();
        assert!(err.to_string().contains("ConfigMapList"), "{err}");
    }

    #[test]
    fn json_is_not_protobuf() {
        let err = transcode(br#"{"kind":"List"}"#, 2).unwrap_err();
        assert!(err.to_string().contains("magic"), "{err}");
    }
}
