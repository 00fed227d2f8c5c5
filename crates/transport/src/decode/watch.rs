//! The watch body decoder: a stream of concatenated `{"type":..,"object":..}` JSON values
//! (apimachinery's `watch.Event` frames), decoded with no reliance on line or chunk boundaries.

use std::collections::VecDeque;
use std::fmt;
use std::marker::PhantomData;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use futures_core::Stream;
use kcache_core::{Bookmark, BoxError, Error, Status, WatchEvent, INITIAL_EVENTS_END_ANNOTATION};
use serde::de::{self, DeserializeOwned, DeserializeSeed, IgnoredAny, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;

use super::naming::named;
use super::scanner::{is_ws, too_large, unexpected_byte, Capture};

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
                    on_event(decode_event(value));
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

/// Decodes one complete watch event.
pub fn decode_event<K: DeserializeOwned>(bytes: &[u8]) -> Result<WatchEvent<K>, Error> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let ev = EventSeed::<K>(PhantomData)
        .deserialize(&mut de)
        .and_then(|ev| de.end().map(|()| ev))
        .map_err(|e| Error::decode(named("watch event", bytes), e))?;
    Ok(ev)
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

pin_project_lite::pin_project! {
    /// The events of a watch response body, decoded as chunks arrive. Ends cleanly at a clean end
    /// of body (the server's timeout). An event that does not decode is one error item and the
    /// stream goes on; a framing or transport failure is one error item and ends it.
    pub struct WatchEventStream<S, K> {
        #[pin]
        body: S,
        decoder: WatchDecoder<K>,
        ready: VecDeque<Result<WatchEvent<K>, Error>>,
        failed: Option<Error>,
        done: bool,
    }
}

impl<S, K: DeserializeOwned> WatchEventStream<S, K> {
    /// Decodes `body`, failing on events larger than `max_object_size` bytes.
    pub fn new(body: S, max_object_size: usize) -> Self {
        WatchEventStream {
            body,
            decoder: WatchDecoder::new(max_object_size),
            ready: VecDeque::new(),
            failed: None,
            done: false,
        }
    }
}

impl<S, E, K> Stream for WatchEventStream<S, K>
where
    S: Stream<Item = Result<Bytes, E>>,
    E: Into<BoxError>,
    K: DeserializeOwned,
{
    type Item = Result<WatchEvent<K>, Error>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let mut this = self.project();
        loop {
            if let Some(ev) = this.ready.pop_front() {
                return Poll::Ready(Some(ev));
            }
            if *this.done {
                // Events decoded before a failure are delivered first, then the failure.
                return Poll::Ready(this.failed.take().map(Err));
            }
            match std::task::ready!(this.body.as_mut().poll_next(cx)) {
                Some(Ok(chunk)) => {
                    let ready = &mut *this.ready;
                    if let Err(e) = this
                        .decoder
                        .push_each(&chunk, &mut |ev| ready.push_back(ev))
                    {
                        *this.done = true;
                        *this.failed = Some(e);
                    }
                }
                Some(Err(e)) => {
                    *this.done = true;
                    return Poll::Ready(Some(Err(Error::Request(e.into()))));
                }
                None => {
                    *this.done = true;
                    if let Err(e) = this.decoder.finish() {
                        return Poll::Ready(Some(Err(e)));
                    }
                }
            }
        }
    }
}
