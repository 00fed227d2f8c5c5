#![doc = include_str!("../README.md")]
#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod api;
mod auth;
mod client;
pub mod config;
pub mod decode;
mod error;
mod lister_watcher;
mod pager;
mod params;
mod secret;
mod tls;

pub use api::{Api, Deleted};
pub use client::{Client, ListItems};
pub use config::kubeconfig::Kubeconfig;
pub use config::{AuthConfig, Config, Identity, KubeConfigOptions};
pub use error::ConfigError;
pub use pager::{ListPager, PagedList, DEFAULT_PAGE_SIZE};
pub use params::{DeleteParams, Patch, PatchParams, PostParams, Preconditions, PropagationPolicy};
pub use secret::Secret;
