//! Decoding on other cores: consecutive values of a body (list items, watch events) gathered
//! as JSON and decoded together as tokio tasks while the reading task goes on.
//!
//! Decoding typed objects costs far more than splitting the body into values, so a large list,
//! or a watch-list's burst of initial events, otherwise decodes on one core.
//!
//! Where a batch decodes ([`spawn_decode`]): on a multi-thread runtime, as a task on its worker
//! threads, as kube-rs decodes (inline, on the runtime's threads). A batch is about 256 KiB of
//! JSON, a few ms of work, so it holds a worker that long during a burst. On tokio's blocking
//! pool instead, the same 10k-ConfigMap sync on kcache-testserver took 0.111 s against 0.097 s
//! (typed compact; metadata-only 0.109 against 0.093; 100k pods 3.5–3.8 s against 2.7–3.1 s):
//! the pool starts a thread whenever a batch comes while its threads are still finishing the
//! last ones (up to four for one list on two cores), each wakes through a condvar, and glibc
//! gives each its own arena. On a current-thread runtime the blocking pool is the only other
//! core there is, so batches go there.

use kcache_core::Error;

/// The JSON of consecutive values, for decoding on another thread.
#[derive(Default)]
pub(super) struct RawBatch {
    json: Vec<u8>,
    /// Each value's index (in the list, or 0) and end offset in `json`.
    ends: Vec<(usize, usize)>,
}

impl RawBatch {
    /// About this much JSON per batch: big enough that a thread hop is noise, small enough that
    /// every core gets work from a body of a few megabytes.
    pub(super) const TARGET_BYTES: usize = 256 << 10;

    pub(super) fn push(&mut self, index: usize, bytes: &[u8]) {
        self.json.extend_from_slice(bytes);
        self.ends.push((index, self.json.len()));
    }

    /// Bytes of JSON held.
    pub(super) fn bytes(&self) -> usize {
        self.json.len()
    }

    /// Values held.
    pub(super) fn len(&self) -> usize {
        self.ends.len()
    }

    pub(super) fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Each value's index and JSON, in order.
    pub(super) fn values(&self) -> impl Iterator<Item = (usize, &[u8])> {
        let starts = std::iter::once(0).chain(self.ends.iter().map(|&(_, end)| end));
        starts
            .zip(&self.ends)
            .map(|(start, &(index, end))| (index, &self.json[start..end]))
    }
}

/// A decoding task's answer; a panic there (a `Deserialize` impl's bug) comes back as an
/// error, not as a panic of the reader.
pub(super) fn joined<T>(
    result: Result<Result<T, Error>, tokio::task::JoinError>,
    what: &str,
) -> Result<T, Error> {
    result.map_err(|e| Error::decode(what, format!("decoding task failed: {e}")))?
}

/// Starts decoding a batch on `runtime`: a task on its workers when it has a pool of them, else
/// on its blocking pool (see the module docs).
pub(super) fn spawn_decode<T: Send + 'static>(
    runtime: &tokio::runtime::Handle,
    decode: impl FnOnce() -> T + Send + 'static,
) -> tokio::task::JoinHandle<T> {
    match runtime.runtime_flavor() {
        // A task spawned on a worker waits in that worker's LIFO slot, which no other worker
        // steals and whose arrival wakes none: it ran when the reader next awaited, on the
        // reader's worker, while the other slept and nobody read the socket (10k metadata
        // items on kube-apiserver: one core decoding for 12 ms of a 100-ms sync, in CPU
        // samples). Yielding once moves it to the run queue, which wakes an idle worker.
        tokio::runtime::RuntimeFlavor::MultiThread => runtime.spawn(async move {
            tokio::task::yield_now().await;
            decode()
        }),
        _ => runtime.spawn_blocking(decode),
    }
}

/// How many batches may decode at once: one per core.
pub(super) fn max_in_flight() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}
