//! The bounded window of past events of one resource (the watch cache's cyclic buffer).

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

use super::event::Event;
use super::object::Stored;

/// Past events, oldest first, at most `capacity` of them.
#[derive(Debug, Default)]
pub(crate) struct History {
    events: VecDeque<Arc<Event>>,
    /// Revisions at or below this may have lost events: nothing older can be replayed.
    compacted_through: u64,
}

/// A requested revision is older than the window.
#[derive(Debug, Clone, Copy)]
pub(crate) struct TooOld {
    /// The oldest revision that can still be served (the real server's `oldest-1`).
    pub oldest: u64,
}

impl History {
    /// Appends an event, dropping the oldest beyond `capacity`.
    pub(crate) fn push(&mut self, event: Arc<Event>, capacity: usize) {
        self.events.push_back(event);
        while self.events.len() > capacity.max(1) {
            if let Some(old) = self.events.pop_front() {
                self.compacted_through = old.rv;
            }
        }
    }

    /// Forgets every event: older revisions now answer 410 (a compaction).
    pub(crate) fn compact(&mut self, through: u64) {
        self.events.clear();
        self.compacted_through = self.compacted_through.max(through);
    }

    fn check(&self, rv: u64) -> Result<(), TooOld> {
        if rv < self.compacted_through {
            Err(TooOld {
                oldest: self.compacted_through,
            })
        } else {
            Ok(())
        }
    }

    /// The events after `rv`, oldest first.
    pub(crate) fn since(&self, rv: u64) -> Result<Vec<Arc<Event>>, TooOld> {
        self.check(rv)?;
        let first = self.events.partition_point(|e| e.rv <= rv);
        Ok(self.events.range(first..).cloned().collect())
    }

    /// What must be undone to see the state at `rv`: for every key written after `rv`, its
    /// state at `rv` (`None`: it did not exist).
    pub(crate) fn undo_to(
        &self,
        rv: u64,
    ) -> Result<BTreeMap<Arc<str>, Option<Arc<Stored>>>, TooOld> {
        self.check(rv)?;
        let mut overlay = BTreeMap::new();
        for e in self.events.iter().rev().take_while(|e| e.rv > rv) {
            overlay.insert(e.obj.key.clone(), e.prev.clone());
        }
        Ok(overlay)
    }
}
