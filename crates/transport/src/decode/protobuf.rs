//! Kubernetes' protobuf encoding of list items, read through serde: an item decodes as any
//! `Deserialize` type straight from its protobuf bytes, seen as the JSON object the server would
//! have sent (same keys, same values, the same fields left out), with no JSON text in between.
//! [`ListSplitter`](super::protobuf_list::ListSplitter) hands the items over one by one as a
//! list body arrives; [`ItemKind`](super::protobuf_kinds::ItemKind) says which kinds' messages
//! are known (`PartialObjectMetadata` here, the built-in kinds in `protobuf_kinds`).
//!
//! Why: client-go's metadata client asks for protobuf first (`metadata.go`:
//! `application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;...`), and kube-apiserver
//! encodes protobuf at a fraction of its JSON cost — for 10k ConfigMaps' metadata the body is
//! 2.7 MB against 7.6 MB of JSON, and the server answers in about half the time. Writing each
//! item out as JSON and parsing that again (what this module did first) cost the client as much
//! as the server saved.
//!
//! The messages are apimachinery's `generated.proto` for `meta/v1`. Fields the JSON form omits
//! when empty are omitted here too. `managedFields[].fieldsV1` is raw JSON on the wire too, and
//! is read by serde_json.
//!
//! A field this decoder does not know, inside an item (a field of `ObjectMeta` added after the
//! table in kcache-codec's `meta_fields`, an unknown field of `ConfigMap`, of an owner
//! reference, of a `managedFields` entry, of a time or a map entry — or a known number with
//! another wire type), is an error naming the message and the field number
//! ([`unknown_field`]), not skipped. Why: the JSON path keeps what it does not know wherever its
//! reader does — kcache-core's `ObjectMeta` keeps unknown members in `other`, `DynamicObject`,
//! `serde_json::Value` and kcache-compact's `Compact<K>` keep every member — while
//! k8s-openapi's types and `PartialObjectMeta`'s top level drop them; and a protobuf field number
//! cannot be turned into its JSON member's name without the schema. Skipping it would make the
//! two paths differ for every reader that keeps members. Instead `Api`'s lists recognize the
//! error ([`is_unknown_field`]), read the page again in JSON and list that resource in JSON from
//! then on, which gives exactly the JSON path's result.
//!
//! Outside items, unknown fields are skipped, which is what the JSON path does with them: the
//! list's `ListMeta` (kcache-core's `ListMeta` ignores members it does not know, `selfLink`
//! among them), the list message and the `runtime.Unknown` envelope (whose JSON counterpart, the
//! list object's other members, the JSON list decoder skips).

use std::fmt;

use base64::Engine as _;
use kcache_codec::{MetaKind, OBJECT_META, OBJECT_META_LEN, RAW_VALUE_TOKEN};
use kcache_core::{Error, ListMeta};
use serde::de::{self, DeserializeOwned, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde::forward_to_deserialize_any;

use super::protobuf_kinds::ItemKind;
use super::raw_json;

/// What every Kubernetes protobuf body starts with.
pub(super) const MAGIC: &[u8] = b"k8s\0";

/// The media type of Kubernetes' protobuf encoding.
pub const PROTOBUF: &str = "application/vnd.kubernetes.protobuf";

/// What a protobuf body's errors say they were decoding; the list splitter names its kind
/// instead (`protobuf ConfigMapList`).
pub(super) const PROTOBUF_LIST: &str = "protobuf list";

pub(super) fn malformed(what: impl std::fmt::Display) -> Error {
    Error::decode(PROTOBUF_LIST, what.to_string())
}

/// One field's value on the wire.
pub(super) enum Value<'a> {
    Varint(u64),
    Bytes(&'a [u8]),
    Fixed,
}

impl Value<'_> {
    /// The wire type's name, for errors.
    fn wire(&self) -> &'static str {
        match self {
            Value::Varint(_) => "a varint",
            Value::Bytes(_) => "length-delimited",
            Value::Fixed => "fixed-size",
        }
    }
}

/// What the error for a field this decoder does not know says first ([`is_unknown_field`]).
const UNKNOWN_FIELD: &str = "a protobuf field kcache does not know";

/// The error for field `number` of `message`, which this decoder does not know (or not with
/// this wire type): the JSON form may hold a member for it, which cannot be named without the
/// schema (see the module docs).
pub(super) fn unknown_field(message: &str, number: u64, value: &Value<'_>) -> DeError {
    DeError(format!(
        "{UNKNOWN_FIELD}: {message} field {number} ({}); only the JSON form can say what it holds",
        value.wire()
    ))
}

