//! The resourceVersion the consumer's cache reflects (client-go's
//! `LastStoreSyncResourceVersion`, KEP-5647), moved in the order writes entered the FIFO.
//!
//! Every write into the FIFO gets the next number (`seq`): an add or update when it is pushed,
//! a delete, relist, resync or bookmark when it takes the lock. A write that carries a
//! resourceVersion — an event's object, a relist's list, a bookmark — leaves a *mark* `(seq, rv)`.
//! Each queued entry keeps the number of the write that queued it (see `Stamp`), and both modes
//! keep their queue in that order, so the head of the queue is the oldest write still waiting;
//! entries being processed are counted here until the consumer finishes them.
//!
//! A mark is reached once nothing older than it is queued or processing: the consumer has then
//! applied every write up to it, and the cache reflects its resourceVersion. This is client-go's
//! `Bookmark` delta carried through the queue, kept beside the queue instead of in it, so that
//! it holds in Delta mode too, where a key keeps its early place while newer deltas join it (a
//! later write may be applied before an earlier mark is reached, never the other way round).
//!
//! A requeued entry goes back to its key's place, which may be behind newer entries; marks then
//! wait until the FIFO has drained once (the informer never requeues).

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

/// Called with the new resourceVersion each time the cache's moves; under the FIFO's lock, so it
/// must be quick and must not call back into the FIFO.
pub type ResourceVersionObserver = Arc<dyn Fn(&str) + Send + Sync>;

#[derive(Default)]
pub(crate) struct Progress {
    /// Marks not reached yet, oldest first.
    marks: VecDeque<(u64, Arc<str>)>,
    /// The numbers of the entries consumers are processing, with how many share each.
    processing: BTreeMap<u64, usize>,
    /// An entry was requeued since the FIFO was last empty.
    requeued: bool,
    /// The resourceVersion of the last mark reached ("" before any).
    reached: Arc<str>,
    observer: Option<ResourceVersionObserver>,
}

impl Progress {
    /// A write numbered `seq` carried `rv` (an empty one says nothing and is ignored).
    pub(crate) fn mark(&mut self, seq: u64, rv: &str) {
        if !rv.is_empty() {
            self.marks.push_back((seq, Arc::from(rv)));
        }
    }

    /// A consumer took the entry queued by write `seq`.
    pub(crate) fn taken(&mut self, seq: u64) {
        *self.processing.entry(seq).or_default() += 1;
    }

    /// A consumer finished the entry queued by write `seq` (requeued: it went back).
    pub(crate) fn finished(&mut self, seq: u64, requeued: bool) {
        if let Some(n) = self.processing.get_mut(&seq) {
            *n -= 1;
            if *n == 0 {
                self.processing.remove(&seq);
            }
        }
        self.requeued |= requeued;
    }

    /// Reaches every mark older than what is still queued (`head`: the queue head's number) or
    /// processing, and tells the observer if the resourceVersion moved.
    pub(crate) fn advance(&mut self, head: Option<u64>) {
        let oldest_processing = self.processing.keys().next().copied();
        let outstanding = match (head, oldest_processing) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        if self.requeued {
            if outstanding.is_some() {
                return;
            }
            self.requeued = false;
        }
        let mut moved = None;
        while let Some((seq, _)) = self.marks.front() {
            if outstanding.is_some_and(|o| o <= *seq) {
                break;
            }
            moved = self.marks.pop_front().map(|(_, rv)| rv);
        }
        if let Some(rv) = moved {
            if rv != self.reached {
                self.reached = rv;
                if let Some(observer) = &self.observer {
                    observer(&self.reached);
                }
            }
        }
    }

    pub(crate) fn reached(&self) -> &str {
        &self.reached
    }

    pub(crate) fn set_observer(&mut self, observer: ResourceVersionObserver) {
        self.observer = Some(observer);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mark_waits_for_every_older_entry() {
        let mut p = Progress::default();
        p.mark(1, "10");
        p.mark(2, "11");
        p.mark(3, "12");
        // Entry 2 is queued (head), entry 1 processing: nothing is reached.
        p.taken(1);
        p.advance(Some(2));
        assert_eq!(p.reached(), "");
        // Entry 1 done: mark 1 reached, mark 2 still waits for its entry.
        p.finished(1, false);
        p.advance(Some(2));
        assert_eq!(p.reached(), "10");
        // Entry 2 taken and done, nothing queued: every mark is reached.
        p.taken(2);
        p.finished(2, false);
        p.advance(None);
        assert_eq!(p.reached(), "12");
    }

    #[test]
    fn a_requeue_holds_marks_until_the_fifo_drains() {
        let mut p = Progress::default();
        p.mark(5, "50");
        p.taken(4);
        p.finished(4, true);
        // Entry 4 went back behind entry 6: the head says 6, but 4 is still outstanding.
        p.advance(Some(6));
        assert_eq!(p.reached(), "");
        p.advance(None);
        assert_eq!(p.reached(), "50");
    }

    #[test]
    fn the_observer_hears_each_move_once() {
        let seen = Arc::new(parking_lot::Mutex::new(Vec::new()));
        let mut p = Progress::default();
        let s = seen.clone();
        p.set_observer(Arc::new(move |rv| s.lock().push(rv.to_owned())));
        p.mark(1, "7");
        p.advance(None);
        p.mark(2, "7");
        p.advance(None);
        p.mark(3, "");
        p.mark(4, "9");
        p.advance(None);
        assert_eq!(*seen.lock(), ["7", "9"]);
    }
}
