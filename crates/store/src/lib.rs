//! kcache-store (work in progress).
#![deny(missing_docs)]
#![forbid(unsafe_code)]
