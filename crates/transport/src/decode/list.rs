//! The streaming list decoder: the items of a list response body are decoded one at a time as
//! their last byte arrives, so a 100k-object list never holds the whole body nor a second copy
//! of it (client-go and kube-rs both buffer the response, then decode it).
//!
//! It reads the top-level object itself — keys, `:`, `,` — and hands nested values to the
//! [`ValueScanner`](super::scanner::ValueScanner): `items` elements and `metadata` are captured
//! and decoded, every other value (`kind`, `apiVersion`, ...) is skipped unbuffered. `metadata`
//! may come before or after `items`.

use std::collections::VecDeque;
use std::fmt;
use std::marker::PhantomData;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use futures_core::Stream;
use kcache_core::{BoxError, Error, ListMeta, ObjectList};
use serde::de::DeserializeOwned;

use super::batch::{joined, max_in_flight, spawn_decode, RawBatch};
use super::json_text::from_json;
use super::naming::named;
use super::protobuf::is_unknown_field;
use super::protobuf_kinds::ItemKind;
use super::protobuf_list::ListSplitter;
use super::scanner::{is_ws, too_large, unexpected_byte, Capture, ValueScanner};
use super::trim::{keep, Trim};

/// The longest key remembered; longer keys are not ones the decoder looks for.
const MAX_KEY: usize = 16;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Key {
    Items,
    Metadata,
    Other,
}

#[derive(Debug)]
enum State {
    /// Before the opening `{`.
    Start,
    /// After `{`: a key or `}`.
    FirstKey,
    /// After `,` in the top-level object: a key.
    NextKey,
    /// Inside a key string.
    InKey { escape: bool },
    /// After a key: `:`.
    Colon(Key),
    /// After `:`: the value's first byte.
    Value(Key),
    /// Skipping a value nobody reads.
    Skip(ValueScanner),
    /// Capturing `metadata`.
    Metadata,
    /// After `[` of `items`: an item or `]`.
    FirstItem,
    /// After `,` inside `items`: an item.
    NextItem,
    /// Capturing an item.
    Item,
    /// After an item: `,` or `]`.
    AfterItem,
    /// After a top-level value: `,` or `}`.
    AfterValue,
    /// After the closing `}`: only whitespace.
    Done,
}

/// Decodes a list body chunk by chunk, handing over each item as soon as it is complete.
pub struct ListDecoder<K> {
    state: State,
    key: Vec<u8>,
    capture: Capture,
    metadata: Option<ListMeta>,
    items_seen: usize,
    max_object_size: usize,
    offset: u64,
    _k: PhantomData<fn() -> K>,
}

impl<K> fmt::Debug for ListDecoder<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ListDecoder")
            .field("state", &self.state)
            .field("items_seen", &self.items_seen)
            .field("offset", &self.offset)
            .finish()
    }
}

impl<K: DeserializeOwned> ListDecoder<K> {
    /// A decoder failing on any item larger than `max_object_size` bytes.
    pub fn new(max_object_size: usize) -> Self {
        ListDecoder {
            state: State::Start,
            key: Vec::with_capacity(MAX_KEY),
            capture: Capture::default(),
            metadata: None,
            items_seen: 0,
            max_object_size,
            offset: 0,
            _k: PhantomData,
        }
    }

    /// The list's metadata, once it has been read (it may come after the items).
    pub fn metadata(&self) -> Option<&ListMeta> {
        self.metadata.as_ref()
    }

    fn unexpected(&self, found: u8, at: usize, expected: &str) -> Error {
        unexpected_byte("list", self.offset + at as u64, found, expected)
    }

    /// Decodes every item that completes in `chunk`, in order, into `out`.
    pub fn push(&mut self, chunk: &[u8], out: &mut VecDeque<K>) -> Result<(), Error> {
        self.push_raw(chunk, |index, bytes| {
            out.push_back(decode_item(index, bytes)?);
            Ok(())
        })
    }

