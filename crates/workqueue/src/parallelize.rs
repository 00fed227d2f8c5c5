//! client-go's `ParallelizeUntil` (`parallelizer.go`).

use std::any::Any;
use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use parking_lot::Mutex;

/// A piece whose function panicked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PiecePanic {
    /// The piece's index.
    pub piece: usize,
    /// The panic message, when it was a string.
    pub message: String,
}

/// The pieces that panicked during [`parallelize_until`], in no particular order. The other
/// pieces still ran.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParallelizeError {
    /// One entry per panicking piece.
    pub panics: Vec<PiecePanic>,
}

impl fmt::Display for ParallelizeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} piece(s) panicked", self.panics.len())?;
        if let Some(p) = self.panics.first() {
            write!(f, "; piece {}: {}", p.piece, p.message)?;
        }
        Ok(())
    }
}

impl std::error::Error for ParallelizeError {}

/// Runs `f(piece)` for every piece in `0..pieces` on up to `workers` OS threads (client-go
/// `ParallelizeUntil` with `WithChunkSize`).
///
/// Pieces are taken in chunks of `chunk_size` (at least 1): `ceil(pieces / chunk_size)` chunks
/// on `min(workers, chunks)` threads, the calling thread being one of them. Once `cancelled` is
/// set no further piece starts. A panicking piece does not stop the others: it is caught and
/// returned in the error.
///
/// Threads, not tokio tasks: `f` is synchronous work and may borrow from the caller (scoped
/// threads), and a blocking piece must not stall an async runtime.
pub fn parallelize_until<F>(
    workers: usize,
    pieces: usize,
    f: F,
    chunk_size: usize,
    cancelled: Option<&AtomicBool>,
) -> Result<(), ParallelizeError>
where
    F: Fn(usize) + Sync,
{
    let chunk_size = chunk_size.max(1);
    let chunks = pieces.div_ceil(chunk_size);
    let workers = workers.max(1).min(chunks);
    if workers == 0 {
        return Ok(());
    }
    let next_chunk = AtomicUsize::new(0);
    let panics = Mutex::new(Vec::new());
    let is_cancelled = || cancelled.is_some_and(|c| c.load(Ordering::Acquire));
    let work = || loop {
        let chunk = next_chunk.fetch_add(1, Ordering::Relaxed);
        if chunk >= chunks {
            return;
        }
        let end = (chunk * chunk_size + chunk_size).min(pieces);
        for piece in chunk * chunk_size..end {
            if is_cancelled() {
                return;
            }
            if let Err(payload) = catch_unwind(AssertUnwindSafe(|| f(piece))) {
                panics.lock().push(PiecePanic {
                    piece,
                    message: panic_message(payload.as_ref()),
                });
            }
        }
    };
    std::thread::scope(|s| {
        for _ in 1..workers {
            s.spawn(work);
        }
        work();
    });
    let panics = panics.into_inner();
    if panics.is_empty() {
        Ok(())
    } else {
        Err(ParallelizeError { panics })
    }
}

fn panic_message(payload: &(dyn Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "non-string panic payload".to_string())
}
