//! The watch body decoder: a stream of concatenated `{"type":..,"object":..}` JSON values
//! (apimachinery's `watch.Event` frames), decoded with no reliance on line or chunk boundaries.

use std::collections::VecDeque;
use std::fmt;
use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use futures_core::Stream;
use kcache_core::{Bookmark, BoxError, Error, Status, WatchEvent, INITIAL_EVENTS_END_ANNOTATION};
use serde::de::{self, DeserializeOwned, DeserializeSeed, IgnoredAny, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;

use super::batch::{joined, max_in_flight, spawn_decode, RawBatch};
use super::json_text::from_json;
use super::naming::named;
use super::scanner::{is_ws, too_large, unexpected_byte, Capture};
use super::trim::{keep, Trim};

/// The default largest single JSON value (one watch event, one list item) the decoders accept.
///
/// etcd refuses requests over 1.5 MiB, and an object's JSON can be a few times its stored
/// protobuf size; 16 MiB leaves room for the largest real objects while bounding what a broken or
/// hostile server can make the client buffer.
pub const DEFAULT_MAX_OBJECT_SIZE: usize = 16 * 1024 * 1024;

/// Decodes watch events from body chunks as they arrive.
pub struct WatchDecoder<K> {
    capture: Capture,
    max_object_size: usize,
    offset: u64,
    _k: PhantomData<fn() -> K>,
}

impl<K> fmt::Debug for WatchDecoder<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WatchDecoder")
            .field("max_object_size", &self.max_object_size)
            .field("offset", &self.offset)
            .finish()
    }
}

impl<K: DeserializeOwned> WatchDecoder<K> {
    /// A decoder failing on any event larger than `max_object_size` bytes.
    pub fn new(max_object_size: usize) -> Self {
        WatchDecoder {
            capture: Capture::default(),
            max_object_size,
            offset: 0,
            _k: PhantomData,
        }
    }

    /// Decodes every event that completes in `chunk`, in order, into `out`. An event that is
    /// complete but does not decode is skipped and the events after it are still decoded; the
    /// first such error is returned after the chunk (use [`push_each`](Self::push_each) to get
    /// each error in its place).
    pub fn push(&mut self, chunk: &[u8], out: &mut VecDeque<WatchEvent<K>>) -> Result<(), Error> {
        let mut first = None;
        self.push_each(chunk, &mut |ev| match ev {
            Ok(ev) => out.push_back(ev),
            Err(e) => {
                first.get_or_insert(e);
            }
        })?;
        first.map_or(Ok(()), Err)
    }

    /// Hands `on_event` every event that completes in `chunk`, in order: decoded, or the error
    /// (naming the object) of one that is well framed but does not decode as `K` — the body goes
    /// on after it. Fails on what breaks the framing: a byte that cannot start an event, or an
    /// event over the size limit (named from its first bytes).
    pub fn push_each(
        &mut self,
        chunk: &[u8],
        on_event: &mut dyn FnMut(Result<WatchEvent<K>, Error>),
    ) -> Result<(), Error> {
        self.push_raw(chunk, &mut |raw| on_event(decode_event(raw)))
    }

    /// Like [`push_each`](Self::push_each), but hands over each complete event's JSON instead of
    /// decoding it (for decoding elsewhere, e.g. on other threads, with [`decode_event`]).
    pub fn push_raw(&mut self, chunk: &[u8], on_raw: &mut dyn FnMut(&[u8])) -> Result<(), Error> {
        let mut i = 0;
        while i < chunk.len() {
            if !self.capture.in_progress() {
                while i < chunk.len() && is_ws(chunk[i]) {
                    i += 1;
                }
                if i == chunk.len() {
                    break;
                }
                if chunk[i] != b'{' {
                    let at = self.offset + i as u64;
                    return Err(unexpected_byte("watch event", at, chunk[i], "'{'"));
                }
            }
            let fed = self
                .capture
                .feed(&chunk[i..], self.max_object_size)
                .map_err(|e| too_large("watch event", e, self.max_object_size))?;
            match fed {
                Some((value, used)) => {
                    on_raw(value);
                    i += used;
                    self.capture.reset();
                }
                None => i = chunk.len(),
            }
        }
        self.offset += chunk.len() as u64;
        Ok(())
    }

    /// Checks the body ended between events: a truncated final event is an error.
    pub fn finish(&self) -> Result<(), Error> {
        if self.capture.in_progress() {
            return Err(Error::decode(
                "watch event",
                format!(
                    "the body ended inside an event (truncated after {} bytes)",
                    self.offset
                ),
            ));
        }
        Ok(())
    }
}

/// Decodes one complete watch event (read as text when it is UTF-8, as a list's items are:
/// `json_text`).
pub fn decode_event<K: DeserializeOwned>(bytes: &[u8]) -> Result<WatchEvent<K>, Error> {
    from_json(bytes, EventSeed::<K>(PhantomData))
        .map_err(|e| Error::decode(named("watch event", bytes), e))
}

#[derive(Clone, Copy)]
enum EventType {
    Added,
    Modified,
    Deleted,
    Bookmark,
    Error,
}

