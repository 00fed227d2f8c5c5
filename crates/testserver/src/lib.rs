#![doc = include_str!("../README.md")]

mod autoregister;
mod bootstrap;
mod config;
mod controllers;
mod error;
mod fieldmanager;
mod handlers;
mod http;
mod kubeconfig;
mod resources;
mod seed;
mod state;
mod storage;
mod test_server;
mod wire;

pub use config::ServerConfig;
pub use error::Error;
pub use http::faults::{Failure, RequestMatch, Verb};
pub use seed::{realistic_pod, POD_NAMESPACES};
pub use test_server::TestServer;