/// Whether `e` is a protobuf list item's error for a field kcache's protobuf decoder does not
/// know: the list is then to be read in JSON (`Api::list` does; after such an error from
/// `Api::list_stream` the client's next list of the resource asks for JSON).
pub fn is_unknown_field(e: &Error) -> bool {
    matches!(e, Error::Decode { message, .. } if message.contains(UNKNOWN_FIELD))
}

/// A varint at the start of `buf` and its length; `None` if `buf` ends inside it.
pub(super) fn varint(buf: &[u8]) -> Result<Option<(u64, usize)>, Error> {
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

/// Reads the fields of one message.
pub(super) struct Fields<'a> {
    buf: &'a [u8],
}

impl<'a> Fields<'a> {
    fn varint(&mut self) -> Result<u64, Error> {
        // Most are one byte: every field's key and most lengths in an object's metadata.
        if let Some((&b, rest)) = self.buf.split_first() {
            if b < 0x80 {
                self.buf = rest;
                return Ok(u64::from(b));
            }
        }
        let (value, n) = varint(self.buf)?.ok_or_else(|| malformed("a varint is truncated"))?;
        self.buf = &self.buf[n..];
        Ok(value)
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], Error> {
        if n > self.buf.len() {
            return Err(malformed(format!(
                "a field of {n} bytes runs past the end of its message ({} bytes left)",
                self.buf.len()
            )));
        }
        let (head, rest) = self.buf.split_at(n);
        self.buf = rest;
        Ok(head)
    }

    /// The next field's number and value; `None` at the end of the message.
    pub(super) fn next_field(&mut self) -> Result<Option<(u64, Value<'a>)>, Error> {
        if self.buf.is_empty() {
            return Ok(None);
        }
        let key = self.varint()?;
        let value = match key & 7 {
            0 => Value::Varint(self.varint()?),
            1 => {
                self.take(8)?;
                Value::Fixed
            }
            2 => {
                let n = usize::try_from(self.varint()?).map_err(malformed)?;
                Value::Bytes(self.take(n)?)
            }
            5 => {
                self.take(4)?;
                Value::Fixed
            }
            other => return Err(malformed(format!("unsupported wire type {other}"))),
        };
        Ok(Some((key >> 3, value)))
    }
}

pub(super) fn fields(buf: &[u8]) -> Fields<'_> {
    Fields { buf }
}

pub(super) fn text(bytes: &[u8]) -> Result<&str, Error> {
    std::str::from_utf8(bytes).map_err(|e| malformed(format!("a string is not UTF-8: {e}")))
}

/// The envelope's `TypeMeta` {1: apiVersion, 2: kind}: the kind it names.
pub(super) fn envelope_kind(type_meta: &[u8]) -> Result<&str, Error> {
    message(type_meta, 2)?.map_or(Ok(""), text)
}

/// `ListMeta` {1: selfLink, 2: resourceVersion, 3: continue, 4: remainingItemCount}.
pub(super) fn list_meta(buf: &[u8]) -> Result<ListMeta, Error> {
    let mut meta = ListMeta::default();
    let mut f = fields(buf);
    while let Some((n, v)) = f.next_field()? {
        match (n, v) {
            (2, Value::Bytes(b)) if !b.is_empty() => meta.resource_version = Some(text(b)?.into()),
            (3, Value::Bytes(b)) if !b.is_empty() => meta.continue_ = Some(text(b)?.into()),
            (4, Value::Varint(v)) => meta.remaining_item_count = Some(v as i64),
            // `selfLink` and fields added later: kcache-core's `ListMeta` ignores them in JSON.
            _ => {}
        }
    }
    Ok(meta)
}

/// Decodes the list item at `index` (`item`'s bytes, seen as `node`) as `K`; the error names the
/// item (and its object, when its name can be read: every kind's metadata is its field 1).
pub(super) fn decode_item<'de, K: DeserializeOwned>(
    node: Node<'de>,
    index: usize,
    item: &[u8],
) -> Result<K, Error> {
    K::deserialize(node).map_err(|e| {
        let what = match item_name(item) {
            Some(name) => format!("list item {index} ({name})"),
            None => format!("list item {index}"),
        };
        Error::decode(what, e.0)
    })
}

/// `namespace/name` (or `name`) of an item, for error messages.
fn item_name(item: &[u8]) -> Option<String> {
    let meta = message(item, 1).ok()??;
    let (name, namespace) = (message(meta, 1).ok()??, message(meta, 3).ok().flatten());
    let name = text(name).ok()?;
    Some(match namespace.and_then(|ns| text(ns).ok()) {
        Some(ns) if !ns.is_empty() => format!("{ns}/{name}"),
        _ => name.to_string(),
    })
}

/// The last length-delimited field `number` of a message, if any.
pub(super) fn message(buf: &[u8], number: u64) -> Result<Option<&[u8]>, Error> {
    let mut found = None;
    let mut f = fields(buf);
    while let Some((n, v)) = f.next_field()? {
        if let (true, Value::Bytes(b)) = (n == number, v) {
            found = Some(b);
        }
    }
    Ok(found)
}