impl EventType {
    fn parse<E: de::Error>(s: &str) -> Result<Self, E> {
        Ok(match s {
            "ADDED" => EventType::Added,
            "MODIFIED" => EventType::Modified,
            "DELETED" => EventType::Deleted,
            "BOOKMARK" => EventType::Bookmark,
            "ERROR" => EventType::Error,
            other => return Err(E::custom(format!("unknown watch event type {other:?}"))),
        })
    }
}

#[derive(Deserialize)]
#[serde(field_identifier, rename_all = "lowercase")]
enum Field {
    Type,
    Object,
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
struct BookmarkObject {
    #[serde(default)]
    metadata: BookmarkMeta,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct BookmarkMeta {
    #[serde(default)]
    resource_version: String,
    #[serde(default)]
    annotations: Option<std::collections::BTreeMap<String, String>>,
}

/// The object of an event, decoded directly as the type its event type names.
struct ObjectSeed<K>(EventType, PhantomData<K>);

impl<'de, K: DeserializeOwned> DeserializeSeed<'de> for ObjectSeed<K> {
    type Value = WatchEvent<K>;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        Ok(match self.0 {
            EventType::Added => WatchEvent::Added(K::deserialize(d)?),
            EventType::Modified => WatchEvent::Modified(K::deserialize(d)?),
            EventType::Deleted => WatchEvent::Deleted(K::deserialize(d)?),
            EventType::Error => WatchEvent::Error(Status::deserialize(d)?),
            EventType::Bookmark => {
                let b = BookmarkObject::deserialize(d)?;
                let initial_events_end = b
                    .metadata
                    .annotations
                    .as_ref()
                    .and_then(|a| a.get(INITIAL_EVENTS_END_ANNOTATION))
                    .is_some_and(|v| v == "true");
                WatchEvent::Bookmark(Bookmark {
                    resource_version: b.metadata.resource_version,
                    initial_events_end,
                })
            }
        })
    }
}

struct EventSeed<K>(PhantomData<K>);

impl<'de, K: DeserializeOwned> DeserializeSeed<'de> for EventSeed<K> {
    type Value = WatchEvent<K>;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de, K: DeserializeOwned> Visitor<'de> for EventSeed<K> {
    type Value = WatchEvent<K>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a watch event object with \"type\" and \"object\"")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut ty: Option<EventType> = None;
        let mut event: Option<WatchEvent<K>> = None;
        // The object arrived before its type: kept unparsed until the type is known.
        let mut raw: Option<&'de RawValue> = None;
        while let Some(field) = map.next_key::<Field>()? {
            match field {
                Field::Type => {
                    let s: std::borrow::Cow<'de, str> = map.next_value()?;
                    ty = Some(EventType::parse(&s)?);
                }
                Field::Object => match ty {
                    Some(t) => event = Some(map.next_value_seed(ObjectSeed(t, PhantomData))?),
                    None => raw = Some(map.next_value()?),
                },
                Field::Other => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        let ty = ty.ok_or_else(|| de::Error::missing_field("type"))?;
        if let Some(ev) = event {
            return Ok(ev);
        }
        let raw = raw.ok_or_else(|| de::Error::missing_field("object"))?;
        let mut de = serde_json::Deserializer::from_str(raw.get());
        ObjectSeed(ty, PhantomData)
            .deserialize(&mut de)
            .map_err(de::Error::custom)
    }
}

/// One decoded event, or the error of one that did not decode.
type Decoded<K> = Result<WatchEvent<K>, Error>;

/// Events waiting to be handed out, in body order.
enum Slot<K> {
    Event(Decoded<K>),
    /// Events decoding in tasks of their own.
    Batch(tokio::task::JoinHandle<Result<Vec<Decoded<K>>, Error>>),
}

/// Events whose JSON is at most this big together decode on the reading task: a lone event (the
/// usual watch) goes out without a thread hop.
const INLINE_MAX_BYTES: usize = 16 << 10;

pin_project_lite::pin_project! {
    /// The events of a watch response body, decoded as chunks arrive. Ends cleanly at a clean end
    /// of body (the server's timeout). An event that does not decode is one error item and the
    /// stream goes on; a framing or transport failure is one error item and ends it.
    ///
    /// Events that arrive together beyond [`INLINE_MAX_BYTES`] (a watch-list's initial events, a
    /// burst of changes) decode as tokio tasks in batches (`batch`), one per core at most, while
    /// this stream reads on, as the list decoder's items do; they are handed out in body order.
    /// Whatever the body holds when it has nothing more for now is decoded and handed out at
    /// once, so a lone event is never held back for company.
    pub struct WatchEventStream<S, K> {
        #[pin]
        body: S,
        decoder: WatchDecoder<K>,
        queue: VecDeque<Slot<K>>,
        raw: RawBatch,
        in_flight: usize,
        max_in_flight: usize,
        decoding: Decoding<K>,
        done: bool,
    }
}

/// Where and how events decode: batches as tasks of this runtime (if any), each object
/// through `trim`.
struct Decoding<K> {
    pool: Option<tokio::runtime::Handle>,
    trim: Trim<K>,
}

impl<S, K: DeserializeOwned> WatchEventStream<S, K> {
    /// Decodes `body`, failing on events larger than `max_object_size` bytes; batches decode on
    /// tasks of the current tokio runtime (inline when there is none).
    pub fn new(body: S, max_object_size: usize) -> Self {
        WatchEventStream {
            body,
            decoder: WatchDecoder::new(max_object_size),
            queue: VecDeque::new(),
            raw: RawBatch::default(),
            in_flight: 0,
            max_in_flight: max_in_flight(),
            decoding: Decoding {
                pool: tokio::runtime::Handle::try_current().ok(),
                trim: keep,
            },
            done: false,
        }
    }

