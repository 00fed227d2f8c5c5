//! kcache-workqueue (work in progress).
#![deny(missing_docs)]
#![forbid(unsafe_code)]
