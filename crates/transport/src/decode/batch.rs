//! Decoding on other cores: consecutive values of a body (list items, watch events) gathered
//! as JSON and decoded together on tokio's blocking pool while the reading task goes on.
//!
//! Decoding typed objects costs far more than splitting the body into values, so a large list,
//! or a watch-list's burst of initial events, otherwise decodes on one core.

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

/// The blocking pool's answer; a panic there (a `Deserialize` impl's bug) comes back as an
/// error, not as a panic of the reader.
pub(super) fn joined<T>(
    result: Result<Result<T, Error>, tokio::task::JoinError>,
    what: &str,
) -> Result<T, Error> {
    result.map_err(|e| Error::decode(what, format!("decoding thread failed: {e}")))?
}

/// How many batches may decode at once: one per core.
pub(super) fn max_in_flight() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}
