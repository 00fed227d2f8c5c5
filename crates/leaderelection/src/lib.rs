#![doc = include_str!("../README.md")]

mod callbacks;
mod config;
mod elector;
mod error;
mod healthz;
#[cfg(feature = "transport")]
mod lease_lock;
mod lock;
pub mod memory;
mod record;

pub use callbacks::LeaderCallbacks;
pub use config::{LeaderElectionConfig, JITTER_FACTOR};
pub use elector::{LeaderElector, RunEnd};
pub use error::{ConfigError, HealthError};
pub use healthz::HealthzAdaptor;
#[cfg(feature = "transport")]
pub use lease_lock::{lease_from_object, leases, LeaseLock};
pub use lock::LeaseClient;
pub use record::{LeaderElectionRecord, Lease};
pub use tokio_util::sync::CancellationToken;