    /// Applies `trim` to every object right after decoding it, on the thread that
    /// decoded it ([`exact_copy`](super::exact_copy) for a cache that keeps them).
    pub fn with_trim(mut self, trim: Trim<K>) -> Self {
        self.decoding.trim = trim;
        self
    }
}

/// Decodes every event of `batch`, each to its own result.
fn decode_events<K: DeserializeOwned>(batch: RawBatch, trim: Trim<K>) -> Vec<Decoded<K>> {
    batch
        .values()
        .map(|(_, raw)| decode_event(raw).map(|ev| ev.map(trim)))
        .collect()
}

impl<S, E, K> Stream for WatchEventStream<S, K>
where
    S: Stream<Item = Result<Bytes, E>>,
    E: Into<BoxError>,
    K: DeserializeOwned + Send + 'static,
{
    type Item = Result<WatchEvent<K>, Error>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let mut this = self.project();
        // The body said it has nothing for now (its waker is set): stop reading in this call.
        let mut body_waits = false;
        loop {
            match this.queue.front_mut() {
                Some(Slot::Event(_)) => {
                    let Some(Slot::Event(ev)) = this.queue.pop_front() else {
                        unreachable!("the front was an event");
                    };
                    return Poll::Ready(Some(ev));
                }
                Some(Slot::Batch(handle)) => {
                    // Polled before any `Pending` is returned, so its completion wakes us.
                    if let Poll::Ready(result) = Pin::new(handle).poll(cx) {
                        this.queue.pop_front();
                        *this.in_flight -= 1;
                        match joined(result, "watch events") {
                            Ok(events) => {
                                for ev in events.into_iter().rev() {
                                    this.queue.push_front(Slot::Event(ev));
                                }
                            }
                            Err(e) => this.queue.push_front(Slot::Event(Err(e))),
                        }
                        continue;
                    }
                    // Read on while the batch decodes, unless every core has one already.
                    if body_waits || *this.in_flight >= *this.max_in_flight {
                        return Poll::Pending;
                    }
                }
                None if body_waits => return Poll::Pending,
                None => {}
            }
            if *this.done {
                return if this.queue.is_empty() {
                    Poll::Ready(None)
                } else {
                    Poll::Pending
                };
            }
            let polled = this.body.as_mut().poll_next(cx);
            let raw = &mut *this.raw;
            match polled {
                Poll::Ready(Some(Ok(chunk))) => {
                    if let Err(e) = this.decoder.push_raw(&chunk, &mut |ev| raw.push(0, ev)) {
                        *this.done = true;
                        flush(raw, this.queue, this.decoding, this.in_flight, true);
                        this.queue.push_back(Slot::Event(Err(e)));
                    } else if raw.bytes() >= RawBatch::TARGET_BYTES {
                        flush(raw, this.queue, this.decoding, this.in_flight, false);
                    }
                }
                Poll::Ready(Some(Err(e))) => {
                    *this.done = true;
                    flush(raw, this.queue, this.decoding, this.in_flight, true);
                    this.queue
                        .push_back(Slot::Event(Err(Error::Request(e.into()))));
                }
                Poll::Ready(None) => {
                    *this.done = true;
                    flush(raw, this.queue, this.decoding, this.in_flight, true);
                    if let Err(e) = this.decoder.finish() {
                        this.queue.push_back(Slot::Event(Err(e)));
                    }
                }
                Poll::Pending => {
                    // Nothing more for now: what has arrived goes out.
                    body_waits = true;
                    flush(raw, this.queue, this.decoding, this.in_flight, false);
                }
            }
        }
    }
}

/// Queues the events gathered in `raw`: decoded here if they are few (or `inline`, or there is
/// no runtime), else as a batch in a task of its own.
fn flush<K: DeserializeOwned + Send + 'static>(
    raw: &mut RawBatch,
    queue: &mut VecDeque<Slot<K>>,
    decoding: &Decoding<K>,
    in_flight: &mut usize,
    inline: bool,
) {
    if raw.is_empty() {
        return;
    }
    let batch = std::mem::take(raw);
    let trim = decoding.trim;
    match &decoding.pool {
        Some(pool) if !inline && batch.len() > 1 && batch.bytes() > INLINE_MAX_BYTES => {
            *in_flight += 1;
            queue.push_back(Slot::Batch(spawn_decode(pool, move || {
                Ok(decode_events(batch, trim))
            })));
        }
        _ => queue.extend(decode_events(batch, trim).into_iter().map(Slot::Event)),
    }
}
