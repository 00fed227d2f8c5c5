//! kcache-informer (work in progress).
#![deny(missing_docs)]
#![forbid(unsafe_code)]
