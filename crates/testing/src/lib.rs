#![doc = include_str!("../README.md")]

mod chaos;
mod raw_client;
mod test_cluster;

pub use chaos::inject_random_fault;
pub use raw_client::{RawClient, RawResponse, WatchReader};
pub use test_cluster::{TestCluster, KUBECONFIG_ENV, ROOT_CA_CONFIGMAP};

// The server a `TestCluster` embeds, and what tests drive it with, so one crate serves a test.
pub use kcache_testserver::{
    realistic_pod, Error, Failure, RequestMatch, ServerConfig, TestServer, Verb, POD_NAMESPACES,
};
