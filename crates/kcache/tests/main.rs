//! The integration tests, one module per file, linked as one binary: each test binary links
//! the whole stack again, and one per file cost CI gigabytes of disk (`autotests = false`; a new
//! `tests/*.rs` must be named here, which `cargo xtask ci` checks). The test harness runs as
//! many tests at once as there are cores, in one binary or many.

mod crd;
mod custom_store;
mod priority_controller;
mod sample_controller;
mod workqueue_controller;
mod workqueue_threads;
