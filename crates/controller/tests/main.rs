//! The integration tests, one module per file, linked as one binary (`autotests = false`; a new
//! `tests/*.rs` must be named here).

mod support;

mod cluster;
mod example_controller;
mod scheduling;