/// A decoding error, as serde's deserializers report them.
#[derive(Debug)]
pub(super) struct DeError(String);

impl fmt::Display for DeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for DeError {}

impl de::Error for DeError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        DeError(msg.to_string())
    }
}

impl From<Error> for DeError {
    fn from(e: Error) -> Self {
        DeError(e.to_string())
    }
}

pub(super) fn utf8(bytes: &[u8]) -> Result<&str, DeError> {
    Ok(text(bytes)?)
}

/// A value of an item, seen as the JSON value the server would have sent for it.
pub(super) enum Node<'a> {
    /// A list item of a kind `protobuf_kinds` describes.
    Item(ItemKind, &'a [u8]),
    Str(&'a str),
    /// A string not yet checked to be UTF-8 (an element of a repeated string field).
    Text(&'a [u8]),
    Owned(String),
    Int(i64),
    Bool(bool),
    /// Raw JSON (`fieldsV1`).
    Json(&'a [u8]),
    ObjectMeta(&'a [u8]),
    OwnerReference(&'a [u8]),
    ManagedFieldsEntry(&'a [u8]),
    /// A `map<string, string>`: entries {1: key, 2: value}.
    StringMap(Vec<&'a [u8]>),
    /// A `map<string, bytes>`, its values base64 as Go's JSON writes `[]byte`.
    BytesMap(Vec<&'a [u8]>),
    /// Repeated strings or messages, each as this kind of node.
    List(Vec<&'a [u8]>, fn(&'a [u8]) -> Node<'a>),
}

/// An object's members: JSON keys and their values, in the order they are given (their keys'
/// order, see `object_meta`), left-out fields `None`.
pub(super) struct Members<'a, const N: usize> {
    members: [Option<(&'static str, Node<'a>)>; N],
    next: usize,
    value: Option<Node<'a>>,
}

impl<'a, const N: usize> Members<'a, N> {
    pub(super) fn new(members: [Option<(&'static str, Node<'a>)>; N]) -> Self {
        Members {
            members,
            next: 0,
            value: None,
        }
    }
}

impl<'de, const N: usize> MapAccess<'de> for Members<'de, N> {
    type Error = DeError;

    fn next_key_seed<S: DeserializeSeed<'de>>(
        &mut self,
        seed: S,
    ) -> Result<Option<S::Value>, DeError> {
        while self.next < N {
            let member = self.members[self.next].take();
            self.next += 1;
            if let Some((key, value)) = member {
                self.value = Some(value);
                return seed.deserialize(Node::Str(key)).map(Some);
            }
        }
        Ok(None)
    }

    fn next_value_seed<S: DeserializeSeed<'de>>(&mut self, seed: S) -> Result<S::Value, DeError> {
        seed.deserialize(pending(&mut self.value)?)
    }
}

/// The value whose key a map access handed over last.
fn pending<T>(value: &mut Option<T>) -> Result<T, DeError> {
    value
        .take()
        .ok_or_else(|| DeError("a value asked for before its key".into()))
}

/// The entries of a `map<string, string>` or, with `bytes`, a `map<string, bytes>`.
struct StringMap<'a> {
    entries: std::vec::IntoIter<&'a [u8]>,
    bytes: bool,
    value: Option<Node<'a>>,
}

impl<'de> MapAccess<'de> for StringMap<'de> {
    type Error = DeError;

    fn next_key_seed<S: DeserializeSeed<'de>>(
        &mut self,
        seed: S,
    ) -> Result<Option<S::Value>, DeError> {
        let Some(entry) = self.entries.next() else {
            return Ok(None);
        };
        let (mut k, mut v) = (&[][..], &[][..]);
        let mut f = fields(entry);
        while let Some((n, value)) = f.next_field()? {
            match (n, value) {
                (1, Value::Bytes(b)) => k = b,
                (2, Value::Bytes(b)) => v = b,
                (n, value) => return Err(unknown_field("map entry", n, &value)),
            }
        }
        self.value = Some(if self.bytes {
            Node::Owned(base64(v))
        } else {
            Node::Str(utf8(v)?)
        });
        seed.deserialize(Node::Str(utf8(k)?)).map(Some)
    }

    fn next_value_seed<S: DeserializeSeed<'de>>(&mut self, seed: S) -> Result<S::Value, DeError> {
        seed.deserialize(pending(&mut self.value)?)
    }
}

/// The elements of a repeated field.
struct List<'a> {
    items: std::vec::IntoIter<&'a [u8]>,
    node: fn(&'a [u8]) -> Node<'a>,
}

