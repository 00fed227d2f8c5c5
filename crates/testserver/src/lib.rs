#![doc = include_str!("../README.md")]

mod auth;
mod chaos;
mod client;
mod cluster;
mod compress;
mod config;
mod convert;
mod error;
mod faults;
mod fieldmanager;
mod handlers;
mod kubeconfig;
mod meta;
mod query;
mod resources;
mod responses;
mod router;
mod seed;
mod server;
mod state;
mod storage;
mod tls;
mod tokens;
mod validation;
mod wire;

pub use client::{RawClient, RawResponse, WatchReader};
pub use cluster::{TestCluster, KUBECONFIG_ENV, ROOT_CA_CONFIGMAP};
pub use config::ServerConfig;
pub use error::Error;
pub use faults::{Failure, RequestMatch, Verb};
pub use seed::{realistic_pod, POD_NAMESPACES};
pub use server::TestServer;
