//! The integration tests, one module per file, linked as one binary: each test binary links
//! the whole stack again, and one per file cost CI gigabytes of disk (`autotests = false`; a new
//! `tests/*.rs` must be named here, which `cargo xtask ci` checks). The test harness runs as
//! many tests at once as there are cores, in one binary or many.

#[macro_use]
mod support;

#[cfg(feature = "transport")]
mod compact_informer;
mod e2e_chaos;
#[cfg(feature = "transport")]
mod exact_copies;
mod factory;
mod filtering;
#[cfg(feature = "transport")]
mod forced_relist;
mod handler_removal;
mod inline_delivery;
#[cfg(feature = "transport")]
mod metadata_informer;
mod read_your_writes;
mod read_your_writes_cluster;
#[cfg(feature = "transport")]
mod shard_informer;
mod shared_informer;