impl<'de> SeqAccess<'de> for List<'de> {
    type Error = DeError;

    fn next_element_seed<S: DeserializeSeed<'de>>(
        &mut self,
        seed: S,
    ) -> Result<Option<S::Value>, DeError> {
        self.items
            .next()
            .map(|item| seed.deserialize((self.node)(item)))
            .transpose()
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.items.len())
    }
}

/// A string field as the JSON form has it: left out when empty (`omitempty`).
pub(super) fn string<'a>(
    key: &'static str,
    bytes: Option<&'a [u8]>,
) -> Result<Option<(&'static str, Node<'a>)>, DeError> {
    match bytes {
        Some(b) if !b.is_empty() => Ok(Some((key, Node::Str(utf8(b)?)))),
        _ => Ok(None),
    }
}

/// `metav1.Time` {1: seconds, 2: nanos} as JSON's RFC 3339 seconds (what `metav1.Time`
/// marshals to); left out for the zero time, as the JSON form of a `*Time` is.
fn time<'a>(
    key: &'static str,
    buf: Option<&[u8]>,
) -> Result<Option<(&'static str, Node<'a>)>, DeError> {
    let Some(buf) = buf else { return Ok(None) };
    let mut seconds = 0i64;
    let mut f = fields(buf);
    while let Some((n, v)) = f.next_field()? {
        match (n, v) {
            (1, Value::Varint(s)) => seconds = s as i64,
            // Nanoseconds: `metav1.Time`'s JSON has whole seconds.
            (2, Value::Varint(_)) => {}
            (n, v) => return Err(unknown_field("Time", n, &v)),
        }
    }
    if seconds == 0 {
        return Ok(None);
    }
    Ok(Some((key, Node::Owned(rfc3339(seconds)?))))
}

/// Seconds [`rfc3339`] remembers per thread (a power of two).
const TIMES: usize = 16;

thread_local! {
    /// Seconds written lately, and how, by second: the objects of a list were mostly created
    /// in a few seconds, and each has its time twice (created, and its managedFields' last
    /// write); formatting one costs more than the rest of its metadata.
    static TIMES_WRITTEN: std::cell::RefCell<[(i64, String); TIMES]> =
        std::cell::RefCell::new(std::array::from_fn(|_| (0, String::new())));
}

/// `seconds` since the epoch as RFC 3339 in UTC, to the second.
fn rfc3339(seconds: i64) -> Result<String, DeError> {
    let slot = seconds as usize & (TIMES - 1);
    let known = TIMES_WRITTEN.with_borrow(|t| (t[slot].0 == seconds).then(|| t[slot].1.clone()));
    if let Some(text) = known {
        return Ok(text);
    }
    let text = jiff::Timestamp::from_second(seconds)
        .map_err(|e| DeError(format!("timestamp {seconds}: {e}")))?
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string();
    TIMES_WRITTEN.with_borrow_mut(|t| t[slot] = (seconds, text.clone()));
    Ok(text)
}

/// A map field as the JSON form has it, its entries read as `node` says (`Node::StringMap`,
/// `Node::BytesMap`): left out when empty.
pub(super) fn map<'a>(
    key: &'static str,
    entries: Vec<&'a [u8]>,
    node: fn(Vec<&'a [u8]>) -> Node<'a>,
) -> Option<(&'static str, Node<'a>)> {
    (!entries.is_empty()).then(|| (key, node(entries)))
}

/// `bytes` as Go's JSON writes a `[]byte`: standard base64, padded.
fn base64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// A repeated field as the JSON form has it: left out when empty.
fn list<'a>(
    key: &'static str,
    items: Vec<&'a [u8]>,
    node: fn(&'a [u8]) -> Node<'a>,
) -> Option<(&'static str, Node<'a>)> {
    (!items.is_empty()).then_some((key, Node::List(items, node)))
}

impl<'de> Node<'de> {
    fn visit<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        match self {
            Node::Item(kind, buf) => kind.visit(buf, visitor),
            Node::Str(s) => visitor.visit_borrowed_str(s),
            Node::Text(b) => visitor.visit_borrowed_str(utf8(b)?),
            Node::Owned(s) => visitor.visit_string(s),
            Node::Int(i) => visitor.visit_i64(i),
            Node::Bool(b) => visitor.visit_bool(b),
            Node::Json(raw) => json(raw, |d| de::Deserializer::deserialize_any(d, visitor)),
            Node::ObjectMeta(buf) => object_meta(buf, visitor),
            Node::OwnerReference(buf) => owner_reference(buf, visitor),
            Node::ManagedFieldsEntry(buf) => managed_fields_entry(buf, visitor),
            Node::StringMap(entries) => visitor.visit_map(StringMap {
                entries: entries.into_iter(),
                bytes: false,
                value: None,
            }),
            Node::BytesMap(entries) => visitor.visit_map(StringMap {
                entries: entries.into_iter(),
                bytes: true,
                value: None,
            }),
            Node::List(items, node) => visitor.visit_seq(List {
                items: items.into_iter(),
                node,
            }),
        }
    }
}

