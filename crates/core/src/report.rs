//! One line for an error and its causes.

use std::fmt;

/// Displays an error followed by every `source()` under it, joined by ": ".
///
/// kcache's errors follow the Rust API guidelines: a `Display` says what failed and leaves the
/// cause to `source()`, so an error-chain reporter (anyhow, eyre, `std::error::Report`) prints
/// each cause once. A log line that has only the error at hand formats it through this, e.g.
/// `tracing::warn!(error = %ErrorChain(&err), "failed to watch")` prints
/// `watch failed: cannot connect: connection refused`.
///
/// ```
/// use kcache_core::{Error, ErrorChain};
///
/// let err = Error::Connect("connection refused".into());
/// assert_eq!(err.to_string(), "cannot connect");
/// assert_eq!(ErrorChain(&err).to_string(), "cannot connect: connection refused");
/// ```
#[derive(Debug, Clone, Copy)]
pub struct ErrorChain<'a>(pub &'a (dyn std::error::Error + 'static));

impl fmt::Display for ErrorChain<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)?;
        let mut cause = self.0.source();
        while let Some(c) = cause {
            write!(f, ": {c}")?;
            cause = c.source();
        }
        Ok(())
    }
}
