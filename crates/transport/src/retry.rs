//! Which failed requests are sent again: client-go's `IsRetryableError` for GETs — a
//! connection reset, or a connection closed before the response was complete
//! (`IsProbableEOF`). Only GETs are retried (writes are not idempotent), after the artificial
//! `Retry-After: 1` client-go gives these errors, up to `Config::max_retries` times. Watches are
//! not retried here: the reflector re-establishes them with its backoff.

use std::error::Error as StdError;
use std::io::ErrorKind;
use std::time::Duration;

/// The wait before a retry after a connection reset (client-go's artificial `Retry-After: 1`).
pub(crate) const CONNECTION_RESET_DELAY: Duration = Duration::from_secs(1);

/// Whether a request that failed with `e` may be sent again (if it is a GET).
pub(crate) fn is_retryable(e: &(dyn StdError + 'static)) -> bool {
    let mut next: Option<&(dyn StdError + 'static)> = Some(e);
    while let Some(err) = next {
        if let Some(io) = err.downcast_ref::<std::io::Error>() {
            if matches!(
                io.kind(),
                ErrorKind::ConnectionReset
                    | ErrorKind::ConnectionAborted
                    | ErrorKind::BrokenPipe
                    | ErrorKind::UnexpectedEof
            ) {
                return true;
            }
        }
        if let Some(h) = err.downcast_ref::<hyper::Error>() {
            // The connection closed before the response was complete: Go's probable EOF.
            if h.is_incomplete_message() {
                return true;
            }
        }
        next = err.source();
    }
    false
}