/// Reads raw JSON (`fieldsV1`) with `read`, which must take all of it.
fn json<'de, T>(
    raw: &'de [u8],
    read: impl FnOnce(
        &mut serde_json::Deserializer<serde_json::de::SliceRead<'de>>,
    ) -> serde_json::Result<T>,
) -> Result<T, DeError> {
    let mut d = serde_json::Deserializer::from_slice(raw);
    read(&mut d)
        .and_then(|value| d.end().map(|()| value))
        .map_err(|e| DeError(format!("fieldsV1: {e}")))
}

impl<'de> de::Deserializer<'de> for Node<'de> {
    type Error = DeError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        self.visit(visitor)
    }

    /// Every value here is present: `null` is never sent (fields are left out instead).
    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        match self {
            // Raw JSON may be `null` itself: serde_json decides.
            Node::Json(raw) => json(raw, |d| de::Deserializer::deserialize_option(d, visitor)),
            other => visitor.visit_some(other),
        }
    }

    /// Raw JSON answers serde_json's `RawValue` handshake as serde_json does: a reader can take
    /// `fieldsV1` as its text (kcache-compact decodes each distinct text once). A text is parsed
    /// to be JSON the first time this thread sees it (`raw_json`).
    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, DeError> {
        let handshake = name == RAW_VALUE_TOKEN;
        match self {
            Node::Json(raw) if handshake && raw_json::checked_before(raw) => {
                raw_json::visit_checked(utf8(raw)?, visitor)
            }
            Node::Json(raw) => {
                let value = json(raw, |d| {
                    de::Deserializer::deserialize_newtype_struct(d, name, visitor)
                })?;
                if handshake {
                    raw_json::remember(raw);
                }
                Ok(value)
            }
            other => visitor.visit_newtype_struct(other),
        }
    }

    forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit unit_struct seq tuple tuple_struct map struct enum
        identifier ignored_any
    }
}

/// One `ObjectMeta` member's values as they came on the wire: the last of a singular field, every
/// element of a repeated one.
#[derive(Default)]
struct Wire<'a> {
    bytes: Option<&'a [u8]>,
    int: Option<i64>,
    items: Vec<&'a [u8]>,
}

