//! What happened to recorded events: counters shared by the recorders and the writer.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::OnceLock;

use crate::client::EventApi;

#[derive(Debug, Default)]
pub(crate) struct Counters {
    pub(crate) recorded: AtomicU64,
    pub(crate) dropped: AtomicU64,
    pub(crate) invalid: AtomicU64,
    pub(crate) filtered: AtomicU64,
    pub(crate) series_counted: AtomicU64,
    pub(crate) written: AtomicU64,
    pub(crate) failed: AtomicU64,
    pub(crate) api: OnceLock<EventApi>,
}

impl Counters {
    pub(crate) fn inc(c: &AtomicU64) {
        c.fetch_add(1, Relaxed);
    }

    /// Adds one; returns the new count.
    pub(crate) fn inc_get(c: &AtomicU64) -> u64 {
        c.fetch_add(1, Relaxed) + 1
    }

    pub(crate) fn snapshot(&self) -> BroadcasterStats {
        BroadcasterStats {
            recorded: self.recorded.load(Relaxed),
            dropped: self.dropped.load(Relaxed),
            invalid: self.invalid.load(Relaxed),
            filtered: self.filtered.load(Relaxed),
            series_counted: self.series_counted.load(Relaxed),
            written: self.written.load(Relaxed),
            failed: self.failed.load(Relaxed),
        }
    }
}

/// Counts since the broadcaster started.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BroadcasterStats {
    /// Events accepted into the queue.
    pub recorded: u64,
    /// Events dropped because the queue was full (or the broadcaster shut down).
    pub dropped: u64,
    /// Events refused because a required field (regarding name, reason, action) was empty.
    pub invalid: u64,
    /// Events the spam filter kept from the server.
    pub filtered: u64,
    /// Repeats counted into an open series without a write of their own.
    pub series_counted: u64,
    /// Successful creates and patches.
    pub written: u64,
    /// Writes given up (rejected by the server, out of retries, or shut down).
    pub failed: u64,
}

impl BroadcasterStats {
    /// Events fully handled: written, counted, filtered or failed (not dropped before the queue).
    pub fn handled(&self) -> u64 {
        self.written + self.series_counted + self.filtered + self.failed
    }
}
