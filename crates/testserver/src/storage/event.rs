//! Watch events as stored in the history window and fanned out to watchers.

use std::sync::{Arc, OnceLock};

use bytes::{BufMut, Bytes, BytesMut};

use super::filter::Filter;
use super::object::Stored;

/// What happened to an object at one revision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EventType {
    /// Created.
    Added,
    /// Updated.
    Modified,
    /// Deleted.
    Deleted,
}

/// One write, with the object's state before it (needed for selector enter/leave and for
/// reconstructing older revisions).
#[derive(Debug)]
pub(crate) struct Event {
    /// The revision of the write.
    pub rv: u64,
    /// What happened.
    pub kind: EventType,
    /// The state after (for a deletion: the last state, at the deletion's revision).
    pub obj: Arc<Stored>,
    /// The state before, if the object existed.
    pub prev: Option<Arc<Stored>>,
    /// The old state re-stamped with this event's revision, built on first need.
    prev_at_rv: OnceLock<Bytes>,
}

/// How one watcher sees an event after its selector is applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Emit {
    /// `ADDED` with the new state (created, or entered the selector).
    Added,
    /// `MODIFIED` with the new state.
    Modified,
    /// `DELETED` with the last state.
    Deleted,
    /// `DELETED` with the old state at the event's revision: the object left the selector.
    Left,
}

impl Event {
    pub(crate) fn new(
        rv: u64,
        kind: EventType,
        obj: Arc<Stored>,
        prev: Option<Arc<Stored>>,
    ) -> Self {
        Event {
            rv,
            kind,
            obj,
            prev,
            prev_at_rv: OnceLock::new(),
        }
    }

    /// What a watcher with `filter` receives for this event, if anything — the watch cache's
    /// rule: an update that makes the object match is ADDED, one that makes it stop is DELETED.
    pub(crate) fn emit_for(&self, filter: &Filter) -> Option<Emit> {
        let now = filter.matches(&self.obj);
        let before = self.prev.as_deref().is_some_and(|p| filter.matches(p));
        match (self.kind, before, now) {
            (EventType::Added, _, true) => Some(Emit::Added),
            (EventType::Deleted, _, true) => Some(Emit::Deleted),
            (EventType::Modified, true, true) => Some(Emit::Modified),
            (EventType::Modified, false, true) => Some(Emit::Added),
            (EventType::Modified, true, false) => Some(Emit::Left),
            _ => None,
        }
    }

    /// The wire form: `{"type":...,"object":...}` and a newline.
    pub(crate) fn frame(&self, emit: Emit, field_paths: &[String]) -> Bytes {
        let (ty, object) = match emit {
            Emit::Added => ("ADDED", self.obj.json.clone()),
            Emit::Modified => ("MODIFIED", self.obj.json.clone()),
            Emit::Deleted => ("DELETED", self.obj.json.clone()),
            Emit::Left => (
                "DELETED",
                self.prev_at_rv
                    .get_or_init(|| {
                        let prev = self
                            .prev
                            .as_ref()
                            .expect("Left is only emitted with a prev");
                        prev.with_rv(self.rv, field_paths).json
                    })
                    .clone(),
            ),
        };
        frame(ty, &object)
    }
}

/// One watch frame around already-serialized object JSON.
pub(crate) fn frame(ty: &str, object: &[u8]) -> Bytes {
    let mut b = BytesMut::with_capacity(object.len() + 32);
    b.put_slice(b"{\"type\":\"");
    b.put_slice(ty.as_bytes());
    b.put_slice(b"\",\"object\":");
    b.put_slice(object);
    b.put_slice(b"}\n");
    b.freeze()
}