/// An `ObjectMeta` message as the JSON object the server would send: its members are
/// kcache-codec's table of `ObjectMeta` ([`OBJECT_META`]: key, field number, kind), presented in
/// the table's order, which is their keys' order — a reader that keeps objects sorted by key (as
/// kcache-compact's tree does) then has nothing to sort.
fn object_meta<'de, V: Visitor<'de>>(buf: &'de [u8], visitor: V) -> Result<V::Value, DeError> {
    let mut wire: [Wire<'de>; OBJECT_META_LEN] = Default::default();
    let mut f = fields(buf);
    while let Some((n, v)) = f.next_field()? {
        let Some(at) = OBJECT_META.iter().position(|m| u64::from(m.proto) == n) else {
            return Err(unknown_field("ObjectMeta", n, &v));
        };
        let slot = &mut wire[at];
        match (OBJECT_META[at].kind, v) {
            (MetaKind::Int { .. }, Value::Varint(i)) => slot.int = Some(i as i64),
            (MetaKind::String | MetaKind::Time, Value::Bytes(b)) => slot.bytes = Some(b),
            (
                MetaKind::StringMap
                | MetaKind::Strings
                | MetaKind::OwnerReferences
                | MetaKind::ManagedFields,
                Value::Bytes(b),
            ) => slot.items.push(b),
            // A known field number with another wire type: not the field kcache knows.
            (_, v) => return Err(unknown_field("ObjectMeta", n, &v)),
        }
    }
    let mut members: [Option<(&'static str, Node<'de>)>; OBJECT_META_LEN] = Default::default();
    for ((member, wire), out) in OBJECT_META.iter().zip(wire).zip(&mut members) {
        let key = member.name;
        *out = match member.kind {
            MetaKind::String => string(key, wire.bytes)?,
            MetaKind::Time => time(key, wire.bytes)?,
            MetaKind::Int { omit_zero } => wire
                .int
                .filter(|i| !omit_zero || *i != 0)
                .map(|i| (key, Node::Int(i))),
            MetaKind::StringMap => map(key, wire.items, Node::StringMap),
            MetaKind::Strings => list(key, wire.items, Node::Text),
            MetaKind::OwnerReferences => list(key, wire.items, Node::OwnerReference),
            MetaKind::ManagedFields => list(key, wire.items, Node::ManagedFieldsEntry),
        };
    }
    visitor.visit_map(Members::new(members))
}

/// `OwnerReference` {1: kind, 3: name, 4: uid, 5: apiVersion, 6: controller,
/// 7: blockOwnerDeletion}. Its four strings are there even when empty, as Go's JSON has them
/// (no `omitempty`): a reader that requires them gets what the server's JSON would give it.
fn owner_reference<'de, V: Visitor<'de>>(buf: &'de [u8], visitor: V) -> Result<V::Value, DeError> {
    let mut s: [&[u8]; 6] = [&[]; 6];
    let (mut controller, mut block) = (None, None);
    let mut f = fields(buf);
    while let Some((n, v)) = f.next_field()? {
        match (n, v) {
            (1 | 3 | 4 | 5, Value::Bytes(b)) => s[n as usize] = b,
            (6, Value::Varint(b)) => controller = Some(b != 0),
            (7, Value::Varint(b)) => block = Some(b != 0),
            (n, v) => return Err(unknown_field("OwnerReference", n, &v)),
        }
    }
    visitor.visit_map(Members::new([
        Some(("apiVersion", Node::Str(utf8(s[5])?))),
        block.map(|b| ("blockOwnerDeletion", Node::Bool(b))),
        controller.map(|c| ("controller", Node::Bool(c))),
        Some(("kind", Node::Str(utf8(s[1])?))),
        Some(("name", Node::Str(utf8(s[3])?))),
        Some(("uid", Node::Str(utf8(s[4])?))),
    ]))
}

/// `ManagedFieldsEntry` {1: manager, 2: operation, 3: apiVersion, 4: time, 6: fieldsType,
/// 7: fieldsV1 {1: raw JSON}, 8: subresource}.
fn managed_fields_entry<'de, V: Visitor<'de>>(
    buf: &'de [u8],
    visitor: V,
) -> Result<V::Value, DeError> {
    let mut s: [Option<&[u8]>; 9] = [None; 9];
    let mut f = fields(buf);
    while let Some((n, v)) = f.next_field()? {
        match (n, v) {
            (1..=4 | 6..=8, Value::Bytes(b)) => s[n as usize] = Some(b),
            (n, v) => return Err(unknown_field("ManagedFieldsEntry", n, &v)),
        }
    }
    let raw = s[7].map(fields_v1).transpose()?.flatten();
    visitor.visit_map(Members::new([
        string("apiVersion", s[3])?,
        string("fieldsType", s[6])?,
        raw.filter(|r| !r.is_empty())
            .map(|r| ("fieldsV1", Node::Json(r))),
        string("manager", s[1])?,
        string("operation", s[2])?,
        string("subresource", s[8])?,
        time("time", s[4])?,
    ]))
}

/// `FieldsV1` {1: raw JSON}: its text, if any.
fn fields_v1(buf: &[u8]) -> Result<Option<&[u8]>, DeError> {
    let mut raw = None;
    let mut f = fields(buf);
    while let Some((n, v)) = f.next_field()? {
        match (n, v) {
            (1, Value::Bytes(b)) => raw = Some(b),
            (n, v) => return Err(unknown_field("FieldsV1", n, &v)),
        }
    }
    Ok(raw)
}

#[cfg(test)]
mod tests {
    use super::super::protobuf_kinds::ItemKind;
    use super::*;

    fn decode_partial_item<K: DeserializeOwned>(index: usize, item: &[u8]) -> Result<K, Error> {
        ItemKind::PartialObjectMetadata.decoder()(index, item)
    }

    /// A length-delimited field.
    fn field(number: u8, body: &[u8]) -> Vec<u8> {
        assert!(body.len() < 128 && number < 16);
        [&[number << 3 | 2, body.len() as u8][..], body].concat()
    }

    /// An item whose metadata holds these fields (name "cm", namespace "ns" first).
    fn item(meta: &[Vec<u8>]) -> Vec<u8> {
        let mut m = [field(1, b"cm"), field(3, b"ns")].concat();
        m.extend(meta.concat());
        field(1, &m)
    }

    fn decode(item: &[u8]) -> Result<serde_json::Value, Error> {
        decode_partial_item(7, item)
    }

    #[test]
    fn an_owner_reference_has_its_four_strings_even_when_empty() {
        // kind "Deployment" (field 1), controller true (field 6); no name, uid or apiVersion.
        let owner = [field(1, b"Deployment"), vec![6 << 3, 1]].concat();
        let v = decode(&item(&[field(13, &owner)])).unwrap();
        assert_eq!(
            v["metadata"]["ownerReferences"],
            serde_json::json!([{"apiVersion": "", "kind": "Deployment", "name": "", "uid": "",
                "controller": true}])
        );
    }

    #[test]
    fn a_bad_item_is_an_error_naming_it() {
        // A label whose value is not UTF-8.
        let label = [field(1, b"app"), field(2, b"\xff")].concat();
        let err = decode(&item(&[field(11, &label)])).unwrap_err().to_string();
        assert!(err.contains("list item 7 (ns/cm)"), "{err}");
        assert!(err.contains("UTF-8"), "{err}");
        // fieldsV1 that is not JSON.
        let entry = [field(1, b"kubectl"), field(7, &field(1, b"{\"f:data\":"))].concat();
        // managedFields is field 17: a two-byte key.
        let managed = [&[17 << 3 | 2, 1, entry.len() as u8][..], &entry].concat();
        let err = decode(&item(&[managed])).unwrap_err().to_string();
        assert!(
            err.contains("list item 7 (ns/cm)") && err.contains("fieldsV1"),
            "{err}"
        );
    }

    #[test]
    fn a_field_this_decoder_does_not_know_is_an_error_naming_it() {
        let entry = |fields: &[Vec<u8>]| {
            let e = fields.concat();
            [&[17 << 3 | 2, 1, e.len() as u8][..], &e].concat()
        };
        let cases = [
            // ObjectMeta field 18 (a two-byte key), as one added after kcache-codec's table.
            (
                vec![vec![18 << 3 | 2, 1, 1, b'x']],
                "ObjectMeta field 18 (length-delimited)",
            ),
            // A known number with another wire type: `name` as a varint.
            (vec![vec![1 << 3, 5]], "ObjectMeta field 1 (a varint)"),
            (
                vec![field(13, &field(2, b"x"))],
                "OwnerReference field 2 (length-delimited)",
            ),
            (
                vec![entry(&[field(1, b"kubectl"), field(5, b"x")])],
                "ManagedFieldsEntry field 5 (length-delimited)",
            ),
            (
                vec![entry(&[field(
                    7,
                    &[field(1, b"{}"), vec![2 << 3, 1]].concat(),
                )])],
                "FieldsV1 field 2 (a varint)",
            ),
            (
                vec![field(8, &[8, 1, 3 << 3, 1])],
                "Time field 3 (a varint)",
            ),
            (
                vec![field(
                    11,
                    &[field(1, b"app"), field(2, b"web"), field(3, b"")].concat(),
                )],
                "map entry field 3 (length-delimited)",
            ),
        ];
        for (meta, names) in cases {
            let err = decode(&item(&meta)).unwrap_err();
            assert!(is_unknown_field(&err), "{err}");
            let err = err.to_string();
            assert!(err.contains("list item 7 (ns/cm)"), "{err}");
            assert!(err.contains(names), "{names}: {err}");
        }
        // A field of PartialObjectMetadata itself.
        let err = decode(&[item(&[]), field(2, b"x")].concat()).unwrap_err();
        assert!(is_unknown_field(&err), "{err}");
        assert!(err.to_string().contains("PartialObjectMetadata field 2"));
        // Nanoseconds of a time are known: the JSON form drops them too.
        let v = decode(&item(&[field(8, &[8, 1, 2 << 3, 5])])).unwrap();
        assert_eq!(v["metadata"]["creationTimestamp"], "1970-01-01T00:00:01Z");
        // A malformed item is not one with an unknown field: JSON would not help.
        let label = [field(1, b"app"), field(2, b"\xff")].concat();
        assert!(!is_unknown_field(
            &decode(&item(&[field(11, &label)])).unwrap_err()
        ));
    }

    #[test]
    fn list_metadata_skips_what_it_does_not_know_as_the_json_path_does() {
        // selfLink (1), resourceVersion (2) and a field 9: kcache-core's `ListMeta` reads
        // `{"selfLink": …, "resourceVersion": "5", "x": …}` as resourceVersion alone.
        let meta = list_meta(
            &[
                field(1, b"/api/v1/configmaps"),
                field(2, b"5"),
                field(9, b"x"),
            ]
            .concat(),
        )
        .unwrap();
        let from_json: ListMeta = serde_json::from_value(
            serde_json::json!({"selfLink": "/api/v1/configmaps", "resourceVersion": "5", "x": "x"}),
        )
        .unwrap();
        assert_eq!(meta, from_json);
    }

    /// A managedFields entry of field 17 whose fieldsV1 is `json`.
    fn managed_fields(json: &[u8]) -> Vec<u8> {
        let entry = [field(1, b"kubectl"), field(7, &field(1, json))].concat();
        [&[17 << 3 | 2, 1, entry.len() as u8][..], &entry].concat()
    }

    #[test]
    fn fields_v1_answers_serde_jsons_raw_value_handshake() {
        #[derive(serde::Deserialize)]
        struct Item {
            metadata: Meta,
        }
        #[derive(serde::Deserialize)]
        struct Meta {
            #[serde(rename = "managedFields")]
            managed_fields: Vec<Entry>,
        }
        #[derive(serde::Deserialize)]
        struct Entry {
            #[serde(rename = "fieldsV1")]
            fields_v1: Box<serde_json::value::RawValue>,
        }
        let text = br#"{"f:data":{".":{},"f:k":{}}}"#;
        assert!(!raw_json::checked_before(text));
        // The second time the text is not parsed again, and comes out the same.
        for _ in 0..2 {
            let decoded: Item = decode_partial_item(7, &item(&[managed_fields(text)])).unwrap();
            assert_eq!(
                decoded.metadata.managed_fields[0]
                    .fields_v1
                    .get()
                    .as_bytes(),
                text
            );
            assert!(raw_json::checked_before(text));
        }
        // Text that is not JSON fails as it does read as a value, every time: it is never
        // remembered.
        let broken = b"{\"f:data\":";
        for _ in 0..2 {
            let err = decode_partial_item::<Item>(7, &item(&[managed_fields(broken)]))
                .err()
                .unwrap()
                .to_string();
            assert!(
                err.contains("list item 7 (ns/cm)") && err.contains("fieldsV1"),
                "{err}"
            );
            assert!(!raw_json::checked_before(broken));
        }
    }

    /// Every object's keys, in the order they come, depth first.
    struct KeyOrders(Vec<Vec<String>>);

    impl<'de> serde::Deserialize<'de> for KeyOrders {
        fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            d.deserialize_any(KeyOrderVisitor)
        }
    }

    struct KeyOrderVisitor;

    impl<'de> Visitor<'de> for KeyOrderVisitor {
        type Value = KeyOrders;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("any value")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<KeyOrders, A::Error> {
            let (mut keys, mut nested) = (vec![], vec![]);
            while let Some(k) = map.next_key::<String>()? {
                keys.push(k);
                nested.extend(map.next_value::<KeyOrders>()?.0);
            }
            Ok(KeyOrders([vec![keys], nested].concat()))
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<KeyOrders, A::Error> {
            let mut nested = vec![];
            while let Some(KeyOrders(n)) = seq.next_element()? {
                nested.extend(n);
            }
            Ok(KeyOrders(nested))
        }
        fn visit_str<E>(self, _: &str) -> Result<KeyOrders, E> {
            Ok(KeyOrders(vec![]))
        }
        fn visit_i64<E>(self, _: i64) -> Result<KeyOrders, E> {
            Ok(KeyOrders(vec![]))
        }
        fn visit_u64<E>(self, _: u64) -> Result<KeyOrders, E> {
            Ok(KeyOrders(vec![]))
        }
        fn visit_bool<E>(self, _: bool) -> Result<KeyOrders, E> {
            Ok(KeyOrders(vec![]))
        }
    }

    #[test]
    fn members_come_in_their_keys_order() {
        // Labels, an owner, a managedFields entry, times, generation: every kind of member.
        let label = [field(1, b"app"), field(2, b"web")].concat();
        let owner = [
            field(1, b"ReplicaSet"),
            field(5, b"apps/v1"),
            vec![6 << 3, 1],
        ]
        .concat();
        let entry = [
            field(1, b"kubectl"),
            field(2, b"Update"),
            field(4, &[8, 9]),
            field(7, &field(1, br#"{"f:a":{},"f:b":{}}"#)),
        ]
        .concat();
        let managed = [&[17 << 3 | 2, 1, entry.len() as u8][..], &entry].concat();
        let meta = [
            field(5, b"uid-1"),
            field(6, b"42"),
            vec![7 << 3, 3],
            field(8, &[8, 7]),
            field(11, &label),
            field(13, &owner),
            managed,
        ];
        let KeyOrders(orders) = decode_partial_item(7, &item(&meta)).unwrap();
        assert_eq!(orders[0], ["apiVersion", "kind", "metadata"]);
        // The item, its metadata, labels, the entry, its fieldsV1 (as written) and two empty
        // objects in it, the owner.
        assert_eq!(orders.len(), 8, "{orders:?}");
        for keys in orders {
            assert!(keys.is_sorted(), "{keys:?}");
        }
    }

    #[test]
    fn times_are_written_as_the_json_form_has_them() {
        // creationTimestamp (field 8) {1: seconds}.
        let time = |s: u8| field(8, &[8, s]);
        // 17 takes 1's place among the seconds remembered, and 1 comes back.
        for (seconds, expected) in [
            (1, "1970-01-01T00:00:01Z"),
            (1, "1970-01-01T00:00:01Z"),
            (17, "1970-01-01T00:00:17Z"),
            (1, "1970-01-01T00:00:01Z"),
            (100, "1970-01-01T00:01:40Z"),
        ] {
            let v = decode(&item(&[time(seconds)])).unwrap();
            assert_eq!(v["metadata"]["creationTimestamp"], expected);
        }
    }
}
