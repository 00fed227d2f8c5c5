#![doc = include_str!("../README.md")]

mod atomic;
#[cfg(feature = "compact")]
mod compact;
mod delivery;
mod delivery_pool;
mod error;
mod factory;
mod handler;
mod handler_options;
mod informer;
mod latency;
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

#[cfg(feature = "compact")]
pub use compact::{same_at, typed_index, CompactInformer, LazyTyped, TypedIndexes};
pub use error::InformerError;
pub use factory::{FactoryOptions, SharedInformerFactory};
pub use handler::{
    DeletedObject, Delivery, DeliveryBatch, FilteringResourceEventHandler, Notified,
    ResourceEventHandler, ResourceEventHandlerFuncs,
};
pub use handler_options::{DeliveryMode, HandlerOptions};
pub use informer::{HandlerStats, InformerStats, SharedIndexInformer, MINIMUM_RESYNC_PERIOD};
pub use kcache_delta_fifo::FifoMode;
pub use latency::{HandlerLatency, LATENCY_BUCKETS};
pub use listener::OverflowPolicy;
#[cfg(feature = "prometheus")]
pub use metrics::InformerCollector;
pub use metrics::StatsSource;
pub use options::InformerOptions;
pub use registration::ResourceEventHandlerRegistration;
pub use resource_version::{CacheResourceVersion, WaitForResourceVersionError};
