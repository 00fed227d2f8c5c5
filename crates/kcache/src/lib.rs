//! kcache (work in progress).
#![deny(missing_docs)]
#![forbid(unsafe_code)]

/// client-go's `util/workqueue`: the [`kcache-workqueue`](kcache_workqueue) crate.
#[cfg(feature = "workqueue")]
pub use kcache_workqueue as workqueue;
