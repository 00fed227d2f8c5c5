//! The one error of this crate: a rate that cannot be built.

/// A token bucket's parameters were not usable; the message names the bad value.
#[derive(Debug, Clone, Copy, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// `qps` was zero, negative, NaN or infinite.
    #[error("token bucket qps must be a positive finite number, got {0}")]
    Qps(f64),
    /// `burst` was zero: no request could ever pass (client-go's REST client rejects it too).
    #[error("token bucket burst must be at least 1, got 0")]
    Burst,
}
