//! The one error of this crate: a rate that cannot be built.

use std::fmt;

/// A token bucket's parameters were not usable; the message names the bad value.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum Error {
    /// `qps` was zero, negative, NaN or infinite.
    Qps(f64),
    /// `burst` was zero: no request could ever pass (client-go's REST client rejects it too).
    Burst,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Qps(qps) => write!(
                f,
                "token bucket qps must be a positive finite number, got {qps}"
            ),
            Error::Burst => f.write_str("token bucket burst must be at least 1, got 0"),
        }
    }
}

impl std::error::Error for Error {}
