//! When the FIFO has delivered its first list (client-go's `populated` and
//! `initialPopulationCount`).

/// Counts the entries of the first `replace` through pop and processing.
///
/// client-go has one counter, decremented at pop, and processes under the FIFO lock so nobody
/// sees a popped entry as unprocessed. kcache processes without the lock, so it counts twice:
/// `to_pop` decides `is_in_initial_list` exactly as client-go would, and `to_finish` makes
/// `has_synced` wait until the last initial entry's processing has returned — a consumer that
/// sees `has_synced` can trust its cache holds the whole first list.
#[derive(Debug, Default)]
pub(crate) struct InitialSync {
    populated: bool,
    to_pop: usize,
    to_finish: usize,
    synced: bool,
}

impl InitialSync {
    /// add/update/delete: anything before the first list means there is no initial list.
    pub(crate) fn populate(&mut self) {
        self.populated = true;
        self.check();
    }

    /// A `replace`: the first one sets how many entries make up the initial list.
    pub(crate) fn replaced(&mut self, count: usize) {
        if !self.populated {
            self.populated = true;
            self.to_pop = count;
            self.to_finish = count;
            self.check();
        }
    }

    /// A pop: returns `(is_in_initial_list, counted)`; `counted` goes back to
    /// [`InitialSync::finished`] or [`InitialSync::requeued`].
    pub(crate) fn popped(&mut self) -> (bool, bool) {
        let is_in_initial_list = !(self.populated && self.to_pop == 0);
        let counted = self.to_pop > 0;
        if counted {
            self.to_pop -= 1;
        }
        (is_in_initial_list, counted)
    }

    /// A popped entry's processing returned.
    pub(crate) fn finished(&mut self, counted: bool) {
        if counted {
            self.to_finish -= 1;
            self.check();
        }
    }

    /// A popped entry went back into the queue: it still has to be popped.
    pub(crate) fn requeued(&mut self, counted: bool) {
        if counted {
            self.to_pop += 1;
        }
    }

    pub(crate) fn has_synced(&self) -> bool {
        self.synced
    }

    fn check(&mut self) {
        if self.populated && self.to_finish == 0 {
            self.synced = true;
        }
    }
}
