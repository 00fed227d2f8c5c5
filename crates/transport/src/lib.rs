#![doc = include_str!("../README.md")]
#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod api;
mod auth;
mod body;
mod client;
pub mod config;
pub mod decode;
mod error;
mod lister_watcher;
mod metadata;
mod pager;
mod params;
mod proxy;
mod ratelimit;
mod retry;
mod secret;
mod tls;

pub use api::{Api, Deleted};
pub use body::{ResponseBody, DECODED_CHUNK};
pub use client::{Client, ListItems};
pub use config::kubeconfig::Kubeconfig;
pub use config::{AuthConfig, Config, Identity, Impersonate, KubeConfigOptions};
pub use error::ConfigError;
pub use pager::{ListPager, PagedList, DEFAULT_PAGE_SIZE};
pub use params::{DeleteParams, Patch, PatchParams, PostParams, Preconditions, PropagationPolicy};
pub use ratelimit::RateLimiter;
pub use secret::Secret;
