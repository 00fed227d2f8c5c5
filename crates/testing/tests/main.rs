//! The integration tests, one module per file, linked as one binary (`autotests = false`; a new
//! `tests/*.rs` must be named here, which `cargo xtask ci` checks).

mod kubeconfig;
mod raw_client;