    /// Like [`ListDecoder::push`], but hands over each complete item's JSON with its index in
    /// the list instead of decoding it (for decoding elsewhere, e.g. on other threads).
    pub fn push_raw(
        &mut self,
        chunk: &[u8],
        mut on_item: impl FnMut(usize, &[u8]) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let mut i = 0;
        while i < chunk.len() {
            let b = chunk[i];
            // States that read single structural bytes skip whitespace first.
            let structural = !matches!(
                self.state,
                State::InKey { .. } | State::Skip(_) | State::Metadata | State::Item
            );
            if structural && is_ws(b) {
                i += 1;
                continue;
            }
            match &mut self.state {
                State::Start => {
                    if b != b'{' {
                        return Err(self.unexpected(b, i, "'{' opening the list"));
                    }
                    self.state = State::FirstKey;
                    i += 1;
                }
                State::FirstKey | State::NextKey => {
                    if b == b'}' && matches!(self.state, State::FirstKey) {
                        self.state = State::Done;
                    } else if b == b'"' {
                        self.key.clear();
                        self.state = State::InKey { escape: false };
                    } else {
                        return Err(self.unexpected(b, i, "a key"));
                    }
                    i += 1;
                }
                State::InKey { escape } => {
                    if *escape {
                        *escape = false;
                    } else if b == b'\\' {
                        *escape = true;
                    } else if b == b'"' {
                        let key = match self.key.as_slice() {
                            b"items" => Key::Items,
                            b"metadata" => Key::Metadata,
                            _ => Key::Other,
                        };
                        self.state = State::Colon(key);
                        i += 1;
                        continue;
                    }
                    if self.key.len() <= MAX_KEY {
                        self.key.push(b);
                    }
                    i += 1;
                }
                State::Colon(key) => {
                    if b != b':' {
                        return Err(self.unexpected(b, i, "':'"));
                    }
                    self.state = State::Value(*key);
                    i += 1;
                }
                State::Value(key) => match (*key, b) {
                    (Key::Items, b'[') => {
                        self.state = State::FirstItem;
                        i += 1;
                    }
                    (Key::Metadata, b'{') => self.state = State::Metadata,
                    (Key::Items | Key::Metadata, b'n') | (Key::Other, _) => {
                        self.state = State::Skip(ValueScanner::default())
                    }
                    (Key::Items, _) => return Err(self.unexpected(b, i, "'[' opening items")),
                    (Key::Metadata, _) => {
                        return Err(self.unexpected(b, i, "'{' opening metadata"))
                    }
                },
                State::Skip(scanner) => match scanner.feed(&chunk[i..]) {
                    Some(used) => {
                        i += used;
                        self.state = State::AfterValue;
                    }
                    None => i = chunk.len(),
                },
                State::Metadata => {
                    let limit = self.max_object_size;
                    match self
                        .capture
                        .feed(&chunk[i..], limit)
                        .map_err(|e| too_large("list metadata", e, limit))?
                    {
                        Some((value, used)) => {
                            let meta = serde_json::from_slice(value)
                                .map_err(|e| Error::decode("list metadata", e))?;
                            self.metadata = Some(meta);
                            self.capture.reset();
                            i += used;
                            self.state = State::AfterValue;
                        }
                        None => i = chunk.len(),
                    }
                }
                State::FirstItem | State::NextItem => {
                    if b == b']' && matches!(self.state, State::FirstItem) {
                        self.state = State::AfterValue;
                        i += 1;
                    } else {
                        self.state = State::Item;
                    }
                }
                State::Item => {
                    let limit = self.max_object_size;
                    let index = self.items_seen;
                    match self
                        .capture
                        .feed(&chunk[i..], limit)
                        .map_err(|e| too_large(&format!("list item {index}"), e, limit))?
                    {
                        Some((value, used)) => {
                            on_item(index, value)?;
                            self.items_seen += 1;
                            self.capture.reset();
                            i += used;
                            self.state = State::AfterItem;
                        }
                        None => i = chunk.len(),
                    }
                }
                State::AfterItem => {
                    self.state = match b {
                        b',' => State::NextItem,
                        b']' => State::AfterValue,
                        _ => return Err(self.unexpected(b, i, "',' or ']' after an item")),
                    };
                    i += 1;
                }
                State::AfterValue => {
                    self.state = match b {
                        b',' => State::NextKey,
                        b'}' => State::Done,
                        _ => return Err(self.unexpected(b, i, "',' or '}'")),
                    };
                    i += 1;
                }
                State::Done => return Err(self.unexpected(b, i, "the end of the body")),
            }
        }
        self.offset += chunk.len() as u64;
        Ok(())
    }

