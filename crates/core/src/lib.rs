//! kcache-core (work in progress).
#![deny(missing_docs)]
#![forbid(unsafe_code)]
