#![doc = include_str!("../README.md")]

mod api;
mod auth;
mod body;
mod client;
pub mod config;
pub mod decode;
mod error;
mod lister_watcher;
mod metadata;
mod params;
mod protobuf_fallback;
mod proxy;
mod retry;
mod secret;
mod tls;
mod warning;

pub use api::{Api, Deleted};
pub use body::{gunzip, ResponseBody, DECODED_CHUNK};
pub use client::{Client, ListItems};
pub use config::kubeconfig::Kubeconfig;
pub use config::{AuthConfig, Config, Identity, Impersonate, KubeConfigOptions};
pub use error::ConfigError;
/// client-go's `tools/pager`, from kcache-core: pages any `ListerWatcher`, an [`Api`] included.
pub use kcache_core::{ListPager, PagedList, DEFAULT_PAGE_SIZE};
pub use params::{DeleteParams, Patch, PatchParams, PostParams, Preconditions, PropagationPolicy};
pub use secret::Secret;
pub use warning::{NoWarnings, WarningHandler, WarningLogger};