    /// Checks the body ended after the list's closing `}`; returns the list's metadata.
    pub fn finish(&mut self) -> Result<ListMeta, Error> {
        if let State::Skip(s) = &self.state {
            if s.complete_at_end() {
                self.state = State::AfterValue;
            }
        }
        if !matches!(self.state, State::Done) {
            return Err(Error::decode(
                "list",
                format!(
                    "the body ended before the list did (truncated after {} bytes, {} items)",
                    self.offset, self.items_seen
                ),
            ));
        }
        Ok(self.metadata.take().unwrap_or_default())
    }
}

/// Decodes the item at `index` of a list (read as text when it is UTF-8: `json_text`).
fn decode_item<K: DeserializeOwned>(index: usize, bytes: &[u8]) -> Result<K, Error> {
    from_json(bytes, PhantomData::<K>)
        .map_err(|e| Error::decode(named(&format!("list item {index}"), bytes), e))
}

/// What splits a list body into its items: a JSON list, or a protobuf list (whose items decode
/// straight from protobuf).
#[derive(Debug)]
enum Splitter<K> {
    Json(ListDecoder<K>),
    Protobuf(ListSplitter),
}

impl<K: DeserializeOwned> Splitter<K> {
    fn push_raw(
        &mut self,
        chunk: &[u8],
        on_item: impl FnMut(usize, &[u8]) -> Result<(), Error>,
    ) -> Result<(), Error> {
        match self {
            Splitter::Json(d) => d.push_raw(chunk, on_item),
            Splitter::Protobuf(s) => s.push(chunk, on_item),
        }
    }

    /// Decodes every item that completes in `chunk`, in order, into `out`.
    fn push(&mut self, chunk: &[u8], out: &mut VecDeque<K>) -> Result<(), Error> {
        let decode = self.item_decoder();
        self.push_raw(chunk, |index, bytes| {
            out.push_back(decode(index, bytes)?);
            Ok(())
        })
    }

    /// How an item's bytes decode.
    fn item_decoder(&self) -> fn(usize, &[u8]) -> Result<K, Error> {
        match self {
            Splitter::Json(_) => decode_item,
            Splitter::Protobuf(s) => s.kind().decoder(),
        }
    }

    fn metadata(&self) -> Option<&ListMeta> {
        match self {
            Splitter::Json(d) => d.metadata(),
            Splitter::Protobuf(s) => s.metadata(),
        }
    }

    fn finish(&mut self) -> Result<ListMeta, Error> {
        match self {
            Splitter::Json(d) => d.finish(),
            Splitter::Protobuf(s) => s.finish(),
        }
    }
}

pin_project_lite::pin_project! {
    /// The items of a list response, decoded one at a time as the body arrives.
    ///
    /// After the stream has ended, [`ListStream::metadata`] holds the list's resourceVersion and
    /// continue token (the server may send `metadata` before or after `items`).
    pub struct ListStream<S, K> {
        #[pin]
        body: S,
        decoder: Splitter<K>,
        ready: VecDeque<K>,
        metadata: Option<ListMeta>,
        failed: Option<Error>,
        done: bool,
        trim: Trim<K>,
        on_unknown_field: Option<OnUnknownField>,
    }
}

/// What a list calls when it fails on an item holding a protobuf field the decoder does not
/// know (`protobuf::is_unknown_field`): the client then lists the resource in JSON.
pub(crate) type OnUnknownField = Box<dyn FnOnce() + Send + Sync>;

