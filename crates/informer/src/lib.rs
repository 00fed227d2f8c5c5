#![doc = include_str!("../README.md")]

mod atomic;
mod compact_informer;
mod delivery_pool;
mod error;
mod factory;
mod handler;
mod informer;
mod latency;
mod lazy_typed;
mod listener;
#[cfg(feature = "transport")]
mod metadata_informer;
mod metrics;
mod notification;
mod notifying_store;
mod options;
mod outbox;
mod processor;
mod registration;
mod resource_version;
mod sync_signal;
pub mod testing;
mod typed_copies;
mod typed_index;

pub use compact_informer::CompactInformer;
pub use error::InformerError;
pub use factory::{FactoryOptions, SharedInformerFactory};
pub use handler::{
    DeletedObject, FilteringResourceEventHandler, ResourceEventHandler, ResourceEventHandlerFuncs,
};
pub use informer::{HandlerStats, InformerStats, SharedIndexInformer, MINIMUM_RESYNC_PERIOD};
pub use kcache_delta_fifo::FifoMode;
pub use latency::{HandlerLatency, LATENCY_BUCKETS};
pub use lazy_typed::LazyTyped;
pub use listener::OverflowPolicy;
#[cfg(feature = "prometheus")]
pub use metrics::InformerCollector;
pub use metrics::StatsSource;
pub use options::InformerOptions;
pub use registration::ResourceEventHandlerRegistration;
pub use resource_version::{CacheResourceVersion, WaitForResourceVersionError};
pub use typed_index::{same_at, typed_index};
