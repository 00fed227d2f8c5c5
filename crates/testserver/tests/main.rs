//! The integration tests, one module per file, linked as one binary: each test binary links
//! the whole stack again, and one per file cost CI gigabytes of disk (`autotests = false`; a new
//! `tests/*.rs` must be named here, which `cargo xtask ci` checks). The test harness runs as
//! many tests at once as there are cores, in one binary or many.

mod common;

mod api_answers;
mod apply;
mod cluster_resources;
mod conformance;
mod conformance_wire;
mod controllers;
mod crd_schema;
mod crd_versions;
mod deprecations;
mod discovery;
mod every_resource;
mod faults;
mod kubectl;
mod object_meta;
mod openapi_crd;
mod openapi_v2;
mod resource_versions;
mod scale;
mod seeding;
mod shard_selector;
mod wire;
mod workload_defaults;