/// Calls `note` if `failure` is an unknown protobuf field.
fn note_unknown_field(failure: Option<&Error>, note: Option<OnUnknownField>) {
    if let (Some(e), Some(note)) = (failure, note) {
        if is_unknown_field(e) {
            note();
        }
    }
}

impl<S, K: DeserializeOwned> ListStream<S, K> {
    /// Decodes `body`, failing on items larger than `max_object_size` bytes.
    pub fn new(body: S, max_object_size: usize) -> Self {
        Self::split_by(body, Splitter::Json(ListDecoder::new(max_object_size)))
    }

    /// Decodes `body`, a protobuf list of `kind` (what a metadata-only list asks for first, as
    /// client-go's metadata client does, and a list of a built-in kind kcache knows the message
    /// of): each item decodes as `K` straight from its protobuf bytes, seen as the JSON the
    /// server would have sent.
    pub(crate) fn protobuf(body: S, kind: ItemKind, max_object_size: usize) -> Self {
        Self::split_by(
            body,
            Splitter::Protobuf(ListSplitter::new(kind, max_object_size)),
        )
    }

    fn split_by(body: S, decoder: Splitter<K>) -> Self {
        ListStream {
            body,
            decoder,
            ready: VecDeque::new(),
            metadata: None,
            failed: None,
            done: false,
            trim: keep,
            on_unknown_field: None,
        }
    }

    /// Calls `note` if the list fails on an item holding a protobuf field the decoder does not
    /// know.
    pub(crate) fn on_unknown_field(mut self, note: OnUnknownField) -> Self {
        self.on_unknown_field = Some(note);
        self
    }

    /// Applies `trim` to every item right after decoding it, on the thread that
    /// decoded it ([`exact_copy`](super::exact_copy) for a cache that keeps them).
    pub fn with_trim(mut self, trim: Trim<K>) -> Self {
        self.trim = trim;
        self
    }

    /// The list's metadata: complete once the stream has ended without error; before that, what
    /// has been read so far (if `metadata` came before `items`).
    pub fn metadata(&self) -> Option<&ListMeta> {
        self.metadata.as_ref().or(self.decoder.metadata())
    }
}

