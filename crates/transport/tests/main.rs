//! The integration tests, one module per file, linked as one binary: each test binary links
//! the whole stack again, and one per file cost CI gigabytes of disk (`autotests = false`; a new
//! `tests/*.rs` must be named here, which `cargo xtask ci` checks). The test harness runs as
//! many tests at once as there are cores, in one binary or many.

mod support;

mod compression;
mod connection;
mod decode;
mod exact_copies;
mod kubeconfig;
mod list_parallel;
mod metadata;
mod protobuf;
mod protobuf_fallback;
mod shard_selector;
mod testserver;
mod warnings;
