//! The crate's error.

use kcache_core::{BoxError, ObjectKey};

/// What can go wrong in a DeltaFIFO.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// `pop` on a closed FIFO with nothing left to hand out (client-go's `ErrFIFOClosed`).
    #[error("DeltaFIFO: manipulating with closed queue")]
    Closed,
    /// The transformer rejected an object; nothing was queued for it.
    #[error("DeltaFIFO: the transformer failed on {key}")]
    Transform {
        /// The key of the object the transformer failed on.
        key: ObjectKey,
        /// The transformer's error.
        #[source]
        source: BoxError,
    },
    /// A `Deltas` with no delta has no key (client-go's `ErrZeroLengthDeltasObject`).
    #[error("0 length Deltas object; can't get key")]
    EmptyDeltas,
}

impl From<Error> for kcache_core::Error {
    /// A reflector sees FIFO failures as store write failures.
    fn from(e: Error) -> Self {
        kcache_core::Error::Store(kcache_core::StoreError::other(e))
    }
}