impl<S, E, K> ListStream<S, K>
where
    S: Stream<Item = Result<Bytes, E>>,
    E: Into<BoxError>,
    K: DeserializeOwned,
{
    /// Reads the whole list into one page.
    ///
    /// Items are decoded as tokio tasks (`batch`), in batches of about 256 KiB of JSON, while
    /// this task goes on reading and splitting the body: decoding typed objects costs far more
    /// than reading them, and a large list otherwise decodes on one core. At most one batch per
    /// core is in flight, so memory stays bounded; a list smaller than one batch is decoded
    /// right here, and so is everything when no tokio runtime is running. Items keep their order,
    /// and an error is the first one in body order, as if decoded one by one.
    pub async fn into_list(self) -> Result<ObjectList<K>, Error>
    where
        K: Send + 'static,
    {
        let trim = self.trim;
        self.collect(trim).await
    }

    /// [`into_list`](Self::into_list) with each item in an `Arc`, wrapped on the thread that
    /// decoded it: the list is never held as `Vec<K>` (what a cache's list wants).
    pub async fn into_shared_list(self) -> Result<ObjectList<Arc<K>>, Error>
    where
        K: Send + Sync + 'static,
    {
        let trim = self.trim;
        self.collect(move |item| Arc::new(trim(item))).await
    }

    /// Reads the whole list, each item through `finish` where it was decoded.
    async fn collect<T: Send + 'static>(
        mut self,
        finish: impl Fn(K) -> T + Copy + Send + 'static,
    ) -> Result<ObjectList<T>, Error>
    where
        K: Send + 'static,
    {
        let note = self.on_unknown_field.take();
        let list = self.collect_items(finish).await;
        note_unknown_field(list.as_ref().err(), note);
        list
    }

    /// [`collect`](Self::collect) but for its note.
    async fn collect_items<T: Send + 'static>(
        self,
        finish: impl Fn(K) -> T + Copy + Send + 'static,
    ) -> Result<ObjectList<T>, Error>
    where
        K: Send + 'static,
    {
        let ListStream {
            body,
            mut decoder,
            ready,
            metadata,
            failed,
            done,
            trim: _,
            on_unknown_field: _,
        } = self;
        let mut items: Vec<T> = ready.into_iter().map(finish).collect();
        // Read to its end already (through `Stream`): what it ended with stands.
        if done {
            return match failed {
                Some(e) => Err(e),
                None => Ok(ObjectList {
                    metadata: metadata.unwrap_or_default(),
                    items,
                }),
            };
        }
        let decode = decoder.item_decoder();
        let mut body = std::pin::pin!(body);
        let mut batch = RawBatch::default();
        let mut in_flight: VecDeque<tokio::task::JoinHandle<Result<Vec<T>, Error>>> =
            VecDeque::new();
        let pool = tokio::runtime::Handle::try_current().ok();
        let max_in_flight = max_in_flight();
        let failure = loop {
            let chunk = match futures_util::StreamExt::next(&mut body).await {
                Some(Ok(chunk)) => chunk,
                Some(Err(e)) => break Some(Error::Request(e.into())),
                None => break None,
            };
            if let Err(e) = decoder.push_raw(&chunk, |index, bytes| {
                batch.push(index, bytes);
                Ok(())
            }) {
                break Some(e);
            }
            if batch.bytes() >= RawBatch::TARGET_BYTES {
                let full = std::mem::take(&mut batch);
                let Some(pool) = &pool else {
                    items.extend(decode_batch(full, decode, finish)?);
                    continue;
                };
                in_flight.push_back(spawn_decode(pool, move || {
                    decode_batch(full, decode, finish)
                }));
                while in_flight.len() > max_in_flight {
                    if let Some(done) = in_flight.pop_front() {
                        items.extend(joined(done.await, "list items")?);
                    }
                }
            }
        };
        // The rest decodes here while the pool finishes; the items before it come first.
        let last = decode_batch(batch, decode, finish);
        for done in in_flight {
            items.extend(joined(done.await, "list items")?);
        }
        items.extend(last?);
        if let Some(e) = failure {
            return Err(e);
        }
        let metadata = decoder.finish()?;
        Ok(ObjectList { metadata, items })
    }
}

/// Decodes every item of `batch` with `decode`, stopping at the first failure.
fn decode_batch<K, T>(
    batch: RawBatch,
    decode: fn(usize, &[u8]) -> Result<K, Error>,
    finish: impl Fn(K) -> T,
) -> Result<Vec<T>, Error> {
    let mut out = Vec::with_capacity(batch.len());
    for (index, bytes) in batch.values() {
        out.push(finish(decode(index, bytes)?));
    }
    Ok(out)
}

impl<S, E, K> Stream for ListStream<S, K>
where
    S: Stream<Item = Result<Bytes, E>>,
    E: Into<BoxError>,
    K: DeserializeOwned,
{
    type Item = Result<K, Error>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let mut this = self.project();
        loop {
            if let Some(item) = this.ready.pop_front() {
                return Poll::Ready(Some(Ok((this.trim)(item))));
            }
            if *this.done {
                let failed = this.failed.take();
                note_unknown_field(failed.as_ref(), this.on_unknown_field.take());
                return Poll::Ready(failed.map(Err));
            }
            match std::task::ready!(this.body.as_mut().poll_next(cx)) {
                Some(Ok(chunk)) => {
                    if let Err(e) = this.decoder.push(&chunk, this.ready) {
                        *this.done = true;
                        *this.failed = Some(e);
                    }
                }
                Some(Err(e)) => {
                    *this.done = true;
                    *this.failed = Some(Error::Request(e.into()));
                }
                None => {
                    *this.done = true;
                    match this.decoder.finish() {
                        Ok(meta) => *this.metadata = Some(meta),
                        Err(e) => *this.failed = Some(e),
                    }
                }
            }
        }
    }
}
